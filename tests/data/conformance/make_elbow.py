"""Write the elbow arrow conformance document (``elbow.tldr``) beside this script.

Each cell holds two target shapes and one elbow arrow (``kind: "elbow"``) between
them: the end target in every position around the start target (left, right,
above, below, the diagonals, close, touching, overlapping and nested), bound
imprecisely, with precise anchors on every side, with seeded random anchors,
with ``elbowMidPoint`` moved, labelled, with a free start or both ends free, scaled and
sized, snapped to edges, with rotated targets and a rotated arrow, with arrowheads on and off, to
ellipses, diamonds, text, notes and lines, and both ends on one shape. The truth
file ``elbow.truth.json`` holds what the real tldraw 5.4.2 editor computed (page
bounds of every arrow and the page points of its drawn ends).

Usage::

    python make_elbow.py                      # writes the .tldr document
    python make_elbow.py --truth NAME RAW.json  # keeps the asserted fields of a harness run
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from make_arrows import PAGE, Doc, reduce_truth
from tldr_doc import main, write_tldr

HERE = Path(__file__).resolve().parent
OFFSETS = (-420.0, -190.0, -60.0, 0.0, 60.0, 190.0, 420.0)


class ElbowDoc(Doc):
    def elbow(self, sid: str, x: float, y: float, start: Tuple[float, float] = (0, 0),
              end: Tuple[float, float] = (0, 0), mid: float = 0.5, **kw: Any) -> str:
        a = self.arrow(sid, x, y, start, end, **kw)
        self.records[-1]["props"].update(kind="elbow", elbowMidPoint=mid)
        return a

    def write(self, path: Path) -> None:
        write_tldr(path, PAGE, self.records, separators=(",", ":"))


def elbow_doc() -> ElbowDoc:
    d = ElbowDoc()
    k = [0]
    rng = random.Random(13)

    def cell() -> Tuple[float, float]:
        i = k[0]
        k[0] += 1
        return (i % 10) * 1400.0, (i // 10) * 1200.0

    def pair(name: str, dx: float, dy: float, s_anchor: Optional[Tuple[float, float]] = None,
             e_anchor: Optional[Tuple[float, float]] = None, free_start: bool = False, geo_b: str = "rectangle",
             rot_a: float = 0.0, rot_b: float = 0.0, sizes: Tuple[float, float, float, float] = (160, 100, 120, 80),
             **kw: Any) -> None:
        ox, oy = cell()
        ax, ay = ox + 500, oy + 500
        wa, ha, wb, hb = sizes
        a = d.geo(f"shape:{name}_a", ax, ay, wa, ha, rotation=rot_a)
        b = d.geo(f"shape:{name}_b", ax + wa / 2 + dx - wb / 2, ay + ha / 2 + dy - hb / 2, wb, hb, geo_b,
                  rotation=rot_b)
        arr = d.elbow(f"shape:{name}", ox, oy, start=(ax - 200 + dx * 0.3, ay - 150), **kw)
        if not free_start:
            d.bind(arr, a, "start", s_anchor or (0.5, 0.5), precise=s_anchor is not None)
        d.bind(arr, b, "end", e_anchor or (0.5, 0.5), precise=e_anchor is not None)

    # every relative position, imprecise
    for i, dx in enumerate(OFFSETS):
        for j, dy in enumerate(OFFSETS):
            pair(f"pos_{i}{j}", dx * 1.0, dy * 0.8)
    # precise anchors on given sides
    sides = {"l": (0.02, 0.5), "r": (0.98, 0.5), "t": (0.5, 0.02), "b": (0.5, 0.98)}
    for i, (dx, dy) in enumerate([(400, 0), (0, 300), (400, 300), (-400, -250), (60, 250)]):
        for sa in sides:
            for sb in sides:
                pair(f"side_{i}_{sa}{sb}", dx, dy, sides[sa], sides[sb])
    # seeded random anchors, one end or both
    for i in range(24):
        dx, dy = rng.choice(OFFSETS), rng.choice(OFFSETS)
        sa = (round(rng.uniform(0, 1), 3), round(rng.uniform(0, 1), 3)) if i % 3 else None
        sb = (round(rng.uniform(0, 1), 3), round(rng.uniform(0, 1), 3)) if i % 3 != 1 else None
        pair(f"rand_{i}", dx, dy, sa, sb)
    # the mid-line moved
    for i, m in enumerate((0.0, 0.2, 0.8, 1.0)):
        pair(f"mid_x{i}", 420, 150, mid=m)
        pair(f"mid_y{i}", 100, 380, mid=m)
        pair(f"mid_p{i}", 420, 150, (0.98, 0.5), (0.5, 0.02), mid=m)
    # a free start, and free both ends
    for i, (dx, dy) in enumerate([(400, 0), (-400, 200), (0, 300), (100, -300), (0, 0), (30, 20)]):
        pair(f"free_{i}", dx, dy, free_start=True)
        pair(f"freep_{i}", dx, dy, e_anchor=(0.98, 0.3), free_start=True)
    for i, (ex, ey) in enumerate([(300, 200), (-300, 200), (300, -200), (40, 300), (300, 20), (20, 20),
                                  (0, 300), (300, 0), (-10, -250), (5, 5)]):
        ox, oy = cell()
        d.elbow(f"shape:pts_{i}", ox + 300, oy + 300, (0, 0), (ex, ey), head_start="arrow" if i % 2 else "none")
    # arrowheads, sizes, scale
    for name, kw in {"heads_none": dict(head_end="none"), "heads_both": dict(head_start="arrow"),
                     "heads_start": dict(head_start="triangle", head_end="none"), "size_s": dict(size="s"),
                     "size_xl": dict(size="xl"), "scale2": dict(scale=2.0), "scale_half": dict(scale=0.5)}.items():
        pair(f"{name}_x", 400, 120, **kw)
        pair(f"{name}_y", 60, 300, **kw)
        pair(f"{name}_n", 60, 90, **kw)
    # overlapping and nested
    for i, (dx, dy) in enumerate([(40, 30), (-30, 50), (0, 0), (90, 0)]):
        pair(f"over_{i}", dx, dy)
        pair(f"overp_{i}", dx, dy, (0.98, 0.5), (0.02, 0.5))
    pair("nest_in", 0, 0, sizes=(400, 300, 100, 60))
    pair("nest_in_off", 100, 60, sizes=(400, 300, 100, 60))
    pair("nest_out", 0, 0, sizes=(100, 60, 400, 300))
    pair("nest_in_p", 50, 20, (0.98, 0.5), (0.02, 0.5), sizes=(400, 300, 100, 60))
    # other target kinds
    for geo in ("ellipse", "diamond", "triangle", "star", "cloud"):
        pair(f"geo_{geo}", 400, 200, geo_b=geo)
        pair(f"geo_{geo}_p", 60, 330, e_anchor=(0.3, 0.05), geo_b=geo)
    # rotated targets and a rotated arrow
    for i, r in enumerate((0.3, 0.785, 1.5708, 2.5)):
        pair(f"rot_{i}", 400, 180, rot_b=r)
        pair(f"rotp_{i}", 400, 180, (0.98, 0.5), (0.02, 0.5), rot_b=r)
        pair(f"rota_{i}", -100, 360, (0.5, 0.98), None, rot_a=r)
    ox, oy = cell()
    a = d.geo("shape:arot_a", ox + 300, oy + 300, 160, 100)
    b = d.geo("shape:arot_b", ox + 800, oy + 600, 120, 80)
    arr = d.elbow("shape:arot", ox, oy, rotation=0.5)
    d.bind(arr, a, "start")
    d.bind(arr, b, "end")
    arr = d.elbow("shape:arot_p", ox, oy, rotation=-0.3)
    d.bind(arr, a, "start", (0.98, 0.5), precise=True)
    d.bind(arr, b, "end", (0.5, 0.02), precise=True)
    # text, note and line targets
    ox, oy = cell()
    a = d.geo("shape:tx_a", ox + 300, oy + 300, 160, 100)
    t = d.text("shape:tx_t", ox + 800, oy + 600, "Some text")
    arr = d.elbow("shape:tx", ox, oy)
    d.bind(arr, a, "start")
    d.bind(arr, t, "end")
    arr = d.elbow("shape:tx_nohead", ox, oy, head_end="none")
    d.bind(arr, a, "start")
    d.bind(arr, t, "end")
    ox, oy = cell()
    a = d.geo("shape:nt_a", ox + 300, oy + 300, 160, 100)
    t = d.note("shape:nt_t", ox + 800, oy + 500)
    arr = d.elbow("shape:nt", ox, oy, head_start="arrow")
    d.bind(arr, a, "start")
    d.bind(arr, t, "end", (0.2, 0.1), precise=True)
    ox, oy = cell()
    a = d.geo("shape:ln_a", ox + 300, oy + 300, 160, 100)
    t = d.line("shape:ln_t", ox + 800, oy + 500, [(0, 0), (100, 120), (220, 20)])
    arr = d.elbow("shape:ln", ox, oy)
    d.bind(arr, a, "start")
    d.bind(arr, t, "end", (0.5, 0.5), precise=True)
    arr = d.elbow("shape:ln2", ox, oy)
    d.bind(arr, a, "start")
    d.bind(arr, t, "end", (0.1, 0.05), precise=True)
    # labels: wide and tall routes, long text, positions, scale, heads off, a free start
    pair("lab_x", 420, 150, text="label")
    pair("lab_y", 60, 380, text="a label")
    pair("lab_long", 420, 150, text="a much longer label that wraps around")
    pair("lab_lo", 420, 150, text="lo", label_pos=0.05)
    pair("lab_hi", 420, 150, text="hi", label_pos=0.95)
    pair("lab_hi_nohead", 420, 150, text="hi", label_pos=0.95, head_end="none")
    pair("lab_scale", 420, 150, text="big", scale=2.0)
    pair("lab_free", 420, 150, text="free", free_start=True, label_pos=0.0)
    pair("lab_xl", 60, 380, text="xl label", size="xl")
    pair("lab_close", 60, 90, text="close label")
    pair("lab_squish", 330, 40, text="a much longer label that wraps around", head_start="arrow")
    pair("lab_squish_lo", 330, 40, text="a much longer label", label_pos=0.0, head_start="arrow")
    pair("lab_short_lo", 300, 200, text="short", label_pos=0.0)
    pair("lab_short_hi", 300, 200, text="short", label_pos=1.0, size="l")
    for i, dx in enumerate((250, 290, 330, 420)):  # flat routes: the label's squished height shows
        pair(f"lab_flat{i}", dx, 0, text="a label squished to the route's width", head_start="arrow")
        pair(f"lab_flat{i}_lo", dx, 0, text="a longer label squished", label_pos=0.0, size="l")
    # both ends on one shape
    ox, oy = cell()
    s = d.geo("shape:self_t", ox + 300, oy + 300, 200, 150)
    arr = d.elbow("shape:self", ox, oy)
    d.bind(arr, s, "start", (0.2, 0.5), precise=True)
    d.bind(arr, s, "end", (0.8, 0.5), precise=True)
    arr = d.elbow("shape:self_i", ox, oy)
    d.bind(arr, s, "start")
    d.bind(arr, s, "end")
    # edge snaps: both ends on one shape's edges go round it; a demoted terminal keeps its gap
    for i, (sa, sb) in enumerate([((0.98, 0.4), (0.02, 0.6)), ((0.5, 0.02), (0.98, 0.7)), ((0.3, 0.98), (0.7, 0.98))]):
        ox, oy = cell()
        s = d.geo(f"shape:snap{i}_t", ox + 300, oy + 300, 200, 150)
        arr = d.elbow(f"shape:snap{i}", ox, oy)
        d.bind(arr, s, "start", sa, precise=True)
        d.bind(arr, s, "end", sb, precise=True)
        d.records[-1]["props"]["snap"] = d.records[-2]["props"]["snap"] = "edge"
    for i, tscale in enumerate((2.0, 0.5)):  # a target's own scale widens its stroke, hence the gap
        pair(f"tscale{i}", 400, 150, head_start="arrow")
        d.records[-4]["props"]["scale"] = d.records[-5]["props"]["scale"] = tscale
    pair("snap_near", 60, 90, (0.98, 0.5), (0.02, 0.5))
    d.records[-1]["props"]["snap"] = d.records[-2]["props"]["snap"] = "edge-point"
    pair("snap_over", 40, 30, (0.98, 0.5), (0.5, 0.02))
    d.records[-1]["props"]["snap"] = d.records[-2]["props"]["snap"] = "edge"
    return d


DOCS = {"elbow": elbow_doc}

if __name__ == "__main__":
    main(HERE, DOCS, reduce_truth)
