"""tldraw's hand-drawn (``dash: "draw"``) outlines, as its renderer computes them.

tldraw draws the outline of a ``geo`` shape with ``dash: "draw"`` as two passes of a path
whose every vertex is pushed by a random offset (up to a third of the stroke width) and whose
corners are rounded (by twice the stroke width at a right angle). The random numbers come
from a xorshift generator seeded with the shape's id and the pass number, so two exact copies
of a shape draw different wobbles: a copy on top hides all of the one below or leaves part of
its stroke showing. This module computes those paths (:func:`geo_draw_polylines`) and how
much of one stroke the strokes of others leave visible (:func:`stroke_visible_fraction`).

The generator is :func:`tldraw_rng`; the path follows tldraw's ``PathBuilder`` (its commands
for each geo kind, the per-command information, the draw-mode offsets and corner rounding)
with curves flattened to polylines. Strokes have round caps and joins (tldraw's SVG container
sets both), so a stroke of width ``sw`` is the set of points within ``sw / 2`` of its path.
"""

from __future__ import annotations

import math
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from spatialobs.canvas.document.arrowparts import _num, _polygon_vertices, _star
from spatialobs.canvas.document.shapes import STROKE_SIZES, arc_centre

__all__ = ["tldraw_rng", "geo_draw_polylines", "stroke_cells", "stroke_visible_fraction", "DRAW_GEO_KINDS"]

Pt = Tuple[float, float]

#: Geo kinds whose draw-style path is computed here (a cloud's bumps are left out).
DRAW_GEO_KINDS = frozenset({"rectangle", "ellipse", "triangle", "diamond", "star", "pentagon", "hexagon", "octagon",
                            "rhombus", "rhombus-2", "oval", "trapezoid", "arrow-left", "arrow-up", "arrow-down",
                            "arrow-right", "x-box", "check-box", "heart"})

_M32 = 0xFFFFFFFF


def _i32(v: int) -> int:
    v &= _M32
    return v - 0x100000000 if v & 0x80000000 else v


def tldraw_rng(seed: str) -> Callable[[], float]:
    """tldraw's seeded random numbers (``rng`` of ``@tldraw/utils``): a xorshift128 generator
    whose state words are JavaScript's 32-bit signed integers, giving numbers in ``(-1, 1)``.

    The seed is mixed in by UTF-16 code units, as ``String.charCodeAt`` reads it.

    Parameters
    ----------
    seed : str
        The seed (tldraw passes a shape's id, with the pass number appended for draw strokes).

    Returns
    -------
    callable
        Each call returns the next number, exactly the double JavaScript returns.

    Examples
    --------
    >>> r = tldraw_rng("shape:a0")
    >>> -1 < r() < 1
    True
    >>> tldraw_rng("x")() == tldraw_rng("x")()
    True
    """
    if not isinstance(seed, str):
        raise TypeError(f"tldraw_rng: the seed must be a str, not {type(seed).__name__}")
    units = seed.encode("utf-16-le")
    codes = [units[i] | (units[i + 1] << 8) for i in range(0, len(units), 2)]
    s = [0, 0, 0, 0]

    # the state shifts by one word per call: x <- y, y <- z, z <- w, w <- new
    def step() -> float:
        x, y, z, w = s
        t = _i32(x ^ (x << 11))
        nw = _i32(w ^ (((w & _M32) >> 19) ^ t ^ ((t & _M32) >> 8)))
        s[0], s[1], s[2], s[3] = y, z, w, nw
        return (nw / 0x100000000) * 2

    n = len(codes)
    for k in range(n + 64):
        s[0] = _i32(s[0] ^ (codes[k] if k < n else 0))
        step()
    return step


# --------------------------------------------------------------------------- path commands
class _Cmd:
    __slots__ = ("kind", "x", "y", "cp1", "cp2", "is_close", "offset", "roundness", "filled", "info")

    def __init__(self, kind: str, x: float, y: float, cp1: Optional[Pt] = None, cp2: Optional[Pt] = None,
                 offset: Optional[float] = None, filled: bool = False) -> None:
        self.kind, self.x, self.y, self.cp1, self.cp2 = kind, x, y, cp1, cp2
        self.is_close = False
        self.offset: Optional[float] = offset
        self.roundness: Optional[float] = None
        self.filled = filled
        self.info: Optional[Tuple[Pt, Pt, float]] = None


def _uni(x: float, y: float) -> Pt:
    n = (x * x + y * y) ** 0.5
    return (0.0, 0.0) if n == 0 else (x / n, y / n)


class _Builder:
    """tldraw's ``PathBuilder``: move, line, cubic, arc (as cubics) and close commands."""

    def __init__(self) -> None:
        self.cmds: List[_Cmd] = []
        self._move: Optional[_Cmd] = None

    def move(self, x: float, y: float, filled: bool = False, offset: Optional[float] = None) -> "_Builder":
        self._move = _Cmd("move", x, y, offset=offset, filled=filled)
        self.cmds.append(self._move)
        return self

    def line(self, x: float, y: float, offset: Optional[float] = None) -> "_Builder":
        self.cmds.append(_Cmd("line", x, y, offset=offset))
        return self

    def cubic(self, x: float, y: float, c1x: float, c1y: float, c2x: float, c2y: float) -> "_Builder":
        self.cmds.append(_Cmd("cubic", x, y, (c1x, c1y), (c2x, c2y)))
        return self

    def arc(self, rx: float, ry: float, large: bool, sweep: bool, x2: float, y2: float) -> "_Builder":
        """An elliptical arc without axis rotation, as up to four cubics (tldraw's ``arcTo``)."""
        x1, y1 = self.cmds[-1].x, self.cmds[-1].y
        if x1 == x2 and y1 == y2:
            return self
        if rx == 0 or ry == 0:
            return self.line(x2, y2)
        cx, cy, rx1, ry1, a0, sweep_a = arc_centre(x1, y1, rx, ry, large, sweep, x2, y2)
        n = min(4, math.ceil(abs(sweep_a) / (math.pi / 2)))
        per = sweep_a / n
        for i in range(n):
            t1, t2 = a0 + i * per, a0 + (i + 1) * per
            k = (4 / 3) * math.tan((t2 - t1) / 4)
            sx, sy = cx + rx1 * math.cos(t1), cy + ry1 * math.sin(t1)
            ex, ey = cx + rx1 * math.cos(t2), cy + ry1 * math.sin(t2)
            d1x, d1y = -rx1 * math.sin(t1), ry1 * math.cos(t1)
            d2x, d2y = -rx1 * math.sin(t2), ry1 * math.cos(t2)
            self.cubic(ex, ey, sx + k * d1x, sy + k * d1y, ex - k * d2x, ey - k * d2y)
        return self

    def close(self) -> "_Builder":
        mv = self._move
        assert mv is not None
        last = self.cmds[-1]
        if abs(mv.x - last.x) <= 1e-6 and abs(mv.y - last.y) <= 1e-6:
            last.is_close = True
        else:
            c = _Cmd("line", mv.x, mv.y)
            c.is_close = True
            self.cmds.append(c)
        self._move = None
        return self


def _poly(pts: Sequence[Pt], filled: bool) -> _Builder:
    b = _Builder().move(pts[0][0], pts[0][1], filled)
    for x, y in pts[1:]:
        b.line(x, y)
    return b.close()


def _geo_builder(geo: str, w: float, h: float, sw: float, filled: bool) -> Optional[_Builder]:
    cx, cy = w / 2, h / 2
    if geo in ("rectangle", "x-box", "check-box"):
        b = _poly([(0, 0), (w, 0), (w, h), (0, h)], filled)
        if geo == "x-box":
            i = sw * 0.62
            cl = lambda v, hi: min(max(v, 0.0), hi)  # noqa: E731
            b.move(cl(i, w), cl(i, h)).line(cl(w - i, w), cl(h - i, h))
            b.move(cl(w - i, w), cl(i, h)).line(cl(i, w), cl(h - i, h))
        elif geo == "check-box":
            s = min(w, h) * 0.82
            ox, oy = (w - s) / 2, (h - s) / 2
            cl = lambda v, hi: min(max(v, 0.0), hi)  # noqa: E731
            b.move(cl(ox + s * 0.25, w), cl(oy + s * 0.52, h), offset=0.0)
            b.line(cl(ox + s * 0.45, w), cl(oy + s * 0.82, h))
            b.line(cl(ox + s * 0.82, w), cl(oy + s * 0.22, h), offset=0.0)
        return b
    if geo == "ellipse":
        return _Builder().move(0, cy, filled).arc(cx, cy, False, True, w, cy).arc(cx, cy, False, True, 0, cy).close()
    if geo == "triangle":
        return _poly([(cx, 0), (w, h), (0, h)], filled)
    if geo == "diamond":
        return _poly([(cx, 0), (w, cy), (cx, h), (0, cy)], filled)
    if geo == "star":
        return _poly(_star(w, h), filled)
    if geo in ("pentagon", "hexagon", "octagon"):
        return _poly(_polygon_vertices(w, h, {"pentagon": 5, "hexagon": 6, "octagon": 8}[geo]), filled)
    off = min(w * 0.38, h * 0.38)
    if geo == "rhombus":
        return _poly([(off, 0), (w, 0), (w - off, h), (0, h)], filled)
    if geo == "rhombus-2":
        return _poly([(0, 0), (w - off, 0), (w, h), (off, h)], filled)
    if geo == "trapezoid":
        return _poly([(off, 0), (w - off, 0), (w, h), (0, h)], filled)
    if geo == "oval":
        if h > w:
            r = w / 2
            return (_Builder().move(0, r, filled).arc(r, r, False, True, w, r).line(w, h - r)
                    .arc(r, r, False, True, 0, h - r).close())
        r = h / 2
        return (_Builder().move(r, h, filled).arc(r, r, False, True, r, 0).line(w - r, 0)
                .arc(r, r, False, True, w - r, h).close())
    if geo in ("arrow-left", "arrow-right"):
        ox, oy = min(w, h) * 0.38, h * 0.16
        if geo == "arrow-left":
            return _poly([(ox, 0), (ox, oy), (w, oy), (w, h - oy), (ox, h - oy), (ox, h), (0, h / 2)], filled)
        return _poly([(0, oy), (w - ox, oy), (w - ox, 0), (w, h / 2), (w - ox, h), (w - ox, h - oy), (0, h - oy)],
                     filled)
    if geo in ("arrow-up", "arrow-down"):
        ox, oy = w * 0.16, min(w, h) * 0.38
        if geo == "arrow-up":
            return _poly([(w / 2, 0), (w, oy), (w - ox, oy), (w - ox, h), (ox, h), (ox, oy), (0, oy)], filled)
        return _poly([(ox, 0), (w - ox, 0), (w - ox, h - oy), (w, h - oy), (w / 2, h), (0, h - oy), (ox, h - oy)],
                     filled)
    if geo == "heart":
        o, k = w / 4, h / 4
        b = _Builder().move(cx, h, filled)
        b.cubic(0, k * 1.2, o * 1.5, k * 3, 0, k * 2.5)
        b.cubic(cx, k * 0.9, 0, -k * 0.32, o * 1.85, -k * 0.32)
        b.cubic(w, k * 1.2, o * 2.15, -k * 0.32, w, -k * 0.32)
        b.cubic(cx, h, w, k * 2.5, o * 2.5, k * 3)
        return b.close()
    return None


# --------------------------------------------------------------------------- draw mode
_TV = (-0.1252, 0.1252, -0.3678, 0.3678, -0.5873, 0.5873, -0.7699, 0.7699, -0.9041, 0.9041, -0.9816, 0.9816)
_CV = (0.2491, 0.2491, 0.2335, 0.2335, 0.2032, 0.2032, 0.1601, 0.1601, 0.1069, 0.1069, 0.0472, 0.0472)


def _base3(t: float, p1: float, p2: float, p3: float, p4: float) -> float:
    t1 = -3 * p1 + 9 * p2 - 9 * p3 + 3 * p4
    t2 = t * t1 + 6 * p1 - 12 * p2 + 6 * p3
    return t * t2 - 3 * p1 + 3 * p2


def _cubic_length(x1: float, y1: float, x2: float, y2: float, x3: float, y3: float, x4: float, y4: float) -> float:
    """tldraw's 12-point Gauss–Legendre estimate of a cubic's length (its tabled weights)."""
    s = 0.0
    for tv, cv in zip(_TV, _CV):
        ct = 0.5 * tv + 0.5
        xb = _base3(ct, x1, x2, x3, x4)
        yb = _base3(ct, y1, y2, y3, y4)
        s += cv * math.sqrt(xb * xb + yb * yb)
    return 0.5 * s


def _infos(cmds: List[_Cmd]) -> List[Optional[Tuple[Pt, Pt, float]]]:
    out: List[Optional[Tuple[Pt, Pt, float]]] = [None] * len(cmds)
    for i in range(1, len(cmds)):
        p, c = cmds[i - 1], cmds[i]
        if c.kind == "move":
            continue
        if c.kind == "line":
            ts = te = _uni(p.x - c.x, p.y - c.y)
            length = math.hypot(p.x - c.x, p.y - c.y)
        else:
            assert c.cp1 is not None and c.cp2 is not None
            ts = _uni(c.cp1[0] - p.x, c.cp1[1] - p.y)
            te = _uni(c.cp2[0] - c.x, c.cp2[1] - c.y)
            length = _cubic_length(p.x, p.y, c.cp1[0], c.cp1[1], c.cp2[0], c.cp2[1], c.x, c.y)
        out[i] = (ts, te, length)
    return out


def _angle_between(a: Pt, b: Pt) -> float:
    p = a[0] * b[0] + a[1] * b[1]
    n = math.sqrt((a[0] * a[0] + a[1] * a[1]) * (b[0] * b[0] + b[1] * b[1]))
    sign = -1.0 if a[0] * b[1] - a[1] * b[0] < 0 else 1.0
    return sign * math.acos(min(max(p / n, -1.0), 1.0))


def _dom(v: float) -> float:
    """``toDomPrecision``: JavaScript's ``Math.round(v * 1e4) / 1e4``."""
    return math.floor(v * 1e4 + 0.5) / 1e4


def _flat_quad(p0: Pt, c: Pt, p1: Pt, n: int) -> List[Pt]:
    return [((1 - t) ** 2 * p0[0] + 2 * (1 - t) * t * c[0] + t * t * p1[0],
             (1 - t) ** 2 * p0[1] + 2 * (1 - t) * t * c[1] + t * t * p1[1]) for t in (i / n for i in range(1, n + 1))]


def _flat_cubic(p0: Pt, c1: Pt, c2: Pt, p1: Pt, n: int) -> List[Pt]:
    out = []
    for i in range(1, n + 1):
        t = i / n
        u = 1 - t
        a, b, c, d = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
        out.append((a * p0[0] + b * c1[0] + c * c2[0] + d * p1[0], a * p0[1] + b * c1[1] + c * c2[1] + d * p1[1]))
    return out


Seg = Tuple[str, Tuple[Pt, ...]]


def _draw_segments(cmds: List[_Cmd], sw: float, seed: str, passes: int = 2, offset: Optional[float] = None,
                   only_filled: bool = False) -> List[Seg]:
    """tldraw's ``toDrawD`` as a list of ``(letter, points)`` path commands (``M``, ``L``, ``Q``, ``C``),
    every coordinate rounded as ``toDomPrecision`` rounds it."""
    d_off = sw / 3 if offset is None else offset
    d_round = sw * 2
    infos = _infos(cmds)
    plan: List[List[Any]] = []
    last_move: Optional[int] = None
    for i, c in enumerate(cmds):
        off = c.offset if c.offset is not None else d_off
        rnd = c.roundness if c.roundness is not None else d_round
        if c.kind == "move":
            last_move = i
        if c.is_close:
            assert last_move is not None
            nxt: Optional[int] = last_move + 1
        else:
            nxt = None if i + 1 >= len(cmds) or cmds[i + 1].kind == "move" else i + 1
        ninfo = infos[nxt] if nxt is not None and nxt < len(cmds) and cmds[nxt].kind != "move" else None
        cur_round = c.kind != "cubic"
        next_round = cmds[nxt].kind != "cubic" if nxt is not None else False
        info = infos[i]
        t_prev = info[1] if info is not None else None
        t_next = ninfo[0] if ninfo is not None else None
        if (cur_round and next_round and t_prev is not None and t_next is not None
                and t_prev[0] ** 2 + t_prev[1] ** 2 > 0.01 and t_next[0] ** 2 + t_next[1] ** 2 > 0.01):
            # modulate(|angle|, [pi/2, pi], [rnd, 0], clamp)
            ang = abs(_angle_between(t_prev, t_next))
            r = rnd + ((ang - math.pi / 2) / (math.pi - math.pi / 2)) * (0 - rnd)
            r_ang = max(min(r, rnd), 0.0) if rnd > 0 else max(min(r, 0.0), rnd)
        else:
            r_ang = 0.0
        cur_len = info[2] if info is not None else math.inf
        next_len = ninfo[2] if ninfo is not None else math.inf
        amount = max(0.0, min(off, (min(cur_len, next_len) - r_ang * 2) / 4))
        plan.append([c, amount, min(r_ang, cur_len / 4), min(r_ang, next_len / 4), t_prev, t_next])
        if c.is_close and last_move is not None:
            plan[last_move][3] = min(r_ang, next_len / 4)
    out: List[Seg] = []

    def pt(p: Pt) -> Pt:
        return (_dom(p[0]), _dom(p[1]))

    for pas in range(passes):
        rnd_f = tldraw_rng(seed + str(pas))
        last_off = (0.0, 0.0)
        skipping = False
        for c, amount, r_before, r_after, t_prev, t_next in plan:
            if c.is_close:
                o = last_off
            else:
                dx, dy = _uni(rnd_f(), rnd_f())
                mag = math.sqrt(abs(rnd_f())) * amount
                o = (dx * mag, dy * mag)
            if c.kind == "move":
                last_off = o
                skipping = only_filled and not c.filled
            if skipping:
                continue
            op = (c.x + o[0], c.y + o[1])
            end = (op[0] - t_next[0] * r_after, op[1] - t_next[1] * r_after) \
                if t_next is not None and r_after > 0 else op
            start = (op[0] + t_prev[0] * r_before, op[1] + t_prev[1] * r_before) \
                if t_prev is not None and r_before > 0 else op
            plain = end is op or start is op
            if c.kind == "move":
                out.append(("M", (pt(end),)))
            elif c.kind == "line":
                out.append(("L", (pt(end),)) if plain else ("L", (pt(start),)))
                if not plain:
                    out.append(("Q", (pt(op), pt(end))))
            else:
                assert c.cp1 is not None and c.cp2 is not None
                c1 = pt((c.cp1[0] + o[0], c.cp1[1] + o[1]))
                c2 = pt((c.cp2[0] + o[0], c.cp2[1] + o[1]))
                out.append(("C", (c1, c2, pt(end) if plain else pt(op))))
    return out


def _d_string(segs: Sequence[Seg]) -> str:
    """The segments as tldraw writes them into an SVG path's ``d``."""
    def num(v: float) -> str:
        return str(int(v)) if v == int(v) else repr(v)
    return " ".join(" ".join([k] + [f"{num(x)} {num(y)}" for x, y in pts]) for k, pts in segs)


def _flatten(segs: Sequence[Seg], step: float = 2.0) -> List[np.ndarray]:
    """Polylines of the path commands, curves cut into pieces of about ``step`` page units."""
    out: List[np.ndarray] = []
    cur: List[Pt] = []
    for k, pts in segs:
        if k == "M":
            if len(cur) > 1:
                out.append(np.asarray(cur))
            cur = [pts[0]]
        elif k == "L":
            cur.append(pts[0])
        elif k == "Q":
            p0 = cur[-1]
            ln = math.dist(p0, pts[0]) + math.dist(pts[0], pts[1])
            cur.extend(_flat_quad(p0, pts[0], pts[1], max(2, min(64, math.ceil(ln / step)))))
        else:
            p0 = cur[-1]
            ln = math.dist(p0, pts[0]) + math.dist(pts[0], pts[1]) + math.dist(pts[1], pts[2])
            cur.extend(_flat_cubic(p0, pts[0], pts[1], pts[2], max(4, min(256, math.ceil(ln / step)))))
    if len(cur) > 1:
        out.append(np.asarray(cur))
    return out


def geo_draw_polylines(geo: str, w: float, h: float, props: Mapping[str, Any], node_id: str,
                       fill_path: bool = False) -> Optional[Tuple[List[np.ndarray], float]]:
    """The polylines tldraw strokes for a ``geo`` shape drawn with ``dash: "draw"``, and the stroke width.

    Parameters
    ----------
    geo : str
        The geo kind (see :data:`DRAW_GEO_KINDS`; others give None).
    w, h : float
        The shape's size (``h`` with ``growY``); tldraw draws at least 1 by 1.
    props : mapping
        ``size``, ``scale``, ``fill``, ``flipX``, ``flipY`` (tldraw's props or our style).
    node_id : str
        The shape's id, which seeds the wobble.
    fill_path : bool
        The path tldraw fills instead (one pass, no offset, corners rounded): only the
        filled sub-paths.

    Returns
    -------
    (list of (k, 2) arrays, float) or None
        Local polylines (one per pass and sub-path) and the stroke width.

    Examples
    --------
    >>> lines, sw = geo_draw_polylines("rectangle", 100, 50, {"size": "m"}, "shape:a")
    >>> len(lines), sw
    (2, 3.5)
    """
    got = _geo_segments(geo, w, h, props, node_id, fill_path)
    if got is None:
        return None
    return _flatten(got[0]), got[1]


def _geo_segments(geo: str, w: float, h: float, props: Mapping[str, Any], node_id: str,
                  fill_path: bool) -> Optional[Tuple[List[Seg], float]]:
    if geo not in DRAW_GEO_KINDS:
        return None
    scale = _num(props.get("scale"), 1.0)
    sw = STROKE_SIZES.get(str(props.get("size", "m")), 3.5) * scale
    gw, gh = max(1.0, float(w)), max(1.0, float(h))
    fill = props.get("fill", "none")
    b = _geo_builder(geo, gw, gh, sw, fill not in (None, "none"))
    if b is None:
        return None
    fx, fy = bool(props.get("flipX")), bool(props.get("flipY"))
    if fx or fy:  # tldraw mirrors the path's commands, then draws them
        for c in b.cmds:
            c.x, c.y = (gw - c.x if fx else c.x), (gh - c.y if fy else c.y)
            if c.cp1 is not None and c.cp2 is not None:
                c.cp1 = (gw - c.cp1[0] if fx else c.cp1[0], gh - c.cp1[1] if fy else c.cp1[1])
                c.cp2 = (gw - c.cp2[0] if fx else c.cp2[0], gh - c.cp2[1] if fy else c.cp2[1])
    segs = (_draw_segments(b.cmds, sw, node_id, passes=1, offset=0.0, only_filled=True) if fill_path
            else _draw_segments(b.cmds, sw, node_id))
    return segs, sw


# --------------------------------------------------------------------------- stroke areas
def stroke_cells(lines: Sequence[np.ndarray], half: float, cell: float) -> np.ndarray:
    """The cells of a square grid (side ``cell``, centres at ``(i + 0.5) * cell``) whose centre lies
    within ``half`` of a polyline in ``lines``, as sorted unique ``int64`` keys ``i * 2**32 + j``
    (``i`` the column, ``j`` the row, both offset by ``2**30``, so the keys are non-negative).

    A stroke with round caps and joins is exactly this set of points; its cells measure its area.

    Examples
    --------
    >>> k = stroke_cells([np.array([[0.0, 0.0], [10.0, 0.0]])], 1.0, 0.5)
    >>> len(k), round(len(k) * 0.5 ** 2, 1)  # cells, and their area: 10 x 2 + pi
    (92, 23.0)
    """
    if not cell > 0 or not half >= 0:
        raise ValueError(f"stroke_cells: cell must be > 0 and half >= 0 (got cell={cell}, half={half})")
    keys: List[np.ndarray] = []
    for pl in lines:
        p = np.asarray(pl, np.float64).reshape(-1, 2)
        if len(p) == 1:
            p = np.vstack([p, p])
        a, b = p[:-1], p[1:]
        for k in range(len(a)):
            keys.append(_capsule_cells(a[k], b[k], half, cell))
    if not keys:
        return np.zeros(0, np.int64)
    return np.unique(np.concatenate(keys))


_OFF = 1 << 30


def _capsule_cells(a: np.ndarray, b: np.ndarray, r: float, h: float) -> np.ndarray:
    """Keys of the cells whose centre lies within ``r`` of the segment ``a b``: per grid row, the
    capsule (a convex set) meets the row's centre line in one interval."""
    ax, ay, bx, by = float(a[0]), float(a[1]), float(b[0]), float(b[1])
    j0 = math.ceil((min(ay, by) - r) / h - 0.5)
    j1 = math.floor((max(ay, by) + r) / h - 0.5)
    if j1 < j0:
        return np.zeros(0, np.int64)
    js = np.arange(j0, j1 + 1)
    y = (js + 0.5) * h
    lo = np.full(len(js), np.inf)
    hi = np.full(len(js), -np.inf)
    for cx, cy in ((ax, ay), (bx, by)):  # the end disks
        d2 = r * r - (y - cy) ** 2
        ok = d2 >= 0
        s = np.sqrt(np.where(ok, d2, 0.0))
        lo = np.where(ok, np.minimum(lo, cx - s), lo)
        hi = np.where(ok, np.maximum(hi, cx + s), hi)
    dx, dy = bx - ax, by - ay
    L = math.hypot(dx, dy)
    if L > 0:
        ux, uy = dx / L, dy / L
        # points (x, y) with 0 <= (x - ax) ux + (y - ay) uy <= L and |-(x - ax) uy + (y - ay) ux| <= r
        xl = np.full(len(js), -np.inf)
        xh = np.full(len(js), np.inf)
        ok = np.ones(len(js), bool)
        for coef, base, lim0, lim1 in ((ux, (y - ay) * uy, 0.0, L), (-uy, (y - ay) * ux, -r, r)):
            if coef == 0:
                ok &= (base >= lim0) & (base <= lim1)
                continue
            t0 = (lim0 - base) / coef + ax
            t1 = (lim1 - base) / coef + ax
            xl = np.maximum(xl, np.minimum(t0, t1))
            xh = np.minimum(xh, np.maximum(t0, t1))
        ok &= xl <= xh
        lo = np.where(ok, np.minimum(lo, xl), lo)
        hi = np.where(ok, np.maximum(hi, xh), hi)
    i0 = np.ceil(lo / h - 0.5)
    i1 = np.floor(hi / h - 0.5)
    n = np.where(np.isfinite(i0) & np.isfinite(i1) & (i1 >= i0), i1 - i0 + 1, 0).astype(np.int64)
    tot = int(n.sum())
    if tot == 0:
        return np.zeros(0, np.int64)
    row = np.repeat(np.arange(len(js)), n)
    first = np.repeat(np.cumsum(n) - n, n)
    i = np.repeat(np.where(n > 0, i0, 0).astype(np.int64), n) + (np.arange(tot) - first)
    j = js[row].astype(np.int64)
    reach = max(int(np.abs(i).max()), abs(j0), abs(j1))
    if reach >= _OFF:
        raise ValueError(f"stroke_cells: the strokes reach cell {reach} from the origin, beyond the 2**30 the keys "
                         "hold (use a larger cell)")
    return ((i + _OFF) << 32) | (j + _OFF)


def stroke_visible_fraction(lower: Sequence[np.ndarray], lower_width: float,
                            covers: Sequence[Tuple[Sequence[np.ndarray], float]], cell: Optional[float] = None) -> float:
    """The share of the stroke ``lower`` (polylines, width ``lower_width``) that the strokes in
    ``covers`` (polylines and width each) leave visible, measured on a grid of side ``cell``
    (a quarter of the thinnest stroke by default).

    Examples
    --------
    >>> a = [np.array([[0.0, 0.0], [100.0, 0.0]])]
    >>> stroke_visible_fraction(a, 2.0, [(a, 2.0)]), stroke_visible_fraction(a, 2.0, [])
    (0.0, 1.0)
    >>> round(stroke_visible_fraction(a, 2.0, [([np.array([[0.0, 1.0], [100.0, 1.0]])], 2.0)]), 2)
    0.5
    """
    widths = [lower_width] + [w for _, w in covers]
    if not all(w > 0 for w in widths):
        raise ValueError(f"stroke_visible_fraction: stroke widths must be > 0 (got {widths})")
    h = min(widths) / 4 if cell is None else cell
    own = stroke_cells(lower, lower_width / 2, h)
    if len(own) == 0:
        return 1.0
    hidden = np.zeros(len(own), bool)
    for lines, w in covers:
        hidden |= np.isin(own, stroke_cells(lines, w / 2, h), assume_unique=True)
    return float(1.0 - hidden.sum() / len(own))

