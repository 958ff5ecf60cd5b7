"""Agent-op benchmarks: a realistic reply parsed and applied, and placement of many objects.

Baselines in the same group: plain ``json.loads`` of the reply's blocks (the floor for
parsing), and a pure-Python shelf packer for placement (rows left to right, no wish
honoured). Every result is checked.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import sizes

from spatialobs.canvas import Canvas, Executor, Node, parse_ops
from spatialobs.canvas.document.records import Binding
from spatialobs.canvas.editing.place import place
from spatialobs.geometry import overlap_pairs

_SECTIONS = "".join(
    f"<section id='s{k}' style='display:flex; gap: 16px; padding: 24px'>"
    f"<div style='width: 240px'><h2>Feature {k}</h2><p style='color:#555'>Text of feature {k} in two short lines.</p></div>"
    f"<img src='f{k}.png' width='200' height='120' alt='Figure {k}'><ul><li>one</li><li>two</li><li>three</li></ul>"
    f"</section>" for k in range(12))
REPLY = "\n".join([
    "Here is the landing page.",
    "```canvas_ops",
    json.dumps({"ops": [
        {"op": "create_artboard", "id": "landing", "name": "Landing", "x": 0, "y": 0, "w": 1440, "h": 4000},
        {"op": "parse_html", "target": "landing", "html": "<header style='display:flex; padding:16px'><span>Acme</span>"
                                                          "<nav style='display:flex; gap:12px'><a>Docs</a><a>Blog</a></nav></header>"
                                                          + _SECTIONS},
    ]}),
    "```",
    "And some polish:",
    "```canvas_ops",
    json.dumps([{"op": "update_styles", "id": f"s{k}", "styles": {"background-color": "#fafafa", "border-radius": "8"}}
                for k in range(12)] + [{"op": "set_text", "id": "LATEST_CREATED_ARTBOARD", "text": "Landing v2"}]),
    "```",
])


def base_canvas() -> Canvas:
    c = Canvas()
    for k in range(200):
        c.add(Node(f"shape:n{k}", "geo", "page:page", None, 2000 + 30 * (k % 20), 30 * (k // 20), 20, 20))
    return c


@pytest.mark.benchmark(group="ops-reply")
def test_reply_json_baseline(benchmark):
    def run():
        return [json.loads(m) for m in re.findall(r"```canvas_ops\n(.*?)\n```", REPLY, re.S)]

    blocks = benchmark(run)
    assert len(blocks) == 2 and len(blocks[0]["ops"]) + len(blocks[1]) == 15


@pytest.mark.benchmark(group="ops-reply")
def test_reply_parse_and_apply(benchmark):
    base = base_canvas()

    def run():
        c = base.copy()
        ops, errors = parse_ops(REPLY)
        return c, errors, Executor(c).apply(ops)

    c, errors, report = benchmark(run)
    assert errors == [] and report.ok, report.errors
    assert len(report.applied) == 15
    assert c.node("shape:landing").name == "Landing v2"
    assert len(c.descendants("shape:landing")) == len(report.created) - 1 > 12 * 9
    assert c.node("shape:s11").style["borderRadius"] == 8


def place_scene(n: int, seed: int = 3):
    """A square frame with n/2 occupants and n loose objects (seeded)."""
    rng = np.random.default_rng(seed)
    ws, hs = rng.integers(10, 60, n).astype(float), rng.integers(10, 60, n).astype(float)
    side = float(np.sqrt(3.0 * (ws * hs).sum() * 1.5)) + 16
    c = Canvas()
    c.add(Node("F", "frame", "page:page", "a1", 0, 0, side, side))
    for k in range(n // 2):
        c.add(Node(f"o{k}", "geo", "F", None, float(rng.uniform(0, side - 40)), float(rng.uniform(0, side - 40)), 30, 30))
    for k in range(n):
        c.add(Node(f"m{k}", "geo", "page:page", None, side + 50 + float(rng.uniform(0, 1000)),
                   float(rng.uniform(0, 1000)), float(ws[k]), float(hs[k])))
    return c, [f"m{k}" for k in range(n)], [f"o{k}" for k in range(n // 2)]


def check_placed(c: Canvas, ids, occupants) -> None:
    fb = c.page_bounds("F")
    boxes = np.array([c.page_bounds(i) for i in ids])
    assert (boxes[:, 0] >= fb[0] + 8 - 1e-9).all() and (boxes[:, 2] <= fb[2] - 8 + 1e-9).all()
    assert (boxes[:, 1] >= fb[1] + 8 - 1e-9).all() and (boxes[:, 3] <= fb[3] - 8 + 1e-9).all()
    occ = np.array([c.page_bounds(o) for o in occupants]).reshape(-1, 4)
    pairs, areas = overlap_pairs(np.vstack([boxes, occ]))
    among = pairs[0] < len(ids)  # pairs with at least one placed object (i < j)
    assert (areas[among] <= 1.0).all()


def shelf_pack(c: Canvas, ids, occupants) -> None:
    """Pure-Python baseline: rows left to right, each box pushed right past any collision."""
    fb = c.page_bounds("F")
    L, T, R, B = fb[0] + 8, fb[1] + 8, fb[2] - 8, fb[3] - 8
    taken = [c.page_bounds(o) for o in occupants]
    x, y, row_h = L, T, 0.0
    with c.batch():
        for i in ids:
            b = c.page_bounds(i)
            w, h = b[2] - b[0], b[3] - b[1]
            while True:
                if x + w > R:
                    x, y, row_h = L, y + row_h, 0.0
                if y + h > B:
                    raise AssertionError("shelf packing ran out of room")
                hit = next((t for t in taken if min(x + w, t[2]) - max(x, t[0]) > 0 and min(y + h, t[3]) - max(y, t[1]) > 0), None)
                if hit is None:
                    break
                x = hit[2]
            taken.append((x, y, x + w, y + h))
            c.update(i, parent="F", x=x - fb[0], y=y - fb[1])
            x += w
            row_h = max(row_h, h)


def timed_packing(benchmark, c0: Canvas, ids, pack) -> Canvas:
    """Times ``pack(canvas, ids, "F")`` on a fresh copy of ``c0`` and returns the last copy packed."""

    def run():
        c = c0.copy()
        pack(c, ids, "F")
        return c

    return benchmark(run)


@pytest.mark.parametrize("n", sizes(10, 100, 1000))
@pytest.mark.benchmark(group="place")
def test_place(benchmark, n):
    c0, ids, occ = place_scene(n)

    c = timed_packing(benchmark, c0, ids, place)
    check_placed(c, ids, occ)


@pytest.mark.parametrize("n", sizes(10, 100, 1000))
@pytest.mark.benchmark(group="place")
def test_place_python_solver(benchmark, n, monkeypatch):
    """``place`` with the solver's Python twin, the test oracle (the solver before the compiled kernel)."""
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    import spatialobs.canvas.editing.place as placing  # noqa: PLC0415

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.reference.place_oracle import solve_placement_reference  # noqa: PLC0415

    c0, ids, occ = place_scene(n)
    fast = c0.copy()
    place(fast, ids, "F")
    monkeypatch.setattr(placing, "solve_placement", solve_placement_reference)

    c = timed_packing(benchmark, c0, ids, place)
    check_placed(c, ids, occ)
    assert [c.page_bounds(i) for i in ids] == [fast.page_bounds(i) for i in ids]  # the same corners


@pytest.mark.parametrize("n", sizes(10, 100, 1000))
@pytest.mark.benchmark(group="place")
def test_place_shelf_baseline(benchmark, n):
    c0, ids, occ = place_scene(n)

    c = timed_packing(benchmark, c0, ids, lambda c, ids, _dest: shelf_pack(c, ids, occ))
    check_placed(c, ids, occ)


def apply_reply(benchmark, c0: Canvas, ops, rounds: int = 1):
    """Times one reply applied to a derived copy of ``c0`` and the derivation after it (as the
    next observation pays); returns the canvas and the report of the last round."""

    def run():
        c = c0.copy()
        c.geometry()
        report = Executor(c).apply(ops)
        c.geometry()
        return c, report

    return benchmark.pedantic(run, rounds=rounds, iterations=1)


def arrows_reply(n: int):
    """A canvas of two shapes and a reply of ``n`` create_arrow ops between them."""
    c = Canvas()
    c.add(Node("shape:a", "geo", "page:page", None, 0, 0, 100, 100))
    c.add(Node("shape:b", "geo", "page:page", None, 400, 0, 100, 100))
    return c, [{"op": "create_arrow", "id": f"ar{k}", "from": "shape:a", "to": "shape:b"} for k in range(n)]


@pytest.mark.parametrize("n", sizes(100, 1000, 10000))
@pytest.mark.benchmark(group="ops-arrows")
def test_reply_create_arrows(benchmark, n):
    """``n`` arrows created in one reply, then the canvas derived once (as the next observation does).

    No op derives the canvas: each reads its targets' positions without deriving, and
    the one derivation at the end resolves the arrows (alike ones once).
    """
    c0, ops = arrows_reply(n)
    c0.geometry()

    c, report = apply_reply(benchmark, c0, ops, rounds=3 if n <= 1000 else 1)
    assert report.ok and len(report.applied) == n
    assert len(c.bindings) == 2 * n
    fresh = c.copy()
    for k in (0, n // 2, n - 1):
        assert c.page_bounds(f"shape:ar{k}") == fresh.page_bounds(f"shape:ar{k}")


def mixed_reply(n: int, seed: int = 0):
    """200 shapes and a reply of ``n`` mixed ops (creations, moves, restyles, texts, arrows), seeded."""
    rng = np.random.default_rng(seed)
    c = Canvas()
    for k in range(200):
        c.add(Node(f"shape:n{k}", "geo", "page:page", None, 30.0 * (k % 20), 30.0 * (k // 20), 20, 20))
    ops, made = [], []
    for k in range(n):
        r, pick = k % 10, f"shape:n{int(rng.integers(0, 200))}"
        if r < 3:
            ops.append({"op": "create_shape", "id": f"s{k}", "x": int(rng.integers(0, 3000)),
                        "y": int(rng.integers(0, 3000)), "w": 40, "h": 30, "text": f"t{k}"})
            made.append(f"s{k}")
        elif r < 5:
            ops.append({"op": "move_node", "id": pick, "dx": 3, "dy": -2})
        elif r < 7:
            ops.append({"op": "update_styles", "id": pick, "styles": {"color": "red"}})
        elif r < 8:
            ops.append({"op": "set_text", "id": pick, "text": f"x{k}"})
        elif r < 9:
            ops.append({"op": "create_arrow", "from": made[-1], "to": pick})
        else:
            ops.append({"op": "update_node", "id": pick, "w": int(rng.integers(10, 50))})
    return c, ops


@pytest.mark.parametrize("n", sizes(1000, 10000))
@pytest.mark.benchmark(group="ops-mixed")
def test_reply_mixed_ops(benchmark, n):
    c0, ops = mixed_reply(n)

    c, report = apply_reply(benchmark, c0, ops)
    assert report.ok, report.errors[:3]
    assert len(report.applied) == n and len(c.nodes) == 200 + 4 * n // 10
    fresh = c.copy().geometry()
    assert np.array_equal(c.geometry().bounds, fresh.bounds)


def deletes_reply(n: int):
    """200 shapes, ``n`` arrows bound between them, and a reply deleting every other arrow."""
    c = Canvas()
    for k in range(200):
        c.add(Node(f"shape:n{k}", "geo", "page:page", None, 30.0 * (k % 20), 30.0 * (k // 20), 20, 20))
    for k in range(n):
        c.add(Node(f"shape:ar{k}", "arrow", "page:page", None, 0, 0,
                   props={"start": {"x": 0, "y": 0}, "end": {"x": 9, "y": 9}}))
        c.add(Binding(f"b{k}s", "arrow", f"shape:ar{k}", f"shape:n{k % 200}", "start"))
        c.add(Binding(f"b{k}e", "arrow", f"shape:ar{k}", f"shape:n{(k * 7) % 200}", "end"))
    return c, [{"op": "delete_node", "id": f"shape:ar{k}"} for k in range(0, n, 2)]


@pytest.mark.parametrize("n", sizes(1000, 10000))
@pytest.mark.benchmark(group="ops-deletes")
def test_reply_delete_arrows(benchmark, n):
    """``n / 2`` bound arrows deleted in one reply: each finds its bindings through the canvas's index."""
    c0, ops = deletes_reply(n)

    c, report = apply_reply(benchmark, c0, ops)
    assert report.ok and len(report.applied) == len(ops)
    assert len(c.bindings) == n and len(c.nodes) == 200 + n // 2
    assert all(b.from_id in c.nodes for b in c.bindings.values())
