"""The first derivation of a page of bent, bound and labelled arrows: the arc and label
kernels (``_core.resolve_arrows``, ``_core.place_arrow_labels``) next to their Python twin.

The page is the arrow-rich diagram page of the edit benchmarks
(:func:`~spatialobs.canvas.scenarios.handoff.diagram_workspace`) with every arrow bent
(bends of both signs, 20–90 units) and every other one labelled at one of five label
positions (0, ¼, ½, ¾, 1). Each round derives a fresh copy of the page; the kernels'
result is checked against the twin's, bit for bit.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Dict, List

import pytest

from spatialobs.canvas import Canvas
from spatialobs.canvas.document.model import build_canvas
from spatialobs.canvas.document.records import Page
from spatialobs.canvas.scenarios.handoff import diagram_workspace

_ARROWS = importlib.import_module("spatialobs.canvas.document.arrows")


def bent_diagram(n: int, seed: int = 7) -> Canvas:
    """``diagram_workspace(n, seed)`` with its arrows bent and every other one labelled."""
    page = diagram_workspace(n, seed)
    fields: List[Dict[str, Any]] = []
    k = 0
    for nd in page.nodes.values():
        f = dataclasses.asdict(nd)
        if nd.type == "arrow":
            f["props"] = {**nd.props, "bend": (20.0 + 10.0 * (k % 8)) * (1 if k % 2 else -1),
                          "labelPosition": (k % 5) / 4}
            if k % 2 == 0:
                f["text"] = f"step {k % 13}" if k % 4 else f"hands the order over to stage {k % 7}"
            k += 1
        fields.append(f)
    binds = [dataclasses.asdict(b) for b in page.bindings.values()]
    c = build_canvas([Page(pid, pg.name, pg.index) for pid, pg in page._pages.items()], fields, binds, [])
    c.cameras.update(page.cameras)
    return c


def _flags(monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    monkeypatch.setattr(_ARROWS, "ARC_KERNEL", on)
    monkeypatch.setattr(_ARROWS, "LABEL_KERNEL", on)


# at 10^5 the page is built (6 s), derived three times and once more by the other path, on a loaded machine
@pytest.mark.timeout(900)
@pytest.mark.parametrize("n", [10_000, 100_000], ids=["10k", "100k"])
@pytest.mark.parametrize("impl", ["kernels", "python"])
def test_bent_labelled_first_derivation(benchmark, impl, n, monkeypatch):
    """A first derivation of the bent, labelled diagram page with the arcs and labels
    resolved by the compiled kernels or by the Python twin."""
    benchmark.group = f"canvas-bent-arrows-first-derivation-{n // 1000}k"
    page = bent_diagram(n)
    _flags(monkeypatch, impl == "kernels")
    rounds = 5 if n <= 10_000 else 3
    d = benchmark.pedantic(lambda c: c.geometry(), setup=lambda: ((page.copy(),), {}), rounds=rounds, iterations=1)
    _flags(monkeypatch, impl != "kernels")
    want = page.copy().geometry()
    assert d.bounds.tobytes() == want.bounds.tobytes() and d.local.tobytes() == want.local.tobytes()
