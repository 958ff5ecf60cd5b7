"""The load path's fast routes against their twins: the compiled box of a draw stroke against the
Python smoothing, and the importers' own checked fields against the sanitizer, down to the bytes
of the first observation of every shared real file."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import shared_files
from spatialobs.canvas import load, observe

F = importlib.import_module("spatialobs.canvas.document.freehand")
X = importlib.import_module("spatialobs.canvas.formats.excalidraw")
T = importlib.import_module("spatialobs.canvas.formats.tldraw")

REAL = shared_files("canvases")
needs_real = pytest.mark.skipif(not REAL, reason="../shared/data/canvases is absent")


def _compiled() -> Any:
    return pytest.importorskip("spatialobs.canvas.document._cfreehand")


def _both(node_type: str, props: Dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> List[str]:
    out = []
    for kernel in (True, False):
        monkeypatch.setattr(F, "DRAW_KERNEL", kernel)
        out.append(repr(F.freehand_box(node_type, props)))
    return out


def test_compiled_stroke_box_is_in_use():
    assert F._draw_extent is _compiled().draw_extent


@needs_real
def test_every_real_draw_stroke_boxed_alike(monkeypatch):
    _compiled()
    n = 0
    for path in REAL:
        if path.suffix != ".tldr":
            continue
        for rec in json.loads(path.read_bytes())["records"]:
            if rec.get("typeName") == "shape" and rec.get("type") == "draw":
                a, b = _both("draw", rec["props"], monkeypatch)
                assert a == b, (path.name, rec["id"])
                n += 1
    assert n > 500


_coord = st.one_of(st.floats(-40000, 40000, allow_nan=False), st.integers(-40000, 40000),
                   st.floats(-1e-3, 1e-3), st.sampled_from([0.0, -0.0, 2.0 ** -25, 3 * 2.0 ** -26, 32751.0, -32751.9]))
_odd = st.sampled_from([True, "3", None, float("nan"), float("inf"), 40000.0, 10 ** 400, -32752.0])


@st.composite
def _stroke(draw: Any) -> Dict[str, Any]:
    n = draw(st.integers(1, 110))
    odd = draw(st.integers(0, 7)) == 0  # now and then a point the compiled pass hands back
    pts: List[Any] = []
    x = y = 0.0
    for i in range(n):
        step = draw(st.sampled_from([0.0, 1e-5, 0.3, 1.0, 7.0, 60.0]))
        x, y = x + draw(st.floats(-1, 1)) * step, y + draw(st.floats(-1, 1)) * step
        if i == 0:
            x, y = draw(_coord), draw(_coord)
        p: Any = {"x": x, "y": y, "z": 0.5}
        if odd and draw(st.integers(0, n)) == 0:
            p = draw(st.sampled_from([{"x": draw(_odd), "y": 1.0}, {"x": 1}, [1.0, 2.0], "p"]))
        pts.append(p)
    props: Dict[str, Any] = {"segments": [{"type": "free", "points": pts}],
                             "size": draw(st.sampled_from(["s", "m", "l", "xl"])),
                             "isComplete": draw(st.booleans()), "isPen": draw(st.booleans())}
    if draw(st.integers(0, 5)) == 0:
        props["scale"] = draw(st.sampled_from([0.25, 1, 3.5]))
    return props


@pytest.mark.generated
@settings(max_examples=400, deadline=None)
@given(_stroke())
def test_generated_strokes_boxed_alike(props):
    _compiled()
    with pytest.MonkeyPatch.context() as mp:
        a, b = _both("draw", props, mp)
    assert a == b


def test_float16_rounding_of_the_steps_matches_numpy():
    """Each step is stored as the nearest float16 (ties to even), subnormal ones included."""
    import numpy as np

    D = _compiled()
    steps = [2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14 + 2.0 ** -25, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 2047.5, 2048.5,
             -0.1, 1e-9, 20000.25]
    pts = [{"x": 0.0, "y": 0.0}]
    for s in steps:
        pts.append({"x": pts[-1]["x"] + s, "y": 0.0})
    want = np.cumsum(np.concatenate([[0.0], np.diff([p["x"] for p in pts]).astype(np.float16).astype(np.float64)]))
    got = D.draw_extent(pts, 0.0, 0.0, True)
    assert got is not None
    assert got[5] == want.min() and got[7] == want.max()


@pytest.mark.parametrize("points", [[{"x": True, "y": 0}], [{"x": "1", "y": 0}], [[0.0, 1.0]], [{"y": 1.0}],
                                    [{"x": 40000.0, "y": 0.0}], [{"x": float("nan"), "y": 0.0}], [{"x": 10 ** 400, "y": 0}]])
def test_compiled_stroke_box_hands_back_what_it_does_not_read(points):
    assert _compiled().draw_extent(points, 4.5, 0.5, False) is None


def test_compiled_stroke_box_rejects_what_is_not_a_list():
    with pytest.raises(TypeError, match="list"):
        _compiled().draw_extent(({"x": 0.0, "y": 0.0},), 4.5, 0.5, False)


def _first_observation(path: Path) -> List[str]:
    c = load(path)
    return [observe(c).to_json(), c.to_json(), repr(c.diagnostics)]


@needs_real
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split("__")[1][:24])
def test_first_observation_identical_through_the_twins(path, monkeypatch):
    """Compiled stroke boxes and the importers' own field checks on, then all off (the sanitizer
    and the Python smoothing): the same observation, native form and diagnostics, byte for byte."""
    fast = _first_observation(path)
    monkeypatch.setattr(F, "DRAW_KERNEL", False)
    monkeypatch.setattr(X, "CLEAN_FIELDS", False)
    monkeypatch.setattr(T, "CLEAN_FIELDS", False)
    assert _first_observation(path) == fast


_curve_coord = st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.integers(-1000, 1000).map(float),
                         st.sampled_from([0.0, -0.0, 1e-9, 1e120]))


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(_curve_coord, _curve_coord), min_size=1, max_size=9), min_size=1, max_size=6))
def test_curve_boxes_equal_curve_box_one_by_one(curves):
    S = importlib.import_module("spatialobs.canvas.document.shapes")
    assert [repr(b) for b in S.curve_boxes(curves)] == [repr(S.curve_box(c)) for c in curves]


@needs_real
def test_every_real_excalidraw_curve_boxed_alike():
    S = importlib.import_module("spatialobs.canvas.document.shapes")
    curves = [[[float(a), float(b)] for a, b in e["points"]] for p in REAL if p.suffix == ".excalidraw"
              for e in json.loads(p.read_bytes())["elements"] if isinstance(e.get("points"), list) and e["points"]]
    assert len(curves) > 100
    assert [repr(b) for b in S.curve_boxes(curves)] == [repr(S.curve_box(c)) for c in curves]


def test_rounded_arrow_box_seeded_at_import_is_the_derived_one():
    """The box the Excalidraw importer keeps for a rounded arrow is the one a derivation computes."""
    from spatialobs.canvas.document.shapes import local_box

    el = {"id": "a", "type": "arrow", "x": 0, "y": 0, "points": [[0, 0], [10, 10], [10, 20]], "roundness": {"type": 2}}
    c = load({"type": "excalidraw", "elements": [el]})
    nd, box = c._local_cache["a"]
    assert nd is c.node("a") and box == local_box(nd.type, nd.props, nd.w, nd.h) and box[2] > 10.0
