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

The application is a ``web:URL`` string or an
:class:`~spatialobs.screen.drivers.spec.AppSpec` (its ``url``, the ``origins`` that
belong to it, ``login`` steps run after every launch, ``goal``, ``values``, ``keys``,
``settle`` and ``volatile`` rules). ``url`` is an ``http(s)://`` address, or a local
folder: the driver then serves it from ``127.0.0.1`` on a free port for its
lifetime. A page outside the app's origins reached by an action is a capture (its
``meta.app`` is ``web:`` and that page's host), and so is a page of its origins at a
path the spec's ``paths`` leave out (its ``meta.app`` is the app's name and that path,
``jupyterlab/logout``); :meth:`WebDriver.recover` returns to the start. A crashed page or an action that exceeds the timeout raises
:class:`~spatialobs.screen.drivers.DriverFault`.

Settling. After an action the screen is read only once the page has settled: no
navigation of the main frame under way (its request sent, its document not yet
loaded, or the old page unloading), the document loaded, no pending timer of at
most :data:`SHORT_TIMER` ms, no fetch or XHR in flight, and no DOM change for
:data:`QUIET` s (an init script in every document counts them). Timers, requests and
DOM changes are waited for at most ``settle_timeout`` seconds (a page that animates
is then read as it is); a navigation up to ``timeout``, after which the step is a
fault. The URL and title come from the same DOM snapshot as the boxes, and a read
whose accessibility tree is of another document than its snapshot (a navigation
committed between the two) is read again, so a screen is never a mix of two pages,
never the old page after a link, and never the empty tree of a page mid-navigation.

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
from urllib.parse import urljoin, urlsplit

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.drivers.base import Driver, DriverFault, DriverUnavailable
from spatialobs.screen.drivers.spec import AppSpec, apply_volatile
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = ["WebDriver", "chromium_path", "unavailable_reason", "serve_folder", "QUIET", "SHORT_TIMER", "STATE_PROPS"]

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
SKIP_ROLES = frozenset({"generic", "none", "InlineTextBox", "LineBreak", "ignored", "presentation"})
CLICK_ROLES = frozenset({"button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox",
                         "menuitemradio", "option", "switch", "treeitem", "combobox", "DisclosureTriangle",
                         "disclosureTriangle", "slider", "spinbutton", "listboxoption"})
EDIT_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "TextField"})
KEYS = {"escape": "Escape", "enter": "Enter", "tab": "Tab", "alt+left": "Alt+ArrowLeft", "backspace": "Backspace",
        "down": "ArrowDown", "right": "ArrowRight", "up": "ArrowUp", "left": "ArrowLeft", "ctrl+z": "Control+z"}
#: Seconds without a DOM change before a page counts as settled.
QUIET = 0.1
#: Seconds an unloading page with no navigation request counts as leaving (then the navigation was cancelled).
LEAVING = 1.0
#: Timers of at most this many milliseconds hold the settling (longer ones are clocks and timeouts).
SHORT_TIMER = 1000
#: Accessibility-tree properties kept in :attr:`Element.states <spatialobs.screen.Element.states>` when true.
STATE_PROPS = ("focused", "checked", "selected", "expanded", "pressed", "disabled", "readonly", "modal", "required")

# Counts what a page is still doing (short timers, requests, DOM changes, unloading) for the settle check.
_TRACKER = """(() => {
  if (window.__spatialobs) return;
  const s = window.__spatialobs = {timers: 0, net: 0, last: performance.now(), leaving: -1};
  const pending = new Set(), setT = window.setTimeout, clearT = window.clearTimeout;
  window.setTimeout = function (fn, ms, ...args) {
    const d = Number(ms) || 0;
    if (typeof fn !== "function" || d > %d) return setT.call(window, fn, ms, ...args);
    const id = setT.call(window, function () {
      pending.delete(id); s.timers = pending.size; return fn.apply(this, args);
    }, d);
    pending.add(id); s.timers = pending.size;
    return id;
  };
  window.clearTimeout = function (id) {
    if (pending.delete(id)) s.timers = pending.size;
    return clearT.call(window, id);
  };
  const done = () => { s.net--; s.last = performance.now(); };
  if (window.fetch) {
    const f = window.fetch;
    window.fetch = function (...a) { s.net++; return f.apply(this, a).finally(done); };
  }
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...a) {
    s.net++; this.addEventListener("loadend", done, {once: true}); return send.apply(this, a);
  };
  new MutationObserver(() => { s.last = performance.now(); })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  addEventListener("beforeunload", () => { s.leaving = performance.now(); });
  addEventListener("pagehide", () => { s.leaving = performance.now(); });
})();""" % SHORT_TIMER

_STATUS = """() => {
  const s = window.__spatialobs;
  return {ready: document.readyState, timers: s ? s.timers : 0, net: s ? s.net : 0,
          idle: s ? performance.now() - s.last : 1e9,
          leaving: s && s.leaving >= 0 ? performance.now() - s.leaving : -1};
}"""


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
    app : str or AppSpec
        The start page (``http(s)://…``, with or without ``web:``), a local folder to
        serve (its ``index.html``), or a web :class:`~spatialobs.screen.drivers.spec.AppSpec`.
    seed : int, default 0
    timeout : float, default 10
        Seconds an action, a navigation or a read may take.
    width, height : int
        The viewport.
    settle : float, optional
        Seconds waited after an action before the settle checks (default: the spec's).
    settle_timeout : float, default 3
        Seconds timers, requests and DOM changes are waited for after an action.
    """

    def __init__(self, app: Any, *, seed: int = 0, timeout: float = 10.0, width: int = 1280,
                 height: int = 800, settle: Optional[float] = None, settle_timeout: float = 3.0) -> None:
        if isinstance(app, str):
            spec = AppSpec.from_url(app)
        elif isinstance(app, AppSpec):
            spec = app
        else:
            raise InvalidInputError(f"web: the application must be a URL, a folder or an AppSpec, got "
                                    f"{type(app).__name__}")
        if spec.driver == "desktop":
            raise InvalidInputError(f"spec {spec.source}: a desktop spec, not a web application")
        for name, v in (("settle", settle), ("settle_timeout", settle_timeout)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0):
                raise InvalidInputError(f"{name} must be a number of seconds >= 0, got {v!r}")
        why = unavailable_reason()
        if why:
            raise DriverUnavailable(f"web: {why}")
        super().__init__(timeout=timeout, seed=seed)
        self.spec = spec
        self._server: Any = None
        url = spec.url
        if "://" not in url:
            if not os.path.isdir(url):
                raise InvalidInputError(f"web: {url!r} is neither an http(s) URL nor a folder")
            self._server, base = serve_folder(os.path.abspath(url))
            url = base + "index.html"
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise InvalidInputError(f"web: the URL must be http(s), got {url!r}")
        self.url = url
        #: The start page's origin; pages of :attr:`origins` belong to the app too.
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.name = spec.name
        self.goal, self.keys, self.values = spec.goal, spec.keys, spec.values
        self.width, self.height = width, height
        self.settle = float(spec.settle if settle is None else settle)
        self.settle_timeout = float(settle_timeout)
        self._pw: Any = None
        self._browser: Any = None
        self._page: Any = None
        self._cdp: Any = None
        self._crashed = False
        self._navs: set = set()
        self._nodes: Dict[str, int] = {}
        #: Seconds spent waiting for pages to settle after actions (for throughput figures).
        self.settle_seconds = 0.0

    @property
    def origins(self) -> Tuple[str, ...]:
        """The origins whose pages are states of the app (the spec's, else the start page's)."""
        return tuple(self.spec.origins) or (self.origin,)

    def _launch(self) -> None:
        from playwright.sync_api import sync_playwright

        if self._pw is None:
            self._pw = sync_playwright().start()
            self._browser = self._pw.chromium.launch(executable_path=chromium_path(), headless=True,
                                                     args=["--no-sandbox", "--disable-gpu"])
        # A fresh context per launch: no cookies or storage leak between episodes.
        ctx = self._browser.new_context(viewport={"width": self.width, "height": self.height})
        ctx.set_default_timeout(self.timeout * 1000)
        ctx.add_init_script(_TRACKER)
        self._page = page = ctx.new_page()
        self._crashed = False
        self._navs = set()
        page.on("crash", lambda *_: setattr(self, "_crashed", True))
        page.on("dialog", lambda d: d.dismiss())
        page.on("request", self._on_request)
        page.on("requestfinished", lambda r: self._navs.discard(r))
        page.on("requestfailed", lambda r: self._navs.discard(r))
        try:
            page.goto(self.url, wait_until="load")
        except Exception as exc:
            raise DriverFault("hang", f"could not load {self.url}: {exc}") from None
        self._cdp = ctx.new_cdp_session(page)
        for i, step in enumerate(self.spec.login):
            try:
                if step.op == "goto":
                    page.goto(urljoin(self.url, step.target), wait_until="load")
                elif step.op == "fill":
                    page.fill(step.target, step.value)
                elif step.op == "click":
                    page.click(step.target)
                elif step.op == "press":
                    page.keyboard.press(KEYS.get(step.target, step.target))
                else:
                    page.wait_for_selector(step.target)
            except Exception as exc:
                raise DriverFault("error", f"login step {i + 1} ({step.op} {step.target!r}) failed: "
                                           f"{str(exc).splitlines()[0][:160]}") from None
        self._settle(0.0)

    def _on_request(self, request: Any) -> None:
        try:
            if request.is_navigation_request() and request.frame == self._page.main_frame:
                self._navs.discard(request.redirected_from)
                self._navs.add(request)
        except Exception:
            pass

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

        try:
            from PIL import Image
        except ImportError:
            raise DriverUnavailable("screenshots need Pillow (pip install spatialobs[ocr])") from None
        img = Image.open(io.BytesIO(self.screenshot_png())).convert("RGB")
        img.info[ORIGIN_KEY] = (0, 0)
        img.info[SCREEN_SIZE_KEY] = (self.width, self.height)
        return img

    def screenshot_png(self) -> bytes:
        """The page's viewport as PNG bytes, as Chromium encodes it (no Pillow needed)."""
        if self._page is None:
            raise InvalidInputError("the web driver has not been started: call reset() first")
        if self._crashed:
            raise DriverFault("crash", "the page crashed")
        try:
            return bytes(self._page.screenshot(type="png", timeout=self.timeout * 1000))
        except Exception as exc:
            raise DriverFault("crash" if self._crashed else "hang", f"the screenshot failed: {exc}") from None

    # -- settling ----------------------------------------------------------------------

    def _settle(self, first: float) -> None:
        """Wait until the page has settled (see the module docstring); a navigation past the timeout is a fault."""
        page = self._page
        t0 = time.monotonic()
        soft = t0 + first + self.settle_timeout
        hard = t0 + first + self.timeout
        if first > 0:
            page.wait_for_timeout(first * 1000)
        try:
            while True:
                if self._crashed:
                    raise DriverFault("crash", "the page crashed")
                try:
                    st = page.evaluate(_STATUS)
                except Exception:
                    st = None  # the document went away under the call: a navigation is under way
                now = time.monotonic()
                # An unload without a navigation request for a second: the navigation was cancelled.
                leaving = st is not None and 0 <= st["leaving"] < LEAVING * 1000
                moving = bool(self._navs) or st is None or leaving or st["ready"] != "complete"
                if not moving and (st["timers"] == 0 and st["net"] == 0 and st["idle"] >= QUIET * 1000
                                   or now > soft):
                    return
                if now > hard:
                    raise DriverFault("timeout", f"the page was still loading after {self.timeout:g} s")
                page.wait_for_timeout(20)
        finally:
            self.settle_seconds += time.monotonic() - t0

    # -- reading -----------------------------------------------------------------------

    def screen(self) -> Screen:
        """Read the page's accessibility tree and layout (one document: see the module docstring)."""
        if self._page is None:
            raise InvalidInputError("the web driver has not been started: call reset() first")
        end = time.monotonic() + self.timeout
        while True:
            scr = self._read()
            if scr is not None and scr.elements:
                return scr
            if time.monotonic() > end:
                what = "an empty page" if scr is not None else "a page between two documents"
                raise DriverFault("timeout", f"the page showed {what} for {self.timeout:g} s")
            # Mid-navigation, or a page with nothing on it yet: settle again.
            self._settle(0.05)

    def _read(self) -> Optional[Screen]:
        if self._crashed:
            raise DriverFault("crash", "the page crashed")
        try:
            tree = self._cdp.send("Accessibility.getFullAXTree")["nodes"]
            snap = self._cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})
        except Exception as exc:
            if "context" in str(exc).lower() or "navigat" in str(exc).lower():
                return None
            raise DriverFault("crash" if self._crashed else "hang", f"reading the page failed: {exc}") from None
        docs = snap.get("documents") or []
        if not docs:
            return None
        doc, strings = docs[0], snap.get("strings", [])
        ids = doc["nodes"]["backendNodeId"]
        root = next((n.get("backendDOMNodeId") for n in tree if (n.get("role") or {}).get("value") == "RootWebArea"),
                    None)
        if root is None or root not in set(ids):
            return None  # the tree and the snapshot are of two documents: a navigation committed between them
        url = _string(strings, doc.get("documentURL"))
        title = _string(strings, doc.get("title")) or None
        boxes: Dict[int, Tuple[float, float, float, float]] = {}
        lay = doc["layout"]
        for ni, b in zip(lay["nodeIndex"], lay["bounds"]):
            boxes[ids[ni]] = (b[0], b[1], b[0] + b[2], b[1] + b[3])
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self.origins:
            app = f"web:{parts.netloc or parts.scheme}"
        elif not self.spec.owns_path(parts.path):
            app = self.name + parts.path  # a page of the app's origin that is not the app (a logout page)
        else:
            app = self.name
        rules = self.spec.volatile
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
            text = apply_volatile(rules, value if editable and value else name, role) if rules else \
                (value if editable and value else name)
            key = str(n.get("backendDOMNodeId"))
            self._nodes[key] = int(n.get("backendDOMNodeId"))
            states = tuple(p for p in STATE_PROPS if props.get(p) not in (None, False, "false", ""))
            elements.append(Element((x0, y0, x1, y1), role, text or None, editable, clickable, key, states))
        return Screen(elements, self.width, self.height, ScreenMeta(display_mode="desktop", text_size="100%",
                                                                    app=app), source=url, title=title)

    # -- acting ------------------------------------------------------------------------

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
            self._settle(self.settle)
        except (DriverFault, InvalidInputError):
            raise
        except Exception as exc:
            raise DriverFault("crash" if self._crashed else "timeout", str(exc)[:200]) from None


def _string(strings: Sequence[str], index: Any) -> str:
    # DOMSnapshot interns its strings: a field holds an index into the snapshot's table (-1: none).
    return strings[index] if isinstance(index, int) and 0 <= index < len(strings) else ""
