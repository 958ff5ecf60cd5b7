# cython: language_level=3, boundscheck=False, wraparound=False
"""The sorted relation tables' scans, compiled.

``run_bounds`` finds a run of sorted line values (see
:func:`spatialobs.canvas.pagetables.run_bounds`, which calls it for float64 arrays); a run
holds a few values to a few hundred, so numpy's per-call cost was most of its time.
``splice_pieces`` and ``cut_pieces`` are :func:`spatialobs.canvas.pagetables.splice`'s merge of
the dropped and new rows and its copies of slices, whose Python loops followed the number of
pieces. The pure-Python twins are ``spatialobs.canvas.pagetables._run_bounds_py`` and
``_splice_py``; tests compare each pair.
"""

from libc.math cimport isnan
from libc.stdint cimport int64_t
from libc.string cimport memcpy

import numpy as np


def run_bounds(const double[::1] s, double lo, double hi, double tol):
    """``[start, stop)`` of the run of ``s`` holding ``[lo, hi]`` (see ``pagetables.run_bounds``)."""
    cdef Py_ssize_t n = s.shape[0]
    cdef Py_ssize_t a, b, m, start, stop
    cdef double nxt, prv, v
    # the two binary searches as numpy's searchsorted does them ("left" for lo, "right" for hi;
    # ``s`` holds no NaN, a NaN bound sorts after every value)
    if isnan(lo):
        a = n
    else:
        a, b = 0, n
        while a < b:
            m = (a + b) >> 1
            if s[m] < lo:
                a = m + 1
            else:
                b = m
    if isnan(hi):
        b = n
    else:
        start, b = 0, n
        while start < b:
            m = (start + b) >> 1
            if s[m] <= hi:
                start = m + 1
            else:
                b = m
    # outward while each gap to the next value is within tol (a NaN gap ends the run)
    start, nxt = a, lo
    while start > 0:
        v = s[start - 1]
        if not (nxt - v <= tol):
            break
        start -= 1
        nxt = v
    stop, prv = b, hi
    while stop < n:
        v = s[stop]
        if not (v - prv <= tol):
            break
        stop += 1
        prv = v
    return start, stop


cdef inline Py_ssize_t _piece(int64_t[:, ::1] p, Py_ssize_t k, int64_t kind, int64_t start, int64_t stop):
    # writes piece k (kind 1: old rows, 0: new rows) and returns the next piece's index
    p[k, 0] = kind
    p[k, 1] = start
    p[k, 2] = stop
    return k + 1


def splice_pieces(Py_ssize_t n, const int64_t[::1] drop, const int64_t[::1] at):
    """The slices ``splice`` copies, in output order: rows ``(1, start, stop)`` of the old rows,
    ``(0, start, stop)`` of the new ones (see ``pagetables._splice_py``, the same merge)."""
    cdef Py_ssize_t nd = drop.shape[0], nn = at.shape[0]
    out = np.empty((2 * nn + nd + 1, 3), np.int64)
    cdef int64_t[:, ::1] p = out
    cdef Py_ssize_t k = 0, di = 0, ni = 0, j
    cdef int64_t pos = 0, d, i
    while di < nd or ni < nn:
        d = drop[di] if di < nd else n
        i = at[ni] if ni < nn else n
        if i <= d:  # new rows go before the old row at i (a dropped row with their key included)
            j = ni
            while ni < nn and at[ni] == i:
                ni += 1
            if i > pos:
                k = _piece(p, k, 1, pos, i)
                pos = i
            k = _piece(p, k, 0, j, ni)
        else:
            if d > pos:
                k = _piece(p, k, 1, pos, d)
            pos = d + 1
            di += 1
    if pos < n:
        k = _piece(p, k, 1, pos, n)
    return out[:k]


def cut_pieces(old, new, const int64_t[:, ::1] pieces):
    """One column of ``splice``: the slices ``pieces`` of ``old`` and ``new`` (1-D, C-contiguous, one
    dtype) copied one after another into a new array of that dtype."""
    if old.ndim != 1 or new.ndim != 1 or old.dtype != new.dtype:
        raise ValueError(f"cut_pieces needs two 1-D columns of one dtype, got {old.dtype} {old.shape} "
                         f"and {new.dtype} {new.shape}")
    cdef Py_ssize_t w = old.itemsize, k, total = 0, at = 0, s, e
    cdef Py_ssize_t no = old.shape[0], nn = new.shape[0]
    for k in range(pieces.shape[0]):
        s, e = pieces[k, 1], pieces[k, 2]
        if s < 0 or e < s or e > (no if pieces[k, 0] else nn):
            raise IndexError(f"piece {k} ({s}, {e}) is outside its column")
        total += e - s
    out = np.empty(total, old.dtype)
    cdef const unsigned char[::1] ob = old.view(np.uint8)
    cdef const unsigned char[::1] nb = new.view(np.uint8)
    cdef unsigned char[::1] dst = out.view(np.uint8)
    for k in range(pieces.shape[0]):
        s, e = pieces[k, 1], pieces[k, 2]
        if e > s:
            if pieces[k, 0]:
                memcpy(&dst[at * w], &ob[s * w], (e - s) * w)
            else:
                memcpy(&dst[at * w], &nb[s * w], (e - s) * w)
            at += e - s
    return out


def renumber_pairs(const int64_t[::1] omap, const int64_t[::1] a, const int64_t[::1] b, const int64_t[::1] bits,
                   int shift_a, int shift_b):
    """A table's pairs through a row map, with their keys, in one pass (see ``observe._reshape``).

    ``omap[r]`` is row ``r``'s new row (-1: removed; its last slot is -1). Returns ``omap[a]``,
    ``omap[b]``, the number of pairs whose two rows remain, and the keys of those pairs in
    order, ``new_a << shift_a | new_b << shift_b``, or'ed with 1 where ``bits`` (when not empty:
    the ``aligned`` table's kind masks) holds none of the first three kinds; the keys are None
    when they do not strictly increase.
    """
    cdef Py_ssize_t n = a.shape[0], m = omap.shape[0], i, cnt = 0
    if b.shape[0] != n or (bits.shape[0] != 0 and bits.shape[0] != n):
        raise ValueError(f"renumber_pairs needs columns of one length, got {n}, {b.shape[0]} and {bits.shape[0]}")
    if not (0 <= shift_a < 63 and 0 <= shift_b < 63):
        raise ValueError(f"renumber_pairs needs shifts in [0, 63), got {shift_a} and {shift_b}")
    ra_out = np.empty(n, np.int64)
    rb_out = np.empty(n, np.int64)
    keys_out = np.empty(n, np.int64)
    cdef int64_t[::1] ra = ra_out, rb = rb_out, keys = keys_out
    cdef int64_t x, y, k, prev = 0
    cdef bint up = True, low = bits.shape[0] != 0
    for i in range(n):
        x, y = a[i], b[i]
        if x < 0 or x >= m or y < 0 or y >= m:
            raise IndexError(f"pair {i} ({x}, {y}) is outside the row map of {m} slots")
        x, y = omap[x], omap[y]
        ra[i] = x
        rb[i] = y
        if x >= 0 and y >= 0:
            k = (x << shift_a) | (y << shift_b)
            if low and (bits[i] & 7) == 0:
                k |= 1
            if cnt and k <= prev:
                up = False
            keys[cnt] = k
            prev = k
            cnt += 1
    return ra_out, rb_out, cnt, (keys_out[:cnt] if up else None)
