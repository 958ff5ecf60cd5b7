"""Run the Excalidraw ground-truth harness (``tools/excalidraw-harness``) from tests.

The harness runs the real ``@excalidraw/excalidraw`` package in headless Chromium and
prints, for each ``.excalidraw`` file, the elements as Excalidraw restores them
(File › Open) with the bounds Excalidraw computes. It is a Node project installed
once (``npm ci`` and ``node build.mjs``); nothing is downloaded here.

Where it is: the directory named by ``SPATIALOBS_EXCALIDRAW_HARNESS``, else
``tools/excalidraw-harness`` in this checkout when its ``node_modules`` exists.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

from tests.conformance.harness_common import chromium_path, installed_dir

#: Environment variable naming an installed harness directory.
ENV_VAR = "SPATIALOBS_EXCALIDRAW_HARNESS"
#: Seed for the page's random numbers, so ids and nonces restore invents repeat.
SEED = 1


def harness_dir() -> Optional[Path]:
    """``$SPATIALOBS_EXCALIDRAW_HARNESS``, else ``.harness/excalidraw-harness`` or the
    in-repo ``tools/excalidraw-harness`` when installed, else None."""
    return installed_dir(ENV_VAR, "excalidraw-harness")


def unavailable_reason() -> Optional[str]:
    """Why the harness cannot run here, or None when it can.

    Returns
    -------
    str or None
        A sentence naming what is missing and how to install it.
    """
    d = harness_dir()
    how = f"install it with `(cd tools/excalidraw-harness && npm ci && node build.mjs)` or set {ENV_VAR}"
    if d is None:
        return f"the Excalidraw harness is not installed (no tools/excalidraw-harness/node_modules); {how}"
    if not (d / "run.mjs").is_file():
        return f"{ENV_VAR}={d} has no run.mjs; {how}"
    if not (d / "node_modules" / "@excalidraw" / "excalidraw").is_dir():
        return f"the Excalidraw harness in {d} has no node_modules/@excalidraw/excalidraw; {how}"
    if shutil.which("node") is None:
        return "node is not on PATH (the Excalidraw harness needs Node 20 or later)"
    browser = chromium_path()
    if not (os.path.isfile(browser) and os.access(browser, os.X_OK)):
        return f"no Chromium at {browser} (install the chromium package or set CHROMIUM_PATH)"
    return None


def run_harness(paths: Iterable[Path], *, timeout: float = 600.0) -> List[Dict[str, Any]]:
    """Run the harness once over several files; one browser session for all of them.

    Parameters
    ----------
    paths : iterable of Path
        ``.excalidraw`` files.
    timeout : float
        Seconds for the whole run.

    Returns
    -------
    list of dict
        One entry per path, in order: ``ok``, ``load``, ``restore`` (dropped, added and
        changed elements with ``{field: {before, after}}``), ``editor``, ``elements``
        (each with ``bounds`` and, for linear elements, ``shapeBounds`` and
        ``curveBounds``), ``consoleErrors``, ``blockedRequests``; and ``meta``, the
        run's package versions and fonts.

    Raises
    ------
    RuntimeError
        When the harness is unavailable or fails without printing a result.
    """
    paths = [Path(p) for p in paths]
    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(reason)
    d = harness_dir()
    assert d is not None
    if not paths:
        return []
    with tempfile.TemporaryDirectory(prefix="excalidraw-harness-") as tmp:
        out = Path(tmp) / "out.json"
        cmd = ["node", str(d / "run.mjs"), *[str(p) for p in paths], "--seed", str(SEED), "--out", str(out)]
        proc = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=timeout)
        if not out.is_file():
            raise RuntimeError(f"the Excalidraw harness failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
        result = json.loads(out.read_text(encoding="utf-8"))
    meta = {k: v for k, v in result.items() if k != "files"}
    files = result["files"]
    if len(files) != len(paths):
        raise RuntimeError(f"the Excalidraw harness returned {len(files)} results for {len(paths)} files")
    for f in files:
        f["meta"] = meta
    return files


def mermaid_unavailable_reason() -> Optional[str]:
    """Why the harness cannot convert Mermaid here (its ``mermaid.mjs`` or the package is missing), or None."""
    reason = unavailable_reason()
    if reason is not None:
        return reason
    d = harness_dir()
    assert d is not None
    if not (d / "mermaid.mjs").is_file():
        return f"the Excalidraw harness in {d} has no mermaid.mjs (bash tools/setup-harnesses.sh installs it)"
    if not (d / "node_modules" / "@excalidraw" / "mermaid-to-excalidraw").is_dir():
        return f"the Excalidraw harness in {d} has no @excalidraw/mermaid-to-excalidraw (run npm ci there)"
    return None


def run_mermaid(paths: Iterable[Path], *, timeout: float = 600.0) -> List[Dict[str, Any]]:
    """What Excalidraw's own Mermaid import makes of each ``.mmd`` file, in one browser session.

    Returns
    -------
    list of dict
        Per file: ``ok``, ``error``, ``skeleton`` (the package's element skeletons: id,
        type, groupIds, label, start, end, arrowheads, stroke), ``elements`` (what
        ``convertToExcalidrawElements`` makes of them, opened in the editor, with bounds),
        ``consoleErrors``; and ``meta`` (package versions).
    """
    paths = [Path(p) for p in paths]
    reason = mermaid_unavailable_reason()
    if reason is not None:
        raise RuntimeError(reason)
    d = harness_dir()
    assert d is not None
    with tempfile.TemporaryDirectory(prefix="mermaid-harness-") as tmp:
        out = Path(tmp) / "out.json"
        cmd = ["node", str(d / "mermaid.mjs"), *[str(p) for p in paths], "--seed", str(SEED), "--out", str(out)]
        proc = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=timeout)
        if not out.is_file():
            raise RuntimeError(f"the Mermaid harness failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
        result = json.loads(out.read_text(encoding="utf-8"))
    meta = {k: v for k, v in result.items() if k != "files"}
    for f in result["files"]:
        f["meta"] = meta
    return list(result["files"])


class HarnessCache:
    """Harness results per file for one test session (Chromium starts once per batch).

    Examples
    --------
    >>> cache = HarnessCache()            # doctest: +SKIP
    >>> cache.results([a, b])[0]["ok"]     # doctest: +SKIP
    True
    """

    def __init__(self) -> None:
        self._done: Dict[Path, Dict[str, Any]] = {}

    def results(self, paths: Iterable[Path]) -> List[Dict[str, Any]]:
        """Results for ``paths`` in order, running the harness once for those not seen yet."""
        keys = [Path(p).resolve() for p in paths]
        todo = list(dict.fromkeys(k for k in keys if k not in self._done))
        if todo:
            for k, r in zip(todo, run_harness(todo)):
                self._done[k] = r
        return [self._done[k] for k in keys]

    def result(self, path: Path) -> Dict[str, Any]:
        """The result for one file."""
        return self.results([path])[0]


# ------------------------------------------------------------------ comparison

#: Element types Excalidraw bounds as a box (rotated about its center when angled).
BOX_TYPES = frozenset({"rectangle", "ellipse", "diamond", "frame", "magicframe", "image", "embeddable", "iframe"})
#: Element kinds compared, with (target fraction, rule) for each; see :func:`within`.
KINDS = ("rectangle-like", "rotated", "linear", "freedraw", "text")


def element_kind(el: Dict[str, Any]) -> Optional[str]:
    """The kind an element's bounds are measured under (None for types not compared).

    ``rectangle-like``: unrotated box types; ``rotated``: box types with an angle;
    ``linear``: lines and arrows (any angle); ``freedraw``; ``text`` (any angle).
    """
    t = el.get("type")
    if t == "text":
        return "text"
    if t in ("line", "arrow"):
        return "linear"
    if t == "freedraw":
        return "freedraw"
    if t in BOX_TYPES:
        return "rotated" if el.get("angle") else "rectangle-like"
    return None


def reference_bounds(el: Dict[str, Any]) -> List[float]:
    """Excalidraw's bounds to compare a node with.

    Lines, arrows and freedraw use ``shapeBounds`` (the element alone, as drawn, without
    a bound label, which spatialobs keeps as the arrow's text rather than geometry);
    everything else ``bounds``.
    """
    return list(el.get("shapeBounds") or el["bounds"])


def bounds_error(ours: Iterable[float], theirs: Iterable[float]) -> float:
    """Largest absolute difference between two ``[x0, y0, x1, y1]`` boxes."""
    return max(abs(float(a) - float(b)) for a, b in zip(ours, theirs))


def within(kind: str, ours: Iterable[float], theirs: Iterable[float]) -> bool:
    """Whether our box agrees with Excalidraw's under the kind's tolerance.

    ``rectangle-like`` and ``rotated``: 1 unit; ``linear`` and ``freedraw``: 2 units
    (rough.js draws strokes up to about 2 units off their points); ``text``: per axis
    max(4, 10 % of Excalidraw's width or height).
    """
    a = [float(v) for v in ours]
    b = [float(v) for v in theirs]
    if kind == "text":
        tx = max(4.0, 0.1 * (b[2] - b[0]))
        ty = max(4.0, 0.1 * (b[3] - b[1]))
        return abs(a[0] - b[0]) <= tx and abs(a[2] - b[2]) <= tx and abs(a[1] - b[1]) <= ty and abs(a[3] - b[3]) <= ty
    tol = 2.0 if kind in ("linear", "freedraw") else 1.0
    return bounds_error(a, b) <= tol


def compare_bounds(canvas: Any, result: Dict[str, Any]) -> Dict[str, List[Dict[str, Any]]]:
    """Our page bounds against Excalidraw's, per kind, for every live element that is a node.

    Parameters
    ----------
    canvas : Canvas
        The canvas whose nodes carry the elements' ids.
    result : dict
        One file's harness result.

    Returns
    -------
    dict
        kind -> rows ``{id, type, angle, ours, theirs, error, ok}``; kind ``"not a node"``
        lists elements without a node (text bound to a container becomes the container's
        text).
    """
    out: Dict[str, List[Dict[str, Any]]] = {k: [] for k in (*KINDS, "not a node")}
    for el in result["elements"]:
        if el.get("isDeleted"):
            continue
        kind = element_kind(el)
        if kind is None:
            continue
        if el["id"] not in canvas.nodes:
            out["not a node"].append({"id": el["id"], "type": el["type"], "containerId": el.get("containerId")})
            continue
        ours = canvas.page_bounds(el["id"])
        theirs = reference_bounds(el)
        out[kind].append({"id": el["id"], "type": el["type"], "angle": el.get("angle", 0), "ours": list(ours),
                          "theirs": theirs, "error": bounds_error(ours, theirs), "ok": within(kind, ours, theirs)})
    return out
