# cython: language_level=3
"""Element bounds -> checked floats, compiled (run for every element of every screen a driver builds).

``plain_bounds(b)`` is the common case of :class:`spatialobs.screen.Element`'s
check: a tuple or list of four floats or ints (not bools), finite and ordered,
comes back as a tuple of floats; anything else gives None and the full check
(with its errors) decides. The pure-Python twin is
``spatialobs.screen.model._plain_bounds_py``; tests compare the two.
"""

from libc.math cimport isfinite


def plain_bounds(b):
    """``(x0, y0, x1, y1)`` as floats, or None when ``b`` is not the plain case (see the module docstring)."""
    cdef double x[4]
    cdef Py_ssize_t i
    cdef object v
    if type(b) is not tuple and type(b) is not list:
        return None
    if len(b) != 4:
        return None
    for i in range(4):
        v = b[i]
        if type(v) is float:
            x[i] = <double>v
        elif type(v) is int:
            try:
                x[i] = <double>v  # PyLong_AsDouble, as float(v): correctly rounded
            except OverflowError:
                return None
        else:
            return None
        if not isfinite(x[i]):
            return None
    if x[2] < x[0] or x[3] < x[1]:
        return None
    return (x[0], x[1], x[2], x[3])
