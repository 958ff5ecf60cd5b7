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

The executor runs :func:`reorder_changed` after each op; nothing here runs on the
load path.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from spatialobs.canvas.document.arrowindex import arrow_index
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.document.records import Node

__all__ = ["arrow_state", "reparent_arrow", "reorder_changed"]

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
    ends: Dict[str, Node] = {}
    for b in canvas.bindings.values():
        if b.from_id == arrow_id and b.to_id in canvas.nodes:
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
    from spatialobs.canvas.editing.ops import set_page_position

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
        b = canvas.page_bounds(arrow_id)
        set_page_position(canvas, arrow_id, b[0], b[1], parent=parent)
        arrow = nodes[arrow_id]
        moved = True
    ss, es = _nearest_sibling(canvas, arrow, start), _nearest_sibling(canvas, arrow, end)
    sibs = [s for s in (ss, es) if s is not None]
    if not sibs:
        return moved
    highest = max(sibs, key=lambda s: s.index)
    higher = sorted((nodes[k].index, nodes[k].type == "arrow") for k in canvas.children(highest.parent)
                    if nodes[k].index > highest.index)
    final = arrow_index(arrow.index, highest.index, higher)
    if final is not None:
        canvas.update(arrow_id, index=final)
        moved = True
    return moved


def arrow_state(canvas: Canvas) -> Dict[str, Tuple[Any, ...]]:
    """What the place of each bound arrow depends on (records by identity: they are
    replaced on every change), to find the arrows an edit touched.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> arrow_state(Canvas())
    {}
    """
    out: Dict[str, List[Any]] = {}
    nodes = canvas.nodes
    for b in canvas.bindings.values():
        a = nodes.get(b.from_id)
        t = nodes.get(b.to_id)
        if a is None or a.type != "arrow":
            continue
        out.setdefault(b.from_id, [a]).extend((b, t, *(nodes[x] for x in canvas.ancestors(b.to_id))))
    return {k: tuple(v) for k, v in out.items()}


def reorder_changed(canvas: Canvas, before: Dict[str, Tuple[Any, ...]]) -> List[str]:
    """Apply :func:`reparent_arrow` to every bound arrow whose state differs from
    ``before`` (from :func:`arrow_state`); the ids of the arrows moved.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> from spatialobs.canvas.document.records import Binding
    >>> c = Canvas()
    >>> _ = c.add(Node("shape:arr", "arrow", "page:page", "a1", props={"start": {"x": 0, "y": 0},
    ...                                                              "end": {"x": 10, "y": 0}}))
    >>> _ = c.add(Node("shape:box", "geo", "page:page", "a2", 100, 0, 50, 50))
    >>> before = arrow_state(c)
    >>> _ = c.add(Binding("b1", "arrow", "shape:arr", "shape:box", "end"))
    >>> reorder_changed(c, before), c.paint_order()
    (['shape:arr'], ['shape:box', 'shape:arr'])
    """
    moved: List[str] = []
    after = arrow_state(canvas)
    for aid, state in after.items():
        old = before.get(aid)
        if old is not None and len(old) == len(state) and all(x is y for x, y in zip(old, state)):
            continue
        if reparent_arrow(canvas, aid):
            moved.append(aid)
    return moved
