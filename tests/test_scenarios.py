"""Remote Team Handoff: the ten configurations, the reference agent on the observation
and on the baseline context, and the evidence the baseline lacks in each family."""

from __future__ import annotations

import json

import pytest

from spatialobs import InvalidInputError
from spatialobs.canvas import baseline_context, evaluate, observe
from spatialobs.canvas.scenarios.agent import Choice, apply_choice, choose, run_handoff
from spatialobs.canvas.baseline import context_json
from spatialobs.canvas.scenarios.handoff import FAMILIES, diagram_workspace, remote_team_handoff, synthetic_workspace

CONFIGS = range(10)


def contexts(s):
    obs = observe(s.canvas, s.viewport, origin=s.origin).to_json()
    base = context_json(baseline_context(s.canvas, s.viewport, origin=s.origin))
    return obs, base


@pytest.mark.parametrize("config", CONFIGS)
def test_agent_on_observation_succeeds(config):
    s = remote_team_handoff(config)
    r = run_handoff(config)
    choice, out = r.choice, r.outcome
    assert r.family == s.family and r.context == "observation"
    assert set(choice.targets) == set(s.task.targets)
    assert out.correct_target and out.correct_placement and out.full_success, out.details


@pytest.mark.parametrize("config", CONFIGS)
def test_agent_on_baseline_fails(config):
    r = run_handoff(config, "baseline")
    choice, out = r.choice, r.outcome
    assert not out.correct_target and not out.full_success
    assert choice.targets == ()  # it finds no evidence to act on and does not guess


def family_configs(family):
    return [k for k in CONFIGS if FAMILIES[k] == family]


@pytest.mark.parametrize("family", ["archive", "color", "membership", "connector"])
def test_fixed_within_family(family):
    sc = [remote_team_handoff(k) for k in family_configs(family)]
    first = sc[0]
    for s in sc[1:]:
        assert s.prompt == first.prompt and s.viewport == first.viewport and s.task.candidates == first.task.candidates
        assert set(s.canvas.nodes) == set(first.canvas.nodes)
        for nid in first.canvas.nodes:
            a, b = first.canvas.page_bounds(nid), s.canvas.page_bounds(nid)
            assert a == pytest.approx(b, abs=1e-9), nid
            assert first.canvas.nodes[nid].text == s.canvas.nodes[nid].text
    assert len({s.task.targets for s in sc}) == len(sc)  # the intended target differs every time


@pytest.mark.parametrize("family", ["archive", "color", "membership", "connector"])
def test_baseline_cannot_tell_configs_apart(family):
    """Same baseline content in every configuration of a family, different targets: no reader
    of the baseline alone can be right on all of them."""
    ctx = [baseline_context(s.canvas, s.viewport, origin=s.origin) for s in map(remote_team_handoff, family_configs(family))]
    canon = [sorted(json.dumps(r, sort_keys=True) for r in c["shapes"]) for c in ctx]
    assert all(c == canon[0] for c in canon)
    assert all(c["peripheralClusters"] == ctx[0]["peripheralClusters"] for c in ctx)
    if family != "membership":  # paint order differs only where membership moves nodes in the tree
        assert len({context_json(c) for c in ctx}) == 1


def test_decisive_evidence_per_family():
    # archive: the three copies are offscreen; the baseline has no id and no lock state for them
    s = remote_team_handoff(1)
    obs, base = contexts(s)
    for k in range(3):
        assert f"shape:copy{k}" in obs and f"shape:copy{k}" not in base
    assert [json.loads(obs)["objects"][i].get("flags") for i, o in enumerate(json.loads(obs)["objects"])
            if o["id"].startswith("shape:copy")] == [["locked"], None, ["locked"]]
    assert json.loads(base)["peripheralClusters"][0]["numberOfShapes"] == 5
    # color: the drafts are listed alike; only the observation has their color
    s = remote_team_handoff(4)
    obs, base = json.loads(contexts(s)[0]), json.loads(contexts(s)[1])
    drafts = [o for o in obs["objects"] if o.get("text") == "Handoff breakdown"]
    assert [d["style"]["color"] for d in drafts] == ["red", "blue", "green"]
    assert [d["visibility"] for d in drafts] == ["occluded", "occluded", "visible"]
    assert all("style" not in r and "color" not in r for r in base["shapes"])
    # membership: the page-level pair shows up only as an inferred "inside", the native pair as "parent"
    s = remote_team_handoff(6)
    rel = json.loads(contexts(s)[0])["relations"]
    assert {(r["type"], r["from"], r["native"]) for r in rel if r["to"] == "shape:studyA" and r["type"] in ("parent", "inside")} == {
        ("parent", "shape:calls1", True), ("parent", "shape:diaries1", True),
        ("inside", "shape:calls2", False), ("inside", "shape:diaries2", False)}
    assert "relations" not in json.loads(contexts(s)[1]) and "parent" not in contexts(s)[1]
    # connector: one arrow bound at both ends, the other only touches; the baseline has no bindings
    s = remote_team_handoff(9)
    rel = json.loads(contexts(s)[0])["relations"]
    assert {"type": "bound", "from": "shape:arrow2", "to": "shape:finding2", "native": True, "terminal": "end"} in rel
    assert {"type": "touches", "from": "shape:arrow1", "to": "shape:finding1", "native": False, "terminal": "end"} in rel
    assert "relations" not in json.loads(contexts(s)[1]) and "terminal" not in contexts(s)[1]


def test_results_table():
    rows = []
    for k in CONFIGS:
        o, b = run_handoff(k).outcome, run_handoff(k, "baseline").outcome
        rows.append((k, FAMILIES[k], o.correct_target, o.full_success, b.correct_target, b.full_success))
    assert sum(r[2] for r in rows) == 10 and sum(r[3] for r in rows) == 10
    assert sum(r[4] for r in rows) == 0 and sum(r[5] for r in rows) == 0


def test_observation_is_small():
    for k in CONFIGS:
        s = remote_team_handoff(k)
        assert len(observe(s.canvas, s.viewport, origin=s.origin).to_json().encode()) < 12_000


def test_wrong_choices_are_scored_as_wrong():
    s = remote_team_handoff(8)
    after = s.canvas.copy()
    apply_choice(after, Choice(("shape:finding2",), "shape:claim"))
    assert not evaluate(s.canvas, after, s.task).correct_target
    after = s.canvas.copy()
    apply_choice(after, Choice(("shape:finding1",), "shape:key"))  # right target, wrong place
    out = evaluate(s.canvas, after, s.task)
    assert out.correct_target and not out.correct_placement


@pytest.mark.parametrize("bad", [-1, 10, 2.0, True, "3"])
def test_bad_config(bad):
    with pytest.raises(InvalidInputError, match="config"):
        remote_team_handoff(bad)


def test_diagram_workspace():
    c = diagram_workspace(3000, seed=3)
    assert len(c.nodes) <= 3000 and {"frame", "group", "arrow", "geo", "text"} <= {n.type for n in c.nodes.values()}
    assert any(n.rotation and n.type == "group" for n in c.nodes.values())
    assert any(n.opacity < 1 for n in c.nodes.values())
    ends = {}
    for b in c.bindings.values():
        ends.setdefault(b.from_id, set()).add(b.terminal)
    assert {"start"} in ends.values() and {"start", "end"} in ends.values()
    kinds = {r["type"] for r in observe(c, (0, 0, 2800, 1800)).to_dict()["relations"]}
    assert {"parent", "bound", "touches", "overlaps", "near", "aligned"} <= kinds
    assert c.to_json() == diagram_workspace(3000, seed=3).to_json()
    with pytest.raises(InvalidInputError, match="n must be"):
        diagram_workspace(-5)


def test_synthetic_workspace():
    c = synthetic_workspace(500, seed=3)
    assert len(c.nodes) == 500 and {"frame", "group", "arrow", "note", "geo"} <= {n.type for n in c.nodes.values()}
    assert c.to_json() == synthetic_workspace(500, seed=3).to_json()
    with pytest.raises(InvalidInputError, match="n must be"):
        synthetic_workspace(-5)
    with pytest.raises(InvalidInputError, match="context is not valid JSON"):
        choose("{oops", "Move")
