"""Page positions of nodes: the transforms, boxes and moves every editing op shares.

The executor (:mod:`.ops`), placement (:mod:`.place`), arrow ordering
(:mod:`.arrow_order`) and arrangement (:mod:`.arrange`) all move nodes by the
upper-left corner of their page bounds; this module is the floor they stand on,
so none of them imports another for it.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Sequence, Tuple

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
    return got if got is not None else canvas.page_bounds(item)


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


def _page_move(canvas: Canvas, node_id: str, x: float, y: float, parent: Optional[str]) -> Dict[str, Any]:
    """The fields :func:`set_page_position` writes, from the canvas's current geometry."""
    node = canvas.node(node_id)
    ox, oy, rot = _transform(canvas, node_id)
    b = _bounds(canvas, node_id)
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
