# cython: language_level=3, boundscheck=False, wraparound=False
"""The sorted relation tables' scans, compiled.

``run_bounds`` finds a run of sorted line values (see
:func:`spatialobs.canvas.pagetables.run_bounds`, which calls it for float64 arrays); a run
holds a few values to a few hundred, so numpy's per-call cost was most of its time.
``rows_at`` finds the runs of a sorted column holding given rows (one search from the last, no
numpy calls); ``recut_lines`` is one kind of the ``aligned`` table cut again after a move, on its sorted line
values: the values moved, the runs found and their lines cut in one call instead of some ten
numpy calls and a kernel call per kind; ``recut_kinds`` does it for the six kinds in one call and
merges their results. ``near_grown``, ``near_affected``, ``near_touched`` and ``near_pairs`` are the
steps of ``observe._near_update`` between its index queries, one call each; ``aligned_merge`` merges the
kind bits of the ``aligned`` pairs whose rows were cut again; ``overlaps_found`` and ``pairs_of`` are
``observe._overlaps_update``'s steps, ``inside_redo`` and ``inside_found`` ``observe._inside_update``'s,
``touches_strips`` the loop of ``observe._touches_keyed``; ``painted_reach`` the rows in view a moved
shape's painted cover reaches (``observe._painted_occluders_again``).
``splice_pieces`` and ``cut_pieces`` are :func:`spatialobs.canvas.pagetables.splice`'s merge of
the dropped and new rows and its copies of slices, whose Python loops followed the number of
pieces. ``map_rows``, ``solid_rows``, ``rows_differ`` and ``reparented`` are the row-map passes of
:mod:`spatialobs.canvas.rowmaps`, each one loop over what numpy did in several passes. The twins
are ``spatialobs.canvas.pagetables._run_bounds_py``, ``_rows_at_py``, ``_recut_lines_py``, ``_recut_kinds_py`` and ``_splice_py`` and the ``_py`` functions of
``rowmaps``; tests compare each pair.
"""

from libc.math cimport fabs, isfinite, isnan, sqrt
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc, qsort
from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_FORMAT, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from libc.string cimport memcpy, memmove, strcmp

import numpy as np


def run_bounds(const double[::1] s, double lo, double hi, double tol):
    """``[start, stop)`` of the run of ``s`` holding ``[lo, hi]`` (see ``pagetables.run_bounds``)."""
    cdef Py_ssize_t start, stop
    _run_bounds(&s[0] if s.shape[0] else NULL, s.shape[0], lo, hi, tol, &start, &stop)
    return start, stop


cdef inline Py_ssize_t _search(const double* s, Py_ssize_t n, double x, bint right) noexcept nogil:
    # numpy's searchsorted, "right" or "left" (``s`` holds no NaN, a NaN sorts after every value);
    # inlined with a constant ``right``, each caller gets its own loop
    cdef Py_ssize_t a = 0, b = n, m
    if isnan(x):
        return n
    while a < b:
        m = (a + b) >> 1
        if s[m] < x or (right and s[m] == x):
            a = m + 1
        else:
            b = m
    return a


cdef inline Py_ssize_t _left(const double* s, Py_ssize_t n, double x) noexcept nogil:
    return _search(s, n, x, False)


cdef inline Py_ssize_t _right(const double* s, Py_ssize_t n, double x) noexcept nogil:
    return _search(s, n, x, True)


cdef void _run_bounds(const double* s, Py_ssize_t n, double lo, double hi, double tol,
                      Py_ssize_t* start_out, Py_ssize_t* stop_out) noexcept nogil:
    cdef Py_ssize_t start, stop
    cdef double nxt, prv, v
    # the two binary searches as numpy's searchsorted does them ("left" for lo, "right" for hi)
    start = _left(s, n, lo)
    stop = _right(s, n, hi)
    # outward while each gap to the next value is within tol (a NaN gap ends the run)
    nxt = lo
    while start > 0:
        v = s[start - 1]
        if not (nxt - v <= tol):
            break
        start -= 1
        nxt = v
    prv = hi
    while stop < n:
        v = s[stop]
        if not (v - prv <= tol):
            break
        stop += 1
        prv = v
    start_out[0] = start
    stop_out[0] = stop


cdef inline Py_ssize_t _left_i(const int64_t* c, Py_ssize_t lo, Py_ssize_t hi, int64_t x) noexcept nogil:
    # the first position in c[lo:hi] whose value is not below x
    cdef Py_ssize_t m
    while lo < hi:
        m = (lo + hi) >> 1
        if c[m] < x:
            lo = m + 1
        else:
            hi = m
    return lo


def rows_at(const int64_t[::1] col, const int64_t[::1] rows):
    """Positions in the sorted ``col`` of the entries equal to one of the sorted, distinct ``rows``,
    ascending (see ``pagetables.rows_at``, whose numpy twin is ``pagetables._rows_at_py``)."""
    cdef Py_ssize_t n = col.shape[0], m = rows.shape[0], i, a, b, lo = 0, total = 0, k = 0, t
    if n == 0 or m == 0:
        return np.zeros(0, np.int64)
    cdef const int64_t* c = &col[0]
    spans_a = np.empty((m, 2), np.int64)
    cdef int64_t[:, ::1] spans = spans_a
    for i in range(m):  # each row's run, searched from the end of the one before while the rows ascend
        if i and rows[i] <= rows[i - 1]:
            lo = 0  # (out of order or repeated: as numpy's searches give it, in the rows' order)
        a = _left_i(c, lo, n, rows[i])
        b = _left_i(c, a, n, rows[i] + 1) if rows[i] < 0x7FFFFFFFFFFFFFFF else n
        spans[i, 0] = a
        spans[i, 1] = b
        total += b - a
        lo = b
    out_a = np.empty(total, np.int64)
    cdef int64_t[::1] out = out_a
    for i in range(m):
        for t in range(spans[i, 0], spans[i, 1]):
            out[k] = t
            k += 1
    return out_a


cdef Py_ssize_t _move_value(double* s, int64_t* pos, Py_ssize_t n, int64_t p, double old, double new) noexcept nogil:
    # ``pagetables.move_value`` on raw columns; -1 when ``p`` has no entry with the value ``old``
    cdef Py_ssize_t i = _left(s, n, old), j = _right(s, n, old), k = -1, t
    while i < j:
        if pos[i] == p:
            k = i
            break
        i += 1
    if k < 0:
        return -1
    t = _left(s, n, new)
    if t > k + 1:  # later: the entries between move down one
        memmove(&s[k], &s[k + 1], (t - 1 - k) * sizeof(double))
        memmove(&pos[k], &pos[k + 1], (t - 1 - k) * sizeof(int64_t))
        s[t - 1] = new
        pos[t - 1] = p
    elif t <= k:  # earlier: they move up one
        memmove(&s[t + 1], &s[t], (k - t) * sizeof(double))
        memmove(&pos[t + 1], &pos[t], (k - t) * sizeof(int64_t))
        s[t] = new
        pos[t] = p
    else:  # the same place
        s[k] = new
    return 0


cdef struct _Member:
    double along
    int64_t p


cdef inline bint _before(_Member x, _Member y) noexcept nogil:
    # (along, position) order, as the alignment kernel orders a line (-0.0 ties +0.0)
    return x.along < y.along or (not (y.along < x.along) and x.p < y.p)


cdef int _member_cmp(const void* a, const void* b) noexcept nogil:
    cdef _Member x = (<const _Member*>a)[0]
    cdef _Member y = (<const _Member*>b)[0]
    if _before(x, y):
        return -1
    if _before(y, x):
        return 1
    return 0


cdef int _int64_cmp(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0]
    cdef int64_t y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef struct _Scratch:
    # recut's scratch for m changed values: malloc'ed, not numpy arrays (a call's fixed cost matters:
    # six kinds a move); ``left``: 3 per value, ``iv``: 2 per run and 2 runs per value, ``spans``: 2 per value
    double* left
    int64_t* iv
    double* spans


cdef int _scratch_alloc(_Scratch* sc, Py_ssize_t m) except -1:
    sc.left = <double*>malloc(max(m, 1) * 3 * sizeof(double))
    sc.iv = <int64_t*>malloc(max(2 * m, 1) * 2 * sizeof(int64_t))
    sc.spans = <double*>malloc(max(m, 1) * 2 * sizeof(double))
    if sc.left == NULL or sc.iv == NULL or sc.spans == NULL:
        _scratch_free(sc)
        raise MemoryError()
    return 0


cdef void _scratch_free(_Scratch* sc) noexcept:
    free(sc.left)
    free(sc.iv)
    free(sc.spans)
    sc.left = sc.spans = NULL
    sc.iv = NULL


def recut_lines(double[::1] s, int64_t[::1] pos, const int64_t[::1] changed, const double[::1] c_old,
                const double[::1] c_new, double tol, bint one, const double[:, :] boxes, const int64_t[::1] rows,
                const int64_t[::1] parent, int kind):
    """One kind of ``aligned`` cut again where boxes moved, on its sorted line values (see
    ``pagetables.recut_lines``, whose numpy twin is ``pagetables._recut_lines_py``).

    Moves the changed positions' values in ``s`` and ``pos`` in place and returns ``(cut, keys)``:
    the page rows of the lines cut again (the runs', or for one box moved within one run the lines
    that differ: ``_recut_one``), sorted, and the keys of the pairs of kind ``kind`` among them whose
    rows share a parent (in no particular order)."""
    cdef Py_ssize_t n = s.shape[0], m = changed.shape[0], nb = boxes.shape[0], nr = rows.shape[0]
    cdef Py_ssize_t npar = parent.shape[0]
    if pos.shape[0] != n:
        raise ValueError(f"recut_lines needs one position per value, got {pos.shape[0]} for {n}")
    if c_old.shape[0] != m or c_new.shape[0] != m:
        raise ValueError(f"recut_lines needs an old and a new value per changed position ({m}), "
                         f"got {c_old.shape[0]} and {c_new.shape[0]}")
    if boxes.shape[1] != 4 or nr != nb:
        raise ValueError(f"recut_lines needs a (k, 4) box per solid position and a row each, got boxes "
                         f"({boxes.shape[0]}, {boxes.shape[1]}) and {nr} rows")
    if kind < 0 or kind > 5:
        raise ValueError(f"alignment kind must be 0..5, got {kind}")
    cdef _Scratch sc
    _scratch_alloc(&sc, m)
    try:
        return _recut(s, pos, changed, c_old, c_new, tol, one, boxes, rows, parent, kind, sc.left, sc.iv, sc.spans)
    finally:
        _scratch_free(&sc)


cdef inline double _line_value(const double[:, :] b, Py_ssize_t i, int kind) noexcept nogil:
    # observe._line_values of one box: left, centre, right, top, middle, bottom (the same operations)
    if kind == 0:
        return b[i, 0]
    if kind == 1:
        return (b[i, 0] + b[i, 2]) * 0.5
    if kind == 2:
        return b[i, 2]
    if kind == 3:
        return b[i, 1]
    if kind == 4:
        return (b[i, 1] + b[i, 3]) * 0.5
    return b[i, 3]


cdef struct _KeyBits:
    # a key (a row, a pair's key) with kind bits, sorted by key
    int64_t key
    int64_t bits


cdef int _key_bits_cmp(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const _KeyBits*>a).key, y = (<const _KeyBits*>b).key
    return (x > y) - (x < y)


def recut_kinds(list lines, const int64_t[::1] changed, const double[:, :] before, const double[:, :] now,
                double tol, bint one, const double[:, :] boxes, const int64_t[::1] rows,
                const int64_t[::1] parent):
    """``recut_lines`` for the six kinds in their order, in one call, and their results merged as
    ``observe._aligned_update`` merges them (see ``pagetables.recut_kinds``, whose twin is the loop of
    ``pagetables.recut_lines`` calls there).

    ``lines``: the six kinds' ``(values, positions)``, float64 and int64, writable (moved in place);
    ``before``, ``now``: the changed positions' boxes before and after (their line values are taken
    as ``observe._line_values`` takes them). Returns ``(cut_rows, cut_bits, keys, bits)``: the page
    rows cut again (sorted, distinct) with the bit of each kind they are cut again for, and the new
    pairs' keys in kind order with their kind's bit."""
    cdef Py_ssize_t m = changed.shape[0], i, kind, total = 0, nk = 0, j, u
    if len(lines) != 6:
        raise ValueError(f"recut_kinds needs the lines of the six kinds, got {len(lines)}")
    if before.shape[0] != m or now.shape[0] != m or before.shape[1] != 4 or now.shape[1] != 4:
        raise ValueError(f"recut_kinds needs a box before and after per changed position ({m}), got "
                         f"({before.shape[0]}, {before.shape[1]}) and ({now.shape[0]}, {now.shape[1]})")
    vals_a = np.empty((2, 6, m), np.float64)
    cdef double[:, :, ::1] vals = vals_a
    for kind in range(6):
        for i in range(m):
            vals[0, kind, i] = _line_value(before, i, <int>kind)
            vals[1, kind, i] = _line_value(now, i, <int>kind)
    cdef _Scratch sc
    _scratch_alloc(&sc, m)
    cdef list cuts = [], keys = []
    try:
        for kind in range(6):
            s, pos = lines[kind]
            cut, k = _recut(s, pos, changed, vals[0, kind], vals[1, kind], tol, one, boxes, rows, parent,
                            <int>kind, sc.left, sc.iv, sc.spans)
            cuts.append(cut)
            keys.append(k)
            total += len(cut)
            nk += len(k)
    finally:
        _scratch_free(&sc)
    # the rows of the six cuts by row, each once with the bits of its kinds
    cdef _KeyBits* rb = <_KeyBits*>malloc(max(total, 1) * sizeof(_KeyBits))
    if rb == NULL:
        raise MemoryError()
    cdef const int64_t[::1] c
    cdef int64_t[::1] ko, bo, ro, bi
    keys_a = np.empty(nk, np.int64)
    bits_a = np.empty(nk, np.int64)
    ko, bo = keys_a, bits_a
    try:
        j = 0
        u = 0
        for kind in range(6):
            c = cuts[kind]
            for i in range(c.shape[0]):
                rb[j].key = c[i]
                rb[j].bits = (<int64_t>1) << kind
                j += 1
            c = keys[kind]
            for i in range(c.shape[0]):
                ko[u] = c[i]
                bo[u] = (<int64_t>1) << kind
                u += 1
        if total > 1:
            qsort(rb, total, sizeof(_KeyBits), _key_bits_cmp)
        u = 0
        for j in range(total):
            if u and rb[u - 1].key == rb[j].key:
                rb[u - 1].bits |= rb[j].bits
            else:
                rb[u] = rb[j]
                u += 1
        rows_a = np.empty(u, np.int64)
        rbits_a = np.empty(u, np.int64)
        ro, bi = rows_a, rbits_a
        for j in range(u):
            ro[j] = rb[j].key
            bi[j] = rb[j].bits
    finally:
        free(rb)
    return rows_a, rbits_a, keys_a, bits_a


cdef tuple _recut(double[::1] s, int64_t[::1] pos, const int64_t[::1] changed, const double[::1] c_old,
                  const double[::1] c_new, double tol, bint one, const double[:, :] boxes, const int64_t[::1] rows,
                  const int64_t[::1] parent, int kind, double* left, int64_t* iv, double* spans):
    # ``recut_lines`` with its scratch (``left``: 3 per changed value, ``iv``: 2 per run, 2 runs per
    # changed value; ``spans``: 2 per changed value)
    cdef Py_ssize_t n = s.shape[0], m = changed.shape[0], nb = boxes.shape[0], nr = rows.shape[0]
    cdef Py_ssize_t npar = parent.shape[0]
    cdef double* sp = &s[0] if n else NULL
    cdef int64_t* pp = &pos[0] if n else NULL
    cdef Py_ssize_t i, j, k, a, b, t, e, nl = 0, ni = 0, ns = 0, nm = 0, total = 0, nk = 0, q, longest = 0
    cdef int64_t p
    cdef double x, start
    # the runs the changed values leave, among the values before the edit
    for i in range(m):
        if c_old[i] != c_new[i]:
            _run_bounds(sp, n, c_old[i], c_old[i], tol, &a, &b)
            if b <= a:
                raise ValueError(f"position {changed[i]} has no line value {c_old[i]!r}")
            left[3 * nl] = c_old[i]
            left[3 * nl + 1] = s[a]
            left[3 * nl + 2] = s[b - 1]
            nl += 1
    for i in range(m):
        if c_old[i] != c_new[i] and _move_value(sp, pp, n, changed[i], c_old[i], c_new[i]) < 0:
            raise ValueError(f"position {changed[i]} has no line value {c_old[i]!r}")
    # the lines a changed box joins
    for i in range(m):
        x = c_new[i]
        for j in range(ns):
            if spans[2 * j] <= x <= spans[2 * j + 1]:
                break
        else:
            _run_bounds(sp, n, x, x, tol, &a, &b)
            if b <= a:
                raise ValueError(f"position {changed[i]} has no line value {x!r}")
            iv[2 * ni] = a
            iv[2 * ni + 1] = b
            ni += 1
            spans[2 * ns] = s[a]
            spans[2 * ns + 1] = s[b - 1]
            ns += 1
    # the lines it left, as the other boxes now stand (see observe._aligned_update)
    for i in range(nl):
        x = left[3 * i]
        if one:
            for j in range(ns):
                if spans[2 * j] <= x <= spans[2 * j + 1]:
                    break
            else:
                j = -1
            if j >= 0:
                continue
        _run_bounds(sp, n, left[3 * i + 1], left[3 * i + 2], tol, &a, &b)
        iv[2 * ni] = a
        iv[2 * ni + 1] = b
        ni += 1
    # the slices by start, overlapping ones merged (each is bounded by gaps over tol)
    for i in range(1, ni):
        a, b = iv[2 * i], iv[2 * i + 1]
        j = i
        while j > 0 and iv[2 * (j - 1)] > a:
            iv[2 * j], iv[2 * j + 1] = iv[2 * (j - 1)], iv[2 * (j - 1) + 1]
            j -= 1
        iv[2 * j], iv[2 * j + 1] = a, b
    for i in range(ni):
        a, b = iv[2 * i], iv[2 * i + 1]
        if b <= a:
            continue
        if nm and a <= iv[2 * (nm - 1) + 1]:
            if b > iv[2 * (nm - 1) + 1]:
                iv[2 * (nm - 1) + 1] = b
        else:
            iv[2 * nm], iv[2 * nm + 1] = a, b
            nm += 1
    for i in range(nm):
        _check_positions(pp, iv[2 * i], iv[2 * i + 1], nb, rows, npar)
    if one and m == 1 and nm == 1 and s[iv[0]] <= c_old[0] <= s[iv[1] - 1]:
        return _recut_one(sp, pp, iv[0], iv[1], changed[0], c_old[0], tol, boxes, rows, parent, kind)
    for i in range(nm):
        total += iv[2 * i + 1] - iv[2 * i]
    cut_a = np.empty(total, np.int64)
    keys_a = np.empty(total, np.int64)
    cdef int64_t[::1] cut = cut_a
    cdef int64_t[::1] keys = keys_a
    cdef int64_t axis = 1 if kind >= 3 else 0
    k = 0
    for i in range(nm):
        for t in range(iv[2 * i], iv[2 * i + 1]):
            cut[k] = rows[pos[t]]
            k += 1
        longest = max(longest, iv[2 * i + 1] - iv[2 * i])
    if total > 1:
        qsort(&cut[0], total, sizeof(int64_t), _int64_cmp)
    # the greedy line cut of the alignment kernel, within each slice; consecutive boxes along a line pair up
    cdef _Member* line = <_Member*>malloc(max(longest, 1) * sizeof(_Member))
    if line == NULL:
        raise MemoryError()
    try:
        for i in range(nm):
            t = iv[2 * i]
            while t < iv[2 * i + 1]:
                start = s[t]
                e = t + 1
                while e < iv[2 * i + 1] and s[e] - start <= tol:
                    e += 1
                nk = _line_pairs(&pp[t], e - t, line, boxes, rows, parent, kind, axis, keys, nk)
                t = e
    finally:
        free(line)
    return cut_a, keys_a[:nk]


cdef int _check_positions(const int64_t* pp, Py_ssize_t a, Py_ssize_t b, Py_ssize_t nb, const int64_t[::1] rows,
                          Py_ssize_t npar) except -1:
    # the solid positions ``pp[a:b]`` lie among the ``nb`` boxes, and their rows among the ``npar`` parents
    cdef Py_ssize_t t
    cdef int64_t p
    for t in range(a, b):
        p = pp[t]
        if p < 0 or p >= nb:
            raise IndexError(f"line position {p} is outside the {nb} solid boxes")
        if rows[p] < 0 or rows[p] >= npar:
            raise IndexError(f"row {rows[p]} is outside the {npar} parents")
    return 0


cdef Py_ssize_t _line_pairs(const int64_t* lp, Py_ssize_t count, _Member* line, const double[:, :] boxes,
                            const int64_t[::1] rows, const int64_t[::1] parent, int kind, int64_t axis,
                            int64_t[::1] keys, Py_ssize_t nk) noexcept:
    # the keys of one line's pairs (its solid positions ``lp[:count]``, checked by the caller) written
    # from ``keys[nk]``: consecutive boxes along the line (by centre, then position) with one parent
    cdef Py_ssize_t q, j
    cdef int64_t p, ra, rb
    cdef _Member mb
    if count < 2:
        return nk
    for q in range(count):
        p = lp[q]
        if kind <= 2:
            line[q].along = (boxes[p, 1] + boxes[p, 3]) * 0.5
        else:
            line[q].along = (boxes[p, 0] + boxes[p, 2]) * 0.5
        line[q].p = p
    if count <= 16:
        for q in range(1, count):
            mb = line[q]
            j = q
            while j > 0 and _before(mb, line[j - 1]):
                line[j] = line[j - 1]
                j -= 1
            line[j] = mb
    else:
        qsort(line, count, sizeof(_Member), _member_cmp)
    for q in range(count - 1):
        ra = rows[min(line[q].p, line[q + 1].p)]
        rb = rows[max(line[q].p, line[q + 1].p)]
        if parent[ra] == parent[rb]:
            keys[nk] = (ra << 33) | (rb << 1) | axis
            nk += 1
    return nk


cdef Py_ssize_t _cut_lines(const double* v, Py_ssize_t t, Py_ssize_t stop, double tol, Py_ssize_t* starts) noexcept nogil:
    # the alignment kernel's greedy line cut of the sorted values ``v[t:stop]``: each line's first index
    # into ``starts``, then ``stop``; returns the number of lines
    cdef Py_ssize_t k = 0, e
    cdef double first
    while t < stop:
        starts[k] = t
        k += 1
        first = v[t]
        e = t + 1
        while e < stop and v[e] - first <= tol:
            e += 1
        t = e
    starts[k] = stop
    return k


cdef tuple _recut_one(double* sp, int64_t* pp, Py_ssize_t a, Py_ssize_t b, int64_t p, double old, double tol,
                      const double[:, :] boxes, const int64_t[::1] rows, const int64_t[::1] parent, int kind):
    # ``recut_lines`` for one moved box whose old and new values lie in the one slice ``[a, b)`` of the
    # values now: the lines of the slice now and before (the slice with the box's value put back) compared,
    # and only those that differ (or hold the box) cut again. Both cuts start at the slice's first value: it
    # is bounded by gaps over ``tol`` then as now (the old value lies inside it). A line is unchanged when
    # the other cut has a line with the same first value and neither holds the box: a line is every value
    # from its first to its first plus ``tol``, the same values but the box's.
    cdef Py_ssize_t L = b - a, i, j, q, qn = -1, qo = -1, cn, co, nc = 0, nk = 0, w
    cdef int64_t axis = 1 if kind >= 3 else 0
    cdef double* ov = <double*>malloc(max(L, 1) * sizeof(double))
    cdef int64_t* op = <int64_t*>malloc(max(L, 1) * sizeof(int64_t))
    cdef Py_ssize_t* sn = <Py_ssize_t*>malloc((L + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* so = <Py_ssize_t*>malloc((L + 1) * sizeof(Py_ssize_t))
    cdef char* mn = <char*>malloc(max(L, 1))
    cdef char* mo = <char*>malloc(max(L, 1))
    cdef _Member* line = <_Member*>malloc(max(L, 1) * sizeof(_Member))
    cdef int64_t* rb = <int64_t*>malloc(max(2 * L, 1) * sizeof(int64_t))
    cdef int64_t[::1] cv
    try:
        if ov == NULL or op == NULL or sn == NULL or so == NULL or mn == NULL or mo == NULL or line == NULL or rb == NULL:
            raise MemoryError()
        # the slice as it was: the box's entry taken out, its old value put back in order
        w = 0
        for q in range(a, b):
            if pp[q] == p and qn < 0:
                qn = q - a
                continue
            ov[w] = sp[q]
            op[w] = pp[q]
            w += 1
        if qn < 0:
            raise ValueError(f"position {p} has no line value in its slice")
        qo = 0
        while qo < w and ov[qo] < old:
            qo += 1
        memmove(&ov[qo + 1], &ov[qo], (w - qo) * sizeof(double))
        memmove(&op[qo + 1], &op[qo], (w - qo) * sizeof(int64_t))
        ov[qo] = old
        op[qo] = p
        cn = _cut_lines(sp + a, 0, L, tol, sn)
        co = _cut_lines(ov, 0, L, tol, so)
        for i in range(cn):
            mn[i] = 0
        for j in range(co):
            mo[j] = 0
        i = j = 0
        while i < cn and j < co:
            if sp[a + sn[i]] == ov[so[j]]:
                if not (sn[i] <= qn < sn[i + 1]) and not (so[j] <= qo < so[j + 1]):
                    mn[i] = mo[j] = 1
                i += 1
                j += 1
            elif sp[a + sn[i]] < ov[so[j]]:
                i += 1
            else:
                j += 1
        # the rows of the lines that differ, then and now
        for i in range(cn):
            if not mn[i]:
                for q in range(sn[i], sn[i + 1]):
                    rb[nc] = rows[pp[a + q]]
                    nc += 1
        for j in range(co):
            if not mo[j]:
                for q in range(so[j], so[j + 1]):
                    rb[nc] = rows[op[q]]
                    nc += 1
        if nc > 1:
            qsort(rb, nc, sizeof(int64_t), _int64_cmp)
        w = 0
        for q in range(nc):
            if w == 0 or rb[q] != rb[w - 1]:
                rb[w] = rb[q]
                w += 1
        cut_a = np.empty(w, np.int64)
        keys_a = np.empty(max(L, 1), np.int64)
        cv = cut_a
        for q in range(w):
            cv[q] = rb[q]
        for i in range(cn):
            if not mn[i]:
                nk = _line_pairs(&pp[a + sn[i]], sn[i + 1] - sn[i], line, boxes, rows, parent, kind, axis, keys_a, nk)
        return cut_a, keys_a[:nk]
    finally:
        free(ov)
        free(op)
        free(sn)
        free(so)
        free(mn)
        free(mo)
        free(line)
        free(rb)


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


cdef struct _KeyAt:
    int64_t key
    Py_ssize_t at


cdef int _key_at_cmp(const void* a, const void* b) noexcept nogil:
    cdef _KeyAt x = (<const _KeyAt*>a)[0]
    cdef _KeyAt y = (<const _KeyAt*>b)[0]
    if x.key != y.key:
        return (x.key > y.key) - (x.key < y.key)
    return (x.at > y.at) - (x.at < y.at)


def splice_span(list cols, int64_t[::1] keys, const int64_t[::1] drop, list new_cols, const int64_t[::1] new_keys):
    """``pagetables.splice_in_place`` for as many new rows as dropped ones, in one pass: the span from
    the first dropped or inserted position to the last merged again in place (the kept rows of the span
    and the new ones, by key; a new key equals no kept key), in every column and in ``keys``. The
    columns are 1-D, C-contiguous and writable, each new column of its column's type (items of at most
    8 bytes). Returns the span's (start, stop)."""
    cdef Py_ssize_t n = keys.shape[0], k = drop.shape[0], i, j, t, lo, hi, L, w, c, d, nc = len(cols), got = 0
    if new_keys.shape[0] != k or len(new_cols) != nc:
        raise ValueError(f"splice_span needs as many new rows as dropped ones ({k}) and a new column per column, "
                         f"got {new_keys.shape[0]} rows and {len(new_cols)} of {nc} columns")
    if k == 0:
        return 0, 0
    for i in range(k):
        if drop[i] < 0 or drop[i] >= n or (i and drop[i] <= drop[i - 1]):
            raise IndexError(f"drop position {drop[i]} is outside the {n} rows or out of order")
    cdef Py_buffer* bufs = <Py_buffer*>malloc(max(2 * nc, 1) * sizeof(Py_buffer))
    cdef _KeyAt* nk = <_KeyAt*>malloc(k * sizeof(_KeyAt))
    cdef int64_t* src = NULL
    cdef unsigned char* tmp = NULL
    cdef unsigned char* col
    cdef const unsigned char* new
    try:
        if bufs == NULL or nk == NULL:
            raise MemoryError()
        for c in range(nc):  # every column's and new column's buffer, checked before anything is written
            PyObject_GetBuffer(cols[c], &bufs[2 * c], PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS)
            got += 1
            PyObject_GetBuffer(new_cols[c], &bufs[2 * c + 1], PyBUF_FORMAT | PyBUF_C_CONTIGUOUS)
            got += 1
            if (bufs[2 * c].ndim != 1 or bufs[2 * c].shape[0] != n or bufs[2 * c + 1].ndim != 1
                    or bufs[2 * c + 1].shape[0] != k or bufs[2 * c].itemsize != bufs[2 * c + 1].itemsize
                    or bufs[2 * c].itemsize > 8
                    or (bufs[2 * c].format != NULL) != (bufs[2 * c + 1].format != NULL)
                    or (bufs[2 * c].format != NULL and strcmp(bufs[2 * c].format, bufs[2 * c + 1].format) != 0)):
                raise ValueError(f"splice_span column {c} has {cols[c].shape[0]} rows (of {n}) and "
                                 f"{new_cols[c].shape[0]} new ones (of {k}), dtypes {cols[c].dtype} and "
                                 f"{new_cols[c].dtype}")
        for i in range(k):
            nk[i].key = new_keys[i]
            nk[i].at = i
        qsort(nk, k, sizeof(_KeyAt), _key_at_cmp)
        lo = min(_left_i(&keys[0], 0, n, nk[0].key), drop[0])
        hi = max(_left_i(&keys[0], 0, n, nk[k - 1].key), drop[k - 1] + 1)
        L = hi - lo
        # the source of each slot of the span: a kept row of the span (its position) or a new row (-1 - its index)
        src = <int64_t*>malloc(L * sizeof(int64_t))
        tmp = <unsigned char*>malloc(L * 8)
        if src == NULL or tmp == NULL:
            raise MemoryError()
        i, d, j = lo, 0, 0  # the next span row, drop and new row
        for t in range(L):
            while i < hi and d < k and drop[d] == i:
                i += 1
                d += 1
            if i < hi and (j >= k or keys[i] < nk[j].key):
                src[t] = i
                i += 1
            else:
                src[t] = -1 - nk[j].at
                j += 1
        for c in range(-1, nc):  # (-1: the keys)
            if c < 0:
                col, new, w = <unsigned char*>&keys[0], <const unsigned char*>&new_keys[0], 8
            else:
                col, new = <unsigned char*>bufs[2 * c].buf, <const unsigned char*>bufs[2 * c + 1].buf
                w = bufs[2 * c].itemsize
            memcpy(tmp, &col[lo * w], L * w)
            for t in range(L):
                if src[t] >= 0:
                    memcpy(&col[(lo + t) * w], &tmp[(src[t] - lo) * w], w)
                else:
                    memcpy(&col[(lo + t) * w], &new[(-1 - src[t]) * w], w)
        return lo, hi
    finally:
        for i in range(got):
            PyBuffer_Release(&bufs[i])
        free(bufs)
        free(nk)
        free(src)
        free(tmp)


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


# ------------------------------------------------------------------ row maps (see ``rowmaps``)
cdef inline int64_t _cut(int64_t[::1] cuts, Py_ssize_t nc, Py_ssize_t k, Py_ssize_t limit):
    # appends cut k unless ``limit`` cuts are there already; returns the new count (limit + 1: too many)
    if nc >= limit:
        return limit + 1
    cuts[nc] = k
    return nc + 1


cdef object _runs_out(cuts_out, Py_ssize_t nc, Py_ssize_t k, Py_ssize_t limit):
    # the cuts of ``k`` rows (``nc`` of them made, the first 0) closed by ``k``, or None past ``limit``
    # (no rows: the one cut 0)
    if nc > limit:
        return None
    cuts_out[nc] = k
    return cuts_out[:nc + (k > 0)].copy()


def map_rows(const int64_t[::1] newrow, const int64_t[::1] canvas_rows, const int64_t[::1] page_pos,
             Py_ssize_t n, Py_ssize_t max_runs):
    """An earlier page version's rows carried to a later one, in one pass (see ``rowmaps.map_rows``).

    Returns ``(omap, new_of_kept, kept_old, every, runs, is_new)``, or None when a kept row is on
    another page now.
    """
    cdef Py_ssize_t m = canvas_rows.shape[0], total = newrow.shape[0], npos = page_pos.shape[0]
    cdef Py_ssize_t i, k = 0, nc = 1, limit = max_runs
    cdef int64_t r, c, p, prev_i = -2, prev_p = -2
    if n < 0:
        raise ValueError(f"map_rows needs a page of 0 rows or more, got {n}")
    omap_out = np.empty(m + 1, np.int64)
    nk_out = np.empty(m, np.int64)
    ko_out = np.empty(m, np.int64)
    is_new_out = np.ones(n, np.bool_)
    cuts_out = np.empty(limit + 2, np.int64)
    cdef int64_t[::1] omap = omap_out, nk = nk_out, ko = ko_out, cuts = cuts_out
    cdef unsigned char[::1] is_new = is_new_out.view(np.uint8)
    cuts[0] = 0
    for i in range(m):
        r = canvas_rows[i]
        if r < 0 or r >= total:
            raise IndexError(f"page row {i} names canvas row {r}, outside the row map of {total} rows")
        c = newrow[r]
        if c < 0:
            omap[i] = -1
            continue
        if c >= npos:
            raise IndexError(f"canvas row {r} moved to row {c}, outside the page positions of {npos} rows")
        p = page_pos[c]
        if p < 0:
            return None
        if p >= n:
            raise IndexError(f"canvas row {c} is page row {p}, outside the page of {n} rows")
        omap[i] = p
        if k and (i != prev_i + 1 or p != prev_p + 1):
            nc = _cut(cuts, nc, k, limit)
        nk[k] = p
        ko[k] = i
        is_new[p] = 0
        prev_i, prev_p = i, p
        k += 1
    omap[m] = -1
    return omap_out, nk_out[:k], ko_out[:k], k == m, _runs_out(cuts_out, nc, k, limit), is_new_out


def solid_rows(const unsigned char[::1] solid, const int64_t[::1] omap, const int64_t[::1] old_sub,
               const unsigned char[::1] is_new, Py_ssize_t max_runs):
    """The solid positions of a later page version and the earlier one's carried to them, in one
    pass over each (see ``rowmaps.solid_rows``). Returns ``(sub, subpos, smap, kp, skp, runs,
    added)``."""
    cdef Py_ssize_t n = solid.shape[0], m = omap.shape[0], no = old_sub.shape[0]
    cdef Py_ssize_t i, j, ns = 0, na = 0, k = 0, nc = 1, limit = max_runs
    cdef int64_t r, s, prev_j = -2, prev_s = -2
    if is_new.shape[0] != n:
        raise ValueError(f"solid_rows needs one new-row flag per row, got {is_new.shape[0]} for {n} rows")
    for i in range(n):
        ns += solid[i] != 0
    sub_out = np.empty(ns, np.int64)
    subpos_out = np.empty(n + 1, np.int64)
    added_out = np.empty(ns, np.int64)
    smap_out = np.empty(no, np.int64)
    kp_out = np.empty(no, np.int64)
    skp_out = np.empty(no, np.int64)
    cuts_out = np.empty(limit + 2, np.int64)
    cdef int64_t[::1] sub = sub_out, subpos = subpos_out, added = added_out, smap = smap_out
    cdef int64_t[::1] kp = kp_out, skp = skp_out, cuts = cuts_out
    ns = 0
    for i in range(n):
        if solid[i]:
            if is_new[i]:
                added[na] = ns
                na += 1
            sub[ns] = i
            subpos[i] = ns
            ns += 1
        else:
            subpos[i] = -1
    subpos[n] = -1
    cuts[0] = 0
    for j in range(no):
        r = old_sub[j]
        if r < 0 or r >= m:
            raise IndexError(f"solid position {j} names row {r}, outside the row map of {m} slots")
        r = omap[r]
        if r < -1 or r > n:
            raise IndexError(f"the row map sends a row to {r}, outside the page of {n} rows")
        s = subpos[r] if r >= 0 else -1
        smap[j] = s
        if s < 0:
            continue
        if k and (j != prev_j + 1 or s != prev_s + 1):
            nc = _cut(cuts, nc, k, limit)
        kp[k] = j
        skp[k] = s
        prev_j, prev_s = j, s
        k += 1
    return sub_out, subpos_out, smap_out, kp_out[:k], skp_out[:k], _runs_out(cuts_out, nc, k, limit), added_out[:na]


def rows_differ(const double[:, ::1] a, const int64_t[::1] src, const double[:, ::1] b, const int64_t[::1] dst):
    """Whether box ``a[src[k]]`` differs from box ``b[dst[k]]`` in any coordinate (NaN differs),
    for each k (see ``rowmaps.rows_differ``)."""
    cdef Py_ssize_t n = src.shape[0], k, na = a.shape[0], nb = b.shape[0]
    cdef int64_t s, d
    if dst.shape[0] != n:
        raise ValueError(f"rows_differ needs as many rows on both sides, got {n} and {dst.shape[0]}")
    if a.shape[1] != 4 or b.shape[1] != 4:
        raise ValueError(f"rows_differ needs boxes of 4 columns, got {a.shape[1]} and {b.shape[1]}")
    out = np.empty(n, np.bool_)
    cdef unsigned char[::1] o = out.view(np.uint8)
    for k in range(n):
        s, d = src[k], dst[k]
        if s < 0 or s >= na or d < 0 or d >= nb:
            raise IndexError(f"row pair {k} ({s}, {d}) is outside the boxes ({na} and {nb} rows)")
        o[k] = (a[s, 0] != b[d, 0]) or (a[s, 1] != b[d, 1]) or (a[s, 2] != b[d, 2]) or (a[s, 3] != b[d, 3])
    return out


def reparented(const int64_t[::1] new_of_kept, const int64_t[::1] kept_old, const int64_t[::1] old_parent,
               const int64_t[::1] parent, const int64_t[::1] omap):
    """The kept rows whose parent is another row now (new page rows, in kept order), and whether
    the kept rows keep their order (see ``rowmaps.reparented``)."""
    cdef Py_ssize_t n = new_of_kept.shape[0], k, m = omap.shape[0], no = old_parent.shape[0]
    cdef Py_ssize_t np_ = parent.shape[0], cnt = 0
    cdef int64_t o, w, r, prev = -1
    cdef bint up = True
    if kept_old.shape[0] != n:
        raise ValueError(f"reparented needs one old row per kept row, got {kept_old.shape[0]} for {n}")
    out = np.empty(n, np.int64)
    cdef int64_t[::1] moved = out
    for k in range(n):
        o = kept_old[k]
        r = new_of_kept[k]
        if o < 0 or o >= no or r < 0 or r >= np_:
            raise IndexError(f"kept row {k} ({o} -> {r}) is outside the parent columns ({no} and {np_} rows)")
        o = old_parent[o]
        if o < -1 or o >= m - 1:
            raise IndexError(f"old row {kept_old[k]} has parent {o}, outside the row map of {m} slots")
        w = omap[o] if o >= 0 else -1
        if parent[r] != w:
            moved[cnt] = r
            cnt += 1
        if k and r <= prev:
            up = False
        prev = r
    return out[:cnt], up


# --------------------------------------------------------------------------- near after a move
# The steps of ``observe._near_update`` between its three index queries, each one call (its numpy
# steps are the twin: ``NEAR_KERNEL`` False there). Boxes must be finite: None otherwise, and the
# caller runs the numpy steps.

cdef inline bint _finite4(const double[:, :] b, Py_ssize_t i) noexcept nogil:
    return isfinite(b[i, 0]) and isfinite(b[i, 1]) and isfinite(b[i, 2]) and isfinite(b[i, 3])


cdef inline void _grow_by(const double[:, :] b, Py_ssize_t i, double g, double[:, ::1] out, Py_ssize_t k) noexcept nogil:
    # observe._grown: the box grown by g + 1e-9 * (g + its largest magnitude) + 1e-300, the same operations
    cdef double mx = fabs(b[i, 0]), v
    v = fabs(b[i, 1])
    if v > mx:
        mx = v
    v = fabs(b[i, 2])
    if v > mx:
        mx = v
    v = fabs(b[i, 3])
    if v > mx:
        mx = v
    cdef double m = g + 1e-9 * (g + mx) + 1e-300
    out[k, 0] = b[i, 0] - m
    out[k, 1] = b[i, 1] - m
    out[k, 2] = b[i, 2] + m
    out[k, 3] = b[i, 3] + m


cdef inline double _box_gap(const double[:, :] a, Py_ssize_t i, const double[:, :] b, Py_ssize_t j) noexcept nogil:
    # observe._gap: sqrt(dx * dx + dy * dy) of the separations, each at least 0
    cdef double dx = b[j, 0] - a[i, 2], dy = b[j, 1] - a[i, 3], t
    t = a[i, 0] - b[j, 2]
    if t > dx:
        dx = t
    if dx < 0.0:
        dx = 0.0
    t = a[i, 1] - b[j, 3]
    if t > dy:
        dy = t
    if dy < 0.0:
        dy = 0.0
    return sqrt(dx * dx + dy * dy)


cdef inline bint _pos_area(const double[:, :] a, Py_ssize_t i, const double[:, :] b, Py_ssize_t j) noexcept nogil:
    # observe._pos_area: positive-area intersection
    cdef double hi = a[i, 2] if a[i, 2] < b[j, 2] else b[j, 2]
    cdef double lo = a[i, 0] if a[i, 0] > b[j, 0] else b[j, 0]
    if not (hi > lo):
        return False
    hi = a[i, 3] if a[i, 3] < b[j, 3] else b[j, 3]
    lo = a[i, 1] if a[i, 1] > b[j, 1] else b[j, 1]
    return hi > lo


cdef Py_ssize_t _sort_unique(int64_t* v, Py_ssize_t n) noexcept nogil:
    # sorts v[:n] and keeps each value once; returns the count
    cdef Py_ssize_t i, u = 0
    if n > 1:
        qsort(v, n, sizeof(int64_t), _int64_cmp)
    for i in range(n):
        if u == 0 or v[u - 1] != v[i]:
            v[u] = v[i]
            u += 1
    return u


cdef int _check_hits(str name, const int64_t[::1] hi, const int64_t[::1] hj, Py_ssize_t nrows,
                     Py_ssize_t nq) except -1:
    # index hits (row hi[t] met query hj[t]): one length, each inside the rows and the queries
    cdef Py_ssize_t t
    if hj.shape[0] != hi.shape[0]:
        raise ValueError(f"{name} needs hi and hj of one length, got {hi.shape[0]} and {hj.shape[0]}")
    for t in range(hi.shape[0]):
        if hj[t] < 0 or hj[t] >= nq or hi[t] < 0 or hi[t] >= nrows:
            raise IndexError(f"{name}: hit ({hi[t]}, {hj[t]}) outside the {nrows} solid rows and {nq} queries")
    return 0


cdef int _check_rows(str name, const int64_t[::1] pos, Py_ssize_t n) except -1:
    # solid positions, each inside the n solid rows
    cdef Py_ssize_t t
    for t in range(pos.shape[0]):
        if pos[t] < 0 or pos[t] >= n:
            raise IndexError(f"{name}: position {pos[t]} outside the {n} solid rows")
    return 0


def near_grown(const double[:, :] boxes, double gap):
    """``observe._grown(boxes, gap)``, or None when a box is not finite."""
    cdef Py_ssize_t k = boxes.shape[0], i
    if k and boxes.shape[1] != 4:
        raise ValueError(f"near_grown needs (k, 4) boxes, got ({k}, {boxes.shape[1]})")
    out_a = np.empty((k, 4), np.float64)
    cdef double[:, ::1] out = out_a
    for i in range(k):
        if not _finite4(boxes, i):
            return None
        _grow_by(boxes, i, gap, out, i)
    return out_a


def near_affected(const double[:, :] q, const int64_t[::1] hi, const int64_t[::1] hj, const double[:, :] sb,
                  double gap, const int64_t[::1] changed, const double[:, :] before):
    """The rows whose nearest can differ after the boxes of ``changed`` (sorted) changed from
    ``before`` (then the boxes of removed rows): ``changed`` and every row ``hi[t]`` within ``gap`` of
    query box ``q[hj[t]]`` without a positive-area overlap (sorted, distinct), with the grown box
    (``near_grown``) of each as it was: its box of ``before`` if it changed, else its box in ``sb``.
    None when a box read is not finite."""
    cdef Py_ssize_t nh = hi.shape[0], nc = changed.shape[0], t, n = 0, u = 0, p, nsb = sb.shape[0], nq = q.shape[0]
    if before.shape[0] < nc:
        raise ValueError(f"near_affected needs a box before per changed row ({nc}), got {before.shape[0]}")
    _check_hits("near_affected", hi, hj, nsb, nq)
    _check_rows("near_affected", changed, nsb)
    aff_a = np.empty(nh + nc, np.int64)
    cdef int64_t[::1] v = aff_a
    cdef double[:, ::1] out_w
    for t in range(nc):
        v[n] = changed[t]
        n += 1
    for t in range(nh):
        if not (_finite4(q, hj[t]) and _finite4(sb, hi[t])):
            return None
        if _box_gap(q, hj[t], sb, hi[t]) <= gap and not _pos_area(q, hj[t], sb, hi[t]):
            v[n] = hi[t]
            n += 1
    if n:
        u = _sort_unique(&v[0], n)
    was_a = np.empty((u, 4), np.float64)
    out_w = was_a
    for t in range(u):
        p = _left_i(&changed[0], 0, nc, v[t]) if nc else 0
        if p < nc and changed[p] == v[t]:
            if not _finite4(before, p):
                return None
            _grow_by(before, p, gap, out_w, t)
        else:
            if not _finite4(sb, v[t]):
                return None
            _grow_by(sb, v[t], gap, out_w, t)
    return aff_a[:u], was_a


cdef object _pairs_at(const int64_t[::1] keys, const int64_t[::1] ta, const int64_t[::1] sub,
                      const int64_t[::1] pos, const int64_t[::1] hi, const int64_t[::1] hj, str name):
    # the positions (sorted, distinct) of the pairs of the table with first column ``ta`` (sorted) and
    # sorted keys ``keys`` that solid positions ``pos`` are first in (a run each) or second in, their
    # first end ``sub[hi[t]]`` (a row whose box met query ``hj[t]``'s)
    cdef Py_ssize_t nk = keys.shape[0], nr = pos.shape[0], nh = hi.shape[0], nsub = sub.shape[0], t, lo, hi_, n = 0
    cdef int64_t key, r
    if ta.shape[0] != nk:
        raise ValueError(f"{name} needs a key per pair, got {nk} keys for {ta.shape[0]} first ends")
    _check_hits(name, hi, hj, nsub, nr)
    _check_rows(name, pos, nsub)
    cdef Py_ssize_t total = nh
    for t in range(nr):
        r = sub[pos[t]]
        lo = _left_i(&ta[0], 0, nk, r) if nk else 0
        hi_ = lo
        while hi_ < nk and ta[hi_] == r:
            hi_ += 1
        total += hi_ - lo
    at_a = np.empty(total, np.int64)
    cdef int64_t[::1] at = at_a
    for t in range(nr):
        r = sub[pos[t]]
        lo = _left_i(&ta[0], 0, nk, r) if nk else 0
        while lo < nk and ta[lo] == r:
            at[n] = lo
            n += 1
            lo += 1
    for t in range(nh):
        key = (sub[hi[t]] << 32) | sub[pos[hj[t]]]
        lo = _left_i(&keys[0], 0, nk, key) if nk else 0
        if lo < nk and keys[lo] == key:
            at[n] = lo
            n += 1
    n = _sort_unique(&at[0], n) if n else 0
    return at_a[:n]


def pairs_of(const int64_t[::1] keys, const int64_t[::1] ta, const int64_t[::1] sub, const int64_t[::1] pos,
             const int64_t[::1] hi, const int64_t[::1] hj):
    """The positions (sorted, distinct) of the pairs of a table (first column ``ta``, sorted; sorted
    keys ``keys``, ``a << 32 | b``) with an end at one of the solid positions ``pos``: those it is
    first in, and those it is second in whose first end is the row ``sub[hi[t]]`` of a hit of query
    ``hj[t]`` (the rows whose boxes met its box when the pair was found). ``observe._pairs_of``
    compiled, its index query left to the caller."""
    return _pairs_at(keys, ta, sub, pos, hi, hj, "pairs_of")


def near_touched(const int64_t[::1] keys, const int64_t[::1] na, const int64_t[::1] nb, const int64_t[::1] sub,
                 const int64_t[::1] subpos, const int64_t[::1] affected, const int64_t[::1] hi, const int64_t[::1] hj,
                 const double[:, :] sb, double gap):
    """The ``near`` pairs of the solid positions ``affected`` (sorted, distinct) in the table
    ``(na, nb)`` with sorted keys ``keys`` (``pairs_of``); the solid positions of the affected rows and
    of both ends of those pairs (sorted, distinct); and their grown boxes (``near_grown``). None when a
    box is not finite or an end is not a solid row."""
    cdef Py_ssize_t nr = affected.shape[0], t, u, npos = subpos.shape[0], nsb = sb.shape[0], h = 0
    cdef int64_t r
    if nb.shape[0] != keys.shape[0]:
        raise ValueError(f"near_touched needs a key per pair, got {keys.shape[0]} keys for {na.shape[0]} and "
                         f"{nb.shape[0]} ends")
    touch_a = _pairs_at(keys, na, sub, affected, hi, hj, "near_touched")
    cdef const int64_t[::1] at = touch_a
    u = at.shape[0]
    # the solid positions of the affected rows and of both ends of each pair
    halo_a = np.empty(nr + 2 * u, np.int64)
    cdef int64_t[::1] halo = halo_a
    for t in range(nr):
        halo[h] = affected[t]
        h += 1
    for t in range(2 * u):
        r = na[at[t >> 1]] if t & 1 == 0 else nb[at[t >> 1]]
        if r < 0 or r >= npos or subpos[r] < 0:
            return None
        halo[h] = subpos[r]
        h += 1
    h = _sort_unique(&halo[0], h) if h else 0
    grown_a = np.empty((h, 4), np.float64)
    cdef double[:, ::1] grown = grown_a
    for t in range(h):
        if halo[t] >= nsb or not _finite4(sb, halo[t]):
            return None
        _grow_by(sb, halo[t], gap, grown, t)
    return touch_a, halo_a[:h].copy(), grown_a


cdef struct _Ranked:
    # a row, a value ranking its candidates, a candidate
    int64_t h
    double g
    int64_t i


cdef int _ranked_cmp(const void* a, const void* b) noexcept nogil:
    # by row, then value, then candidate (observe._knn's lexsort; observe._inside_update's with the
    # candidate negated)
    cdef const _Ranked* x = <const _Ranked*>a
    cdef const _Ranked* y = <const _Ranked*>b
    if x.h != y.h:
        return -1 if x.h < y.h else 1
    if x.g != y.g:
        return -1 if x.g < y.g else 1
    return (x.i > y.i) - (x.i < y.i)


def near_pairs(const double[:, :] sb, const int64_t[::1] sub, const int64_t[::1] size, const int64_t[::1] halo,
               const int64_t[::1] hi, const int64_t[::1] hj, const int64_t[::1] affected, double gap, Py_ssize_t k):
    """The ``near`` pairs of the solid positions ``affected`` (sorted, distinct), found among the ``k``
    nearest of each row of ``halo`` (``observe._knn``: the boxes ``hi[t]`` the grown box of
    ``halo[hj[t]]`` met, within ``gap`` and without a positive-area overlap, by gap then position), as
    page rows ``a < b`` with their gap, sorted by ``(a, b)``, each pair once, native kin left out
    (``size``: each page row's subtree size). None when a box is not finite."""
    cdef Py_ssize_t nh = hi.shape[0], nhalo = halo.shape[0], nsb = sb.shape[0], nsub = sub.shape[0], t, n = 0, c, s
    cdef Py_ssize_t na_ = affected.shape[0], nsize = size.shape[0], w
    cdef int64_t h, i, x, y, a, b
    cdef int64_t[::1] oa, ob
    cdef double[::1] og
    if sub.shape[0] != nsb:
        raise ValueError(f"near_pairs needs a page row per solid box, got {sub.shape[0]} for {nsb}")
    if k < 0:
        raise ValueError(f"near_pairs needs k >= 0, got {k}")
    _check_hits("near_pairs", hi, hj, nsb, nhalo)
    _check_rows("near_pairs", halo, nsb)
    cdef _Ranked* cand = <_Ranked*>malloc(max(nh, 1) * sizeof(_Ranked))
    # (pair key, gap, position): sorted, a key's first is its first in the order above (a pair's two
    # entries have the same gap: the gap is symmetric)
    cdef _Ranked* kg = <_Ranked*>malloc(max(nh, 1) * sizeof(_Ranked))
    if cand == NULL or kg == NULL:
        free(cand)
        free(kg)
        raise MemoryError()
    try:
        for t in range(nh):
            h = halo[hj[t]]
            i = hi[t]
            if not (_finite4(sb, h) and _finite4(sb, i)):
                return None
            if i == h or _pos_area(sb, h, sb, i):
                continue
            cand[n].g = _box_gap(sb, h, sb, i)
            if cand[n].g <= gap:
                cand[n].h = h
                cand[n].i = i
                n += 1
        if n > 1:
            qsort(cand, n, sizeof(_Ranked), _ranked_cmp)
        # the first k of each row's run, with an end among the affected rows, keyed by position pair
        c = 0
        w = 0
        for t in range(n):
            if t and cand[t].h == cand[t - 1].h:
                c += 1
            else:
                c = 0
            if c >= k:
                continue
            h, i = cand[t].h, cand[t].i
            s = _left_i(&affected[0], 0, na_, h) if na_ else 0
            if not (s < na_ and affected[s] == h):
                s = _left_i(&affected[0], 0, na_, i) if na_ else 0
                if not (s < na_ and affected[s] == i):
                    continue
            x, y = (h, i) if h < i else (i, h)
            kg[w].h = x * nsub + y
            kg[w].g = cand[t].g
            kg[w].i = w
            w += 1
        if w > 1:
            qsort(kg, w, sizeof(_Ranked), _ranked_cmp)
        a_a = np.empty(w, np.int64)
        b_a = np.empty(w, np.int64)
        g_a = np.empty(w, np.float64)
        oa, ob, og = a_a, b_a, g_a
        n = 0
        for t in range(w):
            if t and kg[t].h == kg[t - 1].h:
                continue
            a = sub[kg[t].h // nsub]
            b = sub[kg[t].h % nsub]
            if a < 0 or a >= nsize or b < 0 or b >= nsize:
                raise IndexError(f"near_pairs: row {a if a < 0 or a >= nsize else b} outside the {nsize} subtree sizes")
            # native kin (one an ancestor of the other) are no near pair
            if (a < b and b < a + size[a]) or (b < a and a < b + size[b]):
                continue
            oa[n] = a
            ob[n] = b
            og[n] = kg[t].g
            n += 1
        return a_a[:n], b_a[:n], g_a[:n]
    finally:
        free(cand)
        free(kg)


# --------------------------------------------------------------------------- aligned bits merged


cdef inline int64_t _bits_of(const int64_t[::1] rows, const int64_t[::1] bits, int64_t r) noexcept nogil:
    # the entry of ``bits`` at row r of the sorted distinct ``rows``, 0 when r is not there
    cdef Py_ssize_t n = rows.shape[0]
    cdef Py_ssize_t p = _left_i(&rows[0], 0, n, r) if n else 0
    return bits[p] if p < n and rows[p] == r else 0


def aligned_merge(const int64_t[::1] aa, const int64_t[::1] ab, const int64_t[::1] am, const int64_t[::1] keys,
                  const int64_t[::1] cut_rows, const int64_t[::1] cut_bits, const int64_t[::1] nk,
                  const int64_t[::1] nb):
    """The ``aligned`` table ``(aa, ab, am)`` (sorted key column ``keys``, ``aa`` sorted) after the rows
    ``cut_rows`` (sorted, distinct) were cut again for the kinds of ``cut_bits``, with the new pairs'
    keys ``nk`` and kind bits ``nb``: a pair of the table whose first row was cut again keeps the bits
    of the kinds its rows were not both cut again for, with the new bits of its key merged in (see
    ``observe._aligned_merge_py``, the twin). Returns ``(drop, at, bits, new_keys, new_bits)``: the
    positions of the pairs left with no kind, those whose bits changed and their bits (both
    increasing), and the keys (increasing) and bits of the new pairs."""
    cdef Py_ssize_t n = keys.shape[0], nc = cut_rows.shape[0], nn = nk.shape[0], t, lo, hi, m = 0, u, q
    cdef Py_ssize_t nd = 0, nw = 0, nnew = 0
    cdef int64_t r, now
    if aa.shape[0] != n or ab.shape[0] != n or am.shape[0] != n:
        raise ValueError(f"aligned_merge needs a key per pair, got {n} keys for {aa.shape[0]}, {ab.shape[0]} "
                         f"and {am.shape[0]} rows")
    if cut_bits.shape[0] != nc or nb.shape[0] != nn:
        raise ValueError(f"aligned_merge needs bits per row and per new key, got {cut_bits.shape[0]} for {nc} "
                         f"and {nb.shape[0]} for {nn}")
    # the positions of the pairs whose first row was cut again (runs of ``aa``)
    cdef Py_ssize_t total = 0
    for t in range(nc):
        lo = _left_i(&aa[0], 0, n, cut_rows[t]) if n else 0
        hi = lo
        while hi < n and aa[hi] == cut_rows[t]:
            hi += 1
        total += hi - lo
    at_a = np.empty(total, np.int64)
    cdef int64_t[::1] at = at_a
    for t in range(nc):
        lo = _left_i(&aa[0], 0, n, cut_rows[t]) if n else 0
        while lo < n and aa[lo] == cut_rows[t]:
            at[m] = lo
            m += 1
            lo += 1
    # their keys with the bits kept, and the new keys: merged by key
    cdef _KeyBits* kb = <_KeyBits*>malloc(max(m + nn, 1) * sizeof(_KeyBits))
    if kb == NULL:
        raise MemoryError()
    drop_a = np.empty(m, np.int64)
    rw_a = np.empty(m, np.int64)
    rwb_a = np.empty(m, np.int64)
    new_k_a = np.empty(m + nn, np.int64)
    new_b_a = np.empty(m + nn, np.int64)
    cdef int64_t[::1] drop = drop_a, rw = rw_a, rwb = rwb_a, new_k = new_k_a, new_b = new_b_a
    try:
        for t in range(m):
            q = at[t]
            kb[t].key = keys[q]
            kb[t].bits = am[q] & ~(_bits_of(cut_rows, cut_bits, aa[q]) & _bits_of(cut_rows, cut_bits, ab[q]))
        for t in range(nn):
            kb[m + t].key = nk[t]
            kb[m + t].bits = nb[t]
        if m + nn > 1:
            qsort(kb, m + nn, sizeof(_KeyBits), _key_bits_cmp)
        u = 0
        for t in range(m + nn):
            if u and kb[u - 1].key == kb[t].key:
                kb[u - 1].bits |= kb[t].bits
            else:
                kb[u] = kb[t]
                u += 1
        # each pair at ``at`` (increasing keys) against the merged keys: dropped, rewritten or kept; the
        # merged keys no pair holds are new
        lo = 0
        for t in range(m):
            q = at[t]
            while lo < u and kb[lo].key != keys[q]:  # (every key at ``at`` is among the merged ones)
                if kb[lo].bits != 0:
                    new_k[nnew] = kb[lo].key
                    new_b[nnew] = kb[lo].bits
                    nnew += 1
                lo += 1
            if lo == u:
                raise ValueError("aligned_merge needs the table's keys sorted along its first column")
            now = kb[lo].bits
            lo += 1
            if now == 0:
                drop[nd] = q
                nd += 1
            elif now != am[q]:
                rw[nw] = q
                rwb[nw] = now
                nw += 1
        while lo < u:
            if kb[lo].bits != 0:
                new_k[nnew] = kb[lo].key
                new_b[nnew] = kb[lo].bits
                nnew += 1
            lo += 1
    finally:
        free(kb)
    return drop_a[:nd], rw_a[:nw], rwb_a[:nw], new_k_a[:nnew], new_b_a[:nnew]


# --------------------------------------------------------------------------- overlaps after a move
def overlaps_found(const double[:, :] sb, const int64_t[::1] sub, const double[:, :] boxes, const int64_t[::1] size,
                   const int64_t[::1] changed, const int64_t[::1] hi, const int64_t[::1] hj):
    """The ``overlaps`` pairs of the solid positions ``changed``: each hit ``hi[t]`` of the box of
    ``changed[hj[t]]`` that overlaps it with positive area, as page rows ``(a, b)`` sorted by key, each
    once, without containment (one box inside the other, unless they are the same box: ``boxes``, the
    page rows' boxes) or native kin (``size``: subtree sizes). ``observe._overlaps_update``'s steps
    after its index query (its twin, ``OVERLAPS_KERNEL`` False there). None when a box is not finite."""
    cdef Py_ssize_t nsb = sb.shape[0], nc = changed.shape[0], nh = hi.shape[0], t, n = 0, u = 0
    cdef Py_ssize_t nsize = size.shape[0], nbox = boxes.shape[0]
    cdef int64_t i, c, a, b
    cdef bint a_in_b, b_in_a
    if sub.shape[0] != nsb:
        raise ValueError(f"overlaps_found needs a page row per solid box, got {sub.shape[0]} for {nsb}")
    _check_hits("overlaps_found", hi, hj, nsb, nc)
    _check_rows("overlaps_found", changed, nsb)
    key_a = np.empty(nh, np.int64)
    cdef int64_t[::1] key = key_a
    for t in range(nh):
        i, c = hi[t], changed[hj[t]]
        if not (_finite4(sb, i) and _finite4(sb, c)):
            return None
        if i != c and _pos_area(sb, i, sb, c):
            key[n] = (i if i < c else c) * nsb + (c if i < c else i)
            n += 1
    if n:
        n = _sort_unique(&key[0], n)
    a_a = np.empty(n, np.int64)
    b_a = np.empty(n, np.int64)
    cdef int64_t[::1] oa = a_a, ob = b_a
    for t in range(n):
        a = sub[key[t] // nsb]
        b = sub[key[t] % nsb]
        for i in (a, b):
            if i < 0 or i >= nsize or i >= nbox:
                raise IndexError(f"overlaps_found: row {i} outside the {nsize} subtree sizes or {nbox} boxes")
        if not (_finite4(boxes, a) and _finite4(boxes, b)):
            return None
        a_in_b = (boxes[a, 0] >= boxes[b, 0] and boxes[a, 1] >= boxes[b, 1] and boxes[a, 2] <= boxes[b, 2]
                  and boxes[a, 3] <= boxes[b, 3])
        b_in_a = (boxes[b, 0] >= boxes[a, 0] and boxes[b, 1] >= boxes[a, 1] and boxes[b, 2] <= boxes[a, 2]
                  and boxes[b, 3] <= boxes[a, 3])
        if (a_in_b or b_in_a) and not (a_in_b and b_in_a):
            continue  # containment: an ``inside`` pair
        if (a < b and b < a + size[a]) or (b < a and a < b + size[b]):
            continue  # native kin
        oa[u] = a
        ob[u] = b
        u += 1
    return a_a[:u], b_a[:u]


# --------------------------------------------------------------------------- inside after a move
cdef inline bint _holds(const double[:, :] b, Py_ssize_t a, Py_ssize_t x) noexcept nogil:
    # observe._contains(b[a], b[x]) and the two boxes not the same (closed containment, as the kernels test it)
    return (b[a, 0] <= b[x, 0] and b[x, 2] <= b[a, 2] and b[a, 1] <= b[x, 1] and b[x, 3] <= b[a, 3]
            and (b[a, 0] != b[x, 0] or b[a, 1] != b[x, 1] or b[a, 2] != b[x, 2] or b[a, 3] != b[x, 3]))


def inside_redo(const double[:, :] sb, const int64_t[::1] changed, const int64_t[::1] hi, const int64_t[::1] hj,
                const int64_t[::1] ci, const int64_t[::1] co, const int64_t[::1] sub, const int64_t[::1] subpos,
                const int64_t[::1] orphans):
    """The solid positions whose tightest container can differ after the boxes of ``changed`` changed
    (and the containers of ``orphans`` were removed), sorted and distinct: the changed ones, the
    orphans, those a changed row held (``ci`` inside ``co``) and those a changed box holds now (a hit
    ``hi[t]`` of ``changed[hj[t]]``'s box strictly inside it). ``observe._inside_update``'s first step
    (its twin, ``INSIDE_KERNEL`` False there). None when a held row is not solid."""
    cdef Py_ssize_t nc = changed.shape[0], nh = hi.shape[0], nt = ci.shape[0], no = orphans.shape[0]
    cdef Py_ssize_t nsb = sb.shape[0], npos = subpos.shape[0], t, n = 0, p, nr
    cdef int64_t i, c
    if co.shape[0] != nt or sub.shape[0] != nsb:
        raise ValueError(f"inside_redo needs ci and co of one length ({nt}, {co.shape[0]}) and a page row per solid "
                         f"box ({sub.shape[0]} for {nsb})")
    _check_hits("inside_redo", hi, hj, nsb, nc)
    _check_rows("inside_redo", changed, nsb)
    rows_a = np.empty(nc, np.int64)
    cdef int64_t[::1] rows = rows_a
    for t in range(nc):
        rows[t] = sub[changed[t]]
    nr = _sort_unique(&rows[0], nc) if nc else 0
    out_a = np.empty(nc + no + nh + nt, np.int64)
    cdef int64_t[::1] out = out_a
    for t in range(nc):
        out[n] = changed[t]
        n += 1
    for t in range(no):
        out[n] = orphans[t]
        n += 1
    for t in range(nt):  # the rows a changed row held
        p = _left_i(&rows[0], 0, nr, co[t]) if nr else 0
        if p < nr and rows[p] == co[t]:
            if ci[t] < 0 or ci[t] >= npos or subpos[ci[t]] < 0:
                return None
            out[n] = subpos[ci[t]]
            n += 1
    for t in range(nh):  # the rows a changed box holds now
        i, c = hi[t], changed[hj[t]]
        if i != c and _holds(sb, c, i):
            out[n] = i
            n += 1
    n = _sort_unique(&out[0], n) if n else 0
    return out_a[:n].copy()


def inside_found(const double[:, :] sb, const int64_t[::1] sub, const int64_t[::1] size, const int64_t[::1] redo,
                 const int64_t[::1] hi, const int64_t[::1] hj, const int64_t[::1] ci, const int64_t[::1] co):
    """The ``inside`` table ``(ci, co)`` (sorted by ``ci``) with the tightest container of each of the
    solid positions ``redo`` (sorted, distinct) found again: among the hits ``hi[t]`` of
    ``redo[hj[t]]``'s box that hold it strictly and are not its native kin (``size``), the one of least
    area, the later row among equals. Returns the new ``(ci, co)``, sorted by ``ci``. None when an
    area is NaN or ``ci`` is not sorted (the twin then)."""
    cdef Py_ssize_t nr = redo.shape[0], nh = hi.shape[0], nt = ci.shape[0], nsb = sb.shape[0], nsize = size.shape[0]
    cdef Py_ssize_t t, n = 0, u = 0, k = 0, p
    cdef int64_t i, r, a, b
    cdef double area
    if co.shape[0] != nt or sub.shape[0] != nsb:
        raise ValueError(f"inside_found needs ci and co of one length ({nt}, {co.shape[0]}) and a page row per solid "
                         f"box ({sub.shape[0]} for {nsb})")
    _check_hits("inside_found", hi, hj, nsb, nr)
    _check_rows("inside_found", redo, nsb)
    for t in range(1, nt):
        if ci[t] < ci[t - 1]:
            return None
    # (inner row, container's area, minus the container's row): sorted, each inner row's first is the
    # container of least area, the later row among equals
    cdef _Ranked* hd = <_Ranked*>malloc(max(nh, 1) * sizeof(_Ranked))
    if hd == NULL:
        raise MemoryError()
    new_i_a = np.empty(nh, np.int64)
    new_o_a = np.empty(nh, np.int64)
    cdef int64_t[::1] new_i = new_i_a, new_o = new_o_a
    try:
        for t in range(nh):
            i, r = hi[t], redo[hj[t]]
            if i == r or not _holds(sb, i, r):
                continue
            a, b = sub[i], sub[r]
            if a < 0 or a >= nsize or b < 0 or b >= nsize:
                raise IndexError(f"inside_found: row {a if a < 0 or a >= nsize else b} outside the {nsize} subtree sizes")
            if (a < b and b < a + size[a]) or (b < a and a < b + size[b]):
                continue  # native kin
            area = (sb[i, 2] - sb[i, 0]) * (sb[i, 3] - sb[i, 1])
            if isnan(area):
                return None
            hd[n].h = b
            hd[n].g = area
            hd[n].i = -a
            n += 1
        if n > 1:
            qsort(hd, n, sizeof(_Ranked), _ranked_cmp)
        for t in range(n):
            if t == 0 or hd[t].h != hd[t - 1].h:
                new_i[u] = hd[t].h
                new_o[u] = -hd[t].i
                u += 1
    finally:
        free(hd)
    # the table without the rows found again, merged with their new containers by inner row (kept first)
    rows_a = np.empty(nr, np.int64)
    cdef int64_t[::1] rows = rows_a
    for t in range(nr):
        rows[t] = sub[redo[t]]
    nr = _sort_unique(&rows[0], nr) if nr else 0
    out_i_a = np.empty(nt + u, np.int64)
    out_o_a = np.empty(nt + u, np.int64)
    cdef int64_t[::1] out_i = out_i_a, out_o = out_o_a
    n = 0
    for t in range(nt):
        p = _left_i(&rows[0], 0, nr, ci[t]) if nr else 0
        if p < nr and rows[p] == ci[t]:
            continue
        while k < u and new_i[k] < ci[t]:
            out_i[n] = new_i[k]
            out_o[n] = new_o[k]
            n += 1
            k += 1
        out_i[n] = ci[t]
        out_o[n] = co[t]
        n += 1
    while k < u:
        out_i[n] = new_i[k]
        out_o[n] = new_o[k]
        n += 1
        k += 1
    return out_i_a[:n], out_o_a[:n]


# --------------------------------------------------------------------------- touches after a move
cdef Py_ssize_t _strip_ends(const double[::1] xs, const int64_t[::1] xp, const int64_t[::1] er,
                            const double[::1] ex, const double[::1] ey, const int64_t[::1] mv,
                            double b0, double b1, double b2, double b3, double tol, int64_t* out) except -2:
    # observe._touches_keyed's strip: the ends (positions, sorted) of connectors not in ``mv`` whose
    # square of half-size tol meets the box with positive area, found among the ends of its x strip;
    # -1 when a value read is NaN
    cdef double m = 1e-6 * (fabs(b0) + fabs(b2) + tol) + 1e-300
    cdef Py_ssize_t n = xs.shape[0], nm = mv.shape[0], lo, hi, t, k, q, p, c = 0
    cdef double s0, s1, s2, s3, top, bot
    lo = _left(&xs[0], n, (b0 - tol) - m) if n else 0
    hi = _right(&xs[0], n, (b2 + tol) + m) if n else 0
    for t in range(lo, hi):
        k = xp[t]
        if k < 0 or k >= er.shape[0]:
            raise IndexError(f"touches_strips: end {k} outside the {er.shape[0]} ends")
        if nm:
            p = _left_i(&mv[0], 0, nm, er[k])
            if p < nm and mv[p] == er[k]:
                continue
        if isnan(ex[k]) or isnan(ey[k]):
            return -1
        s0, s1, s2, s3 = ex[k] - tol, ey[k] - tol, ex[k] + tol, ey[k] + tol
        top = s2 if s2 < b2 else b2
        bot = s0 if s0 > b0 else b0
        if not (top > bot):
            continue
        top = s3 if s3 < b3 else b3
        bot = s1 if s1 > b1 else b1
        if not (top > bot):
            continue
        out[c] = k
        c += 1
    if c > 1:
        qsort(out, c, sizeof(int64_t), _int64_cmp)
    return c


def touches_strips(const double[::1] xs, const int64_t[::1] xp, const int64_t[::1] er, const int64_t[::1] et,
                   const double[::1] ex, const double[::1] ey, const int64_t[::1] mv, const int64_t[::1] keys,
                   const int64_t[::1] changed, const double[:, :] before, const double[:, :] sb,
                   const int64_t[::1] sub, const double[:, :] boxes, double tol):
    """``observe._touches_keyed``'s loop over the changed boxes, compiled: per changed solid position,
    the unbound ends (rows ``er``, terminals ``et``, page points ``ex``, ``ey``; their x values sorted
    ``xs`` with positions ``xp``) of connectors not in ``mv`` (sorted) whose square met its box
    ``before``, looked up in the table's sorted ``keys`` (positions, in the loop's order), and those
    whose square meets its box now (``boxes`` of its page row) and that lie on its edge (within ``tol``
    inside it), as ``(connector, shape, terminal)``; its box now is ``sb``'s for the strip and ``boxes``'
    for the edge, as there. None when a value read is NaN."""
    cdef Py_ssize_t nc = changed.shape[0], ne = er.shape[0], nk = keys.shape[0], t, i, c, n, nd = 0, nn = 0, p
    cdef int64_t r, key, k
    cdef double d
    if xp.shape[0] != xs.shape[0] or et.shape[0] != ne or ex.shape[0] != ne or ey.shape[0] != ne:
        raise ValueError(f"touches_strips needs one value per end, got {xs.shape[0]} sorted x, {xp.shape[0]} "
                         f"positions, {ne} rows, {et.shape[0]} terminals and {ex.shape[0]}, {ey.shape[0]} points")
    if before.shape[0] != nc:
        raise ValueError(f"touches_strips needs a box before per changed position ({nc}), got {before.shape[0]}")
    for t in range(nc):
        if (changed[t] < 0 or changed[t] >= sub.shape[0] or changed[t] >= sb.shape[0] or sub[changed[t]] < 0
                or sub[changed[t]] >= boxes.shape[0]):
            raise IndexError(f"touches_strips: position {changed[t]} outside the {sub.shape[0]} solid rows")
    cdef int64_t* buf = <int64_t*>malloc(max(xs.shape[0], 1) * sizeof(int64_t))
    if buf == NULL:
        raise MemoryError()
    drop_l, nc_l, ns_l, nt_l = [], [], [], []
    try:
        for t in range(nc):
            c = changed[t]
            r = sub[c]
            if (isnan(boxes[r, 0]) or isnan(boxes[r, 1]) or isnan(boxes[r, 2]) or isnan(boxes[r, 3])
                    or isnan(sb[c, 0]) or isnan(sb[c, 1]) or isnan(sb[c, 2]) or isnan(sb[c, 3])
                    or isnan(before[t, 0]) or isnan(before[t, 1]) or isnan(before[t, 2]) or isnan(before[t, 3])):
                return None
            n = _strip_ends(xs, xp, er, ex, ey, mv, before[t, 0], before[t, 1], before[t, 2], before[t, 3], tol, buf)
            if n < 0:
                return None
            for i in range(n):
                k = buf[i]
                key = ((er[k] * 2 + et[k]) << 32) | r
                p = _left_i(&keys[0], 0, nk, key) if nk else 0
                if p < nk and keys[p] == key:
                    drop_l.append(p)
            n = _strip_ends(xs, xp, er, ex, ey, mv, sb[c, 0], sb[c, 1], sb[c, 2], sb[c, 3], tol, buf)
            if n < 0:
                return None
            for i in range(n):
                k = buf[i]
                # the end lies on the shape's edge: at most tol inside it (observe._touch_filter)
                d = ex[k] - boxes[r, 0]
                if boxes[r, 2] - ex[k] < d:
                    d = boxes[r, 2] - ex[k]
                if ey[k] - boxes[r, 1] < d:
                    d = ey[k] - boxes[r, 1]
                if boxes[r, 3] - ey[k] < d:
                    d = boxes[r, 3] - ey[k]
                if d <= tol and r != er[k]:
                    nc_l.append(er[k])
                    ns_l.append(r)
                    nt_l.append(et[k])
    finally:
        free(buf)
    return (np.array(drop_l, np.int64), np.array(nc_l, np.int64), np.array(ns_l, np.int64), np.array(nt_l, np.int64))


# --------------------------------------------------------------------------- the painted cover's reach
cdef inline void _grow_cover(const double* b, double pad, double* out) noexcept nogil:
    # observe._grown_boxes on one box: the same operations in the same order (finite boxes)
    cdef double m = fabs(b[0]), v
    v = fabs(b[1])
    if v > m:
        m = v
    v = fabs(b[2])
    if v > m:
        m = v
    v = fabs(b[3])
    if v > m:
        m = v
    if m < 1.0:
        m = 1.0
    m *= 1e-3
    m += pad
    out[0] = b[0] - m
    out[1] = b[1] - m
    out[2] = b[2] + m
    out[3] = b[3] + m


#: Most box comparisons ``painted_reach`` makes; beyond, the caller's index kernels answer.
PAINTED_REACH_MAX = 1 << 20


def painted_reach(const double[:, ::1] boxes, const int64_t[::1] rows, const double[:, ::1] bb,
                  const int64_t[::1] brank, const int64_t[::1] dirty, const int64_t[::1] prev_rows,
                  const int64_t[::1] prev_occ, double pad):
    """Which rows in view an edit's painted cover reaches, and what the others keep (the part of
    ``observe._painted_occluders_again`` before the covers are computed; its twin is
    ``observe._painted_reach_py``).

    ``boxes``: the boxes of the rows in view, page rows ``rows`` (their paint ranks); ``bb``: the
    dirty rows' boxes before the edit and now, paint ranks ``brank``; ``dirty``: the dirty rows,
    sorted; ``prev_rows`` (sorted), ``prev_occ``: the previous result. A row is reached when it is
    dirty or when the grown box (``observe._grown_boxes``, ``pad`` the fixed part) of a box of
    ``bb`` ranked above it meets its grown box with positive area.

    Returns ``(out, aff, sub, at)``: the previous occluder of each row (-1 where none), the
    positions of the reached rows, those of the rows their cover is computed among (the reached
    ones and every row above one whose grown box meets its grown box with positive area), and the
    position in ``sub`` of each of ``aff``. ``()`` when a row is neither reached nor in the
    previous result; None when a box is not finite or the comparisons would pass
    :data:`PAINTED_REACH_MAX` (the twin answers).
    """
    cdef Py_ssize_t k = rows.shape[0], m = bb.shape[0], i, t, na = 0, ns = 0, p
    if boxes.shape[0] != k or boxes.shape[1] != 4 or bb.shape[1] != 4 or brank.shape[0] != m:
        raise ValueError(f"boxes ({boxes.shape[0]}) must have one row per row ({k}), brank ({brank.shape[0]}) "
                         f"one per box of bb ({m}), both four columns")
    if prev_occ.shape[0] != prev_rows.shape[0]:
        raise ValueError(f"prev_occ ({prev_occ.shape[0]}) must have one entry per prev_rows ({prev_rows.shape[0]})")
    if k * m > PAINTED_REACH_MAX:
        return None
    for i in range(k):
        if not _finite4(boxes, i):
            return None
    for t in range(m):
        if not _finite4(bb, t):
            return None
    out_a = np.empty(k, np.int64)
    grown_a = np.empty((k, 4), np.float64)
    gb_a = np.empty((m, 4), np.float64)
    flag_a = np.zeros(k, np.uint8)
    cdef int64_t[::1] out = out_a
    cdef double[:, ::1] grown = grown_a
    cdef double[:, ::1] gb = gb_a
    cdef uint8_t[::1] flag = flag_a
    cdef Py_ssize_t nprev = prev_rows.shape[0], nd = dirty.shape[0]
    cdef int64_t r
    cdef bint found
    with nogil:
        for i in range(k):
            _grow_cover(&boxes[i, 0], pad, &grown[i, 0])
        for t in range(m):
            _grow_cover(&bb[t, 0], pad, &gb[t, 0])
        for i in range(k):
            r = rows[i]
            p = _left_i(&prev_rows[0], 0, nprev, r) if nprev else 0
            found = p < nprev and prev_rows[p] == r
            out[i] = prev_occ[p] if found else -1
            p = _left_i(&dirty[0], 0, nd, r) if nd else 0
            if p < nd and dirty[p] == r:
                flag[i] = 1
            else:
                for t in range(m):
                    if brank[t] > r and _pos_area(gb, t, grown, i):
                        flag[i] = 1
                        break
            if flag[i]:
                na += 1
            elif not found:
                na = -1  # neither reached nor in the previous result
                break
    if na < 0:
        return ()
    aff_a = np.empty(na, np.int64)
    cdef int64_t[::1] aff = aff_a
    t = 0
    for i in range(k):
        if flag[i]:
            aff[t] = i
            t += 1
    if k * na > PAINTED_REACH_MAX:
        return None
    with nogil:
        # a row above a reached one (a later position) whose grown box meets its grown box can cover it
        for i in range(k):
            if flag[i]:
                ns += 1
                continue
            for t in range(na):
                if aff[t] >= i:
                    break
                if _pos_area(grown, aff[t], grown, i):
                    flag[i] = 2
                    ns += 1
                    break
    sub_a = np.empty(ns, np.int64)
    at_a = np.empty(na, np.int64)
    cdef int64_t[::1] sub = sub_a
    cdef int64_t[::1] at = at_a
    t = 0
    p = 0
    for i in range(k):
        if flag[i]:
            if flag[i] == 1:
                at[t] = p
                t += 1
            sub[p] = i
            p += 1
    return out_a, aff_a, sub_a, at_a
