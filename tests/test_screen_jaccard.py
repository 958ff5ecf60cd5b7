"""Two-set Jaccard, the exact threshold, the batch verifier and the exact-duplicate table."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError, OutOfRangeError, _core
from spatialobs.screen import as_threshold, jaccard_at_least, jaccard_ratio, jaccard_score
from tests.reference import screen_oracle as ref

# Small universes make overlaps, equal sets and empty sets common; the top of
# the uint64 range checks that no signed conversion happens.
atom = st.one_of(st.integers(0, 40), st.integers(2**64 - 8, 2**64 - 1))
atom_sets = st.sets(atom, max_size=30).map(lambda s: np.array(sorted(s), dtype=np.uint64))
pairs = st.tuples(atom_sets, atom_sets)
taus = st.one_of(
    st.fractions(min_value=0, max_value=1, max_denominator=1000),
    st.sampled_from([Fraction(93, 100), Fraction(1), Fraction(0), Fraction(1, 2)]),
)


def exact(a, b):
    return ref.two_set_score(a[0].tolist(), a[1].tolist(), b[0].tolist(), b[1].tolist())


@settings(max_examples=300)
@given(pairs, pairs, taus)
def test_score_and_threshold_match_fractions(a, b, tau):
    want = exact(a, b)
    assert jaccard_ratio(a, b) == want
    assert jaccard_score(a, b) == float(want)
    assert jaccard_at_least(a, b, tau) == (want >= tau)
    # Symmetric.
    assert jaccard_ratio(b, a) == want


def test_empty_sets_score_one():
    e = np.array([], dtype=np.uint64)
    one = np.array([1], dtype=np.uint64)
    assert jaccard_score((e, e), (e, e)) == 1.0
    assert jaccard_ratio((one, e), (one, e)) == 1
    assert jaccard_ratio((one, e), (e, e)) == Fraction(1, 2)


def test_threshold_is_exact_at_the_boundary():
    # J(control) = 1, J(text) = 43/50: the score is exactly 93/100, so it merges
    # at tau = 0.93. Naive floats get this wrong: 0.5 * 1.0 + 0.5 * 0.86 is
    # 0.9299999999999999 < 0.93.
    one = np.array([7], dtype=np.uint64)
    a = np.arange(50, dtype=np.uint64)
    b = a[:43].copy()
    assert 0.5 * 1.0 + 0.5 * (43 / 50) < 0.93
    assert jaccard_ratio((one, a), (one, b)) == Fraction(93, 100)
    assert jaccard_at_least((one, a), (one, b), 0.93)
    assert not jaccard_at_least((one, a), (one, b), Fraction(9301, 10000))
    assert as_threshold(0.93) == Fraction(93, 100)
    store = _core.AtomStore()
    store.add(0, one, b)
    _, passed, best, ratio = store.verify(one, a, np.array([0], dtype=np.int64), 93, 100)
    assert passed.tolist() == [True] and best == 0 and Fraction(*ratio) == Fraction(93, 100)


def test_threshold_parsing():
    assert as_threshold("0.93") == Fraction(93, 100)
    assert as_threshold(Fraction(2, 3)) == Fraction(2, 3)
    assert as_threshold(1) == 1
    for bad in (1.5, -0.1, "x", None, 1e-20):
        with pytest.raises(InvalidInputError):
            as_threshold(bad)  # type: ignore[arg-type]


def test_jaccard_bad_input():
    good = np.array([1, 2], dtype=np.uint64)
    with pytest.raises(InvalidInputError, match="a_control must be sorted and unique"):
        _core.jaccard_score(np.array([2, 1], dtype=np.uint64), good, good, good)
    with pytest.raises(InvalidInputError, match="dtype uint64"):
        _core.jaccard_score(np.array([1, 2], dtype=np.int64), good, good, good)
    with pytest.raises(InvalidInputError, match="sorted and unique"):
        jaccard_score(([1, 1], []), ([1], []))
    with pytest.raises(InvalidInputError, match="threshold"):
        _core.jaccard_at_least(good, good, good, good, 3, 2)
    with pytest.raises(InvalidInputError, match="Features or a"):
        jaccard_score(5, 6)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), pairs), min_size=0, max_size=25), pairs, taus, st.data())
def test_batch_verify_matches_oracle(observations, query, tau, data):
    store = _core.AtomStore()
    for meta, (c, t) in observations:
        store.add(meta, c, t)
    n = len(observations)
    ids = data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=40)) if n else []
    ids_arr = np.array(ids, dtype=np.int64)
    scores, passed, best, (num, den) = store.verify(query[0], query[1], ids_arr, tau.numerator, tau.denominator)
    cand = [(c.tolist(), t.tolist()) for _, (c, t) in observations]
    want, want_best = ref.verify((query[0].tolist(), query[1].tolist()), cand, ids, tau)
    assert scores.tolist() == [float(w) for w in want]
    assert passed.tolist() == [w >= tau for w in want]
    assert best == want_best
    if best >= 0:
        assert Fraction(num, den) == want[best]
    # Permuting the candidates permutes the scores and keeps the chosen id.
    perm = data.draw(st.permutations(range(len(ids))))
    s2, _, b2, _ = store.verify(query[0], query[1], ids_arr[list(perm)] if ids else ids_arr, tau.numerator,
                                tau.denominator)
    assert s2.tolist() == [scores[i] for i in perm]
    assert (b2 < 0) == (best < 0)
    if best >= 0:
        assert ids[perm[b2]] == ids[best]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), pairs), max_size=25), st.integers(0, 2), pairs)
def test_exact_table_matches_linear_scan(observations, meta, query):
    store = _core.AtomStore()
    for m, (c, t) in observations:
        store.add(m, c, t)
    want = next(
        (i for i, (m, (c, t)) in enumerate(observations)
         if m == meta and c.tolist() == query[0].tolist() and t.tolist() == query[1].tolist()),
        -1,
    )
    assert store.find_exact(meta, query[0], query[1]) == want


def test_exact_table_tells_control_from_text():
    store = _core.AtomStore()
    a = np.array([1, 2], dtype=np.uint64)
    e = np.array([], dtype=np.uint64)
    store.add(0, a, e)
    assert store.find_exact(0, a, e) == 0
    assert store.find_exact(0, e, a) == -1
    assert store.find_exact(1, a, e) == -1


def test_verify_bad_input():
    store = _core.AtomStore()
    a = np.array([1], dtype=np.uint64)
    store.add(0, a, a)
    with pytest.raises(OutOfRangeError, match="candidate 1 is observation 5"):
        store.verify(a, a, np.array([0, 5], dtype=np.int64), 93, 100)
    with pytest.raises(InvalidInputError, match="ids must have dtype int64"):
        store.verify(a, a, np.array([0], dtype=np.int32), 93, 100)
    with pytest.raises(InvalidInputError, match="control atoms must be sorted"):
        store.add(0, np.array([3, 3], dtype=np.uint64), a)
    assert len(store) == 1


def test_atom_store_across_chunks_and_a_set_larger_than_a_chunk():
    """Slow by design: observations enough to fill several 1 MiB storage chunks, each read back and verified
    against Python sets (31 s on the shared 2-core machine under load).
    """
    # Observations fill several storage chunks (2^20 bytes each; fresh atoms get
    # consecutive term ids, so about 1.25 bytes an atom) and one takes more
    # bytes than a chunk: every set reads back exactly, exact hits and
    # verification agree with Python sets, and the saved columns are the sets.
    rng = np.random.default_rng(3)
    store = _core.AtomStore()
    sets = []
    sizes = [(0, 0), (5, 0), (0, 3)] + [(900, 300)] * 1000 + [(800_000, 400_000), (2, 2), (0, 0)]
    for i, (nc, nt) in enumerate(sizes):
        c = np.unique(rng.integers(0, 2**63, size=nc, dtype=np.uint64))
        t = np.unique(rng.integers(0, 2**63, size=nt, dtype=np.uint64))
        assert store.add(i % 3, c, t) == i
        sets.append((i % 3, c, t))
    assert len(store) == len(sizes)
    for i in [0, 1, 2, 3, 300, 880, 1002, 1003, 1004, 1005]:
        if i >= len(sets):
            continue
        m, c, t = sets[i]
        gc, gt = store.atoms(i)
        assert np.array_equal(gc, c) and np.array_equal(gt, t) and store.meta(i) == m
        first = next(j for j, (mj, cj, tj) in enumerate(sets)
                     if mj == m and np.array_equal(cj, c) and np.array_equal(tj, t))
        assert store.find_exact(m, c, t) == first
    meta, co, cv, to, tv = store.columns()
    assert co[-1] == len(cv) == sum(len(s[1]) for s in sets) and to[-1] == len(tv) == sum(len(s[2]) for s in sets)
    for i in (3, 1003):
        assert np.array_equal(cv[co[i]:co[i + 1]], sets[i][1]) and np.array_equal(tv[to[i]:to[i + 1]], sets[i][2])
    q = sets[1003]
    ids = np.array([1003, 3, 1004, 0], dtype=np.int64)
    scores, passed, best, _ = store.verify(q[1], q[2], ids, 93, 100)
    for s, o in zip(scores, ids):
        want = ref.two_set_score(q[1].tolist(), q[2].tolist(), sets[o][1].tolist(), sets[o][2].tolist())
        assert s == float(want)
    assert best == 0 and passed.tolist() == [True, False, False, False]
    # Each distinct atom is kept once in the dictionary (8 bytes) and at least a
    # byte per occurrence in the sets.
    assert store.memory_bytes() >= 8 * len(np.unique(np.concatenate((cv, tv)))) + len(cv) + len(tv)


def test_atom_store_ids_far_apart_match_the_oracle():
    # Term ids follow first appearance: filler observations of fresh atoms
    # between the real ones spread the ids of a shared 60-atom universe by gaps
    # of 1, 150, 20,000 and 70,000, so the stored deltas take one, two and three
    # bytes, and a set sorted by term id is not sorted by atom.
    # Scores, exact hits and the sets read back all match the definitions.
    rng = np.random.default_rng(11)
    universe = np.unique(rng.integers(0, 2**64 - 1, size=60, dtype=np.uint64))
    store = _core.AtomStore()
    sets = []  # (id, meta, control, text)
    fresh = 0
    for i in range(120):
        gap = int(rng.choice([0, 150, 20_000, 70_000], p=[0.4, 0.3, 0.2, 0.1]))
        if gap:
            filler = np.arange(fresh, fresh + gap, dtype=np.uint64) + np.uint64(2**63)
            fresh += gap
            store.add(9, filler, np.array([], dtype=np.uint64))
        pick = rng.random(len(universe)) < 0.3
        c = universe[pick & (rng.random(len(universe)) < 0.5)]
        t = universe[pick & ~np.isin(universe, c)] if i % 4 else np.array([], dtype=np.uint64)
        if i % 7 == 0 and sets:  # an exact repeat of an earlier one
            _, m, c, t = sets[int(rng.integers(0, len(sets)))]
        else:
            m = int(rng.integers(0, 2))
        sets.append((store.add(m, c, t), m, c, t))
    for o, m, c, t in sets:
        gc, gt = store.atoms(o)
        assert np.array_equal(gc, c) and np.array_equal(gt, t)
        first = next(p for p, mp, cp, tp in sets if mp == m and np.array_equal(cp, c) and np.array_equal(tp, t))
        assert store.find_exact(m, c, t) == first
    ids = np.array([o for o, *_ in sets], dtype=np.int64)
    for q in (sets[5], sets[60], (None, 0, universe[:20], universe[20:45]), (None, 0, universe[::2], universe[1::2])):
        qc, qt = np.ascontiguousarray(q[2]), np.ascontiguousarray(q[3])
        # Atoms the store has never seen only count in the query's set sizes.
        qt = np.unique(np.concatenate((qt, np.array([5, 2**62], dtype=np.uint64))))
        scores, passed, best, _ = store.verify(qc, qt, ids, 1, 2)
        cand = [(c.tolist(), t.tolist()) for _, _, c, t in sets]
        want, want_best = ref.verify((qc.tolist(), qt.tolist()), cand, list(range(len(sets))), Fraction(1, 2))
        assert scores.tolist() == [float(w) for w in want] and best == want_best
        assert passed.tolist() == [w >= Fraction(1, 2) for w in want]
    # An unsorted or repeated query equals no stored set, whatever its hash.
    o, m, c, t = next(s for s in sets if len(s[2]) > 1)
    assert store.find_exact(m, c[::-1].copy(), t) == -1
    assert store.find_exact(m, np.concatenate((c[:1], c[:1])), t) == -1
