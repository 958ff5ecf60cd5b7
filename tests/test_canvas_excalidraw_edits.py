"""Edits of Excalidraw documents keep text sizes and arrows where Excalidraw would put them.

No browser: the references are the measuring module (checked against Excalidraw itself
in ``test_canvas_excalidraw_text``) and the canvas's own geometry.
"""

from __future__ import annotations

import math

import pytest

from spatialobs.canvas import Canvas, Executor, Node
from spatialobs.canvas.document import excalidraw_text as X
from spatialobs.canvas.formats.excalidraw import from_excalidraw, to_excalidraw


def _scene():
    return {"type": "excalidraw", "elements": [
        {"id": "t", "type": "text", "x": 10, "y": 20, "width": 50, "height": 25, "angle": 0, "text": "Hello",
         "originalText": "Hello", "fontSize": 20, "fontFamily": 1, "lineHeight": 1.25, "textAlign": "left",
         "verticalAlign": "top", "autoResize": True, "containerId": None, "version": 3},
        {"id": "c", "type": "text", "x": 300, "y": 20, "width": 50, "height": 25, "angle": 0, "text": "Hi",
         "originalText": "Hi", "fontSize": 20, "fontFamily": 5, "lineHeight": 1.25, "textAlign": "center",
         "verticalAlign": "top", "autoResize": True, "containerId": None},
        {"id": "box", "type": "rectangle", "x": 0, "y": 100, "width": 100, "height": 40, "angle": 0,
         "boundElements": [{"type": "text", "id": "box-t"}]},
        {"id": "box-t", "type": "text", "x": 30, "y": 107.5, "width": 40, "height": 25, "angle": 0, "text": "ok",
         "originalText": "ok", "fontSize": 20, "fontFamily": 6, "lineHeight": 1.35, "textAlign": "center",
         "verticalAlign": "middle", "containerId": "box", "autoResize": True},
        {"id": "e", "type": "ellipse", "x": 400, "y": 100, "width": 120, "height": 60, "angle": 0},
    ], "appState": {}, "files": {}}


def _el(doc, eid):
    return next(e for e in doc["elements"] if e["id"] == eid)


def test_set_text_and_font_size_re_measure_the_text_as_excalidraw_does():
    c = from_excalidraw(_scene())
    c.update("t", text="Hello there, agent")
    w = X.line_width("Hello there, agent", 1, 20.0)
    assert c.node("t").w == pytest.approx(w) and c.node("t").h == 25.0
    assert c.page_bounds("t")[:2] == (10.0, 20.0)  # left-aligned: grows to the right
    rep = Executor(c).apply([{"op": "update_styles", "ids": ["c"], "styles": {"fontSize": 40}}])
    assert not rep.errors
    w2 = X.line_width("Hi", 5, 40.0)
    assert c.node("c").w == pytest.approx(w2) and c.node("c").h == 50.0
    # centred: the middle of the top edge stays where it was
    b = c.page_bounds("c")
    assert (b[0] + b[2]) / 2 == pytest.approx(325.0)
    doc = to_excalidraw(c)
    for eid in ("t", "c"):
        el, bb = _el(doc, eid), c.page_bounds(eid)
        assert (el["x"], el["y"], el["x"] + el["width"], el["y"] + el["height"]) == pytest.approx(bb)
    assert _el(doc, "c")["fontSize"] == 40


def test_a_longer_label_wraps_and_grows_its_container():
    c = from_excalidraw(_scene())
    label = "a label much too long for a box of a hundred units"
    c.update("box", text=label)
    lay = X.bound_text_layout(label, "rectangle", 100, 40, 6, 20.0, 1.35)
    assert c.node("box").h == lay["container_h"] > 40 and c.node("box").w == 100
    t = _el(to_excalidraw(c), "box-t")
    assert t["text"] == lay["text"] and "\n" in t["text"] and t["originalText"] == label
    assert (t["x"], t["y"], t["width"], t["height"]) == pytest.approx((lay["dx"], 100 + lay["dy"], lay["width"],
                                                                       lay["height"]))


def test_a_new_label_in_an_ellipse_wraps_at_the_ellipse_text_width():
    c = from_excalidraw(_scene())
    c.update("e", text="two words")
    t = next(e for e in to_excalidraw(c)["elements"] if e.get("containerId") == "e")
    assert t["width"] <= X.bound_text_max_width("ellipse", 120) and t["text"] == X.wrap_text(
        "two words", 1, 20.0, X.bound_text_max_width("ellipse", 120))


def test_new_text_is_measured_not_as_wide_as_its_frame():
    c = from_excalidraw(_scene())
    c.add(Node("n", "text", "page:page", None, 0, 300, 1047.0, 28.8, text="Added title", style={"fontSize": 24}))
    assert c.node("n").w == pytest.approx(X.line_width("Added title", 1, 24.0)) and c.node("n").h == 30.0
    el = _el(to_excalidraw(c), "n")
    assert el["width"] == pytest.approx(c.node("n").w) and el["lineHeight"] == 1.25


def test_text_from_another_editor_keeps_its_size_unless_it_has_none():
    c = Canvas()
    c.add(Node("a", "text", "page:page", None, 0, 0, 300, 40, text="wide"))
    c.add(Node("b", "text", "page:page", None, 0, 100, 0, 0, text="none"))
    doc = to_excalidraw(c)
    assert _el(doc, "a")["width"] == 300
    assert _el(doc, "b")["width"] == pytest.approx(X.line_width("none", 1, 20.0)) and _el(doc, "b")["height"] == 25


def test_a_new_bound_arrow_is_written_where_the_canvas_resolves_it():
    c = from_excalidraw(_scene())
    rep = Executor(c).apply([{"op": "create_arrow", "id": "a", "from": "box", "to": "e"}])
    assert not rep.errors
    aid = rep.aliases["a"]
    el = _el(to_excalidraw(c), aid)
    assert el["points"][0] == [0.0, 0.0]
    xs = [el["x"] + p[0] for p in el["points"]]
    ys = [el["y"] + p[1] for p in el["points"]]
    assert (min(xs), min(ys), max(xs), max(ys)) == pytest.approx(c.page_bounds(aid))
    assert el["startBinding"]["elementId"] == "box" and el["endBinding"]["elementId"] == "e"
    # the ends sit on the shapes' outlines, not at their centres
    assert min(xs) > 50 and max(xs) < 460


def test_a_fixed_width_text_stores_its_wrapped_lines():
    doc = _scene()
    doc["elements"][0].update(autoResize=False, width=60)
    c = from_excalidraw(doc)
    c.update("t", text="several words to wrap")
    el = _el(to_excalidraw(c), "t")
    assert el["width"] == 60 and el["text"] == X.wrap_text("several words to wrap", 1, 20.0, 60.0)
    assert el["height"] == pytest.approx(25.0 * (el["text"].count("\n") + 1)) == pytest.approx(c.node("t").h)
    assert math.isclose(c.node("t").w, 60.0)
