"""Action priors and selectors (DESIGN §8): one-step PUCT and the Greedy and Random baselines.

A *prior* maps ``(screen, actions, goal)`` to one nonnegative weight per action;
:func:`prior_weights` normalizes it to ``P(σ | s)``. Built in:

* ``"uniform"``: ``P = 1 / |A|``;
* ``"heuristic"``: ``P̃(σ) = 1 + 0.2 · |tokens(goal) ∩ tokens(label σ)| +
  0.15 · [target editable ∧ op is type]``, normalized. ``tokens`` are the runs of
  letters and digits of the normalized text; the label of σ is its target's text
  (its role when it has none) and, for typing, the typed value;
* ``"learned:FILE"``: a :class:`~spatialobs.screen.prior.LearnedPrior` saved by
  ``spatialobs train-prior``;
* any callable with that signature.

:class:`PUCT` picks ``argmax_σ Q̂(s, σ) + c_p · P(σ | s) · √(Σ_σ′ N(s, σ′)) / (1 + N(s, σ))``
from the graph's counts (one executed action per selection: no rollouts, no backup).
Three choices the paper leaves open are parameters (see :class:`PUCT`):

* **first-play urgency** ``fpu``: ``Q̂`` of an action never tried from ``s`` (a
  number, or ``"parent"``: the mean reward of every try from ``s``, 0 before any);
* **reward normalization** ``normalize``: ``Q̂ = Q / (λ_state + λ_edge + λ_amb)``,
  so that ``Q̂`` lies in ``[0, 1]`` like the exploration term's scale;
* **tie-breaking** ``ties``: ``"prior"`` (the higher prior, then the earlier action)
  or ``"hash"`` (the smallest stable hash of ``(s, Σ N(s, ·), σ)``: a fair, reproducible
  draw among equals that does not depend on the candidates' order).

:data:`PUCT_SETTINGS` names the paper-exact setting (``"paper"``: ``Q = 0`` for an
untried action, raw rewards, ties to the prior) and the default (``"default"``),
which the studies chose (:func:`spatialobs.screen.studies.fpu_sweep`).
:class:`Greedy` picks the highest prior; :class:`Random` picks uniformly among the
executable actions.
"""

from __future__ import annotations

import hashlib
import math
import random as _random
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

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
    "PUCT_SETTINGS",
    "Greedy",
    "Random",
    "SELECTORS",
    "make_selector",
    "puct_scores",
    "resolve_prior",
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
    """The prior function for a name (``"uniform"``, ``"heuristic"``, ``"learned:FILE"``) or a callable.

    A learned prior's file is read once per path and modification time.

    Examples
    --------
    >>> resolve_prior("uniform").__name__
    'uniform_prior'
    """
    if isinstance(prior, str):
        if prior.startswith("learned:") and len(prior) > len("learned:"):
            from spatialobs.screen.prior import load_prior_cached

            return load_prior_cached(prior[len("learned:"):])
        if prior not in _PRIORS:
            raise InvalidInputError(f"prior must be 'uniform', 'heuristic', 'learned:FILE' or a callable, got {prior!r}")
        return _PRIORS[prior]
    if not callable(prior):
        raise InvalidInputError(f"prior must be 'uniform', 'heuristic', 'learned:FILE' or a callable, "
                                f"got {type(prior).__name__}")
    return prior


def _argmax(scores: Sequence[float], prior: _Weights) -> int:
    best = 0
    for i in range(1, len(scores)):
        if scores[i] > scores[best] or (scores[i] == scores[best] and prior[i] > prior[best]):
            best = i
    return best


def _tie_hash(state: int, total: float, signature: str) -> bytes:
    return hashlib.blake2b(f"{int(state)}\x00{int(total)}\x00{signature}".encode("utf-8"), digest_size=8).digest()


def _argmax_hash(scores: Sequence[float], signatures: Sequence[str], state: int, total: float) -> int:
    # The state is part of the key so that new states do not all start with the same action.
    top = max(scores)
    best = [i for i, v in enumerate(scores) if v == top]
    return min(best, key=lambda i: (_tie_hash(state, total, signatures[i]), i))


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

    def _check(self, signatures: Sequence[str], prior: _Weights) -> None:
        if len(signatures) == 0:
            raise InvalidInputError("no candidate actions to select from")
        if len(prior) != len(signatures):
            raise InvalidInputError(f"{len(prior)} prior weights for {len(signatures)} actions")

    def select(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> int:
        """Index of the chosen action: the best score; ties to the higher prior, then the earlier action."""
        self._check(signatures, prior)
        return _argmax(self.scores(graph, state, signatures, prior), prior)


#: Named PUCT settings: ``"paper"`` is the paper-exact one (Q = 0 for an untried
#: action, raw rewards, ties to the higher prior); ``"default"`` is what ``PUCT()``
#: uses, chosen by :func:`spatialobs.screen.studies.fpu_sweep` (see
#: docs/results/exploration.md): an untried action scores as a best possible try
#: (``fpu = 1`` on normalized rewards), so every action of a state is tried once
#: before any is repeated, in prior order, equals drawn by a stable hash.
PUCT_SETTINGS: Dict[str, Dict[str, Any]] = {
    "paper": {"fpu": 0.0, "normalize": False, "ties": "prior"},
    "default": {"fpu": 1.0, "normalize": True, "ties": "hash"},
}

_TIES = ("prior", "hash")


class PUCT(Selector):
    """One-step PUCT over the graph's counts.

    ``score(σ) = Q̂(s, σ) + c_p · P(σ | s) · √(Σ_σ′ N(s, σ′)) / (1 + N(s, σ))`` where
    ``Q̂`` is the mean reward of the tries of ``(s, σ)`` (divided by
    ``λ_state + λ_edge + λ_amb`` when ``normalize``) and, for an action never tried
    from ``s``, the first-play urgency ``fpu``.

    Parameters
    ----------
    c_p : float, default 1.0
        Exploration constant.
    fpu : float or "parent", default 1.0
        ``Q̂`` of an untried action, in the units of ``Q̂`` (normalized rewards when
        ``normalize``): a number, or ``"parent"`` for the mean ``Q̂`` of every try from
        the state (0 before any). ``0`` is the paper's setting.
    normalize : bool, default True
        Divide rewards by ``Σ λ`` (the largest reward of a step without an
        ambiguity gain), putting ``Q̂`` on the exploration term's scale.
    ties : "prior" or "hash", default "hash"
        Among equal scores: the higher prior, then the earlier action (``"prior"``),
        or the smallest stable hash of ``(s, Σ N(s, ·), σ)`` (``"hash"``).

    ``PUCT()`` is :data:`PUCT_SETTINGS` ``["default"]``; :meth:`paper` is the
    paper-exact setting.

    Examples
    --------
    >>> from spatialobs.screen import ScreenGraph, Element, Screen
    >>> g = ScreenGraph()
    >>> s = g.observe(Screen([Element((0, 0, 9, 9), "Text", "home")], 10, 10))
    >>> PUCT.paper().select(g, s, ["a", "b"], [0.4, 0.6])  # nothing tried: all scores 0, higher prior
    1
    >>> t = g.record(s, "b", Screen([Element((0, 0, 9, 9), "Text", "home")], 10, 10))  # a self-loop: reward 1
    >>> PUCT.paper().scores(g, s, ["a", "b"], [0.4, 0.6])   # b: Q 1 + 0.6 / 2; a: 0 + 0.4
    [0.4, 1.3]
    >>> [round(x, 3) for x in PUCT().scores(g, s, ["a", "b"], [0.4, 0.6])]  # a: fpu 1 + 0.4; b: 1/3 + 0.3
    [1.4, 0.633]
    """

    name = "puct"

    def __init__(self, c_p: float = 1.0, *, fpu: Union[float, str] = PUCT_SETTINGS["default"]["fpu"],
                 normalize: bool = PUCT_SETTINGS["default"]["normalize"],
                 ties: str = PUCT_SETTINGS["default"]["ties"]) -> None:
        if isinstance(c_p, bool) or not isinstance(c_p, (int, float)) or not math.isfinite(c_p) or c_p < 0:
            raise InvalidInputError(f"c_p must be a finite number >= 0, got {c_p!r}")
        if isinstance(fpu, str):
            if fpu != "parent":
                raise InvalidInputError(f"fpu must be a finite number or 'parent', got {fpu!r}")
        elif isinstance(fpu, bool) or not isinstance(fpu, (int, float)) or not math.isfinite(fpu):
            raise InvalidInputError(f"fpu must be a finite number or 'parent', got {fpu!r}")
        if not isinstance(normalize, bool):
            raise InvalidInputError(f"normalize must be True or False, got {normalize!r}")
        if ties not in _TIES:
            raise InvalidInputError(f"ties must be 'prior' or 'hash', got {ties!r}")
        self.c_p = float(c_p)
        self.fpu: Union[float, str] = fpu if isinstance(fpu, str) else float(fpu)
        self.normalize = normalize
        self.ties = ties

    @classmethod
    def named(cls, setting: str, c_p: float = 1.0) -> "PUCT":
        """The PUCT of a :data:`PUCT_SETTINGS` name (``"paper"`` or ``"default"``).

        Examples
        --------
        >>> PUCT.named("paper")
        PUCT(c_p=1.0, fpu=0.0, normalize=False, ties='prior')
        """
        if setting not in PUCT_SETTINGS:
            raise InvalidInputError(f"unknown PUCT setting {setting!r}; choose from {sorted(PUCT_SETTINGS)}")
        sel = cls(c_p, **PUCT_SETTINGS[setting])
        if setting != "default":
            sel.name = f"puct-{setting}"
        return sel

    @classmethod
    def paper(cls, c_p: float = 1.0) -> "PUCT":
        """The paper-exact setting: ``Q = 0`` for an untried action, raw rewards, ties to the higher prior."""
        return cls.named("paper", c_p)

    def _scale(self, graph: Any) -> float:
        if not self.normalize:
            return 1.0
        total = float(sum(getattr(graph, "lambdas", (1.0, 1.0, 1.0))))
        return total if total > 0 else 1.0

    def scores(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> List[float]:
        tries = graph.tries(state)
        total = float(sum(tries.values()))
        scale = self._scale(graph)
        if self.fpu == "parent":
            paid = sum(graph.q(state, sg) * k for sg, k in tries.items())
            first = paid / total / scale if total else 0.0
        else:
            first = float(self.fpu)
        n = [tries.get(sg, 0) for sg in signatures]
        q = [graph.q(state, sg) / scale if k else first for sg, k in zip(signatures, n)]
        return puct_scores(q, n, prior, total, self.c_p)

    def select(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> int:
        """Index of the chosen action: the best score, ties broken by :attr:`ties`."""
        self._check(signatures, prior)
        sc = self.scores(graph, state, signatures, prior)
        if self.ties == "hash":
            return _argmax_hash(sc, signatures, state, sum(graph.tries(state).values()))
        return _argmax(sc, prior)

    def __repr__(self) -> str:
        return f"PUCT(c_p={self.c_p}, fpu={self.fpu!r}, normalize={self.normalize}, ties={self.ties!r})"


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


class Random(Selector):
    """Uniform over the executable actions (one per signature), ignoring graph and prior.

    Parameters
    ----------
    seed : int, default 0
        Seed of the selector's own generator: the same seed and candidate lists
        give the same choices.

    Examples
    --------
    >>> r = Random(seed=1)
    >>> [r.select(None, 0, ["a", "b", "c"], [1.0, 0.0, 0.0]) for _ in range(5)]
    [0, 2, 0, 1, 0]
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise InvalidInputError(f"seed must be an integer, got {seed!r}")
        self.seed = seed
        self._rng = _random.Random(seed)

    def scores(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> List[float]:
        return [1.0 / len(signatures)] * len(signatures) if len(signatures) else []

    def select(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> int:
        """A uniform draw among the candidates."""
        self._check(signatures, prior)
        return self._rng.randrange(len(signatures))

    def __repr__(self) -> str:
        return f"Random(seed={self.seed})"


#: Selector names accepted by :func:`make_selector` (and ``explore``, the CLI).
SELECTORS = ("puct", "puct-paper", "greedy", "random")


def make_selector(selector: Union[None, str, Selector], seed: int = 0) -> Selector:
    """A selector from a name of :data:`SELECTORS` (or a selector, returned as is).

    ``"puct"`` is ``PUCT()``, ``"puct-paper"`` :meth:`PUCT.paper`, ``"random"``
    ``Random(seed)``; ``None`` means ``"puct"``.

    Examples
    --------
    >>> make_selector("puct-paper"), make_selector("random", seed=3)
    (PUCT(c_p=1.0, fpu=0.0, normalize=False, ties='prior'), Random(seed=3))
    """
    if selector is None or selector == "puct":
        return PUCT()
    if isinstance(selector, Selector):
        return selector
    if selector == "puct-paper":
        return PUCT.paper()
    if selector == "greedy":
        return Greedy()
    if selector == "random":
        return Random(seed)
    raise InvalidInputError(f"selector must be one of {', '.join(map(repr, SELECTORS))} or a Selector, "
                            f"got {selector!r}")
