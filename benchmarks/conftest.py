"""Shared benchmark data: seeded canvas-like boxes, cached per size."""

from __future__ import annotations

import gc
import os
import sys
from functools import lru_cache
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spatialobs.synth import CanvasBoxes, canvas_boxes  # noqa: E402

#: Largest n to run; CI lowers it to keep the run short (results are still checked).
MAX_N = int(os.environ.get("SPATIALOBS_BENCH_MAX_N", "1000000"))


def sizes(*ns: int) -> list:
    """The sizes at most MAX_N, as pytest params."""
    return [pytest.param(n, id=f"n={n:.0e}".replace("e+0", "e")) for n in ns if n <= MAX_N]


@lru_cache(maxsize=None)
def data(n: int) -> CanvasBoxes:
    return canvas_boxes(n, seed=42)


@lru_cache(maxsize=None)
def shapely_geoms(n: int):
    import peers

    return peers.geoms(data(n).boxes)


@pytest.fixture(autouse=True, scope="module")
def _drop_module_caches(request: pytest.FixtureRequest):
    """Drop a benchmark module's cached pages when the module ends.

    The suite runs in one process. Without this, each module's ``lru_cache``d pages and indexes stay
    alive to its end (2.5 million objects by the last module at 10^5), and every full pass of the
    collector in a later module walks them all (1.3 s each by then). The shared boxes of ``data``
    above stay: they are a few numpy arrays, used by several modules.
    """
    yield
    for obj in list(vars(request.module).values()):
        if getattr(obj, "__module__", None) == request.module.__name__ and callable(getattr(obj, "cache_clear", None)):
            obj.cache_clear()
    gc.collect()
