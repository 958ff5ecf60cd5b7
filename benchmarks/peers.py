"""Shapely 2.x (STRtree) implementations of the geometry kernels' semantics.

These are the fastest honest shapely versions we know: STRtree envelope queries
(GEOS, vectorized) to find candidates, then exact numpy filters with the same
boundary rules as the kernels. Creating the shapely geometries is done once per
data set (:func:`geoms`), outside the timed call; building the STRtree is inside,
as each kernel builds its own index per call.
"""

from __future__ import annotations

from typing import Tuple

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


def overlap_any_ranked(g, boxes, ranks):
    """Per box, whether a box ranked above it overlaps it with positive area (the boxes are both
    the indexed set and the queries): the STRtree's envelope pairs, filtered, reduced to a flag."""
    a, b = _envelope_pairs(g)
    keep = (ranks[a] > ranks[b]) & _overlaps_area(boxes[a], boxes[b])
    out = np.zeros(len(boxes), bool)
    out[b[keep]] = True
    return out


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
    return _k_nearest(a, b, gaps, k_nearest, len(boxes))


def _k_nearest(frm: np.ndarray, to: np.ndarray, gaps: np.ndarray, k: int, n: int) -> Tuple[np.ndarray, np.ndarray]:
    """Candidate pairs ``frm -> to`` cut to each ``frm``'s ``k`` nearest (ties by index), as
    unordered pairs ``(lo, hi)`` sorted and without repeats, with their gaps."""
    idx = np.lexsort((to, gaps, frm))
    frm, to, gaps = frm[idx], to[idx], gaps[idx]
    starts = np.flatnonzero(np.concatenate([[True], frm[1:] != frm[:-1]]))
    rank = np.arange(len(frm)) - np.repeat(starts, np.diff(np.append(starts, len(frm))))
    keep = rank < k
    lo, hi, gaps = np.minimum(frm, to)[keep], np.maximum(frm, to)[keep], gaps[keep]
    key = lo.astype(np.int64) * (n + 1) + hi
    _, first = np.unique(key, return_index=True)
    return np.stack([lo[first], hi[first]]).astype(np.int64), gaps[first]


# ---- numpy sweep-and-prune ---------------------------------------------------------
#
# The plain-numpy peer. A single sweep along x over the whole page finds every box
# under a wide frame or a background as a candidate (26 million candidates for the
# 400,000 overlaps of the 10^5-box data, ten seconds), so the page is first cut into
# horizontal strips: each box is listed in every strip it spans, the listing is sorted
# by (strip, left edge) once, and in each strip a box's candidates are the run after it
# whose left edge is at most its right edge (np.searchsorted finds every run's end,
# np.repeat expands the runs). A pair met in several strips is kept only in the strip
# holding the larger of its two top edges. Then the exact filters above. No index and
# no compiled code but numpy's.


def _sweep(boxes: np.ndarray, margin: float = 0.0, strip: float | None = None):
    """Candidate pairs (a, b): each unordered pair of boxes whose extents grown by
    ``margin`` intersect (closed) exactly once, plus pairs that only meet in x."""
    n = len(boxes)
    if n < 2:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    x0, y0 = boxes[:, 0] - margin, boxes[:, 1] - margin
    x1, y1 = boxes[:, 2] + margin, boxes[:, 3] + margin
    if strip is None:  # about four median heights: few strips per box, few boxes per strip
        strip = max(4.0 * float(np.median(y1 - y0)), 1e-9 * float(y1.max() - y0.min()), 1e-300)
    s0 = np.floor((y0 - y0.min()) / strip).astype(np.int64)
    s1 = np.floor((y1 - y0.min()) / strip).astype(np.int64)
    span = s1 - s0 + 1
    box = np.repeat(np.arange(n), span)
    row = s0[box] + np.arange(len(box)) - np.repeat(np.cumsum(span) - span, span)
    ux = np.unique(x0)
    rank = np.searchsorted(ux, x0)  # x0 as an integer rank, so (strip, x0) packs into one key
    stride = len(ux) + 1
    key = row * stride + rank[box]
    order = np.argsort(key, kind="stable")
    key, box, row = key[order], box[order], row[order]
    end = np.searchsorted(key, row * stride + np.searchsorted(ux, x1[box], side="right"))
    first = np.arange(1, len(key) + 1)
    counts = np.maximum(end - first, 0)
    p = np.repeat(np.arange(len(key)), counts)
    q = first[p] + np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    a, b = box[p], box[q]
    # the strip of the larger top edge, which both boxes span when they meet in y
    keep = np.floor((np.maximum(y0[a], y0[b]) - y0.min()) / strip).astype(np.int64) == row[p]
    return a[keep], b[keep]


def _sorted_rows(a: np.ndarray, b: np.ndarray, n: int, *values: np.ndarray):
    idx = np.argsort(a.astype(np.int64) * n + b, kind="stable")
    return (np.stack([a[idx], b[idx]]).astype(np.int64), *(v[idx] for v in values))


def overlap_pairs_numpy(boxes: np.ndarray):
    a, b = _sweep(boxes)
    keep = _overlaps_area(boxes[a], boxes[b])
    a, b = a[keep], b[keep]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pairs, lo_b, hi_b = _sorted_rows(lo, hi, len(boxes), boxes[lo], boxes[hi])
    areas = (np.minimum(lo_b[:, 2], hi_b[:, 2]) - np.maximum(lo_b[:, 0], hi_b[:, 0])) * (
        np.minimum(lo_b[:, 3], hi_b[:, 3]) - np.maximum(lo_b[:, 1], hi_b[:, 1])
    )
    return pairs, areas


def containment_pairs_numpy(boxes: np.ndarray):
    a, b = _sweep(boxes)
    ba, bb = boxes[a], boxes[b]
    ab, ba_ = _contains(ba, bb), _contains(bb, ba)
    outer = np.concatenate([a[ab], b[ba_]])
    inner = np.concatenate([b[ab], a[ba_]])
    return _sorted_rows(outer, inner, len(boxes))[0]


def proximity_pairs_numpy(boxes: np.ndarray, max_gap: float, k_nearest: int):
    a, b = _sweep(boxes, max_gap)
    ba, bb = boxes[a], boxes[b]
    gaps = _gap(ba, bb)
    keep = (gaps <= max_gap) & ~_overlaps_area(ba, bb)
    a, b, gaps = a[keep], b[keep], gaps[keep]
    # both ends keep their k nearest: rank each candidate from both sides
    return _k_nearest(np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([gaps, gaps]), k_nearest,
                      len(boxes))


def _line_starts(v: np.ndarray, tol: float) -> np.ndarray:
    """Greedy cut of sorted values into lines (a line takes every value within tol of
    its first): True at each line's first position. The cut is a chain s ->
    searchsorted(v, v[s] + tol) from 0; its members are found by pointer doubling."""
    n = len(v)
    nxt = np.append(np.searchsorted(v, v + tol, side="right"), n)  # n is the sink
    on = np.zeros(n + 1, dtype=bool)
    on[0] = True
    step = nxt
    while True:
        grown = on.copy()
        grown[step[on]] = True
        if np.array_equal(grown, on) and step[0] == n:
            break
        on, step = grown, step[step]
    return on[:n]


def alignment_pairs_numpy(boxes: np.ndarray, tol: float):
    n = len(boxes)
    cx, cy = (boxes[:, 0] + boxes[:, 2]) * 0.5, (boxes[:, 1] + boxes[:, 3]) * 0.5
    keys = [boxes[:, 0], cx, boxes[:, 2], boxes[:, 1], cy, boxes[:, 3]]
    ids = np.arange(n)
    out, kinds = [], []
    for kind, key in enumerate(keys):
        along = cy if kind < 3 else cx
        order = np.lexsort((ids, key))
        line = np.cumsum(_line_starts(key[order], tol))
        # within each line, by (along, index)
        pos = np.lexsort((order, along[order], line))
        i, ln = order[pos], line[pos]
        same = ln[1:] == ln[:-1]
        a, b = i[:-1][same], i[1:][same]
        pairs = _sorted_rows(np.minimum(a, b), np.maximum(a, b), n)[0]
        out.append(pairs)
        kinds.append(np.full(pairs.shape[1], kind, dtype=np.int8))
    if not out:
        return np.empty((2, 0), np.int64), np.empty(0, np.int8)
    return np.concatenate(out, axis=1), np.concatenate(kinds)
