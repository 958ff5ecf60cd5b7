"""Unknown element types are kept and reported, never a reason to reject a file.

A peer rejects a whole document over one element type it does not know. Here each
importer keeps such a record as a node of that type (drawn as its box), names it in
``canvas.diagnostics`` (code ``unknown_type``), and each writer gives it back:
byte-for-byte the record it read while it is not edited, and with its own type and
every field it had when it is. Checked on every shared real file with unknown
records put in, and on generated ones; the real editors' view of such a file is in
``tests/conformance/test_ops_editors.py`` (Excalidraw drops only the type it does
not know when it opens the file).
"""

from __future__ import annotations

import copy
import json

import pytest

from spatialobs.canvas import Executor, load
from spatialobs.canvas.document.fractional import key_after
from tests.conftest import shared_files

TLDR = shared_files("canvases", "*.tldr")
EXCALIDRAW = shared_files("canvases", "*.excalidraw")

KNOWN_EXCALIDRAW = [
    {"id": "u-emb", "type": "embeddable", "x": 0, "y": -900, "width": 200, "height": 120, "link": "https://example.com"},
    {"id": "u-ifr", "type": "iframe", "x": 300, "y": -900, "width": 200, "height": 120},
    {"id": "u-mf", "type": "magicframe", "x": 600, "y": -900, "width": 300, "height": 200, "name": "Magic"},
]
MADE_UP_EXCALIDRAW = [
    {"id": "u-stk", "type": "stickynote", "x": 1000, "y": -900, "width": 100, "height": 100, "colour": "yellow",
     "customData": {"votes": 3}},
    {"id": "u-new", "type": "mindmap-node", "x": 1200, "y": -900, "width": 80, "height": 40, "groupIds": ["g-u"]},
]


def _tl_unknown(page: str, after: str = "a1") -> list:
    k1 = key_after(after)
    k2 = key_after(k1)
    return [{"id": "shape:u-custom", "typeName": "shape", "type": "kanban-card", "parentId": page, "index": k1,
             "x": 10, "y": -500, "rotation": 0, "isLocked": False, "opacity": 1, "meta": {"owner": "x"},
             "props": {"w": 160, "h": 90, "column": "todo", "labels": ["a", "b"]}},
            {"id": "shape:u-custom2", "typeName": "shape", "type": "sticker", "parentId": page, "index": k2,
             "x": 300, "y": -500, "rotation": 0.5, "isLocked": False, "opacity": 0.5, "meta": {},
             "props": {"w": 40, "h": 40, "emoji": "🚀"}}]


@pytest.mark.skipif(not TLDR, reason="no shared .tldr files beside the checkout")
@pytest.mark.parametrize("path", TLDR, ids=lambda p: p.name[:40])
def test_tldraw_unknown_shape_types_are_kept_reported_and_written_back(path):
    doc = json.loads(path.read_text())
    page = next(r["id"] for r in doc["records"] if r.get("typeName") == "page")
    top = max((r["index"] for r in doc["records"] if r.get("typeName") == "shape" and r.get("parentId") == page),
              default="a1")
    extra = _tl_unknown(page, top)
    doc["records"] = doc["records"] + copy.deepcopy(extra)
    c = load(doc)
    unknown = [d.record for d in c.diagnostics if d.code == "unknown_type"]
    assert unknown == ["shape:u-custom", "shape:u-custom2"]
    assert c.nodes["shape:u-custom"].type == "kanban-card"
    assert c.page_bounds("shape:u-custom") == pytest.approx((10, -500, 170, -410))
    # an agent edits the document around them (and one of them)
    report = Executor(c).apply([{"op": "create_shape", "id": "n", "x": 0, "y": -700, "text": "new"},
                                {"op": "move_node", "id": "shape:u-custom2", "dx": 25}])
    assert report.ok, report.errors
    out = {r["id"]: r for r in c.to_tldraw()["records"]}
    # untouched: the record as read (its index key too, unless the writer renumbers the keys of the page's
    # shapes for an old document, which tldraw's FixIndexKeys would otherwise reorder)
    without = lambda r: {k: v for k, v in r.items() if k != "index"}  # noqa: E731
    assert without(out["shape:u-custom"]) == without(extra[0])
    order = [r["id"] for r in sorted((r for r in out.values() if r.get("parentId") == page), key=lambda r: r["index"])]
    assert order.index("shape:u-custom") < order.index("shape:u-custom2")
    moved = out["shape:u-custom2"]
    assert moved["type"] == "sticker" and moved["props"] == extra[1]["props"] and moved["meta"] == {}
    assert moved["x"] == pytest.approx(325.0)
    again = load(c.to_tldraw())
    assert [d.record for d in again.diagnostics if d.code == "unknown_type"] == ["shape:u-custom", "shape:u-custom2"]


@pytest.mark.skipif(not EXCALIDRAW, reason="no shared .excalidraw files beside the checkout")
@pytest.mark.parametrize("path", EXCALIDRAW, ids=lambda p: p.name[:40])
def test_excalidraw_unknown_element_types_are_kept_reported_and_written_back(path):
    doc = json.loads(path.read_text())
    doc["elements"] = doc["elements"] + copy.deepcopy(KNOWN_EXCALIDRAW + MADE_UP_EXCALIDRAW)
    c = load(doc)
    # the types Excalidraw has load without a word; the made-up ones are named
    assert [d.record for d in c.diagnostics if d.code == "unknown_type"] == ["u-stk", "u-new"]
    assert c.nodes["u-stk"].type == "stickynote" and c.nodes["u-new"].parent == "group:g-u"
    assert c.page_bounds("u-stk") == pytest.approx((1000, -900, 1100, -800))
    report = Executor(c).apply([{"op": "move_node", "id": "u-stk", "dx": 10},
                                {"op": "duplicate", "id": "u-new", "dy": 100, "ref": "copy"}])
    assert report.ok, report.errors
    out = {e["id"]: e for e in c.to_excalidraw()["elements"]}
    # untouched: the element as read, but for the fields Excalidraw's restore sets itself when an element
    # has no index in array order (the writer gives it one, as restore would)
    fresh = ("index", "version", "versionNonce", "updated")
    for e in KNOWN_EXCALIDRAW:
        assert {k: v for k, v in out[e["id"]].items() if k not in fresh} == e
    stk = out["u-stk"]
    assert stk["type"] == "stickynote" and stk["colour"] == "yellow" and stk["customData"] == {"votes": 3}
    assert stk["x"] == pytest.approx(1010.0)
    cp = out[report.aliases["copy"]]
    assert cp["type"] == "mindmap-node" and cp["y"] == pytest.approx(-800.0)


def test_a_document_of_nothing_but_unknown_types_opens():
    c = load({"type": "excalidraw", "version": 2, "elements": copy.deepcopy(MADE_UP_EXCALIDRAW)})
    assert len(c.nodes) == 3 and len([d for d in c.diagnostics if d.code == "unknown_type"]) == 2
    t = load({"tldrawFileFormatVersion": 1, "schema": {},
              "records": [{"id": "page:p", "typeName": "page", "name": "P", "index": "a1"}] + _tl_unknown("page:p")})
    assert set(t.nodes) == {"shape:u-custom", "shape:u-custom2"}
    assert {r["id"]: r for r in t.to_tldraw()["records"]}["shape:u-custom"] == _tl_unknown("page:p")[0]
