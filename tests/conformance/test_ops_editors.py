"""The new ops' results open in the real editors, where the canvas says, and Mermaid matches Excalidraw's own import.

tldraw: shared ``.tldr`` files (bound arrows, rotated nested frames, a group) and a
generated one get a model reply with every new op (align,
distribute, group, ungroup, lock, a refused edit of the locked shape, duplicate of a
group with a bound arrow inside, set_viewport, create_from_mermaid); the written
file opens in tldraw 5.4.2 with no error or warning, every shape lands where the
canvas says (the tolerances of ``test_tldraw_edits``), the groups hold their
members, the locked shape is locked, the copies' and the flowchart's arrows are
bound, and tldraw's camera convention gives the viewport ``set_viewport`` stored.

Excalidraw: every shared ``.excalidraw`` file gets the same reply; Excalidraw opens
the written file, drops and adds nothing, puts every element where the canvas says,
and an app that opens the file as ``initialData`` shows the camera ``set_viewport``
stored (scroll and zoom; File > Open itself drops a file's camera, as tldraw's does). A scene with
element types Excalidraw has and one it does not is written back after edits with
every element kept; Excalidraw itself drops only the made-up one.

Mermaid: each flowchart of ``tests/data/mermaid`` goes through the real
``@excalidraw/mermaid-to-excalidraw`` (the version Excalidraw 0.18.1 uses, in the
real editor) and through ``create_from_mermaid`` into an Excalidraw document: the
same shapes (element type and label), the same arrows (bound start and end, label,
heads, stroke), the same subgraph membership (``groupIds``). Positions differ (our
layered layout is not Mermaid's dagre): along the flow, at least 75 % of node
pairs that Mermaid puts in different layers are in the same order in ours (printed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from spatialobs.canvas import Canvas, Executor, load, parse_ops
from spatialobs.canvas.editing.mermaid import parse_mermaid
from tests.conformance import tldraw_harness as th
from tests.conformance.conftest import require
from tests.conformance.excalidraw_harness import compare_bounds, mermaid_unavailable_reason, run_mermaid
from tests.conformance.mermaid_compare import flow_order_agreement, ours_structure, truth_structure
from tests.conformance.test_tldraw_edits import TARGET, check_opened, compare, enforced, import_gaps, summary
from tests.conftest import shared_files

#: Bound arrows, rotated nested frames, a group: one Chromium run each, so three of the shared files.
TLDR = [p for p in shared_files("canvases", "*.tldr") if p.name.startswith(("1797127235", "kitschpatrol", "pyrbin"))]
EXCALIDRAW = shared_files("canvases", "*.excalidraw")
MERMAID = sorted((Path(__file__).resolve().parents[1] / "data" / "mermaid").glob("*.mmd"))
FLOW = "flowchart LR\n  A[Client] --> B{Gateway}\n  B -->|ok| C[(Store)]\n  subgraph back [Backend]\n    C -.-> D((Cache))\n  end\n"


def _reply(ops: List[Dict[str, Any]]) -> str:
    return "Arranging.\n```canvas_ops\n" + json.dumps({"ops": ops}) + "\n```\n"


def _picks(c: Canvas, page: str) -> List[str]:
    """Top-level shapes to arrange: boxes first, unlocked, not in any frame or group."""
    nodes = c.nodes
    ids = [n for n in c.paint_order(page) if nodes[n].parent == page and not nodes[n].locked
           and nodes[n].type not in ("arrow", "line", "draw", "freedraw", "highlight", "group")]
    return sorted(ids, key=lambda n: (nodes[n].type in ("frame", "magicframe"), nodes[n].type == "text"))[:7]


def _bound_pair(c: Canvas, page: str) -> Tuple[str, ...]:
    """An arrow bound at both ends to top-level shapes, with its two targets, or ()."""
    ends: Dict[str, Dict[str, str]] = {}
    for b in c.bindings.values():
        ends.setdefault(b.from_id, {})[b.terminal] = b.to_id
    for a, t in sorted(ends.items()):
        if a in c.nodes and c.page_of(a) == page and set(t) == {"start", "end"} and t["start"] != t["end"]:
            if all(c.nodes[x].parent == page and not c.nodes[x].locked for x in (a, t["start"], t["end"])):
                return (a, t["start"], t["end"])
    return ()


def edit(c: Canvas, page: str) -> Dict[str, Any]:
    """Apply the reply with every new op; what it did, for the checks."""
    picks = _picks(c, page)
    pair = _bound_pair(c, page)
    pool = [p for p in picks if p not in pair]
    assert len(pool) >= 3, "too few shapes to arrange"
    ops: List[Dict[str, Any]] = [
        {"op": "align", "ids": pool[:3], "align": "left"},
        {"op": "distribute", "ids": pool[:3], "axis": "vertical"},
        {"op": "group", "ids": pool[:2], "ref": "pair"},
    ]
    if pair:
        ops += [{"op": "group", "ids": list(pair[1:]), "ref": "bound"},
                {"op": "duplicate", "id": "bound", "dy": 600, "ref": "bound2"}]
    ops += [{"op": "lock", "id": pool[2]},
            {"op": "move_node", "id": pool[2], "dx": 40},
            {"op": "set_viewport", "fit": [pool[0], pool[1]], "padding": 40},
            {"op": "create_from_mermaid", "mermaid": FLOW, "ref": "chart"}]
    groups = [g for g in c.nodes if c.nodes[g].type == "group" and c.page_of(g) == page]
    if groups:
        ops.append({"op": "ungroup", "id": groups[0]})
    parsed, errors = parse_ops(_reply(ops))
    assert errors == []
    report = Executor(c).apply(parsed)
    refused = [i for i, o in enumerate(ops) if o["op"] == "move_node"]
    assert [e.index for e in report.errors] == refused, report.errors
    return {"report": report, "locked": pool[2], "pool": pool, "pair": pair, "page": page}


def _generated() -> Canvas:
    c = Canvas()
    boxes = [(0, 0, 120, 60), (300, 80, 100, 100), (40, 300, 160, 70), (500, 260, 80, 40), (700, 0, 90, 50)]
    ops: List[Dict[str, Any]] = [{"op": "create_shape", "id": f"g{i}", "x": x, "y": y, "w": w, "h": h, "text": f"box {i}"}
                                 for i, (x, y, w, h) in enumerate(boxes)]
    report = Executor(c).apply(ops + [{"op": "create_arrow", "from": "g0", "to": "g1"}])
    assert report.ok, report.errors
    return c


# ---------------------------------------------------------------------- tldraw
@pytest.fixture(scope="module")
def tldraw_runs(tmp_path_factory: pytest.TempPathFactory, harness: None) -> Dict[str, Any]:
    out = tmp_path_factory.mktemp("ops-tldraw")
    cases = [(p.name, load(p), p) for p in TLDR] + [("generated", _generated(), None)]
    made = {}
    paths = []
    for name, c, src in cases:
        done = edit(c, c.current_page)
        doc = c.to_tldraw()
        f = out / (name if name.endswith(".tldr") else name + ".tldr")
        f.write_text(json.dumps(doc))
        paths.append(f)
        made[name] = (c, done, doc, src)
    results = th.run_files(paths)
    return {name: (*made[name], res, paths[k]) for k, (name, res) in enumerate(zip(made, results))}


@pytest.mark.parametrize("name", [p.name for p in TLDR] + ["generated"], ids=lambda n: n[:40])
def test_tldraw_opens_the_new_ops_results_where_the_canvas_says(tldraw_runs: Dict[str, Any], name: str) -> None:
    c, done, doc, src, res, _ = tldraw_runs[name]
    check_opened(res)
    rows, problems = compare(c, res, doc)
    assert problems == []
    gaps = import_gaps(src) if src is not None else set()
    held = [r for r in enforced(rows) if r[1] not in gaps]
    agree = sum(r[2] for r in held) / max(1, len(held))
    print(f"{name[:40]}: {summary(rows)}")
    assert agree >= TARGET, summary(rows)
    # everything the ops made or moved agrees exactly
    touched = set(done["report"].created) | set(done["pool"])
    assert [r for r in held if r[1] in touched and not r[2]] == []
    shapes = {s["id"]: s for pg in res["pages"] for s in pg["shapes"]}
    rep = done["report"]
    pair = rep.aliases["pair"]
    assert shapes[pair]["type"] == "group"
    # the two shapes, and an arrow bound to both of them (tldraw puts it in their common ancestor)
    inside = {s for s, v in shapes.items() if v["parentId"] == pair}
    assert {s for s in inside if shapes[s]["type"] != "arrow"} == set(done["pool"][:2])
    assert shapes[done["locked"]]["isLocked"] is True
    bound = {(b["fromId"], b["toId"]) for b in res["bindings"]}
    for a in (n for n in rep.created if c.nodes[n].type == "arrow"):
        want = {(b.from_id, b.to_id) for b in c.bindings.values() if b.from_id == a}
        assert want and want <= bound, a
    # the flowchart's subgraph is a frame holding its members
    chart = rep.aliases["back"]
    assert shapes[chart]["type"] == "frame" and shapes[rep.aliases["D"]]["parentId"] == chart


def test_tldraw_camera_convention_gives_the_stored_viewport(tldraw_runs: Dict[str, Any]) -> None:
    # File > Open ignores session records; an app that restores the camera record gets this viewport
    c, done, doc, _, _, path = tldraw_runs["generated"]
    page = done["page"]
    cam = next(r for r in doc["records"] if r["typeName"] == "camera" and r["id"] == "camera:" + page)
    res = th.run_file(path, "--camera", f"{cam['x']},{cam['y']},{cam['z']}")
    check_opened(res)
    vp = c.cameras[page]
    got = res["pages"][0]["viewportPageBounds"]
    assert (got["x"], got["y"], got["w"], got["h"]) == pytest.approx((vp.x, vp.y, vp.w, vp.h), abs=1e-6)
    want = done["report"].viewport[page]
    assert res["pages"][0]["camera"]["z"] == pytest.approx(want["zoom"])


# ---------------------------------------------------------------------- Excalidraw
UNKNOWN = [
    {"id": "emb", "type": "embeddable", "x": 0, "y": 600, "width": 200, "height": 120, "link": "https://example.com"},
    {"id": "ifr", "type": "iframe", "x": 300, "y": 600, "width": 200, "height": 120},
    {"id": "mf", "type": "magicframe", "x": 600, "y": 600, "width": 300, "height": 200, "name": "Magic"},
    {"id": "stk", "type": "stickynote", "x": 1000, "y": 600, "width": 100, "height": 100, "colour": "yellow"},
]


@pytest.fixture(scope="module")
def excalidraw_runs(tmp_path_factory: pytest.TempPathFactory, excalidraw_harness: Any) -> Dict[str, Any]:
    out = tmp_path_factory.mktemp("ops-excalidraw")
    cases = []
    for p in EXCALIDRAW:
        c = load(p)
        done = edit(c, c.current_page)
        f = out / p.name
        doc = c.to_excalidraw()
        f.write_text(json.dumps(doc))
        cases.append((p.name, c, done, doc, f))
    # a generated scene with element types Excalidraw has, and one it has not, edited around them
    raw = {"type": "excalidraw", "version": 2, "source": "test", "elements": [
        {"id": f"r{i}", "type": "rectangle", "x": 200 * i, "y": 0, "width": 120, "height": 60} for i in range(4)
    ] + [dict(u, angle=0, strokeColor="#1e1e1e", backgroundColor="transparent", fillStyle="solid", strokeWidth=2,
              strokeStyle="solid", roughness=1, opacity=100, groupIds=[], frameId=None, roundness=None, seed=k + 1,
              version=1, versionNonce=k + 1, isDeleted=False, boundElements=None, updated=1, locked=False)
         for k, u in enumerate(UNKNOWN)], "appState": {"viewBackgroundColor": "#ffffff"}, "files": {}}
    c = load(raw)
    done = edit(c, c.current_page)
    c.update("stk", x=c.nodes["stk"].x + 10)  # the made-up element edited too
    f = out / "unknown-types.excalidraw"
    doc = c.to_excalidraw()
    f.write_text(json.dumps(doc))
    cases.append(("unknown-types", c, done, doc, f))
    results = excalidraw_harness.results([x[-1] for x in cases])
    return {name: (c, done, doc, r) for (name, c, done, doc, _), r in zip(cases, results)}


@pytest.mark.parametrize("name", [p.name for p in EXCALIDRAW] + ["unknown-types"], ids=lambda n: n[:40])
def test_excalidraw_opens_the_new_ops_results_where_the_canvas_says(excalidraw_runs: Dict[str, Any], name: str) -> None:
    c, done, doc, r = excalidraw_runs[name]
    assert r["ok"], r["load"]
    assert r["consoleErrors"] == []
    made_up = {u["id"] for u in UNKNOWN if u["type"] == "stickynote"} if name == "unknown-types" else set()
    # Excalidraw drops only an element of a type it does not know (we keep it in the file)
    assert {d["id"] for d in r["restore"]["dropped"]} == made_up and r["restore"]["added"] == []
    assert {e["id"] for e in doc["elements"]} >= {u["id"] for u in UNKNOWN} if name == "unknown-types" else True
    rows = compare_bounds(c, r)
    for kind in ("rectangle-like", "rotated", "text", "linear", "freedraw"):
        assert [x for x in rows[kind] if not x["ok"]] == [], kind
    els = {e["id"]: e for e in r["elements"]}
    rep = done["report"]
    pair_gid = rep.aliases["pair"][len("group:"):]
    assert all(pair_gid in els[m]["groupIds"] for m in done["pool"][:2])
    assert els[done["locked"]]["locked"] is True
    for a in (n for n in rep.created if n in els and els[n]["type"] == "arrow"):
        want = {b.terminal: b.to_id for b in c.bindings.values() if b.from_id == a}
        assert (els[a].get("startBinding") or {}).get("elementId") == want.get("start"), a
        assert (els[a].get("endBinding") or {}).get("elementId") == want.get("end"), a
    # the camera set_viewport stored: File > Open drops a file's scroll and zoom (Excalidraw's
    # cleanAppStateForExport); an app that opens the file as initialData shows exactly our viewport
    vp = c.cameras[done["page"]]
    z = rep.viewport[done["page"]]["zoom"]
    assert r["camera"]["fileOpen"] == {"scrollX": 0, "scrollY": 0, "zoom": 1}
    for cam in (r["camera"]["initialData"], r["camera"]["editorAtStored"]):
        assert (cam["scrollX"], cam["scrollY"]) == pytest.approx((-vp.x, -vp.y), abs=1e-9)
        assert cam["zoom"] == pytest.approx(z, rel=1e-6)  # Excalidraw keeps six decimals of a zoom


def test_unknown_types_are_kept_and_reported(excalidraw_runs: Dict[str, Any]) -> None:
    c, _, doc, _ = excalidraw_runs["unknown-types"]
    written = {e["id"]: e for e in doc["elements"]}
    for u in UNKNOWN:
        assert written[u["id"]]["type"] == u["type"]
    assert written["stk"]["colour"] == "yellow" and written["emb"]["link"] == "https://example.com"
    assert [d.record for d in c.diagnostics if d.code == "unknown_type"] == ["stk"]


# ---------------------------------------------------------------------- Mermaid
@pytest.fixture(scope="module")
def mermaid_truth() -> List[Dict[str, Any]]:
    require("Excalidraw (Mermaid)", mermaid_unavailable_reason())
    return run_mermaid(MERMAID)


@pytest.mark.skipif(not MERMAID, reason="no Mermaid inputs in tests/data/mermaid")
def test_mermaid_matches_excalidraws_own_import(mermaid_truth: List[Dict[str, Any]]) -> None:
    lines = []
    for path, truth in zip(MERMAID, mermaid_truth):
        assert truth["ok"], (path.name, truth.get("error"))
        assert truth["consoleErrors"] == [], (path.name, truth["consoleErrors"])
        assert "image" not in {s["type"] for s in truth["skeleton"]}, path.name  # the package's fallback
        text = path.read_text()
        c = load({"type": "excalidraw", "version": 2, "elements": []})
        report = Executor(c).apply([{"op": "create_from_mermaid", "mermaid": text}])
        assert report.ok, report.errors
        chart = parse_mermaid(text)
        aliases = {k: v for k, v in report.aliases.items() if k in chart.nodes or k in chart.subgraphs}
        ours, theirs = ours_structure(c.to_excalidraw(), aliases), truth_structure(truth)
        assert ours.shapes == theirs.shapes, path.name
        assert ours.extra == theirs.extra, path.name
        assert ours.arrows == theirs.arrows, path.name
        assert ours.groups == theirs.groups, path.name
        axis = 0 if chart.direction in ("LR", "RL") else 1
        agree = flow_order_agreement(theirs, ours, axis)
        lines.append(f"{path.name}: {len(ours.shapes)} shapes, {len(ours.arrows)} arrows, flow order "
                     f"{'n/a' if agree is None else f'{agree:.0%}'}")
        assert agree is None or agree >= 0.75, (path.name, agree)
    print("\n".join(lines))
    print("package versions:", mermaid_truth[0]["meta"]["packageVersions"])
