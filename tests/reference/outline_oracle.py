"""Naive oracle for rotated outline bounds: sample the outline densely and take the box.

Written from the definitions (an ellipse's parametric form, a diamond's four edge
midpoints of its box), independent of ``derive._outline_boxes``.
"""

from __future__ import annotations

import math
from typing import List, Tuple


def outline_points(kind: str, w: float, h: float, steps: int = 20000) -> List[Tuple[float, float]]:
    """Points on the outline of an ``ellipse`` or ``diamond`` filling the box ``(0, 0, w, h)``."""
    if kind == "diamond":
        return [(w / 2, 0.0), (w, h / 2), (w / 2, h), (0.0, h / 2)]
    return [(w / 2 + w / 2 * math.cos(2 * math.pi * i / steps), h / 2 + h / 2 * math.sin(2 * math.pi * i / steps))
            for i in range(steps)]


def rotated_outline_box(kind: str, w: float, h: float, angle: float, ox: float, oy: float) -> Tuple[float, ...]:
    """Box of the outline turned by ``angle`` about the local origin, moved to ``(ox, oy)``."""
    c, s = math.cos(angle), math.sin(angle)
    pts = [(ox + c * x - s * y, oy + s * x + c * y) for x, y in outline_points(kind, w, h)]
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))
