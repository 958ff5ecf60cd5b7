"""Screens read from pictures by OCR, and the audit of OCR against the accessibility tree.

:func:`ocr_screen` turns a screenshot into a :class:`~spatialobs.screen.Screen` of
text boxes through `RapidOCR <https://github.com/RapidAI/RapidOCR>`_ 1.4.4
(``rapidocr-onnxruntime``; ``pip install "spatialobs[ocr]"``). Its wheel ships
its models (PP-OCRv4 detection and recognition, the mobile direction
classifier), so nothing is downloaded. The engine is imported on first use and
created once per process (:func:`ocr_engine`), with RapidOCR's default settings
except that ONNX Runtime runs one thread per call (:data:`ENGINE_OPTIONS`): on a
loaded two-core machine that read a 640 x 480 window in 1.2-1.7 s instead of
2.6-2.8 s (three runs of each setting, one after the other).

Each recognized line becomes one :class:`~spatialobs.screen.Element`: its box is
the axis-aligned box of the detected quadrilateral moved to screen coordinates
(the picture's origin added, then clipped to the screen), its text the recognized
string. OCR sees no roles, so they are inferred from the text and its place
(:func:`infer_role`):

* ``"menu item"`` — a short line (at most two words and 20 characters) whose
  center lies in the top :data:`MENU_BAND` pixels of the picture, where menu bars
  are; clickable;
* ``"menu bar"`` — a longer line there: the detector often reads a row of menu
  titles as one line (``"FileEditSearchViewDocumentHelp"``);
* ``"label"`` — any other short line (at most three words and 24 characters);
* ``"text"`` — a longer line.

Nothing is editable. The audit (:func:`ocr_audit`, ``spatialobs ocr-audit``)
explores real applications, captures both the accessibility-tree screen and the
screenshot at every step, re-encodes the screenshots with OCR, and scores both
encodings against one ground truth with the paper's four measures (see
:func:`audit_measures`).

Examples
--------
>>> infer_role("File", (4, 3, 30, 22), top=0)
'menu item'
>>> infer_role("Warning: you are using the root account.", (90, 27, 545, 49), top=0)
'text'
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from spatialobs._errors import InvalidInputError, SpatialObsError
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = [
    "OcrUnavailable", "ocr_engine", "ocr_screen", "infer_role", "MENU_BAND", "MAX_PIXELS", "MAX_SIDE",
    "tree_signature", "view_signature", "TRUTHS", "pair_scores", "recall_at_k", "false_merge_rate",
    "successor_consistency", "score_matrix", "encode_states", "audit_measures", "Capture", "capture_run",
    "ocr_audit", "score_captures", "stable_ocr_text", "DEFINITIONS", "render_ocr_audit", "write_ocr_audit", "PAPER", "ENGINE_OPTIONS",
]

#: Pixels from the top of a picture where a short line is taken for a menu item.
MENU_BAND = 30
#: The largest picture :func:`ocr_screen` accepts, in pixels (width x height) and per side.
MAX_PIXELS = 40_000_000
MAX_SIDE = 16_384

#: Options given to ``RapidOCR``: one ONNX Runtime thread (see the module docstring).
ENGINE_OPTIONS: Dict[str, Any] = {"intra_op_num_threads": 1, "inter_op_num_threads": 1}

#: The paper's audit (Appendix E): UIA vs OCR on 1,200 re-encoded screenshots (recall at k = 10).
PAPER = {
    "pair_f1": (0.740, 0.646),
    "recall_at_k": (0.381, 0.409),
    "false_merge_rate": (0.010, 0.007),
    "successor_consistency": (0.958, 0.892),
}

Engine = Callable[[Any], Any]


class OcrUnavailable(SpatialObsError):
    """RapidOCR (the ``ocr`` extra) is not installed."""


_ENGINE: Optional[Any] = None
_ENGINE_LOCK = threading.Lock()


def ocr_engine() -> Any:
    """The process's RapidOCR engine, created on first use and reused.

    Raises
    ------
    OcrUnavailable
        ``rapidocr-onnxruntime`` is not installed (the message names the extra).

    Examples
    --------
    >>> ocr_engine() is ocr_engine()  # doctest: +SKIP
    True
    """
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                raise OcrUnavailable(f"OCR needs rapidocr-onnxruntime 1.4.4: pip install \"spatialobs[ocr]\" "
                                     f"({exc})") from None
            _ENGINE = RapidOCR(**ENGINE_OPTIONS)
        return _ENGINE


def _pair(value: Any, name: str, positive: bool) -> Tuple[float, float]:
    try:
        if isinstance(value, (str, bytes)) or len(value) != 2:
            raise TypeError
        a, b = float(value[0]), float(value[1])
    except (TypeError, ValueError):
        raise InvalidInputError(f"ocr: {name} must be two numbers, got {value!r}") from None
    if not (math.isfinite(a) and math.isfinite(b)) or (positive and (a <= 0 or b <= 0)):
        raise InvalidInputError(f"ocr: {name} must be finite{' and positive' if positive else ''}, got {value!r}")
    return a, b


def _check_size(w: int, h: int) -> None:
    if w <= 0 or h <= 0:
        raise InvalidInputError(f"ocr: the image is empty ({w} x {h} pixels)")
    if w > MAX_SIDE or h > MAX_SIDE or w * h > MAX_PIXELS:
        raise InvalidInputError(f"ocr: the image of {w} x {h} pixels is over the limit ({MAX_SIDE} per side, "
                                f"{MAX_PIXELS:,} in all); crop or scale it first")


def _pixels(image: Any) -> Tuple[npt.NDArray[np.uint8], Dict[str, Any]]:
    """(H, W, 3) uint8 RGB pixels of ``image`` and its ``info``; every bad input is one InvalidInputError."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        try:
            from PIL import Image
        except ImportError:
            raise OcrUnavailable("decoding image bytes needs Pillow: pip install \"spatialobs[ocr]\"") from None
        try:
            img = Image.open(io.BytesIO(bytes(image)))
            _check_size(*img.size)
            img.load()
        except InvalidInputError:
            raise
        except Exception as exc:  # PIL raises many kinds for undecodable or bomb-sized data
            raise InvalidInputError(f"ocr: the bytes are not a decodable image ({type(exc).__name__})") from None
        image = img
    if isinstance(image, np.ndarray):
        a = image
        if a.dtype != np.uint8:
            raise InvalidInputError(f"ocr: an image array must be uint8, got {a.dtype}")
        if a.ndim == 3 and a.shape[2] in (3, 4):
            _check_size(a.shape[1], a.shape[0])
            return np.ascontiguousarray(a[:, :, :3]), {}
        if a.ndim == 2:
            _check_size(a.shape[1], a.shape[0])
            return np.ascontiguousarray(np.repeat(a[:, :, None], 3, axis=2)), {}
        raise InvalidInputError(f"ocr: an image array must be (h, w), (h, w, 3) or (h, w, 4), got shape {a.shape}")
    size, convert = getattr(image, "size", None), getattr(image, "convert", None)
    if callable(convert) and isinstance(size, tuple) and len(size) == 2 and hasattr(image, "mode"):
        _check_size(int(size[0]), int(size[1]))
        info = dict(getattr(image, "info", {}) or {})
        return np.asarray(image.convert("RGB"), dtype=np.uint8), info
    raise InvalidInputError(f"ocr: expected a PIL image, a uint8 array or encoded image bytes, got "
                            f"{type(image).__name__}")


def infer_role(text: str, box: Sequence[float], top: float = 0.0) -> str:
    """The role of an OCR line: ``"menu item"``, ``"menu bar"``, ``"label"`` or ``"text"`` (see the module docstring).

    ``box`` is the line's ``(x0, y0, x1, y1)`` and ``top`` the picture's top edge, in
    the same coordinates.

    Examples
    --------
    >>> infer_role("Edit", (40, 3, 70, 22), top=0), infer_role("Edit", (40, 300, 70, 322), top=0)
    ('menu item', 'label')
    """
    words = text.split()
    if (box[1] + box[3]) / 2 - top < MENU_BAND:
        return "menu item" if len(words) <= 2 and len(text.strip()) <= 20 else "menu bar"
    if len(words) <= 3 and len(text.strip()) <= 24:
        return "label"
    return "text"


def ocr_screen(image: Any, *, origin: Optional[Sequence[float]] = None,
               screen_size: Optional[Sequence[float]] = None, meta: Optional[ScreenMeta] = None,
               engine: Optional[Engine] = None, min_score: float = 0.5) -> Screen:
    """Read a screenshot into a :class:`~spatialobs.screen.Screen` of text boxes (see the module docstring).

    Parameters
    ----------
    image : PIL.Image.Image, numpy.ndarray or bytes
        The picture: a PIL image, an ``(h, w)``, ``(h, w, 3)`` or ``(h, w, 4)`` uint8
        array (RGB order), or encoded image bytes (PNG, JPEG, ...).
    origin : (x, y), optional
        Screen position of the picture's top-left pixel; default the image's
        ``info["spatialobs.origin"]`` (set by :meth:`Driver.screenshot
        <spatialobs.screen.drivers.Driver.screenshot>`), else ``(0, 0)``.
    screen_size : (width, height), optional
        Default the image's ``info["spatialobs.screen_size"]``, else the origin
        plus the picture's size.
    meta : ScreenMeta, optional
        The screen's metadata (give the accessibility screen's to compare the two).
    engine : callable, optional
        ``engine(pixels) -> (lines, elapsed)`` in RapidOCR's form, each line
        ``[quadrilateral, text, score]``; default :func:`ocr_engine`.
    min_score : float, default 0.5
        Lines recognized with a lower confidence are dropped.

    Returns
    -------
    Screen
        Elements in reading order of the detector (top to bottom), ``source="ocr"``.

    Raises
    ------
    InvalidInputError
        Not an image, an empty image, or one over :data:`MAX_PIXELS` / :data:`MAX_SIDE`.
    OcrUnavailable
        RapidOCR is not installed (and no ``engine`` was given).

    Examples
    --------
    >>> from PIL import Image  # doctest: +SKIP
    >>> [e.text for e in ocr_screen(Image.open("shot.png")).elements][:2]  # doctest: +SKIP
    ['File', 'Edit']
    """
    pixels, info = _pixels(image)
    if isinstance(min_score, bool) or not isinstance(min_score, (int, float)) or not 0 <= min_score <= 1:
        raise InvalidInputError(f"ocr: min_score must be a number in [0, 1], got {min_score!r}")
    if meta is not None and not isinstance(meta, ScreenMeta):
        raise InvalidInputError(f"ocr: meta must be a ScreenMeta, got {type(meta).__name__}")
    h, w = pixels.shape[:2]
    ox, oy = _pair(origin if origin is not None else info.get("spatialobs.origin", (0, 0)), "origin", False)
    sw, sh = _pair(screen_size if screen_size is not None else info.get("spatialobs.screen_size", (ox + w, oy + h)),
                   "screen_size", True)
    run = engine if engine is not None else ocr_engine()
    lines = run(pixels)[0] or []
    elements: List[Element] = []
    for quad, text, score in lines:
        text = str(text).strip()
        if not text or float(score) < min_score:
            continue
        q = np.asarray(quad, dtype=np.float64).reshape(-1, 2)
        x0 = min(max(float(q[:, 0].min()) + ox, 0.0), sw)
        y0 = min(max(float(q[:, 1].min()) + oy, 0.0), sh)
        x1 = min(max(float(q[:, 0].max()) + ox, x0), sw)
        y1 = min(max(float(q[:, 1].max()) + oy, y0), sh)
        role = infer_role(text, (x0, y0, x1, y1), top=oy)
        elements.append(Element((x0, y0, x1, y1), role, text, False, role == "menu item"))
    return Screen(elements, sw, sh, meta if meta is not None else ScreenMeta(), source="ocr")


# ---- ground truth -----------------------------------------------------------------------


def tree_signature(screen: Screen) -> str:
    """The exact accessibility-tree signature: every element's role, text, flags and whole-pixel box.

    Elements are taken in tree order; the metadata (application) is part of it.

    Examples
    --------
    >>> s = Screen([Element((0, 0, 10, 10), "text", "hi", editable=True)], 100, 100)
    >>> tree_signature(s) == tree_signature(Screen(list(s.elements), 100, 100))
    True
    """
    return _digest(screen, mask_editable=False)


def view_signature(screen: Screen) -> str:
    """:func:`tree_signature` with the content of editable elements left out (the audit's default truth).

    Two screens share it when they show the same windows, dialogs and menus with the
    same labels in the same places, whatever was typed into text fields or cells:
    the window title, which says whether the document was modified, still counts.

    Examples
    --------
    >>> a = Screen([Element((0, 0, 10, 10), "text", "hi", editable=True)], 100, 100)
    >>> b = Screen([Element((0, 0, 10, 10), "text", "hello", editable=True)], 100, 100)
    >>> view_signature(a) == view_signature(b), tree_signature(a) == tree_signature(b)
    (True, False)
    """
    return _digest(screen, mask_editable=True)


def _digest(screen: Screen, mask_editable: bool) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(repr((screen.meta.key(), round(float(screen.width)), round(float(screen.height)))).encode())
    for e in screen.elements:
        text = "" if mask_editable and e.editable else (e.text or "")
        box = tuple(int(round(v)) for v in e.bounds)
        h.update(repr((e.role, text, e.editable, e.clickable, box)).encode("utf-8", "backslashreplace"))
    return h.hexdigest()


#: The ground truths the audit can score against.
TRUTHS: Dict[str, Callable[[Screen], str]] = {"view": view_signature, "tree": tree_signature}


# ---- the measures ---------------------------------------------------------------------


def pair_scores(predicted: Sequence[Hashable], truth: Sequence[Hashable]) -> Dict[str, float]:
    """Same-state pair precision, recall and F1 (all unordered pairs of captured screens).

    A pair is truly positive when both screens carry the same truth label and
    predicted positive when both were put in the same state. Precision (recall) is 1
    when there is no predicted (true) pair.

    Examples
    --------
    >>> pair_scores([0, 0, 1], [0, 0, 0])["recall"]
    0.3333333333333333
    """
    from spatialobs.screen.synth import pair_metrics

    return pair_metrics(list(predicted), list(truth))  # type: ignore[arg-type]


def score_matrix(features: Sequence[Any]) -> npt.NDArray[np.float64]:
    """The identity score (0.5 J(control) + 0.5 J(text)) of every pair of screens; the diagonal is 1."""
    from spatialobs.screen.features import jaccard_score

    n = len(features)
    out = np.eye(n, dtype=np.float64)
    for i in range(n):
        for j in range(i + 1, n):
            out[i, j] = out[j, i] = jaccard_score(features[i], features[j])
    return out


def recall_at_k(scores: Any, truth: Sequence[Hashable], k: int = 10) -> Tuple[float, float, int]:
    """Leave-one-out retrieval recall at ``k`` of a score matrix against truth labels.

    Each screen ``i`` with at least one other screen of its truth label is a query:
    the other screens are ranked by ``scores[i, j]`` descending, ties to the earlier
    capture (lower ``j``); its recall is the share of its same-truth screens among
    the first ``k`` (at most ``k / |relevant|``). Returns the mean recall, the
    hit rate (queries with at least one relevant screen in the first ``k``) and the
    number of queries; ``(nan, nan, 0)`` without queries.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.array([[1, .9, .1], [.9, 1, .2], [.1, .2, 1]])
    >>> recall_at_k(s, ["a", "a", "b"], k=1)
    (1.0, 1.0, 2)
    """
    s = np.asarray(scores, dtype=np.float64)
    n = len(truth)
    if s.shape != (n, n):
        raise InvalidInputError(f"scores must be an ({n}, {n}) matrix for {n} labels, got shape {s.shape}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidInputError(f"k must be a positive integer, got {k!r}")
    labels = list(truth)
    recalls: List[float] = []
    hits = 0
    for i in range(n):
        rel = [j for j in range(n) if j != i and labels[j] == labels[i]]
        if not rel:
            continue
        others = np.array([j for j in range(n) if j != i], dtype=np.int64)
        # lexsort: the last key is primary; -score descending, then the index ascending.
        top = others[np.lexsort((others, -s[i, others]))][:k]
        found = sum(1 for j in top if labels[j] == labels[i])
        recalls.append(found / len(rel))
        hits += found > 0
    if not recalls:
        return float("nan"), float("nan"), 0
    return float(np.mean(recalls)), hits / len(recalls), len(recalls)


def false_merge_rate(states: Sequence[Hashable], truth: Sequence[Hashable]) -> Tuple[float, int]:
    """The share of merges that join a state founded by a screen of another truth label.

    ``states`` is the state each screen was put in, in capture order; the first
    screen of a state founds it, and every later one is a merge (an exact duplicate
    included). Returns (rate, merges); the rate is 0 without merges.

    Examples
    --------
    >>> false_merge_rate([0, 0, 1, 0], ["a", "a", "b", "c"])
    (0.5, 2)
    """
    if len(states) != len(truth):
        raise InvalidInputError(f"states and truth differ in length ({len(states)} vs {len(truth)})")
    founder: Dict[Hashable, Hashable] = {}
    merges = wrong = 0
    for s, t in zip(states, truth):
        if s in founder:
            merges += 1
            wrong += founder[s] != t
        else:
            founder[s] = t
    return (wrong / merges if merges else 0.0), merges


def successor_consistency(states: Sequence[Hashable], transitions: Sequence[Tuple[int, str, int]]
                          ) -> Tuple[float, int]:
    """How often the same action from the same state leads to the same state.

    ``transitions`` are ``(source screen, action signature, next screen)`` with
    screens as indices into ``states``. Transitions are grouped by (state of the
    source, action); in each group of two or more, the transitions that reach the
    group's most frequent next state count as consistent. Returns (consistent /
    grouped transitions, grouped transitions); ``(nan, 0)`` when no action was
    repeated from a state.

    Examples
    --------
    >>> successor_consistency([0, 1, 0, 2, 0, 1], [(0, "a", 1), (2, "a", 3), (4, "a", 5)])
    (0.6666666666666666, 3)
    """
    groups: Dict[Tuple[Hashable, str], Counter] = defaultdict(Counter)
    for src, sig, dst in transitions:
        if not (0 <= src < len(states) and 0 <= dst < len(states)):
            raise InvalidInputError(f"transition ({src}, {sig!r}, {dst}) names a screen outside 0..{len(states) - 1}")
        groups[(states[src], sig)][states[dst]] += 1
    total = sum(sum(c.values()) for c in groups.values() if sum(c.values()) >= 2)
    same = sum(max(c.values()) for c in groups.values() if sum(c.values()) >= 2)
    return (same / total if total else float("nan")), total


def encode_states(screens: Sequence[Screen], **index_args: Any) -> Tuple[List[int], List[Any]]:
    """Feed screens in order to a fresh :class:`~spatialobs.screen.StateIndex`; (state per screen, features)."""
    from spatialobs.screen.state_index import StateIndex

    ix = StateIndex(**index_args)
    feats = [ix.featurize(s) for s in screens]
    return [ix.add_features(f).state for f in feats], feats


def audit_measures(screens: Sequence[Screen], truth: Sequence[Hashable], transitions: Sequence[Tuple[int, str, int]],
                   *, k: int = 10, **index_args: Any) -> Dict[str, Any]:
    """The paper's four measures of one encoding of the captured screens.

    ``screens`` are the encoding's screens in capture order (all of one
    application), ``truth`` their truth labels, ``transitions`` the steps between
    them (see :func:`successor_consistency`). States come from a fresh
    :class:`~spatialobs.screen.StateIndex` (``index_args``, default τ = 0.93).
    Returns pair precision/recall/F1 (:func:`pair_scores`), recall@k and hit@k
    (:func:`recall_at_k` over the identity score), the false-merge rate
    (:func:`false_merge_rate`), successor consistency
    (:func:`successor_consistency`) and the number of states.
    """
    if len(screens) != len(truth):
        raise InvalidInputError(f"screens and truth differ in length ({len(screens)} vs {len(truth)})")
    states, feats = encode_states(screens, **index_args)
    pairs = pair_scores(states, truth)
    rk, hk, queries = recall_at_k(score_matrix(feats), truth, k)
    fm, merges = false_merge_rate(states, truth)
    sc, grouped = successor_consistency(states, transitions)
    return {"precision": pairs["precision"], "recall": pairs["recall"], "pair_f1": pairs["f1"],
            "true_pairs": pairs["true_pairs"], "predicted_pairs": pairs["predicted_pairs"],
            "recall_at_k": rk, "hit_at_k": hk, "k": k, "queries": queries,
            "false_merge_rate": fm, "merges": merges, "successor_consistency": sc, "grouped": grouped,
            "states": len(set(states)), "states_list": states}


# ---- capturing real applications ---------------------------------------------------------


@dataclass
class Capture:
    """What the audit captured of one application: screens, pictures and steps.

    ``screens[i]`` is the accessibility screen and ``images[i]`` the PNG bytes of the
    screenshot taken right after it was read; ``transitions`` are ``(i, action
    signature, j)`` for each executed step (resets and recoveries start no
    transition).
    """

    app: str
    screens: List[Screen] = field(default_factory=list)
    images: List[bytes] = field(default_factory=list)
    origins: List[Tuple[int, int]] = field(default_factory=list)
    transitions: List[Tuple[int, str, int]] = field(default_factory=list)
    episodes: int = 0
    faults: Dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


class _Recorder:
    """An exploration environment over a driver that keeps every screen with its screenshot."""

    def __init__(self, driver: Any, cap: Capture) -> None:
        self.d, self.cap = driver, cap
        self.app, self.goal = driver.app, driver.goal
        self.last = -1

    def actions(self, screen: Screen) -> Any:
        return self.d.actions(screen)

    def _keep(self, screen: Screen) -> Screen:
        img = self.d.screenshot()
        buf = io.BytesIO()
        img.save(buf, format="PNG", compress_level=1)
        self.cap.screens.append(screen)
        self.cap.images.append(buf.getvalue())
        ox, oy = img.info.get("spatialobs.origin", (0, 0))
        self.cap.origins.append((int(ox), int(oy)))
        self.last = len(self.cap.screens) - 1
        return screen

    def reset(self, start: Any = None) -> Screen:
        return self._keep(self.d.reset(start))

    def recover(self) -> Screen:
        return self._keep(self.d.recover())

    def step(self, action: Any) -> Screen:
        from spatialobs.screen.actions import signature

        src = self.last
        sig = signature(action, self.cap.screens[src]) if src >= 0 else ""
        self.last = -1  # a fault leaves no source for the next step until a recovery
        scr = self._keep(self.d.step(action))
        if src >= 0:
            self.cap.transitions.append((src, sig, self.last))
        return scr


def capture_run(app: str, starts: int, steps: int, seed: int = 0, *, deadline: Optional[float] = None,
                log: Any = None) -> Capture:
    """Explore ``app`` with PUCT (heuristic prior) from ``starts`` replay starts, capturing every screen.

    Each start is an episode of ``steps`` actions with its own graph, from a clean
    launch; no new episode begins after ``deadline`` (a ``time.monotonic()`` value).

    Raises
    ------
    DriverUnavailable
        The application, its system packages or Pillow are missing.
    """
    from spatialobs.screen.drivers import make_driver
    from spatialobs.screen.explore import explore
    from spatialobs.screen.graph import ScreenGraph
    from spatialobs.screen.select import PUCT

    cap = Capture(app)
    t0 = time.perf_counter()
    with make_driver(app, seed=seed) as driver:
        rec = _Recorder(driver, cap)
        for st in driver.starts(starts):
            if deadline is not None and time.monotonic() > deadline:
                break
            with ScreenGraph(app=driver.app) as g:
                # one tie stream per (seed, start), as in the real-application study
                explore(rec, steps, PUCT(seed=seed * 100_003 + st.index), "heuristic", graph=g, start=st,
                        episode=st.index)
            cap.episodes += 1
            if log is not None:
                print(f"{app} start {st.index}: {len(cap.screens)} screens so far", file=log, flush=True)
        cap.faults = {k: int(v) for k, v in driver.faults.items() if v}
    cap.seconds = time.perf_counter() - t0
    return cap


def _ocr_capture(cap: Capture, engine: Optional[Engine] = None) -> Tuple[List[Screen], int, float]:
    """OCR screens of a capture (identical pictures read once); (screens, distinct pictures, seconds)."""
    cache: Dict[str, List[Element]] = {}
    out: List[Screen] = []
    t0 = time.perf_counter()
    for scr, png, origin in zip(cap.screens, cap.images, cap.origins):
        key = hashlib.blake2b(png, digest_size=16).hexdigest() + repr(origin)
        if key not in cache:
            o = ocr_screen(png, origin=origin, screen_size=(scr.width, scr.height), meta=scr.meta, engine=engine)
            cache[key] = list(o.elements)
        out.append(Screen(cache[key], scr.width, scr.height, scr.meta, source="ocr"))
    return out, len(cache), time.perf_counter() - t0


#: The launch's temporary HOME as OCR reads it (the accessibility driver shows it as "~").
_SESSION_HOME = re.compile(r"\S*spatialobs-session-[A-Za-z0-9_]+/launch\w*")


def stable_ocr_text(app: str, text: str) -> str:
    """Mask in OCR text what the accessibility driver masks in its own (see :func:`ocr_audit`).

    The launch's temporary HOME becomes ``~`` and the application's volatile
    patterns (PCManFM's free-space line) are replaced, with spaces optional and case
    ignored since OCR drops spaces and misreads case.

    Examples
    --------
    >>> stable_ocr_text("pcmanfm", "FreeSpace:74.3GiB (Total:252.0GiB)")
    'Free space'
    >>> stable_ocr_text("pcmanfm", "/tmp/spatialobs-session-ab12cd_3/launcho/Files")
    '~/Files'
    """
    text = _SESSION_HOME.sub("~", text)
    try:
        from spatialobs.screen.drivers.atspi import APPS
    except ImportError:  # pragma: no cover - the module has no third-party imports
        return text
    spec = APPS.get(app)
    for rule in spec.volatile if spec is not None else ():
        text = re.sub(rule.pattern.replace(" ", r"\s*"), rule.replace, text, flags=re.IGNORECASE)
    return text


def _stable_screens(app: str, screens: Sequence[Screen], origins: Sequence[Tuple[int, int]]) -> List[Screen]:
    # Masking changes a line's length, so its role is inferred again from the masked text.
    out = []
    for s, (_, top) in zip(screens, origins):
        els = []
        for e in s.elements:
            text = stable_ocr_text(app, e.text or "")
            role = infer_role(text, e.bounds, top=top)
            els.append(replace(e, text=text, role=role, clickable=role == "menu item"))
        out.append(Screen(els, s.width, s.height, s.meta, source=s.source))
    return out


def ocr_audit(apps: Sequence[str] = ("mousepad", "pcmanfm", "localc"), starts: int = 4, steps: int = 25,
              seed: int = 0, *, minutes: float = 20.0, truths: Sequence[str] = ("view", "tree"),
              engine: Optional[Engine] = None, keep: Optional[Union[str, Path]] = None,
              log: Any = None) -> Dict[str, Any]:
    """Capture real applications and score the accessibility and the OCR encodings (see the module docstring).

    OCR text is masked as the accessibility driver masks its own
    (:func:`stable_ocr_text`), so that neither encoding sees the launch's temporary
    folder. ``minutes`` bounds the capture: the time left is shared among the applications
    still to run, and no episode starts past an application's share (OCR runs
    after all the captures and is not counted in it; identical pictures are read
    once). ``keep`` names a
    file where the captures are pickled, to score them again with
    :func:`score_captures` without running the applications. Returns, per
    application and pooled: counts, timings, and per truth the measures of each
    encoding (:func:`audit_measures`).

    Raises
    ------
    OcrUnavailable
        RapidOCR is missing (checked before anything is launched).
    """
    for t in truths:
        if t not in TRUTHS:
            raise InvalidInputError(f"unknown truth {t!r}; choose from {', '.join(TRUTHS)}")
    for name, v in (("starts", starts), ("steps", steps)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidInputError(f"{name} must be a positive integer, got {v!r}")
    if engine is None:
        ocr_engine()
    from spatialobs.screen.drivers import DriverUnavailable

    end = time.monotonic() + minutes * 60.0
    runs: Dict[str, Any] = {}
    for n, app in enumerate(apps):
        share = (end - time.monotonic()) / (len(apps) - n)
        try:
            cap = capture_run(app, starts, steps, seed, deadline=time.monotonic() + max(share, 0.0), log=log)
        except DriverUnavailable as exc:
            runs[app] = {"skipped": str(exc)}
            continue
        runs[app] = {"capture": cap}
    # OCR after every capture: the applications' share of the time box is theirs alone.
    for app, run in runs.items():
        if "capture" in run:
            cap = run["capture"]
            run["ocr"], run["pictures"], run["ocr_s"] = _ocr_capture(cap, engine)
            if log is not None:
                print(f"{app}: {len(cap.screens)} screens, {run['pictures']} distinct pictures, "
                      f"OCR {run['ocr_s']:.0f} s", file=log, flush=True)
    if keep is not None:
        import pickle

        with open(keep, "wb") as f:
            pickle.dump({"runs": runs, "starts": starts, "steps": steps, "seed": seed}, f)
    return score_captures(runs, starts=starts, steps=steps, seed=seed, truths=truths)


def score_captures(runs: Dict[str, Any], *, starts: int, steps: int, seed: int,
                   truths: Sequence[str] = ("view", "tree")) -> Dict[str, Any]:
    """The measures of :func:`ocr_audit` from its captures (``{app: {"capture", "ocr", "pictures", "ocr_s"}}``)."""
    res: Dict[str, Any] = {"apps": {}, "starts": starts, "steps": steps, "seed": seed, "truths": list(truths)}
    pooled: Dict[str, Any] = {"a11y": [], "ocr": [], "transitions": [], "truth": {t: [] for t in truths}}
    for app, run in runs.items():
        if "skipped" in run:
            res["apps"][app] = dict(run)
            continue
        cap = run["capture"]
        ocr_screens = _stable_screens(app, run["ocr"], cap.origins)
        entry: Dict[str, Any] = {
            "screens": len(cap.screens), "pictures": run["pictures"], "transitions": len(cap.transitions),
            "episodes": cap.episodes, "faults": cap.faults, "capture_s": cap.seconds, "ocr_s": run["ocr_s"],
            "a11y_elements": float(np.mean([len(s.elements) for s in cap.screens])) if cap.screens else 0.0,
            "ocr_elements": float(np.mean([len(s.elements) for s in ocr_screens])) if ocr_screens else 0.0,
            "by_truth": {},
        }
        offset = len(pooled["a11y"])
        for t in truths:
            labels = [TRUTHS[t](s) for s in cap.screens]
            entry["by_truth"][t] = {
                "true_states": len(set(labels)),
                "truth_consistency": successor_consistency(labels, cap.transitions)[0],
                "a11y": _public(audit_measures(cap.screens, labels, cap.transitions)),
                "ocr": _public(audit_measures(ocr_screens, labels, cap.transitions)),
            }
            pooled["truth"][t].extend(labels)
        pooled["a11y"].extend(cap.screens)
        pooled["ocr"].extend(ocr_screens)
        pooled["transitions"].extend((a + offset, s, b + offset) for a, s, b in cap.transitions)
        res["apps"][app] = entry
    if pooled["a11y"]:
        res["pooled"] = {"screens": len(pooled["a11y"]), "by_truth": {}}
        for t in truths:
            labels = pooled["truth"][t]
            res["pooled"]["by_truth"][t] = {
                "true_states": len(set(labels)),
                "truth_consistency": successor_consistency(labels, pooled["transitions"])[0],
                "a11y": _public(_pooled(pooled["a11y"], labels, pooled["transitions"])),
                "ocr": _public(_pooled(pooled["ocr"], labels, pooled["transitions"])),
            }
    return res


def _pooled(screens: List[Screen], labels: List[str], transitions: List[Tuple[int, str, int]]) -> Dict[str, Any]:
    # One index holds every application (eligibility keeps them apart); recall@10 ranks within an application.
    out = audit_measures(screens, labels, transitions)
    by_app: Dict[Optional[str], List[int]] = defaultdict(list)
    for i, s in enumerate(screens):
        by_app[s.meta.app].append(i)
    recalls, hits = [], []
    for idx in by_app.values():
        _, feats = encode_states([screens[i] for i in idx])
        sub = [labels[i] for i in idx]
        r, h, q = recall_at_k(score_matrix(feats), sub, 10)
        if q:
            recalls.append((r, q))
            hits.append((h, q))
    total = sum(q for _, q in recalls)
    out["recall_at_k"] = sum(r * q for r, q in recalls) / total if total else float("nan")
    out["hit_at_k"] = sum(h * q for h, q in hits) / total if total else float("nan")
    out["queries"] = total
    return out


def _public(m: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in m.items() if k != "states_list"}


# ---- the report -----------------------------------------------------------------------------


def _f(x: Any) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


#: How the report defines its truth and measures (a section of every report).
DEFINITIONS = """
- **Captures.** Each application runs under its own Xvfb display; an episode is a clean launch,
  a replayed seeded start, then PUCT actions (heuristic prior, one graph per episode). After the
  launch and after every action the accessibility screen is read and, right after, the
  screenshot taken (cut to the application's windows). Steps between two captures are the
  transitions; a failed step starts none.
- **Encodings.** *a11y*: the accessibility screen as read (role, name or text, box, flags).
  *OCR*: the screenshot read by RapidOCR, one element per text line, roles inferred from place
  and length, the launch's temporary folder and PCManFM's free-space line masked as the a11y
  driver masks them. Both go, in capture order, through a fresh `StateIndex` each (τ = 0.93,
  grid 30, the same metadata), which gives every screen a state.
- **Truth `view`** (the headline): two screens are the same state when their accessibility
  trees are identical (every element's role, text, flags and whole-pixel box, in tree order)
  except for the content of editable elements (text fields, sheet cells). **Truth `tree`**:
  identical trees, content included; under it the a11y encoding can never split a true state
  (identical trees give identical atoms), so its pair recall is 1 by construction.
- **Same-state pair F1**: over all pairs of captured screens, a pair is true when both have
  the same truth label and predicted when both got the same state; F1 of pair precision and
  recall.
- **recall@10**: each screen with another screen of its truth label is a query; the other
  screens of its application are ranked by the identity score (0.5 J(control) + 0.5 J(text)),
  ties to the earlier capture; its recall is the share of its same-truth screens in the first
  10 (at most 10 / their number); the mean over queries. *hit@10*: queries with at least one.
- **False-merge rate**: of the screens put in an existing state (exact duplicates included),
  the share whose truth label differs from that of the screen that founded the state.
- **Successor consistency**: transitions grouped by (state of the source, action signature);
  in groups of two or more, the share that reach the group's most frequent next state. The
  truth's own figure (the same computed on truth labels) says how deterministic the
  applications are at that level.
- **How this differs from the paper.** The paper's truth is human labels of 1,200 Windows
  screenshots (UI Automation vs OCR); here it is computed from the accessibility tree, on
  Linux applications, over the screens one exploration run visits (many repeats of few
  states). Being read from the tree, the truth sees what the a11y encoding sees (minus typed
  content), and nothing that neither shows (a focus ring, a hover highlight, a caret).
"""


def render_ocr_audit(res: Dict[str, Any]) -> str:
    """The Markdown report of :func:`ocr_audit`: the four measures side by side with the paper's."""
    lines = ["# OCR audit: accessibility tree vs OCR on real applications", "",
             f"Written by `spatialobs ocr-audit`: {res['starts']} starts x {res['steps']} PUCT actions per "
             f"application (seed {res['seed']}), every screen read from the accessibility tree and "
             "captured as a screenshot at the same moment; the screenshots re-encoded with RapidOCR 1.4.4 "
             "(default settings, one ONNX Runtime thread). Both encodings go through the same state index "
             "(τ = 0.93, grid 30).", ""]
    pooled = res.get("pooled")
    if pooled:
        t = res["truths"][0]
        b = pooled["by_truth"][t]
        lines += [f"## The four measures ({pooled['screens']} screens, truth: `{t}`, {b['true_states']} true states)",
                  "", "| measure | a11y (here) | OCR (here) | UIA (paper) | OCR (paper) |", "|---|---|---|---|---|"]
        for key, label in (("pair_f1", "same-state pair F1"), ("recall_at_k", "recall@10"),
                           ("false_merge_rate", "false-merge rate"),
                           ("successor_consistency", "successor consistency")):
            pa, po = PAPER[key]
            lines.append(f"| {label} | {_f(b['a11y'][key])} | {_f(b['ocr'][key])} | {pa:.3f} | {po:.3f} |")
        lines.append("")
    for t in res["truths"]:
        lines += [f"## Details, truth `{t}`", "",
                  "| app | encoding | screens | true states | states | pair P | pair R | pair F1 | recall@10 | "
                  "hit@10 | false merges | successor consistency (truth's own) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        rows = [(a, e) for a, e in res["apps"].items() if "skipped" not in e]
        if pooled:
            rows.append(("all", {"screens": pooled["screens"], "by_truth": pooled["by_truth"]}))
        for app, e in rows:
            b = e["by_truth"][t]
            for enc in ("a11y", "ocr"):
                m = b[enc]
                lines.append(f"| {app} | {enc} | {e['screens']} | {b['true_states']} | {m['states']} | "
                             f"{_f(m['precision'])} | {_f(m['recall'])} | {_f(m['pair_f1'])} | "
                             f"{_f(m['recall_at_k'])} | {_f(m['hit_at_k'])} | {_f(m['false_merge_rate'])} "
                             f"({m['merges']} merges) | {_f(m['successor_consistency'])} "
                             f"({_f(b['truth_consistency'])}, {m['grouped']} steps) |")
        lines.append("")
    lines += ["## Definitions", "", *DEFINITIONS.strip().splitlines(), ""]
    lines += ["## Runs", "", "| app | screens | distinct pictures | steps | episodes | capture s | OCR s | "
              "elements per screen a11y / OCR | faults |", "|---|---|---|---|---|---|---|---|---|"]
    for app, e in res["apps"].items():
        if "skipped" in e:
            lines.append(f"| {app} | skipped: {e['skipped']} | | | | | | | |")
            continue
        lines.append(f"| {app} | {e['screens']} | {e['pictures']} | {e['transitions']} | {e['episodes']} | "
                     f"{e['capture_s']:.0f} | {e['ocr_s']:.0f} | {e['a11y_elements']:.1f} / {e['ocr_elements']:.1f} | "
                     f"{e['faults'] or 'none'} |")
    lines.append("")
    return "\n".join(lines)


def write_ocr_audit(path: Union[str, Path], apps: Sequence[str] = ("mousepad", "pcmanfm", "localc"),
                    starts: int = 4, steps: int = 25, seed: int = 0, *, minutes: float = 20.0,
                    notes: str = "", keep: Optional[Union[str, Path]] = None,
                    log: Any = None) -> Dict[str, Any]:
    """Run :func:`ocr_audit` and write its report (plus ``notes``, Markdown) to ``path``; returns the results."""
    res = ocr_audit(apps, starts, steps, seed, minutes=minutes, keep=keep, log=log)
    text = render_ocr_audit(res) + (("\n" + notes.strip() + "\n") if notes.strip() else "")
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(p)
    return res
