"""Appendix D on a real application: one-factor sensitivity of τ, κ and u₀ (DESIGN §7, §8).

The three constants, with their defaults:

``tau`` (τ = 0.93)
    the merge threshold of the two-set Jaccard verification (:class:`~spatialobs.screen.StateIndex`);
``kappa`` (κ = 20)
    the visit count at which u(s) = ρ D + (1 − ρ) u₀ gives the evidence D and the prior u₀
    equal weight (ρ(s) = n_s / (n_s + κ));
``u0`` (u₀ = 0.5)
    the value of u(s) for a state never left (no evidence).

:func:`real_sensitivity` varies each alone around its default (the others at default)
and runs PUCT (the default setting) from matched starts of a real application, one
clean launch and one graph per (setting, start), as the selector study does. It
measures the exploration (new states, state AUC, with the spread across starts) and
the *pair F1* of the state merging against :func:`reference_key`, a labelling that
does not use the atoms: two screens are the same state when they show the same
windows, menus and dialogs with the same labels, whatever the contents of the
document and of the entry fields (see :func:`reference_key` for the exact rule and
its limits). Pair F1 compares two partitions of the same items over their pairs
(:func:`pair_f1`): a pair is *merged* by a partition when both items are in one part.

τ also gets an offline sweep (:func:`tau_sweep`): the distinct screens of the default
setting's episodes, each episode's screens re-indexed in their order under every τ of
a grid, so that the merging alone is measured on one fixed observation set. On a fixed
set the merging is nested in τ (each screen merges into its best-scoring earlier
observation whenever that score reaches τ, and that observation does not depend on
τ), so the merged pairs at a lower τ include those at a higher one; the sweep checks it.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from typing import Any, Dict, Hashable, List, Mapping, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.screen._study_parts import REAL_BUDGET, _check_pos, _make, matched_wins, summarize
from spatialobs.screen.graph import KAPPA, U0
from spatialobs.screen.model import Screen

__all__ = ["SENSITIVITY_DEFAULTS", "SENSITIVITY_VALUES", "TAU_GRID", "CONTENT_ROLES", "reference_key", "pair_f1",
           "merge_labels", "distinct_screens", "tau_sweep", "check_factors", "real_sensitivity", "render_real_sensitivity"]

#: The defaults of DESIGN §7 and §8: τ = 0.93, κ = 20, u₀ = 0.5.
SENSITIVITY_DEFAULTS: Dict[str, float] = {"tau": 0.93, "kappa": KAPPA, "u0": U0}

#: The values each factor takes in the study, the others staying at their default (the default
#: setting is run once and is every factor's middle row).
SENSITIVITY_VALUES: Dict[str, Tuple[float, ...]] = {"tau": (0.85, 0.9, 0.97), "kappa": (5.0, 80.0), "u0": (0.25, 0.75)}

#: The τ grid of the offline sweep over the default setting's screens.
TAU_GRID: Tuple[float, ...] = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.88, 0.9, 0.93, 0.95, 0.97, 0.99, 1.0)

#: Report labels of the factors.
_SYMBOL = {"tau": "τ", "kappa": "κ", "u0": "u₀"}

#: Roles whose text is content that typing and the document change, not a label of the interface.
CONTENT_ROLES = frozenset({"text", "entry", "password text", "document text", "paragraph", "terminal",
                           "textbox", "searchbox", "combobox text"})

_DIGITS = re.compile(r"\d+")


def reference_key(screen: Screen) -> Hashable:
    """The reference labelling of Appendix D: screens with equal keys are the same state.

    The key is the screen's metadata and the multiset of its elements' (role, label),
    where the label is the element's text with white space collapsed and every run of
    digits replaced by ``#``, and no label at all for the content the exploration types or
    the document holds: the text of an editable element or of an element whose role
    is a text role (:data:`CONTENT_ROLES`). Positions and sizes are left out, and so
    are the elements' states (checked, focused...), as featurization leaves them out.

    So two screens are one state when they show the same windows, menus and dialogs
    with the same titles and labels (the modified mark ``*`` of a title included),
    whatever the document says, where the caret is and how far the view is scrolled.
    Limits: a check mark toggled in a menu that changes nothing else is not a new
    state under this key; two documents whose titles differ only in a number
    ("Untitled 1", "Untitled 2") are one state; a dialog that differs from another only
    in the layout of the same labels would be merged with it. A person can check the
    key against a screenshot: it is what the accessibility tree lists, minus content.

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen
    >>> a = Screen([Element((0, 0, 99, 9), "frame", "Notes 1"), Element((0, 10, 99, 99), "text", "hi")], 100, 100)
    >>> b = Screen([Element((0, 0, 99, 9), "frame", "Notes 2"), Element((0, 20, 99, 99), "text", "bye")], 100, 100)
    >>> reference_key(a) == reference_key(b)
    True
    """
    if not isinstance(screen, Screen):
        raise InvalidInputError(f"reference_key takes a Screen, got {type(screen).__name__}")
    parts = []
    for e in screen.elements:
        label: Optional[str] = None
        if e.text is not None and not e.editable and e.role.lower() not in CONTENT_ROLES:
            label = _DIGITS.sub("#", " ".join(e.text.split()))
        parts.append((e.role, "" if label is None else "t:" + label))
    m = screen.meta
    return (m.display_mode, m.text_size, m.app, tuple(sorted(parts)))


def pair_f1(labels: Sequence[Hashable], reference: Sequence[Hashable]) -> Dict[str, float]:
    """Pair precision, recall and F1 of a partition against a reference partition of the same items.

    Item ``i`` is in part ``labels[i]`` of the partition and ``reference[i]`` of the
    reference. Over the pairs of items, *tp* counts pairs merged by both, *fp* pairs
    merged by the partition only, *fn* by the reference only; F1 = 2 tp / (2 tp + fp + fn),
    1 when neither merges any pair (the two agree on every pair).

    Returns
    -------
    dict
        ``{"tp", "fp", "fn", "precision", "recall", "f1", "items"}`` (precision and recall
        are 1 when their denominators are 0).

    Raises
    ------
    InvalidInputError
        When the two lists differ in length.

    Examples
    --------
    >>> pair_f1([0, 0, 1, 1], ["a", "a", "b", "b"])["f1"]
    1.0
    >>> r = pair_f1([0, 0, 0, 1], ["a", "a", "b", "b"])
    >>> (r["tp"], r["fp"], r["fn"], round(r["f1"], 3))
    (1, 2, 1, 0.4)
    """
    if len(labels) != len(reference):
        raise InvalidInputError(f"pair_f1 needs one label and one reference label per item; got {len(labels)} labels "
                                f"and {len(reference)} reference labels")
    tp = fp = fn = 0
    for i, j in itertools.combinations(range(len(labels)), 2):
        a, b = labels[i] == labels[j], reference[i] == reference[j]
        tp += a and b
        fp += a and not b
        fn += b and not a
    return _scores(tp, fp, fn, len(labels))


def _scores(tp: int, fp: int, fn: int, items: int) -> Dict[str, float]:
    return {"tp": tp, "fp": fp, "fn": fn, "items": items,
            "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0,
            "f1": 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 1.0}


def distinct_screens(screens: Sequence[Optional[Screen]]) -> List[Screen]:
    """The distinct screens of a sequence in first-seen order (``None`` dropped).

    Two screens are the same item when their metadata, size and elements (role, text,
    bounds, flags and id) are equal; these are the items whose pairs :func:`pair_f1` counts.
    """
    seen: Dict[Any, Screen] = {}
    for sc in screens:
        if sc is None:
            continue
        key = (sc.meta, sc.width, sc.height, tuple((e.role, e.text, e.bounds, e.editable, e.clickable, e.id)
                                                   for e in sc.elements))
        seen.setdefault(key, sc)
    return list(seen.values())


def _check_tau(tau: Any) -> float:
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not math.isfinite(tau) or not 0 < tau <= 1:
        raise InvalidInputError(f"tau must be a number in (0, 1], got {tau!r}")
    return float(tau)


def merge_labels(screens: Sequence[Screen], tau: float) -> List[int]:
    """The state of each screen when the screens are indexed in order into a new ``StateIndex(tau)``.

    Raises
    ------
    InvalidInputError
        For a τ outside (0, 1] (τ = 0 would merge every pair of screens).

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen
    >>> s = Screen([Element((0, 0, 100, 40), "button", "OK")], 400, 300)
    >>> merge_labels([s, s], 0.93)
    [0, 0]
    """
    from spatialobs.screen.state_index import StateIndex

    ix = StateIndex(tau=_check_tau(tau))
    return [ix.add(sc).state for sc in screens]


def _merged_pairs(labels: Sequence[int]) -> set:
    return {(i, j) for i, j in itertools.combinations(range(len(labels)), 2) if labels[i] == labels[j]}


def tau_sweep(episodes: Sequence[Sequence[Screen]], taus: Sequence[float] = TAU_GRID) -> Dict[str, Any]:
    """Pair F1 of the merging against :func:`reference_key` on a fixed observation set, for each τ.

    Each episode's screens (distinct, in order; see :func:`distinct_screens`) are indexed
    into a new index under each τ; pairs are counted within episodes (an episode is one
    graph). Besides the scores, the sweep checks that the merging is nested in τ: every
    pair merged at a τ is merged at every lower τ of the grid.

    Parameters
    ----------
    episodes : sequence of sequences of Screen
        The observation set, one list per episode.
    taus : sequence of float
        Thresholds in (0, 1], each once.

    Returns
    -------
    dict
        ``{"taus": [...], "rows": [{"tau", "states", "reference_states", "tp", "fp", "fn", "precision",
        "recall", "f1", "f1_per_episode": [...]}...], "items", "nested": bool, "not_nested": [(τ_low, τ_high)...]}``;
        the scores of a row are pooled over the episodes' pairs (micro), ``f1_per_episode`` has one per episode.

    Raises
    ------
    InvalidInputError
        For a τ outside (0, 1], a repeated τ, or no τ.
    """
    grid = [_check_tau(t) for t in taus]
    if not grid:
        raise InvalidInputError("tau_sweep needs at least one tau")
    if len(set(grid)) != len(grid):
        raise InvalidInputError(f"taus {list(taus)} name a tau twice")
    grid.sort()
    items = [distinct_screens(ep) for ep in episodes]
    refs = [[reference_key(sc) for sc in ep] for ep in items]
    rows, merged = [], []
    for tau in grid:
        tp = fp = fn = states = 0
        per, pairs = [], []
        for ep, ref in zip(items, refs):
            lab = merge_labels(ep, tau)
            r = pair_f1(lab, ref)
            tp, fp, fn = tp + int(r["tp"]), fp + int(r["fp"]), fn + int(r["fn"])
            states += len(set(lab))
            per.append(r["f1"])
            pairs.append(_merged_pairs(lab))
        merged.append(pairs)
        rows.append({"tau": tau, "states": states, "reference_states": sum(len(set(r)) for r in refs),
                     **_scores(tp, fp, fn, sum(len(ep) for ep in items)), "f1_per_episode": per})
    bad = [(grid[k], grid[k + 1]) for k in range(len(grid) - 1)
           if any(not hi <= lo for lo, hi in zip(merged[k], merged[k + 1]))]
    return {"taus": grid, "rows": rows, "items": sum(len(ep) for ep in items), "episodes": len(items),
            "nested": not bad, "not_nested": bad}


def check_factors(factors: Optional[Mapping[str, Sequence[float]]]) -> Dict[str, List[float]]:
    """Validate the factor values of :func:`real_sensitivity` (default :data:`SENSITIVITY_VALUES`).

    Raises
    ------
    InvalidInputError
        For a factor other than ``tau``, ``kappa`` and ``u0``; a τ outside (0, 1]; a κ that is
        not a finite number above 0; a u₀ outside [0, 1]; a value given twice or equal to the default.

    Examples
    --------
    >>> check_factors({"tau": [0.9]})
    {'tau': [0.9]}
    """
    if factors is None:
        return {k: list(v) for k, v in SENSITIVITY_VALUES.items()}
    if not isinstance(factors, Mapping):
        raise InvalidInputError(f"factors must map tau, kappa or u0 to values, got {type(factors).__name__}")
    out: Dict[str, List[float]] = {}
    for name, values in factors.items():
        if name not in SENSITIVITY_DEFAULTS:
            raise InvalidInputError(f"unknown parameter {name!r}; the sensitivity study varies tau, kappa and u0")
        vals = [values] if isinstance(values, (int, float)) else list(values)
        for v in vals:
            finite = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
            if name == "tau":
                _check_tau(v)
            elif name == "kappa" and not (finite and v > 0):
                raise InvalidInputError(f"kappa must be a finite number above 0, got {v!r}")
            elif name == "u0" and not (finite and 0 <= v <= 1):
                raise InvalidInputError(f"u0 must be a number in [0, 1], got {v!r}")
            if v == SENSITIVITY_DEFAULTS[name]:
                raise InvalidInputError(f"{name} {v!r} is the default, which the study runs once for every factor")
        if len(set(vals)) != len(vals):
            raise InvalidInputError(f"{name} values {vals} name a value twice")
        out[name] = [float(v) for v in vals]
    return out


def _settings(factors: Dict[str, List[float]]) -> List[Tuple[str, str, Dict[str, float]]]:
    # (row label, factor varied or "default", the three values)
    rows = [("default", "default", dict(SENSITIVITY_DEFAULTS))]
    for name, vals in factors.items():
        for v in vals:
            rows.append((f"{_SYMBOL[name]} = {v:g}", name, {**SENSITIVITY_DEFAULTS, name: v}))
    return rows


def real_sensitivity(app: str = "mousepad", starts: int = 10, steps: int = 50, seed: int = 0,
                     factors: Optional[Mapping[str, Sequence[float]]] = None, taus: Sequence[float] = TAU_GRID,
                     log: Any = None) -> Dict[str, Any]:
    """Appendix D on a real application: τ, κ and u₀ each varied alone, from matched starts.

    Every (setting, start) episode gets its own graph (``StateIndex(tau)``, ``kappa``,
    ``u0``) and a clean launch replaying the start's seeded prefix; PUCT (the default
    setting, heuristic prior) selects. Per setting: the exploration metrics with their
    spread across starts, and the pair F1 of the merging against :func:`reference_key`
    on the episode's distinct produced screens re-indexed in order under the setting's τ
    (pooled over starts, and per start). The default setting's screens also go through
    :func:`tau_sweep`.

    Parameters
    ----------
    app : str, default "mousepad"
        A real application of ``REAL_BUDGET`` (:mod:`spatialobs.screen.studies`).
    starts, steps : int
        Starts per setting and actions per episode.
    seed : int, default 0
        The driver's seed (the starts' prefixes) and the selector's tie streams.
    factors : mapping, optional
        Values per factor (default :data:`SENSITIVITY_VALUES`); see :func:`check_factors`.
    taus : sequence of float
        The grid of the offline τ sweep.
    log : file, optional
        Where to print one line per episode.

    Returns
    -------
    dict
        ``{"kind": "sensitivity", "app", "starts", "steps", "defaults", "rows": {label: {"factor", "values",
        "metrics", "new_states", "state_auc", "pairs", "f1_per_start", "states_per_start", "reference_states"}},
        "sweep", "faults", "launches", "seconds"}``, or ``{"kind": "sensitivity", "app", "skipped": reason}``
        when the driver is unavailable.

    Raises
    ------
    InvalidInputError
        For an unknown application, a budget below 1, or what :func:`check_factors` and
        :func:`tau_sweep` reject (all before anything is launched).

    Examples
    --------
    >>> res = real_sensitivity("mousepad", starts=1, steps=3, factors={"tau": [0.9]})  # doctest: +SKIP
    >>> list(res["rows"])  # doctest: +SKIP
    ['default', 'τ = 0.9']
    """
    from spatialobs.screen.drivers import DriverUnavailable, make_driver
    from spatialobs.screen.explore import METRICS, explore
    from spatialobs.screen.graph import ScreenGraph
    from spatialobs.screen.state_index import StateIndex

    if app not in REAL_BUDGET:
        raise InvalidInputError(f"unknown real application {app!r}; choose from {', '.join(REAL_BUDGET)}")
    _check_pos("starts", starts), _check_pos("steps", steps)
    fac = check_factors(factors)
    grid = sorted(_check_tau(t) for t in taus)
    if not grid or len(set(grid)) != len(grid):
        raise InvalidInputError(f"taus {list(taus)} must name at least one tau, each once")
    try:
        driver = make_driver(app, seed=seed)
    except DriverUnavailable as exc:
        return {"kind": "sensitivity", "app": app, "skipped": str(exc)}
    t0 = time.perf_counter()
    res: Dict[str, Any] = {"kind": "sensitivity", "app": app, "starts": starts, "steps": steps,
                           "defaults": dict(SENSITIVITY_DEFAULTS), "rows": {}}
    default_screens: List[List[Screen]] = []
    with driver:
        for label, factor, vals in _settings(fac):
            eps, per, states, refs = [], [], [], []
            tp = fp = fn = n_items = 0
            for st in driver.starts(starts):
                with ScreenGraph(app=driver.app, index=StateIndex(tau=vals["tau"]), kappa=vals["kappa"],
                                 u0=vals["u0"]) as g:
                    ep = explore(driver, steps, _make("puct", seed, st.index), "heuristic", graph=g, start=st,
                                 episode=st.index, keep_screens=True)
                eps.append(ep)
                screens = distinct_screens([s.screen for s in ep.steps if s.capture is None])
                if factor == "default":
                    default_screens.append(screens)
                lab = merge_labels(screens, vals["tau"])
                ref = [reference_key(sc) for sc in screens]
                r = pair_f1(lab, ref)
                tp, fp, fn, n_items = tp + int(r["tp"]), fp + int(r["fp"]), fn + int(r["fn"]), n_items + len(screens)
                per.append(r["f1"])
                states.append(len(set(lab)))
                refs.append(len(set(ref)))
                if log is not None:
                    print(f"{app} sensitivity {label} start {st.index}: {ep.metrics['new_states']} new states, "
                          f"pair F1 {r['f1']:.3f} over {len(screens)} screens, {ep.timing['wall']:.1f} s",
                          file=log, flush=True)
            res["rows"][label] = {
                "factor": factor, "values": vals,
                "metrics": {k: summarize([float(ep.metrics[k]) for ep in eps]) for k in METRICS},
                "new_states": [int(ep.metrics["new_states"]) for ep in eps],
                "state_auc": [float(ep.metrics["state_auc"]) for ep in eps],
                "pairs": _scores(tp, fp, fn, n_items), "f1_per_start": per,
                "states_per_start": states, "reference_states": refs,
            }
        res["faults"] = {k: int(v) for k, v in driver.faults.items() if v}
        res["launches"] = driver.launches
    res["sweep"] = tau_sweep(default_screens, grid)
    res["seconds"] = time.perf_counter() - t0
    return res


def _pm(values: Sequence[float], nd: int) -> str:
    m = summarize(values)
    return f"{m['mean']:.{nd}f} ± {m['sd']:.{nd}f}" if "sd" in m else f"{m['mean']:.{nd}f}"


def render_real_sensitivity(r: Dict[str, Any]) -> List[str]:
    """The Markdown lines of a :func:`real_sensitivity` result (a section of the real-application report)."""
    app = r.get("app", "?")
    L = [f"## Appendix D on real {app}: one-factor sensitivity of τ, κ and u₀", ""]
    if "skipped" in r:
        return L + [f"Not run: {r['skipped']}", ""]
    d = r["defaults"]
    L += [f"{r['starts']} starts x {r['steps']} actions per setting, PUCT (the default setting, heuristic prior), each "
          f"episode on its own graph from a clean launch and the same starts as the selector study; "
          f"{r['launches']} launches, {r['seconds']:.0f} s in all; faults {r['faults'] or 'none'}."
          + (f" Regenerate with `{r['command']}` (run {r['date']})." if r.get("command") else ""), "",
          f"Each factor is varied alone, the others at their default (τ = {d['tau']:g} the merge threshold of the "
          f"Jaccard verification, κ = {d['kappa']:g} in ρ(s) = n_s / (n_s + κ), u₀ = {d['u0']:g} the value of u(s) "
          "without evidence; DESIGN §7 and §8). *Pair F1* compares the merging with the reference labelling "
          "(`spatialobs.screen.sensitivity.reference_key`): two screens are one state when their accessibility trees "
          "list the same (role, label) multiset once the content is removed (the text of editable elements and of "
          "text roles, i.e. the document and the entry fields) and digit runs are masked; positions and element "
          "states are left out. Its items are an episode's distinct produced screens, re-indexed in their order "
          "under the setting's τ; pairs are counted within episodes and pooled over starts (the ± column is the "
          "per-start F1). *States* counts the merging's states among those screens, *reference* the reference's. "
          "Spreads are the standard deviation over starts.", "",
          "| setting | new states | state AUC | new edges | revisit | loop | pair precision | pair recall | pair F1 "
          "(pooled) | pair F1 per start | states | reference |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for lb, c in r["rows"].items():
        m, p = c["metrics"], c["pairs"]
        L.append(f"| {lb} | {m['new_states']['mean']:.2f} ± {m['new_states'].get('sd', 0.0):.2f} | "
                 f"{m['state_auc']['mean']:.1f} ± {m['state_auc'].get('sd', 0.0):.1f} | "
                 f"{m['new_edges']['mean']:.2f} | {m['revisit_rate']['mean']:.3f} | {m['loop_rate']['mean']:.3f} | "
                 f"{p['precision']:.3f} | {p['recall']:.3f} | {p['f1']:.3f} | {_pm(c['f1_per_start'], 3)} | "
                 f"{_pm(c['states_per_start'], 1)} | {_pm(c['reference_states'], 1)} |")
    L.append("")
    rows = r["rows"]
    if "default" in rows:
        base = rows["default"]
        for lb, c in rows.items():
            if lb == "default":
                continue
            w = matched_wins(c["new_states"], base["new_states"])
            L.append(f"- {lb} against the default (new states, matched starts): more on {w['wins']} of {w['n']} "
                     f"({w['ties']} ties, {w['losses']} fewer).")
        L.append("- New states per start: " + "; ".join(f"{lb} {c['new_states']}" for lb, c in rows.items()) + ".")
        L.append("")
    sw = r.get("sweep")
    if sw and sw.get("rows"):
        L += [f"τ alone on one fixed observation set: the default setting's {sw['items']} distinct screens "
              f"({sw['episodes']} episodes), each episode re-indexed under every τ. Merging nested in τ (every pair "
              f"merged at a τ is merged at each lower τ): {'yes' if sw['nested'] else 'no, ' + str(sw['not_nested'])}.",
              "", "| τ | states | reference states | merged pairs (tp + fp) | precision | recall | pair F1 | "
              "pair F1 per episode |", "|---|---|---|---|---|---|---|---|"]
        best = max(sw["rows"], key=lambda x: (x["f1"], x["tau"]))
        for x in sw["rows"]:
            mark = " (best)" if x is best else ""
            L.append(f"| {x['tau']:g}{mark} | {x['states']} | {x['reference_states']} | {x['tp'] + x['fp']} | "
                     f"{x['precision']:.3f} | {x['recall']:.3f} | {x['f1']:.3f} | {_pm(x['f1_per_episode'], 3)} |")
        L.append("")
    if r.get("note"):
        L += [f"**Note.** {r['note']}", ""]
    return L
