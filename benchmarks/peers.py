"""Shapely 2.x (STRtree) implementations of the geometry kernels' semantics.

These are the fastest honest shapely versions we know: STRtree envelope queries
(GEOS, vectorized) to find candidates, then exact numpy filters with the same
boundary rules as the kernels. Creating the shapely geometries is done once per
data set (:func:`geoms`), outside the timed call; building the STRtree is inside,
as each kernel builds its own index per call.
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely import STRtree


def geoms(boxes: np.ndarray) -> np.ndarray:
    """Valid shapely geometries for boxes: polygons, or lines and points when degenerate."""
    x0, y0, x1, y1 = boxes.T
    out = np.empty(len(boxes), dtype=object)
    area = (x1 > x0) & (y1 > y0)
    point = (x1 == x0) & (y1 == y0)
    line = ~area & ~point
    out[area] = shapely.box(x0[area], y0[area], x1[area], y1[area])
    out[point] = shapely.points(x0[point], y0[point])
    coords = np.stack([np.stack([x0[line], y0[line]], 1), np.stack([x1[line], y1[line]], 1)], 1)
    out[line] = shapely.linestrings(coords)
    return out


def _contains(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a[:, 0] <= b[:, 0]) & (b[:, 2] <= a[:, 2]) & (a[:, 1] <= b[:, 1]) & (b[:, 3] <= a[:, 3])


def _overlaps_area(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (np.minimum(a[:, 2], b[:, 2]) > np.maximum(a[:, 0], b[:, 0])) & (
        np.minimum(a[:, 3], b[:, 3]) > np.maximum(a[:, 1], b[:, 1])
    )


def _gap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    dx = np.maximum(0.0, np.maximum(b[:, 0] - a[:, 2], a[:, 0] - b[:, 2]))
    dy = np.maximum(0.0, np.maximum(b[:, 1] - a[:, 3], a[:, 1] - b[:, 3]))
    return np.sqrt(dx * dx + dy * dy)


def visibility(g: np.ndarray, boxes: np.ndarray, viewport, near_factor: float = 0.75):
    vp = shapely.box(*viewport)
    inside = shapely.covers(vp, g)
    touching = shapely.intersects(vp, g)
    gaps = np.where(touching, 0.0, shapely.distance(g, vp))
    near = near_factor * max(viewport[2] - viewport[0], viewport[3] - viewport[1])
    labels = np.where(inside, 0, np.where(touching, 1, np.where(gaps <= near, 3, 4))).astype(np.int8)
    return labels, gaps


def occluders(g, boxes, order, opacity, hidden, viewport, min_opacity: float = 0.9, prefilter: bool = False):
    """STRtree over the shown, opaque-enough boxes, queried with each clipped box in view.

    ``prefilter=True`` first drops, with numpy, every box that misses the
    viewport (the trick the compiled kernel uses), so the tree is tiny.
    """
    n = len(boxes)
    vp = np.asarray(viewport, dtype=np.float64)[None, :]
    meets = (boxes[:, 0] <= vp[0, 2]) & (vp[0, 0] <= boxes[:, 2]) & (boxes[:, 1] <= vp[0, 3]) & (vp[0, 1] <= boxes[:, 3])
    shown = ~hidden & (opacity >= min_opacity)
    eligible = np.flatnonzero(shown & meets if prefilter else shown)
    tree = STRtree(g[eligible])
    inview = np.flatnonzero(meets)
    clipped = np.concatenate(
        [np.maximum(boxes[inview, :2], vp[:, :2]), np.minimum(boxes[inview, 2:], vp[:, 2:])], axis=1
    )
    src, dst = tree.query(shapely.box(*clipped.T))
    i = inview[src]
    j = eligible[dst]
    keep = (order[j] > order[i]) & _contains(boxes[j], clipped[src])
    i, j = i[keep], j[keep]
    out = np.full(n, -1, dtype=np.int64)
    if len(i):
        idx = np.lexsort((j, order[j], i))
        i, j = i[idx], j[idx]
        first = np.concatenate([[True], i[1:] != i[:-1]])
        out[i[first]] = j[first]
    return out


def _envelope_pairs(g):
    tree = STRtree(g)
    return tree.query(g)


def overlap_pairs(g, boxes):
    a, b = _envelope_pairs(g)
    keep = a < b
    a, b = a[keep], b[keep]
    keep = _overlaps_area(boxes[a], boxes[b])
    a, b = a[keep], b[keep]
    idx = np.lexsort((b, a))
    a, b = a[idx], b[idx]
    ba, bb = boxes[a], boxes[b]
    areas = (np.minimum(ba[:, 2], bb[:, 2]) - np.maximum(ba[:, 0], bb[:, 0])) * (
        np.minimum(ba[:, 3], bb[:, 3]) - np.maximum(ba[:, 1], bb[:, 1])
    )
    return np.stack([a, b]).astype(np.int64), areas


def containment_pairs(g, boxes):
    outer, inner = _envelope_pairs(g)
    keep = (outer != inner) & _contains(boxes[outer], boxes[inner])
    outer, inner = outer[keep], inner[keep]
    idx = np.lexsort((inner, outer))
    return np.stack([outer[idx], inner[idx]]).astype(np.int64)


def proximity_pairs(g, boxes, max_gap: float, k_nearest: int):
    pad = max_gap * (1 + 1e-9) + 1e-9
    tree = STRtree(g)
    grown = shapely.box(boxes[:, 0] - pad, boxes[:, 1] - pad, boxes[:, 2] + pad, boxes[:, 3] + pad)
    a, b = tree.query(grown)
    keep = a != b
    a, b = a[keep], b[keep]
    keep = ~_overlaps_area(boxes[a], boxes[b])
    a, b = a[keep], b[keep]
    gaps = _gap(boxes[a], boxes[b])
    keep = gaps <= max_gap
    a, b, gaps = a[keep], b[keep], gaps[keep]
    idx = np.lexsort((b, gaps, a))  # per box a: nearest first, ties by index
    a, b, gaps = a[idx], b[idx], gaps[idx]
    starts = np.flatnonzero(np.concatenate([[True], a[1:] != a[:-1]]))
    rank = np.arange(len(a)) - np.repeat(starts, np.diff(np.append(starts, len(a))))
    keep = rank < k_nearest
    lo, hi, gaps = np.minimum(a, b)[keep], np.maximum(a, b)[keep], gaps[keep]
    key = lo.astype(np.int64) * (len(boxes) + 1) + hi
    _, first = np.unique(key, return_index=True)
    return np.stack([lo[first], hi[first]]).astype(np.int64), gaps[first]
