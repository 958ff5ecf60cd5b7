"""StateIndex files against crafted content, file-system failures and killed saves.

Crafted files carry a valid checksum (rewritten with tests.fuzz.indexfile), so
they reach the checks behind it: before the fix, a state id taken from the file
sized a list before anything compared it with the file, and faiss sized vectors
from counts in the data.
"""

from __future__ import annotations

import os
import signal
import stat
import struct
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from spatialobs import InvalidInputError, SpatialObsError
from spatialobs.screen import CorruptIndexError, IndexFileError, StateIndex
from spatialobs.screen import _persist
from spatialobs.screen.synth import make_corpus
from tests.fuzz import indexfile

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(seed=5, apps=2, templates_per_app=6, variants=3)


@pytest.fixture(scope="module")
def saved(corpus, tmp_path_factory):
    ix = StateIndex(top_k=20)
    for s in corpus.screens:
        ix.add(s)
    path = tmp_path_factory.mktemp("saved") / "index.spobs"
    ix.save(path)
    return path.read_bytes()


def crafted(tmp_path, data, edit_header=None, edit=None, table=None, raw_table=None):
    header, sections = indexfile.decode(data)
    if edit_header:
        edit_header(header)
    if edit:
        edit(sections)
    path = tmp_path / "crafted.spobs"
    path.write_bytes(indexfile.encode(header, sections, table, raw_table=raw_table))
    return path


def rejected(path, match):
    with pytest.raises(CorruptIndexError, match=match) as info:
        StateIndex.load(path)
    msg = str(info.value)
    assert "\n" not in msg and len(msg) < 400
    return msg


def int64s(values):
    return np.asarray(values, dtype="<i8").tobytes()


def test_the_encoder_round_trips(tmp_path, saved):
    path = crafted(tmp_path, saved)
    assert path.read_bytes() == saved or len(StateIndex.load(path)) > 0


def test_a_huge_state_id_is_rejected_before_anything_is_sized_from_it(tmp_path, saved):
    # was: [[] for _ in range(state_of.max() + 1)], a list sized by the file
    def edit(sections):
        s = np.frombuffer(sections["state_of"], dtype="<i8").copy()
        s[-1] = 2_000_000
        sections["state_of"] = int64s(s)

    path = crafted(tmp_path, saved, edit=edit)
    tracemalloc.start()
    try:
        rejected(path, "missing partition or state")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * len(saved) + 2_000_000


@pytest.mark.parametrize("field, value", [
    ("neighbors", 2**39), ("levels", 2**39), ("offsets", 2**40 - 1), ("assign_probas", 10**9), ("storage", 2**38),
])
def test_faiss_counts_beyond_the_bytes_present_are_rejected(tmp_path, saved, field, value):
    # faiss resizes a vector to any count below 2^40 before reading it
    order = {"assign_probas": 6, "cum": 7, "levels": 8, "offsets": 9, "neighbors": 10, "storage": -1}

    def edit(sections):
        raw = bytearray(sections["part0.hnsw"])
        at, fmt = indexfile.hnsw_fields(bytes(raw))[order[field]]
        raw[at : at + 8] = struct.pack("<Q", value)
        sections["part0.hnsw"] = bytes(raw)

    rejected(crafted(tmp_path, saved, edit=edit), "dense index")


def test_a_graph_linking_to_a_missing_vector_is_rejected(tmp_path, saved):
    # faiss trusts neighbor ids when it searches: one out of range reads out of bounds
    def edit(sections):
        raw = bytearray(sections["part0.hnsw"])
        fields = indexfile.hnsw_fields(bytes(raw))
        at = fields[10][0] + 8  # first neighbor id
        raw[at : at + 4] = struct.pack("<i", 10**6)
        sections["part0.hnsw"] = bytes(raw)

    rejected(crafted(tmp_path, saved, edit=edit), "links to a missing vector")


@pytest.mark.parametrize("raw_table, match", [
    ({"a": 1}, "section table"), ([1], "section 0 must be an object"), ([{}], "repeated name"),
])
def test_a_malformed_section_table_is_rejected(tmp_path, saved, raw_table, match):
    rejected(crafted(tmp_path, saved, raw_table=raw_table), match)


@pytest.mark.parametrize("edit_header, match", [
    (lambda h: h.update(metas=[["a", None]]), "metadata value"),
    (lambda h: h.update(num_screens=-1), "num_screens"),
    (lambda h: h["config"].update(top_k=float("inf")), "top_k"),
    (lambda h: h["config"].update(grid=2**40), "invalid configuration"),
    (lambda h: h["config"].update(tau=[1, 0]), "tau denominator"),
    (lambda h: h["embedder"].pop("n"), "n-gram size"),
    (lambda h: h["embedder"].update(dim=2**70), "embedder dim"),
    (lambda h: h.pop("embedder"), "names no embedder"),
])
def test_malformed_headers_are_rejected(tmp_path, saved, edit_header, match):
    rejected(crafted(tmp_path, saved, edit_header=edit_header), match)


@pytest.mark.parametrize("table, match", [
    ({"state_of": {"offset": 2**62}}, "does not fit"),
    ({"state_of": {"nbytes": 2**62}}, "does not fit"),
    ({"state_of": {"shape": [2**32, 2**32]}}, "one-dimensional"),
    ({"state_of": {"shape": [-1]}}, "length"),
    ({"state_of": {"dtype": "object"}}, "unsupported dtype"),
    ({"hits": {"name": "state_of"}}, "repeated name"),
])
def test_a_lying_section_table_is_rejected(tmp_path, saved, table, match):
    rejected(crafted(tmp_path, saved, table=table), match)


def test_a_deeply_nested_header_is_rejected(tmp_path, saved):
    header, sections = indexfile.decode(saved)
    blob = indexfile.encode(header, sections)
    head = b"[" * 100_000 + b"]" * 100_000
    path = tmp_path / "deep.spobs"
    body = indexfile._PREFIX.pack(indexfile.MAGIC, 1, len(head)) + head
    import hashlib

    path.write_bytes(body + hashlib.sha256(body).digest())
    assert blob  # the well-formed one still encodes
    rejected(path, "unreadable header|must be an object")


def test_file_system_errors_are_typed(tmp_path, corpus):
    ix = StateIndex()
    ix.add(corpus.screens[0])
    for bad in (tmp_path / "missing.spobs", tmp_path):
        with pytest.raises(IndexFileError, match="cannot read state index") as info:
            StateIndex.load(bad)
        assert isinstance(info.value, SpatialObsError) and isinstance(info.value, OSError)
        assert info.value.errno is not None and "\n" not in str(info.value)
    with pytest.raises(IndexFileError, match="folder does not exist"):
        ix.save(tmp_path / "no" / "such" / "index.spobs")
    with pytest.raises(IndexFileError, match="it is a folder"):
        ix.save(tmp_path)
    with pytest.raises(InvalidInputError):
        ix.save(42)
    assert sorted(os.listdir(tmp_path)) == []


def test_a_failed_write_removes_its_temporary_file(tmp_path, corpus, monkeypatch):
    ix = StateIndex()
    ix.add(corpus.screens[0])
    path = tmp_path / "index.spobs"

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, chunk):
            raise OSError(28, "No space left on device")

    real_fdopen = os.fdopen
    monkeypatch.setattr(_persist.os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    with pytest.raises(IndexFileError, match="No space left on device"):
        ix.save(path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_saved_files_follow_the_umask(tmp_path, corpus):
    ix = StateIndex()
    ix.add(corpus.screens[0])
    old = os.umask(0o027)
    try:
        ix.save(tmp_path / "a.spobs")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.spobs").st_mode) == 0o640
    old = os.umask(0o002)
    try:
        ix.save(tmp_path / "b.spobs")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "b.spobs").st_mode) == 0o664


@pytest.mark.skipif(_persist.fcntl is None, reason="stale temporary files are recognized by flock (POSIX)")
def test_stale_temporary_files_are_removed_but_a_live_saves_is_kept(tmp_path, corpus):
    import fcntl

    ix = StateIndex()
    ix.add(corpus.screens[0])
    path = tmp_path / "index.spobs"
    stale = [tmp_path / f"index.spobs.{i:012x}.tmp" for i in range(3)]
    for p in stale:
        p.write_bytes(b"x" * 1000)
    live = tmp_path / "index.spobs.abcdefabcdef.tmp"
    live.write_bytes(b"y")
    other = tmp_path / "other.spobs.000000000000.tmp"  # another target's: not ours to remove
    other.write_bytes(b"z")
    unrelated = tmp_path / "index.spobs.notours.tmp"
    unrelated.write_bytes(b"w")
    with open(live, "rb") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)  # as a save in progress holds it
        ix.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["index.spobs", live.name, other.name, unrelated.name])
    ix.save(path)  # the lock is gone now: the next save removes it
    assert not live.exists()


KILLED_SAVER = textwrap.dedent("""
    import sys, time
    from spatialobs.screen import StateIndex
    from spatialobs.screen.synth import make_corpus

    path, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
    corpus = make_corpus(seed=9, apps=2, templates_per_app=40, variants=10)  # a save of some milliseconds
    ix = StateIndex(top_k=20)
    for s in corpus.screens:
        ix.add(s)
    print("ready", flush=True)
    while time.monotonic() < deadline:  # stops by itself if nobody kills it
        ix.save(path)
""")


def _temporaries(folder):
    return [p for p in folder.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_save_leaves_a_loadable_index_and_the_next_save_cleans_up(tmp_path):
    script = tmp_path / "saver.py"
    script.write_text(KILLED_SAVER)
    folder = tmp_path / "out"
    folder.mkdir()
    path = folder / "index.spobs"
    first = StateIndex()
    first.add(make_corpus(seed=1, apps=1, templates_per_app=1, variants=1).screens[0])
    first.save(path)  # the previous version every killed save must leave intact
    # the package as this interpreter imports it (installed, or the source tree in a
    # development setup), and the checkout for the tests' own modules
    import spatialobs

    package_root = str(Path(spatialobs.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys([package_root, str(ROOT)])))
    mid_write = attempts = 0
    # at least four kills; more (up to 20) until one lands while a temporary file is
    # being written, which on a fast, idle machine is a window of a few milliseconds
    while attempts < 4 or (mid_write == 0 and attempts < 20):
        attempts += 1
        proc = subprocess.Popen([sys.executable, str(script), str(path), "30"], stdout=subprocess.PIPE, env=env,
                                text=True)
        try:
            assert proc.stdout.readline().strip() == "ready"
            # Kill while a temporary file of this save exists (it is being written);
            # poll for at most 10 s, then kill wherever the saver is.
            before = {p.name for p in _temporaries(folder)}
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not ({p.name for p in _temporaries(folder)} - before):
                time.sleep(0.0005)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait(timeout=30)
            proc.stdout.close()
        assert proc.returncode == -signal.SIGKILL
        # a temporary file of this save survived the kill (a save first removes the ones
        # earlier kills left, so counting files would miss it)
        mid_write += bool({p.name for p in _temporaries(folder)} - before)
        StateIndex.load(path)  # whatever the kill interrupted, the target is whole
    assert mid_write >= 1, "no kill landed inside a write"
    ix = StateIndex.load(path)
    ix.save(path)  # removes every temporary file the killed saves left
    assert not _temporaries(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["index.spobs"]
    assert len(StateIndex.load(path)) == len(ix)


def test_dense_k_is_saved_and_a_file_without_it_takes_top_k(tmp_path, saved):
    # A file written before dense_k existed took top_k dense candidates; it
    # loads with dense_k = top_k and decides as it did.
    assert StateIndex.load(crafted(tmp_path, saved)).dense_k == 20
    old = StateIndex.load(crafted(tmp_path, saved, edit_header=lambda h: h["config"].pop("dense_k")))
    assert old.dense_k == 20 and old.top_k == 20
    ix = StateIndex(top_k=20, dense_k=7)
    ix.save(tmp_path / "d.spobs")
    assert StateIndex.load(tmp_path / "d.spobs").dense_k == 7
    msg = rejected(crafted(tmp_path, saved, edit_header=lambda h: h["config"].update(dense_k=0)), "dense_k")
    assert "invalid configuration" in msg
    rejected(crafted(tmp_path, saved, edit_header=lambda h: h["config"].update(dense_k="9")), "dense_k must be an integer")


def test_more_observations_than_int32_ids_hold_are_rejected(tmp_path, saved, monkeypatch):
    # Ids live in int32 arrays in memory; a file with more observations than
    # they can number is refused (the limit lowered so that a small file crosses it).
    from spatialobs.screen import _index_parts

    monkeypatch.setattr(_index_parts, "MAX_OBSERVATIONS", 5)
    msg = rejected(crafted(tmp_path, saved), r"observations: an index holds at most 5")
    assert msg.startswith("crafted.spobs") or "5" in msg
