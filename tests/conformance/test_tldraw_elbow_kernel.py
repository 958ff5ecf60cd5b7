"""A page of many elbow arrows opened in the real tldraw editor, routed by the kernel and by its twin.

No shared real file holds a tldraw elbow arrow, so the page is generated (seeded):
pairs of targets in every relative placement (far apart on each side and the
diagonals, near, touching, overlapping, one inside the other, both ends on one
shape), rectangles, ellipses and diamonds, turned or not, bound imprecisely or at a
precise anchor on any side, with ``elbowMidPoint`` 0, 0.5, 1 or anywhere between,
arrowheads on and off, sizes and scales, and free ends. It is written with
``to_tldraw()``, opened in tldraw 5.4.2 (headless Chromium, see ``tldraw_harness``),
and every arrow's page bounds and drawn ends are compared with ours, once with the
compiled router (``elbow.ELBOW_KERNEL = True``) and once with the Python twin.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest

from spatialobs.canvas import Canvas, load
from spatialobs.canvas.document import elbow as E
from spatialobs.canvas.document.arrows import page_terminals
from spatialobs.canvas.document.records import Binding, Node
from spatialobs.canvas.formats.tldraw import to_tldraw
from tests.conformance import tldraw_harness as th

BOUNDS_TOL = 2.0  # page units, as tests/test_canvas_elbow.py
TERMINAL_TOL = 1.0
CELL = 1400.0
SIDES = [(0.0, 0.5), (1.0, 0.5), (0.5, 0.0), (0.5, 1.0)]
#: Where the end target sits relative to a 160 x 100 start target at (0, 0).
PLACES = [(520.0, 0.0), (-520.0, 0.0), (0.0, 420.0), (0.0, -420.0), (480.0, 380.0), (-480.0, 380.0),
          (480.0, -380.0), (-480.0, -380.0), (200.0, 30.0), (0.0, 130.0), (160.0, 0.0), (0.0, 100.0),
          (80.0, 40.0), (40.0, 20.0), (-30.0, -30.0)]


def _elbow_page(count: int, seed: int) -> Tuple[Canvas, List[str]]:
    rng = random.Random(seed)
    c = Canvas()
    ids: List[str] = []
    per_row = 12
    for k in range(count):
        ox, oy = (k % per_row) * CELL, (k // per_row) * CELL
        place = PLACES[k % len(PLACES)]
        w0, h0 = 160.0, 100.0
        w1, h1 = rng.choice([(160.0, 100.0), (120.0, 200.0), (60.0, 60.0), (300.0, 80.0)])
        if place == (40.0, 20.0):  # inside the start target
            w1, h1 = 60.0, 40.0
        if place == (-30.0, -30.0):  # around it
            w1, h1 = 260.0, 180.0
        geos = [rng.choice(["rectangle", "rectangle", "ellipse", "diamond"]) for _ in range(2)]
        rots = [rng.choice([0.0, 0.0, 0.0, math.pi / 2, 0.3]) for _ in range(2)]
        a, b = f"shape:a{k}", f"shape:b{k}"
        c.add(Node(a, "geo", "page:page", f"a{k}0", ox, oy, w0, h0, rots[0],
                   props={"geo": geos[0], "size": "m"}))
        c.add(Node(b, "geo", "page:page", f"a{k}1", ox + place[0], oy + place[1], w1, h1, rots[1],
                   props={"geo": geos[1], "size": "m"}))
        one_shape = rng.random() < 0.06
        ends = rng.choice(["both"] * 6 + ["start", "end"])
        props = {"kind": "elbow", "elbowMidPoint": rng.choice([0.0, 0.5, 1.0, 0.5, round(rng.random(), 3)]),
                 "start": {"x": -200.0, "y": -150.0}, "end": {"x": 700.0, "y": 500.0},
                 "size": rng.choice(["s", "m", "m", "l", "xl"]), "scale": rng.choice([1, 1, 1, 0.5, 2]),
                 "arrowheadStart": rng.choice(["none", "none", "arrow"]),
                 "arrowheadEnd": rng.choice(["arrow", "arrow", "none"])}
        aid = f"shape:elbow{k}"
        c.add(Node(aid, "arrow", "page:page", f"a{k}2", ox, oy, props=props))
        for term, target in (("start", a), ("end", a if one_shape else b)):
            if ends != "both" and ends != term:
                continue
            precise = rng.random() < 0.5
            anchor = rng.choice(SIDES) if precise else (0.5, 0.5)
            if precise and rng.random() < 0.3:
                anchor = (round(rng.random(), 3), round(rng.random(), 3))
            c.add(Binding(f"binding:{k}{term}", "arrow", aid, target, term, anchor, precise,
                          {"snap": "edge" if one_shape else "none"}))
        ids.append(aid)
    return c, ids


def _ours(path: Path, ids: List[str], kernel: bool, monkeypatch: pytest.MonkeyPatch) -> Dict[str, Tuple[float, ...]]:
    monkeypatch.setattr(E, "ELBOW_KERNEL", kernel)
    c = load(path)
    out = {}
    for aid in ids:
        s, e = page_terminals(c, aid)
        out[aid] = (*c.page_bounds(aid), *s, *e)
    return out


def test_many_elbow_arrows_land_where_the_editor_draws_them_with_either_router(
        tmp_path: Path, harness: None, monkeypatch: pytest.MonkeyPatch) -> None:
    page, ids = _elbow_page(480, seed=31)
    path = tmp_path / "elbows.tldr"
    path.write_text(json.dumps(to_tldraw(page)))
    res = th.run_file(path)
    assert th.refusal(res) is None, th.refusal(res)
    assert th.console_errors(res) == []
    shapes = {s["id"]: s for pg in res["pages"] for s in pg["shapes"]}
    kernel = _ours(path, ids, True, monkeypatch)
    twin = _ours(path, ids, False, monkeypatch)
    assert np.array_equal(np.array(list(kernel.values())).view(np.uint64), np.array(list(twin.values())).view(np.uint64))
    bad = []
    for aid in ids:
        got = shapes[aid]
        assert got["arrow"]["kind"] == "elbow", aid
        pb = got["pageBounds"]
        want_bounds = (pb["x"], pb["y"], pb["x"] + pb["w"], pb["y"] + pb["h"])
        want_ends = (got["arrow"]["start"]["pagePoint"]["x"], got["arrow"]["start"]["pagePoint"]["y"],
                     got["arrow"]["end"]["pagePoint"]["x"], got["arrow"]["end"]["pagePoint"]["y"])
        ours = kernel[aid]
        if (max(abs(u - v) for u, v in zip(ours[:4], want_bounds)) > BOUNDS_TOL
                or max(abs(u - v) for u, v in zip(ours[4:], want_ends)) > TERMINAL_TOL):
            bad.append((aid, ours, want_bounds, want_ends))
    assert not bad, bad[:5]
