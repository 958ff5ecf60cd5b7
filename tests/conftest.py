"""Shared fixtures: the real data folder beside the checkout."""

from __future__ import annotations

from pathlib import Path

import os

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


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real-data folder; skips the test with a reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (it lives beside the checkout as shared/data)")
    return SHARED_DATA
