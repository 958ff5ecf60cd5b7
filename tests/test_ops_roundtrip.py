"""Round trip: a real tldraw file, agent ops, export with to_tldraw(), reload, compare."""

from __future__ import annotations

import json

import pytest

from spatialobs.canvas import Executor, load
from tests.conftest import shared_files

FILES = [p for p in shared_files("canvases", "*.tldr")
         if p.name.startswith(("1797127235__argus", "metatypedev__ghjk", "kitschpatrol__tldraw-cli", "a-type__react"))]
_FIELDS = ("type", "parent", "index", "x", "y", "w", "h", "rotation", "text", "name", "opacity", "locked", "hidden")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name.split("__")[1])
def test_ops_round_trip_through_tldraw(path):
    c = load(path)
    before = c.copy()
    page = c.current_page
    shapes = [i for i in c.paint_order(page) if c.node(i).type in ("geo", "note", "frame") and not c.node(i).locked]
    target, mover = shapes[0], shapes[-1]
    ops = [
        {"op": "create_artboard", "id": "board", "name": "Agent board", "w": 640, "h": 480, "background": "#ffffff"},
        {"op": "parse_html", "target": "board", "html": "<div id='card' style='width: 200px; height: 120px; padding: 8px'>"
                                                        "<h2 id='title'>Title</h2></div>"},
        {"op": "set_text", "id": target, "text": "edited by the agent"},
        {"op": "update_styles", "id": target, "styles": {"color": "red"}},
        {"op": "move_node", "id": mover, "dx": 40, "dy": -25},
        {"op": "delete_node", "id": "title"},
    ]
    r = Executor(c).apply(ops)
    assert r.ok, r.errors
    doc = json.loads(json.dumps(c.to_tldraw()))
    back = load(doc)
    assert not [d for d in back.diagnostics if d.code != "unknown_type"], back.diagnostics
    assert set(back.nodes) == set(before.nodes) | {"shape:board", "shape:card"}
    # the edits
    name_or_text = "name" if before.node(target).type == "frame" else "text"
    assert getattr(back.node(target), name_or_text) == "edited by the agent"
    assert back.node(target).style.get("color") == "red"
    b0, b1 = before.page_bounds(mover), back.page_bounds(mover)
    assert (b1[0] - b0[0], b1[1] - b0[1]) == pytest.approx((40.0, -25.0))
    board, card = back.node("shape:board"), back.node("shape:card")
    assert (board.type, board.name, board.w, board.h) == ("frame", "Agent board", 640.0, 480.0)
    assert (card.parent, card.x, card.y, card.w, card.h) == ("shape:board", 0.0, 0.0, 200.0, 120.0)
    # nothing else changed
    for nid, old in before.nodes.items():
        new = back.node(nid)
        if nid in (target, mover):
            continue
        assert new == old, nid
    for nid in (target, mover):
        old, new = before.node(nid), back.node(nid)
        changed = {f for f in _FIELDS if getattr(old, f) != getattr(new, f)}
        allowed = {name_or_text} if nid == target else set()
        if nid == target and old.type in ("text", "geo", "note"):
            allowed |= {"w", "h", "x", "y"}  # re-measured after the edit, as tldraw does
        if nid == mover:
            allowed |= {"x", "y"}
        assert changed <= allowed, (nid, changed)
    assert back.bindings == before.bindings
    assert back.pages == before.pages
