"""File formats: tldraw ``.tldr`` and store snapshots, Excalidraw scenes, the native JSON form.

Each format module reads a document into a :class:`~spatialobs.canvas.Canvas` and writes one
back; :mod:`.io` detects the format of a file or mapping.

Examples
--------
>>> from spatialobs.canvas.formats.io import detect_format
>>> detect_format({"type": "excalidraw", "elements": []})
'excalidraw'
"""

from typing import Any, Dict, Optional

from spatialobs.canvas.document import model as _model


# The document layer's serialization methods (Canvas.to_json, from_json, to_tldraw, to_excalidraw)
# call these; each format's module loads on first use, so a command that reads one format does not
# import the others.
def _to_json(canvas: Any) -> str:
    from spatialobs.canvas.formats.native import canvas_to_json

    return canvas_to_json(canvas)


def _from_json(data: Any) -> Any:
    from spatialobs.canvas.formats.native import canvas_from_json

    return canvas_from_json(data)


def _to_tldraw(canvas: Any) -> Dict[str, Any]:
    from spatialobs.canvas.formats.tldraw import to_tldraw

    return to_tldraw(canvas)


def _to_excalidraw(canvas: Any, *, page: Optional[str] = None, updated: Optional[int] = None) -> Dict[str, Any]:
    from spatialobs.canvas.formats.excalidraw import to_excalidraw

    return to_excalidraw(canvas, page=page, updated=updated)


_model.CODECS.update(to_json=_to_json, from_json=_from_json, to_tldraw=_to_tldraw, to_excalidraw=_to_excalidraw)
