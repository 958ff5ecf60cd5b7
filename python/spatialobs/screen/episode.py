"""An exploration's record: the :class:`Step` taken and the :class:`Episode` they make, a floor below
:mod:`spatialobs.screen.explore` (which runs episodes and exports both) so that what reads episodes (the
traces, the training data) does not import the explorer.

Examples
--------
>>> from spatialobs.screen.actions import Action
>>> st = Step(0, 0, "k", Action("key", value="escape"), 1, True, True, 2.0, 0.5, 0.5, None, 1.0, 0.0, 10, 10)
>>> Episode("notepad", None, "", "puct", 0, [st]).steps[0].target
1
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from spatialobs.screen.actions import Action
from spatialobs.screen.model import Screen

__all__ = ["Step", "Episode"]


@dataclass(frozen=True)
class Step:
    """One executed step of an episode.

    ``source`` and ``target`` are graph states (``target`` is where the agent is
    after the step: after a capture, the state it recovered to); ``capture`` names
    the other application reached, if any; ``prior`` and ``score`` are the chosen
    action's prior probability and selector score; ``digest`` identifies the
    source screen exactly (a hash of its atom sets), across graphs;
    ``source_observation`` and ``observation`` are the observations (seqs in the
    graph's log) the action was taken on and produced (0 for a capture).
    """

    t: int
    source: int
    signature: str
    action: Action
    target: int
    state_novel: bool
    edge_novel: bool
    reward: float
    u_source: float
    u_target: float
    capture: Optional[str]
    prior: float
    score: float
    width: float
    height: float
    digest: str = ""
    screen: Optional[Screen] = None
    source_observation: int = 0
    observation: int = 0


@dataclass
class Episode:
    """The steps of one exploration run and its metrics (see the module docstring)."""

    app: str
    start: Any
    goal: str
    selector: str
    start_state: int
    steps: List[Step] = field(default_factory=list)
    metrics: Dict[str, float] = field(default_factory=dict)
    timing: Dict[str, float] = field(default_factory=dict)
    faults: int = 0
    #: The episode number written into the log.
    episode: int = 0
