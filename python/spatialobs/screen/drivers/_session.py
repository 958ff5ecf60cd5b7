"""A private X display, D-Bus session and AT-SPI bus, and the processes started in them.

Every process is started in its own process group with a parent-death signal, so
that closing the session (or the death of this process) leaves nothing behind.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:
    import numpy as np

from spatialobs.screen.drivers.base import DriverFault, DriverUnavailable

__all__ = ["Session", "missing_programs", "kill_group", "log_tail", "reap_orphans"]

BUS_LAUNCHER = ("/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher",
                "/usr/lib/at-spi2/at-spi-bus-launcher")

_LIVE: "weakref.WeakSet[Session]" = weakref.WeakSet()


def _close_all() -> None:
    for s in list(_LIVE):
        s.close()


atexit.register(_close_all)


def _on_sigterm(signum: int, frame: object) -> None:
    # SIGTERM skips atexit; as SystemExit it runs the finally blocks and closes every session.
    raise SystemExit(128 + signum)


def _catch_sigterm() -> None:
    import threading

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG: the child gets SIGKILL when the thread that started it dies.
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except Exception:
        pass


def bus_launcher() -> Optional[str]:
    """The path of ``at-spi-bus-launcher``, or None.

    Examples
    --------
    >>> bus_launcher() is None or bus_launcher().endswith("at-spi-bus-launcher")
    True
    """
    for p in BUS_LAUNCHER:
        if os.access(p, os.X_OK):
            return p
    return None


def missing_programs(programs: Sequence[str]) -> List[str]:
    """The programs of ``programs`` (plus Xvfb, dbus-daemon and the AT-SPI bus launcher) not installed.

    Examples
    --------
    >>> isinstance(missing_programs(["sh"]), list)
    True
    """
    out = [p for p in ("Xvfb", "dbus-daemon", *programs) if shutil.which(p) is None]
    if bus_launcher() is None:
        out.append("at-spi-bus-launcher")
    return out


def log_tail(path: str, n: int = 300) -> str:
    """The last ``n`` bytes of a process's log file as text ("" when it cannot be read), for an error message."""
    try:
        with open(path, "rb") as f:
            return f.read()[-n:].decode(errors="replace").strip()
    except OSError:
        return ""


def kill_group(proc: "subprocess.Popen[bytes]", grace: float = 0.0) -> None:
    """Kill ``proc``'s process group (SIGTERM first when ``grace`` > 0) and reap ``proc``."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        if sig == signal.SIGTERM and grace <= 0:
            continue
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait)
            if sig == signal.SIGTERM:
                # The leader is gone; children in its group may not be.
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            return
        except subprocess.TimeoutExpired:
            continue


def alive(proc: "subprocess.Popen[bytes]") -> bool:
    """Whether ``proc`` still runs (a zombie does not)."""
    return proc.poll() is None


#: The file in a session's folder that names the process owning it: its pid and start time
#: (see :func:`reap_orphans`).
_OWNER = "owner"
_PREFIX = "spatialobs-session-"


def _start_time(pid: int) -> Optional[str]:
    """The start time of process ``pid`` (field 22 of ``/proc/PID/stat``), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()[19]  # (the name, in parentheses, may hold spaces)


def reap_orphans(root: Optional[str] = None) -> int:
    """Stop what sessions whose owner died without closing them left running, and remove their folders.

    A killed process closes nothing. Its direct children die with it (the parent-death signal),
    but the AT-SPI bus launcher's ``dbus-daemon`` is a grandchild in a session of its own and
    runs on. A session folder is an orphan when the process named in its ``owner`` file is
    gone: the processes whose command line or environment names the folder are killed and the
    folder is removed. A folder without the file (half made, or another user's) is left alone. Linux
    (``/proc``) only.

    Parameters
    ----------
    root : str, optional
        The folder holding the session folders (default: the system's temporary folder).

    Returns
    -------
    int
        The number of orphaned session folders reaped.
    """
    if not os.path.isdir("/proc"):
        return 0
    root = root or tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(root) if n.startswith(_PREFIX)]
    except OSError:
        return 0
    orphans = []
    for n in names:
        folder = os.path.join(root, n)
        try:
            with open(os.path.join(folder, _OWNER), encoding="ascii") as f:
                pid_s, started = f.read().split()
            pid = int(pid_s)
        except (OSError, ValueError):
            continue
        if _start_time(pid) != started:
            orphans.append(folder)
    if not orphans:
        return 0
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:  # (a process the launcher's bus started names the folder in its environment only)
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().decode("utf-8", "replace")
            with open(f"/proc/{entry}/environ", "rb") as f:
                cmd += f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if any(folder + os.sep in cmd for folder in orphans):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    for folder in orphans:
        shutil.rmtree(folder, ignore_errors=True)
    return len(orphans)


def _read_line(fd: int, timeout: float, what: str) -> str:
    import select

    buf = b""
    end = time.monotonic() + timeout
    while not buf.endswith(b"\n"):
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise DriverFault("hang", f"{what} did not start within {timeout:.0f} s")
        chunk = os.read(fd, 256)
        if not chunk:
            raise DriverFault("crash", f"{what} exited while starting")
        buf += chunk
    return buf.decode().strip()


class Session:
    """Xvfb + a D-Bus session + the AT-SPI bus, in a temporary folder removed on close.

    Parameters
    ----------
    width, height : int
        The virtual screen's size.
    """

    def __init__(self, width: int = 1280, height: int = 800) -> None:
        missing = missing_programs(())
        if missing:
            raise DriverUnavailable(f"missing system programs: {', '.join(missing)} (see the README's apt line)")
        self.width, self.height = width, height
        reap_orphans()  # what killed owners' sessions left behind
        self.tmp = tempfile.mkdtemp(prefix=_PREFIX)
        with open(os.path.join(self.tmp, _OWNER), "w", encoding="ascii") as f:
            f.write(f"{os.getpid()} {_start_time(os.getpid())}\n")
        self._procs: List["subprocess.Popen[bytes]"] = []
        self._closed = False
        self._fb: Optional[Tuple["np.ndarray", int]] = None
        _LIVE.add(self)
        # The AT-SPI bus launcher's own children escape the parent-death signal: a killed
        # Python would leave them behind, so a SIGTERM becomes an orderly exit.
        _catch_sigterm()
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _spawn(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None, pass_fds: Sequence[int] = (),
               cwd: Optional[str] = None, log: Optional[str] = None) -> "subprocess.Popen[bytes]":
        out = open(log, "ab") if log else subprocess.DEVNULL
        try:
            p = subprocess.Popen(list(argv), env=env, pass_fds=tuple(pass_fds), start_new_session=True, cwd=cwd,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=out, preexec_fn=_die_with_parent)
        finally:
            if log:
                out.close()  # type: ignore[union-attr]
        self._procs.append(p)
        return p

    def _start(self) -> None:
        r, w = os.pipe()
        try:
            # -noreset: Xvfb resets when its last client disconnects (the killed application of one
            # launch, an xdotool call), and a program connecting meanwhile fails ("could not connect
            # to display") or loses the root window's properties.
            # -fbdir: the screen is a memory-mapped XWD file, so a screenshot copies the windows' box
            # from memory instead of asking the server for the whole screen (4 MB at 1280 x 800)
            fb = os.path.join(self.tmp, "fb")
            os.makedirs(fb, mode=0o700)
            self._spawn(["Xvfb", "-displayfd", str(w), "-screen", "0", f"{self.width}x{self.height}x24",
                         "-nolisten", "tcp", "-noreset", "-fbdir", fb], pass_fds=[w])
            os.close(w)
            w = -1
            self.display = ":" + _read_line(r, 15, "Xvfb")
        finally:
            if w >= 0:
                os.close(w)
            os.close(r)
        run = os.path.join(self.tmp, "run")
        os.makedirs(run, mode=0o700)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "DISPLAY": self.display,
            "XDG_RUNTIME_DIR": run,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "GSETTINGS_BACKEND": "memory",
            "GIO_USE_VFS": "local",
            "GVFS_DISABLE_FUSE": "1",
        }
        # The session bus runs in the session's environment: a service it starts on demand (the
        # AT-SPI bus launcher, asked for before the one below has claimed its name) would otherwise
        # inherit this process's HOME and put its socket in ~/.cache/at-spi/bus, where every other
        # session on the machine puts its own (applications then reach another session's bus).
        r, w = os.pipe()
        try:
            self._spawn(["dbus-daemon", "--session", "--nofork", f"--print-address={w}"], pass_fds=[w],
                        env=self.profile_env("dbus"))
            os.close(w)
            w = -1
            self.bus_address = _read_line(r, 15, "dbus-daemon")
        finally:
            if w >= 0:
                os.close(w)
            os.close(r)
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.bus_address
        launcher = bus_launcher()
        assert launcher is not None
        self._spawn([launcher, "--launch-immediately"], env=self.profile_env("bus"))
        self._base_windows: List[str] = []
        self._base_windows = self.top_windows()

    def a11y_address(self, timeout: float = 15.0) -> str:
        """The AT-SPI bus's address, once the session's bus launcher owns ``org.a11y.Bus``.

        The name is polled with ``NameHasOwner``, which starts nothing: a method call to a
        name nobody owns yet would have D-Bus start a second launcher, and two launchers
        race for one socket path. Accessibility is switched on in the launcher's status
        (``org.a11y.Status.IsEnabled``), which toolkits that wait for a screen reader read.
        """
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection

        bus = DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Bus")
        daemon = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus",
                             interface="org.freedesktop.DBus")
        end = time.monotonic() + timeout
        with open_dbus_connection(self.bus_address) as c:
            while True:
                try:
                    owned = c.send_and_get_reply(new_method_call(daemon, "NameHasOwner", "s", ("org.a11y.Bus",)),
                                                 timeout=5).body[0]
                    if owned:
                        c.send_and_get_reply(new_method_call(
                            DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus",
                                        interface="org.freedesktop.DBus.Properties"),
                            "Set", "ssv", ("org.a11y.Status", "IsEnabled", ("b", True))), timeout=5)
                        rep = c.send_and_get_reply(new_method_call(bus, "GetAddress"), timeout=5)
                        if rep.body and isinstance(rep.body[0], str) and rep.body[0].startswith("unix:"):
                            return str(rep.body[0])
                except TimeoutError:
                    pass
                if time.monotonic() > end:
                    raise DriverFault("hang", f"the AT-SPI bus did not come up within {timeout:.0f} s")
                time.sleep(0.02)

    def top_windows(self) -> List[str]:
        """The ids of the display's mapped top-level windows, new since the session started.

        Applications' own windows, whether or not they are on the accessibility bus.
        """
        try:
            out = subprocess.run(["xdotool", "search", "--maxdepth", "1", "--onlyvisible", "--name", ""],
                                 env=self.env, capture_output=True, text=True, timeout=5, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            return []
        return [w for w in out.split() if w not in self._base_windows]

    def profile_env(self, name: str) -> Dict[str, str]:
        """The environment for a process with a fresh HOME and XDG folders under ``name``."""
        home = os.path.join(self.tmp, name)
        shutil.rmtree(home, ignore_errors=True)
        for sub in ("", "config", "cache", "data"):
            os.makedirs(os.path.join(home, sub), exist_ok=True)
        return {**self.env, "HOME": home, "XDG_CONFIG_HOME": os.path.join(home, "config"),
                "XDG_CACHE_HOME": os.path.join(home, "cache"), "XDG_DATA_HOME": os.path.join(home, "data")}

    def spawn(self, argv: Sequence[str], env: Dict[str, str], cwd: Optional[str] = None,
              log: Optional[str] = None) -> "subprocess.Popen[bytes]":
        """Start a process in the session (killed with it); its output goes to ``log`` when given."""
        return self._spawn(argv, env=env, cwd=cwd, log=log)

    def framebuffer(self) -> Optional[Tuple["np.ndarray", int]]:
        """The screen as Xvfb draws it: ``(pixels, byte order)``, or None where it cannot be read.

        ``pixels`` is a read-only ``(height, width, 4)`` uint8 view of the memory-mapped
        XWD file of ``-fbdir`` (32 bits a pixel, depth 24), in the file's byte order
        (0: least significant byte first, so B, G, R, unused). It follows the screen
        as the server draws: slice it and copy the slice to keep a picture.
        """
        if self._fb is not None:
            return self._fb
        import mmap

        import numpy as np

        path = os.path.join(self.tmp, "fb", "Xvfb_screen0")
        try:
            with open(path, "rb") as f:
                mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        head = np.frombuffer(mm, dtype=">u4", count=25) if len(mm) >= 100 else None
        if head is None:
            return None
        size, version, _fmt, depth, width, height = (int(v) for v in head[:6])
        order, bpp, line, ncolors = int(head[7]), int(head[11]), int(head[12]), int(head[19])
        start = size + 12 * ncolors
        if (version != 7 or depth != 24 or bpp != 32 or (width, height) != (self.width, self.height)
                or line < 4 * width or start + line * height > len(mm)):
            return None
        rows = np.ndarray((height, line), dtype=np.uint8, buffer=mm, offset=start)
        self._fb = (rows[:, :4 * width].reshape(height, width, 4), order)
        return self._fb

    def alive(self) -> bool:
        """Whether Xvfb, the D-Bus session and the bus launcher still run."""
        return all(p.poll() is None for p in self._procs[:3])

    def forget(self, proc: "subprocess.Popen[bytes]") -> None:
        """Kill ``proc``'s group now and stop tracking it."""
        kill_group(proc, grace=0.0)
        if proc in self._procs:
            self._procs.remove(proc)

    def close(self) -> None:
        """Kill every process group started (newest first) and remove the folder."""
        if self._closed:
            return
        self._closed = True
        self._fb = None
        for p in reversed(self._procs):
            # SIGTERM first: a killed Xvfb would leave its lock and socket behind for the next display.
            kill_group(p, grace=2.0)
        self._procs.clear()
        shutil.rmtree(self.tmp, ignore_errors=True)
        _LIVE.discard(self)
