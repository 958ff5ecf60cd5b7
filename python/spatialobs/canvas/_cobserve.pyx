# cython: language_level=3
"""Connector records -> observation columns, compiled (the loops a fresh page version runs).

``local_ends`` reads the local start/end points of arrow records and keeps the
terminals without a binding; ``binding_rows`` turns binding records into row
columns. The pure-Python twins are ``spatialobs.canvas.observe._local_ends_py``
and ``_binding_rows_py``; tests compare the two.
"""

from collections.abc import Mapping

from cpython.number cimport PyNumber_Float
from cpython.weakref cimport PyWeakref_NewRef
from libc.math cimport isfinite
from libc.stdint cimport int64_t, uint8_t

import numpy as np


cdef object _xy(object p):
    # float() on whatever the record holds, as the twin does: strings parse, NaN/inf,
    # wrong types and missing keys read as no point
    cdef double x, y
    try:
        if type(p) is dict or isinstance(p, Mapping):
            if p.get("type", "point") != "point":
                return None
            fx = PyNumber_Float(p["x"])
            fy = PyNumber_Float(p["y"])
        else:
            fx = PyNumber_Float(p[0])
            fy = PyNumber_Float(p[1])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    x = fx
    y = fy
    return (fx, fy) if isfinite(x) and isfinite(y) else None


def xy(p):
    """Local point ``(x, y)`` of one terminal value, None when malformed or not finite."""
    return _xy(p)


cdef tuple _terminal_points(object node):
    props = node.props
    pts = props.get("points")
    if type(pts) is list and len(<list>pts) >= 2:
        return _xy((<list>pts)[0]), _xy((<list>pts)[-1])
    return _xy(props.get("start")), _xy(props.get("end"))


def terminal_points(node):
    """Local start and end points of a connector record (None where it holds none)."""
    return _terminal_points(node)


def local_ends(dict nodes, list names, const int64_t[::1] rows, const int64_t[::1] conn,
               const uint8_t[:, ::1] bound, dict memo):
    """Rows, terminal codes (0 start, 1 end) and local x, y of the terminals without a binding.

    ``rows[i]`` is the derivation row of page row ``conn[i]`` (its id is
    ``names[rows[i]]``); ``bound[i]`` says whether its start and end are bound.
    ``memo`` maps ``id(node)`` to ``(weakref, start, end)`` and is filled here.
    """
    cdef Py_ssize_t k = conn.shape[0], i, m = 0
    if rows.shape[0] != k or bound.shape[0] != k or bound.shape[1] != 2:
        raise ValueError(f"rows ({rows.shape[0]}) and bound ({bound.shape[0]}, {bound.shape[1]}) "
                         f"must have one row per connector ({k}), bound two columns")
    er = np.empty(2 * k, dtype=np.int64)
    et = np.empty(2 * k, dtype=np.int64)
    lxy = np.empty((2 * k, 2), dtype=np.float64)
    cdef int64_t[::1] r_out = er
    cdef int64_t[::1] t_out = et
    cdef double[:, ::1] xy_out = lxy
    cdef object node, key, hit, s, e
    cdef tuple pair
    for i in range(k):
        node = nodes[names[rows[i]]]
        key = id(node)
        hit = memo.get(key)
        if hit is not None and (<tuple>hit)[0]() is node:
            s = (<tuple>hit)[1]
            e = (<tuple>hit)[2]
        else:
            pair = _terminal_points(node)
            s = pair[0]
            e = pair[1]
            memo[key] = (PyWeakref_NewRef(node, None), s, e)
        if s is not None and not bound[i, 0]:
            r_out[m] = conn[i]
            t_out[m] = 0
            xy_out[m, 0] = (<tuple>s)[0]
            xy_out[m, 1] = (<tuple>s)[1]
            m += 1
        if e is not None and not bound[i, 1]:
            r_out[m] = conn[i]
            t_out[m] = 1
            xy_out[m, 0] = (<tuple>e)[0]
            xy_out[m, 1] = (<tuple>e)[1]
            m += 1
    return er[:m].copy(), et[:m].copy(), lxy[:m].copy()


def binding_rows(list blist, dict row_of):
    """Derivation rows of each binding's connector and target (-1 when unknown) and its terminal code."""
    cdef Py_ssize_t n = len(blist), i
    bf = np.empty(n, dtype=np.int64)
    bt = np.empty(n, dtype=np.int64)
    bterm = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] f_out = bf
    cdef int64_t[::1] t_out = bt
    cdef int64_t[::1] e_out = bterm
    cdef object b, r
    for i in range(n):
        b = blist[i]
        r = row_of.get(b.from_id)
        f_out[i] = -1 if r is None else <int64_t>r
        r = row_of.get(b.to_id)
        t_out[i] = -1 if r is None else <int64_t>r
        e_out[i] = 1 if b.terminal == "end" else 0
    return bf, bt, bterm
