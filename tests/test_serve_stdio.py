"""MCP over stdio answers every line: raw bytes to a real `spatialobs serve` process, and the SDK's own client.

Each malformed message gets its JSON-RPC error (-32700 for text that is not
JSON, -32600 for JSON that is not a JSON-RPC message, for nesting past the
parser and for a line over the limit), with the request's id when it can be
read, and the server goes on serving the same session.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any, Dict, List

import pytest

from tests.test_serve_support import REPO, serve_command

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp")

from spatialobs.serve import Limits, Service  # noqa: E402
from spatialobs.serve.mcp_server import recover_id, stdio_line_limit, stdio_message  # noqa: E402

LIMIT = stdio_line_limit(Service("."))
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


class RawSession:
    """A real `spatialobs serve` over stdio, spoken to in raw bytes; every read has a deadline."""

    def __init__(self, root: Any) -> None:
        self.proc = subprocess.Popen(serve_command(root), cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines: List[bytes] = []
        self.ready = threading.Condition()
        self.err = ""
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()
        self.send_json(INIT)
        assert self.next()["id"] == 0
        self.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.ready:
                self.lines.append(line)
                self.ready.notify_all()

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_json(self, obj: Any) -> None:
        self.send(json.dumps(obj).encode() + b"\n")

    def next(self, timeout: float = 30.0) -> Dict[str, Any]:
        with self.ready:
            if not self.ready.wait_for(lambda: self.lines, timeout):
                pytest.fail("no answer within the deadline: the line was dropped")
            line = self.lines.pop(0)
        assert line.endswith(b"\n") and b"\n" not in line[:-1]
        out: Dict[str, Any] = json.loads(line)
        return out

    def close(self) -> str:
        """End the session (closing its stdin) and return what the server wrote to stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None and self.proc.stdout is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        if not self.proc.stderr.closed:
            self.proc.wait(timeout=30)
            self.drain.join(timeout=10)
            self.err = self.proc.stderr.read().decode()
            self.proc.stdout.close()
            self.proc.stderr.close()
        return self.err


@pytest.fixture
def raw(tmp_path):
    s = RawSession(tmp_path)
    try:
        yield s
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
        s.close()


def _error(msg: Dict[str, Any]) -> tuple:
    assert msg["jsonrpc"] == "2.0" and set(msg) == {"jsonrpc", "id", "error"}, msg
    return msg["id"], msg["error"]["code"]


DEEP = b"[" * 100_000 + b"]" * 100_000
CASES = [
    (b"{not json", (None, -32700)),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {broken', (5, -32700)),
    (b'\xff\xfe\x00garbage', (None, -32700)),
    (b'"just a string"', (None, -32600)),
    (b"42", (None, -32600)),
    (b"null", (None, -32600)),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', (None, -32600)),
    (b'{"jsonrpc": "1.0", "id": "v1", "method": "ping"}', ("v1", -32600)),
    (b'{"jsonrpc": "2.0", "id": 7}', (7, -32600)),
    (b'{"jsonrpc": "2.0", "id": 8, "method": 12}', (8, -32600)),
    (b'{"jsonrpc": "2.0", "id": {"no": 1}, "method": "ping"}', (None, -32600)),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": ' + DEEP + b"}", (9, -32600)),
    (b'{"jsonrpc": "2.0", "id": "deep", "method": "tools/call", "params": {"name": "observe", "arguments": {"a": '
     + b"[" * 500 + b"]" * 500 + b"}}}", ("deep", -32600)),
    (DEEP, (None, -32600)),
]


def test_every_malformed_line_gets_its_error_and_the_session_goes_on(raw):
    for k, (line, expected) in enumerate(CASES):
        raw.send(line + b"\n")
        got = raw.next()
        assert _error(got) == expected, (k, line[:60], got)
        assert got["error"]["message"].startswith(("Parse error", "Invalid Request")) and len(got["error"]["message"]) <= 500
        raw.send_json({"jsonrpc": "2.0", "id": 1000 + k, "method": "ping"})  # still serving
        assert raw.next() == {"jsonrpc": "2.0", "id": 1000 + k, "result": {}}
    # a blank line is no message; a valid notification gets no answer (JSON-RPC); the next request is answered
    raw.send(b"\n  \n")
    raw.send_json({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}})
    raw.send_json({"jsonrpc": "2.0", "id": "last", "method": "tools/list"})
    listed = raw.next()
    assert listed["id"] == "last" and {t["name"] for t in listed["result"]["tools"]} >= {"observe", "apply"}
    assert "Traceback" not in raw.close()


def test_a_line_over_the_limit_is_discarded_unheld_and_answered(raw):
    # 2 MB over the limit, sent in pieces: the server reads it through, answers with the id, and goes on
    head = b'{"jsonrpc": "2.0", "id": "big", "method": "tools/call", "params": {"name": "apply", "arguments": {"reply": "'
    raw.send(head)
    chunk = b"x" * (1 << 20)
    for _ in range(LIMIT // len(chunk) + 2):
        raw.send(chunk)
    raw.send(b'"}}}\n')
    got = raw.next(timeout=60)
    assert _error(got) == ("big", -32600) and f"over {LIMIT} bytes" in got["error"]["message"]
    # the last line of the input without its newline is still a message
    raw.send(b'{"jsonrpc": "2.0", "id": 77, "method": "ping"}')
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    assert raw.next() == {"jsonrpc": "2.0", "id": 77, "result": {}}
    raw.proc.wait(timeout=30)
    assert raw.proc.returncode == 0


def test_a_tool_call_within_the_limit_still_works_over_raw_stdio(raw, tmp_path):
    raw.send_json({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "scenario_open", "arguments": {"config": 2}}})
    out = raw.next()
    result = json.loads(out["result"]["content"][0]["text"])
    assert result["document"] == "handoff-2" and "structuredContent" not in out["result"]


PROXY = """
import subprocess, sys, threading
server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=sys.stdout.buffer)
for line in sys.stdin.buffer:
    if b'"__cut__"' in line:  # the client's request, cut in half: not JSON any more
        line = line[: len(line) // 2] + b"\\n"
    elif b'"__deep__"' in line:  # its arguments nested 100,000 deep
        line = line.replace(b'"__deep__"', b"[" * 100000 + b"]" * 100000)
    elif b'"__huge__"' in line:  # a line over the server's limit
        line = line.replace(b'"__huge__"', b'"' + b"x" * %d + b'"')
    server.stdin.write(line)
    server.stdin.flush()
server.stdin.close()
sys.exit(server.wait())
"""


def test_the_sdk_client_gets_an_error_for_a_mangled_request_and_goes_on(tmp_path):
    """The SDK's own client over stdio, through a pipe that mangles some of its requests on the way."""
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError

    proxy = tmp_path / "proxy.py"
    proxy.write_text(PROXY % (LIMIT + 1))
    params = StdioServerParameters(command=sys.executable, args=[str(proxy), *serve_command(tmp_path)], cwd=str(REPO))

    async def main() -> Dict[str, Any]:
        codes: Dict[str, Any] = {}
        async with Client(params) as client:
            doc = json.loads((await client.call_tool("scenario_open", {"config": 0})).content[0].text)["document"]
            for mangle in ("__cut__", "__deep__", "__huge__"):
                with anyio.fail_after(60):  # an unanswered request would hang here
                    try:
                        await client.call_tool("observe", {"document": doc, "context": mangle})
                    except MCPError as exc:
                        codes[mangle] = exc.error.code
                obs = await client.call_tool("observe", {"document": doc})  # the session goes on
                assert json.loads(obs.content[0].text)["observation"]["objects"]
        return codes

    assert anyio.run(main) == {"__cut__": -32700, "__deep__": -32600, "__huge__": -32600}


def test_stdio_message_and_recover_id():
    assert stdio_message(b"x" * 10, over=True, limit=5).error.code == -32600
    assert recover_id(b'{"a": "}{\\"id\\": 3", "b": [1, {"id": 4}], "id": -2, ') == -2
    assert recover_id(b'  {"id" : "x y"}') == "x y"
    assert recover_id(b'{"params": {"x": 1}, "id": 1.5}') is None
    assert recover_id(b'{"x": "unterminated') is None
    assert stdio_line_limit(Service(".", limits=Limits(max_request_bytes=10))) == 10 + 65536



def test_requests_in_flight_when_the_client_closes_stdin_are_still_answered(raw):
    raw.send_json({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "scenario_open", "arguments": {"config": 5, "name": "s"}}})
    assert "result" in raw.next()
    # a slow call, then the end of input at once: the answer still comes before the server exits
    raw.send_json({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "render", "arguments": {"document": "s", "format": "svg", "width": 4000}}})
    raw.send_json({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    got = {m["id"]: m for m in (raw.next(), raw.next())}
    assert set(got) == {2, 3} and json.loads(got[2]["result"]["content"][0]["text"])["svg"].startswith("<svg")
    assert raw.proc.wait(timeout=30) == 0
