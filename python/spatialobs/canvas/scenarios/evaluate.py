"""Scoring an edit against a task: Correct target, Correct placement, Full task success.

The definitions are the CanvasObs paper's (DESIGN §6):

* a candidate counts as *moved* when its page position changes;
* **correct target**: the moved candidates are exactly the intended ones (and no
  candidate was deleted);
* **correct placement** (only judged for a correct target): the moved objects keep
  their size and other state, overlap one another by at most 1 square unit, and
  lie fully inside the destination with an inset of 8;
* **full task success**: correct target and placement, every expected native
  relation holds after the edit, and nothing outside the target set was added,
  deleted or updated, except a connector bound to a target (it follows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

import numpy as np

from spatialobs import geometry as G
from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.model import Canvas

__all__ = ["Relation", "Task", "Outcome", "evaluate", "MOVE_EPS", "OVERLAP_TOL", "INSET"]

#: A page position change smaller than this is not a move.
MOVE_EPS = 1e-6
#: Largest overlap (square units) allowed between two moved objects.
OVERLAP_TOL = 1.0
#: Inset the moved objects keep from the destination's edges.
INSET = 8.0
_STATE_FIELDS = ("type", "w", "h", "rotation", "text", "name", "style", "opacity", "locked", "hidden", "props")


@dataclass(frozen=True)
class Relation:
    """An expected native relation: ``parent`` (``from_id``'s parent is ``to_id``) or
    ``bound`` (connector ``from_id`` attached to ``to_id``, optionally at ``terminal``).

    Examples
    --------
    >>> Relation("parent", "shape:card", "shape:frame")
    Relation(kind='parent', from_id='shape:card', to_id='shape:frame', terminal=None)
    """

    kind: str
    from_id: str
    to_id: str
    terminal: Optional[str] = None

    def holds(self, canvas: Canvas) -> bool:
        """Whether the relation is present in ``canvas``."""
        if self.kind == "parent":
            nd = canvas.nodes.get(self.from_id)
            return nd is not None and nd.parent == self.to_id
        return any(b.from_id == self.from_id and b.to_id == self.to_id
                   and (self.terminal is None or b.terminal == self.terminal) for b in canvas.bindings.values())


@dataclass(frozen=True)
class Task:
    """What an edit should do.

    Attributes
    ----------
    candidates : tuple of str
        The objects a reader could plausibly pick (all of them are watched).
    targets : tuple of str
        The intended ones, a subset of ``candidates``.
    destination : str or (x0, y0, x1, y1)
        A node id (its page bounds after the edit) or a page box.
    relations : tuple of Relation
        Native relations that must hold after the edit.
    inset : float

    Examples
    --------
    >>> Task(("a", "b"), ("a",), "slot").inset
    8.0
    """

    candidates: Tuple[str, ...]
    targets: Tuple[str, ...]
    destination: Union[str, Tuple[float, float, float, float]]
    relations: Tuple[Relation, ...] = ()
    inset: float = INSET


class Outcome(NamedTuple):
    """The three scores and what decided them.

    ``details`` holds ``moved`` (candidates whose page position changed),
    ``deleted_candidates``, ``placement_problems`` and ``violations``.

    Examples
    --------
    >>> Outcome(True, False, False, {})[:3]
    (True, False, False)
    """

    correct_target: bool
    correct_placement: bool
    full_success: bool
    details: Dict[str, Any]


def _check_task(before: Canvas, task: Task) -> None:
    if not isinstance(task, Task):
        raise InvalidInputError(f"task must be a Task, got {type(task).__name__}")
    for i in task.candidates:
        if i not in before.nodes:
            raise InvalidInputError(f"task candidate {i!r} is not a node of the canvas before the edit")
    for i in task.targets:
        if i not in task.candidates:
            raise InvalidInputError(f"task target {i!r} is not one of the candidates")
    if isinstance(task.destination, str):
        if task.destination not in before.nodes:
            raise InvalidInputError(f"task destination {task.destination!r} is not a node of the canvas")
    else:
        try:
            box = [float(v) for v in task.destination]
        except (TypeError, ValueError):
            box = []
        if len(box) != 4 or not np.all(np.isfinite(box)) or box[2] < box[0] or box[3] < box[1]:
            raise InvalidInputError(f"task destination {task.destination!r} must be a node id or a box (x0, y0, x1, y1)")


def evaluate(before: Canvas, after: Canvas, task: Task) -> Outcome:
    """Score the edit that turned ``before`` into ``after``.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("slot", "geo", "page:page", "a1", 0, 0, 100, 100))
    >>> _ = c.add(Node("a", "geo", "page:page", "a2", 300, 0, 20, 20))
    >>> _ = c.add(Node("b", "geo", "page:page", "a3", 400, 0, 20, 20))
    >>> task = Task(("a", "b"), ("a",), "slot")
    >>> d = c.copy()
    >>> _ = d.update("a", x=10, y=10)
    >>> evaluate(c, d, task)[:3]
    (True, True, True)
    >>> _ = d.update("b", x=10, y=50)
    >>> evaluate(c, d, task).correct_target
    False
    """
    if not isinstance(before, Canvas) or not isinstance(after, Canvas):
        raise InvalidInputError("before and after must be Canvas objects")
    _check_task(before, task)
    details: Dict[str, Any] = {}
    deleted = [i for i in task.candidates if i not in after.nodes]
    moved: List[str] = []
    for i in task.candidates:
        if i in after.nodes:
            b0, b1 = before.page_bounds(i), after.page_bounds(i)
            if abs(b0[0] - b1[0]) > MOVE_EPS or abs(b0[1] - b1[1]) > MOVE_EPS:
                moved.append(i)
    details["moved"] = moved
    details["deleted_candidates"] = deleted
    correct_target = not deleted and set(moved) == set(task.targets)

    placement_problems: List[str] = []
    if correct_target:
        for i in moved:
            b0, b1 = before.page_bounds(i), after.page_bounds(i)
            if abs((b0[2] - b0[0]) - (b1[2] - b1[0])) > MOVE_EPS or abs((b0[3] - b0[1]) - (b1[3] - b1[1])) > MOVE_EPS:
                placement_problems.append(f"{i}: size changed")
            n0, n1 = before.nodes[i], after.nodes[i]
            for f in _STATE_FIELDS:
                if getattr(n0, f) != getattr(n1, f):
                    placement_problems.append(f"{i}: {f} changed")
        dest: Optional[Tuple[float, ...]]
        if isinstance(task.destination, str):
            if task.destination not in after.nodes:
                placement_problems.append(f"destination {task.destination} was deleted")
                dest = None
            else:
                dest = after.page_bounds(task.destination)
        else:
            dest = tuple(float(v) for v in task.destination)
        if dest is not None:
            ix0, iy0, ix1, iy1 = dest[0] + task.inset, dest[1] + task.inset, dest[2] - task.inset, dest[3] - task.inset
            for i in moved:
                x0, y0, x1, y1 = after.page_bounds(i)
                if not (x0 >= ix0 - 1e-9 and y0 >= iy0 - 1e-9 and x1 <= ix1 + 1e-9 and y1 <= iy1 + 1e-9):
                    placement_problems.append(f"{i}: not inside the destination with inset {task.inset:g}")
        if len(moved) > 1:
            boxes = np.array([after.page_bounds(i) for i in moved], dtype=np.float64)
            pairs, areas = G.overlap_pairs(boxes)
            for a, b, ar in zip(pairs[0].tolist(), pairs[1].tolist(), areas.tolist()):
                if ar > OVERLAP_TOL:
                    placement_problems.append(f"{moved[a]} and {moved[b]} overlap by {ar:g}")
    correct_placement = correct_target and not placement_problems
    details["placement_problems"] = placement_problems

    violations: List[str] = []
    for rel in task.relations:
        if not rel.holds(after):
            violations.append(f"expected {rel.kind} {rel.from_id} -> {rel.to_id} does not hold")
    targets = set(task.targets)
    followers = {b.from_id for b in after.bindings.values() if b.to_id in targets}
    for i in after.nodes.keys() - before.nodes.keys():
        violations.append(f"{i} was added")
    for i in before.nodes.keys() - after.nodes.keys():
        violations.append(f"{i} was deleted")
    for i, n0 in before.nodes.items():
        now = after.nodes.get(i)
        if now is not None and now != n0 and i not in targets and i not in followers:
            violations.append(f"{i} was updated")
    if dict(before.bindings) != dict(after.bindings):
        diff = sorted(k for k in before.bindings.keys() | after.bindings.keys()
                      if before.bindings.get(k) != after.bindings.get(k))
        violations.extend(f"binding {k} was added, deleted or changed" for k in diff)
    details["violations"] = violations
    full = correct_placement and not violations
    return Outcome(correct_target, correct_placement, full, details)
