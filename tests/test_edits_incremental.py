"""Reparents, reorders, binding writes and op replies carried from the previous version.

A node moved to another parent or index is placed in the previous paint order instead of
deriving the canvas afresh; bindings written are read again for their connectors only; a
version reached through several derivations that were never observed (an op reply derives
between its ops) is observed from the last observed one through the composed row map. The
oracles: every version's derivation equals a fresh canvas's, column by column, and its
observations a fresh canvas's, byte for byte; and the carried paths are the ones taken.
"""

from __future__ import annotations

import importlib
from typing import Any, List

import pytest
from hypothesis import given, settings, strategies as st

from spatialobs.canvas import Canvas, Executor, observe
from spatialobs.canvas.document.records import Binding
from spatialobs.canvas.scenarios.handoff import diagram_workspace

from test_canvas_incremental import _observations, assert_fresh

P = "page:page"
obs_mod = importlib.import_module("spatialobs.canvas.observe")

EDIT = st.one_of(
    # a node to another parent (a frame, a group, a card, the page), at its index or a new one
    st.tuples(st.just("reparent"), st.integers(0, 10**6), st.integers(0, 10**6),
              st.sampled_from([None, "a0", "b05", "zz"])),
    # a node to another index among its siblings (to the front, the back, between)
    st.tuples(st.just("reorder"), st.integers(0, 10**6), st.sampled_from(["a0", "b05", "b10", "zz", "Zz"])),
    st.tuples(st.just("bind"), st.integers(0, 10**6), st.integers(0, 10**6), st.sampled_from(["start", "end"])),
    st.tuples(st.just("unbind"), st.integers(0, 10**6)),
    st.tuples(st.just("retarget"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(st.just("add"), st.integers(0, 10**6), st.sampled_from(["geo", "arrow", "group"])),
    st.tuples(st.just("remove"), st.integers(0, 10**6)),
    st.tuples(st.just("move"), st.integers(0, 10**6), st.floats(-80, 80)),
    st.tuples(st.just("reply"), st.integers(0, 10**6)),
    st.tuples(st.just("geometry")),
)


def _shapes(c: Canvas) -> List[str]:
    return [i for i, nd in c.nodes.items() if nd.type in ("geo", "note", "text")]


def _reply_ops(c: Canvas, k: int, counter: list) -> List[dict]:
    """A short mixed reply: creations, a move, a restyle, a text, an arrow from a new card, a deletion."""
    frames = [i for i, nd in c.nodes.items() if nd.type == "frame"] or [P]
    cards = _shapes(c)
    frame = frames[k % len(frames)]
    counter[0] += 1
    a, b = f"r{counter[0]}a", f"r{counter[0]}b"
    ops: List[dict] = [
        {"op": "create_shape", "id": a, "parent": frame, "x": 100 + k % 300, "y": 300, "w": 80, "h": 40, "text": "A"},
        {"op": "create_shape", "id": b, "parent": frame, "x": 400, "y": 120 + k % 200, "w": 60, "h": 30, "text": "B"},
    ]
    if cards:
        card = cards[k % len(cards)]
        ops += [{"op": "move_node", "id": card, "dx": 3, "dy": -2},
                {"op": "update_styles", "id": card, "styles": {"color": "red"}},
                {"op": "set_text", "id": card, "text": f"Reply {k}"},
                {"op": "create_arrow", "from": a, "to": card}]
    ops += [{"op": "create_arrow", "from": a, "to": b}, {"op": "delete_node", "id": b}]
    return ops


def _step(c: Canvas, o: tuple, counter: list) -> None:
    ids = list(c.nodes)
    kind = o[0]
    if kind == "reparent" and ids:
        nid = ids[o[1] % len(ids)]
        homes = [i for i in ids if c.nodes[i].type in ("frame", "group", "geo") and i != nid
                 and nid not in c.ancestors(i)] + [P]
        changes: dict = {"parent": homes[o[2] % len(homes)]}
        if o[3] is not None:
            changes["index"] = o[3]
        c.update(nid, **changes)
    elif kind == "reorder" and ids:
        c.update(ids[o[1] % len(ids)], index=o[2])
    elif kind == "bind":
        arrows = [i for i in ids if c.nodes[i].type == "arrow"]
        shapes = _shapes(c)
        if arrows and shapes:
            a = arrows[o[1] % len(arrows)]
            for b in [b for b in c.bindings.values() if b.from_id == a and b.terminal == o[3]]:
                c.remove(b.id)
            counter[0] += 1
            c.add(Binding(f"bx{counter[0]}", "arrow", a, shapes[o[2] % len(shapes)], o[3], (0.5, 0.5), True))
    elif kind == "unbind":
        bids = list(c.bindings)
        if bids:
            c.remove(bids[o[1] % len(bids)])
    elif kind == "retarget":
        bids, shapes = list(c.bindings), _shapes(c)
        if bids and shapes:
            c.update(bids[o[1] % len(bids)], to_id=shapes[o[2] % len(shapes)])
    elif kind == "add" and ids:
        counter[0] += 1
        parent = ids[o[1] % len(ids)]
        if c.nodes[parent].type not in ("frame", "group"):
            parent = c.nodes[parent].parent
        fields: dict = {"id": f"x{counter[0]}", "type": o[2], "parent": parent, "x": 40.0, "y": 30.0}
        if o[2] == "geo":
            fields.update(w=90.0, h=50.0, text="Added")
        elif o[2] == "arrow":
            fields["props"] = {"start": {"x": 0, "y": 0}, "end": {"x": 120, "y": 40}}
        c.add(fields)
    elif kind == "remove" and ids:
        c.remove(ids[o[1] % len(ids)])
    elif kind == "move" and ids:
        nid = ids[o[1] % len(ids)]
        c.update(nid, x=c.nodes[nid].x + o[2])
    elif kind == "reply":
        report = Executor(c).apply(_reply_ops(c, o[1], counter))
        assert report.ok, report.errors[:3]
    else:
        c.geometry()


# Sequences of up to 8 edits on a 150-shape page, each version compared with a fresh canvas's
# derivation and three observations: 50 sequences took 86 s under a load average of about 10,
# and a failure's shrinking runs many more, so the limit is above the default.
@pytest.mark.timeout(400)
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3), st.lists(st.tuples(EDIT, st.booleans()), min_size=1, max_size=8))
def test_reparents_binding_writes_and_replies_match_a_fresh_derivation_and_observation(seed, steps):
    """Reparents and reorders (under frames, groups, cards, the page), bindings made, removed
    and retargeted, adds, removals, moves and op replies, interleaved, with or without an
    observation between them (unobserved versions are carried through): each version equals
    a fresh derivation, and its observations a fresh canvas's."""
    c = diagram_workspace(150, seed=seed)
    c.geometry()
    _observations(c)
    counter = [0]
    for o, look in steps:
        try:
            _step(c, o, counter)
        except Exception as e:  # a write the model refuses (a cycle, an index it rejects) leaves it as it was
            if type(e).__name__ not in ("InvalidInputError", "OutOfRangeError"):
                raise
        assert_fresh(c)
        if look:
            assert _observations(c) == _observations(c.copy())
    assert _observations(c) == _observations(c.copy())


def _paths(monkeypatch: pytest.MonkeyPatch, c: Canvas) -> List[Any]:
    """The page-state paths taken for canvas ``c`` (not for the fresh copies it is compared with)."""
    taken: List[Any] = []
    for name in ("_new_state", "_advance", "_reshape"):
        real = getattr(obs_mod, name)

        def spy(*a: Any, _real: Any = real, _name: str = name) -> Any:
            got = _real(*a)
            if a[0] is c:
                taken.append((_name, got is not None))
            return got
        monkeypatch.setattr(obs_mod, name, spy)
    return taken


VIEW = (0.0, 0.0, 2800.0, 1800.0)


def test_a_reparent_is_carried(monkeypatch):
    """A card moved to another frame, and back, and a frame brought to the front: derived from the
    previous derivation (rows kept, paint order moved) and observed from the previous state."""
    c = diagram_workspace(600, seed=7)
    observe(c, VIEW).to_json()
    taken = _paths(monkeypatch, c)
    for nid, changes in (("f0c5", {"parent": "f1"}), ("f0c5", {"parent": "f0"}), ("f0", {"index": "zz"}),
                         ("f0c3", {"parent": P})):
        before = c.geometry().serial
        c.update(nid, **changes)
        d = c.geometry()
        assert d.renumbered is not None and d.renumbered[0] == before
        assert observe(c, VIEW).to_json() == observe(c.copy(), VIEW).to_json()
        assert_fresh(c)
    assert taken == [("_reshape", True)] * 4


def test_a_reply_is_carried(monkeypatch):
    """A reply of mixed ops (creations, moves, restyles, a text, arrows, a deletion), which derives
    between its ops to place its arrows: no derivation of the whole canvas, and the observation
    after it carried from the one before it through every derivation between."""
    c = diagram_workspace(600, seed=7)
    observe(c, VIEW).to_json()
    from spatialobs.canvas.document import derive as dv

    full: List[Any] = []  # the full derivation's arrow pass: taken only when a version is derived afresh
    real = dv._resolve_arrows
    monkeypatch.setattr(dv, "_resolve_arrows", lambda *a, **k: full.append(1) or real(*a, **k))
    taken = _paths(monkeypatch, c)
    counter = [0]
    for k in range(3):
        report = Executor(c).apply(_reply_ops(c, k, counter))
        assert report.ok, report.errors[:3]
        got = observe(c, VIEW).to_json()
        assert not full
        assert got == observe(c.copy(), VIEW).to_json()
        full.clear()  # the fresh copy's own first derivation
    assert taken == [("_reshape", True)] * 3


def test_binding_writes_alone_are_carried(monkeypatch):
    """An arrow unbound, bound again elsewhere, and its binding retargeted: derived from the previous
    derivation and observed from the previous state, the connector's bindings read again."""
    c = diagram_workspace(600, seed=7)
    observe(c, VIEW).to_json()
    taken = _paths(monkeypatch, c)
    bid = next(iter(c.bindings))
    b = c.bindings[bid]
    steps = [lambda: c.remove(bid),
             lambda: c.add(Binding("again", "arrow", b.from_id, "f0c4", b.terminal, (0.5, 0.5), True)),
             lambda: c.update("again", to_id="f0c6")]
    for step in steps:
        before = c.geometry().serial
        step()
        d = c.geometry()
        assert d.base == before
        assert observe(c, VIEW).to_json() == observe(c.copy(), VIEW).to_json()
        assert_fresh(c)
    assert taken == [("_advance", False), ("_reshape", True)] * 3


def test_painted_occlusion_is_computed_again_only_where_an_edit_reaches(monkeypatch):
    """After a card moves in view, the painted occluders are computed again for the rows whose
    cover it can reach (not for every row in view); a repeat on the same version computes none;
    and the observation is a fresh canvas's."""
    c = diagram_workspace(600, seed=7)
    observe(c, VIEW).to_json()
    asked: List[Any] = []
    real = obs_mod._painted_occluders

    def spy(canvas: Any, st: Any, rows: Any, *a: Any) -> Any:
        asked.append((canvas is c, len(rows)))
        return real(canvas, st, rows, *a)
    monkeypatch.setattr(obs_mod, "_painted_occluders", spy)
    for nid, dx in (("f0c3", 1.0), ("f0c3", -1.0), ("f0c1", 5.0), ("f0c0", 40.0)):
        c.update(nid, x=c.nodes[nid].x + dx)
        asked.clear()
        got = observe(c, VIEW).to_json()
        assert observe(c, VIEW).to_json() == got
        assert got == observe(c.copy(), VIEW).to_json()
        ours, fresh = [k for own, k in asked if own], [k for own, k in asked if not own]
        assert len(ours) == 1 and len(fresh) == 1 and 0 < ours[0] < fresh[0]


def test_a_reparent_that_keeps_the_paint_order():
    """A card moved into the frame painted just before it, as its last child: no row changes
    place in paint order, but the card's ancestors do (it is no longer ``inside`` the frame
    but its member); the carried observation is a fresh canvas's."""
    from spatialobs.canvas import Node

    c = Canvas()
    c.add(Node("outer", "frame", P, "a1", 0, 0, 800, 600))
    c.add(Node("inner", "frame", "outer", "a1", 50, 50, 400, 300))
    c.add(Node("x", "geo", "inner", "a1", 10, 10, 100, 60))
    c.add(Node("card", "geo", "outer", "a2", 200, 150, 120, 80))
    view = (0, 0, 1000, 800)
    before = observe(c, view)
    assert any(r["type"] == "inside" and r["from"] == "card" and r["to"] == "inner" for r in before.relations)
    order = c.paint_order()
    c.update("card", parent="inner", index="zz", x=150.0, y=100.0)
    assert c.paint_order() == order
    got = observe(c, view)
    assert got.to_json() == observe(c.copy(), view).to_json()
    assert not any(r["type"] == "inside" and r["from"] == "card" for r in got.relations)
    assert_fresh(c)
