"""The derivation's renumbering after an append or a removal (``derive._paint_inserted``,
``_positions_shifted``, ``_rows_renumbered``, ``_positions_removed``): passes per run of inserted or
removed positions, held to the scatters and cumulative sums they replace."""

from __future__ import annotations

import importlib

import numpy as np
from hypothesis import given, settings, strategies as st

D = importlib.import_module("spatialobs.canvas.document.derive")


@st.composite
def subsets(draw, n: int, most: int):
    """A set of positions in ``range(n)``: scattered, or a few runs (a subtree is a run of rows)."""
    if not n:
        return np.zeros(0, np.int64)
    if draw(st.booleans()):
        out = set()
        for _ in range(draw(st.integers(0, 12))):
            a = draw(st.integers(0, n - 1))
            out.update(range(a, min(n, a + draw(st.integers(1, 6)))))
    else:
        out = set(draw(st.lists(st.integers(0, n - 1), max_size=most)))
    return np.array(sorted(out), np.int64)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 80), st.data())
def test_an_append_orders_as_the_scatter(n0, data):
    n = n0 + data.draw(st.integers(1, 20))
    new_at = data.draw(subsets(n, n - n0))
    if len(new_at) != n - n0:  # exactly n - n0 distinct positions for the new rows
        new_at = np.array(sorted(data.draw(st.permutations(list(range(n))))[:n - n0]), np.int64)
    new_at = np.array(data.draw(st.permutations(new_at.tolist())), np.int64)  # in the rows' order
    paint0 = np.array(data.draw(st.permutations(list(range(n0)))), np.int64)
    order0 = np.empty(n0, np.int64)
    order0[paint0] = np.arange(n0)
    want = np.empty(n, np.int64)
    is_new = np.zeros(n, bool)
    is_new[new_at] = True
    want[new_at] = np.arange(n0, n)
    want[~is_new] = paint0
    paint = D._paint_inserted(paint0, new_at, n0)
    assert paint.tolist() == want.tolist()
    order = np.empty(n, np.int64)
    order[paint] = np.arange(n)
    got = D._positions_shifted(order0, new_at)
    runs = len(D._runs_of(np.sort(new_at)))
    if runs > D._FEW_RUNS:
        assert got is None
    else:
        assert got is not None and got.tolist() == order[:n0].tolist()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 120), st.data())
def test_a_removal_renumbers_as_the_cumulative_sum(n, data):
    gone = data.draw(subsets(n, 40))
    kept = np.ones(n, bool)
    kept[gone] = False
    want = np.cumsum(kept) - 1
    want[~kept] = -1
    assert D._rows_renumbered(n, gone).tolist() == want.tolist()
    # positions left after taking ``gone`` out, as the scatter of the remaining order gives them
    pos = np.flatnonzero(kept)
    got = D._positions_removed(pos, gone)
    if len(D._runs_of(gone)) > D._FEW_RUNS:
        assert got is None
    else:
        assert got is not None and got.tolist() == list(range(len(pos)))
        shuffled = np.array(data.draw(st.permutations(pos.tolist())), np.int64)
        again = D._positions_removed(shuffled, gone)
        assert again is not None and again.tolist() == (want[shuffled] if len(shuffled) else shuffled).tolist()


def test_runs_of_sorted_rows():
    assert D._runs_of(np.zeros(0, np.int64)) == []
    assert D._runs_of(np.array([5])) == [(5, 6)]
    assert D._runs_of(np.array([1, 2, 3, 7, 9, 10])) == [(1, 4), (7, 8), (9, 11)]
