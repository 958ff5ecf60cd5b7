"""A service for agent loops: the canvas and screen tools behind MCP and a JSON HTTP API.

:class:`Service` holds the open documents and screen indexes and runs every
tool (open, observe, apply, undo, render, save, the scenarios and evaluator,
the screen index and selector); it is plain Python over the public API, with
no transport in it. :mod:`spatialobs.serve.mcp_server` exposes it through the
official MCP SDK (stdio, streamable HTTP) and :mod:`spatialobs.serve.http_api`
as JSON routes served by uvicorn; both need the optional extra::

    pip install "spatialobs[serve]"

and ``spatialobs serve [--root DIR] [--http HOST:PORT] [--token T] [--allow-origin ORIGIN]`` runs
them; :mod:`spatialobs.serve.security` decides which web pages may reach the HTTP server and
:mod:`spatialobs.serve.connections` how long and how many connections clients may hold.

Examples
--------
>>> from spatialobs.serve import Service
>>> svc = Service(".")
>>> doc = svc.call("scenario_open", {"config": 0})["document"]
>>> obs = svc.call("observe", {"document": doc})
>>> len(obs["observation"]["objects"]) > 0, obs["token"] is not None
(True, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spatialobs.serve.service import (TOOLS, Limits, Service, ServiceError, ToolSpec, action_from_json,
                                          action_json, reference_reply)

__all__ = ["Service", "ServiceError", "Limits", "ToolSpec", "TOOLS", "reference_reply", "action_json",
           "action_from_json"]


def __getattr__(name: str) -> Any:
    # The service (and the canvas package it imports) loads on first use, so that the command
    # line's parser, which names the serve command, costs nothing to commands that never serve.
    if name in __all__:
        from spatialobs.serve import service

        value = getattr(service, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
