"""``curve_box`` and ``rotated_points_box`` against sampling the curves they bound.

No browser: the oracle is the definition (rough.js' Catmull-Rom segments, evaluated
densely), so these run everywhere; the harness tests check the same numbers against
Excalidraw itself.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas.document.shapes import curve_box, local_box, rotated_points_box

_pt = st.tuples(st.floats(-500, 500, allow_nan=False), st.floats(-500, 500, allow_nan=False))


def _sampled_curve(points, steps=400):
    # rough.js' curve: end points repeated, then one cubic per pair of neighbours
    p = [points[0]] + list(points) + [points[-1]]
    out = []
    for i in range(1, len(p) - 2):
        p0, p3 = np.array(p[i], float), np.array(p[i + 1], float)
        p1 = p0 + (np.array(p[i + 1], float) - np.array(p[i - 1], float)) / 6
        p2 = p3 - (np.array(p[i + 2], float) - np.array(p[i], float)) / 6
        for t in np.linspace(0.0, 1.0, steps):
            u = 1 - t
            out.append(u ** 3 * p0 + 3 * u * u * t * p1 + 3 * u * t * t * p2 + t ** 3 * p3)
    a = np.array(out)
    return a[:, 0].min(), a[:, 1].min(), a[:, 0].max(), a[:, 1].max()


@settings(max_examples=200, deadline=None)
@given(st.lists(_pt, min_size=2, max_size=8))
def test_curve_box_bounds_the_sampled_curve_tightly(points):
    box = curve_box(points)
    sampled = _sampled_curve(points)
    scale = max(1.0, *(abs(v) for v in sampled))
    # nothing outside the box, and the box no larger than the curve (up to sampling)
    assert box[0] <= sampled[0] + 1e-9 * scale and box[1] <= sampled[1] + 1e-9 * scale
    assert box[2] >= sampled[2] - 1e-9 * scale and box[3] >= sampled[3] - 1e-9 * scale
    assert max(abs(a - b) for a, b in zip(box, sampled)) <= 1e-3 * scale


@settings(max_examples=100, deadline=None)
@given(st.lists(_pt, min_size=1, max_size=8), st.floats(-7, 7), st.booleans())
def test_rotated_points_box_is_the_box_of_the_rotated_geometry(points, angle, round_):
    props = {"points": [list(p) for p in points]}
    if round_:
        props["roundness"] = {"type": 2}
    c, s = math.cos(angle), math.sin(angle)
    moved = [(10 + c * x - s * y, -20 + s * x + c * y) for x, y in points]
    expect = curve_box(moved) if round_ and len(points) > 2 else (
        min(p[0] for p in moved), min(p[1] for p in moved), max(p[0] for p in moved), max(p[1] for p in moved))
    np.testing.assert_allclose(rotated_points_box("line", props, angle, 10, -20), expect, rtol=1e-12, atol=1e-9)


def test_only_rounded_excalidraw_lines_and_arrows_are_curves():
    pts = [[0, 0], [10, 10], [10, 20]]
    assert local_box("line", {"points": pts, "roundness": {"type": 2}})[2] > 10.5
    assert local_box("arrow", {"points": pts, "strokeSharpness": "round"})[2] > 10.5  # the old spelling
    assert local_box("line", {"points": pts})[2] == 10.0  # sharp
    assert local_box("line", {"points": pts, "roundness": None})[2] == 10.0
    assert local_box("freedraw", {"points": pts, "roundness": {"type": 2}})[2] == 10.0  # strokes are not curves
    assert rotated_points_box("geo", {"points": pts}, 1.0, 0, 0) is None
    assert rotated_points_box("line", {}, 1.0, 0, 0) is None
