"""Files written by ``Canvas.to_excalidraw`` after edits, opened by the real Excalidraw editor.

Each shared scene is loaded, edited (a shape moved, a text changed, a binding target
deleted, nodes added by a ``parse_html`` op) and written. Excalidraw must open the file
with no error, restore must not alter what we wrote beyond the fields Excalidraw always
normalizes (:data:`NORMALIZED`), and Excalidraw must put every element where our canvas
says it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from spatialobs.canvas import Executor, load
from tests.conformance.excalidraw_harness import bounds_error, compare_bounds
from tests.conftest import shared_files

SHARED = shared_files("canvases", "*.excalidraw")
MOVE = (40.0, -25.0)
NEW_TEXT = "edited by an agent"
HTML = "<h2 id='title'>Added title</h2><p>Some text here</p><div style='width:120px;height:40px'>box</div>"

#: Fields restore sets on elements whatever wrote them, and the rule each follows.
#: ``index`` is regenerated when missing or out of array order (array order is paint
#: order), and then ``version``, ``versionNonce`` and ``updated`` are bumped too; the
#: others fill a missing or null field with Excalidraw's default.
NORMALIZED = {
    "index": "regenerated when missing or not increasing in array order",
    "version": "bumped when index is regenerated",
    "versionNonce": "new random value when index is regenerated",
    "updated": "now, when index is regenerated",
    "boundElements": "null becomes []",
    "frameId": "missing becomes null",
    "autoResize": "missing becomes true (text)",
    "lineHeight": "missing becomes the one detected from height / fontSize (text)",
    "lastCommittedPoint": "becomes null (lines and arrows)",
}


def _normalized(field: str, change: Dict[str, Any], fields: Dict[str, Any]) -> bool:
    before, after = change.get("before"), change.get("after")
    if field == "index":
        return True
    if field in ("version", "versionNonce", "updated"):
        return "index" in fields
    if field == "boundElements":
        return before is None and after == []
    if field == "frameId":
        return "before" not in change and after is None
    if field == "autoResize":
        return "before" not in change and after is True
    if field == "lineHeight":
        return "before" not in change and isinstance(after, (int, float))
    if field == "lastCommittedPoint":
        return after is None
    return False


def _edit(canvas: Any) -> Dict[str, Any]:
    """Edit a loaded scene in place; return what was done (ids and expectations)."""
    nodes = canvas.nodes
    targets = [b.to_id for b in canvas.bindings.values()]
    boxes = [i for i, n in nodes.items() if n.type in ("rectangle", "ellipse", "diamond")
             and canvas.page_rotation(i) == 0.0]
    move = next((i for i in boxes if i in targets), boxes[0])
    delete = next((i for i in boxes if i in targets and i != move), next(i for i in boxes if i != move))
    retext = next(i for i, n in nodes.items() if n.text and i not in (move, delete) and n.type != "arrow")
    done: Dict[str, Any] = {"move": move, "moved_from": canvas.page_bounds(move), "delete": delete, "retext": retext}
    n = canvas.node(move)
    canvas.update(move, x=n.x + MOVE[0], y=n.y + MOVE[1])
    canvas.update(retext, text=NEW_TEXT)
    canvas.remove(delete)
    frames = [i for i, n in nodes.items() if n.type == "frame"]
    if frames:
        ops: List[Dict[str, Any]] = [{"op": "parse_html", "target": frames[0], "html": HTML}]
    else:
        ext = canvas.page_extent()
        ops = [{"op": "create_artboard", "id": "board", "name": "Added", "x": ext[2] + 100, "y": ext[1], "w": 400,
                "h": 300},
               {"op": "parse_html", "target": "board", "html": HTML}]
    report = Executor(canvas).apply(ops)
    assert not report.errors, report.errors
    done["created"] = list(report.created)
    done["frame"] = frames[0] if frames else report.aliases.get("board")
    return done


@pytest.fixture(scope="module")
def written(tmp_path_factory, excalidraw_harness) -> Dict[str, Tuple[Any, Dict[str, Any], Dict[str, Any], Dict[str, Any]]]:
    """Per shared file: (edited canvas, edits, result for the written file, result for the original)."""
    if not SHARED:
        pytest.skip("real data folder ../shared/data/canvases has no .excalidraw file")
    folder = tmp_path_factory.mktemp("excalidraw-written")
    cases = []
    for path in SHARED:
        c = load(path)
        done = _edit(c)
        out = folder / path.name
        out.write_text(json.dumps(c.to_excalidraw()), encoding="utf-8")
        cases.append((path, out, c, done))
    results = excalidraw_harness.results([p for p, *_ in cases] + [o for _, o, *_ in cases])
    n = len(cases)
    return {p.name: (c, done, results[n + k], results[k]) for k, (p, _, c, done) in enumerate(cases)}


NAMES = [p.name for p in SHARED]


def _ids(name: str) -> str:
    return name[:40]


@pytest.mark.parametrize("name", NAMES, ids=_ids)
def test_excalidraw_opens_what_we_wrote(written, name):
    _, _, r, _ = written[name]
    assert r["ok"], r["load"]
    assert r["consoleErrors"] == []
    assert r["restore"]["dropped"] == [] and r["restore"]["added"] == []
    assert r["editor"] == {"changed": [], "missing": [], "added": []}


@pytest.mark.parametrize("name", NAMES, ids=_ids)
def test_restore_changes_nothing_we_wrote_beyond_normalized_fields(written, name):
    # An element we wrote verbatim (unchanged since import) may get what restore also did
    # to it in the original file (legacy fields migrated); anything we rebuilt may get only
    # the normalized fields.
    _, _, r, orig = written[name]
    before = {ch["id"]: ch["fields"] for ch in orig["restore"]["changed"]}
    bad = []
    for ch in r["restore"]["changed"]:
        was = before.get(ch["id"], {})
        for field, change in ch["fields"].items():
            if _normalized(field, change, ch["fields"]):
                continue
            if field in was and was[field].get("after") == change.get("after"):
                continue
            bad.append((ch["id"], ch["type"], field, change))
    assert bad == []


@pytest.mark.parametrize("name", NAMES, ids=_ids)
def test_excalidraw_puts_every_element_where_our_canvas_says(written, name):
    c, _, r, _ = written[name]
    rows = compare_bounds(c, r)
    for kind in ("rectangle-like", "rotated", "text"):
        assert [x for x in rows[kind] if not x["ok"]] == [], kind
    linear = rows["linear"] + rows["freedraw"]
    if linear:
        assert sum(x["ok"] for x in linear) / len(linear) >= 0.98, [x for x in linear if not x["ok"]]


@pytest.mark.parametrize("name", NAMES, ids=_ids)
def test_edits_arrive_in_excalidraw(written, name):
    c, done, r, orig = written[name]
    els = {e["id"]: e for e in r["elements"]}
    was = {e["id"]: e for e in orig["elements"]}
    # the moved shape moved by exactly the offset, in Excalidraw's own numbers
    moved, before = els[done["move"]]["bounds"], was[done["move"]]["bounds"]
    shift = [moved[0] - before[0], moved[1] - before[1], moved[2] - before[2], moved[3] - before[3]]
    assert bounds_error(shift, [MOVE[0], MOVE[1], MOVE[0], MOVE[1]]) < 1e-6
    # the changed text is what Excalidraw shows: the element itself or its bound text
    shown = [e for e in r["elements"] if not e["isDeleted"] and e["type"] == "text"
             and (e["id"] == done["retext"] or e.get("containerId") == done["retext"])]
    assert [e.get("originalText") for e in shown] == [NEW_TEXT]
    # the deleted target is gone, and no arrow is left bound to it
    assert done["delete"] not in els or els[done["delete"]]["isDeleted"]
    for e in r["elements"]:
        for key in ("startBinding", "endBinding"):
            assert not (e.get(key) and e[key].get("elementId") == done["delete"]), (e["id"], key)
    # the nodes parse_html added are elements inside the frame, where our canvas puts them
    for nid in done["created"]:
        node = c.node(nid)
        if node.type == "frame":
            continue
        el = els.get(nid) or next(e for e in r["elements"] if e.get("containerId") == nid)
        assert el["frameId"] == done["frame"], nid
        if nid in els:
            assert bounds_error(c.page_bounds(nid), els[nid]["bounds"]) < 1e-6, nid

