"""The new ops and the named snapshots through real servers: the MCP SDK's client and an HTTP client.

A real tldraw file and a real Excalidraw file are opened under the server's root; a
model reply with every new op (align, distribute, group, ungroup, lock, unlock,
duplicate, set_viewport, create_from_mermaid) is applied; the camera move becomes the
document's default viewport and is undone with the rest; a named snapshot is saved,
the document changed, the snapshot restored (one undo step) and the restore undone;
the result is saved in the document's own format and opened again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tests.conftest import shared_files
from tests.test_serve_support import http_server, request

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

TLDR = shared_files("canvases", "1797127235__argus__architecture.tldr")
EXCALIDRAW = shared_files("canvases", "davidalecrim1__red-airlines__system-design.excalidraw")
FLOW = "flowchart LR\n  A[Client] --> B{Gateway}\n  B -->|ok| C[(Store)]\n"


def _shapes(observation: Dict[str, Any], n: int) -> List[str]:
    objs = [o for o in observation["objects"] if o["type"] not in ("arrow", "line", "group", "text")
            and "locked" not in o.get("flags", [])]
    assert len(objs) >= n
    return [o["id"] for o in objs[:n]]


def _reply(ops: List[Dict[str, Any]]) -> str:
    return "Tidying up.\n```canvas_ops\n" + json.dumps({"ops": ops}) + "\n```"


def _ops(ids: List[str]) -> List[Dict[str, Any]]:
    return [{"op": "align", "ids": ids[:3], "align": "top"},
            {"op": "distribute", "ids": ids[:3], "axis": "horizontal"},
            {"op": "group", "ids": ids[:2], "ref": "pair"},
            {"op": "duplicate", "id": "pair", "dy": 400, "ref": "pair2"},
            {"op": "ungroup", "id": "pair2"},
            {"op": "lock", "id": ids[2]},
            {"op": "move_node", "id": ids[2], "dx": 30},
            {"op": "unlock", "id": ids[2]},
            {"op": "set_viewport", "x": -50, "y": -40, "zoom": 0.5},
            {"op": "create_from_mermaid", "mermaid": FLOW}]


def _check_report(rep: Dict[str, Any]) -> None:
    assert rep["applied"] == [0, 1, 2, 3, 4, 5, 7, 8, 9], rep["errors"]
    assert len(rep["errors"]) == 1 and "op 6 (move_node)" in rep["errors"][0] and "is locked" in rep["errors"][0]
    assert {"pair", "pair2", "A", "B", "C"} <= set(rep["aliases"])
    (page, vp), = rep["viewport"].items()
    assert vp["x"] == -50 and vp["y"] == -40 and vp["zoom"] == 0.5


@pytest.mark.skipif(not TLDR or not EXCALIDRAW, reason="the shared canvases are not beside the checkout")
def test_http_new_ops_snapshots_and_undo(tmp_path: Path) -> None:
    for f in TLDR + EXCALIDRAW:
        shutil.copy(f, tmp_path / f.name)
    with http_server(tmp_path) as base:
        def ok(method: str, path: str, body: Any = None) -> Dict[str, Any]:
            status, out = request(base, method, path, body)
            assert status == 200 and out["ok"], out
            return out["result"]

        names = {t["name"] for t in ok("GET", "/v1/tools")["tools"]}
        assert {"save_snapshot", "restore_snapshot", "list_snapshots", "delete_snapshot"} <= names
        apply_desc = next(t for t in ok("GET", "/v1/tools")["tools"] if t["name"] == "apply")["description"]
        from spatialobs.canvas.editing.ops import OP_NAMES

        assert all(op in apply_desc for op in OP_NAMES)
        for f, doc in ((TLDR[0], "t"), (EXCALIDRAW[0], "e")):
            ok("POST", "/v1/documents", {"path": f.name, "name": doc})
            first = ok("GET", f"/v1/documents/{doc}/observe?max_objects=1000")
            ids = _shapes(first["observation"], 3)
            ok("POST", f"/v1/documents/{doc}/snapshots", {"name": "start"})
            rep = ok("POST", f"/v1/documents/{doc}/apply", {"reply": _reply(_ops(ids))})
            _check_report(rep)
            # the person's view moved: the default observation is now that viewport
            seen = ok("GET", f"/v1/documents/{doc}/observe")["observation"]
            assert seen["viewport"]["w"] == pytest.approx(rep["viewport"][next(iter(rep["viewport"]))]["w"], abs=1)
            drawn = ok("POST", f"/v1/documents/{doc}/mermaid", {"mermaid": "graph TD\n  p --> q", "x": 0, "y": -800})
            assert drawn["applied"] == [0] and len(drawn["created"]) == 3
            status, out = request(base, "POST", f"/v1/documents/{doc}/mermaid", {"mermaid": "graph TD\n  p[open"})
            assert status == 400 and "no ']' closes the shape" in out["error"]["message"]
            ok("POST", f"/v1/documents/{doc}/undo")
            ok("POST", f"/v1/documents/{doc}/snapshots", {"name": "arranged"})
            assert [s["name"] for s in ok("GET", f"/v1/documents/{doc}/snapshots")["snapshots"]] == ["start", "arranged"]
            # restore the start: one undo step, and the snapshot is kept
            back = ok("POST", f"/v1/documents/{doc}/snapshots/start/restore")
            assert back["restored"] and back["written"] > 0
            assert ok("GET", f"/v1/documents/{doc}/observe?max_objects=1000")["observation"] == first["observation"]
            ok("POST", f"/v1/documents/{doc}/undo")  # undoes the restore
            again = ok("GET", f"/v1/documents/{doc}/observe")["observation"]
            assert again == seen
            undone = ok("POST", f"/v1/documents/{doc}/undo")  # undoes the apply, camera included
            assert undone["undone"] and "viewport" in undone
            assert ok("GET", f"/v1/documents/{doc}/observe?max_objects=1000")["observation"] == first["observation"]
            # bad input: typed, with the record named
            status, out = request(base, "POST", f"/v1/documents/{doc}/snapshots/nope/restore")
            assert status == 404 and "has no snapshot 'nope'" in out["error"]["message"]
            status, out = request(base, "POST", f"/v1/documents/{doc}/snapshots", {"name": "../x"})
            assert status == 400 and "snapshot name '../x'" in out["error"]["message"]
            assert ok("DELETE", f"/v1/documents/{doc}/snapshots/arranged")["deleted"]
            # the arranged state once more, saved in the file's own format and opened again
            ok("POST", f"/v1/documents/{doc}/apply", {"ops": _ops(ids)})
            saved = ok("POST", f"/v1/documents/{doc}/save", {"path": f"out-{f.name}"})
            reopened = ok("POST", "/v1/documents", {"path": saved["path"], "name": doc + "2"})
            mine = next(x for x in ok("GET", "/v1/documents")["documents"] if x["document"] == doc)
            assert (reopened["nodes"], reopened["bindings"]) == (mine["nodes"], mine["bindings"])


@pytest.mark.skipif(not TLDR, reason="the shared canvases are not beside the checkout")
def test_mcp_new_ops_and_snapshots(tmp_path: Path) -> None:
    shutil.copy(TLDR[0], tmp_path / TLDR[0].name)
    with http_server(tmp_path) as base:
        async def tool(client: Any, name: str, args: Dict[str, Any]) -> Dict[str, Any]:
            r = await client.call_tool(name, args)
            assert not r.is_error, r.content[0].text
            return json.loads(r.content[0].text)

        async def main() -> None:
            async with Client(base + "/mcp") as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert {"save_snapshot", "restore_snapshot", "list_snapshots", "delete_snapshot"} <= set(tools)
                assert "create_from_mermaid" in tools["apply"].description
                await tool(client, "open_document", {"path": TLDR[0].name, "name": "d"})
                first = await tool(client, "observe", {"document": "d", "max_objects": 1000})
                ids = _shapes(first["observation"], 3)
                await tool(client, "save_snapshot", {"document": "d", "name": "s0"})
                rep = await tool(client, "apply", {"document": "d", "reply": _reply(_ops(ids))})
                _check_report(rep)
                # the ops as a list too: the aliases of the first apply live on in the executor
                rep2 = await tool(client, "apply", {"document": "d", "ops": [
                    {"op": "align", "ids": ["A", "C"], "align": "left"}]})
                assert rep2["applied"] == [0], rep2["errors"]
                listed = await tool(client, "list_snapshots", {"document": "d"})
                assert [s["name"] for s in listed["snapshots"]] == ["s0"]
                await tool(client, "restore_snapshot", {"document": "d", "name": "s0"})
                same = await tool(client, "observe", {"document": "d", "max_objects": 1000})
                assert same["observation"] == first["observation"]
                drawn = await tool(client, "create_from_mermaid", {"document": "d", "mermaid": FLOW, "x": 0, "y": 900})
                assert drawn["applied"] == [0] and {"A", "B", "C"} <= set(drawn["aliases"])
                bad = await client.call_tool("create_from_mermaid", {"document": "d", "mermaid": "pie\n \"a\": 1"})
                assert bad.is_error and "not a flowchart ('pie')" in bad.content[0].text
                bad = await client.call_tool("restore_snapshot", {"document": "d", "name": "zzz"})
                assert bad.is_error and bad.content[0].text.startswith("not_found: ")
                bad = await client.call_tool("apply", {"document": "d", "ops": [{"op": "group", "ids": ["nope", ids[0]]}]})
                assert not bad.is_error and "no node or alias 'nope'" in json.loads(bad.content[0].text)["errors"][0]

        anyio.run(main)
