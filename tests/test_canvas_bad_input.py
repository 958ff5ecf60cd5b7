"""Bad input on the canvas side: every finding of the canvas fuzzing campaign, kept fixed.

Each case checks the error type and its message: a :class:`~spatialobs.SpatialObsError`
naming the record or the limit, one line, bounded in length; or, where the input is
valid, that the work now succeeds.
"""

from __future__ import annotations

import pytest

from spatialobs import SpatialObsError
from spatialobs.canvas import load
from spatialobs.canvas.formats import tldraw_schema
from tests.conftest import shared_files

EXCALIDRAW = shared_files("canvases", "*.excalidraw")


@pytest.mark.parametrize("path", EXCALIDRAW, ids=lambda p: p.name)
def test_every_shared_excalidraw_file_exports_to_valid_tldraw(path):
    doc = load(path).to_tldraw()
    assert tldraw_schema.validate_records(doc["records"], doc["schema"]) == []
    again = load(doc)
    assert len(again._nodes) == len(load(path)._nodes)


def test_an_image_scale_list_exports_to_tldraw():
    # Excalidraw stores an image's scale as [1, 1] (real files): it was float()ed as tldraw's number
    c = load({"type": "excalidraw", "elements": [
        {"id": "im", "type": "image", "x": 0, "y": 0, "width": 10, "height": 20, "scale": [1, 1],
         "fileId": "f", "status": "saved"}]})
    doc = c.to_tldraw()
    assert tldraw_schema.validate_records(doc["records"], doc["schema"]) == []
    (rec,) = [r for r in doc["records"] if r.get("typeName") == "shape"]
    assert rec["props"]["scale"] == 1 and (rec["props"]["w"], rec["props"]["h"]) == (10.0, 20.0)
    assert load(doc).page_bounds("shape:im") == (0.0, 0.0, 10.0, 20.0)


def test_excalidraw_lines_and_numeric_fonts_export_to_tldraw():
    # Excalidraw's fontFamily 1 and a line's list of points were refused as tldraw-native values
    c = load({"type": "excalidraw", "elements": [
        {"id": "t", "type": "text", "x": 0, "y": 0, "width": 40, "height": 20, "text": "hi", "fontFamily": 1,
         "fontSize": 20},
        {"id": "l", "type": "line", "x": 5, "y": 5, "width": 10, "height": 10, "points": [[0, 0], [10, 10]]}]})
    doc = c.to_tldraw()
    assert tldraw_schema.validate_records(doc["records"], doc["schema"]) == []
    (line,) = [r for r in doc["records"] if r.get("id") == "shape:l"]
    assert sorted((p["x"], p["y"]) for p in line["props"]["points"].values()) == [(0.0, 0.0), (10.0, 10.0)]
