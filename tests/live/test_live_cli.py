"""The whole flow as a user runs it: ``spatialobs serve --http`` (a child process), then /live/NAME in a browser."""

from __future__ import annotations

import json
import urllib.request

from tests.live.support import BOARD, Browser, editor_records, require, wait_synced, write_documents
from tests.test_serve_support import http_server, request

def test_serve_then_open_the_live_page_of_a_file_under_the_root(tmp_path):
    require()
    write_documents(tmp_path)
    (tmp_path / f"{BOARD}.excalidraw").rename(tmp_path / "airline.excalidraw")
    (tmp_path / "frames.tldr").unlink()
    with http_server(tmp_path, token="tok") as base:
        # no token: the page says so, and opens nothing
        try:
            urllib.request.urlopen(base + "/live/airline", timeout=30)
        except urllib.error.HTTPError as e:
            assert e.code == 401 and json.loads(e.read())["error"]["code"] == "unauthorized"
        else:
            raise AssertionError("the page opened without the token")
        b = Browser()
        try:
            pg = b.page(base, "airline", query="?token=tok")  # opens airline.excalidraw, not opened before
            status, docs = request(base, "GET", "/v1/documents", token="tok")
            assert [d["document"] for d in docs["result"]["documents"]] == ["airline"]
            els = {e["id"]: e for e in editor_records(pg) if not e.get("isDeleted")}
            assert len(els) >= 12 and pg.evaluate("document.querySelector('[data-status]').dataset.status") == "open"
            # the agent's apply appears in the page; the person's edit reaches the service
            status, rep = request(base, "POST", "/v1/documents/airline/apply", {"ops": [
                {"op": "create_artboard", "id": "n", "name": "Next", "x": 0, "y": 900, "w": 200, "h": 120}]},
                token="tok")
            assert status == 200 and rep["result"]["applied"] == [0]
            pg.wait_for_function("(id) => excalidrawAPI.getSceneElements().some(e => e.id === id)",
                                 arg=rep["result"]["created"][0], timeout=10000)
            token = request(base, "GET", "/v1/documents/airline/observe", token="tok")[1]["result"]["token"]
            rect = next(i for i, e in els.items() if e["type"] == "rectangle")
            pg.evaluate("""(id) => { const els = excalidrawAPI.getSceneElementsIncludingDeleted().map(e => e.id === id ?
                {...e, y: e.y + 30, version: e.version + 1, versionNonce: e.versionNonce + 1} : e)
                excalidrawAPI.updateScene({elements: els, captureUpdate: 'IMMEDIATELY'}) }""", rect)
            wait_synced(pg)
            obs = request(base, "GET", f"/v1/documents/airline/observe?since={token}", token="tok")[1]["result"]
            assert {c["id"]: c["kinds"] for c in obs["observation"]["changes"]["changes"]}[rect] == {"moved": "person"}
            assert obs["live"]["editor"] == "excalidraw"
        finally:
            b.close()
        assert not b.blocked and not b.errors, (b.blocked[:3], b.errors[:3])
