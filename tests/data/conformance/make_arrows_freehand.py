"""Write the conformance document of arrows bound to strokes (``arrows_freehand.tldr``) beside this script.

tldraw meets a bound arrow with a stroke's geometry: a draw shape's smoothed
points (a closed stroke's polygon, a dot's circle), a highlight's filled
outline. Each cell holds one stroke and straight, arced and elbow arrows bound to
it, imprecisely and at precise anchors, with and without arrowheads. The truth
file ``arrows_freehand.truth.json`` holds what the real tldraw 5.4.2 editor
computed (page bounds of every arrow and the page points of its drawn ends).

Usage::

    python make_arrows_freehand.py                      # writes the .tldr document
    python make_arrows_freehand.py --truth NAME RAW.json  # keeps the asserted fields of a harness run
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Dict, List, Tuple

from make_arrows import PAGE, reduce_truth
from make_freehand import encode, loop, walk
from make_groups import GroupDoc
from tldr_doc import main

HERE = Path(__file__).resolve().parent


def freehand_doc() -> GroupDoc:
    d = GroupDoc()
    rng = random.Random(31)
    strokes: List[Tuple[str, Dict[str, Any]]] = [
        ("walk", dict(pts=walk(rng, 80, step=(3.0, 14.0)))),
        ("walk_l", dict(pts=walk(rng, 60, step=(4.0, 16.0)), size="xl")),
        ("closed", dict(pts=loop(rng, 40, 80), closed=True)),
        ("zig", dict(pts=[(i * 30.0, (i % 2) * 60.0, 0.5) for i in range(9)])),
        ("dot", dict(pts=[(0.0, 0.0, 0.5), (1.0, 1.0, 0.5)])),
        ("highlight", dict(pts=walk(rng, 60, step=(3.0, 12.0)))),
    ]
    for k, (name, kw) in enumerate(strokes):
        ox, oy = (k % 3) * 1100.0, (k // 3) * 1000.0
        sx, sy = ox + 500, oy + 400
        if name == "highlight":
            d.shape(f"shape:{name}", "highlight", sx, sy, {
                "segments": [{"type": "free", "path": encode(kw["pts"])}], "color": "yellow", "size": "l",
                "isComplete": True, "isPen": False, "scale": 1, "scaleX": 1, "scaleY": 1})
        else:
            d.draw(f"shape:{name}", sx, sy, kw["pts"], PAGE, size=kw.get("size", "m"), closed=kw.get("closed", False))
        t = f"shape:{name}"
        cases = [("c", {}, None), ("p", {}, (0.3, 0.6)), ("nohead", {"head_end": "none"}, None),
                 ("arc", {"bend": 60}, None), ("arc_p", {"bend": -80}, (0.7, 0.2)),
                 ("elbow", {"kind": "elbow"}, None), ("elbow_p", {"kind": "elbow"}, (0.9, 0.5))]
        for j, (case, kw2, anchor) in enumerate(cases):
            kind = kw2.pop("kind", None)
            a = d.arrow(f"shape:{name}_{case}", ox + (j % 4) * 250, oy + (j // 4) * 800, (0, 0), (0, 0), **kw2)
            if kind:
                d.records[-1]["props"]["kind"] = kind
            d.bind(a, t, "end", anchor or (0.5, 0.5), precise=anchor is not None)
    return d


DOCS = {"arrows_freehand": freehand_doc}

if __name__ == "__main__":
    main(HERE, DOCS, reduce_truth)
