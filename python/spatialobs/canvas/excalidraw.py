"""Excalidraw ``.excalidraw`` import.

Excalidraw stores absolute coordinates with ``angle`` about the element's center;
nodes here rotate about their local origin, so each element's origin is moved to
where its rotated top-left corner lands. ``groupIds`` (innermost first) become
synthesized ``group`` nodes, ``frameId`` makes the frame the parent, bound text
(``containerId``) becomes its container's text, ``startBinding`` / ``endBinding``
become bindings, deleted elements are dropped, the legacy ``draw`` type reads as
``line`` and opacity 0–100 becomes 0–1. Array order is paint order: every node gets
an index from its array position, and a group or frame takes the position of its
first member so that it is painted beneath them.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.sanitize import is_mapping
from spatialobs.canvas.fractional import key_sequence
from spatialobs.canvas.model import Canvas, build_canvas
from spatialobs.canvas.records import Diagnostic, Page, Viewport

__all__ = ["from_excalidraw", "is_excalidraw", "LINEAR_TYPES"]

#: Element types whose geometry is a list of points relative to ``(x, y)``.
LINEAR_TYPES = frozenset({"arrow", "line", "freedraw", "draw"})
_MAPPED = {"id", "type", "x", "y", "width", "height", "angle", "opacity", "locked", "isDeleted", "groupIds",
           "frameId", "strokeColor", "backgroundColor", "fillStyle", "strokeWidth", "strokeStyle",
           "roughness", "fontSize", "fontFamily", "textAlign", "verticalAlign", "name"}
_PAGE = "page:page"


class _Unusable(Exception):
    pass


def is_excalidraw(doc: Any) -> bool:
    """Whether a parsed JSON value looks like an Excalidraw scene."""
    return is_mapping(doc) and (doc.get("type") == "excalidraw" or (
        isinstance(doc.get("elements"), list) and "records" not in doc and "nodes" not in doc))


def _f(e: Mapping[str, Any], key: str, default: float, diags: List[Diagnostic]) -> float:
    v = e.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool):
        v = default
    try:
        f = float(v)
    except (TypeError, ValueError):
        diags.append(Diagnostic("invalid_geometry", str(e.get("id")), f"{key} is not a number ({v!r}); {default} used"))
        return default
    if not math.isfinite(f):
        diags.append(Diagnostic("invalid_geometry", str(e.get("id")), f"{key} is not finite; {default} used"))
        return default
    return f


def _points(e: Mapping[str, Any]) -> List[List[float]]:
    out = []
    pts = e.get("points")
    if isinstance(pts, list):
        for p in pts:
            try:
                x, y = float(p[0]), float(p[1])
            except (IndexError, KeyError, TypeError, ValueError):
                continue
            if math.isfinite(x) and math.isfinite(y):
                out.append([x, y])
    return out


def from_excalidraw(doc: Mapping[str, Any]) -> Canvas:
    """Build a :class:`Canvas` from a parsed Excalidraw scene.

    Parameters
    ----------
    doc : mapping
        ``{"type": "excalidraw", "elements": [...], "appState": {...}}``.

    Returns
    -------
    Canvas
        One page ``"page:page"``; diagnostics list what was repaired.

    Examples
    --------
    >>> c = from_excalidraw({"type": "excalidraw", "elements": [
    ...     {"id": "r", "type": "rectangle", "x": 0, "y": 0, "width": 10, "height": 20,
    ...      "angle": math.pi / 2}]})
    >>> [round(v, 9) for v in c.page_bounds("r")]
    [-5.0, 5.0, 15.0, 15.0]
    """
    elements = doc.get("elements")
    if not isinstance(elements, list):
        raise InvalidInputError("Excalidraw scene has no 'elements' list")
    diags: List[Diagnostic] = []
    live: List[Mapping[str, Any]] = []
    seen: set = set()
    for k, e in enumerate(elements):
        if not is_mapping(e) or not isinstance(e.get("id"), str) or not e["id"]:
            diags.append(Diagnostic("invalid_record", f"#{k}", "element is not an object with a string id; ignored"))
            continue
        if e.get("isDeleted"):
            continue
        if e["id"] in seen:
            diags.append(Diagnostic("duplicate_id", e["id"], "element id appears twice; the first is kept"))
            continue
        seen.add(e["id"])
        live.append(e)
    by_id = {e["id"]: e for e in live}
    bound_text: Dict[str, str] = {}
    skip: set = set()
    for e in live:
        cid = e.get("containerId")
        if e.get("type") == "text" and isinstance(cid, str) and cid in by_id:
            t = e.get("originalText") if isinstance(e.get("originalText"), str) else e.get("text")
            if isinstance(t, str):
                bound_text[cid] = bound_text.get(cid, "") + t
            skip.add(e["id"])
    keys = key_sequence(len(live))
    pos_key = {e["id"]: keys[i] for i, e in enumerate(live)}
    frames = {e["id"] for e in live if e.get("type") in ("frame", "magicframe")}

    # containers: groups (outermost last in groupIds) and frames
    group_parent: Dict[str, str] = {}
    group_key: Dict[str, str] = {}
    frame_key: Dict[str, str] = {fid: pos_key[fid] for fid in frames}
    elem_parent: Dict[str, str] = {}
    for e in live:
        if e["id"] in skip:
            continue
        gids = [g for g in (e.get("groupIds") or []) if isinstance(g, str) and g] if isinstance(e.get("groupIds"), list) else []
        fid = e.get("frameId") if e.get("frameId") in frames and e.get("frameId") != e["id"] else None
        if e.get("frameId") and fid is None and e.get("frameId") not in frames:
            diags.append(Diagnostic("dangling_parent", e["id"], f"frameId {e.get('frameId')!r} does not exist; ignored"))
        outer = fid or _PAGE
        chain = ["group:" + g for g in gids]
        elem_parent[e["id"]] = chain[0] if chain else outer
        for inner, up in zip(chain, chain[1:] + [outer]):
            group_parent.setdefault(inner, up)
            group_key.setdefault(inner, pos_key[e["id"]])
        if fid is not None and pos_key[e["id"]] < frame_key[fid]:
            frame_key[fid] = pos_key[e["id"]]
    for g, up in group_parent.items():  # a frame sits beneath its first member, even inside groups
        if up in frame_key and group_key[g] < frame_key[up]:
            frame_key[up] = group_key[g]

    # page transforms of containers, to express children in parent coordinates
    frame_tf: Dict[str, Tuple[float, float, float]] = {}
    node_fields: List[Dict[str, Any]] = []
    for e in live:
        eid = e["id"]
        if eid in skip:
            continue
        etype = e.get("type")
        if not isinstance(etype, str) or not etype:
            diags.append(Diagnostic("missing_field", eid, "element has no type; 'unknown' used"))
            etype = "unknown"
        ntype = "line" if etype == "draw" else etype
        x = _f(e, "x", 0.0, diags)
        y = _f(e, "y", 0.0, diags)
        angle = _f(e, "angle", 0.0, diags)
        props = {k: v for k, v in e.items() if k not in _MAPPED}
        if etype in LINEAR_TYPES:
            pts = _points(e)
            if pts:
                xs = [p[0] for p in pts]
                ys = [p[1] for p in pts]
                x0, y0, x1, y1 = min(xs), min(ys), max(xs), max(ys)
            else:
                x0 = y0 = 0.0
                x1, y1 = _f(e, "width", 0.0, diags), _f(e, "height", 0.0, diags)
            props["points"] = pts
            w, h = x1 - x0, y1 - y0
            cx, cy = x + (x0 + x1) / 2, y + (y0 + y1) / 2
        else:
            w = max(_f(e, "width", 0.0, diags), 0.0)
            h = max(_f(e, "height", 0.0, diags), 0.0)
            cx, cy = x + w / 2, y + h / 2
        c, s = math.cos(angle), math.sin(angle)
        # rotate (x, y) about the center: where the local origin lands on the page
        ox = cx + c * (x - cx) - s * (y - cy)
        oy = cy + s * (x - cx) + c * (y - cy)
        if eid in frames:
            frame_tf[eid] = (ox, oy, angle)
        style = {"color": e.get("strokeColor"), "fill": None if e.get("backgroundColor") == "transparent" else e.get("backgroundColor"),
                 "fillStyle": e.get("fillStyle"), "strokeWidth": e.get("strokeWidth"), "strokeStyle": e.get("strokeStyle"),
                 "roughness": e.get("roughness"), "fontSize": e.get("fontSize"), "fontFamily": e.get("fontFamily"),
                 "textAlign": e.get("textAlign"), "verticalAlign": e.get("verticalAlign")}
        if etype == "text":
            t = e.get("originalText") if isinstance(e.get("originalText"), str) else e.get("text")
        else:
            t = bound_text.get(eid)
        op = _f(e, "opacity", 100.0, diags) / 100.0
        index = frame_key.get(eid, pos_key[eid])
        node_fields.append({"id": eid, "type": ntype, "parent": elem_parent.get(eid, _PAGE), "index": index,
                            "x": ox, "y": oy, "w": w, "h": h, "rotation": angle, "text": t if isinstance(t, str) else None,
                            "name": e.get("name") if isinstance(e.get("name"), str) else None, "style": style,
                            "opacity": min(max(op, 0.0), 1.0), "locked": bool(e.get("locked", False)), "hidden": False,
                            "props": props})

    def page_tf(pid: str) -> Tuple[float, float, float]:
        if pid in frame_tf:
            return frame_tf[pid]
        if pid in group_parent:
            return page_tf(group_parent[pid])  # groups sit at their parent's origin, unrotated
        return (0.0, 0.0, 0.0)

    for f in node_fields:
        p = f["parent"]
        if p == _PAGE:
            continue
        px, py, pr = page_tf(p)
        dx, dy = f["x"] - px, f["y"] - py
        c, s = math.cos(-pr), math.sin(-pr)
        f["x"], f["y"], f["rotation"] = c * dx - s * dy, s * dx + c * dy, f["rotation"] - pr
    for g, up in group_parent.items():
        node_fields.append({"id": g, "type": "group", "parent": up, "index": group_key[g], "x": 0.0, "y": 0.0,
                            "w": 0.0, "h": 0.0, "rotation": 0.0, "text": None, "name": None, "style": {},
                            "opacity": 1.0, "locked": False, "hidden": False, "props": {"synthesized": True}})
    binding_fields: List[Dict[str, Any]] = []
    for e in live:
        if e.get("type") not in ("arrow", "line") or e["id"] in skip:
            continue
        for term, key in (("start", "startBinding"), ("end", "endBinding")):
            b = e.get(key)
            if not is_mapping(b):
                continue
            target = b.get("elementId")
            fp = b.get("fixedPoint")
            anchor = (fp[0], fp[1]) if isinstance(fp, list) and len(fp) == 2 else (0.5, 0.5)
            binding_fields.append({"id": f"{e['id']}:{term}", "type": "arrow", "from_id": e["id"],
                                   "to_id": target if isinstance(target, str) else "", "terminal": term,
                                   "anchor": anchor, "precise": isinstance(fp, list),
                                   "props": {k: v for k, v in b.items() if k not in ("elementId", "fixedPoint")}})
    pages = [Page(_PAGE, "Page 1", "a1")]
    for bf in binding_fields:
        if not bf["to_id"]:
            bf["to_id"] = "?"
    canvas = build_canvas(pages, node_fields, binding_fields, diags)
    app = doc.get("appState") if is_mapping(doc.get("appState")) else {}
    if isinstance(app.get("scrollX"), (int, float)) and isinstance(app.get("scrollY"), (int, float)):
        z = app.get("zoom", 1)
        z = z.get("value", 1) if is_mapping(z) else z
        try:
            zf = float(z)
        except (TypeError, ValueError):
            zf = 1.0
        if not (math.isfinite(zf) and zf > 0):
            zf = 1.0
        w = float(app.get("width", 1280) or 1280)
        h = float(app.get("height", 720) or 720)
        canvas.cameras[_PAGE] = Viewport(-float(app["scrollX"]), -float(app["scrollY"]), w / zf, h / zf)
    sel = app.get("selectedElementIds")
    if is_mapping(sel):
        canvas.selection[_PAGE] = tuple(k for k, v in sel.items() if v and k in canvas._nodes)
    canvas._source = _ExcalidrawSource()
    return canvas


class _ExcalidrawSource:
    format = "excalidraw"
