"""The pieces of a :class:`~spatialobs.screen.state_index.StateIndex` that its file format also builds.

The index (:mod:`~spatialobs.screen.state_index`) and its reader (``_persist``) both
use them, so they sit below both.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from spatialobs import _core

#: Upper bound of ``top_k``, ``ef_search`` and ``ef_construction``: faiss sizes a
#: search's heaps by ``ef_search`` (which defaults to ``top_k``) and spends time in
#: proportion, so 2^31 would allocate gigabytes and take minutes per query.
MAX_SEARCH = 1 << 16

# Observation and state ids are stored as int32.
MAX_OBSERVATIONS = 2**31 - 1


class _Grow:
    """An integer array that grows by doubling (appends in amortized O(1)).

    Observation and state ids are int32 (the index holds fewer than
    ``MAX_OBSERVATIONS``); hit counts are int64.

    Examples
    --------
    >>> g = _Grow([4, 5])
    >>> g.append(6)
    >>> g.view().tolist(), len(g)
    ([4, 5, 6], 3)
    """

    def __init__(self, data: Optional[npt.ArrayLike] = None, dtype: Any = np.int32) -> None:
        data = np.empty(0, dtype=dtype) if data is None else np.asarray(data, dtype=dtype)
        self._buf = np.empty(max(16, len(data) + len(data) // 2), dtype=dtype)
        self._buf[: len(data)] = data
        self._n = len(data)

    def append(self, v: int) -> None:
        if self._n == len(self._buf):
            new = np.empty(2 * len(self._buf), dtype=self._buf.dtype)
            new[: self._n] = self._buf[: self._n]
            self._buf = new
        self._buf[self._n] = v
        self._n += 1

    def view(self) -> npt.NDArray[np.integer]:
        return self._buf[: self._n]

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        return int(self._buf.nbytes)


class _Partition:
    """The retrieval indexes of one metadata value; local id i is observation obs[i]."""

    def __init__(self, dim: int, hnsw_m: int, ef_construction: int, ef_search: int, hnsw: Any = None) -> None:
        import faiss

        self.bm25 = _core.Bm25Index()
        if hnsw is None:
            hnsw = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efConstruction = ef_construction
        hnsw.hnsw.efSearch = ef_search
        self.hnsw = hnsw
        self.obs = _Grow()

    def ids(self, rows: Optional[npt.NDArray[np.int64]] = None) -> npt.NDArray[np.int64]:
        """The observation ids of local ``rows`` (all when None), as the int64 the core's verification takes."""
        obs = self.obs.view()
        return (obs if rows is None else obs[rows]).astype(np.int64)
