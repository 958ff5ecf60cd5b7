"""Running `spatialobs serve` for the service tests: a real server process on a free loopback port.

The helpers here start the command exactly as a user would, wait for the line
that names the bound port, and always stop the process (terminate, then kill).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

REPO = Path(__file__).resolve().parents[1]


def serve_command(root: Path, *extra: str) -> List[str]:
    return [sys.executable, "-m", "spatialobs", "serve", "--root", str(root), *extra]


@contextlib.contextmanager
def http_server(root: Path, token: Optional[str] = None, timeout: float = 60.0, extra: Sequence[str] = (),
                log: Optional[List[str]] = None) -> Iterator[str]:
    """Run ``spatialobs serve --http 127.0.0.1:0`` in ``root``; yield its base URL; always stop it.

    ``extra``: more command-line options; ``log``: a list that receives the server's stderr lines.
    """
    args = serve_command(root, "--http", "127.0.0.1:0", *extra) + (["--token", token] if token else [])
    env = dict(os.environ)
    env.pop("SPATIALOBS_TOKEN", None)
    proc = subprocess.Popen(args, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)
    lines: List[str] = [] if log is None else log
    ready = threading.Event()
    url: List[str] = []

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "listening on http://" in line and not url:
                url.append(line.split("listening on ", 1)[1].split()[0])
                ready.set()
        ready.set()

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    try:
        if not ready.wait(timeout) or not url:
            raise RuntimeError("the server did not start: " + "".join(lines)[-2000:])
        yield url[0]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
            proc.kill()
            proc.wait(timeout=10)
        t.join(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()


def request(base: str, method: str, path: str, body: Any = None, token: Optional[str] = None,
            raw: Optional[bytes] = None, headers: Optional[Dict[str, str]] = None) -> Tuple[int, Dict[str, Any]]:
    """One HTTP request with urllib; ``(status, parsed JSON body)``."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def address(base: str) -> Tuple[str, int]:
    host, port = base.rsplit("/", 1)[1].rsplit(":", 1)
    return host.strip("[]"), int(port)


def exact_request(base: str, method: str, path: str, headers: Sequence[Tuple[str, str]] = (), body: bytes = b"",
                  timeout: float = 30.0) -> Tuple[int, Dict[str, str], bytes]:
    """One request carrying exactly ``headers`` (no Host, Content-Type or Accept-Encoding added unless given);
    ``(status, response headers with lower-case names, body)``."""
    conn = http.client.HTTPConnection(*address(base), timeout=timeout)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in headers:
            conn.putheader(k, v)
        if body or method in ("POST", "PUT", "PATCH"):
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_server_starts_on_a_free_loopback_port_and_stops(tmp_path):
    with http_server(tmp_path) as base:
        assert base.startswith("http://127.0.0.1:")
        status, body = request(base, "GET", "/v1/health")
        assert status == 200 and body["ok"] and body["result"]["status"] == "ok"
        status, body = request(base, "GET", "/v1/tools")
        names = {t["name"] for t in body["result"]["tools"]}
        assert {"open_document", "observe", "apply", "undo", "render", "save", "close", "evaluate",
                "screen_add", "screen_choose"} <= names
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(base + "/v1/health", timeout=5)


def test_token_is_required_except_for_health(tmp_path):
    with http_server(tmp_path, token="s3cret") as base:
        assert request(base, "GET", "/v1/health")[0] == 200
        status, body = request(base, "GET", "/v1/documents")
        assert status == 401 and body == {"ok": False, "error": {"code": "unauthorized",
                                                                  "message": "missing or wrong bearer token"}}
        assert request(base, "GET", "/v1/documents", token="wrong")[0] == 401
        assert request(base, "GET", "/v1/documents", token="s3cret") == (200, {"ok": True, "result": {"documents": []}})
        # the MCP endpoint is behind the same token
        status, _ = request(base, "POST", "/mcp", body={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert status == 401


def test_stdio_server_ends_when_the_client_closes_stdin(tmp_path):
    out = subprocess.run(serve_command(tmp_path), cwd=REPO, input="", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""


def test_one_document_at_a_time_while_others_proceed(tmp_path):
    import threading as th

    from spatialobs.serve import Service

    svc = Service(tmp_path)
    svc.call("scenario_open", {"config": 0, "name": "a"})
    svc.call("scenario_open", {"config": 1, "name": "b"})
    done: List[str] = []
    busy = svc._docs["a"].lock  # stands for a slow render holding document a
    with busy:
        t = th.Thread(target=lambda: done.append(svc.call("observe", {"document": "a"})["document"]))
        t.start()
        assert svc.call("observe", {"document": "b"})["document"] == "b"  # b is not held up
        t.join(timeout=0.3)
        assert done == []  # a waits for its turn
    t.join(timeout=30)
    assert done == ["a"]


@contextlib.contextmanager
def inprocess_server(root: Path, limits: Any = None, token: Optional[str] = None,
                     configure: Any = None) -> Iterator[str]:
    """The command's uvicorn server (``make_server``) in a thread of this process on a free loopback port, for
    limits the command line does not expose; yields its base URL; always stops it. ``configure(app)`` may
    change the ASGI app first."""
    from spatialobs.serve import Service
    from spatialobs.serve.http_api import make_server

    server, sock = make_server(Service(root), "127.0.0.1", 0, token=token, limits=limits)
    if configure is not None:
        configure(server.config.app)
    t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    try:
        for _ in range(1000):
            if server.started:
                break
            time.sleep(0.01)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        t.join(timeout=15)
        sock.close()


def _built_page(folder: Path, marker: str) -> Path:
    (folder / "assets").mkdir(parents=True)
    (folder / "live.html").write_text(marker)
    return folder


def test_live_page_of_a_source_checkout_is_its_own_build(tmp_path, monkeypatch):
    """A checkout's ``live/dist`` wins over a stale copy an earlier install left in the package folder."""
    from spatialobs.serve.live import page_dir

    monkeypatch.delenv("SPATIALOBS_LIVE_PAGE", raising=False)
    package = tmp_path / "checkout" / "python" / "spatialobs" / "serve"
    stale = _built_page(package / "live_page", "stale")
    (tmp_path / "checkout" / "live").mkdir()
    # no package.json: not a checkout, the carried page is the one
    assert page_dir(package) == stale
    (tmp_path / "checkout" / "live" / "package.json").write_text("{}")
    # a checkout whose page is not built: the carried one still serves
    assert page_dir(package) == stale
    fresh = _built_page(tmp_path / "checkout" / "live" / "dist", "fresh")
    assert page_dir(package) == fresh
    # the variable names a page to serve over both
    other = _built_page(tmp_path / "other", "other")
    monkeypatch.setenv("SPATIALOBS_LIVE_PAGE", str(other))
    assert page_dir(package) == other
    # nothing built anywhere: None (the service then says how to build it)
    monkeypatch.delenv("SPATIALOBS_LIVE_PAGE")
    bare = tmp_path / "site-packages" / "spatialobs" / "serve"
    bare.mkdir(parents=True)
    assert page_dir(bare) is None


def test_installed_package_serves_the_page_it_carries(tmp_path, monkeypatch):
    """Installed (no ``live/package.json`` above the package), the wheel's page is served."""
    from spatialobs.serve.live import page_dir

    monkeypatch.delenv("SPATIALOBS_LIVE_PAGE", raising=False)
    package = tmp_path / "venv" / "lib" / "site-packages" / "spatialobs" / "serve"
    carried = _built_page(package / "live_page", "carried")
    assert page_dir(package) == carried
