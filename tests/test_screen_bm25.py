"""The BM25 index against a from-scratch recomputation, and RRF against exact fractions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError, _core
from spatialobs.screen import rrf_fuse
from tests.reference import screen_oracle as ref

docs_st = st.lists(st.lists(st.integers(0, 30), max_size=15), max_size=40)
query_st = st.lists(st.integers(0, 35), max_size=12)


def build(docs, k1=1.5, b=0.75):
    ix = _core.Bm25Index(k1, b)
    for d in docs:
        ix.add(np.array(d, dtype=np.uint64))
    return ix


@settings(max_examples=300, deadline=None)
@given(docs_st, query_st, st.integers(0, 50), st.sampled_from([(1.5, 0.75), (1.2, 0.0), (0.0, 1.0), (2.0, 1.0)]))
def test_top_k_matches_oracle(docs, query, k, params):
    ix = build(docs, *params)
    ids, scores = ix.top_k(np.array(query, dtype=np.uint64), k)
    want = ref.bm25_top_k(docs, query, k, *params)
    # Same formula, same summation order: bit-equal scores, so the tie-broken
    # order is identical too.
    assert ids.tolist() == [d for d, _ in want]
    assert scores.tolist() == [s for _, s in want]
    assert len(ix) == len(docs)


@settings(max_examples=100, deadline=None)
@given(docs_st, query_st)
def test_incremental_equals_rebuilt(docs, query):
    # Scores read N, df and avgdl at query time: a query between adds equals a
    # fresh index over the documents so far.
    ix = _core.Bm25Index()
    q = np.array(query, dtype=np.uint64)
    for i, d in enumerate(docs):
        ix.add(np.array(d, dtype=np.uint64))
        got = ix.top_k(q, 10)
        want = build(docs[: i + 1]).top_k(q, 10)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


def test_ties_go_to_lower_id_and_no_overlap_is_never_returned():
    ix = build([[1, 2], [3], [1, 2], [1, 2]])
    ids, scores = ix.top_k(np.array([1], dtype=np.uint64), 10)
    assert ids.tolist() == [0, 2, 3]
    assert scores[0] == scores[1] == scores[2] > 0
    assert ix.top_k(np.array([99], dtype=np.uint64), 5)[0].tolist() == []
    assert _core.Bm25Index().top_k(np.array([1], dtype=np.uint64), 5)[0].tolist() == []


def test_rarer_terms_weigh_more():
    ix = build([[1, 2], [1, 3], [1, 4], [1, 5]])
    ids, _ = ix.top_k(np.array([1, 3], dtype=np.uint64), 4)
    assert ids[0] == 1


def test_bm25_bad_input():
    with pytest.raises(InvalidInputError, match="b must lie in"):
        _core.Bm25Index(1.5, 2.0)
    with pytest.raises(InvalidInputError, match="k1 must be finite"):
        _core.Bm25Index(float("nan"), 0.5)
    ix = build([[1]])
    with pytest.raises(InvalidInputError, match="query must have dtype uint64"):
        ix.top_k(np.array([1], dtype=np.int64), 3)
    with pytest.raises(InvalidInputError, match="k must be >= 0"):
        ix.top_k(np.array([1], dtype=np.uint64), -1)


@settings(max_examples=300)
@given(st.lists(st.lists(st.integers(0, 30), max_size=25, unique=True), max_size=3), st.sampled_from([1, 60]))
def test_rrf_matches_fractions(lists, k):
    ids, scores = rrf_fuse([np.array(x, dtype=np.int64) for x in lists], k)
    want = dict(ref.rrf(lists, k))
    assert sorted(ids.tolist()) == sorted(want)
    assert np.allclose(scores, [float(want[d]) for d in ids.tolist()], rtol=1e-15)
    ranks = {d: sorted(x.index(d) for x in lists if d in x) for d in want}
    for a, b in zip(ids.tolist(), ids.tolist()[1:]):
        # Exact order, with ties to the lower id. Equal rank multisets tie in
        # floats too; distinct multisets with equal exact sums may round apart.
        assert want[a] > want[b] or (want[a] == want[b] and (a < b or ranks[a] != ranks[b]))


@settings(max_examples=400)
@given(st.lists(st.lists(st.integers(-3, 40), max_size=60), min_size=1, max_size=2), st.sampled_from([0.0, 1.0, 60.0]))
def test_rrf_two_list_path_equals_general_path_bit_for_bit(lists, k):
    # Up to two lists take the hash-table path (falling back on a repeated id);
    # an empty third list sends the same lists through the sort-by-id path.
    arrays = [np.array(x, dtype=np.int64) for x in lists]
    ids, scores = _core.rrf_fuse(arrays, k)
    want_ids, want_scores = _core.rrf_fuse(arrays + [np.array([], dtype=np.int64)], k)
    assert ids.tolist() == want_ids.tolist() and scores.tolist() == want_scores.tolist()


def test_rrf_tie_break_is_deterministic():
    # Ranks (1, 2) and (2, 1) tie exactly: the lower id wins.
    ids, scores = rrf_fuse([np.array([7, 3]), np.array([3, 7])], 60)
    assert ids.tolist() == [3, 7] and scores[0] == scores[1]
    ids, _ = rrf_fuse([np.array([], dtype=np.int64)], 60)
    assert ids.tolist() == []


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_top_k_matches_oracle_across_blocks_and_length_tables(seed):
    # More documents than one scoring block (4096) and terms with more postings
    # than length classes, so the tabulated tf = 1 path, tf > 1 postings and
    # block boundaries are all exercised; k around the number of touched docs.
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, 9, size=9000)
    docs = [rng.integers(0, 60, size=n).tolist() for n in lens]
    ix = build(docs)
    for q in (rng.integers(0, 64, size=6).tolist(), [0], []):
        for k in (1, 200, 5000):
            ids, scores = ix.top_k(np.array(q, dtype=np.uint64), k)
            want = ref.bm25_top_k(docs, q, k)
            assert ids.tolist() == [d for d, _ in want]
            assert scores.tolist() == [s for _, s in want]


def test_long_posting_lists_cross_every_block_size_exactly():
    # Term 1 is in every document, term 2 in every other one with tf 1 to 3,
    # term 3 in every fifth: their lists pass through every arena block size and
    # past the largest (4096) into a list of their own; scores stay bit-equal to
    # the recomputation at sizes on both sides of each move.
    rng = np.random.default_rng(5)
    docs = []
    for i in range(4200):
        d = [1] + [2] * int(rng.integers(1, 4)) * (i % 2) + [3] * (i % 5 == 0) + rng.integers(4, 60, size=3).tolist()
        docs.append(d)
    ix = _core.Bm25Index()
    checks = {3, 4, 5, 8, 9, 16, 17, 1024, 1025, 4096, 4097, 4200, 8193, 8200}
    for i, d in enumerate(docs):
        ix.add(np.array(d, dtype=np.uint64))
        if i + 1 in checks:
            for q in ([1], [2], [1, 2, 3], [3, 7, 11]):
                ids, scores = ix.top_k(np.array(q, dtype=np.uint64), 300)
                want = ref.bm25_top_k(docs[: i + 1], q, 300)
                assert ids.tolist() == [w for w, _ in want] and scores.tolist() == [s for _, s in want]
    assert ix.num_terms == len({t for d in docs for t in d})


def test_core_rrf_bad_input():
    with pytest.raises(InvalidInputError, match="list of int64 arrays"):
        _core.rrf_fuse([[1, 2]], 60.0)
    with pytest.raises(InvalidInputError, match="1-D int64"):
        _core.rrf_fuse([np.zeros((2, 2), dtype=np.int64)], 60.0)
    with pytest.raises(InvalidInputError, match="k must be finite"):
        _core.rrf_fuse([np.array([1], dtype=np.int64)], float("nan"))
    with pytest.raises(InvalidInputError):
        _core.rrf_fuse([np.array([1.5])], 60.0)  # not int64


# -- the gated top-k against the exhaustive one ----------------------------------

# Few terms and few lengths: many documents tie exactly, so the gate and the
# final cut fall inside runs of equal scores; repeats give tf > 1.
tie_docs_st = st.lists(st.lists(st.integers(0, 6), min_size=0, max_size=6), max_size=60)
k_st = st.one_of(st.integers(0, 5), st.integers(6, 80), st.just(10**12))


def same_top_k(ix, query, k):
    q = np.array(query, dtype=np.uint64)
    got = ix.top_k(q, k)
    want = ix.top_k(q, k, exhaustive=True)
    assert got[0].tolist() == want[0].tolist()
    assert got[1].tolist() == want[1].tolist()
    return got


@settings(max_examples=300, deadline=None)
@given(tie_docs_st, st.lists(st.integers(0, 8), max_size=8), k_st,
       st.sampled_from([(1.5, 0.75), (1.2, 0.0), (0.0, 1.0), (2.0, 1.0)]))
def test_gated_top_k_equals_exhaustive_with_ties_and_repeats(docs, query, k, params):
    ix = _core.Bm25Index(*params)
    for i, d in enumerate(docs):
        ix.add(np.array(d, dtype=np.uint64))
        # Incremental adds: every intermediate index answers as the oracle does.
        if i % 7 == 0 or i + 1 == len(docs):
            ids, scores = same_top_k(ix, query, k)
            want = ref.bm25_top_k(docs[: i + 1], query, k, *params)
            assert ids.tolist() == [w for w, _ in want] and scores.tolist() == [s for _, s in want]


@pytest.mark.timeout(300)
@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 7, 200, 1000, 10**12]))
def test_gated_top_k_equals_exhaustive_across_blocks(seed, k):
    """Slow by design: twelve corpora of several 4,096-document blocks (the gate must rise between blocks),
    every query scored exhaustively too (53 s on the shared 2-core machine under load).
    """
    # Several 4,096-document blocks, so that the gate rises between blocks;
    # Zipf-like term frequencies put long lists (past kMaxArenaBlock) next to
    # rare terms, lengths vary little (many exact ties) and some atoms repeat.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4097, 14000))
    lens = rng.integers(1, 7, size=n)
    vocab = int(rng.integers(20, 400))
    ix = _core.Bm25Index()
    docs = []
    for m in lens:
        d = np.minimum(rng.zipf(1.3, size=m) - 1, vocab).astype(np.uint64)
        docs.append(d)
        ix.add(d)
    for _ in range(4):
        q = rng.choice(vocab + 1, size=int(rng.integers(1, 12)))
        ids, scores = same_top_k(ix, q.tolist(), k)
        assert len(ids) == min(k, len({i for i, d in enumerate(docs) if np.isin(d, q).any()}))


def test_gated_top_k_on_a_long_list_and_one_term_queries():
    # One term in every document (a list past kMaxArenaBlock): every score is
    # that term's contribution at the document's length, so thousands tie and
    # the k best are the shortest documents, lowest ids first.
    rng = np.random.default_rng(11)
    ix = _core.Bm25Index()
    docs = []
    for i in range(2 * 4096 + 5):
        d = [1] + rng.integers(2, 9, size=int(rng.integers(0, 3))).tolist()
        docs.append(d)
        ix.add(np.array(d, dtype=np.uint64))
    for k in (1, 100, 3000, 5000, 9000):
        ids, scores = same_top_k(ix, [1], k)
        want = ref.bm25_top_k(docs, [1], k)
        assert ids.tolist() == [w for w, _ in want] and scores.tolist() == [s for _, s in want]
    same_top_k(ix, [1, 2, 3, 99], 50)


def test_exhaustive_switch_checks_input_the_same_way():
    ix = build([[1]])
    with pytest.raises(InvalidInputError, match="query must have dtype uint64"):
        ix.top_k(np.array([1], dtype=np.int64), 3, exhaustive=True)
    with pytest.raises(InvalidInputError, match="k must be >= 0"):
        ix.top_k(np.array([1], dtype=np.uint64), -1, exhaustive=True)


@pytest.mark.timeout(300)
def test_doc_ids_past_65536_score_exactly():
    """Slow by design: an index past 131,072 documents, to cross the 16-bit boundary of the postings twice (37
    s on the shared 2-core machine under load).
    """
    # Postings hold the low 16 bits of a doc id; the high half is written as an
    # escape where it changes, and a low half of 0xffff always is. Lists that
    # cross 65,536 and 131,072 (every document; every 1,000th), short lists
    # that cross it while still in their term record, single postings at
    # 0xffff and just past it, and repeats on both sides, checked against the
    # recomputation as the index grows past each run of ids.
    rng = np.random.default_rng(17)
    docs = []
    for i in range(140_000):
        d = [1] + rng.integers(7, 200, size=int(rng.integers(0, 3))).tolist()
        if i & 0xFFFF in (0xFFFF, 0, 1):
            d += [2] * (1 + i % 3)
        if 65_530 <= i < 65_545:
            d.append(3)
        if i == 65_535:
            d.append(4)
        if i == 70_000:
            d.append(5)
        if i % 1000 == 0 or i in (65_535, 131_071):
            d += [6, 6] if i % 2000 == 0 else [6]
        docs.append(d)
    ix = _core.Bm25Index()
    checks = {65_535, 65_536, 65_537, 131_072, 140_000}
    for i, d in enumerate(docs):
        ix.add(np.array(d, dtype=np.uint64))
        if i + 1 not in checks:
            continue
        for q, k in (([2], 10**6), ([3], 10**6), ([4], 5), ([5], 5), ([6], 10**6), ([2, 3, 4, 5, 6, 9], 400),
                     ([1], 50)):
            ids, scores = same_top_k(ix, q, k)
            want = ref.bm25_top_k(docs[: i + 1], q, k)
            assert ids.tolist() == [w for w, _ in want] and scores.tolist() == [s for _, s in want]
    assert ix.num_terms == len({t for d in docs for t in d})


def test_indexes_sharing_threads_answer_as_alone():
    # Query scratch is one per thread, shared by every index: a thread going
    # from a large index to a small one and back, and threads querying both at
    # once, get what each index answers on its own.
    import threading

    rng = np.random.default_rng(23)
    big_docs = [rng.integers(0, 300, size=int(rng.integers(1, 9))).tolist() for _ in range(20_000)]
    small_docs = [rng.integers(0, 40, size=int(rng.integers(1, 5))).tolist() for _ in range(50)]
    big, small = build(big_docs), build(small_docs)
    queries = [np.array(rng.integers(0, 300, size=6), dtype=np.uint64) for _ in range(12)]
    alone = [(ix.top_k(q, 100), q, ix) for q in queries for ix in (big, small)]
    for (ids, scores), q, ix in alone:
        got = ix.top_k(q, 100)
        assert got[0].tolist() == ids.tolist() and got[1].tolist() == scores.tolist()
        want = ref.bm25_top_k(small_docs, q.tolist(), 100) if ix is small else None
        if want is not None:
            assert ids.tolist() == [w for w, _ in want] and scores.tolist() == [s for _, s in want]
    failures = []

    def worker(seed):
        order = np.random.default_rng(seed).permutation(len(alone))
        for i in order.tolist() * 3:
            (ids, scores), q, ix = alone[i]
            got = ix.top_k(q, 100)
            if got[0].tolist() != ids.tolist() or got[1].tolist() != scores.tolist():
                failures.append(i)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def _floor_reference(docs, query):
    """Postings, sum of their doc ids and sum of their terms' idf, for Bm25Index.posting_floor."""
    n = len(docs)
    postings, id_sum, idf_sum = 0, 0, 0.0
    for t in set(query):
        holders = [i for i, d in enumerate(docs) for a in d if a == t]
        df = len(set(holders))
        if not df:
            continue
        idf = float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))
        postings += len(holders)
        id_sum += sum(holders)
        idf_sum += idf * len(holders)
    return postings, id_sum, idf_sum


@settings(max_examples=200, deadline=None)
@given(docs_st, query_st)
def test_posting_floor_touches_every_posting_once(docs, query):
    ix = build(docs)
    q = np.array(query, dtype=np.uint64)
    postings, id_sum, idf_sum = _floor_reference(docs, query)
    assert ix.posting_floor(q, scatter=False) == (postings, float(id_sum))
    got, checksum = ix.posting_floor(q)
    assert got == postings
    assert checksum == pytest.approx(idf_sum, rel=1e-12, abs=0.0)
    # The scratch it shares with top_k is left clean: queries after it answer as before.
    assert [x.tolist() for x in ix.top_k(q, 7)] == [x.tolist() for x in build(docs).top_k(q, 7)]


def test_posting_floor_across_65536_ids_and_bad_input():
    # Lists whose doc ids pass 65,536 (escapes), a low half of 0xffff, repeats.
    docs = [[1] + ([2, 2] if i % 9000 == 0 or i == 65_535 else []) + ([3] if i >= 65_530 else []) for i in range(66_000)]
    ix = build(docs)
    for query in ([1], [2], [3], [1, 2, 3, 4]):
        postings, id_sum, idf_sum = _floor_reference(docs, query)
        q = np.array(query, dtype=np.uint64)
        assert ix.posting_floor(q, scatter=False) == (postings, float(id_sum))
        got, checksum = ix.posting_floor(q)
        assert got == postings and checksum == pytest.approx(idf_sum, rel=1e-12)
    assert _core.Bm25Index().posting_floor(np.array([1], dtype=np.uint64)) == (0, 0.0)
    with pytest.raises(InvalidInputError, match="query must have dtype uint64"):
        ix.posting_floor(np.array([1], dtype=np.int64))
    with pytest.raises(InvalidInputError, match="query must be a 1-D array of atoms"):
        ix.posting_floor(np.array([[1]], dtype=np.uint64))
