"""Skip-or-fail rule for the real-application driver tests."""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Optional

import pytest


def require(reason: Optional[str]) -> None:
    """Skip with ``reason`` when a driver cannot run here; in CI (``CI=true``) fail instead."""
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but the driver cannot run: {reason}")
    pytest.skip(reason)


def session_processes(tmp_prefix: str) -> list:
    """Command lines of running (not zombie) processes whose arguments or environment mention ``tmp_prefix``."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().split(b")")[-1].split()[0] == b"Z":
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if tmp_prefix.encode() in env or tmp_prefix.encode() in cmd:
            out.append(cmd.replace(b"\0", b" ").decode(errors="replace"))
    return out


def wait_for(probe: Callable[[], Any], what: str, timeout: float = 15.0, interval: float = 0.1) -> Any:
    """Poll ``probe()`` until it returns something truthy (returned); fail, saying ``what`` was
    awaited and for how long, after ``timeout`` seconds.

    For a condition of a real application, a browser or a server, which settles in its own
    time: a bounded poll instead of a fixed sleep, and a clear message when it never comes.

    Examples
    --------
    >>> wait_for(lambda: 42, "the answer")
    42
    """
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() >= deadline:
            pytest.fail(f"waited {timeout:g} s for {what}; it never came")
        time.sleep(interval)
