"""polygon_coverage against its exact oracle (and shapely), invariants and bad input."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError, OutOfRangeError
from spatialobs import geometry as g
from tests.reference.coverage_oracle import coverage as oracle


@st.composite
def polygons(draw, span: int = 12):
    """Lattice polygons: boxes (also zero-area), triangles, and star-shaped loops (convex or not)."""
    kind = draw(st.sampled_from(["box", "box", "triangle", "star", "diamond"]))
    x, y = draw(st.integers(-span, span)), draw(st.integers(-span, span))
    if kind == "box":
        w, h = draw(st.integers(0, 10)), draw(st.integers(0, 10))
        return [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
    if kind == "diamond":
        r = draw(st.integers(1, 8))
        return [(x, y - r), (x + r, y), (x, y + r), (x - r, y)]
    if kind == "triangle":
        pts = draw(st.lists(st.tuples(st.integers(-span, span), st.integers(-span, span)), min_size=3, max_size=3))
        return pts
    k = draw(st.integers(3, 9))
    radii = draw(st.lists(st.integers(1, 8), min_size=k, max_size=k))
    return [(x + round(r * math.cos(2 * math.pi * i / k)), y + round(r * math.sin(2 * math.pi * i / k)))
            for i, r in enumerate(radii)]


def frac(poly):
    return [(Fraction(a), Fraction(b)) for a, b in poly]


@settings(max_examples=300, deadline=None)
@given(polygons(), st.lists(polygons(), max_size=5), st.booleans())
def test_matches_the_exact_oracle(target, covers, with_copy):
    if with_copy:
        covers = covers + [list(target)]  # a duplicate: exactly covered
    polys = [target] + covers
    area, covered, best = g.polygon_coverage(polys, [0], [list(range(1, len(polys)))])
    want_area, want_cov, want_best = oracle(frac(target), [frac(c) for c in covers])
    scale = max(1.0, float(want_area))
    assert area[0] == pytest.approx(float(want_area), abs=1e-9 * scale)
    assert covered[0] == pytest.approx(float(want_cov), abs=1e-9 * scale)
    assert 0 <= covered[0] <= area[0] + 1e-9 * scale
    if want_best is None:
        assert best[0] == -1 or oracle(frac(target), [frac(polys[best[0]])])[1] < 1e-9 * scale
    else:
        mine = oracle(frac(target), [frac(polys[best[0]])])[1]
        top = oracle(frac(target), [frac(covers[want_best])])[1]
        assert float(mine) == pytest.approx(float(top), abs=1e-9 * scale)
    if with_copy and want_area > 0:
        assert covered[0] == pytest.approx(area[0], abs=1e-9 * scale)


@settings(max_examples=150, deadline=None)
@given(polygons(), st.lists(polygons(), max_size=4))
def test_matches_shapely_on_valid_polygons(target, covers):
    shapely = pytest.importorskip("shapely")
    from shapely.geometry import Polygon
    from shapely.ops import unary_union

    t = Polygon(target)
    cs = [Polygon(c) for c in covers]
    if not t.is_valid or not all(c.is_valid for c in cs):
        return
    area, covered, _ = g.polygon_coverage([target] + covers, [0], [list(range(1, len(covers) + 1))])
    want = t.intersection(unary_union(cs)).area if cs else 0.0
    assert area[0] == pytest.approx(t.area, abs=1e-9)
    assert covered[0] == pytest.approx(want, abs=1e-7)
    assert shapely.__version__


@settings(max_examples=100, deadline=None)
@given(polygons(), st.lists(polygons(), max_size=4), st.integers(-50, 50), st.integers(-50, 50),
       st.sampled_from([1, 2, 0.5]))
def test_translation_scale_and_order_invariance(target, covers, dx, dy, s):
    polys = [target] + covers
    area, covered, _ = g.polygon_coverage(polys, [0], [list(range(1, len(polys)))])
    moved = [[(x * s + dx, y * s + dy) for x, y in p] for p in polys]
    a2, c2, _ = g.polygon_coverage(moved, [0], [list(range(len(polys) - 1, 0, -1))])
    tol = 1e-7 * max(1.0, area[0]) * s * s
    assert a2[0] == pytest.approx(area[0] * s * s, abs=tol)
    assert c2[0] == pytest.approx(covered[0] * s * s, abs=tol)


def test_several_queries_share_the_polygons():
    sq = [(0, 0), (10, 0), (10, 10), (0, 10)]
    disc = [(5 + 5 * math.cos(a), 5 + 5 * math.sin(a)) for a in np.linspace(0, 2 * math.pi, 64, endpoint=False)]
    area, covered, best = g.polygon_coverage([sq, disc], [1, 0, 0], [[0], [1], []])
    assert covered[0] == pytest.approx(area[0])  # the square covers the disc
    assert covered[1] < 0.8 * area[1]             # the disc leaves the square's corners
    assert best.tolist() == [0, 1, -1] and covered[2] == 0


def test_bad_input_is_named():
    with pytest.raises(InvalidInputError, match="polygon 1 must have shape"):
        g.polygon_coverage([[(0, 0), (1, 0), (1, 1)], [1, 2, 3]], [0], [[1]])
    with pytest.raises(InvalidInputError, match="not finite"):
        g.polygon_coverage([[(0, 0), (math.nan, 0), (1, 1)]], [0], [[]])
    with pytest.raises(OutOfRangeError, match="cover polygon 5"):
        g.polygon_coverage([[(0, 0), (1, 0), (1, 1)]], [0], [[5]])
    with pytest.raises(OutOfRangeError, match="target polygon -1"):
        g.polygon_coverage([[(0, 0), (1, 0), (1, 1)]], [-1], [[]])
    with pytest.raises(InvalidInputError, match="one list per target"):
        g.polygon_coverage([[(0, 0), (1, 0), (1, 1)]], [0, 0], [[]])
