"""Ray across nodes: a head and two worker nodes on this machine, one worker node lost whole mid-run.

The cluster is :class:`~spatialobs.distributed.runtime.LocalCluster`: three raylets
at their own loopback addresses, each with its own worker processes, sharing this
machine's cores and disk (the run folder is reachable from every node, as the
storage requirement asks). The Ray tests are skipped when Ray is not installed, and
fail instead when ``CI=true``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from spatialobs import InvalidInputError
from spatialobs.distributed.runtime import (Placement, RunFolderError, check_folder, mark_folder,
                                            several_machines)
from spatialobs.distributed.shard import features_parts, shard_of
from spatialobs.screen import ScreenGraph, featurize, sim

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False
    if os.environ.get("CI") == "true":
        raise RuntimeError('CI must install the ray extra (pip install ".[ray]") to run tests/test_distributed_nodes.py')

needs_ray = pytest.mark.skipif(not HAVE_RAY, reason='Ray is not installed (pip install ".[ray]")')


# ---- without a cluster -------------------------------------------------------------------


def test_an_actor_refuses_a_run_folder_it_does_not_see(tmp_path):
    token = mark_folder(tmp_path)
    check_folder(tmp_path, token)
    check_folder(str(tmp_path), token)
    # another machine's disk at the same path: the folder is absent, or holds something else
    with pytest.raises(RunFolderError, match=r"run folder '.*elsewhere' is missing on .*every node mounts"):
        check_folder(tmp_path / "elsewhere", token)
    with pytest.raises(RunFolderError, match="holds another run's mark"):
        check_folder(tmp_path, "another run's token")
    assert mark_folder(tmp_path) != token  # each run marks the folder afresh


def test_placement_spreads_round_robin_and_names_a_dead_node():
    p = Placement.spread(["h", "a", "b"], shards=2, workers=4)
    assert (p.graph, p.shards, p.workers) == ("h", ("a", "b"), ("h", "a", "b", "h"))
    assert [p.node("worker", i) for i in range(6)] == ["h", "a", "b", "h", "h", "a"]
    assert Placement().node("shard", 3) is None and Placement().node("graph") is None
    p.check(["h", "a", "b"], shards=2, workers=4)
    with pytest.raises(InvalidInputError, match=r"placement: shard1 is placed on node 'b', which is not an alive"):
        p.check(["h", "a"], shards=2, workers=4)
    with pytest.raises(InvalidInputError, match="at least one node"):
        Placement.spread([], 1, 1)
    assert several_machines(["127.0.0.2", "127.0.0.3", "::1"]) is False
    assert several_machines(["127.0.0.2", "10.1.2.3"]) is True and several_machines(["10.1.2.3"]) is False


# ---- on a local cluster of three nodes -------------------------------------------------------


def _logs(folder):
    sent, acked = set(), set()
    for f in Path(folder).glob("w*.steps.jsonl"):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            (acked if "acked" in rec else sent).add(tuple(rec["key"]))
    return sent, acked


@needs_ray
def test_a_worker_node_lost_whole_mid_run_loses_nothing_acknowledged(one_ray_cluster_at_a_time, tmp_path):
    """Slow by design: three raylets start (each with its own worker processes), the run goes until 60 steps
    are acknowledged, a whole node is killed, the head takes 3 missed health checks to declare it dead and
    Ray restarts its actors on the surviving nodes before the run ends (33 s on the shared 2-core machine).
    """
    from spatialobs.distributed.runtime import LocalCluster, RayExploration

    shards = 2
    # notepad's screens share one metadata partition: the shard that takes them goes on the node that dies
    busy = shard_of(featurize(sim.make_app("notepad", 0).reset()).meta, shards)
    t0 = time.monotonic()
    with LocalCluster(3, num_cpus=1, detect_seconds=3.0) as cluster:
        head, doomed, other = cluster.nodes
        on = {busy: doomed, 1 - busy: other}
        placement = Placement(graph=doomed, shards=(on[0], on[1]), workers=(head, doomed, other))
        run = RayExploration(partial(sim.make_app, "notepad", 0), "notepad", workers=3, shards=shards,
                             folder=tmp_path, checkpoint_every=5, placement=placement, sync=True)
        try:
            before = run.where()
            assert {name: node for name, (node, _) in before.items()} == {
                "graph": doomed, f"shard{busy}": doomed, f"shard{1 - busy}": other,
                "w0": head, "w1": doomed, "w2": other}
            killed = {}

            def kill_at(steps: int) -> None:
                # the whole node, once the run is under way: graph, busy shard and a worker at once
                end = time.monotonic() + 60
                while time.monotonic() < end:
                    s = run.summary()
                    if s["transitions"] + s["captures"] >= steps:
                        killed["acked"] = s["transitions"] + s["captures"]
                        killed["node"] = cluster.kill(1)
                        return
                    time.sleep(0.02)

            killer = threading.Thread(target=kill_at, args=(60,), daemon=True)
            killer.start()
            eps, lost = run.explore(run.starts(9), steps=40)
            killer.join(10)
            assert killed.get("node") == doomed, "the node was not killed mid-run"
            after = run.where()
            summary = run.summary()
            counters = run.counters()
            shard_rows = [ray.get(s.rows.remote(0, 10**9)) for s in run.shards]
            shard_stats = [ray.get(s.stats.remote()) for s in run.shards]
            keys = {tuple(k) for k in ray.get(run.graph.steps.remote())}
            alive = cluster.alive()
        finally:
            run.close()
    assert cluster.leftover == [], "processes of the cluster outlived its shutdown"
    assert time.monotonic() - t0 < 240

    # the run went on with the remaining nodes: every actor of the lost node restarted on one of them
    assert alive == [head, other]
    assert {node for node, _ in after.values()} <= {head, other}
    assert after["graph"][1] != before["graph"][1] and after[f"shard{busy}"][1] != before[f"shard{busy}"][1]
    assert after["w1"][1] != before["w1"][1]  # restarted (whether it took an episode depends on timing)
    assert sum(c["steps"] for c in counters.values()) > 0
    assert len(eps) == 9 and len(lost) == 1, "only the episode running on the lost worker is cut short"
    assert all(len(e.steps) == 40 for k, e in enumerate(eps) if k not in lost)
    # steps: every acknowledged one is in the graph, none that was never sent, each counted once
    sent, acked = _logs(tmp_path)
    assert killed["acked"] <= len(acked) and acked <= keys <= sent
    assert sum(len(e.steps) for e in eps) == summary["transitions"] + summary["captures"] == len(keys)
    # screens: the restarted shard holds every observation it acknowledged, each once, as the store has them
    assert shard_stats[busy]["observations"] == len(shard_rows[busy]) > 0
    with ScreenGraph(tmp_path / "graph.sqlite") as back:
        assert back.divergences == 0 and back.num_transitions == summary["transitions"]
        assert back.num_states == summary["states"]
        stored = list(back.store.observations(0))
    for k, rows in enumerate(shard_rows):
        mine = [o for o in stored if o.state % shards == k]
        assert len({raw for _, _, raw in rows}) == len(rows), f"shard {k} holds a screen twice"
        assert len(mine) <= len(rows)
        for o, (_, state, raw) in zip(mine, rows):
            meta, control, text_atoms, text = features_parts(raw)
            assert (o.state // shards, o.control, o.text_atoms, o.text) == (state, control, text_atoms, text)
    states = {o.state for o in stored}
    assert {s.target for e in eps for s in e.steps if s.target >= 0} <= states
