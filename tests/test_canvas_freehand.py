"""Freehand strokes (draw, highlight) and lines bounded as tldraw 5.4.2 bounds them.

Three sources of truth: what the real tldraw editor computed for the shared files,
what it computed for the conformance documents in ``tests/data/conformance``
(``make_freehand.py`` builds them and says what they cover), and a naive oracle of
the stroke-point smoothing (``tests/reference/freehand_oracle.py``).
"""

from __future__ import annotations

import base64
import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from conftest import shared_files
from spatialobs.canvas import load
from spatialobs.canvas.document.freehand import (
    DRAW_STROKE_WIDTHS,
    decode_path,
    freehand_box,
    freehand_vertices,
    rotated_freehand_box,
    segment_points,
    stroke_outline,
    stroke_points,
)
from spatialobs.canvas.document.shapes import decode_b64_points, local_box
from tests.reference import freehand_oracle

FREEHAND = ("draw", "highlight", "line")
CONFORMANCE = Path(__file__).resolve().parent / "data" / "conformance"
DOCS = sorted(CONFORMANCE.glob("freehand_*.tldr"))
# Acceptance: a shape agrees when each side of its page box is within 2 units of tldraw's;
# the smoothing and the float16 storage are reproduced, so nearly all agree to 1e-6.
TOL = 2.0
EXACT = 1e-6
# A line of one point has a path with no segment: tldraw's geometry has no vertices and
# its page bounds are the empty box at the page origin, whereas ours is the point itself.
EMPTY_PATH = {"shape:single", "shape:singlecubic"}


def _box(x, y, w, h):
    return (x, y, x + w, y + h)


def _errors(c, shapes):
    out = {}
    for sid, (kind, tb) in shapes.items():
        if kind in FREEHAND:
            out[sid] = max(abs(u - v) for u, v in zip(c.page_bounds(sid), tb))
    return out


def _agree(errs, what):
    assert errs, f"{what}: no freehand shape"
    bad = {k: round(v, 3) for k, v in errs.items() if v > TOL}
    assert not bad, f"{what}: off by more than {TOL}: {bad}"
    exact = sum(v <= EXACT for v in errs.values()) / len(errs)
    assert exact >= 0.98, f"{what}: only {exact:.1%} within {EXACT}"


# ------------------------------------------------------------------ real files and documents


def _shared_truth_files():
    return [p for p in shared_files("tldraw-truth", "*.tldr.json")]


@pytest.mark.parametrize("truth_path", _shared_truth_files(), ids=lambda p: p.name[:40])
def test_shared_files_match_tldraw(shared_data, truth_path):
    t = json.loads(truth_path.read_text(encoding="utf-8"))
    c = load(shared_data / "canvases" / truth_path.name[: -len(".json")])
    shapes = {s["id"]: (s["type"], _box(**s["pageBounds"])) for page in t["pages"] for s in page["shapes"]}
    errs = _errors(c, shapes)
    if not errs:
        pytest.skip("no draw, highlight or line shape in this file")
    _agree(errs, truth_path.name)


def test_shared_files_cover_strokes(shared_data):
    # the check above must see the hundreds of strokes the shared files hold
    n = 0
    for p in _shared_truth_files():
        t = json.loads(p.read_text(encoding="utf-8"))
        n += sum(s["type"] in FREEHAND for page in t["pages"] for s in page["shapes"])
    assert n >= 1000


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.stem)
def test_conformance_documents_match_tldraw(doc):
    t = json.loads(doc.with_suffix(".truth.json").read_text(encoding="utf-8"))
    assert t["tldrawVersion"] == "5.4.2"
    c = load(doc)
    shapes = {sid: (s["type"], _box(*s["pageBounds"])) for sid, s in t["shapes"].items() if sid not in EMPTY_PATH}
    assert len(shapes) >= 10
    _agree(_errors(c, shapes), doc.name)


def test_conformance_documents_cover_the_cases():
    kinds = {}
    for doc in DOCS:
        for rec in json.loads(doc.read_text(encoding="utf-8"))["records"]:
            if rec.get("typeName") == "shape":
                p = rec["props"]
                segs = p.get("segments", [])
                tags = {rec["type"], p.get("size"), p.get("spline")}
                tags |= {"pen"} if p.get("isPen") else set()
                tags |= {"rotated"} if rec.get("rotation") else set()
                tags |= {"nested"} if rec.get("parentId", "").startswith("shape:") else set()
                tags |= {"closed"} if p.get("isClosed") else set()
                tags |= {"incomplete"} if p.get("isComplete") is False else set()
                tags |= {"scale"} if p.get("scale", 1) != 1 else set()
                tags |= {"flip"} if min(p.get("scaleX", 1), p.get("scaleY", 1)) < 0 else set()
                tags |= {"straight"} if any(s.get("type") == "straight" for s in segs) else set()
                tags |= {"dim2"} if any(s.get("dim") == 2 for s in segs) else set()
                tags |= {"points"} if any("points" in s for s in segs) else set()
                tags |= {"dot"} if len(segs) == 1 and len(segs[0].get("points", [0, 0])) == 1 else set()
                for tag in tags:
                    kinds[tag] = kinds.get(tag, 0) + 1
    for tag in ("draw", "highlight", "line", "s", "m", "l", "xl", "pen", "closed", "incomplete", "scale", "flip",
                "straight", "dim2", "points", "dot", "cubic", "rotated", "nested"):
        assert kinds.get(tag, 0) >= 1, tag


def test_empty_path_line_is_tldraws_empty_box():
    # documents the exclusion above: tldraw puts a one-point line's page box at the page origin
    t = json.loads((CONFORMANCE / "freehand_line.truth.json").read_text(encoding="utf-8"))
    for sid in EMPTY_PATH:
        assert t["shapes"][sid]["pageBounds"] == [0, 0, 0, 0]
    c = load(CONFORMANCE / "freehand_line.tldr")
    x, y = c.node("shape:single").x, c.node("shape:single").y
    assert c.page_bounds("shape:single") == pytest.approx((x + 30, y + 40, x + 30, y + 40))


# ------------------------------------------------------------------ the smoothing against its oracle


coords = st.one_of(
    st.integers(-40, 40).map(lambda v: v / 4),  # a lattice: repeats and exact ties
    st.floats(-500, 500, allow_nan=False, allow_infinity=False),
)


@st.composite
def strokes(draw):
    """Point lists with runs of repeated points, tight clusters and long jumps."""
    base = draw(st.lists(st.tuples(coords, coords), min_size=1, max_size=60))
    pts = []
    for p in base:
        pts.append(p)
        k = draw(st.integers(0, 3))
        if k == 3:  # a pause: the same point many times
            pts.extend([p] * draw(st.integers(1, 40)))
        elif k == 2:  # a jitter within a unit
            pts.append((p[0] + draw(st.floats(-1, 1)), p[1] + draw(st.floats(-1, 1))))
    return pts


sizes = st.one_of(st.sampled_from([3.0, 4.5, 6.0, 11.0, 21.16, 27.88]), st.floats(0.5, 80))
streamlines = st.one_of(st.sampled_from([0.5, 0.62, 0.64, 0.6686, 0.74]), st.floats(0.05, 0.95))


@settings(max_examples=400, deadline=None)
@given(strokes(), sizes, streamlines, st.booleans())
def test_stroke_points_match_oracle(pts, size, streamline, last):
    got = stroke_points(pts, size, streamline, last)
    want = freehand_oracle.stroke_points(pts, size, streamline, last)
    assert got.shape == (len(want), 2)
    np.testing.assert_allclose(got, np.array(want).reshape(-1, 2), rtol=0, atol=1e-9)


@st.composite
def long_strokes(draw):
    """Mouse-like walks long enough for the array path (which needs no repeated point)."""
    steps = draw(st.lists(st.tuples(st.floats(-20, 20), st.floats(-20, 20)), min_size=97, max_size=400))
    x, y = draw(coords), draw(coords)
    pts = [(x, y)]
    for dx, dy in steps:
        x, y = x + dx, y + dy
        pts.append((x, y))
    return pts


@settings(max_examples=200, deadline=None)
@given(long_strokes(), st.sampled_from(sorted(DRAW_STROKE_WIDTHS)), st.booleans(), st.booleans())
def test_long_draw_box_is_the_oracle_stroke(pts, size, complete, pen):
    _check_draw_box(pts, size, complete, pen)


def _legacy_draw(pts, size="m", **extra):
    return {"segments": [{"type": "free", "points": [{"x": x, "y": y, "z": 0.5} for x, y in pts]}],
            "size": size, "isComplete": True, "isClosed": False, "isPen": False, **extra}


def _dot(r):
    n = max(8, math.ceil(2 * math.pi * r / 20))
    xs = [math.cos(i / n * 2 * math.pi) * r for i in range(n)]
    ys = [math.sin(i / n * 2 * math.pi) * r for i in range(n)]
    return (min(xs), min(ys), max(xs), max(ys))


@settings(max_examples=300, deadline=None)
@given(strokes(), st.sampled_from(sorted(DRAW_STROKE_WIDTHS)), st.booleans(), st.booleans())
def test_draw_box_is_the_oracle_stroke(pts, size, complete, pen):
    _check_draw_box(pts, size, complete, pen)


def _check_draw_box(pts, size, complete, pen):
    props = _legacy_draw(pts, size, isComplete=complete, isPen=pen)
    sw = DRAW_STROKE_WIDTHS[size] + 1
    streamline = 0.62 if pen else min(max(0.64 + (sw - 9) / 7 * 0.1, 0.64), 0.74)
    xy = segment_points(props["segments"])  # the points as tldraw stores them (float16 steps)
    assume(len(xy) == len(pts))
    want = freehand_oracle.stroke_points([tuple(p) for p in xy.tolist()], sw, streamline, complete or pen)
    span = xy.max(axis=0) - xy.min(axis=0)
    if (span < 2 * sw).all() or len(want) == 1:
        expect = _dot(sw)
    else:
        a = np.array(want)
        expect = (*a.min(axis=0), *a.max(axis=0))
    np.testing.assert_allclose(freehand_box("draw", props), expect, rtol=0, atol=1e-9)


@settings(max_examples=200, deadline=None)
@given(strokes(), st.sampled_from(FREEHAND), st.sampled_from(sorted(DRAW_STROKE_WIDTHS)), st.booleans(),
       st.floats(-7, 7), st.sampled_from(["line", "cubic"]))
def test_vertices_agree_with_the_box(pts, kind, size, complete, rotation, spline):
    # the box of the vertices (what a rotated shape is bounded by) is the unrotated box
    if kind == "line":
        props = {"spline": spline, "points": {f"a{i:03d}": {"index": f"a{i:03d}", "x": x, "y": y}
                                              for i, (x, y) in enumerate(pts)}}
    else:
        props = _legacy_draw(pts, size, isComplete=complete)
    box = freehand_box(kind, props)
    v = freehand_vertices(kind, props)
    assert box is not None and v is not None
    assert (*v.min(axis=0), *v.max(axis=0)) == pytest.approx(box, abs=1e-9)
    c, s = math.cos(rotation), math.sin(rotation)
    rx, ry = 3 + c * v[:, 0] - s * v[:, 1], -4 + s * v[:, 0] + c * v[:, 1]
    rot = rotated_freehand_box(kind, props, rotation, 3, -4)
    assert rot == pytest.approx((rx.min(), ry.min(), rx.max(), ry.max()), abs=1e-9)


# ------------------------------------------------------------------ segments, outline, lines


def _tldraw_path(points, dim=3):
    # tldraw's encoder: float32 first point, float16 steps from each previous *input* point
    out = struct.pack("<fff", *points[0]) if dim == 3 else struct.pack("<ff", *points[0][:2])
    for a, b in zip(points, points[1:]):
        out += np.array([b[k] - a[k] for k in range(dim)], dtype="<f2").tobytes()
    return base64.b64encode(out).decode()


def test_decode_path_reads_both_dimensions():
    pts = [(10.5, -3.25, 0.5), (12.0, -1.0, 0.6), (15.5, 4.0, 0.7)]
    np.testing.assert_allclose(decode_path(_tldraw_path(pts)), [p[:2] for p in pts], atol=1e-3)
    np.testing.assert_allclose(decode_path(_tldraw_path(pts, 2), dim=2), [p[:2] for p in pts], atol=1e-3)
    # the older reader agrees, given the segment's dim
    np.testing.assert_array_equal(decode_path(_tldraw_path(pts)), decode_b64_points(_tldraw_path(pts))[:, :2])
    two = decode_b64_points(_tldraw_path(pts, 2), dim=2)
    np.testing.assert_array_equal(two[:, :2], decode_path(_tldraw_path(pts, 2), dim=2))
    assert (two[:, 2] == 0.5).all()
    # unpadded text (tldraw's native decoder accepts it) and junk
    text = _tldraw_path(pts, 2)
    np.testing.assert_array_equal(decode_path(text.rstrip("="), dim=2), decode_path(text, dim=2))
    assert decode_path("", dim=2).shape == (0, 2) and decode_path("@@@").shape == (0, 2)


def test_point_lists_are_stored_as_tldraw_migrates_them():
    # steps from the previous input point in float16: the rounding carries along the stroke
    pts = [{"x": i * 10.3, "y": 0.0} for i in range(200)]
    got = segment_points([{"type": "free", "points": pts}])[:, 0]
    step = float(np.float16(10.3))
    np.testing.assert_allclose(got, [i * step for i in range(200)], atol=1e-9)
    assert abs(got[-1] - 199 * 10.3) > 0.1  # drift the raw points would not show


def test_straight_segment_is_an_eased_run():
    p = segment_points([{"type": "straight", "points": [{"x": 0, "y": 0}, {"x": 100, "y": 0}, {"x": 7, "y": 7}]}])
    assert len(p) == 2 + max(4, 100 // 16)
    assert p[0].tolist() == [0, 0] and p[-1].tolist() == [100, 0]
    assert p[1].tolist() == [1, 0] and p[-2].tolist() == [99, 0]  # nudged one unit in
    assert (np.diff(p[:, 0]) >= 0).all() and (p[:, 1] == 0).all()  # the third point is ignored


def test_dots():
    seg = {"type": "free", "points": [{"x": 0, "y": 0}, {"x": 1, "y": 1}]}
    assert freehand_box("draw", {"segments": [seg], "size": "xl"}) == pytest.approx(_dot(11))
    # scale grows the stroke width, not the points
    assert freehand_box("draw", {"segments": [seg], "size": "xl", "scale": 2.5}) == pytest.approx(_dot(27.5))
    h = freehand_box("highlight", {"segments": [{"type": "free", "points": [{"x": 5, "y": 5}]}], "size": "m"})
    assert h == pytest.approx(_dot(16 * 1.5 * 1.12 / 2))


def test_outline_of_a_straight_stroke_is_the_stroke_grown_by_its_radius():
    o = stroke_outline([(0, 0), (40, 0), (80, 0), (120, 0)], size=20, last=True)
    assert o[:, 0].min() == pytest.approx(-10, abs=0.2) and o[:, 0].max() == pytest.approx(130, abs=0.2)
    assert o[:, 1].min() == pytest.approx(-10, abs=0.2) and o[:, 1].max() == pytest.approx(10, abs=0.2)
    # shorter than its size: the radius grows to size · sin(π/4)
    o = stroke_outline([(0, 0), (5, 0), (8, 0)], size=20, last=True)
    assert o[:, 1].max() == pytest.approx(20 * math.sin(math.pi / 4), abs=0.3)


def test_line_points_follow_their_index():
    pts = {"b": {"index": "a2", "x": 100, "y": 100}, "a": {"index": "a1", "x": 0, "y": 0},
           "c": {"index": "a3", "x": 200, "y": 0}}
    assert freehand_box("line", {"points": pts, "spline": "line"}) == (0.0, 0.0, 200.0, 100.0)
    corner = {"a": {"index": "a1", "x": 0, "y": 0}, "c": {"index": "a3", "x": 100, "y": 100},
              "b": {"index": "a2", "x": 100, "y": 0}}
    assert freehand_box("line", {"points": corner, "spline": "line"}) == (0.0, 0.0, 100.0, 100.0)
    cubic = freehand_box("line", {"points": corner, "spline": "cubic"})
    assert cubic[2] > 105 and cubic[1] < -5 and (cubic[0], cubic[3]) == (0, 100)  # it swings out at the corner
    # a point sharing an index with an earlier one is dropped, as tldraw drops it
    dup = dict(pts, d={"index": "a3", "x": 900, "y": 900})
    assert freehand_box("line", {"points": dup, "spline": "line"}) == (0.0, 0.0, 200.0, 100.0)


def test_other_point_forms_keep_their_boxes():
    # Excalidraw-style point lists and arrows are not tldraw freehand geometry
    assert freehand_box("freedraw", {"points": [[0, 0], [5, 5]]}) is None
    assert freehand_box("line", {"points": [[0, 0], [10, -5]]}) is None
    assert local_box("line", {"points": [[0, 0], [10, -5]]}) == (0.0, -5.0, 10.0, 0.0)
    assert local_box("draw", {"segments": []}, 3, 4) == (0.0, 0.0, 3.0, 4.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(), st.floats()), min_size=1, max_size=6), st.sampled_from(FREEHAND),
       st.one_of(st.floats(), st.integers(-10, 10)), st.sampled_from(["line", "cubic"]), st.floats())
# a span wider than the float range (numpy's scalars warned on it, and warnings are errors here)
@example([(1.7976931348623157e308, 0.0), (-9.9792015476736e291, 0.0)], "draw", 0.0, "line", 0.0)
def test_extreme_numbers_never_raise(pts, kind, scale, spline, rotation):
    # huge, infinite and NaN coordinates and scales: a finite box or None, as for junk
    props = _legacy_draw(pts, scale=scale, spline=spline)
    props["points"] = {f"a{i}": {"index": f"a{i}", "x": x, "y": y} for i, (x, y) in enumerate(pts)}
    box = freehand_box(kind, props)
    rotated_freehand_box(kind, props, rotation, 0.0, 0.0)
    assert box is None or all(math.isfinite(v) for v in box)


def _nest(c):
    return st.one_of(st.lists(c, max_size=4), st.dictionaries(st.sampled_from(
        ["x", "y", "z", "type", "path", "points", "dim", "index"]), c, max_size=5))


junk = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)), _nest,
                    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FREEHAND), st.dictionaries(st.sampled_from(
    ["segments", "points", "handles", "size", "scale", "scaleX", "scaleY", "isPen", "isClosed", "isComplete",
     "spline"]), junk, max_size=6))
def test_malformed_props_never_raise(kind, props):
    box = freehand_box(kind, props)
    assert box is None or (len(box) == 4 and all(math.isfinite(v) for v in box) and box[0] <= box[2]
                           and box[1] <= box[3])
    x0, y0, x1, y1 = local_box(kind, props, 1.0, 2.0)
    assert x0 <= x1 and y0 <= y1
