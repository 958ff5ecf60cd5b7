"""Slow and silent clients cannot hold `spatialobs serve --http` or starve the others: a bounded load test on loopback.

The server runs with short limits (2 s for a request head, 0.5 s of body
silence and 6 s for a whole body, 2 s keep-alive, at most 100 connections).
Normal clients make an observe/apply workload alone, then again and again for
as long as attackers hold 300 silent sockets (three times the cap), trickle
request heads and bodies a byte every 0.2 s, or send a head and then nothing,
reconnecting whenever they are dropped. Every normal request must succeed;
every attacker's socket must be closed within its limit; the latencies of
both phases are printed side by side.
"""

from __future__ import annotations

import http.client
import json
import selectors
import socket
import threading
import time
from typing import Dict, List, Tuple

from tests.test_serve_support import address, http_server

HEAD, BODY, KEEP, CAP = 2.0, 0.5, 2.0, 100  # the whole body: 12 * BODY
SILENT, TRICKLERS = 300, 10
CLIENTS, REQUESTS = 4, 30


def _percentile(xs: List[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def _normal(base: str, keep_alive: bool, docs: List[str], out: Dict[str, List[float]], failures: List[str]) -> None:
    conn = http.client.HTTPConnection(*address(base), timeout=30)
    lat: List[float] = []
    try:
        for i in range(REQUESTS):
            doc = docs[(i // 2) % len(docs)]
            if i % 2:
                method, path = "POST", f"/v1/documents/{doc}/apply"
                body = json.dumps({"ops": [{"op": "move_node", "id": "shape:copy0", "dx": 1, "dy": 0}]})
            else:
                method, path, body = "GET", f"/v1/documents/{doc}/observe", None
            t0 = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = json.loads(resp.read())
            except (OSError, http.client.HTTPException, ValueError) as exc:
                failures.append(f"{method} {path}: {type(exc).__name__}: {exc}")
                conn.close()
                continue
            lat.append(time.perf_counter() - t0)
            if resp.status != 200 or not data.get("ok"):
                failures.append(f"{method} {path}: {resp.status} {data}")
            if not keep_alive:
                conn.close()
    finally:
        conn.close()
        out.setdefault("latency", []).extend(lat)


def _workload(base: str, docs: List[str]) -> Tuple[List[float], List[str]]:
    out: Dict[str, List[float]] = {}
    failures: List[str] = []
    threads = [threading.Thread(target=_normal, args=(base, k % 2 == 0, docs, out, failures), daemon=True)
               for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    return out.get("latency", []), failures


class _Silent(threading.Thread):
    """Opens ``n`` sockets that never send a byte and records when the server closes each (seconds after opening)."""

    def __init__(self, base: str, n: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.sel = selectors.DefaultSelector()
        self.opened: Dict[socket.socket, float] = {}
        for _ in range(n):
            sock = socket.create_connection(address(base), timeout=5)
            sock.setblocking(False)
            self.opened[sock] = time.monotonic()
            self.sel.register(sock, selectors.EVENT_READ)
        self.holds: List[float] = []
        self.stop = stop

    def run(self) -> None:
        try:
            while self.sel.get_map() and not self.stop.is_set():
                for key, _ in self.sel.select(timeout=0.05):
                    sock = key.fileobj
                    try:
                        data = sock.recv(4096)  # type: ignore[union-attr]
                    except OSError:
                        data = b""
                    if not data:
                        self.holds.append(time.monotonic() - self.opened[sock])  # type: ignore[index]
                        self.sel.unregister(sock)
        finally:
            for sock in self.opened:
                sock.close()


class _Trickler(threading.Thread):
    """Sends a request head one byte per 0.2 s ("head"), or a whole head and then a body that way ("body") or not
    at all ("mute"), reconnecting whenever the server drops it."""

    def __init__(self, base: str, how: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.addr, self.host, self.how, self.stop = address(base), base.rsplit("/", 1)[1], how, stop
        self.holds: List[float] = []

    def run(self) -> None:
        head = (f"POST /v1/documents/d0/apply HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                "Content-Length: 100000\r\n\r\n").encode()
        while not self.stop.is_set():
            try:
                sock = socket.create_connection(self.addr, timeout=5)
            except OSError:
                time.sleep(0.1)
                continue
            t0 = time.monotonic()
            try:
                if self.how != "head":
                    sock.sendall(head)
                if self.how == "mute":
                    sock.settimeout(30)
                    if not sock.recv(4096) or not self.stop.is_set():
                        self.holds.append(time.monotonic() - t0)
                    continue
                trickle = b'{"ops": [' * 1000 if self.how == "body" else head
                for i in range(len(trickle)):
                    if self.stop.wait(0.2):
                        break
                    sock.sendall(trickle[i:i + 1])
            except OSError:  # dropped by the server
                self.holds.append(time.monotonic() - t0)
            finally:
                sock.close()


def _held(tricklers: List[_Trickler]) -> Dict[str, List[float]]:
    """How long each connection of the tricklers of each kind was held before the server dropped it."""
    return {how: [h for t in tricklers if t.how == how for h in t.holds] for how in ("head", "body", "mute")}


def _dropped_at_limits(tricklers: List[_Trickler]) -> bool:
    """Whether a head trickler and a mute one were dropped, and a body trickler held for its whole body's limit."""
    held = _held(tricklers)
    return bool(held["head"]) and bool(held["mute"]) and any(h > 12 * BODY - 0.5 for h in held["body"])


def test_slow_and_silent_clients_do_not_starve_normal_ones(tmp_path):
    extra = ["--header-timeout", str(HEAD), "--body-timeout", str(BODY), "--keep-alive", str(KEEP),
             "--max-connections", str(CAP)]
    with http_server(tmp_path, extra=extra) as base:
        conn = http.client.HTTPConnection(*address(base), timeout=30)
        docs = []
        for k in range(CLIENTS):
            conn.request("POST", "/v1/scenarios/0/open", body=json.dumps({"name": f"d{k}"}),
                         headers={"Content-Type": "application/json"})
            docs.append(json.loads(conn.getresponse().read())["result"]["document"])
        conn.close()
        alone, failures = _workload(base, docs)
        assert failures == [] and len(alone) == CLIENTS * REQUESTS

        stop = threading.Event()
        tricklers = [_Trickler(base, ("head", "body", "mute")[k % 3], stop) for k in range(TRICKLERS)]
        for t in tricklers:
            t.start()
        silent = _Silent(base, SILENT, stop)
        silent.start()
        attack = time.monotonic()
        attacked: List[float] = []
        failures = []
        try:
            rounds = 0
            while rounds < 40 and (rounds == 0 or time.monotonic() - attack < 12 * BODY + 1.2):
                lat, failed = _workload(base, docs)
                attacked += lat
                failures += failed
                rounds += 1
            silent.join(timeout=HEAD + 5)
            # a trickler's drop is an event, not a moment: on a loaded machine its connection can be
            # accepted late, so wait (bounded) until each kind has been dropped at its limit
            settle = attack + 3 * 12 * BODY
            while time.monotonic() < settle and not _dropped_at_limits(tricklers):
                time.sleep(0.05)
        finally:
            stop.set()
            silent.join(timeout=10)
            for t in tricklers:
                t.join(timeout=10)
        assert failures == [], failures[:5]
        assert len(attacked) == rounds * CLIENTS * REQUESTS
        # every silent socket was dropped: over the cap at once (evicted), the rest at the header timeout
        holds = silent.holds
        assert len(holds) == SILENT and max(holds) < HEAD + 1, sorted(holds)[-5:]
        evicted = sum(1 for h in holds if h < HEAD - 0.5)
        assert evicted >= SILENT - CAP
        held = _held(tricklers)
        # each trickler was evicted over the cap (while its head looked like a silent socket's) or dropped at its limit
        assert held["head"] and max(held["head"]) < HEAD + 1.2, held
        assert max(held["body"]) > 12 * BODY - 0.5 and max(held["body"]) < 12 * BODY + 1.2, held
        assert held["mute"] and max(held["mute"]) < BODY + 1.2, held
        # the server still answers, and its documents took every apply
        conn = http.client.HTTPConnection(*address(base), timeout=30)
        conn.request("GET", "/v1/documents")
        listed = json.loads(conn.getresponse().read())["result"]["documents"]
        conn.close()
        assert {d["document"]: d["undo"] for d in listed} == {d: 16 for d in docs}  # the undo depth: applies went in
    for name, lat in (("alone", alone), ("attacked", attacked)):
        print(f"slow clients: {name}: {len(lat)} requests, p50 {1000 * _percentile(lat, 0.5):.1f} ms, "
              f"p99 {1000 * _percentile(lat, 0.99):.1f} ms, max {1000 * max(lat):.1f} ms")
    print(f"slow clients: {SILENT} silent sockets held {min(holds):.2f}..{max(holds):.2f} s ({evicted} evicted "
          f"over the cap of {CAP}); " + ", ".join(f"{how} tricklers held {min(h):.2f}..{max(h):.2f} s ({len(h)})"
                                                  for how, h in held.items()))
