"""Exploration and dedup on a Ray cluster (or a local Ray runtime).

Actors:

* one :class:`~spatialobs.distributed.shard.IndexShard` per index shard (the
  metadata partitions hashed onto ``shards`` actors), each with a write-ahead log
  and checkpoints in the run folder;
* one :class:`~spatialobs.distributed.graph.GraphLog`, the single writer of the
  graph store (the SQLite log :class:`~spatialobs.screen.ScreenGraph` reads);
* one :class:`~spatialobs.distributed.explorer.Explorer` per worker, each owning
  its driver.

Every actor is restarted by Ray when its process dies. Shard and graph calls are
retried by Ray (at least once) and are idempotent: a shard that sees a screen
again finds it as an exact duplicate, the graph answers a step it already holds
with the first answer. A worker killed mid-episode is restarted for its next
episodes; the episode it was running is reported as ended at its last
acknowledged step (:attr:`RayRun.interrupted`).

Nothing here is imported by ``import spatialobs``; Ray is needed only to call it
(``pip install "spatialobs[ray]"``).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from spatialobs._errors import InvalidInputError, SpatialObsError
from spatialobs.distributed.explorer import Explorer
from spatialobs.distributed.graph import GraphLog, Stats
from spatialobs.distributed.shard import Added, IndexShard, features_bytes, shard_of
from spatialobs.screen.actions import Action
from spatialobs.screen.explore import Episode, Step, episode_metrics

__all__ = ["require_ray", "ray_runtime", "RayLinks", "RayExploration", "RayRun", "explore_ray", "DedupResult",
           "dedup_ray"]


def require_ray() -> Any:
    """The ``ray`` module, or a ``SpatialObsError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise SpatialObsError('Ray is not installed: pip install "spatialobs[ray]"') from None
    return ray


@contextlib.contextmanager
def ray_runtime(address: Optional[str] = None, num_cpus: Optional[int] = 2) -> Iterator[Any]:
    """Join the cluster at ``address``, or start a local runtime (loopback only, no dashboard); shut down after.

    When Ray is already initialized in this process it is used as is and left running.

    Examples
    --------
    >>> with ray_runtime() as ray:  # doctest: +SKIP
    ...     ray.cluster_resources()["CPU"]
    2.0
    """
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def _retry(ray: Any, fn: Callable[[], Any], deadline: float = 120.0) -> Any:
    # An actor that is restarting refuses calls for a moment; its calls are idempotent, so send again.
    from ray.exceptions import ActorUnavailableError, RayActorError

    end = time.monotonic() + deadline
    while True:
        try:
            return fn()
        except (RayActorError, ActorUnavailableError):
            if time.monotonic() > end:
                raise
            time.sleep(0.2)


class RayLinks:
    """A worker's links to the shard actors and the graph actor: two calls and one wait per step."""

    def __init__(self, shards: Sequence[Any], graph: Any) -> None:
        self.ray = require_ray()
        self.shards = list(shards)
        self.graph = graph
        self.calls = 0
        self.waits = 0
        self.wait_seconds = 0.0

    def _get(self, submit: Callable[[], Any]) -> Any:
        def once() -> Any:
            ref = submit()
            t0 = time.perf_counter()
            try:
                return self.ray.get(ref)
            finally:
                self.waits += 1
                self.wait_seconds += time.perf_counter() - t0

        return _retry(self.ray, once)

    def observe(self, shard: int, raw: bytes) -> Tuple[int, Stats]:
        def submit() -> Any:
            self.calls += 2
            # The shard's answer goes to the graph as a reference: no wait in between.
            return self.graph.observe.remote(self.shards[shard].add_one.remote(raw), raw)

        out: Tuple[int, Stats] = self._get(submit)
        return out

    def record(self, key: Tuple[str, int, int], source: int, sig: str, label: str, shard: Optional[int],
               raw: Optional[bytes], capture: Optional[Tuple[str, str]]) -> Tuple[Dict[str, Any], Stats]:
        def submit() -> Any:
            if shard is None:
                self.calls += 1
                return self.graph.record.remote(key, source, sig, label, None, None, capture)
            self.calls += 2
            added = self.shards[shard].add_one.remote(raw)
            return self.graph.record.remote(key, source, sig, label, added, raw, None)

        ans: Tuple[Dict[str, Any], Stats] = self._get(submit)
        return ans


class _Timed:
    # Calls served and seconds spent inside them (the actor's own service time, not its queue).
    _served = 0
    _service_seconds = 0.0

    def _timed(self, fn: Callable[..., Any], *args: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self._served += 1
            self._service_seconds += time.perf_counter() - t0

    def service(self) -> Dict[str, float]:
        """Calls served and seconds spent serving them, since the actor's last start."""
        return {"calls": self._served, "seconds": self._service_seconds}


class _Shard(_Timed, IndexShard):
    def add_one(self, raw: bytes) -> Added:
        out: Added = self._timed(self.add_batch, [raw])[0]
        return out


class _Graph(_Timed, GraphLog):
    def __init__(self, store: str, shards: Sequence[Any], **options: Any) -> None:
        ray = require_ray()
        handles = list(shards)
        super().__init__(store, shards=len(handles),
                         fetch=lambda k, a, b: ray.get(handles[k].rows.remote(a, b)), **options)

    def observe(self, added: Added, raw: Optional[bytes] = None) -> Tuple[int, Stats]:
        out: Tuple[int, Stats] = self._timed(super().observe, added, raw)
        return out

    def record(self, *args: Any, **kwargs: Any) -> Tuple[Dict[str, Any], Stats]:
        out: Tuple[Dict[str, Any], Stats] = self._timed(partial(super().record, **kwargs), *args)
        return out


class _Worker(Explorer):
    def __init__(self, name: str, make_env: Callable[[], Any], shards: Sequence[Any], graph: Any,
                 **options: Any) -> None:
        super().__init__(name, make_env, RayLinks(shards, graph), len(shards), **options)


def _sim_factory(app: str, seed: int, options: Dict[str, Any]) -> Any:
    from spatialobs.screen import sim

    return sim.make_app(app, seed, **options)


@dataclass
class RayRun:
    """The outcome of :func:`explore_ray`.

    ``episodes`` by start; ``workers`` maps a worker's name to its steps, busy
    seconds, steps per second, calls, waits and seconds spent waiting;
    ``interrupted`` lists the episodes whose worker died (ended at their last
    acknowledged step, their steps rebuilt from the graph with ``action=None``);
    ``graph`` is the graph's summary; ``store`` the graph store's path.
    """

    episodes: List[Episode]
    workers: Dict[str, Dict[str, float]]
    seconds: float
    graph: Dict[str, int]
    store: str
    interrupted: List[int] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return sum(len(e.steps) for e in self.episodes)

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0


class RayExploration:
    """The actors of a distributed exploration, for :func:`explore_ray` and for tests that kill them.

    Parameters
    ----------
    make_env : callable
        ``make_env() -> environment``, called once in each worker (picklable).
    app : str
        The graph's application.
    workers, shards : int
        Worker and index-shard actors.
    folder : str or Path
        Shard logs and checkpoints, worker logs and (by default) the graph store.
    store : str or Path, optional
        The graph store (default ``folder/graph.sqlite``); reachable from the graph actor.
    checkpoint_every : int
        Shard checkpoint period, in new observations.
    grid, tau, mask_volatile
        Index options.

    Examples
    --------
    >>> with ray_runtime():                                   # doctest: +SKIP
    ...     run = RayExploration(partial(sim.make_app, "notepad", 0), "notepad", folder="run")
    ...     refs = run.submit(run.starts(4), steps=20)
    ...     eps = run.gather(refs)
    """

    def __init__(self, make_env: Callable[[], Any], app: str, *, workers: int = 2, shards: int = 1,
                 folder: Union[str, Path], store: Union[None, str, Path] = None, checkpoint_every: int = 5000,
                 grid: int = 30, tau: float = 0.93, mask_volatile: bool = False) -> None:
        for name, v in (("workers", workers), ("shards", shards)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidInputError(f"{name} must be a positive integer, got {v!r}")
        ray = self.ray = require_ray()
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.store = str(store if store is not None else self.folder / "graph.sqlite")
        self.make_env = make_env
        self.app = app
        index = {"grid": grid, "tau": tau, "mask_volatile": mask_volatile}
        # num_cpus=0: actors are placed regardless of the CPU count (workers may outnumber cores).
        shard_cls = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(_Shard)
        graph_cls = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(_Graph)
        worker_cls = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=0)(_Worker)
        self.shards = [shard_cls.remote(k, str(self.folder / "shards"), checkpoint_every=checkpoint_every, **index)
                       for k in range(shards)]
        self.graph = graph_cls.remote(self.store, self.shards, app=app)
        ray.get(self.graph.summary.remote())  # the store exists before any worker writes
        self.worker_names = [f"w{i}" for i in range(workers)]
        self.workers = [worker_cls.remote(name, make_env, self.shards, self.graph, app=app,
                                          log=str(self.folder / f"{name}.steps.jsonl"), grid=grid,
                                          mask_volatile=mask_volatile)
                        for name in self.worker_names]
        self._episodes: Dict[int, Tuple[str, Any]] = {}

    def ready(self) -> Dict[str, int]:
        """Wait until every actor runs; the process id of each (by name: ``graph``, ``shard<k>``, ``w<i>``)."""
        names = ["graph"] + [f"shard{k}" for k in range(len(self.shards))] + self.worker_names
        pids = self.ray.get([self.graph.pid.remote()] + [s.pid.remote() for s in self.shards]
                            + [w.pid.remote() for w in self.workers])
        return dict(zip(names, pids))

    def starts(self, n: int) -> List[Any]:
        """The driver's first ``n`` replayable starts (``None`` each for a driver without them)."""
        env = self.make_env()
        fn = getattr(env, "starts", None)
        out = list(fn(n)) if callable(fn) else [None] * n
        close = getattr(env, "close", None)
        if callable(close):
            close()
        return out

    def submit(self, starts: Sequence[Any], steps: int = 50, selector: str = "puct", prior: str = "heuristic",
               first: int = 0) -> List[Any]:
        """Queue one episode per start (start ``k`` on worker ``k % workers``); return their references."""
        refs = []
        for j, start in enumerate(starts):
            k = first + j
            i = k % len(self.workers)
            refs.append(self.workers[i].run_episode.remote(k, start, steps, selector, prior))
            self._episodes[k] = (self.worker_names[i], start)
        return refs

    def gather(self, refs: Sequence[Any], first: int = 0) -> Tuple[List[Episode], List[int]]:
        """The episodes of :meth:`submit` in order, and the numbers of those whose worker died."""
        from ray.exceptions import RayActorError

        eps: List[Episode] = []
        lost: List[int] = []
        for j, ref in enumerate(refs):
            k = first + j
            try:
                eps.append(self.ray.get(ref))
            except RayActorError:
                lost.append(k)
                eps.append(self._ended(k))
        return eps, lost

    def _ended(self, k: int) -> Episode:
        # The episode as the graph holds it: every acknowledged step, nothing after.
        name, start = self._episodes[k]
        answers = _retry(self.ray, lambda: self.ray.get(self.graph.answers.remote(name, k)))
        steps = [Step(t, a["source"], a["signature"], None, a["target"], a["state_novel"],  # type: ignore[arg-type]
                      a["edge_novel"], a["reward"], a["u_source"], a["u_target"], a["capture"], 0.0, 0.0, 0.0, 0.0)
                 for t, a in answers]
        start_state = steps[0].source if steps else -1
        ep = Episode(app=self.app, start=start, goal="", selector="", start_state=start_state, steps=steps)
        ep.metrics = episode_metrics(start_state, steps)
        return ep

    def counters(self) -> Dict[str, Dict[str, float]]:
        """Each worker's :meth:`Explorer.counters` (since its last restart)."""
        out = {}
        for name, w in zip(self.worker_names, self.workers):
            c: Dict[str, float] = _retry(self.ray, partial(self._call, w.counters))
            c["steps_per_second"] = c["steps"] / c["seconds"] if c["seconds"] else 0.0
            out[name] = c
        return out

    def service(self) -> Dict[str, Dict[str, float]]:
        """Calls served and seconds spent inside them, of the graph (``graph``) and each shard (``shard<k>``)."""
        actors = [("graph", self.graph)] + [(f"shard{k}", s) for k, s in enumerate(self.shards)]
        return {name: _retry(self.ray, partial(self._call, a.service)) for name, a in actors}

    def summary(self) -> Dict[str, int]:
        """The graph's states, edges, transitions and captures."""
        out: Dict[str, int] = _retry(self.ray, partial(self._call, self.graph.summary))
        return out

    def checkpoint(self) -> List[int]:
        """Checkpoint every shard now; the observations each checkpoint covers."""
        out: List[int] = _retry(self.ray, lambda: self.ray.get([s.checkpoint.remote() for s in self.shards]))
        return out

    def _call(self, method: Any, *args: Any) -> Any:
        return self.ray.get(method.remote(*args))

    def close(self) -> None:
        """Close the graph store and the workers' logs, and end the actors."""
        calls = [self.graph.close.remote()] + [w.close.remote() for w in self.workers] + \
                [s.close.remote() for s in self.shards]
        with contextlib.suppress(Exception):
            self.ray.get(calls, timeout=60)
        for a in self.workers + self.shards + [self.graph]:
            self.ray.kill(a, no_restart=True)


def explore_ray(app: str, *, starts: int = 4, steps: int = 50, workers: int = 2, shards: int = 1,
                seed: int = 0, selector: str = "puct", prior: str = "heuristic", store: Union[None, str, Path] = None,
                folder: Union[None, str, Path] = None, address: Optional[str] = None,
                make_env: Optional[Callable[[], Any]] = None, num_cpus: int = 2, **options: Any) -> RayRun:
    """Explore a simulated app (or any driver) from ``starts`` starts with ``workers`` Ray actors.

    Parameters
    ----------
    app : str
        A simulated app's name (``sim.make_app``), or the graph's app when ``make_env`` is given.
    starts, steps, workers, shards, seed, selector, prior
        As for :func:`~spatialobs.screen.explore_workers`, plus the number of index shards.
    store : str or Path, optional
        The graph store to write (SQLite; default: in ``folder``).
    folder : str or Path, optional
        Logs and checkpoints (default: a temporary folder, removed afterwards).
    address : str, optional
        A Ray cluster to join; default: a local runtime with ``num_cpus`` CPUs.
    make_env : callable, optional
        A picklable ``make_env() -> environment`` (e.g. a real-application driver).
    **options
        Passed to ``sim.make_app``.

    Examples
    --------
    >>> run = explore_ray("notepad", starts=2, steps=10, workers=2)   # doctest: +SKIP
    >>> run.steps, sorted(run.workers)                               # doctest: +SKIP
    (20, ['w0', 'w1'])
    """
    if make_env is None:
        make_env = partial(_sim_factory, app, seed, dict(options))
    tmp = None
    if folder is None:
        tmp = folder = tempfile.mkdtemp(prefix="spatialobs-ray-")
    try:
        with ray_runtime(address, num_cpus):
            run = RayExploration(make_env, app, workers=workers, shards=shards, folder=folder, store=store)
            try:
                run.ready()
                t0 = time.perf_counter()
                refs = run.submit(run.starts(starts), steps, selector, prior)
                eps, lost = run.gather(refs)
                seconds = time.perf_counter() - t0
                out = RayRun(eps, run.counters(), seconds, run.summary(), run.store, lost)
            finally:
                run.close()
        return out
    finally:
        if tmp is not None and store is None:
            shutil.rmtree(tmp, ignore_errors=True)


# ---- dedup ---------------------------------------------------------------------------


@dataclass
class DedupResult:
    """The outcome of :func:`dedup_ray`: per readable screen its state (numbered as a single
    :class:`~spatialobs.screen.StateIndex` fed the same screens in the same order would), how it
    matched, and the labels of unreadable inputs.

    Examples
    --------
    >>> DedupResult([0, 1, 0], exact=1, merged=0, new=2, observations=2, failed=[], seconds=0.1).num_states
    2
    """

    states: List[int]
    exact: int
    merged: int
    new: int
    observations: int
    failed: List[Tuple[str, str]]
    seconds: float

    @property
    def num_states(self) -> int:
        return self.new


def _featurize_chunk(items: Sequence[Tuple[str, Any]], shards: int, grid: int, mask_volatile: bool
                     ) -> Tuple[List[Tuple[str, int, bytes]], List[Tuple[str, str]], Any]:
    import json as _json

    from spatialobs.screen import HashedNgramEmbedder, featurize, load_screen

    ok: List[Tuple[str, int, bytes]] = []
    bad: List[Tuple[str, str]] = []
    feats = []
    for label, src in items:
        try:
            doc = _json.loads(src) if isinstance(src, str) else src
            f = featurize(load_screen(doc), grid, mask_volatile=mask_volatile)
        except (SpatialObsError, ValueError, OSError) as exc:
            bad.append((label, str(exc)))
            continue
        feats.append(f)
        ok.append((label, shard_of(f.meta, shards), features_bytes(f)))
    vecs = HashedNgramEmbedder().embed([f.text for f in feats]) if feats else np.empty((0, 0), np.float32)
    return ok, bad, np.ascontiguousarray(vecs, dtype=np.float32)


def dedup_ray(sources: Sequence[Tuple[str, Any]], *, shards: int = 2, chunk: int = 500, grid: int = 30,
              tau: float = 0.93, mask_volatile: bool = False, address: Optional[str] = None, num_cpus: int = 2,
              folder: Union[None, str, Path] = None) -> DedupResult:
    """Merge screens into states on Ray: featurize in parallel tasks, index in shard actors, input order kept.

    ``sources`` are ``(label, screen)`` pairs where a screen is anything
    :func:`~spatialobs.screen.load_screen` reads (a path, a dict) or a JSON string.
    Each metadata partition is indexed by one shard in input order, so the states
    equal those of one ``StateIndex(tau=tau, grid=grid, mask_volatile=...)`` fed the
    readable screens in order. ``folder`` keeps the shards' logs and final checkpoints.

    Examples
    --------
    >>> from spatialobs.screen.synth import make_corpus
    >>> c = make_corpus(apps=2, templates_per_app=5, variants=3)
    >>> res = dedup_ray([(str(i), s.to_dict()) for i, s in enumerate(c.screens)])  # doctest: +SKIP
    >>> res.num_states                                                               # doctest: +SKIP
    10
    """
    items = list(sources)
    t0 = time.perf_counter()
    with ray_runtime(address, num_cpus) as ray:
        feat = ray.remote(num_cpus=1)(_featurize_chunk)
        shard_cls = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(_Shard)
        where = str(Path(folder) / "shards") if folder is not None else None
        actors = [shard_cls.remote(k, where, checkpoint_every=0, grid=grid, tau=tau, mask_volatile=mask_volatile)
                  for k in range(shards)]
        chunks = [items[i:i + chunk] for i in range(0, len(items), chunk)]
        frefs = [feat.remote(c, shards, grid, mask_volatile) for c in chunks]
        # Chunks are handed to the shards in input order (one caller: each shard runs them in that order).
        plan: List[List[Tuple[int, Any, List[int]]]] = []
        failed: List[Tuple[str, str]] = []
        for fref in frefs:
            ok, bad, vecs = ray.get(fref)
            failed += bad
            sub = []
            for k in range(shards):
                idx = [i for i, (_, s, _) in enumerate(ok) if s == k]
                if idx:
                    sub.append((k, actors[k].add_batch.remote([ok[i][2] for i in idx], vecs[idx]), idx))
            plan.append(sub)
        states: List[int] = []
        exact = merged = new = 0
        number: Dict[Tuple[int, int], int] = {}
        for sub in plan:
            n = sum(len(idx) for _, _, idx in sub)
            got: List[Optional[Added]] = [None] * n
            for k, ref, idx in sub:
                for i, a in zip(idx, ray.get(ref)):
                    got[i] = a
            for a in got:
                assert a is not None
                key = (a.shard, a.state)
                if key not in number:  # first appearance in input order: the single index's numbering
                    number[key] = len(number)
                states.append(number[key])
                exact += a.exact
                new += a.new_state
                merged += (not a.new_state) and not a.exact
        obs = sum(s["observations"] for s in ray.get([a.stats.remote() for a in actors]))
        if folder is not None:
            ray.get([a.checkpoint.remote() for a in actors])
        ray.get([a.close.remote() for a in actors])
        for a in actors:
            ray.kill(a, no_restart=True)
    return DedupResult(states, exact, merged, new, obs, failed, time.perf_counter() - t0)
