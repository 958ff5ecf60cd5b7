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
  or ``"hash"`` (the smallest stable hash of ``(seed, s, Σ N(s, ·), σ)``: a fair,
  reproducible draw among equals that does not depend on the candidates' order; the
  selector's ``seed`` makes the draws of different episodes independent);
* **shared first play** ``share``: an action untried from ``s`` whose signature has
  been tried from other states is scored with the mean reward of those tries
  (:func:`shared_key`: the signature; for typing, only the operation, role and
  typed value)
  instead of ``fpu``;
* **leave-rate first play** ``leave_rate`` (off by default): an action tried
  nowhere yet scores ``fpu`` times the rate at which its class
  (:func:`action_class`: the operation and the target's role) has left its
  state so far, so that once typing into search boxes or clicking list items has
  been seen to leave the screen unchanged, the untried members of that class
  come after those of classes that change it (:func:`estimate_leave_rate`).

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
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.features import tokens
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
    "selector_seed",
    "puct_scores",
    "shared_key",
    "action_class",
    "estimate_leave_rate",
    "resolve_prior",
]

Prior = Callable[[Screen, Sequence[Action], str], Sequence[float]]
# prior weights as the selectors take them: a list or prior_weights' array
_Weights = Union[Sequence[float], npt.NDArray[np.float64]]



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


def _tie_hash(state: int, total: float, signature: str, seed: int = 0) -> bytes:
    salt = f"{int(seed)}\x01" if seed else ""
    return hashlib.blake2b(f"{salt}{int(state)}\x00{int(total)}\x00{signature}".encode("utf-8"),
                           digest_size=8).digest()


def _argmax_hash(scores: Sequence[float], signatures: Sequence[str], state: int, total: float,
                 seed: int = 0) -> int:
    # The state is part of the key so that new states do not all start with the same action; the
    # seed, so that episodes on fresh graphs (whose state numbers all start at 0) draw independently.
    top = max(scores)
    best = [i for i, v in enumerate(scores) if v == top]
    return min(best, key=lambda i: (_tie_hash(state, total, signatures[i], seed), i))


def _fields(signature: str) -> List[str]:
    # the signature's fields split at its unescaped bars, each kept escaped
    out, cur, i = [], [], 0
    while i < len(signature):
        ch = signature[i]
        if ch == "\\" and i + 1 < len(signature):
            cur.append(signature[i:i + 2])
            i += 2
            continue
        if ch == "|":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    return out


def shared_key(signature: str) -> str:
    """The key under which tries of a signature are shared across states (``share``).

    A click's or a key's signature is its own key: the same control at the same place
    with the same text. A typing signature keeps only the operation, the target's
    role and the typed argument, dropping the field's current text (its contents,
    an item's name, or for an address bar the current location) and its position:
    typing one argument into fields of one role is one arm, however many such
    fields a screen lists and wherever they stand. Without this, every item of a
    file list or grid that accepts typing is an arm never tried anywhere, and
    PUCT tries each of them once before repeating any other action.

    Examples
    --------
    >>> shared_key("type|edit|this pc > music|5,1|Documents")
    'type|edit|Documents'
    >>> shared_key("type|list item|notes.txt|9,14|text") == shared_key("type|list item|todo.md|12,14|text")
    True
    >>> shared_key("click|button|ok|12,26")
    'click|button|ok|12,26'
    """
    if not signature.startswith("type|"):
        return signature
    f = _fields(signature)
    if len(f) != 5:
        return signature
    return "|".join(f[:2] + f[4:])


def action_class(signature: str) -> str:
    """The class of an action whose observed outcomes PUCT's ``leave_rate`` pools: its operation and target role.

    A key's class is ``key|`` (every key one class); a click's or a typing's is the
    operation and the target's normalized role, whatever its text, place or typed value.

    Examples
    --------
    >>> action_class("type|searchbox||27,24|42"), action_class("click|listitem|name: notes.md|3,5")
    ('type|searchbox', 'click|listitem')
    >>> action_class("key|||enter")
    'key|'
    """
    f = _fields(signature)
    return "|".join(f[:2])


def estimate_leave_rate(op_counts: Optional[Sequence[float]], class_counts: Optional[Sequence[float]]) -> float:
    """The estimated rate at which an action of a class leaves its state, from ``[tries, leaves]`` counts.

    ``r_op = (L_op + 1) / (N_op + 1)`` over the class's operation, then
    ``r = (L_c + r_op) / (N_c + 1)`` over the class itself: one optimistic pseudo-try
    at each level, so a class never tried scores its operation's rate, an operation
    never tried scores 1, and only tries that left the screen unchanged lower it.

    Examples
    --------
    >>> estimate_leave_rate(None, None)
    1.0
    >>> estimate_leave_rate([1, 0], [1, 0])     # one typing, into this class, changed nothing
    0.25
    >>> estimate_leave_rate([3, 0], None)       # three typings elsewhere changed nothing
    0.25
    >>> round(estimate_leave_rate([4, 3], [2, 2]), 4)
    0.9333
    """
    n_op, l_op = (float(op_counts[0]), float(op_counts[1])) if op_counts else (0.0, 0.0)
    n_c, l_c = (float(class_counts[0]), float(class_counts[1])) if class_counts else (0.0, 0.0)
    r_op = (l_op + 1.0) / (n_op + 1.0)
    return (l_c + r_op) / (n_c + 1.0)


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

    def start_walk(self) -> None:
        """Called when an exploration loop takes this selector (``Walk.of``): it will report every reward to :meth:`update`."""

    def update(self, state: int, signature: str, reward: float) -> None:
        """Told the reward of an executed choice once recorded (the exploration loop calls it); no-op here."""


#: Named PUCT settings: ``"paper"`` is the paper-exact one (Q = 0 for an untried
#: action, raw rewards, ties to the higher prior); ``"default"`` is what ``PUCT()``
#: uses, chosen by :func:`spatialobs.screen.studies.fpu_sweep` (see
#: docs/results/exploration.md): an untried action scores as a best possible try
#: (``fpu = 1`` on normalized rewards) unless its signature was tried from other
#: states, when it scores their mean normalized reward (``share``); so every action
#: of a state is tried once before any is repeated, actions never tried anywhere
#: first, equals drawn by a stable hash. ``"leave"`` is the default with ``leave_rate``:
#: the first play of an action tried nowhere scaled by its class's observed rate of
#: leaving the state.
PUCT_SETTINGS: Dict[str, Dict[str, Any]] = {
    "paper": {"fpu": 0.0, "normalize": False, "ties": "prior", "share": False},
    "default": {"fpu": 1.0, "normalize": True, "ties": "hash", "share": True},
    "leave": {"fpu": 1.0, "normalize": True, "ties": "hash", "share": True, "leave_rate": True},
}

_TIES = ("prior", "hash")


class PUCT(Selector):
    """One-step PUCT over the graph's counts.

    ``score(σ) = Q̂(s, σ) + c_p · P(σ | s) · √(Σ_σ′ N(s, σ′)) / (1 + N(s, σ))`` where
    ``Q̂`` is the mean reward of the tries of ``(s, σ)`` (divided by
    ``λ_state + λ_edge + λ_amb`` when ``normalize``) and, for an action never tried
    from ``s``, the first-play urgency: with ``share``, the mean reward (divided
    likewise) of the tries of σ's :func:`shared_key` from any state when there are
    any, else ``fpu``.

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
        or the smallest stable hash of ``(seed, s, Σ N(s, ·), σ)`` (``"hash"``).
    share : bool, default True
        Score an action untried from ``s`` with the mean reward of its signature's
        tries from other states (see :func:`shared_key`) when it has any. In an
        exploration loop (:meth:`start_walk`; ``explore``, a distributed worker)
        these are the tries the loop reported to :meth:`update`; a selector used
        for single choices (the service's ``screen_choose``) reads them from the
        graph when it lists its states (one pass over its (state, σ) pairs per
        choice). On a fresh graph the two are the same.
    leave_rate : bool, default False
        Scale the first play (``fpu``) of an action tried nowhere yet (from no
        state, nor under its shared key) by :func:`estimate_leave_rate` of its
        :func:`action_class`: the rate at which the tries of that class and
        operation so far reached another state rather than a self-loop (an edge
        back to the state it left), read from the graph's successors. Actions of a
        class seen to change nothing are then tried after those of classes that
        change the screen; the order within a class, and everything once an action
        has been tried, is as without it. A graph view without ``successors``
        leaves it inert.
    seed : int, default 0
        Salt of the tie hash (0: none). With one seed, every episode on a fresh
        graph (state numbers from 0) draws the same ties; ``explore`` passes
        :func:`selector_seed` of the environment's seed and the episode number.

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
    >>> o = g.observe(Screen([Element((0, 0, 9, 9), "Text", "other")], 10, 10))
    >>> # "a" from there pays λ_edge = 1 and u(o) − u(s) = 0.5 − 20/21 · 0.5 = 1/42 (s was acted from once)
    >>> round(g.record(o, "a", Screen([Element((0, 0, 9, 9), "Text", "home")], 10, 10)).reward, 4)
    1.0238
    >>> [round(x, 3) for x in PUCT().scores(g, s, ["a", "b"], [0.4, 0.6])]  # a, untried here: 1.0238 / 3 + 0.4
    [0.741, 0.633]
    """

    name = "puct"

    def __init__(self, c_p: float = 1.0, *, fpu: Union[float, str] = PUCT_SETTINGS["default"]["fpu"],
                 normalize: bool = PUCT_SETTINGS["default"]["normalize"],
                 ties: str = PUCT_SETTINGS["default"]["ties"], share: bool = PUCT_SETTINGS["default"]["share"],
                 leave_rate: bool = False, seed: int = 0) -> None:
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
        if not isinstance(share, bool):
            raise InvalidInputError(f"share must be True or False, got {share!r}")
        if not isinstance(leave_rate, bool):
            raise InvalidInputError(f"leave_rate must be True or False, got {leave_rate!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise InvalidInputError(f"seed must be an integer, got {seed!r}")
        self.c_p = float(c_p)
        self.fpu: Union[float, str] = fpu if isinstance(fpu, str) else float(fpu)
        self.normalize = normalize
        self.ties = ties
        self.share = share
        self.leave_rate = leave_rate
        self.seed = seed
        # shared_key -> [tries, reward sum] of the choices reported to update() (share)
        self._shared: Dict[str, List[float]] = {}
        self._walking = False
        # leave_rate: the (state, σ) pairs reported to update() and not yet read back from the graph,
        # each pair's [tries, leaves] as last read, and their sums per operation and per action_class
        self._pending: List[Tuple[int, str]] = []
        self._pairs: Dict[Tuple[int, str], Tuple[int, int]] = {}
        self._leaves: Dict[str, List[float]] = {}

    @classmethod
    def named(cls, setting: str, c_p: float = 1.0, seed: int = 0) -> "PUCT":
        """The PUCT of a :data:`PUCT_SETTINGS` name (``"paper"`` or ``"default"``).

        Examples
        --------
        >>> PUCT.named("paper")
        PUCT(c_p=1.0, fpu=0.0, normalize=False, ties='prior', share=False)
        """
        if setting not in PUCT_SETTINGS:
            raise InvalidInputError(f"unknown PUCT setting {setting!r}; choose from {sorted(PUCT_SETTINGS)}")
        sel = cls(c_p, **PUCT_SETTINGS[setting], seed=seed)
        if setting != "default":
            sel.name = f"puct-{setting}"
        return sel

    @classmethod
    def paper(cls, c_p: float = 1.0, seed: int = 0) -> "PUCT":
        """The paper-exact setting: ``Q = 0`` for an untried action, raw rewards, ties to the higher prior."""
        return cls.named("paper", c_p, seed)

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
        shared = self._shared_sums(graph) if self.share and not all(n) else {}
        leaves = self._leave_sums(graph) if self.leave_rate and not all(n) else {}
        q = [graph.q(state, sg) / scale if k else self._first(shared.get(shared_key(sg)), self._rate(leaves, sg) * first,
                                                               scale)
             for sg, k in zip(signatures, n)]
        return puct_scores(q, n, prior, total, self.c_p)

    @staticmethod
    def _rate(leaves: Dict[str, List[float]], signature: str) -> float:
        if not leaves:
            return 1.0
        cls = action_class(signature)
        return estimate_leave_rate(leaves.get(cls.split("|", 1)[0]), leaves.get(cls))

    def _leave_sums(self, graph: Any) -> Dict[str, List[float]]:
        # [tries, leaves] per operation and per action_class, from the graph's successors
        succ = getattr(graph, "successors", None)
        if not callable(succ):
            return {}
        if not self._walking:
            states = getattr(graph, "states", None)
            if not callable(states):
                return {}
            out: Dict[str, List[float]] = {}
            for s in states():
                for sg in graph.tries(s):
                    c = succ(s, sg)
                    if c:
                        _add_leaves(out, sg, sum(c.values()), sum(c.values()) - c.get(s, 0))
            return out
        for s, sg in self._pending:
            c = succ(s, sg)
            new = (sum(c.values()), sum(c.values()) - c.get(s, 0))
            old = self._pairs.get((s, sg), (0, 0))
            if new != old:
                self._pairs[(s, sg)] = new
                _add_leaves(self._leaves, sg, new[0] - old[0], new[1] - old[1])
        self._pending.clear()
        return self._leaves

    def _shared_sums(self, graph: Any) -> Dict[str, List[float]]:
        states = getattr(graph, "states", None)
        if self._walking or not callable(states):
            return self._shared
        out: Dict[str, List[float]] = {}
        for s in states():
            for sg, k in graph.tries(s).items():
                acc = out.setdefault(shared_key(sg), [0, 0.0])
                acc[0] += k
                acc[1] += graph.q(s, sg) * k
        return out

    @staticmethod
    def _first(acc: Optional[List[float]], first: float, scale: float) -> float:
        if acc is not None and acc[0] > 0:
            return acc[1] / acc[0] / scale
        return first

    def start_walk(self) -> None:
        """Read the shared sums from :meth:`update` from now on (see ``share``)."""
        self._walking = True

    def update(self, state: int, signature: str, reward: float) -> None:
        """Add an executed choice's reward to its signature's shared sums (``share``).

        With ``leave_rate`` the pair is also noted, to read where it led from the
        graph at the next choice.
        """
        if self.leave_rate:
            self._pending.append((int(state), signature))
        if self.share:
            acc = self._shared.setdefault(shared_key(signature), [0, 0.0])
            acc[0] += 1
            acc[1] += float(reward)

    def select(self, graph: Any, state: int, signatures: Sequence[str], prior: _Weights) -> int:
        """Index of the chosen action: the best score, ties broken by :attr:`ties`."""
        self._check(signatures, prior)
        sc = self.scores(graph, state, signatures, prior)
        if self.ties == "hash":
            return _argmax_hash(sc, signatures, state, sum(graph.tries(state).values()), self.seed)
        return _argmax(sc, prior)

    def __repr__(self) -> str:
        seed = f", seed={self.seed}" if self.seed else ""
        leave = ", leave_rate=True" if self.leave_rate else ""
        return (f"PUCT(c_p={self.c_p}, fpu={self.fpu!r}, normalize={self.normalize}, ties={self.ties!r}, "
                f"share={self.share}{leave}{seed})")


def _add_leaves(acc: Dict[str, List[float]], signature: str, tries: float, leaves: float) -> None:
    cls = action_class(signature)
    for key in (cls.split("|", 1)[0], cls):
        a = acc.setdefault(key, [0.0, 0.0])
        a[0] += tries
        a[1] += leaves


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


def selector_seed(env_seed: Any, episode: int) -> int:
    """The seed of a named selector's draws for ``episode`` of an environment seeded ``env_seed``.

    ``env_seed · 100003 + episode``: one stream per (environment seed, episode), the
    same for environment seed 0 as the episode number alone. An environment without
    an integer seed counts as seed 0. Without the environment's seed, episodes of
    different seeds of an app whose screens do not depend on the seed (the simulated
    Notepad from its start 0) would repeat one run instead of drawing new ones.

    Examples
    --------
    >>> selector_seed(0, 4), selector_seed(2, 4)
    (4, 200010)
    """
    if isinstance(env_seed, bool) or not isinstance(env_seed, int):
        env_seed = 0
    return env_seed * 100_003 + episode


def make_selector(selector: Union[None, str, Selector], seed: int = 0) -> Selector:
    """A selector from a name of :data:`SELECTORS` (or a selector, returned as is).

    ``"puct"`` is ``PUCT(seed=seed)``, ``"puct-paper"`` :meth:`PUCT.paper`, ``"random"``
    ``Random(seed)``; ``None`` means ``"puct"``.

    Examples
    --------
    >>> make_selector("puct-paper"), make_selector("random", seed=3)
    (PUCT(c_p=1.0, fpu=0.0, normalize=False, ties='prior', share=False), Random(seed=3))
    """
    if selector is None or selector == "puct":
        return PUCT(seed=seed)
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
