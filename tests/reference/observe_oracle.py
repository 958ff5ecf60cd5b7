"""A straightforward pure-Python observation, written from DESIGN §4 and observe's docstrings.

It reads the canvas one node at a time (page_bounds, visible_bounds, ancestors)
and decides every relation by looking at every pair, so it is O(n²); the
geometry kernels' own naive oracles stand in for proximity, alignment and
reading order. Tests compare it with :func:`spatialobs.canvas.observe` record
for record, and the benchmarks use it as the baseline.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from spatialobs.canvas.observe import GUIDE  # noqa: F401  (same guide)
from spatialobs.canvas.paint import (along_stroke, clip_convex, fills_area, local_outline, paints_interior,
                                     straight_segment, stroke_and_heads)
from tests.reference import coverage_oracle as COV
from tests.reference import geometry_oracle as GO

LABELS = ("visible", "partial", "occluded", "offscreen_near", "offscreen_far")
KINDS = ("left", "center_x", "right", "top", "center_y", "bottom")
REL_ORDER = ("parent", "bound", "touches", "inside", "occludes", "overlaps", "near", "aligned")
CONNECTORS = ("arrow", "line")


def jsround(v: float) -> int:
    return int(math.floor(v + 0.5))


def abbrev(text: Optional[str]) -> Optional[str]:
    if not text:
        return None
    t = " ".join(str(text).split())
    if not t:
        return None
    return t if len(t) <= 80 else t[:79] + "…"


def terminal_points(node) -> Tuple[Any, Any]:
    def xy(p):
        try:
            if isinstance(p, dict):
                if p.get("type", "point") != "point":
                    return None
                x, y = float(p["x"]), float(p["y"])
            else:
                x, y = float(p[0]), float(p[1])
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        return (x, y) if math.isfinite(x) and math.isfinite(y) else None

    pts = node.props.get("points")
    if isinstance(pts, list) and len(pts) >= 2:
        return xy(pts[0]), xy(pts[-1])
    return xy(node.props.get("start")), xy(node.props.get("end"))


def observe_naive(canvas, viewport, *, page=None, selected=None, context=(), max_objects=180,
                  max_relations=700, origin=(0, 0), include_bounds=False, near_factor=0.75,
                  near_gap=32.0, align_tol=1.0, row_tol=10.0, touch_tol=4.0, min_opacity=0.9,
                  occlusion="painted") -> Dict[str, Any]:
    """The observation as a dict (what ``observe(...).to_dict()`` returns); viewport (x, y, w, h)."""
    pid = page or canvas.current_page
    vx, vy, vw, vh = viewport
    vbox = (vx, vy, vx + vw, vy + vh)
    ox, oy = origin
    ids = canvas.paint_order(pid)
    n = len(ids)
    row = {nid: r for r, nid in enumerate(ids)}
    nodes = [canvas.nodes[i] for i in ids]
    types = [nd.type for nd in nodes]
    bounds = [canvas.page_bounds(i) for i in ids]
    vis = [canvas.visible_bounds(i) for i in ids]
    gone = [v is None for v in vis]
    box = [b if v is None else v for b, v in zip(bounds, vis)]
    anc = [[row[a] for a in canvas.ancestors(i)] for i in ids]
    parent = [a[0] if a else -1 for a in anc]
    hidden = [nd.hidden or any(nodes[a].hidden for a in anc[r]) for r, nd in enumerate(nodes)]
    locked = [nd.locked or any(nodes[a].locked for a in anc[r]) for r, nd in enumerate(nodes)]
    opacity = []
    for r, nd in enumerate(nodes):
        o = nd.opacity
        for a in anc[r]:
            o *= nodes[a].opacity
        opacity.append(o)
    frame = [next((a for a in anc[r] if types[a] == "frame"), -1) for r in range(n)]
    group = [next((a for a in anc[r] if types[a] == "group"), -1) for r in range(n)]
    solid = [t not in CONNECTORS and t != "group" for t in types]

    def related(a, b):
        return a in anc[b] or b in anc[a]

    def page_poly(r, local):
        out = []
        for x, y in local:
            for k in [r] + anc[r]:
                nd = nodes[k]
                cs, sn = math.cos(nd.rotation), math.sin(nd.rotation)
                x, y = nd.x + cs * x - sn * y, nd.y + sn * x + cs * y
            out.append((x, y))
        return out

    def region(r):
        # the outline on the page, clipped by every frame ancestor
        poly = page_poly(r, local_outline(nodes[r]).tolist())
        for a in anc[r]:
            if types[a] == "frame":
                fw, fh = nodes[a].w, nodes[a].h
                poly = clip_convex(np.array(poly, dtype=np.float64).reshape(-1, 2),
                                   np.array(page_poly(a, [(0, 0), (fw, 0), (fw, fh), (0, fh)]), dtype=np.float64)).tolist()
        return poly

    def painted_occluder(i, c):
        # every higher shape that paints an opaque interior, on its outline; the target's
        # outline clipped to the view (a sliver for a line); covered entirely, up to rounding
        sliver = c[2] - c[0] <= 0 or c[3] - c[1] <= 0
        if sliver:
            e = 1e-3 * max(1.0, abs(c[0]), abs(c[1]))
            c = (c[0] - e, c[1] - e, c[2] + e, c[3] + e)
        painters = [j for j in range(i + 1, n) if solid[j] and not hidden[j] and not gone[j]
                    and opacity[j] >= min_opacity and paints_interior(types[j], nodes[j].style, min_opacity)
                    and GO.overlaps_area(box[j], c)]
        if not painters:
            return -1
        if sliver:
            tpoly = [(c[0], c[1]), (c[2], c[1]), (c[2], c[3]), (c[0], c[3])]
        else:
            tpoly = clip_convex(np.array(region(i), dtype=np.float64),
                                np.array([(vbox[0], vbox[1]), (vbox[2], vbox[1]), (vbox[2], vbox[3]), (vbox[0], vbox[3])])).tolist()
        if len(tpoly) < 3:
            return -1
        fr = lambda poly: [(Fraction(x), Fraction(y)) for x, y in poly]  # noqa: E731
        area, covered, best = COV.coverage(fr(tpoly), [fr(region(j)) for j in painters])
        need = Fraction(9, 10) if fills_area(types[i], nodes[i].style) else Fraction(1)
        if area > 0 and area - covered <= (1 - need + Fraction(1, 10**9)) * area and best is not None:
            return painters[best]
        return -1

    d = canvas.geometry()
    place = [(d.px[d.row[i]], d.py[d.row[i]], d.rotation[d.row[i]], *box[r]) for r, i in enumerate(ids)]

    def shown(j):
        return not hidden[j] and not gone[j] and opacity[j] >= min_opacity and types[j] != "group"

    def look(r):
        nd = nodes[r]
        props = {k: v for k, v in nd.props.items() if k not in ("seed", "version", "versionNonce", "updated", "index",
                                                                  "boundElements", "link")}
        return json.dumps([nd.type, nd.w, nd.h, nd.text, nd.name, nd.style, props], sort_keys=True, default=repr)

    def copy_above(i):
        # an exact copy (same look, same place) painted above, shown
        for j in range(i + 1, n):
            if in_view[j] and shown(j) and place[j] == place[i] and look(j) == look(i):
                return j
        return -1

    def stroke_above(i):
        # a straight connector lying along a higher straight connector's stroke
        si = straight_segment(canvas, ids[i])
        if si is None:
            return -1
        bi = box[i]
        for j in range(i + 1, n):
            bj = box[j]
            if not (in_view[j] and types[j] in CONNECTORS and shown(j)):
                continue
            if not GO.intersects(bi, bj):
                continue
            sj = straight_segment(canvas, ids[j])
            if sj is None:
                continue
            sw, hs, he = stroke_and_heads(nodes[j])
            if along_stroke(si, sj, max(1.0, sw / 2), hs, he):
                return j
        return -1

    # visibility and occlusion
    labels, gaps = GO.visibility(box, vbox, near_factor)
    in_view = [lab in (0, 1) for lab in labels]
    occ = [-1] * n
    for i in range(n):
        if not in_view[i]:
            continue
        if gone[i]:
            occ[i] = frame[i]
            continue
        c = (max(box[i][0], vbox[0]), max(box[i][1], vbox[1]), min(box[i][2], vbox[2]), min(box[i][3], vbox[3]))
        if occlusion == "paper":
            for j in range(i + 1, n):
                if solid[j] and not hidden[j] and not gone[j] and opacity[j] >= min_opacity and GO.contains(box[j], c):
                    occ[i] = j
                    break
        else:
            occ[i] = painted_occluder(i, c)
    if occlusion != "paper":
        for i in range(n):
            if in_view[i] and not gone[i] and occ[i] < 0:
                occ[i] = copy_above(i)
        for i in range(n):
            if in_view[i] and not gone[i] and occ[i] < 0 and types[i] in CONNECTORS:
                occ[i] = stroke_above(i)
    label = [2 if in_view[i] and occ[i] >= 0 else labels[i] for i in range(n)]

    # relations
    rels: Dict[str, List[Tuple[int, int, Any]]] = {t: [] for t in REL_ORDER}
    rels["parent"] = [(r, parent[r], None) for r in range(n) if parent[r] >= 0]
    bound = set()
    for b in canvas.bindings.values():
        if b.from_id in row and b.to_id in row:
            t = 0 if b.terminal == "start" else 1
            rels["bound"].append((row[b.from_id], row[b.to_id], t))
            bound.add((row[b.from_id], t))
    rels["bound"].sort(key=lambda x: (x[0], x[1], x[2]))
    S = [r for r in range(n) if solid[r]]
    def to_page(r, p):
        # page transform = parent's page transform x translate(x, y) x rotate(rotation)
        x, y = p
        for k in [r] + anc[r]:
            nd = nodes[k]
            c, s_ = math.cos(nd.rotation), math.sin(nd.rotation)
            x, y = nd.x + c * x - s_ * y, nd.y + s_ * x + c * y
        return x, y

    for r in range(n):
        if types[r] != "arrow":
            continue
        for t, p in enumerate(terminal_points(nodes[r])):
            if p is None or (r, t) in bound:
                continue
            p = to_page(r, p)
            for s in S:
                if gone[s] or s == r:
                    continue
                b = box[s]
                if GO.overlaps_area((p[0] - touch_tol, p[1] - touch_tol, p[0] + touch_tol, p[1] + touch_tol), b) and \
                        min(p[0] - b[0], b[2] - p[0], p[1] - b[1], b[3] - p[1]) <= touch_tol:
                    rels["touches"].append((r, s, t))
    rels["touches"].sort(key=lambda x: (x[0], x[2], x[1]))
    for i in S:
        best = None
        for o in S:
            if o != i and box[o] != box[i] and GO.contains(box[o], box[i]) and not related(o, i):
                area = (box[o][2] - box[o][0]) * (box[o][3] - box[o][1])
                if best is None or (area, -o) < best[0]:
                    best = ((area, -o), o)
        if best is not None:
            rels["inside"].append((i, best[1], None))
    rels["occludes"] = [(occ[i], i, None) for i in range(n) if occ[i] >= 0 and not gone[i]]
    for x, a in enumerate(S):
        for b in S[x + 1:]:
            if GO.overlaps_area(box[a], box[b]) and not related(a, b):
                ab, ba = GO.contains(box[b], box[a]), GO.contains(box[a], box[b])
                if (ab and ba) or not (ab or ba):
                    rels["overlaps"].append((a, b, None))
    sb = [box[r] for r in S]
    pp, pg = GO.proximity_pairs(sb, near_gap, 4)
    rels["near"] = [(S[a], S[b], g) for (a, b), g in zip(pp, pg)
                    if not related(S[a], S[b]) and (in_view[S[a]] or in_view[S[b]])]
    ap, ak = GO.alignment_pairs(sb, align_tol)
    masks: Dict[Tuple[int, int, int], int] = {}
    for (a, b), k in zip(ap, ak):
        a, b = S[a], S[b]
        if parent[a] == parent[b] and (in_view[a] or in_view[b]):
            masks[(a, b, k // 3)] = masks.get((a, b, k // 3), 0) | (1 << k)
    rels["aligned"] = [(a, b, "+".join(KINDS[k] for k in range(6) if m >> k & 1)) for (a, b, _), m in sorted(masks.items())]
    reading = [-1] * n
    vs = [r for r in range(n) if in_view[r] and solid[r]]
    for r, k in zip(vs, GO.reading_order([box[r] for r in vs], row_tol)):
        reading[r] = k

    # priority
    sel = [row[i] for i in (canvas.selected(pid) if selected is None else selected)]
    ctx = [row[i] for i in context]
    kept: List[int] = []
    for r in sel + ctx + [r for r in range(n) if labels[r] == 1]:
        if r not in kept:
            kept.append(r)
    why = {r: ("selected" if r in sel else "context" if r in ctx else "partial") for r in kept}
    budget = max_objects - len(kept)
    binds = [(a, b) for a, b, _ in rels["bound"]]

    def native_first(before, chosen, eligible, key, base):
        # swap pending rows (connectors bound to a kept row, parents of kept rows) in
        # for unconnected chosen rows, lowest priority first, round by round
        S = list(chosen)
        came = {}
        for _ in range(8):
            K = set(before) | set(S)
            pend = set()
            for x in range(n):
                tg = [b for a, b in binds if a == x]
                if x not in K and eligible(x) and (any(t in K for t in tg) or any(parent[k] == x for k in K)):
                    pend.add(x)
            if not pend or not S:
                break

            KP = K | pend

            def linked(x):
                return ((parent[x] >= 0 and parent[x] in KP) or any(parent[k] == x for k in K)
                        or any(a == x and b in K for a, b in binds) or any(b == x and a in KP for a, b in binds))

            unc = [x for x in S if not linked(x)]
            m = min(len(pend), len(unc))
            if m == 0:
                break
            take = sorted(pend, key=lambda r: (key(r), r))[:m]
            drop = set(unc[len(unc) - m:])
            S = [x for x in S if x not in drop] + take
            for r in take:
                tg = [b for a, b in binds if a == r]
                came[r] = "bound" if any(t in K for t in tg) else "parent"
        S.sort(key=lambda r: (key(r), r))
        return S, {r: came.get(r, base) for r in S}

    g2 = sorted((r for r in range(n) if in_view[r] and r not in kept), key=lambda r: reading[r] if reading[r] >= 0 else n + r)
    if len(g2) > max(budget, 0):
        pos2 = {r: i for i, r in enumerate(g2)}
        ks0 = set(kept)
        chosen2, w2 = native_first(list(kept), g2[:max(budget, 0)], lambda r: in_view[r] and r not in ks0,
                                   lambda r: pos2[r], "view")
    else:
        chosen2, w2 = g2, {r: "view" for r in g2}
    kept += chosen2
    why.update(w2)
    budget -= len(chosen2)
    edges = [(a, b) for a, b, _ in rels["bound"]] + [(a, b) for a, b, _ in rels["touches"]] + \
        [(a, b) for a, b, _ in rels["parent"]]
    for _ in range(2):
        if budget <= 0 or not edges:
            break
        ks = set(kept)
        cand = set()
        for a, b in edges:
            if a in ks and b not in ks:
                cand.add(b)
            if b in ks and a not in ks and parent[a] != b:
                cand.add(a)
        if not cand:
            break
        take = sorted(cand, key=lambda r: (gaps[r], r))[:budget]
        kept += take
        why.update({r: "connected" for r in take})
        budget -= len(take)
    if budget > 0:
        ks = set(kept)
        rest = sorted((r for r in range(n) if r not in ks and not in_view[r]), key=lambda r: (gaps[r], r))
        chosen4, w4 = rest[:budget], {r: "nearby" for r in rest[:budget]}
        if len(chosen4) == budget:
            chosen4, w4 = native_first(list(kept), chosen4, lambda r: r not in ks and not in_view[r],
                                       lambda r: gaps[r], "nearby")
        kept += chosen4
        why.update(w4)
    rank = {r: k for k, r in enumerate(kept)}

    total = sum(len(v) for v in rels.values())
    cands = []
    for t, name in enumerate(REL_ORDER):
        for idx, (a, b, x) in enumerate(rels[name]):
            if a in rank and b in rank:
                native = name in ("parent", "bound")
                lo, hi = min(rank[a], rank[b]), max(rank[a], rank[b])
                cands.append(((not native, lo, t, hi, idx), name, a, b, x))
    cands.sort(key=lambda c: c[0])
    relations = []
    for _, name, a, b, x in cands[:max_relations]:
        rel = {"type": name, "from": ids[a], "to": ids[b], "native": name in ("parent", "bound")}
        if name in ("bound", "touches"):
            rel["terminal"] = ("start", "end")[x]
        elif name == "near":
            rel["gap"] = jsround(x)
        elif name == "aligned":
            rel["kind"] = x
        relations.append(rel)

    objects = []
    for r in kept:
        nd = nodes[r]
        rec: Dict[str, Any] = {"id": ids[r], "type": nd.type}
        if abbrev(nd.text):
            rec["text"] = abbrev(nd.text)
        if abbrev(nd.name):
            rec["name"] = abbrev(nd.name)
        st = {k: nd.style[k] for k in ("color", "fill") if isinstance(nd.style.get(k), (str, int, float))
              and not isinstance(nd.style.get(k), bool)}
        if opacity[r] < 1:
            st["opacity"] = round(opacity[r], 2)
        if st:
            rec["style"] = st
        deg = round(math.degrees(canvas.page_rotation(ids[r])), 1)
        if deg != 0:
            rec["rotation"] = deg
        rec["layer"] = r
        flags = [f for f, on in (("selected", r in sel), ("context", r in ctx), ("locked", locked[r]),
                                 ("hidden", hidden[r]), ("clipped", gone[r])) if on]
        if flags:
            rec["flags"] = flags
        rec["visibility"] = LABELS[label[r]]
        for key, col in (("parent", parent), ("group", group), ("frame", frame)):
            if col[r] >= 0:
                rec[key] = ids[col[r]]
        if label[r] == 2:
            rec["occludedBy"] = ids[occ[r]]
        if reading[r] >= 0:
            rec["readingOrder"] = reading[r]
        if include_bounds or label[r] >= 3:
            b = bounds[r]
            rec["actionBounds"] = {"x": jsround(b[0] - ox), "y": jsround(b[1] - oy),
                                   "w": jsround(b[2] - b[0]), "h": jsround(b[3] - b[1])}
        objects.append(rec)
    return {"viewport": {"x": jsround(vx - ox), "y": jsround(vy - oy), "w": jsround(vw), "h": jsround(vh)},
            "objects": objects, "relations": relations,
            "omitted": {"objects": n - len(kept), "relations": total - len(relations)}}


def baseline_naive(canvas, viewport, *, page=None, selected=None, origin=(0, 0), padding=75.0) -> Dict[str, Any]:
    """The agent-kit context, shape by shape and cluster by cluster."""
    pid = page or canvas.current_page
    vx, vy, vw, vh = viewport
    ox, oy = origin
    shapes, outside = [], []
    for nid in canvas.paint_order(pid):
        b = canvas.visible_bounds(nid)
        if b is None:
            continue
        if b[0] <= vx + vw and b[2] >= vx and b[1] <= vy + vh and b[3] >= vy:
            nd = canvas.nodes[nid]
            rec = {"id": nid, "type": nd.type}
            if nd.text or nd.name:
                rec["text"] = nd.text or nd.name
            rec.update({"x": jsround(b[0] - ox), "y": jsround(b[1] - oy), "w": jsround(b[2] - b[0]), "h": jsround(b[3] - b[1])})
            shapes.append(rec)
        else:
            outside.append((b[0] - padding, b[1] - padding, b[2] + padding, b[3] + padding))
    clusters: List[List[Any]] = []
    for g in outside:
        for c in clusters:
            if GO.intersects(c[0], g):
                c[0] = (min(c[0][0], g[0]), min(c[0][1], g[1]), max(c[0][2], g[2]), max(c[0][3], g[3]))
                c[1] += 1
                break
        else:
            clusters.append([g, 1])
    sel = list(canvas.selected(pid) if selected is None else selected)
    per = []
    for (x0, y0, x1, y1), k in clusters:
        x0, y0, x1, y1 = x0 + padding, y0 + padding, x1 - padding, y1 - padding
        per.append({"bounds": {"x": jsround(x0 - ox), "y": jsround(y0 - oy), "w": jsround(x1 - x0), "h": jsround(y1 - y0)},
                    "numberOfShapes": k})
    return {"shapes": shapes, "selectedIds": sel, "peripheralClusters": per}
