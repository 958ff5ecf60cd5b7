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

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from spatialobs._errors import InvalidInputError
from spatialobs.distributed.graph import GraphLog, Stats
from spatialobs.distributed.shard import Added, IndexShard, features_bytes, shard_of
from spatialobs.screen.actions import Action, candidate_actions, signature
from spatialobs.screen.explore import Episode, Step, episode_metrics
from spatialobs.screen.features import Features, featurize
from spatialobs.screen.model import Screen
from spatialobs.screen.select import make_selector, prior_weights, resolve_prior

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


def _digest(f: Features) -> str:
    # The same digest as the single-process loop's Step.digest.
    h = hashlib.blake2b(digest_size=8)
    h.update(f.control_atoms.astype("<u8").tobytes())
    h.update(b"|")
    h.update(f.text_atoms.astype("<u8").tobytes())
    h.update(repr(f.meta.key()).encode())
    return h.hexdigest()


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

    def _write(self, rec: Dict[str, Any]) -> None:
        if self._log is not None:
            self._log.write(json.dumps(rec) + "\n")
            self._log.flush()

    def _features(self, screen: Screen) -> Tuple[Features, int, bytes]:
        f = featurize(screen, self.grid, mask_volatile=self.mask_volatile)
        return f, shard_of(f.meta, self.shards), features_bytes(f)

    def _observe(self, screen: Screen) -> Tuple[int, Stats, str]:
        f, k, raw = self._features(screen)
        state, stats = self.links.observe(k, raw)
        return state, stats, _digest(f)

    def starts(self, n: int) -> List[Any]:
        """The driver's first ``n`` replayable starts (``None`` each when it has none)."""
        fn = getattr(self.env, "starts", None)
        return list(fn(n)) if callable(fn) else [None] * n

    def run_episode(self, episode: int, start: Any = None, steps: int = 50, selector: Any = "puct",
                    prior: Any = "heuristic", goal: Optional[str] = None) -> Episode:
        """One episode of ``steps`` actions from ``start``; every step is acknowledged by the graph."""
        t0 = time.perf_counter()
        env = self.env
        sel = make_selector(selector, seed=episode)
        resolve_prior(prior)
        goal = goal if goal is not None else str(getattr(env, "goal", "") or "")
        get_actions: Callable[[Screen], List[Action]] = getattr(env, "actions", None) or candidate_actions
        recover = getattr(env, "recover", None) or env.reset
        screen = env.reset(start) if start is not None else env.reset()
        s, stats, digest = self._observe(screen)
        ep = Episode(app=self.app or "", start=start, goal=goal, selector=sel.name, start_state=s)
        for t in range(steps):
            acts = list(get_actions(screen))
            if not acts:
                raise InvalidInputError(f"the environment offers no action on its screen at step {t}")
            sigs = [signature(a, screen, self.grid) for a in acts]
            seen: Dict[str, int] = {}
            keep = [i for i, sg in enumerate(sigs) if seen.setdefault(sg, i) == i]
            acts = [acts[i] for i in keep]
            sigs = [sigs[i] for i in keep]
            p = prior_weights(prior, screen, acts, goal)
            view = StatsView(stats, self.lambdas)
            scores = sel.scores(view, s, sigs, p)
            i = sel.select(view, s, sigs, p)
            nxt = env.step(acts[i])
            key = (self.name, int(episode), t)
            self._write({"key": key, "sent": sigs[i], "source": s})
            if self.app is not None and nxt.meta.app is not None and nxt.meta.app != self.app:
                ans, stats = self.links.record(key, s, sigs[i], acts[i].label, None, None,
                                               (str(nxt.meta.app), json.dumps(nxt.to_dict(), sort_keys=True)))
                self._write({"key": key, "acked": ans["seq"], "target": ans["target"]})
                nxt = recover()
                target, stats, next_digest = self._observe(nxt)
            else:
                f, k, raw = self._features(nxt)
                ans, stats = self.links.record(key, s, sigs[i], acts[i].label, k, raw, None)
                self._write({"key": key, "acked": ans["seq"], "target": ans["target"]})
                target, next_digest = ans["target"], _digest(f)
            ep.steps.append(Step(t, s, sigs[i], acts[i], target, ans["state_novel"], ans["edge_novel"],
                                 ans["reward"], ans["u_source"], ans["u_target"], ans["capture"], float(p[i]),
                                 float(scores[i]), screen.width, screen.height, digest, None))
            screen, s, digest = nxt, target, next_digest
        ep.metrics = episode_metrics(ep.start_state, ep.steps, self.u0)
        self.steps_done += len(ep.steps)
        self.busy_seconds += time.perf_counter() - t0
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
