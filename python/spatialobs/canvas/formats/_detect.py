"""Which format a parsed canvas document is in (below every format's module and the loader).

The detectors live apart from the importers, so that detecting a file's format imports
no format's module (a load pays for its own format's importer only), and so that each
importer can check its input with them without importing the loader.

Examples
--------
>>> is_tldraw({"records": [], "schema": {}}), is_excalidraw({"type": "excalidraw"})
(True, True)
"""

from __future__ import annotations

from typing import Any, Mapping

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.sanitize import is_mapping

__all__ = ["detect_format", "is_tldraw", "is_excalidraw", "is_native", "NATIVE_FORMAT"]

#: The ``format`` field of the native JSON form (:data:`spatialobs.canvas.formats.native.FORMAT`).
NATIVE_FORMAT = "spatialobs.canvas"


def is_native(doc: Any) -> bool:
    """Whether a parsed JSON value is the native form."""
    return isinstance(doc, Mapping) and doc.get("format") == NATIVE_FORMAT


def is_tldraw(doc: Any) -> bool:
    """Whether a parsed JSON value looks like a tldraw file or store snapshot."""
    if not is_mapping(doc):
        return False
    if "tldrawFileFormatVersion" in doc:
        return True
    if isinstance(doc.get("records"), list) and "schema" in doc:
        return True
    if is_mapping(doc.get("store")) and "schema" in doc:
        return True
    d = doc.get("document")
    return is_mapping(d) and is_mapping(d.get("store"))


def is_excalidraw(doc: Any) -> bool:
    """Whether a parsed JSON value looks like an Excalidraw scene."""
    return is_mapping(doc) and (doc.get("type") == "excalidraw" or (
        isinstance(doc.get("elements"), list) and "records" not in doc and "nodes" not in doc))


def detect_format(doc: Any) -> str:
    """``"native"``, ``"tldraw"`` or ``"excalidraw"`` for a parsed document.

    Raises
    ------
    InvalidInputError
        When the document is none of them.

    Examples
    --------
    >>> detect_format({"type": "excalidraw", "elements": []})
    'excalidraw'
    """
    if is_native(doc):
        return "native"
    if is_tldraw(doc):
        return "tldraw"
    if is_excalidraw(doc):
        return "excalidraw"
    if isinstance(doc, Mapping):
        keys = ", ".join(sorted(map(str, doc))[:8])
        raise InvalidInputError(f"unrecognized canvas document (top-level keys: {keys or 'none'}); "
                                "expected a tldraw file/snapshot, an Excalidraw scene or native canvas JSON")
    raise InvalidInputError(f"a canvas document must be a JSON object, got {type(doc).__name__}")
