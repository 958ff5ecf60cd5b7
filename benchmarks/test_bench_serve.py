"""The service's observe latency over HTTP and over MCP next to the in-process call.

One `spatialobs serve --http` process on loopback holds seeded synthetic
workspaces of 10^3 and 10^4 shapes; each group times the same observation
(the compact JSON text) three ways: ``observe(...).to_json()`` in process, the
HTTP route with a keep-alive connection, and the MCP ``observe`` tool through
the SDK's client over streamable HTTP. Every benchmark checks that the service
returned exactly the in-process observation. ``test_transport_overhead``
measures the medians side by side in one run and prints what the transport adds
(the target: about 2 ms at 10^3 shapes on an idle machine).
"""

from __future__ import annotations

import http.client
import json
import statistics
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, Tuple

import pytest

from conftest import sizes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from tests.test_serve_support import http_server  # noqa: E402

from spatialobs.canvas import observe  # noqa: E402
from spatialobs.canvas.scenarios.handoff import synthetic_workspace  # noqa: E402

SIZES = (1000, 10_000)


@lru_cache(maxsize=None)
def canvas(n: int) -> Any:
    c = synthetic_workspace(n, seed=7)
    c.geometry()
    return c


def in_process(n: int) -> str:
    return observe(canvas(n)).to_json()


class _Remote:
    """An HTTP connection and an MCP session to one running server."""

    def __init__(self, base: str) -> None:
        import anyio.from_thread
        from mcp import Client

        host, port = base.rsplit("/", 1)[1].split(":")
        self.http = http.client.HTTPConnection(host, int(port), timeout=120)
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._client_cm = self.portal.wrap_async_context_manager(Client(base + "/mcp"))
        self.mcp = self._client_cm.__enter__()

    def http_observe(self, doc: str) -> str:
        self.http.request("GET", f"/v1/documents/{doc}/observe?form=text")
        resp = self.http.getresponse()
        data = json.loads(resp.read())
        assert resp.status == 200, data
        return str(data["result"]["observation"])

    def mcp_observe(self, doc: str) -> str:
        r = self.portal.call(self.mcp.call_tool, "observe", {"document": doc, "form": "text"})
        assert not r.is_error, r.content[0].text
        return str(json.loads(r.content[0].text)["observation"])

    def close(self) -> None:
        self._client_cm.__exit__(None, None, None)
        self._portal_cm.__exit__(None, None, None)
        self.http.close()


@pytest.fixture(scope="module")
def remote(tmp_path_factory) -> Iterator[Tuple[_Remote, Dict[int, str]]]:
    root = tmp_path_factory.mktemp("bench-serve")
    for n in SIZES:
        (root / f"ws{n}.json").write_text(canvas(n).to_json())
    with http_server(root) as base:
        r = _Remote(base)
        try:
            docs = {}
            for n in SIZES:
                r.http.request("POST", "/v1/documents", body=json.dumps({"path": f"ws{n}.json"}),
                               headers={"Content-Type": "application/json"})
                resp = r.http.getresponse()
                docs[n] = json.loads(resp.read())["result"]["document"]
            yield r, docs
        finally:
            r.close()


def _strip(text: str) -> Dict[str, Any]:
    return dict(json.loads(text))


@pytest.mark.parametrize("n", sizes(*SIZES))
@pytest.mark.parametrize("how", ["in_process", "http", "mcp"])
def test_observe_latency(benchmark, remote, how, n):
    r, docs = remote
    benchmark.group = f"serve-observe-{n:.0e}".replace("e+0", "e")
    fn: Callable[[], str] = {"in_process": lambda: in_process(n), "http": lambda: r.http_observe(docs[n]),
                             "mcp": lambda: r.mcp_observe(docs[n])}[how]
    text = benchmark(fn)
    assert _strip(text) == _strip(in_process(n))
    benchmark.extra_info["bytes"] = len(text.encode("utf-8"))


def _median_ms(fn: Callable[[], Any], runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


@pytest.mark.parametrize("n", sizes(*SIZES))
def test_transport_overhead(remote, n):
    r, docs = remote
    runs = 25 if n <= 1000 else 8
    base = _median_ms(lambda: in_process(n), runs)
    over_http = _median_ms(lambda: r.http_observe(docs[n]), runs)
    over_mcp = _median_ms(lambda: r.mcp_observe(docs[n]), runs)
    print(f"observe at {n} shapes: in process {base:.2f} ms, HTTP {over_http:.2f} ms (+{over_http - base:.2f}), "
          f"MCP {over_mcp:.2f} ms (+{over_mcp - base:.2f})")
    # loose bounds: the machines are shared; the printed figures are what to read
    assert over_http - base < 50 + 0.5 * base
    assert over_mcp - base < 100 + 0.5 * base
