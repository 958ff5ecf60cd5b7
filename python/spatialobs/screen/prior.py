"""A learned proposal prior ``P(σ | s)`` trained on exploration traces (DESIGN §8, pluggable priors).

The paper trains a conditional diffusion model on its exploration traces. This is
the small, CPU-fast counterpart: a logistic model of *does this action reach a
new state?* (or, with ``target="leaves"``, *does it leave its state?*) over the
action's token
(:func:`~spatialobs.screen.traces.action_token`: operation, role, semantic class,
3 × 3 position bin, value class), a few crossings of those fields, and whether the
action's label shares a word with the task text. An action's prior weight is
``max(floor, p̂(positive | token))``; :func:`~spatialobs.screen.select.prior_weights`
normalizes the weights.

Why this target: in every application most candidate actions are no-ops from most
screens (a spreadsheet's 60 cells, title-bar buttons, typing what is already
there) or lead back to the same few places, and a one-step selector can only learn
that per state, by trying. Tokens generalize across states, starts and
applications, so the prior learns it once.

Traces are JSON Lines, one record per executed step, written by
:func:`save_traces` (``spatialobs explore --traces FILE``) from any environment,
simulated or real: the episode and step number, the action as executed (op, target
role / text / bounds, typed value) and its signature, the screen size, the task
text, and the outcome (source and target states, novelty, reward, ``u`` of both
states, capture and fault flags, and the observations the step was taken on and
produced, which join to the graph store's evidence and screenshots). The model is saved as JSON (no pickle), versioned and checked
on load; ``spatialobs train-prior TRACES --out FILE`` trains one, and
``prior="learned:FILE"`` (``--prior learned:FILE``) uses it.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.features import normalize_text, tokens
from spatialobs.screen.model import Screen
from spatialobs.screen.traces import position_bin, semantic_class, value_class

__all__ = ["CorruptPriorError", "LearnedPrior", "save_traces", "load_traces", "trace_records", "train_prior",
           "load_prior", "load_prior_cached"]

TRACES_FORMAT = "spatialobs-traces"
PRIOR_FORMAT = "spatialobs-learned-prior"
VERSION = 1


class CorruptPriorError(InvalidInputError):
    """A learned-prior or traces file is unreadable, of another format or version, or holds bad values."""


# -- traces ---------------------------------------------------------------------------

_STEP_KEYS = ("app", "goal", "op", "role", "text", "value", "bounds", "width", "height", "source", "target",
              "state_novel", "edge_novel", "capture")


def trace_records(episodes: Iterable[Any]) -> List[Dict[str, Any]]:
    """One JSON-ready record per step of the episodes (see the module docstring).

    Examples
    --------
    >>> from spatialobs.screen import explore, sim
    >>> r = trace_records([explore(sim.make_app("notepad"), steps=2)])
    >>> len(r), sorted(r[0])[:5]
    (2, ['app', 'bounds', 'capture', 'edge_novel', 'episode'])
    """
    out: List[Dict[str, Any]] = []
    for ep in episodes:
        for st in ep.steps:
            a: Action = st.action
            t = a.target
            out.append({
                "app": ep.app, "goal": ep.goal, "episode": int(getattr(ep, "episode", 0)), "step": int(st.t),
                "signature": st.signature, "op": a.op,
                "role": t.role if t is not None else "", "text": (t.text or "") if t is not None else "",
                "value": a.value, "bounds": list(t.bounds) if t is not None else None,
                "width": st.width, "height": st.height, "source": st.source, "target": st.target,
                "state_novel": bool(st.state_novel), "edge_novel": bool(st.edge_novel), "reward": float(st.reward),
                "u_source": float(st.u_source), "u_target": float(st.u_target), "capture": st.capture,
                "fault": bool(st.capture and st.capture.startswith("fault:")),
                "source_observation": int(getattr(st, "source_observation", 0)),
                "observation": int(getattr(st, "observation", 0)),
            })
    return out


def save_traces(episodes: Iterable[Any], path: Union[str, Path], *, append: bool = False) -> int:
    """Write the episodes' steps as a traces file (JSON Lines with a header line); returns the steps written.

    ``append`` adds to an existing file (its header is kept).
    """
    recs = trace_records(episodes)
    p = Path(path)
    new = not (append and p.exists() and p.stat().st_size > 0)
    with open(p, "a" if append else "w", encoding="utf-8") as f:
        if new:
            f.write(json.dumps({"format": TRACES_FORMAT, "version": VERSION}) + "\n")
        for r in recs:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    return len(recs)


def load_traces(path: Union[str, Path]) -> List[Dict[str, Any]]:
    """The step records of a traces file; :class:`CorruptPriorError` names the bad line.

    Examples
    --------
    >>> import tempfile, os
    >>> from spatialobs.screen import explore, sim
    >>> d = tempfile.mkdtemp()
    >>> save_traces([explore(sim.make_app("calc"), steps=3)], os.path.join(d, "t.jsonl"))
    3
    >>> len(load_traces(os.path.join(d, "t.jsonl")))
    3
    """
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise CorruptPriorError(f"cannot read traces {str(p)!r}: {e}") from None
    if not lines:
        raise CorruptPriorError(f"{str(p)!r} is empty, not a traces file")
    out: List[Dict[str, Any]] = []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorruptPriorError(f"{p.name} line {i}: not JSON ({e.msg})") from None
        if i == 1:
            if not isinstance(rec, dict) or rec.get("format") != TRACES_FORMAT:
                raise CorruptPriorError(f"{p.name} is not a traces file (its first line has no "
                                        f"'format': {TRACES_FORMAT!r})")
            if rec.get("version") != VERSION:
                raise CorruptPriorError(f"{p.name} is traces version {rec.get('version')!r}; this spatialobs reads "
                                        f"version {VERSION}")
            continue
        if not isinstance(rec, dict) or any(k not in rec for k in _STEP_KEYS):
            missing = [k for k in _STEP_KEYS if not isinstance(rec, dict) or k not in rec]
            raise CorruptPriorError(f"{p.name} line {i}: a step record needs {missing}")
        if rec["op"] != "key" and (not isinstance(rec["bounds"], list) or len(rec["bounds"]) != 4):
            raise CorruptPriorError(f"{p.name} line {i}: bounds must be [x0, y0, x1, y1]")
        out.append(rec)
    return out


# -- features -------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _fields(op: str, role: str, text: str, value: Optional[str], pos: str) -> Tuple[str, ...]:
    if op == "key":
        sem = semantic_class("", value, "key")
        r, v, pos = "", "none", "none"
    else:
        r = normalize_text(role)
        sem = semantic_class(role, text, op)
        v = value_class(value) if op == "type" else "none"
    return (f"op={op}", f"role={r}", f"sem={sem}", f"pos={pos}", f"val={v}", f"op,sem={op},{sem}",
            f"role,sem={r},{sem}", f"sem,pos={sem},{pos}", f"role,pos={r},{pos}", f"op,val={op},{v}",
            f"sem,val={sem},{v}")


def _pos(bounds: Sequence[float], width: float, height: float) -> str:
    return position_bin(bounds, width, height) if width > 0 and height > 0 else "none"


def _goal_hit(goal_tokens: frozenset, op: str, text: str, role: str, value: Optional[str]) -> bool:
    if not goal_tokens:
        return False
    lab = tokens(value) if op == "key" else (tokens(text) or tokens(role))
    if op == "type":
        lab = lab | tokens(value)
    return bool(goal_tokens & lab)


def _features(op: str, role: str, text: str, value: Optional[str], pos: str, goal_hit: bool) -> Tuple[str, ...]:
    return ("bias",) + _fields(op, role, text, value, pos) + (("goal=1",) if goal_hit else ())


# -- the model ------------------------------------------------------------------------


@dataclass
class LearnedPrior:
    """A logistic model of whether an action leaves its state; callable as a prior.

    ``weights`` maps feature names to coefficients (unknown features weigh 0);
    an action's prior weight is ``max(floor, sigmoid(Σ weights))``.

    Examples
    --------
    >>> from spatialobs.screen import Element
    >>> m = LearnedPrior({"bias": 0.0, "sem=menu": 2.0}, floor=0.05)
    >>> acts = [Action("click", Element((0, 30, 40, 50), "MenuItem", "File", clickable=True)),
    ...         Action("click", Element((0, 0, 40, 20), "Button", "Close", clickable=True))]
    >>> [round(w, 3) for w in m(Screen([], 1280, 800), acts, "")]
    [0.881, 0.5]
    """

    weights: Dict[str, float]
    floor: float = 0.02
    meta: Optional[Dict[str, Any]] = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.weights, dict):
            raise InvalidInputError(f"weights must be a dict of feature -> number, got {type(self.weights).__name__}")
        for k, v in self.weights.items():
            if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InvalidInputError(f"weight {k!r} must be a finite number, got {v!r}")
        if isinstance(self.floor, bool) or not isinstance(self.floor, (int, float)) or not 0 < self.floor <= 1:
            raise InvalidInputError(f"floor must lie in (0, 1], got {self.floor!r}")

    def probability(self, features: Iterable[str]) -> float:
        """``sigmoid(Σ weights[f])`` over the given feature names."""
        z = sum(self.weights.get(f, 0.0) for f in features)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def __call__(self, screen: Screen, actions: Sequence[Action], goal: str = "") -> List[float]:
        w = float(getattr(screen, "width", 0) or 0)
        h = float(getattr(screen, "height", 0) or 0)
        cache = self.__dict__.setdefault("_memo", {})
        if len(cache) > 100_000:
            cache.clear()
        g: Optional[frozenset] = None
        out = []
        for a in actions:
            t = a.target
            key = (a.op, a.value, goal, w, h) if t is None else (a.op, a.value, goal, w, h, t.role, t.text, t.bounds)
            p = cache.get(key)
            if p is None:
                if g is None:
                    g = tokens(goal)
                role = t.role if t is not None else ""
                text = (t.text or "") if t is not None else ""
                pos = _pos(t.bounds, w, h) if t is not None else "none"
                f = _features(a.op, role, text, a.value, pos, _goal_hit(g, a.op, text, role, a.value))
                p = cache[key] = max(self.floor, self.probability(f))
            out.append(p)
        return out

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document :meth:`save` writes."""
        return {"format": PRIOR_FORMAT, "version": VERSION, "model": "logistic", "floor": self.floor, "weights": dict(sorted(self.weights.items())), "meta": self.meta or {}}

    def save(self, path: Union[str, Path]) -> None:
        """Write the model as JSON, atomically (a crash mid-save leaves the previous file intact)."""
        p = Path(path)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, p)

    @classmethod
    def from_dict(cls, doc: Any, where: str = "the document") -> "LearnedPrior":
        """A model from :meth:`to_dict`'s document; :class:`CorruptPriorError` says what is wrong."""
        if not isinstance(doc, dict) or doc.get("format") != PRIOR_FORMAT:
            raise CorruptPriorError(f"{where} is not a learned prior (no 'format': {PRIOR_FORMAT!r})")
        if doc.get("version") != VERSION:
            raise CorruptPriorError(f"{where} is learned-prior version {doc.get('version')!r}; this spatialobs "
                                    f"reads version {VERSION}")
        if doc.get("model") != "logistic":
            raise CorruptPriorError(f"{where}: unknown model {doc.get('model')!r}")
        try:
            return cls(doc.get("weights"), doc.get("floor"), doc.get("meta") or {})  # type: ignore[arg-type]
        except InvalidInputError as e:
            raise CorruptPriorError(f"{where}: {e}") from None

    @classmethod
    def load(cls, path: Union[str, Path]) -> "LearnedPrior":
        """Read a model written by :meth:`save`."""
        p = Path(path)
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:
            raise CorruptPriorError(f"cannot read learned prior {str(p)!r}: {e}") from None
        except json.JSONDecodeError as e:
            raise CorruptPriorError(f"{p.name} is not JSON ({e.msg} at line {e.lineno}); a learned prior is "
                                    f"written by `spatialobs train-prior`") from None
        return cls.from_dict(doc, p.name)


def load_prior(path: Union[str, Path]) -> LearnedPrior:
    """:meth:`LearnedPrior.load`."""
    return LearnedPrior.load(path)


_CACHE: Dict[Tuple[str, int, int], LearnedPrior] = {}


def load_prior_cached(path: Union[str, Path]) -> LearnedPrior:
    """:func:`load_prior`, reusing the model while the file's modification time and size are unchanged."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as e:
        raise CorruptPriorError(f"cannot read learned prior {str(p)!r}: {e.strerror}") from None
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        if len(_CACHE) > 32:
            _CACHE.clear()
        _CACHE[key] = LearnedPrior.load(p)
    return _CACHE[key]


def _record_features(r: Mapping[str, Any]) -> Tuple[str, ...]:
    op = str(r["op"])
    role, text, value = str(r.get("role") or ""), str(r.get("text") or ""), r.get("value")
    pos = "none" if op == "key" or r.get("bounds") is None else _pos(r["bounds"], float(r["width"]),
                                                                      float(r["height"]))
    return _features(op, role, text, value, pos, _goal_hit(tokens(r.get("goal") or ""), op, text, role, value))


def train_prior(records: Sequence[Mapping[str, Any]], *, l2: float = 1.0, floor: float = 0.02,
                iterations: int = 25, target: str = "novel") -> LearnedPrior:
    """Fit the logistic model to trace records (from :func:`load_traces` or :func:`trace_records`).

    With ``target="novel"`` a step is a positive example when it reached a state new
    to its graph; with ``"leaves"`` when it left its state (``target != source``, a
    capture counts as leaving). Identical feature sets are pooled; the fit is
    Newton's method on the L2-penalized log likelihood (the bias unpenalized),
    deterministic for the same records in any order.

    Parameters
    ----------
    records : sequence of step records
    l2 : float, default 1.0
        Ridge penalty on every coefficient but the bias.
    floor : float, default 0.02
        Smallest prior weight (no action is ruled out).
    iterations : int, default 25
        Newton steps (it converges in far fewer on trace data).
    target : "novel" or "leaves", default "novel"
        What a positive example is (see above).

    Examples
    --------
    >>> recs = [{"op": "click", "role": "MenuItem", "text": "File", "value": None, "bounds": [0, 30, 40, 50],
    ...          "width": 1280, "height": 800, "goal": "", "source": 0, "target": 1, "capture": None,
    ...          "state_novel": True}] * 8
    >>> recs += [{"op": "click", "role": "DataItem", "text": "7", "value": None, "bounds": [500, 400, 600, 420],
    ...           "width": 1280, "height": 800, "goal": "", "source": 0, "target": 0, "capture": None,
    ...           "state_novel": False}] * 8
    >>> m = train_prior(recs)
    >>> p_menu, p_cell = m(Screen([], 1280, 800), [Action("click", _el(r)) for r in (recs[0], recs[-1])])
    >>> p_menu > 0.8 > 0.2 > p_cell
    True
    """
    if not records:
        raise InvalidInputError("train_prior needs at least one step record")
    if target not in ("novel", "leaves"):
        raise InvalidInputError(f"target must be 'novel' or 'leaves', got {target!r}")
    if isinstance(l2, bool) or not isinstance(l2, (int, float)) or not math.isfinite(l2) or l2 < 0:
        raise InvalidInputError(f"l2 must be a finite number >= 0, got {l2!r}")
    groups: Dict[Tuple[str, ...], List[float]] = {}
    for i, r in enumerate(records):
        try:
            f = _record_features(r)
            if target == "novel":
                left = bool(r["state_novel"])
            else:
                left = r.get("capture") is not None or r["target"] != r["source"]
        except (KeyError, TypeError, ValueError) as e:
            raise InvalidInputError(f"step record {i} is malformed ({type(e).__name__}: {e})") from None
        g = groups.setdefault(tuple(sorted(f)), [0.0, 0.0])
        g[0] += float(left)
        g[1] += 1.0
    keys = sorted(groups)
    names = sorted({f for k in keys for f in k})
    col = {f: j for j, f in enumerate(names)}
    X = np.zeros((len(keys), len(names)))
    for i, k in enumerate(keys):
        X[i, [col[f] for f in k]] = 1.0
    pos = np.array([groups[k][0] for k in keys])
    tot = np.array([groups[k][1] for k in keys])
    pen = np.full(len(names), float(l2))
    pen[col["bias"]] = 1e-6
    w = np.zeros(len(names))
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ w, -60, 60)))
        grad = X.T @ (pos - tot * p) - pen * w
        hess = (X * (tot * p * (1 - p))[:, None]).T @ X + np.diag(pen)
        step = np.linalg.solve(hess, grad)
        w += step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    meta = {"steps": int(tot.sum()), "positive": int(pos.sum()), "target": target, "apps": sorted({str(r.get("app", "")) for r in records}),
            "l2": float(l2)}
    return LearnedPrior({f: round(float(w[col[f]]), 6) for f in names}, float(floor), meta)


def _el(r: Mapping[str, Any]) -> Any:
    # doctest helper: the target element of a step record
    from spatialobs.screen.model import Element

    return Element(tuple(r["bounds"]), r["role"], r["text"] or None, False, True)
