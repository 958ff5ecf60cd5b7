"""The real tldraw editor on the live page: person and agent editing one document."""

from __future__ import annotations

from tests.live.support import FRAMES, api, editor_records, wait_synced

from spatialobs.canvas.formats.mirror import TldrawMirror


def open_doc(live, file, name):
    base, service, root = live
    api(base, "POST", "/v1/documents", {"path": file, "name": name})
    return name


def test_page_shows_the_document_and_the_service_holds_the_editors_records(live, browser):
    base, service, root = live
    pg = browser.page(base, FRAMES)
    recs = editor_records(pg)
    d = service._doc(FRAMES)
    mirror = service.live._docs[FRAMES].mirror
    assert {r["id"]: r for r in recs} == mirror.records
    fresh = TldrawMirror.read(recs, mirror.schema)
    assert dict(d.canvas.nodes) == dict(fresh.nodes)
    assert dict(d.canvas.bindings) == dict(fresh.bindings)


def node(service, doc, nid):
    return service._doc(doc).canvas.nodes.get(nid)


def test_person_edits_through_the_editor_api_reach_the_service_as_the_persons(live, browser):
    base, service, root = live
    pg = browser.page(base, FRAMES)
    token = api(base, "GET", f"/v1/documents/{FRAMES}/observe")["token"]
    ids = pg.evaluate("[...editor.getCurrentPageShapeIds()].sort()")
    geo = pg.evaluate("""() => {
        const id = 'shape:person-box'
        editor.createShape({id, type: 'geo', x: 100, y: 600, props: {w: 120, h: 60, geo: 'rectangle', color: 'blue'}})
        return id }""")
    moved = ids[0]
    pg.evaluate("(id) => { editor.updateShape({id, type: editor.getShape(id).type, x: editor.getShape(id).x + 40}) }", moved)
    wait_synced(pg)
    n = node(service, FRAMES, geo)
    assert n is not None and (n.x, n.y, n.w, n.h) == (100, 600, 120, 60) and n.style["color"] == "blue"
    assert node(service, FRAMES, moved).x == pg.evaluate("(id) => editor.getShape(id).x", moved)
    ch = api(base, "GET", f"/v1/documents/{FRAMES}/observe?since={token}")["observation"]["changes"]
    kinds = {c["id"]: c["kinds"] for c in ch["changes"]}
    assert kinds[geo] == {"added": "person"}
    assert kinds[moved] == {"moved": "person"}
    pg.evaluate("(id) => { editor.deleteShapes([id]) }", geo)
    wait_synced(pg)
    assert node(service, FRAMES, geo) is None
    pg.close()


def test_agent_apply_over_http_appears_in_the_editor_as_one_undo_step(live, browser):
    base, service, root = live
    pg = browser.page(base, FRAMES)
    target = pg.evaluate("[...editor.getCurrentPageShapeIds()].find(id => editor.getShape(id).type === 'frame')")
    before = pg.evaluate("(id) => editor.getShape(id).x", target)
    rep = api(base, "POST", f"/v1/documents/{FRAMES}/apply",
              {"ops": [{"op": "move_node", "id": target, "x": 900, "y": 40},
                       {"op": "create_artboard", "id": "board", "name": "Agent board", "x": 0, "y": 900, "w": 300, "h": 200}]})
    assert rep["applied"] == [0, 1]
    pg.wait_for_function("(id) => editor.getShape(id).x !== %r" % before, arg=target, timeout=5000)
    created = rep["created"][0]
    pg.wait_for_function("(id) => !!editor.getShape(id)", arg=created, timeout=5000)
    wait_synced(pg)
    assert pg.evaluate("(id) => editor.getShape(id).props.name", created) == "Agent board"
    # one Ctrl+Z in the editor takes the whole apply back, and that reaches the service as the person's edit
    token = api(base, "GET", f"/v1/documents/{FRAMES}/observe")["token"]
    pg.evaluate("() => { editor.undo() }")
    wait_synced(pg)
    assert pg.evaluate("(id) => editor.getShape(id).x", target) == before
    assert pg.evaluate("(id) => editor.getShape(id) === undefined", created)
    assert node(service, FRAMES, target).x == before and node(service, FRAMES, created) is None
    ch = api(base, "GET", f"/v1/documents/{FRAMES}/observe?since={token}")["observation"]["changes"]
    assert {c["id"]: c["kinds"] for c in ch["changes"]}[created] == {"removed": "person"}
    pg.close()


def screen_point(pg, x, y):
    return pg.evaluate("([x, y]) => { const p = editor.pageToScreen({x, y}); return [p.x, p.y] }", [x, y])


def test_real_pointer_and_keyboard_input_drag_a_shape_and_type_a_label(live, browser):
    base, service, root = live
    name = "input"
    api(base, "POST", "/v1/documents", {"document": {"type": "excalidraw", "elements": []}, "name": "scratch"})
    api(base, "POST", "/v1/documents", {"path": f"{FRAMES}.tldr", "name": name})
    pg = browser.page(base, name)
    cx, cy = pg.evaluate("""() => { const v = editor.getViewportPageBounds(); const x = Math.round(v.x + v.w / 2),
        y = Math.round(v.y + v.h * 0.8); editor.createShape({id: 'shape:card', type: 'geo', x, y,
        props: {w: 160, h: 80, geo: 'rectangle', fill: 'solid'}}); editor.selectNone(); return [x, y] }""")
    wait_synced(pg)
    # drag the card by 150 page units to the right with the mouse
    x0, y0 = screen_point(pg, cx + 80, cy + 40)
    x1, y1 = screen_point(pg, cx + 230, cy + 40)
    pg.mouse.move(x0, y0)
    pg.mouse.down()
    for k in range(1, 11):
        pg.mouse.move(x0 + (x1 - x0) * k / 10, y0 + (y1 - y0) * k / 10)
    pg.mouse.up()
    wait_synced(pg)
    moved = pg.evaluate("editor.getShape('shape:card').x")
    assert abs(moved - (cx + 150)) < 2
    assert node(service, name, "shape:card").x == moved
    # type a label: the card is selected after the drag; Enter edits its label
    pg.keyboard.press("Enter")
    pg.wait_for_function("editor.getEditingShapeId() === 'shape:card' && document.activeElement?.isContentEditable",
                         timeout=5000)
    pg.keyboard.type("Ship it")
    pg.keyboard.press("Escape")
    wait_synced(pg)
    assert node(service, name, "shape:card").text == "Ship it"
    rec = service.live._docs[name].mirror.records["shape:card"]
    assert rec == pg.evaluate("JSON.parse(JSON.stringify(editor.store.get('shape:card')))")
    pg.close()


def test_observe_uses_the_persons_live_view_unless_arguments_say_otherwise(live, browser):
    base, service, root = live
    name = "view"
    api(base, "POST", "/v1/documents", {"path": f"{FRAMES}.tldr", "name": name})
    pg = browser.page(base, name, width=1000, height=600)
    first = pg.evaluate("[...editor.getCurrentPageShapeIds()].sort()[0]")
    pg.evaluate("""(id) => { editor.setCamera({x: -100, y: -50, z: 2}, {immediate: true}); editor.select(id) }""", first)
    pg.wait_for_timeout(200)
    wait_synced(pg)
    obs = api(base, "GET", f"/v1/documents/{name}/observe")
    live_info = obs["live"]
    assert live_info["editor"] == "tldraw" and set(live_info["used"]) == {"viewport", "page", "selected"}
    vp = obs["observation"]["viewport"]
    assert (vp["x"], vp["y"], vp["w"], vp["h"]) == (100, 50, 500, 300)
    flags = {o["id"]: o.get("flags", []) for o in obs["observation"]["objects"]}
    assert "selected" in flags[first]
    explicit = api(base, "GET", f"/v1/documents/{name}/observe?viewport=[0,0,50,50]&selected=[]")
    assert explicit["observation"]["viewport"] == {"x": 0, "y": 0, "w": 50, "h": 50}
    assert explicit["live"]["used"] == ["page"]
    assert all("selected" not in o.get("flags", []) for o in explicit["observation"]["objects"])
    pg.close()


def test_screenshot_is_the_editors_rendering_of_the_persons_view(live, browser):
    import base64
    import io

    from PIL import Image

    base, service, root = live
    name = "shot"
    api(base, "POST", "/v1/documents", {"path": f"{FRAMES}.tldr", "name": name})
    pg = browser.page(base, name, width=800, height=500)
    pg.evaluate("() => { editor.zoomToFit({immediate: true}) }")
    pg.wait_for_timeout(100)
    wait_synced(pg)
    shot = api(base, "GET", f"/v1/documents/{name}/screenshot")
    assert shot["mimeType"] == "image/png" and shot["editor"] == "tldraw"
    img = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
    assert abs(img.width - 800) <= 2 and abs(img.height - 500) <= 2
    colors = img.getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 20  # the frames' outlines, texts and emoji, not a blank page
    pg.close()
