"""The sorted relation tables' helpers against naive twins (``tests/reference/pagetables_oracle.py``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from spatialobs.canvas import pagetables as PT

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


@given(PAIRS, st.lists(ROWS, max_size=10, unique=True))
def test_rows_at_finds_every_entry_of_the_rows(pairs, rows):
    a, _ = _table(pairs)
    r = np.array(sorted(rows), dtype=np.int64)
    assert np.array_equal(PT.rows_at(a, r), ref.rows_at(a, r))


@given(PAIRS, st.lists(st.tuples(ROWS, ROWS), max_size=20))
def test_keys_at_finds_the_keys_present_once(pairs, probe):
    a, b = _table(pairs)
    keys = PT.pair_keys(a, b)
    q = PT.pair_keys(np.array([p[0] for p in probe], np.int64), np.array([p[1] for p in probe], np.int64))
    got = PT.keys_at(keys, q)
    assert got.dtype == np.int64
    assert np.array_equal(got, ref.keys_at(keys, q))


@settings(max_examples=300)
@given(PAIRS, st.data())
def test_splice_is_the_sort_of_the_kept_and_new_rows(pairs, data):
    a, b = _table(pairs)
    g = np.arange(len(a), dtype=np.float64) * 0.5  # a float column beside the rows
    keys = PT.pair_keys(a, b)
    drop = np.array(sorted(data.draw(st.sets(st.integers(0, max(len(a) - 1, 0)), max_size=len(a)))), np.int64)
    drop = drop[drop < len(a)]
    kept = {tuple(p) for p in np.stack([a, b], 1)[np.setdiff1d(np.arange(len(a)), drop)].tolist()}
    # new rows: any pairs not kept (a dropped pair may come back), in any order
    new = data.draw(st.lists(st.tuples(ROWS, ROWS).filter(lambda p: p not in kept), max_size=15, unique=True))
    na = np.array([p[0] for p in new], np.int64)
    nb = np.array([p[1] for p in new], np.int64)
    ng = -np.arange(len(new), dtype=np.float64)
    nk = PT.pair_keys(na, nb)
    got, gk = PT.splice((a, b, g), keys, drop, (na, nb, ng), nk)
    want, wk = ref.splice((a, b, g), keys, drop, (na, nb, ng), nk)
    assert np.array_equal(gk, wk) and gk.dtype == wk.dtype
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and np.array_equal(x, y)
        assert not np.shares_memory(x, a) and not np.shares_memory(x, g)  # a new column, never a view


def test_splice_keeps_the_column_types_of_empty_and_whole_tables():
    a = np.array([0, 1], np.int64)
    g = np.array([1.0, 2.0])
    keys = PT.pair_keys(a, a + 1)
    got, k = PT.splice((a, g), keys, np.array([0, 1], np.int64), (np.zeros(0, np.int64), np.zeros(0)), np.zeros(0, np.int64))
    assert [c.dtype for c in got] == [np.int64, np.float64] and len(k) == 0 and all(len(c) == 0 for c in got)
    got, k = PT.splice((a, g), keys, np.zeros(0, np.int64), (np.array([5], np.int64), np.array([3], np.int64)),
                       PT.pair_keys(np.array([5]), np.array([6])))
    assert got[0].tolist() == [0, 1, 5] and got[1].dtype == np.float64 and got[1].tolist() == [1.0, 2.0, 3.0]
