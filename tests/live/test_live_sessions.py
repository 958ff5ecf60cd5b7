"""Several editors on one document, a socket dropped mid-edit, and agents over MCP."""

from __future__ import annotations

import json


from tests.live.support import FRAMES, api, editor_records, wait_synced


def test_two_tabs_on_one_document_see_each_others_edits_and_the_agents(live, browser):
    base, service, root = live
    name = "tabs"
    api(base, "POST", "/v1/documents", {"path": f"{FRAMES}.tldr", "name": name})
    a = browser.page(base, name)
    b = browser.page(base, name)
    a.evaluate("""() => { editor.createShape({id: 'shape:from-a', type: 'note', x: 10, y: 10}) }""")
    b.wait_for_function("!!editor.getShape('shape:from-a')", timeout=5000)
    b.evaluate("""() => { editor.updateShape({id: 'shape:from-a', type: 'note', x: 300}) }""")
    a.wait_for_function("editor.getShape('shape:from-a').x === 300", timeout=5000)
    api(base, "POST", f"/v1/documents/{name}/apply", {"ops": [{"op": "set_text", "id": "shape:from-a", "text": "agent"}]})
    for pg in (a, b):
        pg.wait_for_function("editor.getShape('shape:from-a').props.richText.content[0].content?.[0]?.text === 'agent'",
                             timeout=5000)
    # another tab's edit is not in this tab's undo history; the agent's is
    wait_synced(a)
    wait_synced(b)
    assert editor_records(a) == editor_records(b)
    assert {r["id"]: r for r in editor_records(a)} == service.live._docs[name].mirror.records
    a.close()
    b.close()


def test_a_socket_dropped_mid_edit_reconnects_and_resumes_without_a_reload(live, browser):
    base, service, root = live
    name = "drop"
    api(base, "POST", "/v1/documents", {"path": f"{FRAMES}.tldr", "name": name})
    pg = browser.page(base, name)
    pg.evaluate("() => { window.__marker = 1; spatialobsLive.dropConnection() }")
    # edits while it is down: the person's in the editor, the agent's in the service
    pg.evaluate("""() => { editor.createShape({id: 'shape:offline', type: 'geo', x: 50, y: 50,
                                               props: {w: 40, h: 40}}) }""")
    api(base, "POST", f"/v1/documents/{name}/apply",
        {"ops": [{"op": "create_artboard", "id": "b", "name": "Made while away", "x": 0, "y": 800, "w": 100, "h": 100}]})
    pg.wait_for_function("spatialobsLive.status === 'open' && spatialobsLive.stats.reconnects >= 1", timeout=10000)
    wait_synced(pg)
    assert pg.evaluate("window.__marker") == 1  # the same page: no reload
    assert pg.evaluate("!!editor.getShape('shape:b')")
    assert "shape:offline" in service._doc(name).canvas.nodes
    assert {r["id"]: r for r in editor_records(pg)} == service.live._docs[name].mirror.records
    pg.close()


def test_an_agent_over_mcp_applies_and_sees_the_person_live(live, browser):
    import concurrent.futures

    import anyio
    from mcp import Client

    base, service, root = live
    name = "mcp"
    api(base, "POST", "/v1/documents", {"path": f"{FRAMES}.tldr", "name": name})
    pg = browser.page(base, name)
    pg.evaluate("() => { editor.setCamera({x: 0, y: 0, z: 1}, {immediate: true}) }")
    pg.wait_for_timeout(100)

    async def agent() -> dict:
        async with Client(base + "/mcp") as s:
            obs = await s.call_tool("observe", {"document": name})
            seen = json.loads(obs.content[0].text)
            rep = await s.call_tool("apply", {"document": name, "ops": [
                {"op": "create_artboard", "id": "m", "name": "From MCP", "x": 20, "y": 20, "w": 200, "h": 100}]})
            shot = await s.call_tool("screenshot", {"document": name})
            return {"seen": seen, "rep": json.loads(rep.content[0].text), "shot": [c.type for c in shot.content]}

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright's loop owns this thread
        out = pool.submit(anyio.run, agent).result(60)
    assert out["seen"]["live"]["editor"] == "tldraw"
    assert out["seen"]["observation"]["viewport"] == {"x": 0, "y": 0, "w": 1280, "h": 720}
    assert out["rep"]["applied"] == [0]
    pg.wait_for_function("(id) => editor.getShape(id)?.props.name === 'From MCP'", arg=out["rep"]["created"][0],
                         timeout=5000)
    assert out["shot"][0] == "image"
    pg.close()
