"""Write the freehand conformance documents (``freehand_*.tldr``) beside this script.

Seeded cases for tldraw's ``draw``, ``highlight`` and ``line`` shapes:

* ``freehand_draw``: current schema (base64 ``path`` segments): mouse-like walks,
  incomplete strokes, pen strokes with pressure, closed strokes, single-point dots,
  tiny strokes, free + ``straight`` segments, sharp zigzags, long pauses (repeated
  points), a stroke not starting at the origin, in every size;
* ``freehand_highlight``: highlights in every size (walks, incomplete, dots, a stroke
  shorter than its width, zigzag, a straight last segment), draw and highlight
  strokes with ``scale``, ``scaleX`` / ``scaleY`` (flips), 2-D (``dim: 2``) paths;
* ``freehand_line``: ``line`` and ``cubic`` splines of 1 to 6 points stored out of
  index order, an S-curve, a doubling back and a closed loop;
* ``freehand_rotated``: rotated strokes, closed strokes, highlights, lines, splines
  and dots, and strokes inside a rotated frame and a rotated group;
* ``freehand_legacy_draw`` / ``freehand_legacy_highlight``: the draw and highlight
  cases in an older schema (``points`` lists, no scale), which tldraw migrates.

The truth files ``freehand_*.truth.json`` hold what the real tldraw 5.4.2 editor
computed for them (the page bounds of every shape), reduced by ``--truth NAME
RAW.json`` from the tldraw harness's output.

Usage::

    python make_freehand.py                      # writes the .tldr documents
    python make_freehand.py --truth NAME RAW.json  # keeps the asserted fields of a harness run
"""

from __future__ import annotations

import base64
import json
import math
import random
import struct
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from tldr_doc import SCHEMA, main, write_tldr

HERE = Path(__file__).resolve().parent
PAGE = "page:page"
DIG = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
SIZES = ["s", "m", "l", "xl"]

# draw 1 / highlight 0: segments hold point lists and there is no scale (tldraw 2.x files)
LEGACY_SCHEMA = {"schemaVersion": 2, "sequences": {
    "com.tldraw.store": 4, "com.tldraw.asset": 1, "com.tldraw.camera": 1, "com.tldraw.document": 2,
    "com.tldraw.instance": 25, "com.tldraw.instance_page_state": 5, "com.tldraw.page": 1,
    "com.tldraw.instance_presence": 5, "com.tldraw.pointer": 1, "com.tldraw.shape": 4,
    "com.tldraw.asset.bookmark": 1, "com.tldraw.asset.image": 3, "com.tldraw.asset.video": 3,
    "com.tldraw.shape.group": 0, "com.tldraw.shape.text": 2, "com.tldraw.shape.bookmark": 2,
    "com.tldraw.shape.draw": 1, "com.tldraw.shape.geo": 8, "com.tldraw.shape.note": 6,
    "com.tldraw.shape.line": 4, "com.tldraw.shape.frame": 0, "com.tldraw.shape.arrow": 4,
    "com.tldraw.shape.highlight": 0, "com.tldraw.shape.embed": 4, "com.tldraw.shape.image": 3,
    "com.tldraw.shape.video": 2, "com.tldraw.binding.arrow": 0}}

Pt = Tuple[float, ...]


def encode(points: Sequence[Pt], dim: int = 3) -> str:
    """tldraw's path encoding: float32 first point, then float16 steps from each previous input point."""
    if not points:
        return ""
    z0 = points[0][2] if len(points[0]) > 2 else 0.5
    out = bytearray(struct.pack("<ff", points[0][0], points[0][1]) if dim == 2
                    else struct.pack("<fff", points[0][0], points[0][1], z0))
    px, py, pz = points[0][0], points[0][1], z0
    for p in points[1:]:
        z = p[2] if len(p) > 2 else 0.5
        step = (p[0] - px, p[1] - py) if dim == 2 else (p[0] - px, p[1] - py, z - pz)
        out += np.array(step, dtype="<f2").tobytes()
        px, py, pz = p[0], p[1], z
    return base64.b64encode(bytes(out)).decode("ascii")


def walk(rng: random.Random, n: int, step: Tuple[float, float] = (1.0, 12.0), turn: float = 0.45,
         pauses: float = 0.05, start: Tuple[float, float] = (0.0, 0.0), pen: bool = False) -> List[Pt]:
    """A mouse-like stroke: a heading that drifts, uneven steps, now and then a repeated point."""
    x, y = start
    a = rng.uniform(0, 2 * math.pi)
    pts: List[Pt] = [(x, y, rng.uniform(0.2, 0.9) if pen else 0.5)]
    while len(pts) < n:
        if rng.random() < pauses:
            pts.append(pts[-1])
            continue
        a += rng.gauss(0, turn)
        s = rng.uniform(*step)
        x += s * math.cos(a)
        y += s * math.sin(a)
        pts.append((round(x, 2), round(y, 2), round(rng.uniform(0.2, 0.9), 3) if pen else 0.5))
    return pts


def loop(rng: random.Random, n: int, r: float) -> List[Pt]:
    """A wobbly closed loop through the origin."""
    pts: List[Pt] = []
    for i in range(n + 1):
        t = 2 * math.pi * i / n
        rr = r * (1 + 0.15 * math.sin(3 * t) + rng.uniform(-0.02, 0.02))
        pts.append((round(rr * math.cos(t) - r, 2), round(rr * math.sin(t), 2), 0.5))
    return pts


def zigzag(n: int, w: float, h: float) -> List[Pt]:
    return [(i * w, (i % 2) * h, 0.5) for i in range(n)]


class Doc:
    def __init__(self, legacy: bool = False) -> None:
        self.legacy = legacy
        self.shapes: List[Dict[str, Any]] = []

    def seg(self, kind: str, pts: Sequence[Pt], dim: int = 3) -> Dict[str, Any]:
        if self.legacy:
            return {"type": kind, "points": [{"x": p[0], "y": p[1], "z": p[2] if len(p) > 2 else 0.5} for p in pts]}
        s: Dict[str, Any] = {"type": kind, "path": encode(pts, dim)}
        if dim == 2:
            s["dim"] = 2
        return s

    def add(self, sid: str, kind: str, props: Dict[str, Any]) -> None:
        i = len(self.shapes)
        self.shapes.append({"x": 100 + (i % 8) * 400, "y": 100 + (i // 8) * 400, "rotation": 0,
                            "isLocked": False, "opacity": 1, "meta": {}, "id": "shape:" + sid, "type": kind,
                            "props": props, "parentId": PAGE, "index": "a" + DIG[i + 1], "typeName": "shape"})

    def draw(self, sid: str, segs: List[Dict[str, Any]], size: str = "m", complete: bool = True, closed: bool = False,
             pen: bool = False, scale: float = 1.0, sx: float = 1.0, sy: float = 1.0, fill: str = "none") -> None:
        p: Dict[str, Any] = {"segments": segs, "color": "black", "fill": fill, "dash": "draw", "size": size,
                             "isComplete": complete, "isClosed": closed, "isPen": pen}
        if not self.legacy:
            p.update(scale=scale, scaleX=sx, scaleY=sy)
        self.add(sid, "draw", p)

    def highlight(self, sid: str, segs: List[Dict[str, Any]], size: str = "m", complete: bool = True,
                  scale: float = 1.0, sx: float = 1.0, sy: float = 1.0) -> None:
        p: Dict[str, Any] = {"segments": segs, "color": "yellow", "size": size, "isComplete": complete, "isPen": False}
        if not self.legacy:
            p.update(scale=scale, scaleX=sx, scaleY=sy)
        self.add(sid, "highlight", p)

    def line(self, sid: str, pts: Sequence[Tuple[float, float]], spline: str = "line",
             order: Optional[List[int]] = None) -> None:
        keys = [f"a{DIG[i + 1]}" for i in range(len(pts))]
        points = {keys[j]: {"id": keys[j], "index": keys[j], "x": pts[j][0], "y": pts[j][1]}
                  for j in (order or range(len(pts)))}
        self.add(sid, "line", {"dash": "draw", "size": "m", "color": "black", "spline": spline,
                               "points": points, "scale": 1})

    def write(self, path: Path) -> None:
        assert len(self.shapes) <= 61  # one-digit index keys
        write_tldr(path, PAGE, self.shapes, LEGACY_SCHEMA if self.legacy else SCHEMA, separators=(",", ":"))


def draws(d: Doc, rng: random.Random) -> Doc:
    for size in SIZES:
        d.draw(f"walk_{size}", [d.seg("free", walk(rng, 70))], size)
        d.draw(f"open_{size}", [d.seg("free", walk(rng, 40, step=(0.5, 25)))], size, complete=False)
        d.draw(f"pen_{size}", [d.seg("free", walk(rng, 60, pen=True))], size, pen=True, complete=size != "l")
        d.draw(f"closed_{size}", [d.seg("free", loop(rng, 48, 40))], size, closed=True, fill="solid")
        d.draw(f"dot_{size}", [d.seg("free", [(0.0, 0.0, 0.5)])], size)
        d.draw(f"tiny_{size}", [d.seg("free", [(0, 0, .5), (1.2, 0.8, .5), (2.1, 1.5, .5)])], size)
        d.draw(f"lines_{size}", [d.seg("free", walk(rng, 12)), d.seg("straight", [(40, 40), (240, 90)]),
                                 d.seg("straight", [(240, 90), (230, 300)])], size)
    d.draw("zig", [d.seg("free", zigzag(14, 12, 30))])
    d.draw("pause", [d.seg("free", walk(rng, 20) + [(100.0, 50.0, .5)] * 40 + [(120.0, 70.0, .5), (150.0, 60.0, .5)])])
    d.draw("offset", [d.seg("free", walk(rng, 50, start=(35.5, -20.25)))], "l")
    d.draw("twotiny", [d.seg("free", [(0, 0, .5), (0.5, 0.5, .5)]), d.seg("free", [(1.0, 0.2, .5)])])
    d.draw("long", [d.seg("free", walk(rng, 400, step=(0.5, 6)))])
    d.draw("short2", [d.seg("free", [(0, 0, .5), (12, 5, .5)])], "s")
    d.draw("straight1", [d.seg("straight", [(0, 0), (7, 3)])])
    d.draw("straightonly", [d.seg("free", [(0, 0, .5)]), d.seg("straight", [(0, 0), (150, -60)])], "xl")
    return d


def highlights(d: Doc, rng: random.Random) -> Doc:
    for size in SIZES:
        d.highlight(f"hwalk_{size}", [d.seg("free", walk(rng, 60, step=(2, 14)))], size)
        d.highlight(f"hopen_{size}", [d.seg("free", walk(rng, 30))], size, complete=False)
        d.highlight(f"hdot_{size}", [d.seg("free", [(0.0, 0.0, 0.5)])], size)
    d.highlight("hshort", [d.seg("free", [(0, 0, .5), (4, 3, .5), (9, 5, .5), (14, 4, .5)])])
    d.highlight("hzig", [d.seg("free", zigzag(10, 25, 60))])
    d.highlight("hstraight", [d.seg("free", walk(rng, 10)), d.seg("straight", [(30, 10), (300, 40)])], "l",
                complete=False)
    d.highlight("hbig", [d.seg("free", loop(rng, 40, 80))], "xl")
    return d


def draw_doc() -> Doc:
    return draws(Doc(), random.Random(1))


def highlight_doc() -> Doc:
    rng = random.Random(2)
    d = highlights(Doc(), rng)
    for sc, sx, sy, size in [(0.5, 1, 1, "m"), (2.5, 1, 1, "xl"), (1, 2, 1, "m"), (1, 1, -1, "l"),
                             (1, -0.5, 1.5, "s"), (3, 1, 1, "s")]:
        tag = f"_{sc}_{sx}_{sy}".replace(".", "p").replace("-", "m")
        d.draw("scaled" + tag, [d.seg("free", walk(rng, 50))], size, scale=sc, sx=sx, sy=sy)
        d.draw("sdot" + tag, [d.seg("free", [(0.0, 0.0, .5), (0.5, 0.2, .5)])], size, scale=sc, sx=sx, sy=sy)
        d.highlight("hscaled" + tag, [d.seg("free", walk(rng, 40))], size, scale=sc, sx=sx, sy=sy)
    d.draw("dim2", [d.seg("free", walk(rng, 60), dim=2)])
    d.draw("dim2lines", [d.seg("free", walk(rng, 8), dim=2), d.seg("straight", [(0, 0), (90, 120)], dim=2)], "l")
    d.highlight("hdim2", [d.seg("free", walk(rng, 40), dim=2)], "s")
    d.highlight("hdim2dot", [d.seg("free", [(3.0, 4.0)], dim=2)])
    return d


def line_doc() -> Doc:
    rng = random.Random(3)
    d = Doc()
    for k in range(2, 7):
        pts = [(round(rng.uniform(-150, 150), 2), round(rng.uniform(-150, 150), 2)) for _ in range(k)]
        order = list(range(k))
        rng.shuffle(order)
        d.line(f"line{k}", pts, "line", order)
        d.line(f"cubic{k}", pts, "cubic", order)
    d.line("cubicS", [(0, 0), (100, -80), (200, 80), (300, 0)], "cubic")
    d.line("cubicback", [(0, 0), (200, 0), (0, 10), (200, 20)], "cubic")
    d.line("cubicloop", [(0, 0), (100, 0), (100, 100), (0, 100), (0, 0)], "cubic")
    d.line("single", [(30, 40)], "line")
    d.line("singlecubic", [(30, 40)], "cubic")
    return d


def rotated_doc() -> Doc:
    rng = random.Random(6)
    d = Doc()
    for k, rot in enumerate([0.3, 1.2, 2.5, 4.0, 5.5]):
        size = SIZES[k % 4]
        d.draw(f"rdraw{k}", [d.seg("free", walk(rng, 60))], size)
        d.draw(f"rclosed{k}", [d.seg("free", loop(rng, 30, 30))], size, closed=True)
        d.highlight(f"rhighlight{k}", [d.seg("free", walk(rng, 40))], size)
        d.line(f"rline{k}", [(0, 0), (100, 50), (180, -40)], "line")
        d.line(f"rcubic{k}", [(0, 0), (100, 50), (180, -40)], "cubic")
        d.draw(f"rdot{k}", [d.seg("free", [(0.0, 0.0, .5)])], "xl", scale=2.5)
        for s in d.shapes[-6:]:
            s["rotation"] = rot
    # strokes inside a rotated frame and a group
    d.add("frame", "frame", {"w": 600, "h": 400, "name": "", "color": "black"})
    d.shapes[-1]["rotation"] = 0.4
    d.draw("framed", [d.seg("free", walk(rng, 50, start=(100, 100)))])
    d.line("framedline", [(50, 50), (250, 120), (300, 300)], "cubic")
    for s, rot in zip(d.shapes[-2:], (0.3, -0.8)):
        s["parentId"], s["x"], s["y"], s["rotation"] = "shape:frame", 150, 100, rot
    d.add("group", "group", {})
    d.shapes[-1]["rotation"] = -0.6
    d.draw("grouped", [d.seg("free", walk(rng, 50))], "l")
    d.highlight("groupedhl", [d.seg("free", walk(rng, 30))], "s")
    for s, (x, rot) in zip(d.shapes[-2:], ((0, 0.5), (200, 2.0))):
        s["parentId"], s["x"], s["y"], s["rotation"] = "shape:group", x, 0, rot
    return d


def reduce_truth(raw_path: Path) -> Dict[str, Any]:
    raw = json.loads(raw_path.read_text())
    out: Dict[str, Any] = {}
    for page in raw["pages"]:
        for s in page["shapes"]:
            b = s["pageBounds"]
            out[s["id"]] = {"type": s["type"], "pageBounds": [round(v, 6) for v in (b["x"], b["y"], b["w"], b["h"])]}
    return {"tldrawVersion": raw.get("tldrawVersion"), "shapes": out}


DOCS = {
    "freehand_draw": draw_doc,
    "freehand_highlight": highlight_doc,
    "freehand_line": line_doc,
    "freehand_rotated": rotated_doc,
    "freehand_legacy_draw": lambda: draws(Doc(legacy=True), random.Random(4)),
    "freehand_legacy_highlight": lambda: highlights(Doc(legacy=True), random.Random(5)),
}

if __name__ == "__main__":
    main(HERE, DOCS, reduce_truth)
