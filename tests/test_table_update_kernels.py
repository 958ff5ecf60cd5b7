"""The compiled steps of the relation tables' updates after an edit: ``near`` (``_cpagetables.near_grown``,
``near_affected``, ``near_touched``, ``near_pairs``), ``overlaps`` (``overlaps_found``, ``pairs_of``),
``inside`` (``inside_redo``, ``inside_found``) and ``touches`` (``touches_strips``), each held to its
row-by-row oracle on boxes that touch, sit at the gap's edge, nest and lie at large coordinates; every
update's compiled steps held to their numpy twins over edit sequences; bad input refused with its
message, boxes not finite left to the twins."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.reference import pagetables_oracle as ref
from tests.test_observe_incremental import TABLES, EDIT, assert_tables_fresh, edit, observations, page

cpt = pytest.importorskip("spatialobs.canvas._cpagetables")
OBS = sys.modules["spatialobs.canvas.observe"]
AT = st.sampled_from([-1e6, -12.0, -2.0, 0.0, 0.5, 1.0, 3.0, 4.0, 7.0, 8.0, 12.0, 1e6])
SIDE = st.sampled_from([0.0, 0.5, 1.0, 3.0, 4.0, 10.0])


def _boxes(data, n):
    x = data.draw(st.lists(AT, min_size=n, max_size=n))
    y = data.draw(st.lists(AT, min_size=n, max_size=n))
    w = data.draw(st.lists(SIDE, min_size=n, max_size=n))
    h = data.draw(st.lists(SIDE, min_size=n, max_size=n))
    return np.array([[a, b, a + c, b + d] for a, b, c, d in zip(x, y, w, h)], np.float64).reshape(n, 4)


def _hits(q, sb):
    """Every (box, query) pair whose boxes intersect (closed), by query: what the box index gives."""
    i = [r for t in range(len(q)) for r in range(len(sb)) if ref._meets(q[t], sb[r])]
    j = [t for t in range(len(q)) for r in range(len(sb)) if ref._meets(q[t], sb[r])]
    return np.array(i, np.int64), np.array(j, np.int64)


def _case(data, n):
    sb = _boxes(data, n)
    changed = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=min(3, n)))), np.int64)
    before = _boxes(data, len(changed))
    return sb, changed, before


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 16), st.sampled_from([0.0, 1.0, 3.0, 8.0]), st.data())
def test_near_affected_is_the_oracle(n, gap, data):
    sb, changed, before = _case(data, n)
    q = np.concatenate([sb[changed], before])
    grown = cpt.near_grown(q, gap)
    assert np.array_equal(grown, OBS._grown(q, gap))  # the numpy step's bits
    i, j = _hits(grown, sb)
    aff, was = cpt.near_affected(q, i, j, sb, gap, changed, before)
    want_aff, want_was = ref.near_affected(q.tolist(), sb.tolist(), gap, changed.tolist(), before.tolist())
    assert aff.dtype == np.int64 and aff.tolist() == want_aff
    assert was.tolist() == want_was


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 14), st.sampled_from([0.0, 1.0, 3.0, 8.0]), st.integers(1, 4), st.data())
def test_near_touched_and_near_pairs_are_the_oracle(n, gap, k, data):
    """A near table of random pairs (any pairs: the steps read keys, not how the pairs were found) over
    solid rows spread among page rows; the affected rows' pairs found by run and by key, the halo, and
    the k nearest pairs with an end affected, native kin (random subtree sizes) left out."""
    sb = _boxes(data, n)
    sub = np.cumsum(np.array(data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), np.int64))
    npage = int(sub[-1]) + 1
    subpos = np.full(npage, -1, np.int64)
    subpos[sub] = np.arange(n)
    size = np.array([min(int(v), npage - r) for r, v in
                     enumerate(data.draw(st.lists(st.integers(1, 4), min_size=npage, max_size=npage)))], np.int64)
    pairs = sorted(data.draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(
        lambda p: p[0] < p[1]), max_size=12)))
    na = np.array([sub[a] for a, _ in pairs], np.int64)
    nb = np.array([sub[b] for _, b in pairs], np.int64)
    keys = (na << 32) | nb
    affected = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=4))), np.int64)
    was = cpt.near_grown(sb[affected], gap)
    i, j = _hits(was, sb)
    touch_at, halo, grown = cpt.near_touched(keys, na, nb, sub, subpos, affected, i, j, sb, gap)
    want_at, want_halo = ref.near_touched(na.tolist(), nb.tolist(), sub.tolist(), subpos.tolist(),
                                          affected.tolist(), was.tolist(), sb.tolist(), gap)
    assert touch_at.tolist() == want_at and halo.tolist() == want_halo
    assert np.array_equal(grown, OBS._grown(sb[halo], gap))
    i, j = _hits(grown, sb)
    a, b, g = cpt.near_pairs(sb, sub, size, halo, i, j, affected, gap, k)
    want = ref.near_pairs(sb.tolist(), sub.tolist(), size.tolist(), halo.tolist(), affected.tolist(), gap, k)
    assert list(zip(a.tolist(), b.tolist(), g.tolist())) == want
    assert a.dtype == b.dtype == np.int64 and g.dtype == np.float64


def test_near_steps_leave_boxes_not_finite_to_the_twin_and_refuse_bad_input():
    sb = np.array([[0.0, 0.0, 4.0, 4.0], [5.0, 0.0, 9.0, 4.0], [np.inf, 0.0, np.inf, 4.0]])
    one, i0 = np.array([0], np.int64), np.zeros(0, np.int64)
    assert cpt.near_grown(sb, 2.0) is None
    assert cpt.near_affected(sb[:1], np.array([2]), np.array([0]), sb, 2.0, one, sb[:1]) is None
    assert cpt.near_pairs(sb, np.arange(3), np.ones(3, np.int64), one, np.array([2]), np.array([0]), one, 2.0, 4) is None
    with pytest.raises(ValueError, match=r"near_grown needs \(k, 4\) boxes, got \(1, 3\)"):
        cpt.near_grown(np.zeros((1, 3)), 1.0)
    with pytest.raises(ValueError, match="near_affected needs hi and hj of one length, got 1 and 0"):
        cpt.near_affected(sb[:1], one, i0, sb, 2.0, one, sb[:1])
    with pytest.raises(ValueError, match=r"near_affected needs a box before per changed row \(1\), got 0"):
        cpt.near_affected(sb[:1], i0, i0, sb, 2.0, one, sb[:0])
    with pytest.raises(IndexError, match=r"near_affected: hit \(7, 0\) outside the 3 solid rows and 1 queries"):
        cpt.near_affected(sb[:1], np.array([7]), np.array([0]), sb, 2.0, one, sb[:1])
    with pytest.raises(ValueError, match="near_touched needs a key per pair, got 1 keys for 0 and 0 ends"):
        cpt.near_touched(one, i0, i0, np.arange(3), np.arange(3), one, i0, i0, sb, 2.0)
    with pytest.raises(IndexError, match=r"near_touched: position 5 outside the 3 solid rows"):
        cpt.near_touched(i0, i0, i0, np.arange(3), np.arange(3), np.array([5]), i0, i0, sb, 2.0)
    with pytest.raises(ValueError, match="near_pairs needs a page row per solid box, got 2 for 3"):
        cpt.near_pairs(sb, np.arange(2), np.ones(3, np.int64), one, i0, i0, one, 2.0, 4)
    with pytest.raises(IndexError, match=r"near_pairs: hit \(0, 3\) outside the 3 solid rows and 1 queries"):
        cpt.near_pairs(sb, np.arange(3), np.ones(3, np.int64), one, one, np.array([3]), one, 2.0, 4)
    sb2 = np.array([[0.0, 0.0, 4.0, 4.0], [5.0, 0.0, 9.0, 4.0], [10.0, 0.0, 14.0, 4.0]])
    two = np.array([2], np.int64)
    with pytest.raises(IndexError, match="near_pairs: row 2 outside the 2 subtree sizes"):
        cpt.near_pairs(sb2, np.arange(3), np.ones(2, np.int64), two, np.array([1]), np.array([0]), two, 2.0, 4)


#: The module flags that choose an update's compiled steps (True) or their numpy twins (False).
FLAGS = (("spatialobs.canvas.observe", "NEAR_KERNEL"), ("spatialobs.canvas.observe", "ALIGNED_MERGE_KERNEL"),
         ("spatialobs.canvas.observe", "OVERLAPS_KERNEL"), ("spatialobs.canvas.observe", "INSIDE_KERNEL"),
         ("spatialobs.canvas.observe", "TOUCHES_KERNEL"),
         ("spatialobs.canvas.observe", "REACH_KERNEL"), ("spatialobs.canvas.pagetables", "RECUT_KERNEL"))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(8, 40), st.lists(EDIT, min_size=1, max_size=8))
def test_tables_updated_by_the_compiled_steps_are_the_numpy_twins(seed, n, edits):
    """Edit sequences on one page, twice: the relation tables and observations updated through the
    compiled steps (near, the aligned recut and merge, the painted reach) and through their numpy twins
    are the same after every edit, and the fresh page's."""
    got = []
    for kernel in (True, False):
        old = [getattr(sys.modules[m], f) for m, f in FLAGS]
        for m, f in FLAGS:
            setattr(sys.modules[m], f, kernel)
        try:
            c = page(seed % 7, n)
            observations(c)
            count = [0]
            seen = []
            for o in edits:
                edit(c, o, count)
                obs = observations(c)
                st_ = OBS._page_state(c, c.current_page)
                seen.append((obs, [[[x.tolist() for x in getattr(tb, name)] for name in TABLES]
                                   for tb in st_.tables.values()]))
            if kernel:
                assert_tables_fresh(c)
        finally:
            for (m, f), v in zip(FLAGS, old):
                setattr(sys.modules[m], f, v)
        got.append(seen)
    assert got[0] == got[1]


def _solid_page(data, n):
    """Solid boxes spread among page rows, their rows' boxes, subtree sizes and the row-to-position map."""
    sb = _boxes(data, n)
    sub = np.cumsum(np.array(data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), np.int64))
    npage = int(sub[-1]) + 1
    subpos = np.full(npage, -1, np.int64)
    subpos[sub] = np.arange(n)
    boxes = np.zeros((npage, 4))
    boxes[sub] = sb
    size = np.array([min(int(v), npage - r) for r, v in
                     enumerate(data.draw(st.lists(st.integers(1, 4), min_size=npage, max_size=npage)))], np.int64)
    return sb, sub, subpos, boxes, size


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 14), st.data())
def test_overlaps_found_and_pairs_of_are_the_oracle(n, data):
    """The overlaps of the changed boxes (identical boxes, nested ones, kin) and the pairs of a table
    with an end at the changed rows, found by their hits: the row-by-row oracle's."""
    sb, sub, subpos, boxes, size = _solid_page(data, n)
    changed = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=3))), np.int64)
    i, j = _hits(sb[changed], sb)
    a, b = cpt.overlaps_found(sb, sub, boxes, size, changed, i, j)
    assert list(zip(a.tolist(), b.tolist())) == ref.overlaps_found(sb.tolist(), sub.tolist(), boxes.tolist(),
                                                                   size.tolist(), changed.tolist())
    pairs = sorted(data.draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(
        lambda p: p[0] < p[1]), max_size=12)))
    na = np.array([sub[p] for p, _ in pairs], np.int64)
    nb = np.array([sub[q] for _, q in pairs], np.int64)
    before = _boxes(data, len(changed))
    i, j = _hits(before, sb)
    got = cpt.pairs_of((na << 32) | nb, na, sub, changed, i, j)
    assert got.tolist() == ref.pairs_of(na.tolist(), nb.tolist(), sub.tolist(), subpos.tolist(), changed.tolist(),
                                        before.tolist(), sb.tolist())


def test_overlaps_found_and_pairs_of_refuse_bad_input():
    sb = np.array([[0.0, 0.0, 4.0, 4.0], [2.0, 2.0, 6.0, 6.0]])
    sub, size, one, i0 = np.arange(2), np.ones(2, np.int64), np.array([0], np.int64), np.zeros(0, np.int64)
    assert cpt.overlaps_found(sb, sub, sb, size, one, np.array([1]), np.array([0]))[0].tolist() == [0]
    bad = sb.copy()
    bad[1, 2] = np.nan
    assert cpt.overlaps_found(bad, sub, bad, size, one, np.array([1]), np.array([0])) is None
    with pytest.raises(ValueError, match="overlaps_found needs hi and hj of one length, got 1 and 0"):
        cpt.overlaps_found(sb, sub, sb, size, one, one, i0)
    with pytest.raises(IndexError, match=r"overlaps_found: hit \(5, 0\) outside the 2 solid rows and 1 queries"):
        cpt.overlaps_found(sb, sub, sb, size, one, np.array([5]), np.array([0]))
    with pytest.raises(IndexError, match="overlaps_found: row 1 outside the 1 subtree sizes or 2 boxes"):
        cpt.overlaps_found(sb, sub, sb, size[:1], one, np.array([1]), np.array([0]))
    with pytest.raises(ValueError, match="pairs_of needs a key per pair, got 1 keys for 0 first ends"):
        cpt.pairs_of(one, i0, sub, one, i0, i0)
    with pytest.raises(IndexError, match=r"pairs_of: position 4 outside the 2 solid rows"):
        cpt.pairs_of(i0, i0, sub, np.array([4]), i0, i0)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 14), st.data())
def test_inside_redo_and_inside_found_are_the_oracle(n, data):
    """The rows whose container can differ after some boxes changed (held then, held now, orphans) and
    their tightest containers found again (nested and identical boxes, equal areas, kin): the oracle's."""
    sb, sub, subpos, boxes, size = _solid_page(data, n)
    changed = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=3))), np.int64)
    orphans = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=2))), np.int64)
    inner = sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=n)))
    ci = np.array([sub[p] for p in inner], np.int64)
    co = np.array([sub[data.draw(st.integers(0, n - 1))] for _ in inner], np.int64)
    i, j = _hits(sb[changed], sb)
    redo = cpt.inside_redo(sb, changed, i, j, ci, co, sub, subpos, orphans)
    assert redo.tolist() == ref.inside_redo(sb.tolist(), changed.tolist(), ci.tolist(), co.tolist(), sub.tolist(),
                                            subpos.tolist(), orphans.tolist())
    i, j = _hits(sb[redo], sb)
    got_i, got_o = cpt.inside_found(sb, sub, size, redo, i, j, ci, co)
    assert list(zip(got_i.tolist(), got_o.tolist())) == ref.inside_found(sb.tolist(), sub.tolist(), size.tolist(),
                                                                         redo.tolist(), ci.tolist(), co.tolist())


def test_inside_steps_refuse_bad_input_and_leave_unsorted_tables_to_the_twin():
    sb = np.array([[0.0, 0.0, 10.0, 10.0], [2.0, 2.0, 4.0, 4.0]])
    sub, size, one, i0 = np.arange(2), np.ones(2, np.int64), np.array([0], np.int64), np.zeros(0, np.int64)
    assert cpt.inside_redo(sb, one, np.array([1]), np.array([0]), i0, i0, sub, sub, i0).tolist() == [0, 1]
    got = cpt.inside_found(sb, sub, size, np.array([1]), np.array([0]), np.array([0]), i0, i0)
    assert [x.tolist() for x in got] == [[1], [0]]
    assert cpt.inside_found(sb, sub, size, one, i0, i0, np.array([1, 0]), np.array([0, 0])) is None
    assert cpt.inside_redo(sb, one, i0, i0, np.array([1]), np.array([0]), sub, np.array([0, -1]), i0) is None
    with pytest.raises(ValueError, match="inside_redo needs hi and hj of one length, got 1 and 0"):
        cpt.inside_redo(sb, one, one, i0, i0, i0, sub, sub, i0)
    with pytest.raises(IndexError, match=r"inside_redo: hit \(9, 0\) outside the 2 solid rows and 1 queries"):
        cpt.inside_redo(sb, one, np.array([9]), np.array([0]), i0, i0, sub, sub, i0)
    with pytest.raises(ValueError, match=r"inside_found needs ci and co of one length \(0, 0\) and a page row per solid box \(1 for 2\)"):
        cpt.inside_found(sb, sub[:1], size, one, i0, i0, i0, i0)
    with pytest.raises(IndexError, match="inside_found: position 5 outside the 2 solid rows"):
        cpt.inside_found(sb, sub, size, np.array([5]), i0, i0, i0, i0)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10), st.integers(0, 12), st.sampled_from([0.0, 1.0, 2.5]), st.data())
def test_touches_strips_are_the_oracle(n, m, tol, data):
    """Unbound ends on, near and inside the changed boxes before and after the move (some of moved
    connectors): the pairs that leave (by key) and enter, found in the ends' x strips, are the row-by-row
    oracle's over every end."""
    sb, sub, subpos, boxes, size = _solid_page(data, n)
    changed = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=3))), np.int64)
    before = _boxes(data, len(changed))
    er = np.array(sorted(data.draw(st.lists(st.integers(0, int(sub[-1]) + 3), min_size=m, max_size=m))), np.int64)
    et = np.array(data.draw(st.lists(st.integers(0, 1), min_size=m, max_size=m)), np.int64)
    ex = np.array(data.draw(st.lists(AT, min_size=m, max_size=m)), np.float64)
    ey = np.array(data.draw(st.lists(AT, min_size=m, max_size=m)), np.float64)
    mv = np.array(sorted(data.draw(st.sets(st.sampled_from(er.tolist() or [0]), max_size=2))), np.int64)
    pairs = sorted({(int(er[k]) * 2 + int(et[k]), int(sub[c])) for k in range(m) for c in range(n)
                    if data.draw(st.booleans())})
    keys = np.array([(a << 32) | b for a, b in pairs], np.int64)
    o = np.argsort(ex)
    xs, xp = ex[o], o.astype(np.int64)
    got = cpt.touches_strips(xs, xp, er, et, ex, ey, mv, keys, changed, before, sb, sub, boxes, tol)
    want_drop, want_new = ref.touches_strips(er.tolist(), et.tolist(), ex.tolist(), ey.tolist(), mv.tolist(),
                                             keys.tolist(), changed.tolist(), before.tolist(), sb.tolist(),
                                             sub.tolist(), boxes.tolist(), tol)
    assert sorted(got[0].tolist()) == sorted(want_drop)
    assert sorted(zip(*(x.tolist() for x in got[1:]))) == sorted(want_new)


def test_touches_strips_refuse_bad_input_and_leave_nan_to_the_twin():
    sb = np.array([[0.0, 0.0, 4.0, 4.0]])
    one, i0, f0 = np.array([0], np.int64), np.zeros(0, np.int64), np.zeros(0)
    x = np.array([4.0])
    got = cpt.touches_strips(x, one, np.array([3]), one, x, np.array([2.0]), i0, i0, one, sb, sb, one, sb, 1.0)
    assert [v.tolist() for v in got] == [[], [3], [0], [0]]
    bad = sb.copy()
    bad[0, 1] = np.nan
    assert cpt.touches_strips(x, one, np.array([3]), one, x, x, i0, i0, one, bad, sb, one, sb, 1.0) is None
    with pytest.raises(ValueError, match="touches_strips needs one value per end, got 1 sorted x, 0 positions"):
        cpt.touches_strips(x, i0, one, one, x, x, i0, i0, one, sb, sb, one, sb, 1.0)
    with pytest.raises(ValueError, match=r"touches_strips needs a box before per changed position \(1\), got 0"):
        cpt.touches_strips(f0, i0, i0, i0, f0, f0, i0, i0, one, sb[:0], sb, one, sb, 1.0)
    with pytest.raises(IndexError, match=r"touches_strips: position 3 outside the 1 solid rows"):
        cpt.touches_strips(f0, i0, i0, i0, f0, f0, i0, i0, np.array([3]), sb, sb, one, sb, 1.0)
