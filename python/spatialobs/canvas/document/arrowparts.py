"""The pieces of arrow geometry that the arrow modules share, a floor below them: points, boxes and rigid
page transforms, the polyline crossings and nearest points tldraw uses, the regular polygons and the star
of geo outlines, a target's :class:`Outline` and a bound :class:`Terminal`.

:mod:`~spatialobs.canvas.document.arrows` (straight and curved arrows), :mod:`~spatialobs.canvas.document.elbow`
(elbow routes) and :mod:`~spatialobs.canvas.document.drawstyle` (hand-drawn outlines) build on this module;
``arrows`` exports the public names as before.

Examples
--------
>>> _to_page((10.0, 0.0, 0.0, 1.0), (1.0, 0.0))
(10.0, 1.0)
>>> nearest_on_polyline((1, 5), [(0, 0), (2, 0), (2, 2), (0, 2)], True)
(1.0, 2.0)
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from spatialobs.canvas.document.sanitize import is_mapping

__all__ = ["Outline", "Terminal", "intersect_segment_segment", "intersect_segment_polyline", "nearest_on_polyline"]

Pt = Tuple[float, float]


Box = Tuple[float, float, float, float]


#: A rigid page transform: origin x, y and the cosine and sine of the rotation.
Xf = Tuple[float, float, float, float]


_PI = math.pi


_PI2 = 2 * math.pi


def _dist2(a: Pt, b: Pt) -> float:
    dx, dy = a[0] - b[0], a[1] - b[1]
    return dx * dx + dy * dy


def intersect_segment_segment(a1: Pt, a2: Pt, b1: Pt, b2: Pt, precision: float = 1e-10) -> Optional[Pt]:
    """Point where segments ``a1a2`` and ``b1b2`` cross, as tldraw finds it, or None.

    Parallel, coincident and degenerate pairs give None; the ends count within
    ``precision`` (in the segments' parameters).

    Examples
    --------
    >>> intersect_segment_segment((0, 0), (2, 2), (0, 2), (2, 0))
    (1.0, 1.0)
    >>> intersect_segment_segment((0, 0), (1, 0), (0, 1), (1, 1)) is None
    True
    """
    abx, aby = a1[0] - b1[0], a1[1] - b1[1]
    bvx, bvy = b2[0] - b1[0], b2[1] - b1[1]
    avx, avy = a2[0] - a1[0], a2[1] - a1[1]
    ua_t = bvx * aby - bvy * abx
    ub_t = avx * aby - avy * abx
    u_b = bvy * avx - bvx * avy
    if abs(ua_t) <= precision or abs(ub_t) <= precision or abs(u_b) <= precision:
        return None
    ua = ua_t / u_b
    ub = ub_t / u_b
    if -precision <= ua <= 1 + precision and -precision <= ub <= 1 + precision:
        return (a1[0] + ua * avx, a1[1] + ua * avy)
    return None


def intersect_segment_polyline(a: Pt, b: Pt, pts: Sequence[Pt], closed: bool) -> List[Pt]:
    """Crossings of segment ``ab`` with a polyline (``closed``: also its last → first edge).

    Examples
    --------
    >>> intersect_segment_polyline((-1, 1), (3, 1), [(0, 0), (2, 0), (2, 2), (0, 2)], True)
    [(2.0, 1.0), (0.0, 1.0)]
    """
    out: List[Pt] = []
    n = len(pts)
    stop = n if closed else n - 1
    for i in range(stop):
        p = intersect_segment_segment(a, b, pts[i], pts[(i + 1) % n])
        if p is not None:
            out.append(p)
    return out


def nearest_on_polyline(p: Pt, pts: Sequence[Pt], closed: bool) -> Pt:
    """Nearest point to ``p`` on a polyline (first one found on a tie).

    Examples
    --------
    >>> nearest_on_polyline((1, 5), [(0, 0), (2, 0), (2, 2), (0, 2)], True)
    (1.0, 2.0)
    """
    bx, by = pts[0]
    best = _dist2(p, pts[0])
    n = len(pts)
    stop = n if closed else n - 1
    for i in range(stop):
        sx, sy = pts[i]
        ex, ey = pts[(i + 1) % n]
        dx, dy = ex - sx, ey - sy
        l2 = dx * dx + dy * dy
        if l2 == 0:
            nx, ny = sx, sy
        else:
            t = ((p[0] - sx) * dx + (p[1] - sy) * dy) / l2
            if t <= 0:
                nx, ny = sx, sy
            elif t >= 1:
                nx, ny = ex, ey
            else:
                nx, ny = sx + dx * t, sy + dy * t
        d = (p[0] - nx) ** 2 + (p[1] - ny) ** 2
        if d < best:
            bx, by, best = nx, ny, d
    return (float(bx), float(by))


def _bbox(pts: Sequence[Pt]) -> Box:
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


@dataclass(frozen=True)
class Outline:
    """What an arrow sees of a target shape, in the target's local frame.

    Attributes
    ----------
    points : list of (x, y)
        The outline tldraw intersects arrows with (its geometry's vertices, labels
        and internal strokes left out).
    closed : bool
        Whether the last point joins the first.
    bounds : (x0, y0, x1, y1)
        The geometry's bounds, which normalized anchors refer to.
    stroke : float
        Half the target's stroke width (0 for shapes without a ``size``), which a
        bound arrowhead also keeps clear of.
    """

    points: List[Pt]
    closed: bool
    bounds: Box
    stroke: float


def _polygon_vertices(w: float, h: float, sides: int) -> List[Pt]:
    cx, cy = w / 2, h / 2
    pts = []
    for i in range(sides):
        t = -_PI / 2 + i * (_PI2 / sides)
        pts.append((cx + cx * math.cos(t), cy + cy * math.sin(t)))
    x0, y0, x1, y1 = _bbox(pts)
    bw, bh = x1 - x0, y1 - y0
    if w - bw != 0 or h - bh != 0:
        pts = [((x - x0) / bw * w, (y - y0) / bh * h) for x, y in pts]
    return pts


def _star(w: float, h: float) -> List[Pt]:
    sides = 5
    step = _PI2 / sides / 2
    right = (sides // 4) * 2
    left = sides * 2 - right
    bottom = (sides // 2) * 2
    max_x = (math.cos(-_PI / 2 + right * step) * w) / 2
    min_x = (math.cos(-_PI / 2 + left * step) * w) / 2
    min_y = (math.sin(-_PI / 2) * h) / 2
    max_y = (math.sin(-_PI / 2 + bottom * step) * h) / 2
    diff_x = w - abs(max_x - min_x)
    diff_y = h - abs(max_y - min_y)
    off_x = w / 2 + min_x - (w / 2 - max_x)
    off_y = h / 2 + min_y - (h / 2 - max_y)
    cx, cy = (w - off_x) / 2, (h - off_y) / 2
    ox, oy = (w + diff_x) / 2, (h + diff_y) / 2
    ix, iy = ox / 2, oy / 2
    return [(cx + (ix if i % 2 else ox) * math.cos(-_PI / 2 + i * step),
             cy + (iy if i % 2 else oy) * math.sin(-_PI / 2 + i * step)) for i in range(sides * 2)]


def _num(v: Any, default: float) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return default
    return f if math.isfinite(f) else default


@dataclass
class Terminal:
    """A bound arrow terminal: the target's outline and page transform, and the binding.

    Attributes
    ----------
    outline : Outline
        With ``arrowhead`` as the terminal has one (see :func:`~spatialobs.canvas.document.arrows.target_outline`).
    xf : (x, y, cos, sin)
        The target's page transform.
    anchor : (float, float)
        The binding's normalized anchor.
    precise, exact : bool
        The binding's ``isPrecise`` and ``isExact``.
    target : str
        The target's id (an arrow bound twice to one shape is a special case).
    page_box : (x0, y0, x1, y1) or None
        The target's page bounds (for nested targets); None when not needed.
    snap : str
        The binding's ``snap`` (``none``, ``center``, ``edge-point``, ``edge``): an elbow
        arrow snapped to edges at both ends of one shape goes round it.
    scale : float
        The target's ``scale``, which an elbow arrow's arrowhead gap gives its stroke.
    """

    outline: Outline
    xf: Xf
    anchor: Pt
    precise: bool
    exact: bool
    target: str
    page_box: Optional[Box] = None
    hit: bool = False
    snap: str = "none"
    scale: float = 1.0


def _to_page(xf: Xf, p: Pt) -> Pt:
    ox, oy, c, s = xf
    return (ox + c * p[0] - s * p[1], oy + s * p[0] + c * p[1])


def _from_page(xf: Xf, p: Pt) -> Pt:
    ox, oy, c, s = xf
    dx, dy = p[0] - ox, p[1] - oy
    return (c * dx + s * dy, -s * dx + c * dy)


def _point(p: Any) -> Pt:
    # the reference of its compiled copy in _cextract (a dict of plain numbers), which hands it the rest
    if is_mapping(p):
        return (_num(p.get("x"), 0.0), _num(p.get("y"), 0.0))
    return (0.0, 0.0)


#: How this interpreter's ``math.hypot`` rounds, for the kernel (CPython 3.10-3.11: 0,
#: 3.12+: 1); None where the kernel has no copy of it (the Python path is used).
_HYPOT_VARIANT: Optional[int] = None if sys.version_info < (3, 10) else 0 if sys.version_info < (3, 12) else 1
