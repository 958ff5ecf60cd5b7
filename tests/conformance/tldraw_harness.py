"""Run the tldraw ground-truth harness (the real tldraw 5.4.2 editor in headless Chromium) from tests.

The harness is a Node project installed once (``npm ci`` and ``node build.mjs``);
it loads a ``.tldr`` file the way File › Open does and prints what the editor made
of it as JSON (``ok``, ``load.error``, ``warnings``, ``browserLogs``, shapes, ...).
Nothing is downloaded here.

Where it is: the directory named by ``SPATIALOBS_TLDRAW_HARNESS`` (with ``run.mjs``
and an installed ``node_modules``). One run costs a few seconds, so callers batch
their edits into few files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

from tests.conformance.harness_common import chromium_path, installed_dir

#: Environment variable naming an installed harness directory.
ENV_VAR = "SPATIALOBS_TLDRAW_HARNESS"
#: Seed for the page's random numbers (ids made by migrations repeat).
SEED = 1
#: Seconds one run may take (a 2,500-shape file takes about 15).
TIMEOUT = 120


def harness_dir() -> Optional[Path]:
    """``$SPATIALOBS_TLDRAW_HARNESS``, else ``.harness/tldraw-harness`` when installed, else None."""
    return installed_dir(ENV_VAR, "tldraw-harness")


def unavailable_reason() -> Optional[str]:
    """Why the harness cannot run here, or None when it can."""
    h = harness_dir()
    if h is None:
        return (f"${ENV_VAR} is not set and .harness/tldraw-harness is not installed "
                "(bash tools/setup-harnesses.sh installs it)")
    if not (h / "run.mjs").is_file():
        return f"${ENV_VAR}={h} has no run.mjs"
    if not (h / "node_modules").is_dir():
        return f"${ENV_VAR}={h} has no node_modules (run npm ci there)"
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not Path(chromium_path()).exists():
        return f"no Chromium at {chromium_path()} (set CHROMIUM_PATH)"
    return None


def run_file(path: Path, *extra: str) -> Dict[str, Any]:
    """The harness's JSON for one file (``ok`` false and ``load.error`` when tldraw refuses it)."""
    h = harness_dir()
    if h is None:
        raise RuntimeError(unavailable_reason() or "no harness")
    proc = subprocess.run(["node", str(h / "run.mjs"), str(path), "--seed", str(SEED), *extra],
                          capture_output=True, text=True, timeout=TIMEOUT)
    try:
        out: Dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"harness gave no JSON for {path} (exit {proc.returncode}): {proc.stderr[-2000:]}") from None
    return out


def run_files(paths: Iterable[Path], *extra: str) -> List[Dict[str, Any]]:
    """:func:`run_file` for each path, in order (one Chromium run each)."""
    return [run_file(p, *extra) for p in paths]


def console_errors(result: Dict[str, Any]) -> List[str]:
    """Browser console errors and uncaught page errors of a harness result (entries ``error: ...``)."""
    return [e for e in result.get("browserLogs") or [] if isinstance(e, str) and e.startswith(("error:", "pageerror:"))]


def refusal(result: Dict[str, Any]) -> Optional[str]:
    """Why tldraw refused the file (its load error as text), or None when it loaded."""
    err = (result.get("load") or {}).get("error")
    if result.get("ok") and not err:
        return None
    return json.dumps(err)[:2000] if err else "not ok"
