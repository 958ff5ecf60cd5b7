"""tldraw groups bounded as tldraw 5.4.2 bounds them: by their members' geometry.

``data/conformance/groups_rotated.tldr`` was built by ``make_groups.py`` and its truth
reduced from a run of the real editor on it: groups turned by 0, 0.4, 1, -0.7, a
right angle and 2.8 radians, holding geo shapes (some turned), text, freehand
strokes, lines, arrows (free, arced, labelled, bound between members) and nested
groups turned again.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from spatialobs.canvas import Canvas, load
from spatialobs.canvas.document.records import Node

CONF = Path(__file__).resolve().parent / "data" / "conformance"
TOL = {"text": 1.0, "draw": 2.0, "line": 2.0, "arrow": 2.0, "group": 2.0, "geo": 1e-6}


@pytest.fixture(scope="module")
def doc():
    return load(CONF / "groups_rotated.tldr"), json.loads((CONF / "groups_rotated.truth.json").read_text())["shapes"]


def test_rotated_groups_match_tldraw(doc):
    c, truth = doc
    assert sum(t["type"] == "group" for t in truth.values()) >= 30
    for sid, t in truth.items():
        x, y, w, h = t["pageBounds"]
        err = max(abs(u - v) for u, v in zip(c.page_bounds(sid), (x, y, x + w, y + h)))
        assert err <= TOL[t["type"]], (sid, err)


def test_turned_group_is_the_union_of_its_members():
    c = Canvas()
    c.add(Node("shape:g", "group", "page:page", "a1", 100, 100, rotation=0.5))
    c.add(Node("shape:e", "geo", "shape:g", "a1", 0, 0, 200, 100, props={"geo": "ellipse"}))
    c.add(Node("shape:r", "geo", "shape:g", "a2", 300, 0, 50, 50, rotation=-0.5, props={"geo": "rectangle"}))
    kids = [c.page_bounds(k) for k in ("shape:e", "shape:r")]
    union = [min(b[0] for b in kids), min(b[1] for b in kids), max(b[2] for b in kids), max(b[3] for b in kids)]
    assert list(c.page_bounds("shape:g")) == pytest.approx(union, abs=1e-9)
    # the turned box of the group's local box (the ellipse's box and the turned square's) is looser
    cs, sn = math.cos(-0.5), math.sin(-0.5)
    sq = [(300 + cs * px - sn * py, sn * px + cs * py) for px in (0, 50) for py in (0, 50)]
    x0, y0 = min([0.0] + [p[0] for p in sq]), min([0.0] + [p[1] for p in sq])
    x1, y1 = max([200.0] + [p[0] for p in sq]), max([100.0] + [p[1] for p in sq])
    cs, sn = math.cos(0.5), math.sin(0.5)
    corners = [(100 + cs * px - sn * py, 100 + sn * px + cs * py) for px in (x0, x1) for py in (y0, y1)]
    assert min(p[0] for p in corners) < union[0] - 1 and max(p[1] for p in corners) > union[3] + 1


def test_turned_straight_arrow_is_bounded_by_its_turned_ends():
    c = Canvas()
    c.add(Node("shape:a", "arrow", "page:page", "a1", 0, 0, rotation=math.atan2(100, 300) * -1,
               props={"start": {"x": 0, "y": 0}, "end": {"x": 300, "y": 100}, "kind": "arc", "bend": 0}))
    x0, y0, x1, y1 = c.page_bounds("shape:a")
    assert (x0, x1) == pytest.approx((0.0, math.hypot(300, 100)), abs=1e-9)
    assert (y0, y1) == pytest.approx((0.0, 0.0), abs=1e-9)
