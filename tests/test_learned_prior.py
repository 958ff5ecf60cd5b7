"""The learned proposal prior: training on traces, save/load round trip, bad files, use as a prior."""

from __future__ import annotations

import json
import time

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import Action, Element, Screen, explore, sim
from spatialobs.screen.prior import (
    CorruptPriorError,
    LearnedPrior,
    load_traces,
    save_traces,
    trace_records,
    train_prior,
)
from spatialobs.screen.select import prior_weights


def rec(role, text, left, novel=None, op="click", value=None, bounds=(0, 40, 60, 60)):
    return {"app": "demo", "goal": "", "op": op, "role": role, "text": text, "value": value, "bounds": list(bounds),
            "width": 1280, "height": 800, "source": 0, "target": 1 if left else 0,
            "state_novel": left if novel is None else novel, "edge_novel": True, "capture": None}


@pytest.fixture(scope="module")
def traces():
    eps = []
    for name in ("notepad", "calc"):
        app = sim.make_app(name, 100)
        eps += [explore(app, 30, "random", prior="uniform", start=s, episode=s.index) for s in app.starts(6)]
    return eps


def test_learns_which_tokens_move_on_synthetic_records():
    recs = [rec("MenuItem", "File", True)] * 9 + [rec("MenuItem", "File", False)] + \
           [rec("DataItem", "7", False)] * 9 + [rec("DataItem", "7", True)]
    m = train_prior(recs, target="leaves")
    menu = Action("click", Element((0, 40, 60, 60), "MenuItem", "File", clickable=True))
    cell = Action("click", Element((0, 40, 60, 60), "DataItem", "7", clickable=True))
    p_menu, p_cell = m(Screen([], 1280, 800), [menu, cell])
    assert p_menu > 0.7 and p_cell < 0.3
    # the floor keeps every action possible
    assert min(LearnedPrior({"bias": -50.0}, floor=0.05)(Screen([], 1280, 800), [menu, cell])) == 0.05
    # the order of the records does not matter
    assert train_prior(list(reversed(recs)), target="leaves").weights == m.weights
    # the two targets differ when leaving is not reaching a new state
    recs2 = [rec("Button", "Back", True, novel=False)] * 10
    assert train_prior(recs2, target="novel").weights != train_prior(recs2, target="leaves").weights


def test_traces_round_trip_and_train(tmp_path, traces):
    path = tmp_path / "t.jsonl"
    n = save_traces(traces, path)
    assert n == sum(len(e.steps) for e in traces)
    recs = load_traces(path)
    assert recs == json.loads(json.dumps(trace_records(traces)))
    assert save_traces(traces[:1], path, append=True) == 30 and len(load_traces(path)) == n + 30
    m = train_prior(recs)
    assert m.meta["steps"] == n and m.meta["apps"] == ["calc", "notepad"]


def test_save_load_round_trip(tmp_path, traces):
    m = train_prior(trace_records(traces))
    path = tmp_path / "prior.json"
    m.save(path)
    back = LearnedPrior.load(path)
    assert back == m and back.floor == m.floor and back.meta == m.meta
    app = sim.make_app("calc", 3)
    scr = app.reset()
    acts = app.actions(scr)
    assert back(scr, acts, app.goal) == m(scr, acts, app.goal)
    # usable by name wherever priors are chosen
    w = prior_weights(f"learned:{path}", scr, acts, app.goal)
    assert abs(float(w.sum()) - 1) < 1e-12 and len(w) == len(acts)
    ep = explore(app, 10, "puct", prior=f"learned:{path}")
    assert len(ep.steps) == 10


@pytest.mark.parametrize("content, match", [
    ("", "not JSON"),
    ("{\"format\": \"spatialobs-learned-prior\"", "not JSON"),
    ("[1, 2]", "not a learned prior"),
    ('{"format": "spatialobs-traces", "version": 1}', "not a learned prior"),
    ('{"format": "spatialobs-learned-prior", "version": 99, "model": "logistic", "floor": 0.1, "weights": {}}',
     "version 99"),
    ('{"format": "spatialobs-learned-prior", "version": 1, "model": "forest", "floor": 0.1, "weights": {}}',
     "unknown model"),
    ('{"format": "spatialobs-learned-prior", "version": 1, "model": "logistic", "floor": 0.1, '
     '"weights": {"bias": NaN}}', "finite"),
    ('{"format": "spatialobs-learned-prior", "version": 1, "model": "logistic", "floor": 0.1, '
     '"weights": {"bias": "1"}}', "finite"),
    ('{"format": "spatialobs-learned-prior", "version": 1, "model": "logistic", "floor": 0, "weights": {}}',
     "floor"),
    ('{"format": "spatialobs-learned-prior", "version": 1, "model": "logistic", "floor": 0.1, "weights": [1]}',
     "weights"),
])
def test_bad_prior_files(tmp_path, content, match):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CorruptPriorError, match=match):
        LearnedPrior.load(path)
    with pytest.raises(InvalidInputError, match=match):  # the same error through a prior name
        prior_weights(f"learned:{path}", Screen([], 10, 10), [Action("key", None, "escape")])


def test_missing_and_binary_prior_files(tmp_path):
    with pytest.raises(CorruptPriorError, match="cannot read"):
        LearnedPrior.load(tmp_path / "nope.json")
    with pytest.raises(CorruptPriorError, match="cannot read"):
        prior_weights(f"learned:{tmp_path / 'nope.json'}", None, [Action("key", None, "escape")])
    (tmp_path / "b.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CorruptPriorError, match="cannot read"):
        LearnedPrior.load(tmp_path / "b.json")
    with pytest.raises(InvalidInputError, match="'learned'"):
        prior_weights("learned", None, [Action("key", None, "escape")])


def test_bad_traces_files(tmp_path):
    p = tmp_path / "t.jsonl"
    for content, match in (("", "empty"), ("nope\n", "not JSON"), ('{"format": "x"}\n', "not a traces file"),
                           ('{"format": "spatialobs-traces", "version": 2}\n', "version 2"),
                           ('{"format": "spatialobs-traces", "version": 1}\n{"op": "click"}\n', "line 2"),
                           ('{"format": "spatialobs-traces", "version": 1}\n'
                            + json.dumps({**rec("Button", "OK", True), "bounds": [1, 2]}) + "\n", "bounds")):
        p.write_text(content, encoding="utf-8")
        with pytest.raises(CorruptPriorError, match=match):
            load_traces(p)
    with pytest.raises(InvalidInputError, match="at least one"):
        train_prior([])
    with pytest.raises(InvalidInputError, match="record 0"):
        train_prior([{"op": "click"}])
    with pytest.raises(InvalidInputError, match="target"):
        train_prior([rec("Button", "OK", True)], target="reward")
    with pytest.raises(InvalidInputError, match="l2"):
        train_prior([rec("Button", "OK", True)], l2=-1)


def test_scoring_a_screen_is_fast(traces):
    m = train_prior(trace_records(traces))
    app = sim.make_app("calc", 5)
    scr = app.reset()
    acts = app.actions(scr)
    m(scr, acts, app.goal)  # warm the token caches
    t0 = time.perf_counter()
    for _ in range(50):
        m(scr, acts, app.goal)
    assert (time.perf_counter() - t0) / 50 < 1e-3  # all 78 actions, well under a millisecond
