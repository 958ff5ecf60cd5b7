"""Exploration and screen dedup past one machine, on Ray (``pip install "spatialobs[ray]"``).

* :mod:`~spatialobs.distributed.shard`: the state index split by metadata
  partition into shards, each with a write-ahead log and checkpoints;
* :mod:`~spatialobs.distributed.graph`: the graph statistics every worker reads
  and updates, written through to the graph store;
* :mod:`~spatialobs.distributed.explorer`: a worker owning one driver, two calls
  and one wait per step;
* :mod:`~spatialobs.distributed.runtime`: the Ray actors, :func:`explore_ray` and
  :func:`dedup_ray` (the only module that needs Ray).

Nothing here is imported by ``import spatialobs``, and importing this package
does not import Ray.

>>> from spatialobs.distributed import shard_of
>>> shard_of(("desktop", "100%", "notepad"), 1)
0
"""

from __future__ import annotations

from typing import Any

from spatialobs.distributed.explorer import Explorer, LocalLinks
from spatialobs.distributed.graph import GraphLog
from spatialobs.distributed.shard import IndexShard, shard_of

__all__ = ["IndexShard", "shard_of", "GraphLog", "Explorer", "LocalLinks", "explore_ray", "dedup_ray"]


def __getattr__(name: str) -> Any:
    # The Ray entry points, imported on first use (runtime imports Ray only when called).
    if name in ("explore_ray", "dedup_ray", "RayExploration", "ray_runtime"):
        from spatialobs.distributed import runtime

        return getattr(runtime, name)
    raise AttributeError(f"module 'spatialobs.distributed' has no attribute {name!r}")
