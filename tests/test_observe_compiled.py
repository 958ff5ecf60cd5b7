"""The compiled connector loops of observe (Cython) against their pure-Python twins."""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import Any, Callable, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas import Canvas, Node
from spatialobs.canvas.document.records import Binding

O = importlib.import_module("spatialobs.canvas.observe")


def _compiled() -> Any:
    return pytest.importorskip("spatialobs.canvas._cobserve")


def _outcome(f: Callable[..., Any], *args: Any) -> Tuple[str, Any]:
    try:
        return ("ok", f(*args))
    except Exception as e:  # both twins must fail alike
        return ("err", type(e))


_scalars = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6), st.just(10**400),
    st.sampled_from(["1.5", " -2 ", "nan", "inf", "1_0", "x", "", "1e999"]), st.booleans(), st.none(),
)
_dicts = st.dictionaries(st.sampled_from(["x", "y", "type"]),
                         st.one_of(_scalars, st.sampled_from(["point", "binding"])), max_size=3)
_points = st.one_of(
    _scalars, _dicts, _dicts.map(MappingProxyType),
    st.lists(_scalars, max_size=3), st.lists(_scalars, max_size=3).map(tuple),
)
_props = st.one_of(
    st.fixed_dictionaries({}, optional={"start": _points, "end": _points}),
    st.fixed_dictionaries({"points": st.one_of(st.lists(_points, max_size=4), _points)},
                          optional={"start": _points, "end": _points}),
)


def test_compiled_loops_are_in_use():
    # The normal build compiles the Cython module; observe must use it.
    co = _compiled()
    assert O._local_ends_c is co.local_ends and O._binding_rows is co.binding_rows


@settings(max_examples=300, deadline=None)
@given(_points)
def test_xy_matches_python_twin(p):
    co = _compiled()
    assert _outcome(co.xy, p) == _outcome(O._xy, p)


@settings(max_examples=200, deadline=None)
@given(_props)
def test_terminal_points_match_python_twin(props):
    co = _compiled()
    node = Node("a", "arrow", "page:page", props=props)
    assert _outcome(co.terminal_points, node) == _outcome(O._terminal_points, node)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_props, st.booleans(), st.booleans()), max_size=12), st.randoms(use_true_random=False))
def test_local_ends_match_python_twin(arrows, rnd):
    co = _compiled()
    # OverflowError (a huge int in a point) propagates from both; keep the rest
    arrows = [a for a in arrows if _outcome(O._terminal_points, Node("a", "arrow", "p", props=a[0]))[0] == "ok"]
    nodes = {f"n{i}": Node(f"n{i}", "arrow", "p", props=a[0]) for i, a in enumerate(arrows)}
    names = ["other"] + list(nodes)
    rows = np.arange(1, len(arrows) + 1, dtype=np.int64)
    conn = np.array(sorted(rnd.sample(range(10 * len(arrows) + 1), len(arrows))), dtype=np.int64)
    bound = np.array([[a[1], a[2]] for a in arrows], dtype=bool).reshape(-1, 2).view(np.uint8)
    memo_c: dict = {}
    memo_py: dict = {}
    got = co.local_ends(nodes, names, rows, conn, bound, memo_c)
    want = O._local_ends_py(nodes, names, rows, conn, bound, memo_py)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w)
    assert {k: v[1:] for k, v in memo_c.items()} == {k: v[1:] for k, v in memo_py.items()}
    assert all(v[0]() is nodes[n] for n in nodes for v in [memo_c[id(nodes[n])]])
    # a second pass reads the memo and gives the same
    again = co.local_ends(nodes, names, rows, conn, bound, memo_c)
    assert all(np.array_equal(a, g) for a, g in zip(again, got))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "zz"]), st.sampled_from(["a", "b", "c", "zz"]),
                          st.sampled_from(["start", "end", "End", ""])), max_size=20))
def test_binding_rows_match_python_twin(specs):
    co = _compiled()
    row_of = {"a": 0, "b": 5, "c": 2}
    blist = [Binding(f"b{i}", "arrow", f, t, term) for i, (f, t, term) in enumerate(specs)]
    got = co.binding_rows(blist, row_of)
    want = O._binding_rows_py(blist, row_of)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def _malformed_canvas() -> Canvas:
    c = Canvas()
    c.add(Node("box", "geo", "page:page", "a1", 100, 100, 80, 60))
    c.add(Node("box2", "geo", "page:page", "a2", 300, 100, 80, 60))
    bad = [{"x": "nan", "y": 0}, {"x": 1}, [3, 4], {"type": "binding", "boundShapeId": "box"}, "12", None]
    for i, p in enumerate(bad):
        c.add(Node(f"ar{i}", "arrow", "page:page", f"b{i}", 90 + 10 * i, 90, 10, 10,
                   props={"start": p, "end": {"x": 10.0, "y": 20.0}}))
    c.add(Node("pts", "arrow", "page:page", "c1", 180, 120, 120, 0, props={"points": [[0, 0], [120, 0]]}))
    c.add(Binding("bd", "arrow", "pts", "box2", "end"))
    return c


@pytest.mark.parametrize("make", [_malformed_canvas, lambda: __import__(
    "spatialobs.canvas.scenarios.handoff", fromlist=["x"]).synthetic_workspace(3000, seed=3)])
def test_first_observation_is_byte_identical_with_python_twins(make, monkeypatch):
    _compiled()
    fast = O.observe(make(), (0, 0, 2800, 1800)).to_json()
    monkeypatch.setattr(O, "_local_ends_c", O._local_ends_py)
    monkeypatch.setattr(O, "_binding_rows", O._binding_rows_py)
    O._TERMINALS.clear()
    slow = O.observe(make(), (0, 0, 2800, 1800)).to_json()
    assert fast == slow


def test_compiled_loops_bad_input():
    co = _compiled()
    with pytest.raises(TypeError, match="nodes"):
        co.local_ends(MappingProxyType({}), [], np.zeros(0, np.int64), np.zeros(0, np.int64),
                      np.zeros((0, 2), np.uint8), {})
    with pytest.raises(ValueError, match="dtype mismatch"):
        co.local_ends({}, [], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 2), np.float64), {})
    with pytest.raises(TypeError, match="blist"):
        co.binding_rows((), {})
    with pytest.raises(AttributeError, match="from_id"):
        co.binding_rows(["not a binding"], {})


@pytest.mark.parametrize("twin", ["compiled", "python"])
def test_local_ends_shape_mismatch(twin):
    f = _compiled().local_ends if twin == "compiled" else O._local_ends_py
    with pytest.raises(ValueError, match=r"one row per connector \(2\)"):
        f({}, [], np.zeros(2, np.int64), np.zeros(2, np.int64), np.zeros((1, 2), np.uint8), {})
    with pytest.raises(ValueError, match="bound two columns"):
        f({}, [], np.zeros(2, np.int64), np.zeros(2, np.int64), np.zeros((2, 3), np.uint8), {})
