"""How long a client may hold a connection of ``spatialobs serve --http``, and how many it may hold.

uvicorn (with h11) closes a connection that stays idle after a response
(``timeout_keep_alive``) and caps a request head's size, but it arms no timer
before the first request, nor while a request head or body trickles in: a
client that connects and sends nothing, half a header or one body byte a
minute holds its connection (and a file descriptor) forever, and
``limit_concurrency`` counts those idle connections, so enough of them turn
every new request into a 503. :func:`protocol_class` returns uvicorn's h11
protocol with the missing guards, per :class:`ConnectionLimits`:

* **request head**: the request line and headers must arrive within
  ``header_timeout`` of the connection opening or of the previous response
  (uvicorn's ``keep_alive`` closes a silent keep-alive connection earlier);
* **request body**: at most ``body_timeout`` without a byte while the server
  is waiting for one, and the whole body within ``body_deadline``;
* **response**: a client that stops reading its response (the socket's write
  buffer stays full) for ``write_timeout`` is dropped;
* **unread body after an answer** (a 413, say): drained up to
  ``drain_bytes`` to keep the connection, then closed;
* **open connections**: at most ``max_connections``. A new connection over
  the cap closes one that has no request in flight (a silent or half-sent
  one; one that never completed a request first, the least recently active
  of them), so idle sockets cannot lock normal clients out; only when every
  connection is busy is the new one refused with 503.

A client that timed out mid-request gets the JSON error (408) before the
close; a silent one is closed without a word (browsers open spare
connections and would misread an unasked-for answer). A malformed request
gets the JSON 400 instead of uvicorn's text. Timers are checked by one sweep
every ``tick`` seconds over the open connections, so a limit fires within a
tick of its value.

Examples
--------
>>> limits = ConnectionLimits(header_timeout=5, max_connections=100)
>>> limits.header_timeout, limits.body_timeout, limits.max_connections
(5, 10.0, 100)
>>> ConnectionLimits(max_connections=0)
Traceback (most recent call last):
...
spatialobs.serve.service.ServiceError: max_connections must be at least 1, got 0
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, Dict, Optional

from spatialobs.serve.service import ServiceError

__all__ = ["ConnectionLimits", "protocol_class"]


@dataclass(frozen=True)
class ConnectionLimits:
    """The connection limits of the HTTP server (seconds, bytes and a count; see the module docstring).

    Attributes
    ----------
    header_timeout : float
        Time for a request line and its headers to arrive.
    body_timeout : float
        Longest wait for the next byte of a request body.
    body_deadline : float
        Time for a whole request body to arrive.
    keep_alive : float
        Idle time allowed between requests on one connection.
    write_timeout : float
        Time a client may leave its response unread.
    max_connections : int
        Open HTTP connections (WebSockets are not counted once upgraded).
    max_header_bytes : int
        Largest request head (request line and headers).
    drain_bytes : int
        Unread request body discarded after an answer before the connection is closed.
    tick : float
        How often the limits are checked.
    """

    header_timeout: float = 10.0
    body_timeout: float = 10.0
    body_deadline: float = 120.0
    keep_alive: float = 5.0
    write_timeout: float = 30.0
    max_connections: int = 512
    max_header_bytes: int = 64 * 1024
    drain_bytes: int = 1024 * 1024
    tick: float = 0.25

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "max_connections":
                if not isinstance(v, int) or v < 1:
                    raise ServiceError("bad_request", f"max_connections must be at least 1, got {v!r}")
            elif not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
                raise ServiceError("bad_request", f"{f.name} must be a positive number, got {v!r}")


def _raw_error(status: int, reason: str, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 response carrying the service's JSON error, closing the connection."""
    body = json.dumps({"ok": False, "error": {"code": code, "message": message}}).encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n").encode() + body


class _Registry:
    """The open connections of one server, least recently active first, and the sweep that enforces the limits."""

    def __init__(self, limits: ConnectionLimits) -> None:
        import h11

        self.h11 = h11
        self.limits = limits
        self.open: Dict[Any, None] = {}
        self.sweeping = False
        self.expired = {"head": 0, "body": 0, "drain": 0, "write": 0, "evicted": 0, "refused": 0}

    # a connection's phase, from its h11 state: waiting for a request head, receiving a body, draining a body
    # that was answered already, or busy (request read, response being made or sent)
    def phase(self, p: Any) -> str:
        h11 = self.h11
        their, ours = p.conn.their_state, p.conn.our_state
        if their is h11.SEND_BODY:
            return "drain" if ours in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED) else "body"
        if their is h11.IDLE and ours is h11.IDLE:
            return "head"
        return "busy"

    def opened(self, p: Any) -> None:
        now = p.loop.time()
        p._so_phase, p._so_since, p._so_last, p._so_bytes, p._so_wpaused, p._so_served = "head", now, now, 0, None, 0
        if len(self.open) >= self.limits.max_connections:
            # a connection that never completed a request goes first (a keep-alive client's between two requests
            # would reconnect), the least recently active of them
            idle = [q for q in self.open if q._so_phase == "head"]
            victim = next((q for q in idle if not q._so_served), idle[0] if idle else None)
            if victim is None:
                self.expired["refused"] += 1
                p._so_refused = True
                p.transport.write(_raw_error(503, "Service Unavailable", "unavailable",
                                             f"{len(self.open)} connections are busy (the limit); try again"))
                p.transport.close()
                return
            self.expired["evicted"] += 1
            self.expire(victim, "head")
        self.open[p] = None
        if not self.sweeping:
            self.sweeping = True
            p.loop.call_later(self.limits.tick, self.sweep, p.loop)

    def closed(self, p: Any) -> None:
        self.open.pop(p, None)

    def progressed(self, p: Any, n: int) -> None:
        if p not in self.open:
            return
        now = p.loop.time()
        p._so_last = now
        self.open.pop(p)
        self.open[p] = None  # most recently active last
        phase = self.phase(p)
        if phase != p._so_phase:
            p._so_phase, p._so_since, p._so_bytes = phase, now, 0
        else:
            p._so_bytes += n

    def expire(self, p: Any, why: str) -> None:
        """Close a connection that overstayed ``why`` (answering 408 if it was part-way through a request)."""
        self.open.pop(p, None)
        if p.transport.is_closing():
            return
        cycle = p.cycle
        answering = cycle is not None and not cycle.response_complete and cycle.response_started
        if (why == "head" and p._so_bytes) or (why == "body" and not answering):
            what = "request headers" if why == "head" else "request body"
            p.transport.write(_raw_error(408, "Request Timeout", "timeout", f"the {what} did not arrive in time"))
        p.transport.close()

    def sweep(self, loop: Any) -> None:
        lim = self.limits
        now = loop.time()
        for p in list(self.open):
            phase = p._so_phase
            if phase == "head" and now - p._so_since > lim.header_timeout:
                why: Optional[str] = "head"
            elif phase == "body" and (now - p._so_since > lim.body_deadline or (
                    now - p._so_last > lim.body_timeout and not p.flow.read_paused)):
                why = "body"
            elif phase == "drain" and (p._so_bytes > lim.drain_bytes or now - p._so_last > lim.body_timeout):
                why = "drain"
            elif p._so_wpaused is not None and now - p._so_wpaused > lim.write_timeout:
                why = "write"
            else:
                why = None
            if why is not None:
                self.expired[why] += 1
                self.expire(p, why)
        if self.open:
            loop.call_later(lim.tick, self.sweep, loop)
        else:
            self.sweeping = False


def protocol_class(limits: ConnectionLimits) -> type:
    """uvicorn's h11 protocol with the limits of ``limits`` (pass it as ``uvicorn.Config(http=...)``).

    Each call makes a class with its own connection registry, so two servers in
    one process do not share a cap.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    registry = _Registry(limits)

    class GuardedH11Protocol(H11Protocol):
        """H11Protocol with header, body and write timeouts and a connection cap that evicts idle connections."""

        connections_registry = registry
        # the registry's bookkeeping (see _Registry.opened)
        _so_phase = "head"
        _so_since = _so_last = 0.0
        _so_bytes = _so_served = 0
        _so_wpaused: Optional[float] = None
        _so_refused = False

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            registry.opened(self)

        def connection_lost(self, exc: Optional[Exception]) -> None:
            registry.closed(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.transport.get_protocol() is not self:  # upgraded to a WebSocket: its own protocol now
                registry.closed(self)
            else:
                registry.progressed(self, len(data))

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._so_served += 1
            registry.progressed(self, 0)

        def pause_writing(self) -> None:
            super().pause_writing()
            self._so_wpaused = self.loop.time()

        def resume_writing(self) -> None:
            super().resume_writing()
            self._so_wpaused = None

        def send_400_response(self, msg: str) -> None:
            body = json.dumps({"ok": False, "error": {"code": "bad_request", "message": "malformed HTTP request"}})
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close")]
            try:
                self.transport.write(self.conn.send(h11.Response(status_code=400, headers=headers,
                                                                 reason=b"Bad Request")) or b"")
                self.transport.write(self.conn.send(h11.Data(data=body.encode())) or b"")
                self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
            except h11.LocalProtocolError:  # h11 cannot answer in this state: write the response whole
                self.transport.write(_raw_error(400, "Bad Request", "bad_request", "malformed HTTP request"))
            self.transport.close()

    return GuardedH11Protocol
