# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The box of a short tldraw ``draw`` stroke, compiled (the per-shape work of loading a sketch).

``draw_extent(points, size, streamline, last)`` takes one free segment's point dicts
(``[{"x", "y", ...}, ...]``), stores them as tldraw's migration does (the first point
as float32, each step as float16, summed back), streamlines them as tldraw's
``getStrokePoints`` does and returns ``(x0, y0, x1, y1, count, ix0, iy0, ix1, iy1)``:
the box and number of the streamlined points and the box of the stored input points.
It returns None, for the pure-Python path, when a point is not a dict of plain
numbers or a coordinate reaches half float16's range.

The pure-Python twin is ``freehand._fast_listed`` followed by ``freehand._stroke_extent``
(the same double operations in the same order); tests compare the two.
"""

from libc.math cimport fabs, frexp, ldexp, nearbyint, pow
from libc.stdlib cimport free, malloc

cdef double _F16_HALF = 65504.0 / 2
cdef double _SAME = 0.0001


cdef inline double _half(double d) noexcept nogil:
    # d rounded to the nearest float16 (ties to even), for |d| < 65504 (no overflow)
    cdef int e
    cdef double q
    if d == 0.0:
        return d
    frexp(d, &e)  # |d| = m * 2^e, 0.5 <= m < 1: the float16 exponent is e - 1
    if e - 1 < -14:
        q = ldexp(1.0, -24)  # subnormal float16
    else:
        q = ldexp(1.0, e - 11)
    return nearbyint(d / q) * q


cdef inline int _get(object p, double* x, double* y):
    # p["x"], p["y"] as doubles for a dict of plain floats or ints; 0 otherwise
    cdef object vx, vy
    if type(p) is not dict:
        return 0
    vx = (<dict>p).get("x")
    vy = (<dict>p).get("y")
    if type(vx) is float:
        x[0] = <double>vx
    elif type(vx) is int:
        try:
            x[0] = <double>vx
        except OverflowError:
            return 0
    else:
        return 0
    if type(vy) is float:
        y[0] = <double>vy
    elif type(vy) is int:
        try:
            y[0] = <double>vy
        except OverflowError:
            return 0
    else:
        return 0
    return 1


def draw_extent(list points, double size, double streamline, bint last):
    """See the module docstring."""
    cdef Py_ssize_t n = len(points), i, j, m, start, end
    cdef double *ax
    cdef double *ay
    cdef double *sx
    cdef double *sy
    cdef double x, y, a, b, px, py, dx, dy, u, total, min_d2, lx, ly, x0, y0, x1, y1
    cdef double ix0, iy0, ix1, iy1, e = _SAME
    cdef Py_ssize_t count
    if n == 0:
        return None
    ax = <double*>malloc(4 * (n + 1) * sizeof(double))
    if ax == NULL:
        raise MemoryError()
    ay = ax + (n + 1)
    sx = ay + (n + 1)
    sy = sx + (n + 1)
    try:
        for i in range(n):
            if not _get(points[i], &ax[i], &ay[i]):
                return None
            if not (fabs(ax[i]) < _F16_HALF and fabs(ay[i]) < _F16_HALF):  # also false for NaN
                return None
        # stored as tldraw stores them: float32 first point, float16 steps, summed in order
        lx, ly = ax[0], ay[0]
        sx[0] = <double>(<float>ax[0])
        sy[0] = <double>(<float>ay[0])
        for i in range(1, n):
            a, b = ax[i], ay[i]
            sx[i] = sx[i - 1] + _half(a - lx)
            sy[i] = sy[i - 1] + _half(b - ly)
            lx, ly = a, b
        ix0 = ix1 = sx[0]
        iy0 = iy1 = sy[0]
        for i in range(1, n):
            if sx[i] < ix0:
                ix0 = sx[i]
            if sx[i] > ix1:
                ix1 = sx[i]
            if sy[i] < iy0:
                iy0 = sy[i]
            if sy[i] > iy1:
                iy1 = sy[i]
        # _trim: points near the first dropped, points near the last replaced by it, the last repeated
        min_d2 = (size / 3) * (size / 3)
        x0, y0 = sx[0], sy[0]
        start = 1
        while start < n:
            dx, dy = sx[start] - x0, sy[start] - y0
            if dx * dx + dy * dy > min_d2:
                break
            start += 1
        m = n
        if start > 1:
            j = 1
            for i in range(start, n):
                sx[j] = sx[i]
                sy[j] = sy[i]
                j += 1
            m = j
        if m > 1:
            lx, ly = sx[m - 1], sy[m - 1]
            j = m - 2
            while j >= 0:
                dx, dy = sx[j] - lx, sy[j] - ly
                if dx * dx + dy * dy > min_d2:
                    break
                j -= 1
            if j < m - 2:
                sx[j + 1] = lx
                sy[j + 1] = ly
                m = j + 2
        if streamline > 0:
            sx[m] = sx[m - 1]
            sy[m] = sy[m - 1]
            m += 1
        # _stroke_extent
        u = 1 - (0.15 + (1 - streamline) * 0.85)
        px, py = sx[0], sy[0]
        x0 = x1 = px
        y0 = y1 = py
        count = 1
        total = 0.0
        for i in range(1, 4 if m > 4 else m):  # the head, where the noise rule applies
            a, b = sx[i], sy[i]
            if last and i == m - 1:
                x, y = a, b
            else:
                x = a + (px - a) * u
                y = b + (py - b) * u
            if fabs(px - x) < e and fabs(py - y) < e:
                continue
            total += pow((y - py) * (y - py) + (x - px) * (x - px), 0.5)
            if total < size:
                continue
            if x < x0:
                x0 = x
            if x > x1:
                x1 = x
            if y < y0:
                y0 = y
            if y > y1:
                y1 = y
            px, py = x, y
            count += 1
        if m > 4:
            end = m - 1 if last else m
            for i in range(4, end):
                a, b = sx[i], sy[i]
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
                x, y = sx[m - 1], sy[m - 1]
                if not (fabs(px - x) < e and fabs(py - y) < e):
                    if x < x0:
                        x0 = x
                    if x > x1:
                        x1 = x
                    if y < y0:
                        y0 = y
                    if y > y1:
                        y1 = y
                    count += 1
        return (x0, y0, x1, y1, count, ix0, iy0, ix1, iy1)
    finally:
        free(ax)
