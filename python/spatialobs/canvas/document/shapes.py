"""Local geometry of point-based shapes and text-size estimates.

Box-like nodes have the local box ``(0, 0, w, h)``. Point-based nodes (arrows,
lines, freehand strokes) have the bounding box of their points, which need not
start at the origin; this module computes it from the node's ``props`` in the
forms the importers keep:

* ``props["points"]``: a list of ``[x, y]`` pairs (native form, Excalidraw);
* tldraw arrows: ``props["start"]`` / ``props["end"]`` points and ``props["bend"]``
  (a circular arc through the midpoint pushed sideways by ``bend``);
* tldraw lines: ``props["points"]`` / ``props["handles"]`` as an id-keyed mapping;
* tldraw draw / highlight: ``props["segments"]`` with point lists or the
  base64 ``path`` encoding (first point float32, then float16 deltas).
"""

from __future__ import annotations

import base64
import math
import unicodedata
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from spatialobs.canvas.document.freehand import decode_path, freehand_box, rotated_freehand_box
from spatialobs.canvas.document.sanitize import is_mapping

__all__ = [
    "POINT_TYPES",
    "FONT_SIZES",
    "LINE_HEIGHT",
    "local_box",
    "arrow_terminals",
    "arc_box",
    "curve_box",
    "rotated_points_box",
    "decode_b64_points",
    "encode_b64_points",
    "estimate_text_size",
    "arc_centre",
]

#: Node types whose local geometry comes from points rather than ``(0, 0, w, h)``.
POINT_TYPES = frozenset({"arrow", "line", "draw", "highlight", "freedraw"})

#: tldraw's font size per size style, in page units before ``scale``.
FONT_SIZES = {"s": 18.0, "m": 24.0, "l": 36.0, "xl": 44.0}
#: tldraw draws an arrow straight when ``|bend|`` is below this.
STRAIGHT_BEND = 8.0
#: tldraw's stroke width per size style; a bound arrowhead stops 10 + this short of its target.
STROKE_SIZES = {"s": 2.0, "m": 3.5, "l": 5.0, "xl": 10.0}
#: tldraw's text line height as a multiple of the font size.
LINE_HEIGHT = 1.35

Box = Tuple[float, float, float, float]


def _bbox(xs: Sequence[float], ys: Sequence[float]) -> Optional[Box]:
    if not xs:
        return None
    return (min(xs), min(ys), max(xs), max(ys))


def _finite_xy(p: Any) -> Optional[Tuple[float, float]]:
    try:
        if type(p) is dict or is_mapping(p):  # a plain dict, the usual record, without the mapping check
            x, y = float(p["x"]), float(p["y"])
        else:
            x, y = float(p[0]), float(p[1])
    except (KeyError, IndexError, TypeError, ValueError, OverflowError):
        return None
    if math.isfinite(x) and math.isfinite(y):
        return (x, y)
    return None


def decode_b64_points(path: str, dim: Optional[int] = None) -> np.ndarray:
    """Decode tldraw's base64 point encoding to an ``(n, 3)`` array of x, y, z.

    The first point is three little-endian float32 values; each following point is
    three float16 deltas from the previous one. A segment with ``dim`` 2 stores two
    of each (no pressure); z is then 0.5, as tldraw supplies it.

    Examples
    --------
    >>> decode_b64_points(encode_b64_points([(1, 2, 0.5), (3, 2, 0.5)]))[:, :2].tolist()
    [[1.0, 2.0], [3.0, 2.0]]
    """
    if dim == 2:
        xy = decode_path(path, 2)
        return np.column_stack([xy, np.full(len(xy), 0.5)])
    try:
        raw = base64.b64decode(path, validate=False)
    except (ValueError, TypeError):
        return np.zeros((0, 3))
    if len(raw) < 12:
        return np.zeros((0, 3))
    first = np.frombuffer(raw[:12], dtype="<f4").astype(np.float64)
    rest = raw[12:]
    k = len(rest) // 6
    deltas = np.frombuffer(rest[: k * 6], dtype="<f2").astype(np.float64).reshape(k, 3)
    pts = np.empty((k + 1, 3))
    pts[0] = first
    if k:
        pts[1:] = first + np.cumsum(deltas, axis=0)
    return pts


def encode_b64_points(points: Iterable[Sequence[float]]) -> str:
    """Encode points ``(x, y[, z])`` in tldraw's base64 form (see :func:`decode_b64_points`).

    Deltas are taken from the previously *encoded* point so rounding does not drift.
    """
    pts = [(float(p[0]), float(p[1]), float(p[2]) if len(p) > 2 else 0.5) for p in points]
    if not pts:
        return ""
    first = np.asarray(pts[0], dtype="<f4")
    out = [first.tobytes()]
    prev = first.astype(np.float64)
    for p in pts[1:]:
        d = (np.asarray(p) - prev).astype("<f2")
        out.append(d.tobytes())
        prev = prev + d.astype(np.float64)
    return base64.b64encode(b"".join(out)).decode("ascii")


def arc_box(a: Tuple[float, float], b: Tuple[float, float], bend: float) -> Box:
    """Bounding box of tldraw's arrow arc from ``a`` to ``b`` with ``bend``.

    The arc passes through ``a``, ``b`` and the chord midpoint moved by ``bend``
    along the chord's left normal; tldraw draws ``|bend| < 8`` (and a degenerate
    chord) as the straight segment.

    Examples
    --------
    >>> arc_box((0, 0), (10, 0), 0)
    (0.0, 0.0, 10.0, 0.0)
    >>> [round(v, 9) for v in arc_box((0, 0), (100, 0), 50)]
    [0.0, 0.0, 100.0, 50.0]
    """
    ax, ay = float(a[0]), float(a[1])
    bx, by = float(b[0]), float(b[1])
    if abs(bend) < STRAIGHT_BEND:
        return (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))
    dx, dy = bx - ax, by - ay
    length = math.hypot(dx, dy)
    if length < 1e-9:
        return (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))
    ux, uy = dx / length, dy / length
    # tldraw: middle = med + per(u) * -bend, per(u) = (u.y, -u.x)
    mx, my = (ax + bx) / 2 - uy * bend, (ay + by) / 2 + ux * bend
    # circle through a, m, b
    d = 2 * (ax * (my - by) + mx * (by - ay) + bx * (ay - my))
    if abs(d) < 1e-12:
        return (min(ax, bx, mx), min(ay, by, my), max(ax, bx, mx), max(ay, by, my))
    a2, m2, b2 = ax * ax + ay * ay, mx * mx + my * my, bx * bx + by * by
    cx = (a2 * (my - by) + m2 * (by - ay) + b2 * (ay - my)) / d
    cy = (a2 * (bx - mx) + m2 * (ax - bx) + b2 * (mx - ax)) / d
    r = math.hypot(ax - cx, ay - cy)
    xs, ys = [ax, bx], [ay, by]
    ta = math.atan2(ay - cy, ax - cx)
    tm = math.atan2(my - cy, mx - cx)
    tb = math.atan2(by - cy, bx - cx)

    def ccw_between(t0: float, t: float, t1: float) -> bool:
        # is t on the counter-clockwise sweep from t0 to t1?
        span = (t1 - t0) % (2 * math.pi)
        return (t - t0) % (2 * math.pi) <= span

    ccw = ccw_between(ta, tm, tb)
    for t, px, py in ((0.0, cx + r, cy), (math.pi / 2, cx, cy + r), (math.pi, cx - r, cy), (-math.pi / 2, cx, cy - r)):
        inside = ccw_between(ta, t, tb) if ccw else ccw_between(tb, t, ta)
        if inside:
            xs.append(px)
            ys.append(py)
    return (min(xs), min(ys), max(xs), max(ys))


def curve_box(points: Sequence[Sequence[float]]) -> Box:
    """Bounding box of the smooth curve Excalidraw draws through ``points``.

    A rounded Excalidraw line or arrow is the Catmull-Rom spline rough.js draws
    (``curve`` with tightness 0): between points ``p[i]`` and ``p[i+1]`` a cubic
    Bézier with control points ``p[i] + (p[i+1] - p[i-1]) / 6`` and
    ``p[i+1] - (p[i+2] - p[i]) / 6``, the end points repeated at both ends. The box
    holds the segment ends and the interior extrema (roots of the derivative), so it
    can be larger than the points' box where the curve overshoots a bend. This is
    the curve without rough.js' hand-drawn jitter (Excalidraw with roughness 0).

    Examples
    --------
    >>> curve_box([(0, 0), (10, 0)])
    (0.0, 0.0, 10.0, 0.0)
    >>> [round(v, 6) for v in curve_box([(0, 0), (10, 10), (10, 20)])]  # overshoots x = 10
    [0.0, 0.0, 10.740741, 20.0]
    """
    p = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(p) < 3:
        return _bbox(p[:, 0].tolist(), p[:, 1].tolist()) or (0.0, 0.0, 0.0, 0.0)
    q = np.concatenate([p[:1], p, p[-1:]])
    p0, p3 = q[1:-2], q[2:-1]
    p1 = p0 + (q[2:-1] - q[:-3]) / 6.0
    p2 = p3 - (q[3:] - q[1:-2]) / 6.0
    # B'(t) / 3 = a t^2 + b t + c per axis
    a = -p0 + 3.0 * p1 - 3.0 * p2 + p3
    b = 2.0 * (p0 - 2.0 * p1 + p2)
    c = p1 - p0
    lo = np.minimum(p0, p3).min(axis=0)
    hi = np.maximum(p0, p3).max(axis=0)
    disc = np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0))
    linear = np.abs(a) < 1e-12
    # the branch np.where does not take may divide by a tiny or zero number: its
    # infinities and NaNs are discarded below (only roots in (0, 1) count)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        roots = [np.where(linear, -c / b, (-b + disc) / (2.0 * a)),
                 np.where(linear, np.nan, (-b - disc) / (2.0 * a))]
    real = b * b - 4.0 * a * c >= 0.0
    for t in roots:
        ok = real & (t > 0.0) & (t < 1.0)
        t = np.where(ok, t, 0.0)
        u = 1.0 - t
        v = u ** 3 * p0 + 3.0 * u * u * t * p1 + 3.0 * u * t * t * p2 + t ** 3 * p3
        for k in (0, 1):
            if ok[:, k].any():
                lo[k] = min(lo[k], float(v[ok[:, k], k].min()))
                hi[k] = max(hi[k], float(v[ok[:, k], k].max()))
    return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))


def curve_boxes(curves: Sequence[Sequence[Sequence[float]]]) -> List[Box]:
    """:func:`curve_box` of each of several point lists (of finite numbers), computed together.

    The same operations per segment as :func:`curve_box`, on all segments of all curves in
    one pass of array operations; each curve's box is then reduced from its own rows. A
    curve of fewer than three points, or with coordinates beyond 1e100 (where the cubic's
    coefficients could overflow), is handed to :func:`curve_box` itself.

    Examples
    --------
    >>> curve_boxes([[(0, 0), (10, 10), (10, 20)], [(0, 0), (10, 0)]]) == [
    ...     curve_box([(0, 0), (10, 10), (10, 20)]), curve_box([(0, 0), (10, 0)])]
    True
    """
    out: List[Optional[Box]] = [None] * len(curves)
    rows: List[Any] = []
    starts: List[int] = []
    which: List[int] = []
    o = 0
    for i, pts in enumerate(curves):
        k = len(pts)
        if k < 3:
            out[i] = curve_box(pts)
            continue
        rows.append(pts[:1])
        rows.append(pts)
        rows.append(pts[-1:])
        starts.append(o)
        which.append(i)
        o += k + 2
    if which:
        q = np.asarray([xy for part in rows for xy in part], dtype=np.float64).reshape(-1, 2)
        if not np.abs(q).max() <= 1e100:
            for i in which:
                out[i] = curve_box(curves[i])
            return out  # type: ignore[return-value]
        lens = np.asarray([len(curves[i]) - 1 for i in which], dtype=np.int64)  # segments per curve
        first = np.asarray(starts, dtype=np.int64)
        seg_start = np.concatenate([[0], np.cumsum(lens)[:-1]])
        idx = np.repeat(first - seg_start, lens) + np.arange(int(lens.sum()))
        p0, p3 = q[idx + 1], q[idx + 2]
        p1 = p0 + (p3 - q[idx]) / 6.0
        p2 = p3 - (q[idx + 3] - p0) / 6.0
        a = -p0 + 3.0 * p1 - 3.0 * p2 + p3
        b = 2.0 * (p0 - 2.0 * p1 + p2)
        c = p1 - p0
        lo = np.minimum.reduceat(np.minimum(p0, p3), seg_start, axis=0)
        hi = np.maximum.reduceat(np.maximum(p0, p3), seg_start, axis=0)
        disc = np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0))
        linear = np.abs(a) < 1e-12
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            roots = [np.where(linear, -c / b, (-b + disc) / (2.0 * a)),
                     np.where(linear, np.nan, (-b - disc) / (2.0 * a))]
        real = b * b - 4.0 * a * c >= 0.0
        for t in roots:
            ok = real & (t > 0.0) & (t < 1.0)
            t = np.where(ok, t, 0.0)
            u = 1.0 - t
            v = u ** 3 * p0 + 3.0 * u * u * t * p1 + 3.0 * u * t * t * p2 + t ** 3 * p3
            vlo = np.minimum.reduceat(np.where(ok, v, np.inf), seg_start, axis=0)
            vhi = np.maximum.reduceat(np.where(ok, v, -np.inf), seg_start, axis=0)
            lo = np.where(vlo < lo, vlo, lo)  # Python's min(lo, v): lo unless v is smaller
            hi = np.where(vhi > hi, vhi, hi)
        for j, (l0, l1, h0, h1) in enumerate(np.concatenate([lo, hi], axis=1).tolist()):
            out[which[j]] = (l0, l1, h0, h1)
    return out  # type: ignore[return-value]


def _excalidraw_round(node_type: str, props: Mapping[str, Any]) -> bool:
    # Excalidraw draws a line or arrow with a roundness (or the legacy strokeSharpness "round") as a curve
    if node_type not in ("line", "arrow"):
        return False
    return bool(props.get("roundness")) or props.get("strokeSharpness") == "round"


def rotated_points_box(node_type: str, props: Mapping[str, Any], rotation: float, ox: float, oy: float) -> Optional[Box]:
    """Box of a node's point list rotated about the local origin and moved to ``(ox, oy)``.

    The box of the rotated points (of the rotated curve for a rounded Excalidraw line
    or arrow), which is tighter than the rotated box of the points; what Excalidraw
    reports for a rotated line, arrow or freedraw stroke. None when ``props`` hold no
    list of points.

    Examples
    --------
    >>> [round(v, 9) for v in rotated_points_box("line", {"points": [[0, 0], [10, 10]]}, -math.pi / 4, 0, 0)]
    [0.0, 0.0, 14.142135624, 0.0]
    """
    pts = props.get("points")
    if node_type in POINT_TYPES and not isinstance(pts, list):  # tldraw draw / highlight / line geometry
        return rotated_freehand_box(node_type, props, rotation, ox, oy)
    if node_type not in POINT_TYPES or not isinstance(pts, list):
        return None
    xy = [p for p in (_finite_xy(q) for q in pts) if p is not None]
    if not xy:
        return None
    c, s = math.cos(rotation), math.sin(rotation)
    moved = [(ox + c * x - s * y, oy + s * x + c * y) for x, y in xy]
    if len(moved) > 2 and _excalidraw_round(node_type, props):
        return curve_box(moved)
    return _bbox([p[0] for p in moved], [p[1] for p in moved])


def _is_point_terminal(p: Any) -> bool:
    # a terminal held as a point (a mapping whose type is "point" or absent), not an in-props binding
    return (type(p) is dict or is_mapping(p)) and p.get("type", "point") == "point"


def arrow_terminals(props: Mapping[str, Any]) -> Tuple[Optional[Tuple[float, float]], Optional[Tuple[float, float]], float]:
    """Local start and end points of a tldraw arrow (``None`` for an in-props bound terminal) and its bend."""
    start = props.get("start")
    end = props.get("end")
    s = _finite_xy(start) if _is_point_terminal(start) else None
    e = _finite_xy(end) if _is_point_terminal(end) else None
    try:
        bend = float(props.get("bend", 0) or 0)
    except (TypeError, ValueError, OverflowError):
        bend = 0.0
    if not math.isfinite(bend):
        bend = 0.0
    return s, e, bend


def _points_of_mapping(m: Mapping[str, Any]) -> List[Tuple[float, float]]:
    out = []
    for v in m.values():
        p = _finite_xy(v)
        if p is not None:
            out.append(p)
    return out


def _scale(props: Mapping[str, Any]) -> float:
    scale = props.get("scale", 1) or 1
    try:
        return float(scale)
    except (TypeError, ValueError):
        return 1.0


def _points_extent(segments: List[Any]) -> Optional[Box]:
    """Extent of the finite points of freehand segments given as ``{"x", "y"}`` lists.

    The plain-Python twin of the numpy reading in :func:`local_box` for the common
    case; None whenever a segment needs that reading (an encoded path, a point that
    is not a dict of two plain numbers, a negative zero whose min/max tie-break
    numpy may decide differently). ``x0 > x1`` when no point is finite.
    """
    inf = math.inf
    x0 = y0 = inf
    x1 = y1 = -inf
    isfinite = math.isfinite
    for seg in segments:
        if type(seg) is not dict:
            if is_mapping(seg):
                return None
            continue
        if isinstance(seg.get("path"), str):
            return None
        pts = seg.get("points")
        if not isinstance(pts, list):
            continue
        for q in pts:
            if type(q) is not dict:
                return None
            # checked by exact type below (faster than isinstance on this hot path)
            x: Any = q.get("x")
            y: Any = q.get("y")
            tx, ty = type(x), type(y)
            if tx is int and -(2 ** 53) <= x <= 2 ** 53:
                x = float(x)
            elif tx is not float:
                return None
            if ty is int and -(2 ** 53) <= y <= 2 ** 53:
                y = float(y)
            elif ty is not float:
                return None
            if not (isfinite(x) and isfinite(y)):
                continue
            if (x == 0.0 and math.copysign(1.0, x) < 0) or (y == 0.0 and math.copysign(1.0, y) < 0):
                return None
            if x < x0:
                x0 = x
            if x > x1:
                x1 = x
            if y < y0:
                y0 = y
            if y > y1:
                y1 = y
    return (x0, y0, x1, y1)


def local_box(node_type: str, props: Mapping[str, Any], w: float = 0.0, h: float = 0.0) -> Box:
    """Local bounding box of a node's geometry.

    Parameters
    ----------
    node_type : str
    props : mapping
        The node's props.
    w, h : float
        Fallback size when the props hold no usable points.

    Returns
    -------
    (x0, y0, x1, y1)

    Examples
    --------
    >>> local_box("line", {"points": [[0, 0], [10, -5]]})
    (0.0, -5.0, 10.0, 0.0)
    >>> local_box("geo", {}, 3, 4)
    (0.0, 0.0, 3.0, 4.0)
    """
    if node_type in POINT_TYPES:
        # tldraw draw / highlight / line geometry (an arrow has none)
        fbox = freehand_box(node_type, props) if node_type != "arrow" else None
        if fbox is not None:
            return fbox
        pts = props.get("points")
        if isinstance(pts, list) and pts:
            xy = [p for p in (_finite_xy(q) for q in pts) if p is not None]
            box = _bbox([p[0] for p in xy], [p[1] for p in xy])
            if box is not None:
                return curve_box(xy) if len(xy) > 2 and _excalidraw_round(node_type, props) else box
        if node_type == "arrow" and ("start" in props or "end" in props):
            s, e, bend = arrow_terminals(props)
            if s is None and e is None:
                return (0.0, 0.0, 0.0, 0.0)
            s = s or e
            e = e or s
            return arc_box(s, e, bend)  # type: ignore[arg-type]
        if is_mapping(pts) and pts:
            xy = _points_of_mapping(pts)
            if xy:
                return _bbox(*zip(*xy))  # type: ignore[return-value]
        handles = props.get("handles")
        if is_mapping(handles) and handles:
            xy = _points_of_mapping(handles)
            if xy:
                return _bbox([p[0] for p in xy], [p[1] for p in xy])  # type: ignore[return-value]
        segments = props.get("segments")
        if isinstance(segments, list) and segments:
            ext = _points_extent(segments)
            if ext is not None:
                if ext[0] > ext[2]:  # no finite point
                    return (0.0, 0.0, float(w), float(h))
                scale = _scale(props)
                return (ext[0] * scale, ext[1] * scale, ext[2] * scale, ext[3] * scale)
            arrays = []
            for seg in segments:
                if not is_mapping(seg):
                    continue
                if isinstance(seg.get("path"), str):
                    arrays.append(decode_b64_points(seg["path"])[:, :2])
                elif isinstance(seg.get("points"), list):
                    try:
                        a = np.array([(q["x"], q["y"]) for q in seg["points"]], dtype=np.float64).reshape(-1, 2)
                        a = a[np.isfinite(a).all(axis=1)]
                    except (KeyError, TypeError, ValueError):
                        xy = [p for p in (_finite_xy(q) for q in seg["points"]) if p is not None]
                        a = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
                    if len(a):
                        arrays.append(a)
            if arrays:
                allp = np.concatenate(arrays)
                if len(allp):
                    scale = _scale(props)
                    lo = allp.min(axis=0) * scale
                    hi = allp.max(axis=0) * scale
                    return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))
    return (0.0, 0.0, float(w), float(h))


def _char_width(ch: str) -> float:
    """Rough advance of one character in em units (wide East Asian characters are 1 em)."""
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 1.0
    if ch == " ":
        return 0.3
    return 0.55


class _Widths(dict):
    """Character → :func:`_char_width`, filled on first use of each character."""

    def __missing__(self, ch: str) -> float:
        w = self[ch] = _char_width(ch)
        return w


_WIDTHS = _Widths()


def _line_width(line: str) -> float:
    # the same terms summed in the same order as a per-character loop, so the same float
    return sum(map(_WIDTHS.__getitem__, line))


def estimate_text_size(
    text: str,
    size: str = "m",
    scale: float = 1.0,
    width: Optional[float] = None,
    auto_size: bool = True,
) -> Tuple[float, float]:
    """Estimate the page size of a tldraw text shape.

    Height is ``lines × font size × 1.35 × scale`` (tldraw's line height), where
    lines are the hard lines plus, when the width is fixed (``auto_size`` false),
    soft wraps estimated from an average glyph width. Width comes from the stored
    ``width``: files store it either before or after ``scale`` depending on the
    tldraw version, so the reading closer to a glyph-count estimate is taken, and
    the estimate itself replaces a stored width that is off by more than 2×
    (a width set by a script and never measured). Real fonts differ; tests allow a
    tolerance for text shapes.

    Examples
    --------
    >>> w, h = estimate_text_size("one\\ntwo", "m", 1.0, 40.0)
    >>> w, round(h, 6)
    (40.0, 64.8)
    """
    fs = FONT_SIZES.get(size, 24.0)
    hard = (text or "").split("\n")
    em = [_line_width(line) for line in hard]
    est_w = max(em) * fs * scale
    lines = len(hard)
    if width is not None and not auto_size and width > 0:
        lines = 0
        for line_em in em:
            lw = line_em * fs
            lines += max(1, math.ceil(lw / width - 1e-9))
    h = lines * fs * LINE_HEIGHT * scale
    if width is None or not width > 0:
        return (float(est_w), h)
    if not auto_size:
        return (float(width) * scale, h)
    a, b = float(width) * scale, float(width)
    w = a if abs(a - est_w) <= abs(b - est_w) else b
    if est_w > 0 and not (0.5 * est_w <= w <= 2.0 * est_w + fs):
        w = est_w
    return (w, h)


def arc_centre(x1: float, y1: float, rx: float, ry: float, large: bool, sweep: bool, x2: float,
               y2: float) -> Tuple[float, float, float, float, float, float]:
    """Centre form of an SVG elliptical arc without axis rotation, as tldraw's ``arcTo`` computes it.

    Parameters
    ----------
    x1, y1 : float
        The arc's start; it must differ from its end.
    rx, ry : float
        Radii, non-zero; too small radii are scaled up to reach the end (the SVG rule).
    large, sweep : bool
        The SVG large-arc and sweep flags.
    x2, y2 : float
        The arc's end.

    Returns
    -------
    tuple of float
        ``(cx, cy, rx, ry, start angle, swept angle)``: the centre, the radii used, and the angles
        in radians (the swept one negative when the arc runs clockwise in y-down coordinates).

    Examples
    --------
    >>> [round(v, 6) for v in arc_centre(0.0, 0.0, 10.0, 10.0, False, True, 20.0, 0.0)]
    [10.0, 0.0, 10.0, 10.0, 3.141593, 3.141593]
    """
    rx1, ry1 = abs(rx), abs(ry)
    x1p, y1p = (x1 - x2) / 2, (y1 - y2) / 2
    lam = (x1p * x1p) / (rx1 * rx1) + (y1p * y1p) / (ry1 * ry1)
    if lam > 1:
        sl = math.sqrt(lam)
        rx1 *= sl
        ry1 *= sl
    sign = 1 if large != sweep else -1
    term = rx1 * rx1 * ry1 * ry1 - rx1 * rx1 * y1p * y1p - ry1 * ry1 * x1p * x1p
    num = rx1 * rx1 * y1p * y1p + ry1 * ry1 * x1p * x1p
    rad = term / num if num != 0 else (math.inf if term > 0 else (math.nan if term == 0 else -math.inf))
    coef = sign * math.sqrt(0.0 if rad < 0 else rad)
    cxp = coef * ((rx1 * y1p) / ry1)
    cyp = coef * (-(ry1 * x1p) / rx1)
    a0 = math.atan2((y1p - cyp) / ry1, (x1p - cxp) / rx1)
    a1 = math.atan2((-y1p - cyp) / ry1, (-x1p - cxp) / rx1)
    if not sweep and a1 > a0:
        a1 -= 2 * math.pi
    elif sweep and a1 < a0:
        a1 += 2 * math.pi
    return cxp + (x1 + x2) / 2, cyp + (y1 + y2) / 2, rx1, ry1, a0, a1 - a0
