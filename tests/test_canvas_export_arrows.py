"""Writers and many arrows (issue 34): each arrow's ends read once per export, the same values.

``arrow_ends`` (what the Excalidraw writer and ``unbind_patch`` read) stops before an arc
is sampled and a label placed; its oracle is the full resolution, ``arrow_geometry``.
"""

from __future__ import annotations

import json
import math
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas import Canvas, Executor, Node, load
from spatialobs.canvas.document import arrows
from spatialobs.canvas.document.arrows import arrow_ends, arrow_geometry, unbind_patch
from spatialobs.canvas.document.records import Binding
from spatialobs.canvas.formats import excalidraw


def bits(v):
    """A value by its bits (floats and ``-0.0`` included), for comparisons to the bit.

    Every NaN is one value: the sign and payload of a NaN that arithmetic makes depend on which
    operand was NaN and on the processor (x86 makes its default NaN negative), not on the code.
    """
    if isinstance(v, float):
        return b"nan" if math.isnan(v) else struct.pack("<d", v)
    if isinstance(v, (tuple, list)):
        return tuple(bits(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, bits(x)) for k, x in sorted(v.items()))
    return v


finite = st.floats(-3e3, 3e3, allow_nan=False)
arrow_props = st.fixed_dictionaries({
    "start": st.fixed_dictionaries({"x": finite, "y": finite}),
    "end": st.fixed_dictionaries({"x": finite, "y": finite}),
    "bend": st.one_of(st.just(0), st.floats(-400, 400)),
    "arrowheadStart": st.sampled_from(["none", "arrow", "dot"]),
    "arrowheadEnd": st.sampled_from(["none", "arrow", "bar"]),
    "kind": st.sampled_from(["arc", "elbow"]),
    "size": st.sampled_from(["s", "m", "l", "xl"]),
})


@st.composite
def canvases(draw):
    """Two or three shapes (some turned, some tiny or far) and arrows bound to them or free, some labelled."""
    c = Canvas()
    shapes = []
    for k in range(draw(st.integers(2, 3))):
        w, h = draw(st.sampled_from([(0.0, 0.0), (1.0, 1.0), (120.0, 80.0), (300.0, 40.0)]))
        c.add(Node(f"shape:s{k}", "geo", "page:page", f"a{k}", draw(finite), draw(finite),
                   w, h, rotation=draw(st.sampled_from([0.0, 0.5, -2.0])),
                   props={"geo": draw(st.sampled_from(["rectangle", "ellipse", "diamond"]))}))
        shapes.append(f"shape:s{k}")
    ids = []
    for k in range(draw(st.integers(1, 4))):
        aid = f"shape:a{k}"
        c.add(Node(aid, "arrow", "page:page", f"b{k}", draw(finite), draw(finite), rotation=draw(st.sampled_from([0.0, 1.0])),
                   text=draw(st.sampled_from([None, "", "a label", "a much longer label that wraps " * 3])),
                   props=draw(arrow_props)))
        for term in ("start", "end"):
            if draw(st.booleans()):
                c.add(Binding(f"b{k}{term}", "arrow", aid, draw(st.sampled_from(shapes)), term,
                              (draw(st.floats(0, 1)), draw(st.floats(0, 1))), draw(st.booleans())))
        ids.append(aid)
    return c, ids


@settings(max_examples=60, deadline=None)
@given(canvases())
def test_arrow_ends_are_the_full_resolutions_ends_to_the_bit(drawn):
    c, ids = drawn
    for aid in ids:
        g = arrow_geometry(c, aid)
        assert bits(arrow_ends(c, aid)) == bits((g.start, g.end)), aid


def _unbind_patch_oracle(c, arrow_id, terminals):
    """``unbind_patch`` as it was: from the full resolution."""
    saved = arrows._course

    def full(props, axf, s, e):
        arrows._course = saved
        try:
            g = arrows.resolve_arrow(props, axf, s, e, c.nodes[arrow_id].text)
        finally:
            arrows._course = full
        return g, [], None

    arrows._course = full
    try:
        return unbind_patch(c, arrow_id, terminals)
    finally:
        arrows._course = saved


@settings(max_examples=40, deadline=None)
@given(canvases())
def test_unbind_patch_is_the_one_the_full_resolution_gives(drawn):
    c, ids = drawn
    for aid in ids:
        terms = sorted({b.terminal for b in c.bindings.values() if b.from_id == aid})
        if terms:
            assert bits(unbind_patch(c, aid, terms)) == bits(_unbind_patch_oracle(c, aid, terms))


def _previous_resolved_ends(self, node, st):
    if st is not self.cur or node.type != "arrow" or isinstance(node.props.get("points"), list):
        return None
    if not any(b.from_id == node.id for b in self.canvas._bindings.values()):
        return None
    g = arrow_geometry(self.canvas, node.id)
    return (float(g.start[0]), float(g.start[1])), (float(g.end[0]), float(g.end[1]))


@settings(max_examples=30, deadline=None)
@given(canvases())
def test_the_excalidraw_writer_writes_what_it_wrote_with_a_resolution_per_read(drawn):
    c, _ = drawn
    now = json.dumps(c.to_excalidraw())
    saved = excalidraw._Exporter._resolved_ends
    excalidraw._Exporter._resolved_ends = _previous_resolved_ends
    try:
        assert json.dumps(c.to_excalidraw()) == now
    finally:
        excalidraw._Exporter._resolved_ends = saved


def test_a_labelled_arrow_is_resolved_once_per_export_without_its_label(monkeypatch):
    c = Canvas()
    c.add(Node("shape:a", "geo", "page:page", "a1", 0, 0, 100, 100, props={"geo": "rectangle"}))
    c.add(Node("shape:b", "geo", "page:page", "a2", 0, 3e8, 100, 100, props={"geo": "rectangle"}))
    Executor(c).apply([{"op": "create_arrow", "id": f"ar{k}", "from": "shape:a", "to": "shape:b", "text": "to",
                        "bend": 10} for k in range(50)])
    c.geometry()
    calls = []
    monkeypatch.setattr(arrows, "resolve_arrow", lambda *a, **k: calls.append(a) or (_ for _ in ()).throw(
        AssertionError("the writer resolved a whole arrow")))
    ends = []
    real = arrows._course
    monkeypatch.setattr(arrows, "_course", lambda *a: ends.append(a) or real(*a))
    doc = c.to_excalidraw()
    assert not calls and len(ends) == 50  # once per arrow, for its element and its label alike
    assert sum(1 for e in doc["elements"] if e["type"] == "arrow") == 50


def test_a_reply_of_thousands_of_new_elements_is_written_in_paint_order():
    # new elements follow one another after the source's last element: the order used to
    # be walked by recursion, which a reply of about a thousand elements took too deep
    c = load({"type": "excalidraw", "elements": [
        {"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 10, "height": 10}]})
    Executor(c).apply([{"op": "create_shape", "id": f"s{k}", "shape": "rectangle", "x": 20 * k, "y": 0, "w": 10,
                        "h": 10, "text": f"t{k}"} for k in range(1500)])
    ids = [e["id"] for e in c.to_excalidraw()["elements"]]
    assert len(ids) == 1 + 2 * 1500 and ids[0] == "a"
    shapes = [i for i in ids if not i.endswith("-label")]
    assert shapes == ["a"] + [i for i in c.paint_order(c.current_page or "page:page") if i != "a"]
    for k in range(1, len(ids)):  # each label right after its shape
        if ids[k].endswith("-label"):
            assert ids[k] == f"{ids[k - 1]}-label"


def test_ends_of_an_arrow_whose_arc_is_sampled_at_the_cap():
    # a bent arrow to a shape 3e8 away: its arc would be sampled in MAX_ARC_SPANS spans; its ends need none
    c = Canvas()
    c.add(Node("shape:a", "geo", "page:page", "a1", 0, 0, 100, 100, props={"geo": "rectangle"}))
    c.add(Node("shape:b", "geo", "page:page", "a2", 0, 3e8, 100, 100, props={"geo": "rectangle"}))
    c.add(Node("shape:r", "arrow", "page:page", "a3", 50, 50, text="far", props={"bend": 10}))
    c.add(Binding("bs", "arrow", "shape:r", "shape:a", "start"))
    c.add(Binding("be", "arrow", "shape:r", "shape:b", "end"))
    g = arrow_geometry(c, "shape:r")
    assert len(g.vertices) > arrows.MAX_ARC_SPANS
    s, e = arrow_ends(c, "shape:r")
    assert bits((s, e)) == bits((g.start, g.end)) and all(math.isfinite(v) for v in s + e)


def _naive_interp(pts, t):
    """The point a fraction ``t`` along a polyline: every length measured anew, a loop (the code before issue 34)."""
    if t <= 0:
        return pts[0]
    lens = [math.hypot(pts[i][0] - pts[i + 1][0], pts[i][1] - pts[i + 1][1]) for i in range(len(pts) - 1)]
    goal = t * sum(lens)
    run = 0.0
    for i, d in enumerate(lens):
        if run + d >= goal:
            if d == 0:
                return pts[i]
            k = (goal - run) / d
            return (pts[i][0] + (pts[i + 1][0] - pts[i][0]) * k, pts[i][1] + (pts[i + 1][1] - pts[i][1]) * k)
        run += d
    return pts[-1]


coord = st.one_of(st.floats(-100, 100), st.sampled_from([0.0, -0.0, 1e-300, 1e300, math.inf, -math.inf, math.nan]))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(coord, coord), min_size=1, max_size=8),
       st.one_of(st.floats(-1, 2), st.sampled_from([0.0, 1.0, math.nan, math.inf, 1e-12])))
def test_a_point_along_a_polyline_measured_once_is_the_naive_one_to_the_bit(pts, t):
    runs = arrows._Runs(pts)
    assert bits(arrows._interp(pts, t, runs)) == bits(_naive_interp(pts, t)) == bits(arrows._interp(pts, t))
