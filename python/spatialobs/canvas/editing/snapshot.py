"""A compact, deterministic summary of the canvas and editor state for an agent's prompt.

Examples
--------
>>> from spatialobs.canvas import Canvas, Node
>>> c = Canvas()
>>> _ = c.add(Node("shape:home", "frame", "page:page", "a1", 0, 0, 400, 300, name="Home"))
>>> _ = c.add(Node("shape:t", "text", "shape:home", "a1", 10, 10, 100, 20, text="Hi"))
>>> snapshot(c)["artboards"]
[{'id': 'shape:home', 'name': 'Home', 'x': 0, 'y': 0, 'w': 400, 'h': 300, 'children': 1}]
>>> snapshot_json(c)[:60]
'{"page":"page:page","artboards":[{"id":"shape:home","name":"'
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.editing.editor import Editor
from spatialobs.canvas.document.model import Canvas

__all__ = ["snapshot", "snapshot_json", "PROMPTS_SHOWN", "SUBTREE_DEPTH", "TEXT_CHARS"]

#: Prompts of the history shown (the write-up's "last six").
PROMPTS_SHOWN = 6
#: Depth of the subtree shown below each selected node.
SUBTREE_DEPTH = 2
#: Texts are cut to this many characters with "…" (*ours*).
TEXT_CHARS = 80
_BACKGROUND_KEYS = ("backgroundColor", "background", "fill", "color")


def _r(v: float) -> Any:
    """A coordinate rounded to an integer (-0 written as 0)."""
    return int(round(v)) + 0


def _text(s: Optional[str]) -> Optional[str]:
    if s is None:
        return None
    return s if len(s) <= TEXT_CHARS else s[:TEXT_CHARS - 1] + "…"


def _geom(canvas: Canvas, nid: str, origin: Sequence[float]) -> Dict[str, Any]:
    x0, y0, x1, y1 = canvas.page_bounds(nid)
    return {"x": _r(x0 - origin[0]), "y": _r(y0 - origin[1]), "w": _r(x1 - x0), "h": _r(y1 - y0)}


def _entry(canvas: Canvas, nid: str, origin: Sequence[float], depth: int) -> Dict[str, Any]:
    n = canvas.node(nid)
    e: Dict[str, Any] = {"id": nid, "type": n.type}
    if n.name:
        e["name"] = _text(n.name)
    if n.text:
        e["text"] = _text(n.text)
    e.update(_geom(canvas, nid, origin))
    kids = canvas.children(nid)
    if kids:
        if depth < SUBTREE_DEPTH:
            e["children"] = [_entry(canvas, k, origin, depth + 1) for k in kids]
        else:
            e["childCount"] = len(kids)
    return e


def snapshot(canvas: Canvas, *, page: Optional[str] = None, origin: Sequence[float] = (0, 0)) -> Dict[str, Any]:
    """The state an agent needs before it edits: artboards, selection, tool, history.

    Parameters
    ----------
    canvas : Canvas
    page : str, optional
        Page to describe (default: the current page).
    origin : (x, y)
        Geometry is given in action coordinates, page minus ``origin``, rounded.

    Returns
    -------
    dict
        ``page``; ``artboards``: each artboard (frame) of the page in paint order
        with ``id``, ``name``, ``x``, ``y``, ``w``, ``h`` (page bounds), ``background``
        (when its style has one) and ``children`` (count of direct children);
        ``nodeCount``: nodes in the whole document; ``selection``: each selected
        node with ``id``, ``type``, ``name``/``text``, geometry and its subtree to
        depth two (deeper levels as ``childCount``); ``tool``; ``agent``:
        ``active``, ``status``, ``workingArtboards`` and ``prompts`` (the last six).

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> s = snapshot(Canvas())
    >>> s["artboards"], s["nodeCount"], s["tool"], s["agent"]["prompts"]
    ([], 0, 'select', [])
    """
    if not isinstance(canvas, Canvas):
        raise InvalidInputError(f"snapshot needs a Canvas, got {type(canvas).__name__}")
    try:
        ox, oy = (float(v) for v in origin)
    except (TypeError, ValueError):
        raise InvalidInputError(f"snapshot: origin must be two numbers, got {origin!r}") from None
    ed = Editor(canvas)
    pid = canvas._resolve_page(page)
    o = (ox, oy)
    boards: List[Dict[str, Any]] = []
    for nid in ed.artboards(pid):
        n = canvas.node(nid)
        b: Dict[str, Any] = {"id": nid, "name": n.name or ""}
        b.update(_geom(canvas, nid, o))
        bg = next((n.style[k] for k in _BACKGROUND_KEYS if k in n.style), None)
        if bg is not None:
            b["background"] = bg
        b["children"] = len(canvas.children(nid))
        boards.append(b)
    agent = ed.agent
    return {
        "page": pid,
        "artboards": boards,
        "nodeCount": len(canvas.nodes),
        "selection": [_entry(canvas, s, o, 0) for s in canvas.selected(pid)],
        "tool": ed.tool,
        "agent": {"active": agent["active"], "status": agent["status"],
                  "workingArtboards": ed.working_artboards(),
                  "prompts": agent["prompts"][-PROMPTS_SHOWN:]},
    }


def snapshot_json(canvas: Canvas, *, page: Optional[str] = None, origin: Sequence[float] = (0, 0)) -> str:
    """:func:`snapshot` as compact JSON; the same canvas gives the same bytes."""
    return json.dumps(snapshot(canvas, page=page, origin=origin), separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
