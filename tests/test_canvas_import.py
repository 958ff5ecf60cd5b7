"""Importers against real files and what tldraw itself computes for them."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from conftest import shared_files
from spatialobs import InvalidInputError
from spatialobs.canvas import Canvas, Node, Viewport, load
from tests.reference.canvas_oracle import corners_box

CANVASES = shared_files("canvases")
TLDR = shared_files("canvases", "*.tldr")
EXCALIDRAW = shared_files("canvases", "*.excalidraw")

# Text bounds come from real font measurement in tldraw; ours from the same layout over
# the fonts' metrics (the draw font's glyph alternates differ by about 1 %). Tolerance,
# per file: the median text box is within 0.5 % of tldraw's (relative to its larger
# side), none is off by more than 5 %, and an unrotated text's top-left corner is exact.
TEXT_MEDIAN_TOL = 0.005
TEXT_MAX_TOL = 0.05
# Freehand strokes: we rebuild tldraw's smoothed stroke points (and its highlighter
# outline and dot circles), so a draw or highlight box is within 2 units of tldraw's.
STROKE_TOL = 2.0
# Arcs: tldraw's bounds come from sampled arc vertices, which we sample the same way.
ARC_TOL = 1e-6



def raw(shared_data, name):
    return json.loads((shared_data / "canvases" / name).read_text(encoding="utf-8"))


def truth(shared_data, name):
    return json.loads((shared_data / "tldraw-truth" / (name + ".json")).read_text(encoding="utf-8"))


def box_of(b):
    return (b["x"], b["y"], b["x"] + b["w"], b["y"] + b["h"])


@pytest.mark.parametrize("path", CANVASES, ids=lambda p: p.name[:40])
def test_every_real_file_loads(path):
    c = load(path)
    assert len(c) > 0 and c.pages
    for pid in c.page_ids():
        cols = c.columns(pid)
        assert np.isfinite(cols.bounds).all()
        assert (cols.bounds[:, 2] >= cols.bounds[:, 0]).all() and (cols.bounds[:, 3] >= cols.bounds[:, 1]).all()
        assert sorted(cols.ids) == sorted(n.id for n in c.nodes.values() if c.page_of(n.id) == pid)


@pytest.mark.parametrize("name, shapes, pages, bindings", [
    ("1797127235__argus__architecture.tldr", 29, 1, 26),
    ("3dyuval__taramti.com__wireframes.tldr", 110, 1, 4),       # in-props bindings, 4 terminals bound
    ("QuentinJoanon__VictoryZone-Front__wireframe.tldr", 2504, 2, 0),
    ("a-type__react-space__design.tldr", 39, 1, 13),
    ("adrianlyjak__obsidian-aloud-tts__audio-dependencies.tldr", 63, 1, 40),
    ("kitschpatrol__tldraw-cli__2024-01-test-sketch-three-frames.tldr", 6, 1, 0),
    ("metatypedev__ghjk__architecture.tldr", 73, 1, 12),
    ("pyrbin__flick-the-switch__design.tldr", 508, 1, 2),
])
def test_tldraw_counts(shared_data, name, shapes, pages, bindings):
    c = load(shared_data / "canvases" / name)
    assert (len(c.nodes), len(c.pages), len(c.bindings)) == (shapes, pages, bindings)
    assert c.diagnostics == []


def test_tldraw_frames_text_camera(shared_data):
    name = "kitschpatrol__tldraw-cli__2024-01-test-sketch-three-frames.tldr"
    c = load(shared_data / "canvases" / name)
    t = c.node("shape:5x4JDQjhXIjNiFhRNGS4I")
    assert t.parent == "shape:z7fhvF6Q8l_vYHNakVxeK" and t.text == 'Greetings from\n"Frame 2"'
    assert c.node("shape:z7fhvF6Q8l_vYHNakVxeK").name == "Frame 2"
    # the rotated text inside frame 2, composed by hand from the file's numbers
    frame_x, frame_y = 800.9999999999999, 291
    expect = corners_box(frame_x + 85.89043103867421, frame_y + 129.58686526926294, 5.8817595792208905, 0, 0, t.w, t.h)
    np.testing.assert_allclose(c.page_bounds(t.id), expect, rtol=1e-12)
    # camera x=-158.35656394411, y=4.031936639816706, z=1 on a 1512x892 screen
    assert c.viewport() == Viewport(158.35656394411, -4.031936639816706, 1512.0, 892.0)
    assert c.selected() == ()
    # a frame clips its child: visible bounds are the intersection with the frame's bounds
    c.update("shape:5GI4apFgiHzaLrrHpyIws", y=-10.0)
    pb = c.page_bounds("shape:5GI4apFgiHzaLrrHpyIws")
    fb = c.page_bounds("shape:x8z3Qf7Hgw4Qqp2AC-eet")
    assert pb[1] < fb[1] == 291.0
    assert c.visible_bounds("shape:5GI4apFgiHzaLrrHpyIws") == (
        max(pb[0], fb[0]), max(pb[1], fb[1]), min(pb[2], fb[2]), min(pb[3], fb[3]))


def test_tldraw_zoomed_camera_and_screen(shared_data):
    c = load(shared_data / "canvases" / "metatypedev__ghjk__architecture.tldr")
    z = 0.20371621082755806
    vp = c.viewport()
    assert vp is not None
    np.testing.assert_allclose([vp.x, vp.y, vp.w, vp.h],
                               [-1974.42078752519, 532.7306268850487, 1182.4000244140625 / z, 722.4000244140625 / z])


def test_tldraw_in_props_bindings_and_rich_text(shared_data):
    c = load(shared_data / "canvases" / "metatypedev__ghjk__architecture.tldr")
    b = c.bindings["binding:shape:Q1w2WJtrfAeEv2cpFlUTa:end"]
    assert (b.from_id, b.to_id, b.terminal, b.precise) == (
        "shape:Q1w2WJtrfAeEv2cpFlUTa", "shape:LFb7zSrdMq2o1kq7ylnE3", "end", True)
    assert b.anchor == (0.07387020600491928, 0.5321404470829494)
    a = load(shared_data / "canvases" / "1797127235__argus__architecture.tldr")
    assert a.node("shape:sqlite").text == "SQLite\uff08node:sqlite\uff09\nitems \u00b7 stories \u00b7 briefs\nfeedback \u00b7 \u8fd0\u884c\u8bb0\u5f55"
    assert a.node("shape:sqlite").style == {"color": "yellow", "labelColor": "black", "fill": "semi", "dash": "draw",
                                            "size": "m", "font": "draw", "align": "middle", "verticalAlign": "middle"}


def _exact_kind(c, s):
    """Whether tldraw's bounds for this truth shape are reproducible exactly (not text/draw/bound arrows)."""
    if s["type"] in ("text", "draw", "highlight"):
        return False
    if s["type"] == "group":  # a union inherits its members' estimates
        return all(c.node(k).type not in ("text", "draw", "highlight", "arrow") for k in c.descendants(s["id"]))
    if s["type"] == "arrow":  # exact unless a target's size (text, freehand) or a label's is estimated
        targets = [c.node(b.to_id).type for b in c.bindings.values() if b.from_id == s["id"]]
        return not any(t in ("text", "draw", "highlight") for t in targets) and not s.get("text")
    return True


@pytest.mark.parametrize("path", TLDR, ids=lambda p: p.name[:40])
def test_page_geometry_matches_tldraw(shared_data, path):
    c = load(path)
    t = truth(shared_data, path.name)
    rewritten = {r["id"] for r in t["indexKeysRewritten"]}
    checked = 0
    text_err = []
    for page in t["pages"]:
        ours = [i for i in c.paint_order(page["id"]) if i not in rewritten]
        theirs = [s["id"] for s in page["shapes"] if s["id"] not in rewritten]
        assert ours == theirs
        for s in page["shapes"]:
            tb = box_of(s["pageBounds"])
            ob = c.page_bounds(s["id"])
            kind = s["type"]
            if _exact_kind(c, s):
                tol = ARC_TOL if kind == "arrow" and abs(c.node(s["id"]).props.get("bend", 0)) >= 8 else 1e-6
                np.testing.assert_allclose(ob, tb, atol=tol, rtol=1e-9, err_msg=s["id"])
                mb = s["maskedPageBounds"]
                vb = c.visible_bounds(s["id"])
                if mb is None:
                    assert vb is None, s["id"]
                else:
                    np.testing.assert_allclose(vb, box_of(mb), atol=tol, rtol=1e-9, err_msg=s["id"])
                checked += 1
            elif kind == "text":
                size = max(s["pageBounds"]["w"], s["pageBounds"]["h"])
                text_err.append(max(abs(u - v) for u, v in zip(ob, tb)) / size)
                if s["pageRotation"] == 0:
                    assert ob[:2] == pytest.approx(tb[:2], abs=1e-6), s["id"]
            elif kind in ("draw", "highlight"):
                np.testing.assert_allclose(ob, tb, atol=STROKE_TOL, rtol=0, err_msg=s["id"])
            assert c.page_rotation(s["id"]) == pytest.approx(s["pageRotation"], abs=1e-12)
            frames = s["frameAncestorIds"]
            assert c.frame_of(s["id"]) == (frames[0] if frames else None)
            groups = s["groupAncestorIds"]
            assert c.group_of(s["id"]) == (groups[0] if groups else None)
            assert c.columns(page["id"]).opacity[c.columns(page["id"]).position(s["id"])] == s["opacity"]
    assert checked > 0
    if text_err:
        assert float(np.median(text_err)) <= TEXT_MEDIAN_TOL and max(text_err) <= TEXT_MAX_TOL


def test_excalidraw_rotation_groups_bound_text(shared_data):
    name = "0xPolygon__kurtosis-cdk__architecture-diagram.excalidraw"
    c = load(shared_data / "canvases" / name)
    assert len(c.bindings) == 32 and c.source_format == "excalidraw"
    # 171 elements - 35 bound texts + 26 synthesized groups
    assert len(c.nodes) == 171 - 35 + 26
    e = c.node("INshqQFaWrAb3EpuWbzw0")  # ellipse rotated about its center, in two nested groups
    assert e.parent == "group:APMDBQTn9lpWi9BUzHR4d" and c.node(e.parent).parent == "group:Ro8WFyZS-PVneNE3bLuOs"
    x, y, w, h, a = 710.4681267731883, 2519.4996210577624, 11.226103154161754, 12.183758484455605, 6.239590202363168
    cx, cy = x + w / 2, y + h / 2
    # bounded by the rotated ellipse itself, as Excalidraw bounds it, inside its rotated box
    ex, ey = math.hypot(w / 2 * math.cos(a), h / 2 * math.sin(a)), math.hypot(w / 2 * math.sin(a), h / 2 * math.cos(a))
    np.testing.assert_allclose(c.page_bounds(e.id), (cx - ex, cy - ey, cx + ex, cy + ey), rtol=1e-12)
    box = corners_box(cx, cy, a, -w / 2, -h / 2, w / 2, h / 2)
    assert box[0] < cx - ex and box[2] > cx + ex
    assert c.node("LtMNf_24nG6tjBYCu3FkB").text == "CDK / Bridge Infra"
    g = c.page_bounds("group:APMDBQTn9lpWi9BUzHR4d")
    kids = [c.page_bounds(k) for k in c.children("group:APMDBQTn9lpWi9BUzHR4d")]
    np.testing.assert_allclose(g, (min(k[0] for k in kids), min(k[1] for k in kids),
                                   max(k[2] for k in kids), max(k[3] for k in kids)), rtol=1e-12)
    # array order is paint order for the elements themselves
    d = raw(shared_data, name)
    live = [el["id"] for el in d["elements"] if not el.get("isDeleted") and el["id"] in c.nodes]
    painted = [i for i in c.paint_order() if i in set(live)]
    assert painted == live


def test_excalidraw_frames_and_bindings(shared_data):
    c = load(shared_data / "canvases" / "kjameer0__db-excalidraw__system-design.excalidraw")
    assert c.node("7x4LV9WQ4groWsYpc3MN0").parent == "uLJwHV6BQRqVoKOBp-WRl"
    assert c.node("uLJwHV6BQRqVoKOBp-WRl").name == "frontend" and c.node("m-Qtsv1ESr_P4Or0IdJUH").text == "frontend"
    b = c.bindings["btg-QJNC0QkYVqp4SbV_W:start"]
    assert (b.to_id, b.terminal, b.precise) == ("m-Qtsv1ESr_P4Or0IdJUH", "start", True)
    el = next(e for e in raw(shared_data, "kjameer0__db-excalidraw__system-design.excalidraw")["elements"]
              if e["id"] == "7x4LV9WQ4groWsYpc3MN0")
    np.testing.assert_allclose(c.page_bounds(el["id"]), (el["x"], el["y"], el["x"] + el["width"], el["y"] + el["height"]),
                               rtol=1e-12)
    assert c.node(el["id"]).opacity == el["opacity"] / 100
    old = load(shared_data / "canvases" / "automationcloud__robot__diagram.excalidraw")
    assert old.node("bH0x4wZiYdb8dGba-R7kM").type == "line"  # legacy "draw"


# ---------------------------------------------------------------- tldraw export

@pytest.mark.parametrize("path", TLDR, ids=lambda p: p.name[:40])
def test_unchanged_export_is_verbatim_and_reloads_equal(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    c = load(copy.deepcopy(doc))
    out = c.to_tldraw()
    assert out == doc
    again = load(json.loads(json.dumps(out)))
    assert again == c


def test_edit_export_changes_only_the_edited_record(shared_data):
    name = "metatypedev__ghjk__architecture.tldr"
    doc = raw(shared_data, name)
    c = load(copy.deepcopy(doc))
    sid = "shape:46sppVpmqc9WojTPK0W_A"
    c.update(sid, x=1000.0, text="Ports", style={"color": "red"})
    c.remove("shape:LcAwS2a0TvqQiuUEi5lxz")
    new = c.add(Node("shape:new", "geo", "page:page", None, 5, 6, 70, 80, text="fresh"))  # type: ignore[arg-type]
    out = c.to_tldraw()
    by_id = {r["id"]: r for r in out["records"]}
    for r in doc["records"]:
        if r["id"] == sid:
            got = by_id[sid]
            assert got["x"] == 1000.0 and got["props"]["text"] == "Ports" and got["props"]["color"] == "red"
            assert got["meta"] == r["meta"] and got["props"]["geo"] == r["props"]["geo"]
        elif r["id"] == "shape:LcAwS2a0TvqQiuUEi5lxz":
            assert r["id"] not in by_id
        else:
            assert by_id[r["id"]] == r
    rec = by_id["shape:new"]
    assert rec["props"]["w"] == 70 and rec["props"]["h"] == 80 and rec["props"]["text"] == "fresh"
    assert set(rec["props"]) == set(next(r for r in doc["records"] if r.get("type") == "geo")["props"])
    back = load(out)
    assert back.node(sid).x == 1000.0 and back.node(sid).text == "Ports" and back.node(new.id).text == "fresh"
    assert back.page_bounds("shape:new") == (5.0, 6.0, 75.0, 86.0)
    assert {k: v for k, v in back.nodes.items() if k not in ("shape:new", sid)} == {
        k: v for k, v in c.nodes.items() if k not in ("shape:new", sid)}
    assert back.node(sid).style == c.node(sid).style and back.page_bounds(sid) == c.page_bounds(sid)
    assert load(back.to_tldraw()) == back


def test_fresh_canvas_exports_tldraw_that_reloads():
    c = Canvas()
    c.add(Node("shape:f", "frame", "page:page", None, 0, 0, 300, 200, name="F"))  # type: ignore[arg-type]
    c.add(Node("shape:a", "geo", "shape:f", None, 10, 10, 50, 40, text="a\nb", style={"color": "blue"}))  # type: ignore[arg-type]
    c.add(Node("shape:t", "text", "page:page", None, 400, 0, 120, 32.4, text="hello"))  # type: ignore[arg-type]
    out = c.to_tldraw()
    assert out["schema"]["schemaVersion"] == 2
    back = load(out)
    assert back.node("shape:a").text == "a\nb" and back.node("shape:a").style["color"] == "blue"
    assert back.page_bounds("shape:a") == c.page_bounds("shape:a") and back.node("shape:f").name == "F"


# ---------------------------------------------------------------- bad input

def _doc(*shapes, extra=()):
    return {"tldrawFileFormatVersion": 1, "schema": {"schemaVersion": 2, "sequences": {}},
            "records": [{"id": "page:p", "typeName": "page", "name": "P", "index": "a1"}, *shapes, *extra]}


def _shape(sid, parent="page:p", **kw):
    r = {"id": sid, "typeName": "shape", "type": "geo", "parentId": parent, "index": "a1", "x": 0, "y": 0,
         "rotation": 0, "props": {"w": 10, "h": 10}}
    r.update(kw)
    return r


def test_truncated_json_is_a_clear_error(tmp_path, shared_data):
    p = tmp_path / "cut.tldr"
    p.write_bytes((shared_data / "canvases" / "metatypedev__ghjk__architecture.tldr").read_bytes()[:5000])
    with pytest.raises(InvalidInputError, match=r"cut\.tldr is not valid JSON"):
        load(p)
    with pytest.raises(InvalidInputError, match="cannot read canvas file"):
        load(tmp_path / "missing.tldr")
    with pytest.raises(InvalidInputError, match="unrecognized canvas document"):
        load({"hello": 1})
    with pytest.raises(InvalidInputError, match="must be a JSON object"):
        load("[1, 2]")


def test_cycles_dangling_duplicates_are_diagnosed():
    doc = _doc(_shape("shape:a", "shape:b"), _shape("shape:b", "shape:a"), _shape("shape:c", "shape:gone"),
               _shape("shape:c"), _shape("shape:d", type="mystery"),
               extra=[{"id": "binding:x", "typeName": "binding", "type": "arrow", "fromId": "shape:a", "toId": "shape:zz",
                       "props": {"terminal": "end"}}])
    c = load(doc)
    codes = sorted(d.code for d in c.diagnostics)
    assert codes == ["dangling_binding", "dangling_parent", "duplicate_id", "parent_cycle", "unknown_type"]
    cyc = next(d for d in c.diagnostics if d.code == "parent_cycle")
    assert cyc.record == "shape:a" and "shape:b" in cyc.message
    assert c.node("shape:a").parent == "page:p" and c.node("shape:b").parent == "shape:a"
    assert c.node("shape:c").parent == "page:p" and c.page_bounds("shape:d") == (0.0, 0.0, 10.0, 10.0)
    assert c.paint_order() and "binding:x" not in c.bindings


def test_strings_for_numbers_and_missing_fields():
    doc = _doc(_shape("shape:a", x="12.5", y="abc", props={"w": "30", "h": None}),
               {"id": "shape:nofields", "typeName": "shape"}, {"typeName": "shape"}, "junk")
    c = load(doc)
    a = c.node("shape:a")
    assert (a.x, a.y, a.w, a.h) == (12.5, 0.0, 30.0, 0.0)
    msgs = [str(d) for d in c.diagnostics]
    assert any("shape:a" in m and "'y'" in m for m in msgs)
    assert any(d.code == "invalid_record" for d in c.diagnostics)
    n = c.node("shape:nofields")
    assert n.type == "unknown" and n.parent == "page:p"


def test_non_finite_geometry_is_repaired_with_a_diagnostic():
    c = load(_doc(_shape("shape:a", x=float("nan"), rotation=float("inf"), props={"w": -5, "h": 3})))
    n = c.node("shape:a")
    assert (n.x, n.rotation, n.w) == (0.0, 0.0, 0.0)
    assert {d.code for d in c.diagnostics} >= {"invalid_geometry", "negative_size"}


def test_shapes_whose_props_are_not_an_object_export_after_edits():
    # such props are ignored on import; export must neither copy them into a new
    # shape of the same type nor choke on them when the shape itself changed
    c = load(_doc(_shape("shape:a", props=None), _shape("shape:b", props=["junk"])))
    c.add(Node("shape:new", "geo", "page:p", None, 5, 6, 70, 80, text="fresh"))  # type: ignore[arg-type]
    c.update("shape:b", x=5.0)
    out = c.to_tldraw()
    by_id = {r["id"]: r for r in out["records"]}
    assert by_id["shape:new"]["props"]["w"] == 70
    assert by_id["shape:b"]["x"] == 5.0 and isinstance(by_id["shape:b"]["props"], dict)
    back = load(out)
    assert back.node("shape:new").text == "fresh" and back.page_bounds("shape:new") == (5.0, 6.0, 75.0, 86.0)
    assert back.node("shape:b").x == 5.0


def test_excalidraw_bad_elements():
    c = load({"type": "excalidraw", "elements": [
        {"id": "a", "type": "rectangle", "x": "1", "y": 2, "width": 3, "height": 4, "frameId": "nope"},
        {"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 1, "height": 1},
        {"id": "gone", "type": "rectangle", "isDeleted": True, "x": 0, "y": 0, "width": 1, "height": 1},
        {"id": "arr", "type": "arrow", "x": 0, "y": 0, "points": [[0, 0], [5, 5]], "endBinding": {"elementId": "gone"}},
        {"type": "rectangle"}]})
    assert c.page_bounds("a") == (1.0, 2.0, 4.0, 6.0)
    assert {d.code for d in c.diagnostics} == {"dangling_parent", "duplicate_id", "dangling_binding", "invalid_record"}
    assert "gone" not in c.nodes
