"""The exploration loop (DESIGN §8): select, act, record, with per-step records and episode metrics.

An *environment* is any object with

* ``app`` (str): the application's name;
* ``reset(start=None) -> Screen``;
* ``step(action) -> Screen``;
* optionally ``actions(screen) -> list[Action]`` (default
  :func:`~spatialobs.screen.actions.candidate_actions`), ``recover() -> Screen``
  (called after a capture, default ``reset()``) and ``goal`` (str).

Every :class:`~spatialobs.screen.drivers.Driver` is an environment: the simulated
applications of :mod:`spatialobs.screen.drivers.sim` and the real ones of
:func:`~spatialobs.screen.drivers.make_driver`. A step that raises
:class:`~spatialobs.screen.drivers.DriverFault` (a crash, a hang, an action timeout)
is recorded as a failed transition (a capture whose app is ``"fault:<kind>"``:
a try with reward 0, never a state) and the environment is recovered; the graph
is never lost.

:attr:`Episode.timing` splits the wall time into ``env`` (waiting for the
application: act, read the screen, recover) and ``ours`` (featurize,
index, select and record) over the steps; ``reset`` is the first launch and replay.

Metrics of an episode of ``T`` steps (:attr:`Episode.metrics`):

``new_states``, ``new_edges``
    steps that were state-novel / edge-novel (judged against the graph just before).
``state_auc``, ``edge_auc``
    ``Σ_{t=1..T}`` of the cumulative new states / edges after step ``t``.
``revisit_rate``
    fraction of steps arriving in a state already visited in this episode (the
    start included).
``loop_rate``
    fraction of steps that stay in the same state (no-op or stall).
``high_u_occupancy``
    fraction of steps taken from a state whose ``u(s)`` exceeds ``u₀`` (the
    evidence says it is more ambiguous than the prior) *ours*.
``net_du``
    ``Σ_t (u(s_{t+1}) − u(s_t))`` with both ``u`` judged at step ``t``: negative when
    the walk moved towards better-understood states.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action, candidate_actions, signature
from spatialobs.screen.drivers.base import DriverFault, fault_screen
from spatialobs.screen.graph import ScreenGraph
from spatialobs.screen.model import Screen
from spatialobs.screen.select import SELECTORS, Prior, Selector, make_selector, prior_weights, resolve_prior

__all__ = ["Step", "Episode", "explore", "episode_metrics", "explore_workers", "METRICS"]

#: The keys of :attr:`Episode.metrics`, in report order.
METRICS = ("new_states", "new_edges", "state_auc", "edge_auc", "revisit_rate", "loop_rate", "high_u_occupancy",
           "net_du")


@dataclass(frozen=True)
class Step:
    """One executed step of an episode.

    ``source`` and ``target`` are graph states (``target`` is where the agent is
    after the step: after a capture, the state it recovered to); ``capture`` names
    the other application reached, if any; ``prior`` and ``score`` are the chosen
    action's prior probability and selector score; ``digest`` identifies the
    source screen exactly (a hash of its atom sets), across graphs.
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


def episode_metrics(start_state: int, steps: Sequence[Step], u0: float = 0.5) -> Dict[str, float]:
    """The metrics of a list of steps (see the module docstring).

    Examples
    --------
    >>> from spatialobs.screen.actions import Action
    >>> k = Action("key", value="escape")
    >>> st = [Step(0, 0, "a", k, 1, True, True, 2.0, 0.5, 0.5, None, 1.0, 0.0, 10, 10),
    ...       Step(1, 1, "b", k, 1, False, True, 1.0, 0.5, 0.5, None, 1.0, 0.0, 10, 10),
    ...       Step(2, 1, "c", k, 0, False, False, 0.0, 0.6, 0.4, None, 1.0, 0.0, 10, 10)]
    >>> m = episode_metrics(0, st)
    >>> m["state_auc"], m["edge_auc"], m["revisit_rate"], m["loop_rate"]
    (3, 5, 0.6666666666666666, 0.3333333333333333)
    """
    T = len(steps)
    ns = ne = 0
    s_auc = e_auc = 0
    revisits = loops = high = 0
    du = 0.0
    seen = {start_state}
    for st in steps:
        ns += st.state_novel
        ne += st.edge_novel
        s_auc += ns
        e_auc += ne
        if st.target in seen:
            revisits += 1
        seen.add(st.target)
        loops += st.target == st.source
        high += st.u_source > u0
        if st.capture is None:
            du += st.u_target - st.u_source
    return {
        "new_states": ns,
        "new_edges": ne,
        "state_auc": s_auc,
        "edge_auc": e_auc,
        "revisit_rate": revisits / T if T else 0.0,
        "loop_rate": loops / T if T else 0.0,
        "high_u_occupancy": high / T if T else 0.0,
        "net_du": du,
    }


def explore(
    env: Any,
    steps: int = 50,
    selector: Union[None, str, Selector] = None,
    prior: Union[str, Prior] = "heuristic",
    *,
    graph: Optional[ScreenGraph] = None,
    goal: Optional[str] = None,
    start: Any = None,
    episode: int = 0,
    grid: int = 30,
    keep_screens: bool = False,
    on_step: Optional[Callable[[Step], None]] = None,
) -> Episode:
    """Explore ``env`` for ``steps`` actions, recording every step into ``graph``.

    Parameters
    ----------
    env : environment
        See the module docstring; e.g. ``sim.make_app("notepad")``.
    steps : int, default 50
        The action budget.
    selector : str or Selector, default PUCT()
        ``"puct"`` (``PUCT()``), ``"puct-paper"`` (``PUCT.paper()``, the paper-exact
        setting), ``"greedy"``, ``"random"`` (``Random(seed=episode)``) or a selector.
    prior : "uniform", "heuristic", "learned:FILE" or callable, default "heuristic"
        ``callable(screen, actions, goal) -> weights``; ``"learned:FILE"`` loads a
        prior saved by ``spatialobs train-prior``.
    graph : ScreenGraph, optional
        Default: a new in-memory graph for ``env.app``.
    goal : str, optional
        Task text for the heuristic prior; default ``env.goal`` (or "").
    start : optional
        Passed to ``env.reset``.
    episode : int
        The episode number written into the log (and the seed of ``"random"``).
    grid : int, default 30
        Lattice of the action signatures' positions.
    keep_screens : bool
        Keep each step's source screen in :attr:`Step.screen` (for traces).
    on_step : callable, optional
        Called with each :class:`Step` once recorded (progress display).

    Examples
    --------
    >>> from spatialobs.screen import sim
    >>> ep = explore(sim.make_app("notepad"), steps=10, selector="puct")
    >>> len(ep.steps), ep.metrics["new_states"] > 1
    (10, True)
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise InvalidInputError(f"steps must be an integer >= 0, got {steps!r}")
    for attr in ("reset", "step"):
        if not callable(getattr(env, attr, None)):
            raise InvalidInputError(f"env must have a {attr}() method (see spatialobs.screen.explore)")
    sel = make_selector(selector, seed=episode)
    resolve_prior(prior)
    goal = goal if goal is not None else str(getattr(env, "goal", "") or "")
    app = getattr(env, "app", None)
    own_graph = graph is None
    if graph is None:
        graph = ScreenGraph(app=app)
    elif not isinstance(graph, ScreenGraph):
        raise InvalidInputError(f"graph must be a ScreenGraph, got {type(graph).__name__}")
    get_actions: Callable[[Screen], List[Action]] = getattr(env, "actions", None) or candidate_actions
    recover = getattr(env, "recover", None) or env.reset

    clock = time.perf_counter
    env_s = 0.0
    t0 = clock()
    screen = env.reset(start) if start is not None else env.reset()
    reset_s = clock() - t0
    _check_screen(screen, "reset()")
    s = graph.observe(screen)
    digest = _digest(graph.last_features)
    ep = Episode(app=app or "", start=start, goal=goal, selector=sel.name, start_state=s)
    began = clock()
    for t in range(steps):
        acts = list(get_actions(screen))
        if not acts:
            raise InvalidInputError(f"the environment offers no action on its screen at step {t}")
        sigs = [signature(a, screen, grid) for a in acts]
        # Two actions with one signature are one arm: keep the first.
        seen: Dict[str, int] = {}
        keep = [i for i, sg in enumerate(sigs) if seen.setdefault(sg, i) == i]
        acts = [acts[i] for i in keep]
        sigs = [sigs[i] for i in keep]
        p = prior_weights(prior, screen, acts, goal)
        scores = sel.scores(graph, s, sigs, p)
        i = sel.select(graph, s, sigs, p)
        t0 = clock()
        try:
            nxt = env.step(acts[i])
            fault = None
        except DriverFault as exc:
            fault = exc
            nxt = fault_screen(app or "", exc)
            ep.faults += 1
        env_s += clock() - t0
        _check_screen(nxt, "step()")
        tr = graph.record(s, sigs[i], nxt, label=acts[i].label, episode=episode, step=t)
        target = tr.target
        if tr.capture is not None:
            t0 = clock()
            nxt = recover()
            env_s += clock() - t0
            _check_screen(nxt, "recover()")
            target = graph.observe(nxt)
        next_digest = _digest(graph.last_features)
        st = Step(t, s, sigs[i], acts[i], target, tr.state_novel, tr.edge_novel, tr.reward, tr.u_source,
                  tr.u_target, tr.capture, float(p[i]), float(scores[i]), screen.width, screen.height,
                  digest, screen if keep_screens else None)
        ep.steps.append(st)
        if on_step is not None:
            on_step(st)
        screen, s, digest = nxt, target, next_digest
    wall = clock() - began
    ep.timing = {"reset": reset_s, "wall": wall, "env": env_s, "ours": max(wall - env_s, 0.0)}
    ep.metrics = episode_metrics(ep.start_state, ep.steps, graph.u0)
    if own_graph:
        graph.close()
    return ep


def _digest(f: Any) -> str:
    import hashlib

    h = hashlib.blake2b(digest_size=8)
    h.update(f.control_atoms.astype("<u8").tobytes())
    h.update(b"|")
    h.update(f.text_atoms.astype("<u8").tobytes())
    h.update(repr(f.meta.key()).encode())
    return h.hexdigest()


def _check_screen(x: Any, where: str) -> None:
    if not isinstance(x, Screen):
        raise InvalidInputError(f"env.{where} must return a Screen, got {type(x).__name__}")


def _worker(args: Tuple[Any, ...]) -> List[Episode]:
    path, app_name, seed, options, worker, start_ids, steps, selector, prior = args
    from spatialobs.screen import sim

    env = sim.make_app(app_name, seed, **options)
    starts = env.starts(max(start_ids) + 1) if start_ids else []
    out = []
    with ScreenGraph(path, app=app_name, worker=worker) as g:
        for k in start_ids:
            out.append(explore(env, steps, selector, prior, graph=g, start=starts[k], episode=k))
    return out


def explore_workers(
    path: Any,
    app: str,
    starts: int = 6,
    steps: int = 20,
    workers: int = 3,
    *,
    seed: int = 0,
    selector: str = "puct",
    prior: str = "heuristic",
    **options: Any,
) -> List[Episode]:
    """Explore a simulated app from ``starts`` starts with ``workers`` processes sharing one SQLite graph.

    Start ``k`` goes to worker ``k % workers``; each worker opens the graph file
    itself and writes under the name ``"w<i>"``. Returns the episodes by start.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     eps = explore_workers(os.path.join(d, "g.sqlite"), "notepad", starts=2, steps=3, workers=2)
    ...     with ScreenGraph(os.path.join(d, "g.sqlite")) as g:
    ...         g.num_transitions + len(g.captures()) == sum(len(e.steps) for e in eps)
    True
    """
    import multiprocessing as mp

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidInputError(f"workers must be a positive integer, got {workers!r}")
    if selector not in SELECTORS:
        raise InvalidInputError(f"selector must be one of {', '.join(map(repr, SELECTORS))} for workers, "
                                f"got {selector!r}")
    # Create the store and its configuration once, before the workers race to.
    ScreenGraph(path, app=app).close()
    jobs = [(str(path), app, seed, options, f"w{i}", list(range(i, starts, workers)), steps, selector, prior)
            for i in range(workers)]
    # spawn: a forked child would inherit the parent's OpenMP/faiss threads.
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers) as pool:
        results = pool.map(_worker, jobs)
        pool.close()
        pool.join()
    eps: Dict[int, Episode] = {}
    for res in results:
        for e in res:
            eps[e.start.index] = e
    return [eps[k] for k in sorted(eps)]
