"""Naive checks of placement, written straight from the definition (DESIGN §5, §6).

``placement_violations`` states the Correct placement conditions as pure-Python
loops over page bounds; ``nearest_free_lattice`` scans every integer position of
one box, the brute-force twin of the placement search for integer inputs.
``solve_placement_reference`` is the placement solver in Python and numpy, the
twin of ``solve_placement`` (whose greedy passes run in the compiled core): the
same lines visited in the same order, so the same corners to the bit and the
same errors.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from spatialobs.canvas.editing.place import _checked, _no_room

Box = Tuple[float, float, float, float]
_STATE = ("type", "w", "h", "text", "name", "style", "opacity", "locked", "hidden", "props")


def overlap_area(a: Box, b: Box) -> float:
    """Area of the intersection of two boxes (0 when they only touch)."""
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    return ix * iy if ix > 0 and iy > 0 else 0.0


def placement_violations(before, after, ids: Sequence[str], dest: Box, *, inset: float = 8.0,
                         max_overlap: float = 1.0, occupants: Iterable[str] = (), eps: float = 1e-6) -> List[str]:
    """Every way ``after`` breaks Correct placement of ``ids`` into page box ``dest``.

    Size means the page bounds' width and height; other state is every node field
    but position, parent, index and local rotation (the page rotation must stay).
    """
    out: List[str] = []
    L, T, R, B = dest[0] + inset, dest[1] + inset, dest[2] - inset, dest[3] - inset
    boxes = {}
    for i in ids:
        b0, b1 = before.page_bounds(i), after.page_bounds(i)
        boxes[i] = b1
        if abs((b0[2] - b0[0]) - (b1[2] - b1[0])) > eps or abs((b0[3] - b0[1]) - (b1[3] - b1[1])) > eps:
            out.append(f"{i}: size changed {b0} -> {b1}")
        if b1[0] < L - eps or b1[1] < T - eps or b1[2] > R + eps or b1[3] > B + eps:
            out.append(f"{i}: {b1} not inside {(L, T, R, B)}")
        n0, n1 = before.node(i), after.node(i)
        for f in _STATE:
            if getattr(n0, f) != getattr(n1, f):
                out.append(f"{i}: field {f} changed")
        if abs(before.page_rotation(i) - after.page_rotation(i)) > 1e-9:
            out.append(f"{i}: page rotation changed")
    ids = list(ids)
    for a in range(len(ids)):
        for b in range(a + 1, len(ids)):
            area = overlap_area(boxes[ids[a]], boxes[ids[b]])
            if area > max_overlap:
                out.append(f"{ids[a]} and {ids[b]} overlap by {area}")
    for o in occupants:
        ob = after.page_bounds(o)
        for i in ids:
            area = overlap_area(boxes[i], ob)
            if area > max_overlap:
                out.append(f"{i} overlaps occupant {o} by {area}")
    return out


def nearest_free_lattice(w: int, h: int, want: Tuple[int, int], inner: Box,
                         obstacles: Sequence[Box]) -> Optional[Tuple[int, int, int]]:
    """(squared distance, x, y) of the nearest integer corner where a w×h box fits, or None."""
    L, T, R, B = (int(v) for v in inner)
    best = None
    for x in range(L, R - w + 1):
        for y in range(T, B - h + 1):
            box = (x, y, x + w, y + h)
            if all(overlap_area(box, o) == 0 for o in obstacles):
                d = (x - want[0]) ** 2 + (y - want[1]) ** 2
                if best is None or d < best[0]:
                    best = (d, x, y)
    return best


def nearest_on_line(lo: float, hi: float, t: float, a: np.ndarray, b: np.ndarray) -> Optional[float]:
    """Point of [lo, hi] nearest to ``t`` outside every open interval (a_i, b_i); None if none."""
    t = min(max(t, lo), hi)
    if not len(a):
        return t
    order = np.argsort(a, kind="stable")
    a, b = a[order].tolist(), b[order].tolist()
    start, end = a[0], b[0]
    for k in range(1, len(a) + 1):
        if k < len(a) and a[k] < end:  # overlapping open intervals merge; touching ones leave a free point
            end = max(end, b[k])
            continue
        if start < t < end:
            cands = [v for v in (start, end) if lo <= v <= hi]
            return min(cands, key=lambda v: (abs(v - t), v)) if cands else None
        if k < len(a):
            start, end = a[k], b[k]
    return t


def nearest_free(w: float, h: float, want: Tuple[float, float], inner: Box,
                 obs: np.ndarray) -> Optional[Tuple[float, float]]:
    """Upper-left corner nearest to ``want`` where a w×h box fits in ``inner`` overlapping no obstacle.

    Candidate x lines (the wish clamped, the room's edges, the obstacles' right
    edges and left edges minus w) are visited by (lower bound of the distance,
    x, position); the free y nearest to the wish is exact on each line; the
    visit stops once a lower bound reaches the best distance. With more than 64
    obstacles a line only looks at those within the best distance's reach.
    """
    L, T, R, B = inner
    hi_x, hi_y = R - w, B - h
    wx = min(max(want[0], L), hi_x)
    if len(obs):
        xs = np.concatenate(([wx, L, hi_x], obs[:, 2], obs[:, 0] - w))
        gy = np.maximum(0.0, np.maximum((obs[:, 1] - h) - want[1], want[1] - obs[:, 3]))
        gys = np.concatenate(([0.0, 0.0, 0.0], gy, gy))
    else:
        xs, gys = np.array([wx]), np.array([0.0])
    keep = (xs >= L) & (xs <= hi_x)
    xs, gys = xs[keep], gys[keep]
    dx2s = (xs - want[0]) ** 2
    lbs = dx2s + gys ** 2
    order = np.lexsort((xs, lbs))
    best: Optional[Tuple[float, float]] = None
    bd = math.inf
    seen = set()
    for x, dx2, lb in zip(xs[order].tolist(), dx2s[order].tolist(), lbs[order].tolist()):
        if lb >= bd:
            break
        if x in seen:
            continue
        seen.add(x)
        reach = math.sqrt(bd - dx2) if best is not None else math.inf
        ylo, yhi = max(T, want[1] - reach), min(hi_y, want[1] + reach)
        if ylo > yhi:
            continue
        if not len(obs) or h <= 0 or w <= 0:
            sub = obs[:0]
        elif len(obs) > 64:
            sub = obs[(obs[:, 0] <= x + w) & (obs[:, 2] >= x) & (obs[:, 1] <= yhi + h) & (obs[:, 3] >= ylo)]
        else:
            sub = obs
        if len(sub):
            ix = np.minimum(x + w, sub[:, 2]) - np.maximum(x, sub[:, 0])
            sub = sub[(ix > 0) & (sub[:, 3] > sub[:, 1])]
        y = nearest_on_line(ylo, yhi, want[1], sub[:, 1] - h, sub[:, 3])
        if y is None:
            continue
        d = dx2 + (y - want[1]) * (y - want[1])
        if d < bd:
            best, bd = (x, y), d
    return best


def greedy(sizes: np.ndarray, wants: np.ndarray, inner: Box, obstacles: np.ndarray,
           order: Sequence[int]) -> Tuple[Optional[np.ndarray], int]:
    """One pass: the boxes of ``order`` in turn, each at its nearest free corner; (corners, -1) or (None, failed)."""
    out = np.zeros((len(sizes), 2))
    obs = obstacles
    for k in order:
        w, h = float(sizes[k, 0]), float(sizes[k, 1])
        p = nearest_free(w, h, (float(wants[k, 0]), float(wants[k, 1])), inner, obs)
        if p is None:
            return None, k
        out[k] = p
        obs = np.vstack([obs, [[p[0], p[1], p[0] + w, p[1] + h]]])
    return out, -1


def solve_placement_reference(sizes: Any, wants: Any, inner: Sequence[float], obstacles: Any = (), *,
                              names: Optional[Sequence[str]] = None) -> np.ndarray:
    """The twin of ``solve_placement``: its checks, then the same three passes in Python."""
    # the same checks and messages: only the search differs
    sz, wt, obs, (L, T, R, B), label = _checked(sizes, wants, inner, obstacles, names)
    n = len(sz)
    big_first = sorted(range(n), key=lambda k: (-sz[k, 0] * sz[k, 1], k))
    corner = np.tile([L, T], (n, 1))
    failed = -1
    for order, wishes in ((list(range(n)), wt), (big_first, wt), (big_first, corner)):
        out, failed = greedy(sz, wishes, (L, T, R, B), obs, order)
        if out is not None:
            return out
    raise _no_room(label, sz, failed, (L, T, R, B), obs)
