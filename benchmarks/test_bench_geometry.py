"""Geometry kernels side by side with shapely (STRtree) and the pure-Python oracles.

One benchmark group per kernel and size; every benchmark checks its result
against the compiled kernel's. Run ``pytest benchmarks`` for timings, or
``pytest benchmarks --benchmark-disable`` to check results only.

The pair kernels also run against the numpy sweep-and-prune of ``peers.py`` and a
``floor`` row: a copy of the kernel's output arrays into fresh memory, what writing
the result costs at memory speed, so each kernel shows its distance to the floor;
and ``spatialobs_threads``, the kernel with ``threads=0`` (one thread per core).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import peers
import pytest
from conftest import data, shapely_geoms, sizes

from spatialobs import geometry as g
from tests.reference import geometry_oracle as ref

ORACLE_MAX_N = 1000  # the O(n^2) oracles


def run(benchmark, fn, slow: bool = False):
    if slow:
        return benchmark.pedantic(fn, rounds=2, iterations=1, warmup_rounds=0)
    return benchmark(fn)


def floor(benchmark, outputs):
    """Copy the output arrays into fresh memory: the cost of writing the result once."""
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    got = run(benchmark, lambda: tuple(np.copy(x) for x in outputs))
    assert all(np.array_equal(x, y) for x, y in zip(got, outputs))


def pairs_list(p) -> list:
    return [tuple(x) for x in np.asarray(p).T.tolist()]


@lru_cache(maxsize=None)
def expected(kernel: str, n: int):
    d = data(n)
    return {
        "visibility": lambda: g.visibility(d.boxes, d.viewport),
        "occluders": lambda: g.occluders(d.boxes, d.order, d.opacity, d.hidden, d.viewport),
        "overlap_pairs": lambda: g.overlap_pairs(d.boxes),
        "containment_pairs": lambda: g.containment_pairs(d.boxes),
        "proximity_pairs": lambda: g.proximity_pairs(d.boxes, 20.0, 4),
        "alignment_pairs": lambda: g.alignment_pairs(d.boxes, 1.0),
        "reading_order": lambda: g.reading_order(d.boxes, 10.0),
    }[kernel]()


# ---- visibility ------------------------------------------------------------------


@pytest.mark.parametrize("n", sizes(1000, 10_000, 100_000, 1_000_000))
@pytest.mark.parametrize("impl", ["spatialobs", "shapely", "python"])
def test_visibility(benchmark, impl, n):
    if impl == "python" and n > 100_000:
        pytest.skip("the pure-Python oracle is too slow at this size")
    benchmark.group = f"visibility n={n}"
    d = data(n)
    labels, gaps = expected("visibility", n)
    if impl == "spatialobs":
        got = run(benchmark, lambda: g.visibility(d.boxes, d.viewport))
        assert np.array_equal(got[0], labels)
        assert np.bincount(labels, minlength=5)[[0, 1]].sum() > 0  # the viewport sees something
    elif impl == "shapely":
        geo = shapely_geoms(n)
        got = run(benchmark, lambda: peers.visibility(geo, d.boxes, d.viewport), slow=n >= 100_000)
        assert np.array_equal(got[0], labels)
        np.testing.assert_allclose(got[1], gaps, rtol=1e-12, atol=1e-9)  # GEOS distance vs sqrt formula
    else:
        lst = d.boxes.tolist()
        got = run(benchmark, lambda: ref.visibility(lst, d.viewport), slow=True)
        assert got[0] == labels.tolist() and got[1] == gaps.tolist()


# ---- occluders -------------------------------------------------------------------


@pytest.mark.parametrize("n", sizes(1000, 10_000, 100_000, 1_000_000))
@pytest.mark.parametrize("impl", ["spatialobs", "shapely", "shapely_prefiltered", "python"])
def test_occluders(benchmark, impl, n):
    if impl == "python" and n > ORACLE_MAX_N:
        pytest.skip("the O(n^2) oracle is too slow at this size")
    benchmark.group = f"occluders n={n}"
    d = data(n)
    want = expected("occluders", n)
    if impl == "spatialobs":
        got = run(benchmark, lambda: g.occluders(d.boxes, d.order, d.opacity, d.hidden, d.viewport))
        assert np.array_equal(got, want)
        # every occluder really is higher, shown, opaque and containing
        for i in np.flatnonzero(got >= 0):
            j = got[i]
            assert d.order[j] > d.order[i] and not d.hidden[j] and d.opacity[j] >= 0.9
    elif impl.startswith("shapely"):
        geo = shapely_geoms(n)
        pre = impl == "shapely_prefiltered"
        got = run(
            benchmark,
            lambda: peers.occluders(geo, d.boxes, d.order, d.opacity, d.hidden, d.viewport, prefilter=pre),
            slow=n >= 100_000,
        )
        assert np.array_equal(got, want)
    else:
        args = (d.boxes.tolist(), d.order.tolist(), d.opacity.tolist(), d.hidden.tolist(), d.viewport)
        got = run(benchmark, lambda: ref.occluders(*args), slow=True)
        assert got == want.tolist()


# ---- pair relations ----------------------------------------------------------------


@pytest.mark.parametrize("n", sizes(1000, 10_000, 100_000))
@pytest.mark.parametrize("impl", ["spatialobs", "spatialobs_threads", "shapely", "numpy", "floor", "python"])
def test_overlap_pairs(benchmark, impl, n):
    if impl == "python" and n > ORACLE_MAX_N:
        pytest.skip("the O(n^2) oracle is too slow at this size")
    benchmark.group = f"overlap_pairs n={n}"
    d = data(n)
    pairs, areas = expected("overlap_pairs", n)
    if impl == "spatialobs":
        got = run(benchmark, lambda: g.overlap_pairs(d.boxes))
        assert np.array_equal(got[0], pairs) and np.all(got[1] > 0)
    elif impl == "shapely":
        geo = shapely_geoms(n)
        got = run(benchmark, lambda: peers.overlap_pairs(geo, d.boxes), slow=n >= 100_000)
        assert np.array_equal(got[0], pairs) and np.array_equal(got[1], areas)
    elif impl == "spatialobs_threads":
        got = run(benchmark, lambda: g.overlap_pairs(d.boxes, threads=0))
        assert np.array_equal(got[0], pairs) and np.array_equal(got[1], areas)
    elif impl == "numpy":
        got = run(benchmark, lambda: peers.overlap_pairs_numpy(d.boxes), slow=n >= 100_000)
        assert np.array_equal(got[0], pairs) and np.array_equal(got[1], areas)
    elif impl == "floor":
        floor(benchmark, (pairs, areas))
    else:
        lst = d.boxes.tolist()
        got = run(benchmark, lambda: ref.overlap_pairs(lst), slow=True)
        assert got[0] == pairs_list(pairs) and got[1] == areas.tolist()


@lru_cache(maxsize=None)
def ranked(n: int, piles: bool):
    """The canvas boxes with a paint rank each; with ``piles``, every tenth box stacked into piles of
    100 identical boxes (what an agent that repeats its plan leaves; 10 boxes in one pile at 10^3)."""
    b = data(n).boxes.copy()
    if piles:
        k = max(1, n // 1000)
        spots = b[:k].copy()
        b[::10] = spots[np.arange(len(b[::10])) % k]
    b = np.ascontiguousarray(b)
    return b, np.random.default_rng(7).permutation(n).astype(np.int64)


@pytest.mark.parametrize("layout", ["canvas", "piles"])
@pytest.mark.parametrize("n", sizes(1000, 10_000, 100_000))
@pytest.mark.parametrize("impl", ["spatialobs", "pairs", "shapely", "python"])
def test_overlap_any_ranked(benchmark, impl, n, layout):
    """Per box, whether a box ranked above it overlaps it: the kernel (each search stopped at its
    first such box) against ``overlap_pairs_between``'s pairs reduced by numpy (what the painted
    occlusion asked before), shapely's envelope pairs reduced, and the oracle."""
    if impl == "python" and n > ORACLE_MAX_N:
        pytest.skip("the O(n^2) oracle is too slow at this size")
    benchmark.group = f"overlap_any_ranked {layout} n={n}"
    boxes, ranks = ranked(n, layout == "piles")
    ix = g.BoxIndex(boxes)
    want = g.overlap_any_ranked(ix, ranks, boxes, ranks)
    assert 0 < want.sum() < n
    if impl == "spatialobs":
        got = run(benchmark, lambda: g.overlap_any_ranked(ix, ranks, boxes, ranks))
    elif impl == "pairs":
        def reduced():
            pairs, _ = g.overlap_pairs_between(ix, boxes)
            out = np.zeros(n, bool)
            out[pairs[1][ranks[pairs[0]] > ranks[pairs[1]]]] = True
            return out
        got = run(benchmark, reduced)
    elif impl == "shapely":
        geo = peers.geoms(boxes)
        got = run(benchmark, lambda: peers.overlap_any_ranked(geo, boxes, ranks), slow=n >= 100_000)
    else:
        lst, rl = boxes.tolist(), ranks.tolist()
        got = np.array(run(benchmark, lambda: ref.overlap_any_ranked(lst, rl, lst, rl), slow=True))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("n", sizes(1000, 10_000, 100_000))
@pytest.mark.parametrize("impl", ["spatialobs", "spatialobs_threads", "shapely", "numpy", "floor", "python"])
def test_containment_pairs(benchmark, impl, n):
    if impl == "python" and n > ORACLE_MAX_N:
        pytest.skip("the O(n^2) oracle is too slow at this size")
    benchmark.group = f"containment_pairs n={n}"
    d = data(n)
    want = expected("containment_pairs", n)
    if impl == "spatialobs":
        got = run(benchmark, lambda: g.containment_pairs(d.boxes))
        assert np.array_equal(got, want) and want.shape[1] > n // 4  # cards sit in frames
    elif impl == "shapely":
        geo = shapely_geoms(n)
        got = run(benchmark, lambda: peers.containment_pairs(geo, d.boxes), slow=n >= 100_000)
        assert np.array_equal(got, want)
    elif impl == "spatialobs_threads":
        got = run(benchmark, lambda: g.containment_pairs(d.boxes, threads=0))
        assert np.array_equal(got, want)
    elif impl == "numpy":
        got = run(benchmark, lambda: peers.containment_pairs_numpy(d.boxes), slow=n >= 100_000)
        assert np.array_equal(got, want)
    elif impl == "floor":
        floor(benchmark, want)
    else:
        lst = d.boxes.tolist()
        got = run(benchmark, lambda: ref.containment_pairs(lst), slow=True)
        assert got == pairs_list(want)


@pytest.mark.parametrize("n", sizes(1000, 10_000, 100_000))
@pytest.mark.parametrize("impl", ["spatialobs", "spatialobs_threads", "shapely", "numpy", "floor", "python"])
def test_proximity_pairs(benchmark, impl, n):
    if impl == "python" and n > ORACLE_MAX_N:
        pytest.skip("the O(n^2) oracle is too slow at this size")
    benchmark.group = f"proximity_pairs n={n}"
    d = data(n)
    pairs, gaps = expected("proximity_pairs", n)
    if impl == "spatialobs":
        got = run(benchmark, lambda: g.proximity_pairs(d.boxes, 20.0, 4))
        assert np.array_equal(got[0], pairs) and np.all(got[1] <= 20.0)
    elif impl == "shapely":
        geo = shapely_geoms(n)
        got = run(benchmark, lambda: peers.proximity_pairs(geo, d.boxes, 20.0, 4), slow=n >= 100_000)
        assert np.array_equal(got[0], pairs) and np.array_equal(got[1], gaps)
    elif impl == "spatialobs_threads":
        got = run(benchmark, lambda: g.proximity_pairs(d.boxes, 20.0, 4, threads=0))
        assert np.array_equal(got[0], pairs) and np.array_equal(got[1], gaps)
    elif impl == "numpy":
        got = run(benchmark, lambda: peers.proximity_pairs_numpy(d.boxes, 20.0, 4), slow=n >= 100_000)
        assert np.array_equal(got[0], pairs) and np.array_equal(got[1], gaps)
    elif impl == "floor":
        floor(benchmark, (pairs, gaps))
    else:
        lst = d.boxes.tolist()
        got = run(benchmark, lambda: ref.proximity_pairs(lst, 20.0, 4), slow=True)
        assert got[0] == pairs_list(pairs) and got[1] == gaps.tolist()


# ---- a small call after a large one: the working memory kept between calls ---------

_SMALL_CALLS = {
    "overlap_pairs": lambda b: g.overlap_pairs(b),
    "containment_pairs": lambda b: g.containment_pairs(b),
    "proximity_pairs": lambda b: g.proximity_pairs(b, 20.0, 4),
    "alignment_pairs": lambda b: g.alignment_pairs(b, 1.0),
}


@pytest.mark.parametrize("big", sizes(10_000, 100_000)[-1:])
@pytest.mark.parametrize("impl", ["spatialobs", "fresh"])
@pytest.mark.parametrize("kernel", list(_SMALL_CALLS))
def test_pair_kernel_on_1e3_after_a_larger_call(benchmark, kernel, impl, big):
    """A pair kernel on 10^3 boxes in a thread whose kernels ran on the larger page first (a service
    that observes a large page, then a small one): the buffers kept from the larger call are reused,
    and must cost no more than their size in the small call. ``fresh`` times the same call with the
    thread's working memory given back before each round (``release_scratch``: fresh pages)."""
    benchmark.group = f"{kernel} on 10^3 after {big} boxes"
    small, large = data(1000).boxes, data(big).boxes
    call = _SMALL_CALLS[kernel]
    for f in _SMALL_CALLS.values():
        f(large)
    if impl == "spatialobs":
        got = run(benchmark, lambda: call(small))
    else:
        got = benchmark.pedantic(lambda: call(small), setup=g.release_scratch, rounds=50, iterations=1)
    want = expected(kernel, 1000)
    assert all(np.array_equal(x, y) for x, y in zip(got if isinstance(got, tuple) else (got,),
                                                    want if isinstance(want, tuple) else (want,)))


# ---- sort-based kernels: no STRtree analogue; numpy and the Python oracle ----------


@pytest.mark.parametrize("n", sizes(1000, 10_000, 100_000))
@pytest.mark.parametrize("impl", ["spatialobs", "spatialobs_threads", "numpy", "floor", "python"])
def test_alignment_pairs(benchmark, impl, n):
    benchmark.group = f"alignment_pairs n={n}"
    d = data(n)
    pairs, kinds = expected("alignment_pairs", n)
    if impl == "spatialobs":
        got = run(benchmark, lambda: g.alignment_pairs(d.boxes, 1.0))
        assert np.array_equal(got[0], pairs) and set(np.unique(kinds).tolist()) <= set(range(6))
    elif impl == "spatialobs_threads":
        got = run(benchmark, lambda: g.alignment_pairs(d.boxes, 1.0, threads=0))
        assert np.array_equal(got[0], pairs) and np.array_equal(got[1], kinds)
    elif impl == "numpy":
        got = run(benchmark, lambda: peers.alignment_pairs_numpy(d.boxes, 1.0), slow=n >= 100_000)
        assert np.array_equal(got[0], pairs) and np.array_equal(got[1], kinds)
    elif impl == "floor":
        floor(benchmark, (pairs, kinds))
    else:
        lst = d.boxes.tolist()
        got = run(benchmark, lambda: ref.alignment_pairs(lst, 1.0), slow=True)
        assert got[0] == pairs_list(pairs) and got[1] == kinds.tolist()


@pytest.mark.parametrize("n", sizes(1000, 10_000, 100_000))
@pytest.mark.parametrize("impl", ["spatialobs", "python"])
def test_reading_order(benchmark, impl, n):
    benchmark.group = f"reading_order n={n}"
    d = data(n)
    want = expected("reading_order", n)
    if impl == "spatialobs":
        got = run(benchmark, lambda: g.reading_order(d.boxes, 10.0))
        assert np.array_equal(got, want) and np.array_equal(np.sort(got), np.arange(n))
    else:
        lst = d.boxes.tolist()
        got = run(benchmark, lambda: ref.reading_order(lst, 10.0), slow=True)
        assert got == want.tolist()


# ---- the observation's per-prompt geometry: four kernels together -----------------


@pytest.mark.parametrize("n", sizes(10_000, 100_000))
@pytest.mark.parametrize("impl", ["spatialobs", "spatialobs_shared_index", "shapely"])
def test_four_kernels_together(benchmark, impl, n):
    """visibility + occluders + overlap_pairs + containment_pairs, as one prompt needs them.

    ``spatialobs_shared_index`` builds one BoxIndex in the call and hands it to both
    pair kernels, as the canvas observation does.
    """
    benchmark.group = f"four kernels n={n}"
    d = data(n)
    if impl == "spatialobs_shared_index":

        def call():
            ix = g.BoxIndex(d.boxes)
            return (
                g.visibility(d.boxes, d.viewport)[0],
                g.occluders(d.boxes, d.order, d.opacity, d.hidden, d.viewport),
                g.overlap_pairs(ix)[0],
                g.containment_pairs(ix),
            )

    elif impl == "spatialobs":

        def call():
            return (
                g.visibility(d.boxes, d.viewport)[0],
                g.occluders(d.boxes, d.order, d.opacity, d.hidden, d.viewport),
                g.overlap_pairs(d.boxes)[0],
                g.containment_pairs(d.boxes),
            )

    else:
        geo = shapely_geoms(n)

        def call():
            return (
                peers.visibility(geo, d.boxes, d.viewport)[0],
                peers.occluders(geo, d.boxes, d.order, d.opacity, d.hidden, d.viewport, prefilter=True),
                peers.overlap_pairs(geo, d.boxes)[0],
                peers.containment_pairs(geo, d.boxes),
            )

    labels, occ, overlaps, contained = run(benchmark, call, slow=impl == "shapely")
    assert np.array_equal(labels, expected("visibility", n)[0])
    assert np.array_equal(occ, expected("occluders", n))
    assert np.array_equal(overlaps, expected("overlap_pairs", n)[0])
    assert np.array_equal(contained, expected("containment_pairs", n))
