"""The compiled target outlines against their Python twin, bit for bit.

The straight-arrow batch builds its targets' outlines (boxes of shapes without an
outline of their own, and the geo kinds drawn with straight lines) with
``_core.target_outlines``; ``arrows.OUTLINE_KERNEL = False`` builds every one with
:func:`~spatialobs.canvas.document.arrows.target_outline`, the twin the kernel is
ported from. Every comparison here is of the float bits, or of the observation's bytes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import shared_files
from spatialobs._errors import InvalidInputError
from spatialobs.canvas import load, observe
from spatialobs.canvas.document import arrows as A
from spatialobs.canvas.document.records import Node

REAL = shared_files("canvases")
GEOS = sorted(A._GEO_KINDS) + sorted(A._GEO_CURVED) + ["no-such-kind", ""]

pytestmark = pytest.mark.skipif(A._target_outlines is None or A._HYPOT_VARIANT is None,
                                reason="the compiled core has no target_outlines")


def _bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def _kernel(nodes):
    """The outlines of ``nodes`` as the batch builds them: compiled where it can, else the twin's points."""
    kinds, sizes, flips, ex_off, ex_pts, ex_bounds = [], [], [], [0], [], []
    for nd in nodes:
        code = A._kernel_outline_kind(nd)
        if code is None:
            o = A.target_outline(nd.type, nd.props, float(nd.w), float(nd.h), nd.id)
            ex_pts += o.points
            ex_off.append(len(ex_pts))
            ex_bounds.append(o.bounds)
            kinds.append(-1)
            sizes.append((0.0, 0.0))
            flips.append((False, False))
        else:
            kinds.append(code)
            sizes.append((float(nd.w), float(nd.h)))
            flips.append((bool(nd.props.get("flipX")), bool(nd.props.get("flipY"))) if code else (False, False))
    k = len(nodes)
    return A._target_outlines(np.array(kinds, dtype=np.int64), np.array(sizes, dtype=np.float64).reshape(k, 2),
                              np.array(flips, dtype=bool).reshape(k, 2), np.array(ex_off, dtype=np.int64),
                              np.array(ex_pts, dtype=np.float64).reshape(-1, 2),
                              np.array(ex_bounds, dtype=np.float64).reshape(-1, 4))


def _twin(nodes):
    offsets, pts, bounds = [0], [], []
    for nd in nodes:
        o = A.target_outline(nd.type, nd.props, float(nd.w), float(nd.h), nd.id)
        pts += o.points
        offsets.append(len(pts))
        bounds.append(o.bounds)
    return (np.array(offsets, dtype=np.int64), np.array(pts, dtype=np.float64).reshape(-1, 2),
            np.array(bounds, dtype=np.float64).reshape(-1, 4))


def _assert_same(nodes):
    try:
        want = _twin(nodes)
    except (ArithmeticError, ValueError):
        assume(False)  # a curve the twin cannot sample (a side near the float range): Python for both
    got = _kernel(nodes)
    assert np.array_equal(got[0], want[0])
    assert np.array_equal(_bits(got[1]), _bits(want[1]))
    assert np.array_equal(_bits(got[2]), _bits(want[2]))


# --------------------------------------------------------------------------- generated outlines
_side = st.one_of(st.floats(-50, 5000), st.floats(1e-300, 1e300),
                  st.sampled_from([0.0, -0.0, 1e-9, 0.5, 1.0, 1.0000000000000002, 3.0, 100.0, math.inf, math.nan]))


@st.composite
def _node(draw, i):
    kind = draw(st.sampled_from(["geo"] * 8 + ["note", "frame", "image", "text", "line"]))
    props = {}
    if kind == "geo":
        props["geo"] = draw(st.sampled_from(GEOS))
        for f in ("flipX", "flipY"):
            v = draw(st.sampled_from([None, True, False, 1, 0, "yes"]))
            if v is not None:
                props[f] = v
    if kind == "line":
        props["points"] = {"a1": {"x": 0, "y": 0}, "a2": {"x": draw(_side), "y": 5.0}}
    if draw(st.booleans()):
        props["size"] = draw(st.sampled_from(["s", "m", "l", "xl"]))
    # curves (built in Python for both) only at sizes the twin samples quickly
    side = st.floats(0, 500) if props.get("geo") in A._GEO_CURVED else _side
    return Node(f"shape:n{i}", kind, "page:page", f"a{i}", 0.0, 0.0, draw(side), draw(side), props=props)


@pytest.mark.generated
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(*[_node(i) for i in range(n)])))
def test_generated_outlines_match_the_twin(nodes):
    _assert_same(list(nodes))


@pytest.mark.parametrize("geo", GEOS)
@pytest.mark.parametrize("flip", [(False, False), (True, False), (False, True), (True, True)])
def test_every_geo_kind_matches_the_twin(geo, flip):
    props = {"geo": geo, "flipX": flip[0], "flipY": flip[1]}
    _assert_same([Node(f"shape:{w}x{h}", "geo", "page:page", "a1", 0.0, 0.0, w, h, props=props)
                  for w, h in [(100.0, 50.0), (37.3, 211.9), (0.2, 0.7), (1e6 if geo not in A._GEO_CURVED else 900.0, 3.0),
                               (1.0, 1.0)]])


def test_the_kernel_builds_the_line_kinds_and_leaves_curves_to_python():
    def kind(t, geo=None, w=10.0):
        return A._kernel_outline_kind(Node("shape:x", t, "page:page", "a1", 0.0, 0.0, w, 5.0,
                                           props={} if geo is None else {"geo": geo}))

    assert kind("note") == 0 and kind("frame") == 0 and kind("image") == 0
    assert kind("geo") == 1 and kind("geo", "no-such-kind") == 1 and kind("geo", "star") == 14
    assert kind("geo", "ellipse") is None and kind("geo", "cloud") is None and kind("geo", "heart") is None
    assert kind("geo", w=math.inf) is None and kind("text") is None and kind("line") is None


# --------------------------------------------------------------------------- whole derivations and observations
def _with(flag, make, monkeypatch):
    monkeypatch.setattr(A, "OUTLINE_KERNEL", flag)
    c = make()
    d = c.geometry()
    return _bits(d.local).tobytes() + _bits(d.bounds).tobytes(), observe(c, include_bounds=True).to_json()


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_real_files_observe_the_same_bytes(path, monkeypatch):
    assert _with(True, lambda: load(path), monkeypatch) == _with(False, lambda: load(path), monkeypatch)


def test_real_files_use_the_kernel(monkeypatch):
    calls = []
    real = A._target_outlines
    monkeypatch.setattr(A, "_target_outlines", lambda *a: calls.append(len(a[0])) or real(*a))
    for p in REAL:
        if p.suffix == ".tldr":
            load(p).geometry()
    if not REAL:
        pytest.skip("the shared canvases are absent")
    assert sum(calls) >= 20


@pytest.mark.parametrize("make", ["diagram_workspace", "synthetic_workspace"])
def test_workspaces_give_the_same_geometry(make, monkeypatch):
    from spatialobs.canvas.scenarios import handoff

    mk = getattr(handoff, make)
    assert _with(True, lambda: mk(3000, seed=7), monkeypatch) == _with(False, lambda: mk(3000, seed=7), monkeypatch)


def test_diagram_targets_are_built_by_the_kernel(monkeypatch):
    from spatialobs.canvas.scenarios.handoff import diagram_workspace

    called = []
    monkeypatch.setattr(A, "_target_outline", lambda *a, **k: called.append(a[0]))
    monkeypatch.setattr(A, "_OUTLINES", {})
    diagram_workspace(2000, seed=7).geometry()
    assert called == []  # every target is a rectangle card: none built in Python


# --------------------------------------------------------------------------- bad input
def _args(**over):
    args = dict(kind=np.array([1, -1], dtype=np.int64), size=np.array([[3.0, 4.0], [0.0, 0.0]]),
                flip=np.zeros((2, 2), dtype=bool), ex_offsets=np.array([0, 2], dtype=np.int64),
                ex_points=np.array([[1.0, 2.0], [3.0, 4.0]]), ex_bounds=np.array([[1.0, 2.0, 3.0, 4.0]]))
    args.update(over)
    return args


def test_the_good_input_builds():
    offsets, pts, bounds = A._target_outlines(**_args())
    assert offsets.tolist() == [0, 5, 7]
    assert pts.tolist() == [[0, 0], [3, 0], [3, 4], [0, 4], [0, 0], [1, 2], [3, 4]]
    assert bounds.tolist() == [[0, 0, 3, 4], [1, 2, 3, 4]]


BAD = [
    (dict(kind=np.array([15, -1], dtype=np.int64)), "kind of outline 0 must be in [-1, 14], got 15"),
    (dict(kind=np.array([1, -2], dtype=np.int64)), "kind of outline 1 must be in [-1, 14], got -2"),
    (dict(kind=np.array([1, 1], dtype=np.int64)),
     "the batch has 0 outlines of kind -1 (explicit) but 1 explicit outlines were given"),
    (dict(kind=np.array([1, -1], dtype=np.int32)), "kind must have dtype int64, got int32"),
    (dict(size=np.zeros((2, 3))), "size must have shape (2, 2), got (2, 3)"),
    (dict(flip=np.zeros((2, 2))), "flip must have dtype bool, got float64"),
    (dict(ex_offsets=np.array([1, 2], dtype=np.int64)), "ex_offsets must start at 0, got 1"),
    (dict(ex_offsets=np.array([0, 0], dtype=np.int64), ex_points=np.zeros((0, 2))),
     "explicit outline 0 has no points (ex_offsets 0 to 0)"),
    (dict(ex_offsets=np.array([0, 1], dtype=np.int64)),
     "ex_offsets must end at the number of explicit points (2), got 1"),
    (dict(ex_offsets=np.array([], dtype=np.int64)), "ex_offsets must have shape (e + 1,), got (0,)"),
    (dict(ex_bounds=np.zeros((2, 4))), "ex_bounds must have shape (1, 4), got (2, 4)"),
    (dict(kind=np.zeros((2, 1), dtype=np.int64)), "kind must have shape (k,), got (2, 1)"),
]


@pytest.mark.parametrize("over, message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_input_is_rejected(over, message):
    with pytest.raises(InvalidInputError) as e:
        A._target_outlines(**_args(**over))
    assert str(e.value).startswith(message)
