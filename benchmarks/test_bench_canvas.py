"""Canvas load and page-geometry benchmarks, with plain JSON parsing in the same group.

Targets (issue 3): load + all page bounds of the 2,504-shape tldraw file under 3× the
JSON parse time of the same file; page bounds for 100k nodes under 50 ms after a write
(an edit, an added node or a removed one). The cold derivation, which reads every Node
object once, is measured too.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest

from spatialobs.canvas import Canvas, Node, load
from spatialobs.canvas.document.model import build_canvas
from spatialobs.canvas.document.records import Page

#: ../shared/data beside the checkout, as in tests/conftest.py.
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "canvases"
BIG = [p for p in [SHARED / "QuentinJoanon__VictoryZone-Front__wireframe.tldr"] if p.is_file()]
needs_big = pytest.mark.skipif(not BIG, reason="../shared/data/canvases is absent")


def all_bounds(c: Canvas) -> int:
    return sum(len(c.columns(pid).bounds) for pid in c.page_ids())


@needs_big
@pytest.mark.benchmark(group="canvas-load-2504")
def test_json_parse_baseline(benchmark):
    data = BIG[0].read_bytes()
    doc = benchmark(json.loads, data)
    assert len(doc["records"]) > 2504


@needs_big
@pytest.mark.benchmark(group="canvas-load-2504")
def test_load_and_page_bounds(benchmark):
    data = BIG[0].read_bytes()

    def run():
        c = load(data)
        return c, all_bounds(c)

    c, n = benchmark(run)
    assert n == 2504 and len(c.pages) == 2
    assert c.page_bounds("shape:kD47Eg_K7Nd90iIgpelnL")[2] - c.page_bounds("shape:kD47Eg_K7Nd90iIgpelnL")[0] == 200.0


def synthetic(n: int, seed: int = 0) -> Canvas:
    """n nodes: frames on one page, each holding 99 rotated shapes (seeded)."""
    rng = np.random.default_rng(seed)
    xs, ys = rng.uniform(-5e4, 5e4, n), rng.uniform(-5e4, 5e4, n)
    ws, hs = rng.uniform(1, 400, n), rng.uniform(1, 400, n)
    rot = np.where(rng.random(n) < 0.2, rng.uniform(-3, 3, n), 0.0)
    fields = []
    frame = None
    for i in range(n):
        if i % 100 == 0:
            frame = f"f{i}"
            fields.append({"id": frame, "type": "frame", "parent": "page:page", "index": f"a{i % 10}V{i}",
                           "x": float(xs[i]), "y": float(ys[i]), "w": 2000.0, "h": 2000.0})
        else:
            fields.append({"id": f"n{i}", "type": "geo", "parent": frame, "index": f"a{i % 100:02d}",
                           "x": float(xs[i] % 2000), "y": float(ys[i] % 2000), "w": float(ws[i]), "h": float(hs[i]),
                           "rotation": float(rot[i])})
    return build_canvas([Page("page:page", "Page 1", "a1")], fields, [], [])


@pytest.fixture(scope="module")
def big_synthetic():
    return synthetic(100_000)


@pytest.mark.benchmark(group="canvas-bounds-100k")
def test_page_bounds_100k_after_edit(benchmark, big_synthetic):
    """A write (one node moved), then all page bounds, visible bounds and paint order again."""
    c = big_synthetic
    c.geometry()
    step = iter(range(10**9))

    def run():
        c.update("n5", x=float(next(step) % 500))
        return c.geometry().bounds

    b = benchmark(run)
    assert b.shape == (100_000, 4) and np.isfinite(b).all()
    r = c.geometry().row["n5"]
    assert b[r, 0] == pytest.approx(c.page_bounds("f0")[0] + c.node("n5").x, abs=1e-6) or c.node("n5").rotation != 0


@pytest.mark.benchmark(group="canvas-bounds-100k")
def test_page_bounds_100k_from_scratch(benchmark, big_synthetic):
    """All derived geometry from the Node objects alone (a canvas's first derivation)."""
    c = big_synthetic

    def run():
        c._derived, c._raw, c._dirty = None, None, None
        return c.geometry().bounds

    b = benchmark(run)
    assert b.shape == (100_000, 4) and np.isfinite(b).all()
    assert (b[:, 2] >= b[:, 0]).all()


def _without_extra(c: Canvas) -> None:
    if "extra" in c.nodes:
        c.remove("extra")
    c.geometry()


def _with_extra(c: Canvas) -> None:
    if "extra" not in c.nodes:
        c.add(Node("extra", "geo", "f500", "a50V", 10.0, 20.0, 30.0, 40.0, 0.5))
    c.geometry()


@pytest.mark.benchmark(group="canvas-bounds-100k")
def test_page_bounds_100k_after_add(benchmark, big_synthetic):
    """A node added inside a frame, then all derived geometry again."""
    c = big_synthetic

    def run():
        _with_extra(c)
        return c.geometry()

    d = benchmark.pedantic(run, setup=lambda: _without_extra(c), rounds=15, iterations=1)
    assert d.bounds.shape == (100_001, 4) and d.ids[-1] == "extra"
    fresh = c.copy().geometry()
    assert np.array_equal(d.bounds, fresh.bounds) and np.array_equal(d.paint, fresh.paint)


@pytest.mark.benchmark(group="canvas-bounds-100k")
def test_page_bounds_100k_after_remove(benchmark, big_synthetic):
    """A frame with its 99 children removed, then all derived geometry again."""
    c = big_synthetic
    keep = {k: c.node(k) for k in ["f300"] + c.descendants("f300")}

    def setup():
        _without_extra(c)
        if "f300" not in c.nodes:
            with c.batch():
                for nd in keep.values():
                    c.add(nd)
        c.geometry()

    def run():
        c.remove("f300")
        return c.geometry()

    d = benchmark.pedantic(run, setup=setup, rounds=15, iterations=1)
    assert d.bounds.shape == (100_000 - len(keep), 4) and "f300" not in d.row
    fresh = c.copy().geometry()
    assert np.array_equal(d.bounds, fresh.bounds) and np.array_equal(d.paint, fresh.paint)
    setup()


@pytest.mark.benchmark(group="canvas-bounds-100k")
def test_columns_100k(benchmark, big_synthetic):
    c = big_synthetic

    def run():
        c.update("n7", y=3.0 if c.node("n7").y != 3.0 else 4.0)
        return c.columns()

    cols = benchmark(run)
    assert len(cols) == 100_000 and cols.ids[0] == "f0" and cols.frame[1] == "f0"


@pytest.mark.benchmark(group="canvas-arrows-100k")
def test_rederive_after_moving_a_bound_target_100k(benchmark):
    """One edit on the arrow-rich synthetic page (about 24k bound arrows): a note that arrows
    are bound to moves, and the page geometry is derived again (its arrows re-resolved)."""
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    c = synthetic_workspace(100_000, seed=7)
    c.geometry()
    target = sorted({b.to_id for b in c.bindings.values()})[0]
    arrows = [b.from_id for b in c.bindings.values() if b.to_id == target]
    step = iter(range(10**9))

    def run():
        c.update(target, x=c.nodes[target].x + (7 if next(step) % 2 else -7))
        return c.geometry()

    d = benchmark(run)
    fresh = c.copy().geometry()
    for a in arrows:
        r = d.row[a]
        assert np.array_equal(d.bounds[r], fresh.bounds[r])
    assert np.array_equal(d.local, fresh.local) and np.array_equal(d.bounds, fresh.bounds)


# -- the pass over node records of a first derivation: compiled (Cython) next to the pure-Python twin
_DERIVE = importlib.import_module("spatialobs.canvas.document.derive")
_NODE_COLUMNS = {"compiled": _DERIVE._node_columns, "python": _DERIVE._node_columns_py}


@pytest.mark.parametrize("impl", list(_NODE_COLUMNS))
def test_extract_100k(benchmark, big_synthetic, impl, monkeypatch):
    """The input columns of 10^5 Node objects (ids, parents, types, indices, numbers)."""
    benchmark.group = "canvas-extract-100k"
    monkeypatch.setattr(_DERIVE, "_node_columns", _NODE_COLUMNS[impl])
    nodes = list(big_synthetic._nodes.values())
    raw = benchmark(_DERIVE.extract, nodes)
    monkeypatch.setattr(_DERIVE, "_node_columns", _DERIVE._node_columns_py)
    want = _DERIVE.extract(nodes)
    assert raw.ids == want.ids and raw.parents == want.parents and raw.num.tobytes() == want.num.tobytes()


@pytest.mark.parametrize("impl", list(_NODE_COLUMNS))
def test_page_bounds_100k_from_scratch_twins(benchmark, big_synthetic, impl, monkeypatch):
    """A canvas's first derivation with either pass over the node records."""
    benchmark.group = "canvas-first-derivation-100k"
    monkeypatch.setattr(_DERIVE, "_node_columns", _NODE_COLUMNS[impl])
    c = big_synthetic
    want = c.copy().geometry().bounds

    def run():
        c._derived, c._raw, c._dirty = None, None, None
        return c.geometry().bounds

    b = benchmark(run)
    assert b.tobytes() == want.tobytes()


# -- the first derivation of the arrow-rich diagram page: arrow targets' outlines compiled or in Python
_ARROWS = importlib.import_module("spatialobs.canvas.document.arrows")


@pytest.mark.parametrize("impl", ["compiled", "python"])
def test_diagram_first_derivation_100k_outline_twins(benchmark, impl, monkeypatch):
    """A first derivation of ``diagram_workspace(10^5, seed=7)`` (18,645 bound arrows on 28,612
    card targets) with the targets' outlines built by ``_core.target_outlines`` or by the Python
    twin; each round derives a fresh copy of the page."""
    from spatialobs.canvas.scenarios.handoff import diagram_workspace

    benchmark.group = "canvas-diagram-first-derivation-100k"
    monkeypatch.setattr(_ARROWS, "OUTLINE_KERNEL", impl == "compiled")
    page = diagram_workspace(100_000, seed=7)
    d = benchmark.pedantic(lambda c: c.geometry(), setup=lambda: ((page.copy(),), {}), rounds=5, iterations=1)
    monkeypatch.setattr(_ARROWS, "OUTLINE_KERNEL", impl != "compiled")
    want = page.copy().geometry()
    assert d.bounds.tobytes() == want.bounds.tobytes() and d.local.tobytes() == want.local.tobytes()
