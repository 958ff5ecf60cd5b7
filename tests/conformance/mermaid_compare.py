"""What a Mermaid flowchart becomes, in a form both sides can be compared in.

One side is what Excalidraw's own Mermaid import (``@excalidraw/mermaid-to-excalidraw``
through ``convertToExcalidrawElements``, in the real editor) makes, read from the
harness's ``mermaid.mjs``; the other is what ``create_from_mermaid`` writes into an
Excalidraw document, read from :func:`~spatialobs.canvas.formats.excalidraw.to_excalidraw`.
Both become a :class:`Structure`: the shapes (type and label, by Mermaid id), the
arrows (bound start and end, label, heads, stroke) and the group each element is
in (``subgraph_group_<id>``), so a test can say they are the same diagram.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple


@dataclass
class Structure:
    """A diagram's shapes, arrows and subgraph membership, with Mermaid ids as names.

    ``shapes``: Mermaid id -> (element type, label); ``extra``: sorted (type, label,
    groups) of shapes without a Mermaid id (the inner ellipse of a double circle);
    ``arrows``: sorted (start, end, label, start head, end head, stroke style,
    stroke width); ``groups``: Mermaid id -> the ``subgraph_group_*`` ids its element
    is in, innermost first; ``boxes``: Mermaid id -> [x0, y0, x1, y1].
    """

    shapes: Dict[str, Tuple[str, str]]
    extra: List[Tuple[str, str, Tuple[str, ...]]]
    arrows: List[Tuple[Any, ...]]
    groups: Dict[str, Tuple[str, ...]]
    boxes: Dict[str, List[float]]


def _label_of(elements: Sequence[Mapping[str, Any]]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for e in elements:
        if e.get("type") == "text" and e.get("containerId"):
            t = e.get("originalText") if isinstance(e.get("originalText"), str) else e.get("text")
            out[e["containerId"]] = t or ""
    return out


def _sub_groups(e: Mapping[str, Any]) -> Tuple[str, ...]:
    return tuple(g for g in (e.get("groupIds") or []) if g.startswith("subgraph_group_"))


def structure(elements: Sequence[Mapping[str, Any]], name_of: Mapping[str, str]) -> Structure:
    """The :class:`Structure` of Excalidraw elements; ``name_of`` maps an element id to its Mermaid id."""
    live = [e for e in elements if not e.get("isDeleted")]
    labels = _label_of(live)
    shapes: Dict[str, Tuple[str, str]] = {}
    extra: List[Tuple[str, str, Tuple[str, ...]]] = []
    groups: Dict[str, Tuple[str, ...]] = {}
    boxes: Dict[str, List[float]] = {}
    arrows: List[Tuple[Any, ...]] = []
    for e in live:
        t = e.get("type")
        if t == "text" and e.get("containerId"):
            continue
        name = name_of.get(e["id"])
        if t == "arrow":
            s = name_of.get((e.get("startBinding") or {}).get("elementId", ""), "?")
            d = name_of.get((e.get("endBinding") or {}).get("elementId", ""), "?")
            arrows.append((s, d, labels.get(e["id"]), e.get("startArrowhead"), e.get("endArrowhead"),
                           e.get("strokeStyle") or "solid", e.get("strokeWidth")))
            continue
        if name is None:
            extra.append((t, labels.get(e["id"], ""), _sub_groups(e)))
            continue
        shapes[name] = (t, labels.get(e["id"], ""))
        groups[name] = _sub_groups(e)
        if "bounds" in e:
            boxes[name] = list(e["bounds"])
        else:
            boxes[name] = [e["x"], e["y"], e["x"] + e["width"], e["y"] + e["height"]]
    return Structure(shapes, sorted(extra), sorted(arrows, key=repr), groups, boxes)


def truth_structure(result: Mapping[str, Any]) -> Structure:
    """The structure of one file of the harness's ``mermaid.mjs`` output (element ids are Mermaid ids)."""
    elements = result["elements"]
    skeleton_ids = {s["id"] for s in result["skeleton"] if s.get("id")}
    name_of = {e["id"]: e["id"] for e in elements if e["id"] in skeleton_ids}
    return structure(elements, name_of)


def ours_structure(doc: Mapping[str, Any], aliases: Mapping[str, str]) -> Structure:
    """The structure of a written Excalidraw scene; ``aliases`` maps Mermaid ids to node ids."""
    name_of = {nid: mid for mid, nid in aliases.items()}
    return structure(doc["elements"], name_of)


def flow_order_agreement(a: Structure, b: Structure, axis: int) -> Optional[float]:
    """Of the node pairs that ``a`` puts in different layers along ``axis`` (0: x, 1: y; centers
    more than 10 apart), the fraction ``b`` orders the same way; None when there are none."""
    names = sorted(set(a.boxes) & set(b.boxes))

    def center(s: Structure, n: str) -> float:
        bx = s.boxes[n]
        return (bx[axis] + bx[axis + 2]) / 2

    same = total = 0
    for i, m in enumerate(names):
        for n in names[i + 1:]:
            da = center(a, m) - center(a, n)
            if abs(da) <= 10:
                continue
            total += 1
            same += (da > 0) == (center(b, m) - center(b, n) > 0)
    return None if total == 0 else same / total
