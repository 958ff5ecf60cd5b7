"""The JSON HTTP API driven with a real HTTP client through whole agent loops, and its safety rules."""

from __future__ import annotations

import http.client
import json
import os
import shutil

import pytest

from tests.conftest import shared_files
from tests.test_serve_support import http_server, request

from spatialobs.canvas import load, observe
from spatialobs.serve import reference_reply

TOKEN = "t0ken"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("root")
    (root / "out").mkdir()
    with http_server(root, token=TOKEN) as base:
        yield base, root


def call(server, method, path, body=None, **kw):
    base, _ = server
    return request(base, method, path, body, token=TOKEN, **kw)


def ok(server, method, path, body=None):
    status, out = call(server, method, path, body)
    assert status == 200 and out["ok"], out
    return out["result"]


@pytest.mark.parametrize("config", range(10))
def test_agent_loop_on_remote_team_handoff(server, config):
    _, root = server
    doc = ok(server, "POST", f"/v1/scenarios/{config}/open", {"name": f"h{config}"})
    assert doc["document"] == f"h{config}"
    seen = ok(server, "GET", f"/v1/documents/h{config}/observe?form=text")
    # the agent reads only the observation text and the prompt
    reply = reference_reply(seen["observation"], doc["prompt"])
    assert reply == ok(server, "GET", f"/v1/scenarios/{config}/reply?document=h{config}")["reply"]
    report = ok(server, "POST", f"/v1/documents/h{config}/apply", {"reply": reply})
    assert report["applied"] == [0] and report["errors"] == []
    score = ok(server, "POST", f"/v1/scenarios/{config}/evaluate", {"document": f"h{config}"})
    assert score["correct_target"] and score["correct_placement"] and score["full_success"], score
    # what the agent did is reported as the agent's
    since = ok(server, "GET", f"/v1/documents/h{config}/observe?since={seen['token']}")
    changes = since["observation"]["changes"]["changes"]
    assert changes and all(set(c["kinds"].values()) == {"agent"} for c in changes)
    for fmt in ("native", "excalidraw"):
        saved = ok(server, "POST", f"/v1/documents/h{config}/save", {"path": f"out/h{config}.{fmt}", "format": fmt})
        assert saved["bytes"] == (root / saved["path"]).stat().st_size
        again = ok(server, "POST", "/v1/documents", {"path": saved["path"], "name": f"h{config}-{fmt}",
                                                      "origin": doc["origin"], "viewport": doc["viewport"]})
        assert again["format"] == fmt
        rescored = ok(server, "POST", f"/v1/scenarios/{config}/evaluate", {"document": again["document"]})
        a = ok(server, "GET", f"/v1/documents/h{config}/observe")["observation"]
        b = ok(server, "GET", f"/v1/documents/{again['document']}/observe")["observation"]
        if fmt == "native":  # exact round trip
            assert rescored["full_success"], rescored
            assert a == b
        else:  # Excalidraw stores less (styles, text layout) but the move is there, on the same objects
            assert rescored["correct_target"], rescored
            assert sorted(o["id"] for o in a["objects"]) == sorted(o["id"] for o in b["objects"])
        ok(server, "DELETE", f"/v1/documents/{again['document']}")
    # undo brings the scenario back to its start: the evaluator sees no move
    ok(server, "POST", f"/v1/documents/h{config}/undo")
    assert not ok(server, "POST", f"/v1/scenarios/{config}/evaluate", {"document": f"h{config}"})["correct_target"]
    assert ok(server, "DELETE", f"/v1/documents/h{config}") == {"document": f"h{config}", "closed": True}


def test_real_tldraw_file_open_observe_apply_save_reopen(server, shared_data):
    _, root = server
    src = next(p for p in shared_files("canvases", "*.tldr") if "argus" in p.name)
    shutil.copy(src, root / "argus.tldr")
    doc = ok(server, "POST", "/v1/documents", {"path": "argus.tldr"})
    assert doc["format"] == "tldraw" and doc["nodes"] == len(load(src).nodes)
    obs = ok(server, "GET", f"/v1/documents/{doc['document']}/observe?include_bounds=true")["observation"]
    assert obs == observe(load(src), include_bounds=True).to_dict()
    target = next(o for o in obs["objects"] if o["type"] == "geo")
    b = target["actionBounds"]
    rep = ok(server, "POST", f"/v1/documents/{doc['document']}/apply",
             {"ops": [{"op": "move_node", "id": target["id"], "x": b["x"] + 40, "y": b["y"] - 10}]})
    assert rep["applied"] == [0]
    ok(server, "POST", f"/v1/documents/{doc['document']}/save", {"path": "out/argus-moved.tldr"})
    moved = load(root / "out" / "argus-moved.tldr")
    x0, y0, _, _ = moved.page_bounds(target["id"])
    assert (round(x0), round(y0)) == (b["x"] + 40, b["y"] - 10)
    # the default save goes back to the file it came from, whole
    ok(server, "POST", f"/v1/documents/{doc['document']}/save", {})
    assert load(root / "argus.tldr").page_bounds(target["id"]) == moved.page_bounds(target["id"])
    svg = call(server, "GET", f"/v1/documents/{doc['document']}/render")[1]["result"]["svg"]
    assert svg.startswith("<svg") and target["id"] in svg


def test_person_edits_between_prompts_are_reported(server):
    _, root = server
    doc = ok(server, "POST", "/v1/scenarios/0/open", {"name": "edited"})
    ok(server, "POST", "/v1/documents/edited/save", {"path": "out/edited.json", "format": "native"})
    first = ok(server, "GET", "/v1/documents/edited/observe")
    # the person edits the file in their editor; the service reloads it as the person's edits
    c = load(root / "out" / "edited.json")
    c.update("shape:copy0", x=c.node("shape:copy0").x + 25, style={"color": "red"})
    (root / "out" / "edited.json").write_text(c.to_json())
    assert ok(server, "POST", "/v1/documents/edited/reload")["written"] == 1
    ok(server, "POST", "/v1/documents/edited/apply", {"ops": [{"op": "set_text", "id": "shape:key", "text": "Key"}]})
    later = ok(server, "POST", "/v1/documents/edited/observe", {"since": first["token"]})
    ch = later["observation"]["changes"]
    assert ch["changes"][0] == {"id": "shape:copy0", "type": "note",
                                "kinds": {"moved": "person", "restyled": "person"},
                                "actionBounds": ch["changes"][0]["actionBounds"]}
    assert {"id": "shape:key", "kind": {"retexted": "agent"}} == {"id": ch["changes"][1]["id"],
                                                                    "kind": ch["changes"][1]["kinds"]}
    assert ch["by"] == {"person": 1, "agent": 1} and later["token"] != first["token"]
    assert doc["document"] == "edited"


def test_bad_requests_get_one_line_errors_and_change_nothing(server):
    base, root = server
    ok(server, "POST", "/v1/scenarios/3/open", {"name": "safe"})
    before = ok(server, "GET", "/v1/documents/safe/observe?include_bounds=1")["observation"]
    os.symlink("/etc", root / "escape")
    cases = [
        ("POST", "/v1/documents", {"path": "../x.tldr"}, 403, "forbidden"),
        ("POST", "/v1/documents", {"path": "escape/passwd"}, 403, "forbidden"),
        ("POST", "/v1/documents/safe/save", {"path": "escape/hosts.json"}, 403, "forbidden"),
        ("POST", "/v1/documents/safe/save", {"path": "/tmp/elsewhere.json"}, 403, "forbidden"),
        ("POST", "/v1/documents", {"path": "missing.tldr"}, 404, "not_found"),
        ("POST", "/v1/documents", {"document": {"nothing": 1}}, 400, "bad_request"),
        ("POST", "/v1/documents", {"document": "{not json"}, 400, "bad_request"),
        ("POST", "/v1/documents/safe/apply", {"ops": [{"op": "move_node", "id": "x", "dx": 1}] * 1001}, 413, "too_large"),
        ("POST", "/v1/documents/safe/apply", {"ops": "nope"}, 400, "bad_request"),
        ("POST", "/v1/documents/safe/apply", {}, 400, "bad_request"),
        ("POST", "/v1/documents/safe/apply", {"reply": "x", "bogus": 1}, 400, "bad_request"),
        ("GET", "/v1/documents/safe/observe?max_objects=lots", None, 400, "bad_request"),
        ("GET", "/v1/documents/safe/observe?since=abc", None, 400, "bad_request"),
        ("GET", "/v1/documents/safe/observe?viewport=[0,0,-5,5]", None, 400, "bad_request"),
        ("GET", "/v1/documents/nope/observe", None, 404, "not_found"),
        ("POST", "/v1/call/no_such_tool", {}, 404, "not_found"),
        ("POST", "/v1/scenarios/12/open", {}, 400, "bad_request"),
        ("POST", "/v1/scenarios/1/open", {"name": "safe"}, 409, "conflict"),
        ("POST", "/v1/screens/ix/add", {"screen": {"elements": "no"}}, 400, "bad_request"),
        ("GET", "/v1/screens/never/stats", None, 404, "not_found"),
    ]
    for method, path, body, status, code in cases:
        got, out = call(server, method, path, body)
        assert (got, out["ok"], out["error"]["code"]) == (status, False, code), (path, body and str(body)[:80], out)
        msg = out["error"]["message"]
        assert "\n" not in msg and "Traceback" not in msg and len(msg) < 600
    got, out = call(server, "POST", "/v1/documents/safe/apply", raw=b"{broken")
    assert got == 400 and out["error"]["code"] == "bad_request"
    got, out = call(server, "POST", "/v1/documents/safe/apply", raw=b"[1, 2]")
    assert got == 400
    # a body announced larger than the limit is refused before it is read
    host, port = base.rsplit("/", 1)[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.putrequest("POST", "/v1/documents")
    conn.putheader("Authorization", f"Bearer {TOKEN}")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(17 * 1024 * 1024))
    conn.endheaders()
    resp = conn.getresponse()
    assert resp.status == 413 and json.loads(resp.read())["error"]["code"] == "too_large"
    conn.close()
    # ops that fail are reported, and leave the document as it was
    rep = ok(server, "POST", "/v1/documents/safe/apply", {"ops": [{"op": "move_node", "id": "no-such", "x": 0, "y": 0},
                                                                   {"op": "delete_node", "id": "shape:chart0"},
                                                                   {"op": "set_text", "id": "shape:chart1"}]})
    assert rep["applied"] == [1] and len(rep["errors"]) == 2
    ok(server, "POST", "/v1/documents/safe/undo")
    assert ok(server, "GET", "/v1/documents/safe/observe?include_bounds=1")["observation"] == before
    assert not (root / "escape" / "hosts.json").exists()


def test_screen_index_add_query_choose_save_load(server):
    _, root = server
    home = {"width": 400, "height": 800, "meta": {"app": "mail"}, "elements": [
        {"bounds": [0, 0, 400, 60], "role": "toolbar", "text": "Inbox"},
        {"bounds": [10, 100, 390, 160], "role": "button", "text": "Compose", "clickable": True},
        {"bounds": [10, 200, 390, 260], "role": "edit", "text": "", "editable": True}]}
    compose = {"width": 400, "height": 800, "meta": {"app": "mail"}, "elements": [
        {"bounds": [0, 0, 400, 60], "role": "toolbar", "text": "New message"},
        {"bounds": [10, 100, 390, 160], "role": "button", "text": "Send", "clickable": True}]}
    a = ok(server, "POST", "/v1/screens/mail/add", {"screen": home})
    assert a["state"] == 0 and a["new_state"]
    again = ok(server, "POST", "/v1/screens/mail/add", {"screen": home})
    assert again["state"] == 0 and not again["new_state"] and again["score"] == 1.0
    pick = ok(server, "POST", "/v1/screens/mail/choose", {"screen": home, "goal": "compose", "prior": "heuristic"})
    assert pick["label"] in ("click compose", "type text into edit") and len(pick["scores"]) == 2
    assert pick["signature"].startswith(pick["label"].split()[0] + "|")
    t = ok(server, "POST", "/v1/screens/mail/add", {"screen": compose, "from_state": 0, "action": pick["signature"]})
    assert t["state"] == 1 and t["new_state"] and t["transition"]["edge_novel"]
    # the tried action now has a visit and a reward: its PUCT score changed, the other's did not
    after = ok(server, "POST", "/v1/screens/mail/choose", {"screen": home, "goal": "compose", "prior": "heuristic"})
    k = pick["choice"]
    assert after["scores"][k] != pick["scores"][k]
    stats = ok(server, "GET", "/v1/screens/mail/stats")
    assert (stats["states"], stats["edges"], stats["transitions"]) == (2, 1, 1)
    hits = ok(server, "POST", "/v1/screens/mail/query", {"screen": home, "k": 2})["hits"]
    assert hits[0]["state"] == 0 and hits[0]["score"] == 1.0
    ok(server, "POST", "/v1/screens/mail/save", {"path": "out/mail.idx"})
    loaded = ok(server, "POST", "/v1/screens/copy/load", {"path": "out/mail.idx"})
    assert loaded["states"] == 2
    assert ok(server, "POST", "/v1/screens/copy/add", {"screen": compose})["state"] == 1
    assert {i["index"] for i in ok(server, "GET", "/v1/screens")["indexes"]} >= {"mail", "copy"}


def test_generic_call_route_mirrors_every_tool(server):
    out = ok(server, "POST", "/v1/call/list_scenarios", {})
    assert [s["family"] for s in out["scenarios"]] == ["archive"] * 3 + ["color"] * 3 + ["membership"] * 2 + ["connector"] * 2
    snap = ok(server, "POST", "/v1/call/scenario_open", {"config": 6, "name": "snap"})
    s = ok(server, "GET", "/v1/documents/snap/snapshot")["snapshot"]
    assert s["total_nodes"] if "total_nodes" in s else True
    assert json.dumps(s)
    assert snap["family"] == "membership"


def test_observe_budget_compact_form_and_paper_rule_over_http(server, shared_data):
    from spatialobs.canvas.compact import expand

    _, root = server
    src = next(p for p in shared_files("canvases", "*.excalidraw") if "upendrku" in p.name)
    shutil.copy(src, root / "sd.excalidraw")
    doc = ok(server, "POST", "/v1/documents", {"path": "sd.excalidraw"})["document"]
    small = ok(server, "GET", f"/v1/documents/{doc}/observe?form=compact&max_bytes=6000")["observation"]
    assert len(json.dumps(small, separators=(",", ":"), ensure_ascii=False).encode()) <= 6000
    want = observe(load(src), max_bytes=6000, budget_form="compact")
    assert expand(small) == want.to_dict() and want.omitted["objects"] > 0
    tokens = ok(server, "GET", f"/v1/documents/{doc}/observe?max_tokens=1500&explain=true")["observation"]
    assert tokens == observe(load(src), max_tokens=1500, explain=True).to_dict()
    assert all("keptFor" in o for o in tokens["objects"])
    paper = ok(server, "GET", f"/v1/documents/{doc}/observe?occlusion=paper")["observation"]
    assert paper == observe(load(src), occlusion="paper").to_dict()
    status, body = call(server, "GET", f"/v1/documents/{doc}/observe?occlusion=pixels")
    assert status == 400 and "occlusion" in json.dumps(body)
