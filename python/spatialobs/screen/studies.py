"""The controlled studies of ScreenSearch on the simulated apps, and the results document.

1. :func:`compare_selectors`: PUCT vs Greedy with the same prior, one fresh graph
   per start, ``starts`` replayable starts × ``steps`` actions per application (the
   paper's Table 4 analogue).
2. :func:`ablation`: PUCT with the reward reduced to novelty
   (λ_amb = 0), to ambiguity (λ_state = λ_edge = 0), or full, on apps with timing
   noise (so that outcomes of one matched action can differ).
3. :func:`decomposition`: outcome dispersion of one matched action over repeated
   trials with condition labels, split into pooled / within / between
   (:func:`~spatialobs.screen.dispersion`): Paste under hidden clipboard variants
   (the condition explains everything) vs Save under an asynchronous title update
   that lands late in a fixed 40 % of each condition's trials (the condition
   explains nothing).
4. :func:`probe_vs_escape`: before committing to a file name that must equal the
   hidden clipboard, either act at once, probe reversibly (Edit > Paste then
   Edit > Undo) or navigate the File menu and escape. The agent commits to the
   condition most often seen with its observed state sequence in calibration
   trials (ties to the first condition); accuracy is checked against the app.

:func:`write_report` runs all four and writes the Markdown results document;
``python -m spatialobs.screen.studies docs/results/exploration.md`` does the same.
"""

from __future__ import annotations

import math
import platform
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from spatialobs._errors import InvalidInputError
from spatialobs.screen import sim
from spatialobs.screen.actions import Action, signature
from spatialobs.screen.explore import METRICS, explore
from spatialobs.screen.graph import Dispersion, ScreenGraph, dispersion
from spatialobs.screen.select import PUCT, Greedy

__all__ = ["SCALES", "compare_selectors", "ablation", "decomposition", "probe_vs_escape", "run_all", "write_report",
           "OBJECTIVES"]

#: Study sizes: ``full`` is the paper's protocol, ``small`` the CI-scale run.
SCALES = {"full": {"starts": 50, "steps": 50, "trials": 10}, "small": {"starts": 10, "steps": 30, "trials": 10}}

#: Reward weights (λ_state, λ_edge, λ_amb) of the ablation.
OBJECTIVES = {"novelty only": (1.0, 1.0, 0.0), "ambiguity only": (0.0, 0.0, 1.0), "full": (1.0, 1.0, 1.0)}

APPS = ("notepad", "explorer", "calc")


def _check_apps(apps: Sequence[str]) -> List[str]:
    if isinstance(apps, str):
        apps = [apps]
    out = list(apps)
    for a in out:
        if a not in sim.APPS:
            raise InvalidInputError(f"unknown app {a!r}; choose from {sorted(sim.APPS)}")
    return out


def _check_pos(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {v!r}")
    return v


def _runs(app_name: str, selector: Any, starts: int, steps: int, prior: str, seed: int,
          lambdas: Tuple[float, float, float] = (1.0, 1.0, 1.0), **options: Any) -> List[Dict[str, float]]:
    app = sim.make_app(app_name, seed, **options)
    out = []
    for st in app.starts(starts):
        with ScreenGraph(app=app_name, lambdas=lambdas) as g:
            out.append(explore(app, steps, selector, prior, graph=g, start=st, episode=st.index).metrics)
    return out


def _mean(ms: List[Dict[str, float]]) -> Dict[str, float]:
    return {k: float(np.mean([m[k] for m in ms])) for k in METRICS}


def compare_selectors(apps: Sequence[str] = APPS, starts: int = 50, steps: int = 50, prior: str = "heuristic",
                      seed: int = 0, c_p: float = 1.0) -> Dict[str, Dict[str, Any]]:
    """PUCT vs Greedy with the same prior: ``{app: {"puct": means, "greedy": means, "wins": float}}``.

    ``means`` are the metrics averaged over the starts; ``wins`` is the fraction of
    starts where PUCT's state AUC is above Greedy's.

    Examples
    --------
    >>> r = compare_selectors(["notepad"], starts=3, steps=10)
    >>> r["notepad"]["puct"]["state_auc"] >= r["notepad"]["greedy"]["state_auc"]
    True
    """
    _check_pos("starts", starts), _check_pos("steps", steps)
    out: Dict[str, Dict[str, Any]] = {}
    for a in _check_apps(apps):
        p = _runs(a, PUCT(c_p), starts, steps, prior, seed)
        g = _runs(a, Greedy(), starts, steps, prior, seed)
        wins = float(np.mean([x["state_auc"] > y["state_auc"] for x, y in zip(p, g)]))
        out[a] = {"puct": _mean(p), "greedy": _mean(g), "wins": wins,
                  "puct_state_auc": [x["state_auc"] for x in p], "greedy_state_auc": [y["state_auc"] for y in g]}
    return out


def ablation(apps: Sequence[str] = APPS, starts: int = 50, steps: int = 50, prior: str = "heuristic", seed: int = 0,
             timing_noise: float = 0.3) -> Dict[str, Dict[str, Dict[str, float]]]:
    """PUCT under each reward of :data:`OBJECTIVES`: ``{app: {objective: means}}``.

    Examples
    --------
    >>> r = ablation(["notepad"], starts=2, steps=5)
    >>> sorted(r["notepad"])
    ['ambiguity only', 'full', 'novelty only']
    """
    _check_pos("starts", starts), _check_pos("steps", steps)
    out: Dict[str, Dict[str, Dict[str, float]]] = {}
    for a in _check_apps(apps):
        out[a] = {name: _mean(_runs(a, PUCT(), starts, steps, prior, seed, lam, timing_noise=timing_noise))
                  for name, lam in OBJECTIVES.items()}
    return out


def _balanced_late(n: int, rate: float, rng: random.Random) -> List[bool]:
    late = round(rate * n)
    sched = [True] * late + [False] * (n - late)
    rng.shuffle(sched)
    return sched


def _named_dirty(app: sim.SimApp) -> None:
    # A saved file with unsaved edits: the next Save races its title update.
    app.act("doc", "type", "hello")
    app.act("menu.file")
    app.act("menu.file.3")  # Save As...
    app.act("dlg.saveas.name", "type", "notes.txt")
    app.act("dlg.saveas.save")
    app.act("doc", "type", "hello world")


def decomposition(trials: int = 10, seed: int = 0, conditions: Sequence[str] = ("alpha", "beta"),
                  late_rate: float = 0.4) -> Dict[str, Dict[str, Any]]:
    """Dispersion of one matched action, pooled / within / between, for two sources of randomness.

    ``"hidden clipboard"``: Edit > Paste on a blank document, the clipboard holding
    each condition's text, race off. ``"asynchronous race"``: File > Save on a named
    file with unsaved edits, the title update landing after the observation in
    ``round(late_rate · trials)`` shuffled trials of every condition. Each case runs
    ``trials`` trials per condition into one fresh graph; the outcome of a trial is
    the state reached. Returns per case the :class:`Dispersion`, the matched source
    state(s) and the successor counts.

    Examples
    --------
    >>> r = decomposition(trials=5)
    >>> r["hidden clipboard"]["dispersion"]
    Dispersion(pooled=1.0, within=0.0, between=1.0)
    """
    _check_pos("trials", trials)
    if not 0 <= late_rate <= 1:
        raise InvalidInputError(f"late_rate must lie in [0, 1], got {late_rate!r}")
    out: Dict[str, Dict[str, Any]] = {}
    rng = random.Random(f"race:{seed}")
    for case in ("hidden clipboard", "asynchronous race"):
        outcomes: List[Tuple[str, int]] = []
        sources = set()
        sigs = set()
        with ScreenGraph(app="notepad") as g:
            for cond in conditions:
                sched = _balanced_late(trials, late_rate, rng) if case == "asynchronous race" else [False] * trials
                for late in sched:
                    app = sim.make_app("notepad", seed, variant={"clipboard": cond})
                    app.reset()
                    if case == "asynchronous race":
                        _named_dirty(app)
                        scr = app.act("menu.file")
                        item = "menu.file.2"  # Save
                    else:
                        scr = app.act("menu.edit")
                        item = "menu.edit.3"  # Paste
                    app.race = "late" if late else "early"
                    s = g.observe(scr)
                    el = next(e for e in scr.elements if e.id == item)
                    sig = signature(Action("click", el), scr)
                    tr = g.record(s, sig, app.act(item))
                    sources.add(s)
                    sigs.add(sig)
                    outcomes.append((cond, tr.target))
            succ = {str(k): v for k, v in g.successors(next(iter(sources)), next(iter(sigs))).items()}
        out[case] = {"dispersion": dispersion(outcomes), "matched_sources": len(sources), "successors": succ,
                     "trials": len(outcomes)}
    return out


def _commit_trial(strategy: str, clip: str, seed: int, g: ScreenGraph) -> Tuple[Tuple[int, ...], sim.SimApp, bool]:
    """Run the pre-commit steps of a strategy; (observed states, app, reversible)."""
    app = sim.make_app("notepad", seed, variant={"clipboard": clip})
    scr = app.reset()
    app.act("doc", "type", "draft")
    scr = app.screen()
    before = g.observe(scr)
    seen = [before]
    if strategy == "probe":
        seen.append(g.observe(app.act("menu.edit")))
        seen.append(g.observe(app.act("menu.edit.3")))  # Paste reveals the clipboard in the document
        seen.append(g.observe(app.act("menu.edit")))
        seen.append(g.observe(app.act("menu.edit.0")))  # Undo
    elif strategy == "escape":
        seen.append(g.observe(app.act("menu.file")))
        seen.append(g.observe(app.act("", "key", "escape")))
    reversible = seen[-1] == before and app.hidden["text"] == "draft"
    return tuple(seen), app, reversible


def _commit(app: sim.SimApp, name: str) -> bool:
    app.act("menu.file")
    app.act("menu.file.3")  # Save As...
    app.act("dlg.saveas.name", "type", name)
    app.act("dlg.saveas.save")
    return app.hidden["file"] == f"{app.variant['clipboard']}.txt"


def probe_vs_escape(trials: int = 10, seed: int = 0,
                    conditions: Sequence[str] = ("alpha", "beta")) -> Dict[str, Dict[str, Any]]:
    """Commitment accuracy without information, after a reversible probe, after an escape.

    Each strategy runs ``trials`` calibration and ``trials`` test trials per
    condition (the hidden clipboard). The agent saves the document under the name
    it believes is on the clipboard: the condition seen most often with the same
    observed state sequence during calibration (ties to the first condition).
    Returns ``{strategy: {"accuracy", "reversible", "distinct_sequences"}}`` for
    ``"commit at once"``, ``"probe (Paste + Undo)"`` and ``"escape (File menu)"``.

    Examples
    --------
    >>> r = probe_vs_escape(trials=2)
    >>> r["probe (Paste + Undo)"]["accuracy"], r["escape (File menu)"]["accuracy"]
    (1.0, 0.5)
    """
    _check_pos("trials", trials)
    names = {"commit at once": "none", "probe (Paste + Undo)": "probe", "escape (File menu)": "escape"}
    out: Dict[str, Dict[str, Any]] = {}
    for label, strategy in names.items():
        with ScreenGraph(app="notepad") as g:
            table: Dict[Tuple[int, ...], Counter] = {}
            for clip in conditions:
                for _ in range(trials):
                    seq, _, _ = _commit_trial(strategy, clip, seed, g)
                    table.setdefault(seq, Counter())[clip] += 1
            correct = total = 0
            reversible = True
            for clip in conditions:
                for _ in range(trials):
                    seq, app, rev = _commit_trial(strategy, clip, seed, g)
                    reversible &= rev
                    counts = table.get(seq, Counter())
                    belief = max(conditions, key=lambda c: (counts[c], -list(conditions).index(c)))
                    correct += _commit(app, belief)
                    total += 1
        out[label] = {"accuracy": correct / total, "reversible": reversible, "distinct_sequences": len(table)}
    return out


def run_all(scale: str = "full", seed: int = 0) -> Dict[str, Any]:
    """Run the four studies at a scale of :data:`SCALES`; returns their results and timings."""
    if scale not in SCALES:
        raise InvalidInputError(f"scale must be one of {sorted(SCALES)}, got {scale!r}")
    cfg = SCALES[scale]
    res: Dict[str, Any] = {"scale": scale, "config": cfg, "seconds": {}}
    for key, fn in (
        ("selectors", lambda: compare_selectors(starts=cfg["starts"], steps=cfg["steps"], seed=seed)),
        ("ablation", lambda: ablation(starts=cfg["starts"], steps=cfg["steps"], seed=seed)),
        ("decomposition", lambda: decomposition(trials=cfg["trials"], seed=seed)),
        ("probe", lambda: probe_vs_escape(trials=cfg["trials"], seed=seed)),
    ):
        t0 = time.perf_counter()
        res[key] = fn()
        res["seconds"][key] = time.perf_counter() - t0
    return res


def _f(x: float, nd: int = 3) -> str:
    return f"{x:.{nd}f}"


_COLS = (("new_states", "new states", 2), ("new_edges", "new edges", 2), ("state_auc", "state AUC", 1),
         ("edge_auc", "edge AUC", 1), ("revisit_rate", "revisit", 3), ("loop_rate", "loop/stall", 3),
         ("high_u_occupancy", "high-u occ.", 3), ("net_du", "net Δu", 3))


def render_report(res: Dict[str, Any]) -> str:
    """The Markdown results document for the output of :func:`run_all`."""
    cfg = res["config"]
    L: List[str] = []
    L.append("# Exploration results (ScreenSearch on the simulated applications)")
    L.append("")
    L.append("Generated by `spatialobs.screen.studies.write_report` "
             f"(scale `{res['scale']}`: {cfg['starts']} starts × {cfg['steps']} actions per app, "
             f"{cfg['trials']} trials per condition); do not edit by hand. Regenerate with "
             "`python -m spatialobs.screen.studies docs/results/exploration.md`.")
    L.append("")
    L.append("All numbers are means over the replayable starts of `sim.make_app(name, seed=0).starts()` "
             "(start *i* is a seeded random walk of *i* mod 9 actions), one fresh in-memory graph per start, "
             "heuristic prior with the app's goal text, κ = 20, u₀ = 0.5, τ = 0.93.")
    head = "| app | selector | " + " | ".join(c[1] for c in _COLS) + " |"
    sep = "|---|---|" + "---:|" * len(_COLS)
    L += ["", "## 1. PUCT vs Greedy (same heuristic prior)", "", head, sep]
    for app, r in res["selectors"].items():
        for sel in ("puct", "greedy"):
            m = r[sel]
            L.append(f"| {app} | {'PUCT (c_p = 1)' if sel == 'puct' else 'Greedy'} | "
                     + " | ".join(_f(m[k], nd) for k, _, nd in _COLS) + " |")
    L.append("")
    L.append("Share of starts where PUCT's state AUC is above Greedy's: "
             + ", ".join(f"{a} {_f(r['wins'], 2)}" for a, r in res["selectors"].items()) + ".")
    L += ["", "## 2. Objective ablations (PUCT, timing noise 0.3)", "",
          "| app | reward | " + " | ".join(c[1] for c in _COLS) + " |", sep]
    for app, r in res["ablation"].items():
        for name, m in r.items():
            L.append(f"| {app} | {name} | " + " | ".join(_f(m[k], nd) for k, _, nd in _COLS) + " |")
    L += ["", "## 3. Dispersion decomposition (one matched action, repeated trials)", "",
          "| source of randomness | pooled | within | between | trials | successors |", "|---|---:|---:|---:|---:|---|"]
    for case, r in res["decomposition"].items():
        d: Dispersion = r["dispersion"]
        succ = ", ".join(f"s{k}: {v}" for k, v in sorted(r["successors"].items()))
        L.append(f"| {case} | {_f(d.pooled)} | {_f(d.within)} | {_f(d.between)} | {r['trials']} | {succ} |")
    L.append("")
    L.append("The paper found 1.000 / 0.000 / 1.000 (hidden clipboard variants) and 0.971 / 0.971 / 0.000 "
             "(asynchronous race).")
    L += ["", "## 4. Probe vs escape before committing", "",
          "| strategy | commitment accuracy | back in the pre-probe state | distinct observed sequences |",
          "|---|---:|---|---:|"]
    for name, r in res["probe"].items():
        L.append(f"| {name} | {_f(r['accuracy'])} | {'yes' if r['reversible'] else 'no'} | {r['distinct_sequences']} |")
    L.append("")
    L.append("The paper found that Paste + Undo probing raises commitment accuracy from 0.5 to 1.0 while File-menu "
             "navigation does not.")
    L += ["", "## Run", ""]
    secs = res["seconds"]
    L.append("Wall time per study (s): " + ", ".join(f"{k} {v:.1f}" for k, v in secs.items())
             + f"; total {sum(secs.values()):.1f}. Python {platform.python_version()} on {platform.machine()}.")
    L.append("")
    return "\n".join(L)


def write_report(path: Union[str, Path] = "docs/results/exploration.md", scale: str = "full", seed: int = 0) -> Dict[str, Any]:
    """Run the four studies (:func:`run_all`) and write the Markdown results document to ``path``.

    Returns the results. ``scale="small"`` is the quick CI-sized run.
    """
    res = run_all(scale, seed)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(render_report(res), encoding="utf-8")
    tmp.replace(p)
    return res


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m spatialobs.screen.studies [PATH] [--scale full|small] [--seed N]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m spatialobs.screen.studies", description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default="docs/results/exploration.md")
    ap.add_argument("--scale", choices=sorted(SCALES), default="full")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    res = write_report(a.path, a.scale, a.seed)
    print(f"wrote {a.path} in {sum(res['seconds'].values()):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
