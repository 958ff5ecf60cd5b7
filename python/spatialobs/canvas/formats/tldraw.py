"""tldraw import (``.tldr`` files and store snapshots, tldraw 2.x to 5.x) and export.

Import keeps the raw records, so :func:`to_tldraw` writes every record that was not
changed back byte-for-byte equal (unknown fields, ``meta``, props) and rebuilds only
changed and new ones. Both schema forms are read (``storeVersion`` /
``recordVersions`` and ``sequences``), text as ``text`` or ``richText``, and arrow
bindings as binding records or in the older in-props form.

Geometry follows tldraw: geo ``h + growY``; note ``200·scale`` square plus
``growY``; text measured as tldraw measures it (see
:func:`~spatialobs.canvas.document.textmeasure.text_shape_size`); line, draw and arrow
geometry from their points; groups as the union of their children; rotation
about the local origin composed through parents.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.sanitize import INT_SPAN, CleanFields, is_mapping, sanitize_style
from spatialobs.canvas.document.model import Canvas, build_canvas
from spatialobs.canvas.document.fractional import key_sequence
from spatialobs.canvas.document.records import Binding, Diagnostic, Node, Page, Viewport
from spatialobs.canvas.document.richtext import plain_to_richtext, richtext_to_plain
from spatialobs.canvas.document.shapes import POINT_TYPES, local_box
from spatialobs.canvas.document.arrowindex import load_index_moves
from spatialobs.canvas.document.textmeasure import text_shape_size
from spatialobs.canvas.formats import tldraw_schema as tschema
from spatialobs.canvas.formats._detect import is_tldraw
from spatialobs.canvas.limits import current as current_limits
from spatialobs.canvas.limits import typed_errors

__all__ = ["from_tldraw", "to_tldraw", "is_tldraw", "KNOWN_TYPES", "STYLE_KEYS", "DEFAULT_SCREEN"]

#: Shape types tldraw ships; others load with a diagnostic and their props' w/h.
KNOWN_TYPES = frozenset({"geo", "text", "note", "arrow", "line", "draw", "highlight", "frame", "group",
                         "image", "video", "bookmark", "embed"})
#: Props that are styles in tldraw; copied into ``Node.style``.
STYLE_KEYS = ("color", "labelColor", "fill", "dash", "size", "font", "align", "verticalAlign", "textAlign")
#: Screen size assumed when the document has no instance record.
DEFAULT_SCREEN = (1280.0, 720.0)


@dataclass
class TldrawSource:
    """What an imported tldraw document needs to be written back losslessly."""

    format: str
    form: str                                   # "file", "store" or "snapshot"
    top: Dict[str, Any]
    records: List[Any]
    origin_nodes: Dict[str, Node] = field(default_factory=dict)
    origin_bindings: Dict[str, Binding] = field(default_factory=dict)
    origin_pages: Dict[str, Page] = field(default_factory=dict)
    origin_cameras: Dict[str, Viewport] = field(default_factory=dict)
    origin_selection: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    origin_current: Optional[str] = None
    props_bindings: bool = False
    rich_text: bool = True
    screen: Tuple[float, float] = DEFAULT_SCREEN
    templates: Dict[str, Mapping[str, Any]] = field(default_factory=dict)


def _num(v: Any, default: float) -> Tuple[float, bool]:
    if isinstance(v, bool) or v is None:
        return default, v is None
    if isinstance(v, (int, float)):
        try:
            f = float(v)
        except OverflowError:  # a JSON integer beyond float's range
            return default, False
        return (f, True) if math.isfinite(f) else (default, False)
    if isinstance(v, str):
        try:
            f = float(v.strip().removesuffix("px"))
        except ValueError:
            return default, False
        return (f, True) if math.isfinite(f) else (default, False)
    return default, False


def _prop_num(props: Mapping[str, Any], key: str, default: float, rid: str, diags: List[Diagnostic]) -> float:
    v = props.get(key)
    if v is None:
        return default
    tv = type(v)
    if tv is float or (tv is int and -INT_SPAN < v < INT_SPAN):  # what _num does for these, without its checks
        f = float(v)
        if math.isfinite(f):
            return f
    f, ok = _num(v, default)
    if not ok:
        diags.append(Diagnostic("invalid_geometry", rid, f"props.{key} is not a finite number ({v!r}); {default} used"))
    return f


def _plain_text(props: Mapping[str, Any]) -> Optional[str]:
    rt = props.get("richText")
    if is_mapping(rt):
        return richtext_to_plain(rt) or None
    t = props.get("text")
    return t if isinstance(t, str) and t else None


def shape_fields(rec: Mapping[str, Any], diags: List[Diagnostic]) -> Dict[str, Any]:
    """Node fields of one tldraw shape record, for :func:`~spatialobs.canvas.sanitize.sanitize_node_fields`."""
    return dict(_shape_node(rec, diags)[0])


_Box = Tuple[float, float, float, float]


#: Key under a shape record's ``meta`` that carries what tldraw's schema cannot hold.
META_KEY = "spatialobs"


#: Whether the importer hands the assembler fields it has checked itself (:class:`CleanFields`);
#: False sends every shape through the sanitizer (the twin the tests compare it with).
CLEAN_FIELDS = True


def _shape_node(rec: Mapping[str, Any], diags: List[Diagnostic], lim: Any = None
                ) -> Tuple[Dict[str, Any], Optional[_Box]]:
    """Node fields of one shape record and, for point-based types, its local box.

    The fields come back as :class:`~spatialobs.canvas.sanitize.CleanFields` when
    every value is already what the sanitizer would make of it (the usual case
    for a file tldraw wrote); otherwise as a plain dict for the sanitizer.
    ``lim`` is the :class:`~spatialobs.canvas.limits.CanvasLimits` in force (looked
    up when not given).
    """
    rid = rec["id"]
    props = rec.get("props")
    if type(props) is not dict and not is_mapping(props):
        if props is not None:
            diags.append(Diagnostic("invalid_field", rid, "props is not an object; ignored"))
        props = {}
    get = props.get
    t = rec.get("type")
    if not isinstance(t, str) or not t:
        diags.append(Diagnostic("missing_field", rid, "shape has no type; 'unknown' used"))
        t = "unknown"
    rt = get("richText")  # _plain_text, inline
    if rt is not None and (type(rt) is dict or is_mapping(rt)):
        text = richtext_to_plain(rt) or None
    else:
        text = get("text")
        if type(text) is not str or not text:
            text = text if isinstance(text, str) and text else None
    v = get("scale")  # _prop_num for the plain case, inline
    if v is None:
        scale = 1.0
    elif type(v) is float and v - v == 0.0:
        scale = v or 1.0
    else:
        scale = _prop_num(props, "scale", 1.0, rid, diags) or 1.0
    box: Optional[_Box] = None
    if t == "geo":
        w = _prop_num(props, "w", 0.0, rid, diags)
        h = _prop_num(props, "h", 0.0, rid, diags) + _prop_num(props, "growY", 0.0, rid, diags)
    elif t == "note":
        w = 200.0 * scale
        h = (200.0 + _prop_num(props, "growY", 0.0, rid, diags)) * scale
    elif t == "text":
        sw = get("w")
        sw_f, ok = _num(sw, 0.0)
        w, h = text_shape_size(text or "", str(get("font", "draw")), str(get("size", "m")), scale,
                               sw_f if ok and sw is not None else None, get("autoSize", True) is not False)
    elif t in POINT_TYPES:
        box = local_box(t, props)
        x0, y0, x1, y1 = box
        w, h = x1 - x0, y1 - y0
    elif t == "group":
        w = h = 0.0
    else:
        if t not in KNOWN_TYPES:
            diags.append(Diagnostic("unknown_type", rid, f"unknown shape type {t!r}; kept with props w/h"))
        w = _prop_num(props, "w", 0.0, rid, diags)
        h = _prop_num(props, "h", 0.0, rid, diags)
    style = {k: props[k] for k in STYLE_KEYS if k in props}
    name = get("name") if t == "frame" else None
    meta = rec.get("meta")
    kept = meta.get(META_KEY) if meta and is_mapping(meta) else None
    if kept is not None and is_mapping(kept):  # written by node_to_record: what tldraw's schema could not hold
        if isinstance(kept.get("type"), str) and kept["type"]:
            t = kept["type"]
        if is_mapping(kept.get("style")):
            style.update(kept["style"])
        if isinstance(kept.get("unset"), list):
            for k in kept["unset"]:
                style.pop(k, None) if isinstance(k, str) else None
        if isinstance(kept.get("name"), str):
            name = kept["name"]
        hidden = kept.get("hidden") is True  # tldraw has no such field
    else:
        hidden = False
    if not isinstance(name, str):
        name = None
    parent = rec.get("parentId")
    index = rec.get("index")
    x = rec.get("x", 0.0)
    y = rec.get("y", 0.0)
    rot = rec.get("rotation", 0.0)
    opacity = rec.get("opacity", 1.0)
    locked = rec.get("isLocked", False)
    props = dict(props)
    # The sanitizer's result without running it, when each value already passes its
    # rules unchanged; any doubt leaves the record to the sanitizer.
    if lim is None:
        lim = current_limits()
    kmax, big = lim.max_key_chars, lim.max_coordinate
    tx, ty, tr, tw, th, to = type(x), type(y), type(rot), type(w), type(h), type(opacity)
    if (CLEAN_FIELDS and rid and type(parent) is str and parent and type(index) is str and index and type(t) is str
            and len(rid) <= kmax and len(t) <= kmax and len(parent) <= kmax and len(index) <= kmax
            and (tx is float or tx is int) and -big <= x <= big and (ty is float or ty is int) and -big <= y <= big
            and (tr is float or tr is int) and -big <= rot <= big and (tw is float or tw is int) and 0 <= w <= big
            and (th is float or th is int) and 0 <= h <= big and (to is float or to is int) and 0 <= opacity <= 1
            and type(locked) is bool and (text is None or type(text) is str) and (name is None or type(name) is str)):
        for v in style.values():
            if not (type(v) is str and v[:1].isalpha()):
                style = sanitize_style(style, record=rid)
                break
        return CleanFields(
            id=rid, type=t, parent=parent, index=index, x=float(x), y=float(y), w=float(w), h=float(h),
            rotation=float(rot), text=text, name=name or None, style=style, opacity=float(opacity),
            locked=locked, hidden=hidden, props=props), box
    return {
        "id": rid, "type": t, "parent": parent, "index": index,
        "x": x, "y": y, "w": w, "h": h,
        "rotation": rot, "text": text, "name": name,
        "style": style, "opacity": opacity, "locked": locked,
        "hidden": hidden, "props": props,
    }, box


def _plain_num(v: Any, big: float) -> bool:
    """A float or int the sanitizer keeps as ``float(v)`` (magnitude at most ``big``, not a bool)."""
    tv = type(v)
    return (tv is float or tv is int) and -big <= v <= big


def _binding_record_fields(rec: Mapping[str, Any], diags: List[Diagnostic]) -> Optional[Dict[str, Any]]:
    rid = rec["id"]
    raw_props = rec.get("props")
    props: Mapping[str, Any] = raw_props if is_mapping(raw_props) else {}
    if not isinstance(rec.get("fromId"), str) or not isinstance(rec.get("toId"), str):
        diags.append(Diagnostic("invalid_record", rid, "binding without fromId/toId; dropped"))
        return None
    extra = {k: v for k, v in props.items() if k not in ("terminal", "normalizedAnchor", "isPrecise")}
    return {"id": rid, "type": rec.get("type", "arrow"), "from_id": rec["fromId"], "to_id": rec["toId"],
            "terminal": props.get("terminal", "end"), "anchor": props.get("normalizedAnchor", {"x": 0.5, "y": 0.5}),
            "precise": props.get("isPrecise", False), "props": extra}


def _precise_default(t: Mapping[str, Any]) -> bool:
    """tldraw's migration for terminals older than ``isPrecise``: precise unless anchored at the centre."""
    a = t.get("normalizedAnchor")
    return not (is_mapping(a) and a.get("x") == 0.5 and a.get("y") == 0.5)


def _props_binding_fields(rec: Mapping[str, Any]) -> List[Dict[str, Any]]:
    props = rec.get("props")
    out: List[Dict[str, Any]] = []
    if not is_mapping(props):
        return out
    for term in ("start", "end"):
        t = props.get(term)
        if is_mapping(t) and t.get("type") == "binding":
            extra = {k: v for k, v in t.items() if k not in ("type", "boundShapeId", "normalizedAnchor", "isPrecise")}
            out.append({"id": f"binding:{rec['id']}:{term}", "type": "arrow", "from_id": rec["id"],
                        "to_id": t.get("boundShapeId"), "terminal": term,
                        "anchor": t.get("normalizedAnchor", {"x": 0.5, "y": 0.5}),
                        "precise": t.get("isPrecise", _precise_default(t)), "props": extra})
    return out


def _records_of(doc: Mapping[str, Any]) -> Tuple[str, Dict[str, Any], List[Any], Any]:
    if isinstance(doc.get("records"), list):
        top = {k: v for k, v in doc.items() if k != "records"}
        return "file", top, doc["records"], doc.get("schema")
    if is_mapping(doc.get("store")):
        top = {k: v for k, v in doc.items() if k != "store"}
        return "store", top, list(doc["store"].values()), doc.get("schema")
    d = doc.get("document")
    if is_mapping(d) and is_mapping(d.get("store")):
        top = {k: v for k, v in doc.items()}
        return "snapshot", top, list(d["store"].values()), d.get("schema")
    raise InvalidInputError("tldraw document has neither 'records', 'store' nor 'document.store'")


def _schema_info(schema: Any, records: List[Any]) -> Tuple[bool, bool]:
    """(bindings live in arrow props, text is richText) for this document's schema."""
    props_bindings = not any(is_mapping(r) and r.get("typeName") == "binding" for r in records)
    rich = False
    if is_mapping(schema):
        seq = schema.get("sequences")
        if is_mapping(seq):
            props_bindings = "com.tldraw.binding.arrow" not in seq and props_bindings
            try:
                rich = int(seq.get("com.tldraw.shape.text", 0)) >= 3
            except (TypeError, ValueError):
                rich = False
        elif is_mapping(schema.get("recordVersions")):
            props_bindings = True
    for r in records:
        if is_mapping(r) and r.get("typeName") == "shape" and is_mapping(r.get("props")):
            if "richText" in r["props"]:
                rich = True
                break
            if "text" in r["props"]:
                rich = False
                break
    return props_bindings, rich


def from_tldraw(doc: Mapping[str, Any], *, arrange_arrows: bool = True) -> Canvas:
    """Build a :class:`Canvas` from a parsed tldraw file or store snapshot.

    Parameters
    ----------
    doc : mapping
        A ``.tldr`` file (``{"tldrawFileFormatVersion", "schema", "records"}``), a
        store snapshot (``{"store", "schema"}``) or an editor snapshot
        (``{"document": {"store", "schema"}, "session"}``).
    arrange_arrows : bool, default True
        Put bound arrows where tldraw puts them when it opens a file (its
        ``reparentArrow`` rule); False for the records of a running editor, which
        has arranged them itself.

    Returns
    -------
    Canvas
        With ``cameras`` (viewport = ``(-x, -y, screenW/z, screenH/z)``, screen from
        the instance record or 1280×720), ``selection`` and ``current_page``;
        problems found are in ``canvas.diagnostics``.

    Raises
    ------
    InvalidInputError
        When the document has no record list at all.

    Examples
    --------
    >>> doc = {"tldrawFileFormatVersion": 1, "schema": {}, "records": [
    ...     {"id": "page:p", "typeName": "page", "name": "P", "index": "a1"},
    ...     {"id": "shape:a", "typeName": "shape", "type": "geo", "parentId": "page:p",
    ...      "index": "a1", "x": 5, "y": 5, "rotation": 0, "props": {"w": 10, "h": 20, "growY": 4}}]}
    >>> from_tldraw(doc).page_bounds("shape:a")
    (5.0, 5.0, 15.0, 29.0)
    """
    form, top, records, schema = _records_of(doc)
    diags: List[Diagnostic] = []
    if schema is None:
        diags.append(Diagnostic("missing_field", "schema", "document has no schema; read as the newest form"))
    props_bindings, rich = _schema_info(schema, records)
    pages: List[Page] = []
    node_fields: List[Dict[str, Any]] = []
    binding_fields: List[Dict[str, Any]] = []
    cameras: Dict[str, Tuple[float, float, float]] = {}
    selection: Dict[str, Tuple[str, ...]] = {}
    screen = DEFAULT_SCREEN
    current: Optional[str] = None
    templates: Dict[str, Mapping[str, Any]] = {}
    boxes: List[Tuple[Dict[str, Any], _Box]] = []
    lim = current_limits()
    for k, rec in enumerate(records):
        if not is_mapping(rec) or not isinstance(rec.get("id"), str) or not isinstance(rec.get("typeName"), str):
            rid = rec.get("id", f"#{k}") if is_mapping(rec) else f"#{k}"
            diags.append(Diagnostic("invalid_record", str(rid), "record lacks a string id or typeName; ignored"))
            continue
        tn = rec["typeName"]
        rid = rec["id"]
        if tn == "shape":
            f, box = _shape_node(rec, diags, lim)
            node_fields.append(f)
            if box is not None and type(f) is CleanFields:
                boxes.append((f, box))
            templates.setdefault(str(rec.get("type")), rec)
            if rec.get("type") == "arrow":
                binding_fields.extend(_props_binding_fields(rec))
        elif tn == "binding":
            bf = _binding_record_fields(rec, diags)
            if bf is not None:
                binding_fields.append(bf)
        elif tn == "page":
            idx = rec.get("index")
            name = rec.get("name")
            pages.append(Page(rid, name if isinstance(name, str) else "", idx if isinstance(idx, str) and idx else "a1",
                              dict(rec.get("meta") or {})))
        elif tn == "camera":
            x, okx = _num(rec.get("x", 0), 0.0)
            y, oky = _num(rec.get("y", 0), 0.0)
            z, okz = _num(rec.get("z", 1), 1.0)
            if not (okx and oky and okz) or z <= 0:
                diags.append(Diagnostic("invalid_geometry", rid, "camera has a non-finite position or zoom <= 0; ignored"))
                continue
            cameras[rid[len("camera:"):] if rid.startswith("camera:") else rid] = (x, y, z)
        elif tn == "instance":
            sb = rec.get("screenBounds")
            if is_mapping(sb):
                w, okw = _num(sb.get("w"), 0.0)
                h, okh = _num(sb.get("h"), 0.0)
                if okw and okh and w > 0 and h > 0:
                    screen = (w, h)
            cp = rec.get("currentPageId")
            if isinstance(cp, str):
                current = cp
        elif tn == "instance_page_state":
            pid = rec.get("pageId")
            sel = rec.get("selectedShapeIds")
            if isinstance(pid, str) and isinstance(sel, list):
                selection[pid] = tuple(s for s in sel if isinstance(s, str))
    canvas = build_canvas(pages, node_fields, binding_fields, diags)
    # tldraw moves a bound arrow that is not just above its targets when it opens the file
    # (reparentArrow): the canvas holds the arrow where tldraw draws it; the file keeps its key
    moves = load_index_moves(canvas._nodes, canvas._bindings.values(), canvas._children) if arrange_arrows else {}
    for aid, key in moves.items():
        canvas._nodes[aid] = replace(canvas._nodes[aid], index=key)
    # the local boxes of point-based shapes were computed above; the first
    # derivation reuses them where the node is the one made from those fields
    nodes = canvas._nodes
    for f, box in boxes:
        nd = nodes.get(f["id"])
        if nd is not None and nd.props is f["props"] and nd.w == box[2] - box[0] and nd.h == box[3] - box[1]:
            canvas._local_cache[nd.id] = (nd, box)
    for pid, (x, y, z) in cameras.items():
        if pid in canvas._pages:
            canvas.cameras[pid] = Viewport(-x, -y, screen[0] / z, screen[1] / z)
    canvas.selection = {pid: sel for pid, sel in selection.items() if pid in canvas._pages}
    if current in canvas._pages:
        canvas.current_page = current
    canvas._source = TldrawSource(
        format="tldraw", form=form, top=top, records=list(records), origin_nodes=dict(canvas._nodes),
        origin_bindings=dict(canvas._bindings), origin_pages=dict(canvas._pages),
        origin_cameras=dict(canvas.cameras), origin_selection=dict(canvas.selection),
        origin_current=canvas.current_page, props_bindings=props_bindings, rich_text=rich, screen=screen,
        templates=templates)
    return canvas


# ---------------------------------------------------------------------- export

_DEFAULT_SCHEMA: Dict[str, Any] = {
    "schemaVersion": 2,
    "sequences": {
        "com.tldraw.store": 5, "com.tldraw.asset": 1, "com.tldraw.camera": 1, "com.tldraw.document": 2,
        "com.tldraw.instance": 26, "com.tldraw.instance_page_state": 5, "com.tldraw.page": 1,
        "com.tldraw.instance_presence": 6, "com.tldraw.pointer": 1, "com.tldraw.shape": 4, "com.tldraw.user": 1,
        "com.tldraw.asset.image": 6, "com.tldraw.asset.video": 5, "com.tldraw.asset.bookmark": 2,
        "com.tldraw.shape.group": 0, "com.tldraw.shape.text": 4, "com.tldraw.shape.bookmark": 2,
        "com.tldraw.shape.draw": 5, "com.tldraw.shape.geo": 11, "com.tldraw.shape.note": 13,
        "com.tldraw.shape.line": 5, "com.tldraw.shape.frame": 1, "com.tldraw.shape.arrow": 8,
        "com.tldraw.shape.highlight": 4, "com.tldraw.shape.embed": 4, "com.tldraw.shape.image": 5,
        "com.tldraw.shape.video": 4, "com.tldraw.binding.arrow": 1,
    },
}

_EMPTY_RICH = {"type": "doc", "content": [{"type": "paragraph"}]}
# Props of new shapes when the document has no shape of that type to copy (tldraw 5.x forms).
_DEFAULT_PROPS: Dict[str, Dict[str, Any]] = {
    "geo": {"w": 100, "h": 100, "geo": "rectangle", "dash": "draw", "growY": 0, "url": "", "scale": 1,
            "color": "black", "labelColor": "black", "fill": "none", "size": "m", "font": "draw",
            "align": "middle", "verticalAlign": "middle", "richText": _EMPTY_RICH},
    "text": {"color": "black", "size": "m", "w": 8, "font": "draw", "textAlign": "start", "autoSize": True,
             "scale": 1, "richText": _EMPTY_RICH},
    "note": {"color": "yellow", "labelColor": "black", "size": "m", "font": "draw", "fontSizeAdjustment": 0,
             "align": "middle", "verticalAlign": "middle", "growY": 0, "url": "", "richText": _EMPTY_RICH, "scale": 1},
    "frame": {"w": 160, "h": 90, "name": "", "color": "black"},
    "arrow": {"kind": "arc", "elbowMidPoint": 0.5, "dash": "draw", "size": "m", "fill": "none", "color": "black",
              "labelColor": "black", "bend": 0, "start": {"x": 0, "y": 0}, "end": {"x": 0, "y": 0},
              "arrowheadStart": "none", "arrowheadEnd": "arrow", "richText": _EMPTY_RICH, "labelPosition": 0.5,
              "font": "draw", "scale": 1},
    "line": {"dash": "draw", "size": "m", "color": "black", "spline": "line", "points": {}, "scale": 1},
    "group": {},
}
_TYPE_MAP = {"rectangle": ("geo", "rectangle"), "ellipse": ("geo", "ellipse"), "diamond": ("geo", "diamond"),
             "container": ("geo", "rectangle"), "artboard": ("frame", None), "freedraw": ("line", None),
             "draw": ("line", None), "highlight": ("line", None)}


def _tl_type(node: Node, src: Optional[TldrawSource]) -> Tuple[str, Optional[str]]:
    if node.type in _DEFAULT_PROPS or (src is not None and node.type in src.templates):
        return node.type, None
    if node.type in _TYPE_MAP:
        return _TYPE_MAP[node.type]
    return "geo", "rectangle"


def _points_list(node: Node) -> List[Tuple[float, float]]:
    pts = node.props.get("points")
    out = []
    if isinstance(pts, list):
        for p in pts:
            try:
                out.append((float(p[0]), float(p[1])) if not is_mapping(p) else (float(p["x"]), float(p["y"])))
            except (KeyError, IndexError, TypeError, ValueError):
                continue
    return out


def _schema_versions(src: Optional[TldrawSource]) -> tschema.SchemaVersions:
    """The schema versions of the document a canvas was loaded from (tldraw 5.x defaults otherwise)."""
    if src is None:
        return tschema.SchemaVersions.of(_DEFAULT_SCHEMA)
    top = src.top.get("document") if src.form == "snapshot" else src.top
    schema = top.get("schema") if is_mapping(top) else None
    return tschema.SchemaVersions.of(schema)


def _tl_style(node: Node, tl_type: str, versions: tschema.SchemaVersions, foreign: bool = False) -> Dict[str, Any]:
    """The node's style mapped onto the style props of its tldraw type (the raw style rides in meta).

    A tldraw-native node whose value cannot be mapped is refused; the CSS of a node
    that is not a tldraw shape (HTML-made, another format's type, or any node of a
    document read from another format: ``foreign``) keeps an unmappable value in
    meta only.
    """
    native = node.type == tl_type and "tag" not in node.props and not foreign
    out: Dict[str, Any] = {}
    for k, v in node.style.items():
        try:
            mapped, _ = tschema.map_style({k: v}, tl_type)
        except tschema.UnmappableValueError as exc:
            if native:
                raise tschema.InvalidRecordError(
                    [tschema.Problem(node.id, tl_type, f"props.{k}", f"cannot be written: {exc}")]) from None
            continue
        for mk, mv in mapped.items():
            if mk != k and mk in node.style:
                continue  # an explicit key wins over one implied by another key
            if mk in tschema.TYPE_STYLES.get(tl_type, ()):
                out[mk] = mv
    return out


def _same_kind(value: Any, template: Any) -> bool:
    """Whether a prop of another format may stand in for a tldraw template's prop (same JSON kind).

    An Excalidraw image's ``scale`` is ``[1, 1]`` where tldraw's is a number, and
    Excalidraw's ``points`` are a list where tldraw 5 keeps an object: such values
    keep the template's.

    Examples
    --------
    >>> _same_kind([1, 1], 1), _same_kind(2, 1.0), _same_kind(True, 1), _same_kind("x", None)
    (False, True, False, True)
    """
    if template is None:
        return True
    if isinstance(template, bool) or isinstance(value, bool):
        return isinstance(template, bool) and isinstance(value, bool)
    for kind in ((int, float), str, list, dict):
        if isinstance(template, kind):
            return isinstance(value, kind) or (kind is dict and is_mapping(value))
    return True


def node_to_record(node: Node, base: Optional[Mapping[str, Any]], src: Optional[TldrawSource],
                   canvas: Canvas, versions: Optional[tschema.SchemaVersions] = None,
                   by_arrow: Optional[Mapping[str, List[Binding]]] = None) -> Dict[str, Any]:
    """A valid tldraw shape record for a changed or new node.

    A changed node starts from its original record (unknown fields and ``meta``
    kept) and only the fields that differ from the imported node are rewritten.
    A new node starts from the props of a shape of the same type in the document
    (so that it follows the document's schema version), else tldraw 5.x defaults;
    only props known to that template are kept. Without a template, tldraw's
    defaults in the form the document's schema version stores are used (see
    :func:`~spatialobs.canvas.formats.tldraw_schema.default_props`). Styles are
    mapped onto tldraw's values (the raw style is kept in ``meta``), and the
    ``hidden`` flag, which tldraw has no field for, is kept in ``meta`` too.
    ``by_arrow``: the canvas's bindings by connector, in canvas order (see
    :func:`_bindings_by_arrow`; a writer of many records passes it, else it is made here).
    """
    versions = versions if versions is not None else _schema_versions(src)
    orig = src.origin_nodes.get(node.id) if src is not None else None
    tl_type, geo_kind = _tl_type(node, src)
    template_keys: Optional[Set[str]]
    if base is not None and base.get("type") == tl_type:
        rec = dict(base)
        base_props = base.get("props")
        template_keys = None
        if is_mapping(base_props):
            props = dict(base_props)
        else:
            # props that are not an object were ignored on import: they are written anew,
            # from tldraw's defaults in the document's form and every field of the node
            props = tschema.default_props(tl_type, versions) if tl_type in _DEFAULT_PROPS else {}
            orig = None
    else:
        tmpl = src.templates.get(tl_type) if src is not None else None
        tmpl_props = tmpl.get("props") if tmpl is not None else None
        tprops: Dict[str, Any] = copy.deepcopy(dict(tmpl_props)) if is_mapping(tmpl_props) else (
            tschema.default_props(tl_type, versions) if tl_type in _DEFAULT_PROPS else {})
        rec = {"meta": {}}
        props = tprops
        template_keys = set(tprops)
        orig = None
        for k, v in node.props.items():  # tldraw-shaped props of a new node
            if k in template_keys and _same_kind(v, props[k]):
                props[k] = copy.deepcopy(v)
        if geo_kind is not None and "geo" in props:
            props["geo"] = geo_kind
    rec.update({"id": node.id, "typeName": "shape", "type": tl_type, "parentId": node.parent, "index": node.index,
                "x": node.x, "y": node.y, "rotation": node.rotation, "opacity": node.opacity, "isLocked": node.locked})
    rec.setdefault("meta", {})
    if orig is not None and orig.props != node.props:
        for k, v in node.props.items():
            if orig.props.get(k) != v:
                props[k] = v
        for k in orig.props:
            if k not in node.props:
                props.pop(k, None)

    def changed(attr: str) -> bool:
        return orig is None or getattr(orig, attr) != getattr(node, attr)

    scale = props.get("scale")
    scale = float(scale) if isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale else 1.0
    if changed("w") or changed("h"):
        if tl_type == "geo" or (tl_type not in ("note", "text", "group") and tl_type not in POINT_TYPES and ("w" in props or template_keys is not None)):
            grow = float(props.get("growY", 0) or 0) if tl_type == "geo" else 0.0
            # tldraw's validators want geo and frame sizes above zero; its own resize stops at 1
            low = _MIN_SIDE if tl_type in ("geo", "frame") else 0.0
            props["w"] = max(node.w, low)
            props["h"] = max(node.h - grow, low)
        elif tl_type == "note":
            props["scale"] = node.w / 200.0 if node.w > 0 else scale
            s = props["scale"] or 1.0
            props["growY"] = max(node.h / s - 200.0, 0.0)
        elif tl_type == "text":
            # tldraw stores an auto-size text's measured width after scale, a fixed one's before
            props["w"] = max(node.w if props.get("autoSize", True) is not False else node.w / scale, _MIN_SIDE)
    if tl_type in ("arrow", "line") and template_keys is not None:
        pts = _points_list(node)
        if pts and tl_type == "arrow":
            props["start"] = {"x": pts[0][0], "y": pts[0][1]} if "x" in (props.get("start") or {"x": 0}) else props["start"]
            props["end"] = {"x": pts[-1][0], "y": pts[-1][1]} if "x" in (props.get("end") or {"x": 0}) else props["end"]
        elif pts and tl_type == "line" and is_mapping(props.get("points")):
            from spatialobs.canvas.document.fractional import key_sequence

            keys = key_sequence(len(pts))
            props["points"] = {k: {"id": k, "index": k, "x": x, "y": y} for k, (x, y) in zip(keys, pts)}
    if changed("text") and tl_type in ("geo", "text", "note", "arrow"):
        if "richText" in props or (template_keys is None and src is not None and src.rich_text and "text" not in props):
            props["richText"] = plain_to_richtext(node.text or "")
        else:
            props["text"] = node.text or ""
    if changed("name") and tl_type == "frame":
        props["name"] = node.name or ""
    if changed("style"):
        foreign = canvas.source_format not in (None, "tldraw")
        tl_style = _tl_style(node, tl_type, versions, foreign)
        old_style = _tl_style(orig, tl_type, versions, foreign) if orig is not None else {}
        for k, v in tl_style.items():
            if k in props and (orig is None or old_style.get(k) != v):
                props[k] = v
    if src is not None and src.props_bindings and tl_type == "arrow":
        own = (by_arrow if by_arrow is not None else _bindings_by_arrow(canvas._bindings)).get(node.id, [])
        for term in ("start", "end"):
            b = next((b for b in own if b.terminal == term), None)
            cur = props.get(term)
            if b is not None:
                extra = {k: v for k, v in b.props.items()}
                anchor = b.anchor
                if not b.precise and versions.props_version("arrow") < 2:
                    # tldraw's AddIsPrecise migration calls a binding precise when its anchor is
                    # not the centre: an imprecise one (which aims at the centre) is written there
                    anchor = (0.5, 0.5)
                props[term] = {"type": "binding", "boundShapeId": b.to_id,
                               "normalizedAnchor": {"x": anchor[0], "y": anchor[1]},
                               "isPrecise": b.precise, **extra}
                props[term].setdefault("isExact", False)
            elif is_mapping(cur) and cur.get("type") == "binding":
                props[term] = {"type": "point", "x": 0.0, "y": 0.0}
    # What tldraw's schema cannot hold (our node type when it maps onto another tldraw
    # type, style keys tldraw has no prop for, a name on a non-frame) rides in the
    # record's meta, which tldraw keeps untouched; the importer restores it.
    keep: Dict[str, Any] = {}
    if node.type != tl_type:
        keep["type"] = node.type
    extra_style = {k: v for k, v in node.style.items() if props.get(k) != v}
    if extra_style:
        keep["style"] = extra_style
    unset = sorted(k for k in STYLE_KEYS if k in props and k not in node.style)  # template defaults
    if unset:
        keep["unset"] = unset
    if node.name and tl_type != "frame":
        keep["name"] = node.name
    if node.hidden:
        keep["hidden"] = True
    meta = rec.get("meta")
    if keep or (is_mapping(meta) and META_KEY in meta):
        meta = dict(meta) if is_mapping(meta) else {}
        if keep:
            meta[META_KEY] = keep
        else:
            meta.pop(META_KEY, None)
        rec["meta"] = meta
    rec["props"] = props
    return rec


_ARROW_BINDING_PROPS = ("terminal", "normalizedAnchor", "isExact", "isPrecise", "snap")


def _binding_to_record(b: Binding, base: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """A tldraw binding record; extras tldraw's arrow binding has no prop for ride in ``meta``."""
    rec = dict(base) if base is not None else {"meta": {}}
    base_props = rec.get("props")
    props = dict(base_props) if is_mapping(base_props) else {}
    props.update(b.props)
    props.update({"terminal": b.terminal, "normalizedAnchor": {"x": b.anchor[0], "y": b.anchor[1]},
                  "isPrecise": b.precise})
    if not isinstance(props.get("isExact"), bool):
        props["isExact"] = False
    if props.get("snap") not in tschema.SNAPS:
        props["snap"] = "none"
    meta = rec.get("meta")
    meta = dict(meta) if is_mapping(meta) else {}
    if b.type == "arrow":
        extra = {k: v for k, v in props.items() if k not in _ARROW_BINDING_PROPS}
        props = {k: v for k, v in props.items() if k in _ARROW_BINDING_PROPS}
        if extra:
            meta[META_KEY] = {"props": extra}
    rec.update({"id": b.id, "typeName": "binding", "type": b.type, "fromId": b.from_id, "toId": b.to_id,
                "props": props, "meta": meta})
    return rec


def _page_record(p: Page, base: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    rec = dict(base) if base is not None else {}
    rec.update({"id": p.id, "typeName": "page", "name": p.name, "index": p.index, "meta": dict(p.meta)})
    return rec


def _bindings_by_arrow(bindings: Mapping[str, Binding]) -> Dict[str, List[Binding]]:
    """Bindings by connector, each list in canvas order: one pass, for a writer that asks per arrow."""
    out: Dict[str, List[Binding]] = {}
    for b in bindings.values():
        out.setdefault(b.from_id, []).append(b)
    return out


def _arrow_bindings(by_arrow: Mapping[str, List[Binding]], arrow_id: str) -> List[Binding]:
    """An arrow's bindings by terminal (two at one end in canvas order)."""
    return sorted(by_arrow.get(arrow_id, ()), key=lambda b: b.terminal)


_ID_PREFIX = {"shape": "shape:", "page": "page:", "binding": "binding:"}
#: The smallest side tldraw accepts for a geo, frame or text shape (its validators want > 0).
_MIN_SIDE = 1.0


def _valid_ids_and_keys(out: List[Any], written: List[Any], versions: tschema.SchemaVersions,
                        order: Optional[Mapping[str, str]] = None) -> None:
    """Give records tldraw would refuse for their id or index key valid ones, in place.

    A canvas built by hand or loaded from another format may name nodes ``card`` and
    order siblings with keys such as ``a70``; tldraw wants ``shape:`` / ``page:`` /
    ``binding:`` ids and well-formed fractional keys. Such an id gets its prefix (a
    numeric suffix when that name is taken) everywhere it is referenced; a sibling
    group (or the pages) holding an invalid key is renumbered in its current order,
    which is the order tldraw paints it in. Records changed here are added to
    ``written`` so they are checked like every record written anew.
    """
    taken = {r["id"] for r in out if is_mapping(r) and isinstance(r.get("id"), str)}
    rename: Dict[str, str] = {}
    for r in out:
        if not is_mapping(r) or not isinstance(r.get("id"), str):
            continue
        prefix = _ID_PREFIX.get(str(r.get("typeName")))
        if prefix is None or r["id"].startswith(prefix):
            continue
        new = prefix + r["id"]
        k = 1
        while new in taken:
            new, k = f"{prefix}{r['id']}~{k}", k + 1
        taken.add(new)
        rename[r["id"]] = new
    groups: Dict[Any, List[int]] = {}
    for i, r in enumerate(out):
        if is_mapping(r) and r.get("typeName") in ("shape", "page"):
            groups.setdefault(r.get("parentId") if r["typeName"] == "shape" else "pages", []).append(i)
    # a document older than store version 5 is migrated on load (FixIndexKeys): a key that
    # ends in 0 other than a0, valid or not, gets three random digits in place of the 0,
    # which can reorder its siblings; such a group is renumbered with keys the migration keeps
    old_store = versions.from_version("com.tldraw.store") < 5

    def migrated(k: Any) -> bool:
        return old_store and isinstance(k, str) and k.endswith("0") and k != "a0"

    rekey: Dict[int, str] = {}
    touched = {id(r) for r in written}
    for rows in groups.values():
        if all(tschema.index_problem(out[i].get("index"), versions) is None for i in rows) and (
                # a group the edit did not touch stays verbatim: tldraw treats it as it
                # treats the user's own file
                not any(id(out[i]) in touched for i in rows)
                or not any(migrated(out[i].get("index")) for i in rows)):
            continue
        # sorted as tldraw and the canvas order siblings: by key, ties by position in the file
        # (the canvas's key where it has one: an arrow tldraw moves on opening the file keeps
        # its key in the file and its place in the canvas)
        idx = order or {}
        rows = sorted(rows, key=lambda i: (idx.get(str(out[i].get("id")), str(out[i].get("index", ""))), i))
        keys = key_sequence(len(rows))
        if old_store:
            keys = [k + "V" if migrated(k) else k for k in keys]  # between k and the next key
        rekey.update(zip(rows, keys))
    if not rename and not rekey:
        return
    by_identity = {id(r): k for k, r in enumerate(written)}  # position in written, to replace in O(1)
    for i, r in enumerate(out):
        if not is_mapping(r):
            continue
        new_r: Optional[Dict[str, Any]] = None
        for key in ("id", "parentId", "fromId", "toId", "pageId", "currentPageId"):
            v = r.get(key)
            if isinstance(v, str) and v in rename:
                new_r = new_r if new_r is not None else dict(r)
                new_r[key] = rename[v]
        sel = r.get("selectedShapeIds")
        if isinstance(sel, list) and any(isinstance(v, str) and v in rename for v in sel):
            new_r = new_r if new_r is not None else dict(r)
            new_r["selectedShapeIds"] = [rename.get(v, v) if isinstance(v, str) else v for v in sel]
        if i in rekey:
            new_r = new_r if new_r is not None else dict(r)
            new_r["index"] = rekey[i]
        if new_r is not None:
            out[i] = new_r
            at = by_identity.get(id(r))
            if at is not None:
                written[at] = new_r
            else:
                written.append(new_r)


def _camera_screen(canvas: Canvas, src: Optional[TldrawSource]) -> float:
    """Screen width the canvas's viewports were measured with (see ``editing.editor.document_screen``)."""
    if src is not None:
        return float(src.screen[0])
    other = canvas._source
    app = getattr(other, "top", {}).get("appState") if isinstance(getattr(other, "top", None), dict) else None
    if is_mapping(app) and isinstance(app.get("width"), (int, float)) and app["width"] > 0:
        return float(app["width"])
    ed = canvas.meta.get("editor")
    scr = ed.get("screen") if isinstance(ed, dict) else None
    if isinstance(scr, list) and len(scr) == 2 and isinstance(scr[0], (int, float)) and scr[0] > 0:
        return float(scr[0])
    return DEFAULT_SCREEN[0]


@typed_errors("to_tldraw")
def to_tldraw(canvas: Canvas) -> Dict[str, Any]:
    """Write a canvas as a tldraw document.

    For a document loaded from tldraw the output has the input's form (file, store
    or editor snapshot) and schema; records whose node, binding, page, camera or
    selection did not change are the input's record objects, unchanged; changed
    ones are rewritten from the input record (see :func:`node_to_record`); removed
    ones are left out; new ones are appended. Any other canvas is written as a
    tldraw 5.x ``.tldr`` file.

    Every record written anew is in the form the document's schema version stores
    and passes tldraw's validators (see :mod:`~spatialobs.canvas.formats.tldraw_schema`):
    style values outside tldraw's enumerations are mapped to the nearest valid one
    (the raw value is kept in the record's ``meta``).

    Raises
    ------
    InvalidRecordError
        When a record cannot be made valid (an unmappable style value on a tldraw
        shape, an id without the ``shape:`` prefix, ...); it names every record and
        field. Nothing is written in that case.

    Examples
    --------
    >>> c = Canvas()
    >>> _ = c.add(Node("shape:a", "geo", "page:page", "a1", 0, 0, 10, 10, text="hi"))
    >>> doc = to_tldraw(c)
    >>> [r["typeName"] for r in doc["records"]]
    ['document', 'page', 'shape']
    """
    src = canvas._source if isinstance(canvas._source, TldrawSource) else None
    versions = _schema_versions(src)
    out: List[Any] = []
    written: List[Any] = []  # records rewritten or new: checked against the schema before returning
    seen_nodes: set = set()
    seen_bindings: set = set()
    seen_pages: set = set()
    if src is None:
        out.append({"gridSize": 10, "name": "", "meta": {}, "id": "document:document", "typeName": "document"})
        records: List[Any] = []
    else:
        records = src.records
    prev_bindings = src.origin_bindings if src is not None else {}
    # the bindings by connector, now and at import: looked up per arrow, grouped once per export
    by_arrow = _bindings_by_arrow(canvas._bindings)
    prev_by_arrow: Optional[Dict[str, List[Binding]]] = None
    for raw in records:
        if not is_mapping(raw) or not isinstance(raw.get("id"), str):
            out.append(raw)
            continue
        rid, tn = raw["id"], raw.get("typeName")
        if tn == "shape":
            node = canvas._nodes.get(rid)
            if node is None or rid in seen_nodes:
                continue
            seen_nodes.add(rid)
            same = src.origin_nodes.get(rid) == node  # type: ignore[union-attr]
            if same and src.props_bindings and node.type == "arrow":  # type: ignore[union-attr]
                if prev_by_arrow is None:
                    prev_by_arrow = _bindings_by_arrow(prev_bindings)
                same = _arrow_bindings(by_arrow, rid) == _arrow_bindings(prev_by_arrow, rid)
            if same:
                out.append(raw)
            else:
                out.append(node_to_record(node, raw, src, canvas, versions, by_arrow))
                written.append(out[-1])
        elif tn == "binding":
            b = canvas._bindings.get(rid)
            if b is None or rid in seen_bindings:
                continue
            seen_bindings.add(rid)
            if prev_bindings.get(rid) == b:
                out.append(raw)
            else:
                out.append(_binding_to_record(b, raw))
                written.append(out[-1])
        elif tn == "page":
            p = canvas._pages.get(rid)
            if p is None or rid in seen_pages:
                continue
            seen_pages.add(rid)
            out.append(raw if src.origin_pages.get(rid) == p else _page_record(p, raw))  # type: ignore[union-attr]
        elif tn == "camera":
            pid = rid[len("camera:"):] if rid.startswith("camera:") else rid
            if pid not in canvas._pages:
                continue
            vp = canvas.cameras.get(pid)
            if vp is None or vp == src.origin_cameras.get(pid):  # type: ignore[union-attr]
                out.append(raw)
            else:
                z = src.screen[0] / vp.w if vp.w > 0 else 1.0  # type: ignore[union-attr]
                out.append({**raw, "x": -vp.x, "y": -vp.y, "z": z})
        elif tn == "instance_page_state":
            pid = raw.get("pageId")
            if isinstance(pid, str) and pid not in canvas._pages:
                continue
            sel = canvas.selection.get(pid, ()) if isinstance(pid, str) else ()
            if sel == src.origin_selection.get(pid, ()):  # type: ignore[union-attr, arg-type]
                out.append(raw)
            else:
                out.append({**raw, "selectedShapeIds": [s for s in sel if s in canvas._nodes]})
        elif tn == "instance":
            if canvas.current_page == src.origin_current or canvas.current_page is None:  # type: ignore[union-attr]
                out.append(raw)
            else:
                out.append({**raw, "currentPageId": canvas.current_page})
        else:
            out.append(raw)
    for p in canvas._pages.values():
        if p.id not in seen_pages:
            out.append(_page_record(p, None))
    # a page whose camera the document did not store (a new page, a document from elsewhere): a camera record
    stored = {str(r["id"])[len("camera:"):] for r in records if is_mapping(r) and r.get("typeName") == "camera"
              and isinstance(r.get("id"), str)}
    sw = _camera_screen(canvas, src)
    for pid, vp in canvas.cameras.items():
        if pid in canvas._pages and pid not in stored and vp.w > 0:
            out.append({"x": -vp.x, "y": -vp.y, "z": sw / vp.w, "meta": {}, "id": "camera:" + pid,
                        "typeName": "camera"})
    for nid in (i for pid in canvas.page_ids() for i in canvas.paint_order(pid)):
        if nid not in seen_nodes:
            out.append(node_to_record(canvas._nodes[nid], None, src, canvas, versions, by_arrow))
            written.append(out[-1])
    if src is None or not src.props_bindings:
        for b in canvas._bindings.values():
            if b.id not in seen_bindings:
                out.append(_binding_to_record(b, None))
                written.append(out[-1])
    _valid_ids_and_keys(out, written, versions, {nid: n.index for nid, n in canvas._nodes.items()})
    # nothing tldraw would refuse leaves here: records read from the file pass through
    # as they were; every record written anew is checked at the document's schema version
    tschema.check_records(written, versions)
    if src is None:
        return {"tldrawFileFormatVersion": 1, "schema": copy.deepcopy(_DEFAULT_SCHEMA), "records": out}
    if src.form == "file":
        return {**src.top, "records": out}
    store = {r["id"]: r for r in out if is_mapping(r) and isinstance(r.get("id"), str)}
    if src.form == "store":
        return {**src.top, "store": store}
    return {**src.top, "document": {**src.top.get("document", {}), "store": store}}
