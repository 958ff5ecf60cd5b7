"""The shared-graph corpus on real applications: parallel workers, one graph per application, a report.

``spatialobs corpus FOLDER`` explores real applications (the app specs shipped in
``spatialobs/screen/apps/``) with parallel workers: processes on this machine, or
Ray actors with ``--ray``. For each application and each prior (the heuristic one,
which builds the corpus, and the uniform one, Table 3's control at the same budget)
every worker drives its own instance of the application and records every step
into **one shared graph store** (``FOLDER/<app>/<prior>.sqlite``): the store is the
deduplicated graph and index, each step's novelty is judged against the shared
graph inside the step's write (:meth:`~spatialobs.screen.ScreenGraph.record`
catches up with every other worker's records first), and a step is acknowledged
when its write commits.

* **Clean resets, varied configurations.** Every episode is a clean launch (a fresh
  HOME and profile) replaying a seeded prefix; episode ``k`` runs configuration
  ``k // 4 mod 4`` of :data:`CONFIGS`: seeded content (the spec's text files get
  seeded lines, the folder tree and the replay prefix take the seed), a window
  size, and a theme where the toolkit takes one from the environment (GTK 3: Adwaita
  dark; Qt: the Fusion style; GTK 2 and the web application: none).
* **Budget** per application and prior: minutes of wall time, steps, or both
  (whichever ends first). With a step budget the episodes are fixed in advance,
  so two priors get exactly the same number of steps.
* **Captures.** A step whose screen belongs to another application is logged in the
  store's captures, apart from the graph (never a state or an edge); a driver fault
  is logged there too as ``fault:<kind>``.
* **Resumable.** Rerunning the same command after a kill continues where the store
  stands: an episode's recorded steps are never run again, an unfinished episode
  continues from its next step after a clean launch, and the time already spent
  counts against the budget. Workers die with the command (``PR_SET_PDEATHSIG``), so
  nothing writes after a kill; SQLite commits whole steps or nothing.
* **Repeats.** ``--repeats N`` runs every application and prior ``N`` times, run
  ``k >= 2`` as its own graph ``FOLDER/<app>/<prior>.r<k>.sqlite`` (its own logs and
  time spent, start seeds offset by :data:`RUN_SEED_STRIDE` ``(k - 1)``), resumable like
  run 1; ``corpus.json`` records each run's seed offset and budgets. Table 3 gives
  every run and the spread over runs.
* **Seed.** ``--seed S`` (default 0) offsets every seed an episode takes by
  :data:`CORPUS_SEED_STRIDE` ``S``: the configurations' content, the drivers, the
  replayed start prefixes and the selectors' draws (window sizes and themes stay);
  seed 0 is the corpus of ``docs/results/corpus.md``. A folder keeps the seed it was
  started with.
* **Progress**: one line per application and prior every few seconds (steps,
  observations, states, captures, steps per second, time left); each phase's record
  keeps the machine's load average sampled every 30 s while it ran.

:func:`write_report` reads the stores and writes ``docs/results/corpus.md`` with
Table 2, Table 3, Figure 4's four panels (SVG), the trace extraction and Table 12.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import math
import os
import random
import signal
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from spatialobs._errors import InvalidInputError

__all__ = ["CORPUS_APPS", "PRIORS", "CONFIGS", "DEFAULT_MINUTES", "DEFAULT_EPISODE_STEPS", "DEFAULT_WORKERS",
           "RUN_SEED_STRIDE", "CORPUS_SEED_STRIDE", "Config", "Job", "config_of", "vary_spec", "check_apps", "check_budget", "check_repeats", "check_seed",
           "run_tag", "run_seed", "store_path", "run_corpus", "run_worker",
           "recorded_steps", "corpus_stats", "write_report"]

#: The applications of the default corpus (app spec names), in run order.
CORPUS_APPS = ("mousepad", "pcmanfm", "galculator", "featherpad", "localc", "lowriter", "loimpress", "lomath",
               "jupyterlab")
#: The priors: the corpus's (heuristic) and Table 3's control (uniform).
PRIORS = ("heuristic", "uniform")
#: Default budget: minutes of wall time per application and prior (9 apps x 2 priors x 3 min, plus launches:
#: about 1 h on one 2-core machine).
DEFAULT_MINUTES = 3.0
#: Default actions per episode.
DEFAULT_EPISODE_STEPS = 25
#: Default workers (processes, or Ray actors with ``--ray``).
DEFAULT_WORKERS = 2


@dataclass(frozen=True)
class Config:
    """One configuration of an episode: content seed, window size, theme (``"default"`` or ``"alternate"``)."""

    index: int
    seed: int
    width: int
    height: int
    theme: str


#: The configurations episodes cycle through (four episodes in a row share one).
CONFIGS = (Config(0, 0, 1280, 800, "default"), Config(1, 1, 1024, 768, "alternate"),
           Config(2, 2, 1440, 900, "default"), Config(3, 3, 1280, 800, "alternate"))

_WORDS = ("budget", "report", "quarterly", "meeting", "draft", "invoice", "summary", "plan", "north", "delta",
          "review", "sales", "notes", "project", "archive", "photo", "team", "launch", "margin", "total")


#: How far apart the seeds of two corpus seeds (``run_corpus(seed=...)``, ``--seed``) lie: a corpus seed ``S``
#: adds ``CORPUS_SEED_STRIDE * S`` to every configuration's seed, beyond the offsets of the first 1,000 runs
#: (:data:`RUN_SEED_STRIDE`).
CORPUS_SEED_STRIDE = 1_000_000


def config_of(episode: int, seed: int = 0) -> Config:
    """The configuration of episode ``episode`` (episodes ``4c .. 4c+3`` share configuration ``c mod 4``).

    Parameters
    ----------
    episode : int
        The episode number.
    seed : int, default 0
        The corpus seed: the configuration's seed (its content, the driver's seed and the
        start seeds taken from it) is offset by ``CORPUS_SEED_STRIDE * seed``; its window
        size and theme stay.

    Examples
    --------
    >>> [config_of(k).index for k in (0, 3, 4, 15, 16)]
    [0, 0, 1, 3, 0]
    >>> config_of(4).seed, config_of(4, seed=2).seed
    (1, 2000001)
    """
    cfg = CONFIGS[(int(episode) // 4) % len(CONFIGS)]
    if seed:
        cfg = Config(cfg.index, cfg.seed + CORPUS_SEED_STRIDE * int(seed), cfg.width, cfg.height, cfg.theme)
    return cfg


def vary_spec(spec: Any, cfg: Config) -> Any:
    """The app spec of a configuration: seeded lines in its text files, the theme in its environment.

    Parameters
    ----------
    spec : AppSpec
        The application's spec.
    cfg : Config
        The configuration.

    Returns
    -------
    AppSpec
        ``spec`` itself for configuration 0, else a changed copy.

    Examples
    --------
    >>> from spatialobs.screen.drivers import builtin_spec
    >>> s = vary_spec(builtin_spec("mousepad"), CONFIGS[1])
    >>> s.env["GTK_THEME"], s.files["notes.txt"].count("\\n")
    ('Adwaita:dark', 2)
    """
    if cfg.index == 0:
        return spec
    changes: Dict[str, Any] = {}
    rng = random.Random(f"{spec.name}:{cfg.seed}")
    files = {}
    for rel, text in spec.files.items():
        if rel.endswith((".txt", ".md", ".csv")):
            lines = [" ".join(rng.choice(_WORDS) for _ in range(4)) for _ in range(2)]
            if rel.endswith(".csv"):
                lines = [f"{rng.choice(_WORDS)[:3]},{rng.randrange(1, 99)}" for _ in range(2)]
            text = text + ("" if not text or text.endswith("\n") else "\n") + "\n".join(lines) + "\n"
        files[rel] = text
    if files:
        changes["files"] = files
    if spec.driver == "desktop" and cfg.theme == "alternate":
        env = dict(spec.env)
        if spec.toolkit in ("qt5", "qt6"):
            env["QT_STYLE_OVERRIDE"] = "Fusion"
        elif spec.toolkit in ("gtk3", "gtk4", "auto"):
            env["GTK_THEME"] = "Adwaita:dark"
        changes["env"] = env
    return spec.replace(**changes) if changes else spec


def check_apps(apps: Sequence[str]) -> List[str]:
    """The corpus's applications, checked: shipped app spec names of desktop or JupyterLab applications.

    Raises
    ------
    InvalidInputError
        An empty list, a repeated name or an unknown application (the message lists the known ones).

    Examples
    --------
    >>> check_apps(["mousepad", "pcmanfm"])
    ['mousepad', 'pcmanfm']
    """
    from spatialobs.screen.drivers import BUILTIN_APPS

    out = [apps] if isinstance(apps, str) else list(apps)
    if not out:
        raise InvalidInputError("the corpus needs at least one application; choose from " + ", ".join(CORPUS_APPS))
    for a in out:
        if a not in BUILTIN_APPS:
            raise InvalidInputError(f"unknown application {a!r} for the corpus; choose from "
                                    + ", ".join(sorted(BUILTIN_APPS)))
    if len(set(out)) != len(out):
        raise InvalidInputError(f"applications {out} name one application twice")
    return out


def check_budget(minutes: Optional[float], steps: Optional[int]) -> Tuple[Optional[float], Optional[int]]:
    """A budget per application and prior, checked: minutes (positive, finite), steps (positive integer), or both.

    Raises
    ------
    InvalidInputError
        Neither given, or a value that is not positive.

    Examples
    --------
    >>> check_budget(2, None), check_budget(None, 40)
    ((2.0, None), (None, 40))
    """
    if minutes is None and steps is None:
        raise InvalidInputError("the corpus budget needs minutes or steps per application (or both)")
    if minutes is not None:
        if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not math.isfinite(minutes) \
                or minutes <= 0:
            raise InvalidInputError(f"budget: minutes must be a positive number, got {minutes!r}")
        minutes = float(minutes)
    if steps is not None:
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise InvalidInputError(f"budget: steps must be a positive integer, got {steps!r}")
    return minutes, steps


# ---- the worker ------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """What one worker explores: one application and prior, its share of the episodes, the budget."""

    folder: str
    app: str
    prior: str
    worker: int
    workers: int
    episode_steps: int
    steps: Optional[int]
    deadline: Optional[float]
    seed: int = 0
    parent: int = 0
    run: int = 1


#: How far apart the start seeds of two runs of one application and prior lie (see :func:`run_seed`).
RUN_SEED_STRIDE = 1000


def check_seed(seed: Any) -> int:
    """The corpus seed, checked: a non-negative integer.

    Raises
    ------
    InvalidInputError
        A negative number, or a value that is not an integer.

    Examples
    --------
    >>> check_seed(3)
    3
    """
    return _int_at_least(seed, 0, "seed must be a non-negative integer (it offsets the corpus's content and start seeds)")


def check_repeats(repeats: Any) -> int:
    """The number of runs per application and prior, checked: a positive integer.

    Raises
    ------
    InvalidInputError
        Zero, a negative number, or a value that is not an integer.

    Examples
    --------
    >>> check_repeats(2)
    2
    """
    return _int_at_least(repeats, 1, "repeats must be a positive integer (runs per application and prior)")


def _int_at_least(value: Any, least: int, what: str) -> int:
    # an integer (not a bool) of at least ``least``, else InvalidInputError "<what>, got <value>"
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidInputError(f"{what}, got {value!r}")
    return value


def run_tag(prior: str, run: int = 1) -> str:
    """The file stem of run ``run`` of a prior: ``prior`` for run 1, ``prior.r<run>`` for a repeat.

    Examples
    --------
    >>> run_tag("uniform"), run_tag("uniform", 2)
    ('uniform', 'uniform.r2')
    """
    return prior if run == 1 else f"{prior}.r{run}"


def run_seed(cfg_seed: int, run: int = 1) -> int:
    """The seed of run ``run``'s starts and draws for a configuration seeded ``cfg_seed``.

    Run 1 uses the configuration's seed itself; run ``r`` adds ``RUN_SEED_STRIDE * (r - 1)``,
    so a repeat replays other start prefixes and draws other selector streams on the
    same four configurations (content, window size, theme).

    Examples
    --------
    >>> run_seed(2), run_seed(2, 3)
    (2, 2002)
    """
    return int(cfg_seed) + RUN_SEED_STRIDE * (int(run) - 1)


def store_path(folder: Union[str, Path], app: str, prior: str, run: int = 1) -> Path:
    """The shared graph store of one application, prior and run (run ``k >= 2``: ``<prior>.r<k>.sqlite``)."""
    return Path(folder) / app / f"{run_tag(prior, run)}.sqlite"


def recorded_steps(store: Any) -> Dict[int, int]:
    """Per episode, the steps a store holds (its highest step number plus one): where a resumed episode goes on.

    ``store`` is a :class:`~spatialobs.screen.store.GraphStore`.
    """
    out: Dict[int, int] = {}
    for r in list(store.transitions(0)) + list(store.captures(0)):
        out[r.episode] = max(out.get(r.episode, 0), r.step + 1)
    return out


def _die_with_parent(parent: int) -> None:
    # PR_SET_PDEATHSIG = 1: this process gets SIGKILL when its parent dies (a killed command leaves no writer).
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    if parent and os.getppid() != parent:
        os._exit(1)


def _episode_len(job: Job, k: int) -> int:
    if job.steps is None:
        return job.episode_steps
    return max(0, min(job.episode_steps, job.steps - k * job.episode_steps))


def run_worker(job: Job) -> Dict[str, Any]:
    """Explore ``job``'s episodes (``worker``, ``worker + workers``, ...) into the shared store; a summary.

    Every step is one committed write of the shared store (its acknowledgement); the
    worker's log (``<prior>.w<i>.jsonl`` beside the store) gets one line per launch and
    per step with its timing and the index size, and one per failure.
    """
    from spatialobs.screen.drivers import DriverFault, DriverUnavailable, ReplayStart, make_driver, resolve_app
    from spatialobs.screen.explore import LocalSteps, Walk, take_step
    from spatialobs.screen.graph import ScreenGraph
    from spatialobs.screen.select import make_selector, selector_seed

    if job.parent:
        _die_with_parent(job.parent)
    spec = resolve_app(job.app)
    store = store_path(job.folder, job.app, job.prior, job.run)
    store.parent.mkdir(parents=True, exist_ok=True)
    name = f"w{job.worker}"
    steps_done = launches = 0
    failures = 0
    driver: Any = None
    cur: Optional[Config] = None
    log = open(store.with_name(f"{run_tag(job.prior, job.run)}.{name}.jsonl"), "a", encoding="utf-8")

    def write(rec: Dict[str, Any]) -> None:
        log.write(json.dumps(rec) + "\n")
        log.flush()

    def over() -> bool:
        if job.parent and os.getppid() != job.parent:
            os._exit(1)
        return job.deadline is not None and time.time() >= job.deadline

    n_episodes = None if job.steps is None else -(-job.steps // job.episode_steps)
    try:
        with ScreenGraph(store, app=spec.name if not isinstance(spec, str) else spec, worker=name) as g:
            done = recorded_steps(g.store)
            k = job.worker
            while not over() and (n_episodes is None or k < n_episodes):
                length = _episode_len(job, k)
                first = done.get(k, 0)
                if first >= length:
                    k += job.workers
                    continue
                cfg = config_of(k, job.seed)
                t0 = time.perf_counter()
                try:
                    if cfg != cur or driver is None:
                        if driver is not None:
                            driver.close()
                        driver = None
                        driver = make_driver(vary_spec(spec, cfg), seed=cfg.seed, width=cfg.width,
                                             height=cfg.height)
                        cur = cfg
                    screen = driver.reset(ReplayStart(k, k % 3, run_seed(cfg.seed, job.run)))
                except DriverUnavailable as exc:
                    write({"kind": "error", "episode": k, "error": f"{type(exc).__name__}: {exc}"[:500],
                           "time": time.time()})
                    return {"worker": name, "steps": steps_done, "launches": launches, "error": str(exc)[:500]}
                except DriverFault as exc:
                    failures += 1
                    write({"kind": "launch_failed", "episode": k, "error": str(exc)[:300], "time": time.time(),
                           "seconds": time.perf_counter() - t0})
                    if failures >= 3:
                        return {"worker": name, "steps": steps_done, "launches": launches,
                                "error": f"three launches failed: {exc}"[:500]}
                    k += job.workers
                    continue
                launches += 1
                failures = 0
                sel = make_selector("puct", seed=selector_seed(run_seed(cfg.seed, job.run), k))
                walk = Walk.of(driver, sel, job.prior, str(getattr(driver, "goal", "") or ""), app=g.app or "",
                               episode=k, screenshots=g.evidence)
                graph = LocalSteps(g)
                at = graph.observe(screen, walk.shoot)
                write({"kind": "launch", "episode": k, "config": cfg.index, "seed": cfg.seed, "seconds": time.perf_counter() - t0,
                       "time": time.time()})
                for t in range(first, length):
                    if over():
                        break
                    c0 = time.perf_counter()
                    st, at, spent, fault = take_step(walk, t, at, graph)
                    wall = time.perf_counter() - c0
                    steps_done += 1
                    write({"kind": "step", "episode": k, "step": t, "time": time.time(), "wall": wall, "env": spent,
                           "ours": max(wall - spent, 0.0), "index": len(g.index), "novel": bool(st.state_novel),
                           "capture": st.capture})
                k += job.workers
    finally:
        if driver is not None:
            driver.close()
        log.close()
    return {"worker": name, "steps": steps_done, "launches": launches, "error": None}


def _process_main(job: Job) -> None:
    run_worker(job)


# ---- the coordinator --------------------------------------------------------------------


def _count(store: Path) -> Dict[str, int]:
    out = {"steps": 0, "captures": 0, "observations": 0, "states": 0}
    if not store.exists():
        return out
    try:
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            tr = con.execute("SELECT COUNT(*) FROM transitions").fetchone()[0]
            cap = con.execute("SELECT COUNT(*) FROM captures").fetchone()[0]
            obs, states = con.execute("SELECT COUNT(*), COUNT(DISTINCT state) FROM observations").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return out
    return {"steps": int(tr) + int(cap), "captures": int(cap), "observations": int(obs), "states": int(states)}


def _read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fh = open(folder / ".lock", "w")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise InvalidInputError(f"another corpus run is using {str(folder)!r}") from None
        yield
    finally:
        fh.close()


def _fmt_s(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 60}:{s % 60:02d}"


def run_corpus(folder: Union[str, Path], apps: Sequence[str] = CORPUS_APPS, *, minutes: Optional[float] = DEFAULT_MINUTES,
               steps: Optional[int] = None, workers: int = DEFAULT_WORKERS,
               episode_steps: int = DEFAULT_EPISODE_STEPS, priors: Sequence[str] = PRIORS, seed: int = 0,
               ray: Optional[str] = None, progress: Optional[IO[str]] = None, every: float = 5.0,
               repeats: int = 1) -> Dict[str, Any]:
    """Build (or resume) the corpus in ``folder``: every application, every prior, with ``workers`` workers.

    Parameters
    ----------
    folder : str or Path
        The corpus store (created if absent): one shared graph store per application and
        prior, the workers' logs, ``corpus.json`` (the run's settings) and each
        phase's time spent.
    apps : sequence of str
        App spec names (:data:`CORPUS_APPS` by default).
    minutes, steps : float, int, optional
        The budget per application and prior (whichever ends first; at least one).
    workers : int
        Parallel workers per application (each drives its own instance).
    episode_steps : int
        Actions per episode (each episode a clean launch).
    priors : sequence of str
        Priors to run (``"heuristic"``, ``"uniform"``), one graph each.
    seed : int
        The corpus seed (non-negative; 0, the default, is the corpus of
        ``docs/results/corpus.md``): offsets the seed of every configuration's content,
        driver, start prefixes and selector draws by ``CORPUS_SEED_STRIDE * seed`` (see
        :func:`config_of`). A folder's runs keep the seed it was started with.
    ray : str, optional
        Run the workers as Ray actors: ``""`` for a local runtime, or a cluster's address.
    progress : file, optional
        Where the progress lines go.
    every : float
        Seconds between progress lines (and records of the time spent).
    repeats : int
        Runs per application and prior. Run 1 is ``<prior>.sqlite``; run ``k >= 2`` is an
        independent graph ``<prior>.r<k>.sqlite`` beside it (its own start seeds, see
        :func:`run_seed`; its own logs and time spent), resumable like run 1. Runs go in
        order (every application and prior of run 1, then of run 2, ...); a run whose
        budget is spent is skipped untouched.

    Returns
    -------
    dict
        Per ``app/prior`` (run 1) and ``app/prior.r<k>`` (run ``k``): the counts of the
        store and the seconds spent.

    Raises
    ------
    InvalidInputError
        Unknown applications or priors, a bad budget, worker count, number of repeats or
        seed, a folder another run holds, or settings that differ from the folder's first run.
    """
    apps = check_apps(apps)
    repeats = check_repeats(repeats)
    seed = check_seed(seed)
    minutes, steps = check_budget(minutes, steps)
    for name, v in (("workers", workers), ("episode_steps", episode_steps)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidInputError(f"{name} must be a positive integer, got {v!r}")
    priors = [priors] if isinstance(priors, str) else list(priors)
    if not priors or any(p not in PRIORS for p in priors):
        raise InvalidInputError(f"priors must be among {', '.join(PRIORS)}, got {priors!r}")
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root):
        manifest = _read_json(root / "corpus.json", {})
        fixed = {"workers": workers, "episode_steps": episode_steps, "seed": seed}
        for k, v in fixed.items():
            if k in manifest and manifest[k] != v:
                raise InvalidInputError(f"the corpus in {str(root)!r} was started with {k}={manifest[k]!r}, not "
                                        f"{v!r}: resume with the same setting")
        manifest.update(fixed)
        manifest["apps"] = list(dict.fromkeys(list(manifest.get("apps", [])) + apps))
        manifest["priors"] = list(dict.fromkeys(list(manifest.get("priors", [])) + priors))
        manifest["budget"] = {"minutes": minutes, "steps": steps}
        manifest.setdefault("runs", []).append({"started": time.time(), "apps": apps, "ray": ray is not None,
                                                "repeats": repeats, "budget": dict(manifest["budget"])})
        # Per run (repeat) of every application and prior: its seed offset and every budget it was run with.
        per_run = manifest.setdefault("repeat_runs", {})
        for r in range(1, repeats + 1):
            rec = per_run.setdefault(str(r), {"seed_offset": run_seed(config_of(0, seed).seed, r),
                                              "budgets": []})
            if manifest["budget"] not in rec["budgets"]:
                rec["budgets"].append(dict(manifest["budget"]))
        _write_json(root / "corpus.json", manifest)
        out: Dict[str, Any] = {}
        ctx: Any = contextlib.nullcontext()
        if ray is not None:
            from spatialobs.distributed.runtime import ray_runtime

            ctx = ray_runtime(ray or None, num_cpus=max(2, workers))
        with ctx:
            for run in range(1, repeats + 1):
                for app in apps:
                    for prior in priors:
                        out[f"{app}/{run_tag(prior, run)}"] = _run_phase(
                            root, app, prior, minutes, steps, workers, episode_steps, seed, ray is not None,
                            progress, every, run)
    return out


def _run_phase(root: Path, app: str, prior: str, minutes: Optional[float], steps: Optional[int], workers: int,
               episode_steps: int, seed: int, use_ray: bool, progress: Optional[IO[str]], every: float,
               run: int = 1) -> Dict[str, Any]:
    store = store_path(root, app, prior, run)
    store.parent.mkdir(parents=True, exist_ok=True)
    tag = run_tag(prior, run)
    phase_file = store.with_name(f"{tag}.phase.json")
    phase = _read_json(phase_file, {"seconds": 0.0, "runs": 0})
    budget_s = None if minutes is None else minutes * 60.0
    counts = _count(store)
    if (budget_s is not None and phase["seconds"] >= budget_s) or (steps is not None and counts["steps"] >= steps):
        return {**counts, "seconds": phase["seconds"], "skipped": "budget spent"}
    left = None if budget_s is None else budget_s - phase["seconds"]
    start = time.time()
    deadline = None if left is None else start + left
    phase["runs"] = int(phase.get("runs", 0)) + 1
    _write_json(phase_file, phase)  # the run counts from its start, even if it is killed before its first tick
    jobs = [Job(str(root), app, prior, i, workers, episode_steps, steps, deadline, seed, 0 if use_ray else os.getpid(),
                run) for i in range(workers)]
    used0 = float(phase["seconds"])
    errors: List[str] = []

    def tick(final: bool = False) -> None:
        now = time.time()
        phase["seconds"] = used0 + (now - start)
        load = phase.setdefault("load", [])  # the machine's 1-minute load average, every 30 s or so
        if not load or now - load[-1][0] >= 30.0:
            with contextlib.suppress(OSError, ValueError, IndexError):
                load.append([round(now, 1), float(Path("/proc/loadavg").read_text().split()[0])])
        _write_json(phase_file, phase)
        if progress is not None:
            c = _count(store)
            el = time.time() - start
            rate = (c["steps"] - counts["steps"]) / el if el > 0 else 0.0
            lefts = "" if deadline is None else f"  left {_fmt_s(deadline - time.time())}"
            goal = f"/{steps}" if steps is not None else ""
            print(f"[{_fmt_s(el)}] {app}/{tag}: steps {c['steps']}{goal}  observations {c['observations']}  "
                  f"states {c['states']}  captures {c['captures']}  {rate:.2f} steps/s{lefts}"
                  + ("  done" if final else ""), file=progress, flush=True)

    if use_ray:
        from spatialobs.distributed.runtime import require_ray

        ray = require_ray()
        remote = ray.remote(num_cpus=0, max_restarts=2, max_task_retries=2)(_RayWorker)
        actors = [remote.remote() for _ in jobs]
        refs = [a.run.remote(j) for a, j in zip(actors, jobs)]
        pending = list(refs)
        while pending:
            _, pending = ray.wait(pending, num_returns=len(pending), timeout=every)
            tick()
        for r in refs:
            try:
                res = ray.get(r)
                if res.get("error"):
                    errors.append(res["error"])
            except Exception as exc:  # a worker lost for good: its acknowledged steps are in the store
                errors.append(f"{type(exc).__name__}: {exc}"[:300])
        for a in actors:
            ray.kill(a, no_restart=True)
    else:
        import multiprocessing as mp

        mpc = mp.get_context("spawn")
        procs = {j.worker: mpc.Process(target=_process_main, args=(j,), daemon=True) for j in jobs}
        restarts = {j.worker: 0 for j in jobs}
        for p in procs.values():
            p.start()
        last = time.time()
        while any(p.is_alive() for p in procs.values()):
            time.sleep(0.2)
            for j in jobs:
                p = procs[j.worker]
                # A worker that died (not one that finished) is started again once: it resumes from the store.
                if not p.is_alive() and p.exitcode not in (0, None) and restarts[j.worker] < 1 and \
                        (deadline is None or time.time() < deadline):
                    restarts[j.worker] += 1
                    errors.append(f"worker w{j.worker} exited with {p.exitcode}; started again")
                    procs[j.worker] = mpc.Process(target=_process_main, args=(j,), daemon=True)
                    procs[j.worker].start()
            if time.time() - last >= every:
                tick()
                last = time.time()
    tick(final=True)
    phase["errors"] = errors
    _write_json(phase_file, phase)
    return {**_count(store), "seconds": phase["seconds"], "errors": errors}


class _RayWorker:
    def run(self, job: Job) -> Dict[str, Any]:
        return run_worker(job)


# ---- reading the corpus -------------------------------------------------------------------


def _log_lines(folder: Path, app: str, prior: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for f in sorted((folder / app).glob(f"{prior}.w*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


def corpus_stats(folder: Union[str, Path], app: str, prior: str, run: int = 1) -> Dict[str, Any]:
    """Table 2's and Table 3's figures of one application, prior and run, read from its store and its workers' logs.

    Returns
    -------
    dict
        ``steps`` (transitions and captures), ``launches``, ``screenshots`` (screens read:
        one per step and per launch), ``pngs`` (screenshots kept in the evidence store),
        ``captures`` (other applications), ``faults``, ``observations``, ``states``,
        ``state_rate`` (states per screen read), ``machine_hours`` (the workers' busy time),
        ``seconds`` (wall time), ``states_at`` (states found within the first *n* steps,
        as a list by step), ``errors`` and ``load`` (the load averages sampled while it ran).
    """
    root = Path(folder)
    store = store_path(root, app, prior, run)
    tag = run_tag(prior, run)
    if not store.exists():
        raise InvalidInputError(f"no store for {app}/{tag} in {str(root)!r}")
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
    try:
        trs = con.execute("SELECT time, target, state_novel FROM transitions ORDER BY time, seq").fetchall()
        caps = con.execute("SELECT time, app FROM captures ORDER BY time, seq").fetchall()
        obs = con.execute("SELECT o.seq, o.state, e.time FROM observations o LEFT JOIN evidence e "
                          "ON e.observation = o.seq ORDER BY o.seq").fetchall()
        pngs = con.execute("SELECT COUNT(*) FROM screenshots").fetchone()[0]
    finally:
        con.close()
    lines = _log_lines(root, app, tag)
    launches = sum(1 for r in lines if r.get("kind") == "launch")
    busy = sum(float(r.get("wall", 0.0)) for r in lines if r.get("kind") == "step") + \
        sum(float(r.get("seconds", 0.0)) for r in lines if r.get("kind") in ("launch", "launch_failed"))
    errors = sorted({str(r.get("error")) for r in lines if r.get("kind") in ("error", "launch_failed")})
    steps = len(trs) + len(caps)
    states = len({s for _, s, _ in obs})
    # States known after the n-th step (steps by time; a state counts from its first observation's time).
    first_seen: Dict[int, float] = {}
    for _, s, t in obs:
        if t is not None and s not in first_seen:
            first_seen[s] = float(t)
    step_times = sorted([float(t) for t, _, _ in trs] + [float(t) for t, _ in caps])
    seen_times = sorted(first_seen.values())
    states_at: List[int] = []
    j = 0
    for t in step_times:
        while j < len(seen_times) and seen_times[j] <= t:
            j += 1
        states_at.append(j)
    phase = _read_json(store.with_name(f"{tag}.phase.json"), {})
    cross = sum(1 for _, a in caps if not str(a).startswith("fault:"))
    shots = steps + launches
    return {"steps": steps, "launches": launches, "screenshots": shots, "pngs": int(pngs), "captures": cross,
            "faults": len(caps) - cross, "observations": len(obs), "states": states,
            "state_rate": states / shots if shots else 0.0, "machine_hours": busy / 3600.0,
            "seconds": float(phase.get("seconds", 0.0)), "states_at": states_at, "errors": errors,
            "obs_times": sorted(float(t) for _, _, t in obs if t is not None),
            "load": [float(x[1]) for x in phase.get("load", [])]}


# ---- the report ------------------------------------------------------------------------

_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf",
           "#bcbd22")


def _svg_frame(title: str, xlabel: str, ylabel: str, xmax: float, ymax: float, w: int = 640, h: int = 360,
               xlog: bool = False) -> Tuple[List[str], Any]:
    from html import escape

    left, right, top, bottom = 60, 150, 36, 44
    pw, ph = w - left - right, h - top - bottom
    xmax = xmax or 1.0
    ymax = ymax or 1.0

    def xy(x: float, y: float) -> Tuple[float, float]:
        fx = (math.log10(max(x, 1.0)) / math.log10(max(xmax, 10.0))) if xlog else x / xmax
        return left + fx * pw, top + ph - (y / ymax) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
           f'font-family="sans-serif" font-size="12">', f'<rect width="{w}" height="{h}" fill="#ffffff"/>',
           f'<text x="{left}" y="20" font-weight="bold">{escape(title)}</text>',
           f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>',
           f'<text x="{left + pw / 2:.0f}" y="{h - 10}" text-anchor="middle">{escape(xlabel)}</text>',
           f'<text x="14" y="{top + ph / 2:.0f}" transform="rotate(-90 14 {top + ph / 2:.0f})" '
           f'text-anchor="middle">{escape(ylabel)}</text>',
           f'<text x="{left - 6}" y="{top + 4}" text-anchor="end">{ymax:.4g}</text>',
           f'<text x="{left - 6}" y="{top + ph + 4}" text-anchor="end">0</text>',
           f'<text x="{left + pw}" y="{top + ph + 16}" text-anchor="end">{xmax:.4g}</text>']
    return out, xy


def _legend(out: List[str], names: Sequence[str], w: int = 640) -> None:
    from html import escape

    for k, name in enumerate(names):
        y = 44 + 16 * k
        out.append(f'<rect x="{w - 140}" y="{y - 9}" width="10" height="10" fill="{_COLORS[k % len(_COLORS)]}"/>')
        out.append(f'<text x="{w - 125}" y="{y}">{escape(name)}</text>')


def lines_svg(series: Mapping[str, Tuple[Sequence[float], Sequence[float]]], title: str, xlabel: str,
              ylabel: str) -> str:
    """An SVG chart of ``name -> (xs, ys)`` lines (a legend at the right)."""
    xmax = max((max(xs) for xs, _ in series.values() if len(xs)), default=1.0)
    ymax = max((max(ys) for _, ys in series.values() if len(ys)), default=1.0)
    out, xy = _svg_frame(title, xlabel, ylabel, xmax, ymax)
    for k, (xs, ys) in enumerate(series.values()):
        pts = " ".join("%.1f,%.1f" % xy(x, y) for x, y in zip(xs, ys))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{_COLORS[k % len(_COLORS)]}" stroke-width="1.5"/>')
    _legend(out, list(series))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def points_svg(series: Mapping[str, Tuple[Sequence[float], Sequence[float]]], title: str, xlabel: str,
               ylabel: str, ymax: Optional[float] = None) -> str:
    """An SVG scatter chart of ``name -> (xs, ys)`` (points above ``ymax`` drawn at the top)."""
    xmax = max((max(xs) for xs, _ in series.values() if len(xs)), default=1.0)
    top = ymax if ymax is not None else max((max(ys) for _, ys in series.values() if len(ys)), default=1.0)
    out, xy = _svg_frame(title, xlabel, ylabel, xmax, top)
    for k, (xs, ys) in enumerate(series.values()):
        c = _COLORS[k % len(_COLORS)]
        for x, y in zip(xs, ys):
            px, py = xy(x, min(y, top))
            out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="1.4" fill="{c}" fill-opacity="0.5"/>')
    _legend(out, list(series))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def bars_svg(labels: Sequence[str], values: Sequence[float], title: str, ylabel: str) -> str:
    """An SVG bar chart (one bar per label)."""
    from html import escape

    w, h = 640, 360
    out, xy = _svg_frame(title, "", ylabel, 1.0, max(values) if values else 1.0, w, h)
    n = max(len(values), 1)
    left, pw = 60, w - 60 - 150
    bw = pw / n
    for i, (lab, v) in enumerate(zip(labels, values)):
        _, y = xy(0, v)
        _, y0 = xy(0, 0)
        x = left + i * bw
        out.append(f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{bw - 4:.1f}" height="{y0 - y:.1f}" fill="{_COLORS[0]}"/>')
        out.append(f'<text x="{x + bw / 2:.1f}" y="{y0 + 14:.1f}" text-anchor="middle" font-size="10">'
                   f'{escape(lab)}</text>')
        out.append(f'<text x="{x + bw / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle" font-size="10">{v:g}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _changed_pixels(store: Path, limit: int = 300) -> List[float]:
    """Changed-pixel share of each merged observation against its state's first observation (same-size pictures)."""
    import io

    import numpy as np

    try:
        from PIL import Image
    except ImportError:
        return []
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
    try:
        rows = con.execute("SELECT o.seq, o.state, e.screenshot FROM observations o JOIN evidence e "
                           "ON e.observation = o.seq WHERE e.screenshot IS NOT NULL ORDER BY o.seq").fetchall()
        first: Dict[int, str] = {}
        pairs: List[Tuple[str, str]] = []
        for _, state, digest in rows:
            if state in first:
                if len(pairs) < limit:
                    pairs.append((first[state], digest))
            else:
                first[state] = digest
        cache: Dict[str, Any] = {}

        def img(d: str) -> Any:
            if d not in cache:
                png = con.execute("SELECT png FROM screenshots WHERE digest = ?", (d,)).fetchone()
                cache[d] = None if png is None else np.asarray(Image.open(io.BytesIO(png[0])).convert("RGB"))
            return cache[d]

        out: List[float] = []
        for a, b in pairs:
            x, y = img(a), img(b)
            if x is None or y is None or x.shape != y.shape:
                continue
            out.append(float(np.any(x != y, axis=2).mean()))
        return out
    finally:
        con.close()


def _traces(store: Path) -> Tuple[List[int], int, Dict[str, Any]]:
    """Lengths of the runs left after cleaning (§7), the three-step windows and the dataset's stats."""
    from spatialobs.screen.traces import clean
    from spatialobs.screen.training.data import episodes_from_store, windows_dataset

    eps, _ = episodes_from_store(store)
    runs = [len(r) for ep in eps for r in clean(ep)]
    ds = windows_dataset([(store.stem, ep) for ep in eps])
    return runs, len(ds.windows), ds.stats


def _groups(store: Path) -> List[Dict[str, Any]]:
    """Every repeated state–action group (in-app tries >= 2): its successors and their normalized entropy."""
    from collections import Counter

    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
    try:
        rows = con.execute("SELECT source, signature, target, episode FROM transitions").fetchall()
    finally:
        con.close()
    by: Dict[Tuple[int, str], Counter] = {}
    per_cfg: Dict[Tuple[int, str], Dict[int, set]] = {}
    for s, sig, t, ep in rows:
        by.setdefault((int(s), str(sig)), Counter())[int(t)] += 1
        per_cfg.setdefault((int(s), str(sig)), {}).setdefault(config_of(int(ep)).index, set()).add(int(t))
    out = []
    for (s, sig), c in by.items():
        n = sum(c.values())
        if n < 2:
            continue
        k = len(c)
        h = 0.0
        if k > 1:
            h = -sum((v / n) * math.log(v / n) for v in c.values()) / math.log(k)
        op, _, rest = sig.partition("|")
        role = rest.split("|", 1)[0] if rest else ""
        cfgs = per_cfg[(s, sig)]
        within = any(len(ts) > 1 for ts in cfgs.values())
        out.append({"state": s, "signature": sig, "n": n, "successors": k, "entropy": h, "op": op,
                    "role": role, "stay": c.get(s, 0) / n, "configs": len(cfgs), "within": within})
    return out


def _equal_steps(h: Dict[str, Any], u: Dict[str, Any]) -> Tuple[int, int]:
    # States each graph held after the first n steps, n the smaller step count.
    n = min(len(h["states_at"]), len(u["states_at"]))
    return (h["states_at"][n - 1], u["states_at"][n - 1]) if n else (0, 0)


def _pct(x: float, nd: int = 2) -> str:
    return f"{100 * x:.{nd}f}%"


def _signed(x: float, fmt: str = "g") -> str:
    return "0" if x == 0 else format(x, "+" + fmt)


def _spread(xs: Sequence[float], pct: bool = False, signed: bool = False, nd: int = 1) -> str:
    # "mean (lowest–highest)" of a few runs' values ("lowest to highest" for signed values).
    if not xs:
        return "-"
    m = sum(xs) / len(xs)

    def f(x: float, mean: bool = False) -> str:
        if pct:
            return _pct(x)
        if mean or nd > 1:
            return _signed(x, f".{nd}f") if signed else f"{x:.{nd}f}"
        return _signed(x) if signed else f"{x:g}"

    return f"{f(m, True)} ({f(min(xs))}{' to ' if signed else '–'}{f(max(xs))})"


def _repeat_runs(root: Path, app: str, prior: str) -> List[int]:
    # The runs k >= 2 whose store is in the folder.
    out = []
    for f in (root / app).glob(f"{prior}.r*.sqlite"):
        tail = f.name[len(prior) + 2:-len(".sqlite")]
        if tail.isdigit() and int(tail) >= 2:
            out.append(int(tail))
    return sorted(out)


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    if not s:
        return 0.0
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def write_report(folder: Union[str, Path], doc: Union[str, Path] = "docs/results/corpus.md", *,
                 command: str = "") -> Dict[str, Any]:
    """Write the corpus document (Tables 2, 3, 12, Figure 4 and the traces) from the corpus in ``folder``.

    The four panels of Figure 4 are written beside ``doc`` as ``corpus-*.svg``.

    Returns
    -------
    dict
        The figures the document holds, by application and prior.

    Raises
    ------
    InvalidInputError
        ``folder`` holds no corpus (no ``corpus.json``).
    """
    root = Path(folder)
    manifest = _read_json(root / "corpus.json", None)
    if not isinstance(manifest, dict):
        raise InvalidInputError(f"no corpus in {str(root)!r} (corpus.json is missing)")
    doc = Path(doc)
    doc.parent.mkdir(parents=True, exist_ok=True)
    apps = [a for a in manifest.get("apps", []) if (root / a).is_dir()]
    priors = manifest.get("priors", list(PRIORS))
    stats: Dict[str, Dict[str, Any]] = {}
    for app in apps:
        for prior in priors:
            if store_path(root, app, prior).exists():
                stats[f"{app}/{prior}"] = corpus_stats(root, app, prior)
    # Every run of every application and prior (run 1 is ``stats``): Table 3's spread.
    rstats: Dict[Tuple[str, str, int], Dict[str, Any]] = {}
    for app in apps:
        for prior in priors:
            if f"{app}/{prior}" in stats:
                rstats[(app, prior, 1)] = stats[f"{app}/{prior}"]
            for r in _repeat_runs(root, app, prior):
                rstats[(app, prior, r)] = corpus_stats(root, app, prior, r)
    main = "heuristic" if "heuristic" in priors else priors[0]
    budget = manifest.get("budget", {})
    L: List[str] = ["# The shared-graph corpus on real applications", ""]
    L += [f"Written by `{command or 'spatialobs corpus FOLDER --report'}` from the corpus store (kept out of the "
          "repository). Each application is explored by "
          f"{manifest.get('workers')} parallel workers (processes on one machine; Ray actors with `--ray`) into "
          "one shared, deduplicated graph per application and prior: every step is one committed write of the "
          "shared SQLite graph store, its novelty judged against everything every worker recorded before it. "
          f"Every episode ({manifest.get('episode_steps')} actions) is a clean launch with a fresh HOME and "
          "profile, replaying a seeded prefix of 0-2 actions, in one of four configurations (seeded text content, "
          "1280x800 / 1024x768 / 1440x900 windows, and the alternate theme where the toolkit takes one from the "
          "environment: Adwaita dark for GTK 3 and LibreOffice, Fusion for Qt; none for GTK 2 and JupyterLab). "
          "PUCT (the default setting) selects every action.", ""]
    bm = budget.get("minutes")
    bs = budget.get("steps")
    used = " or ".join(x for x in ((f"{bm:g} min of wall time" if bm else ""), (f"{bs} steps" if bs else "")) if x)
    run_ids = sorted({r for (_, _, r) in rstats}) or [1]
    cmd = "spatialobs corpus FOLDER" + (f" --minutes {bm:g}" if bm else "") + (f" --steps {bs}" if bs else "")
    if manifest.get("workers") != DEFAULT_WORKERS:
        cmd += f" --workers {manifest.get('workers')}"
    if manifest.get("episode_steps") != DEFAULT_EPISODE_STEPS:
        cmd += f" --episode-steps {manifest.get('episode_steps')}"
    if list(manifest.get("apps", [])) != list(CORPUS_APPS):
        cmd += " --apps " + ",".join(manifest.get("apps", []))
    if list(priors) != list(PRIORS):
        cmd += " --priors " + ",".join(priors)
    if max(run_ids) > 1:
        cmd += f" --repeats {max(run_ids)}"
    per_run_text = []
    for r in run_ids:
        rs = [v for (_, _, k), v in rstats.items() if k == r]
        load = sorted(x for v in rs for x in v.get("load", []))
        budgets = manifest.get("repeat_runs", {}).get(str(r), {}).get("budgets", [])
        per_run_text.append(
            f"run {r}: {sum(v['seconds'] for v in rs) / 60:.0f} min of wall time over {len(rs)} graphs"
            + (", budgets " + " then ".join(
                " or ".join(x for x in ((f"{b.get('minutes'):g} min" if b.get("minutes") else ""),
                                        (f"{b.get('steps')} steps" if b.get("steps") else "")) if x)
                for b in budgets) if len(budgets) > 1 else "")
            + (f", 1-minute load average median {_median(load):.1f} (range {load[0]:.1f}–{load[-1]:.1f}, "
               f"{len(load)} samples)" if load else ", load average not recorded"))
    L += [f"**Budget used here:** {used} per application, prior and run"
          + (" (whichever ended first)" if bm and bs else "")
          + f", {manifest.get('workers')} workers, {len(run_ids)} run(s) per application and prior (each its own "
          f"graph), built by `{cmd}` in {len(manifest.get('runs', []))} invocation(s) of the command (a rerun "
          "resumes; the time already spent counts against the budget), on one 2-core machine shared with other "
          "jobs (under `nice`; the workers' own load is 2 or more): " + "; ".join(per_run_text) + ". "
          f"**Default budget:** `spatialobs corpus FOLDER` = {DEFAULT_MINUTES:g} min per application and prior, "
          f"{DEFAULT_WORKERS} workers, {DEFAULT_EPISODE_STEPS} actions per episode: nine applications x two "
          "priors, about an hour on one 2-core machine with the launches. **Scaling out:** "
          "`spatialobs corpus FOLDER --ray ADDRESS --workers 16 --minutes 60` runs the workers as Ray actors on a "
          "cluster (the folder on storage every node mounts); a rerun of the same command resumes a killed run.",
          ""]
    # Table 2
    L += ["## Table 2: the corpus per application", "",
          f"The corpus is the {main} prior's graph of each application (the uniform prior's graphs are Table 3's "
          "control and are counted in the last row). *Machine-hours* is the workers' busy time (launches and "
          "steps), our counterpart of VM-hours. *Screenshots* counts the screens read (one per step and one per "
          "episode launch); the evidence store keeps a screenshot of each new observation, stored once per "
          "content hash (*PNGs*: the distinct pictures). *Cross-app captures* are "
          "steps whose screen belonged to another application (a file chooser of another program, a browser "
          "page): logged in the store's captures, apart from the graph; driver faults are counted apart "
          "(*faults*). *State rate* is graph states per screenshot. *Three-step traces* are the windows of §7's "
          "extraction (below).", "",
          "| application | machine-hours | wall min | steps | launches | cross-app captures | faults | screenshots | "
          "PNGs | unique observations | graph states | state rate | three-step traces |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    traces: Dict[str, Tuple[List[int], int, Dict[str, Any]]] = {}
    tot = {k: 0.0 for k in ("machine_hours", "seconds", "steps", "launches", "captures", "faults", "screenshots",
                            "pngs", "observations", "states", "windows")}
    for app in apps:
        s = stats.get(f"{app}/{main}")
        if s is None:
            continue
        tr = traces[app] = _traces(store_path(root, app, main))
        L.append(f"| {app} | {s['machine_hours']:.3f} | {s['seconds'] / 60:.1f} | {s['steps']} | {s['launches']} | "
                 f"{s['captures']} | {s['faults']} | "
                 f"{s['screenshots']} | {s['pngs']} | {s['observations']} | {s['states']} | "
                 f"{_pct(s['state_rate'])} | {tr[1]} |")
        for k in tot:
            tot[k] += tr[1] if k == "windows" else s[k]
    L.append(f"| **all ({len(traces)} apps)** | {tot['machine_hours']:.3f} | {tot['seconds'] / 60:.1f} | "
             f"{int(tot['steps'])} | {int(tot['launches'])} | {int(tot['captures'])} | {int(tot['faults'])} | {int(tot['screenshots'])} | {int(tot['pngs'])} | "
             f"{int(tot['observations'])} | {int(tot['states'])} | "
             f"{_pct(tot['states'] / tot['screenshots'] if tot['screenshots'] else 0.0)} | {int(tot['windows'])} |")
    ctl = [v for k, v in stats.items() if not k.endswith("/" + main)]
    if ctl:
        L.append(f"| with the uniform-prior graphs | "
                 f"{tot['machine_hours'] + sum(v['machine_hours'] for v in ctl):.3f} | "
                 f"{(tot['seconds'] + sum(v['seconds'] for v in ctl)) / 60:.1f} | "
                 f"{int(tot['steps'] + sum(v['steps'] for v in ctl))} | "
                 f"{int(tot['launches'] + sum(v['launches'] for v in ctl))} | "
                 f"{int(tot['captures'] + sum(v['captures'] for v in ctl))} | "
                 f"{int(tot['faults'] + sum(v['faults'] for v in ctl))} | "
                 f"{int(tot['screenshots'] + sum(v['screenshots'] for v in ctl))} | "
                 f"{int(tot['pngs'] + sum(v['pngs'] for v in ctl))} | "
                 f"{int(tot['observations'] + sum(v['observations'] for v in ctl))} | "
                 f"{int(tot['states'] + sum(v['states'] for v in ctl))} | | |")
    if len(rstats) > len(stats):
        every = list(rstats.values())
        L.append(f"| with every run's graphs ({max(r for (_, _, r) in rstats)} runs) | "
                 f"{sum(v['machine_hours'] for v in every):.3f} | {sum(v['seconds'] for v in every) / 60:.1f} | "
                 + " | ".join(str(int(sum(v[k] for v in every)))
                              for k in ("steps", "launches", "captures", "faults", "screenshots", "pngs",
                                        "observations", "states")) + " | | |")
        L += ["", "Table 2, Figure 4, the trace extraction and Table 12 cover run 1 (the corpus as first built, and "
              "its uniform-prior control); the repeat runs, each its own graph, are counted in the last row and "
              "compared in Table 3."]
    L.append("")
    L += ["The paper: 11 applications, 1,007,406 screenshots over 5,524 VM-hours (one screenshot per 19.7 s per "
          "VM). Ours is a short run on one machine: hundreds of times fewer screenshots and thousands of times "
          "fewer machine-hours, and a state rate over a few hundred steps is far higher than over a million "
          "(discovery slows as a graph fills: Figure 4a), so rates compare only at equal budgets (Table 3).", ""]
    failed = {k: v["errors"] for k, v in stats.items() if v["errors"]}
    missing = [a for a in manifest.get("apps", []) if a not in apps]
    if failed or missing:
        L += ["**What failed.** " + "; ".join([f"{a}: no store (not run)" for a in missing] +
                                              [f"{k}: {' / '.join(v)[:400]}" for k, v in failed.items()]), ""]
    # Table 3: every run of every application and prior, and the spread over runs
    runs_here = sorted({r for (_, _, r) in rstats})
    multi = len(runs_here) > 1
    L += ["## Table 3: heuristic against uniform prior at equal budgets", "",
          "The same applications, workers, configurations and wall-time budget per prior, each prior in its own "
          "shared graph. *Rate* is graph states per screenshot (as in Table 2); *at equal steps* counts the "
          "states each graph held after the first *n* steps, *n* the smaller of the two step counts, so both "
          "priors are compared on exactly the same number of actions; *h − u* is the heuristic graph's states "
          "at equal steps minus the uniform graph's."
          + (f" Every application and prior was run {len(runs_here)} times (runs {', '.join(map(str, runs_here))}), "
             "each run its own graph: run 1 is the corpus of Table 2, a run *k* ≥ 2 replays other start prefixes "
             f"and draws other selector streams (start seeds offset by {RUN_SEED_STRIDE} (k − 1)) on the same four "
             "configurations and budget." if multi else " One run per application and prior (`--repeats N` adds "
                                                          "runs, each its own graph)."), "",
          "| application | run | heuristic: steps | states | rate | uniform: steps | states | rate | at equal steps n | "
          "heuristic states | uniform states | h − u |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    pairs: List[Dict[str, Any]] = []
    for app in apps:
        for r in runs_here:
            h, u = rstats.get((app, "heuristic", r)), rstats.get((app, "uniform", r))
            if h is None or u is None:
                continue
            n = min(len(h["states_at"]), len(u["states_at"]))
            he, ue = _equal_steps(h, u)
            pairs.append({"app": app, "run": r, "h": h, "u": u, "n": n, "he": he, "ue": ue})
            L.append(f"| {app} | {r} | {h['steps']} | {h['states']} | {_pct(h['state_rate'])} | {u['steps']} | "
                     f"{u['states']} | {_pct(u['state_rate'])} | {n} | {he} | {ue} | {_signed(he - ue)} |")
    per_run: Dict[int, Dict[str, int]] = {}
    for p in pairs:
        c = per_run.setdefault(p["run"], {"hs": 0, "hn": 0, "us": 0, "un": 0, "he": 0, "ue": 0, "hshots": 0,
                                          "ushots": 0})
        h, u = p["h"], p["u"]
        for key, v in (("hs", h["states"]), ("hn", h["steps"]), ("us", u["states"]), ("un", u["steps"]),
                       ("he", p["he"]), ("ue", p["ue"]), ("hshots", h["screenshots"]), ("ushots", u["screenshots"])):
            c[key] += v
    for r, c in sorted(per_run.items()):
        if c["hshots"] and c["ushots"]:
            L.append(f"| **pooled** | {r} | {c['hn']} | {c['hs']} | **{_pct(c['hs'] / c['hshots'])}** | {c['un']} | "
                     f"{c['us']} | **{_pct(c['us'] / c['ushots'])}** | | {c['he']} | {c['ue']} | "
                     f"{_signed(c['he'] - c['ue'])} |")
    pooled = {k: sum(c[k] for c in per_run.values()) for k in ("hs", "hn", "us", "un", "he", "ue", "hshots", "ushots")}
    rates = {r: (c["hs"] / c["hshots"], c["us"] / c["ushots"]) for r, c in sorted(per_run.items())
             if c["hshots"] and c["ushots"]}
    if multi and pairs:
        L += ["", "Over the runs: the mean and, in brackets, the range (lowest–highest) over the runs of each "
              "application; the pooled row pools the applications within each run, then takes the mean and range "
              "over runs. *Runs ahead* counts the runs in which the heuristic graph held more states at equal "
              "steps (ties: as many).", "",
              "| application | runs | heuristic rate | uniform rate | h − u at equal steps | runs ahead | ties |",
              "|---|---:|---:|---:|---:|---:|---:|"]
        for app in apps:
            ps = [p for p in pairs if p["app"] == app]
            if not ps:
                continue
            L.append(f"| {app} | {len(ps)} | {_spread([p['h']['state_rate'] for p in ps], pct=True)} | "
                     f"{_spread([p['u']['state_rate'] for p in ps], pct=True)} | "
                     f"{_spread([p['he'] - p['ue'] for p in ps], signed=True)} | "
                     f"{sum(p['he'] > p['ue'] for p in ps)} of {len(ps)} | {sum(p['he'] == p['ue'] for p in ps)} |")
        L.append(f"| **pooled** | {len(rates)} | {_spread([h for h, _ in rates.values()], pct=True)} | "
                 f"{_spread([u for _, u in rates.values()], pct=True)} | "
                 f"{_spread([c['he'] - c['ue'] for c in per_run.values()], signed=True)} | "
                 f"{sum(p['he'] > p['ue'] for p in pairs)} of {len(pairs)} | {sum(p['he'] == p['ue'] for p in pairs)} |")
    if rates and pooled["hshots"] and pooled["ushots"]:
        hr, ur = pooled["hs"] / pooled["hshots"], pooled["us"] / pooled["ushots"]
        ratio = f"{hr / ur:.2f}" if ur else "-"
        per = "; ".join(f"run {r} {_pct(a)} against {_pct(b)} (ratio {a / b if b else float('nan'):.2f})"
                        for r, (a, b) in rates.items())
        text = [f"The paper: 4.10% (heuristic) against 1.74% (uniform), a ratio of 2.36. Ours, pooled over the "
                f"applications: {per}"
                + (f"; over all {len(rates)} runs {_pct(hr)} against {_pct(ur)} (ratio {ratio})" if multi else "")
                + f". At equal steps the heuristic graphs held {pooled['he']} states against {pooled['ue']}"
                + (" over all runs" if multi else "") + "."]
        ahead = [p for p in pairs if p["he"] > p["ue"]]
        behind = [p for p in pairs if p["he"] < p["ue"]]
        text.append(f"The heuristic graph held more states at equal steps in {len(ahead)} of {len(pairs)} "
                    + ("runs (application × run)" if multi else "applications")
                    + (f", fewer in {len(behind)}" if behind else "")
                    + (f", as many in {len(pairs) - len(ahead) - len(behind)}"
                       if len(pairs) - len(ahead) - len(behind) else "") + ".")
        if multi:
            by_app: Dict[str, List[int]] = {}
            for p in pairs:
                by_app.setdefault(p["app"], []).append(p["he"] - p["ue"])
            full = {a: d for a, d in by_app.items() if len(d) > 1}
            up = [a for a, d in full.items() if min(d) > 0]
            down = [a for a, d in full.items() if max(d) < 0]
            mixed = [a for a in full if a not in up and a not in down]
            text.append("Per application, the heuristic prior was ahead in every run on "
                        + (", ".join(up) if up else "none") + ", behind in every run on "
                        + (", ".join(down) if down else "none") + ", and the sign changed (or a run tied) between "
                        "runs on " + (", ".join(mixed) if mixed else "none") + ".")
            if full:
                moves = [max(d) - min(d) for d in full.values()]
                clear = [a for a, d in full.items() if abs(sum(d) / len(d)) > max(d) - min(d)]
                text.append(f"Between runs of one application, h − u moved by a median of {_median(moves):g} state(s) "
                            f"(range {min(moves)}–{max(moves)}); the mean difference exceeds that movement on "
                            f"{len(clear)} of {len(full)} applications"
                            + (f" ({', '.join(f'{a} {sum(full[a]) / len(full[a]):+.1f}' for a in clear)})"
                               if clear else "") + ".")
            hi = [r for r, (a, b) in rates.items() if a > b]
            if len(hi) == len(rates):
                text.append(f"The heuristic prior's pooled rate is above the uniform prior's in every run, as in the "
                            f"paper, by a ratio of {min(a / b for a, b in rates.values()):.2f}–"
                            f"{max(a / b for a, b in rates.values()):.2f} against the paper's 2.36.")
            elif not hi:
                text.append("The uniform prior's pooled rate is at or above the heuristic prior's in every run: "
                            "the paper's advantage of the heuristic prior is not reproduced at this budget.")
            else:
                text.append(f"The pooled rates change order between runs (the heuristic prior above in run(s) "
                            f"{', '.join(map(str, hi))} of {len(rates)}): at this budget the runs do not resolve "
                            "a difference between the priors.")
        else:
            text.append(("The heuristic prior is ahead, as in the paper. " if hr > ur else
                         "The paper's advantage of the heuristic prior is not reproduced at this budget. ")
                        + "With one run per application and prior the table has no spread over runs.")
        text.insert(1, "Our rates are higher than the paper's because the budgets are small (the first steps of any "
                       "walk find new screens); the comparison between the two priors is the point of the table.")
        L += ["", " ".join(text[:2]), "", " ".join(text[2:])]
    # What each prior spends its steps on: the share of steps by kind of action and how often each found a state.
    kinds_by: Dict[str, Dict[str, List[int]]] = {}
    for (app, prior, r) in rstats:
        if prior not in ("heuristic", "uniform"):
            continue
        con = sqlite3.connect(f"file:{store_path(root, app, prior, r)}?mode=ro", uri=True, timeout=30)
        try:
            for sig, novel in con.execute("SELECT signature, state_novel FROM transitions"):
                parts = str(sig).split("|")
                kind = parts[0] if parts[0] != "click" else f"click {parts[1] if len(parts) > 1 else ''}".strip()
                if kind.startswith("click ") and kind.split(" ", 1)[1] not in ("menu", "menu item", "push button",
                                                                             "table cell", "page tab", "link",
                                                                             "button", "icon"):
                    kind = "click other"
                cell = kinds_by.setdefault(kind, {}).setdefault(prior, [0, 0])
                cell[0] += 1
                cell[1] += int(novel)
        finally:
            con.close()
    if kinds_by and pooled["hn"] and pooled["un"]:
        L += ["", "What each prior spends its steps on (in-app steps of every application"
              + (" and every run" if multi else "") + " pooled): the share of steps by kind of action and the share "
              "of those steps that found a new state.", "",
              "| action | heuristic: share of steps | found a state | uniform: share of steps | found a state |",
              "|---|---:|---:|---:|---:|"]
        th = sum(v.get("heuristic", [0, 0])[0] for v in kinds_by.values()) or 1
        tu = sum(v.get("uniform", [0, 0])[0] for v in kinds_by.values()) or 1
        for kind, v in sorted(kinds_by.items(), key=lambda kv: -kv[1].get("heuristic", [0, 0])[0]):
            hh, uu = v.get("heuristic", [0, 0]), v.get("uniform", [0, 0])
            L.append(f"| {kind} | {100 * hh[0] / th:.1f}% | {(f'{100 * hh[1] / hh[0]:.1f}%') if hh[0] else '-'} | "
                     f"{100 * uu[0] / tu:.1f}% | {(f'{100 * uu[1] / uu[0]:.1f}%') if uu[0] else '-'} |")
        gaps = {k: v.get("heuristic", [0, 0])[0] / th - v.get("uniform", [0, 0])[0] / tu for k, v in kinds_by.items()}
        gk = max(gaps, key=lambda k: abs(gaps[k]))
        gh, gu = kinds_by[gk].get("heuristic", [0, 0]), kinds_by[gk].get("uniform", [0, 0])
        found = ""
        if gh[0] and gu[0]:
            fh, fu = gh[1] / gh[0], gu[1] / gu[0]
            found = (f"; those steps found a state in {_pct(fh, 1)} of the heuristic prior's tries against "
                     f"{_pct(fu, 1)} of the uniform prior's")
        L += ["", f"The two priors' mixes of actions differ by at most {100 * abs(gaps[gk]):.1f} points of share, on "
              f"*{gk}* (the heuristic prior {'more' if gaps[gk] > 0 else 'less'} often){found}. Under PUCT the prior "
              "orders a state's untried actions and weighs the exploration term, while the graph's counts and "
              "rewards (shared by both workers) weigh in once a state's actions have been tried (a reading of the "
              "table, not a measured ablation). With the same budgets the heuristic graphs took "
              f"{pooled['hn']} steps and the uniform graphs {pooled['un']}."]
    L.append("")
    # Figure 4
    pics = doc.parent
    L += ["## Figure 4", ""]
    series: Dict[str, Tuple[List[float], List[float]]] = {}
    for app in apps:
        s = stats.get(f"{app}/{main}")
        if s is None or not s["obs_times"]:
            continue
        t0 = s["obs_times"][0]
        series[app] = ([(t - t0) / 60 for t in s["obs_times"]], list(range(1, len(s["obs_times"]) + 1)))
    if series:
        (pics / "corpus-observations.svg").write_text(lines_svg(series, "(a) cumulative unique observations",
                                                                "minutes since the application's first screen",
                                                                "unique observations"), encoding="utf-8")
        L += ["![(a) cumulative unique observations](corpus-observations.svg)", "",
              "(a) Cumulative unique observations over wall time, per application (the corpus graph). The paper's "
              "curves over days keep rising with a slowing slope; ours cover minutes, where discovery is still "
              "near its initial rate on most applications.", ""]
    lat: Dict[str, Tuple[List[float], List[float]]] = {}
    allpts: List[Tuple[float, float]] = []
    for app in apps:
        rows = [r for r in _log_lines(root, app, main) if r.get("kind") == "step"]
        if rows:
            lat[app] = ([float(r["index"]) for r in rows], [1000 * float(r["ours"]) for r in rows])
            allpts += list(zip(*lat[app]))
    if lat:
        cap = sorted(y for _, y in allpts)[int(0.99 * (len(allpts) - 1))]
        (pics / "corpus-latency.svg").write_text(points_svg(lat, "(b) per-step decision latency",
                                                            "index size (observations in the graph)",
                                                            "ms (featurize, index, select, record)", cap),
                                                 encoding="utf-8")
        xs = sorted(x for x, _ in allpts)
        cut = [xs[int(q * (len(xs) - 1))] for q in (0.0, 0.25, 0.5, 0.75, 1.0)]
        L += ["![(b) per-step decision latency](corpus-latency.svg)", "",
              "(b) Our time per step (featurize the screen, match it in the index, select the next action, "
              "record the step in the shared store), against the index size when the step was taken; points "
              "above the 99th percentile are drawn at the top. Median by quarter of index size:", "",
              "| index size | steps | median ms | 90th percentile ms |", "|---|---:|---:|---:|"]
        for a, b in zip(cut, cut[1:]):
            ys = sorted(y for x, y in allpts if a <= x <= b)
            if ys:
                L.append(f"| {int(a)}-{int(b)} | {len(ys)} | {_median(ys):.1f} | {ys[int(0.9 * (len(ys) - 1))]:.1f} |")
        L += ["", "The paper's latency stays flat as the index grows to a million observations; ours covers "
              "indexes of at most a few hundred observations per application, where the time is dominated by "
              "featurizing the screen and the store's write, not by the index.", ""]
    changed: List[float] = []
    per_app_changed: Dict[str, List[float]] = {}
    for app in apps:
        if f"{app}/{main}" in stats:
            per_app_changed[app] = _changed_pixels(store_path(root, app, main))
            changed += per_app_changed[app]
    bins = [(0.0, 0.0), (0.0, 0.001), (0.001, 0.01), (0.01, 0.05), (0.05, 0.2), (0.2, 1.0)]
    names = ["0", "<0.1%", "0.1-1%", "1-5%", "5-20%", ">20%"]
    counts = [sum(1 for c in changed if (c == 0 if hi == 0 else lo < c <= hi)) for lo, hi in bins]
    if changed:
        (pics / "corpus-changed-pixels.svg").write_text(bars_svg(names, counts, "(c) changed pixels of merged "
                                                                 "observations", "merged observations"),
                                                        encoding="utf-8")
        L += ["![(c) changed pixels](corpus-changed-pixels.svg)", "",
              f"(c) For each observation merged into an existing state (not an exact duplicate: a near-duplicate "
              f"within τ), the share of pixels that differ between its screenshot and the screenshot of its "
              f"state's first observation, from the evidence store ({len(changed)} pairs of equal size; median "
              f"{_pct(_median(changed))}). By application (median): "
              + ", ".join(f"{a} {_pct(_median(v))} ({len(v)})" for a, v in per_app_changed.items() if v) + ".",
              "", "The paper's merged states differ in a small share of pixels (a caret, a highlighted item, a "
              "counter); the distribution here shows where our merges sit.", ""]
    else:
        L += ["(c) No observation was merged into an existing state with a screenshot of the same size (every "
              "observation opened its own state, or a picture is missing), so there is no changed-pixel "
              "distribution to draw.", ""]
    runs_all = [x for r, _, _ in traces.values() for x in r]
    if runs_all:
        top = max(runs_all)
        edges = sorted({3, 5, 10, 15, 20, 25, top})
        labels, vals = [], []
        lo = 1
        for e in edges:
            if e < lo:
                continue
            labels.append(f"{lo}-{e}" if e > lo else str(e))
            vals.append(sum(1 for x in runs_all if lo <= x <= e))
            lo = e + 1
        (pics / "corpus-trace-lengths.svg").write_text(bars_svg(labels, vals, "(d) lengths of extracted traces",
                                                                "runs"), encoding="utf-8")
        L += ["![(d) lengths of extracted traces](corpus-trace-lengths.svg)", "",
              f"(d) Lengths (steps) of the runs kept by §7's cleaning: {len(runs_all)} runs, median "
              f"{_median(runs_all):g}, longest {top}.", ""]
    # Traces
    L += ["## Trace extraction (§7)", "",
          "`spatialobs.screen.training` cuts the windows from each store: episodes are rebuilt from the log, "
          "segments of five steps more than half wasted (no-ops and returns to a state the segment already "
          "visited) are dropped, the runs left are cut into overlapping three-step windows, and a window with a "
          "capture or a fault is left out. An episode resumed after a kill continues in the same episode after a "
          "clean launch, so its two parts are one trace here.", "",
          "| application | episodes | steps | steps kept | runs | three-step windows | tasks | counterfactual pairs |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for app, (runs, nwin, st) in traces.items():
        L.append(f"| {app} | {st['episodes']} | {st['steps']} | {st['kept_steps']} | {len(runs)} | {nwin} | "
                 f"{st['tasks']} | {st['pairs']} |")
    L.append("")
    # Table 12
    groups: List[Dict[str, Any]] = []
    for app in apps:
        for prior in priors:
            if f"{app}/{prior}" in stats:
                for g in _groups(store_path(root, app, prior)):
                    groups.append({**g, "app": app, "prior": prior})
    L += ["## Table 12: the audit of repeated state–action groups", "",
          "Every (state, action signature) pair tried at least twice in the application (captures and faults "
          "excluded), over every graph of the corpus. A group is *dispersed* when its tries reached more than "
          "one state; *H̄* is the normalized entropy of its successors (0: always the same state).", ""]
    if groups:
        disp = [g for g in groups if g["successors"] > 1]
        L += [f"{len(groups)} repeated groups ({sum(g['n'] for g in groups)} tries), {len(disp)} dispersed "
              f"({_pct(len(disp) / len(groups), 1)}).", "",
              "Where it lies: a dispersed group is *within a configuration* when two tries under the same "
              "launch configuration (content seed, window size, theme) reached different states, and *between "
              "configurations only* when every configuration's tries agreed and only the configurations differ "
              "(a window size or theme that the state merge keeps apart is then the whole dispersion).", "",
              "| application | repeated groups | tries | dispersed | share | within a configuration | between "
              "configurations only | mean H̄ of dispersed |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for app in apps:
            gs = [g for g in groups if g["app"] == app]
            if not gs:
                continue
            ds = [g for g in gs if g["successors"] > 1]
            mh = sum(g["entropy"] for g in ds) / len(ds) if ds else 0.0
            w = sum(g["within"] for g in ds)
            L.append(f"| {app} | {len(gs)} | {sum(g['n'] for g in gs)} | {len(ds)} | {_pct(len(ds) / len(gs), 1)} | "
                     f"{w} | {len(ds) - w} | {mh:.2f} |")
        w = sum(g["within"] for g in disp)
        L.append(f"| **all** | {len(groups)} | {sum(g['n'] for g in groups)} | {len(disp)} | "
                 f"{_pct(len(disp) / len(groups), 1)} | {w} | {len(disp) - w} | "
                 f"{(sum(g['entropy'] for g in disp) / len(disp)) if disp else 0.0:.2f} |")
        L += ["", "By kind of action (op and target role of the signature):", "",
              "| action | repeated groups | dispersed | share | share of all dispersed | within a configuration |",
              "|---|---:|---:|---:|---:|---:|"]
        kinds: Dict[str, List[Dict[str, Any]]] = {}
        for g in groups:
            kinds.setdefault(f"{g['op']} {g['role']}".strip(), []).append(g)
        for kind, gs in sorted(kinds.items(), key=lambda kv: -sum(g["successors"] > 1 for g in kv[1]))[:15]:
            d = sum(g["successors"] > 1 for g in gs)
            L.append(f"| {kind} | {len(gs)} | {d} | {_pct(d / len(gs), 1)} | "
                     f"{_pct(d / len(disp), 1) if disp else '-'} | {sum(g['within'] for g in gs)} |")
        L += ["", "The most dispersed groups (most tries first among those with H̄ ≥ 0.5):", "",
              "| application | prior | state | signature | tries | successors | H̄ | share staying | configurations | "
              "within one |", "|---|---|---:|---|---:|---:|---:|---:|---:|---|"]
        for g in sorted([g for g in disp if g["entropy"] >= 0.5], key=lambda g: (-g["n"], -g["entropy"]))[:12]:
            sig = g["signature"].replace("|", " · ")[:70]
            L.append(f"| {g['app']} | {g['prior']} | {g['state']} | `{sig}` | {g['n']} | {g['successors']} | "
                     f"{g['entropy']:.2f} | {_pct(g['stay'], 0)} | {g['configs']} | {'yes' if g['within'] else 'no'} |")
        L += ["", "The paper's Table 12 audits the same groups over its corpus to find where outcome dispersion "
              "comes from. Here a dispersed group is either a hidden variable of the application (what was typed "
              "or opened before, which the state's merging threshold does not separate), a timing effect (a "
              "screen read before the application finished redrawing), or a launch configuration that differs "
              "only in what the merge ignores; the signatures above name the actions to look at first.", ""]
    else:
        L += ["No state–action group was tried twice.", ""]
    # Beside the paper
    L += ["## Beside the paper", "",
          "| measure | the paper | ours |", "|---|---|---|",
          f"| applications | 11 | {len(traces)} |",
          f"| screenshots | 1,007,406 | {int(tot['screenshots'])} (corpus graphs; "
          f"{int(tot['screenshots'] + sum(v['screenshots'] for v in ctl))} with the uniform-prior graphs) |",
          f"| VM-hours / machine-hours | 5,524 | {tot['machine_hours'] + sum(v['machine_hours'] for v in ctl):.2f} |",
          "| seconds per screenshot per worker | 19.7 | "
          + (f"{3600 * (tot['machine_hours'] + sum(v['machine_hours'] for v in ctl)) / max(1, tot['screenshots'] + sum(v['screenshots'] for v in ctl)):.2f}"
             if tot["screenshots"] else "-") + " |",
          f"| runs per application and prior (Table 3) | 1 | {len(rates) or 1} |",
          "| graph states per screenshot (heuristic) | 4.10% | "
          + (_pct(pooled["hs"] / pooled["hshots"]) if pooled["hshots"] else "-")
          + (f" (per run: {_spread([a for a, _ in rates.values()], pct=True)})" if multi and rates else "") + " |",
          "| graph states per screenshot (uniform) | 1.74% | "
          + (_pct(pooled["us"] / pooled["ushots"]) if pooled["ushots"] else "-")
          + (f" (per run: {_spread([b for _, b in rates.values()], pct=True)})" if multi and rates else "") + " |",
          "| heuristic / uniform | 2.36 | "
          + (f"{(pooled['hs'] / pooled['hshots']) / (pooled['us'] / pooled['ushots']):.2f}"
             if pooled["hshots"] and pooled["ushots"] and pooled["us"] else "-")
          + (f" (per run: {_spread([a / b for a, b in rates.values() if b], nd=2)})" if multi and rates else "") + " |",
          "| median changed pixels of a merged observation | small (Figure 4c) | "
          + (_pct(_median(changed)) if changed else "-") + " |",
          f"| three-step traces | - | {int(tot['windows'])} |", "",
          "What differs and why: the paper's corpus is hundreds of times larger in screenshots and thousands "
          "of times in machine time (5,524 VM-hours against minutes of two workers per application), so its rates are those of graphs that "
          "have long since stopped finding something on most steps, while ours are those of the first few "
          "hundred steps; only the ratio between the priors compares. Our workers read the accessibility tree "
          "(AT-SPI, the DOM for JupyterLab) and keep a screenshot only of each new observation; a step here "
          "takes a fraction of a second to a few seconds of the application's time, so a worker produces far "
          "more screens per hour than the paper's VMs did. The applications differ: the paper explored Writer, "
          "Calc and Math, and Word and PowerPoint among its 11; here LibreOffice Writer, Calc, Impress and Math "
          "stand for those, beside Mousepad, PCManFM, galculator, FeatherPad and JupyterLab, all under Xvfb with "
          "a fresh profile per launch.", ""]
    doc.write_text("\n".join(L), encoding="utf-8")
    return {"stats": {k: {kk: vv for kk, vv in v.items() if kk not in ("states_at", "obs_times")}
                      for k, v in stats.items()}, "groups": len(groups), "changed": len(changed)}

