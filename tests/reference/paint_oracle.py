"""The painted-cover helpers as they were before their plain-Python fast paths: the twins the fast paths are held to.

``clip_convex`` is Sutherland–Hodgman with the clip polygon's orientation from numpy's sum
of its edge cross products and every step on numpy scalars; ``local_outline`` takes every
``geo`` outline from :func:`~spatialobs.canvas.document.arrows.target_outline`, with no cache.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from spatialobs.canvas.document.arrows import target_outline

_KIND_OF = {"ellipse": "ellipse", "diamond": "diamond"}


def clip_convex(poly: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """``poly`` clipped by the convex polygon ``clip`` (the numpy path)."""
    if len(clip) < 3 or len(poly) == 0:
        return poly[:0]
    cx, cy = clip[:, 0], clip[:, 1]
    signed = float(np.sum(cx * np.roll(cy, -1) - np.roll(cx, -1) * cy))
    sign = 1.0 if signed >= 0 else -1.0
    out = [tuple(p) for p in poly.tolist()]
    m = len(clip)
    for i in range(m):
        if not out:
            break
        ax, ay = clip[i]
        bx, by = clip[(i + 1) % m]
        ex, ey = bx - ax, by - ay

        def side(p: Tuple[float, float]) -> float:
            return sign * (ex * (p[1] - ay) - ey * (p[0] - ax))

        src = out
        out = []
        prev = src[-1]
        sp = side(prev)
        for cur in src:
            sc = side(cur)
            if sc >= 0:
                if sp < 0:
                    t = sp / (sp - sc)
                    out.append((prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])))
                out.append(cur)
            elif sp >= 0:
                t = sp / (sp - sc)
                out.append((prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])))
            prev, sp = cur, sc
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def local_outline(node: Any) -> np.ndarray:
    """A node's local outline, every ``geo`` kind through ``target_outline``."""
    w, h = float(node.w), float(node.h)
    pts: Optional[List[Tuple[float, float]]] = None
    if node.type == "geo" and w > 0 and h > 0:
        pts = [(float(x), float(y)) for x, y in target_outline("geo", node.props, w, h, node.id).points]
    elif node.type in _KIND_OF and w > 0 and h > 0:
        pts = [(float(x), float(y)) for x, y in target_outline("geo", {"geo": _KIND_OF[node.type]}, w, h, node.id).points]
    if pts and len(pts) > 3 and pts[-1] == pts[0]:
        pts = pts[:-1]
    if not pts or len(pts) < 3:
        pts = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)]
    return np.asarray(pts, dtype=np.float64)


def painted_reach(boxes: List[List[float]], rows: List[int], bb: List[List[float]], brank: List[int],
                  dirty: List[int], prev_rows: List[int], prev_occ: List[int], pad: float) -> Tuple[Any, ...]:
    """What an edit's painted cover reaches among the rows in view (``observe._painted_reach_py``), row by
    row on Python floats: ``(out, aff, sub, at)`` as lists, or ``()`` when a row is neither reached nor in
    the previous result."""
    def grow(b: List[float]) -> List[float]:
        m = max(max(abs(v) for v in b), 1.0) * 1e-3 + pad
        return [b[0] - m, b[1] - m, b[2] + m, b[3] + m]

    def meets(a: List[float], b: List[float]) -> bool:
        return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])

    g, gb = [grow(b) for b in boxes], [grow(b) for b in bb]
    prev = dict(zip(prev_rows, prev_occ))
    reach = [r in dirty or any(br > r and meets(x, g[i]) for x, br in zip(gb, brank)) for i, r in enumerate(rows)]
    if not all(hit or r in prev for hit, r in zip(reach, rows)):
        return ()
    out = [prev.get(r, -1) for r in rows]
    aff = [i for i, hit in enumerate(reach) if hit]
    sub = [i for i in range(len(rows)) if reach[i] or any(a < i and meets(g[a], g[i]) for a in aff)]
    return out, aff, sub, [sub.index(a) for a in aff]
