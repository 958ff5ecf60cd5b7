"""Write the arrow conformance documents (``arrows_*.tldr``) beside this script.

Each document lays out a grid of small cases: one or two target shapes and arrows
bound to them with one binding option varied at a time (every geo kind, text,
note, frame, line and draw targets, precise and imprecise anchors, exact
bindings, rotated targets, bends of both signs, arrowheads on and off, scale,
labels, both ends on one shape or on nested shapes, free arcs). The truth files
``arrows_*.truth.json`` hold what the real tldraw 5.4.2 editor computed for them
(page bounds of every arrow and the page points of its drawn ends), reduced by
``--truth RAW.json`` from the tldraw harness's output.

Usage::

    python make_arrows.py                      # writes the .tldr documents
    python make_arrows.py --truth NAME RAW.json  # keeps the asserted fields of a harness run
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

from tldr_doc import main, rich, write_tldr

HERE = Path(__file__).resolve().parent
PAGE = "page:conf"


GEOS = ["rectangle", "ellipse", "triangle", "diamond", "pentagon", "hexagon", "octagon", "star", "rhombus",
        "rhombus-2", "oval", "trapezoid", "arrow-left", "arrow-right", "arrow-up", "arrow-down", "x-box",
        "check-box", "cloud", "heart"]


class Doc:
    def __init__(self) -> None:
        self.records: List[Dict[str, Any]] = []
        self.n = 0

    def _index(self) -> str:
        self.n += 1
        return f"a1{self.n:04d}V"

    def shape(self, sid: str, typ: str, x: float, y: float, props: Dict[str, Any], rotation: float = 0.0,
              parent: str = PAGE) -> str:
        self.records.append({"x": x, "y": y, "rotation": rotation, "isLocked": False, "opacity": 1, "meta": {},
                             "id": sid, "type": typ, "props": props, "parentId": parent, "index": self._index(),
                             "typeName": "shape"})
        return sid

    def geo(self, sid: str, x: float, y: float, w: float, h: float, geo: str = "rectangle", rotation: float = 0.0,
            size: str = "m", text: str = "", flip: bool = False, parent: str = PAGE) -> str:
        return self.shape(sid, "geo", x, y, {
            "w": w, "h": h, "geo": geo, "dash": "draw", "growY": 0, "url": "", "scale": 1, "flipX": flip,
            "flipY": False, "color": "black", "labelColor": "black", "fill": "none", "size": size, "font": "draw",
            "align": "middle", "verticalAlign": "middle", "richText": rich(text)}, rotation, parent)

    def text(self, sid: str, x: float, y: float, text: str) -> str:
        return self.shape(sid, "text", x, y, {"color": "black", "size": "m", "w": 8, "font": "draw",
                                              "textAlign": "start", "autoSize": True, "scale": 1,
                                              "richText": rich(text)})

    def note(self, sid: str, x: float, y: float, rotation: float = 0.0) -> str:
        return self.shape(sid, "note", x, y, {
            "color": "yellow", "richText": rich(""), "size": "m", "font": "draw", "align": "middle",
            "verticalAlign": "middle", "labelColor": "black", "growY": 0, "fontSizeAdjustment": 1, "url": "",
            "scale": 1, "textLastEditedBy": None}, rotation)

    def frame(self, sid: str, x: float, y: float, w: float, h: float) -> str:
        return self.shape(sid, "frame", x, y, {"w": w, "h": h, "name": "F", "color": "black"})

    def line(self, sid: str, x: float, y: float, pts: List[Tuple[float, float]], spline: str = "line") -> str:
        points = {f"a{i + 1}": {"id": f"a{i + 1}", "index": f"a{i + 1}", "x": px, "y": py}
                  for i, (px, py) in enumerate(pts)}
        return self.shape(sid, "line", x, y, {"dash": "draw", "size": "m", "color": "black", "spline": spline,
                                              "points": points, "scale": 1})

    def arrow(self, sid: str, x: float, y: float, start: Tuple[float, float], end: Tuple[float, float],
              bend: float = 0.0, head_start: str = "none", head_end: str = "arrow", size: str = "m",
              scale: float = 1.0, text: str = "", label_pos: float = 0.5, rotation: float = 0.0,
              parent: str = PAGE) -> str:
        return self.shape(sid, "arrow", x, y, {
            "kind": "arc", "elbowMidPoint": 0.5, "dash": "draw", "size": size, "fill": "none", "color": "black",
            "labelColor": "black", "bend": bend, "start": {"x": start[0], "y": start[1]},
            "end": {"x": end[0], "y": end[1]}, "arrowheadStart": head_start, "arrowheadEnd": head_end,
            "richText": rich(text), "labelPosition": label_pos, "font": "draw", "scale": scale}, rotation, parent)

    def bind(self, arrow: str, target: str, terminal: str, anchor: Tuple[float, float] = (0.5, 0.5),
             precise: bool = False, exact: bool = False) -> None:
        self.records.append({"meta": {}, "id": f"binding:{arrow[6:]}_{terminal}", "type": "arrow",
                             "fromId": arrow, "toId": target,
                             "props": {"isPrecise": precise, "isExact": exact,
                                       "normalizedAnchor": {"x": anchor[0], "y": anchor[1]}, "snap": "none",
                                       "terminal": terminal},
                             "typeName": "binding"})

    def write(self, path: Path) -> None:
        write_tldr(path, PAGE, self.records, indent=0)


def targets_doc() -> Doc:
    """Every geo kind as a target: imprecise and precise, with and without heads, straight and bent."""
    d = Doc()
    for i, geo in enumerate(GEOS):
        ox, oy = (i % 5) * 700.0, (i // 5) * 700.0
        t = d.geo(f"shape:t{i}", ox + 300, oy + 200, 180, 120, geo, flip=(geo == "trapezoid"))
        a = d.arrow(f"shape:a{i}_c", ox, oy, (20, 0), (0, 0))
        d.bind(a, t, "end")
        a = d.arrow(f"shape:a{i}_p", ox, oy + 500, (0, 0), (0, 0), head_start="arrow", head_end="none")
        d.bind(a, t, "start", (0.8, 0.3), precise=True)
        a = d.arrow(f"shape:a{i}_b", ox + 600, oy + 450, (0, 0), (0, 0), bend=60)
        d.bind(a, t, "end", (0.3, 0.7), precise=True)
        a = d.arrow(f"shape:a{i}_n", ox + 650, oy + 30, (0, 0), (0, 0), bend=-90, head_start="arrow")
        d.bind(a, t, "end")
    return d


def options_doc() -> Doc:
    """Binding options one at a time on rectangles, ellipses and other targets."""
    d = Doc()
    col = [0]

    def cell() -> Tuple[float, float]:
        k = col[0]
        col[0] += 1
        return (k % 6) * 600.0, (k // 6) * 500.0

    def case(name: str, geo: str = "rectangle", rotation: float = 0.0, **kw: Any) -> None:
        ox, oy = cell()
        bkw = {k: kw.pop(k) for k in ("anchor", "precise", "exact") if k in kw}
        t = d.geo(f"shape:{name}_t", ox + 250, oy + 150, 160, 110, geo, rotation=rotation)
        a = d.arrow(f"shape:{name}", ox, oy, (0, 0), (0, 0), **kw)
        d.bind(a, t, "end", **bkw)

    case("imprecise")
    case("precise", anchor=(0.1, 0.9), precise=True)
    case("exact", anchor=(0.2, 0.2), precise=True, exact=True)
    case("exact_center", exact=True)
    case("nohead", head_end="none")
    case("bothheads", head_start="arrow", head_end="triangle")
    case("size_s", size="s")
    case("size_xl", size="xl")
    case("scale2", scale=2.0)
    case("scale_half", scale=0.5, bend=30)
    case("bend_pos", bend=80)
    case("bend_neg", bend=-80)
    case("bend_small", bend=5)
    case("bend_big", bend=220)
    case("rot", rotation=0.6)
    case("rot_precise", rotation=-0.9, anchor=(0.9, 0.1), precise=True)
    case("rot_bend", rotation=0.6, bend=-70)
    case("ell_precise", geo="ellipse", anchor=(0.95, 0.5), precise=True)
    case("ell_rot", geo="ellipse", rotation=1.1, bend=40)
    case("label", text="a label")
    case("label_long", text="a much longer label that wraps")
    case("label_bend", text="arc label", bend=70)
    case("label_pos", text="x", label_pos=0.1)
    case("anchor_edge", anchor=(0.0, 1.0), precise=True)
    # both ends on shapes
    ox, oy = cell()
    s = d.geo("shape:two_s", ox, oy + 100, 120, 80)
    e = d.geo("shape:two_e", ox + 350, oy + 250, 120, 80, "ellipse")
    a = d.arrow("shape:two", ox, oy, (0, 0), (0, 0), head_start="arrow")
    d.bind(a, s, "start")
    d.bind(a, e, "end", (0.2, 0.2), precise=True)
    a = d.arrow("shape:two_bend", ox, oy, (0, 0), (0, 0), bend=50)
    d.bind(a, s, "start")
    d.bind(a, e, "end")
    ox, oy = cell()
    s = d.geo("shape:self_t", ox + 100, oy + 100, 200, 150)
    a = d.arrow("shape:self", ox, oy, (0, 0), (0, 0), bend=80)
    d.bind(a, s, "start", (0.2, 0.5), precise=True)
    d.bind(a, s, "end", (0.8, 0.5), precise=True)
    a = d.arrow("shape:self_straight", ox, oy, (0, 0), (0, 0))
    d.bind(a, s, "start", (0.2, 0.3), precise=False)
    d.bind(a, s, "end", (0.7, 0.8), precise=False)
    ox, oy = cell()
    outer = d.geo("shape:nest_o", ox, oy + 50, 400, 300)
    inner = d.geo("shape:nest_i", ox + 150, oy + 150, 100, 80)
    a = d.arrow("shape:nest", ox, oy, (0, 0), (0, 0))
    d.bind(a, outer, "start", (0.1, 0.1), precise=False)
    d.bind(a, inner, "end")
    ox, oy = cell()
    s = d.geo("shape:near_s", ox, oy + 100, 120, 80)
    e = d.geo("shape:near_e", ox + 125, oy + 110, 120, 80)
    a = d.arrow("shape:near", ox, oy, (0, 0), (0, 0), head_start="arrow")
    d.bind(a, s, "start")
    d.bind(a, e, "end")
    # other target types
    ox, oy = cell()
    t = d.text("shape:txt_t", ox + 250, oy + 150, "Some text")
    a = d.arrow("shape:txt", ox, oy, (0, 0), (0, 0))
    d.bind(a, t, "end")
    a = d.arrow("shape:txt_nohead", ox, oy + 300, (0, 0), (0, 0), head_end="none")
    d.bind(a, t, "end")
    ox, oy = cell()
    t = d.note("shape:note_t", ox + 250, oy + 100, rotation=0.3)
    a = d.arrow("shape:note", ox, oy, (0, 0), (0, 0), bend=-40)
    d.bind(a, t, "end", (0.7, 0.2), precise=True)
    ox, oy = cell()
    t = d.frame("shape:frame_t", ox + 250, oy + 100, 200, 150)
    a = d.arrow("shape:frame", ox, oy, (0, 0), (0, 0))
    d.bind(a, t, "end")
    ox, oy = cell()
    t = d.line("shape:line_t", ox + 250, oy + 100, [(0, 0), (100, 120), (220, 20)])
    a = d.arrow("shape:line", ox, oy, (0, 0), (0, 0))
    d.bind(a, t, "end", (0.5, 0.5), precise=True)
    ox, oy = cell()
    t = d.line("shape:spline_t", ox + 250, oy + 100, [(0, 0), (100, 120), (220, 20)], "cubic")
    a = d.arrow("shape:spline", ox, oy, (0, 0), (0, 0), bend=40)
    d.bind(a, t, "end", (0.3, 0.5), precise=True)
    # free arrows: arcs, labels, scale, rotation
    ox, oy = cell()
    d.arrow("shape:free_arc", ox, oy, (0, 0), (300, 100), bend=90)
    d.arrow("shape:free_arc_neg", ox, oy + 200, (0, 0), (300, -50), bend=-140, scale=1.5)
    ox, oy = cell()
    d.arrow("shape:free_label", ox, oy, (0, 0), (300, 0), text="free label")
    d.arrow("shape:free_label_v", ox, oy + 100, (0, 0), (10, 250), text="vertical")
    d.arrow("shape:free_rot", ox + 300, oy + 100, (0, 0), (200, 50), bend=30, rotation=0.7)
    return d


def reduce_truth(raw_path: Path) -> Dict[str, Any]:
    raw = json.loads(raw_path.read_text())
    out: Dict[str, Any] = {}
    for page in raw["pages"]:
        for s in page["shapes"]:
            if s["type"] != "arrow":
                continue
            a = s["arrow"]
            out[s["id"]] = {
                "pageBounds": [round(v, 6) for v in (s["pageBounds"]["x"], s["pageBounds"]["y"],
                                                     s["pageBounds"]["w"], s["pageBounds"]["h"])],
                "kind": a["kind"], "isValid": a["isValid"],
                "start": [round(a["start"]["pagePoint"]["x"], 6), round(a["start"]["pagePoint"]["y"], 6)],
                "end": [round(a["end"]["pagePoint"]["x"], 6), round(a["end"]["pagePoint"]["y"], 6)],
            }
    return {"tldrawVersion": raw.get("tldrawVersion"), "arrows": out}


DOCS = {"arrows_targets": targets_doc, "arrows_options": options_doc}

if __name__ == "__main__":
    main(HERE, DOCS, reduce_truth)
