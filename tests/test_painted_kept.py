"""The painted occlusion's per-row pieces kept from one page version to the next.

After an edit the painted occluders are computed again for the rows the edit reaches
(``observe._painted_occluders_again``); the per-row Python they run is kept across versions
while its inputs are the same: each row's page outline clipped by its frames
(``observe._page_outline_kept``) and each straight connector's page segment
(``paint.straight_segment_kept``, by what it reads: not a target's style or text). The oracles: after every edit of a hypothesis sequence,
each kept value is the bits the computation gives from scratch; asked for some rows only, the
painted occluders of those rows (with exact copies above them and connectors along a higher
one's stroke) are the whole computation's; and the observations equal the naive oracle's.
"""

from __future__ import annotations

import struct
import sys
from typing import Any, Dict, List

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spatialobs.canvas import Canvas, Node, observe
from spatialobs.canvas import paint
from spatialobs.canvas.document.records import Binding
from tests.reference.observe_oracle import observe_naive
from test_observe_incremental import EDIT, edit, page

OBS = sys.modules["spatialobs.canvas.observe"]
P = "page:page"
VIEW = (0.0, 0.0, 400.0, 300.0)


def bits(v: Any) -> bytes:
    """The exact bits of None, a tuple of floats or a float array."""
    if v is None:
        return b"none"
    if isinstance(v, np.ndarray):
        return repr(v.shape).encode() + np.ascontiguousarray(v, dtype=np.float64).tobytes()
    return struct.pack(f"<{len(v)}d", *v)


def with_copies(seed: int) -> Canvas:
    """:func:`page` with exact copies stacked on some cards, arrows drawn twice in opposite
    directions between the same cards, and a turned frame clipping cards."""
    c = page(seed, 24)
    c.add(Node("T", "frame", P, None, 200, 150, 90, 70, rotation=0.25))
    for k in range(3):
        c.add(Node(f"in{k}", "geo", "T", None, 10.0 * k, 20.0, 60.0, 30.0, style={"fill": "none"},
                   props={"geo": ("rectangle", "ellipse", "star")[k]}))
    for k in (0, 3, 5):
        nd = c.nodes[f"s{k}"]
        for j in range(2):
            c.add(Node(f"s{k}c{j}", nd.type, nd.parent, None, nd.x, nd.y, nd.w, nd.h, text=nd.text,
                       style=dict(nd.style), props=dict(nd.props)))
    for k, (a, b) in enumerate((("s1", "s2"), ("s4", "s6"), ("in0", "in2"))):
        for j, (s, e) in enumerate(((a, b), (b, a))):
            aid = f"w{k}{j}"
            c.add(Node(aid, "arrow", P, None, 0, 0, props={"start": {"x": 0, "y": 0}, "end": {"x": 1, "y": 1}}))
            c.add(Binding(f"{aid}s", "arrow", aid, s, "start", (0.5, 0.5), False))
            c.add(Binding(f"{aid}e", "arrow", aid, e, "end", (0.5, 0.5), False))
    return c


def rows_in_view(c: Canvas, view: Any = VIEW) -> Any:
    """The observation's parameters, the page state, the rows in ``view`` and those that occlude nothing."""
    p, _ = OBS._inputs(c, view, None, None, (), 180, 700, (0, 0), False, 0.75, 32.0, 1.0, 10.0, 4.0, 0.9)
    s = OBS._page_state(c, p.page)
    pg = s.pg
    labels = OBS.G.visibility_labels(pg.boxes, p.vbox, p.near_factor)
    rows = np.flatnonzero((labels == OBS.G.VISIBLE) | (labels == OBS.G.PARTIAL))
    no_occ = pg.hidden[rows] | ~s.solid[rows] | pg.gone[rows]
    return p, s, rows, no_occ


def assert_kept_pieces_fresh(c: Canvas) -> None:
    """Every row's kept outline and every connector's kept segment are the computed ones, to the bit."""
    _, s, _, _ = rows_in_view(c)
    pg = s.pg
    for r in range(len(pg.ids)):
        got = OBS._page_outline_kept(c, pg, r)
        assert bits(got) == bits(OBS._page_outline_of(c, pg, r)), pg.ids[r]
        assert not got.flags.writeable
    terms: Dict[str, Dict[str, Any]] = {}  # every binding scanned: the last per terminal, as a dict keeps
    for b in c._bindings.values():
        terms.setdefault(b.from_id, {})[b.terminal] = b
    for nid in pg.ids:
        if c.nodes[nid].type in ("arrow", "line"):
            assert OBS._terms_of(c, nid) == terms.get(nid, {}), nid  # the index's read, the scan's
            want = paint.straight_segment(c, nid, terms.get(nid, {}))
            assert bits(paint.straight_segment_kept(c, nid, terms.get(nid, {}))) == bits(want), nid
            assert bits(paint.straight_segment_kept(c, nid)) == bits(want), nid


def assert_asked_rows_are_the_whole_answer(c: Canvas, seed: int) -> None:
    p, s, rows, no_occ = rows_in_view(c)
    full = OBS._painted_occluders(c, s, rows, no_occ, p)
    rng = np.random.default_rng(seed)
    for k in {1, 3, len(rows) // 2, len(rows)}:
        if not 0 < k <= len(rows):
            continue
        only = np.sort(rng.choice(len(rows), k, replace=False))
        got = OBS._painted_occluders(c, s, rows, no_occ, p, only)
        assert got[only].tolist() == full[only].tolist()


def test_painted_occluders_of_the_asked_rows_are_the_full_answer():
    """Asked for some of the rows in view only, the painted occluders of those rows are the ones
    the whole computation gives them."""
    c = page(5, 240)  # stacked cards of every fill, frames, groups, arrows
    view = (0.0, 0.0, 250.0, 250.0)
    observe(c, view).to_json()
    p, s, rows, no_occ = rows_in_view(c, view)
    full = OBS._painted_occluders(c, s, rows, no_occ, p)
    assert (full >= 0).sum() > 5  # the page has occluded cards in view
    rng = np.random.default_rng(3)
    for k in (1, 7, len(rows) // 3):
        only = np.sort(rng.choice(len(rows), k, replace=False))
        got = OBS._painted_occluders(c, s, rows, no_occ, p, only)
        assert got[only].tolist() == full[only].tolist()
    occluded = np.flatnonzero(full >= 0)[:5]  # asked for occluded rows alone
    assert OBS._painted_occluders(c, s, rows, no_occ, p, occluded)[occluded].tolist() == full[occluded].tolist()

def test_the_page_has_copies_and_strokes_on_strokes_in_view():
    c = with_copies(1)
    p, s, rows, no_occ = rows_in_view(c)
    full = OBS._painted_occluders(c, s, rows, no_occ, p)
    ids = [s.pg.ids[int(r)] for r in rows]
    covered = {ids[i]: s.pg.ids[int(o)] for i, o in enumerate(full.tolist()) if o >= 0}
    assert covered.get("s3") == "s3c0" and covered.get("s3c0") == "s3c1"  # a copy above hides its copy
    assert covered.get("w00") == "w01" or covered.get("w10") == "w11"  # an arrow along a higher one's stroke
    assert_asked_rows_are_the_whole_answer(c, 0)


@pytest.mark.timeout(300)
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 5), edits=st.lists(EDIT, min_size=1, max_size=6))
def test_kept_outlines_and_segments_are_computed_ones_after_any_edits(seed, edits):
    c = with_copies(seed)
    observe(c, VIEW).to_json()
    count = [0]
    for o in edits:
        edit(c, o, count)
        got = observe(c, VIEW).to_json()
        assert_kept_pieces_fresh(c)
        assert_asked_rows_are_the_whole_answer(c, o[1])
        assert observe(c, VIEW).to_dict() == observe_naive(c, VIEW)
        assert got == observe(c.copy(), VIEW).to_json()


def test_an_outline_is_kept_while_its_record_and_frames_are_and_computed_again_after():
    c = with_copies(2)
    _, s, _, _ = rows_in_view(c)
    r = s.pg.ids.index("in1") if hasattr(s.pg.ids, "index") else list(s.pg.ids).index("in1")
    first = OBS._page_outline_kept(c, s.pg, r)
    assert OBS._page_outline_kept(c, s.pg, r) is first  # kept
    c.update("T", x=201.0)  # the frame that clips it moved
    _, s, _, _ = rows_in_view(c)
    r = list(s.pg.ids).index("in1")
    moved = OBS._page_outline_kept(c, s.pg, r)
    assert moved is not first and bits(moved) == bits(OBS._page_outline_of(c, s.pg, r))
    c.update("in1", style={"color": "red"})  # a new record at the same place: computed again, the same bits
    _, s, _, _ = rows_in_view(c)
    again = OBS._page_outline_kept(c, s.pg, r)
    assert again is not moved and bits(again) == bits(moved)


def test_a_segment_is_kept_while_its_arrow_bindings_and_targets_geometry_are():
    c = with_copies(3)
    c.geometry()
    seg: List[Any] = [paint.straight_segment_kept(c, "w00")]
    assert seg[0] is not None
    entry = paint._SEGMENTS["w00"]
    assert paint.straight_segment_kept(c, "w00") == seg[0] and paint._SEGMENTS["w00"] is entry
    for change in (lambda: c.update("s2", x=c.nodes["s2"].x + 7.0),  # a target moved
                   lambda: c.update("s2", props={"geo": "ellipse"}),  # a target's record replaced
                   lambda: c.update("w00", props={"arrowheadEnd": "none"}),  # the arrow's record
                   lambda: (c.remove("w00e"), c.add(Binding("w00e", "arrow", "w00", "s6", "end")))):  # a binding
        change()
        got = paint.straight_segment_kept(c, "w00")
        assert paint._SEGMENTS["w00"] is not entry
        entry = paint._SEGMENTS["w00"]
        assert bits(got) == bits(paint.straight_segment(c, "w00"))
        seg.append(got)
    assert len({bits(v) for v in seg}) > 2
    c.update("s6", style={"color": "red"}, text="restyled")  # a target's look only: the segment is kept
    assert paint.straight_segment_kept(c, "w00") == seg[-1] and paint._SEGMENTS["w00"] is entry
    # its colours in its props (tldraw's form): kept too
    c.update("s6", props={**c.nodes["s6"].props, "color": "red", "labelColor": "blue"})
    assert paint.straight_segment_kept(c, "w00") == seg[-1] and paint._SEGMENTS["w00"] is entry
    assert bits(paint.straight_segment(c, "w00")) == bits(seg[-1])
    c.update("s6", props={**c.nodes["s6"].props, "color": "green", "size": "xl"})  # its stroke size: resolved again
    assert paint.straight_segment_kept(c, "w00") is not None and paint._SEGMENTS["w00"] is not entry
    assert bits(paint.straight_segment_kept(c, "w00")) == bits(paint.straight_segment(c, "w00"))
    entry = paint._SEGMENTS["w00"]
    c.update("s6", w=c.nodes["s6"].w + 4.0)  # its size: resolved again
    assert paint._SEGMENTS["w00"] is entry and paint.straight_segment_kept(c, "w00") is not None
    assert paint._SEGMENTS["w00"] is not entry
    assert bits(paint.straight_segment_kept(c, "w00")) == bits(paint.straight_segment(c, "w00"))
    c.update("w00", props={"bend": 20})  # an arc: not one segment
    assert paint.straight_segment_kept(c, "w00") is None is paint.straight_segment(c, "w00")


def test_a_connectors_terminals_read_from_the_index_are_the_scans():
    """A connector's bindings by terminal read from the canvas's binding index equal those a scan
    of every binding gives (the last per terminal in canvas order), after a binding is removed and
    added again, a terminal bound twice, and writes rolled back."""
    c = with_copies(1)
    _, s, _, _ = rows_in_view(c)
    conns = [nid for nid in c.nodes if c.nodes[nid].type in ("arrow", "line")]

    def check() -> None:
        scan: dict = {}
        for b in c.bindings.values():
            scan.setdefault(b.from_id, {})[b.terminal] = b
        for nid in conns + ["no-such-connector"]:
            got = OBS._terms_of(c, nid)
            assert got == scan.get(nid, {}) and list(got) == list(scan.get(nid, {})), nid
    check()
    c.remove("w00e")
    c.add(Binding("w00e", "arrow", "w00", "s6", "end"))
    c.add(Binding("w00e2", "arrow", "w00", "s5", "end"))  # a second binding of one terminal: the later wins
    check()
    with pytest.raises(RuntimeError, match="undo"):
        with c.batch():
            c.remove("w00e2")
            c.add(Binding("w00s2", "arrow", "w00", "s3", "start"))
            raise RuntimeError("undo")
    check()
