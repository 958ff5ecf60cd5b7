"""The arrangement, camera and Mermaid ops from a model reply, through parse_ops and one Executor.

Each op is checked for what tldraw's own Editor method does (alignShapes,
distributeShapes, groupShapes, ungroupShapes, duplicateShapes, toggleLock), for
atomicity (a failing op leaves the document byte for byte as it was), for the
typed error of bad input, and for what the writers make of the result in each
format (groups as group shapes and as ``groupIds``, the camera record and
``appState``). The real editors open these results in
``tests/conformance/test_ops_editors.py``.
"""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest

from spatialobs import SpatialObsError
from spatialobs.canvas import Canvas, Executor, Node, load, parse_ops
from spatialobs.canvas.editing import arrange
from spatialobs.canvas.editing.mermaid import MermaidError, parse_mermaid
from tests.conftest import shared_files

TLDR = shared_files("canvases", "*.tldr")
EXCALIDRAW = shared_files("canvases", "*.excalidraw")


def reply(*ops: Dict[str, Any]) -> str:
    return "Sure, arranging them.\n```canvas_ops\n" + json.dumps({"ops": list(ops)}) + "\n```\n"


def run(c: Canvas, *ops: Dict[str, Any]):
    parsed, errors = parse_ops(reply(*ops))
    assert errors == []
    return Executor(c).apply(parsed)


def boxes_canvas() -> Canvas:
    c = Canvas()
    for i, (x, y, w, h) in enumerate([(0, 0, 100, 50), (150, 40, 80, 80), (400, 10, 60, 30), (700, 90, 40, 40)]):
        c.add(Node(f"shape:{i}", "geo", "page:page", f"a{i + 1}", x, y, w, h, props={"geo": "rectangle"}))
    return c


def corner(c: Canvas, nid: str):
    b = c.page_bounds(nid)
    return (round(b[0], 6), round(b[1], 6))


# ---------------------------------------------------------------------- align and distribute
@pytest.mark.parametrize("how, want", [
    ("left", [(0, 0), (0, 40), (0, 10)]),
    ("right", [(360, 0), (380, 40), (400, 10)]),
    ("center-horizontal", [(180, 0), (190, 40), (200, 10)]),
    ("top", [(0, 0), (150, 0), (400, 0)]),
    ("bottom", [(0, 70), (150, 40), (400, 90)]),
    ("center-vertical", [(0, 35), (150, 20), (400, 45)]),
    ("center", [(180, 35), (190, 20), (200, 45)]),
])
def test_align_as_tldraw_aligns_to_the_common_box(how, want):
    c = boxes_canvas()
    r = run(c, {"op": "align", "ids": ["shape:0", "shape:1", "shape:2"], "align": how})
    assert r.ok, r.errors
    assert [corner(c, f"shape:{i}") for i in range(3)] == want
    assert corner(c, "shape:3") == (700, 90)  # not named: untouched


def test_align_spellings_and_op_aliases():
    for how in ("Left", "LEFT", "left"):
        c = boxes_canvas()
        assert run(c, {"op": "alignShapes", "ids": ["shape:0", "shape:2"], "alignment": how}).ok
        assert corner(c, "shape:2")[0] == 0


def test_align_moves_a_cluster_joined_by_an_arrow_together():
    # tldraw's getShapeClusters: a named arrow bound to a named shape moves with it
    c = boxes_canvas()
    run(c, {"op": "create_arrow", "id": "ar", "from": "shape:0", "to": "shape:1"})
    arrow = next(n for n in c.nodes if c.nodes[n].type == "arrow")
    before = {n: corner(c, n) for n in ("shape:0", "shape:1", "shape:2")}
    r = run(c, {"op": "align", "ids": ["shape:0", arrow, "shape:1", "shape:2"], "align": "top"})
    assert r.ok, r.errors
    # shape:0, the arrow and shape:1 are one cluster (top 0): it stays; shape:2 goes to y 0
    assert corner(c, "shape:0") == before["shape:0"] and corner(c, "shape:1") == before["shape:1"]
    assert corner(c, "shape:2") == (400, 0)


def test_distribute_keeps_the_ends_and_evens_the_gaps():
    c = boxes_canvas()
    r = run(c, {"op": "distribute", "ids": ["shape:0", "shape:1", "shape:2", "shape:3"], "axis": "horizontal"})
    assert r.ok, r.errors
    xs = [c.page_bounds(f"shape:{i}") for i in range(4)]
    gaps = [round(xs[i + 1][0] - xs[i][2], 6) for i in range(3)]
    assert corner(c, "shape:0") == (0, 0) and corner(c, "shape:3") == (700, 90)
    assert gaps[0] == gaps[1] == gaps[2] == round((740 - 0 - (100 + 80 + 60 + 40)) / 3, 6)
    assert [round(b[1], 6) for b in xs] == [0, 40, 10, 90]  # only x moves


def test_distribute_leaves_out_a_cluster_that_spans_the_others():
    # tldraw: when the first cluster is also the last, the rest are distributed without it
    c = Canvas()
    for i, (x, w) in enumerate([(0, 1000), (100, 50), (300, 50), (700, 50)]):
        c.add(Node(f"shape:{i}", "geo", "page:page", f"a{i + 1}", x, 0, w, 20))
    assert run(c, {"op": "distribute", "ids": [f"shape:{i}" for i in range(4)], "axis": "x"}).ok
    assert corner(c, "shape:0") == (0, 0) and corner(c, "shape:1") == (100, 0) and corner(c, "shape:3") == (700, 0)
    assert corner(c, "shape:2") == (400, 0)


def test_align_and_distribute_bad_input_is_typed_and_changes_nothing():
    c = boxes_canvas()
    before = c.to_json()
    r = run(c,
            {"op": "align", "ids": ["shape:0"], "align": "left"},
            {"op": "align", "ids": ["shape:0", "shape:1"], "align": "diagonal"},
            {"op": "align", "ids": ["shape:0", "nope"], "align": "left"},
            {"op": "align", "ids": ["shape:0", "shape:1"]},
            {"op": "distribute", "ids": ["shape:0", "shape:1"], "axis": "horizontal"},
            {"op": "distribute", "ids": ["shape:0", "shape:1", "shape:2"], "axis": "sideways"})
    assert r.applied == []
    msgs = [str(e) for e in r.errors]
    assert "align needs at least two nodes, got 1" in msgs[0]
    assert "field 'align' must be one of left, center-horizontal" in msgs[1] and "'diagonal'" in msgs[1]
    assert "no node or alias 'nope'" in msgs[2]
    assert "missing field 'align'" in msgs[3]
    assert "distribute needs at least three nodes, got 2" in msgs[4]
    assert "'sideways'" in msgs[5]
    assert c.to_json() == before
    with pytest.raises(SpatialObsError, match="align needs at least two"):
        arrange.align(c, ["shape:0"], "left")
    with pytest.raises(SpatialObsError, match="no node 'x'"):
        arrange.distribute(c, ["shape:0", "shape:1", "x"], "vertical")


# ---------------------------------------------------------------------- locked
def test_a_locked_node_and_its_contents_refuse_edits_until_unlocked():
    c = boxes_canvas()
    c.add(Node("shape:f", "frame", "page:page", "a9", 0, 300, 300, 200))
    c.add(Node("shape:in", "geo", "shape:f", "a1", 10, 10, 50, 50))
    before = c.to_json()
    r = run(c, {"op": "lock", "ids": ["shape:0", "shape:f"]})
    assert r.ok and c.nodes["shape:0"].locked and c.nodes["shape:f"].locked
    locked = c.to_json()
    r = run(c,
            {"op": "move_node", "id": "shape:0", "dx": 10},
            {"op": "update_styles", "id": "shape:in", "styles": {"color": "red"}},
            {"op": "align", "ids": ["shape:0", "shape:1"], "align": "top"},
            {"op": "group", "ids": ["shape:0", "shape:1"]},
            {"op": "duplicate", "id": "shape:in"},
            {"op": "delete_node", "id": "shape:in"},
            {"op": "set_text", "id": "shape:0", "text": "x"},
            {"op": "update_node", "id": "shape:in", "x": 3})
    assert r.applied == []
    assert [e.reason for e in r.errors] == [
        "node 'shape:0' is locked", "node 'shape:in' is inside locked node 'shape:f'", "node 'shape:0' is locked",
        "node 'shape:0' is locked", "node 'shape:in' is inside locked node 'shape:f'",
        "node 'shape:in' is inside locked node 'shape:f'", "node 'shape:0' is locked",
        "node 'shape:in' is inside locked node 'shape:f'"]
    assert c.to_json() == locked
    assert run(c, {"op": "unlock", "ids": ["shape:0", "shape:f"]}).ok
    assert c.to_json() == before
    assert run(c, {"op": "move_node", "id": "shape:in", "dx": 5}).ok


def test_lock_is_written_to_both_formats():
    c = boxes_canvas()
    run(c, {"op": "lock", "id": "shape:1"})
    recs = {r["id"]: r for r in c.to_tldraw()["records"]}
    assert recs["shape:1"]["isLocked"] is True and recs["shape:0"]["isLocked"] is False
    els = {e["id"]: e for e in c.to_excalidraw()["elements"]}
    assert els["shape:1"]["locked"] is True and els["shape:0"]["locked"] is False


# ---------------------------------------------------------------------- group and ungroup
def test_group_keeps_page_positions_and_paint_order_and_takes_the_top_members_index():
    c = boxes_canvas()
    order = c.paint_order()
    pos = {n: c.page_bounds(n) for n in c.nodes}
    r = run(c, {"op": "group", "ids": ["shape:2", "shape:0"], "id": "g"})
    assert r.ok, r.errors
    g = r.aliases["g"]
    assert c.nodes[g].type == "group" and c.nodes[g].parent == "page:page"
    assert c.children(g) == ["shape:0", "shape:2"]
    assert {n: c.page_bounds(n) for n in pos} == pos
    assert c.page_bounds(g) == (0.0, 0.0, 460.0, 50.0)
    # the group sits where its highest member was: shape:1 stays between shape:0's old slot and the group
    assert c.paint_order() == ["shape:1", g, "shape:0", "shape:2", "shape:3"]
    assert [i for i in c.paint_order() if i != g] == [order[1], order[0], order[2], order[3]]
    rec = {r["id"]: r for r in c.to_tldraw()["records"]}
    assert rec[g]["type"] == "group" and rec["shape:0"]["parentId"] == g
    # ungroup: the members come back to the page where the group was, positions kept, group gone
    r = run(c, {"op": "ungroup", "id": g})
    assert r.ok and g not in c.nodes
    assert c.paint_order() == ["shape:1", "shape:0", "shape:2", "shape:3"]
    assert {n: c.page_bounds(n) for n in pos} == pos


def test_group_in_a_rotated_frame_goes_to_the_common_ancestor():
    c = Canvas()
    c.add(Node("shape:f", "frame", "page:page", "a1", 100, 100, 400, 300, rotation=0.3))
    c.add(Node("shape:a", "geo", "shape:f", "a1", 10, 10, 50, 50))
    c.add(Node("shape:b", "geo", "shape:f", "a2", 200, 100, 50, 50, rotation=0.2))
    pos = {n: c.page_bounds(n) for n in ("shape:a", "shape:b")}
    r = run(c, {"op": "group", "ids": ["shape:a", "shape:b"], "ref": "g"})
    g = r.aliases["g"]
    assert c.nodes[g].parent == "shape:f"
    for n, b in pos.items():
        assert c.page_bounds(n) == pytest.approx(b, abs=1e-9)


def test_group_and_ungroup_write_excalidraw_group_ids():
    c = load({"type": "excalidraw", "version": 2, "elements": [
        {"id": "r1", "type": "rectangle", "x": 0, "y": 0, "width": 50, "height": 40, "groupIds": ["old"]},
        {"id": "r2", "type": "rectangle", "x": 100, "y": 0, "width": 50, "height": 40, "groupIds": ["old"]},
        {"id": "r3", "type": "ellipse", "x": 200, "y": 0, "width": 50, "height": 40},
    ]})
    r = run(c, {"op": "group", "ids": ["group:old", "r3"], "ref": "g"})
    assert r.ok, r.errors
    gid = r.aliases["g"]
    assert gid.startswith("group:")
    els = {e["id"]: e for e in c.to_excalidraw()["elements"]}
    new = gid[len("group:"):]
    # as Excalidraw's Group action: the new group is the outermost id of every member
    assert els["r1"]["groupIds"] == ["old", new] and els["r2"]["groupIds"] == ["old", new]
    assert els["r3"]["groupIds"] == [new]
    r = run(c, {"op": "ungroup", "id": "group:old"})
    assert r.ok, r.errors
    els = {e["id"]: e for e in c.to_excalidraw()["elements"]}
    assert els["r1"]["groupIds"] == [new] and els["r3"]["groupIds"] == [new]
    assert [e["id"] for e in c.to_excalidraw()["elements"]] == ["r1", "r2", "r3"]


def test_group_and_ungroup_bad_input():
    c = boxes_canvas()
    c.add(Node("shape:f", "frame", "page:page", "a9", 0, 300, 300, 200))
    c.add(Node("shape:in", "geo", "shape:f", "a1", 10, 10, 50, 50))
    before = c.to_json()
    r = run(c, {"op": "group", "ids": ["shape:0"]},
            {"op": "group", "ids": ["shape:f", "shape:in"]},
            {"op": "ungroup", "id": "shape:0"},
            {"op": "group", "ids": "shape:0"})
    assert r.applied == []
    assert "group needs at least two nodes, got 1" in r.errors[0].reason
    assert "'shape:in' is inside 'shape:f', which is named too" in r.errors[1].reason
    assert "ungroup: 'shape:0' is a 'geo' node, not a group" in r.errors[2].reason
    assert "group needs at least two nodes" in r.errors[3].reason
    assert c.to_json() == before
    two = Canvas()
    two.add(Node("shape:a", "geo", "page:page", "a1", 0, 0, 1, 1))
    from spatialobs.canvas.document.records import Page
    two.add(Page("page:2", "Two", "a2"))
    two.add(Node("shape:b", "geo", "page:2", "a1", 0, 0, 1, 1))
    with pytest.raises(SpatialObsError, match="must share a page"):
        arrange.group(two, ["shape:a", "shape:b"], group_id="shape:g")


# ---------------------------------------------------------------------- duplicate
def test_duplicate_copies_subtrees_bindings_inside_and_frees_bindings_outside():
    c = boxes_canvas()
    c.add(Node("shape:f", "frame", "page:page", "a9", 0, 300, 300, 200))
    c.add(Node("shape:in", "geo", "shape:f", "a1", 10, 10, 50, 50))
    c.add(Node("shape:in2", "geo", "shape:f", "a2", 200, 100, 50, 50))
    run(c, {"op": "create_arrow", "id": "inner", "from": "shape:in", "to": "shape:in2"},
        {"op": "create_arrow", "id": "out", "from": "shape:in", "to": "shape:3"})
    arrows = [n for n in c.nodes if c.nodes[n].type == "arrow"]
    r = run(c, {"op": "duplicate", "ids": ["shape:f"], "refs": ["f2"]})
    assert r.ok, r.errors
    f2 = r.aliases["f2"]
    assert c.page_bounds(f2) == (310.0, 300.0, 610.0, 500.0)  # tldraw: the copied box's width + 10 to the right
    kids = c.children(f2)
    assert len(kids) == len(c.children("shape:f"))
    # the copy is just above its original
    order = c.paint_order()
    assert order.index(f2) > order.index("shape:f")
    copies = {c.nodes[k].type for k in kids}
    assert "geo" in copies
    new_bindings = [b for b in c.bindings.values() if b.from_id in c.nodes and c.nodes[b.from_id].parent == f2
                    or b.from_id in kids]
    # the arrow between two copied shapes is bound to the copies; the arrow to shape:3 was not copied
    assert all(b.to_id in kids for b in new_bindings)
    assert len(c.bindings) == 4 + len(new_bindings) - 0 and len(new_bindings) == 2
    assert all(a in c.nodes for a in arrows)


def test_duplicate_an_arrow_without_its_target_keeps_the_drawn_end_unbound():
    c = boxes_canvas()
    run(c, {"op": "create_arrow", "id": "ar", "from": "shape:0", "to": "shape:1"})
    arrow = next(n for n in c.nodes if c.nodes[n].type == "arrow")
    from spatialobs.canvas.document.arrows import page_terminals

    ends = page_terminals(c, arrow)
    r = run(c, {"op": "duplicate", "id": arrow, "dx": 0, "dy": 200, "ref": "copy"})
    cp = r.aliases["copy"]
    assert not [b for b in c.bindings.values() if b.from_id == cp]
    got = page_terminals(c, cp)
    assert got[0] == pytest.approx((ends[0][0], ends[0][1] + 200), abs=1e-6)
    assert got[1] == pytest.approx((ends[1][0], ends[1][1] + 200), abs=1e-6)


def test_duplicate_offsets_and_excalidraw_default():
    c = boxes_canvas()
    r = run(c, {"op": "duplicate", "ids": ["shape:0", "shape:1"], "x": 1000, "y": 1000})
    assert r.ok and len(r.created) == 2
    assert corner(c, r.created[0]) == (1000, 1000) and corner(c, r.created[1]) == (1150, 1040)
    e = load({"type": "excalidraw", "version": 2, "elements": [
        {"id": "r1", "type": "rectangle", "x": 5, "y": 5, "width": 50, "height": 40, "seed": 7, "versionNonce": 9}]})
    r = run(e, {"op": "duplicate", "id": "r1"})
    cp = r.created[0]
    assert corner(e, cp) == (15, 15)  # Excalidraw's Duplicate: 10, 10
    el = {x["id"]: x for x in e.to_excalidraw()["elements"]}[cp]
    assert el["type"] == "rectangle" and el["seed"] != 7


def test_duplicate_bad_input():
    c = boxes_canvas()
    before = c.to_json()
    r = run(c, {"op": "duplicate", "ids": ["shape:0", "shape:1"], "ref": "one"},
            {"op": "duplicate", "ids": ["shape:0"], "refs": ["a", "b"]},
            {"op": "duplicate", "id": "ghost"},
            {"op": "duplicate", "id": "shape:0", "dx": "far"})
    assert r.applied == []
    assert "names one copy but 2 ids" in r.errors[0].reason
    assert "one alias per id (1)" in r.errors[1].reason
    assert "no node or alias 'ghost'" in r.errors[2].reason
    assert "field 'dx' must be a number, got 'far'" in r.errors[3].reason
    assert c.to_json() == before


# ---------------------------------------------------------------------- set_viewport
def test_set_viewport_moves_the_saved_camera_and_the_written_files():
    c = boxes_canvas()
    r = run(c, {"op": "set_viewport", "x": 100, "y": 50, "zoom": 2})
    assert r.ok, r.errors
    vp = c.cameras["page:page"]
    assert (vp.x, vp.y, vp.w, vp.h) == (100.0, 50.0, 640.0, 360.0)
    assert r.viewport == {"page:page": {"x": 100.0, "y": 50.0, "w": 640.0, "h": 360.0, "zoom": 2.0}}
    cam = next(x for x in c.to_tldraw()["records"] if x["typeName"] == "camera")
    assert cam == {"x": -100.0, "y": -50.0, "z": 2.0, "meta": {}, "id": "camera:page:page", "typeName": "camera"}
    app = c.to_excalidraw()["appState"]
    assert (app["scrollX"], app["scrollY"], app["zoom"]) == (-100.0, -50.0, {"value": 2.0})
    # reading the files back gives the same viewport
    assert load(c.to_tldraw()).cameras["page:page"] == vp
    assert load(c.to_excalidraw()).cameras["page:page"] == vp


def test_set_viewport_fit_box_center_pan_and_clamp():
    c = boxes_canvas()
    r = run(c, {"op": "set_viewport", "fit": ["shape:0", "shape:3"], "padding": 0})
    vp = c.cameras["page:page"]
    # the box 0..740 x 0..130 shown whole at the screen's aspect (1280 x 720): its width decides
    assert vp.w / vp.h == pytest.approx(1280 / 720)
    assert (vp.x + vp.w / 2, vp.y + vp.h / 2) == pytest.approx((370, 65))
    assert vp.w == pytest.approx(740) and vp.h >= 130
    assert r.viewport["page:page"]["zoom"] == pytest.approx(1280 / 740)
    run(c, {"op": "set_viewport", "center": [0, 0], "zoom": 1})
    assert c.cameras["page:page"].x == -640 and c.cameras["page:page"].y == -360
    run(c, {"op": "set_viewport", "dx": 40, "dy": -10})
    assert (c.cameras["page:page"].x, c.cameras["page:page"].y) == (-600, -370)
    r = run(c, {"op": "set_viewport", "x": 0, "y": 0, "zoom": 100})
    assert c.cameras["page:page"].w == pytest.approx(1280 / 4)
    assert any("zoom 100 clamped to 4" in str(m) for m in r.mapped)
    # action coordinates: the executor's origin
    e = Executor(c, origin=(1000, 2000))
    e.apply(reply({"op": "set_viewport", "x": 0, "y": 0, "zoom": 1}))
    assert (c.cameras["page:page"].x, c.cameras["page:page"].y) == (1000, 2000)


def test_set_viewport_bad_input_is_typed_and_atomic():
    c = boxes_canvas()
    run(c, {"op": "set_viewport", "x": 1, "y": 2, "zoom": 1})
    before = dict(c.cameras)
    r = run(c, {"op": "set_viewport"},
            {"op": "set_viewport", "x": 0, "y": 0, "zoom": 0},
            {"op": "set_viewport", "x": 0, "y": 0, "w": -5, "h": 10},
            {"op": "set_viewport", "fit": ["ghost"]},
            {"op": "set_viewport", "page": "page:nope", "zoom": 1},
            {"op": "set_viewport", "center": [1], "zoom": 1})
    assert r.applied == []
    assert "set_viewport needs" in r.errors[0].reason
    assert "zoom must be > 0" in r.errors[1].reason
    assert "'w' and 'h' must be > 0" in r.errors[2].reason
    assert "no node or alias 'ghost'" in r.errors[3].reason
    assert "no page 'page:nope'" in r.errors[4].reason
    assert "field 'center' must be a normalized point" in r.errors[5].reason
    assert c.cameras == before


# ---------------------------------------------------------------------- create_from_mermaid
FLOW = """flowchart LR
    A[Start] --> B{Ready?}
    B -->|yes| C((Go))
    B -- no --> A
    subgraph s1 [Stage]
      C --> D([Done])
    end
"""


def test_create_from_mermaid_makes_bound_arrows_and_names_nodes_by_their_mermaid_ids():
    c = Canvas()
    r = run(c, {"op": "create_from_mermaid", "mermaid": FLOW, "x": 0, "y": 0},
            {"op": "update_styles", "id": "C", "styles": {"color": "red"}})
    assert r.ok, r.errors
    A, B, C, D = (r.aliases[k] for k in "ABCD")
    assert c.nodes[B].props["geo"] == "diamond" and c.nodes[C].props["geo"] == "ellipse"
    assert c.nodes[A].text == "Start" and c.nodes[C].style["color"] == "red"
    frame = r.aliases["s1"]
    assert c.nodes[frame].type == "frame" and c.nodes[frame].name == "Stage"
    assert c.nodes[C].parent == frame and c.nodes[D].parent == frame
    arrows = {(b.from_id, b.terminal): b.to_id for b in c.bindings.values()}
    by_arrow: Dict[str, Dict[str, str]] = {}
    for (a, t), target in arrows.items():
        by_arrow.setdefault(a, {})[t] = target
    pairs = sorted((v["start"], v["end"], c.nodes[a].text) for a, v in by_arrow.items())
    assert pairs == sorted([(A, B, None), (B, C, "yes"), (B, A, "no"), (C, D, None)])
    # LR: the flow goes to the right
    assert c.page_bounds(A)[0] < c.page_bounds(B)[0] < c.page_bounds(C)[0] < c.page_bounds(D)[0]
    # nothing overlaps
    nodes = [A, B, C, D]
    for i, m in enumerate(nodes):
        for n in nodes[i + 1:]:
            a, b = c.page_bounds(m), c.page_bounds(n)
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (m, n)


def test_create_from_mermaid_in_excalidraw_groups_subgraphs_as_the_package_does():
    c = load({"type": "excalidraw", "version": 2, "elements": []})
    r = run(c, {"op": "create_from_mermaid", "mermaid": FLOW})
    assert r.ok, r.errors
    els = {e["id"]: e for e in c.to_excalidraw()["elements"]}
    C, D = r.aliases["C"], r.aliases["D"]
    assert els[C]["type"] == "ellipse" and els[r.aliases["B"]]["type"] == "diamond"
    assert els[C]["groupIds"] == ["subgraph_group_s1"] and els[D]["groupIds"] == ["subgraph_group_s1"]
    assert els[D]["roundness"] == {"type": 3}
    box = els[r.aliases["s1"]]
    assert box["type"] == "rectangle" and box["groupIds"] == ["subgraph_group_s1"]
    arrow = next(e for e in els.values() if e["type"] == "arrow" and e["startBinding"]["elementId"] == C)
    assert arrow["endBinding"]["elementId"] == D and arrow["groupIds"] == ["subgraph_group_s1"]


def test_create_from_mermaid_reports_what_it_ignores_and_rejects_other_diagrams():
    c = Canvas()
    r = run(c, {"op": "create_from_mermaid", "mermaid": "graph TD\n A:::hot --> B\n classDef hot fill:#f00\n"
                                                       " style B fill:#0f0\n A ~~~ B"})
    assert r.ok
    notes = [str(m) for m in r.mapped]
    assert any("class 'hot' of 'A' ignored" in n for n in notes)
    assert any("classdef statement ignored" in n for n in notes) and any("style statement ignored" in n for n in notes)
    assert any("invisible link" in n for n in notes)
    before = c.to_json()
    r = run(c, {"op": "create_from_mermaid", "mermaid": "sequenceDiagram\n A->>B: hi"},
            {"op": "create_from_mermaid", "mermaid": "graph TD\n A[open --> B"},
            {"op": "create_from_mermaid", "mermaid": "graph TD\n subgraph x\n A --> B"},
            {"op": "create_from_mermaid"},
            {"op": "create_from_mermaid", "mermaid": "graph TD\n A --> B", "parent": "ghost"})
    assert r.applied == []
    assert "mermaid line 1: not a flowchart ('sequenceDiagram')" in r.errors[0].reason
    assert "mermaid line 2: no ']' closes the shape opened by '['" in r.errors[1].reason
    assert "subgraph 'x' has no 'end'" in r.errors[2].reason
    assert "missing field 'mermaid'" in r.errors[3].reason
    assert "no node or alias 'ghost'" in r.errors[4].reason
    assert c.to_json() == before


@pytest.mark.parametrize("text, nodes, edges", [
    ("graph TD\nA-->B", {"A": ("A", "square"), "B": ("B", "square")}, [("A", "B", None, "normal", None, "arrow")]),
    ("graph TD\nA --- B", None, [("A", "B", None, "normal", None, None)]),
    ("graph TD\nA -.-> B", None, [("A", "B", None, "dotted", None, "arrow")]),
    ("graph TD\nA ==> B", None, [("A", "B", None, "thick", None, "arrow")]),
    ("graph TD\nA --o B", None, [("A", "B", None, "normal", None, "circle")]),
    ("graph TD\nA --x B", None, [("A", "B", None, "normal", None, "cross")]),
    ("graph TD\nA <--> B", None, [("A", "B", None, "normal", "arrow", "arrow")]),
    ("graph TD\nA -- two words --> B", None, [("A", "B", "two words", "normal", None, "arrow")]),
    ("graph TD\nA -. maybe .-> B", None, [("A", "B", "maybe", "dotted", None, "arrow")]),
    ("graph TD\nA == big ==> B", None, [("A", "B", "big", "thick", None, "arrow")]),
    ("graph TD\nA -->|\"quoted | pipe\"| B", None, [("A", "B", "quoted | pipe", "normal", None, "arrow")]),
    ("graph TD\nA[\"a [b] (c)\"] --> B[/Lean/]", {"A": ("a [b] (c)", "square"), "B": ("Lean", "lean_right")}, None),
    ("graph TD\nA[\\in\\] --> B[/t\\] --> C[\\i/] --> D{{h}} --> E>o] --> F[(db)] --> G[[s]] --> H(((d)))",
     {"A": ("in", "lean_left"), "B": ("t", "trapezoid"), "C": ("i", "inv_trapezoid"), "D": ("h", "hexagon"),
      "E": ("o", "odd"), "F": ("db", "cylinder"), "G": ("s", "subroutine"), "H": ("d", "doublecircle")}, None),
    ("graph TD\nA & B --> C & D", None, [("A", "C", None, "normal", None, "arrow"), ("A", "D", None, "normal", None, "arrow"),
                                          ("B", "C", None, "normal", None, "arrow"), ("B", "D", None, "normal", None, "arrow")]),
    ("graph TD; a-->b; b-->c %% trailing text is not a comment in Mermaid either", None, None),
])
def test_mermaid_parser(text, nodes, edges):
    if "trailing" in text:
        with pytest.raises(MermaidError):
            parse_mermaid(text)
        return
    chart = parse_mermaid(text)
    if nodes is not None:
        assert {k: (n.label, n.shape) for k, n in chart.nodes.items()} == nodes
    if edges is not None:
        assert [(e.start, e.end, e.label, e.stroke, e.start_head, e.end_head) for e in chart.edges] == edges


def test_mermaid_subgraph_membership_follows_mermaid():
    chart = parse_mermaid("""flowchart TB
        c1 --> a2
        subgraph one
            a1 --> a2
        end
        subgraph two
            a2 --> b1
            subgraph inner [In]
                x1
            end
        end""")
    # a node stays in the first subgraph that ends with it; an inner subgraph is a member of the outer
    assert chart.subgraphs["one"].members == ["a1", "a2"]
    assert chart.subgraphs["two"].members == ["b1", "inner"]
    assert chart.subgraphs["inner"].members == ["x1"] and chart.subgraphs["inner"].parent == "two"
    assert chart.subgraph_of("c1") is None and chart.direction == "TB"


# ---------------------------------------------------------------------- on real files
@pytest.mark.skipif(not TLDR or not EXCALIDRAW, reason="no shared canvases beside the checkout")
@pytest.mark.parametrize("path", TLDR[:3] + EXCALIDRAW[:3], ids=lambda p: p.name[:40])
def test_every_new_op_on_a_real_file_then_undo_by_replay(path):
    c = load(path)
    page = c.current_page
    shapes = [n for n in c.paint_order(page) if c.nodes[n].parent == page and c.nodes[n].type not in
              ("arrow", "group", "line", "draw", "freedraw") and not c.nodes[n].locked][:4]
    assert len(shapes) >= 3
    r = run(c, {"op": "align", "ids": shapes[:3], "align": "left"},
            {"op": "distribute", "ids": shapes[:3], "axis": "vertical"},
            {"op": "group", "ids": shapes[:2], "ref": "g"},
            {"op": "duplicate", "id": "g", "ref": "g2"},
            {"op": "ungroup", "id": "g2"},
            {"op": "lock", "id": shapes[3]},
            {"op": "move_node", "id": shapes[3], "dx": 50},
            {"op": "set_viewport", "fit": [shapes[0]]},
            {"op": "create_from_mermaid", "mermaid": FLOW})
    assert r.applied == [0, 1, 2, 3, 4, 5, 7, 8], r.errors
    assert [e.index for e in r.errors] == [6]
    # both writers take the result and read it back
    assert len(load(c.to_tldraw()).nodes) == len(c.nodes)  # ids take tldraw's shape: prefix on the way
    on_page = {n for n in c.nodes if c.page_of(n) == page and c.nodes[n].type != "group"}
    assert on_page <= set(load(c.to_excalidraw(page=page)).nodes)
