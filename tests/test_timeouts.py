"""Every test's limit (``tests/timeouts.py``): a hung test fails within it, showing where it is stuck.

Each check runs a tiny test file that hangs in a pytest of its own, under the project's
configuration (``pyproject.toml``) with short limits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HUNG_IN_PYTHON = '''
import time


def stuck_in_python():
    while True:
        time.sleep(0.01)


def test_hangs():
    stuck_in_python()


def test_runs_after_it():
    pass
'''

HUNG_IN_C = '''
def test_hangs_in_c():
    sum(range(10 ** 13))  # one C loop that holds the interpreter lock: no signal handler runs
'''


def _run_hung(tmp_path: Path, source: str, *args: str, **env: str) -> "tuple[subprocess.CompletedProcess, float]":
    (tmp_path / "test_hung.py").write_text(source)
    (tmp_path / "conftest.py").write_text(
        "from tests.timeouts import pytest_configure, pytest_runtest_protocol  # noqa: F401\n")
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
         "-p", "no:cacheprovider", "-q", *args, str(tmp_path / "test_hung.py")],
        cwd=str(tmp_path), capture_output=True, text=True, timeout=120,
        # the inner run is serial whatever the outer run's PYTEST_ADDOPTS (e.g. CI's -n 2) ask
        env=dict(os.environ, PYTHONPATH=str(ROOT), PYTEST_ADDOPTS="", **env))
    return proc, time.monotonic() - start


def test_the_project_bounds_every_test(pytestconfig):
    assert float(pytestconfig.getini("timeout")) > 0
    assert pytestconfig.getini("timeout_method") == "signal"


def test_a_hung_test_fails_at_its_limit_with_its_stack_and_the_run_goes_on(tmp_path):
    proc, took = _run_hung(tmp_path, HUNG_IN_PYTHON, "--timeout=2")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Timeout (>2.0s) from pytest-timeout" in out, out
    assert "in stuck_in_python" in out or "stuck_in_python()" in out, out  # the stack of the stuck code
    assert "1 failed, 1 passed" in out, out
    assert took < 60, took  # two seconds and the start of a pytest, not the length of the hang


def test_code_no_signal_reaches_is_stopped_with_every_threads_stack(tmp_path):
    # the limit's signal cannot interrupt a C loop; the hard stop (faulthandler) ends the run
    proc, took = _run_hung(tmp_path, HUNG_IN_C, "--timeout=1", SPATIALOBS_TEST_HARD_GRACE="2")
    assert proc.returncode != 0
    assert "Timeout (0:00:03)!" in proc.stderr, proc.stderr
    assert "most recent call first" in proc.stderr and "in test_hangs_in_c" in proc.stderr, proc.stderr
    assert took < 60, took
