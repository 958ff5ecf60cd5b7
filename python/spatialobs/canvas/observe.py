"""The structured observation of one canvas page (CanvasObs, DESIGN §4).

:func:`observe` turns a page into what an agent needs at prompt time: the identity
and state of each object, its visibility against the viewport (``occluded``
replacing ``visible``/``partial`` when a higher opaque object hides it), its native
structure (parent, group, frame), native relations (``parent``, ``bound``) kept
apart from inferred ones (``inside``, ``overlaps``, ``near``, ``aligned``,
``occludes``, ``touches``, reading order), and offscreen bounds in the coordinate
frame of the agent's actions.

The relations that do not depend on the viewport (``inside``, ``overlaps``,
``touches``, and every ``near`` and ``aligned`` pair of the page) are computed by
the geometry core once per page version (the canvas's derived geometry, which
every write replaces) and shared by later observations; an observation then
costs a linear visibility pass plus work on what is in and near the view:
occlusion, reading order, keeping the pairs with one end in view, ranking, and
records for the objects that are kept.

Conventions (*ours* where DESIGN leaves a choice):

* Geometry uses frame-clipped bounds (what is drawn); an object its frames clip
  away entirely gets the flag ``clipped`` and, when its page bounds are in view,
  the label ``occluded`` with its frame as ``occludedBy``.
* Groups and connectors (``arrow``, ``line``) paint no area of their own: they
  never occlude and take no part in ``inside``/``overlaps``/``near``/``aligned``;
  connectors relate through ``bound`` and ``touches``.
* ``inside`` names the tightest visual container that is not a native ancestor;
  identical boxes are ``overlaps``, not ``inside``; ``overlaps`` excludes
  containment and native ancestry.
* ``touches``: an arrow terminal without a binding whose end point lies within
  ``touch_tol`` of a shape's edge.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import struct
import threading
import weakref
from dataclasses import dataclass, field
from itertools import repeat
from types import ModuleType
from typing import AbstractSet, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from spatialobs import geometry as G
from spatialobs._arrays import in_sorted, int64_columns, row_order, run_starts, unique, unique_first
from spatialobs.canvas.limits import compact_json, typed_errors
from spatialobs.canvas.pagetables import (ALIGNED_SHIFT_A, ALIGNED_SHIFT_B, PAIR_SHIFT, aligned_keys, aligned_rows,
                                          keys_at, kind_pairs, line_values as _line_values, move_values, pair_keys,
                                          recut_kinds, recut_lines, renumber_pairs, rows_at, run_bounds, sorted_lines,
                                          splice, splice_in_place, writable)
from spatialobs._errors import InvalidInputError, OutOfRangeError
from spatialobs.canvas.document.model import Canvas, _gather, _page_pos, _row_runs
from spatialobs.canvas.rowmaps import (_pairs_view, map_rows, put_rows, reparented, rows_differ, runs as map_runs,
                                       solid_rows)
from spatialobs.canvas.document.records import Viewport
from spatialobs.canvas.paint import (OCCLUSION_MODES, along_stroke, box_polygon, clip_convex, fills_area, local_outline,
                                     paints_interior, straight_segment_kept, stroke_and_heads, to_page)

__all__ = ["observe", "Observation", "GUIDE", "CONNECTOR_TYPES", "RELATION_TYPES", "KEPT_FOR", "BYTES_PER_TOKEN",
           "resolve_viewport"]

#: Node types that connect other nodes; they relate through ``bound`` and ``touches``.
CONNECTOR_TYPES = frozenset({"arrow", "line"})
#: Relation types in output order within one object's relations: native first.
RELATION_TYPES = ("parent", "bound", "touches", "inside", "occludes", "overlaps", "near", "aligned")
_NATIVE = frozenset({"parent", "bound"})
_TEXT_MAX = 80
#: "left+right" etc. for each bit mask of ALIGN_KINDS codes on one axis.
_KIND_NAMES = {m: "+".join(k for b, k in enumerate(G.ALIGN_KINDS) if m >> b & 1) for m in range(1, 64)}

GUIDE = (
    "How to read this observation. Coordinates are action coordinates: page minus origin, "
    "rounded; use them as they are in actions (x right, y down). "
    "viewport: the visible area {x,y,w,h}. "
    "objects: one record per object, most relevant first. layer: paint order (higher is drawn "
    "on top). flags: selected, context (named by the user), locked (cannot be edited), hidden, "
    "clipped (cut away by its frame). visibility: visible (inside the viewport), partial (crosses "
    "its edge), occluded (in view but hidden by what objects above it paint: fills, notes, frames, images, "
    "an exact copy; outlines, text, lines and hatched or translucent fills hide nothing; occludedBy covers "
    "most of it), offscreen_near, "
    "offscreen_far. parent/group/frame: native structure ids. readingOrder: rank in view, rows "
    "top to bottom, left to right. actionBounds {x,y,w,h}: upper-left corner and size, given for "
    "offscreen objects. "
    "relations: native:true are stored in the document: parent (from is a member of frame/group "
    "to) and bound (connector from is attached at terminal to to). native:false are inferred "
    "from geometry only and may be accidental: inside (from lies within to but is not its "
    "member), overlaps, near (gap) and aligned (kind: shared edge or center; both only when one "
    "end is in view), occludes (from covers "
    "to), touches (connector end lies on to's edge with no binding). Trust native over inferred. "
    "keptFor (if asked): why an object was kept. "
    "omitted: how many objects and relations were left out."
)

Num = Union[int, float]


# --------------------------------------------------------------------------- inputs
def resolve_viewport(canvas: Canvas, viewport: Any, page: str) -> Viewport:
    """The viewport to observe: the argument, else the saved camera, else the page's extent.

    ``viewport`` may be a :class:`Viewport`, a mapping with ``x, y, w, h`` or a
    sequence ``(x, y, w, h)``.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> resolve_viewport(Canvas(), (0, 0, 800, 600), "page:page")
    Viewport(x=0.0, y=0.0, w=800.0, h=600.0)
    """
    if viewport is None:
        vp = canvas.cameras.get(page)
        if vp is None:
            ext = canvas.page_extent(page)
            return Viewport.from_box(ext) if ext is not None else Viewport(0.0, 0.0, 0.0, 0.0)
        viewport = vp
    try:
        if isinstance(viewport, Viewport):
            vals = (viewport.x, viewport.y, viewport.w, viewport.h)
        elif isinstance(viewport, Mapping):
            vals = (viewport["x"], viewport["y"], viewport["w"], viewport["h"])
        elif isinstance(viewport, (str, bytes)):
            raise TypeError
        else:
            vals = tuple(viewport)
        x, y, w, h = (float(v) for v in vals)
    except (KeyError, TypeError, ValueError):
        raise InvalidInputError(f"viewport must be a Viewport, {{x, y, w, h}} or (x, y, w, h), got {viewport!r}") from None
    if not all(math.isfinite(v) for v in (x, y, w, h)) or w < 0 or h < 0:
        raise InvalidInputError(f"viewport ({x}, {y}, {w}, {h}) must be finite with w, h >= 0")
    return Viewport(x, y, w, h)


def _resolve_page(canvas: Canvas, page: Optional[str]) -> str:
    return canvas._resolve_page(page)  # the canvas's own rule: current page, else the first


def _origin(origin: Any) -> Tuple[float, float]:
    try:
        ox, oy = (float(v) for v in origin)
    except (TypeError, ValueError):
        raise InvalidInputError(f"origin must be two numbers (x, y), got {origin!r}") from None
    if not (math.isfinite(ox) and math.isfinite(oy)):
        raise InvalidInputError(f"origin must be finite, got ({ox}, {oy})")
    return ox, oy


def _limit(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InvalidInputError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _positive(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < 0:
        raise InvalidInputError(f"{name} must be finite and >= 0, got {value!r}")
    return v


def _id_rows(ids: Any, row_of: Mapping[str, int], page_pos: np.ndarray, name: str, page: str) -> np.ndarray:
    if isinstance(ids, str):
        ids = (ids,)
    try:
        ids = list(ids)
    except TypeError:
        raise InvalidInputError(f"{name} must be a sequence of node ids, got {ids!r}") from None
    out = []
    for i in ids:
        r = row_of.get(i) if isinstance(i, str) else None
        p = -1 if r is None else int(page_pos[r])
        if p < 0:
            raise InvalidInputError(f"{name} id {i!r} is not a node on page {page!r}")
        out.append(p)
    return np.asarray(out, dtype=np.int64)


# --------------------------------------------------------------------------- page arrays
@dataclass
class _Page:
    """One page in paint order, with integer structure columns (row = paint position)."""

    ids: _RowIds  # id of each row
    types: np.ndarray
    bounds: np.ndarray
    boxes: np.ndarray       # frame-clipped bounds; page bounds where clipped away
    gone: np.ndarray        # clipped away entirely
    opacity: np.ndarray
    hidden: np.ndarray
    locked: np.ndarray
    rotation: np.ndarray
    parent: np.ndarray      # row of the parent node, -1 on the page
    frame: np.ndarray
    group: np.ndarray
    size: np.ndarray        # subtree size (rows a..a+size-1 are a and its descendants)
    px: np.ndarray
    py: np.ndarray
    canvas_rows: np.ndarray
    page_pos: np.ndarray    # canvas row -> page row (-1 on other pages)


class _RowIds:
    """``ids[r]`` for page rows, read from the derivation without building the whole list."""

    __slots__ = ("_names", "_rows")

    def __init__(self, names: List[str], rows: np.ndarray) -> None:
        self._names = names
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, r: int) -> str:
        return self._names[self._rows[r]]


def _page_arrays(canvas: Canvas, page: Optional[str]) -> _Page:
    """The page's arrays, gathered from the derivation: the columns of :meth:`Canvas.columns` that
    an observation reads (not the clipped flags, the paint positions or, where the derivation
    carries subtree sizes, the depths), copied by runs of rows where the page's rows form few."""
    _, rows = canvas._page_rows(page)
    d = canvas._geometry()
    n = len(rows)
    runs = _row_runs(rows)

    def take(a: np.ndarray) -> np.ndarray:
        return _gather(a, rows, runs)
    pos, same = _page_pos(len(d.ids), rows, runs)
    parent, frame, group = take(d.parent), take(d.frame), take(d.group)
    if not same:
        parent, frame, group = pos[parent], pos[frame], pos[group]
    bounds = take(d.bounds)
    # the visible bounds, the page bounds where clipped away: written into the visible bounds
    # gathered for this call (no copy; ``np.where`` over every row took ~0.8 ms at 10^5)
    boxes = np.ascontiguousarray(take(d.visible), dtype=np.float64)
    gone = np.isnan(boxes[:, 0])
    if gone.any():
        boxes[gone] = bounds[gone]
    # subtree sizes: the derivation's where it carries them (a subtree never leaves its page),
    # else deepest level first; paint order is a preorder walk so subtrees are contiguous
    if d.size is not None and len(d.size) == len(d.ids):
        size = take(d.size)
    else:
        size = np.ones(n, dtype=np.int64)
        depth = take(d.depth)
        if n and depth.max() > 0:
            by = np.argsort(-depth, kind="stable")
            cuts = np.flatnonzero(np.diff(depth[by])) + 1
            for lvl in np.split(by, cuts):
                p = parent[lvl]
                if p[0] < 0:
                    break
                size += np.bincount(p, weights=size[lvl], minlength=n).astype(np.int64)
    return _Page(_RowIds(d.ids, rows), take(d.types), bounds, boxes, gone, take(d.opacity), take(d.hidden),
                 take(d.locked), take(d.rotation), parent, frame, group, size, take(d.px), take(d.py), rows,
                 pos[:-1])


def _is_ancestor(pg: _Page, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether row ``a`` is a native ancestor of row ``b`` (elementwise)."""
    return (a < b) & (b < a + pg.size[a])


def _related(pg: _Page, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _is_ancestor(pg, a, b) | _is_ancestor(pg, b, a)


# --------------------------------------------------------------------------- page cache
@dataclass
class _PageTables:
    """The viewport-independent relations of a page, computed once per page version.

    ``near`` and ``aligned`` hold every pair of the page; an observation keeps
    those with one end in view.
    """

    inside: Tuple[np.ndarray, np.ndarray]
    overlaps: Tuple[np.ndarray, np.ndarray]
    touches: Tuple[np.ndarray, np.ndarray, np.ndarray]
    near: Tuple[np.ndarray, np.ndarray, np.ndarray]
    aligned: Tuple[np.ndarray, np.ndarray, np.ndarray]
    #: per type, (viewport, pairs with one end in view) for the last viewport asked
    in_view_counts: Dict[str, Tuple[Tuple[float, float, float, float], int]] = field(default_factory=dict)
    #: per type, the sorted key of each pair (see :mod:`~spatialobs.canvas.pagetables`), kept by the
    #: updates that found them; absent ones are computed from the columns when an update needs them
    keys: Dict[str, np.ndarray] = field(default_factory=dict)
    #: per type (``near``, ``aligned``), the previous version's count with what changed since, for
    #: :func:`_in_view_count`: (viewport, count, pairs that left (a, b), pairs that entered (a, b),
    #: the solid rows whose box changed and their boxes before)
    in_view_since: Dict[str, Tuple[Any, ...]] = field(default_factory=dict)


@dataclass
class _Ends:
    """Arrow terminals without a binding: row, terminal code (0 start, 1 end), local and page x, y;
    sorted by row, then terminal."""

    rows: np.ndarray
    term: np.ndarray
    local: np.ndarray  # (k, 2)
    x: np.ndarray
    y: np.ndarray
    #: the page x values sorted, with the position of each (see :func:`_ends_by_x`); None: not sorted
    by_x: Optional[Tuple[np.ndarray, np.ndarray]] = None


@dataclass
class _PageState:
    """What observations of one page version share: its arrays, bindings and relation tables."""

    pg: _Page
    solid: np.ndarray
    bindings: Tuple[np.ndarray, np.ndarray, np.ndarray]
    binding_writes: int = -1  # the canvas's binding write count the bindings were read at
    index: Optional[G.BoxIndex] = None  # over ``index_boxes``, shared by the pair kernels
    index_boxes: Optional[np.ndarray] = None
    #: solid positions whose box differs from ``index_boxes`` (a later version's edits), sorted: the
    #: index answers for the others, these are tested directly
    stale: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: solid position now of each position the index was built over (-1: removed since);
    #: None when the positions are the same
    index_map: Optional[np.ndarray] = None
    tables: Dict[Tuple[float, float, float], _PageTables] = field(default_factory=dict)
    ends: Optional[_Ends] = None
    sub: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # solid rows
    sb: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))        # their boxes
    subpos: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # page row -> position in sub, -1
    bound_end: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), bool))
    n_children: int = 0  # rows with a native parent (the tree is the same for every version of a state)
    by_target: Optional[np.ndarray] = None  # binding positions sorted by target row (see bindings_by_target)
    #: the bindings' target rows in ``by_target`` order, with the target column they were read from
    #: (see targets_sorted)
    by_target_rows: Optional[Tuple[np.ndarray, np.ndarray]] = None
    #: (min_alpha, per row: paints an opaque interior 1, not 0, not read yet -1)
    paints: Optional[Tuple[float, np.ndarray]] = None
    #: straight connectors' page segments by row (None: not one segment), filled as asked
    segments: Dict[int, Optional[Tuple[float, float, float, float]]] = field(default_factory=dict)
    #: per row of ``segments``, the page rows of the connector's bound targets (None: a target not on
    #: the page); a later version carries the segment while the connector and these rows are not dirty
    seg_targets: Dict[int, Optional[Tuple[int, ...]]] = field(default_factory=dict)
    #: page outlines by row (see :func:`_page_outline`), filled as the painted occlusion asks for them;
    #: a later version carries those of the rows its edit did not reach (see :func:`_carry_occlusion`)
    outlines: Dict[int, np.ndarray] = field(default_factory=dict)
    #: the painted occluders per (viewport box, min opacity): (rows in view, occluder per row);
    #: see :func:`_painted_occluders_kept`
    occ_memo: Dict[Tuple[Any, ...], Tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    #: the previous version's ``occ_memo``, the page rows (same numbering) whose inputs may have
    #: changed since, boxes of theirs then and a paint rank per box (see :func:`_painted_occluders_again`);
    #: None when this version was not reached that way
    occ_carry: Optional[Tuple[Dict[Tuple[Any, ...], Tuple[np.ndarray, np.ndarray]], np.ndarray, np.ndarray,
                              np.ndarray]] = None
    #: the solid boxes' line values per kind (ALIGN_KINDS order), sorted, with their positions (None: a
    #: kind not sorted yet): sorted from the second version in a row reached by :func:`_advance`, a few
    #: kinds per version, then moved in place from version to version
    lines: Optional[List[Optional[Tuple[np.ndarray, np.ndarray]]]] = None
    advanced: bool = False  # reached by :func:`_advance` from the previous version
    #: :func:`_closed_hits` by query bytes while :func:`_advance` updates the tables (the index, the
    #: stale rows and the boxes do not change then; several updates ask for the changed boxes' hits)
    hits_memo: Optional[Dict[bytes, Tuple[np.ndarray, np.ndarray]]] = None
    #: the visibility label of every row (before occlusion) for one viewport box and near factor:
    #: (viewport box, near factor, labels); see :func:`_labels_kept`. A later version carries them,
    #: computed again for its rows whose box may have changed
    labels: Optional[Tuple[Tuple[float, float, float, float], float, np.ndarray]] = None

    def bindings_by_target(self) -> np.ndarray:
        """Positions of the bindings ordered by target row (stable), computed once per bindings."""
        if self.by_target is None:
            self.by_target = np.argsort(self.bindings[1], kind="stable")
        return self.by_target

    def targets_sorted(self) -> np.ndarray:
        """The bindings' target rows in :meth:`bindings_by_target` order (sorted), read once per
        target column."""
        bt = self.bindings[1]
        got = self.by_target_rows
        if got is None or got[0] is not bt:
            got = self.by_target_rows = (bt, bt[self.bindings_by_target()])
        return got[1]

    def fresh_index(self) -> G.BoxIndex:
        """An index over the current solid boxes (rebuilt when edits left it stale)."""
        if self.index is None or len(self.stale):
            self.index = G.BoxIndex(self.sb)
            self.index_boxes = self.sb
            self.stale = np.zeros(0, np.int64)
            self.index_map = None
        return self.index


class _VersionCache:
    """Page states per derivation: a write replaces the canvas's derived geometry, so the
    derivation object names the version. Entries live as long as their derivation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_derived: Dict[int, Tuple[Any, Dict[str, _PageState]]] = {}

    def pages(self, derived: Any) -> Dict[str, _PageState]:
        key = id(derived)
        with self._lock:
            hit = self._by_derived.get(key)
            if hit is not None and hit[0]() is derived:
                return hit[1]
            states: Dict[str, _PageState] = {}
            ref = weakref.ref(derived, functools.partial(self._drop, key))
            self._by_derived[key] = (ref, states)
            return states

    def _drop(self, key: int, ref: Any) -> None:
        with self._lock:
            hit = self._by_derived.get(key)
            if hit is not None and hit[0] is ref:
                del self._by_derived[key]


_CACHE = _VersionCache()


def _new_state(canvas: Canvas, page: str) -> _PageState:
    pg = _page_arrays(canvas, page)
    types = pg.types
    is_conn = np.zeros(len(types), bool)
    for t in CONNECTOR_TYPES:
        is_conn |= types == t
    solid = ~(is_conn | (types == "group"))
    st = _PageState(pg, solid, _bindings(canvas, pg), canvas._binding_writes)
    st.sub = np.flatnonzero(solid)
    st.sb = np.ascontiguousarray(pg.boxes[st.sub])
    st.subpos = np.full(len(solid), -1, np.int64)
    st.subpos[st.sub] = np.arange(len(st.sub))
    n = len(pg.ids)
    bf, _, bterm = st.bindings
    st.bound_end = np.zeros((n, 2), bool)
    st.bound_end[bf, bterm] = True
    er, et, lxy = _local_ends(canvas, pg, st.bound_end, _ends_rows(pg, st.bound_end))
    st.ends = _Ends(er, et, lxy, *_ends_xy(pg, er, lxy))
    st.n_children = int(np.count_nonzero(pg.parent >= 0))
    return st


#: Fewest rows (*ours*) of a page whose state an observation carries from the state observed
#: last (:func:`_advance`, :func:`_reshape`); a smaller page's state is built afresh. The carried
#: updates are many small array passes whose fixed costs pass those of the compiled kernels that
#: build a state on small pages. Measured (medians of 50 edits + ``observe`` + ``to_json``, the
#: shared real canvases): a move in a 6-shape file 1.40 ms carried against 0.77 ms afresh, in
#: 24-73 shapes 1.3-2.9 against 0.8-1.8 ms, in 110 shapes 2.15 against 1.82 ms; from ~160 shapes
#: on the two are within 0.1 ms of each other or the carried state is faster (2.13 against 2.71
#: ms at 162 shapes, 2.19 against 3.31 ms at 2,504).
MIN_CARRIED_ROWS = 128


def _page_state(canvas: Canvas, page: str) -> _PageState:
    """The cached state of ``page`` for the canvas's current version (built on first use).

    A version derived from the one observed last with the same tree (only geometry or
    state edited) and the same bindings starts from that version's state: its tables are
    updated where the edit reaches (see :func:`_advance`), not computed again; a version
    derived from it through row maps is carried through them (see :func:`_reshape`). A page
    of fewer than :data:`MIN_CARRIED_ROWS` rows is built afresh.
    """
    d = canvas._geometry()
    states = _CACHE.pages(d)
    st = states.get(page)
    if st is None:
        last = canvas._observed
        # the state observed last on this page, carried to this version unless the page is small
        old = last[1].get(page) if last is not None else None
        if old is not None and len(old.pg.ids) < MIN_CARRIED_ROWS:
            old = None
        if old is not None and d.base >= 0 and last[0] == d.base:
            st = _advance(canvas, old, d)
        elif old is not None and d.renumbered is not None and last[0] == d.renumbered[0]:
            st = _reshape(canvas, old, d.renumbered[1], d.record_rows, page)
        if st is None and old is not None and d.since is not None and last[0] == d.since[0]:
            # bindings written, or derivations since the last observation: carried through the row map
            st = _reshape(canvas, old, d.since[1], d.since[2], page, d.since[3])
        if st is None:
            st = _new_state(canvas, page)
        states[page] = st
    canvas._observed = (d.serial, states)
    return st


# --------------------------------------------------------------------------- connectors
def _xy(p: Any) -> Optional[Tuple[float, float]]:
    try:
        if type(p) is dict or isinstance(p, Mapping):
            if p.get("type", "point") != "point":
                return None
            x, y = float(p["x"]), float(p["y"])
        else:
            x, y = float(p[0]), float(p[1])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return (x, y) if math.isfinite(x) and math.isfinite(y) else None


def _terminal_points(node: Any) -> Tuple[Optional[Tuple[float, float]], Optional[Tuple[float, float]]]:
    """Local start and end points of a connector, when its record holds them.

    tldraw arrows keep ``start``/``end`` points; Excalidraw-style connectors a
    ``points`` list whose first and last entries are the terminals.
    """
    props = node.props
    pts = props.get("points")
    if type(pts) is list and len(pts) >= 2:
        return _xy(pts[0]), _xy(pts[-1])
    return _xy(props.get("start")), _xy(props.get("end"))


#: Terminal points per connector record (records are immutable, so an unchanged record
#: keeps its entry across page versions); entries of dead records are pruned in bulk.
_TERMINALS: Dict[int, Tuple[Any, Optional[Tuple[float, float]], Optional[Tuple[float, float]]]] = {}
#: Size of ``_TERMINALS`` beyond which dead entries are swept out.
_TERMINALS_SWEEP = [4096]


def _local_ends_py(nodes: Mapping[str, Any], names: List[str], rows: np.ndarray, conn: np.ndarray,
                   bound: np.ndarray, memo: Dict[int, Any]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    # The pure-Python twin of the compiled _cobserve.local_ends (its test oracle, and the
    # fallback when the compiled module is absent); arguments as there.
    k = len(conn)
    if len(rows) != k or bound.shape[0] != k or bound.shape[1] != 2:
        raise ValueError(f"rows ({len(rows)}) and bound ({bound.shape[0]}, {bound.shape[1]}) "
                         f"must have one row per connector ({k}), bound two columns")
    ends_r: List[int] = []
    ends_t: List[int] = []
    ends_xy: List[Tuple[float, float]] = []
    for r, nr, bs, be in zip(conn.tolist(), rows.tolist(), bound[:, 0].tolist(), bound[:, 1].tolist()):
        node = nodes[names[nr]]
        hit = memo.get(id(node))
        if hit is not None and hit[0]() is node:
            s, e = hit[1], hit[2]
        else:
            s, e = _terminal_points(node)
            memo[id(node)] = (weakref.ref(node), s, e)
        if s is not None and not bs:
            ends_r.append(r)
            ends_t.append(0)
            ends_xy.append(s)
        if e is not None and not be:
            ends_r.append(r)
            ends_t.append(1)
            ends_xy.append(e)
    return (np.asarray(ends_r, dtype=np.int64), np.asarray(ends_t, dtype=np.int64),
            np.asarray(ends_xy, dtype=np.float64).reshape(-1, 2))


def _binding_rows_py(blist: List[Any], row_of: Dict[str, int]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    # The pure-Python twin of _cobserve.binding_rows.
    bf = np.fromiter(map(row_of.get, [b.from_id for b in blist], repeat(-1)), np.int64, len(blist))
    bt = np.fromiter(map(row_of.get, [b.to_id for b in blist], repeat(-1)), np.int64, len(blist))
    bterm = np.fromiter((b.terminal == "end" for b in blist), np.int64, len(blist))
    return bf, bt, bterm


_cpt: Optional[ModuleType]
try:
    from spatialobs.canvas import _cpagetables as _cpt
except ImportError:  # a source tree without the compiled module
    _cpt = None

try:
    from spatialobs.canvas._cobserve import binding_rows as _binding_rows
    from spatialobs.canvas._cobserve import local_ends as _local_ends_c
except ImportError:  # a source tree without the compiled module
    _binding_rows = _binding_rows_py
    _local_ends_c = _local_ends_py


def _local_ends(canvas: Canvas, pg: _Page, bound: np.ndarray,
                conn: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, terminal codes (0 start, 1 end) and local x, y of the terminals without a binding of arrows ``conn``."""
    memo = _TERMINALS
    ids = pg.ids
    conn = np.ascontiguousarray(conn, dtype=np.int64)
    out = _local_ends_c(canvas._nodes, ids._names, np.ascontiguousarray(ids._rows[conn], dtype=np.int64), conn,
                        np.ascontiguousarray(bound[conn]).view(np.uint8), memo)
    if len(memo) > max(2 * len(conn), _TERMINALS_SWEEP[0]):
        for key in [k for k, v in list(memo.items()) if v[0]() is None]:  # list(): one atomic copy
            del memo[key]
        # the next sweep when the memo has grown again by as much (not on every call while its records live)
        _TERMINALS_SWEEP[0] = 2 * len(memo) + 4096
    return out


def _ends_xy(pg: _Page, er: np.ndarray, lxy: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Page x, y of local terminal points ``lxy`` of rows ``er``."""
    rot = pg.rotation[er]
    c, s_ = np.cos(rot), np.sin(rot)
    c[rot == 0] = 1.0
    s_[rot == 0] = 0.0
    x = pg.px[er] + c * lxy[:, 0] - s_ * lxy[:, 1]
    y = pg.py[er] + s_ * lxy[:, 0] + c * lxy[:, 1]
    return x, y


def _ends_rows(pg: _Page, bound: np.ndarray) -> np.ndarray:
    """Arrow rows with at least one terminal that has no binding."""
    return np.flatnonzero((pg.types == "arrow") & ~(bound[:, 0] & bound[:, 1]))


# --------------------------------------------------------------------------- observation
def _round(v: Any) -> np.ndarray:
    """Round half up, as JavaScript's Math.round (agent kits round this way)."""
    return np.floor(np.asarray(v, dtype=np.float64) + 0.5)


def _abbrev(text: Optional[str], text_max: int = _TEXT_MAX) -> Optional[str]:
    if not text:
        return None
    t = " ".join(str(text).split())
    if not t:
        return None
    return t if len(t) <= text_max else t[: text_max - 1] + "…"


def _plain(v: Any) -> bool:
    return isinstance(v, (str, int, float)) and not isinstance(v, bool) and (not isinstance(v, float) or math.isfinite(v))


@dataclass
class Observation:
    """A structured observation of one canvas page (see :func:`observe`).

    Attributes
    ----------
    page : str
    viewport : Viewport
        In page coordinates.
    origin : (float, float)
        The action frame: action coordinates = page coordinates − origin, rounded.
    objects : list of dict
        Object records, most relevant first (keys as in :meth:`to_dict`).
    relations : list of dict
    omitted : dict
        ``{"objects": int, "relations": int}`` left out by the limits.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("a", "geo", "page:page", "a1", 10.4, 0, 10, 10))
    >>> obs = observe(c, (0, 0, 100, 100), include_bounds=True)
    >>> obs.objects[0]["actionBounds"]
    {'x': 10, 'y': 0, 'w': 10, 'h': 10}
    >>> obs.move_delta("a", 50, 0)  # page translation that puts a's corner at action x=50
    (39.6, 0.0)
    """

    page: str
    viewport: Viewport
    origin: Tuple[float, float]
    objects: List[Dict[str, Any]]
    relations: List[Dict[str, Any]]
    omitted: Dict[str, int]
    _bounds: Dict[str, Tuple[float, float, float, float]] = field(default_factory=dict, repr=False)
    #: Names this observation for a later ``observe(..., since=token)`` (see :mod:`spatialobs.canvas.changes`).
    token: Optional[str] = None
    #: What changed since the ``since`` token (None when no ``since`` was given).
    changes: Optional[Dict[str, Any]] = None
    #: Per object record, why it was kept (codes into KEPT_FOR).
    _why: Optional[np.ndarray] = field(default=None, repr=False)

    GUIDE = GUIDE

    def __len__(self) -> int:
        return len(self.objects)

    def to_dict(self) -> Dict[str, Any]:
        """The observation as plain JSON-ready data (DESIGN §10 schema; keys camelCase).

        Examples
        --------
        >>> from spatialobs.canvas import Canvas
        >>> observe(Canvas(), (0.4, 0, 10, 10)).to_dict()["viewport"]
        {'x': 0, 'y': 0, 'w': 10, 'h': 10}
        """
        ox, oy = self.origin
        v = self.viewport
        x0, y0 = _round([v.x - ox, v.y - oy]).astype(int).tolist()
        w, h = _round([v.w, v.h]).astype(int).tolist()
        out: Dict[str, Any] = {"viewport": {"x": x0, "y": y0, "w": w, "h": h}, "objects": self.objects,
                               "relations": self.relations, "omitted": dict(self.omitted)}
        if self.changes is not None:  # only with since=: the plain observation keeps its bytes
            out["changes"] = self.changes
            out["token"] = self.token
        return out

    @typed_errors("Observation.to_json")
    def to_json(self, compact: bool = False) -> str:
        """Deterministic JSON without spaces: the same input gives the same string.

        ``compact=True`` writes the compact form (:mod:`spatialobs.canvas.compact`): the
        same fields with each id written once, objects and relations as arrays;
        :func:`spatialobs.canvas.compact.expand` reads it back to :meth:`to_dict`.

        Examples
        --------
        >>> from spatialobs.canvas import Canvas
        >>> observe(Canvas(), (0, 0, 10, 10)).to_json()
        '{"viewport":{"x":0,"y":0,"w":10,"h":10},"objects":[],"relations":[],"omitted":{"objects":0,"relations":0}}'
        >>> observe(Canvas(), (0, 0, 10, 10)).to_json(compact=True)
        '{"v":[0,0,10,10],"o":[],"r":[],"om":[0,0]}'
        """
        if compact:
            from spatialobs.canvas.compact import compact as _compact

            return compact_json(_compact(self.to_dict()))
        return compact_json(self.to_dict())

    def kept_for(self) -> Dict[str, str]:
        """Why each object was kept, by id (see :data:`KEPT_FOR`).

        Examples
        --------
        >>> from spatialobs.canvas import Canvas, Node
        >>> c = Canvas()
        >>> _ = c.add(Node("a", "geo", "page:page", "a1", 0, 0, 10, 10))
        >>> observe(c, (0, 0, 100, 100), selected=["a"]).kept_for()
        {'a': 'selected'}
        """
        codes = self._why.tolist() if self._why is not None else [3] * len(self.objects)
        return {o["id"]: KEPT_FOR[w] for o, w in zip(self.objects, codes)}

    def ids(self) -> List[str]:
        """Ids of the objects in the observation, in its order."""
        return [o["id"] for o in self.objects]

    def record(self, node_id: str) -> Dict[str, Any]:
        """The record of one object; :class:`~spatialobs.OutOfRangeError` when it was omitted."""
        for o in self.objects:
            if o["id"] == node_id:
                return o
        raise OutOfRangeError(f"object {node_id!r} is not in the observation")

    # -- action frame
    def to_page(self, x: Num, y: Num) -> Tuple[float, float]:
        """Page coordinates of an action-frame point (the inverse of :meth:`to_action`)."""
        return (float(x) + self.origin[0], float(y) + self.origin[1])

    def to_action(self, x: Num, y: Num) -> Tuple[int, int]:
        """Action coordinates (rounded) of a page point."""
        a = _round([float(x) - self.origin[0], float(y) - self.origin[1]]).astype(int).tolist()
        return (a[0], a[1])

    def residual(self, node_id: str) -> Tuple[float, float]:
        """What rounding dropped from an object's upper-left corner: exact − reported action x, y."""
        x0, y0 = self._exact(node_id)
        ax, ay = self.to_action(x0, y0)
        return (x0 - self.origin[0] - ax, y0 - self.origin[1] - ay)

    def move_delta(self, node_id: str, x: Num, y: Num) -> Tuple[float, float]:
        """Page translation that puts an object's upper-left corner exactly at action ``(x, y)``.

        Uses the kept rounding residual, so a move computed from the rounded
        numbers lands where the agent meant rather than off by the residual.
        """
        x0, y0 = self._exact(node_id)
        tx, ty = self.to_page(x, y)
        return (round(tx - x0, 9), round(ty - y0, 9))

    def _exact(self, node_id: str) -> Tuple[float, float]:
        try:
            b = self._bounds[node_id]
        except KeyError:
            raise OutOfRangeError(f"object {node_id!r} is not in the observation") from None
        return (b[0], b[1])


# --------------------------------------------------------------------------- stages
# observe() runs five stages, each a function of the previous ones' results:
# inputs -> view (visibility, occlusion, reading order) -> relations (native and
# inferred pairs) -> ranking (kept objects, chosen relations) -> records.
@dataclass
class _Params:
    """Checked arguments of one observation."""

    page: str
    viewport: Viewport
    vbox: Tuple[float, float, float, float]
    origin: Tuple[float, float]
    sel: np.ndarray         # page rows of the selection, in the order given
    ctx: np.ndarray
    max_objects: int
    max_relations: int
    include_bounds: bool
    near_factor: float
    near_gap: float
    align_tol: float
    row_tol: float
    touch_tol: float
    min_opacity: float
    occlusion: str = "painted"


@dataclass
class _View:
    """The page against the viewport: every row's label, gaps for the rows asked, the rest for the rows in view."""

    solid: np.ndarray        # paints an area of its own (not a connector or group)
    labels: np.ndarray       # visibility code of every row (int8), OCCLUDED applied
    boxes: np.ndarray        # the page's boxes (gaps are computed for the rows that need them)
    vbox: Tuple[float, float, float, float]
    rows: np.ndarray         # rows in view (visible or partial before occlusion), ascending
    occ: np.ndarray          # per in-view row: occluder row (the frame for a clipped-away row), -1 if none
    reading: np.ndarray      # per in-view row: reading order among solid rows in view, -1 elsewhere
    partial: np.ndarray      # in-view rows that are partial, ascending
    near_rows: np.ndarray    # offscreen-near rows, ascending
    in_view: np.ndarray      # (n,) bool mask of ``rows``

    def gaps(self, rows: np.ndarray) -> np.ndarray:
        """Distance of ``rows`` to the viewport, bit for bit as :func:`spatialobs.geometry.visibility` gives it."""
        with np.errstate(over="ignore"):  # far boxes at huge coordinates: infinity, as the kernel gives
            return _gap(self.boxes[rows], np.array([self.vbox]))

    def at(self, per_row: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``per_row`` (aligned with the in-view rows) read at ``rows``; -1 where a row is not in view."""
        pos = np.searchsorted(self.rows, rows)
        hit = pos < len(self.rows)
        hit[hit] = self.rows[pos[hit]] == rows[hit]
        out = np.full(len(rows), -1, np.int64)
        out[hit] = per_row[pos[hit]]
        return out


@dataclass
class _Relations:
    """The relations an observation can report, by type, without listing the page's.

    ``parts[t] = (a, b, extra)`` holds every pair of type ``t`` sorted by ``a``
    (``occludes`` by ``b``, the occluded row); ``extra`` is the terminal code for
    ``bound`` and ``touches``, the gap for ``near``, the kind mask for
    ``aligned``. ``parent`` is not listed: a row's parent is ``pg.parent``.
    ``near`` and ``aligned`` count only pairs with one end in view; ``counts``
    gives the size of every type as reported.
    """

    parts: Dict[str, Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]]
    counts: Dict[str, int]


@dataclass
class _Ranking:
    """The kept rows in output order and the chosen relations."""

    kept: np.ndarray
    rel_type: np.ndarray
    rel_a: np.ndarray
    rel_b: np.ndarray
    rel_extra: np.ndarray
    total: int               # relations before the limits
    why: Optional[np.ndarray] = None  # per kept row, its reason (a code into KEPT_FOR)


def _inputs(canvas: Any, viewport: Any, page: Optional[str], selected: Optional[Iterable[str]], context: Iterable[str],
            max_objects: Any, max_relations: Any, origin: Any, include_bounds: bool, near_factor: float,
            near_gap: Any, align_tol: Any, row_tol: Any, touch_tol: Any, min_opacity: float,
            occlusion: Any = "painted") -> Tuple[_Params, _Page]:
    """Check the arguments and read the page's arrays."""
    if not isinstance(canvas, Canvas):
        raise InvalidInputError(f"canvas must be a Canvas, got {type(canvas).__name__}")
    if not isinstance(occlusion, str) or occlusion not in OCCLUSION_MODES:
        raise InvalidInputError(f"occlusion must be one of {', '.join(map(repr, OCCLUSION_MODES))}, got {occlusion!r}")
    max_objects = _limit(max_objects, "max_objects")
    max_relations = _limit(max_relations, "max_relations")
    ox, oy = _origin(origin)
    near_gap = _positive(near_gap, "near_gap")
    align_tol = _positive(align_tol, "align_tol")
    row_tol = _positive(row_tol, "row_tol")
    touch_tol = _positive(touch_tol, "touch_tol")
    pid = _resolve_page(canvas, page)
    vp = resolve_viewport(canvas, viewport, pid)
    pg = _page_state(canvas, pid).pg
    row_of = canvas._geometry().row
    sel = _id_rows(canvas.selected(pid) if selected is None else selected, row_of, pg.page_pos, "selected", pid)
    ctx = _id_rows(context, row_of, pg.page_pos, "context", pid)
    p = _Params(pid, vp, vp.as_box(), (ox, oy), sel, ctx, max_objects, max_relations, bool(include_bounds),
                near_factor, near_gap, align_tol, row_tol, touch_tol, min_opacity, occlusion)
    return p, pg


def _view(st: _PageState, p: _Params, canvas: Optional[Canvas] = None) -> _View:
    """Visibility of every row (one linear kernel); occlusion and reading order among the rows in view."""
    pg, solid = st.pg, st.solid
    n = len(pg.ids)
    labels = _labels_kept(st, p)
    shown = np.flatnonzero(labels != G.OFFSCREEN_FAR)
    code = labels[shown]
    rows = shown[(code == G.VISIBLE) | (code == G.PARTIAL)]
    partial = shown[code == G.PARTIAL]
    near_rows = shown[code == G.OFFSCREEN_NEAR]
    # an occluder covers part of a box clipped to the viewport, so it is in view too: the rows
    # in view are all the kernel needs, and their order is the page's paint order
    no_occ = pg.hidden[rows] | ~solid[rows] | pg.gone[rows]
    if p.occlusion == "paper" or canvas is None:
        occ = G.occluders(pg.boxes[rows], None, pg.opacity[rows], no_occ, p.vbox, p.min_opacity)
        occ = np.where(occ >= 0, rows[np.maximum(occ, 0)], -1)
    else:
        occ = _painted_occluders_kept(canvas, st, rows, no_occ, p)
    occ = np.where(pg.gone[rows], pg.frame[rows], occ)
    labels[rows[occ >= 0]] = G.OCCLUDED
    reading = np.full(len(rows), -1, dtype=np.int64)
    vs = np.flatnonzero(solid[rows])
    if len(vs):
        reading[vs] = G.reading_order(np.ascontiguousarray(pg.boxes[rows[vs]]), p.row_tol)
    in_view = np.zeros(n, bool)
    in_view[rows] = True
    return _View(solid, labels, pg.boxes, p.vbox, rows, occ, reading, partial, near_rows, in_view)


def _labels_kept(st: _PageState, p: _Params) -> np.ndarray:
    """The visibility label of every row of ``st``'s page for ``p``'s viewport (a new array the caller
    may write): kept per page version for the last viewport asked, and carried to the next version
    with its rows whose box may have changed labelled again (a label reads its own box alone)."""
    memo = st.labels
    if memo is None or memo[0] != p.vbox or memo[1] != p.near_factor:
        memo = st.labels = (p.vbox, p.near_factor, G.visibility_labels(st.pg.boxes, p.vbox, p.near_factor))
    return memo[2].copy()


def _carry_labels(st: _PageState, old: _PageState, again: np.ndarray, new: Optional[np.ndarray] = None,
                  kept_old: Optional[np.ndarray] = None, runs: Optional[np.ndarray] = None) -> None:
    """Give ``st`` the labels kept by ``old`` (its previous version, used up: the array is taken over or
    read once), with the rows ``again`` (``st``'s page rows) labelled again. ``new``, ``kept_old`` and
    ``runs``: the row map when the rows were renumbered (each kept row's new row, its old row, and the
    runs between them, as :func:`~spatialobs.canvas.rowmaps.put_rows` reads them); None: the same rows."""
    memo = old.labels
    if memo is None:
        return
    vbox, near, lab = memo
    if new is not None:
        out = np.full(len(st.pg.ids), -1, np.int8)  # (every row is kept or in ``again``)
        put_rows(out, new, lab, kept_old, runs)  # type: ignore[arg-type]
        lab = out
    if len(again):
        lab[again] = G.visibility_labels(np.ascontiguousarray(st.pg.boxes[again]), vbox, near)
    st.labels = (vbox, near, lab)
    old.labels = None


#: Whether a node paints its interior, by what :func:`~spatialobs.canvas.paint.paints_interior`
#: reads: (type, min_alpha, fill, whether a fillStyle is set, fillStyle).
_PAINTS: Dict[Tuple[Any, ...], bool] = {}
_PAINTS_MAX = 4096
#: Share of a target's area that may stay uncovered while it counts as covered (rounding of the areas).
_COVER_TOL = 1e-9
#: Share of its area a shape whose pixels fill its outline (a fill of any kind, text, a note,
#: an image) must have covered to be occluded (*ours*: the pixel rule, fewer than 10% of its
#: pixels left to see); an outline without fill, a line or a connector must be covered entirely,
#: since its pixels lie on its edge.
AREA_COVER = 0.9


def _need(nd: Any) -> float:
    """The share of a target's region that must be covered for it to be occluded (see :data:`AREA_COVER`)."""
    if fills_area(nd.type, nd.style):
        return AREA_COVER
    return 1.0
_QUARTER = math.pi / 2


def _paints(nodes: Mapping[str, Any], names: List[str], crow: np.ndarray, min_alpha: float) -> np.ndarray:
    """Whether each node (canvas rows ``crow``) paints an opaque interior (memoized by the values it depends on)."""
    memo = _PAINTS
    out = []
    for c in crow.tolist():
        nd = nodes[names[c]]
        t, style = nd.type, nd.style
        key: Optional[Tuple[Any, ...]] = (t, min_alpha, style.get("fill"), "fillStyle" in style, style.get("fillStyle"))
        try:
            v = memo.get(key)  # type: ignore[arg-type]
        except TypeError:  # an unhashable fill: not kept
            v = key = None
        if v is None:
            v = paints_interior(t, style, min_alpha)
            if key is not None:
                if len(memo) >= _PAINTS_MAX:
                    memo.clear()
                memo[key] = v
        out.append(v)
    return np.array(out, dtype=bool)


def _paints_cached(canvas: Canvas, st: _PageState, r: np.ndarray, min_alpha: float) -> np.ndarray:
    """:func:`_paints` for page rows ``r``, kept per page version (rows whose record changes are read again)."""
    if st.paints is None or st.paints[0] != min_alpha:
        st.paints = (min_alpha, np.full(len(st.pg.ids), -1, np.int8))
    col = st.paints[1]
    got = col[r]
    todo = got < 0
    if todo.any():
        pg = st.pg
        v = _paints(canvas._nodes, pg.ids._names, pg.ids._rows[r[todo]], min_alpha)
        col[r[todo]] = v
        got = col[r]
    return got > 0


def _frame_chain(pg: _Page, r: int) -> List[int]:
    """Rows of the frames that clip row ``r``, nearest first."""
    out = []
    f = int(pg.frame[r])
    while f >= 0:
        out.append(f)
        f = int(pg.frame[f])
    return out


def _page_outline(canvas: Canvas, pg: _Page, r: int, memo: Dict[int, np.ndarray]) -> np.ndarray:
    """Row ``r``'s outline on the page, clipped by every frame that clips it (see :func:`_page_outline_kept`)."""
    hit = memo.get(r)
    if hit is not None:
        return hit
    poly = memo[r] = _page_outline_kept(canvas, pg, r)
    return poly


#: Page outlines by node id: (the records the key names, the key, the outline); see :func:`_page_outline_kept`.
_PAGE_OUTLINES: Dict[str, Tuple[Tuple[Any, ...], Tuple[Any, ...], np.ndarray]] = {}
_PAGE_OUTLINES_MAX = 16384
_XF3 = struct.Struct("<3d").pack


def _page_outline_kept(canvas: Canvas, pg: _Page, r: int) -> np.ndarray:
    """:func:`_page_outline_of`, kept from one page version to the next while what it reads is the
    same: the row's record and page transform, and each clipping frame's. Records by identity (the
    entry holds them), transforms by their bytes. The outline is shared: read, never written."""
    nodes = canvas._nodes
    nid = pg.ids[r]
    nd = nodes[nid]
    held: List[Any] = [nd]
    key: List[Any] = [id(nd), _XF3(pg.px[r], pg.py[r], pg.rotation[r])]
    for f in _frame_chain(pg, r):
        fn = nodes[pg.ids[f]]
        held.append(fn)
        key += (id(fn), _XF3(pg.px[f], pg.py[f], pg.rotation[f]))
    k = tuple(key)
    hit = _PAGE_OUTLINES.get(nid)
    if hit is not None and hit[1] == k:
        return hit[2]
    poly = _page_outline_of(canvas, pg, r)
    poly.flags.writeable = False
    if len(_PAGE_OUTLINES) >= _PAGE_OUTLINES_MAX:
        _PAGE_OUTLINES.clear()
    _PAGE_OUTLINES[nid] = (tuple(held), k, poly)
    return poly


def _page_outline_of(canvas: Canvas, pg: _Page, r: int) -> np.ndarray:
    """Row ``r``'s outline on the page, clipped by every frame that clips it, computed."""
    nd = canvas._nodes[pg.ids[r]]
    poly = to_page(local_outline(nd), float(pg.px[r]), float(pg.py[r]), float(pg.rotation[r]))
    for f in _frame_chain(pg, r):
        fn = canvas._nodes[pg.ids[f]]
        clip = to_page(np.array([[0.0, 0.0], [fn.w, 0.0], [fn.w, fn.h], [0.0, fn.h]], dtype=np.float64),
                       float(pg.px[f]), float(pg.py[f]), float(pg.rotation[f]))
        poly = clip_convex(poly, clip)
    return poly


def _box_like(canvas: Canvas, pg: _Page, r: int) -> bool:
    """Whether row ``r``'s region is its (frame-clipped) bounds: a box turned by quarter turns only."""
    if float(pg.rotation[r]) % _QUARTER != 0.0:
        return False
    nd = canvas._nodes[pg.ids[r]]
    if nd.type not in _BOXY or len(local_outline(nd)) != 4:
        return False
    return all(float(pg.rotation[f]) % _QUARTER == 0.0 for f in _frame_chain(pg, r))


#: Types whose outline is their w x h box (a ``geo`` shape only as a rectangle-like kind).
_BOXY = frozenset({"note", "frame", "text", "image", "rectangle", "video", "embed", "bookmark", "embeddable",
                   "iframe", "arrow", "line", "draw", "freedraw", "highlight", "group"})


def _painted_occluders(canvas: Canvas, st: _PageState, rows: np.ndarray, no_occ: np.ndarray, p: _Params,
                       only: Optional[np.ndarray] = None) -> np.ndarray:
    """Per in-view row, the higher shape whose painted region covers most of it when the painted regions
    of the higher shapes cover it entirely (clipped to the view and its frames), else -1.

    The box kernel's union mode (over the painters' bounds, which hold their regions) finds the
    candidates; the polygon kernel decides them on the outlines. ``only`` (positions in ``rows``):
    the rows whose answer is asked for; the others' entries are then meaningless.
    """
    pg = st.pg
    k = len(rows)
    out = np.full(k, -1, np.int64)
    if k < 2:
        return out
    names = pg.ids._names
    shown = ~(pg.hidden[rows] | pg.gone[rows]) & (pg.opacity[rows] >= p.min_opacity) & (pg.types[rows] != "group")
    _painted_cover(canvas, st, rows, no_occ, p, out, names, shown, only)
    asked = None if only is None else _mask_of(only, k)
    _copies_above(canvas, pg, rows, shown, out, asked)
    _strokes_on_strokes(canvas, st, rows, shown, out, asked)
    return out


# When the painted occluders are computed again (not how): once per page version and viewport,
# and after an edit only for the rows in view whose cover the edit can reach.
def _painted_occluders_kept(canvas: Canvas, st: _PageState, rows: np.ndarray, no_occ: np.ndarray,
                            p: _Params) -> np.ndarray:
    """:func:`_painted_occluders`, kept per page version and viewport; a version carried from the
    previous one by :func:`_advance` computes them again only where its edit can reach
    (:func:`_painted_occluders_again`)."""
    key = (p.vbox, p.min_opacity)
    hit = st.occ_memo.get(key)
    if hit is not None and np.array_equal(hit[0], rows):
        return hit[1].copy()
    carry = st.occ_carry
    prev = carry[0].get(key) if carry is not None else None
    out = None
    if prev is not None and carry is not None:
        out = _painted_occluders_again(canvas, st, rows, no_occ, p, prev, carry[1], carry[2], carry[3])
    if out is None:
        out = _painted_occluders(canvas, st, rows, no_occ, p)
    st.occ_memo[key] = (rows, out.copy())
    return out


def _grown_boxes(b: np.ndarray) -> np.ndarray:
    """Boxes grown by more than anything the occlusion passes reach across: a connector's
    distance to a stroke (:data:`_ON_STROKE`), the sliver a line stands for, rounding."""
    if not len(b):
        return np.zeros((0, 4))
    m = np.abs(b).max(axis=1)
    np.maximum(m, 1.0, out=m)
    m *= 1e-3
    m += 2.0 * _ON_STROKE  # (2 * _ON_STROKE + 1e-3 * max(1, |b|): the same two roundings)
    out = np.empty((len(b), 4))
    np.subtract(b[:, :2], m[:, None], out=out[:, :2])
    np.add(b[:, 2:], m[:, None], out=out[:, 2:])
    return out


def _painted_occluders_again(canvas: Canvas, st: _PageState, rows: np.ndarray, no_occ: np.ndarray, p: _Params,
                             prev: Tuple[np.ndarray, np.ndarray], dirty: np.ndarray,
                             before: np.ndarray, before_rank: Optional[np.ndarray] = None) -> Optional[np.ndarray]:
    """The painted occluders after an edit that kept the page rows: the previous version's, and
    computed again for the rows in view that are ``dirty`` (their inputs may have changed) or
    that a dirty row painted above them can cover: its box meets theirs now, or met it ``before``
    the edit while it was above them. ``before_rank`` (per box of ``before``): a page row now
    that keeps the dirty row's paint order against every row not dirty, or at least the page's
    row count when unknown (above every row); None: every box before counts as above. They are
    computed against the rows in view above them whose box meets theirs (every shape that can
    cover them). None when a row in view is neither reached nor in the previous result (the
    caller computes them all)."""
    pg = st.pg
    n = len(pg.ids)
    if before_rank is None:
        before_rank = np.full(len(before), n, np.int64)
    boxes = pg.boxes[rows]
    bb = np.concatenate([before, pg.boxes[dirty]])
    brank = np.concatenate([before_rank, dirty]).astype(np.int64)
    prev_rows, prev_occ = prev
    reached = None
    if REACH_KERNEL and _cpt is not None:
        i64 = np.int64
        reached = _cpt.painted_reach(np.ascontiguousarray(boxes, np.float64), np.ascontiguousarray(rows, i64),
                                 np.ascontiguousarray(bb, np.float64), brank, np.ascontiguousarray(dirty, i64),
                                 np.ascontiguousarray(prev_rows, i64), np.ascontiguousarray(prev_occ, i64),
                                 2.0 * _ON_STROKE)
    if reached is None:
        reached = _painted_reach_py(boxes, rows, bb, brank, dirty, prev_rows, prev_occ)
    if not reached:
        return None
    out, aff, sub, at_aff = reached
    if not len(aff):
        return out
    got = _painted_occluders(canvas, st, rows[sub], no_occ[sub], p, at_aff)
    out[aff] = got[at_aff]
    return out


#: Whether :func:`_painted_occluders_again` finds the rows its edit reaches in one compiled pass
#: (``_cpagetables.painted_reach``); False: by :func:`_painted_reach_py` (the twin, for tests).
REACH_KERNEL = True


def _painted_reach_py(boxes: np.ndarray, rows: np.ndarray, bb: np.ndarray, brank: np.ndarray, dirty: np.ndarray,
                      prev_rows: np.ndarray, prev_occ: np.ndarray) -> Tuple[np.ndarray, ...]:
    """The twin of ``_cpagetables.painted_reach`` (arguments and result as there, without ``pad``: a row
    reached or in the previous result, ``(out, aff, sub, at)``; else ``()``), by numpy passes and the
    index kernels; any boxes, finite or not."""
    grown = _grown_boxes(boxes)
    reach = _meeting_above(boxes, rows, bb, brank, grown)
    reach |= in_sorted(dirty, rows)  # (``dirty`` is sorted and distinct)
    at = np.searchsorted(prev_rows, rows)
    found = at < len(prev_rows)
    found[found] = prev_rows[at[found]] == rows[found]
    if not (found | reach).all():
        return ()
    out = np.where(found, prev_occ[np.minimum(at, len(prev_rows) - 1)], -1) if len(prev_rows) else \
        np.full(len(rows), -1, np.int64)
    aff = np.flatnonzero(reach)
    # the painters that can cover an asked row: those above it whose box meets its box
    sub = _mask_of(aff, len(rows))
    if len(aff) and len(rows):
        sub |= _overlap_any_ranked(grown[aff], aff, grown, np.arange(len(rows), dtype=np.int64), above=False)
    sub = np.flatnonzero(sub)
    return out, aff, sub, np.searchsorted(sub, aff)


#: Most boxes of ``b`` :func:`_meeting_above` compares with every box of ``a`` at once (more: through a box index).
_MEETING_ABOVE_AT_ONCE = 16


def _meeting_above(a: np.ndarray, a_rank: np.ndarray, b: np.ndarray, b_rank: np.ndarray,
                   ga: Optional[np.ndarray] = None) -> np.ndarray:
    """Per box of ``a`` (paint ranks ``a_rank``), whether its grown box meets the grown box of a box
    of ``b`` ranked above it (``b_rank`` greater). ``ga``: ``a``'s grown boxes, when the caller has them."""
    if not (len(a) and len(b)):
        return np.zeros(len(a), bool)
    ga, gb = (_grown_boxes(a) if ga is None else ga), _grown_boxes(b)
    if len(b) <= _MEETING_ABOVE_AT_ONCE:
        return _overlap_any_ranked(gb, b_rank, ga, a_rank, above=True)  # (the few edit boxes at once)
    # a ``b`` box that misses the bounds of every grown box of ``a`` meets none of them (an edit far
    # from the view): answered without the kernel
    lo, hi = ga[:, :2].min(axis=0), ga[:, 2:].max(axis=0)
    if (np.isfinite(gb).all() and np.isfinite(lo).all() and np.isfinite(hi).all()
            and not ((gb[:, 0] <= hi[0]) & (lo[0] <= gb[:, 2]) & (gb[:, 1] <= hi[1]) & (lo[1] <= gb[:, 3])).any()):
        return np.zeros(len(a), bool)
    return G.overlap_any_ranked(G.BoxIndex(gb), b_rank, ga, a_rank, above=True)


def _overlap_any_ranked(b: np.ndarray, b_rank: np.ndarray, q: np.ndarray, q_rank: np.ndarray, above: bool
                        ) -> np.ndarray:
    """``geometry.overlap_any_ranked`` over an index of the boxes ``b``: per query box of ``q``, whether a
    box of ``b`` ranked above it (``above``; else below) overlaps it with positive area. Few boxes of
    ``b`` (at most :data:`_MEETING_ABOVE_AT_ONCE`), all finite, are compared with every query at once by
    the kernel's test; otherwise the kernel answers."""
    if not (len(b) and len(q)):
        return np.zeros(len(q), bool)
    if len(b) > _MEETING_ABOVE_AT_ONCE or not (np.isfinite(b).all() and np.isfinite(q).all()):
        return G.overlap_any_ranked(G.BoxIndex(b), b_rank, q, q_rank, above=above)
    m = ((np.minimum(q[:, None, 2], b[None, :, 2]) > np.maximum(q[:, None, 0], b[None, :, 0]))
         & (np.minimum(q[:, None, 3], b[None, :, 3]) > np.maximum(q[:, None, 1], b[None, :, 1])))
    m &= (b_rank[None, :] > q_rank[:, None]) if above else (b_rank[None, :] < q_rank[:, None])
    return m.any(axis=1)


#: Most candidate pairs :func:`_strokes_on_strokes` tests one by one in Python (more: at once, by
#: :func:`_along_strokes`, which reads every cover's segment; below, numpy's per-call costs dominate).
_STROKE_PAIRS_LOOP = 64

#: Distance (page units, *ours*) within which a straight connector lies on another's stroke:
#: half the thinnest stroke either editor draws a connector with.
_ON_STROKE = 1.0


#: Most boxes :func:`_meeting_pairs` compares all at once (more: through a box index, in another order).
_MEETING_AT_ONCE = 2048


def _meeting_pairs_of(b: np.ndarray, lower: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The pairs of :func:`_meeting_pairs` (all at once, at most :data:`_MEETING_AT_ONCE` boxes) whose
    first box is one of the sorted positions ``lower``, in its order."""
    if not len(lower):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a = b[lower]
    m = ((a[:, None, 0] <= b[None, :, 2]) & (b[None, :, 0] <= a[:, None, 2])
         & (b[None, :, 1] <= a[:, None, 3]) & (a[:, None, 1] <= b[None, :, 3]))
    m &= np.arange(len(b))[None, :] > lower[:, None]
    x, h = np.nonzero(m)
    return lower[x].astype(np.int64), h.astype(np.int64)


def _meeting_pairs(b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Pairs (a, h), a < h, of boxes that intersect (closed), by position."""
    if len(b) <= _MEETING_AT_ONCE:
        m = ((b[:, None, 0] <= b[None, :, 2]) & (b[None, :, 0] <= b[:, None, 2])
             & (b[None, :, 1] <= b[:, None, 3]) & (b[:, None, 1] <= b[None, :, 3]))
        a, h = np.nonzero(np.triu(m, 1))
        return a.astype(np.int64), h.astype(np.int64)
    pairs = G.BoxIndex(np.ascontiguousarray(b)).query_pairs()
    return pairs[0], pairs[1]


def _strokes_on_strokes(canvas: Canvas, st: _PageState, rows: np.ndarray, shown: np.ndarray, out: np.ndarray,
                        asked: Optional[np.ndarray] = None) -> None:
    """Mark in ``out`` the straight connectors in view (still -1) that lie along a higher shown straight
    connector's stroke (both end points within half its stroke, or :data:`_ON_STROKE`, of its line,
    between its ends stretched by its arrowheads): its stroke paints over theirs, as when two arrows
    join the same shapes in opposite directions. ``asked`` (a mask of positions in ``rows``): only
    those rows are marked (the others' entries are then meaningless)."""
    pg = st.pg
    types = pg.types[rows]
    conn = np.flatnonzero((types == "arrow") | (types == "line"))
    if len(conn) < 2:
        return
    b = pg.boxes[rows[conn]]
    segs, tgs = st.segments, st.seg_targets
    row_of = canvas._geometry().row
    page_pos = pg.page_pos

    def seg(i: int) -> Optional[Tuple[float, float, float, float]]:
        r = int(rows[i])
        if r not in segs:
            nid = pg.ids[r]
            terms = canvas._terms_of(nid)
            segs[r] = straight_segment_kept(canvas, nid, terms)
            at = [int(page_pos[row_of[b.to_id]]) if b.to_id in row_of else -1 for b in terms.values()]
            tgs[r] = None if any(t < 0 for t in at) else tuple(at)
        return segs[r]

    # candidate pairs (lower a, higher h) whose boxes meet, found for all connectors at once
    if asked is not None and len(b) <= _MEETING_AT_ONCE:
        # only the pairs whose lower connector is asked, in the same order (by a, then h)
        ca, ch = _meeting_pairs_of(b, np.flatnonzero(asked[conn]))
        keep = shown[conn[ch]] & (out[conn[ca]] < 0)
    else:
        ca, ch = _meeting_pairs(b)
        keep = shown[conn[ch]] & (out[conn[ca]] < 0)
        if asked is not None:
            keep &= asked[conn[ca]]
    ca, ch = ca[keep], ch[keep]
    if not len(ca):
        return
    if len(ca) <= _STROKE_PAIRS_LOOP:  # a few pairs: one by one, each cover read as its turn comes
        t = _ON_STROKE
        heads: Dict[int, Tuple[float, float, float]] = {}
        for a, h in zip(ca.tolist(), ch.tolist()):
            i, j = int(conn[a]), int(conn[h])
            if out[i] >= 0:
                continue  # (marked by an earlier cover in pair order)
            si = seg(i)
            if si is None:
                continue
            sj = seg(j)
            if sj is None:
                continue
            got = heads.get(j)
            if got is None:
                got = heads[j] = stroke_and_heads(canvas._nodes[pg.ids[int(rows[j])]])
            sw, hs, he = got
            if along_stroke(si, sj, max(t, sw / 2), hs, he):
                out[i] = rows[j]
        return
    # each connector's segment read once: the lower ones' first, then their covers' (those of the
    # pairs whose lower one has a segment); plain lists, made into columns once
    conn_l = conn.tolist()
    low_at: List[int] = []
    low_seg: List[Tuple[float, float, float, float]] = []
    for a in unique(ca).tolist():
        sa = seg(conn_l[a])
        if sa is not None:
            low_at.append(a)
            low_seg.append(sa)
    if not low_at:
        return
    low = np.zeros(len(conn), bool)
    low[low_at] = True
    pick = low[ca]
    ca, ch = ca[pick], ch[pick]
    # per cover with a segment of some length: its length (math.hypot, as along_stroke), half stroke
    # and heads' reach
    cov_at: List[int] = []
    cov_seg: List[Tuple[float, float, float, float]] = []
    cov_reach: List[Tuple[float, float, float, float]] = []  # length, half stroke, heads' reach at start, end
    t = _ON_STROKE
    nodes, ids = canvas._nodes, pg.ids
    for j in unique(ch).tolist():
        sj = seg(conn_l[j])
        if sj is None:
            continue
        L = math.hypot(sj[2] - sj[0], sj[3] - sj[1])
        if L == 0:
            continue  # (along_stroke: a stroke of no length covers nothing)
        sw, hs, he = stroke_and_heads(nodes[ids[int(rows[conn_l[j]])]])
        cov_at.append(j)
        cov_seg.append(sj)
        cov_reach.append((L, max(t, sw / 2), hs, he))
    if not cov_at:
        return
    seg_at = np.full((len(conn), 4), np.nan)
    seg_at[low_at] = low_seg
    seg_at[cov_at] = cov_seg  # (a connector both lower and cover: the same segment)
    reach = np.zeros((len(conn), 4))
    reach[cov_at] = cov_reach
    cover = np.zeros(len(conn), bool)
    cover[cov_at] = True
    pick = cover[ch]
    ca, ch = ca[pick], ch[pick]
    if not len(ca):
        return
    cr = reach[ch]
    on = _along_strokes(seg_at[ca], seg_at[ch], cr[:, 0], cr[:, 1], cr[:, 2], cr[:, 3])
    # the first cover in pair order of each connector on one
    hit_a, first = unique_first(ca[on])
    if len(hit_a):
        out[conn[hit_a]] = rows[conn[ch[on][first]]]


def _along_strokes(seg: np.ndarray, cover: np.ndarray, length: np.ndarray, half: np.ndarray,
                   head_start: np.ndarray, head_end: np.ndarray) -> np.ndarray:
    """:func:`~spatialobs.canvas.paint.along_stroke` for many pairs (rows of ``seg`` and ``cover``,
    ``(k, 4)``), each cover's length given (``math.hypot`` of its extent, not 0): the same
    operations in the same order on the same doubles, so the same answers."""
    ax, ay, bx, by = cover[:, 0], cover[:, 1], cover[:, 2], cover[:, 3]
    with np.errstate(all="ignore"):
        ux, uy = (bx - ax) / length, (by - ay) / length
        lo = -head_start - half
        hi = length + head_end + half
        ok = np.ones(len(seg), bool)
        for px, py in ((seg[:, 0], seg[:, 1]), (seg[:, 2], seg[:, 3])):
            t = (px - ax) * ux + (py - ay) * uy
            n = np.abs(-(px - ax) * uy + (py - ay) * ux)
            ok &= ~((n > half) | (t < lo) | (t > hi))
    return ok


class _Above:
    """The painters (positions ``prow``, ascending, with boxes ``pb``) above a position whose box
    meets an open rectangle: a loop over plain floats for a few painters, numpy masks for many."""

    #: Painters up to which the plain loop is the faster (numpy's per-call cost dominates below).
    SMALL = 48

    def __init__(self, prow: np.ndarray, pb: np.ndarray) -> None:
        self.prow, self.pb = prow, pb
        self.small = len(prow) <= self.SMALL
        self.rows_boxes: Optional[List[Tuple[int, List[float]]]] = None  # made on the first question

    def meeting(self, i: int, c0: float, c1: float, c2: float, c3: float) -> List[int]:
        """Positions ``j > i`` (ascending) of the painters whose box ``b`` has ``b0 < c2``,
        ``b2 > c0``, ``b1 < c3`` and ``b3 > c1``."""
        if self.small:
            rb = self.rows_boxes
            if rb is None:
                rb = self.rows_boxes = list(zip(self.prow.tolist(), self.pb.tolist()))
            return [j for j, b in rb if j > i and b[0] < c2 and b[2] > c0 and b[1] < c3 and b[3] > c1]
        return self.meeting_numpy(i, c0, c1, c2, c3)

    def meeting_numpy(self, i: int, c0: float, c1: float, c2: float, c3: float) -> List[int]:
        """:meth:`meeting` by numpy masks (the path for many painters, and the plain loop's twin)."""
        prow, pb = self.prow, self.pb
        return prow[(prow > i) & (pb[:, 0] < c2) & (pb[:, 2] > c0) & (pb[:, 1] < c3) & (pb[:, 3] > c1)].tolist()


def _painted_cover(canvas: Canvas, st: _PageState, rows: np.ndarray, no_occ: np.ndarray, p: _Params, out: np.ndarray,
                   names: List[str], shown: np.ndarray, only: Optional[np.ndarray] = None) -> None:
    """Set ``out`` where the painted interiors of higher shapes cover a row (see :func:`_painted_occluders`;
    only the rows at positions ``only`` when given)."""
    pg = st.pg
    painter = shown & ~no_occ
    cand = np.flatnonzero(painter)
    if not len(cand):
        return
    painter[cand] = _paints_cached(canvas, st, rows[cand], p.min_opacity)
    if not painter.any():
        return
    boxes = pg.boxes[rows]
    _, frac = G.occluders(boxes, None, None, ~painter, p.vbox, p.min_opacity, mode="union",
                          targets=None if only is None else _mask_of(only, len(rows)))
    # the box kernel is no filter for a box that is flat within the view (a line, a view of zero height
    # or width, an edge on the view's): its sliver, below, is what is asked
    vx0, vy0, vx1, vy1 = p.vbox
    flat = ((np.minimum(boxes[:, 2], vx1) <= np.maximum(boxes[:, 0], vx0))
            | (np.minimum(boxes[:, 3], vy1) <= np.maximum(boxes[:, 1], vy0)))
    pos = np.flatnonzero((frac > 0) | flat)
    if only is not None:
        pos = pos[_mask_of(only, len(rows))[pos]]
    if not len(pos):
        return
    view_poly = box_polygon(p.vbox)
    pb = boxes[painter]
    prow = np.flatnonzero(painter)
    above = _Above(prow, pb)
    memo = st.outlines
    if len(memo) > _MAX_OUTLINES:
        memo.clear()
    polys: List[np.ndarray] = []
    owner: List[int] = []
    targets: List[int] = []
    covers: List[List[int]] = []
    asked: List[int] = []
    needs: List[float] = []
    slot: Dict[int, int] = {}
    rl, gone, fl, flat_l = rows.tolist(), pg.gone, frac.tolist(), flat.tolist()
    for i, b in zip(pos.tolist(), boxes[pos].tolist()):
        r = rl[i]
        need = _need(canvas._nodes[pg.ids[r]])
        # the boxes' cover bounds a box-like row's painted cover from above, except for a flat box,
        # which the box kernel gives no cover (its sliver, below, is what is asked)
        if gone[r] or (fl[i] < need and not flat_l[i] and _box_like(canvas, pg, r)):
            continue
        c0, c1, c2, c3 = max(b[0], vx0), max(b[1], vy0), min(b[2], vx1), min(b[3], vy1)
        sliver = c2 - c0 <= 0 or c3 - c1 <= 0
        if sliver:  # a line or point: a sliver around it stands for it
            e = 1e-3 * max(1.0, abs(c0), abs(c1))
            c0, c1, c2, c3 = c0 - e, c1 - e, c2 + e, c3 + e
        hit = above.meeting(i, c0, c1, c2, c3)
        if not hit:
            continue
        if sliver:
            tpoly = box_polygon((c0, c1, c2, c3))
        else:
            tpoly = clip_convex(_page_outline(canvas, pg, r, memo), view_poly)
        if len(tpoly) < 3:
            continue
        targets.append(len(polys))
        polys.append(tpoly)
        owner.append(-1)
        cl = []
        for j in hit:
            s_ = slot.get(j)
            if s_ is None:
                s_ = slot[j] = len(polys)
                polys.append(_page_outline(canvas, pg, rl[j], memo))
                owner.append(j)
            cl.append(s_)
        covers.append(cl)
        asked.append(i)
        needs.append(need)
    if not targets:
        return
    area, covered, best = G.polygon_coverage(polys, np.asarray(targets, np.int64), covers)
    own = np.asarray(owner, np.int64)
    for q, i in enumerate(asked):
        if area[q] > 0 and area[q] - covered[q] <= (1.0 - needs[q] + _COVER_TOL) * area[q] and best[q] >= 0:
            out[i] = rows[own[best[q]]]


def _copy_key(nd: Any) -> str:
    """What decides a node's pixels besides its place: type, size, text and every style and prop."""
    hit = _COPY_KEYS.get(id(nd))
    if hit is not None and hit[0]() is nd:
        return hit[1]
    try:
        props = {k: v for k, v in nd.props.items() if k not in _BOOKKEEPING}
        key = json.dumps([nd.type, nd.w, nd.h, nd.text, nd.name, nd.style, props], sort_keys=True, default=repr)
    except (TypeError, ValueError):
        key = repr((nd.type, nd.w, nd.h, nd.text, nd.name, sorted(map(repr, nd.style.items())), id(nd)))
    if len(_COPY_KEYS) > 65536:
        for k in [k for k, v in list(_COPY_KEYS.items()) if v[0]() is None]:
            del _COPY_KEYS[k]
    _COPY_KEYS[id(nd)] = (weakref.ref(nd), key)
    return key


_COPY_KEYS: Dict[int, Tuple[Any, str]] = {}
#: Props that name a record, not its look (Excalidraw's seed only jitters a sketchy stroke by a pixel or two).
_BOOKKEEPING = frozenset({"seed", "version", "versionNonce", "updated", "index", "boundElements", "link"})


def _copies_above(canvas: Canvas, pg: _Page, rows: np.ndarray, shown: np.ndarray, out: np.ndarray,
                  asked: Optional[np.ndarray] = None) -> None:
    """Mark in ``out`` the in-view rows (still -1) with an exact copy painted above them: the same
    type, size, text, style and props at the same page place and rotation, shown and opaque. It
    paints the same pixels over them, whatever it paints (an outline hides an outline). ``asked``
    (a mask of positions in ``rows``): only those rows are marked (the others' entries are then
    meaningless)."""
    k = len(rows)
    if k < 2:
        return
    place = np.column_stack([pg.px[rows], pg.py[rows], pg.rotation[rows], pg.boxes[rows]])
    if asked is not None and int(asked.sum()) * k <= _COPIES_AT_ONCE:
        # the few asked rows' places compared with every row's: the rows at an asked row's place, when
        # two or more are, each with the first row at that place (one id per place, as the runs below)
        ask = np.flatnonzero(asked)
        eq = (place[ask][:, None, :] == place[None, :, :]).all(axis=2)
        eq = eq[eq.sum(axis=1) >= 2]
        if not len(eq):
            return
        first = eq.argmax(axis=1)
        inv = np.full(k, -1, np.int64)
        for g, members in zip(first.tolist(), eq):
            inv[members] = g
        multi = np.flatnonzero(inv >= 0)
        _copies_in_groups(canvas, pg, rows, shown, out, multi, inv)
        return
    o = np.lexsort(place.T[::-1])
    same = np.all(place[o[1:]] == place[o[:-1]], axis=1)  # sorted neighbours at the same place
    if not same.any():
        return
    run = np.concatenate([[0], np.cumsum(~same)])  # run number of each sorted row
    inv = np.empty(k, np.int64)
    inv[o] = run
    multi = np.sort(o[np.concatenate([same, [False]]) | np.concatenate([[False], same])])
    if asked is not None:  # the places of the asked rows only: their copies are all at the same place
        multi = multi[np.isin(inv[multi], inv[asked])]
        if not len(multi):
            return
    _copies_in_groups(canvas, pg, rows, shown, out, multi, inv)


#: Most (asked row, row) place comparisons :func:`_copies_above` makes directly; more: by a sort of the places.
_COPIES_AT_ONCE = 4096


def _copies_in_groups(canvas: Canvas, pg: _Page, rows: np.ndarray, shown: np.ndarray, out: np.ndarray,
                      multi: np.ndarray, inv: np.ndarray) -> None:
    """Mark in ``out`` the rows of ``multi`` (sorted positions in ``rows``, each sharing its place,
    numbered ``inv``, with another) that a shown exact copy at their place is painted above."""
    nodes = canvas._nodes
    groups: Dict[Tuple[int, str], List[int]] = {}
    for i in multi.tolist():
        nd = nodes[pg.ids[int(rows[i])]]
        groups.setdefault((int(inv[i]), _copy_key(nd)), []).append(i)
    for members in groups.values():
        for a, i in enumerate(members):  # ascending paint order: the next shown copy above covers it
            if out[i] >= 0:
                continue
            above = next((j for j in members[a + 1:] if shown[j]), None)
            if above is not None:
                out[i] = rows[above]


def _bindings(canvas: Canvas, pg: _Page) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Connector row, target row and terminal code (0 start, 1 end) of the page's bindings, sorted."""
    row_of = canvas._geometry().row
    pos = np.append(pg.page_pos, -1)  # index -1 (unknown id) maps to -1
    bf, bt, bterm = _binding_rows(list(canvas._bindings.values()), row_of)
    bf, bt = pos[bf], pos[bt]
    ok = (bf >= 0) & (bt >= 0)
    bf, bt, bterm = bf[ok], bt[ok], bterm[ok]
    o = row_order(bf, bt, bterm, n=len(pg.ids))
    return bf[o], bt[o], bterm[o]


def _inside(pg: _Page, sub: np.ndarray, sb: np.ndarray, ix: G.BoxIndex) -> Tuple[np.ndarray, np.ndarray]:
    """(inner, tightest visual container that is not a native ancestor) among the solid rows ``sub``."""
    area = (sb[:, 2] - sb[:, 0]) * (sb[:, 3] - sb[:, 1])
    cp = G.containment_pairs(ix)
    strict = np.any(sb[cp[0]] != sb[cp[1]], axis=1)
    co, ci, ca = sub[cp[0][strict]], sub[cp[1][strict]], area[cp[0][strict]]
    keep = ~_related(pg, co, ci)
    co, ci, ca = co[keep], ci[keep], ca[keep]
    # tightest container per inner: smallest area, then the higher layer
    o = np.lexsort((-co, ca, ci))
    co, ci = co[o], ci[o]
    first = run_starts(ci)
    return ci[first], co[first]


def _touch_filter(pg: _Page, er: np.ndarray, et: np.ndarray, ex: np.ndarray, ey: np.ndarray, ts: np.ndarray,
                  k: np.ndarray, touch_tol: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(connector, shape, terminal) of candidate pairs (shape row ``ts``, end ``k``) whose end lies on the shape's edge."""
    tb = pg.boxes[ts]
    depth_in = np.minimum.reduce([ex[k] - tb[:, 0], tb[:, 2] - ex[k], ey[k] - tb[:, 1], tb[:, 3] - ey[k]])
    on_edge = (depth_in <= touch_tol) & (ts != er[k])
    return er[k][on_edge], ts[on_edge], et[k][on_edge]


def _ends_by_x(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The unbound ends' page x values sorted, with the position of each (ties in any order): the
    ends whose square can meet a box are found in its x strip, see :func:`_touches_update`."""
    o = np.argsort(x).astype(np.int64)
    return x[o], o


def _end_squares(ex: np.ndarray, ey: np.ndarray, touch_tol: float) -> np.ndarray:
    """The squares of half-size ``touch_tol`` around the ends at page points (``ex``, ``ey``)."""
    return np.stack([ex - touch_tol, ey - touch_tol, ex + touch_tol, ey + touch_tol], axis=1)


def _overlaps_touches(st: _PageState, ix: G.BoxIndex,
                      touch_tol: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``overlaps`` pairs and ``touches`` (connector, shape, terminal), both from the solid rows' index.

    Unbound arrow ends query it as small squares of half-size ``touch_tol``.
    """
    pg, sub, ends = st.pg, st.sub, st.ends
    assert ends is not None
    op, _ = G.overlap_pairs(ix)
    ov_a, ov_b = _overlap_filter(pg, sub[op[0]], sub[op[1]])
    tp, _ = G.overlap_pairs_between(ix, _end_squares(ends.x, ends.y, touch_tol))
    tc, ts, tterm = _touch_filter(pg, ends.rows, ends.term, ends.x, ends.y, sub[tp[0]], tp[1], touch_tol)
    o = np.lexsort((ts, tterm, tc))
    return ov_a, ov_b, tc[o], ts[o], tterm[o]


def _overlap_filter(pg: _Page, oa: np.ndarray, ob: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The positive-area overlaps ``(oa, ob)`` that are neither containment nor native kin."""
    A, B = pg.boxes[oa], pg.boxes[ob]
    a_in_b = np.all(A[:, :2] >= B[:, :2], axis=1) & np.all(A[:, 2:] <= B[:, 2:], axis=1)
    b_in_a = np.all(B[:, :2] >= A[:, :2], axis=1) & np.all(B[:, 2:] <= A[:, 2:], axis=1)
    identical = a_in_b & b_in_a
    keep = (identical | ~(a_in_b | b_in_a)) & ~_related(pg, oa, ob)
    return oa[keep], ob[keep]


def _near(pg: _Page, sub: np.ndarray, ix: G.BoxIndex, near_gap: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``near`` pairs of the page with their gaps: 4 nearest per object, not native kin."""
    pp, pgap = G.proximity_pairs(ix, near_gap, 4)
    na, nb = sub[pp[0]], sub[pp[1]]
    keep = ~_related(pg, na, nb)
    return na[keep], nb[keep], pgap[keep]


def _aligned(pg: _Page, sub: np.ndarray, sb: np.ndarray, align_tol: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``aligned`` pairs of the page among siblings, one per pair and axis with a kind bit mask."""
    # the kernel pairs each line, keeps siblings and merges kinds per (pair, axis), sorted as (a, b, axis);
    # sub is increasing, so the page rows keep that order
    ap, _, mask = G.alignment_masks(sb, align_tol, np.ascontiguousarray(pg.parent[sub]))
    return sub[ap[0]], sub[ap[1]], mask.astype(np.int64)


def _page_tables(canvas: Canvas, st: _PageState, p: _Params) -> _PageTables:
    """The inferred relations over the solid objects of the page (cached per version and tolerances)."""
    key = (p.touch_tol, p.near_gap, p.align_tol)
    tables = st.tables.get(key)
    if tables is not None:
        return tables
    pg, sub, sb = st.pg, st.sub, st.sb
    ix = st.fresh_index()  # built once per page version, shared by every kernel and tolerance
    ov_a, ov_b, tc, ts, tterm = _overlaps_touches(st, ix, p.touch_tol)
    tables = _PageTables(_inside(pg, sub, sb, ix), (ov_a, ov_b), (tc, ts, tterm), _near(pg, sub, ix, p.near_gap),
                         _aligned(pg, sub, sb, p.align_tol))
    st.tables[key] = tables
    return tables


# --------------------------------------------------------------------------- the next version
# A version derived from the last observed one with the same tree and bindings changes
# only some boxes (the edited nodes, their descendants, their group ancestors, arrows
# bound to them). Its tables are the previous ones with the pairs of the changed rows
# taken out and found again: overlaps, inside and touches by querying the changed boxes,
# near for every row whose 4 nearest can differ, aligned by re-cutting the lines the
# changed boxes leave and join. The previous version's index keeps answering for the
# unchanged rows; the changed ones (``stale``) are tested directly.

#: Most changed solid rows a version is updated with (*ours*); beyond, its tables are computed afresh.
_MAX_CHANGED = 256
#: Solid boxes per changed or removed box up to which a carried state cuts ``aligned`` afresh after
#: an edit (the kernel over every box), not line by line around the changed boxes (*ours*). The
#: kernel costs ~0.17 us a box (0.12 ms at 737 boxes, 1.26 ms at 7,230); the update costs ~0.1 ms
#: a changed box in small array passes (1.3 ms for a reply's ~10 changed boxes at 737). Measured
#: (``observe`` + ``to_json`` after an edit of ``diagram_workspace``, against the gate at 0): a reply
#: of 20 ops at 10^3 shapes 5.5-6.0 -> 4.9-5.4 ms, at 3 x 10^3 5.9 -> 5.3-5.4 ms; moves and adds
#: within noise there; a move or an add and removal on the shared real files 1.0-1.13x.
ALIGNED_AFRESH_PER_CHANGE = 500
#: Most stale rows the index is kept with (*ours*): beyond, the tables are computed afresh with a new index.
_MAX_STALE = 2048


#: Line kinds whose values a version reached by a move sorts (*ours*): the sorts (~0.9 ms each at 10⁵)
#: are spread over the first moves of a streak.
_LINES_PER_VERSION = 2


def _solid_in_place(old: _PageState, now: np.ndarray) -> bool:
    """Whether the next version may write its changed solid boxes (``now``) into ``old.sb`` (``old``
    used up): not the boxes the index was built over (the stale rows are found against them), and
    nothing reads ``old``'s boxes afterwards: every line kind sorted (the runs found in the sorted
    values, not by strip queries over ``old``), one set of tables, the new boxes finite."""
    lines = old.lines
    return (old.sb is not old.index_boxes and writable(old.sb) and len(old.tables) == 1 and old.advanced
            and lines is not None and all(line is not None for line in lines) and bool(np.isfinite(now).all()))


def _advance(canvas: Canvas, old: _PageState, d: Any) -> Optional[_PageState]:
    """The state of the next version of ``old``'s page, or None when it must be built afresh.

    ``old`` is the state of the version observed last, which is never observed again (its
    derivation is replaced): it is used up here. The page columns the edit reached are
    written in place and shared with the new state; ``old`` is marked used up first
    (no unbound arrow ends), so that nothing can advance from it again.
    """
    e = old.ends
    if old.binding_writes != canvas._binding_writes or e is None:
        return None
    opg = old.pg
    sub = old.sub
    if d.reached is not None:  # the derivation says which rows it reached: only those are read again
        pos = opg.page_pos[d.reached]
        at = pos >= 0
        pos, rr = pos[at], d.reached[at]
        cols: Dict[str, Any] = {}
        vis = d.visible[rr]
        g = np.isnan(vis[:, 0])
        b = d.bounds[rr]
        boxes_then = opg.boxes[pos]  # (the painted occlusion carried below compares the boxes before)
        old.ends = None
        for name, new_v in (("bounds", b), ("boxes", np.where(g[:, None], b, vis)), ("gone", g),
                            ("opacity", d.opacity[rr]), ("hidden", d.hidden[rr]), ("locked", d.locked[rr]),
                            ("rotation", d.rotation[rr]), ("px", d.px[rr]), ("py", d.py[rr])):
            cur = getattr(opg, name)
            if cur.flags.writeable or not np.array_equal(cur[pos], new_v):  # (a write costs less than the test)
                cur[pos] = new_v
            cols[name] = cur
        pg = _Page(**{**vars(opg), **cols})  # (``dataclasses.replace`` checks every field: ~20 us)
        sp = old.subpos[pos]
        sp = sp[sp >= 0]
        changed = unique(sp[(pg.boxes[sub[sp]] != old.sb[sp]).any(axis=1)])
        before = old.sb[changed]
        sb = old.sb
        if len(changed):
            now = pg.boxes[sub[changed]]
            if not _solid_in_place(old, now):
                sb = old.sb.copy()
            sb[changed] = now
        reached_pos = pos
    else:
        boxes_then = None
        rows = opg.canvas_rows
        bounds = d.bounds[rows]
        visible = d.visible[rows]
        gone = np.isnan(visible[:, 0])
        boxes = np.ascontiguousarray(np.where(gone[:, None], bounds, visible))
        pg = dataclasses.replace(opg, bounds=bounds, boxes=boxes, gone=gone, opacity=d.opacity[rows],
                                 hidden=d.hidden[rows], locked=d.locked[rows], rotation=d.rotation[rows],
                                 px=d.px[rows], py=d.py[rows])
        sb = np.ascontiguousarray(boxes[sub])
        changed = np.flatnonzero((sb != old.sb).any(axis=1))
        before = old.sb[changed]
        reached_pos = None
    if len(changed) > _MAX_CHANGED:
        return None
    st = _PageState(pg, old.solid, old.bindings, old.binding_writes, old.index, old.index_boxes, old.stale)
    st.sub, st.sb, st.bound_end, st.subpos = sub, sb, old.bound_end, old.subpos
    if reached_pos is not None:  # (else every row was read again: labelled afresh when asked)
        _carry_labels(st, old, reached_pos)
    st.n_children, st.by_target, st.by_target_rows = old.n_children, old.by_target, old.by_target_rows
    st.index_map = old.index_map
    if old.index is not None:
        cand = unique(np.concatenate([old.stale, changed]))
        st.stale = cand[(sb[cand] != old.index_boxes[cand]).any(axis=1)]  # type: ignore[index]
        if len(st.stale) > _MAX_STALE:
            return None
    # unbound arrow ends: rows whose record changed read their points again; all move with their arrow
    rec = d.record_rows
    if old.paints is not None and rec is not None:  # what each row paints, read again where its record changed
        st.paints = old.paints  # (``old`` is used up: written in place)
        pr = opg.page_pos[rec]
        st.paints[1][pr[pr >= 0]] = -1
    redo = np.zeros(0, np.int64)
    if rec is not None and len(rec):
        pos_r = opg.page_pos[rec]
        pos_r = pos_r[pos_r >= 0]
        redo = unique(pos_r[(pg.types[pos_r] == "arrow") & ~(st.bound_end[pos_r, 0] & st.bound_end[pos_r, 1])])
    if reached_pos is not None and old.occ_memo and rec is not None:
        _carry_occlusion(st, old, reached_pos, boxes_then, opg.page_pos[rec])
    if len(redo):
        er, et, lxy = _local_ends(canvas, pg, st.bound_end, redo)
        keep = ~np.isin(e.rows, redo)
        er = np.concatenate([e.rows[keep], er])
        et = np.concatenate([e.term[keep], et])
        lxy = np.concatenate([e.local[keep], lxy])
        o = row_order(er, et, n=max(len(pg.ids), 2))
        er, et, lxy = er[o], et[o], lxy[o]
    else:
        er, et, lxy = e.rows, e.term, e.local
    if d.reached is not None and not len(redo):
        # only the ends of reached arrows can have moved: found by row (the ends are sorted by row)
        # and written in place (``old``'s ends are used up)
        upd = rows_at(er, unique(pos))
        ex, ey = e.x, e.y
        moved_ends = np.zeros(0, np.int64)
        by_x = e.by_x
        if by_x is None and old.advanced and np.isfinite(ex).all():  # from the second move in a row
            by_x = _ends_by_x(ex)
        if len(upd):
            ux, uy = _ends_xy(pg, er[upd], lxy[upd])
            mv = (ux != ex[upd]) | (uy != ey[upd])
            if mv.any():
                if by_x is not None:  # the moved x values moved in the sorted ones
                    if np.isfinite(ux).all():
                        move_values(by_x, upd[mv], ex[upd[mv]], ux[mv])
                    else:
                        by_x = None
                if not (writable(ex) and writable(ey)):
                    ex, ey = ex.copy(), ey.copy()
                ex[upd], ey[upd] = ux, uy
                moved_ends = unique(er[upd[mv]])
    else:
        ex, ey = _ends_xy(pg, er, lxy)
        # the other rows keep their entries, in the same order
        kn = ~np.isin(er, redo) if len(redo) else slice(None)
        ko = ~np.isin(e.rows, redo) if len(redo) else slice(None)
        moved = (ex[kn] != e.x[ko]) | (ey[kn] != e.y[ko])
        moved_ends = np.union1d(redo, er[kn][moved])
        by_x = None
    st.ends = _Ends(er, et, lxy, ex, ey, by_x)
    st.advanced = True
    if not len(changed) and not len(moved_ends):
        st.tables = dict(old.tables)
        st.index, st.index_boxes, st.stale, st.index_map = old.index, old.index_boxes, old.stale, old.index_map
        st.lines, old.lines = old.lines, None
        return st
    if st.index is None:
        return None
    lines = old.lines
    old.lines = None  # (moved in place below: ``old`` is used up)
    if old.advanced and len(old.tables) == 1 and len(old.sb):  # a second move in a row, or a later one
        todo = [kind for kind in range(6) if lines is None or lines[kind] is None][:_LINES_PER_VERSION]
        if todo and np.isfinite(old.sb).all():
            lines = lines or [None] * 6
            for kind in todo:
                lines[kind] = sorted_lines(_line_values(old.sb, kind))
    # ``old`` is used up: with one set of tables (no columns shared between sets) the splices that
    # keep a table's length are written into its columns
    inplace = len(old.tables) == 1
    st.hits_memo = {}
    try:
        for key, tb in old.tables.items():
            touch_tol, near_gap, align_tol = key
            keys: Dict[str, np.ndarray] = {}  # the updates' key columns, for the next version's
            delta: Dict[str, Tuple[np.ndarray, ...]] = {}  # the pairs the splices took out and put in
            st.tables[key] = new_tb = _PageTables(
                _inside_update(st, tb.inside, changed),
                _overlaps_update(st, tb.overlaps, changed, before, tb.keys, keys, inplace),
                _touches_update(st, tb.touches, changed, moved_ends, touch_tol, before, tb.keys, keys, inplace),
                _near_update(st, tb.near, changed, before, near_gap, tb.keys, keys, inplace, delta),
                _aligned_update(st, old, tb.aligned, changed, before, align_tol, None, tb.keys, keys,
                                lines if len(old.tables) == 1 else None, inplace, delta),
                keys=keys,
            )
            for name, (gone_a, gone_b, new_a, new_b) in delta.items():
                hit = tb.in_view_counts.get(name)
                if hit is not None:
                    new_tb.in_view_since[name] = (hit[0], hit[1], gone_a, gone_b, new_a, new_b, sub[changed], before)
    finally:
        st.hits_memo = None
    return st


#: Most page outlines a page state keeps (see :attr:`_PageState.outlines`); beyond, it starts afresh.
_MAX_OUTLINES = 4096

#: Most connector segments a version carries to the next (*ours*); beyond, they are read again as asked.
_MAX_SEGMENTS = 1024


def _carry_segments(st: _PageState, old: _PageState, dirty: AbstractSet[int],
                    omap: Optional[np.ndarray] = None) -> None:
    """Carry ``old``'s straight connector segments to ``st`` (``omap``: the page row now of each
    row of ``old``, -1 removed, with a last -1; None: the same rows) where neither the connector nor
    a bound target is ``dirty`` (a set of ``st``'s rows): a segment reads only the connector's
    record, bindings and page transform and its targets' (a rebound connector is dirty)."""
    segs, tgs = old.segments, old.seg_targets
    if not segs or len(segs) > _MAX_SEGMENTS:
        return
    out, out_t = st.segments, st.seg_targets
    for r, v in segs.items():  # a few dozen connectors in view: scalar reads, no pass over the page
        t = tgs.get(r)
        if t is None:
            continue
        if omap is not None:
            r = int(omap[r])
            t = tuple(int(omap[x]) for x in t)
        if r < 0 or r in dirty or any(x < 0 or x in dirty for x in t):
            continue
        out[r] = v
        out_t[r] = t


def _carry_occlusion(st: _PageState, old: _PageState, reached: np.ndarray, reached_boxes: Any,
                     rec: np.ndarray) -> None:
    """Let ``st`` (the same page rows as ``old``) compute the painted occluders again only where its
    edit reaches: the rows reached by the derivation (``reached_boxes``: their boxes in ``old``,
    whose page columns ``st`` may have overwritten) and those whose record was replaced (a record
    replaced but not reached kept its box)."""
    dirty, at = unique_first(np.concatenate([reached, rec[rec >= 0]]).astype(np.int64))
    boxes = st.pg.boxes[dirty]
    if reached_boxes is not None:
        fromr = at < len(reached)
        boxes[fromr] = reached_boxes[at[fromr]]
    st.occ_carry = (old.occ_memo, dirty, boxes, dirty)  # the same rows: each keeps its paint order
    _carry_segments(st, old, set(dirty.tolist()))
    if old.outlines:  # an outline reads the row's record and page transform and its frames' (reached with them)
        st.outlines, old.outlines = old.outlines, {}
        for r in dirty.tolist():
            st.outlines.pop(r, None)


#: Types that are no solid box: connectors and groups (as :func:`_new_state` reads them).
_NOT_SOLID = frozenset(CONNECTOR_TYPES) | {"group"}


def _reshape(canvas: Canvas, old: _PageState, newrow: np.ndarray, rec: Optional[np.ndarray], page: str,
             rebound: Optional[AbstractSet[str]] = None) -> Optional[_PageState]:
    """The state of a later version of ``old``'s page, or None.

    ``newrow`` is the canvas row now of each canvas row of ``old``'s version (-1:
    removed), ``rec`` the rows whose record was replaced since, ``rebound`` the ids of
    the connectors whose bindings were written since (None: bindings unchanged). The
    page arrays are read afresh; the relation tables, unbound arrow ends, bindings and
    the box index are carried to the new page rows, and the tables are then updated as
    :func:`_advance` does, with the new rows, the rows whose box changed and the rows
    that moved in the tree (a new parent or paint position, with their subtrees) as the
    changed ones and the removed rows' boxes as boxes left; the bindings of the rebound
    connectors are read again.
    """
    if old.ends is None or old.index is None:
        return None
    if rebound is None and old.binding_writes != canvas._binding_writes:
        return None
    opg = old.pg
    pg = _page_arrays(canvas, page)
    n = len(pg.ids)
    # old page row -> new page row (-1: removed), the kept rows and the new ones, in one pass
    rm = map_rows(newrow, opg.canvas_rows, pg.page_pos, n)
    if rm is None:
        return None  # a row that left the page
    omap, new_of_kept, kept_old, kruns, is_new = rm.omap, rm.new_of_kept, rm.kept_old, rm.runs, rm.is_new
    every = rm.every  # no row removed: the kept rows' columns are read whole, not through ``ok``
    ok = omap[:-1] >= 0
    types = pg.types
    solid = np.zeros(n, bool)  # carried; the new rows' read from their types
    put_rows(solid, new_of_kept, old.solid, kept_old, kruns)
    fresh = np.flatnonzero(is_new)
    t_new = types[fresh]
    # (a set lookup per new row: np.isin over a few strings cost ~0.1 ms)
    solid[fresh] = np.fromiter((t not in _NOT_SOLID for t in t_new.tolist()), bool, len(fresh))
    # the solid positions now, and each old solid position's now (-1: removed)
    sr = solid_rows(solid, omap, old.sub, is_new)
    sub, subpos, smap, kp, skp, sruns, added = sr.sub, sr.subpos, sr.smap, sr.kp, sr.skp, sr.runs, sr.added
    # (np.take along rows: the same rows as indexing, several times faster on (n, 4) boxes)
    sb = np.take(pg.boxes, sub, axis=0)
    shifted = _tree_moved(pg, opg, omap, ok, rec, new_of_kept, kept_old)
    # the kept rows whose box changed, compared once for the solid positions and the painted occlusion
    # (a solid position's box is its row's)
    differ = rows_differ(opg.boxes, kept_old, pg.boxes, new_of_kept, kruns)
    if every:
        by_row = differ
    else:
        by_row = np.zeros(len(ok), bool)
        by_row[kept_old] = differ
    moved_mask = by_row[old.sub[kp]]
    if shifted is not None:
        moved_mask |= shifted[sub[skp]]
    moved = kp[moved_mask]
    changed = np.concatenate([smap[moved], added])
    if len(changed) > _MAX_CHANGED:
        return None
    before = np.concatenate([old.sb[moved], sb[added]])
    if len(added) and len(moved):  # sorted, as the keyed updates find pairs by row (the others read a set)
        o = np.argsort(changed, kind="stable")
        changed, before = changed[o], before[o]
    gone_boxes = np.take(old.sb, np.flatnonzero(smap < 0), axis=0)  # (a boolean mask over (n, 4) rows is slower)
    bindings, rebound_rows = _carried_bindings(canvas, old, omap, pg, rebound, shifted is not None)
    if bindings is None:
        return None
    bf, bt, bterm = bindings
    st = _PageState(pg, solid, bindings, canvas._binding_writes)
    st.sub, st.sb, st.subpos = sub, sb, subpos[:-1]
    st.bound_end = np.zeros((n, 2), bool)
    st.bound_end[bf, bterm] = True
    st.n_children = int(np.count_nonzero(pg.parent >= 0))
    if not rebound and shifted is None:
        st.by_target = old.by_target
    # the index keeps answering through the map; new and moved positions are stale
    st.index = old.index
    if old.index_map is None:
        st.index_map = smap
    else:  # the maps composed: -1 (removed then) reads the extra slot, -1
        ext = np.empty(len(smap) + 1, np.int64)
        ext[:-1] = smap
        ext[-1] = -1
        st.index_map = ext[old.index_map]
    ib = np.empty((len(sub), 4))  # the index's box of each position now (NaN: none, a new row)
    put_rows(ib, skp, old.index_boxes, kp, sruns)  # type: ignore[arg-type]
    ib[added] = np.nan  # (the kept positions and the new ones are every position: a kept row keeps its type)
    st.index_boxes = ib
    # a kept position's box differs from the index's only where it did before (``old.stale``) or where
    # it moved since: those and the new positions are the candidates
    was_stale = smap[old.stale]
    cand = unique(np.concatenate([was_stale[was_stale >= 0], smap[moved], added]).astype(np.int64))
    ne = _pairs_view(sb[cand]) != _pairs_view(ib[cand])
    stale = cand[ne[:, 0] | ne[:, 1]]
    if len(stale) > _MAX_STALE:
        return None
    st.stale = stale
    if old.paints is not None:
        col = np.full(n, -1, np.int8)
        put_rows(col, new_of_kept, old.paints[1], kept_old, kruns)
        if rec is not None and len(rec):
            pr = pg.page_pos[rec]
            col[pr[pr >= 0]] = -1
        st.paints = (old.paints[0], col)
    dirty = _dirty_rows(pg, fresh, new_of_kept, differ, rec, shifted, rebound_rows)
    _carry_labels(st, old, np.concatenate([fresh, new_of_kept[differ]]), new_of_kept, kept_old, kruns)
    # unbound arrow ends: carried, read again for new arrows and arrows whose record changed
    e = old.ends
    er = omap[e.rows]
    keep_e = er >= 0
    read_again = [fresh[t_new == "arrow"], rebound_rows]  # the arrows whose ends are read again
    if rec is not None and len(rec):
        pr = pg.page_pos[rec]
        pr = pr[pr >= 0]
        read_again.append(pr[types[pr] == "arrow"])
    redo = unique(np.concatenate(read_again).astype(np.int64))
    if len(redo):
        # an arrow now bound at both ends keeps none (a removed end's row, -1, is not kept anyway)
        keep_e &= ~_mask_of(redo, n)[er]
        redo = redo[~(st.bound_end[redo, 0] & st.bound_end[redo, 1])]
    every_e = bool(keep_e.all())  # every end kept: the columns shared, not gathered through the mask
    if every_e:  # (the local points and terminals are never written in place; the rows were renumbered)
        er0, et0, lxy0 = er, e.term, e.local
    else:
        er0, et0, lxy0 = er[keep_e], e.term[keep_e], e.local[keep_e]
    rr, rt, rl = _local_ends(canvas, pg, st.bound_end, redo)
    if not len(rr) and bool((er0[1:] >= er0[:-1]).all()):
        # no end read again and the kept ones in their order (the rows they are on keep theirs):
        # already sorted, each compared with its own previous point. A kept end whose row keeps its
        # page transform keeps its point (the same local point, the same arithmetic): only the others
        # are transformed again
        ox, oy = (e.x.copy(), e.y.copy()) if every_e else (e.x[keep_e], e.y[keep_e])
        ro = e.rows if every_e else e.rows[keep_e]
        # (only a dirty row's page transform can have changed: compared there alone)
        cand = np.flatnonzero(dirty[er0])
        cn, co = er0[cand], ro[cand]
        again = cand[(pg.px[cn] != opg.px[co]) | (pg.py[cn] != opg.py[co]) | (pg.rotation[cn] != opg.rotation[co])]
        nx, ny = _ends_xy(pg, er0[again], lxy0[again])
        moved_xy = again[(ox[again] != nx) | (oy[again] != ny)]
        ex, ey = ox, oy  # (copies: gathered through the mask)
        ex[again], ey[again] = nx, ny
        st.ends = _Ends(er0, et0, lxy0, ex, ey)
        moved_ends = unique(np.concatenate([redo, rebound_rows, er0[moved_xy]]))
    else:
        er = np.concatenate([er0, rr])
        et = np.concatenate([et0, rt])
        lxy = np.concatenate([lxy0, rl])
        o = row_order(er, et, n=max(n, 2))
        er, et, lxy = er[o], et[o], lxy[o]
        ex, ey = _ends_xy(pg, er, lxy)
        st.ends = _Ends(er, et, lxy, ex, ey)
        was = np.full((n, 2, 2), np.nan)
        was[er0, et0, 0] = e.x[keep_e]
        was[er0, et0, 1] = e.y[keep_e]
        moved_ends = unique(np.concatenate([redo, rebound_rows, er[(was[er, et, 0] != ex) | (was[er, et, 1] != ey)]]))
    none_gone = every  # rows only added (or moved): every pair keeps both ends, none is filtered
    no_bits = np.zeros(0, np.int64)

    def live(*cols: np.ndarray, name: str = "", known: Optional[Dict[str, np.ndarray]] = None) -> Any:
        """The table's rows whose two ends remain (the first two columns, renumbered); with ``known``,
        their key column under ``name`` when it strictly increases (as the updates would find it)."""
        if known is None:
            a, b = omap[cols[0]], omap[cols[1]]
            if none_gone:
                return (a, b) + cols[2:]
            m = (a >= 0) & (b >= 0)
            return (a[m], b[m]) + tuple(c[m] for c in cols[2:])
        aligned = name == "aligned"
        a, b, count, k = (renumber_pairs(omap, cols[0], cols[1], cols[2], ALIGNED_SHIFT_A, ALIGNED_SHIFT_B) if aligned
                          else renumber_pairs(omap, cols[0], cols[1], no_bits, PAIR_SHIFT, 0))
        if k is not None:
            known[name] = k
        if count == len(a):
            return (a, b) + cols[2:]
        m = (a >= 0) & (b >= 0)
        return (a[m], b[m]) + tuple(c[m] for c in cols[2:])
    for key, tb in old.tables.items():
        touch_tol, near_gap, align_tol = key
        ci, co = omap[tb.inside[0]], omap[tb.inside[1]]
        orphan = ci[(ci >= 0) & (co < 0)]
        inside = (ci, co) if none_gone else (ci[(ci >= 0) & (co >= 0)], co[(ci >= 0) & (co >= 0)])
        # the tables carried through a row map that keeps the rows' order stay sorted by key: the
        # updates splice them at the pairs of the changed rows (the removed rows' pairs are gone
        # already) and keep the keys for the next version's; otherwise they sort
        keys: Dict[str, np.ndarray] = {}
        # the key columns of the renumbered tables, found with them (one pass each)
        found: Dict[str, np.ndarray] = {}
        st.tables[key] = _PageTables(
            _inside_update(st, inside, changed, subpos[orphan]),
            _overlaps_update(st, live(*tb.overlaps, name="overlaps", known=found), changed, before, found, keys),
            _touches_update(st, live(*tb.touches), changed, moved_ends, touch_tol),
            _near_update(st, live(*tb.near, name="near", known=found), changed, np.concatenate([before, gone_boxes]),
                         near_gap, found, keys),
            _aligned_update(st, old, live(*tb.aligned, name="aligned", known=found), changed, before, align_tol,
                            gone_boxes, found, keys),
            keys=keys,
        )
    if old.occ_memo:
        _carry_occlusion_through(st, old, omap, ok, fresh, rec, shifted, rebound_rows, new_of_kept, kept_old, kruns,
                                 differ, dirty)
    return st


def _dirty_rows(pg: _Page, fresh: np.ndarray, new: np.ndarray, differ: np.ndarray, rec: Optional[np.ndarray],
                shifted: Optional[np.ndarray], rebound_rows: np.ndarray) -> np.ndarray:
    """The page rows (a mask) whose inputs may differ from the carried version's: the new rows
    ``fresh``, the kept rows (now ``new``) whose box changed (``differ``), the subtrees of the rows
    whose record was replaced (``rec``, canvas rows), the rows that moved in the tree (``shifted``)
    and the rebound connectors. A kept row's other inputs (type, opacity, flags, page transform,
    frames) change only with its own record or an ancestor's, or with its place in the tree."""
    dirty = np.zeros(len(pg.ids), bool)
    dirty[fresh] = True
    dirty[new[differ]] = True
    if rec is not None and len(rec):
        pr = pg.page_pos[rec]
        for r in pr[pr >= 0].tolist():
            dirty[r:r + pg.size[r]] = True
    if shifted is not None:
        dirty |= shifted
    dirty[rebound_rows] = True
    return dirty


def _carry_occlusion_through(st: _PageState, old: _PageState, omap: np.ndarray, ok: np.ndarray, fresh: np.ndarray,
                             rec: Optional[np.ndarray], shifted: Optional[np.ndarray],
                             rebound_rows: np.ndarray, new: Optional[np.ndarray] = None,
                             kept_old: Optional[np.ndarray] = None, runs: Optional[np.ndarray] = None,
                             differ: Optional[np.ndarray] = None, dirty: Optional[np.ndarray] = None) -> None:
    """Let ``st`` (a later version of ``old``'s page, rows mapped by ``omap``) compute the painted
    occluders again only where the versions between reach, as after a move: the new rows, the kept
    rows whose box changed, the subtrees of the rows whose record was replaced, the rows that
    moved in the tree and the rebound connectors are the dirty ones; the removed rows' boxes
    count as boxes left. ``new``: ``omap[:-1][ok]``, when the caller has it; ``kept_old`` and
    ``runs``: ``flatnonzero(ok)`` and the runs of it to ``new`` (see :func:`~spatialobs.canvas.rowmaps.runs`), with ``new``;
    ``differ``: whether each kept row's box changed (:func:`~spatialobs.canvas.rowmaps.rows_differ`),
    with them; ``dirty``: the dirty rows' mask (:func:`_dirty_rows`), when the caller has it."""
    pg, opg = st.pg, old.pg
    n = len(pg.ids)
    if new is None or kept_old is None:
        kept_old = np.flatnonzero(ok)
        new = omap[:-1][ok]  # new page row of each kept old row
        runs = map_runs(kept_old, new)
        differ = None
    if dirty is None:
        if differ is None:
            differ = rows_differ(opg.boxes, kept_old, pg.boxes, new, runs)
        dirty = _dirty_rows(pg, fresh, new, differ, rec, shifted, rebound_rows)
    at = np.flatnonzero(dirty[new])  # the kept rows that are dirty, by position among the kept
    gone = ~ok
    before = np.concatenate([opg.boxes[kept_old[at]], opg.boxes[gone]])
    # a kept row that did not move in the tree keeps its paint order against the rows that did not;
    # a moved or removed row's order then is not known: above every row
    was = new[at]
    rank = np.concatenate([np.where(shifted[was], n, was) if shifted is not None else was,
                           np.full(len(before) - len(at), n)]).astype(np.int64)
    memo: Dict[Any, Tuple[np.ndarray, np.ndarray]] = {}
    for key, (rows_o, occ_o) in old.occ_memo.items():
        rn = omap[rows_o]
        live = rn >= 0
        on = omap[occ_o][live]  # -1 maps to the last slot, which keeps -1
        rn = rn[live]
        o = np.argsort(rn, kind="stable")
        memo[key] = (rn[o], on[o])
    dirty_rows = np.flatnonzero(dirty)
    st.occ_carry = (memo, dirty_rows, before, rank)
    _carry_segments(st, old, set(dirty_rows.tolist()), omap)


def _tree_moved(pg: _Page, opg: _Page, omap: np.ndarray, ok: np.ndarray,
                rec: Optional[np.ndarray], new: Optional[np.ndarray] = None,
                kept_old: Optional[np.ndarray] = None) -> Optional[np.ndarray]:
    """Page rows (a mask) that may have moved in the tree since the carried version: None when
    every kept row keeps its parent and the kept rows their paint order (rows only appended
    or removed); otherwise the subtrees of the rows whose record was replaced (``rec``,
    canvas rows) and of the kept rows whose parent is another row now, since a row changes
    parent or place only through its own record or its parent's arrival (the other rows
    keep their order and their ancestors). ``new`` and ``kept_old``: ``omap[:-1][ok]`` and
    ``flatnonzero(ok)``, when the caller has them."""
    if new is None or kept_old is None:
        new = omap[:-1][ok]  # new page row of each kept old row, in old page order
        kept_old = np.flatnonzero(ok)
    moved, in_order = reparented(new, kept_old, opg.parent, pg.parent, omap)
    if not len(new) or (not len(moved) and in_order):
        return None
    out = np.zeros(len(pg.ids), bool)
    roots = moved
    if rec is not None and len(rec):
        pr = pg.page_pos[rec]
        roots = np.concatenate([moved, pr[pr >= 0]])
    for r in roots.tolist():
        out[r:r + pg.size[r]] = True
    return out


def _carried_bindings(canvas: Canvas, old: _PageState, omap: np.ndarray, pg: _Page,
                      rebound: Optional[AbstractSet[str]], reorder: bool
                      ) -> Tuple[Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray]:
    """``old``'s bindings in the new page rows, with those of the ``rebound`` connectors read
    again from the canvas, sorted as :func:`_bindings` sorts them (None when a binding lost
    its row and no binding was written); and the page rows of the rebound connectors."""
    bf, bt, bterm = old.bindings
    bf, bt = omap[bf], omap[bt]
    live = (bf >= 0) & (bt >= 0)
    if not rebound:
        if not live.all():
            return None, np.zeros(0, np.int64)
        if not reorder:
            return (bf, bt, bterm), np.zeros(0, np.int64)
        o = row_order(bf, bt, bterm, n=len(pg.ids))
        return (bf[o], bt[o], bterm[o]), np.zeros(0, np.int64)
    row_of = canvas._geometry().row
    pos = pg.page_pos
    n = len(pg.ids)
    again = np.asarray(sorted(p for i in rebound if (r := row_of.get(i)) is not None and (p := int(pos[r])) >= 0),
                       dtype=np.int64)
    blist = [b for i in rebound for b in canvas._bindings_from(i)]
    nf, nt, nterm = _binding_rows(blist, row_of)
    nf = np.where(nf >= 0, pos[np.maximum(nf, 0)], -1) if len(pos) else np.full(len(nf), -1, np.int64)
    nt = np.where(nt >= 0, pos[np.maximum(nt, 0)], -1) if len(pos) else np.full(len(nt), -1, np.int64)
    ok = (nf >= 0) & (nt >= 0)
    nf, nt, nterm = nf[ok], nt[ok], nterm[ok]
    if (not reorder and n < 2 ** 30 and bool(((bterm == 0) | (bterm == 1)).all())
            and bool(((nterm == 0) | (nterm == 1)).all())):
        # a row map that keeps the rows' order keeps the carried bindings sorted: the rebound connectors'
        # are found by binary search (sorted by connector), dropped, and the new ones merged in by key
        # (no new binding's connector is a kept binding's, so no key is both kept and new)
        bf, bt, bterm = bf[live], bt[live], bterm[live]
        drop = rows_at(bf, again)
        if len(drop):
            keep = np.ones(len(bf), bool)
            keep[drop] = False
            bf, bt, bterm = bf[keep], bt[keep], bterm[keep]
        o = row_order(nf, nt, nterm, n=n)
        nf, nt, nterm = nf[o], nt[o], nterm[o]
        at = np.searchsorted((bf * n + bt) * 2 + bterm, (nf * n + nt) * 2 + nterm)
        return (np.insert(bf, at, nf), np.insert(bt, at, nt), np.insert(bterm, at, nterm)), again
    live &= ~_mask_of(again, n)[np.maximum(bf, 0)]
    bf = np.concatenate([bf[live], nf])
    bt = np.concatenate([bt[live], nt])
    bterm = np.concatenate([bterm[live], nterm])
    o = row_order(bf, bt, bterm, n=n)
    return (bf[o], bt[o], bterm[o]), again


def _closed_hits(st: _PageState, q: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(solid position, query) pairs whose boxes intersect (closed), from the index and the stale rows."""
    memo = st.hits_memo
    if memo is not None and len(q) <= 64:
        key = np.ascontiguousarray(q, dtype=np.float64).tobytes()
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = _closed_hits_of(st, q)
            hit[0].flags.writeable = hit[1].flags.writeable = False  # (shared by the callers)
        return hit
    return _closed_hits_of(st, q)


#: Most index hits (and stale rows times queries) :func:`_closed_hits_of` filters in plain Python:
#: a few values, where numpy's per-call cost was most of the time (an edit asks for many small sets).
_HITS_AT_ONCE = 64


def _closed_hits_few(st: _PageState, q: np.ndarray, h: np.ndarray, j: np.ndarray, stale: np.ndarray
                     ) -> Tuple[np.ndarray, np.ndarray]:
    """The end of :func:`_closed_hits_of` for a few hits and stale rows, on Python values: the index's
    hits ``(h, j)`` without the stale rows, then each stale row's hits among the queries (stale row by
    stale row, query by query), the same pairs in the same order as the numpy passes."""
    hl, jl = h.tolist(), j.tolist()
    if not len(stale):
        return np.array(hl, np.int64), np.array(jl, np.int64)
    sl = stale.tolist()
    gone = set(sl)
    out_h = [a for a in hl if a not in gone]
    out_j = [b for a, b in zip(hl, jl) if a not in gone]
    ql = np.ascontiguousarray(q, dtype=np.float64).tolist()
    for r, b in zip(sl, st.sb[stale].tolist()):
        for k, x in enumerate(ql):
            if b[0] <= x[2] and x[0] <= b[2] and b[1] <= x[3] and x[1] <= b[3]:
                out_h.append(r)
                out_j.append(k)
    return np.array(out_h, np.int64), np.array(out_j, np.int64)


def _closed_hits_of(st: _PageState, q: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`_closed_hits`, computed."""
    ix = st.index
    assert ix is not None
    stale = st.stale  # (sorted: the index's answers for them are dropped by a search, not a page-length mask)
    hi: List[np.ndarray] = []
    hj: List[np.ndarray] = []
    imap = st.index_map
    if len(q):
        # every query's hits in query order (one call), then mapped and filtered at once
        h, j = ix.query_many(np.ascontiguousarray(q, dtype=np.float64))
        if imap is not None and len(h):
            h = imap[h]
            ok = h >= 0
            h, j = h[ok], j[ok]
        if len(h) <= _HITS_AT_ONCE and len(stale) * len(q) <= _HITS_AT_ONCE:
            return _closed_hits_few(st, q, h, j, stale)
        if len(stale) and len(h):
            ok = ~in_sorted(stale, h)
            h, j = h[ok], j[ok]
        hi.append(h)
        hj.append(j)
    if len(stale) and len(q):
        b = st.sb[stale]
        m = ((b[:, None, 0] <= q[None, :, 2]) & (q[None, :, 0] <= b[:, None, 2])
             & (b[:, None, 1] <= q[None, :, 3]) & (q[None, :, 1] <= b[:, None, 3]))
        si, sj = np.nonzero(m)
        hi.append(stale[si])
        hj.append(sj.astype(np.int64))
    if not hi:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(hi).astype(np.int64), np.concatenate(hj)


def _pos_area(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Positive-area intersection, as the kernels test it."""
    return ((np.minimum(A[:, 2], B[:, 2]) > np.maximum(A[:, 0], B[:, 0]))
            & (np.minimum(A[:, 3], B[:, 3]) > np.maximum(A[:, 1], B[:, 1])))


def _contains(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Closed containment of ``B`` in ``A``, as the kernels test it."""
    return (A[:, 0] <= B[:, 0]) & (B[:, 2] <= A[:, 2]) & (A[:, 1] <= B[:, 1]) & (B[:, 3] <= A[:, 3])


def _gap(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The kernels' gap: sqrt(dx*dx + dy*dy) of the separations (correctly rounded, so the same bits)."""
    dx = np.maximum(0.0, np.maximum(B[:, 0] - A[:, 2], A[:, 0] - B[:, 2]))
    dy = np.maximum(0.0, np.maximum(B[:, 1] - A[:, 3], A[:, 1] - B[:, 3]))
    return np.sqrt(dx * dx + dy * dy)


def _grown(b: np.ndarray, g: float) -> np.ndarray:
    """Boxes grown by a little more than ``g`` (candidates for a gap <= g; the gap decides)."""
    m = g + 1e-9 * (g + np.abs(b).max(axis=1)) + 1e-300
    return np.column_stack([b[:, 0] - m, b[:, 1] - m, b[:, 2] + m, b[:, 3] + m])


def _mask_of(rows: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros(n, bool)
    m[rows] = True
    return m


def _merged(keep: Sequence[np.ndarray], keep_key: np.ndarray, new: Sequence[np.ndarray],
            new_key: np.ndarray) -> Optional[List[np.ndarray]]:
    """Columns ``keep`` (sorted by ``keep_key``) with the rows ``new`` merged in by ``new_key``:
    the order a stable sort by key of ``keep`` followed by ``new`` gives, in time linear in the
    kept rows. None when ``keep_key`` is not sorted (the caller sorts)."""
    if len(keep_key) > 1 and not bool((keep_key[1:] >= keep_key[:-1]).all()):
        return None
    o = np.argsort(new_key, kind="stable")
    at = np.searchsorted(keep_key, new_key[o], "right")
    return [np.insert(k, at, v[o]) for k, v in zip(keep, new)]


def _sorted_keys(known: Optional[Dict[str, np.ndarray]], name: str, keys: Any) -> Optional[np.ndarray]:
    """The table's key column: the one kept in ``known``, else ``keys()`` when strictly increasing, else None."""
    if known is not None:
        got = known.get(name)
        if got is not None:
            return got
    k = keys()
    if len(k) > 1 and not bool((k[1:] > k[:-1]).all()):
        return None  # carried through a row map that moved rows in the tree: the caller sorts
    return k


#: Whether :func:`_overlaps_update` finds the pairs that enter and leave by compiled steps
#: (``_cpagetables.overlaps_found``, ``pairs_of``) when its table has sorted keys and the boxes read are
#: finite; False: the numpy steps (the twin, for tests).
OVERLAPS_KERNEL = True


def _overlaps_spliced(old: Tuple[np.ndarray, np.ndarray], keys: np.ndarray, drop: np.ndarray,
                      found: Tuple[np.ndarray, np.ndarray], out: Optional[Dict[str, np.ndarray]],
                      inplace: bool) -> Tuple[np.ndarray, np.ndarray]:
    """The ``overlaps`` table ``old`` (sorted key column ``keys``) without the pairs at ``drop`` and with
    the pairs ``found``: spliced, in place when ``inplace`` allows; the key column put in ``out``."""
    oa, ob = old
    na, nb = found
    if inplace and splice_in_place((oa, ob), keys, drop, (na, nb), pair_keys(na, nb)):
        (ra, rb), rk = (oa, ob), keys
    else:
        (ra, rb), rk = splice((oa, ob), keys, drop, (na, nb), pair_keys(na, nb))
    if out is not None:
        out["overlaps"] = rk
    return ra, rb


def _overlaps_update(st: _PageState, old: Tuple[np.ndarray, np.ndarray], changed: np.ndarray,
                     before: Optional[np.ndarray] = None, known: Optional[Dict[str, np.ndarray]] = None,
                     out: Optional[Dict[str, np.ndarray]] = None, inplace: bool = False) -> Tuple[np.ndarray, np.ndarray]:
    """``overlaps`` after the boxes of solid positions ``changed`` changed.

    With ``before`` (their boxes before; ``changed`` sorted) the pairs of the changed rows are
    found by their keys (see :func:`_pairs_of`) and the table is spliced; the key column is
    put in ``out``. With ``inplace`` (the old table is used up) a splice that keeps the table's
    length is written into its columns (see :func:`~spatialobs.canvas.pagetables.splice_in_place`).
    """
    pg, sub, sb = st.pg, st.sub, st.sb
    oa, ob = old
    if not len(changed):
        if out is not None and known is not None and "overlaps" in known:
            out["overlaps"] = known["overlaps"]
        return old
    keys = None if before is None else _sorted_keys(known, "overlaps", lambda: pair_keys(oa, ob))
    if (keys is not None and before is not None and OVERLAPS_KERNEL and _cpt is not None
            and int64_columns(keys, oa, ob, changed, sub) and pg.size.dtype == np.int64):
        # the pairs found and those that leave (their ends' boxes met before), by the compiled steps
        found = _cpt.overlaps_found(sb, sub, pg.boxes, pg.size, changed, *_i64_hits(_closed_hits(st, sb[changed])))
        if found is not None:
            drop = _cpt.pairs_of(keys, oa, sub, changed, *_i64_hits(_closed_hits(st, before)))
            return _overlaps_spliced(old, keys, drop, found, out, inplace)
    i, j = _closed_hits(st, sb[changed])
    c = changed[j]
    ok = (i != c) & _pos_area(sb[i], sb[c])
    a, b = np.minimum(i, c)[ok], np.maximum(i, c)[ok]
    key = unique(a * len(sb) + b)
    na, nb = _overlap_filter(pg, sub[key // len(sb)], sub[key % len(sb)])
    if keys is not None and before is not None:
        # a pair of a changed row c with an unchanged row x had x's box overlapping c's box before
        drop = _pairs_of(st, oa, keys, changed, before)
        return _overlaps_spliced(old, keys, drop, (na, nb), out, inplace)
    isc = _mask_of(sub[changed], len(pg.ids))
    keep = ~(isc[oa] | isc[ob])
    ka, kb, big = oa[keep], ob[keep], len(pg.ids) + 1
    got = _merged((ka, kb), ka * big + kb, (na, nb), na * big + nb)
    if got is not None:
        return got[0], got[1]
    a, b = np.concatenate([ka, na]), np.concatenate([kb, nb])
    o = row_order(a, b, n=len(pg.ids))
    return a[o], b[o]


def _pairs_of(st: _PageState, ta: np.ndarray, keys: np.ndarray, pos: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Positions (sorted) in a table with first column ``ta`` and key column ``keys`` of the pairs
    with an end at one of the solid positions ``pos`` (sorted), whose boxes were ``boxes`` when
    the table was found: every other end of such a pair is a row whose box met that box then.

    The pairs a row is first in are a run of the table (``ta`` is sorted); those it is second in
    are looked up by key from the rows meeting its box (closed, from the index). A partner whose
    box changed too is one of ``pos`` and finds the pair as its first end.
    """
    rows = st.sub[pos]  # increasing: the solid positions are in page-row order
    hi, hj = _closed_hits(st, boxes)
    second = keys_at(keys, pair_keys(st.sub[hi], rows[hj]))
    first = rows_at(ta, rows)
    if not len(second):
        return first
    return unique(np.concatenate([first, second]))


#: Whether :func:`_inside_update` finds the rows to look at again and their containers by compiled steps
#: after its index queries (``_cpagetables.inside_redo``, ``inside_found``); False: the numpy steps (the
#: twin, for tests).
INSIDE_KERNEL = True


def _inside_update(st: _PageState, old: Tuple[np.ndarray, np.ndarray], changed: np.ndarray,
                   orphans: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    """``inside`` after the boxes of solid positions ``changed`` changed (and the
    containers of the solid positions ``orphans`` were removed)."""
    pg, sub, sb = st.pg, st.sub, st.sb
    ci, co = old
    if orphans is None:
        orphans = np.zeros(0, np.int64)
    if not len(changed) and not len(orphans):
        return old
    n = len(pg.ids)
    subpos = st.subpos
    if (INSIDE_KERNEL and _cpt is not None and int64_columns(ci, co, changed, orphans, sub, subpos)
            and pg.size.dtype == np.int64):
        redo = _cpt.inside_redo(sb, changed, *_i64_hits(_closed_hits(st, sb[changed])), ci, co, sub, subpos, orphans)
        if redo is not None:
            got = _cpt.inside_found(sb, sub, pg.size, redo, *_i64_hits(_closed_hits(st, sb[redo])), ci, co)
            if got is not None:
                return got
    isc = _mask_of(sub[changed], n)
    # rows whose tightest container can differ: the changed ones, those a changed row held, those one holds
    # now (strictly: a box the same as a changed row's holds none of its containers)
    i, j = _closed_hits(st, sb[changed])
    c = changed[j]
    held = i[(i != c) & _contains(sb[c], sb[i]) & (sb[c] != sb[i]).any(axis=1)]
    redo = unique(np.concatenate([changed, subpos[ci[isc[co]]], held, orphans]))
    i, j = _closed_hits(st, sb[redo])
    r = redo[j]
    ok = (i != r) & _contains(sb[i], sb[r]) & (sb[i] != sb[r]).any(axis=1)
    i, r = i[ok], r[ok]
    no, ni = sub[i], sub[r]
    kin = ~_related(pg, no, ni)
    no, ni, b = no[kin], ni[kin], sb[i[kin]]
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    o = np.lexsort((-no, area, ni))
    no, ni = no[o], ni[o]
    first = run_starts(ni)
    keep = ~_mask_of(sub[redo], n)[ci]
    ci, co = np.concatenate([ci[keep], ni[first]]), np.concatenate([co[keep], no[first]])
    o = np.argsort(ci, kind="stable")
    return ci[o], co[o]


#: Most changed boxes whose touching ends are found by testing every unbound end against each
#: (*ours*): beyond, the ends' squares are queried against an index of the changed boxes.
_TOUCH_DIRECT = 8


def _touch_strip(b: np.ndarray, touch_tol: float) -> Tuple[float, float]:
    """An x range holding every end whose square (:func:`_end_squares`) meets box ``b`` with positive
    area: the box's x extent grown by ``touch_tol`` and a margin past the squares' rounding."""
    m = 1e-6 * (abs(float(b[0])) + abs(float(b[2])) + touch_tol) + 1e-300
    return float(b[0]) - touch_tol - m, float(b[2]) + touch_tol + m


def _touches_of_ends(st: _PageState, mk: np.ndarray, touch_tol: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``touches`` pairs of the ends at positions ``mk`` of ``st.ends``, against every solid shape."""
    pg, sub, sb, e = st.pg, st.sub, st.sb, st.ends
    assert e is not None
    squares = _end_squares(e.x[mk], e.y[mk], touch_tol)
    i, j = _closed_hits(st, squares)
    k = mk[j]
    ok = _pos_area(sb[i], squares[j])
    return _touch_filter(pg, e.rows, e.term, e.x, e.y, sub[i[ok]], k[ok], touch_tol)


def _touches_update(st: _PageState, old: Tuple[np.ndarray, np.ndarray, np.ndarray], changed: np.ndarray,
                    moved_ends: np.ndarray, touch_tol: float, before: Optional[np.ndarray] = None,
                    known: Optional[Dict[str, np.ndarray]] = None, out: Optional[Dict[str, np.ndarray]] = None,
                    inplace: bool = False) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``touches`` after the boxes of solid positions ``changed`` changed and the unbound ends of the
    connectors ``moved_ends`` (page rows, sorted) moved.

    With ``before`` (the changed boxes before), ``out`` and the table's sorted key column in
    ``known`` (``(connector * 2 + terminal) << 32 | shape``), the pairs that leave are found by
    key, in work that follows the changed rows (see :func:`_touches_keyed`); otherwise by a mask
    over the table. Either way the key column of a table kept sorted is put in ``out``. With
    ``inplace`` (the old table is used up) a splice that keeps the table's length is written into
    its columns.
    """
    pg, sub, sb, e = st.pg, st.sub, st.sb, st.ends
    assert e is not None
    tc, ts, tt = old
    keys0 = known.get("touches") if known is not None else None
    if (keys0 is not None and before is not None and out is not None and e.by_x is not None
            and len(changed) <= _TOUCH_DIRECT):
        got = _touches_keyed(st, old, keys0, changed, before, moved_ends, touch_tol, inplace, out)
        if got is not None:
            return got
    n = len(pg.ids)
    isc = _mask_of(sub[changed], n)
    ism = _mask_of(moved_ends, n)
    keep = ~(isc[ts] | ism[tc])
    parts = [(tc[keep], ts[keep], tt[keep])]
    # moved ends against every shape
    mk = rows_at(e.rows, moved_ends)  # (the ends are sorted by row)
    if len(mk):
        parts.append(_touches_of_ends(st, mk, touch_tol))
    # the other ends against the changed shapes
    if len(changed) and len(e.rows):
        rest = np.flatnonzero(~ism[e.rows]) if len(mk) else None
        if len(changed) <= _TOUCH_DIRECT and e.by_x is not None:
            # each changed box against the squares of the ends in its x strip (found in the sorted x
            # values, a little wider: the kernel's positive-area test then decides)
            xs, xp = e.by_x
            for c in changed.tolist():
                xlo, xhi = _touch_strip(sb[c], touch_tol)
                lo = int(np.searchsorted(xs, xlo, "left"))
                hi = int(np.searchsorted(xs, xhi, "right"))
                k = xp[lo:hi]
                if len(mk):
                    k = k[~ism[e.rows[k]]]
                k = np.sort(k[_pos_area(_end_squares(e.x[k], e.y[k], touch_tol), sb[c:c + 1])])
                if len(k):
                    parts.append(_touch_filter(pg, e.rows, e.term, e.x, e.y, np.full(len(k), sub[c], np.int64), k,
                                               touch_tol))
        elif len(changed) <= _TOUCH_DIRECT:
            # each changed box against the squares of the ends in its x strip, as above but found by
            # one pass over the x values (not sorted), the kernel's positive-area test deciding
            xr = e.x if rest is None else e.x[rest]
            for c in changed.tolist():
                xlo, xhi = _touch_strip(sb[c], touch_tol)
                k = np.flatnonzero((xr >= xlo) & (xr <= xhi))
                if rest is not None:
                    k = rest[k]
                k = k[_pos_area(_end_squares(e.x[k], e.y[k], touch_tol), sb[c:c + 1])]
                if len(k):
                    parts.append(_touch_filter(pg, e.rows, e.term, e.x, e.y, np.full(len(k), sub[c], np.int64), k,
                                               touch_tol))
        else:
            r = np.arange(len(e.rows)) if rest is None else rest
            if len(r):
                p, _ = G.overlap_pairs_between(G.BoxIndex(sb[changed]), _end_squares(e.x, e.y, touch_tol)[r])
                parts.append(_touch_filter(pg, e.rows, e.term, e.x, e.y, sub[changed[p[0]]], r[p[1]], touch_tol))
    kc, ks, kt = parts[0]
    if len(parts) > 1:
        nc, ns, nt = (np.concatenate(v) for v in zip(*parts[1:]))
    else:
        nc = ns = nt = np.zeros(0, np.int64)
    if bool(((tt == 0) | (tt == 1)).all()) and bool(((nt == 0) | (nt == 1)).all()):
        # one row per (connector, terminal, shape): keyed as the table is sorted
        keys = pair_keys(tc * 2 + tt, ts)
        if len(keys) < 2 or bool((keys[1:] > keys[:-1]).all()):
            (rc, rs, rt), rk = splice((tc, ts, tt), keys, np.flatnonzero(~keep), (nc, ns, nt), pair_keys(nc * 2 + nt, ns))
            if out is not None:
                out["touches"] = rk
            return rc, rs, rt
    tc, ts, tt = (np.concatenate(v) for v in zip(*parts))
    o = np.lexsort((ts, tt, tc))
    return tc[o], ts[o], tt[o]


#: Whether :func:`_touches_keyed` runs its loop over the changed boxes compiled
#: (``_cpagetables.touches_strips``); False: the numpy loop (the twin, for tests).
TOUCHES_KERNEL = True


def _touches_keyed(st: _PageState, old: Tuple[np.ndarray, np.ndarray, np.ndarray], keys: np.ndarray,
                   changed: np.ndarray, before: np.ndarray, moved_ends: np.ndarray, touch_tol: float, inplace: bool,
                   out: Dict[str, np.ndarray]) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`_touches_update` by key: the pairs that leave are those of the moved connectors (a run
    of the table each) and those of a changed shape with an end that did not move, whose square met
    the shape's box before (found among the ends of that box's x strip, then by key). The table is
    spliced there. None when a terminal code is not 0 or 1 (the caller sorts)."""
    pg, sub, sb, e = st.pg, st.sub, st.sb, st.ends
    assert e is not None and e.by_x is not None
    tc, ts, tt = old
    xs, xp = e.by_x
    mv = moved_ends

    def strip(box: np.ndarray) -> np.ndarray:
        """The ends of connectors not moved whose square meets ``box`` with positive area, sorted."""
        xlo, xhi = _touch_strip(box, touch_tol)
        k = xp[int(np.searchsorted(xs, xlo, "left")):int(np.searchsorted(xs, xhi, "right"))]
        if len(mv) and len(k):
            k = k[~in_sorted(mv, e.rows[k])]
        return np.sort(k[_pos_area(_end_squares(e.x[k], e.y[k], touch_tol), box[None, :])])

    drops = [rows_at(tc, mv)]  # (the table is sorted by connector first)
    parts: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    mk = rows_at(e.rows, mv)  # moved ends against every shape (the ends are sorted by row)
    if len(mk):
        parts.append(_touches_of_ends(st, mk, touch_tol))
    got = None
    if (TOUCHES_KERNEL and _cpt is not None and int64_columns(xp, e.rows, e.term, mv, keys, changed, sub)
            and xs.dtype == e.x.dtype == e.y.dtype == sb.dtype == pg.boxes.dtype == np.float64
            and xs.flags.c_contiguous and e.x.flags.c_contiguous and e.y.flags.c_contiguous):
        got = _cpt.touches_strips(xs, xp, e.rows, e.term, e.x, e.y, mv, keys, changed, before[:len(changed)], sb, sub,
                                  pg.boxes, float(touch_tol))
    if got is not None:
        drops.append(got[0])
        parts.append(got[1:])
    for c, was in zip(changed.tolist() if got is None else [], before):
        k = strip(was)
        if len(k):
            drops.append(keys_at(keys, pair_keys(e.rows[k] * 2 + e.term[k], np.full(len(k), sub[c], np.int64))))
        k = strip(sb[c])
        if len(k):
            parts.append(_touch_filter(pg, e.rows, e.term, e.x, e.y, np.full(len(k), sub[c], np.int64), k, touch_tol))
    if parts:
        nc, ns, nt = (np.concatenate(v) for v in zip(*parts))
    else:
        nc = ns = nt = np.zeros(0, np.int64)
    if not bool(((nt == 0) | (nt == 1)).all()):
        return None
    drop = unique(np.concatenate(drops))
    nk = pair_keys(nc * 2 + nt, ns)
    if inplace and splice_in_place((tc, ts, tt), keys, drop, (nc, ns, nt), nk):
        out["touches"] = keys
        return tc, ts, tt
    (rc, rs, rt), rk = splice((tc, ts, tt), keys, drop, (nc, ns, nt), nk)
    out["touches"] = rk
    return rc, rs, rt


def _knn(st: _PageState, rows: np.ndarray, gap: float, k: int = 4) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keeper, kept, gap) of the ``k`` nearest non-overlapping solid boxes within ``gap`` of each of ``rows``."""
    sb = st.sb
    i, j = _closed_hits(st, _grown(sb[rows], gap))
    h = rows[j]
    A, B = sb[h], sb[i]
    g = _gap(A, B)
    ok = (i != h) & ~_pos_area(A, B) & (g <= gap)
    h, i, g = h[ok], i[ok], g[ok]
    o = np.lexsort((i, g, h))
    h, i, g = h[o], i[o], g[o]
    if not len(h):
        return h, i, g
    m = np.arange(len(h)) - np.searchsorted(h, h) < k  # rank within the row's run (``h`` is sorted)
    return h[m], i[m], g[m]


#: Whether :func:`_near_update` runs its steps between the index queries compiled
#: (``_cpagetables.near_affected``, ``near_touched``, ``near_pairs``) when its table has sorted keys and
#: the boxes it reads are finite; False: the numpy steps (the twin, for tests).
NEAR_KERNEL = True


def _i64_hits(hits: Tuple[np.ndarray, np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """Index hits as the compiled steps read them: C-contiguous int64 (no copy when they are)."""
    return np.ascontiguousarray(hits[0], np.int64), np.ascontiguousarray(hits[1], np.int64)


def _near_compiled(st: _PageState, keys: np.ndarray, old: Tuple[np.ndarray, np.ndarray, np.ndarray],
                   changed: np.ndarray, before: np.ndarray, q: np.ndarray, gap: float
                   ) -> Optional[Tuple[np.ndarray, Tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """:func:`_near_update`'s pairs that leave (their positions in the table with sorted key column
    ``keys``) and the pairs that enter, found by the compiled steps around the three index queries;
    None when they do not apply (a box not finite, columns of other types: the numpy steps run)."""
    cpt = _cpt
    na, nb, _ = old
    if not (NEAR_KERNEL and cpt is not None and int64_columns(keys, na, nb, changed, st.sub, st.subpos)
            and st.pg.size.dtype == np.int64 and st.sb.dtype == np.float64):
        return None
    grown = cpt.near_grown(q, gap)
    if grown is None:
        return None
    i, j = _i64_hits(_closed_hits(st, grown))
    got = cpt.near_affected(q, i, j, st.sb, gap, changed, before)
    if got is None:
        return None
    affected, was = got
    i, j = _i64_hits(_closed_hits(st, was))
    tg = cpt.near_touched(keys, na, nb, st.sub, st.subpos, affected, i, j, st.sb, gap)
    if tg is None:
        return None
    touch_at, halo, grown = tg
    i, j = _i64_hits(_closed_hits(st, grown))
    pairs = cpt.near_pairs(st.sb, st.sub, np.ascontiguousarray(st.pg.size), halo, i, j, affected, gap, 4)
    if pairs is None:
        return None
    return touch_at, pairs


def _near_spliced(old: Tuple[np.ndarray, np.ndarray, np.ndarray], keys: np.ndarray, touch_at: np.ndarray,
                  a: np.ndarray, b: np.ndarray, g: np.ndarray, out: Optional[Dict[str, np.ndarray]], inplace: bool,
                  delta: Optional[Dict[str, Tuple[np.ndarray, ...]]]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``near`` table ``old`` (sorted key column ``keys``) without the pairs at ``touch_at`` and with
    the pairs ``(a, b, g)``: spliced, in place when ``inplace`` allows; the key column put in ``out``,
    the ends of the pairs that left and entered in ``delta``."""
    na, nb, ng = old
    if delta is not None:
        delta["near"] = (na[touch_at], nb[touch_at], a, b)
    if inplace and splice_in_place((na, nb, ng), keys, touch_at, (a, b, g), pair_keys(a, b)):
        (ra, rb, rg), rk = (na, nb, ng), keys
    else:
        (ra, rb, rg), rk = splice((na, nb, ng), keys, touch_at, (a, b, g), pair_keys(a, b))
    if out is not None:
        out["near"] = rk
    return ra, rb, rg


def _near_update(st: _PageState, old: Tuple[np.ndarray, np.ndarray, np.ndarray], changed: np.ndarray,
                 before: np.ndarray, gap: float, known: Optional[Dict[str, np.ndarray]] = None,
                 out: Optional[Dict[str, np.ndarray]] = None, inplace: bool = False,
                 delta: Optional[Dict[str, Tuple[np.ndarray, ...]]] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``near`` after the boxes of solid positions ``changed`` changed; ``before`` holds
    the boxes they had, then those of removed rows.

    With ``out`` (``changed`` sorted, ``before`` their boxes in that order, then the removed rows')
    the pairs of the affected rows are found by their keys (see :func:`_pairs_of`: a removed row's
    pairs left the table with it) and the table is spliced; the key column
    is put in ``out``. With ``inplace`` (the old table is used up) a splice that keeps the table's
    length is written into its columns. A splice puts the ends of the pairs that left and of those
    that entered in ``delta`` (every pair of a row whose box changed is among them).
    """
    pg, sub, sb = st.pg, st.sub, st.sb
    na, nb, ng = old
    if not len(changed) and not len(before):
        if out is not None and known is not None and "near" in known:
            out["near"] = known["near"]
        return old
    n, m = len(pg.ids), len(sub)
    subpos = st.subpos
    keys = None
    if out is not None and len(before) >= len(changed):
        keys = _sorted_keys(known, "near", lambda: pair_keys(na, nb))
    # rows whose nearest can differ: the changed ones and those within the gap of one, before or after
    # (a row overlapping a changed box with positive area, then and now, never had it as a candidate)
    q = np.concatenate([sb[changed], before])
    if keys is not None:
        found = _near_compiled(st, keys, old, changed, before, q, gap)
        if found is not None:
            return _near_spliced(old, keys, found[0], *found[1], out, inplace, delta)
    i, j = _closed_hits(st, _grown(q, gap))
    ok = (_gap(q[j], sb[i]) <= gap) & ~_pos_area(q[j], sb[i])  # a changed row i is in the set anyway
    affected = unique(np.concatenate([changed, i[ok]]))
    touch_at: Optional[np.ndarray] = None
    if keys is not None:
        # an affected row's pairs: their other end lay within the gap of its box then
        was = sb[affected]
        at = np.searchsorted(changed, affected)
        hit = at < len(changed)
        hit[hit] = changed[at[hit]] == affected[hit]
        was[hit] = before[at[hit]]
        touch_at = _pairs_of(st, na, keys, affected, _grown(was, gap))
        halo = unique(np.concatenate([affected, subpos[na[touch_at]], subpos[nb[touch_at]]]))
    else:
        is_r = _mask_of(sub[affected], n)  # the same rows by page row: the table's ends are read once each
        touch = is_r[na] | is_r[nb]
        halo = unique(np.concatenate([affected, subpos[na[touch]], subpos[nb[touch]]]))
    h, k, g = _knn(st, halo, gap)
    sel = in_sorted(affected, h) | in_sorted(affected, k)  # (``affected`` is sorted and distinct)
    h, k, g = h[sel], k[sel], g[sel]
    a, b = np.minimum(h, k), np.maximum(h, k)
    key, first = unique_first(a * m + b)
    a, b, g = sub[key // m], sub[key % m], g[first]
    kin = ~_related(pg, a, b)
    a, b, g = a[kin], b[kin], g[kin]
    if keys is not None and touch_at is not None:
        return _near_spliced(old, keys, touch_at, a, b, g, out, inplace, delta)
    ka, kb, kg, big = na[~touch], nb[~touch], ng[~touch], n + 1
    got = _merged((ka, kb, kg), ka * big + kb, (a, b, g), a * big + b)
    if got is not None:
        return got[0], got[1], got[2]
    a = np.concatenate([ka, a])
    b = np.concatenate([kb, b])
    g = np.concatenate([kg, g])
    o = row_order(a, b, n=n)
    return a[o], b[o], g[o]


#: Far bound of a strip query across the page (closed: every finite box meets it).
_BIG = float(np.finfo(np.float64).max)


def _strip_hits(st: _PageState, axis: int, lo: float, hi: float) -> np.ndarray:
    """Solid positions whose box meets the strip x in [lo, hi] (``axis`` 0) or y in [lo, hi] (1), each once."""
    q = [lo, -_BIG, hi, _BIG] if axis == 0 else [-_BIG, lo, _BIG, hi]
    i, _ = _closed_hits(st, np.array([q]))  # one query: each position once
    return i


def _window(st: _PageState, kind: int, lo: float, hi: float,
            strip: Optional[Tuple[float, float, np.ndarray]] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Solid positions whose line value of kind ``kind`` lies in [lo, hi] (each once), and those values.

    A box's left, centre and right values lie within its x extent (its top, middle and
    bottom within its y extent), so every such box meets the strip x in [lo, hi] (y in
    [lo, hi]): the index gives the candidates, the values decide. ``strip``: (lo, hi, the
    positions :func:`_strip_hits` gives for that strip of the kind's axis), used when it holds
    [lo, hi] (the same positions, in another order).
    """
    if strip is not None and strip[0] <= lo and hi <= strip[1]:
        i = strip[2]
    else:
        i = _strip_hits(st, int(kind >= 3), lo, hi)
    w = _line_values(st.sb[i], kind)
    m = (w >= lo) & (w <= hi)
    return i[m], w[m]


def _run_span(s: np.ndarray, lo: float, hi: float, tol: float) -> Tuple[float, float]:
    """The smallest run of the sorted values ``s`` containing [lo, hi] whose outside neighbours lie
    more than ``tol`` away: [lo, hi] grown by every chain of values each within ``tol`` of the next.

    The same span as growing [lo, hi] to the values within ``tol`` of it until none is added
    (float subtraction is monotone, so a chain of sorted neighbours within ``tol`` is what that
    growth reaches), in one pass over the sorted values.
    """
    a = int(np.searchsorted(s, lo, "left"))
    b = int(np.searchsorted(s, hi, "right"))
    rlo, rhi = lo, hi
    if a > 0:
        nxt = np.empty(a, np.float64)
        nxt[:-1] = s[1:a]
        nxt[-1] = lo
        bad = np.flatnonzero(~((nxt - s[:a]) <= tol))
        start = int(bad[-1]) + 1 if len(bad) else 0
        if start < a:
            rlo = float(s[start])
    m = len(s) - b
    if m > 0:
        prv = np.empty(m, np.float64)
        prv[0] = hi
        prv[1:] = s[b:-1]
        bad = np.flatnonzero(~((s[b:] - prv) <= tol))
        end = b + (int(bad[0]) if len(bad) else m)
        if end > b:
            rhi = float(s[end - 1])
    return rlo, rhi


def _grow_run(st: _PageState, kind: int, lo: float, hi: float, tol: float) -> Optional[np.ndarray]:
    """Positions of the values in the smallest run containing [lo, hi] whose outside neighbours lie more than ``tol`` away.

    Sorted values are cut into lines only inside such runs (a value more than ``tol``
    above the previous one always starts a line), so a run is cut the same way
    whatever the other values are. The run is found (:func:`_run_span`) inside a window
    around [lo, hi], widened while the run reaches near its edge. None when the window
    cannot be widened further.
    """
    reach = 64.0 * tol + 1.0
    while True:
        wlo, whi = lo - reach, hi + reach
        if not (math.isfinite(wlo) and math.isfinite(whi)):
            return None
        cand, w = _window(st, kind, wlo, whi)
        rlo, rhi = _run_span(np.sort(w), lo, hi, tol)
        if rlo - wlo > 2.0 * tol + 1.0 and whi - rhi > 2.0 * tol + 1.0:
            return cand[(w >= rlo) & (w <= rhi)]
        if reach > 1e300:
            return None
        reach *= 16.0


class _StripRuns:
    """The runs of one line kind around some values (see :func:`_grow_run`), found in one strip query
    around all of them and its values sorted once: a run that reaches near the strip's edge is grown
    by :func:`_grow_run` instead, so each run is the one :func:`_grow_run` gives (a run away from the
    strip's edges has its outside neighbours in the strip, more than ``tol`` away)."""

    def __init__(self, st: _PageState, kind: int, values: List[float], tol: float,
                 strip: Optional[Tuple[float, float, np.ndarray]] = None) -> None:
        self.st, self.kind, self.tol = st, kind, tol
        self.pos: Optional[np.ndarray] = None
        self.s = np.zeros(0)
        self.lo = self.hi = 0.0
        reach = 64.0 * tol + 1.0
        if values:
            lo, hi = min(values) - reach, max(values) + reach
            if math.isfinite(lo) and math.isfinite(hi):
                cand, w = _window(st, kind, lo, hi, strip)
                # (not a stable sort: a run is a range of values, whose positions every caller takes
                # as a set, so the order among equal values does not matter)
                o = np.argsort(w)
                self.pos, self.s, self.lo, self.hi = cand[o], w[o], lo, hi

    def run(self, lo: float, hi: float) -> Optional[np.ndarray]:
        """Positions of the smallest run holding [lo, hi] (None: :func:`_grow_run` could not find it)."""
        tol = self.tol
        if self.pos is not None and self.lo <= lo and hi <= self.hi:
            a, b = run_bounds(self.s, lo, hi, tol)
            rlo = min(lo, float(self.s[a])) if a < b else lo
            rhi = max(hi, float(self.s[b - 1])) if a < b else hi
            if rlo - self.lo > 2.0 * tol + 1.0 and self.hi - rhi > 2.0 * tol + 1.0:
                return self.pos[a:b]
        return _grow_run(self.st, self.kind, lo, hi, tol)


def _bits_at(rows: np.ndarray, bits: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per row of ``q``, its entry of ``bits`` in the sorted distinct ``rows``, 0 for a row not there."""
    if not len(rows):
        return np.zeros(len(q), np.int64)
    at = np.minimum(np.searchsorted(rows, q), len(rows) - 1)
    return np.where(rows[at] == q, bits[at], 0)


#: Whether :func:`_aligned_update` merges the kept and new kind bits of the rows cut again in one
#: compiled pass (``_cpagetables.aligned_merge``); False: :func:`_aligned_merge_py` (the twin, for tests).
ALIGNED_MERGE_KERNEL = True


def _aligned_merge_py(aa: np.ndarray, ab: np.ndarray, am: np.ndarray, keys: np.ndarray, cut_rows: np.ndarray,
                      cut_bits: np.ndarray, nk: np.ndarray, nb: np.ndarray) -> Tuple[np.ndarray, ...]:
    """The twin of ``_cpagetables.aligned_merge`` (arguments and result as there), by numpy passes: only
    the pairs of rows cut again change, those whose first row was (a pair's rows are both cut again for
    a kind when its bit is cleared, and a new pair's rows were), merged with the new bits."""
    at = rows_at(aa, cut_rows)
    ck = np.concatenate([keys[at], nk])
    cb = np.concatenate([am[at] & ~(_bits_at(cut_rows, cut_bits, aa[at]) & _bits_at(cut_rows, cut_bits, ab[at])),
                         nb])
    o = np.argsort(ck, kind="stable")
    ck, cb = ck[o], cb[o]
    if len(ck):
        start = np.flatnonzero(run_starts(ck))
        ck, cb = ck[start], np.bitwise_or.reduceat(cb, start)
    # every key at ``at`` is in ``ck``: a pair whose bits changed is written, one left with none
    # dropped, a new one inserted; most rows cut again keep their pairs as they were
    j = np.searchsorted(ck, keys[at])
    now = cb[j]
    rewrite = (now != 0) & (now != am[at])
    is_new = np.ones(len(ck), bool)
    is_new[j] = False
    is_new &= cb != 0
    return at[now == 0], at[rewrite], now[rewrite], ck[is_new], cb[is_new]


def _aligned_update(st: _PageState, old_st: _PageState, old: Tuple[np.ndarray, np.ndarray, np.ndarray],
                    changed: np.ndarray, before: np.ndarray, tol: float,
                    gone: Optional[np.ndarray] = None, known: Optional[Dict[str, np.ndarray]] = None,
                    out: Optional[Dict[str, np.ndarray]] = None,
                    lines: Optional[List[Optional[Tuple[np.ndarray, np.ndarray]]]] = None,
                    inplace: bool = False, delta: Optional[Dict[str, Tuple[np.ndarray, ...]]] = None
                    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``aligned`` after the boxes of solid positions ``changed`` changed from ``before``
    (and the boxes ``gone`` were removed); ``old_st`` is the state the old table is of.

    With ``out``, the pairs of the rows cut again are found by key and the table is spliced;
    the key column is put in ``out``. With ``lines`` (``old_st``'s sorted line values, see
    :attr:`_PageState.lines`) the runs are found there instead of by strip queries, and the
    changed values are moved in place (the kinds sorted so far; the others by strip queries):
    ``st.lines`` is set to them. With ``inplace`` (the old table is used up) masks and splices
    that keep the table's length are written into its columns. The splice path puts the ends of
    the pairs that left and of those that entered in ``delta`` (a pair with a row whose box changed
    has its first row cut again, so it is rewritten, left or entered: never kept unseen).
    """
    pg, sub, sb = st.pg, st.sub, st.sb
    aa, ab, am = old
    if gone is None:
        gone = np.zeros((0, 4))
    if not len(changed) and not len(gone):
        if out is not None and known is not None and "aligned" in known:
            out["aligned"] = known["aligned"]
        st.lines = lines
        return old
    n = len(pg.ids)
    if len(changed) + len(gone) > 16 or len(sb) <= ALIGNED_AFRESH_PER_CHANGE * (len(changed) + len(gone)):
        if lines is not None and not len(gone) and np.isfinite(sb[changed]).all():
            for kind, line in enumerate(lines):  # kept for the next version: the values moved
                if line is not None:
                    move_values(line, changed, _line_values(before, kind), _line_values(sb[changed], kind))
            st.lines = lines
        return _aligned(pg, sub, sb, tol)
    keys: List[np.ndarray] = []
    bits: List[np.ndarray] = []
    recut_bits: List[int] = []  # per entry of ``recut_rows``: its kind's bit (the rows' lines of that kind cut again)
    recut_rows: List[np.ndarray] = []
    one = len(changed) == 1 and not len(gone)
    if lines is not None and (len(gone) or not np.isfinite(sb[changed]).all()):
        lines = None
    kept = [line for line in lines if line is not None] if lines is not None else []
    if len(kept) == 6:
        # every kind's sorted line values are kept: the six kinds cut again and merged in one call
        cut_rows, cut_bits, nk, nb = recut_kinds(kept, changed, before, sb[changed], tol, one, sb, sub, pg.parent)
        st.lines = lines
    else:
        # the strips of the kinds found by strip queries: one query per axis and state, around the values
        # of its three kinds (each kind's window is inside it; see _StripRuns)
        sought = [kind for kind in range(6) if lines is None or lines[kind] is None]
        now_x: Dict[int, List[float]] = {}
        then_x: Dict[int, List[float]] = {}
        for kind in sought:
            c_new, c_old = _line_values(sb[changed], kind), _line_values(before, kind)
            left_x = np.concatenate([c_old[c_old != c_new], _line_values(gone, kind)]).tolist()
            now_x[kind] = c_new.tolist() + left_x
            if left_x and not one:
                then_x[kind] = left_x
        strips: Dict[Tuple[int, int], Tuple[float, float, np.ndarray]] = {}
        reach = 64.0 * tol + 1.0
        for which, state, xs in ((0, st, now_x), (1, old_st, then_x)):
            for axis in (0, 1):
                vals = [v for kind, got in xs.items() if (kind >= 3) == axis for v in got]
                if vals:
                    lo, hi = min(vals) - reach, max(vals) + reach
                    if math.isfinite(lo) and math.isfinite(hi):
                        strips[which, axis] = (lo, hi, _strip_hits(state, axis, lo, hi))
        for kind in range(6):
            c_new, c_old = _line_values(sb[changed], kind), _line_values(before, kind)
            parts: List[np.ndarray] = []
            spans: List[Tuple[float, float]] = []  # value ranges of the runs found (each a whole run)
            line = None if lines is None else lines[kind]
            if line is not None:  # the runs and their lines found in the sorted values, the values moved there
                cut, k = recut_lines(line, changed, c_old, c_new, tol, one, sb, sub, pg.parent, kind)
                recut_rows.append(cut)
                recut_bits.append(1 << kind)
                keys.append(k)
                bits.append(np.full(len(k), 1 << kind, np.int64))
                continue
            # the runs around the changed values, in one strip query per state and kind
            left_x = np.concatenate([c_old[c_old != c_new], _line_values(gone, kind)]).tolist()
            ax = int(kind >= 3)
            now_runs = _StripRuns(st, kind, c_new.tolist() + left_x, tol, strips.get((0, ax)))
            then_runs = _StripRuns(old_st, kind, left_x, tol, strips.get((1, ax))) if left_x and not one else None
            for x in c_new.tolist():  # the lines a changed box joins
                if any(lo <= x <= hi for lo, hi in spans):
                    continue
                r = now_runs.run(x, x)
                if r is None:
                    return _aligned(pg, sub, sb, tol)
                parts.append(r)
                w = _line_values(sb[r], kind)
                spans.append((float(w.min()), float(w.max())))
            # the lines it left, as the other boxes now stand (a box that kept this value is in its run:
            # the run it left is cut again only if some box left it, and that box's own value seeds it)
            for x in left_x:
                if one and any(lo <= x <= hi for lo, hi in spans):
                    # One box changed and none was removed: its old value is the only one the old
                    # values have that the new ones lack, so the run it left, grown among the old
                    # values, cannot reach past a whole run of the new values holding it (the gap to
                    # either outside neighbour there exceeds tol, and float subtraction is monotone):
                    # that run, already in ``parts``, is what growing it again would give.
                    continue
                r = then_runs.run(x, x) if then_runs is not None else _grow_run(old_st, kind, x, x, tol)
                if r is None:
                    return _aligned(pg, sub, sb, tol)
                w = _line_values(old_st.sb[r], kind)
                r = now_runs.run(float(w.min()), float(w.max()))
                if r is None:
                    return _aligned(pg, sub, sb, tol)
                parts.append(r)
            u = unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
            recut_rows.append(sub[u])
            recut_bits.append(1 << kind)
            if len(u) > 1:
                keys.append(kind_pairs(sb, sub, pg.parent, u, tol, kind))
                bits.append(np.full(len(keys[-1]), 1 << kind, np.int64))
        if lines is not None:
            st.lines = lines
        # the rows cut again, sorted, with the bits of the kinds each is cut again for
        cut_rows = unique(np.concatenate(recut_rows)) if recut_rows else np.zeros(0, np.int64)
        cut_bits = np.zeros(len(cut_rows), np.int64)
        for rr, bit in zip(recut_rows, recut_bits):
            cut_bits[np.searchsorted(cut_rows, rr)] |= bit
        nk = np.concatenate(keys) if keys else np.zeros(0, np.int64)
        nb = np.concatenate(bits) if bits else np.zeros(0, np.int64)
    ok = None
    if out is not None:
        ok = _sorted_keys(known, "aligned", lambda: aligned_keys(aa, ab, np.where((am & 7) != 0, 0, 1)))
    if ok is not None:
        if ALIGNED_MERGE_KERNEL and _cpt is not None and int64_columns(aa, ab, am, ok, cut_rows, cut_bits, nk, nb):
            drop, rw_at, rw_bits, nk2, nb2 = _cpt.aligned_merge(aa, ab, am, ok, cut_rows, cut_bits, nk, nb)
        else:
            drop, rw_at, rw_bits, nk2, nb2 = _aligned_merge_py(aa, ab, am, ok, cut_rows, cut_bits, nk, nb)
        if len(rw_at):  # the masks written in place when the old table is used up, else to a copy
            if not (inplace and writable(am)):
                am = am.copy()
            am[rw_at] = rw_bits
        ra, rb, rm, rk = aa, ab, am, ok  # the same pairs: the columns are shared
        empty = np.zeros(0, np.int64)
        if delta is not None:
            delta["aligned"] = (empty, empty, empty, empty)
        if len(drop) or len(nk2):
            new = aligned_rows(nk2) + (nb2,)
            if delta is not None:
                delta["aligned"] = (aa[drop], ab[drop], new[0], new[1])
            if not (inplace and splice_in_place((aa, ab, am), ok, drop, new, nk2)):
                (ra, rb, rm), rk = splice((aa, ab, am), ok, drop, new, nk2)
        assert out is not None  # (``ok`` is found only for it)
        out["aligned"] = rk
        return ra, rb, rm
    recut = np.zeros(n, np.int64)  # bit k: the row's lines of kind k are cut again
    recut[cut_rows] = cut_bits
    am = am & ~(recut[aa] & recut[ab])
    # the table is sorted by key (one row per pair and axis): the new keys are merged into it
    okeys = aligned_keys(aa, ab, np.where((old[2] & 7) != 0, 0, 1))  # a row holds the kinds of one axis
    if len(okeys) > 1 and not bool((okeys[1:] >= okeys[:-1]).all()):
        # carried through a row map that moved rows in the tree (their pairs' bits are cleared above,
        # but the rows stay, out of order, until dropped below): sorted again for the merge
        o = np.argsort(okeys, kind="stable")
        okeys, am = okeys[o], am[o]
    o = np.argsort(nk, kind="stable")
    nk, nb = nk[o], nb[o]
    at = np.searchsorted(okeys, nk, "right")
    allk, allb = np.insert(okeys, at, nk), np.insert(am, at, nb)
    if not len(allk):
        return old
    start = np.flatnonzero(run_starts(allk))
    k = allk[start]
    mk = np.bitwise_or.reduceat(allb, start)
    live = mk != 0
    k, mk = k[live], mk[live]
    return aligned_rows(k) + (mk,)


def _in_view_count(tables: _PageTables, name: str, view: _View, vbox: Tuple[float, float, float, float]) -> int:
    """How many ``near`` or ``aligned`` pairs have one end in view (kept per table for the last viewport).

    A version reached by a move from one counted for the same viewport counts the pairs that left
    and entered only, when no row whose box changed came into view or left it: then every row is in
    view as it was, and so is every kept pair. A kept pair can hold a moved row (an ``aligned``
    pair of a kind the move did not change), so when a moved row's view changed, the pairs are
    counted afresh.
    """
    hit = tables.in_view_counts.get(name)
    if hit is not None and hit[0] == vbox:
        return hit[1]
    since = tables.in_view_since.get(name)
    iv = view.in_view
    count = -1
    if since is not None and since[0] == vbox:
        _, was, gone_a, gone_b, new_a, new_b, rows, before = since
        lab = G.visibility_labels(before, vbox, 0.75)
        if np.array_equal((lab == G.VISIBLE) | (lab == G.PARTIAL), iv[rows]):
            count = (was - int(np.count_nonzero(iv[gone_a] | iv[gone_b]))
                     + int(np.count_nonzero(iv[new_a] | iv[new_b])))
    if count < 0:
        a, b, _ = getattr(tables, name)
        count = int(np.count_nonzero(iv[a] | iv[b]))
    tables.in_view_counts[name] = (vbox, count)
    tables.in_view_since.pop(name, None)
    return count


def _relations(canvas: Canvas, st: _PageState, view: _View, p: _Params) -> _Relations:
    """Native relations, then the inferred ones: the page's cached tables, and what depends on the view."""
    pg = st.pg
    tb = _page_tables(canvas, st, p)
    occluded = np.flatnonzero((view.occ >= 0) & ~pg.gone[view.rows])
    # an end touches drawn shapes only: not one its frames clip away entirely (tldraw hits no such
    # shape). Filtered here, as read, not in the carried table: a shape's ``gone`` flag can turn with
    # its box unchanged (its frame resized around it), which the table's updates do not see
    touches = tb.touches
    drawn = ~pg.gone[touches[1]]
    if not drawn.all():
        touches = (touches[0][drawn], touches[1][drawn], touches[2][drawn])
    parts = {
        "bound": st.bindings,
        "touches": touches,
        "inside": (*tb.inside, None),
        "occludes": (view.occ[occluded], view.rows[occluded], None),
        "overlaps": (*tb.overlaps, None),
        # near and aligned describe the layout the agent sees: at least one of the
        # two objects is in view (offscreen objects carry their bounds instead)
        "near": tb.near,
        "aligned": tb.aligned,
    }
    counts = {name: len(part[0]) for name, part in parts.items()}
    counts["parent"] = st.n_children
    counts["near"] = _in_view_count(tb, "near", view, p.vbox)
    counts["aligned"] = _in_view_count(tb, "aligned", view, p.vbox)
    return _Relations(parts, counts)


def _ordered_unique(rows: np.ndarray) -> np.ndarray:
    if len(rows) < 2:
        return rows
    _, first_at = unique_first(rows)
    return rows[np.sort(first_at)]


def _nearest(rows: np.ndarray, gaps: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` rows with the smallest (gap, row), in that order, sorting only those (``gaps`` per row of ``rows``)."""
    if len(rows) > 4 * k:
        cut = np.partition(gaps, k - 1)[k - 1]  # the k-th smallest gap: every chosen row has gap <= cut
        keep = gaps <= cut
        rows, gaps = rows[keep], gaps[keep]
    return rows[np.lexsort((rows, gaps))][:k]


def _neighbours(st: _PageState, rels: _Relations, taken: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows connected to the taken ``rows`` (sorted): bound and touching connectors, their
    targets, and containers (a container's own children are not pulled in)."""
    pg = st.pg
    bf, bt, _ = rels.parts["bound"]
    tc, ts, _ = rels.parts["touches"]
    by_to = st.bindings_by_target()
    from_t = by_to[rows_at(st.targets_sorted(), rows)]  # bindings whose target is taken
    pa = pg.parent[rows]
    out = [bt[rows_at(bf, rows)], pa[pa >= 0], bf[from_t][pg.parent[bf[from_t]] != bt[from_t]],
           ts[taken[tc]], tc[taken[ts] & (pg.parent[tc] != ts)]]
    return np.concatenate(out)


#: Why an object was kept (``keptFor``), one per priority band and reason: selected, named as
#: context, crossing the viewport's edge, in view, a connector bound to a kept object or the
#: parent (frame or group) of a kept object taken before unconnected rows of its band,
#: connected to a kept object (bindings, touching connectors, containers), near the view.
KEPT_FOR = ("selected", "context", "partial", "view", "bound", "parent", "connected", "nearby")
_WHY = {name: i for i, name in enumerate(KEPT_FOR)}
#: Most rounds of swaps in one band (*ours*): each round takes in the rows the last one connected.
_NATIVE_ROUNDS = 8


def _native_first(st: _PageState, taken: np.ndarray, order: List[np.ndarray], chosen: np.ndarray, eligible: Any,
                  key: Any, base_why: int) -> Tuple[np.ndarray, np.ndarray]:
    """A band's rows with its native relations kept before its unconnected rows.

    ``chosen`` holds the band's rows by its own priority, as many as fit; ``taken`` marks (and
    ``order`` lists) the rows kept by the bands before. A row of the band not chosen is
    *pending* when it is a connector bound to a kept row, or the parent
    of a kept row; a chosen row is *unconnected* when it has no native relation (parent,
    child, binding either way) with another kept or pending row. Each round swaps the pending rows
    first by ``key`` for the unconnected chosen rows last by priority, as many as both
    have; rounds repeat (at most :data:`_NATIVE_ROUNDS`) while both remain. Returns the
    rows ordered by ``key`` and their reasons (``base_why``, or ``bound`` / ``parent``).
    """
    pg = st.pg
    bf, bt, _ = st.bindings
    by_to = st.bindings_by_target()
    tgt = st.targets_sorted()
    before = np.concatenate(order) if order else np.zeros(0, np.int64)
    mask = taken.copy()
    S = chosen
    mask[S] = True
    came: Dict[int, int] = {}
    for _ in range(_NATIVE_ROUNDS):
        K = np.sort(np.concatenate([before, S]))
        bpos = by_to[rows_at(tgt, K)]  # bindings whose target is kept
        conn = unique(bf[bpos])  # connectors bound to a kept row
        full = conn
        par = pg.parent[K]
        par = unique(par[par >= 0])
        pend = unique(np.concatenate([full, par]))
        pend = pend[~mask[pend]]
        pend = pend[eligible(pend)] if len(pend) else pend
        if not len(pend) or not len(S):
            break
        # linked to what is kept or about to be: a pending row's reason is never the one dropped
        both = mask.copy()
        both[pend] = True
        sp = pg.parent[S]
        has_par = (sp >= 0) & both[np.maximum(sp, 0)]
        ss = np.sort(S)
        into = by_to[rows_at(tgt, ss)]
        into_kept = bt[into[both[bf[into]]]]
        # (one mask over the rows for the three lookups: np.isin sorts each pair of arrays)
        hold = np.zeros(len(mask), bool)
        hold[par] = True
        hold[conn] = True
        hold[into_kept] = True
        linked = has_par | hold[S]
        unc = S[~linked]
        m = min(len(pend), len(unc))
        if m == 0:
            break
        pend = pend[np.lexsort((pend, key(pend)))][:m]
        drop = unc[len(unc) - m:]
        mask[drop] = False
        mask[pend] = True
        S = np.concatenate([S[mask[S]], pend])  # (``drop`` left the mask, no row of ``S`` entered it)
        fset = set(full.tolist())
        for r in pend.tolist():
            came[r] = _WHY["bound"] if r in fset else _WHY["parent"]
    S = S[np.lexsort((S, key(S)))]
    w = np.full(len(S), base_why, np.int8)
    if came:
        for i, r in enumerate(S.tolist()):
            if r in came:
                w[i] = came[r]
    return S, w


def _rank(st: _PageState, view: _View, rels: _Relations, p: _Params) -> _Ranking:
    """Kept rows by priority, then the relations among them up to the hard limit.

    The work follows what is kept: connections are looked up from the taken rows,
    offscreen rows come from the offscreen-near ones when there are enough, and
    relations are read for the kept rows only.
    """
    pg = st.pg
    n = len(pg.ids)
    order: List[np.ndarray] = []
    taken = np.zeros(n, bool)

    why: List[np.ndarray] = []

    group1 = np.concatenate([_ordered_unique(p.sel), _ordered_unique(p.ctx), view.partial])
    g1 = _ordered_unique(group1)
    w1 = np.full(len(g1), _WHY["partial"], np.int8)
    w1[np.isin(g1, p.ctx)] = _WHY["context"]
    w1[np.isin(g1, p.sel)] = _WHY["selected"]
    taken[g1] = True
    order.append(g1)
    why.append(w1)
    budget = p.max_objects - len(g1)

    g2pos = np.flatnonzero(~taken[view.rows])
    g2 = view.rows[g2pos]
    rd = view.reading[g2pos]
    g2 = g2[np.argsort(np.where(rd >= 0, rd, n + g2), kind="stable")]
    if len(g2) > max(budget, 0):
        # the rest of the view does not fit: its native relations are kept before unconnected rows
        pos2 = np.empty(n, np.int64)
        pos2[g2] = np.arange(len(g2))
        in2 = view.in_view & ~taken
        g2, w2 = _native_first(st, taken, order, g2[:max(budget, 0)], lambda r: in2[r], lambda r: pos2[r].astype(float),
                               _WHY["view"])
    else:
        w2 = np.full(len(g2), _WHY["view"], np.int8)
    taken[g2] = True
    order.append(g2)
    why.append(w2)
    budget -= len(g2)

    # connections: bindings, touching connectors, native containers
    for _hop in range(2):
        if budget <= 0:
            break
        cand = _neighbours(st, rels, taken, np.sort(np.concatenate(order)))
        cand = unique(cand[~taken[cand]])
        if not len(cand):
            break
        cand = cand[np.lexsort((cand, view.gaps(cand)))][:budget]
        taken[cand] = True
        order.append(cand)
        why.append(np.full(len(cand), _WHY["connected"], np.int8))
        budget -= len(cand)

    if budget > 0:
        # every offscreen-near row is nearer than every offscreen-far one
        near = view.near_rows[~taken[view.near_rows]]
        if len(near) >= budget:
            rest = _nearest(near, view.gaps(near), budget)
        else:  # few rows near the view: every offscreen row is a candidate
            pool = np.flatnonzero(~taken & ~view.in_view)
            rest = _nearest(pool, G.visibility(pg.boxes, p.vbox, p.near_factor)[1][pool], budget)
        w4 = np.full(len(rest), _WHY["nearby"], np.int8)
        if len(rest) == budget:  # more offscreen rows than room: native relations first here too
            def gap_key(r: np.ndarray) -> np.ndarray:
                return view.gaps(r) + 0.0

            rest, w4 = _native_first(st, taken, order, rest, lambda r: ~taken[r] & ~view.in_view[r], gap_key,
                                     _WHY["nearby"])
        taken[rest] = True
        order.append(rest)
        why.append(w4)

    kept = np.concatenate(order) if order else np.zeros(0, np.int64)
    kept_why = np.concatenate(why) if why else np.zeros(0, np.int8)
    rank = np.empty(n, dtype=np.int64)  # read only where ``taken``
    rank[kept] = np.arange(len(kept))
    ks = np.sort(kept)

    t_code = {t: i for i, t in enumerate(RELATION_TYPES)}
    none = np.zeros(0, np.int64)
    R_t, R_a, R_b, R_x, R_i = [none], [none], [none], [np.zeros(0)], [none]
    for name in RELATION_TYPES:
        if name != "parent" and not len(rels.parts[name][0]):
            continue  # an empty table (small pages have several): nothing to read
        if name == "parent":
            a = ks[pg.parent[ks] >= 0]
            b = pg.parent[a]
            m = taken[b]
            a, b, x, i = a[m], b[m], np.zeros(int(m.sum())), a[m]
        else:
            pa, pb, extra = rels.parts[name]
            i = rows_at(pb, ks) if name == "occludes" else rows_at(pa, ks)
            a, b = pa[i], pb[i]
            m = taken[b] & taken[a]
            if name in ("near", "aligned"):
                m &= view.in_view[a] | view.in_view[b]
            a, b, i = a[m], b[m], i[m]
            x = np.zeros(len(a)) if extra is None else np.asarray(extra, dtype=np.float64)[i]
        R_t.append(np.full(len(a), t_code[name], dtype=np.int64))
        R_a.append(a)
        R_b.append(b)
        R_x.append(x)
        R_i.append(i)
    rt, ra, rb, rx, ri = (np.concatenate(v) for v in (R_t, R_a, R_b, R_x, R_i))
    native = rt <= t_code["bound"]
    lo = np.minimum(rank[ra], rank[rb])
    hi = np.maximum(rank[ra], rank[rb])
    chosen = np.lexsort((ri, hi, rt, lo, ~native))[:p.max_relations]
    total = sum(rels.counts.values())
    return _Ranking(kept, rt[chosen], ra[chosen], rb[chosen], rx[chosen], total, kept_why)


#: Flags of an object record in output order: bit b of its flag byte is ``_FLAG_NAMES[b]``.
_FLAG_NAMES = ("selected", "context", "locked", "hidden", "clipped")
#: The bit of the flag byte that says the record carries ``actionBounds``.
_WITH_BOUNDS = 1 << len(_FLAG_NAMES)


def _object_records_py(nodes: Mapping[str, Any], names: List[str], crow: np.ndarray, ints: np.ndarray,
                       flags: np.ndarray, ab: np.ndarray, opac: np.ndarray, deg: np.ndarray, bnds: np.ndarray,
                       label_names: Sequence[str], flag_names: Sequence[str], text_max: int
                       ) -> Tuple[List[Dict[str, Any]], Dict[str, Tuple[float, float, float, float]]]:
    # The pure-Python twin of the compiled _cobserve.object_records (its test oracle, and
    # the fallback when the compiled module is absent); arguments as there.
    k = len(crow)
    if (ints.shape != (k, 7) or flags.shape != (k,) or ab.shape != (k, 4) or opac.shape != (k,)
            or deg.shape != (k,) or bnds.shape != (k, 4)):
        raise ValueError(f"record columns must have one row per object ({k}): ints 7 columns, ab and bnds 4")
    objects: List[Dict[str, Any]] = []
    exact: Dict[str, Tuple[float, float, float, float]] = {}
    for c, (layer, lab, par, grp, frm, occ, rd), fl, (ax, ay, aw, ah), op, dg, b in zip(
            crow.tolist(), ints.tolist(), flags.tolist(), ab.tolist(), opac.tolist(), deg.tolist(), bnds.tolist()):
        nid = names[c]
        nd = nodes[nid]
        rec: Dict[str, Any] = {"id": nid, "type": nd.type}
        txt = _abbrev(nd.text, text_max)
        if txt is not None:
            rec["text"] = txt
        short_name = _abbrev(nd.name, text_max)
        if short_name is not None:
            rec["name"] = short_name
        st: Dict[str, Any] = {}
        for key in ("color", "fill"):
            v = nd.style.get(key)
            if _plain(v):
                st[key] = v
        if op < 1.0:
            st["opacity"] = round(op, 2)
        if st:
            rec["style"] = st
        if dg != 0.0:
            rec["rotation"] = dg
        rec["layer"] = layer
        on = [f for bit, f in enumerate(flag_names) if fl >> bit & 1]
        if on:
            rec["flags"] = on
        rec["visibility"] = label_names[lab]
        if par >= 0:
            rec["parent"] = names[par]
        if grp >= 0:
            rec["group"] = names[grp]
        if frm >= 0:
            rec["frame"] = names[frm]
        if occ >= 0:
            rec["occludedBy"] = names[occ]
        if rd >= 0:
            rec["readingOrder"] = rd
        if fl & _WITH_BOUNDS:
            rec["actionBounds"] = {"x": ax, "y": ay, "w": aw, "h": ah}
        objects.append(rec)
        exact[nid] = (b[0], b[1], b[2], b[3])
    return objects, exact


def _relation_records_py(names: List[str], ca: np.ndarray, cb: np.ndarray, rt: np.ndarray, rx: np.ndarray,
                         type_names: Sequence[str], kind_names: Mapping[int, str]) -> List[Dict[str, Any]]:
    # The pure-Python twin of _cobserve.relation_records.
    k = len(rt)
    if ca.shape != (k,) or cb.shape != (k,) or rx.shape != (k,):
        raise ValueError(f"relation columns must have one row per relation ({k})")
    relations: List[Dict[str, Any]] = []
    terms = ("start", "end")
    for t, a, b, x in zip(rt.tolist(), ca.tolist(), cb.tolist(), rx.tolist()):
        name = type_names[t]
        rel: Dict[str, Any] = {"type": name, "from": names[a], "to": names[b], "native": name in _NATIVE}
        if name in ("bound", "touches"):
            rel["terminal"] = terms[int(x)]
        elif name == "near":
            rel["gap"] = int(math.floor(x + 0.5))
        elif name == "aligned":
            rel["kind"] = kind_names[int(x)]
        relations.append(rel)
    return relations


try:
    from spatialobs.canvas._cobserve import object_records as _object_records
    from spatialobs.canvas._cobserve import relation_records as _relation_records
except ImportError:  # a source tree without the compiled module
    _object_records = _object_records_py
    _relation_records = _relation_records_py


def _records(canvas: Canvas, pg: _Page, view: _View, rk: _Ranking,
             p: _Params) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], Dict[str, Tuple[float, float, float, float]]]:
    """Object and relation records, and the exact bounds of the kept objects.

    The columns of the kept rows are gathered here; one loop per record kind
    (compiled, with a pure-Python twin) turns them into dicts.
    """
    ox, oy = p.origin
    kept = rk.kept
    rows = pg.ids._rows
    names = pg.ids._names

    def names_at(r: np.ndarray) -> np.ndarray:  # index into ``names`` of page rows r, -1 where r is -1
        return np.where(r >= 0, rows[np.maximum(r, 0)], -1)

    lab = view.labels[kept].astype(np.int64)
    occ = view.at(view.occ, kept)
    ints = np.stack([kept, lab, names_at(pg.parent[kept]), names_at(pg.group[kept]), names_at(pg.frame[kept]),
                     names_at(np.where(lab == G.OCCLUDED, occ, -1)), view.at(view.reading, kept)], axis=1)
    flags = (np.isin(kept, p.sel) | np.isin(kept, p.ctx) << 1 | pg.locked[kept].astype(bool) << 2
             | pg.hidden[kept].astype(bool) << 3 | pg.gone[kept].astype(bool) << 4
             | (p.include_bounds | (lab >= G.OFFSCREEN_NEAR)) << 5).astype(np.uint8)
    bnds = np.ascontiguousarray(pg.bounds[kept], dtype=np.float64)
    ab = np.stack([_round(bnds[:, 0] - ox), _round(bnds[:, 1] - oy), _round(bnds[:, 2] - bnds[:, 0]),
                   _round(bnds[:, 3] - bnds[:, 1])], axis=1).astype(np.int64)
    deg = np.round(np.degrees(pg.rotation[kept]), 1).astype(np.float64)
    opac = np.ascontiguousarray(pg.opacity[kept], dtype=np.float64)
    objects, exact = _object_records(canvas._nodes, names, np.ascontiguousarray(rows[kept], dtype=np.int64),
                                     np.ascontiguousarray(ints, dtype=np.int64), flags, np.ascontiguousarray(ab),
                                     opac, deg, bnds, G.LABEL_NAMES, _FLAG_NAMES, _TEXT_MAX)
    relations = _relation_records(names, np.ascontiguousarray(rows[rk.rel_a], dtype=np.int64),
                                  np.ascontiguousarray(rows[rk.rel_b], dtype=np.int64),
                                  np.ascontiguousarray(rk.rel_type, dtype=np.int64),
                                  np.ascontiguousarray(rk.rel_extra, dtype=np.float64), RELATION_TYPES, _KIND_NAMES)
    return objects, relations, exact


@typed_errors("observe")
def observe(
    canvas: Canvas,
    viewport: Any = None,
    *,
    page: Optional[str] = None,
    selected: Optional[Iterable[str]] = None,
    context: Iterable[str] = (),
    max_objects: int = 180,
    max_relations: int = 700,
    origin: Sequence[float] = (0, 0),
    include_bounds: bool = False,
    near_factor: float = 0.75,
    near_gap: float = 32.0,
    align_tol: float = 1.0,
    row_tol: float = 10.0,
    touch_tol: float = 4.0,
    min_opacity: float = 0.9,
    since: Optional[str] = None,
    max_changes: int = 100,
    occlusion: str = "painted",
    max_bytes: Optional[int] = None,
    max_tokens: Optional[int] = None,
    budget_form: str = "json",
    explain: bool = False,
) -> Observation:
    """Build the structured observation of one page of ``canvas``.

    Parameters
    ----------
    canvas : Canvas
    viewport : Viewport, {x, y, w, h} or (x, y, w, h), optional
        Page units. None: the camera saved for the page, else the page's extent.
    page : str, optional
        Default: the canvas's current page.
    selected : iterable of str, optional
        None: the selection saved in the document.
    context : iterable of str
        Objects the request is about (flag ``context``; kept first).
    max_objects : int, default 180
        Soft limit: selected, context and partial objects are always kept;
        then the rest of the viewport, objects connected to kept ones (bindings,
        touching connectors, containers; two hops) and offscreen objects by
        distance fill up to this many.
    max_relations : int, default 700
        Hard limit; native relations first, then inferred, each ranked by the
        priority of the objects they join. Only relations between kept objects
        are reported.
    origin : (x, y), default (0, 0)
        The action frame: action coordinates = page − origin, rounded.
    include_bounds : bool, default False
        Give ``actionBounds`` on every record, not only offscreen ones.
    near_factor : float, default 0.75
        Offscreen-near threshold (see :func:`spatialobs.geometry.visibility`).
    near_gap : float, default 32
        Largest gap for ``near`` (*ours*), 4 nearest per object.
    align_tol : float, default 1
        Tolerance for ``aligned``.
    row_tol : float, default 10
        Row tolerance of the reading order.
    touch_tol : float, default 4
        Distance from a shape's edge within which an unbound connector end ``touches`` it.
    min_opacity : float, default 0.9
        Least opacity of an occluder (and least alpha of its fill colour).
    occlusion : {"painted", "paper"}, default "painted"
        How ``occluded`` is decided. ``"painted"``: a shape in view is occluded when the
        regions that higher shapes paint opaquely cover it entirely, on their outlines
        (an ellipse covers less than its bounds), clipped to the view and to its frames;
        an outline without fill, text, lines, arrows, strokes, hatched or translucent
        fills paint no such region (see :mod:`spatialobs.canvas.paint`); ``occludedBy``
        names the shape that covers the largest part of it. ``"paper"``: the CanvasObs
        rule, a single higher shape with opacity >= ``min_opacity`` whose bounds contain
        the clipped bounds, whatever it paints.
    max_bytes : int, optional
        A budget: the observation keeps the longest prefix of its objects, in the same
        priority, whose output (``budget_form``) fits this many bytes of UTF-8, with the
        relations among them; ``omitted`` counts what the budget cut too.
    max_tokens : int, optional
        The same budget in tokens, at :data:`BYTES_PER_TOKEN` bytes per token (the
        smaller budget wins when both are given).
    budget_form : {"json", "compact"}, default "json"
        The output the budget is measured in: :meth:`Observation.to_json` or its
        ``compact=True`` form.
    explain : bool, default False
        Give each record ``keptFor``, why it was kept (see :data:`KEPT_FOR`;
        :meth:`Observation.kept_for` has the same without it).
    since : str, optional
        The ``token`` of an earlier observation of this canvas: add ``changes``,
        what was changed since then and by whom (person or agent), most relevant
        first, at most ``max_changes`` records (see :mod:`spatialobs.canvas.changes`).
    max_changes : int, default 100

    Returns
    -------
    Observation

    Raises
    ------
    InvalidInputError
        A bad viewport, origin or limit, or a selected/context id not on the page.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("f", "frame", "page:page", "a1", 0, 0, 200, 200, name="Box"))
    >>> _ = c.add(Node("a", "geo", "f", "a1", 10, 10, 50, 50, text="in"))
    >>> _ = c.add(Node("b", "geo", "page:page", "a2", 100, 100, 50, 50, text="over"))
    >>> _ = c.add(Node("z", "geo", "page:page", "a3", 600, 35, 50, 50, text="far"))
    >>> obs = observe(c, (0, 0, 400, 300))
    >>> [(o["id"], o["visibility"]) for o in obs.objects]
    [('a', 'visible'), ('f', 'visible'), ('b', 'visible'), ('z', 'offscreen_near')]
    >>> [(r["type"], r["from"], r["to"], r["native"]) for r in obs.relations]
    [('parent', 'a', 'f', True), ('inside', 'b', 'f', False)]
    >>> obs.record("z")["actionBounds"]
    {'x': 600, 'y': 35, 'w': 50, 'h': 50}
    """
    p, pg = _inputs(canvas, viewport, page, selected, context, max_objects, max_relations, origin, include_bounds,
                    near_factor, near_gap, align_tol, row_tol, touch_tol, min_opacity, occlusion)
    budget = _budget(max_bytes, max_tokens)
    if not isinstance(budget_form, str) or budget_form not in BUDGET_FORMS:
        raise InvalidInputError(f"budget_form must be 'json' or 'compact', got {budget_form!r}")
    st = _page_state(canvas, p.page)
    view = _view(st, p, canvas)
    rels = _relations(canvas, st, view, p)
    rk = _rank(st, view, rels, p)
    objects, relations, exact = _records(canvas, pg, view, rk, p)
    why = rk.why if rk.why is not None else np.zeros(len(objects), np.int8)
    if explain:
        for o, w in zip(objects, why.tolist()):
            o["keptFor"] = KEPT_FOR[w]
    omitted = {"objects": len(pg.ids) - len(rk.kept), "relations": rk.total - len(relations)}
    from spatialobs.canvas import changes as _changes

    diff = None
    if since is not None:
        diff = _changes.changes_since(canvas, since, ranks={o["id"]: i for i, o in enumerate(objects)},
                                      max_changes=max_changes, origin=p.origin)
    obs = Observation(p.page, p.viewport, p.origin, objects, relations, omitted, exact, _changes.issue_token(canvas),
                      diff, why)
    if budget is not None:
        obs = _fit(obs, budget, budget_form)
    return obs


#: Bytes per token of the token estimate (*ours*): JSON of ids, numbers and short words runs
#: at about 3 to 4 bytes per token in the tokenizers of current models; 4 errs on the large side.
BYTES_PER_TOKEN = 4
#: Forms a byte budget can be measured in.
BUDGET_FORMS = ("json", "compact")


def _budget(max_bytes: Any, max_tokens: Any) -> Optional[int]:
    """The byte budget of ``max_bytes`` and ``max_tokens`` (the smaller when both are given)."""
    out: Optional[int] = None
    if max_bytes is not None:
        out = _limit(max_bytes, "max_bytes")
    if max_tokens is not None:
        t = _limit(max_tokens, "max_tokens") * BYTES_PER_TOKEN
        out = t if out is None else min(out, t)
    return out


def _fit(obs: Observation, budget: int, form: str) -> Observation:
    """The longest prefix of ``obs``'s objects (its priority order) whose observation, with the relations
    among them in their order, fits ``budget`` bytes of UTF-8 in ``form``; the omitted counts grow by what
    is cut. When not even the frame of an empty observation fits, that empty observation."""
    def cut(m: int) -> Observation:
        keep = {o["id"] for o in obs.objects[:m]}
        rels = [r for r in obs.relations if r["from"] in keep and r["to"] in keep]
        om = {"objects": obs.omitted["objects"] + len(obs.objects) - m,
              "relations": obs.omitted["relations"] + len(obs.relations) - len(rels)}
        why = obs._why[:m] if obs._why is not None else None
        return dataclasses.replace(obs, objects=obs.objects[:m], relations=rels, omitted=om,
                                   _bounds={k: v for k, v in obs._bounds.items() if k in keep}, _why=why)

    def size(o: Observation) -> int:
        return len(o.to_json(compact=form == "compact").encode("utf-8"))

    if size(obs) <= budget:
        return obs
    lo, hi = 0, len(obs.objects)  # size(cut(lo)) fits or lo == 0; size(cut(hi)) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if size(cut(mid)) <= budget:
            lo = mid
        else:
            hi = mid
    return cut(lo)
