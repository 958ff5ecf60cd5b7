"""Cross-site requests and DNS rebinding against a real `spatialobs serve --http`: each probe refused as documented.

Every test talks to a real server process on a free loopback port with raw
HTTP requests whose headers are exactly those a browser (or an attacker's
page through it) would send.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
from typing import Any, Dict, List, Sequence, Tuple

import pytest

from tests.test_serve_support import REPO, exact_request, http_server, serve_command

from spatialobs.serve.security import OriginPolicy, Refusal, is_loopback, normalize_origin, refuse

TOKEN = "sec-token"
JSON = ("Content-Type", "application/json")


def host_of(base: str) -> str:
    return base.rsplit("/", 1)[1]


def send(base: str, method: str, path: str, headers: Sequence[Tuple[str, str]] = (), body: Any = None,
         raw: bytes = b"", host: str = "") -> Tuple[int, Dict[str, str], Dict[str, Any]]:
    data = raw or (json.dumps(body).encode() if body is not None else b"")
    status, head, out = exact_request(base, method, path, [("Host", host or host_of(base)), *headers], data)
    return status, head, (json.loads(out) if out else {})


def error(result: Tuple[int, Dict[str, str], Dict[str, Any]]) -> Tuple[int, str]:
    status, head, body = result
    assert head.get("content-type") == "application/json", head
    assert body["ok"] is False and "\n" not in body["error"]["message"], body
    return status, body["error"]["code"]


@pytest.fixture(scope="module")
def open_server(tmp_path_factory):
    """No token: the case the cross-site probe attacked."""
    root = tmp_path_factory.mktemp("open")
    with http_server(root) as base:
        assert send(base, "POST", "/v1/scenarios/0/open", [JSON], {"name": "doc"})[0] == 200
        yield base, root


@pytest.mark.parametrize("ctype", ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", None])
def test_a_cross_site_simple_request_writes_nothing(open_server, ctype):
    base, root = open_server
    body = json.dumps({"path": "csrf.json", "format": "native"}).encode()
    typed = [("Content-Type", ctype)] if ctype else []
    # from a foreign page: refused for its origin
    got = send(base, "POST", "/v1/documents/doc/save", [("Origin", "http://evil.example"), *typed], raw=body)
    assert error(got) == (403, "forbidden")
    assert "evil.example" in got[2]["error"]["message"] and "--allow-origin" in got[2]["error"]["message"]
    # the same simple request with no Origin (an old browser, a stripped header): refused for its type
    assert error(send(base, "POST", "/v1/documents/doc/save", typed, raw=body)) == (415, "unsupported_media_type")
    assert error(send(base, "POST", "/v1/call/save", typed, raw=body)) == (415, "unsupported_media_type")
    assert not (root / "csrf.json").exists()


def test_a_bodiless_post_needs_the_json_type_too(open_server):
    base, _ = open_server
    assert error(send(base, "POST", "/v1/documents/doc/undo")) == (415, "unsupported_media_type")
    assert send(base, "POST", "/v1/documents/doc/undo", [JSON])[0] == 200


def test_a_foreign_origin_is_refused_on_every_route_and_method(open_server):
    base, root = open_server
    evil = ("Origin", "https://evil.example")
    for method, path in (("GET", "/v1/health"), ("GET", "/v1/tools"), ("GET", "/v1/documents/doc/observe"),
                         ("POST", "/v1/documents/doc/save"), ("DELETE", "/v1/documents/doc"), ("POST", "/mcp"),
                         ("GET", "/mcp"), ("GET", "/no/such/route"), ("OPTIONS", "/v1/documents")):
        got = send(base, method, path, [evil, JSON], {"path": "evil.json"} if method == "POST" else None)
        assert error(got) == (403, "forbidden"), (method, path)
        assert "access-control-allow-origin" not in got[1]
    # a preflight from it is not answered either, so a browser sends nothing else
    got = send(base, "OPTIONS", "/v1/documents/doc/apply", [evil, ("Access-Control-Request-Method", "POST")])
    assert error(got) == (403, "forbidden")
    for origin in ("null", "http://127.0.0.1.evil.example", "http://localhost.evil.example:8765", "file://",
                   "not an origin"):
        assert error(send(base, "GET", "/v1/documents", [("Origin", origin)])) == (403, "forbidden"), origin
    # a no-cors subresource request (an <img>): no Origin, but the browser says it is cross-site
    assert error(send(base, "GET", "/v1/documents", [("Sec-Fetch-Site", "cross-site")])) == (403, "forbidden")
    assert send(base, "GET", "/v1/documents", [("Sec-Fetch-Site", "same-origin")])[0] == 200
    assert not (root / "evil.json").exists()
    assert send(base, "GET", "/v1/documents/doc/observe")[0] == 200  # the document is still open


def test_dns_rebinding_is_refused(open_server):
    base, _ = open_server
    port = host_of(base).rsplit(":", 1)[1]
    for host in (f"evil.example:{port}", "evil.example", f"192.168.1.20:{port}", f"127.0.0.1.nip.io:{port}"):
        for method, path, origin in (("GET", "/v1/health", None), ("GET", "/v1/documents", None),
                                     ("POST", "/v1/documents/doc/save", f"http://{host}"),
                                     ("POST", "/mcp", f"http://{host}")):
            headers = [JSON] + ([("Origin", origin)] if origin else [])
            got = send(base, method, path, headers, {"path": "rebound.json"} if method == "POST" else None, host=host)
            assert error(got) == (421, "misdirected"), (host, path)
    assert error(send(base, "GET", "/v1/health", host="[::1")) == (400, "bad_request")


def test_loopback_and_own_origins_are_allowed(open_server):
    base, _ = open_server
    port = host_of(base).rsplit(":", 1)[1]
    for host in (host_of(base), f"localhost:{port}", "localhost", f"app.localhost:{port}"):
        status, head, body = send(base, "GET", "/v1/documents", host=host)
        assert status == 200 and body["ok"], host
    # the server's own pages (what /live/{name} will be) and other loopback pages
    status, head, _ = send(base, "POST", "/v1/documents/doc/observe", [("Origin", f"http://{host_of(base)}"), JSON])
    assert status == 200 and "access-control-allow-origin" not in head  # same origin: no CORS needed
    for origin in ("http://localhost:3000", "http://127.0.0.1:5173", "https://localhost", "http://[::1]:8888"):
        status, head, body = send(base, "POST", "/v1/documents/doc/observe", [("Origin", origin), JSON])
        assert status == 200 and body["ok"], origin
        assert head["access-control-allow-origin"] == origin and "Origin" in head["vary"]
        pre = send(base, "OPTIONS", "/v1/documents/doc/apply", [("Origin", origin),
                                                                 ("Access-Control-Request-Method", "POST"),
                                                                 ("Access-Control-Request-Headers", "content-type")])
        assert pre[0] == 204 and pre[1]["access-control-allow-origin"] == origin
        assert "POST" in pre[1]["access-control-allow-methods"]
        assert "content-type" in pre[1]["access-control-allow-headers"]


def test_allow_origin_and_token_together(tmp_path):
    allowed = "https://canvas.example.com"
    with http_server(tmp_path, token=TOKEN, extra=["--allow-origin", allowed, "--allow-origin", "http://10.0.0.7:3000"]) as base:
        auth = ("Authorization", f"Bearer {TOKEN}")
        # the allowed origin, through a proxy that keeps its name as Host
        status, head, body = send(base, "POST", "/v1/scenarios/1/open", [("Origin", allowed), auth, JSON],
                                  {"name": "x"}, host="canvas.example.com")
        assert status == 200 and head["access-control-allow-origin"] == allowed
        assert send(base, "GET", "/v1/documents", [("Origin", "http://10.0.0.7:3000"), auth])[0] == 200
        # a right token does not make a foreign origin, a rebinding or a simple request acceptable
        assert error(send(base, "GET", "/v1/documents", [("Origin", "https://evil.example"), auth])) == (403, "forbidden")
        assert error(send(base, "GET", "/v1/documents", [auth], host="evil.example")) == (421, "misdirected")
        assert error(send(base, "POST", "/v1/documents/x/undo", [auth, ("Content-Type", "text/plain")])) == (
            415, "unsupported_media_type")
        # an allowed page without the token: refused for the token, with the CORS headers so the page can read why
        got = send(base, "GET", "/v1/documents", [("Origin", allowed)])
        assert error(got) == (401, "unauthorized") and got[1]["access-control-allow-origin"] == allowed
        # a preflight carries no token and is answered for the allowed origin only
        pre = [("Access-Control-Request-Method", "POST"), ("Access-Control-Request-Headers", "authorization")]
        assert send(base, "OPTIONS", "/v1/documents", [("Origin", allowed), *pre])[0] == 204
        assert error(send(base, "OPTIONS", "/v1/documents", [("Origin", "https://other.example"), *pre])) == (
            403, "forbidden")


def test_health_shows_the_root_only_to_a_token_holder(tmp_path):
    with http_server(tmp_path) as base:
        status, _, body = send(base, "GET", "/v1/health")
        assert status == 200 and body["result"]["status"] == "ok" and "root" not in body["result"]
        assert str(tmp_path) not in json.dumps(body)
    with http_server(tmp_path, token=TOKEN) as base:
        status, _, body = send(base, "GET", "/v1/health")
        assert status == 200 and "root" not in body["result"] and str(tmp_path) not in json.dumps(body)
        assert "root" not in send(base, "GET", "/v1/health", [("Authorization", "Bearer wrong")])[2]["result"]
        _, _, body = send(base, "GET", "/v1/health", [("Authorization", f"Bearer {TOKEN}")])
        assert body["result"]["root"] == str(tmp_path.resolve())


@pytest.mark.parametrize("bad", ["*", "https://app.example/path", "app.example", "ftp://x.example", "http://"])
def test_a_bad_allow_origin_stops_the_command(tmp_path, bad):
    out = subprocess.run(serve_command(tmp_path, "--http", "127.0.0.1:0", "--allow-origin", bad), cwd=REPO,
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 2
    assert out.stderr.startswith("spatialobs: error: --allow-origin: ") and "is not an origin" in out.stderr


def _ws_scope(host: str, origin: str = "", extensions: Any = None) -> Dict[str, Any]:
    headers = [(b"host", host.encode()), (b"upgrade", b"websocket")] + ([(b"origin", origin.encode())] if origin else [])
    return {"type": "websocket", "scheme": "ws", "path": "/v1/documents/d/live", "headers": headers,
            "extensions": extensions or {}}


def test_the_policy_on_websocket_scopes():
    anyio = pytest.importorskip("anyio")
    p = OriginPolicy("127.0.0.1")
    assert p.check(_ws_scope("127.0.0.1:8765", "http://127.0.0.1:8765")) is None  # the served live page
    assert p.check(_ws_scope("localhost:8765", "http://localhost:5173")) is None
    assert p.check(_ws_scope("127.0.0.1:8765")) is None  # not a browser
    assert p.check(_ws_scope("127.0.0.1:8765", "https://evil.example")).status == 403
    assert p.check(_ws_scope("evil.example:8765", "http://evil.example:8765")).status == 421  # rebinding
    sent: List[Dict[str, Any]] = []

    async def collect(message: Dict[str, Any]) -> None:
        sent.append(message)

    refusal = Refusal(421, "misdirected", "no")
    anyio.run(refuse, _ws_scope("x", extensions={"websocket.http.response": {}}), collect, refusal)
    assert sent == [{"type": "websocket.close", "code": 1008, "reason": "no"}]


def test_the_policy_on_other_binds():
    lan = OriginPolicy("0.0.0.0")
    assert lan.host_allowed("192.168.1.5") and lan.host_allowed("::1") and not lan.host_allowed("evil.example")
    one = OriginPolicy("192.168.1.5", ["https://board.example"])
    assert one.host_allowed("192.168.1.5") and one.host_allowed("board.example") and not one.host_allowed("x.example")
    assert not OriginPolicy("::1").host_allowed("10.0.0.1")
    assert [is_loopback(h) for h in ("::ffff:127.0.0.1", "LOCALHOST.", "127.0.0.1.evil.example")] == [True, True, False]
    assert normalize_origin("http://Example.com:80") == "http://example.com"
    with pytest.raises(ValueError, match="is not an origin"):
        normalize_origin("http://*.example.com")


def test_websocket_upgrades_pass_the_same_checks(tmp_path):
    """A real WebSocket route on the real server (uvicorn with the websockets library) and a real client."""
    pytest.importorskip("websockets")
    from starlette.routing import WebSocketRoute
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    from tests.test_serve_support import inprocess_server

    async def echo(websocket: Any) -> None:
        # what a live endpoint can check itself (the guard has already refused bad Hosts and Origins)
        assert websocket.app.state.origin_policy.check(websocket.scope) is None
        await websocket.accept()
        await websocket.send_text("echo " + await websocket.receive_text())
        await websocket.close()

    def add_route(app: Any) -> None:
        app.app.router.routes.insert(0, WebSocketRoute("/v1/documents/{name}/live", echo))  # before the real one

    log: List[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: log.append(f"{record.levelname} {record.getMessage()}")  # type: ignore[method-assign]
    with inprocess_server(tmp_path, configure=add_route) as base:
        logging.getLogger("uvicorn.error").addHandler(handler)  # after uvicorn configured its logging
        url = "ws" + base[4:] + "/v1/documents/board/live"
        for origin in (None, f"http://{host_of(base)}", "http://localhost:5173"):
            with connect(url, origin=origin, open_timeout=10) as ws:  # type: ignore[arg-type]
                ws.send("hi")
                assert ws.recv(timeout=10) == "echo hi"
        port = int(host_of(base).rsplit(":", 1)[1])
        for host, origin in (("127.0.0.1", "https://evil.example"), ("127.0.0.1", "null"),
                             ("evil.example", f"http://evil.example:{port}"), ("evil.example", None)):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)  # a rebinding: the name is evil's
            with pytest.raises(InvalidStatus) as info:
                with connect(f"ws://{host}:{port}/v1/documents/board/live", sock=sock, origin=origin,  # type: ignore[arg-type]
                             open_timeout=10):
                    pass
            sock.close()
            assert info.value.response.status_code == 403, (host, origin)
        logging.getLogger("uvicorn.error").removeHandler(handler)
    assert not [line for line in log if "ERROR" in line or "Traceback" in line], log
