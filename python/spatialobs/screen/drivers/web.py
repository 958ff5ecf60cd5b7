"""Web pages in headless Chromium through Playwright and the accessibility tree.

Elements come from Chromium's accessibility tree (CDP ``Accessibility.getFullAXTree``:
role, name, value and properties) with their boxes from the layout (one
``DOMSnapshot.captureSnapshot`` per screen, matched on the backend DOM node id);
only nodes with a non-empty box inside the viewport are kept, and nodes the
tree marks ignored or purely structural (``generic``, ``none``,
``InlineTextBox``, ``LineBreak``) are left out. Actions are mouse clicks at the
element's center, typing into editable elements (after a click), and key
presses. The browser is the system Chromium (``executable_path``; nothing is
downloaded).

``url`` is an ``http(s)://`` address, or a local folder: the driver then serves
it from ``127.0.0.1`` on a free port for its lifetime. A page of another origin
reached by an action is a capture (its ``meta.app`` is that origin) and
:meth:`WebDriver.recover` returns to the start. A crashed page or an action
that exceeds the timeout raises :class:`~spatialobs.screen.drivers.DriverFault`.

Examples
--------
>>> chromium_path() is None or chromium_path().startswith("/")
True
>>> with WebDriver("tests/data/webapp") as d:  # doctest: +SKIP
...     [e.text for e in d.reset().elements if e.role == "button"]
['Save draft', 'Help']
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.drivers.base import Driver, DriverFault, DriverUnavailable
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = ["WebDriver", "chromium_path", "unavailable_reason", "serve_folder"]

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
SKIP_ROLES = frozenset({"generic", "none", "InlineTextBox", "LineBreak", "ignored", "presentation"})
CLICK_ROLES = frozenset({"button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox",
                         "menuitemradio", "option", "switch", "treeitem", "combobox", "DisclosureTriangle",
                         "disclosureTriangle", "slider", "spinbutton", "listboxoption"})
EDIT_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "TextField"})
KEYS = {"escape": "Escape", "enter": "Enter", "tab": "Tab", "alt+left": "Alt+ArrowLeft", "backspace": "Backspace"}


def chromium_path() -> Optional[str]:
    """The system Chromium's path, or None.

    Examples
    --------
    >>> p = chromium_path()
    >>> p is None or os.access(p, os.X_OK)
    True
    """
    env = os.environ.get("SPATIALOBS_CHROMIUM")
    for p in ((env,) if env else ()) + CHROMIUM:
        if p and os.access(p, os.X_OK):
            return p
    found = shutil.which("chromium")
    return found


def unavailable_reason() -> Optional[str]:
    """Why the web driver cannot run here, or None.

    Examples
    --------
    >>> unavailable_reason() is None or "missing" in unavailable_reason()
    True
    """
    out = []
    if chromium_path() is None:
        out.append("missing Chromium (apt-get install chromium)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        out.append("missing Python package playwright (pip install spatialobs[web])")
    return "; ".join(out) or None


def serve_folder(folder: str) -> Tuple[Any, str]:
    """Serve ``folder`` over HTTP on 127.0.0.1 (a free port) from a thread; returns (server, base URL).

    Examples
    --------
    >>> import pathlib, tempfile, urllib.request
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = pathlib.Path(d, "index.html").write_text("<p>hi</p>")
    ...     srv, url = serve_folder(d)
    ...     with urllib.request.urlopen(url + "index.html") as r:
    ...         body = r.read()
    ...     srv.shutdown(); srv.server_close()
    >>> body
    b'<p>hi</p>'
    """
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/"


class WebDriver(Driver):
    """A web page in headless Chromium (see the module docstring).

    Parameters
    ----------
    url : str
        The start page (``http(s)://…``) or a local folder to serve (its ``index.html``).
    seed : int, default 0
    timeout : float, default 10
        Seconds an action or a read may take.
    width, height : int
        The viewport.
    """

    keys: Sequence[str] = ("escape", "enter", "tab", "alt+left")
    values: Sequence[str] = ("hello", "42")
    goal = "add a task, change the settings and open the help"

    def __init__(self, url: str, *, seed: int = 0, timeout: float = 10.0, width: int = 1280,
                 height: int = 800, settle: float = 0.1) -> None:
        why = unavailable_reason()
        if why:
            raise DriverUnavailable(f"web: {why}")
        super().__init__(timeout=timeout, seed=seed)
        self._server: Any = None
        if "://" not in url:
            if not os.path.isdir(url):
                raise InvalidInputError(f"web: {url!r} is neither an http(s) URL nor a folder")
            self._server, base = serve_folder(os.path.abspath(url))
            url = base + "index.html"
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise InvalidInputError(f"web: the URL must be http(s), got {url!r}")
        self.url = url
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.name = "web:" + parts.netloc
        self.width, self.height, self.settle = width, height, settle
        self._pw: Any = None
        self._browser: Any = None
        self._page: Any = None
        self._cdp: Any = None
        self._crashed = False
        self._nodes: Dict[str, int] = {}

    def _launch(self) -> None:
        from playwright.sync_api import sync_playwright

        if self._pw is None:
            self._pw = sync_playwright().start()
            self._browser = self._pw.chromium.launch(executable_path=chromium_path(), headless=True,
                                                     args=["--no-sandbox", "--disable-gpu"])
        # A fresh context per launch: no cookies or storage leak between episodes.
        ctx = self._browser.new_context(viewport={"width": self.width, "height": self.height})
        ctx.set_default_timeout(self.timeout * 1000)
        self._page = ctx.new_page()
        self._crashed = False
        self._page.on("crash", lambda *_: setattr(self, "_crashed", True))
        self._page.on("dialog", lambda d: d.dismiss())
        try:
            self._page.goto(self.url, wait_until="load")
        except Exception as exc:
            raise DriverFault("hang", f"could not load {self.url}: {exc}") from None
        self._cdp = ctx.new_cdp_session(self._page)

    def _shutdown(self) -> None:
        if self._page is not None:
            try:
                self._page.context.close()
            except Exception:
                pass
            self._page = self._cdp = None

    def close(self) -> None:
        """Close the page, Chromium, Playwright's driver and the local server (idempotent)."""
        super().close()
        for obj, meth in ((self._browser, "close"), (self._pw, "stop")):
            if obj is not None:
                try:
                    getattr(obj, meth)()
                except Exception:
                    pass
        self._browser = self._pw = None
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def screenshot(self) -> Any:
        """The page's viewport as a ``PIL.Image.Image`` (RGB), through Playwright's ``page.screenshot``.

        Its ``info`` holds the origin ``(0, 0)`` and the viewport's size (see
        :meth:`Driver.screenshot <spatialobs.screen.drivers.Driver.screenshot>`).

        Raises
        ------
        DriverUnavailable
            Pillow is missing.
        DriverFault
            The page crashed or did not answer within the timeout.
        """
        import io

        from spatialobs.screen.drivers.base import ORIGIN_KEY, SCREEN_SIZE_KEY

        if self._page is None:
            raise InvalidInputError("the web driver has not been started: call reset() first")
        try:
            from PIL import Image
        except ImportError:
            raise DriverUnavailable("screenshots need Pillow (pip install spatialobs[ocr])") from None
        if self._crashed:
            raise DriverFault("crash", "the page crashed")
        try:
            png = self._page.screenshot(type="png", timeout=self.timeout * 1000)
        except Exception as exc:
            raise DriverFault("crash" if self._crashed else "hang", f"the screenshot failed: {exc}") from None
        img = Image.open(io.BytesIO(png)).convert("RGB")
        img.info[ORIGIN_KEY] = (0, 0)
        img.info[SCREEN_SIZE_KEY] = (self.width, self.height)
        return img

    def screen(self) -> Screen:
        """Read the page's accessibility tree and layout."""
        if self._page is None:
            raise InvalidInputError("the web driver has not been started: call reset() first")
        if self._crashed:
            raise DriverFault("crash", "the page crashed")
        try:
            url = self._page.url
            tree = self._cdp.send("Accessibility.getFullAXTree")["nodes"]
            snap = self._cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})
        except Exception as exc:
            raise DriverFault("crash" if self._crashed else "hang", f"reading the page failed: {exc}") from None
        boxes: Dict[int, Tuple[float, float, float, float]] = {}
        for doc in snap["documents"][:1]:
            ids = doc["nodes"]["backendNodeId"]
            lay = doc["layout"]
            for ni, b in zip(lay["nodeIndex"], lay["bounds"]):
                boxes[ids[ni]] = (b[0], b[1], b[0] + b[2], b[1] + b[3])
        parts = urlsplit(url)
        app = self.name if f"{parts.scheme}://{parts.netloc}" == self.origin else f"web:{parts.netloc or parts.scheme}"
        elements: List[Element] = []
        self._nodes.clear()
        for n in tree:
            if n.get("ignored"):
                continue
            role = str((n.get("role") or {}).get("value", ""))
            if not role or role in SKIP_ROLES or role == "RootWebArea":
                continue
            box = boxes.get(n.get("backendDOMNodeId", -1))
            if box is None:
                continue
            x0, y0 = max(box[0], 0.0), max(box[1], 0.0)
            x1, y1 = min(box[2], float(self.width)), min(box[3], float(self.height))
            if x1 <= x0 or y1 <= y0:
                continue
            props = {p["name"]: (p.get("value") or {}).get("value") for p in n.get("properties", [])}
            if props.get("hidden"):
                continue
            name = str((n.get("name") or {}).get("value", "") or "").strip()
            value = str((n.get("value") or {}).get("value", "") or "").strip()
            disabled = bool(props.get("disabled"))
            editable = role in EDIT_ROLES and not disabled and bool(props.get("editable", True))
            clickable = not disabled and (role in CLICK_ROLES or bool(props.get("focusable")) and role != "textbox")
            text = value if editable and value else name
            key = str(n.get("backendDOMNodeId"))
            self._nodes[key] = int(n.get("backendDOMNodeId"))
            elements.append(Element((x0, y0, x1, y1), role, text or None, editable, clickable, key))
        return Screen(elements, self.width, self.height, ScreenMeta(display_mode="desktop", text_size="100%",
                                                                    app=app), source=url)

    def _act(self, action: Action) -> None:
        if self._page is None:
            raise InvalidInputError("the web driver has not been started: call reset() first")
        page = self._page
        try:
            if action.op == "key":
                page.keyboard.press(KEYS.get(action.value or "", action.value or ""))
            else:
                t = action.target
                assert t is not None
                if not (t.id or "").isdigit():
                    raise InvalidInputError("the action's target is not an element of a web screen")
                node = int(t.id or "0")
                try:
                    self._cdp.send("DOM.resolveNode", {"backendNodeId": node})
                except Exception:
                    self.faults["vanished"] += 1
                    return
                cx, cy = (t.bounds[0] + t.bounds[2]) / 2, (t.bounds[1] + t.bounds[3]) / 2
                page.mouse.click(cx, cy)
                if action.op == "type":
                    page.keyboard.type(action.value or "")
            try:
                page.wait_for_load_state("load", timeout=self.timeout * 1000)
            except Exception:
                raise DriverFault("timeout", f"the page did not finish loading within {self.timeout:.0f} s") from None
            time.sleep(self.settle)
        except DriverFault:
            raise
        except InvalidInputError:
            raise
        except Exception as exc:
            raise DriverFault("crash" if self._crashed else "timeout", str(exc)[:200]) from None
