"""The service page works as written: every MCP host configuration and every curl example.

(Its Python example runs in test_readme.py with the other pages' examples.) The serving
section of the README moved to docs/serve.md; any host configuration the README shows is
started here too.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.conftest import shared_files
from tests.test_serve_support import REPO, http_server

SECTION = (REPO / "docs" / "serve.md").read_text(encoding="utf-8")
BASH = re.findall(r"```bash\n(.*?)```", SECTION, flags=re.S)
CURLS = [b.strip() for b in BASH if b.lstrip().startswith("curl ")]
HOST_PAGES = {"docs/serve.md": SECTION, "README.md": (REPO / "README.md").read_text(encoding="utf-8")}
CONFIGS = [(page, json.loads(block)) for page, text in HOST_PAGES.items()
           for block in re.findall(r"```json\n(.*?)```", text, flags=re.S)
           if '"mcpServers"' in block or '"servers"' in block]


def test_the_page_shows_each_common_host():
    forms = {("mcpServers" if "mcpServers" in cfg else "servers") for page, cfg in CONFIGS if page == "docs/serve.md"}
    assert forms == {"mcpServers", "servers"}
    for host in ("Claude Desktop", "VS Code", "Cursor"):
        assert f"**{host}**" in SECTION, host


def test_the_page_has_one_curl_example_per_route_family():
    families = {re.search(r"\$URL/v1/(\w+)", c).group(1) for c in CURLS}
    assert families == {"tools", "documents", "scenarios", "screens", "call"}
    start = next(b for b in BASH if "spatialobs serve" in b)
    assert "--http 127.0.0.1:8765" in start and "SPATIALOBS_TOKEN=" in start


@pytest.mark.parametrize(("page", "config"), CONFIGS, ids=[f"{p}:config{i}" for i, (p, _) in enumerate(CONFIGS)])
def test_mcp_host_configuration_starts_a_working_server(page, config, tmp_path, shared_data):
    anyio = pytest.importorskip("anyio")
    from mcp import Client, StdioServerParameters

    server = (config.get("mcpServers") or config["servers"])["spatialobs"]
    assert server.get("type", "stdio") == "stdio"
    assert server["command"] == "spatialobs"
    args = [str(tmp_path) if a == "/path/to/canvases" else a for a in server["args"]]
    assert args[:1] == ["serve"] and str(tmp_path) in args
    shutil.copy(next(p for p in shared_files("canvases", "*.tldr") if "argus" in p.name), tmp_path / "board.tldr")
    exe = shutil.which("spatialobs")
    cmd, argv = (exe, args) if exe else (sys.executable, ["-m", "spatialobs", *args])
    params = StdioServerParameters(command=cmd, args=argv, cwd=str(REPO))

    async def main() -> None:
        async with Client(params) as client:
            doc = await client.call_tool("open_document", {"path": "board.tldr"})
            assert not doc.is_error, doc.content[0].text
            name = json.loads(doc.content[0].text)["document"]
            obs = await client.call_tool("observe", {"document": name})
            assert json.loads(obs.content[0].text)["observation"]["objects"]
            rep = await client.call_tool("apply", {"document": name, "ops": [
                {"op": "create_artboard", "name": "Notes", "w": 300, "h": 200}]})
            assert json.loads(rep.content[0].text)["applied"] == [0]
            saved = await client.call_tool("save", {"document": name, "path": "board-saved.tldr"})
            assert not saved.is_error, saved.content[0].text

    anyio.run(main)
    assert (tmp_path / "board-saved.tldr").stat().st_size > 0


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_examples_run_against_a_live_server(tmp_path, shared_data):
    shutil.copy(next(p for p in shared_files("canvases", "*.tldr") if "argus" in p.name), tmp_path / "board.tldr")
    with http_server(tmp_path, token="change-me") as base:
        env = dict(os.environ, URL=base, SPATIALOBS_TOKEN="change-me")
        for cmd in CURLS:
            out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
            assert out.returncode == 0, (cmd, out.stderr)
            body = json.loads(out.stdout)
            assert body["ok"] is True, (cmd, body)
            if "/observe" in cmd:
                assert json.loads(body["result"]["observation"])["objects"]
            if "/apply" in cmd:
                assert body["result"]["applied"] == [0] and body["result"]["created"]
            if "/evaluate" in cmd:
                assert body["result"]["correct_target"] is False  # nothing was moved yet
        # without the token the same examples are refused
        first = shlex.split(CURLS[0].replace('-H "Authorization: Bearer $SPATIALOBS_TOKEN" ', ""))
        out = subprocess.run([a.replace("$URL", base) for a in first], capture_output=True, text=True, timeout=60)
        assert json.loads(out.stdout)["error"]["code"] == "unauthorized"
    assert (tmp_path / "board-edited.tldr").stat().st_size > 0
