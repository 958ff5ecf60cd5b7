"""SQLiteStore on damaged stores, and its log under workers killed mid-step.

A step is one write transaction (an observation and a transition); the log is the
tables' sequence numbers. Killing workers with SIGKILL at random points must lose
no committed step and leave no half step.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from spatialobs import InvalidInputError
from spatialobs.screen.store import SQLiteStore, StoreError

ROOT = Path(__file__).resolve().parents[1]


def test_damaged_rows_and_configuration_are_store_errors(tmp_path):
    path = tmp_path / "g.sqlite"
    SQLiteStore(path).close()
    con = sqlite3.connect(path)
    con.execute("INSERT INTO config VALUES ('x', 'not json')")
    con.execute("INSERT INTO transitions (worker, episode, step, source, signature, target, state_novel, edge_novel, "
                "reward, u_source, u_target, label) VALUES ('w', 0, 0, 0, 's', 0, 0, 0, 'abc', 0, 0, '')")
    con.execute("INSERT INTO captures (worker, episode, step, source, signature, app, screen) "
                "VALUES (?, 0, 0, 0, 's', 'a', '{}')", ("w" * 1_000_000,))
    con.execute("INSERT INTO captures (worker, episode, step, source, signature, app, screen) "
                "VALUES (X'00', 0, 0, 0, 's', 'a', '{}')")
    con.commit()
    con.close()
    with SQLiteStore(path) as st:
        for read, match in ((st.config, "unreadable configuration"), (st.transitions, "where a number belongs"),
                            (st.captures, "where a text belongs")):
            with pytest.raises(StoreError, match=match) as info:
                read()
            assert len(str(info.value)) < 400
        with pytest.raises(InvalidInputError):
            st.transitions(after="0")
        with pytest.raises(StoreError, match="configuration"):
            with st.write():
                st.set_config({"x": object()})


def test_unopenable_stores_are_typed(tmp_path):
    with pytest.raises(StoreError, match="cannot open"):
        SQLiteStore(tmp_path / "no" / "such" / "g.sqlite")
    with pytest.raises(InvalidInputError, match="is a directory"):
        SQLiteStore(tmp_path)
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"x" * 5000)
    with pytest.raises(StoreError, match="not a graph store"):
        SQLiteStore(garbage)


STEPPER = textwrap.dedent("""
    import sys, time
    from spatialobs.screen.store import ObservationRow, SQLiteStore, TransitionRow

    path, worker, deadline = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
    st = SQLiteStore(path)
    k = 0
    print("ready", flush=True)
    while time.monotonic() < deadline:  # stops by itself if nobody kills it
        with st.write():
            st.add_observation(ObservationRow(0, k, (None, None, worker), b"", b"", f"{worker}:{k}"))
            st.add_transition(TransitionRow(0, worker, 0, k, 0, "sig", k, True, True, 1.0, 0.5, 0.5, f"{worker}:{k}"))
        print(k, flush=True)  # acknowledged: committed
        k += 1
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_workers_killed_mid_step_lose_no_committed_step_and_leave_no_half_step(tmp_path):
    script = tmp_path / "stepper.py"
    script.write_text(STEPPER)
    path = tmp_path / "g.sqlite"
    SQLiteStore(path).close()
    # the package as this interpreter imports it (installed, or the source tree in a
    # development setup), and the checkout for the tests' own modules
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rng = np.random.default_rng(8)
    acknowledged = {}
    procs = {f"w{i}": subprocess.Popen([sys.executable, str(script), str(path), f"w{i}", "30"],
                                       stdout=subprocess.PIPE, env=env, text=True) for i in range(3)}
    try:
        for proc in procs.values():
            assert proc.stdout.readline().strip() == "ready"
        # kill once the workers have committed a random number of steps between them (polled, bounded)
        goal, committed = int(rng.integers(10, 80)), 0
        deadline = time.monotonic() + 30
        while committed < goal:
            assert time.monotonic() < deadline, f"the workers committed {committed} of {goal} steps in 30 s"
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
            try:
                committed = con.execute("SELECT COUNT(*) FROM transitions").fetchone()[0]
            finally:
                con.close()
            time.sleep(0.005)  # the poll's interval
        for name, proc in procs.items():
            proc.send_signal(signal.SIGKILL)
            time.sleep(float(rng.uniform(0, 0.05)))  # kills spread at random, not a wait for anything
    finally:
        for name, proc in procs.items():
            proc.kill()
            proc.wait(timeout=30)
            acknowledged[name] = [int(x) for x in proc.stdout.read().split()]  # the same buffer as "ready"
            proc.stdout.close()
    assert [proc.returncode for proc in procs.values()] == [-signal.SIGKILL] * len(procs)
    with SQLiteStore(path) as st:
        transitions, observations = st.transitions(), st.observations()
    assert [t.seq for t in transitions] == list(range(1, len(transitions) + 1))
    for name, acks in acknowledged.items():
        logged = [t.step for t in transitions if t.worker == name]
        # Committed steps form a prefix 0..K-1 and include every acknowledged one;
        # at most one more (committed just before the kill, not yet acknowledged).
        assert logged == list(range(len(logged)))
        assert len(acks) <= len(logged) <= len(acks) + 1
        assert sum(1 for o in observations if o.meta[2] == name) == len(logged)  # no half step
    assert sum(len(a) for a in acknowledged.values()) > 0
