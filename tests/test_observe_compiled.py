"""The compiled loops of observe (Cython) against their pure-Python twins: connector records -> columns, columns -> records."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
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
    assert O._object_records is co.object_records and O._relation_records is co.relation_records


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


# -- object and relation records (every observation's last stage)
_texts = st.one_of(st.none(), st.just(""), st.text(max_size=90), st.sampled_from([" a \n\t b ", "x" * 81, "é" * 80, "\u2028 z"]),
                   st.integers(-5, 5), st.floats(allow_nan=True), st.booleans())
_style_values = st.one_of(st.none(), st.text(max_size=6), st.integers(-10**20, 10**20), st.booleans(),
                          st.floats(allow_nan=True, allow_infinity=True), st.lists(st.integers(), max_size=2),
                          st.sampled_from([MappingProxyType({}), 2**70]))
_styles = st.fixed_dictionaries({}, optional={"color": _style_values, "fill": _style_values, "dash": _style_values})


@st.composite
def _record_columns(draw: Any) -> Tuple[Any, ...]:
    k = draw(st.integers(0, 12))
    nodes = {f"n{i}": SimpleNamespace(type=draw(st.sampled_from(["geo", "frame", "arrow", "note"])), text=draw(_texts),
                                      name=draw(_texts), style=draw(_styles)) for i in range(k)}
    names = ["other"] + list(nodes)
    crow = np.array(draw(st.permutations(range(1, k + 1))), dtype=np.int64)
    ref = st.integers(-1, k)
    ints = np.array([[draw(st.integers(0, 10**6)), draw(st.integers(0, 4)), draw(ref), draw(ref), draw(ref), draw(ref),
                      draw(st.integers(-1, 300))] for _ in range(k)], dtype=np.int64).reshape(k, 7)
    flags = np.array(draw(st.lists(st.integers(0, 63), min_size=k, max_size=k)), dtype=np.uint8)
    ab = np.array(draw(st.lists(st.integers(-2**63, 2**63 - 1), min_size=4 * k, max_size=4 * k)), np.int64).reshape(k, 4)
    opac = np.array(draw(st.lists(st.sampled_from([1.0, 0.0, 0.5, 0.125, 0.335, 0.999, 1.5]), min_size=k, max_size=k)))
    deg = np.array(draw(st.lists(st.sampled_from([0.0, -0.0, 45.0, 337.5, -90.1, 1e-300]), min_size=k, max_size=k)))
    bnds = np.array(draw(st.lists(st.floats(allow_nan=False), min_size=4 * k, max_size=4 * k)), np.float64).reshape(k, 4)
    return nodes, names, crow, ints, flags, ab, opac, deg, bnds


@settings(max_examples=200, deadline=None)
@given(_record_columns(), st.sampled_from([80, 3, 1]))
def test_object_records_match_python_twin(cols, text_max):
    co = _compiled()
    args = (*cols, O.G.LABEL_NAMES, O._FLAG_NAMES, text_max)
    got, want = _outcome(co.object_records, *args), _outcome(O._object_records_py, *args)
    # repr, not ==: 1 and 1.0 and True are equal but print differently
    assert got[0] == want[0] and repr(got[1]) == repr(want[1])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 3), st.integers(0, 3),
                          st.one_of(st.sampled_from([0.0, 1.0, 0.5, 1.5, -0.5, 2.5, 31.999, 1e15]), st.integers(1, 63).map(float))),
                max_size=20))
def test_relation_records_match_python_twin(rels):
    co = _compiled()
    names = ["a", "b", "c", "d"]
    t, a, b, x = (np.array([r[i] for r in rels], dtype=dt) for i, dt in enumerate((np.int64, np.int64, np.int64, np.float64)))
    args = (names, a, b, t, x, O.RELATION_TYPES, O._KIND_NAMES)
    got, want = _outcome(co.relation_records, *args), _outcome(O._relation_records_py, *args)
    assert got[0] == want[0] and repr(got[1]) == repr(want[1])


@st.composite
def _rich_canvases(draw: Any) -> Tuple[Canvas, list]:
    """Pages with everything a record reads: texts, names, styles, opacity, rotation, flags, frames, groups, arrows."""
    c = Canvas()
    ids: list = []
    for k in range(draw(st.integers(1, 20))):
        kind = draw(st.sampled_from(["geo", "geo", "note", "text", "frame", "group", "arrow"]))
        containers = [i for i in ids if c.nodes[i].type in ("frame", "group")]
        parent = draw(st.sampled_from(["page:page"] + containers))
        coord = st.sampled_from([-300.0, 0.0, 10.4, 40.5, 100.0, 333.3, 2900.0])
        props = {"start": {"x": 0, "y": 0}, "end": {"x": 30, "y": 40}} if kind == "arrow" else {}
        c.add(Node(f"n{k}", kind, parent, f"a{k:02d}", draw(coord), draw(coord),
                   draw(st.sampled_from([0.0, 10.0, 60.0, 400.0])), draw(st.sampled_from([0.0, 10.0, 60.0])),
                   rotation=draw(st.sampled_from([0.0, 0.0, 0.7853981633974483, -1.0, 3.5])),
                   text=draw(st.one_of(st.none(), st.text(max_size=100), st.just("  two\n words  " * 9))),
                   name=draw(st.one_of(st.none(), st.text(max_size=8))),
                   style=draw(st.fixed_dictionaries({}, optional={"color": st.sampled_from(["red", "#0af", "12", ""]),
                                                                  "fill": st.sampled_from(["solid", "none", "3.5"])})),
                   opacity=draw(st.sampled_from([1.0, 1.0, 0.5, 0.333])), locked=draw(st.booleans()),
                   hidden=draw(st.booleans()), props=props))
        ids.append(f"n{k}")
        if kind == "arrow" and k and draw(st.booleans()):
            target = draw(st.sampled_from(ids[:-1]))
            c.add(Binding(f"b{k}", "arrow", f"n{k}", target, draw(st.sampled_from(["start", "end"]))))
    return c, ids


def _both(c: Canvas, vp: Any, monkeypatch: Any, **kw: Any) -> Tuple[str, str]:
    fast = O.observe(c, vp, **kw).to_json()
    with monkeypatch.context() as m:
        m.setattr(O, "_object_records", O._object_records_py)
        m.setattr(O, "_relation_records", O._relation_records_py)
        slow = O.observe(c, vp, **kw).to_json()
    return fast, slow


@settings(max_examples=80, deadline=None)
@given(_rich_canvases(), st.tuples(*[st.sampled_from([-50.0, 0.0, 30.5, 400.0])] * 2 + [st.sampled_from([0.0, 200.0, 3000.0])] * 2),
       st.integers(0, 25), st.integers(0, 30), st.booleans(), st.sampled_from([(0, 0), (10.5, -3.25)]), st.data())
def test_observations_with_compiled_records_are_byte_identical(cv, vp, max_objects, max_relations, bounds, origin, data):
    _compiled()
    c, ids = cv
    sel = data.draw(st.lists(st.sampled_from(ids), max_size=3))
    ctx = data.draw(st.lists(st.sampled_from(ids), max_size=3))
    with pytest.MonkeyPatch.context() as mp:
        fast, slow = _both(c, vp, mp, selected=sel, context=ctx, max_objects=max_objects, max_relations=max_relations,
                           include_bounds=bounds, origin=origin, near_gap=64.0)
    assert fast == slow


_REAL = sorted((Path(__file__).resolve().parents[1].parent / "shared" / "data" / "canvases").glob("*"))


@pytest.mark.skipif(not _REAL, reason="../shared/data/canvases is absent")
@pytest.mark.parametrize("path", _REAL, ids=lambda p: p.name[:40])
def test_real_observations_with_compiled_records_are_byte_identical(path, monkeypatch):
    _compiled()
    from spatialobs.canvas import load

    c = load(path)
    vp = O.resolve_viewport(c, None, c.current_page)
    first = c.paint_order()[:4]
    for vpt, kw in [(None, {}), (None, {"include_bounds": True, "origin": (13.3, -7.6)}),
                    ((vp.x + vp.w / 3, vp.y + vp.h / 3, vp.w / 4, vp.h / 4), {"max_objects": 40, "max_relations": 60}),
                    (None, {"selected": first[:2], "context": first[2:]})]:
        fast, slow = _both(c, vpt, monkeypatch, **kw)
        assert fast == slow and json.loads(fast)["objects"]


@pytest.mark.parametrize("twin", ["compiled", "python"])
def test_record_loops_shape_mismatch(twin):
    co = _compiled()
    objects = co.object_records if twin == "compiled" else O._object_records_py
    relations = co.relation_records if twin == "compiled" else O._relation_records_py
    z = np.zeros
    good = [{}, [], z(2, np.int64), z((2, 7), np.int64), z(2, np.uint8), z((2, 4), np.int64), z(2), z(2), z((2, 4))]
    for i, bad in [(3, z((2, 6), np.int64)), (4, z(1, np.uint8)), (5, z((2, 3), np.int64)), (6, z(3)), (8, z((1, 4)))]:
        args = list(good)
        args[i] = bad
        with pytest.raises(ValueError, match=r"one row per object \(2\): ints 7 columns, ab and bnds 4"):
            objects(*args, O.G.LABEL_NAMES, O._FLAG_NAMES, 80)
    with pytest.raises(ValueError, match=r"one row per relation \(2\)"):
        relations([], z(2, np.int64), z(1, np.int64), z(2, np.int64), z(2), O.RELATION_TYPES, O._KIND_NAMES)


def test_record_loops_bad_input():
    co = _compiled()
    z = np.zeros
    with pytest.raises(TypeError, match="nodes"):
        co.object_records(MappingProxyType({}), [], z(0, np.int64), z((0, 7), np.int64), z(0, np.uint8),
                          z((0, 4), np.int64), z(0), z(0), z((0, 4)), (), (), 80)
    with pytest.raises(ValueError, match="dtype mismatch"):
        co.object_records({}, [], z(0, np.int64), z((0, 7), np.float64), z(0, np.uint8), z((0, 4), np.int64), z(0), z(0),
                          z((0, 4)), (), (), 80)
    with pytest.raises(TypeError, match="kind_names"):
        co.relation_records([], z(0, np.int64), z(0, np.int64), z(0, np.int64), z(0), O.RELATION_TYPES, ())
    # a row naming no object fails in both twins alike
    args = ({}, ["x"], np.array([0], np.int64), z((1, 7), np.int64), z(1, np.uint8), z((1, 4), np.int64), z(1), z(1),
            z((1, 4)), O.G.LABEL_NAMES, O._FLAG_NAMES, 80)
    assert _outcome(co.object_records, *args) == _outcome(O._object_records_py, *args) == ("err", KeyError)


# -- compact JSON of plain data (every observation's to_json)
L = importlib.import_module("spatialobs.canvas.limits")


def _cjson() -> Any:
    return pytest.importorskip("spatialobs.canvas._cjson")


def _json_dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _plain_json(value: Any, depth: int = 0) -> bool:
    """The data the compiled writer takes (the rest it declines): exact types, string keys, finite floats, depth <= 100."""
    t = type(value)
    if t in (str, int, bool) or value is None:
        return True
    if t is float:
        return value - value == 0.0
    if t is list:
        return depth < 100 and all(_plain_json(v, depth + 1) for v in value)
    if t is dict:
        return depth < 100 and all(type(k) is str and _plain_json(v, depth + 1) for k, v in value.items())
    return False


class _S(str):
    pass


class _I(int):
    pass


class _F(float):
    def __repr__(self) -> str:
        return "F!"


_plain_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-10**40, 10**40),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([-0.0, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, 0.1 + 0.2]),
    st.text(), st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=6),
    st.sampled_from(["\\", '"', "\x00\x1f\x7f\b\f\n\r\t", "\u2028\u2029", "\ud800", "é" * 3, "a/b"]),
)
_plain_keys = st.one_of(st.text(max_size=5), st.sampled_from(["id", "type", "\n", '"', "\ud800"]))
_plain_values = st.recursive(_plain_leaves, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                                    st.dictionaries(_plain_keys, kids, max_size=4)),
                             max_leaves=30)
# now and then something the compiled writer declines, somewhere inside
_other_leaves = st.one_of(st.sampled_from([float("nan"), float("inf"), _S("s"), _I(3), _F(1.5), (1, 2), b"x", 1j]),
                          st.dictionaries(st.sampled_from([1, None, True, 2.5, _S("k"), (1,)]), _plain_leaves,
                                          min_size=1, max_size=2))
_json_values = st.one_of(_plain_values, _plain_values, st.recursive(
    st.one_of(_plain_leaves, _other_leaves), lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                                     st.dictionaries(_plain_keys, kids, max_size=4),
                                                                     st.lists(kids, max_size=3).map(tuple)), max_leaves=20))


@settings(max_examples=500, deadline=None)
@given(_json_values)
def test_dumps_compact_is_json_dumps_or_declines(value):
    cj = _cjson()
    got = cj.dumps_compact(value)
    want = _outcome(_json_dumps, value)
    assert (got is None) == (not _plain_json(value))
    if got is not None:
        assert want == ("ok", got)
    # the public writer gives json's text, or json's error, in every case
    assert _outcome(L.compact_json, value) == _outcome(lambda v: L.utf8_json(v, separators=(",", ":"), allow_nan=False), value)


def test_dumps_compact_depth_limit():
    cj = _cjson()
    for depth in (99, 100, 101):
        value: Any = "x"
        for i in range(depth):
            value = [value] if i % 2 else {"k": value}
        got = cj.dumps_compact(value)
        assert (got is None) == (depth > cj.MAX_DEPTH) and L.compact_json(value) == _json_dumps(value)


def test_dumps_compact_bad_values_give_json_errors():
    for bad, err in [({"a": float("nan")}, ValueError), ({"a": {1j}}, TypeError), ({(1,): 2}, TypeError)]:
        with pytest.raises(err) as got:
            L.compact_json(bad)
        with pytest.raises(err) as want:
            _json_dumps(bad)
        assert str(got.value) == str(want.value)
    cyc: list = []
    cyc.append(cyc)
    with pytest.raises(ValueError, match="^Circular reference detected$"):
        L.compact_json(cyc)


def test_observation_json_is_written_by_the_compiled_writer(monkeypatch):
    _cjson()
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    obs = O.observe(synthetic_workspace(3000, seed=5), (0, 0, 2800, 1800), include_bounds=True)
    fast = obs.to_json()
    monkeypatch.setattr(L, "_dumps_compact", None)
    assert fast == obs.to_json() == _json_dumps(obs.to_dict()) and len(obs.objects) > 100
