"""Which clients may talk to ``spatialobs serve`` over HTTP: Host and Origin checks, CORS, no simple-request writes.

A web page the user visits can make their browser send requests to a server
on their own machine. Three rules keep such pages out, on every HTTP route and
WebSocket, with or without a token:

* **Host** (DNS rebinding: a page on ``evil.example`` whose name the attacker
  points at 127.0.0.1). The Host header's name must be a loopback name or
  address (``localhost``, ``*.localhost``, ``127.0.0.0/8``, ``::1``), the
  address the server is bound to, or the host of an allowed origin; on a
  server bound to a non-loopback address any IP literal is allowed too (a
  rebinding needs a DNS name). Anything else is refused with 421. Only the
  name is compared: a rebinding changes the name, not the port.
* **Origin** (a cross-site request). A request with an ``Origin`` header is
  refused with 403 unless that origin is a loopback one (any scheme and port),
  the server's own (the origin of a page it served: scheme and Host of the
  request), or one given with ``--allow-origin``. ``Origin: null`` (sandboxed
  frames, ``file:`` pages) is refused unless ``null`` itself is allowed. A
  request without ``Origin`` that the browser marks ``Sec-Fetch-Site:
  cross-site`` (an ``<img>`` or a no-cors fetch) is refused too.
* **No simple-request writes.** A browser sends a cross-origin POST without
  asking first (a CORS "simple request") when its type is ``text/plain``, a
  form type or absent; every POST must therefore say ``Content-Type:
  application/json`` (with any parameters) or is refused with 415. Other
  state-changing methods (PUT, PATCH, DELETE) always need a preflight, which
  only an allowed origin gets answered.

An allowed cross-origin page gets the CORS headers (``Access-Control-Allow-Origin``
with its own origin, never ``*``) and its preflights answered, so it can call
the API; no credentials mode is offered (the token is a bearer header).

:class:`OriginPolicy` holds the rules; :meth:`OriginPolicy.check` takes an ASGI
scope (``http`` or ``websocket``) and returns a :class:`Refusal` or None, and
:func:`refuse` sends a refusal on either kind of connection (a WebSocket
handshake is refused with 403 whatever the reason). The HTTP app runs
the check in front of every route (:mod:`spatialobs.serve.http_api`), and
stores its policy as ``app.state.origin_policy`` for endpoints that want it::

    refusal = websocket.app.state.origin_policy.check(websocket.scope)
    if refusal is not None:
        await refuse(websocket.scope, websocket.send, refusal)
        return

Examples
--------
>>> policy = OriginPolicy("127.0.0.1", allow_origins=["https://app.example"])
>>> def scope(host, origin=None, method="GET", ctype=None):
...     h = [(b"host", host.encode())]
...     h += [(b"origin", origin.encode())] if origin else []
...     h += [(b"content-type", ctype.encode())] if ctype else []
...     return {"type": "http", "method": method, "scheme": "http", "headers": h}
>>> policy.check(scope("127.0.0.1:8765")) is None
True
>>> policy.check(scope("evil.example:8765")).status
421
>>> policy.check(scope("127.0.0.1:8765", "http://evil.example")).status
403
>>> policy.check(scope("127.0.0.1:8765", "https://app.example", "POST", "application/json")) is None
True
>>> policy.check(scope("127.0.0.1:8765", None, "POST", "text/plain")).code
'unsupported_media_type'
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import urlsplit

__all__ = ["OriginPolicy", "Refusal", "refuse", "is_loopback", "normalize_origin"]

Headers = List[Tuple[bytes, bytes]]
Send = Callable[[Dict[str, Any]], Awaitable[None]]

_DEFAULT_PORT = {"http": 80, "https": 443, "ws": 80, "wss": 443}
#: Methods a browser sends cross-origin without a preflight (CORS "simple" methods) that may change state.
_SIMPLE_WRITES = frozenset({"POST"})
_ALLOW_METHODS = b"GET, POST, DELETE, OPTIONS"
_ALLOW_HEADERS = b"authorization, content-type, accept, last-event-id, mcp-session-id, mcp-protocol-version"
_EXPOSE_HEADERS = b"mcp-session-id, mcp-protocol-version"


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: the HTTP status, an error code and a one-line message.

    Examples
    --------
    >>> Refusal(403, "forbidden", "no").body()
    b'{"ok": false, "error": {"code": "forbidden", "message": "no"}}'
    """

    status: int
    code: str
    message: str

    def body(self) -> bytes:
        """The service's JSON error body, ``{"ok": false, "error": {"code", "message"}}``."""
        return json.dumps({"ok": False, "error": {"code": self.code, "message": self.message}}).encode()


def is_loopback(hostname: str) -> bool:
    """Whether a host name (no port; IPv6 without brackets) always means this machine.

    Examples
    --------
    >>> [is_loopback(h) for h in ("localhost", "app.localhost", "127.3.0.1", "::1", "10.0.0.1", "evil.example")]
    [True, True, True, True, False, False]
    """
    h = hostname.strip().rstrip(".").lower()
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        addr = ipaddress.ip_address(h)
    except ValueError:
        return False
    mapped = getattr(addr, "ipv4_mapped", None)
    return bool(addr.is_loopback or (mapped is not None and mapped.is_loopback))


def _is_ip(hostname: str) -> bool:
    try:
        ipaddress.ip_address(hostname)
    except ValueError:
        return False
    return True


def _split_host(value: str) -> Tuple[str, Optional[int]]:
    """``host[:port]`` or ``[v6][:port]`` as (lower-case name without brackets, port or None)."""
    v = value.strip()
    if v.startswith("["):
        end = v.find("]")
        if end < 0:
            raise ValueError(value)
        name, rest = v[1:end], v[end + 1:]
        if rest and not rest.startswith(":"):
            raise ValueError(value)
        port = rest[1:]
    elif v.count(":") > 1:  # a bare IPv6 address
        name, port = v, ""
    else:
        name, _, port = v.partition(":")
    if not name or any(c in name for c in "/@?#\\ \t"):
        raise ValueError(value)
    p: Optional[int] = None
    if port:
        if not port.isdigit() or int(port) > 65535:
            raise ValueError(value)
        p = int(port)
    return name.rstrip(".").lower(), p


def normalize_origin(text: str) -> str:
    """An origin as browsers send it: ``scheme://host[:port]``, lower case, default port dropped.

    Raises ``ValueError`` for anything that is not an origin (a path, a query,
    user info, a wildcard). ``"null"`` stays ``"null"``.

    Examples
    --------
    >>> normalize_origin("HTTPS://App.Example:443"), normalize_origin("http://[::1]:3000")
    ('https://app.example', 'http://[::1]:3000')
    >>> normalize_origin("https://app.example/path")
    Traceback (most recent call last):
    ...
    ValueError: 'https://app.example/path' is not an origin (scheme://host[:port], no path)
    """
    t = text.strip()
    if t == "null":
        return t
    bad = ValueError(f"{text!r} is not an origin (scheme://host[:port], no path)")
    try:
        u = urlsplit(t)
        scheme = u.scheme.lower()
        if scheme not in _DEFAULT_PORT or u.path not in ("", "/") or u.query or u.fragment or "@" in u.netloc:
            raise bad
        name, port = _split_host(u.netloc)
    except ValueError:
        raise bad from None
    if "*" in name:
        raise bad
    shown = f"[{name}]" if ":" in name else name
    return f"{scheme}://{shown}" + ("" if port in (None, _DEFAULT_PORT[scheme]) else f":{port}")


def _header(headers: Iterable[Tuple[bytes, bytes]], name: bytes) -> Optional[str]:
    for k, v in headers:
        if k.lower() == name:
            return v.decode("latin-1")
    return None


class OriginPolicy:
    """The Host, Origin and simple-request rules of one server (see the module docstring).

    Parameters
    ----------
    host : str
        The address the server is bound to (``127.0.0.1``, ``::1``, ``0.0.0.0``, a LAN address...).
    allow_origins : iterable of str
        Origins allowed besides loopback ones and the server's own (``--allow-origin``);
        their host names are also allowed as Host.
    """

    def __init__(self, host: str = "127.0.0.1", allow_origins: Iterable[str] = ()) -> None:
        self.host = host.strip("[]").lower()
        self.allow_origins: FrozenSet[str] = frozenset(normalize_origin(o) for o in allow_origins)
        self._allow_hosts = frozenset(_split_host(urlsplit(o).netloc)[0] for o in self.allow_origins if o != "null")
        self.loopback_only = is_loopback(self.host)
        self._wildcard = self.host in ("0.0.0.0", "::", "")

    def __repr__(self) -> str:
        return f"OriginPolicy(host={self.host!r}, allow_origins={sorted(self.allow_origins)!r})"

    def host_allowed(self, hostname: str) -> bool:
        """Whether a Host header's name (no port) may address this server.

        Examples
        --------
        >>> OriginPolicy("127.0.0.1").host_allowed("192.168.1.5"), OriginPolicy("0.0.0.0").host_allowed("192.168.1.5")
        (False, True)
        """
        if is_loopback(hostname) or hostname in self._allow_hosts:
            return True
        if self.loopback_only:
            return False
        return hostname == self.host or _is_ip(hostname)

    def origin_allowed(self, origin: str, own: Optional[str] = None) -> bool:
        """Whether a browser page of ``origin`` may call the server (``own``: the server's origin as requested)."""
        try:
            o = normalize_origin(origin)
        except ValueError:
            return False
        if o in self.allow_origins or (own is not None and o == own):
            return True
        if o == "null":
            return False
        return is_loopback(_split_host(urlsplit(o).netloc)[0])

    def _own_origin(self, scope: Mapping[str, Any], host: Optional[str]) -> Optional[str]:
        if host is None:
            return None
        scheme = str(scope.get("scheme") or ("ws" if scope.get("type") == "websocket" else "http"))
        web = {"ws": "http", "wss": "https"}.get(scheme, scheme)
        try:
            return normalize_origin(f"{web}://{host}")
        except ValueError:
            return None

    def check(self, scope: Mapping[str, Any]) -> Optional[Refusal]:
        """The refusal for one ASGI ``http`` or ``websocket`` connection scope, or None when it may proceed.

        Checks, in order: the Host header, the Origin header (or ``Sec-Fetch-Site``
        without one), and for HTTP a POST's ``Content-Type``. Other scope types
        (``lifespan``) pass.
        """
        kind = scope.get("type")
        if kind not in ("http", "websocket"):
            return None
        headers = scope.get("headers") or ()
        host = _header(headers, b"host")
        if host is not None:
            try:
                name, _ = _split_host(host)
            except ValueError:
                return Refusal(400, "bad_request", f"malformed Host header {host[:200]!r}")
            if not self.host_allowed(name):
                return Refusal(421, "misdirected", f"Host {host[:200]!r} is not this server's name (a DNS "
                                                   "rebinding?); use a loopback address, or start the server with "
                                                   "--allow-origin for the origin that serves this name")
        origin = _header(headers, b"origin")
        if origin is not None:
            if not self.origin_allowed(origin, self._own_origin(scope, host)):
                return Refusal(403, "forbidden", f"requests from origin {origin[:200]!r} are not allowed; start "
                                                 "the server with --allow-origin ORIGIN to allow a web page's origin")
        elif (_header(headers, b"sec-fetch-site") or "").lower() == "cross-site":
            return Refusal(403, "forbidden", "a cross-site browser request without an Origin header is not allowed")
        if kind == "http" and str(scope.get("method", "")).upper() in _SIMPLE_WRITES:
            ctype = (_header(headers, b"content-type") or "").split(";", 1)[0].strip().lower()
            if ctype != "application/json":
                shown = repr(ctype) if ctype else "none"
                return Refusal(415, "unsupported_media_type", f"a POST must have Content-Type: application/json "
                                                              f"(got {shown})")
        return None

    def cors_headers(self, scope: Mapping[str, Any]) -> Headers:
        """The CORS headers for a response to an allowed cross-origin request (none for other requests)."""
        headers = scope.get("headers") or ()
        origin = _header(headers, b"origin")
        if origin is None:
            return []
        own = self._own_origin(scope, _header(headers, b"host"))
        try:
            o = normalize_origin(origin)
        except ValueError:
            return []
        if o == own or not self.origin_allowed(origin, own):
            return []
        return [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin"),
                (b"access-control-expose-headers", _EXPOSE_HEADERS)]

    def preflight(self, scope: Mapping[str, Any]) -> Optional[Headers]:
        """The headers answering a CORS preflight (``OPTIONS`` with ``Access-Control-Request-Method``), or None.

        Only a request that passed :meth:`check` from an allowed cross-origin page gets an answer.
        """
        if scope.get("type") != "http" or str(scope.get("method", "")).upper() != "OPTIONS":
            return None
        if _header(scope.get("headers") or (), b"access-control-request-method") is None:
            return None
        cors = self.cors_headers(scope)
        if not cors:
            return None
        return cors + [(b"access-control-allow-methods", _ALLOW_METHODS),
                       (b"access-control-allow-headers", _ALLOW_HEADERS), (b"access-control-max-age", b"600")]


async def refuse(scope: Mapping[str, Any], send: Send, refusal: Refusal,
                 extra: Sequence[Tuple[bytes, bytes]] = ()) -> None:
    """Send ``refusal`` on an ASGI connection before anything else was sent.

    HTTP: the JSON error with its status. WebSocket: a close before the
    handshake, which the server answers with 403 (a browser shows a failed
    handshake's body to no one; uvicorn logs an error for a denial response
    sent instead, so none is).
    """
    if scope.get("type") == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": refusal.message[:120]})
        return
    body = refusal.body()
    head: Headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": refusal.status, "headers": head})
    await send({"type": "http.response.body", "body": body})
