"""The painted cover's plain-Python fast paths, held to the numpy and ``target_outline`` paths they shortcut.

``clip_convex`` orients its clip polygon from the sum of the edge cross products in floats
when the clip has fewer than 8 corners (numpy's sum is left to right there, pairwise from 8
on) and clips on floats instead of numpy scalars; ``local_outline`` writes a box-like ``geo``
kind's outline without ``target_outline``. Both must give the same bytes as before.
"""

from __future__ import annotations

import math
from typing import Any, List, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from spatialobs.canvas import Node
from spatialobs.canvas.paint import _box_outline, _twice_area, clip_convex, local_outline
from tests.reference import paint_oracle

# coordinates that make float sums depend on their order (1e16 + 1 - 1e16) and that touch
COORD = hst.one_of(hst.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e16, -1e16, 3.0, 1e-300, 5e-324, 2.0 ** 52]),
                   hst.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
                   hst.integers(-50, 50).map(float))
POINT = hst.tuples(COORD, COORD)


def _convex(pts: List[Tuple[float, float]]) -> List[Tuple[float, float]]:
    """The convex hull (monotone chain; collinear points dropped), counter-clockwise in y-up terms."""
    pts = sorted(set(pts))
    if len(pts) < 3:
        return pts

    def cross(o: Tuple[float, float], a: Tuple[float, float], b: Tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lo: List[Tuple[float, float]] = []
    for p in pts:
        while len(lo) >= 2 and cross(lo[-2], lo[-1], p) <= 0:
            lo.pop()
        lo.append(p)
    hi: List[Tuple[float, float]] = []
    for p in reversed(pts):
        while len(hi) >= 2 and cross(hi[-2], hi[-1], p) <= 0:
            hi.pop()
        hi.append(p)
    return lo[:-1] + hi[:-1]


@hst.composite
def clips(draw: Any) -> np.ndarray:
    """Clip polygons: boxes (both orientations, zero-width, touching), rotated boxes, hulls of 3–40
    points (from 3 to more than 8 corners, so both orientation paths run), and arbitrary,
    possibly degenerate point lists (duplicates, collinear, fewer than 3)."""
    kind = draw(hst.sampled_from(["box", "rotated", "hull", "raw"]))
    if kind == "box":
        x0, y0, x1, y1 = draw(COORD), draw(COORD), draw(COORD), draw(COORD)
        pts = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    elif kind == "rotated":
        cx, cy = draw(hst.floats(-1e3, 1e3)), draw(hst.floats(-1e3, 1e3))
        w, h = draw(hst.floats(0, 1e3)), draw(hst.floats(0, 1e3))
        a = draw(hst.floats(-7, 7))
        c, s = math.cos(a), math.sin(a)
        pts = [(cx + c * x - s * y, cy + s * x + c * y) for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    elif kind == "hull":
        pts = _convex(draw(hst.lists(hst.tuples(hst.floats(-1e3, 1e3), hst.floats(-1e3, 1e3)), min_size=3, max_size=40)))
    else:
        pts = draw(hst.lists(POINT, min_size=0, max_size=12))
    if draw(hst.booleans()):
        pts = pts[::-1]
    return np.asarray(pts, dtype=np.float64).reshape(-1, 2)


POLYS = hst.lists(POINT, min_size=0, max_size=14).map(lambda p: np.asarray(p, dtype=np.float64).reshape(-1, 2))


@settings(max_examples=600, deadline=None)
@given(POLYS, clips())
def test_clip_convex_equals_the_numpy_path(poly: np.ndarray, clip: np.ndarray) -> None:
    got = clip_convex(poly, clip)
    want = paint_oracle.clip_convex(poly, clip)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def _numpy_twice_area(clip: np.ndarray) -> float:
    cx, cy = clip[:, 0], clip[:, 1]
    return float(np.sum(cx * np.roll(cy, -1) - np.roll(cx, -1) * cy))


@settings(max_examples=500, deadline=None)
@given(hst.lists(hst.tuples(hst.sampled_from([1e16, -1e16, 1.0, -1.0, 3.0, 0.5, 0.0, 2.0 ** 53]),
                            hst.sampled_from([1e16, -1e16, 1.0, -1.0, 3.0, 0.5, 0.0, 2.0 ** 53])),
                 min_size=1, max_size=20))
def test_twice_area_sums_as_numpy_does(pts: List[Tuple[float, float]]) -> None:
    # corners whose cross products sum to different values in different orders (1e16 + 1 - 1e16)
    clip = np.asarray(pts, dtype=np.float64)
    assert _twice_area(clip.tolist(), clip) == _numpy_twice_area(clip)


@pytest.mark.parametrize("m", [3, 4, 7, 8, 9, 16])
def test_clip_convex_regular_polygons_both_orientations(m: int) -> None:
    clip = np.array([(5 + 4 * math.cos(2 * math.pi * i / m), 5 + 4 * math.sin(2 * math.pi * i / m)) for i in range(m)])
    poly = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    for c in (clip, clip[::-1].copy()):
        got = clip_convex(poly, c)
        assert got.tobytes() == paint_oracle.clip_convex(poly, c).tobytes()
        assert len(got) == m  # the clip polygon lies inside the square: it is the result


def test_clip_convex_empty_and_degenerate_inputs() -> None:
    sq = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    assert clip_convex(sq, sq[:2]).shape == (0, 2)  # fewer than 3 clip corners: nothing
    assert clip_convex(sq[:0], sq).shape == (0, 2)
    far = sq + 5.0
    assert clip_convex(sq, far).shape == (0, 2)  # disjoint
    line = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])  # a zero-area clip
    assert clip_convex(sq, line).tobytes() == paint_oracle.clip_convex(sq, line).tobytes()


GEO = hst.sampled_from(["rectangle", "x-box", "check-box", "ellipse", "diamond", "star", "triangle", "heart",
                        "unknown-kind", "", 3, None])
FLIP = hst.sampled_from([True, False, 0, 1, "", "yes", None, "missing"])
SIZE = hst.one_of(hst.sampled_from([1e-9, 0.25, 0.999, 1.0, 1.5, 200.0, 1e6]), hst.floats(1e-6, 1e4))


@settings(max_examples=300, deadline=None)
@given(GEO, FLIP, FLIP, SIZE, SIZE)
def test_local_outline_box_kinds_equal_target_outline(geo: Any, fx: Any, fy: Any, w: float, h: float) -> None:
    props = {} if geo is None else {"geo": geo}
    for k, v in (("flipX", fx), ("flipY", fy)):
        if v != "missing":
            props[k] = v
    nd = Node("shape:g", "geo", "page:page", "a1", 0.0, 0.0, w, h, props=props)
    got, want = local_outline(nd), paint_oracle.local_outline(nd)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    fast = _box_outline(props, w, h)
    assert (fast is not None) == (props.get("geo", "rectangle") in ("rectangle", "x-box", "check-box"))


@pytest.mark.parametrize("t", ["ellipse", "diamond", "rectangle", "text", "note", "frame"])
def test_local_outline_other_types_unchanged(t: str) -> None:
    nd = Node("n", t, "page:page", "a1", 0.0, 0.0, 30.0, 12.5, props={"geo": "ellipse"})
    assert local_outline(nd).tobytes() == paint_oracle.local_outline(nd).tobytes()
