# cython: language_level=3
"""Observe's loops over records, compiled: connector records -> columns, columns -> records.

``local_ends`` reads the local start/end points of arrow records and keeps the
terminals without a binding; ``binding_rows`` turns binding records into row
columns (both run once per page version). ``object_records`` and
``relation_records`` turn the kept rows and chosen relations of every
observation into its records. The pure-Python twins are
``spatialobs.canvas.observe._local_ends_py``, ``_binding_rows_py``,
``_object_records_py`` and ``_relation_records_py``; tests compare each pair.
"""

from collections.abc import Mapping

from cpython.long cimport PyLong_FromDouble
from cpython.number cimport PyNumber_Float
from cpython.weakref cimport PyWeakref_NewRef
from libc.math cimport floor, isfinite
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


# -- records of the kept objects and the chosen relations (observe's last stage)

cdef object _abbrev(object text, Py_ssize_t text_max):
    # as observe._abbrev: whitespace runs collapsed, at most text_max characters with "…"
    if not text:
        return None
    t = " ".join((text if type(text) is str else str(text)).split())
    if not t:
        return None
    return t if len(<str>t) <= text_max else (<str>t)[:text_max - 1] + "…"


cdef inline bint _plain(object v):
    # as observe._plain: a string or a finite number, not a bool
    if type(v) is str or type(v) is int:
        return True
    if type(v) is float:
        return isfinite(<double>v)
    return (isinstance(v, (str, int, float)) and not isinstance(v, bool)
            and (not isinstance(v, float) or isfinite(<double>v)))


def object_records(dict nodes, list names, const int64_t[::1] crow, const int64_t[:, ::1] ints,
                   const uint8_t[::1] flags, const int64_t[:, ::1] ab, const double[::1] opac,
                   const double[::1] deg, const double[:, ::1] bnds, tuple label_names, tuple flag_names,
                   Py_ssize_t text_max):
    """Object records of the kept rows and their exact page bounds by id.

    Row ``j`` is the object ``names[crow[j]]``; ``ints[j]`` holds its layer, label
    code and the ``names`` index of its parent, group, frame and occluder (-1 for
    none) and its reading order (-1 for none); bit ``b`` of ``flags[j]`` is
    ``flag_names[b]``, the next bit says it carries ``actionBounds`` (``ab[j]``,
    x, y, w, h); ``opac``, ``deg`` (rounded) and ``bnds`` (page bounds) complete it.
    Texts and names are abbreviated to ``text_max`` characters.
    """
    cdef Py_ssize_t k = crow.shape[0], j, bit, nflags = len(flag_names)
    if (ints.shape[0] != k or ints.shape[1] != 7 or flags.shape[0] != k or ab.shape[0] != k or ab.shape[1] != 4
            or opac.shape[0] != k or deg.shape[0] != k or bnds.shape[0] != k or bnds.shape[1] != 4):
        raise ValueError(f"record columns must have one row per object ({k}): ints 7 columns, ab and bnds 4")
    cdef list objects = []
    cdef dict exact = {}
    cdef dict rec, st, style
    cdef list on
    cdef object nid, nd, v, txt
    cdef int64_t r
    cdef uint8_t fl
    cdef double op, dg
    for j in range(k):
        nid = names[crow[j]]
        nd = nodes[nid]
        rec = {"id": nid, "type": nd.type}
        txt = _abbrev(nd.text, text_max)
        if txt is not None:
            rec["text"] = txt
        txt = _abbrev(nd.name, text_max)
        if txt is not None:
            rec["name"] = txt
        st = {}
        style = nd.style
        v = style.get("color")
        if _plain(v):
            st["color"] = v
        v = style.get("fill")
        if _plain(v):
            st["fill"] = v
        op = opac[j]
        if op < 1.0:
            st["opacity"] = round(<object>op, 2)
        if st:
            rec["style"] = st
        dg = deg[j]
        if dg != 0.0:
            rec["rotation"] = dg
        rec["layer"] = ints[j, 0]
        fl = flags[j]
        if fl & ((1 << nflags) - 1):
            on = []
            for bit in range(nflags):
                if fl >> bit & 1:
                    on.append(flag_names[bit])
            rec["flags"] = on
        rec["visibility"] = label_names[ints[j, 1]]
        r = ints[j, 2]
        if r >= 0:
            rec["parent"] = names[r]
        r = ints[j, 3]
        if r >= 0:
            rec["group"] = names[r]
        r = ints[j, 4]
        if r >= 0:
            rec["frame"] = names[r]
        r = ints[j, 5]
        if r >= 0:
            rec["occludedBy"] = names[r]
        r = ints[j, 6]
        if r >= 0:
            rec["readingOrder"] = r
        if fl >> nflags & 1:
            rec["actionBounds"] = {"x": ab[j, 0], "y": ab[j, 1], "w": ab[j, 2], "h": ab[j, 3]}
        objects.append(rec)
        exact[nid] = (bnds[j, 0], bnds[j, 1], bnds[j, 2], bnds[j, 3])
    return objects, exact


def relation_records(list names, const int64_t[::1] ca, const int64_t[::1] cb, const int64_t[::1] rt,
                     const double[::1] rx, tuple type_names, dict kind_names):
    """Relation records: type ``type_names[rt[i]]`` from ``names[ca[i]]`` to ``names[cb[i]]``, extra ``rx[i]``.

    The extra is the terminal code of ``bound`` and ``touches``, the gap of
    ``near`` (rounded half up) and the kind mask of ``aligned`` (named by ``kind_names``).
    """
    cdef Py_ssize_t k = rt.shape[0], i, t
    if ca.shape[0] != k or cb.shape[0] != k or rx.shape[0] != k:
        raise ValueError(f"relation columns must have one row per relation ({k})")
    # per type: its name, native flag and which extra it carries (0 none, 1 terminal, 2 gap, 3 kind)
    cdef list native = [name in ("parent", "bound") for name in type_names]
    cdef list extra = [1 if name in ("bound", "touches") else 2 if name == "near" else 3 if name == "aligned" else 0
                       for name in type_names]
    cdef list relations = []
    cdef dict rel
    cdef object x
    cdef long e
    for i in range(k):
        t = rt[i]
        rel = {"type": type_names[t], "from": names[ca[i]], "to": names[cb[i]], "native": native[t]}
        e = extra[t]
        if e == 1:
            rel["terminal"] = ("start", "end")[<long>rx[i]]
        elif e == 2:
            rel["gap"] = PyLong_FromDouble(floor(rx[i] + 0.5))
        elif e == 3:
            rel["kind"] = kind_names[<long>rx[i]]
        relations.append(rel)
    return relations
