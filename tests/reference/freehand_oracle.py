"""Naive oracle for the stroke-point smoothing, written straight from tldraw's definition.

tldraw's ``getStrokePoints`` (``ingest`` in its freehand ``core.ts``) for a stroke
without simulated pressure, step by step on a list of point records, keeping every
intermediate list; no numpy, no fused loops. Only the smoothed positions are kept
(pressure plays no part in a solid stroke's geometry).
"""

from __future__ import annotations

import math
from typing import Dict, List, Sequence, Tuple

Pt = Tuple[float, float]


def stroke_points(points: Sequence[Pt], size: float, streamline: float, last: bool) -> List[Pt]:
    """The smoothed points of a stroke, in order (the first one is the first input point)."""
    pts = [(float(x), float(y)) for x, y in points]
    if not pts:
        return []
    t = 0.15 + (1 - streamline) * 0.85
    min_dist = size / 3

    def dist(a: Pt, b: Pt) -> float:
        return math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2)

    # 1. drop the points (after the first) that lie within size / 3 of the first one,
    #    until the first one farther away
    first = pts[0]
    rest = pts[1:]
    while rest and dist(rest[0], first) <= min_dist:
        rest.pop(0)
    staged = [first] + rest

    # 2. walking back from the second-to-last, drop the points within size / 3 of the
    #    last one; the last point then takes the place of the last one dropped
    if len(staged) > 1:
        last_pt = staged[-1]
        body = staged[:-1]
        dropped = 0
        while body and dist(body[-1], last_pt) <= min_dist:
            body.pop()
            dropped += 1
        if dropped:
            staged = body + [last_pt]

    # 3. a complete stroke (always, without simulated pressure) repeats its last point
    if streamline > 0:
        staged = staged + [staged[-1]]

    # 4. each point moves from the previous smoothed point towards its input point by t;
    #    the last one of a finished stroke lands on its input point
    out: List[Dict[str, float]] = [{"x": staged[0][0], "y": staged[0][1], "running": 0.0}]
    prev = staged[0]
    total = 0.0
    for i in range(1, len(staged)):
        target = staged[i]
        if last and i == len(staged) - 1:
            p = target
        else:
            # written as tldraw writes it (target + (prev - target) * (1 - t)), so the
            # thresholds below see the same floats
            u = 1 - t
            p = (target[0] + (prev[0] - target[0]) * u, target[1] + (prev[1] - target[1]) * u)
        # the same point again (within 0.0001 on both axes): skipped, the previous one stays
        if abs(prev[0] - p[0]) < 0.0001 and abs(prev[1] - p[1]) < 0.0001:
            continue
        total += math.sqrt((p[1] - prev[1]) ** 2 + (p[0] - prev[0]) ** 2)
        # the first three may be noise: skipped while the stroke is shorter than its size
        if i < 4 and total < size:
            continue
        out.append({"x": p[0], "y": p[1], "running": total})
        prev = p
    return [(q["x"], q["y"]) for q in out]
