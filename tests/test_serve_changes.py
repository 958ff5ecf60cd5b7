"""Temporal observation: observe(..., since=token) against a naive diff of document copies."""

from __future__ import annotations

import random

import pytest

from tests.reference.changes_oracle import naive_changes

from spatialobs import SpatialObsError
from spatialobs.canvas import Binding, Canvas, Executor, Node, observe
from spatialobs.canvas import changes
from spatialobs.canvas.changes import issue_token, sync
from spatialobs.canvas.scenarios import synthetic_workspace


def person_edit(c: Canvas, rng: random.Random, serial: list) -> None:
    ids = sorted(c.nodes)
    nid = rng.choice(ids)
    node = c.nodes[nid]
    k = rng.randrange(13)
    if k == 0:
        c.update(nid, x=node.x + rng.choice([-30, 5, 17]), y=node.y + rng.choice([0, 9]))
    elif k == 1:
        c.update(nid, w=node.w + 10, h=max(0.0, node.h - 3))
    elif k == 2:
        c.update(nid, rotation=node.rotation + 0.25)
    elif k == 3:
        c.update(nid, style={"color": rng.choice(["red", "blue", "green"])})
    elif k == 4:
        c.update(nid, text=rng.choice(["a", "b", None, "hello"]))
    elif k == 5:
        frames = [i for i in ids if c.nodes[i].type == "frame" and i != nid]
        c.update(nid, parent=rng.choice(frames + ["page:page"]))  # may be a cycle: rejected, nothing changes
    elif k == 6:
        sib = c.children(node.parent)
        c.update(nid, index=c.index_between(node.parent, sib[-1], None) if sib[-1] != nid else node.index)
    elif k == 7:
        serial[0] += 1
        c.add(Node(f"p{serial[0]}", "geo", rng.choice(["page:page", nid]) if node.type == "frame" else "page:page",
                   x=rng.randrange(500), y=rng.randrange(500), w=40, h=30))
    elif k == 8:
        c.remove(nid)
    elif k == 9:
        arrows = [i for i in ids if c.nodes[i].type == "arrow"]
        if arrows:
            serial[0] += 1
            c.add(Binding(f"binding:p{serial[0]}", "arrow", rng.choice(arrows), nid, rng.choice(["start", "end"])))
    elif k == 10:
        if c.bindings:
            c.remove(rng.choice(sorted(c.bindings)))
    elif k == 11:
        c.update(nid, locked=not node.locked, props={"k": rng.randrange(3)})
    else:  # a transaction that fails half way: rolled back, so nobody changed anything
        try:
            with c.batch():
                c.update(nid, x=node.x + 1000)
                c.update(nid, w=-5)
        except SpatialObsError:
            pass


def agent_ops(c: Canvas, rng: random.Random) -> list:
    ids = sorted(c.nodes)
    nid = rng.choice(ids)
    k = rng.randrange(7)
    if k == 0:
        return [{"op": "move_node", "id": nid, "dx": rng.choice([10, -4])}]
    if k == 1:
        return [{"op": "update_styles", "id": nid, "styles": {"color": rng.choice(["red", "violet"])}}]
    if k == 2:
        return [{"op": "set_text", "id": nid, "text": rng.choice(["x", "y"])}]
    if k == 3:
        return [{"op": "delete_node", "id": nid}]
    if k == 4:
        return [{"op": "create_artboard", "name": "A", "w": 100, "h": 80},
                {"op": "parse_html", "html": "<p>hi</p>"}]
    if k == 5:
        return [{"op": "update_node", "id": nid, "changes": {"w": 77}}]
    return [{"op": "move_node", "id": "no-such-node", "dx": 1}]  # fails: reported, nothing changes


@pytest.mark.parametrize("seed", range(40))
def test_changes_since_match_a_naive_diff_of_copies(seed):
    rng = random.Random(seed)
    c = synthetic_workspace(rng.choice([40, 60, 120]), seed=seed)
    for k in range(rng.randrange(3)):  # earlier history that the token must not report
        _ = c.update(sorted(c.nodes)[k], x=1.0)
    first = observe(c)
    states = [(c.copy(), None)]
    ex = Executor(c)
    serial = [0]
    for _ in range(rng.randrange(1, 40)):
        who = rng.choice(["person", "agent"])
        if who == "person":
            try:
                person_edit(c, rng, serial)
            except SpatialObsError:
                pass
        else:
            ex.apply(agent_ops(c, rng))
        states.append((c.copy(), who))
        if rng.random() < 0.15:
            observe(c)  # other observations in between do not move the first token
    later = observe(c, since=first.token, max_changes=10_000)
    got = {r["id"]: r["kinds"] for r in later.changes["changes"]}
    assert got == naive_changes(states)
    assert later.changes["omitted"] == 0
    # relevance: records with a person's part come first
    person = ["person" in r["kinds"].values() for r in later.changes["changes"]]
    assert person == sorted(person, reverse=True)
    # the same within a smaller budget: the most relevant records, the rest counted
    small = observe(c, since=first.token, max_changes=3)
    assert small.changes["changes"] == later.changes["changes"][:3]
    assert small.changes["omitted"] == len(got) - len(small.changes["changes"])
    for r in later.changes["changes"]:
        if r["type"] != "binding" and r["id"] in c.nodes:
            b = c.page_bounds(r["id"])
            assert r["actionBounds"]["x"] == int((b[0] + 0.5) // 1)


def test_no_change_reports_nothing_and_keeps_the_bytes():
    c = synthetic_workspace(30)
    a = observe(c)
    b = observe(c, since=a.token)
    assert b.changes == {"since": a.token, "changes": [], "omitted": 0, "by": {"person": 0, "agent": 0}}
    assert observe(c).to_json() == a.to_json()  # without since the JSON is unchanged
    # a token names the document state: nothing was written, so the same token
    assert '"changes"' in b.to_json() and b.to_dict()["token"] == b.token == a.token


def test_bad_and_expired_tokens(monkeypatch):
    monkeypatch.setattr(changes, "JOURNAL_LIMIT", 10)
    c = synthetic_workspace(20)
    other = synthetic_workspace(20)
    t = observe(c).token
    for bad in ("nonsense", "", "a-b-c", 42):
        with pytest.raises(SpatialObsError, match="token"):
            observe(c, since=bad)
    with pytest.raises(SpatialObsError, match="another document"):
        observe(other, since=t)
    for _ in range(10):  # many observations keep the token; many writes expire it
        issue_token(c)
    assert observe(c, since=t).changes["changes"] == []
    for _ in range(11):
        c.update("f0", x=c.nodes["f0"].x + 1)
    issue_token(c)
    with pytest.raises(SpatialObsError, match="expired"):
        observe(c, since=t)


@pytest.mark.parametrize("seed", range(15))
def test_sync_makes_one_canvas_equal_to_another(seed):
    rng = random.Random(seed)
    a = synthetic_workspace(50, seed=seed)
    b = a.copy()
    serial = [0]
    for _ in range(rng.randrange(1, 25)):
        try:
            person_edit(b, rng, serial)
        except SpatialObsError:
            pass
    t = issue_token(a)
    with a.by("agent"):
        sync(a, b)
    assert a == b and a.to_json() == b.to_json()
    got = observe(a, since=t, max_changes=10_000).changes
    assert {w for r in got["changes"] for w in r["kinds"].values()} <= {"agent"}
