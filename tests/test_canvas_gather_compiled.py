"""The compiled loops of a first derivation's arrow pass and point boxes (Cython) against their Python twins.

``arrows.GATHER_KERNEL = False`` walks the arrows with :func:`~spatialobs.canvas.document.arrows._resolve_all`,
:func:`~spatialobs.canvas.document.arrows._terminals_by_arrow`, ``_unbound_to_resolve``, ``_ArrowPlan.build`` and
:func:`~spatialobs.canvas.document.arrows._shared_targets`; ``derive.POINT_BOX_KERNEL = False`` reads the
point-based rows with :func:`~spatialobs.canvas.document.derive._point_boxes`' loop. The compiled loops must
gather the same values in the same order (what the batch holds, what the cache keeps) and give the same bits;
so must their compiled reads of an arrow's props (``_keeps_points``, ``_needs_resolving``, ``_point``), on odd
values too.
"""

from __future__ import annotations

import decimal
import math
import types
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spatialobs.canvas.document import arrows as A
from spatialobs.canvas.document import derive as D
from spatialobs.canvas.document.records import Binding, Node
from tests.strategies import canvas_maker, float_bits
from tests.test_canvas_arrows_kernel import _canvases

ce = pytest.importorskip("spatialobs.canvas.document._cextract")

pytestmark = pytest.mark.skipif(A._HYPOT_VARIANT is None, reason="the batch needs the straight kernel")

#: What a batch holds after gathering (every list and dict it fills before it runs).
_BATCH = ("rows", "points", "scale", "stroke", "heads", "target", "outline", "box_outline", "anchor", "precise",
          "exact", "slots", "bare", "offsets", "flat", "bounds", "closed", "half", "kinds", "sizes", "flips",
          "special", "bend", "arc", "labels", "twin_keys", "pending", "followers")


def _outcome(f: Callable[..., Any], *args: Any) -> Tuple[str, Any]:
    try:
        return ("ok", f(*args))
    except Exception as e:  # both loops must fail alike
        return ("err", (type(e), str(e)))


def _same_key(a: List[Any], b: List[Any]) -> bool:
    # records by identity, transforms by their bits
    def same(x: Any, y: Any) -> bool:
        return x is y or (type(x) is tuple and type(y) is tuple and float_bits(x).tolist() == float_bits(y).tolist())

    return len(a) == len(b) and all(map(same, a, b))


def _gathered(d: Any, nodes: List[Any], blist: List[Any], previous: Dict[str, Any], compiled: bool,
              mp: pytest.MonkeyPatch) -> Tuple[Any, ...]:
    """The full pass's gathering (no run), with the compiled loops or their twins: what it built."""
    mp.setattr(A, "GATHER_KERNEL", compiled)
    bound_terms, by_arrow = A._terminals_by_arrow(blist, d.row, nodes)
    A._unbound_to_resolve((d.types == "arrow").nonzero()[0].tolist(), by_arrow, nodes)
    local = d.local.copy()
    plan = A._ArrowPlan.build(blist, by_arrow, bound_terms, d.row, local)
    shared = A._shared_targets(by_arrow.values())
    batch = A._StraightBatch(d, nodes)
    kept: Dict[str, Any] = {}
    twins: Dict[Any, Any] = {}
    dd = types.SimpleNamespace(row=d.row, px=d.px, py=d.py, rotation=d.rotation, local=local, types=d.types)
    changed = A._resolve_all(dd, nodes, by_arrow, previous, kept, twins, batch, A._Frames(d), shared)
    return bound_terms, by_arrow, plan, shared, batch, kept, twins, changed, local


def _assert_same_gathering(a: Tuple[Any, ...], b: Tuple[Any, ...]) -> None:
    bt_a, by_a, plan_a, sh_a, batch_a, kept_a, twins_a, ch_a, local_a = a
    bt_b, by_b, plan_b, sh_b, batch_b, kept_b, twins_b, ch_b, local_b = b
    assert bt_a == bt_b and list(bt_a) == list(bt_b) and by_a == by_b and list(by_a) == list(by_b)
    assert all(by_a[r] is not bt_a[r] for r in by_a if r in bt_a)  # the resolved arrows' terms are copies
    assert plan_a.rows.tolist() == plan_b.rows.tolist()
    assert plan_a.dep_target.tolist() == plan_b.dep_target.tolist()
    assert plan_a.dep_arrow.tolist() == plan_b.dep_arrow.tolist()
    assert sh_a == sh_b and ch_a == ch_b
    for name in _BATCH:
        va, vb = getattr(batch_a, name), getattr(batch_b, name)
        assert type(va) is type(vb) and va == vb, name
        if isinstance(va, list) and va and isinstance(va[0], float):
            assert float_bits(va).tolist() == float_bits(vb).tolist(), name
    assert len(batch_a.keys) == len(batch_b.keys) and all(map(_same_key, batch_a.keys, batch_b.keys))
    assert list(kept_a) == list(kept_b) and all(_same_key(kept_a[k][0], kept_b[k][0]) for k in kept_a)
    assert all(float_bits(kept_a[k][1]).tolist() == float_bits(kept_b[k][1]).tolist() for k in kept_a)
    assert twins_a.keys() == twins_b.keys()
    assert float_bits(local_a).tolist() == float_bits(local_b).tolist()


# What the compiled reads of an arrow's props (arrows._keeps_points and _needs_resolving,
# arrowparts._point and _num) take themselves or hand to their twins.
class _Float(float):
    """A float whose ``float()`` is another number: only an exact float is read as itself."""

    def __float__(self) -> float:
        return 7.0


class _Shifted(dict):  # type: ignore[type-arg]
    """A dict whose ``get`` doubles floats: only an exact dict is read with the dict's own lookup."""

    def get(self, key: Any, default: Any = None) -> Any:
        v = dict.get(self, key, default)
        return v * 2 if type(v) is float else v


class _List(list):  # type: ignore[type-arg]
    """A list subclass (``isinstance(.., list)`` holds): the twin decides."""


#: Odd numbers for the reads (``_num``'s fast path and what it hands back), which a whole derivation
#: also takes; ``_HUGE`` overflows the boxes of the derivation around the reads (bounded there).
_ODD_NUMBERS = [0.0, -0.0, 8.0, -8.0, 7.999, 0.5, math.nan, -math.inf, math.inf, 0, 8, -9, 2**53, -2**53, 2**53 + 1,
                -2**53 - 1, 10**400, True, False, None, "1.5", "nan", " 9 ", "x", np.float64(12.5),
                np.float64(-0.0), np.float64(math.nan), np.float64(-math.inf), np.float32(9.5), np.float32(math.inf),
                np.int64(10), decimal.Decimal("8.5"), _Float(3.0), [1.0], {}]
_HUGE = [1e308, -1e308]
#: Odd stored terminals besides a point of two numbers.
_ODD_ENDS = [None, {"x": 1.5}, {}, [1.0, 2.0], "start", types.MappingProxyType({"x": 1.5, "y": 2.5}),
             {"x": 1, "y": 2, "type": "binding"}, _Shifted({"x": 1.5, "y": 2.5})]
#: Stored points: a list (kept unless the start is a mapping) or something else.
_POINTS = [None, [[0, 0], [4, -2]], [], _List([[0, 0], [1, 1]]), ([0, 0], [1, 1]), "x", {"a": {"x": 1, "y": 2}}]
#: Labels: blank or not, a str subclass, not a str.
_TEXTS = [None, "", "  ", " \t\n", "label", " a ", "\u2003", type("_Str", (str,), {})("x"), 5, 0]

_fair_value = st.one_of(st.floats(-1e6, 1e6), st.integers(-2**60, 2**60), st.sampled_from(_ODD_NUMBERS))
_value = st.one_of(_fair_value, st.sampled_from(_HUGE))


def _xy_of(value: Any) -> Any:
    """A stored terminal: a point of two ``value`` numbers in a dict or a dict subclass, or an odd one."""
    return st.one_of(st.builds(lambda x, y: {"x": x, "y": y}, value, value),
                     st.builds(lambda x, y: _Shifted({"x": x, "y": y}), value, value), st.sampled_from(_ODD_ENDS))


_xy = _xy_of(_value)
_points = st.sampled_from(_POINTS)
_text = st.sampled_from(_TEXTS)


@st.composite
def _arrow_props(draw: Any) -> Dict[str, Any]:
    """An arrow's props, each key drawn or missing, with odd values."""
    props: Dict[str, Any] = {}
    for key, strategy in (("points", _points), ("start", _xy), ("end", _xy), ("bend", _value),
                          ("scale", _value)):
        if draw(st.booleans()):
            props[key] = draw(strategy)
    return props


@st.composite
def _odd_arrows(draw: Any) -> List[Node]:
    """Arrow records as the compiled reads may meet them: odd props in a dict, a dict subclass,
    another mapping or no mapping at all, and odd labels."""
    out = []
    for i in range(draw(st.integers(0, 8))):
        props: Any = draw(_arrow_props())
        wrap = draw(st.integers(0, 9))
        if wrap == 0:
            props = _Shifted(props)
        elif wrap == 1:
            props = types.MappingProxyType(props)
        elif wrap == 2:
            props = list(props)
        out.append(Node(f"a{i}", "arrow", "page:p", f"a{i}", text=draw(_text), props=props))
    return out


def _odd(spec: Tuple[List[Node], List[Node], List[Binding]], draw: Any) -> Tuple[Any, ...]:
    """The drawn canvas with some of what the compiled loop hands back to the twin: numpy and integer
    coordinates, an arrow without a scale (the plain kind) or without a start head; and odd values for
    the compiled reads of the props: an odd stored start, bend or scale, stored points, a label."""
    nodes, arrows, bindings = spec
    arrows = list(arrows)
    for k, a in enumerate(arrows):
        props = dict(a.props)
        choice = draw(st.integers(0, 11))
        if choice == 0:
            props["end"] = {"x": np.float64(props["end"]["x"]), "y": np.float64(props["end"]["y"])}
        elif choice == 1:
            props["start"] = {"x": 3, "y": -4}
        elif choice == 2:
            props.pop("scale", None)
            props["bend"] = 0
        elif choice == 3:
            props.pop("scale", None)
            props["arrowheadStart"] = "none"
        elif choice == 4:
            props.pop("scale", None)
            props["bend"] = 0
            props["start"] = draw(_xy_of(_fair_value))
        elif choice == 5:  # (huge ones too: an arrow scaled beyond the float range is bounded, not an error)
            props["bend"] = draw(_value)
            props["scale"] = draw(_value)
        elif choice == 6:
            props["points"] = draw(_points)
        elif choice == 7:
            a = a.replace(text=draw(_text))
        arrows[k] = a.replace(props=props)
    return nodes, arrows, bindings


@st.composite
def _specs(draw: Any) -> Tuple[Any, ...]:
    return _odd(draw(_canvases()), draw)


def _canvas_rows(spec: Tuple[Any, ...]) -> Tuple[Any, List[Any], Any]:
    c = canvas_maker(spec)()
    d = c.geometry()
    return c, [c.nodes[i] for i in d.ids], d


@pytest.mark.generated
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_specs(), st.booleans(), st.booleans())
def test_the_compiled_gathering_is_the_twins(spec, with_cache, stray):
    try:
        c, nodes, d = _canvas_rows(spec)
    except ArithmeticError:
        return  # an arc the Python path cannot resolve: no derivation to gather from
    blist = list(c.bindings.values())
    if stray:  # a binding to a shape not among the rows (none is read): skipped
        blist.insert(0, Binding("binding:stray", "arrow", "shape:arrow0", "shape:nowhere", "start"))
    # the canvas's own cache (every arrow of its derivation) sends them through _resolve_one
    previous = dict(c._arrow_cache) if with_cache else {}
    with pytest.MonkeyPatch.context() as mp:
        twin = _outcome(_gathered, d, nodes, blist, previous, False, mp)
        compiled = _outcome(_gathered, d, nodes, blist, previous, True, mp)
    assert twin[0] == compiled[0]
    if twin[0] == "err":
        assert twin[1] == compiled[1]
    else:
        _assert_same_gathering(twin[1], compiled[1])


@pytest.mark.generated
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_specs())
def test_derivations_through_the_compiled_loops_are_the_twins(spec):
    # the whole first derivation, the compiled loops taken from the first arrow on
    make = canvas_maker(spec)
    got = {}
    for compiled in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(A, "_FRAMES_FROM", 1)
            mp.setattr(A, "GATHER_KERNEL", compiled)
            mp.setattr(D, "POINT_BOX_KERNEL", compiled)
            c = make()
            got[compiled] = _outcome(lambda: c.geometry())
            if got[compiled][0] == "ok":
                got[compiled] = ("ok", (got[compiled][1], dict(c._arrow_cache), dict(c._local_cache)))
    assert got[False][0] == got[True][0]
    if got[False][0] == "err":
        assert got[False][1] == got[True][1]
        return
    (a, cache_a, local_a), (b, cache_b, local_b) = got[False][1], got[True][1]
    for name in ("local", "bounds", "visible", "px", "py", "rotation"):
        assert float_bits(getattr(a, name)).tolist() == float_bits(getattr(b, name)).tolist(), name
    assert a.paint.tolist() == b.paint.tolist()
    assert list(cache_a) == list(cache_b)
    assert list(local_a) == list(local_b)
    assert all(float_bits(local_a[k][1]).tolist() == float_bits(local_b[k][1]).tolist() for k in local_a)


def test_a_page_of_many_arrows_gathers_the_same(monkeypatch):
    # the pass of a diagram page takes the compiled loops (more arrows than _FRAMES_FROM)
    from spatialobs.canvas.scenarios.handoff import diagram_workspace

    c = diagram_workspace(3000, seed=7)
    d = c.copy().geometry()
    nodes = [c.nodes[i] for i in d.ids]
    blist = list(c.bindings.values())
    twin = _gathered(d, nodes, blist, {}, False, monkeypatch)
    compiled = _gathered(d, nodes, blist, {}, True, monkeypatch)
    assert len(compiled[7]) >= A._FRAMES_FROM and len(compiled[4].rows) > 300
    _assert_same_gathering(twin, compiled)
    seen = []
    monkeypatch.setattr(A, "GATHER_KERNEL", True)
    monkeypatch.setattr(A, "_c_resolve_all", lambda *a: seen.append(1) or ce.resolve_all(*a))
    c.copy().geometry()
    assert seen == [1]
    # the page's props are dicts of plain numbers: the compiled loops read every one themselves
    handed: List[str] = []

    def counted(f: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *a: handed.append(f.__name__) or f(*a)

    monkeypatch.setattr(A, "_c_resolve_all", lambda *a: ce.resolve_all(*a[:10], counted(a[10]), *a[11:]))
    monkeypatch.setattr(A, "_c_terminals_by_arrow", lambda b, r, n, k: ce.terminals_by_arrow(b, r, n, counted(k)))
    monkeypatch.setattr(A, "_c_unbound_to_resolve",
                        lambda r, b, n, k, m: ce.unbound_to_resolve(r, b, n, counted(k), m))
    c.copy().geometry()
    assert handed == []


# --------------------------------------------------------------------------- bindings
_ids = st.sampled_from(["a0", "a1", "a2", "p0", "s0", "s1", "gone"])


@st.composite
def _bindings(draw: Any) -> Tuple[List[Any], Dict[str, int], List[Any]]:
    nodes = [Node("a0", "arrow", "page:p", props={"start": {"x": 0.0, "y": 0.0}}),
             Node("a1", "arrow", "page:p", props={"points": [[0, 0], [5, 5]]}),  # keeps its points
             Node("a2", "arrow", "page:p"),
             Node("p0", "line", "page:p"), Node("s0", "geo", "page:p"), Node("s1", "text", "page:p")]
    row = {nd.id: i for i, nd in enumerate(nodes)}
    blist = [Binding(f"b{k}", "arrow", draw(_ids), draw(_ids), draw(st.sampled_from(["start", "end", "middle"])))
             for k in range(draw(st.integers(0, 12)))]
    return blist, row, nodes


@settings(max_examples=300, deadline=None)
@given(_bindings())
def test_bindings_by_arrow_are_the_twins(spec):
    blist, row, nodes = spec
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(A, "GATHER_KERNEL", False)
        twin = _outcome(A._terminals_by_arrow, blist, row, nodes)
    compiled = _outcome(ce.terminals_by_arrow, blist, row, nodes, A._keeps_points)
    assert twin == compiled
    if twin[0] == "err":
        return
    bound_terms, by_arrow = compiled[1]
    assert list(bound_terms) == list(twin[1][0]) and list(by_arrow) == list(twin[1][1])
    assert all(list(by_arrow[r]) == list(twin[1][1][r]) for r in by_arrow)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(A, "GATHER_KERNEL", False)
        assert ce.shared_targets(by_arrow.values()) == A._shared_targets(by_arrow.values())
    got = _outcome(ce.plan_dependencies, by_arrow, row)
    dt: List[int] = []
    da: List[int] = []
    for r, terms in by_arrow.items():
        for b in terms.values():
            dt.append(row[b.to_id])
            da.append(r)
    assert got == ("ok", (dt, da))


def test_bindings_bad_input():
    nodes = [Node("a0", "arrow", "page:p")]
    with pytest.raises(TypeError, match="bindings"):
        ce.terminals_by_arrow((), {}, nodes, A._keeps_points)
    with pytest.raises(TypeError, match="row"):
        ce.plan_dependencies({}, [])
    with pytest.raises(AttributeError, match="'list' object has no attribute 'get'"):
        ce.shared_targets([[("start", None)]])
    with pytest.raises(AttributeError, match="'list' object has no attribute 'get'"):
        _twin_shared([[("start", None)]])
    with pytest.raises(TypeError, match="dict"):
        ce.plan_dependencies({0: ()}, {})
    # a binding whose arrow is not a node of the rows: both loops fail alike
    b = Binding("b", "arrow", "a0", "s0", "end")
    assert _outcome(ce.terminals_by_arrow, [b], {"a0": 3, "s0": 0}, nodes, A._keeps_points) == \
        _outcome(_twin_terminals, [b], {"a0": 3, "s0": 0}, nodes) == ("err", (IndexError, "list index out of range"))


def _twin_shared(all_terms: Any) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(A, "GATHER_KERNEL", False)
        return A._shared_targets(all_terms)


def _twin_terminals(blist: List[Any], row: Dict[str, int], nodes: List[Any]) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(A, "GATHER_KERNEL", False)
        return A._terminals_by_arrow(blist, row, nodes)


def test_resolve_all_bad_input():
    c = canvas_maker(([Node("shape:t", "geo", "page:page", "a1", 0, 0, 50, 50)],
                      [Node("shape:a", "arrow", "page:page", "a2", props={"start": {"x": 0.0, "y": 0.0},
                                                                           "end": {"x": 9.0, "y": 9.0}})],
                      [Binding("b", "arrow", "shape:a", "shape:t", "end")]))()
    d = c.geometry()
    nodes = [c.nodes[i] for i in d.ids]
    r = d.row["shape:a"]
    stray = {"end": Binding("b", "arrow", "shape:a", "shape:nowhere", "end")}
    results = []
    for compiled in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(A, "GATHER_KERNEL", compiled)
            results.append(_outcome(A._resolve_all, d, nodes, {r: stray}, {}, {}, {}, A._StraightBatch(d, nodes),
                                    A._Frames(d), None))
    assert results[0] == results[1] == ("err", (KeyError, "'shape:nowhere'"))
    with pytest.raises(TypeError, match="by_arrow"):
        ce.resolve_all(d, nodes, [], {}, {}, {}, A._StraightBatch(d, nodes), A._Frames(d), None,
                       A._resolve_one, A._point, {}, frozenset(), {}, frozenset())


# --------------------------------------------------------------------------- point boxes
_num = st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.0, -0.0, math.nan, math.inf, 1e308]),
                 st.integers(-2**60, 2**60),
                 st.sampled_from([2**53, 2**53 + 1, 10**400, True, None, "3", np.float64(2.5), np.float32(1.5), np.int64(4)]))
_end = st.one_of(st.none(), st.builds(lambda x, y: {"x": x, "y": y}, _num, _num),
                 st.builds(lambda x, y, t: {"x": x, "y": y, "type": t}, _num, _num,
                           st.sampled_from(["point", "binding"])),
                 st.sampled_from([{"x": 1.0}, [1.0, 2.0], {}, "start", types.MappingProxyType({"x": 1.0, "y": 2.0})]))
_bend = st.one_of(_num, st.sampled_from([0, 7.999, 8.0, -8.0, 40.0, np.float64(-3.0)]))


@st.composite
def _point_nodes(draw: Any) -> List[Node]:
    out = []
    for i in range(draw(st.integers(0, 8))):
        props: Dict[str, Any] = {}
        for key, strategy in (("start", _end), ("end", _end), ("bend", _bend)):
            if draw(st.booleans()):
                props[key] = draw(strategy)
        if draw(st.integers(0, 5)) == 0:
            props["points"] = draw(st.sampled_from([[[0, 0], [4, -2]], [], {"a": {"x": 1, "y": 2}}, "x"]))
        kind = draw(st.sampled_from(["arrow"] * 4 + ["line", "draw"]))
        if draw(st.integers(0, 7)) == 0:
            props = types.MappingProxyType(props)  # type: ignore[assignment]
        out.append(Node(f"n{i}", kind, "page:p", f"a{i}", 0.0, 0.0, draw(_num), draw(_num), props=props))
    return out


@settings(max_examples=500, deadline=None)
@given(_point_nodes(), st.booleans())
def test_point_boxes_are_the_twins(nodes, cached):
    rows = list(range(len(nodes)))[::-1]
    caches: List[Dict[str, Any]] = []
    got = []
    for compiled in (False, True):
        cache: Dict[str, Any] = {}
        if cached and nodes:
            cache[nodes[0].id] = (nodes[0], (1.0, 2.0, 3.0, 4.0))  # the same record: kept
            cache["n1"] = (None, (5.0, 6.0, 7.0, 8.0))  # another record: read again
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(D, "POINT_BOX_KERNEL", compiled)
            got.append(_outcome(D._point_boxes, nodes, rows, cache))
        caches.append(cache)
    assert got[0][0] == got[1][0]
    if got[0][0] == "err":
        assert got[0][1] == got[1][1]
        return
    a, b = got[0][1], got[1][1]
    assert [tuple(map(type, x)) for x in a] == [tuple(map(type, x)) for x in b]
    assert float_bits(np.array(a, dtype=float).reshape(-1, 4)).tolist() == \
        float_bits(np.array(b, dtype=float).reshape(-1, 4)).tolist()
    assert list(caches[0]) == list(caches[1])
    assert all(caches[0][k][0] is caches[1][k][0] for k in caches[0])


def test_point_boxes_bad_input():
    nd = Node("a", "arrow", "page:p", props={"start": {"x": 1.0, "y": 2.0}})
    with pytest.raises(TypeError, match="nodes"):
        ce.point_boxes((nd,), [0], {}, D.local_box, 8.0)
    with pytest.raises(TypeError, match="local_cache"):
        ce.point_boxes([nd], [0], [], D.local_box, 8.0)
    with pytest.raises(TypeError, match="tuple"):
        ce.point_boxes([nd], [0], {"a": [nd, None]}, D.local_box, 8.0)
    # a row beyond the nodes, a record without props: both fail alike
    for nodes, rows in (([nd], [1]), ([types.SimpleNamespace(id="b", type="arrow")], [0])):
        want = _outcome(_twin_point_boxes, nodes, rows)
        assert _outcome(ce.point_boxes, nodes, rows, {}, D.local_box, 8.0) == want
        assert want[0] == "err" and want[1][0] in (IndexError, AttributeError)


def _twin_point_boxes(nodes: List[Any], rows: List[int]) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(D, "POINT_BOX_KERNEL", False)
        return D._point_boxes(nodes, rows, {})


# --------------------------------------------------------------------------- the props' reads
@settings(max_examples=500, deadline=None)
@given(_odd_arrows(), st.data())
def test_unbound_arrows_to_resolve_are_the_twins(nodes, data):
    # arrows._needs_resolving read by the compiled loop, the twin taking what it cannot read
    rows = data.draw(st.permutations(range(len(nodes))))
    held = data.draw(st.sets(st.sampled_from(rows))) if rows else set()
    got = []
    for compiled in (False, True, None):
        by_arrow: Dict[int, Dict[str, Any]] = {r: {"end": None} for r in sorted(held)}
        if compiled is None:  # the compiled loop itself
            outcome = _outcome(ce.unbound_to_resolve, list(rows), by_arrow, nodes, A._needs_resolving,
                               A._MIN_ARROW_BEND)
        else:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(A, "GATHER_KERNEL", compiled)
                outcome = _outcome(A._unbound_to_resolve, list(rows), by_arrow, nodes)
        got.append((outcome, list(by_arrow.items())))  # in order, also when both failed part way
    assert got[0] == got[1] == got[2]
    if got[0][0][0] == "ok":
        assert got[0][1] == [(r, {"end": None}) for r in sorted(held)] + \
            [(r, {}) for r in rows if r not in held and A._needs_resolving(nodes[r])]


@settings(max_examples=500, deadline=None)
@given(_odd_arrows(), st.data())
def test_arrows_keeping_their_points_are_the_twins(arrows, data):
    # arrows._keeps_points read by the compiled loop: a bound arrow that keeps its points is not resolved
    nodes = arrows + [Node("t", "geo", "page:p")]
    row = {nd.id: i for i, nd in enumerate(nodes)}
    blist = [Binding(f"b{k}", "arrow", a.id, "t", data.draw(st.sampled_from(["start", "end"])))
             for k, a in enumerate(arrows)]
    twin = _outcome(_twin_terminals, blist, row, nodes)
    compiled = _outcome(ce.terminals_by_arrow, blist, row, nodes, A._keeps_points)
    assert twin == compiled
    if twin[0] == "ok":
        assert list(compiled[1][1]) == list(twin[1][1])


@pytest.mark.generated
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_xy, st.sampled_from(["start", "end"])), min_size=1, max_size=6))
def test_unbound_terminals_gathered_are_the_twins(ends):
    # arrowparts._point read by the compiled loop: the stored point of each plain arrow's unbound
    # terminal (the other one bound) goes into the batch as the twin reads it
    _assert_gathered_alike(ends)


def _assert_gathered_alike(ends: List[Tuple[Any, str]]) -> None:
    """One plain arrow per (stored point, terminal): that terminal unbound, the other bound; the
    compiled loop gathers what its twin does."""
    target = Node("shape:t", "geo", "page:page", "a0", 200.0, 10.0, 80.0, 60.0, props={"geo": "rectangle"})
    arrows = [Node(f"shape:a{k}", "arrow", "page:page", f"a{k + 1}", 5.0 * k, -3.0,
                   props={"start": {"x": 0.0, "y": 0.0}, "end": {"x": 9.0, "y": 4.0}}) for k in range(len(ends))]
    bindings = [Binding(f"b{k}", "arrow", a.id, target.id, "end" if free == "start" else "start")
                for k, (a, (_, free)) in enumerate(zip(arrows, ends))]
    c = canvas_maker(([target], arrows, bindings))()
    d = c.geometry()
    nodes = [c.nodes[i] for i in d.ids]
    for (xy, free), a in zip(ends, arrows):  # the odd stored points, put in after the derivation
        r = d.row[a.id]
        nodes[r] = nodes[r].replace(props={**nodes[r].props, free: xy})
    with pytest.MonkeyPatch.context() as mp:
        twin = _outcome(_gathered, d, nodes, list(c.bindings.values()), {}, False, mp)
        compiled = _outcome(_gathered, d, nodes, list(c.bindings.values()), {}, True, mp)
    assert twin[0] == compiled[0] == "ok"
    assert len(compiled[1][4].rows) == len(arrows)  # every arrow gathered by the compiled loop
    _assert_same_gathering(twin[1], compiled[1])


def _table_arrows() -> Tuple[List[Node], List[Any]]:
    """Every odd value in every place the reads look: as bend, as scale, as a stored start's x and y
    (with stored points, and without), every stored start and label; and every odd terminal."""
    numbers = _ODD_NUMBERS + _HUGE
    props: List[Any] = []
    for v in numbers:
        props += [{"bend": v}, {"bend": v, "scale": 0.5}, {"bend": 4.5, "scale": v}, {"bend": -12.0, "scale": v},
                  {"points": [[0, 0]], "start": v}]
    props += [{"points": pts, "start": start} for pts in _POINTS for start in _ODD_ENDS + [{"x": 1.0, "y": 2.0}]]
    props += [_Shifted({"bend": 9.0}), _Shifted({"points": [[0, 0]]}), types.MappingProxyType({"bend": 9.0}),
              ["bend"], None]
    arrows = [Node(f"a{k}", "arrow", "page:p", props=p) for k, p in enumerate(props)]
    arrows += [Node(f"t{k}", "arrow", "page:p", text=t, props={"bend": 0}) for k, t in enumerate(_TEXTS)]
    ends = [{"x": v, "y": w} for v, w in zip(numbers, numbers[::-1])] + _ODD_ENDS
    return arrows, ends


def test_every_odd_value_is_read_as_the_twins_read_it():
    # the hypothesis tests above draw these now and then; here each is read every time
    arrows, ends = _table_arrows()
    for node in arrows:
        nodes = [node, Node("t", "geo", "page:p")]
        by_arrow: Dict[int, Dict[str, Any]] = {}
        twin = _outcome(_twin_unbound, [0], by_arrow, nodes), by_arrow
        by_arrow = {}
        assert (_outcome(ce.unbound_to_resolve, [0], by_arrow, nodes, A._needs_resolving, A._MIN_ARROW_BEND),
                by_arrow) == twin, node
        blist = [Binding("b", "arrow", node.id, "t", "end")]
        assert _outcome(ce.terminals_by_arrow, blist, {node.id: 0, "t": 1}, nodes, A._keeps_points) == \
            _outcome(_twin_terminals, blist, {node.id: 0, "t": 1}, nodes), node
    for free in ("start", "end"):
        _assert_gathered_alike([(xy, free) for xy in ends])


def _twin_unbound(rows: List[int], by_arrow: Dict[int, Dict[str, Any]], nodes: List[Any]) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(A, "GATHER_KERNEL", False)
        return A._unbound_to_resolve(rows, by_arrow, nodes)
