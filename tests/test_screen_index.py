"""StateIndex: the pipeline against the exhaustive fractions oracle, real screens, threads, embedders."""

from __future__ import annotations

import sys
import threading
import types
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError, OutOfRangeError
from spatialobs.screen import (
    Element,
    Features,
    Match,
    Screen,
    ScreenMeta,
    SentenceTransformerEmbedder,
    StateIndex,
    featurize,
    load_screen,
)
from spatialobs.screen.synth import make_corpus, pair_metrics, quality_report
from tests.conftest import shared_files
from tests.reference import screen_oracle as ref

SCREENS = shared_files("screens", "*.json")


def by_name(name):
    (path,) = [p for p in SCREENS if p.name.endswith(name)]
    return load_screen(path)


atom_sets = st.sets(st.integers(0, 25), max_size=12).map(lambda s: np.array(sorted(s), dtype=np.uint64))
features_st = st.builds(
    lambda c, t, m, text: Features(c, t, text, ScreenMeta(app=m)),
    atom_sets, atom_sets, st.sampled_from(["a", "b"]), st.sampled_from(["", "ok", "sign in", "menu"]),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(features_st, max_size=30), st.sampled_from([Fraction(93, 100), Fraction(1, 2), Fraction(0), Fraction(1)]))
def test_pipeline_matches_exhaustive_oracle(stream, tau):
    # With top_k above the corpus size retrieval returns every eligible
    # observation, so the decisions must equal the exhaustive oracle's.
    ix = StateIndex(tau=tau, top_k=64)
    oracle = ref.NaiveStateIndex(tau)
    for f in stream:
        m = ix.add_features(f)
        state, obs, new, exact, score = oracle.add(f.meta.key(), f.control_atoms.tolist(), f.text_atoms.tolist())
        assert (m.state, m.observation, m.new_state, m.exact) == (state, obs, new, exact)
        if not new:
            assert m.score == float(score)
    assert len(ix) == len(oracle.obs) and ix.num_states == oracle.num_states
    assert ix.num_screens == len(stream)
    # Members partition the observations, each state's in the order indexed.
    for s in range(ix.num_states):
        assert ix.members(s) == [o for o, st_o in enumerate(oracle.state_of) if st_o == s]


def test_exhaustive_mode_matches_hybrid_on_small_corpus():
    corpus = make_corpus(seed=3, apps=2, templates_per_app=10, variants=4)
    a, b = StateIndex(), StateIndex(candidates="exhaustive")
    for s in corpus.screens:
        assert a.add(s) == b.add(s)


def test_interleaved_add_decides_as_query_everything_first():
    # ``add`` updates BM25 and HNSW right after querying them; with a small
    # top_k the candidates depend on what the retrievers hold, so any update
    # seen by a query would change decisions. The plain order (every query,
    # then every update) is the reference.
    corpus = make_corpus(seed=5, apps=2, templates_per_app=12, variants=5)
    a, b = StateIndex(top_k=3, dense_k=4), StateIndex(top_k=3, dense_k=4)
    hybrid = 0
    for s in corpus.screens:
        f = b.featurize(s)
        m = a.add_features(f)
        key = f.meta.key()
        meta_id = b._meta_ids.get(key)
        if meta_id is not None and b._store.find_exact(meta_id, f.control_atoms, f.text_atoms) >= 0:
            assert b.add_features(f) == m
            continue
        hybrid += meta_id is not None
        vec = b._vector(f, None)
        doc = np.concatenate((f.control_atoms, f.text_atoms))
        best, best_score, top = b._decide(meta_id, f.control_atoms, f.text_atoms, vec, doc)
        assert b._insert(key, meta_id, f.control_atoms, f.text_atoms, vec, best, best_score, top, doc) == m
    assert hybrid > 50 and a.num_states == b.num_states < len(a)


def test_add_query_members_and_accessors():
    ix = StateIndex()
    base = [Element((0, i * 60, 400, i * 60 + 50), "Button", f"item {i}") for i in range(20)]
    s1 = Screen(base, 400, 1300, ScreenMeta(app="mail"))
    s2 = Screen(base[:-1] + [Element((0, 1140, 400, 1190), "Button", "item nineteen")], 400, 1300, ScreenMeta(app="mail"))
    s3 = Screen(base, 400, 1300, ScreenMeta(app="other"))
    m1 = ix.add(s1)
    assert m1 == Match(0, 0, True, False, 0.0)
    assert ix.add(s1) == Match(0, 0, False, True, 1.0)
    m2 = ix.add(s2)  # one text of 20 changed: 0.5 + 0.5 * 19/21 = 0.952...
    assert (m2.state, m2.new_state, m2.exact) == (0, False, False)
    assert m2.score == pytest.approx(0.5 + 0.5 * 19 / 21)
    m3 = ix.add(s3)  # same content, other app: not eligible
    assert m3.new_state and m3.state == 1
    assert len(ix) == 3 and ix.num_states == 2 and ix.num_screens == 4
    assert ix.members(0) == [0, 1] and ix.state_of(2) == 1 and ix.hits(0) == 2
    hits = ix.query(s1, k=5)
    assert [(h.observation, h.score, h.above_tau) for h in hits] == [(0, 1.0, True), (1, m2.score, True)]
    assert ix.query(Screen(base, 400, 1300, ScreenMeta(app="unknown"))) == []
    assert len(ix) == 3  # query indexes nothing
    assert ix.hnsw(ScreenMeta(app="mail")).ntotal == 2
    assert ix.dense_k == 32 and ix.ef_search == 32  # defaults: DENSE_K, and efSearch = dense_k
    ix.ef_search = 50
    assert ix.hnsw(ScreenMeta(app="mail")).hnsw.efSearch == 50
    report = ix.memory_report()
    assert sorted(report) == ["atoms", "bm25", "hnsw_links", "ids", "vectors"]
    assert ix.memory_bytes() == sum(report.values()) and min(report.values()) > 0
    assert report["vectors"] == 3 * 4 * ix.embedder.dim
    with pytest.raises(OutOfRangeError, match="no state 7"):
        ix.members(7)
    with pytest.raises(OutOfRangeError, match="no observation 9"):
        ix.state_of(9)
    with pytest.raises(OutOfRangeError, match="no observation with metadata"):
        ix.hnsw(ScreenMeta(app="nope"))


def test_bad_parameters():
    for kwargs, msg in [
        ({"tau": 1.5}, "tau must lie in"),
        ({"top_k": 0}, "top_k must be an integer >= 1"),
        ({"grid": 0}, "grid must be an integer >= 1"),
        ({"candidates": "all"}, "candidates must be"),
        ({"embedder": object()}, "embedder must have 'dim'"),
        ({"dense_k": 0}, "dense_k must be an integer from 1 to 65536, got 0"),
        ({"dense_k": 2**40}, "dense_k must be an integer from 1"),
        ({"dense_k": 3.5}, "dense_k must be an integer"),
        ({"dense_k": True}, "dense_k must be an integer"),
    ]:
        with pytest.raises(InvalidInputError, match=msg):
            StateIndex(**kwargs)
    ix = StateIndex()
    with pytest.raises(InvalidInputError, match="add_features expects Features"):
        ix.add_features("x")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="text vector has 3 dims"):
        ix.add_features(featurize(Screen([], 10, 10)), vector=np.zeros(3, dtype=np.float32))
    with pytest.raises(InvalidInputError, match="k must be a non-negative integer"):
        ix.query(Screen([], 10, 10), k=-1)


# Which real screens merge at tau = 0.93, without and with volatile masking.
# Scores are exact fractions of the files' atoms (grid 30).
REAL_PAIRS = [
    ("state_2021-11-23_094519.json", "state_2021-11-23_094523.json", Fraction(172, 185), Fraction(172, 185)),
    ("state_2021-11-23_094523.json", "state_2021-11-23_094526.json", Fraction(19, 20), Fraction(19, 20)),
    ("state_2021-11-23_105012.json", "state_2021-11-23_105025.json", Fraction(16, 17), Fraction(16, 17)),
    ("33609.json", "33610.json", Fraction(13, 38), Fraction(13, 38)),
    ("33624.json", "33630.json", Fraction(489, 550), Fraction(979, 1050)),
    ("33628.json", "33633.json", Fraction(13623, 14396), Fraction(2271, 2360)),
    ("33671.json", "33672.json", Fraction(51, 52), Fraction(51, 52)),
    ("33624.json", "33628.json", Fraction(283, 8008), None),
]


@pytest.mark.parametrize("a, b, plain, masked", REAL_PAIRS, ids=lambda x: str(x)[:24])
def test_real_pairs_merge_or_split(a, b, plain, masked, shared_data):
    from spatialobs.screen import jaccard_ratio

    sa, sb = by_name(a), by_name(b)
    for mask, want in ((False, plain), (True, masked)):
        if want is None:
            continue
        assert jaccard_ratio(featurize(sa, mask_volatile=mask), featurize(sb, mask_volatile=mask)) == want
        ix = StateIndex(mask_volatile=mask)
        ix.add(sa)
        m = ix.add(sb)
        assert (not m.new_state) == (want >= Fraction(93, 100))


def test_real_screens_dedup(shared_data):
    # Arrival order is file order; states as the pair table implies.
    plain, masked = StateIndex(), StateIndex(mask_volatile=True)
    for p in SCREENS:
        s = load_screen(p)
        plain.add(s)
        masked.add(s)
    assert len(plain) == len(masked) == 13
    # 094519 | 094523+094526 | 105012+105025 | 33609 | 33610 | 33624 | 33628+33633 | 33630 | 33671+33672
    assert plain.num_states == 9
    # Masking the clock merges 33624 and 33630 (10:30-16:00 vs 10:30-12:40).
    assert masked.num_states == 8
    names = [p.name.split("__")[-1] for p in SCREENS]
    state = {n: masked.state_of(i) for i, n in enumerate(names)}
    assert state["33624.json"] == state["33630.json"] != state["33628.json"]
    assert plain.state_of(names.index("33624.json")) != plain.state_of(names.index("33630.json"))


def test_quality_on_synthetic_corpus():
    corpus = make_corpus(seed=7, apps=3, templates_per_app=30, variants=5)
    report = quality_report(corpus, mask_volatile=True, top_k=20)
    assert report["precision"] == 1.0 and report["false_merge_rate"] == 0.0
    assert report["recall"] > 0.85 and report["f1"] > 0.9
    assert report["retrieval_recall"] >= 0.99 and report["decision_agreement"] >= 0.99
    plain = quality_report(corpus, top_k=20, check_retrieval=False)
    assert plain["recall"] < report["recall"]  # the clock splits states without masking


def test_pair_metrics():
    assert pair_metrics([0, 0, 1], [0, 0, 1])["f1"] == 1.0
    m = pair_metrics([0, 0, 0], [0, 0, 1])
    assert m["precision"] == 1 / 3 and m["recall"] == 1.0
    with pytest.raises(InvalidInputError, match="differ in length"):
        pair_metrics([0], [])


def test_concurrent_queries_and_adds():
    corpus = make_corpus(seed=11, apps=2, templates_per_app=15, variants=4)
    ix = StateIndex(mask_volatile=True)
    half = len(corpus.screens) // 2
    for s in corpus.screens[:half]:
        ix.add(s)
    serial = StateIndex(mask_volatile=True)
    for s in corpus.screens:
        serial.add(s)
    errors = []

    def reader():
        try:
            for s in corpus.screens[:40]:
                hits = ix.query(s, k=3)
                assert all(h.observation < len(ix) for h in hits)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for s in corpus.screens[half:]:
        ix.add(s)
    for t in threads:
        t.join()
    assert not errors
    # Adds were serialized: the same states as a single-threaded run.
    assert [ix.state_of(i) for i in range(len(ix))] == [serial.state_of(i) for i in range(len(serial))]


def test_concurrent_adds_are_serialized():
    corpus = make_corpus(seed=5, apps=1, templates_per_app=20, variants=3)
    ix = StateIndex()
    chunks = [corpus.screens[i::3] for i in range(3)]
    threads = [threading.Thread(target=lambda c=c: [ix.add(s) for s in c]) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ix.num_screens == len(corpus.screens)
    assert sorted(o for s in range(ix.num_states) for o in ix.members(s)) == list(range(len(ix)))


def test_sentence_transformers_is_imported_only_when_asked(monkeypatch):
    import spatialobs.screen  # noqa: F401

    assert "sentence_transformers" not in sys.modules

    class FakeModel:
        def __init__(self, name, **kwargs):
            self.name = name

        def get_sentence_embedding_dimension(self):
            return 8

        def encode(self, texts, batch_size, convert_to_numpy):
            return np.array([[len(t), 1, 0, 0, 0, 0, 0, 0] for t in texts], dtype=np.float64)

    fake = types.ModuleType("sentence_transformers")
    fake.SentenceTransformer = FakeModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    e = SentenceTransformerEmbedder("local-model")
    assert e.dim == 8 and "local-model" in e.name
    v = e.embed(["abc", ""])
    assert v.dtype == np.float32 and np.allclose(np.linalg.norm(v, axis=1), 1.0)
    ix = StateIndex(embedder=e)
    ix.add(Screen([Element((0, 0, 5, 5), "a", "abc")], 10, 10))
    assert len(ix) == 1


def test_sentence_transformers_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(InvalidInputError, match="needs the sentence-transformers package"):
        SentenceTransformerEmbedder("x")


def test_an_index_refuses_observations_past_its_id_range(monkeypatch):
    # Observation and state ids are int32: past the limit (lowered here) an add
    # is refused with nothing changed, while exact repeats still count as hits.
    from spatialobs.screen import _index_parts

    corpus = make_corpus(seed=2, apps=1, templates_per_app=4, variants=2)
    ix = StateIndex()
    monkeypatch.setattr(_index_parts, "MAX_OBSERVATIONS", 3)
    distinct = []
    for s in corpus.screens:
        before = len(ix)
        if len(ix) == 3:
            with pytest.raises(InvalidInputError, match="holds at most 3 observations"):
                ix.add(s)
            assert len(ix) == 3
            distinct.append(s)
            break
        ix.add(s)
        assert len(ix) in (before, before + 1)
    assert distinct, "the corpus must hold more than three distinct screens"
    first = ix.members(0)[0]
    assert ix.add(corpus.screens[0]).exact and ix.hits(first) >= 1
