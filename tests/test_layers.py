"""The canvas subpackages import downward only: the document layer never imports a file format, the
editing layer or the observation (not even inside a function)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import spatialobs.canvas.document as document
from spatialobs import SpatialObsError
from spatialobs.canvas import Canvas, Node
from spatialobs.canvas.document import model

ABOVE = ("spatialobs.canvas.formats", "spatialobs.canvas.editing", "spatialobs.canvas.scenarios",
         "spatialobs.canvas.observe", "spatialobs.serve", "spatialobs.screen")


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def test_the_document_layer_imports_nothing_above_it():
    files = sorted(Path(document.__file__).parent.glob("*.py"))
    assert len(files) > 10
    up = [(f.name, m) for f in files for m in _imports(f) if m.startswith(ABOVE)]
    assert up == []


def test_the_serialization_methods_go_through_the_formats_floor(monkeypatch):
    c = Canvas()
    c.add(Node("shape:a", "geo", "page:page", "a1", 0, 0, 10, 10))
    assert Canvas.from_json(c.to_json()).nodes.keys() == {"shape:a"}
    assert "records" in c.to_tldraw() and c.to_excalidraw()["type"] == "excalidraw"
    # without the formats floor's table the methods say what is missing instead of failing on a name
    monkeypatch.setattr(model, "CODECS", {})
    with pytest.raises(SpatialObsError, match=r"^Canvas.to_tldraw: no file formats are installed "
                                              r"\(import spatialobs.canvas.formats\)$"):
        c.to_tldraw()
