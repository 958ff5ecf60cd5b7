"""Editor state and snapshot(canvas)."""

from __future__ import annotations

import json

import pytest

from spatialobs import InvalidInputError, OutOfRangeError
from spatialobs.canvas import Canvas, Editor, Executor, Node, Viewport, load, snapshot, snapshot_json
from tests.conftest import shared_files


def doc():
    c = Canvas()
    c.add(Node("shape:a1", "frame", "page:page", "a1", 0, 0, 400, 300, name="Home", style={"backgroundColor": "#fff"}))
    c.add(Node("shape:a2", "frame", "page:page", "a2", 500, 0, 200, 100, name="About"))
    c.add(Node("shape:c", "container", "shape:a1", "a1", 10, 10, 100, 100))
    c.add(Node("shape:d", "container", "shape:c", "a1", 0, 0, 50, 50))
    c.add(Node("shape:e", "text", "shape:d", "a1", 0, 0, 10, 10, text="deep " * 30))
    c.add(Node("shape:f", "text", "shape:e", "a1", 0, 0, 10, 10, text="deeper"))
    return c


def test_snapshot_contents():
    c = doc()
    ed = Editor(c)
    ed.select(["shape:c"])
    ed.set_tool("frame")
    for k in range(8):
        ed.add_prompt(f"prompt {k}")
    ed.set_agent(active=True, status="thinking")
    ed.add_working_artboard("shape:a2")
    s = snapshot(c, origin=(100, 0))
    assert s["page"] == "page:page" and s["nodeCount"] == 6 and s["tool"] == "frame"
    assert s["artboards"] == [
        {"id": "shape:a1", "name": "Home", "x": -100, "y": 0, "w": 400, "h": 300, "background": "#fff", "children": 1},
        {"id": "shape:a2", "name": "About", "x": 400, "y": 0, "w": 200, "h": 100, "children": 0},
    ]
    sel = s["selection"][0]
    assert sel["id"] == "shape:c" and sel["x"] == -90
    d = sel["children"][0]
    e = d["children"][0]
    assert e["id"] == "shape:e" and "children" not in e and e["childCount"] == 1   # depth two, then a count
    assert len(e["text"]) == 80 and e["text"].endswith("…")
    assert s["agent"] == {"active": True, "status": "thinking", "workingArtboards": ["shape:a2"],
                          "prompts": [f"prompt {k}" for k in range(2, 8)]}


def test_snapshot_is_deterministic_json():
    a, b = doc(), doc()
    assert snapshot_json(a) == snapshot_json(b)
    assert json.loads(snapshot_json(a)) == snapshot(a)
    b.update("shape:a2", name="Changed")
    assert snapshot_json(a) != snapshot_json(b)


def test_snapshot_tracks_agent_ops():
    c = doc()
    Executor(c).apply([{"op": "create_artboard", "id": "n", "name": "New", "w": 10, "h": 10},
                       {"op": "parse_html", "html": "<p>x</p>"}])
    s = snapshot(c)
    assert [b["id"] for b in s["artboards"]] == ["shape:a1", "shape:a2", "shape:n"]
    assert s["artboards"][-1]["children"] == 1 and s["agent"]["workingArtboards"] == ["shape:n"]


def test_editor_camera_zoom_is_clamped():
    c = doc()
    ed = Editor(c)
    assert ed.camera() .zoom == 1.0
    assert ed.set_camera(10, 20, 100).zoom == 4.0
    assert c.cameras["page:page"] == Viewport(10.0, 20.0, 320.0, 180.0)
    assert ed.set_camera(0, 0, 0.01).zoom == 0.15
    assert ed.camera().zoom == pytest.approx(0.15)
    ed.set_screen(1000, 500)
    assert ed.set_camera(0, 0, 2).viewport(ed.screen) == Viewport(0.0, 0.0, 500.0, 250.0)
    with pytest.raises(InvalidInputError, match="zoom must be > 0"):
        ed.set_camera(0, 0, 0)
    with pytest.raises(InvalidInputError, match="x must be finite"):
        ed.set_camera(float("nan"), 0, 1)


def test_editor_selection_and_tool_validation():
    c = doc()
    c.add(__import__("spatialobs.canvas", fromlist=["Page"]).Page("page:two", "Two", "a2"))
    c.add(Node("shape:other", "geo", "page:two", w=1, h=1))
    ed = Editor(c)
    assert ed.select(["shape:c", "shape:c", "shape:d"]) == ("shape:c", "shape:d")
    with pytest.raises(OutOfRangeError, match="no node with id 'zz'"):
        ed.select(["zz"])
    with pytest.raises(OutOfRangeError, match="not on page 'page:page'"):
        ed.select(["shape:other"])
    with pytest.raises(InvalidInputError, match="not one string"):
        ed.select("shape:c")
    with pytest.raises(InvalidInputError, match="tool must be a non-empty string"):
        ed.set_tool("")
    with pytest.raises(InvalidInputError, match="status must be one of"):
        ed.set_agent(status="sleeping")
    with pytest.raises(OutOfRangeError, match="no node"):
        ed.add_working_artboard("zz")
    assert ed.selection == ("shape:c", "shape:d")


def test_editor_state_is_saved_with_the_document_and_not_shared_by_copies():
    c = doc()
    ed = Editor(c)
    ed.set_tool("hand")
    ed.add_prompt("one")
    c2 = c.copy()
    Editor(c2).add_prompt("two")
    Editor(c2).set_tool("draw")
    assert ed.agent["prompts"] == ["one"] and ed.tool == "hand"
    back = Canvas.from_json(c2.to_json())
    assert Editor(back).agent["prompts"] == ["one", "two"] and Editor(back).tool == "draw"


def test_working_artboards_drop_deleted_ones():
    c = doc()
    ed = Editor(c)
    ed.add_working_artboard("shape:a1")
    ed.add_working_artboard("shape:a2")
    ed.add_working_artboard("shape:a1")
    assert ed.working_artboards() == ["shape:a2", "shape:a1"]
    c.remove("shape:a2")
    assert ed.working_artboards() == ["shape:a1"]


def test_snapshot_of_real_files():
    files = shared_files("canvases", "*.tldr")
    if not files:
        pytest.skip("../shared/data/canvases is absent")
    for f in files:
        c = load(f)
        s = snapshot(c)
        assert s["nodeCount"] == len(c.nodes)
        assert [b["id"] for b in s["artboards"]] == [i for i in c.paint_order() if c.node(i).type == "frame"]
        json.loads(snapshot_json(c))


def test_snapshot_bad_input():
    with pytest.raises(InvalidInputError, match="snapshot needs a Canvas"):
        snapshot({})  # type: ignore[arg-type]
    with pytest.raises(OutOfRangeError, match="no page"):
        snapshot(Canvas(), page="page:nope")
