"""The canvas document: pages of typed nodes and bindings with one write path."""

from __future__ import annotations

import itertools

from bisect import bisect_left, bisect_right, insort
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import (AbstractSet, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple,
                    Union)

import numpy as np

from spatialobs._errors import InvalidInputError, OutOfRangeError, SpatialObsError
from spatialobs._gc import paused
from spatialobs.canvas.document.arrows import ArrowCache, Rebound
from spatialobs.canvas.document.derive import MAX_DERIVED, Derived, Raw, derive, extract, patch, splice
from spatialobs.canvas.document import derive as _derivation
from spatialobs.canvas.document.fractional import key_after, key_between
from spatialobs.canvas.document.records import Binding, Diagnostic, Node, Page, Viewport
from spatialobs.canvas.document.shapes import POINT_TYPES
from spatialobs.canvas.document.sanitize import CleanFields, sanitize_binding_fields, sanitize_node_fields
from spatialobs.canvas.document.excalidraw_text import fit_new_excalidraw_text, refit_excalidraw_text
from spatialobs.canvas.document.textmeasure import fit_new_text_geometry, refit_text_geometry

#: Node types whose size follows their text after an edit, and the fields that can change it.
_MEASURED_TYPES = frozenset({"text", "geo", "note"})
_MEASURED_FIELDS = frozenset({"text", "style", "props", "w", "h"})
# Excalidraw element types whose size follows their text (free text, containers of bound text)
_EXCALIDRAW_MEASURED = frozenset({"text", "rectangle", "ellipse", "diamond"})

__all__ = ["Canvas", "PageColumns", "Box"]

Box = Tuple[float, float, float, float]
Item = Union[Node, Binding, Page]


def _drop_key(keys: List[str], key: str) -> None:
    """Remove one occurrence of ``key`` from the sorted list ``keys`` (equal keys are interchangeable)."""
    at = bisect_left(keys, key)
    if at < len(keys) and keys[at] == key:
        del keys[at]


#: Most runs (*ours*) a page's rows are gathered by as slices (see :func:`_row_runs`).
_MAX_ROW_RUNS = 64


def _row_runs(rows: np.ndarray) -> Optional[List[Tuple[int, int, int]]]:
    """``rows`` (distinct derivation rows) as runs of consecutive rows: ``(i, j, r)`` says
    ``rows[i:j] == r, r + 1, ...``; None beyond :data:`_MAX_ROW_RUNS` runs. A page whose nodes were
    created in paint order is one run, and an add or a removal adds a few (*ours*)."""
    if not len(rows):
        return []
    cut = np.flatnonzero(rows[1:] != rows[:-1] + 1) + 1
    if len(cut) >= _MAX_ROW_RUNS:
        return None
    starts = [0] + cut.tolist()
    ends = cut.tolist() + [len(rows)]
    return [(i, j, int(rows[i])) for i, j in zip(starts, ends)]


def _gather(a: np.ndarray, rows: np.ndarray, runs: Optional[List[Tuple[int, int, int]]]) -> np.ndarray:
    """``a[rows]`` along the first axis (a new array), copied slice by slice over ``runs`` (see
    :func:`_row_runs`; a slice copies ~4x faster than a gather) or gathered by ``np.take`` (the same
    rows as ``[rows]``, several times faster for 2-D and string columns) without them."""
    if runs is None:
        return np.take(a, rows, axis=0)
    out = np.empty((len(rows),) + a.shape[1:], dtype=a.dtype)
    for i, j, r in runs:
        out[i:j] = a[r:r + j - i]
    return out


def _page_pos(total: int, rows: np.ndarray, runs: Optional[List[Tuple[int, int, int]]]) -> Tuple[np.ndarray, bool]:
    """The page row of each of ``total`` derivation rows given a page's ``rows`` (-1: another page),
    with one more slot, -1, that maps "no node" (-1) to -1; and whether every row is on the page
    in canvas order (each row's page row is itself: a column of rows is its own page rows)."""
    pos = np.full(total + 1, -1, dtype=np.int64)
    if runs is None:
        pos[rows] = np.arange(len(rows), dtype=np.int64)
        return pos, False
    for i, j, r in runs:
        pos[r:r + j - i] = np.arange(i, j, dtype=np.int64)
    return pos, len(rows) == total and (not total or runs == [(0, total, 0)])


_IDENTITY: List[np.ndarray] = [np.zeros(0, np.int64)]


def _identity(n: int) -> np.ndarray:
    """``np.arange(n)``, read-only and shared while ``n`` is unchanged (the row map of a
    derivation that keeps every row: a new one per edit wrote the page's length, ~0.1 ms at 10^5)."""
    m = _IDENTITY[0]
    if len(m) != n:
        m = np.arange(n, dtype=np.int64)
        m.flags.writeable = False
        _IDENTITY[0] = m
    return m


def _step(prev: Derived, d: Derived) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """How ``d`` follows from ``prev``: the new row of each of ``prev``'s rows (-1: removed) and
    the rows whose record was replaced, or None when ``d`` was derived afresh. (``prev``'s row
    count is its columns' length: an append may have extended the id list it shares.)"""
    if d.base >= 0 and d.base == prev.serial:
        return _identity(len(prev.depth)), np.asarray(d.record_rows, dtype=np.int64)
    if d.renumbered is not None and d.renumbered[0] == prev.serial and d.record_rows is not None:
        return d.renumbered[1], np.asarray(d.record_rows, dtype=np.int64)
    return None


def _compose_steps(prev: Derived, chain: List[Derived]) -> None:
    """Make the last of ``chain`` (each derived from the one before, the first from ``prev``) say
    how it follows from ``prev``: rows renumbered through every step, records replaced in any."""
    d = chain[-1]
    m = _identity(len(prev.depth))
    rec = np.zeros(0, dtype=np.int64)
    cur = prev
    d.base = -1
    d.reached = None
    for nxt in chain:
        step = _step(cur, nxt)
        if step is None:
            d.renumbered = d.record_rows = None
            return
        sm, srec = step
        m = np.where(m >= 0, sm[np.maximum(m, 0)], -1)
        r0 = sm[rec]
        rec = np.union1d(r0[r0 >= 0], srec).astype(np.int64)
        cur = nxt
    d.renumbered = (prev.serial, m)
    d.record_rows = rec


def _since(prev: Derived, d: Derived, rebound: AbstractSet[str], observed: Optional[int]) -> Any:
    """``(serial, row map, record rows, rebound connector ids)``: how ``d`` follows from the last
    observed derivation (``observed``), through the derivations since, when each followed from
    the one before it (see :func:`_step`); None otherwise."""
    if observed is None:
        return None
    step = _step(prev, d)
    if step is None:
        return None
    m, rec = step
    if prev.serial == observed:
        return observed, m, rec, frozenset(rebound)
    s = prev.since
    if s is None or s[0] != observed:
        return None
    m0, rec0, reb0 = s[1], s[2], s[3]
    r0 = m[rec0] if len(rec0) else rec0
    return (observed, np.where(m0 >= 0, m[np.maximum(m0, 0)], -1), np.union1d(r0[r0 >= 0], rec).astype(np.int64),
            reb0 | rebound)


#: Fewest nodes (*ours*) of a canvas whose derivations pause the cyclic garbage collector
#: (:func:`spatialobs._gc.paused`): a smaller one allocates too few objects for a pass to land in
#: its derivation, and the pause itself (~5 µs) is 2-3 % of such a derivation.
PAUSE_FROM_NODES = 1000


class _BindingIndex:
    """Binding ids by connector and by target, and each binding's rank in canvas order."""

    def __init__(self, bindings: Mapping[str, Binding]) -> None:
        self.by_from: Dict[str, Dict[str, None]] = {}
        self.by_to: Dict[str, Dict[str, None]] = {}
        self.seq: Dict[str, int] = {}
        self.next_seq = 0
        for bid, b in bindings.items():
            self.put(bid, None, b)

    def put(self, bid: str, old: Optional[Binding], new: Optional[Binding]) -> None:
        """Follow one write of the binding store (a new id goes last, as in the store's dict)."""
        if old is not None:
            self.by_from.get(old.from_id, {}).pop(bid, None)
            self.by_to.get(old.to_id, {}).pop(bid, None)
            if new is None:
                del self.seq[bid]
        if new is not None:
            self.by_from.setdefault(new.from_id, {})[bid] = None
            self.by_to.setdefault(new.to_id, {})[bid] = None
            if old is None:
                self.seq[bid] = self.next_seq
                self.next_seq += 1


def _same(a: float, b: float) -> bool:
    """``a`` and ``b`` are the same float, zeros by their sign too."""
    return a == b and (a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b))


def _make_node(fields: Dict[str, Any]) -> Node:
    """A Node from already-sanitized fields, without the dataclass __init__ (hot in importers)."""
    node = object.__new__(Node)
    node.__dict__.update(fields)
    return node


@dataclass(frozen=True)
class PageColumns:
    """Columnar view of one page in paint order, for the observation layer.

    Row ``k`` describes ``ids[k]``; rows are sorted by paint order (``order[k] == k``),
    so a higher row is painted above a lower one. The numpy columns are built
    eagerly; the lists of names (``ids``, ``types``, ``parent``, ``frame``,
    ``group``) are built on first access, so code that works with the integer
    columns never pays for them.

    Attributes
    ----------
    page : str
    rows : (n,) int64
        Row of each entry in :meth:`Canvas.geometry` (canvas order).
    bounds : (n, 4) float64
        Page bounds ``[x0, y0, x1, y1]``.
    visible : (n, 4) float64
        Bounds clipped by every ancestor frame; a row of NaN when nothing is left.
    clipped : (n,) bool
        Whether a frame cuts the node (``visible`` differs from ``bounds``).
    order : (n,) int64
        Paint order on the page (``0..n-1``).
    opacity : (n,) float64
        Effective opacity (product over ancestors).
    hidden, locked : (n,) bool
        The node's flag or an ancestor's.
    rotation : (n,) float64
        Page rotation in radians.
    depth : (n,) int64
        0 for nodes directly on the page.
    type_array : (n,) str
        Node types as a numpy string array.
    parent_row, frame_row, group_row : (n,) int64
        Row (in these columns) of the parent node, nearest frame and nearest group
        ancestor; -1 for none.
    ids, types : list of str
    parent, frame, group : list of (str or None)
        Parent node (None on the page), nearest frame and group ancestors.

    Examples
    --------
    >>> c = Canvas()
    >>> _ = c.add(Node("a", "geo", "page:page", "a1", 0, 0, 10, 10))
    >>> c.columns().bounds.tolist()
    [[0.0, 0.0, 10.0, 10.0]]
    """

    page: str
    rows: np.ndarray
    bounds: np.ndarray
    visible: np.ndarray
    clipped: np.ndarray
    order: np.ndarray
    opacity: np.ndarray
    hidden: np.ndarray
    locked: np.ndarray
    rotation: np.ndarray
    depth: np.ndarray
    type_array: np.ndarray
    parent_row: np.ndarray
    frame_row: np.ndarray
    group_row: np.ndarray
    page_pos: np.ndarray = field(repr=False)  # canvas row -> row here (-1 on other pages)
    _names: List[str] = field(repr=False, compare=False)  # canvas-order ids of the derivation
    _row_of: Mapping[str, int] = field(repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.rows)

    @cached_property
    def ids(self) -> List[str]:
        names = self._names
        return [names[r] for r in self.rows.tolist()]

    @cached_property
    def types(self) -> List[str]:
        return self.type_array.tolist()

    def _named(self, col: np.ndarray) -> List[Optional[str]]:
        ids = self.ids
        return [None if v < 0 else ids[v] for v in col.tolist()]

    @cached_property
    def parent(self) -> List[Optional[str]]:
        return self._named(self.parent_row)

    @cached_property
    def frame(self) -> List[Optional[str]]:
        return self._named(self.frame_row)

    @cached_property
    def group(self) -> List[Optional[str]]:
        return self._named(self.group_row)

    def id_of(self, k: int) -> str:
        """Id of the node in row ``k`` (without building :attr:`ids`)."""
        return self._names[int(self.rows[k])]

    def position(self, node_id: str) -> int:
        """Row of ``node_id`` in these columns (raises :class:`~spatialobs.OutOfRangeError`)."""
        r = self._row_of.get(node_id) if isinstance(node_id, str) else None
        k = -1 if r is None else int(self.page_pos[r])
        if k < 0:
            raise OutOfRangeError(f"node {node_id!r} is not on page {self.page!r}")
        return k


class Canvas:
    """A canvas document: pages, typed nodes, bindings, cameras and selection.

    Every change goes through :meth:`add`, :meth:`update` and :meth:`remove`, which
    run the one sanitizer (:mod:`spatialobs.canvas.document.sanitize`) and keep the tree valid
    (parents exist, no cycles, bindings attach to existing nodes). Derived geometry
    (page transforms, bounds, frame clipping, paint order) is computed in bulk on
    first use and cached until the next write. :meth:`batch` groups writes into one
    atomic transaction.

    Parameters
    ----------
    default_page : bool
        Start with one empty page ``"page:page"`` named "Page 1".

    Attributes
    ----------
    cameras : dict
        Page id → :class:`Viewport` saved with the document.
    selection : dict
        Page id → tuple of selected node ids saved with the document.
    current_page : str or None
    diagnostics : list of Diagnostic
        Problems found while loading and how they were handled.

    Examples
    --------
    >>> c = Canvas()
    >>> _ = c.add(Node("shape:f", "frame", "page:page", "a1", 0, 0, 100, 100))
    >>> _ = c.add(Node("shape:b", "geo", "shape:f", "a1", 90, 10, 40, 20))
    >>> c.page_bounds("shape:b")
    (90.0, 10.0, 130.0, 30.0)
    >>> c.visible_bounds("shape:b")
    (90.0, 10.0, 100.0, 30.0)
    >>> c.paint_order()
    ['shape:f', 'shape:b']
    """

    def __init__(self, *, default_page: bool = True) -> None:
        self._pages: Dict[str, Page] = {}
        self._nodes: Dict[str, Node] = {}
        self._bindings: Dict[str, Binding] = {}
        self._children: Dict[str, Dict[str, None]] = {}
        self._derived: Optional[Derived] = None
        self._raw: Optional[Raw] = None          # input columns of the last derivation
        self._prev: Optional[Derived] = None     # the last derivation, for reuse after edits
        self._dirty: Optional[Dict[str, None]] = {}  # nodes updated since then; None: rebuild
        # item orders before a batch's first removal (a list, or the derivation's id list and its length then)
        self._orders: Optional[Dict[str, Any]] = None
        #: whether the current id list and row map of the derivation were handed out (by
        #: :meth:`geometry` or :meth:`columns`): while not, an append extends them in place
        self._ids_out = False
        self._added: Dict[str, None] = {}        # nodes added since then (in canvas order)
        self._gone: Set[str] = set()             # rows of the last derivation removed since
        self._rebound: Set[str] = set()          # connectors whose bindings were written since then
        self._local_cache: Dict[str, Any] = {}
        self._arrow_cache: Dict[str, Any] = ArrowCache()  # resolved arrows, kept while their inputs are
        self._log: Optional[List[Tuple[str, str, Any]]] = None
        self._writes = 0  # items written so far (rollbacks count): a cheap "has anything changed" for caches
        self._removals = 0  # nodes removed so far
        self._binding_writes = 0  # binding records written so far: observations reuse their binding rows while it stays
        self._observed: Any = None  # (derivation serial, page states) of the last observation, for the next version's
        self._top_index: Dict[str, str] = {}  # parent -> highest child index key, filled by _next_index, kept by _put
        # bindings by connector and by target, built on first use (_binding_index) and kept by _put
        self._from_index: Optional[_BindingIndex] = None
        # parent -> sorted index keys of its children (all, and those that are not arrows),
        # built per parent on first use (_keys_above) and kept by _put
        self._kid_keys: Dict[str, Tuple[List[str], List[str]]] = {}
        self._depth = 0
        #: Who the writes are made by ("person" unless inside :meth:`by`); read by change journals.
        self.write_origin = "person"
        self._journal: Optional[List[Tuple[str, str, Any, str]]] = None  # (kind, id, old value, origin); see canvas.changes
        self._source: Any = None
        self.cameras: Dict[str, Viewport] = {}
        self.selection: Dict[str, Tuple[str, ...]] = {}
        self.current_page: Optional[str] = None
        self.diagnostics: List[Diagnostic] = []
        self.meta: Dict[str, Any] = {}
        if default_page:
            self._put("page", "page:page", Page("page:page", "Page 1", "a1"))
            self.current_page = "page:page"

    # ------------------------------------------------------------------ read access
    @property
    def nodes(self) -> Mapping[str, Node]:
        """Read-only live mapping id → :class:`Node`."""
        return MappingProxyType(self._nodes)

    @property
    def bindings(self) -> Mapping[str, Binding]:
        """Read-only live mapping id → :class:`Binding`."""
        return MappingProxyType(self._bindings)

    @property
    def pages(self) -> Mapping[str, Page]:
        """Read-only live mapping id → :class:`Page`."""
        return MappingProxyType(self._pages)

    @property
    def source_format(self) -> Optional[str]:
        """``"tldraw"``, ``"excalidraw"`` or None: the format the document was loaded from."""
        return None if self._source is None else self._source.format

    def page_ids(self) -> List[str]:
        """Page ids in page order (by index)."""
        return [p.id for p in sorted(self._pages.values(), key=lambda p: (p.index, p.id))]

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._nodes or item_id in self._bindings or item_id in self._pages

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Canvas):
            return NotImplemented
        return (self._pages == other._pages and self._nodes == other._nodes
                and self._bindings == other._bindings and self.cameras == other.cameras
                and self.selection == other.selection and self.current_page == other.current_page)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Canvas(pages={len(self._pages)}, nodes={len(self._nodes)}, bindings={len(self._bindings)})"

    def node(self, node_id: str) -> Node:
        """The node ``node_id``; :class:`~spatialobs.OutOfRangeError` when absent."""
        try:
            return self._nodes[node_id]
        except KeyError:
            raise OutOfRangeError(f"no node with id {node_id!r}") from None

    def children(self, parent_id: str) -> List[str]:
        """Ids of the direct children of a node or page, in paint order (by index).

        Examples
        --------
        >>> Canvas().children("page:page")
        []
        """
        kids = self._children.get(parent_id, {})
        return sorted(kids, key=lambda k: (self._nodes[k].index, k))

    def ancestors(self, node_id: str) -> List[str]:
        """Ancestor node ids from the parent upwards (the page is not included)."""
        out: List[str] = []
        p = self.node(node_id).parent
        while p in self._nodes:
            out.append(p)
            p = self._nodes[p].parent
        return out

    def descendants(self, node_id: str) -> List[str]:
        """All node ids below ``node_id`` (depth first, children in index order)."""
        out: List[str] = []
        stack = list(reversed(self.children(node_id)))
        while stack:
            k = stack.pop()
            out.append(k)
            stack.extend(reversed(self.children(k)))
        return out

    def page_of(self, node_id: str) -> str:
        """Id of the page a node is on."""
        p = self.node(node_id).parent
        while p in self._nodes:
            p = self._nodes[p].parent
        return p

    def _binding_index(self) -> "_BindingIndex":
        index = self._from_index
        if index is None:
            index = self._from_index = _BindingIndex(self._bindings)
        return index

    def _bindings_from(self, connector: str) -> List[Binding]:
        """The bindings whose connector is ``connector`` (in no particular order), without a scan."""
        own = self._binding_index().by_from.get(connector)
        return [self._bindings[bid] for bid in own] if own else []

    def _terms_of(self, connector: str) -> Dict[str, Binding]:
        """``connector``'s bindings by terminal (``"start"``, ``"end"``): where one end holds two, the
        later in canvas order; read from the binding index, without a scan of every binding (the one
        reading behind the observation's painted segments, :func:`~spatialobs.canvas.paint.straight_segment_kept`
        and the arrow inputs of :func:`~spatialobs.canvas.document.arrows.resolve_arrow`)."""
        own = self._bindings_from(connector)
        if len({b.terminal for b in own}) < len(own):
            own = self._bindings_of({connector})  # in canvas order: the later wins
        return {b.terminal: b for b in own}

    def _bindings_of(self, connectors: Set[str]) -> List[Binding]:
        """The bindings whose connector is one of ``connectors``, in canvas order, without a scan."""
        index = self._binding_index()
        by_from = index.by_from
        own = [bid for i in connectors for bid in by_from.get(i, ())]
        own.sort(key=index.seq.__getitem__)
        return [self._bindings[bid] for bid in own]

    def _connectors_to(self, target: str) -> List[str]:
        """The connector of every binding to ``target``, in canvas order of the bindings, without a scan."""
        index = self._binding_index()
        own = index.by_to.get(target)
        if not own:
            return []
        return [self._bindings[bid].from_id for bid in sorted(own, key=index.seq.__getitem__)]

    def _bindings_touching(self, node_ids: Set[str]) -> List[str]:
        """Ids of the bindings from or to any of ``node_ids``, in canvas order, without a scan."""
        index = self._binding_index()
        found: Set[str] = set()
        for nid in node_ids:
            found.update(index.by_from.get(nid, ()))
            found.update(index.by_to.get(nid, ()))
        return sorted(found, key=index.seq.__getitem__)

    def _sorted_keys(self, parent: str) -> Tuple[List[str], List[str]]:
        """The index keys of the children of ``parent``, sorted, and those of the ones that are not
        arrows (built once per parent, then kept by every write)."""
        keys = self._kid_keys.get(parent)
        if keys is None:
            kids = [self._nodes[k] for k in self._children.get(parent, ())]
            keys = self._kid_keys[parent] = (sorted(nd.index for nd in kids),
                                             sorted(nd.index for nd in kids if nd.type != "arrow"))
        return keys

    def _keys_above(self, parent: str, key: str) -> Tuple[Optional[str], Optional[str]]:
        """The lowest index key above ``key`` among the children of ``parent``, and the lowest
        among those that are not arrows (None: no such child), by bisection."""
        every, solid = self._sorted_keys(parent)
        at, at_solid = bisect_right(every, key), bisect_right(solid, key)
        return (every[at] if at < len(every) else None), (solid[at_solid] if at_solid < len(solid) else None)

    # ------------------------------------------------------------------ derived data
    def _geometry(self) -> Derived:
        if self._derived is None:
            if len(self._nodes) < PAUSE_FROM_NODES:
                self._derive_version()
            else:
                # no collector passes over the records and columns being built, nor after (spatialobs._gc)
                with paused(promote=True):
                    self._derive_version()
        assert self._derived is not None
        return self._derived

    def _derive_version(self) -> None:
        """Derive the current version (from the previous derivation where the edits allow)."""
        raw = None
        in_place = False
        prev0 = prev = self._prev
        rebound: AbstractSet[str] = self._rebound
        if rebound:  # with their bindings from the index: the arrow pass scans no binding for them
            rebound = Rebound(rebound, self._bindings_of(self._rebound))
        ids_before = self._raw.ids if self._raw is not None else None
        # appends extend the id list and row map in place, removals delete from them, while no
        # caller holds them (see geometry)
        share = self._may_share()
        chain: List[Derived] = []
        if self._raw is not None and self._dirty is not None:
            if (self._added or self._gone) and len(self._nodes) < _derivation.MIN_TREE_ROWS:
                pass  # a small canvas derives afresh (see MIN_TREE_ROWS): no columns spliced, no steps
            elif self._added or self._gone:
                nodes = self._nodes
                changed = {k: nodes[k] for k in self._dirty if k not in self._added}
                added = [nodes[k] for k in self._added]
                old = self._raw
                tree = {k: nd for k, nd in changed.items()
                        if (o := old.nodes[old.row[k]]).parent != nd.parent or o.index != nd.index}
                # the canvas's own input columns, written in place (as for a patch below)
                if prev is not None and bool(self._gone) + bool(tree) + bool(added) > 1:
                    raw, prev = self._staged(prev, changed, tree, added, rebound, chain)
                else:
                    raw = splice(self._raw, self._gone, added, changed, self._children, own=True, share=share)
                self._raw = None
                # the previous derivation's own columns take the appended rows in their spare rows,
                # or lose the removed ones in place (nothing reads it again: see the patch below)
                in_place = True
                # rows must stay in canvas order: a cheap check against the dict itself. Appends
                # go last in both; a removal deletes the same ids from both, which keeps the others'
                # order: the tail is checked (the appended rows and a few before them), not every
                # row (comparing all 10^5 ids cost ~2 ms per version, three times in a reply)
                k = len(self._added) + (16 if self._gone else 0)
                if raw is not None and (len(raw.ids) != len(nodes) or (k and not (
                        list(itertools.islice(reversed(nodes), k))[::-1] == raw.ids[max(len(raw.ids) - k, 0):]))):
                    raw = None  # pragma: no cover - defensive
            elif self._dirty:
                # the canvas's own input columns, written in place: until the derivation
                # below succeeds the canvas holds none (a failed one derives afresh next time)
                raw = patch(self._raw, {k: self._nodes[k] for k in self._dirty}, own=True)
                self._raw = None
                # and so are the previous derivation's own columns (those no other derivation
                # shares and no caller was handed): nothing reads it again (the observation keeps
                # copies of the rows it reads, the peeks are done)
                in_place = True
            elif rebound:
                raw = patch(self._raw, {})  # bindings written only: the same rows, none replaced
            else:
                raw = self._raw
        if raw is None:
            raw = extract(self._nodes.values())
        self._prev = None
        # no binding written since ``prev``: its arrow plan's bindings are the canvas's, in order
        same_bindings = prev is not None and prev.binding_writes == self._binding_writes
        d = derive(raw.nodes, self._pages, self._bindings, self._local_cache, raw, prev,
                   arrow_cache=self._arrow_cache, rebound=rebound, in_place=in_place and prev is not None,
                   same_bindings=same_bindings)
        d.binding_writes = self._binding_writes
        if chain:
            _compose_steps(prev0, chain + [d])  # type: ignore[arg-type]
        self._derived = d
        if prev0 is not None:
            d.since = _since(prev0, d, rebound, self._observed[0] if self._observed is not None else None)
        self._raw = raw
        if raw.ids is not ids_before:  # a new id list (and row map): nobody holds it yet
            self._ids_out = False
        self._dirty = {}
        self._added = {}
        self._gone = set()
        self._rebound = set()

    def _may_share(self) -> bool:
        """Whether the next derivation may edit the id list and row map of the canvas's input
        columns in place (see :func:`splice`): no caller was handed them, and no rollback of a
        batch restores the node order from the list (it keeps the list and its length then)."""
        if self._ids_out:
            return False
        raw, orders = self._raw, self._orders
        return not (self._gone and raw is not None and orders
                    and any(type(v) is tuple and v[0] is raw.ids for v in orders.values()))

    def _staged(self, prev: Derived, changed: Dict[str, Node], tree: Dict[str, Node], added: List[Node],
                rebound: AbstractSet[str], chain: List[Derived]) -> Tuple[Optional[Raw], Derived]:
        """The input columns of a version that removed, moved in the tree and added nodes,
        reached in steps each derived from the one before (the removals, then the moves,
        then the appends: each a step the derivation carries from the previous one); the
        steps' derivations are put on ``chain``. Returns the last step's columns (not yet
        derived) and the derivation it follows."""
        raw: Optional[Raw] = self._raw
        assert raw is not None
        rest = {k: nd for k, nd in changed.items() if k not in tree}
        steps = [s for s, on in (("gone", self._gone), ("tree", tree), ("added", added)) if on]
        for k, step in enumerate(steps):
            # each step's columns belong to this call alone (the canvas's own are dropped by the caller)
            if step == "gone":
                raw = splice(raw, self._gone, (), rest, self._children, own=True, share=self._may_share())
                rest = {}
            elif step == "tree":
                raw = patch(raw, {**rest, **tree}, own=True)
                rest = {}
            else:
                raw = splice(raw, set(), added, rest, self._children, own=True, share=self._may_share())
            if raw is None:
                return None, prev
            if k < len(steps) - 1:
                # each step's derivation is used up by the next (the chain keeps only how they follow)
                prev = derive(raw.nodes, self._pages, self._bindings, self._local_cache, raw, prev,
                              arrow_cache=self._arrow_cache, rebound=rebound, in_place=True)
                chain.append(prev)
        return raw, prev

    # Between writes and the next derivation, an op that needs a few nodes' placement reads
    # it here instead of deriving the whole canvas (O(n) per op would make a reply of n ops
    # quadratic). Each value is the one the next derivation gives, to the bit: a node whose
    # inputs are unchanged since the last derivation keeps that derivation's value; a node
    # on a changed chain is composed from its records with the derivation's own formulas
    # (the same float operations), where they need no cosine (numpy and the math module may
    # round one apart). Where neither holds, the peek gives None and the caller derives.
    def _clean(self, node: Optional[Node]) -> bool:
        """Whether ``node`` and its ancestors are unchanged since the last derivation."""
        dirty, added, nodes = self._dirty, self._added, self._nodes
        assert dirty is not None
        while node is not None:
            if node.id in dirty or node.id in added:
                return False
            node = nodes.get(node.parent)
        return True

    def _peek_xf(self, node_id: str) -> Optional[Tuple[float, float, float]]:
        """``(px, py, rotation)`` of a node as :meth:`geometry` gives them, without deriving (None: derive)."""
        d = self._derived
        if d is not None:
            r = d.row[node_id]
            return float(d.px[r]), float(d.py[r]), float(d.rotation[r])
        prev, dirty, added, nodes = self._prev, self._dirty, self._added, self._nodes
        if prev is None or dirty is None or self._raw is None:
            return None
        chain: List[Node] = []  # the node and its ancestors, up to the page
        up = nodes.get(node_id)
        while up is not None:
            chain.append(up)
            up = nodes.get(up.parent)
        changed = [k for k, nd in enumerate(chain) if nd.id in dirty or nd.id in added]
        if not changed:  # unchanged up to the page: the derivation's values stand
            r = prev.row[node_id]
            return float(prev.px[r]), float(prev.py[r]), float(prev.rotation[r])
        top = changed[-1]
        if top + 1 < len(chain):  # the nearest ancestor unchanged with all of its own
            r = prev.row[chain[top + 1].id]
            px, py, rot = float(prev.px[r]), float(prev.py[r]), float(prev.rotation[r])
        else:  # a root: the derivation starts from its record
            nd = chain[top]
            px, py, rot = float(nd.x), float(nd.y), float(nd.rotation)
            top -= 1
        for nd in reversed(chain[:top + 1]):
            if rot != 0.0:
                return None
            x, y = float(nd.x), float(nd.y)
            # the derivation's formulas with cos 0 = 1 and sin 0 = 0, operation for operation
            px, py, rot = px + 1.0 * x - 0.0 * y, py + 0.0 * x + 1.0 * y, rot + float(nd.rotation)
        return px, py, rot

    def _peek_frame(self, node_id: str) -> Optional[Tuple[float, float, float, Box]]:
        """``(px, py, rotation, local box)`` of a node whose local box is its own size (not a
        group, whose box is its members', nor a point list or arrow), without deriving (None: derive)."""
        node = self._nodes.get(node_id)
        if node is None or node.type == "group" or node.type in POINT_TYPES:
            return None
        xf = self._peek_xf(node_id)
        if xf is None:
            return None
        return xf[0], xf[1], xf[2], (0.0, 0.0, float(node.w), float(node.h))

    def _peek_bounds(self, node_id: str) -> Optional[Box]:
        """:meth:`page_bounds` of a node without deriving (None: derive).

        Unchanged inputs keep the last derivation's bounds: the node and its ancestors,
        and for an arrow its bindings and their targets with their ancestors (a group,
        bounded by its members, is always derived). A node of its own size is bounded
        from its page position when that has no turn.
        """
        d = self._derived
        if d is not None:
            r = d.row.get(node_id)
            return None if r is None else tuple(float(v) for v in d.bounds[r])  # type: ignore[return-value]
        node = self._nodes.get(node_id)
        prev = self._prev
        if node is None or node.type == "group" or prev is None or self._dirty is None or self._raw is None:
            return None
        if self._clean(node):
            if node.type == "arrow":
                if node_id in self._rebound:
                    return None
                nodes = self._nodes
                if not all(self._clean(nodes.get(b.to_id)) for b in self._bindings_from(node_id)):
                    return None
            r = prev.row[node_id]
            return tuple(float(v) for v in prev.bounds[r])  # type: ignore[return-value]
        if node.type in POINT_TYPES:
            return None
        xf = self._peek_xf(node_id)
        if xf is None:
            return None
        px, py, rot = xf
        if node_id not in self._dirty and node_id not in self._added:
            r = prev.row[node_id]
            if _same(float(prev.px[r]), px) and _same(float(prev.py[r]), py) and _same(float(prev.rotation[r]), rot):
                return tuple(float(v) for v in prev.bounds[r])  # type: ignore[return-value]
        w, h = float(node.w), float(node.h)
        if rot != 0.0 or not (w > 0.0 and h > 0.0):
            return None  # a turned box, or corners that tie as signed zeros: the derivation decides
        # _aabb's corners with cos 0 = 1 and sin 0 = 0: the lowest and highest are the box's own
        box = (px + 1.0 * 0.0 - 0.0 * 0.0, py + 0.0 * 0.0 + 1.0 * 0.0, px + 1.0 * w - 0.0 * 0.0, py + 0.0 * w + 1.0 * h)
        if not all(abs(v) <= MAX_DERIVED for v in box):
            return px, py, px, py  # broken geometry is bounded by its origin, as the derivation bounds it
        return box

    def geometry(self) -> Derived:
        """Derived columnar geometry of every node (canvas order), cached until the next write.

        Prefer :meth:`columns` for one page in paint order.
        """
        d = self._geometry()
        # handed out: the next append copies the id list and row map instead of extending them,
        # and the next derivation copies the columns it changes instead of writing them in place
        self._ids_out = True
        d.owned = frozenset()
        return d

    def _row(self, node_id: str) -> int:
        d = self._geometry()
        try:
            return d.row[node_id]
        except KeyError:
            raise OutOfRangeError(f"no node with id {node_id!r}") from None

    def page_bounds(self, node_id: str) -> Box:
        """Page bounds ``(x0, y0, x1, y1)`` of a node (rotation and parents applied).

        Examples
        --------
        >>> import math
        >>> c = Canvas()
        >>> _ = c.add(Node("r", "geo", "page:page", "a1", 0, 0, 10, 10, rotation=math.pi / 2))
        >>> [round(v, 9) for v in c.page_bounds("r")]
        [-10.0, 0.0, 0.0, 10.0]
        """
        r = self._row(node_id)
        return tuple(float(v) for v in self._derived.bounds[r])  # type: ignore[union-attr, return-value]

    def visible_bounds(self, node_id: str) -> Optional[Box]:
        """Page bounds clipped by every ancestor frame; None when a frame hides it entirely."""
        r = self._row(node_id)
        v = self._derived.visible[r]  # type: ignore[union-attr]
        if np.isnan(v[0]):
            return None
        return tuple(float(t) for t in v)  # type: ignore[return-value]

    def page_rotation(self, node_id: str) -> float:
        """Rotation of a node on the page (radians), the sum over its ancestors."""
        return float(self._geometry().rotation[self._row(node_id)])

    def frame_of(self, node_id: str) -> Optional[str]:
        """Nearest ancestor of type ``frame``, or None."""
        d = self._geometry()
        f = int(d.frame[self._row(node_id)])
        return None if f < 0 else d.ids[f]

    def group_of(self, node_id: str) -> Optional[str]:
        """Nearest ancestor of type ``group``, or None."""
        d = self._geometry()
        g = int(d.group[self._row(node_id)])
        return None if g < 0 else d.ids[g]

    def _resolve_page(self, page: Optional[str]) -> str:
        if page is None:
            if self.current_page in self._pages:
                return self.current_page
            ids = self.page_ids()
            if not ids:
                raise OutOfRangeError("the canvas has no page")
            return ids[0]
        if page not in self._pages:
            raise OutOfRangeError(f"no page with id {page!r}")
        return page

    def _page_rows(self, page: Optional[str]) -> Tuple[str, np.ndarray]:
        pid = self._resolve_page(page)
        d = self._geometry()
        k = d.page_ids.index(pid)
        return pid, d.paint[d.page_start[k]:d.page_start[k + 1]]

    def paint_order(self, page: Optional[str] = None) -> List[str]:
        """Node ids of a page (default: the current page) from bottom to top.

        Paint order is a depth-first walk of the tree with siblings sorted by
        ``index`` (ties by id): a parent is painted before its children.
        """
        _, rows = self._page_rows(page)
        ids = self._derived.ids  # type: ignore[union-attr]
        return [ids[r] for r in rows.tolist()]

    def columns(self, page: Optional[str] = None) -> PageColumns:
        """Columnar geometry and state of one page in paint order (see :class:`PageColumns`)."""
        cols = self._columns(page)
        self._ids_out = True  # they name rows through the derivation's id list and row map (see geometry)
        return cols

    def _columns(self, page: Optional[str]) -> PageColumns:
        """:meth:`columns` for a reader that keeps no reference to its id list and row map."""
        pid, rows = self._page_rows(page)
        d = self._derived
        assert d is not None
        n = len(rows)
        runs = _row_runs(rows)
        order = np.arange(n, dtype=np.int64)
        pos, same = _page_pos(len(d.ids), rows, runs)
        bounds = _gather(d.bounds, rows, runs)
        visible = _gather(d.visible, rows, runs)
        # a row is clipped where any coordinate differs: compared two coordinates at a time, as complex numbers
        ne = bounds.view(np.complex128) != visible.view(np.complex128)
        clipped = ne[:, 0] | ne[:, 1]
        parent, frame, group = (_gather(d.parent, rows, runs), _gather(d.frame, rows, runs),
                                _gather(d.group, rows, runs))
        return PageColumns(
            page=pid, rows=rows, bounds=bounds, visible=visible, clipped=clipped,
            order=order, opacity=_gather(d.opacity, rows, runs), hidden=_gather(d.hidden, rows, runs),
            locked=_gather(d.locked, rows, runs), rotation=_gather(d.rotation, rows, runs),
            depth=_gather(d.depth, rows, runs), type_array=_gather(d.types, rows, runs),
            parent_row=parent if same else pos[parent], frame_row=frame if same else pos[frame],
            group_row=group if same else pos[group], page_pos=pos[:-1], _names=d.ids, _row_of=d.row,
        )

    def page_extent(self, page: Optional[str] = None) -> Optional[Box]:
        """Union of the page bounds of a page's nodes (None for an empty page)."""
        _, rows = self._page_rows(page)
        if not len(rows):
            return None
        b = self._derived.bounds[rows]  # type: ignore[union-attr]
        return (float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()), float(b[:, 3].max()))

    def viewport(self, page: Optional[str] = None) -> Optional[Viewport]:
        """The camera saved for a page as a :class:`Viewport`, or None."""
        return self.cameras.get(self._resolve_page(page))

    def selected(self, page: Optional[str] = None) -> Tuple[str, ...]:
        """Ids selected on a page in the saved document (only existing nodes)."""
        return tuple(i for i in self.selection.get(self._resolve_page(page), ()) if i in self._nodes)

    # ------------------------------------------------------------------ write path
    def _put(self, kind: str, item_id: str, value: Any) -> None:
        """Set or delete (value None) one item, keeping the child index and undo log."""
        stores: Dict[str, Dict[str, Any]] = {"node": self._nodes, "binding": self._bindings, "page": self._pages}
        store = stores[kind]
        old = store.get(item_id)
        self._writes += 1
        if value is None and kind == "node":
            self._removals += 1
        if kind == "binding":
            self._binding_writes += 1
        if self._journal is not None:
            self._journal.append((kind, item_id, old, self.write_origin))
        if self._log is not None:
            self._log.append((kind, item_id, old))
            if value is None and old is not None and self._orders is not None and kind not in self._orders:
                # a rollback re-adds removed items at the end: remember the order once per batch. The
                # derivation's id list is the node order while no node was added or removed since
                # (it is never written in place): shared, not copied (a fresh list of 10^5 ids costs
                # its copy and a pass of the garbage collector over it)
                raw = self._raw
                if (kind == "node" and raw is not None and self._dirty is not None and not self._gone
                        and len(raw.ids) + len(self._added) == len(store)):
                    # an append may extend it: its length now; the nodes added since follow it in store order
                    self._orders[kind] = (raw.ids, len(raw.ids), list(self._added))
                else:
                    self._orders[kind] = list(store)
        if kind == "node":
            top_index = self._top_index
            kid_keys = self._kid_keys
            if old is not None:
                sib = self._children.get(old.parent)
                if sib is not None:
                    sib.pop(item_id, None)
                top = top_index.get(old.parent)
                if top is not None and not old.index < top:  # the highest child left: recomputed when asked
                    del top_index[old.parent]
                keys = kid_keys.get(old.parent)
                if keys is not None:
                    _drop_key(keys[0], old.index)
                    if old.type != "arrow":
                        _drop_key(keys[1], old.index)
            if value is not None:
                self._children.setdefault(value.parent, {})[item_id] = None
                top = top_index.get(value.parent)
                if top is not None and value.index > top:
                    top_index[value.parent] = value.index
                keys = kid_keys.get(value.parent)
                if keys is not None:
                    insort(keys[0], value.index)
                    if value.type != "arrow":
                        insort(keys[1], value.index)
        elif kind == "binding" and self._from_index is not None:
            self._from_index.put(item_id, old, value)
        if value is None:
            store.pop(item_id, None)
        else:
            store[item_id] = value
        if self._derived is not None:
            self._prev = self._derived
        self._derived = None
        if kind == "binding" and self._dirty is not None and self._raw is not None:
            for b in (old, value):
                if b is not None:
                    self._rebound.add(b.from_id)
        if kind == "node" and self._dirty is not None and self._raw is not None:
            # keep track of how the rows of the last derivation change: an update keeps
            # its row (patched), an add appends one (dict order), a removal drops one
            if old is not None and value is not None:
                self._dirty[item_id] = None
            elif value is not None:
                self._added[item_id] = None
            elif old is not None:
                self._dirty.pop(item_id, None)
                if item_id in self._added:
                    del self._added[item_id]
                else:
                    self._gone.add(item_id)

    @contextmanager
    def batch(self) -> Iterator["Canvas"]:
        """Group writes into one transaction: all of them apply, or none does.

        Derived geometry is recomputed once, after the batch. If an exception leaves
        the block, every write made inside it is undone and the exception propagates.
        Batches nest (an inner batch joins the outer one).

        Examples
        --------
        >>> c = Canvas()
        >>> try:
        ...     with c.batch():
        ...         _ = c.add(Node("a", "geo", "page:page"))
        ...         _ = c.add(Node("b", "geo", "no-such-parent"))
        ... except ValueError:
        ...     pass
        >>> "a" in c.nodes
        False
        """
        outer = self._log is not None
        if not outer:
            self._log = []
            self._orders = {}
        self._depth += 1
        mark = len(self._log)  # type: ignore[arg-type]
        journal = self._journal
        jmark = None if journal is None else len(journal)
        saved = (dict(self.cameras), dict(self.selection), self.current_page)
        try:
            yield self
        except BaseException:
            log = self._log
            assert log is not None
            self._log = None
            for kind, item_id, old in reversed(log[mark:]):
                self._put(kind, item_id, old)
            del log[mark:]
            if journal is not None and journal is self._journal and jmark is not None:
                del journal[jmark:]  # a rolled-back write was never made: nobody changed anything
            if not outer and self._orders:
                self._restore_orders(self._orders)
            self.cameras, self.selection, self.current_page = dict(saved[0]), dict(saved[1]), saved[2]
            self._log = log if outer else None
            raise
        finally:
            self._depth -= 1
            if not outer:
                self._log = None
                self._orders = None

    transaction = batch

    @contextmanager
    def by(self, origin: str) -> Iterator["Canvas"]:
        """Attribute the writes made inside the block to ``origin`` (``"person"`` or ``"agent"``).

        Writes outside any such block are a person's. The agent executor applies its ops
        inside ``by("agent")``; :func:`spatialobs.canvas.observe` with ``since=`` reports
        who made each change.

        Examples
        --------
        >>> c = Canvas()
        >>> with c.by("agent"):
        ...     c.write_origin
        'agent'
        >>> c.write_origin
        'person'
        """
        if origin not in ("person", "agent"):
            raise InvalidInputError(f"origin must be 'person' or 'agent', got {origin!r}")
        saved, self.write_origin = self.write_origin, origin
        try:
            yield self
        finally:
            self.write_origin = saved

    def _restore_orders(self, orders: Dict[str, Any]) -> None:
        """Put rolled-back items back in their original order (so to_json gives the same bytes)."""
        for kind, keys in orders.items():
            if isinstance(keys, tuple):
                keys = keys[0][:keys[1]] + keys[2]
            stores: Dict[str, Dict[str, Any]] = {"node": self._nodes, "binding": self._bindings, "page": self._pages}
            store = stores[kind]
            if list(store) == keys:
                continue
            items = dict(store)
            store.clear()
            store.update((k, items.pop(k)) for k in keys if k in items)
            store.update(items)
            if kind == "node":  # cached rows follow the node order: derive afresh
                self._derived, self._raw, self._dirty, self._prev = None, None, None, None
                self._added, self._gone = {}, set()
            elif kind == "binding":
                self._from_index = None

    def _check_parent(self, node_id: str, parent: str) -> None:
        if parent in self._pages:
            return
        if parent not in self._nodes:
            raise InvalidInputError(f"record {node_id!r}: parent {parent!r} is neither a node nor a page")
        p: Optional[str] = parent
        while p in self._nodes:
            if p == node_id:
                raise InvalidInputError(f"record {node_id!r}: parent {parent!r} would create a parent cycle")
            p = self._nodes[p].parent

    def _next_index(self, parent: str) -> str:
        kids = self._children.get(parent)
        if not kids:
            return key_after(None)
        top = self._top_index.get(parent)
        if top is None:  # once per parent and change of its highest child, not once per added node
            if len(kids) > 8 or parent in self._kid_keys:
                # the sorted keys, kept by every write: a page whose top child keeps leaving (an
                # arrow created on it and moved into a frame) is not scanned again each time
                top = self._top_index[parent] = self._sorted_keys(parent)[0][-1]
            else:
                top = self._top_index[parent] = max(self._nodes[k].index for k in kids)
        return key_after(top)

    def add(self, item: Union[Item, Mapping[str, Any]]) -> Item:
        """Add a node, binding or page (a mapping is read as node fields).

        The node is sanitized (numeric strings coerced, style keys normalized, geometry
        validated); its parent must exist; without an index it goes on top of its
        siblings. A binding's connector and target must exist.

        Returns
        -------
        Node, Binding or Page
            The stored (sanitized) item.

        Raises
        ------
        InvalidInputError
            Bad field values, an unknown parent, a duplicate id; message names the record.

        Examples
        --------
        >>> c = Canvas()
        >>> c.add({"id": "a", "type": "geo", "parent": "page:page", "x": "5", "w": 10, "h": 10}).x
        5.0
        """
        if isinstance(item, Page):
            if not isinstance(item.id, str) or not item.id:
                raise InvalidInputError(f"page id must be a non-empty string, got {item.id!r}")
            if item.id in self:
                raise InvalidInputError(f"record {item.id!r}: id already exists")
            page = Page(item.id, str(item.name or ""), item.index or key_after(max((p.index for p in self._pages.values()), default=None)), dict(item.meta or {}))
            self._put("page", page.id, page)
            if self.current_page is None:
                self.current_page = page.id
            return page
        if isinstance(item, Binding):
            f = sanitize_binding_fields(item.to_dict())
            b = Binding(**f)
            if b.id in self:
                raise InvalidInputError(f"binding {b.id!r}: id already exists")
            for end in (b.from_id, b.to_id):
                if end not in self._nodes:
                    raise InvalidInputError(f"binding {b.id!r}: node {end!r} does not exist")
            self._put("binding", b.id, b)
            return b
        fields = item.to_dict() if isinstance(item, Node) else dict(item)
        clean = sanitize_node_fields(fields)
        nid = clean["id"]
        if nid in self:
            raise InvalidInputError(f"record {nid!r}: id already exists")
        self._check_parent(nid, clean["parent"])
        if clean.get("index") is None:
            clean["index"] = self._next_index(clean["parent"])
        if clean.get("type") in _MEASURED_TYPES:
            # tldraw measures a new text and grows a new label's shape; so does the write path
            fit_new_text_geometry(clean)
        if clean.get("type") in _EXCALIDRAW_MEASURED and self.source_format == "excalidraw":
            fit_new_excalidraw_text(clean)  # as Excalidraw measures a new text
        node = _make_node(clean)
        self._put("node", nid, node)
        return node

    def update(self, item_id: str, **changes: Any) -> Item:
        """Change fields of a node (or binding, or page) through the sanitizer.

        ``style`` and ``props`` are merged into the existing ones (a ``None`` value
        removes a key); other fields are replaced. Moving a node under one of its own
        descendants is rejected.

        Examples
        --------
        >>> c = Canvas()
        >>> _ = c.add(Node("a", "geo", "page:page", "a1", 0, 0, 10, 10, style={"color": "red"}))
        >>> n = c.update("a", x="12", style={"fill-style": "solid", "color": None})
        >>> n.x, n.style
        (12.0, {'fillStyle': 'solid'})
        """
        if item_id in self._nodes:
            old = self._nodes[item_id]
            if "id" in changes and changes["id"] != item_id:
                raise InvalidInputError(f"record {item_id!r}: the id of a node cannot change")
            ch = dict(changes)
            if "style" in ch:
                merged = dict(old.style)
                for k, v in (ch["style"] or {}).items():
                    merged[k] = v
                from spatialobs.canvas.document.sanitize import normalize_style_key
                norm: Dict[str, Any] = {}
                for k, v in merged.items():
                    norm[normalize_style_key(k)] = v
                ch["style"] = norm
            if "props" in ch:
                if ch["props"] is not None and not isinstance(ch["props"], Mapping):
                    raise InvalidInputError(f"record {item_id!r}: field 'props' must be an object")
                merged = dict(old.props)
                for k, v in (ch["props"] or {}).items():
                    if v is None:
                        merged.pop(k, None)
                    else:
                        merged[k] = v
                ch["props"] = merged
            clean = sanitize_node_fields({"id": item_id, **ch}, partial=True)
            clean.pop("id", None)
            if "parent" in clean and clean["parent"] != old.parent:
                self._check_parent(item_id, clean["parent"])
                if "index" not in clean:
                    clean["index"] = self._next_index(clean["parent"])
            new = old.to_dict()
            new.update(clean)
            if old.type in _MEASURED_TYPES and _MEASURED_FIELDS.intersection(clean):
                # tldraw re-measures text and labels on every edit; so does the write path
                refit_text_geometry(old.to_dict(), new)
            if old.type in _EXCALIDRAW_MEASURED and _MEASURED_FIELDS.intersection(clean) and self.source_format == "excalidraw":
                # Excalidraw re-measures a text and grows a container to its text on every edit
                refit_excalidraw_text(old.to_dict(), new, elements=getattr(self._source, "elements", ()))
            node = _make_node(new)
            if node != old:
                self._put("node", item_id, node)
            return node
        if item_id in self._bindings:
            old_b = self._bindings[item_id]
            d = old_b.to_dict()
            d.update(changes)
            f = sanitize_binding_fields(d)
            if f["id"] != item_id:
                raise InvalidInputError(f"binding {item_id!r}: the id of a binding cannot change")
            for end in (f["from_id"], f["to_id"]):
                if end not in self._nodes:
                    raise InvalidInputError(f"binding {item_id!r}: node {end!r} does not exist")
            b = Binding(**f)
            if b != old_b:
                self._put("binding", item_id, b)
            return b
        if item_id in self._pages:
            old_p = self._pages[item_id]
            unknown = set(changes) - {"name", "index", "meta"}
            if unknown:
                raise InvalidInputError(f"page {item_id!r}: unknown page field(s) {sorted(unknown)}")
            p = Page(item_id, str(changes.get("name", old_p.name) or ""), str(changes.get("index", old_p.index) or old_p.index),
                     dict(changes.get("meta", old_p.meta) or {}))
            if p != old_p:
                self._put("page", item_id, p)
            return p
        raise OutOfRangeError(f"no node, binding or page with id {item_id!r}")

    def put(self, item: Item) -> Item:
        """Store a node, binding or page whole, as given: add it, or replace the one with its id.

        Unlike :meth:`add` and :meth:`update`, nothing is measured or merged: the
        item's sizes and props are kept as they are. This is the write of an editor
        that measured its own text (a live tldraw or Excalidraw editor's record).
        Fields are still sanitized; a node's parent must exist and must not be the
        node or one of its descendants; a binding's ends must exist; an id of
        another kind of item is refused. A replaced node keeps its children and
        bindings.

        Examples
        --------
        >>> c = Canvas()
        >>> _ = c.add(Node("t", "text", "page:page", "a1", 0, 0, 10, 10, text="hi", props={"autoSize": True}))
        >>> c.put(Node("t", "text", "page:page", "a1", 0, 0, 31.5, 24, text="hello", props={"autoSize": True})).w
        31.5
        """
        if isinstance(item, Page):
            old_p = self._pages.get(item.id)
            if old_p is None:
                return self.add(item)
            page = Page(item.id, str(item.name or ""), item.index or old_p.index, dict(item.meta or {}))
            if page != old_p:
                self._put("page", page.id, page)
            return page
        if isinstance(item, Binding):
            f = sanitize_binding_fields(item.to_dict())
            b = Binding(**f)
            if b.id in self._nodes or b.id in self._pages:
                raise InvalidInputError(f"binding {b.id!r}: id already exists as a node or page")
            for end in (b.from_id, b.to_id):
                if end not in self._nodes:
                    raise InvalidInputError(f"binding {b.id!r}: node {end!r} does not exist")
            if self._bindings.get(b.id) != b:
                self._put("binding", b.id, b)
            return b
        if not isinstance(item, Node):
            raise InvalidInputError(f"put takes a Node, Binding or Page, got {type(item).__name__}")
        clean = sanitize_node_fields(item.to_dict())
        nid = clean["id"]
        if nid in self._bindings or nid in self._pages:
            raise InvalidInputError(f"record {nid!r}: id already exists as a binding or page")
        self._check_parent(nid, clean["parent"])
        old = self._nodes.get(nid)
        if clean.get("index") is None:
            clean["index"] = old.index if old is not None and old.parent == clean["parent"] else self._next_index(clean["parent"])
        node = _make_node(clean)
        if node != old:
            self._put("node", nid, node)
        return node

    def remove(self, item_id: str) -> List[str]:
        """Remove a node with its descendants and attached bindings, a binding, or a page.

        Returns
        -------
        list of str
            Every id removed (nodes, bindings, page).

        Examples
        --------
        >>> c = Canvas()
        >>> _ = c.add(Node("f", "frame", "page:page", w=10, h=10))
        >>> _ = c.add(Node("a", "geo", "f"))
        >>> c.remove("f")
        ['a', 'f']
        """
        removed: List[str] = []
        with self.batch():
            if item_id in self._bindings:
                self._put("binding", item_id, None)
                return [item_id]
            if item_id in self._nodes:
                doomed = self.descendants(item_id)[::-1] + [item_id]
            elif item_id in self._pages:
                doomed = []
                for k in self.children(item_id):
                    doomed.extend(self.descendants(k)[::-1] + [k])
            else:
                raise OutOfRangeError(f"no node, binding or page with id {item_id!r}")
            gone = set(doomed)
            attached = self._bindings_touching(gone)  # in canvas order, as a scan finds them
            # as tldraw does, an arrow that loses its target keeps its end where it was drawn
            freed: Dict[str, List[str]] = {}
            for b in (self._bindings[bid] for bid in attached):
                if b.to_id in gone and b.from_id not in gone and self._nodes[b.from_id].type == "arrow":
                    freed.setdefault(b.from_id, []).append(b.terminal)
            if freed:
                from spatialobs.canvas.document.arrows import unbind_patch
                patches = {aid: unbind_patch(self, aid, terms) for aid, terms in freed.items()}
            for bid in attached:
                self._put("binding", bid, None)
                removed.append(bid)
            if freed:
                for aid, unbound in patches.items():
                    if unbound:
                        self.update(aid, props=unbound)
            for nid in doomed:
                self._put("node", nid, None)
            removed = doomed + removed
            if item_id in self._pages:
                self._put("page", item_id, None)
                self.cameras.pop(item_id, None)
                self.selection.pop(item_id, None)
                if self.current_page == item_id:
                    ids = self.page_ids()
                    self.current_page = ids[0] if ids else None
                removed.append(item_id)
            for pid, sel in list(self.selection.items()):
                if any(s in gone for s in sel):
                    self.selection[pid] = tuple(s for s in sel if s not in gone)
        return removed

    def index_between(self, parent: str, below: Optional[str] = None, above: Optional[str] = None) -> str:
        """An index key placing a node under ``parent`` between siblings ``below`` and ``above``.

        ``below=None`` means the bottom, ``above=None`` the top.
        """
        a = self._nodes[below].index if below is not None else None
        b = self._nodes[above].index if above is not None else None
        if a is None and b is None:
            return self._next_index(parent)
        return key_between(a, b)

    def copy(self) -> "Canvas":
        """An independent copy (nodes are immutable, so they are shared)."""
        c = Canvas(default_page=False)
        c._pages = dict(self._pages)
        c._nodes = dict(self._nodes)
        c._bindings = dict(self._bindings)
        c._children = {k: dict(v) for k, v in self._children.items()}
        c._source = self._source
        c._raw, c._dirty, c._prev = None, None, None
        c._added, c._gone = {}, set()
        c.cameras = dict(self.cameras)
        c.selection = dict(self.selection)
        c.current_page = self.current_page
        c.diagnostics = list(self.diagnostics)
        c.meta = dict(self.meta)
        return c

    # ------------------------------------------------------------------ serialization
    def to_json(self) -> str:
        """The native JSON form (deterministic; :meth:`from_json` restores an equal canvas)."""
        return _codec("to_json")(self)

    @classmethod
    def from_json(cls, data: Union[str, bytes, Mapping[str, Any]]) -> "Canvas":
        """Read the native JSON form written by :meth:`to_json`."""
        return _codec("from_json")(data)

    def to_tldraw(self) -> Dict[str, Any]:
        """The document as a tldraw file / snapshot (see :func:`spatialobs.canvas.to_tldraw`)."""
        return _codec("to_tldraw")(self)

    def to_excalidraw(self, *, page: Optional[str] = None, updated: Optional[int] = None) -> Dict[str, Any]:
        """The document as an Excalidraw scene (see :func:`spatialobs.canvas.to_excalidraw`)."""
        return _codec("to_excalidraw")(self, page=page, updated=updated)


#: The file formats' readers and writers behind :meth:`Canvas.to_json`, :meth:`Canvas.from_json`,
#: :meth:`Canvas.to_tldraw` and :meth:`Canvas.to_excalidraw`. The document layer imports no format:
#: :mod:`spatialobs.canvas.formats`, the floor above it, fills this table when it is imported (which
#: :mod:`spatialobs.canvas` does before any canvas can be made), each entry loading its format's
#: module on first use.
CODECS: Dict[str, Callable[..., Any]] = {}


def _codec(name: str) -> Callable[..., Any]:
    fn = CODECS.get(name)
    if fn is None:
        raise SpatialObsError(f"Canvas.{name}: no file formats are installed (import spatialobs.canvas.formats)")
    return fn


def build_canvas(
    pages: Sequence[Page],
    node_fields: Sequence[Mapping[str, Any]],
    binding_fields: Sequence[Mapping[str, Any]],
    diagnostics: List[Diagnostic],
    *,
    sanitized: bool = False,
) -> Canvas:
    """Assemble a canvas from importer output, repairing what a real file gets wrong.

    Duplicate ids keep their first occurrence; a node whose parent is missing moves
    to the first page; parent cycles are cut by moving one member of each to its
    page; bindings to missing nodes are dropped. Each repair is a diagnostic.
    """
    c = Canvas(default_page=False)
    for pg in pages:
        if pg.id in c._pages:
            diagnostics.append(Diagnostic("duplicate_id", pg.id, "page id appears twice; the first is kept"))
            continue
        c._pages[pg.id] = pg
    nodes: Dict[str, Dict[str, Any]] = {}
    f: Dict[str, Any]
    for raw in node_fields:
        if type(raw) is CleanFields:
            f = raw  # checked by the importer; owned by this call
        elif sanitized:
            f = dict(raw)
        else:
            f = sanitize_node_fields(raw, strict=False, diagnostics=diagnostics)
        nid = f["id"]
        if nid in nodes or nid in c._pages:
            diagnostics.append(Diagnostic("duplicate_id", nid, "id appears twice; the first record is kept"))
            continue
        nodes[nid] = f
    if nodes and not c._pages:
        c._pages["page:page"] = Page("page:page", "Page 1", "a1")
        diagnostics.append(Diagnostic("missing_page", "page:page", "the document has shapes but no page; one was created"))
    first_page = c.page_ids()[0] if c._pages else None
    for nid, f in nodes.items():
        p = f.get("parent")
        if p not in nodes and p not in c._pages:
            diagnostics.append(Diagnostic("dangling_parent", nid, f"parent {p!r} does not exist; moved to page {first_page!r}"))
            f["parent"] = first_page
    # cycles: follow parents with memoized colouring
    state: Dict[str, int] = {}
    for start in nodes:
        if start in state:
            continue
        path: List[str] = []
        cur: Optional[str] = start
        while cur in nodes and cur not in state:
            state[cur] = 1
            path.append(cur)
            cur = nodes[cur]["parent"]
        if cur in nodes and state.get(cur) == 1:
            # cur is on a cycle made by this path
            cyc_start = path.index(cur)
            cycle = path[cyc_start:]
            victim = min(cycle)
            page_guess = first_page
            diagnostics.append(Diagnostic("parent_cycle", victim, f"parent cycle {' -> '.join(cycle)}; {victim!r} moved to page {page_guess!r}"))
            nodes[victim]["parent"] = page_guess
        for k in path:
            state[k] = 2
    siblings_max: Dict[str, str] = {}
    for nid, f in nodes.items():
        idx = f.get("index")
        if idx is None:
            diagnostics.append(Diagnostic("missing_field", nid, "no index; placed on top of its siblings"))
        else:
            p = f["parent"]
            top = siblings_max.get(p)
            if top is None or idx > top:
                siblings_max[p] = idx
    c_nodes = c._nodes
    children = c._children
    for nid, f in nodes.items():
        if f.get("index") is None:
            k = key_after(siblings_max.get(f["parent"]))
            siblings_max[f["parent"]] = k
            f["index"] = k
        node = _make_node(f)
        c_nodes[nid] = node
        kids = children.get(node.parent)
        if kids is None:
            kids = children[node.parent] = {}
        kids[nid] = None
    for raw in binding_fields:
        try:
            bf = sanitize_binding_fields(raw, strict=False, diagnostics=diagnostics)
        except InvalidInputError as exc:
            diagnostics.append(Diagnostic("invalid_record", str(raw.get("id", "?")), str(exc) + "; dropped"))
            continue
        if bf["id"] in c._bindings:
            diagnostics.append(Diagnostic("duplicate_id", bf["id"], "binding id appears twice; the first is kept"))
            continue
        missing = [e for e in (bf["from_id"], bf["to_id"]) if e not in c._nodes]
        if missing:
            diagnostics.append(Diagnostic("dangling_binding", bf["id"], f"binds missing node(s) {missing}; dropped"))
            continue
        c._bindings[bf["id"]] = Binding(**bf)
    c.diagnostics = diagnostics
    c.current_page = first_page
    return c
