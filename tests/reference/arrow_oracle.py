"""Naive oracles for the arrow kernels, written from the definitions in exact arithmetic.

Segments, polylines and circles are read with :class:`fractions.Fraction`, so the
crossing tests decide exactly; the kernels under test work in floats with tldraw's
tolerances, and the property tests compare them away from the tolerance bands.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import List, Optional, Sequence, Tuple

Pt = Tuple[float, float]


def segment_crossing(a1: Pt, a2: Pt, b1: Pt, b2: Pt) -> Optional[Tuple[Fraction, Fraction]]:
    """Parameters ``(s, t)`` with ``a1 + s (a2 - a1) = b1 + t (b2 - b1)``, both in [0, 1]; None if parallel or apart."""
    ax, ay = Fraction(a1[0]), Fraction(a1[1])
    dx, dy = Fraction(a2[0]) - ax, Fraction(a2[1]) - ay
    bx, by = Fraction(b1[0]), Fraction(b1[1])
    ex, ey = Fraction(b2[0]) - bx, Fraction(b2[1]) - by
    den = dx * ey - dy * ex
    if den == 0:
        return None
    s = ((bx - ax) * ey - (by - ay) * ex) / den
    t = ((bx - ax) * dy - (by - ay) * dx) / den
    if 0 <= s <= 1 and 0 <= t <= 1:
        return s, t
    return None


def segment_polyline(a: Pt, b: Pt, pts: Sequence[Pt], closed: bool) -> List[Tuple[Fraction, Pt]]:
    """Every crossing of segment ``ab`` with the polyline's edges: ``(s along ab, point)``."""
    out = []
    n = len(pts)
    edges = [(pts[i], pts[(i + 1) % n]) for i in range(n if closed else n - 1)]
    for p, q in edges:
        hit = segment_crossing(a, b, p, q)
        if hit is not None:
            s = hit[0]
            out.append((s, (float(a[0] + s * (Fraction(b[0]) - Fraction(a[0]))),
                            float(a[1] + s * (Fraction(b[1]) - Fraction(a[1]))))))
    return out


def circle_segment(c: Pt, r: float, p: Pt, q: Pt) -> List[float]:
    """Parameters t in [0, 1] where ``p + t (q - p)`` lies on the circle (the quadratic, solved directly)."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    fx, fy = p[0] - c[0], p[1] - c[1]
    a = dx * dx + dy * dy
    b = 2 * (fx * dx + fy * dy)
    k = fx * fx + fy * fy - r * r
    disc = b * b - 4 * a * k
    if a == 0 or disc <= 0:
        return []
    root = math.sqrt(disc)
    return [t for t in ((-b - root) / (2 * a), (-b + root) / (2 * a)) if 0 <= t <= 1]


def nearest_distance(p: Pt, pts: Sequence[Pt], closed: bool) -> float:
    """Distance from ``p`` to the polyline: the minimum over edges of the clamped projection."""
    best = math.inf
    n = len(pts)
    for i in range(n if closed else n - 1):
        (sx, sy), (ex, ey) = pts[i], pts[(i + 1) % n]
        dx, dy = ex - sx, ey - sy
        l2 = dx * dx + dy * dy
        t = 0.0 if l2 == 0 else min(1.0, max(0.0, ((p[0] - sx) * dx + (p[1] - sy) * dy) / l2))
        best = min(best, math.hypot(p[0] - (sx + t * dx), p[1] - (sy + t * dy)))
    return best
