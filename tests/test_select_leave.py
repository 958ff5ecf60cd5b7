"""PUCT's leave-rate first play: untried actions of a class seen to change nothing rank after the others.

The recorded case is a real JupyterLab episode (PUCT, the default setting, start 0 of the real-application
study, 30 actions): its steps as (source state, signature, target state). In its last four steps PUCT typed
into three boxes of the same screen, each a first try scored as a best possible one, and none changed the
screen.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import Element, Screen, ScreenMeta, explore, sim
from spatialobs.screen.graph import ScreenGraph
from spatialobs.screen.select import PUCT, PUCT_SETTINGS, action_class, estimate_leave_rate

# A real JupyterLab episode as recorded: (source, signature, target); a self-loop has source == target.
JUPYTERLAB_START0: List[Tuple[int, str, int]] = [
    (0, "click|menuitem|settings|8,0", 1), (1, "click|menuitem|edit|2,0", 0),
    (0, "click|button|refresh the file browser.|5,1", 0), (0, "click|button|markdown file|13,21", 2),
    (2, "click|button|ipythongfm|2,29", 3), (3, "click|menuitem|common lisp|4,21", 2),
    (2, "click|button|new launcher|12,1", 4),
    (4, "click|listitem|name: reports created: <time> modified: <time> writable: true|3,5", 4),
    (4, "click|button|new launcher (ctrl+shift+l)|1,1", 4), (4, "click|tab|running terminals and kernels|0,3", 5),
    (5, "click|tab|property inspector|29,2", 6), (6, "click|button|python file|15,21", 7),
    (7, "type|textbox||15,15|42", 7), (7, "click|button|search tabs and running sessions (ctrl+alt+a)|6,1", 8),
    (8, "click|heading|language servers section|3,13", 7), (7, "click|menuitem|file|1,0", 9),
    (9, "click|menuitem|run|4,0", 7), (7, "click|tab|file browser (ctrl+shift+f)|0,2", 10),
    (10, "click|tab|table of contents|0,5", 11), (11, "click|tab|debugger|29,3", 12),
    (12, "click|button|tree view|28,2", 12), (12, "click|button|new launcher|22,1", 13),
    (13, "click|tab|launcher|20,1", 13), (13, "click|button|markdown file|12,21", 14),
    (14, "click|button|spaces: 4|25,29", 15), (15, "click|menuitem|spaces: 1|24,25", 14),
    (14, "type|searchbox||27,24|42", 14),
]
# What PUCT then did from state 14: three more typings, each a self-loop.
TYPED_NEXT = ["type|textbox||15,15|hello", "type|combobox|scope|27,2|42", "type|searchbox|42|27,24|hello"]
# Untried actions of classes that had left their state: a menu of the menu bar, a side-bar tab.
CLICKS = ["click|menuitem|kernel|5,0", "click|tab|extension manager|0,7"]


def screen_of(i: int) -> Screen:
    """A screen of its own for each recorded state (its own labels, so no two merge)."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
             "kilo", "lima", "mike", "november", "oscar", "papa"]
    els = [Element((0, 30 * k, 300, 30 * k + 25), "Label", f"{words[i]} {k}") for k in range(4)]
    return Screen(els, 400, 300, ScreenMeta(app="demo"))


def replay(steps: List[Tuple[int, str, int]], selector: PUCT) -> Tuple[ScreenGraph, Dict[int, int]]:
    """Record the steps into a fresh graph, telling the walked selector each reward as the loop does."""
    g = ScreenGraph(app="demo")
    selector.start_walk()
    state = {steps[0][0]: g.observe(screen_of(steps[0][0]))}
    for src, sig, dst in steps:
        tr = g.record(state[src], sig, screen_of(dst))
        state.setdefault(dst, tr.target)
        assert tr.target == state[dst]
        selector.update(state[src], sig, tr.reward)
    return g, state


def test_recorded_jupyterlab_typing_no_ops_rank_after_untried_clicks():
    cands = TYPED_NEXT + CLICKS
    prior = [1 / len(cands)] * len(cands)
    leave = PUCT(**PUCT_SETTINGS["leave"])
    g, state = replay(JUPYTERLAB_START0, leave)
    s = state[14]
    sc = leave.scores(g, s, cands, prior)
    # both typings so far were self-loops: typing's rate (0 + 1) / (2 + 1) = 1/3, then per role:
    # textbox (tried once, looped) (0 + 1/3) / 2, combobox (never) 1/3, searchbox (tried once, looped) 1/6
    explore_term = prior[0] * (sum(g.tries(s).values()) ** 0.5)  # N(s, σ) = 0 for every candidate
    typed = [1 / 6, 1 / 3, 1 / 6]
    assert sc[:3] == pytest.approx([t + explore_term for t in typed])
    # clicks: 20 of 25 left their state (rate 21/26); menu items 6 of 6, tabs 5 of 6
    r_click = 21 / 26
    assert sc[3:] == pytest.approx([(6 + r_click) / 7 + explore_term, (5 + r_click) / 7 + explore_term])
    assert min(sc[3:]) > max(sc[:3])
    assert leave.select(g, s, cands, prior) in (3, 4)
    # without it every one of these is a first play scored as a best possible try: a tie, drawn by hash
    default = PUCT()
    g2, state2 = replay(JUPYTERLAB_START0, default)
    assert default.scores(g2, state2[14], cands, prior) == pytest.approx([1 + explore_term] * len(cands))


def test_walked_sums_equal_the_sums_read_from_the_graph():
    """The counts a walked selector keeps from its reported steps are those read back from the whole graph."""
    walked = PUCT(**PUCT_SETTINGS["leave"], seed=3)
    with ScreenGraph(app="notepad") as g:
        explore(sim.make_app("notepad"), 40, walked, "heuristic", graph=g)
        walked._leave_sums(g)
        fresh = PUCT(**PUCT_SETTINGS["leave"])
        read = fresh._leave_sums(g)
    assert read and walked._leaves == read
    loops = sum(c for s, _, t, c in g.edges() if s == t)
    assert sum(v[0] - v[1] for k, v in read.items() if "|" not in k) == loops


def test_a_class_that_left_its_state_keeps_the_full_first_play():
    sel = PUCT(**PUCT_SETTINGS["leave"])
    g, state = replay([(0, "click|button|markdown file|13,21", 1)], sel)
    # click: (1 + 1) / (1 + 1) = 1; button: (1 + 1) / 2 = 1
    assert sel.scores(g, state[1], ["click|button|new launcher|12,1"], [1.0]) == pytest.approx([1.0])
    # an action tried elsewhere is scored with its shared mean, as without leave_rate
    assert sel.scores(g, state[1], ["click|button|markdown file|13,21"], [1.0]) == pytest.approx(
        PUCT().scores(g, state[1], ["click|button|markdown file|13,21"], [1.0]))


def test_a_view_without_successors_leaves_it_inert():
    class Counts:
        """A graph view that offers counts and rewards but no successors (as a remote worker's may)."""

        lambdas = (1.0, 1.0, 1.0)

        def tries(self, state):
            return {"type|searchbox||27,24|42": 1} if state == 0 else {}

        def q(self, state, sig):
            return 1.0

    sel = PUCT(leave_rate=True)
    sel.start_walk()
    sel.update(0, "type|searchbox||27,24|42", 1.0)
    assert sel.scores(Counts(), 1, ["type|textbox||15,15|hello"], [1.0]) == [1.0]


def test_class_and_rate_helpers():
    assert action_class("type|searchbox|42|27,24|hello") == "type|searchbox"
    assert action_class("click|menu\\|item|a|1,1") == "click|menu\\|item"
    assert estimate_leave_rate([0, 0], [0, 0]) == 1.0
    assert estimate_leave_rate([2, 0], [1, 0]) == pytest.approx(1 / 6)


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_leave_rate_must_be_a_bool(bad):
    with pytest.raises(InvalidInputError, match=f"leave_rate must be True or False, got {bad!r}"):
        PUCT(leave_rate=bad)


def test_setting_names_and_repr():
    p = PUCT.named("leave")
    assert p.leave_rate and p.name == "puct-leave" and "leave_rate=True" in repr(p)
    assert not PUCT().leave_rate and "leave_rate" not in repr(PUCT())
