"""Naive O(n^2) oracles for the geometry kernels, written straight from DESIGN §2.

Plain Python over lists of 4-tuples; no index, no numpy in the logic. The
arithmetic that decides a threshold is written exactly as the documented
formula (sqrt(dx*dx + dy*dy) for gaps, min/max differences for areas), so the
compiled kernels must agree bit for bit; the union coverage uses exact
fractions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import List, Sequence, Tuple

from spatialobs._errors import InvalidInputError

Box = Tuple[float, float, float, float]

VISIBLE, PARTIAL, OCCLUDED, OFFSCREEN_NEAR, OFFSCREEN_FAR = range(5)


def check_boxes(boxes: Sequence[Box], what: str = "boxes") -> List[Box]:
    out = []
    for i, b in enumerate(boxes):
        b = tuple(float(v) for v in b)
        if not all(math.isfinite(v) for v in b):
            raise InvalidInputError(f"{what} row {i} is not finite")
        if b[2] < b[0] or b[3] < b[1]:
            raise InvalidInputError(f"{what} row {i} has x1 < x0 or y1 < y0")
        out.append(b)
    return out


def intersects(a: Box, b: Box) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def contains(a: Box, b: Box) -> bool:
    return a[0] <= b[0] and b[2] <= a[2] and a[1] <= b[1] and b[3] <= a[3]


def overlaps_area(a: Box, b: Box) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def gap(a: Box, b: Box) -> float:
    dx = max(0.0, b[0] - a[2], a[0] - b[2])
    dy = max(0.0, b[1] - a[3], a[1] - b[3])
    return math.sqrt(dx * dx + dy * dy)


def visibility(boxes, viewport, near_factor=0.75):
    boxes = check_boxes(boxes)
    vp = tuple(float(v) for v in viewport)
    near = near_factor * max(vp[2] - vp[0], vp[3] - vp[1])
    labels, gaps = [], []
    for b in boxes:
        if contains(vp, b):
            labels.append(VISIBLE)
            gaps.append(0.0)
        elif intersects(vp, b):
            labels.append(PARTIAL)
            gaps.append(0.0)
        else:
            g = gap(b, vp)
            labels.append(OFFSCREEN_NEAR if g <= near else OFFSCREEN_FAR)
            gaps.append(g)
    return labels, gaps


def _clip(a: Box, b: Box) -> Box:
    return (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))


def _qualifies(i, j, order, opacity, hidden, min_opacity):
    return order[j] > order[i] and not hidden[j] and opacity[j] >= min_opacity


def occluders(boxes, order, opacity, hidden, viewport, min_opacity=0.9):
    boxes = check_boxes(boxes)
    vp = tuple(float(v) for v in viewport)
    out = []
    for i, b in enumerate(boxes):
        if not intersects(b, vp):
            out.append(-1)
            continue
        q = _clip(b, vp)
        cands = [
            j
            for j in range(len(boxes))
            if _qualifies(i, j, order, opacity, hidden, min_opacity) and contains(boxes[j], q)
        ]
        out.append(min(cands, key=lambda j: (order[j], j)) if cands else -1)
    return out


def _union_cover(q: Box, rects: List[Box]) -> Tuple[bool, Fraction]:
    """Exact coverage of q by rects (all inside q): every grid cell checked."""
    xs = sorted({q[0], q[2], *[r[0] for r in rects], *[r[2] for r in rects]})
    ys = sorted({q[1], q[3], *[r[1] for r in rects], *[r[3] for r in rects]})
    covered = Fraction(0)
    full = True
    for x0, x1 in zip(xs, xs[1:]):
        for y0, y1 in zip(ys, ys[1:]):
            cell = (x0, y0, x1, y1)
            if any(contains(r, cell) for r in rects):
                covered += (Fraction(x1) - Fraction(x0)) * (Fraction(y1) - Fraction(y0))
            else:
                full = False
    return full, covered


def occluders_union(boxes, order, opacity, hidden, viewport, min_opacity=0.9):
    """Returns (occ, fraction) with fraction an exact Fraction."""
    bounded = occluders(boxes, order, opacity, hidden, viewport, min_opacity)
    boxes = check_boxes(boxes)
    vp = tuple(float(v) for v in viewport)
    occ, frac = [], []
    for i, b in enumerate(boxes):
        if not intersects(b, vp):
            occ.append(-1)
            frac.append(Fraction(0))
            continue
        if bounded[i] >= 0:
            occ.append(bounded[i])
            frac.append(Fraction(1))
            continue
        q = _clip(b, vp)
        if not (q[2] > q[0] and q[3] > q[1]):
            occ.append(-1)
            frac.append(Fraction(0))
            continue
        js = [
            j
            for j in range(len(boxes))
            if _qualifies(i, j, order, opacity, hidden, min_opacity) and overlaps_area(boxes[j], q)
        ]
        full, covered = _union_cover(q, [_clip(boxes[j], q) for j in js])
        if full:
            occ.append(min(js, key=lambda j: (order[j], j)))
            frac.append(Fraction(1))
        else:
            occ.append(-1)
            frac.append(covered / ((Fraction(q[2]) - Fraction(q[0])) * (Fraction(q[3]) - Fraction(q[1]))))
    return occ, frac


def overlap_pairs(boxes):
    boxes = check_boxes(boxes)
    pairs, areas = [], []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i], boxes[j]
            if overlaps_area(a, b):
                pairs.append((i, j))
                areas.append((min(a[2], b[2]) - max(a[0], b[0])) * (min(a[3], b[3]) - max(a[1], b[1])))
    return pairs, areas


def overlap_pairs_between(boxes, queries):
    boxes, queries = check_boxes(boxes), check_boxes(queries)
    pairs, areas = [], []
    for i, a in enumerate(boxes):
        for j, b in enumerate(queries):
            if overlaps_area(a, b):
                pairs.append((i, j))
                areas.append((min(a[2], b[2]) - max(a[0], b[0])) * (min(a[3], b[3]) - max(a[1], b[1])))
    return pairs, areas


def overlap_any_ranked(boxes, ranks, queries, query_ranks, above=True):
    """Per query, whether some box ranked above (below) it overlaps it with positive area."""
    boxes, queries = check_boxes(boxes), check_boxes(queries)
    return [any(overlaps_area(a, q) and (r > qr if above else r < qr) for a, r in zip(boxes, ranks))
            for q, qr in zip(queries, query_ranks)]


def containment_pairs(boxes):
    boxes = check_boxes(boxes)
    return [
        (o, i) for o in range(len(boxes)) for i in range(len(boxes)) if o != i and contains(boxes[o], boxes[i])
    ]


def proximity_pairs(boxes, max_gap, k_nearest):
    boxes = check_boxes(boxes)
    if not (math.isfinite(max_gap) and max_gap >= 0):
        raise InvalidInputError("max_gap must be a finite number >= 0")
    if k_nearest < 0:
        raise InvalidInputError("k_nearest must be >= 0")
    kept = {}
    for i, a in enumerate(boxes):
        cands = []
        for j, b in enumerate(boxes):
            if j != i and not overlaps_area(a, b):
                g = gap(a, b)
                if g <= max_gap:
                    cands.append((g, j))
        for g, j in sorted(cands)[:k_nearest]:
            kept[(min(i, j), max(i, j))] = g
    keys = sorted(kept)
    return keys, [kept[k] for k in keys]


def alignment_pairs(boxes, tol):
    boxes = check_boxes(boxes)
    if not (math.isfinite(tol) and tol >= 0):
        raise InvalidInputError("tol must be a finite number >= 0")
    keyfuncs = [
        lambda r: r[0],
        lambda r: (r[0] + r[2]) * 0.5,
        lambda r: r[2],
        lambda r: r[1],
        lambda r: (r[1] + r[3]) * 0.5,
        lambda r: r[3],
    ]
    pairs, kinds = [], []
    for kind, key in enumerate(keyfuncs):
        vertical = kind <= 2
        order = sorted(range(len(boxes)), key=lambda i: (key(boxes[i]), i))
        found = []
        s = 0
        while s < len(order):
            start = key(boxes[order[s]])
            e = s + 1
            while e < len(order) and key(boxes[order[e]]) - start <= tol:
                e += 1
            line = order[s:e]

            def along(i):
                r = boxes[i]
                return (r[1] + r[3]) * 0.5 if vertical else (r[0] + r[2]) * 0.5

            line.sort(key=lambda i: (along(i), i))
            found += [(min(a, b), max(a, b)) for a, b in zip(line, line[1:])]
            s = e
        for p in sorted(found):
            pairs.append(p)
            kinds.append(kind)
    return pairs, kinds


def alignment_masks(boxes, tol, group=None):
    """alignment_pairs merged per (i, j, axis) into kind bit masks, optionally among one group."""
    pairs, kinds = alignment_pairs(boxes, tol)
    masks = {}
    for (i, j), kind in zip(pairs, kinds):
        if group is not None and group[i] != group[j]:
            continue
        key = (i, j, 0 if kind <= 2 else 1)
        masks[key] = masks.get(key, 0) | (1 << kind)
    keys = sorted(masks)
    return [(i, j) for i, j, _ in keys], [a for _, _, a in keys], [masks[k] for k in keys]


def reading_order(boxes, row_tol):
    boxes = check_boxes(boxes)
    if not (math.isfinite(row_tol) and row_tol >= 0):
        raise InvalidInputError("row_tol must be a finite number >= 0")
    cy = [(b[1] + b[3]) * 0.5 for b in boxes]
    order = sorted(range(len(boxes)), key=lambda i: (cy[i], boxes[i][0], i))
    rank = [0] * len(boxes)
    nxt = 0
    s = 0
    while s < len(order):
        e = s + 1
        while e < len(order) and cy[order[e]] - cy[order[s]] <= row_tol:
            e += 1
        for i in sorted(order[s:e], key=lambda i: (boxes[i][0], cy[i], i)):
            rank[i] = nxt
            nxt += 1
        s = e
    return rank


def index_query(boxes, q: Box) -> List[int]:
    boxes = check_boxes(boxes)
    return [i for i, b in enumerate(boxes) if intersects(b, q)]


def index_query_containing(boxes, q: Box) -> List[int]:
    boxes = check_boxes(boxes)
    return [i for i, b in enumerate(boxes) if contains(b, q)]


def index_query_pairs(boxes) -> List[Tuple[int, int]]:
    boxes = check_boxes(boxes)
    return [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if intersects(boxes[i], boxes[j])]


def pairs_array(pairs) -> List[List[int]]:
    """(k, 2) list of pairs → the (2, k) nested list the kernels return."""
    return [[p[0] for p in pairs], [p[1] for p in pairs]]


