"""tldraw's ``reparentArrow`` on opening a file, applied arrow by arrow with nothing kept between arrows.

The twin of :func:`spatialobs.canvas.document.arrowindex.load_index_moves`: for each bound
arrow, in the order of its first binding, the arrow's siblings are sorted again by their
current index and handed whole to :func:`arrow_index` (the rule itself), where the kernel
keeps one sorted list per parent up to date and reads only the siblings the rule looks at.
Which arrows the rule applies to, and which shapes stand for their targets among the
arrow's siblings, are the kernel's own definitions, typed again.
"""

from __future__ import annotations

from typing import Any, Dict, List

from spatialobs.canvas.document.arrowindex import arrow_index


def _chain(nodes: Any, node: Any) -> List[Any]:
    out = [node]
    p = nodes.get(node.parent)
    while p is not None and all(p is not q for q in out):
        out.append(p)
        p = nodes.get(p.parent)
    return out


def load_index_moves_oracle(nodes: Any, bindings: Any, children: Any) -> Dict[str, str]:
    ends: Dict[str, Dict[str, Any]] = {}
    for b in bindings:
        a = nodes.get(b.from_id)
        if a is not None and a.type == "arrow" and b.to_id in nodes:
            ends.setdefault(b.from_id, {})[b.terminal] = nodes[b.to_id]
    index: Dict[str, str] = {}
    moves: Dict[str, str] = {}
    for aid, terms in ends.items():
        arrow = nodes[aid]
        s, e = terms.get("start"), terms.get("end")
        page = str(_chain(nodes, arrow)[-1].parent)
        if s is not None and e is not None:
            cs, ce = _chain(nodes, s), _chain(nodes, e)
            if s is e:
                held: Any = s
            elif any(n is e for n in cs[1:]):
                held = e
            elif any(n is s for n in ce[1:]):
                held = s
            else:
                held = None
            common = next((n for n in cs[1:] if any(n is m for m in ce)), None)
            parent = (getattr(held, "id", None) if held is not None and held.type == "frame" else None) or (
                getattr(common, "id", None) if common is not None else None) or page
        else:
            t = s if s is not None else e
            parent = arrow.parent if t.parent == arrow.parent else page
        if parent != arrow.parent:
            continue
        sibs = []
        for t in (s, e):
            if t is not None:
                near = next((n for n in _chain(nodes, t) if n.parent == arrow.parent), None)
                if near is not None:
                    sibs.append(index.get(getattr(near, "id", ""), near.index))
        if not sibs:
            continue
        highest = max(sibs)
        now = sorted((index.get(k, nodes[k].index), nodes[k].type == "arrow", k)
                     for k in children.get(arrow.parent, ()))
        higher = [(k, is_arrow) for k, is_arrow, i in now if (k, is_arrow, i) > (highest, True, "\uffff")]
        new = arrow_index(index.get(aid, arrow.index), highest, higher)
        if new is not None:
            index[aid] = moves[aid] = new
    return moves
