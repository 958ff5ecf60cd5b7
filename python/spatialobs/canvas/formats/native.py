"""The native JSON form of a canvas: everything, deterministic, exact round trip."""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Union

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.limits import typed_errors, utf8_json
from spatialobs.canvas.document.records import Binding, Diagnostic, Page, Viewport
from spatialobs.canvas.formats._detect import NATIVE_FORMAT, is_native

__all__ = ["FORMAT", "VERSION", "canvas_to_dict", "canvas_to_json", "canvas_from_json", "is_native"]

FORMAT = NATIVE_FORMAT
VERSION = 1


def canvas_to_dict(canvas: Any) -> Dict[str, Any]:
    """The native form as plain Python values (nodes in canvas order)."""
    src = canvas._source
    source: Any = None
    if src is not None:
        source = {"format": src.format}
        if src.format == "tldraw":
            source.update({"form": src.form, "top": src.top, "records": src.records})
        elif src.format == "excalidraw":
            source.update({"top": src.top, "elements": src.elements})
    return {
        "format": FORMAT,
        "version": VERSION,
        "currentPage": canvas.current_page,
        "pages": [p.to_dict() for p in canvas._pages.values()],
        "nodes": [n.to_dict() for n in canvas._nodes.values()],
        "bindings": [b.to_dict() for b in canvas._bindings.values()],
        "cameras": {k: [v.x, v.y, v.w, v.h] for k, v in canvas.cameras.items()},
        "selection": {k: list(v) for k, v in canvas.selection.items()},
        "diagnostics": [[d.code, d.record, d.message] for d in canvas.diagnostics],
        "meta": canvas.meta,
        "source": source,
    }


@typed_errors("to_json")
def canvas_to_json(canvas: Any) -> str:
    """Serialize to the native JSON form (sorted keys, compact, no NaN).

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> c = Canvas()
    >>> Canvas.from_json(c.to_json()) == c
    True
    """
    return utf8_json(canvas_to_dict(canvas), sort_keys=True, separators=(",", ":"), allow_nan=False)


def canvas_from_json(data: Union[str, bytes, Mapping[str, Any]]) -> Any:
    """Read the native form (a JSON string/bytes or the parsed dict).

    Raises
    ------
    InvalidInputError
        Not JSON, not the native format, an unsupported version or a malformed record.
    """
    from spatialobs.canvas.document.model import Canvas, _make_node
    from spatialobs.canvas.document.sanitize import sanitize_binding_fields, sanitize_node_fields

    if isinstance(data, (str, bytes, bytearray)):
        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise InvalidInputError(f"native canvas JSON is not valid JSON: {exc}") from None
    else:
        doc = data
    if not is_native(doc):
        raise InvalidInputError(f"not a native canvas document (expected format {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise InvalidInputError(f"native canvas version {doc.get('version')!r} is not supported (expected {VERSION})")
    c = Canvas(default_page=False)
    try:
        src = doc.get("source")
        if isinstance(src, Mapping) and src.get("format") == "tldraw":
            from spatialobs.canvas.formats.tldraw import from_tldraw

            form = src["form"]
            if form not in ("file", "store", "snapshot"):
                raise InvalidInputError(f"malformed native canvas document: tldraw source form {form!r} is not "
                                        "'file', 'store' or 'snapshot'")
            raw: Dict[str, Any] = dict(src["top"])
            if form == "file":
                raw["records"] = src["records"]
            elif form == "store":
                raw["store"] = {r["id"]: r for r in src["records"]}
            else:
                raw["document"] = {**raw.get("document", {}), "store": {r["id"]: r for r in src["records"]}}
            c._source = from_tldraw(raw)._source
        elif isinstance(src, Mapping) and src.get("format") == "excalidraw":
            from spatialobs.canvas.formats.excalidraw import ExcalidrawSource, from_excalidraw

            if "elements" in src:  # the scene as imported: unchanged elements are written back verbatim
                c._source = from_excalidraw({**src.get("top", {}), "elements": src["elements"]})._source
            else:
                c._source = ExcalidrawSource()
        for p in doc["pages"]:
            c._put("page", p["id"], Page(p["id"], p["name"], p["index"], dict(p.get("meta") or {})))
        for n in doc["nodes"]:
            f = sanitize_node_fields(n)
            if f["parent"] not in c._pages and f["parent"] not in c._nodes and not any(
                    m.get("id") == f["parent"] for m in doc["nodes"]):
                raise InvalidInputError(f"record {f['id']!r}: parent {f['parent']!r} does not exist")
            if f["id"] in c._nodes:
                raise InvalidInputError(f"record {f['id']!r}: id appears twice")
            c._put("node", f["id"], _make_node(f))
        for b in doc["bindings"]:
            f = sanitize_binding_fields(b)
            c._put("binding", f["id"], Binding(**f))
        c.cameras = {k: Viewport(*map(float, v)) for k, v in doc.get("cameras", {}).items()}
        c.selection = {k: tuple(v) for k, v in doc.get("selection", {}).items()}
        c.current_page = doc.get("currentPage")
        c.diagnostics = [Diagnostic(*d) for d in doc.get("diagnostics", [])]
        c.meta = dict(doc.get("meta") or {})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"malformed native canvas document: {type(exc).__name__}: {exc}") from None
    return c
