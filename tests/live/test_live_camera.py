"""An agent's ``set_viewport`` moves the person's view in the live editors (the ``camera`` message)."""

from __future__ import annotations

import time

import pytest

from tests.live.support import BOARD, FRAMES, api, wait_synced

from spatialobs.canvas.editing.editor import document_screen

TLDRAW_CAMERA = "(() => { const c = editor.getCamera(); return [c.x, c.y, c.z] })()"
EXCALIDRAW_CAMERA = "(() => { const a = excalidrawAPI.getAppState(); return [a.scrollX, a.scrollY, a.zoom.value] })()"


def close(a, b, tol=1e-6):
    return all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b))


def box(v):
    return [v["x"], v["y"], v["w"], v["h"]]


def open_page(live, browser, file, name):
    """Open ``file`` as ``name`` and its live page at the document's own screen size (so its aspect is the camera's)."""
    base, service, root = live
    api(base, "POST", "/v1/documents", {"path": file, "name": name})
    sw, sh = document_screen(service._doc(name).canvas)
    return browser.page(base, name, width=int(sw), height=int(sh))


def wait_presence(service, name, want, timeout=10.0):
    """The person's viewport as the service holds it, once it is ``want`` (fails after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        p = service.live.presence(name)
        got = box(p["viewport"]) if p else None
        if got is not None and close(got, want):
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"the person's viewport is {got}, not {want}")
        time.sleep(0.02)


def own_presence(service, name, pg, timeout=10.0):
    """The viewport the service holds from this page's editor (waits for its first presence)."""
    sid = pg.evaluate("window.spatialobsLive.session")
    deadline = time.monotonic() + timeout
    while True:
        p = service.live.presence(name)
        if p is not None and p["session"] == sid:
            return box(p["viewport"])
        if time.monotonic() > deadline:
            raise AssertionError(f"no presence from session {sid} of {name}")
        time.sleep(0.02)


def observed_viewport(base, name):
    """The viewport the next observe takes from the person's editor (the observation rounds it to whole units)."""
    obs = api(base, "GET", f"/v1/documents/{name}/observe")
    assert "viewport" in obs["live"]["used"]
    return box(obs["observation"]["viewport"])


def rounded(a, b):
    return all(abs(x - y) <= 0.5 + 1e-9 for x, y in zip(a, b))


@pytest.mark.parametrize("editor", ["tldraw", "excalidraw"])
def test_set_viewport_over_http_moves_the_live_view_and_the_next_observe(live, browser, editor):
    base, service, root = live
    name = f"cam-{editor}"
    file, camera = (f"{FRAMES}.tldr", TLDRAW_CAMERA) if editor == "tldraw" else (f"{BOARD}.excalidraw", EXCALIDRAW_CAMERA)
    pg = open_page(live, browser, file, name)
    page = service._doc(name).canvas.current_page
    before = pg.evaluate(camera)
    rep = api(base, "POST", f"/v1/documents/{name}/apply",
              {"ops": [{"op": "set_viewport", "x": 400, "y": 100, "zoom": 2},
                       {"op": "create_artboard", "id": "a", "name": "Agent", "x": 0, "y": 900, "w": 300, "h": 200}]})
    assert rep["applied"] == [0, 1] and rep["errors"] == []
    want = box(rep["viewport"][page])
    assert close(want, [400, 100, 640, 360])
    # the editor's camera: tldraw's is the negated top left and the zoom; Excalidraw's scroll likewise
    pg.wait_for_function(f"{camera}[2] === 2", timeout=5000)
    assert close(pg.evaluate(camera), [-400, -100, 2]) and not close(before, [-400, -100, 2])
    wait_presence(service, name, want)
    assert rounded(observed_viewport(base, name), want)
    # a second move, then its undo: the view goes back to the first
    rep2 = api(base, "POST", f"/v1/documents/{name}/apply",
               {"ops": [{"op": "set_viewport", "center": [190, 150], "zoom": 4}]})
    want2 = box(rep2["viewport"][page])
    assert close(want2, [190 - 160, 150 - 90, 320, 180])
    pg.wait_for_function(f"{camera}[2] === 4", timeout=5000)
    assert close(pg.evaluate(camera), [-want2[0], -want2[1], 4])
    wait_presence(service, name, want2)
    assert rounded(observed_viewport(base, name), want2)
    undo = api(base, "POST", f"/v1/documents/{name}/undo", {})
    assert undo["undone"] and close(box(undo["viewport"][page]), want)
    pg.wait_for_function(f"{camera}[2] === 2", timeout=5000)
    assert close(pg.evaluate(camera), [-400, -100, 2])
    wait_presence(service, name, want)
    assert rounded(observed_viewport(base, name), want)
    pg.close()


def quiet(got: list, still: float = 0.3, limit: float = 5.0) -> None:
    """Wait until no presence has reached ``got`` for ``still`` seconds (at most ``limit`` in all)."""
    end = time.monotonic() + limit
    n, last = len(got), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.05)
        if len(got) != n:
            n, last = len(got), time.monotonic()
        elif time.monotonic() - last >= still:
            return


@pytest.mark.parametrize("editor", ["tldraw", "excalidraw"])
def test_every_presence_the_service_gets_is_a_view_the_editor_shows(live, browser, editor, monkeypatch):
    """No presence carries a view the editor is leaving: neither the default view before the loaded scene's
    fit, nor the view before an agent's ``set_viewport`` (Excalidraw draws both with its next render)."""
    base, service, root = live
    name = f"cam-seen-{editor}"
    file = f"{FRAMES}.tldr" if editor == "tldraw" else f"{BOARD}.excalidraw"
    got: list = []
    receive = service.live._presence

    def spy(sess, msg):
        got.append((sess.id, [float(msg["viewport"][k]) for k in ("x", "y", "w", "h")]))
        return receive(sess, msg)

    monkeypatch.setattr(service.live, "_presence", spy)
    pg = open_page(live, browser, file, name)
    sid = pg.evaluate("window.spatialobsLive.session")
    shown = box(pg.evaluate("window.spatialobsLive.adapter.presence()")["viewport"])
    wait_presence(service, name, shown)
    # the editor may send the view it shows more than once (a later session change, the throttle's
    # trailing message): those still in flight are awaited and checked too, before the agent moves it
    quiet(got)
    mine = [v for s, v in got if s == sid]
    assert mine and all(close(v, shown) for v in mine), (mine, shown)
    del got[:]
    page = service._doc(name).canvas.current_page
    rep = api(base, "POST", f"/v1/documents/{name}/apply", {"ops": [{"op": "set_viewport", "x": 400, "y": 100, "zoom": 2}]})
    want = box(rep["viewport"][page])
    assert not close(want, shown)
    wait_presence(service, name, want)
    time.sleep(0.2)  # any later presence of this change has arrived
    mine = [v for s, v in got if s == sid]
    assert mine and all(close(v, want) for v in mine), (mine, want)
    pg.close()


def test_set_viewport_in_a_model_reply_moves_the_live_view(live, browser):
    base, service, root = live
    name = "cam-reply"
    pg = open_page(live, browser, f"{FRAMES}.tldr", name)
    reply = ("Here is the second frame.\n```canvas_ops\n"
             '{"ops": [{"op": "set_viewport", "fit": ["shape:frame1"], "padding": 0}]}\n```\n')
    rep = api(base, "POST", f"/v1/documents/{name}/apply", {"reply": reply})
    assert rep["applied"] == [0]
    want = box(rep["viewport"][service._doc(name).canvas.current_page])
    # the frame (420, 0, 380 × 300) fills the height, centered: 300 units over 720 pixels
    assert close(want, [610 - 266.6666666666667, 0, 533.3333333333334, 300])
    z = 720 / 300
    pg.wait_for_function(f"Math.abs({TLDRAW_CAMERA}[2] - {z}) < 1e-9", timeout=5000)
    assert close(pg.evaluate(TLDRAW_CAMERA), [-want[0], -want[1], z])
    wait_presence(service, name, want)
    assert rounded(observed_viewport(base, name), want)
    pg.close()


def test_set_viewport_over_mcp_moves_the_live_view_and_the_agents_next_observe(live, browser):
    import concurrent.futures
    import json

    import anyio
    from mcp import Client

    base, service, root = live
    name = "cam-mcp"
    pg = open_page(live, browser, f"{BOARD}.excalidraw", name)
    page = service._doc(name).canvas.current_page

    async def agent() -> dict:
        async with Client(base + "/mcp") as s:
            rep = await s.call_tool("apply", {"document": name, "ops": [
                {"op": "set_viewport", "x": -200, "y": 40, "w": 960, "h": 540}]})
            return json.loads(rep.content[0].text)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright's loop owns this thread
        rep = pool.submit(anyio.run, agent).result(60)
    want = box(rep["viewport"][page])
    assert close(want, [-200, 40, 960, 540])
    z = 1280 / 960
    pg.wait_for_function(f"Math.abs({EXCALIDRAW_CAMERA}[2] - {z}) < 1e-9", timeout=5000)
    assert close(pg.evaluate(EXCALIDRAW_CAMERA), [200, -40, z])
    wait_presence(service, name, want)

    async def look() -> dict:
        async with Client(base + "/mcp") as s:
            return json.loads((await s.call_tool("observe", {"document": name})).content[0].text)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        obs = pool.submit(anyio.run, look).result(60)
    assert "viewport" in obs["live"]["used"] and rounded(box(obs["observation"]["viewport"]), want)
    pg.close()


def test_a_screen_of_another_aspect_shows_the_whole_box_centered(live, browser):
    base, service, root = live
    name = "cam-aspect"
    api(base, "POST", "/v1/documents", {"path": f"{FRAMES}.tldr", "name": name})
    pg = browser.page(base, name, width=1000, height=800)
    rep = api(base, "POST", f"/v1/documents/{name}/apply", {"ops": [{"op": "set_viewport", "x": 0, "y": 0, "zoom": 2}]})
    want = box(rep["viewport"][service._doc(name).canvas.current_page])
    assert close(want, [0, 0, 640, 360])
    # 1000 pixels for 640 units: the box's width fills the screen; its height is centered in 512 units
    z = 1000 / 640
    pg.wait_for_function(f"Math.abs({TLDRAW_CAMERA}[2] - {z}) < 1e-9", timeout=5000)
    seen = wait_presence(service, name, [0, 180 - 256, 640, 512])
    assert seen[0] <= want[0] and seen[1] <= want[1]
    assert seen[0] + seen[2] >= want[0] + want[2] and seen[1] + seen[3] >= want[1] + want[3]
    pg.close()


@pytest.mark.parametrize("editor", ["tldraw", "excalidraw"])
@pytest.mark.parametrize("op, message", [
    ({"op": "set_viewport"}, "op 0 (set_viewport): set_viewport needs x/y (with zoom or w/h), center, dx/dy, zoom or fit"),
    ({"op": "set_viewport", "x": 0, "y": 0, "zoom": -2}, "op 0 (set_viewport): zoom must be > 0, got -2.0"),
    ({"op": "set_viewport", "fit": ["shape:nope"]}, "op 0 (set_viewport): no node or alias 'shape:nope'"),
])
def test_a_bad_set_viewport_fails_with_its_message_and_moves_nothing(live, browser, editor, op, message):
    base, service, root = live
    name = f"cam-bad-{editor}"
    file, camera = (f"{FRAMES}.tldr", TLDRAW_CAMERA) if editor == "tldraw" else (f"{BOARD}.excalidraw", EXCALIDRAW_CAMERA)
    if name not in service._docs:
        api(base, "POST", "/v1/documents", {"path": file, "name": name})
    pg = browser.page(base, name)
    before = pg.evaluate(camera)
    seen = own_presence(service, name, pg)
    cams = dict(service._doc(name).canvas.cameras)
    rep = api(base, "POST", f"/v1/documents/{name}/apply", {"ops": [op]})
    assert rep["applied"] == [] and "viewport" not in rep
    assert rep["errors"] == [message]
    # a later apply is published after it: once the editor has that, a camera would have come before
    rep2 = api(base, "POST", f"/v1/documents/{name}/apply",
               {"ops": [{"op": "create_artboard", "name": "After", "x": 0, "y": 1200, "w": 100, "h": 100}]})
    created = rep2["created"][0]
    has = ("(id) => !!editor.getShape(id)" if editor == "tldraw"
           else "(id) => excalidrawAPI.getSceneElements().some(e => e.id === id)")
    pg.wait_for_function(has, arg=created, timeout=5000)
    wait_synced(pg)
    assert pg.evaluate(camera) == before
    assert service._doc(name).canvas.cameras == cams
    assert close(box(service.live.presence(name)["viewport"]), seen)
    pg.close()
