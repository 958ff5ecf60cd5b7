"""An exploration worker: one driver, the shared index shards and graph behind two calls per step.

:class:`Explorer` runs the loop of :func:`spatialobs.screen.explore` (same
signatures, priors, selectors, rewards and metrics) with the state index and the
graph statistics elsewhere. One step costs two calls and one wait: the resulting
screen's features go to its index shard, and the shard's answer goes straight on
to the graph (on Ray, as an object reference: the worker does not wait for it in
between), which records the step and answers with the statistics of the state
reached, everything the next selection needs.

The worker keeps a log (JSON lines) of every step it sends and of every step
acknowledged: the graph must hold every acknowledged step, and nothing that was
never sent.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from spatialobs._errors import InvalidInputError
from spatialobs.distributed.graph import GraphLog, Stats
from spatialobs.distributed.shard import Added, IndexShard, features_bytes, shard_of
from spatialobs.screen.actions import Action
from spatialobs.screen.explore import Episode, Position, Walk, episode_metrics, features_digest, take_step
from spatialobs.screen.features import Features, featurize
from spatialobs.screen.graph import Transition
from spatialobs.screen.model import Screen
from spatialobs.screen.select import make_selector, selector_seed

__all__ = ["Explorer", "LocalLinks", "StatsView"]


class StatsView:
    """What a selector reads of the graph (``tries``, ``q``, ``lambdas``), for one state, from a snapshot."""

    def __init__(self, stats: Stats, lambdas: Sequence[float]) -> None:
        self.state, self._tries, self._rsum = stats
        self.lambdas = tuple(lambdas)

    def tries(self, state: int) -> Dict[str, int]:
        return dict(self._tries) if state == self.state else {}

    def q(self, state: int, signature: str) -> float:
        n = self._tries.get(signature, 0) if state == self.state else 0
        return self._rsum[signature] / n if n else 0.0


class LocalLinks:
    """Shards and graph in this process (the reference the Ray links are tested against).

    Examples
    --------
    >>> links = LocalLinks([IndexShard(0)], GraphLog(app="notepad"))
    >>> links.calls, links.waits
    (0, 0)
    """

    def __init__(self, shards: Sequence[IndexShard], graph: GraphLog) -> None:
        self.shards = list(shards)
        self.graph = graph
        self.calls = 0
        self.waits = 0
        self.wait_seconds = 0.0

    def observe(self, shard: int, raw: bytes) -> Tuple[int, Stats]:
        self.calls += 2
        self.waits += 1
        added = self.shards[shard].add_batch([raw])[0]
        return self.graph.observe(added, raw)

    def record(self, key: Tuple[str, int, int], source: int, sig: str, label: str, shard: Optional[int],
               raw: Optional[bytes], capture: Optional[Tuple[str, str]]) -> Tuple[Dict[str, Any], Stats]:
        self.calls += 1 if shard is None else 2
        self.waits += 1
        added: Optional[Added] = None if shard is None else self.shards[shard].add_batch([raw or b""])[0]
        return self.graph.record(key, source, sig, label, added, raw, capture)


class Explorer:
    """Explore with one driver against shared shards and graph reached through ``links``.

    Parameters
    ----------
    name : str
        The worker's name in the graph's log.
    make_env : callable
        ``make_env() -> environment`` (see :mod:`spatialobs.screen.explore`): a
        simulator or a real-application driver; called once, in the worker.
    links : LocalLinks or RayLinks
        How the worker reaches the shards and the graph.
    shards : int
        Number of index shards.
    app : str, optional
        The graph's application (default: the environment's ``app``).
    lambdas : sequence of float
        The graph's reward weights (PUCT normalizes by their sum).
    log : str or Path, optional
        The worker's step log (JSON lines).
    grid, mask_volatile
        Featurization options; must match the shards' index options.

    Examples
    --------
    >>> from functools import partial
    >>> from spatialobs.screen import sim
    >>> links = LocalLinks([IndexShard(0)], GraphLog(app="notepad"))
    >>> w = Explorer("w0", partial(sim.make_app, "notepad", 0), links)
    >>> ep = w.run_episode(0, steps=5)
    >>> len(ep.steps), links.waits == 1 + len(ep.steps) + sum(st.capture is not None for st in ep.steps)
    (5, True)
    """

    def __init__(self, name: str, make_env: Callable[[], Any], links: Any, shards: int = 1, *,
                 app: Optional[str] = None, lambdas: Sequence[float] = (1.0, 1.0, 1.0), u0: float = 0.5,
                 log: Union[None, str, "os.PathLike[str]"] = None, grid: int = 30,
                 mask_volatile: bool = False) -> None:
        self.name = str(name)
        self.env = make_env()
        for attr in ("reset", "step"):
            if not callable(getattr(self.env, attr, None)):
                raise InvalidInputError(f"the driver must have a {attr}() method (see spatialobs.screen.explore)")
        self.links = links
        self.shards = int(shards)
        self.app = app if app is not None else getattr(self.env, "app", None)
        self.lambdas = tuple(float(x) for x in lambdas)
        self.u0 = float(u0)
        self.grid = int(grid)
        self.mask_volatile = bool(mask_volatile)
        self._log = open(Path(log), "a", encoding="utf-8") if log is not None else None
        self.steps_done = 0
        self.busy_seconds = 0.0
        self._shard_of: Dict[Tuple[Optional[str], ...], int] = {}

    def _write(self, rec: Dict[str, Any], flush: bool) -> None:
        if self._log is not None:
            self._log.write(json.dumps(rec) + "\n")
            if flush:
                self._log.flush()

    def _features(self, screen: Screen) -> Tuple[Features, int, bytes]:
        f = featurize(screen, self.grid, mask_volatile=self.mask_volatile)
        key = f.meta.key()
        k = self._shard_of.get(key)
        if k is None:
            k = self._shard_of[key] = shard_of(key, self.shards)
        return f, k, features_bytes(f)

    # -- the graph side of a step (spatialobs.screen.explore.StepGraph) ----------------

    def observe(self, screen: Screen) -> Position:
        """The position of a screen the worker is in (an episode's start, a recovery)."""
        f, k, raw = self._features(screen)
        state, stats = self.links.observe(k, raw)
        return Position(screen, state, StatsView(stats, self.lambdas), features_digest(f))

    def record(self, source: Position, signature: str, action: Action, screen: Screen, episode: int,
               step: int) -> Tuple[Transition, Optional[Position]]:
        """Send one step to the graph (logged as sent before, as acknowledged after); its judgement and position."""
        key = (self.name, int(episode), int(step))
        self._write({"key": key, "sent": signature, "source": source.state}, flush=True)
        reached: Optional[Position] = None
        if self.app is not None and screen.meta.app is not None and screen.meta.app != self.app:
            ans, stats = self.links.record(key, source.state, signature, action.label, None, None,
                                           (str(screen.meta.app), json.dumps(screen.to_dict(), sort_keys=True)))
        else:
            f, k, raw = self._features(screen)
            ans, stats = self.links.record(key, source.state, signature, action.label, k, raw, None)
            reached = Position(screen, ans["target"], StatsView(stats, self.lambdas), features_digest(f))
        # Not flushed: a lost acknowledgement only makes the log claim less (the next "sent" flushes it).
        self._write({"key": key, "acked": ans["seq"], "target": ans["target"]}, flush=False)
        tr = Transition(ans["source"], ans["signature"], ans["target"], ans["state_novel"], ans["edge_novel"],
                        ans["reward"], ans["u_source"], ans["u_target"], ans["capture"], ans["seq"])
        return tr, reached

    def starts(self, n: int) -> List[Any]:
        """The driver's first ``n`` replayable starts (``None`` each when it has none)."""
        fn = getattr(self.env, "starts", None)
        return list(fn(n)) if callable(fn) else [None] * n

    def run_episode(self, episode: int, start: Any = None, steps: int = 50, selector: Any = "puct",
                    prior: Any = "heuristic", goal: Optional[str] = None) -> Episode:
        """One episode of ``steps`` actions from ``start``; every step is acknowledged by the graph.

        The steps are :func:`spatialobs.screen.explore.take_step`, as in the single-process loop.
        """
        clock = time.perf_counter
        t0 = clock()
        env = self.env
        sel = make_selector(selector, seed=selector_seed(getattr(env, "seed", 0), episode))
        goal = goal if goal is not None else str(getattr(env, "goal", "") or "")
        walk = Walk.of(env, sel, prior, goal, self.grid, app=self.app or "", episode=int(episode))
        screen = env.reset(start) if start is not None else env.reset()
        reset_s = clock() - t0
        if not isinstance(screen, Screen):
            raise InvalidInputError(f"env.reset() must return a Screen, got {type(screen).__name__}")
        at = self.observe(screen)
        ep = Episode(app=self.app or "", start=start, goal=goal, selector=sel.name, start_state=at.state)
        env_s = 0.0
        began = clock()
        for t in range(steps):
            st, at, spent, fault = take_step(walk, t, at, self)
            env_s += spent
            ep.faults += fault
            ep.steps.append(st)
        wall = clock() - began
        ep.timing = {"reset": reset_s, "wall": wall, "env": env_s, "ours": max(wall - env_s, 0.0)}
        ep.metrics = episode_metrics(ep.start_state, ep.steps, self.u0)
        self.steps_done += len(ep.steps)
        self.busy_seconds += clock() - t0
        return ep

    def counters(self) -> Dict[str, float]:
        """Steps, busy seconds, calls, waits and seconds spent waiting, so far."""
        return {"steps": self.steps_done, "seconds": self.busy_seconds, "calls": getattr(self.links, "calls", 0),
                "waits": getattr(self.links, "waits", 0), "wait_seconds": getattr(self.links, "wait_seconds", 0.0)}

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        """Close the step log and the driver."""
        if self._log is not None:
            self._log.close()
        close = getattr(self.env, "close", None)
        if callable(close):
            close()
