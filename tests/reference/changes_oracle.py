"""A naive diff of two documents, written from the definitions in spatialobs.canvas.changes.

The test takes a full copy of the canvas after every edit; the expected changes
are the per-field differences between the first and the last copy, and each is
credited to the origin of the last edit whose own before/after copies differ in
that field. No journal is involved.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

# kind -> the fields it compares (the module docstring's table, typed again)
NODE_FIELDS = {
    "moved": ("x", "y"),
    "resized": ("w", "h"),
    "rotated": ("rotation",),
    "reparented": ("parent",),
    "restacked": ("index",),
    "retexted": ("text", "name"),
    "restyled": ("style", "opacity"),
    "edited": ("type", "props", "locked", "hidden"),
}


def node_kinds(a: Any, b: Any) -> List[str]:
    """Kinds between two values of one node (None: absent)."""
    if a is None and b is None:
        return []
    if a is None:
        return ["added"]
    if b is None:
        return ["removed"]
    da, db = a.to_dict(), b.to_dict()
    return [k for k, fs in NODE_FIELDS.items() if any(da[f] != db[f] for f in fs)]


def aspect_changed(kind: str, a: Any, b: Any) -> bool:
    """Whether one edit (a -> b) changed the aspect ``kind`` of a node."""
    if (a is None) != (b is None):
        return True
    if a is None:
        return False
    if kind in ("added", "removed"):
        return False
    da, db = a.to_dict(), b.to_dict()
    return any(da[f] != db[f] for f in NODE_FIELDS[kind])


def binding_kind(a: Any, b: Any) -> Optional[str]:
    if a is None and b is None:
        return None
    if a is None:
        return "bound"
    if b is None:
        return "unbound"
    return None if a.to_dict() == b.to_dict() else "rebound"


def naive_changes(states: List[Tuple[Any, Optional[str]]]) -> Dict[str, Dict[str, str]]:
    """``{id: {kind: origin}}`` for the edits between ``states[0]`` and ``states[-1]``.

    ``states[i]`` is ``(canvas copy after edit i, origin of edit i)``; ``states[0]``
    is the canvas at the token (its origin is unused).
    """
    first, last = states[0][0], states[-1][0]
    out: Dict[str, Dict[str, str]] = {}
    for nid in set(first.nodes) | set(last.nodes):
        a, b = first.nodes.get(nid), last.nodes.get(nid)
        kinds = node_kinds(a, b)
        if not kinds:
            continue
        rec = {}
        for k in kinds:
            for i in range(len(states) - 1, 0, -1):
                if aspect_changed(k, states[i - 1][0].nodes.get(nid), states[i][0].nodes.get(nid)):
                    rec[k] = states[i][1]
                    break
        out[nid] = rec
    for bid in set(first.bindings) | set(last.bindings):
        a, b = first.bindings.get(bid), last.bindings.get(bid)
        k = binding_kind(a, b)
        if k is None:
            continue
        for i in range(len(states) - 1, 0, -1):
            x, y = states[i - 1][0].bindings.get(bid), states[i][0].bindings.get(bid)
            if (x is None) != (y is None) or (x is not None and x.to_dict() != y.to_dict()):
                out[bid] = {k: states[i][1]}
                break
    return out
