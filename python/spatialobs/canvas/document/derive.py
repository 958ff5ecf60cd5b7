"""Derived page geometry of a whole canvas, computed in bulk with numpy.

Everything here runs once per write generation of a :class:`Canvas` and is cached
until the next write. The tree is processed level by level (all nodes of one depth
at a time), so the Python-level loop runs over the tree depth, not the node count.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import operator
from itertools import chain, compress, repeat
from dataclasses import dataclass, field
from operator import attrgetter
from typing import (AbstractSet, Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence,
                    Set, Tuple)

import numpy as np

from spatialobs._arrays import unique
from spatialobs._errors import SpatialObsError
from spatialobs.canvas.document.arrows import _target_outline, resolve_bound
from spatialobs.canvas.document.records import Binding, Node, Page
from spatialobs.canvas.document.shapes import POINT_TYPES, STRAIGHT_BEND, local_box
from spatialobs.canvas.document.shapes import rotated_points_box

__all__ = ["Derived", "Raw", "derive", "extract", "patch", "splice"]

_MAX_KEY_DEPTH = 64
_SERIALS = itertools.count()

_get_num = attrgetter("x", "y", "w", "h", "rotation", "opacity", "hidden", "locked")


@dataclass
class Derived:
    """Columnar page geometry of every node (row ``i`` is ``ids[i]``, canvas dict order)."""

    ids: List[str]
    row: Dict[str, int]
    types: np.ndarray        # (n,) str
    parent: np.ndarray       # (n,) int64 row of the parent node, -1 under a page
    page: np.ndarray         # (n,) int64 position in page_ids
    page_ids: List[str]
    depth: np.ndarray        # (n,) int64
    local: np.ndarray        # (n, 4) local box
    px: np.ndarray           # page position of the local origin
    py: np.ndarray
    rotation: np.ndarray     # page rotation (radians)
    bounds: np.ndarray       # (n, 4) page bounds
    visible: np.ndarray      # (n, 4) bounds clipped by ancestor frames; NaN rows when clipped away
    frame: np.ndarray        # (n,) row of the nearest frame ancestor or -1
    group: np.ndarray        # (n,) row of the nearest group ancestor or -1
    opacity: np.ndarray      # effective opacity (product over ancestors)
    hidden: np.ndarray       # hidden or an ancestor hidden
    locked: np.ndarray       # locked or an ancestor locked
    order: np.ndarray        # (n,) global paint rank
    paint: np.ndarray        # rows in global paint order (pages in page order)
    page_start: np.ndarray   # paint[page_start[k]:page_start[k+1]] are page k's rows
    levels: List[np.ndarray] = field(default_factory=list)  # rows per depth (set by derive)
    arrow_plan: Any = None   # which arrows were resolved, for the next derivation of the same rows
    serial: int = -1         # names this derivation (set by derive)
    base: int = -1           # serial of the derivation this one reused (same rows, same tree), else -1
    record_rows: Any = None  # (k,) int64 rows whose record was replaced since ``base``
    clip: Any = None         # (n, 4) the intersection of every ancestor frame's bounds (infinite: none)
    group_need: Any = None   # (n,) bool groups bounded by their members' page bounds (_group_page_bounds)
    n_bad: int = 0           # rows bounded by their origin (broken geometry)
    size: Any = None         # (n,) int64 subtree sizes (rows paint[order[r]:order[r] + size[r]]), on first use
    reached: Any = None      # rows whose derived values may differ from ``base``'s (None: any row)
    #: (serial, new row of each of its rows, -1 where removed) of the derivation this one was
    #: derived from when rows were appended or whole subtrees removed (``base`` is -1 then)
    renumbered: Any = None
    #: (serial, row map, record rows, rebound connector ids): how this derivation follows from
    #: the last one observed, through unobserved ones (set by the canvas; None: not known)
    since: Any = None
    #: the canvas's count of binding writes when it derived this version (-1: not set); a later
    #: version with the same count has the same binding records in the same order
    binding_writes: int = -1
    #: the columns (of :data:`_OWNABLE`) no other derivation shares: the next derivation may write
    #: them in place when this one is used up (see :func:`derive`'s ``in_place``). Handing the
    #: derivation out (``Canvas.geometry``) clears it. :data:`_PLAN` among them: the arrow plan's
    #: binding list and terminal maps, which the next derivation may then write in place.
    owned: FrozenSet[str] = frozenset()
    #: the compiled arrow batches this derivation ran: per batch the rows it resolved, their drawn
    #: ends (arrow-local ``x0, y0, x1, y1``) and validity (see
    #: :func:`~spatialobs.canvas.document.arrows.resolved_ends`)
    straight: Any = None
    #: per row, the batch and position among :attr:`straight` that resolved it last (made on first use)
    straight_at: Any = None


_HALF_PI = math.pi / 2

#: The columns a derivation of the rows an edit reaches writes (in place when they are its own).
_OWNABLE = ("px", "py", "rotation", "opacity", "hidden", "locked", "frame", "group", "local", "bounds", "visible", "clip")
#: The name in :attr:`Derived.owned` of the arrow plan's binding list and terminal maps (plans of
#: successive derivations share them while they are the same; no other derivation holds them then).
_PLAN = "plan"


#: Largest magnitude of a derived page bound (*ours*): nested coordinates of at most
#: CanvasLimits.max_coordinate each stay far below it; anything beyond is broken geometry.
MAX_DERIVED = float(2**60)


#: Most types (*ours*) :func:`_point_types` tests one by one against a set; more go to ``np.isin``.
_SET_TEST_MAX = 32


def _point_types(types: np.ndarray) -> np.ndarray:
    """Whether each of ``types`` (a column of type names) is a point-based type (:data:`POINT_TYPES`):
    a set lookup per name for a few rows of a column of strings (``np.isin`` costs ~10 µs even for
    one), ``np.isin`` for more or for a column of other values."""
    if len(types) <= _SET_TEST_MAX and types.dtype.kind == "U":
        return np.fromiter((t in POINT_TYPES for t in types.tolist()), bool, len(types))
    return np.isin(types, list(POINT_TYPES))


def _pieces(a: np.ndarray, cuts: np.ndarray) -> Iterator[np.ndarray]:
    """``np.split(a, cuts)`` as slices (``np.split`` costs ~10 µs per call; the reached rows of an
    edit lie on a few levels)."""
    i = 0
    for j in cuts.tolist():
        yield a[i:j]
        i = j
    yield a[i:]


def _levels(depth: np.ndarray) -> List[np.ndarray]:
    by = np.argsort(depth, kind="stable")
    d = depth[by]
    cuts = np.searchsorted(d, np.arange(int(d[-1]) + 2)) if len(d) else np.array([0])
    return [by[cuts[k]:cuts[k + 1]] for k in range(len(cuts) - 1)]


def _levels_moved(levels: List[np.ndarray], old: np.ndarray, depth: np.ndarray, rows: np.ndarray) -> List[np.ndarray]:
    """:func:`_levels` of ``depth`` from the ``levels`` of ``old``, where only ``rows`` may have
    changed depth: each row leaves its old level and joins its new one at its sorted place (the
    levels that neither lose nor gain a row are shared)."""
    rows = rows[old[rows] != depth[rows]]
    if not len(rows):
        return levels
    out = list(levels)
    was, now = old[rows], depth[rows]
    for lv in sorted(set(was.tolist())):
        a = out[lv]
        at = np.searchsorted(a, rows[was == lv])
        # (one row, the usual move: two slices; np.delete and np.insert cost ~5-10 µs each)
        out[lv] = np.concatenate((a[:at[0]], a[at[0] + 1:])) if len(at) == 1 else np.delete(a, at)
    top = int(now.max())
    out.extend(np.zeros(0, dtype=np.int64) for _ in range(top + 1 - len(out)))
    for lv in sorted(set(now.tolist())):
        add = np.sort(rows[now == lv])
        a = out[lv]
        at = np.searchsorted(a, add)
        out[lv] = np.concatenate((a[:at[0]], add, a[at[0]:])) if len(at) == 1 else np.insert(a, at, add)
    while out and not len(out[-1]):
        out.pop()
    return out


def _depths(parent: np.ndarray, ids: Sequence[str]) -> np.ndarray:
    n = len(parent)
    has = parent >= 0
    depth = np.zeros(n, dtype=np.int64)
    safe = np.where(has, parent, 0)
    for _ in range(n + 1):
        new = np.where(has, depth[safe] + 1, 0)
        if np.array_equal(new, depth):
            return depth
        depth = new
        if depth.max(initial=0) > n:
            break
    bad = int(np.argmax(depth))
    raise SpatialObsError(f"parent cycle through node {ids[bad]!r}")


#: Most rows :func:`_aabb` bounds on Python floats when none is turned (numpy's per-call costs were most
#: of its time on the one or two rows an edit reaches).
_AABB_FEW = 8


def _aabb(local: np.ndarray, ox: np.ndarray, oy: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """Axis-aligned box of local boxes rotated by ``rot`` about the origin and moved to ``(ox, oy)``."""
    if len(local) <= _AABB_FEW:
        got = _aabb_upright(local, ox, oy, rot)
        if got is not None:
            return got
    return _aabb_numpy(local, ox, oy, rot)


def _aabb_upright(local: np.ndarray, ox: np.ndarray, oy: np.ndarray, rot: np.ndarray) -> Optional[np.ndarray]:
    """:func:`_aabb` of a few rows none of which is turned, on Python floats with the numpy path's
    operations in its order (cosine 1, sine 0); None when a row is turned, or a corner is NaN or
    zero (numpy's and Python's min and max may keep different signed zeros): the numpy path then."""
    if any(r != 0.0 for r in rot.tolist()):
        return None
    out = []
    for (x0, y0, x1, y1), a, b in zip(local.tolist(), ox.tolist(), oy.tolist()):
        xs = ((a + 1.0 * x0) - 0.0 * y0, (a + 1.0 * x1) - 0.0 * y0, (a + 1.0 * x1) - 0.0 * y1,
              (a + 1.0 * x0) - 0.0 * y1)
        ys = ((b + 0.0 * x0) + 1.0 * y0, (b + 0.0 * x1) + 1.0 * y0, (b + 0.0 * x1) + 1.0 * y1,
              (b + 0.0 * x0) + 1.0 * y1)
        for v in xs + ys:
            if not (v < 0.0 or v > 0.0):  # NaN or a zero
                return None
        out.append((min(xs), min(ys), max(xs), max(ys)))
    return np.array(out, np.float64).reshape(len(out), 4)


def _aabb_numpy(local: np.ndarray, ox: np.ndarray, oy: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """:func:`_aabb` by numpy passes (any rows; the twin of :func:`_aabb_upright`)."""
    c = np.cos(rot)
    s = np.sin(rot)
    exact = rot == 0.0
    c[exact] = 1.0
    s[exact] = 0.0
    xs = local[:, [0, 2, 2, 0]]
    ys = local[:, [1, 1, 3, 3]]
    # (a local box that is not finite, an arrow's beyond the float range, gives NaN here: the
    # derivation bounds such a shape by its origin, see MAX_DERIVED)
    with np.errstate(invalid="ignore", over="ignore"):
        X = ox[:, None] + c[:, None] * xs - s[:, None] * ys
        Y = oy[:, None] + s[:, None] * xs + c[:, None] * ys
    out = np.empty((len(local), 4))
    out[:, 0] = X.min(axis=1)
    out[:, 1] = Y.min(axis=1)
    out[:, 2] = X.max(axis=1)
    out[:, 3] = Y.max(axis=1)
    return out


#: Node types bounded by their outline when rotated (the ``geo`` kinds by their ``geo`` prop).
_OUTLINE_TYPES = ("ellipse", "diamond", "geo")


def _outline_boxes(box: np.ndarray, rows: np.ndarray, types: np.ndarray, nodes: Sequence[Node], local: np.ndarray,
                   ox: np.ndarray, oy: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """``box`` with rotated ellipses and diamonds bounded by their outline, not their rotated box.

    An ellipse with half axes ``a, b`` turned by ``θ`` reaches ``hypot(a·cos θ, b·sin θ)``
    across and ``hypot(a·sin θ, b·cos θ)`` down from its centre (exact, as Excalidraw
    bounds it); a diamond ``max(|a·cos θ|, |b·sin θ|)`` and ``max(|a·sin θ|, |b·cos θ|)``
    (its four vertices). A tldraw ``geo`` shape other than a rectangle is bounded by
    the vertices of its outline as tldraw builds it (arcs sampled as tldraw samples
    them; :func:`~spatialobs.canvas.document.arrows.target_outline`). Only rows with
    a rotation are looked at.
    """
    turned = np.flatnonzero(rot != 0.0)
    if not len(turned):
        return box
    turned = turned[np.isin(types[rows[turned]], _OUTLINE_TYPES)]
    if not len(turned):
        return box
    t = types[rows[turned]]
    kind = np.where(t == "ellipse", 1, np.where(t == "diamond", 2, 0))
    for j in np.flatnonzero(t == "geo").tolist():
        nd = nodes[rows[turned[j]]]
        if nd.props.get("geo", "rectangle") == "rectangle":
            continue
        # tldraw bounds a geo shape by the vertices of its outline path (arcs sampled as it samples them)
        k = int(turned[j])
        x0, y0 = float(local[k, 0]), float(local[k, 1])
        v = np.asarray(_target_outline("geo", nd.props, float(local[k, 2]) - x0, float(local[k, 3]) - y0, nd.id).points,
                       dtype=np.float64).reshape(-1, 2)
        if not len(v):
            continue
        c, s = math.cos(float(rot[k])), math.sin(float(rot[k]))
        vx, vy = v[:, 0] + x0, v[:, 1] + y0
        X = float(ox[k]) + c * vx - s * vy
        Y = float(oy[k]) + s * vx + c * vy
        box[k] = (X.min(), Y.min(), X.max(), Y.max())
    sel = turned[kind > 0]
    if not len(sel):
        return box
    diamond = kind[kind > 0] == 2
    lb = local[sel]
    a = (lb[:, 2] - lb[:, 0]) / 2.0
    b = (lb[:, 3] - lb[:, 1]) / 2.0
    c = np.cos(rot[sel])
    s = np.sin(rot[sel])
    mx, my = lb[:, 0] + a, lb[:, 1] + b
    cx = ox[sel] + c * mx - s * my
    cy = oy[sel] + s * mx + c * my
    ex = np.where(diamond, np.maximum(np.abs(a * c), np.abs(b * s)), np.hypot(a * c, b * s))
    ey = np.where(diamond, np.maximum(np.abs(a * s), np.abs(b * c)), np.hypot(a * s, b * c))
    box[sel] = np.column_stack([cx - ex, cy - ey, cx + ex, cy + ey])
    return box


def _tight_boxes(box: np.ndarray, rows: np.ndarray, nodes: Sequence[Node], points: np.ndarray, local: np.ndarray,
                 ox: np.ndarray, oy: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """``_aabb`` boxes of ``rows``, with each rotated point list's box replaced by the box of its rotated points.

    ``points`` flags the point lists, one flag per row of ``rows``. Only where the local box is
    still the points' own box (a bound arrow whose ends were resolved to its targets keeps the
    rotated box of its resolved local box).
    """
    for k in np.flatnonzero(points & (rot != 0.0)).tolist():
        nd = nodes[rows[k]]
        if tuple(local[k].tolist()) != local_box(nd.type, nd.props, nd.w, nd.h):
            continue
        tight = rotated_points_box(nd.type, nd.props, float(rot[k]), float(ox[k]), float(oy[k]))
        if tight is not None:
            box[k] = tight
    return box


def _group_boxes(local: np.ndarray, is_group: np.ndarray, parent: np.ndarray, levels: List[np.ndarray],
                 x: np.ndarray, y: np.ndarray, rot: np.ndarray, nodes: Sequence[Node] = (),
                 is_point: Optional[np.ndarray] = None, types: Optional[np.ndarray] = None) -> None:
    """Fill the local boxes of groups, bottom-up: the union of children in group space."""
    gi = np.nonzero(is_group)[0]
    if not len(gi):
        return
    local[gi] = (np.inf, np.inf, -np.inf, -np.inf)
    for lvl in reversed(levels[1:]):
        p = parent[lvl]
        m = is_group[p]
        if not m.any():
            continue
        r = lvl[m]
        p = p[m]
        child = local[r]
        ok = np.isfinite(child).all(axis=1)
        if not ok.all():  # an empty group child contributes nothing
            r, p, child = r[ok], p[ok], child[ok]
        box = _aabb(child, x[r], y[r], rot[r])
        if is_point is not None:
            box = _tight_boxes(box, r, nodes, is_point[r], child, x[r], y[r], rot[r])
        if types is not None:
            box = _outline_boxes(box, r, types, nodes, child, x[r], y[r], rot[r])
        np.minimum.at(local[:, 0], p, box[:, 0])
        np.minimum.at(local[:, 1], p, box[:, 1])
        np.maximum.at(local[:, 2], p, box[:, 2])
        np.maximum.at(local[:, 3], p, box[:, 3])
    empty = gi[~np.isfinite(local[gi]).all(axis=1)]
    local[empty] = 0.0


def _turned(prot: np.ndarray) -> np.ndarray:
    """Rows whose page rotation is not a multiple of a right angle (a turned box is loose there)."""
    q = np.remainder(prot, _HALF_PI)
    return np.minimum(q, _HALF_PI - q) > 1e-9


def _turned_arrow_bounds(d: "Derived", nodes: Sequence[Node], only: Optional[np.ndarray] = None) -> None:
    """Page bounds of turned tldraw arrows: the box of their turned geometry vertices, as tldraw's.

    The turned box of an arrow's local box holds its body with room to spare (a
    diagonal straight arrow turned to the horizontal keeps its local height); these
    few rows are resolved again for their vertices.
    """
    from spatialobs.canvas.document.arrows import _terminals, _to_page, _xf, resolve_arrow

    if only is None:
        rows = np.flatnonzero((d.types == "arrow") & _turned(d.rotation))
    else:  # these rows only
        rows = only[(d.types[only] == "arrow") & _turned(d.rotation[only])]
    if not len(rows):
        return
    by_arrow = d.arrow_plan.by_arrow if d.arrow_plan is not None else {}
    for r in rows.tolist():
        nd = nodes[r]
        if not isinstance(nd.props.get("start"), Mapping) or not isinstance(nd.props.get("end"), Mapping):
            continue  # a point-list arrow (Excalidraw's form) is bounded by its points
        axf = _xf(d, r)
        s, e = _terminals(d, nodes, r, by_arrow.get(r, {}))
        g = resolve_arrow(nd.props, axf, s, e, nd.text)
        if g.vertices:
            pts = [_to_page(axf, p) for p in g.vertices]
            xs = [p[0] for p in pts]
            ys = [p[1] for p in pts]
            d.bounds[r] = (min(xs), min(ys), max(xs), max(ys))


def _group_page_bounds(bounds: np.ndarray, is_group: np.ndarray, parent: np.ndarray, levels: List[np.ndarray],
                       prot: np.ndarray) -> Optional[np.ndarray]:
    """Bound groups as tldraw does where a turn makes a difference: by their members' page geometry.

    tldraw's group geometry is its members' geometry carried into the group, so its
    page bounds are the union of the members' page bounds. The turned box of the
    group's local box is that union only when the group's page rotation is a multiple
    of a right angle and no group inside it is turned otherwise; the other groups (and
    the groups holding them) take the union, bottom-up. Empty groups keep their box.
    Returns the groups so bounded (None: none).
    """
    turned = is_group & _turned(prot)
    if not turned.any():
        return None
    need = turned.copy()
    for lvl in reversed(levels[1:]):
        r = lvl[need[lvl]]
        if len(r):
            p = parent[r]
            need[p[is_group[p]]] = True
    acc = np.full((int(need.sum()), 4), (np.inf, np.inf, -np.inf, -np.inf))
    slot = np.full(len(bounds), -1, dtype=np.int64)
    slot[need] = np.arange(len(acc))
    for lvl in reversed(levels):
        g = lvl[need[lvl]]
        if len(g):  # every member below is final: settle this level's groups
            box = acc[slot[g]]
            ok = np.isfinite(box).all(axis=1)
            bounds[g[ok]] = box[ok]
        if lvl is levels[0]:
            break
        p = parent[lvl]
        m = need[p] & np.isfinite(bounds[lvl]).all(axis=1)
        if not m.any():
            continue
        k = slot[p[m]]
        b = bounds[lvl[m]]
        np.minimum.at(acc[:, 0], k, b[:, 0])
        np.minimum.at(acc[:, 1], k, b[:, 1])
        np.maximum.at(acc[:, 2], k, b[:, 2])
        np.maximum.at(acc[:, 3], k, b[:, 3])
    return need


def _paint_order(raw: "Raw", parent: np.ndarray, page: np.ndarray, levels: List[np.ndarray]) -> np.ndarray:
    ids = raw.ids
    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if n <= PAINT_WALK_MAX:
        walked = _paint_order_small(raw, parent, page)
        if walked is not None:
            return walked
    pk = np.where(parent >= 0, parent, -1 - page)
    rank = _sibling_rank(raw, pk)
    D = len(levels)
    if D > _MAX_KEY_DEPTH:
        return _paint_order_walk(ids, rank, parent, page)
    K = np.full((n, D), -1, dtype=np.int64)
    for d, lvl in enumerate(levels):
        if d:
            K[lvl, :d] = K[parent[lvl], :d]
        K[lvl, d] = rank[lvl]
    keys = tuple(K[:, d] for d in range(D - 1, -1, -1)) + (page,)
    return np.lexsort(keys)


#: Most rows (*ours*) whose paint order :func:`_paint_order` finds by a walk of the tree in Python
#: (:func:`_paint_order_small`) instead of numpy sorts of sibling ranks. Measured (medians of 500,
#: the input columns extracted apart): 16 rows 5.5 against 23 µs, 60 rows 15 against 33 µs, 151
#: rows 32 against 40 µs, 200 rows 47.5 against 50 µs, 300 rows 67 against 60 µs.
PAINT_WALK_MAX = 192


def _paint_order_small(raw: "Raw", parent: np.ndarray, page: np.ndarray) -> Optional[np.ndarray]:
    """:func:`_paint_order` by a depth-first walk: the roots by page, then index, then id, each
    row's children by index, then id, compared as Python strings; None (the caller sorts) when an
    index or id is not a ``str`` or holds a NUL (numpy strings compare without trailing NULs),
    or when the walk does not reach every row."""
    ids, index = raw.ids, raw.index
    try:
        if "\x00" in "".join(index) or "\x00" in "".join(ids):
            return None
    except TypeError:  # a key that is not a str: the sorts decide (and word the error)
        return None
    n = len(ids)
    par, pg = parent.tolist(), page.tolist()
    kids: Dict[int, List[int]] = {}
    roots: List[int] = []
    for i, p in enumerate(par):
        if p >= 0:
            kids.setdefault(p, []).append(i)
        else:
            roots.append(i)
    roots.sort(key=lambda i: (pg[i], index[i], ids[i]))
    out: List[int] = []
    stack = roots[::-1]
    while stack:
        i = stack.pop()
        out.append(i)
        ch = kids.get(i)
        if ch:
            ch.sort(key=lambda j: (index[j], ids[j]), reverse=True)
            stack.extend(ch)
    return np.array(out, dtype=np.int64) if len(out) == n else None


def _ranks_in_groups(s: np.ndarray, pk: np.ndarray) -> np.ndarray:
    """Each row's position among the rows of its group (equal ``pk``) in the order ``s`` (sorted by ``pk`` first)."""
    n = len(s)
    pks = pk[s]
    start = np.r_[True, pks[1:] != pks[:-1]]
    pos = np.arange(n)
    first = np.maximum.accumulate(np.where(start, pos, 0))
    rank = np.empty(n, dtype=np.int64)
    rank[s] = pos - first
    return rank


def _sibling_rank_strings(raw: "Raw", pk: np.ndarray) -> np.ndarray:
    """Each row's rank among its siblings (``pk``: its parent, or its page) by index, then id, compared as
    numpy strings (the twin of :func:`_sibling_rank`)."""
    ida, idx = raw.sort_keys()
    return _ranks_in_groups(np.lexsort((ida, idx, pk)), pk)


def _sibling_rank(raw: "Raw", pk: np.ndarray) -> np.ndarray:
    """:func:`_sibling_rank_strings`' ranks, from integer codes of the distinct indices when no two
    siblings share one (then ids decide nothing) and every index is a ``str`` without a NUL (numpy
    strings drop trailing NULs): a few distinct keys sorted in Python and integer columns in numpy
    instead of 10⁵ ids and indices as numpy strings. Otherwise, or when an edit carried the string
    columns over, the twin's."""
    if raw.id_array is not None and raw.index_array is not None:
        return _sibling_rank_strings(raw, pk)
    index = raw.index
    keys = set(index)
    try:
        if "\x00" in "".join(keys):
            return _sibling_rank_strings(raw, pk)
    except TypeError:  # an index that is not a str
        return _sibling_rank_strings(raw, pk)
    code = dict(zip(sorted(keys), range(len(keys))))
    ic = np.fromiter(map(code.__getitem__, index), np.int64, len(index))
    s = np.lexsort((ic, pk))
    pks, ics = pk[s], ic[s]
    if ((pks[1:] == pks[:-1]) & (ics[1:] == ics[:-1])).any():  # siblings sharing an index: ids decide
        return _sibling_rank_strings(raw, pk)
    return _ranks_in_groups(s, pk)


def _paint_order_walk(ids: List[str], rank: np.ndarray, parent: np.ndarray, page: np.ndarray) -> np.ndarray:
    """Depth-first walk for very deep trees, where a key matrix would be too large."""
    n = len(ids)
    kids: Dict[int, List[int]] = {}
    roots: List[int] = []
    for i in range(n):
        p = int(parent[i])
        (kids.setdefault(p, []) if p >= 0 else roots).append(i)
    out: List[int] = []
    roots.sort(key=lambda i: (int(page[i]), int(rank[i])))
    stack = list(reversed(roots))
    while stack:
        i = stack.pop()
        out.append(i)
        ch = kids.get(i)
        if ch:
            ch.sort(key=lambda j: int(rank[j]))
            stack.extend(reversed(ch))
    return np.asarray(out, dtype=np.int64)


def _resolve_arrows(d: "Derived", nodes: Sequence[Node], bindings: Mapping[str, Binding],
                    cache: Optional[Dict[str, Any]] = None, prev: Optional["Derived"] = None,
                    dirty: Optional[np.ndarray] = None, remaining: Optional[np.ndarray] = None,
                    rebound: Optional[AbstractSet[str]] = None) -> List[int]:
    """Recompute the local boxes of tldraw arrows as tldraw resolves them; return their rows."""
    return resolve_bound(d, nodes, bindings, cache, prev, dirty, remaining, rebound)


@dataclass
class Raw:
    """Per-node input columns extracted from the Node objects (reused across writes)."""

    nodes: List[Node]
    ids: List[str]
    row: Dict[str, int]
    parents: List[str]
    parent: np.ndarray
    types: np.ndarray
    index: List[str]
    num: np.ndarray  # (n, 8): x, y, w, h, rotation, opacity, hidden, locked
    same_tree: bool = False  # parents, indices and types as in the previous derivation
    id_array: Optional[np.ndarray] = None     # ids and indices as numpy strings, for sorting;
    index_array: Optional[np.ndarray] = None  # built on first use and carried across edits
    # rows of the previous derivation that remain, when whole subtrees were removed and
    # nothing else changed the tree: the remaining nodes keep their depth and paint order
    kept: Optional[np.ndarray] = None
    changed_rows: Optional[List[int]] = None  # rows replaced by patch (same ids, same order), or by splice
    # when whole subtrees were removed and nothing added (the tree of the other nodes may have
    # changed): the previous derivation's rows that remain, and the remaining rows (new
    # numbering) of the nodes updated meanwhile; a hint for the arrow pass of one derivation
    remaining: Optional[np.ndarray] = None
    remaining_changed: Optional[List[int]] = None
    appended: int = -1  # rows of the previous derivation when splice only appended rows after them
    # with ``appended`` or ``kept``: the rows of the previous derivation kept their parents,
    # indices and types (only the appended or removed rows changed the tree)
    old_tree: bool = False
    #: rows replaced by :func:`patch` whose parent or index changed (their type did not); None
    #: when a type changed or the raw came otherwise
    tree_rows: Optional[List[int]] = None
    #: after :func:`splice` removed rows from the id list and row map in place (``share``): the
    #: removed rows (previous numbering, ascending) and their ids, from which the previous
    #: numbering is put back when a derivation must read it (see :func:`_number_before`)
    removed: Optional[Tuple[List[int], List[str]]] = None

    def sort_keys(self) -> Tuple[np.ndarray, np.ndarray]:
        """``(id_array, index_array)``, built now if no edit carried them over."""
        if self.id_array is None:
            self.id_array = np.array(self.ids) if self.ids else np.zeros(0, dtype="<U1")
        if self.index_array is None:
            self.index_array = np.array(self.index) if self.index else np.zeros(0, dtype="<U1")
        return self.id_array, self.index_array


_COUNTING: List[int] = []


def _counting(n: int) -> List[int]:
    """``[0, 1, ..., n-1]`` or longer, kept between calls: row maps reuse the int objects."""
    if len(_COUNTING) < n:
        _COUNTING.extend(range(len(_COUNTING), max(n, 2 * len(_COUNTING))))
    return _COUNTING


def _put_str(arr: Optional[np.ndarray], rows: List[int], values: List[str], own: bool = False) -> Optional[np.ndarray]:
    """A numpy string column with some rows set, widened when a value is longer: a copy, or ``arr``
    itself with ``own`` (no one else reads it) when the values fit."""
    if arr is None:
        return None
    need = max(map(len, values), default=0)
    width = arr.dtype.itemsize // 4
    out = arr.astype(f"<U{need}") if need > width else arr if own else arr.copy()
    out[rows] = values
    return out


def _cat_str(arr: Optional[np.ndarray], values: List[str], own: bool = False) -> Optional[np.ndarray]:
    """A numpy string column with ``values`` appended: with ``own`` (as for :func:`_put_str`) into
    its spare rows when the values fit (see :func:`_grown`), else into a new array."""
    if arr is None:
        return None
    if not values:
        return arr
    if max(map(len, values)) <= arr.dtype.itemsize // 4:
        out, _ = _grown(arr, len(values), "", own)
        out[len(arr):] = values
        return out
    return np.concatenate([arr, np.array(values)])


def _node_columns_py(nodes: List[Node]) -> Tuple[List[str], List[str], List[str], List[str], np.ndarray]:
    # The pure-Python twin of the compiled _cextract.node_columns (its test oracle, and the
    # pass for numbers that are not plain floats, ints or bools): one pass per field group.
    n = len(nodes)
    num = np.fromiter(chain.from_iterable(map(_get_num, nodes)), np.float64, 8 * n).reshape(n, 8)
    return ([nd.id for nd in nodes], [nd.parent for nd in nodes], [nd.type for nd in nodes],
            [nd.index for nd in nodes], num)


def _cextract_module() -> Any:
    """The compiled ``_cextract`` module, or None in a source tree without it."""
    try:
        from spatialobs.canvas.document import _cextract
    except ImportError:
        return None
    return _cextract


try:
    from spatialobs.canvas.document._cextract import node_columns as _node_columns
except ImportError:  # a source tree without the compiled module
    _node_columns = _node_columns_py


_c_point_boxes: Optional[Callable[..., Any]] = getattr(_cextract_module(), "point_boxes", None)

#: Whether the first derivation reads its point-based rows' local boxes with the compiled
#: ``_cextract.point_boxes`` (straight tldraw arrows read there, the others by ``local_box``);
#: False reads every one with :func:`_point_boxes`' Python loop, which gives the same boxes.
POINT_BOX_KERNEL = True


def _point_boxes(nodes: Sequence[Node], rows: List[int],
                 local_cache: Dict[str, Tuple[Node, Tuple[float, float, float, float]]]
                 ) -> List[Tuple[float, float, float, float]]:
    """The local boxes of ``rows``' nodes, each kept in ``local_cache`` (id -> (node, box)) and
    read from it while the node is the same record."""
    if POINT_BOX_KERNEL and _c_point_boxes is not None and type(nodes) is list and type(local_cache) is dict:
        return _c_point_boxes(nodes, rows, local_cache, local_box, STRAIGHT_BEND)
    pboxes = []
    for i in rows:
        nd = nodes[i]
        hit = local_cache.get(nd.id)
        if hit is None or hit[0] is not nd:
            hit = (nd, local_box(nd.type, nd.props, nd.w, nd.h))
            local_cache[nd.id] = hit
        pboxes.append(hit[1])
    return pboxes


def extract(nodes: Iterable[Node]) -> Raw:
    """Extract the input columns of every node."""
    nodes = list(nodes)
    n = len(nodes)
    cols = _node_columns(nodes)
    ids, parents, type_list, index, num = cols if cols is not None else _node_columns_py(nodes)
    row = dict(zip(ids, range(n)))
    parent = np.fromiter(map(row.get, parents, repeat(-1, n)), dtype=np.int64, count=n)
    return Raw(nodes, ids, row, parents, parent, _str_column(type_list), index, num)


def _str_column(values: List[str]) -> np.ndarray:
    """``np.array(values)`` (a numpy string column), built from the few distinct values a type column
    holds when they are all ``str``: one small array taken at integer codes."""
    if not values:
        return np.zeros(0, dtype="<U1")
    distinct = set(values)
    if len(distinct) > 64 or any(type(v) is not str for v in distinct):
        return np.array(values)
    keys = list(distinct)
    code = dict(zip(keys, range(len(keys))))
    return np.array(keys)[np.fromiter(map(code.__getitem__, values), np.int64, len(values))]


def _kept(a: np.ndarray, keep: np.ndarray, first: int = 0) -> np.ndarray:
    """The rows of ``a`` where ``keep`` is True (``a[keep]``: the same values), a new array.

    ``first``: the rows before it are all kept; they are copied as one block and only the
    rows from it on are filtered (``compress`` filters a 1-D column of 10^5 floats in ~0.9 ms
    and copies a block of it in ~0.02 ms; it copies rows of a 2-D column about 10x faster
    than a boolean mask does)."""
    if first <= 0:
        return np.compress(keep, a, axis=0)
    tail = np.compress(keep[first:], a[first:], axis=0)
    out = np.empty((first + len(tail),) + a.shape[1:], dtype=a.dtype)
    out[:first] = a[:first]
    out[first:] = tail
    return out


def splice(raw: Raw, gone: Set[str], added: Sequence[Node], changed: Mapping[str, Node],
           children: Mapping[str, Mapping[str, None]], own: bool = False, share: bool = False) -> Raw:
    """``raw`` after rows were removed and appended, without reading the other nodes again.

    ``gone`` are ids of ``raw`` removed since, ``added`` the nodes added since in
    canvas (dict) order, which appends them; ``changed`` nodes of ``raw`` updated in
    place; ``children`` the canvas's parent → children index, which re-links
    children of an appended node. The result equals :func:`extract` of the
    canvas's nodes (rows in the same order). With ``own``, ``raw`` belongs to the
    caller alone and is never read again: its record, parent and index lists are
    written in place and shared with the result (the id list, which derivations
    share, is still copied). With ``share`` too, the id list and the row map are edited
    in place as well: the derivations that share them (the previous ones) must not be
    handed out. Rows only appended, they keep their rows' ids (an id list that grew past
    their columns, whose length stays their row count); rows removed (up to 32), the
    result's ``removed`` names them, and :func:`_number_before` gives the previous
    derivation its numbering back when a derivation must read it (the full pass after a
    removal that the quick one declined).
    """
    ids: List[str]
    n0 = len(raw.ids)
    relinked: List[int] = []
    old_nodes = raw.nodes
    # whether the replaced records keep their parent, index and type (read before any write)
    same_place = all(old_nodes[raw.row[nid]].parent == nd.parent and old_nodes[raw.row[nid]].index == nd.index
                     and old_nodes[raw.row[nid]].type == nd.type for nid, nd in changed.items())

    def lists() -> Tuple[List[str], List[Node], List[str], List[str]]:
        if own and share:
            return raw.ids, raw.nodes, raw.parents, raw.index
        if own:
            return list(raw.ids), raw.nodes, raw.parents, raw.index
        return list(raw.ids), list(raw.nodes), list(raw.parents), list(raw.index)
    if gone:
        keep = np.ones(n0, dtype=bool)
        dead = sorted((raw.row[i] for i in gone), reverse=True)
        keep[dead] = False
        removed: Optional[Tuple[List[int], List[str]]] = None
        if len(dead) <= 32:  # a few removals: copy and delete (memmove) beats filtering
            ids, nodes, parents, index = lists()
            if ids is raw.ids:  # edited in place: the previous numbering kept to be put back
                removed = (dead[::-1], [ids[r] for r in dead[::-1]])
            for r in dead:
                del ids[r], nodes[r], parents[r], index[r]
        else:
            ids = list(compress(raw.ids, keep))
            nodes = list(compress(raw.nodes, keep))
            parents = list(compress(raw.parents, keep))
            index = list(compress(raw.index, keep))
        newpos = np.cumsum(keep) - 1
        first = dead[-1]  # the rows before it keep their numbers
        if own and share and first + len(dead) == n0:
            # the last rows removed (the rows just added, undone): the kept rows are the first ones,
            # read in place (no row moves; the derivations that share the columns read them as they
            # were, the removed rows included, and none was handed out, since the next append may
            # write the rows past them); written below only through copies (~0.9 ms at 10^5)
            parent, types, num = raw.parent[:first], raw.types[:first], raw.num[:first]
        else:
            parent, types, num = _kept(raw.parent, keep, first), _kept(raw.types, keep, first), \
                _kept(raw.num, keep, first)
        # parents from the first removed row on are renumbered, or -1 when removed (an orphan)
        hi = np.flatnonzero(parent >= first)
        q = parent[hi]
        alive = keep[q]
        if len(hi) and np.may_share_memory(parent, raw.parent):
            parent = parent.copy()
        parent[hi] = np.where(alive, newpos[q], -1)
        orphans = not alive.all()
        # the sort keys only the full pass reads: with ``own``, left to it to build again rather
        # than copied (~1 ms per removal at 10^5 for a pass that takes ~1 s)
        id_array = _kept(raw.id_array, keep, first) if raw.id_array is not None and not own else None
        index_array = _kept(raw.index_array, keep, first) if raw.index_array is not None and not own else None
        # the row map: drop the removed ids, renumber the rows after the first removal
        # (updating existing keys of a copy is cheaper than building a new dict). ``dict.copy``,
        # not ``dict(...)``: a map that lost keys has holes, which ``dict(...)`` copies key by
        # key (~7 ms at 10^5) and ``copy`` clones (<1 ms) while they are under a third. With the
        # id list edited in place (``own`` and ``share``), the map is too (the copy cost ~2 ms)
        row = raw.row if removed is not None else raw.row.copy()
        for i in gone:
            del row[i]
        row.update(zip(ids[first:], _counting(len(ids))[first:len(ids)]))
    else:
        ids, nodes, parents, index = lists()
        parent, types, num = raw.parent, raw.types, raw.num
        id_array, index_array = raw.id_array, raw.index_array
        row = raw.row if own and share else raw.row.copy()  # cloned, holes and all (see above)
    if added:
        m = len(ids)
        k = len(added)
        new_ids = [nd.id for nd in added]
        new_index = [nd.index for nd in added]
        new_parents = [nd.parent for nd in added]
        ids.extend(new_ids)
        nodes.extend(added)
        parents.extend(new_parents)
        index.extend(new_index)
        row.update(zip(new_ids, range(m, m + k)))
        # with ``own`` and ``share``, into the spare rows past the columns (see _grown): the
        # derivations that share them read only their own rows, and none was handed out
        parent, _ = _grown(parent, k, -1, own and share)
        parent[m:] = np.fromiter(map(row.get, new_parents, repeat(-1)), np.int64, k)
        wider = _cat_str(types, [nd.type for nd in added], own and share)
        assert wider is not None
        types = wider
        num, _ = _grown(num, k, 0.0, own and share)
        num[m:] = np.fromiter(chain.from_iterable(map(_get_num, added)), np.float64, 8 * k).reshape(k, 8)
        id_array = _cat_str(id_array, new_ids, own)
        index_array = _cat_str(index_array, new_index, own)
        for nid in new_ids:  # children that were waiting for this parent (undo of a removal)
            kids = children.get(nid)
            if kids:
                if np.may_share_memory(parent, raw.parent):  # (the rows the previous derivation reads)
                    parent = parent.copy()
                parent[[row[c] for c in kids]] = row[nid]
                relinked.extend(row[c] for c in kids)
    if changed:
        if np.may_share_memory(parent, raw.parent):  # (``raw``'s own, or its first rows)
            parent = parent.copy()
        # (the numeric columns are read by no derivation: grown into ``raw``'s spare rows with
        # ``own``, ``raw``'s rows are written, as :func:`patch` writes them; a copy cost ~0.7 ms at 10^5)
        if not (own and added and not gone) and np.may_share_memory(num, raw.num):
            num = num.copy()
        rows = [row[nid] for nid in changed]
        vals = list(changed.values())
        need = max(len(nd.type) for nd in vals)
        if types.dtype.itemsize // 4 < need:
            types = types.astype(f"<U{need}")
        elif np.may_share_memory(types, raw.types):
            types = types.copy()
        for r, nd in zip(rows, vals):
            nodes[r] = nd
            parents[r] = nd.parent
            index[r] = nd.index
            parent[r] = row.get(nd.parent, -1)
            types[r] = nd.type
            num[r] = _get_num(nd)
        index_array = _put_str(index_array, rows, [nd.index for nd in vals], own)
    kept = None
    remaining = None
    if gone and not added and not orphans:
        remaining = keep
        if same_place:
            kept = keep
    out = Raw(nodes, ids, row, parents, parent, types, index, num, False, id_array, index_array, kept)
    if gone:
        out.removed = removed
    if remaining is not None:
        out.remaining = remaining
        out.remaining_changed = [row[nid] for nid in changed]
    if not gone:  # rows only appended: the previous rows keep their places
        out.appended = n0
        out.changed_rows = [row[nid] for nid in changed] + relinked + list(range(n0, len(ids)))
        out.old_tree = not relinked and same_place
    elif kept is not None:
        out.old_tree = True
    return out


def patch(raw: Raw, changed: Mapping[str, Node], own: bool = False) -> Optional[Raw]:
    """``raw`` with some nodes replaced in place of their rows (same ids, same order).

    With ``own``, ``raw`` belongs to the caller alone and is never read again: its record,
    parent and index lists and numeric columns are written in place and shared with the
    result instead of copied (at 10^5 rows a copy of the record list costs more than the rest of a move's
    derivation, and the garbage collector walks every fresh copy). Returns None when a
    change cannot be patched (a type name longer than the column); with ``own``, ``raw``
    is then left as it was.
    """
    width = raw.types.dtype.itemsize // 4 if raw.types.dtype.kind == "U" else 0
    if own and any(len(nd.type) > width for nd in changed.values()):
        return None
    nodes = raw.nodes if own else list(raw.nodes)
    num = raw.num if own else raw.num.copy()
    same = True
    tree_rows: Optional[List[int]] = []
    for nid, nd in changed.items():
        r = raw.row[nid]
        if len(nd.type) > width:
            return None
        old = raw.nodes[r]
        if old.parent != nd.parent or old.index != nd.index or old.type != nd.type:
            same = False
            if old.type != nd.type:
                tree_rows = None
            elif tree_rows is not None:
                tree_rows.append(r)
        nodes[r] = nd
        num[r] = _get_num(nd)
    # the tree columns are shared with ``raw`` while no parent, index or type changed
    parents, parent, types, index = raw.parents, raw.parent, raw.types, raw.index
    if not same:
        parents, index = (raw.parents, raw.index) if own else (list(raw.parents), list(raw.index))
        parent, types = raw.parent.copy(), raw.types.copy()  # shared with the previous derivation
        for nid, nd in changed.items():
            r = raw.row[nid]
            parents[r] = nd.parent
            parent[r] = raw.row.get(nd.parent, -1)
            types[r] = nd.type
            index[r] = nd.index
    index_array = raw.index_array
    if not same:
        index_array = _put_str(index_array, [raw.row[nid] for nid in changed], [nd.index for nd in changed.values()],
                               own)
    return Raw(nodes, raw.ids, raw.row, parents, parent, types, index, num, same, raw.id_array, index_array,
               changed_rows=[raw.row[nid] for nid in changed], tree_rows=None if same else tree_rows)


def derive(nodes: Sequence[Node], pages: Mapping[str, Page], bindings: Mapping[str, Binding],
           local_cache: Dict[str, Tuple[Node, Tuple[float, float, float, float]]],
           raw: Optional[Raw] = None, prev: Optional[Derived] = None,
           arrow_cache: Optional[Dict[str, Any]] = None, rebound: Optional[AbstractSet[str]] = None,
           in_place: bool = False, same_bindings: bool = False) -> Derived:
    """Compute :class:`Derived` for ``nodes`` (a forest whose roots sit on ``pages``).

    With ``prev`` and a ``raw`` whose tree is unchanged (only geometry or state was
    edited), depth, levels and paint order are reused. ``arrow_cache`` (the canvas's
    own) keeps each resolved arrow while its inputs are unchanged. ``rebound``: the ids
    of the connectors whose bindings were written since ``prev`` (the canvas keeps
    them); with it, a derivation from ``prev`` after binding writes reads those
    connectors again instead of deriving afresh.

    ``in_place``: ``prev`` is never read again by anyone but this call, so a derivation of
    the rows an edit reaches writes the columns ``prev`` owns (:attr:`Derived.owned`) in place
    instead of copying them (one that gives up after writing them derives afresh, without ``prev``).
    ``same_bindings``: the binding records are those ``prev`` was derived with, in the same
    order (the caller knows it from its write count), so they are not compared one by one.
    """
    if raw is None:
        raw = extract(nodes)
    nodes = raw.nodes
    n = len(nodes)
    ids, row, parents, parent, types = raw.ids, raw.row, raw.parents, raw.parent, raw.types
    if rebound and prev is not None:
        _rebound_rows(raw, rebound)
    page_ids = [p.id for p in sorted(pages.values(), key=lambda p: (p.index, p.id))]
    page_rank = {pid: k for k, pid in enumerate(page_ids)}
    reuse = prev is not None and raw.same_tree and prev.page_ids == page_ids and len(prev.depth) == n
    remaining = raw.remaining
    if remaining is not None and not (prev is not None and prev.page_ids == page_ids and len(prev.depth) == len(remaining)):
        remaining = None
    kept = raw.kept if remaining is not None else None  # splice sets kept only with remaining (the same rows)
    if reuse and raw.changed_rows is not None and prev.clip is not None:  # type: ignore[union-attr]
        try:
            quick = _derive_rows(raw, prev, bindings, local_cache, arrow_cache,  # type: ignore[arg-type]
                                 private=in_place, rebound=rebound, on_prev=in_place, same_bindings=same_bindings)
        except _Spoiled:  # ``prev``'s columns were written before the pass gave up: derived afresh
            quick, prev, reuse, remaining, kept = None, None, False, None, None
        if quick is not None:
            return quick
    # (``prev``'s row count is its columns' length: an append may have extended the id list it shares)
    if (prev is not None and raw.old_tree and prev.clip is not None and prev.page_ids == page_ids
            and not prev.n_bad and len(prev.depth) and n >= MIN_TREE_ROWS):
        quick = None
        try:
            if raw.appended >= 0 and raw.appended == len(prev.depth) and raw.changed_rows is not None:
                quick = _derive_appended(raw, prev, page_rank, bindings, local_cache, arrow_cache, rebound,
                                         same_bindings, in_place)
            elif kept is not None and raw.remaining_changed is not None:
                quick = _derive_removed(raw, prev, kept, bindings, local_cache, arrow_cache, rebound, same_bindings,
                                        in_place)
        except _Spoiled:  # ``prev``'s columns were written before the pass gave up: derived afresh
            quick, prev, reuse, remaining, kept = None, None, False, None, None
        if quick is not None:
            raw.remaining = raw.remaining_changed = None
            return quick
    if prev is not None and raw.removed is not None:
        _number_before(raw, prev)  # the full pass reads ``prev``'s ids and row map in its own numbering
    if (prev is not None and not raw.same_tree and raw.changed_rows is not None and raw.appended < 0
            and raw.remaining is None and prev.clip is not None and prev.page_ids == page_ids and not prev.n_bad
            and len(prev.depth) == n and n >= MIN_TREE_ROWS and (prev.ids is ids or prev.ids == ids)):
        try:
            quick = _derive_moved(raw, prev, page_rank, bindings, local_cache, arrow_cache, rebound, same_bindings,
                                  in_place)
        except _Spoiled:  # as above
            quick, prev, reuse, remaining, kept = None, None, False, None, None
        if quick is not None:
            return quick
    if reuse:
        depth = prev.depth  # type: ignore[union-attr]
        levels = prev.levels  # type: ignore[union-attr]
    elif kept is not None:
        depth = prev.depth[kept]  # type: ignore[union-attr]
        levels = _levels(depth) if n else []
    else:
        depth = _depths(parent, ids)
        levels = _levels(depth) if n else []
    num = raw.num
    x = num[:, 0].copy()
    y = num[:, 1].copy()
    rot_l = num[:, 4].copy()
    local = np.zeros((n, 4))
    local[:, 2] = num[:, 2]
    local[:, 3] = num[:, 3]
    is_point = np.isin(types, list(POINT_TYPES)) if n else np.zeros(0, bool)
    point_rows = np.flatnonzero(is_point)
    todo_points = point_rows
    if reuse and raw.changed_rows is not None and len(point_rows):
        # unchanged records keep their boxes: the previous derivation's, before arrows were resolved
        local[point_rows] = prev.local[point_rows]  # type: ignore[union-attr]
        plan = prev.arrow_plan  # type: ignore[union-attr]
        if plan is not None:
            local[plan.rows] = plan.point_boxes
        todo_points = np.intersect1d(point_rows, np.asarray(raw.changed_rows, dtype=np.int64))
    elif remaining is not None and raw.remaining_changed is not None and len(point_rows):
        # the same after a removal, through the remaining rows' previous numbering
        before = prev.local  # type: ignore[union-attr]
        plan = prev.arrow_plan  # type: ignore[union-attr]
        if plan is not None:
            before = before.copy()
            before[plan.rows] = plan.point_boxes
        local[point_rows] = before[np.flatnonzero(remaining)[point_rows]]
        todo_points = np.intersect1d(point_rows, np.asarray(raw.remaining_changed, dtype=np.int64))
    if len(todo_points):
        local[todo_points] = _point_boxes(nodes, todo_points.tolist(), local_cache)
    is_group = types == "group"
    is_frame = types == "frame"

    # page transforms, opacity and flags, level by level
    px = x.copy()
    py = y.copy()
    prot = rot_l.copy()
    page = np.zeros(n, dtype=np.int64)
    opacity = num[:, 5].copy()
    hidden = num[:, 6] != 0
    locked = num[:, 7] != 0
    frame = np.full(n, -1, dtype=np.int64)
    group = np.full(n, -1, dtype=np.int64)
    if reuse:
        page = prev.page  # type: ignore[union-attr]
    elif kept is not None:
        page = prev.page[kept]  # type: ignore[union-attr]
    elif n:
        roots = levels[0]
        page[roots] = [page_rank.get(parents[i], 0) for i in roots.tolist()]
    for lvl in levels[1:]:
        p = parent[lvl]
        c = np.cos(prot[p])
        s = np.sin(prot[p])
        z = prot[p] == 0.0
        c[z] = 1.0
        s[z] = 0.0
        px[lvl] = px[p] + c * x[lvl] - s * y[lvl]
        py[lvl] = py[p] + s * x[lvl] + c * y[lvl]
        prot[lvl] = prot[p] + rot_l[lvl]
        if not reuse and kept is None:
            page[lvl] = page[p]
        opacity[lvl] *= opacity[p]
        hidden[lvl] |= hidden[p]
        locked[lvl] |= locked[p]
        frame[lvl] = np.where(is_frame[p], p, frame[p])
        group[lvl] = np.where(is_group[p], p, group[p])

    _group_boxes(local, is_group, parent, levels, x, y, rot_l, nodes, is_point, types)
    d = Derived(ids, row, types, parent, page, page_ids, depth, local, px, py, prot,
                np.zeros((n, 4)), np.zeros((n, 4)), frame, group, opacity, hidden, locked,
                np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(len(page_ids) + 1, dtype=np.int64))
    dirty = None
    # (an id list extended in place is longer than ``raw.appended``: no hint, every arrow resolved)
    appended = (prev is not None and raw.appended >= 0 and raw.appended == len(prev.ids)
                and raw.changed_rows is not None and prev.page_ids == page_ids)
    hint = raw.changed_rows if (reuse or appended) else raw.remaining_changed if remaining is not None else None
    if hint is not None:
        # the patched (or appended) rows and their descendants: every row whose record or page
        # transform may differ from the previous derivation's (after a removal of whole
        # subtrees, in the remaining rows' numbering)
        dirty = np.zeros(n, dtype=bool)
        dirty[hint] = True
        for lvl in levels[1:]:
            dirty[lvl] |= dirty[parent[lvl]]
    d.serial = next(_SERIALS)
    if reuse:
        d.base = prev.serial  # type: ignore[union-attr]
        d.record_rows = np.asarray(raw.changed_rows or (), dtype=np.int64)
    # hints for one derivation: the same raw derived again says nothing
    raw.changed_rows = raw.remaining = raw.remaining_changed = None
    if bindings or (n and (types == "arrow").any()):  # unbound arcs and labelled arrows too
        changed = _resolve_arrows(d, nodes, bindings, arrow_cache, prev if dirty is not None else None, dirty,
                                  remaining if dirty is not None else None, rebound)
        if changed and (group[changed] >= 0).any():
            _group_boxes(local, is_group, parent, levels, x, y, rot_l, nodes, is_point, types)
    if n:
        rows = np.arange(n)
        d.bounds = _outline_boxes(_tight_boxes(_aabb(local, px, py, prot), rows, nodes, is_point, local, px, py,
                                               prot), rows, types, nodes, local, px, py, prot)
        _turned_arrow_bounds(d, nodes)
        d.group_need = _group_page_bounds(d.bounds, is_group, parent, levels, prot)
        # A shape's own geometry (points, an arc, a label) can be non-finite or far beyond the
        # coordinates the sanitizer allows (a point at 1e308): such a shape is bounded by its
        # origin, so that no NaN, infinity or overflowing area reaches observations and kernels.
        bad = ~(np.abs(d.bounds) <= MAX_DERIVED).all(axis=1)
        if bad.any():
            d.bounds[bad] = np.column_stack([px[bad], py[bad], px[bad], py[bad]])
            d.n_bad = int(bad.sum())
    else:
        d.bounds = np.zeros((0, 4))

    # visible bounds: intersect with every ancestor frame, propagated level by level
    clip = np.empty((n, 4))
    clip[:] = (-np.inf, -np.inf, np.inf, np.inf)
    for lvl in levels[1:]:
        p = parent[lvl]
        cp = clip[p]
        fb = np.where(is_frame[p][:, None], d.bounds[p], (-np.inf, -np.inf, np.inf, np.inf))
        clip[lvl, 0] = np.maximum(cp[:, 0], fb[:, 0])
        clip[lvl, 1] = np.maximum(cp[:, 1], fb[:, 1])
        clip[lvl, 2] = np.minimum(cp[:, 2], fb[:, 2])
        clip[lvl, 3] = np.minimum(cp[:, 3], fb[:, 3])
    vis = np.empty((n, 4))
    vis[:, :2] = np.maximum(d.bounds[:, :2], clip[:, :2])
    vis[:, 2:] = np.minimum(d.bounds[:, 2:], clip[:, 2:])
    gone = (vis[:, 0] > vis[:, 2]) | (vis[:, 1] > vis[:, 3])
    vis[gone] = np.nan
    d.visible = vis
    d.clip = clip
    d.owned = frozenset(_OWNABLE)  # every one built here

    d.levels = levels
    if reuse:
        d.paint, d.order, d.page_start = prev.paint, prev.order, prev.page_start  # type: ignore[union-attr]
        d.size = prev.size  # type: ignore[union-attr]
        return d
    if kept is not None:
        # removing whole subtrees leaves the relative order of every other node as it was
        old_paint = prev.paint  # type: ignore[union-attr]
        paint = (np.cumsum(kept) - 1)[old_paint[kept[old_paint]]]
    else:
        paint = _paint_order(raw, parent, page, levels)
    order = np.empty(n, dtype=np.int64)
    order[paint] = np.arange(n)
    d.paint = paint
    d.order = order
    d.page_start = np.searchsorted(page[paint], np.arange(len(page_ids) + 1)) if n else np.zeros(len(page_ids) + 1, dtype=np.int64)
    return d


def _number_before(raw: Raw, prev: Derived) -> None:
    """Give ``prev`` back the id list and row map of its own numbering when :func:`splice` removed
    rows from the ones it shares with ``raw`` in place (``raw.removed``): new ones, built with the
    removed ids put back at their rows (``raw`` keeps the edited ones)."""
    assert raw.removed is not None
    if prev.ids is not raw.ids:
        return
    ids = list(raw.ids)
    for r, i in zip(*raw.removed):  # ascending: each lands at its own row
        ids.insert(r, i)
    prev.ids = ids
    prev.row = dict(zip(ids, range(len(ids))))


def _rebound_rows(raw: Raw, rebound: AbstractSet[str]) -> None:
    """Count the rows of the ``rebound`` connectors among the rows a derivation from the
    previous one re-reads (their terminals and boxes are read again, as for an edited record)."""
    row = raw.row
    extra = [r for i in rebound if (r := row.get(i)) is not None]
    if not extra:
        return
    if raw.changed_rows is not None:
        raw.changed_rows = list(raw.changed_rows) + extra
    if raw.remaining_changed is not None:
        raw.remaining_changed = list(raw.remaining_changed) + extra


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to the bit (``array_equal`` takes -0.0 for 0.0, and a column kept for that would differ)."""
    return a.shape == b.shape and a.dtype == b.dtype and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


_NO_CLIP = np.array([-np.inf, -np.inf, np.inf, np.inf])
_NO_CLIP.flags.writeable = False

#: Whether an edit that reaches one row computes its transform in Python floats (:func:`_transform_one`)
#: instead of the level loop's numpy calls on one-row columns (the same bits; False: the loop, for tests).
ONE_ROW_TRANSFORM = True


def _transform_one(r: int, prev: Derived, num: np.ndarray, parent: np.ndarray, types: np.ndarray, depth: np.ndarray,
                   cols: Dict[str, np.ndarray]) -> None:
    """The level loop of :func:`_derive_rows` for one reached row ``r`` whose parent was not reached:
    its page transform and inherited flags from its record (``num[r]``) and its parent's previous values,
    written at position 0 of ``cols``. The same operations in the same order on the same float64
    values as the loop (the rotation's cosine and sine from the same numpy functions), so the same bits."""
    x, y, _, _, rot, op, hid, lock = num[r, :8].tolist()
    if depth[r] == 0:
        px, py, prot, opacity = x, y, rot, op
        hidden, locked, frame, group = hid != 0, lock != 0, -1, -1
    else:
        p = int(parent[r])
        pr = prev.rotation[p:p + 1]
        if pr[0] == 0.0:
            c, sn = 1.0, 0.0
        else:
            c, sn = float(np.cos(pr)[0]), float(np.sin(pr)[0])
        ppx, ppy, prf = float(prev.px[p]), float(prev.py[p]), float(pr[0])
        px = ppx + c * x - sn * y
        py = ppy + sn * x + c * y
        prot = prf + rot
        opacity = op * float(prev.opacity[p])
        hidden = hid != 0 or bool(prev.hidden[p])
        locked = lock != 0 or bool(prev.locked[p])
        tp = types[p]
        frame = p if tp == "frame" else int(prev.frame[p])
        group = p if tp == "group" else int(prev.group[p])
    cols["px"][0], cols["py"][0], cols["rotation"][0], cols["opacity"][0] = px, py, prot, opacity
    cols["hidden"][0], cols["locked"][0], cols["frame"][0], cols["group"][0] = hidden, locked, frame, group


def _subtree_sizes(d: Derived) -> np.ndarray:
    """Rows in each subtree (a row and its descendants), deepest level first."""
    n = len(d.depth)  # its row count (its id list may have been extended in place since)
    size = np.ones(n, dtype=np.int64)
    for lvl in reversed(d.levels[1:]):
        size += np.bincount(d.parent[lvl], weights=size[lvl], minlength=n).astype(np.int64)
    return size


#: Most rows (*ours*) re-derived one by one after an edit, as a share of the canvas; beyond, all rows are.
_ROWS_SHARE = 8


class _Spoiled(Exception):
    """Raised by :func:`_derive_rows` written into the previous derivation's own columns when it
    gives up after writing some of them: the previous derivation cannot be reused."""


def _derive_rows(raw: Raw, prev: Derived, bindings: Mapping[str, Binding],
                 local_cache: Dict[str, Tuple[Node, Tuple[float, float, float, float]]],
                 arrow_cache: Optional[Dict[str, Any]], private: bool = False,
                 rebound: Optional[AbstractSet[str]] = None, on_prev: bool = False,
                 same_bindings: bool = False) -> Optional[Derived]:
    """:func:`derive` after records were replaced in place (same tree): only the rows they reach.

    Those rows are the replaced ones and their descendants (records and page
    transforms, frame clips), the arrows resolved against any of them, and the
    groups holding any of these (their boxes are unions). Every other row keeps
    ``prev``'s values, and the reached rows go through the same vectorized formulas
    as a full derivation, so the result is the same to the bit. None when the edit
    is too large for this to pay or touches what it does not handle (bindings
    replaced, an arrow starting or stopping being resolved, broken geometry).
    With ``private``, ``prev``'s columns belong to this call alone and are written in
    place instead of copied. ``rebound`` as for :func:`derive` (their rows among the
    replaced ones). ``on_prev`` (with ``private``): those columns are ``prev``'s own, which the
    caller derives from again when this returns None: the values written before the arrow
    pass declines are put back, and a refusal after it raises :class:`_Spoiled`.
    ``same_bindings`` as for :func:`derive`.
    """
    from spatialobs.canvas.document.arrows import resolve_rows

    n = len(raw.ids)
    changed = unique(np.asarray(raw.changed_rows, dtype=np.int64))
    if prev.n_bad or not n or not len(changed):
        return None
    if prev.size is None:
        prev.size = _subtree_sizes(prev)
    size, order, paint, depth, parent, types = prev.size, prev.order, prev.paint, prev.depth, raw.parent, raw.types
    if int(size[changed].sum()) > max(64, n // _ROWS_SHARE):
        return None
    dirty_rows = unique(np.concatenate([paint[order[r]:order[r] + size[r]] for r in changed.tolist()]))
    dirty: Optional[np.ndarray] = None  # (the mask of dirty_rows: the arrow pass reads it for rebound connectors only)
    if rebound:
        dirty = np.zeros(n, dtype=bool)
        dirty[dirty_rows] = True
    nodes = raw.nodes
    num = raw.num

    # records and page transforms, level by level over the reached rows: computed into short
    # columns (position k is dirty_rows[k]); a column is copied only when some value differs
    # (looked up in the sorted ``dirty_rows``: a page-length map costs a write of the page, ~0.1 ms at 10^5)

    def k_of(q: np.ndarray) -> np.ndarray:
        """Positions of rows ``q`` in ``dirty_rows``, -1 for a row not among them."""
        at = np.searchsorted(dirty_rows, q)
        hit = at < len(dirty_rows)
        hit[hit] = dirty_rows[at[hit]] == q[hit]
        return np.where(hit, at, -1)

    cols = {name: getattr(prev, name)[dirty_rows].copy()
            for name in ("px", "py", "rotation", "opacity", "hidden", "locked", "frame", "group")}
    clip = prev.clip
    new_clip = clip[dirty_rows].copy()

    def up(name: str, p: np.ndarray, kp: np.ndarray, m: np.ndarray, any_dirty: bool) -> np.ndarray:
        """Values of parents ``p``: the new ones for dirty parents (``kp`` their positions, ``m``
        where ``kp >= 0``), the previous ones otherwise."""
        out = getattr(prev, name)[p]
        if any_dirty:
            out[m] = cols[name][kp[m]]
        return out

    # one row reached (a leaf moved or restyled): its transform and clip from its parent's, without the levels
    one_row = len(dirty_rows) == 1 and ONE_ROW_TRANSFORM
    levels: List[np.ndarray] = []
    if one_row:
        _transform_one(int(dirty_rows[0]), prev, num, parent, types, depth, cols)
    else:
        by_depth = dirty_rows[np.argsort(depth[dirty_rows], kind="stable")]
        levels = list(_pieces(by_depth, np.flatnonzero(np.diff(depth[by_depth])) + 1))
    for lvl in levels:
        nl = num[lvl]
        k = k_of(lvl)
        if depth[lvl[0]] == 0:
            cols["px"][k] = nl[:, 0]
            cols["py"][k] = nl[:, 1]
            cols["rotation"][k] = nl[:, 4]
            cols["opacity"][k] = nl[:, 5]
            cols["hidden"][k] = nl[:, 6] != 0
            cols["locked"][k] = nl[:, 7] != 0
            cols["frame"][k] = -1
            cols["group"][k] = -1
            continue
        p = parent[lvl]
        kp = k_of(p)
        m = kp >= 0
        par = (p, kp, m, bool(m.any()))
        pr = up("rotation", *par)
        c = np.cos(pr)
        s = np.sin(pr)
        z = pr == 0.0
        c[z] = 1.0
        s[z] = 0.0
        cols["px"][k] = up("px", *par) + c * nl[:, 0] - s * nl[:, 1]
        cols["py"][k] = up("py", *par) + s * nl[:, 0] + c * nl[:, 1]
        cols["rotation"][k] = pr + nl[:, 4]
        op = nl[:, 5].copy()
        op *= up("opacity", *par)
        cols["opacity"][k] = op
        cols["hidden"][k] = (nl[:, 6] != 0) | up("hidden", *par)
        cols["locked"][k] = (nl[:, 7] != 0) | up("locked", *par)
        tp = types[p]
        cols["frame"][k] = np.where(tp == "frame", p, up("frame", *par))
        cols["group"][k] = np.where(tp == "group", p, up("group", *par))
    full: Dict[str, np.ndarray] = {}
    undo: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (column, rows, values before) written in ``prev``

    def mine(name: str) -> bool:
        """Whether column ``name`` of ``prev`` may be written in place."""
        return private and (not on_prev or name in prev.owned)
    for name, v in cols.items():
        old = getattr(prev, name)
        was = old[dirty_rows]
        if _same_bits(v, was):
            full[name] = old
        elif mine(name):
            if on_prev:
                undo.append((old, dirty_rows, was))
            old[dirty_rows] = v
            full[name] = old
        else:
            full[name] = old.copy()
            full[name][dirty_rows] = v
    px, py, prot = full["px"], full["py"], full["rotation"]

    # local boxes of the replaced records (stored points through the canvas's cache)
    plan = prev.arrow_plan
    point_boxes = plan.point_boxes if plan is not None else None
    new_local = prev.local[changed].copy()
    for j, (r, pt) in enumerate(zip(changed.tolist(), _point_types(types[changed]).tolist())):
        nd = nodes[r]
        if pt:
            hit = local_cache.get(nd.id)
            if hit is None or hit[0] is not nd:
                hit = (nd, local_box(nd.type, nd.props, nd.w, nd.h))
                local_cache[nd.id] = hit
            new_local[j] = hit[1]
        elif types[r] != "group":  # a group's box is its members' (below)
            new_local[j] = (0.0, 0.0, nd.w, nd.h)
    local = prev.local
    if not _same_bits(new_local, local[changed]):
        if not mine("local"):
            local = local.copy()
        elif on_prev:
            undo.append((local, changed, local[changed]))
        local[changed] = new_local
        if point_boxes is not None:
            at = np.flatnonzero(np.isin(plan.rows, changed))
            if len(at):
                point_boxes = point_boxes.copy()  # the plan keeps the boxes before resolution
                point_boxes[at] = local[plan.rows[at]]
    d = Derived(raw.ids, raw.row, types, parent, prev.page, prev.page_ids, depth, local, px, py, prot,
                prev.bounds if mine("bounds") else prev.bounds.copy(),
                prev.visible if mine("visible") else prev.visible.copy(),
                full["frame"], full["group"], full["opacity"], full["hidden"],
                full["locked"], prev.order, prev.paint, prev.page_start, prev.levels)
    d.size = size
    # the plan's list and maps are written in place only when ``prev`` holds them alone and is used up
    own_plan = private and _PLAN in prev.owned
    got = resolve_rows(d, nodes, bindings, arrow_cache, plan, dirty, dirty_rows, point_boxes,
                       own_local=mine("local") or d.local is not prev.local, rebound=rebound,
                       same_bindings=same_bindings, own_plan=own_plan)
    if got is None:  # (it declines before writing any arrow, or the plan)
        for col, at, was in undo:
            col[at] = was
        return None
    # ``prev``'s plan written: a refusal below cannot hand ``prev`` back to the caller
    plan_written = own_plan and bool(rebound) and plan is not None
    resolved = np.asarray(got, dtype=np.int64)
    local = d.local

    # groups whose box is a union over a reached row: upwards through group parents
    grp: List[int] = []
    seen: Set[int] = set()
    start = np.concatenate([changed, resolved])
    frontier = start.tolist()
    for r in changed[types[changed] == "group"].tolist():
        if r not in seen:
            seen.add(r)
            grp.append(r)
    while frontier:
        nxt = []
        for r in frontier:
            q = int(parent[r])
            if q >= 0 and types[q] == "group" and q not in seen:
                seen.add(q)
                grp.append(q)
                nxt.append(q)
        frontier = nxt
    groups = np.asarray(sorted(grp, key=lambda g: -int(depth[g])), dtype=np.int64)
    if len(groups) and local is prev.local and not mine("local"):
        local = d.local = local.copy()
    x, y, rot_l = num[:, 0], num[:, 1], num[:, 4]
    for g in groups.tolist():
        seg = paint[order[g] + 1:order[g] + size[g]]
        kids = seg[parent[seg] == g]
        if (types[kids] == "group").any() and (local[kids[types[kids] == "group"]] == 0.0).all(axis=1).any():
            if plan_written or (on_prev and (undo or local is prev.local)):
                raise _Spoiled
            return None  # a possibly empty group inside: the full pass leaves it out of the union
        child = local[kids]
        ok = np.isfinite(child).all(axis=1)
        kids, child = kids[ok], child[ok]
        if not len(kids):
            local[g] = 0.0
            continue
        box = _aabb(child, x[kids], y[kids], rot_l[kids])
        pts = _point_types(types[kids])
        if pts.any():
            box = _tight_boxes(box, kids, nodes, pts, child, x[kids], y[kids], rot_l[kids])
        box = _outline_boxes(box, kids, types, nodes, child, x[kids], y[kids], rot_l[kids])
        local[g] = (box[:, 0].min(), box[:, 1].min(), box[:, 2].max(), box[:, 3].max())

    # page bounds of every reached row
    rows = unique(np.concatenate([dirty_rows, resolved, groups]))
    lb = local[rows]
    box = _aabb(lb, px[rows], py[rows], prot[rows])
    box = _tight_boxes(box, rows, nodes, _point_types(types[rows]), lb, px[rows], py[rows], prot[rows])
    box = _outline_boxes(box, rows, types, nodes, lb, px[rows], py[rows], prot[rows])
    d.bounds[rows] = box
    _turned_arrow_bounds(d, nodes, rows)
    # groups bounded by their members' page bounds (a turned group, or one holding such a group)
    need = prev.group_need
    reached_groups = rows[types[rows] == "group"]
    if len(reached_groups):
        reached_groups = reached_groups[np.argsort(-depth[reached_groups], kind="stable")]
        turned = _turned(prot[reached_groups])
        if need is not None or turned.any():
            need = need.copy() if need is not None else np.zeros(n, dtype=bool)
            for g, tg in zip(reached_groups.tolist(), turned.tolist()):
                seg = paint[order[g] + 1:order[g] + size[g]]
                kids = seg[parent[seg] == g]
                need[g] = tg or bool(need[kids].any())
                if need[g]:
                    b = d.bounds[kids]
                    b = b[np.isfinite(b).all(axis=1)]
                    if len(b):
                        d.bounds[g] = (b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max())
            if not need.any():
                need = None
    d.group_need = need
    bb = d.bounds[rows]
    bad = ~(np.abs(bb) <= MAX_DERIVED).all(axis=1)
    if bad.any():
        if plan_written or (on_prev and (undo or d.local is prev.local or d.bounds is prev.bounds)):
            raise _Spoiled
        return None

    # frame clips of the rows below a replaced record, and visible bounds of every reached row
    if one_row:  # its parent's clip, met with the parent frame's box
        r = int(dirty_rows[0])
        if depth[r] == 0:
            new_clip[0] = (-np.inf, -np.inf, np.inf, np.inf)
        else:
            p = int(parent[r])
            cp1 = clip[p]
            fb1 = d.bounds[p] if types[p] == "frame" else _NO_CLIP
            np.maximum(cp1[:2], fb1[:2], out=new_clip[0, :2])
            np.minimum(cp1[2:], fb1[2:], out=new_clip[0, 2:])
    for lvl in levels:
        if depth[lvl[0]] == 0:
            new_clip[k_of(lvl)] = (-np.inf, -np.inf, np.inf, np.inf)  # a root (one moved onto the page too)
            continue
        p = parent[lvl]
        kp = k_of(p)
        cp = clip[p]
        m = kp >= 0
        if m.any():
            cp[m] = new_clip[kp[m]]
        fb = np.where((types[p] == "frame")[:, None], d.bounds[p], (-np.inf, -np.inf, np.inf, np.inf))
        k = k_of(lvl)
        new_clip[k, 0] = np.maximum(cp[:, 0], fb[:, 0])
        new_clip[k, 1] = np.maximum(cp[:, 1], fb[:, 1])
        new_clip[k, 2] = np.minimum(cp[:, 2], fb[:, 2])
        new_clip[k, 3] = np.minimum(cp[:, 3], fb[:, 3])
    if not _same_bits(new_clip, clip[dirty_rows]):
        if not mine("clip"):
            clip = clip.copy()
        clip[dirty_rows] = new_clip
    d.clip = clip
    cr = clip[rows]
    vis = np.empty((len(rows), 4))
    vis[:, :2] = np.maximum(bb[:, :2], cr[:, :2])
    vis[:, 2:] = np.minimum(bb[:, 2:], cr[:, 2:])
    gone = (vis[:, 0] > vis[:, 2]) | (vis[:, 1] > vis[:, 3])
    vis[gone] = np.nan
    d.visible[rows] = vis
    d.serial = next(_SERIALS)
    d.base = prev.serial
    d.record_rows = changed
    d.reached = rows
    # the columns only this derivation holds: those copied here, and ``prev``'s own when it is used up
    d.owned = frozenset(name for name in _OWNABLE if getattr(d, name) is not getattr(prev, name))
    if private:
        d.owned |= prev.owned  # (the plan's among them when ``own_plan``)
    new = d.arrow_plan
    if plan is not None and new is not None and new.bindings is not plan.bindings and \
            new.by_arrow is not plan.by_arrow and new.bound_terms is not plan.bound_terms:
        d.owned |= {_PLAN}  # copied here: only this derivation holds them
    raw.changed_rows = None
    return d


#: Most rows (*ours*) appended in one edit that are placed one by one; beyond, the canvas is derived afresh.
_MAX_APPENDED = 64


#: Most runs (*ours*) of inserted or removed positions that :func:`_paint_inserted`,
#: :func:`_positions_shifted` and :func:`_rows_renumbered` handle with a pass per run (slices, or a compare and an
#: add); beyond, the general gather or scatter.
_FEW_RUNS = 8


def _runs_of(rows: np.ndarray) -> List[Tuple[int, int]]:
    """``rows`` (increasing, distinct integers) as runs ``[a, b)`` of consecutive values."""
    if not len(rows):
        return []
    cut = np.flatnonzero(np.diff(rows) != 1)
    starts = np.concatenate([rows[:1], rows[cut + 1]]).tolist()
    ends = (np.concatenate([rows[cut], rows[-1:]]) + 1).tolist()
    return list(zip(starts, ends))


def _paint_inserted(paint0: np.ndarray, new_at: np.ndarray, first_new: int) -> np.ndarray:
    """The paint order with new rows ``first_new, first_new + 1, ...`` at positions ``new_at`` (distinct)
    and the old rows, in their order, at the others: ``paint[new_at] = arange(first_new, ...)``,
    ``paint[~is_new] = paint0``, by slices."""
    n = len(paint0) + len(new_at)
    paint = np.empty(n, dtype=np.int64)
    src = dst = 0
    for a, r in sorted(zip(new_at.tolist(), range(first_new, first_new + len(new_at)))):
        paint[dst:a] = paint0[src:src + a - dst]
        src += a - dst
        paint[a] = r
        dst = a + 1
    paint[dst:] = paint0[src:]
    return paint


def _plus_steps(pos: np.ndarray, steps: List[Tuple[int, int]], out: Optional[np.ndarray] = None) -> np.ndarray:
    """``pos`` plus ``m`` for each step ``(t, m)`` whose ``t`` it reaches (``pos >= t``), into ``out``
    (an int64 array of ``pos``'s length; a new one when None). The boolean steps are added as they
    are (``np.add(..., where=)`` is slower)."""
    if out is None:
        out = np.empty(len(pos), dtype=np.int64)
    if not steps:
        out[:] = pos
        return out
    t, m = steps[0]
    if m == 1:
        np.add(pos, pos >= t, out=out)
    else:
        np.multiply(pos >= t, m, out=out)
        out += pos
    for t, m in steps[1:]:
        if m == 1:
            out += pos >= t
        else:
            out += (pos >= t).astype(np.int64) * m
    return out


def _positions_shifted(pos: np.ndarray, inserted: np.ndarray, out: Optional[np.ndarray] = None) -> Optional[np.ndarray]:
    """The positions ``pos`` after new entries were inserted at final positions ``inserted``
    (distinct): each ``q`` becomes ``q + #{j : q >= a_j - j}`` over the sorted ``a``; written into
    ``out`` (a new array when None). None beyond :data:`_FEW_RUNS` runs of inserted positions
    (``out`` untouched)."""
    runs = _runs_of(np.sort(inserted))
    if len(runs) > _FEW_RUNS:
        return None
    # a_j - j is equal along a run of consecutive inserted positions (and grows from run to run):
    # one step per run, its first position less the entries inserted before it
    steps: List[Tuple[int, int]] = []
    before = 0
    for a, b in runs:
        steps.append((a - before, b - a))
        before += b - a
    return _plus_steps(pos, steps, out)


def _rows_renumbered(n: int, gone: np.ndarray) -> np.ndarray:
    """The new number of each of ``n`` rows after the rows ``gone`` (increasing) are removed, -1 for
    those: ``cumsum(kept) - 1`` with -1 at ``gone``, by a pass per run of removed rows when they
    form at most :data:`_FEW_RUNS`."""
    runs = _runs_of(gone)
    if len(runs) > _FEW_RUNS:
        kept = np.ones(n, dtype=bool)
        kept[gone] = False
        newpos = np.cumsum(kept) - 1
        newpos[gone] = -1
        return newpos
    newpos = np.arange(n, dtype=np.int64)
    for a, b in runs:
        newpos[b:] -= b - a
    newpos[gone] = -1
    return newpos


def _positions_removed(pos: np.ndarray, removed: np.ndarray) -> Optional[np.ndarray]:
    """The positions ``pos`` (none of them removed; a new array) after the positions ``removed``
    (increasing) are taken out: each ``q`` becomes ``q - #{r in removed : r < q}``; None beyond
    :data:`_FEW_RUNS` runs of removed positions."""
    runs = _runs_of(removed)
    if len(runs) > _FEW_RUNS:
        return None
    return _plus_steps(pos, [(b, a - b) for a, b in runs])


def _pad(a: np.ndarray, k: int, fill: Any) -> np.ndarray:
    """``a`` with ``k`` rows of ``fill`` appended."""
    return np.concatenate([a, np.full((k,) + a.shape[1:], fill, dtype=a.dtype)])


def _spare(n: int) -> int:
    """Rows (*ours*) a column built for an append keeps free past its length, for the next appends."""
    return max(64, n >> 7)


def _buffer(a: np.ndarray) -> Optional[np.ndarray]:
    """The array whose first rows ``a`` is (both C-contiguous, same dtype and row shape), else None."""
    b = a.base
    if (not isinstance(b, np.ndarray) or b.dtype != a.dtype or b.shape[1:] != a.shape[1:]
            or not (a.flags.c_contiguous and b.flags.c_contiguous) or b.ctypes.data != a.ctypes.data):
        return None
    return b


def _grown(a: np.ndarray, k: int, fill: Any, own: bool) -> Tuple[np.ndarray, bool]:
    """``a`` with ``k`` rows of ``fill`` appended (the same values as :func:`_pad`), and whether
    the result shares ``a``'s memory. With ``own`` (``a`` is written by no one else and read again
    by no one) the rows go into the spare rows past ``a``'s end when its buffer has them; otherwise
    into a new buffer that keeps :func:`_spare` rows free (never part of the column)."""
    n = len(a)
    b = _buffer(a) if own else None
    shared = b is not None and len(b) >= n + k
    if not shared:
        b = np.empty((n + k + _spare(n),) + a.shape[1:], dtype=a.dtype)
        b[:n] = a
    assert b is not None
    out = b[:n + k]
    out[n:] = fill
    return out, shared


def _compressed(a: np.ndarray, keep: np.ndarray, first: int, own: bool) -> Tuple[np.ndarray, bool]:
    """``a[keep]`` (see :func:`_kept`; the rows before ``first`` all kept), and whether rows of ``a``
    were moved to make it. With ``own`` (as for :func:`_grown`) the kept rows from ``first`` on
    move up within ``a``'s memory and the result is its first rows (a suffix removed moves none);
    otherwise a new array."""
    if not own:
        return _kept(a, keep, first), False
    rest = keep[first:]
    m = first + int(np.count_nonzero(rest))
    if not rest[:m - first].all() or rest[m - first:].any():  # (the kept rows are not already in place)
        a[first:m] = np.compress(rest, a[first:], axis=0)
        return a[:m], True
    return a[:m], False


def _sibling_count(raw: Raw, sibs: List[int], key: Tuple[str, str]) -> int:
    """How many of ``sibs`` (rows in paint order, so sorted by index then id) sort before ``key``."""
    lo, hi = 0, len(sibs)
    index, ids = raw.index, raw.ids
    while lo < hi:
        mid = (lo + hi) // 2
        r = sibs[mid]
        if (index[r], ids[r]) < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _derive_appended(raw: Raw, prev: Derived, page_rank: Mapping[str, int], bindings: Mapping[str, Binding],
                     local_cache: Dict[str, Tuple[Node, Tuple[float, float, float, float]]],
                     arrow_cache: Optional[Dict[str, Any]],
                     rebound: Optional[AbstractSet[str]] = None, same_bindings: bool = False,
                     in_place: bool = False) -> Optional[Derived]:
    """:func:`derive` after nodes were appended (and records replaced in place) with the previous rows' tree unchanged.

    The tree columns (depth, levels, paint order, subtree sizes) take the new rows where
    the full pass would put them: a new row is painted after its preceding sibling's
    subtree (siblings sorted by index, then id), or right after its parent. The
    previous columns get placeholder rows for the new ones, and :func:`_derive_rows`
    derives the new rows and the replaced ones with the same formulas as a full pass.
    With ``in_place`` (see :func:`derive`), the columns ``prev`` owns take the new rows in
    their spare rows when they have them (see :func:`_grown`). None when it does not apply
    (see :func:`_derive_rows`).
    """
    n0, n = len(prev.depth), len(raw.ids)  # prev's id list may be raw's, extended in place
    k = n - n0
    if not 0 < k <= _MAX_APPENDED:
        return None
    parent = raw.parent
    size = prev.size if prev.size is not None else _subtree_sizes(prev)
    size = _pad(size, k, 1)
    depth = _pad(prev.depth, k, 0)
    page = _pad(prev.page, k, 0)
    paint0, order0 = prev.paint, prev.order
    page_start = prev.page_start.copy()
    # each new row goes into the paint order of the rows before it: one insertion after another
    # (as np.insert would make them), kept as positions and applied to the columns once at the end
    ats: List[int] = []  # position of each new row when it was inserted

    def now(x: int) -> int:
        """Position of row ``x`` in the paint order after the insertions so far."""
        if x < n0:
            q, later = int(order0[x]), ats
        else:
            q, later = ats[x - n0], ats[x - n0 + 1:]
        for a in later:
            if q >= a:
                q += 1
        return q

    def span(a: int, b: int) -> np.ndarray:
        """The rows at positions ``a`` to ``b - 1`` after the insertions so far."""
        news = sorted((q, n0 + j) for j in range(len(ats)) if a <= (q := now(n0 + j)) < b)
        below = sum(1 for j in range(len(ats)) if now(n0 + j) < a)
        olds = paint0[a - below:b - below - len(news)]
        if not news:
            return olds
        return np.insert(olds, [q - a - i for i, (q, _) in enumerate(news)], [r for _, r in news])

    for r in range(n0, n):
        p = int(parent[r])
        if p >= r:
            return None
        key = (raw.index[r], raw.ids[r])
        if p >= 0:
            depth[r] = depth[p] + 1
            page[r] = page[p]
            op = now(p)
            seg = span(op + 1, op + int(size[p]))
            at = op + 1
        else:
            page[r] = page_rank.get(raw.parents[r], 0)
            seg = span(int(page_start[page[r]]), int(page_start[page[r] + 1]))
            at = int(page_start[page[r]])
        sibs = seg[parent[seg] == p].tolist()
        before = _sibling_count(raw, sibs, key)
        if before:
            s = sibs[before - 1]
            at = now(s) + int(size[s])
        ats.append(at)
        while p >= 0:
            size[p] += 1
            p = int(parent[p])
        page_start[page[r] + 1:] += 1
    new_at = np.asarray([now(r) for r in range(n0, n)], dtype=np.int64)
    paint = _paint_inserted(paint0, new_at, n0)
    # each old row's position moved past the new ones before it (the inverse of ``paint``)
    order = np.empty(n, dtype=np.int64)
    if _positions_shifted(order0[:n0], new_at, order[:n0]) is None:
        order[paint] = np.arange(n)
    else:
        order[n0:] = new_at
    levels = list(prev.levels)
    new_depth = depth[n0:]
    for dr in np.unique(new_depth).tolist():
        levels.extend(np.zeros(0, dtype=np.int64) for _ in range(dr + 1 - len(levels)))
        levels[dr] = np.concatenate([levels[dr], n0 + np.flatnonzero(new_depth == dr)])
    shares = False  # whether a column shares ``prev``'s rows

    def grown(name: str, fill: Any) -> np.ndarray:
        nonlocal shares
        col, shared = _grown(getattr(prev, name), k, fill, in_place and name in prev.owned)
        shares |= shared
        return col
    g = Derived(raw.ids, raw.row, raw.types, parent, page, prev.page_ids, depth, grown("local", 0.0),
                grown("px", 0.0), grown("py", 0.0), grown("rotation", 0.0), grown("bounds", 0.0),
                grown("visible", 0.0), grown("frame", -1), grown("group", -1),
                grown("opacity", 1.0), grown("hidden", False), grown("locked", False), order, paint,
                page_start, levels)
    g.arrow_plan, g.serial, g.size = prev.arrow_plan, prev.serial, size
    g.clip = grown("clip", (-np.inf, -np.inf, np.inf, np.inf))
    # every one padded here, or ``prev``'s own (``prev`` used up); where one shares ``prev``'s rows the
    # pass puts back what it wrote when it declines (``prev`` is derived from again) or raises _Spoiled
    g.owned = frozenset(_OWNABLE)
    if in_place and _PLAN in prev.owned:  # ``g`` shares ``prev``'s plan, and ``prev`` is used up
        g.owned |= {_PLAN}
    g.group_need = _pad(prev.group_need, k, False) if prev.group_need is not None else None
    d = _derive_rows(raw, g, bindings, local_cache, arrow_cache, private=True, rebound=rebound, on_prev=shares,
                     same_bindings=same_bindings)
    if d is None:
        return None
    d.base = -1
    d.renumbered = (prev.serial, np.arange(n0, dtype=np.int64))
    return d


def _renumbered(by_row: Dict[int, Any], newpos: np.ndarray, first: int,
                keys: Optional[np.ndarray] = None, in_place: bool = False) -> Dict[int, Any]:
    """``by_row`` (keyed by row) with its keys renumbered by ``newpos`` (-1: dropped), in the same
    order: ``{newpos[r]: v for r, v in by_row.items() if newpos[r] >= 0}``. Rows before ``first``
    keep their numbers; when the keys from ``first`` on are the last ones of ``by_row`` (rows
    appended since and removed again, the usual case), only those are renumbered, on a clone
    (none: ``by_row`` itself is returned, as the arrow plans share their maps), or with
    ``in_place`` (no one reads ``by_row`` again) in ``by_row`` itself. ``keys``: the keys of
    ``by_row`` in its order, when the caller holds them (an arrow plan's rows)."""
    if not by_row:
        return {}
    tail = _tail_keys(by_row, first, keys, len(newpos))
    if tail is None:  # renumbered keys among kept ones: build it again
        nl = newpos.tolist()
        return {q: v for r, v in by_row.items() if (q := nl[r]) >= 0}
    if not len(tail):  # nothing renumbered: the map is shared (plans' maps are written in place only when owned)
        return by_row
    out = by_row if in_place else by_row.copy()
    values = [out.pop(r) for r in tail.tolist()]
    for q, v in zip(newpos[tail].tolist(), values):
        if q >= 0:
            out[q] = v
    return out


#: Most rows (*ours*) from the first renumbered one on that :func:`_tail_keys` looks up one by one
#: instead of reading every key of the map.
_FEW_TAIL_ROWS = 256


def _tail_keys(by_row: Dict[int, Any], first: int, keys: Optional[np.ndarray] = None,
               rows: int = -1) -> Optional[np.ndarray]:
    """The keys of ``by_row`` from ``first`` on, in its order, when they are its last ones (else None).

    ``rows``: the keys are below it; when few rows lie from ``first`` to it (rows appended and
    removed again), the keys among them are counted by lookup and compared with the run of keys
    from ``first`` on at the map's end, without reading the map's other keys."""
    if keys is None and 0 <= rows - first <= _FEW_TAIL_ROWS:
        total = sum(1 for r in range(first, rows) if r in by_row)
        tail: List[int] = []
        if total:
            for r in reversed(by_row):
                if r < first or len(tail) == total:
                    break
                tail.append(r)
        return np.asarray(tail[::-1], dtype=np.int64) if len(tail) == total else None
    if keys is None:
        keys = np.fromiter(by_row, np.int64, len(by_row))
    hi = np.flatnonzero(keys >= first)
    if len(hi) and hi[0] != len(keys) - len(hi):
        return None
    return keys[hi]


def _derive_removed(raw: Raw, prev: Derived, kept: np.ndarray, bindings: Mapping[str, Binding],
                    local_cache: Dict[str, Tuple[Node, Tuple[float, float, float, float]]],
                    arrow_cache: Optional[Dict[str, Any]],
                    rebound: Optional[AbstractSet[str]] = None, same_bindings: bool = False,
                    in_place: bool = False) -> Optional[Derived]:
    """:func:`derive` after whole subtrees were removed (and records replaced in place).

    The previous columns are carried to the remaining rows (``kept``), and
    :func:`_derive_rows` derives the replaced rows and the groups that held a removed
    row again. Bindings must be unchanged unless ``rebound`` names the connectors
    whose bindings were written (see :func:`derive`; ``same_bindings`` as there). With
    ``in_place`` (see :func:`derive`), the columns ``prev`` owns are compressed in their
    own memory (see :func:`_compressed`). None when it does not apply.
    """
    plan = prev.arrow_plan
    if plan is not None and not rebound and not same_bindings and (len(bindings) != len(plan.bindings)
                             or not all(map(operator.is_, bindings.values(), plan.bindings))):
        return None
    n = len(raw.ids)
    gone = np.flatnonzero(~kept)
    newpos = _rows_renumbered(len(kept), gone)
    first = int(gone[0]) if len(gone) else n  # the rows before it keep their numbers
    psize = prev.size if prev.size is not None else _subtree_sizes(prev)
    size = _kept(psize, kept, first)
    gp = prev.parent[gone]
    roots = gone[(gp < 0) | kept[np.maximum(gp, 0)]]
    held: List[int] = []
    for r in roots.tolist():
        p = int(prev.parent[r])
        if p >= 0 and prev.types[p] == "group":
            held.append(int(newpos[p]))
        k = int(psize[r])
        while p >= 0:  # (an ancestor of a kept row is kept)
            size[newpos[p]] -= k
            p = int(prev.parent[p])

    def remap(a: np.ndarray) -> np.ndarray:
        """``a`` (kept rows, or -1) renumbered in place: only the rows from ``first`` on move."""
        hi = np.flatnonzero(a >= first)
        a[hi] = newpos[a[hi]]
        return a

    # the paint order without the removed rows' positions, renumbered
    at = np.sort(prev.order[gone])
    paint = remap(np.delete(prev.paint, at))
    order = _positions_removed(_kept(prev.order, kept, first), at)  # (the inverse of ``paint``)
    if order is None:
        order = np.empty(n, dtype=np.int64)
        order[paint] = np.arange(n)
    page = _kept(prev.page, kept, first)
    # a page's first position less the removed rows of the pages before it (paint order is by page)
    lost = np.bincount(prev.page[gone], minlength=len(prev.page_ids)) if len(gone) else None
    page_start = (prev.page_start - np.concatenate([[0], np.cumsum(lost)]) if lost is not None
                  else prev.page_start.copy())
    # a level's rows are increasing: those before ``first`` keep their numbers
    levels = []
    for lvl in prev.levels:
        from_first = int(np.searchsorted(lvl, first))
        if from_first == len(lvl):
            levels.append(lvl)
        else:
            tail = lvl[from_first:]
            levels.append(np.concatenate([lvl[:from_first], newpos[tail[kept[tail]]]]))
    while levels and not len(levels[-1]):
        levels.pop()

    shares = spoiled = False  # whether a column shares ``prev``'s memory; whether rows of ``prev`` moved in it

    def cut(name: str) -> np.ndarray:
        nonlocal shares, spoiled
        own = in_place and name in prev.owned
        col, moved = _compressed(getattr(prev, name), kept, first, own)
        shares |= own
        spoiled |= moved
        return col
    g = Derived(raw.ids, raw.row, raw.types, raw.parent, page, prev.page_ids, _kept(prev.depth, kept, first),
                cut("local"), cut("px"), cut("py"), cut("rotation"),
                cut("bounds"), cut("visible"), remap(cut("frame")),
                remap(cut("group")), cut("opacity"), cut("hidden"),
                cut("locked"), order, paint, page_start, levels)
    g.serial, g.clip, g.size = prev.serial, cut("clip"), size
    g.owned = frozenset(_OWNABLE)  # every one compressed here, or ``prev``'s own (as in _derive_appended)
    own_plan = in_place and _PLAN in prev.owned  # ``prev``'s plan is held by it alone, and it is used up
    if own_plan:
        g.owned |= {_PLAN}
    g.group_need = _kept(prev.group_need, kept, first) if prev.group_need is not None else None
    if plan is not None:
        from spatialobs.canvas.document.arrows import _ArrowPlan

        live = kept[plan.rows]
        dep = kept[plan.dep_target] & kept[plan.dep_arrow]
        g.arrow_plan = _ArrowPlan(plan.bindings, _renumbered(plan.by_arrow, newpos, first, plan.rows, own_plan),
                                  _renumbered(plan.bound_terms, newpos, first, in_place=own_plan),
                                  newpos[plan.rows[live]], newpos[plan.dep_target[dep]], newpos[plan.dep_arrow[dep]],
                                  _kept(plan.point_boxes, live))
    changed = list(raw.remaining_changed or ()) + held
    if not changed:
        if g.arrow_plan is not None and rebound:
            # the rebound connectors were all removed (their rows would be among the changed ones)
            p = g.arrow_plan
            if own_plan:
                p.bindings[:] = bindings.values()
            else:
                g.arrow_plan = dataclasses.replace(p, bindings=list(bindings.values()))
        d = g
        d.serial = next(_SERIALS)
        d.record_rows = np.zeros(0, dtype=np.int64)
        d.reached = np.zeros(0, dtype=np.int64)
    else:
        raw.changed_rows = changed
        got = _derive_rows(raw, g, bindings, local_cache, arrow_cache, private=True, rebound=rebound,
                           on_prev=shares, same_bindings=same_bindings)
        raw.changed_rows = None
        if got is None:
            # ``prev``'s rows moved, or its plan's maps renumbered in place: it cannot be derived from again
            if spoiled or (own_plan and plan is not None):
                raise _Spoiled
            return None
        d = got
    if arrow_cache is not None:
        # (the removed ids from ``raw`` when the id list ``prev`` shares lost them in place)
        for i in raw.removed[1] if raw.removed is not None else [prev.ids[r] for r in gone.tolist()]:
            arrow_cache.pop(i, None)
    d.base = -1
    d.renumbered = (prev.serial, newpos)
    return d


#: Most rows (*ours*) moved in the tree by one edit whose subtrees are moved in paint order one by one.
_MAX_MOVED = 64

#: Fewest rows (*ours*) a canvas derives from the previous derivation after rows were added,
#: removed or moved in the tree (:func:`_derive_appended`, :func:`_derive_removed`,
#: :func:`_derive_moved`); a smaller one derives afresh. Measured, medians per derivation, from
#: the previous one / afresh: a page of cards, frames and arrows, a reparent 184 / 154 µs at 16
#: rows, 188 / 187 µs at 64, 189 / 227 µs at 128, 192 / 311 µs at 256, an add or a removal 228 /
#: 185, 244 / 219, 221 / 259 and 236 / 355 µs; shapes packed into a frame one by one
#: (``benchmarks/test_bench_ops.py``'s shelf baseline, a reparent and a move each), 191 / 180 µs
#: at 76 rows, 188 / 213 µs at 151, 191 / 305 µs at 301 and 200 / 455 µs at 601.
MIN_TREE_ROWS = 128


def _derive_moved(raw: Raw, prev: Derived, page_rank: Mapping[str, int], bindings: Mapping[str, Binding],
                  local_cache: Dict[str, Tuple[Node, Tuple[float, float, float, float]]],
                  arrow_cache: Optional[Dict[str, Any]],
                  rebound: Optional[AbstractSet[str]] = None, same_bindings: bool = False,
                  in_place: bool = False) -> Optional[Derived]:
    """:func:`derive` after records were replaced in place (same rows) and some of them moved in
    the tree: a new parent, or a new index among their siblings (a reparent, a reorder).

    Each moved subtree leaves its place in the paint order and goes where the full pass
    would put it: after its preceding sibling's subtree among its new siblings (sorted by
    index, then id), or right after its new parent; the subtree sizes of its old and new
    ancestors shrink and grow, its rows' depth and page follow the new parent. Then
    :func:`_derive_rows` derives the replaced rows (their subtrees) and the groups that held
    a moved row, with the same formulas as a full pass; with ``in_place`` (see :func:`derive`)
    it writes the columns ``prev`` owns in place. None when it does not apply (a type changed,
    a moved row inside another moved subtree or moved under one, too many).
    """
    parent, types = raw.parent, raw.types
    if raw.tree_rows is None or not 0 < len(raw.tree_rows) <= _MAX_MOVED:
        return None
    moved = unique(np.asarray(raw.tree_rows, dtype=np.int64))
    n = len(raw.ids)
    size = (prev.size if prev.size is not None else _subtree_sizes(prev)).copy()
    paint, order = prev.paint, prev.order
    # the subtrees that move, in the previous paint order
    out = np.zeros(n, dtype=bool)
    segs: List[np.ndarray] = []
    for r in moved.tolist():
        if out[r]:
            return None  # inside another moved subtree
        seg = paint[order[r]:order[r] + size[r]]
        if out[seg].any():
            return None
        out[seg] = True
        segs.append(seg)
    if out[parent[moved][parent[moved] >= 0]].any():
        return None  # moved under a moved subtree (or into its own)
    held: List[int] = []
    for r in moved.tolist():
        p = int(prev.parent[r])
        if p >= 0 and prev.types[p] == "group":
            held.append(p)
        while p >= 0:
            size[p] -= size[r]
            p = int(prev.parent[p])
    paint = paint[~out[paint]]
    depth = prev.depth.copy()
    page = prev.page.copy()
    for r, seg in zip(moved.tolist(), segs):
        order = np.empty(n, dtype=np.int64)
        order[paint] = np.arange(len(paint))
        p = int(parent[r])
        page_start = np.searchsorted(page[paint], np.arange(len(prev.page_ids) + 1))
        if p >= 0:
            new_depth, new_page = int(depth[p]) + 1, int(page[p])
            span = paint[order[p] + 1:order[p] + size[p]]
            at = int(order[p]) + 1
        else:
            new_depth, new_page = 0, page_rank.get(raw.parents[r], 0)
            span = paint[page_start[new_page]:page_start[new_page + 1]]
            at = int(page_start[new_page])
        sibs = span[parent[span] == p].tolist()
        before = _sibling_count(raw, sibs, (raw.index[r], raw.ids[r]))
        if before:
            s = sibs[before - 1]
            at = int(order[s] + size[s])
        depth[seg] += new_depth - int(depth[r])
        page[seg] = new_page
        paint = np.concatenate([paint[:at], seg, paint[at:]])
        while p >= 0:
            size[p] += size[r]
            p = int(parent[p])
    order = np.empty(n, dtype=np.int64)
    order[paint] = np.arange(n)
    page_start = np.searchsorted(page[paint], np.arange(len(prev.page_ids) + 1))
    levels = _levels_moved(prev.levels, prev.depth, depth, np.concatenate(segs))
    g = Derived(raw.ids, raw.row, types, parent, page, prev.page_ids, depth, prev.local, prev.px, prev.py,
                prev.rotation, prev.bounds, prev.visible, prev.frame, prev.group, prev.opacity, prev.hidden,
                prev.locked, order, paint, page_start, levels)
    g.arrow_plan, g.serial, g.size, g.clip, g.group_need = prev.arrow_plan, prev.serial, size, prev.clip, prev.group_need
    g.owned = prev.owned if in_place else frozenset()
    if held:
        raw.changed_rows = list(raw.changed_rows or ()) + held
    d = _derive_rows(raw, g, bindings, local_cache, arrow_cache, private=in_place, rebound=rebound, on_prev=in_place,
                     same_bindings=same_bindings)
    if d is None:
        return None
    d.base = -1
    d.renumbered = (prev.serial, np.arange(n, dtype=np.int64))
    return d

