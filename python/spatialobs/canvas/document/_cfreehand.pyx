# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""tldraw's freehand smoothing compiled: stroke boxes, smoothed points and outlines.

* ``draw_extent(points, size, streamline, last)`` takes one free segment's point dicts
  (``[{"x", "y", ...}, ...]``), stores them as tldraw's migration does (the first point as
  float32, each step as float16, summed back), streamlines them as tldraw's
  ``getStrokePoints`` does and returns ``(x0, y0, x1, y1, count, ix0, iy0, ix1, iy1)``: the box
  and number of the streamlined points and the box of the stored input points. It returns
  None, for the pure-Python path, when a point is not a dict of plain numbers or a
  coordinate reaches half float16's range. Any length: the loop is tldraw's own.
* ``path_extent(raw, dim, size, streamline, last)`` is the same for one free segment stored
  as a base64 ``path`` (``raw`` its decoded bytes, ``dim`` 2 or 3 values a point: float32
  first point, float16 steps, summed in order), or None when the bytes hold no point or a
  value that is not finite.
* ``stroke_extent(xs, ys, size, streamline, last)`` is the same box and count,
  ``(x0, y0, x1, y1, count)``, for points already stored (two float64 arrays).
* ``stroke_points(xs, ys, size, streamline, last)`` gives the streamlined points, an
  ``(n, 2)`` array.
* ``stroke_outline(xs, ys, size, streamline, smoothing, last)`` gives the outline polygon of
  a round-capped stroke of constant width (tldraw's ``getStroke``), a ``(k, 2)`` array.

The pure-Python twins are ``freehand._fast_listed`` (or ``freehand.decode_path``) followed by
``freehand._stroke_extent``,
``freehand._stroke_extent``, ``freehand._streamline`` and ``freehand._outline``: the same
double operations in the same order (libm's ``sin``, ``cos``, ``acos`` and ``pow`` as
Python's ``math`` calls them, no fused multiply-add); tests compare them repr for repr.
"""

import math

import numpy as np

from libc.math cimport INFINITY, NAN, acos, ceil, cos, fabs, frexp, isfinite, ldexp, nearbyint, pow, sin
from libc.stdint cimport uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cdef double _F16_HALF = 65504.0 / 2
cdef double _SAME = 0.0001
# the constants of freehand.py, computed by Python's math as there
cdef double _FIXED_PI = math.pi + 0.0001
cdef double _SIN_QUARTER = math.sin(0.5 * math.pi / 2)
cdef double _TRACK_TOLERANCE_RATIO = 0.05
cdef Py_ssize_t _SIMPLIFY_WINDOW = 8
cdef int _MIN_ROUNDED_CORNER_STEPS = 8
cdef int _MAX_ROUNDED_CORNER_STEPS = 13
cdef int _MIN_CAP_STEPS = 8
cdef int _MAX_CAP_STEPS = 29
cdef double _HARD_CORNER_DPR = -0.62
# the most points a hard corner adds to a track (13 steps of 1/13, one more if the sum rounds low)
cdef Py_ssize_t _CORNER_POINTS = 16


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


cdef Py_ssize_t _trim(double* sx, double* sy, Py_ssize_t n, double size, double streamline) noexcept nogil:
    # freehand._trim in place (sx, sy hold n + 1): points near the first dropped, points near
    # the last replaced by it, the last repeated; the staged count
    cdef double min_d2 = (size / 3) * (size / 3)
    cdef double x0 = sx[0], y0 = sy[0], dx, dy, lx, ly
    cdef Py_ssize_t start = 1, i, j, m = n
    while start < n:
        dx, dy = sx[start] - x0, sy[start] - y0
        if dx * dx + dy * dy > min_d2:
            break
        start += 1
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
    return m


cdef Py_ssize_t _extent(double* sx, double* sy, Py_ssize_t n, double size, double streamline, bint last,
                        double* box) noexcept nogil:
    # freehand._stroke_extent on n stored points (sx, sy hold n + 1, trimmed in place): the box
    # into box[0:4], the number of streamlined points returned
    cdef Py_ssize_t m, i, end, count
    cdef double x, y, a, b, px, py, dx, dy, u, total, x0, y0, x1, y1, e = _SAME
    m = _trim(sx, sy, n, size, streamline)
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
    box[0] = x0
    box[1] = y0
    box[2] = x1
    box[3] = y1
    return count


def draw_extent(list points, double size, double streamline, bint last):
    """See the module docstring."""
    cdef Py_ssize_t n = len(points), i, count
    cdef double *ax
    cdef double *ay
    cdef double *sx
    cdef double *sy
    cdef double a, b, lx, ly, ix0, iy0, ix1, iy1
    cdef double box[4]
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
        count = _extent(sx, sy, n, size, streamline, last, box)
        return (box[0], box[1], box[2], box[3], count, ix0, iy0, ix1, iy1)
    finally:
        free(ax)


cdef inline double _f32(const unsigned char* p) noexcept nogil:
    # a little-endian float32 as a double
    cdef uint32_t bits = p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)
    cdef float f
    memcpy(&f, &bits, 4)
    return <double>f


cdef inline double _f16(const unsigned char* p) noexcept nogil:
    # a little-endian float16 as a double (exact); infinities and NaN as such
    cdef unsigned int h = p[0] | (<unsigned int>p[1] << 8)
    cdef unsigned int e = (h >> 10) & 0x1F, f = h & 0x3FF
    cdef double v
    if e == 0:
        v = ldexp(<double>f, -24)
    elif e == 31:
        v = INFINITY if f == 0 else NAN
    else:
        v = ldexp(<double>(f | 0x400), <int>e - 25)
    return -v if h & 0x8000 else v


def path_extent(bytes raw, int dim, double size, double streamline, bint last):
    """See the module docstring."""
    cdef Py_ssize_t k = 2 if dim == 2 else 3
    cdef Py_ssize_t nbytes = len(raw), m, n, i, count
    cdef const unsigned char* b = raw
    cdef const unsigned char* p
    cdef double *sx
    cdef double *sy
    cdef double ix0, iy0, ix1, iy1
    cdef double box[4]
    if nbytes < 4 * k:
        return None
    m = (nbytes - 4 * k) // (2 * k)
    n = m + 1
    sx = <double*>malloc(2 * (n + 1) * sizeof(double))
    if sx == NULL:
        raise MemoryError()
    sy = sx + (n + 1)
    try:
        with nogil:
            sx[0] = _f32(b)
            sy[0] = _f32(b + 4)
            p = b + 4 * k
            for i in range(1, n):
                sx[i] = sx[i - 1] + _f16(p)
                sy[i] = sy[i - 1] + _f16(p + 2)
                p += 2 * k
            ix0 = ix1 = sx[0]
            iy0 = iy1 = sy[0]
            for i in range(n):
                if not (isfinite(sx[i]) and isfinite(sy[i])):
                    break
                if sx[i] < ix0:
                    ix0 = sx[i]
                if sx[i] > ix1:
                    ix1 = sx[i]
                if sy[i] < iy0:
                    iy0 = sy[i]
                if sy[i] > iy1:
                    iy1 = sy[i]
            else:
                i = n
        if i < n:
            return None
        count = _extent(sx, sy, n, size, streamline, last, box)
        return (box[0], box[1], box[2], box[3], count, ix0, iy0, ix1, iy1)
    finally:
        free(sx)


cdef double* _staged(const double[::1] xs, const double[::1] ys, Py_ssize_t* n) except NULL:
    # a copy of the points with room for the repeated last one (2 * (n + 1) doubles)
    cdef Py_ssize_t i, k = xs.shape[0]
    cdef double* buf
    if ys.shape[0] != k:
        raise ValueError(f"xs and ys differ in length: {k} and {ys.shape[0]}")
    if k == 0:
        raise ValueError("a stroke needs at least one point")
    buf = <double*>malloc(2 * (k + 1) * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    for i in range(k):
        buf[i] = xs[i]
        buf[k + 1 + i] = ys[i]
    n[0] = k
    return buf


def stroke_extent(const double[::1] xs, const double[::1] ys, double size, double streamline, bint last):
    """See the module docstring."""
    cdef Py_ssize_t n, count
    cdef double box[4]
    cdef double* buf = _staged(xs, ys, &n)
    try:
        count = _extent(buf, buf + n + 1, n, size, streamline, last, box)
    finally:
        free(buf)
    return (box[0], box[1], box[2], box[3], count)


cdef Py_ssize_t _streamline(double* sx, double* sy, Py_ssize_t n, double size, double streamline, bint last,
                            double* px, double* py, Py_ssize_t* idx, double* runs) noexcept nogil:
    # freehand._streamline: sx, sy (n + 1, trimmed in place) to px, py, idx, runs (room for n + 1); the count
    cdef Py_ssize_t m, i, k = 1
    cdef double u, a, b, x, y, prev_x, prev_y, total = 0.0
    m = _trim(sx, sy, n, size, streamline)
    u = 1 - (0.15 + (1 - streamline) * 0.85)
    prev_x, prev_y = sx[0], sy[0]
    px[0], py[0], idx[0], runs[0] = prev_x, prev_y, 0, 0.0
    for i in range(1, m):
        a, b = sx[i], sy[i]
        if last and i == m - 1:
            x, y = a, b
        else:
            x = a + (prev_x - a) * u
            y = b + (prev_y - b) * u
        if fabs(prev_x - x) < _SAME and fabs(prev_y - y) < _SAME:
            continue
        total += pow((y - prev_y) * (y - prev_y) + (x - prev_x) * (x - prev_x), 0.5)
        if i < 4 and total < size:
            continue
        px[k], py[k], idx[k], runs[k] = x, y, i, total
        k += 1
        prev_x, prev_y = x, y
    return k


def stroke_points(const double[::1] xs, const double[::1] ys, double size, double streamline, bint last):
    """See the module docstring."""
    cdef Py_ssize_t n, k, i
    cdef double* buf = _staged(xs, ys, &n)
    cdef double* work = NULL
    cdef Py_ssize_t* idx = NULL
    cdef double[:, ::1] o
    try:
        work = <double*>malloc(3 * (n + 1) * sizeof(double))
        idx = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if work == NULL or idx == NULL:
            raise MemoryError()
        k = _streamline(buf, buf + n + 1, n, size, streamline, last, work, work + n + 1, idx, work + 2 * (n + 1))
        out = np.empty((k, 2))
        o = out
        for i in range(k):
            o[i, 0] = work[i]
            o[i, 1] = work[n + 1 + i]
        return out
    finally:
        free(buf)
        free(work)
        free(idx)


cdef inline void _unit(double dx, double dy, double* ux, double* uy) noexcept nogil:
    cdef double length = pow(dx * dx + dy * dy, 0.5)
    if length == 0:
        ux[0], uy[0] = dx, dy
    else:
        ux[0], uy[0] = dx / length, dy / length


cdef Py_ssize_t _simplify(double* xs, double* ys, Py_ssize_t n, double tol) noexcept nogil:
    # freehand._simplify in place; the kept count
    cdef double tol2, ax, ay, acx, acy, l2, t, ex, ey
    cdef Py_ssize_t anchor, last, best, j, k, top, kept
    cdef bint ok
    if n <= 2 or tol <= 0:
        return n
    tol2 = tol * tol
    kept = 1
    anchor = 0
    last = n - 1
    while anchor < last:
        best = anchor + 1
        ax, ay = xs[anchor], ys[anchor]
        top = anchor + _SIMPLIFY_WINDOW
        if top > last:
            top = last
        for j in range(anchor + 2, top + 1):
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
        # kept points are written behind the anchor, never ahead of a point still read
        xs[kept] = xs[best]
        ys[kept] = ys[best]
        kept += 1
        anchor = best
    return kept


cdef void _tracks(double* sx, double* sy, double* ix, double* iy, double radius, double* runs, Py_ssize_t n,
                  double size, double smoothing, double* lx, double* ly, double* rx, double* ry,
                  Py_ssize_t* nl, Py_ssize_t* nr) noexcept nogil:
    # freehand._tracks for a constant radius: the left and right tracks (room for n * _CORNER_POINTS), simplified
    cdef Py_ssize_t i, kl = 0, kr = 0
    cdef double total = runs[n - 1]
    cdef double min_distance = (size * smoothing) * (size * smoothing)
    cdef double cx_, cy_, pvx, pvy, vx, vy, nx, ny, plx, ply, prx, pry, tlx, tly, trx, try_
    cdef double x, y, prev_dpr, next_dpr, ox, oy, cpr, ccx, ccy, dx, dy, step, t, a, s, c, lerp_x, lerp_y, tol
    cdef bint prev_sharp = False, sharp, next_sharp
    if n < 2:
        cx_, cy_ = 1.0, 1.0
    else:
        _unit(sx[0] - sx[1], sy[0] - sy[1], &cx_, &cy_)
    pvx, pvy = cx_, cy_
    plx = prx = sx[0]
    ply = pry = sy[0]
    tlx, tly, trx, try_ = plx, ply, prx, pry
    for i in range(n):
        x, y = sx[i], sy[i]
        vx, vy = cx_, cy_
        if i == n - 1:
            nx, ny = vx, vy
        else:
            _unit(x - sx[i + 1], y - sy[i + 1], &nx, &ny)
        cx_, cy_ = nx, ny
        prev_dpr = vx * pvx + vy * pvy
        next_dpr = nx * vx + ny * vy if i < n - 1 else 1.0
        sharp = prev_dpr < 0 and not prev_sharp
        next_sharp = next_dpr < 0.2
        if sharp or next_sharp:
            if next_dpr > _HARD_CORNER_DPR and total - runs[i] > radius:
                ox, oy = pvx * radius, pvy * radius
                cpr = pvx * ny - pvy * nx
                if cpr < 0:
                    tlx, tly, trx, try_ = x + ox, y + oy, x - ox, y - oy
                else:
                    tlx, tly, trx, try_ = x - ox, y - oy, x + ox, y + oy
                lx[kl], ly[kl] = tlx, tly
                kl += 1
                rx[kr], ry[kr] = trx, try_
                kr += 1
            else:
                # a hard corner: half a turn around the input point on each side
                ccx, ccy = ix[i], iy[i]
                dx, dy = -pvy * radius, pvx * radius
                step = 1.0 / _MAX_ROUNDED_CORNER_STEPS
                t = 0.0
                while t < 1:
                    a = _FIXED_PI * t
                    s, c = sin(a), cos(a)
                    tlx, tly = ccx + (dx * c - dy * s), ccy + (dx * s + dy * c)
                    lx[kl], ly[kl] = tlx, tly
                    kl += 1
                    a = _FIXED_PI + _FIXED_PI * -t
                    s, c = sin(a), cos(a)
                    trx, try_ = ccx + (dx * c - dy * s), ccy + (dx * s + dy * c)
                    rx[kr], ry[kr] = trx, try_
                    kr += 1
                    t += step
            plx, ply, prx, pry = tlx, tly, trx, try_
            if next_sharp:
                prev_sharp = True
            continue
        prev_sharp = False
        if i == 0 or i == n - 1:
            ox, oy = vy * radius, -vx * radius
            lx[kl], ly[kl] = x - ox, y - oy
            kl += 1
            rx[kr], ry[kr] = x + ox, y + oy
            kr += 1
            continue
        lerp_x = nx + (vx - nx) * next_dpr
        lerp_y = ny + (vy - ny) * next_dpr
        ox, oy = lerp_y * radius, -lerp_x * radius
        tlx, tly = x - ox, y - oy
        if i <= 1 or (plx - tlx) * (plx - tlx) + (ply - tly) * (ply - tly) > min_distance:
            lx[kl], ly[kl] = tlx, tly
            kl += 1
            plx, ply = tlx, tly
        trx, try_ = x + ox, y + oy
        if i <= 1 or (prx - trx) * (prx - trx) + (pry - try_) * (pry - try_) > min_distance:
            rx[kr], ry[kr] = trx, try_
            kr += 1
            prx, pry = trx, try_
        pvx, pvy = vx, vy
    tol = size * _TRACK_TOLERANCE_RATIO
    nl[0] = _simplify(lx, ly, kl, tol)
    nr[0] = _simplify(rx, ry, kr, tol)


cdef int _arc_steps(double radius, double sweep, double tol, int lo, int hi) noexcept nogil:
    cdef double steps
    if radius <= tol:
        return lo
    steps = ceil(sweep / (2 * acos(1 - tol / radius)))
    return lo if steps < lo else hi if steps > hi else <int>steps


cdef inline void _rot(double ax, double ay, double cx, double cy, double r, double* ox, double* oy) noexcept nogil:
    cdef double x = ax - cx, y = ay - cy
    cdef double s = sin(r), c = cos(r)
    ox[0] = cx + (x * c - y * s)
    oy[0] = cy + (x * s + y * c)


def stroke_outline(const double[::1] xs, const double[::1] ys, double size, double streamline, double smoothing,
                   bint last):
    """See the module docstring (``size`` positive and finite)."""
    cdef Py_ssize_t n, k, i, j, nl, nr, cap, total_out = 0
    cdef double* buf
    cdef double* work = NULL
    cdef Py_ssize_t* idx = NULL
    cdef double *px
    cdef double *py
    cdef double *runs
    cdef double *ix
    cdef double *iy
    cdef double *lx
    cdef double *ly
    cdef double *rx
    cdef double *ry
    cdef double *ox
    cdef double *oy
    cdef double r0, tol, fx, fy, ux, uy, stx, sty, step, t, ex, ey, vx, vy
    cdef int steps
    cdef double[:, ::1] o
    if not (0 < size < math.inf):
        raise ValueError(f"size must be positive and finite, not {size!r}")
    buf = _staged(xs, ys, &n)
    try:
        cap = (n + 1) * _CORNER_POINTS + 2
        # streamlined x, y, runs, input x, input y (n + 1 each); tracks l/r x/y (cap each); out x/y (2 cap + 64 each)
        work = <double*>malloc((5 * (n + 1) + 4 * cap + 2 * (2 * cap + 64)) * sizeof(double))
        idx = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if work == NULL or idx == NULL:
            raise MemoryError()
        px = work
        py = px + n + 1
        runs = py + n + 1
        ix = runs + n + 1
        iy = ix + n + 1
        lx = iy + n + 1
        ly = lx + cap
        rx = ly + cap
        ry = rx + cap
        ox = ry + cap
        oy = ox + 2 * cap + 64
        with nogil:
            k = _streamline(buf, buf + n + 1, n, size, streamline, last, px, py, idx, runs)
            for i in range(k):
                ix[i] = buf[idx[i]]
                iy[i] = buf[n + 1 + idx[i]]
            r0 = size * _SIN_QUARTER if runs[k - 1] < size else size / 2
            tol = size * 0.02
            if tol < 0.05:
                tol = 0.05
            fx, fy = px[0], py[0]
            if k == 1:
                _unit(-1.0, -1.0, &ux, &uy)
                stx, sty = fx - uy * r0, fy + ux * r0
                steps = _arc_steps(r0, _FIXED_PI * 2, tol, _MIN_ROUNDED_CORNER_STEPS, _MAX_ROUNDED_CORNER_STEPS)
                step = 1.0 / steps
                t = step
                while t <= 1:
                    _rot(stx, sty, fx, fy, _FIXED_PI * 2 * t, &ox[total_out], &oy[total_out])
                    total_out += 1
                    t += step
            else:
                _tracks(px, py, ix, iy, r0, runs, k, size, smoothing, lx, ly, rx, ry, &nl, &nr)
                for i in range(nl):
                    ox[total_out], oy[total_out] = lx[i], ly[i]
                    total_out += 1
                ex, ey = px[k - 1], py[k - 1]
                _unit(px[k - 2] - ex, py[k - 2] - ey, &vx, &vy)
                stx, sty = ex - vy * r0, ey + vx * r0
                steps = _arc_steps(r0, _FIXED_PI * 3, tol, _MIN_CAP_STEPS, _MAX_CAP_STEPS)
                step = 1.0 / steps
                t = step
                while t < 1:
                    _rot(stx, sty, ex, ey, _FIXED_PI * 3 * t, &ox[total_out], &oy[total_out])
                    total_out += 1
                    t += step
                for j in range(nr - 1, -1, -1):
                    ox[total_out], oy[total_out] = rx[j], ry[j]
                    total_out += 1
                steps = _arc_steps(r0, _FIXED_PI, tol, 4, 8)
                step = 1.0 / steps
                t = step
                while t <= 1:
                    _rot(rx[0], ry[0], fx, fy, _FIXED_PI * t, &ox[total_out], &oy[total_out])
                    total_out += 1
                    t += step
        out = np.empty((total_out, 2))
        o = out
        for i in range(total_out):
            o[i, 0] = ox[i]
            o[i, 1] = oy[i]
        return out
    finally:
        free(buf)
        free(work)
        free(idx)
