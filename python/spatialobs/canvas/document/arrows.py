"""tldraw arrows resolved as tldraw 5.4.2 resolves them.

An arrow's stored ``start``/``end`` points are only where its *handles* sit; what
tldraw draws, and what its page bounds cover, follows from the arrow's bindings:

* a bound terminal's handle is the target's geometry-bounds point at the binding's
  ``normalizedAnchor`` (kept 0.001 off the edges), or the bounds' centre for an
  imprecise binding; both ends bound to one shape (or to nested shapes) force the
  anchor;
* a non-exact bound terminal then moves to where the body meets the target's
  *outline*: the polygon tldraw's geometry samples (ellipses, ovals, clouds and
  hearts as polylines, 20 units a vertex), hit by the straight segment from the
  other handle or by the body's circle for an arc (``bend``);
* an arrowhead on a bound terminal stops ``10 + arrow stroke / 2 + target stroke / 2``
  (times the arrow's ``scale``) short, with tldraw's rules for arrows that come out
  too short;
* the page bounds are those of the body's vertices (an arc is sampled, not exact)
  and, for a labelled arrow, of the label rectangle.

Everything here is plain floats on tuples: it runs inside every derivation of a
canvas, once per bound arrow. Straight arrows without a label, most of a real
canvas's, are resolved in one batch per derivation by the compiled
``_core.resolve_straight_arrows``, a port of the straight path below operation for
operation (the same bits, ``math.hypot``'s rounding included); this path stays as its
twin (:data:`STRAIGHT_KERNEL` ``= False`` sends every arrow through it). Bent arrows and
labelled ones are resolved the same way by ``_core.resolve_arrows`` (one call per
derivation over all of them: :func:`_arc`, :func:`arc_vertices` and the fallbacks to a
straight body, ported alike), and their labels placed by ``_core.place_arrow_labels``
(:func:`_label_box` after the label's size is measured here); :data:`ARC_KERNEL` and
:data:`LABEL_KERNEL` ``= False`` send them through this path. One arrow asked for on its
own (:func:`arrow_geometry`, turned arrows' page vertices, painting, export) is resolved
here.

Elbow arrows (``kind: "elbow"``) are routed by :mod:`~spatialobs.canvas.document.elbow`;
frame masks that clip a bound target are not applied.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import struct
from dataclasses import dataclass
from typing import AbstractSet, Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np

from spatialobs import _core
from spatialobs._arrays import unique
from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.arrowparts import (
    _HYPOT_VARIANT,
    _PI,
    _PI2,
    Box,
    Outline,
    Pt,
    Terminal,
    Xf,
    _bbox,
    _dist2,
    _from_page,
    _num,
    _point,
    _polygon_vertices,
    _star,
    _to_page,
    intersect_segment_polyline,
    intersect_segment_segment,
    nearest_on_polyline,
)
from spatialobs.canvas.document.sanitize import is_mapping
from spatialobs.canvas.limits import current as current_limits
from spatialobs.canvas.limits import echo
from spatialobs.canvas.document.shapes import STROKE_SIZES, arc_centre

__all__ = [
    "Outline",
    "Terminal",
    "ArrowGeometry",
    "target_outline",
    "resolve_arrow",
    "intersect_segment_segment",
    "intersect_segment_polyline",
    "intersect_circle_polyline",
    "nearest_on_polyline",
    "arc_vertices",
    "resolve_bound",
    "resolved_ends",
    "arrow_geometry",
    "arrow_ends",
    "page_terminals",
    "unbind_patch",
]


_MIN_ARROW_BEND = 8.0
_ANCHOR_EPS = 1e-3
_MIN_ARROW_LENGTH = 10.0
_BOUND_ARROW_OFFSET = 10.0
_LABEL_TO_ARROW_PADDING = 20.0
_ARROW_LABEL_PADDING = 4.25
_ARROW_LABEL_FONT = {"s": 1.125, "m": 1.25, "l": 1.5, "xl": 1.75}
_THEME_FONT_SIZE = 16.0
_LINE_HEIGHT = 1.35
_TEXT_ARROW_PADDING = 10.0  # tldraw's text util widens its outline for arrows without a head


# --------------------------------------------------------------------------- kernel
def _fmod(a: float, b: float) -> float:
    """JavaScript's ``%`` (the sign follows the dividend)."""
    return math.fmod(a, b)


def _canon(a: float) -> float:
    a = _fmod(a, _PI2)
    if a < 0:
        a += _PI2
    return a + 0.0


def _cw_dist(a0: float, a1: float) -> float:
    a0 = _canon(a0)
    a1 = _canon(a1)
    if a0 > a1:
        a1 += _PI2
    return a1 - a0


def _ccw_dist(a0: float, a1: float) -> float:
    return _PI2 - _cw_dist(a0, a1)


def _short_dist(a0: float, a1: float) -> float:
    da = _fmod(a1 - a0, _PI2)
    return _fmod(2 * da, _PI2) - da


def _angle(a: Pt, b: Pt) -> float:
    return math.atan2(b[1] - a[1], b[0] - a[0])


def _dist(a: Pt, b: Pt) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _equals(a: Pt, b: Pt) -> bool:
    return abs(a[0] - b[0]) < 1e-4 and abs(a[1] - b[1]) < 1e-4


def _uni(x: float, y: float) -> Pt:
    n = math.hypot(x, y)
    return (x / n, y / n) if n else (x, y)


def _on_circle(c: Pt, r: float, a: float) -> Pt:
    if math.isinf(a):  # JavaScript's Math.cos(Infinity) is NaN where Python's raises
        return (math.nan, math.nan)
    return (c[0] + math.cos(a) * r, c[1] + math.sin(a) * r)


def _js_div(a: float, b: float) -> float:
    """``a / b`` as JavaScript divides: by zero gives an infinity, or NaN for ``0 / 0``."""
    if b != 0:
        return a / b
    if a != a or a == 0:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _segment_circle(a1: Pt, a2: Pt, c: Pt, r: float) -> List[Pt]:
    dx, dy = a2[0] - a1[0], a2[1] - a1[1]
    ocx, ocy = a1[0] - c[0], a1[1] - c[1]
    a = dx * dx + dy * dy
    b = 2 * (dx * ocx + dy * ocy)
    cc = ocx * ocx + ocy * ocy - r * r
    det = b * b - 4 * a * cc
    # a segment too short for its squared length to be a float (a == 0) crosses nothing,
    # as in tldraw, where the division by zero gives parameters outside [0, 1]
    if det <= 0 or a == 0:
        return []
    e = math.sqrt(det)
    u1 = (-b + e) / (2 * a)
    u2 = (-b - e) / (2 * a)
    out = []
    if 0 <= u1 <= 1:
        out.append((a1[0] + dx * u1, a1[1] + dy * u1))
    if 0 <= u2 <= 1:
        out.append((a1[0] + dx * u2, a1[1] + dy * u2))
    return out


def intersect_circle_polyline(c: Pt, r: float, pts: Sequence[Pt], closed: bool) -> List[Pt]:
    """Crossings of the circle ``(c, r)`` with a polyline; tangent touches do not count.

    Examples
    --------
    >>> intersect_circle_polyline((0, 0), 1, [(-2, 0), (2, 0)], False)
    [(1.0, 0.0), (-1.0, 0.0)]
    """
    out: List[Pt] = []
    n = len(pts)
    stop = n if closed else n - 1
    for i in range(stop):
        out.extend(_segment_circle(pts[i], pts[(i + 1) % n], c, r))
    return out


def _count_for_length(length: float) -> int:
    # tldraw samples one vertex per 20 units; an arc longer than 20 * MAX_ARC_SPANS units (far
    # beyond any drawn arrow) is sampled coarser rather than allocating without bound
    if not length < 20.0 * MAX_ARC_SPANS:
        return MAX_ARC_SPANS
    return max(8, math.ceil(length / 20))


#: Most spans an arc is sampled with (*ours*: a bound on the work of one hostile arrow).
MAX_ARC_SPANS = 65_536


def _arc_measure(a: float, b: float, sweep: int, large: int) -> float:
    m = _fmod(2 * _fmod(b - a, _PI2), _PI2) - _fmod(b - a, _PI2)
    if not large:
        return m
    return (_PI2 - abs(m)) * (1 if sweep else -1)


def arc_vertices(center: Pt, start: Pt, end: Pt, sweep: int, large: int) -> List[Pt]:
    """The vertices tldraw samples along an arc (one per 20 units of length, at least 8 spans).

    Examples
    --------
    >>> v = arc_vertices((0, 0), (10, 0), (-10, 0), 1, 1)
    >>> len(v), v[0], [round(c, 9) for c in v[-1]]
    (9, (10.0, 0.0), [-10.0, 0.0])
    """
    a0 = _angle(center, start)
    a1 = _angle(center, end)
    r = _dist(center, start)
    m = _arc_measure(a0, a1, sweep, large)
    n = _count_for_length(abs(m * r))
    return [_on_circle(center, r, a0 + (i / n) * m) for i in range(n + 1)]


# --------------------------------------------------------------------------- outlines


class _Path:
    """Just enough of tldraw's PathBuilder to sample one sub-path's vertices."""

    def __init__(self, x: float, y: float) -> None:
        self.pts: List[Pt] = [(x, y)]
        self.start = (x, y)
        self.last = (x, y)

    def line(self, x: float, y: float) -> "_Path":
        self.pts.append((x, y))
        self.last = (x, y)
        return self

    def cubic(self, c1: Pt, c2: Pt, x: float, y: float, res: int = 10) -> "_Path":
        ax, ay = self.last
        for i in range(res + 1):
            t = i / res
            u = 1 - t
            self.pts.append((u * u * u * ax + 3 * (u * u) * t * c1[0] + 3 * u * (t * t) * c2[0] + t * t * t * x,
                             u * u * u * ay + 3 * (u * u) * t * c1[1] + 3 * u * (t * t) * c2[1] + t * t * t * y))
        self.last = (x, y)
        return self

    def arc(self, rx: float, ry: float, large: bool, sweep: bool, x2: float, y2: float,
            max_spans: int = MAX_ARC_SPANS) -> "_Path":
        # SVG arc to at most four cubic pieces, as PathBuilder.arcTo (no axis rotation); sampled
        # with at most max_spans spans (a cloud's share of MAX_CLOUD_VERTICES)
        x1, y1 = self.last
        if x1 == x2 and y1 == y2:
            return self
        if rx == 0 or ry == 0:
            return self.line(x2, y2)
        cx, cy, rx1, ry1, t0, sw = arc_centre(x1, y1, rx, ry, large, sweep, x2, y2)
        nseg = min(4, math.ceil(abs(sw) / (_PI / 2)))
        res = math.ceil(min(_count_for_length(max(rx1, ry1) * abs(sw)), max_spans) / nseg)
        step = sw / nseg
        for i in range(nseg):
            a = t0 + i * step
            b = t0 + (i + 1) * step
            k = (4 / 3) * math.tan((b - a) / 4)
            sx, sy = cx + rx1 * math.cos(a), cy + ry1 * math.sin(a)  # ~ the previous end
            ex, ey = cx + rx1 * math.cos(b), cy + ry1 * math.sin(b)
            d1 = (-rx1 * math.sin(a), ry1 * math.cos(a))
            d2 = (-rx1 * math.sin(b), ry1 * math.cos(b))
            self.cubic((sx + k * d1[0], sy + k * d1[1]), (ex - k * d2[0], ey - k * d2[1]), ex, ey, res)
        return self

    def close(self) -> List[Pt]:
        if not (abs(self.last[0] - self.start[0]) <= 1e-6 and abs(self.last[1] - self.start[1]) <= 1e-6):
            self.pts.append(self.start)
        return self.pts


def _lines(pts: Sequence[Pt]) -> List[Pt]:
    p = _Path(*pts[0])
    for q in pts[1:]:
        p.line(*q)
    return p.close()


def _rng(seed: str) -> Callable[[], float]:
    """tldraw's seeded xorshift (:func:`~spatialobs.canvas.document.drawstyle.tldraw_rng`)."""
    from spatialobs.canvas.document.drawstyle import tldraw_rng  # loaded on first use (~12 ms of a cold import)

    return tldraw_rng(seed)


def _oval_perimeter(h: float, w: float) -> float:
    if h > w:
        return (_PI * (w / 2) + (h - w)) * 2
    return (_PI * (h / 2) + (w - h)) * 2


def _pill_points(width: float, height: float, n: int) -> List[Pt]:
    radius = min(width, height) / 2
    long_side = max(width, height) - radius * 2
    spacing = (_PI * (radius * 2) + 2 * long_side) / n
    if width > height:
        sections: List[Tuple[str, Pt, Any]] = [
            ("s", (radius, 0.0), (1.0, 0.0)), ("a", (width - radius, radius), -_PI / 2),
            ("s", (width - radius, height), (-1.0, 0.0)), ("a", (radius, radius), _PI / 2)]
    else:
        sections = [
            ("s", (width, radius), (0.0, 1.0)), ("a", (radius, height - radius), 0.0),
            ("s", (0.0, height - radius), (0.0, -1.0)), ("a", (radius, radius), _PI)]
    off = 0.0
    out: List[Pt] = []
    for _ in range(n):
        kind, p0, arg = sections[0]
        if kind == "s":
            out.append((p0[0] + arg[0] * off, p0[1] + arg[1] * off))
        else:
            out.append(_on_circle(p0, radius, arg + off / radius))
        off += spacing
        seg = long_side if kind == "s" else _PI * radius
        while off > seg:
            off -= seg
            sections.append(sections.pop(0))
            seg = long_side if sections[0][0] == "s" else _PI * radius
    return out


def _circle_center(a: Pt, b: Pt, c: Pt) -> Optional[Pt]:
    u = -2 * (a[0] * (b[1] - c[1]) - a[1] * (b[0] - c[0]) + b[0] * c[1] - c[0] * b[1])
    a2, b2, c2 = a[0] * a[0] + a[1] * a[1], b[0] * b[0] + b[1] * b[1], c[0] * c[0] + c[1] * c[1]
    try:
        x = (a2 * (c[1] - b[1]) + b2 * (a[1] - c[1]) + c2 * (b[1] - a[1])) / u
        y = (a2 * (b[0] - c[0]) + b2 * (c[0] - a[0]) + c2 * (a[0] - b[0])) / u
    except ZeroDivisionError:
        return None
    if not (math.isfinite(x) and math.isfinite(y)):
        return None
    return (x, y)


_BUMP = {"s": 50.0, "m": 70.0, "l": 100.0, "xl": 130.0}

#: Most bumps a cloud's outline has (*ours*). tldraw gives a cloud a bump per 50–130 units of
#: its perimeter and at least one per its shorter side, with no bound: a cloud of a size the
#: limits allow (1 × 10^15) would never finish. Beyond this the bumps are fewer and larger.
MAX_CLOUD_BUMPS = 10_000
#: Most vertices a cloud's outline is sampled with (*ours*, as an ellipse's two arcs have at
#: most 2 × :data:`MAX_ARC_SPANS`): each bump's arc gets an equal share. Clouds small enough to
#: draw (a share above what tldraw's one vertex per 20 units asks) are sampled as tldraw does.
MAX_CLOUD_VERTICES = 2 * MAX_ARC_SPANS


def _cloud(w: float, h: float, seed: str, size: str, scale: float) -> List[Pt]:
    rnd = _rng(seed)
    per = _oval_perimeter(w, h)
    nb = min(max(math.ceil(per / _BUMP.get(size, 70.0)), 6, math.ceil(per / min(w, h))), MAX_CLOUD_BUMPS)
    share = MAX_CLOUD_VERTICES // nb
    prot = (per / nb) * 0.2
    iw, ih = max(w - prot * 2, 1.0), max(h - prot * 2, 1.0)
    between = _oval_perimeter(iw, ih) / nb
    px, py = (w - iw) / 2, (h - ih) / 2
    bumps = [(x + px, y + py) for x, y in _pill_points(iw, ih, nb)]
    mwx = 0.0 if w < 20 else prot * 0.3
    mwy = 0.0 if h < 20 else prot * 0.3
    wig = list(bumps)
    for i in range(nb // 2):
        wig[i] = (wig[i][0] + rnd() * mwx * scale, wig[i][1] + rnd() * mwy * scale)
        j = nb - i - 1
        wig[j] = (wig[j][0] + rnd() * mwx * scale, wig[j][1] + rnd() * mwy * scale)
    path: Optional[_Path] = None
    for i in range(len(wig)):
        j = 0 if i == len(wig) - 1 else i + 1
        lw, rw, lp, rp = wig[i], wig[j], bumps[i], bumps[j]
        d_orig = _dist(lp, rp)
        rel = _dist(lw, rw) / d_orig
        final = (max(px, py) + between - d_orig) * rel
        ux, uy = _uni(rp[0] - lp[0], rp[1] - lp[1])
        ax = lp[0] + (rp[0] - lp[0]) * 0.5 + uy * final
        ay = lp[1] + (rp[1] - lp[1]) * 0.5 - ux * final
        ax = min(max(ax, 0.0), w)
        ay = min(max(ay, 0.0), h)
        c = _circle_center(lw, rw, (ax, ay))
        r = _dist(c if c is not None else ((lw[0] + rw[0]) / 2, (lw[1] + rw[1]) / 2), lw)
        if path is None:
            path = _Path(*lw)
        path.arc(r, r, False, True, rw[0], rw[1], share)
    assert path is not None
    return path.close()


def _geo_points(geo: str, w: float, h: float, props: Mapping[str, Any], node_id: str) -> List[Pt]:
    cx, cy = w / 2, h / 2
    if geo == "ellipse":
        return _Path(0, cy).arc(cx, cy, False, True, w, cy).arc(cx, cy, False, True, 0, cy).close()
    if geo == "triangle":
        return _lines([(cx, 0), (w, h), (0, h)])
    if geo == "diamond":
        return _lines([(cx, 0), (w, cy), (cx, h), (0, cy)])
    if geo == "star":
        return _lines(_star(w, h))
    if geo in ("pentagon", "hexagon", "octagon"):
        return _lines(_polygon_vertices(w, h, {"pentagon": 5, "hexagon": 6, "octagon": 8}[geo]))
    off = min(w * 0.38, h * 0.38)
    if geo == "rhombus":
        return _lines([(off, 0), (w, 0), (w - off, h), (0, h)])
    if geo == "rhombus-2":
        return _lines([(0, 0), (w - off, 0), (w, h), (off, h)])
    if geo == "trapezoid":
        return _lines([(off, 0), (w - off, 0), (w, h), (0, h)])
    if geo == "oval":
        if h > w:
            r = w / 2
            return _Path(0, r).arc(r, r, False, True, w, r).line(w, h - r).arc(r, r, False, True, 0, h - r).close()
        r = h / 2
        return _Path(r, h).arc(r, r, False, True, r, 0).line(w - r, 0).arc(r, r, False, True, w - r, h).close()
    if geo in ("arrow-left", "arrow-right"):
        ox, oy = min(w, h) * 0.38, h * 0.16
        if geo == "arrow-left":
            return _lines([(ox, 0), (ox, oy), (w, oy), (w, h - oy), (ox, h - oy), (ox, h), (0, h / 2)])
        return _lines([(0, oy), (w - ox, oy), (w - ox, 0), (w, h / 2), (w - ox, h), (w - ox, h - oy), (0, h - oy)])
    if geo in ("arrow-up", "arrow-down"):
        ox, oy = w * 0.16, min(w, h) * 0.38
        if geo == "arrow-up":
            return _lines([(w / 2, 0), (w, oy), (w - ox, oy), (w - ox, h), (ox, h), (ox, oy), (0, oy)])
        return _lines([(ox, 0), (w - ox, 0), (w - ox, h - oy), (w, h - oy), (w / 2, h), (0, h - oy), (ox, h - oy)])
    if geo == "cloud":
        return _cloud(w, h, node_id, str(props.get("size", "m")), _num(props.get("scale"), 1.0))
    if geo == "heart":
        o, k = w / 4, h / 4
        p = _Path(cx, h)
        p.cubic((o * 1.5, k * 3), (0, k * 2.5), 0, k * 1.2)
        p.cubic((0, -k * 0.32), (o * 1.85, -k * 0.32), cx, k * 0.9)
        p.cubic((o * 2.15, -k * 0.32), (w, -k * 0.32), w, k * 1.2)
        p.cubic((w, k * 2.5), (o * 2.5, k * 3), cx, h)
        return p.close()
    # rectangle, x-box, check-box and unknown kinds: the box (their inner strokes are internal)
    return _lines([(0, 0), (w, 0), (w, h), (0, h)])


def _line_points(props: Mapping[str, Any]) -> List[Pt]:
    pts = props.get("points")
    items: List[Tuple[str, Pt]] = []
    if is_mapping(pts):
        for k, v in pts.items():
            if is_mapping(v):
                items.append((str(v.get("index", k)), (_num(v.get("x"), 0.0), _num(v.get("y"), 0.0))))
        items.sort(key=lambda kv: kv[0])
    elif isinstance(pts, list):
        for i, v in enumerate(pts):
            if is_mapping(v):
                items.append(("", (_num(v.get("x"), 0.0), _num(v.get("y"), 0.0))))
            elif isinstance(v, (list, tuple)) and len(v) >= 2:
                items.append(("", (_num(v[0], 0.0), _num(v[1], 0.0))))
    return [p for _, p in items]


def _over_two_line_points(pts: Any) -> bool:
    """Whether :func:`_line_points` would keep more than two points of ``points`` (a list, or a
    mapping of tldraw line points), counted without reading them: in a list a mapping or a
    sequence of at least two values, in a mapping a mapping. Stops at the third."""
    k = 0
    if isinstance(pts, list):
        for v in pts:
            if is_mapping(v) or (isinstance(v, (list, tuple)) and len(v) >= 2):
                k += 1
                if k > 2:
                    return True
        return False
    if is_mapping(pts):
        for v in pts.values():
            if is_mapping(v):
                k += 1
                if k > 2:
                    return True
    return False


def _draw_points(props: Mapping[str, Any]) -> List[Pt]:
    """A freehand stroke's input points (tldraw smooths them a little more for its outline)."""
    from spatialobs.canvas.document.shapes import decode_b64_points

    sx, sy = _num(props.get("scaleX"), 1.0), _num(props.get("scaleY"), 1.0)
    out: List[Pt] = []
    segs = props.get("segments")
    for seg in segs if isinstance(segs, list) else []:
        if not is_mapping(seg):
            continue
        if isinstance(seg.get("path"), str):
            out.extend((float(x) * sx, float(y) * sy) for x, y, _ in decode_b64_points(seg["path"]).tolist())
        elif isinstance(seg.get("points"), list):
            out.extend((_num(q.get("x"), 0.0) * sx, _num(q.get("y"), 0.0) * sy)
                       for q in seg["points"] if is_mapping(q))
    return out


def _is_dot(props: Mapping[str, Any]) -> bool:
    """A one-segment draw stroke smaller than twice its width, which tldraw draws as a circle."""
    segs = props.get("segments")
    if not isinstance(segs, list) or len(segs) != 1:
        return False
    dp = _draw_points(props)
    sw = (STROKE_SIZES.get(str(props.get("size", "m")), 3.5) + 1) * _num(props.get("scale"), 1.0)
    return not dp or (_bbox(dp)[2] - _bbox(dp)[0] < sw * 2 and _bbox(dp)[3] - _bbox(dp)[1] < sw * 2)


def _spline(pts: List[Pt]) -> List[Pt]:
    p = _Path(*pts[0])
    n = len(pts)
    for i in range(n - 1):
        p0 = pts[0] if i == 0 else pts[i - 1]
        p1, p2 = pts[i], pts[i + 1]
        p3 = p2 if i == n - 2 else pts[i + 2]
        c1 = p0 if i == 0 else (p1[0] + (p2[0] - p0[0]) / 6 * 1.25, p1[1] + (p2[1] - p0[1]) / 6 * 1.25)
        c2 = p2 if i == n - 2 else (p2[0] - (p3[0] - p1[0]) / 6 * 1.25, p2[1] - (p3[1] - p1[1]) / 6 * 1.25)
        p.cubic(c1, c2, p2[0], p2[1])
    return p.pts


def _half_stroke(props: Mapping[str, Any]) -> float:
    """Half the stroke a target's outline is widened by: its ``size``'s stroke (none without one)."""
    return (STROKE_SIZES.get(str(props.get("size")), 0.0) / 2) if "size" in props else 0.0


def target_outline(node_type: str, props: Mapping[str, Any], w: float, h: float,
                   node_id: str = "", arrowhead: bool = True) -> Outline:
    """The outline a bound arrow meets on a target shape, in the target's local frame.

    Parameters
    ----------
    node_type : str
        The target's type (``geo``, ``note``, ``text``, ``frame``, ``line``, ...).
    props : mapping
        The target's tldraw props (``geo``, ``size``, ``flipX``, line ``points``...).
    w, h : float
        The target's size (for ``geo`` its ``h`` includes ``growY``).
    node_id : str
        The target's id (seeds a cloud's bumps, as in tldraw).
    arrowhead : bool
        Whether the arrow terminal has a head; text widens its outline for
        terminals without one.

    Raises
    ------
    InvalidInputError
        When ``w`` or ``h`` is not a finite number of magnitude at most the canvas
        limits' ``max_coordinate`` (2^50 by default), the sizes a canvas can hold.

    Examples
    --------
    >>> o = target_outline("geo", {"geo": "diamond"}, 100, 50)
    >>> o.points[:4], o.closed, o.bounds
    ([(50.0, 0), (100, 25.0), (50.0, 50), (0, 25.0)], True, (0, 0, 100, 50))
    >>> len(target_outline("geo", {"geo": "ellipse"}, 200, 100).points) > 16
    True
    """
    big = current_limits().max_coordinate
    for name, v in (("w", w), ("h", h)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not abs(v) <= big:
            raise InvalidInputError(f"target_outline: {name} must be a finite number of magnitude at most {big:g} "
                                    f"(CanvasLimits.max_coordinate), got {echo(v)}")
    return _target_outline(node_type, props, w, h, node_id, arrowhead)


def _target_outline(node_type: str, props: Mapping[str, Any], w: float, h: float,
                    node_id: str = "", arrowhead: bool = True) -> Outline:
    """:func:`target_outline` of sizes a canvas holds (its callers' are sanitized): unchecked."""
    half = _half_stroke(props)
    if node_type == "geo":
        gw, gh = max(1.0, w), max(1.0, h)
        pts = _geo_points(str(props.get("geo", "rectangle")), gw, gh, props, node_id)
        fx, fy = bool(props.get("flipX")), bool(props.get("flipY"))
        if fx or fy:
            pts = [(gw - x if fx else x, gh - y if fy else y) for x, y in pts]
        return Outline(pts, True, _bbox(pts), half)
    if node_type == "text" and not arrowhead:
        pad = _TEXT_ARROW_PADDING * _num(props.get("scale"), 1.0)
        pts = [(-pad, 0.0), (w + pad, 0.0), (w + pad, h), (-pad, h)]
        return Outline(pts, True, (0.0, 0.0, w, h), half)  # anchors still refer to the text's own box
    if node_type in ("draw", "highlight"):
        # tldraw's stroke geometry: a draw shape's smoothed points (a circle for a dot), a
        # highlight's filled outline
        from spatialobs.canvas.document.freehand import freehand_vertices

        v = freehand_vertices(node_type, props)
        if v is not None and len(v) >= 2:
            fp = [(float(x), float(y)) for x, y in v.tolist()]
            closed = node_type == "highlight" or (bool(props.get("isClosed")) and len(fp) > 2) or _is_dot(props)
            return Outline(fp, closed, _bbox(fp), half)
    if node_type == "line":
        lp = _line_points(props)
        if len(lp) >= 2:
            pts = _spline(lp) if props.get("spline") == "cubic" else lp
            return Outline(pts, False, _bbox(pts), half)
    pts = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)]
    return Outline(pts, True, (0.0, 0.0, w, h), half)


# --------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class ArrowGeometry:
    """An arrow as tldraw draws it, in the arrow's local frame.

    Attributes
    ----------
    kind : str
        ``straight`` or ``arc`` (the body tldraw draws).
    start, end : (x, y)
        The body's end points (tldraw's ``arrow.start.point`` / ``end.point``).
    start_handle, end_handle : (x, y)
        Where the handles sit (a bound handle is its anchor on the target).
    bounds : (x0, y0, x1, y1)
        The geometry's local bounds: the body's vertices and the label rectangle.
    valid : bool
        tldraw's ``isValid`` (a zero-length body is not).
    """

    kind: str
    start: Pt
    end: Pt
    start_handle: Pt
    end_handle: Pt
    bounds: Box
    valid: bool = True
    center: Optional[Pt] = None
    sweep: int = 0
    large: int = 0
    #: The geometry's vertices (the body's, then a label rectangle's corners): a turned
    #: arrow's page bounds are the box of these turned, not the turned box.
    vertices: Tuple[Pt, ...] = ()


def _handle(t: Terminal, arrow_xf: Xf, force: bool) -> Pt:
    x0, y0, x1, y1 = t.outline.bounds
    if t.precise or force:
        ax = min(max(t.anchor[0], _ANCHOR_EPS), 1 - _ANCHOR_EPS)
        ay = min(max(t.anchor[1], _ANCHOR_EPS), 1 - _ANCHOR_EPS)
    else:
        ax = ay = 0.5
    local = (x0 + ax * (x1 - x0), y0 + ay * (y1 - y0))
    return _from_page(arrow_xf, _to_page(t.xf, local))


def _contains(a: Box, b: Box) -> bool:
    return a[0] <= b[0] and a[1] <= b[1] and a[2] >= b[2] and a[3] >= b[3]


def _relationship(s: Optional[Terminal], e: Optional[Terminal]) -> str:
    if s is None or e is None:
        return "safe"
    if s.target == e.target:
        return "double-bound"
    if s.page_box is not None and e.page_box is not None:
        if _contains(s.page_box, e.page_box):
            return "start-contains-end"
        if _contains(e.page_box, s.page_box):
            return "end-contains-start"
    return "safe"


def _hit_straight(point: Pt, opposite: Pt, arrow_xf: Xf, t: Optional[Terminal]) -> Pt:
    """Where the segment from ``opposite`` to ``point`` first meets the target's outline."""
    if t is None or t.exact:
        return point
    a = _from_page(t.xf, _to_page(arrow_xf, opposite))
    b = _from_page(t.xf, _to_page(arrow_xf, point))
    o = t.outline
    hits = intersect_segment_polyline(a, b, o.points, o.closed)
    if hits:
        q = min(hits, key=lambda p: _dist2(p, a))
    else:
        q = nearest_on_polyline(b, o.points, o.closed)
        if not _dist2(q, b) < 1:
            return point
    t.hit = True
    return _from_page(arrow_xf, _to_page(t.xf, q))


def _stroke_offset(arrow_sw: float, t: Terminal) -> float:
    return arrow_sw / 2 + t.outline.stroke


def _straight(a0: Pt, b0: Pt, s: Optional[Terminal], e: Optional[Terminal], arrow_xf: Xf,
              heads: Tuple[bool, bool], sw: float, scale: float, rel: str) -> Tuple[Pt, Pt, bool]:
    if _equals(a0, b0):
        return a0, b0, False
    uab = _uni(b0[0] - a0[0], b0[1] - a0[1])
    b = _hit_straight(b0, a0, arrow_xf, e)
    a = _hit_straight(a0, b0, arrow_xf, s)
    offset_a = offset_b = 0.0
    min_len = _MIN_ARROW_LENGTH * scale
    self_hit = s is not None and e is not None and s.target == e.target
    if rel == "safe" and s is not None and e is not None and not self_hit and not s.exact and not e.exact:
        if e.hit and not s.hit:
            if s.outline.closed:
                a = (b[0] + uab[0] * min_len, b[1] + uab[1] * min_len)
        elif not e.hit:
            if e.outline.closed:
                b = (a[0] - uab[0] * min_len, a[1] - uab[1] * min_len)
    dx, dy = b[0] - a[0], b[1] - a[1]
    u = _uni(dx, dy)
    flip = not _equals(u, uab)
    if not self_hit:
        if rel != "start-contains-end" and s is not None and heads[0] and not s.exact:
            so = _stroke_offset(sw, s)
            offset_a = (_BOUND_ARROW_OFFSET + so) * scale
            min_len += so * scale
        if rel != "end-contains-start" and e is not None and heads[1] and not e.exact:
            so = _stroke_offset(sw, e)
            offset_b = (_BOUND_ARROW_OFFSET + so) * scale
            min_len += so * scale
    f = -1.0 if flip else 1.0
    ta = (a[0] + u[0] * offset_a * f, a[1] + u[1] * offset_a * f)
    tb = (b[0] - u[0] * offset_b * f, b[1] - u[1] * offset_b * f)
    if _dist2(ta, tb) < min_len * min_len:
        if offset_a != 0 and offset_b != 0:
            offset_a *= -1.5
            offset_b *= -1.5
        elif offset_a != 0:
            offset_a *= -1
        elif offset_b != 0:
            offset_b *= -1
    a = (a[0] + u[0] * offset_a * f, a[1] + u[1] * offset_a * f)
    b = (b[0] - u[0] * offset_b * f, b[1] - u[1] * offset_b * f)
    if flip and s is not None and e is not None:
        b = (a[0] - u[0] * _MIN_ARROW_LENGTH * scale, a[1] - u[1] * _MIN_ARROW_LENGTH * scale)
    return a, b, _dist(a, b) > 0


def _arc_info(a: Pt, b: Pt, c: Pt) -> Tuple[Pt, float, float, float, int, int]:
    """Centre, radius, size, length, large-arc and sweep flags of the arc a → c → b."""
    center = _circle_center(a, b, c) or ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    radius = _dist(center, a)
    sweep = 1 if ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])) < 0 else 0
    ab = _dist(a, b)
    bc = _dist(b, c)
    ca = _dist(c, a)
    try:
        cosv = (bc * bc + ca * ca - ab * ab) / (2 * bc * ca)
        theta = math.acos(cosv) * 2 if -1 <= cosv <= 1 else math.nan
    except ZeroDivisionError:
        theta = math.nan
    large = 1 if _PI > theta else 0
    size = (_PI2 - theta) * (1 if sweep else -1)
    return center, radius, size, size * radius, large, sweep


def _arc_hit(t: Terminal, arrow_xf: Xf, ta: Pt, tb: Pt, center: Pt, radius: float,
             dist_fn: Callable[[float, float], float], frac: float, from_start: bool) -> Optional[Pt]:
    inv = t.xf
    sl = _from_page(inv, _to_page(arrow_xf, ta))
    cl = _from_page(inv, _to_page(arrow_xf, center))
    el = _from_page(inv, _to_page(arrow_xf, tb))
    o = t.outline
    hits = intersect_circle_polyline(cl, radius, o.points, o.closed)
    point: Optional[Pt] = None
    if hits:
        a_s = _angle(cl, sl)
        d_ab = dist_fn(a_s, _angle(cl, el))
        hits = [p for p in hits if dist_fn(a_s, _angle(cl, p)) <= d_ab]
        if hits:
            target = d_ab * frac
            if o.closed:
                key = lambda p: abs(dist_fn(a_s, _angle(cl, p)) - target)  # noqa: E731
            else:
                key = lambda p: dist_fn(a_s, _angle(cl, p))  # noqa: E731
            point = min(hits, key=key)
    if point is None:
        probe = sl if from_start else el
        if o.closed:
            q = nearest_on_polyline(probe, o.points, o.closed)
            if _dist2(q, probe) < 1:
                point = q
        else:
            point = probe
    if point is None:
        return None
    t.hit = True
    return _from_page(arrow_xf, _to_page(t.xf, point))


def _arc(a0: Pt, b0: Pt, bend: float, s: Optional[Terminal], e: Optional[Terminal], arrow_xf: Xf,
         heads: Tuple[bool, bool], sw: float, scale: float,
         rel_fn: Callable[[], str]) -> Optional[ArrowGeometry]:
    med = ((a0[0] + b0[0]) / 2, (a0[1] + b0[1]) / 2)
    u = _uni(b0[0] - a0[0], b0[1] - a0[1])
    middle = (med[0] + u[1] * -bend, med[1] - u[0] * -bend)
    if _equals(a0, b0):
        return None
    cw = bend < 0
    dist_fn = _cw_dist if cw else _ccw_dist
    center, radius, hsize, hlen, _, _ = _arc_info(a0, b0, middle)
    h_aca = _angle(center, a0)
    h_acb = _angle(center, b0)
    h_dab = dist_fn(h_aca, h_acb)
    if hlen == 0 or hsize == 0 or not (abs(hlen) < 2 ** 53 - 1) or not (abs(hsize) < 2 ** 53 - 1):
        return None
    ta, tb, tc = a0, b0, middle
    offset_a = offset_b = 0.0
    min_len = _MIN_ARROW_LENGTH * scale
    if s is not None and not s.exact:
        p = _arc_hit(s, arrow_xf, ta, tb, center, radius, dist_fn, 0.25, True)
        if p is not None:
            ta = p
            if heads[0]:
                so = _stroke_offset(sw, s)
                offset_a = (_BOUND_ARROW_OFFSET + so) * scale
                min_len += so * scale
    if e is not None and not e.exact:
        p = _arc_hit(e, arrow_xf, ta, tb, center, radius, dist_fn, 0.75, False)
        if p is not None:
            tb = p
            if heads[1]:
                so = _stroke_offset(sw, e)
                offset_b = (_BOUND_ARROW_OFFSET + so) * scale
                min_len += so * scale
    aca = _angle(center, ta)
    acb = _angle(center, tb)
    dab = dist_fn(aca, acb)
    lab = dab * radius
    sgn = 1.0 if cw else -1.0

    def moved(base: float, off: float, sign: float) -> Pt:
        return _on_circle(center, radius, base + dab * (_js_div(off, lab) * sign))

    pa = moved(aca, offset_a, sgn) if offset_a != 0 else ta
    pb = moved(acb, offset_b, -sgn) if offset_b != 0 else tb
    if _dist2(pa, pb) < min_len * min_len:
        if offset_a != 0 and offset_b != 0:
            offset_a *= -1.5
            offset_b *= -1.5
        elif offset_a != 0:
            offset_a *= -2
        elif offset_b != 0:
            offset_b *= -2
        offset_a = max(offset_a, 0.1 - dist_fn(h_aca, aca) * radius)
        offset_b = max(offset_b, 0.1 - dist_fn(acb, h_acb) * radius)
    if offset_a != 0:
        ta = moved(aca, offset_a, sgn)
    if offset_b != 0:
        tb = moved(acb, offset_b, -sgn)
    if s is not None and e is not None and not s.exact and not e.exact:
        aca = _angle(center, ta)
        acb = _angle(center, tb)
        dab = dist_fn(aca, acb)
        lab = dab * radius
        rel = rel_fn()
        if rel == "double-bound" and lab < 30:
            ta, tb, tc = a0, b0, middle
        elif rel == "safe":
            if not s.hit:
                ta = a0
            if not e.hit or dist_fn(h_aca, aca) > dist_fn(h_aca, acb):
                tb = _on_circle(center, radius, aca + dab * (min(0.9, _js_div(_MIN_ARROW_LENGTH * scale, lab)) * sgn))
    # the middle handle half-way along the body; a body longer than the handle arc flips
    aca = _angle(center, ta)
    acb = _angle(center, tb)
    d = _cw_dist(aca, acb)
    if not cw:
        d = _PI2 - d
    tc = _on_circle(center, radius, aca + d * (0.5 * sgn))
    if d > h_dab:
        tc = (2 * center[0] - tc[0], 2 * center[1] - tc[1])
        ta, tb = tb, ta
    if _equals(ta, tb):
        ta, tb = (tc[0] + 1, tc[1] + 1), (tc[0] - 1, tc[1] - 1)
    bc, _, _, blen, blarge, bsweep = _arc_info(ta, tb, tc)
    valid = blen != 0 and math.isfinite(bc[0]) and math.isfinite(bc[1])
    return ArrowGeometry("arc", ta, tb, a0, b0, (0.0, 0.0, 0.0, 0.0), valid, center, bsweep, blarge)


def _label_size(text: str, size: str, scale: float, body: Box, font: str = "draw",
                margin: float = 64.0) -> Optional[Pt]:
    # tldraw's arrow label size: the label measured in the arrow's font, then, when the body
    # is wider than tall (or the label wider than 16 em), measured again at a squished width.
    # None: the label cannot be measured (a ``scale`` near the float range gives a font size or a
    # width beyond it); the arrow is then bounded by its body alone, by the label placer and its twin
    from spatialobs.canvas.document.textmeasure import measure_html

    fs = _THEME_FONT_SIZE * _ARROW_LABEL_FONT.get(size, 1.25) * scale
    if not math.isfinite(fs):
        return None
    try:
        w, h, _ = measure_html(text, font, fs)
        bw, bh = body[2] - body[0], body[3] - body[1]
        width = w
        squish = False
        if bw > bh:
            width = max(min(w, margin), min(bw - margin, w))
            squish = True
        elif w > 16 * fs:
            width = 16 * fs
            squish = True
        if squish:
            width, h, _ = measure_html(text, font, fs, max(width, 0.0))
    except OverflowError:  # a width too large to round to the layout unit
        return None
    pad = _ARROW_LABEL_PADDING * 2 * scale
    lw, lh = width + pad, h + pad
    return (lw, lh) if math.isfinite(lw) and math.isfinite(lh) else None


def _interp(pts: Sequence[Pt], t: float, runs: Optional["_Runs"] = None) -> Pt:
    """The point a fraction ``t`` of the way along a polyline. ``runs``: its :class:`_Runs`,
    when several points of one polyline are asked for (the same result, without
    measuring the polyline again)."""
    if t <= 0:
        return pts[0]
    r = runs if runs is not None else _Runs(pts)
    lens, ends = r.lens, r.ends
    goal = t * r.total
    if goal != goal:  # NaN: no length reaches it
        return pts[-1]
    # the first segment whose running end reaches the goal (ends never decrease: lengths are >= 0)
    i = bisect.bisect_left(ends, goal) if r.ordered else next((k for k, e in enumerate(ends) if e >= goal), len(ends))
    if i == len(ends):
        return pts[-1]
    d = lens[i]
    if d == 0:
        return pts[i]
    k = (goal - (ends[i - 1] if i else 0.0)) / d
    return (pts[i][0] + (pts[i + 1][0] - pts[i][0]) * k, pts[i][1] + (pts[i + 1][1] - pts[i][1]) * k)


class _Runs:
    """A polyline's segment lengths, their sum (as ``sum`` adds them) and running ends (as a
    loop adds them, one after another): measured once for every point asked of it."""

    __slots__ = ("lens", "total", "ends", "ordered")

    def __init__(self, pts: Sequence[Pt]) -> None:
        self.lens = [_dist(pts[i], pts[i + 1]) for i in range(len(pts) - 1)]
        self.total = sum(self.lens)
        self.ends = list(itertools.accumulate(self.lens))
        # bisection needs ends that never decrease: no NaN among the lengths
        self.ordered = all(d == d for d in self.lens)


def _uninterp(pts: Sequence[Pt], p: Pt) -> float:
    """How far along a polyline (0..1) its nearest point to ``p`` lies."""
    best = math.inf
    at = 0.0
    run = 0.0
    px, py = p
    hypot, sqrt = math.hypot, math.sqrt
    for (sx, sy), (ex, ey) in zip(pts, pts[1:]):
        dx, dy = ex - sx, ey - sy
        l2 = dx * dx + dy * dy
        t = 0.0 if l2 == 0 else min(1.0, max(0.0, ((px - sx) * dx + (py - sy) * dy) / l2))
        nx, ny = sx + dx * t, sy + dy * t
        d = hypot(px - nx, py - ny)
        seg = sqrt(l2)
        if d < best:
            best = d
            at = run + seg * t
        run += seg
    return at / run if run else 0.0


def _label_box(body: List[Pt], start: Pt, end: Pt, text: str, props: Mapping[str, Any], scale: float,
               bound: Tuple[bool, bool], heads: Tuple[bool, bool],
               elbow: Optional[Tuple[float, float]] = None) -> Optional[Box]:
    # ``elbow``: an elbow route's arrowhead gaps; its label keeps them clear when squished,
    # and its usable range starts at the ends' label boxes grown by the padding. None: the label
    # cannot be measured (see _label_size)
    size = str(props.get("size", "m"))
    font = props.get("font", "draw")
    sw = 2.0 * {"s": 1.0, "m": 1.75, "l": 2.5, "xl": 5.0}.get(size, 1.75)
    pad = (_LABEL_TO_ARROW_PADDING + (sw - 2.0) * 2 + (20 if sw >= 10.0 else 0)) * scale
    margin = 64.0 if elbow is None else max(elbow[0] + pad, 32.0) + max(elbow[1] + pad, 32.0)
    measured = _label_size(text, size, scale, _bbox(body), font if isinstance(font, str) else "draw", margin)
    if measured is None:
        return None
    lw, lh = measured
    runs = _Runs(body)  # one measure of the body for its length and the three points asked of it
    length = runs.total
    rel = pad / length if length else 0.0

    def constrained(center: Pt, end_pt: Pt, grow: float = 0.0) -> Optional[Pt]:
        x0, y0 = center[0] - lw / 2 - grow, center[1] - lh / 2 - grow
        x1, y1 = center[0] + lw / 2 + grow, center[1] + lh / 2 + grow
        box = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        hits: List[Pt] = []
        for a, b in zip(body, body[1:]):
            (px, py), (qx, qy) = a, b
            if max(px, qx) < x0 or min(px, qx) > x1 or max(py, qy) < y0 or min(py, qy) > y1:
                continue  # cannot cross the box's edges
            for i in range(4):
                p = intersect_segment_segment(box[i], box[(i + 1) % 4], a, b)
                if p is not None and p not in hits:
                    hits.append(p)
        far = None
        fd = -math.inf
        for p in hits:
            d = _dist2(end_pt, p)
            if d > fd:
                far, fd = p, d
        return far

    if elbow is None:
        sc = constrained(_interp(body, rel, runs), start)
        ec = constrained(_interp(body, 1 - rel, runs), end)
    else:
        sc = constrained(start, start, pad)
        ec = constrained(end, end, pad)
    r0 = _uninterp(body, sc) if sc is not None else 0.5
    r1 = _uninterp(body, ec) if ec is not None else 0.5
    if r0 > r1:
        r0 = r1 = 0.5
    pos = _num(props.get("labelPosition"), 0.5)
    lo = r0 if (heads[0] or bound[0]) else 0.0
    hi = r1 if (heads[1] or bound[1]) else 1.0
    pos = max(lo, min(hi, pos))
    c = _interp(body, pos, runs)
    return (c[0] - lw / 2, c[1] - lh / 2, c[0] + lw / 2, c[1] + lh / 2)


def resolve_arrow(props: Mapping[str, Any], arrow_xf: Xf, start: Optional[Terminal], end: Optional[Terminal],
                  label: Optional[str] = None) -> ArrowGeometry:
    """Resolve a tldraw arrow against its bound targets, as tldraw's ``getArrowInfo`` does.

    Parameters
    ----------
    props : mapping
        The arrow's tldraw props (``start``/``end`` points for unbound terminals,
        ``bend``, ``kind``, ``arrowheadStart``/``arrowheadEnd``, ``size``, ``scale``,
        ``labelPosition``).
    arrow_xf : (x, y, cos, sin)
        The arrow's page transform.
    start, end : Terminal or None
        The bound terminals (None for a free terminal).
    label : str, optional
        The label's plain text; a non-empty label adds its rectangle to the bounds.

    Returns
    -------
    ArrowGeometry

    Examples
    --------
    >>> box = Terminal(target_outline("geo", {"geo": "rectangle", "size": "m"}, 100, 100),
    ...                (200.0, 0.0, 1.0, 0.0), (0.5, 0.5), False, False, "shape:box")
    >>> g = resolve_arrow({"start": {"x": 0, "y": 50}, "end": {"x": 0, "y": 0}}, (0.0, 0.0, 1.0, 0.0), None, box)
    >>> g.end, g.end_handle
    ((186.5, 50.0), (250.0, 50.0))
    """
    geo, body, gaps = _course(props, arrow_xf, start, end)
    if geo.kind == "arc":
        assert geo.center is not None
        body = arc_vertices(geo.center, geo.start, geo.end, geo.sweep, geo.large) if not _equals(geo.start, geo.end) else [geo.start, geo.end]
    box = _bbox(body)
    verts = tuple(body)
    if label and label.strip() and geo.valid:
        scale = _num(props.get("scale"), 1.0) or 1.0
        heads = (props.get("arrowheadStart", "none") != "none", props.get("arrowheadEnd", "arrow") != "none")
        lb = _label_box(body, geo.start, geo.end, label, props, scale, (start is not None, end is not None), heads,
                        gaps)
        if lb is not None:
            box = (min(box[0], lb[0]), min(box[1], lb[1]), max(box[2], lb[2]), max(box[3], lb[3]))
            verts += ((lb[0], lb[1]), (lb[2], lb[1]), (lb[2], lb[3]), (lb[0], lb[3]))
    return ArrowGeometry(geo.kind, geo.start, geo.end, geo.start_handle, geo.end_handle, box, geo.valid,
                         geo.center, geo.sweep, geo.large, verts)


def _course(props: Mapping[str, Any], arrow_xf: Xf, start: Optional[Terminal],
            end: Optional[Terminal]) -> Tuple[ArrowGeometry, List[Pt], Optional[Tuple[float, float]]]:
    """The first half of :func:`resolve_arrow`: where the body runs, before an arc is sampled.

    Returns the geometry with its ends, handles, kind and arc (its ``bounds`` and
    ``vertices`` not computed yet), the body's points (an elbow route's or a straight
    body's two; empty for an arc) and an elbow route's arrowhead gaps. The ends never
    depend on the label or the sampling, so :func:`arrow_ends` stops here.
    """
    scale = _num(props.get("scale"), 1.0) or 1.0
    bend = _num(props.get("bend"), 0.0)
    size = str(props.get("size", "m"))
    sw = STROKE_SIZES.get(size, 3.5)
    heads = (props.get("arrowheadStart", "none") != "none", props.get("arrowheadEnd", "arrow") != "none")
    rel = _relationship(start, end)
    a0 = _handle(start, arrow_xf, rel in ("double-bound", "start-contains-end")) if start else _point(props.get("start"))
    b0 = _handle(end, arrow_xf, rel in ("double-bound", "end-contains-start")) if end else _point(props.get("end"))
    geo: Optional[ArrowGeometry] = None
    body: List[Pt] = []
    gaps: Optional[Tuple[float, float]] = None
    if props.get("kind") == "elbow":
        from spatialobs.canvas.document.elbow import elbow_route  # loaded on first use (~15 ms of a cold import)

        try:
            route = elbow_route(props, arrow_xf, start, end, sw)
        except OverflowError:
            # a ``scale`` near the float range: legs beyond it (tldraw's are infinities, kernel and
            # twin raise as Python's arithmetic does); a body that is not finite, which the
            # derivation bounds by the arrow's origin, as any geometry that is not finite
            nowhere = (math.nan, math.nan)
            return ArrowGeometry("elbow", nowhere, nowhere, nowhere, nowhere, (0.0, 0.0, 0.0, 0.0), True), \
                [nowhere, nowhere], (0.0, 0.0)
        if route is not None:  # else tldraw draws it straight
            body = route.points
            gaps = (route.start_offset, route.end_offset)
            geo = ArrowGeometry("elbow", body[0], body[-1], route.start_handle, route.end_handle,
                                (0.0, 0.0, 0.0, 0.0), True)
    arc_kind = props.get("kind", "arc") == "arc"
    if arc_kind and not abs(bend) < _MIN_ARROW_BEND * scale and not abs(bend) > abs(bend * 10 * scale):
        geo = _arc(a0, b0, bend, start, end, arrow_xf, heads, sw, scale, lambda: rel)
        if start is not None:
            start.hit = False
        if end is not None:
            end.hit = False
    if geo is None:
        a, b, valid = _straight(a0, b0, start, end, arrow_xf, heads, sw, scale, rel)
        body = [a, b]
        geo = ArrowGeometry("straight", a, b, a0, b0, (0.0, 0.0, 0.0, 0.0), valid)
    return geo, body, gaps


# --------------------------------------------------------------------------- canvas glue
_OUTLINES: Dict[Tuple[str, bool], Tuple[Any, Outline]] = {}
_OUTLINES_MAX = 4096


def _outline_of(node: Any, arrowhead: bool) -> Outline:
    """A node's outline, cached while the node object is unchanged."""
    key = (node.id, arrowhead or node.type != "text")
    hit = _OUTLINES.get(key)
    if hit is not None and hit[0] is node:
        return hit[1]
    o = _target_outline(node.type, node.props, float(node.w), float(node.h), node.id, arrowhead)
    if len(_OUTLINES) >= _OUTLINES_MAX:
        _OUTLINES.clear()
    _OUTLINES[key] = (node, o)
    return o


def _xf(d: Any, r: int) -> Xf:
    rot = float(d.rotation[r])
    if rot == 0.0:
        return (float(d.px[r]), float(d.py[r]), 1.0, 0.0)
    return (float(d.px[r]), float(d.py[r]), math.cos(rot), math.sin(rot))


#: Fewest arrows a pass resolves for which it reads the page transforms into lists first
#: (:class:`_Frames`; below it, :func:`_xf` reads the few rows it needs from the columns).
_FRAMES_FROM = 256


class _Frames:
    """A derivation's page transforms as lists of Python floats: :meth:`xf` is :func:`_xf`
    (the same floats) without reading numpy scalars row by row."""

    __slots__ = ("px", "py", "rot")

    def __init__(self, d: Any) -> None:
        self.px: List[float] = d.px.tolist()
        self.py: List[float] = d.py.tolist()
        self.rot: List[float] = d.rotation.tolist()

    def xf(self, r: int) -> Xf:
        rot = self.rot[r]
        if rot == 0.0:
            return (self.px[r], self.py[r], 1.0, 0.0)
        return (self.px[r], self.py[r], math.cos(rot), math.sin(rot))


def _page_box(o: Outline, xf: Xf) -> Box:
    if xf[3] == 0.0 and xf[2] == 1.0:
        x0, y0, x1, y1 = o.bounds
        return (x0 + xf[0], y0 + xf[1], x1 + xf[0], y1 + xf[1])
    return _bbox([_to_page(xf, p) for p in o.points])


def _terminals(d: Any, nodes: Sequence[Any], r: int, terms: Mapping[str, Any]) -> Tuple[Optional[Terminal], Optional[Terminal]]:
    props = nodes[r].props
    row = d.row
    ends: Dict[str, Optional[Terminal]] = {"start": None, "end": None}
    heads = {"start": props.get("arrowheadStart", "none") != "none",
             "end": props.get("arrowheadEnd", "arrow") != "none"}
    for term, b in terms.items():
        if term not in ends:
            continue
        tn = nodes[row[b.to_id]]
        ends[term] = Terminal(_outline_of(tn, heads[term]), _xf(d, row[b.to_id]),
                              (float(b.anchor[0]), float(b.anchor[1])), bool(b.precise),
                              bool(b.props.get("isExact", False)), tn.id,
                              snap=str(b.props.get("snap") or "none"), scale=_num(tn.props.get("scale"), 1.0))
    s, e = ends["start"], ends["end"]
    if s is not None and e is not None and s.target != e.target:
        s.page_box = _page_box(_outline_of(nodes[row[s.target]], True), s.xf)
        e.page_box = _page_box(_outline_of(nodes[row[e.target]], True), e.xf)
    return s, e


def _keeps_points(nd: Any) -> bool:
    """An arrow stored as a list of points (Excalidraw's form): its file holds the route
    its editor drew, bound or not, and its label sits beside the line, not in its box. The
    reference of its compiled copy in ``_cextract`` (props in a dict), which hands it the rest."""
    return isinstance(nd.props.get("points"), list) and not isinstance(nd.props.get("start"), Mapping)


def _needs_resolving(nd: Any) -> bool:
    """An unbound arrow whose geometry is more than its stored points: an arc or a label. The
    reference of its compiled copy in ``_cextract`` (props in a dict of plain numbers), which hands
    it the rest."""
    if _keeps_points(nd):
        return False
    if nd.text and str(nd.text).strip():
        return True
    return abs(_num(nd.props.get("bend"), 0.0)) >= _MIN_ARROW_BEND * (_num(nd.props.get("scale"), 1.0) or 1.0)


def resolve_bound(d: Any, nodes: Sequence[Any], bindings: Mapping[str, Any],
                  cache: Optional[Dict[str, Any]] = None, prev: Any = None,
                  dirty: Optional[Any] = None, remaining: Optional[Any] = None,
                  rebound: Optional[AbstractSet[str]] = None) -> List[int]:
    """Set the local boxes of tldraw arrows in a derivation; return the rows set.

    ``d`` is a :class:`~spatialobs.canvas.document.derive.Derived` whose local boxes
    and page transforms are filled in; ``nodes`` its rows' nodes; ``bindings`` the
    canvas's :class:`~spatialobs.canvas.document.records.Binding` records. Bound
    arrows, and unbound ones that are arcs or carry a label, are resolved; the
    others keep the box of their stored points. ``cache`` (one per canvas, kept
    across derivations) holds each arrow's result while the arrow, its bindings,
    their targets and their transforms are unchanged; it is left holding exactly the
    arrows resolved here. With ``prev``, the previous derivation of the same rows
    (same tree), and ``dirty``, a boolean row mask covering every row whose record or
    page transform may differ from ``prev`` (changed rows and their descendants), and
    the bindings unchanged (the same records), only the arrows that are dirty or
    bound to a dirty row are looked at; the others keep ``prev``'s boxes (what the
    full pass would take from the cache). With ``remaining`` as well (a boolean mask over
    ``prev``'s rows: those that remain after whole subtrees were removed, ``dirty`` then
    in the remaining rows' numbering), bindings may also have been removed: the arrows
    that lost one are resolved again with the dirty ones. ``rebound``: the connectors whose
    bindings were written since ``prev`` (as for :func:`~spatialobs.canvas.document.derive.derive`);
    when the bindings are ``prev``'s records but one of these connectors' terminals among the
    rows differ from ``prev``'s plan (``prev`` was a step of a version derived in steps, whose
    bindings named rows that the step did not hold yet), every arrow is resolved.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> from spatialobs.canvas.document.records import Binding, Node
    >>> c = Canvas()
    >>> box = c.add(Node("shape:box", "geo", "page:page", "a1", 200, 0, 100, 100, props={"geo": "rectangle"}))
    >>> arr = c.add(Node("shape:arr", "arrow", "page:page", "a2", 0, 0,
    ...                  props={"start": {"x": 0, "y": 50}, "end": {"x": 9, "y": 9}}))
    >>> b = c.add(Binding("b", "arrow", "shape:arr", "shape:box", "end"))
    >>> [round(float(v), 2) for v in c.page_bounds("shape:arr")]
    [0.0, 50.0, 188.25, 50.0]
    """
    blist = list(bindings.values())
    plan = getattr(prev, "arrow_plan", None) if dirty is not None else None
    if plan is not None and remaining is not None:
        done = _resolve_remaining(d, nodes, blist, cache, prev, dirty, plan, remaining)
        if done is not None:
            return done
    elif plan is not None and len(blist) >= len(plan.bindings) and all(map(operator.is_, blist, plan.bindings)):
        # the previous bindings are still there, in order: at most new ones were added after them
        if len(blist) == len(plan.bindings):
            done = _resolve_dirty(d, nodes, cache, prev, dirty, plan) if _plan_terms_hold(
                d, nodes, blist, rebound, plan) else None
        else:
            done = _resolve_added(d, nodes, blist, cache, prev, dirty, plan)
        if done is not None:
            return done
    row = d.row
    bound_terms, by_arrow = _terminals_by_arrow(blist, row, nodes)
    _unbound_to_resolve((d.types == "arrow").nonzero()[0].tolist(), by_arrow, nodes)
    changed: List[int] = []
    previous: Dict[str, Any] = cache if cache is not None else {}
    kept: Dict[str, Tuple[List[Any], Box]] = {}
    plan = _ArrowPlan.build(blist, by_arrow, bound_terms, row, d.local)
    twins = cache.twins if isinstance(cache, ArrowCache) else {}
    batch = _StraightBatch.start(d, nodes)
    # the page transforms as Python floats, read once for the many arrows of a full pass
    frames = _Frames(d) if len(by_arrow) >= _FRAMES_FROM else None
    # with no twins remembered, an arrow can only be a twin of another bound alike in this pass
    shared = _shared_targets(by_arrow.values()) if not twins and len(by_arrow) >= _FRAMES_FROM else None
    changed = _resolve_all(d, nodes, by_arrow, previous, kept, twins, batch, frames, shared)
    if batch is not None:
        batch.run(d, nodes, kept, twins)
    if cache is not None:
        cache.clear()
        cache.update(kept)
    d.arrow_plan = plan
    return changed


#: Most arrows resolved by a derivation's batches that :func:`resolved_ends` finds by a dict (more:
#: by a column over the rows, made in one pass).
_ENDS_BY_DICT = 2048


def resolved_ends(d: Any, r: int) -> Optional[Tuple[float, float, float, float, bool]]:
    """The drawn ends of an arrow as its derivation's compiled batch resolved it.

    For a straight arrow these are the ``start`` and ``end`` of :func:`resolve_arrow`'s
    geometry, bit for bit; the observation reads them instead of resolving the arrow again.

    Parameters
    ----------
    d : Derived
        A derivation (:class:`~spatialobs.canvas.document.derive.Derived`); its
        :attr:`~spatialobs.canvas.document.derive.Derived.straight` batches are read.
    r : int
        The arrow's row in ``d``.

    Returns
    -------
    tuple of (float, float, float, float, bool) or None
        The arrow-local ``x0, y0, x1, y1`` of its ends and whether it is valid, from the last
        of ``d``'s batches that resolved row ``r``; None when none did (the arrow kept a
        cached result, or was resolved in Python).
    """
    batches = d.straight
    if not batches:
        return None
    at = d.straight_at
    if at is None:  # made once per derivation: the batch (+1) and position of each row resolved
        if sum(len(rows) for rows, _, _ in batches) <= _ENDS_BY_DICT:  # (an edit's few arrows)
            at = {r: (k + 1, i) for k, (rows, _, _) in enumerate(batches) for i, r in enumerate(rows.tolist())}
        else:
            at = np.zeros((len(d.ids), 2), np.int64)
            for k, (rows, _, _) in enumerate(batches):
                at[rows, 0] = k + 1
                at[rows, 1] = np.arange(len(rows))
        d.straight_at = at
    if type(at) is dict:
        k, i = at.get(r, (0, 0))
    else:
        k, i = at[r].tolist()
    if not k:
        return None
    _, ends, valid = batches[k - 1]
    x0, y0, x1, y1 = ends[i].tolist()
    return x0, y0, x1, y1, bool(valid[i])


_resolve_straight_arrows: Optional[Callable[..., Any]] = getattr(_core, "resolve_straight_arrows", None)

#: Whether straight arrows without a label are resolved by the compiled kernel
#: (``_core.resolve_straight_arrows``); False resolves every arrow with its Python twin
#: (:func:`resolve_arrow`), which gives bit-identical boxes.
STRAIGHT_KERNEL = True


_resolve_arrows: Optional[Callable[..., Any]] = getattr(_core, "resolve_arrows", None)
_place_arrow_labels: Optional[Callable[..., Any]] = getattr(_core, "place_arrow_labels", None)

#: Whether bent arrows (arcs, ``bend``) without a label are resolved by the compiled kernel
#: (``_core.resolve_arrows``, one call per derivation); False resolves them with the Python
#: twin (:func:`resolve_arrow`), which gives bit-identical boxes.
ARC_KERNEL = True

#: Whether labelled arrows (straight or, with :data:`ARC_KERNEL`, bent; not elbows) are
#: resolved and their labels placed by the compiled kernels (``_core.resolve_arrows``, then
#: ``_core.place_arrow_labels`` with the label sizes measured in Python); False places every
#: label with the Python twin (:func:`_label_box`), which gives bit-identical boxes.
LABEL_KERNEL = True

try:
    from spatialobs.canvas.document import _cextract
except ImportError:  # a source tree without the compiled module
    _cextract = None  # type: ignore[assignment]
_c_resolve_all: Optional[Callable[..., Any]] = getattr(_cextract, "resolve_all", None)
_c_terminals_by_arrow: Optional[Callable[..., Any]] = getattr(_cextract, "terminals_by_arrow", None)
_c_plan_dependencies: Optional[Callable[..., Any]] = getattr(_cextract, "plan_dependencies", None)
_c_shared_targets: Optional[Callable[..., Any]] = getattr(_cextract, "shared_targets", None)
_c_unbound_to_resolve: Optional[Callable[..., Any]] = getattr(_cextract, "unbound_to_resolve", None)

#: Whether the full arrow pass walks its records with the compiled loops of ``_cextract``:
#: ``resolve_all`` (the straight arrows without a label gathered into the batch without a call
#: per arrow), ``terminals_by_arrow``, ``unbound_to_resolve``, ``plan_dependencies`` and
#: ``shared_targets``; False walks them with their Python twins (:func:`_resolve_all`,
#: :func:`_terminals_by_arrow`, :func:`_unbound_to_resolve`, :meth:`_ArrowPlan.build`,
#: :func:`_shared_targets`), which give the same values in the same order.
GATHER_KERNEL = True

#: What the batch takes an arrow as: (arc, bend, labelled).
_Kind = Tuple[bool, float, bool]
_PLAIN: _Kind = (False, 0.0, False)


def _batch_kind(props: Mapping[str, Any], label: Any) -> Optional[_Kind]:
    """How :func:`resolve_arrow` draws an arrow with ``props`` and ``label``: ``(arc, bend,
    labelled)`` (an arc is tried with ``bend``, and falls back to straight as tldraw's does),
    :data:`_PLAIN` for a straight arrow without a label; None for an elbow arrow."""
    labelled = bool(label and label.strip())
    kind = props.get("kind")
    if kind == "elbow":
        return None
    bend = props.get("bend")
    if (bend is None or (type(bend) in (int, float) and not bend)) and "scale" not in props:
        return (False, 0.0, True) if labelled else _PLAIN  # no bend (scale 1): not an arc, whatever the kind
    scale = _num(props.get("scale"), 1.0) or 1.0
    bend = _num(props.get("bend"), 0.0)
    arc_kind = props.get("kind", "arc") == "arc"
    arc = arc_kind and not abs(bend) < _MIN_ARROW_BEND * scale and not abs(bend) > abs(bend * 10 * scale)
    if not arc and not labelled:
        return _PLAIN
    return (bool(arc), bend if arc else 0.0, labelled)


def _straight_unlabelled(props: Mapping[str, Any], label: Any) -> bool:
    """Whether :func:`resolve_arrow` draws an arrow with ``props`` straight and without a label."""
    if label and label.strip():
        return False
    kind = props.get("kind")
    if kind == "elbow":
        return False
    bend = props.get("bend")
    if (bend is None or (type(bend) in (int, float) and not bend)) and "scale" not in props:
        return True  # no bend (scale 1): not an arc, whatever the kind
    scale = _num(props.get("scale"), 1.0) or 1.0
    bend = _num(props.get("bend"), 0.0)
    arc_kind = props.get("kind", "arc") == "arc"
    return not (arc_kind and not abs(bend) < _MIN_ARROW_BEND * scale and not abs(bend) > abs(bend * 10 * scale))


#: Target types whose outline is more than their box (see :func:`target_outline`).
_OWN_OUTLINE = frozenset({"geo", "text", "draw", "highlight", "line"})

_target_outlines: Optional[Callable[..., Any]] = getattr(_core, "target_outlines", None)

#: Whether the straight-arrow batch builds its targets' outlines with the compiled kernel
#: (``_core.target_outlines``: boxes and the geo kinds drawn with straight lines); False
#: builds every one with its Python twin (:func:`target_outline`), which gives bit-identical
#: points and bounds.
OUTLINE_KERNEL = True

#: ``_core.target_outlines``' kind of each geo kind it builds (1: the box of rectangles,
#: x-boxes, check-boxes and kinds tldraw does not know); curved kinds are built in Python.
_GEO_KINDS: Dict[str, int] = {
    "rectangle": 1, "x-box": 1, "check-box": 1, "triangle": 2, "diamond": 3, "rhombus": 4, "rhombus-2": 5,
    "trapezoid": 6, "arrow-left": 7, "arrow-right": 8, "arrow-up": 9, "arrow-down": 10, "pentagon": 11,
    "hexagon": 12, "octagon": 13, "star": 14}
_GEO_CURVED = frozenset({"ellipse", "oval", "cloud", "heart"})


def _kernel_outline_kind(node: Any) -> Optional[int]:
    """The kind ``_core.target_outlines`` builds ``node``'s full outline as (0: its box), or
    None when :func:`target_outline` builds it (curves, strokes, text, a size not finite)."""
    if node.type not in _OWN_OUTLINE:
        return 0
    if node.type != "geo":
        return None
    w, h = node.w, node.h
    if not (math.isfinite(w) and math.isfinite(h)):
        return None
    geo = str(node.props.get("geo", "rectangle"))
    return _GEO_KINDS.get(geo, None if geo in _GEO_CURVED else 1)


class _StraightBatch:
    """Straight arrows without a label gathered into the columns of one
    ``_core.resolve_straight_arrows`` call: per arrow its row, stored points, scale,
    stroke and heads; per terminal its target row, outlines, anchor and flags; each
    target outline once per derivation (flat points with offsets)."""

    def __init__(self, d: Any, nodes: Sequence[Any]) -> None:
        self._nodes = nodes
        self._row: Mapping[str, int] = d.row
        self.rows: List[int] = []
        self.keys: List[List[Any]] = []
        self.points: List[float] = []
        self.scale: List[float] = []
        self.stroke: List[float] = []
        self.heads: List[bool] = []
        self.target: List[int] = []
        self.outline: List[int] = []
        self.box_outline: List[int] = []
        self.anchor: List[float] = []
        self.precise: List[bool] = []
        self.exact: List[bool] = []
        self.slots: Dict[int, int] = {}   # target row -> outline index (text without a head: ``bare``)
        self.bare: Dict[int, int] = {}
        self.ends: Optional[np.ndarray] = None   # after run: the drawn ends and isValid of each arrow
        self.valid: Optional[np.ndarray] = None
        self.offsets: List[int] = [0]        # the outlines' flat points, bounds, closed flags and half strokes
        self.flat: List[float] = []
        self.bounds: List[float] = []
        self.closed: List[bool] = []
        self.half: List[float] = []
        # with OUTLINE_KERNEL: per outline its kind (_GEO_KINDS, 0 a plain box, -1 explicit), size and flips;
        # the explicit outlines' points and bounds (the others are built by _core.target_outlines)
        self.kinds: Optional[List[int]] = [] if OUTLINE_KERNEL and _target_outlines is not None else None
        self.sizes: List[float] = []
        self.flips: List[bool] = []
        # arcs and labelled arrows (resolved by _core.resolve_arrows): their batch indices, bends,
        # arc flags; per labelled one its index, label text and props; twin keys to record
        self.special: List[int] = []
        self.bend: List[float] = []
        self.arc: List[bool] = []
        self.labels: List[Tuple[int, str]] = []
        self.twin_keys: List[Tuple[int, Tuple[Any, ...], Tuple[Any, ...]]] = []
        # twins of a gathered arrow: its batch index by twin key, and the arrows that take its box
        # (row, cache key, the twin's batch index): a reply of many copies resolves one
        self.pending: Dict[Tuple[Any, ...], int] = {}
        self.followers: List[Tuple[int, List[Any], int]] = []

    @classmethod
    def start(cls, d: Any, nodes: Sequence[Any]) -> Optional["_StraightBatch"]:
        """A new batch for derivation ``d`` (rows' records ``nodes``), or None when the
        Python twin resolves every arrow."""
        if _HYPOT_VARIANT is None or _resolve_straight_arrows is None:
            return None
        if not (STRAIGHT_KERNEL or (_resolve_arrows is not None and (ARC_KERNEL or LABEL_KERNEL))):
            return None
        return cls(d, nodes)

    @staticmethod
    def takes(kind: _Kind) -> bool:
        """Whether an arrow of ``kind`` (:func:`_batch_kind`) joins the batch under the module's flags."""
        if kind is _PLAIN:
            return STRAIGHT_KERNEL
        if _resolve_arrows is None:
            return False
        if kind[2]:
            return LABEL_KERNEL and _place_arrow_labels is not None and (ARC_KERNEL or not kind[0])
        return ARC_KERNEL

    def _slot(self, r: int, node: Any, arrowhead: bool) -> int:
        """The index of row ``r``'s outline (``node``'s, for a terminal with or without ``arrowhead``)."""
        full = arrowhead or node.type != "text"
        slots = self.slots if full else self.bare
        k = slots.get(r)
        if k is None:
            k = slots[r] = len(self.closed)
            kinds = self.kinds
            if kinds is not None and full:
                code = _kernel_outline_kind(node)
                if code is not None:
                    # built by _core.target_outlines (a box, or a geo kind drawn with lines)
                    props = node.props
                    kinds.append(code)
                    self.sizes += (float(node.w), float(node.h))
                    self.flips += (bool(props.get("flipX")), bool(props.get("flipY"))) if code else (False, False)
                    self.closed.append(True)
                    self.half.append(_half_stroke(props))
                    return k
            if full and node.type not in _OWN_OUTLINE:
                # what target_outline gives these types: their box, closed (no Outline built)
                w, h = float(node.w), float(node.h)
                props = node.props
                self.flat += (0.0, 0.0, w, 0.0, w, h, 0.0, h)
                self.bounds += (0.0, 0.0, w, h)
                self.closed.append(True)
                self.half.append(_half_stroke(props))
            else:
                o = _outline_of(node, arrowhead)
                for p in o.points:
                    self.flat += p
                self.bounds += o.bounds
                self.closed.append(o.closed)
                self.half.append(o.stroke)
            if kinds is not None:
                kinds.append(-1)
                self.sizes += (0.0, 0.0)
                self.flips += (False, False)
            self.offsets.append(len(self.flat) // 2)
        return k

    def add(self, r: int, terms: Mapping[str, Any], key: List[Any], kind: _Kind = _PLAIN,
            twin: Optional[Tuple[Tuple[Any, ...], Tuple[Any, ...]]] = None) -> None:
        """Gather arrow row ``r`` (bound as ``terms``) whose cache key is ``key``, of ``kind``
        (:func:`_batch_kind`); ``twin``: its twin key and held records, to record its box under."""
        nodes = self._nodes
        props = nodes[r].props
        heads = (props.get("arrowheadStart", "none") != "none", props.get("arrowheadEnd", "arrow") != "none")
        if kind is not _PLAIN:
            i = len(self.rows)
            self.special.append(i)
            self.arc.append(kind[0])
            self.bend.append(kind[1])
            if kind[2]:
                self.labels.append((len(self.special) - 1, str(nodes[r].text)))
        if twin is not None:
            self.twin_keys.append((len(self.rows), twin[0], twin[1]))
            self.pending.setdefault(twin[0], len(self.rows))
        self.rows.append(r)
        self.keys.append(key)
        self.scale.append(_num(props["scale"], 1.0) or 1.0 if "scale" in props else 1.0)
        self.stroke.append(STROKE_SIZES.get(str(props.get("size", "m")), 3.5))
        self.heads += heads
        bs = terms.get("start")
        be = terms.get("end")
        row = self._row
        s = e = None
        ts = te = -1
        ks = ke = 0
        if bs is None:
            pts: Tuple[float, ...] = _point(props.get("start"))
            anchors: Tuple[float, ...] = (0.0, 0.0)
            flags: Tuple[bool, ...] = (False,)
            exact: Tuple[bool, ...] = (False,)
        else:
            ts = row[bs.to_id]
            s = nodes[ts]
            ks = self._slot(ts, s, heads[0])
            pts = (0.0, 0.0)
            anchor = bs.anchor
            anchors = (float(anchor[0]), float(anchor[1]))
            flags = (bool(bs.precise),)
            exact = (bool(bs.props.get("isExact", False)) if bs.props else False,)
        if be is None:
            pts += _point(props.get("end"))
            anchors += (0.0, 0.0)
            flags += (False,)
            exact += (False,)
        else:
            te = row[be.to_id]
            e = nodes[te]
            ke = self._slot(te, e, heads[1])
            pts += (0.0, 0.0)
            anchor = be.anchor
            anchors += (float(anchor[0]), float(anchor[1]))
            flags += (bool(be.precise),)
            exact += (bool(be.props.get("isExact", False)) if be.props else False,)
        self.points += pts
        self.target += (ts, te)
        self.outline += (ks, ke)
        self.anchor += anchors
        self.precise += flags
        self.exact += exact
        if s is not None and e is not None and s is not e:
            # nesting is judged on the page boxes of the targets' full outlines (a text
            # target's differs from the one a terminal without a head meets)
            if s.type == "text" and not heads[0]:
                ks = self._slot(ts, s, True)
            if e.type == "text" and not heads[1]:
                ke = self._slot(te, e, True)
        self.box_outline += (ks, ke)

    def follow(self, r: int, key: List[Any], twin: Tuple[Any, ...]) -> bool:
        """Whether arrow row ``r`` (cache key ``key``) is a twin of a gathered arrow (its
        :func:`_twin_key` is ``twin``): then :meth:`run` gives it that arrow's box."""
        i = self.pending.get(twin)
        if i is None:
            return False
        self.followers.append((r, key, i))
        return True

    def run(self, d: Any, nodes: Sequence[Any], kept: Dict[str, Tuple[List[Any], Box]],
            twins: Optional[Dict[Tuple[Any, ...], Tuple[Box, Tuple[Any, ...]]]] = None) -> None:
        """Resolve the gathered arrows into ``d.local`` and record them in ``kept`` (and the
        twin keys given to :meth:`add` in ``twins``)."""
        n = len(self.rows)
        if not n:
            return
        flat = self.flat
        k = len(self.closed)
        assert _resolve_straight_arrows is not None and _HYPOT_VARIANT is not None
        boxes, ends, valid = self._call(d, n, k, flat)
        self.ends, self.valid = ends, valid
        rows = np.array(self.rows, dtype=np.int64)
        # the drawn ends kept with a derivation (the segments the painted occlusion reads; a partial
        # derivation of a few rows, as an op's resolution, keeps none)
        if hasattr(d, "straight_at"):
            if d.straight is None:
                d.straight = []
            d.straight.append((rows, ends, valid))
            d.straight_at = None
        d.local[rows] = boxes
        # the cache keeps each box as a row of the batch's result (no float objects made)
        for r, key, box in zip(self.rows, self.keys, boxes):
            kept[nodes[r].id] = (key, box)
        for r, key, i in self.followers:
            d.local[r] = boxes[i]
            kept[nodes[r].id] = (key, boxes[i])
        if twins is not None:
            for i, twin, held in self.twin_keys:
                if len(twins) >= MAX_TWINS:
                    twins.clear()
                twins[twin] = (boxes[i], held)

    def _call(self, d: Any, n: int, k: int, flat: List[float]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        f64 = np.float64
        assert _resolve_straight_arrows is not None
        ex_offsets = np.array(self.offsets, dtype=np.int64)
        ex_points = np.array(flat, dtype=f64).reshape(len(flat) // 2, 2)
        if self.kinds is not None:
            assert _target_outlines is not None
            e = len(self.offsets) - 1
            offsets, points, bounds = _target_outlines(
                np.array(self.kinds, dtype=np.int64), np.array(self.sizes, dtype=f64).reshape(k, 2),
                np.array(self.flips, dtype=bool).reshape(k, 2), ex_offsets, ex_points,
                np.array(self.bounds, dtype=f64).reshape(e, 4))
        else:
            offsets, points, bounds = ex_offsets, ex_points, np.array(self.bounds, dtype=f64).reshape(k, 4)
        frame = (np.ascontiguousarray(d.px, dtype=f64), np.ascontiguousarray(d.py, dtype=f64),
                 np.ascontiguousarray(d.rotation, dtype=f64))
        # the per-arrow lists as one array per type, cut into contiguous columns (three conversions, not eleven)
        chain = itertools.chain
        assert len(self.points) + len(self.anchor) == 8 * n and len(self.scale) == len(self.stroke) == n
        assert len(self.target) == len(self.outline) == len(self.box_outline) == 2 * n and len(self.rows) == n
        assert len(self.heads) == len(self.precise) == len(self.exact) == 2 * n
        fl = np.fromiter(chain(self.points, self.scale, self.stroke, self.anchor, self.half), f64,
                         10 * n + len(self.half))
        il = np.fromiter(chain(self.rows, self.target, self.outline, self.box_outline), np.int64, 7 * n)
        bl = np.fromiter(chain(self.heads, self.precise, self.exact, self.closed), bool, 6 * n + len(self.closed))
        cols = [il[:n], fl[:4 * n].reshape(n, 4), fl[4 * n:5 * n], fl[5 * n:6 * n], bl[:2 * n].reshape(n, 2),
                il[n:3 * n].reshape(n, 2), il[3 * n:5 * n].reshape(n, 2), il[5 * n:7 * n].reshape(n, 2),
                fl[6 * n:10 * n].reshape(n, 4), bl[2 * n:4 * n].reshape(n, 2), bl[4 * n:6 * n].reshape(n, 2)]
        shared = (offsets, points, bl[6 * n:], bounds, fl[10 * n:])
        if not self.special:
            return _resolve_straight_arrows(*frame, *cols, *shared, _HYPOT_VARIANT)
        # straight arrows without a label through the straight kernel, the others (arcs, labels)
        # through the general one: one call each over all the arrows of their kind
        special = np.array(self.special, dtype=np.int64)
        plain = np.ones(n, dtype=bool)
        plain[special] = False
        boxes = np.empty((n, 4), dtype=f64)
        ends = np.empty((n, 4), dtype=f64)
        valid = np.empty(n, dtype=bool)
        if plain.any():
            pb, pe, pv = _resolve_straight_arrows(*frame, *[c[plain] for c in cols], *shared, _HYPOT_VARIANT)
            boxes[plain], ends[plain], valid[plain] = pb, pe, pv
        assert _resolve_arrows is not None
        sb, se, sv, is_arc, centers, sweep_large = _resolve_arrows(
            *frame, *[c[special] for c in cols], *shared, np.array(self.bend, dtype=f64),
            np.array(self.arc, dtype=bool), _HYPOT_VARIANT)
        if self.labels:
            sb = self._place_labels(sb, se, sv, is_arc, centers, sweep_large)
        boxes[special], ends[special], valid[special] = sb, se, sv
        return boxes, ends, valid

    def _place_labels(self, boxes: np.ndarray, ends: np.ndarray, valid: np.ndarray, is_arc: np.ndarray,
                      centers: np.ndarray, sweep_large: np.ndarray) -> np.ndarray:
        """The boxes of the general kernel's arrows (``boxes``: their bodies') with the labels of the
        valid labelled ones placed: sizes measured here, placement by ``_core.place_arrow_labels``."""
        at: List[int] = []
        sizes: List[float] = []
        pads: List[float] = []
        position: List[float] = []
        clamp: List[bool] = []
        nodes = self._nodes
        special = self.special
        for j, text in self.labels:
            if not valid[j]:
                continue  # tldraw places no label on an invalid arrow
            i = special[j]
            props = nodes[self.rows[i]].props
            scale = self.scale[i]
            size = str(props.get("size", "m"))
            font = props.get("font", "draw")
            sw = 2.0 * {"s": 1.0, "m": 1.75, "l": 2.5, "xl": 5.0}.get(size, 1.75)
            pad = (_LABEL_TO_ARROW_PADDING + (sw - 2.0) * 2 + (20 if sw >= 10.0 else 0)) * scale
            measured = _label_size(text, size, scale, tuple(boxes[j].tolist()),
                                   font if isinstance(font, str) else "draw", 64.0)
            if measured is None:
                continue  # a label that cannot be measured: the body's box, as the twin gives
            at.append(j)
            sizes += measured
            pads.append(pad)
            position.append(_num(props.get("labelPosition"), 0.5))
            clamp += (self.heads[2 * i] or self.target[2 * i] != -1,
                      self.heads[2 * i + 1] or self.target[2 * i + 1] != -1)
        if not at:
            return boxes
        assert _place_arrow_labels is not None and _HYPOT_VARIANT is not None
        m = len(at)
        idx = np.array(at, dtype=np.int64)
        merged, _ = _place_arrow_labels(
            is_arc[idx], ends[idx], centers[idx], sweep_large[idx], boxes[idx],
            np.array(sizes, dtype=np.float64).reshape(m, 2), np.array(pads, dtype=np.float64),
            np.array(position, dtype=np.float64), np.array(clamp, dtype=bool).reshape(m, 2), _HYPOT_VARIANT)
        boxes[idx] = merged
        return boxes


def _terminals_by_arrow(bindings: Iterable[Any], row: Mapping[str, int], nodes: Sequence[Any]
                        ) -> Tuple[Dict[int, Dict[str, Any]], Dict[int, Dict[str, Any]]]:
    """Per arrow row, its bindings by terminal: of every arrow, and of the arrows resolved
    against their targets (not those that keep their stored points). Bindings between rows
    of ``row``, in the given (canvas) order: a later binding of a terminal wins. With
    :data:`GATHER_KERNEL`, the compiled ``_cextract.terminals_by_arrow`` does the same."""
    if GATHER_KERNEL and _c_terminals_by_arrow is not None and type(bindings) is list and type(row) is dict \
            and type(nodes) is list:
        return _c_terminals_by_arrow(bindings, row, nodes, _keeps_points)
    bound_terms: Dict[int, Dict[str, Any]] = {}
    by_arrow: Dict[int, Dict[str, Any]] = {}
    get = row.get
    for b in bindings:
        r = get(b.from_id)
        if r is None or b.to_id not in row:
            continue
        terms = bound_terms.get(r)
        if terms is None:
            nd = nodes[r]
            if nd.type != "arrow":
                continue
            terms = bound_terms[r] = {}
            if not _keeps_points(nd):
                by_arrow[r] = terms
        terms[b.terminal] = b
    # an arrow resolved against its targets has the same terminals as it has bound (copies)
    for r, terms in by_arrow.items():
        by_arrow[r] = dict(terms)
    return bound_terms, by_arrow


def _unbound_to_resolve(rows: List[int], by_arrow: Dict[int, Dict[str, Any]], nodes: Sequence[Any]) -> None:
    """Add an empty entry to ``by_arrow`` for each of the arrow ``rows`` (in order) that it does not
    hold and that needs resolving unbound (:func:`_needs_resolving`). With :data:`GATHER_KERNEL`,
    the compiled ``_cextract.unbound_to_resolve`` does the same."""
    if GATHER_KERNEL and _c_unbound_to_resolve is not None and type(rows) is list and type(by_arrow) is dict \
            and type(nodes) is list:
        _c_unbound_to_resolve(rows, by_arrow, nodes, _needs_resolving, _MIN_ARROW_BEND)
        return
    for r in rows:
        if r not in by_arrow and _needs_resolving(nodes[r]):
            by_arrow[r] = {}


def _with_dependencies(dep_target: np.ndarray, dep_arrow: np.ndarray, arrows: Iterable[int],
                       by_arrow: Mapping[int, Mapping[Any, Any]], row: Mapping[str, int]
                       ) -> Tuple[np.ndarray, np.ndarray]:
    """The (target row, arrow row) dependencies kept (ordered by target row), with those of ``arrows``'
    bindings as they are now merged in."""
    dt: List[np.ndarray] = []
    da: List[np.ndarray] = []
    for q in arrows:
        terms = by_arrow.get(q)
        if terms:
            dt.append(np.fromiter((row[b.to_id] for b in terms.values()), np.int64, len(terms)))
            da.append(np.full(len(terms), q, dtype=np.int64))
    if not dt:
        return dep_target, dep_arrow
    return _merged(dep_target, dep_arrow, np.concatenate(dt), np.concatenate(da))


def _membership_changed(nodes: Sequence[Any], rows: Iterable[int], bound_terms: Mapping[int, Any],
                        by_arrow: Mapping[int, Any]) -> bool:
    """Whether one of the arrow ``rows`` now starts or stops being resolved: it is resolved
    when bound (and not keeping its stored points) or when it needs resolving unbound."""
    for r in rows:
        nd = nodes[r]
        terms = None if _keeps_points(nd) else bound_terms.get(r)
        if (bool(terms) or _needs_resolving(nd)) != (r in by_arrow):
            return True
    return False


class ArrowCache(Dict[str, Any]):
    """A canvas's resolved arrows (arrow id -> (key, box)), and its ``twins``: boxes by
    :func:`_twin_key`, kept across derivations (at most :data:`MAX_TWINS`, then started
    afresh), each with the target records its key names by identity (so that no other
    record can take their ids while the entry lives)."""

    def __init__(self) -> None:
        super().__init__()
        self.twins: Dict[Tuple[Any, ...], Tuple[Box, Tuple[Any, ...]]] = {}


#: Most distinct arrows (*ours*) an :class:`ArrowCache` remembers by value.
MAX_TWINS = 256


def _twin_key(nd: Any, axf: Xf, terms: Mapping[str, Any], nodes: Sequence[Any], row: Mapping[str, int],
              d: Any, xfs: Optional[Sequence[Xf]] = None) -> Tuple[Tuple[Any, ...], Tuple[Any, ...]]:
    """Everything :func:`resolve_arrow` reads for one arrow, by value: two arrows with the same
    key have the same geometry in their own frame, whatever their ids and indices. Returns
    the key and the target records it names. ``xfs``: the page transforms of the bound
    terminals' targets (start before end), when the caller has them.

    Props, texts and binding fields by their ``repr`` (JSON values and floats: equal reprs
    are the same values of the same types, ``1`` and ``True`` apart, ``0.0`` and ``-0.0``
    apart); transforms (four floats) by their bytes; target records by identity.
    """
    key: List[Any] = [repr(nd.props), repr(nd.text), _XF_BYTES(*axf)]
    held: List[Any] = []
    j = 0
    for term in ("start", "end"):
        b = terms.get(term)
        if b is not None:
            t = row[b.to_id]
            tn = nodes[t]
            held.append(tn)
            xf = xfs[j] if xfs is not None else _xf(d, t)
            j += 1
            key += (term, b.to_id, id(tn), _XF_BYTES(*xf), repr((b.anchor, b.precise, b.props)))
    return tuple(key), tuple(held)


#: A transform's four floats as bytes (equal bytes: the same floats, signs of zero included).
_XF_BYTES = struct.Struct("<4d").pack


def _targets_of(terms: Mapping[str, Any]) -> Tuple[Optional[str], Optional[str]]:
    """The target ids of an arrow's start and end bindings (None: unbound): equal for two
    arrows with the same :func:`_twin_key` (which names them)."""
    bs = terms.get("start")
    be = terms.get("end")
    return (None if bs is None else bs.to_id, None if be is None else be.to_id)


def _shared_targets(all_terms: Iterable[Mapping[str, Any]]) -> Set[Tuple[Optional[str], Optional[str]]]:
    """The :func:`_targets_of` that more than one of ``all_terms`` (arrows' bindings by
    terminal) have: an arrow with none of these has no twin among them. With
    :data:`GATHER_KERNEL`, the compiled ``_cextract.shared_targets`` does the same."""
    if GATHER_KERNEL and _c_shared_targets is not None:
        shared: Set[Tuple[Optional[str], Optional[str]]] = _c_shared_targets(all_terms)
        return shared
    seen: Set[Tuple[Optional[str], Optional[str]]] = set()
    shared = set()
    for terms in all_terms:
        t = _targets_of(terms)
        if t in seen:
            shared.add(t)
        else:
            seen.add(t)
    return shared


def _costly(props: Mapping[str, Any]) -> bool:
    """Whether resolving an arrow with ``props`` is worth looking up among its twins: elbow
    routes in Python and bent arcs (sampled in up to :data:`MAX_ARC_SPANS` spans); a straight
    arrow, and an elbow route of the compiled kernel, cost less than their twin key takes to build."""
    if props.get("kind") == "elbow":
        from spatialobs.canvas.document import elbow  # loaded on first use (~15 ms of a cold import)

        return not elbow.routed_by_kernel()
    bend = props.get("bend")
    return type(bend) in (int, float) and bend != 0


def _resolve_one(d: Any, nodes: Sequence[Any], r: int, terms: Mapping[str, Any], previous: Mapping[str, Any],
                 kept: Dict[str, Tuple[List[Any], Box]],
                 twins: Optional[Dict[Tuple[Any, ...], Tuple[Box, Tuple[Any, ...]]]] = None,
                 batch: Optional["_StraightBatch"] = None, frames: Optional[_Frames] = None,
                 shared: Optional[Set[Tuple[Optional[str], Optional[str]]]] = None) -> None:
    """Resolve arrow row ``r`` into ``d.local`` (from ``previous`` while its key is unchanged); record it in ``kept``.

    ``twins`` holds boxes resolved before by :func:`_twin_key` (see :class:`ArrowCache`): a
    reply that draws the same arrow many times resolves it once (a long arc is sampled in
    up to :data:`MAX_ARC_SPANS` spans, so one resolution can take a good fraction of a second).
    With ``batch``, a straight arrow without a label that needs resolving joins it instead
    (:meth:`_StraightBatch.run` resolves and records it). ``frames``: ``d``'s page transforms
    read into lists (the same transforms as :func:`_xf`'s). ``shared``: with ``twins`` empty,
    the :func:`_targets_of` that several arrows of the pass share; an arrow with other
    targets has no twin to find or to leave for the pass (its key is not built, nor kept).
    """
    nd = nodes[r]
    row = d.row
    xf_of = frames.xf if frames is not None else (lambda q: _xf(d, q))
    axf = xf_of(r)
    # what the result depends on: the arrow, its bindings, their targets and all transforms
    key: List[Any] = [nd, axf]
    bs = terms.get("start")
    if bs is not None:
        t = row[bs.to_id]
        key += (bs, nodes[t], xf_of(t))
    be = terms.get("end")
    if be is not None:
        t = row[be.to_id]
        key += (be, nodes[t], xf_of(t))
    hit = previous.get(nd.id)
    if hit is not None and _same_key(hit[0], key):
        box = hit[1]
    else:
        kind = _batch_kind(nd.props, nd.text) if batch is not None else None
        if kind is not None and not _StraightBatch.takes(kind):
            kind = None
        if kind is _PLAIN:
            assert batch is not None
            batch.add(r, terms, key)
            return
        if twins is not None and not _costly(nd.props):
            twins = None  # a straight arrow resolves faster than its key is built
        elif twins is not None and shared is not None and _targets_of(terms) not in shared:
            twins = None  # no other arrow of the pass is bound alike: none is its twin
        # the targets' transforms are the key's every third entry from its fifth (after the arrow,
        # its transform and each bound terminal's binding and target record)
        twin, held = _twin_key(nd, axf, terms, nodes, row, d, key[4::3]) if twins is not None else ((), ())
        got = twins.get(twin) if twins is not None else None
        if got is not None:
            box = got[0]
        elif kind is not None:
            assert batch is not None
            if twins is not None and batch.follow(r, key, twin):
                return
            batch.add(r, terms, key, kind, (twin, held) if twins is not None else None)
            return
        else:
            s, e = _terminals(d, nodes, r, terms)
            box = resolve_arrow(nd.props, axf, s, e, nd.text).bounds
            if twins is not None:
                if len(twins) >= MAX_TWINS:
                    twins.clear()
                twins[twin] = (box, held)
    kept[nd.id] = (key, box)
    d.local[r] = box


def _resolve_all(d: Any, nodes: Sequence[Any], by_arrow: Dict[int, Dict[str, Any]], previous: Mapping[str, Any],
                 kept: Dict[str, Tuple[List[Any], Box]],
                 twins: Optional[Dict[Tuple[Any, ...], Tuple[Box, Tuple[Any, ...]]]] = None,
                 batch: Optional["_StraightBatch"] = None, frames: Optional[_Frames] = None,
                 shared: Optional[Set[Tuple[Optional[str], Optional[str]]]] = None) -> List[int]:
    """:func:`_resolve_one` for every arrow row of ``by_arrow`` (its bindings by terminal), in order;
    returns those rows. With ``batch`` and ``frames`` (a full pass over many arrows) and
    :data:`GATHER_KERNEL`, the compiled loop ``_cextract.resolve_all`` does the same."""
    if (GATHER_KERNEL and STRAIGHT_KERNEL and _c_resolve_all is not None and batch is not None
            and frames is not None and type(nodes) is list and type(d.row) is dict and type(kept) is dict):
        return _c_resolve_all(d, nodes, by_arrow, previous, kept, twins, batch, frames, shared,
                              _resolve_one, _point, STROKE_SIZES, _OWN_OUTLINE, _GEO_KINDS, _GEO_CURVED)
    changed: List[int] = []
    for r, terms in by_arrow.items():
        _resolve_one(d, nodes, r, terms, previous, kept, twins, batch, frames, shared)
        changed.append(r)
    return changed


@dataclass
class _ArrowPlan:
    """Which arrows a derivation resolved, and with which bindings: what the next
    derivation of the same rows reuses when its bindings are the same records."""

    bindings: List[Any]                  # every binding record, in canvas order (compared by identity)
    by_arrow: Dict[int, Dict[str, Any]]  # resolved arrow row -> terminal -> binding
    bound_terms: Dict[int, Dict[str, Any]]  # every arrow row with bindings (stored-points arrows too)
    rows: np.ndarray                     # the resolved rows
    dep_target: np.ndarray               # (target row, arrow row) of every binding of a resolved arrow, by target
    dep_arrow: np.ndarray
    point_boxes: np.ndarray              # the resolved rows' local boxes before resolution (their stored points)

    @classmethod
    def build(cls, blist: List[Any], by_arrow: Dict[int, Dict[str, Any]], bound_terms: Dict[int, Dict[str, Any]],
              row: Mapping[str, int], local: np.ndarray) -> "_ArrowPlan":
        if GATHER_KERNEL and _c_plan_dependencies is not None and type(row) is dict:
            dt, da = _c_plan_dependencies(by_arrow, row)
        else:
            dt = []
            da = []
            for r, terms in by_arrow.items():
                for b in terms.values():
                    dt.append(row[b.to_id])
                    da.append(r)
        rows = np.fromiter(by_arrow, np.int64, len(by_arrow))
        dep_target, dep_arrow = _by_target(np.asarray(dt, dtype=np.int64), np.asarray(da, dtype=np.int64))
        return cls(blist, by_arrow, bound_terms, rows, dep_target, dep_arrow, local[rows])


def _by_target(dep_target: np.ndarray, dep_arrow: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The (target row, arrow row) dependencies ordered by target row (stably), as a plan keeps them."""
    if len(dep_target) < 2 or bool((dep_target[1:] >= dep_target[:-1]).all()):
        return dep_target, dep_arrow
    o = np.argsort(dep_target, kind="stable")
    return dep_target[o], dep_arrow[o]


def _merged(dep_target: np.ndarray, dep_arrow: np.ndarray, new_target: np.ndarray, new_arrow: np.ndarray
            ) -> Tuple[np.ndarray, np.ndarray]:
    """Dependencies ordered by target row with new ones merged in, each after the equal targets."""
    if not len(new_target):
        return dep_target, dep_arrow
    new_target, new_arrow = _by_target(new_target, new_arrow)
    at = np.searchsorted(dep_target, new_target, side="right")
    return np.insert(dep_target, at, new_target), np.insert(dep_arrow, at, new_arrow)


def _bound_to(dep_target: np.ndarray, dep_arrow: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """The arrow rows of the dependencies (ordered by target row) on the sorted rows ``targets``,
    with repeats: ``dep_arrow[mask[dep_target]]`` for the mask of ``targets``, in a search per target."""
    lo = np.searchsorted(dep_target, targets, side="left")
    hi = np.searchsorted(dep_target, targets, side="right")
    runs = [(a, b) for a, b in zip(lo.tolist(), hi.tolist()) if b > a]
    if not runs:
        return np.zeros(0, np.int64)
    if len(runs) == 1:
        return dep_arrow[runs[0][0]:runs[0][1]]
    return np.concatenate([dep_arrow[a:b] for a, b in runs])


def _resolve_dirty(d: Any, nodes: Sequence[Any], cache: Optional[Dict[str, Any]], prev: Any, dirty: Any,
                   plan: _ArrowPlan) -> Optional[List[int]]:
    """The incremental pass of :func:`resolve_bound`; None when the full pass is needed
    (an edit made an arrow start or stop being resolved)."""
    by_arrow = plan.by_arrow
    if _membership_changed(nodes, np.flatnonzero(dirty & (d.types == "arrow")).tolist(), plan.bound_terms, by_arrow):
        return None
    rows = plan.rows
    todo = np.union1d(rows[dirty[rows]], plan.dep_arrow[dirty[plan.dep_target]])
    plan = _ArrowPlan(plan.bindings, by_arrow, plan.bound_terms, rows, plan.dep_target, plan.dep_arrow, d.local[rows])
    d.local[rows] = prev.local[rows]
    _resolve_todo(d, nodes, todo, by_arrow, cache)
    d.arrow_plan = plan
    return rows.tolist()


def _plan_terms_hold(d: Any, nodes: Sequence[Any], blist: List[Any], rebound: Optional[AbstractSet[str]],
                     plan: _ArrowPlan) -> bool:
    """Whether the ``rebound`` connectors' terminals among ``d``'s rows, read again from
    ``blist`` (the plan's own binding records), are the plan's. They differ only when the plan
    was made on rows that some of those bindings named without holding them (a step of a
    version derived in steps: the removals of a rolled-back batch whose restored bindings
    name the nodes the next step puts back)."""
    if not rebound:
        return True
    row = d.row
    bound_terms, by_arrow = _rebound_terminals(d, nodes, blist, rebound)
    for i in rebound:
        r = row.get(i)
        if r is not None and ((bound_terms.get(r) or {}) != (plan.bound_terms.get(r) or {})
                              or (by_arrow.get(r) or {}) != (plan.by_arrow.get(r) or {})):
            return False
    return True


def _resolve_todo(d: Any, nodes: Sequence[Any], todo: np.ndarray, by_arrow: Mapping[int, Mapping[str, Any]],
                  cache: Optional[Dict[str, Any]]) -> None:
    """Resolve the arrow rows ``todo`` of an incremental pass into ``d.local`` (from
    ``cache`` while their keys are unchanged), adding their results to ``cache``."""
    previous: Dict[str, Any] = cache if cache is not None else {}
    kept: Dict[str, Tuple[List[Any], Box]] = {}
    twins = cache.twins if isinstance(cache, ArrowCache) else {}
    batch = _StraightBatch.start(d, nodes)
    for r in todo.tolist():
        _resolve_one(d, nodes, r, by_arrow[r], previous, kept, twins, batch)
    if batch is not None:
        batch.run(d, nodes, kept, twins)
    if cache is not None:
        cache.update(kept)


def _resolve_added(d: Any, nodes: Sequence[Any], blist: List[Any], cache: Optional[Dict[str, Any]], prev: Any,
                   dirty: Any, plan: _ArrowPlan) -> Optional[List[int]]:
    """The incremental pass of :func:`resolve_bound` when bindings were only added after the
    previous ones (an agent creating arrows): the arrows they bind join the plan, and only
    those, the dirty arrows and the arrows bound to dirty rows are resolved. None when the
    full pass is needed (an arrow of the previous rows starting or stopping being resolved)."""
    row = d.row
    n_old = len(prev.ids)
    by_arrow = dict(plan.by_arrow)
    bound_terms = dict(plan.bound_terms)
    touched: List[int] = []
    dt: List[int] = []
    for b in blist[len(plan.bindings):]:
        r = row.get(b.from_id)
        if r is None or b.to_id not in row or nodes[r].type != "arrow":
            continue
        bound_terms[r] = {**bound_terms.get(r, {}), b.terminal: b}
        if _keeps_points(nodes[r]):
            continue
        by_arrow[r] = {**by_arrow.get(r, {}), b.terminal: b}
        touched.append(r)
        dt.append(row[b.to_id])
    for r in np.flatnonzero(dirty & (d.types == "arrow")).tolist():
        nd = nodes[r]
        terms = None if _keeps_points(nd) else bound_terms.get(r)
        member = bool(terms) or _needs_resolving(nd)
        if member and r not in by_arrow:
            if r < n_old:
                return None
            by_arrow[r] = {}
        elif not member and r in by_arrow:
            return None
    rows = np.fromiter(by_arrow, np.int64, len(by_arrow))
    point_boxes = d.local[rows]
    d.local[plan.rows] = prev.local[plan.rows]
    dep_target, dep_arrow = _merged(plan.dep_target, plan.dep_arrow, np.asarray(dt, dtype=np.int64),
                                    np.asarray(touched, dtype=np.int64))
    todo = np.union1d(np.union1d(rows[dirty[rows]], dep_arrow[dirty[dep_target]]), np.asarray(touched, dtype=np.int64))
    _resolve_todo(d, nodes, todo, by_arrow, cache)
    d.arrow_plan = _ArrowPlan(blist, by_arrow, bound_terms, rows, dep_target, dep_arrow, point_boxes)
    return rows.tolist()


def _resolve_remaining(d: Any, nodes: Sequence[Any], blist: List[Any], cache: Optional[Dict[str, Any]], prev: Any,
                       dirty: Any, plan: _ArrowPlan, kept: Any) -> Optional[List[int]]:
    """The incremental pass of :func:`resolve_bound` after whole subtrees were removed (``kept``
    marks ``prev``'s remaining rows) and bindings at most removed: the plan is carried to the
    new row numbers, and only the arrows that are dirty, bound to a dirty row, or that lost a
    binding are resolved. None when the full pass is needed (a binding that is not one of the
    previous ones, in their order, or an arrow starting or stopping being resolved)."""
    old_bindings = plan.bindings
    live = set(map(id, blist))
    still = [b for b in old_bindings if id(b) in live]
    if len(still) != len(blist) or not all(map(operator.is_, still, blist)):
        return None  # a binding that was not there (added), or the order changed
    old_row = prev.row
    lost: Set[int] = {old_row[b.from_id] for b in old_bindings if id(b) not in live and b.from_id in old_row}
    newpos_a = np.cumsum(kept) - 1
    newpos_a[~kept] = -1
    newpos = newpos_a.tolist()
    row = d.row
    gone_ids = {prev.ids[i] for i in np.flatnonzero(~kept).tolist()}
    if any(b.to_id in gone_ids and b.from_id in row for b in blist):
        return None  # a binding to a removed row that stayed: the full pass decides
    # the arrows that lost a binding take their terminals again as the full pass does (in
    # canvas order, a later binding of a terminal over an earlier one)
    lost_ids = {prev.ids[r] for r in lost if kept[r]}
    touched = sorted(row[i] for i in lost_ids)
    again_bound, again = _terminals_by_arrow([b for b in blist if b.from_id in lost_ids] if lost_ids else (),
                                             row, nodes)
    bound_terms = {q: terms for r, terms in plan.bound_terms.items() if (q := newpos[r]) >= 0 and r not in lost}
    bound_terms.update(again_bound)
    by_arrow = {q: terms for r, terms in plan.by_arrow.items() if (q := newpos[r]) >= 0 and r not in lost}
    for q in touched:
        terms = again.get(q)
        if terms is not None:
            by_arrow[q] = terms
        elif _needs_resolving(nodes[q]):
            by_arrow[q] = {}
    if _membership_changed(nodes, np.flatnonzero(dirty & (d.types == "arrow")).tolist() + touched, bound_terms,
                           by_arrow):
        return None
    rows = np.fromiter(by_arrow, np.int64, len(by_arrow))
    old_of = np.flatnonzero(kept)  # new row -> old row
    point_boxes = d.local[rows]
    d.local[rows] = prev.local[old_of[rows]]
    dep_t, dep_a = newpos_a[plan.dep_target], newpos_a[plan.dep_arrow]
    keep_dep = (dep_t >= 0) & (dep_a >= 0)
    if lost:
        keep_dep &= ~np.isin(plan.dep_arrow, np.fromiter(lost, np.int64, len(lost)))
    dep_target, dep_arrow = _with_dependencies(dep_t[keep_dep], dep_a[keep_dep], touched, by_arrow, row)
    todo = np.union1d(np.union1d(rows[dirty[rows]], dep_arrow[dirty[dep_target]]),
                      np.intersect1d(np.asarray(touched, dtype=np.int64), rows))
    if cache is not None:
        for i in gone_ids:
            cache.pop(i, None)
    _resolve_todo(d, nodes, todo, by_arrow, cache)
    d.arrow_plan = _ArrowPlan(blist, by_arrow, bound_terms, rows, dep_target, dep_arrow, point_boxes)
    return rows.tolist()


def resolve_rows(d: Any, nodes: Sequence[Any], bindings: Mapping[str, Any], cache: Optional[Dict[str, Any]],
                 plan: Optional[_ArrowPlan], dirty: Any, dirty_rows: Any, point_boxes: Any,
                 own_local: bool = True, rebound: Optional[AbstractSet[str]] = None,
                 same_bindings: bool = False, own_plan: bool = False) -> Optional[Any]:
    """Resolve again only the arrows that an edit reaches; return their rows, or None when the
    full pass of :func:`resolve_bound` is needed.

    ``d`` is a derivation that carries the previous one's local boxes (resolved arrows
    included) with the page transforms of the edit; ``plan`` the previous derivation's
    :class:`_ArrowPlan`; ``dirty`` (boolean row mask, read with ``rebound`` only: None otherwise) and
    ``dirty_rows`` (the same rows, sorted and distinct) the rows whose record or page transform may
    differ (replaced records and their descendants);
    ``point_boxes`` the resolved rows' boxes before resolution, as of this edit. The
    arrows looked at are those that are dirty or bound to a dirty row, as in the
    incremental pass of :func:`resolve_bound`; the others keep their boxes. Without
    ``own_local``, ``d.local`` is shared with the previous derivation and is copied
    before an arrow is written into it.

    ``rebound``: the ids of every connector whose bindings were written since ``plan``'s
    derivation (the canvas keeps them). With it, bindings may differ from the plan's: the
    terminals of those connectors are read again from ``bindings`` (in canvas order, as
    the full pass reads them; a :class:`Rebound` brings them, else every binding is
    scanned for them), and each may start or stop being resolved. Their rows must
    be among ``dirty_rows`` (their local boxes re-read from their records). Without it,
    any change of bindings takes the full pass. ``same_bindings``: the caller knows that
    ``bindings`` are the plan's records in the plan's order (no binding written since), so
    they are not compared one by one (28,612 identity tests at 10^5 shapes).

    ``own_plan``: ``plan``'s binding list and terminal maps are read again by no one (the
    derivation that holds them is used up, and no other one or caller holds them): with
    ``rebound`` they are written in place instead of copied (copies of 10^5-shape maps cost
    their copy and a pass of the garbage collector over them at its next young collection).
    They are written only once every check that could decline has passed.
    """
    if plan is None:
        return None if bindings else np.zeros(0, dtype=np.int64)
    by_arrow, bound_terms = plan.by_arrow, plan.bound_terms
    rows, dep_target, dep_arrow = plan.rows, plan.dep_target, plan.dep_arrow
    blist = plan.bindings
    again: List[int] = []
    if rebound:
        row = d.row
        again = sorted(r for i in rebound if (r := row.get(i)) is not None)
    elif not same_bindings and (len(bindings) != len(plan.bindings)
                                or not all(map(operator.is_, bindings.values(), plan.bindings))):
        return None
    arrows = dirty_rows[d.types[dirty_rows] == "arrow"].tolist()
    if again:
        done = set(again)
        arrows = [r for r in arrows if r not in done]
    # (the plan's terminals of the other arrows are those after the rebound ones are read again)
    if _membership_changed(nodes, arrows, bound_terms, by_arrow):
        return None
    if again and not dirty[again].all():
        return None  # a rebound arrow whose box was not read again from its record
    # rebound arrows none of which the plan resolved (new arrows): the plan's rows and dependencies
    # are all kept, nothing to take out (its rows are its map's keys, its dependencies their bindings')
    none_planned = not any(r in by_arrow for r in again)
    if rebound:
        # every binding written since the plan names a rebound connector (the old record's and the
        # new one's), so the bindings now are the plan's of the other connectors, in their order, and
        # the rebound connectors' own: as many as the plan's and theirs only when none of the plan's
        # was removed or replaced, and theirs then came after, in canvas order (appended, not read again)
        own = rebound.bindings if isinstance(rebound, Rebound) else None
        if own is not None and len(bindings) == len(blist) + len(own):
            if own_plan:
                blist.extend(own)
            else:
                blist = blist + own
        elif own_plan:
            blist[:] = bindings.values()
        else:
            blist = list(bindings.values())
        by_arrow, bound_terms, again, tail = _rebind(d, nodes, blist, rebound, by_arrow, bound_terms,
                                                     in_place=own_plan)
    if again:
        back = np.asarray(tail, dtype=np.int64)
        if none_planned:
            dep_target, dep_arrow = _with_dependencies(dep_target, dep_arrow, again, by_arrow, d.row)
            rows = np.concatenate([rows, back])
            point_boxes = np.concatenate([point_boxes, d.local[back]])
        else:
            # the plan's rows, point boxes and dependencies without the rebound arrows, then with them as they are now
            redo = np.zeros(len(d.ids), dtype=bool)
            redo[again] = True
            keep_dep = ~redo[dep_arrow]
            dep_target, dep_arrow = _with_dependencies(dep_target[keep_dep], dep_arrow[keep_dep], again, by_arrow,
                                                       d.row)
            # the plan's rows in its maps' order (the rebound ones left, then put back last, as _rebind
            # does) with their point boxes: carried for the others, a rebound arrow's its stored points'
            # (read again from its record)
            kept = ~redo[rows]
            rows = np.concatenate([rows[kept], back])
            point_boxes = np.concatenate([np.compress(kept, point_boxes, axis=0), d.local[back]])
        if cache is not None:
            for r in again:
                if r not in by_arrow:
                    cache.pop(d.ids[r], None)
    if rebound:
        todo = unique(np.concatenate([rows[dirty[rows]], dep_arrow[dirty[dep_target]]]))
    else:  # the plan's rows are its map's keys: the dirty ones found there, their dependents by a search
        mine = np.fromiter((r for r in dirty_rows.tolist() if r in by_arrow), np.int64)
        todo = unique(np.concatenate([mine, _bound_to(dep_target, dep_arrow, dirty_rows)]))
    if len(todo) and not own_local:
        d.local = d.local.copy()
    _resolve_todo(d, nodes, todo, by_arrow, cache)
    d.arrow_plan = _ArrowPlan(blist, by_arrow, bound_terms, rows, dep_target, dep_arrow, point_boxes)
    return todo


class Rebound(FrozenSet[str]):
    """The ids of the connectors whose bindings were written, with ``bindings``: those
    connectors' binding records in canvas order (what a scan of every binding finds for
    them), so that the arrow pass reads them without the scan."""

    bindings: List[Any]

    def __new__(cls, ids: Iterable[str], bindings: List[Any]) -> "Rebound":
        self = super().__new__(cls, ids)
        self.bindings = bindings
        return self


def _rebound_terminals(d: Any, nodes: Sequence[Any], blist: List[Any], rebound: AbstractSet[str]
                       ) -> Tuple[Dict[int, Dict[str, Any]], Dict[int, Dict[str, Any]]]:
    """The ``rebound`` connectors' terminals among ``d``'s rows, read again (as
    :func:`_terminals_by_arrow` gives them) from their own bindings: those a :class:`Rebound`
    brings along, else those a scan of ``blist`` finds."""
    own = rebound.bindings if isinstance(rebound, Rebound) else [b for b in blist if b.from_id in rebound]
    return _terminals_by_arrow(own, d.row, nodes)


def _rebind(d: Any, nodes: Sequence[Any], blist: List[Any], rebound: AbstractSet[str],
            by_arrow: Dict[int, Dict[str, Any]], bound_terms: Dict[int, Dict[str, Any]], in_place: bool = False
            ) -> Tuple[Dict[int, Dict[str, Any]], Dict[int, Dict[str, Any]], List[int], List[int]]:
    """The plan's terminals with those of the ``rebound`` connectors read again from ``blist``
    (copies, the plan's own left as they are; with ``in_place``, the plan's own maps, written),
    the rows of those connectors, and the rows put back into the resolved map (last, in its
    order). A :class:`Rebound` brings the connectors' bindings along; any other set is looked
    up by a scan of ``blist``."""
    row = d.row
    again = sorted(r for i in rebound if (r := row.get(i)) is not None)
    if not in_place:
        by_arrow, bound_terms = by_arrow.copy(), bound_terms.copy()
    for r in again:
        by_arrow.pop(r, None)
        bound_terms.pop(r, None)
    new_bound, new_by = _rebound_terminals(d, nodes, blist, rebound)
    bound_terms.update(new_bound)
    by_arrow.update(new_by)
    tail = list(new_by)
    for r in again:
        nd = nodes[r]
        if r not in by_arrow and nd.type == "arrow" and _needs_resolving(nd):
            by_arrow[r] = {}
            tail.append(r)
    return by_arrow, bound_terms, again, tail


def _same_key(a: List[Any], b: List[Any]) -> bool:
    # records by identity (they are immutable and replaced on every change), transforms by value
    return len(a) == len(b) and all(x is y or (type(x) is tuple and x == y) for x, y in zip(a, b))


def arrow_geometry(canvas: Any, arrow_id: str) -> ArrowGeometry:
    """How tldraw draws one arrow of a canvas (in the arrow's local frame).

    Raises
    ------
    OutOfRangeError
        No node ``arrow_id``.
    InvalidInputError
        The node is not an arrow.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> from spatialobs.canvas.document.records import Node
    >>> c = Canvas()
    >>> a = c.add(Node("shape:a", "arrow", "page:page", "a1", 10, 10,
    ...                props={"start": {"x": 0, "y": 0}, "end": {"x": 100, "y": 0}}))
    >>> arrow_geometry(c, "shape:a").end
    (100.0, 0.0)
    """
    nd, axf, s, e = _arrow_inputs(canvas, arrow_id)
    return resolve_arrow(nd.props, axf, s, e, nd.text)


def arrow_ends(canvas: Any, arrow_id: str) -> Tuple[Pt, Pt]:
    """The ends of one arrow of a canvas as tldraw draws them (in the arrow's local frame).

    The ``start`` and ``end`` of :func:`arrow_geometry`, to the bit, without sampling
    an arc or placing the label (neither moves an end): what a writer needs from an
    arrow whose ends its format stores.

    Raises
    ------
    OutOfRangeError
        No node ``arrow_id``.
    InvalidInputError
        The node is not an arrow.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> from spatialobs.canvas.document.records import Node
    >>> c = Canvas()
    >>> a = c.add(Node("shape:a", "arrow", "page:page", "a1", 10, 10, text="a label",
    ...                props={"start": {"x": 0, "y": 0}, "end": {"x": 100, "y": 0}, "bend": 40}))
    >>> arrow_ends(c, "shape:a") == (arrow_geometry(c, "shape:a").start, arrow_geometry(c, "shape:a").end)
    True
    """
    nd, axf, s, e = _arrow_inputs(canvas, arrow_id)
    geo = _course(nd.props, axf, s, e)[0]
    return geo.start, geo.end


def _arrow_inputs(canvas: Any, arrow_id: str) -> Tuple[Any, Xf, Optional[Terminal], Optional[Terminal]]:
    """What :func:`resolve_arrow` takes for one arrow of a canvas: its record, page transform and terminals."""
    from spatialobs._errors import InvalidInputError, OutOfRangeError

    # read, not handed out: nothing below keeps the derivation, so the next one may still write
    # into its columns (a removal that unbinds arrows would otherwise make it copy them)
    d = canvas._geometry() if hasattr(canvas, "_geometry") else canvas.geometry()
    r = d.row.get(arrow_id)
    if r is None:
        raise OutOfRangeError(f"no node with id {arrow_id!r}")
    raw = getattr(canvas, "_raw", None)
    # the records of the derivation's rows: its input columns hold them (no list of n per call)
    nodes = raw.nodes if raw is not None and raw.ids is d.ids else [canvas.nodes[i] for i in d.ids]
    nd = nodes[r]
    if nd.type != "arrow":
        raise InvalidInputError(f"record {arrow_id!r}: a {nd.type!r} node is not an arrow")
    if hasattr(canvas, "_terms_of"):
        own = canvas._terms_of(arrow_id)
    else:  # a canvas-like object without the binding index: two at one end, the later in canvas order wins
        own = {b.terminal: b for b in canvas.bindings.values() if b.from_id == arrow_id}
    terms = {t: b for t, b in own.items() if b.to_id in d.row}
    s, e = _terminals(d, nodes, r, terms)
    return nd, _xf(d, r), s, e


def page_terminals(canvas: Any, arrow_id: str) -> Tuple[Pt, Pt]:
    """Page positions of an arrow's drawn ends (tldraw's ``arrow.start/end.pagePoint``).

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> from spatialobs.canvas.document.records import Node
    >>> c = Canvas()
    >>> a = c.add(Node("shape:a", "arrow", "page:page", "a1", 10, 10,
    ...                props={"start": {"x": 0, "y": 0}, "end": {"x": 100, "y": 0}}))
    >>> page_terminals(c, "shape:a")
    ((10.0, 10.0), (110.0, 10.0))
    """
    g = arrow_geometry(canvas, arrow_id)
    xf = _xf(canvas.geometry(), canvas.geometry().row[arrow_id])
    return _to_page(xf, g.start), _to_page(xf, g.end)


def unbind_patch(canvas: Any, arrow_id: str, terminals: Sequence[str]) -> Dict[str, Any]:
    """The props tldraw writes into an arrow whose ``terminals`` lose their target.

    When a bound shape is deleted, tldraw leaves each terminal bound to it as a free
    point where the arrow was drawn (in the arrow's local frame) and, for an arc,
    re-fits ``bend`` so the body keeps its curve. Computed before the target goes.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> from spatialobs.canvas.document.records import Binding, Node
    >>> c = Canvas()
    >>> box = c.add(Node("shape:box", "geo", "page:page", "a1", 200, 0, 100, 100, props={"geo": "rectangle"}))
    >>> arr = c.add(Node("shape:arr", "arrow", "page:page", "a2", 0, 0,
    ...                  props={"start": {"x": 0, "y": 50}, "end": {"x": 9, "y": 9}}))
    >>> b = c.add(Binding("b", "arrow", "shape:arr", "shape:box", "end"))
    >>> unbind_patch(c, "shape:arr", ["end"])
    {'end': {'x': 188.25, 'y': 50.0}}
    """
    if _keeps_points(canvas.nodes[arrow_id]):
        return {}  # Excalidraw keeps the stored points of an arrow whose target goes
    nd, axf, s, e = _arrow_inputs(canvas, arrow_id)
    g = _course(nd.props, axf, s, e)[0]  # ends, handles and arc: no sampling, no label
    props = canvas.nodes[arrow_id].props
    patch: Dict[str, Any] = {}
    for term in terminals:
        p = g.start if term == "start" else g.end
        if not (math.isfinite(p[0]) and math.isfinite(p[1])):
            continue
        cur = props.get(term)
        val: Dict[str, Any] = {"x": p[0], "y": p[1]}
        if is_mapping(cur) and "type" in cur:  # the older in-props form keeps its tag
            val = {"type": "point", **val}
        patch[term] = val
    if g.kind == "arc" and g.center is not None and patch:
        bend = _num(props.get("bend"), 0.0)
        ns = g.start if "start" in patch else g.start_handle
        ne = g.end if "end" in patch else g.end_handle
        mid = ((ns[0] + ne[0]) / 2, (ns[1] + ne[1]) / 2)
        dx, dy = ns[0] - ne[0], ns[1] - ne[1]
        if abs(dx * dx + dy * dy) > 1e-6:
            radius = _dist(g.center, g.start_handle)
            ux, uy = _uni(dy, -dx)
            sgn = (bend > 0) - (bend < 0)
            target = (mid[0] + ux * radius * 2 * sgn, mid[1] + uy * radius * 2 * sgn)
            hits = _segment_circle(g.center, target, g.center, radius)
            if hits and math.isfinite(radius):
                q = min(hits, key=lambda h: _dist2(h, target))
                nb = _dist(mid, q) * sgn
                if abs(nb - bend) > 1e-6:
                    patch["bend"] = nb
    return patch
