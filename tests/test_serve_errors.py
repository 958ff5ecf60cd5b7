"""The documented JSON error for what never reaches a tool, on a real `spatialobs serve --http`: unknown routes,
wrong methods, oversize bodies (announced or chunked), malformed HTTP; and a quiet log when a client leaves."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Dict, List, Tuple

import pytest

from tests.test_serve_support import address, exact_request, http_server

LIMIT = 16 * 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log: List[str] = []
    with http_server(tmp_path_factory.mktemp("errors"), log=log) as base:
        yield base, log


def host(base: str) -> Tuple[str, str]:
    return ("Host", base.rsplit("/", 1)[1])


def service_error(status: int, head: Dict[str, str], body: bytes) -> Tuple[int, str, str]:
    assert head["content-type"] == "application/json", (status, head, body[:200])
    out = json.loads(body)
    assert out["ok"] is False and set(out["error"]) == {"code", "message"}, out
    assert "\n" not in out["error"]["message"] and "Traceback" not in out["error"]["message"]
    return status, out["error"]["code"], out["error"]["message"]


def test_unknown_routes_and_wrong_methods(server):
    base, _ = server
    j = ("Content-Type", "application/json")
    cases = [("GET", "/", 404, "not_found"), ("GET", "/nope", 404, "not_found"), ("POST", "/v2/call/x", 404, "not_found"),
             ("GET", "/v1/documents/a/b/c", 404, "not_found"), ("PUT", "/v1/documents", 405, "method_not_allowed"),
             ("GET", "/v1/documents/x/apply", 405, "method_not_allowed"),
             ("DELETE", "/v1/tools", 405, "method_not_allowed"), ("POST", "/v1/health", 405, "method_not_allowed"),
             ("PATCH", "/v1/call/observe", 405, "method_not_allowed")]
    for method, path, status, code in cases:
        got = service_error(*exact_request(base, method, path, [host(base), j], b"{}" if method != "GET" else b""))
        assert got[:2] == (status, code), (method, path, got)
        assert path in got[2]
    status, head, body = exact_request(base, "GET", "/v1/documents/x/apply", [host(base)])
    assert head["allow"] == "POST" and "it takes POST" in json.loads(body)["error"]["message"]
    # MCP's own endpoint answers a wrong method in JSON-RPC's error form, as the MCP transport documents
    status, head, body = exact_request(base, "PUT", "/mcp", [host(base), j], b"{}")
    assert status == 405 and json.loads(body)["error"]["code"] == -32600


def read_response(sock: socket.socket) -> bytes:
    """One whole response (headers and a Content-Length body) from a raw socket."""
    data = b""
    while True:
        if b"\r\n\r\n" in data:
            head, body = data.split(b"\r\n\r\n", 1)
            if len(body) >= int(head.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0]):
                return data
        part = sock.recv(65536)
        if not part:
            return data
        data += part


def _chunked(base: str, path: str, total: int) -> Tuple[bytes, float]:
    """Send ``total`` bytes of chunked body in one thread while reading the answer in this one."""
    sock = socket.create_connection(address(base), timeout=30)
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {base.rsplit('/', 1)[1]}\r\nContent-Type: application/json\r\n"
                 "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
    chunk = b"[" * (1 << 20)

    def pump() -> None:
        try:
            for _ in range(total // len(chunk)):
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
        except OSError:  # the server may close once it has answered
            pass

    t0 = time.perf_counter()
    sender = threading.Thread(target=pump, daemon=True)
    sender.start()
    try:
        data = read_response(sock)
    finally:
        sock.close()
        sender.join(timeout=30)
    return data, time.perf_counter() - t0


@pytest.mark.parametrize("path", ["/v1/documents", "/v1/call/apply", "/mcp"])
def test_an_oversize_chunked_body_gets_the_json_413(server, path):
    base, _ = server
    data, _ = _chunked(base, path, 50 * 1024 * 1024)
    head, body = data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 413 ") and b"content-type: application/json" in head.lower()
    out = json.loads(body)
    assert out == {"ok": False, "error": {"code": "too_large", "message": f"request body over {LIMIT} bytes"}}


@pytest.mark.parametrize("path", ["/v1/documents", "/mcp"])
def test_an_oversize_announced_body_is_refused_before_it_is_read(server, path):
    base, _ = server
    sock = socket.create_connection(address(base), timeout=30)
    try:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {base.rsplit('/', 1)[1]}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {50 * 1024 * 1024}\r\n\r\n".encode())
        data = read_response(sock)
    finally:
        sock.close()
    head, body = data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 413 ") and json.loads(body)["error"]["code"] == "too_large"


def test_a_client_leaving_mid_body_leaves_no_traceback(server):
    base, log = server
    before = len(log)
    for path, extra in (("/v1/documents", ""), ("/v1/call/open_document", ""),
                        ("/mcp", "Accept: application/json, text/event-stream\r\n")):
        sock = socket.create_connection(address(base), timeout=30)
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {base.rsplit('/', 1)[1]}\r\nContent-Type: application/json\r\n"
                     f"{extra}Content-Length: 1000\r\n\r\n{{\"path\": ".encode())
        time.sleep(0.2)
        sock.close()
    time.sleep(0.5)
    # the server is fine and said nothing
    status, _, body = exact_request(base, "GET", "/v1/documents", [host(base)])
    assert status == 200 and json.loads(body)["ok"]
    assert log[before:] == []
