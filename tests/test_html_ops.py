"""HTML as layout notation: tag mapping, inline styles, ignored tags, images and svg, replace mode."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from spatialobs import InvalidInputError
from spatialobs.canvas import Canvas, Editor, Executor, Node
from spatialobs.canvas.document.textmeasure import text_shape_size
from spatialobs.canvas.editing.html import MAX_HTML_CHARS, layout_fragment, parse_fragment


def board(w=600, h=400):
    c = Canvas()
    c.add(Node("shape:ab", "frame", "page:page", "a1", 100, 50, w, h, name="AB"))
    return c


def tree(c, root="shape:ab"):
    """(type, text or name, parent) of the subtree in paint order."""
    return [(c.node(k).type, c.node(k).text or c.node(k).name, c.node(k).parent) for k in c.descendants(root)]


def test_nested_html_with_inline_styles():
    c = board()
    html = """
    <section id="hero" style="padding: 20px; background-color: #f5f5f5; display: flex; gap: 10px">
      <div style="width: 200px"><h1 style="font-size: 40px; color: #111">Title</h1>
        <p style="line-height: 1.5">Some <b>bold</b> text<br>and a second line</p></div>
      <ul><li>One</li><li>Two</ul>
    </section>"""
    r = Executor(c).apply([{"op": "parse_html", "target": "shape:ab", "html": html}])
    assert r.ok, r.errors
    assert tree(c) == [
        ("container", "hero", "shape:ab"),
        ("container", "div", "shape:hero"),
        ("text", "Title", "shape:div"),
        ("text", "Some bold text\nand a second line", "shape:div"),
        ("container", "ul", "shape:hero"),
        ("container", "li", "shape:ul"),
        ("text", "One", "shape:li"),
        ("container", "li", "shape:ul"),      # the unclosed <li> is closed by the next one / </ul>
        ("text", "Two", "shape:li-2"),
    ]
    hero = c.node("shape:hero")
    assert hero.style == {"padding": 20, "backgroundColor": "#f5f5f5", "display": "flex", "gap": 10}
    assert (hero.x, hero.y, hero.w) == (0.0, 0.0, 600.0)
    title = c.node("shape:h1")
    # a tldraw text record: 40px maps to size l (36px; a tie goes to the smaller step), no family to sans, measured with tldraw's metrics
    assert title.style == {"fontSize": 40, "color": "#111", "fontWeight": "bold", "size": "l", "font": "sans",
                           "textAlign": "start"}
    assert title.props == {"tag": "h1", "autoSize": True, "scale": 1.0, "w": title.w}
    assert (title.x, title.y, title.h) == (0.0, 0.0, 49.0)
    assert (title.w, title.h) == text_shape_size("Title", "sans", "l")
    div = c.node("shape:div")
    assert (div.x, div.y, div.w) == (20.0, 20.0, 200.0)
    ul = c.node("shape:ul")
    assert ul.x == 20 + 200 + 10 and ul.y == 20  # flex row with gap
    assert c.page_bounds("shape:h1")[:2] == (120.0, 70.0)   # artboard (100, 50) + padding


def test_scripts_styles_meta_and_head_are_ignored():
    html = ("<html><head><title>T</title><meta charset='utf-8'><link rel='x' href='y'>"
            "<style>p { color: red }</style></head><body><script>document.write('<p>no</p>')</script>"
            "<noscript><p>no</p></noscript><p>yes</p><template><p>no</p></template></body></html>")
    recs = layout_fragment(html, 300)
    assert [(r["kind"], r["text"]) for r in recs] == [("text", "yes")]


def test_images_and_svg():
    html = ('<div><img src="a.png" alt="Logo" width="120" height="40">'
            '<svg viewBox="0 0 24 12" width="48"><path d="M0 0L24 12"/><text>not a node</text></svg>'
            '<img src="b.png"/></div>')
    recs = layout_fragment(html, 300)
    kinds = [(r["kind"], r["tag"], r["w"], r["h"]) for r in recs]
    assert kinds == [("container", "div", 300.0, 40.0 + 24.0 + 100.0), ("image", "img", 120.0, 40.0),
                     ("image", "svg", 48.0, 24.0), ("image", "img", 100.0, 100.0)]
    assert recs[1]["props"] == {"tag": "img", "src": "a.png", "alt": "Logo"} and recs[1]["name"] == "Logo"
    assert recs[2]["props"]["svg"].startswith("<svg viewBox") and recs[2]["props"]["svg"].endswith("</svg>")
    assert "<path" in recs[2]["props"]["svg"]


def test_text_tag_holding_an_image_becomes_a_container():
    recs = layout_fragment('<button><img src="i.png" width="10" height="10">Go</button>', 200)
    assert [(r["kind"], r["tag"], r["text"]) for r in recs] == [
        ("container", "button", None), ("image", "img", None), ("text", "#text", "Go")]


def test_unknown_tags_are_containers_and_entities_decoded():
    recs = layout_fragment("<my-widget data-name='W'><p>a &amp; b &lt;c&gt;</p></my-widget>", 100)
    assert recs[0]["kind"] == "container" and recs[0]["name"] == "W"
    assert recs[1]["text"] == "a & b <c>"


def test_absolute_position_and_units():
    recs = layout_fragment('<div style="position:absolute; left: 30px; top: 2em; width: 50%; height: 1rem"></div>', 400)
    assert (recs[0]["x"], recs[0]["y"], recs[0]["w"], recs[0]["h"]) == (30.0, 32.0, 200.0, 16.0)


def test_grid_and_flex_grow():
    recs = layout_fragment('<div style="display:grid; grid-template-columns: repeat(2, 1fr); gap: 10px">'
                           '<div style="height:5px"></div><div style="height:7px"></div><div style="height:3px"></div></div>', 210)
    assert [(r["x"], r["y"], r["w"]) for r in recs[1:]] == [(0.0, 0.0, 100.0), (110.0, 0.0, 100.0), (0.0, 17.0, 100.0)]
    recs = layout_fragment('<div style="display:flex"><div style="width:50px"></div><div style="flex: 1"></div></div>', 300)
    assert [(r["x"], r["w"]) for r in recs[1:]] == [(0.0, 50.0), (50.0, 250.0)]


def test_replace_mode_clears_the_targets_children():
    c = board()
    ex = Executor(c)
    ex.apply([{"op": "parse_html", "target": "shape:ab", "html": "<p>old one</p><p>old two</p>"}])
    assert len(c.children("shape:ab")) == 2
    r = ex.apply([{"op": "parse_html", "target": "shape:ab", "mode": "replace", "html": "<h2>new</h2>"}])
    assert r.ok and [c.node(k).text for k in c.children("shape:ab")] == ["new"]
    assert c.node(c.children("shape:ab")[0]).y == 0.0


def test_append_mode_stacks_below_existing_children_and_x_y_place_the_first_element():
    c = board()
    ex = Executor(c, origin=(100, 50))
    ex.apply([{"op": "parse_html", "target": "shape:ab", "html": "<div style='height: 30px'></div>"}])
    ex.apply([{"op": "parse_html", "target": "shape:ab", "html": "<div style='height: 10px'></div>"}])
    ex.apply([{"op": "parse_html", "target": "shape:ab", "html": "<div style='height: 10px; width: 10px'></div>",
               "x": 300, "y": 200}])
    ys = [(c.node(k).x, c.node(k).y) for k in c.children("shape:ab")]
    assert ys == [(0.0, 0.0), (0.0, 30.0), (300.0, 200.0)]


def test_new_html_nodes_never_take_the_selection():
    c = board()
    Editor(c).select(["shape:ab"])
    Executor(c).apply([{"op": "parse_html", "html": "<p>x</p>"}])
    assert c.selected() == ("shape:ab",)


def test_html_bad_input():
    with pytest.raises(InvalidInputError, match="html must be a string"):
        parse_fragment(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="more than"):
        parse_fragment("x" * (MAX_HTML_CHARS + 1))
    with pytest.raises(InvalidInputError, match="width must be finite"):
        layout_fragment("<p>x</p>", float("inf"))
    c = board()
    r = Executor(c).apply([{"op": "parse_html", "target": "shape:ab", "html": None}])
    assert r.errors[0].reason == "field 'html' must be a string, got NoneType"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/=\"' divpspanimgsvgscriptstyle:;-0123456789&#x\n")), max_size=200))
def test_any_markup_is_laid_out_or_rejected_cleanly(html):
    c = board()
    r = Executor(c).apply([{"op": "parse_html", "target": "shape:ab", "html": html}])
    if r.ok:
        for k in c.descendants("shape:ab"):
            n = c.node(k)
            assert n.type in ("container", "text", "image") and n.w >= 0 and n.h >= 0
    else:
        assert len(c.descendants("shape:ab")) == 0


def test_html_text_is_a_tldraw_text_record_measured_and_remeasured_after_a_restyle():
    c = board(w=300)
    ex = Executor(c)
    r = ex.apply([{"op": "parse_html", "target": "shape:ab",
                   "html": "<p id='p' style='font-family: Georgia'>A paragraph that is too long for one line here</p>"
                           "<span id='s'>short</span>"}])
    assert r.ok, r.errors
    p, s = c.node("shape:p"), c.node("shape:s")
    # too wide for the artboard: fixed at its width, wrapped there; short text is auto-size
    assert p.props["autoSize"] is False and p.w == 300.0 and (p.style["font"], p.style["size"]) == ("serif", "s")
    assert (p.w, p.h) == text_shape_size(p.text, "serif", "s", 1.0, 300.0, False) and p.h > 24.0
    assert s.props["autoSize"] is True and (s.w, s.h) == text_shape_size("short", "sans", "s")
    r = ex.apply([{"op": "update_styles", "id": "p", "styles": {"font-family": "monospace", "font-size": "44px"}}])
    assert r.ok and any("font 'monospace' → 'mono'" in str(m) for m in r.mapped)
    p = c.node("shape:p")
    assert (p.style["font"], p.style["size"]) == ("mono", "xl")
    assert (p.w, p.h) == text_shape_size(p.text, "mono", "xl", 1.0, 300.0, False)


def test_a_restyled_or_retexted_html_text_restacks_its_block_flow():
    c = board(w=300)
    ex = Executor(c)
    r = ex.apply([{"op": "parse_html", "target": "shape:ab",
                   "html": "<div id='col' style='padding: 10px'><p id='a'>First paragraph</p><p id='b'>Second</p>"
                           "<div id='row' style='display: flex'><span id='s'>x</span><span>y</span></div></div>"
                           "<p id='after'>after the block</p>"}])
    assert r.ok, r.errors
    col, a, b, row = (c.node(f"shape:{k}") for k in ("col", "a", "b", "row"))
    before = {k: c.node(f"shape:{k}").y for k in ("b", "row", "after")}
    col_h, a_h = col.h, a.h
    r = ex.apply([{"op": "update_styles", "id": "a", "styles": {"font-size": "44px"}}])
    assert r.ok, r.errors
    dh = c.node("shape:a").h - a_h
    assert dh > 0
    assert c.node("shape:b").y == before["b"] + dh and c.node("shape:row").y == before["row"] + dh
    assert c.node("shape:col").h == col_h + dh
    assert c.node("shape:after").y == before["after"] + dh  # the fragment's flow under the artboard too
    assert c.node("shape:ab").h == 400  # the artboard keeps its size
    assert (c.node("shape:a").x, c.node("shape:a").y) == (a.x, a.y)  # the text keeps its corner
    r = ex.apply([{"op": "update_styles", "id": "a", "styles": {"font-size": "16px"}}])  # everything moves back up
    assert c.node("shape:a").h == a_h and c.node("shape:b").y == before["b"] and c.node("shape:col").h == col_h
