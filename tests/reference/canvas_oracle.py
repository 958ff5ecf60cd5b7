"""Independent geometry for canvas tests, written from the definition (DESIGN §3)."""

from __future__ import annotations

import math


def corners_box(ox, oy, rot, x0, y0, x1, y1):
    """Page bounds of a local box rotated by ``rot`` about the local origin, then moved to (ox, oy).

    Rotates the four corners and takes their extent.
    """
    xs, ys = [], []
    for cx, cy in ((x0, y0), (x1, y0), (x1, y1), (x0, y1)):
        xs.append(ox + cx * math.cos(rot) - cy * math.sin(rot))
        ys.append(oy + cx * math.sin(rot) + cy * math.cos(rot))
    return (min(xs), min(ys), max(xs), max(ys))
