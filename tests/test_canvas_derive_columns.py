"""Columns of a first derivation built from codes of few distinct values (sibling ranks, the type column)
against their numpy-string twins, and a small canvas's paint order walked in Python against the sorted one."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, List

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas.document import derive as D

_index = st.one_of(st.sampled_from(["a1", "a2", "a10", "b", "a1\x00", "a\x00b", "", "Zz", "a1 ", "é", "\U0001f600"]),
                   st.text(max_size=4))


@st.composite
def _raws(draw: Any) -> Any:
    n = draw(st.integers(1, 30))
    index: List[str] = [draw(_index) for _ in range(n)]
    ids = [f"n{draw(st.integers(0, 3))}{i}" for i in range(n)]  # unique ids that sort apart from their rows
    pk = np.array([draw(st.integers(-3, 4)) for _ in range(n)], dtype=np.int64)
    return SimpleNamespace(ids=ids, index=index, id_array=None, index_array=None,
                           sort_keys=lambda: (np.array(ids), np.array(index))), pk


@settings(max_examples=500, deadline=None)
@given(_raws())
def test_sibling_ranks_are_the_twins(spec):
    raw, pk = spec
    want = D._ranks_in_groups(np.lexsort(raw.sort_keys() + (pk,)), pk)  # ids, then indices, then groups
    assert D._sibling_rank(raw, pk).tolist() == want.tolist()
    assert D._sibling_rank_strings(raw, pk).tolist() == want.tolist()


@st.composite
def _forests(draw: Any) -> Any:
    """A forest of up to 40 rows on up to 3 pages (each row's parent an earlier row, or none) with
    drawn indices and ids, as the input columns and the parent, page and level columns."""
    n = draw(st.integers(1, 40))
    parent = np.array([draw(st.integers(-1, i - 1)) for i in range(n)], dtype=np.int64)
    page = np.zeros(n, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    for i in range(n):
        if parent[i] >= 0:
            page[i], depth[i] = page[parent[i]], depth[parent[i]] + 1
        else:
            page[i] = draw(st.integers(0, 2))
    index: List[Any] = [draw(_index) for _ in range(n)]
    ids: List[Any] = draw(st.lists(st.one_of(_index, st.text(max_size=3)), min_size=n, max_size=n, unique=True))
    raw = SimpleNamespace(ids=ids, index=index, id_array=None, index_array=None,
                          sort_keys=lambda: (np.array(ids), np.array(index)))
    return raw, parent, page, D._levels(depth)


@settings(max_examples=500, deadline=None)
@given(_forests())
def test_a_small_paint_order_walked_in_python_is_the_sorted_one(spec):
    """The walk of a small canvas's tree gives the paint order the sorts of sibling ranks give,
    or leaves it to them when a key holds a NUL."""
    raw, parent, page, levels = spec
    walked = D._paint_order_small(raw, parent, page)
    was = D.PAINT_WALK_MAX
    D.PAINT_WALK_MAX = 0  # (no fixture: hypothesis runs the examples in one test call)
    try:
        sorted_ = D._paint_order(raw, parent, page, levels)
    finally:
        D.PAINT_WALK_MAX = was
    if any("\x00" in k for k in raw.index + raw.ids):
        assert walked is None
    else:
        assert walked is not None and walked.tolist() == sorted_.tolist()
        assert D._paint_order(raw, parent, page, levels).tolist() == sorted_.tolist()


def test_a_small_paint_order_leaves_keys_that_are_not_str_to_the_sorts():
    parent, page = np.array([-1, 0], dtype=np.int64), np.zeros(2, dtype=np.int64)
    raw = SimpleNamespace(ids=["a", "b"], index=["a1", None], id_array=None, index_array=None)
    assert D._paint_order_small(raw, parent, page) is None
    raw.index = ["a1", "a2"]
    assert D._paint_order_small(raw, parent, page).tolist() == [0, 1]
    # a parent column that is no forest (a cycle no root reaches): left to the sorts
    assert D._paint_order_small(raw, np.array([1, 0], dtype=np.int64), page) is None


def test_codes_are_taken_without_ties_and_strings_with_them(monkeypatch):
    calls: List[int] = []
    monkeypatch.setattr(D, "_sibling_rank_strings", lambda raw, pk: calls.append(1) or np.zeros(len(pk), np.int64))
    pk = np.array([0, 0, 1, 1], dtype=np.int64)
    raw = SimpleNamespace(ids=["d", "c", "b", "a"], index=["a2", "a1", "a1", "a3"], id_array=None, index_array=None)
    assert D._sibling_rank(raw, pk).tolist() == [1, 0, 0, 1] and calls == []
    for index in (["a1", "a1", "a1", "a3"], ["a2", "a1\x00", "a1", "a3"], ["a2", "a1", 3, "a3"]):
        raw.index = index
        D._sibling_rank(raw, pk)
    assert calls == [1, 1, 1]
    raw.index, raw.id_array, raw.index_array = ["a2", "a1", "a1", "a3"], np.array(raw.ids), np.array(raw.index)
    D._sibling_rank(raw, pk)  # string columns an edit carried over
    assert calls == [1, 1, 1, 1]


def test_a_non_str_index_fails_as_the_twin_does():
    pk = np.array([0, 0], dtype=np.int64)
    raw = SimpleNamespace(ids=["a", "b"], index=["a1", None], id_array=None, index_array=None)
    raw.sort_keys = lambda: D.Raw.sort_keys(raw)
    with pytest.raises(TypeError, match="not supported between instances of 'NoneType' and 'str'|'<' not supported"):
        D._sibling_rank(raw, pk)


_types = st.one_of(st.sampled_from(["geo", "arrow", "", "a\x00", "é", "frame-longer-name"]), st.text(max_size=3))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_types, _types, _types, st.sampled_from([None, 3, b"x"])), max_size=80))
def test_type_columns_are_numpys(values):
    # extract's column of node types against np.array of the list itself (dtype, bytes, or the same error)
    try:
        want = np.array(values) if values else np.zeros(0, dtype="<U1")
    except Exception as e:  # pragma: no cover - np.array takes every list drawn here
        with pytest.raises(type(e)):
            D._str_column(values)
        return
    got = D._str_column(values)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes() if want.dtype.kind == "U" else got.tolist() == want.tolist()


def test_many_distinct_types_take_one_array():
    values = [f"t{i}" for i in range(200)]
    got = D._str_column(values)
    assert got.dtype == np.dtype("<U4") and got.tolist() == values


def test_parent_rows_of_extract():
    from spatialobs.canvas.document.records import Node

    nodes = [Node("a", "frame", "page:p"), Node("b", "geo", "a"), Node("c", "geo", "gone"), Node("d", "geo", "b")]
    raw = D.extract(nodes)
    assert raw.parent.tolist() == [-1, 0, -1, 1] and raw.types.tolist() == ["frame", "geo", "geo", "geo"]
    assert D.extract([]).types.dtype == np.dtype("<U1")


_coord = st.sampled_from([0.0, -0.0, 1.0, -2.5, 3.0, 1e300, -1e300, 1e-300, float("inf"), float("-inf"), float("nan"),
                          7.25, -40.0])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_coord, _coord, _coord, _coord, _coord, _coord,
                          st.sampled_from([0.0, -0.0, 0.5, float("nan")])), min_size=1, max_size=D._AABB_FEW + 2))
def test_bounds_of_a_few_upright_rows_on_floats_are_the_numpy_passes_to_the_bit(rows):
    """The axis-aligned boxes of a few local boxes moved (none turned: on Python floats) are the numpy
    passes' to the bit: signed zeros, infinities and NaN (left to the numpy passes), turned rows too."""
    a = np.array(rows, np.float64)
    local, ox, oy, rot = np.ascontiguousarray(a[:, :4]), a[:, 4].copy(), a[:, 5].copy(), a[:, 6].copy()
    with np.errstate(all="ignore"):
        want = D._aabb_numpy(local, ox, oy, rot)
        got = D._aabb(local, ox, oy, rot)
    assert got.dtype == np.float64 and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    fast = D._aabb_upright(local, ox, oy, rot)
    if fast is not None:
        assert fast.tobytes() == want.tobytes()


def test_bounds_of_upright_rows_take_the_float_path_and_turned_ones_the_numpy_passes():
    local, o = np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([5.0])
    assert D._aabb_upright(local, o, o + 1.0, np.array([0.0])).tolist() == [[6.0, 8.0, 8.0, 10.0]]
    assert D._aabb_upright(local, o, o, np.array([0.5])) is None
    assert D._aabb_upright(local - 1.0, o - 5.0, o, np.array([0.0])) is None  # a zero corner
