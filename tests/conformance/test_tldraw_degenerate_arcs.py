"""Bent arrows whose two ends meet on a zero-size target, opened in the real tldraw editor.

Both ends of an arc bound to a shape of no width or height can hit at the same point;
tldraw then divides an arrowhead offset by the body's zero length (JavaScript gives an
infinity, then NaN points), where Python raised ``ZeroDivisionError``. The cases are
found by a seeded search (arcs whose resolution divides by zero), written with
``to_tldraw()`` and opened in the editor (tldraw 5.4.2 in headless Chromium, see
``tldraw_harness``): an arrow that lands on finite points has the editor's page bounds
to the bit; one whose points are NaN is, in the editor, an empty box at the arrow's
origin, and here too (the package's rule for non-finite geometry).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import List, Tuple

import pytest

from spatialobs.canvas import Canvas, load
from spatialobs.canvas.document import arrows as A
from spatialobs.canvas.document.records import Binding, Node
from spatialobs.canvas.formats.tldraw import to_tldraw
from tests.conformance import tldraw_harness as th


def _degenerate_arcs(count: int, monkeypatch: pytest.MonkeyPatch) -> Tuple[Canvas, List[str]]:
    """A page of ``count`` arcs, each bound at both ends to its own zero-size shape, whose
    resolution divides by a zero body length (seeded search, 1,000 units apart)."""
    divided: List[bool] = []
    real = A._js_div
    monkeypatch.setattr(A, "_js_div", lambda a, b: divided.append(b == 0) or real(a, b))
    rng = random.Random(1)
    page = Canvas()
    ids: List[str] = []
    for _ in range(4000):
        if len(ids) == count:
            break
        w, h = rng.choice([0, 0, 10]), rng.choice([0, 0, 10])
        dot = (rng.choice([0, 100, 30]), rng.choice([0, 100, 5]), rng.choice(["rectangle", "ellipse"]))
        props = {"start": {"x": rng.choice([0, 10]), "y": 0},
                 "end": {"x": rng.choice([50, 0, 10]), "y": rng.choice([0, 20])}, "bend": rng.choice([40, -40, 5, 200]),
                 "arrowheadStart": rng.choice(["arrow", "none"]), "arrowheadEnd": rng.choice(["arrow", "none"])}
        x = rng.choice([0, 50])
        ends = [((rng.random(), rng.random()), rng.choice([True, False])) for _ in range(2)]
        k = len(ids)
        ox, oy = (k % 4) * 1000.0, (k // 4) * 1000.0
        for c, (dx, dy) in ((Canvas(), (0.0, 0.0)), (page, (ox, oy))):
            c.add(Node(f"shape:dot{k}", "geo", "page:page", f"a{k}1", dot[0] + dx, dot[1] + dy, w, h, props={"geo": dot[2]}))
            c.add(Node(f"shape:arc{k}", "arrow", "page:page", f"a{k}2", x + dx, dy, props=props))
            for term, (anchor, precise) in zip(("start", "end"), ends):
                c.add(Binding(f"b{k}{term}", "arrow", f"shape:arc{k}", f"shape:dot{k}", term, anchor, precise))
            if c is not page:
                divided.clear()
                with pytest.MonkeyPatch.context() as twin:
                    twin.setattr(A, "ARC_KERNEL", False)  # the search watches the Python twin divide
                    c.geometry()
                if not any(divided):
                    break
        else:
            ids.append(f"shape:arc{k}")
    return page, ids


def test_arcs_whose_ends_meet_on_zero_size_targets_land_where_the_editor_draws_them(
        tmp_path: Path, harness: None, monkeypatch: pytest.MonkeyPatch) -> None:
    page, ids = _degenerate_arcs(12, monkeypatch)
    assert len(ids) == 12
    path = tmp_path / "degenerate-arcs.tldr"
    path.write_text(json.dumps(to_tldraw(page)))
    res = th.run_file(path)
    assert th.refusal(res) is None, th.refusal(res)
    assert res["warnings"] == [] and th.console_errors(res) == []
    shapes = {s["id"]: s for pg in res["pages"] for s in pg["shapes"]}
    opened = load(path)
    finite = empty = 0
    for aid in ids:
        x0, y0, x1, y1 = opened.page_bounds(aid)
        got = shapes[aid]
        if x0 == x1 and y0 == y1:  # NaN points: an empty box at the arrow's origin, in the editor too
            lb = got["geometry"]["localBounds"]
            assert (lb["w"], lb["h"]) == (0, 0), aid
            assert all((c["x"], c["y"]) == (x0, y0) for c in got["geometry"]["pageCorners"]), aid
            empty += 1
        else:
            pb = got["pageBounds"]
            assert (pb["x"], pb["y"], pb["x"] + pb["w"], pb["y"] + pb["h"]) == (x0, y0, x1, y1), aid
            finite += 1
    assert finite and empty
