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

Across nodes: a :class:`Placement` pins each actor to a node (when that node
dies, Ray restarts the actor on a surviving one). A restarted actor recovers
from the run folder, so the folder must be on storage that every node mounts at
the same path; each actor checks, before it opens a log, that it sees the folder
the driver marked (:class:`RunFolderError` otherwise). When the nodes are on
several machines, every log record and commit is also fsynced before it is
acknowledged (``sync``). :class:`LocalCluster` starts a head and worker nodes on
this machine, each on its own loopback address, for tests and measurements.

Nothing here is imported by ``import spatialobs``; Ray is needed only to call it
(``pip install "spatialobs[ray]"``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import shutil
import signal
import tempfile
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from spatialobs._errors import InvalidInputError, SpatialObsError
from spatialobs.distributed.explorer import Explorer
from spatialobs.distributed.graph import GraphLog, Stats
from spatialobs.distributed.shard import Added, IndexShard, features_bytes, shard_of
from spatialobs.screen.explore import Episode, Step, episode_metrics

__all__ = ["require_ray", "ray_runtime", "RayLinks", "RayExploration", "RayRun", "explore_ray", "DedupResult",
           "dedup_ray", "Placement", "RunFolderError", "alive_nodes", "LocalCluster"]


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


# ---- nodes, placement and the run folder ------------------------------------------------


def alive_nodes(ray: Any = None) -> List[Tuple[str, str]]:
    """``(node id, address)`` of every alive node of the connected cluster, the head first.

    Examples
    --------
    >>> with ray_runtime() as ray:      # doctest: +SKIP
    ...     [addr for _, addr in alive_nodes(ray)]
    ['127.0.0.1']
    """
    ray = ray if ray is not None else require_ray()
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    nodes.sort(key=lambda n: ("node:__internal_head__" not in n.get("Resources", {}), n["NodeManagerAddress"],
                              n["NodeID"]))
    return [(str(n["NodeID"]), str(n["NodeManagerAddress"])) for n in nodes]


def several_machines(addresses: Sequence[str]) -> bool:
    """Whether nodes at these addresses can be on more than one machine (every loopback address is this one).

    Examples
    --------
    >>> several_machines(["127.0.0.2", "127.0.0.3"]), several_machines(["10.0.0.5", "10.0.0.6"])
    (False, True)
    """
    def host(a: str) -> str:
        try:
            return "loopback" if ipaddress.ip_address(a).is_loopback else a
        except ValueError:
            return a

    return len({host(a) for a in addresses}) > 1


@dataclass(frozen=True)
class Placement:
    """The node each actor of a run starts on: a Ray node id (hex), or ``None`` for Ray's choice.

    ``shards[k]`` is shard ``k``'s node and ``workers[i]`` worker ``i``'s; both are
    cycled when shorter than the run's actors (empty: Ray's choice). An actor is
    pinned by its node's ``ray.io/node-id`` label with any node as the fallback: it
    runs on its node while that node is alive, and when the node dies Ray restarts
    it on a surviving node.

    Examples
    --------
    >>> p = Placement.spread(["head", "a", "b"], shards=2, workers=3)
    >>> p.graph, p.shards, p.workers
    ('head', ('a', 'b'), ('head', 'a', 'b'))
    >>> p.node("shard", 3), p.node("worker", 4)
    ('b', 'a')
    """

    graph: Optional[str] = None
    shards: Tuple[Optional[str], ...] = ()
    workers: Tuple[Optional[str], ...] = ()

    def node(self, role: str, i: int = 0) -> Optional[str]:
        """The node of the ``i``-th actor of ``role`` (``graph``, ``shard`` or ``worker``)."""
        if role == "graph":
            return self.graph
        seq = {"shard": self.shards, "worker": self.workers}[role]
        return seq[i % len(seq)] if seq else None

    @classmethod
    def spread(cls, nodes: Sequence[str], shards: int, workers: int) -> "Placement":
        """The graph on the first node, then the shards and the workers round robin over the nodes."""
        nodes = list(nodes)
        if not nodes:
            raise InvalidInputError("Placement.spread needs at least one node")
        at = [nodes[j % len(nodes)] for j in range(1 + shards + workers)]
        return cls(at[0], tuple(at[1:1 + shards]), tuple(at[1 + shards:]))

    def check(self, alive: Sequence[str], shards: int, workers: int) -> None:
        """Raise :class:`~spatialobs.InvalidInputError` naming the first actor placed on a node that is not alive."""
        live = set(alive)
        actors = [("graph", self.graph)] + [(f"shard{k}", self.node("shard", k)) for k in range(shards)] + \
                 [(f"w{i}", self.node("worker", i)) for i in range(workers)]
        for name, node in actors:
            if node is not None and node not in live:
                raise InvalidInputError(f"placement: {name} is placed on node {node!r}, which is not an alive node "
                                        f"of the cluster ({len(live)} alive)")


class RunFolderError(SpatialObsError):
    """An actor does not see the run folder the driver marked: it is not on storage shared by every node."""


_MARK = ".spatialobs-run"


def mark_folder(folder: Union[str, Path]) -> str:
    """Write a fresh token into the run folder (what :func:`check_folder` looks for); return it."""
    token = uuid.uuid4().hex
    path = Path(folder) / _MARK
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(token, encoding="utf-8")
    os.replace(tmp, path)
    return token


def check_folder(folder: Union[str, Path], token: str) -> None:
    """Raise :class:`RunFolderError` unless this process sees ``folder`` marked with ``token``.

    Every actor calls it before it opens a log: an actor restarted on a node that
    mounts another disk at the same path would otherwise start from an empty log
    and lose what was acknowledged.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> check_folder(d, mark_folder(d))
    >>> check_folder(d, "another run")
    Traceback (most recent call last):
    ...
    spatialobs.distributed.runtime.RunFolderError: ...
    """
    path = Path(folder) / _MARK
    try:
        seen: Optional[str] = path.read_text(encoding="utf-8").strip()
    except OSError:
        seen = None
    if seen != token:
        import socket

        what = "is missing" if seen is None else "holds another run's mark"
        raise RunFolderError(f"the run folder {str(folder)!r} {what} on {socket.gethostname()} (pid {os.getpid()}): "
                             "shard logs, checkpoints, the graph store and worker logs must be on storage that every "
                             "node mounts at the same path (see docs/scaling.md)")


def _folder_error(exc: BaseException) -> Optional[RunFolderError]:
    # An actor whose constructor raised RunFolderError dies with it in its message.
    m = re.search(r"RunFolderError: (.+)", str(exc))
    return RunFolderError(m.group(1).strip()) if m else None


class _Located:
    def where(self) -> Tuple[str, int]:
        """The node id and process id of this actor."""
        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()


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


Mark = Optional[Tuple[str, str]]  # (run folder, token): checked by each actor before it opens a log


class _Shard(_Timed, _Located, IndexShard):
    def __init__(self, shard: int, folder: Optional[str], *, mark: Mark = None, **options: Any) -> None:
        if mark is not None:
            check_folder(*mark)
        super().__init__(shard, folder, **options)

    def add_one(self, raw: bytes) -> Added:
        out: Added = self._timed(self.add_batch, [raw])[0]
        return out


class _Graph(_Timed, _Located, GraphLog):
    def __init__(self, store: str, shards: Sequence[Any], *, mark: Mark = None, **options: Any) -> None:
        if mark is not None:
            check_folder(*mark)
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


class _Worker(_Located, Explorer):
    def __init__(self, name: str, make_env: Callable[[], Any], shards: Sequence[Any], graph: Any, *,
                 mark: Mark = None, **options: Any) -> None:
        if mark is not None:
            check_folder(*mark)
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
    ``graph`` is the graph's summary; ``store`` the graph store's path; ``nodes``
    the node id each actor ran on at the end (by name: ``graph``, ``shard<k>``, ``w<i>``).
    """

    episodes: List[Episode]
    workers: Dict[str, Dict[str, float]]
    seconds: float
    graph: Dict[str, int]
    store: str
    interrupted: List[int] = field(default_factory=list)
    nodes: Dict[str, str] = field(default_factory=dict)

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
        Shard logs and checkpoints, worker logs and (by default) the graph store. On
        a cluster of several machines: on storage every node mounts at the same path
        (each actor checks; :class:`RunFolderError` otherwise).
    store : str or Path, optional
        The graph store (default ``folder/graph.sqlite``); reachable from every node.
    checkpoint_every : int
        Shard checkpoint period, in new observations.
    grid, tau, mask_volatile
        Index options.
    placement : None, "spread" or Placement
        Where the actors start: Ray's choice, :meth:`Placement.spread` over the
        alive nodes, or the given nodes.
    sync : bool, optional
        fsync every shard log record and graph commit before acknowledging it
        (default: when the alive nodes are on several machines,
        :func:`several_machines`).

    Examples
    --------
    >>> with ray_runtime():                                   # doctest: +SKIP
    ...     run = RayExploration(partial(sim.make_app, "notepad", 0), "notepad", folder="run")
    ...     refs = run.submit(run.starts(4), steps=20)
    ...     eps = run.gather(refs)
    """

    def __init__(self, make_env: Callable[[], Any], app: str, *, workers: int = 2, shards: int = 1,
                 folder: Union[str, Path], store: Union[None, str, Path] = None, checkpoint_every: int = 5000,
                 grid: int = 30, tau: float = 0.93, mask_volatile: bool = False,
                 placement: Union[None, str, Placement] = None, sync: Optional[bool] = None) -> None:
        for name, v in (("workers", workers), ("shards", shards)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidInputError(f"{name} must be a positive integer, got {v!r}")
        ray = self.ray = require_ray()
        nodes = alive_nodes(ray)
        if placement == "spread":
            placement = Placement.spread([n for n, _ in nodes], shards, workers)
        elif placement is not None and not isinstance(placement, Placement):
            raise InvalidInputError(f"placement must be None, 'spread' or a Placement, got {placement!r}")
        self.placement = placement or Placement()
        self.placement.check([n for n, _ in nodes], shards, workers)
        self.sync = several_machines([a for _, a in nodes]) if sync is None else bool(sync)
        # Absolute: an actor's working folder is not the driver's.
        self.folder = Path(folder).resolve()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.store = str(Path(store).resolve() if store is not None else self.folder / "graph.sqlite")
        mark = (str(self.folder), mark_folder(self.folder))
        self.make_env = make_env
        self.app = app
        index = {"grid": grid, "tau": tau, "mask_volatile": mask_volatile}

        def remote(cls: Any, node: Optional[str], retries: int) -> Any:
            # num_cpus=0: actors are placed regardless of the CPU count (workers may outnumber cores).
            actor = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=retries)(cls)
            if node is None:
                return actor
            # The node's own label, with anywhere as the fallback once that node is gone. (A soft
            # NodeAffinitySchedulingStrategy was tried first: Ray spills it to other nodes while the
            # chosen one is busy starting workers, so placement was not what was asked.)
            try:
                return actor.options(label_selector={"ray.io/node-id": node}, fallback_strategy=[{"label_selector": {}}])
            except (TypeError, ValueError) as exc:
                raise SpatialObsError(f"placement needs a Ray with label_selector and fallback_strategy "
                                      f"(this is Ray {ray.__version__}): {exc}") from None

        self.shards = [remote(_Shard, self.placement.node("shard", k), -1).remote(
            k, str(self.folder / "shards"), mark=mark, checkpoint_every=checkpoint_every, fsync=self.sync, **index)
            for k in range(shards)]
        self.graph = remote(_Graph, self.placement.graph, -1).remote(self.store, self.shards, mark=mark, app=app,
                                                                      sync=self.sync)
        self._ask(lambda: ray.get(self.graph.summary.remote()))  # the store exists before any worker writes
        self.worker_names = [f"w{i}" for i in range(workers)]
        self.workers = [remote(_Worker, self.placement.node("worker", i), 0).remote(
            name, make_env, self.shards, self.graph, mark=mark, app=app, log=str(self.folder / f"{name}.steps.jsonl"),
            grid=grid, mask_volatile=mask_volatile)
            for i, name in enumerate(self.worker_names)]
        self._episodes: Dict[int, Tuple[str, Any]] = {}

    @staticmethod
    def _ask(fn: Callable[[], Any]) -> Any:
        # An actor that could not start because it does not see the run folder says so as a RunFolderError.
        from ray.exceptions import RayActorError

        try:
            return fn()
        except RayActorError as exc:
            err = _folder_error(exc)
            if err is not None:
                raise err from None
            raise

    def ready(self) -> Dict[str, int]:
        """Wait until every actor runs; the process id of each (by name: ``graph``, ``shard<k>``, ``w<i>``)."""
        return {name: pid for name, (_, pid) in self.where().items()}

    def _actors(self) -> List[Tuple[str, Any]]:
        return [("graph", self.graph)] + [(f"shard{k}", s) for k, s in enumerate(self.shards)] + \
            list(zip(self.worker_names, self.workers))

    def where(self) -> Dict[str, Tuple[str, int]]:
        """The node id and process id of every actor, by name (waits until each runs; retried while one restarts)."""
        actors = self._actors()
        got = self._ask(lambda: _retry(self.ray, lambda: self.ray.get([a.where.remote() for _, a in actors])))
        return {name: (str(node), int(pid)) for (name, _), (node, pid) in zip(actors, got)}

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

    def explore(self, starts: Sequence[Any], steps: int = 50, selector: str = "puct", prior: str = "heuristic",
                depth: int = 2) -> Tuple[List[Episode], List[int]]:
        """Run one episode per start, handing each worker the next start as it finishes one.

        Each worker holds at most ``depth`` episodes (one running, the rest queued). When
        a worker dies (its process, or its whole node), the episode it was running ends
        at its last acknowledged step (its number is in the second list) and the
        episodes queued behind it, which never started, go to the next free worker:
        the restarted worker, wherever Ray put it, or another. Returns the episodes in
        start order and the numbers of the interrupted ones.
        """
        from ray.exceptions import ActorUnavailableError, RayActorError

        ray = self.ray
        todo: Deque[Tuple[int, Any]] = deque(enumerate(starts))
        done: Dict[int, Episode] = {}
        lost: List[int] = []
        queued: List[Deque[Tuple[int, Any]]] = [deque() for _ in self.workers]
        owner: Dict[Any, int] = {}  # an outstanding episode's (or probe's) reference -> its worker
        probes: Dict[Any, int] = {}  # worker -> its liveness probe after a death
        usable = set(range(len(self.workers)))

        def fill(i: int, upto: int = depth) -> None:
            while todo and len(queued[i]) < upto:
                k, start = todo.popleft()
                ref = self.workers[i].run_episode.remote(k, start, steps, selector, prior)
                self._episodes[k] = (self.worker_names[i], start)
                queued[i].append((k, ref))
                owner[ref] = i

        def probe(i: int) -> None:
            # Is the worker back (restarted by Ray, perhaps on another node)? Its next episodes wait for the answer.
            ref = self.workers[i].pid.remote()
            probes[ref] = i
            owner[ref] = i

        for level in range(1, depth + 1):  # one episode each first, so that few starts still spread
            for i in sorted(usable):
                fill(i, level)
        while owner:
            [ref], _ = ray.wait(list(owner), num_returns=1)
            i = owner.pop(ref)
            if ref in probes:
                del probes[ref]
                try:
                    ray.get(ref)
                except ActorUnavailableError:  # still restarting: ask again
                    time.sleep(0.2)
                    probe(i)
                    continue
                except RayActorError:  # dead for good (it could not start again): the others go on
                    usable.discard(i)
                    continue
                fill(i)
                continue
            # One actor runs its calls in order: settle its episodes from the front up to this one.
            while queued[i]:
                k, front = queued[i][0]
                try:
                    ep = ray.get(front)
                except RayActorError:
                    # The front episode was running when the worker died; those behind it never started.
                    entries = list(queued[i])
                    queued[i].clear()
                    for _, r in entries:
                        owner.pop(r, None)
                    lost.append(k)
                    done[k] = self._ended(k)
                    for k2, _ in reversed(entries[1:]):
                        todo.appendleft((k2, self._episodes[k2][1]))
                    probe(i)
                    break
                queued[i].popleft()
                owner.pop(front, None)
                done[k] = ep
                if front == ref:
                    break
            for j in sorted(usable):
                if j not in probes.values():
                    fill(j)
        if todo:
            raise SpatialObsError(f"every worker died for good; {len(todo)} episode(s) did not run")
        return [done[k] for k in sorted(done)], sorted(lost)

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
                make_env: Optional[Callable[[], Any]] = None, num_cpus: int = 2,
                placement: Union[None, str, Placement] = None, sync: Optional[bool] = None, **options: Any) -> RayRun:
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
    placement, sync
        As for :class:`RayExploration` (``placement="spread"``: the graph, the shards
        and the workers round robin over the cluster's nodes). On several machines,
        ``folder`` must be on storage every node mounts at the same path.
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
            run = RayExploration(make_env, app, workers=workers, shards=shards, folder=folder, store=store,
                                 placement=placement, sync=sync)
            try:
                run.ready()
                t0 = time.perf_counter()
                eps, lost = run.explore(run.starts(starts), steps, selector, prior)
                seconds = time.perf_counter() - t0
                out = RayRun(eps, run.counters(), seconds, run.summary(), run.store, lost,
                             {name: node for name, (node, _) in run.where().items()})
            finally:
                run.close()
        return out
    finally:
        if tmp is not None and store is None:
            shutil.rmtree(tmp, ignore_errors=True)


# ---- a cluster of several nodes on this machine -----------------------------------------


def _proc_table() -> Dict[int, Tuple[int, str]]:
    # pid -> (parent pid, start time) of every process, from /proc (Linux).
    out: Dict[int, Tuple[int, str]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(d)] = (int(fields[1]), fields[19])
    return out


def _descendants(roots: Sequence[int]) -> Dict[int, str]:
    """``{pid: start time}`` of the processes under ``roots`` (the roots included)."""
    table = _proc_table()
    children: Dict[int, List[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out: Dict[int, str] = {}
    stack = [p for p in roots if p in table]
    while stack:
        p = stack.pop()
        if p not in out:
            out[p] = table[p][1]
            stack += children.get(p, [])
    return out


def _kill_left(procs: Dict[int, str], wait: float) -> List[int]:
    # SIGKILL the processes of `procs` still running after `wait` seconds (the same pid and start time); return them.
    end = time.monotonic() + wait
    while True:
        table = _proc_table()
        left = [p for p, t in procs.items() if p in table and table[p][1] == t]
        if not left or time.monotonic() > end:
            break
        time.sleep(0.1)
    for p in left:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)
    return left


class LocalCluster:
    """A Ray cluster of a head and worker nodes on this machine, connected to on entry, stopped on exit.

    Node ``i`` is a separate raylet at its own loopback address (``127.0.0.2``,
    ``127.0.0.3``, ...) with ``num_cpus`` CPUs and its own worker processes; every node
    shares this machine's cores and disk. Ray's files go to a private temporary folder
    (``RAY_TMPDIR`` while the cluster runs), so no other Ray on this machine joins it or
    is joined. The head's health checks declare a lost node dead within about
    ``detect_seconds``. :meth:`kill` loses a worker node whole. On exit every process of
    the cluster is gone: Ray stops the nodes, and any process of theirs still running
    after a grace period is killed (:attr:`leftover` lists those).

    Parameters
    ----------
    nodes : int
        Nodes including the head (at least 1).
    num_cpus : int
        CPUs each node advertises.
    detect_seconds : float
        About how long the head takes to declare a silent node dead.
    start_attempts : int
        Starts to try when a node does not register in time (Ray allows 30 s).

    Examples
    --------
    >>> with LocalCluster(3) as cluster:                     # doctest: +SKIP
    ...     run = RayExploration(make_env, "notepad", folder="run", placement="spread")
    ...     cluster.kill(1)                                  # node 1, its raylet and every actor on it
    """

    def __init__(self, nodes: int = 3, *, num_cpus: int = 1, detect_seconds: float = 3.0,
                 start_attempts: int = 2) -> None:
        if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
            raise InvalidInputError(f"nodes must be a positive integer, got {nodes!r}")
        self.size = nodes
        self.num_cpus = int(num_cpus)
        self.detect_seconds = float(detect_seconds)
        self.start_attempts = max(1, int(start_attempts))
        self.nodes: List[str] = []
        self.leftover: List[int] = []
        self._handles: List[Any] = []
        self._cluster: Any = None
        self._procs: Dict[int, str] = {}
        self._before: Dict[int, str] = {}
        self._tmp: Optional[str] = None
        self._env: Optional[str] = None

    @staticmethod
    def address_of(i: int) -> str:
        """Node ``i``'s loopback address (not 127.0.0.1, which Ray would replace by this machine's address)."""
        return f"127.0.0.{2 + i}"

    def __enter__(self) -> "LocalCluster":
        ray = require_ray()
        if ray.is_initialized():
            raise SpatialObsError("LocalCluster: Ray is already initialized in this process; shut it down first")
        for attempt in range(self.start_attempts):
            try:
                return self._start()
            except Exception as exc:
                # Ray gives a node 30 s to register (its agents start slowly on a busy machine): start again.
                if "timed out during startup" not in str(exc) or attempt + 1 == self.start_attempts:
                    raise
        raise AssertionError("unreachable")

    def _start(self) -> "LocalCluster":
        ray = require_ray()
        from ray.cluster_utils import Cluster

        self._procs = {}
        self._cluster = None
        self._handles = []
        self._before = _descendants([os.getpid()])
        self._env = os.environ.get("RAY_TMPDIR")
        self._tmp = tempfile.mkdtemp(prefix="so-ray-", dir="/tmp")  # short: Ray's socket paths live under it
        os.environ["RAY_TMPDIR"] = self._tmp
        period = max(100, int(1000 * self.detect_seconds / 3))
        config = {"health_check_initial_delay_ms": 0, "health_check_period_ms": period,
                  "health_check_timeout_ms": period, "health_check_failure_threshold": 3}
        try:
            self._cluster = Cluster(initialize_head=True, head_node_args={
                "num_cpus": self.num_cpus, "include_dashboard": False, "node_ip_address": self.address_of(0),
                "_system_config": config})
            self._handles = [self._cluster.head_node]
            for i in range(1, self.size):
                self._handles.append(self._cluster.add_node(num_cpus=self.num_cpus,
                                                            node_ip_address=self.address_of(i)))
            self.nodes = [h.node_id for h in self._handles]
            ray.init(address=self._cluster.address, _node_ip_address=self.address_of(0), log_to_driver=False)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _node_procs(self, handle: Any) -> Dict[int, str]:
        roots = [info.process.pid for infos in handle.all_processes.values() for info in infos]
        return _descendants(roots)

    def kill(self, i: int) -> str:
        """Lose worker node ``i`` whole: SIGKILL its raylet and every process under it at once; its node id.

        Returns as soon as the processes are gone; the head notices within about
        ``detect_seconds`` (:meth:`wait_dead`).
        """
        if isinstance(i, bool) or not isinstance(i, int) or not 1 <= i < self.size:
            raise InvalidInputError(f"kill: node must be a worker node, 1..{self.size - 1}, got {i!r} "
                                    "(the head holds the driver)")
        handle = self._handles[i]
        if handle is None:
            raise InvalidInputError(f"kill: node {i} was killed already")
        procs = self._node_procs(handle)
        self._procs.update(procs)
        for pid in procs:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self._cluster.remove_node(handle, allow_graceful=False)
        self._handles[i] = None
        _kill_left(procs, 5.0)
        return str(self.nodes[i])

    def alive(self) -> List[str]:
        """The node ids the head holds alive."""
        return [n for n, _ in alive_nodes()]

    def wait_dead(self, node: str, timeout: float = 60.0) -> float:
        """Wait until the head declares ``node`` dead; the seconds it took."""
        t0 = time.monotonic()
        while node in self.alive():
            if time.monotonic() - t0 > timeout:
                raise SpatialObsError(f"node {node} is still alive after {timeout:.0f} s")
            time.sleep(0.1)
        return time.monotonic() - t0

    def __exit__(self, *exc: Any) -> None:
        ray = require_ray()
        # Every process the cluster started is under this one until its node stops (even one that failed to start).
        me = os.getpid()
        self._procs.update({p: t for p, t in _descendants([me]).items() if p != me and self._before.get(p) != t})
        with contextlib.suppress(Exception):
            ray.shutdown()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.shutdown()
        self.leftover = _kill_left(self._procs, 10.0)
        if self._env is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = self._env
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


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
