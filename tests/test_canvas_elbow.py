"""tldraw elbow arrows routed as tldraw 5.4.2 routes them.

``data/conformance/elbow.tldr`` was built by ``make_elbow.py`` and its truth reduced
from a run of the real editor on it: every relative position of two targets,
precise anchors on every side, moved mid-lines, free ends, scale, sizes, rotated
targets, arrowheads on and off, other target kinds, both ends on one shape.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas import load
from spatialobs.canvas.document.arrows import Terminal, arrow_geometry, page_terminals, target_outline
from spatialobs.canvas.document.elbow import elbow_route

CONF = Path(__file__).resolve().parent / "data" / "conformance"
BOUNDS_TOL = 2.0     # page units
TERMINAL_TOL = 1.0   # page units
# Cases tldraw draws differently from us, and why (anything else failing is a regression):
KNOWN: dict = {}


def _err(a, b):
    return max(abs(u - v) for u, v in zip(a, b))


@pytest.fixture(scope="module")
def elbow_doc():
    return load(CONF / "elbow.tldr"), json.loads((CONF / "elbow.truth.json").read_text())["arrows"]


def test_elbow_conformance(elbow_doc):
    c, truth = elbow_doc
    assert len(truth) > 200
    bad_bounds, bad_terms = [], []
    for sid, t in truth.items():
        assert t["kind"] == "elbow"
        assert arrow_geometry(c, sid).kind == "elbow", sid
        x, y, w, h = t["pageBounds"]
        if _err(c.page_bounds(sid), (x, y, x + w, y + h)) > BOUNDS_TOL:
            bad_bounds.append(sid)
        s, e = page_terminals(c, sid)
        if _err((*s, *e), (*t["start"], *t["end"])) > TERMINAL_TOL:
            bad_terms.append(sid)
    assert len(bad_bounds) <= 0.02 * len(truth) and len(bad_terms) <= 0.02 * len(truth)
    assert "shape:arot" in truth and "shape:arot_p" in truth  # turned arrows: bounded by their turned route
    assert set(bad_bounds) <= set(KNOWN), bad_bounds
    assert set(bad_terms) <= set(KNOWN), bad_terms


def test_elbow_between_two_boxes():
    box = target_outline("geo", {"geo": "rectangle", "size": "m"}, 100, 100)
    a = Terminal(box, (0.0, 0.0, 1.0, 0.0), (0.5, 0.5), False, False, "shape:a")
    b = Terminal(box, (400.0, 200.0, 1.0, 0.0), (0.5, 0.5), False, False, "shape:b")
    r = elbow_route({"kind": "elbow"}, (0.0, 0.0, 1.0, 0.0), a, b)
    # out of a's right side, through the mid-line, into b's left side short by the arrowhead gap
    assert r.points == [(100.0, 50.0), (250.0, 50.0), (250.0, 250.0), (386.5, 250.0)]
    r = elbow_route({"kind": "elbow", "elbowMidPoint": 0.0}, (0.0, 0.0, 1.0, 0.0), a, b)
    assert r.points[1] == (136.0, 50.0)  # the mid-line at a's expanded edge (leg 36)


@settings(max_examples=200)
@given(st.floats(-500, 500), st.floats(-500, 500), st.floats(0, 1), st.sampled_from(["s", "m", "l", "xl"]))
def test_free_elbow_is_axis_aligned_and_joins_its_ends(ex, ey, mid, size):
    r = elbow_route({"start": {"x": 0, "y": 0}, "end": {"x": ex, "y": ey}, "elbowMidPoint": mid, "size": size},
                    (0.0, 0.0, 1.0, 0.0), None, None)
    if r is None:
        return
    pts = r.points
    # the route builder merges vertices closer than 0.01, as tldraw's does
    assert pts[0] == (0.0, 0.0) and math.isclose(pts[-1][0], ex, abs_tol=0.02) and math.isclose(pts[-1][1], ey, abs_tol=0.02)
    if len(pts) <= 2:
        return  # a route whose end legs are shorter than the stroke is drawn straight, as in tldraw
    for p, q in zip(pts, pts[1:]):
        assert abs(p[0] - q[0]) < 0.02 or abs(p[1] - q[1]) < 0.02
