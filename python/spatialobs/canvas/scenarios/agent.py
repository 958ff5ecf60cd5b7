"""A rule-based reference agent for the Remote Team Handoff suite.

:func:`choose` reads only a context JSON string (an :meth:`Observation.to_json` or a
:func:`~spatialobs.canvas.baseline.context_json`) and the prompt, and names the
objects to move and where. It acts only on evidence present in the context: when
the decisive field is missing it moves nothing rather than guess.
:func:`apply_choice` carries a choice out through the canvas write path, placing
the objects inside the destination (inset 8, no overlaps) and reparenting them
into the destination's frame.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.model import Canvas

__all__ = ["Choice", "choose", "apply_choice", "HandoffRun", "run_handoff"]


@dataclass(frozen=True)
class Choice:
    """Objects to move (``targets``) into ``destination`` (a node id, None when unknown).

    Examples
    --------
    >>> Choice(("shape:a",), "shape:slot").targets
    ('shape:a',)
    """

    targets: Tuple[str, ...]
    destination: Optional[str]


def _label(rec: Dict[str, Any]) -> Optional[str]:
    return rec.get("name") or rec.get("text")


def choose(context: str, prompt: str) -> Choice:
    """Pick targets and destination for a Remote Team Handoff prompt.

    Examples
    --------
    >>> from spatialobs.canvas.scenarios.handoff import remote_team_handoff
    >>> from spatialobs.canvas.observe import observe
    >>> s = remote_team_handoff(5)
    >>> choose(observe(s.canvas, s.viewport, origin=s.origin).to_json(), s.prompt)
    Choice(targets=('shape:chart2',), destination='shape:chartslot')
    """
    try:
        data = json.loads(context)
    except ValueError as exc:
        raise InvalidInputError(f"context is not valid JSON: {exc}") from None
    recs: List[Dict[str, Any]] = data.get("objects") or data.get("shapes") or []
    rels: List[Dict[str, Any]] = data.get("relations") or []
    quoted = re.findall(r'"([^"]+)"', prompt)
    by_label: Dict[str, List[str]] = {}
    for r in recs:
        by_label.setdefault(_label(r) or "", []).append(r["id"])

    def one(label: str) -> Optional[str]:
        ids = by_label.get(label, [])
        return ids[0] if len(ids) == 1 else None

    dest = one(quoted[-1]) if quoted else None
    targets: List[str] = []
    if "editable copy" in prompt:  # archive: the copy that is not locked
        targets = [r["id"] for r in recs if r.get("text") == quoted[0] and "locked" not in r.get("flags", ())]
    elif "blue" in prompt:  # color: the draft whose color is blue
        targets = [r["id"] for r in recs if r.get("text") == quoted[0] and r.get("style", {}).get("color") == "blue"]
    elif "do not belong" in prompt:  # membership: inside the frame, but not natively
        frame = one(quoted[0])
        targets = [x["from"] for x in rels if x["type"] == "inside" and x["to"] == frame and not x["native"]]
    elif "supported by" in prompt:  # connector: the far end of an arrow bound at both ends
        source = one(quoted[0])
        arrows = {x["from"] for x in rels if x["type"] == "bound" and x["native"] and x["to"] == source}
        targets = [x["to"] for x in rels if x["type"] == "bound" and x["native"] and x["from"] in arrows and x["to"] != source]
    return Choice(tuple(sorted(set(targets))), dest)


def _free_spot(box: Tuple[float, float, float, float], w: float, h: float, inset: float,
               taken: List[Tuple[float, float, float, float]], step: float = 4.0) -> Optional[Tuple[float, float]]:
    x0, y0, x1, y1 = box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset
    y = y0
    while y + h <= y1:
        x = x0
        while x + w <= x1:
            if all(x + w <= t[0] or t[2] <= x or y + h <= t[1] or t[3] <= y for t in taken):
                return (x, y)
            x += step
        y += step
    return None


def apply_choice(canvas: Canvas, choice: Choice, inset: float = 8.0) -> List[str]:
    """Move ``choice.targets`` inside ``choice.destination`` through :meth:`Canvas.update`.

    Each target keeps its size and state, lands fully inside the destination
    with ``inset`` (plus a small margin), avoids objects already there and the
    other targets, and becomes a child of the destination's frame (the
    destination itself when it is a frame), as dropping it there would make it.
    Returns the ids moved; nothing is moved when a target does not fit.

    Examples
    --------
    >>> from spatialobs.canvas.scenarios.handoff import remote_team_handoff
    >>> from spatialobs.canvas.scenarios.evaluate import evaluate
    >>> s = remote_team_handoff(0)
    >>> after = s.canvas.copy()
    >>> apply_choice(after, Choice(s.task.targets, "shape:key"))
    ['shape:copy0']
    >>> evaluate(s.canvas, after, s.task).full_success
    True
    """
    if not choice.targets or choice.destination is None:
        return []
    dest = choice.destination
    box = canvas.page_bounds(dest)
    frame = dest if canvas.nodes[dest].type == "frame" else canvas.frame_of(dest)
    skip = set(choice.targets) | {dest} | set(canvas.ancestors(dest))
    taken = []
    for nid in canvas.paint_order(canvas.page_of(dest)):
        if nid in skip or canvas.nodes[nid].type == "group":
            continue
        b = canvas.page_bounds(nid)
        if b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3]:
            taken.append(b)
    plan = []
    for nid in choice.targets:
        b = canvas.page_bounds(nid)
        spot = _free_spot(box, b[2] - b[0], b[3] - b[1], inset + 2.0, taken)
        if spot is None:
            return []
        taken.append((spot[0], spot[1], spot[0] + b[2] - b[0], spot[1] + b[3] - b[1]))
        plan.append((nid, spot[0] - b[0], spot[1] - b[1]))
    geo = canvas.geometry()
    with canvas.batch():
        for nid, dx, dy in plan:
            nd = canvas.nodes[nid]
            r = geo.row[nid]
            gx, gy = geo.px[r] + dx, geo.py[r] + dy  # the node's new page origin
            if frame is not None:
                fr = geo.row[frame]
                lx, ly = gx - geo.px[fr], gy - geo.py[fr]
                if geo.rotation[fr] != 0:
                    raise InvalidInputError(f"destination frame {frame!r} is rotated; not supported")
                canvas.update(nid, parent=frame, x=float(lx), y=float(ly), rotation=float(geo.rotation[r]) if nd.rotation else nd.rotation)
            else:
                canvas.update(nid, parent=canvas.page_of(dest), x=float(gx), y=float(gy))
    return [p[0] for p in plan]


@dataclass(frozen=True)
class HandoffRun:
    """One Remote Team Handoff configuration run by the reference agent on one context.

    Attributes
    ----------
    config : int
    family : str
    context : {"observation", "baseline"}
    choice : Choice
    outcome : Outcome
        :func:`~spatialobs.canvas.evaluate` of the edit the choice made.
    context_bytes : int
        Size of the context the agent read (UTF-8 bytes).
    """

    config: int
    family: str
    context: str
    choice: Choice
    outcome: Any
    context_bytes: int


def run_handoff(config: int, context: str = "observation") -> HandoffRun:
    """Run the reference agent on one configuration, reading the observation or the baseline.

    The agent sees only the context JSON and the prompt; its choice is applied to a copy
    of the scenario's canvas through the write path and scored with ``evaluate``.

    Examples
    --------
    >>> run_handoff(8).outcome.full_success, run_handoff(8, "baseline").outcome.correct_target
    (True, False)
    """
    from spatialobs.canvas.baseline import baseline_context, context_json
    from spatialobs.canvas.scenarios.evaluate import evaluate
    from spatialobs.canvas.observe import observe
    from spatialobs.canvas.scenarios.handoff import remote_team_handoff

    if context not in ("observation", "baseline"):
        raise InvalidInputError(f"context must be 'observation' or 'baseline', got {context!r}")
    s = remote_team_handoff(config)
    if context == "observation":
        text = observe(s.canvas, s.viewport, origin=s.origin).to_json()
    else:
        text = context_json(baseline_context(s.canvas, s.viewport, origin=s.origin))
    choice = choose(text, s.prompt)
    after = s.canvas.copy()
    apply_choice(after, choice)
    return HandoffRun(config, s.family, context, choice, evaluate(s.canvas, after, s.task), len(text.encode()))
