"""Table 11 on a real application: PUCT with the uniform, heuristic and learned priors on held-out starts.

The learned priors are trained on graph stores of earlier explorations of the same
application (:func:`~spatialobs.screen.training.data.episodes_from_store`), whose
starts are replays of *other* seeds' prefixes:

* ``learned``: the logistic proposal prior of :mod:`spatialobs.screen.prior`
  (``train-prior``'s model: does an action reach a new state?), trained on every
  step of those stores;
* ``policy``: the screen-conditioned policy of
  :mod:`spatialobs.screen.training.policy`, scoring each action by the probability
  of its token given the screen, the task text (the application's goal) and the
  first-step history.

Each held-out start is a clean launch replaying a prefix of one to four seeded
actions drawn with a seed no training store used (starts with an empty prefix,
identical to a training start's clean launch, are left out). Every (prior, start)
episode gets its own graph; the columns are Table 11's: new states, state AUC, new
edges, edge AUC, revisit rate and loop/stall rate, as mean ± standard deviation
over the starts.

Examples
--------
>>> COLUMNS[0], len(COLUMNS)
(('new_states', 'states'), 6)
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO, Union

from spatialobs._errors import InvalidInputError
from spatialobs.screen.graph import ScreenGraph
from spatialobs.screen.explore import explore
from spatialobs.screen.prior import trace_records, train_prior
from spatialobs.screen.select import PUCT
from spatialobs.screen.training.data import episodes_from_store

__all__ = ["COLUMNS", "PAPER_NOTE", "held_out_starts", "real_prior_study", "render_real_priors"]

#: Table 11's columns: metric key and heading.
COLUMNS = (("new_states", "states"), ("state_auc", "state AUC"), ("new_edges", "edges"), ("edge_auc", "edge AUC"),
           ("revisit_rate", "revisit"), ("loop_rate", "loop/stall"))

PAPER_NOTE = ("The paper's Table 11 has the same columns for its own applications, starts and budgets (its learned "
              "prior is a diffusion model trained on its own traces); its values are not comparable with a handful "
              "of 60-action Mousepad episodes, and the project does not restate them here.")


def held_out_starts(driver: Any, n: int) -> List[Any]:
    """The first ``n`` of the driver's starts whose replayed prefix is not empty."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidInputError(f"n must be a positive integer, got {n!r}")
    out: List[Any] = []
    k = n
    while len(out) < n:
        k *= 2
        out = [s for s in driver.starts(k) if getattr(s, "depth", 1) > 0][:n]
    return out


def real_prior_study(app: str, stores: Sequence[Union[str, Path]], policy: Any, *, starts: int = 6,
                     steps: int = 60, seed: int = 9, log: Optional[TextIO] = None) -> Dict[str, Any]:
    """Run PUCT with each prior from held-out starts of a real application (see the module docstring).

    Parameters
    ----------
    app : str
        A real application's name (``"mousepad"``; a simulator's name works too).
    stores : sequence of paths
        Graph stores of earlier explorations of ``app`` (the learned priors' training data).
    policy : PolicyModel or None
        The policy prior (:mod:`spatialobs.screen.training.policy`); None leaves its row out.
    starts, steps : int
        Held-out starts and actions per episode.
    seed : int, default 9
        The driver seed of the held-out starts (the training stores' must differ).
    log : file, optional
        Where to print one line per episode.

    Returns
    -------
    dict
        ``{"priors": {name: {metric: [per-start values]}}, "train_steps", "starts", "steps", "seed", "seconds",
        "faults"}``.
    """
    from spatialobs.screen.drivers import make_driver

    eps = []
    for p in stores:
        got, _ = episodes_from_store(p)
        eps += [e for e in got if e.app == app]
    records = trace_records(eps)
    if not records:
        raise InvalidInputError(f"the stores hold no steps of {app!r}")
    learned = train_prior(records)
    priors: List[Any] = [("uniform", "uniform"), ("heuristic", "heuristic"), ("learned", learned)]
    if policy is not None:
        priors.append(("policy", policy))
    out: Dict[str, Any] = {"priors": {}, "train_steps": len(records), "starts": starts, "steps": steps, "seed": seed}
    t0 = time.perf_counter()
    driver = make_driver(app, seed=seed)
    with driver:
        chosen = held_out_starts(driver, starts)
        for name, pr in priors:
            runs: Dict[str, List[float]] = {k: [] for k, _ in COLUMNS}
            for st in chosen:
                with ScreenGraph(app=driver.app) as g:
                    ep = explore(driver, steps, PUCT(seed=seed * 100_003 + st.index), pr, graph=g, start=st,
                                 episode=st.index)
                for k, _ in COLUMNS:
                    runs[k].append(float(ep.metrics[k]))
                if log is not None:
                    print(f"{app} {name} start {st.index}: {ep.metrics['new_states']} new states",
                          file=log, flush=True)
            out["priors"][name] = runs
        out["faults"] = {k: int(v) for k, v in driver.faults.items() if v}
    out["seconds"] = time.perf_counter() - t0
    return out


def _ms(v: Sequence[float], nd: int) -> str:
    if len(v) < 2:
        return f"{v[0]:.{nd}f}" if v else "–"
    return f"{statistics.mean(v):.{nd}f} ± {statistics.stdev(v):.{nd}f}"


def render_real_priors(res: Dict[str, Any], app: str) -> str:
    """The Markdown section of :func:`real_prior_study`'s result."""
    L = [f"## Table 11 on real {app.capitalize()}: PUCT with each prior on held-out starts", "",
         f"{res['starts']} held-out starts (driver seed {res['seed']}, prefixes of one to four seeded actions), "
         f"{res['steps']} actions each, a fresh graph per episode; the learned priors were trained on "
         f"{res['train_steps']:,} recorded steps of the stores above (other seeds' starts). Mean ± standard "
         f"deviation over the starts; {res['seconds'] / 60:.1f} minutes in all"
         + (f", driver faults {res['faults']}" if res.get("faults") else "") + ".", "",
         "| prior | " + " | ".join(h for _, h in COLUMNS) + " |", "|---|" + "---:|" * len(COLUMNS)]
    for name, runs in res["priors"].items():
        L.append(f"| {name} | " + " | ".join(_ms(runs[k], 3 if k.endswith("rate") else 1) for k, _ in COLUMNS) + " |")
    pri = res["priors"]
    if "heuristic" in pri and pri["heuristic"]["state_auc"]:
        base = pri["heuristic"]["state_auc"]
        ratios = [f"{name} {statistics.mean(pri[name]['state_auc']) / max(statistics.mean(base), 1e-9):.2f}×"
                  for name in pri if name != "heuristic"]
        L += ["", "Mean state AUC against the heuristic prior's: " + ", ".join(ratios) + ". With this few starts "
              "the standard deviations overlap, so the table does not establish an ordering of the priors."]
    L += ["", PAPER_NOTE, ""]
    return "\n".join(L)

