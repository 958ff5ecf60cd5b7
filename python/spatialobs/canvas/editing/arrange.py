"""Arrangement: align, distribute, group, ungroup, lock, unlock and duplicate, as the editors do them.

Each function writes through the canvas's one write path inside one
:meth:`~spatialobs.canvas.Canvas.batch`, so it applies whole or not at all, and
bound arrows follow their moved targets as after any other write. The rules are
tldraw's own (``Editor.alignShapes``, ``distributeShapes``, ``groupShapes``,
``ungroupShapes``, ``duplicateShapes``, ``toggleLock``, tldraw 5.4):

* **align / distribute** move *clusters*: the named nodes joined by arrow
  bindings among them move together (tldraw's ``getShapeClusters``, visited in
  the order the ids are given); ``align`` needs two clusters, ``distribute``
  three, and distribute keeps the first and last cluster where they are and
  spaces the others evenly between them.
* **group** puts two or more nodes under a new ``group`` node in their nearest
  common ancestor (else the page), at the index of the highest of them that
  sits there; the members keep their page position and paint order. A group in
  an Excalidraw document is the same node: the writer turns it into a new
  outermost id in each member's ``groupIds``, as Excalidraw's own Group action
  does.
* **ungroup** gives a group's children to the group's parent where the group
  was in the paint order, keeping their page positions, and removes the group.
* **duplicate** copies nodes with their descendants just above each original,
  offset by tldraw's default (the copied box's width plus 10 to the right) or by
  Excalidraw's (10, 10) in an Excalidraw document; bindings between copied nodes
  are copied, an arrow copied without its target keeps its drawn end, unbound.
* **lock / unlock** set the ``locked`` flag (in an Excalidraw document a group
  has no element of its own: its members are locked, as Excalidraw locks a
  selected group).

Locked nodes: tldraw silently skips an update of a locked shape, or of a shape
inside a locked one. Here such an edit is refused: the function raises
:class:`LockedError` naming the node and the locked node, and nothing changes.
Only ``unlock`` (and ``lock``) may touch a locked node.

Examples
--------
>>> from spatialobs.canvas import Canvas, Node
>>> c = Canvas()
>>> for i, (x, y) in enumerate([(0, 0), (150, 40), (400, 10)]):
...     _ = c.add(Node(f"shape:{i}", "geo", "page:page", f"a{i + 1}", x, y, 100, 50))
>>> align(c, ["shape:0", "shape:1", "shape:2"], "top")
>>> [c.page_bounds(f"shape:{i}")[1] for i in range(3)]
[0.0, 0.0, 0.0]
>>> g = group(c, ["shape:0", "shape:1"], group_id="shape:g")
>>> c.node("shape:0").parent, c.page_bounds("shape:g")
('shape:g', (0.0, 0.0, 250.0, 50.0))
"""

from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from spatialobs._errors import InvalidInputError, OutOfRangeError
from spatialobs.canvas.document.fractional import key_between, key_sequence
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.document.records import Binding
from spatialobs.canvas.editing.position import page_box, set_page_position, set_page_positions, to_local

__all__ = ["align", "distribute", "group", "ungroup", "set_locked", "duplicate", "locked_by", "check_editable",
           "LockedError", "ALIGN_OPERATIONS", "DISTRIBUTE_OPERATIONS", "DUPLICATE_MARGIN",
           "EXCALIDRAW_DUPLICATE_OFFSET", "align_operation", "distribute_operation"]

#: tldraw's align operations.
ALIGN_OPERATIONS = ("left", "center-horizontal", "right", "top", "center-vertical", "bottom", "center")
#: tldraw's distribute operations.
DISTRIBUTE_OPERATIONS = ("horizontal", "vertical")
#: Gap tldraw's Duplicate leaves beside the originals (``editor.options.adjacentShapeMargin``).
DUPLICATE_MARGIN = 10.0
#: Offset of Excalidraw's Duplicate (``DEFAULT_GRID_SIZE / 2`` on each axis).
EXCALIDRAW_DUPLICATE_OFFSET = (10.0, 10.0)

_ALIGN_WORDS = {
    "left": "left", "right": "right", "top": "top", "bottom": "bottom", "center": "center", "centre": "center",
    "center-horizontal": "center-horizontal", "horizontal-center": "center-horizontal", "center-x": "center-horizontal",
    "centerx": "center-horizontal", "h-center": "center-horizontal", "hcenter": "center-horizontal",
    "middle-horizontal": "center-horizontal", "center-vertical": "center-vertical",
    "vertical-center": "center-vertical", "center-y": "center-vertical", "centery": "center-vertical",
    "v-center": "center-vertical", "vcenter": "center-vertical", "middle": "center-vertical",
    "middle-vertical": "center-vertical",
}
_DISTRIBUTE_WORDS = {"horizontal": "horizontal", "horizontally": "horizontal", "x": "horizontal", "h": "horizontal",
                     "row": "horizontal", "vertical": "vertical", "vertically": "vertical", "y": "vertical",
                     "v": "vertical", "column": "vertical"}
# Fields of an Excalidraw element that a copy gets anew (Excalidraw's duplicateElement does the same).
_FRESH_FIELDS = ("seed", "version", "versionNonce", "updated")

Box = Tuple[float, float, float, float]


class LockedError(InvalidInputError):
    """An edit of a locked node, or of a node inside a locked one; the message names both."""


def _word(raw: object, table: Mapping[str, str], field: str, known: Sequence[str]) -> str:
    if isinstance(raw, str):
        key = raw.strip().lower().replace("_", "-").replace(" ", "-")
        if key in table:
            return table[key]
    raise InvalidInputError(f"field {field!r} must be one of {', '.join(known)}, got {raw!r}")


def align_operation(raw: object) -> str:
    """tldraw's name of an align operation written in any usual spelling.

    Examples
    --------
    >>> align_operation("center_x"), align_operation("Middle")
    ('center-horizontal', 'center-vertical')
    """
    return _word(raw, _ALIGN_WORDS, "align", ALIGN_OPERATIONS)


def distribute_operation(raw: object) -> str:
    """``"horizontal"`` or ``"vertical"`` from any usual spelling (``x``, ``row``, ``vertically`` ...)."""
    return _word(raw, _DISTRIBUTE_WORDS, "axis", DISTRIBUTE_OPERATIONS)


def locked_by(canvas: Canvas, node_id: str) -> Optional[str]:
    """The node that locks ``node_id``: itself when locked, else its nearest locked ancestor, else None."""
    nodes = canvas.nodes
    if nodes[node_id].locked:
        return node_id
    for a in canvas.ancestors(node_id):
        if nodes[a].locked:
            return a
    return None


def check_editable(canvas: Canvas, ids: Sequence[str]) -> None:
    """Raise :class:`LockedError` when one of ``ids`` is locked or inside a locked node."""
    for nid in ids:
        by = locked_by(canvas, nid)
        if by == nid:
            raise LockedError(f"node {nid!r} is locked")
        if by is not None:
            raise LockedError(f"node {nid!r} is inside locked node {by!r}")


def _existing(canvas: Canvas, ids: Sequence[str], what: str) -> List[str]:
    if isinstance(ids, str):
        raise InvalidInputError(f"{what}: ids must be a list of node ids, not one string")
    out: List[str] = []
    for nid in ids:
        if not isinstance(nid, str) or nid not in canvas.nodes:
            raise OutOfRangeError(f"{what}: no node {nid!r}")
        if nid not in out:
            out.append(nid)
    return out


def _one_page(canvas: Canvas, ids: Sequence[str], what: str) -> str:
    pages = {canvas.page_of(n): n for n in ids}
    if len(pages) > 1:
        (p1, n1), (p2, n2) = list(pages.items())[:2]
        raise InvalidInputError(f"{what}: {n1!r} is on {p1!r} and {n2!r} on {p2!r}; they must share a page")
    return next(iter(pages))


def _not_nested(canvas: Canvas, ids: Sequence[str], what: str) -> None:
    idset = set(ids)
    for nid in ids:
        for a in canvas.ancestors(nid):
            if a in idset:
                raise InvalidInputError(f"{what}: {nid!r} is inside {a!r}, which is named too; name one of them")


def _clusters(canvas: Canvas, ids: Sequence[str]) -> List[Tuple[List[str], Box]]:
    """tldraw's ``getShapeClusters``: the nodes joined by arrow bindings among ``ids`` with their common box.

    Visited in the order of ``ids``; from each node the bindings *to* it are followed
    first (a cluster is not started from an arrow's own bindings), then every binding
    of the nodes reached, as tldraw's ``collectShapesViaArrowBindings`` does.
    """
    idset = set(ids)
    to: Dict[str, List[Binding]] = {}
    involving: Dict[str, List[Binding]] = {}
    for b in canvas.bindings.values():
        if b.from_id in idset or b.to_id in idset:
            to.setdefault(b.to_id, []).append(b)
            involving.setdefault(b.to_id, []).append(b)
            if b.from_id != b.to_id:
                involving.setdefault(b.from_id, []).append(b)
    visited: Set[str] = set()
    out: List[Tuple[List[str], Box]] = []
    for nid in ids:
        if nid in visited:
            continue
        visited.add(nid)
        members = [nid]
        stack = list(reversed(to.get(nid, [])))
        while stack:
            b = stack.pop()
            for other in (b.from_id, b.to_id):
                if other in idset and other not in visited:
                    visited.add(other)
                    members.append(other)
                    stack.extend(reversed(involving.get(other, [])))
        boxes = [page_box(canvas, m) for m in members]
        out.append((members, (min(b[0] for b in boxes), min(b[1] for b in boxes),
                              max(b[2] for b in boxes), max(b[3] for b in boxes))))
    return out


def _translate(canvas: Canvas, moves: Sequence[Tuple[str, float, float]]) -> None:
    """Move each node by (dx, dy) in page units, its page rotation kept; one batch."""
    plan = []
    for nid, dx, dy in moves:
        if dx == 0.0 and dy == 0.0:
            continue
        b = page_box(canvas, nid)
        plan.append((nid, b[0] + dx, b[1] + dy, None))
    if plan:
        set_page_positions(canvas, plan)


def _prepare(canvas: Canvas, ids: Sequence[str], what: str) -> List[str]:
    got = _existing(canvas, ids, what)
    _one_page(canvas, got, what)
    _not_nested(canvas, got, what)
    check_editable(canvas, got)
    return got


def align(canvas: Canvas, ids: Sequence[str], operation: str) -> None:
    """Align nodes (tldraw's ``alignShapes``): ``left``, ``center-horizontal``, ``right``, ``top``,
    ``center-vertical``, ``bottom`` or ``center`` (both centers), of their common page box.

    Raises
    ------
    InvalidInputError
        Fewer than two nodes, nodes on different pages or one inside another,
        an unknown operation; :class:`LockedError` for a locked node.
    OutOfRangeError
        An id that is not a node.
    """
    op = align_operation(operation)
    got = _prepare(canvas, ids, "align")
    if len(got) < 2:
        raise InvalidInputError(f"align needs at least two nodes, got {len(got)}")
    with canvas.batch():
        for step in (("center-horizontal", "center-vertical") if op == "center" else (op,)):
            clusters = _clusters(canvas, got)
            if len(clusters) < 2:
                return
            L = min(b[0] for _, b in clusters)
            T = min(b[1] for _, b in clusters)
            R = max(b[2] for _, b in clusters)
            B = max(b[3] for _, b in clusters)
            moves: List[Tuple[str, float, float]] = []
            for members, (x0, y0, x1, y1) in clusters:
                dx = dy = 0.0
                if step == "left":
                    dx = L - x0
                elif step == "center-horizontal":
                    dx = (L + R) / 2 - x0 - (x1 - x0) / 2
                elif step == "right":
                    dx = R - x1
                elif step == "top":
                    dy = T - y0
                elif step == "center-vertical":
                    dy = (T + B) / 2 - y0 - (y1 - y0) / 2
                else:
                    dy = B - y1
                moves.extend((m, dx, dy) for m in members)
            _translate(canvas, moves)


def distribute(canvas: Canvas, ids: Sequence[str], operation: str) -> None:
    """Space nodes evenly (tldraw's ``distributeShapes``), ``horizontal`` or ``vertical``.

    The cluster that starts first and the one that ends last stay; the others are
    put between them, in order of their start, with equal gaps (negative when they
    do not fit). When one cluster both starts first and ends last, it is left out
    and the rest are distributed.

    Raises
    ------
    InvalidInputError
        Fewer than three nodes, and as :func:`align`.
    """
    op = distribute_operation(operation)
    got = _prepare(canvas, ids, "distribute")
    if len(got) < 3:
        raise InvalidInputError(f"distribute needs at least three nodes, got {len(got)}")
    with canvas.batch():
        _distribute(canvas, got, op)


def _distribute(canvas: Canvas, ids: List[str], op: str) -> None:
    clusters = _clusters(canvas, ids)
    if len(clusters) < 3:
        return
    lo, hi = (0, 2) if op == "horizontal" else (1, 3)
    first = sorted(clusters, key=lambda c: c[1][lo])[0]
    last = sorted(clusters, key=lambda c: -c[1][hi])[0]
    if first is last:
        drop = set(first[0])
        _distribute(canvas, [i for i in ids if i not in drop], op)
        return
    middle = sorted((c for c in clusters if c is not first and c is not last), key=lambda c: (c[1][lo], c[0][0]))
    max_first = first[1][hi]
    span = last[1][lo] - max_first
    total = sum(c[1][hi] - c[1][lo] for c in middle)
    gap = (span - total) / (len(middle) + 1)
    v = max_first + gap
    moves: List[Tuple[str, float, float]] = []
    for members, box in middle:
        dim = box[hi] - box[lo]
        d = v - box[lo]
        if v + dim > last[1][hi] - 1:  # as tldraw: never past the last cluster's end
            d = last[1][hi] - box[hi] - 1
        moves.extend((m, d, 0.0) if op == "horizontal" else (m, 0.0, d) for m in members)
        v += dim + gap
    _translate(canvas, moves)


def _common_ancestor(canvas: Canvas, ids: Sequence[str]) -> Optional[str]:
    """tldraw's ``findCommonAncestor``: the nearest shape above the first that holds all the others."""
    ups = [set(canvas.ancestors(n)) for n in ids[1:]]
    for a in canvas.ancestors(ids[0]):
        if all(a in u for u in ups):
            return a
    return None


def group(canvas: Canvas, ids: Sequence[str], *, group_id: str) -> str:
    """Group nodes under a new ``group`` node with id ``group_id`` (tldraw's ``groupShapes``).

    The group goes into the nodes' nearest common ancestor (else their page), at the
    index of the highest of them that sits there (on top when none does); the
    members keep their page position and their paint order. In an Excalidraw
    document the group node sits at its parent's origin, as imported groups do.

    Returns
    -------
    str
        ``group_id``.

    Raises
    ------
    InvalidInputError
        Fewer than two nodes, nodes on different pages, one inside another, a
        taken id; :class:`LockedError` for a locked node.
    """
    got = _prepare(canvas, ids, "group")
    if len(got) < 2:
        raise InvalidInputError(f"group needs at least two nodes, got {len(got)}")
    if not isinstance(group_id, str) or not group_id or group_id in canvas:
        raise InvalidInputError(f"group: id {group_id!r} is empty or taken")
    page = canvas.page_of(got[0])
    parent = _common_ancestor(canvas, got) or page
    if parent in canvas.nodes:
        check_editable(canvas, [parent])
    order = {nid: k for k, nid in enumerate(canvas.paint_order(page))}
    members = sorted(got, key=lambda n: order[n])
    nodes = canvas.nodes
    at_root = [n for n in members if nodes[n].parent == parent]
    index = nodes[at_root[-1]].index if at_root else None
    boxes = {n: page_box(canvas, n) for n in members}
    corner = (min(b[0] for b in boxes.values()), min(b[1] for b in boxes.values()))
    excalidraw = canvas.source_format == "excalidraw"
    if excalidraw:
        gx, gy = 0.0, 0.0
        props: Dict[str, object] = {"synthesized": True}
    else:
        gx, gy = to_local(canvas, parent, corner[0], corner[1])
        props = {}
    with canvas.batch():
        fields = {"id": group_id, "type": "group", "parent": parent, "x": gx, "y": gy, "w": 0.0, "h": 0.0,
                  "props": props}
        if index is not None:
            fields["index"] = index
        canvas.add(fields)
        keys = key_sequence(len(members))
        for nid, key in zip(members, keys):
            b = boxes[nid]
            set_page_position(canvas, nid, b[0], b[1], parent=group_id)
            canvas.update(nid, index=key)
    return group_id


def ungroup(canvas: Canvas, ids: Sequence[str]) -> List[str]:
    """Dissolve groups (tldraw's ``ungroupShapes``): children go to the group's parent where
    the group was in the paint order, keeping their page positions; the group is removed.

    Returns
    -------
    list of str
        The freed children, in paint order.

    Raises
    ------
    InvalidInputError
        A node that is not a group; :class:`LockedError` for a locked group.
    """
    got = _existing(canvas, ids, "ungroup")
    if not got:
        raise InvalidInputError("ungroup needs at least one group")
    for nid in got:
        if canvas.nodes[nid].type != "group":
            raise InvalidInputError(f"ungroup: {nid!r} is a {canvas.nodes[nid].type!r} node, not a group")
    check_editable(canvas, got)
    freed: List[str] = []
    with canvas.batch():
        for gid in got:
            if gid not in canvas.nodes:
                continue
            g = canvas.nodes[gid]
            sibs = canvas.children(g.parent)
            pos = sibs.index(gid)
            above = canvas.nodes[sibs[pos + 1]].index if pos + 1 < len(sibs) else None
            kids = canvas.children(gid)
            boxes = {k: page_box(canvas, k) for k in kids}
            prev = g.index
            for k in kids:
                prev = key_between(prev, above)
                b = boxes[k]
                set_page_position(canvas, k, b[0], b[1], parent=g.parent)
                canvas.update(k, index=prev)
            canvas.remove(gid)
            freed.extend(kids)
    return freed


def set_locked(canvas: Canvas, ids: Sequence[str], locked: bool) -> List[str]:
    """Lock or unlock nodes; returns the ids whose flag was written.

    In an Excalidraw document a group node writes no element, so locking or
    unlocking it sets the flag of every element inside it (Excalidraw locks the
    elements of a selected group).
    """
    got = _existing(canvas, ids, "lock" if locked else "unlock")
    if not got:
        raise InvalidInputError(f"{'lock' if locked else 'unlock'} needs at least one node")
    targets: List[str] = []
    for nid in got:
        if canvas.source_format == "excalidraw" and canvas.nodes[nid].type == "group":
            targets.extend(d for d in canvas.descendants(nid) if canvas.nodes[d].type != "group")
        else:
            targets.append(nid)
    written: List[str] = []
    with canvas.batch():
        for nid in dict.fromkeys(targets):
            if canvas.nodes[nid].locked != locked:
                canvas.update(nid, locked=locked)
                written.append(nid)
    return written


def duplicate(canvas: Canvas, ids: Sequence[str], *, offset: Optional[Tuple[float, float]] = None,
              new_id: Optional[Callable[[str, Set[str]], str]] = None) -> Dict[str, str]:
    """Copy nodes with their descendants (tldraw's ``duplicateShapes``); returns original id -> copy id.

    Each copy goes just above its original in the paint order; the named nodes
    move by ``offset`` in page units (default: tldraw's, the copied box's width plus
    10 to the right; in an Excalidraw document Excalidraw's (10, 10)) and their
    descendants follow. Bindings between copied nodes are copied; a copied arrow
    whose target is not copied keeps its end where it is drawn, unbound.
    ``new_id(original_id, taken)`` makes each copy's id (default ``<id>-copy``);
    it must return an id that is neither in the canvas nor in ``taken``.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("shape:a", "geo", "page:page", "a1", 0, 0, 100, 50))
    >>> duplicate(c, ["shape:a"])
    {'shape:a': 'shape:a-copy'}
    >>> c.page_bounds("shape:a-copy")
    (110.0, 0.0, 210.0, 50.0)
    """
    got = _prepare(canvas, ids, "duplicate")
    if not got:
        raise InvalidInputError("duplicate needs at least one node")
    nodes = canvas.nodes
    if offset is None:
        if canvas.source_format == "excalidraw":
            offset = EXCALIDRAW_DUPLICATE_OFFSET
        else:
            boxes = [page_box(canvas, n) for n in got]
            offset = (max(b[2] for b in boxes) - min(b[0] for b in boxes) + DUPLICATE_MARGIN, 0.0)
    every: List[str] = []
    for nid in got:
        for k in [nid] + canvas.descendants(nid):
            if k not in every:
                every.append(k)
    copy_of: Dict[str, str] = {}
    taken: Set[str] = set()
    make = new_id if new_id is not None else (lambda orig, tk: _fresh_id(canvas, orig, tk))
    for k in every:
        cid = make(k, taken)
        if not isinstance(cid, str) or not cid or cid in canvas or cid in taken:
            raise InvalidInputError(f"duplicate: the id made for the copy of {k!r} ({cid!r}) is empty or taken")
        taken.add(cid)
        copy_of[k] = cid
    everyset = set(every)
    # bindings: copied when both ends are copied; otherwise the copied arrow's end is freed where drawn
    from spatialobs.canvas.document.arrows import unbind_patch

    new_bindings: List[Binding] = []
    freed: Dict[str, List[str]] = {}
    for b in canvas.bindings.values():
        if b.from_id in everyset and b.to_id in everyset:
            new_bindings.append(b)
        elif b.from_id in everyset and nodes[b.from_id].type == "arrow":
            freed.setdefault(b.from_id, []).append(b.terminal)
    patches = {a: unbind_patch(canvas, a, terms) for a, terms in freed.items()}
    # the index of each copy: between its original and the sibling above it (computed before any write)
    index: Dict[str, str] = {}
    for k in every:
        n = nodes[k]
        if n.parent in copy_of:
            index[k] = n.index
            continue
        sibs = canvas.children(n.parent)
        pos = sibs.index(k)
        above = nodes[sibs[pos + 1]].index if pos + 1 < len(sibs) else None
        try:
            index[k] = key_between(n.index, above)
        except ValueError:
            index[k] = n.index + "V"
    roots = [k for k in every if nodes[k].parent not in copy_of]
    root_moves = {k: page_box(canvas, k) for k in roots if k in got}
    excalidraw = canvas.source_format == "excalidraw"
    with canvas.batch():
        for k in every:
            n = nodes[k]
            fields = n.to_dict()
            fields["id"] = copy_of[k]
            fields["parent"] = copy_of.get(n.parent, n.parent)
            fields["index"] = index[k]
            props = dict(n.props)
            if k in patches and patches[k]:
                props.update(patches[k])
            if excalidraw:
                for f in _FRESH_FIELDS:
                    props.pop(f, None)
            fields["props"] = props
            canvas.add(fields)
            if k in root_moves:
                rb = root_moves[k]
                set_page_position(canvas, copy_of[k], rb[0] + offset[0], rb[1] + offset[1])
        for b in new_bindings:
            bid = _fresh_id(canvas, b.id, taken)
            taken.add(bid)
            canvas.add(Binding(bid, b.type, copy_of[b.from_id], copy_of[b.to_id], b.terminal, b.anchor, b.precise,
                               dict(b.props)))
    return {k: copy_of[k] for k in every}


def _fresh_id(canvas: Canvas, original: str, taken: Set[str]) -> str:
    """``<id>-copy``, ``<id>-copy-2`` ...: the first id free in the canvas and in ``taken``."""
    base = original + "-copy"
    cand, k = base, 2
    while cand in canvas or cand in taken:
        cand, k = f"{base}-{k}", k + 1
    return cand
