"""Page positions of nodes: the transforms, boxes and moves every editing op shares.

The executor (:mod:`.ops`), placement (:mod:`.place`), arrow ordering
(:mod:`.arrow_order`) and arrangement (:mod:`.arrange`) all move nodes by the
upper-left corner of their page bounds; this module is the floor they stand on,
so none of them imports another for it.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from spatialobs.canvas.document.model import Canvas

__all__ = ["set_page_position", "set_page_positions", "page_transform", "page_box", "to_local"]


def _transform(canvas: Canvas, item: str) -> Tuple[float, float, float]:
    """Page position of the local origin and page rotation of a node (0, 0, 0 for a page)."""
    if item not in canvas.nodes:
        return 0.0, 0.0, 0.0
    got = canvas._peek_xf(item)  # between writes, without deriving the whole canvas
    if got is not None:
        return got
    d = canvas._geometry()  # read here, not kept (see Canvas.geometry)
    r = d.row[item]
    return float(d.px[r]), float(d.py[r]), float(d.rotation[r])


def _bounds(canvas: Canvas, item: str) -> Tuple[float, float, float, float]:
    """:meth:`Canvas.page_bounds`, read without deriving the whole canvas where that gives the same."""
    got = canvas._peek_bounds(item)
    if got is None:
        got = _peek_arrow_bounds(canvas, item)
    return got if got is not None else canvas.page_bounds(item)


def _peek_arrow_bounds(canvas: Canvas, arrow_id: str) -> Optional[Tuple[float, float, float, float]]:
    """:meth:`Canvas.page_bounds` of a bound, unturned arrow between writes, without deriving
    the whole canvas (None: derive).

    The derivation resolves the arrow against its targets with the page transforms it
    derives and bounds the resolved local box by the arrow's transform. Here the same
    functions (:func:`~spatialobs.canvas.document.arrows._resolve_one`, the compiled batch,
    ``derive._aabb``) run on a derivation of three rows, the arrow and its targets, whose
    transforms are the canvas's peeks (the derivation's own floats; see ``Canvas._peek_xf``):
    what a new arrow's move into its targets' frame needs (:mod:`.arrow_order`), one arrow,
    not the page.
    """
    from spatialobs.canvas.document import arrows as _arrows
    from spatialobs.canvas.document.derive import MAX_DERIVED, _aabb

    if canvas._derived is not None:
        return None  # derived: page_bounds reads it
    nodes = canvas.nodes
    arrow = nodes.get(arrow_id)
    if arrow is None or arrow.type != "arrow" or _arrows._keeps_points(arrow):
        return None
    own = canvas._bindings_from(arrow_id)
    terms: Dict[str, Any] = {}
    for b in own:
        if b.terminal in terms or b.to_id == arrow_id or b.to_id not in nodes:
            return None  # two at one end, bound to itself, or to no node: the derivation decides
        terms[b.terminal] = b
    if not terms or not terms.keys() <= {"start", "end"}:
        return None
    rows = [arrow_id] + [t for t in dict.fromkeys(b.to_id for b in terms.values())]
    xfs = [canvas._peek_xf(i) for i in rows]
    if any(xf is None for xf in xfs) or xfs[0][2] != 0.0:  # type: ignore[index]
        return None  # a transform the derivation must compose, or a turned arrow (bounded by its vertices)
    d = _MiniDerived(rows, xfs)  # type: ignore[arg-type]
    recs = [nodes[i] for i in rows]
    batch = _arrows._StraightBatch.start(d, recs)
    kept: Dict[str, Any] = {}
    # the canvas's resolved arrows and their twins, as the derivation reads them: a reply drawing
    # many arrows alike resolves one (a long labelled arc costs a good fraction of a second)
    cache = canvas._arrow_cache
    twins = cache.twins if isinstance(cache, _arrows.ArrowCache) else None
    _arrows._resolve_one(d, recs, 0, terms, cache, kept, twins, batch)
    if batch is not None:
        batch.run(d, recs, kept, twins)
    box = _aabb(d.local[:1], d.px[:1], d.py[:1], d.rotation[:1])[0]
    if not (np.abs(box) <= MAX_DERIVED).all():
        return None  # bounded by its origin, or by the full pass: the derivation decides
    return float(box[0]), float(box[1]), float(box[2]), float(box[3])


class _MiniDerived:
    """The columns of a derivation that resolving one arrow reads: rows by id, page
    transforms, local boxes (the arrow's row first)."""

    __slots__ = ("row", "px", "py", "rotation", "local")

    def __init__(self, ids: Sequence[str], xfs: Sequence[Tuple[float, float, float]]) -> None:
        self.row = {i: k for k, i in enumerate(ids)}
        self.px = np.array([xf[0] for xf in xfs], dtype=np.float64)
        self.py = np.array([xf[1] for xf in xfs], dtype=np.float64)
        self.rotation = np.array([xf[2] for xf in xfs], dtype=np.float64)
        self.local = np.zeros((len(ids), 4), dtype=np.float64)


def _to_local(canvas: Canvas, parent: str, x: float, y: float) -> Tuple[float, float]:
    """A page point in the coordinates of ``parent`` (a node or a page)."""
    px, py, rot = _transform(canvas, parent)
    dx, dy = x - px, y - py
    if rot == 0.0:
        return dx, dy
    c, s = math.cos(rot), math.sin(rot)
    return c * dx + s * dy, -s * dx + c * dy


def set_page_position(canvas: Canvas, node_id: str, x: float, y: float, *, parent: Optional[str] = None) -> None:
    """Move a node so that the upper-left corner of its page bounds is at page ``(x, y)``.

    With ``parent`` the node is also moved under that node or page, keeping its
    page rotation. The write is one :meth:`Canvas.update`, as a person's drag.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("f", "frame", "page:page", "a1", 100, 100, 300, 300))
    >>> _ = c.add(Node("a", "geo", "page:page", "a2", 0, 0, 10, 10))
    >>> set_page_position(c, "a", 150, 120, parent="f")
    >>> c.node("a").x, c.node("a").y, c.page_bounds("a")[:2]
    (50.0, 20.0, (150.0, 120.0))
    """
    changes = _page_move(canvas, node_id, x, y, parent)
    if changes:
        canvas.update(node_id, **changes)


def _page_move(canvas: Canvas, node_id: str, x: float, y: float, parent: Optional[str],
               box: Optional[Tuple[float, float, float, float]] = None) -> Dict[str, Any]:
    """The fields :func:`set_page_position` writes, from the canvas's current geometry (``box``: the
    node's page bounds now, when the caller has read them)."""
    node = canvas.node(node_id)
    ox, oy, rot = _transform(canvas, node_id)
    b = _bounds(canvas, node_id) if box is None else box
    offx, offy = ox - b[0], oy - b[1]  # local origin relative to the box corner; kept by a translation
    changes: Dict[str, Any] = {}
    target_parent = node.parent if parent is None else parent
    lx, ly = _to_local(canvas, target_parent, x + offx, y + offy)
    if target_parent != node.parent:
        changes["parent"] = target_parent
        new_rot = rot - _transform(canvas, target_parent)[2]
        if new_rot != node.rotation:
            changes["rotation"] = new_rot
    if lx != node.x:
        changes["x"] = lx
    if ly != node.y:
        changes["y"] = ly
    return changes


def set_page_positions(canvas: Canvas, moves: Sequence[Tuple[str, float, float, Optional[str]]]) -> None:
    """:func:`set_page_position` for several ``(node_id, x, y, parent)`` in one batch.

    Every move is computed from the geometry before the first write, which is what
    moving them one by one gives when none of the nodes is inside another or inside a
    destination parent among them (:func:`~spatialobs.canvas.editing.place.place`
    moves such top-level objects); the geometry is derived once, not once per node.
    """
    changes = [(nid, _page_move(canvas, nid, x, y, parent)) for nid, x, y, parent in moves]
    with canvas.batch():
        for nid, ch in changes:
            if ch:
                canvas.update(nid, **ch)


#: Public names of the helpers the other editing modules use.
page_transform = _transform
page_box = _bounds
to_local = _to_local
