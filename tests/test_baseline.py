"""baseline_context against a shape-by-shape oracle, cluster rules and bad input."""

from __future__ import annotations

import pytest

from spatialobs import InvalidInputError
from spatialobs.canvas import Canvas, Node, baseline_context, load
from spatialobs.canvas.baseline import context_json
from spatialobs.canvas.observe import resolve_viewport
from spatialobs.canvas.scenarios.handoff import remote_team_handoff, synthetic_workspace
from tests.conftest import shared_files
from tests.reference.observe_oracle import baseline_naive

CANVASES = shared_files("canvases")


@pytest.mark.parametrize("path", CANVASES, ids=lambda p: p.name[:40])
def test_real_canvas_matches_oracle(shared_data, path):
    c = load(path)
    vp = resolve_viewport(c, None, c.current_page)
    for origin in ((0, 0), (vp.x, vp.y)):
        got = baseline_context(c, vp, origin=origin)
        assert got == baseline_naive(c, (vp.x, vp.y, vp.w, vp.h), origin=origin)
    # every shape of the page is either listed or counted in a cluster (unless clipped away)
    shown = sum(c.visible_bounds(i) is not None for i in c.paint_order())
    assert len(got["shapes"]) + sum(k["numberOfShapes"] for k in got["peripheralClusters"]) == shown


@pytest.mark.parametrize("seed", range(3))
def test_synthetic_matches_oracle(seed):
    c = synthetic_workspace(300, seed=seed)
    vp = (500.0 * seed, 100.0, 1800.0, 900.0)
    assert baseline_context(c, vp, origin=(vp[0], vp[1])) == baseline_naive(c, vp, origin=(vp[0], vp[1]))


def test_shape_record_and_clusters():
    c = Canvas()
    c.add(Node("f", "frame", "page:page", "a1", 0, 0, 100, 100, name="Frame"))
    c.add(Node("clip", "geo", "f", "a1", 80, 80, 100, 100, text="half out"))
    c.add(Node("gone", "geo", "f", "a2", 300, 300, 10, 10))
    c.add(Node("p1", "geo", "page:page", "a2", 400, 0, 10, 10))
    c.add(Node("p2", "geo", "page:page", "a3", 560, 0, 10, 10))   # grown boxes touch p1's: same cluster
    c.add(Node("p3", "geo", "page:page", "a4", 900, 0, 10, 10))   # too far: a new cluster
    ctx = baseline_context(c, (0, 0, 150, 150), selected=["p3"], origin=(0.4, 0))
    assert ctx["shapes"] == [{"id": "f", "type": "frame", "text": "Frame", "x": 0, "y": 0, "w": 100, "h": 100},
                             {"id": "clip", "type": "geo", "text": "half out", "x": 80, "y": 80, "w": 20, "h": 20}]
    assert ctx["selectedIds"] == ["p3"]
    assert ctx["peripheralClusters"] == [{"bounds": {"x": 400, "y": 0, "w": 170, "h": 10}, "numberOfShapes": 2},
                                         {"bounds": {"x": 900, "y": 0, "w": 10, "h": 10}, "numberOfShapes": 1}]
    text = context_json(ctx)
    assert text == context_json(baseline_context(c.copy(), (0, 0, 150, 150), selected=["p3"], origin=(0.4, 0)))


def test_carries_no_state_structure_or_bindings():
    s = remote_team_handoff(8)
    ctx = baseline_context(s.canvas, s.viewport, origin=s.origin)
    assert {k for rec in ctx["shapes"] for k in rec} == {"id", "type", "text", "x", "y", "w", "h"}
    assert set(ctx) == {"shapes", "selectedIds", "peripheralClusters"}


def test_bad_input():
    with pytest.raises(InvalidInputError, match="Canvas"):
        baseline_context(None, (0, 0, 1, 1))
    with pytest.raises(InvalidInputError, match="selected id 'x'"):
        baseline_context(Canvas(), (0, 0, 1, 1), selected=["x"])
    with pytest.raises(InvalidInputError, match="viewport"):
        baseline_context(Canvas(), (0, 0, 1))
    with pytest.raises(InvalidInputError, match="origin"):
        baseline_context(Canvas(), (0, 0, 1, 1), origin="here")
