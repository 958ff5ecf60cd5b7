"""The service as a JSON HTTP API (an ASGI app on Starlette, served by uvicorn), with MCP beside it.

Routes mirror the tools; path parameters, query parameters (typed by the tool's
schema) and a JSON body are merged into the tool's arguments::

    GET    /v1/health                         no token needed
    GET    /v1/tools                          every tool with its JSON schema
    POST   /v1/call/{tool}                    any tool, arguments as the body
    GET    /v1/documents                      list_documents
    POST   /v1/documents                      open_document
    DELETE /v1/documents/{document}           close
    GET    /v1/documents/{document}/observe   observe (also POST)
    GET    /v1/documents/{document}/snapshot  snapshot
    POST   /v1/documents/{document}/apply     apply
    POST   /v1/documents/{document}/undo      undo
    POST   /v1/documents/{document}/mermaid   create_from_mermaid
    GET    /v1/documents/{document}/snapshots list_snapshots (POST: save_snapshot)
    POST   /v1/documents/{document}/snapshots/{name}/restore   restore_snapshot
    DELETE /v1/documents/{document}/snapshots/{name}           delete_snapshot
    GET    /v1/documents/{document}/render    render (``raw=1``: the SVG or PNG itself)
    POST   /v1/documents/{document}/save      save
    POST   /v1/documents/{document}/reload    reload
    GET    /v1/scenarios                      list_scenarios
    POST   /v1/scenarios/{config}/open        scenario_open
    POST   /v1/scenarios/{config}/evaluate    evaluate
    GET    /v1/scenarios/{config}/reply       reference_reply
    GET    /v1/screens                        list_indexes
    POST   /v1/screens/{index}/add            screen_add (also query, choose, save, load)
    GET    /v1/screens/{index}/stats          screen_stats
    POST   /mcp                               MCP over streamable HTTP

A success is ``{"ok": true, "result": ...}``; a failure ``{"ok": false, "error":
{"code", "message"}}`` with the matching HTTP status. With a token every route
but ``/v1/health`` needs ``Authorization: Bearer <token>``. Bodies larger than
the service's ``max_request_bytes`` are refused with 413.

Examples
--------
>>> sorted({path for _, path, _ in ROUTES if path.startswith("/v1/scenarios")})
['/v1/scenarios', '/v1/scenarios/{config}/evaluate', '/v1/scenarios/{config}/open', '/v1/scenarios/{config}/reply']
"""

from __future__ import annotations

import base64
import hmac
import json
import socket
import sys
from typing import Any, Awaitable, Callable, Dict, List, MutableMapping, Optional, Tuple

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from spatialobs.serve.service import TOOLS, Service, ServiceError

__all__ = ["build_app", "ROUTES", "run_http", "serve_socket", "parse_hostport"]

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

#: (method, path, tool) of each route family member; "*" takes the tool from the path.
ROUTES: Tuple[Tuple[str, str, str], ...] = (
    ("POST", "/v1/call/{tool}", "*"),
    ("GET", "/v1/documents", "list_documents"),
    ("POST", "/v1/documents", "open_document"),
    ("DELETE", "/v1/documents/{document}", "close"),
    ("GET", "/v1/documents/{document}/observe", "observe"),
    ("POST", "/v1/documents/{document}/observe", "observe"),
    ("GET", "/v1/documents/{document}/snapshot", "snapshot"),
    ("POST", "/v1/documents/{document}/apply", "apply"),
    ("POST", "/v1/documents/{document}/undo", "undo"),
    ("POST", "/v1/documents/{document}/mermaid", "create_from_mermaid"),
    ("GET", "/v1/documents/{document}/snapshots", "list_snapshots"),
    ("POST", "/v1/documents/{document}/snapshots", "save_snapshot"),
    ("POST", "/v1/documents/{document}/snapshots/{name}/restore", "restore_snapshot"),
    ("DELETE", "/v1/documents/{document}/snapshots/{name}", "delete_snapshot"),
    ("GET", "/v1/documents/{document}/render", "render"),
    ("POST", "/v1/documents/{document}/save", "save"),
    ("POST", "/v1/documents/{document}/reload", "reload"),
    ("GET", "/v1/scenarios", "list_scenarios"),
    ("POST", "/v1/scenarios/{config}/open", "scenario_open"),
    ("POST", "/v1/scenarios/{config}/evaluate", "evaluate"),
    ("GET", "/v1/scenarios/{config}/reply", "reference_reply"),
    ("GET", "/v1/screens", "list_indexes"),
    ("POST", "/v1/screens/{index}/add", "screen_add"),
    ("POST", "/v1/screens/{index}/query", "screen_query"),
    ("GET", "/v1/screens/{index}/stats", "screen_stats"),
    ("POST", "/v1/screens/{index}/choose", "screen_choose"),
    ("POST", "/v1/screens/{index}/save", "screen_save"),
    ("POST", "/v1/screens/{index}/load", "screen_load"),
)
_SPECS = {t.name: t for t in TOOLS}


def _fail(exc: ServiceError) -> JSONResponse:
    return JSONResponse({"ok": False, "error": exc.to_dict()}, status_code=exc.status)


def _coerce(tool: str, name: str, raw: str) -> Any:
    """A query or path string as the type the tool's schema gives the argument."""
    prop = _SPECS[tool].schema["properties"].get(name)
    if prop is None:
        return raw  # check_args names the unknown argument
    types = prop.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    try:
        if "string" in types:
            return raw
        if types == ["integer"]:
            return int(raw)
        if types == ["number"]:
            return float(raw)
        if types == ["boolean"]:
            if raw.lower() in ("1", "true", "yes"):
                return True
            if raw.lower() in ("0", "false", "no"):
                return False
            raise ValueError(raw)
        return json.loads(raw)
    except ValueError:
        raise ServiceError("bad_request", f"{tool}: argument {name!r} must be {' or '.join(types)}, got {raw!r}") from None


async def _body(request: Request, limit: int) -> Dict[str, Any]:
    chunks: List[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ServiceError("too_large", f"request body over {limit} bytes")
        chunks.append(chunk)
    if not size:
        return {}
    try:
        data = json.loads(b"".join(chunks))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ServiceError("bad_request", f"the body is not valid JSON: {exc}") from None
    except RecursionError:
        raise ServiceError("bad_request", "the body is nested too deeply") from None
    if not isinstance(data, dict):
        raise ServiceError("bad_request", f"the body must be a JSON object, got {type(data).__name__}")
    return data


def _endpoint(service: Service, tool: str) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        try:
            name = request.path_params.get("tool", tool) if tool == "*" else tool
            if name not in _SPECS:
                raise ServiceError("not_found", f"no tool {name!r}")
            args: Dict[str, Any] = {}
            raw = False
            for k, v in request.query_params.items():
                if name == "render" and k == "raw":
                    raw = v.lower() in ("1", "true", "yes")
                    continue
                args[k] = _coerce(name, k, v)
            if request.method in ("POST", "PUT", "PATCH"):
                body = await _body(request, service.limits.max_request_bytes)
                args.update(body)
            for k, v in request.path_params.items():
                if k != "tool":
                    args[k] = _coerce(name, k, v)
            result = await anyio.to_thread.run_sync(service.call, name, args)
        except ServiceError as exc:
            return _fail(exc)
        if raw and name == "render":
            if result["format"] == "svg":
                return Response(result["svg"], media_type="image/svg+xml")
            return Response(base64.b64decode(result["data"]), media_type="image/png")
        return JSONResponse({"ok": True, "result": result})

    return handle


def _routes(service: Service) -> List[Route]:
    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "result": {"status": "ok", "root": str(service.root)}})

    async def tools(request: Request) -> Response:
        return JSONResponse({"ok": True, "result": {"tools": [
            {"name": t.name, "family": t.family, "description": t.description, "inputSchema": t.schema}
            for t in service.tools]}})

    routes = [Route("/v1/health", health, methods=["GET"]), Route("/v1/tools", tools, methods=["GET"])]
    by_path: Dict[str, Dict[str, str]] = {}
    for method, path, tool in ROUTES:
        by_path.setdefault(path, {})[method] = tool
    for path, methods in by_path.items():
        handlers = {m: _endpoint(service, t) for m, t in methods.items()}

        def dispatch(h: Dict[str, Callable[[Request], Awaitable[Response]]]) -> Callable[[Request], Awaitable[Response]]:
            async def run(request: Request) -> Response:
                return await h[request.method](request)
            return run

        routes.append(Route(path, dispatch(handlers), methods=list(methods)))
    return routes


class _Guard:
    """ASGI middleware: bearer token, request size (by Content-Length), one-line JSON errors."""

    def __init__(self, app: ASGIApp, token: Optional[str], max_bytes: int) -> None:
        self.app = app
        self.token = token
        self.max_bytes = max_bytes

    async def _reject(self, send: Callable[[Any], Awaitable[None]], exc: ServiceError,
                      extra: Tuple[Tuple[bytes, bytes], ...] = ()) -> None:
        body = json.dumps({"ok": False, "error": exc.to_dict()}).encode()
        await send({"type": "http.response.start", "status": exc.status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                *extra]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        if self.token is not None and scope.get("path") != "/v1/health":
            auth = headers.get(b"authorization", b"").decode("latin-1")
            given = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                await self._reject(send, ServiceError("unauthorized", "missing or wrong bearer token"),
                                   ((b"www-authenticate", b"Bearer"),))
                return
        length = headers.get(b"content-length")
        if length is not None:
            try:
                n = int(length)
            except ValueError:
                n = -1
            if n < 0 or n > self.max_bytes:
                await self._reject(send, ServiceError("too_large", f"request body over {self.max_bytes} bytes"))
                return
        await self.app(scope, receive, send)


def build_app(service: Service, *, token: Optional[str] = None, mcp: bool = True, host: str = "127.0.0.1") -> ASGIApp:
    """The ASGI app: the JSON routes, and MCP over streamable HTTP at ``/mcp`` (when ``mcp``).

    ``host`` is what the server binds; for a loopback host the MCP endpoint also
    refuses requests whose Host or Origin header is not a loopback one (DNS rebinding).
    """
    routes = _routes(service)
    if mcp:
        from spatialobs.serve.mcp_server import build_server

        server = build_server(service)
        app: Any = server.streamable_http_app(custom_starlette_routes=routes, host=host,
                                              max_request_body_size=service.limits.max_request_bytes)
    else:
        from starlette.applications import Starlette

        app = Starlette(routes=routes)
    return _Guard(app, token, service.limits.max_request_bytes)


def parse_hostport(text: str) -> Tuple[str, int]:
    """``"HOST:PORT"`` (or ``":PORT"``, ``"PORT"``) as ``(host, port)``; the host defaults to 127.0.0.1.

    Examples
    --------
    >>> parse_hostport("8765"), parse_hostport("0.0.0.0:80"), parse_hostport("[::1]:9000")
    (('127.0.0.1', 8765), ('0.0.0.0', 80), ('::1', 9000))
    """
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or "127.0.0.1"
    try:
        p = int(port)
    except ValueError:
        raise ServiceError("bad_request", f"--http must be HOST:PORT, got {text!r}") from None
    if not 0 <= p <= 65535:
        raise ServiceError("bad_request", f"port must be 0..65535, got {p}")
    return host, p


def serve_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # responses go out as a header write and a body write: without TCP_NODELAY (inherited by the
    # accepted connections) Nagle's algorithm holds the body until the client's delayed ACK, ~40 ms
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def run_http(service: Service, host: str = "127.0.0.1", port: int = 8765, *, token: Optional[str] = None) -> None:
    """Serve the HTTP API and MCP over streamable HTTP with uvicorn until interrupted.

    Prints ``listening on http://HOST:PORT`` to stderr once the socket is bound
    (with the real port when ``port`` is 0).
    """
    import uvicorn

    sock = serve_socket(host, port)
    bound = sock.getsockname()[1]
    app = build_app(service, token=token, host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    print(f"spatialobs serve: listening on http://{shown}:{bound} (MCP at /mcp, API at /v1)", file=sys.stderr,
          flush=True)
    server.run(sockets=[sock])
