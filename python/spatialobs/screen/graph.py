"""The shared state graph (DESIGN §8): labeled edges, novelty, ambiguity and reward.

States come from a :class:`~spatialobs.screen.StateIndex`; an edge is a labeled
transition ``(s, σ, s′)`` with σ an action signature
(:func:`~spatialobs.screen.actions.signature`). With ``n(s, σ, s′)`` the times the
edge was recorded:

* ``n(s, σ) = Σ_s′ n(s, σ, s′)`` and ``n(s) = Σ_σ n(s, σ)``;
* ambiguity ``D(s) = Σ_σ w_{s,σ} · H̄(P(s′ | s, σ))`` with ``w_{s,σ} = n(s, σ) / n(s)``
  and ``H̄`` the entropy of the successor distribution divided by the log of the
  number of distinct successors (0 for one successor), see :func:`normalized_entropy`;
* ``ρ(s) = n(s) / (n(s) + κ)`` and ``u(s) = ρ D(s) + (1 − ρ) u₀`` (κ = 20, u₀ = 0.5; an
  unseen state has ``u = u₀``);
* reward of a recorded step ``λ_state [s′ new] + λ_edge [(s, σ, s′) new] +
  λ_amb max(0, u(s) − u(s′))``, all λ = 1, where novelty and both ``u`` are judged
  against the graph just before the step;
* ``Q(s, σ)`` the mean reward of the steps recorded for ``(s, σ)``, 0 before any.

A step whose resulting screen belongs to another application (its ``meta.app``
differs from the graph's ``app``) is a *capture*: it is logged with the foreign
screen but neither indexed nor turned into an edge; it counts as a try of
``(s, σ)`` for the selector (``N(s, σ)``, reward 0) and is not part of ``n(s, σ)``.

The graph is a replica of a :class:`~spatialobs.screen.store.GraphStore` log:
several processes may hold graphs over one SQLite file and explore at once
(see :mod:`spatialobs.screen.store`).

Evidence. With ``evidence`` on (the default for a store on disk), every new
observation also leaves its element table, the page's URL or the window's title,
the time, and a screenshot when one is given (:meth:`ScreenGraph.observe` and
:meth:`ScreenGraph.record` take it as PNG bytes or as a callable that is called
only when the screen is a new observation, so that a screen seen before costs no
picture); captures keep their screenshot too. Every transition names the
observation it was taken on and the one it produced. None of it changes a state:
:mod:`spatialobs.screen.export` reads it back.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from spatialobs._errors import InvalidInputError, OutOfRangeError
from spatialobs.screen.features import Features
from spatialobs.screen.model import Screen
from spatialobs.screen.state_index import StateIndex
from spatialobs.screen.store import (
    CaptureRow,
    EvidenceRow,
    GraphStore,
    MemoryStore,
    ObservationRow,
    TransitionRow,
    open_store,
    screenshot_digest,
)

#: A screenshot for the evidence: PNG bytes, or a callable returning them (None: no picture).
Shot = Union[None, bytes, Callable[[], Optional[bytes]]]

__all__ = [
    "KAPPA",
    "U0",
    "Transition",
    "ScreenGraph",
    "Tallies",
    "normalized_entropy",
    "blend_u",
    "step_reward",
    "dispersion",
    "Dispersion",
]

#: Confidence constant of ρ(s) = n / (n + κ).
KAPPA = 20.0
#: Prior ambiguity of a state with no observed outcomes.
U0 = 0.5


def normalized_entropy(counts: Iterable[float]) -> float:
    """Entropy of a count vector divided by the log of the number of nonzero entries (0 for ≤ 1).

    Examples
    --------
    >>> normalized_entropy([5, 5])
    1.0
    >>> round(normalized_entropy([2, 3]), 3)
    0.971
    >>> normalized_entropy([7])
    0.0
    """
    c = [float(x) for x in counts if x > 0]
    if len(c) <= 1:
        return 0.0
    total = sum(c)
    h = -sum((x / total) * math.log(x / total) for x in c)
    return max(0.0, min(1.0, h / math.log(len(c))))


def blend_u(n: float, d: float, kappa: float = KAPPA, u0: float = U0) -> float:
    """``u = ρ d + (1 − ρ) u₀`` with ``ρ = n / (n + κ)``.

    Examples
    --------
    >>> blend_u(0, 1.0)
    0.5
    >>> blend_u(20, 1.0)
    0.75
    """
    rho = n / (n + kappa) if n + kappa > 0 else 0.0
    return rho * d + (1.0 - rho) * u0


def step_reward(state_novel: bool, edge_novel: bool, u_source: float, u_target: float,
                lambdas: Sequence[float] = (1.0, 1.0, 1.0)) -> float:
    """``λ_state [state-novel] + λ_edge [edge-novel] + λ_amb max(0, u(s) − u(s′))``.

    Examples
    --------
    >>> step_reward(True, True, 0.5, 0.2)
    2.3
    >>> step_reward(False, True, 0.2, 0.5)
    1.0
    """
    ls, le, la = lambdas
    return ls * float(bool(state_novel)) + le * float(bool(edge_novel)) + la * max(0.0, u_source - u_target)


@dataclass(frozen=True)
class Dispersion:
    """Outcome dispersion of repeated trials: ``pooled = within + between``."""

    pooled: float
    within: float
    between: float


def dispersion(outcomes: Iterable[Tuple[Any, Any]]) -> Dispersion:
    """Pooled, within-condition and between-condition dispersion of ``(condition, outcome)`` trials.

    ``pooled`` is the normalized entropy of all outcomes; ``within`` the
    trial-weighted mean entropy of the outcomes inside each condition, divided by
    the same ``log k`` (k distinct outcomes overall, so both are on one scale and
    ``between = pooled − within ≥ 0``, the mutual information of condition and
    outcome over ``log k``).

    Examples
    --------
    >>> dispersion([("a", 1), ("a", 1), ("b", 2), ("b", 2)])
    Dispersion(pooled=1.0, within=0.0, between=1.0)
    """
    pairs = list(outcomes)
    if not pairs:
        raise InvalidInputError("dispersion needs at least one (condition, outcome) trial")
    for p in pairs:
        if not isinstance(p, tuple) or len(p) != 2:
            raise InvalidInputError(f"each trial must be a (condition, outcome) pair, got {p!r}")
    pooled_counts = Counter(o for _, o in pairs)
    k = len(pooled_counts)
    if k <= 1:
        return Dispersion(0.0, 0.0, 0.0)
    n = len(pairs)
    logk = math.log(k)

    def ent(counts: Counter) -> float:
        tot = sum(counts.values())
        return -sum((c / tot) * math.log(c / tot) for c in counts.values() if c) / logk

    pooled = ent(pooled_counts)
    by_cond: Dict[Any, Counter] = {}
    for c, o in pairs:
        by_cond.setdefault(c, Counter())[o] += 1
    within = sum(sum(cnt.values()) / n * ent(cnt) for cnt in by_cond.values())
    pooled, within = round(pooled, 12), round(within, 12)
    return Dispersion(pooled, within, round(max(0.0, pooled - within), 12))


@dataclass(frozen=True)
class Transition:
    """What :meth:`ScreenGraph.record` judged about one step.

    ``target`` is the state reached (−1 for a capture, then ``capture`` names the
    other application); novelty and ``u_source`` / ``u_target`` are judged against
    the graph just before the step; ``seq`` is the step's place in the log.
    """

    source: int
    signature: str
    target: int
    state_novel: bool
    edge_novel: bool
    reward: float
    u_source: float
    u_target: float
    capture: Optional[str] = None
    seq: int = 0
    #: The observation the screen reached is (its seq in the log; 0 for a capture).
    observation: int = 0



class Tallies:
    """The counts the graph's statistics are made of, replayed from a transition log.

    ``n(s, σ, s′)`` (successors), ``n(s, σ)``, ``n(s)``, the selector's tries
    ``N(s, σ)`` (captures included) and reward sums, with the edge, transition and
    capture totals. :class:`ScreenGraph` and the distributed graph keep one each.

    Examples
    --------
    >>> t = Tallies()
    >>> t.add_transition(0, "click:a", 1, 1.0); t.add_transition(0, "click:a", 2, 0.5)
    >>> t.add_capture(0, "click:close")
    >>> t.n(0), t.tries(0), t.q(0, "click:a"), t.num_edges, round(t.ambiguity(0), 3)
    (2, {'click:a': 2, 'click:close': 1}, 0.75, 2, 1.0)
    """

    def __init__(self) -> None:
        self.succ: Dict[Tuple[int, str], Counter] = {}
        self.nsa: Dict[int, Dict[str, int]] = {}
        self.try_counts: Dict[int, Dict[str, int]] = {}  # n(s, σ) + captures
        self.rsum: Dict[int, Dict[str, float]] = {}
        self.ns: Counter = Counter()
        self.num_edges = 0
        self.num_transitions = 0
        self.num_captures = 0

    def add_transition(self, s: int, sig: str, t: int, reward: float) -> None:
        """Count one in-app step ``s --sig--> t`` with its reward."""
        succ = self.succ.setdefault((s, sig), Counter())
        if t not in succ:
            self.num_edges += 1
        succ[t] += 1
        d = self.nsa.setdefault(s, {})
        d[sig] = d.get(sig, 0) + 1
        d = self.try_counts.setdefault(s, {})
        d[sig] = d.get(sig, 0) + 1
        r = self.rsum.setdefault(s, {})
        r[sig] = r.get(sig, 0.0) + reward
        self.ns[s] += 1
        self.num_transitions += 1

    def add_capture(self, s: int, sig: str) -> None:
        """Count one try of ``sig`` from ``s`` that left the application (reward 0, no edge)."""
        d = self.try_counts.setdefault(s, {})
        d[sig] = d.get(sig, 0) + 1
        self.rsum.setdefault(s, {}).setdefault(sig, 0.0)
        self.num_captures += 1

    def is_edge(self, s: int, sig: str, t: int) -> bool:
        """Whether ``s --sig--> t`` was seen."""
        return t in self.succ.get((s, sig), ())

    def n(self, state: int) -> int:
        """``n(s)``: in-app steps recorded from ``state``."""
        return int(self.ns.get(state, 0))

    def n_sa(self, state: int, signature: str) -> int:
        """``n(s, σ)``: in-app steps recorded for the pair (captures excluded)."""
        return int(self.nsa.get(state, {}).get(signature, 0))

    def tries(self, state: int) -> Dict[str, int]:
        """``N(s, σ)`` for every σ tried from ``state`` (captures included)."""
        return dict(self.try_counts.get(state, {}))

    def reward_sums(self, state: int) -> Dict[str, float]:
        """The summed reward of every σ tried from ``state``."""
        return dict(self.rsum.get(state, {}))

    def q(self, state: int, signature: str) -> float:
        """``Q(s, σ)``: mean reward of the tries of the pair, 0 before any."""
        n = self.try_counts.get(state, {}).get(signature, 0)
        return self.rsum[state][signature] / n if n else 0.0

    def successors(self, state: int, signature: str) -> Dict[int, int]:
        """``n(s, σ, s′)`` for each successor ``s′``."""
        return dict(self.succ.get((state, signature), {}))

    def ambiguity(self, state: int) -> float:
        """``D(s)``: the count-weighted mean normalized successor entropy of the actions tried."""
        acts = self.nsa.get(state)
        if not acts:
            return 0.0
        total = sum(acts.values())
        return sum(n / total * normalized_entropy(self.succ[(state, sig)].values()) for sig, n in acts.items())

    def edges(self) -> Iterator[Tuple[int, str, int, int]]:
        """Every labeled edge as ``(s, σ, s′, count)``, sorted."""
        for (s, sig) in sorted(self.succ):
            for t, c in sorted(self.succ[(s, sig)].items()):
                yield s, sig, t, c


def _url(screen: Screen) -> Optional[str]:
    src = screen.source or ""
    return src if src.startswith(("http://", "https://", "file:")) else None


def _action_json(action: Any) -> str:
    # The action as executed, for the evidence: op, target role / text / bounds, typed value.
    if action is None:
        return ""
    t = getattr(action, "target", None)
    d: Dict[str, Any] = {"op": getattr(action, "op", "")}
    if t is not None:
        d.update(role=t.role, text=t.text, bounds=list(t.bounds))
    if getattr(action, "value", None) is not None:
        d["value"] = action.value
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False)


class ScreenGraph:
    """A state graph over screens, shared through a store.

    Parameters
    ----------
    store : None, path or GraphStore
        ``None``: in memory; a path: a :class:`~spatialobs.screen.store.SQLiteStore`
        file (several processes may open the same file); or any store.
    app : str, optional
        The application explored; a screen whose ``meta.app`` is set and differs is
        a capture. ``None`` takes the first observed screen's app.
    index : StateIndex, optional
        An empty index configured as wanted (default ``StateIndex()``); the graph
        replays the store's observations into it.
    kappa, u0 : float
        κ and u₀ of u(s).
    lambdas : (λ_state, λ_edge, λ_amb)
        Reward weights (all 1 in the paper; the ablations set some to 0).
    worker : str
        The name this replica writes into the log.
    evidence : bool, optional
        Keep every new observation's element table, URL or title and screenshot
        (see the module docstring). Default: on when the store is not in memory.

    A store remembers ``app``, ``kappa``, ``u0`` and ``lambdas`` from its first
    opening; reopening with other explicit values raises ``InvalidInputError``.

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen, ScreenMeta
    >>> def scr(title):
    ...     return Screen([Element((0, 0, 400, 30), "TitleBar", title)], 400, 300, ScreenMeta(app="demo"))
    >>> g = ScreenGraph()
    >>> s = g.observe(scr("Home"))
    >>> t = g.record(s, "click|button|next|1,1", scr("Page 2"))
    >>> (t.target, t.state_novel, t.edge_novel, t.reward)
    (1, True, True, 2.0)
    >>> g.n(s), g.n_sa(s, "click|button|next|1,1"), g.u(s)
    (1, 1, 0.47619047619047616)
    """

    def __init__(
        self,
        store: Union[None, str, Any, GraphStore] = None,
        *,
        app: Optional[str] = None,
        index: Optional[StateIndex] = None,
        kappa: Optional[float] = None,
        u0: Optional[float] = None,
        lambdas: Optional[Sequence[float]] = None,
        worker: str = "main",
        evidence: Optional[bool] = None,
    ) -> None:
        if index is None:
            index = StateIndex()
        if not isinstance(index, StateIndex):
            raise InvalidInputError(f"index must be a StateIndex, got {type(index).__name__}")
        if len(index):
            raise InvalidInputError(f"index must be empty (the graph replays its store into it); it has {len(index)}")
        if not isinstance(worker, str):
            raise InvalidInputError(f"worker must be a string, got {worker!r}")
        if app is not None and not isinstance(app, str):
            raise InvalidInputError(f"app must be a string or None, got {app!r}")
        explicit: Dict[str, Any] = {}
        for name, v in (("kappa", kappa), ("u0", u0)):
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise InvalidInputError(f"{name} must be a finite number, got {v!r}")
                explicit[name] = float(v)
        if "kappa" in explicit and explicit["kappa"] <= 0:
            raise InvalidInputError(f"kappa must be > 0, got {kappa!r}")
        if "u0" in explicit and not 0 <= explicit["u0"] <= 1:
            raise InvalidInputError(f"u0 must lie in [0, 1], got {u0!r}")
        if lambdas is not None:
            try:
                lam = [float(x) for x in lambdas]
            except (TypeError, ValueError):
                raise InvalidInputError(f"lambdas must be three numbers, got {lambdas!r}") from None
            if len(lam) != 3 or not all(math.isfinite(x) and x >= 0 for x in lam):
                raise InvalidInputError(f"lambdas must be three finite numbers >= 0, got {lambdas!r}")
            explicit["lambdas"] = lam
        if app is not None:
            explicit["app"] = app
        self._own_store = not isinstance(store, GraphStore)
        self.store = open_store(store)
        if evidence is not None and not isinstance(evidence, bool):
            if self._own_store:
                self.store.close()
            raise InvalidInputError(f"evidence must be True, False or None, got {evidence!r}")
        if evidence and not self.store.keeps_evidence:
            if self._own_store:
                self.store.close()
            raise InvalidInputError(f"{type(self.store).__name__} keeps no evidence (evidence=True)")
        #: Whether new observations leave their evidence in the store.
        self.evidence = bool(self.store.keeps_evidence and not isinstance(self.store, MemoryStore)
                             if evidence is None else evidence)
        self.worker = worker
        self.index = index
        self._lock = threading.RLock()
        #: Features of the last screen mapped to a state (reused by the exploration loop).
        self.last_features: Optional[Features] = None
        #: The observation (its seq in the log) the last screen mapped to a state is.
        self.last_observation = 0
        try:
            with self.store.write():
                cfg = self.store.config()
                for k, v in explicit.items():
                    if k in cfg and cfg[k] is not None and cfg[k] != v:
                        raise InvalidInputError(f"the store was created with {k}={cfg[k]!r}, not {v!r}")
                merged: Dict[str, Any] = {"kappa": KAPPA, "u0": U0, "lambdas": [1.0, 1.0, 1.0], "app": None}
                merged.update({k: v for k, v in cfg.items() if v is not None})
                merged.update(explicit)
                if merged != cfg:
                    self.store.set_config(merged)
        except BaseException:
            if self._own_store:
                self.store.close()
            raise
        self.kappa = float(merged["kappa"])
        self.u0 = float(merged["u0"])
        self.lambdas = tuple(float(x) for x in merged["lambdas"])
        self.app: Optional[str] = merged["app"]
        self._reset_replica()
        self.refresh()

    # -- replica ---------------------------------------------------------------

    def _reset_replica(self) -> None:
        self._obs_seq = 0
        self._tr_seq = 0
        self._cap_seq = 0
        self._canon: Dict[int, int] = {}  # index state -> canonical state
        self._num_states = 0
        self._known: set = set()  # canonical states with an observation
        self._obs_of: Dict[int, int] = {}  # index observation -> its seq in the log
        self._tallies = Tallies()
        self.divergences = 0

    def _apply_observation(self, row: ObservationRow) -> None:
        from spatialobs.screen.model import ScreenMeta

        f = Features(np.frombuffer(row.control, dtype="<u8").astype(np.uint64),
                     np.frombuffer(row.text_atoms, dtype="<u8").astype(np.uint64), row.text, ScreenMeta(*row.meta))
        m = self.index.add_features(f)
        self._obs_of.setdefault(m.observation, row.seq)
        if m.state in self._canon:
            if self._canon[m.state] != row.state:
                self.divergences += 1
        else:
            self._canon[m.state] = row.state
        self._known.add(row.state)
        self._num_states = max(self._num_states, row.state + 1)
        self._obs_seq = row.seq

    def _apply_transition(self, row: TransitionRow) -> None:
        self._tallies.add_transition(row.source, row.signature, row.target, row.reward)
        self._tr_seq = row.seq

    def _apply_capture(self, row: CaptureRow) -> None:
        self._tallies.add_capture(row.source, row.signature)
        self._cap_seq = row.seq

    def refresh(self) -> None:
        """Catch up with records other processes appended to the store."""
        with self._lock:
            for o in self.store.observations(self._obs_seq):
                self._apply_observation(o)
            for t in self.store.transitions(self._tr_seq):
                self._apply_transition(t)
            for c in self.store.captures(self._cap_seq):
                self._apply_capture(c)

    def _rebuild(self) -> None:
        # A failed write may have left the replica ahead of the store: start over.
        idx = self.index
        self.index = StateIndex(tau=idx.tau, top_k=idx.top_k, rrf_k=idx.rrf_k, grid=idx.grid, embedder=idx.embedder,
                                mask_volatile=idx.mask_volatile, candidates=idx.candidates)
        self._reset_replica()
        self.refresh()

    # -- writing ---------------------------------------------------------------

    def _is_capture(self, screen: Screen) -> bool:
        return self.app is not None and screen.meta.app is not None and screen.meta.app != self.app

    def _observe_locked(self, screen: Screen, shot: Shot = None) -> Tuple[int, bool]:
        """Map a screen to a canonical state, appending a new observation (and its evidence); (state, new_state)."""
        f = self.index.featurize(screen)
        self.last_features = f
        m = self.index.add_features(f)
        if m.exact:
            self.last_observation = self._obs_of.get(m.observation, 0)
            return self._canon[m.state], False
        if m.state in self._canon:
            state = self._canon[m.state]
        else:
            state = self._num_states
            self._canon[m.state] = state
        new = state not in self._known
        seq = self.store.add_observation(ObservationRow(
            0, state, f.meta.key(), f.control_atoms.astype("<u8").tobytes(), f.text_atoms.astype("<u8").tobytes(),
            f.text))
        self._known.add(state)
        self._num_states = max(self._num_states, state + 1)
        self._obs_seq = seq
        self._obs_of[m.observation] = seq
        self.last_observation = seq
        if self.evidence:
            elements = json.dumps(screen.to_dict()["elements"], separators=(",", ":"), ensure_ascii=False)
            self.store.add_evidence(EvidenceRow(seq, screen.width, screen.height, elements, _url(screen), screen.title,
                                                self._keep_shot(shot), time.time(), self.worker))
        return state, new

    def _keep_shot(self, shot: Shot) -> Optional[str]:
        # The screenshot's content hash, once it is in the store (None when there is none).
        png = shot() if callable(shot) else shot
        if not png:
            return None
        digest = screenshot_digest(png)
        self.store.add_screenshot(digest, png)
        return digest

    def observe(self, screen: Screen, *, screenshot: Shot = None) -> int:
        """The state of a screen, indexing it (and logging it) when it is new.

        ``screenshot``: PNG bytes of the screen, or a callable returning them, kept with
        a new observation's evidence (see the module docstring).
        Raises ``InvalidInputError`` for a screen of another application.
        """
        if not isinstance(screen, Screen):
            raise InvalidInputError(f"observe expects a Screen, got {type(screen).__name__}")
        with self._lock:
            if self.app is None and screen.meta.app is not None:
                self._adopt_app(screen.meta.app)
            if self._is_capture(screen):
                raise InvalidInputError(f"screen of app {screen.meta.app!r} observed in the graph of {self.app!r}")
            try:
                with self.store.write():
                    self.refresh()
                    state, _ = self._observe_locked(screen, screenshot)
            except BaseException:
                self._rebuild()
                raise
            return state

    def _adopt_app(self, app: str) -> None:
        with self.store.write():
            cfg = self.store.config()
            if cfg.get("app") is None:
                cfg["app"] = app
                self.store.set_config(cfg)
            self.app = cfg["app"]

    def record(self, source: int, signature: str, screen: Screen, *, label: str = "", episode: int = 0,
               step: int = 0, action: Any = None, screenshot: Shot = None, source_observation: int = 0
               ) -> Transition:
        """Record that action ``signature`` taken in state ``source`` produced ``screen``.

        One atomic write: catch up with the store, map the screen to a state, judge
        novelty and the ambiguities against the graph as it was, append the step.
        ``action`` (an :class:`~spatialobs.screen.actions.Action`), ``source_observation``
        (the observation the action was taken on) and ``screenshot`` (see
        :meth:`observe`; taken for a new observation or a capture) are evidence.

        Examples
        --------
        >>> from spatialobs.screen import Element, Screen
        >>> g = ScreenGraph()
        >>> a = g.observe(Screen([Element((0, 0, 9, 9), "Text", "a")], 10, 10))
        >>> g.record(a, "key|||escape", Screen([Element((0, 0, 9, 9), "Text", "a")], 10, 10)).edge_novel
        True
        """
        if not isinstance(screen, Screen):
            raise InvalidInputError(f"record expects a Screen, got {type(screen).__name__}")
        if not isinstance(signature, str) or not signature:
            raise InvalidInputError(f"signature must be a non-empty string, got {signature!r}")
        if isinstance(source, bool) or not isinstance(source, (int, np.integer)):
            raise InvalidInputError(f"source must be a state id, got {source!r}")
        source = int(source)
        with self._lock:
            try:
                with self.store.write():
                    self.refresh()
                    if source not in self._known:
                        raise OutOfRangeError(f"no state {source} in the graph (it has {self._num_states})")
                    u_s = self.u(source)
                    act = _action_json(action)
                    if self._is_capture(screen):
                        shot = self._keep_shot(screenshot) if self.evidence else None
                        seq = self.store.add_capture(CaptureRow(
                            0, self.worker, int(episode), int(step), source, signature, str(screen.meta.app),
                            json.dumps(screen.to_dict(), sort_keys=True), int(source_observation), _url(screen),
                            screen.title, shot, act, time.time()))
                        self._apply_capture(CaptureRow(seq, self.worker, episode, step, source, signature,
                                                       str(screen.meta.app), ""))
                        return Transition(source, signature, -1, False, False, 0.0, u_s, u_s, str(screen.meta.app),
                                          seq)
                    target, state_novel = self._observe_locked(screen, screenshot)
                    u_t = self.u0 if state_novel else self.u(target)
                    edge_novel = not self._tallies.is_edge(source, signature, target)
                    r = step_reward(state_novel, edge_novel, u_s, u_t, self.lambdas)
                    row = TransitionRow(0, self.worker, int(episode), int(step), source, signature, target,
                                        state_novel, edge_novel, r, u_s, u_t, label, int(source_observation),
                                        self.last_observation, act, time.time())
                    seq = self.store.add_transition(row)
                    from dataclasses import replace

                    self._apply_transition(replace(row, seq=seq))
                    return Transition(source, signature, target, state_novel, edge_novel, r, u_s, u_t, None, seq,
                                      self.last_observation)
            except OutOfRangeError:
                raise
            except BaseException:
                self._rebuild()
                raise

    # -- reading ---------------------------------------------------------------

    @property
    def num_states(self) -> int:
        """States with at least one observation."""
        return len(self._known)

    @property
    def num_edges(self) -> int:
        """Distinct labeled edges ``(s, σ, s′)``."""
        return self._tallies.num_edges

    @property
    def num_transitions(self) -> int:
        """Recorded in-app steps (edge multiplicities summed)."""
        return self._tallies.num_transitions

    def has_state(self, state: int) -> bool:
        return state in self._known

    def n(self, state: int) -> int:
        """``n(s)``: in-app steps recorded from ``state``."""
        return self._tallies.n(state)

    def n_sa(self, state: int, signature: str) -> int:
        """``n(s, σ)``: in-app steps recorded for the pair (captures excluded)."""
        return self._tallies.n_sa(state, signature)

    def tries(self, state: int) -> Dict[str, int]:
        """``N(s, σ)`` for every σ tried from ``state`` (captures included): what the selector counts."""
        return self._tallies.tries(state)

    def q(self, state: int, signature: str) -> float:
        """``Q(s, σ)``: mean reward of the tries of the pair, 0 before any."""
        return self._tallies.q(state, signature)

    def successors(self, state: int, signature: str) -> Dict[int, int]:
        """``n(s, σ, s′)`` for each successor ``s′``."""
        return self._tallies.successors(state, signature)

    def ambiguity(self, state: int) -> float:
        """``D(s)``: the count-weighted mean normalized successor entropy of the actions tried."""
        return self._tallies.ambiguity(state)

    def u(self, state: int) -> float:
        """``u(s) = ρ D(s) + (1 − ρ) u₀`` (u₀ for a state never acted from)."""
        return blend_u(self.n(state), self.ambiguity(state), self.kappa, self.u0)

    def edges(self) -> Iterator[Tuple[int, str, int, int]]:
        """Every labeled edge as ``(s, σ, s′, count)``, sorted."""
        return self._tallies.edges()

    def states(self) -> List[int]:
        return sorted(self._known)

    def captures(self) -> List[CaptureRow]:
        """Every logged capture, in log order."""
        return self.store.captures(0)

    def close(self) -> None:
        """Close the store if the graph opened it."""
        if self._own_store:
            self.store.close()

    def __enter__(self) -> "ScreenGraph":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ScreenGraph(app={self.app!r}, states={self.num_states}, edges={self.num_edges})"
