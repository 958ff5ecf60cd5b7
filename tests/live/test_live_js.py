"""The browser clients' own tests (``npm test`` in live/: node --test), run from the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

LIVE = Path(__file__).resolve().parents[2] / "live"


def test_the_clients_unit_tests_pass():
    reason = None
    if shutil.which("node") is None:
        reason = "Node is not installed (the live clients' tests run under node --test)"
    elif not (LIVE / "node_modules" / "@spatialobs" / "live-sync").exists():
        reason = "live/node_modules is not installed (cd live && npm ci)"
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(reason)
    proc = subprocess.run(["node", "--test", "test/"], cwd=LIVE, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout
