"""Simulated GUI applications: deterministic finite-state screens to explore (DESIGN §8).

:func:`make_app` builds one of three desktop applications, each a state machine
that renders its state as a :class:`~spatialobs.screen.Screen` of realistic UI
elements (title bar, menu bar, drop-down menus, dialogs, lists, grid cells, with
bounds, roles, texts and editable/clickable flags) and applies
:class:`~spatialobs.screen.actions.Action` objects:

* ``"notepad"``: a text editor with File / Edit / Format / View / Help menus, the
  Save As, Open, Find, Replace, Go To, Font, Page Setup, Print and About dialogs, an
  unsaved-changes prompt, undo, and a clipboard that is **hidden state** (its
  content shows only once pasted);
* ``"explorer"``: a file browser over a folder tree four levels deep, with back /
  forward / up, an address bar and a search box, New / Sort / View menus and four
  view modes (back and forward depend on the hidden history);
* ``"calc"``: a spreadsheet with a 6 × 10 grid, name box and formula bar, sheet
  tabs, menus, Format Cells and Insert Function dialogs, and formulas that
  recalculate.

Options (keyword arguments of :func:`make_app`):

* ``variant``: hidden state, e.g. ``{"clipboard": "alpha"}`` (every app has a
  clipboard; explorer also takes ``{"show_hidden": True}``);
* ``timing_noise``: probability that an asynchronous update (notepad's title after
  Save, explorer's folder listing, calc's recalculation) lands *after* the next
  observation (it is then visible from the one after); ``race="early"`` or
  ``"late"`` forces it.

Everything is a function of ``seed`` and the actions: the same calls give the same
screens on every platform. :meth:`SimApp.starts` draws replayable starting points
(seeded random walks of varying depth from the initial screen) that
:meth:`SimApp.reset` replays. An action leading into another application
(a help page in a browser, a file opened in another program) returns that
application's screen (``meta.app`` differs: the graph logs it as a capture);
:meth:`SimApp.recover` closes it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.drivers.base import Driver
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = ["APPS", "SimApp", "Start", "Notepad", "Explorer", "Calc", "make_app"]

W, H = 1280.0, 800.0
Box = Tuple[float, float, float, float]


class _Handler(Protocol):
    """What a click or menu pick runs: no arguments, result ignored.

    A protocol, not ``Callable[[], object]``, so that ``lambda n=name: ...`` (a loop
    variable bound as a default) is accepted and still checked.
    """

    def __call__(self) -> object: ...


@dataclass(frozen=True)
class Start:
    """A replayable starting point: ``(op, element id, value)`` steps from the initial screen."""

    index: int
    steps: Tuple[Tuple[str, str, Optional[str]], ...] = ()

    @property
    def depth(self) -> int:
        return len(self.steps)


class _UI:
    """Collects the elements of one screen and what each does."""

    def __init__(self) -> None:
        self.elements: List[Element] = []
        self.handlers: Dict[Tuple[str, str], Callable[..., object]] = {}

    def add(self, id: str, role: str, box: Box, text: Optional[str] = None, *,
            click: Optional[_Handler] = None, type: Optional[Callable[[str], object]] = None,
            enabled: bool = True) -> None:
        clickable = click is not None and enabled
        editable = type is not None and enabled
        self.elements.append(Element(box, role, text or None, editable, clickable, id))
        if clickable and click is not None:
            self.handlers[(id, "click")] = click
        if editable and type is not None:
            self.handlers[(id, "type")] = type


MenuSpec = List[Tuple[str, Optional[_Handler], bool]]  # (label, handler, enabled)


class SimApp(Driver):
    """Base of the simulated applications (see the module docstring).

    Subclasses define ``name``, ``goal``, ``_initial()`` (the state, a dict),
    ``_render(ui)`` and ``_values(element)`` (what may be typed into an element).
    """

    name = "app"
    goal = ""
    keys: Tuple[str, ...] = ("escape",)
    default_variant: Dict[str, Any] = {"clipboard": ""}

    def __init__(self, seed: int = 0, *, variant: Optional[Dict[str, Any]] = None, timing_noise: float = 0.0,
                 race: Optional[str] = None) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise InvalidInputError(f"seed must be an integer, got {seed!r}")
        if variant is not None and not isinstance(variant, dict):
            raise InvalidInputError(f"variant must be a dict, got {type(variant).__name__}")
        for k in variant or {}:
            if k not in self.default_variant:
                raise InvalidInputError(f"unknown variant key {k!r} for {self.name}; known: {sorted(self.default_variant)}")
        if isinstance(timing_noise, bool) or not isinstance(timing_noise, (int, float)) or not 0 <= timing_noise <= 1:
            raise InvalidInputError(f"timing_noise must be a probability in [0, 1], got {timing_noise!r}")
        if race not in (None, "early", "late"):
            raise InvalidInputError(f"race must be None, 'early' or 'late', got {race!r}")
        super().__init__(seed=seed)
        self.variant = {**self.default_variant, **(variant or {})}
        self.timing_noise = float(timing_noise)
        self.race = race
        self._ui = _UI()
        self.reset()

    # -- public ------------------------------------------------------------------

    @property
    def app(self) -> str:
        return self.name

    def reset(self, start: Any = None) -> Screen:
        """Back to the initial screen, then replay ``start`` (a :class:`Start`, an index into :meth:`starts`, or None)."""
        if isinstance(start, bool):
            raise InvalidInputError(f"start must be a Start, an int or None, got {start!r}")
        if isinstance(start, int):
            all_starts = self.starts()
            if not 0 <= start < len(all_starts):
                raise InvalidInputError(f"start index {start} out of range 0..{len(all_starts) - 1}")
            start = all_starts[start]
        if start is not None and not isinstance(start, Start):
            raise InvalidInputError(f"start must be a Start, an int or None, got {type(start).__name__}")
        self.s: Dict[str, Any] = self._initial()
        self.s["clipboard"] = self.variant["clipboard"]
        self._pending: List[_Handler] = []
        self._foreign: Optional[Tuple[str, str]] = None
        key = start.index if start is not None else -1
        self._rng = random.Random(f"{self.name}:{self.seed}:{key}")
        self._replaying = True
        try:
            for op, eid, value in (start.steps if start is not None else ()):
                self._render_now()
                self._apply(op, eid, value)
        finally:
            self._replaying = False
        return self._render_now()

    def screen(self) -> Screen:
        """The current screen (no side effect)."""
        return self._render_now()

    def actions(self, screen: Optional[Screen] = None) -> List[Action]:
        """Candidate actions of the current screen: clicks, typing the app's values, key presses."""
        scr = screen if screen is not None else self._render_now()
        out: List[Action] = []
        for i, e in enumerate(scr.elements):
            if e.clickable:
                out.append(Action("click", e, None, i))
            if e.editable:
                out.extend(Action("type", e, v, i) for v in self._values(e))
        out.extend(Action("key", None, k) for k in self.keys)
        return out

    def step(self, action: Action) -> Screen:
        """Apply an action to the current screen and return the next screen.

        An action whose target is not on the current screen, or that the target
        does not support, changes nothing (the same screen comes back).
        """
        if not isinstance(action, Action):
            raise InvalidInputError(f"step expects an Action, got {type(action).__name__}")
        # self._ui already renders the current state: every path that changes it
        # (reset, step, recover) ends with a render.
        landed, self._pending = self._pending, []
        for fn in landed:
            fn()
        if landed:
            self._render_now()
        if action.op == "key":
            self._apply("key", "", action.value)
        else:
            assert action.target is not None
            self._apply(action.op, action.target.id or "", action.value)
        return self._render_now()

    def act(self, element_id: str, op: str = "click", value: Optional[str] = None) -> Screen:
        """Step with the action on the current screen's element ``element_id`` (``op`` ``"key"``: ``value`` is the key).

        Examples
        --------
        >>> app = make_app("notepad")
        >>> app.act("menu.file").elements[-1].text
        'Exit'
        """
        if op == "key":
            return self.step(Action("key", None, value))
        scr = self._render_now()
        for e in scr.elements:
            if e.id == element_id:
                return self.step(Action(op, e, value))
        raise InvalidInputError(f"no element {element_id!r} on the current {self.name} screen")

    def recover(self) -> Screen:
        """Close another application this one opened and return to this one's screen."""
        self._foreign = None
        return self._render_now()

    @property
    def hidden(self) -> Dict[str, Any]:
        """A copy of the full state, hidden parts included (for studies and tests)."""
        return dict(self.s)

    def starts(self, n: int = 50, max_depth: int = 8) -> List[Start]:
        """``n`` replayable starts; start ``i`` is a seeded random walk of ``i % (max_depth + 1)`` actions.

        Walks avoid actions that leave the application. Starts depend only on the
        app, its ``seed`` and ``variant``.
        """
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidInputError(f"n must be a positive integer, got {n!r}")
        if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
            raise InvalidInputError(f"max_depth must be an integer >= 0, got {max_depth!r}")
        cache_key = (n, max_depth)
        cache = self.__dict__.setdefault("_starts_cache", {})
        if cache_key in cache:
            return cache[cache_key]
        out = []
        probe = type(self)(self.seed, variant=self.variant, race="early")
        for i in range(n):
            rng = random.Random(f"start:{self.name}:{self.seed}:{i}")
            probe.reset()
            steps: List[Tuple[str, str, Optional[str]]] = []
            depth = i % (max_depth + 1)
            tries = 0
            while len(steps) < depth and tries < 10 * depth + 10:
                tries += 1
                acts = probe.actions()
                a = acts[rng.randrange(len(acts))]
                eid = a.target.id if a.target is not None else ""
                op, val = a.op, a.value
                snapshot = probe._snapshot()
                probe._apply(op, eid or "", val)
                if probe._foreign is not None:
                    probe._restore(snapshot)
                    continue
                steps.append((op, eid or "", val))
            out.append(Start(i, tuple(steps)))
        cache[cache_key] = out
        return out

    # -- machinery ---------------------------------------------------------------

    def _snapshot(self) -> Any:
        import copy

        # The explorer's folder tree is static: share it instead of copying it.
        memo = {id(self.s["tree"]): self.s["tree"]} if "tree" in self.s else {}
        return copy.deepcopy((self.s, self._pending, self._foreign), memo)

    def _restore(self, snap: Any) -> None:
        self.s, self._pending, self._foreign = snap

    def _render_now(self) -> Screen:
        ui = _UI()
        if self._foreign is not None:
            self._render_foreign(ui, *self._foreign)
            app = self._foreign[0]
        else:
            self._popup: Optional[Tuple[str, float, float, MenuSpec]] = None
            self._render(ui)
            self._render_popup(ui)
            app = self.name
        self._ui = ui
        return Screen(ui.elements, W, H, ScreenMeta(display_mode="desktop", text_size="100%", app=app),
                      source=f"sim:{self.name}")

    def _apply(self, op: str, eid: str, value: Optional[str]) -> None:
        if op == "key":
            self._key(value or "")
            return
        h = self._ui.handlers.get((eid, op))
        if h is None:
            return
        if op == "type":
            h(value if value is not None else "")
        else:
            h()

    def _later(self, fn: _Handler) -> None:
        """Run an asynchronous update now or after the next observation (the race)."""
        if self._replaying or self.race == "early":
            fn()
        elif self.race == "late":
            self._pending.append(fn)
        elif self.timing_noise > 0 and self._rng.random() < self.timing_noise:
            self._pending.append(fn)
        else:
            fn()

    def _open_foreign(self, app: str, title: str) -> None:
        self._foreign = (app, title)

    def _render_foreign(self, ui: _UI, app: str, title: str) -> None:
        ui.add("foreign.title", "TitleBar", (0, 0, W, 32), f"{title} - {app}")
        ui.add("foreign.close", "Button", (1232, 0, W, 32), "Close", click=self.recover)
        ui.add("foreign.body", "Document", (0, 32, W, H), title)

    def _key(self, key: str) -> None:
        if key == "escape":
            if self.s.get("dialog"):
                self.s["dialog"] = None
            elif self.s.get("menu"):
                self.s["menu"] = None

    # -- helpers for subclasses --------------------------------------------------

    def _title_bar(self, ui: _UI, title: str, on_close: _Handler) -> None:
        ui.add("title", "TitleBar", (0, 0, W, 32), title)
        # Minimizing shows the desktop (another application); maximizing toggles.
        ui.add("title.min", "Button", (1136, 0, 1184, 32), "Minimize", click=lambda: self._open_foreign("desktop", "Desktop"))
        big = bool(self.s.get("maximized"))
        ui.add("title.max", "Button", (1184, 0, 1232, 32), "Restore Down" if big else "Maximize",
               click=lambda: self.s.__setitem__("maximized", not big))
        ui.add("title.close", "Button", (1232, 0, W, 32), "Close", click=on_close)

    def _menu_bar(self, ui: _UI, menus: Dict[str, MenuSpec], y: float = 32) -> None:
        ui.add("menubar", "MenuBar", (0, y, W, y + 24))
        x = 0.0
        modal = bool(self.s.get("dialog"))
        for name, items in menus.items():
            w = 14.0 + 9.0 * len(name)
            ui.add(f"menu.{name.lower()}", "MenuItem", (x, y, x + w, y + 24), name,
                   click=(lambda n=name: self._toggle_menu(n)), enabled=not modal)
            if self.s.get("menu") == name and not modal:
                self._popup = (name, x, y, items)
            x += w

    def _render_popup(self, ui: _UI) -> None:
        # Drop-down menus paint over the window, so they come last.
        if self._popup is None:
            return
        name, x, y, items = self._popup
        ui.add(f"menu.{name.lower()}.popup", "Menu", (x, y + 24, x + 280, y + 32 + 28 * len(items)), name)
        for j, (label, fn, enabled) in enumerate(items):
            yy = y + 28 + 28 * j
            ui.add(f"menu.{name.lower()}.{j}", "MenuItem", (x + 4, yy, x + 276, yy + 28), label,
                   click=(lambda fn=fn: self._menu_pick(fn)), enabled=enabled and fn is not None)

    def _toggle_menu(self, name: str) -> None:
        self.s["menu"] = None if self.s.get("menu") == name else name

    def _menu_pick(self, fn: Optional[_Handler]) -> None:
        self.s["menu"] = None
        if fn is not None:
            fn()

    def _dialog(self, ui: _UI, id: str, title: str, w: float, h: float) -> Tuple[float, float]:
        x0, y0 = (W - w) / 2, (H - h) / 2
        ui.add(f"{id}", "Dialog", (x0, y0, x0 + w, y0 + h), title)
        ui.add(f"{id}.close", "Button", (x0 + w - 40, y0, x0 + w, y0 + 30), "Close", click=self._close_dialog)
        return x0, y0

    def _close_dialog(self) -> None:
        self.s["dialog"] = None

    def _initial(self) -> Dict[str, Any]:
        raise NotImplementedError

    def _render(self, ui: _UI) -> None:
        raise NotImplementedError

    def _values(self, e: Element) -> Sequence[str]:
        return ("text",)

    def __repr__(self) -> str:
        return f"make_app({self.name!r}, seed={self.seed})"


# ----------------------------------------------------------------------------------
# Notepad


class Notepad(SimApp):
    """A Notepad-like editor (see the module docstring).

    Examples
    --------
    >>> app = Notepad(variant={"clipboard": "alpha"})
    >>> app.act("menu.edit").elements[-1].text
    'Time/Date'
    >>> doc = [e for e in app.act("menu.edit.3").elements if e.id == "doc"][0]   # Paste
    >>> doc.text
    'alpha'
    """

    name = "notepad"
    goal = "change the font and save the notes as a new file"
    default_variant = {"clipboard": ""}
    FILES = {"readme.txt": "read me first", "todo.txt": "buy milk"}
    FONTS = ("Consolas", "Arial", "Segoe UI", "Times New Roman")
    STYLES = ("Regular", "Italic", "Bold")
    SIZES = ("10", "11", "12", "14")

    def _initial(self) -> Dict[str, Any]:
        return {"text": "", "file": None, "dirty": False, "undo": [], "sel": False, "menu": None, "dialog": None,
                "wrap": False, "status": True, "zoom": 100, "font": ("Consolas", "Regular", "11"),
                "pending_font": None, "find": "", "replace": "", "match_case": False, "name": "",
                "folder": "Documents", "disk": dict(self.FILES), "goto": "", "orient": "Portrait",
                "printer": "Microsoft Print to PDF", "message": None, "after_prompt": None, "saves": 0}

    def _values(self, e: Element) -> Sequence[str]:
        if e.id == "doc":
            return ("hello world",)
        if e.id in ("dlg.saveas.name", "dlg.open.name"):
            return ("notes.txt",)
        if e.id == "dlg.goto.line":
            return ("1", "9")
        if e.id in ("dlg.find.what", "dlg.replace.what"):
            return ("hello",)
        if e.id == "dlg.replace.with":
            return ("bye",)
        return ("text",)

    # state changes
    def _edit(self, new: str) -> None:
        s = self.s
        if new == s["text"]:
            return
        s["undo"] = (s["undo"] + [s["text"]])[-10:]
        s["text"] = new[:200]
        s["dirty"] = True
        s["sel"] = False

    def _type_doc(self, v: str) -> None:
        self._edit(v)

    def _paste(self) -> None:
        s = self.s
        clip = s["clipboard"]
        self._edit(clip if s["sel"] else s["text"] + clip)

    def _undo(self) -> None:
        s = self.s
        if s["undo"]:
            s["text"] = s["undo"].pop()
            s["dirty"] = True
            s["sel"] = False

    def _copy(self, cut: bool = False) -> None:
        s = self.s
        if s["sel"]:
            s["clipboard"] = s["text"]
            if cut:
                self._edit("")

    def _delete(self) -> None:
        if self.s["sel"]:
            self._edit("")

    def _title(self) -> str:
        s = self.s
        name = s["file"] or "Untitled"
        return f"{'*' if s['dirty'] else ''}{name} - Notepad"

    def _save(self) -> None:
        s = self.s
        if s["file"] is None:
            self._open_dialog("saveas")
            return
        s["disk"][s["file"]] = s["text"]
        s["saves"] += 1
        s["saving"] = True

        def land() -> None:
            s["dirty"] = False
            s["saving"] = False

        self._later(land)

    def _open_dialog(self, name: str) -> None:
        s = self.s
        s["dialog"] = name
        if name == "saveas":
            s["name"] = s["file"] or ""
        if name == "font":
            s["pending_font"] = s["font"]

    def _guarded(self, then: str) -> None:
        # New / Exit / Close with unsaved changes ask first.
        if self.s["dirty"]:
            self.s["dialog"] = "prompt"
            self.s["after_prompt"] = then
        else:
            self._do_after(then)

    def _do_after(self, then: str) -> None:
        s = self.s
        if then == "new":
            s.update(text="", file=None, dirty=False, undo=[], sel=False)
        elif then == "exit":
            self._open_foreign("desktop", "Desktop")

    def _prompt(self, choice: str) -> None:
        s = self.s
        then, s["dialog"], s["after_prompt"] = s["after_prompt"], None, None
        if choice == "cancel":
            return
        if choice == "save":
            if s["file"] is None:
                s["dialog"] = "saveas"
                s["name"] = ""
                return
            s["disk"][s["file"]] = s["text"]
            s["dirty"] = False
        self._do_after(then or "new")

    def _saveas_commit(self) -> None:
        s = self.s
        name = s["name"].strip()
        if not name:
            return
        if not name.lower().endswith(".txt"):
            name += ".txt"
        if name in s["disk"] and s["dialog"] != "confirm":
            s["dialog"] = "confirm"
            s["name"] = name
            return
        s["disk"][name] = s["text"]
        s["file"] = name
        s["dirty"] = False
        s["dialog"] = None
        s["saves"] += 1

    def _open_file(self, name: str) -> None:
        s = self.s
        s.update(text=s["disk"].get(name, ""), file=name, dirty=False, undo=[], sel=False, dialog=None)

    def _find_next(self, dlg: str) -> None:
        s = self.s
        what = s["find"]
        hay, needle = (s["text"], what) if s["match_case"] else (s["text"].lower(), what.lower())
        if what and needle in hay:
            s["sel"] = True
            s["dialog"] = dlg
        else:
            s["message"] = f'Cannot find "{what}"'
            s["dialog"] = "message"

    def _replace_all(self) -> None:
        s = self.s
        if s["find"]:
            self._edit(s["text"].replace(s["find"], s["replace"]))

    def _goto(self) -> None:
        s = self.s
        lines = s["text"].count("\n") + 1
        if s["goto"].isdigit() and 1 <= int(s["goto"]) <= lines:
            s["dialog"] = None
        else:
            s["message"] = "The line number is beyond the total number of lines"
            s["dialog"] = "message"

    def _zoom(self, d: int) -> None:
        s = self.s
        s["zoom"] = 100 if d == 0 else min(150, max(50, s["zoom"] + d))

    def _render(self, ui: _UI) -> None:
        s = self.s
        self._title_bar(ui, self._title(), lambda: self._guarded("exit"))
        st = s
        menus: Dict[str, MenuSpec] = {
            "File": [("New", lambda: self._guarded("new"), True), ("Open...", lambda: self._open_dialog("open"), True),
                     ("Save", self._save, True), ("Save As...", lambda: self._open_dialog("saveas"), True),
                     ("Page Setup...", lambda: self._open_dialog("pagesetup"), True),
                     ("Print...", lambda: self._open_dialog("print"), True), ("Exit", lambda: self._guarded("exit"), True)],
            "Edit": [("Undo", self._undo, bool(st["undo"])), ("Cut", lambda: self._copy(True), st["sel"]),
                     ("Copy", self._copy, st["sel"]), ("Paste", self._paste, bool(st["clipboard"])),
                     ("Delete", self._delete, st["sel"]), ("Find...", lambda: self._open_dialog("find"), True),
                     ("Replace...", lambda: self._open_dialog("replace"), True),
                     ("Go To...", lambda: self._open_dialog("goto"), True),
                     ("Select All", lambda: st.__setitem__("sel", bool(st["text"])), True),
                     ("Time/Date", lambda: self._edit(st["text"] + "10:15 AM 3/4/2024"), True)],
            "Format": [("Word Wrap" + (" (on)" if st["wrap"] else ""), lambda: st.__setitem__("wrap", not st["wrap"]),
                        True), ("Font...", lambda: self._open_dialog("font"), True)],
            "View": [("Zoom In", lambda: self._zoom(10), True), ("Zoom Out", lambda: self._zoom(-10), True),
                     ("Restore Default Zoom", lambda: self._zoom(0), True),
                     ("Status Bar" + (" (on)" if st["status"] else ""),
                      lambda: st.__setitem__("status", not st["status"]), True)],
            "Help": [("View Help", lambda: self._open_foreign("msedge", "Get help with Notepad"), True),
                     ("Send Feedback", lambda: self._open_foreign("feedbackhub", "Feedback Hub"), True),
                     ("About Notepad", lambda: self._open_dialog("about"), True)],
        }
        self._menu_bar(ui, menus)
        bottom = 770.0 if s["status"] else H
        modal = bool(s["dialog"])
        shown = s["text"][:80]
        ui.add("doc", "Document", (0, 56, W, bottom), shown, type=None if modal else self._type_doc)
        if not s["wrap"] and len(s["text"]) > 40:
            ui.add("doc.hscroll", "ScrollBar", (0, bottom - 16, W - 16, bottom), "Horizontal")
        if s["status"]:
            ui.add("status", "StatusBar", (0, 770, W, H))
            ui.add("status.pos", "Text", (880, 770, 1000, H), f"Ln 1, Col {len(s['text']) + 1}")
            ui.add("status.zoom", "Text", (1000, 770, 1060, H), f"{s['zoom']}%")
            ui.add("status.eol", "Text", (1060, 770, 1170, H), "Windows (CRLF)")
            ui.add("status.enc", "Text", (1170, 770, W, H), "UTF-8")
        if s.get("saving"):
            ui.add("toast", "Notification", (980, 700, 1270, 760), f"Saving {s['file']}...")
        if modal:
            getattr(self, f"_dlg_{s['dialog']}")(ui)

    def _key(self, key: str) -> None:
        if key == "escape" and self.s["dialog"] == "prompt":
            self._prompt("cancel")
            return
        super()._key(key)

    # dialogs
    def _buttons(self, ui: _UI, id: str, x: float, y: float, specs: Sequence[Tuple[str, _Handler]],
                 w: float = 100) -> None:
        for j, (label, fn) in enumerate(specs):
            key = re.sub(r"[^a-z]", "", label.lower())
            ui.add(f"{id}.{key}", "Button", (x + j * (w + 10), y, x + j * (w + 10) + w, y + 30), label, click=fn)

    def _dlg_saveas(self, ui: _UI) -> None:
        s = self.s
        x, y = self._dialog(ui, "dlg.saveas", "Save As", 700, 460)
        for j, folder in enumerate(("Desktop", "Documents", "Downloads")):
            ui.add(f"dlg.saveas.folder.{folder.lower()}", "TreeItem", (x + 10, y + 50 + 30 * j, x + 190, y + 78 + 30 * j),
                   folder, click=lambda f=folder: s.__setitem__("folder", f))
        ui.add("dlg.saveas.path", "Text", (x + 200, y + 40, x + 690, y + 64), f"This PC > {s['folder']}")
        files = sorted(s["disk"]) if s["folder"] == "Documents" else []
        for j, f in enumerate(files[:6]):
            ui.add(f"dlg.saveas.file.{j}", "ListItem", (x + 200, y + 70 + 26 * j, x + 690, y + 94 + 26 * j), f,
                   click=lambda f=f: s.__setitem__("name", f))
        ui.add("dlg.saveas.namelabel", "Text", (x + 10, y + 330, x + 110, y + 356), "File name:")
        ui.add("dlg.saveas.name", "Edit", (x + 120, y + 330, x + 690, y + 356), s["name"],
               type=lambda v: s.__setitem__("name", v))
        ui.add("dlg.saveas.type", "ComboBox", (x + 120, y + 362, x + 690, y + 388), "Text Documents (*.txt)")
        ui.add("dlg.saveas.enc", "ComboBox", (x + 120, y + 394, x + 300, y + 420), "UTF-8")
        self._buttons(ui, "dlg.saveas", x + 470, y + 420, [("Save", self._saveas_commit), ("Cancel", self._close_dialog)])

    def _dlg_confirm(self, ui: _UI) -> None:
        s = self.s
        x, y = self._dialog(ui, "dlg.confirm", "Confirm Save As", 420, 160)
        ui.add("dlg.confirm.msg", "Text", (x + 20, y + 40, x + 400, y + 90), f"{s['name']} already exists. Do you want to replace it?")
        self._buttons(ui, "dlg.confirm", x + 200, y + 110,
                      [("Yes", self._saveas_commit), ("No", lambda: s.__setitem__("dialog", "saveas"))])

    def _dlg_open(self, ui: _UI) -> None:
        s = self.s
        x, y = self._dialog(ui, "dlg.open", "Open", 700, 460)
        for j, f in enumerate(sorted(s["disk"])[:8]):
            ui.add(f"dlg.open.file.{j}", "ListItem", (x + 200, y + 70 + 26 * j, x + 690, y + 94 + 26 * j), f,
                   click=lambda f=f: s.__setitem__("name", f))
        ui.add("dlg.open.name", "Edit", (x + 120, y + 330, x + 690, y + 356), s["name"],
               type=lambda v: s.__setitem__("name", v))

        def do_open() -> None:
            if s["name"] in s["disk"]:
                self._open_file(s["name"])
            elif s["name"]:
                s["message"] = f"{s['name']}\nFile not found."
                s["dialog"] = "message"

        self._buttons(ui, "dlg.open", x + 470, y + 420, [("Open", do_open), ("Cancel", self._close_dialog)])

    def _dlg_find(self, ui: _UI, replace: bool = False) -> None:
        s = self.s
        d = "dlg.replace" if replace else "dlg.find"
        x, y = self._dialog(ui, d, "Replace" if replace else "Find", 480, 220 if replace else 180)
        ui.add(f"{d}.label", "Text", (x + 10, y + 40, x + 100, y + 64), "Find what:")
        ui.add(f"{d}.what", "Edit", (x + 110, y + 40, x + 340, y + 64), s["find"], type=lambda v: s.__setitem__("find", v))
        if replace:
            ui.add(f"{d}.withlabel", "Text", (x + 10, y + 74, x + 100, y + 98), "Replace with:")
            ui.add(f"{d}.with", "Edit", (x + 110, y + 74, x + 340, y + 98), s["replace"],
                   type=lambda v: s.__setitem__("replace", v))
        ui.add(f"{d}.case", "CheckBox", (x + 10, y + 140, x + 200, y + 164),
               "Match case" + (" (on)" if s["match_case"] else ""),
               click=lambda: s.__setitem__("match_case", not s["match_case"]))
        ui.add(f"{d}.next", "Button", (x + 360, y + 40, x + 470, y + 70), "Find Next",
               click=lambda: self._find_next("replace" if replace else "find"))
        if replace:
            ui.add(f"{d}.one", "Button", (x + 360, y + 76, x + 470, y + 106), "Replace", click=self._replace_all)
            ui.add(f"{d}.all", "Button", (x + 360, y + 112, x + 470, y + 142), "Replace All", click=self._replace_all)
        ui.add(f"{d}.cancel", "Button", (x + 360, y + 148, x + 470, y + 178), "Cancel", click=self._close_dialog)

    def _dlg_replace(self, ui: _UI) -> None:
        self._dlg_find(ui, replace=True)

    def _dlg_goto(self, ui: _UI) -> None:
        s = self.s
        x, y = self._dialog(ui, "dlg.goto", "Go To Line", 320, 150)
        ui.add("dlg.goto.label", "Text", (x + 10, y + 40, x + 300, y + 60), "Line number:")
        ui.add("dlg.goto.line", "Edit", (x + 10, y + 64, x + 300, y + 88), s["goto"], type=lambda v: s.__setitem__("goto", v))
        self._buttons(ui, "dlg.goto", x + 90, y + 110, [("Go To", self._goto), ("Cancel", self._close_dialog)])

    def _dlg_font(self, ui: _UI) -> None:
        s = self.s
        x, y = self._dialog(ui, "dlg.font", "Font", 560, 420)
        font, style, size = s["pending_font"] or s["font"]
        cols = ((0, "Font:", self.FONTS, font), (1, "Font style:", self.STYLES, style), (2, "Size:", self.SIZES, size))
        for c, label, options, cur in cols:
            cx = x + 10 + c * 180
            ui.add(f"dlg.font.label{c}", "Text", (cx, y + 40, cx + 170, y + 60), label)
            ui.add(f"dlg.font.value{c}", "Edit", (cx, y + 62, cx + 170, y + 86), cur)
            for j, opt in enumerate(options):
                def pick(c: int = c, opt: str = opt) -> None:
                    pf = list(s["pending_font"] or s["font"])
                    pf[c] = opt
                    s["pending_font"] = tuple(pf)
                ui.add(f"dlg.font.opt{c}.{j}", "ListItem", (cx, y + 90 + 26 * j, cx + 170, y + 114 + 26 * j), opt,
                       click=pick)
        ui.add("dlg.font.sample", "Text", (x + 190, y + 260, x + 540, y + 320), "AaBbYyZz")

        def ok() -> None:
            s["font"] = s["pending_font"] or s["font"]
            s["dialog"] = None

        self._buttons(ui, "dlg.font", x + 330, y + 370, [("OK", ok), ("Cancel", self._close_dialog)])

    def _dlg_pagesetup(self, ui: _UI) -> None:
        s = self.s
        x, y = self._dialog(ui, "dlg.page", "Page Setup", 480, 300)
        ui.add("dlg.page.paper", "ComboBox", (x + 10, y + 50, x + 300, y + 74), "Letter")
        for j, o in enumerate(("Portrait", "Landscape")):
            ui.add(f"dlg.page.{o.lower()}", "RadioButton", (x + 10, y + 90 + 28 * j, x + 200, y + 114 + 28 * j),
                   o + (" (selected)" if s["orient"] == o else ""), click=lambda o=o: s.__setitem__("orient", o))
        self._buttons(ui, "dlg.page", x + 250, y + 250, [("OK", self._close_dialog), ("Cancel", self._close_dialog)])

    def _dlg_print(self, ui: _UI) -> None:
        s = self.s
        x, y = self._dialog(ui, "dlg.print", "Print", 480, 300)
        for j, p in enumerate(("Microsoft Print to PDF", "OneNote (Desktop)", "Fax")):
            ui.add(f"dlg.print.printer.{j}", "ListItem", (x + 10, y + 50 + 28 * j, x + 460, y + 74 + 28 * j),
                   p + (" (selected)" if s["printer"] == p else ""), click=lambda p=p: s.__setitem__("printer", p))
        self._buttons(ui, "dlg.print", x + 250, y + 250, [("Print", self._close_dialog), ("Cancel", self._close_dialog)])

    def _dlg_about(self, ui: _UI) -> None:
        x, y = self._dialog(ui, "dlg.about", "About Notepad", 420, 220)
        ui.add("dlg.about.name", "Text", (x + 20, y + 50, x + 400, y + 80), "Windows Notepad")
        ui.add("dlg.about.version", "Text", (x + 20, y + 84, x + 400, y + 110), "Version 11.2312.18.0")
        self._buttons(ui, "dlg.about", x + 300, y + 170, [("OK", self._close_dialog)])

    def _dlg_prompt(self, ui: _UI) -> None:
        s = self.s
        x, y = self._dialog(ui, "dlg.prompt", "Notepad", 460, 170)
        ui.add("dlg.prompt.msg", "Text", (x + 20, y + 40, x + 440, y + 90),
               f"Do you want to save changes to {s['file'] or 'Untitled'}?")
        self._buttons(ui, "dlg.prompt", x + 110, y + 120, [("Save", lambda: self._prompt("save")),
                                                             ("Don't Save", lambda: self._prompt("discard")),
                                                             ("Cancel", lambda: self._prompt("cancel"))])

    def _dlg_message(self, ui: _UI) -> None:
        s = self.s
        x, y = self._dialog(ui, "dlg.msg", "Notepad", 420, 150)
        ui.add("dlg.msg.text", "Text", (x + 20, y + 40, x + 400, y + 90), s["message"])
        self._buttons(ui, "dlg.msg", x + 300, y + 105, [("OK", self._close_dialog)])


# ----------------------------------------------------------------------------------
# Explorer

_TREE_WORDS = ("Projects", "Reports", "Archive", "Photos", "Invoices", "Drafts", "Music", "Notes", "Shared", "Old",
               "Travel", "Family", "Work", "School", "Backup", "Scans")
_FILE_KINDS = ((".txt", "Text Document", "notepad"), (".xlsx", "Microsoft Excel Worksheet", "calc"),
               (".jpg", "JPEG image", "photos"), (".pdf", "PDF Document", "msedge"))


def _folder_tree(seed: int) -> Dict[Tuple[str, ...], Dict[str, Any]]:
    """Folder path -> {"dirs": [...], "files": [(name, kind, app)], "hidden": [...]}; four levels below the roots."""
    rng = random.Random(f"tree:{seed}")
    tree: Dict[Tuple[str, ...], Dict[str, Any]] = {}

    def build(path: Tuple[str, ...], depth: int) -> None:
        ndirs = 0 if depth >= 4 else rng.randint(1, 3) if depth >= 2 else rng.randint(2, 3)
        dirs = sorted(rng.sample(_TREE_WORDS, ndirs))
        files = []
        for j in range(rng.randint(1, 3)):
            ext, kind, app = _FILE_KINDS[rng.randrange(len(_FILE_KINDS))]
            stem = rng.choice(("report", "budget", "photo", "letter", "summary", "plan", "notes", "list"))
            files.append((f"{stem}{j + 1}{ext}", kind, app))
        hidden = [f".cache{depth}"] if rng.random() < 0.4 else []
        tree[path] = {"dirs": dirs, "files": sorted(files), "hidden": hidden}
        for d in dirs:
            build(path + (d,), depth + 1)

    tree[()] = {"dirs": ["Desktop", "Documents", "Downloads", "Music", "Pictures"], "files": [], "hidden": []}
    for root in tree[()]["dirs"]:
        build((root,), 1)
    return tree


class Explorer(SimApp):
    """A File-Explorer-like browser (see the module docstring).

    Examples
    --------
    >>> app = Explorer()
    >>> scr = app.act("nav.documents")
    >>> [e.text for e in scr.elements if e.id == "address"]
    ['This PC > Documents']
    """

    name = "explorer"
    goal = "find the reports folder in documents and show it in details view"
    default_variant = {"clipboard": "", "show_hidden": False}
    VIEWS = ("Details", "Large icons", "List", "Tiles")

    def _initial(self) -> Dict[str, Any]:
        if not hasattr(self, "_tree"):
            self._tree = _folder_tree(self.seed)
        return {"tree": self._tree, "cwd": (), "back": [], "fwd": [], "view": "Details", "sort": "Name", "menu": None,
                "dialog": None, "loading": False, "search": "", "results": None, "expanded": set(),
                "selected": None, "message": None, "new": {}, "show_hidden": bool(self.variant["show_hidden"])}

    def _values(self, e: Element) -> Sequence[str]:
        if e.id == "address":
            return ("Documents", "Pictures", "nowhere")
        if e.id == "search":
            return ("report",)
        if e.id == "dlg.rename.name":
            return ("Renamed",)
        return ("text",)

    def _listing(self, path: Tuple[str, ...]) -> Tuple[List[str], List[Tuple[str, str, str]]]:
        s = self.s
        node = s["tree"].get(path, {"dirs": [], "files": [], "hidden": []})
        dirs = list(node["dirs"]) + s["new"].get(path, [])
        if s["show_hidden"]:
            dirs += node["hidden"]
        files = list(node["files"])
        if s["sort"] == "Type":
            files.sort(key=lambda f: (f[1], f[0]))
        elif s["sort"] == "Name (descending)":
            dirs.sort(reverse=True)
            files.sort(reverse=True)
        else:
            dirs.sort()
        return dirs, files

    def _go(self, path: Tuple[str, ...], push: bool = True) -> None:
        s = self.s
        if path not in s["tree"] and not any(path[:-1] == p and path[-1] in v for p, v in s["new"].items()):
            return
        if push and path != s["cwd"]:
            s["back"] = (s["back"] + [s["cwd"]])[-20:]
            s["fwd"] = []
        s["cwd"] = path
        s["results"] = None
        s["selected"] = None
        s["menu"] = None
        s["loading"] = True

        def land() -> None:
            s["loading"] = False

        self._later(land)

    def _back(self) -> None:
        s = self.s
        if s["back"]:
            s["fwd"] = [s["cwd"]] + s["fwd"]
            self._go(s["back"].pop(), push=False)

    def _forward(self) -> None:
        s = self.s
        if s["fwd"]:
            s["back"] = s["back"] + [s["cwd"]]
            self._go(s["fwd"].pop(0), push=False)

    def _type_address(self, v: str) -> None:
        s = self.s
        target = None
        parts = tuple(p for p in re.split(r"[\\/>]+", v.strip()) if p.strip())
        parts = tuple(p.strip() for p in parts if p.strip().lower() not in ("this pc", "c:", "users", "me"))
        for path in s["tree"]:
            if tuple(p.lower() for p in path) == tuple(p.lower() for p in parts):
                target = path
        if target is None:
            s["message"] = f"Windows can't find '{v}'. Check the spelling and try again."
            s["dialog"] = "message"
        else:
            self._go(target)

    def _type_search(self, v: str) -> None:
        s = self.s
        q = v.strip().lower()
        s["search"] = v
        hits = []
        for path, node in sorted(s["tree"].items()):
            if path[: len(s["cwd"])] != s["cwd"]:
                continue
            for d in node["dirs"]:
                if q and q in d.lower():
                    hits.append(("dir", path + (d,)))
            for f in node["files"]:
                if q and q in f[0].lower():
                    hits.append(("file", path + (f[0],)))
        s["results"] = hits[:12]

    def _new_folder(self) -> None:
        s = self.s
        cur = s["new"].setdefault(s["cwd"], [])
        if len(cur) < 2:
            cur.append("New folder" if not cur else "New folder (2)")

    def _open_item(self, kind: str, path: Tuple[str, ...], app: str = "") -> None:
        if kind == "dir":
            self._go(path)
        else:
            self._open_foreign(app or "notepad", path[-1])

    def _render(self, ui: _UI) -> None:
        s = self.s
        cwd = s["cwd"]
        here = cwd[-1] if cwd else "This PC"
        self._title_bar(ui, f"{here} - File Explorer", lambda: self._open_foreign("desktop", "Desktop"))
        modal = bool(s["dialog"])
        ui.add("back", "Button", (8, 40, 40, 72), "Back", click=self._back, enabled=bool(s["back"]) and not modal)
        ui.add("forward", "Button", (44, 40, 76, 72), "Forward", click=self._forward, enabled=bool(s["fwd"]) and not modal)
        ui.add("up", "Button", (80, 40, 112, 72), "Up", click=lambda: self._go(cwd[:-1]), enabled=bool(cwd) and not modal)
        ui.add("refresh", "Button", (116, 40, 148, 72), "Refresh", click=lambda: self._go(cwd, push=False),
               enabled=not modal)
        ui.add("address", "Edit", (156, 40, 900, 72), " > ".join(("This PC",) + cwd),
               type=None if modal else self._type_address)
        ui.add("search", "Edit", (910, 40, 1270, 72), s["search"] or f"Search {here}",
               type=None if modal else self._type_search)
        # command bar
        cmds: List[Tuple[str, str, Optional[_Handler]]] = [
            ("cmd.new", "New", lambda: self._toggle_menu("New")),
            ("cmd.cut", "Cut", None), ("cmd.copy", "Copy", None), ("cmd.paste", "Paste", None),
            ("cmd.rename", "Rename", (lambda: s.__setitem__("dialog", "rename")) if s["selected"] else None),
            ("cmd.delete", "Delete", None),
            ("cmd.sort", "Sort", lambda: self._toggle_menu("Sort")),
            ("cmd.view", "View", lambda: self._toggle_menu("View")),
        ]
        x = 8.0
        for cid, label, fn in cmds:
            w = 20.0 + 9 * len(label)
            ui.add(cid, "Button", (x, 80, x + w, 110), label, click=fn, enabled=fn is not None and not modal)
            x += w + 6
        # navigation pane
        y = 120.0
        for root in s["tree"][()]["dirs"]:
            ui.add(f"nav.{root.lower()}", "TreeItem", (8, y, 230, y + 24), root,
                   click=(lambda r=root: self._go((r,))), enabled=not modal)
            ui.add(f"nav.{root.lower()}.expand", "Button", (232, y, 252, y + 24), "Expand" if root not in s["expanded"] else "Collapse",
                   click=(lambda r=root: s["expanded"].symmetric_difference_update({r})), enabled=not modal)
            y += 26
            if root in s["expanded"]:
                for d in s["tree"][(root,)]["dirs"]:
                    ui.add(f"nav.{root.lower()}.{d.lower()}", "TreeItem", (28, y, 230, y + 24), d,
                           click=(lambda p=(root, d): self._go(p)), enabled=not modal)
                    y += 26
        # content
        if s["loading"]:
            ui.add("content.loading", "Text", (270, 160, 900, 190), "Working on it...")
            n_items = 0
        elif s["results"] is not None:
            ui.add("content.header", "Text", (270, 120, 1270, 144), f"Search Results in {here}")
            for j, (kind, path) in enumerate(s["results"]):
                app = ""
                if kind == "file":
                    app = next((f[2] for f in s["tree"][path[:-1]]["files"] if f[0] == path[-1]), "notepad")
                ui.add(f"result.{j}", "ListItem", (270, 150 + 28 * j, 1270, 176 + 28 * j),
                       f"{path[-1]} ({' > '.join(path[:-1]) or 'This PC'})",
                       click=(lambda k=kind, p=path, a=app: self._open_item(k, p, a)), enabled=not modal)
            n_items = len(s["results"])
        else:
            dirs, files = self._listing(cwd)
            items = [(d, "File folder", "dir", "") for d in dirs] + [(f[0], f[1], "file", f[2]) for f in files]
            n_items = len(items)
            view = s["view"]
            if view == "Details":
                for j, h in enumerate(("Name", "Date modified", "Type", "Size")):
                    ui.add(f"col.{j}", "HeaderItem", (270 + 250 * j, 120, 270 + 250 * (j + 1), 144), h,
                           click=lambda: s.__setitem__("sort", "Name (descending)" if s["sort"] == "Name" else "Name"),
                           enabled=not modal and j == 0)
            for j, (name, kind, k, app) in enumerate(items):
                if view == "Details":
                    box = (270, 150 + 26 * j, 1270, 174 + 26 * j)
                    role = "DataItem"
                    text = f"{name}  {kind}"
                elif view == "List":
                    box = (270 + 300 * (j // 20), 130 + 26 * (j % 20), 560 + 300 * (j // 20), 154 + 26 * (j % 20))
                    role, text = "ListItem", name
                elif view == "Tiles":
                    box = (270 + 330 * (j % 3), 130 + 80 * (j // 3), 590 + 330 * (j % 3), 200 + 80 * (j // 3))
                    role, text = "ListItem", f"{name} {kind}"
                else:
                    box = (270 + 140 * (j % 7), 130 + 150 * (j // 7), 400 + 140 * (j % 7), 270 + 150 * (j // 7))
                    role, text = "ListItem", name
                path = cwd + (name,)
                ui.add(f"item.{j}", role, box, text, click=(lambda k=k, p=path, a=app: self._open_item(k, p, a)),
                       enabled=not modal)
        ui.add("status.count", "Text", (8, 772, 300, 796), f"{n_items} items")
        for j, v in enumerate(("Details", "Large icons")):
            ui.add(f"status.view.{j}", "Button", (1200 + 36 * j, 772, 1232 + 36 * j, 796), v,
                   click=lambda v=v: s.__setitem__("view", v), enabled=not modal)
        # drop-down menus of the command bar
        menus: Dict[str, List[Tuple[str, _Handler]]] = {
                 "New": [("Folder", self._new_folder), ("Text Document", self._new_folder)],
                 "Sort": [(k, lambda k=k: s.__setitem__("sort", k)) for k in ("Name", "Type", "Name (descending)")],
                 "View": [(v + (" (on)" if s["view"] == v else ""), lambda v=v: s.__setitem__("view", v))
                          for v in self.VIEWS]
                 + [("Hidden items" + (" (on)" if s["show_hidden"] else ""),
                     lambda: s.__setitem__("show_hidden", not s["show_hidden"]))]}
        m = s["menu"]
        if m in menus and not modal:
            xs = {"New": 8, "Sort": 520, "View": 590}[m]
            picks = menus[m]
            ui.add(f"popup.{m.lower()}", "Menu", (xs, 112, xs + 240, 120 + 28 * len(picks)), m)
            for j, (label, fn) in enumerate(picks):
                ui.add(f"popup.{m.lower()}.{j}", "MenuItem", (xs + 4, 116 + 28 * j, xs + 236, 142 + 28 * j), label,
                       click=(lambda fn=fn: self._menu_pick(fn)))
        if s["dialog"] == "message":
            x0, y0 = self._dialog(ui, "dlg.msg", "File Explorer", 460, 160)
            ui.add("dlg.msg.text", "Text", (x0 + 20, y0 + 40, x0 + 440, y0 + 100), s["message"])
            ui.add("dlg.msg.ok", "Button", (x0 + 340, y0 + 115, x0 + 440, y0 + 145), "OK", click=self._close_dialog)


# ----------------------------------------------------------------------------------
# Calc

_COLS = "ABCDEF"
_ROWS = 10
_REF = re.compile(r"^([A-F])([1-9]|10)$")


class Calc(SimApp):
    """A spreadsheet-like grid (see the module docstring).

    Examples
    --------
    >>> app = Calc()
    >>> scr = app.act("cell.B2")
    >>> [e.text for e in scr.elements if e.id in ("namebox", "formula")]
    ['B2', '2']
    """

    name = "calc"
    goal = "select cell d5 and enter a sum formula then format the cells as currency"
    default_variant = {"clipboard": ""}
    FORMATS = ("General", "Number", "Currency", "Percentage")

    def _initial(self) -> Dict[str, Any]:
        rng = random.Random(f"calc:{self.seed}")
        items = ["Apples", "Pears", "Plums", "Figs"]
        cells: Dict[str, str] = {"A1": "Item", "B1": "Qty", "C1": "Price", "D1": "Total"}
        for r, it in enumerate(items, start=2):
            cells[f"A{r}"] = it
            cells[f"B{r}"] = str(rng.randint(1, 9))
            cells[f"C{r}"] = str(rng.randint(1, 5))
            cells[f"D{r}"] = f"=B{r}*C{r}"
        sheet = {"cells": cells, "shown": {}, "fmt": {}}
        st = {"sheets": {"Sheet1": sheet}, "order": ["Sheet1"], "active": "Sheet1", "sel": "A1", "menu": None,
              "dialog": None, "undo": [], "formula_bar": True, "gridlines": True, "zoom": 100, "fn": "SUM",
              "pending_fmt": "General", "filter": False}
        self._recalc_now(sheet)
        return st

    def _values(self, e: Element) -> Sequence[str]:
        if e.id == "formula":
            return ("7", "=SUM(B2:B5)")
        if e.id == "namebox":
            return ("D5", "Z99")
        return ("1",)

    @property
    def _sheet(self) -> Dict[str, Any]:
        return self.s["sheets"][self.s["active"]]

    def _eval(self, cells: Dict[str, str], raw: str, depth: int = 0) -> str:
        if not raw.startswith("="):
            return raw
        if depth > 8:
            return "#REF!"
        expr = raw[1:].upper()

        def num(ref: str) -> float:
            v = self._eval(cells, cells.get(ref, ""), depth + 1)
            try:
                return float(v) if v else 0.0
            except ValueError:
                return 0.0

        m = re.fullmatch(r"SUM\(([A-F])(\d+):([A-F])(\d+)\)", expr)
        if m:
            c0, r0, c1, r1 = _COLS.index(m[1]), int(m[2]), _COLS.index(m[3]), int(m[4])
            total = sum(num(f"{_COLS[c]}{r}") for c in range(c0, c1 + 1) for r in range(r0, r1 + 1))
            return _fmt_num(total)
        m = re.fullmatch(r"([A-F]\d+)([*+])([A-F]\d+)", expr)
        if m:
            a, b = num(m[1]), num(m[3])
            return _fmt_num(a * b if m[2] == "*" else a + b)
        return "#NAME?"

    def _recalc_now(self, sheet: Dict[str, Any]) -> None:
        sheet["shown"] = {k: self._eval(sheet["cells"], v) for k, v in sheet["cells"].items()}

    def _recalc(self) -> None:
        sheet = self._sheet
        # The edited cell shows at once; dependents follow asynchronously (the race).
        sel = self.s["sel"]
        sheet["shown"][sel] = self._eval(sheet["cells"], sheet["cells"].get(sel, ""))
        self._later(lambda: self._recalc_now(sheet))

    def _set_cell(self, v: str) -> None:
        sheet = self._sheet
        sel = self.s["sel"]
        old = sheet["cells"].get(sel, "")
        if v == old:
            return
        self.s["undo"] = (self.s["undo"] + [(self.s["active"], sel, old)])[-10:]
        if v:
            sheet["cells"][sel] = v
        else:
            sheet["cells"].pop(sel, None)
            sheet["shown"].pop(sel, None)
        self._recalc()

    def _undo(self) -> None:
        if self.s["undo"]:
            name, ref, old = self.s["undo"].pop()
            sheet = self.s["sheets"][name]
            if old:
                sheet["cells"][ref] = old
            else:
                sheet["cells"].pop(ref, None)
            self._recalc_now(sheet)

    def _goto(self, v: str) -> None:
        ref = v.strip().upper()
        if _REF.match(ref):
            self.s["sel"] = ref
        else:
            self.s["dialog"] = "message"
            self.s["message"] = "Reference isn't valid."

    def _add_sheet(self) -> None:
        s = self.s
        if len(s["order"]) < 3:
            name = f"Sheet{len(s['order']) + 1}"
            s["sheets"][name] = {"cells": {}, "shown": {}, "fmt": {}}
            s["order"].append(name)
            s["active"] = name
            s["sel"] = "A1"

    def _sort(self, desc: bool) -> None:
        sheet = self._sheet
        col = self.s["sel"][0]
        rows = [r for r in range(2, _ROWS + 1) if any(f"{c}{r}" in sheet["cells"] for c in _COLS)]
        if not rows:
            return
        recs = [{c: sheet["cells"].get(f"{c}{r}") for c in _COLS} for r in rows]

        def key(rec: Dict[str, Optional[str]]) -> Tuple[int, Any]:
            v = rec.get(col) or ""
            try:
                return (0, float(v))
            except ValueError:
                return (1, v)

        recs.sort(key=key, reverse=desc)
        for r, rec in zip(rows, recs):
            for c in _COLS:
                if rec[c] is None:
                    sheet["cells"].pop(f"{c}{r}", None)
                else:
                    sheet["cells"][f"{c}{r}"] = re.sub(r"(?<=[A-F])\d+", str(r), rec[c]) if rec[c].startswith("=") else rec[c]
        self._recalc_now(sheet)

    def _shown(self, ref: str) -> str:
        sheet = self._sheet
        v = sheet["shown"].get(ref, "")
        f = sheet["fmt"].get(ref, "General")
        try:
            x = float(v)
        except ValueError:
            return v
        if f == "Currency":
            return f"${x:,.2f}"
        if f == "Percentage":
            return f"{x * 100:.0f}%"
        if f == "Number":
            return f"{x:.2f}"
        return v

    def _render(self, ui: _UI) -> None:
        s = self.s
        sheet = self._sheet
        self._title_bar(ui, "Book1 - Calc", lambda: self._open_foreign("desktop", "Desktop"))
        sel = s["sel"]
        menus: Dict[str, MenuSpec] = {
            "File": [("New", None, False), ("Save", lambda: None, True), ("Export as PDF...",
                     lambda: self._open_foreign("msedge", "Book1.pdf"), True)],
            "Edit": [("Undo", self._undo, bool(s["undo"])),
                     ("Copy", lambda: s.__setitem__("clipboard", sheet["cells"].get(sel, "")), True),
                     ("Paste", lambda: self._set_cell(s["clipboard"]), bool(s["clipboard"])),
                     ("Clear Contents", lambda: self._set_cell(""), sel in sheet["cells"])],
            "View": [("Formula Bar" + (" (on)" if s["formula_bar"] else ""),
                      lambda: s.__setitem__("formula_bar", not s["formula_bar"]), True),
                     ("Gridlines" + (" (on)" if s["gridlines"] else ""),
                      lambda: s.__setitem__("gridlines", not s["gridlines"]), True)],
            "Insert": [("Function...", lambda: s.__setitem__("dialog", "function"), True),
                       ("Sheet", self._add_sheet, len(s["order"]) < 3)],
            "Format": [("Cells...", lambda: s.update(dialog="format", pending_fmt=sheet["fmt"].get(sel, "General")),
                        True)],
            "Data": [("Sort Ascending", lambda: self._sort(False), True), ("Sort Descending", lambda: self._sort(True), True),
                     ("AutoFilter" + (" (on)" if s["filter"] else ""), lambda: s.__setitem__("filter", not s["filter"]),
                      True)],
            "Help": [("Calc Help", lambda: self._open_foreign("msedge", "Calc Help"), True),
                     ("About Calc", lambda: s.__setitem__("dialog", "about"), True)],
        }
        self._menu_bar(ui, menus)
        modal = bool(s["dialog"])
        top = 60.0
        if s["formula_bar"]:
            ui.add("namebox", "Edit", (4, 60, 100, 86), sel, type=None if modal else self._goto)
            ui.add("fx", "Button", (104, 60, 134, 86), "fx", click=lambda: s.__setitem__("dialog", "function"),
                   enabled=not modal)
            ui.add("formula", "Edit", (138, 60, W - 4, 86), sheet["cells"].get(sel, ""),
                   type=None if modal else self._set_cell)
            top = 92.0
        cw, rh, x0 = 150.0, 28.0, 50.0
        ui.add("grid", "Table", (0, top, W, top + rh * (_ROWS + 1)), s["active"])
        for c, col in enumerate(_COLS):
            ui.add(f"colhead.{col}", "HeaderItem", (x0 + cw * c, top, x0 + cw * (c + 1), top + rh),
                   col + (" v" if s["filter"] else ""))
        for r in range(1, _ROWS + 1):
            y = top + rh * r
            ui.add(f"rowhead.{r}", "HeaderItem", (0, y, x0, y + rh), str(r))
            for c, col in enumerate(_COLS):
                ref = f"{col}{r}"
                txt = self._shown(ref)
                ui.add(f"cell.{ref}", "DataItem", (x0 + cw * c, y, x0 + cw * (c + 1), y + rh),
                       txt + (" [selected]" if ref == sel else ""),
                       click=(lambda ref=ref: s.__setitem__("sel", ref)), enabled=not modal)
        ty = top + rh * (_ROWS + 1) + 10
        for j, name in enumerate(s["order"]):
            ui.add(f"tab.{name}", "TabItem", (10 + 110 * j, ty, 115 + 110 * j, ty + 26),
                   name + (" (active)" if name == s["active"] else ""),
                   click=(lambda n=name: s.update(active=n, sel="A1")), enabled=not modal)
        ui.add("tab.add", "Button", (10 + 110 * len(s["order"]), ty, 40 + 110 * len(s["order"]), ty + 26), "New sheet",
               click=self._add_sheet, enabled=not modal and len(s["order"]) < 3)
        nums = [float(v) for k, v in sheet["shown"].items() if k == sel and _isnum(v)]
        ui.add("status.sum", "Text", (900, 772, 1270, 796), f"Sum: {_fmt_num(sum(nums))}" if nums else "Ready")
        if s["dialog"] == "format":
            x, y = self._dialog(ui, "dlg.format", "Format Cells", 520, 360)
            for j, f in enumerate(self.FORMATS):
                ui.add(f"dlg.format.cat.{j}", "ListItem", (x + 10, y + 50 + 28 * j, x + 200, y + 76 + 28 * j),
                       f + (" (selected)" if s["pending_fmt"] == f else ""),
                       click=lambda f=f: s.__setitem__("pending_fmt", f))

            def ok() -> None:
                sheet["fmt"][sel] = s["pending_fmt"]
                s["dialog"] = None

            ui.add("dlg.format.ok", "Button", (x + 300, y + 310, x + 400, y + 340), "OK", click=ok)
            ui.add("dlg.format.cancel", "Button", (x + 410, y + 310, x + 510, y + 340), "Cancel", click=self._close_dialog)
        elif s["dialog"] == "function":
            x, y = self._dialog(ui, "dlg.fn", "Insert Function", 520, 360)
            for j, f in enumerate(("SUM", "AVERAGE", "COUNT", "MAX")):
                ui.add(f"dlg.fn.{j}", "ListItem", (x + 10, y + 50 + 28 * j, x + 300, y + 76 + 28 * j),
                       f + (" (selected)" if s["fn"] == f else ""), click=lambda f=f: s.__setitem__("fn", f))

            def ins() -> None:
                s["dialog"] = None
                col = sel[0]
                self._set_cell(f"={s['fn']}({col}2:{col}5)" if s["fn"] == "SUM" else f"={s['fn']}()")

            ui.add("dlg.fn.ok", "Button", (x + 300, y + 310, x + 400, y + 340), "OK", click=ins)
            ui.add("dlg.fn.cancel", "Button", (x + 410, y + 310, x + 510, y + 340), "Cancel", click=self._close_dialog)
        elif s["dialog"] == "about":
            x, y = self._dialog(ui, "dlg.about", "About Calc", 420, 200)
            ui.add("dlg.about.text", "Text", (x + 20, y + 50, x + 400, y + 90), "Calc 24.2")
            ui.add("dlg.about.ok", "Button", (x + 300, y + 150, x + 400, y + 180), "OK", click=self._close_dialog)
        elif s["dialog"] == "message":
            x, y = self._dialog(ui, "dlg.msg", "Calc", 420, 150)
            ui.add("dlg.msg.text", "Text", (x + 20, y + 40, x + 400, y + 90), s["message"])
            ui.add("dlg.msg.ok", "Button", (x + 300, y + 105, x + 400, y + 135), "OK", click=self._close_dialog)


def _isnum(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


def _fmt_num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


APPS = {"notepad": Notepad, "explorer": Explorer, "calc": Calc}


def make_app(name: str, seed: int = 0, **options: Any) -> SimApp:
    """A simulated application: ``"notepad"``, ``"explorer"`` or ``"calc"``.

    Parameters
    ----------
    name : str
    seed : int, default 0
        Everything the app draws (folder tree, sheet data, starts, timing noise)
        follows from it.
    **options
        ``variant`` (dict of hidden state), ``timing_noise`` (probability in [0, 1]),
        ``race`` (``"early"`` / ``"late"``); see the module docstring.

    Examples
    --------
    >>> app = make_app("notepad", seed=0)
    >>> scr = app.reset()
    >>> scr.meta.app, scr.elements[0].text
    ('notepad', 'Untitled - Notepad')
    >>> len(app.starts(50)), app.starts(50)[3].depth
    (50, 3)
    """
    if name not in APPS:
        raise InvalidInputError(f"unknown app {name!r}; choose one of {sorted(APPS)}")
    return APPS[name](seed, **options)
