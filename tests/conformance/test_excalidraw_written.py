"""Files written by ``Canvas.to_excalidraw`` after edits, opened by the real Excalidraw editor.

Each shared scene is loaded, edited (a shape moved, a text changed, a free text's font
size changed, a container's label replaced by one that wraps and grows it, a binding
target deleted, nodes added by a ``parse_html`` op, an arrow created between two
shapes) and written. Excalidraw must open the file with no error, restore must not
alter what we wrote beyond the fields Excalidraw always normalizes (:data:`NORMALIZED`),
and Excalidraw must put every element where our canvas says it is: boxes within 1
unit, lines and arrows within 2, text within max(4, 10 %); the agreement per kind is
printed (``pytest -s``). Bound text, which is its container's text here, must lie
inside its container.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

import pytest

from spatialobs.canvas import Executor, load
from spatialobs.canvas.document.excalidraw_text import bound_text_layout
from tests.conformance.excalidraw_harness import bounds_error, compare_bounds
from tests.conftest import shared_files

SHARED = shared_files("canvases", "*.excalidraw")
MOVE = (40.0, -25.0)
NEW_TEXT = "edited by an agent"
LONG_LABEL = "a much longer label that an agent wrote, which wraps inside its container and makes it grow"
FONT_SIZE = 36
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
    "boundElements": "null becomes []; built from the legacy boundElementIds (arrows) when missing",
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
        if "before" not in change and isinstance(after, list):  # restore migrates boundElementIds
            return all(isinstance(b, dict) and b.get("type") == "arrow" for b in after)
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
    busy = {move, delete, retext}
    resize = next((i for i, n in nodes.items() if n.type == "text" and n.text and i not in busy), None)
    labelled = [i for i, n in nodes.items() if n.type in ("rectangle", "ellipse", "diamond") and n.text
                and i not in busy and canvas.page_rotation(i) == 0.0]
    relabel = min(labelled, key=lambda i: (nodes[i].w, i)) if labelled else None  # the narrowest: the label wraps
    ends = [i for i in boxes if i not in busy and i != relabel][:2]
    edits: List[Dict[str, Any]] = []
    if resize is not None:
        edits.append({"op": "update_styles", "ids": [resize], "styles": {"fontSize": FONT_SIZE}})
    if relabel is not None:
        done["relabel_from"] = canvas.page_bounds(relabel)
        edits.append({"op": "set_text", "id": relabel, "text": LONG_LABEL})
    if len(ends) == 2:
        edits.append({"op": "create_arrow", "id": "new-arrow", "from": ends[0], "to": ends[1]})
    report = Executor(canvas).apply(edits)
    assert not report.errors, report.errors
    done.update(resize=resize, relabel=relabel, arrow=report.aliases.get("new-arrow"), ends=ends)
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
    c, done, r, _ = written[name]
    rows = compare_bounds(c, r)
    for kind in ("rectangle-like", "rotated", "text", "linear", "freedraw"):
        assert [x for x in rows[kind] if not x["ok"]] == [], kind
    # the elements the edits touched or made are among them
    edited = {done["move"], done["retext"], *done["created"]} | {done[k] for k in ("resize", "relabel", "arrow")
                                                                  if done.get(k)}
    compared = {x["id"] for kind in ("rectangle-like", "rotated", "text", "linear") for x in rows[kind]}
    assert edited - compared <= {done["retext"], *done["created"]} - {i for i in edited if c.node(i).type != "group"}


def test_agreement_after_edits_per_kind(written):
    # every element of every written file, per kind: how many agree within the kind's tolerance
    total: Dict[str, List[int]] = {}
    for name, (c, _, r, _) in sorted(written.items()):
        rows = compare_bounds(c, r)
        line = []
        for kind in ("rectangle-like", "rotated", "linear", "freedraw", "text"):
            ok = sum(x["ok"] for x in rows[kind])
            t = total.setdefault(kind, [0, 0])
            t[0] += ok
            t[1] += len(rows[kind])
            if rows[kind]:
                worst = max(x["error"] for x in rows[kind])
                line.append(f"{kind} {ok}/{len(rows[kind])} (worst {worst:.3g})")
        print(f"{name[:40]}: " + ", ".join(line))
    print("all files: " + ", ".join(f"{k} {ok}/{n}" for k, (ok, n) in total.items() if n))
    assert all(ok == n for ok, n in total.values())


@pytest.mark.parametrize("name", NAMES, ids=_ids)
def test_bound_text_lies_inside_its_container(written, name):
    c, done, r, _ = written[name]
    els = {e["id"]: e for e in r["elements"] if not e["isDeleted"]}
    checked = 0
    for e in els.values():
        cid = e.get("containerId")
        if e["type"] != "text" or cid not in els or els[cid]["type"] == "arrow" or cid not in c.nodes:
            continue
        box, tb = c.page_bounds(cid), e["bounds"]
        assert box[0] - 1e-6 <= tb[0] and tb[2] <= box[2] + 1e-6 and box[1] - 1e-6 <= tb[1] and tb[3] <= box[3] + 1e-6, (
            cid, box, tb)
        assert bounds_error(els[cid]["bounds"], box) <= 1.0, cid
        checked += 1
    if done.get("relabel"):
        # the long label wraps at the container's width and the container grew downwards to hold it
        label = next(e for e in els.values() if e.get("containerId") == done["relabel"])
        assert "\n" in label["text"] and label["originalText"] == LONG_LABEL
        grown = c.page_bounds(done["relabel"])
        was = done["relabel_from"]
        node = c.node(done["relabel"])
        lay = bound_text_layout(LONG_LABEL, els[done["relabel"]]["type"], was[2] - was[0], was[3] - was[1],
                                label["fontFamily"], label["fontSize"], label["lineHeight"])
        assert lay["text"] == label["text"]
        assert grown[:3] == pytest.approx(was[:3]) and grown[3] == pytest.approx(was[1] + lay["container_h"])
        assert node.h >= was[3] - was[1]
        assert bounds_error(els[done["relabel"]]["bounds"], grown) <= 1.0
    assert checked or not any(e.get("containerId") for e in els.values())


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

