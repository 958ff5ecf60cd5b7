"""Shared fixtures: the real data folder beside the checkout."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from hypothesis import settings

from tests.gates import gates
from tests.timeouts import pytest_configure, pytest_runtest_protocol  # noqa: F401 - the hooks of every test's limit

# CI explores the same examples on every run (a failure there is reproducible from the log);
# elsewhere each run draws new ones, so developers keep finding new edge cases.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

#: ../shared/data beside the checkout (CI lays it there too).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


#: What a test module names when its outcome depends on what a newcomer's clean clone lacks: the real
#: data folder beside the checkout (the fixture, the file lists, the path, tests/strategies.SHARED_TLDR) or
#: the real editors' harnesses.
_READS_ENVIRONMENT = re.compile(r"\b(?:shared_data|shared_files|SHARED_DATA|SHARED_TLDR)\b|_harness\b|_HARNESS\b")
#: Modules that check the checkout itself (the README's examples, the packaging, the docs' links).
_CHECKS_CHECKOUT = {"test_readme.py", "test_packaging.py", "test_docs.py", "test_serve_readme.py"}


def reads_environment(path: Path) -> bool:
    """Whether the test module at ``path`` reads what a newcomer's clean clone lacks (or checks the checkout)."""
    if path.name in _CHECKS_CHECKOUT:
        return True
    return path.suffix == ".py" and bool(_READS_ENVIRONMENT.search(path.read_text(encoding="utf-8")))


def pytest_collection_modifyitems(config: Any, items: List[Any]) -> None:
    """Mark ``environment`` every test of a module that reads the shared folder or a harness.

    CI runs the whole suite once with the real data and the harnesses beside the checkout, then
    these tests again in a newcomer's clean clone without them (``pytest -m environment``): each must
    skip with its reason, or pass, there too. The other tests do not read what the two runs differ
    in, so running them a second time would check nothing new. Nor do the tests of such a module
    marked ``generated`` (their input is drawn or built by the test, never read): they are left out.
    """
    reads: Dict[Path, bool] = {}
    for item in items:
        path = Path(str(item.fspath))
        if path not in reads:
            reads[path] = reads_environment(path)
        if reads[path] and item.get_closest_marker("generated") is None:
            item.add_marker(pytest.mark.environment)


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


@pytest.fixture(scope="session", autouse=True)
def carried_at_every_size() -> Iterator[None]:
    """Carry derivations and page states from the previous version on canvases of every size:
    the three size gates at 0 for the session (see ``tests/gates.py``; its tests put them back)."""
    with gates(0, 0):
        yield
