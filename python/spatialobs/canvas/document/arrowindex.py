"""The index tldraw gives a bound arrow among its siblings (its ``reparentArrow`` rule).

tldraw keeps a bound arrow just above the higher of the shapes it is bound to (or
of their ancestors that are the arrow's siblings): an arrow already above that
shape and below the next sibling that is not an arrow stays; any other gets a key
between that shape and the next sibling above it (or just above it when nothing
is). tldraw applies the rule whenever a binding or a bound shape changes, and to
every binding when it opens a file, so a file whose arrows break it opens with
those arrows moved. :func:`arrow_index` is the rule; :func:`load_index_moves`
applies it to a loaded canvas as tldraw does on opening it.
"""

from __future__ import annotations

import bisect
from typing import Any, Dict, List, Optional, Sequence, Tuple

from spatialobs.canvas.document.fractional import key_after, key_between

__all__ = ["arrow_index", "arrow_index_at", "load_index_moves"]


def arrow_index(current: str, highest: str, higher: Sequence[Tuple[str, bool]]) -> Optional[str]:
    """The new index of a bound arrow, or None when it stays.

    Parameters
    ----------
    current : str
        The arrow's index.
    highest : str
        Index of the higher bound shape (or of its ancestor that is the arrow's sibling).
    higher : sequence of (str, bool)
        ``(index, is_arrow)`` of every sibling above ``highest``, sorted by index (the
        arrow itself included when it is there).

    Examples
    --------
    >>> arrow_index("a1", "a2", [("a3", False)])  # below its target: moved between it and the next
    'a2V'
    >>> arrow_index("a2V", "a2", [("a2V", True), ("a3", False)]) is None
    True
    >>> arrow_index("a1", "a2", [])
    'a3'
    """
    above = higher[0][0] if higher else None
    return arrow_index_at(current, highest, above, next((k for k, is_arrow in higher if not is_arrow), None))


def arrow_index_at(current: str, highest: str, above: Optional[str], solid: Optional[str]) -> Optional[str]:
    """:func:`arrow_index` from the two siblings the rule looks at, or None when the arrow stays.

    Parameters
    ----------
    current, highest : str
        As for :func:`arrow_index`.
    above : str or None
        The lowest index of a sibling above ``highest`` (None: no sibling is above it).
    solid : str or None
        The lowest index of a sibling above ``highest`` that is not an arrow.

    Examples
    --------
    >>> arrow_index_at("a1", "a2", "a3", "a3")
    'a2V'
    >>> arrow_index_at("a2V", "a2", "a2V", "a3") is None
    True
    """
    if above is not None:
        if current > highest and (solid is None or current < solid):
            return None
        new = key_between(highest, above)
    else:
        new = key_after(highest)
    return None if new == current else new


def load_index_moves(nodes: Any, bindings: Any, children: Any) -> Dict[str, str]:
    """Arrow id -> the index tldraw moves it to when it opens the file.

    Parameters
    ----------
    nodes : mapping
        Node id -> node (with ``type``, ``parent``, ``index``).
    bindings : iterable
        Binding records (``from_id``, ``to_id``, ``terminal``), in the file's order.
    children : mapping
        Parent id -> iterable of child ids.

    Only arrows whose parent already follows tldraw's rule are looked at (an arrow
    tldraw would also reparent keeps its place). Cost: one sort per parent that
    holds a bound shape, then a bisection per arrow and a scan of the arrows just
    above its target.

    Examples
    --------
    >>> from types import SimpleNamespace as N
    >>> nodes = {"arr": N(type="arrow", parent="p", index="a1"), "box": N(type="geo", parent="p", index="a2"),
    ...          "top": N(type="geo", parent="p", index="a3")}
    >>> load_index_moves(nodes, [N(from_id="arr", to_id="box", terminal="end")], {"p": ["arr", "box", "top"]})
    {'arr': 'a2V'}
    """
    ends: Dict[str, Dict[str, Any]] = {}
    for b in bindings:
        a = nodes.get(b.from_id)
        if a is None or a.type != "arrow" or b.to_id not in nodes:
            continue
        ends.setdefault(b.from_id, {})[b.terminal] = nodes[b.to_id]
    if not ends:
        return {}
    sorted_kids: Dict[str, List[Tuple[str, bool, str]]] = {}

    def kids(parent: str) -> List[Tuple[str, bool, str]]:
        got = sorted_kids.get(parent)
        if got is None:
            got = sorted_kids[parent] = sorted(
                (index.get(k, nodes[k].index), nodes[k].type == "arrow", k) for k in children.get(parent, ()))
        return got

    def chain(node: Any) -> List[Any]:
        out, seen = [node], {id(node)}
        p = nodes.get(node.parent)
        while p is not None and id(p) not in seen:
            out.append(p)
            seen.add(id(p))
            p = nodes.get(p.parent)
        return out

    def page_of(node: Any) -> str:
        return str(chain(node)[-1].parent)

    index: Dict[str, str] = {}
    moves: Dict[str, str] = {}
    for aid, terms in ends.items():
        arrow = nodes[aid]
        s, e = terms.get("start"), terms.get("end")
        if s is not None and e is not None:
            cs, ce = chain(s), chain(e)
            ids_e = {id(n) for n in ce}
            if s is e:
                held: Any = s
            elif id(e) in {id(n) for n in cs[1:]}:
                held = e
            elif id(s) in {id(n) for n in ce[1:]}:
                held = s
            else:
                held = None
            common = next((n for n in cs[1:] if id(n) in ids_e), None)
            parent = (getattr(held, "id", None) if held is not None and held.type == "frame" else None) or (
                getattr(common, "id", None) if common is not None else None) or page_of(arrow)
        else:
            t = s if s is not None else e
            assert t is not None
            parent = arrow.parent if t.parent == arrow.parent else page_of(arrow)
        if parent != arrow.parent:
            continue
        sibs = []
        for t in (s, e):
            if t is None:
                continue
            near = next((n for n in chain(t) if n.parent == arrow.parent), None)
            if near is not None:
                sibs.append(index.get(getattr(near, "id", ""), near.index))
        if not sibs:
            continue
        highest = max(sibs)
        lst = kids(arrow.parent)
        at = bisect.bisect_right(lst, (highest, True, "\uffff"))
        cur = index.get(aid, arrow.index)
        # arrow_index of the siblings above `highest`, read in place: the first of them and the
        # first that is not an arrow (a copy of all of them per arrow grew with the page squared)
        solid = None
        for j in range(at, len(lst)):
            if not lst[j][1]:
                solid = lst[j][0]
                break
        new = arrow_index_at(cur, highest, lst[at][0] if at < len(lst) else None, solid)
        if new is not None:
            pos = bisect.bisect_left(lst, (cur, True, aid))
            if pos < len(lst) and lst[pos][2] == aid:
                del lst[pos]
            bisect.insort(lst, (new, True, aid))
            index[aid] = moves[aid] = new
    return moves
