"""Writing a canvas of many labelled bent arrows as Excalidraw and as tldraw (issue 34).

``n`` arrows, each bent, labelled and bound at both ends to two of 200 shapes (no two
drawn alike), derived once before the timed call (as after the reply that made them).
The writers read each arrow's ends once per export: the time grows linearly with ``n``
(compare 10³ and 10⁴). **previous** is the Excalidraw writer as it was: each labelled
arrow fully resolved again for its element and for its label (its arc sampled, its
label placed) after a scan of every binding; at 10³ only. Every result is checked:
the same document as the previous writer's, the ends where the canvas draws them.
"""

from __future__ import annotations

import json

import pytest
from conftest import sizes

from spatialobs.canvas import Canvas, Executor, Node
from spatialobs.canvas.document.arrows import arrow_geometry
from spatialobs.canvas.formats import excalidraw


def labelled_arrows(n: int) -> Canvas:
    """200 shapes in a grid and ``n`` labelled bent arrows between them, derived."""
    c = Canvas()
    for k in range(200):
        c.add(Node(f"shape:n{k}", "geo", "page:page", None, 300.0 * (k % 20), 300.0 * (k // 20), 120, 80,
                   props={"geo": "rectangle"}))
    ops = [{"op": "create_arrow", "id": f"ar{k}", "from": f"shape:n{k % 200}", "to": f"shape:n{(7 * k + 1) % 200}",
            "text": f"step {k}", "bend": 10 + k % 40} for k in range(n)]
    report = Executor(c).apply(ops)
    assert report.ok and len(report.applied) == n
    c.geometry()
    return c


_CACHE: dict = {}


def canvas_of(n: int) -> Canvas:
    if n not in _CACHE:
        _CACHE.clear()
        _CACHE[n] = labelled_arrows(n)
    return _CACHE[n]


def _previous_resolved_ends(self, node, st):  # type: ignore[no-untyped-def]
    """The writer before issue 34: a scan of every binding and a full resolution per call."""
    if st is not self.cur or node.type != "arrow" or isinstance(node.props.get("points"), list):
        return None
    if not any(b.from_id == node.id for b in self.canvas._bindings.values()):
        return None
    g = arrow_geometry(self.canvas, node.id)
    return (float(g.start[0]), float(g.start[1])), (float(g.end[0]), float(g.end[1]))


@pytest.mark.parametrize("n", sizes(1000, 10000))
@pytest.mark.benchmark(group="export-labelled-arrows-excalidraw")
def test_to_excalidraw_labelled_bent_arrows(benchmark, n):
    c = canvas_of(n)
    doc = benchmark.pedantic(lambda: c.to_excalidraw(), rounds=3 if n <= 1000 else 1, iterations=1)
    els = {e["id"]: e for e in doc["elements"]}
    arrows = [e for e in doc["elements"] if e["type"] == "arrow"]
    assert len(arrows) == n and sum(1 for e in doc["elements"] if e.get("containerId") in els) == n
    for k in (0, n // 2, n - 1):  # the ends where the canvas draws them
        g, node, el = arrow_geometry(c, f"shape:ar{k}"), c.nodes[f"shape:ar{k}"], els[f"shape:ar{k}"]
        assert (el["x"], el["y"]) == (node.x + g.start[0], node.y + g.start[1])
        assert el["points"][-1] == [g.end[0] - g.start[0], g.end[1] - g.start[1]]


@pytest.mark.parametrize("n", sizes(1000))
@pytest.mark.benchmark(group="export-labelled-arrows-excalidraw")
def test_to_excalidraw_labelled_bent_arrows_previous(benchmark, n, monkeypatch):
    c = canvas_of(n)
    now = json.dumps(c.to_excalidraw())
    monkeypatch.setattr(excalidraw._Exporter, "_resolved_ends", _previous_resolved_ends)
    doc = benchmark.pedantic(lambda: c.to_excalidraw(), rounds=1, iterations=1)
    assert json.dumps(doc) == now  # byte for byte the document the writer makes now


@pytest.mark.parametrize("n", sizes(1000, 10000))
@pytest.mark.benchmark(group="export-labelled-arrows-tldraw")
def test_to_tldraw_labelled_bent_arrows(benchmark, n):
    c = canvas_of(n)
    doc = benchmark.pedantic(lambda: c.to_tldraw(), rounds=3 if n <= 1000 else 1, iterations=1)
    recs = {r["id"]: r for r in doc["records"]}
    assert sum(1 for r in doc["records"] if r["typeName"] == "binding") == 2 * n
    for k in (0, n - 1):
        assert f"step {k}" in json.dumps(recs[f"shape:ar{k}"]["props"])
