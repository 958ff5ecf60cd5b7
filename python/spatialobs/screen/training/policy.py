"""A screen-conditioned policy: the next action's slots from the task, the screen and the last action.

The model predicts the five slots of the next action's token (G.3:
:func:`~spatialobs.screen.traces.action_token`: operation, target role, semantic
class, 3 × 3 position bin, value class) from three blocks of hashed features:

* **task**: the task text's words and word pairs;
* **screen**: every element's canonical role, semantic class, position bin and
  text words, and their crossings, and, for the elements whose label shares a word
  with the task, the same fields marked as *matched* (the screen block is therefore
  a function of the screen and the task: shuffling screens changes it);
* **history**: the previous action's slots (teacher-forced: the recorded one) and
  the step's place in its window.

One hidden layer of ReLU units (96 by default) feeds five softmax heads. Training
is Adam on the heads' summed cross-entropy; with counterfactual pairs it adds, for
each pair of same-task windows whose first actions differ, a margin term per
differing slot that makes each screen prefer its own action's value over the
other's: ``softplus(−(z_a[y_a] − z_a[y_b]))`` and the same for ``b``.

Why numpy rather than PyTorch: the model is a few hundred thousand weights trained
on at most tens of thousands of rows; numpy trains it on one CPU core in seconds to
minutes, is already a dependency, and keeps inference a pair of small matrix
products (no framework start-up, no extra wheel of hundreds of megabytes for
users who only want the prior).

Saved as ``.npz`` without pickle (``allow_pickle=False`` on load): the weight arrays
and a ``header`` array holding JSON (format, version, dimensions, the slot
vocabularies, training metadata). :meth:`PolicyModel.load` checks all of it;
anything wrong raises :class:`CorruptPolicyError` with one line saying what.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action
from spatialobs.screen.features import normalize_text
from spatialobs.screen.model import Screen
from spatialobs.screen.traces import ActionToken, action_token, position_bin, semantic_class
from spatialobs.screen.training.data import Dataset, canonical_action, canonical_role

__all__ = ["SLOTS", "CorruptPolicyError", "Example", "FeatureSpec", "PolicyModel", "examples", "featurize_rows",
           "train_policy", "load_policy"]

POLICY_FORMAT = "spatialobs-policy"
VERSION = 1
SLOTS = ("op", "role", "semantic", "position", "value")
UNK = "<unk>"
#: Share of the uniform prior mixed into the policy's weights when it serves as a proposal prior.
PRIOR_MIX = 0.1
_STOP = frozenset("a an the to in on of with by it this via for from is be what there and or use".split())
_WORD = re.compile(r"[a-z0-9]+")


class CorruptPolicyError(InvalidInputError):
    """A policy file is unreadable, truncated, of another format or version, or holds bad values."""


@dataclass(frozen=True)
class FeatureSpec:
    """Sizes of the hashed feature blocks: task, screen, history.

    Examples
    --------
    >>> FeatureSpec().total
    3200
    """

    task: int = 1024
    screen: int = 2048
    history: int = 128

    @property
    def total(self) -> int:
        return self.task + self.screen + self.history


@dataclass(frozen=True)
class Example:
    """One step to predict: its task, source screen, previous token (None first) and token."""

    window: int
    k: int
    task: str
    screen: Screen
    screen_id: int
    prev: Optional[ActionToken]
    token: ActionToken
    source_state: Any = None


def _h(s: str, n: int) -> int:
    return zlib.crc32(s.encode("utf-8")) % n


def _words(text: str) -> Tuple[str, ...]:
    return tuple(w for w in _WORD.findall(normalize_text(text)) if w not in _STOP)


@lru_cache(maxsize=8192)
def _task_feats(task: str, n: int) -> Tuple[Tuple[int, ...], frozenset]:
    ws = _words(task)
    feats = [f"w={w}" for w in ws] + [f"b={a}_{b}" for a, b in zip(ws, ws[1:])] + ["bias"]
    return tuple(_h(f, n) for f in feats), frozenset(ws)


@lru_cache(maxsize=65536)
def _element_fields(role: str, text: Optional[str], pos: str) -> Tuple[Tuple[str, ...], frozenset]:
    r = canonical_role(role)
    sem = semantic_class(r, text)
    ws = frozenset(_words(text or ""))
    base = (f"r={r}", f"s={sem}", f"p={pos}", f"r,p={r},{pos}", f"s,p={sem},{pos}", f"r,s={r},{sem}")
    return base + tuple(f"t={w}" for w in ws), ws


def _screen_feats(screen: Screen, task_words: frozenset, n: int) -> Dict[int, float]:
    counts: Dict[int, float] = {}
    w, h = float(screen.width) or 1.0, float(screen.height) or 1.0
    for e in screen.elements:
        pos = position_bin(e.bounds, w, h)
        fields, ws = _element_fields(e.role, e.text, pos)
        for f in fields:
            j = _h(f, n)
            counts[j] = counts.get(j, 0.0) + 1.0
        if ws & task_words:
            for f in fields[:6]:
                j = _h("m|" + f, n)
                counts[j] = counts.get(j, 0.0) + 1.0
    return counts


def _history_feats(prev: Optional[ActionToken], k: int, n: int) -> Tuple[int, ...]:
    if prev is None:
        feats = ["prev=none"]
    else:
        feats = [f"prev_{s}={getattr(prev, s)}" for s in SLOTS] + [f"prev_op,sem={prev.op},{prev.semantic}"]
    feats.append(f"k={k}")
    return tuple(_h(f, n) for f in feats)


def featurize_rows(rows: Sequence[Tuple[str, Screen, Optional[ActionToken], int]], spec: FeatureSpec) -> np.ndarray:
    """Feature rows ``(n, spec.total)`` float32 for ``(task, screen, previous token, k)`` tuples.

    Examples
    --------
    >>> from spatialobs.screen.model import Element
    >>> s = Screen([Element((0, 0, 40, 20), "push button", "OK", clickable=True)], 640, 480)
    >>> X = featurize_rows([("press ok", s, None, 0)], FeatureSpec())
    >>> X.shape, bool(X[0, :1024].any() and X[0, 1024:3072].any() and X[0, 3072:].any())
    ((1, 3200), True)
    """
    X = np.zeros((len(rows), spec.total), dtype=np.float32)
    o_s, o_h = spec.task, spec.task + spec.screen
    for i, (task, screen, prev, k) in enumerate(rows):
        tf, tw = _task_feats(task, spec.task)
        X[i, list(tf)] = 1.0
        for j, c in _screen_feats(screen, tw, spec.screen).items():
            X[i, o_s + j] = math.log1p(c)
        X[i, [o_h + j for j in _history_feats(prev, k, spec.history)]] = 1.0
    return X


def examples(ds: Dataset, split: str) -> List[Example]:
    """The steps of a split's windows, teacher-forced (each step's previous token is the recorded one)."""
    out: List[Example] = []
    for w in ds.split(split):
        for k, (s, tok, sid) in enumerate(zip(w.steps, w.tokens, w.screens)):
            out.append(Example(w.id, k, w.task, ds.screens[sid], sid, w.tokens[k - 1] if k else None, tok, s.source))
    return out


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _log_softmax(z: np.ndarray) -> np.ndarray:
    m = z.max(axis=1, keepdims=True)
    e = z - m
    return e - np.log(np.exp(e).sum(axis=1, keepdims=True))


@dataclass
class PolicyModel:
    """The trained policy: weights, slot vocabularies and feature sizes (see the module docstring)."""

    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    vocab: Dict[str, List[str]]
    spec: FeatureSpec = field(default_factory=FeatureSpec)
    meta: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._check()
        self._offsets = np.cumsum([0] + [len(self.vocab[s]) for s in SLOTS])
        self._index = {s: {v: i for i, v in enumerate(self.vocab[s])} for s in SLOTS}

    def _check(self) -> None:
        if not isinstance(self.vocab, dict) or any(
                s not in self.vocab or not isinstance(self.vocab[s], list) or not self.vocab[s]
                or not all(isinstance(v, str) for v in self.vocab[s]) for s in SLOTS):
            raise InvalidInputError(f"vocab must map each of {SLOTS} to a non-empty list of strings")
        n_out = sum(len(self.vocab[s]) for s in SLOTS)
        hidden = self.b1.shape[0] if self.b1.ndim == 1 else -1
        want = {"W1": (self.spec.total, hidden), "b1": (hidden,), "W2": (hidden, n_out), "b2": (n_out,)}
        for name, shape in want.items():
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.shape != shape or hidden < 1:
                raise InvalidInputError(f"{name} must have shape {shape}, got "
                                        f"{getattr(a, 'shape', type(a).__name__)}")
            if not np.all(np.isfinite(a)):
                raise InvalidInputError(f"{name} holds NaN or infinite values")

    # -- inference ---------------------------------------------------------------------

    def log_probs(self, X: np.ndarray) -> List[np.ndarray]:
        """Per-slot log-probabilities ``[(n, |vocab[slot]|)]`` of feature rows from :func:`featurize_rows`."""
        z = _relu(X @ self.W1 + self.b1) @ self.W2 + self.b2
        o = self._offsets
        return [_log_softmax(z[:, o[i]:o[i + 1]]) for i in range(len(SLOTS))]

    def predict(self, X: np.ndarray) -> List[Tuple[str, ...]]:
        """The most probable value of every slot, for each feature row."""
        lp = self.log_probs(X)
        idx = [a.argmax(axis=1) for a in lp]
        return [tuple(self.vocab[s][int(idx[j][i])] for j, s in enumerate(SLOTS)) for i in range(X.shape[0])]

    def slot_indices(self, tok: ActionToken) -> Tuple[int, ...]:
        """The vocabulary index of each slot of a token (unknown values: ``<unk>``)."""
        return tuple(self._index[s].get(getattr(tok, s), 0) for s in SLOTS)

    def score_actions(self, screen: Screen, actions: Sequence[Action], task: str = "",
                      prev: Optional[ActionToken] = None, k: int = 0) -> np.ndarray:
        """Log-probability of each action's token (the sum over its slots) on ``screen`` for ``task``.

        One forward pass for the screen, then one lookup per action.
        """
        X = featurize_rows([(task, screen, prev, k)], self.spec)
        lp = [a[0] for a in self.log_probs(X)]
        w, h = float(screen.width) or 1.0, float(screen.height) or 1.0
        out = np.empty(len(actions))
        for i, a in enumerate(actions):
            idx = self.slot_indices(_token(a, w, h))
            out[i] = sum(float(lp[j][idx[j]]) for j in range(len(SLOTS)))
        return out

    def __call__(self, screen: Screen, actions: Sequence[Action], goal: str = "") -> List[float]:
        """Prior weights (normalized) of the actions: a proposal prior for :func:`~spatialobs.screen.explore`.

        The policy's token probabilities, normalized over the screen's actions and mixed
        with the uniform prior (:data:`PRIOR_MIX` of it), so that no action is ruled out.
        """
        if not actions:
            return []
        s = self.score_actions(screen, actions, goal)
        p = np.exp(s - s.max())
        p = (1.0 - PRIOR_MIX) * p / p.sum() + PRIOR_MIX / len(p)
        return [float(x) for x in p]

    # -- persistence -------------------------------------------------------------------

    def header(self) -> Dict[str, Any]:
        """The JSON header :meth:`save` writes."""
        return {"format": POLICY_FORMAT, "version": VERSION, "slots": list(SLOTS), "vocab": self.vocab,
                "spec": {"task": self.spec.task, "screen": self.spec.screen, "history": self.spec.history},
                "hidden": int(self.b1.shape[0]), "meta": self.meta}

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the model as ``.npz`` with a JSON header, atomically (no pickle)."""
        p = Path(path)
        tmp = p.with_name(p.name + ".tmp")
        head = np.frombuffer(json.dumps(self.header(), sort_keys=True).encode("utf-8"), dtype=np.uint8)
        with open(tmp, "wb") as f:
            np.savez(f, header=head, W1=self.W1.astype(np.float32), b1=self.b1.astype(np.float32),
                     W2=self.W2.astype(np.float32), b2=self.b2.astype(np.float32))
        os.replace(tmp, p)

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "PolicyModel":
        """Read a model written by :meth:`save`; :class:`CorruptPolicyError` says what is wrong in one line."""
        p = Path(path)
        name = p.name
        try:
            # Our own handle: np.load leaves the file it opened unclosed when the archive is broken.
            with open(p, "rb") as fh, np.load(fh, allow_pickle=False) as z:
                arrays = {k: z[k] for k in ("header", "W1", "b1", "W2", "b2") if k in z.files}
                files = list(z.files)
        except FileNotFoundError:
            raise CorruptPolicyError(f"no policy file at {str(p)!r}") from None
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as e:
            raise CorruptPolicyError(f"{name} is not a readable policy file (truncated or not .npz: "
                                     f"{type(e).__name__}); write one with `spatialobs train-policy`") from None
        missing = [k for k in ("header", "W1", "b1", "W2", "b2") if k not in files]
        if missing:
            raise CorruptPolicyError(f"{name} is not a policy file (missing {', '.join(missing)})")
        try:
            head = json.loads(arrays["header"].astype(np.uint8).tobytes().decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise CorruptPolicyError(f"{name}: the header is not JSON") from None
        if not isinstance(head, dict) or head.get("format") != POLICY_FORMAT:
            raise CorruptPolicyError(f"{name} is not a policy file (no 'format': {POLICY_FORMAT!r})")
        if head.get("version") != VERSION:
            raise CorruptPolicyError(f"{name} is policy version {head.get('version')!r}; this spatialobs reads "
                                     f"version {VERSION}")
        try:
            spec = FeatureSpec(**{k: int(v) for k, v in dict(head["spec"]).items()})
            return cls(arrays["W1"], arrays["b1"], arrays["W2"], arrays["b2"], dict(head["vocab"]), spec,
                       dict(head.get("meta") or {}))
        except (InvalidInputError, KeyError, TypeError, ValueError) as e:
            raise CorruptPolicyError(f"{name}: {e}") from None


def load_policy(path: Union[str, "os.PathLike[str]"]) -> PolicyModel:
    """:meth:`PolicyModel.load`."""
    return PolicyModel.load(path)


@lru_cache(maxsize=65536)
def _token_cached(op: str, role: str, text: Optional[str], bounds: Tuple[float, ...], value: Optional[str],
                  w: float, h: float) -> ActionToken:
    from spatialobs.screen.model import Element

    t = None if op == "key" else Element(bounds, role, text, False, True)  # type: ignore[arg-type]
    return action_token(canonical_action(Action(op, t, value)), w, h)


def _token(a: Action, w: float, h: float) -> ActionToken:
    t = a.target
    if t is None:
        return _token_cached(a.op, "", None, (), a.value, w, h)
    return _token_cached(a.op, t.role, t.text, tuple(t.bounds), a.value, w, h)


# -- training ---------------------------------------------------------------------------


def _vocab(exs: Sequence[Example]) -> Dict[str, List[str]]:
    return {s: [UNK] + sorted({str(getattr(e.token, s)) for e in exs}) for s in SLOTS}


def train_policy(train: Sequence[Example], *, pairs: Sequence[Tuple[int, int]] = (), seed: int = 0,
                 hidden: int = 96, epochs: int = 40, lr: float = 3e-3, batch: int = 64, l2: float = 1e-4,
                 pair_weight: float = 1.0, spec: Optional[FeatureSpec] = None) -> PolicyModel:
    """Train the policy on examples (see the module docstring).

    Parameters
    ----------
    train : sequence of Example
        Steps from :func:`examples`.
    pairs : sequence of (int, int), default ()
        Positions in ``train`` of pairs of steps with the same task and a different
        screen and token, for the counterfactual margin term; empty: plain training.
    seed : int, default 0
        Initialization and batch order.
    hidden, epochs, lr, batch, l2 : int, int, float, int, float
        Network width, passes over the data, Adam's step size, rows per step, weight decay.
    pair_weight : float, default 1.0
        Weight of the margin term.
    spec : FeatureSpec, optional
        Sizes of the hashed feature blocks.

    Returns
    -------
    PolicyModel
    """
    if not train:
        raise InvalidInputError("train_policy needs at least one example")
    for name, v in (("hidden", hidden), ("epochs", epochs), ("batch", batch)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidInputError(f"{name} must be a positive integer, got {v!r}")
    spec = spec or FeatureSpec()
    vocab = _vocab(train)
    rng = np.random.default_rng(seed)
    X = featurize_rows([(e.task, e.screen, e.prev, e.k) for e in train], spec)
    index = {s: {v: i for i, v in enumerate(vocab[s])} for s in SLOTS}
    Y = np.array([[index[s][str(getattr(e.token, s))] for s in SLOTS] for e in train], dtype=np.int64)
    sizes = [len(vocab[s]) for s in SLOTS]
    off = np.cumsum([0] + sizes)
    n_out = int(off[-1])
    params = {"W1": rng.normal(0, 0.05, (spec.total, hidden)).astype(np.float32),
              "b1": np.zeros(hidden, np.float32),
              "W2": rng.normal(0, 1 / math.sqrt(hidden), (hidden, n_out)).astype(np.float32),
              "b2": np.zeros(n_out, np.float32)}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    P = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    t0 = time.perf_counter()
    step = 0
    n = X.shape[0]
    for _ in range(epochs):
        order = rng.permutation(n)
        for b0 in range(0, n, batch):
            rows = order[b0:b0 + batch]
            grads = _grads(params, X[rows], Y[rows], off, 1.0 / len(rows))
            if len(P) and pair_weight > 0:
                pr = P[rng.integers(0, len(P), size=min(len(P), max(1, len(rows) // 2)))]
                g2 = _pair_grads(params, X, Y, pr, off, pair_weight / len(pr))
                for k in grads:
                    grads[k] += g2[k]
            step += 1
            for k, p in params.items():
                g = grads[k] + l2 * p if k.startswith("W") else grads[k]
                m[k] = 0.9 * m[k] + 0.1 * g
                v2[k] = 0.999 * v2[k] + 0.001 * g * g
                mh = m[k] / (1 - 0.9 ** step)
                vh = v2[k] / (1 - 0.999 ** step)
                p -= (lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
    meta = {"examples": int(n), "pairs": int(len(P)), "seed": int(seed), "epochs": int(epochs), "hidden": int(hidden),
            "train_seconds": round(time.perf_counter() - t0, 2)}
    return PolicyModel(params["W1"], params["b1"], params["W2"], params["b2"], vocab, spec, meta)


def _forward(params: Dict[str, np.ndarray], X: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    a = _relu(X @ params["W1"] + params["b1"])
    return a, a @ params["W2"] + params["b2"]


def _backward(params: Dict[str, np.ndarray], X: np.ndarray, a: np.ndarray, dz: np.ndarray) -> Dict[str, np.ndarray]:
    da = (dz @ params["W2"].T) * (a > 0)
    return {"W2": a.T @ dz, "b2": dz.sum(axis=0), "W1": X.T @ da, "b1": da.sum(axis=0)}


def _grads(params: Dict[str, np.ndarray], X: np.ndarray, Y: np.ndarray, off: np.ndarray,
           scale: float) -> Dict[str, np.ndarray]:
    a, z = _forward(params, X)
    dz = np.zeros_like(z)
    r = np.arange(len(X))
    for j in range(Y.shape[1]):
        zz = z[:, off[j]:off[j + 1]]
        e = np.exp(zz - zz.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        p[r, Y[:, j]] -= 1.0
        dz[:, off[j]:off[j + 1]] = p * scale
    return _backward(params, X, a, dz)


def _pair_grads(params: Dict[str, np.ndarray], X: np.ndarray, Y: np.ndarray, pairs: np.ndarray, off: np.ndarray,
                scale: float) -> Dict[str, np.ndarray]:
    # Each side of a pair prefers its own slot value over the other side's: softplus(-(z[y_own] - z[y_other])).
    rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
    other = np.concatenate([pairs[:, 1], pairs[:, 0]])
    Xr = X[rows]
    a, z = _forward(params, Xr)
    dz = np.zeros_like(z)
    r = np.arange(len(rows))
    for j in range(Y.shape[1]):
        own, oth = Y[rows, j] + off[j], Y[other, j] + off[j]
        diff = own != oth
        margin = z[r, own] - z[r, oth]
        g = -1.0 / (1.0 + np.exp(np.clip(margin, -30, 30))) * diff * scale
        np.add.at(dz, (r, own), g)
        np.add.at(dz, (r, oth), -g)
    return _backward(params, Xr, a, dz)

