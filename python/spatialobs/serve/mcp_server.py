"""The service as an MCP server (the official Python SDK, ``mcp`` on PyPI).

Every tool of :data:`~spatialobs.serve.TOOLS` is listed with its description and JSON
schema, made from the op registry and the handlers' signatures (see
:mod:`spatialobs.serve.service`), and runs through :meth:`Service.call` in a worker
thread, which checks the arguments as it does for the HTTP API: an object or array
may come as its JSON text (as form-filling clients such as the MCP Inspector send
it), and a null or a wrong type is refused in one line naming the argument. A result is returned once,
as its JSON text (``json.loads(result.content[0].text)``): sending it also as
structured content would serialize it twice and make the SDK's models copy
and validate it on both sides, which took most of an ``observe``'s time.
``render`` with ``format: "png"`` and ``screenshot`` return MCP image content. A failed call is a
tool result with ``isError``, the one-line message (``code: message``) and
``{"error": {"code", "message"}}`` as structured content, never a protocol
error or a traceback. Resources: the observation guide and each open document.

Over stdio (:func:`run_stdio`) every line the client sends gets an answer or is
a valid message: a line that is not JSON gets the JSON-RPC error -32700, JSON
that is not a JSON-RPC message (an array, a number, a wrong ``jsonrpc``, a
missing method, nesting deeper than the parser goes) -32600, and so does a
line over :func:`stdio_line_limit` bytes (read and discarded without being
held); the error carries the message's ``id`` whenever it can be found at the
top level of the text, else ``null``. Blank lines are skipped.

Examples
--------
>>> from spatialobs.serve import Service
>>> server = build_server(Service("."))
>>> server.name
'spatialobs'
"""

from __future__ import annotations

import json
import re
import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, BinaryIO, Callable, Dict, List, Optional, Tuple, Union

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server

from spatialobs.serve.service import Service, ServiceError

__all__ = ["build_server", "run_stdio", "result_content", "stdio_transport", "stdio_message", "stdio_line_limit",
           "recover_id"]

INSTRUCTIONS = ("spatialobs: exact structured observations of canvases (tldraw, Excalidraw) and GUI screens. "
                "Open a document, observe it (keep the token and pass it back as since to see what the person "
                "changed), apply canvas_ops, render, save. Coordinates in observations and ops are action "
                "coordinates (page minus the document's origin).")


def result_content(tool: str, result: Dict[str, Any]) -> types.CallToolResult:
    """The MCP result of one successful tool call (image content for a PNG render)."""
    if tool in ("render", "screenshot") and result.get("format") == "png":
        meta = {k: v for k, v in result.items() if k != "data"}
        return types.CallToolResult(content=[types.ImageContent(data=result["data"], mime_type="image/png"),
                                             types.TextContent(text=json.dumps(meta))], structured_content=meta)
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return types.CallToolResult(content=[types.TextContent(text=text)])


def _error(exc: ServiceError) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=f"{exc.code}: {exc.message}")],
                                structured_content={"error": exc.to_dict()}, is_error=True)


def build_server(service: Service) -> "Server[Any]":
    """A low-level MCP :class:`~mcp.server.lowlevel.Server` whose tools and resources are the service's."""
    from spatialobs import __version__ as version

    tools = [types.Tool(name=t.name, description=t.description, input_schema=t.schema) for t in service.tools]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        try:
            size = len(json.dumps(args))
        except (TypeError, ValueError):
            size = 0
        if size > service.limits.max_request_bytes:
            return _error(ServiceError("too_large", f"{params.name}: arguments of {size} bytes; the limit is "
                                                    f"{service.limits.max_request_bytes}"))
        try:
            result = await anyio.to_thread.run_sync(service.call, params.name, args)
        except ServiceError as exc:
            return _error(exc)
        return result_content(params.name, result)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=r["uri"], name=r["name"], mime_type=r["mimeType"], description=r["description"])
            for r in service.resources()])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text, mime = await anyio.to_thread.run_sync(service.read_resource, uri)
        except ServiceError as exc:
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, f"{exc.code}: {exc.message}") from None
        contents: List[Any] = [types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
        return types.ReadResourceResult(contents=contents)

    return Server("spatialobs", version=version, instructions=INSTRUCTIONS, on_list_tools=list_tools,
                  on_call_tool=call_tool, on_list_resources=list_resources, on_read_resource=read_resource)


def stdio_line_limit(service: Service) -> int:
    """The longest line read over stdio: the service's request limit and room for the JSON-RPC envelope.

    Examples
    --------
    >>> from spatialobs.serve import Limits
    >>> stdio_line_limit(Service(".", limits=Limits(max_request_bytes=1000)))
    66536
    """
    return service.limits.max_request_bytes + 64 * 1024


_TOKEN = re.compile(r'["{}\[\],:]')
_DECODER = json.JSONDecoder()
_ID_SCAN = 64 * 1024  # how far into a bad message the id is looked for


def recover_id(text: bytes) -> Optional[Union[int, str]]:
    """The ``id`` member of the top-level JSON object that ``text`` starts, if it is readable (else None).

    Works on truncated, malformed or too deeply nested text without parsing
    the rest: only the top level is followed (an ``id`` inside ``params`` is
    not the message's), and only the first 64 kB are looked at.

    Examples
    --------
    >>> recover_id(b'{"jsonrpc": "2.0", "params": {"id": 1, "x": [[[') is None
    True
    >>> recover_id(b'{"jsonrpc": "2.0", "params": {"id": 1}, "id": "a-7", "method": 3')
    'a-7'
    >>> recover_id(b'{"id": 12, "params": ' + b"[" * 100000)
    12
    >>> recover_id(b'[{"id": 1}]'), recover_id(b'{"id": true}'), recover_id(b'not json')
    (None, None, None)
    """
    s = text[:_ID_SCAN].decode("utf-8", "replace")
    i = len(s) - len(s.lstrip())
    if not s.startswith("{", i):
        return None
    depth, key = 0, False  # key: at depth 1 a member name comes next
    while True:
        m = _TOKEN.search(s, i)
        if m is None:
            return None
        c, i = m.group(), m.start()
        if c == '"':
            try:
                value, end = _DECODER.raw_decode(s, i)
            except ValueError:
                return None
            if depth == 1 and key:
                after = s[end:].lstrip()
                if after.startswith(":") and value == "id":
                    rest = after[1:].lstrip()
                    if rest[:1] == '"' or rest[:1] == "-" or rest[:1].isdigit():
                        try:
                            v = _DECODER.raw_decode(rest)[0]
                        except ValueError:
                            return None
                        return v if isinstance(v, (int, str)) and not isinstance(v, bool) else None
                    return None
            key, i = False, end
            continue
        if c in "{[":
            depth += 1
            key = c == "{" and depth == 1
        elif c in "}]":
            depth -= 1
            if depth <= 0:
                return None
        elif c == ",":
            key = depth == 1
        i += 1


def _invalid(obj: Any) -> str:
    """Why a parsed JSON value is not a JSON-RPC 2.0 message (for the -32600 error)."""
    if isinstance(obj, list):
        return "a batch (a JSON array) is not supported; send one JSON-RPC message per line"
    if not isinstance(obj, dict):
        return f"a JSON-RPC message is a JSON object, got {type(obj).__name__}"
    if obj.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "method" in obj and not isinstance(obj["method"], str):
        return "method must be a string"
    rid = obj.get("id")
    if "id" in obj and (isinstance(rid, bool) or not isinstance(rid, (int, str))):
        return "id must be a string or an integer"
    if "params" in obj and not isinstance(obj["params"], (dict, list)):
        return "params must be an object"
    if "method" not in obj and "result" not in obj and "error" not in obj:
        return "a request needs a method"
    return "not a valid JSON-RPC request, notification or response"


def stdio_message(line: bytes, over: bool = False, limit: int = 0) -> Union[Any, "types.JSONRPCError", None]:
    """One line read over stdio as the JSON-RPC message to dispatch, the error to answer, or None (blank).

    ``over``: the line was longer than ``limit`` bytes and ``line`` is its beginning.

    Examples
    --------
    >>> stdio_message(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}').method
    'ping'
    >>> e = stdio_message(b'{"jsonrpc": "2.0", "id": 4, "method": "ping"')
    >>> e.id, e.error.code
    (4, -32700)
    >>> e = stdio_message(b'{"jsonrpc": "1.0", "id": "x", "method": "ping"}')
    >>> e.id, e.error.code, e.error.message
    ('x', -32600, 'Invalid Request: jsonrpc must be "2.0"')
    >>> stdio_message(b"   ") is None
    True
    """
    if over:
        return _rpc_error(recover_id(line), types.INVALID_REQUEST,
                          f"Invalid Request: a message over {limit} bytes (the line limit) was discarded")
    if not line.strip():
        return None
    try:
        msg = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:  # pydantic's ValidationError: classified below
        deep = "recursion limit" in str(exc)
    else:
        # a request whose id is not a string or integer reads as a notification, which gets no answer
        if isinstance(msg, types.JSONRPCNotification) and b'"id"' in line:
            obj = json.loads(line)
            if isinstance(obj, dict) and "id" in obj:
                return _rpc_error(None, types.INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
        return msg
    try:
        obj = json.loads(line)
        if deep:
            raise RecursionError
    except RecursionError:
        return _rpc_error(recover_id(line), types.INVALID_REQUEST, "Invalid Request: nested too deeply")
    except (ValueError, UnicodeDecodeError) as exc:
        return _rpc_error(recover_id(line), types.PARSE_ERROR, f"Parse error: {exc}")
    rid = obj.get("id") if isinstance(obj, dict) else None
    rid = rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None
    return _rpc_error(rid, types.INVALID_REQUEST, f"Invalid Request: {_invalid(obj)}")


def _rpc_error(rid: Optional[Union[int, str]], code: int, message: str) -> "types.JSONRPCError":
    return types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(code=code, message=message[:500]))


class _Lines:
    """Splits a byte stream into lines of at most ``limit`` bytes, holding no more than that.

    :meth:`feed` returns the lines a chunk completes, as ``(line, over)``: a line
    longer than ``limit`` comes once as ``(its first 64 kB, True)`` and the rest
    of it is dropped as it arrives.

    Examples
    --------
    >>> lines = _Lines(5)
    >>> lines.feed(b"ab\\ncdefgh"), lines.feed(b"ij\\nk\\r\\n"), lines.end()
    ([(b'ab', False)], [(b'cdefgh', True), (b'k', False)], [])
    >>> lines.feed(b"tail"), lines.end()
    ([], [(b'tail', False)])
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.head: Optional[bytes] = None  # the start of an over-long line being dropped

    def feed(self, chunk: bytes) -> List[Tuple[bytes, bool]]:
        out: List[Tuple[bytes, bool]] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if self.head is None:
                self.buf += memoryview(chunk)[start:len(chunk) if nl < 0 else nl]
                if len(self.buf) > self.limit:
                    self.head, self.buf = bytes(self.buf[:_ID_SCAN]), bytearray()
            if nl < 0:
                return out
            out.append(self._line())
            start = nl + 1

    def end(self) -> List[Tuple[bytes, bool]]:
        """The last line, when the input ends without a newline."""
        return [self._line()] if self.buf or self.head is not None else []

    def _line(self) -> Tuple[bytes, bool]:
        if self.head is not None:
            head, self.head = self.head, None
            return head, True
        line, self.buf = bytes(self.buf), bytearray()
        return line.rstrip(b"\r"), False


async def _chunks(stream: BinaryIO) -> AsyncIterator[bytes]:
    """What arrives on ``stream``, as it arrives (read by a worker thread), until its end."""
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = await anyio.to_thread.run_sync(read, 1 << 16, abandon_on_cancel=True)
        if not chunk:
            return
        yield chunk


def _write_line(stream: BinaryIO, data: bytes) -> None:
    stream.write(data)
    stream.flush()


@asynccontextmanager
async def stdio_transport(service: Service, stdin: Optional[BinaryIO] = None,
                          stdout: Optional[BinaryIO] = None) -> AsyncIterator[Tuple[Any, Any]]:
    """The read and write streams of MCP over ``stdin``/``stdout`` (default: the process's), for ``Server.run``.

    Like the SDK's ``stdio_server``, but every line gets a message or an error
    (see the module docstring), lines are bounded by :func:`stdio_line_limit`,
    each message is one write and one flush, and at the end of input the
    session stays until every request it passed on is answered (or cancelled). With the default streams the
    process's fds 0 and 1 are handed to the transport and pointed at the null
    device and stderr meanwhile (the SDK's claim), so stray output misses the wire.
    """
    from mcp.shared.message import SessionMessage

    releases: List[Callable[[], None]] = []
    try:
        claim: Any = None
        try:
            from mcp.server import stdio as sdk_stdio

            claim = sdk_stdio._claim_fd
        except (ImportError, AttributeError):  # pragma: no cover - an SDK without the claim: the streams in place
            pass
        if stdin is None:
            if claim is not None:
                stdin, release = claim(0, sys.stdin, "rb", sdk_stdio._open_stdin_diversion)
                releases += [release] if release else []
            else:  # pragma: no cover
                stdin = sys.stdin.buffer
        if stdout is None:
            if claim is not None:
                stdout, release = claim(1, sys.stdout, "wb", sdk_stdio._open_stdout_diversion)
                releases += [release] if release else []
            else:  # pragma: no cover
                stdout = sys.stdout.buffer
        limit = stdio_line_limit(service)
        read_send, read_recv = anyio.create_memory_object_stream[Any](0)
        write_send, write_recv = anyio.create_memory_object_stream[Any](0)
        answer = write_send.clone()
        assert stdin is not None and stdout is not None
        source, sink = stdin, stdout

        # requests handed to the server and not answered yet: at the end of input the session stays open until
        # they are (or the client cancels them), so the last request of a closing client is not dropped
        pending: Dict[Any, None] = {}
        settled = anyio.Event()

        def answered(rid: Any) -> None:
            pending.pop(rid, None)
            if not pending:
                settled.set()

        async def dispatch(lines: List[Tuple[bytes, bool]]) -> None:
            nonlocal settled
            for line, over in lines:
                msg = stdio_message(line, over, limit)
                if isinstance(msg, types.JSONRPCError):
                    await answer.send(SessionMessage(msg))
                elif msg is not None:
                    if isinstance(msg, types.JSONRPCRequest):
                        if not pending:
                            settled = anyio.Event()
                        pending[msg.id] = None
                    elif isinstance(msg, types.JSONRPCNotification) and msg.method == "notifications/cancelled":
                        answered((msg.params or {}).get("requestId"))
                    await read_send.send(SessionMessage(msg))

        async def reader() -> None:
            lines = _Lines(limit)
            async with read_send, answer:
                async for chunk in _chunks(source):
                    await dispatch(lines.feed(chunk))
                await dispatch(lines.end())
                if pending:
                    await settled.wait()

        async def writer() -> None:
            async with write_recv:
                async for item in write_recv:
                    if isinstance(item.message, (types.JSONRPCResponse, types.JSONRPCError)):
                        answered(item.message.id)
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                    await anyio.to_thread.run_sync(_write_line, sink, data)

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            yield read_recv, write_send
    finally:
        for release in reversed(releases):
            release()


def run_stdio(service: Service) -> None:
    """Serve MCP over stdin/stdout until the client closes the stream (see :func:`stdio_transport`)."""
    server = build_server(service)

    async def main() -> None:
        async with stdio_transport(service) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
