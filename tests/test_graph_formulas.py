"""Formulas of the state graph and the selectors against hand-computed values."""

from __future__ import annotations

import math

import pytest

from spatialobs import InvalidInputError, SpatialObsError
from spatialobs._errors import OutOfRangeError
from spatialobs.screen import Element, Screen, ScreenMeta
from spatialobs.screen.graph import ScreenGraph, blend_u, dispersion, normalized_entropy, step_reward
from spatialobs.screen.select import PUCT, Greedy, heuristic_prior, prior_weights, puct_scores, uniform_prior


def scr(title: str, app: str = "demo") -> Screen:
    return Screen([Element((0, 0, 400, 30), "TitleBar", title), Element((10, 40, 90, 70), "Button", "OK", clickable=True)],
                  400, 300, ScreenMeta(app=app))


# -- entropy normalization ---------------------------------------------------------


def test_normalized_entropy_hand_values():
    assert normalized_entropy([5, 5]) == 1.0
    assert normalized_entropy([1, 1, 1, 1]) == pytest.approx(1.0)
    # H(0.4, 0.6) / ln 2
    h = -(0.4 * math.log(0.4) + 0.6 * math.log(0.6)) / math.log(2)
    assert normalized_entropy([2, 3]) == pytest.approx(h)
    assert round(normalized_entropy([4, 6]), 3) == 0.971
    # three successors: divided by ln 3, not ln 2
    h3 = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)) / math.log(3)
    assert normalized_entropy([2, 1, 1]) == pytest.approx(h3)
    assert normalized_entropy([7]) == 0.0
    assert normalized_entropy([]) == 0.0
    assert normalized_entropy([3, 0, 3]) == 1.0  # zero counts are not successors


def test_blend_u_hand_values():
    assert blend_u(0, 1.0) == 0.5
    assert blend_u(20, 1.0) == 0.75  # rho = 1/2
    assert blend_u(5, 0.2) == pytest.approx(0.2 * 0.2 + 0.8 * 0.5)  # rho = 5/25
    assert blend_u(60, 0.0) == pytest.approx(0.25 * 0.5)  # rho = 3/4
    assert blend_u(10, 0.3, kappa=10, u0=0.0) == pytest.approx(0.15)


def test_reward_hand_values():
    assert step_reward(True, True, 0.5, 0.5) == 2.0
    assert step_reward(False, True, 0.7, 0.5) == pytest.approx(1.2)
    assert step_reward(False, False, 0.3, 0.6) == 0.0  # only decreases of u pay
    assert step_reward(True, False, 0.9, 0.1, (2.0, 1.0, 0.5)) == pytest.approx(2.4)
    assert step_reward(True, True, 0.9, 0.1, (0.0, 0.0, 1.0)) == pytest.approx(0.8)


def test_dispersion_decomposition():
    d = dispersion([("a", 1)] * 5 + [("b", 2)] * 5)
    assert (d.pooled, d.within, d.between) == (1.0, 0.0, 1.0)
    race = [(c, o) for c in "ab" for o in [1] * 4 + [2] * 6]
    d = dispersion(race)
    assert round(d.pooled, 3) == round(d.within, 3) == 0.971 and d.between == 0.0
    d = dispersion([("a", 1), ("b", 1)])
    assert (d.pooled, d.within, d.between) == (0.0, 0.0, 0.0)
    with pytest.raises(InvalidInputError, match="at least one"):
        dispersion([])
    with pytest.raises(InvalidInputError, match="pair"):
        dispersion([("a", 1, 2)])


# -- the graph ---------------------------------------------------------------------


def test_graph_counts_ambiguity_u_and_q_by_hand():
    g = ScreenGraph(app="demo")
    a = g.observe(scr("A"))
    r = []
    r.append(g.record(a, "s1", scr("B")))  # new state, new edge; u(A) = u(B) = 0.5
    b = r[0].target
    r.append(g.record(a, "s1", scr("B")))  # nothing new; u(A) = 20/21 * 0.5 < u(B) = 0.5
    r.append(g.record(a, "s1", scr("C")))  # new state and edge
    r.append(g.record(a, "s1", scr("C")))  # u(A): n=3, D=H(2/3,1/3)/ln2
    r.append(g.record(a, "s2", scr("B")))
    assert [t.state_novel for t in r] == [True, False, True, False, False]
    assert [t.edge_novel for t in r] == [True, False, True, False, True]
    assert r[0].reward == 2.0 and r[1].reward == 0.0 and r[2].reward == 2.0
    h21 = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3)) / math.log(2)
    u_a3 = 3 / 23 * h21 + 20 / 23 * 0.5
    assert r[3].u_source == pytest.approx(u_a3)
    assert r[3].reward == pytest.approx(u_a3 - 0.5)
    assert g.n(a) == 5 and g.n_sa(a, "s1") == 4 and g.n_sa(a, "s2") == 1
    assert g.successors(a, "s1") == {b: 2, r[2].target: 2}
    # D(A) = 4/5 * H̄(2, 2) + 1/5 * H̄(1) = 0.8
    assert g.ambiguity(a) == pytest.approx(0.8)
    assert g.u(a) == pytest.approx(5 / 25 * 0.8 + 20 / 25 * 0.5)
    assert g.q(a, "s1") == pytest.approx((2.0 + 0.0 + 2.0 + (u_a3 - 0.5)) / 4)
    assert g.q(a, "never") == 0.0
    assert g.u(b) == 0.5  # never acted from
    assert (g.num_states, g.num_edges, g.num_transitions) == (3, 3, 5)
    assert sorted(e[:3] for e in g.edges()) == sorted([(a, "s1", b), (a, "s1", r[2].target), (a, "s2", b)])


def test_self_loop_is_edge_novel_once():
    g = ScreenGraph()
    a = g.observe(scr("A"))
    t1, t2 = g.record(a, "noop", scr("A")), g.record(a, "noop", scr("A"))
    assert (t1.target, t1.state_novel, t1.edge_novel) == (a, False, True)
    assert (t2.state_novel, t2.edge_novel) == (False, False)


def test_captures_are_logged_not_folded():
    g = ScreenGraph(app="demo")
    a = g.observe(scr("A"))
    t = g.record(a, "help", scr("Help", app="browser"))
    assert (t.target, t.capture, t.reward, t.state_novel) == (-1, "browser", 0.0, False)
    assert g.num_states == 1 and g.num_edges == 0 and g.n(a) == 0
    assert g.tries(a) == {"help": 1} and g.q(a, "help") == 0.0
    caps = g.captures()
    assert len(caps) == 1 and caps[0].app == "browser" and '"Help"' in caps[0].screen
    with pytest.raises(InvalidInputError, match="'browser'"):
        g.observe(scr("Help", app="browser"))


def test_graph_takes_app_from_first_screen():
    g = ScreenGraph()
    g.observe(scr("A", app="notepad"))
    assert g.app == "notepad"


def test_graph_bad_input():
    with pytest.raises(InvalidInputError, match="kappa"):
        ScreenGraph(kappa=-1)
    with pytest.raises(InvalidInputError, match="u0"):
        ScreenGraph(u0=2)
    with pytest.raises(InvalidInputError, match="lambdas"):
        ScreenGraph(lambdas=(1, 1))
    g = ScreenGraph()
    with pytest.raises(OutOfRangeError, match="no state 7"):
        g.record(7, "x", scr("A"))
    with pytest.raises(InvalidInputError, match="signature"):
        g.record(0, "", scr("A"))
    with pytest.raises(InvalidInputError, match="Screen"):
        g.observe({"width": 1})
    assert isinstance(OutOfRangeError("x"), SpatialObsError)


# -- priors and selectors ----------------------------------------------------------


def _act(text, role="Button", editable=False, op="click", value=None):
    from spatialobs.screen import Action

    return Action(op, Element((0, 0, 10, 10), role, text, editable=editable, clickable=not editable), value)


def test_heuristic_prior_hand_values():
    acts = [_act("Save As..."), _act("Font..."), _act(None, "Edit", True, "type", "notes"), _act("Cancel")]
    w = heuristic_prior(None, acts, "Save the notes with a new font")
    # save: +0.2; font: +0.2; type "notes" into an editable: +0.2 (notes) +0.15; cancel: 1
    assert w == pytest.approx([1.2, 1.2, 1.35, 1.0])
    p = prior_weights("heuristic", None, acts, "Save the notes with a new font")
    assert p.tolist() == pytest.approx([1.2 / 4.75, 1.2 / 4.75, 1.35 / 4.75, 1.0 / 4.75])
    assert uniform_prior(None, acts) == [1.0] * 4
    assert prior_weights(lambda s, a, g: [0, 0, 0, 0], None, acts).tolist() == [0.25] * 4
    assert prior_weights(lambda s, a, g: [3, 1, 0, 0], None, acts).tolist() == [0.75, 0.25, 0, 0]


def test_prior_bad_input():
    acts = [_act("a"), _act("b")]
    with pytest.raises(InvalidInputError, match="-1"):
        prior_weights(lambda s, a, g: [1, -1], None, acts)
    with pytest.raises(InvalidInputError, match="3 weights for 2"):
        prior_weights(lambda s, a, g: [1, 1, 1], None, acts)
    with pytest.raises(InvalidInputError, match="'learned'"):
        prior_weights("learned", None, acts)


def test_puct_scores_hand_values():
    # total N = 4: sqrt = 2
    assert puct_scores([1.0, 0.0, 0.0], [3, 1, 0], [0.5, 0.3, 0.2], 4) == pytest.approx([1.25, 0.3, 0.4])
    assert puct_scores([0.5], [1], [1.0], 9, c_p=2.0) == pytest.approx([0.5 + 2 * 3 / 2])


def _graph_with(tries):
    """A graph whose state 0 has the given {signature: [rewards]} (rewards forced through lambdas)."""
    g = ScreenGraph(app="demo")
    a = g.observe(scr("A"))
    for sig, n in tries.items():
        for _ in range(n):
            g.record(a, sig, scr("A"))
    return g, a


def test_paper_puct_selects_by_score_and_breaks_ties():
    g, a = _graph_with({"x": 3, "y": 1})
    # x: Q = 1/3 (edge-novel once), N=3; y: Q = 1, N=1; total 4
    sc = PUCT.paper().scores(g, a, ["x", "y", "z"], [0.5, 0.3, 0.2])
    assert sc == pytest.approx([1 / 3 + 0.5 * 2 / 4, 1.0 + 0.3 * 2 / 2, 0.2 * 2])
    assert PUCT.paper().select(g, a, ["x", "y", "z"], [0.5, 0.3, 0.2]) == 1
    # c_p = 0: pure Q
    assert PUCT.paper(0.0).select(g, a, ["x", "y", "z"], [0.5, 0.3, 0.2]) == 1
    # nothing tried: every score is 0 -> the higher prior, then the earlier action
    g2, b = _graph_with({})
    assert PUCT.paper().select(g2, b, ["p", "q", "r"], [0.2, 0.5, 0.3]) == 1
    assert PUCT.paper().select(g2, b, ["p", "q", "r"], [0.4, 0.2, 0.4]) == 0
    assert Greedy().select(None, 0, ["p", "q", "r"], [0.3, 0.4, 0.3]) == 1
    assert Greedy().select(None, 0, ["p", "q", "r"], [0.4, 0.2, 0.4]) == 0


def test_paper_puct_exact_tie_goes_to_higher_prior():
    g, a = _graph_with({"x": 1})  # Q(x) = 1, N(x) = 1, total 1
    # x: 1 + 0.2 * 1/2 = 1.1; y: 0 + 1.1 * 1 -> tie at 1.1 when P(y) = 1.1 (unnormalized on purpose)
    sc = PUCT.paper().scores(g, a, ["x", "y"], [0.2, 1.1])
    assert sc[0] == sc[1]
    assert PUCT.paper().select(g, a, ["x", "y"], [0.2, 1.1]) == 1


def test_selector_bad_input():
    with pytest.raises(InvalidInputError, match="c_p"):
        PUCT(c_p=-1)
    with pytest.raises(InvalidInputError, match="no candidate"):
        Greedy().select(None, 0, [], [])
    with pytest.raises(InvalidInputError, match="2 prior weights for 3"):
        Greedy().select(None, 0, ["a", "b", "c"], [0.5, 0.5])
