"""tldraw elbow arrows routed as tldraw 5.4.2 routes them.

An elbow arrow (``kind: "elbow"``) is an axis-aligned polyline from one terminal to
the other, in the arrow's own frame. tldraw builds it in four steps, followed here:

1. each terminal is a *box* (a bound target's geometry bounds in arrow space, a
   rotated target's being the box of its rotated outline) or a *point* (a free
   terminal); a precise binding's anchor names the side the arrow must use;
2. each side of a box is *usable* unless the other box blocks it; a terminal with
   no usable side is demoted to a point;
3. a route is picked from a fixed catalogue (right → left, right → top, right →
   right, each turned to the 16 side pairs by flips and a transpose), through the
   mid-line between the boxes (``elbowMidPoint`` slides it) or around the boxes
   expanded by the leg length (36 units for size ``m``, times ``scale``);
4. the end segments are cast into the target's outline and pulled back by the
   arrowhead gap (``10 × scale`` plus half of both strokes), and tiny end nubs
   are straightened.

The route's vertices are the body; its box (and a label's) is the arrow's bounds.

Each arrow is routed by the compiled ``_core.elbow_route``, a port of the router
below operation for operation (the same bits, ``math.hypot``'s rounding and
``sum``'s included); this module's Python router stays as its twin
(:data:`ELBOW_KERNEL` ``= False`` sends every arrow through it).

Examples
--------
>>> from spatialobs.canvas.document.arrows import Terminal, target_outline
>>> box = Terminal(target_outline("geo", {"geo": "rectangle", "size": "m"}, 100, 100),
...                (200.0, 100.0, 1.0, 0.0), (0.5, 0.5), False, False, "shape:box")
>>> r = elbow_route({"start": {"x": 0, "y": 0}, "end": {"x": 0, "y": 0}, "kind": "elbow"},
...                 (0.0, 0.0, 1.0, 0.0), None, box)
>>> r.points
[(0.0, 0.0), (89.875, 0.0), (89.875, 150.0), (186.5, 150.0)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from spatialobs import _core
from spatialobs.canvas.document.arrowparts import (
    _HYPOT_VARIANT,
    Terminal,
    Xf,
    _from_page,
    _num,
    _point,
    _to_page,
    intersect_segment_polyline,
    nearest_on_polyline,
)
from spatialobs.canvas.document.shapes import STROKE_SIZES

__all__ = ["ElbowRoute", "elbow_route", "routed_by_kernel", "EXPAND_LEG", "MIN_LEG", "ELBOW_KERNEL"]

Pt = Tuple[float, float]

#: tldraw's ``expandElbowLegLength`` and ``minElbowLegLength`` per arrow size (times ``scale``).
EXPAND_LEG = {"s": 28.0, "m": 36.0, "l": 44.0, "xl": 66.0}
MIN_LEG = {"s": 6.0, "m": 10.5, "l": 15.0, "xl": 30.0}
_BOUND_ARROW_OFFSET = 10.0
_MIN_DISTANCE = 0.01
_SIDES = ("right", "bottom", "left", "top")
_OPPOSITE = {"top": "bottom", "right": "left", "bottom": "top", "left": "right"}

#: Route elbow arrows with the compiled kernel (``_core.elbow_route``); ``False`` sends
#: every arrow through the Python router, its twin (same routes, bit for bit).
ELBOW_KERNEL = True
_kernel_route: Optional[Callable[..., Any]] = getattr(_core, "elbow_route", None)


@dataclass(frozen=True)
class ElbowRoute:
    """An elbow arrow's body in the arrow's frame.

    Attributes
    ----------
    points : list of (x, y)
        The route's vertices, start to end (tldraw's ``route.points``).
    start_handle, end_handle : (x, y)
        The terminals' targets (a bound handle is its anchor on the target).
    midpoint : (x, y) or None
        The mid-line handle, where a label sits by default.
    start_offset, end_offset : float
        The arrowhead gaps of the two terminals (0 for a free one or one without a head).
    """

    points: List[Pt]
    start_handle: Pt
    end_handle: Pt
    midpoint: Optional[Pt]
    start_offset: float
    end_offset: float


# --------------------------------------------------------------------------- boxes, ranges
class _Box:
    """A mutable box (tldraw's ``Box``: x, y, width, height)."""

    __slots__ = ("x", "y", "w", "h")

    def __init__(self, x: float, y: float, w: float, h: float) -> None:
        self.x, self.y, self.w, self.h = x, y, w, h

    @classmethod
    def of(cls, pts: Sequence[Pt]) -> "_Box":
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        return cls(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))

    def clone(self) -> "_Box":
        return _Box(self.x, self.y, self.w, self.h)

    def expand(self, d: float) -> "_Box":
        self.x -= d
        self.y -= d
        self.w += 2 * d
        self.h += 2 * d
        return self

    def get(self, name: str) -> float:
        if name == "minX":
            return self.x
        if name == "maxX":
            return self.x + self.w
        if name == "minY":
            return self.y
        if name == "maxY":
            return self.y + self.h
        if name == "midX":
            return self.x + self.w / 2
        return self.y + self.h / 2  # midY

    @property
    def left(self) -> float:
        return self.x

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def top(self) -> float:
        return self.y

    @property
    def bottom(self) -> float:
        return self.y + self.h

    def center(self) -> Pt:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def contains(self, p: Sequence[float], margin: float = 0.0) -> bool:
        return not (p[0] < self.x - margin or p[1] < self.y - margin
                    or p[0] > self.x + self.w + margin or p[1] > self.y + self.h + margin)


def _common(a: _Box, b: _Box) -> _Box:
    x0, y0 = min(a.x, b.x), min(a.y, b.y)
    return _Box(x0, y0, max(a.right, b.right) - x0, max(a.bottom, b.bottom) - y0)


def _within(v: float, r: List[float]) -> bool:
    return r[0] <= v <= r[1]


def _subtract(a: List[float], b: List[float]) -> List[List[float]]:
    if a[0] <= b[0] and b[1] <= a[1]:
        return [[a[0], b[0]], [b[1], a[1]]]
    if b[1] <= a[0] or b[0] >= a[1]:
        return [a]
    if b[0] <= a[0] and a[1] <= b[1]:
        return []
    if _within(a[0], b):
        return [[b[1], a[1]]]
    if _within(a[1], b):
        return [[a[0], b[0]]]
    return []


# --------------------------------------------------------------------------- terminals
class _Geom:
    """A bound target's outline in the arrow's frame."""

    __slots__ = ("points", "closed", "box")

    def __init__(self, points: List[Pt], closed: bool) -> None:
        self.points = points
        self.closed = closed
        self.box = _Box.of(points)

    def hit(self, p: Pt, margin: float) -> bool:
        """tldraw's ``hitTestPoint(p, margin, hitInside=true)``."""
        if self.closed and _in_polygon(p, self.points):
            return True
        q = nearest_on_polyline(p, self.points, self.closed)
        return (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 <= margin * margin

    def _lengths(self) -> List[float]:
        pts = self.points
        n = len(pts)
        segs = [(pts[i], pts[(i + 1) % n]) for i in range(n if self.closed else n - 1)]
        return [math.hypot(b[0] - a[0], b[1] - a[1]) for a, b in segs]

    def length(self) -> float:
        return sum(self._lengths())

    def interpolate(self, t: float) -> Pt:
        pts = self.points
        if t <= 0:
            return pts[0]
        lens = self._lengths()
        goal = t * sum(lens)
        run = 0.0
        for i, d in enumerate(lens):
            if run + d >= goal:
                a, b = pts[i], pts[(i + 1) % len(pts)]
                k = (goal - run) / d if d else 0.0
                return (a[0] + (b[0] - a[0]) * k, a[1] + (b[1] - a[1]) * k)
            run += d
        return pts[0] if self.closed else pts[-1]

    def uninterpolate(self, p: Pt) -> float:
        pts = self.points
        n = len(pts)
        best, at, run = math.inf, 0.0, 0.0
        for i in range(n if self.closed else n - 1):
            (sx, sy), (ex, ey) = pts[i], pts[(i + 1) % n]
            dx, dy = ex - sx, ey - sy
            l2 = dx * dx + dy * dy
            t = 0.0 if l2 == 0 else min(1.0, max(0.0, ((p[0] - sx) * dx + (p[1] - sy) * dy) / l2))
            d = math.hypot(p[0] - sx - dx * t, p[1] - sy - dy * t)
            seg = math.sqrt(l2)
            if d < best:
                best, at = d, run + seg * t
            run += seg
        return at / run if run else 0.0


def _in_polygon(p: Pt, pts: Sequence[Pt]) -> bool:
    # winding number, as tldraw's pointInPolygon
    wn = 0
    n = len(pts)
    for i in range(n):
        a = pts[i]
        if a[0] == p[0] and a[1] == p[1]:
            return True
        b = pts[(i + 1) % n]
        cr = (b[0] - a[0]) * (p[1] - a[1]) - (p[0] - a[0]) * (b[1] - a[1])
        if a[1] <= p[1]:
            if b[1] > p[1] and cr > 0:
                wn += 1
        elif b[1] <= p[1] and cr < 0:
            wn -= 1
    return wn != 0


class _Term:
    """tldraw's ``ElbowArrowTerminal``."""

    __slots__ = ("target_id", "side", "bounds", "geom", "target", "offset", "min_end", "exact", "is_point",
                 "snap")

    def __init__(self, target_id: Optional[str], side: Optional[str], bounds: _Box, geom: Optional[_Geom],
                 target: Pt, offset: float, min_end: float, exact: bool, is_point: bool, snap: str) -> None:
        self.target_id = target_id
        self.side = side
        self.bounds = bounds
        self.geom = geom
        self.target = target
        self.offset = offset
        self.min_end = min_end
        self.exact = exact
        self.is_point = is_point
        self.snap = snap


def _side_of_anchor(ax: float, ay: float) -> Optional[str]:
    if abs(ax - 0.5) < 1e-6 and abs(ay - 0.5) < 1e-6:
        return None
    if abs(ax - 0.5) > abs(ay - 0.5) - 0.0001:
        return "left" if ax < 0.5 else "right"
    return "top" if ay < 0.5 else "bottom"


def _terminal(t: Optional[Terminal], free: Pt, arrow_xf: Xf, head: bool, stroke: float, scale: float) -> _Term:
    min_end = stroke * 3
    if t is None:
        return _Term(None, None, _Box(free[0], free[1], 0.0, 0.0), None, free, 0.0, min_end, False, True, "none")
    o = t.outline
    local = _Box.of(o.points)  # the geometry's own bounds (a text's widened one without a head)
    pts = [_from_page(arrow_xf, _to_page(t.xf, p)) for p in o.points]
    geom = _Geom(pts, o.closed)
    ax, ay = (t.anchor if t.precise else (0.5, 0.5))
    target = _from_page(arrow_xf, _to_page(t.xf, (local.x + ax * local.w, local.y + ay * local.h)))
    offset = 0.0
    if head:
        offset = stroke + o.stroke * t.scale + _BOUND_ARROW_OFFSET * scale
    side = None
    if t.precise:
        # the anchor turned by the target's rotation relative to the arrow
        rot = math.atan2(t.xf[3], t.xf[2]) - math.atan2(arrow_xf[3], arrow_xf[2])
        if rot == 0.0:
            side = _side_of_anchor(t.anchor[0], t.anchor[1])
        else:
            c, s = math.cos(rot), math.sin(rot)
            dx, dy = t.anchor[0] - 0.5, t.anchor[1] - 0.5
            side = _side_of_anchor(0.5 + dx * c - dy * s, 0.5 + dx * s + dy * c)
    return _Term(t.target, side, geom.box.clone(), geom, target, offset, min_end, t.exact, False,
                 t.snap)


def _to_point(t: _Term) -> _Term:
    if t.is_point:
        return t
    side = None
    offset = 0.0
    if t.snap in ("edge", "edge-point"):
        offset = t.offset
        if t.side in ("x", "left", "right"):
            side = "x"
        if t.side in ("y", "top", "bottom"):
            side = "y"
    return _Term(t.target_id, side, _Box(t.target[0], t.target[1], 0.0, 0.0), t.geom, t.target, offset,
                 t.min_end, t.exact, True, t.snap)


def _unclosed(t: _Term, other: _Term, expand: float) -> _Term:
    g = t.geom
    if g is None or g.closed or len(g.points) < 2:
        return t
    length = g.length()
    at = g.uninterpolate(t.target)
    prev = g.interpolate(at - 0.01 / length) if length else g.points[0]
    nxt = g.interpolate(at + 0.01 / length) if length else g.points[-1]
    nx, ny = -(nxt[1] - prev[1]), nxt[0] - prev[0]  # the tangent's perpendicular
    axis = "x" if abs(nx) > abs(ny) else "y"
    if g.box.contains(other.target, expand):
        t.side = axis
        return _to_point(t)
    i = 0 if axis == "x" else 1
    size = t.bounds.w if axis == "x" else t.bounds.h
    lo = [0.0, 0.0]
    hi = [0.0, 0.0]
    lo[i], hi[i] = t.target[i] - size * 2, t.target[i] + size * 2
    lo[1 - i] = hi[1 - i] = t.target[1 - i]
    lo_d = hi_d = 0.0
    lo_p = hi_p = None
    for p in intersect_segment_polyline((lo[0], lo[1]), (hi[0], hi[1]), g.points, g.closed):
        if abs(p[i] - t.target[i]) < 1:
            continue
        d = abs(p[0] - t.target[0]) + abs(p[1] - t.target[1])
        if p[i] < t.target[i]:
            if d > lo_d:
                lo_d, lo_p = d, p
        elif d > hi_d:
            hi_d, hi_p = d, p
    lo_edge, hi_edge = ("left", "right") if axis == "x" else ("top", "bottom")
    side = axis
    if lo_p is not None and hi_p is not None:
        side = hi_edge if lo_d > hi_d else lo_edge
    elif lo_p is not None:
        side = hi_edge
    elif hi_p is not None:
        side = lo_edge
    t.side = side
    return t


# --------------------------------------------------------------------------- edges
class _Edge:
    __slots__ = ("value", "expanded", "cross", "cross_target", "partial")

    def __init__(self, value: float, expanded: Optional[float], cross: List[float], cross_target: float,
                 partial: bool) -> None:
        self.value = value
        self.expanded = expanded
        self.cross = cross
        self.cross_target = cross_target
        self.partial = partial


#: side -> (expand sign, main, opposite, cross min, cross max, end of b's range to grow, cross axis)
_SIDE_PROPS = {
    "top": (-1, "minY", "maxY", "minX", "maxX", 1, 0),
    "bottom": (1, "maxY", "minY", "minX", "maxX", 0, 0),
    "left": (-1, "minX", "maxX", "minY", "maxY", 1, 1),
    "right": (1, "maxX", "minX", "minY", "maxY", 0, 1),
}


def _usable_edge(a: _Term, b: _Term, side: str, expand_len: float, min_len: float) -> Optional[_Edge]:
    sign, main, opposite, cmin, cmax, grow, axis = _SIDE_PROPS[side]
    external = (a.target_id is not None and a.target_id == b.target_id
                and a.snap in ("edge", "edge-point") and b.snap in ("edge", "edge-point"))
    value = a.bounds.get(main)
    expanded = None if a.is_point else value + sign * expand_len
    v1, v2 = a.bounds.get(cmin), a.bounds.get(cmax)
    cross = [min(v1, v2), max(v1, v2)]
    m1, m2 = b.bounds.get(main), b.bounds.get(opposite)
    b_range = [min(m1, m2), max(m1, m2)]
    if not b.is_point:
        b_range[grow] -= min_len * 2 * sign
    c1, c2 = b.bounds.get(cmin), b.bounds.get(cmax)
    b_cross = [min(c1, c2) - expand_len, max(c1, c2) + expand_len]
    partial = False
    if _within(value, b_range) and not a.is_point and not b.is_point and not external:
        parts = _subtract(cross, b_cross)
        if not parts:
            return None
        if len(parts) == 1:
            partial = parts[0] is not cross
            cross = parts[0]
        else:
            partial = True
            cross = parts[0] if parts[0][1] - parts[0][0] > parts[1][1] - parts[1][0] else parts[1]
    ct = a.target[axis]
    if not _within(ct, cross):
        return None
    return _Edge(value, expanded, cross, ct, partial)


def _edges(a: _Term, b: _Term, expand_len: float, min_len: float) -> Dict[str, Optional[_Edge]]:
    return {s: _usable_edge(a, b, s, expand_len, min_len) for s in ("top", "right", "bottom", "left")}


def _has_usable(edges: Mapping[str, Optional[_Edge]], side: Optional[str]) -> bool:
    if side is None:
        return any(edges[s] is not None for s in edges)
    if side == "x":
        return edges["left"] is not None or edges["right"] is not None
    if side == "y":
        return edges["top"] is not None or edges["bottom"] is not None
    return edges[side] is not None


def _side_to_use(t: _Term, other: _Term, edges: Mapping[str, Optional[_Edge]]) -> Optional[str]:
    if t.side is None:
        return None
    if t.side == "x":
        if t.bounds.center()[0] > other.bounds.center()[0] and edges["left"] is not None:
            return "left"
        return "right" if edges["right"] is not None else None
    if t.side == "y":
        if t.bounds.center()[1] > other.bounds.center()[1] and edges["top"] is not None:
            return "top"
        return "bottom" if edges["bottom"] is not None else None
    return t.side


# --------------------------------------------------------------------------- working info
#: A transform of the routing frame: (x sign, y sign, transpose).
_T = Tuple[int, int, bool]
_IDENTITY: _T = (1, 1, False)
_ROT90: _T = (-1, 1, True)
_ROT180: _T = (-1, -1, False)
_ROT270: _T = (1, -1, True)
_FLIP_Y: _T = (1, -1, False)


class _Side:
    """One terminal's box, as the router sees it."""

    __slots__ = ("original", "expanded", "edges", "is_point")

    def __init__(self, original: _Box, expanded: _Box, edges: Dict[str, Optional[_Edge]], is_point: bool) -> None:
        self.original = original
        self.expanded = expanded
        self.edges = edges
        self.is_point = is_point


def _tbox(t: _T, b: _Box) -> None:
    if t[0] == -1:
        b.x = -(b.x + b.w)
    if t[1] == -1:
        b.y = -(b.y + b.h)
    if t[2]:
        b.x, b.y = b.y, b.x
        b.w, b.h = b.h, b.w


def _flip_cross(e: Optional[_Edge]) -> None:
    if e is not None:
        e.cross = [-e.cross[1], -e.cross[0]]
        e.cross_target = -e.cross_target


def _flip_value(e: Optional[_Edge]) -> None:
    if e is not None:
        e.value = -e.value
        e.expanded = None if e.expanded is None else -e.expanded


def _tedges(t: _T, e: Dict[str, Optional[_Edge]]) -> None:
    if t[0] == -1:
        e["left"], e["right"] = e["right"], e["left"]
        _flip_cross(e["top"])
        _flip_cross(e["bottom"])
        _flip_value(e["left"])
        _flip_value(e["right"])
    if t[1] == -1:
        e["top"], e["bottom"] = e["bottom"], e["top"]
        _flip_cross(e["left"])
        _flip_cross(e["right"])
        _flip_value(e["top"])
        _flip_value(e["bottom"])
    if t[2]:
        e["left"], e["top"] = e["top"], e["left"]
        e["right"], e["bottom"] = e["bottom"], e["right"]


class _Work:
    """tldraw's ``ElbowArrowWorkingInfo``: the routing problem in a flipped/transposed frame."""

    def __init__(self, a: _Side, b: _Side, common_o: _Box, common_e: _Box, gap_x: float, gap_y: float,
                 mid_x: Optional[float], mid_y: Optional[float], expand_len: float) -> None:
        self.A, self.B = a, b
        self.common_o, self.common_e = common_o, common_e
        self.gap_x, self.gap_y = gap_x, gap_y
        self.mid_x, self.mid_y = mid_x, mid_y
        self.expand_len = expand_len
        self.bias = [1.0, 1.0]
        self.transform: _T = _IDENTITY
        self.inverse: _T = _IDENTITY

    def apply(self, t: _T) -> None:
        cur = self.transform
        nx, ny, ntr = t
        if cur[2]:
            nx, ny = ny, nx
            ntr = not ntr
        if cur[0] == -1:
            nx = -nx
        if cur[1] == -1:
            ny = -ny
        self.transform = (nx, ny, ntr)
        self.inverse = (ny, nx, True) if ntr else (nx, ny, ntr)
        for b in (self.A.original, self.B.original, self.common_o, self.A.expanded, self.B.expanded,
                  self.common_e):
            _tbox(t, b)
        _tedges(t, self.A.edges)
        _tedges(t, self.B.edges)
        self.bias = [self.bias[0] * t[0], self.bias[1] * t[1]]
        if t[2]:
            self.bias.reverse()
        if t[0] == -1:
            self.gap_x = -self.gap_x
            self.mid_x = None if self.mid_x is None else -self.mid_x
        if t[1] == -1:
            self.gap_y = -self.gap_y
            self.mid_y = None if self.mid_y is None else -self.mid_y
        if t[2]:
            self.mid_x, self.mid_y = self.mid_y, self.mid_x
            self.gap_x, self.gap_y = self.gap_y, self.gap_x

    def reset(self) -> None:
        self.apply(self.inverse)

    def vec(self, x: float, y: float) -> List[float]:
        t = self.inverse
        x, y = t[0] * x, t[1] * y
        return [y, x] if t[2] else [x, y]


class _Route:
    __slots__ = ("name", "points", "distance", "skip", "mid")

    def __init__(self, name: str, points: List[List[float]], mid: Optional[List[float]]) -> None:
        self.name = name
        self.points = points
        self.distance = sum(abs(points[i + 1][0] - points[i][0]) + abs(points[i + 1][1] - points[i][1])
                            for i in range(len(points) - 1))
        self.skip: List[List[float]] = []
        self.mid = mid


class _Builder:
    def __init__(self, info: _Work, name: str) -> None:
        self.info = info
        self.name = name
        self.points: List[List[float]] = []
        self.mid: Optional[List[float]] = None

    def add(self, x: float, y: float) -> "_Builder":
        self.points.append(self.info.vec(x, y))
        return self

    def midpoint(self) -> "_Builder":
        a, b = self.points[-2], self.points[-1]
        self.mid = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2]
        return self

    def build(self) -> _Route:
        out: List[List[float]] = []
        for p0 in self.points:
            if len(out) < 2:
                out.append(p0)
                continue
            p1, p2 = out[-1], out[-2]
            d1x, d1y = abs(p0[0] - p1[0]), abs(p0[1] - p1[1])
            d2x, d2y = abs(p0[0] - p2[0]), abs(p0[1] - p2[1])
            if d1x < _MIN_DISTANCE and d1y < _MIN_DISTANCE:
                pass
            elif d1x < _MIN_DISTANCE and d2x < _MIN_DISTANCE:
                p1[1] = p0[1]
            elif d1y < _MIN_DISTANCE and d2y < _MIN_DISTANCE:
                p1[0] = p0[0]
            else:
                out.append(p0)
        return _Route(self.name, out, self.mid)


# --------------------------------------------------------------------------- the route catalogue
def _right_to_left(info: _Work) -> Optional[_Route]:
    ae, be = info.A.edges["right"], info.B.edges["left"]
    if ae is None or be is None:
        return None
    if ae.cross_target > be.cross_target:
        info.apply(_FLIP_Y)
        ae, be = info.A.edges["right"], info.B.edges["left"]
        assert ae is not None and be is not None
    ce = info.common_e
    if info.gap_x > 0 and info.mid_x is not None:
        return (_Builder(info, "to left 1").add(ae.value, ae.cross_target).add(info.mid_x, ae.cross_target)
                .add(info.mid_x, be.cross_target).midpoint().add(be.value, be.cross_target).build())
    if ae.expanded is None or be.expanded is None:
        return None
    if info.mid_y is not None:
        return (_Builder(info, "to left 2").add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
                .add(ae.expanded, info.mid_y).add(be.expanded, info.mid_y).midpoint()
                .add(be.expanded, be.cross_target).add(be.value, be.cross_target).build())
    d3 = (abs(ae.value - ce.right) + abs(ae.cross_target - ce.bottom) + abs(ce.right - be.expanded)
          + abs(ce.bottom - be.cross_target) + info.expand_len + 6)
    d4 = (info.expand_len + abs(ae.cross_target - ce.top) + abs(ae.expanded - ce.left)
          + abs(ce.top - be.cross_target) + abs(ce.left - be.value) + 6 + info.bias[1])
    d5 = (info.expand_len + abs(ae.cross_target - info.A.expanded.bottom) + ce.w
          + abs(info.A.expanded.bottom - info.B.expanded.top) + abs(info.B.expanded.top - be.cross_target)
          + info.expand_len + 8) if info.gap_x < 0 and info.mid_x is not None else math.inf
    if d3 < d4 and d3 < d5:
        return (_Builder(info, "to left 3").add(ae.value, ae.cross_target).add(ce.right, ae.cross_target)
                .add(ce.right, ce.bottom).add(be.expanded, ce.bottom).add(be.expanded, be.cross_target)
                .add(be.value, be.cross_target).build())
    if d4 < d5:
        return (_Builder(info, "to left 4").add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
                .add(ae.expanded, ce.top).add(ce.left, ce.top).add(ce.left, be.cross_target)
                .add(be.value, be.cross_target).build())
    if info.mid_x is not None:
        return (_Builder(info, "to left 5").add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
                .add(ae.expanded, info.A.expanded.bottom).add(info.mid_x, info.A.expanded.bottom)
                .add(info.mid_x, info.B.expanded.top).midpoint().add(be.expanded, info.B.expanded.top)
                .add(be.expanded, be.cross_target).add(be.value, be.cross_target).build())
    return None


def _right_to_top(info: _Work) -> Optional[_Route]:
    ae, be = info.A.edges["right"], info.B.edges["top"]
    if ae is None or be is None:
        return None
    ce = info.common_e
    a_exp = ae.expanded if ae.expanded is not None else ae.value
    b_exp = be.expanded if be.expanded is not None else be.value
    if (ae.cross_target < b_exp and be.cross_target > a_exp) or (
            info.A.is_point and info.B.expanded.contains(info.A.original.center())):
        return (_Builder(info, "to top 1").add(ae.value, ae.cross_target).add(be.cross_target, ae.cross_target)
                .add(be.cross_target, be.value).build())
    if info.gap_x > 0 and info.mid_x is not None and be.expanded is not None:
        return (_Builder(info, "to top 2").add(ae.value, ae.cross_target).add(info.mid_x, ae.cross_target)
                .add(info.mid_x, be.expanded).midpoint().add(be.cross_target, be.expanded)
                .add(be.cross_target, be.value).build())
    if info.gap_y > 0 and ae.expanded is not None and be.cross_target < ae.expanded and info.mid_y is not None:
        return (_Builder(info, "to top 3").add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
                .add(ae.expanded, info.mid_y).add(be.cross_target, info.mid_y).midpoint()
                .add(be.cross_target, be.value).build())
    l4 = (abs(ae.value - ce.right) + abs(ae.cross_target - ce.top) + abs(be.cross_target - ce.right)
          + abs(be.value - ce.top))
    l5 = (abs(ae.value - ae.expanded) + abs(info.B.expanded.left - ae.expanded)
          + abs(info.B.expanded.left - be.cross_target) + abs(ae.cross_target - info.B.expanded.top)
          + abs(be.value - be.expanded)) if (ae.expanded is not None and info.mid_y is not None
                                              and be.expanded is not None) else math.inf
    l6 = (abs(ae.value - ce.right) + abs(ae.cross_target - info.A.expanded.bottom)
          + abs(ae.expanded - be.cross_target) + abs(info.A.expanded.bottom - be.expanded)
          + abs(be.expanded - be.value)) if (ae.expanded is not None and info.mid_x is not None
                                              and be.expanded is not None) else math.inf
    if l4 < l5 and l4 < l6:
        return (_Builder(info, "to top 4").add(ae.value, ae.cross_target).add(ce.right, ae.cross_target)
                .add(ce.right, ce.top).add(be.cross_target, ce.top).add(be.cross_target, be.value).build())
    if be.expanded is not None and ae.expanded is not None and info.mid_y is not None and l5 < l6:
        return (_Builder(info, "to top 5").add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
                .add(ae.expanded, info.mid_y).add(info.B.expanded.left, info.mid_y).midpoint()
                .add(info.B.expanded.left, be.expanded).add(be.cross_target, be.expanded)
                .add(be.cross_target, be.value).build())
    if be.expanded is not None and ae.expanded is not None and info.mid_x is not None:
        return (_Builder(info, "to top 6").add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
                .add(ae.expanded, info.A.expanded.bottom).add(info.mid_x, info.A.expanded.bottom)
                .add(info.mid_x, be.expanded).midpoint().add(be.cross_target, be.expanded)
                .add(be.cross_target, be.value).build())
    return None


def _right_to_bottom(info: _Work) -> Optional[_Route]:
    info.apply(_FLIP_Y)
    return _right_to_top(info)


def _right_to_right(info: _Work) -> Optional[_Route]:
    ae, be = info.A.edges["right"], info.B.edges["right"]
    if ae is None or be is None:
        return None
    ce = info.common_e
    if ((info.gap_x <= 0 or ae.cross_target > info.B.expanded.bottom or ae.cross_target < info.B.expanded.top)
            and (be.value > info.A.original.left or be.cross_target > info.A.expanded.bottom
                 or be.cross_target < info.A.expanded.top)):
        return (_Builder(info, "to right 1").add(ae.value, ae.cross_target).add(ce.right, ae.cross_target)
                .add(ce.right, be.cross_target).add(be.value, be.cross_target).build())
    if info.mid_x is None:
        return None
    if be.expanded is not None and info.gap_x >= 0:
        via_b = abs(be.cross_target - info.B.expanded.bottom) + abs(ae.cross_target - info.B.expanded.bottom)
        via_t = abs(be.cross_target - info.B.expanded.top) + abs(ae.cross_target - info.B.expanded.top)
        y = info.B.expanded.bottom if via_b < via_t else info.B.expanded.top
        return (_Builder(info, "to right 2").add(ae.value, ae.cross_target).add(info.mid_x, ae.cross_target)
                .add(info.mid_x, y).midpoint().add(be.expanded, y).add(be.expanded, be.cross_target)
                .add(be.value, be.cross_target).build())
    if ae.expanded is not None and info.gap_x <= 0:
        via_b = abs(be.cross_target - info.A.expanded.bottom) + abs(ae.cross_target - info.A.expanded.bottom)
        via_t = abs(be.cross_target - info.A.expanded.top) + abs(ae.cross_target - info.A.expanded.top)
        y = info.A.expanded.bottom if via_b < via_t else info.A.expanded.top
        return (_Builder(info, "to right 3").add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
                .add(ae.expanded, y).add(info.mid_x, y).add(info.mid_x, be.cross_target).midpoint()
                .add(be.value, be.cross_target).build())
    return None


_ROUTES: Dict[str, Dict[str, Tuple[_T, Any]]] = {
    "top": {"top": (_ROT270, _right_to_right), "left": (_ROT270, _right_to_top),
            "bottom": (_ROT270, _right_to_left), "right": (_ROT270, _right_to_bottom)},
    "right": {"top": (_IDENTITY, _right_to_top), "right": (_IDENTITY, _right_to_right),
              "bottom": (_IDENTITY, _right_to_bottom), "left": (_IDENTITY, _right_to_left)},
    "bottom": {"top": (_ROT90, _right_to_left), "left": (_ROT90, _right_to_bottom),
               "bottom": (_ROT90, _right_to_right), "right": (_ROT90, _right_to_top)},
    "left": {"top": (_ROT180, _right_to_bottom), "left": (_ROT180, _right_to_right),
             "bottom": (_ROT180, _right_to_top), "right": (_ROT180, _right_to_left)},
}


def _try(info: _Work, a: str, b: str) -> Optional[_Route]:
    t, fn = _ROUTES[a][b]
    info.apply(t)
    r: Optional[_Route] = fn(info)
    info.reset()
    return r


def _pick_best(info: _Work, pairs: Sequence[Tuple[str, str]]) -> Optional[_Route]:
    best: Optional[_Route] = None
    best_n = math.inf
    best_d = math.inf
    bias = 0
    for a, b in pairs:
        bias += 1
        r = _try(info, a, b)
        if r is None:
            continue
        if len(r.points) < best_n:
            best_n, best_d, best = len(r.points), r.distance, r
        elif len(r.points) == best_n and r.distance + bias < best_d:
            best_d, best = r.distance, r
    return best


def _exp(e: _Edge) -> float:
    return e.expanded if e.expanded is not None else e.value


def _auto(info: _Work) -> Optional[_Route]:
    ideal = None
    if abs(info.gap_x) + 1 > abs(info.gap_y) and info.mid_x is not None:
        ideal = _try(info, "right", "left") if info.gap_x > 0 else _try(info, "left", "right")
    else:
        ar, al = info.A.edges["right"], info.A.edges["left"]
        bt, bb = info.B.edges["top"], info.B.edges["bottom"]
        if info.A.is_point and info.B.is_point:
            ideal = _try(info, "bottom", "top") if info.gap_y > 0 else _try(info, "top", "bottom")
        elif ar and bt and _exp(ar) <= bt.cross_target and ar.cross_target <= _exp(bt):
            ideal = _try(info, "right", "top")
        elif ar and bb and _exp(ar) <= bb.cross_target and ar.cross_target >= _exp(bb):
            ideal = _try(info, "right", "bottom")
        elif al and bt and _exp(al) >= bt.cross_target and al.cross_target <= _exp(bt):
            ideal = _try(info, "left", "top")
        elif al and bb and _exp(al) >= bb.cross_target and al.cross_target >= _exp(bb):
            ideal = _try(info, "left", "bottom")
        elif info.gap_y > 0 and info.mid_y is not None:
            ideal = _try(info, "bottom", "top")
        elif info.gap_y < 0 and info.mid_y is not None:
            ideal = _try(info, "top", "bottom")
    if ideal is not None:
        return ideal
    a_sides = [s for s in _SIDES if info.A.edges[s] is not None]
    b_sides = [s for s in _SIDES if info.B.edges[s] is not None]
    return _pick_best(info, [(a, b) for a in a_sides for b in b_sides])


def _partial(info: _Work, a_side: str) -> Optional[_Route]:
    ideal = None
    ar, al = info.A.edges["right"], info.A.edges["left"]
    bt, bb = info.B.edges["top"], info.B.edges["bottom"]
    if a_side == "right":
        if info.gap_x > 0 and info.gap_x > abs(info.gap_y) and info.mid_x is not None:
            ideal = _try(info, "right", "left")
        elif ar and bt and _exp(ar) <= bt.cross_target and ar.cross_target <= _exp(bt):
            ideal = _try(info, "right", "top")
        elif ar and bb and _exp(ar) <= bb.cross_target and ar.cross_target >= _exp(bb):
            ideal = _try(info, "right", "bottom")
    elif a_side == "left":
        if info.gap_x < 0 and abs(info.gap_x) > abs(info.gap_y) and info.mid_x is not None:
            ideal = _try(info, "left", "right")
        elif al and bt and _exp(al) >= bt.cross_target and al.cross_target <= _exp(bt):
            ideal = _try(info, "left", "top")
        elif al and bb and _exp(al) >= bb.cross_target and al.cross_target >= _exp(bb):
            ideal = _try(info, "left", "bottom")
    if ideal is not None:
        return ideal
    order = {"top": ("bottom", "right", "left", "top"), "bottom": ("top", "right", "left", "bottom"),
             "left": ("right", "bottom", "left", "top"), "right": ("left", "bottom", "right", "top")}
    return _pick_best(info, [(a_side, b) for b in order[a_side]])


def _manual(info: _Work, a_side: str, b_side: str) -> Optional[_Route]:
    r = _try(info, a_side, b_side)
    if r is not None:
        return r
    oa, ob = _OPPOSITE[a_side], _OPPOSITE[b_side]
    if info.A.is_point and info.B.is_point:
        return _pick_best(info, [(oa, ob), (a_side, ob), (oa, b_side)])
    if info.A.is_point:
        return _try(info, oa, b_side)
    if info.B.is_point:
        return _try(info, a_side, ob)
    return None


# --------------------------------------------------------------------------- finishing the ends
def _manhattan(a: Sequence[float], b: Sequence[float]) -> float:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _cast(first: bool, t: _Term, other: _Term, route: _Route) -> None:
    g = t.geom
    if g is None:
        return
    pts = route.points
    p1 = pts[0] if first else pts[-1]
    p2 = pts[1] if first else pts[-2]
    p2t: Pt = (p2[0], p2[1])
    probe = p2t if g.closed else t.target
    initial = _manhattan(p1, probe)
    nearest: Optional[Pt] = None
    if t.exact:
        nearest = t.target
    else:
        hits = intersect_segment_polyline(p2t, t.target, g.points, g.closed)
        if g.hit(t.target, max(1.0, t.offset)):
            hits.append(t.target)
        best = math.inf
        for h in hits:
            d = _manhattan(probe, h)
            if d < best:
                best, nearest = d, h
    if nearest is None:
        return
    offset = t.offset
    seg = _manhattan(p2t, nearest)
    if seg < t.offset * 2:
        offset = seg - (t.offset * 2 - t.offset)
    if offset < t.min_end:
        offset = max(0.0, offset) if g.box.contains(other.target) else -t.offset
    moved = nearest
    extra = False
    if not t.exact and offset != 0:
        dx, dy = p2t[0] - nearest[0], p2t[1] - nearest[1]
        n = math.hypot(dx, dy)
        nudged = (nearest[0] + dx / n * offset, nearest[1] + dy / n * offset) if n else nearest
        if offset < 0 and not g.hit(nudged, 0.0):
            moved = nearest
        else:
            extra = offset < 0
            moved = nudged
    route.distance += _manhattan(p2t, moved) - initial
    p1[0], p1[1] = moved[0], moved[1]
    if extra:
        mid = [(p2[0] + p1[0]) / 2, (p2[1] + p1[1]) / 2]
        route.skip.append(mid)
        pts.insert(1 if first else len(pts) - 1, mid)


def _fix_nubs(route: _Route, a: _Term, b: _Term) -> None:
    pts = route.points
    if len(pts) >= 3:
        p, q = pts[0], pts[1]
        if _manhattan(p, q) < a.min_end:
            del pts[1]
            if len(pts) >= 3:
                i = 1 if abs(p[0] - q[0]) < 1e-6 else 0
                pts[1][i] = p[i]
    if len(pts) >= 3:
        p, q = pts[-1], pts[-2]
        if _manhattan(p, q) < b.min_end:
            del pts[-2]
            if len(pts) >= 3:
                i = 1 if abs(p[0] - q[0]) < 1e-6 else 0
                pts[-2][i] = p[i]


# --------------------------------------------------------------------------- entry point
def routed_by_kernel() -> bool:
    """Whether :func:`elbow_route` routes with the compiled kernel now.

    True unless :data:`ELBOW_KERNEL` is off, or the running interpreter's
    ``math.hypot`` or the compiled core is one the kernel does not reproduce.

    Returns
    -------
    bool

    Examples
    --------
    >>> import spatialobs.canvas.document.elbow as elbow
    >>> elbow.routed_by_kernel() == (elbow.ELBOW_KERNEL and elbow._kernel_route is not None
    ...                              and elbow._HYPOT_VARIANT is not None)
    True
    """
    return ELBOW_KERNEL and _kernel_route is not None and _HYPOT_VARIANT is not None


def elbow_route(props: Mapping[str, Any], arrow_xf: Xf, start: Optional[Terminal], end: Optional[Terminal],
                stroke_width: Optional[float] = None) -> Optional[ElbowRoute]:
    """Route a tldraw elbow arrow as tldraw's ``getElbowArrowInfo`` does.

    Parameters
    ----------
    props : mapping
        The arrow's tldraw props (``start``/``end`` for free terminals, ``size``,
        ``scale``, ``elbowMidPoint``, ``arrowheadStart``/``arrowheadEnd``).
    arrow_xf : (x, y, cos, sin)
        The arrow's page transform.
    start, end : Terminal or None
        The bound terminals (None for a free terminal).
    stroke_width : float, optional
        The arrow's stroke width before ``scale`` (from its ``size`` by default).

    Returns
    -------
    ElbowRoute or None
        None when no route exists (tldraw then draws the arrow straight).

    Examples
    --------
    >>> r = elbow_route({"start": {"x": 0, "y": 0}, "end": {"x": 100, "y": 60}}, (0.0, 0.0, 1.0, 0.0), None, None)
    >>> r.points
    [(0.0, 0.0), (50.0, 0.0), (50.0, 60.0), (100.0, 60.0)]
    """
    size = str(props.get("size", "m"))
    scale = _num(props.get("scale"), 1.0) or 1.0
    sw = stroke_width if stroke_width is not None else STROKE_SIZES.get(size, 3.5)
    stroke = sw * scale / 2
    expand_len = EXPAND_LEG.get(size, 36.0) * scale
    min_len = MIN_LEG.get(size, 10.5) * scale
    mid_prop = _num(props.get("elbowMidPoint"), 0.5)
    heads = (props.get("arrowheadStart", "none") != "none", props.get("arrowheadEnd", "arrow") != "none")
    if routed_by_kernel() and _kernel_route is not None:  # (the second test narrows the type)
        r = _kernel_route(arrow_xf, _point(props.get("start")), _point(props.get("end")), _kernel_terminal(start),
                          _kernel_terminal(end), start is not None and end is not None and start.target == end.target,
                          heads[0], heads[1], stroke, scale, expand_len, min_len, mid_prop, _HYPOT_VARIANT)
        return None if r is None else ElbowRoute(*r)
    return _route(arrow_xf, start, end, _point(props.get("start")), _point(props.get("end")), heads, stroke, scale,
                  expand_len, min_len, mid_prop)


def _kernel_terminal(t: Optional[Terminal]) -> Optional[Tuple[Any, ...]]:
    """A bound terminal as the kernel reads it (None for a free one)."""
    if t is None:
        return None
    o = t.outline
    return (o.points, o.closed, t.xf, t.anchor, t.precise, t.exact, t.snap in ("edge", "edge-point"),
            o.stroke * t.scale)


def _route(arrow_xf: Xf, start: Optional[Terminal], end: Optional[Terminal], start_free: Pt, end_free: Pt,
           heads: Tuple[bool, bool], stroke: float, scale: float, expand_len: float, min_len: float,
           mid_prop: float) -> Optional[ElbowRoute]:
    """The Python router, the kernel's twin: :func:`elbow_route` after reading the props."""
    s = _terminal(start, start_free, arrow_xf, heads[0], stroke, scale)
    e = _terminal(end, end_free, arrow_xf, heads[1], stroke, scale)
    s = _unclosed(s, e, expand_len)
    e = _unclosed(e, s, expand_len)
    swap = s.side is None and e.side is not None
    a, b = (e, s) if swap else (s, e)
    ea, eb = _edges(a, b, expand_len, min_len), _edges(b, a, expand_len, min_len)
    a_ok, b_ok = _has_usable(ea, a.side), _has_usable(eb, b.side)
    if not a_ok or not b_ok:
        if not a_ok:
            b = _to_point(b)
        if not b_ok:
            a = _to_point(a)
        if b.bounds.contains(a.target, expand_len):
            b = _to_point(b)
        if a.bounds.contains(b.target, expand_len):
            a = _to_point(a)
        ea, eb = _edges(a, b, expand_len, min_len), _edges(b, a, expand_len, min_len)
    xa = a.bounds.clone() if a.is_point else a.bounds.clone().expand(expand_len)
    xb = b.bounds.clone() if b.is_point else b.bounds.clone().expand(expand_len)
    common_o, common_e = _common(a.bounds, b.bounds), _common(xa, xb)
    gap_x = b.bounds.left - a.bounds.right
    if gap_x < 0:
        gap_x = -max(0.0, a.bounds.left - b.bounds.right)
    gap_y = b.bounds.top - a.bounds.bottom
    if gap_y < 0:
        gap_y = -max(0.0, a.bounds.top - b.bounds.bottom)
    a_min, b_min = a.min_end * 3, b.min_end * 3
    need = (a_min if a.is_point else min_len) + (b_min if b.is_point else min_len)
    mx_range = my_range = None
    if gap_x > need:
        mx_range = (a.bounds.right + a_min if a.is_point else xa.right, b.bounds.left - b_min if b.is_point else xb.left)
    elif gap_x < -need:
        mx_range = (a.bounds.left - a_min if a.is_point else xa.left, b.bounds.right + b_min if b.is_point else xb.right)
    if gap_y > need:
        my_range = (a.bounds.bottom + a_min if a.is_point else xa.bottom, b.bounds.top - b_min if b.is_point else xb.top)
    elif gap_y < -need:
        my_range = (a.bounds.top - a_min if a.is_point else xa.top, b.bounds.bottom + b_min if b.is_point else xb.bottom)
    mid = 1 - mid_prop if swap else mid_prop
    mx = mx_range[0] + (mx_range[1] - mx_range[0]) * mid if mx_range else None
    my = my_range[0] + (my_range[1] - my_range[0]) * mid if my_range else None
    info = _Work(_Side(a.bounds, xa, ea, a.is_point), _Side(b.bounds, xb, eb, b.is_point), common_o, common_e,
                 gap_x, gap_y, mx, my, expand_len)
    a_side, b_side = _side_to_use(a, b, ea), _side_to_use(b, a, eb)
    route = None
    if a_side and b_side:
        route = _manual(info, a_side, b_side)
    elif a_side and not b_side:
        route = _partial(info, a_side)
    if route is None:
        route = _auto(info)
    if route is None:
        return None
    _cast(True, a, b, route)
    _cast(False, b, a, route)
    _fix_nubs(route, a, b)
    if swap:
        route.points.reverse()
    pts = [(float(p[0]), float(p[1])) for p in route.points]
    st, et = (b, a) if swap else (a, b)
    return ElbowRoute(pts, st.target, et.target,
                      None if route.mid is None else (route.mid[0], route.mid[1]), st.offset, et.offset)
