"""The area of a polygon covered by a union of polygons, in exact rational arithmetic.

Straight from the definition: the covered area is the integral over x of the
length of the target's cross-section that lies inside some cover. Every
cross-section is a set of intervals between the polygon edges crossing the
vertical line (even-odd rule); between two consecutive x values where a vertex
lies or two edges cross, every edge is a straight line with the same order, so
each length is linear in x and the integral over the strip is its width times
the length at the strip's middle. With :class:`fractions.Fraction` inputs every
step is exact.
"""

from __future__ import annotations

from fractions import Fraction
from typing import List, Optional, Sequence, Tuple

Pt = Tuple[Fraction, Fraction]


def _edges(poly: Sequence[Pt]) -> List[Tuple[Pt, Pt]]:
    out = []
    for i, a in enumerate(poly):
        b = poly[(i + 1) % len(poly)]
        if a[0] != b[0]:
            out.append((a, b) if a[0] < b[0] else (b, a))
    return out


def _y(e: Tuple[Pt, Pt], x: Fraction) -> Fraction:
    (x0, y0), (x1, y1) = e
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def _intervals(edges: List[Tuple[Pt, Pt]], x: Fraction) -> List[Tuple[Fraction, Fraction]]:
    ys = sorted(_y(e, x) for e in edges if e[0][0] < x < e[1][0])
    return [(ys[i], ys[i + 1]) for i in range(0, len(ys) - 1, 2)]


def _inside(x: Fraction, ivs: List[Tuple[Fraction, Fraction]]) -> bool:
    return any(a <= x <= b for a, b in ivs)


def _len_in(target: List[Tuple[Fraction, Fraction]], covers: List[List[Tuple[Fraction, Fraction]]]) -> Fraction:
    """Length of the target intervals inside the union of the cover intervals (cut at every endpoint)."""
    cuts = sorted({v for a, b in target for v in (a, b)} | {v for c in covers for a, b in c for v in (a, b)})
    total = Fraction(0)
    for lo, hi in zip(cuts, cuts[1:]):
        mid = (lo + hi) / 2
        if _inside(mid, target) and any(_inside(mid, c) for c in covers):
            total += hi - lo
    return total


def coverage(target: Sequence[Pt], covers: Sequence[Sequence[Pt]]) -> Tuple[Fraction, Fraction, Optional[int]]:
    """(area of target, area of target inside the union of covers, the cover meeting it most or None)."""
    te = _edges(target)
    ce = [_edges(c) for c in covers]
    every = te + [e for c in ce for e in c]
    xs = {p[0] for p in target}
    lo, hi = min(xs), max(xs)
    cuts = set(xs) | {p[0] for c in covers for p in c if lo <= p[0] <= hi}
    for i, a in enumerate(every):
        for b in every[i + 1:]:
            l, r = max(a[0][0], b[0][0]), min(a[1][0], b[1][0])
            if l >= r:
                continue
            dl, dr = _y(a, l) - _y(b, l), _y(a, r) - _y(b, r)
            if dl * dr < 0:
                x = l + (r - l) * dl / (dl - dr)
                if lo < x < hi:
                    cuts.add(x)
    xs_sorted = sorted(cuts)
    area = Fraction(0)
    covered = Fraction(0)
    share = [Fraction(0)] * len(covers)
    for a, b in zip(xs_sorted, xs_sorted[1:]):
        w = b - a
        mid = (a + b) / 2
        t = _intervals(te, mid)
        if not t:
            continue
        area += w * sum((q - p for p, q in t), Fraction(0))
        cs = [_intervals(e, mid) for e in ce]
        covered += w * _len_in(t, cs)
        for j, c in enumerate(cs):
            share[j] += w * _len_in(t, [c])
    best = None
    for j, s in enumerate(share):
        if s > 0 and (best is None or s > share[best]):
            best = j
    return area, covered, best
