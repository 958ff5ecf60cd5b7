"""Hypothesis strategies for boxes that stress the boundary rules.

Boxes come from a small integer lattice scaled by a power of two, so that
touching edges, duplicates, nesting and zero width or height happen often and
all arithmetic stays exact; a float strategy adds arbitrary coordinates. The
arrow kernels' tests share their drawn canvases (:func:`canvas_maker`), the files
they compare the kernels on and a view of floats as bits here too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from tests.conftest import shared_files

#: The conformance documents the real editors wrote (tests/data/conformance).
CONF = Path(__file__).resolve().parent / "data" / "conformance"
#: The shared canvases' .tldr files (none in a clean clone), then the conformance documents'.
SHARED_TLDR = shared_files("canvases", "*.tldr") + sorted(CONF.glob("*.tldr"))
#: Every ``geo`` shape tldraw draws.
GEOS = ["rectangle", "ellipse", "triangle", "diamond", "pentagon", "hexagon", "octagon", "star", "rhombus",
        "rhombus-2", "oval", "trapezoid", "arrow-left", "arrow-right", "arrow-up", "arrow-down", "x-box",
        "check-box", "cloud", "heart"]


def float_bits(a) -> np.ndarray:
    """The bits of ``a``'s float64 values (uint64): equal exactly when the floats are bit for bit the same."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


@st.composite
def lattice_box(draw, span: int = 12, max_size: int = 8):
    x0 = draw(st.integers(-span, span))
    y0 = draw(st.integers(-span, span))
    w = draw(st.integers(0, max_size))
    h = draw(st.integers(0, max_size))
    return (float(x0), float(y0), float(x0 + w), float(y0 + h))


@st.composite
def float_box(draw):
    x0 = draw(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
    y0 = draw(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
    w = draw(st.floats(0, 1e5, allow_nan=False, allow_infinity=False))
    h = draw(st.floats(0, 1e5, allow_nan=False, allow_infinity=False))
    return (x0, y0, x0 + w, y0 + h)


@st.composite
def box_arrays(draw, min_size: int = 0, max_size: int = 60, floats: bool = False):
    """An (n, 4) float64 array with duplicates and nested copies mixed in."""
    base = draw(st.lists(float_box() if floats else lattice_box(), min_size=min_size, max_size=max_size))
    if base and draw(st.booleans()):
        # duplicate or shrink some rows into nested copies
        extra = draw(st.lists(st.integers(0, len(base) - 1), max_size=min(10, max_size)))
        for k in extra:
            x0, y0, x1, y1 = base[k]
            if draw(st.booleans()):
                base.append((x0, y0, x1, y1))
            else:
                base.append((x0, y0, x0 + (x1 - x0) / 2, y0 + (y1 - y0) / 2))
    scale = 1.0 if floats else draw(st.sampled_from([0.25, 1.0, 8.0]))
    arr = np.array(base, dtype=np.float64).reshape(-1, 4) * scale
    return np.ascontiguousarray(arr)


def seeded_boxes(seed: int, n: int) -> np.ndarray:
    """Canvas-like random boxes on an integer grid (exact arithmetic)."""
    rng = np.random.default_rng(seed)
    x0 = rng.integers(0, 200, n)
    y0 = rng.integers(0, 200, n)
    w = rng.integers(0, 40, n) * (rng.random(n) < 0.95)
    h = rng.integers(0, 40, n) * (rng.random(n) < 0.95)
    return np.ascontiguousarray(np.stack([x0, y0, x0 + w, y0 + h], axis=1).astype(np.float64))


def canvas_maker(spec):
    """A function that builds a fresh canvas from a drawn ``(nodes, arrows, bindings)``: the nodes, then
    the arrows, then the bindings, added in that order (a test builds one canvas per path it compares)."""
    from spatialobs.canvas import Canvas

    nodes, arrows, bindings = spec

    def make():
        c = Canvas()
        for nd in list(nodes) + list(arrows):
            c.add(nd)
        for b in bindings:
            c.add(b)
        return c

    return make
