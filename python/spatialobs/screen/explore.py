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
application: act, read the screen, recover, take screenshots) and ``ours`` (featurize,
index, select and record) over the steps; ``reset`` is the first launch and replay,
``screenshots`` the part of ``env`` spent taking screenshots.

Screenshots. When the graph keeps evidence (a store on disk), every screen that is
a new observation (and every capture) is stored with a screenshot the driver takes
right after reading it, before anything else acts on the application
(:meth:`~spatialobs.screen.drivers.Driver.screenshot_png`): the picture is of the
recorded screen. Screens seen before cost no picture; the simulators draw none.

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

import hashlib
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Tuple, Union

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action, candidate_actions, signatures
from spatialobs.screen.drivers.base import DriverFault, DriverUnavailable, ScreenshotUnsupported, fault_screen
from spatialobs.screen.episode import Episode, Step
from spatialobs.screen.graph import ScreenGraph, Transition
from spatialobs.screen.model import Screen
from spatialobs.screen.select import (SELECTORS, Prior, Selector, make_selector, prior_weights, resolve_prior,
                                      selector_seed)

__all__ = ["Step", "Episode", "explore", "episode_metrics", "explore_workers", "METRICS", "Position", "StepGraph",
           "LocalSteps", "Walk", "choose_action", "take_step", "features_digest", "Shooter"]

#: The keys of :attr:`Episode.metrics`, in report order.
METRICS = ("new_states", "new_edges", "state_auc", "edge_auc", "revisit_rate", "loop_rate", "high_u_occupancy",
           "net_du")


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


@dataclass
class Position:
    """Where a walk is: the screen, its graph state, the selector's view of the graph there, the screen's digest.

    ``view`` is whatever the selector reads (``tries``, ``q``, ``lambdas``): the
    :class:`~spatialobs.screen.ScreenGraph` itself in one process, a snapshot of one
    state's statistics in a distributed worker.
    """

    screen: Screen
    state: int
    view: Any
    digest: str
    #: The observation the screen is (its seq in the graph's log; 0 when unknown).
    observation: int = 0


class StepGraph(Protocol):
    """The graph side of a step: where a screen is, and what taking an action that produced a screen was worth."""

    def observe(self, screen: Screen) -> Position:
        """The position of a screen the agent is in (an episode's start, a recovery)."""
        ...

    def record(self, source: Position, signature: str, action: Action, screen: Screen, episode: int,
               step: int) -> Tuple[Transition, Optional[Position]]:
        """Record one step; the judgement and the position reached (``None`` for a capture)."""
        ...


class LocalSteps:
    """:class:`StepGraph` over a :class:`~spatialobs.screen.ScreenGraph` in this process.

    Examples
    --------
    >>> from spatialobs.screen import sim
    >>> env = sim.make_app("notepad")
    >>> steps = LocalSteps(ScreenGraph(app="notepad"))
    >>> at = steps.observe(env.reset())
    >>> at.state, len(at.digest)
    (0, 16)
    """

    def __init__(self, graph: ScreenGraph) -> None:
        self.graph = graph

    def observe(self, screen: Screen, screenshot: Any = None) -> Position:
        state = self.graph.observe(screen, screenshot=screenshot)
        return Position(screen, state, self.graph, features_digest(self.graph.last_features),
                        self.graph.last_observation)

    def record(self, source: Position, signature: str, action: Action, screen: Screen, episode: int,
               step: int, screenshot: Any = None) -> Tuple[Transition, Optional[Position]]:
        tr = self.graph.record(source.state, signature, screen, label=action.label, episode=episode, step=step,
                               action=action, screenshot=screenshot, source_observation=source.observation)
        if tr.capture is not None:
            return tr, None
        return tr, Position(screen, tr.target, self.graph, features_digest(self.graph.last_features),
                            tr.observation)


class Shooter:
    """Takes the environment's screenshots for the evidence, counting the time; off when it draws none.

    Called with no argument, returns PNG bytes or None (no picture: the driver has no
    screenshots, Pillow is missing, or the application is gone).

    Examples
    --------
    >>> from spatialobs.screen import sim
    >>> shoot = Shooter(sim.make_app("notepad"))
    >>> shoot(), shoot.on
    (None, False)
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.on = callable(getattr(env, "screenshot_png", None))
        self.seconds = 0.0
        self.count = 0

    def __call__(self) -> Optional[bytes]:
        if not self.on:
            return None
        t0 = time.perf_counter()
        try:
            png = self.env.screenshot_png()
        except (ScreenshotUnsupported, DriverUnavailable):
            self.on = False
            return None
        except DriverFault:
            return None
        finally:
            self.seconds += time.perf_counter() - t0
        self.count += 1
        return bytes(png)


@dataclass
class Walk:
    """What stays fixed over an episode's steps: the environment and how it is read, the selector, prior and goal.

    Build one with :meth:`of`; :func:`take_step` takes one step of it.
    """

    env: Any
    actions: Callable[[Screen], List[Action]]
    recover: Callable[[], Screen]
    selector: Selector
    prior: Prior
    goal: str
    grid: int = 30
    app: str = ""
    episode: int = 0
    keep_screens: bool = False
    #: Takes the screenshots kept with new observations (None: no screenshots).
    shoot: Optional[Shooter] = None

    @classmethod
    def of(cls, env: Any, selector: Selector, prior: Union[str, Prior], goal: str, grid: int = 30, *,
           app: str = "", episode: int = 0, keep_screens: bool = False, screenshots: bool = False) -> "Walk":
        """The walk of ``env``: its ``actions`` (default :func:`candidate_actions`) and ``recover`` (default
        ``reset``), the prior resolved once; the selector is told it is walked (``start_walk``).

        Examples
        --------
        >>> from spatialobs.screen import sim
        >>> from spatialobs.screen.select import PUCT
        >>> w = Walk.of(sim.make_app("notepad"), PUCT(), "heuristic", "")
        >>> w.prior.__name__, w.grid
        ('heuristic_prior', 30)
        """
        selector.start_walk()
        return cls(env, getattr(env, "actions", None) or candidate_actions, getattr(env, "recover", None) or env.reset,
                   selector, resolve_prior(prior), goal, grid, app, episode, keep_screens,
                   Shooter(env) if screenshots else None)


def choose_action(walk: Walk, screen: Screen, state: int, view: Any, t: int = 0
                  ) -> Tuple[List[Action], List[str], Any, List[float], int]:
    """The executable actions of ``screen`` (one per signature), their signatures, prior and scores, and the choice.

    Two actions with one signature are one arm: the first is kept.

    Examples
    --------
    >>> from spatialobs.screen import sim
    >>> from spatialobs.screen.select import PUCT
    >>> env = sim.make_app("notepad")
    >>> g = ScreenGraph(app="notepad")
    >>> scr = env.reset()
    >>> acts, sigs, p, scores, i = choose_action(Walk.of(env, PUCT(), "uniform", ""), scr, g.observe(scr), g)
    >>> len(acts) == len(sigs) == len(p) == len(scores), 0 <= i < len(acts)
    (True, True)
    """
    acts = list(walk.actions(screen))
    if not acts:
        raise InvalidInputError(f"the environment offers no action on its screen at step {t}")
    sigs = signatures(acts, screen, walk.grid)
    seen: Dict[str, int] = {}
    keep = [i for i, sg in enumerate(sigs) if seen.setdefault(sg, i) == i]
    if len(keep) < len(acts):
        acts = [acts[i] for i in keep]
        sigs = [sigs[i] for i in keep]
    p = prior_weights(walk.prior, screen, acts, walk.goal)
    scores = walk.selector.scores(view, state, sigs, p)
    i = walk.selector.select(view, state, sigs, p)
    return acts, sigs, p, scores, i


def take_step(walk: Walk, t: int, at: Position, graph: StepGraph) -> Tuple[Step, Position, float, bool]:
    """Choose an action at ``at``, take it, record it; ``(step, position reached, seconds in the env, faulted)``.

    A :class:`~spatialobs.screen.drivers.DriverFault` becomes a failed transition
    (a capture of ``"fault:<kind>"``); after a capture the environment is
    recovered and the recovered screen observed. The selector is told the step's
    reward (:meth:`~spatialobs.screen.select.Selector.update`). Both :func:`explore` and the
    distributed worker (:class:`spatialobs.distributed.Explorer`) step through here.

    Examples
    --------
    >>> from spatialobs.screen import sim
    >>> from spatialobs.screen.select import PUCT
    >>> env = sim.make_app("notepad")
    >>> steps = LocalSteps(ScreenGraph(app="notepad"))
    >>> walk = Walk.of(env, PUCT(), "heuristic", "", app="notepad")
    >>> st, at, spent, fault = take_step(walk, 0, steps.observe(env.reset()), steps)
    >>> st.source, st.state_novel, at.state == st.target, fault
    (0, True, True, False)
    """
    clock = time.perf_counter
    screen = at.screen
    acts, sigs, p, scores, i = choose_action(walk, screen, at.state, at.view, t)
    t0 = clock()
    fault = False
    try:
        nxt = walk.env.step(acts[i])
    except DriverFault as exc:
        fault = True
        nxt = fault_screen(walk.app, exc)
    spent = clock() - t0
    _check_screen(nxt, "step()")
    shoot = walk.shoot
    shot0 = shoot.seconds if shoot is not None else 0.0
    if shoot is not None and not fault:
        # Taken (only for a new observation or a capture) before anything else acts on the application.
        tr, reached = graph.record(at, sigs[i], acts[i], nxt, walk.episode, t, screenshot=shoot)  # type: ignore[call-arg]
    else:
        tr, reached = graph.record(at, sigs[i], acts[i], nxt, walk.episode, t)
    walk.selector.update(at.state, sigs[i], tr.reward)
    if reached is None:
        t0 = clock()
        back = walk.recover()
        spent += clock() - t0
        _check_screen(back, "recover()")
        reached = graph.observe(back, screenshot=shoot) if shoot is not None else graph.observe(back)  # type: ignore[call-arg]
    if shoot is not None:
        spent += shoot.seconds - shot0
    st = Step(t, at.state, sigs[i], acts[i], reached.state, tr.state_novel, tr.edge_novel, tr.reward, tr.u_source,
              tr.u_target, tr.capture, float(p[i]), float(scores[i]), screen.width, screen.height, at.digest,
              screen if walk.keep_screens else None, at.observation, 0 if tr.capture is not None else tr.observation)
    return st, reached, spent, fault


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
    screenshots: Optional[bool] = None,
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
        setting), ``"greedy"``, ``"random"`` or a selector; a named PUCT or Random is
        seeded with :func:`~spatialobs.screen.select.selector_seed` of ``env.seed`` and ``episode``.
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
        The episode number written into the log (and, with ``env.seed``, the seed of a named selector).
    grid : int, default 30
        Lattice of the action signatures' positions.
    keep_screens : bool
        Keep each step's source screen in :attr:`Step.screen` (for traces).
    on_step : callable, optional
        Called with each :class:`Step` once recorded (progress display).
    screenshots : bool, optional
        Keep a screenshot with every new observation and capture (see the module
        docstring). Default: when the graph keeps evidence (a store on disk).

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
    sel = make_selector(selector, seed=selector_seed(getattr(env, "seed", 0), episode))
    resolve_prior(prior)
    goal = goal if goal is not None else str(getattr(env, "goal", "") or "")
    app = getattr(env, "app", None)
    own_graph = graph is None
    if graph is None:
        graph = ScreenGraph(app=app)
    elif not isinstance(graph, ScreenGraph):
        raise InvalidInputError(f"graph must be a ScreenGraph, got {type(graph).__name__}")
    if screenshots is not None and not isinstance(screenshots, bool):
        raise InvalidInputError(f"screenshots must be True, False or None, got {screenshots!r}")
    shots = graph.evidence if screenshots is None else (screenshots and graph.evidence)
    walk = Walk.of(env, sel, prior, goal, grid, app=app or "", episode=episode, keep_screens=keep_screens,
                   screenshots=shots)
    steps_graph = LocalSteps(graph)

    clock = time.perf_counter
    env_s = 0.0
    t0 = clock()
    screen = env.reset(start) if start is not None else env.reset()
    reset_s = clock() - t0
    _check_screen(screen, "reset()")
    at = steps_graph.observe(screen, walk.shoot)
    ep = Episode(app=app or "", start=start, goal=goal, selector=sel.name, start_state=at.state, episode=episode)
    began = clock()
    for t in range(steps):
        st, at, spent, fault = take_step(walk, t, at, steps_graph)
        env_s += spent
        ep.faults += fault
        ep.steps.append(st)
        if on_step is not None:
            on_step(st)
    wall = clock() - began
    ep.timing = {"reset": reset_s, "wall": wall, "env": env_s, "ours": max(wall - env_s, 0.0),
                 "screenshots": walk.shoot.seconds if walk.shoot is not None else 0.0}
    ep.metrics = episode_metrics(ep.start_state, ep.steps, graph.u0)
    if own_graph:
        graph.close()
    return ep


def features_digest(f: Any) -> str:
    """A screen's exact identity across graphs: a hash of its atom sets and metadata (:attr:`Step.digest`).

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen, featurize
    >>> f = featurize(Screen([Element((0, 0, 9, 9), "Button", "OK")], 10, 10))
    >>> len(features_digest(f)), features_digest(f) == features_digest(featurize(Screen([], 10, 10)))
    (16, False)
    """
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
