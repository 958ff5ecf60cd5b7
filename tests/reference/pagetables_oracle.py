"""Naive twins of :mod:`spatialobs.canvas.pagetables`, straight from the definitions."""

from __future__ import annotations

import math
from typing import List, Sequence, Tuple

import numpy as np


def pair_keys(a: Sequence[int], b: Sequence[int]) -> np.ndarray:
    return np.array([int(x) * 2**32 + int(y) for x, y in zip(a, b)], dtype=np.int64)


def aligned_keys(a: Sequence[int], b: Sequence[int], axis: Sequence[int]) -> np.ndarray:
    return np.array([int(x) * 2**33 + int(y) * 2 + int(z) for x, y, z in zip(a, b, axis)], dtype=np.int64)


def rows_at(col: Sequence[int], rows: Sequence[int]) -> np.ndarray:
    want = {int(r) for r in rows}
    return np.array([p for p, v in enumerate(col) if int(v) in want], dtype=np.int64)


def keys_at(keys: Sequence[int], q: Sequence[int]) -> np.ndarray:
    want = {int(v) for v in q}
    return np.array([p for p, k in enumerate(keys) if int(k) in want], dtype=np.int64)


def splice(cols: Sequence[np.ndarray], keys: np.ndarray, drop: Sequence[int], new_cols: Sequence[np.ndarray],
           new_keys: np.ndarray) -> Tuple[List[np.ndarray], np.ndarray]:
    """The kept rows and the new ones, sorted by key (keys distinct)."""
    gone = {int(p) for p in drop}
    rows = [(int(keys[p]), [c[p] for c in cols]) for p in range(len(keys)) if p not in gone]
    rows += [(int(new_keys[j]), [c[j] for c in new_cols]) for j in range(len(new_keys))]
    rows.sort(key=lambda r: r[0])
    out = [np.array([r[1][i] for r in rows], dtype=c.dtype) for i, c in enumerate(cols)]
    return out, np.array([r[0] for r in rows], dtype=np.int64)


def table_keys(name: str, cols: Sequence[np.ndarray]) -> np.ndarray:
    """The key of each pair of a relation table, as the observation keys them: ``a * 2**32 + b``;
    for ``aligned`` ``a * 2**33 + b * 2 + axis`` (axis 0 when the kinds are of x: left, centre, right); for
    ``touches`` (connector, shape, terminal) ``(connector * 2 + terminal) * 2**32 + shape``."""
    a, b = cols[0], cols[1]
    if name == "touches":
        return np.array([(int(c) * 2 + int(t)) * 2**32 + int(s) for c, s, t in zip(a, b, cols[2])], dtype=np.int64)
    if name == "aligned":
        return np.array([int(p) * 2**33 + int(q) * 2 + (0 if int(m) & 7 else 1) for p, q, m in zip(a, b, cols[2])],
                        dtype=np.int64)
    return pair_keys(a, b)


def assert_keys_of(tables: object) -> None:
    """The key columns a version's tables carry are those of their pairs, strictly increasing."""
    for name, k in getattr(tables, "keys").items():
        want = table_keys(name, getattr(tables, name))
        assert k.dtype == np.int64 and np.array_equal(k, want), name
        assert bool((k[1:] > k[:-1]).all()), name


def run_values(values: Sequence[float], lo: float, hi: float, tol: float) -> List[float]:
    """The values of the smallest run containing [lo, hi] whose outside neighbours lie more than ``tol``
    away: [lo, hi] grown to every value within ``tol`` of it, again and again until none is added."""
    span_lo, span_hi = lo, hi
    taken = sorted(v for v in values if lo <= v <= hi)
    while True:
        grown = [v for v in values if (span_lo - v <= tol and v <= span_lo) or (v - span_hi <= tol and v >= span_hi)
                 or span_lo <= v <= span_hi]
        new_lo = min(grown + [span_lo])
        new_hi = max(grown + [span_hi])
        if (new_lo, new_hi) == (span_lo, span_hi):
            break
        span_lo, span_hi = new_lo, new_hi
    taken = sorted(v for v in values if span_lo <= v <= span_hi)
    return taken


def check_lines(lines: object, sb: np.ndarray, line_values: object) -> None:
    """Sorted line values per kind (None: not sorted yet), with their positions, as a fresh sort of the boxes ``sb`` gives."""
    for kind, line in enumerate(lines):  # type: ignore[call-overload]
        if line is None:  # not sorted yet
            continue
        s, pos = line
        v = line_values(sb, kind)  # type: ignore[operator]
        assert np.array_equal(np.sort(pos), np.arange(len(sb))), kind  # every position once
        assert v[pos].tobytes() == s.tobytes(), kind  # each value is its position's
        assert bool((s[1:] >= s[:-1]).all()), kind  # sorted


def _grown(b: Sequence[float], g: float) -> List[float]:
    m = g + 1e-9 * (g + max(abs(v) for v in b)) + 1e-300
    return [b[0] - m, b[1] - m, b[2] + m, b[3] + m]


def _gap(a: Sequence[float], b: Sequence[float]) -> float:
    dx = max(0.0, max(b[0] - a[2], a[0] - b[2]))
    dy = max(0.0, max(b[1] - a[3], a[1] - b[3]))
    return math.sqrt(dx * dx + dy * dy)


def _pos_area(a: Sequence[float], b: Sequence[float]) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _meets(a: Sequence[float], b: Sequence[float]) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def near_affected(q: Sequence[Sequence[float]], sb: Sequence[Sequence[float]], gap: float, changed: Sequence[int],
                  before: Sequence[Sequence[float]]) -> Tuple[List[int], List[List[float]]]:
    """The rows whose ``near`` pairs can change (``_cpagetables.near_affected``), every box against every
    grown query box: the changed ones, and those within ``gap`` of a query box without a positive-area
    overlap; with the grown box each had (its box before when it changed)."""
    aff = set(changed)
    for qb in q:
        g = _grown(qb, gap)
        aff |= {i for i, b in enumerate(sb) if _meets(g, b) and _gap(qb, b) <= gap and not _pos_area(qb, b)}
    out = sorted(aff)
    was = [_grown(before[list(changed).index(r)] if r in changed else sb[r], gap) for r in out]
    return out, was


def near_touched(na: Sequence[int], nb: Sequence[int], sub: Sequence[int], subpos: Sequence[int],
                 affected: Sequence[int], was: Sequence[Sequence[float]], sb: Sequence[Sequence[float]],
                 gap: float) -> Tuple[List[int], List[int]]:
    """The positions of the pairs of table ``(na, nb)`` with an affected row as first end, or as second
    end with a first end whose box meets the affected row's grown box ``was``; and the solid positions
    of the affected rows and of both ends of those pairs (``_cpagetables.near_touched``)."""
    rows = [sub[p] for p in affected]
    at = set()
    for t, (a, b) in enumerate(zip(na, nb)):
        if a in rows:
            at.add(t)
        elif b in rows and _meets(was[rows.index(b)], sb[subpos[a]]):
            at.add(t)
    halo = set(affected) | {subpos[na[t]] for t in at} | {subpos[nb[t]] for t in at}
    return sorted(at), sorted(halo)


def near_pairs(sb: Sequence[Sequence[float]], sub: Sequence[int], size: Sequence[int], halo: Sequence[int],
               affected: Sequence[int], gap: float, k: int) -> List[Tuple[int, int, float]]:
    """``(a, b, gap)`` of the pairs among the ``k`` nearest of each halo row (every box within ``gap``
    without a positive-area overlap, by gap then position) with an end affected, as page rows a < b,
    sorted, native kin left out (``_cpagetables.near_pairs``)."""
    found = {}
    for h in halo:
        g = _grown(sb[h], gap)
        cand = sorted((_gap(sb[h], b), i) for i, b in enumerate(sb)
                      if i != h and _meets(g, b) and not _pos_area(sb[h], b) and _gap(sb[h], b) <= gap)
        for d, i in cand[:k]:
            if h in affected or i in affected:
                found.setdefault((min(h, i), max(h, i)), d)
    out = []
    for (x, y), d in sorted(found.items()):
        a, b = sub[x], sub[y]
        if not (a < b < a + size[a] or b < a < b + size[b]):
            out.append((a, b, d))
    return sorted(out)


def aligned_merged(aa: Sequence[int], ab: Sequence[int], am: Sequence[int], keys: Sequence[int],
                   cut_rows: Sequence[int], cut_bits: Sequence[int], nk: Sequence[int], nb: Sequence[int]) -> dict:
    """The ``aligned`` table as ``{key: kind bits}`` after its rows ``cut_rows`` were cut again for the kinds
    of ``cut_bits`` and the pairs ``nk`` (bits ``nb``) were found: a pair keeps the kinds its rows were not
    both cut again for, the new bits are or-ed in, a pair left with none is gone."""
    bits = dict(zip(cut_rows, cut_bits))
    out = {}
    for a, b, m, k in zip(aa, ab, am, keys):
        out[k] = m & ~(bits.get(a, 0) & bits.get(b, 0))
    for k, m in zip(nk, nb):
        out[k] = out.get(k, 0) | m
    return {k: m for k, m in out.items() if m}


def pairs_of(na: Sequence[int], nb: Sequence[int], sub: Sequence[int], subpos: Sequence[int], pos: Sequence[int],
             boxes: Sequence[Sequence[float]], sb: Sequence[Sequence[float]]) -> List[int]:
    """The positions of the pairs of table ``(na, nb)`` with a row of solid positions ``pos`` as first end,
    or as second end with a first end whose box meets (closed) that row's box in ``boxes``
    (``_cpagetables.pairs_of`` with every hit)."""
    rows = [sub[p] for p in pos]
    return [t for t, (a, b) in enumerate(zip(na, nb))
            if a in rows or (b in rows and _meets(boxes[rows.index(b)], sb[subpos[a]]))]


def overlaps_found(sb: Sequence[Sequence[float]], sub: Sequence[int], boxes: Sequence[Sequence[float]],
                   size: Sequence[int], changed: Sequence[int]) -> List[Tuple[int, int]]:
    """The ``overlaps`` pairs of the changed solid positions (``_cpagetables.overlaps_found`` with every
    hit): positive-area overlaps, as page rows, neither containment (unless the same box) nor native kin."""
    out = set()
    for c in changed:
        for i, b in enumerate(sb):
            if i != c and _pos_area(sb[c], b):
                x, y = sub[min(i, c)], sub[max(i, c)]
                A, B = boxes[x], boxes[y]
                a_in_b = A[0] >= B[0] and A[1] >= B[1] and A[2] <= B[2] and A[3] <= B[3]
                b_in_a = B[0] >= A[0] and B[1] >= A[1] and B[2] <= A[2] and B[3] <= A[3]
                kin = x < y < x + size[x] or y < x < y + size[y]
                if (not (a_in_b or b_in_a) or (a_in_b and b_in_a)) and not kin:
                    out.add((x, y))
    return sorted(out)


def _holds(a: Sequence[float], x: Sequence[float]) -> bool:
    return a[0] <= x[0] and x[2] <= a[2] and a[1] <= x[1] and x[3] <= a[3] and list(a) != list(x)


def inside_redo(sb: Sequence[Sequence[float]], changed: Sequence[int], ci: Sequence[int], co: Sequence[int],
                sub: Sequence[int], subpos: Sequence[int], orphans: Sequence[int]) -> List[int]:
    """The solid positions whose tightest container can differ (``_cpagetables.inside_redo`` with every
    hit): the changed ones, the orphans, those a changed row held, those a changed box holds now."""
    rows = {sub[c] for c in changed}
    out = set(changed) | set(orphans) | {subpos[i] for i, o in zip(ci, co) if o in rows}
    out |= {i for c in changed for i, b in enumerate(sb) if i != c and _holds(sb[c], b)}
    return sorted(out)


def inside_found(sb: Sequence[Sequence[float]], sub: Sequence[int], size: Sequence[int], redo: Sequence[int],
                 ci: Sequence[int], co: Sequence[int]) -> List[Tuple[int, int]]:
    """The ``inside`` table as ``(inner, container)`` pairs after the tightest container of each of
    ``redo`` was found again among every box (least area, the later row among equals, no native kin)."""
    again = {sub[r] for r in redo}
    out = [(i, o) for i, o in zip(ci, co) if i not in again]
    for r in redo:
        best = None
        for i, b in enumerate(sb):
            x, y = sub[i], sub[r]
            if i == r or not _holds(b, sb[r]) or x < y < x + size[x] or y < x < y + size[y]:
                continue
            key = ((b[2] - b[0]) * (b[3] - b[1]), -x)
            if best is None or key < best[0]:
                best = (key, x)
        if best is not None:
            out.append((sub[r], best[1]))
    return sorted(out)


def touches_strips(er: Sequence[int], et: Sequence[int], ex: Sequence[float], ey: Sequence[float], mv: Sequence[int],
                   keys: Sequence[int], changed: Sequence[int], before: Sequence[Sequence[float]],
                   sb: Sequence[Sequence[float]], sub: Sequence[int], boxes: Sequence[Sequence[float]], tol: float
                   ) -> Tuple[List[int], List[Tuple[int, int, int]]]:
    """The ``touches`` pairs that leave and enter as each changed box moved from ``before`` to ``sb``,
    every unbound end against every box (``_cpagetables.touches_strips``): the positions in ``keys`` of
    the pairs of an end (of a connector not in ``mv``) whose square met the box before, and the
    ``(connector, shape, terminal)`` of the ends whose square meets it now and that lie on its edge."""
    def square(k: int) -> List[float]:
        return [ex[k] - tol, ey[k] - tol, ex[k] + tol, ey[k] + tol]

    at = {k: p for p, k in enumerate(keys)}
    drop: List[int] = []
    new: List[Tuple[int, int, int]] = []
    for t, c in enumerate(changed):
        r = sub[c]
        ends = [k for k in range(len(er)) if er[k] not in mv]
        for k in ends:
            key = ((er[k] * 2 + et[k]) << 32) | r
            if _pos_area(square(k), before[t]) and key in at:
                drop.append(at[key])
        b = boxes[r]
        for k in ends:
            depth = min(ex[k] - b[0], b[2] - ex[k], ey[k] - b[1], b[3] - ey[k])
            if _pos_area(square(k), sb[c]) and depth <= tol and r != er[k]:
                new.append((er[k], r, et[k]))
    return drop, new
