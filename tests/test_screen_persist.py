"""StateIndex.save / load: round trip, atomicity, and rejection of damaged files."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

from spatialobs import InvalidInputError, SpatialObsError
from spatialobs.screen import CorruptIndexError, HashedNgramEmbedder, StateIndex
from spatialobs.screen import _persist
from spatialobs.screen.synth import make_corpus


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(seed=21, apps=2, templates_per_app=12, variants=4)


def built(corpus, n=None, **kwargs):
    ix = StateIndex(mask_volatile=True, **kwargs)
    for s in corpus.screens[:n]:
        ix.add(s)
    return ix


def test_round_trip_continues_identically(tmp_path, corpus):
    half = len(corpus.screens) // 2
    ix = built(corpus, half, top_k=50)
    path = tmp_path / "index.spobs"
    ix.save(path)
    back = StateIndex.load(path)
    assert len(back) == len(ix) and back.num_states == ix.num_states and back.num_screens == ix.num_screens
    assert back.tau == ix.tau and back.top_k == 50 and back.mask_volatile
    for o in range(len(ix)):
        assert back.state_of(o) == ix.state_of(o) and back.hits(o) == ix.hits(o)
        a, b = ix.observation_atoms(o), back.observation_atoms(o)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    # The member chains are rebuilt from state_of: same members, same order,
    # and still the same after both indexes grow.
    assert [back.members(s) for s in range(ix.num_states)] == [ix.members(s) for s in range(ix.num_states)]
    for s in corpus.screens[half:]:
        assert back.add(s) == ix.add(s)
    assert back.query(corpus.screens[0]) == ix.query(corpus.screens[0])
    assert [back.members(s) for s in range(ix.num_states)] == [ix.members(s) for s in range(ix.num_states)]
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_empty_index_round_trips(tmp_path):
    path = tmp_path / "empty.spobs"
    StateIndex(tau="0.9", embedder=HashedNgramEmbedder(n=2, dim=32)).save(path)
    back = StateIndex.load(path)
    assert len(back) == 0 and back.num_states == 0 and back.embedder.dim == 32 and str(back.tau) == "9/10"


@pytest.mark.parametrize("where", ["fsync", "replace"])
def test_a_failed_save_leaves_the_previous_file(tmp_path, corpus, monkeypatch, where):
    path = tmp_path / "index.spobs"
    small = built(corpus, 5)
    small.save(path)
    before = path.read_bytes()
    bigger = built(corpus, 20)

    def crash(*args):
        raise OSError("disk full")

    # fsync: the data is written but not yet renamed; replace: the rename fails.
    monkeypatch.setattr(_persist.os, where, crash)
    with pytest.raises(OSError, match="disk full"):
        bigger.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["index.spobs"]
    assert len(StateIndex.load(path)) == len(small)


def test_damaged_files_are_rejected(tmp_path, corpus):
    path = tmp_path / "index.spobs"
    built(corpus, 10).save(path)
    data = path.read_bytes()

    def check(blob, message):
        bad = tmp_path / "bad.spobs"
        bad.write_bytes(blob)
        with pytest.raises(CorruptIndexError, match=message) as info:
            StateIndex.load(bad)
        assert isinstance(info.value, SpatialObsError)

    check(data[: len(data) // 2], "checksum mismatch")
    check(data[:10], "too short")
    check(b"", "too short")
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x01
    check(bytes(flipped), "checksum mismatch")
    check(b"NOTANIDX" + data[8:], "bad magic")
    newer = bytearray(data)
    struct.pack_into("<I", newer, 8, 99)
    check(bytes(newer), "format version 99 is not supported")


def test_external_embedder_must_be_supplied(tmp_path):
    class Const:
        name = "const"
        dim = 4

        def embed(self, texts):
            return np.tile(np.array([1, 0, 0, 0], dtype=np.float32), (len(texts), 1))

    path = tmp_path / "ext.spobs"
    StateIndex(embedder=Const()).save(path)
    with pytest.raises(InvalidInputError, match="pass an equivalent one"):
        StateIndex.load(path)
    assert StateIndex.load(path, embedder=Const()).embedder.dim == 4
    with pytest.raises(InvalidInputError, match="4-dimensional embedder"):
        StateIndex.load(path, embedder=HashedNgramEmbedder(dim=8))
