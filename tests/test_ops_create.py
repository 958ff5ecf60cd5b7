"""create_shape, create_arrow, bind, unbind, hidden, and style values mapped at op time."""

from __future__ import annotations

import pytest

from spatialobs.canvas import Canvas, Node, load
from spatialobs.canvas.editing.ops import OP_NAMES, Executor
from spatialobs.canvas.formats.tldraw import to_tldraw
from spatialobs.canvas.formats.tldraw_schema import validate_records


def _canvas():
    c = Canvas()
    c.add(Node("shape:box", "geo", "page:page", "a1", 0, 0, 100, 50, style={"color": "black"}))
    c.add(Node("shape:other", "geo", "page:page", "a2", 300, 0, 100, 50))
    return c


def test_op_names_list_the_new_ops():
    assert {"create_shape", "create_arrow", "bind", "unbind"} <= set(OP_NAMES)


def test_update_styles_maps_values_and_reports_each():
    c = _canvas()
    r = Executor(c).apply([{"op": "update_styles", "id": "shape:box",
                            "styles": {"color": "#ff0000", "fill": "blue", "size": 20, "font": "Arial"}}])
    assert r.ok
    st = c.node("shape:box").style
    assert (st["color"], st["fill"], st["size"], st["font"]) == ("red", "solid", "s", "sans")
    assert [str(m) for m in r.mapped] == [
        "op 0 (update_styles): shape:box: color '#ff0000' → 'red'",
        "op 0 (update_styles): shape:box: fill 'blue' → 'solid'",
        "op 0 (update_styles): shape:box: size 20 → 's'",
        "op 0 (update_styles): shape:box: font 'Arial' → 'sans'"]
    assert r.to_dict()["mapped"][0].endswith("color '#ff0000' → 'red'")


def test_unmappable_value_fails_the_op_and_changes_nothing():
    c = _canvas()
    before = c.to_json()
    r = Executor(c).apply([{"op": "update_styles", "ids": ["shape:box", "shape:other"],
                            "styles": {"color": "red", "dash": "wavy"}}])
    assert r.applied == [] and "dash 'wavy' is not a dash" in str(r.errors[0])
    assert c.to_json() == before and r.mapped == []


def test_html_made_nodes_keep_their_css():
    c = Canvas()
    ex = Executor(c)
    r = ex.apply([{"op": "create_artboard", "id": "b", "w": 400, "h": 300},
                  {"op": "parse_html", "html": "<p id='p'>x</p>"},
                  {"op": "update_styles", "id": "p", "styles": {"color": "#ff0000"}}])
    assert r.ok and r.mapped == []
    assert c.node(r.aliases["p"]).style["color"] == "#ff0000"


def test_create_shape_kinds_position_size_and_aliases():
    c = Canvas()
    r = Executor(c, origin=(1000, 1000)).apply([
        {"op": "create_shape", "id": "e", "shape": "ellipse", "x": 10, "y": 20, "w": 120, "h": 80, "text": "E",
         "color": "#ff0000"},
        {"op": "create_shape", "id": "n", "type": "note", "x": 0, "y": 200, "text": "N"},
        {"op": "create_shape", "id": "t", "shape": "text", "x": 0, "y": 500, "text": "T", "size": 44},
        {"op": "create_shape", "id": "f", "shape": "frame", "x": 500, "y": 0, "w": 300, "h": 200, "name": "F"},
        {"op": "create_shape", "id": "in", "parent": "f", "x": 520, "y": 20, "hidden": True},
        {"op": "move_node", "id": "e", "dx": 5},
    ])
    assert r.ok, r.errors
    e = c.node(r.aliases["e"])
    assert (e.type, e.props["geo"], e.style["color"], e.text) == ("geo", "ellipse", "red", "E")
    assert c.page_bounds(e.id) == (1015.0, 1020.0, 1135.0, 1100.0)
    assert c.node(r.aliases["n"]).w == 200 and c.node(r.aliases["t"]).style["size"] == "xl"
    inner = c.node(r.aliases["in"])
    assert inner.parent == r.aliases["f"] and inner.hidden and (inner.x, inner.y) == (20.0, 20.0)
    assert r.created == [r.aliases[a] for a in ("e", "n", "t", "f", "in")]


@pytest.mark.parametrize("op, why", [
    ({"op": "create_shape", "shape": "blob"}, "cannot create a shape of type 'blob'"),
    ({"op": "create_shape", "w": -1}, "field 'w' must be > 0"),
    ({"op": "create_shape", "color": "banana"}, "color 'banana' is not a color"),
    ({"op": "create_shape", "parent": "nowhere"}, "no node or alias 'nowhere'"),
    ({"op": "create_arrow", "from": "shape:box"}, "missing field 'to'"),
    ({"op": "create_arrow", "from": "shape:box", "to": [1]}, "must be a node id or alias, or a point"),
    ({"op": "create_arrow", "from": "shape:box", "to": "shape:box", "to_anchor": "top"}, "normalized point"),
    ({"op": "bind", "id": "shape:box", "to": "shape:other"}, "not an arrow"),
    ({"op": "unbind", "id": "shape:box"}, "not an arrow"),
])
def test_bad_ops_fail_atomically_with_a_reason(op, why):
    c = _canvas()
    before = c.to_json()
    r = Executor(c).apply([op])
    assert r.applied == [] and why in str(r.errors[0]), r.errors
    assert c.to_json() == before


def test_create_arrow_bound_at_anchors_then_unbind_and_bind():
    c = _canvas()
    ex = Executor(c)
    r = ex.apply([{"op": "create_arrow", "id": "a", "from": "shape:box", "to": "shape:other",
                   "to_anchor": [0, 0.5], "label": "go", "arrowheadStart": "circle", "bend": 10}])
    assert r.ok, r.errors
    a = r.aliases["a"]
    bs = sorted((b.terminal, b.to_id, b.anchor, b.precise) for b in c.bindings.values() if b.from_id == a)
    assert bs == [("end", "shape:other", (0.0, 0.5), True), ("start", "shape:box", (0.5, 0.5), False)]
    node = c.node(a)
    assert node.text == "go" and node.props["arrowheadStart"] == "dot" and node.props["bend"] == 10
    assert (node.x, node.y) == (50.0, 25.0) and node.props["end"] == {"x": 250.0, "y": 0.0}
    from spatialobs.canvas.document.arrows import page_terminals

    drawn = page_terminals(c, a)
    r = ex.apply([{"op": "unbind", "id": "a", "terminal": "end"}])
    assert r.ok and [b.terminal for b in c.bindings.values() if b.from_id == a] == ["start"]
    # the freed end stays where tldraw drew it (short of the target by the arrowhead's gap), not at the anchor
    assert c.node(a).props["end"] != {"x": 250.0, "y": 0.0}
    for p, q in zip(page_terminals(c, a), drawn):
        assert p == pytest.approx(q, abs=1e-6)
    r = ex.apply([{"op": "unbind", "id": "a", "terminal": "end"}])
    assert "has no binding at its end" in str(r.errors[0])
    r = ex.apply([{"op": "bind", "id": "a", "terminal": "end", "to": "shape:other", "anchor": {"x": 1, "y": 1}}])
    assert r.ok
    b = next(b for b in c.bindings.values() if b.from_id == a and b.terminal == "end")
    assert (b.to_id, b.anchor, b.precise) == ("shape:other", (1.0, 1.0), True)
    r = ex.apply([{"op": "bind", "id": "a", "to": "a"}])
    assert "arrows bind to shapes, not to arrows" in str(r.errors[0])


def test_created_nodes_round_trip_through_tldraw_with_hidden_kept():
    c = _canvas()
    r = Executor(c).apply([
        {"op": "create_shape", "id": "s", "shape": "note", "x": 0, "y": 100, "text": "hello", "hidden": True},
        {"op": "create_arrow", "id": "a", "from": "shape:box", "to": "s"},
        {"op": "update_node", "id": "shape:other", "visible": False},
    ])
    assert r.ok, r.errors
    doc = to_tldraw(c)
    assert validate_records(doc["records"], doc["schema"]) == []
    back = load(doc)
    assert back.node(r.aliases["s"]).hidden and back.node("shape:other").hidden
    assert not back.node("shape:box").hidden
    assert {(b.from_id, b.to_id) for b in back.bindings.values()} == {(r.aliases["a"], "shape:box"),
                                                                      (r.aliases["a"], r.aliases["s"])}


def test_resizing_a_grown_geo_makes_the_new_box_its_own_size_as_tldraw_does():
    from spatialobs.canvas.document.textmeasure import geo_label_size

    c = Canvas()
    ex = Executor(c)
    r = ex.apply([{"op": "create_shape", "id": "g", "shape": "rectangle", "x": 0, "y": 0,
                   "text": "A somewhat longer label that wraps over lines"}])
    g = c.node(r.aliases["g"])
    assert g.props["growY"] > 0 and g.h == 100 + g.props["growY"]  # the label grew it on creation
    ex.apply([{"op": "update_node", "id": "g", "w": 376, "h": 91}])
    g = c.node(r.aliases["g"])
    lw, lh = geo_label_size(g.text, "draw", "m", 376.0)
    assert g.props["growY"] == 0.0 and (g.w, g.h) == (376.0, max(91.0, lh))
    ex.apply([{"op": "update_node", "id": "g", "w": 60, "h": 20}])  # never smaller than the label
    g = c.node(r.aliases["g"])
    lw, lh = geo_label_size(g.text, "draw", "m", 60.0)
    assert g.props["growY"] == 0.0 and (g.w, g.h) == (max(60.0, lw), max(20.0, lh))
