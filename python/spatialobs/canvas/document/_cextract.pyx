# cython: language_level=3
"""Node records -> input columns, compiled (the pass over every node of a first derivation).

``node_columns(nodes)`` returns the ids, parent ids, types and fractional
indices of the nodes as lists and their numbers (x, y, w, h, rotation,
opacity, hidden, locked) as an ``(n, 8)`` float64 array, or None when a number
is not a plain float, int or bool (the caller's pure-Python pass then reads
them as numpy does). The pure-Python twin is
``spatialobs.canvas.document.derive._node_columns_py``; tests compare the two.

``resolve_all(...)`` is the arrow pass's loop over the arrows of a full derivation
(``spatialobs.canvas.document.arrows._resolve_all``, its pure-Python twin): it gathers
the straight arrows without a label that no cache entry holds into the batch itself and
hands every other arrow to ``_resolve_one``, in the same order, with the same values.

``terminals_by_arrow(...)`` sorts the bindings into arrows and ``unbound_to_resolve(...)`` adds the
unbound arrows that need resolving (an arc or a label), the full pass's scans before ``resolve_all``
(``spatialobs.canvas.document.arrows._terminals_by_arrow`` and ``_unbound_to_resolve``, their
pure-Python twins).

These loops and ``resolve_all`` read an arrow's props with compiled copies of
``arrows._keeps_points``, ``arrows._needs_resolving`` and ``arrowparts._point`` (with
``arrowparts._num``) where the props are a dict (not a subclass), the label None or a str and
the numbers None, bools, floats, numpy float64s or ints that a double holds exactly; any other
record is handed to the Python function itself (passed in), which stays the reference.

``point_boxes(...)`` is the first derivation's pass over the rows of point-based shapes
(``spatialobs.canvas.document.derive._point_boxes``, its pure-Python twin): the local box of
a straight tldraw arrow is its stored points' box, read here; every other row's comes from
``local_box``.
"""

import numpy as np

from libc.math cimport fabs, isfinite


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


cdef object _float64 = np.float64


cdef bint _as_double(object v, double* out):
    # float(v) into out for a float, a numpy float64 (a float underneath) or an int that a double
    # holds exactly; False for anything else (the Python twin reads it)
    if type(v) is float or type(v) is _float64:
        out[0] = <double>v
    elif type(v) is int and -(2 ** 53) <= v <= 2 ** 53:
        out[0] = <double>v
    else:
        return False
    return True


cdef inline bint _num(object v, double default, double* out):
    # arrowparts._num(v, default) into out for None (float(None) raises: the default), a bool or
    # what _as_double reads; False for anything else (the twin reads it)
    if v is None:
        out[0] = default
        return True
    if type(v) is bool:
        out[0] = 1.0 if v is True else 0.0
        return True
    if not _as_double(v, out):
        return False
    if not isfinite(out[0]):
        out[0] = default
    return True


cdef inline object _point(object p, object point):
    # arrowparts._point(p) (``point``) for None or a dict of what _num reads; the twin for anything else
    # (another mapping, a dict subclass whose get may differ)
    cdef double x, y
    if p is None:
        return (0.0, 0.0)
    if type(p) is dict and _num((<dict>p).get("x"), 0.0, &x) and _num((<dict>p).get("y"), 0.0, &y):
        return (x, y)
    return point(p)


cdef inline int _keeps_points_c(object nd) except -2:
    # arrows._keeps_points(nd), 1 or 0, when its props are a dict, "points" None or a list and, with
    # a list, "start" None or a dict; -1 for anything else: the twin's isinstance of a list subclass
    # or another type, or of the Mapping ABC (which types may join), is left to the twin
    cdef object props = nd.props, start
    if type(props) is not dict:
        return -1
    pts = (<dict>props).get("points")
    if pts is None:
        return 0
    if type(pts) is not list:
        return -1
    start = (<dict>props).get("start")
    if start is None:
        return 1
    return 0 if type(start) is dict else -1


cdef inline bint _keeps_points(object nd, object keeps_points) except -1:
    # arrows._keeps_points(nd), the twin ``keeps_points`` where the compiled read cannot decide
    cdef int k = _keeps_points_c(nd)
    return keeps_points(nd) if k < 0 else k


cdef inline bint _needs_resolving(object nd, object needs_resolving, double min_bend) except -1:
    # arrows._needs_resolving(nd) (``min_bend`` its _MIN_ARROW_BEND), the twin ``needs_resolving``
    # where the compiled reads cannot decide
    cdef double bend, scale
    cdef int k = _keeps_points_c(nd)
    if k > 0:
        return False
    if k < 0:
        return needs_resolving(nd)
    text = nd.text
    if text is not None:
        if type(text) is not str:
            return needs_resolving(nd)
        if text and (<str>text).strip():
            return True
    props = nd.props
    if not (_num((<dict>props).get("bend"), 0.0, &bend) and _num((<dict>props).get("scale"), 1.0, &scale)):
        return needs_resolving(nd)
    # the twin's ``or 1.0``: a zero scale counts as 1
    return fabs(bend) >= min_bend * (scale if scale != 0.0 else 1.0)


cdef object _new_slot(batch, object r, object node, object arrowhead, dict slots, dict stroke_sizes,
                      frozenset own_outline, dict geo_kinds, frozenset geo_curved):
    # _StraightBatch._slot for a target not seen yet whose outline _core.target_outlines builds
    # (a box, or a geo kind drawn with lines); the method itself for any other
    cdef object kinds = batch.kinds
    cdef object typ = node.type
    cdef object props, w, h, geo, code, k
    if kinds is None or not (arrowhead or typ != "text") or type(node.props) is not dict:
        return batch._slot(r, node, arrowhead)
    props = node.props
    if typ not in own_outline:
        code = 0
    elif typ != "geo":
        return batch._slot(r, node, arrowhead)
    else:
        w = node.w
        h = node.h
        if type(w) is not float or type(h) is not float or not (isfinite(<double>w) and isfinite(<double>h)):
            return batch._slot(r, node, arrowhead)
        geo = str(props.get("geo", "rectangle"))
        code = geo_kinds.get(geo, None if geo in geo_curved else 1)
        if code is None:
            return batch._slot(r, node, arrowhead)
    cdef list closed = batch.closed
    k = slots[r] = len(closed)
    kinds.append(code)
    cdef list sizes = batch.sizes, flips = batch.flips
    sizes.append(float(node.w))
    sizes.append(float(node.h))
    if code:
        flips.append(bool(props.get("flipX")))
        flips.append(bool(props.get("flipY")))
    else:
        flips.append(False)
        flips.append(False)
    closed.append(True)
    batch.half.append((stroke_sizes.get(str(props.get("size")), 0.0) / 2) if "size" in props else 0.0)
    return k


cdef object _terminal_columns(object batch, object props, str name, object nd, object b, object t, object head,
                              dict slots, dict bare, object point, list points, list anchor_l, list precise,
                              list exact, dict stroke_sizes, frozenset own_outline, dict geo_kinds,
                              frozenset geo_curved):
    """One terminal of a plain arrow into the batch's columns (``_StraightBatch.add``): its stored
    point when unbound (``nd`` None), else its target's outline slot, anchor and flags; the slot
    (0 when unbound)."""
    cdef object a, k
    if nd is None:
        a = _point(props.get(name), point)
        points.append(a[0])
        points.append(a[1])
        anchor_l.append(0.0)
        anchor_l.append(0.0)
        precise.append(False)
        exact.append(False)
        return 0
    k = slots.get(t) if (head or nd.type != "text") else bare.get(t)
    if k is None:
        k = _new_slot(batch, t, nd, head, slots, stroke_sizes, own_outline, geo_kinds, geo_curved)
    points.append(0.0)
    points.append(0.0)
    a = b.anchor
    anchor_l.append(float(a[0]))
    anchor_l.append(float(a[1]))
    precise.append(bool(b.precise))
    exact.append(bool(b.props.get("isExact", False)) if b.props else False)
    return k


def resolve_all(d, list nodes, dict by_arrow, previous, dict kept, twins, batch, frames, shared,
                resolve_one, point, dict stroke_sizes, frozenset own_outline, dict geo_kinds, frozenset geo_curved):
    """The rows of ``by_arrow`` (all of them, in order) after resolving or gathering each arrow as
    ``spatialobs.canvas.document.arrows._resolve_all`` does (``resolve_one`` its ``_resolve_one``,
    ``point`` its ``_point``, ``stroke_sizes`` ``STROKE_SIZES``, then ``_OWN_OUTLINE``,
    ``_GEO_KINDS`` and ``_GEO_CURVED``); ``batch`` and ``frames`` not None."""
    cdef list changed = []
    cdef dict row = d.row
    cdef list px = frames.px, py = frames.py, rot = frames.rot
    xf_of = frames.xf
    cdef list rows = batch.rows, keys = batch.keys, points = batch.points, scale = batch.scale
    cdef list stroke = batch.stroke, heads_l = batch.heads, target = batch.target, outline = batch.outline
    cdef list box_outline = batch.box_outline, anchor_l = batch.anchor, precise = batch.precise, exact = batch.exact
    cdef dict slots = batch.slots, bare = batch.bare
    slot_of = batch._slot
    cdef object r, terms, nd, props, text, bend, key, axf, bs, be, s, e, h0, h1
    cdef object ts, te, ks, ke
    cdef Py_ssize_t t
    for r, terms in by_arrow.items():
        changed.append(r)
        nd = nodes[r]
        props = nd.props
        text = nd.text
        # the plain kind of _batch_kind (no label, no elbow, no bend, no scale), no cache entry
        if type(props) is not dict or (text and text.strip()) or "scale" in props:
            resolve_one(d, nodes, r, terms, previous, kept, twins, batch, frames, shared)
            continue
        bend = props.get("bend")
        if not (bend is None or ((type(bend) is int or type(bend) is float) and not bend)) \
                or props.get("kind") == "elbow" or previous.get(nd.id) is not None:
            resolve_one(d, nodes, r, terms, previous, kept, twins, batch, frames, shared)
            continue
        t = r
        axf = (px[t], py[t], 1.0, 0.0) if rot[t] == 0.0 else xf_of(r)
        key = [nd, axf]
        bs = terms.get("start")
        be = terms.get("end")
        if bs is not None:
            ts = row[bs.to_id]
            s = nodes[ts]
            t = ts
            key += (bs, s, (px[t], py[t], 1.0, 0.0) if rot[t] == 0.0 else xf_of(ts))
        else:
            ts = -1
            s = None
        if be is not None:
            te = row[be.to_id]
            e = nodes[te]
            t = te
            key += (be, e, (px[t], py[t], 1.0, 0.0) if rot[t] == 0.0 else xf_of(te))
        else:
            te = -1
            e = None
        # _StraightBatch.add of a plain arrow
        h0 = props.get("arrowheadStart", "none") != "none"
        h1 = props.get("arrowheadEnd", "arrow") != "none"
        rows.append(r)
        keys.append(key)
        scale.append(1.0)
        stroke.append(stroke_sizes.get(str(props.get("size", "m")), 3.5))
        heads_l.append(h0)
        heads_l.append(h1)
        ks = _terminal_columns(batch, props, "start", s, bs, ts, h0, slots, bare, point, points, anchor_l, precise,
                               exact, stroke_sizes, own_outline, geo_kinds, geo_curved)
        ke = _terminal_columns(batch, props, "end", e, be, te, h1, slots, bare, point, points, anchor_l, precise,
                               exact, stroke_sizes, own_outline, geo_kinds, geo_curved)
        target.append(ts)
        target.append(te)
        outline.append(ks)
        outline.append(ke)
        if s is not None and e is not None and s is not e:
            if s.type == "text" and not h0:
                ks = slot_of(ts, s, True)
            if e.type == "text" and not h1:
                ke = slot_of(te, e, True)
        box_outline.append(ks)
        box_outline.append(ke)
    return changed


def terminals_by_arrow(list bindings, dict row, list nodes, keeps_points):
    """``spatialobs.canvas.document.arrows._terminals_by_arrow`` (its pure-Python twin), with
    ``keeps_points`` its ``_keeps_points``."""
    cdef dict bound_terms = {}
    cdef dict by_arrow = {}
    cdef object b, r, terms, nd
    for b in bindings:
        r = row.get(b.from_id)
        if r is None or b.to_id not in row:
            continue
        terms = bound_terms.get(r)
        if terms is None:
            nd = nodes[r]
            if nd.type != "arrow":
                continue
            terms = bound_terms[r] = {}
            if not _keeps_points(nd, keeps_points):
                by_arrow[r] = terms
        terms[b.terminal] = b
    for r in by_arrow:
        by_arrow[r] = dict(by_arrow[r])
    return bound_terms, by_arrow


def unbound_to_resolve(list rows, dict by_arrow, list nodes, needs_resolving, double min_bend):
    """Add ``{}`` to ``by_arrow`` for each of the arrow ``rows`` (in order) not in it whose arrow
    needs resolving, as ``spatialobs.canvas.document.arrows._unbound_to_resolve`` does (its
    pure-Python twin; ``needs_resolving`` its ``_needs_resolving``, ``min_bend`` ``_MIN_ARROW_BEND``)."""
    cdef object r
    for r in rows:
        if r not in by_arrow and _needs_resolving(nodes[r], needs_resolving, min_bend):
            by_arrow[r] = {}


def plan_dependencies(dict by_arrow, dict row):
    """The (target row, arrow row) lists of every binding of ``by_arrow``, as
    ``spatialobs.canvas.document.arrows._ArrowPlan.build`` gathers them (its pure-Python twin)."""
    cdef list dt = [], da = []
    cdef object r, terms, b
    for r, terms in by_arrow.items():
        for b in (<dict?>terms).values():
            dt.append(row[b.to_id])
            da.append(r)
    return dt, da


def shared_targets(all_terms):
    """``spatialobs.canvas.document.arrows._shared_targets(all_terms)`` (its pure-Python twin):
    the (start, end) target ids that more than one of ``all_terms`` (bindings by terminal) have."""
    cdef set seen = set(), shared = set()
    cdef object terms, bs, be, t
    for terms in all_terms:
        bs = terms.get("start")
        be = terms.get("end")
        t = (None if bs is None else bs.to_id, None if be is None else be.to_id)
        if t in seen:
            shared.add(t)
        else:
            seen.add(t)
    return shared


cdef int _end_xy(object p, double* out) except -1:
    # shapes.arrow_terminals' reading of one terminal: 1 a finite point, 0 none, -1 with an
    # exception set for anything the Python twin must read (a mapping that is not a dict, odd values)
    cdef object x, y
    if p is None:
        return 0
    if type(p) is not dict:
        raise LookupError
    if not ((<dict>p).get("type", "point") == "point"):
        return 0
    if not (_as_double((<dict>p).get("x"), &out[0]) and _as_double((<dict>p).get("y"), &out[1])):
        raise LookupError
    return 1 if isfinite(out[0]) and isfinite(out[1]) else 0


cdef object _straight_arrow_box(object props, double straight_bend):
    # shapes.local_box of a tldraw arrow drawn straight (None: the twin reads it)
    cdef double s[2]
    cdef double e[2]
    cdef double bend, ax, ay, bx, by
    cdef int hs, he
    cdef object b
    if type(props) is not dict or (<dict>props).get("points") is not None:
        return None
    if "start" not in props and "end" not in props:
        return None
    try:
        hs = _end_xy((<dict>props).get("start"), s)
        he = _end_xy((<dict>props).get("end"), e)
    except LookupError:
        return None
    b = (<dict>props).get("bend", 0) or 0
    if not _as_double(b, &bend):
        return None
    if not isfinite(bend):
        bend = 0.0
    if not hs and not he:
        return (0.0, 0.0, 0.0, 0.0)
    if not fabs(bend) < straight_bend:
        return None
    if not hs:
        s[0] = e[0]
        s[1] = e[1]
    if not he:
        e[0] = s[0]
        e[1] = s[1]
    ax, ay, bx, by = s[0], s[1], e[0], e[1]
    # Python's min and max: the first argument unless the second is strictly beyond it
    return (bx if bx < ax else ax, by if by < ay else ay, bx if bx > ax else ax, by if by > ay else ay)


def point_boxes(list nodes, list rows, dict local_cache, local_box, double straight_bend):
    """The local boxes of ``rows``' nodes (a list, in order), each kept in ``local_cache``
    (id -> (node, box)) as ``spatialobs.canvas.document.derive._point_boxes`` does (its
    pure-Python twin; ``local_box`` is ``shapes.local_box``, ``straight_bend`` ``STRAIGHT_BEND``)."""
    cdef list out = []
    cdef object r, nd, hit, box
    for r in rows:
        nd = nodes[r]
        hit = local_cache.get(nd.id)
        if hit is None or (<tuple?>hit)[0] is not nd:
            box = _straight_arrow_box(nd.props, straight_bend) if nd.type == "arrow" else None
            if box is None:
                box = local_box(nd.type, nd.props, nd.w, nd.h)
            hit = (nd, box)
            local_cache[nd.id] = hit
        out.append((<tuple>hit)[1])
    return out
