"""Executable actions and their signatures (DESIGN §8).

An :class:`Action` is what an agent can do on a screen: click a clickable element,
type a value into an editable one, or press a key (``target`` ``None``). Its
*signature* is the deterministic identity the state graph labels edges with::

    click|<role>|<text>|<col>,<row>
    type|<role>|<text>|<col>,<row>|<argument>
    key|||<argument>

``role`` and ``text`` are normalized as screen texts are (lowercase, whitespace
collapsed, 120 characters; see :func:`~spatialobs.screen.normalize_text`), the
position is the target's center quantized on a ``grid x grid`` lattice over the
screen (the same cells as the atoms), and the typed argument is kept exactly.
``|`` and ``\\`` inside fields are escaped so that a signature parses back into
its fields unambiguously.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.screen.features import normalize_text
from spatialobs.screen.model import Element, Screen

__all__ = ["OPERATIONS", "Action", "signature", "signatures", "candidate_actions", "cell_of"]

#: The operations an action may carry.
OPERATIONS = ("click", "type", "key")


@dataclass(frozen=True)
class Action:
    """One executable action.

    Parameters
    ----------
    op : {"click", "type", "key"}
    target : Element or None
        The element acted on; ``None`` only for ``"key"``.
    value : str or None
        The typed text for ``"type"``, the key (``"escape"``, ``"ctrl+z"``) for ``"key"``.
    index : int or None
        Position of ``target`` in the screen's element list, when known.

    Examples
    --------
    >>> from spatialobs.screen import Element
    >>> a = Action("type", Element((0, 0, 10, 10), "Edit", editable=True), "hi")
    >>> a.label
    'type hi into edit'
    """

    op: str
    target: Optional[Element] = None
    value: Optional[str] = None
    index: Optional[int] = None

    def __post_init__(self) -> None:
        if self.op not in OPERATIONS:
            raise InvalidInputError(f"action op must be one of {OPERATIONS}, got {self.op!r}")
        if self.op == "key":
            if not isinstance(self.value, str) or not self.value:
                raise InvalidInputError(f"a key action needs the key name as value, got {self.value!r}")
            return
        if not isinstance(self.target, Element):
            raise InvalidInputError(f"a {self.op} action needs an Element target, got {type(self.target).__name__}")
        if self.op == "type" and not isinstance(self.value, str):
            raise InvalidInputError(f"a type action needs a string value, got {self.value!r}")

    @property
    def label(self) -> str:
        """Short human-readable text: what the heuristic prior matches the goal against."""
        if self.op == "key":
            return f"press {self.value}"
        assert self.target is not None
        name = normalize_text(self.target.text or "") or normalize_text(self.target.role)
        if self.op == "type":
            return f"type {self.value} into {name}"
        return f"click {name}"

    @property
    def target_text(self) -> str:
        """The normalized text of the target ('' for none)."""
        return normalize_text(self.target.text or "") if self.target is not None else ""


def cell_of(bounds: Sequence[float], width: float, height: float, grid: int) -> Tuple[int, int]:
    """The (col, row) lattice cell of a box's center, as the atoms compute it.

    Examples
    --------
    >>> cell_of((0, 0, 100, 100), 300, 300, 3)
    (0, 0)
    """
    x0, y0, x1, y1 = (float(v) for v in bounds)
    col = int(math.floor(((x0 + x1) * 0.5) * grid / width))
    row = int(math.floor(((y0 + y1) * 0.5) * grid / height))
    return min(max(col, 0), grid - 1), min(max(row, 0), grid - 1)


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("|", "\\|")


def signature(action: Action, screen: Screen, grid: int = 30) -> str:
    """The deterministic signature σ of an action on a screen (see the module docstring).

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen
    >>> ok = Element((200, 500, 300, 540), "Button", " OK ", clickable=True)
    >>> s = Screen([ok], 600, 600)
    >>> signature(Action("click", ok), s)
    'click|button|ok|12,26'
    >>> signature(Action("key", value="escape"), s)
    'key|||escape'
    """
    if not isinstance(action, Action):
        raise InvalidInputError(f"signature expects an Action, got {type(action).__name__}")
    if not isinstance(screen, Screen):
        raise InvalidInputError(f"signature expects a Screen, got {type(screen).__name__}")
    if isinstance(grid, bool) or not isinstance(grid, int) or grid < 1:
        raise InvalidInputError(f"grid must be a positive integer, got {grid!r}")
    if action.op == "key":
        return f"key|||{_esc(action.value or '')}"
    t = action.target
    assert t is not None
    col, row = cell_of(t.bounds, screen.width, screen.height, grid)
    head = f"{action.op}|{_esc(normalize_text(t.role))}|{_esc(normalize_text(t.text or ''))}|{col},{row}"
    if action.op == "type":
        return f"{head}|{_esc(action.value or '')}"
    return head


def signatures(actions: Sequence[Action], screen: Screen, grid: int = 30) -> List[str]:
    r"""The signatures of several actions on one screen: ``[signature(a, screen, grid) for a in actions]``.

    One call per step of an exploration; the loop is compiled, with the same
    results and errors as :func:`signature`.

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen
    >>> ok = Element((200, 500, 300, 540), "Button", "O|K", clickable=True)
    >>> signatures([Action("click", ok), Action("type", ok, "a\\b"), Action("key", value="tab")], Screen([ok], 600, 600))
    ['click|button|o\\|k|12,26', 'type|button|o\\|k|12,26|a\\\\b', 'key|||tab']
    """
    if isinstance(actions, (str, bytes)) or not isinstance(actions, Sequence):
        raise InvalidInputError(f"signatures expects a sequence of Actions, got {type(actions).__name__}")
    return _signatures(list(actions), screen, grid)


def _signatures_py(actions: List[Action], screen: Screen, grid: int) -> List[str]:
    # The pure-Python twin of the compiled _cactions.signatures (its test oracle, and the
    # fallback when the compiled module is absent).
    if not isinstance(screen, Screen):
        raise InvalidInputError(f"signature expects a Screen, got {type(screen).__name__}")
    if isinstance(grid, bool) or not isinstance(grid, int) or grid < 1:
        raise InvalidInputError(f"grid must be a positive integer, got {grid!r}")
    return [signature(a, screen, grid) for a in actions]


def candidate_actions(
    screen: Screen,
    values: Iterable[str] = ("text",),
    keys: Iterable[str] = (),
) -> List[Action]:
    """The actions available on a screen, in element order.

    A click for every clickable element, a type action per value for every editable
    element (typing only into editable ones), then one key action per key.

    Parameters
    ----------
    screen : Screen
    values : iterable of str
        Arguments to type into each editable element.
    keys : iterable of str
        Key presses offered on every screen (for example ``("escape",)``).

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen
    >>> s = Screen([Element((0, 0, 50, 20), "Button", "Go", clickable=True),
    ...             Element((0, 30, 50, 50), "Edit", editable=True),
    ...             Element((0, 60, 50, 80), "Text", "static")], 100, 100)
    >>> [a.label for a in candidate_actions(s, values=("a", "b"))]
    ['click go', 'type a into edit', 'type b into edit']
    """
    if not isinstance(screen, Screen):
        raise InvalidInputError(f"candidate_actions expects a Screen, got {type(screen).__name__}")
    if isinstance(values, str):
        raise InvalidInputError(f"values must be an iterable of strings, not the string {values!r}")
    vals = list(values)
    for v in vals:
        if not isinstance(v, str):
            raise InvalidInputError(f"typed values must be strings, got {v!r}")
    out: List[Action] = []
    for i, e in enumerate(screen.elements):
        if e.clickable:
            out.append(Action("click", e, None, i))
        if e.editable:
            out.extend(Action("type", e, v, i) for v in vals)
    out.extend(Action("key", None, k) for k in keys)
    return out


try:
    # below the definitions: the compiled module imports Action and cell_of from here
    from spatialobs.screen._cactions import signatures as _signatures
except ImportError:  # a source tree without the compiled module
    _signatures = _signatures_py
