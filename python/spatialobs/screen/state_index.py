"""The hybrid state index (DESIGN §7): merge near-duplicate screens into states.

Pipeline of :meth:`StateIndex.add`:

1. **Exact fast path.** Metadata and both atom sets identical to an indexed
   observation: the screen is that observation again (a C++ hash table whose hits
   are confirmed by comparing the sets).
2. **Eligibility.** Only observations with exactly the same metadata
   (display mode, text-size bin, app) are candidates; each metadata value has its
   own BM25 and HNSW index.
3. **Retrieval.** BM25 (Lucene variant, over the union of both atom sets) top-k and
   HNSW (faiss, inner product on L2-normalized text vectors) top-k.
4. **Fusion.** Reciprocal Rank Fusion, ``sum 1 / (rrf_k + rank)`` with ranks from
   1; ties go to the older observation.
5. **Verification.** The fused top ``top_k`` are scored exactly in C++ (two-set
   Jaccard, see :func:`~spatialobs.screen.jaccard_score`).
6. **Decision.** Merge into the state of the best-scoring candidate whose score is
   at or above ``tau`` (decided by integer cross-multiplication; ties to the older
   observation), else open a new state. Every unique observation is indexed and
   belongs to exactly one state.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union, cast

import numpy as np
import numpy.typing as npt

from spatialobs import _core
from spatialobs._errors import InvalidInputError, OutOfRangeError
from spatialobs.screen.embed import HashedNgramEmbedder
from spatialobs.screen import _index_parts
from spatialobs.screen._index_parts import MAX_SEARCH, _Grow, _Partition
from spatialobs.screen.features import Features, as_threshold, featurize
from spatialobs.screen.limits import echo
from spatialobs.screen.model import Screen, ScreenMeta

__all__ = ["Match", "Hit", "StateIndex", "rrf_fuse", "DENSE_K"]

MetaKey = Tuple[Optional[str], Optional[str], Optional[str]]

#: Default number of dense (HNSW) candidates. Measured on the synthetic corpus
#: (benchmarks/README.md): at 10^5 observations an HNSW search for 32 neighbours
#: (efSearch 32) costs a fraction of one for 200, and the quality report
#: (precision, false merges, retrieval recall, agreement with the exhaustive
#: decision) is the same as with 200; BM25 still gives ``top_k``.
DENSE_K = 32


@dataclass(frozen=True)
class Match:
    """Outcome of :meth:`StateIndex.add`.

    ``state`` and ``observation`` are the ids the screen now maps to; ``new_state``
    says a state was opened; ``exact`` says the screen was identical to an indexed
    observation (nothing new was indexed). ``score`` is the verified score of the
    chosen observation: 1.0 for an exact hit, the merge score for a merge, and for a
    new state the best score seen below ``tau`` (0.0 when there was no candidate).
    """

    state: int
    observation: int
    new_state: bool
    exact: bool
    score: float


@dataclass(frozen=True)
class Hit:
    """One verified candidate of :meth:`StateIndex.query`."""

    state: int
    observation: int
    score: float
    above_tau: bool


def rrf_fuse(lists: Sequence[npt.NDArray[np.int64]], k: int = 60) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Reciprocal Rank Fusion of ranked id lists: ``score(d) = sum 1 / (k + rank)``, rank from 1.

    Returns the ids by fused score descending, ties to the lower id, and their
    scores. An id repeated within one list counts at each of its ranks; an id's
    contributions are added largest first, so equal ranks give bit-equal sums
    (one ``_core`` call).

    Examples
    --------
    >>> import numpy as np
    >>> ids, _ = rrf_fuse([np.array([3, 1]), np.array([1, 2])])
    >>> ids.tolist()
    [1, 3, 2]
    """
    arrays = [np.ascontiguousarray(np.asarray(x, dtype=np.int64).ravel()) for x in lists]
    ids, scores = _core.rrf_fuse(arrays, float(k))
    return ids, scores


class _RWLock:
    """Many readers or one writer; a waiting writer blocks new readers.

    ``acquire_read``/``release_read`` and ``acquire_write``/``release_write``
    are the lock without a context manager (the add path takes it three
    times per call); :meth:`read` and :meth:`write` wrap them.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._waiting = 0

    def acquire_read(self) -> None:
        with self._cond:
            while self._writer or self._waiting:
                self._cond.wait()
            self._readers += 1

    def release_read(self) -> None:
        with self._cond:
            self._readers -= 1
            if not self._readers:
                self._cond.notify_all()

    def acquire_write(self) -> None:
        with self._cond:
            self._waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._waiting -= 1
            self._writer = True

    def release_write(self) -> None:
        with self._cond:
            self._writer = False
            self._cond.notify_all()

    @contextmanager
    def read(self) -> Iterator[None]:
        self.acquire_read()
        try:
            yield
        finally:
            self.release_read()

    @contextmanager
    def write(self) -> Iterator[None]:
        self.acquire_write()
        try:
            yield
        finally:
            self.release_write()


class StateIndex:
    """Merge near-duplicate screens into states (see the module docstring for the pipeline).

    Parameters
    ----------
    tau : float or Fraction, default 0.93
        Merge threshold on the two-set Jaccard score, compared exactly (a float is
        read as its shortest decimal: 0.93 is 93/100).
    top_k : int, default 200
        Candidates taken from each retriever and verified after fusion.
    rrf_k : int, default 60
        The RRF constant.
    grid : int, default 30
        Quantization lattice for atoms.
    embedder : Embedder, optional
        Dense text embedder; default :class:`HashedNgramEmbedder` (256 dims).
    mask_volatile : bool, default False
        Mask digit runs in texts before hashing and embedding.
    candidates : {"hybrid", "exhaustive"}, default "hybrid"
        ``"exhaustive"`` verifies every eligible observation instead of the
        retrieved ones: the exact reference that retrieval recall is measured
        against, and the brute-force baseline.
    dense_k : int, optional
        Candidates taken from HNSW (default ``min(top_k, DENSE_K)``, 32); BM25
        gives ``top_k``. See :data:`DENSE_K` for how the default was chosen.
    hnsw_m, ef_construction, ef_search : int
        HNSW parameters (defaults 16, 40 and ``dense_k``); the raw faiss objects are
        reachable with :meth:`hnsw`. ``top_k``, ``ef_construction`` and
        ``ef_search`` are at most :data:`MAX_SEARCH` (65,536), ``hnsw_m`` at most
        1,024, ``grid`` at most 65,535. M = 16 rather than 32 keeps the synthetic
        quality report unchanged (retrieval recall and decision agreement 1.0)
        and makes an HNSW search and add about a third cheaper. A saved index
        keeps the parameters it was built with.

    Thread safety: :meth:`query`, :meth:`save` and the accessors may run in many
    threads at once; :meth:`add` is serialized and excludes them while it runs.

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen
    >>> ix = StateIndex()
    >>> s = Screen([Element((0, 0, 100, 40), "Button", "Sign in")], 400, 800)
    >>> ix.add(s)
    Match(state=0, observation=0, new_state=True, exact=False, score=0.0)
    >>> ix.add(s).exact
    True
    """

    def __init__(
        self,
        tau: Union[float, Fraction, str] = 0.93,
        top_k: int = 200,
        rrf_k: int = 60,
        grid: int = 30,
        embedder: Any = None,
        *,
        mask_volatile: bool = False,
        candidates: str = "hybrid",
        hnsw_m: int = 16,
        ef_construction: int = 40,
        ef_search: Optional[int] = None,
        dense_k: Optional[int] = None,
    ) -> None:
        self._tau = as_threshold(tau)
        # Upper bounds: what the kernels and faiss take (an int32, the grid's 16 bits,
        # MAX_SEARCH for what sizes a search).
        for name, v, lo, hi in (("top_k", top_k, 1, MAX_SEARCH), ("rrf_k", rrf_k, 0, 2**31 - 1),
                                ("grid", grid, 1, 65535), ("hnsw_m", hnsw_m, 2, 2**10),
                                ("ef_construction", ef_construction, 1, MAX_SEARCH)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
                raise InvalidInputError(f"{name} must be an integer >= {lo} and <= {hi}, got {echo(v)}")
        if candidates not in ("hybrid", "exhaustive"):
            raise InvalidInputError(f"candidates must be 'hybrid' or 'exhaustive', got {echo(candidates)}")
        if ef_search is not None and (isinstance(ef_search, bool) or not isinstance(ef_search, int)
                                      or not 1 <= ef_search <= MAX_SEARCH):
            raise InvalidInputError(f"ef_search must be an integer from 1 to {MAX_SEARCH}, got {echo(ef_search)}")
        if dense_k is not None and (isinstance(dense_k, bool) or not isinstance(dense_k, (int, np.integer))
                                    or not 1 <= dense_k <= MAX_SEARCH):
            raise InvalidInputError(f"dense_k must be an integer from 1 to {MAX_SEARCH}, got {echo(dense_k)}")
        self.top_k = int(top_k)
        self.dense_k = int(dense_k) if dense_k is not None else min(self.top_k, DENSE_K)
        self.rrf_k = int(rrf_k)
        self.grid = int(grid)
        self.mask_volatile = bool(mask_volatile)
        self.candidates = candidates
        self.hnsw_m = int(hnsw_m)
        self.ef_construction = int(ef_construction)
        self._ef_search = int(ef_search) if ef_search is not None else self.dense_k
        if embedder is None:
            embedder = HashedNgramEmbedder()
        for attr in ("dim", "embed", "name"):
            if not hasattr(embedder, attr):
                raise InvalidInputError(f"embedder must have {attr!r} (see spatialobs.screen.Embedder)")
        self.embedder = embedder
        self._store = _core.AtomStore()
        self._metas: List[MetaKey] = []
        self._meta_ids: Dict[MetaKey, int] = {}
        self._parts: List[_Partition] = []
        # Per observation and per state, flat arrays only (no Python object per
        # observation): a state's members are a chain from _first through _next.
        self._state_of = _Grow()
        self._next = _Grow()  # observation -> the next one of its state, or -1
        self._first = _Grow()  # state -> its first observation
        self._last = _Grow()  # state -> its last observation
        self._hits = _Grow(dtype=np.int64)  # observation -> how many added screens mapped to it
        self._screens = 0
        self._lock = _RWLock()
        self._add_lock = threading.Lock()

    # -- accessors -------------------------------------------------------------

    @property
    def tau(self) -> Fraction:
        """The merge threshold as an exact fraction."""
        return self._tau

    def __len__(self) -> int:
        """Number of unique observations indexed."""
        return len(self._state_of)

    @property
    def num_states(self) -> int:
        return len(self._first)

    @property
    def num_screens(self) -> int:
        """Screens added, exact duplicates included."""
        return self._screens

    def members(self, state: int) -> List[int]:
        """Observation ids of a state, in the order they were indexed."""
        with self._lock.read():
            if not 0 <= state < len(self._first):
                raise OutOfRangeError(f"no state {state}; the index has {len(self._first)}")
            nxt = self._next.view()
            out = []
            o = int(self._first.view()[state])
            while o >= 0:
                out.append(o)
                o = int(nxt[o])
            return out

    def state_of(self, observation: int) -> int:
        with self._lock.read():
            if not 0 <= observation < len(self._state_of):
                raise OutOfRangeError(f"no observation {observation}; the index has {len(self._state_of)}")
            return int(self._state_of.view()[observation])

    def hits(self, observation: int) -> int:
        """How many added screens mapped to this observation (itself included)."""
        with self._lock.read():
            if not 0 <= observation < len(self._hits):
                raise OutOfRangeError(f"no observation {observation}; the index has {len(self._hits)}")
            return int(self._hits.view()[observation])

    def observation_atoms(self, observation: int) -> Tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
        """The (control, text) atom sets of an observation."""
        with self._lock.read():
            if not 0 <= observation < len(self._state_of):
                raise OutOfRangeError(f"no observation {observation}; the index has {len(self._state_of)}")
            return self._store.atoms(observation)

    @property
    def metas(self) -> List[ScreenMeta]:
        """The metadata values seen, one per eligibility partition."""
        return [ScreenMeta(*k) for k in self._metas]

    def hnsw(self, meta: Union[ScreenMeta, MetaKey, None] = None) -> Any:
        """The raw ``faiss.IndexHNSWFlat`` of one metadata partition (e.g. to set ``hnsw.efSearch``)."""
        key = _meta_key(meta if meta is not None else ScreenMeta())
        if key not in self._meta_ids:
            raise OutOfRangeError(f"no observation with metadata {key}")
        return self._parts[self._meta_ids[key]].hnsw

    @property
    def ef_search(self) -> int:
        return self._ef_search

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SEARCH:
            raise InvalidInputError(f"ef_search must be an integer from 1 to {MAX_SEARCH}, got {echo(value)}")
        with self._lock.write():
            self._ef_search = value
            for p in self._parts:
                p.hnsw.hnsw.efSearch = value

    def memory_bytes(self) -> int:
        """Bytes held by the atom store, the BM25 postings, the HNSW graphs (estimate) and the id arrays."""
        return sum(self.memory_report().values())

    def memory_report(self) -> Dict[str, int]:
        """:meth:`memory_bytes` by part: ``atoms``, ``bm25``, ``vectors``, ``hnsw_links`` and ``ids``.

        ``vectors`` are the dense vectors stored in the HNSW indexes (``dim`` float32
        each); ``hnsw_links`` estimates their graphs (level-0 links and levels);
        ``ids`` are the per-observation and per-state arrays of this object. BM25's
        query scratch is one per thread shared by every index (a block of sums and
        the query's tables, not growing with the index) and is not counted.
        """
        with self._lock.read():
            out = {"atoms": int(self._store.memory_bytes()), "bm25": 0, "vectors": 0, "hnsw_links": 0, "ids": 0}
            for p in self._parts:
                out["bm25"] += int(p.bm25.memory_bytes())
                n = p.hnsw.ntotal
                out["vectors"] += n * 4 * p.hnsw.d
                out["hnsw_links"] += n * (4 * 2 * self.hnsw_m + 16)
                out["ids"] += p.obs.nbytes
            out["ids"] += sum(g.nbytes for g in (self._state_of, self._next, self._first, self._last, self._hits))
            return out

    # -- the pipeline ----------------------------------------------------------

    def featurize(self, screen: Screen) -> Features:
        """The features this index uses for a screen (its grid and masking)."""
        return featurize(screen, self.grid, mask_volatile=self.mask_volatile)

    def add(self, screen: Screen) -> Match:
        """Index a screen and return the state it maps to (see the module docstring)."""
        return self.add_features(self.featurize(screen))

    def add_features(self, features: Features, vector: Optional[npt.NDArray[np.float32]] = None) -> Match:
        """:meth:`add` for precomputed features (and optionally their text vector)."""
        if not isinstance(features, Features):
            raise InvalidInputError(f"add_features expects Features, got {type(features).__name__}")
        key = _meta_key(features.meta)
        c, t = features.control_atoms, features.text_atoms
        lock = self._lock
        with self._add_lock:
            # Exact hits need no vector and no write lock.
            lock.acquire_read()
            try:
                meta_id = self._meta_ids.get(key)
                if meta_id is not None:
                    ex = int(self._store.find_exact(meta_id, c, t))
                    if ex >= 0:
                        self._hits.view()[ex] += 1
                        self._screens += 1
                        return Match(int(self._state_of.view()[ex]), ex, False, True, 1.0)
            finally:
                lock.release_read()
            vec = self._vector(features, vector)
            lock.acquire_write()
            try:
                if meta_id is not None and self.candidates == "hybrid":
                    return self._add_hybrid(meta_id, c, t, vec)
                # The BM25 document: the query of retrieval, then the posting list entries.
                doc = np.concatenate((c, t))
                best, best_score, top_score = self._decide(meta_id, c, t, vec, doc)
                return self._insert(key, meta_id, c, t, vec, best, best_score, top_score, doc)
            finally:
                lock.release_write()

    def _add_hybrid(self, meta_id: int, c: npt.NDArray[np.uint64], t: npt.NDArray[np.uint64],
                    vec: npt.NDArray[np.float32]) -> Match:
        """Retrieve, verify and insert a new observation into an existing partition (write lock held).

        The same decision as :meth:`_decide` followed by :meth:`_insert`: HNSW
        gets the vector right after its search (the same neighbourhood, still
        in cache), then one core call (``_core.hybrid_insert``) runs BM25's
        top-k, adds the document to BM25, fuses the two lists, verifies the
        fused candidates and adds the sets to the atom store. Every query runs
        before its own structure's update, so the candidates and the decision
        are those of the query-everything-first order.
        """
        self._check_room()
        part = self._parts[meta_id]
        _, dense = part.hnsw.search(vec, min(self.dense_k, part.hnsw.ntotal))
        part.hnsw.add(vec)
        tau = self._tau
        rows = cast("npt.NDArray[np.int32]", part.obs.view())  # local row -> observation, int32
        best, num, den, top, obs = _core.hybrid_insert(
            part.bm25, self._store, meta_id, c, t, dense[0], rows, self.top_k, float(self.rrf_k),
            tau.numerator, tau.denominator)
        part.obs.append(obs)
        return self._link(obs, best, int(num) / int(den) if best >= 0 else 0.0, top)

    def _check_room(self) -> None:
        if len(self._state_of) >= _index_parts.MAX_OBSERVATIONS:
            raise InvalidInputError(f"a state index holds at most {_index_parts.MAX_OBSERVATIONS} observations")

    def _fused(self, part: _Partition, bm_ids: npt.NDArray[np.int64], dense: npt.NDArray[np.int64]
               ) -> npt.NDArray[np.int64]:
        """The observations of the ``top_k`` first of BM25's and the dense search's lists fused by RRF."""
        dense = dense[0]
        # Both lists are fresh contiguous int64 arrays: the core fuses them as they are.
        fused, _ = _core.rrf_fuse([bm_ids, dense[dense >= 0]], float(self.rrf_k))
        return part.ids(fused[:self.top_k])

    def _verified(self, c: npt.NDArray[np.uint64], t: npt.NDArray[np.uint64], ids: npt.NDArray[np.int64]
                  ) -> Tuple[int, float, float]:
        """Bounded Jaccard verification of candidates ``ids``: (best observation or -1, its score, top score)."""
        if len(ids) == 0:
            return -1, 0.0, 0.0
        scores, _, best, (num, den) = self._store.verify(c, t, ids, self._tau.numerator, self._tau.denominator)
        top = float(scores.max())
        if best < 0:
            return -1, 0.0, top
        return int(ids[best]), int(num) / int(den), top

    def _vector(self, features: Features, vector: Optional[npt.NDArray[np.float32]]) -> npt.NDArray[np.float32]:
        if vector is None:
            vector = self.embedder.embed([features.text])
        vec = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, -1)
        if vec.shape[1] != self.embedder.dim:
            raise InvalidInputError(f"text vector has {vec.shape[1]} dims, the embedder {self.embedder.dim}")
        return vec

    def _candidate_ids(self, meta_id: int, c: npt.NDArray[np.uint64], t: npt.NDArray[np.uint64],
                       vec: npt.NDArray[np.float32], doc: Optional[npt.NDArray[np.uint64]] = None
                       ) -> npt.NDArray[np.int64]:
        part = self._parts[meta_id]
        if self.candidates == "exhaustive":
            return part.ids()
        return self._retrieved(part, c, t, vec, doc)

    def _retrieved(self, part: _Partition, c: npt.NDArray[np.uint64], t: npt.NDArray[np.uint64],
                   vec: npt.NDArray[np.float32], doc: Optional[npt.NDArray[np.uint64]] = None
                   ) -> npt.NDArray[np.int64]:
        """The hybrid retrievers' candidates in a partition: BM25 and dense lists fused, the ``top_k`` first.

        ``doc`` is ``c`` and ``t`` concatenated, when the caller has it already.
        """
        bm_ids, _ = part.bm25.top_k(np.concatenate((c, t)) if doc is None else doc, self.top_k)
        _, dense = part.hnsw.search(vec, min(self.dense_k, part.hnsw.ntotal))
        return self._fused(part, bm_ids, dense)

    def _decide(self, meta_id: Optional[int], c: npt.NDArray[np.uint64], t: npt.NDArray[np.uint64],
                vec: npt.NDArray[np.float32], doc: Optional[npt.NDArray[np.uint64]] = None
                ) -> Tuple[int, float, float]:
        if meta_id is None:
            return -1, 0.0, 0.0
        return self._verified(c, t, self._candidate_ids(meta_id, c, t, vec, doc))

    def _insert(self, key: MetaKey, meta_id: Optional[int], c: npt.NDArray[np.uint64], t: npt.NDArray[np.uint64],
                vec: npt.NDArray[np.float32], best: int, best_score: float, top_score: float,
                doc: Optional[npt.NDArray[np.uint64]] = None) -> Match:
        self._check_room()
        if meta_id is None:
            meta_id = len(self._metas)
            self._metas.append(key)
            self._meta_ids[key] = meta_id
            self._parts.append(_Partition(self.embedder.dim, self.hnsw_m, self.ef_construction, self._ef_search))
        part = self._parts[meta_id]
        obs = int(self._store.add(meta_id, c, t))
        part.bm25.add(np.concatenate((c, t)) if doc is None else doc)
        part.hnsw.add(vec)
        part.obs.append(obs)
        return self._link(obs, best, best_score, top_score)

    def _link(self, obs: int, best: int, best_score: float, top_score: float) -> Match:
        """Record a new observation: into the state of observation ``best``, or a new state when it is -1."""
        self._hits.append(1)
        self._next.append(-1)
        self._screens += 1
        if best >= 0:
            state = int(self._state_of.view()[best])
            self._state_of.append(state)
            last = self._last.view()
            self._next.view()[last[state]] = obs
            last[state] = obs
            return Match(state, obs, False, False, best_score)
        state = len(self._first)
        self._first.append(obs)
        self._last.append(obs)
        self._state_of.append(state)
        return Match(state, obs, True, False, top_score)

    def query(self, screen: Union[Screen, Features], k: int = 10) -> List[Hit]:
        """The ``k`` best verified observations for a screen, without indexing it.

        Candidates come from the same pipeline as :meth:`add` (exact hit, eligibility,
        retrieval, fusion); they are returned by score descending, ties to the older
        observation.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise InvalidInputError(f"k must be a non-negative integer, got {echo(k)}")
        f = screen if isinstance(screen, Features) else self.featurize(screen)
        key = _meta_key(f.meta)
        c, t = f.control_atoms, f.text_atoms
        vec = self._vector(f, None)
        with self._lock.read():
            meta_id = self._meta_ids.get(key)
            if meta_id is None:
                return []
            ids = self._candidate_ids(meta_id, c, t, vec)
            ex = int(self._store.find_exact(meta_id, c, t))
            if ex >= 0 and not bool(np.any(ids == ex)):
                ids = np.concatenate((np.array([ex], dtype=np.int64), ids))
            if len(ids) == 0:
                return []
            scores, passed, _, _ = self._store.verify(c, t, ids, self._tau.numerator, self._tau.denominator)
            order = np.lexsort((ids, -scores))[:k]
            states = self._state_of.view()
            return [Hit(int(states[ids[i]]), int(ids[i]), float(scores[i]), bool(passed[i])) for i in order]

    def retrieval_candidates(self, screen: Union[Screen, Features]) -> npt.NDArray[np.int64]:
        """The observation ids the hybrid retrievers would send to verification (fused order)."""
        f = screen if isinstance(screen, Features) else self.featurize(screen)
        vec = self._vector(f, None)
        with self._lock.read():
            meta_id = self._meta_ids.get(_meta_key(f.meta))
            if meta_id is None:
                return np.empty(0, dtype=np.int64)
            return self._retrieved(self._parts[meta_id], f.control_atoms, f.text_atoms, vec)

    def exhaustive_best(self, screen: Union[Screen, Features]) -> Tuple[int, float]:
        """(state, score) that verification against every eligible observation would choose; (-1, 0.0) for none."""
        f = screen if isinstance(screen, Features) else self.featurize(screen)
        with self._lock.read():
            meta_id = self._meta_ids.get(_meta_key(f.meta))
            if meta_id is None:
                return -1, 0.0
            ids = self._parts[meta_id].ids()
            _, _, best, (num, den) = self._store.verify(
                f.control_atoms, f.text_atoms, ids, self._tau.numerator, self._tau.denominator
            )
            if best < 0:
                return -1, 0.0
            return int(self._state_of.view()[ids[best]]), int(num) / int(den)

    # -- persistence -----------------------------------------------------------

    def save(self, path: Any) -> None:
        """Write the whole index to ``path`` atomically (temporary file, fsync, rename).

        The file is versioned and checksummed (SHA-256); a failure mid-save leaves any
        previous file at ``path`` intact and removes its temporary file. A save killed
        outright leaves its temporary file (``<name>.<12 hex digits>.tmp``) behind; the
        next save to the same path removes every such file that no running save holds
        (POSIX). The file is created with mode 0o666 minus the umask. No pickle is
        involved.

        Raises :class:`~spatialobs.screen.IndexFileError` (a ``SpatialObsError`` and an
        ``OSError``) when the file cannot be written: a missing folder, a folder at
        ``path``, no permission, a full disk.
        """
        from spatialobs.screen import _persist

        with self._lock.read():
            _persist.save(self, path)

    @classmethod
    def load(cls, path: Any, *, embedder: Any = None) -> "StateIndex":
        """Read an index written by :meth:`save`, verifying version and checksum.

        Raises :class:`~spatialobs.screen.CorruptIndexError` (a ``SpatialObsError``) for
        a truncated, corrupt or foreign file, and for a crafted one whose checksum
        holds: every count and offset in the file is checked against the bytes
        present, and the dense graph against itself, before anything is sized from
        it. Raises :class:`~spatialobs.screen.IndexFileError` when the file cannot be
        read (missing, a folder, no permission). An index built with an external
        embedder needs an equivalent ``embedder``.
        """
        from spatialobs.screen import _persist

        return _persist.load(cls, path, embedder)


def _meta_key(meta: Union[ScreenMeta, MetaKey]) -> MetaKey:
    if isinstance(meta, ScreenMeta):
        return meta.key()
    if isinstance(meta, tuple) and len(meta) == 3:
        return meta
    raise InvalidInputError(f"meta must be a ScreenMeta or a 3-tuple, got {meta!r}")
