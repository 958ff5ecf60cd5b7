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

Import keeps the raw scene, so :func:`to_excalidraw` writes every element whose
node (and everything the element is derived from: ancestors, bindings, bound
text) did not change back as the input's element object, and rebuilds only the
fields of changed elements that actually changed.
"""

from __future__ import annotations

import copy
import math
from bisect import bisect_left
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from spatialobs.canvas.limits import current as current_limits
from spatialobs.canvas.limits import echo, typed_errors
from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.sanitize import INT_SPAN, CleanFields, is_mapping, sanitize_style
from spatialobs.canvas.document.fractional import is_valid_key, key_after, key_between, key_sequence
from spatialobs.canvas.document.model import Canvas, build_canvas
from spatialobs.canvas.document.records import Binding, Diagnostic, Node, Page, Viewport
from spatialobs.canvas.document.arrows import arrow_ends
from spatialobs.canvas.document.excalidraw_text import (bound_text_layout, default_line_height, label_fields,
                                                         measure_text, text_element_size, wrap_text)
from spatialobs.canvas.document.freehand import freehand_box
from spatialobs.canvas.formats._detect import is_excalidraw
from spatialobs.canvas.document.shapes import _excalidraw_round, arrow_terminals, curve_boxes, local_box

__all__ = ["from_excalidraw", "to_excalidraw", "is_excalidraw", "ExcalidrawSource", "LINEAR_TYPES",
           "ELEMENT_TYPES", "TYPE_MAP"]

#: Element types whose geometry is a list of points relative to ``(x, y)``.
LINEAR_TYPES = frozenset({"arrow", "line", "freedraw", "draw"})
_MAPPED = {"id", "type", "x", "y", "width", "height", "angle", "opacity", "locked", "isDeleted", "groupIds",
           "frameId", "strokeColor", "backgroundColor", "fillStyle", "strokeWidth", "strokeStyle",
           "roughness", "fontSize", "fontFamily", "textAlign", "verticalAlign", "name"}
_PAGE = "page:page"


class _Unusable(Exception):
    pass


def _f(e: Mapping[str, Any], key: str, default: float, diags: List[Diagnostic]) -> float:
    v = e.get(key, default)
    tv = type(v)
    if tv is float and math.isfinite(v):  # the common cases, as below without its checks
        return v
    if tv is int and -INT_SPAN < v < INT_SPAN:
        return float(v)
    if v is None:
        return default
    if isinstance(v, bool):
        v = default
    try:
        f = float(v)
    except OverflowError:  # a JSON integer beyond float's range
        f = math.inf
    except (TypeError, ValueError):
        diags.append(Diagnostic("invalid_geometry", str(e.get("id"))[:80], f"{key} is not a number ({echo(v)}); {default} used"))
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
        if etype not in ELEMENT_TYPES and etype not in ("draw", "unknown") and len(etype) <= current_limits().max_key_chars:
            # kept as it is: written back unchanged while it is not edited, with its type when it is
            # (a type longer than the key limit is cut by the sanitizer, which reports that instead)
            diags.append(Diagnostic("unknown_type", eid, f"unknown element type {etype[:40]!r}; kept as it is, "
                                                         "drawn as its box"))
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
    if CLEAN_FIELDS:
        lim = current_limits()
        node_fields = [_clean_fields(f, lim.max_key_chars, lim.max_coordinate) for f in node_fields]
    canvas = build_canvas(pages, node_fields, binding_fields, diags)
    _seed_curve_boxes(canvas, node_fields)
    raw_app = doc.get("appState")
    app: Mapping[str, Any] = raw_app if is_mapping(raw_app) else {}
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
    canvas._source = ExcalidrawSource(
        top={k: v for k, v in doc.items() if k != "elements"}, elements=list(elements),
        origin_nodes=dict(canvas._nodes), origin_bindings=dict(canvas._bindings),
        origin_cameras=dict(canvas.cameras), origin_selection=dict(canvas.selection))
    return canvas


def _seed_curve_boxes(canvas: Canvas, node_fields: List[Dict[str, Any]]) -> None:
    """The local boxes of the rounded lines and arrows (the curve Excalidraw draws through their
    points), computed for all of them at once and kept in the canvas's local-box cache, where the
    first derivation finds them instead of computing each with :func:`~spatialobs.canvas.document.
    shapes.curve_box`. Only nodes built from the fields as they are (``props`` the same object) and
    whose box :func:`~spatialobs.canvas.document.shapes.local_box` would take from that curve."""
    nodes = canvas._nodes
    todo: List[Tuple[Node, List[List[float]]]] = []
    for f in node_fields:
        if f["type"] not in ("line", "arrow") or type(f) is not CleanFields:
            continue
        props = f["props"]
        pts = props.get("points")
        if type(pts) is not list or len(pts) < 3 or not _excalidraw_round(f["type"], props):
            continue
        nd = nodes.get(f["id"])
        if nd is None or nd.props is not props or freehand_box(nd.type, props) is not None:
            continue
        todo.append((nd, pts))
    if not todo:
        return
    for (nd, _), box in zip(todo, curve_boxes([pts for _, pts in todo])):
        canvas._local_cache[nd.id] = (nd, box)


#: Whether the importer hands the assembler fields it has checked itself (see :func:`_clean_fields`);
#: False sends every element through the sanitizer (the twin the tests compare it with).
CLEAN_FIELDS = True


def _clean_fields(f: Dict[str, Any], kmax: int, big: float) -> Dict[str, Any]:
    """``f`` as :class:`CleanFields` when the sanitizer would keep each value unchanged (its fast
    paths: short non-empty keys, plain numbers in range, booleans, non-empty text or none), with
    the style normalized as it would be; otherwise ``f`` itself, for the sanitizer.

    ``f`` holds every node field in :data:`~spatialobs.canvas.document.sanitize.NODE_FIELDS`
    order and a ``props`` dict this import built, so it is owned as it is.
    """
    rid, t, parent, index = f["id"], f["type"], f["parent"], f["index"]
    x, y, w, h, rot, op = f["x"], f["y"], f["w"], f["h"], f["rotation"], f["opacity"]
    text, name = f["text"], f["name"]
    if not (type(rid) is str and rid and len(rid) <= kmax and type(t) is str and t and len(t) <= kmax
            and type(parent) is str and parent and len(parent) <= kmax
            and type(index) is str and index and len(index) <= kmax
            and type(x) is float and -big <= x <= big and type(y) is float and -big <= y <= big
            and type(w) is float and 0 <= w <= big and type(h) is float and 0 <= h <= big
            and type(rot) is float and -1e9 <= rot <= 1e9 and type(op) is float and 0 <= op <= 1
            and (text is None or (type(text) is str and text)) and (name is None or (type(name) is str and name))
            and type(f["locked"]) is bool and type(f["hidden"]) is bool and type(f["props"]) is dict
            and type(f["style"]) is dict):
        return f
    out = CleanFields(f)
    out["style"] = sanitize_style(f["style"], record=rid)
    return out


# ---------------------------------------------------------------------- export

@dataclass
class ExcalidrawSource:
    """What an imported Excalidraw scene needs to be written back losslessly.

    ``top`` is every top-level field but ``elements`` (``appState``, ``files``,
    ``source``, unknown keys); ``elements`` the raw element list as given, deleted
    and unreadable entries included; ``origin_*`` the canvas as imported, the
    reference that tells what an edit changed. Built with no arguments (as the
    native form restores it) it holds no elements: every node is then written
    from its fields and props.
    """

    format: str = "excalidraw"
    top: Dict[str, Any] = field(default_factory=dict)
    elements: List[Any] = field(default_factory=list)
    origin_nodes: Dict[str, Node] = field(default_factory=dict)
    origin_bindings: Dict[str, Binding] = field(default_factory=dict)
    origin_cameras: Dict[str, Viewport] = field(default_factory=dict)
    origin_selection: Dict[str, Tuple[str, ...]] = field(default_factory=dict)


_ExcalidrawSource = ExcalidrawSource  # the name the native form restores

#: Element types Excalidraw draws; a node of one of these types keeps it.
ELEMENT_TYPES = frozenset({"rectangle", "ellipse", "diamond", "text", "arrow", "line", "freedraw", "frame",
                           "magicframe", "image", "embeddable", "iframe"})
#: Node types without an Excalidraw element of the same name, and the element written for them.
#: ``geo`` follows its ``geo`` prop (rectangle, ellipse, diamond; others a rectangle); ``image``
#: without a ``fileId`` prop is a rectangle; ``group`` nodes write no element (they become
#: ``groupIds``); any other type is a rectangle.
TYPE_MAP = {"geo": "rectangle", "note": "rectangle", "container": "rectangle", "artboard": "frame",
            "draw": "line", "highlight": "freedraw", "bookmark": "rectangle", "embed": "rectangle",
            "video": "rectangle", "unknown": "rectangle"}
_GEO_KINDS = {"rectangle": "rectangle", "ellipse": "ellipse", "oval": "ellipse", "diamond": "diamond",
              "rhombus": "diamond"}
_FRAMES = frozenset({"frame", "magicframe", "artboard"})
_CONTAINERS = frozenset({"rectangle", "ellipse", "diamond", "arrow"})  # types Excalidraw binds text to
_TWO_PI = 2.0 * math.pi
# Excalidraw's defaults (DEFAULT_ELEMENT_PROPS, Virgil text): new elements, removed style keys.
_STYLE_DEFAULTS: Dict[str, Any] = {"strokeColor": "#1e1e1e", "backgroundColor": "transparent", "fillStyle": "solid",
                                   "strokeWidth": 2, "strokeStyle": "solid", "roughness": 1, "fontSize": 20,
                                   "fontFamily": 1, "textAlign": "left", "verticalAlign": "top"}
# Fields of an element that the exporter computes; props never overwrite them.
_COMPUTED = frozenset({"id", "type", "x", "y", "width", "height", "angle", "opacity", "locked", "isDeleted",
                       "groupIds", "frameId", "strokeColor", "backgroundColor", "fillStyle", "strokeWidth",
                       "strokeStyle", "roughness", "fontSize", "fontFamily", "textAlign", "verticalAlign", "name",
                       "points", "startBinding", "endBinding", "boundElements", "boundElementIds", "index",
                       "text", "originalText", "version", "versionNonce"})
# Excalidraw element fields a new node may take from its props (other props are another format's).
_KNOWN_FIELDS = frozenset({"seed", "roundness", "link", "customData", "updated", "startArrowhead", "endArrowhead",
                           "elbowed", "fixedSegments", "startIsSpecial", "endIsSpecial", "lastCommittedPoint",
                           "pressures", "simulatePressure", "fileId", "status", "scale", "crop", "lineHeight",
                           "autoResize", "containerId", "baseline", "polygon", "version", "versionNonce"})
# tldraw style values, for canvases that did not come from Excalidraw.
_TL_COLORS = {"black": "#1e1e1e", "grey": "#868e96", "white": "#ffffff", "red": "#e03131", "light-red": "#ff8787",
              "green": "#2f9e44", "light-green": "#69db7c", "blue": "#1971c2", "light-blue": "#4dabf7",
              "violet": "#9c36b5", "light-violet": "#da77f2", "orange": "#e8590c", "yellow": "#f08c00"}
_TL_FILLS = {"none": None, "semi": "solid", "solid": "solid", "fill": "solid", "pattern": "hachure",
             "lined-fill": "cross-hatch"}
_TL_DASH = {"draw": "solid", "solid": "solid", "dashed": "dashed", "dotted": "dotted"}
_TL_SIZE = {"s": 1, "m": 2, "l": 4, "xl": 4}
_TL_FONT = {"draw": 1, "sans": 2, "serif": 2, "mono": 3}
_TL_ALIGN = {"start": "left", "middle": "center", "end": "right", "start-legacy": "left",
             "middle-legacy": "center", "end-legacy": "right"}

Tf = Tuple[float, float, float]
_DROP = object()
# while an Excalidraw scene is written back: element types it held that this writer does not know are kept
_KEEP_UNKNOWN: ContextVar[bool] = ContextVar("excalidraw_keep_unknown", default=False)  # a derived field value meaning: remove the field


def _hash31(text: str) -> int:
    """A reproducible positive 31-bit integer (seeds and version nonces)."""
    import hashlib  # only a write needs it: loading OpenSSL's hashes costs a cold load more than this module

    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=4).digest(), "big") & 0x7FFFFFFF or 1


def _group_id(node_id: str) -> str:
    return node_id[len("group:"):] if node_id.startswith("group:") else node_id


def _element_type(node: Node) -> Optional[str]:
    """The Excalidraw element type written for a node (None: no element, a group)."""
    t = node.type
    if t == "group":
        return None
    if t in ELEMENT_TYPES:
        if t == "image" and not isinstance(node.props.get("fileId"), str):
            return "rectangle"
        return t
    if t == "geo":
        kind = node.props.get("geo", node.style.get("geo"))
        return _GEO_KINDS.get(kind, "rectangle") if isinstance(kind, str) else "rectangle"
    if t not in TYPE_MAP and _KEEP_UNKNOWN.get():
        return t  # an element type this writer does not know, read from an Excalidraw scene: kept (copies too)
    return TYPE_MAP.get(t, "rectangle")


class _State:
    """Nodes and bindings of one canvas state, with the lookups export needs."""

    def __init__(self, nodes: Mapping[str, Node], bindings: Mapping[str, Binding]) -> None:
        self.nodes = nodes
        self.tf: Dict[str, Tf] = {}
        self.by_arrow: Dict[str, Dict[str, Binding]] = {}
        self.to_target: Dict[str, Dict[str, None]] = {}
        for b in sorted(bindings.values(), key=lambda b: b.id):
            self.by_arrow.setdefault(b.from_id, {}).setdefault(b.terminal, b)
            self.to_target.setdefault(b.to_id, {})[b.from_id] = None
        self.pairs = {(b.from_id, b.to_id) for b in bindings.values()}

    def page_tf(self, nid: str) -> Tf:
        """Page position of a node's local origin and its page rotation."""
        if nid in self.tf:
            return self.tf[nid]
        chain: List[str] = []
        p: Optional[str] = nid
        while p is not None and p in self.nodes and p not in self.tf and p not in chain:
            chain.append(p)
            p = self.nodes[p].parent
        px, py, pa = self.tf.get(p, (0.0, 0.0, 0.0)) if p is not None else (0.0, 0.0, 0.0)
        for k in reversed(chain):
            n = self.nodes[k]
            c, s = math.cos(pa), math.sin(pa)
            px, py, pa = px + c * n.x - s * n.y, py + s * n.x + c * n.y, pa + n.rotation
            self.tf[k] = (px, py, pa)
        return self.tf[nid]

    def containers(self, nid: str) -> Tuple[List[str], Optional[str]]:
        """``groupIds`` (innermost first) and ``frameId`` of a node's element."""
        gids: List[str] = []
        p = self.nodes[nid].parent
        seen = 0
        while p in self.nodes and seen <= len(self.nodes):
            pn = self.nodes[p]
            if pn.type in _FRAMES:
                return gids, p
            if pn.type == "group":
                gids.append(_group_id(p))
            p = pn.parent
            seen += 1
        return gids, None


def _linear_points(node: Node, ends: Optional[Tuple[Tuple[float, float], Tuple[float, float]]] = None
                   ) -> List[List[float]]:
    pts = node.props.get("points")
    out: List[List[float]] = []
    if isinstance(pts, list):
        for p in pts:
            try:
                x, y = (float(p["x"]), float(p["y"])) if is_mapping(p) else (float(p[0]), float(p[1]))
            except (KeyError, IndexError, TypeError, ValueError):
                continue
            if math.isfinite(x) and math.isfinite(y):
                out.append([x, y])
    if out:
        return out
    s, e, bend = arrow_terminals(node.props)
    if ends is not None:  # the ends the canvas resolved from the arrow's bindings
        s, e = ends
    if s is not None or e is not None:
        s = s or e
        e = e or s
        mid = []
        dx, dy = e[0] - s[0], e[1] - s[1]  # type: ignore[index]
        length = math.hypot(dx, dy)
        if length > 1e-9 and abs(bend) >= 8.0:  # tldraw's bent arrow: one more point on the arc
            mid = [[(s[0] + e[0]) / 2 - dy / length * bend, (s[1] + e[1]) / 2 + dx / length * bend]]  # type: ignore[index]
        return [[s[0], s[1]], *mid, [e[0], e[1]]]  # type: ignore[index]
    x0, y0, x1, y1 = local_box(node.type, node.props, node.w, node.h)
    return [[x0, y0], [x1, y1]]


def _geometry(node: Node, etype: str, tf: Tf,
              ends: Optional[Tuple[Tuple[float, float], Tuple[float, float]]] = None) -> Dict[str, Any]:
    """``x, y, width, height, angle`` (and ``points``) of the element for a node at page transform ``tf``."""
    ox, oy, a = tf
    out: Dict[str, Any] = {}
    if etype in LINEAR_TYPES:
        pts = _linear_points(node, ends)
        x0, y0 = min(p[0] for p in pts), min(p[1] for p in pts)
        x1, y1 = max(p[0] for p in pts), max(p[1] for p in pts)
        out["points"] = pts
    else:
        x0, y0, x1, y1 = 0.0, 0.0, node.w, node.h
    mx, my = (x0 + x1) / 2, (y0 + y1) / 2
    c, s = math.cos(a), math.sin(a)
    # Excalidraw rotates about the box center; (x, y) is where the local origin sits unrotated
    cx, cy = ox + c * mx - s * my, oy + s * mx + c * my
    out.update({"x": cx - mx, "y": cy - my, "width": x1 - x0, "height": y1 - y0, "angle": _wrap(a)})
    pts0 = out.get("points")
    if pts0 and (pts0[0][0] or pts0[0][1]):
        # Excalidraw's points start at (0, 0) (restore moves them there); the rotation centre stays put
        px, py = pts0[0]
        out["points"] = [[p[0] - px, p[1] - py] for p in pts0]
        out["x"] += px
        out["y"] += py
    return out


def _wrap(a: float) -> float:
    """An angle in ``[0, 2π)``, as Excalidraw keeps it."""
    a = a % _TWO_PI
    return 0.0 if a >= _TWO_PI else a


def _style_fields(node: Node) -> Dict[str, Any]:
    st = node.style
    out: Dict[str, Any] = {}
    stroke = st.get("strokeColor", st.get("color", st.get("borderColor")))
    if isinstance(stroke, str):
        out["strokeColor"] = _TL_COLORS.get(stroke, stroke)
    bg = st.get("backgroundColor", st.get("fill"))
    if isinstance(bg, str) and bg in _TL_FILLS and "backgroundColor" not in st:
        kind = _TL_FILLS[bg]
        out["backgroundColor"] = "transparent" if kind is None else (
            "#e9ecef" if bg == "semi" else out.get("strokeColor", _STYLE_DEFAULTS["strokeColor"]))
        if kind is not None and "fillStyle" not in st:
            out["fillStyle"] = kind
    else:
        out["backgroundColor"] = bg if isinstance(bg, str) else "transparent"
    for k in ("fillStyle", "strokeWidth", "strokeStyle", "roughness", "fontSize", "fontFamily", "textAlign",
              "verticalAlign"):
        if k in st:
            out[k] = st[k]
    if "strokeStyle" not in out and isinstance(st.get("dash"), str) and st["dash"] in _TL_DASH:
        out["strokeStyle"] = _TL_DASH[st["dash"]]
    if "strokeWidth" not in out and isinstance(st.get("size"), str) and st["size"] in _TL_SIZE:
        out["strokeWidth"] = _TL_SIZE[st["size"]]
    if "fontFamily" not in out and isinstance(st.get("font"), str) and st["font"] in _TL_FONT:
        out["fontFamily"] = _TL_FONT[st["font"]]
    align = st.get("textAlign", st.get("align"))
    if "textAlign" not in out and align in _TL_ALIGN:
        out["textAlign"] = _TL_ALIGN[align]
    return out


def _opacity(op: float) -> Any:
    v = round(op * 100.0, 9)
    return int(v) if v == int(v) else v


def _binding_field(b: Optional[Binding]) -> Optional[Dict[str, Any]]:
    if b is None:
        return None
    d: Dict[str, Any] = dict(b.props)
    d["elementId"] = b.to_id
    if b.precise:
        d["fixedPoint"] = [b.anchor[0], b.anchor[1]]
    if "mode" not in d:
        d.setdefault("focus", 0.0)
        d.setdefault("gap", 1.0)
    return d


def _bound_list(node: Node, st: _State, origin: _State, text_id: Optional[str], key: str) -> Optional[List[Any]]:
    """``boundElements`` (or the old ``boundElementIds``) of a node's element in state ``st``.

    Entries the source listed stay unless they are an arrow whose binding to this
    element existed in the source and is gone, or a text the element no longer has;
    arrows bound now and the bound text are added.
    """
    base = node.props.get(key)
    old_style = key == "boundElementIds"
    out: List[Any] = []
    listed: set = set()
    for entry in base if isinstance(base, list) else []:
        eid = entry if old_style else (entry.get("id") if is_mapping(entry) else None)
        etype = "arrow" if old_style else (entry.get("type") if is_mapping(entry) else None)
        if isinstance(eid, str):
            if etype == "text" and (text_id is None or eid != text_id):
                continue
            if etype != "text" and (eid, node.id) in origin.pairs and (eid, node.id) not in st.pairs:
                continue
            listed.add(eid)
        out.append(entry)
    for arrow in st.to_target.get(node.id, {}):
        if arrow not in listed:
            out.append(arrow if old_style else {"id": arrow, "type": "arrow"})
    if text_id is not None and text_id not in listed and not old_style:
        out.append({"id": text_id, "type": "text"})
    if not out and not isinstance(base, list):
        return base
    return out


def _num(v: Any, default: float = 0.0) -> float:
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    return default


def _text_fields(el: Mapping[str, Any]) -> Tuple[float, int, float]:
    """``fontSize``, ``fontFamily`` and ``lineHeight`` of a text element (Excalidraw's defaults where unusable)."""
    f = label_fields({}, el)
    return f["fontSize"], f["fontFamily"], f["lineHeight"]


class _Exporter:
    def __init__(self, canvas: Canvas, page: str, updated: Optional[int]) -> None:
        src = canvas._source if isinstance(canvas._source, ExcalidrawSource) else None
        self.canvas = canvas
        self.page = page
        self.src = src
        self.raw: List[Any] = list(src.elements) if src is not None else []
        self.cur = _State(canvas._nodes, canvas._bindings)
        self.org = _State(src.origin_nodes if src else {}, src.origin_bindings if src else {})
        self.raw_by_id: Dict[str, Mapping[str, Any]] = {}
        for e in self.raw:
            if is_mapping(e) and isinstance(e.get("id"), str) and e["id"] not in self.raw_by_id and not e.get("isDeleted"):
                self.raw_by_id[e["id"]] = e
        # live bound text elements of each container, in array order
        self.texts: Dict[str, List[str]] = {}
        for eid, e in self.raw_by_id.items():
            cid = e.get("containerId")
            if e.get("type") == "text" and isinstance(cid, str) and cid in self.raw_by_id and eid not in self.org.nodes:
                self.texts.setdefault(cid, []).append(eid)
        self.used_ids = {e["id"] for e in self.raw if is_mapping(e) and isinstance(e.get("id"), str)}
        self.used_ids.update(canvas._nodes)
        stamps: List[int] = [e["updated"] for e in self.raw_by_id.values() if isinstance(e.get("updated"), int)
                             and not isinstance(e.get("updated"), bool)]
        self.updated = updated
        self.new_stamp = updated if updated is not None else (max(stamps) if stamps else 1)
        self.changed: set = set()
        self.new_text_id: Dict[str, str] = {}
        self._pos: Optional[Dict[str, int]] = None
        self._raw_objs = {id(e) for e in self.raw}  # source objects are never modified in place
        self._src_ids = {e["id"] for e in self.raw if is_mapping(e) and isinstance(e.get("id"), str)}
        self._ends: Dict[str, Tuple[Tuple[float, float], Tuple[float, float]]] = {}

    # ---------------------------------------------------------------- per element
    def text_id(self, nid: str, st: _State) -> Optional[str]:
        """Id of the bound text element of container ``nid`` in state ``st`` (None: no bound text)."""
        node = st.nodes.get(nid)
        if node is None or node.text is None:
            return None
        if self.texts.get(nid):
            return self.texts[nid][0]
        if st is self.org or _element_type(node) not in _CONTAINERS:
            return None
        if nid not in self.new_text_id:
            cand = None
            be = node.props.get("boundElements")
            for entry in be if isinstance(be, list) else []:
                if is_mapping(entry) and entry.get("type") == "text" and isinstance(entry.get("id"), str):
                    cand = entry["id"]
            if cand is None or cand in self.used_ids:
                cand = self._fresh_id(f"{nid}-label")
            self.used_ids.add(cand)
            self.new_text_id[nid] = cand
        return self.new_text_id[nid]

    def _resolved_ends(self, node: Node, st: _State) -> Optional[Tuple[Tuple[float, float], Tuple[float, float]]]:
        """Local ends of an arrow kept as tldraw keeps it (``start``/``end``, not a point list), as the
        canvas resolves them from its bindings: where it says the arrow is (None for other nodes)."""
        if st is not self.cur or node.type != "arrow" or isinstance(node.props.get("points"), list):
            return None
        if node.id not in st.by_arrow:  # no binding from it
            return None
        # once per arrow and export (its element and its label both ask), without sampling its arc
        got = self._ends.get(node.id)
        if got is None:
            s, e = arrow_ends(self.canvas, node.id)
            got = self._ends[node.id] = (float(s[0]), float(s[1])), (float(e[0]), float(e[1]))
        return got

    def derived(self, node: Node, st: _State) -> Dict[str, Any]:
        """Every element field computed from canvas state ``st`` for ``node``."""
        etype = _element_type(node)
        assert etype is not None
        d: Dict[str, Any] = {"type": etype}
        d.update(_geometry(node, etype, st.page_tf(node.id), self._resolved_ends(node, st)))
        d.update(_style_fields(node))
        d["opacity"] = _opacity(node.opacity)
        d["locked"] = node.locked
        gids, frame = st.containers(node.id)
        d["groupIds"] = gids
        d["frameId"] = frame
        if etype in _FRAMES:
            d["name"] = node.name
        if etype == "text":
            d["text"] = d["originalText"] = node.text or ""
            if node.props.get("autoResize") is False and node.text:
                # Excalidraw stores a fixed-width text's lines as wrapped at its width
                fs, fam, _ = _text_fields({**node.style, **node.props})
                d["text"] = wrap_text(node.text, fam, fs, node.w)
        if etype in ("arrow", "line"):
            terms = {t: b for t, b in st.by_arrow.get(node.id, {}).items()  # a group has no element to bind to
                     if b.to_id in st.nodes and _element_type(st.nodes[b.to_id]) is not None}
            d["startBinding"] = _binding_field(terms.get("start"))
            d["endBinding"] = _binding_field(terms.get("end"))
        tid = self.text_id(node.id, st)
        if "boundElementIds" in node.props and "boundElements" not in node.props:
            if tid is None:
                d["boundElementIds"] = _bound_list(node, st, self.org, None, "boundElementIds")
            else:  # the old form has no bound text: move to boundElements (Excalidraw reads the old one first)
                ids = _bound_list(node, st, self.org, None, "boundElementIds") or []
                d["boundElements"] = [{"id": i, "type": "arrow"} for i in ids if isinstance(i, str)] + [
                    {"id": tid, "type": "text"}]
                d["boundElementIds"] = _DROP
        else:
            d["boundElements"] = _bound_list(node, st, self.org, tid, "boundElements")
        return d

    def element(self, nid: str) -> Mapping[str, Any]:
        node = self.canvas._nodes[nid]
        orig = self.org.nodes.get(nid)
        raw = self.raw_by_id.get(nid)
        cur = self.derived(node, self.cur)
        if orig is not None and raw is not None and _element_type(orig) is not None:
            old = self.derived(orig, self.org)
            patch = {k: v for k, v in cur.items() if k not in old or old[k] != v}
            for k in old:
                if k not in cur and k in _STYLE_DEFAULTS:
                    patch[k] = _STYLE_DEFAULTS[k]
            props_changed = node.props != orig.props
            if not patch and not props_changed:
                return raw
            el = dict(raw)
            if props_changed:
                for k, v in node.props.items():
                    if k not in _COMPUTED and orig.props.get(k, el.get(k)) != v:
                        el[k] = copy.deepcopy(v)
                for k in orig.props:
                    if k not in node.props and k not in _COMPUTED:
                        el.pop(k, None)
            if any(k in patch for k in ("x", "y", "width", "height", "angle", "points")):
                patch.update({k: cur[k] for k in ("x", "y", "width", "height", "angle", "points") if k in cur})
            if "type" in patch:
                self._complete(el, cur["type"], node)
            for k in [k for k, v in patch.items() if v is _DROP]:
                el.pop(k, None)
                del patch[k]
            el.update(copy.deepcopy(patch))
            self.changed.add(nid)
            return el
        # a new node (or one whose source element is gone): a complete element
        el = {"id": nid}
        self._complete(el, cur["type"], node)
        for k, v in node.props.items():
            if k in _KNOWN_FIELDS:
                el[k] = copy.deepcopy(v)
        el.update(copy.deepcopy({k: v for k, v in cur.items() if v is not _DROP}))
        if cur["type"] == "text" and (self.src is not None or el["width"] == el["height"] == 0):
            # sized as Excalidraw sizes new text (in an Excalidraw document the write path already did;
            # a text from another editor keeps the size it was measured at there, unless it has none)
            self._measure_new_text(el, node)
        if node.type == "note" and el["backgroundColor"] == "transparent":
            el["backgroundColor"] = "#ffec99"  # a sticky note: Excalidraw's light yellow
        el.setdefault("boundElements", None)
        if not isinstance(el.get("version"), int) or isinstance(el.get("version"), bool):
            el["version"] = 1
        if not isinstance(el.get("versionNonce"), int):
            el["versionNonce"] = _hash31(f"{nid}:{el['version']}")
        if not isinstance(el.get("seed"), int):
            el["seed"] = _hash31(f"seed:{nid}")
        if self.updated is not None or not isinstance(el.get("updated"), int):
            el["updated"] = self.new_stamp
        return el

    def _measure_new_text(self, el: Dict[str, Any], node: Node) -> None:
        """Size a new text element as Excalidraw measures it, keeping its ``textAlign`` side in place."""
        if not node.text:
            return
        fs, fam, lh = _text_fields(el)
        auto = el.get("autoResize") is not False
        shown, w, h = text_element_size(node.text, fam, fs, lh, auto, _num(el.get("width")))
        el["text"] = shown
        a = _num(el.get("angle"))
        align = el.get("textAlign")
        # the node's box (x, y, width, height about its centre) becomes the measured one
        fx = 0.0 if align == "left" or align not in ("center", "right") else 0.5 if align == "center" else 1.0
        ow, oh = _num(el.get("width")), _num(el.get("height"))
        c, s = math.cos(a), math.sin(a)
        # the anchor (left, centre or right of the top edge) in page units, kept where it was
        ax, ay = (fx - 0.5) * ow, -0.5 * oh
        cx, cy = _num(el.get("x")) + ow / 2, _num(el.get("y")) + oh / 2
        px, py = cx + c * ax - s * ay, cy + s * ax + c * ay
        bx, by = (fx - 0.5) * w, -0.5 * h
        ncx, ncy = px - (c * bx - s * by), py - (s * bx + c * by)
        el.update({"x": ncx - w / 2, "y": ncy - h / 2, "width": w, "height": h})

    def _complete(self, el: Dict[str, Any], etype: str, node: Node) -> None:
        """Fill in the fields Excalidraw requires for an element of type ``etype``."""
        for k, v in (("angle", 0), ("strokeColor", _STYLE_DEFAULTS["strokeColor"]), ("backgroundColor", "transparent"),
                     ("fillStyle", "solid"), ("strokeWidth", 2), ("strokeStyle", "solid"), ("roughness", 1),
                     ("opacity", 100), ("groupIds", []), ("frameId", None), ("roundness", None),
                     ("seed", _hash31(f"seed:{node.id}")), ("version", 1), ("versionNonce", 0), ("isDeleted", False),
                     ("boundElements", None), ("updated", self.new_stamp), ("link", None), ("locked", False)):
            el.setdefault(k, v)
        if etype in ("rectangle", "diamond", "ellipse") and el.get("roundness") is None and node.type in ("geo", "note"):
            el["roundness"] = {"type": 3}
        if etype == "text":
            for k, v in (("fontSize", 20), ("fontFamily", 1), ("text", ""), ("textAlign", "left"),
                         ("verticalAlign", "top"), ("containerId", None), ("originalText", ""), ("autoResize", True)):
                el.setdefault(k, v)
            el.setdefault("lineHeight", default_line_height(el.get("fontFamily")))
        if etype in ("arrow", "line"):
            for k, v in (("points", [[0, 0], [node.w, node.h]]), ("lastCommittedPoint", None), ("startBinding", None),
                         ("endBinding", None), ("startArrowhead", None),
                         ("endArrowhead", "arrow" if etype == "arrow" else None)):
                el.setdefault(k, v)
            if etype == "arrow":
                el.setdefault("elbowed", False)
                pts = node.props.get("points")
                # round is Excalidraw's default, but a node's own corner points stay corners (its bounds assume so)
                if el.get("roundness") is None and not (isinstance(pts, list) and len(pts) > 2):
                    el["roundness"] = {"type": 2}
            else:
                el.setdefault("polygon", False)
        if etype == "freedraw":
            el.setdefault("points", [[0, 0], [node.w, node.h]])
            el.setdefault("pressures", [])
            el.setdefault("simulatePressure", True)
            el.setdefault("lastCommittedPoint", None)
        if etype == "image":
            el.setdefault("status", "saved")
            el.setdefault("scale", [1, 1])
            el.setdefault("crop", None)
        if etype in _FRAMES:
            el.setdefault("name", None)

    # ---------------------------------------------------------------- bound text
    def _box(self, node: Node, st: _State) -> Tuple[float, float, float, float, float]:
        g = _geometry(node, _element_type(node) or "rectangle", st.page_tf(node.id))
        return (g["x"] + g["width"] / 2, g["y"] + g["height"] / 2, g["width"], g["height"], g["angle"])

    def bound_text(self, cid: str, tid: str, first: bool) -> Optional[Mapping[str, Any]]:
        """The bound text element ``tid`` of container ``cid`` (a tombstone when the text is gone).

        The first bound text carries the container's whole text; a second one (which
        Excalidraw never makes) stays while nothing about its container changed.
        """
        raw = self.raw_by_id.get(tid)
        node = self.canvas._nodes.get(cid)
        orig = self.org.nodes.get(cid)
        if node is None or self.text_id(cid, self.cur) is None:
            return self.tombstone(raw) if raw is not None else None
        box = self._box(node, self.cur)
        if raw is not None and orig is not None:
            obox = self._box(orig, self.org)
            cd, od = self.derived(node, self.cur), self.derived(orig, self.org)
            same = (box == obox and node.text == orig.text and cd["groupIds"] == od["groupIds"]
                    and cd["frameId"] == od["frameId"] and node.style.get("labelColor") == orig.style.get("labelColor"))
            if same:
                return raw
            if not first:
                return self.tombstone(raw)
            el = dict(raw)
            keep_place = node.text == orig.text and box[2:4] == obox[2:4]
        else:
            cd = self.derived(node, self.cur)
            el = {"id": tid, "type": "text"}
            self._complete(el, "text", Node(tid, "text", cid))
            el.update({"seed": _hash31(f"seed:{tid}"), "containerId": cid, "textAlign": "center",
                       "verticalAlign": "middle"})
            for k in ("fontSize", "fontFamily", "textAlign", "verticalAlign", "strokeColor"):
                if k in cd and k in node.style or (k == "strokeColor" and k in cd):
                    el[k] = cd[k]
            keep_place = False
        if isinstance(node.style.get("labelColor"), str):
            el["strokeColor"] = _TL_COLORS.get(node.style["labelColor"], node.style["labelColor"])
        text = node.text or ""
        el["text"] = el["originalText"] = text
        cx, cy, cw, ch, ca = box
        if keep_place:
            # same text in a box of the same size: the label keeps its place in the container
            assert raw is not None and orig is not None
            ocx, ocy, _, _, oa = self._box(orig, self.org)
            tw, th = _num(raw.get("width")), _num(raw.get("height"))
            dx, dy = _num(raw.get("x")) + tw / 2 - ocx, _num(raw.get("y")) + th / 2 - ocy
            c, s = math.cos(-oa), math.sin(-oa)
            lx, ly = c * dx - s * dy, s * dx + c * dy
        else:
            # wrapped, measured and placed as Excalidraw lays out a container's text; the container
            # keeps the canvas's size (the write path grew it when the text changed there)
            fs, fam, lh = _text_fields(el)
            ctype = _element_type(node) or "rectangle"
            lay = bound_text_layout(text, ctype if ctype in _CONTAINERS else "rectangle", cw, ch, fam, fs, lh,
                                    el.get("textAlign"), el.get("verticalAlign"))
            el["text"] = lay["text"]
            tw, th = lay["width"], lay["height"]
            lx, ly = -cw / 2 + lay["dx"] + tw / 2, -ch / 2 + lay["dy"] + th / 2
        c, s = math.cos(ca), math.sin(ca)
        tcx, tcy = cx + c * lx - s * ly, cy + s * lx + c * ly
        el.update({"x": tcx - tw / 2, "y": tcy - th / 2, "width": tw, "height": th, "angle": ca,
                   "groupIds": list(cd["groupIds"]), "frameId": cd["frameId"], "isDeleted": False})
        self.changed.add(tid)
        return el

    def loose_label(self, node: Node) -> Dict[str, Any]:
        """A free text element at a node's center, for text Excalidraw cannot bind to it."""
        tid = self._fresh_id(f"{node.id}-label")
        el: Dict[str, Any] = {"id": tid, "type": "text"}
        self._complete(el, "text", Node(tid, "text", node.parent))
        cx, cy, _, _, ca = self._box(node, self.cur)
        tw, th = measure_text(node.text or "", 1, 20.0, default_line_height(1))
        gids, frame = self.cur.containers(node.id)
        el.update({"seed": _hash31(f"seed:{tid}"), "text": node.text, "originalText": node.text, "x": cx - tw / 2,
                   "y": cy - th / 2, "width": tw, "height": th, "angle": ca, "groupIds": gids, "frameId": frame,
                   "textAlign": "center"})
        return el

    def _fresh_id(self, base: str) -> str:
        cand, k = base, 1
        while cand in self.used_ids:
            k += 1
            cand = f"{base}{k}"
        self.used_ids.add(cand)
        return cand

    def tombstone(self, raw: Mapping[str, Any]) -> Dict[str, Any]:
        """A removed element as Excalidraw keeps it: ``isDeleted`` with a new version."""
        el = dict(raw)
        el["isDeleted"] = True
        self.changed.add(el["id"])
        return el

    # ---------------------------------------------------------------- document
    def run(self) -> List[Any]:
        nodes = self.canvas._nodes
        paint = [i for i in self.canvas.paint_order(self.page) if _element_type(nodes[i]) is not None]
        built: Dict[str, List[Mapping[str, Any]]] = {}  # node id -> its element, then its texts
        for nid in paint:
            els = [self.element(nid)]
            tids = list(self.texts.get(nid, []))
            new_tid = self.text_id(nid, self.cur)
            if new_tid is not None and new_tid not in tids:
                tids.append(new_tid)
            for k, tid in enumerate(tids):
                t = self.bound_text(nid, tid, k == 0)
                if t is not None:
                    els.append(t)
            node = nodes[nid]
            if node.text and new_tid is None and _element_type(node) != "text":
                els.append(self.loose_label(node))
            built[nid] = els
        placed = {e["id"] for els in built.values() for e in els}
        # the source's other entries: live elements of removed nodes become tombstones, the rest stay verbatim
        leftovers: Dict[int, Any] = {}
        for k, e in enumerate(self.raw):
            # ids that are not strings (even unhashable ones) were ignored on import
            live = is_mapping(e) and isinstance(e.get("id"), str) and self.raw_by_id.get(e["id"]) is e
            if not (live and e["id"] in placed):
                leftovers[k] = self.tombstone(e) if live else e
        kept = [i for i in paint if i in self.org.nodes and i in self.raw_by_id]
        orig_paint = [i for i in self._origin_paint() if i in nodes and i in self.raw_by_id]
        out: List[Any] = []
        if self.raw and kept == orig_paint:
            # no source element moved in the paint order: the source's order, each new element
            # right after the element that precedes it in the canvas paint order
            after: Dict[Optional[str], List[Mapping[str, Any]]] = {}
            prev: Optional[str] = None
            by_id: Dict[str, Mapping[str, Any]] = {}
            for nid in paint:
                els = built[nid]
                mine = [e for e in els if e["id"] in self.raw_by_id]
                new = [e for e in els if e["id"] not in self.raw_by_id]
                if mine:
                    by_id.update((e["id"], e) for e in mine)
                    anchor = max((e["id"] for e in mine), key=self._raw_pos)
                    after.setdefault(anchor, []).extend(new)
                    prev = new[-1]["id"] if new else anchor
                else:
                    after.setdefault(prev, []).extend(new)
                    prev = new[-1]["id"]

            def emit(e: Any) -> None:
                # each element, then what follows it, depth first: new elements follow one
                # another in chains as long as a reply (a loop, not recursion, walks them)
                stack = [e]
                while stack:
                    x = stack.pop()
                    out.append(x)
                    if is_mapping(x) and isinstance(x.get("id"), str):
                        stack.extend(reversed(after.pop(x["id"], [])))

            for f in after.pop(None, []):
                emit(f)
            for k, e in enumerate(self.raw):
                emit(leftovers[k] if k in leftovers else by_id[e["id"]])
        else:
            body = [e for nid in paint for e in built[nid]]
            pos = {e["id"]: j for j, e in enumerate(body)}
            slots: Dict[int, List[Any]] = {}
            anchor_slot = -1
            for k, e in enumerate(self.raw):
                if k in leftovers:
                    slots.setdefault(anchor_slot, []).append(leftovers[k])
                else:
                    anchor_slot = pos[e["id"]]
            out.extend(slots.get(-1, []))
            for j, e in enumerate(body):
                out.append(e)
                out.extend(slots.get(j, []))
        self._reindex(out)
        for e in out:
            # a dict built above, not a source object (whose id may not even be hashable)
            if isinstance(e, dict) and id(e) not in self._raw_objs and e.get("id") in self.changed and e["id"] in self._src_ids:
                v = e.get("version")
                e["version"] = (v if isinstance(v, int) and not isinstance(v, bool) else 1) + 1  # Excalidraw reads none as 1
                e["versionNonce"] = _hash31(f"{e['id']}:{e['version']}")
                if self.updated is not None:
                    e["updated"] = self.updated
        return out

    def _raw_pos(self, eid: str) -> int:
        if self._pos is None:
            self._pos = {e["id"]: k for k, e in enumerate(self.raw)
                         if is_mapping(e) and isinstance(e.get("id"), str) and self.raw_by_id.get(e["id"]) is e}
        return self._pos.get(eid, -1)

    def _origin_paint(self) -> List[str]:
        """Paint order of the imported canvas (nodes that write elements), by the canvas's rule."""
        kids: Dict[str, List[Node]] = {}
        for n in self.org.nodes.values():
            kids.setdefault(n.parent, []).append(n)
        out: List[str] = []
        stack = sorted(kids.get(self.page, []), key=lambda n: (n.index, n.id), reverse=True)
        while stack:
            n = stack.pop()
            if _element_type(n) is not None:
                out.append(n.id)
            stack.extend(sorted(kids.get(n.id, []), key=lambda m: (m.index, m.id), reverse=True))
        return out

    def _reindex(self, out: List[Any]) -> None:
        """Keep Excalidraw's fractional ``index`` keys ascending along the array.

        When the source's keys ascend, a longest ascending run of the output's keys
        stays and every other element gets a key between its neighbours; else only
        elements without a key get one. A source that never used keys gets none; a
        new scene gets ``a0, a1, ...``.
        """
        rows = [j for j, e in enumerate(out) if is_mapping(e)]
        if not self.raw:
            for j, k in zip(rows, key_sequence(len(rows))):
                out[j]["index"] = k
            return
        src_keys = [e["index"] for e in self.raw if is_mapping(e) and isinstance(e.get("index"), str)]
        if not src_keys:
            return
        ascending = all(a < b for a, b in zip(src_keys, src_keys[1:])) and all(map(is_valid_key, src_keys))
        keys = [out[j].get("index") if isinstance(out[j].get("index"), str) else None for j in rows]
        keep = _ascending_run(keys) if ascending else [k is not None for k in keys]
        i = 0
        while i < len(rows):
            if keep[i]:
                i += 1
                continue
            end = i
            while end < len(rows) and not keep[end]:
                end += 1
            lo = next((keys[t] for t in range(i - 1, -1, -1) if keep[t]), None)
            hi = keys[end] if end < len(rows) else None
            for t in range(i, end):
                try:
                    k = key_between(lo, hi)
                except ValueError:  # the source's own keys are out of order here
                    k = key_after(lo)
                e = out[rows[t]]
                if e.get("index") != k:
                    if id(e) in self._raw_objs:
                        e = out[rows[t]] = dict(e)
                    e["index"] = k
                    if isinstance(e.get("id"), str):
                        self.changed.add(e["id"])
                lo = k
            i = end


def _ascending_run(keys: Sequence[Optional[str]]) -> List[bool]:
    """Which keys to keep: a longest strictly ascending subsequence of the non-None ones."""
    tails: List[str] = []
    tail_at: List[int] = []
    back: List[int] = [-1] * len(keys)
    for i, k in enumerate(keys):
        if k is None:
            continue
        p = bisect_left(tails, k)
        back[i] = tail_at[p - 1] if p else -1
        if p == len(tails):
            tails.append(k)
            tail_at.append(i)
        else:
            tails[p] = k
            tail_at[p] = i
    keep = [False] * len(keys)
    i = tail_at[-1] if tail_at else -1
    while i >= 0:
        keep[i] = True
        i = back[i]
    return keep


@typed_errors("to_excalidraw")
def to_excalidraw(canvas: Canvas, *, page: Optional[str] = None, updated: Optional[int] = None) -> Dict[str, Any]:
    """Write a canvas as an Excalidraw scene.

    For a canvas loaded from Excalidraw the output keeps every top-level field
    (``appState``, ``files``, ``source``, unknown keys) and every element whose node
    and derived state did not change as the input's element object; elements the
    input had deleted, and entries the importer could not read, stay where they
    were. A changed element keeps its unknown fields and gets the changed fields
    only: ``x``/``y`` of the unrotated box with ``angle`` about its center (the
    canvas rotates about the local origin), ``width``/``height`` (points for arrows
    and lines), style (``color`` → ``strokeColor``, ``fill`` → ``backgroundColor``,
    ``fillStyle``, ``strokeWidth``, ...), ``opacity`` 0–100, ``groupIds`` from its
    group ancestors (innermost first, ``group:<id>`` → ``<id>``), ``frameId`` from
    its nearest frame ancestor, ``startBinding``/``endBinding`` from bindings and
    ``boundElements`` from the arrows bound to it and its bound text; then
    ``version`` + 1 and a ``versionNonce`` derived from id and version (the output
    is reproducible). A container's text goes into its bound text element (``text``
    and ``originalText``; size estimated when the text changes, as Excalidraw would
    re-measure it). A removed node is written as Excalidraw deletes: the element
    with ``isDeleted: true`` (its bound text too). New nodes become complete
    elements (see :data:`TYPE_MAP` for types Excalidraw lacks); a node that cannot
    hold bound text (a line, an image, a frame's label) gets a free text element.
    The array follows the canvas paint order (when no original element moved in
    it, the input's order with new elements inserted); fractional ``index`` keys
    stay ascending. Any other canvas is written as a new scene.

    Parameters
    ----------
    canvas : Canvas
    page : str, optional
        The page to write; default the only page (an Excalidraw scene has one).
    updated : int, optional
        Timestamp (ms) for the ``updated`` field of changed and new elements;
        default: changed elements keep theirs, new ones take the scene's latest.

    Returns
    -------
    dict
        ``{"type": "excalidraw", "version": 2, "source", "elements", "appState", "files"}``.

    Raises
    ------
    InvalidInputError
        A canvas with several pages and no ``page``, or an unknown ``page``.

    Examples
    --------
    >>> c = Canvas()
    >>> _ = c.add(Node("a", "geo", "page:page", "a1", 0, 0, 10, 20, rotation=math.pi / 2))
    >>> el = to_excalidraw(c)["elements"][0]
    >>> el["type"], [round(el[k], 9) for k in ("x", "y", "width", "height", "angle")]
    ('rectangle', [-15.0, -5.0, 10.0, 20.0, 1.570796327])
    >>> [round(v, 9) for v in from_excalidraw(to_excalidraw(c)).page_bounds("a")] == [
    ...     round(v, 9) for v in c.page_bounds("a")]
    True
    """
    if not isinstance(canvas, Canvas):
        raise InvalidInputError(f"to_excalidraw() takes a Canvas, got {type(canvas).__name__}")
    pages = canvas.page_ids()
    if page is None:
        if len(pages) != 1:
            raise InvalidInputError(f"an Excalidraw scene holds one page and the canvas has {len(pages)} "
                                    f"({', '.join(map(repr, pages)) or 'none'}); pass page=")
        page = pages[0]
    elif page not in canvas._pages:
        raise InvalidInputError(f"no page with id {page!r} (pages: {', '.join(map(repr, pages)) or 'none'})")
    if updated is not None and (isinstance(updated, bool) or not isinstance(updated, int)):
        raise InvalidInputError(f"updated must be an integer timestamp in ms, got {updated!r}")
    keep = _KEEP_UNKNOWN.set(isinstance(canvas._source, ExcalidrawSource))
    try:
        ex = _Exporter(canvas, page, updated)
        elements = ex.run()
    finally:
        _KEEP_UNKNOWN.reset(keep)
    src = ex.src
    if src is not None and src.top:
        doc: Dict[str, Any] = dict(src.top)
    else:
        doc = {"type": "excalidraw", "version": 2, "source": "spatialobs",
               "appState": {"gridSize": None, "viewBackgroundColor": "#ffffff"}, "files": {}}
    doc["elements"] = elements
    app = doc.get("appState") if is_mapping(doc.get("appState")) else None
    vp = canvas.cameras.get(page)
    if vp is not None and (src is None or vp != src.origin_cameras.get(page)):
        app = dict(app or {})
        w = float(app.get("width", 1280) or 1280) if isinstance(app.get("width"), (int, float)) else 1280.0
        z = w / vp.w if vp.w > 0 else 1.0
        app.update({"scrollX": -vp.x, "scrollY": -vp.y,
                    "zoom": {"value": z} if is_mapping(app.get("zoom")) or "zoom" not in app else z})
    sel = canvas.selection.get(page, ())
    if sel != (src.origin_selection.get(page, ()) if src is not None else ()):
        app = dict(app or {})
        app["selectedElementIds"] = {s: True for s in sel if s in canvas._nodes}
    if app is not None:
        doc["appState"] = app
    return doc
