"""``spatialobs serve``: the command-line entry of the service.

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser()
>>> configure(p)
>>> a = p.parse_args(["--http", "127.0.0.1:0"])
>>> a.root, a.http, a.token, a.allow_origin
('.', '127.0.0.1:0', None, [])
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``serve`` to ``parser`` and make :func:`run` its action."""
    parser.add_argument("--root", default=".", metavar="DIR",
                        help="the only folder the tools may read and write (default: the current one)")
    parser.add_argument("--http", metavar="HOST:PORT",
                        help="serve HTTP instead of stdio: JSON API at /v1, MCP (streamable HTTP) at /mcp; "
                             "HOST defaults to 127.0.0.1, PORT 0 picks a free port")
    parser.add_argument("--token", help="bearer token every HTTP request must carry (default: $SPATIALOBS_TOKEN)")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="a web origin (scheme://host[:port]) whose pages may call the HTTP server, besides "
                             "loopback ones and the server's own; repeatable")
    limits = parser.add_argument_group("connection limits (HTTP)")
    limits.add_argument("--max-connections", type=int, default=512, metavar="N",
                        help="open connections at most; over it the least recently active idle one is closed "
                             "(default 512)")
    limits.add_argument("--header-timeout", type=float, default=10.0, metavar="S",
                        help="seconds for a request's line and headers to arrive (default 10)")
    limits.add_argument("--body-timeout", type=float, default=10.0, metavar="S",
                        help="seconds a request body may pause; the whole body has 12 times as long (default 10)")
    limits.add_argument("--keep-alive", type=float, default=5.0, metavar="S",
                        help="seconds a connection may stay idle between requests (default 5)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the client closes stdin (stdio) or the process is interrupted (HTTP)."""
    from spatialobs.serve.service import Service

    try:
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        print(f'spatialobs: error: serve needs the optional extra: pip install "spatialobs[serve]" ({exc.name} is '
              "missing)", file=sys.stderr)
        return 2
    service = Service(args.root)
    token = args.token if args.token is not None else (os.environ.get("SPATIALOBS_TOKEN") or None)
    if args.http is None:
        from spatialobs.serve.mcp_server import run_stdio

        run_stdio(service)
        return 0
    from spatialobs.serve.http_api import parse_hostport, run_http

    from spatialobs.serve.security import normalize_origin

    host, port = parse_hostport(args.http)
    from spatialobs.serve.connections import ConnectionLimits
    from spatialobs.serve.service import ServiceError

    try:
        origins = [normalize_origin(o) for o in args.allow_origin]
    except ValueError as exc:
        print(f"spatialobs: error: --allow-origin: {exc}", file=sys.stderr)
        return 2
    try:
        limits = ConnectionLimits(header_timeout=args.header_timeout, body_timeout=args.body_timeout,
                                  body_deadline=12 * args.body_timeout, keep_alive=args.keep_alive,
                                  max_connections=args.max_connections)
    except ServiceError as exc:
        print(f"spatialobs: error: {exc.message}", file=sys.stderr)
        return 2
    run_http(service, host, port, token=token, allow_origins=origins, limits=limits)
    return 0
