"""Real desktop applications through AT-SPI under a private Xvfb display and D-Bus session.

Linux's accessibility API is the counterpart of the paper's UI Automation: each
accessible object has a role, a name, extents, a state set and often a text. The
driver starts a private X display (Xvfb), a private D-Bus session and the AT-SPI
bus (one of each per driver), launches the application with accessibility on,
with a fresh HOME and XDG folders on every launch, and reads the tree over D-Bus
with `jeepney <https://jeepney.readthedocs.io>`_ (pure Python; see the README for
why this client).

A screen holds the objects that are SHOWING, have a non-empty box on the screen,
and are not hidden behind a modal dialog (when one is up, only its window is
read). Roles are AT-SPI's role names (``"push button"``, ``"menu item"``,
``"table cell"``); ``text`` is the name, or the text content for text objects
(icons too: PCManFM's folder icons carry their file name there only);
``editable`` is the EDITABLE state; ``clickable`` means SENSITIVE with an Action
interface or an interactive role. Tables that manage their descendants
(LibreOffice's sheet, a tree view) are read cell by cell over their visible
range. The calls of a tree level are sent together (:meth:`AtspiDriver._read`).

Actions: clicks through the Action interface (``DoAction(0)``, or a pointer click
through XTest when the object has none), typing a fixed token set through XTest
after focusing the target, and key chords through XTest (``xdotool``). Every
D-Bus call, or batch of calls, is bounded by the driver's timeout.

Faults: an element that vanished before the action is counted
(``faults["vanished"]``) and the step changes nothing; a dead application
(``"crash"`` / ``"exited"``) or a call with no reply (``"hang"``) raises
:class:`~spatialobs.screen.drivers.DriverFault`, and :meth:`AtspiDriver.recover`
kills and relaunches it (the whole session when the session itself died).

Applications: any :class:`~spatialobs.screen.drivers.spec.AppSpec` of a desktop
application (its command, toolkit, environment, seeded files and exploration data),
among them the specs shipped with the package: ``"mousepad"`` on a fresh temporary
file, ``"pcmanfm"`` on a seeded temporary folder tree, ``"localc"`` (LibreOffice
Calc, GTK3 plugin) on a fresh spreadsheet. Every launch gets the accessibility
settings of every toolkit (:mod:`~spatialobs.screen.drivers.toolkits`); before
launching, the driver checks that the program and its toolkit's bridge are
installed, and a launch whose window shows but never appears on the accessibility
bus ends after the spec's ``register_timeout`` with :class:`NotAccessible`, whose
one line names the toolkit setting to check.

Examples
--------
>>> sorted(APPS)
['featherpad', 'galculator', 'localc', 'loimpress', 'lomath', 'lowriter', 'mousepad', 'pcmanfm']
>>> with AtspiDriver("mousepad") as d:  # doctest: +SKIP
...     scr = d.reset()
...     [e.text for e in scr.elements if e.role == "menu"][:3]
['File', 'Edit', 'Search']
>>> with AtspiDriver(AppSpec.from_command("galculator")) as d:  # doctest: +SKIP
...     [e.text for e in d.reset().elements if e.role == "menu"]
['File', 'Edit', 'View', 'Calculator', 'Help']
"""

from __future__ import annotations

import dataclasses
import os
import random
import subprocess
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.drivers._session import Session, alive, log_tail, missing_programs
from spatialobs.screen.drivers.base import Driver, DriverFault, DriverUnavailable
from spatialobs.screen.drivers.spec import BUILTIN_APPS, AppSpec, apply_volatile, builtin_spec
from spatialobs.screen.drivers.toolkits import (
    BRIDGE_FAILED,
    LABELS,
    REGISTER_HINTS,
    TOOLKIT_ARGS,
    bridge_problem,
    default_env,
    detect_toolkit,
)
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = ["AtspiDriver", "AppSpec", "APPS", "NotAccessible", "unavailable_reason", "KEYSYMS", "STATE_NAMES",
           "state_names"]

_ACC = "org.a11y.atspi.Accessible"
_COMP = "org.a11y.atspi.Component"
_ACTION = "org.a11y.atspi.Action"
_TEXT = "org.a11y.atspi.Text"
_TABLE = "org.a11y.atspi.Table"
_ROOT = ("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")

# AT-SPI state bits (atspi-constants.h, AtspiStateType).
ST_EDITABLE, ST_ENABLED, ST_FOCUSED, ST_MODAL, ST_SENSITIVE, ST_SHOWING, ST_VISIBLE = 7, 8, 12, 16, 24, 25, 30
ST_MANAGES_DESCENDANTS = 31
#: The AT-SPI states kept in :attr:`Element.states <spatialobs.screen.Element.states>` (bit → name).
STATE_NAMES = ((4, "checked"), (10, "expanded"), (12, "focused"), (16, "modal"), (20, "pressed"), (23, "selected"),
               (32, "indeterminate"), (43, "read only"))

#: Roles a click means something on even without an Action interface.
CLICK_ROLES = frozenset({
    "push button", "toggle button", "check box", "radio button", "menu", "menu item", "check menu item",
    "radio menu item", "page tab", "link", "combo box", "list item", "table cell", "tree item", "icon",
    "spin button", "button", "tear off menu item", "push button menu", "toggle button menu",
})
#: Roles never offered as click targets (containers and decoration).
NO_CLICK_ROLES = frozenset({
    "frame", "filler", "panel", "scroll pane", "viewport", "separator", "tool bar", "menu bar", "page tab list",
    "status bar", "statusbar", "scroll bar", "window", "dialog", "layered pane", "root pane", "split pane",
    "application", "document spreadsheet", "document frame", "label", "heading", "paragraph", "section",
})
#: Roles whose text content is read (at most 120 characters).
#: (An icon of PCManFM's folder view has no name: its file name is its text content.)
TEXT_ROLES = frozenset({"text", "entry", "paragraph", "table cell", "spin button", "editbar", "icon"})

#: Our key names → X keysyms for xdotool.
KEYSYMS = {"escape": "Escape", "enter": "Return", "tab": "Tab", "ctrl+z": "ctrl+z", "alt+f": "alt+f",
           "ctrl+s": "ctrl+s", "ctrl+o": "ctrl+o", "ctrl+f": "ctrl+f", "alt+e": "alt+e", "down": "Down",
           "right": "Right", "backspace": "BackSpace", "f2": "F2", "alt+left": "alt+Left", "alt+up": "alt+Up"}

Ref = Tuple[str, str]
#: One D-Bus method call: (object, interface, method, signature, arguments).
Call = Tuple[Ref, str, str, str, Tuple[Any, ...]]
_PROPS = "org.freedesktop.DBus.Properties"
#: With settle="stable": the wait after an action before the first read, and between reads.
STABLE_FIRST, STABLE_POLL = 0.02, 0.0
#: Characters of a text object read.
TEXT_CHARS = 120
#: Seconds a DoAction may take to answer before the driver checks that the application still answers others.
DO_ACTION_WAIT = 1.0
#: Calls in flight at once in :meth:`_Bus.call_many` (the replies wait in the socket meanwhile).
BATCH = 256


class NotAccessible(DriverUnavailable):
    """An application ran but never appeared on the accessibility bus (its toolkit's bridge is off or missing).

    The message names the toolkit setting to check (:data:`~spatialobs.screen.drivers.toolkits.REGISTER_HINTS`).
    """


#: The desktop applications shipped as specs (``spatialobs/screen/apps/*.toml``).
APPS: Dict[str, AppSpec] = {n: builtin_spec(n) for n in BUILTIN_APPS if builtin_spec(n).driver == "desktop"}


def _spec_of(app: Any) -> AppSpec:
    if isinstance(app, AppSpec):
        if app.driver != "desktop":
            raise InvalidInputError(f"spec {app.source}: a {app.driver} spec, not a desktop application")
        return app
    if isinstance(app, str) and app in APPS:
        return APPS[app]
    if isinstance(app, str) and app.startswith("cmd:"):
        return AppSpec.from_command(app)
    raise InvalidInputError(f"unknown desktop application {app!r}; choose one of {sorted(APPS)}, cmd:COMMAND "
                            "or an AppSpec")


def _toolkit(spec: AppSpec) -> str:
    return spec.toolkit if spec.toolkit != "auto" else detect_toolkit(spec.program)


def unavailable_reason(app: Any) -> Optional[str]:
    """Why the driver for ``app`` (a shipped name, ``cmd:COMMAND`` or a desktop spec) cannot run here, or None.

    Missing programs (the application's, Xvfb, D-Bus, the AT-SPI bus, xdotool), a
    missing Python package, or a toolkit bridge that is not installed.

    Examples
    --------
    >>> unavailable_reason("nonesuch")  # doctest: +ELLIPSIS
    "unknown desktop application 'nonesuch'; choose one of ['featherpad', ..., 'pcmanfm'], cmd:COMMAND or an AppSpec"
    """
    try:
        spec = _spec_of(app)
    except InvalidInputError as e:
        return str(e)
    missing = missing_programs([spec.program, "xdotool"])
    out = []
    if spec.program in missing:
        out.append(f"the program {spec.program!r} is not installed or not on PATH"
                   + (f" (apt-get install {spec.packages})" if spec.packages else ""))
    session = [m for m in missing if m != spec.program]
    if session:
        out.append(f"missing system programs: {', '.join(session)} (apt-get install xvfb dbus-x11 at-spi2-core "
                   "xdotool)")
    try:
        import jeepney  # noqa: F401
    except ImportError:
        out.append("missing Python package jeepney (pip install spatialobs[desktop])")
    if spec.program not in missing:
        bridge = bridge_problem(_toolkit(spec))
        if bridge:
            out.append(bridge)
    return "; ".join(out) or None


class _Bus:
    """Blocking method calls on the AT-SPI bus, each bounded by ``timeout``."""

    def __init__(self, address: str, timeout: float) -> None:
        from jeepney.io.blocking import open_dbus_connection

        self.conn = open_dbus_connection(address)
        self.timeout = timeout
        self.calls = 0

    def call(self, ref: Ref, iface: str, method: str, sig: str = "", args: Tuple[Any, ...] = (),
             timeout: Optional[float] = None, hang_ok: bool = False) -> Any:
        """The reply's body; with ``hang_ok``, None when no reply came within ``timeout`` (it is dropped if late)."""
        from jeepney import DBusAddress, MessageType, new_method_call

        if not ref[0]:
            raise _CallError(_NULL_REF, ())
        msg = new_method_call(DBusAddress(ref[1], bus_name=ref[0], interface=iface), method, sig or None, args)
        self.calls += 1
        try:
            reply = self.conn.send_and_get_reply(msg, timeout=timeout or self.timeout)
        except TimeoutError:
            if hang_ok:
                return None
            raise DriverFault("hang", f"no reply to {method} within {timeout or self.timeout:.0f} s") from None
        except (ConnectionError, OSError) as exc:
            raise DriverFault("crash", f"the AT-SPI bus went away ({exc})") from None
        if reply.header.message_type == MessageType.error:
            raise _CallError(str(reply.header.fields.get(4, "error")), reply.body)
        return tuple(reply.body)

    def prop(self, ref: Ref, iface: str, name: str) -> Any:
        return self.call(ref, _PROPS, "Get", "ss", (iface, name))[0][1]

    def call_many(self, calls: Sequence[Call], timeout: Optional[float] = None, hang_ok: bool = False) -> List[Any]:
        """Send the calls before reading any reply; each reply's body (a tuple) or a :class:`_CallError`, in order.

        The application answers them back to back instead of waiting for one round
        trip per call (each goes through the bus daemon and back). Each chunk of
        :data:`BATCH` calls is bounded by ``timeout``; with ``hang_ok`` an unanswered
        call is a :class:`_CallError` instead of a hang.
        """
        from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call

        limit = timeout or self.timeout
        out: List[Any] = [None] * len(calls)
        for lo in range(0, len(calls), BATCH):
            pending: Dict[int, int] = {}
            try:
                for i in range(lo, min(lo + BATCH, len(calls))):
                    ref, iface, method, sig, args = calls[i]
                    if not ref[0]:
                        out[i] = _CallError(_NULL_REF, ())
                        continue
                    msg = new_method_call(DBusAddress(ref[1], bus_name=ref[0], interface=iface), method, sig or None,
                                          args)
                    serial = next(self.conn.outgoing_serial)
                    self.conn.send(msg, serial=serial)
                    pending[serial] = i
                self.calls += len(pending)
                end = time.monotonic() + limit
                while pending:
                    reply = self.conn.receive(timeout=max(end - time.monotonic(), 0.0))
                    i = pending.pop(reply.header.fields.get(HeaderFields.reply_serial, -1), -1)
                    if i < 0:
                        continue  # a signal, or the late reply to a call that timed out earlier
                    if reply.header.message_type == MessageType.error:
                        out[i] = _CallError(str(reply.header.fields.get(HeaderFields.error_name, "error")), reply.body)
                    else:
                        out[i] = tuple(reply.body)
            except TimeoutError:
                if not hang_ok:
                    raise DriverFault("hang", f"no reply to {len(pending)} of {len(calls)} calls within "
                                              f"{limit:.0f} s") from None
                for i in pending.values():
                    out[i] = _CallError("org.freedesktop.DBus.Error.NoReply", ())
            except (ConnectionError, OSError) as exc:
                raise DriverFault("crash", f"the AT-SPI bus went away ({exc})") from None
        return out

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass


class _CallError(Exception):
    """An error reply (the object vanished, or does not implement the interface)."""


# AT-SPI's null reference (an empty bus name) points at no object, e.g. a child that went away
# between listing and reading; asking the bus for it is a malformed message, not a call.
_NULL_REF = "org.a11y.atspi.NullReference"


def _bit(states: Sequence[int], n: int) -> bool:
    return bool(states[n // 32] >> (n % 32) & 1) if n // 32 < len(states) else False


def state_names(states: Sequence[int]) -> Tuple[str, ...]:
    """The names of the :data:`STATE_NAMES` set in an AT-SPI state set (two 32-bit words), plus ``"disabled"``.

    Examples
    --------
    >>> state_names([1 << 12 | 1 << 24, 0])
    ('focused',)
    >>> state_names([1 << 4, 0])
    ('checked', 'disabled')
    """
    out = tuple(name for bit, name in STATE_NAMES if _bit(states, bit))
    if not (_bit(states, ST_SENSITIVE) or _bit(states, ST_ENABLED)):
        out += ("disabled",)
    return out


class AtspiDriver(Driver):
    """A real desktop application through AT-SPI (see the module docstring).

    Parameters
    ----------
    app : str or AppSpec
        A shipped application (``"mousepad"``, ``"pcmanfm"``, ``"localc"``), a command
        line (``"cmd:galculator"``) or a desktop :class:`~spatialobs.screen.drivers.spec.AppSpec`.
    seed : int, default 0
        Seeds the spec's folder tree (pcmanfm) and the starts' replay prefixes.
    timeout : float, default 10
        Seconds any one D-Bus call or action may take before it counts as a hang.
    max_nodes : int, default 2500
        Accessible objects read per screen at most.
    max_rows, max_cols : int, default 15 and 8
        Cells read of a table that manages its descendants (a sheet), from its
        top-left visible cell.
    settle : {"fixed", "stable"}, default "fixed"
        After an action: wait the application's fixed delay and read once
        (``"fixed"``), or read until two reads in a row agree (``"stable"``, at
        most ``settle_timeout`` seconds). The first screen of a launch is always
        read until two reads agree. On Mousepad ``"stable"`` returned no screen
        before it had settled where ``"fixed"`` returned 3 of 298, at 0.86-1.03x
        the steps per second (see the README).
    settle_timeout : float, default 2

    Raises
    ------
    DriverUnavailable
        When the system programs, jeepney or the toolkit's accessibility bridge are
        missing (the message says which).
    NotAccessible
        From :meth:`reset`: the application showed a window but never appeared on the
        accessibility bus within the spec's ``register_timeout``.
    """

    def __init__(self, app: Any, *, seed: int = 0, timeout: float = 10.0, max_nodes: int = 2500,
                 max_rows: int = 15, max_cols: int = 8, width: int = 1280, height: int = 800,
                 settle: str = "fixed", settle_timeout: float = 2.0) -> None:
        spec = _spec_of(app)
        if settle not in ("stable", "fixed"):
            raise InvalidInputError(f"settle must be 'stable' or 'fixed', got {settle!r}")
        if isinstance(settle_timeout, bool) or not isinstance(settle_timeout, (int, float)) or not settle_timeout > 0:
            raise InvalidInputError(f"settle_timeout must be a positive number of seconds, got {settle_timeout!r}")
        why = unavailable_reason(spec)
        if why:
            raise DriverUnavailable(f"{spec.name}: {why}")
        super().__init__(timeout=timeout, seed=seed)
        self.spec = spec
        self.name = spec.name
        #: The toolkit the launch checks the bridge of (the spec's, else detected from the program).
        self.toolkit = _toolkit(spec)
        self.goal = self.spec.goal
        self.keys = self.spec.keys
        self.values = self.spec.values
        self.max_nodes = max_nodes
        self.max_rows, self.max_cols = max_rows, max_cols
        self.width, self.height = width, height
        self._session: Optional[Session] = None
        self._home = "~"
        self._volatile = spec.volatile
        self._bus: Optional[_Bus] = None
        self._app: Optional["subprocess.Popen[bytes]"] = None
        self._xy: Dict[str, Tuple[float, float]] = {}
        self._ifaces: Dict[str, Tuple[str, ...]] = {}
        #: Role and interfaces of the objects read since the launch.
        self._kinds: Dict[Ref, Tuple[str, Tuple[str, ...]]] = {}
        self.settle, self.settle_timeout = settle, float(settle_timeout)
        self._unsettled = False
        #: Seconds spent reading trees and D-Bus calls made (for throughput figures).
        self.read_seconds = 0.0
        # The box of the windows the last read found (None once an action or a launch followed it).
        self._shot_box: Optional[Tuple[float, float, float, float]] = None

    # -- processes ---------------------------------------------------------------------

    def _ensure_session(self) -> Session:
        if self._session is not None and not self._session.alive():
            self._drop_session()
        if self._session is None:
            self._session = Session(self.width, self.height)
            addr = self._session.a11y_address()
            self._bus = _Bus(addr, self.timeout)
        return self._session

    def _drop_session(self) -> None:
        if self._bus is not None:
            self._bus.close()
            self._bus = None
        if self._session is not None:
            self._session.close()
            self._session = None
        self._app = None

    def _launch(self) -> None:
        self._kinds.clear()
        self._shot_box = None
        sess = self._ensure_session()
        assert self._bus is not None
        env = sess.profile_env(f"launch{self.launches}")
        home = env["HOME"]
        env.update(default_env())
        env.update(self.spec.launch_env(home))
        self.spec.seed_home(home, random.Random(f"{self.name}:{self.seed}"))
        argv = self.spec.argv(home) + list(TOOLKIT_ARGS.get(self.toolkit, ()))
        self.log = os.path.join(home, "app.log")
        self._home = home
        try:
            self._app = sess.spawn(argv, env, cwd=home, log=self.log)
        except OSError as exc:
            raise DriverUnavailable(f"{self.name}: cannot run {argv[0]!r} ({exc.strerror or exc})") from None
        try:
            self._wait_for_window(sess)
        except BaseException:
            self._shutdown()
            raise
        # The pointer enters the window now, not at the first click: with no window manager the
        # window takes the focus then, and LibreOffice may lay out its toolbars again (the sheet moves).
        # (From a corner: Xvfb starts with the pointer at the center, and a move to where it is sends nothing.)
        self._xdotool("mousemove", "0", "0", "mousemove", str(self.width // 2), str(self.height // 2))
        time.sleep(max(self.spec.settle * 3, 0.5))
        # The first screen of a launch, whatever the settle mode, is read until two reads agree.
        self._unsettled = True

    def _wait_for_window(self, sess: Session) -> None:
        # Until the application shows a window on the accessibility bus. Its X window may come
        # first; if it is still not on the bus register_timeout seconds later, it never will be.
        assert self._app is not None and self._bus is not None
        spec = self.spec
        start = time.monotonic()
        shown: Optional[float] = None
        while True:
            if not alive(self._app):
                code = self._app.poll()
                when = "at once" if time.monotonic() - start < 2 else "while starting"
                raise DriverFault("crash" if code else "exited",
                                  f"{self.name} exited {when} (code {code}) before it showed a window"
                                  + (f": {log_tail(self.log, 200)}" if log_tail(self.log, 200) else ""))
            registered = False
            try:
                registered = bool(self._bus.call(_ROOT, _ACC, "GetChildren")[0])
                if registered and self._windows():
                    return
            except _CallError:
                pass
            now = time.monotonic()
            if not registered:
                if BRIDGE_FAILED in log_tail(self.log, 4000):
                    raise NotAccessible(f"{self.name} could not load the GTK accessibility bridge: "
                                        f"{REGISTER_HINTS['gtk2']}")
                if shown is None and sess.top_windows():
                    shown = now
                if shown is not None and now - shown > spec.register_timeout:
                    raise NotAccessible(f"{self.name} showed a window but never appeared on the accessibility bus "
                                        f"within {spec.register_timeout:g} s ({LABELS[self.toolkit]}): "
                                        f"{REGISTER_HINTS[self.toolkit]}")
            if now - start > spec.launch_timeout:
                raise DriverFault("hang", f"{self.name} showed no window within {spec.launch_timeout:g} s")
            time.sleep(0.1)

    def _shutdown(self) -> None:
        if self._app is not None and self._session is not None:
            self._session.forget(self._app)
            self._app = None
            # Let the registry drop the dead application before the next launch looks for windows.
            time.sleep(0.1)

    def close(self) -> None:
        """Stop the application, the AT-SPI bus, D-Bus and Xvfb (idempotent)."""
        super().close()
        self._drop_session()

    def recover(self) -> Screen:
        """Kill and relaunch (the whole session if it died), then replay the start."""
        if self._session is not None and not self._session.alive():
            self._drop_session()
        return super().recover()

    # -- reading -----------------------------------------------------------------------

    def _windows(self) -> List[Tuple[Ref, str, List[int]]]:
        assert self._bus is not None
        bus = self._bus
        apps = [(str(a[0]), str(a[1])) for a in bus.call(_ROOT, _ACC, "GetChildren")[0]]
        wins: List[Ref] = []
        for kids in bus.call_many([(a, _ACC, "GetChildren", "", ()) for a in apps], timeout=min(self.timeout, 3.0),
                                  hang_ok=True):
            if not isinstance(kids, _CallError):  # else an application leaving the bus
                wins += [(str(w[0]), str(w[1])) for w in kids[0]]
        states = bus.call_many([(w, _ACC, "GetState", "", ()) for w in wins])
        showing = [(w, list(st[0])) for w, st in zip(wins, states)
                   if not isinstance(st, _CallError) and _bit(st[0], ST_SHOWING)]
        roles = bus.call_many([(w, _ACC, "GetRoleName", "", ()) for w, _ in showing])
        return [(w, str(r[0]), st) for (w, st), r in zip(showing, roles) if not isinstance(r, _CallError)]

    def screen(self) -> Screen:
        """Read the current screen from the accessibility tree.

        Right after a launch, and after an action with ``settle="stable"``, the screen
        is read again until two reads in a row agree (boxes, roles, texts and flags),
        within :attr:`settle_timeout` seconds; the last read is returned.
        """
        if self._bus is None or self._app is None:
            raise InvalidInputError(f"the {self.name} driver has not been started: call reset() first")
        scr = self._read_screen()
        if self._unsettled:
            self._unsettled = False
            end = time.monotonic() + self.settle_timeout
            while time.monotonic() < end:
                time.sleep(STABLE_POLL)
                nxt = self._read_screen()
                if _same(nxt, scr):
                    return nxt
                scr = nxt
        return scr

    def _read_screen(self) -> Screen:
        assert self._app is not None
        t0 = time.perf_counter()
        try:
            wins = self._windows()
            if not wins:
                code = self._app.poll()
                if not alive(self._app):
                    raise DriverFault("crash" if code not in (0, None) else "exited",
                                      f"{self.name} is gone (code {code})")
                raise DriverFault("exited", f"{self.name} shows no window")
            modal = [w for w in wins if w[1] in ("dialog", "alert", "file chooser") or _bit(w[2], ST_MODAL)]
            if modal:
                wins = modal[-1:]
            self._xy.clear()
            elements = self._read([ref for ref, _, _ in wins])
            # The title: the name of the modal window, else of the first frame (menus are windows too).
            top = next((w for w in wins if w[1] in ("frame", "dialog", "alert", "file chooser")), wins[0])
            key = f"{top[0][0]}|{top[0][1]}"
            title = next((e.text for e in elements if e.id == key), None)
            # (With a modal window up only it was read: the screenshot asks for every window's box.)
            keys = {f"{r[0]}|{r[1]}" for r, _, _ in wins} if not modal else set()
            boxes = [e.bounds for e in elements if e.id in keys]
            self._shot_box = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
                              max(b[3] for b in boxes)) if boxes else None
            return Screen(elements, self.width, self.height,
                          ScreenMeta(display_mode="desktop", text_size="100%", app=self.name),
                          source=f"atspi:{self.name}", title=title)
        finally:
            self.read_seconds += time.perf_counter() - t0

    def _read(self, roots: Sequence[Ref]) -> List[Element]:
        """The elements of the SHOWING parts of the trees under ``roots``, depth first.

        The trees are read level by level with the calls of a level batched
        (:meth:`_Bus.call_many`): the states of a level, then the role, interfaces,
        extents, name and children of its SHOWING objects (not the children of one
        that manages its descendants: a sheet has millions), and the texts of the
        level above go with the next level's states. At most :attr:`max_nodes`
        objects are asked for their state (the first ones level by level), 40
        levels deep at most.
        """
        assert self._bus is not None
        bus = self._bus
        kids: Dict[Ref, List[Ref]] = {}
        found: Dict[Ref, Tuple[Element, Sequence[str]]] = {}
        tables: Dict[Ref, Tuple[float, float, float, float]] = {}
        budget = self.max_nodes
        level = list(roots)[:budget]
        texts: List[Tuple[Ref, Element]] = []
        for depth in range(42):
            if not level and not texts:
                break
            budget -= len(level)
            res = bus.call_many([(r, _ACC, "GetState", "", ()) for r in level]
                                + [c for r, _ in texts for c in _text_calls(r)])
            for (r, e), t in zip(texts, self._texts([r for r, _ in texts], res[len(level):])):
                content = self._stable((t or "").strip(), e.role)
                if content:
                    found[r] = (dataclasses.replace(e, text=content), found[r][1])
            texts = []
            showing = [(r, st[0]) for r, st in zip(level, res) if not isinstance(st, _CallError)
                       and _bit(st[0], ST_SHOWING)]
            # An object's role and interfaces do not change: they are asked for once per launch.
            new = [r for r, _ in showing if r not in self._kinds]
            per = [(r, _ACC, "GetRoleName", "", ()) for r in new] + [(r, _ACC, "GetInterfaces", "", ()) for r in new] \
                + [(r, _COMP, "GetExtents", "u", (0,)) for r, _ in showing] \
                + [(r, _PROPS, "Get", "ss", (_ACC, "Name")) for r, _ in showing] \
                + [(r, _ACC, "GetChildren", "", ()) for r, st in showing if not _bit(st, ST_MANAGES_DESCENDANTS)]
            res = bus.call_many(per)
            m, n = len(new), len(showing)
            for k, r in enumerate(new):
                if not isinstance(res[k], _CallError) and not isinstance(res[m + k], _CallError):
                    self._kinds[r] = (str(res[k][0]), tuple(res[m + k][0]))
            res = res[2 * m:]
            nxt: List[Ref] = []
            leaves = iter(res[2 * n:])
            for k, (r, st) in enumerate(showing):
                ext, name = res[k], res[n + k]
                children = next(leaves) if not _bit(st, ST_MANAGES_DESCENDANTS) else None
                if r not in self._kinds:
                    continue  # vanished while being read
                role, ifaces = self._kinds[r]
                el = None
                if _COMP in ifaces and not isinstance(ext, _CallError):
                    el = self._element(r, role, st, ifaces, ext[0], "" if isinstance(name, _CallError) else name[0][1])
                if el is not None:
                    found[r] = (el, ifaces)
                    if role in TEXT_ROLES and _TEXT in ifaces:
                        texts.append((r, el))
                if _bit(st, ST_MANAGES_DESCENDANTS):
                    if _TABLE in ifaces and not isinstance(ext, _CallError):
                        tx, ty, tw, th = (float(v) for v in ext[0])
                        tables[r] = (tx, ty, tw, th)
                elif children is not None and not isinstance(children, _CallError):
                    kids[r] = [(str(c[0]), str(c[1])) for c in children[0]]
                    nxt += kids[r]
            level = nxt[:max(budget, 0)] if depth < 40 else []
        out: List[Element] = []
        stack = list(reversed(roots))
        while stack:
            r = stack.pop()
            if r in found:
                e, found_ifaces = found[r]
                out.append(e)
                key = f"{r[0]}|{r[1]}"
                self._xy[key] = ((e.bounds[0] + e.bounds[2]) / 2, (e.bounds[1] + e.bounds[3]) / 2)
                self._ifaces[key] = tuple(found_ifaces)
            if r in tables:
                out += self._table(r, tables[r], budget)
                budget -= self.max_rows * self.max_cols
            stack += reversed(kids.get(r, ()))
        return out

    def _element(self, ref: Ref, role: str, st: Sequence[int], ifaces: Sequence[str],
                 extents: Sequence[int], name: Any) -> Optional[Element]:
        x, y, w, h = extents
        x0, y0 = max(float(x), 0.0), max(float(y), 0.0)
        x1, y1 = min(float(x + w), float(self.width)), min(float(y + h), float(self.height))
        if w <= 0 or h <= 0 or x1 <= x0 or y1 <= y0:
            return None
        text = self._stable(str(name or "").strip(), role)
        sensitive = _bit(st, ST_SENSITIVE) or _bit(st, ST_ENABLED)
        editable = _bit(st, ST_EDITABLE) and sensitive
        clickable = sensitive and role not in NO_CLICK_ROLES and (_ACTION in ifaces or role in CLICK_ROLES)
        return Element((x0, y0, x1, y1), role, text or None, editable, clickable, f"{ref[0]}|{ref[1]}",
                       state_names(st))

    def _stable(self, text: str, role: str = "") -> str:
        # Each launch has its own temporary HOME: show it as "~" so that screens match across launches;
        # then the spec's volatile rules.
        if self._home in text:
            text = text.replace(self._home, "~")
        return apply_volatile(self._volatile, text, role) or ""

    def _table(self, ref: Ref, box: Tuple[float, float, float, float], budget: int) -> List[Element]:
        # A sheet with millions of cells: read the visible range only, from the cell under
        # the table's top-left corner, in four batches: that cell's row and column, the
        # first row's and column's cells (their extents say how many columns and rows
        # show), then the other visible cells, then the extents and texts of all.
        assert self._bus is not None
        bus = self._bus
        tx, ty, tw, th = box
        r0 = c0 = 0
        try:
            first = bus.call(ref, _COMP, "GetAccessibleAtPoint", "iiu", (int(tx) + 2, int(ty) + 2, 0))[0]
            idx = int(bus.call((str(first[0]), str(first[1])), _ACC, "GetIndexInParent")[0])
            at = bus.call_many([(ref, _TABLE, "GetRowAtIndex", "i", (idx,)),
                                (ref, _TABLE, "GetColumnAtIndex", "i", (idx,))])
            if not any(isinstance(v, _CallError) for v in at):
                r0, c0 = max(int(at[0][0]), 0), max(int(at[1][0]), 0)
        except (_CallError, TypeError, ValueError):
            pass
        rows, cols = max(min(self.max_rows, budget), 0), self.max_cols
        edge = [(r0, c) for c in range(c0, c0 + cols)] + [(r, c0) for r in range(r0 + 1, r0 + rows)]
        cells = self._cells(ref, edge)
        ext = dict(zip(cells, bus.call_many([(cells[rc], _COMP, "GetExtents", "u", (0,)) for rc in cells])))
        ncols = next((k for k, c in enumerate(range(c0, c0 + cols)) if not _before(ext.get((r0, c)), 0, tx + tw)),
                     cols)
        nrows = next((k for k, r in enumerate(range(r0, r0 + rows)) if not _before(ext.get((r, c0)), 1, ty + th)),
                     rows)
        grid = [(r, c) for r in range(r0, r0 + nrows) for c in range(c0, c0 + ncols)]
        cells.update(self._cells(ref, [rc for rc in grid if rc not in cells]))
        grid = [rc for rc in grid if rc in cells][:max(budget, 0)]
        res = bus.call_many([(cells[rc], _COMP, "GetExtents", "u", (0,)) for rc in grid]
                            + [c for rc in grid for c in _text_calls(cells[rc])])
        texts = self._texts([cells[rc] for rc in grid], res[len(grid):])
        names = self._cell_names([cells[rc] for rc, t in zip(grid, texts) if t is None])
        out = []
        for k, rc in enumerate(grid):
            e, t = res[k], texts[k]
            if isinstance(e, _CallError):
                continue
            if cells[rc] in names:
                t = names[cells[rc]]
            x, y, w, h = e[0]
            x0, y0 = max(float(x), tx), max(float(y), ty)
            x1, y1 = min(float(x + w), tx + tw), min(float(y + h), ty + th)
            if x1 <= x0 or y1 <= y0:
                continue
            text = self._stable((t or "").strip(), "table cell")
            key = f"{cells[rc][0]}|{cells[rc][1]}"
            self._xy[key] = ((x0 + x1) / 2, (y0 + y1) / 2)
            # Cells are not asked for states or interfaces: they are all showing, editable and clickable.
            out.append(Element((x0, y0, x1, y1), "table cell", text or None, True, True, key))
        return out

    def _cell_names(self, refs: Sequence[Ref]) -> Dict[Ref, str]:
        # A cell with no Text interface (a tree view's row, whose icon and text are cells
        # of their own) takes its name, else the texts of its children.
        assert self._bus is not None
        bus = self._bus
        res = bus.call_many([(r, _PROPS, "Get", "ss", (_ACC, "Name")) for r in refs]
                            + [(r, _ACC, "GetChildren", "", ()) for r in refs])
        out = {r: "" if isinstance(n, _CallError) else str(n[0][1] or "") for r, n in zip(refs, res)}
        kids = [(r, (str(c[0]), str(c[1]))) for r, ch in zip(refs, res[len(refs):])
                if not out[r].strip() and not isinstance(ch, _CallError) for c in ch[0]]
        texts = self._texts([c for _, c in kids], bus.call_many([c for _, k in kids for c in _text_calls(k)]))
        for (r, _), t in zip(kids, texts):
            if t and t.strip():
                out[r] = f"{out[r]} {t.strip()}".strip()
        return out

    def _texts(self, refs: Sequence[Ref], replies: Sequence[Any]) -> List[Optional[str]]:
        # The texts of ``refs`` from the replies to their :func:`_text_calls` (None: no Text
        # interface). LibreOffice answers an empty string when the range passes the end of
        # the text: those are asked again up to their length.
        assert self._bus is not None
        out: List[Optional[str]] = []
        again = []
        for k, r in enumerate(refs):
            t, n = replies[2 * k], replies[2 * k + 1]
            if isinstance(t, _CallError):
                out.append(None)
                continue
            out.append(str(t[0]))
            count = 0 if isinstance(n, _CallError) else int(n[0][1])
            if not out[-1] and 0 < count < TEXT_CHARS:
                again.append((k, r, count))
        replies = self._bus.call_many([(r, _TEXT, "GetText", "ii", (0, n)) for _, r, n in again])
        for (k, _, _), t in zip(again, replies):
            if not isinstance(t, _CallError):
                out[k] = str(t[0])
        return out

    def _cells(self, table: Ref, where: Sequence[Tuple[int, int]]) -> Dict[Tuple[int, int], Ref]:
        assert self._bus is not None
        res = self._bus.call_many([(table, _TABLE, "GetAccessibleAt", "ii", rc) for rc in where])
        return {rc: (str(c[0][0]), str(c[0][1])) for rc, c in zip(where, res) if not isinstance(c, _CallError)}

    # -- acting ------------------------------------------------------------------------

    def _xdotool(self, *args: str) -> None:
        assert self._session is not None
        try:
            subprocess.run(["xdotool", *args], env=self._session.env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            raise DriverFault("timeout", f"xdotool {' '.join(args)} took over {self.timeout:.0f} s") from None

    def _act(self, action: Action) -> None:
        if self._bus is None or self._app is None:
            raise InvalidInputError(f"the {self.name} driver has not been started: call reset() first")
        bus = self._bus
        self._shot_box = None
        try:
            if action.op == "key":
                self._xdotool("key", "--clearmodifiers", KEYSYMS.get(action.value or "", action.value or ""))
            else:
                t = action.target
                assert t is not None
                key = t.id or ""
                if "|" not in key:
                    raise InvalidInputError("the action's target is not an element of an AT-SPI screen")
                ref = (key.split("|", 1)[0], key.split("|", 1)[1])
                # Ask the object itself first: a vanished object answers with an error.
                ifaces = tuple(bus.call(ref, _ACC, "GetInterfaces")[0])
                cx, cy = (t.bounds[0] + t.bounds[2]) / 2, (t.bounds[1] + t.bounds[3]) / 2
                if action.op == "click":
                    if _ACTION in ifaces and int(bus.prop(ref, _ACTION, "NActions") or 0) > 0:
                        if bus.call(ref, _ACTION, "DoAction", "i", (0,), timeout=DO_ACTION_WAIT, hang_ok=True) is None:
                            # No reply yet: Qt runs a modal dialog inside DoAction and answers once it
                            # closes. The application still answers other calls meanwhile (else: a hang).
                            bus.call(ref, _ACC, "GetState")
                    else:
                        self._xdotool("mousemove", f"{cx:.0f}", f"{cy:.0f}", "click", "1")
                else:
                    if _COMP in ifaces:
                        bus.call(ref, _COMP, "GrabFocus")
                    if "table cell" in t.role.lower():
                        self._xdotool("mousemove", f"{cx:.0f}", f"{cy:.0f}", "click", "1")
                    self._xdotool("type", "--delay", "5", action.value or "")
        except _CallError:
            self.faults["vanished"] += 1
        except DriverFault as f:
            if f.kind == "hang" and not alive(self._app):
                code = self._app.poll()
                raise DriverFault("crash" if code not in (0, None) else "exited", f"{self.name} died") from None
            raise
        if self.settle == "stable":
            # A first wait so that the application has taken the input before the reads compare.
            time.sleep(STABLE_FIRST)
            self._unsettled = True
        else:
            time.sleep(self.spec.settle)
        if not alive(self._app):
            code = self._app.poll()
            raise DriverFault("crash" if code not in (0, None) else "exited", f"{self.name} exited (code {code})")

    def inject_fault(self, kind: str) -> None:
        """Make the application misbehave (for tests): ``"crash"`` kills it, ``"hang"`` stops it.

        Examples
        --------
        >>> with AtspiDriver("mousepad") as d:  # doctest: +SKIP
        ...     _ = d.reset(); d.inject_fault("crash")
        """
        import signal

        if self._app is None:
            raise InvalidInputError("nothing to inject a fault into: call reset() first")
        sig = {"crash": signal.SIGKILL, "hang": signal.SIGSTOP}.get(kind)
        if sig is None:
            raise InvalidInputError(f"fault kind must be 'crash' or 'hang', got {kind!r}")
        os.killpg(self._app.pid, sig)
        if kind == "crash":
            self._app.wait(timeout=5)

    def screenshot(self) -> Any:
        """The driver's display as a ``PIL.Image.Image`` (RGB), cut to the application's windows.

        The box is the union of the application's showing top-level windows (menus
        and dialogs are windows of their own), clipped to the display; the image's
        ``info`` holds its screen origin and the screen size (see
        :meth:`Driver.screenshot <spatialobs.screen.drivers.Driver.screenshot>`).
        Copied from the private Xvfb display's memory-mapped screen (``-fbdir``), or grabbed
        through Pillow's XCB support where that cannot be read (the same pixels).

        Raises
        ------
        DriverUnavailable
            Pillow is missing or was built without XCB support.
        DriverFault
            The display or the application is gone.
        """
        from spatialobs.screen.drivers.base import ORIGIN_KEY, SCREEN_SIZE_KEY

        if self._bus is None or self._app is None or self._session is None:
            raise InvalidInputError(f"the {self.name} driver has not been started: call reset() first")
        try:
            from PIL import ImageGrab
        except ImportError:
            raise DriverUnavailable("screenshots need Pillow (pip install spatialobs[ocr])") from None
        box: Optional[List[float]] = list(self._shot_box) if self._shot_box is not None else None
        try:
            # The windows' box as the last read found it, when nothing acted since (the evidence's case).
            for ref, _, _ in self._windows() if box is None else ():
                x, y, w, h = self._bus.call(ref, _COMP, "GetExtents", "u", (0,))[0]
                if w > 0 and h > 0:
                    b = [float(x), float(y), float(x + w), float(y + h)]
                    box = b if box is None else [min(box[0], b[0]), min(box[1], b[1]),
                                                 max(box[2], b[2]), max(box[3], b[3])]
        except _CallError:
            box = None  # a window vanished while being measured: keep the whole display
        x0, y0, x1, y1 = 0, 0, self.width, self.height
        if box is not None:
            bx0, by0 = max(int(box[0]), 0), max(int(box[1]), 0)
            bx1, by1 = min(int(round(box[2])), self.width), min(int(round(box[3])), self.height)
            if bx1 > bx0 and by1 > by0:
                x0, y0, x1, y1 = bx0, by0, bx1, by1
        fb = self._session.framebuffer() if self._session.alive() else None
        if fb is not None:
            # the box copied from Xvfb's memory-mapped screen (the pixels XCB's GetImage returns)
            from PIL import Image

            pixels, order = fb
            cut = pixels[y0:y1, x0:x1, 2::-1] if order == 0 else pixels[y0:y1, x0:x1, 1:]
            img = Image.frombytes("RGB", (x1 - x0, y1 - y0), cut.tobytes())
        else:
            try:
                img = ImageGrab.grab(xdisplay=self._session.display)
            except OSError as exc:
                if "XCB" in str(exc):
                    raise DriverUnavailable(f"screenshots need Pillow with XCB support ({exc})") from None
                raise DriverFault("crash", f"could not grab display {self._session.display}: {exc}") from None
            if img.mode != "RGB":
                img = img.convert("RGB")
            if (x0, y0, x1, y1) != (0, 0, img.width, img.height):
                img = img.crop((x0, y0, min(x1, img.width), min(y1, img.height)))
        img.info[ORIGIN_KEY] = (x0, y0)
        img.info[SCREEN_SIZE_KEY] = (self.width, self.height)
        return img


def _same(a: Screen, b: Screen) -> bool:
    # Two reads agree: the same elements in the same order, ids aside (LibreOffice makes a new
    # object for a cell at every lookup).
    return len(a.elements) == len(b.elements) and all(
        (x.bounds, x.role, x.text, x.editable, x.clickable) == (y.bounds, y.role, y.text, y.editable, y.clickable)
        for x, y in zip(a.elements, b.elements))


def _text_calls(ref: Ref) -> List[Call]:
    # The first TEXT_CHARS characters and the length of an object's text.
    return [(ref, _TEXT, "GetText", "ii", (0, TEXT_CHARS)), (ref, _PROPS, "Get", "ss", (_TEXT, "CharacterCount"))]


def _before(ext: Any, axis: int, limit: float) -> bool:
    # Whether a cell's extents reply starts before ``limit`` along ``axis`` (0: x, 1: y).
    return ext is not None and not isinstance(ext, _CallError) and float(ext[0][axis]) < limit
