"""A bounded load test of the HTTP service on loopback: concurrent clients observe and apply.

N client threads, each with its own keep-alive connection, make a fixed number
of requests (observe and apply alternately) on their own documents and then all
on one shared document. Afterwards every document must equal a sequential
replay of the applies the server accepted, in the order it applied them (the
sequence number it returned): no edit lost, none applied twice, none torn.
The figures (requests per second, p50 and p99 latency) are printed and checked
against loose bounds.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from typing import Any, Dict, List, Tuple

from tests.test_serve_support import http_server

from spatialobs.canvas import Executor, load
from spatialobs.canvas.scenarios import remote_team_handoff

CLIENTS = 8
REQUESTS = 40  # per client and phase
TARGETS = ("shape:copy0", "shape:copy1", "shape:copy2", "shape:key", "shape:chart0", "shape:chart1")


def _ops(rng: random.Random) -> List[Dict[str, Any]]:
    nid = rng.choice(TARGETS)
    k = rng.randrange(3)
    if k == 0:
        return [{"op": "move_node", "id": nid, "dx": rng.randrange(-9, 10), "dy": rng.randrange(-9, 10)}]
    if k == 1:
        return [{"op": "update_styles", "id": nid, "styles": {"color": rng.choice(["red", "blue", "green"])}}]
    return [{"op": "set_text", "id": nid, "text": f"t{rng.randrange(1000)}"},
            {"op": "move_node", "id": "no-such-node", "dx": 1}]  # one failing op per apply: reported, not applied


class _Client(threading.Thread):
    def __init__(self, base: str, docs: List[str], seed: int) -> None:
        super().__init__(daemon=True)
        host, port = base.rsplit("/", 1)[1].split(":")
        self.addr = (host, int(port))
        self.docs = docs
        self.rng = random.Random(seed)
        self.latencies: List[float] = []
        self.accepted: List[Tuple[str, int, List[Dict[str, Any]]]] = []  # (document, sequence, ops)
        self.failures: List[str] = []

    def run(self) -> None:
        conn = http.client.HTTPConnection(*self.addr, timeout=120)
        try:
            for i in range(REQUESTS):
                doc = self.rng.choice(self.docs)
                if i % 2 == 0:
                    body, path = None, f"/v1/documents/{doc}/observe"
                else:
                    ops = _ops(self.rng)
                    body, path = json.dumps({"ops": ops}), f"/v1/documents/{doc}/apply"
                t0 = time.perf_counter()
                conn.request("GET" if body is None else "POST", path, body=body,
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = json.loads(resp.read())
                self.latencies.append(time.perf_counter() - t0)
                if resp.status != 200:
                    self.failures.append(str(data))
                elif body is not None:
                    self.accepted.append((doc, data["result"]["sequence"], ops))
        finally:
            conn.close()


def _phase(base: str, docs_of: List[List[str]]) -> Tuple[List[_Client], float]:
    clients = [_Client(base, docs, seed) for seed, docs in enumerate(docs_of)]
    t0 = time.perf_counter()
    for c in clients:
        c.start()
    for c in clients:
        c.join(timeout=600)
    return clients, time.perf_counter() - t0


def _percentile(xs: List[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def test_concurrent_clients_lose_no_edit(tmp_path):
    import urllib.request

    with http_server(tmp_path) as base:
        def post(path: str, body: Dict[str, Any]) -> Dict[str, Any]:
            req = urllib.request.Request(base + path, json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read())["result"]

        own = [post("/v1/scenarios/0/open", {"name": f"own{k}"})["document"] for k in range(CLIENTS)]
        shared = post("/v1/scenarios/0/open", {"name": "shared"})["document"]
        figures = {}
        accepted: List[Tuple[str, int, List[Dict[str, Any]]]] = []
        for phase, docs_of in (("separate", [[d] for d in own]), ("shared", [[shared]] * CLIENTS)):
            clients, secs = _phase(base, docs_of)
            assert all(not c.is_alive() for c in clients)
            lat = [x for c in clients for x in c.latencies]
            assert len(lat) == CLIENTS * REQUESTS and not [f for c in clients for f in c.failures]
            figures[phase] = (len(lat) / secs, 1000 * _percentile(lat, 0.5), 1000 * _percentile(lat, 0.99))
            accepted += [a for c in clients for a in c.accepted]
        for name in own + [shared]:
            post(f"/v1/documents/{name}/save", {"path": f"{name}.json", "format": "native"})
    # sequential replay of the accepted applies, per document in the server's order
    s = remote_team_handoff(0)
    for name in own + [shared]:
        mine = sorted(((seq, ops) for doc, seq, ops in accepted if doc == name), key=lambda t: t[0])
        assert [seq for seq, _ in mine] == list(range(1, len(mine) + 1))  # each apply once, none missing
        replay = s.canvas.copy()
        ex = Executor(replay, s.origin)
        for _, ops in mine:
            ex.apply(ops)
        assert load(tmp_path / f"{name}.json").to_json() == replay.to_json(), name
    assert sum(1 for doc, _, _ in accepted if doc == shared) == CLIENTS * REQUESTS // 2
    for phase, (rps, p50, p99) in figures.items():
        print(f"load {phase}: {CLIENTS} clients x {REQUESTS} requests: {rps:.0f} req/s, p50 {p50:.1f} ms, "
              f"p99 {p99:.1f} ms")
        assert rps > 5 and p99 < 5000
