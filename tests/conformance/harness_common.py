"""What the two real-editor runners share: where a harness is installed, and the browser.

A harness is found through its environment variable, else in ``.harness/NAME`` (where
``tools/setup-harnesses.sh`` installs it), else in ``tools/NAME`` of this checkout when
its ``node_modules`` exists.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]


def chromium_path() -> str:
    """The browser the harnesses launch (``$CHROMIUM_PATH``, else Debian's chromium)."""
    return os.environ.get("CHROMIUM_PATH") or "/usr/bin/chromium"


def installed_dir(env_var: str, name: str) -> Optional[Path]:
    """The harness directory to use, or None when none is configured or installed.

    ``$env_var`` when set (even if it is not usable, so that the runner can say why),
    else the first of ``.harness/NAME`` and ``tools/NAME`` whose ``node_modules`` exists.
    """
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    for d in (ROOT / ".harness" / name, ROOT / "tools" / name):
        if (d / "node_modules").is_dir():
            return d
    return None
