"""Exploration throughput: steps per second of explore with PUCT and Greedy, and the cost of one graph update."""

from __future__ import annotations

import pytest
from conftest import MAX_N

from spatialobs.screen import Greedy, PUCT, ScreenGraph, explore, sim

STEPS = [n for n in (50, 200) if n <= MAX_N]


@pytest.mark.benchmark(group="explore-steps")
@pytest.mark.parametrize("app_name", ["notepad", "explorer", "calc"])
@pytest.mark.parametrize("selector", ["puct", "greedy"])
@pytest.mark.parametrize("steps", STEPS)
def test_explore_steps(benchmark, app_name, selector, steps):
    app = sim.make_app(app_name)
    sel = PUCT() if selector == "puct" else Greedy()
    ep = benchmark(lambda: explore(app, steps, sel))
    assert len(ep.steps) == steps
    assert ep.metrics["new_states"] >= (1 if selector == "puct" else 0)


@pytest.mark.benchmark(group="graph-update")
@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_graph_record(benchmark, store, tmp_path):
    app = sim.make_app("notepad")
    screens = [app.reset(), app.act("menu.file"), app.act("menu.file.3"), app.act("dlg.saveas.cancel")]
    g = ScreenGraph(None if store == "memory" else tmp_path / "g.sqlite", app="notepad")
    s = g.observe(screens[0])
    it = iter(range(10**9))

    def one():
        i = next(it)
        return g.record(s, f"sig{i % 7}", screens[i % 4])

    tr = benchmark(one)
    assert tr.target in g.states()
    g.close()
