"""Graph persistence: SQLite round trips, memory/SQLite equivalence, killed writers, several processes."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import ScreenGraph, explore, explore_workers, sim
from spatialobs.screen.store import MemoryStore, SQLiteStore, StoreError, TransitionRow


def _snapshot(g: ScreenGraph):
    return (g.num_states, g.num_edges, g.num_transitions, list(g.edges()),
            {s: round(g.u(s), 12) for s in g.states()},
            {(s, sig): round(g.q(s, sig), 12) for s, sig, _, _ in g.edges()})


def test_sqlite_round_trip_and_memory_equivalence(tmp_path):
    path = tmp_path / "g.sqlite"
    app = sim.make_app("notepad")
    with ScreenGraph(path, app="notepad") as g:
        for st in app.starts(3):
            explore(app, 15, graph=g, start=st, episode=st.index)
        before = _snapshot(g)
    with ScreenGraph(path) as g2:
        assert _snapshot(g2) == before
        assert g2.app == "notepad" and g2.divergences == 0
    with ScreenGraph(MemoryStore(), app="notepad") as gm:
        for st in app.starts(3):
            explore(app, 15, graph=gm, start=st, episode=st.index)
        assert _snapshot(gm) == before


def test_reopen_continues_identically(tmp_path):
    path = tmp_path / "g.sqlite"
    app = sim.make_app("explorer")
    starts = app.starts(2)
    with ScreenGraph(path, app="explorer") as g:
        explore(app, 10, graph=g, start=starts[0])
    with ScreenGraph(path) as g:
        e1 = explore(app, 10, graph=g, start=starts[1])
    with ScreenGraph(app="explorer") as gm:
        explore(app, 10, graph=gm, start=starts[0])
        e2 = explore(app, 10, graph=gm, start=starts[1])
    assert [(s.source, s.signature, s.target, s.reward) for s in e1.steps] == \
        [(s.source, s.signature, s.target, s.reward) for s in e2.steps]


def test_store_config_mismatch_and_bad_files(tmp_path):
    path = tmp_path / "g.sqlite"
    ScreenGraph(path, app="notepad", kappa=10).close()
    with pytest.raises(InvalidInputError, match="kappa=10.0"):
        ScreenGraph(path, kappa=20)
    with pytest.raises(InvalidInputError, match="app='notepad'"):
        ScreenGraph(path, app="calc")
    with ScreenGraph(path) as g:
        assert g.kappa == 10.0
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="junk.sqlite"):
        SQLiteStore(junk)
    with pytest.raises(InvalidInputError, match="directory"):
        SQLiteStore(tmp_path)
    with pytest.raises(InvalidInputError, match="store must be"):
        ScreenGraph(store=42)


def test_appends_need_a_transaction(tmp_path):
    for st in (MemoryStore(), SQLiteStore(tmp_path / "s.sqlite")):
        with st:
            with pytest.raises(StoreError, match="inside store.write"):
                st.add_transition(TransitionRow(0, "w", 0, 0, 0, "x", 0, False, False, 0.0, 0.5, 0.5))
            with pytest.raises(RuntimeError):
                with st.write():
                    st.add_transition(TransitionRow(0, "w", 0, 0, 0, "x", 0, False, False, 0.0, 0.5, 0.5))
                    raise RuntimeError("boom")
            assert st.transitions() == []  # rolled back


KILLED = textwrap.dedent("""
    import os, signal, sys
    from spatialobs.screen.store import SQLiteStore, TransitionRow
    st = SQLiteStore(sys.argv[1])
    with st.write():
        st.add_transition(TransitionRow(0, "doomed", 0, 0, 0, "x", 0, False, False, 0.0, 0.5, 0.5))
        print("inside", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_writer_loses_only_its_step(tmp_path):
    path = tmp_path / "g.sqlite"
    app = sim.make_app("notepad")
    with ScreenGraph(path, app="notepad") as g:
        explore(app, 5, graph=g)
        before = _snapshot(g)
    proc = subprocess.run([sys.executable, "-c", KILLED, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL and "inside" in proc.stdout
    with ScreenGraph(path) as g:
        assert _snapshot(g) == before
        assert all(r.worker != "doomed" for r in g.store.transitions())
        explore(app, 3, graph=g)  # the file is writable again
        assert g.num_transitions == before[2] + 3


def test_workers_share_one_graph_consistent_with_their_logs(tmp_path):
    path = tmp_path / "g.sqlite"
    eps = explore_workers(path, "notepad", starts=6, steps=12, workers=3)
    assert len(eps) == 6 and all(len(e.steps) == 12 for e in eps)
    with ScreenGraph(path) as g:
        rows = g.store.transitions()
        assert {r.worker for r in rows} == {"w0", "w1", "w2"}
        # every logged step is in the store, once, with what the worker saw
        logged = Counter((e.start.index, s.t, s.source, s.signature, s.target)
                         for e in eps for s in e.steps if s.capture is None)
        stored = Counter((r.episode, r.step, r.source, r.signature, r.target) for r in rows)
        assert logged == stored
        caps = Counter((e.start.index, s.t, s.signature) for e in eps for s in e.steps if s.capture)
        assert caps == Counter((c.episode, c.step, c.signature) for c in g.captures())
        # the graph is the union of the logs
        edges = Counter((s.source, s.signature, s.target) for e in eps for s in e.steps if s.capture is None)
        assert {(s, sig, t): c for s, sig, t, c in g.edges()} == dict(edges)
        # novelty was judged against the shared graph: each edge and state is new exactly once
        assert sum(s.edge_novel for e in eps for s in e.steps) == g.num_edges
        starts = {e.start_state for e in eps}
        reached = {s.target for e in eps for s in e.steps}
        assert set(g.states()) == starts | reached
        assert sum(s.state_novel for e in eps for s in e.steps) <= g.num_states
        assert g.divergences == 0


def test_explore_workers_bad_input(tmp_path):
    with pytest.raises(InvalidInputError, match="workers"):
        explore_workers(tmp_path / "g.sqlite", "notepad", workers=0)
    with pytest.raises(InvalidInputError, match="'softmax'"):
        explore_workers(tmp_path / "g.sqlite", "notepad", selector="softmax")
