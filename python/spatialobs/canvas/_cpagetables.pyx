# cython: language_level=3, boundscheck=False, wraparound=False
"""The sorted relation tables' scans, compiled.

``run_bounds`` finds a run of sorted line values (see
:func:`spatialobs.canvas.pagetables.run_bounds`, which calls it for float64 arrays); a run
holds a few values to a few hundred, so numpy's per-call cost was most of its time. The
pure-Python twin is ``spatialobs.canvas.pagetables._run_bounds_py``; tests compare the two.
"""

from libc.math cimport isnan


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
