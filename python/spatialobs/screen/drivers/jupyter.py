"""JupyterLab as a real web application: a local server per launch, explored in headless Chromium.

Every launch (every :meth:`~spatialobs.screen.drivers.Driver.reset`) starts a new
``jupyter lab`` server bound to ``127.0.0.1`` on a free port, with a random token,
``--no-browser``, terminals off, and a fresh temporary folder holding its root
directory (seeded with :data:`SEED_FILES`) and its own HOME, config, data,
runtime, settings and workspaces folders, so that nothing an episode did (an
open tab, a saved file, a changed setting, a running kernel) leaks into the
next. The driver waits until the server answers ``/api/status`` and the file
browser lists the seeded files, then reads and acts on the page exactly as
:class:`~spatialobs.screen.drivers.web.WebDriver` does (the system Chromium
through Playwright; nothing is downloaded, and requests to any other host are
refused).

The server runs in its own process group with a parent-death signal; closing the
driver, an error and Ctrl+C stop it (SIGTERM, so it shuts its kernels down, then
SIGKILL of the group), and kernels, which Jupyter starts in sessions of their
own, are found by the launch's folder in their environment and killed too.

Texts that change with the clock ("4m ago", "Created: 11/30/26, 7:34 PM") are
normalized (:data:`VOLATILE`) so that the same screen matches across launches;
``meta.app`` is ``"jupyterlab"`` whatever the port.

Examples
--------
>>> unavailable_reason() is None or "missing" in unavailable_reason()
True
>>> with JupyterLabDriver() as d:  # doctest: +SKIP
...     [e.text for e in d.reset().elements if e.role == "menuitem"][:3]
['File', 'Edit', 'View']
"""

from __future__ import annotations

import atexit
import dataclasses
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from typing import Any, Dict, List, Optional, Tuple

from spatialobs.screen.drivers._session import _catch_sigterm, _die_with_parent, alive, kill_group, log_tail
from spatialobs.screen.drivers.base import DriverFault, DriverUnavailable
from spatialobs.screen.drivers.spec import AppSpec, apply_volatile, builtin_spec
from spatialobs.screen.drivers.web import WebDriver
from spatialobs.screen.drivers.web import unavailable_reason as _web_unavailable
from spatialobs.screen.model import Screen

__all__ = ["JupyterLabDriver", "unavailable_reason", "stable_text", "marked_processes", "SEED_FILES", "VOLATILE"]

#: The shipped spec (``spatialobs/screen/apps/jupyterlab.toml``): goal, values, keys and volatile texts.
SPEC = builtin_spec("jupyterlab")
#: The files of a launch's root folder (path relative to the root → content), from the spec.
SEED_FILES: Dict[str, str] = dict(SPEC.files)
#: (pattern, replacement) pairs applied to every text: parts that change with the clock (the spec's volatile rules).
VOLATILE: Tuple[Tuple[str, str], ...] = tuple((r.pattern, r.replace) for r in SPEC.volatile)


def stable_text(text: str) -> str:
    """``text`` with its clock-dependent parts (:data:`VOLATILE`) replaced by ``<time>`` and ``<ago>``.

    Examples
    --------
    >>> stable_text("Name: notes.md Size: 41 B Created: 11/30/26, 7:34 PM Modified: 11/30/26, 7:34 PM Writable: true")
    'Name: notes.md Size: 41 B Created: <time> Modified: <time> Writable: true'
    >>> stable_text("4m ago"), stable_text("Last Checkpoint: 3 minutes ago")
    ('<ago>', 'Last Checkpoint: <time>')
    """
    return apply_volatile(SPEC.volatile, text, "") or ""


#: User settings written into every launch's fresh settings folder: no news or update
#: checks (they would ask the network and put up a notification).
SETTINGS: Dict[str, Dict[str, Any]] = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                       "checkForUpdates": False},
}

#: The page is ready when the file browser lists the root folder's entries.
READY_SELECTOR = ".jp-DirListing-item"

_LIVE: "weakref.WeakSet[JupyterLabDriver]" = weakref.WeakSet()


def _stop_all() -> None:
    for d in list(_LIVE):
        d._stop_server()


atexit.register(_stop_all)


def unavailable_reason() -> Optional[str]:
    """Why the JupyterLab driver cannot run here (Chromium, Playwright or JupyterLab missing), or None.

    Examples
    --------
    >>> unavailable_reason() is None or "missing" in unavailable_reason()
    True
    """
    web = _web_unavailable()
    out = [web] if web else []
    if importlib.util.find_spec("jupyterlab") is None:
        out.append("missing Python package jupyterlab (pip install spatialobs[web])")
    return "; ".join(out) or None


def _free_port() -> int:
    # Another process may take it before the server binds; the server then exits and the launch is retried.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def marked_processes(marker: str) -> List[int]:
    """Pids of running (not zombie) processes whose environment holds ``marker``.

    Examples
    --------
    >>> marked_processes("no process has this in its environment " + "x" * 8)
    []
    """
    out = []
    needle = marker.encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read():
                    out.append(int(pid))
        except (OSError, IndexError):
            continue
    return out


class JupyterLabDriver(WebDriver):
    """JupyterLab on a fresh local server per launch (see the module docstring).

    Parameters
    ----------
    seed : int, default 0
        Seeds the starts' replay prefixes.
    spec : AppSpec, optional
        Goal, values, keys, settle delay, launch timeout and volatile texts (default:
        the shipped ``jupyterlab`` spec).
    timeout : float, default 10
        Seconds an action or a read may take.
    launch_timeout : float, default 60
        Seconds the server and the page may take to come up.
    width, height : int
        The viewport.

    Raises
    ------
    DriverUnavailable
        When Chromium, Playwright or JupyterLab is missing (the message says which).
    """

    def __init__(self, *, seed: int = 0, timeout: float = 10.0, launch_timeout: Optional[float] = None,
                 width: int = 1280, height: int = 800, settle: Optional[float] = None,
                 spec: Optional[AppSpec] = None) -> None:
        why = unavailable_reason()
        if why:
            raise DriverUnavailable(f"jupyterlab: {why}")
        spec = SPEC if spec is None else spec
        if spec.driver != "jupyterlab":
            raise DriverUnavailable(f"spec {spec.source}: a {spec.driver} spec, not JupyterLab")
        # The address is known only once a launch has picked its port; the texts are stabilized in screen().
        super().__init__(dataclasses.replace(spec, url="http://127.0.0.1/lab", volatile=()), seed=seed,
                         timeout=timeout, width=width, height=height, settle=settle)
        self._rules = spec.volatile
        self._files = dict(spec.files)
        self.launch_timeout = float(spec.launch_timeout if launch_timeout is None else launch_timeout)
        self._server_proc: Optional["subprocess.Popen[bytes]"] = None
        self._tmp: Optional[str] = None
        self._token = ""
        self.root = ""
        _LIVE.add(self)
        _catch_sigterm()

    # -- the server ----------------------------------------------------------------------

    def _start_server(self) -> None:
        self._tmp = tmp = tempfile.mkdtemp(prefix="spatialobs-jupyter-")
        self.root = root = os.path.join(tmp, "root")
        for rel, content in self._files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(content)
        dirs = {k: os.path.join(tmp, v) for k, v in (
            ("HOME", "home"), ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
            ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
            ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"), ("IPYTHONDIR", "ipython"))}
        for d in dirs.values():
            os.makedirs(d, exist_ok=True)
        for rel, values in SETTINGS.items():
            path = os.path.join(dirs["JUPYTERLAB_SETTINGS_DIR"], rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(values, f)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
               **dirs, "XDG_CONFIG_HOME": os.path.join(tmp, "home", ".config"),
               "XDG_DATA_HOME": os.path.join(tmp, "home", ".local", "share"),
               "XDG_CACHE_HOME": os.path.join(tmp, "home", ".cache"),
               "JUPYTER_PLATFORM_DIRS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
               # Kernels start in sessions of their own: this finds them to kill them.
               "SPATIALOBS_JUPYTER_LAUNCH": tmp}
        port = _free_port()
        self._token = secrets.token_hex(16)
        argv = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                "--ServerApp.port_retries=0", f"--IdentityProvider.token={self._token}",
                f"--ServerApp.root_dir={root}", "--ServerApp.terminals_enabled=False",
                "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.extension_manager=readonly"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            argv.append("--allow-root")
        self.log = os.path.join(tmp, "server.log")
        with open(self.log, "ab") as out:
            self._server_proc = subprocess.Popen(argv, env=env, cwd=root, stdin=subprocess.DEVNULL, stdout=out,
                                                 stderr=out, start_new_session=True, preexec_fn=_die_with_parent)
        base = f"http://127.0.0.1:{port}"
        end = time.monotonic() + self.launch_timeout
        while True:
            if not alive(self._server_proc):
                raise DriverFault("crash", f"jupyter lab exited while starting (code {self._server_proc.poll()}): "
                                           f"{log_tail(self.log)}")
            try:
                req = urllib.request.Request(f"{base}/api/status", headers={"Authorization": f"token {self._token}"})
                with urllib.request.urlopen(req, timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > end:
                raise DriverFault("hang", f"jupyter lab did not serve within {self.launch_timeout:.0f} s")
            time.sleep(0.2)
        self.origin = base
        self.url = f"{base}/lab?token={self._token}"

    def _stop_server(self) -> None:
        proc, tmp = self._server_proc, self._tmp
        self._server_proc = self._tmp = None
        if proc is not None:
            # SIGTERM first: the server shuts its kernels down on the way out.
            kill_group(proc, grace=3.0)
        if tmp is not None:
            for pid in marked_processes(f"SPATIALOBS_JUPYTER_LAUNCH={tmp}"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            shutil.rmtree(tmp, ignore_errors=True)

    # -- the driver ------------------------------------------------------------------------

    def _launch(self) -> None:
        self._stop_server()
        self._start_server()
        super()._launch()
        page = self._page
        # Only the local server: a link or a help page may not reach the network.
        page.context.route("**/*", lambda route: route.continue_() if _local(route.request.url, self.origin)
                           else route.abort())
        try:
            page.wait_for_selector(READY_SELECTOR, timeout=self.launch_timeout * 1000)
        except Exception:
            raise DriverFault("hang", f"JupyterLab showed no file browser within {self.launch_timeout:.0f} s") \
                from None
        time.sleep(max(self.settle, 0.3))

    def _shutdown(self) -> None:
        super()._shutdown()
        self._stop_server()

    def close(self) -> None:
        """Close the page and Chromium, stop the server and its kernels, remove the launch's folder (idempotent)."""
        try:
            super().close()
        finally:
            self._stop_server()
            _LIVE.discard(self)

    def screen(self) -> Screen:
        """The page's screen, with clock-dependent texts normalized and the token left out of the source."""
        if self._server_proc is not None and not alive(self._server_proc):
            # Code 0: the server was shut down from its own menu (File > Shut Down).
            code = self._server_proc.poll()
            raise DriverFault("exited" if code == 0 else "crash", f"the jupyter lab server exited (code {code})")
        scr = super().screen()
        # A file browser entry is selected by a click (and opened by Enter) though the tree marks it inert.
        elements = [dataclasses.replace(e, text=apply_volatile(self._rules, e.text, e.role),
                                        clickable=e.clickable or e.role == "listitem" and e.bounds[0] < self.width / 3)
                    for e in scr.elements]
        return Screen(elements, scr.width, scr.height, scr.meta, source=(scr.source or "").split("?", 1)[0],
                      title=scr.title)



def _local(url: str, origin: str) -> bool:
    return url == origin or url.startswith((origin + "/", origin + "?", "data:", "blob:"))
