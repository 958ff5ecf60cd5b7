"""Elbow arrows routed by the compiled kernel or by its Python twin, side by side.

The page is the arrow-rich diagram page of the edit benchmarks
(``diagram_workspace(n, seed=7)``: frames of overlapping cards, arrows bound at both
ends or at the start, unbound arrows touching card edges) with every arrow turned into
a tldraw elbow arrow (``kind: "elbow"``). Each round derives a fresh copy of the page
(the first derivation: every elbow arrow routed). Run with
``--benchmark-timer=time.process_time``; results are checked against the twin's bits.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

import pytest

from conftest import sizes
from spatialobs.canvas import Canvas

_ELBOW = importlib.import_module("spatialobs.canvas.document.elbow")


@lru_cache(maxsize=None)
def elbow_page(n: int) -> Canvas:
    """``diagram_workspace(n, seed=7)`` with every arrow an elbow arrow."""
    from spatialobs.canvas.scenarios.handoff import diagram_workspace

    c = diagram_workspace(n, seed=7)
    with c.batch():
        for nd in list(c.nodes.values()):
            if nd.type == "arrow":
                c.update(nd.id, props={**nd.props, "kind": "elbow"})
    return c


@pytest.mark.parametrize("n", sizes(1_000, 10_000, 100_000))
@pytest.mark.parametrize("impl", ["kernel", "twin"])
def test_elbow_first_derivation(benchmark, impl, n, monkeypatch):
    """The first derivation of the elbow page, its arrows routed by ``_core.elbow_route`` or in Python."""
    benchmark.group = f"canvas-elbow-first-derivation-{n:.0e}".replace("e+0", "e")
    page = elbow_page(n)
    monkeypatch.setattr(_ELBOW, "ELBOW_KERNEL", impl == "kernel")
    rounds = 5 if n >= 100_000 else 9
    d = benchmark.pedantic(lambda c: c.geometry(), setup=lambda: ((page.copy(),), {}), rounds=rounds, iterations=1)
    monkeypatch.setattr(_ELBOW, "ELBOW_KERNEL", impl != "kernel")
    want = page.copy().geometry()
    assert d.bounds.tobytes() == want.bounds.tobytes() and d.local.tobytes() == want.local.tobytes()
