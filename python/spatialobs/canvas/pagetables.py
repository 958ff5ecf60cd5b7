"""Sorted relation tables of a page updated at the rows an edit changed.

A page's relation tables (``overlaps``, ``near``, ``touches``, ``aligned``) are columns sorted
by a unique integer key per pair. After a move, the pairs of a few rows leave a table and a
few pairs enter it; finding the ones that leave and writing the result should cost the pairs
of those rows and one copy of each column, not a pass that reads every pair (masks of the
pairs to drop, keys of every pair, np.insert's index arrays). These helpers do that on the
key column kept beside the table:

* :func:`pair_keys` is the key of a pair of rows (``a`` in the high bits, so the order of the
  keys is the order by ``(a, b)`` the tables are sorted in);
* :func:`rows_at` and :func:`keys_at` find the positions of the pairs with given first rows
  or given keys by binary search;
* :func:`splice` drops positions and merges new sorted rows in, one slice copy per column;
  :func:`splice_in_place` does the same in the columns themselves when as many rows enter as
  leave (a move that keeps its pairs), rewriting only the span between the first and last row
  touched;
* :func:`renumber_pairs` carries a table through a row map (an add or a removal renumbers rows
  in order) with the keys of the pairs that remain, in one pass.

The ``aligned`` table is cut from runs of line values (box edges and centres) that lie within
a tolerance of each other; :func:`sorted_lines` keeps each kind's values sorted with their
positions, :func:`run_bounds` finds a run there in time linear in its length,
:func:`move_value` moves one box's value in place, and :func:`recut_lines` does all of it for one
kind after a move and cuts the runs' lines again (:func:`kind_pairs` cuts them from boxes).

The scans and merges whose numpy calls cost more than their work (:func:`run_bounds`,
:func:`splice`, :func:`renumber_pairs`, :func:`recut_lines`) are compiled (``spatialobs.canvas._cpagetables``); each
keeps its numpy twin, used where the module is not built and held to it by the tests.

Examples
--------
>>> import numpy as np
>>> keys = pair_keys(np.array([0, 0, 2]), np.array([1, 3, 3]))
>>> rows_at(np.array([0, 0, 2]), np.array([0])).tolist()
[0, 1]
>>> cols, k = splice([np.array([0, 0, 2])], keys, np.array([1]), [np.array([1])], pair_keys(np.array([1]), np.array([2])))
>>> cols[0].tolist()
[0, 1, 2]
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from spatialobs import geometry as G
from spatialobs._arrays import int64_columns, unique

#: Whether :func:`rows_at` runs compiled (``spatialobs.canvas._cpagetables.rows_at``) when it can;
#: False gives its numpy twin (the tests run both).
ROWS_KERNEL = True

#: Whether :func:`recut_lines` runs compiled (``spatialobs.canvas._cpagetables.recut_lines``) when it
#: can; False gives its numpy twin (the tests run both).
RECUT_KERNEL = True

__all__ = ["pair_keys", "rows_at", "keys_at", "splice", "splice_in_place", "writable", "sorted_lines", "run_bounds",
           "move_value", "move_values", "renumber_pairs", "kind_pairs", "recut_lines", "recut_kinds",
           "line_values"]

_run_bounds_c: Optional[Callable[[np.ndarray, float, float, float], Tuple[int, int]]]
_cpt: Optional[ModuleType]
try:
    from spatialobs.canvas import _cpagetables as _cpt
    from spatialobs.canvas._cpagetables import run_bounds as _run_bounds_c
except ImportError:  # a source tree without the compiled module
    _cpt = _run_bounds_c = None

#: Bits of the second row in a pair key: rows below 2**31 (int64 keys).
PAIR_SHIFT = 32


def pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The key of each pair ``(a, b)`` of non-negative rows below 2**31: ``a << 32 | b``.

    Parameters
    ----------
    a, b : numpy.ndarray of int64
        Rows, the same length.

    Returns
    -------
    numpy.ndarray of int64
        Keys ordered as the pairs are by ``(a, b)``.
    """
    return (np.asarray(a, np.int64) << PAIR_SHIFT) | np.asarray(b, np.int64)


#: The ``aligned`` table's key layout: ``a << 33 | b << 1 | axis``, a pair of rows and the axis of
#: its kinds (0: a kind of the x axis, the first three; 1: of the y axis); one row per pair and axis.
ALIGNED_SHIFT_A, ALIGNED_SHIFT_B = 33, 1


def aligned_keys(a: Any, b: Any, axis: Any) -> Any:
    """The ``aligned`` keys of pairs ``(a, b)`` of rows below 2**30 on ``axis`` (0 or 1; arrays or ints).

    Parameters
    ----------
    a, b : numpy.ndarray of int64 or int
        Rows.
    axis : numpy.ndarray of int64 or int
        0 for the kinds of the x axis, 1 for those of the y axis.

    Returns
    -------
    numpy.ndarray of int64 or int
        ``a << 33 | b << 1 | axis``, ordered as the rows are by ``(a, b, axis)``.
    """
    return (a << ALIGNED_SHIFT_A) | (b << ALIGNED_SHIFT_B) | axis


def aligned_rows(keys: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The rows ``(a, b)`` of the ``aligned`` keys ``keys``: the inverse of :func:`aligned_keys`.

    Parameters
    ----------
    keys : numpy.ndarray of int64
        Keys ``a << 33 | b << 1 | axis`` of rows below 2**30.

    Returns
    -------
    tuple of numpy.ndarray of int64
        ``(a, b)``, one entry of each per key, in the keys' order (the axis bit dropped).

    Examples
    --------
    >>> import numpy as np
    >>> a, b = aligned_rows(aligned_keys(np.array([3, 7]), np.array([5, 2]), np.array([1, 0])))
    >>> a.tolist(), b.tolist()
    ([3, 7], [5, 2])
    """
    return keys >> ALIGNED_SHIFT_A, (keys >> ALIGNED_SHIFT_B) & 0xFFFFFFFF


def rows_at(col: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions in the sorted column ``col`` of the entries equal to one of ``rows``, ascending.

    Parameters
    ----------
    col : numpy.ndarray of int64
        Sorted (non-decreasing).
    rows : numpy.ndarray of int64
        Sorted and distinct.

    Returns
    -------
    numpy.ndarray of int64
        Every position ``p`` with ``col[p]`` in ``rows``, increasing (rows out of order or repeated:
        each row's positions in the rows' order).

    Notes
    -----
    Compiled (``_cpagetables.rows_at``) for C-contiguous int64 arrays, else :func:`_rows_at_py`,
    its twin; ``ROWS_KERNEL`` False gives the twin.
    """
    if ROWS_KERNEL and _cpt is not None and int64_columns(col, rows):
        return _cpt.rows_at(col, rows)  # (compiled: numpy's six calls were most of its time on a few rows)
    return _rows_at_py(col, rows)


def _rows_at_py(col: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """:func:`rows_at` in numpy (the compiled one's twin)."""
    if not len(col) or not len(rows):
        return np.zeros(0, np.int64)
    lo = np.searchsorted(col, rows, "left")
    cnt = np.searchsorted(col, rows, "right") - lo
    total = int(cnt.sum())
    if not total:
        return np.zeros(0, np.int64)
    return np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(total)


def keys_at(keys: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Positions in the sorted distinct ``keys`` of the values of ``q`` found there, ascending, once each.

    Parameters
    ----------
    keys : numpy.ndarray of int64
        Sorted, distinct.
    q : numpy.ndarray of int64
        Any order; repeats allowed.

    Returns
    -------
    numpy.ndarray of int64
        The distinct positions ``p`` with ``keys[p]`` in ``q``, increasing.
    """
    if not len(keys) or not len(q):
        return np.zeros(0, np.int64)
    at = np.searchsorted(keys, q, "left")
    hit = at < len(keys)
    at = at[hit]
    at = at[keys[at] == np.asarray(q)[hit]]
    return unique(at.astype(np.int64, copy=False))


def splice(cols: Sequence[np.ndarray], keys: np.ndarray, drop: np.ndarray, new_cols: Sequence[np.ndarray],
           new_keys: np.ndarray) -> Tuple[List[np.ndarray], np.ndarray]:
    """Columns sorted by ``keys`` without the rows at ``drop`` and with the rows ``new_cols`` merged in by key.

    The result is what sorting the kept rows and the new ones by key gives (keys distinct:
    a new key equals no kept key), built from slices of the columns: one copy of each
    column, plus work in the number of dropped and new rows.

    Parameters
    ----------
    cols : sequence of numpy.ndarray
        Columns of one table, the same length as ``keys``.
    keys : numpy.ndarray of int64
        The table's keys, sorted and distinct.
    drop : numpy.ndarray of int64
        Positions to drop, sorted and distinct.
    new_cols : sequence of numpy.ndarray
        The new rows, one array per column of ``cols``, in any order.
    new_keys : numpy.ndarray of int64
        Their keys, distinct and none equal to a kept key.

    Returns
    -------
    (list of numpy.ndarray, numpy.ndarray)
        The columns (each in its input's dtype) and their keys.
    """
    o = np.argsort(new_keys, kind="stable")
    nk = new_keys[o]
    nc = [np.asarray(c)[o].astype(col.dtype, copy=False) for c, col in zip(new_cols, cols)]
    if _cpt is not None and keys.dtype == nk.dtype == np.int64 and keys.ndim == 1 and all(
            c.ndim == 1 and c.dtype.kind in "biuf" for c in cols):
        # the merge and the copies compiled (its Python loops followed the number of pieces)
        pieces = _cpt.splice_pieces(len(keys), np.ascontiguousarray(drop, np.int64),
                                    np.searchsorted(keys, nk, "left").astype(np.int64, copy=False))
        return ([_cpt.cut_pieces(np.ascontiguousarray(c), np.ascontiguousarray(n), pieces) for c, n in zip(cols, nc)],
                _cpt.cut_pieces(np.ascontiguousarray(keys), np.ascontiguousarray(nk), pieces))
    return _splice_py(cols, keys, drop, nc, nk)


def _splice_py(cols: Sequence[np.ndarray], keys: np.ndarray, drop: np.ndarray, nc: Sequence[np.ndarray],
               nk: np.ndarray) -> Tuple[List[np.ndarray], np.ndarray]:
    """:func:`splice` after its new rows are sorted by key (``nc``, ``nk``), in Python and numpy (the
    compiled merge's twin)."""
    at = np.searchsorted(keys, nk, "left").tolist()
    # slices of the old rows (start, stop) and of the new ones, in output order
    pieces: List[Tuple[bool, int, int]] = []
    pos = 0
    di, ni, nd, nn = 0, 0, len(drop), len(at)
    dl = drop.tolist()
    while di < nd or ni < nn:
        d = dl[di] if di < nd else len(keys)
        i = at[ni] if ni < nn else len(keys)
        if i <= d:  # new rows go before the old row at i (a dropped row with their key included)
            j = ni
            while ni < nn and at[ni] == i:
                ni += 1
            if i > pos:
                pieces.append((True, pos, i))
                pos = i
            pieces.append((False, j, ni))
        else:
            if d > pos:
                pieces.append((True, pos, d))
            pos = d + 1
            di += 1
    if pos < len(keys):
        pieces.append((True, pos, len(keys)))

    def cut(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        if len(pieces) == 1:
            old_side, s, e = pieces[0]
            return (old if old_side else new)[s:e].copy()
        if not pieces:
            return old[:0].copy()
        return np.concatenate([(old if old_side else new)[s:e] for old_side, s, e in pieces])

    return [cut(c, n) for c, n in zip(cols, nc)], cut(keys, nk)


def renumber_pairs(omap: np.ndarray, a: np.ndarray, b: np.ndarray, bits: np.ndarray, shift_a: int,
                   shift_b: int) -> Tuple[np.ndarray, np.ndarray, int, Optional[np.ndarray]]:
    """A table's pairs through a row map, with the keys of those that remain.

    Compiled for int64 columns (``_cpagetables.renumber_pairs``: one pass for the renumbering,
    the keys and their order), else :func:`_renumber_pairs_py`, its twin.

    Parameters
    ----------
    omap : numpy.ndarray of int64
        The new row of each old row (-1: removed), with one more slot.
    a, b : numpy.ndarray of int64
        The pairs' rows, each in ``[0, len(omap))``.
    bits : numpy.ndarray of int64
        Empty, or the ``aligned`` table's kind masks: a pair with none of the first three kinds
        (a row of the y axis) has its key's lowest bit set.
    shift_a, shift_b : int
        Where the new rows go in a key, each in ``[0, 63)``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, int, numpy.ndarray or None)
        ``omap[a]``, ``omap[b]``, the number of pairs whose two rows remain, and their keys
        ``new_a << shift_a | new_b << shift_b`` in order (None when they do not strictly increase).

    Raises
    ------
    ValueError
        Columns of different lengths, or a shift out of range.
    IndexError
        A row outside the row map.

    Examples
    --------
    >>> omap = np.array([0, -1, 1, -1])
    >>> ra, rb, kept, keys = renumber_pairs(omap, np.array([0, 0]), np.array([1, 2]), np.zeros(0, np.int64), 32, 0)
    >>> ra.tolist(), rb.tolist(), kept, keys.tolist()
    ([0, 0], [-1, 1], 1, [1])
    """
    cols = (omap, a, b, bits)
    if _cpt is not None and all(type(c) is np.ndarray and c.dtype == np.int64 and c.ndim == 1 for c in cols):
        return _cpt.renumber_pairs(*(np.ascontiguousarray(c) for c in cols), shift_a, shift_b)
    return _renumber_pairs_py(omap, a, b, bits, shift_a, shift_b)


def _renumber_pairs_py(omap: np.ndarray, a: np.ndarray, b: np.ndarray, bits: np.ndarray, shift_a: int,
                       shift_b: int) -> Tuple[np.ndarray, np.ndarray, int, Optional[np.ndarray]]:
    """:func:`renumber_pairs` in numpy (the compiled one's twin)."""
    n, m = len(a), len(omap)
    if len(b) != n or (len(bits) and len(bits) != n):
        raise ValueError(f"renumber_pairs needs columns of one length, got {n}, {len(b)} and {len(bits)}")
    if not (0 <= shift_a < 63 and 0 <= shift_b < 63):
        raise ValueError(f"renumber_pairs needs shifts in [0, 63), got {shift_a} and {shift_b}")
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    bad = np.flatnonzero((a < 0) | (a >= m) | (b < 0) | (b >= m))
    if len(bad):
        i = int(bad[0])
        raise IndexError(f"pair {i} ({a[i]}, {b[i]}) is outside the row map of {m} slots")
    ra, rb = np.asarray(omap, np.int64)[a], np.asarray(omap, np.int64)[b]
    live = (ra >= 0) & (rb >= 0)
    keys = (ra[live] << shift_a) | (rb[live] << shift_b)
    if len(bits):
        keys |= np.where((np.asarray(bits, np.int64)[live] & 7) != 0, 0, 1)
    up = len(keys) < 2 or bool((keys[1:] > keys[:-1]).all())
    return ra, rb, int(np.count_nonzero(live)), (keys if up else None)


def writable(c: np.ndarray) -> bool:
    """Whether the column ``c`` may be written in place: writeable, contiguous, and not a view of
    another array (whose other readers would see the writes).

    Parameters
    ----------
    c : numpy.ndarray

    Returns
    -------
    bool
    """
    return bool(c.flags.writeable and c.flags.c_contiguous) and not isinstance(c.base, np.ndarray)


#: Whether :func:`splice_in_place` merges its span in one compiled pass (``_cpagetables.splice_span``)
#: where the columns allow it; False: the span is spliced by :func:`splice` (the twin, for tests).
SPAN_KERNEL = True


def splice_in_place(cols: Sequence[np.ndarray], keys: np.ndarray, drop: np.ndarray, new_cols: Sequence[np.ndarray],
                    new_keys: np.ndarray) -> bool:
    """:func:`splice` written into ``cols`` and ``keys`` themselves when it keeps their length.

    When as many rows enter as leave, the rows before the first dropped or inserted position and
    after the last one stay where they are: only that span is merged again (work in the span,
    not in the table). Nothing is written when the lengths differ or a column cannot be written
    in place (read-only, not contiguous, or a view of another array).

    Parameters
    ----------
    cols, keys, drop, new_cols, new_keys
        As for :func:`splice`.

    Returns
    -------
    bool
        True when the columns and keys now hold what :func:`splice` returns; False when
        nothing was written (the caller splices into new columns).
    """
    if len(drop) != len(new_keys) or not all(writable(c) for c in (*cols, keys)):
        return False
    if not len(drop):
        return True
    if (SPAN_KERNEL and _cpt is not None and int64_columns(keys, drop, new_keys)
            and all(type(n) is np.ndarray and n.ndim == 1 and n.dtype == c.dtype and c.dtype.kind in "biuf"
                    and c.itemsize <= 8 and n.flags.c_contiguous for c, n in zip(cols, new_cols))):
        _cpt.splice_span(list(cols), keys, drop, list(new_cols), new_keys)  # (one pass: the span merged in place)
        return True
    nk = np.sort(new_keys)
    at = np.searchsorted(keys, nk[[0, -1]], "left")
    lo = min(int(drop[0]), int(at[0]))
    hi = max(int(drop[-1]) + 1, int(at[1]))
    seg, sk = splice([c[lo:hi] for c in cols], keys[lo:hi], np.asarray(drop, np.int64) - lo, new_cols, new_keys)
    for c, v in zip(cols, seg):
        c[lo:hi] = v
    keys[lo:hi] = sk
    return True


def sorted_lines(values: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The values sorted and the position of each (ties in any order).

    Parameters
    ----------
    values : numpy.ndarray of float64
        One line value per position, none NaN.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray of int64)
        ``values[order]`` and ``order``.
    """
    o = np.argsort(values).astype(np.int64)
    return values[o], o


def run_bounds(s: np.ndarray, lo: float, hi: float, tol: float) -> Tuple[int, int]:
    """The slice ``[start, stop)`` of the sorted values ``s`` holding the smallest run that contains
    ``[lo, hi]`` and whose outside neighbours lie more than ``tol`` away: the values of ``[lo, hi]``
    and every chain of values each within ``tol`` of the next that reaches it.

    Scans outward from ``[lo, hi]``, so the work follows the run's length: compiled for a
    float64 array (``_cpagetables.run_bounds``), else :func:`_run_bounds_py`, its twin.

    Parameters
    ----------
    s : numpy.ndarray of float64
        Sorted, none NaN.
    lo, hi : float
        ``lo <= hi``.
    tol : float

    Returns
    -------
    (int, int)
        ``start`` and ``stop``; the run's values are ``s[start:stop]`` (``lo`` and ``hi`` need
        not be among them).
    """
    if _run_bounds_c is not None and type(s) is np.ndarray and s.dtype == np.float64 and s.ndim == 1:
        return _run_bounds_c(np.ascontiguousarray(s), float(lo), float(hi), float(tol))
    return _run_bounds_py(s, lo, hi, tol)


def _run_bounds_py(s: np.ndarray, lo: float, hi: float, tol: float) -> Tuple[int, int]:
    """:func:`run_bounds` in numpy, in growing chunks (the compiled one's twin)."""
    a = int(np.searchsorted(s, lo, "left"))
    b = int(np.searchsorted(s, hi, "right"))
    start, nxt, k = a, lo, 64
    while start > 0:
        i0 = max(0, start - k)
        seg = s[i0:start]
        gaps = np.empty(len(seg), np.float64)
        gaps[:-1] = seg[1:]
        gaps[-1] = nxt
        bad = np.flatnonzero(~((gaps - seg) <= tol))
        if len(bad):
            start = i0 + int(bad[-1]) + 1
            break
        start, nxt, k = i0, float(s[i0]), 4 * k
    stop, prv, k, n = b, hi, 64, len(s)
    while stop < n:
        i1 = min(n, stop + k)
        seg = s[stop:i1]
        gaps = np.empty(len(seg), np.float64)
        gaps[0] = prv
        gaps[1:] = seg[:-1]
        bad = np.flatnonzero(~((seg - gaps) <= tol))
        if len(bad):
            stop += int(bad[0])
            break
        stop, prv, k = i1, float(s[i1 - 1]), 4 * k
    return start, stop




def move_value(s: np.ndarray, pos: np.ndarray, p: int, old: float, new: float) -> None:
    """Move position ``p``'s value from ``old`` to ``new`` in the sorted values ``s`` (positions
    ``pos``), in place, shifting the entries between by one.

    Parameters
    ----------
    s : numpy.ndarray of float64
        Sorted values, holding ``old`` for ``p``.
    pos : numpy.ndarray of int64
        The position of each value.
    p : int
    old, new : float

    Raises
    ------
    ValueError
        When ``p`` has no entry with the value ``old``.
    """
    i = int(np.searchsorted(s, old, "left"))
    j = int(np.searchsorted(s, old, "right"))
    hit = np.flatnonzero(pos[i:j] == p)
    if not len(hit):
        raise ValueError(f"position {p} has no line value {old!r}")
    k = i + int(hit[0])
    t = int(np.searchsorted(s, new, "left"))
    if t > k + 1:  # later: the entries between move down one
        s[k:t - 1] = s[k + 1:t]
        pos[k:t - 1] = pos[k + 1:t]
        s[t - 1], pos[t - 1] = new, p
    elif t <= k:  # earlier: they move up one
        s[t + 1:k + 1] = s[t:k]
        pos[t + 1:k + 1] = pos[t:k]
        s[t], pos[t] = new, p
    else:  # the same place
        s[k] = new


def move_values(line: Tuple[np.ndarray, np.ndarray], changed: np.ndarray, c_old: np.ndarray,
                c_new: np.ndarray) -> None:
    """:func:`move_value` for each of the positions ``changed`` whose value differs, in order.

    Parameters
    ----------
    line : (numpy.ndarray of float64, numpy.ndarray of int64)
        Sorted values and the position of each (see :func:`sorted_lines`); written in place.
    changed : numpy.ndarray of int64
        Positions.
    c_old, c_new : numpy.ndarray of float64
        Their values before and after.

    Raises
    ------
    ValueError
        When a position has no entry with its old value (see :func:`move_value`).
    """
    s, pos = line
    for p, was, now in zip(changed.tolist(), c_old.tolist(), c_new.tolist()):
        if was != now:
            move_value(s, pos, p, was, now)


def kind_pairs(boxes: np.ndarray, rows: np.ndarray, parent: np.ndarray, u: np.ndarray, tol: float,
               kind: int) -> np.ndarray:
    """The ``aligned`` keys of kind ``kind`` among the solid positions ``u``: the alignment kernel's
    pairs of that kind among their boxes, kept where both rows have the same parent.

    Parameters
    ----------
    boxes : numpy.ndarray of float64, shape (k, 4)
        The solid boxes, one per solid position.
    rows : numpy.ndarray of int64
        The page row of each solid position (increasing).
    parent : numpy.ndarray of int64
        The parent row of each page row (-1 on the page).
    u : numpy.ndarray of int64
        Solid positions, sorted and distinct.
    tol : float
        The alignment tolerance.
    kind : int
        0..5, in ``ALIGN_KINDS`` order (left, centre x, right, top, centre y, bottom).

    Returns
    -------
    numpy.ndarray of int64
        Keys ``a << 33 | b << 1 | axis`` (see ``aligned_keys``), one per pair, in the kernel's order.
    """
    pairs, _ = G.alignment_pairs(boxes[u], tol, kind=kind)  # that kind's lines only
    a, b = rows[u[pairs[0]]], rows[u[pairs[1]]]
    same = parent[a] == parent[b]
    return aligned_keys(a[same], b[same], int(kind >= 3))


def recut_lines(line: Tuple[np.ndarray, np.ndarray], changed: np.ndarray, c_old: np.ndarray, c_new: np.ndarray,
                tol: float, one: bool, boxes: np.ndarray, rows: np.ndarray, parent: np.ndarray,
                kind: int) -> Tuple[np.ndarray, np.ndarray]:
    """One kind of the ``aligned`` table cut again after solid boxes moved, found in its sorted line values.

    The values of the changed positions are moved from ``c_old`` to ``c_new`` in ``line``, in
    place. The runs cut again are those each new value joins and, as the other boxes now stand,
    those each old value left (with ``one``, a single box moved and none removed: a left run inside a
    joined one is that run). Their boxes are cut into lines as the alignment kernel cuts them. When
    one box moved within one run (its old and new values in it), only the lines that differ from the
    run's lines before the move, or that hold the box, are cut again: a line is every value from its
    first to its first plus ``tol``, so a line of the other cut with the same first value that holds
    neither the box then nor now has the same boxes, and its pairs stay as they are.
    Compiled (``_cpagetables.recut_lines``) for float64 values and int64 positions, else
    :func:`_recut_lines_py`, its twin; ``RECUT_KERNEL`` False gives the twin.

    Parameters
    ----------
    line : (numpy.ndarray of float64, numpy.ndarray of int64)
        The kind's line values sorted and the solid position of each (see :func:`sorted_lines`),
        as before the move; written in place.
    changed : numpy.ndarray of int64
        The solid positions whose boxes changed.
    c_old, c_new : numpy.ndarray of float64
        Their line values before and after, finite.
    tol : float
        The alignment tolerance.
    one : bool
        Whether only one box changed and none was removed.
    boxes : numpy.ndarray of float64, shape (k, 4)
        The solid boxes after the move, one per solid position.
    rows : numpy.ndarray of int64
        The page row of each solid position (increasing).
    parent : numpy.ndarray of int64
        The parent row of each page row.
    kind : int
        0..5, in ``ALIGN_KINDS`` order.

    Returns
    -------
    (numpy.ndarray of int64, numpy.ndarray of int64)
        The page rows of the lines cut again (sorted, distinct) and the keys of the pairs of kind
        ``kind`` among them whose rows share a parent (see :func:`kind_pairs`; any order). The
        table's pairs of that kind whose two rows are cut again are replaced by these; the others
        are the same before and after the move.

    Raises
    ------
    ValueError
        When a changed position has no entry with its old value, or the columns' lengths disagree.
    """
    s, pos = line
    if (RECUT_KERNEL and _cpt is not None and type(s) is np.ndarray and s.dtype == np.float64
            and int64_columns(pos, changed, rows, parent) and writable(s) and writable(pos)):
        return _cpt.recut_lines(s, pos, changed, np.ascontiguousarray(c_old, np.float64),
                                np.ascontiguousarray(c_new, np.float64), float(tol), bool(one), boxes, rows, parent,
                                int(kind))
    return _recut_lines_py(line, changed, c_old, c_new, tol, one, boxes, rows, parent, kind)


def line_values(boxes: np.ndarray, kind: int) -> np.ndarray:
    """The coordinate of each box that lines of kind ``kind`` are cut by.

    Parameters
    ----------
    boxes : numpy.ndarray of float64, shape (k, 4)
        Boxes ``(x0, y0, x1, y1)``.
    kind : int
        0..5, in ``ALIGN_KINDS`` order: left, centre, right, top, middle, bottom.

    Returns
    -------
    numpy.ndarray of float64
        One value per box (the centre and middle as ``(a + b) * 0.5``).

    Examples
    --------
    >>> line_values(np.array([[0.0, 10.0, 4.0, 20.0]]), 1).tolist(), line_values(np.array([[0.0, 10.0, 4.0, 20.0]]), 5).tolist()
    ([2.0], [20.0])
    """
    if kind == 0:
        return boxes[:, 0]
    if kind == 1:
        return (boxes[:, 0] + boxes[:, 2]) * 0.5
    if kind == 2:
        return boxes[:, 2]
    if kind == 3:
        return boxes[:, 1]
    if kind == 4:
        return (boxes[:, 1] + boxes[:, 3]) * 0.5
    return boxes[:, 3]


def recut_kinds(lines: Sequence[Tuple[np.ndarray, np.ndarray]], changed: np.ndarray, before: np.ndarray,
                now: np.ndarray, tol: float, one: bool, boxes: np.ndarray, rows: np.ndarray, parent: np.ndarray
                ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`recut_lines` for the six kinds in ``ALIGN_KINDS`` order, their results merged.

    Compiled in one call (``_cpagetables.recut_kinds``) when every kind's values are float64 and
    its positions int64, both writable; else :func:`_recut_kinds_py`, its twin (six
    :func:`recut_lines` calls); ``RECUT_KERNEL`` False gives the twin.

    Parameters
    ----------
    lines : sequence of six (numpy.ndarray of float64, numpy.ndarray of int64)
        Each kind's sorted line values and solid positions (see :func:`sorted_lines`), as before the
        move; written in place.
    changed : numpy.ndarray of int64
        The solid positions whose boxes changed.
    before, now : numpy.ndarray of float64, shape (len(changed), 4)
        Their boxes before and after, finite; their line values are :func:`line_values`'.
    tol, one, boxes, rows, parent
        As for :func:`recut_lines`.

    Returns
    -------
    (numpy.ndarray of int64, numpy.ndarray of int64, numpy.ndarray of int64, numpy.ndarray of int64)
        The page rows cut again for some kind (sorted, distinct) and per row the bits
        ``1 << kind`` of the kinds it is cut again for; the keys of the new pairs, kind by kind (each
        kind's as :func:`recut_lines` gives them), and per key its kind's bit.

    Raises
    ------
    ValueError
        As :func:`recut_lines`, or when ``lines`` does not hold six kinds or the boxes' shapes
        disagree with ``changed``.
    """
    if (RECUT_KERNEL and _cpt is not None and len(lines) == 6 and int64_columns(changed, rows, parent)
            and all(type(v) is np.ndarray and v.dtype == np.float64 and v.ndim == 1 and int64_columns(p)
                    and writable(v) and writable(p) for v, p in lines)):
        return _cpt.recut_kinds(list(lines), changed, np.asarray(before, np.float64), np.asarray(now, np.float64),
                                float(tol), bool(one), boxes, rows, parent)
    return _recut_kinds_py(lines, changed, before, now, tol, one, boxes, rows, parent)


def _recut_kinds_py(lines: Sequence[Tuple[np.ndarray, np.ndarray]], changed: np.ndarray, before: np.ndarray,
                    now: np.ndarray, tol: float, one: bool, boxes: np.ndarray, rows: np.ndarray, parent: np.ndarray
                    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    # The twin of _cpagetables.recut_kinds: recut_lines kind by kind, the results merged by numpy.
    if len(lines) != 6:
        raise ValueError(f"recut_kinds needs the lines of the six kinds, got {len(lines)}")
    before, now = np.asarray(before, np.float64).reshape(-1, 4), np.asarray(now, np.float64).reshape(-1, 4)
    if len(before) != len(changed) or len(now) != len(changed):
        raise ValueError(f"recut_kinds needs a box before and after per changed position ({len(changed)}), got "
                         f"({before.shape[0]}, 4) and ({now.shape[0]}, 4)")
    cuts: List[np.ndarray] = []
    keys: List[np.ndarray] = []
    bits: List[np.ndarray] = []
    for kind in range(6):
        cut, k = recut_lines(lines[kind], changed, line_values(before, kind), line_values(now, kind), tol, one,
                             boxes, rows, parent, kind)
        cuts.append(cut)
        keys.append(k)
        bits.append(np.full(len(k), 1 << kind, np.int64))
    cut_rows = unique(np.concatenate(cuts))
    cut_bits = np.zeros(len(cut_rows), np.int64)
    for kind, cut in enumerate(cuts):
        cut_bits[np.searchsorted(cut_rows, cut)] |= 1 << kind
    return cut_rows, cut_bits, np.concatenate(keys).astype(np.int64), np.concatenate(bits)


def _recut_lines_py(line: Tuple[np.ndarray, np.ndarray], changed: np.ndarray, c_old: np.ndarray, c_new: np.ndarray,
                    tol: float, one: bool, boxes: np.ndarray, rows: np.ndarray, parent: np.ndarray,
                    kind: int) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`recut_lines` in numpy: :func:`run_bounds` and :func:`move_value` per value, the runs'
    lines cut by the alignment kernel (:func:`kind_pairs`): the compiled one's twin."""
    s, pos = line
    left: List[Tuple[float, float, float]] = []  # (old value, the run it left among the old values)
    for x in c_old[c_old != c_new].tolist():
        a, b = run_bounds(s, x, x, tol)
        left.append((x, float(s[a]), float(s[b - 1])))
    move_values(line, changed, c_old, c_new)
    slices: List[Tuple[int, int]] = []
    spans: List[Tuple[float, float]] = []
    for x in c_new.tolist():  # the lines a changed box joins
        if any(lo <= x <= hi for lo, hi in spans):
            continue
        a, b = run_bounds(s, x, x, tol)
        slices.append((a, b))
        spans.append((float(s[a]), float(s[b - 1])))
    for x, lo, hi in left:  # the lines it left, as the other boxes now stand
        if one and any(a <= x <= b for a, b in spans):
            continue
        slices.append(run_bounds(s, lo, hi, tol))
    merged: List[List[int]] = []  # by start, overlapping or touching ones merged
    for a, b in sorted((a, b) for a, b in slices if b > a):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    if one and len(changed) == 1 and len(merged) == 1 and s[merged[0][0]] <= c_old[0] <= s[merged[0][1] - 1]:
        return _recut_one_py(s, pos, merged[0][0], merged[0][1], int(changed[0]), float(c_old[0]), tol, boxes, rows,
                             parent, kind)
    parts = [pos[a:b] for a, b in merged]
    u = unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
    keys = kind_pairs(boxes, rows, parent, u, tol, kind) if len(u) > 1 else np.zeros(0, np.int64)
    return rows[u], keys


def _greedy_lines(v: List[float], tol: float) -> List[int]:
    """The alignment kernel's greedy line cut of the sorted values ``v``: each line's first index, then ``len(v)``."""
    starts: List[int] = []
    t = 0
    while t < len(v):
        starts.append(t)
        e = t + 1
        while e < len(v) and v[e] - v[t] <= tol:
            e += 1
        t = e
    return starts + [len(v)]


def _recut_one_py(s: np.ndarray, pos: np.ndarray, a: int, b: int, p: int, old: float, tol: float, boxes: np.ndarray,
                  rows: np.ndarray, parent: np.ndarray, kind: int) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`_recut_lines_py` for one moved box whose old and new values lie in the one slice ``[a, b)``
    of the values now: only the lines that differ from the slice's lines before (the box's value put
    back), or that hold the box, are cut again (see the compiled ``_recut_one``)."""
    vals, ps = s[a:b].tolist(), pos[a:b].tolist()
    qn = ps.index(p)
    ov, op = vals[:qn] + vals[qn + 1:], ps[:qn] + ps[qn + 1:]
    qo = 0
    while qo < len(ov) and ov[qo] < old:
        qo += 1
    ov.insert(qo, old)
    op.insert(qo, p)
    sn, so = _greedy_lines(vals, tol), _greedy_lines(ov, tol)
    same_n, same_o = [False] * (len(sn) - 1), [False] * (len(so) - 1)
    i = j = 0
    while i < len(sn) - 1 and j < len(so) - 1:
        if vals[sn[i]] == ov[so[j]]:
            if not sn[i] <= qn < sn[i + 1] and not so[j] <= qo < so[j + 1]:
                same_n[i] = same_o[j] = True
            i += 1
            j += 1
        elif vals[sn[i]] < ov[so[j]]:
            i += 1
        else:
            j += 1
    now = [q for i, keep in enumerate(same_n) if not keep for q in ps[sn[i]:sn[i + 1]]]
    then = [q for j, keep in enumerate(same_o) if not keep for q in op[so[j]:so[j + 1]]]
    cut = np.array(sorted({int(rows[q]) for q in now + then}), np.int64)
    u = np.array(sorted(now), np.int64)
    keys = kind_pairs(boxes, rows, parent, u, tol, kind) if len(u) > 1 else np.zeros(0, np.int64)
    return cut, keys
