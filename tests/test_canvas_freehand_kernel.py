"""The compiled freehand smoothing (``_cfreehand``) against its Python twins in ``freehand``:
the stroke box, the smoothed points and the outline polygon, repr for repr, on generated strokes
of every length and on every real draw and highlight shape, down to the bytes of the first
observation of every shared real file."""

from __future__ import annotations

import base64
import importlib
import json
import math
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import shared_files
from spatialobs.canvas import load, observe

F = importlib.import_module("spatialobs.canvas.document.freehand")
C = pytest.importorskip("spatialobs.canvas.document._cfreehand")

REAL = shared_files("canvases")
needs_real = pytest.mark.skipif(not REAL, reason="../shared/data/canvases is absent")

# the lengths around the old 96-point switch to a convolution, and a long stroke
LENGTHS = (1, 2, 3, 4, 5, 95, 96, 97, 1000)


@st.composite
def _points(draw: Any) -> np.ndarray:
    n = draw(st.one_of(st.sampled_from(LENGTHS), st.integers(1, 140)))
    scale = draw(st.sampled_from([1e-9, 1e-4, 1.0, 30.0, 1e5, 1e150]))
    x0 = draw(st.sampled_from([0.0, -0.0, 1.5, -1234.5, 3e7, 1e300]))
    steps = np.array(draw(st.lists(st.floats(-1, 1), min_size=2 * n, max_size=2 * n))).reshape(n, 2) * scale
    repeat = draw(st.lists(st.integers(0, n - 1), max_size=max(1, n // 4)))
    steps[repeat] = 0.0  # repeated points
    pts = x0 + np.cumsum(steps, axis=0)
    if draw(st.integers(0, 9)) == 0:  # now and then a non-finite point
        pts[draw(st.integers(0, n - 1))] = draw(st.sampled_from([(math.inf, 0.0), (math.nan, 1.0), (-math.inf, math.inf)]))
    return pts


_size = st.one_of(st.sampled_from([0.0, 1e-6, 1.0, 3.0, 4.5, 22.4, 37.28, 1e6]), st.floats(0.01, 200))
_streamline = st.one_of(st.sampled_from([0.0, 0.5, 0.62, 0.64, 0.74, 1.0]), st.floats(0, 1))
_smoothing = st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1))


def _rows(pts: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    return np.ascontiguousarray(pts[:, 0]), np.ascontiguousarray(pts[:, 1])


@pytest.mark.generated
@settings(max_examples=500, deadline=None)
@given(_points(), _size, _streamline, st.booleans())
def test_stroke_box_is_the_python_loop(pts, size, streamline, last):
    want = F._stroke_extent(pts[:, 0].tolist(), pts[:, 1].tolist(), size, streamline, last)
    assert repr(C.stroke_extent(*_rows(pts), size, streamline, last)) == repr(want)


@pytest.mark.generated
@settings(max_examples=500, deadline=None)
@given(_points(), _size, _streamline, st.booleans())
def test_stroke_points_are_the_python_streamline(pts, size, streamline, last):
    s = F._streamline(pts[:, 0].tolist(), pts[:, 1].tolist(), size, streamline, last)
    got = C.stroke_points(*_rows(pts), size, streamline, last)
    assert repr(got.tolist()) == repr(np.column_stack([s.x, s.y]).tolist())
    # and the box agrees with the points it bounds
    x0, y0, x1, y1, count = C.stroke_extent(*_rows(pts), size, streamline, last)
    assert count == len(got)
    if np.isfinite(got).all():
        assert (x0, y0, x1, y1) == (got[:, 0].min(), got[:, 1].min(), got[:, 0].max(), got[:, 1].max())


@pytest.mark.generated
@settings(max_examples=500, deadline=None)
@given(_points(), _size.filter(lambda s: s > 0), _streamline, _smoothing, st.booleans())
def test_stroke_outline_is_the_python_outline(pts, size, streamline, smoothing, last):
    want = F._outline(pts, size, streamline, smoothing, last)
    got = C.stroke_outline(*_rows(pts), size, streamline, smoothing, last)
    assert repr(got.tolist()) == repr(want.tolist())


def _corners(n: int) -> np.ndarray:
    # a zigzag with hard corners (the outline's half turns) and a doubling back
    pts = [(0.0, 0.0)]
    for i in range(1, n):
        pts.append((pts[-1][0] + (40.0 if i % 2 else -39.0), pts[-1][1] + (3.0 if i % 3 else -25.0)))
    return np.array(pts)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("size,streamline,smoothing,last", [(4.5, 0.5, 0.5, True), (37.28, 0.5, 0.5, False),
                                                             (1.0, 0.0, 0.0, True), (200.0, 1.0, 1.0, False)])
def test_outline_with_hard_corners_is_the_python_outline(n, size, streamline, smoothing, last):
    pts = _corners(n)
    want = F._outline(pts, size, streamline, smoothing, last)
    got = C.stroke_outline(*_rows(pts), size, streamline, smoothing, last)
    assert repr(got.tolist()) == repr(want.tolist())
    assert len(got) >= 3


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(st.integers(1, 1200), st.integers(0, 2 ** 32 - 1), st.sampled_from([2.0, 4.5, 11.0]), st.booleans())
def test_long_point_dicts_boxed_as_the_python_loop(n, seed, size, last):
    rng = np.random.default_rng(seed)
    xy = np.cumsum(rng.normal(0, rng.choice([0.01, 1.0, 20.0]), (n, 2)), axis=0) + rng.uniform(-3e4, 3e4, 2)
    xy = np.clip(xy, -32000, 32000)
    pts: List[Dict[str, Any]] = [{"x": float(x), "y": float(y), "z": 0.5} for x, y in xy]
    got = C.draw_extent(pts, size, 0.64, last)
    q = F._fast_listed(pts)
    assert got is not None and q is not None
    xs, ys = q.tolist()
    assert repr(got[:5]) == repr(F._stroke_extent(xs, ys, size, 0.64, last))
    assert got[5:] == (min(xs), min(ys), max(xs), max(ys))


@st.composite
def _path_bytes(draw: Any) -> bytes:
    # tldraw's stored path: a float32 head, then float16 steps (any bit pattern now and then)
    k = draw(st.sampled_from([2, 3]))
    n = draw(st.one_of(st.sampled_from(LENGTHS), st.integers(0, 140)))
    head = np.array([draw(st.floats(-1e6, 1e6, width=32)) for _ in range(k)], "<f4").tobytes()
    if draw(st.integers(0, 9)) == 0:
        head = draw(st.binary(min_size=4 * k, max_size=4 * k))
    scale = draw(st.sampled_from([1e-6, 0.01, 1.0, 30.0, 3000.0]))
    steps = np.array(draw(st.lists(st.floats(-1, 1), min_size=n * k, max_size=n * k))) * scale
    body = steps.astype("<f2").tobytes()
    if n and draw(st.integers(0, 5)) == 0:
        raw = bytearray(body)
        raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))  # an odd bit pattern: NaN, inf
        body = bytes(raw)
    return head + body + draw(st.binary(max_size=2 * k - 1))  # a ragged tail is ignored


@pytest.mark.generated
@settings(max_examples=500, deadline=None)
@given(_path_bytes(), st.sampled_from([2, 3]), _size, _streamline, st.booleans())
def test_path_box_is_decode_path_and_the_python_loop(raw, dim, size, streamline, last):
    got = C.path_extent(raw, dim, size, streamline, last)
    q = F.decode_path(base64.b64encode(raw).decode(), dim)
    if len(q) == 0 or not np.isfinite(q).all():
        assert got is None
        return
    want = F._stroke_extent(q[:, 0].tolist(), q[:, 1].tolist(), size, streamline, last)
    assert got is not None and repr(got[:5]) == repr(want)
    # the input box only enters differences (the dot test): equal as numbers (numpy's min may pick either zero)
    assert got[5:] == (q[:, 0].min(), q[:, 1].min(), q[:, 0].max(), q[:, 1].max())


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(_path_bytes(), st.sampled_from([2, 3, 2.0, True, None, "2"]), st.sampled_from(["s", "m", "l", "xl"]),
       st.booleans(), st.booleans(), st.sampled_from([None, "", "=", "not base64!", "QUJD"]))
def test_path_strokes_boxed_alike_through_the_twins(raw, dim, size, complete, pen, text):
    seg: Dict[str, Any] = {"type": "free", "path": base64.b64encode(raw).decode() if text is None else text}
    if dim is not None:
        seg["dim"] = dim
    props = {"segments": [seg], "size": size, "isComplete": complete, "isPen": pen}
    with pytest.MonkeyPatch.context() as mp:
        fast = _shape_views("draw", props)
        mp.setattr(F, "DRAW_KERNEL", False)
        mp.setattr(F, "STROKE_KERNEL", False)
        assert _shape_views("draw", props) == fast


def test_path_box_refuses_what_is_not_bytes():
    with pytest.raises(TypeError, match="bytes"):
        C.path_extent("AAAA", 3, 4.5, 0.5, True)


def test_public_functions_use_the_compiled_smoothing(monkeypatch):
    pts = _corners(50)
    fast = (F.stroke_points(pts, 4.5, 0.5, True), F.stroke_outline(pts, 4.5, 0.5, 0.5, True))
    monkeypatch.setattr(F, "STROKE_KERNEL", False)
    slow = (F.stroke_points(pts, 4.5, 0.5, True), F.stroke_outline(pts, 4.5, 0.5, 0.5, True))
    assert [repr(a.tolist()) for a in fast] == [repr(a.tolist()) for a in slow]
    assert F._cstroke_outline is C.stroke_outline and F._cstroke_points is C.stroke_points
    assert F._cstroke_extent is C.stroke_extent and F._path_extent is C.path_extent


def test_outline_of_a_non_finite_size_stays_with_the_twin():
    # the compiled outline refuses it; the public function leaves it to the Python twin
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        F.stroke_outline([(0, 0), (10, 0)], math.nan)
    assert F.stroke_outline([(0, 0), (10, 0)], -1.0).shape == (0, 2)


# ------------------------------------------------------------------ bad input to the compiled functions


@pytest.mark.parametrize("fn,extra", [(C.stroke_extent, (4.5, 0.5, True)), (C.stroke_points, (4.5, 0.5, True)),
                                      (C.stroke_outline, (4.5, 0.5, 0.5, True))])
def test_compiled_functions_refuse_mismatched_and_empty_points(fn, extra):
    with pytest.raises(ValueError, match="xs and ys differ in length: 2 and 1"):
        fn(np.zeros(2), np.zeros(1), *extra)
    with pytest.raises(ValueError, match="a stroke needs at least one point"):
        fn(np.zeros(0), np.zeros(0), *extra)
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        fn(np.zeros(2, dtype=np.float32), np.zeros(2, dtype=np.float32), *extra)
    with pytest.raises(ValueError, match="ndarray is not C-contiguous"):
        fn(np.zeros((2, 4))[:, 0], np.zeros((2, 4))[:, 1], *extra)


@pytest.mark.parametrize("size", [0.0, -1.0, math.nan, math.inf])
def test_compiled_outline_refuses_a_size_not_positive_and_finite(size):
    with pytest.raises(ValueError, match=f"size must be positive and finite, not {size!r}"):
        C.stroke_outline(np.zeros(2), np.zeros(2), size, 0.5, 0.5, True)


# ------------------------------------------------------------------ real shapes and files


def _real_freehand() -> List[Tuple[str, str, Dict[str, Any]]]:
    out = []
    for path in REAL:
        if path.suffix != ".tldr":
            continue
        for rec in json.loads(path.read_bytes())["records"]:
            if rec.get("typeName") == "shape" and rec.get("type") in ("draw", "highlight"):
                out.append((path.name, rec["type"], rec["props"]))
    return out


def _shape_views(kind: str, props: Dict[str, Any]) -> List[str]:
    v = F.freehand_vertices(kind, props)
    return [repr(F.freehand_box(kind, props)), repr(None if v is None else v.tolist()),
            repr(F.rotated_freehand_box(kind, props, 0.7, 3.0, -2.0))]


@needs_real
def test_every_real_stroke_alike_through_the_twins(monkeypatch):
    shapes = _real_freehand()
    assert sum(k == "draw" for _, k, _ in shapes) >= 686
    fast = [_shape_views(k, p) for _, k, p in shapes]
    monkeypatch.setattr(F, "DRAW_KERNEL", False)
    monkeypatch.setattr(F, "STROKE_KERNEL", False)
    slow = [_shape_views(k, p) for _, k, p in shapes]
    for (name, kind, _), a, b in zip(shapes, fast, slow):
        assert a == b, (name, kind)


def _first_observation(path: Any) -> List[str]:
    c = load(path)
    return [observe(c).to_json(), c.to_json(), repr(c.diagnostics)]


@needs_real
@pytest.mark.parametrize("path", [p for p in REAL if p.suffix == ".tldr"], ids=lambda p: p.name.split("__")[1][:24])
def test_first_observation_identical_with_the_smoothing_compiled_or_not(path, monkeypatch):
    fast = _first_observation(path)
    monkeypatch.setattr(F, "DRAW_KERNEL", False)
    monkeypatch.setattr(F, "STROKE_KERNEL", False)
    assert _first_observation(path) == fast


CONFORMANCE = sorted((Path(__file__).resolve().parent / "data" / "conformance").glob("*.tldr"))


def _document_strokes(path: Path) -> List[Tuple[str, Dict[str, Any]]]:
    doc = json.loads(path.read_bytes())
    return [(r["type"], r["props"]) for r in doc["records"]
            if r.get("typeName") == "shape" and r.get("type") in ("draw", "highlight")]


def test_conformance_documents_hold_highlights_and_draws():
    kinds = {k for path in CONFORMANCE for k, _ in _document_strokes(path)}
    assert kinds == {"draw", "highlight"}


@pytest.mark.parametrize("path", CONFORMANCE, ids=lambda p: p.stem)
def test_conformance_strokes_alike_through_the_twins(path, monkeypatch):
    """The documents recorded against tldraw (highlights among them, whose outline the real files lack)."""
    shapes = _document_strokes(path)
    fast = [_shape_views(k, p) for k, p in shapes]
    monkeypatch.setattr(F, "DRAW_KERNEL", False)
    monkeypatch.setattr(F, "STROKE_KERNEL", False)
    assert [_shape_views(k, p) for k, p in shapes] == fast
    c = load(path)
    slow_obs = [observe(c).to_json(), c.to_json()]
    monkeypatch.setattr(F, "DRAW_KERNEL", True)
    monkeypatch.setattr(F, "STROKE_KERNEL", True)
    c = load(path)
    assert [observe(c).to_json(), c.to_json()] == slow_obs


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "twin"])
@pytest.mark.parametrize("big", [10**400, -10**400], ids=["plus", "minus"])
def test_an_integer_beyond_a_double_is_the_infinity_json_gives_tldraw(monkeypatch, kernel, big):
    """A stored point coordinate too large for a double (an integer in a hand-written file) is
    read as JSON.parse reads it in tldraw, an infinity, on both paths: the same box and
    observation as the infinity itself, not an OverflowError out of the derivation."""
    from spatialobs.canvas import Canvas
    from spatialobs.canvas.document import freehand

    monkeypatch.setattr(freehand, "DRAW_KERNEL", kernel)
    monkeypatch.setattr(freehand, "STROKE_KERNEL", kernel)
    got = []
    for x in (big, math.inf if big > 0 else -math.inf):
        c = Canvas()
        pts = [{"x": x, "y": 1.0}, {"x": 2, "y": 3}, {"x": 40, "y": 9}]
        c.add({"id": "d", "type": "draw", "parent": c.current_page, "x": 0, "y": 0,
               "props": {"segments": [{"type": "free", "points": pts}]}})
        got.append((c.geometry().bounds.tolist(), observe(c).to_json()))
    assert got[0] == got[1]


def test_a_signalling_nan_in_a_path_decodes_without_a_warning():
    # float32 0xffbfecb4 is a signalling NaN: widening it to float64 warned "invalid value encountered
    # in cast" (hypothesis found it); tldraw reads NaN, and so do both paths here
    import warnings

    raw = bytes.fromhex("b4ecbfff536c43695aa93a1374cf38a146a202de")
    text = base64.b64encode(raw).decode()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = F.decode_path(text, 3)
        legacy = F._legacy_points(text)
    assert q.shape == (2, 2) and np.isnan(q[:, 0]).all() and np.isfinite(q[:, 1]).all() and legacy.shape == (3, 2)
    assert C.path_extent(raw, 3, 16.0, 0.5, True) is None
