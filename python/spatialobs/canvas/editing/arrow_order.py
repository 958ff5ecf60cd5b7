"""Where a bound arrow sits in the tree and in paint order, as tldraw keeps it.

Whenever an arrow's binding is created or changed, or the arrow or a shape it is
bound to changes parent or index, tldraw moves the arrow (``reparentArrow`` in its
arrow binding util), and it does so again for every binding when a file is
opened. A document written after an agent's edits must already be where that
rule puts it, or the editor reorders it and paint order no longer matches:

* parent: bound at both ends, the closest common ancestor of the two targets (a
  frame when one target is, or holds, the other), else the page; bound at one
  end, the arrow's parent when the target shares it, else the page. A reparented
  arrow keeps its page position;
* index: just above the higher of the targets (or of their ancestors that are the
  arrow's siblings), unless it already sits above it and below the next sibling
  that is not an arrow.

The executor runs :func:`reorder_touched` on each op's writes; nothing here runs on the
load path.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple

from spatialobs.canvas.document.arrowindex import arrow_index_at
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.document.records import Node
from spatialobs.canvas.editing.position import _bounds, _page_move

__all__ = ["reparent_arrow", "reorder_touched"]

#: Node types tldraw treats as frame-like when choosing an arrow's parent.
FRAME_LIKE = frozenset({"frame"})


def _ancestors(canvas: Canvas, node: Node) -> List[Node]:
    return [canvas.nodes[a] for a in canvas.ancestors(node.id)]


def _common_ancestor(canvas: Canvas, a: Node, b: Node) -> Optional[str]:
    """tldraw's ``findCommonAncestor([a, b])``: the nearest shape above ``a`` that ``b`` descends from."""
    b_up = set(canvas.ancestors(b.id))
    for anc in _ancestors(canvas, a):
        if anc.id in b_up:
            return anc.id
    return None


def _frame_like_holder(canvas: Canvas, a: Node, b: Node) -> Optional[str]:
    if a.id == b.id:
        held = a
    elif b.id in canvas.ancestors(a.id):
        held = b
    elif a.id in canvas.ancestors(b.id):
        held = a
    else:
        return None
    return held.id if held.type in FRAME_LIKE else None


def _nearest_sibling(canvas: Canvas, arrow: Node, target: Optional[Node]) -> Optional[Node]:
    if target is None:
        return None
    if target.parent == arrow.parent:
        return target
    for anc in _ancestors(canvas, target):
        if anc.parent == arrow.parent:
            return anc
    return None


def _targets(canvas: Canvas, arrow_id: str) -> Tuple[Optional[Node], Optional[Node]]:
    own = canvas._bindings_from(arrow_id)
    if len({b.terminal for b in own}) < len(own):
        # two bindings at one end: the later one in canvas order wins, as the scan finds it
        own = [b for b in canvas.bindings.values() if b.from_id == arrow_id]
    ends: Dict[str, Node] = {}
    for b in own:
        if b.to_id in canvas.nodes:
            ends[b.terminal] = canvas.nodes[b.to_id]
    return ends.get("start"), ends.get("end")


def reparent_arrow(canvas: Canvas, arrow_id: str) -> bool:
    """Move a bound arrow to the parent and index tldraw gives it; True when it moved.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> from spatialobs.canvas.document.records import Binding
    >>> c = Canvas()
    >>> _ = c.add(Node("shape:arr", "arrow", "page:page", "a1", 0, 0, props={"start": {"x": 0, "y": 0},
    ...                                                                   "end": {"x": 10, "y": 0}}))
    >>> _ = c.add(Node("shape:a", "geo", "page:page", "a2", 100, 0, 50, 50))
    >>> _ = c.add(Node("shape:b", "geo", "page:page", "a3", 300, 0, 50, 50))
    >>> _ = c.add(Binding("b1", "arrow", "shape:arr", "shape:a", "start"))
    >>> reparent_arrow(c, "shape:arr"), c.paint_order()
    (True, ['shape:a', 'shape:arr', 'shape:b'])
    """

    nodes = canvas.nodes
    arrow = nodes.get(arrow_id)
    if arrow is None or arrow.type != "arrow":
        return False
    start, end = _targets(canvas, arrow_id)
    page = canvas.page_of(arrow_id)
    if start is not None and end is not None:
        parent = _frame_like_holder(canvas, start, end) or _common_ancestor(canvas, start, end) or page
    elif start is not None or end is not None:
        t = start if start is not None else end
        assert t is not None
        parent = arrow.parent if t.parent == arrow.parent else page
    else:
        return False
    moved = False
    if parent != arrow.parent and parent != arrow_id:
        b = _bounds(canvas, arrow_id)
        changes = _page_move(canvas, arrow_id, b[0], b[1], parent, b)  # set_page_position, its bounds read once
        if changes:
            canvas.update(arrow_id, **changes)
        arrow = nodes[arrow_id]
        moved = True
    ss, es = _nearest_sibling(canvas, arrow, start), _nearest_sibling(canvas, arrow, end)
    sibs = [s for s in (ss, es) if s is not None]
    if not sibs:
        return moved
    highest = max(sibs, key=lambda s: s.index)
    # the two siblings the rule looks at, by bisection of the canvas's sorted keys (not a sort per arrow)
    above, solid = canvas._keys_above(highest.parent, highest.index)
    final = arrow_index_at(arrow.index, highest.index, above, solid)
    if final is not None:
        canvas.update(arrow_id, index=final)
        moved = True
    return moved


def reorder_touched(canvas: Canvas, log: Iterable[Tuple[str, str, Any]]) -> List[str]:
    """Apply :func:`reparent_arrow` to the arrows tldraw would look at after the writes in
    ``log`` (the canvas's batch log: ``(kind, id, old record)``); the ids of the arrows moved.

    As tldraw's arrow binding util: an arrow whose binding was made or changed, an
    arrow created or moved to another parent or index, and every arrow bound to a
    shape that changed parent or index, or to a descendant of one.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> from spatialobs.canvas.document.records import Binding
    >>> c = Canvas()
    >>> _ = c.add(Node("shape:arr", "arrow", "page:page", "a1", props={"start": {"x": 0, "y": 0},
    ...                                                              "end": {"x": 10, "y": 0}}))
    >>> _ = c.add(Node("shape:box", "geo", "page:page", "a2", 100, 0, 50, 50))
    >>> with c.batch():
    ...     _ = c.add(Binding("b1", "arrow", "shape:arr", "shape:box", "end"))
    ...     moved = reorder_touched(c, list(c._log or []))
    >>> moved, c.paint_order()
    (['shape:arr'], ['shape:box', 'shape:arr'])
    """
    nodes = canvas.nodes
    arrows: Dict[str, None] = {}
    shifted: List[str] = []
    landed: Dict[str, None] = {}  # parents that got a shape at a new place among their children
    for kind, item_id, old in list(log):
        if kind == "binding":
            b = canvas.bindings.get(item_id) or old
            if b is not None:
                arrows[b.from_id] = None
        elif kind == "node":
            n = nodes.get(item_id)
            if n is None or (old is not None and old.parent == n.parent and old.index == n.index):
                continue
            if n.type == "arrow":
                arrows[item_id] = None
            else:
                if canvas._keys_above(n.parent, n.index)[0] is not None:
                    landed[n.parent] = None  # not on top: it may have come between an arrow and its target
                if old is not None:
                    shifted.append(item_id)
    if shifted and canvas.bindings:
        for x in shifted:
            for t in [x] + (canvas.descendants(x) if canvas.children(x) else []):
                arrows.update(dict.fromkeys(canvas._connectors_to(t)))
    if landed and canvas.bindings:
        # a shape put between a bound arrow and the target it sits above (a duplicate, a new group,
        # ungrouped children): when tldraw opens the file it moves that arrow above the target again
        for parent in landed:
            for k in canvas._children.get(parent, ()):
                if k not in arrows and nodes[k].type == "arrow" and canvas._bindings_from(k):
                    arrows[k] = None
    return [a for a in arrows if a in nodes and reparent_arrow(canvas, a)]
