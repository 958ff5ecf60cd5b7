"""The compiled straight-arrow kernel against its Python twin, bit for bit.

Straight arrows without a label are resolved by ``_core.resolve_straight_arrows``;
``arrows.STRAIGHT_KERNEL = False`` sends every arrow through the Python path
(:func:`~spatialobs.canvas.document.arrows.resolve_arrow`), the twin the kernel is
ported from operation for operation. Every comparison here is of the float bits.
"""

from __future__ import annotations

import math
import re
import sys
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from spatialobs import SpatialObsError, _core
from spatialobs._errors import InvalidInputError, OutOfRangeError
from spatialobs.canvas import load
from spatialobs.canvas.document import arrows as A
from spatialobs.canvas.document.records import Binding, Node
from tests.strategies import CONF, GEOS, SHARED_TLDR, canvas_maker, float_bits

VARIANT = A._HYPOT_VARIANT

pytestmark = pytest.mark.skipif(VARIANT is None, reason="the kernel copies math.hypot of CPython 3.10 and later")


class _Spy:
    """Counts the arrows the kernel resolves."""

    def __init__(self):
        self.arrows = 0
        self.real = A._resolve_straight_arrows

    def __call__(self, *args):
        self.arrows += len(args[3])
        return self.real(*args)


def _derive(make, kernel, monkeypatch):
    """The geometry of a fresh canvas from ``make()``, with or without the kernel; the arrows it resolved."""
    spy = _Spy()
    monkeypatch.setattr(A, "_resolve_straight_arrows", spy)
    monkeypatch.setattr(A, "STRAIGHT_KERNEL", kernel)
    c = make()
    d = c.geometry()
    return c, d, spy.arrows


def _assert_same(make, monkeypatch):
    """Kernel and twin give the same bits for every local box and page bound, or the same error; returns
    (canvas, kernel arrows)."""
    try:
        _, twin, none = _derive(make, False, monkeypatch)
    except ArithmeticError as e:
        # an arc (the Python path for both) the twin cannot resolve: so must the kernel's run fail
        with pytest.raises(type(e), match="^" + re.escape(str(e)) + "$"):
            _derive(make, True, monkeypatch)
        return None, 0
    c, kern, n = _derive(make, True, monkeypatch)
    assert none == 0
    assert twin.ids == kern.ids
    assert np.array_equal(float_bits(twin.local), float_bits(kern.local))
    assert np.array_equal(float_bits(twin.bounds), float_bits(kern.bounds))
    return c, n


def _eligible(c):
    """Arrows the wrapper sends to the kernel: bound, not stored as points, straight, no label."""
    bound = {b.from_id for b in c.bindings.values() if b.from_id in c.nodes and b.to_id in c.nodes}
    return sum(1 for i in bound if c.nodes[i].type == "arrow" and not A._keeps_points(c.nodes[i])
               and A._straight_unlabelled(c.nodes[i].props, c.nodes[i].text))


# --------------------------------------------------------------------------- real files
@pytest.mark.parametrize("path", SHARED_TLDR, ids=lambda p: p.name[:40])
def test_real_files_give_the_same_boxes(path, monkeypatch):
    c, n = _assert_same(lambda: load(path), monkeypatch)
    assert n == _eligible(c)


def test_real_files_use_the_kernel(monkeypatch):
    # the files above do exercise it: most of their bound arrows are straight
    total = sum(_assert_same(lambda p=p: load(p), monkeypatch)[1] for p in sorted(CONF.glob("arrows_*.tldr")))
    assert total >= 20


def test_synthetic_workspace_gives_the_same_boxes(monkeypatch):
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    _, n = _assert_same(lambda: synthetic_workspace(3000, seed=7), monkeypatch)
    assert n > 300


# --------------------------------------------------------------------------- generated canvases
_coord = st.one_of(st.floats(-400, 400), st.floats(-1e5, 1e5), st.sampled_from([0.0, -0.0, 100.0, 1e-7]))
_size = st.one_of(st.floats(0, 400), st.sampled_from([0.0, 1e-9, 0.5, 1.0, 100.0]))
_rot = st.one_of(st.just(0.0), st.sampled_from([math.pi / 2, math.pi, -math.pi / 4, 1e-12]), st.floats(-7, 7))
_anchor = st.one_of(st.floats(-0.3, 1.3), st.sampled_from([0.0, 0.5, 1.0, 1e-3, 0.999]))


@st.composite
def _target(draw, i):
    kind = draw(st.sampled_from(["geo"] * 6 + ["note", "text", "frame", "line", "image"]))
    props = {}
    if kind == "geo":
        props = {"geo": draw(st.sampled_from(GEOS)), "size": draw(st.sampled_from(["s", "m", "l", "xl"]))}
        if draw(st.booleans()):
            props["flipX"] = True
        if draw(st.booleans()):
            props["flipY"] = True
    elif kind in ("note", "text"):
        props = {"size": draw(st.sampled_from(["s", "m", "l", "xl"])), "scale": draw(st.sampled_from([1, 0.5, 2.5]))}
    elif kind == "line":
        pts = draw(st.lists(st.tuples(st.floats(-200, 200), st.floats(-200, 200)), min_size=2, max_size=5))
        props = {"points": {f"a{k}": {"id": f"a{k}", "index": f"a{k}", "x": x, "y": y} for k, (x, y) in enumerate(pts)},
                 "size": "m"}
        if draw(st.booleans()):
            props["spline"] = "cubic"
    return Node(f"shape:t{i}", kind, "page:page", f"a{i}", draw(_coord), draw(_coord), draw(_size), draw(_size),
                draw(_rot), props=props)


@st.composite
def _canvases(draw):
    targets = draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=4))
    nodes = [draw(_target(i)) for i in range(len(targets))]
    if len(nodes) > 1 and draw(st.booleans()):  # one target inside another, same frame
        outer = nodes[0]
        nodes[1] = nodes[1].replace(x=outer.x + 10, y=outer.y + 10, rotation=outer.rotation,
                                    w=outer.w / 3, h=outer.h / 3)
    arrows, bindings = [], []
    for k in range(draw(st.integers(1, 4))):
        aid = f"shape:arrow{k}"
        props = {"start": {"x": draw(_coord), "y": draw(_coord)}, "end": {"x": draw(_coord), "y": draw(_coord)},
                 "arrowheadStart": draw(st.sampled_from(["none", "arrow", "triangle"])),
                 "arrowheadEnd": draw(st.sampled_from(["none", "arrow", "dot"])),
                 "size": draw(st.sampled_from(["s", "m", "l", "xl"])),
                 "bend": draw(st.sampled_from([0, 0.0, 3.0, -7.9, 0.5])),
                 "scale": draw(st.sampled_from([1, 1.0, 0.5, 2.0, 0, -1.0]))}
        if draw(st.integers(0, 9)) == 0:
            props["bend"] = 40.0  # an arc: the Python path, beside the kernel's arrows
        if draw(st.integers(0, 9)) == 0:
            props["kind"] = "elbow"
        text = "label" if draw(st.integers(0, 9)) == 0 else None
        arrows.append(Node(aid, "arrow", "page:page", f"b{k}", draw(_coord), draw(_coord), rotation=draw(_rot),
                           text=text, props=props))
        for term in ("start", "end"):
            t = draw(st.integers(-1, len(nodes) - 1))
            if t < 0:
                continue
            bprops = {"isExact": True} if draw(st.integers(0, 4)) == 0 else {}
            bindings.append(Binding(f"binding:{k}{term}", "arrow", aid, nodes[t].id, term,
                                    (draw(_anchor), draw(_anchor)), draw(st.booleans()), bprops))
    return nodes, arrows, bindings


_build = canvas_maker


@pytest.mark.generated
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_canvases())
def test_generated_canvases_give_the_same_boxes(spec):
    with pytest.MonkeyPatch.context() as mp:
        c, n = _assert_same(_build(spec), mp)
    assert c is None or n == _eligible(c)


@pytest.mark.generated
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_canvases())
def test_kernel_ends_match_the_twin(spec):
    # the drawn ends and isValid too, not only the boxes they make
    c = _build(spec)()
    try:
        d = c.geometry()
    except ArithmeticError:
        assume(False)  # an arc the Python path cannot resolve (see _assert_same)
    nodes = [c.nodes[i] for i in d.ids]
    batch = A._StraightBatch(d, nodes)
    ids = []
    for r, nd in enumerate(nodes):
        if nd.type != "arrow" or not A._straight_unlabelled(nd.props, nd.text):
            continue
        terms = {b.terminal: b for b in c.bindings.values() if b.from_id == nd.id}
        batch.add(r, terms, [])
        ids.append(nd.id)
    batch.run(types.SimpleNamespace(px=d.px, py=d.py, rotation=d.rotation, local=d.local.copy(), row=d.row),
              nodes, {})
    for k, aid in enumerate(ids):
        g = A.arrow_geometry(c, aid)
        assert g.kind == "straight"
        assert float_bits(batch.ends[k]).tolist() == float_bits(g.start + g.end).tolist()
        assert bool(batch.valid[k]) == g.valid


@pytest.mark.generated
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_canvases(), st.floats(-300, 300), st.floats(-300, 300), _rot)
def test_an_edit_gives_the_same_boxes(spec, dx, dy, rot):
    # the incremental pass (one target moved and turned) resolves through the kernel too
    def make():
        c = _build(spec)()
        c.geometry()
        t = c.nodes["shape:t0"]
        c.update("shape:t0", x=t.x + dx, y=t.y + dy, rotation=rot)
        return c

    with pytest.MonkeyPatch.context() as mp:
        _assert_same(make, mp)


# --------------------------------------------------------------------------- hypot
@pytest.mark.generated
@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True, allow_infinity=True))
def test_python_hypot_is_math_hypot(x, y):
    got = _core.python_hypot(x, y, VARIANT)
    want = math.hypot(x, y)
    assert float_bits(got) == float_bits(want) or (math.isnan(got) and math.isnan(want))


@pytest.mark.generated
@settings(max_examples=300)
@given(st.integers(-2**60, 2**60), st.integers(-2**60, 2**60), st.integers(-1130, 960))
def test_python_hypot_is_math_hypot_across_scales(a, b, e):
    x, y = math.ldexp(a, e), math.ldexp(b, e)
    assert float_bits(_core.python_hypot(x, y, VARIANT)) == float_bits(math.hypot(x, y))


# --------------------------------------------------------------------------- bad input
def _good():
    """One arrow bound at its end to a 100 x 100 box, as the wrapper passes it."""
    f, i, b = np.float64, np.int64, bool
    return dict(px=np.array([0.0, 200.0]), py=np.array([0.0, 0.0]), rotation=np.array([0.0, 0.0]),
                arrow_row=np.array([0], dtype=i), points=np.array([[0.0, 50.0, 0.0, 0.0]]),
                scale=np.array([1.0]), stroke=np.array([3.5]), heads=np.array([[False, True]]),
                target=np.array([[-1, 1]], dtype=i), outline=np.array([[0, 0]], dtype=i),
                box_outline=np.array([[0, 0]], dtype=i), anchor=np.array([[0.0, 0.0, 0.5, 0.5]], dtype=f),
                precise=np.array([[False, False]], dtype=b), exact=np.array([[False, False]], dtype=b),
                offsets=np.array([0, 4], dtype=i),
                outline_points=np.array([[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0]]),
                closed=np.array([True]), bounds=np.array([[0.0, 0.0, 100.0, 100.0]]),
                outline_stroke=np.array([1.75]), hypot_variant=VARIANT)


def test_the_good_input_resolves():
    boxes, ends, valid = _core.resolve_straight_arrows(**_good())
    assert ends.tolist() == [[0.0, 50.0, 186.5, 50.0]] and boxes.tolist() == [[0.0, 50.0, 186.5, 50.0]]
    assert valid.tolist() == [True]


def _with(**changes):
    g = _good()
    for k, v in changes.items():
        if callable(v):
            g[k] = v(g[k])
        else:
            g[k] = v
    return g


def _nan_at(index):
    def put(a):
        a = a.copy()
        a[index] = np.nan
        return a
    return put


BAD = [
    (_with(px=np.array([0.0, 200.0], dtype=np.float32)), InvalidInputError,
     "px must have dtype float64, got float32; convert it with np.ascontiguousarray(px, dtype=np.float64)"),
    (_with(py=np.zeros(3)), InvalidInputError, "py must have shape (2,), got (3,)"),
    (_with(points=np.zeros((1, 3))), InvalidInputError, "points must have shape (1, 4), got (1, 3)"),
    (_with(heads=np.zeros((1, 2), dtype=np.int64)), InvalidInputError,
     "heads must have dtype bool, got int64; convert it with np.ascontiguousarray(heads, dtype=np.bool)"),
    (_with(anchor=np.zeros((4, 1))), InvalidInputError, "anchor must have shape (1, 4), got (4, 1)"),
    (_with(target=np.array([[-1, 1]], dtype=np.int32)), InvalidInputError,
     "target must have dtype int64, got int32; convert it with np.ascontiguousarray(target, dtype=np.int64)"),
    (_with(offsets=np.array([0, 4, 4], dtype=np.int64)), InvalidInputError, "offsets must have shape (2,), got (3,)"),
    (_with(offsets=np.array([0, 3], dtype=np.int64)), InvalidInputError,
     "offsets must end at the number of outline points (4), got 3"),
    (_with(offsets=np.array([1, 4], dtype=np.int64)), InvalidInputError, "outline offsets must start at 0, got 1"),
    (_with(offsets=np.array([0, 0], dtype=np.int64), outline_points=np.zeros((0, 2))), InvalidInputError,
     "outline 0 has no points (offsets must ascend)"),
    (_with(arrow_row=np.array([2], dtype=np.int64)), OutOfRangeError, "arrow 0 row 2 is outside [0, 2)"),
    (_with(target=np.array([[-1, -5]], dtype=np.int64)), OutOfRangeError,
     "arrow 0 end target row -5 is outside [0, 2)"),
    (_with(outline=np.array([[0, 3]], dtype=np.int64)), OutOfRangeError, "arrow 0 end outline 3 is outside [0, 1)"),
    (_with(anchor=_nan_at((0, 2))), InvalidInputError, "arrow 0 end anchor x is not finite (nan)"),
    (_with(points=_nan_at((0, 1))), InvalidInputError, "arrow 0 start point y is not finite (nan)"),
    (_with(px=_nan_at(1)), InvalidInputError, "arrow 0 end target x is not finite (nan)"),
    (_with(rotation=lambda a: np.array([np.inf, 0.0])), InvalidInputError, "arrow 0 rotation is not finite (inf)"),
    (_with(scale=np.array([0.0])), InvalidInputError, "arrow 0 scale is 0"),
    (_with(stroke=np.array([np.nan])), InvalidInputError, "arrow 0 stroke is not finite (nan)"),
    (_with(outline_points=_nan_at((2, 0))), InvalidInputError, "outline point 2 is not finite (nan)"),
    (_with(bounds=_nan_at((0, 3))), InvalidInputError, "outline 0 bounds is not finite (nan)"),
    (_with(outline_stroke=np.array([np.inf])), InvalidInputError, "outline 0 stroke is not finite (inf)"),
    (_with(py=_nan_at(0)), InvalidInputError, "arrow 0 y is not finite (nan)"),
    (_with(rotation=lambda a: np.array([0.0, -np.inf])), InvalidInputError,
     "arrow 0 end target rotation is not finite (-inf)"),
    (_with(hypot_variant=7), InvalidInputError, "hypot_variant must be 0 (CPython 3.10-3.11) or 1 (3.12+), got 7"),
]


@pytest.mark.parametrize("kwargs, error, message", BAD, ids=[m[:40] for _, _, m in BAD])
def test_bad_input_is_rejected(kwargs, error, message):
    with pytest.raises(error, match="^" + re.escape(message) + "$") as info:
        _core.resolve_straight_arrows(**kwargs)
    assert isinstance(info.value, SpatialObsError)
    assert "\n" not in str(info.value)


def test_bad_hypot_variant_is_rejected():
    with pytest.raises(InvalidInputError, match=re.escape("hypot_variant must be 0 (CPython 3.10-3.11) or 1 (3.12+), got -1")):
        _core.python_hypot(3.0, 4.0, -1)


def test_the_variant_follows_the_interpreter():
    assert VARIANT == (0 if sys.version_info < (3, 12) else 1)

