"""tldraw arrows bound to strokes meet the stroke's geometry as tldraw 5.4.2's do.

``data/conformance/arrows_freehand.tldr`` was built by ``make_arrows_freehand.py``
and its truth reduced from a run of the real editor: open, wide, closed, zigzag and
dot draw strokes and a highlight, each with straight, arced and elbow arrows bound
to it imprecisely and at precise anchors, with and without an arrowhead.
"""

from __future__ import annotations

import json
from pathlib import Path

from spatialobs.canvas import load
from spatialobs.canvas.document.arrows import page_terminals, target_outline

CONF = Path(__file__).resolve().parent / "data" / "conformance"


def test_arrows_bound_to_strokes_match_tldraw():
    c = load(CONF / "arrows_freehand.tldr")
    truth = json.loads((CONF / "arrows_freehand.truth.json").read_text())["arrows"]
    assert {t["kind"] for t in truth.values()} == {"straight", "arc", "elbow"}
    for sid, t in truth.items():
        x, y, w, h = t["pageBounds"]
        assert max(abs(u - v) for u, v in zip(c.page_bounds(sid), (x, y, x + w, y + h))) <= 2.0, sid
        s, e = page_terminals(c, sid)
        assert max(abs(u - v) for u, v in zip((*s, *e), (*t["start"], *t["end"]))) <= 1.0, sid


def test_a_dot_is_met_at_its_circle():
    o = target_outline("draw", {"segments": [{"type": "free", "points": [{"x": 0, "y": 0}, {"x": 1, "y": 1}]}],
                                "size": "m", "scale": 1}, 1, 1)
    assert o.closed and len(o.points) >= 8
    assert max(abs(v) for v in o.bounds) > 4  # the circle of radius (stroke + 1), not the two input points
