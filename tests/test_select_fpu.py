"""PUCT's first-play urgency, reward normalization and tie-breaking, and the Random selector, by hand."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError
from spatialobs.screen import Element, Screen, ScreenMeta, explore, sim
from spatialobs.screen.graph import ScreenGraph
from spatialobs.screen.select import PUCT, PUCT_SETTINGS, SELECTORS, Greedy, Random, make_selector, shared_key


def scr(title: str) -> Screen:
    return Screen([Element((0, 0, 400, 30), "TitleBar", title), Element((10, 40, 90, 70), "Button", "OK", clickable=True)],
                  400, 300, ScreenMeta(app="demo"))


def graph_with(tries, lambdas=None):
    """State A with {signature: n self-loop tries}: the first try of each pays λ_edge, the rest 0."""
    g = ScreenGraph(app="demo", lambdas=lambdas)
    a = g.observe(scr("A"))
    for sig, n in tries.items():
        for _ in range(n):
            g.record(a, sig, scr("A"))
    return g, a


def test_default_is_the_documented_setting():
    p = PUCT()
    assert (p.fpu, p.normalize, p.ties, p.share) == (1.0, True, "hash", True) == \
        tuple(PUCT_SETTINGS["default"].values())
    assert p.seed == 0 and make_selector("puct", seed=4).seed == 4
    q = PUCT.paper()
    assert (q.fpu, q.normalize, q.ties, q.share) == (0.0, False, "prior", False) and q.name == "puct-paper"
    assert PUCT.named("default").name == "puct"


def test_first_play_urgency_hand_values():
    g, a = graph_with({"x": 3, "y": 1})
    # x: rewards 1, 0, 0 -> Q 1/3, N 3; y: reward 1 -> Q 1, N 1; z untried; total N = 4, sqrt 2; Σλ = 3
    prior = [0.5, 0.3, 0.2]
    # paper: Q(z) = 0
    assert PUCT.paper().scores(g, a, ["x", "y", "z"], prior) == pytest.approx([1 / 3 + 0.25, 1 + 0.3, 0.4])
    assert PUCT.paper().select(g, a, ["x", "y", "z"], prior) == 1
    # default: Q̂ = Q / 3, Q̂(z) = fpu 1
    assert PUCT().scores(g, a, ["x", "y", "z"], prior) == pytest.approx([1 / 9 + 0.25, 1 / 3 + 0.3, 1 + 0.4])
    assert PUCT().select(g, a, ["x", "y", "z"], prior) == 2
    # fpu = parent mean: (1 + 1) / 4 tries = 0.5 raw, 1/6 normalized
    raw = PUCT(fpu="parent", normalize=False, ties="prior")
    assert raw.scores(g, a, ["x", "y", "z"], prior) == pytest.approx([1 / 3 + 0.25, 1 + 0.3, 0.5 + 0.4])
    norm = PUCT(fpu="parent")
    assert norm.scores(g, a, ["x", "y", "z"], prior) == pytest.approx([1 / 9 + 0.25, 1 / 3 + 0.3, 1 / 6 + 0.4])
    assert norm.select(g, a, ["x", "y", "z"], prior) == 1
    # a constant fpu, and c_p scaling only the exploration term
    assert PUCT(2.0, fpu=0.25).scores(g, a, ["z"], [0.2]) == pytest.approx([0.25 + 2 * 0.2 * 2])


def test_parent_fpu_is_zero_before_any_try():
    g, a = graph_with({})
    assert PUCT(fpu="parent").scores(g, a, ["p", "q"], [0.5, 0.5]) == [0.0, 0.0]


def test_normalization_divides_by_the_sum_of_the_lambdas():
    g, a = graph_with({"x": 1}, lambdas=(1.0, 2.0, 0.0))  # a self-loop pays λ_edge = 2
    assert g.q(a, "x") == 2.0
    assert PUCT(fpu=0.0).scores(g, a, ["x"], [1.0]) == pytest.approx([2 / 3 + 0.5])
    assert PUCT(fpu=0.0, normalize=False).scores(g, a, ["x"], [1.0]) == pytest.approx([2 + 0.5])
    g0, b = graph_with({"x": 1}, lambdas=(0.0, 0.0, 0.0))  # Σλ = 0: no division
    assert PUCT(fpu=0.0).scores(g0, b, ["x"], [1.0]) == pytest.approx([0.5])


def test_hash_ties_follow_the_stable_hash():
    g, a = graph_with({})
    sigs = ["click|button|ok|1,1", "click|button|cancel|2,1", "key|||escape", "type|edit||3,3|x"]

    def h(sig):  # the documented key: (state, tries so far, signature)
        return hashlib.blake2b(f"{a}\x000\x00{sig}".encode(), digest_size=8).digest()

    assert PUCT().select(g, a, sigs, [0.25] * 4) == min(range(4), key=lambda i: h(sigs[i]))
    # ties to prior: the earlier action among equal priors
    assert PUCT(ties="prior").select(g, a, sigs, [0.25] * 4) == 0


def test_seeded_hash_ties_salt_the_key():
    g, a = graph_with({})
    sigs = [f"click|button|b{i}|{i},1" for i in range(12)]

    def h(sig, seed):  # the documented key with a seed: (seed, state, tries so far, signature); seed 0 adds none
        salt = f"{seed}\x01" if seed else ""
        return hashlib.blake2b(f"{salt}{a}\x000\x00{sig}".encode(), digest_size=8).digest()

    for seed in (0, 1, 99, -5):
        assert PUCT(seed=seed).select(g, a, sigs, [1 / 12] * 12) == min(range(12), key=lambda i: h(sigs[i], seed))
    # different seeds draw differently on the same fresh graph; the same seed draws the same
    assert len({PUCT(seed=k).select(g, a, sigs, [1 / 12] * 12) for k in range(40)}) > 4
    assert PUCT(seed=3).select(g, a, sigs, [1 / 12] * 12) == PUCT(seed=3).select(g, a, sigs, [1 / 12] * 12)


def test_shared_key_keeps_only_a_typed_fields_role_and_value():
    assert shared_key("type|edit|this pc > music|5,1|Documents") == "type|edit|Documents"
    assert shared_key("type|edit|this pc > documents > work|5,1|Documents") == "type|edit|Documents"
    assert shared_key("type|edit|a\\|b|5,1|x\\|y") == "type|edit|x\\|y"  # escaped bars stay in their field
    assert shared_key("type|edit|x|5,1|Pictures") != shared_key("type|edit|x|5,1|Documents")
    # the item and its position are dropped: typing one value into any field of one role is one arm
    assert shared_key("type|edit|x|6,1|Documents") == shared_key("type|edit|y|5,1|Documents")
    assert shared_key("type|list item|a.txt|3,9|text") != shared_key("type|edit|a.txt|3,9|text")
    for sig in ("click|button|ok|12,26", "key|||escape", "type|odd"):
        assert shared_key(sig) == sig


def test_shared_first_play_hand_values():
    # λ_amb = 0 keeps the rewards whole numbers: Σλ = 2
    g, a = graph_with({"x": 3, "y": 1}, lambdas=(1.0, 1.0, 0.0))
    # x: rewards 1, 0, 0 -> Q̂ 1/6, N 3; y: 1 -> Q̂ 1/2, N 1; total 4, √4 = 2
    typed = "type|edit|here|5,1|docs"
    sigs = ["x", "y", typed, "z"]
    prior = [0.4, 0.3, 0.2, 0.1]
    # nothing tried elsewhere yet: the untried ones score fpu 1
    assert PUCT().scores(g, a, sigs, prior) == pytest.approx([1 / 6 + 0.2, 1 / 2 + 0.3, 1 + 0.4, 1 + 0.2])
    # from B, typing "docs" into that field (another text in it) reaches a new state: 2;
    # from C, the same typing reaches B again: a new edge only, 1
    b = g.observe(scr("B"))
    c = g.observe(scr("C"))
    assert g.record(b, "type|edit|elsewhere|5,1|docs", scr("D")).reward == 2.0
    assert g.record(c, "type|edit|somewhere else|5,1|docs", scr("B")).reward == 1.0
    # z from C reaches A: a new edge, 1; x from C back to C: a new edge (x's own Q at A is unchanged)
    assert g.record(c, "z", scr("A")).reward == 1.0
    g.record(c, "x", scr("C"))
    # typed, untried at A: (2 + 1) / 2 tries / Σλ 2 = 3/4 (+ 0.4); z: 1 / 1 / 2 = 1/2 (+ 0.2)
    assert PUCT().scores(g, a, sigs, prior) == pytest.approx([1 / 6 + 0.2, 1 / 2 + 0.3, 0.75 + 0.4, 0.5 + 0.2])
    assert PUCT().select(g, a, sigs, prior) == 2
    # raw rewards: the shared mean is not divided
    raw = PUCT(normalize=False, fpu=0.0)
    assert raw.scores(g, a, sigs, prior) == pytest.approx([1 / 3 + 0.2, 1 + 0.3, 1.5 + 0.4, 1 + 0.2])
    # share off (the paper's setting): the tries from other states are ignored
    assert PUCT(share=False).scores(g, a, sigs, prior) == pytest.approx([1 / 6 + 0.2, 1 / 2 + 0.3, 1.4, 1.2])


def test_shared_first_play_from_told_rewards_on_a_one_state_view():
    class View:  # what a distributed worker reads: one state's tries and Q, no states()
        lambdas = (1.0, 1.0, 1.0)

        def tries(self, state):
            return {"x": 2}

        def q(self, state, sig):
            return 0.5 if sig == "x" else 0.0

    p = PUCT()
    p.start_walk()
    # total 2, √2; untried y and z score fpu 1 until told
    assert p.scores(View(), 0, ["y", "z"], [0.5, 0.5]) == pytest.approx([1 + 0.5 * 2 ** 0.5] * 2)
    p.update(3, "y", 0.0)   # a capture elsewhere
    p.update(4, "y", 1.5)
    assert p.scores(View(), 0, ["y", "z", "x"], [0.5, 0.25, 0.25]) == pytest.approx(
        [0.75 / 3 + 0.5 * 2 ** 0.5, 1 + 0.25 * 2 ** 0.5, 0.5 / 3 + 0.25 * 2 ** 0.5 / 3])
    off = PUCT(share=False)
    off.update(3, "y", 0.0)
    assert off._shared == {}
    # a walked selector reads what it was told, not the graph's other tries
    g, a = graph_with({"x": 1})
    b = g.observe(scr("B"))
    g.record(b, "y", scr("A"))
    walked = PUCT()
    assert walked.scores(g, a, ["y"], [1.0]) == pytest.approx([g.q(b, "y") / 3 + 1.0])
    walked.start_walk()
    assert walked.scores(g, a, ["y"], [1.0]) == pytest.approx([1 + 1.0])


def test_explore_tells_the_selector_every_reward():
    seen = []

    class Spy(PUCT):
        def update(self, state, signature, reward):
            seen.append((state, signature, reward))
            super().update(state, signature, reward)

    sel = Spy()
    ep = explore(sim.make_app("explorer"), 12, sel, "heuristic")
    assert seen == [(s.source, s.signature, s.reward) for s in ep.steps]
    assert sum(int(v[0]) for v in sel._shared.values()) == 12


def test_shared_first_play_avoids_retyping_a_known_destination():
    # typing the goal folder into the address bar from a new folder: after a few states it is tried last
    app = sim.make_app("explorer")
    ep = explore(app, 50, PUCT(seed=0), "heuristic", start=app.starts(1)[0])
    typed = [s for s in ep.steps if s.signature.startswith("type|edit|") and s.signature.endswith("|Documents")]
    old = explore(app, 50, PUCT(seed=0, share=False), "heuristic", start=app.starts(1)[0])
    typed_old = [s for s in old.steps if s.signature.startswith("type|edit|") and s.signature.endswith("|Documents")]
    assert len(typed) < len(typed_old)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text("abcdef", min_size=1, max_size=4), min_size=1, max_size=8, unique=True), st.randoms())
def test_hash_ties_do_not_depend_on_candidate_order(sigs, rnd):
    g, a = graph_with({})
    prior = [1.0 / len(sigs)] * len(sigs)
    chosen = sigs[PUCT().select(g, a, sigs, prior)]
    shuffled = list(sigs)
    rnd.shuffle(shuffled)
    assert shuffled[PUCT().select(g, a, shuffled, prior)] == chosen


def test_untried_first_tries_every_action_once_before_repeating():
    # one state, four self-loop actions: with fpu 1 every action is tried before any repeats
    class Still:
        app = "still"

        def reset(self, start=None):
            return self.screen()

        def screen(self):
            return Screen([Element((0, 0, 99, 20), "Text", "still")] +
                          [Element((10 * i, 30, 10 * i + 9, 40), "Button", f"b{i}", clickable=True) for i in range(4)],
                          100, 100, ScreenMeta(app="still"))

        def step(self, action):
            return self.screen()

    ep = explore(Still(), steps=8, selector=PUCT(), prior="uniform")
    first = [s.action.target.text for s in ep.steps[:4]]
    assert sorted(first) == ["b0", "b1", "b2", "b3"]
    paper = explore(Still(), steps=8, selector=PUCT.paper(), prior="uniform")
    # paper-exact: the paid self-loop b0 keeps winning over untried actions (Q 0) at first
    assert [s.action.target.text for s in paper.steps[:2]] == ["b0", "b0"]


def test_random_is_uniform_seeded_and_ignores_the_prior():
    r = Random(seed=7)
    picks = Counter(r.select(None, 0, ["a", "b", "c"], [1.0, 0.0, 0.0]) for _ in range(3000))
    assert set(picks) == {0, 1, 2} and all(900 <= v <= 1100 for v in picks.values())
    a, b = Random(3), Random(3)
    assert [a.select(None, 0, list("abcd"), [0.25] * 4) for _ in range(20)] == \
           [b.select(None, 0, list("abcd"), [0.25] * 4) for _ in range(20)]


def test_random_in_explore_is_reproducible_and_beats_greedy_on_calc():
    app = sim.make_app("calc")
    e1 = explore(app, 30, "random", start=app.starts(3)[2], episode=2)
    e2 = explore(app, 30, "random", start=app.starts(3)[2], episode=2)
    assert [s.signature for s in e1.steps] == [s.signature for s in e2.steps]
    assert e1.selector == "random"
    g = explore(app, 30, "greedy", start=app.starts(3)[2])
    assert e1.metrics["new_states"] > g.metrics["new_states"]


def test_default_puct_beats_paper_exact_and_greedy_on_calc():
    app = sim.make_app("calc")
    auc = {name: sum(explore(app, 40, name, start=s, episode=s.index).metrics["state_auc"] for s in app.starts(4))
           for name in ("puct", "puct-paper", "greedy")}
    assert auc["puct"] > 2 * auc["greedy"] and auc["puct"] > auc["puct-paper"]


def test_make_selector_names_and_bad_input():
    assert SELECTORS == ("puct", "puct-paper", "greedy", "random")
    assert isinstance(make_selector(None), PUCT) and isinstance(make_selector("greedy"), Greedy)
    assert make_selector("random", seed=5).seed == 5
    sel = Greedy()
    assert make_selector(sel) is sel
    with pytest.raises(InvalidInputError, match="'best'"):
        make_selector("best")
    with pytest.raises(InvalidInputError, match="'best'"):
        explore(sim.make_app("notepad"), 1, "best")
    with pytest.raises(InvalidInputError, match="fpu"):
        PUCT(fpu="mean")
    with pytest.raises(InvalidInputError, match="fpu"):
        PUCT(fpu=float("nan"))
    with pytest.raises(InvalidInputError, match="fpu"):
        PUCT(fpu=True)
    with pytest.raises(InvalidInputError, match="normalize"):
        PUCT(normalize=1)
    with pytest.raises(InvalidInputError, match="ties"):
        PUCT(ties="first")
    with pytest.raises(InvalidInputError, match="share"):
        PUCT(share=1)
    with pytest.raises(InvalidInputError, match="seed"):
        PUCT(seed="x")
    with pytest.raises(InvalidInputError, match="seed"):
        PUCT(seed=True)
    with pytest.raises(InvalidInputError, match="setting"):
        PUCT.named("fast")
    with pytest.raises(InvalidInputError, match="seed"):
        Random(seed=1.5)
    with pytest.raises(InvalidInputError, match="no candidate"):
        Random().select(None, 0, [], [])
    with pytest.raises(InvalidInputError, match="no candidate"):
        PUCT().select(None, 0, [], [])


def _old_shared_key(signature: str) -> str:
    # the key before typing was shared across items: a typed field's position kept
    if not signature.startswith("type|"):
        return signature
    f = signature.split("|")
    return "|".join(f[:2] + f[3:]) if len(f) == 5 else signature


def _folder_view(items: int, buttons: int):
    """A folder view whose file-list items all accept typing (a self-loop) and whose buttons each open a new screen."""
    home = Screen([Element((0, 0, 400, 30), "TitleBar", "folder")]
                  + [Element((10 + 40 * i, 100, 40 + 40 * i, 130), "List Item", f"file{i}.txt", editable=True)
                     for i in range(items)]
                  + [Element((10 + 60 * j, 40, 60 + 60 * j, 70), "Button", f"b{j}", clickable=True)
                     for j in range(buttons)], 600, 300, ScreenMeta(app="demo"))
    typing = [f"type|list item|file{i}.txt|{i},13|text" for i in range(items)]
    clicks = [f"click|button|b{j}|{j},2" for j in range(buttons)]
    return home, typing, clicks


@pytest.mark.parametrize("seed", range(8))
def test_typing_into_equivalent_items_is_one_arm_not_one_per_item(seed):
    # 12 file-list items that accept typing (each a self-loop) beside 4 buttons that each open a new
    # screen: after one typing try, the other items share its reward, so every button is tried before a
    # second item is typed into (under the old key, each item was an arm never tried anywhere)
    home, typing, clicks = _folder_view(12, 4)
    g = ScreenGraph(app="demo")
    s = g.observe(home)
    sel = PUCT(seed=seed)
    sel.start_walk()
    sigs = typing + clicks
    chosen = []
    for _ in range(len(clicks) + 1):
        sig = sigs[sel.select(g, s, sigs, [1 / len(sigs)] * len(sigs))]
        if sig in clicks:
            to = Screen([Element((0, 0, 400, 30), "TitleBar", sig)], 600, 300, ScreenMeta(app="demo"))
        else:
            to = home
        sel.update(s, sig, g.record(s, sig, to).reward)
        chosen.append(sig)
    assert sum(sig in typing for sig in chosen) <= 1
    assert set(clicks) <= set(chosen)


def test_the_old_key_tried_every_item_first_on_the_same_view(monkeypatch):
    # the same view under the old key: the typing tries among the first five choices, over eight seeds,
    # are many more than one per seed (the fault the new key removes)
    import spatialobs.screen.select as select_mod

    monkeypatch.setattr(select_mod, "shared_key", _old_shared_key)
    home, typing, clicks = _folder_view(12, 4)
    typed = 0
    for seed in range(8):
        g = ScreenGraph(app="demo")
        s = g.observe(home)
        sel = PUCT(seed=seed)
        sel.start_walk()
        sigs = typing + clicks
        for _ in range(5):
            sig = sigs[sel.select(g, s, sigs, [1 / len(sigs)] * len(sigs))]
            to = Screen([Element((0, 0, 400, 30), "TitleBar", sig)], 600, 300, ScreenMeta(app="demo")) \
                if sig in clicks else home
            sel.update(s, sig, g.record(s, sig, to).reward)
            typed += sig in typing
    assert typed > 8


@pytest.mark.parametrize("app", ["explorer", "calc"])
def test_simulators_without_equivalent_typing_targets_explore_as_before(app, monkeypatch):
    # the simulated Explorer and Calc never offer one typed value for two fields of one role at two
    # places, so the new key changes none of PUCT's choices there
    import spatialobs.screen.select as select_mod

    def run():
        out = []
        for st in sim.make_app(app, 0).starts(3):
            ep = explore(sim.make_app(app, 0), 50, "puct", "heuristic", start=st, episode=st.index)
            out.append([s.signature for s in ep.steps])
        return out

    new = run()
    monkeypatch.setattr(select_mod, "shared_key", _old_shared_key)
    assert run() == new
