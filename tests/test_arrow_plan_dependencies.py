"""The arrow plan's dependencies ordered by target row: built, merged and searched as the mask
over every dependency finds them."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas.document import arrows as A

ROWS = st.integers(0, 40)
PAIRS = st.lists(st.tuples(ROWS, ROWS), max_size=60)


def _cols(pairs):
    return (np.array([t for t, _ in pairs], np.int64), np.array([a for _, a in pairs], np.int64))


@settings(max_examples=200, deadline=None)
@given(PAIRS, PAIRS, st.sets(ROWS, max_size=12))
def test_merged_dependencies_are_ordered_and_searched_like_the_mask(old, new, targets):
    dt, da = A._by_target(*_cols(old))
    assert (np.diff(dt) >= 0).all()
    assert sorted(zip(dt.tolist(), da.tolist())) == sorted(old)
    # stable: the arrows of one target keep the order they were listed in
    for t in set(dt.tolist()):
        assert da[dt == t].tolist() == [a for q, a in old if q == t]
    mt, ma = A._merged(dt, da, *_cols(new))
    assert (np.diff(mt) >= 0).all()
    assert sorted(zip(mt.tolist(), ma.tolist())) == sorted(old + new)
    for t in set(mt.tolist()):  # a new dependency comes after the kept ones of its target
        assert ma[mt == t].tolist() == [a for q, a in old if q == t] + [a for q, a in new if q == t]
    rows = np.array(sorted(targets), np.int64)
    mask = np.zeros(41, bool)
    mask[rows] = True
    assert A._bound_to(mt, ma, rows).tolist() == ma[mask[mt]].tolist()


def test_with_dependencies_merges_the_arrows_bindings_by_target():
    class B:
        def __init__(self, to_id: str) -> None:
            self.to_id = to_id

    row = {"a": 0, "b": 5, "c": 9}
    dt, da = np.array([1, 5, 9], np.int64), np.array([10, 11, 12], np.int64)
    by_arrow = {20: {"start": B("c"), "end": B("a")}, 21: {}}
    t, a = A._with_dependencies(dt, da, [20, 21, 22], by_arrow, row)
    assert t.tolist() == [0, 1, 5, 9, 9] and a.tolist() == [20, 10, 11, 12, 20]
    t, a = A._with_dependencies(dt, da, [21], by_arrow, row)
    assert t is dt and a is da
