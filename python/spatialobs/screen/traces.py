"""Exploration traces as training material (DESIGN §8).

* :func:`clean` drops loop- and no-op-dominated segments: the episode is cut into
  consecutive segments of ``segment`` steps; a step is *wasted* when it stays in
  its state (no-op) or returns to a state its segment already passed through
  (loop); a segment whose wasted share exceeds ``max_waste`` is dropped. What remains is a
  list of runs of consecutive kept steps.
* :func:`windows` cuts runs into overlapping three-step windows (never across a
  dropped segment).
* :func:`action_token` turns a step into ``(operation, role, semantic class,
  3 × 3 position bin, value class)``; the semantic class comes from the rule table
  :data:`SEMANTIC_RULES` (first matching rule wins), the value class from
  :func:`value_class`.
* :func:`counterfactual_pairs` pairs steps with the same task text but a different
  source state and a different action token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.episode import Episode, Step
from spatialobs.screen.features import normalize_text

__all__ = [
    "SEMANTIC_RULES",
    "ActionToken",
    "semantic_class",
    "position_bin",
    "value_class",
    "action_token",
    "clean",
    "windows",
    "counterfactual_pairs",
    "Trace",
    "build_traces",
]

_MENU_NAMES = frozenset("file edit format view help insert data new sort tools window".split())

#: Ordered rules ``(class, roles, words)``: an action matches when its target role is in
#: ``roles`` (empty: any) and, when ``words`` is not empty, its normalized text
#: starts with one of them or contains one as a whole word.
SEMANTIC_RULES: Tuple[Tuple[str, frozenset, Tuple[str, ...]], ...] = (
    ("input", frozenset({"edit", "combobox", "document"}), ()),
    ("dismiss", frozenset(), ("cancel", "close", "no", "don't save", "exit", "minimize")),
    ("confirm", frozenset(), ("ok", "yes", "save", "apply", "open", "print", "go to", "done", "insert", "find next")),
    ("navigate", frozenset(), ("back", "forward", "up", "refresh", "home", "expand", "collapse", "restore down",
                               "maximize")),
    ("edit", frozenset(), ("undo", "redo", "cut", "copy", "paste", "delete", "clear", "select all", "replace",
                           "rename", "time/date")),
    ("search", frozenset(), ("find", "search")),
    ("view", frozenset(), ("zoom", "view", "details", "large icons", "list", "tiles", "status bar", "word wrap",
                           "gridlines", "formula bar", "hidden items", "autofilter", "sort")),
    ("help", frozenset(), ("help", "about", "feedback")),
    ("navigate", frozenset({"treeitem", "tabitem", "headeritem"}), ()),
    ("select", frozenset({"listitem", "dataitem", "radiobutton"}), ()),
    ("toggle", frozenset({"checkbox"}), ()),
)

_POS = ("top-left", "top", "top-right", "left", "center", "right", "bottom-left", "bottom", "bottom-right")


@dataclass(frozen=True)
class ActionToken:
    """``(op, role, semantic, position, value)``; :attr:`text` joins them with ``|``."""

    op: str
    role: str
    semantic: str
    position: str
    value: str

    @property
    def text(self) -> str:
        return "|".join((self.op, self.role, self.semantic, self.position, self.value))


def semantic_class(role: str, text: Optional[str], op: str = "click") -> str:
    """The semantic class of an action's target by :data:`SEMANTIC_RULES`.

    Examples
    --------
    >>> semantic_class("Button", "Save"), semantic_class("MenuItem", "File"), semantic_class("Edit", None, "type")
    ('confirm', 'menu', 'input')
    >>> semantic_class("MenuItem", "Save As...")
    'confirm'
    """
    r = normalize_text(role or "")
    t = normalize_text(text or "")
    if op == "key":
        return "dismiss" if t in ("escape", "esc") else "key"
    if r == "menuitem" and t in _MENU_NAMES:
        return "menu"
    for cls, roles, words in SEMANTIC_RULES:
        if roles and r not in roles:
            continue
        if not words:
            return cls
        for w in words:
            if t.startswith(w) or re.search(rf"(?<![\w']){re.escape(w)}(?![\w'])", t):
                return cls
    if r in ("menuitem", "menu"):
        return "menu"
    return "other"


def position_bin(bounds: Sequence[float], width: float, height: float) -> str:
    """The 3 × 3 screen region of a box's center (``"top-left"`` … ``"bottom-right"``).

    Examples
    --------
    >>> position_bin((600, 380, 680, 420), 1280, 800)
    'center'
    """
    x0, y0, x1, y1 = bounds
    col = min(2, max(0, int(((x0 + x1) / 2) * 3 // width)))
    row = min(2, max(0, int(((y0 + y1) / 2) * 3 // height)))
    return _POS[row * 3 + col]


def value_class(value: Optional[str]) -> str:
    """Class of a typed value: none, empty, number, formula, cell, path, filename, url, word, text.

    Examples
    --------
    >>> [value_class(v) for v in (None, "42", "=SUM(B2:B5)", "D5", "notes.txt", "C:\\\\Users", "hello world")]
    ['none', 'number', 'formula', 'cell', 'filename', 'path', 'text']
    """
    if value is None:
        return "none"
    v = value.strip()
    if not v:
        return "empty"
    if re.fullmatch(r"[-+]?\d+([.,]\d+)?%?", v):
        return "number"
    if v.startswith("="):
        return "formula"
    if re.fullmatch(r"[A-Za-z]{1,2}\d{1,4}", v):
        return "cell"
    if re.match(r"[a-z]+://", v, re.I):
        return "url"
    if "\\" in v or "/" in v or re.match(r"[A-Za-z]:", v):
        return "path"
    if re.fullmatch(r"[\w\- ]+\.[A-Za-z0-9]{1,5}", v):
        return "filename"
    if re.fullmatch(r"\w+", v):
        return "word"
    return "text"


def action_token(action: Action, width: float, height: float) -> ActionToken:
    """The token of an action on a screen of the given size.

    Examples
    --------
    >>> from spatialobs.screen import Element
    >>> a = Action("type", Element((0, 0, 200, 30), "Edit", "File name", editable=True), "notes.txt")
    >>> action_token(a, 1280, 800).text
    'type|edit|input|top-left|filename'
    """
    if not isinstance(action, Action):
        raise InvalidInputError(f"action_token expects an Action, got {type(action).__name__}")
    if action.op == "key":
        return ActionToken("key", "", semantic_class("", action.value, "key"), "none", "none")
    assert action.target is not None
    role = normalize_text(action.target.role)
    sem = semantic_class(action.target.role, action.target.text, action.op)
    pos = position_bin(action.target.bounds, width, height)
    val = value_class(action.value) if action.op == "type" else "none"
    return ActionToken(action.op, role, sem, pos, val)


def _wasted(chunk: Sequence[Step]) -> int:
    # No-ops, and steps that close a cycle inside the segment (return to a state
    # the segment already passed through, its first source included).
    seen = {chunk[0].source} if chunk else set()
    n = 0
    for st in chunk:
        n += st.target == st.source or st.target in seen
        seen.add(st.target)
    return n


def clean(episode: Episode, segment: int = 5, max_waste: float = 0.5) -> List[List[Step]]:
    """Runs of consecutive steps left after dropping loop- and no-op-dominated segments.

    Examples
    --------
    >>> from spatialobs.screen import explore, sim
    >>> ep = explore(sim.make_app("notepad"), steps=20, selector="greedy")
    >>> sum(len(r) for r in clean(ep))   # Greedy mostly stalls: little survives
    0
    """
    if not isinstance(episode, Episode):
        raise InvalidInputError(f"clean expects an Episode, got {type(episode).__name__}")
    if isinstance(segment, bool) or not isinstance(segment, int) or segment < 1:
        raise InvalidInputError(f"segment must be a positive integer, got {segment!r}")
    if not 0 <= max_waste <= 1:
        raise InvalidInputError(f"max_waste must lie in [0, 1], got {max_waste!r}")
    steps = episode.steps
    runs: List[List[Step]] = []
    cur: List[Step] = []
    for i in range(0, len(steps), segment):
        chunk = steps[i:i + segment]
        if _wasted(chunk) > max_waste * len(chunk):
            if cur:
                runs.append(cur)
            cur = []
        else:
            cur.extend(chunk)
    if cur:
        runs.append(cur)
    return runs


def windows(runs: Iterable[Sequence[Step]], size: int = 3) -> List[Tuple[Step, ...]]:
    """Overlapping windows of ``size`` consecutive steps inside each run.

    Examples
    --------
    >>> windows([[1, 2, 3, 4], [5, 6]])
    [(1, 2, 3), (2, 3, 4)]
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InvalidInputError(f"size must be a positive integer, got {size!r}")
    out: List[Tuple[Step, ...]] = []
    for run in runs:
        run = list(run)
        out.extend(tuple(run[i:i + size]) for i in range(len(run) - size + 1))
    return out


@dataclass(frozen=True)
class Trace:
    """One window of an episode with its task text and the tokens of its actions."""

    goal: str
    app: str
    episode: int
    steps: Tuple[Step, ...]
    tokens: Tuple[ActionToken, ...]


def build_traces(episodes: Iterable[Episode], segment: int = 5, max_waste: float = 0.5, size: int = 3) -> List[Trace]:
    """Clean every episode, cut windows and tokenize them.

    Examples
    --------
    >>> from spatialobs.screen import explore, sim
    >>> tr = build_traces([explore(sim.make_app("explorer"), steps=30)])
    >>> all(len(t.tokens) == 3 for t in tr)
    True
    """
    out: List[Trace] = []
    for k, ep in enumerate(episodes):
        for w in windows(clean(ep, segment, max_waste), size):
            out.append(Trace(ep.goal, ep.app, k, w, tuple(action_token(s.action, s.width, s.height) for s in w)))
    return out


def counterfactual_pairs(traces: Sequence[Trace], max_pairs: int = 1000) -> List[Tuple[Trace, Trace]]:
    """Pairs of windows with the same task text whose first steps differ in source screen and action token.

    Screens are compared by :attr:`Step.digest` (exact atoms), so windows of
    episodes recorded in different graphs compare correctly.

    Each window is paired with the next later window of its task that qualifies
    (deterministic; at most ``max_pairs``).

    Examples
    --------
    >>> from spatialobs.screen import explore, sim
    >>> app = sim.make_app("notepad")
    >>> tr = build_traces([explore(app, steps=40, start=s) for s in app.starts(3)])
    >>> all(a.goal == b.goal and a.steps[0].digest != b.steps[0].digest for a, b in counterfactual_pairs(tr))
    True
    """
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or max_pairs < 0:
        raise InvalidInputError(f"max_pairs must be an integer >= 0, got {max_pairs!r}")
    by_goal: Dict[str, List[Trace]] = {}
    for t in traces:
        if not isinstance(t, Trace):
            raise InvalidInputError(f"counterfactual_pairs expects Trace objects, got {type(t).__name__}")
        by_goal.setdefault(t.goal, []).append(t)
    out: List[Tuple[Trace, Trace]] = []
    for goal in sorted(by_goal):
        group = by_goal[goal]
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if a.steps[0].digest != b.steps[0].digest and a.tokens[0] != b.tokens[0]:
                    out.append((a, b))
                    break
            if len(out) >= max_pairs:
                return out
    return out
