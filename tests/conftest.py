"""Shared fixtures: the real data folder beside the checkout."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import settings

from tests.timeouts import pytest_configure, pytest_runtest_protocol  # noqa: F401 - the hooks of every test's limit

# CI explores the same examples on every run (a failure there is reproducible from the log);
# elsewhere each run draws new ones, so developers keep finding new edge cases.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

#: ../shared/data beside the checkout (CI lays it there too).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_files(sub: str, pattern: str = "*") -> list[Path]:
    """Files of ../shared/data/<sub> matching pattern, sorted; [] when the folder is absent."""
    folder = SHARED_DATA / sub
    return sorted(folder.glob(pattern)) if folder.is_dir() else []


@pytest.fixture(scope="module")
def one_ray_cluster_at_a_time() -> Iterator[None]:
    """Hold a lock of this machine while a module's Ray cluster runs.

    Under ``pytest -n N`` two workers could start Ray clusters at once, and on a small
    machine one of them can miss Ray's startup limit; the second waits for the first.
    """
    try:
        import fcntl
    except ImportError:  # Windows: no lock (the Ray tests' clusters may then start together)
        yield
        return
    with open(Path(tempfile.gettempdir()) / "spatialobs-tests-ray.lock", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real-data folder; skips the test with a reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (it lives beside the checkout as shared/data)")
    return SHARED_DATA
