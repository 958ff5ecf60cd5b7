"""Cached derivations after writes: the columns kept up to date across adds, updates,
removals and rolled-back batches give exactly the geometry of a fresh derivation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spatialobs.canvas import Canvas, Node, Page

P = "page:page"
Q = "page:two"
TYPES = ["geo", "frame", "group", "line", "a-much-longer-type-name"]
COLUMNS = ("types", "parent", "page", "depth", "local", "px", "py", "rotation", "bounds", "visible",
           "frame", "group", "opacity", "hidden", "locked", "order", "paint", "page_start")


class Rollback(Exception):
    pass


def start() -> Canvas:
    c = Canvas()
    c.add(Page(Q, "Two", "a2"))
    c.add(Node("f", "frame", P, "a1", 10, 10, 200, 150))
    c.add(Node("g", "group", "f", "a2", 5, 5))
    c.add(Node("a", "geo", "g", "a1", 0, 0, 30, 20, 0.3))
    c.add(Node("b", "geo", Q, "a1", -40, 7, 12, 12))
    return c


def assert_fresh(c: Canvas) -> None:
    """The cached derivation equals one computed from the nodes alone, row for row and by id."""
    # read as the observation reads it, not handed out: the next edit may derive in place into it
    got = c._geometry()
    fresh = c.copy().geometry()
    assert got.ids == fresh.ids == list(c.nodes)
    assert got.row == fresh.row and got.page_ids == fresh.page_ids
    for name in COLUMNS:
        a, b = getattr(got, name), getattr(fresh, name)
        assert a.shape == b.shape, name
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
    # what the next derivation reuses: levels, frame clips, subtree sizes
    assert len(got.levels) == len(fresh.levels) and all(map(np.array_equal, got.levels, fresh.levels))
    assert np.array_equal(got.clip, fresh.clip)
    if got.size is not None:
        from spatialobs.canvas.document.derive import _subtree_sizes

        assert np.array_equal(got.size, _subtree_sizes(fresh))
    for pid in c.page_ids():
        cols, fcols = c.columns(pid), c.copy().columns(pid)
        assert cols.ids == fcols.ids == c.paint_order(pid)
        assert (cols.parent, cols.frame, cols.group, cols.types) == (fcols.parent, fcols.frame, fcols.group, fcols.types)
        np.testing.assert_array_equal(cols.bounds, fcols.bounds)
        np.testing.assert_array_equal(cols.parent_row, fcols.parent_row)
    # an independent canvas built from the same records, compared by id
    other = Canvas.from_json(c.to_json())
    for nid in c.nodes:
        assert other.page_bounds(nid) == c.page_bounds(nid)
        assert other.visible_bounds(nid) == c.visible_bounds(nid)
    for pid in c.page_ids():
        assert other.paint_order(pid) == c.paint_order(pid)


op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 40), st.sampled_from(TYPES), st.floats(-50, 50), st.floats(0, 60),
              st.floats(-3, 3), st.sampled_from([None, "a0", "a1", "a1V", "Zz"])),
    st.tuples(st.just("update"), st.integers(0, 40), st.sampled_from(["x", "w", "rotation", "parent", "index", "type", "hidden"]),
              st.floats(0, 50)),
    st.tuples(st.just("remove"), st.integers(0, 40)),
    st.tuples(st.just("geometry")),
)


def apply(c: Canvas, o: tuple, counter: list) -> None:
    ids = list(c.nodes)
    targets = ids + [P, Q]
    kind = o[0]
    if kind == "add":
        _, k, t, x, w, rot, index = o
        counter[0] += 1
        nid = f"n{counter[0]}"
        props = {"points": [[0, 0], [w, -w / 2]]} if t == "line" else {}
        c.add({"id": nid, "type": t, "parent": targets[k % len(targets)], "index": index, "x": x, "y": x / 2,
               "w": w, "h": w / 3, "rotation": rot, "props": props})
    elif kind == "update" and ids:
        _, k, field, v = o
        nid = ids[k % len(ids)]
        if field == "parent":
            target = targets[int(v) % len(targets)]
            if target == nid or (target in c.nodes and nid in c.ancestors(target)):
                return
            c.update(nid, parent=target)
        elif field == "index":
            c.update(nid, index=f"a{int(v)}")
        elif field == "type":
            c.update(nid, type=TYPES[int(v) % len(TYPES)])
        elif field == "hidden":
            c.update(nid, hidden=v > 25)
        else:
            c.update(nid, **{field: v})
    elif kind == "remove" and ids:
        c.remove(ids[o[1] % len(ids)])
    elif kind == "geometry":
        c.geometry()


@settings(max_examples=120, deadline=None)
@given(st.lists(st.one_of(op.map(lambda o: ("op", o)),
                          st.tuples(st.just("batch"), st.lists(op, max_size=6), st.booleans())),
                min_size=1, max_size=14))
def test_adds_updates_removes_and_batches_match_a_fresh_derivation(steps):
    c = start()
    c.geometry()
    counter = [0]
    for step in steps:
        if step[0] == "op":
            apply(c, step[1], counter)
        else:
            _, ops, fail = step
            before = c.copy()
            try:
                with c.batch():
                    for o in ops:
                        apply(c, o, counter)
                    if fail:
                        raise Rollback
            except Rollback:
                assert c == before
        assert_fresh(c)


def test_remove_then_add_again_moves_the_row_to_the_end():
    c = start()
    c.geometry()
    kept = c.node("g")
    c.remove("g")  # takes "a" with it
    c.add(kept)
    c.add(Node("a", "geo", "g", "a1", 1, 2, 3, 4))
    assert list(c.nodes) == ["f", "b", "g", "a"]
    assert_fresh(c)
    assert c.paint_order() == ["f", "g", "a"]


def test_rolled_back_removal_relinks_children():
    c = start()
    c.geometry()
    with pytest.raises(Rollback):
        with c.batch():
            c.remove("f")
            c.geometry()  # a derivation inside the batch, then the undo re-adds f, g and a
            raise Rollback
    assert_fresh(c)
    assert c.frame_of("a") == "f" and c.group_of("a") == "g"


def test_a_long_type_or_index_after_many_derivations():
    c = start()
    c.geometry()
    c.add(Node("long", "a-type-longer-than-any-before", "f", "a0V" + "z" * 30, 1, 1, 1, 1))
    c.geometry()
    c.update("a", index="a1" + "V" * 40, type="yet-another-even-longer-type-name")
    c.remove("b")
    assert_fresh(c)


# --------------------------------------------------------------------------- arrows and observations
ARROW_EDIT = st.one_of(
    st.tuples(st.just("move"), st.integers(0, 10**6), st.floats(-300, 300), st.floats(-300, 300)),
    st.tuples(st.just("turn"), st.integers(0, 10**6), st.floats(-3, 3)),
    st.tuples(st.just("resize"), st.integers(0, 10**6), st.floats(1, 400)),
    st.tuples(st.just("arrow"), st.integers(0, 10**6), st.sampled_from([0, 5, 40, -60]), st.sampled_from(["", "label"])),
    st.tuples(st.just("bind"), st.integers(0, 10**6), st.integers(0, 10**6), st.sampled_from(["start", "end"]),
              st.floats(0, 1)),
    st.tuples(st.just("unbind"), st.integers(0, 10**6)),
    st.tuples(st.just("remove"), st.integers(0, 10**6)),
    st.tuples(st.just("hide"), st.integers(0, 10**6), st.booleans()),
    st.tuples(st.just("geometry")),
)


def apply_arrow_edit(c: Canvas, o: tuple, counter: list) -> None:
    from spatialobs.canvas.document.records import Binding

    ids = list(c.nodes)
    if not ids:
        return
    kind = o[0]
    nid = ids[o[1] % len(ids)] if len(o) > 1 and isinstance(o[1], int) else None
    if kind == "move":
        nd = c.nodes[nid]
        c.update(nid, x=nd.x + o[2], y=nd.y + o[3])
    elif kind == "turn":
        c.update(nid, rotation=o[2])
    elif kind == "resize":
        c.update(nid, w=o[2])
    elif kind == "arrow":
        arrows = [i for i in ids if c.nodes[i].type == "arrow"]
        if arrows:
            c.update(arrows[o[1] % len(arrows)], props={"bend": o[2]}, text=o[3])
    elif kind == "bind":
        arrows = [i for i in ids if c.nodes[i].type == "arrow"]
        shapes = [i for i in ids if c.nodes[i].type in ("geo", "note")]
        if arrows and shapes:
            a = arrows[o[1] % len(arrows)]
            for b in [b for b in c.bindings.values() if b.from_id == a and b.terminal == o[3]]:
                c.remove(b.id)
            counter[0] += 1
            c.add(Binding(f"bx{counter[0]}", "arrow", a, shapes[o[2] % len(shapes)], o[3], (o[4], 0.5), True))
    elif kind == "unbind":
        bids = list(c.bindings)
        if bids:
            c.remove(bids[o[1] % len(bids)])
    elif kind == "remove":
        c.remove(nid)
    elif kind == "hide":
        c.update(nid, hidden=o[2])
    else:
        c.geometry()


def _observations(c: Canvas) -> list:
    from spatialobs.canvas import observe

    return [observe(c, vp, **kw).to_json() for vp, kw in (((0, 0, 2800, 1800), {}),
                                                         ((900, 300, 700, 500), {"max_objects": 25, "max_relations": 60}),
                                                         ((-5000, -5000, 10, 10), {"near_gap": 60.0}))]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3), st.lists(ARROW_EDIT, min_size=1, max_size=10))
def test_edits_of_a_document_with_bound_arrows_match_a_fresh_derivation_and_observation(seed, edits):
    """Arrows bound to edited shapes (and to their descendants) are re-resolved; the others
    keep their boxes; observations of each version equal those of a fresh canvas."""
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    c = synthetic_workspace(130, seed=seed)
    c.geometry()
    _observations(c)
    counter = [0]
    for o in edits:
        apply_arrow_edit(c, o, counter)
        assert_fresh(c)
        assert _observations(c) == _observations(c.copy())


# --------------------------------------------------------------------------- removals of bound shapes
REMOVAL = st.one_of(
    st.tuples(st.just("remove"), st.integers(0, 10**6)),  # frees the arrows bound to it, reorders them
    st.tuples(st.just("remove_many"), st.lists(st.integers(0, 10**6), min_size=2, max_size=4), st.booleans()),
    st.tuples(st.just("unbind_and_remove"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(st.just("twice"), st.integers(0, 10**6), st.integers(0, 10**6)),  # a terminal bound twice
    st.tuples(st.just("edit"), st.integers(0, 10**6), st.floats(-80, 80)),
    st.tuples(st.just("geometry")),
)


def _remove_step(c: Canvas, o: tuple, counter: list) -> None:
    from spatialobs.canvas.document.records import Binding

    ids = list(c.nodes)
    if not ids:
        return
    kind = o[0]
    if kind == "remove":
        c.remove(ids[o[1] % len(ids)])
    elif kind == "remove_many":
        with c.batch():  # several subtrees, and a move of a survivor, in one write
            for k in o[1]:
                left = list(c.nodes)
                if left:
                    c.remove(left[k % len(left)])
            left = list(c.nodes)
            if o[2] and left:
                c.update(left[o[1][0] % len(left)], x=33.0)
    elif kind == "unbind_and_remove":
        bids = list(c.bindings)
        with c.batch():
            if bids:
                c.remove(bids[o[1] % len(bids)])
            c.remove(ids[o[2] % len(ids)])
    elif kind == "twice":
        arrows = [i for i in ids if c.nodes[i].type == "arrow"]
        shapes = [i for i in ids if c.nodes[i].type in ("geo", "note")]
        if arrows and shapes:
            counter[0] += 1
            c.add(Binding(f"bt{counter[0]}", "arrow", arrows[o[1] % len(arrows)], shapes[o[2] % len(shapes)], "start",
                          (0.25, 0.75), False))
    elif kind == "edit":
        nd = c.nodes[ids[o[1] % len(ids)]]
        c.update(nd.id, x=nd.x + o[2])
    else:
        c.geometry()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3), st.lists(REMOVAL, min_size=1, max_size=10))
def test_removals_of_bound_shapes_match_a_fresh_derivation(seed, steps):
    """After whole subtrees are removed, the arrow pass carries its plan to the remaining rows
    and resolves only the arrows that lost a binding or were reached by an edit (arrows bound
    twice at one terminal take the earlier binding again): the result equals a fresh one."""
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    c = synthetic_workspace(110, seed=seed)
    c.geometry()
    counter = [0]
    for o in steps:
        _remove_step(c, o, counter)
        assert_fresh(c)
        assert _observations(c) == _observations(c.copy())


def test_removing_bound_shapes_takes_the_incremental_arrow_pass():
    """The removal path is the one taken (not the full pass) when shapes with bound arrows go:
    the derivation is carried from the previous one (rows renumbered), the bindings the
    removal dropped read again for their connectors only; arrows whose target went keep
    their end where it was drawn."""
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    c = synthetic_workspace(300, seed=1)
    c.geometry()
    targets = sorted({b.to_id for b in c.bindings.values()})[:6]
    carried = []
    for t in targets:
        before = c.geometry().serial
        c.remove(t)
        d = c.geometry()
        carried.append(d.renumbered is not None and d.renumbered[0] == before)
        assert_fresh(c)
    assert all(carried)


# --------------------------------------------------------------------------- arrows added by ops
AGENT_OP = st.one_of(
    st.tuples(st.just("arrow"), st.integers(0, 10**6), st.integers(0, 10**6), st.sampled_from([0, 30]),
              st.sampled_from(["", "label"])),
    st.tuples(st.just("half"), st.integers(0, 10**6), st.sampled_from([(0, 0), (900, 40)])),
    st.tuples(st.just("shape"), st.integers(0, 10**6), st.integers(0, 600)),
    st.tuples(st.just("move"), st.integers(0, 10**6), st.integers(-40, 40)),
    st.tuples(st.just("bind"), st.integers(0, 10**6), st.integers(0, 10**6)),
)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3), st.lists(AGENT_OP, min_size=1, max_size=12))
def test_arrows_created_one_op_at_a_time_match_a_fresh_derivation(seed, ops):
    """Each op adds nodes and bindings after the existing ones: the arrow pass resolves only
    the new arrows and those reached by the edit, and the result equals a fresh derivation."""
    from spatialobs.canvas import Executor
    from spatialobs.canvas.document.records import Binding
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    c = synthetic_workspace(90, seed=seed)
    c.geometry()
    ex = Executor(c)
    shapes = [i for i in c.nodes if c.nodes[i].type in ("geo", "note")]
    for k, o in enumerate(ops):
        if o[0] == "arrow":
            op = {"op": "create_arrow", "id": f"x{k}", "from": shapes[o[1] % len(shapes)], "to": shapes[o[2] % len(shapes)],
                  "bend": o[3], "text": o[4]}
        elif o[0] == "half":
            op = {"op": "create_arrow", "id": f"x{k}", "from": list(o[2]), "to": shapes[o[1] % len(shapes)]}
        elif o[0] == "shape":
            op = {"op": "create_shape", "id": f"x{k}", "x": o[2], "y": o[2] // 2, "w": 50, "h": 40,
                  "parent": [i for i in c.nodes if c.nodes[i].type == "frame"][o[1] % 4]}
        elif o[0] == "bind":  # a binding added to an arrow of the document, with another shape moved
            free = [b.from_id for b in c.bindings.values() if b.terminal == "start"
                    and not any(x.from_id == b.from_id and x.terminal == "end" for x in c.bindings.values())]
            if free:
                with c.batch():
                    c.add(Binding(f"bx{k}", "arrow", free[o[1] % len(free)], shapes[o[2] % len(shapes)], "end", (0.5, 0.5), True))
                    c.update(shapes[o[1] % len(shapes)], x=c.nodes[shapes[o[1] % len(shapes)]].x + 3)
                assert_fresh(c)
            continue
        else:
            op = {"op": "move_node", "id": shapes[o[1] % len(shapes)], "dx": o[2], "dy": 0}
        report = ex.apply([op])
        assert report.ok, report.errors
        assert_fresh(c)


# --------------------------------------------------------------------------- adds and removals on a diagram page
DIAGRAM_EDIT = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 10**6), st.sampled_from(["geo", "text", "group", "note"]),
              st.floats(-100, 900), st.floats(-50, 50), st.sampled_from([None, "a0", "b05", "zz"]), st.booleans()),
    st.tuples(st.just("remove"), st.integers(0, 10**6)),
    st.tuples(st.just("move"), st.integers(0, 10**6), st.floats(-80, 80)),
    st.tuples(st.just("geometry")),
)


def _diagram_step(c: Canvas, o: tuple, counter: list) -> None:
    ids = list(c.nodes)
    kind = o[0]
    if kind == "add":
        _, k, t, x, rot, index, deep = o
        homes = [i for i in ids if c.nodes[i].type in ("frame", "group")] + [P]
        parent = homes[k % len(homes)]
        if deep:  # under a shape or a group of a frame (or the page itself)
            parent = ids[k % len(ids)] if ids else P
        counter[0] += 1
        c.add({"id": f"x{counter[0]}", "type": t, "parent": parent, "index": index, "x": x, "y": x / 3, "w": 120,
               "h": 60, "rotation": rot / 40, "text": f"Added {counter[0]}"})
    elif kind == "remove" and ids:
        c.remove(ids[o[1] % len(ids)])
    elif kind == "move" and ids:
        nid = ids[o[1] % len(ids)]
        c.update(nid, x=c.nodes[nid].x + o[2])
    else:
        c.geometry()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3), st.lists(DIAGRAM_EDIT, min_size=1, max_size=10))
def test_adds_and_removals_on_a_diagram_page_match_a_fresh_derivation_and_observation(seed, steps):
    """Shapes added (under frames, groups, turned groups, shapes, the page; before, between and
    after their siblings) and removed (alone or with their subtrees, bound or not), interleaved
    with moves: each version equals a fresh derivation, and its observations a fresh canvas's."""
    from spatialobs.canvas.scenarios.handoff import diagram_workspace

    c = diagram_workspace(150, seed=seed)
    c.geometry()
    _observations(c)
    counter = [0]
    for o in steps:
        _diagram_step(c, o, counter)
        assert_fresh(c)
        assert _observations(c) == _observations(c.copy())


def test_adds_and_removals_take_the_incremental_derivation(monkeypatch):
    """An added shape and the removal of an unbound one (or a group member) are derived from
    the previous derivation, not afresh."""
    from spatialobs.canvas.document import derive as dv
    from spatialobs.canvas.scenarios.handoff import diagram_workspace

    taken = []
    for name in ("_derive_appended", "_derive_removed"):
        real = getattr(dv, name)
        monkeypatch.setattr(dv, name, lambda *a, _real=real, _name=name: taken.append((_name, _real(*a))) or taken[-1][1])
    c = diagram_workspace(400, seed=2)
    c.geometry()
    for parent in ("f0", "f0g", "f0r", "page:page"):
        c.add({"id": f"new-{parent}", "type": "geo", "parent": parent, "x": 30, "y": 40, "w": 50, "h": 20})
        assert_fresh(c)
    for nid in ("new-f0g", "f0g_0", "new-page:page", "f0t"):
        c.remove(nid)
        assert_fresh(c)
    assert [name for name, _ in taken] == ["_derive_appended"] * 4 + ["_derive_removed"] * 4
    assert all(d is not None and d.renumbered is not None for _, d in taken)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.booleans()),
                                   min_size=1, max_size=10))
def test_rows_appended_together_are_painted_where_a_fresh_derivation_paints_them(seed, adds):
    """Several nodes added in one version (under the page, a frame, a group or a shape, several under
    one parent; keys below, between, above and equal to their siblings', ties broken by id) take
    the incremental derivation, whose paint order, subtree sizes and levels are a fresh one's."""
    from spatialobs.canvas.document import derive as dv
    from spatialobs.canvas.scenarios.handoff import diagram_workspace

    c = diagram_workspace(120, seed=seed)
    c.geometry()
    real = dv._derive_appended
    taken: list = []

    def spy(*a: object, **k: object) -> object:
        got = real(*a, **k)  # type: ignore[arg-type]
        taken.append(got is not None)
        return got
    old = list(c.nodes)
    new: list = []
    m = pytest.MonkeyPatch()
    m.setattr(dv, "_derive_appended", spy)
    cand = ["page:page"] + [i for i in old if c.nodes[i].type in ("frame", "group", "geo")]
    for j, (pick, key, same) in enumerate(adds):
        parent = c.nodes[new[-1]].parent if same and new else cand[pick % len(cand)]
        sibs = sorted(nd.index for nd in c.nodes.values() if nd.parent == parent)
        index = sibs[key % len(sibs)] if sibs and key % 3 == 0 else None  # a sibling's own key: a tie
        nid = f"n{j}"
        c.add({"id": nid, "type": "geo" if key % 2 else "frame", "parent": parent, "x": 10 + key % 90,
               "y": 20, "w": 40, "h": 30, **({"index": index} if index is not None else {})})
        new.append(nid)
    try:
        c._geometry()
    finally:
        m.undo()
    assert taken and all(taken)  # (an add may read the geometry: one derivation per such add)
    assert_fresh(c)
