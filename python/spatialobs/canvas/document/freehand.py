"""Freehand strokes and lines bounded the way tldraw 5.4.2 bounds them.

tldraw does not bound a ``draw`` shape by its raw points: it rebuilds the stroke
from its segments and smooths it, and its geometry is the smoothed polyline (a
polygon when the stroke is closed, a circle for a dot). A ``highlight`` is the
filled outline of a smoothed stroke of a wide pen, and a ``line`` is a polyline
or a cubic spline through its points. This module reproduces those geometries
closely enough for their bounding boxes:

* :func:`segment_points` reads ``props["segments"]`` in every stored form (the
  base64 ``path`` of current files, 2-D and 3-D; the ``points`` lists of older
  files, quantized the way tldraw's migration encodes them; the legacy absolute
  float16 strings) and expands ``straight`` segments into tldraw's eased run of
  points;
* :func:`stroke_points` is tldraw's ``getStrokePoints``: points too close to the
  ends dropped, then a streamline filter (each point moves a fixed fraction of
  the way from the previous smoothed point to its input point);
* :func:`stroke_outline` is ``getStroke``: the two offset tracks and the round
  caps of a stroke of constant radius, as the highlighter uses it;
* :func:`freehand_box` gives the local box of a ``draw``, ``highlight`` or
  ``line`` node, or None when its props do not hold that geometry;
  :func:`freehand_vertices` the vertices it is the box of, and
  :func:`rotated_freehand_box` the page box of the shape rotated (tldraw bounds a
  rotated shape by its rotated vertices, not by its rotated box).

Boxes are ``(x0, y0, x1, y1)`` in the shape's local frame, before rotation. The
draw path is the hot one (files hold hundreds of strokes of hundreds of points).
The smoothing is compiled (``_cfreehand``: a draw stroke's box straight from its
point dicts, the box, the smoothed points and the outline of stored points); the
Python functions here are its twins, the same double operations in the same
order, used when :data:`DRAW_KERNEL` (boxes) or :data:`STROKE_KERNEL` (points and
outlines) is False or the compiled module is absent.
"""

from __future__ import annotations

import base64
import binascii
import math
import operator
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from spatialobs.canvas.document.sanitize import is_mapping

__all__ = [
    "DRAW_STROKE_WIDTHS",
    "HIGHLIGHT_STROKE_WIDTHS",
    "decode_path",
    "segment_points",
    "stroke_points",
    "stroke_outline",
    "freehand_box",
    "freehand_vertices",
    "rotated_freehand_box",
]

Box = Tuple[float, float, float, float]

#: Stroke width of a draw shape per size style (theme stroke width 2 × tldraw's size factors).
DRAW_STROKE_WIDTHS = {"s": 2.0, "m": 3.5, "l": 5.0, "xl": 10.0}
#: Stroke width of a highlight per size style (theme font size 16 × font size factor × 1.12).
HIGHLIGHT_STROKE_WIDTHS = {"s": 16 * 1.125 * 1.12, "m": 16 * 1.5 * 1.12, "l": 16 * 2.25 * 1.12, "xl": 16 * 2.75 * 1.12}

# the largest step a float16 holds without overflowing to infinity
_F16_MAX = 65504.0
_GET_X = operator.itemgetter("x")
_GET_Y = operator.itemgetter("y")
# tldraw skips a streamlined point closer than this (per axis) to the previous one
_SAME_POINT = 0.0001

_DrawExtent = Callable[[List[Any], float, float, bool], Optional[Tuple[float, ...]]]
_draw_extent: Optional[_DrawExtent]
_path_extent: Optional[Callable[..., Optional[Tuple[float, ...]]]]
_cstroke_extent: Optional[Callable[..., Tuple[float, float, float, float, int]]]
_cstroke_points: Optional[Callable[..., np.ndarray]]
_cstroke_outline: Optional[Callable[..., np.ndarray]]
try:  # the compiled smoothing (_cfreehand.pyx); its twins are the Python functions below
    from spatialobs.canvas.document._cfreehand import draw_extent as _draw_extent
    from spatialobs.canvas.document._cfreehand import path_extent as _path_extent
    from spatialobs.canvas.document._cfreehand import stroke_extent as _cstroke_extent
    from spatialobs.canvas.document._cfreehand import stroke_outline as _cstroke_outline
    from spatialobs.canvas.document._cfreehand import stroke_points as _cstroke_points
except ImportError:  # pragma: no cover - a source tree without the compiled module
    _draw_extent = _path_extent = _cstroke_extent = _cstroke_points = _cstroke_outline = None
#: Whether a draw shape's box is the compiled stroke box when it is built (False: the Python
#: twin, :func:`_fast_listed` / :func:`segment_points` and :func:`_stroke_extent`).
DRAW_KERNEL = True
#: Whether :func:`stroke_points`, :func:`stroke_outline` and a draw shape's vertices are compiled
#: when they are built (False: the Python twins :func:`_streamline` and :func:`_outline`).
STROKE_KERNEL = True
# the outline builder's constants (getStrokeOutlinePoints.ts)
_FIXED_PI = math.pi + 0.0001
_TRACK_TOLERANCE_RATIO = 0.05
_SIMPLIFY_WINDOW = 8
_MIN_ROUNDED_CORNER_STEPS = 8
_MAX_ROUNDED_CORNER_STEPS = 13
_MIN_CAP_STEPS = 8
_MAX_CAP_STEPS = 29
_HARD_CORNER_DPR = -0.62


# --------------------------------------------------------------------------- segments


def _b64_bytes(text: str) -> bytes:
    text = text.strip()
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return b""


def decode_path(path: str, dim: Optional[int] = None) -> np.ndarray:
    """Decode a segment's base64 ``path`` to an ``(n, 2)`` array of x, y, as tldraw does.

    A 3-D path (the default) starts with three little-endian float32 values
    (x, y, pressure) followed by three float16 deltas per point; a 2-D path
    (``dim == 2``) has two float32 values and two float16 deltas per point.
    Positions accumulate in float64 from the first point, so rounding of the
    deltas carries along the stroke exactly as in tldraw. Malformed text gives
    an empty array.

    Examples
    --------
    >>> import base64, numpy as np
    >>> raw = np.array([1, 2], "<f4").tobytes() + np.array([0.5, -1], "<f2").tobytes()
    >>> decode_path(base64.b64encode(raw).decode(), dim=2).tolist()
    [[1.0, 2.0], [1.5, 1.0]]
    """
    raw = _b64_bytes(path)
    k = 2 if dim == 2 else 3
    if len(raw) < 4 * k:
        return np.zeros((0, 2))
    first = np.frombuffer(raw[: 4 * k], dtype="<f4")[:2]
    m = (len(raw) - 4 * k) // (2 * k)
    deltas = np.frombuffer(raw[4 * k: 4 * k + 2 * k * m], dtype="<f2").reshape(m, k)[:, :2]
    if np.isfinite(first).all() and np.isfinite(deltas).all():
        return _accumulate(first, deltas)
    # bytes that are no numbers: tldraw gets NaN too (a signalling NaN warns when widened)
    with np.errstate(invalid="ignore", over="ignore"):
        return _accumulate(first, deltas)


def _accumulate(first: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    steps = np.empty((len(deltas) + 1, 2))
    steps[0] = first
    steps[1:] = deltas
    return np.cumsum(steps, axis=0)


def _legacy_points(text: str) -> np.ndarray:
    # tldraw's first base64 form: absolute float16 (x, y, z) per point
    raw = _b64_bytes(text)
    m = len(raw) // 6
    v = np.frombuffer(raw[: 6 * m], dtype="<f2").reshape(m, 3)[:, :2]
    with np.errstate(invalid="ignore"):  # a signalling NaN warns when widened
        return v.astype(np.float64)


def _number(v: Any) -> Optional[float]:
    if type(v) is float:
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        return float(v)
    except OverflowError:  # an integer beyond a double: JSON.parse gives tldraw an infinity
        return math.inf if v > 0 else -math.inf


def _listed_points(points: List[Any]) -> np.ndarray:
    """``[{"x", "y"}, ...]`` as tldraw's migration stores them: float32 first point, float16 steps."""
    try:
        xy = np.array([(q["x"], q["y"]) for q in points], dtype=np.float64).reshape(-1, 2)
    except (KeyError, TypeError, ValueError, IndexError, OverflowError):
        rows = []
        for q in points:
            if is_mapping(q):
                x, y = _number(q.get("x")), _number(q.get("y"))
            elif isinstance(q, (list, tuple)) and len(q) >= 2:
                x, y = _number(q[0]), _number(q[1])
            else:
                continue
            if x is not None and y is not None:
                rows.append((x, y))
        xy = np.asarray(rows, dtype=np.float64).reshape(-1, 2)
    xy = xy[np.isfinite(xy).all(axis=1)]
    if len(xy) < 1:
        return xy
    steps = np.empty_like(xy)
    with np.errstate(over="ignore", invalid="ignore"):  # out of float16 range: tldraw's infinities
        steps[0] = xy[0].astype(np.float32)
        steps[1:] = np.diff(xy, axis=0).astype(np.float16)
        out = np.cumsum(steps, axis=0)
    return out if np.isfinite(out).all() else xy


def _raw_segment_points(seg: Mapping[str, Any]) -> np.ndarray:
    path = seg.get("path")
    if isinstance(path, str):
        return decode_path(path, seg.get("dim"))
    pts = seg.get("points")
    if isinstance(pts, list):
        return _listed_points(pts)
    if isinstance(pts, str):
        return _legacy_points(pts)
    return np.zeros((0, 2))


def _ease_in_out_cubic(t: np.ndarray) -> np.ndarray:
    return np.where(t < 0.5, 4 * t * t * t, (t - 1) * (2 * t - 2) * (2 * t - 2) + 1)


def _straight(a: np.ndarray, d: np.ndarray) -> np.ndarray:
    """A straight segment's points: both ends, and between them an eased run inset by up to one unit."""
    dist = math.hypot(d[0] - a[0], d[1] - a[1])
    if dist == 0:
        return a[None, :]
    uni = (d - a) / dist
    nudge = min(1, math.floor(dist / 4))
    b = a + uni * nudge
    c = d - uni * nudge
    count = max(4, math.floor(dist / 16))
    t = _ease_in_out_cubic(np.arange(count) / (count - 1))
    out = np.empty((count + 2, 2))
    out[0] = a
    out[1:-1, 0] = b[0] + (c[0] - b[0]) * t
    out[1:-1, 1] = b[1] + (c[1] - b[1]) * t
    out[-1] = d
    return out


def _fast_listed(points: List[Any]) -> Optional[np.ndarray]:
    """:func:`_listed_points` as a ``(2, n)`` array, for point dicts of finite numbers only (else None)."""
    try:
        a = np.array((list(map(_GET_X, points)), list(map(_GET_Y, points))), dtype=np.float64)
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    if not np.abs(a).max() < _F16_MAX / 2:  # then no step overflows a float16 (also false for NaN)
        return None
    q = np.empty_like(a)
    q[:, 1:] = (a[:, 1:] - a[:, :-1]).astype(np.float16)
    q[:, 0] = a[:, 0].astype(np.float32)
    q.cumsum(axis=1, out=q)
    return q


def _segment_rows(segments: Sequence[Any], scale_x: float, scale_y: float) -> np.ndarray:
    """:func:`segment_points` as a ``(2, n)`` array, quick for one free segment of point dicts."""
    if len(segments) == 1 and scale_x == 1 and scale_y == 1:
        seg = segments[0]
        if type(seg) is dict and seg.get("type") == "free" and "path" not in seg:
            pts = seg.get("points")
            if type(pts) is list and pts:
                got = _fast_listed(pts)
                if got is not None:
                    return got
    return np.ascontiguousarray(segment_points(segments, scale_x, scale_y).T)


def _segment_lists(segments: Sequence[Any], scale_x: float, scale_y: float) -> Tuple[List[float], List[float]]:
    """:func:`segment_points` as two lists of floats."""
    xs, ys = _segment_rows(segments, scale_x, scale_y).tolist()
    return xs, ys


def segment_points(segments: Sequence[Any], scale_x: float = 1.0, scale_y: float = 1.0) -> np.ndarray:
    """The input points of a freehand shape's segments, as an ``(n, 2)`` array.

    ``free`` segments contribute their points; a ``straight`` segment of two or
    more points is its first two points with an eased run of at least four points
    between them (tldraw's ``getPointsFromDrawSegment``). ``scale_x`` and
    ``scale_y`` (the shape's ``scaleX`` / ``scaleY`` props, set by a lazy resize
    or a flip) multiply the stored points first.

    Examples
    --------
    >>> segment_points([{"type": "free", "points": [{"x": 0, "y": 0}, {"x": 4, "y": 2}]}], 2, 1).tolist()
    [[0.0, 0.0], [8.0, 2.0]]
    >>> len(segment_points([{"type": "straight", "points": [{"x": 0, "y": 0}, {"x": 100, "y": 0}]}]))
    8
    """
    parts = []
    for seg in segments:
        if not is_mapping(seg):
            continue
        p = _raw_segment_points(seg)
        with np.errstate(over="ignore", invalid="ignore"):  # huge numbers end as non-finite boxes
            if scale_x != 1 or scale_y != 1:
                p = p * (scale_x, scale_y)
            if seg.get("type") != "free" and len(p) >= 2:
                p = _straight(p[0], p[1])
        if len(p):
            parts.append(p)
    if not parts:
        return np.zeros((0, 2))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


# --------------------------------------------------------------------------- stroke points


class _Stroke:
    """Streamlined points with the stage index and running length of each (plain lists)."""

    __slots__ = ("x", "y", "index", "run", "stage_x", "stage_y")

    def __init__(self, stage_x: List[float], stage_y: List[float]) -> None:
        self.stage_x = stage_x
        self.stage_y = stage_y
        self.x = stage_x[:1]
        self.y = stage_y[:1]
        self.index = [0]
        self.run = [0.0]


def _trim(xs: List[float], ys: List[float], size: float, streamline: float) -> Tuple[List[float], List[float]]:
    """The staged input of ``getStrokePoints``: points near either end dropped, the last repeated."""
    n = len(xs)
    min_d2 = (size / 3) * (size / 3)
    x0, y0 = xs[0], ys[0]
    start = 1
    while start < n:
        dx, dy = xs[start] - x0, ys[start] - y0
        if dx * dx + dy * dy > min_d2:
            break
        start += 1
    if start > 1:
        xs = xs[:1] + xs[start:]
        ys = ys[:1] + ys[start:]
    m = len(xs)
    if m > 1:
        lx, ly = xs[-1], ys[-1]
        j = m - 2
        while j >= 0:
            dx, dy = xs[j] - lx, ys[j] - ly
            if dx * dx + dy * dy > min_d2:
                break
            j -= 1
        if j < m - 2:  # the last point takes the place of the first one dropped
            xs = xs[: j + 1] + xs[-1:]
            ys = ys[: j + 1] + ys[-1:]
    if streamline > 0:
        xs = xs + xs[-1:]
        ys = ys + ys[-1:]
    return xs, ys


def _streamline(xs: List[float], ys: List[float], size: float, streamline: float, last: bool) -> _Stroke:
    """tldraw's ``ingest`` without simulated pressure, on plain floats."""
    sx, sy = _trim(xs, ys, size, streamline)
    out = _Stroke(sx, sy)
    px, py, idx, runs = out.x, out.y, out.index, out.run
    u = 1 - (0.15 + (1 - streamline) * 0.85)
    m = len(sx)
    prev_x, prev_y = sx[0], sy[0]
    total = 0.0
    for i in range(1, m):
        a, b = sx[i], sy[i]
        if last and i == m - 1:
            x, y = a, b
        else:
            x = a + (prev_x - a) * u
            y = b + (prev_y - b) * u
        if abs(prev_x - x) < _SAME_POINT and abs(prev_y - y) < _SAME_POINT:
            continue
        total += ((y - prev_y) * (y - prev_y) + (x - prev_x) * (x - prev_x)) ** 0.5
        if i < 4 and total < size:
            continue  # the start waits until the stroke is a stroke width long (noise)
        px.append(x)
        py.append(y)
        idx.append(i)
        runs.append(total)
        prev_x, prev_y = x, y
    return out


def _stroke_extent(xs: List[float], ys: List[float], size: float, streamline: float, last: bool
                   ) -> Tuple[float, float, float, float, int]:
    """The box and number of :func:`_streamline`'s points, without keeping them (the compiled box's twin)."""
    sx, sy = _trim(xs, ys, size, streamline)
    u = 1 - (0.15 + (1 - streamline) * 0.85)
    m = len(sx)
    px, py = sx[0], sy[0]
    x0 = x1 = px
    y0 = y1 = py
    count = 1
    total = 0.0
    e = _SAME_POINT
    for i in range(1, min(4, m)):  # the head, where the noise rule applies
        a, b = sx[i], sy[i]
        if last and i == m - 1:
            x, y = a, b
        else:
            x = a + (px - a) * u
            y = b + (py - b) * u
        if abs(px - x) < e and abs(py - y) < e:
            continue
        total += ((y - py) * (y - py) + (x - px) * (x - px)) ** 0.5
        if total < size:
            continue
        x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
        px, py = x, y
        count += 1
    if m <= 4:
        return x0, y0, x1, y1, count
    end = m - 1 if last else m
    for a, b in zip(sx[4:end], sy[4:end]):
        x = a + (px - a) * u
        y = b + (py - b) * u
        dx, dy = x - px, y - py
        if -e < dx < e and -e < dy < e:
            continue
        if x < x0:
            x0 = x
        elif x > x1:
            x1 = x
        if y < y0:
            y0 = y
        elif y > y1:
            y1 = y
        px, py = x, y
        count += 1
    if last:
        x, y = sx[-1], sy[-1]
        if not (abs(px - x) < e and abs(py - y) < e):
            x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
            count += 1
    return x0, y0, x1, y1, count


def stroke_points(points: Any, size: float, streamline: float = 0.5, last: bool = False) -> np.ndarray:
    """tldraw's ``getStrokePoints`` for a stroke without simulated pressure: the smoothed points.

    Input points within ``size / 3`` of the first point are dropped, and so are
    those within ``size / 3`` of the last (which takes the place of the last one
    dropped); the last point is then repeated. Each following point moves from
    the previous smoothed point towards its input point by ``t = 0.15 + 0.85 ·
    (1 - streamline)``; a point closer than 0.0001 (on both axes) to the previous
    one is skipped, and so is any of the first three while the stroke is shorter
    than ``size``. With ``last`` the final point is the input point itself.

    Parameters
    ----------
    points : array_like, shape (n, 2)
    size : float
        The stroke's size (its width in tldraw's freehand options).
    streamline : float
        tldraw's streamline option, 0–1.
    last : bool
        Whether the stroke is complete.

    Returns
    -------
    ndarray, shape (k, 2)

    Examples
    --------
    >>> stroke_points([(0, 0), (10, 0), (20, 0)], size=4, streamline=0.5, last=True).tolist()
    [[0.0, 0.0], [5.75, 0.0], [13.94375, 0.0], [20.0, 0.0]]
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(pts) == 0:
        return np.zeros((0, 2))
    if _cstroke_points is not None and STROKE_KERNEL:
        return _cstroke_points(np.ascontiguousarray(pts[:, 0]), np.ascontiguousarray(pts[:, 1]),
                               float(size), float(streamline), bool(last))
    s = _streamline(pts[:, 0].tolist(), pts[:, 1].tolist(), float(size), float(streamline), bool(last))
    return np.column_stack([s.x, s.y])


# --------------------------------------------------------------------------- outline


def _simplify(xs: List[float], ys: List[float], tol: float) -> Tuple[List[float], List[float]]:
    """Drop track points within ``tol`` of the chord between kept neighbours (windowed)."""
    n = len(xs)
    if n <= 2 or tol <= 0:
        return xs, ys
    tol2 = tol * tol
    ox, oy = [xs[0]], [ys[0]]
    anchor = 0
    last = n - 1
    while anchor < last:
        best = anchor + 1
        ax, ay = xs[anchor], ys[anchor]
        for j in range(anchor + 2, min(anchor + _SIMPLIFY_WINDOW, last) + 1):
            acx, acy = xs[j] - ax, ys[j] - ay
            l2 = acx * acx + acy * acy
            ok = True
            for k in range(anchor + 1, j):
                t = 0.0 if l2 == 0 else ((xs[k] - ax) * acx + (ys[k] - ay) * acy) / l2
                t = 0.0 if t < 0 else 1.0 if t > 1 else t
                ex, ey = xs[k] - (ax + acx * t), ys[k] - (ay + acy * t)
                if ex * ex + ey * ey > tol2:
                    ok = False
                    break
            if not ok:
                break
            best = j
        ox.append(xs[best])
        oy.append(ys[best])
        anchor = best
    return ox, oy


def _unit(dx: float, dy: float) -> Tuple[float, float]:
    length = (dx * dx + dy * dy) ** 0.5
    return (dx, dy) if length == 0 else (dx / length, dy / length)


def _tracks(sx: List[float], sy: List[float], ix: List[float], iy: List[float], rad: List[float],
            runs: List[float], size: float, smoothing: float) -> Tuple[List[float], List[float], List[float], List[float]]:
    """The left and right outline tracks of a stroke (``buildTracks``), simplified."""
    n = len(sx)
    lx: List[float] = []
    ly: List[float] = []
    rx: List[float] = []
    ry: List[float] = []
    total = runs[-1]
    min_distance = (size * smoothing) * (size * smoothing)
    cur = (1.0, 1.0) if n < 2 else _unit(sx[0] - sx[1], sy[0] - sy[1])
    prev_vec = cur
    plx = prx = sx[0]
    ply = pry = sy[0]
    tlx, tly, trx, try_ = plx, ply, prx, pry
    prev_sharp = False
    for i in range(n):
        x, y, radius = sx[i], sy[i], rad[i]
        vec = cur
        nxt = vec if i == n - 1 else _unit(x - sx[i + 1], y - sy[i + 1])
        cur = nxt
        prev_dpr = vec[0] * prev_vec[0] + vec[1] * prev_vec[1]
        next_dpr = nxt[0] * vec[0] + nxt[1] * vec[1] if i < n - 1 else 1.0
        sharp = prev_dpr < 0 and not prev_sharp
        next_sharp = next_dpr < 0.2
        if sharp or next_sharp:
            if next_dpr > _HARD_CORNER_DPR and total - runs[i] > radius:
                ox, oy = prev_vec[0] * radius, prev_vec[1] * radius
                cpr = prev_vec[0] * nxt[1] - prev_vec[1] * nxt[0]
                if cpr < 0:
                    tlx, tly, trx, try_ = x + ox, y + oy, x - ox, y - oy
                else:
                    tlx, tly, trx, try_ = x - ox, y - oy, x + ox, y + oy
                lx.append(tlx)
                ly.append(tly)
                rx.append(trx)
                ry.append(try_)
            else:
                # a hard corner: half a turn around the input point on each side
                cx, cy = ix[i], iy[i]
                dx, dy = -prev_vec[1] * radius, prev_vec[0] * radius
                step = 1 / _MAX_ROUNDED_CORNER_STEPS
                t = 0.0
                while t < 1:
                    a = _FIXED_PI * t
                    s, c = math.sin(a), math.cos(a)
                    tlx, tly = cx + (dx * c - dy * s), cy + (dx * s + dy * c)
                    lx.append(tlx)
                    ly.append(tly)
                    a = _FIXED_PI + _FIXED_PI * -t
                    s, c = math.sin(a), math.cos(a)
                    trx, try_ = cx + (dx * c - dy * s), cy + (dx * s + dy * c)
                    rx.append(trx)
                    ry.append(try_)
                    t += step
            plx, ply, prx, pry = tlx, tly, trx, try_
            if next_sharp:
                prev_sharp = True
            continue
        prev_sharp = False
        if i == 0 or i == n - 1:
            ox, oy = vec[1] * radius, -vec[0] * radius
            lx.append(x - ox)
            ly.append(y - oy)
            rx.append(x + ox)
            ry.append(y + oy)
            continue
        lerp_x = nxt[0] + (vec[0] - nxt[0]) * next_dpr
        lerp_y = nxt[1] + (vec[1] - nxt[1]) * next_dpr
        ox, oy = lerp_y * radius, -lerp_x * radius
        tlx, tly = x - ox, y - oy
        if i <= 1 or (plx - tlx) * (plx - tlx) + (ply - tly) * (ply - tly) > min_distance:
            lx.append(tlx)
            ly.append(tly)
            plx, ply = tlx, tly
        trx, try_ = x + ox, y + oy
        if i <= 1 or (prx - trx) * (prx - trx) + (pry - try_) * (pry - try_) > min_distance:
            rx.append(trx)
            ry.append(try_)
            prx, pry = trx, try_
        prev_vec = vec
    tol = size * _TRACK_TOLERANCE_RATIO
    lx, ly = _simplify(lx, ly, tol)
    rx, ry = _simplify(rx, ry, tol)
    return lx, ly, rx, ry


def _arc_steps(radius: float, sweep: float, tol: float, lo: int, hi: int) -> int:
    if radius <= tol:
        return lo
    steps = math.ceil(sweep / (2 * math.acos(1 - tol / radius)))
    return lo if steps < lo else hi if steps > hi else steps


def _rot(ax: float, ay: float, cx: float, cy: float, r: float) -> Tuple[float, float]:
    x, y = ax - cx, ay - cy
    s, c = math.sin(r), math.cos(r)
    return (cx + (x * c - y * s), cy + (x * s + y * c))


def stroke_outline(points: Any, size: float, streamline: float = 0.5, smoothing: float = 0.5,
                   last: bool = False) -> np.ndarray:
    """tldraw's ``getStroke`` for a round-capped stroke of constant width: the outline polygon.

    The stroke points (:func:`stroke_points`) are offset by the radius to both
    sides (thinning 0: radius ``size / 2``, or ``size · sin(π/4)`` for a stroke
    shorter than ``size``), with tldraw's handling of sharp corners, its
    ``smoothing`` spacing and track simplification, a half-turn start cap and a
    turn-and-a-half end cap; a single point becomes a polygonal dot.

    Examples
    --------
    >>> o = stroke_outline([(0, 0), (50, 0), (100, 0)], size=10, last=True)
    >>> [round(float(v), 1) for v in (o[:, 0].min(), o[:, 1].min(), o[:, 0].max(), o[:, 1].max())]
    [-5.0, -5.0, 105.0, 5.0]
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(pts) == 0 or size <= 0:
        return np.zeros((0, 2))
    if _cstroke_outline is not None and STROKE_KERNEL and math.isfinite(size):
        return _cstroke_outline(np.ascontiguousarray(pts[:, 0]), np.ascontiguousarray(pts[:, 1]), float(size),
                                float(streamline), float(smoothing), bool(last))
    return _outline(pts, size, streamline, smoothing, last)


def _outline(pts: np.ndarray, size: float, streamline: float, smoothing: float, last: bool) -> np.ndarray:
    """:func:`stroke_outline` in Python (the twin of the compiled outline) for an ``(n, 2)`` array, n > 0."""
    st = _streamline(pts[:, 0].tolist(), pts[:, 1].tolist(), float(size), float(streamline), bool(last))
    sx, sy, runs = st.x, st.y, st.run
    n = len(sx)
    ix = [st.stage_x[i] for i in st.index]
    iy = [st.stage_y[i] for i in st.index]
    total = runs[-1]
    r0 = size * math.sin(0.5 * math.pi / 2) if total < size else size / 2
    rad = [r0] * n
    lx, ly, rx, ry = _tracks(sx, sy, ix, iy, rad, runs, size, smoothing)
    tol = max(0.05, size * 0.02)
    fx, fy = sx[0], sy[0]
    out: List[Tuple[float, float]] = []
    if n == 1:
        # per(uni(first - (first + (1, 1)))) · -r from the first point
        ux, uy = _unit(-1.0, -1.0)
        start = (fx - uy * r0, fy + ux * r0)
        steps = _arc_steps(r0, _FIXED_PI * 2, tol, _MIN_ROUNDED_CORNER_STEPS, _MAX_ROUNDED_CORNER_STEPS)
        step = 1 / steps
        t = step
        while t <= 1:
            out.append(_rot(start[0], start[1], fx, fy, _FIXED_PI * 2 * t))
            t += step
        return np.asarray(out).reshape(-1, 2)
    out.extend(zip(lx, ly))
    ex, ey = sx[-1], sy[-1]
    vx, vy = _unit(sx[-2] - ex, sy[-2] - ey)
    start = (ex - vy * r0, ey + vx * r0)
    steps = _arc_steps(r0, _FIXED_PI * 3, tol, _MIN_CAP_STEPS, _MAX_CAP_STEPS)
    step = 1 / steps
    t = step
    while t < 1:
        out.append(_rot(start[0], start[1], ex, ey, _FIXED_PI * 3 * t))
        t += step
    out.extend(zip(rx[::-1], ry[::-1]))
    steps = _arc_steps(r0, _FIXED_PI, tol, 4, 8)
    step = 1 / steps
    t = step
    while t <= 1:
        out.append(_rot(rx[0], ry[0], fx, fy, _FIXED_PI * t))
        t += step
    return np.asarray(out).reshape(-1, 2)


# --------------------------------------------------------------------------- shapes


def _prop_float(props: Mapping[str, Any], key: str, default: float) -> float:
    v = _number(props.get(key, default))
    return v if v is not None and math.isfinite(v) and v != 0 else default


def _extent(p: np.ndarray) -> Box:
    lo = p.min(axis=0)
    hi = p.max(axis=0)
    return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))


def _dot_vertices(r: float) -> Tuple[List[float], List[float]]:
    # tldraw's Circle2d vertices: max(8, ceil(2πr / 20)) points from angle 0 (capped for absurd radii)
    n = max(8, math.ceil(min(2 * math.pi * abs(r) / 20, 4096.0)))
    return ([math.cos(i / n * 2 * math.pi) * r for i in range(n)],
            [math.sin(i / n * 2 * math.pi) * r for i in range(n)])


def _dot_box(r: float) -> Box:
    """Box of tldraw's circle of radius ``r`` about the origin as its page bounds see it.

    Page bounds come from the circle's vertices, so an odd vertex count leaves the
    box short of the circle on one side.
    """
    xs, ys = _dot_vertices(r)
    return (min(xs), min(ys), max(xs), max(ys))


def _is_single_point(seg: Any) -> bool:
    # tldraw's b64Vecs.isSinglePoint on the stored (or migrated) path
    if not is_mapping(seg):
        return False
    path = seg.get("path")
    if isinstance(path, str):
        return len(path) <= (12 if seg.get("dim") == 2 else 16)
    return len(_raw_segment_points(seg)) <= 1


def _draw_options(props: Mapping[str, Any], sw: float) -> Tuple[float, bool]:
    """tldraw's streamline option and whether the stroke is complete, for a draw shape."""
    is_pen = bool(props.get("isPen"))
    if is_pen:
        streamline = 0.62
    else:  # tldraw's modulate(sw, [9, 16], [0.64, 0.74], clamp)
        streamline = min(max(0.64 + (sw - 9) / 7 * 0.1, 0.64), 0.74)
    return streamline, bool(props.get("isComplete")) or is_pen


def _draw_box(props: Mapping[str, Any], segments: List[Any]) -> Optional[Box]:
    scale = _prop_float(props, "scale", 1.0)
    sw = (DRAW_STROKE_WIDTHS.get(str(props.get("size", "m")), 3.5) + 1) * scale
    scale_x, scale_y = _prop_float(props, "scaleX", 1.0), _prop_float(props, "scaleY", 1.0)
    if _draw_extent is not None and DRAW_KERNEL and len(segments) == 1 and scale_x == 1 and scale_y == 1:
        # one free segment of point dicts or a base64 path (most strokes): stored, smoothed and
        # bounded in one compiled pass
        seg = segments[0]
        if type(seg) is dict and seg.get("type") == "free":
            got = None
            if "path" not in seg:
                pts = seg.get("points")
                if type(pts) is list and pts:
                    streamline, last = _draw_options(props, sw)
                    got = _draw_extent(pts, sw, streamline, last)
            elif type(seg["path"]) is str and _path_extent is not None:
                streamline, last = _draw_options(props, sw)
                got = _path_extent(_b64_bytes(seg["path"]), 2 if seg.get("dim") == 2 else 3, sw, streamline, last)
            if got is not None:
                x0, y0, x1, y1, count, ix0, iy0, ix1, iy1 = got
                if x1 - x0 < sw * 2 and y1 - y0 < sw * 2 and ix1 - ix0 < sw * 2 and iy1 - iy0 < sw * 2:
                    return _dot_box(sw)
                return _dot_box(sw) if count == 1 else (x0, y0, x1, y1)
    q = _segment_rows(segments, scale_x, scale_y)
    n = q.shape[1]
    if n == 0:
        return _dot_box(sw) if len(segments) == 1 else None
    streamline, last = _draw_options(props, sw)
    if _cstroke_extent is not None and DRAW_KERNEL:
        got = _cstroke_extent(q[0], q[1], sw, streamline, last)
    else:
        xs, ys = q.tolist()
        got = _stroke_extent(xs, ys, sw, streamline, last)
    x0, y0, x1, y1, count = got
    # one segment spanning less than twice the width is a dot; the smoothed points lie
    # within the input's box, so only a small smoothed box needs the input's
    if len(segments) == 1 and x1 - x0 < sw * 2 and y1 - y0 < sw * 2:
        # as Python floats: a span past the float range is inf, without numpy's overflow warning
        lo, hi = q.min(axis=1).tolist(), q.max(axis=1).tolist()
        if hi[0] - lo[0] < sw * 2 and hi[1] - lo[1] < sw * 2:
            return _dot_box(sw)
    return _dot_box(sw) if count == 1 else (x0, y0, x1, y1)


def _highlight_outline(props: Mapping[str, Any], segments: List[Any]) -> Optional[np.ndarray]:
    scale = _prop_float(props, "scale", 1.0)
    sw = HIGHLIGHT_STROKE_WIDTHS.get(str(props.get("size", "m")), HIGHLIGHT_STROKE_WIDTHS["m"]) * scale
    if len(segments) == 1 and _is_single_point(segments[0]):
        return np.column_stack(_dot_vertices(sw / 2))
    pts = segment_points(segments, _prop_float(props, "scaleX", 1.0), _prop_float(props, "scaleY", 1.0))
    tail = segments[-1] if segments else None
    complete = bool(props.get("isComplete")) or (is_mapping(tail) and tail.get("type") == "straight")
    outline = stroke_outline(pts, 1 + sw, streamline=0.5, smoothing=0.5, last=complete)
    return outline if len(outline) >= 3 else None  # tldraw's polygon needs three points


def _highlight_box(props: Mapping[str, Any], segments: List[Any]) -> Optional[Box]:
    outline = _highlight_outline(props, segments)
    return None if outline is None else _extent(outline)


def _line_points(points: Mapping[str, Any]) -> Optional[np.ndarray]:
    """A tldraw line's points in index order, the first of any points sharing an index kept."""
    rows = []
    for key, p in points.items():
        if not is_mapping(p):
            continue
        x, y = _number(p.get("x")), _number(p.get("y"))
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
            continue
        index = p.get("index")
        rows.append((index if isinstance(index, str) else str(key), x, y))
    if not rows:
        return None
    rows.sort(key=lambda r: r[0])  # stable: equal indices keep their stored order
    kept = [rows[0]] + [r for a, r in zip(rows, rows[1:]) if r[0] != a[0]]
    return np.array([(r[1], r[2]) for r in kept], dtype=np.float64)


def _cubic_box(p: np.ndarray) -> Box:
    """Bounds of tldraw's cubic spline through ``p``, from its ten-step samples of each piece."""
    return _extent(_cubic_vertices(p))


def _cubic_vertices(p: np.ndarray) -> np.ndarray:
    """tldraw's vertices of the cubic spline through ``p`` (at least two points): eleven per piece."""
    n = len(p)
    k = 1.25
    i = np.arange(n - 1)
    p0 = p[np.maximum(i - 1, 0)]
    p1 = p[i]
    p2 = p[i + 1]
    p3 = p[np.minimum(i + 2, n - 1)]
    t = (np.arange(11) / 10)[None, :, None]
    s = 1 - t
    with np.errstate(over="ignore", invalid="ignore"):  # huge numbers end as non-finite boxes
        cp1 = p1 + (p2 - p0) / 6 * k
        cp1[0] = p[0]
        cp2 = p2 - (p3 - p1) / 6 * k
        cp2[-1] = p[-1]
        v = (s * s * s * p1[:, None] + 3 * (s * s) * t * cp1[:, None] + 3 * s * (t * t) * cp2[:, None]
             + t * t * t * p2[:, None])
    return np.concatenate([v.reshape(-1, 2), p[-1:]])


def _line_box(props: Mapping[str, Any]) -> Optional[Box]:
    pts = props.get("points")
    if not is_mapping(pts):
        pts = props.get("handles")
    if not is_mapping(pts) or not pts:
        return None
    if props.get("spline") != "cubic":
        # order does not matter to a polyline's box, only which points a shared index drops
        xs: List[float] = []
        ys: List[float] = []
        keys = set()
        for p in pts.values():
            if type(p) is not dict:
                break
            x: Any = p.get("x")
            y: Any = p.get("y")
            index = p.get("index")
            if type(x) not in (int, float) or type(y) not in (int, float) or type(index) is not str:
                break
            xs.append(x)
            ys.append(y)
            keys.add(index)
        else:
            if len(keys) == len(xs) and all(map(math.isfinite, xs)) and all(map(math.isfinite, ys)):
                return (float(min(xs)), float(min(ys)), float(max(xs)), float(max(ys)))
    line = _line_points(pts)
    if line is None:
        return None
    if props.get("spline") == "cubic" and len(line) > 1:
        return _cubic_box(line)
    return _extent(line)


def _draw_vertices(props: Mapping[str, Any], segments: List[Any]) -> Optional[np.ndarray]:
    # the same decisions as _draw_box, keeping the points
    scale = _prop_float(props, "scale", 1.0)
    sw = (DRAW_STROKE_WIDTHS.get(str(props.get("size", "m")), 3.5) + 1) * scale
    if _cstroke_points is not None and STROKE_KERNEL:
        q = _segment_rows(segments, _prop_float(props, "scaleX", 1.0), _prop_float(props, "scaleY", 1.0))
        if q.shape[1] and np.isfinite(q).all():  # then numpy's extremes are Python's min and max
            # as Python floats: a span past the float range is inf, without numpy's overflow warning
            lo, hi = q.min(axis=1).tolist(), q.max(axis=1).tolist()
            if len(segments) == 1 and hi[0] - lo[0] < sw * 2 and hi[1] - lo[1] < sw * 2:
                return np.column_stack(_dot_vertices(sw))
            streamline, last = _draw_options(props, sw)
            p = _cstroke_points(q[0], q[1], sw, streamline, last)
            return np.column_stack(_dot_vertices(sw)) if len(p) == 1 else p
    xs, ys = _segment_lists(segments, _prop_float(props, "scaleX", 1.0), _prop_float(props, "scaleY", 1.0))
    if len(segments) == 1 and (not xs or (max(xs) - min(xs) < sw * 2 and max(ys) - min(ys) < sw * 2)):
        return np.column_stack(_dot_vertices(sw))
    if not xs:
        return None
    is_pen = bool(props.get("isPen"))
    streamline = 0.62 if is_pen else min(max(0.64 + (sw - 9) / 7 * 0.1, 0.64), 0.74)
    st = _streamline(xs, ys, sw, streamline, bool(props.get("isComplete")) or is_pen)
    return np.column_stack(_dot_vertices(sw) if len(st.x) == 1 else (st.x, st.y))


def freehand_vertices(node_type: str, props: Mapping[str, Any]) -> Optional[np.ndarray]:
    """The local vertices tldraw bounds a ``draw``, ``highlight`` or ``line`` shape by.

    The smoothed stroke points of a draw shape, the outline of a highlight, the
    points of a line (sampled, ten steps a piece, for a cubic spline), or the
    vertices of the circle a dot is drawn as; None where :func:`freehand_box` is
    None. A rotated shape's page bounds are the box of these vertices rotated,
    which is tighter than the rotated box.

    Examples
    --------
    >>> freehand_vertices("line", {"points": {"a": {"index": "a1", "x": 0, "y": 0},
    ...                                       "b": {"index": "a2", "x": 9, "y": 3}}}).tolist()
    [[0.0, 0.0], [9.0, 3.0]]
    """
    if node_type == "line":
        pts = props.get("points")
        if not is_mapping(pts):
            pts = props.get("handles")
        if not is_mapping(pts) or not pts:
            return None
        line = _line_points(pts)
        if line is None or props.get("spline") != "cubic" or len(line) < 2:
            return line
        return _cubic_vertices(line)
    if node_type not in ("draw", "highlight"):
        return None
    segments = props.get("segments")
    if not isinstance(segments, list) or not segments:
        return None
    if node_type == "draw":
        v = _draw_vertices(props, segments)
    else:
        v = _highlight_outline(props, segments)
    if v is None or len(v) == 0 or not np.isfinite(v).all():
        return None
    return v


def rotated_freehand_box(node_type: str, props: Mapping[str, Any], rotation: float, ox: float, oy: float
                         ) -> Optional[Box]:
    """Page box of a freehand shape rotated about its origin and moved to ``(ox, oy)``.

    The box of :func:`freehand_vertices` rotated, as tldraw computes page bounds;
    None where there are no such vertices.

    Examples
    --------
    >>> line = {"points": {"a": {"index": "a1", "x": 0, "y": 0}, "b": {"index": "a2", "x": 10, "y": 10}}}
    >>> [round(v, 9) for v in rotated_freehand_box("line", line, -math.pi / 4, 5, 0)]
    [5.0, 0.0, 19.142135624, 0.0]
    """
    v = freehand_vertices(node_type, props)
    if v is None or not math.isfinite(rotation):
        return None
    c, s = math.cos(rotation), math.sin(rotation)
    with np.errstate(over="ignore", invalid="ignore"):  # huge numbers end as non-finite boxes
        x = ox + c * v[:, 0] - s * v[:, 1]
        y = oy + s * v[:, 0] + c * v[:, 1]
    box = (float(x.min()), float(y.min()), float(x.max()), float(y.max()))
    return box if all(map(math.isfinite, box)) else None


def freehand_box(node_type: str, props: Mapping[str, Any]) -> Optional[Box]:
    """Local box of a tldraw ``draw``, ``highlight`` or ``line`` shape as tldraw bounds it.

    ``draw``: the smoothed stroke (:func:`stroke_points` with tldraw's solid
    freehand options for the stroke width ``(2·size factor + 1) · scale``; the
    points themselves are not scaled), or a circle of that radius about the origin
    for a dot (one segment spanning less than twice the width, or a stroke
    smoothed down to one point). ``highlight``: the outline of its wide stroke
    (:func:`stroke_outline`), or a circle of half the width about the origin for
    a one-point segment. A circle's box is that of its vertices, as tldraw's page
    bounds are. ``line``: its points in index order (the first of points sharing
    an index), or tldraw's cubic spline through them, sampled as tldraw samples
    it; a one-point line is its point (tldraw's own box of a path with no segment
    is empty, at the page origin). None when the props hold no such geometry
    (other types, Excalidraw-style point lists, no segments, numbers too large
    for a finite box).

    Examples
    --------
    >>> seg = {"type": "free", "points": [{"x": 0, "y": 0}, {"x": 1, "y": 1}]}
    >>> freehand_box("draw", {"segments": [seg], "size": "m"})
    (-4.5, -4.5, 4.5, 4.5)
    >>> freehand_box("line", {"points": {"a": {"index": "a1", "x": 0, "y": 0}, "b": {"index": "a2", "x": 9, "y": 3}}})
    (0.0, 0.0, 9.0, 3.0)
    """
    if node_type == "line":
        box = _line_box(props)
    elif node_type not in ("draw", "highlight"):
        return None
    else:
        segments = props.get("segments")
        if not isinstance(segments, list) or not segments:
            return None
        box = _draw_box(props, segments) if node_type == "draw" else _highlight_box(props, segments)
    if box is None or not all(math.isfinite(v) for v in box):
        return None
    return box
