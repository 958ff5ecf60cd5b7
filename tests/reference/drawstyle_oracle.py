"""Naive twins of :mod:`spatialobs.canvas.document.drawstyle`, written from the definitions.

* :func:`rng` is tldraw's xorshift with every operation spelled out on unsigned 32-bit
  words (``ctypes``), converting to JavaScript's signed view only where JavaScript does.
* :func:`stroke_cells` tests every cell of the grid over the strokes' bounds: a cell belongs
  when the squared distance from its centre to some segment is at most ``half**2``, decided
  in exact rational arithmetic (:class:`fractions.Fraction`) on the floats as given.
"""

from __future__ import annotations

import ctypes
import math
from fractions import Fraction
from typing import Callable, Dict, List, Sequence, Tuple

Seg = Tuple[Tuple[Fraction, Fraction], Tuple[Fraction, Fraction]]


def rng(seed: str) -> Callable[[], float]:
    """tldraw's ``rng(seed)``: four 32-bit words, a xorshift step per call."""
    st = [ctypes.c_int32(0) for _ in range(4)]
    raw = seed.encode("utf-16-le")  # String.charCodeAt reads UTF-16 code units
    units = [int.from_bytes(raw[i:i + 2], "little") for i in range(0, len(raw), 2)]

    def u(v: ctypes.c_int32) -> int:  # JavaScript's ``v >>> 0``
        return ctypes.c_uint32(v.value).value

    def nxt() -> float:
        x, y, z, w = st
        t = ctypes.c_int32(x.value ^ ctypes.c_int32(x.value << 11).value)  # x ^ (x << 11)
        mix = ctypes.c_uint32((u(w) >> 19) ^ t.value ^ (u(t) >> 8)).value  # (...) >>> 0
        nw = ctypes.c_int32(w.value ^ mix)  # w ^= ... (signed)
        st[0], st[1], st[2], st[3] = y, z, w, nw
        return (nw.value / 4294967296) * 2

    for k in range(len(units) + 64):
        st[0] = ctypes.c_int32(st[0].value ^ (units[k] if k < len(units) else 0))
        nxt()
    return nxt


def _segments(lines: Sequence[Sequence[Sequence[float]]]) -> List[Seg]:
    out: List[Seg] = []
    for pl in lines:
        pts = [(Fraction(float(x)), Fraction(float(y))) for x, y in pl]
        if len(pts) == 1:
            pts = pts * 2
        out += list(zip(pts[:-1], pts[1:]))
    return out


def _dist2(p: Tuple[Fraction, Fraction], s: Seg) -> Fraction:
    (ax, ay), (bx, by) = s
    dx, dy = bx - ax, by - ay
    L2 = dx * dx + dy * dy
    t = Fraction(0) if L2 == 0 else min(max(((p[0] - ax) * dx + (p[1] - ay) * dy) / L2, Fraction(0)), Fraction(1))
    qx, qy = ax + t * dx - p[0], ay + t * dy - p[1]
    return qx * qx + qy * qy


def stroke_cells(lines: Sequence[Sequence[Sequence[float]]], half: float, cell: float) -> Dict[Tuple[int, int], Fraction]:
    """Every cell ``(i, j)`` whose centre ``((i + 1/2) cell, (j + 1/2) cell)`` lies within ``half`` of a
    segment, with its margin ``half**2 - distance**2`` (>= 0), exactly."""
    segs = _segments(lines)
    h, r = Fraction(float(cell)), Fraction(float(half))
    xs = [p[0] for s in segs for p in s]
    ys = [p[1] for s in segs for p in s]
    out: Dict[Tuple[int, int], Fraction] = {}
    if not segs:
        return out
    for i in range(math.floor((min(xs) - r) / h) - 1, math.ceil((max(xs) + r) / h) + 1):
        for j in range(math.floor((min(ys) - r) / h) - 1, math.ceil((max(ys) + r) / h) + 1):
            c = ((i + Fraction(1, 2)) * h, (j + Fraction(1, 2)) * h)
            m = max(r * r - _dist2(c, s) for s in segs)
            if m >= 0:
                out[(i, j)] = m
    return out


def near_edge(lines: Sequence[Sequence[Sequence[float]]], half: float, cell: float, key: Tuple[int, int],
              tol: float = 1e-9) -> bool:
    """Whether the cell's centre lies within ``tol`` (relative) of the stroke's edge: floating
    point may put it on either side."""
    h, r = Fraction(float(cell)), Fraction(float(half))
    c = ((key[0] + Fraction(1, 2)) * h, (key[1] + Fraction(1, 2)) * h)
    d = min(_dist2(c, s) for s in _segments(lines))
    return abs(float(d) ** 0.5 - float(r)) <= tol * max(1.0, float(r), abs(float(c[0])), abs(float(c[1])))
