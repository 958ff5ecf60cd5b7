"""tldraw's record schema: the value mappings and the validator's rules, one by one."""

from __future__ import annotations

import copy

import pytest

from spatialobs import SpatialObsError
from spatialobs.canvas import Binding, Canvas, Node, Page, load
from spatialobs.canvas.formats import tldraw_schema as ts
from spatialobs.canvas.formats.tldraw import to_tldraw


# ---------------------------------------------------------------------- mappings
@pytest.mark.parametrize("value, to", [
    ("#ff0000", "red"), ("#f00", "red"), ("rgb(255, 0, 0)", "red"), ("red", "red"), ("#1d1d1d", "black"),
    ("#000", "black"), ("white", "white"), ("#fafafa", "white"), ("gray", "grey"), ("#4465e9", "blue"),
    ("navy", "blue"), ("hsl(120, 100%, 25%)", "light-green"), ("#ff6600", "orange"), ("#ffa500", "yellow"),
    ("purple", "violet"), ("#099268", "green"),
    ("light-blue", "light-blue"), ("RED", "red"), ("#ff000080", "red"),
])
def test_color_maps_to_the_nearest_palette_color(value, to):
    assert ts.map_color(value).to == to


def test_palette_colors_map_to_themselves_and_notes_say_what_changed():
    for name, hexv in ts.PALETTE.items():
        assert ts.map_color(hexv).to == name
        assert ts.map_color(name).note == ""
    assert ts.map_color("#ff0000").note == "color '#ff0000' → 'red'"


@pytest.mark.parametrize("value", ["banana", "", 12, None, "#12", "rgb(1,2)"])
def test_not_a_color_is_refused_naming_the_value(value):
    with pytest.raises(ts.UnmappableValueError, match="is not a color") as e:
        ts.map_color(value)
    assert isinstance(e.value, SpatialObsError) and isinstance(e.value, ValueError)


@pytest.mark.parametrize("value, shape, to", [
    (18, None, "s"), (20, None, "s"), (21, None, "s"), (22, None, "m"), (24, None, "m"), (30, None, "m"),
    (31, None, "l"), (40, None, "l"), (41, None, "xl"), (100, None, "xl"), ("24px", None, "m"),
    ("1.5rem", None, "m"), ("27pt", None, "l"), (22, "geo", "m"), (30, "geo", "xl"), (20, "arrow", "m"),
    ("large", None, "l"), ("x-large", None, "xl"), ("XL", None, "xl"), ("small", None, "s"),
])
def test_size_maps_to_the_nearest_step(value, shape, to):
    assert ts.map_size(value, shape).to == to


@pytest.mark.parametrize("value", [0, -3, "big-ish", True, None, float("nan")])
def test_not_a_size_is_refused(value):
    with pytest.raises(ts.UnmappableValueError, match="is not a size"):
        ts.map_size(value)


@pytest.mark.parametrize("value, to", [
    ("Arial", "sans"), ("Helvetica Neue, Arial, sans-serif", "sans"), ("Georgia", "serif"),
    ("'Times New Roman', serif", "serif"), ("Courier New", "mono"), ("ui-monospace, monospace", "mono"),
    ("Comic Sans MS", "draw"), ("cursive", "draw"), ("Virgil", "draw"), ("mono", "mono"), ("Serif", "serif"),
    ("Noto Sans", "sans"), ("tldraw_serif", "serif"),
])
def test_font_family_maps_to_one_of_four(value, to):
    assert ts.map_font(value).to == to


def test_fill_names_spellings_and_colors():
    assert [(m.key, m.to) for m in ts.map_fill("blue")] == [("fill", "solid"), ("color", "blue")]
    assert [(m.key, m.to) for m in ts.map_fill("#ff0000")] == [("fill", "solid"), ("color", "red")]
    assert ts.map_fill("transparent")[0].to == "none"
    assert ts.map_fill("hachure")[0].to == "pattern"
    assert ts.map_fill("lined-fill")[0].note == ""
    with pytest.raises(ts.UnmappableValueError, match="is not a fill"):
        ts.map_fill("sparkly")


def test_dash_align_geo_arrowhead_spellings():
    assert ts.map_dash("dash").to == "dashed" and ts.map_dash("draw").note == ""
    assert ts.map_align("left").to == "start" and ts.map_align("right").to == "end"
    assert ts.map_text_align("center").to == "middle" and ts.map_text_align("end-legacy").to == "end"
    assert ts.map_vertical_align("bottom").to == "end"
    assert ts.map_geo("circle").to == "ellipse" and ts.map_geo("x-box").note == ""
    assert ts.map_arrowhead(False).to == "none" and ts.map_arrowhead("bar").to == "bar"
    for fn, bad in ((ts.map_dash, "wavy"), (ts.map_align, "up"), (ts.map_vertical_align, "left"),
                    (ts.map_geo, "blob"), (ts.map_arrowhead, "rocket")):
        with pytest.raises(ts.UnmappableValueError, match=repr(bad)):
            fn(bad)


def test_map_style_explicit_color_wins_over_fill_color_and_keeps_unknown_keys():
    s, notes = ts.map_style({"fill": "blue", "color": "#0a9268", "padding": 8}, "geo")
    assert s == {"fill": "solid", "color": "green", "padding": 8}
    assert [n.key for n in notes] == ["fill", "color"]
    s, _ = ts.map_style({"align": "center", "fontSize": 44}, "text")
    assert s == {"textAlign": "middle", "size": "xl"}
    s, _ = ts.map_style({"backgroundColor": "#ffffff"}, "frame")
    assert s == {"backgroundColor": "#ffffff"}  # a frame has no fill: the CSS stays as it is


# ---------------------------------------------------------------------- validator
def _shape(t: str, versions=None, **props):
    return {"id": "shape:x", "typeName": "shape", "type": t, "x": 0, "y": 0, "rotation": 0, "index": "a1",
            "parentId": "page:p", "isLocked": False, "opacity": 1, "meta": {},
            "props": {**ts.default_props(t, versions), **props}}


@pytest.mark.parametrize("t", ["geo", "text", "note", "frame", "arrow", "line", "group"])
def test_defaults_are_valid_at_every_version(t):
    newest = ts.LATEST_VERSIONS[f"com.tldraw.shape.{t}"]
    for v in range(0, newest + 1):
        versions = ts.SchemaVersions.of({"schemaVersion": 2, "sequences": {
            "com.tldraw.shape": 4, "com.tldraw.store": 5, f"com.tldraw.shape.{t}": v}})
        assert ts.validate_record(_shape(t, versions), versions) == [], (t, v)


@pytest.mark.parametrize("field, value, needle", [
    ("color", "#ff0000", "expected one of black"), ("fill", "blue", "expected one of none"),
    ("size", 20, "expected one of s, m"), ("font", "Arial", "expected one of draw"), ("w", 0, "> 0"),
    ("growY", -1, ">= 0"), ("url", "javascript:alert(1)", "url"), ("geo", "blob", "expected one of cloud"),
    ("richText", "hi", "rich-text"), ("extra", 1, "unexpected property"),
])
def test_geo_prop_rules(field, value, needle):
    problems = ts.validate_record(_shape("geo", **{field: value}))
    assert len(problems) == 1 and problems[0].field == f"props.{field}" and needle in problems[0].message
    assert str(problems[0]).startswith("shape:x (geo) props.")


def test_missing_prop_and_record_fields():
    rec = _shape("text")
    del rec["props"]["autoSize"]
    rec["opacity"] = 2
    rec["index"] = "a10"
    rec["parentId"] = "p"
    fields = {p.field for p in ts.validate_record(rec)}
    assert fields == {"props.autoSize", "opacity", "index", "parentId"}
    assert ts.validate_record({**_shape("geo"), "id": "box"})[0].field == "id"


def test_old_schema_text_and_align_forms():
    v1 = ts.SchemaVersions.of({"schemaVersion": 1, "storeVersion": 4, "recordVersions": {
        "shape": {"version": 3, "subTypeVersions": {"text": 1, "geo": 7}}}})
    new_form = _shape("text")
    problems = ts.validate_record(new_form, v1)
    assert problems and "migration would fail" in problems[0].message
    old_form = _shape("text", v1)
    assert "align" in old_form["props"] and "text" in old_form["props"] and "textAlign" not in old_form["props"]
    assert ts.validate_record(old_form, v1) == []
    # store version 4: tldraw rewrites invalid index keys on load instead of refusing them
    assert ts.validate_record({**old_form, "index": "a10"}, v1) == []


def test_bindings_and_pages():
    b = {"id": "binding:b", "typeName": "binding", "type": "arrow", "fromId": "shape:a", "toId": "shape:b",
         "meta": {}, "props": {"terminal": "end", "normalizedAnchor": {"x": 0.5, "y": 0.5}, "isExact": False,
                               "isPrecise": False, "snap": "none"}}
    assert ts.validate_record(b) == []
    bad = copy.deepcopy(b)
    bad["props"]["focus"] = 0.3
    bad["props"]["terminal"] = "middle"
    assert {p.field for p in ts.validate_record(bad)} == {"props.focus", "props.terminal"}
    page = {"id": "page:p", "typeName": "page", "name": "P", "index": "a1", "meta": {}}
    assert ts.validate_record(page) == []
    assert ts.validate_record({**page, "name": 3})[0].field == "name"


def test_schema_versions_read_both_forms():
    v2 = ts.SchemaVersions.of({"schemaVersion": 2, "sequences": {"com.tldraw.shape.geo": 9}})
    assert v2.props_version("geo") == 9 and v2.props_version("note") == 0
    assert v2.props_version("arrow") == ts.LATEST_VERSIONS["com.tldraw.shape.arrow"]  # not retroactive
    assert ts.SchemaVersions.of(None).props_version("geo") == 12


def test_record_form_goes_down_to_old_versions():
    v = ts.SchemaVersions.of({"sequences": {"com.tldraw.shape.arrow": 3, "com.tldraw.shape.line": 1}})
    arrow = ts.default_props("arrow", v)
    assert arrow["start"] == {"type": "point", "x": 0, "y": 0} and "text" in arrow and "scale" not in arrow
    line = ts.default_props("line", v)
    assert set(line["handles"]) == {"start", "end"} and line["handles"]["start"]["type"] == "vertex"


# ---------------------------------------------------------------------- the write path
def test_to_tldraw_maps_style_values_and_keeps_the_raw_value_in_meta():
    c = Canvas()
    c.add(Node("shape:h", "text", "page:page", "a1", 0, 0, 100, 20, text="hi",
               style={"color": "#ff0000", "fontFamily": "Georgia", "fontSize": 40}, props={"tag": "h1"}))
    rec = next(r for r in to_tldraw(c)["records"] if r["id"] == "shape:h")
    assert (rec["props"]["color"], rec["props"]["font"], rec["props"]["size"]) == ("red", "serif", "l")
    assert rec["meta"]["spatialobs"]["style"]["color"] == "#ff0000"


def test_to_tldraw_refuses_what_cannot_be_mapped_naming_the_record():
    c = Canvas()
    c.add(Node("shape:g", "geo", "page:page", "a1", 0, 0, 10, 10, style={"color": "banana"}))
    with pytest.raises(ts.InvalidRecordError, match=r"shape:g \(geo\) props.color") as e:
        to_tldraw(c)
    assert isinstance(e.value, SpatialObsError)


def test_to_tldraw_gives_ids_and_index_keys_the_form_tldraw_wants():
    # ids without tldraw's prefixes get them wherever they are referenced; a sibling
    # group holding a key tldraw would refuse is renumbered in its paint order
    c = Canvas()
    c.add(Page("p", "P", "a1"))
    c.add(Node("f", "frame", "p", "a70", 0, 0, 100, 100))
    c.add(Node("g", "geo", "f", "a70", 10, 10, 10, 10))
    c.add(Node("shape:g", "geo", "f", "a2", 30, 30, 10, 10))
    c.add(Node("a", "arrow", "p", "a80", 0, 0, 0, 0, props={"start": {"x": 0, "y": 0}, "end": {"x": 5, "y": 5}}))
    c.add(Binding("b", "arrow", "a", "g", "end", (0.5, 0.5), False))
    out = to_tldraw(c)
    ids = {r["id"]: r for r in out["records"]}
    assert {"page:p", "shape:f", "shape:g~1", "shape:g", "shape:a", "binding:b"} <= set(ids)
    assert ids["shape:f"]["parentId"] == "page:p" and ids["shape:g~1"]["parentId"] == "shape:f"
    assert (ids["binding:b"]["fromId"], ids["binding:b"]["toId"]) == ("shape:a", "shape:g~1")
    assert ids["shape:g"]["index"] < ids["shape:g~1"]["index"]  # "a2" < "a70": painted below
    assert ts.validate_records(out["records"], out["schema"]) == []
    back = load(out)
    assert back.paint_order("page:p") == ["shape:f", "shape:g", "shape:g~1", "shape:a"]
    assert back.page_bounds("shape:g~1") == c.page_bounds("g")
