"""Write the rotated geo conformance document (``geo_rotated.tldr``) beside this script.

tldraw ``geo`` ellipses and diamonds of several sizes (one narrower than tldraw's
1-unit minimum) at five angles, and an ellipse inside a rotated frame. tldraw bounds
a rotated ellipse by the vertices it samples on the outline and a diamond by its
four corners, not by the rotated box.

The truth file ``geo_rotated.truth.json`` holds the page bounds the real tldraw 5.4.2
editor computed, reduced by ``--truth RAW.json`` from the tldraw harness's output.

Usage::

    python make_geo.py                  # writes geo_rotated.tldr
    python make_geo.py --truth RAW.json # keeps the page bounds of a harness run
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = ((160, 80), (30, 50), (400, 120), (0.5, 20))
ANGLES = (0.3, math.pi / 4, 1.2, 2.5, 4.0)


def build() -> dict:
    from spatialobs.canvas import Canvas, Node
    from spatialobs.canvas.formats.tldraw import to_tldraw

    c = Canvas()
    k = 0
    for geo in ("ellipse", "diamond"):
        for w, h in SIZES:
            for a in ANGLES:
                k += 1
                c.add(Node(f"shape:{geo}{k}", "geo", "page:page", f"a{k:03d}", 500.0 * (k % 8), 400.0 * (k // 8),
                           w, h, rotation=a, props={"geo": geo, "w": w, "h": h}))
    c.add(Node("shape:frm", "frame", "page:page", "b1", 5000, 0, 600, 600, rotation=0.7, props={"w": 600, "h": 600}))
    c.add(Node("shape:inner", "geo", "shape:frm", "a1", 100, 100, 200, 90, rotation=0.4,
               props={"geo": "ellipse", "w": 200, "h": 90}))
    return to_tldraw(c)


def main(argv: list) -> int:
    if argv[:1] == ["--truth"]:
        raw = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
        shapes = {s["id"]: {"type": s["type"], "pageBounds": [round(s["pageBounds"][k], 9) for k in "xywh"]}
                  for p in raw["pages"] for s in p["shapes"]}
        out = {"tldrawVersion": raw["tldrawVersion"], "shapes": shapes}
        (HERE / "geo_rotated.truth.json").write_text(json.dumps(out, indent=0) + "\n", encoding="utf-8")
        return 0
    (HERE / "geo_rotated.tldr").write_text(json.dumps(build()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
