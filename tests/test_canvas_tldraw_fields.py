"""The tldraw importer's checked fields equal what the sanitizer makes of the raw record values."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from spatialobs.canvas.formats import tldraw as T
from spatialobs.canvas.document.model import build_canvas
from spatialobs.canvas.document.records import Page

PAGE = "page:p"

weird_number = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(2 ** 53 - 2, 2 ** 60),
                         st.sampled_from(["12", " 3.5px", "x", ""]), st.booleans(), st.none())
style_value = st.integers(0, 3).flatmap(
    lambda i: st.sampled_from(["black", "m", "draw", "Ωmega"]) if i else st.one_of(
        st.sampled_from(["12", "-1", ".5", " 7", "", "1e3"]), st.integers(-3, 3), st.floats(allow_nan=True), st.none(),
        st.booleans(), st.just([])))


ABSENT = object()


def mostly(good, bad):
    """``good`` three times in four; ``bad`` (or the key left out) otherwise."""
    return st.integers(0, 3).flatmap(lambda i: good if i else st.one_of(bad, st.just(ABSENT)))


@st.composite
def shape(draw, k):
    rec = {"id": f"shape:{k}", "typeName": "shape", "type": draw(st.sampled_from(["geo", "frame", "text", "line", "group"]))}
    for key, strat in (("parentId", mostly(st.just(PAGE), st.one_of(st.just(""), st.none(), st.integers()))),
                       ("index", mostly(st.sampled_from(["a1", "a2", "b0"]), st.one_of(st.just(""), st.none(), st.integers()))),
                       ("x", mostly(st.floats(-1e4, 1e4), weird_number)), ("y", mostly(st.integers(-10, 10), weird_number)),
                       ("rotation", mostly(st.floats(-7, 7), weird_number)),
                       ("opacity", mostly(st.floats(0, 1), st.one_of(st.floats(1, 2), weird_number))),
                       ("isLocked", mostly(st.booleans(), st.sampled_from(["true", 0, 2, None])))):
        value = draw(strat)
        if value is not ABSENT:
            rec[key] = value
    props = {"w": draw(st.one_of(st.floats(-5, 50), st.just(10))), "h": draw(st.floats(0, 50))}
    for key in draw(st.lists(st.sampled_from(T.STYLE_KEYS), max_size=4, unique=True)):
        props[key] = draw(style_value)
    if rec["type"] == "frame":
        props["name"] = draw(st.one_of(st.just(""), st.just("Frame"), st.none(), st.integers()))
    if draw(st.booleans()):
        props.pop("w")
    if rec["type"] == "text":
        props["text"] = draw(st.sampled_from(["", "hi", "two\nlines"]))
    if rec["type"] == "line":
        props["points"] = {"a": {"x": 0, "y": 0}, "b": {"x": draw(st.floats(-9, 9)), "y": 3}}
    rec["props"] = props
    return rec


def oracle_fields(rec, diags):
    """The record's raw values as the importer read them before it checked any itself."""
    f = dict(T.shape_fields(rec, diags))
    props = rec["props"]
    name = props.get("name") if f["type"] == "frame" else None
    f.update(parent=rec.get("parentId"), index=rec.get("index"), x=rec.get("x", 0.0), y=rec.get("y", 0.0),
             rotation=rec.get("rotation", 0.0), opacity=rec.get("opacity", 1.0), locked=rec.get("isLocked", False),
             style={k: props[k] for k in T.STYLE_KEYS if k in props}, name=name if isinstance(name, str) else None)
    return f


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=6, unique=True).flatmap(
    lambda ks: st.tuples(*[shape(k) for k in ks])))
def test_checked_fields_equal_the_sanitized_record(records):
    doc = {"tldrawFileFormatVersion": 1, "schema": {},
           "records": [{"id": PAGE, "typeName": "page", "name": "P", "index": "a1"}, *records]}
    try:
        got = T.from_tldraw(doc)
    except ValueError as exc:
        got_exc = str(exc)
    else:
        got_exc = None
    diags = []
    fields = [oracle_fields(rec, diags) for rec in records]
    try:
        want = build_canvas([Page(PAGE, "P", "a1")], fields, [], diags)
    except ValueError as exc:
        assert got_exc == str(exc)
        return
    assert got_exc is None
    assert list(got.nodes) == list(want.nodes)
    for nid, nd in want.nodes.items():
        g = got.nodes[nid]
        for key, value in nd.to_dict().items():
            assert same(getattr(g, key), value), (nid, key, getattr(g, key), value)
        assert list(vars(g)) == list(vars(nd))
    assert [str(d) for d in got.diagnostics] == [str(d) for d in want.diagnostics]
    for nid in want.nodes:
        assert got.page_bounds(nid) == want.page_bounds(nid)


coordinate = st.one_of(st.floats(-1e6, 1e6), st.integers(-100, 100), st.sampled_from([0.0, -0.0, 0, 1e308, -1e308]),
                       st.floats(allow_nan=True, allow_infinity=True))
point = st.fixed_dictionaries({"x": coordinate, "y": coordinate, "z": st.just(0.5)})
segment = st.fixed_dictionaries({"type": st.just("free"), "points": st.lists(point, max_size=8)})


@settings(max_examples=300, deadline=None)
@given(st.lists(segment, min_size=1, max_size=3), st.one_of(st.none(), st.floats(0.1, 4), st.just("2")),
       st.floats(0, 9), st.floats(0, 9))
def test_freehand_box_equals_the_numpy_reading(segments, scale, w, h):
    from types import MappingProxyType

    from spatialobs.canvas.document.shapes import local_box

    props = {"segments": segments} if scale is None else {"segments": segments, "scale": scale}
    # a segment that is a mapping but not a dict sends local_box down its numpy reading, and adds no point;
    # "freedraw": draw and highlight segments are read as tldraw's smoothed stroke first, and these two
    # raw readings are what other point types (and unreadable strokes) fall back to
    with np.errstate(over="ignore", invalid="ignore"):  # 1e308 * scale overflows to inf in both readings
        reference = local_box("freedraw", {**props, "segments": segments + [MappingProxyType({})]}, w, h)
        got = local_box("freedraw", props, w, h)
    assert [(v, math.copysign(1, v)) for v in got] == [(v, math.copysign(1, v)) for v in reference] or \
        (any(map(math.isnan, got)) and repr(got) == repr(reference))
