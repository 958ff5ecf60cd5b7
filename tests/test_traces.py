"""Trace processing: cleaning, windows, tokens, counterfactual pairs."""

from __future__ import annotations

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import Action, Element, explore, sim
from spatialobs.screen.explore import Episode, Step
from spatialobs.screen.traces import (
    action_token,
    build_traces,
    clean,
    counterfactual_pairs,
    position_bin,
    semantic_class,
    value_class,
    windows,
)

KEY = Action("key", value="escape")


def _ep(path, goal="g"):
    """An episode visiting the given states (path[0] is the start)."""
    steps = [Step(t, a, f"s{t}", KEY, b, False, False, 0.0, 0.5, 0.5, None, 1.0, 0.0, 100, 100, digest=f"d{a}")
             for t, (a, b) in enumerate(zip(path, path[1:]))]
    return Episode("app", None, goal, "puct", path[0], steps)


def test_clean_drops_loop_and_noop_segments():
    # segment 1: 0-1-2-3-4-5 (fresh), segment 2: 5 5 5 5 5 (no-ops), segment 3: 6 7 6 7 6 (loops), segment 4 fresh
    path = [0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 6, 7, 6, 7, 6, 8, 9, 10, 11, 12]
    runs = clean(_ep(path), segment=5, max_waste=0.5)
    assert [[s.t for s in r] for r in runs] == [[0, 1, 2, 3, 4], [15, 16, 17, 18, 19]]
    # one no-op in four steps: dropped only when the allowed share is below 1/4
    assert len(clean(_ep([0, 1, 1, 2, 3]), segment=4, max_waste=0.2)) == 0
    assert len(clean(_ep([0, 1, 1, 2, 3]), segment=4, max_waste=0.25)) == 1


def test_windows_never_bridge_dropped_segments():
    path = [0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 6, 7, 8, 9, 10]
    w = windows(clean(_ep(path), segment=5))
    assert [tuple(s.t for s in x) for x in w] == [(0, 1, 2), (1, 2, 3), (2, 3, 4), (10, 11, 12), (11, 12, 13),
                                                  (12, 13, 14)]


def test_tokens():
    el = Element((1100, 700, 1200, 740), "Button", "Cancel", clickable=True)
    assert action_token(Action("click", el), 1280, 800).text == "click|button|dismiss|bottom-right|none"
    ed = Element((100, 380, 300, 420), "Edit", "File name", editable=True)
    assert action_token(Action("type", ed, "=A1*2"), 1280, 800).text == "type|edit|input|left|formula"
    assert action_token(KEY, 1280, 800).text == "key||dismiss|none|none"
    assert semantic_class("MenuItem", "Edit") == "menu"
    assert semantic_class("MenuItem", "Paste") == "edit"
    assert semantic_class("MenuItem", "Zoom In") == "view"
    assert semantic_class("TreeItem", "Documents") == "navigate"
    assert semantic_class("DataItem", "report1.txt") == "select"
    assert semantic_class("CheckBox", "Match case") == "toggle"
    assert semantic_class("Button", "Don't Save") == "dismiss"
    assert semantic_class("Text", "hello") == "other"
    assert [position_bin(b, 300, 300) for b in ((0, 0, 10, 10), (140, 140, 160, 160), (290, 290, 300, 300))] == \
        ["top-left", "center", "bottom-right"]
    assert [value_class(v) for v in ("", "3.5", "https://x.org", "hello", "D5", "a/b")] == \
        ["empty", "number", "url", "word", "cell", "path"]
    with pytest.raises(InvalidInputError, match="Action"):
        action_token("click", 10, 10)


def test_counterfactual_pairs():
    a = build_traces([_ep([0, 1, 2, 3, 4], "t1")])
    b = build_traces([_ep([5, 6, 7, 8, 9], "t1")])
    c = build_traces([_ep([0, 1, 2, 3, 4], "t2")])
    # same goal, different screens but identical tokens (all escape): no pair
    assert counterfactual_pairs(a + b + c) == []
    el = Element((0, 0, 10, 10), "Button", "OK", clickable=True)
    ep = _ep([5, 6, 7, 8, 9], "t1")
    ep.steps = [Step(s.t, s.source, s.signature, Action("click", el), s.target, False, False, 0.0, 0.5, 0.5, None,
                     1.0, 0.0, 100, 100, digest=s.digest) for s in ep.steps]
    pairs = counterfactual_pairs(a + build_traces([ep]) + c)
    assert pairs and all(x.goal == y.goal == "t1" for x, y in pairs)
    assert all(x.steps[0].digest != y.steps[0].digest and x.tokens[0] != y.tokens[0] for x, y in pairs)
    assert len(counterfactual_pairs(a + build_traces([ep]), max_pairs=1)) == 1


def test_traces_from_real_exploration():
    app = sim.make_app("notepad")
    eps = [explore(app, 40, start=s) for s in app.starts(4)]
    tr = build_traces(eps)
    assert tr and all(len(t.steps) == 3 and len(t.tokens) == 3 for t in tr)
    assert all(t.goal == app.goal for t in tr)


def test_traces_bad_input():
    with pytest.raises(InvalidInputError, match="segment"):
        clean(_ep([0, 1]), segment=0)
    with pytest.raises(InvalidInputError, match="Episode"):
        clean([1, 2])
    with pytest.raises(InvalidInputError, match="size"):
        windows([], size=0)
    with pytest.raises(InvalidInputError, match="Trace"):
        counterfactual_pairs([1])
