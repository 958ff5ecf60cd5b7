"""The official MCP Inspector's CLI mode against `spatialobs serve`: every tool, every argument.

The Inspector (``@modelcontextprotocol/inspector``, pinned in
``tools/mcp-inspector``; ``bash tools/mcp-inspector/install.sh`` installs it)
is what people use to try an MCP server by hand. Its CLI passes each
``--tool-arg k=v`` as text and converts it by the tool's schema: a number
through ``Number()`` (so ``abc`` arrives as null), a plain ``object`` or
``array`` through ``JSON.parse``, and anything else, ``["object", "array"]``
included, as the string itself. These tests list the tools with it and call
every tool with every one of its arguments, on real documents: over stdio
(each CLI run starts its own server, so the tools that need no earlier call)
and over streamable HTTP (one server, so the whole sequence). The test skips
when the Inspector is not installed, and fails instead on CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Set, Tuple

import pytest

from tests.test_serve_support import REPO, http_server, serve_command

from spatialobs.serve import TOOLS, Service

LAUNCHER = Path(os.environ.get("SPATIALOBS_MCP_INSPECTOR") or REPO / "tools" / "mcp-inspector" / "node_modules" /
                "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js")
BOARD = REPO / "tests" / "data" / "conformance" / "labels.tldr"
INLINE = json.dumps({"type": "excalidraw", "elements": [
    {"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 50, "height": 20}]})
SCREEN = {"width": 400, "height": 300, "elements": [
    {"bounds": [10, 10, 110, 50], "role": "button", "text": "OK", "clickable": True},
    {"bounds": [10, 60, 210, 100], "role": "edit", "text": "", "editable": True}]}
ACTIONS = [{"op": "click", "element": 0}, {"op": "type", "element": 1, "value": "hi"}]


def unavailable_reason() -> Optional[str]:
    """Why the Inspector cannot run here (one line), or None."""
    if shutil.which("node") is None:
        return "Node is not installed, so the MCP Inspector cannot run (apt-get install nodejs npm)"
    if not LAUNCHER.is_file():
        return "the MCP Inspector is not installed (bash tools/mcp-inspector/install.sh)"
    return None


def require() -> None:
    """Skip with the reason (fail on CI, which installs the Inspector) when the Inspector cannot run."""
    reason = unavailable_reason()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but the MCP Inspector cannot run: {reason}", pytrace=False)
        pytest.skip(reason)


class Inspector:
    """Runs ``mcp-inspector --cli`` against one target; records which arguments of which tools were passed."""

    def __init__(self, target: Sequence[str], home: Path) -> None:
        self.target = list(target)
        self.home = home
        self.passed: Dict[str, Set[str]] = {}

    def run(self, method: str, tool: Optional[str] = None, args: Optional[Dict[str, Any]] = None) -> Tuple[int, Any]:
        """``(exit code, the result object)`` of one CLI run; ``args`` values are sent as their text."""
        cmd = ["node", str(LAUNCHER), "--cli", "--format", "json", "--quiet"]
        if os.environ.get("PYTHONPATH") and self.target[0] != "--server-url":
            cmd += ["-e", f"PYTHONPATH={os.environ['PYTHONPATH']}"]  # the server imports the package under test
        cmd += self.target + ["--method", method]
        if tool is not None:
            cmd += ["--tool-name", tool]
        for k, v in (args or {}).items():
            text = v if isinstance(v, str) else json.dumps(v)
            cmd += ["--tool-arg", f"{k}={text}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_")}
        # the Inspector keeps a catalog and client settings under HOME: a scratch one
        env.update(HOME=str(self.home), MCP_CATALOG_PATH=str(self.home / "catalog.json"),
                   MCP_CLIENT_CONFIG_PATH=str(self.home / "client.json"), BROWSER="false", NO_COLOR="1")
        proc = subprocess.run(cmd, cwd=REPO, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=120)
        assert proc.stdout.strip(), f"the Inspector printed nothing (exit {proc.returncode}): {proc.stderr[-2000:]}"
        out = json.loads(proc.stdout)
        assert "result" in out, out
        return proc.returncode, out["result"]

    def call(self, tool: str, **args: Any) -> Any:
        """A tool call that must succeed: its JSON result."""
        code, result = self.run("tools/call", tool, args)
        assert code == 0 and not result.get("isError"), (tool, args, result)
        self.passed.setdefault(tool, set()).update(args)
        content = result["content"]
        text = next(c["text"] for c in content if c["type"] == "text")
        if any(c["type"] == "image" for c in content):
            return {"image": next(c for c in content if c["type"] == "image"), **json.loads(text)}
        return json.loads(text)

    def refused(self, tool: str, **args: Any) -> str:
        """A tool call that must fail as a tool error: its one line."""
        code, result = self.run("tools/call", tool, args)
        assert code != 0 and result.get("isError"), (tool, args, result)
        (line,) = [c["text"] for c in result["content"]]
        assert "\n" not in line
        return str(line)


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    shutil.copy(BOARD, r / "board.tldr")
    (r / "out").mkdir()
    return r


def _listed_equal_to_ours(listed: Dict[str, Any]) -> None:
    tools = listed["tools"]
    assert [t["name"] for t in tools] == [t.name for t in TOOLS]
    for got, want in zip(tools, TOOLS):
        assert got["description"] == want.description and got["inputSchema"] == want.schema, want.name


def test_inspector_over_stdio(root, tmp_path):
    require()
    home = tmp_path / "home"
    home.mkdir()
    # a saved state index for screen_load, made through the service itself
    svc = Service(root)
    svc.call("screen_add", {"index": "seed", "screen": SCREEN})
    svc.call("screen_save", {"index": "seed", "path": "out/seed.idx"})
    ins = Inspector(serve_command(root), home)
    code, listed = ins.run("tools/list")
    assert code == 0
    _listed_equal_to_ours(listed)
    # every argument of open_document: the viewport as the Inspector sends it (a string: its type is a union)
    doc = ins.call("open_document", path="board.tldr", name="board", origin=[10, 20],
                   viewport={"x": 0, "y": 0, "w": 900, "h": 700})
    assert doc["document"] == "board" and doc["origin"] == [10.0, 20.0] and doc["nodes"] > 0
    doc = ins.call("open_document", document=INLINE, name="inline")
    assert doc == {**doc, "document": "inline", "format": "excalidraw", "nodes": 1, "path": None}
    s = ins.call("scenario_open", config=3, name="h3")
    assert s["document"] == "h3" and s["config"] == 3
    choice = ins.call("screen_choose", index="ix", screen=SCREEN, meta={"app": "demo"}, actions=ACTIONS, goal="ok",
                      prior="heuristic", c_p=1.5)
    assert choice["choice"] in (0, 1) and choice["action"] == ACTIONS[choice["choice"]]
    loaded = ins.call("screen_load", index="again", path="out/seed.idx")
    assert loaded == {"index": "again", "observations": 1, "states": 1}
    added = ins.call("screen_add", index="ix", screen=SCREEN, meta={"app": "demo"})
    assert added["state"] == 0 and added["new_state"] is True
    # what the issue measured: a number the Inspector cannot read arrives as null and is refused, not ignored
    assert ins.refused("observe", document="board", max_objects="abc") == (
        "bad_request: observe: argument 'max_objects' must be integer, got null; leave it out to use the default "
        "(180)")
    assert ins.refused("observe", document="board", viewport="wide").startswith(
        "bad_request: observe: argument 'viewport' must be object or array or its JSON text; got a string that is "
        "not JSON")
    # the Inspector wrote nothing but what it was pointed at
    assert sorted(p.name for p in home.iterdir()) in ([], ["catalog.json"], ["catalog.json", "client.json"],
                                                      ["client.json"])


def test_inspector_over_http_calls_every_tool_with_every_argument(root, tmp_path):
    require()
    home = tmp_path / "home"
    home.mkdir()
    with http_server(root) as base:
        ins = Inspector(["--server-url", base + "/mcp", "--transport", "http"], home)
        code, listed = ins.run("tools/list")
        assert code == 0
        _listed_equal_to_ours(listed)

        # canvas documents
        doc = ins.call("open_document", path="board.tldr", name="board", origin=[0, 0],
                       viewport=[0, 0, 1200, 900])
        assert doc["document"] == "board"
        ins.call("open_document", document=INLINE, name="inline")
        assert {d["document"] for d in ins.call("list_documents")["documents"]} == {"board", "inline"}
        first = ins.call("observe", document="board")
        page = first["page"]
        ids = [o["id"] for o in first["observation"]["objects"]]
        assert len(ids) >= 2
        full = ins.call("observe", document="board", viewport={"x": 0, "y": 0, "w": 1200, "h": 900}, page=page,
                        selected=ids[:1], context=ids[1:2], max_objects=50, max_relations=100, max_changes=10,
                        origin=[0, 0], include_bounds=True, since="last", form="compact", max_bytes=200000,
                        max_tokens=50000, occlusion="paper", explain=True, baseline=True, guide=True)
        assert full["page"] == page and "baseline" in full and full["guide"]
        snap = ins.call("snapshot", document="board", page=page, origin=[5, 5])
        assert snap["document"] == "board"
        rep = ins.call("apply", document="board", origin=[0, 0], by="person", ops=[
            {"op": "create_shape", "id": "box", "shape": "rectangle", "x": 40, "y": 40, "w": 120, "h": 60,
             "text": "box"},
            {"op": "create_arrow", "from": "box", "to": ids[0]}])
        assert rep["applied"] == [0, 1] and rep["errors"] == []
        reply = '```canvas_ops\n{"ops": [{"op": "set_text", "id": "box", "text": "renamed"}]}\n```'
        rep = ins.call("apply", document="board", reply=reply)  # an alias holds across the document's applies
        assert rep["applied"] == [0] and rep["errors"] == []
        mer = ins.call("create_from_mermaid", document="board", mermaid="graph TD\n  A[Start] --> B[End]", x=2000,
                       y=0, parent=page, origin=[0, 0])
        assert len(mer["created"]) >= 3 and mer["errors"] == []
        assert ins.call("save_snapshot", document="board", name="s1")["snapshot"] == "s1"
        assert [s["name"] for s in ins.call("list_snapshots", document="board")["snapshots"]] == ["s1"]
        ins.call("apply", document="board", ops=[{"op": "delete_node", "id": mer["created"][0]}])
        assert ins.call("restore_snapshot", document="board", name="s1", by="person")["restored"] is True
        assert ins.call("delete_snapshot", document="board", name="s1")["deleted"] is True
        assert ins.call("undo", document="board")["undone"] is True
        png = ins.call("render", document="board", format="png", width=300, viewport=[0, 0, 1200, 900], page=page)
        assert png["image"]["mimeType"] == "image/png" and png["format"] == "png"
        # no editor is connected: the call gets past its arguments to the live hub's answer
        line = ins.refused("screenshot", document="board", session="s-1", viewport=[0, 0, 800, 600])
        assert line.startswith("not_found: screenshot: no editor is connected to document 'board'")
        ins.passed.setdefault("screenshot", set()).update({"document", "session", "viewport"})
        saved = ins.call("save", document="board", path="out/board.excalidraw", format="excalidraw")
        assert saved["bytes"] == (root / "out" / "board.excalidraw").stat().st_size
        assert ins.call("reload", document="board")["document"] == "board"
        assert ins.call("close", document="inline")["closed"] is True

        # scenarios
        assert len(ins.call("list_scenarios")["scenarios"]) == 10
        ins.call("scenario_open", config=3, name="h3")
        answer = ins.call("reference_reply", document="h3", config=3)
        ins.call("apply", document="h3", reply=answer["reply"])
        assert ins.call("evaluate", document="h3", config=3)["full_success"] is True

        # screens
        choice = ins.call("screen_choose", index="ix", screen=SCREEN, meta={"app": "demo"}, actions=ACTIONS,
                          goal="ok", prior="uniform", c_p=1.0)
        moved = ins.call("screen_add", index="ix", screen=SCREEN, meta={"app": "demo"}, from_state=choice["state"],
                         action=choice["signature"])
        assert moved["transition"]["action"] == choice["signature"]
        assert "hits" in ins.call("screen_query", index="ix", screen=SCREEN, meta={"app": "demo"}, k=3)
        assert ins.call("screen_stats", index="ix")["states"] >= 1
        assert ins.call("screen_save", index="ix", path="out/ix.idx")["path"] == "out/ix.idx"
        assert ins.call("screen_load", index="ix2", path="out/ix.idx")["index"] == "ix2"
        assert {i["index"] for i in ins.call("list_indexes")["indexes"]} == {"ix", "ix2"}

        # the two cases, over HTTP too
        assert ins.refused("observe", document="board", max_objects="abc").startswith(
            "bad_request: observe: argument 'max_objects' must be integer, got null")

    missing = {t.name: sorted(set(t.schema["properties"]) - ins.passed.get(t.name, set())) for t in TOOLS}
    assert {k: v for k, v in missing.items() if v or k not in ins.passed} == {}

