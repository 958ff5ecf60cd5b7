"""Controlled scenarios: the Remote Team Handoff suite and seeded synthetic workspaces.

:func:`remote_team_handoff` builds the CanvasObs paper's ten configurations on one
workspace (a report with Key, Chart and Claim slots, two study frames, a chart
stack, an evidence card with two findings, and an offscreen version archive).
Four families each hide the decisive fact in something only a structured
observation carries:

====== ======== =====================================================================
config family   decisive evidence
====== ======== =====================================================================
0–2    archive  which of three identical offscreen notes is not locked
3–5    color    which of three fully overlapping chart drafts is blue
6–7    member   which pair of cards is a native child of "Study setup A"
8–9    connect  which arrow is bound at both ends (the other merely touches)
====== ======== =====================================================================

Within a family, ids, page positions, labels and the prompt are the same in every
configuration, so no rule based on position or id can work across them.

:func:`synthetic_workspace` makes seeded pages of any size (frames with cards, a
group and bound arrows; stacks of overlapping charts) for tests and benchmarks;
:func:`diagram_workspace` makes pages that look more like real diagrams (frames of
10–30 overlapping labelled cards, small groups, rotated and translucent clusters,
arrows bound at one or both ends, unbound arrows touching card edges).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

import numpy as np

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.scenarios.evaluate import Relation, Task
from spatialobs.canvas.document.model import Canvas, build_canvas
from spatialobs.canvas.document.records import Page, Viewport

__all__ = ["Scenario", "remote_team_handoff", "FAMILIES", "synthetic_workspace", "diagram_workspace"]

#: Family of each configuration 0..9.
FAMILIES = ("archive",) * 3 + ("color",) * 3 + ("membership",) * 2 + ("connector",) * 2

NOTE_TEXT = "Unclear ownership delays handoffs"
PROMPTS = {
    "archive": f'Move the editable copy of "{NOTE_TEXT}" from the version archive into the report\'s "Key slot".',
    "color": 'Move the blue "Handoff breakdown" chart into the "Chart slot".',
    "membership": 'Move the cards that do not belong to "Study setup A" into frame "Study setup B".',
    "connector": 'Move the finding supported by "Interview evidence" into the "Claim slot", keeping its evidence connection.',
}
_PAGE = "page:page"


@dataclass(frozen=True)
class Scenario:
    """One configuration: the canvas, what the agent sees, what it is asked, how it is scored.

    Attributes
    ----------
    canvas : Canvas
    viewport : Viewport
    prompt : str
    task : Task
    family : str
        ``archive``, ``color``, ``membership`` or ``connector``.
    config : int
    origin : (float, float)
        The action frame (the viewport's upper-left corner, as agent kits set it).

    Examples
    --------
    >>> remote_team_handoff(0).origin
    (-20.0, -20.0)
    """

    canvas: Canvas
    viewport: Viewport
    prompt: str
    task: Task
    family: str
    config: int
    origin: Tuple[float, float]


def _node(nid: str, typ: str, parent: str, index: str, x: float, y: float, w: float, h: float, **kw: Any) -> Dict[str, Any]:
    return {"id": f"shape:{nid}", "type": typ, "parent": parent if parent.startswith("page:") else f"shape:{parent}",
            "index": index, "x": x, "y": y, "w": w, "h": h, **kw}


def _segment_exit(c: Tuple[float, float], d: Tuple[float, float], box: Tuple[float, float, float, float]) -> Tuple[float, float]:
    """Where the segment from ``c`` (inside ``box``) towards ``d`` leaves ``box``."""
    x0, y0, x1, y1 = box
    dx, dy = d[0] - c[0], d[1] - c[1]
    ts = [t for t in ((x0 - c[0]) / dx if dx else np.inf, (x1 - c[0]) / dx if dx else np.inf,
                      (y0 - c[1]) / dy if dy else np.inf, (y1 - c[1]) / dy if dy else np.inf) if t > 0]
    t = min(ts)
    return (c[0] + t * dx, c[1] + t * dy)


def remote_team_handoff(config: int) -> Scenario:
    """Build configuration ``config`` (0..9) of the Remote Team Handoff suite.

    Examples
    --------
    >>> s = remote_team_handoff(4)
    >>> s.family, s.task.targets
    ('color', ('shape:chart1',))
    >>> s.prompt
    'Move the blue "Handoff breakdown" chart into the "Chart slot".'
    """
    if isinstance(config, bool) or not isinstance(config, (int, np.integer)) or not 0 <= config <= 9:
        raise InvalidInputError(f"config must be an integer 0..9, got {config!r}")
    config = int(config)
    family = FAMILIES[config]
    f: List[Dict[str, Any]] = []
    # the report with its slots (in view)
    f.append(_node("report", "frame", _PAGE, "a1", 40, 40, 700, 560, name="Handoff report"))
    f.append(_node("title", "text", "report", "a1", 20, 16, 420, 40, text="Remote team handoff report"))
    f.append(_node("key", "geo", "report", "a2", 20, 80, 320, 240, text="Key slot", style={"color": "grey", "fill": "none"}))
    f.append(_node("chartslot", "geo", "report", "a3", 360, 80, 320, 240, text="Chart slot", style={"color": "grey", "fill": "none"}))
    f.append(_node("claim", "geo", "report", "a4", 20, 340, 320, 200, text="Claim slot", style={"color": "grey", "fill": "none"}))
    f.append(_node("summary", "note", "report", "a5", 380, 360, 200, 140, text="Summary: owners for every open thread", style={"color": "yellow"}))
    # the two study frames; B already holds one card
    f.append(_node("studyA", "frame", _PAGE, "a2", 780, 40, 380, 420, name="Study setup A"))
    f.append(_node("studyB", "frame", _PAGE, "a4", 1200, 40, 380, 420, name="Study setup B"))
    f.append(_node("survey", "geo", "studyB", "a1", 20, 40, 160, 80, text="Survey: pulse check", style={"color": "violet", "fill": "semi"}))
    cards = [("calls1", "Calls: weekly sync notes", 20, 60), ("diaries1", "Diaries: async standup log", 200, 60),
             ("calls2", "Calls: handoff recordings", 20, 200), ("diaries2", "Diaries: timezone journal", 200, 200)]
    native = ("calls1", "diaries1") if config != 7 else ("calls2", "diaries2")
    for k, (cid, text, x, y) in enumerate(cards):
        st = {"color": "light-blue", "fill": "semi"}
        if cid in native:
            f.append(_node(cid, "geo", "studyA", f"a{k + 1}", x, y, 160, 100, text=text, style=st))
        else:  # page-level, drawn right above the frame
            f.append(_node(cid, "geo", _PAGE, f"a3{k}", 780 + x, 40 + y, 160, 100, text=text, style=st))
    # the chart stack: three identical drafts, one of them blue
    palette = ["red", "green", "orange"]
    blue = config - 3 if family == "color" else 1
    for k in range(3):
        color = "blue" if k == blue else palette.pop(0)
        f.append(_node(f"chart{k}", "geo", _PAGE, f"a5{k}", 780, 520, 300, 180, text="Handoff breakdown",
                       style={"color": color, "fill": "solid"}))
    # evidence and findings, joined by two arrows with identical geometry in every config
    ev = (1200.0, 520.0, 1400.0, 620.0)
    finds = [("finding1", "Lost decision context", (1120.0, 780.0, 1320.0, 880.0)),
             ("finding2", "Unowned follow-ups", (1420.0, 780.0, 1620.0, 880.0))]
    f.append(_node("evidence", "geo", _PAGE, "a6", ev[0], ev[1], 200, 100, text="Interview evidence", style={"color": "black", "fill": "semi"}))
    for k, (fid, text, b) in enumerate(finds):
        f.append(_node(fid, "geo", _PAGE, f"a7{k}", b[0], b[1], 200, 100, text=text, style={"color": "black", "fill": "semi"}))
    bound_both = "finding1" if config != 9 else "finding2"
    binds: List[Dict[str, Any]] = []
    ec = ((ev[0] + ev[2]) / 2, (ev[1] + ev[3]) / 2)
    for k, (fid, _, b) in enumerate(finds):
        fc = ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)
        s = _segment_exit(ec, fc, ev)
        e = _segment_exit(fc, ec, b)
        aid = f"arrow{k + 1}"
        f.append(_node(aid, "arrow", _PAGE, f"a8{k}", s[0], s[1], abs(e[0] - s[0]), e[1] - s[1],
                       props={"start": {"x": 0.0, "y": 0.0}, "end": {"x": e[0] - s[0], "y": e[1] - s[1]}, "bend": 0,
                              "arrowheadStart": "none", "arrowheadEnd": "none"}))
        binds.append({"id": f"binding:{aid}-start", "type": "arrow", "from_id": f"shape:{aid}", "to_id": "shape:evidence",
                      "terminal": "start"})
        if fid == bound_both:
            binds.append({"id": f"binding:{aid}-end", "type": "arrow", "from_id": f"shape:{aid}", "to_id": f"shape:{fid}",
                          "terminal": "end"})
    # the version archive, far offscreen; only one copy of the note is editable
    f.append(_node("archive", "frame", _PAGE, "a9", 3400, 40, 760, 600, name="Version archive"))
    f.append(_node("oldreport", "geo", "archive", "a1", 20, 300, 300, 200, text="Report draft v1", style={"color": "grey", "fill": "none"}))
    editable = config if family == "archive" else 0
    for k in range(3):
        f.append(_node(f"copy{k}", "note", "archive", f"a{k + 2}", 20 + 240 * k, 60, 200, 200, text=NOTE_TEXT,
                       style={"color": "yellow"}, locked=(k != editable)))
    canvas = build_canvas([Page(_PAGE, "Handoff", "a1")], f, binds, [])
    viewport = Viewport(-20.0, -20.0, 1700.0, 940.0)
    canvas.cameras[_PAGE] = viewport
    if family == "archive":
        cand = tuple(f"shape:copy{k}" for k in range(3))
        task = Task(cand, (f"shape:copy{editable}",), "shape:key")
    elif family == "color":
        cand = tuple(f"shape:chart{k}" for k in range(3))
        task = Task(cand, (f"shape:chart{blue}",), "shape:chartslot")
    elif family == "membership":
        cand = tuple(f"shape:{c[0]}" for c in cards)
        movers = tuple(c for c in cand if c[6:] not in native)
        rels = tuple(Relation("parent", c, "shape:studyB") for c in movers) + \
            tuple(Relation("parent", f"shape:{c}", "shape:studyA") for c in native)
        task = Task(cand, movers, "shape:studyB", rels)
    else:
        cand = ("shape:finding1", "shape:finding2")
        aid = "shape:arrow1" if bound_both == "finding1" else "shape:arrow2"
        task = Task(cand, (f"shape:{bound_both}",), "shape:claim",
                    (Relation("bound", aid, f"shape:{bound_both}", "end"), Relation("bound", aid, "shape:evidence", "start")))
    return Scenario(canvas, viewport, PROMPTS[family], task, family, config, (viewport.x, viewport.y))


def _page_of(fields: List[Dict[str, Any]], binds: List[Dict[str, Any]]) -> Canvas:
    # the generated records as one page, without bindings or children left hanging by the cut at n
    ids = {fd["id"] for fd in fields}
    binds = [b for b in binds if b["from_id"] in ids and b["to_id"] in ids]
    fields = [fd for fd in fields if fd["parent"] == _PAGE or fd["parent"] in ids]
    c = build_canvas([Page(_PAGE, "Page 1", "a1")], fields, binds, [])
    c.cameras[_PAGE] = Viewport(0.0, 0.0, 2800.0, 1800.0)
    return c


def synthetic_workspace(n: int, seed: int = 0) -> Canvas:
    """A seeded page of about ``n`` nodes laid out in cells on a grid.

    Four cells in five are frames holding a group of three shapes, twelve notes
    and three arrows (two bound at both ends, one bound at its start only); every
    fifth cell is a stack of four fully overlapping charts in different colors.
    Positions are jittered by the seed. The camera shows the first cells.

    Examples
    --------
    >>> c = synthetic_workspace(1000)
    >>> len(c.nodes), len(c.bindings) > 100
    (1000, True)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidInputError(f"n must be a non-negative integer, got {n!r}")
    rng = np.random.default_rng(seed)
    fields: List[Dict[str, Any]] = []
    binds: List[Dict[str, Any]] = []
    colors = ("blue", "red", "green", "violet")
    cell = 0
    while len(fields) < n:
        cx, cy = (cell % 40) * 1400.0, (cell // 40) * 1100.0
        if cell % 5 == 4:
            for j in range(4):
                fields.append({"id": f"c{cell}_{j}", "type": "geo", "parent": _PAGE, "index": f"a{cell:07d}{j}",
                               "x": cx, "y": cy, "w": 600.0, "h": 400.0, "text": "Chart",
                               "style": {"color": colors[j], "fill": "solid"}})
        else:
            fid, gid = f"f{cell}", f"g{cell}"
            fields.append({"id": fid, "type": "frame", "parent": _PAGE, "index": f"a{cell:07d}", "x": cx, "y": cy,
                           "w": 1200.0, "h": 900.0, "name": f"Frame {cell}"})
            fields.append({"id": gid, "type": "group", "parent": fid, "index": "a0", "x": 20.0, "y": 20.0})
            for j in range(3):
                fields.append({"id": f"{gid}_{j}", "type": "geo", "parent": gid, "index": f"a{j}", "x": j * 110.0,
                               "y": 0.0, "w": 100.0, "h": 60.0, "text": f"Part {j}"})
            jit = rng.uniform(0, 20, (12, 2))
            for j in range(12):
                fields.append({"id": f"n{cell}_{j}", "type": "note", "parent": fid, "index": f"b{j:02d}",
                               "x": 20 + (j % 4) * 280.0 + jit[j, 0], "y": 120 + (j // 4) * 250.0 + jit[j, 1],
                               "w": 200.0, "h": 200.0, "text": f"Note {cell}.{j}", "style": {"color": "yellow"}})
            for j in range(3):
                a = f"a{cell}_{j}"
                fields.append({"id": a, "type": "arrow", "parent": fid, "index": f"c{j}", "x": 240 + j * 280.0,
                               "y": 220.0, "w": 60.0, "h": 0.0,
                               "props": {"start": {"x": 0, "y": 0}, "end": {"x": 60, "y": 0}, "bend": 0}})
                binds.append({"id": f"b{a}s", "type": "arrow", "from_id": a, "to_id": f"n{cell}_{j}", "terminal": "start"})
                if j < 2:
                    binds.append({"id": f"b{a}e", "type": "arrow", "from_id": a, "to_id": f"n{cell}_{j + 1}", "terminal": "end"})
        cell += 1
    return _page_of(fields[:n], binds)




def diagram_workspace(n: int, seed: int = 0) -> Canvas:
    """A seeded page of about ``n`` nodes that looks like real diagrams.

    Frames on a grid, each holding a title (a text node), 10–30 cards (``geo``
    shapes with a text label, laid out on a jittered grid tighter than their size
    so that neighbours overlap), a small group of two or three cards, and arrows:
    about a third of the cards start an arrow bound at both ends to the next card,
    a sixth one bound at its start only, and two unbound arrows per frame end
    exactly on a card's left edge (they touch it). Every third frame holds a
    rotated group of translucent cards (a cluster turned by 0.1–0.6 radians at
    opacity 0.4–0.8). Sizes, counts and positions come from the seed. The camera
    shows the first frames.

    Parameters
    ----------
    n : int
        Number of nodes (the last frame is cut short to give exactly ``n``, minus
        any node whose parent was cut).
    seed : int
        Seed of the layout.

    Returns
    -------
    Canvas
        One page with its camera at (0, 0, 2800, 1800).

    Examples
    --------
    >>> c = diagram_workspace(2000, seed=1)
    >>> len(c.nodes) <= 2000, len(c.bindings) > 100
    (True, True)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidInputError(f"n must be a non-negative integer, got {n!r}")
    rng = np.random.default_rng(seed)
    fields: List[Dict[str, Any]] = []
    binds: List[Dict[str, Any]] = []
    colors = ("black", "blue", "green", "orange", "red", "violet", "yellow", "grey")
    fills = ("none", "semi", "solid", "pattern")
    cell = 0
    while len(fields) < n:
        fx, fy = (cell % 30) * 1900.0, (cell // 30) * 1500.0
        fid = f"f{cell}"
        fields.append({"id": fid, "type": "frame", "parent": _PAGE, "index": f"a{cell:07d}", "x": fx, "y": fy,
                       "w": 1800.0, "h": 1400.0, "name": f"Diagram {cell}"})
        fields.append({"id": f"{fid}t", "type": "text", "parent": fid, "index": "a0", "x": 20.0, "y": 10.0,
                       "w": 400.0, "h": 40.0, "text": f"Diagram {cell}: flow of stage {cell % 17}"})
        k = int(rng.integers(10, 31))
        jit = rng.uniform(-25.0, 25.0, (k, 2))
        cw = rng.choice([160.0, 200.0, 240.0], k)
        ch = rng.choice([80.0, 100.0, 140.0], k)
        col = rng.integers(0, len(colors), k)
        fill = rng.integers(0, len(fills), k)
        cards: List[Tuple[str, float, float, float, float]] = []
        for j in range(k):
            x = 40.0 + (j % 6) * 190.0 + jit[j, 0]
            y = 80.0 + (j // 6) * 120.0 + jit[j, 1]
            cid = f"{fid}c{j}"
            fields.append({"id": cid, "type": "geo", "parent": fid, "index": f"b{j:02d}", "x": x, "y": y,
                           "w": float(cw[j]), "h": float(ch[j]), "text": f"Step {j} of {cell}",
                           "style": {"color": colors[col[j]], "fill": fills[fill[j]]}})
            cards.append((cid, x, y, float(cw[j]), float(ch[j])))
        gid = f"{fid}g"
        fields.append({"id": gid, "type": "group", "parent": fid, "index": "c0", "x": 1250.0, "y": 100.0})
        for j in range(int(rng.integers(2, 4))):
            fields.append({"id": f"{gid}_{j}", "type": "geo", "parent": gid, "index": f"a{j}", "x": 0.0,
                           "y": j * 90.0, "w": 180.0, "h": 80.0, "text": f"Option {j}",
                           "style": {"color": "blue", "fill": "solid"}})
        if cell % 3 == 0:
            rid = f"{fid}r"
            fields.append({"id": rid, "type": "group", "parent": fid, "index": "c1", "x": 1300.0, "y": 700.0,
                           "rotation": float(rng.uniform(0.1, 0.6))})
            op = float(rng.uniform(0.4, 0.8))
            for j in range(int(rng.integers(3, 6))):
                fields.append({"id": f"{rid}_{j}", "type": "geo", "parent": rid, "index": f"a{j}", "x": j * 60.0,
                               "y": j * 50.0, "w": 150.0, "h": 90.0, "text": f"Note {j}", "opacity": op,
                               "style": {"color": "violet", "fill": "semi"}})
        a = 0
        for j in range(0, k - 1, 3):
            (s, sx, sy, sw, sh), (t, tx, ty, tw, th) = cards[j], cards[j + 1]
            x0, y0 = sx + sw / 2, sy + sh / 2
            aid = f"{fid}a{a}"
            fields.append({"id": aid, "type": "arrow", "parent": fid, "index": f"d{a:02d}", "x": x0, "y": y0,
                           "props": {"start": {"x": 0.0, "y": 0.0},
                                     "end": {"x": tx + tw / 2 - x0, "y": ty + th / 2 - y0}, "bend": 0}})
            binds.append({"id": f"b{aid}s", "type": "arrow", "from_id": aid, "to_id": s, "terminal": "start"})
            if j % 2 == 0:
                binds.append({"id": f"b{aid}e", "type": "arrow", "from_id": aid, "to_id": t, "terminal": "end"})
            a += 1
        for j in (1, k // 2):
            _, tx, ty, tw, th = cards[j]
            aid = f"{fid}a{a}"
            fields.append({"id": aid, "type": "arrow", "parent": fid, "index": f"d{a:02d}", "x": tx - 90.0,
                           "y": ty + th / 2, "props": {"start": {"x": 0.0, "y": 0.0}, "end": {"x": 90.0, "y": 0.0},
                                                        "bend": 0}})
            a += 1
        cell += 1
    return _page_of(fields[:n], binds)
