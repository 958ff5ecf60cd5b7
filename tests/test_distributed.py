"""Distributed exploration and dedup (spatialobs.distributed).

The in-process parts (shards, graph log, worker) run everywhere. The Ray tests run
on a local runtime (2 CPUs, loopback, no dashboard); they are skipped when Ray is
not installed, and fail instead when ``CI=true`` (CI installs the ``ray`` extra).
"""

from __future__ import annotations

import json
import os
import signal
import time
from functools import partial
from pathlib import Path

import pytest

from spatialobs.distributed import Explorer, GraphLog, IndexShard, LocalLinks
from spatialobs.distributed._wal import RecordLog
from spatialobs.distributed.shard import features_bytes, shard_of
from spatialobs.screen import ScreenGraph, StateIndex, explore, featurize, sim
from spatialobs.screen.synth import make_corpus


def _key(ep):
    return [(s.source, s.signature, s.target, s.state_novel, s.edge_novel, s.reward, s.u_source, s.u_target,
             s.capture, s.score, s.digest) for s in ep.steps]


def _reference(app, starts, steps):
    """The single-process loop over one shared graph, episodes in start order."""
    g = ScreenGraph(app=app)
    eps = [explore(sim.make_app(app, 0), steps, "puct", "heuristic", graph=g, start=st, episode=k)
           for k, st in enumerate(sim.make_app(app, 0).starts(starts))]
    return eps, g


# ---- in process ------------------------------------------------------------------------


def test_record_log_drops_a_torn_tail_and_keeps_the_rest(tmp_path):
    log = RecordLog(tmp_path / "a.log")
    for i in range(5):
        log.append(bytes([i]) * (i + 1))
    log.close()
    data = (tmp_path / "a.log").read_bytes()
    for cut in range(len(data) - 1, 0, -3):
        (tmp_path / "b.log").write_bytes(data[:cut])
        b = RecordLog(tmp_path / "b.log")
        got = b.records()
        b.close()
        assert got == [bytes([i]) * (i + 1) for i in range(len(got))]
        # the torn record is gone from the file, appends go after the last whole one
        assert (tmp_path / "b.log").stat().st_size == sum(8 + i + 1 for i in range(len(got)))


@pytest.mark.parametrize("checkpoint_every", [0, 7])
def test_a_restarted_shard_is_the_same_index(tmp_path, checkpoint_every):
    c = make_corpus(seed=1, apps=2, templates_per_app=8, variants=4)
    raws = [features_bytes(featurize(s)) for s in c.screens]
    a = IndexShard(0, tmp_path, checkpoint_every=checkpoint_every)
    first = a.add_batch(raws[:50])
    a.close()  # as good as killed: everything acknowledged is in the log already
    b = IndexShard(0, tmp_path, checkpoint_every=checkpoint_every)
    assert b.stats()["observations"] == sum(not x.exact for x in first)
    assert b.replayed == (len(b.rows(0, 10**9)) - (7 * (len(b.rows(0, 10**9)) // 7) if checkpoint_every else 0))
    rest = b.add_batch(raws[50:])
    b.close()
    ref = StateIndex()
    assert [(x.state, x.exact) for x in first + rest] == [(m.state, m.exact) for m in map(ref.add, c.screens)]


def test_the_worker_takes_the_single_process_steps(tmp_path):
    ref, g = _reference("notepad", 4, 30)
    shards = [IndexShard(0, tmp_path)]
    log = GraphLog(tmp_path / "g.sqlite", shards=1, app="notepad", fetch=lambda k, a, b: shards[k].rows(a, b))
    w = Explorer("w0", partial(sim.make_app, "notepad", 0), LocalLinks(shards, log))
    eps = [w.run_episode(k, st, 30) for k, st in enumerate(w.starts(4))]
    assert [_key(e) for e in eps] == [_key(e) for e in ref]
    assert [e.metrics for e in eps] == [e.metrics for e in ref]
    assert log.edges() == list(g.edges())
    # every step cost one wait (two calls), plus one per episode start and per recovery
    caps = sum(s.capture is not None for e in eps for s in e.steps)
    assert w.links.waits == sum(len(e.steps) for e in eps) + len(eps) + caps
    log.close()
    w.close()
    shards[0].close()
    with ScreenGraph(tmp_path / "g.sqlite") as back:  # the store is an ordinary graph store
        assert back.divergences == 0 and list(back.edges()) == list(g.edges())
    again = GraphLog(tmp_path / "g.sqlite", shards=1)  # a restarted graph replays its store
    assert again.summary() == log.summary() and again.edges() == log.edges()
    assert again.record(("w0", 0, 3), 0, "x", "")[0] == log.answers("w0", 0)[3][1]  # a resent step: same answer
    again.close()


def test_two_interleaved_workers_on_two_shards_leave_a_consistent_store(tmp_path):
    shards = [IndexShard(k, tmp_path) for k in range(2)]
    log = GraphLog(tmp_path / "g.sqlite", shards=2, app="notepad", fetch=lambda k, a, b: shards[k].rows(a, b))
    ws = [Explorer(f"w{i}", partial(sim.make_app, "notepad", 0), LocalLinks(shards, log)) for i in range(2)]
    starts = ws[0].starts(4)
    for k, st in enumerate(starts):
        ws[k % 2].run_episode(k, st, 20)
    log.close()
    with ScreenGraph(tmp_path / "g.sqlite") as back:
        assert back.divergences == 0
        assert back.num_transitions == log.num_transitions and back.num_edges == log.num_edges
    for w in ws:
        w.close()
    for sh in shards:
        sh.close()


# ---- on Ray ----------------------------------------------------------------------------

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False
    if os.environ.get("CI") == "true":
        raise RuntimeError('CI must install the ray extra (pip install ".[ray]") to run tests/test_distributed.py')

needs_ray = pytest.mark.skipif(not HAVE_RAY, reason='Ray is not installed (pip install ".[ray]")')


@pytest.fixture(scope="module")
def ray_rt(one_ray_cluster_at_a_time):
    from spatialobs.distributed.runtime import ray_runtime

    with ray_runtime(num_cpus=2) as r:
        yield r


@needs_ray
def test_dedup_on_ray_gives_the_single_index_states(ray_rt, tmp_path):
    from spatialobs.distributed.runtime import dedup_ray

    c = make_corpus(seed=3, apps=4, templates_per_app=10, variants=4)
    docs = [(str(i), s.to_dict()) for i, s in enumerate(c.screens)]
    docs.insert(17, ("bad", "{not json"))
    assert len({shard_of(s.meta, 3) for s in c.screens}) > 1  # the shards really split the input
    res = dedup_ray(docs, shards=3, chunk=37, folder=tmp_path)
    ref = StateIndex()
    matches = [ref.add(s) for s in c.screens]
    assert res.states == [m.state for m in matches]
    assert res.new == ref.num_states and res.observations == len(ref)
    assert res.exact == sum(m.exact for m in matches)
    assert [label for label, _ in res.failed] == ["bad"]


@needs_ray
def test_one_ray_worker_takes_the_single_process_steps(ray_rt, tmp_path):
    from spatialobs.distributed.runtime import explore_ray

    ref, g = _reference("calc", 3, 25)
    run = explore_ray("calc", starts=3, steps=25, workers=1, shards=1, store=tmp_path / "g.sqlite")
    assert [_key(e) for e in run.episodes] == [_key(e) for e in ref]
    assert [e.metrics for e in run.episodes] == [e.metrics for e in ref]
    assert run.workers["w0"]["steps"] == 75 and run.workers["w0"]["waits"] <= 75 + 3 + 75
    with ScreenGraph(tmp_path / "g.sqlite") as back:
        assert list(back.edges()) == list(g.edges()) and back.divergences == 0


def _worker_logs(folder):
    sent, acked = set(), set()
    for f in Path(folder).glob("w*.steps.jsonl"):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            k = tuple(rec["key"])
            (acked if "acked" in rec else sent).add(k)
    return sent, acked


@pytest.mark.timeout(300)
@needs_ray
def test_nothing_acknowledged_is_lost_when_a_worker_a_shard_and_the_graph_die(ray_rt, tmp_path):
    """Slow by design: a real Ray run of two workers, two shards and the graph, each of the three killed once
    mid-run and restarted (72 s on the shared 2-core machine under load).
    """
    from spatialobs.distributed.runtime import RayExploration

    run = RayExploration(partial(sim.make_app, "notepad", 0), "notepad", workers=2, shards=2, folder=tmp_path,
                         checkpoint_every=5)
    try:
        pids = run.ready()
        refs = run.submit(run.starts(6), steps=60)
        killed = []
        deadline = time.monotonic() + 60
        for at, victim in ((40, "w1"), (90, "shard0"), (140, "graph")):
            while run.summary()["transitions"] + run.summary()["captures"] < at:
                assert time.monotonic() < deadline, "the run stalled"
                time.sleep(0.01)
            if victim == "graph":
                ray_rt.kill(run.graph, no_restart=False)
            else:
                os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)
        eps, lost = run.gather(refs)
        assert lost, "the worker was killed mid-episode"
        summary = run.summary()
        shard_stats = ray_rt.get([s.stats.remote() for s in run.shards])
        keys = set(ray_rt.get(run.graph.steps.remote()))
    finally:
        run.close()
    sent, acked = _worker_logs(tmp_path)
    keys = {tuple(k) for k in keys}
    assert acked <= keys, "an acknowledged step is missing from the graph"
    assert keys <= sent, "the graph holds a step no worker sent"
    # no half steps: every step of every surviving episode is in the graph, counted once
    assert sum(len(e.steps) for e in eps) == summary["transitions"] + summary["captures"] == len(keys)
    assert any(s["replayed"] > 0 or s["observations"] > 0 for s in shard_stats)
    with ScreenGraph(tmp_path / "graph.sqlite") as back:
        assert back.divergences == 0 and back.num_transitions == summary["transitions"]
        assert back.num_states == summary["states"]


@pytest.mark.timeout(300)
@needs_ray
def test_the_commands_on_ray(ray_rt, tmp_path, capsys):
    """Slow by design: dedup and explore through the command line on a real Ray runtime (45 s on the shared
    2-core machine under load).
    """
    from spatialobs.cli import main

    c = make_corpus(seed=5, apps=2, templates_per_app=6, variants=3)
    src = tmp_path / "screens.jsonl"
    src.write_text("\n".join(json.dumps(s.to_dict()) for s in c.screens) + "\n", encoding="utf-8")
    assert main(["dedup", str(src)]) == 0
    plain = capsys.readouterr().out.splitlines()
    assert main(["dedup", "--ray", str(src)]) == 0  # the PATH after --ray is not taken for an address
    on_ray = capsys.readouterr().out.splitlines()
    assert on_ray[:4] == plain[:4] and on_ray[4].startswith("ray: 2 index shard(s)")
    store = tmp_path / "g.sqlite"
    assert main(["explore", "--app", "notepad", "--ray", "--workers", "2", "--starts", "2", "--steps", "5",
                 "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "  w0: 5 steps" in out and "  w1: 5 steps" in out and "total: 10 steps" in out
    with ScreenGraph(store) as g:
        assert g.num_transitions + len(g.captures()) == 10


@pytest.mark.timeout(300)
@needs_ray
def test_explore_on_ray_drives_a_real_application(ray_rt, tmp_path, capsys):
    """``explore --ray`` builds each worker's driver with make_driver: one worker explores Mousepad.

    Slow by design: a Ray worker drives the real Mousepad over AT-SPI (47 s on the shared 2-core machine
    under load).
    """
    from spatialobs.cli import main
    from spatialobs.screen.drivers.atspi import unavailable_reason
    from tests._drivers import require

    require(unavailable_reason("mousepad"))
    store = tmp_path / "mousepad.sqlite"
    assert main(["explore", "--app", "mousepad", "--ray", "--workers", "1", "--starts", "1", "--steps", "4",
                 "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "  w0: 4 steps" in out and "total: 4 steps" in out
    with ScreenGraph(store) as g:
        assert g.app == "mousepad"
        assert g.num_transitions + len(g.captures()) == 4 and g.num_states >= 1 and g.divergences == 0
        # the states are Mousepad's accessibility tree: its menu bar is in the store's observations
        texts = " ".join(o.text for o in g.store.observations(0))
        assert "file" in texts and "edit" in texts
