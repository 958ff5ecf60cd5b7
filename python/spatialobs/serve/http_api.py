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
    GET    /v1/documents/{document}/screenshot  screenshot: the person's view from their live editor (``raw=1``: PNG)
    WS     /v1/documents/{document}/live      the live editor protocol (:mod:`spatialobs.serve.live`)
    GET    /live/{document}                   the live page: the real editor on the document (opened from the
                                              root folder when it is not open: NAME, NAME.tldr, NAME.excalidraw)
    GET    /live/assets/{path}                the page's bundles, fonts and icons
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
{"code", "message"}}`` with the matching HTTP status. Before anything else every
request and WebSocket passes the :class:`~spatialobs.serve.security.OriginPolicy`
(Host and Origin checks against DNS rebinding and cross-site pages, ``--allow-origin``
for others; POST only as ``application/json``). With a token every route but
``/v1/health`` needs ``Authorization: Bearer <token>`` (health shows the root
folder only with it). Bodies larger than the service's ``max_request_bytes`` are
refused with 413 (announced or chunked), heads over 64 kB with 431. Unknown
routes (404), wrong methods (405) and malformed requests (400) get the same JSON
error. :func:`run_http` serves with the connection limits of
:mod:`spatialobs.serve.connections` (header, body and write timeouts, keep-alive,
a cap on open connections that closes idle ones first).

Examples
--------
>>> sorted({path for _, path, _ in ROUTES if path.startswith("/v1/scenarios")})
['/v1/scenarios', '/v1/scenarios/{config}/evaluate', '/v1/scenarios/{config}/open', '/v1/scenarios/{config}/reply']
"""

from __future__ import annotations

import base64
import hmac
import json
import logging
import socket
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, MutableMapping, Optional, Sequence, Tuple

import anyio.to_thread
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from spatialobs.serve.connections import ConnectionLimits
from spatialobs.serve.security import OriginPolicy, Refusal, refuse
from spatialobs.serve.service import ERROR_STATUS, TOOLS, Service, ServiceError

__all__ = ["build_app", "ROUTES", "run_http", "make_server", "serve_socket", "parse_hostport"]

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
    ("GET", "/v1/documents/{document}/screenshot", "screenshot"),
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
    """A query or path string as the type the tool's schema gives the argument.

    Numbers and booleans are parsed here; a string stays one, and so does the
    JSON text of an object or array, which :meth:`Service.call` decodes and
    checks as it does for MCP (one error line naming the argument either way).

    Examples
    --------
    >>> _coerce("observe", "max_objects", "40"), _coerce("observe", "viewport", "[0,0,10,10]")
    (40, '[0,0,10,10]')
    >>> _coerce("observe", "max_objects", "abc")
    Traceback (most recent call last):
    ...
    spatialobs.serve.service.ServiceError: observe: argument 'max_objects' must be integer, got 'abc'
    """
    prop = _SPECS[tool].schema["properties"].get(name)
    if prop is None:
        return raw  # check_args names the unknown argument
    t = prop.get("type")
    types = [x for x in ([t] if isinstance(t, str) else list(t or [])) if x != "null"]
    if not types or {"string", "object", "array"} & set(types):
        return raw
    try:
        if "integer" in types:
            return int(raw)
        if "number" in types:
            return float(raw)  # check_args refuses nan and inf
        if raw.lower() in ("1", "true", "yes"):
            return True
        if raw.lower() in ("0", "false", "no"):
            return False
        raise ValueError(raw)
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
                if name in ("render", "screenshot") and k == "raw":
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
        except ClientDisconnect:  # the client left mid-body: nobody to answer, nothing to log
            return Response(status_code=400)
        if raw and name in ("render", "screenshot"):
            if result["format"] == "svg":
                return Response(result["svg"], media_type="image/svg+xml")
            return Response(base64.b64decode(result["data"]), media_type="image/png")
        return JSONResponse({"ok": True, "result": result})

    return handle


_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json",
          ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".svg": "image/svg+xml",
          ".png": "image/png", ".txt": "text/plain; charset=utf-8", ".html": "text/html; charset=utf-8"}


def _live_routes(service: Service, hub: Any, token: Optional[str]) -> List[Any]:
    """The live page, its assets and the WebSocket of each document."""
    from spatialobs.serve.live import EDITORS, page_dir, page_html, page_missing

    def authorized(headers: Any, query: Any) -> bool:
        if token is None:
            return True
        auth = headers.get("authorization", "")
        given = auth[7:].strip() if auth[:7].lower() == "bearer " else query.get("token", "")
        return hmac.compare_digest(given.encode(), token.encode())

    async def live_socket(websocket: WebSocket) -> None:
        # the guard has checked Host and Origin already; checked again here for an app mounted without it
        app = websocket.scope.get("app")
        policy = getattr(getattr(app, "state", None), "origin_policy", None)
        refusal = policy.check(websocket.scope) if policy is not None else None
        if refusal is not None:
            await refuse(websocket.scope, websocket.send, refusal)
            return
        if not authorized(websocket.headers, websocket.query_params):
            # accepted, then closed with a code the editor's client reads (a refused handshake is only "1006")
            await websocket.accept()
            await websocket.close(code=4401, reason="missing or wrong token")
            return
        await hub.handle(websocket, websocket.path_params["document"])

    def open_for_page(name: str) -> Any:
        try:
            return service._doc(name)
        except ServiceError:
            pass
        for cand in (name, name + ".tldr", name + ".excalidraw", name + ".json"):
            try:
                full = service.resolve_path(cand)
            except ServiceError:
                continue
            doc_name = name if service._name_ok(name) else None
            opened = service.call("open_document", {"path": service._rel(full), **({"name": doc_name} if doc_name
                                                                                   else {})})
            return service._doc(opened["document"])
        raise ServiceError("not_found", f"no open document {name!r} and no file {name!r} (or .tldr, .excalidraw, "
                                        ".json) under the root folder")

    async def live_page(request: Request) -> Response:
        if not authorized(request.headers, request.query_params):
            return _fail(ServiceError("unauthorized", "missing or wrong token (open /live/NAME?token=TOKEN)"))
        where = page_dir()
        if where is None:
            return _fail(ServiceError("not_found", page_missing()))
        try:
            d = await anyio.to_thread.run_sync(open_for_page, request.path_params["document"])
        except ServiceError as exc:
            return _fail(exc)
        template = (where / "live.html").read_text(encoding="utf-8")
        html = page_html(template, d.name, EDITORS.get(d.format, "tldraw"))
        return HTMLResponse(html, headers={"cache-control": "no-store"})

    async def live_asset(request: Request) -> Response:
        where = page_dir()
        if where is None:
            return _fail(ServiceError("not_found", page_missing()))
        base = (where / "assets").resolve()
        rel = request.path_params["path"]
        full = (base / rel).resolve()
        if ".." in Path(rel).parts or base not in full.parents or not full.is_file():
            return _fail(ServiceError("not_found", f"no live page asset {rel!r}"))
        return FileResponse(full, media_type=_TYPES.get(full.suffix, "application/octet-stream"),
                            headers={"cache-control": "no-cache"})

    return [WebSocketRoute("/v1/documents/{document}/live", live_socket),
            Route("/live/assets/{path:path}", live_asset, methods=["GET"]),
            Route("/live/{document}", live_page, methods=["GET"])]


def _routes(service: Service) -> List[Route]:
    async def health(request: Request) -> Response:
        from spatialobs import __version__

        result: Dict[str, Any] = {"status": "ok", "version": __version__}
        if request.scope.get("spatialobs.authenticated"):  # the root folder only to a token holder
            result["root"] = str(service.root)
        return JSONResponse({"ok": True, "result": result})

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


_CODE_OF_STATUS = {status: code for code, status in ERROR_STATUS.items()}


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no route, wrong method...) as the service's JSON error."""
    status = getattr(exc, "status_code", 500)
    path = request.url.path[:200]
    if status == 404:
        message = f"no route {request.method} {path}"
    elif status == 405:
        allow = (getattr(exc, "headers", None) or {}).get("Allow", "")
        message = f"{path} does not take {request.method}" + (f"; it takes {allow}" if allow else "")
    else:
        message = str(getattr(exc, "detail", "")) or f"HTTP {status}"
    code = _CODE_OF_STATUS.get(status, "bad_request" if status < 500 else "internal")
    return JSONResponse({"ok": False, "error": ServiceError(code, message).to_dict()}, status_code=status,
                        headers=getattr(exc, "headers", None))


async def _internal_error(request: Request, exc: Exception) -> Response:
    """An unexpected exception (a bug; the server logs its traceback) as a one-line JSON 500."""
    return JSONResponse({"ok": False, "error": ServiceError("internal", f"internal error ({type(exc).__name__})")
                         .to_dict()}, status_code=500)


class _QuietDisconnect(logging.Filter):
    """Drops the MCP transport's traceback for a client that disconnected mid-request (not a server fault)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, ClientDisconnect)


class _Guard:
    """ASGI middleware in front of every route: origin policy, CORS, bearer token, request size."""

    def __init__(self, app: ASGIApp, token: Optional[str], max_bytes: int, policy: OriginPolicy,
                 max_header_bytes: int) -> None:
        self.app = app
        self.token = token
        self.max_bytes = max_bytes
        self.policy = policy
        self.max_header_bytes = max_header_bytes

    def _authorized(self, headers: Dict[bytes, bytes]) -> bool:
        if self.token is None:
            return True
        auth = headers.get(b"authorization", b"").decode("latin-1")
        given = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        return hmac.compare_digest(given.encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        # h11 caps only a head that arrives in pieces; one read can bring a bigger one whole
        size = sum(len(k) + len(v) + 4 for k, v in scope.get("headers", ()))
        refusal = (Refusal(431, "too_large", f"request headers over {self.max_header_bytes} bytes")
                   if size > self.max_header_bytes else self.policy.check(scope))
        if refusal is not None:
            await refuse(scope, send, refusal)
            return
        if scope["type"] != "http":  # a WebSocket endpoint checks its own credentials
            await self.app(scope, receive, send)
            return
        cors = self.policy.cors_headers(scope)
        answer = self.policy.preflight(scope)
        if answer is not None:
            await send({"type": "http.response.start", "status": 204, "headers": answer})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        authorized = self._authorized(headers)
        scope["spatialobs.authenticated"] = authorized and self.token is not None
        # the live page checks the token itself (a browser opening it passes the token in its URL);
        # its assets are the package's static files
        public = scope.get("path") == "/v1/health" or str(scope.get("path", "")).startswith("/live/")
        if not authorized and not public:
            await refuse(scope, send, Refusal(401, "unauthorized", "missing or wrong bearer token"),
                         [(b"www-authenticate", b"Bearer"), *cors])
            return
        length = headers.get(b"content-length")
        if length is not None:
            try:
                n = int(length)
            except ValueError:
                n = -1
            if n < 0 or n > self.max_bytes:
                await refuse(scope, send, Refusal(413, "too_large", f"request body over {self.max_bytes} bytes"), cors)
                return
        # the body counted as it arrives (chunked bodies announce no length): over the limit, the client gets
        # the 413 at once and the app sees a disconnect; what the app sends after that is dropped
        state = {"received": 0, "started": False, "refused": False}

        async def counted() -> Any:
            if state["refused"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > self.max_bytes:
                    if not state["started"]:
                        state["started"] = state["refused"] = True
                        await refuse(scope, send, Refusal(413, "too_large", f"request body over {self.max_bytes} "
                                                                            "bytes"), cors)
                    return {"type": "http.disconnect"}
            return message

        async def tracked(message: Any) -> None:
            if state["refused"]:
                return
            if message["type"] == "http.response.start":
                state["started"] = True
                if cors:
                    message = dict(message, headers=[*message.get("headers", []), *cors])
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except ClientDisconnect:
            pass


def build_app(service: Service, *, token: Optional[str] = None, mcp: bool = True, host: str = "127.0.0.1",
              allow_origins: Sequence[str] = (), max_header_bytes: int = ConnectionLimits.max_header_bytes) -> ASGIApp:
    """The ASGI app: the JSON routes, and MCP over streamable HTTP at ``/mcp`` (when ``mcp``).

    ``host`` is what the server binds and ``allow_origins`` the web origins
    allowed besides loopback ones: every request and WebSocket goes through
    their :class:`~spatialobs.serve.security.OriginPolicy` first (Host, Origin,
    no simple-request writes), then the token check. The policy is also
    ``app.state.origin_policy`` of the Starlette app inside.
    """
    from spatialobs.serve.live import LiveHub

    policy = OriginPolicy(host, allow_origins)
    hub = service.live if service.live is not None else LiveHub(service)
    routes = _routes(service) + _live_routes(service, hub, token)
    if mcp:
        from mcp.server.transport_security import TransportSecuritySettings

        from spatialobs.serve.mcp_server import build_server

        server = build_server(service)
        # the SDK's own Host/Origin check would refuse the origins --allow-origin allows; ours runs first
        app: Any = server.streamable_http_app(
            custom_starlette_routes=routes, host=host, max_request_body_size=service.limits.max_request_bytes,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    else:
        from starlette.applications import Starlette

        app = Starlette(routes=routes)
    app.state.origin_policy = policy
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _internal_error)
    sdk_log = logging.getLogger("mcp.server.streamable_http")
    if not any(isinstance(f, _QuietDisconnect) for f in sdk_log.filters):
        sdk_log.addFilter(_QuietDisconnect())
    return _Guard(app, token, service.limits.max_request_bytes, policy, max_header_bytes)


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
    sock.listen(1024)
    return sock


def make_server(service: Service, host: str = "127.0.0.1", port: int = 0, *, token: Optional[str] = None,
                allow_origins: Sequence[str] = (), limits: Optional[ConnectionLimits] = None) -> Tuple[Any, socket.socket]:
    """The uvicorn server :func:`run_http` runs, and its listening socket (bound, port 0: a free one).

    ``server.run(sockets=[sock])`` serves (from any thread); ``server.should_exit = True`` stops it.
    """
    import uvicorn

    from spatialobs.serve.connections import protocol_class

    lim = limits or ConnectionLimits()
    sock = serve_socket(host, port)
    app = build_app(service, token=token, host=host, allow_origins=allow_origins, max_header_bytes=lim.max_header_bytes)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False, http=protocol_class(lim),
                            timeout_keep_alive=lim.keep_alive,  # type: ignore[arg-type]  # a float works
                            h11_max_incomplete_event_size=lim.max_header_bytes, timeout_graceful_shutdown=5,
                            # live-canvas messages up to the request limit (a larger one gets a typed error)
                            ws_max_size=service.limits.max_request_bytes + (1 << 20))
    return uvicorn.Server(config), sock


def run_http(service: Service, host: str = "127.0.0.1", port: int = 8765, *, token: Optional[str] = None,
             allow_origins: Sequence[str] = (), limits: Optional[ConnectionLimits] = None) -> None:
    """Serve the HTTP API and MCP over streamable HTTP with uvicorn until interrupted.

    Connections are held to ``limits`` (:class:`~spatialobs.serve.connections.ConnectionLimits`:
    header, body and write timeouts, keep-alive, a cap on open connections).
    Prints ``listening on http://HOST:PORT`` to stderr once the socket is bound
    (with the real port when ``port`` is 0).
    """
    server, sock = make_server(service, host, port, token=token, allow_origins=allow_origins, limits=limits)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"spatialobs serve: listening on http://{shown}:{bound} (MCP at /mcp, API at /v1)", file=sys.stderr,
          flush=True)
    server.run(sockets=[sock])
