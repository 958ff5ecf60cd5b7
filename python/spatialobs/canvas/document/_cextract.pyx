# cython: language_level=3
"""Node records -> input columns, compiled (the pass over every node of a first derivation).

``node_columns(nodes)`` returns the ids, parent ids, types and fractional
indices of the nodes as lists and their numbers (x, y, w, h, rotation,
opacity, hidden, locked) as an ``(n, 8)`` float64 array, or None when a number
is not a plain float, int or bool (the caller's pure-Python pass then reads
them as numpy does). The pure-Python twin is
``spatialobs.canvas.document.derive._node_columns_py``; tests compare the two.
"""

import numpy as np


cdef inline bint _put(double* out, object v):
    # float(v) into out for a plain float, int or bool; False for anything else
    if type(v) is float:
        out[0] = <double>v
    elif type(v) is bool:
        out[0] = 1.0 if v is True else 0.0
    elif type(v) is int:
        try:
            out[0] = <double>v
        except OverflowError:
            return False
    else:
        return False
    return True


def node_columns(list nodes):
    """``(ids, parents, types, index, num)`` of ``nodes``, or None (see the module docstring)."""
    cdef Py_ssize_t n = len(nodes), i
    cdef list ids = [None] * n
    cdef list parents = [None] * n
    cdef list types = [None] * n
    cdef list index = [None] * n
    num = np.empty((n, 8), dtype=np.float64)
    cdef double[:, ::1] out = num
    cdef object nd
    for i in range(n):
        nd = nodes[i]
        ids[i] = nd.id
        parents[i] = nd.parent
        types[i] = nd.type
        index[i] = nd.index
        if not (_put(&out[i, 0], nd.x) and _put(&out[i, 1], nd.y) and _put(&out[i, 2], nd.w)
                and _put(&out[i, 3], nd.h) and _put(&out[i, 4], nd.rotation) and _put(&out[i, 5], nd.opacity)
                and _put(&out[i, 6], nd.hidden) and _put(&out[i, 7], nd.locked)):
            return None
    return ids, parents, types, index, num
