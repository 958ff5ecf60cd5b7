"""The MCP server driven by the SDK's own client, over stdio and over streamable HTTP."""

from __future__ import annotations

import base64
import json
import shutil
import sys
from typing import Any, Dict

import pytest

from tests.conftest import shared_files
from tests.test_serve_support import REPO, http_server

anyio = pytest.importorskip("anyio")
mcp = pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from spatialobs.canvas import load  # noqa: E402
from spatialobs.serve import reference_reply  # noqa: E402


async def tool(client: Any, name: str, args: Dict[str, Any]) -> Dict[str, Any]:
    r = await client.call_tool(name, args)
    assert not r.is_error, r.content[0].text
    data = json.loads(r.content[0].text)
    assert r.structured_content is None  # sent once, as text
    return data


async def agent_loop(client: Any, tmp: str) -> Dict[int, Any]:
    """Open, observe, apply the reference agent's reply, evaluate, save, reopen and compare, per configuration."""
    scores = {}
    names = {t.name for t in (await client.list_tools()).tools}
    assert {"open_document", "observe", "apply", "undo", "render", "save", "close", "evaluate", "scenario_open",
            "screen_add", "screen_query", "screen_stats", "screen_choose", "screen_save", "screen_load"} <= names
    for config in range(10):
        doc = await tool(client, "scenario_open", {"config": config})
        name = doc["document"]
        seen = await tool(client, "observe", {"document": name, "form": "text"})
        reply = reference_reply(seen["observation"], doc["prompt"])
        rep = await tool(client, "apply", {"document": name, "reply": reply})
        assert rep["applied"] == [0] and not rep["errors"]
        score = await tool(client, "evaluate", {"document": name, "config": config})
        scores[config] = (score["correct_target"], score["correct_placement"], score["full_success"])
        path = f"{tmp}/{name}.json"
        await tool(client, "save", {"document": name, "path": path, "format": "native"})
        again = await tool(client, "open_document", {"path": path, "origin": doc["origin"], "viewport": doc["viewport"]})
        a = await tool(client, "observe", {"document": name})
        b = await tool(client, "observe", {"document": again["document"]})
        assert a["observation"] == b["observation"]
        assert (await tool(client, "evaluate", {"document": again["document"], "config": config}))["full_success"]
        changed = await tool(client, "observe", {"document": name, "since": seen["token"]})
        assert {w for c in changed["observation"]["changes"]["changes"] for w in c["kinds"].values()} == {"agent"}
        await tool(client, "close", {"document": again["document"]})
    # resources: the guide and each open document
    uris = [str(r.uri) for r in (await client.list_resources()).resources]
    assert uris[0] == "spatialobs://guide" and "spatialobs://documents/handoff-0" in uris
    doc0 = await client.read_resource("spatialobs://documents/handoff-0")
    assert json.loads(doc0.contents[0].text)["nodes"]
    # a failure is a tool error with a one-line message, never a protocol error
    bad = await client.call_tool("observe", {"document": "handoff-0", "viewport": "wide"})
    assert bad.is_error and bad.content[0].text.startswith("bad_request: ") and "\n" not in bad.content[0].text
    bad = await client.call_tool("open_document", {"path": "../../etc/passwd"})
    assert bad.is_error and bad.content[0].text.startswith("forbidden: ")
    bad = await client.call_tool("no_such_tool", {})
    assert bad.is_error and bad.content[0].text.startswith("not_found: ")
    return scores


def test_stdio_agent_loop(tmp_path):
    params = StdioServerParameters(command=sys.executable, args=["-m", "spatialobs", "serve", "--root", str(tmp_path)],
                                   cwd=str(REPO))

    async def main() -> Dict[int, Any]:
        async with Client(params) as client:
            return await agent_loop(client, "out")

    (tmp_path / "out").mkdir()
    scores = anyio.run(main)
    assert scores == {k: (True, True, True) for k in range(10)}
    assert len(list((tmp_path / "out").glob("*.json"))) == 10


def test_streamable_http_agent_loop_with_token(tmp_path, shared_data):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    src = next(p for p in shared_files("canvases", "*.tldr") if "argus" in p.name)
    shutil.copy(src, tmp_path / "argus.tldr")
    (tmp_path / "out").mkdir()

    with http_server(tmp_path, token="mcp-token") as base:
        async def main() -> Dict[int, Any]:
            http = create_mcp_http_client(headers={"Authorization": "Bearer mcp-token"})
            async with http, Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
                scores = await agent_loop(client, "out")
                # a real tldraw file: open, observe, apply, save, reopen
                doc = await tool(client, "open_document", {"path": "argus.tldr"})
                obs = await tool(client, "observe", {"document": doc["document"], "include_bounds": True})
                geo = next(o for o in obs["observation"]["objects"] if o["type"] == "geo")
                rep = await tool(client, "apply", {"document": doc["document"], "ops": [
                    {"op": "update_styles", "id": geo["id"], "styles": {"color": "red"}}]})
                assert rep["applied"] == [0]
                await tool(client, "save", {"document": doc["document"], "path": "out/argus.tldr"})
                assert load(tmp_path / "out" / "argus.tldr").node(geo["id"]).style["color"] == "red"
                svg = await tool(client, "render", {"document": doc["document"]})
                assert svg["svg"].startswith("<svg")
                png = await client.call_tool("render", {"document": doc["document"], "format": "png", "width": 300})
                try:
                    import PIL  # noqa: F401
                except ImportError:
                    assert png.is_error and "Pillow" in png.content[0].text
                else:
                    assert not png.is_error and png.content[0].type == "image"
                    assert base64.b64decode(png.content[0].data)[:8] == b"\x89PNG\r\n\x1a\n"
                return scores

        scores = anyio.run(main)
        # without the token the MCP endpoint refuses
        async def anonymous() -> None:
            async with Client(base + "/mcp") as client:
                await client.list_tools()

        with pytest.raises(BaseException):
            anyio.run(anonymous)
    assert scores == {k: (True, True, True) for k in range(10)}
    assert httpx2 is not None
