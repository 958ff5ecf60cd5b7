"""Action priors and selectors (DESIGN §8): one-step PUCT and the greedy baseline.

A *prior* maps ``(screen, actions, goal)`` to one nonnegative weight per action;
:func:`prior_weights` normalizes it to ``P(σ | s)``. Built in:

* ``"uniform"``: ``P = 1 / |A|``;
* ``"heuristic"``: ``P̃(σ) = 1 + 0.2 · |tokens(goal) ∩ tokens(label σ)| +
  0.15 · [target editable ∧ op is type]``, normalized. ``tokens`` are the runs of
  letters and digits of the normalized text; the label of σ is its target's text
  (its role when it has none) and, for typing, the typed value;
* any callable with that signature (a learned prior).

:class:`PUCT` picks ``argmax_σ Q(s, σ) + c_p · P(σ | s) · √(Σ_σ′ N(s, σ′)) / (1 + N(s, σ))``
from the graph's counts (one executed action per selection: no rollouts, no backup);
:class:`Greedy` picks the highest prior. Ties go to the higher prior, then to the
earlier action in the candidate list.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, List, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.features import normalize_text
from spatialobs.screen.model import Screen

__all__ = [
    "Prior",
    "uniform_prior",
    "heuristic_prior",
    "prior_weights",
    "tokens",
    "Selector",
    "PUCT",
    "Greedy",
    "puct_scores",
]

Prior = Callable[[Screen, Sequence[Action], str], Sequence[float]]
# prior weights as the selectors take them: a list or prior_weights' array
_Weights = Union[Sequence[float], npt.NDArray[np.float64]]

_TOKEN = re.compile(r"[^\W_]+")


def tokens(text: Optional[str]) -> frozenset:
    """The set of letter/digit runs of the normalized text.

    Examples
    --------
    >>> sorted(tokens("Save As..."))
    ['as', 'save']
    """
    return frozenset(_TOKEN.findall(normalize_text(text or "")))


def uniform_prior(screen: Screen, actions: Sequence[Action], goal: str = "") -> List[float]:
    """Weight 1 for every action.

    Examples
    --------
    >>> uniform_prior(None, [1, 2, 3])
    [1.0, 1.0, 1.0]
    """
    return [1.0] * len(actions)


def _label_tokens(a: Action) -> frozenset:
    if a.op == "key":
        return tokens(a.value)
    assert a.target is not None
    base = tokens(a.target.text) or tokens(a.target.role)
    if a.op == "type":
        base = base | tokens(a.value)
    return base


def heuristic_prior(screen: Screen, actions: Sequence[Action], goal: str = "") -> List[float]:
    """``1 + 0.2 · |tokens(goal) ∩ tokens(label)| + 0.15 · [editable ∧ type]`` per action (unnormalized).

    Examples
    --------
    >>> from spatialobs.screen import Element
    >>> save = Action("click", Element((0, 0, 9, 9), "MenuItem", "Save As...", clickable=True))
    >>> edit = Action("type", Element((0, 0, 9, 9), "Edit", editable=True), "notes")
    >>> [round(w, 2) for w in heuristic_prior(None, [save, edit], "save the notes")]
    [1.2, 1.35]
    """
    g = tokens(goal)
    out = []
    for a in actions:
        w = 1.0 + 0.2 * len(g & _label_tokens(a))
        if a.op == "type" and a.target is not None and a.target.editable:
            w += 0.15
        out.append(w)
    return out


_PRIORS = {"uniform": uniform_prior, "heuristic": heuristic_prior}


def prior_weights(prior: Union[str, Prior], screen: Screen, actions: Sequence[Action], goal: str = "") -> npt.NDArray[np.float64]:
    """``P(σ | s)``: the prior's weights normalized to sum 1 (uniform when they sum to 0).

    Examples
    --------
    >>> prior_weights("uniform", None, [1, 2, 3, 4]).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    fn = resolve_prior(prior)
    n = len(actions)
    if n == 0:
        return np.empty(0, dtype=np.float64)
    w = np.asarray(fn(screen, actions, goal), dtype=np.float64).ravel()
    if w.shape != (n,):
        raise InvalidInputError(f"the prior returned {w.size} weights for {n} actions")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        bad = int(np.flatnonzero(~np.isfinite(w) | (w < 0))[0])
        raise InvalidInputError(f"prior weight {bad} is {w[bad]!r}; weights must be finite and >= 0")
    total = float(w.sum())
    if total <= 0:
        return np.full(n, 1.0 / n)
    return w / total


def resolve_prior(prior: Union[str, Prior]) -> Prior:
    """The prior function for a name (``"uniform"``, ``"heuristic"``) or a callable."""
    if isinstance(prior, str):
        if prior not in _PRIORS:
            raise InvalidInputError(f"prior must be 'uniform', 'heuristic' or a callable, got {prior!r}")
        return _PRIORS[prior]
    if not callable(prior):
        raise InvalidInputError(f"prior must be 'uniform', 'heuristic' or a callable, got {type(prior).__name__}")
    return prior


def _argmax(scores: Sequence[float], prior: _Weights) -> int:
    best = 0
    for i in range(1, len(scores)):
        if scores[i] > scores[best] or (scores[i] == scores[best] and prior[i] > prior[best]):
            best = i
    return best


def puct_scores(q: Sequence[float], n: Sequence[int], prior: _Weights, total: float, c_p: float = 1.0) -> List[float]:
    """``Q + c_p · P · √total / (1 + N)`` per action.

    Examples
    --------
    >>> puct_scores([0.0, 1.0], [0, 3], [0.5, 0.5], 4)
    [1.0, 1.25]
    """
    root = math.sqrt(total)
    return [float(qi) + c_p * float(pi) * root / (1.0 + ni) for qi, ni, pi in zip(q, n, prior)]


class Selector:
    """Choose one action; subclasses implement :meth:`scores`."""

    name = "selector"

    def scores(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> List[float]:
        raise NotImplementedError

    def select(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> int:
        """Index of the chosen action: the best score; ties to the higher prior, then the earlier action."""
        if len(signatures) == 0:
            raise InvalidInputError("no candidate actions to select from")
        if len(prior) != len(signatures):
            raise InvalidInputError(f"{len(prior)} prior weights for {len(signatures)} actions")
        return _argmax(self.scores(graph, state, signatures, prior), prior)


class PUCT(Selector):
    """One-step PUCT over the graph's counts.

    Parameters
    ----------
    c_p : float, default 1.0
        Exploration constant.

    Examples
    --------
    >>> from spatialobs.screen import ScreenGraph, Element, Screen
    >>> g = ScreenGraph()
    >>> s = g.observe(Screen([Element((0, 0, 9, 9), "Text", "home")], 10, 10))
    >>> PUCT().select(g, s, ["a", "b"], [0.4, 0.6])  # nothing tried: all scores 0, higher prior
    1
    """

    name = "puct"

    def __init__(self, c_p: float = 1.0) -> None:
        if isinstance(c_p, bool) or not isinstance(c_p, (int, float)) or not math.isfinite(c_p) or c_p < 0:
            raise InvalidInputError(f"c_p must be a finite number >= 0, got {c_p!r}")
        self.c_p = float(c_p)

    def scores(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> List[float]:
        tries = graph.tries(state)
        total = float(sum(tries.values()))
        q = [graph.q(state, s) for s in signatures]
        n = [tries.get(s, 0) for s in signatures]
        return puct_scores(q, n, prior, total, self.c_p)

    def __repr__(self) -> str:
        return f"PUCT(c_p={self.c_p})"


class Greedy(Selector):
    """The highest prior, whatever the graph says.

    Examples
    --------
    >>> Greedy().select(None, 0, ["a", "b", "c"], [0.2, 0.5, 0.3])
    1
    """

    name = "greedy"

    def scores(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> List[float]:
        return [float(p) for p in prior]

    def __repr__(self) -> str:
        return "Greedy()"
