"""The service as an MCP server (the official Python SDK, ``mcp`` on PyPI).

Every tool of :data:`~spatialobs.serve.TOOLS` is listed with its JSON schema and
runs through :meth:`Service.call` in a worker thread. A result is returned as
structured content and as its JSON text; ``render`` with ``format: "png"``
returns MCP image content. A failed call is a tool result with ``isError`` and
the one-line message (``code: message``), never a protocol error or a traceback.
Resources: the observation guide and each open document.

Examples
--------
>>> from spatialobs.serve import Service
>>> server = build_server(Service("."))
>>> server.name
'spatialobs'
"""

from __future__ import annotations

import json
from typing import Any, Dict, List

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server

from spatialobs.serve.service import Service, ServiceError

__all__ = ["build_server", "run_stdio", "result_content"]

INSTRUCTIONS = ("spatialobs: exact structured observations of canvases (tldraw, Excalidraw) and GUI screens. "
                "Open a document, observe it (keep the token and pass it back as since to see what the person "
                "changed), apply canvas_ops, render, save. Coordinates in observations and ops are action "
                "coordinates (page minus the document's origin).")


def result_content(tool: str, result: Dict[str, Any]) -> types.CallToolResult:
    """The MCP result of one successful tool call (image content for a PNG render)."""
    if tool == "render" and result.get("format") == "png":
        meta = {k: v for k, v in result.items() if k != "data"}
        return types.CallToolResult(content=[types.ImageContent(data=result["data"], mime_type="image/png"),
                                             types.TextContent(text=json.dumps(meta))], structured_content=meta)
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=result)


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


def run_stdio(service: Service) -> None:
    """Serve MCP over stdin/stdout until the client closes the stream."""
    from mcp.server.stdio import stdio_server

    server = build_server(service)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
