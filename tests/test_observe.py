"""observe / Observation against the pure-Python oracle, plus contract, limits, action frame and bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from spatialobs import InvalidInputError, OutOfRangeError, SpatialObsError
from spatialobs.canvas import GUIDE, Canvas, Node, Observation, Viewport, load, observe
from spatialobs.canvas.observe import resolve_viewport
from spatialobs.canvas.document.records import Binding
from spatialobs.canvas.scenarios.handoff import diagram_workspace, remote_team_handoff, synthetic_workspace
from tests.conftest import shared_files
from tests.reference.observe_oracle import observe_naive

CANVASES = shared_files("canvases")
SMALL = [p for p in CANVASES if p.stat().st_size < 400_000]


def both(c, viewport=None, **kw):
    vp = resolve_viewport(c, viewport, kw.get("page") or c.current_page)
    return observe(c, vp, **kw).to_dict(), observe_naive(c, (vp.x, vp.y, vp.w, vp.h), **kw)


@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.name[:40])
def test_real_canvas_matches_oracle(shared_data, path):
    c = load(path)
    got, want = both(c)
    assert got == want
    assert len(got["objects"]) + got["omitted"]["objects"] == len(c.paint_order())


@pytest.mark.parametrize("path", SMALL[:6], ids=lambda p: p.name[:40])
def test_real_canvas_options_match_oracle(shared_data, path):
    c = load(path)
    ids = c.paint_order()
    kw = dict(selected=ids[-1:], context=ids[:2], max_objects=12, max_relations=25, origin=(13.3, -7.6),
              include_bounds=True)
    got, want = both(c, **kw)
    assert got == want
    assert len(got["relations"]) <= 25
    assert {o["id"] for o in got["objects"]} >= set(ids[-1:] + ids[:2])


@pytest.mark.parametrize("seed", range(6))
def test_synthetic_matches_oracle_with_random_viewports(seed):
    c = synthetic_workspace(260, seed=seed)
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-500, 4000, 2)
    w, h = rng.uniform(200, 3000, 2)
    got, want = both(c, (x, y, w, h), max_objects=int(rng.integers(5, 80)), max_relations=int(rng.integers(0, 200)),
                     origin=(x, y))
    assert got == want


@pytest.mark.parametrize("seed", range(3))
def test_diagram_workspace_matches_oracle(seed):
    c = diagram_workspace(400, seed=seed)
    got, want = both(c, (0.0, 0.0, 2800.0, 1800.0))
    assert got == want


@pytest.mark.parametrize("config", range(10))
def test_scenarios_match_oracle(config):
    s = remote_team_handoff(config)
    got, want = both(s.canvas, s.viewport, origin=s.origin)
    assert got == want


def test_deterministic_compact_json():
    s = remote_team_handoff(3)
    a = observe(s.canvas, s.viewport, origin=s.origin).to_json()
    b = observe(s.canvas.copy(), s.viewport, origin=s.origin).to_json()
    assert a == b
    assert json.loads(a) == observe(s.canvas, s.viewport, origin=s.origin).to_dict()
    assert json.dumps(json.loads(a), separators=(",", ":"), ensure_ascii=False) == a


def test_guide_is_short_and_explains():
    assert len(GUIDE.encode("utf-8")) < 1500
    assert Observation.GUIDE is GUIDE
    for word in ("native", "inferred", "action coordinates", "occluded", "offscreen_far", "actionBounds", "touches"):
        assert word in GUIDE


def test_native_and_inferred_kept_apart():
    c = Canvas()
    c.add(Node("f", "frame", "page:page", "a1", 0, 0, 300, 300, name="F"))
    c.add(Node("in", "geo", "f", "a1", 10, 10, 50, 50))
    c.add(Node("over", "geo", "page:page", "a2", 100, 100, 50, 50))
    c.add(Node("t", "geo", "page:page", "a3", 500, 0, 100, 100))
    c.add(Node("arr", "arrow", "page:page", "a4", 60, 30, 440, 0, props={"start": {"x": 0, "y": 0}, "end": {"x": 440, "y": 0}}))
    c.add(Binding("b1", "arrow", "arr", "in", "start"))
    obs = observe(c, Viewport(0, 0, 800, 600))
    rels = {(r["type"], r["from"], r["to"]): r for r in obs.relations}
    assert rels[("parent", "in", "f")]["native"] is True
    assert rels[("bound", "arr", "in")] == {"type": "bound", "from": "arr", "to": "in", "native": True, "terminal": "start"}
    assert rels[("inside", "over", "f")]["native"] is False
    assert rels[("touches", "arr", "t")] == {"type": "touches", "from": "arr", "to": "t", "native": False, "terminal": "end"}
    assert ("inside", "in", "f") not in rels  # native membership is not repeated as inferred
    natives = [r["native"] for r in obs.relations]
    assert natives == sorted(natives, reverse=True)  # native first
    # binding the end turns the touch into a native relation
    c.add(Binding("b2", "arrow", "arr", "t", "end"))
    rels = {(r["type"], r["from"], r["to"]) for r in observe(c, Viewport(0, 0, 800, 600)).relations}
    assert ("bound", "arr", "t") in rels and ("touches", "arr", "t") not in rels



def test_an_end_on_a_card_its_frame_clips_away_touches_nothing():
    """A card its frame clips away entirely is not drawn: an unbound end on its edge touches nothing
    (the oracle's rule), and touches it again once the frame is widened to show it, and not after it
    is narrowed back (the carried tables of each version, and a fresh observation, say the same)."""
    c = Canvas()
    c.add(Node("f", "frame", "page:page", "a1", 0, 0, 100, 100))
    c.add(Node("k", "geo", "f", "a2", 150, 0, 50, 40))  # page box x 150..200: outside the frame
    c.add(Node("arr", "arrow", "page:page", "a3", 200, 20, props={"start": {"x": 0, "y": 0}, "end": {"x": 60, "y": 0}}))
    vp = (0.0, 0.0, 400.0, 300.0)

    def touches() -> list:
        got = observe(c, vp).to_dict()
        assert got == observe_naive(c, vp) == observe(c.copy(), vp).to_dict()
        return [(r["from"], r["to"]) for r in got["relations"] if r["type"] == "touches"]

    assert c.visible_bounds("k") is None
    assert touches() == []
    c.update("f", w=300.0)
    assert c.visible_bounds("k") is not None and touches() == [("arr", "k")]
    c.update("f", w=100.0)
    assert touches() == []


def test_occluded_replaces_visible_and_partial():
    c = Canvas()
    c.add(Node("low", "geo", "page:page", "a1", 80, 10, 40, 40))
    c.add(Node("edge", "geo", "page:page", "a2", 90, 60, 40, 20))
    c.add(Node("top", "geo", "page:page", "a3", 50, 0, 100, 100, style={"fill": "solid"}))
    c.add(Node("ghost", "geo", "page:page", "a4", 0, 0, 200, 200, opacity=0.5))
    obs = observe(c, (0, 0, 100, 100))
    assert obs.record("low")["visibility"] == "occluded" and obs.record("low")["occludedBy"] == "top"
    assert obs.record("edge")["visibility"] == "occluded"  # partial, but what is in view is covered
    assert obs.record("top")["visibility"] == "partial"
    assert obs.record("ghost")["style"]["opacity"] == 0.5  # translucent: never an occluder
    assert {"type": "occludes", "from": "top", "to": "low", "native": False} in obs.relations


def test_clipped_away_child_is_flagged():
    c = Canvas()
    c.add(Node("f", "frame", "page:page", "a1", 0, 0, 100, 100))
    c.add(Node("out", "geo", "f", "a1", 150, 10, 20, 20))
    rec = observe(c, (0, 0, 400, 400)).record("out")
    assert rec["flags"] == ["clipped"] and rec["visibility"] == "occluded" and rec["occludedBy"] == "f"


def test_priority_and_soft_limit():
    c = synthetic_workspace(400, seed=1)
    ids = c.paint_order()
    sel = ids[300:310]
    obs = observe(c, (0, 0, 1000, 1000), selected=sel, context=[ids[5]], max_objects=4, max_relations=10)
    got = obs.ids()
    assert got[:10] == sel and got[10] == ids[5]  # the first group exceeds the soft limit
    assert len(obs.relations) <= 10 and obs.omitted["objects"] == 400 - len(got)
    assert len(observe(c, (0, 0, 1000, 1000), max_relations=10).relations) == 10  # hard limit reached
    assert all("selected" in obs.record(i)["flags"] for i in sel)
    obs = observe(c, (0, 0, 1000, 1000), max_objects=50)
    vis = [o["visibility"] for o in obs.objects]
    first_off = next(k for k, v in enumerate(vis) if v.startswith("offscreen"))
    assert all(not v.startswith("offscreen") for v in vis[:first_off])
    assert observe(c, (0, 0, 1000, 1000), max_relations=0).relations == []


def test_offscreen_by_distance_and_action_bounds():
    c = Canvas()
    for k, x in enumerate((5000, 900, 2000)):
        c.add(Node(f"o{k}", "geo", "page:page", f"a{k}", x, 0, 10, 10))
    obs = observe(c, (0, 0, 800, 600), origin=(100, 50))
    assert obs.ids() == ["o1", "o2", "o0"]
    assert obs.record("o1") == {"id": "o1", "type": "geo", "layer": 1, "visibility": "offscreen_near",
                                "actionBounds": {"x": 800, "y": -50, "w": 10, "h": 10}}
    assert obs.to_dict()["viewport"] == {"x": -100, "y": -50, "w": 800, "h": 600}


def test_move_from_rounded_numbers_lands_where_meant():
    c = Canvas()
    c.add(Node("a", "geo", "page:page", "a1", 1000.4, 20.6, 10, 10))
    origin = (-0.3, 0.45)
    obs = observe(c, (0, 0, 500, 500), origin=origin)
    ab = obs.record("a")["actionBounds"]
    rx, ry = obs.residual("a")
    assert (ab["x"], ab["y"]) == (1001, 20) and math.isclose(rx, -0.3, abs_tol=1e-9) and math.isclose(ry, 0.15, abs_tol=1e-9)
    dx, dy = obs.move_delta("a", 100, 200)  # the agent wants its corner at action (100, 200)
    c.update("a", x=c.nodes["a"].x + dx, y=c.nodes["a"].y + dy)
    x0, y0, _, _ = c.page_bounds("a")
    assert obs.to_page(100, 200) == pytest.approx((x0, y0), abs=1e-9)
    after = observe(c, (0, 0, 500, 500), origin=origin, include_bounds=True)
    assert (after.record("a")["actionBounds"]["x"], after.record("a")["actionBounds"]["y"]) == (100, 200)
    assert after.residual("a") == pytest.approx((0, 0), abs=1e-9)
    assert obs.to_action(*obs.to_page(7, -3)) == (7, -3)


def test_text_style_rotation_flags():
    c = Canvas()
    c.add(Node("a", "geo", "page:page", "a1", 0, 0, 10, 10, rotation=math.pi / 6, text="x  y\n" + "z" * 200,
               style={"color": "blue", "fill": "solid", "dash": "draw"}, locked=True, hidden=True))
    rec = observe(c, (0, 0, 100, 100), selected=["a"], context=["a"]).record("a")
    assert rec["text"] == ("x y " + "z" * 200)[:79] + "…" and len(rec["text"]) == 80
    assert rec["style"] == {"color": "blue", "fill": "solid"} and rec["rotation"] == 30.0
    assert rec["flags"] == ["selected", "context", "locked", "hidden"]


def test_default_viewport_and_selection_from_document():
    s = remote_team_handoff(0)
    s.canvas.selection["page:page"] = ("shape:claim",)
    obs = observe(s.canvas)
    assert obs.viewport == s.viewport and obs.ids()[0] == "shape:claim"
    c = Canvas()
    c.add(Node("a", "geo", "page:page", "a1", 5, 5, 10, 10))
    assert observe(c).viewport == Viewport(5, 5, 10, 10)  # no camera: the page's extent


@pytest.mark.parametrize("kw, msg", [
    (dict(viewport=(0, 0, -1, 5)), "viewport"),
    (dict(viewport=(0, 0, float("nan"), 5)), "viewport"),
    (dict(viewport="big"), "viewport"),
    (dict(max_objects=-1), "max_objects"),
    (dict(max_relations=1.5), "max_relations"),
    (dict(origin=(0,)), "origin"),
    (dict(origin=(0, float("inf"))), "origin"),
    (dict(selected=["nope"]), "'nope'"),
    (dict(context=["nope"]), "context id 'nope'"),
    (dict(near_gap=-1), "near_gap"),
])
def test_bad_input(kw, msg):
    c = Canvas()
    c.add(Node("a", "geo", "page:page", "a1", 0, 0, 10, 10))
    kw.setdefault("viewport", (0, 0, 10, 10))
    with pytest.raises(InvalidInputError, match=msg):
        observe(c, **kw)


def test_bad_canvas_and_page():
    with pytest.raises(InvalidInputError, match="Canvas"):
        observe({"not": "a canvas"}, (0, 0, 1, 1))
    with pytest.raises(OutOfRangeError, match="page:nope"):
        observe(Canvas(), (0, 0, 1, 1), page="page:nope")
    with pytest.raises(SpatialObsError):
        Observation("p", Viewport(0, 0, 1, 1), (0, 0), [], [], {"objects": 0, "relations": 0}).record("x")


def test_readme_example(shared_data):
    c = load(shared_data / "canvases" / "kitschpatrol__tldraw-cli__2024-01-test-sketch-three-frames.tldr")
    obs = observe(c)
    # the emoji text rises above the top of its frame (as in tldraw), so it reads first
    assert [(o["type"], o.get("name") or o.get("text"), o["visibility"]) for o in obs.objects][:2] == [
        ("text", "\U0001f949\U0001f37e\U0001f595", "visible"), ("frame", "Frame 1", "visible")]
    assert obs.record("shape:X8NB_iu3jQlL_s_tE7mDo")["rotation"] == 337.0
    assert obs.relations[0] == {"type": "parent", "from": "shape:5GI4apFgiHzaLrrHpyIws",
                                "to": "shape:x8z3Qf7Hgw4Qqp2AC-eet", "native": True}
    assert obs.omitted == {"objects": 0, "relations": 0} and len(obs.to_json().encode()) == 1912


# ---------------------------------------------------------------------------------------------
# Observations of one page version share cached relation tables: many viewports and options on
# the same version, then an edit, must each equal the oracle.
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as hst  # noqa: E402

_coord = hst.sampled_from([0.0, 10.0, 10.5, 40.0, 41.0, 100.0, 300.0, 330.0, 2000.0, -500.0])


@hst.composite
def _canvases(draw):
    c = Canvas()
    n = draw(hst.integers(1, 24))
    ids = []
    for k in range(n):
        kind = draw(hst.sampled_from(["geo", "geo", "note", "text", "frame", "arrow"]))
        parents = ["page:page"] + [i for i in ids if c.nodes[i].type == "frame"]
        parent = draw(hst.sampled_from(parents))
        x, y = draw(_coord), draw(_coord)
        w, h = draw(hst.sampled_from([0.0, 10.0, 30.0, 60.0, 300.0])), draw(hst.sampled_from([0.0, 10.0, 30.0, 60.0]))
        props = {}
        if kind == "arrow":
            props = {"start": {"x": 0, "y": 0}, "end": {"x": w, "y": h}}
        nid = f"n{k}"
        c.add(Node(nid, kind, parent, f"a{k:02d}", x, y, w, h, props=props,
                   opacity=draw(hst.sampled_from([1.0, 1.0, 0.5]))))
        ids.append(nid)
        if kind == "arrow" and len(ids) > 1 and draw(hst.booleans()):
            target = draw(hst.sampled_from(ids[:-1]))
            if c.nodes[target].type != "arrow":
                c.add(Binding(f"b{k}", "arrow", nid, target, draw(hst.sampled_from(["start", "end"]))))
    return c


_viewports = hst.tuples(_coord, _coord, hst.sampled_from([0.0, 50.0, 200.0, 700.0, 3000.0]),
                        hst.sampled_from([0.0, 50.0, 200.0, 700.0]))


@pytest.mark.generated
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_canvases(), hst.lists(_viewports, min_size=1, max_size=4), hst.integers(0, 30), hst.integers(0, 40),
       hst.sampled_from([0.0, 4.0, 32.0, 500.0]), hst.sampled_from([0.0, 1.0, 30.0]))
def test_random_canvases_and_viewports_match_oracle(c, viewports, max_objects, max_relations, near_gap, align_tol):
    kw = dict(max_objects=max_objects, max_relations=max_relations)
    opts = dict(near_gap=near_gap, align_tol=align_tol, touch_tol=near_gap / 4)
    for vp in viewports:  # one page version, several views: the cached tables serve them all
        for k in (kw, opts):
            assert observe(c, vp, **k).to_dict() == observe_naive(c, vp, **k)
    first = c.paint_order()[0]
    c.update(first, x=c.nodes[first].x + 25)  # a new version: nothing stale may show, counts included
    assert observe(c, viewports[0], **kw).to_dict() == observe_naive(c, viewports[0], **kw)


def test_a_kept_aligned_pair_whose_card_leaves_the_view_is_counted_out():
    """A move along x keeps the pair's top alignment; the moved card leaves the view (then comes
    back), so the omitted count of aligned pairs changes although no pair left or entered."""
    c = Canvas()
    c.add(Node("A", "geo", "page:page", "a1", 0, 0, 40, 20))
    c.add(Node("B", "geo", "page:page", "a2", 500, 0, 40, 30))
    vp = (-10, -10, 100, 60)
    kw = dict(max_objects=0, max_relations=0)  # every relation counted, none listed
    counts = [observe(c, vp, **kw).omitted["relations"]]
    for x in (300.0, 0.0):  # out of view, back in view: the tops stay aligned
        c.update("A", x=x)
        got = observe(c, vp, **kw)
        assert got.to_dict() == observe_naive(c, vp, **kw) == observe(c.copy(), vp, **kw).to_dict()
        counts.append(got.omitted["relations"])
    assert counts[0] == counts[2] > counts[1]


@pytest.mark.parametrize("vp", [(0, 10, 200, 0), (70, 0, 30, 60)], ids=["view-of-zero-height", "view-on-an-edge"])
def test_a_shape_seen_as_a_sliver_is_occluded_by_a_filled_shape_over_it(vp):
    """The view meets the text as a line (a view of zero height; the view's left edge on the
    text's right edge): the frame above paints over that line, so the text is occluded."""
    c = Canvas()
    c.add(Node("t", "text", "page:page", "a1", 40, 0, 30, 60, text="label"))
    c.add(Node("f", "frame", "page:page", "a2", 41, 0, 30, 60))
    got = observe(c, vp)
    assert got.to_dict() == observe_naive(c, vp)
    assert got.record("t")["visibility"] == "occluded" and got.record("t")["occludedBy"] == "f"


def test_near_partner_far_offscreen():
    # "in" keeps its four nearest (all in view, left of it); the offscreen F keeps "in", so
    # the pair is reported although "in" does not keep F: a pair's eligibility depends on
    # the partner's own nearest, offscreen
    c = Canvas()
    c.add(Node("in", "geo", "page:page", "a1", 90, 0, 10, 10))
    for k in range(4):
        c.add(Node(f"L{k}", "geo", "page:page", f"a{k + 2}", 88 - 2 * k, 0, 1, 10))
    c.add(Node("F", "geo", "page:page", "a7", 120, 0, 1, 10))
    for vp in [(0, 0, 100, 10), (0, 0, 119.5, 10), (-5000, 0, 100, 10), (121, 0, 50, 10)]:
        for gap in (5.0, 32.0, 64.0):
            assert observe(c, vp, near_gap=gap).to_dict() == observe_naive(c, vp, near_gap=gap)
    near = {(r["from"], r["to"]) for r in observe(c, (0, 0, 100, 10)).relations if r["type"] == "near"}
    assert ("in", "F") in near and ("L0", "F") in near
    assert {("in", f"L{k}") for k in range(4)} <= near
    assert not any(r["type"] == "near" for r in observe(c, (-5000, 0, 100, 10)).relations)  # nothing in view


@pytest.mark.generated
@given(hst.lists(hst.tuples(*[hst.one_of(hst.floats(-1e308, 1e308), hst.sampled_from([0.0, -0.0, 5e-324, 10.0]))] * 4),
                 min_size=1, max_size=20))
def test_view_gaps_are_the_visibility_kernels_gaps(rows):
    """The observation computes gaps only for the rows it ranks: the same bits as the kernel's."""
    import sys

    from spatialobs import geometry as G

    obs_mod = sys.modules["spatialobs.canvas.observe"]
    boxes = np.array([(min(a, c), min(b, d), max(a, c), max(b, d)) for a, b, c, d in rows], dtype=np.float64)
    vbox = (0.0, 0.0, 10.0, 10.0)
    _, want = G.visibility(boxes, vbox)
    view = obs_mod._View(np.ones(len(boxes), bool), np.zeros(len(boxes), np.int8), boxes, vbox, *([np.zeros(0, np.int64)] * 5),
                         np.zeros(len(boxes), bool))
    assert view.gaps(np.arange(len(boxes))).tobytes() == want.tobytes()
