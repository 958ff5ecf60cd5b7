"""The driver interface that simulated and real applications implement (DESIGN §8).

A :class:`Driver` owns one running application and offers what the exploration
loop needs:

* :meth:`Driver.reset` — a clean launch (or the initial screen), then the replay
  of a start's action prefix; returns the screen;
* :meth:`Driver.screen` — the current screen, read now;
* :meth:`Driver.actions` — the executable actions of a screen (their signatures
  come from :func:`~spatialobs.screen.actions.signature`);
* :meth:`Driver.step` — act, bounded by :attr:`Driver.timeout` seconds, and return
  the next screen;
* :meth:`Driver.recover` — back to a usable screen after a capture or a fault;
* :meth:`Driver.screenshot` — a picture of the current screen (real drivers; see
  :func:`spatialobs.screen.ocr.ocr_screen` to turn it into a screen), and
  :meth:`Driver.screenshot_png`, the same as PNG bytes;
* :meth:`Driver.close` — stop every process the driver started (also on error and
  on Ctrl+C when used as a context manager).

A step that cannot complete raises :class:`DriverFault` (the application crashed,
hung, exited, or the action timed out); :func:`~spatialobs.screen.explore` records
it as a failed transition and calls :meth:`Driver.recover`. Every fault, recovered
or not, is counted in :attr:`Driver.faults`.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

from spatialobs._errors import InvalidInputError, SpatialObsError
from spatialobs.screen.actions import Action, signature
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = ["Driver", "DriverFault", "DriverUnavailable", "ReplayStart", "FAULT_KINDS", "fault_screen",
           "EXIT_WORDS", "ScreenshotUnsupported", "ORIGIN_KEY", "SCREEN_SIZE_KEY"]

#: ``image.info`` key of a screenshot: where its top-left pixel lies on the screen, ``(x, y)``.
ORIGIN_KEY = "spatialobs.origin"
#: ``image.info`` key of a screenshot: the size of the screen it was cut from, ``(width, height)``.
SCREEN_SIZE_KEY = "spatialobs.screen_size"

#: The kinds of :class:`DriverFault`.
FAULT_KINDS = ("crash", "hang", "exited", "timeout", "vanished", "error")

#: Labels of actions that would end the application; replay prefixes avoid them.
EXIT_WORDS = ("quit", "exit", "close window", "close all", "close", "log out")


class DriverFault(SpatialObsError):
    """An action or a read the application could not complete.

    Parameters
    ----------
    kind : str
        One of :data:`FAULT_KINDS`.
    message : str

    Examples
    --------
    >>> DriverFault("hang", "no reply within 5 s").kind
    'hang'
    """

    def __init__(self, kind: str, message: str = "") -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind if kind in FAULT_KINDS else "error"


class DriverUnavailable(SpatialObsError):
    """The system packages or Python packages a driver needs are missing (the message says which)."""


class ScreenshotUnsupported(SpatialObsError):
    """The driver has no picture of its screen (the simulators draw none)."""


@dataclass(frozen=True)
class ReplayStart:
    """A replayable start of a real application: ``depth`` seeded actions from a clean launch.

    Action ``k`` of the prefix is drawn with ``random.Random(f"{seed}:{index}:{k}")``
    from the current screen's actions sorted by signature (those whose label holds
    one of :data:`EXIT_WORDS` left out), so the same clean launch replays the same
    prefix.

    Examples
    --------
    >>> ReplayStart(3, 3).depth
    3
    """

    index: int
    depth: int = 0
    seed: int = 0


def fault_screen(app: str, fault: DriverFault) -> Screen:
    """The screen a failed transition is recorded with: its ``meta.app`` is ``"fault:<kind>"``.

    The graph logs a screen of another application as a capture, so the failed
    step is kept (a try with reward 0 for the selector) without becoming a state.

    Examples
    --------
    >>> fault_screen("mousepad", DriverFault("crash", "exit code -11")).meta.app
    'fault:crash'
    """
    text = f"{app} {fault}"[:200]
    return Screen([Element((0, 0, 1, 1), "fault", text)], 1, 1, ScreenMeta(app=f"fault:{fault.kind}"),
                  source=f"fault:{app}")


class Driver:
    """Base of every driver (see the module docstring).

    Subclasses implement :meth:`_launch` (a clean start, returning nothing),
    :meth:`screen`, :meth:`_act` and :meth:`_shutdown`; they may override
    :meth:`actions`. The base class replays starts, retries a failed launch once,
    counts faults and makes the driver a context manager.

    Examples
    --------
    >>> from spatialobs.screen.drivers import make_driver
    >>> with make_driver("notepad") as d:
    ...     scr = d.reset()
    ...     nxt = d.step(d.actions(scr)[0])
    >>> d.faults["crash"]
    0
    """

    name = "driver"
    goal = ""
    #: Key chords offered on every screen.
    keys: Sequence[str] = ("escape",)
    #: Values typed into editable elements (a fixed token set).
    values: Sequence[str] = ("text",)

    def __init__(self, *, timeout: float = 10.0, seed: int = 0) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise InvalidInputError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = float(timeout)
        self.seed = seed
        self.faults: Counter = Counter()
        self.launches = 0
        self._start: Any = None
        self._closed = False

    @property
    def app(self) -> str:
        return self.name

    # -- to implement ---------------------------------------------------------------

    def _launch(self) -> None:
        raise NotImplementedError

    def screen(self) -> Screen:
        """The current screen, read now."""
        raise NotImplementedError

    def _act(self, action: Action) -> None:
        raise NotImplementedError

    def _shutdown(self) -> None:
        """Stop the application and everything started for it; must be idempotent."""

    def screenshot(self) -> Any:
        """A picture of the current screen, as a ``PIL.Image.Image`` in RGB.

        The picture may be cut to the application's windows: ``image.info`` then holds
        :data:`ORIGIN_KEY` (the screen position of its top-left pixel) and
        :data:`SCREEN_SIZE_KEY` (the screen's size), which
        :func:`~spatialobs.screen.ocr.ocr_screen` uses to put what it reads back in
        screen coordinates.

        Raises
        ------
        ScreenshotUnsupported
            The driver draws no picture (the base class and the simulators).
        """
        raise ScreenshotUnsupported(f"the {self.name} driver has no screenshots (real drivers only)")

    def screenshot_png(self) -> bytes:
        """The picture of :meth:`screenshot` as PNG bytes (what the evidence store keeps).

        The base class encodes :meth:`screenshot` with Pillow at zlib level 1 (a fast
        encoding: a GUI screenshot is mostly flat color); a driver that gets PNG bytes
        from its backend returns them as they are.

        Raises
        ------
        ScreenshotUnsupported
            The driver draws no picture.
        """
        import io

        img = self.screenshot()
        buf = io.BytesIO()
        img.save(buf, format="PNG", compress_level=1)
        return buf.getvalue()

    # -- the interface ------------------------------------------------------------------

    def actions(self, screen: Optional[Screen] = None) -> List[Action]:
        """Clicks on clickable elements, :attr:`values` typed into editable ones, then :attr:`keys`."""
        scr = screen if screen is not None else self.screen()
        out: List[Action] = []
        for i, e in enumerate(scr.elements):
            if e.clickable:
                out.append(Action("click", e, None, i))
            if e.editable:
                out.extend(Action("type", e, v, i) for v in self.values)
        out.extend(Action("key", None, k) for k in self.keys)
        return out

    def starts(self, n: int = 50, max_depth: int = 4) -> List[Any]:
        """``n`` replayable starts; start ``i`` replays ``i % (max_depth + 1)`` seeded actions."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidInputError(f"n must be a positive integer, got {n!r}")
        return [ReplayStart(i, i % (max_depth + 1), self.seed) for i in range(n)]

    def reset(self, start: Any = None) -> Screen:
        """A clean launch, then the replay of ``start`` (a :class:`ReplayStart`, an index, or None).

        A launch that fails is retried (three launches at most); a prefix action that
        breaks the application shortens the prefix to the actions before it.
        """
        if self._closed:
            raise InvalidInputError(f"the {self.name} driver is closed")
        if isinstance(start, int) and not isinstance(start, bool):
            start = ReplayStart(start, start % 5, self.seed)
        if start is not None and not isinstance(start, ReplayStart):
            raise InvalidInputError(f"start must be a ReplayStart, an int or None, got {type(start).__name__}")
        self._start = start
        depth = start.depth if start is not None else 0
        for attempt in range(3):
            try:
                self._shutdown()
                self._launch()
                self.launches += 1
                return self._replay(start, depth, self.screen()) if start is not None else self.screen()
            except _ReplayFault as rf:
                # The prefix itself breaks the application: keep the part before the breaking action.
                self.faults[rf.fault.kind] += 1
                depth = rf.done
                if attempt == 2:
                    raise rf.fault from None
            except DriverFault as f:
                self.faults[f.kind] += 1
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def step(self, action: Action) -> Screen:
        """Apply ``action`` and return the next screen; raises :class:`DriverFault` when it cannot."""
        if not isinstance(action, Action):
            raise InvalidInputError(f"step expects an Action, got {type(action).__name__}")
        try:
            self._act(action)
            return self.screen()
        except DriverFault as f:
            self.faults[f.kind] += 1
            raise

    def recover(self) -> Screen:
        """Back to a usable screen after a capture or a fault: a clean relaunch and the start's replay."""
        self.faults["recoveries"] += 1
        return self.reset(self._start)

    def close(self) -> None:
        """Stop every process the driver started (idempotent)."""
        if not self._closed:
            self._closed = True
            self._shutdown()

    def __enter__(self) -> "Driver":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # -- replay ------------------------------------------------------------------------

    def _replay(self, start: ReplayStart, depth: int, scr: Screen) -> Screen:
        for k in range(depth):
            acts = [a for a in self.actions(scr) if not _exits(a)]
            if not acts:
                break
            acts.sort(key=lambda a: signature(a, scr))
            a = acts[random.Random(f"{start.seed}:{start.index}:{k}").randrange(len(acts))]
            try:
                self._act(a)
                scr = self.screen()
            except DriverFault as f:
                raise _ReplayFault(f, k) from None
        return scr


class _ReplayFault(Exception):
    def __init__(self, fault: DriverFault, done: int) -> None:
        super().__init__(str(fault))
        self.fault, self.done = fault, done


def _exits(a: Action) -> bool:
    label = a.label
    return any(w in label for w in EXIT_WORDS)

