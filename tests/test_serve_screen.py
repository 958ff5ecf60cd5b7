"""The service's screen tools take what the drivers produce: their screens and their executable actions.

A driver's screen goes to ``screen_add`` / ``screen_choose`` as the generic screen JSON
(``Screen.to_dict()``), its actions as :func:`~spatialobs.serve.action_json`; driving a
simulator through the tools takes the steps :func:`~spatialobs.screen.explore` takes.
The Mousepad test is skipped without the desktop packages (and fails under ``CI=true``).
"""

from __future__ import annotations

import pytest

from spatialobs.screen import ScreenGraph, explore
from spatialobs.screen.drivers import make_driver
from spatialobs.serve import Service, ServiceError, action_json


def _through_the_service(svc, env, steps, prior="heuristic"):
    """Explore ``env`` with the service choosing and recording: (source, signature, reward, novelty) per step."""
    out = []
    scr = env.reset()
    for _ in range(steps):
        acts = env.actions(scr)
        r = svc.call("screen_choose", {"index": "g", "screen": scr.to_dict(), "actions": [action_json(a) for a in acts],
                                       "prior": prior, "goal": ""})
        assert r["action"] == action_json(acts[r["choice"]]) and len(r["scores"]) == len(acts)
        nxt = env.step(acts[r["choice"]])
        a = svc.call("screen_add", {"index": "g", "screen": nxt.to_dict(), "from_state": r["state"],
                                    "action": r["signature"]})
        tr = a["transition"]
        out.append((r["state"], r["signature"], tr["reward"], a["new_state"], tr["edge_novel"], tr["capture"]))
        scr = env.recover() if tr["capture"] is not None else nxt
    return out


@pytest.mark.parametrize("app", ["notepad", "calc"])
def test_driving_a_simulator_through_the_tools_takes_the_explore_steps(tmp_path, app):
    ref = explore(make_driver(app, seed=0), steps=30, selector="puct", prior="heuristic", goal="",
                  graph=ScreenGraph(app=app))
    got = _through_the_service(Service(tmp_path), make_driver(app, seed=0), 30)
    assert got == [(s.source, s.signature, s.reward, s.state_novel, s.edge_novel, s.capture) for s in ref.steps]


def test_choose_maps_duplicate_signatures_to_one_arm_and_rejects_bad_actions(tmp_path):
    svc = Service(tmp_path)
    env = make_driver("notepad", seed=0)
    scr = env.reset()
    acts = [action_json(a) for a in env.actions(scr)]
    r = svc.call("screen_choose", {"index": "g", "screen": scr.to_dict(), "actions": acts + acts})
    assert r["choice"] < len(acts)  # the first of equal signatures is the arm
    assert r["scores"][:len(acts)] == r["scores"][len(acts):]
    for bad, msg in (({"op": "click"}, "Element target"), ({"op": "swipe"}, "op must be one of"),
                     ({"op": "click", "element": 10**6}, "element must be an index"),
                     ({"op": "key", "value": 3}, "value must be a string"), ("click", "must be an object")):
        with pytest.raises(ServiceError, match=msg) as exc:
            svc.call("screen_choose", {"index": "g", "screen": scr.to_dict(), "actions": [bad]})
        assert exc.value.code == "bad_request"


def test_a_mousepad_accessibility_tree_screen_and_its_actions(tmp_path):
    from spatialobs.screen.drivers.atspi import unavailable_reason
    from tests._drivers import require

    require(unavailable_reason("mousepad"))
    svc = Service(tmp_path)
    with make_driver("mousepad") as d:
        got = _through_the_service(svc, d, 4)
        scr = d.screen()
    assert len(got) == 4 and got[0][0] == 0  # the start, observed by the first choice, is state 0
    stats = svc.call("screen_stats", {"index": "g"})
    assert stats["transitions"] + sum(c is not None for *_, c in got) >= 4 and stats["states"] >= 1
    # the menu bar of the tree is matched back to the states it was seen in
    hits = svc.call("screen_query", {"index": "g", "screen": scr.to_dict(), "k": 1})["hits"]
    assert hits and 0.0 <= hits[0]["score"] <= 1.0
