"""Seeded random interleavings of a person's edits in the real editor and an agent's applies.

On real files of both formats, a person edits through the editor's API (moves,
restyles, new shapes, deletions, texts) while an agent applies ops over HTTP from
another thread, without waiting for each other. At checkpoints and at the end the
editor's records, the service's records and document, and the saved file must all
be equal (the service's document compared with the format importer's reading of the
editor's records, after the editor's own normalizations), and the saved file must
open in the real editor again.
"""

from __future__ import annotations

import concurrent.futures
import json
import random
import time
from typing import Any, Dict, List

import pytest

from tests.conftest import SHARED_DATA
from tests.live.support import editor_records, wait_synced

from spatialobs.canvas.formats.excalidraw import from_excalidraw
from spatialobs.canvas.formats.mirror import DOCUMENT_TYPES, TldrawMirror

#: (file, steps): three tldraw files and three Excalidraw scenes of the shared data, 240 steps in all.
FILES = [
    ("1797127235__argus__architecture.tldr", 40),
    ("a-type__react-space__design.tldr", 40),
    ("metatypedev__ghjk__architecture.tldr", 40),
    ("davidalecrim1__red-airlines__system-design.excalidraw", 40),
    ("automationcloud__robot__diagram.excalidraw", 40),
    ("kjameer0__db-excalidraw__system-design.excalidraw", 40),
]
COLORS = ["red", "blue", "green", "violet", "orange"]
HEX = ["#e03131", "#1971c2", "#2f9e44", "#9c36b5", "#f08c00"]

TLDRAW_PERSON = """([op, id, a, b]) => {
  const s = id && editor.getShape(id)
  if (op === 'move' && s) editor.updateShape({id, type: s.type, x: s.x + a, y: s.y + b})
  else if (op === 'color' && s && 'color' in s.props) editor.updateShape({id, type: s.type, props: {color: a}})
  else if (op === 'delete' && s) editor.deleteShapes([id])
  else if (op === 'front' && s) editor.bringToFront([id])
  else if (op === 'text' && s && s.type === 'geo') editor.updateShape({id, type: 'geo', props: {richText: {type: 'doc',
      content: [{type: 'paragraph', content: [{type: 'text', text: a}]}]}}})
  else if (op === 'create') editor.createShape({id: a, type: 'geo', x: b[0], y: b[1], props: {w: 80, h: 50, color: 'blue'}})
}"""

EXCALIDRAW_PERSON = """([op, id, a, b]) => {
  const all = excalidrawAPI.getSceneElementsIncludingDeleted()
  const bump = (e, f) => ({...e, ...f, version: e.version + 1, versionNonce: Math.floor(Math.random() * 2 ** 31),
                           updated: Date.now()})
  const s = all.find(e => e.id === id && !e.isDeleted)
  let next = null
  if (op === 'move' && s) {
    const moved = new Set([id, ...(s.boundElements || []).filter(x => x.type === 'text').map(x => x.id)])
    next = all.map(e => moved.has(e.id) ? bump(e, {x: e.x + a, y: e.y + b}) : e)
  } else if (op === 'color' && s) next = all.map(e => e.id === id ? bump(e, {strokeColor: a}) : e)
  else if (op === 'delete' && s) {
    const gone = new Set([id, ...(s.boundElements || []).filter(x => x.type === 'text').map(x => x.id)])
    next = all.map(e => gone.has(e.id) ? bump(e, {isDeleted: true}) : e)
  } else if (op === 'create') next = [...all, {type: 'rectangle', id: a, x: b[0], y: b[1], width: 80, height: 50,
      angle: 0, strokeColor: '#1e1e1e', backgroundColor: 'transparent', fillStyle: 'solid', strokeWidth: 2,
      strokeStyle: 'solid', roughness: 1, opacity: 100, groupIds: [], frameId: null, roundness: null,
      seed: 7, version: 1, versionNonce: 7, isDeleted: false, boundElements: null, updated: Date.now(), link: null,
      locked: false, index: null}]
  if (next) excalidrawAPI.updateScene({elements: next, captureUpdate: 'IMMEDIATELY'})
}"""


def settle(pg: Any, service: Any, name: str, timeout: float = 30.0) -> None:
    """Wait until the editor has every version the service made and the service every edit of the editor."""
    deadline = time.monotonic() + timeout
    while True:
        wait_synced(pg, timeout)
        if pg.evaluate("spatialobsLive.version") == service.live.version(name):
            pg.wait_for_timeout(60)  # one more frame: an editor's normalization of the last change
            wait_synced(pg, timeout)
            if pg.evaluate("spatialobsLive.version") == service.live.version(name):
                return
        if time.monotonic() > deadline:
            raise AssertionError("the editor and the service did not settle")
        pg.wait_for_timeout(20)


def check_equal(pg: Any, service: Any, root: Any, name: str, editor: str, step: int) -> List[Dict[str, Any]]:
    recs = editor_records(pg)
    mirror = service.live._docs[name].mirror
    by_id = {r["id"]: r for r in recs}
    assert by_id == mirror.records, f"step {step}: the editor's records and the service's differ"
    d = service._doc(name)
    if editor == "tldraw":
        fresh = TldrawMirror.read(recs, mirror.schema)
    else:
        fresh = from_excalidraw({"type": "excalidraw", "elements": recs})
    assert dict(d.canvas.nodes) == dict(fresh.nodes), f"step {step}: the service's document is not the editor's"
    assert dict(d.canvas.bindings) == dict(fresh.bindings), f"step {step}: bindings differ"
    saved = service.call("save", {"document": name, "path": f"saved-{name}"})
    data = json.loads((root / saved["path"]).read_text(encoding="utf-8"))
    if editor == "tldraw":
        # the file also keeps each page's camera as the service holds it (the editor's cameras are session records)
        file_recs = [r for r in data["records"] if r.get("typeName") in DOCUMENT_TYPES]
        assert all(r.get("typeName") in DOCUMENT_TYPES | {"camera"} for r in data["records"])
    else:
        file_recs = data["elements"]
    assert {r["id"]: r for r in file_recs} == by_id, f"step {step}: the saved file is not the editor's document"
    return recs


@pytest.mark.parametrize("file,steps", FILES, ids=[f.split("__")[1] for f, _ in FILES])
def test_random_interleavings_converge(live, browser, file, steps):
    if not (SHARED_DATA / "canvases" / file).is_file():
        pytest.skip(f"{file} is not in the shared data")
    base, service, root = live
    editor = "tldraw" if file.endswith(".tldr") else "excalidraw"
    name = "mix-" + file.split("__")[1]
    service.call("open_document", {"path": file, "name": name})
    pg = browser.page(base, name)
    rng = random.Random(f"{file}:{steps}")
    person = TLDRAW_PERSON if editor == "tldraw" else EXCALIDRAW_PERSON
    pool = concurrent.futures.ThreadPoolExecutor(2)
    inflight: List[Any] = []
    made = 0
    op_errors = 0
    for step in range(steps):
        ids = [r["id"] for r in editor_records(pg) if (r.get("typeName") == "shape" if editor == "tldraw"
                                                        else not r.get("isDeleted") and r.get("type") != "text")]
        if rng.random() < 0.6 or not ids:  # the person
            op = rng.choice(["move", "move", "color", "text", "create", "delete", "front"])
            made += 1
            new_id = f"shape:p{step}" if editor == "tldraw" else f"p{step}"
            target = rng.choice(ids) if ids else None
            if op == "create":
                pg.evaluate(person, ["create", None, new_id, [rng.randint(-200, 800), rng.randint(-200, 800)]])
            elif op == "color":
                pg.evaluate(person, ["color", target, rng.choice(COLORS if editor == "tldraw" else HEX), 0])
            elif op == "text":
                pg.evaluate(person, ["text", target, f"person {step}", 0])
            else:
                pg.evaluate(person, [op, target, rng.randint(-60, 60), rng.randint(-60, 60)])
        else:  # the agent, from another thread, not waiting for the editor
            nodes = [i for i in service._doc(name).canvas.nodes if not i.startswith("group:")]
            t = rng.choice(nodes)
            kind = rng.choice(["move", "style", "text", "artboard", "delete"])
            if kind == "move":
                ops = [{"op": "move_node", "id": t, "x": rng.randint(-300, 900), "y": rng.randint(-300, 900)}]
            elif kind == "style":
                ops = [{"op": "update_styles", "id": t, "styles": {"color": rng.choice(HEX)}}]
            elif kind == "text":
                ops = [{"op": "set_text", "id": t, "text": f"agent {step}"}]
            elif kind == "artboard":
                ops = [{"op": "create_artboard", "id": f"a{step}", "name": f"Agent {step}",
                        "x": rng.randint(0, 600), "y": rng.randint(0, 600), "w": 160, "h": 100}]
            else:
                ops = [{"op": "delete_node", "id": t}]
            inflight.append(pool.submit(service.call, "apply", {"document": name, "ops": ops}))
        if rng.random() < 0.3:
            pg.wait_for_timeout(rng.choice([0, 5, 20]))
        if step % 10 == 9 or step == steps - 1:
            for f in inflight:
                rep = f.result(30)
                op_errors += len(rep["errors"])  # a target the person deleted meanwhile: that op's error
            inflight.clear()
            settle(pg, service, name)
            check_equal(pg, service, root, name, editor, step)
    pool.shutdown()
    assert not browser.errors, browser.errors[:5]
    # the saved file opens in the real editor (File › Open of the live page) as the same document
    saved = service.call("save", {"document": name, "path": f"final-{name}"})
    reopened = f"re-{name}"
    service.call("open_document", {"path": saved["path"], "name": reopened})
    pg2 = browser.page(base, reopened)
    assert pg2.evaluate("spatialobsLive.errors") == []
    a = {r["id"]: r for r in editor_records(pg)}
    b = {r["id"]: r for r in editor_records(pg2)}
    if editor == "excalidraw":
        # File › Open drops the deleted elements the live scene keeps, repairs bindings whose arrow no longer
        # meets its target and clears a frameId whose frame is gone (the random edits move shapes without
        # their arrows and delete frames without their children): same elements, same geometry and text
        keys = ("type", "x", "y", "width", "height", "angle", "text", "points", "groupIds", "frameId", "index")
        alive = {k for k, v in a.items() if not v.get("isDeleted")}
        a = {k: [v.get(f) if f != "frameId" or v.get(f) in alive else None for f in keys]
             for k, v in a.items() if k in alive}
        b = {k: [v.get(f) for f in keys] for k, v in b.items() if not v.get("isDeleted")}
    assert a == b
    pg.close()
    pg2.close()
