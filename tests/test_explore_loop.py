"""The exploration loop: records, metrics by hand, custom environments and priors, signatures, bad input."""

from __future__ import annotations

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import (
    PUCT,
    Action,
    Element,
    Greedy,
    Screen,
    ScreenGraph,
    ScreenMeta,
    candidate_actions,
    explore,
    signature,
    sim,
)
from spatialobs.screen.explore import METRICS


class Ring:
    """n screens in a ring: "next" moves on, "stay" does nothing; goal text favours "stay"."""

    app = "ring"
    goal = "stay"

    def __init__(self, n=4):
        self.n, self.i = n, 0

    def _screen(self):
        return Screen([Element((0, 0, 100, 20), "Text", f"page {self.i}"),
                       Element((0, 30, 40, 50), "Button", "stay", clickable=True),
                       Element((50, 30, 90, 50), "Button", "next", clickable=True)], 100, 100, ScreenMeta(app="ring"))

    def reset(self, start=None):
        self.i = 0
        return self._screen()

    def step(self, action):
        if action.target.text == "next":
            self.i = (self.i + 1) % self.n
        return self._screen()


def test_greedy_stalls_and_puct_moves_on_by_hand():
    g = explore(Ring(), steps=6, selector=Greedy())
    assert [s.action.target.text for s in g.steps] == ["stay"] * 6
    assert g.metrics["new_states"] == 0 and g.metrics["new_edges"] == 1
    assert g.metrics["state_auc"] == 0 and g.metrics["edge_auc"] == 6 and g.metrics["loop_rate"] == 1.0
    p = explore(Ring(), steps=6, selector=PUCT())
    # step 0: nothing tried, "stay" has the higher prior (1.2 vs 1 over 2.2); reward 1 (new self-loop edge)
    # step 1: stay: Q 1 + P sqrt(1)/2 ; next: 0 + (1/2.2) * 1 -> stay again (Q decays), ...
    texts = [s.action.target.text for s in p.steps]
    assert texts[0] == "stay" and "next" in texts
    assert p.metrics["new_states"] >= 1
    assert set(p.metrics) == set(METRICS)


def test_step_records_and_metrics_match_the_graph():
    app = sim.make_app("notepad")
    with ScreenGraph(app="notepad") as g:
        ep = explore(app, 30, graph=g, keep_screens=True)
        assert sum(s.state_novel for s in ep.steps) + 1 == g.num_states
        assert sum(s.edge_novel for s in ep.steps) == g.num_edges
    cum, auc = 0, 0
    for s in ep.steps:
        cum += s.state_novel
        auc += cum
    assert ep.metrics["state_auc"] == auc
    assert all(s.screen is not None for s in ep.steps)
    assert all(0 < s.prior <= 1 for s in ep.steps)


def test_captures_recover_and_continue():
    app = sim.make_app("notepad")

    def to_help(screen, actions, goal):
        weight = {"Help": 10.0, "View Help": 20.0}
        return [weight.get(a.target.text, 1.0) if a.target is not None else 1.0 for a in actions]

    ep = explore(app, 6, selector=Greedy(), prior=to_help)
    caps = [s for s in ep.steps if s.capture]
    assert caps and caps[0].capture == "msedge"
    # recovering closes the browser: back on the editor (its menu closed), where the walk continues
    assert caps[0].target == ep.start_state == ep.steps[caps[0].t + 1].source


def test_signature_fields():
    s = Screen([Element((0, 0, 60, 60), " Edit|Box ", "A\\B", editable=True)], 600, 600)
    e = s.elements[0]
    assert signature(Action("type", e, "Hello World"), s) == "type|edit\\|box|a\\\\b|1,1|Hello World"
    assert signature(Action("type", e, "x"), s, grid=3) == "type|edit\\|box|a\\\\b|0,0|x"
    assert signature(Action("click", e), s) != signature(Action("type", e, ""), s)
    with pytest.raises(InvalidInputError, match="'drag'"):
        Action("drag", e)
    with pytest.raises(InvalidInputError, match="key name"):
        Action("key")
    with pytest.raises(InvalidInputError, match="grid"):
        signature(Action("click", e), s, grid=0)
    with pytest.raises(InvalidInputError, match="not the string"):
        candidate_actions(s, values="abc")


def test_explore_bad_input():
    with pytest.raises(InvalidInputError, match="steps"):
        explore(Ring(), steps=-1)
    with pytest.raises(InvalidInputError, match="reset"):
        explore(object())
    with pytest.raises(InvalidInputError, match="'mcts'"):
        explore(Ring(), selector="mcts")
    with pytest.raises(InvalidInputError, match="'learned'"):
        explore(Ring(), prior="learned")

    class Bad(Ring):
        def step(self, action):
            return "screen"

    with pytest.raises(InvalidInputError, match="step\\(\\) must return a Screen"):
        explore(Bad(), steps=2)
