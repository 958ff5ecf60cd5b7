"""Write the rotated group conformance document (``groups_rotated.tldr``) beside this script.

tldraw bounds a group by its children's geometry carried into the group (rotated
points, not rotated boxes), so a turned group holding strokes, ellipses or turned
children is tighter than its turned box. Each cell holds one group, turned or not,
holding a mix of geo shapes (some turned themselves), text, freehand strokes,
lines, arrows (free, arced, labelled, bound between two members) and nested
groups turned again. The truth file ``groups_rotated.truth.json`` holds the page
bounds the real tldraw 5.4.2 editor computed for every shape.

Usage::

    python make_groups.py                      # writes the .tldr document
    python make_groups.py --truth NAME RAW.json  # keeps the asserted fields of a harness run
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Dict, List, Tuple

from make_arrows import PAGE, Doc
from make_freehand import encode, loop, reduce_truth, walk
from tldr_doc import main, write_tldr

HERE = Path(__file__).resolve().parent


class GroupDoc(Doc):
    def group(self, sid: str, x: float, y: float, rotation: float = 0.0, parent: str = PAGE) -> str:
        return self.shape(sid, "group", x, y, {}, rotation, parent)

    def draw(self, sid: str, x: float, y: float, pts: List[Tuple[float, ...]], parent: str, rotation: float = 0.0,
             size: str = "m", closed: bool = False) -> str:
        return self.shape(sid, "draw", x, y, {
            "segments": [{"type": "free", "path": encode(pts)}], "color": "black", "fill": "none", "dash": "draw",
            "size": size, "isComplete": True, "isClosed": closed, "isPen": False, "scale": 1, "scaleX": 1,
            "scaleY": 1}, rotation, parent)

    def write(self, path: Path) -> None:
        write_tldr(path, PAGE, self.records, separators=(",", ":"))


def groups_doc() -> GroupDoc:
    d = GroupDoc()
    rng = random.Random(21)
    rots = (0.0, 0.4, 1.0, -0.7, 1.5707963267948966, 2.8)
    for k, rot in enumerate(rots):
        for v in range(4):
            ox, oy = v * 1200.0, k * 1100.0
            g = d.group(f"shape:g{k}{v}", ox + 400, oy + 300, rot)
            sub = f"g{k}{v}"
            if v == 0:  # geo shapes, one turned, and text
                d.geo(f"shape:{sub}_r", 0, 0, 200, 120, parent=g)
                d.geo(f"shape:{sub}_e", 260, 40, 180, 260, "ellipse", parent=g)
                d.geo(f"shape:{sub}_t", 60, 250, 150, 90, "triangle", rotation=0.5, parent=g)
                d.text(f"shape:{sub}_x", 0, 0, "grouped text")
                d.records[-1].update(parentId=g, x=-50.0, y=400.0)
            elif v == 1:  # strokes
                d.draw(f"shape:{sub}_w", 0, 0, walk(rng, 60), g, size="l")
                d.draw(f"shape:{sub}_c", 250, 100, loop(rng, 30, 60), g, rotation=0.8, closed=True)
                d.line(f"shape:{sub}_l", 0, 0, [(0, 0), (120, 200), (300, 40)], "cubic")
                d.records[-1].update(parentId=g, x=50.0, y=250.0, rotation=-0.3)
            elif v == 2:  # arrows: free, arced, labelled, bound between members
                a = d.geo(f"shape:{sub}_a", 0, 0, 150, 100, parent=g)
                b = d.geo(f"shape:{sub}_b", 400, 250, 120, 120, "ellipse", parent=g)
                arr = d.arrow(f"shape:{sub}_ab", 0, 0, (0, 0), (0, 0), parent=g)
                d.bind(arr, a, "start")
                d.bind(arr, b, "end")
                d.arrow(f"shape:{sub}_f", 0, 400, (0, 0), (300, 120), parent=g)
                d.arrow(f"shape:{sub}_arc", 200, 0, (0, 0), (250, -50), bend=70, parent=g)
                d.arrow(f"shape:{sub}_lab", -100, 200, (0, 0), (0, 200), text="label", parent=g)
            else:  # nested groups, turned again
                h = d.group(f"shape:{sub}_h", 100, 50, 0.6, parent=g)
                d.draw(f"shape:{sub}_hw", 0, 0, walk(rng, 40), h)
                d.geo(f"shape:{sub}_he", 150, 0, 160, 100, "ellipse", parent=h)
                i = d.group(f"shape:{sub}_i", 0, 300, -1.1, parent=g)
                d.geo(f"shape:{sub}_ir", 0, 0, 120, 80, parent=i)
                d.geo(f"shape:{sub}_id", 200, 60, 140, 140, "diamond", rotation=0.3, parent=i)
    return d


DOCS = {"groups_rotated": groups_doc}

if __name__ == "__main__":
    main(HERE, DOCS, reduce_truth)
