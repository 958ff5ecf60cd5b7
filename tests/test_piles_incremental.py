"""Piles: many shapes stacked at a few places (an agent that repeats its plan creates its cards where
it created them before). The relation tables after each edit (a pile member moved a little, onto
or off a pile, a card added to a pile, one removed) equal those of a fresh observation, and so do
the observations; the painted occluders' candidates, reduced to one flag per row, are the rows
the pairs give."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spatialobs.canvas import Canvas, Node
from spatialobs.canvas.document.records import Binding
from tests.reference import geometry_oracle as gref
from tests.test_observe_incremental import advanced, assert_tables_fresh, observations  # noqa: F401 (a fixture)

P = "page:page"
OBS = sys.modules["spatialobs.canvas.observe"]
#: a few places and sizes: identical boxes, boxes inside others, neighbours a few units apart
PLACES = ((10.0, 10.0), (12.0, 10.0), (10.0, 55.0), (100.0, 20.0), (30.0, 14.0))
SIZES = ((40.0, 20.0), (40.0, 20.0), (20.0, 10.0), (80.0, 45.0), (4.0, 4.0))


def pile_page(seed: int, n: int) -> Canvas:
    """Cards at a few places (piles of the same box, smaller boxes inside larger, neighbours within
    the near gap), under the page and a frame, and arrows between cards of the piles."""
    rng = np.random.default_rng(seed)
    c = Canvas()
    c.add(Node("F", "frame", P, "a0", 0, 0, 220, 160))
    for k in range(n):
        x, y = PLACES[int(rng.integers(len(PLACES)))]
        w, h = SIZES[int(rng.integers(len(SIZES)))]
        c.add(Node(f"s{k}", ("geo", "note")[k % 2], ("F", P)[k % 3 == 0], None, x, y, w, h,
                   style={"fill": ("solid", "none")[k % 2]}))
    for k in range(n // 5):
        c.add(Node(f"a{k}", "arrow", P, None, 0, 0, props={"start": {"x": 0, "y": 0}, "end": {"x": 5, "y": 5}}))
        c.add(Binding(f"b{k}", "arrow", f"a{k}", f"s{(7 * k) % n}", "start", (0.5, 0.5), False))
        c.add(Binding(f"e{k}", "arrow", f"a{k}", f"s{(7 * k + 3) % n}", "end", (0.5, 0.5), False))
    return c


PILE_EDIT = st.one_of(
    st.tuples(st.just("nudge"), st.integers(0, 10**6), st.sampled_from([0.5, 1.0, 2.0, 3.0, -2.0, 10.0, -10.0])),
    st.tuples(st.just("onto"), st.integers(0, 10**6), st.integers(0, len(PLACES) - 1)),
    st.tuples(st.just("resize"), st.integers(0, 10**6), st.integers(0, len(SIZES) - 1)),
    st.tuples(st.just("add"), st.integers(0, len(PLACES) - 1), st.integers(0, len(SIZES) - 1), st.booleans()),
    st.tuples(st.just("remove"), st.integers(0, 10**6)),
)


def pile_edit(c: Canvas, o: tuple, count: list) -> None:
    cards = [i for i, nd in c.nodes.items() if nd.type in ("geo", "note")]
    kind = o[0]
    if kind == "add":
        count[0] += 1
        (x, y), (w, h) = PLACES[o[1]], SIZES[o[2]]
        c.add(Node(f"new{count[0]}", "geo", "F" if o[3] else P, None, x, y, w, h, style={"fill": "solid"}))
        return
    if not cards:
        return
    nid = cards[o[1] % len(cards)]
    nd = c.nodes[nid]
    if kind == "nudge":
        c.update(nid, x=nd.x + o[2])
    elif kind == "onto":
        x, y = PLACES[o[2]]
        c.update(nid, x=x, y=y)
    elif kind == "resize":
        w, h = SIZES[o[2]]
        c.update(nid, w=w, h=h)
    else:
        c.remove(nid)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(10, 70), st.lists(PILE_EDIT, min_size=1, max_size=10))
def test_pile_edits_update_tables_as_a_fresh_observation_finds_them(seed, n, edits):
    c = pile_page(seed, n)
    observations(c)
    count = [0]
    for o in edits:
        pile_edit(c, o, count)
        assert observations(c) == observations(c.copy())
        assert_tables_fresh(c)


def test_a_nudged_pile_member_is_carried_not_observed_afresh(advanced):
    """The edits above go through the update paths (the version is reached from the previous one)."""
    c = pile_page(1, 60)
    observations(c)
    for k, dx in enumerate((1.0, 2.0, -3.0, 10.0)):
        pile_edit(c, ("nudge", k * 5, dx), [0])
        assert observations(c) == observations(c.copy())
        assert_tables_fresh(c)
    assert advanced[0] == 4


def test_painters_reaching_a_pile_are_the_pairs_reduced():
    """_meeting_above over a pile: one flag per row, the pairs overlap_pairs_between gives reduced."""
    rng = np.random.default_rng(5)
    a = np.array([[10.0, 10.0, 50.0, 30.0]] * 200 + [[300.0, 300.0, 310.0, 310.0]] * 20)
    a = a + rng.integers(0, 3, (len(a), 1)).astype(float)
    a_rank = rng.permutation(len(a)).astype(np.int64)
    b = np.concatenate([a[::17], [[0.0, 0.0, 1000.0, 1000.0]]])
    b_rank = np.concatenate([a_rank[::17], [len(a) // 2]])
    got = OBS._meeting_above(a, a_rank, b, b_rank)
    ga, gb = OBS._grown_boxes(a), OBS._grown_boxes(b)
    want = np.zeros(len(a), bool)
    for j in range(len(a)):
        for i in range(len(b)):
            meets = min(ga[j, 2], gb[i, 2]) > max(ga[j, 0], gb[i, 0]) and min(ga[j, 3], gb[i, 3]) > max(ga[j, 1], gb[i, 1])
            want[j] |= bool(meets and b_rank[i] > a_rank[j])
    assert got.tolist() == want.tolist()
    assert 0 < got.sum() < len(a)
    assert not OBS._meeting_above(a, a_rank, b[:0], b_rank[:0]).any()


BOX_AT = st.sampled_from([-1e6, -40.0, -3.0, -2.0, 0.0, 1.0, 1.5, 2.0, 3.0, 10.0, 50.0, 1e6])


def _boxes(data, n):
    x0 = data.draw(st.lists(BOX_AT, min_size=n, max_size=n))
    y0 = data.draw(st.lists(BOX_AT, min_size=n, max_size=n))
    w = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 4.0]), min_size=n, max_size=n))
    return np.array([[x, y, x + ww, y + ww] for x, y, ww in zip(x0, y0, w)], dtype=np.float64).reshape(n, 4)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 12), st.integers(0, 20), st.data())
def test_meeting_above_is_the_oracle_on_the_grown_boxes(n, m, data):
    """The painted occlusion's reach: per box of ``a``, whether a box of ``b`` ranked above it meets
    it, both grown (boxes just beyond the margin, far away and at large coordinates among them); up to
    16 boxes of ``b`` compared at once, more through the box index."""
    OBS = sys.modules["spatialobs.canvas.observe"]
    a, b = _boxes(data, n), _boxes(data, m)
    a_rank = np.array(data.draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), np.int64)
    b_rank = np.array(data.draw(st.lists(st.integers(0, 6), min_size=m, max_size=m)), np.int64)
    got = OBS._meeting_above(a, a_rank, b, b_rank)
    ga, gb = OBS._grown_boxes(a).tolist(), OBS._grown_boxes(b).tolist()
    assert got.tolist() == gref.overlap_any_ranked(gb, b_rank.tolist(), ga, a_rank.tolist(), above=True)


def _reach_case(data, n, m):
    """Rows in view (distinct paint ranks, sorted), their boxes, the dirty rows' boxes before and now
    with ranks, the dirty rows, and a previous result over some of the rows and others."""
    boxes, bb = _boxes(data, n), _boxes(data, m)
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, 40), min_size=n, max_size=n))), np.int64)
    brank = np.array(data.draw(st.lists(st.integers(0, 41), min_size=m, max_size=m)), np.int64)
    dirty = np.array(sorted(data.draw(st.sets(st.integers(0, 40), max_size=4))), np.int64)
    prev_rows = np.array(sorted(data.draw(st.sets(st.integers(0, 40)))), np.int64)
    prev_occ = np.array(data.draw(st.lists(st.integers(-1, 40), min_size=len(prev_rows), max_size=len(prev_rows))),
                        np.int64)
    return boxes, rows, bb, brank, dirty, prev_rows, prev_occ


def _as_lists(got):
    return tuple(x.tolist() for x in got)


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 14), st.integers(0, 6), st.data())
def test_painted_reach_compiled_and_twin_are_the_oracle(n, m, data):
    """The rows an edit's painted cover reaches, the previous occluders the others keep and the rows the
    reached ones' covers are computed among: the compiled pass, its numpy twin and the row-by-row oracle
    agree (boxes touching, just beyond the grown margin, far away and at large coordinates; rows neither
    reached nor in the previous result)."""
    from tests.reference import paint_oracle as pref
    from spatialobs.canvas import _cpagetables
    case = _reach_case(data, n, m)
    pad = 2.0 * OBS._ON_STROKE
    want = pref.painted_reach(*(x.tolist() for x in case), pad)
    got = _cpagetables.painted_reach(*case, pad)
    twin = OBS._painted_reach_py(*case)
    assert (got == () and twin == () and want == ()) or (_as_lists(got) == _as_lists(twin) == want)
    if got:
        assert all(x.dtype == np.int64 for x in got)


def test_painted_reach_compiled_leaves_what_is_not_finite_or_too_large_to_the_twin():
    """A box that is not finite, or more comparisons than PAINTED_REACH_MAX: None (the caller's twin
    answers, through the index kernels); bad shapes: ValueError naming them."""
    from spatialobs.canvas import _cpagetables
    boxes = np.array([[0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 20.0, 20.0]])
    rows, i0 = np.array([3, 7], np.int64), np.zeros(0, np.int64)
    bb, brank = np.array([[4.0, 4.0, 6.0, 6.0]]), np.array([9], np.int64)
    assert _cpagetables.painted_reach(boxes, rows, bb, brank, i0, rows, np.array([-1, -1]), 2.0) is not None
    for bad in (np.inf, -np.inf, np.nan):
        b2 = bb.copy()
        b2[0, 2] = bad
        assert _cpagetables.painted_reach(boxes, rows, b2, brank, i0, rows, np.array([-1, -1]), 2.0) is None
    big = np.tile(boxes[:1], (2000, 1))
    assert _cpagetables.painted_reach(big, np.arange(2000, dtype=np.int64), np.tile(bb, (600, 1)),
                                   np.full(600, 5000, np.int64), i0, i0, i0, 2.0) is None
    with pytest.raises(ValueError, match=r"boxes \(2\) must have one row per row \(1\)"):
        _cpagetables.painted_reach(boxes, rows[:1], bb, brank, i0, rows, np.array([-1, -1]), 2.0)
    with pytest.raises(ValueError, match=r"prev_occ \(1\) must have one entry per prev_rows \(2\)"):
        _cpagetables.painted_reach(boxes, rows, bb, brank, i0, rows, np.array([-1]), 2.0)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 12), st.data())
def test_grown_boxes_are_the_margin_formula_to_the_bit(n, data):
    """Each box grown by 2 * _ON_STROKE + 1e-3 * max(1, its largest magnitude), in Python floats."""
    OBS = sys.modules["spatialobs.canvas.observe"]
    b = _boxes(data, n)
    got = OBS._grown_boxes(b)
    assert got.shape == (n, 4) and got.dtype == np.float64
    for row, g in zip(b.tolist(), got.tolist()):
        m = 2.0 * OBS._ON_STROKE + 1e-3 * max(1.0, max(abs(v) for v in row))
        assert g == [row[0] - m, row[1] - m, row[2] + m, row[3] + m]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 20), st.integers(0, 12), st.booleans(), st.data())
def test_overlap_any_ranked_at_once_is_the_kernels(m, n, above, data):
    """The few boxes compared with every query at once give the kernel's flags, ranked above or below."""
    OBS = sys.modules["spatialobs.canvas.observe"]
    b, q = _boxes(data, m), _boxes(data, n)
    b_rank = np.array(data.draw(st.lists(st.integers(0, 6), min_size=m, max_size=m)), np.int64)
    q_rank = np.array(data.draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), np.int64)
    got = OBS._overlap_any_ranked(b, b_rank, q, q_rank, above)
    want = gref.overlap_any_ranked(b.tolist(), b_rank.tolist(), q.tolist(), q_rank.tolist(), above=above)
    assert got.tolist() == want


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 12), st.integers(0, 6), st.data())
def test_closed_hits_of_few_are_the_numpy_passes(n, m, data):
    """The index's hits without its stale rows, then the stale rows' own hits: filtered on Python values
    for a few, by numpy passes for many; the same pairs in the same order."""
    import types

    OBS = sys.modules["spatialobs.canvas.observe"]
    then = _boxes(data, n)
    now = then.copy()
    stale = np.array(sorted(data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))), np.int64) if n else \
        np.zeros(0, np.int64)
    if len(stale):
        now[stale] = _boxes(data, len(stale))
    q = _boxes(data, m)
    state = types.SimpleNamespace(index=OBS.G.BoxIndex(then) if n else OBS.G.BoxIndex(np.zeros((0, 4))),
                                  stale=stale, index_map=None, sb=now)
    few = OBS._closed_hits_of(state, q)
    old = OBS._HITS_AT_ONCE
    OBS._HITS_AT_ONCE = -1
    try:
        many = OBS._closed_hits_of(state, q)
    finally:
        OBS._HITS_AT_ONCE = old
    assert few[0].dtype == few[1].dtype == np.int64
    assert list(zip(few[0].tolist(), few[1].tolist())) == list(zip(many[0].tolist(), many[1].tolist()))
    # and the pairs are those of the boxes now, closed
    want = sorted((i, k) for i in range(n) for k in range(m)
                  if now[i, 0] <= q[k, 2] and q[k, 0] <= now[i, 2] and now[i, 1] <= q[k, 3] and q[k, 1] <= now[i, 3])
    assert sorted(zip(few[0].tolist(), few[1].tolist())) == want
