"""Exploration and dedup on Ray next to the single-process loop, in one run, results checked.

Printed (``-s``): steps per second of the single-process loop (memory and SQLite
graph), of the distributed step in process (no Ray: the cost of the step's own
code), and on a local Ray runtime with 1, 2, 4 and 8 workers on one shard and 8 on
four shards (this machine's runtime gets 2 CPUs, so 8 workers share 2 cores), with
the waits and the milliseconds spent waiting per step, each worker's milliseconds per
step, and the milliseconds spent inside the graph actor per call and inside the
busiest shard actor per call (their service times: step time / service time is how
many workers one actor serves before it is the bottleneck); then dedup throughput of
synthetic screens on Ray against one in-process ``StateIndex``.
``SPATIALOBS_BENCH_DEDUP_N`` sets the number of screens (default 4000;
``docs/scaling.md`` quotes a run at 10^5). ``test_distributed_nodes_side_by_side``
runs one exploration on a ``LocalCluster`` of 1, 2 and 3 nodes on this machine.
"""

from __future__ import annotations

import os
import time
from functools import partial

import pytest
from conftest import MAX_N

from spatialobs.distributed import Explorer, GraphLog, IndexShard, LocalLinks
from spatialobs.screen import ScreenGraph, StateIndex, explore, sim
from spatialobs.screen.synth import make_corpus

try:
    import ray  # noqa: F401
except ImportError:
    if os.environ.get("CI") == "true":
        raise
    pytest.skip('Ray is not installed (pip install ".[ray]")', allow_module_level=True)

APP = "notepad"
STARTS = 8
STEPS = 100 if MAX_N >= 100_000 else 40
DEDUP_N = min(int(os.environ.get("SPATIALOBS_BENCH_DEDUP_N", "4000")), MAX_N)


def _single(store):
    g = ScreenGraph(store, app=APP)
    t0 = time.perf_counter()
    n = 0
    for k, st in enumerate(sim.make_app(APP, 0).starts(STARTS)):
        n += len(explore(sim.make_app(APP, 0), STEPS, "puct", graph=g, start=st, episode=k).steps)
    dt = time.perf_counter() - t0
    g.close()
    return n, dt


def _in_process(tmp):
    shards = [IndexShard(0, tmp / "local")]
    log = GraphLog(tmp / "local.sqlite", shards=1, app=APP, fetch=lambda k, a, b: shards[k].rows(a, b))
    w = Explorer("w0", partial(sim.make_app, APP, 0), LocalLinks(shards, log))
    t0 = time.perf_counter()
    n = sum(len(w.run_episode(k, st, STEPS).steps) for k, st in enumerate(w.starts(STARTS)))
    dt = time.perf_counter() - t0
    w.close()
    log.close()
    shards[0].close()
    return n, dt


def _on_ray(ray_mod, workers, tmp, shards=1):
    from spatialobs.distributed.runtime import RayExploration

    run = RayExploration(partial(sim.make_app, APP, 0), APP, workers=workers, shards=shards,
                         folder=tmp / f"ray{workers}x{shards}")
    try:
        run.ready()
        starts = run.starts(STARTS)
        t0 = time.perf_counter()
        eps, lost = run.gather(run.submit(starts, STEPS))
        dt = time.perf_counter() - t0
        c = run.counters()
        sv = run.service()
    finally:
        run.close()
    assert not lost
    n = sum(len(e.steps) for e in eps)
    waits = sum(v["waits"] for v in c.values())
    wait_s = sum(v["wait_seconds"] for v in c.values())
    per_worker = min(v["steps_per_second"] for v in c.values())
    # Service time: seconds inside the graph actor per call, and inside the busiest shard per call.
    cycle = sum(v["seconds"] for v in c.values()) / sum(v["steps"] for v in c.values())
    g = sv["graph"]
    busiest = max((v for k, v in sv.items() if k.startswith("shard")), key=lambda v: v["seconds"])
    assert g["calls"] >= n and busiest["calls"] > 0
    assert sum(v["calls"] for k, v in sv.items() if k.startswith("shard")) <= g["calls"]
    return (n, dt, waits / n, 1000 * wait_s / n, per_worker, 1000 * cycle, 1000 * g["seconds"] / g["calls"],
            1000 * busiest["seconds"] / busiest["calls"])


def test_distributed_side_by_side(benchmark, tmp_path):
    from spatialobs.distributed.runtime import dedup_ray, ray_runtime

    rows = {}

    def measure():
        rows["single, memory graph"] = _single(None)
        rows["single, SQLite graph"] = _single(tmp_path / "single.sqlite")
        rows["distributed step, in process"] = _in_process(tmp_path)
        with ray_runtime(num_cpus=2) as r:
            for w in (1, 2, 4, 8):
                rows[f"Ray, {w} worker(s)"] = _on_ray(r, w, tmp_path)
            rows["Ray, 8 workers, 4 shards"] = _on_ray(r, 8, tmp_path, shards=4)
            c = make_corpus(seed=7, apps=8, templates_per_app=max(1, DEDUP_N // 40), variants=5)
            screens = c.screens[:DEDUP_N]
            docs = [(str(i), s.to_dict()) for i, s in enumerate(screens)]
            t0 = time.perf_counter()
            ix = StateIndex()
            ref = [ix.add(s).state for s in screens]
            rows["dedup in process"] = (len(screens), time.perf_counter() - t0)
            t0 = time.perf_counter()
            res = dedup_ray(docs, shards=2, chunk=500)
            rows["dedup on Ray, 2 shards"] = (len(screens), time.perf_counter() - t0)
            rows["_dedup_equal"] = res.states == ref
        return rows

    benchmark.pedantic(measure, rounds=1, iterations=1)
    single_n, single_dt = rows["single, SQLite graph"]
    print(f"\n{'loop':<32} {'steps':>6} {'steps/s':>9} {'waits/step':>11} {'ms wait/step':>13} {'min worker/s':>13}"
          f" {'ms/step':>8} {'graph ms':>9} {'shard ms':>9}")
    for name, r in rows.items():
        if name.startswith("dedup") or name.startswith("_"):
            continue
        extra = (f"{r[2]:>11.2f} {r[3]:>13.2f} {r[4]:>13.1f} {r[5]:>8.2f} {r[6]:>9.3f} {r[7]:>9.3f}"
                 if len(r) > 2 else "")
        print(f"{name:<32} {r[0]:>6} {r[0] / r[1]:>9.1f} {extra}")
    # The saturation point: workers stepping at the uncontended (1-worker) pace that keep one actor busy.
    one = rows["Ray, 1 worker(s)"]
    print(f"at {one[5]:.2f} ms per step, one shard serves about {one[5] / one[7]:.0f} workers "
          f"and the graph about {one[5] / one[6]:.0f} before either is busy all the time")
    for name in ("dedup in process", "dedup on Ray, 2 shards"):
        n, dt = rows[name]
        print(f"{name:<32} {n:>6} screens {n / dt:>9.1f} screens/s")
    print(f"overhead per step on Ray (1 worker) vs the single-process SQLite loop: "
          f"{1000 * (rows['Ray, 1 worker(s)'][1] / rows['Ray, 1 worker(s)'][0] - single_dt / single_n):.2f} ms")
    # results checked: every configuration took every step, dedup agreed, a step costs at most 2 waits
    for name, r in rows.items():
        if name.startswith("single") or name.startswith("distributed") or name.startswith("Ray"):
            assert r[0] == STARTS * STEPS, name
        if name.startswith("Ray"):
            assert r[2] <= 2.0
    assert rows["_dedup_equal"]


# ---- across nodes ------------------------------------------------------------------------

NODE_STARTS = 8
NODE_STEPS = 60 if MAX_N >= 100_000 else 25
NODE_ROUNDS = int(os.environ.get("SPATIALOBS_BENCH_NODE_ROUNDS", "3"))


def _on_nodes(cluster, tmp, workers, shards=2, sync=False):
    from spatialobs.distributed.runtime import RayExploration

    folder = tmp / f"n{cluster.size}w{workers}{'s' if sync else ''}-{time.monotonic_ns()}"
    run = RayExploration(partial(sim.make_app, APP, 0), APP, workers=workers, shards=shards, folder=folder,
                         placement="spread", sync=sync)
    try:
        where = run.where()
        starts = run.starts(NODE_STARTS)
        t0 = time.perf_counter()
        eps, lost = run.explore(starts, NODE_STEPS)
        dt = time.perf_counter() - t0
        c = run.counters()
    finally:
        run.close()
    assert not lost
    n = sum(len(e.steps) for e in eps)
    assert n == NODE_STARTS * NODE_STEPS
    nodes_used = len({node for node, _ in where.values()})
    assert nodes_used == min(cluster.size, 1 + shards + workers)
    wait_ms = 1000 * sum(v["wait_seconds"] for v in c.values()) / n
    return n / dt, wait_ms


def test_distributed_nodes_side_by_side(benchmark, tmp_path):
    """Steps/s of one exploration with 1, 2 and 3 nodes of a LocalCluster on this machine.

    Every node is a separate raylet with its own worker processes at its own loopback
    address, but all of them share this machine's cores: the figures show what nodes
    cost and how the run spreads, not what more machines add. Configurations: 2
    workers per node (what adding machines would add), 6 workers whatever the nodes,
    and 6 workers on 3 nodes with every log record and commit fsynced (``sync``, the
    setting for several machines). Rounds are interleaved (``SPATIALOBS_BENCH_NODE_ROUNDS``,
    default 3; with timing off, one round of 1 and 3 nodes); printed: the median steps/s [range] and
    the milliseconds per step spent waiting for the actors, and each cluster's start-up.
    """
    from spatialobs.distributed.runtime import LocalCluster

    rounds = 1 if benchmark.disabled else NODE_ROUNDS
    sizes = (1, 3) if benchmark.disabled else (1, 2, 3)  # with timing off (CI): results checked, fewer starts
    rows: dict = {}
    start_s: dict = {}

    def measure():
        for _ in range(rounds):
            for nodes in sizes:
                t0 = time.perf_counter()
                with LocalCluster(nodes, num_cpus=1) as cluster:
                    start_s.setdefault(nodes, []).append(time.perf_counter() - t0)
                    configs = [(f"{nodes} node(s), {w} workers", w, False) for w in sorted({2 * nodes, 6})]
                    if nodes == 3:
                        configs.append(("3 node(s), 6 workers, sync", 6, True))
                    for name, workers, sync in configs:
                        rows.setdefault(name, []).append(_on_nodes(cluster, tmp_path, workers, sync=sync))
                assert cluster.leftover == []
        return rows

    benchmark.pedantic(measure, rounds=1, iterations=1)

    def med(xs):
        xs = sorted(xs)
        m = xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
        return f"{m:8.1f} [{xs[0]:.1f}-{xs[-1]:.1f}]"

    print(f"\n{'configuration':<34} {'steps/s median [range]':>26} {'ms wait/step':>24}  ({rounds} round(s), "
          f"{NODE_STARTS} starts x {NODE_STEPS} steps)")
    for name in sorted(rows, key=lambda k: (k.split()[0], "sync" in k, len(k), k)):
        print(f"{name:<34} {med([r[0] for r in rows[name]]):>26} {med([r[1] for r in rows[name]]):>24}")
    for nodes, ts in sorted(start_s.items()):
        print(f"cluster of {nodes} node(s) up and connected in {med(ts)} s")
