"""Exploration throughput: steps per second of explore with PUCT and Greedy, and the cost of one graph update."""

from __future__ import annotations

import importlib

import pytest
from conftest import MAX_N

from spatialobs.screen import Element, Greedy, PUCT, ScreenGraph, explore, signature, sim

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


# -- the per-step loops over records, compiled (Cython) next to their pure-Python twins:
# the signature of every candidate action, and the bounds check of every element a screen is built of
_ACTIONS = importlib.import_module("spatialobs.screen.actions")
_MODEL = importlib.import_module("spatialobs.screen.model")
_LOOPS = {"compiled": (_ACTIONS._signatures, _MODEL._plain_bounds),
          "python": (_ACTIONS._signatures_py, _MODEL._plain_bounds_py)}


@pytest.mark.parametrize("impl", list(_LOOPS))
@pytest.mark.parametrize("app_name", ["explorer", "calc"])
def test_explore_step_loops(benchmark, app_name, impl, monkeypatch):
    """200 PUCT steps with either set of loops; the episodes must be the same."""
    benchmark.group = f"explore-step-loops {app_name}"
    want = explore(sim.make_app(app_name), 200, PUCT())
    monkeypatch.setattr(_ACTIONS, "_signatures", _LOOPS[impl][0])
    monkeypatch.setattr(_MODEL, "_plain_bounds", _LOOPS[impl][1])
    ep = benchmark(lambda: explore(sim.make_app(app_name), 200, PUCT()))
    assert [s.signature for s in ep.steps] == [s.signature for s in want.steps] and ep.metrics == want.metrics


@pytest.mark.parametrize("impl", list(_LOOPS))
def test_action_signatures(benchmark, impl):
    """The signatures of the 78 candidate actions of the calculator's first screen."""
    benchmark.group = "explore-signatures calc"
    app = sim.make_app("calc")
    scr = app.reset()
    acts = app.actions(scr)
    got = benchmark(_LOOPS[impl][0], acts, scr, 30)
    assert got == [signature(a, scr) for a in acts] and len(got) > 50


@pytest.mark.parametrize("impl", list(_LOOPS))
def test_element_bounds(benchmark, impl, monkeypatch):
    """Building the elements of one calculator screen (bounds checked for each)."""
    benchmark.group = "explore-elements calc"
    monkeypatch.setattr(_MODEL, "_plain_bounds", _LOOPS[impl][1])
    app = sim.make_app("calc")
    rows = [(e.bounds, e.role, e.text, e.editable, e.clickable, e.id) for e in app.reset().elements]
    got = benchmark(lambda: [Element(*r) for r in rows])
    assert [e.bounds for e in got] == [r[0] for r in rows] and len(got) > 50
