"""The live canvas under test: the real server in this process, real editors in Debian's Chromium.

:func:`live_server` serves a :class:`~spatialobs.serve.Service` with uvicorn on a free
loopback port (the server ``spatialobs serve --http`` runs) in a thread, so a test can
also look at the service's documents directly. :class:`Browser` drives the built live
page (``/live/{name}``) with Playwright and the system Chromium: nothing is downloaded,
and every request to another host is refused and recorded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def unavailable_reason() -> Optional[str]:
    """Why the live page cannot be tested here (one line), or None."""
    from spatialobs.serve.live import page_dir, page_missing

    try:
        import playwright.sync_api  # noqa: F401
        import uvicorn  # noqa: F401
        import websockets  # noqa: F401
    except ImportError as exc:
        return f"the test extras are not installed ({exc.name} is missing)"
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)"
    if page_dir() is None:
        if shutil.which("node") is None:
            return "Node is not installed, so the live page cannot be built (" + page_missing() + ")"
        return page_missing()
    return None


def require() -> None:
    """Skip with the reason (fail on CI, which installs everything) when the live page cannot run."""
    reason = unavailable_reason()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but the live canvas cannot be tested: {reason}", pytrace=False)
        pytest.skip(reason)


#: The documents every live test root holds (written by :func:`write_documents`): a tldraw file
#: and an Excalidraw scene of three frames, each with a title, a filled card with a label and a note.
FRAMES, BOARD = "frames", "board"


def documents() -> Any:
    """The canvas of the built-in documents: three frames with texts, labelled cards and notes."""
    from spatialobs.canvas import Canvas

    c = Canvas()
    page = c.current_page
    colors = ["blue", "green", "orange"]
    for i in range(3):
        frame = f"shape:frame{i}"
        c.add({"id": frame, "type": "frame", "parent": page, "index": f"a{i + 1}", "x": i * 420, "y": 0, "w": 380,
               "h": 300, "name": f"Step {i + 1}"})
        c.add({"id": f"shape:title{i}", "type": "text", "parent": frame, "index": "a1", "x": 20, "y": 20, "w": 200,
               "h": 40, "text": f"Stage {i + 1} \N{ROCKET}", "style": {"color": "black", "size": "l"}})
        c.add({"id": f"shape:card{i}", "type": "geo", "parent": frame, "index": "a2", "x": 40, "y": 90, "w": 220,
               "h": 110, "text": f"Card {i + 1}", "props": {"geo": "rectangle"},
               "style": {"color": colors[i], "fill": "solid", "dash": "solid", "size": "m"}})
        c.add({"id": f"shape:note{i}", "type": "note", "parent": frame, "index": "a3", "x": 200, "y": 150, "w": 150,
               "h": 120, "text": "todo", "style": {"color": "yellow", "size": "s"}})
    return c


def write_documents(root: Path) -> None:
    """Write ``frames.tldr`` and ``board.excalidraw`` (the canvas of :func:`documents`) into ``root``."""
    c = documents()
    (root / f"{FRAMES}.tldr").write_text(json.dumps(c.to_tldraw()), encoding="utf-8")
    (root / f"{BOARD}.excalidraw").write_text(json.dumps(c.to_excalidraw()), encoding="utf-8")


@contextlib.contextmanager
def live_server(root: Path, *, token: Optional[str] = None, limits: Any = None) -> Iterator[Tuple[str, Any]]:
    """``(base URL, service)`` of the HTTP app serving ``root`` on a free loopback port, until the block ends."""
    from spatialobs.serve import Service
    from spatialobs.serve.http_api import make_server

    service = Service(root, limits=limits)
    server, sock = make_server(service, "127.0.0.1", 0, token=token)  # what spatialobs serve --http runs
    port = sock.getsockname()[1]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the live server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", service
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def api(base: str, method: str, path: str, body: Any = None, token: Optional[str] = None) -> Any:
    """One JSON API call; returns the result (raises AssertionError with the error otherwise)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            out = json.loads(r.read())
    except urllib.error.HTTPError as e:
        out = json.loads(e.read())
    assert out.get("ok"), out
    return out["result"]


class Browser:
    """Debian's Chromium through Playwright; pages of the live server only (other hosts are refused)."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        self.blocked: List[str] = []
        self.errors: List[str] = []

    def page(self, base: str, name: str, *, width: int = 1280, height: int = 720, query: str = "",
             timeout: float = 30.0) -> Any:
        """A new tab on ``/live/{name}``, returned once its editor has loaded the document and synced."""
        ctx = self.browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
        pg = ctx.new_page()
        pg.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        pg.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)

        def route(r: Any) -> None:
            u = r.request.url
            if u.startswith(base + "/") or u.startswith(("data:", "blob:")):
                r.continue_()
            else:
                self.blocked.append(u)
                r.abort()

        pg.route("**/*", route)
        pg.goto(f"{base}/live/{name}{query}")
        wait_synced(pg, timeout)
        return pg

    def close(self) -> None:
        try:
            self.browser.close()
        finally:
            self._pw.stop()


def wait_synced(pg: Any, timeout: float = 30.0) -> None:
    """Wait until the page's live client has loaded the document and the service has every edit."""
    pg.wait_for_function("window.spatialobsLive && window.spatialobsLive.loaded", timeout=timeout * 1000)
    pg.evaluate("(ms) => window.spatialobsLive.settled(ms)", int(timeout * 1000))


def editor_records(pg: Any) -> List[Dict[str, Any]]:
    """The editor's document records as JSON (tldraw store records or Excalidraw elements)."""
    out: List[Dict[str, Any]] = pg.evaluate("JSON.parse(JSON.stringify(window.spatialobsLive.adapter.records()))")
    return out
