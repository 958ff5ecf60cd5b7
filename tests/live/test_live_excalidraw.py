"""The real Excalidraw editor on the live page: person and agent editing one document."""

from __future__ import annotations

import base64
import io

from tests.live.support import BOARD, api, editor_records, wait_synced

from spatialobs.canvas.formats.excalidraw import from_excalidraw

AIR = BOARD


def node(service, doc, nid):
    return service._doc(doc).canvas.nodes.get(nid)


def test_page_shows_the_scene_and_the_service_holds_the_editors_elements(live, browser):
    base, service, root = live
    pg = browser.page(base, AIR)
    els = editor_records(pg)
    mirror = service.live._docs[AIR].mirror
    assert {e["id"]: e for e in els} == mirror.records
    fresh = from_excalidraw({"type": "excalidraw", "elements": els})
    d = service._doc(AIR)
    assert dict(d.canvas.nodes) == dict(fresh.nodes) and dict(d.canvas.bindings) == dict(fresh.bindings)
    pg.close()


def test_person_edits_agent_applies_undo_and_screenshot(live, browser):
    from PIL import Image

    base, service, root = live
    name = "air2"
    api(base, "POST", "/v1/documents", {"path": f"{AIR}.excalidraw", "name": name})
    pg = browser.page(base, name)
    token = api(base, "GET", f"/v1/documents/{name}/observe")["token"]
    rect = pg.evaluate("excalidrawAPI.getSceneElements().find(e => e.type === 'rectangle' && !e.groupIds.length).id")
    x0 = pg.evaluate("(id) => excalidrawAPI.getSceneElements().find(e => e.id === id).x", rect)
    # the person moves it (a scene update as the editor's own actions make one: a new version)
    pg.evaluate("""(id) => { const els = excalidrawAPI.getSceneElementsIncludingDeleted().map(e => e.id === id ?
        {...e, x: e.x + 55, version: e.version + 1, versionNonce: e.versionNonce + 1} : e)
        excalidrawAPI.updateScene({elements: els, captureUpdate: 'IMMEDIATELY'}) }""", rect)
    wait_synced(pg)
    assert abs(service._doc(name).canvas.page_bounds(rect)[0] - (x0 + 55)) < 1e-6
    ch = api(base, "GET", f"/v1/documents/{name}/observe?since={token}")["observation"]["changes"]
    assert {c["id"]: c["kinds"] for c in ch["changes"]}[rect] == {"moved": "person"}
    # the agent recolors it and adds a frame: both appear at once, as one undo step
    rep = api(base, "POST", f"/v1/documents/{name}/apply", {"ops": [
        {"op": "update_styles", "id": rect, "styles": {"color": "#e03131"}},
        {"op": "create_artboard", "id": "a", "name": "Agent", "x": 0, "y": 900, "w": 300, "h": 200}]})
    assert rep["applied"] == [0, 1]
    pg.wait_for_function("(id) => excalidrawAPI.getSceneElements().find(e => e.id === id).strokeColor === '#e03131'",
                         arg=rect, timeout=5000)
    created = rep["created"][0]
    pg.wait_for_function("(id) => excalidrawAPI.getSceneElements().some(e => e.id === id)", arg=created, timeout=5000)
    wait_synced(pg)
    token = api(base, "GET", f"/v1/documents/{name}/observe")["token"]
    pg.mouse.click(5, 400)  # the canvas takes the keyboard (an empty spot at the left edge)
    pg.keyboard.press("Control+z")
    pg.wait_for_function("(id) => !excalidrawAPI.getSceneElements().some(e => e.id === id)", arg=created, timeout=5000)
    wait_synced(pg)
    assert node(service, name, created) is None
    assert node(service, name, rect).style.get("color") != "#e03131"
    ch = api(base, "GET", f"/v1/documents/{name}/observe?since={token}")["observation"]["changes"]
    kinds = {c["id"]: c["kinds"] for c in ch["changes"]}
    assert kinds[created] == {"removed": "person"} and kinds[rect] == {"restyled": "person"}
    # the observation reads the person's scroll and zoom; the screenshot is Excalidraw's drawing of it
    obs = api(base, "GET", f"/v1/documents/{name}/observe")
    assert obs["live"]["editor"] == "excalidraw" and "viewport" in obs["live"]["used"]
    shot = api(base, "GET", f"/v1/documents/{name}/screenshot")
    img = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
    assert (img.width, img.height) == (1280, 720)
    assert len(img.getcolors(maxcolors=1 << 20)) > 20
    pg.close()


def test_real_pointer_input_drags_an_element(live, browser):
    base, service, root = live
    name = "air3"
    api(base, "POST", "/v1/documents", {"path": f"{AIR}.excalidraw", "name": name})
    pg = browser.page(base, name)
    pg.evaluate("""() => { const a = excalidrawAPI.getAppState()
        const x = -a.scrollX + a.width / a.zoom.value / 2, y = -a.scrollY + a.height / a.zoom.value * 0.8
        const el = {type: 'rectangle', id: 'card', x, y, width: 120, height: 60, angle: 0, strokeColor: '#1e1e1e',
          backgroundColor: '#a5d8ff', fillStyle: 'solid', strokeWidth: 2, strokeStyle: 'solid', roughness: 1,
          opacity: 100, groupIds: [], frameId: null, roundness: null, seed: 1, version: 1, versionNonce: 1,
          isDeleted: false, boundElements: null, updated: 1, link: null, locked: false, index: 'zz'}
        excalidrawAPI.updateScene({elements: [...excalidrawAPI.getSceneElementsIncludingDeleted(), el],
                                   captureUpdate: 'IMMEDIATELY'}) }""")
    wait_synced(pg)
    assert node(service, name, "card") is not None
    box = pg.evaluate("""() => { const a = excalidrawAPI.getAppState(), z = a.zoom.value
        const e = excalidrawAPI.getSceneElements().find(e => e.id === 'card')
        return [(e.x + 60 + a.scrollX) * z + a.offsetLeft, (e.y + 30 + a.scrollY) * z + a.offsetTop, e.x, z] }""")
    sx, sy, ex, z = box
    pg.mouse.move(sx, sy)
    pg.mouse.down()
    for k in range(1, 11):
        pg.mouse.move(sx + 10 * k * z, sy)
    pg.mouse.up()
    wait_synced(pg)
    moved = pg.evaluate("excalidrawAPI.getSceneElements().find(e => e.id === 'card').x")
    assert abs(moved - (ex + 100)) < 1.5
    assert abs(service._doc(name).canvas.page_bounds("card")[0] - moved) < 1e-6
    pg.close()
