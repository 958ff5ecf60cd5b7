"""Every test is bounded, and a hang fails fast with the stack of the stuck code.

Two limits per test:

1. pytest-timeout's (``timeout`` in ``pyproject.toml``: a default for every test;
   ``@pytest.mark.timeout(N)`` for the few that need longer, each saying why). At the
   limit its signal interrupts the test, which fails with the stack of the code it was
   running in, and the run goes on.
2. A hard stop :data:`GRACE` seconds later (``SPATIALOBS_TEST_HARD_GRACE`` changes it), for
   code a signal cannot interrupt (a C loop that holds the interpreter lock):
   :mod:`faulthandler`, from a thread of its own, prints every thread's stack and ends
   the run with status 1.

``tests/conftest.py`` takes these hooks in; a pytest run elsewhere can load them with
``-p tests.timeouts``.
"""

from __future__ import annotations

import faulthandler
import os
import sys
from typing import Any, Generator, List

import pytest

#: The duplicate of the run's stderr made before any test ran (what the hard stop writes to).
_STDERR: List[int] = []


#: Seconds past a test's timeout after which the hard stop ends the run.
GRACE = float(os.environ.get("SPATIALOBS_TEST_HARD_GRACE", "30"))


def pytest_configure(config: Any) -> None:
    if not _STDERR:
        _STDERR.append(os.dup(sys.stderr.fileno()))


def limit_of(item: Any) -> float:
    """A test's pytest-timeout limit in seconds (0: none): its marker, else ``--timeout``, else the ini default."""
    marker = item.get_closest_marker("timeout")
    if marker is not None:
        value = marker.kwargs.get("timeout", marker.args[0] if marker.args else None)
    else:
        value = item.config.getoption("timeout", None)
        if value is None:
            value = item.config.getini("timeout")
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Generator[None, None, None]:
    limit = limit_of(item)
    if limit > 0 and _STDERR:
        faulthandler.dump_traceback_later(limit + GRACE, exit=True, file=_STDERR[0])
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
    else:
        yield
