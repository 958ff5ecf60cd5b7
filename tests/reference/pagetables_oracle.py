"""Naive twins of :mod:`spatialobs.canvas.pagetables`, straight from the definitions."""

from __future__ import annotations

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
