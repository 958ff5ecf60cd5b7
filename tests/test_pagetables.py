"""The sorted relation tables' helpers against naive twins (``tests/reference/pagetables_oracle.py``)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spatialobs.canvas import pagetables as PT

from tests.reference import geometry_oracle as gref
from tests.reference import pagetables_oracle as ref

ROWS = st.integers(0, 40)
PAIRS = st.lists(st.tuples(ROWS, ROWS), max_size=60, unique=True)


def _table(pairs):
    pairs = sorted(pairs)
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    return a, b


@given(PAIRS)
def test_pair_keys_order_as_the_pairs(pairs):
    a, b = _table(pairs)
    k = PT.pair_keys(a, b)
    assert np.array_equal(k, ref.pair_keys(a, b))
    assert k.dtype == np.int64
    assert bool((k[1:] > k[:-1]).all())  # sorted pairs give strictly increasing keys
    big = PT.pair_keys(np.array([2**31 - 1]), np.array([2**31 - 1]))
    assert big[0] == (2**31 - 1) * 2**32 + 2**31 - 1


@given(st.lists(st.tuples(ROWS, ROWS, st.integers(0, 1)), max_size=60, unique=True))
def test_aligned_keys_order_as_the_rows_and_axis_and_give_the_rows_back(rows):
    """The ``aligned`` table's keys: ordered as ``(a, b, axis)``, and the rows read back from them."""
    rows = sorted(rows)
    a, b, axis = (np.array([r[k] for r in rows], dtype=np.int64) for k in range(3))
    k = PT.aligned_keys(a, b, axis)
    assert np.array_equal(k, ref.aligned_keys(a, b, axis)) and k.dtype == np.int64
    assert bool((k[1:] > k[:-1]).all())
    back = PT.aligned_rows(k)
    assert np.array_equal(back[0], a) and np.array_equal(back[1], b)
    top = 2**30 - 1  # the largest row the layout holds in an int64 key
    assert PT.aligned_keys(np.array([top]), np.array([top]), np.array([1]))[0] == top * 2**33 + top * 2 + 1
    assert [v.tolist() for v in PT.aligned_rows(PT.aligned_keys(np.array([top]), np.array([top]), 1))] == [[top], [top]]
    assert PT.aligned_keys(3, 5, 1) == 3 * 2**33 + 11  # ints as arrays


@given(PAIRS, st.lists(ROWS, max_size=10, unique=True))
def test_rows_at_finds_every_entry_of_the_rows(pairs, rows):
    a, _ = _table(pairs)
    r = np.array(sorted(rows), dtype=np.int64)
    assert np.array_equal(PT.rows_at(a, r), ref.rows_at(a, r))


BIG = st.sampled_from([-2**63, -5, -1, 0, 1, 2, 3, 7, 40, 2**62, 2**63 - 1])


@settings(max_examples=300)
@given(st.lists(ROWS | BIG, max_size=80), st.lists(ROWS | BIG, max_size=25), st.booleans())
def test_rows_at_compiled_is_its_twin_for_rows_in_any_order(col, rows, ordered):
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    col = np.sort(np.array(col, dtype=np.int64))
    rows = np.array(sorted(set(rows)) if ordered else rows, dtype=np.int64)
    want = PT._rows_at_py(col, rows)
    got = c.rows_at(col, rows)
    assert got.dtype == np.int64 and got.tolist() == want.tolist()
    assert PT.rows_at(col, rows).tolist() == want.tolist()
    if ordered:
        assert want.tolist() == ref.rows_at(col, rows).tolist()


def test_rows_at_takes_the_twin_for_other_arrays():
    col = np.array([0, 1, 1, 3], np.int64)
    assert PT.rows_at(col.astype(np.int32), np.array([1])).tolist() == [1, 2]
    assert PT.rows_at(col[::-1][::-1], np.array([1, 3])).tolist() == [1, 2, 3]
    assert PT.rows_at(col, [3]).tolist() == [3]


@given(PAIRS, st.lists(st.tuples(ROWS, ROWS), max_size=20))
def test_keys_at_finds_the_keys_present_once(pairs, probe):
    a, b = _table(pairs)
    keys = PT.pair_keys(a, b)
    q = PT.pair_keys(np.array([p[0] for p in probe], np.int64), np.array([p[1] for p in probe], np.int64))
    got = PT.keys_at(keys, q)
    assert got.dtype == np.int64
    assert np.array_equal(got, ref.keys_at(keys, q))


def _drops_and_new(a, b, data):
    """Rows of the table ``(a, b)`` to drop, and new pairs: any not kept (a dropped pair may come
    back), in any order."""
    drop = np.array(sorted(data.draw(st.sets(st.integers(0, max(len(a) - 1, 0)), max_size=len(a)))), np.int64)
    drop = drop[drop < len(a)]
    kept = {tuple(p) for p in np.stack([a, b], 1)[np.setdiff1d(np.arange(len(a)), drop)].tolist()}
    new = data.draw(st.lists(st.tuples(ROWS, ROWS).filter(lambda p: p not in kept), max_size=15, unique=True))
    return drop, np.array([p[0] for p in new], np.int64), np.array([p[1] for p in new], np.int64)


@settings(max_examples=300)
@given(PAIRS, st.data())
def test_splice_is_the_sort_of_the_kept_and_new_rows(pairs, data):
    a, b = _table(pairs)
    g = np.arange(len(a), dtype=np.float64) * 0.5  # a float column beside the rows
    keys = PT.pair_keys(a, b)
    drop, na, nb = _drops_and_new(a, b, data)
    ng = -np.arange(len(na), dtype=np.float64)
    nk = PT.pair_keys(na, nb)
    got, gk = PT.splice((a, b, g), keys, drop, (na, nb, ng), nk)
    want, wk = ref.splice((a, b, g), keys, drop, (na, nb, ng), nk)
    assert np.array_equal(gk, wk) and gk.dtype == wk.dtype
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and np.array_equal(x, y)
        assert not np.shares_memory(x, a) and not np.shares_memory(x, g)  # a new column, never a view


@settings(max_examples=300)
@given(PAIRS, st.data())
def test_splice_compiled_is_its_twin(pairs, data):
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    a, b = _table(pairs)
    g = np.arange(len(a), dtype=np.float64) * 0.5
    flag = (a % 3 == 0)
    keys = PT.pair_keys(a, b)
    drop, na, nb = _drops_and_new(a, b, data)
    o = np.argsort(PT.pair_keys(na, nb), kind="stable")
    na, nb = na[o], nb[o]
    ng, nf = -np.arange(len(na), dtype=np.float64), np.ones(len(na), bool)
    nk = PT.pair_keys(na, nb)
    # every column a view with a stride (the public function copies them contiguous) or not
    wide = data.draw(st.booleans())
    cols = tuple(np.repeat(x, 2)[::2] if wide else x for x in (a, b, g, flag))
    got, gk = PT.splice(cols, keys, drop, (na, nb, ng, nf), nk)
    want, wk = PT._splice_py((a, b, g, flag), keys, drop, (na, nb, ng, nf), nk)
    assert np.array_equal(gk, wk) and gk.dtype == wk.dtype
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    pieces = c.splice_pieces(len(keys), drop, np.searchsorted(keys, nk, "left").astype(np.int64))
    assert (pieces[:, 2] - pieces[:, 1]).sum() == len(keys) - len(drop) + len(nk)


def test_splice_pieces_refuse_columns_they_cannot_copy():
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    pieces = np.array([[1, 0, 2], [0, 0, 1]], np.int64)
    with pytest.raises(ValueError,
                       match=r"cut_pieces needs two 1-D columns of one dtype, got int64 \(3,\) and float64 \(1,\)"):
        c.cut_pieces(np.arange(3), np.zeros(1), pieces)
    with pytest.raises(IndexError, match=r"piece 1 \(0, 2\) is outside its column"):
        c.cut_pieces(np.arange(3), np.zeros(1, np.int64), np.array([[1, 0, 2], [0, 0, 2]], np.int64))
    with pytest.raises(IndexError, match=r"piece 0 \(2, 4\) is outside its column"):
        c.cut_pieces(np.arange(3), np.zeros(1, np.int64), np.array([[1, 2, 4]], np.int64))
    assert c.cut_pieces(np.arange(3), np.array([9]), pieces).tolist() == [0, 1, 9]


def test_splice_keeps_the_column_types_of_empty_and_whole_tables():
    a = np.array([0, 1], np.int64)
    g = np.array([1.0, 2.0])
    keys = PT.pair_keys(a, a + 1)
    got, k = PT.splice((a, g), keys, np.array([0, 1], np.int64), (np.zeros(0, np.int64), np.zeros(0)), np.zeros(0, np.int64))
    assert [c.dtype for c in got] == [np.int64, np.float64] and len(k) == 0 and all(len(c) == 0 for c in got)
    got, k = PT.splice((a, g), keys, np.zeros(0, np.int64), (np.array([5], np.int64), np.array([3], np.int64)),
                       PT.pair_keys(np.array([5]), np.array([6])))
    assert got[0].tolist() == [0, 1, 5] and got[1].dtype == np.float64 and got[1].tolist() == [1.0, 2.0, 3.0]


@settings(max_examples=300)
@given(PAIRS, st.data())
def test_splice_in_place_writes_the_splice_when_the_length_stays(pairs, data):
    a, b = _table(pairs)
    g = np.arange(len(a), dtype=np.float64) * 0.5
    keys = PT.pair_keys(a, b)
    drop = np.array(sorted(data.draw(st.sets(st.integers(0, max(len(a) - 1, 0)), max_size=len(a)))), np.int64)
    drop = drop[drop < len(a)]
    kept = {tuple(p) for p in np.stack([a, b], 1)[np.setdiff1d(np.arange(len(a)), drop)].tolist()}
    same = data.draw(st.booleans())  # as many new rows as dropped ones, or any number
    size = st.just(len(drop)) if same else st.integers(0, 15)
    k = data.draw(size)
    new = data.draw(st.lists(st.tuples(ROWS, ROWS).filter(lambda p: p not in kept), min_size=k, max_size=k, unique=True))
    na = np.array([p[0] for p in new], np.int64)
    nb = np.array([p[1] for p in new], np.int64)
    ng = -np.arange(len(new), dtype=np.float64) - 1.0
    nk = PT.pair_keys(na, nb)
    want, wk = ref.splice((a, b, g), keys, drop, (na, nb, ng), nk)
    cols = (a.copy(), b.copy(), g.copy())
    kc = keys.copy()
    ids = [id(c) for c in cols]
    wrote = PT.splice_in_place(cols, kc, drop, (na, nb, ng), nk)
    assert wrote == (len(new) == len(drop))
    if wrote:
        assert [id(c) for c in cols] == ids
        assert np.array_equal(kc, wk)
        for x, y in zip(cols, want):
            assert x.dtype == y.dtype and np.array_equal(x, y)
    else:  # nothing written
        assert np.array_equal(kc, keys) and np.array_equal(cols[0], a) and np.array_equal(cols[2], g)


@settings(max_examples=300)
@given(PAIRS, st.data())
def test_splice_in_place_compiled_span_is_its_twin(pairs, data):
    """The span merged in one compiled pass writes what the twin's splice of the span writes, in every
    column (int64, float64, bool) and the keys; nothing outside the span changes."""
    pytest.importorskip("spatialobs.canvas._cpagetables")
    a, b = _table(pairs)
    g = np.arange(len(a), dtype=np.float64) * 0.5
    f = a % 2 == 0
    keys = PT.pair_keys(a, b)
    drop = np.array(sorted(data.draw(st.sets(st.integers(0, max(len(a) - 1, 0)), max_size=len(a)))), np.int64)
    drop = drop[drop < len(a)]
    kept = {tuple(p) for p in np.stack([a, b], 1)[np.setdiff1d(np.arange(len(a)), drop)].tolist()}
    new = data.draw(st.lists(st.tuples(ROWS, ROWS).filter(lambda p: p not in kept), min_size=len(drop),
                             max_size=len(drop), unique=True))
    na = np.array([p[0] for p in new], np.int64)
    nb = np.array([p[1] for p in new], np.int64)
    ng = -np.arange(len(new), dtype=np.float64) - 1.0
    nf = np.array([p[0] % 3 == 0 for p in new], bool)
    nk = PT.pair_keys(na, nb)
    out = []
    for kernel in (True, False):
        cols, kc = (a.copy(), b.copy(), g.copy(), f.copy()), keys.copy()
        old = PT.SPAN_KERNEL
        PT.SPAN_KERNEL = kernel
        try:
            assert PT.splice_in_place(cols, kc, drop, (na, nb, ng, nf), nk)
        finally:
            PT.SPAN_KERNEL = old
        out.append([kc.tobytes()] + [c.tobytes() for c in cols] + [str(c.dtype) for c in cols])
    assert out[0] == out[1]
    want, wk = ref.splice((a, b, g, f), keys, drop, (na, nb, ng, nf), nk)
    assert out[0][0] == wk.tobytes()


def test_splice_span_refuses_what_it_cannot_merge():
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    a, keys = np.array([1, 2, 3], np.int64), np.array([10, 20, 30], np.int64)
    with pytest.raises(ValueError, match=r"splice_span needs as many new rows as dropped ones \(1\)"):
        c.splice_span([a], keys, np.array([1], np.int64), [np.array([5, 6], np.int64)], np.array([15, 16], np.int64))
    with pytest.raises(IndexError, match="drop position 3 is outside the 3 rows or out of order"):
        c.splice_span([a], keys, np.array([3], np.int64), [np.array([5], np.int64)], np.array([15], np.int64))
    with pytest.raises(ValueError, match="splice_span column 0 has 3 rows .* dtypes int64 and float64"):
        c.splice_span([a], keys, np.array([1], np.int64), [np.array([5.0])], np.array([15], np.int64))
    assert c.splice_span([a], keys, np.array([0], np.int64), [np.array([9], np.int64)], np.array([25], np.int64)) == (0, 2)
    assert a.tolist() == [2, 9, 3] and keys.tolist() == [20, 25, 30]


def test_splice_in_place_leaves_columns_it_cannot_write():
    a = np.array([0, 1, 2], np.int64)
    keys = PT.pair_keys(a, a + 1)
    new = (np.array([1], np.int64),)
    nk = PT.pair_keys(np.array([1]), np.array([5]))
    ro = a.copy()
    ro.flags.writeable = False
    assert not PT.splice_in_place((ro,), keys.copy(), np.array([1], np.int64), new, nk)
    wide = np.arange(6, dtype=np.int64)
    view = wide[::2]  # not contiguous
    assert not PT.splice_in_place((view,), keys.copy(), np.array([1], np.int64), new, nk)
    part = wide[:3]  # a view of another array
    assert not PT.splice_in_place((part,), keys.copy(), np.array([1], np.int64), new, nk)
    assert wide.tolist() == [0, 1, 2, 3, 4, 5]
    k2 = keys.copy()
    assert PT.splice_in_place((a.copy(),), k2, np.zeros(0, np.int64), (np.zeros(0, np.int64),), np.zeros(0, np.int64))
    assert np.array_equal(k2, keys)


VALUES = st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 3.25, 7.0, -1.0, -2.5, 10.0, 1e9]), min_size=1, max_size=80)


@settings(max_examples=300)
@given(VALUES, st.data(), st.sampled_from([0.0, 0.5, 1.0, 2.0]))
def test_run_bounds_is_the_grown_run(values, data, tol):
    s = np.sort(np.array(values))
    lo = data.draw(st.sampled_from(values + [0.25, 5.0, -100.0, 100.0]))
    hi = data.draw(st.sampled_from([v for v in values + [0.25, 5.0, 100.0] if v >= lo] or [lo]))
    a, b = PT.run_bounds(s, lo, hi, tol)
    assert s[a:b].tolist() == ref.run_values(values, lo, hi, tol)


FLOATS = st.floats(allow_nan=False, allow_infinity=True, width=64) | st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.0])


@settings(max_examples=400, deadline=None)  # a timing check, not the test: a loaded machine ran one case in 294 ms
@given(st.lists(FLOATS, max_size=300), st.data(),
       st.sampled_from([0.0, 0.5, 1.0, 2.0, float("inf"), float("nan"), -1.0]))
def test_run_bounds_compiled_is_its_twin(values, data, tol):
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    s = np.sort(np.array(values, dtype=np.float64))
    bound = FLOATS | st.sampled_from([float("nan"), float("-inf"), float("inf")] + values[:3])
    lo, hi = data.draw(bound), data.draw(bound)
    if hi < lo:
        lo, hi = hi, lo
    with np.errstate(invalid="ignore"):  # (inf - inf in the twin's gaps: NaN, which ends a run in both)
        want = PT._run_bounds_py(s, lo, hi, tol)
    assert c.run_bounds(s, lo, hi, tol) == want
    assert PT.run_bounds(s, lo, hi, tol) == want
    # a long run, past the twin's first chunks, and the public function on what it hands to the twin
    long = np.arange(1000, dtype=np.float64)
    assert c.run_bounds(long, 500.0, 500.0, 1.0) == PT._run_bounds_py(long, 500.0, 500.0, 1.0) == (0, 1000)
    assert PT.run_bounds(long[::2], 100.0, 100.0, 2.0) == PT._run_bounds_py(long[::2], 100.0, 100.0, 2.0) == (0, 500)
    assert PT.run_bounds(long.astype(np.int64), 10, 10, 0) == (10, 11)


def test_run_bounds_compiled_refuses_other_arrays():
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    with pytest.raises(ValueError, match="Buffer dtype mismatch, expected 'const double' but got 'long'"):
        c.run_bounds(np.arange(3), 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="ndarray is not C-contiguous"):
        c.run_bounds(np.arange(6.0)[::2], 0.0, 0.0, 1.0)


def test_run_bounds_scans_past_its_first_chunks():
    s = np.arange(1000, dtype=np.float64)  # one run of 1,000 values 1 apart: every chunk is scanned
    assert PT.run_bounds(s, 500.0, 500.0, 1.0) == (0, 1000)
    assert PT.run_bounds(s, 500.0, 500.0, 0.5) == (500, 501)
    s[100] = -5.0
    s.sort()
    assert PT.run_bounds(s, 500.0, 500.0, 1.0) == (101, 1000)  # -5, 0..99, then a gap of 2 to 101


@settings(max_examples=300)
@given(VALUES, st.data())
def test_move_value_keeps_the_values_sorted_with_their_positions(values, data):
    v = np.array(values)
    s, pos = PT.sorted_lines(v)
    assert pos.dtype == np.int64 and np.array_equal(s, np.sort(v)) and np.array_equal(v[pos], s)
    for _ in range(data.draw(st.integers(1, 5))):
        p = data.draw(st.integers(0, len(v) - 1))
        new = data.draw(st.sampled_from(values + [4.0, -3.0, 1e10]))
        PT.move_value(s, pos, p, float(v[p]), new)
        v[p] = new
        assert np.array_equal(s, np.sort(v)) and np.array_equal(v[pos], s)
        assert np.array_equal(np.sort(pos), np.arange(len(v)))


@settings(max_examples=200)
@given(VALUES, st.data())
def test_move_values_moves_each_changed_value(values, data):
    v = np.array(values)
    s, pos = PT.sorted_lines(v)
    changed = np.array(sorted(data.draw(st.sets(st.integers(0, len(v) - 1), max_size=4))), np.int64)
    new = np.array(data.draw(st.lists(st.sampled_from(values + [4.0, -3.0]), min_size=len(changed),
                                      max_size=len(changed))), np.float64)
    PT.move_values((s, pos), changed, v[changed], new)
    v[changed] = new
    assert np.array_equal(s, np.sort(v)) and np.array_equal(v[pos], s)
    with pytest.raises(ValueError, match="has no line value"):
        PT.move_values((s, pos), np.array([0]), np.array([1e300]), np.array([0.0]))


def test_move_value_refuses_a_value_the_position_does_not_have():
    s, pos = PT.sorted_lines(np.array([1.0, 2.0, 2.0]))
    with pytest.raises(ValueError, match="position 0 has no line value 2.0"):
        PT.move_value(s, pos, 0, 2.0, 5.0)
    assert s.tolist() == [1.0, 2.0, 2.0]  # left as it was


@settings(max_examples=300)
@given(st.lists(st.integers(-1, 30), min_size=1, max_size=40), PAIRS, st.booleans(), st.data())
def test_renumber_pairs_compiled_is_its_twin_and_the_keys_of_the_kept_pairs(omap, pairs, aligned, data):
    omap = np.array(omap + [-1], np.int64)
    pairs = [(x % (len(omap) - 1), y % (len(omap) - 1)) for x, y in pairs]
    a = np.array([p[0] for p in pairs], np.int64)
    b = np.array([p[1] for p in pairs], np.int64)
    bits = np.array(data.draw(st.lists(st.integers(0, 63), min_size=len(a), max_size=len(a))), np.int64) if aligned \
        else np.zeros(0, np.int64)
    sa, sb_ = (33, 1) if aligned else (32, 0)
    want = PT._renumber_pairs_py(omap, a, b, bits, sa, sb_)
    got = PT.renumber_pairs(omap, a, b, bits, sa, sb_)
    assert np.array_equal(got[0], omap[a]) and np.array_equal(got[1], omap[b])
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]) and got[2] == want[2]
    kept = [(int(omap[x]), int(omap[y]), i) for i, (x, y) in enumerate(pairs) if omap[x] >= 0 and omap[y] >= 0]
    keys = [(x << sa) | (y << sb_) | (int(bits[i] & 7 == 0) if aligned else 0) for x, y, i in kept]
    assert got[2] == len(kept)
    if all(k2 > k1 for k1, k2 in zip(keys, keys[1:])):
        assert got[3] is not None and want[3] is not None
        assert got[3].tolist() == want[3].tolist() == keys
    else:
        assert got[3] is None and want[3] is None


@pytest.mark.parametrize("fn", ["compiled", "twin"])
def test_renumber_pairs_refuses_rows_outside_the_map_and_ragged_columns(fn):
    if fn == "compiled":
        f = pytest.importorskip("spatialobs.canvas._cpagetables").renumber_pairs
    else:
        f = PT._renumber_pairs_py
    omap = np.array([1, 0, -1], np.int64)
    none = np.zeros(0, np.int64)
    with pytest.raises(IndexError, match=r"pair 1 \(0, 3\) is outside the row map of 3 slots"):
        f(omap, np.array([0, 0]), np.array([1, 3]), none, 32, 0)
    with pytest.raises(IndexError, match=r"pair 0 \(-1, 0\) is outside the row map of 3 slots"):
        f(omap, np.array([-1]), np.array([0]), none, 32, 0)
    with pytest.raises(ValueError, match="renumber_pairs needs columns of one length, got 2, 1 and 0"):
        f(omap, np.array([0, 1]), np.array([1]), none, 32, 0)
    with pytest.raises(ValueError, match="renumber_pairs needs columns of one length, got 1, 1 and 2"):
        f(omap, np.array([0]), np.array([1]), np.zeros(2, np.int64), 33, 1)
    with pytest.raises(ValueError, match=r"renumber_pairs needs shifts in \[0, 63\), got 64 and 0"):
        f(omap, np.array([0]), np.array([1]), none, 64, 0)


def test_without_the_compiled_module_the_twins_answer(monkeypatch):
    a = np.array([0, 0, 2, 3], np.int64)
    b = np.array([1, 3, 3, 4], np.int64)
    keys = PT.pair_keys(a, b)
    omap = np.array([0, 2, -1, 3, 4, -1], np.int64)
    s = np.array([0.0, 1.0, 1.5, 4.0, 4.5])
    args = ((a, b), keys, np.array([1], np.int64), (np.array([1]), np.array([2])),
            PT.pair_keys(np.array([1]), np.array([2])))
    none = np.zeros(0, np.int64)
    with_c = (PT.splice(*args), PT.renumber_pairs(omap, a, b, none, 32, 0), PT.run_bounds(s, 1.0, 1.0, 0.5))
    monkeypatch.setattr(PT, "_cpt", None)
    monkeypatch.setattr(PT, "_run_bounds_c", None)
    (cols, k), (ra, rb, kept, rk), run = with_c
    (cols2, k2), (ra2, rb2, kept2, rk2), run2 = (PT.splice(*args), PT.renumber_pairs(omap, a, b, none, 32, 0),
                                                 PT.run_bounds(s, 1.0, 1.0, 0.5))
    assert [c.tolist() for c in cols] == [c.tolist() for c in cols2] == [[0, 1, 2, 3], [1, 2, 3, 4]]
    assert k.tolist() == k2.tolist()
    assert ra.tolist() == ra2.tolist() == [0, 0, -1, 3] and rb.tolist() == rb2.tolist() == [2, 3, 3, 4]
    assert kept == kept2 == 3 and rk is not None and rk2 is not None  # (0, 2), (0, 3), (3, 4): increasing
    assert rk.tolist() == rk2.tolist() == [2, 3, (3 << 32) | 4]
    assert run == run2 == (1, 3)


# --------------------------------------------------------------------------- recut_lines
COORD = st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0, 2.5, 4.0, 10.0, -3.0])
SPAN = st.sampled_from([0.0, 1.0, 2.0, 3.0, 6.0])


def _line_values(boxes, kind):
    return [lambda b: b[:, 0], lambda b: (b[:, 0] + b[:, 2]) * 0.5, lambda b: b[:, 2],
            lambda b: b[:, 1], lambda b: (b[:, 1] + b[:, 3]) * 0.5, lambda b: b[:, 3]][kind](boxes)


def _boxes(draw, n):
    x0 = np.array(draw(st.lists(COORD, min_size=n, max_size=n)))
    y0 = np.array(draw(st.lists(COORD, min_size=n, max_size=n)))
    w = np.array(draw(st.lists(SPAN, min_size=n, max_size=n)))
    h = np.array(draw(st.lists(SPAN, min_size=n, max_size=n)))
    return np.column_stack([x0, y0, x0 + w, y0 + h])


def _recut_case(data, n):
    """Boxes before and after moving a few of them, the solid rows, their parents and a kind's sorted lines."""
    before = _boxes(data.draw, n)
    changed = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=min(4, n)))), np.int64)
    after = before.copy()
    after[changed] = _boxes(data.draw, len(changed))
    rows = np.cumsum(np.array(data.draw(st.lists(st.integers(1, 2), min_size=n, max_size=n)), np.int64))
    parent = np.array(data.draw(st.lists(st.integers(-1, 1), min_size=int(rows[-1]) + 1,
                                         max_size=int(rows[-1]) + 1)), np.int64)
    return before, after, changed, rows, parent


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 60), st.sampled_from([0.0, 0.5, 1.0, 2.5]), st.integers(0, 5), st.data())
def test_recut_lines_compiled_is_its_twin_and_cuts_lines_as_the_oracle(n, tol, kind, data):
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    before, after, changed, rows, parent = _recut_case(data, n)
    c_old, c_new = (np.ascontiguousarray(_line_values(b[changed], kind)) for b in (before, after))
    one = len(changed) == 1
    twin = PT.sorted_lines(_line_values(before, kind))
    comp = (twin[0].copy(), twin[1].copy())
    cut_t, keys_t = PT._recut_lines_py(twin, changed, c_old, c_new, tol, one, after, rows, parent, kind)
    cut_c, keys_c = c.recut_lines(comp[0], comp[1], changed, c_old, c_new, tol, one, after, rows, parent, kind)
    # the same values moved the same way, the same rows cut again, the same pairs
    assert np.array_equal(comp[0], twin[0]) and np.array_equal(comp[1], twin[1])
    assert np.array_equal(twin[0], np.sort(_line_values(after, kind)))
    assert np.array_equal(_line_values(after, kind)[twin[1]], twin[0])
    assert cut_c.dtype == keys_c.dtype == np.int64
    assert cut_c.tolist() == cut_t.tolist() and sorted(keys_c.tolist()) == sorted(keys_t.tolist())
    # the rows cut again lie in the oracle's runs (those each new value joins, and those each old value
    # left, grown again among the values now), and are those runs unless one box moved; they hold the
    # moved boxes. One box moved: only the lines that differ are cut again, and the pairs kept (those not
    # among rows cut again) with the pairs found are the oracle's pairs of the boxes now
    v_then, v_now = _line_values(before, kind).tolist(), _line_values(after, kind).tolist()
    spans = [ref.run_values(v_now, x, x, tol) for x in c_new.tolist()]
    for x0, x1 in zip(c_old.tolist(), c_new.tolist()):
        if x0 != x1:
            run = ref.run_values(v_then, x0, x0, tol)
            spans.append(ref.run_values(v_now, min(run), max(run), tol))
    want_cut = sorted({int(rows[q]) for q, v in enumerate(v_now) for sp in spans if sp and min(sp) <= v <= max(sp)})
    assert set(cut_c.tolist()) <= set(want_cut)
    if not one:
        assert cut_c.tolist() == want_cut
    assert set(rows[changed].tolist()) <= set(cut_c.tolist())

    def kind_keys(boxes):
        pairs, kinds = gref.alignment_pairs([tuple(b) for b in boxes], tol)
        return {(int(rows[i]) << 33) | (int(rows[j]) << 1) | int(kind >= 3)
                for (i, j), k in zip(pairs, kinds) if k == kind and parent[rows[i]] == parent[rows[j]]}

    cut_set = set(cut_c.tolist())
    kept = {k for k in kind_keys(before) if not ((k >> 33) in cut_set and ((k >> 1) & (2**32 - 1)) in cut_set)}
    found = set(keys_c.tolist())
    assert len(found) == len(keys_c) and all((k >> 33) in cut_set and ((k >> 1) & (2**32 - 1)) in cut_set for k in found)
    assert kept | found == kind_keys(after) and not kept & found


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 1.25]), min_size=2, max_size=30), st.integers(0, 29),
       st.sampled_from([-2.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.75, 1.5]), st.integers(0, 5), st.data())
def test_recut_lines_of_one_box_moved_along_a_chain_of_lines(gaps, which, dx, kind, data):
    """Boxes whose line values form one long run of lines (gaps at most the tolerance, 1): one box moved
    shifts where the greedy cut starts its lines, so lines after it can differ as well; what is cut
    again, with the pairs kept, gives the oracle's pairs of the boxes now (compiled and twin alike)."""
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    n, tol = len(gaps), 1.0
    v = np.cumsum(gaps)
    other = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, 3.0]), min_size=n, max_size=n)))
    if kind < 3:  # line values along x (left, centre or right): the box's width 2
        x0 = v - (0.0, 1.0, 2.0)[kind]
        before = np.column_stack([x0, other, x0 + 2.0, other + 1.0])
    else:
        y0 = v - (0.0, 1.0, 2.0)[kind - 3]
        before = np.column_stack([other, y0, other + 1.0, y0 + 2.0])
    p = which % n
    after = before.copy()
    after[p, [kind // 3 * 1, kind // 3 * 1 + 2]] += dx
    rows = np.arange(n, dtype=np.int64)
    parent = np.array(data.draw(st.lists(st.integers(-1, 0), min_size=n, max_size=n)), np.int64)
    changed = np.array([p], np.int64)
    c_old, c_new = (np.ascontiguousarray(_line_values(b[changed], kind)) for b in (before, after))
    twin = PT.sorted_lines(_line_values(before, kind))
    comp = (twin[0].copy(), twin[1].copy())
    cut_t, keys_t = PT._recut_lines_py(twin, changed, c_old, c_new, tol, True, after, rows, parent, kind)
    cut_c, keys_c = c.recut_lines(comp[0], comp[1], changed, c_old, c_new, tol, True, after, rows, parent, kind)
    assert cut_c.tolist() == cut_t.tolist() and sorted(keys_c.tolist()) == sorted(keys_t.tolist())

    def kind_keys(boxes):
        pairs, kinds = gref.alignment_pairs([tuple(b) for b in boxes], tol)
        return {(i << 33) | (j << 1) | int(kind >= 3) for (i, j), k in zip(pairs, kinds)
                if k == kind and parent[i] == parent[j]}

    cut_set = set(cut_c.tolist())
    kept = {k for k in kind_keys(before) if not ((k >> 33) in cut_set and ((k >> 1) & (2**32 - 1)) in cut_set)}
    assert kept | set(keys_c.tolist()) == kind_keys(after)
    assert p in cut_set


def test_recut_lines_sorts_long_lines_by_their_centres():
    """A pile of 40 boxes on one left edge: one line longer than the compiled pass's insertion sort takes."""
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    n = 40
    y = np.array([(7 * i) % n for i in range(n)], np.float64)
    before = np.column_stack([np.zeros(n), y, np.full(n, 5.0), y + 1.0])
    after = before.copy()
    after[3, [0, 2]] = [0.5, 5.5]
    rows, parent = np.arange(n, dtype=np.int64), np.zeros(n, np.int64)
    for f in (c.recut_lines, None):
        s, pos = PT.sorted_lines(before[:, 0])
        args = (np.array([3]), np.array([0.0]), np.array([0.5]), 1.0, True, after, rows, parent, 0)
        cut, keys = f(s, pos, *args) if f is not None else PT._recut_lines_py((s, pos), *args)
        assert cut.tolist() == list(range(n))
        order = np.argsort(y, kind="stable")  # the line along its centres
        want = sorted((int(min(a, b)) << 33) | (int(max(a, b)) << 1) for a, b in zip(order, order[1:]))
        assert sorted(keys.tolist()) == want


@pytest.mark.parametrize("fn", ["compiled", "twin"])
def test_recut_lines_refuses_a_value_the_position_does_not_have(fn):
    s, pos = PT.sorted_lines(np.array([1.0, 2.0, 2.0]))
    boxes = np.array([[1.0, 0, 1, 0], [2.0, 0, 2, 0], [2.0, 0, 2, 0]])
    rows, parent = np.arange(3, dtype=np.int64), np.zeros(3, np.int64)
    args = (np.array([0]), np.array([2.0]), np.array([5.0]), 0.0, True, boxes, rows, parent, 0)
    with pytest.raises(ValueError, match="position 0 has no line value 2.0"):
        if fn == "compiled":
            pytest.importorskip("spatialobs.canvas._cpagetables").recut_lines(s, pos, *args)
        else:
            PT._recut_lines_py((s, pos), *args)


def test_recut_lines_compiled_refuses_ragged_columns_and_unknown_kinds():
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    s, pos = PT.sorted_lines(np.array([1.0, 2.0]))
    boxes = np.array([[1.0, 0, 1, 0], [2.0, 0, 2, 0]])
    rows, parent = np.arange(2, dtype=np.int64), np.zeros(2, np.int64)
    ch, v = np.array([0]), np.array([1.0])
    with pytest.raises(ValueError, match="recut_lines needs one position per value, got 1 for 2"):
        c.recut_lines(s, pos[:1].copy(), ch, v, v, 0.0, True, boxes, rows, parent, 0)
    with pytest.raises(ValueError, match=r"an old and a new value per changed position \(1\), got 2 and 1"):
        c.recut_lines(s, pos, ch, np.array([1.0, 2.0]), v, 0.0, True, boxes, rows, parent, 0)
    with pytest.raises(ValueError, match=r"a \(k, 4\) box per solid position and a row each, got boxes \(2, 4\) and 1 rows"):
        c.recut_lines(s, pos, ch, v, v, 0.0, True, boxes, rows[:1].copy(), parent, 0)
    with pytest.raises(ValueError, match="alignment kind must be 0..5, got 6"):
        c.recut_lines(s, pos, ch, v, v, 0.0, True, boxes, rows, parent, 6)
    with pytest.raises(IndexError, match="line position 5 is outside the 2 solid boxes"):
        c.recut_lines(s, np.array([0, 5]), ch, v, v, 10.0, True, boxes, rows, parent, 0)
    with pytest.raises(IndexError, match="row 9 is outside the 2 parents"):
        c.recut_lines(s, pos, ch, v, v, 10.0, True, boxes, np.array([0, 9]), parent, 0)


def test_recut_lines_gives_the_twin_without_the_kernel(monkeypatch):
    before = np.array([[0.0, 0, 1, 1], [0.0, 2, 1, 3], [4.0, 0, 5, 1]])
    after = before.copy()
    after[2, [0, 2]] = [0.0, 1.0]
    rows, parent = np.array([1, 2, 4], np.int64), np.zeros(5, np.int64)
    got = []
    for on in (True, False):
        monkeypatch.setattr(PT, "RECUT_KERNEL", on)
        called = []
        monkeypatch.setattr(PT, "_recut_lines_py", lambda *a, f=PT._recut_lines_py: called.append(1) or f(*a))
        line = PT.sorted_lines(before[:, 0])
        cut, keys = PT.recut_lines(line, np.array([2]), np.array([4.0]), np.array([0.0]), 0.5, True, after, rows, parent, 0)
        got.append((cut.tolist(), sorted(keys.tolist())))
        assert bool(called) == (not on or PT._cpt is None)
    # one line x = 0 along the centres 0.5 (rows 1 and 4) and 2.5 (row 2)
    assert got[0] == got[1] == ([1, 2, 4], sorted([(1 << 33) | (4 << 1), (2 << 33) | (4 << 1)]))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.sampled_from([0.0, 0.5, 1.0, 2.5]), st.data())
def test_recut_kinds_in_one_call_is_the_six_recuts_merged_and_the_oracles_pairs(n, tol, data):
    """The six kinds cut again in one compiled call: the rows cut again with their kinds' bits and the new
    pairs with theirs are what six recut_lines calls give merged (compiled or numpy alike), the values
    moved the same way; per kind, the pairs kept with those found are the oracle's pairs now."""
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    before, after, changed, rows, parent = _recut_case(data, n)
    one = len(changed) == 1
    base = [PT.sorted_lines(_line_values(before, kind)) for kind in range(6)]
    runs = {}
    for name, kernel in (("compiled", True), ("twin", True), ("numpy", False)):
        lines = [(v.copy(), p.copy()) for v, p in base]
        old, PT.RECUT_KERNEL = PT.RECUT_KERNEL, kernel
        try:
            f = PT._recut_kinds_py if name != "compiled" else c.recut_kinds  # (the compiled call itself)
            got = f(lines, changed, before[changed], after[changed], tol, one, after, rows, parent)
        finally:
            PT.RECUT_KERNEL = old
        assert all(x.dtype == np.int64 for x in got)
        runs[name] = (got, lines)
    (cr, cb, ck, kb), lines = runs["compiled"]
    for name in ("twin", "numpy"):
        (tr, tb, tk, tkb), tl = runs[name]
        assert cr.tolist() == tr.tolist() and cb.tolist() == tb.tolist()
        assert sorted(zip(kb.tolist(), ck.tolist())) == sorted(zip(tkb.tolist(), tk.tolist()))
        assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(lines, tl))
    assert ck.tolist() == runs["twin"][0][2].tolist()  # (kind by kind, each in recut_lines' order)
    assert cr.tolist() == sorted(set(cr.tolist())) and set(rows[changed].tolist()) <= set(cr.tolist())
    bits_of = dict(zip(cr.tolist(), cb.tolist()))
    for kind in range(6):
        assert np.array_equal(lines[kind][0], np.sort(_line_values(after, kind)))

        def kind_keys(boxes):
            pairs, kinds = gref.alignment_pairs([tuple(b) for b in boxes], tol)
            return {(int(rows[i]) << 33) | (int(rows[j]) << 1) | int(kind >= 3)
                    for (i, j), k in zip(pairs, kinds) if k == kind and parent[rows[i]] == parent[rows[j]]}

        def cut(r):
            return bool(bits_of.get(r, 0) >> kind & 1)
        kept = {k for k in kind_keys(before) if not (cut(k >> 33) and cut((k >> 1) & (2**32 - 1)))}
        found = {k for k, b in zip(ck.tolist(), kb.tolist()) if b == 1 << kind}
        assert kept | found == kind_keys(after) and not kept & found


def test_recut_kinds_refuses_other_than_six_kinds_or_boxes_that_disagree():
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    boxes = np.array([[0.0, 0.0, 1.0, 1.0], [3.0, 0.0, 4.0, 1.0]])
    lines = [PT.sorted_lines(_line_values(boxes, kind)) for kind in range(6)]
    changed, rows, parent = np.array([0], np.int64), np.array([0, 1], np.int64), np.array([-1, -1], np.int64)
    for f in (PT.recut_kinds, PT._recut_kinds_py, c.recut_kinds):
        with pytest.raises(ValueError, match="recut_kinds needs the lines of the six kinds, got 5"):
            f(lines[:5], changed, boxes[:1], boxes[:1], 0.5, True, boxes, rows, parent)
        with pytest.raises(ValueError, match=r"recut_kinds needs a box before and after per changed position \(1\)"):
            f(lines, changed, boxes, boxes[:1], 0.5, True, boxes, rows, parent)


@settings(max_examples=400, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7), st.integers(0, 1)), max_size=20), st.data())
def test_aligned_merge_compiled_is_its_twin_and_the_oracle(pairs, data):
    """The aligned table's pairs of rows cut again, their kind bits kept and the new ones merged: the
    compiled pass and its numpy twin give the same drops, rewrites and new pairs, and applied to the
    table they give the oracle's table."""
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    OBS = sys.modules["spatialobs.canvas.observe"]
    rows = sorted(pairs, key=lambda p: (p[0] << 33) | (p[1] << 1) | p[2])
    aa = np.array([p[0] for p in rows], np.int64)
    ab = np.array([p[1] for p in rows], np.int64)
    am = np.array(data.draw(st.lists(st.integers(1, 63), min_size=len(rows), max_size=len(rows))), np.int64)
    keys = (aa << 33) | (ab << 1) | np.array([p[2] for p in rows], np.int64)
    cut_rows = np.array(sorted(data.draw(st.sets(st.integers(0, 7), max_size=6))), np.int64)
    cut_bits = np.array(data.draw(st.lists(st.integers(1, 63), min_size=len(cut_rows), max_size=len(cut_rows))),
                        np.int64)
    cr = cut_rows.tolist()  # (a new pair's rows were both cut again)
    new = data.draw(st.lists(st.tuples(st.sampled_from(cr), st.sampled_from(cr), st.integers(0, 1),
                                       st.integers(1, 63)), max_size=8)) if cr else []
    nk = np.array([(a << 33) | (b << 1) | x for a, b, x, _ in new], np.int64)
    nb = np.array([m for *_, m in new], np.int64)
    got = c.aligned_merge(aa, ab, am, keys, cut_rows, cut_bits, nk, nb)
    twin = OBS._aligned_merge_py(aa, ab, am, keys, cut_rows, cut_bits, nk, nb)
    assert [x.tolist() for x in got] == [x.tolist() for x in twin]
    assert all(x.dtype == np.int64 for x in got)
    drop, rw_at, rw_bits, nk2, nb2 = (x.tolist() for x in got)
    table = dict(zip(keys.tolist(), am.tolist()))
    for p, m in zip(rw_at, rw_bits):
        table[int(keys[p])] = m
    for p in drop:
        del table[int(keys[p])]
    assert not set(nk2) & set(table) and nk2 == sorted(nk2)
    table.update(zip(nk2, nb2))
    assert table == ref.aligned_merged(aa.tolist(), ab.tolist(), am.tolist(), keys.tolist(), cut_rows.tolist(),
                                       cut_bits.tolist(), nk.tolist(), nb.tolist())


def test_aligned_merge_refuses_columns_that_disagree_or_unsorted_keys():
    c = pytest.importorskip("spatialobs.canvas._cpagetables")
    one, two, i0 = np.array([1], np.int64), np.array([1, 2], np.int64), np.zeros(0, np.int64)
    with pytest.raises(ValueError, match="aligned_merge needs a key per pair, got 2 keys for 1, 1 and 1 rows"):
        c.aligned_merge(one, one, one, two, i0, i0, i0, i0)
    with pytest.raises(ValueError, match="aligned_merge needs bits per row and per new key, got 0 for 1 and 0 for 0"):
        c.aligned_merge(one, one, one, one, one, i0, i0, i0)
    with pytest.raises(ValueError, match="aligned_merge needs the table's keys sorted along its first column"):
        c.aligned_merge(np.array([1, 1], np.int64), two, two, np.array([9, 3], np.int64), one, one, i0, i0)
