"""``_core.hybrid_insert``: one partition add in one call, against the separate core calls it replaces."""

from __future__ import annotations

from fractions import Fraction
from typing import List, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import _core
from tests.reference import screen_oracle as ref

U64 = np.uint64
atom_sets = st.sets(st.integers(0, 30), max_size=10).map(lambda s: np.array(sorted(s), dtype=U64))


def _separate(bm25: _core.Bm25Index, store: _core.AtomStore, meta: int, c: np.ndarray, t: np.ndarray,
              dense: np.ndarray, rows: np.ndarray, top_k: int, rrf_k: float, tau: Fraction
              ) -> Tuple[int, int, int, float, int]:
    """The calls the state index made before ``hybrid_insert``, in their order."""
    doc = np.concatenate((c, t))
    bm_ids, _ = bm25.top_k(doc, top_k)
    bm25.add(doc)
    fused, _ = _core.rrf_fuse([bm_ids, dense[dense >= 0]], rrf_k)
    ids = rows[fused[:top_k]].astype(np.int64)
    best, num, den, top = -1, 0, 1, 0.0
    if len(ids):
        scores, _, b, (n, d) = store.verify(c, t, ids, tau.numerator, tau.denominator)
        top = float(scores.max())
        if b >= 0:
            best, num, den = int(ids[b]), int(n), int(d)
    return best, num, den, top, int(store.add(meta, c, t))


@settings(max_examples=30, deadline=None)
@given(st.data(), st.lists(st.tuples(atom_sets, atom_sets), min_size=1, max_size=16),
       st.integers(1, 12), st.sampled_from([0.0, 1.0, 60.0]),
       st.sampled_from([Fraction(93, 100), Fraction(1, 2), Fraction(0), Fraction(1)]))
def test_hybrid_insert_matches_the_separate_calls(data, stream, top_k, rrf_k, tau):
    # Two partitions (metas 0 and 1) share one store, as a state index's do; the
    # dense lists are arbitrary rows (repeats of BM25's, -1 padding, any order).
    a_bm, b_bm = [_core.Bm25Index(), _core.Bm25Index()], [_core.Bm25Index(), _core.Bm25Index()]
    a_store, b_store = _core.AtomStore(), _core.AtomStore()
    rows: List[List[int]] = [[], []]
    for c, t in stream:
        meta = data.draw(st.integers(0, 1))
        r = np.array(rows[meta], dtype=np.int32)
        n = len(r)
        dense = np.array(data.draw(st.lists(st.integers(-1, n - 1) if n else st.just(-1), max_size=6, unique=True)),
                         dtype=np.int64)
        got = _core.hybrid_insert(a_bm[meta], a_store, meta, c, t, dense, r, top_k, rrf_k,
                                  tau.numerator, tau.denominator)
        want = _separate(b_bm[meta], b_store, meta, c, t, dense, r, top_k, rrf_k, tau)
        assert got == want
        best, num, den, _, obs = got
        if best >= 0:
            # The chosen one reaches tau, exactly (the fractions oracle).
            cb, tb = a_store.atoms(best)
            assert Fraction(num, den) == ref.two_set_score(c.tolist(), t.tolist(), cb.tolist(), tb.tolist()) >= tau
        rows[meta].append(obs)
    # The indexes hold the same documents and sets afterwards.
    for x, y in zip(a_store.columns(), b_store.columns()):
        assert np.array_equal(x, y)
    probe = np.arange(31, dtype=U64)
    for p, q in zip(a_bm, b_bm):
        assert len(p) == len(q)
        for x, y in zip(p.top_k(probe, 100), q.top_k(probe, 100)):
            assert np.array_equal(x, y)


def _fresh():
    bm25, store = _core.Bm25Index(), _core.AtomStore()
    a = np.array([1, 2, 3], dtype=U64)
    obs = store.add(0, a, a)
    bm25.add(np.concatenate((a, a)))
    return bm25, store, a, np.array([obs], dtype=np.int32)


@pytest.mark.parametrize("change, exc, message", [
    (dict(control=np.array([1, 2], dtype=np.uint32)), ValueError, "control must have dtype uint64"),
    (dict(text=np.array([3, 1], dtype=U64)), ValueError, "text must be sorted and unique"),
    (dict(dense=np.array([[0]], dtype=np.int64)), ValueError, "dense must be a 1-D int64 array"),
    (dict(dense=np.array([0], dtype=np.int32)), ValueError, "dense must have dtype int64"),
    (dict(rows=np.array([0], dtype=np.int64)), ValueError, "rows must be a 1-D C-contiguous int32 array"),
    (dict(rows=np.array([0, 0], dtype=np.int32)), ValueError, "the row map has 2 rows, the BM25 index 1 documents"),
    (dict(dense=np.array([1], dtype=np.int64)), IndexError, "dense row 1 is past the partition's 1 rows"),
    (dict(rows=np.array([7], dtype=np.int32)), IndexError, "row 0 maps to observation 7, but the store holds 1"),
    (dict(top_k=-1), ValueError, "top_k must be >= 0, got -1"),
    (dict(rrf_k=float("nan")), ValueError, "rrf_k must be finite and >= 0"),
    (dict(tau_den=0), ValueError, "threshold must be a fraction num / den in \\[0, 1\\]"),
])
def test_hybrid_insert_bad_input_writes_nothing(change, exc, message):
    bm25, store, a, rows = _fresh()
    args = dict(control=a, text=a, dense=np.array([0], dtype=np.int64), rows=rows, top_k=5, rrf_k=60.0,
                tau_num=93, tau_den=100)
    args.update(change)
    with pytest.raises(exc, match=message):
        _core.hybrid_insert(bm25, store, 0, args["control"], args["text"], args["dense"], args["rows"],
                            args["top_k"], args["rrf_k"], args["tau_num"], args["tau_den"])
    assert len(bm25) == 1 and len(store) == 1
    # The same call with good arguments then adds the document once.
    best, num, den, top, obs = _core.hybrid_insert(bm25, store, 0, a, a, np.array([0], dtype=np.int64), rows, 5,
                                                   60.0, 93, 100)
    assert (best, num == den, top, obs) == (0, True, 1.0, 1)
    assert len(bm25) == 2 and len(store) == 2
