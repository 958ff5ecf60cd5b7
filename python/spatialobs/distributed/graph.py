"""The shared graph statistics of a distributed exploration: one log, every worker's counts.

:class:`GraphLog` is the single writer of a graph store (the SQLite log that
:class:`~spatialobs.screen.ScreenGraph` reads): it judges novelty, ambiguity and
reward of each step against the graph as it was just before, appends the step in
one store transaction (its observation, if new, and its transition or capture:
never half a step), and answers with the statistics the next selection needs.

States come from index shards (:mod:`spatialobs.distributed.shard`): the global
id of shard ``k``'s local state ``s`` is ``s · shards + k``. The graph copies each
shard's observations into the store in the shard's order (pulling any it has not
seen yet through ``fetch``), so the store replays into a single-process
:class:`~spatialobs.screen.StateIndex` without a divergence.

A step is identified by ``(worker, episode, step)``; recording it twice returns
the first answer (workers resend steps whose acknowledgement they did not get).
A restarted graph reopens its store and replays it.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

from spatialobs._errors import InvalidInputError, OutOfRangeError
from spatialobs.distributed.shard import Added, features_parts
from spatialobs.screen.graph import KAPPA, U0, Tallies, blend_u, step_reward
from spatialobs.screen.store import CaptureRow, GraphStore, ObservationRow, SQLiteStore, TransitionRow, open_store

__all__ = ["GraphLog", "Stats", "global_state"]

#: The selector's view of one state: ``(state, tries {σ: N(s, σ)}, reward sums {σ: Σ r})``.
Stats = Tuple[int, Dict[str, int], Dict[str, float]]
Fetch = Callable[[int, int, int], List[Tuple[int, int, bytes]]]


def global_state(added: Added, shards: int) -> int:
    """The graph's id of a shard's local state.

    Examples
    --------
    >>> global_state(Added(1, 3, 7, False, False, 8), 2)
    7
    """
    return added.state * shards + added.shard


class GraphLog:
    """Graph statistics shared by every worker, written through to a store.

    Parameters
    ----------
    store : None, path or GraphStore
        As for :class:`~spatialobs.screen.ScreenGraph` (a SQLite path survives a restart).
    shards : int
        Number of index shards.
    fetch : callable, optional
        ``fetch(shard, after, upto)`` returns a shard's observations
        (:meth:`IndexShard.rows`); needed when several workers index concurrently.
    app, kappa, u0, lambdas
        As for :class:`~spatialobs.screen.ScreenGraph` (remembered by the store).
    sync : bool, default False
        With a store path: ``fsync`` every step's commit before answering
        (:class:`~spatialobs.screen.store.SQLiteStore` ``sync``), so an acknowledged
        step survives the loss of the machine, not only of the process.

    Examples
    --------
    >>> from spatialobs.distributed.shard import IndexShard, features_bytes
    >>> from spatialobs.screen import Element, Screen, ScreenMeta, featurize
    >>> sh = IndexShard(0)
    >>> g = GraphLog(shards=1, fetch=lambda k, a, b: sh.rows(a, b))
    >>> def add(text):
    ...     f = featurize(Screen([Element((0, 0, 99, 9), "TitleBar", text)], 100, 100, ScreenMeta(app="demo")))
    ...     return sh.add_batch([features_bytes(f)])[0]
    >>> s, _ = g.observe(add("Home"))
    >>> r, _ = g.record(("w0", 0, 0), s, "click|button|next|1,1", "next", add("Page 2"))
    >>> r["target"], r["state_novel"], r["edge_novel"], r["reward"]
    (1, True, True, 2.0)
    """

    def __init__(self, store: Union[None, str, "os.PathLike[str]", GraphStore] = None, *, shards: int = 1,
                 fetch: Optional[Fetch] = None, app: Optional[str] = None, kappa: Optional[float] = None,
                 u0: Optional[float] = None, lambdas: Optional[Sequence[float]] = None, sync: bool = False) -> None:
        if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
            raise InvalidInputError(f"shards must be a positive integer, got {shards!r}")
        self.shards = shards
        self.fetch = fetch
        self.store = SQLiteStore(store, sync=True) if sync and isinstance(store, (str, os.PathLike)) \
            else open_store(store)
        with self.store.write():
            cfg = self.store.config()
            merged: Dict[str, Any] = {"kappa": KAPPA, "u0": U0, "lambdas": [1.0, 1.0, 1.0], "app": None}
            merged.update({k: v for k, v in cfg.items() if v is not None})
            for k, v in (("app", app), ("kappa", kappa), ("u0", u0),
                         ("lambdas", None if lambdas is None else [float(x) for x in lambdas])):
                if v is not None:
                    if cfg.get(k) is not None and cfg[k] != v:
                        raise InvalidInputError(f"the store was created with {k}={cfg[k]!r}, not {v!r}")
                    merged[k] = v
            if merged != cfg:
                self.store.set_config(merged)
        self.app: Optional[str] = merged["app"]
        self.kappa = float(merged["kappa"])
        self.u0 = float(merged["u0"])
        self.lambdas = tuple(float(x) for x in merged["lambdas"])
        self._reset()
        self._replay()

    # -- replay ----------------------------------------------------------------

    def _reset(self) -> None:
        self._known: Set[int] = set()
        self._pulled = [0] * self.shards  # observations of each shard copied into the store
        self._tallies = Tallies()
        self._done: Dict[Tuple[str, int, int], Dict[str, Any]] = {}

    def _replay(self) -> None:
        for o in self.store.observations(0):
            self._known.add(o.state)
            k = o.state % self.shards
            self._pulled[k] += 1
        for t in self.store.transitions(0):
            self._apply(t.source, t.signature, t.target, t.reward)
            self._done[(t.worker, t.episode, t.step)] = _answer(t.source, t.signature, t.target, t.state_novel, t.edge_novel, t.reward,
                                                               t.u_source, t.u_target, None, t.seq)
        for c in self.store.captures(0):
            self._apply_capture(c.source, c.signature)
            self._done[(c.worker, c.episode, c.step)] = _answer(c.source, c.signature, -1, False, False, 0.0, 0.0, 0.0,
                                                               c.app, c.seq)

    def _apply(self, s: int, sig: str, t: int, reward: float) -> None:
        self._tallies.add_transition(s, sig, t, reward)

    def _apply_capture(self, s: int, sig: str) -> None:
        self._tallies.add_capture(s, sig)

    # -- reading ---------------------------------------------------------------

    def n(self, state: int) -> int:
        return self._tallies.n(state)

    def ambiguity(self, state: int) -> float:
        """``D(s)`` as :meth:`ScreenGraph.ambiguity`."""
        return self._tallies.ambiguity(state)

    def u(self, state: int) -> float:
        return blend_u(self.n(state), self.ambiguity(state), self.kappa, self.u0)

    def stats(self, state: int) -> Stats:
        """What a selector reads about ``state``: its tries and reward sums per signature."""
        return state, self._tallies.tries(state), self._tallies.reward_sums(state)

    @property
    def num_states(self) -> int:
        return len(self._known)

    @property
    def num_edges(self) -> int:
        """Distinct ``(s, σ, s′)`` edges recorded."""
        return self._tallies.num_edges

    @property
    def num_transitions(self) -> int:
        """In-app steps recorded."""
        return self._tallies.num_transitions

    @property
    def num_captures(self) -> int:
        """Steps that left the application."""
        return self._tallies.num_captures

    def summary(self) -> Dict[str, int]:
        """States, edges, transitions and captures recorded."""
        t = self._tallies
        return {"states": self.num_states, "edges": t.num_edges, "transitions": t.num_transitions,
                "captures": t.num_captures}

    def edges(self) -> List[Tuple[int, str, int, int]]:
        """Every labeled edge as ``(s, σ, s′, count)``, sorted."""
        return list(self._tallies.edges())

    def steps(self, worker: Optional[str] = None) -> List[Tuple[str, int, int]]:
        """The ``(worker, episode, step)`` keys recorded (transitions and captures), sorted."""
        return sorted(k for k in self._done if worker is None or k[0] == worker)

    def answers(self, worker: str, episode: int) -> List[Tuple[int, Dict[str, Any]]]:
        """``(step, answer)`` of every recorded step of one episode, by step."""
        return sorted((k[2], a) for k, a in self._done.items() if k[0] == worker and k[1] == episode)

    def pid(self) -> int:
        return os.getpid()

    # -- writing ---------------------------------------------------------------

    def _pull(self, shard: int, upto: int, own: Optional[Tuple[int, int, bytes]] = None) -> None:
        # Copy shard observations numbered below `upto` into the store, in shard order.
        have = self._pulled[shard]
        if have >= upto:
            return
        rows: List[Tuple[int, int, bytes]] = []
        if own is not None and own[0] == have and upto == have + 1:
            rows = [own]
        else:
            if self.fetch is None:
                raise InvalidInputError(f"shard {shard} has observations the graph has not seen and no fetch")
            rows = self.fetch(shard, have, upto)
        for obs, local_state, raw in rows:
            # The row takes the encoded atoms as they are: no arrays built and written back.
            meta, control, text_atoms, text = features_parts(raw)
            state = local_state * self.shards + shard
            self.store.add_observation(ObservationRow(0, state, meta, control, text_atoms, text))
            self._known.add(state)
            self._pulled[shard] = obs + 1

    def _place(self, added: Added, raw: Optional[bytes]) -> Tuple[int, bool]:
        """The global state of an indexed screen and whether the graph knew it before (inside a write)."""
        state = global_state(added, self.shards)
        own = (added.observation, added.state, raw) if (raw is not None and not added.exact) else None
        upto = added.count - (0 if added.exact else 1)
        self._pull(added.shard, upto)
        novel = state not in self._known
        self._pull(added.shard, added.count, own)
        self._known.add(state)
        return state, novel

    def observe(self, added: Added, raw: Optional[bytes] = None) -> Tuple[int, Stats]:
        """The global state of a screen an agent is in (an episode's start, a recovery), and its stats.

        ``raw`` is the screen's encoded features (spares fetching them from the shard).
        """
        try:
            with self.store.write():
                state, _ = self._place(added, raw)
        except BaseException:
            self._reset()
            self._replay()
            raise
        return state, self.stats(state)

    def record(self, key: Tuple[str, int, int], source: int, signature: str, label: str,
               added: Optional[Added] = None, raw: Optional[bytes] = None, capture: Optional[Tuple[str, str]] = None
               ) -> Tuple[Dict[str, Any], Stats]:
        """Record one step; return its judgement and the stats of the state it reached.

        ``key`` is ``(worker, episode, step)``; ``added`` is the shard's answer for the
        resulting screen, or ``capture = (app, screen JSON)`` when that screen
        belongs to another application. Recording a key again returns the first answer.
        """
        worker, episode, step = str(key[0]), int(key[1]), int(key[2])
        k = (worker, episode, step)
        if k in self._done:
            a = self._done[k]
            return a, self.stats(a["target"] if a["target"] >= 0 else source)
        if source not in self._known:
            raise OutOfRangeError(f"no state {source} in the graph (it has {self.num_states})")
        if not isinstance(signature, str) or not signature:
            raise InvalidInputError(f"signature must be a non-empty string, got {signature!r}")
        u_s = self.u(source)
        try:
            return self._record_locked(k, source, signature, label, added, raw, capture, u_s)
        except BaseException:
            # A failed write may have left the counts ahead of the store: start over from it.
            self._reset()
            self._replay()
            raise

    def _record_locked(self, k: Tuple[str, int, int], source: int, signature: str, label: str,
                       added: Optional[Added], raw: Optional[bytes], capture: Optional[Tuple[str, str]], u_s: float
                       ) -> Tuple[Dict[str, Any], Stats]:
        worker, episode, step = k
        with self.store.write():
            if capture is not None:
                app, screen = capture
                seq = self.store.add_capture(CaptureRow(0, worker, episode, step, source, signature, str(app),
                                                        str(screen)))
                self._apply_capture(source, signature)
                a = _answer(source, signature, -1, False, False, 0.0, u_s, u_s, str(app), seq)
                self._done[k] = a
                return a, self.stats(source)
            if added is None:
                raise InvalidInputError("record needs the shard's answer or a capture")
            target, state_novel = self._place(added, raw)
            u_t = self.u0 if state_novel else self.u(target)
            edge_novel = not self._tallies.is_edge(source, signature, target)
            r = step_reward(state_novel, edge_novel, u_s, u_t, self.lambdas)
            seq = self.store.add_transition(TransitionRow(0, worker, episode, step, source, signature, target,
                                                          state_novel, edge_novel, r, u_s, u_t, label))
        self._apply(source, signature, target, r)
        a = _answer(source, signature, target, state_novel, edge_novel, r, u_s, u_t, None, seq)
        self._done[k] = a
        return a, self.stats(target)

    def close(self) -> None:
        self.store.close()


def _answer(source: int, signature: str, target: int, state_novel: bool, edge_novel: bool, reward: float, u_s: float, u_t: float,
            capture: Optional[str], seq: int) -> Dict[str, Any]:
    return {"source": int(source), "signature": signature, "target": int(target), "state_novel": bool(state_novel), "edge_novel": bool(edge_novel),
            "reward": float(reward), "u_source": float(u_s), "u_target": float(u_t), "capture": capture,
            "seq": int(seq)}
