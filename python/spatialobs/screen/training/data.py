"""Training data from exploration traces: windows, task descriptions, counterfactual pairs, split, Parquet.

What a graph store holds (:mod:`spatialobs.screen.store`: the transitions with the
action as executed, and the element table of every observation) becomes a
:class:`Dataset`:

1. **Episodes** are rebuilt from the store's log (:func:`episodes_from_store`): one
   :class:`~spatialobs.screen.episode.Step` per recorded step, its source screen
   rebuilt from the evidence; a capture or a fault counts as a step that stays put.
2. **Cleaning and windows** are :mod:`spatialobs.screen.traces`' (DESIGN §8): segments
   of five steps more than half wasted (no-ops and returns to a state the segment
   already visited) are dropped, and the remaining runs are cut into overlapping
   three-step windows; a window holding a capture or a fault, or a step whose source
   screen has no element table, is left out.
3. **Task descriptions** come from the window's *last* action (what the three steps
   lead to), rule-based, with no language model: the target's semantic class
   (:func:`~spatialobs.screen.traces.semantic_class` on the canonical role, see
   :func:`canonical_role`) picks a task class (a menu item that is not one of the menu
   bar's names is a ``command``), and one of the class's four
   templates (:data:`TASK_TEMPLATES`) is filled with the target's label (its
   normalized text, at most five words, else its role) and, for typing, the
   typed value's class (an input's label is its role: its text is what was typed). The
   template is chosen by a stable hash of the class, the label and the episode, so one
   target is described one way within an episode and in several ways across episodes.
4. **Counterfactual pairs** (:func:`~spatialobs.screen.traces.counterfactual_pairs`):
   two windows with the same task text whose first steps differ both in source
   screen (exact atoms) and in action token.
5. **The split** is task-template-disjoint: template ``3`` of every class is held out,
   so every test task is phrased by a template no training task uses (and, the
   template being a function of the label, its label+template combination is unseen).

:meth:`Dataset.export` writes ``windows``, ``steps``, ``screens``, ``elements`` and
``pairs`` as Parquet (the ``export`` extra: pyarrow) or JSON lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.episode import Episode, Step
from spatialobs.screen.features import normalize_text
from spatialobs.screen.model import Element, Screen
from spatialobs.screen.export import read_records
from spatialobs.screen.store import StoreError
from spatialobs.screen.traces import _MENU_NAMES, ActionToken, Trace, action_token, clean, counterfactual_pairs, windows

__all__ = ["ROLE_ALIASES", "TASK_TEMPLATES", "TEST_TEMPLATE", "canonical_role", "canonical_action",
           "task_description", "episodes_from_store", "Window", "Dataset", "build_dataset", "windows_dataset"]

#: AT-SPI (and web accessibility) role names -> the role names :data:`~spatialobs.screen.traces.SEMANTIC_RULES`
#: is written for (UI Automation's), so that the semantic classes mean the same on every platform.
ROLE_ALIASES: Dict[str, str] = {
    "menu item": "menuitem", "check menu item": "menuitem", "radio menu item": "menuitem", "menu": "menuitem",
    "tearoff menu item": "menuitem", "push button": "button", "toggle button": "button", "button": "button",
    "text": "edit", "entry": "edit", "password text": "edit", "textbox": "edit", "searchbox": "edit",
    "spin button": "edit", "terminal": "document", "document frame": "document", "document text": "document",
    "combo box": "combobox", "check box": "checkbox", "radio button": "radiobutton", "list item": "listitem",
    "icon": "listitem", "table cell": "dataitem", "cell": "dataitem", "tree item": "treeitem",
    "page tab": "tabitem", "tab": "tabitem", "table column header": "headeritem", "column header": "headeritem",
    "link": "hyperlink",
}

#: Task templates per task class: ``{label}`` is the target's label, ``{value}`` the typed value's class.
TASK_TEMPLATES: Dict[str, Tuple[str, ...]] = {
    "menu": ("open the {label} menu", "show what the {label} menu offers", "go to {label} in the menu bar",
             "look inside the {label} menu"),
    "command": ("run {label} from the menu", "choose {label} in the menu", "use the menu command {label}",
                "pick the {label} menu entry"),
    "confirm": ("confirm with {label}", "press {label} to go ahead", "accept by choosing {label}",
                "finish the dialog with {label}"),
    "dismiss": ("close it with {label}", "dismiss this using {label}", "back out via {label}",
                "get rid of the dialog with {label}"),
    "input": ("enter {value} in the {label} field", "fill {label} with {value}", "put {value} into {label}",
              "write {value} in the {label} box"),
    "navigate": ("navigate to {label}", "move over to {label}", "switch to {label}", "head to {label}"),
    "edit": ("edit the text with {label}", "use {label} on the content", "apply the {label} command",
             "run {label} on what is there"),
    "search": ("search using {label}", "start looking with {label}", "find things via {label}",
               "begin a search with {label}"),
    "view": ("change the view with {label}", "switch the display using {label}", "adjust how it looks via {label}",
             "toggle the {label} view option"),
    "help": ("get help through {label}", "open {label} for information", "read about it via {label}",
             "look up {label}"),
    "select": ("select {label}", "pick {label} from the list", "choose the {label} entry", "highlight {label}"),
    "toggle": ("toggle {label}", "flip the {label} setting", "switch {label} on or off", "change the {label} box"),
    "key": ("press {label}", "hit the {label} key", "use the {label} shortcut", "send {label} from the keyboard"),
    "other": ("click {label}", "activate {label}", "interact with {label}", "try {label}"),
}

#: The template index every class holds out for the test split.
TEST_TEMPLATE = 3

_VALUE_WORDS = {"none": "nothing", "empty": "nothing", "number": "a number", "formula": "a formula",
                "cell": "a cell name", "path": "a path", "filename": "a file name", "url": "an address",
                "word": "a word", "text": "some text"}


def canonical_role(role: Optional[str]) -> str:
    """The UI Automation name of a role (``"push button"`` -> ``"button"``); other roles normalized.

    Examples
    --------
    >>> canonical_role("Menu Item"), canonical_role("push button"), canonical_role("slider")
    ('menuitem', 'button', 'slider')
    """
    r = normalize_text(role or "")
    return ROLE_ALIASES.get(r, r)


def canonical_action(action: Action) -> Action:
    """The action with its target's role canonical (:func:`canonical_role`)."""
    t = action.target
    if t is None:
        return action
    return Action(action.op, Element(t.bounds, canonical_role(t.role), t.text, t.editable, t.clickable),
                  action.value, action.index)


def _stable(s: str) -> int:
    return zlib.crc32(s.encode("utf-8"))


def task_description(action: Action, width: float, height: float, salt: str = "") -> Tuple[str, str, str]:
    """``(task text, task class, template id)`` of a window whose last action is ``action``.

    The template is drawn by a stable hash of the class, the label and ``salt`` (the
    dataset passes the window's store and episode, so one target is phrased one way
    within an episode and in several ways across episodes).

    Examples
    --------
    >>> task_description(Action("click", Element((0, 0, 40, 20), "menu", "Edit", clickable=True)), 640, 480)
    ('show what the edit menu offers', 'menu', 'menu/1')
    >>> task_description(Action("key", value="escape"), 640, 480)
    ('close it with escape', 'dismiss', 'dismiss/0')
    """
    tok = action_token(canonical_action(action), width, height)
    cls = tok.semantic if tok.semantic in TASK_TEMPLATES else "other"
    if action.op == "key":
        label = normalize_text(action.value or "")
    else:
        assert action.target is not None
        role = normalize_text(action.target.role or "")
        label = " ".join(normalize_text(action.target.text or "").split()[:5]) or role
        if cls == "input":
            # An editable element's text is its content (what was typed), not its name: the role names it.
            label = role
        elif cls == "menu" and role != "menu" and label not in _MENU_NAMES:
            # The rule table calls every menu item it has no other class for "menu"; a task says whether the
            # item opens a menu (AT-SPI's role "menu", or a menu bar name) or runs a command.
            cls = "command"
    k = _stable(f"{cls}|{label}|{salt}") % len(TASK_TEMPLATES[cls])
    text = TASK_TEMPLATES[cls][k].format(label=label, value=_VALUE_WORDS.get(tok.value, "some text"))
    return text, cls, f"{cls}/{k}"


def _digest(control: bytes, text: bytes) -> str:
    return hashlib.blake2b(control + b"|" + text, digest_size=8).hexdigest()


def _elements(doc: str, where: str) -> Tuple[Element, ...]:
    try:
        items = json.loads(doc) if doc else []
        return tuple(Element(tuple(float(v) for v in d["bounds"]), str(d.get("role") or ""), d.get("text"),  # type: ignore[arg-type]
                             bool(d.get("editable", False)), bool(d.get("clickable", False))) for d in items)
    except (ValueError, KeyError, TypeError) as e:
        raise StoreError(f"{where}: the element table is malformed ({type(e).__name__}: {e})") from None


def _action(doc: str, where: str) -> Action:
    try:
        d = json.loads(doc)
        t = None
        if d.get("op") != "key":
            t = Element(tuple(float(v) for v in d["bounds"]), str(d.get("role") or ""), d.get("text"),  # type: ignore[arg-type]
                        False, True)
        return Action(str(d["op"]), t, d.get("value"))
    except (ValueError, KeyError, TypeError) as e:
        raise StoreError(f"{where}: the recorded action is malformed ({type(e).__name__}: {e})") from None


def episodes_from_store(path: Union[str, "os.PathLike[str]"]) -> Tuple[List[Episode], Dict[int, Screen]]:
    """The episodes a graph store recorded and the screens of its observations with evidence.

    Each step's ``Step.digest`` is the exact identity of
    its source screen (a hash of the observation's atom sets), so digests compare
    across stores; ``Step.screen`` is the source screen
    (``None`` when the store holds no element table for it). A capture or a fault is
    a step with ``Step.capture`` set that stays in its state.

    Raises
    ------
    StoreError
        The file is not a graph store, or a record is malformed (the message names it).
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"no graph store at {str(p)!r}")
    cfg, obs, trs, caps, ev = read_records(p)
    app = str(cfg.get("app") or p.stem)
    digest = {r.seq: _digest(r.control, r.text_atoms) for r in obs}
    state_of = {r.seq: r.state for r in obs}
    screens: Dict[int, Screen] = {}
    for seq, e in ev.items():
        screens[seq] = Screen(_elements(e.elements, f"{p.name} observation {seq}"), float(e.width), float(e.height))
    rows: Dict[Tuple[str, int], List[Tuple[int, int, Step]]] = {}
    for r in trs:
        if not r.action:
            continue
        scr = screens.get(r.source_observation)
        w, h = (scr.width, scr.height) if scr is not None else (1.0, 1.0)
        stp = Step(r.step, r.source, r.signature, _action(r.action, f"{p.name} transition {r.seq}"), r.target,
                   r.state_novel, r.edge_novel, r.reward, r.u_source, r.u_target, None, 0.0, 0.0, w, h,
                   digest.get(r.source_observation, ""), scr, r.source_observation, r.observation)
        rows.setdefault((r.worker, r.episode), []).append((r.step, r.seq, stp))
    for c in caps:
        scr = screens.get(c.source_observation)
        w, h = (scr.width, scr.height) if scr is not None else (1.0, 1.0)
        act = _action(c.action, f"{p.name} capture {c.seq}") if c.action else Action("key", None, "escape")
        stp = Step(c.step, c.source, c.signature, act, c.source, False, False, 0.0, 0.0, 0.0, c.app, 0.0, 0.0, w, h,
                   digest.get(c.source_observation, ""), scr, c.source_observation, 0)
        rows.setdefault((c.worker, c.episode), []).append((c.step, 1 << 40, stp))
    eps: List[Episode] = []
    for (worker, number), items in sorted(rows.items()):
        items.sort(key=lambda x: (x[0], x[1]))
        steps = [s for _, _, s in items]
        start = steps[0].source if steps else state_of.get(1, 0)
        eps.append(Episode(app, f"{worker}/{number}", "", "store", start, steps, episode=number))
    return eps, screens


@dataclass
class Window:
    """A three-step window with its task and split (see the module docstring)."""

    id: int
    app: str
    store: str
    episode: str
    task: str
    task_class: str
    template: str
    split: str
    steps: Tuple[Step, ...]
    tokens: Tuple[ActionToken, ...]
    #: Dataset-wide screen ids of the three source screens (keys of :attr:`Dataset.screens`).
    screens: Tuple[int, ...]


@dataclass
class Dataset:
    """Windows, the screens they were taken on, and the counterfactual pairs (window ids)."""

    windows: List[Window]
    screens: Dict[int, Screen]
    pairs: List[Tuple[int, int]]
    stats: Dict[str, Any] = field(default_factory=dict)

    def split(self, name: str) -> List[Window]:
        """The windows of split ``"train"`` or ``"test"``."""
        return [w for w in self.windows if w.split == name]

    def tables(self) -> Dict[str, Dict[str, List[Any]]]:
        """The dataset as five column tables: windows, steps, screens, elements, pairs."""
        win: Dict[str, List[Any]] = {k: [] for k in ("window", "app", "store", "episode", "task", "task_class",
                                                     "template", "split", "first_step")}
        stp: Dict[str, List[Any]] = {k: [] for k in ("window", "k", "screen", "source_state", "target_state", "op",
                                                     "role", "semantic", "position", "value", "token", "text",
                                                     "typed")}
        for w in self.windows:
            for name, val in (("window", w.id), ("app", w.app), ("store", w.store), ("episode", w.episode),
                              ("task", w.task), ("task_class", w.task_class), ("template", w.template),
                              ("split", w.split), ("first_step", int(w.steps[0].t))):
                win[name].append(val)
            for k, (st, tok, sid) in enumerate(zip(w.steps, w.tokens, w.screens)):
                t = st.action.target
                row: Tuple[Tuple[str, Any], ...] = (
                    ("window", w.id), ("k", k), ("screen", sid), ("source_state", int(st.source)),
                    ("target_state", int(st.target)), ("op", tok.op), ("role", tok.role), ("semantic", tok.semantic),
                    ("position", tok.position), ("value", tok.value), ("token", tok.text),
                    ("text", t.text if t is not None else None), ("typed", st.action.value))
                for name, val in row:
                    stp[name].append(val)
        scr: Dict[str, List[Any]] = {"screen": [], "width": [], "height": [], "elements": []}
        el: Dict[str, List[Any]] = {k: [] for k in ("screen", "index", "role", "text", "x0", "y0", "x1", "y1",
                                                    "editable", "clickable")}
        for sid in sorted(self.screens):
            screen = self.screens[sid]
            srow: Tuple[Tuple[str, Any], ...] = (("screen", sid), ("width", float(screen.width)),
                                                 ("height", float(screen.height)), ("elements", len(screen.elements)))
            for name, val in srow:
                scr[name].append(val)
            for i, e in enumerate(screen.elements):
                erow: Tuple[Tuple[str, Any], ...] = (
                    ("screen", sid), ("index", i), ("role", e.role), ("text", e.text), ("x0", float(e.bounds[0])),
                    ("y0", float(e.bounds[1])), ("x1", float(e.bounds[2])), ("y1", float(e.bounds[3])),
                    ("editable", bool(e.editable)), ("clickable", bool(e.clickable)))
                for name, val in erow:
                    el[name].append(val)
        pairs: Dict[str, List[Any]] = {"a": [a for a, _ in self.pairs], "b": [b for _, b in self.pairs]}
        return {"windows": win, "steps": stp, "screens": scr, "elements": el, "pairs": pairs}

    def export(self, out: Union[str, "os.PathLike[str]"], to: str = "parquet") -> List[Path]:
        """Write :meth:`tables` as ``<table>.parquet`` (pyarrow: the ``export`` extra) or ``<table>.jsonl``."""
        if to not in ("parquet", "jsonl"):
            raise InvalidInputError(f"to must be 'parquet' or 'jsonl', got {to!r}")
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        written: List[Path] = []
        for name, cols in self.tables().items():
            if to == "parquet":
                try:
                    import pyarrow as pa
                    import pyarrow.parquet as pq
                except ImportError:
                    raise InvalidInputError("Parquet needs pyarrow: pip install \"spatialobs[export]\"") from None
                f = d / f"{name}.parquet"
                tmp = f.with_name(f.name + ".tmp")
                pq.write_table(pa.table(cols), tmp)
            else:
                f = d / f"{name}.jsonl"
                tmp = f.with_name(f.name + ".tmp")
                keys = list(cols)
                n = len(cols[keys[0]]) if keys else 0
                with open(tmp, "w", encoding="utf-8") as fh:
                    for i in range(n):
                        fh.write(json.dumps({k: cols[k][i] for k in keys}, ensure_ascii=False) + "\n")
            os.replace(tmp, f)
            written.append(f)
        return written


def windows_dataset(episodes: Sequence[Tuple[str, Episode]], *, segment: int = 5, max_waste: float = 0.5,
                    max_pairs: int = 100_000) -> Dataset:
    """Clean, window, describe, pair and split episodes given as ``(store name, episode)``.

    Steps need ``Step.screen`` (windows with a step
    without one are left out). Screens are numbered by their digest (one id per exact
    screen across every store).

    Examples
    --------
    >>> from spatialobs.screen import explore, sim
    >>> app = sim.make_app("notepad")
    >>> eps = [("sim", explore(app, steps=40, start=s, keep_screens=True)) for s in app.starts(3)]
    >>> ds = windows_dataset(eps)
    >>> {w.split for w in ds.windows} <= {"train", "test"}, all(len(w.steps) == 3 for w in ds.windows)
    (True, True)
    """
    out: List[Window] = []
    screens: Dict[int, Screen] = {}
    screen_id: Dict[str, int] = {}
    traces: List[Trace] = []
    kept_steps = total_steps = dropped = 0
    for store, ep in episodes:
        total_steps += len(ep.steps)
        runs = clean(ep, segment, max_waste)
        kept_steps += sum(len(r) for r in runs)
        for w in windows(runs, 3):
            if any(s.capture is not None or s.screen is None for s in w):
                dropped += 1
                continue
            ids = []
            for s in w:
                key = s.digest or f"{store}:{s.source_observation}"
                if key not in screen_id:
                    screen_id[key] = len(screen_id)
                    screens[screen_id[key]] = s.screen  # type: ignore[assignment]
                ids.append(screen_id[key])
            toks = tuple(action_token(canonical_action(s.action), s.width, s.height) for s in w)
            last = w[-1]
            task, cls, tmpl = task_description(last.action, last.width, last.height, f"{store}/{ep.start}")
            split = "test" if tmpl.endswith(f"/{TEST_TEMPLATE}") else "train"
            win = Window(len(out), ep.app, store, str(ep.start), task, cls, tmpl, split, tuple(w), toks, tuple(ids))
            out.append(win)
            # The pairs' screens compare by screen id (exact atoms), carried in the digest.
            steps = tuple(_with_digest(s, str(i)) for s, i in zip(w, ids))
            traces.append(Trace(task, ep.app, win.id, steps, toks))
    pairs = [(a.episode, b.episode) for a, b in counterfactual_pairs(traces, max_pairs)]
    stats = {"episodes": len(episodes), "steps": total_steps, "kept_steps": kept_steps, "windows": len(out),
             "windows_dropped": dropped, "screens": len(screens), "tasks": len({w.task for w in out}),
             "templates": len({w.template for w in out}), "pairs": len(pairs),
             "train_windows": sum(w.split == "train" for w in out), "test_windows": sum(w.split == "test" for w in out)}
    return Dataset(out, screens, pairs, stats)


def _with_digest(s: Step, digest: str) -> Step:
    from dataclasses import replace

    return replace(s, digest=digest)


def build_dataset(stores: Iterable[Union[str, "os.PathLike[str]"]], *, segment: int = 5,
                  max_waste: float = 0.5) -> Dataset:
    """:func:`windows_dataset` over the episodes of graph stores written by ``spatialobs explore --store``.

    Parameters
    ----------
    stores : iterable of paths
        SQLite graph stores.
    segment, max_waste : int, float
        :func:`~spatialobs.screen.traces.clean`'s segment length and largest wasted share.

    Returns
    -------
    Dataset
    """
    eps: List[Tuple[str, Episode]] = []
    about: List[Dict[str, Any]] = []
    for path in stores:
        name = Path(path).stem
        got, _ = episodes_from_store(path)
        eps += [(name, e) for e in got]
        about.append({"store": Path(path).name, "app": got[0].app if got else "", "episodes": len(got),
                      "steps": sum(len(e.steps) for e in got)})
    if not eps:
        raise InvalidInputError("the stores hold no episodes")
    ds = windows_dataset(eps, segment=segment, max_waste=max_waste)
    ds.stats["stores"] = about
    return ds
