"""Executor: aliases, placeholders, default artboard, atomic ops, sanitizer, action coordinates."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from spatialobs import InvalidInputError
from spatialobs.canvas import Canvas, Editor, Executor, Node, Report
from spatialobs.canvas.editing.ops import OP_NAMES, OpError, apply_reply


def base():
    c = Canvas()
    c.add(Node("shape:board", "frame", "page:page", "a1", 0, 0, 400, 300, name="Board"))
    c.add(Node("shape:box", "geo", "shape:board", "a1", 10, 20, 100, 50, text="box", style={"color": "black"}))
    c.add(Node("shape:free", "geo", "page:page", "a2", 600, 0, 40, 40))
    return c


# ------------------------------------------------------------------ aliases and placeholders
def test_aliases_name_new_nodes_and_resolve_in_later_ops():
    c = base()
    ex = Executor(c)
    r = ex.apply([
        {"op": "create_artboard", "ref": "home", "name": "Home", "x": 0, "y": 400, "w": 300, "h": 200},
        {"op": "parse_html", "target": "home", "html": "<div id='card'><p id='label'>Hi</p></div>"},
        {"op": "set_text", "id": "label", "text": "Hello"},
        {"op": "update_styles", "id": "card", "styles": {"background-color": "#eee"}},
    ])
    assert r.ok, r.errors
    assert r.aliases == {"home": "shape:home", "card": "shape:card", "label": "shape:label"}
    assert r.created == ["shape:home", "shape:card", "shape:label"]
    assert c.node("shape:label").text == "Hello" and c.node("shape:label").parent == "shape:card"
    assert c.node("shape:card").style["backgroundColor"] == "#eee"
    # aliases persist across apply() calls of the same executor
    r2 = ex.apply([{"op": "delete_node", "id": "card"}])
    assert r2.ok and "shape:card" not in c.nodes and "shape:label" not in c.nodes
    r3 = ex.apply([{"op": "set_text", "id": "label", "text": "x"}])
    assert "alias 'label' names node 'shape:label', which no longer exists" in str(r3.errors[0])


def test_new_ids_never_collide_with_existing_ones():
    c = base()
    c.add(Node("shape:home", "geo", "page:page", w=1, h=1))
    r = Executor(c).apply([{"op": "create_artboard", "id": "home"}, {"op": "create_artboard", "id": "home"}])
    assert r.created == ["shape:home-2", "shape:home-3"]
    assert r.aliases["home"] == "shape:home-3"  # the later definition wins


def test_alias_used_before_creation_fails_with_reason():
    c = base()
    r = Executor(c).apply([
        {"op": "set_text", "id": "hero", "text": "too early"},
        {"op": "create_artboard", "id": "hero"},
        {"op": "set_text", "id": "hero", "text": "now"},
    ])
    assert r.applied == [1, 2]
    assert str(r.errors[0]) == "op 0 (set_text): alias 'hero' is used before op 1 creates it"
    assert c.node("shape:hero").name == "now"


def test_alias_of_failed_op_is_reported_as_such():
    c = base()
    r = Executor(c).apply([
        {"op": "create_artboard", "id": "bad", "w": -5},
        {"op": "set_text", "id": "bad", "text": "x"},
        {"op": "parse_html", "target": "shape:box", "html": "<p id='inner'>x</p>"},
        {"op": "set_text", "id": "inner", "text": "x"},
    ])
    assert r.applied == []
    assert "field 'w' must be >= 0" in r.errors[0].reason
    assert r.errors[1].reason == "alias 'bad' was not created: op 0 failed"
    assert "parse_html needs an artboard" in r.errors[2].reason
    assert r.errors[3].reason == "alias 'inner' was not created: op 2 failed"


@pytest.mark.parametrize("ph", ["LATEST_CREATED_ARTBOARD", "latest_created_artboard", "{{LATEST_CREATED_ARTBOARD}}",
                                "$LATEST_CREATED_ARTBOARD", "${LATEST_CREATED_ARTBOARD}"])
def test_placeholder_spellings_name_the_latest_artboard(ph):
    c = base()
    r = Executor(c).apply([
        {"op": "create_artboard", "name": "One"},
        {"op": "create_artboard", "name": "Two"},
        {"op": "parse_html", "target": ph, "html": "<h1>T</h1>"},
        {"op": "set_text", "id": ph, "text": "Renamed"},
    ])
    assert r.ok, r.errors
    two = r.created[1]
    assert c.node(two).name == "Renamed" and c.node(r.created[2]).parent == two


def test_default_artboard_chain():
    c = base()
    c.add(Node("shape:b2", "frame", "page:page", "a3", 1000, 0, 100, 100))
    ex = Executor(c)
    # nothing created, touched or selected: the first artboard of the page
    assert ex.default_artboard() == "shape:board"
    Editor(c).select(["shape:b2"])
    assert ex.default_artboard() == "shape:b2"                   # selected
    ex.apply([{"op": "set_text", "id": "shape:box", "text": "t"}])
    assert ex.default_artboard() == "shape:board"                # last touched beats selected
    ex.apply([{"op": "create_artboard", "name": "N"}])
    assert ex.default_artboard() == "shape:N"                    # last created beats touched
    # a new executor on the same canvas: the agent's working artboards (editor state)
    assert Executor(c).default_artboard() == "shape:N"
    empty = Canvas()
    r = Executor(empty).apply([{"op": "parse_html", "html": "<p>x</p>"}, {"op": "set_text", "id": "LATEST_CREATED_ARTBOARD", "text": "x"}])
    assert "page has no artboard" in r.errors[0].reason and "no artboard has been created" in r.errors[1].reason


def test_selected_child_selects_its_artboard():
    c = base()
    Editor(c).select(["shape:box"])
    assert Executor(c).default_artboard() == "shape:board"


# ------------------------------------------------------------------ unknown ops / ids / bad fields
def test_unknown_ops_and_ids_and_missing_fields():
    c = base()
    snap = c.to_json()
    r = Executor(c).apply([
        {"op": "make_circle"}, {"id": "x"}, "not an op", {"op": "set_text", "id": "shape:nope", "text": "x"},
        {"op": "set_text", "id": "shape:box"}, {"op": "update_styles", "id": "shape:box", "styles": {}},
        {"op": "move_node", "id": "shape:box"}, {"op": "update_node", "id": "shape:box", "bogus": 1},
        {"op": "parse_html", "target": "shape:board", "html": "<p>x</p>", "mode": "merge"},
        {"op": "create_artboard", "w": "wide"}, {"op": "delete_node"}, {"op": "update_node", "id": "shape:box", "x": None},
    ])
    assert r.applied == []
    reasons = [e.reason for e in r.errors]
    assert reasons[0].startswith("unknown op 'make_circle' (known: create_artboard,")
    assert reasons[1].startswith("has no 'op' field")
    assert reasons[2] == "an op must be an object, got str"
    assert reasons[3] == "no node or alias 'shape:nope'"
    assert reasons[4] == "missing field 'text'"
    assert reasons[5] == "field 'styles' is empty"
    assert reasons[6] == "move_node needs x/y, dx/dy or parent"
    assert reasons[7] == "record 'shape:box': unknown node field 'bogus'"
    assert reasons[8] == "field 'mode' must be 'append' or 'replace', got 'merge'"
    assert reasons[9] == "field 'w' must be a number, got 'wide'"
    assert reasons[10] == "missing field 'id' (or 'ids')"
    assert reasons[11] == "no changes given"
    assert [e.index for e in r.errors] == list(range(12))
    assert c.to_json() == snap


def test_op_name_spellings():
    c = base()
    r = Executor(c).apply([{"op": "setText", "id": "shape:box", "text": "a"},
                           {"action": "set-text", "id": "shape:box", "text": "b"},
                           {"type": "SET_TEXT", "id": "shape:box", "text": "c"}])
    assert r.applied == [0, 1, 2] and c.node("shape:box").text == "c"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["setText", "set-text", "SET_TEXT", " moveNode ", "create shape", "moveTo",
                                           "create_arrow", "deleteNode", "nope", "x" * 70]),
                          st.text(max_size=12)), max_size=12))
def test_op_names_are_computed_from_their_spelling(raws):
    """An op name, read once or again, is the name computed from its spelling."""
    import re

    from spatialobs.canvas.editing import ops as ops_mod

    def computed(raw: str) -> str:
        name = re.sub(r"[\s\-]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", raw.strip())).lower()
        return ops_mod.OP_ALIASES.get(name, name)
    for raw in raws + raws:
        assert ops_mod._op_name(raw) == computed(raw)
    assert ops_mod._op_name(3) is None and ops_mod._op_name(None) is None
    assert ops_mod._op_name("unseenOpName") == "unseen_op_name"


def test_apply_accepts_a_reply_and_reports_parse_errors():
    c = base()
    reply = ('```canvas_ops\n[{"op": "set_text", "id": "shape:box", "text": "A"}]\n```\n'
             '```canvas_ops\n{"ops": [oops]}\n```')
    r = apply_reply(c, reply)
    assert r.applied == [0] and c.node("shape:box").text == "A"
    assert r.errors[0].index is None and "canvas_ops block 1" in str(r.errors[0])
    with pytest.raises(InvalidInputError, match="ops must be a list"):
        Executor(c).apply({"op": "set_text"})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="origin must be two numbers"):
        Executor(c, origin=(1,))
    with pytest.raises(InvalidInputError, match="needs a Canvas"):
        Executor({})  # type: ignore[arg-type]


# ------------------------------------------------------------------ atomicity
def test_failing_op_changes_nothing_and_later_ops_run():
    c = base()
    snap = c.to_json()
    r = Executor(c).apply([
        # the first id resolves, the second does not: neither is deleted
        {"op": "delete_node", "ids": ["shape:free", "shape:missing"]},
        # html is parsed and half added before the placement of a bad child fails
        {"op": "update_node", "ids": ["shape:box", "shape:free"], "w": 5, "opacity": 7},
    ])
    assert r.applied == [] and len(r.errors) == 2
    assert c.to_json() == snap
    r = Executor(c).apply([
        {"op": "update_styles", "ids": ["shape:box", "shape:free"], "styles": {"color": "red"}},
        {"op": "set_text", "id": "shape:box", "text": 5},
    ])
    assert r.ok and c.node("shape:free").style == {"color": "red"} and c.node("shape:box").text == "5"


def test_replace_mode_failure_restores_the_removed_children():
    c = base()
    snap = c.to_json()
    # the children are removed first, then the second element cannot be added (infinite width)
    html = "<p>fine</p><div style='width: " + "9" * 400 + "px'>x</div>"
    r = Executor(c).apply([{"op": "parse_html", "target": "shape:board", "mode": "replace", "html": html}])
    assert not r.ok and "must be finite" in r.errors[0].reason
    # equal records (a rolled-back removal re-inserts at the end of the canvas order, so compare as sets)
    assert c == Canvas.from_json(snap) and c.meta == {} and c.children("shape:board") == ["shape:box"]


def test_locked_nodes_are_not_edited_by_ops():
    c = base()
    c.update("shape:box", locked=True)
    r = Executor(c).apply([{"op": "set_text", "id": "shape:box", "text": "x"},
                           {"op": "delete_node", "id": "shape:box"},
                           {"op": "update_node", "id": "shape:box", "locked": False, "text": "unlocked"}])
    assert r.applied == [2] and [e.reason for e in r.errors] == ["node 'shape:box' is locked"] * 2
    assert c.node("shape:box").text == "unlocked"


# ------------------------------------------------------------------ sanitizer and human edits
def test_sanitizer_coercions_through_ops():
    c = base()
    r = Executor(c).apply([
        {"op": "update_styles", "id": "shape:box",
         "styles": {"font-size": "32", "stroke_width": "2.5", "fill-color": "", "opacity": None, "color": None,
                    "labelColor": "red"}},
        {"op": "update_node", "id": "shape:box", "width": "120", "h": "60px", "opacity": "0.5", "hidden": "false",
         "name": None, "props": {"geo": "ellipse"}},
        {"op": "update_styles", "id": "shape:free", "styles": "background-color: blue; border-width: 2px"},
    ])
    assert r.ok, r.errors
    n = c.node("shape:box")
    # null removed "color"; the CSS font size stays as given and sets tldraw's size step too (the geometry's)
    assert n.style == {"fontSize": 32, "strokeWidth": 2.5, "labelColor": "red", "size": "xl"}
    # tldraw style values follow into the props, where tldraw keeps them
    assert (n.w, n.h, n.opacity, n.hidden, n.props) == (120.0, 60.0, 0.5, False, {"geo": "ellipse", "labelColor": "red", "size": "xl"})
    assert c.node("shape:free").style == {"backgroundColor": "blue", "borderWidth": 2}


@pytest.mark.parametrize("op, human", [
    ({"op": "update_styles", "id": "shape:box", "styles": {"fill-style": "solid", "color": None}},
     {"style": {"fill-style": "solid", "color": None}}),
    ({"op": "set_text", "id": "shape:box", "text": "new"}, {"text": "new"}),
    ({"op": "set_text", "id": "shape:board", "text": "Board 2"}, {"name": "Board 2"}),
    ({"op": "update_node", "id": "shape:free", "w": "12", "rotation": 0.5, "opacity": 0.25}, {"w": 12, "rotation": 0.5, "opacity": 0.25}),
    ({"op": "move_node", "id": "shape:free", "x": 123.25, "y": -7}, {"x": 123.25, "y": -7}),
    ({"op": "move_node", "id": "shape:box", "x": 110, "y": 120}, {"x": 110, "y": 120}),  # child of (0, 0) board
    ({"op": "update_node", "id": "shape:free", "x": 5}, {"x": 5}),
    ({"op": "move_node", "id": "shape:free", "parent": "shape:board"}, {"parent": "shape:board", "x": 600, "y": 0}),
])
def test_agent_ops_and_human_edits_give_identical_records(op, human):
    agent, person = base(), base()
    r = Executor(agent).apply([op])
    assert r.ok, r.errors
    person.update(op["id"], **human)
    assert agent.nodes == person.nodes
    assert agent.to_json() == person.to_json()


def test_human_and_agent_creation_give_identical_records():
    agent, person = base(), base()
    r = Executor(agent).apply([{"op": "create_artboard", "id": "x", "name": "X", "x": 1, "y": 2, "w": 30, "h": 40,
                                "background": "#fff"}])
    person.add({"id": "shape:x", "type": "frame", "parent": "page:page", "x": 1, "y": 2, "w": 30, "h": 40,
                "name": "X", "style": {"background-color": "#fff"}})
    assert r.ok and agent.nodes == person.nodes
    # the documents differ only in the agent's editor state (its working artboards)
    a, p = json.loads(agent.to_json()), json.loads(person.to_json())
    assert a.pop("meta") == {"editor": {"tool": "select", "screen": [1280.0, 720.0], "agent": {
        "active": False, "status": "idle", "artboards": ["shape:x"], "prompts": []}}}
    assert p.pop("meta") == {} and a == p


# ------------------------------------------------------------------ coordinates
def test_action_coordinates_are_page_minus_origin():
    c = base()
    c.update("shape:board", x=1000, y=500)
    ex = Executor(c, origin=(900, 400))
    r = ex.apply([
        {"op": "move_node", "id": "shape:box", "x": 150, "y": 150},     # page (1050, 550): local (50, 50)
        {"op": "create_artboard", "id": "n", "x": 0, "y": 0, "w": 10, "h": 10},
        {"op": "place", "ids": ["shape:free"], "into": "shape:board", "at": {"shape:free": [200, 200]}},
    ])
    assert r.ok, r.errors
    assert c.page_bounds("shape:box")[:2] == (1050.0, 550.0) and (c.node("shape:box").x, c.node("shape:box").y) == (50.0, 50.0)
    assert c.page_bounds("shape:n")[:2] == (900.0, 400.0)
    assert c.page_bounds("shape:free")[:2] == (1100.0, 600.0)


def test_move_into_rotated_parent_keeps_page_position_and_rotation():
    c = base()
    c.add(Node("shape:rot", "frame", "page:page", "a5", 300, 300, 200, 200, rotation=math.pi / 6))
    before = c.page_bounds("shape:free")
    r = Executor(c).apply([{"op": "move_node", "id": "shape:free", "parent": "shape:rot"}])
    assert r.ok, r.errors
    after = c.page_bounds("shape:free")
    assert all(math.isclose(a, b, abs_tol=1e-9) for a, b in zip(before, after))
    assert math.isclose(c.page_rotation("shape:free"), 0.0, abs_tol=1e-12)
    assert c.node("shape:free").parent == "shape:rot"


def test_move_several_keeps_arrangement_and_dx_dy():
    c = base()
    c.add(Node("shape:g", "geo", "page:page", "a4", 700, 100, 10, 10))
    r = Executor(c).apply([{"op": "move_node", "ids": ["shape:free", "shape:g"], "x": 0, "y": 400},
                           {"op": "move_node", "id": "shape:g", "dx": 5, "dy": -5}])
    assert r.ok
    assert c.page_bounds("shape:free")[:2] == (0.0, 400.0)
    assert c.page_bounds("shape:g")[:2] == (105.0, 495.0)


# ------------------------------------------------------------------ editor state from ops
def test_ops_never_take_the_selection_and_record_working_artboards():
    c = base()
    ed = Editor(c)
    ed.select(["shape:free"])
    r = Executor(c).apply([{"op": "create_artboard", "id": "a"},
                           {"op": "parse_html", "html": "<section><h2>x</h2></section>"}])
    assert r.ok
    assert ed.selection == ("shape:free",)
    assert ed.working_artboards() == ["shape:a"]


def test_created_artboard_is_placed_beside_the_content_by_default():
    c = base()
    r = Executor(c).apply([{"op": "create_artboard", "name": "Next"}])
    b = c.page_bounds(r.created[0])
    assert b == (740.0, 0.0, 740.0 + 1440.0, 900.0)


def test_delete_ids_with_ancestor_and_binding():
    from spatialobs.canvas import Binding

    c = base()
    c.add(Node("shape:arrow", "arrow", "page:page", "a9", 0, 0, 10, 10, props={"points": [[0, 0], [10, 10]]}))
    c.add(Binding("b1", "arrow", "shape:arrow", "shape:box", "end"))
    r = Executor(c).apply([{"op": "delete_node", "ids": ["shape:board", "shape:box"]}])
    assert r.ok and "shape:box" not in c.nodes and "b1" not in c.bindings


def test_report_to_dict_is_json():
    c = base()
    r = Executor(c).apply([{"op": "create_artboard", "id": "a"}, {"op": "nope"}])
    d = json.loads(json.dumps(r.to_dict()))
    assert d["applied"] == [0] and d["created"] == ["shape:a"] and d["errors"][0].startswith("op 1 (nope)")
    assert isinstance(r, Report) and isinstance(r.errors[0], OpError) and not r.ok


# ------------------------------------------------------------------ fuzz: bad ops never escape as exceptions
values = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.floats(allow_nan=True),
                   st.text(max_size=8), st.sampled_from(["shape:box", "shape:board", "LATEST_CREATED_ARTBOARD", "a",
                                                          "page:page", "<p id='a'>x</p>"]),
                   st.lists(st.sampled_from(["shape:box", "shape:free", "a", 3]), max_size=3),
                   st.dictionaries(st.sampled_from(["x", "y", "w", "h", "color", "font-size"]),
                                   st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=4)), max_size=3))
op_dicts = st.fixed_dictionaries({"op": st.sampled_from(list(OP_NAMES) + ["bogus"])},
                                 optional={k: values for k in ("id", "ids", "ref", "target", "text", "styles", "html",
                                                               "x", "y", "dx", "w", "h", "parent", "into", "mode",
                                                               "changes", "at", "inset", "name")})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op_dicts, max_size=6))
def test_random_ops_fail_cleanly(ops):
    c = base()
    r = Executor(c).apply(ops)
    assert sorted(r.applied + [e.index for e in r.errors]) == list(range(len(ops)))
    # the canvas stays consistent and serializable
    Canvas.from_json(c.to_json())
    c.paint_order()
