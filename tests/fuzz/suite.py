"""The checks both fuzz targets run in the normal test suite: a fixed budget and the kept findings.

``target`` is a target module of the runner (:mod:`tests.fuzz.targets` for screens and
index files, :mod:`tests.fuzz.canvas_targets` for canvases and op replies).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import ModuleType

from tests.fuzz import screens


def check_budget(target: ModuleType, budget: int, seed: int) -> None:
    """Run ``budget`` inputs of ``target``: every kind is drawn, nothing escapes, crashes or hangs."""
    figures = screens.run(budget, seed=seed, jobs=1, timeout=60.0, target=target.__name__.rsplit(".", 1)[-1])
    assert figures.inputs == budget, figures.as_dict()
    assert set(figures.by_kind) == set(target.KINDS)
    assert not figures.escapes, figures.as_dict()
    assert not figures.crashes and not figures.hangs, figures.as_dict()


#: Seconds a kept finding may run: the tests that run them carry it as their timeout
#: (``@pytest.mark.timeout(KEPT_LIMIT)``), so a finding that hangs again is stopped there,
#: failing with the stack of the code it is stuck in (see ``tests/timeouts.py``).
KEPT_LIMIT = 30.0


def check_kept(target: ModuleType, path: Path) -> None:
    """A kept finding of ``target`` runs to a SpatialObsError or success (its test bounds the time)."""
    kind, payload = target.load_case(path)
    with tempfile.TemporaryDirectory() as d:
        target.run(kind, payload, d)  # a SpatialObsError is fine; anything else fails here
