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
            assert c._terms_of(nid) == terms.get(nid, {}), nid  # the index's read, the scan's
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


def test_a_segment_is_kept_while_its_arrow_bindings_and_targets_geometry_are(monkeypatch):
    monkeypatch.setattr(paint, "DERIVED_ENDS", False)  # the keyed cache alone (the derivation's ends below)
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
            got = c._terms_of(nid)
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


#: Edits that change the paint order: a node's index set below or above its siblings'.
REORDER = st.tuples(st.just("z"), st.integers(0, 10**6), st.sampled_from(["a0", "a1V", "zz"]))


def assert_carried_state_fresh(c: Canvas) -> None:
    """The segments a version carried (or read) are the computed ones, with the page rows of their
    targets; the painted occluders it keeps are those of a fresh copy, by id."""
    p, s, rows, no_occ = rows_in_view(c)
    pg = s.pg
    for r, v in s.segments.items():
        nid = pg.ids[r]
        assert bits(v) == bits(paint.straight_segment(c, nid)), nid
        t = s.seg_targets[r]
        if t is not None:
            want = sorted(list(pg.ids).index(b.to_id) for b in c._terms_of(nid).values())
            assert sorted(t) == want, nid
    kept = s.occ_memo.get((p.vbox, p.min_opacity))
    assert kept is not None
    f = c.copy()
    pf, sf, rows_f, no_occ_f = rows_in_view(f)
    full = OBS._painted_occluders(f, sf, rows_f, no_occ_f, pf)

    def named(pg_: Any, rs: np.ndarray, occ: np.ndarray) -> Dict[str, Any]:
        return {pg_.ids[int(r)]: (pg_.ids[int(o)] if o >= 0 else None) for r, o in zip(rs.tolist(), occ.tolist())}
    assert named(pg, kept[0], kept[1]) == named(sf.pg, rows_f, full)


@pytest.mark.timeout(300)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 5), edits=st.lists(st.one_of(EDIT, REORDER), min_size=1, max_size=6))
def test_carried_segments_and_occluders_are_fresh_after_any_edits(seed, edits):
    """After every edit of a sequence (moves, restyles, adds, removals, rebinding, paint order
    changes), the straight segments and painted occluders a version carried from the previous one
    are those computed afresh."""
    c = with_copies(seed)
    observe(c, VIEW).to_json()
    count = [0]
    for o in edits:
        if o[0] == "z":
            ids = list(c.nodes)
            c.update(ids[o[1] % len(ids)], index=o[2])
        else:
            edit(c, o, count)
        got = observe(c, VIEW).to_json()
        assert_carried_state_fresh(c)
        assert got == observe(c.copy(), VIEW).to_json()


@pytest.mark.parametrize("kernel", [True, False])
def test_a_card_sent_below_what_it_covered_uncovers_it_through_the_carried_occluders(monkeypatch, kernel):
    """A card that covered another, sent below it (and the other way round): the painted occluders
    are computed again from the previous version's and the covered card is seen again (the rows
    reached found by the compiled pass and by its twin)."""
    monkeypatch.setattr(OBS, "REACH_KERNEL", kernel)
    again: List[Any] = []
    real = OBS._painted_occluders_again

    def spy(*args: Any) -> Any:
        out = real(*args)
        again.append(out is not None)
        return out
    monkeypatch.setattr(OBS, "_painted_occluders_again", spy)
    c = Canvas()
    c.add(Node("low", "geo", P, "a1", 10, 10, 40, 40, style={"fill": "solid"}))
    c.add(Node("mid", "geo", P, "a2", 100, 100, 40, 40, style={"fill": "solid"}))
    c.add(Node("top", "geo", P, "a3", 5, 5, 60, 60, style={"fill": "solid"}))
    c.add(Node("late", "geo", P, "a4", 300, 200, 10, 10, style={"fill": "solid"}))

    def occluded() -> set:
        return {o["id"] for o in observe(c, VIEW).to_dict()["objects"] if o.get("visibility") == "occluded"}
    assert occluded() == {"low"}
    c.update("top", index="a0")  # below the card it covered
    assert occluded() == set()
    c.update("top", index="a5")  # above it again
    assert occluded() == {"low"}
    c.update("low", index="a6")  # the covered card brought above (too small to cover the other)
    assert occluded() == set()
    c.update("low", x=0.0, y=0.0, w=80.0, h=80.0)  # grown over it
    assert occluded() == {"top"}
    assert again and all(again)
    assert observe(c, VIEW).to_json() == observe(c.copy(), VIEW).to_json()


def test_a_segment_is_carried_while_its_connector_and_targets_are_not_dirty():
    """A connector's segment is carried to the next version when neither it nor its targets
    changed, and read again when a target moved."""
    c = with_copies(3)
    observe(c, VIEW).to_json()
    _, s, _, _ = rows_in_view(c)
    ids = list(s.pg.ids)
    w00, w10 = ids.index("w00"), ids.index("w10")
    assert w00 in s.segments and w10 in s.segments
    before = dict(s.segments)
    c.update("s2", x=c.nodes["s2"].x + 7.0)  # w00's target
    c.add(Node("extra", "geo", P, None, 390, 290, 5, 5))  # new rows: the state is carried through a row map
    observe(c, VIEW).to_json()
    _, s2, _, _ = rows_in_view(c)
    assert s2 is not s
    ids2 = list(s2.pg.ids)
    assert s2.segments[ids2.index("w10")] is before[w10]  # carried as it was
    assert bits(s2.segments[ids2.index("w00")]) == bits(paint.straight_segment(c, "w00"))
    assert bits(s2.segments[ids2.index("w00")]) != bits(before[w00])


def test_a_segment_is_not_carried_past_a_dirty_connector_or_target_or_a_removed_row():
    """The carry's rule on its own: a segment goes to the next version only when the connector and
    every target keep a row and none of them is dirty; one with a target off the page is never carried."""
    c = with_copies(3)
    observe(c, VIEW).to_json()
    _, s, _, _ = rows_in_view(c)
    ids = list(s.pg.ids)
    w00, s1, s2 = ids.index("w00"), ids.index("s1"), ids.index("s2")
    assert sorted(s.seg_targets[w00]) == sorted([s1, s2])
    n = len(ids)

    def carried(dirty_rows: List[int], omap: Any = None) -> Dict[int, Any]:
        new = OBS._PageState(s.pg, s.solid, s.bindings, s.binding_writes)
        OBS._carry_segments(new, s, set(dirty_rows), omap)
        return new.segments
    assert carried([])[w00] is s.segments[w00]
    for dirty in ([w00], [s1], [s2]):
        got = carried(dirty)
        want = {r for r, t in s.seg_targets.items() if t is not None and r not in dirty and not set(t) & set(dirty)}
        assert w00 not in got and set(got) == want and all(got[r] is s.segments[r] for r in got)
    gone = np.append(np.arange(n), -1)
    gone[s2] = -1  # the target removed
    assert w00 not in carried([], gone)
    shifted = np.append(np.arange(n) + 3, -1)  # rows renumbered: carried to the new rows
    new = OBS._PageState(s.pg, s.solid, s.bindings, s.binding_writes)
    OBS._carry_segments(new, s, set(), shifted)
    assert new.segments[w00 + 3] is s.segments[w00] and sorted(new.seg_targets[w00 + 3]) == sorted([s1 + 3, s2 + 3])
    s.seg_targets[w00] = None  # a target off the page
    assert w00 not in carried([])


def test_two_bindings_at_one_end_the_later_in_canvas_order_wins_everywhere():
    """One reading of a connector's bindings by terminal serves the painted segments, the kept
    segments and the arrow's resolution: with two at one end, the later added (not the later id)."""
    from spatialobs.canvas.document import arrows

    c = Canvas()
    c.add(Node("shape:b1", "geo", "page:page", "a1", 200, 0, 100, 100, props={"geo": "rectangle"}))
    c.add(Node("shape:b2", "geo", "page:page", "a2", 200, 300, 100, 100, props={"geo": "rectangle"}))
    c.add(Node("shape:arr", "arrow", "page:page", "a3", 0, 0,
               props={"start": {"x": 0, "y": 50}, "end": {"x": 9, "y": 9}}))
    c.add(Binding("binding:x", "arrow", "shape:arr", "shape:b1", "end"))
    c.add(Binding("binding:a", "arrow", "shape:arr", "shape:b2", "end"))  # added later, sorts first
    assert c._terms_of("shape:arr")["end"].to_id == "shape:b2" and set(c._terms_of("shape:arr")) == {"end"}
    later = {"end": c.bindings["binding:a"]}
    seg = paint.straight_segment(c, "shape:arr", later)
    assert paint.straight_segment_kept(c, "shape:arr") == seg and seg[3] > 250  # it ends at b2, below
    _, _, s, e = arrows._arrow_inputs(c, "shape:arr")
    assert s is None and e is not None and e.target == "shape:b2"
    assert c._terms_of("shape:nope") == {}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 6)] * 4), min_size=1, max_size=30), st.data())
def test_meeting_pairs_of_the_lower_rows_are_the_whole_answers_in_its_order(corners, data):
    """The pairs whose lower box is asked for, found for those boxes alone, are the ones (and in the
    order) of all pairs at once."""
    b = np.array([(min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)) for x0, y0, x1, y1 in corners], float)
    lower = np.array(sorted(data.draw(st.sets(st.integers(0, len(b) - 1)))), np.int64)
    a, h = OBS._meeting_pairs(b)
    keep = np.isin(a, lower)
    ga, gh = OBS._meeting_pairs_of(b, lower)
    assert ga.dtype == gh.dtype == np.int64
    assert list(zip(ga.tolist(), gh.tolist())) == list(zip(a[keep].tolist(), h[keep].tolist()))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.booleans()), min_size=2, max_size=14), st.data())
def test_copies_above_the_asked_rows_are_the_whole_answers(cards, data):
    """Cards stacked at a few places in a few looks (copies of one look at two places are no copies of
    each other), some hidden: the copies above the asked rows are those the sort of every place finds."""
    c = Canvas()
    for k, (at, look, shown) in enumerate(cards):
        c.add(Node(f"k{k}", "geo", P, None, 40.0 * at, 30.0, 30.0, 20.0, text=("a", "b")[look],
                   opacity=1.0 if shown else 0.2))
    _, s, rows, _ = rows_in_view(c)
    shown = s.pg.opacity[rows] >= 0.9
    full = np.full(len(rows), -1, np.int64)
    OBS._copies_above(c, s.pg, rows, shown, full, None)
    asked = np.zeros(len(rows), bool)
    asked[sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), min_size=1)))] = True
    got = np.full(len(rows), -1, np.int64)
    OBS._copies_above(c, s.pg, rows, shown, got, asked)
    assert got[asked].tolist() == full[asked].tolist()
