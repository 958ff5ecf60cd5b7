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


#: Test modules that each start a Ray cluster on this machine: one pytest-xdist worker runs them
#: one after the other (two clusters starting at once on a small machine can miss Ray's startup limit).
RAY_MODULES = ("tests/test_distributed.py", "tests/test_distributed_nodes.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``pytest -n N --dist loadgroup``: one worker per test module (its module fixtures built once).

    Each test joins the group of its module (the Ray modules one group between them), so a
    module's browsers, applications and stores are started once, as in a serial run.
    """
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group("ray" if module in RAY_MODULES else module))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real-data folder; skips the test with a reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (it lives beside the checkout as shared/data)")
    return SHARED_DATA
