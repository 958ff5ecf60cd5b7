"""Rotated ellipses and diamonds are bounded by their outline, as both editors bound them.

Excalidraw bounds a rotated ellipse analytically and a diamond by its four vertices;
tldraw bounds a ``geo`` shape by the vertices of its outline (an ellipse's sampled
arcs, a diamond's corners). The rotated box would be up to ~40 % larger.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas import Canvas, Node, load
from spatialobs.canvas.formats.excalidraw import from_excalidraw
from tests.reference.outline_oracle import rotated_outline_box

CONFORMANCE = Path(__file__).resolve().parent / "data" / "conformance"


def _scene(kind, w, h, angle):
    return {"type": "excalidraw", "elements": [{"id": "e", "type": kind, "x": 10.0, "y": -20.0, "width": w,
                                                "height": h, "angle": angle}]}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["ellipse", "diamond"]), st.floats(0, 500), st.floats(0, 500), st.floats(-7, 7))
def test_rotated_outline_matches_the_sampled_outline(kind, w, h, angle):
    c = from_excalidraw(_scene(kind, w, h, angle))
    ox, oy = 10.0 + w / 2, -20.0 + h / 2  # Excalidraw turns about the centre: where the local origin lands
    cs, sn = math.cos(angle), math.sin(angle)
    ox, oy = ox + cs * (-w / 2) - sn * (-h / 2), oy + sn * (-w / 2) + cs * (-h / 2)
    expect = rotated_outline_box(kind, w, h, angle, ox, oy)
    got = c.page_bounds("e")
    # sampling lies inside the outline by at most r·(1 − cos(π / steps))
    np.testing.assert_allclose(got, expect, atol=1e-6 * max(1.0, w, h))
    assert got[0] <= expect[0] + 1e-9 and got[2] >= expect[2] - 1e-9


def test_outline_is_inside_the_rotated_box_and_equal_at_right_angles():
    for kind in ("ellipse", "diamond"):
        for angle, smaller in ((0.3, True), (math.pi / 2, False), (math.pi, False)):
            c = from_excalidraw(_scene(kind, 160, 80, angle))
            box = Canvas()
            box.add(Node("r", "rectangle", "page:page", "a1", c.node("e").x, c.node("e").y, 160, 80, rotation=angle))
            a, b = c.page_bounds("e"), box.page_bounds("r")
            if smaller:
                assert b[2] - b[0] - (a[2] - a[0]) > 10 and b[3] - b[1] - (a[3] - a[1]) > 10
            else:
                np.testing.assert_allclose(a, b, atol=1e-9)


def test_groups_take_the_outline_of_rotated_members():
    doc = _scene("ellipse", 160, 80, 0.8)
    doc["elements"][0]["groupIds"] = ["g"]
    c = from_excalidraw(doc)
    np.testing.assert_allclose(c.page_bounds("group:g"), c.page_bounds("e"), rtol=1e-12)


def test_other_geo_kinds_take_their_outline_and_rectangles_their_box():
    c = Canvas()
    c.add(Node("a", "geo", "page:page", "a1", 0, 0, 160, 80, rotation=0.5, props={"geo": "star"}))
    c.add(Node("b", "rectangle", "page:page", "a2", 0, 0, 160, 80, rotation=0.5))
    c.add(Node("c", "geo", "page:page", "a3", 0, 0, 160, 80, rotation=0.5, props={"geo": "rectangle"}))
    a, b = c.page_bounds("a"), c.page_bounds("b")
    assert a[0] > b[0] and a[2] < b[2] and c.page_bounds("c") == b


def test_tldraw_geo_ellipses_and_diamonds_match_tldraw():
    c = load(CONFORMANCE / "geo_rotated.tldr")
    truth = json.loads((CONFORMANCE / "geo_rotated.truth.json").read_text(encoding="utf-8"))
    checked = 0
    for sid, s in truth["shapes"].items():
        x, y, w, h = s["pageBounds"]
        np.testing.assert_allclose(c.page_bounds(sid), (x, y, x + w, y + h), atol=1e-6, err_msg=sid)
        checked += 1
    assert checked == 42


@pytest.mark.parametrize("geo", ["ellipse", "diamond"])
def test_tldraw_geo_outline_is_smaller_than_the_rotated_box(geo):
    c = load(CONFORMANCE / "geo_rotated.tldr")
    n = c.node(f"shape:{geo}{1 if geo == 'ellipse' else 21}")
    assert n.props["geo"] == geo and n.rotation == pytest.approx(0.3)
    b = c.page_bounds(n.id)
    rot = Canvas()
    rot.add(Node("r", "rectangle", "page:page", "a1", n.x, n.y, n.w, n.h, rotation=n.rotation))
    r = rot.page_bounds("r")
    assert (r[2] - r[0]) - (b[2] - b[0]) > 5
