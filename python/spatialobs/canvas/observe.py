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

import functools
import json
import math
import threading
import weakref
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from spatialobs import geometry as G
from spatialobs.canvas.limits import typed_errors, utf8_json
from spatialobs._errors import InvalidInputError, OutOfRangeError
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.document.records import Viewport
from spatialobs.canvas.document.shapes import arrow_terminals

__all__ = ["observe", "Observation", "GUIDE", "CONNECTOR_TYPES", "RELATION_TYPES", "resolve_viewport"]

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
    "its edge), occluded (in view but covered by the opaque object occludedBy), offscreen_near, "
    "offscreen_far. parent/group/frame: native structure ids. readingOrder: rank in view, rows "
    "top to bottom, left to right. actionBounds {x,y,w,h}: upper-left corner and size, given for "
    "offscreen objects. "
    "relations: native:true are stored in the document: parent (from is a member of frame/group "
    "to) and bound (connector from is attached at terminal to to). native:false are inferred "
    "from geometry only and may be accidental: inside (from lies within to but is not its "
    "member), overlaps, near (gap) and aligned (kind: shared edge or center; both only when one "
    "end is in view), occludes (from covers "
    "to), touches (connector end lies on to's edge with no binding). Trust native over inferred. "
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
    cols = canvas.columns(page)
    d = canvas.geometry()
    rows = cols.rows
    n = len(rows)
    parent, frame, group = cols.parent_row, cols.frame_row, cols.group_row
    gone = np.isnan(cols.visible[:, 0])
    boxes = np.ascontiguousarray(np.where(gone[:, None], cols.bounds, cols.visible))
    # subtree sizes, deepest level first; paint order is a preorder walk so subtrees are contiguous
    size = np.ones(n, dtype=np.int64)
    depth = cols.depth
    if n and depth.max() > 0:
        by = np.argsort(-depth, kind="stable")
        cuts = np.flatnonzero(np.diff(depth[by])) + 1
        for lvl in np.split(by, cuts):
            p = parent[lvl]
            if p[0] < 0:
                break
            size += np.bincount(p, weights=size[lvl], minlength=n).astype(np.int64)
    return _Page(_RowIds(d.ids, rows), cols.type_array, cols.bounds, boxes, gone, cols.opacity, cols.hidden, cols.locked,
                 cols.rotation, parent, frame, group, size, d.px[rows], d.py[rows], rows, cols.page_pos)


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


@dataclass
class _PageState:
    """What observations of one page version share: its arrays, bindings and relation tables."""

    pg: _Page
    solid: np.ndarray
    bindings: Tuple[np.ndarray, np.ndarray, np.ndarray]
    index: Optional[G.BoxIndex] = None  # over the solid rows' boxes, shared by the pair kernels
    tables: Dict[Tuple[float, float, float], _PageTables] = field(default_factory=dict)


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


def _page_state(canvas: Canvas, page: str) -> _PageState:
    """The cached state of ``page`` for the canvas's current version (built on first use)."""
    states = _CACHE.pages(canvas.geometry())
    st = states.get(page)
    if st is None:
        pg = _page_arrays(canvas, page)
        types = pg.types
        is_conn = np.zeros(len(types), bool)
        for t in CONNECTOR_TYPES:
            is_conn |= types == t
        st = _PageState(pg, ~(is_conn | (types == "group")), _bindings(canvas, pg))
        states[page] = st
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


def _arrow_ends(canvas: Canvas, pg: _Page, bound: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows, terminal codes (0 start, 1 end) and page x, y of arrow terminals that have no binding."""
    conn = np.flatnonzero((pg.types == "arrow") & ~(bound[:, 0] & bound[:, 1]))
    nodes = canvas.nodes
    ids = pg.ids
    ends_r: List[int] = []
    ends_t: List[int] = []
    ends_xy: List[Tuple[float, float]] = []
    memo = _TERMINALS
    for r, bs, be in zip(conn.tolist(), bound[conn, 0].tolist(), bound[conn, 1].tolist()):
        node = nodes[ids[r]]
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
    if len(memo) > 2 * len(conn) + 4096:
        for key in [k for k, v in list(memo.items()) if v[0]() is None]:  # list(): one atomic copy
            del memo[key]
    er = np.asarray(ends_r, dtype=np.int64)
    lxy = np.asarray(ends_xy, dtype=np.float64).reshape(-1, 2)
    rot = pg.rotation[er]
    c, s_ = np.cos(rot), np.sin(rot)
    c[rot == 0] = 1.0
    s_[rot == 0] = 0.0
    x = pg.px[er] + c * lxy[:, 0] - s_ * lxy[:, 1]
    y = pg.py[er] + s_ * lxy[:, 0] + c * lxy[:, 1]
    return er, np.asarray(ends_t, dtype=np.int64), x, y


# --------------------------------------------------------------------------- observation
def _round(v: Any) -> np.ndarray:
    """Round half up, as JavaScript's Math.round (agent kits round this way)."""
    return np.floor(np.asarray(v, dtype=np.float64) + 0.5)


def _abbrev(text: Optional[str]) -> Optional[str]:
    if not text:
        return None
    t = " ".join(str(text).split())
    if not t:
        return None
    return t if len(t) <= _TEXT_MAX else t[: _TEXT_MAX - 1] + "…"


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
    def to_json(self) -> str:
        """Compact deterministic JSON: the same input gives the same string.

        Examples
        --------
        >>> from spatialobs.canvas import Canvas
        >>> observe(Canvas(), (0, 0, 10, 10)).to_json()
        '{"viewport":{"x":0,"y":0,"w":10,"h":10},"objects":[],"relations":[],"omitted":{"objects":0,"relations":0}}'
        """
        return utf8_json(self.to_dict(), separators=(",", ":"), allow_nan=False)

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


@dataclass
class _View:
    """Every row against the viewport."""

    solid: np.ndarray        # paints an area of its own (not a connector or group)
    labels: np.ndarray       # visibility code, OCCLUDED applied
    gaps: np.ndarray         # distance to the viewport
    occ: np.ndarray          # occluder row (the frame for a clipped-away row in view), -1 if none
    in_view: np.ndarray      # visible or partial before occlusion
    raw_partial: np.ndarray
    reading: np.ndarray      # reading order among solid rows in view, -1 elsewhere


@dataclass
class _Relations:
    """Every relation of the page as parallel row arrays, one entry per type.

    ``parts[t] = (a, b, extra)``: ``extra`` is the terminal code for ``bound``
    and ``touches``, the gap for ``near``, the kind mask for ``aligned``.
    """

    parts: Dict[str, Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]]


@dataclass
class _Ranking:
    """The kept rows in output order and the chosen relations."""

    kept: np.ndarray
    rel_type: np.ndarray
    rel_a: np.ndarray
    rel_b: np.ndarray
    rel_extra: np.ndarray
    total: int               # relations before the limits


def _inputs(canvas: Any, viewport: Any, page: Optional[str], selected: Optional[Iterable[str]], context: Iterable[str],
            max_objects: Any, max_relations: Any, origin: Any, include_bounds: bool, near_factor: float,
            near_gap: Any, align_tol: Any, row_tol: Any, touch_tol: Any, min_opacity: float) -> Tuple[_Params, _Page]:
    """Check the arguments and read the page's arrays."""
    if not isinstance(canvas, Canvas):
        raise InvalidInputError(f"canvas must be a Canvas, got {type(canvas).__name__}")
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
    row_of = canvas.geometry().row
    sel = _id_rows(canvas.selected(pid) if selected is None else selected, row_of, pg.page_pos, "selected", pid)
    ctx = _id_rows(context, row_of, pg.page_pos, "context", pid)
    p = _Params(pid, vp, vp.as_box(), (ox, oy), sel, ctx, max_objects, max_relations, bool(include_bounds),
                near_factor, near_gap, align_tol, row_tol, touch_tol, min_opacity)
    return p, pg


def _view(pg: _Page, solid: np.ndarray, p: _Params) -> _View:
    """Visibility, occlusion and reading order (linear kernels; reading order only in view)."""
    n = len(pg.ids)
    labels, gaps = G.visibility(pg.boxes, p.vbox, p.near_factor)
    labels = labels.astype(np.int64)
    no_occ = pg.hidden | ~solid | pg.gone
    occ = G.occluders(pg.boxes, np.arange(n, dtype=np.int64), pg.opacity, no_occ, p.vbox, p.min_opacity)
    in_view = (labels == G.VISIBLE) | (labels == G.PARTIAL)
    raw_partial = labels == G.PARTIAL
    occ = np.where(pg.gone & in_view, pg.frame, occ)
    labels = np.where(in_view & (occ >= 0), G.OCCLUDED, labels)
    # reading order among solid objects in view
    reading = np.full(n, -1, dtype=np.int64)
    view_solid = np.flatnonzero(in_view & solid)
    if len(view_solid):
        reading[view_solid] = G.reading_order(np.ascontiguousarray(pg.boxes[view_solid]), p.row_tol)
    return _View(solid, labels, gaps, occ, in_view, raw_partial, reading)


def _bindings(canvas: Canvas, pg: _Page) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Connector row, target row and terminal code (0 start, 1 end) of the page's bindings, sorted."""
    row_of = canvas.geometry().row
    blist = list(canvas.bindings.values())
    pos = np.append(pg.page_pos, -1)  # index -1 (unknown id) maps to -1
    bf = pos[np.fromiter(map(row_of.get, [b.from_id for b in blist], repeat(-1)), np.int64, len(blist))]
    bt = pos[np.fromiter(map(row_of.get, [b.to_id for b in blist], repeat(-1)), np.int64, len(blist))]
    bterm = np.fromiter((b.terminal == "end" for b in blist), np.int64, len(blist))
    ok = (bf >= 0) & (bt >= 0)
    bf, bt, bterm = bf[ok], bt[ok], bterm[ok]
    o = np.lexsort((bterm, bt, bf))
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
    first = np.r_[True, ci[1:] != ci[:-1]] if len(ci) else np.zeros(0, bool)
    return ci[first], co[first]


def _overlaps_touches(canvas: Canvas, pg: _Page, sub: np.ndarray, ix: G.BoxIndex, bound_end: np.ndarray,
                      touch_tol: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``overlaps`` pairs and ``touches`` (connector, shape, terminal), both from the solid rows' index.

    Unbound arrow ends query it as small squares of half-size ``touch_tol``.
    """
    er, et, ex, ey = _arrow_ends(canvas, pg, bound_end)
    ends = np.stack([ex - touch_tol, ey - touch_tol, ex + touch_tol, ey + touch_tol], axis=1)
    op, _ = G.overlap_pairs(ix)
    oa, ob = sub[op[0]], sub[op[1]]
    A, B = pg.boxes[oa], pg.boxes[ob]
    a_in_b = np.all(A[:, :2] >= B[:, :2], axis=1) & np.all(A[:, 2:] <= B[:, 2:], axis=1)
    b_in_a = np.all(B[:, :2] >= A[:, :2], axis=1) & np.all(B[:, 2:] <= A[:, 2:], axis=1)
    identical = a_in_b & b_in_a
    keep = (identical | ~(a_in_b | b_in_a)) & ~_related(pg, oa, ob)
    ov_a, ov_b = oa[keep], ob[keep]
    tp, _ = G.overlap_pairs_between(ix, ends)
    ts, k = sub[tp[0]], tp[1]
    tb = pg.boxes[ts]
    depth_in = np.minimum.reduce([ex[k] - tb[:, 0], tb[:, 2] - ex[k], ey[k] - tb[:, 1], tb[:, 3] - ey[k]])
    on_edge = (depth_in <= touch_tol) & (ts != er[k])
    tc, ts, tterm = er[k][on_edge], ts[on_edge], et[k][on_edge]
    o = np.lexsort((ts, tterm, tc))
    return ov_a, ov_b, tc[o], ts[o], tterm[o]


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
    pg = st.pg
    n = len(pg.ids)
    bf, _, bterm = st.bindings
    bound_end = np.zeros((n, 2), bool)
    bound_end[bf, bterm] = True
    sub = np.flatnonzero(st.solid)
    sb = np.ascontiguousarray(pg.boxes[sub])
    if st.index is None:  # built once per page version, shared by every kernel and tolerance
        st.index = G.BoxIndex(sb)
    ix = st.index
    ov_a, ov_b, tc, ts, tterm = _overlaps_touches(canvas, pg, sub, ix, bound_end, p.touch_tol)
    tables = _PageTables(_inside(pg, sub, sb, ix), (ov_a, ov_b), (tc, ts, tterm), _near(pg, sub, ix, p.near_gap),
                         _aligned(pg, sub, sb, p.align_tol))
    st.tables[key] = tables
    return tables


def _in_view_pairs(pairs: Tuple[np.ndarray, np.ndarray, np.ndarray],
                   in_view: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    # near and aligned describe the layout the agent sees: at least one of the
    # two objects is in view (offscreen objects carry their bounds instead)
    a, b, x = pairs
    keep = in_view[a] | in_view[b]
    return a[keep], b[keep], x[keep]


def _relations(canvas: Canvas, st: _PageState, view: _View, p: _Params) -> _Relations:
    """Native relations, then the inferred ones: the page's cached tables, and what depends on the view."""
    pg = st.pg
    nat_child = np.flatnonzero(pg.parent >= 0)
    tb = _page_tables(canvas, st, p)
    occluded_rows = np.flatnonzero((view.occ >= 0) & ~pg.gone)
    return _Relations({
        "parent": (nat_child, pg.parent[nat_child], None),
        "bound": st.bindings,
        "touches": tb.touches,
        "inside": (*tb.inside, None),
        "occludes": (view.occ[occluded_rows], occluded_rows, None),
        "overlaps": (*tb.overlaps, None),
        "near": _in_view_pairs(tb.near, view.in_view),
        "aligned": _in_view_pairs(tb.aligned, view.in_view),
    })


def _ordered_unique(rows: np.ndarray) -> np.ndarray:
    _, first_at = np.unique(rows, return_index=True)
    return rows[np.sort(first_at)]


def _nearest(rows: np.ndarray, gaps: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` rows with the smallest (gap, row), in that order, sorting only those."""
    if len(rows) > 4 * k:
        g = gaps[rows]
        cut = np.partition(g, k - 1)[k - 1]  # the k-th smallest gap: every chosen row has gap <= cut
        rows = rows[g <= cut]
    return rows[np.lexsort((rows, gaps[rows]))][:k]


def _rank(pg: _Page, view: _View, rels: _Relations, p: _Params) -> _Ranking:
    """Kept rows by priority, then the relations among them up to the hard limit."""
    n = len(pg.ids)
    in_view, gaps = view.in_view, view.gaps
    rank = np.full(n, -1, dtype=np.int64)
    order: List[np.ndarray] = []
    taken = np.zeros(n, bool)

    group1 = np.concatenate([_ordered_unique(p.sel), _ordered_unique(p.ctx), np.flatnonzero(view.raw_partial)])
    g1 = _ordered_unique(group1)
    g1 = g1[~taken[g1]]
    taken[g1] = True
    order.append(g1)
    budget = p.max_objects - len(g1)

    g2 = np.flatnonzero(in_view & ~taken)
    g2_key = np.where(view.reading[g2] >= 0, view.reading[g2], n + g2)
    g2 = g2[np.argsort(g2_key, kind="stable")][:max(budget, 0)]
    taken[g2] = True
    order.append(g2)
    budget -= len(g2)

    # connections: bindings, touching connectors, native containers
    nat_child = rels.parts["parent"][0]
    bf, bt, _ = rels.parts["bound"]
    tc, ts, _ = rels.parts["touches"]
    ea = np.concatenate([bf, tc, nat_child])
    eb = np.concatenate([bt, ts, pg.parent[nat_child]])
    for _hop in range(2):
        if budget <= 0 or not len(ea):
            break
        cand = np.concatenate([eb[taken[ea]], ea[taken[eb] & (pg.parent[ea] != eb)]])
        cand = np.unique(cand[~taken[cand]])
        if not len(cand):
            break
        cand = cand[np.lexsort((cand, gaps[cand]))][:budget]
        taken[cand] = True
        order.append(cand)
        budget -= len(cand)

    if budget > 0:
        rest = _nearest(np.flatnonzero(~taken & ~in_view), gaps, budget)
        taken[rest] = True
        order.append(rest)

    kept = np.concatenate(order) if order else np.zeros(0, np.int64)
    rank[kept] = np.arange(len(kept))

    t_code = {t: i for i, t in enumerate(RELATION_TYPES)}
    total = sum(len(part[0]) for part in rels.parts.values())
    R_t, R_a, R_b, R_x, R_i = [], [], [], [], []
    for name in RELATION_TYPES:
        a, b, extra = rels.parts[name]
        m = (rank[a] >= 0) & (rank[b] >= 0) if len(a) else np.zeros(0, bool)
        a, b = a[m], b[m]
        R_t.append(np.full(len(a), t_code[name], dtype=np.int64))
        R_a.append(a)
        R_b.append(b)
        R_x.append(np.zeros(len(a)) if extra is None else np.asarray(extra, dtype=np.float64)[m])
        R_i.append(np.arange(len(a), dtype=np.int64))
    rt, ra, rb, rx, ri = (np.concatenate(v) for v in (R_t, R_a, R_b, R_x, R_i))
    native = rt <= t_code["bound"]
    lo = np.minimum(rank[ra], rank[rb])
    hi = np.maximum(rank[ra], rank[rb])
    chosen = np.lexsort((ri, hi, rt, lo, ~native))[:p.max_relations]
    return _Ranking(kept, rt[chosen], ra[chosen], rb[chosen], rx[chosen], total)


def _records(canvas: Canvas, pg: _Page, view: _View, rk: _Ranking,
             p: _Params) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], Dict[str, Tuple[float, float, float, float]]]:
    """Object and relation records, and the exact bounds of the kept objects."""
    ox, oy = p.origin
    kept = rk.kept
    labels, occ, reading = view.labels, view.occ, view.reading
    nodes = canvas.nodes
    ids = pg.ids
    bnds = pg.bounds
    ax = _round(bnds[kept, 0] - ox).astype(np.int64).tolist()
    ay = _round(bnds[kept, 1] - oy).astype(np.int64).tolist()
    aw = _round(bnds[kept, 2] - bnds[kept, 0]).astype(np.int64).tolist()
    ah = _round(bnds[kept, 3] - bnds[kept, 1]).astype(np.int64).tolist()
    deg = np.round(np.degrees(pg.rotation[kept]), 1).tolist()
    sel_set = set(p.sel.tolist())
    ctx_set = set(p.ctx.tolist())
    objects: List[Dict[str, Any]] = []
    exact: Dict[str, Tuple[float, float, float, float]] = {}
    kl = kept.tolist()
    lab = labels[kept].tolist()
    occl = occ[kept].tolist()
    rd = reading[kept].tolist()
    lk = pg.locked[kept].tolist()
    hd = pg.hidden[kept].tolist()
    gn = pg.gone[kept].tolist()
    opac = pg.opacity[kept].tolist()
    par = pg.parent[kept].tolist()
    grp = pg.group[kept].tolist()
    frm = pg.frame[kept].tolist()
    for j, r in enumerate(kl):
        nid = ids[r]
        nd = nodes[nid]
        rec: Dict[str, Any] = {"id": nid, "type": nd.type}
        txt = _abbrev(nd.text)
        if txt is not None:
            rec["text"] = txt
        short_name = _abbrev(nd.name)
        if short_name is not None:
            rec["name"] = short_name
        st: Dict[str, Any] = {}
        for key in ("color", "fill"):
            v = nd.style.get(key)
            if _plain(v):
                st[key] = v
        if opac[j] < 1.0:
            st["opacity"] = round(opac[j], 2)
        if st:
            rec["style"] = st
        if deg[j] != 0.0:
            rec["rotation"] = deg[j]
        rec["layer"] = r
        flags = [f for f, on in (("selected", r in sel_set), ("context", r in ctx_set), ("locked", lk[j]),
                                 ("hidden", hd[j]), ("clipped", gn[j])) if on]
        if flags:
            rec["flags"] = flags
        rec["visibility"] = G.LABEL_NAMES[lab[j]]
        if par[j] >= 0:
            rec["parent"] = ids[par[j]]
        if grp[j] >= 0:
            rec["group"] = ids[grp[j]]
        if frm[j] >= 0:
            rec["frame"] = ids[frm[j]]
        if occl[j] >= 0 and lab[j] == G.OCCLUDED:
            rec["occludedBy"] = ids[occl[j]]
        if rd[j] >= 0:
            rec["readingOrder"] = rd[j]
        if p.include_bounds or lab[j] >= G.OFFSCREEN_NEAR:
            rec["actionBounds"] = {"x": ax[j], "y": ay[j], "w": aw[j], "h": ah[j]}
        objects.append(rec)
        b = bnds[r]
        exact[nid] = (float(b[0]), float(b[1]), float(b[2]), float(b[3]))

    relations: List[Dict[str, Any]] = []
    terms = ("start", "end")
    for t, a, b, x in zip(rk.rel_type.tolist(), rk.rel_a.tolist(), rk.rel_b.tolist(), rk.rel_extra.tolist()):
        name = RELATION_TYPES[t]
        rel: Dict[str, Any] = {"type": name, "from": ids[a], "to": ids[b], "native": name in _NATIVE}
        if name in ("bound", "touches"):
            rel["terminal"] = terms[int(x)]
        elif name == "near":
            rel["gap"] = int(_round(x))
        elif name == "aligned":
            rel["kind"] = _KIND_NAMES[int(x)]
        relations.append(rel)
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
        Least opacity of an occluder.
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
                    near_factor, near_gap, align_tol, row_tol, touch_tol, min_opacity)
    st = _page_state(canvas, p.page)
    view = _view(pg, st.solid, p)
    rels = _relations(canvas, st, view, p)
    rk = _rank(pg, view, rels, p)
    objects, relations, exact = _records(canvas, pg, view, rk, p)
    omitted = {"objects": len(pg.ids) - len(rk.kept), "relations": rk.total - len(relations)}
    from spatialobs.canvas import changes as _changes

    diff = None
    if since is not None:
        diff = _changes.changes_since(canvas, since, ranks={o["id"]: i for i, o in enumerate(objects)},
                                      max_changes=max_changes, origin=p.origin)
    return Observation(p.page, p.viewport, p.origin, objects, relations, omitted, exact, _changes.issue_token(canvas),
                       diff)
