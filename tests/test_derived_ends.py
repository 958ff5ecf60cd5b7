"""Straight connectors' segments read from the derivation, and connectors along a higher one's stroke.

The painted occlusion marks a straight connector that lies along a higher connector's stroke
(``observe._strokes_on_strokes``). It reads each connector's page segment: a tldraw arrow
resolved by the derivation's compiled batch is not resolved again, its drawn ends are read
from the derivation (``arrows.resolved_ends``, behind ``paint.DERIVED_ENDS``); the pairs are
tested at once (``observe._along_strokes``). The oracles: ``paint.straight_segment`` (the
arrow resolved in Python) for every connector of every shared real file and of generated pages
after edits, to the bit (after hypothesis edit sequences: ``test_painted_kept.py``, whose
``straight_segment_kept`` reads the derivation's ends); ``paint.along_stroke`` (one pair in Python) for every pair; and the
naive observation (``tests/reference/observe_oracle.py``) on pages of stacked arrows.
"""

from __future__ import annotations

import math
import struct
import sys
from typing import Any, Tuple

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import shared_files
from spatialobs.canvas import Canvas, Node, load, observe
from spatialobs.canvas import paint
from spatialobs.canvas.document import arrows as A
from spatialobs.canvas.document.records import Binding
from spatialobs.canvas.scenarios import diagram_workspace
from tests.reference.observe_oracle import observe_naive
from test_painted_kept import with_copies

OBS = sys.modules["spatialobs.canvas.observe"]
P = "page:page"
VIEW = (0.0, 0.0, 400.0, 300.0)
REAL = shared_files("canvases", "*.tldr") + shared_files("canvases", "*.excalidraw")


def bits(v: Any) -> bytes:
    return b"none" if v is None else struct.pack(f"<{len(v)}d", *v)


def assert_segments_resolved_again(c: Canvas) -> int:
    """Every connector's segment, read as the observation reads it, is the one resolved in Python;
    returns how many were read from the derivation."""
    d = c._geometry()
    from_derivation = 0
    for nid, nd in c.nodes.items():
        if nd.type not in ("arrow", "line"):
            continue
        paint._SEGMENTS.clear()  # (the keyed cache would answer from an earlier resolution)
        want = paint.straight_segment(c, nid)
        assert bits(paint.straight_segment_kept(c, nid)) == bits(want), nid
        if A.resolved_ends(d, d.row[nid]) is not None:
            from_derivation += 1
    return from_derivation


# --------------------------------------------------------------------------- real files
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_segments_from_the_derivation_are_the_resolved_ones_on_every_real_file(path):
    c = load(path)
    c.geometry()
    n = assert_segments_resolved_again(c)
    bound_tldraw = path.suffix == ".tldr" and any(b.type == "arrow" for b in c.bindings.values())
    assert (n > 0) == bound_tldraw  # tldraw's bound arrows are read from the batch; Excalidraw's are points
    # each bound arrow's target moved by one unit: the incremental derivation's batch, read again
    for b in list(c.bindings.values())[:12]:
        if b.to_id in c.nodes:
            c.update(b.to_id, x=c.nodes[b.to_id].x + 1.0)
            assert_segments_resolved_again(c)


def test_a_real_file_observed_after_moves_is_the_twins_observation(monkeypatch):
    paths = [p for p in REAL if p.suffix == ".tldr"]
    if not paths:
        pytest.skip("no shared real tldraw file (the data folder lives beside the checkout as shared/data)")
    for path in paths:
        c = load(path)
        targets = [b.to_id for b in c.bindings.values() if b.to_id in c.nodes][:6]
        got, want = [], []
        for derived in (True, False):
            monkeypatch.setattr(paint, "DERIVED_ENDS", derived)
            paint._SEGMENTS.clear()
            k = load(path)
            out = got if derived else want
            out.append(observe(k).to_json())
            for t in targets:
                k.update(t, x=k.nodes[t].x + 1.0)
                out.append(observe(k).to_json())
        assert got == want, path.name


# --------------------------------------------------------------------------- generated pages
@pytest.mark.generated
def test_the_diagram_workspace_reads_its_straight_arrows_from_the_derivation():
    c = diagram_workspace(3000, seed=7)
    c.geometry()
    assert assert_segments_resolved_again(c) > 300


@pytest.mark.generated
def test_a_target_moved_after_an_observation_reads_its_arrows_from_the_new_derivation():
    c = with_copies(3)
    observe(c, VIEW).to_json()
    c.update("s2", x=c.nodes["s2"].x + 3.0)  # w00 and w01 join s1 and s2: resolved again
    observe(c, VIEW).to_json()
    d = c._geometry()
    assert A.resolved_ends(d, d.row["w00"]) is not None and A.resolved_ends(d, d.row["w01"]) is not None
    assert A.resolved_ends(d, d.row["w10"]) is None  # (kept from the previous derivation)
    assert_segments_resolved_again(c)


@pytest.mark.generated
def test_an_invalid_or_bent_arrow_resolved_by_the_batch_is_no_segment():
    c = Canvas()
    c.add(Node("a", "geo", P, None, 0, 0, 100, 100, props={"geo": "rectangle"}))
    c.add(Node("b", "geo", P, None, 300, 0, 100, 100, props={"geo": "rectangle"}))
    for aid, props in (("bent", {"bend": 30}), ("straight", {}), ("self", {})):
        c.add(Node(aid, "arrow", P, None, 0, 0, props={"start": {"x": 0, "y": 0}, "end": {"x": 1, "y": 1}, **props}))
        c.add(Binding(f"{aid}s", "arrow", aid, "a", "start", (0.5, 0.5), False))
        c.add(Binding(f"{aid}e", "arrow", aid, "a" if aid == "self" else "b", "end", (0.5, 0.5), False))
    d = c._geometry()
    assert A.resolved_ends(d, d.row["straight"]) is not None
    assert paint.straight_segment_kept(c, "bent") is None is paint.straight_segment(c, "bent")
    assert bits(paint.straight_segment_kept(c, "self")) == bits(paint.straight_segment(c, "self"))
    assert bits(paint.straight_segment_kept(c, "straight")) == bits(paint.straight_segment(c, "straight"))


def stacked(k: int, seed: int) -> Canvas:
    """Two cards and ``k`` arrows between them (both directions, some with other strokes and
    heads), a few free arrows and lines drawn over them."""
    rng = np.random.default_rng(seed)
    c = Canvas()
    c.add(Node("a", "geo", P, None, 20, 40, 80, 60, props={"geo": "rectangle"}))
    c.add(Node("b", "geo", P, None, 260, 120 + float(rng.integers(0, 40)), 80, 60, props={"geo": "ellipse"}))
    for j in range(k):
        s, e = ("a", "b") if rng.random() < 0.6 else ("b", "a")
        props = {"start": {"x": 0, "y": 0}, "end": {"x": 1, "y": 1},
                 "size": str(rng.choice(["s", "m", "l", "xl"])), "arrowheadStart": str(rng.choice(["none", "arrow"]))}
        c.add(Node(f"w{j}", "arrow", P, None, 0, 0, props=props))
        c.add(Binding(f"w{j}s", "arrow", f"w{j}", s, "start", (0.5, 0.5), False))
        if rng.random() < 0.85:
            c.add(Binding(f"w{j}e", "arrow", f"w{j}", e, "end", (0.5, 0.5), False))
    for j in range(3):
        x0, y0 = 60.0 + 10 * j, 70.0
        c.add(Node(f"l{j}", "line", P, None, x0, y0,
                   props={"points": [[0, 0], [240.0 - 5 * j, 80.0 + float(rng.integers(0, 40))]]}))
    return c


@pytest.mark.generated
@settings(max_examples=25, deadline=None)
@given(k=st.integers(2, 40), seed=st.integers(0, 10**6), moves=st.lists(st.floats(-30, 30), max_size=4))
def test_stacked_arrows_are_marked_as_the_naive_observation_marks_them(k, seed, moves):
    c = stacked(k, seed)
    view = (0.0, 0.0, 400.0, 300.0)
    assert observe(c, view).to_dict() == observe_naive(c, view)
    for dy in moves:
        c.update("b", y=c.nodes["b"].y + dy)
        assert observe(c, view).to_dict() == observe_naive(c, view)


@pytest.mark.generated
@settings(max_examples=25, deadline=None)
@given(k=st.integers(2, 30), seed=st.integers(0, 10**6))
def test_the_pairs_one_by_one_and_at_once_mark_the_same_covers(k, seed):
    c = stacked(k, seed)
    p, s, rows, no_occ = _rows(c)
    got = []
    for limit in (0, 10**9):  # every page through the pairs at once, then one by one
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(OBS, "_STROKE_PAIRS_LOOP", limit)
            s.segments.clear()
            got.append(OBS._painted_occluders(c, s, rows, no_occ, p).tolist())
    assert got[0] == got[1]


@pytest.mark.generated
def test_a_pile_of_arrows_marks_each_lower_one_by_its_first_cover():
    c = stacked(30, 1)
    p, s, rows, no_occ = _rows(c)
    out = OBS._painted_occluders(c, s, rows, no_occ, p)
    ids = [s.pg.ids[int(r)] for r in rows]
    covered = {ids[i]: s.pg.ids[int(o)] for i, o in enumerate(out.tolist()) if o >= 0}
    assert sum(1 for i in covered if i.startswith("w")) >= 10


def _rows(c: Canvas) -> Tuple[Any, Any, np.ndarray, np.ndarray]:
    p, _ = OBS._inputs(c, VIEW, None, None, (), 180, 700, (0, 0), False, 0.75, 32.0, 1.0, 10.0, 4.0, 0.9)
    s = OBS._page_state(c, p.page)
    pg = s.pg
    labels = OBS.G.visibility_labels(pg.boxes, p.vbox, p.near_factor)
    rows = np.flatnonzero((labels == OBS.G.VISIBLE) | (labels == OBS.G.PARTIAL))
    return p, s, rows, pg.hidden[rows] | ~s.solid[rows] | pg.gone[rows]


# --------------------------------------------------------------------------- the pair test at once
COORD = st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1e308, -1e308, math.inf,
                                                         -math.inf, math.nan, 1.0, 2.0, 0.5]))
SEG = st.tuples(COORD, COORD, COORD, COORD)


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(pairs=st.lists(st.tuples(SEG, SEG, st.floats(0.0, 40.0), st.sampled_from([0.0, 8.0, 28.0, 80.0]),
                                st.sampled_from([0.0, 8.0, 28.0, 80.0])), min_size=1, max_size=30),
       near=st.booleans())
def test_along_strokes_is_along_stroke_for_every_pair(pairs, near):
    rows = []
    for seg, cover, half, hs, he in pairs:
        if near:  # the segment close to the cover's line, where the answer turns
            t = 0.3
            seg = (cover[0] + t * (cover[2] - cover[0]), cover[1] + t * (cover[3] - cover[1]) + half,
                   cover[2], cover[3] - half)
        L = math.hypot(cover[2] - cover[0], cover[3] - cover[1])
        if L == 0:
            continue  # (the caller leaves such covers out: along_stroke answers False)
        rows.append((seg, cover, L, max(1.0, half), hs, he))
    if not rows:
        return
    segs = np.array([r[0] for r in rows], dtype=np.float64)
    covers = np.array([r[1] for r in rows], dtype=np.float64)
    got = OBS._along_strokes(segs, covers, np.array([r[2] for r in rows]), np.array([r[3] for r in rows]),
                             np.array([r[4] for r in rows]), np.array([r[5] for r in rows]))
    want = [paint.along_stroke(r[0], r[1], r[3], r[4], r[5]) for r in rows]
    assert got.tolist() == want


ENTRY = st.one_of(st.fixed_dictionaries({"x": st.floats(-10, 10), "y": st.floats(-10, 10)}),
                  st.lists(st.floats(-10, 10), max_size=3), st.tuples(st.floats(-10, 10), st.floats(-10, 10)),
                  st.none(), st.integers(), st.text(max_size=2))


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(pts=st.one_of(st.lists(ENTRY, max_size=6), st.dictionaries(st.text(max_size=3), ENTRY, max_size=6)))
def test_more_than_two_points_is_counted_as_line_points_keeps_them(pts):
    assert A._over_two_line_points(pts) == (len(A._line_points({"points": pts})) > 2)
