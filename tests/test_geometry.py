"""The geometry kernels against their naive oracles, invariants and bad input."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError, SpatialObsError, _core
from spatialobs import geometry as g
from tests.reference import geometry_oracle as ref
from tests.strategies import box_arrays, lattice_box, seeded_boxes

viewports = lattice_box(span=10, max_size=20)


def as_pairs(arr: np.ndarray) -> list:
    assert arr.dtype == np.int64 and arr.ndim == 2 and arr.shape[0] == 2
    return [tuple(p) for p in arr.T.tolist()]


def paint_inputs(data, n):
    order = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), dtype=np.int64)
    opacity = np.array(
        data.draw(st.lists(st.sampled_from([0.0, 0.5, 0.9, 1.0]), min_size=n, max_size=n)), dtype=np.float64
    )
    hidden = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return order, opacity, hidden


# ---- agreement with the oracles ------------------------------------------------


@given(box_arrays(), viewports, st.sampled_from([0.0, 0.1, 0.75, 3.0]))
def test_visibility_matches_oracle(boxes, viewport, near):
    labels, gaps = g.visibility(boxes, viewport, near)
    want_labels, want_gaps = ref.visibility(boxes.tolist(), viewport, near)
    assert labels.dtype == np.int8 and gaps.dtype == np.float64
    assert labels.tolist() == want_labels
    assert gaps.tolist() == want_gaps


@given(box_arrays(floats=True), st.tuples(st.floats(-1e5, 0), st.floats(-1e5, 0)))
def test_visibility_matches_oracle_floats(boxes, corner):
    viewport = (corner[0], corner[1], corner[0] + 1280.5, corner[1] + 720.25)
    labels, gaps = g.visibility(boxes, viewport)
    want_labels, want_gaps = ref.visibility(boxes.tolist(), viewport)
    assert labels.tolist() == want_labels and gaps.tolist() == want_gaps


_extreme = st.one_of(st.floats(-1e308, 1e308), st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1e-300, 10.0, 10.0 + 1e-12]))


@given(st.lists(st.tuples(_extreme, _extreme, _extreme, _extreme), max_size=30), st.sampled_from([0.0, 0.75, 1e300]))
def test_visibility_matches_oracle_at_extremes(rows, near):
    # the kernel decides "meets the viewport" from the separations being 0: exact at every
    # magnitude (subnormal separations, overflowing differences, signed zeros)
    boxes = np.array([(min(a, c), min(b, d), max(a, c), max(b, d)) for a, b, c, d in rows], dtype=np.float64).reshape(-1, 4)
    viewport = (0.0, 0.0, 10.0, 10.0)
    labels, gaps = g.visibility(boxes, viewport, near)
    want_labels, want_gaps = ref.visibility(boxes.tolist(), viewport, near)
    assert labels.tolist() == want_labels and gaps.tolist() == want_gaps
    only = g.visibility_labels(boxes, viewport, near)
    assert only.dtype == np.int8 and only.tolist() == want_labels


@given(st.data(), box_arrays(max_size=40), viewports)
def test_occluders_match_oracle(data, boxes, viewport):
    order, opacity, hidden = paint_inputs(data, len(boxes))
    got = g.occluders(boxes, order, opacity, hidden, viewport)
    assert got.dtype == np.int64
    assert got.tolist() == ref.occluders(boxes.tolist(), order.tolist(), opacity.tolist(), hidden.tolist(), viewport)


@settings(max_examples=60)
@given(st.data(), box_arrays(max_size=25), viewports, st.sampled_from([0.5, 0.9, 1.0]))
def test_occluders_union_match_oracle(data, boxes, viewport, min_opacity):
    order, opacity, hidden = paint_inputs(data, len(boxes))
    occ, frac = g.occluders(boxes, order, opacity, hidden, viewport, min_opacity, mode="union")
    want_occ, want_frac = ref.occluders_union(
        boxes.tolist(), order.tolist(), opacity.tolist(), hidden.tolist(), viewport, min_opacity
    )
    assert occ.tolist() == want_occ
    for got_f, want_f in zip(frac.tolist(), want_frac):
        if want_f == 1:
            assert got_f == 1.0  # full coverage is decided exactly
        else:
            assert got_f < 1.0
            assert got_f == pytest.approx(float(want_f), rel=1e-12, abs=1e-12)


@settings(max_examples=60)
@given(st.data(), box_arrays(max_size=25), viewports, st.sampled_from([0.5, 0.9, 1.0]))
def test_occluders_union_for_some_targets_are_the_whole_answers(data, boxes, viewport, min_opacity):
    """Asked for some boxes only, the union mode gives them the answers of the whole call (every
    box still a cover) and the others -1 and 0."""
    order, opacity, hidden = paint_inputs(data, len(boxes))
    targets = np.array(data.draw(st.lists(st.booleans(), min_size=len(boxes), max_size=len(boxes))), dtype=bool)
    occ, frac = g.occluders(boxes, order, opacity, hidden, viewport, min_opacity, mode="union")
    t_occ, t_frac = g.occluders(boxes, order, opacity, hidden, viewport, min_opacity, mode="union", targets=targets)
    assert t_occ[targets].tolist() == occ[targets].tolist()
    assert t_frac[targets].tolist() == frac[targets].tolist()
    assert (t_occ[~targets] == -1).all() and (t_frac[~targets] == 0.0).all()


def test_occluders_union_two_halves_cover_exactly():
    # two boxes that tile the target: covered, although no single box contains it
    boxes = np.array([[0.1, 0.1, 0.7, 0.3], [0.0, 0.0, 0.4, 1.0], [0.4, 0.0, 1.0, 1.0]])
    occ, frac = g.occluders(boxes, None, None, None, [0, 0, 10, 10], mode="union")
    assert occ.tolist() == [1, -1, -1] and frac.tolist() == [1.0, 0.0, 0.0]
    assert g.occluders(boxes, None, None, None, [0, 0, 10, 10]).tolist() == [-1, -1, -1]
    # a gap of one ulp is not covered
    boxes[2, 0] = np.nextafter(0.4, 1.0)
    occ, frac = g.occluders(boxes, None, None, None, [0, 0, 10, 10], mode="union")
    assert occ[0] == -1 and frac[0] < 1.0


@given(box_arrays())
def test_overlap_pairs_match_oracle(boxes):
    pairs, areas = g.overlap_pairs(boxes)
    want_pairs, want_areas = ref.overlap_pairs(boxes.tolist())
    assert as_pairs(pairs) == want_pairs
    assert areas.tolist() == want_areas


@given(box_arrays(floats=True, max_size=40))
def test_overlap_pairs_match_oracle_floats(boxes):
    pairs, areas = g.overlap_pairs(boxes)
    want_pairs, want_areas = ref.overlap_pairs(boxes.tolist())
    assert as_pairs(pairs) == want_pairs and areas.tolist() == want_areas


@given(box_arrays())
def test_containment_pairs_match_oracle(boxes):
    assert as_pairs(g.containment_pairs(boxes)) == ref.containment_pairs(boxes.tolist())


@given(box_arrays(), st.sampled_from([0.0, 0.5, 1.0, 3.0, 20.0]), st.integers(0, 5))
def test_proximity_pairs_match_oracle(boxes, max_gap, k):
    pairs, gaps = g.proximity_pairs(boxes, max_gap, k)
    want_pairs, want_gaps = ref.proximity_pairs(boxes.tolist(), max_gap, k)
    assert as_pairs(pairs) == want_pairs
    assert gaps.tolist() == want_gaps


@given(box_arrays(floats=True, max_size=40), st.floats(0, 1e5), st.integers(1, 4))
def test_proximity_pairs_match_oracle_floats(boxes, max_gap, k):
    pairs, gaps = g.proximity_pairs(boxes, max_gap, k)
    want_pairs, want_gaps = ref.proximity_pairs(boxes.tolist(), max_gap, k)
    assert as_pairs(pairs) == want_pairs and gaps.tolist() == want_gaps


@given(box_arrays(), st.sampled_from([0.0, 0.5, 1.0, 4.0]))
def test_alignment_pairs_match_oracle(boxes, tol):
    pairs, kinds = g.alignment_pairs(boxes, tol)
    want_pairs, want_kinds = ref.alignment_pairs(boxes.tolist(), tol)
    assert as_pairs(pairs) == want_pairs
    assert kinds.dtype == np.int8 and kinds.tolist() == want_kinds


@settings(deadline=None)
@given(box_arrays() | box_arrays(floats=True, max_size=40),
       st.sampled_from([0.0, 1e-9, 0.5, 1.0, 4.0]), st.integers(0, 5))
def test_alignment_pairs_of_one_kind_are_that_kinds_rows_of_the_oracle(boxes, tol, kind):
    pairs, kinds = g.alignment_pairs(boxes, tol, kind=kind)
    want_pairs, want_kinds = ref.alignment_pairs(boxes.tolist(), tol)
    assert as_pairs(pairs) == [p for p, k in zip(want_pairs, want_kinds) if k == kind]
    assert kinds.dtype == np.int8 and set(kinds.tolist()) <= {kind}


@pytest.mark.parametrize("kind", [-1, 6, 2.0, True])
def test_alignment_pairs_refuse_a_kind_outside_the_six(kind):
    with pytest.raises(InvalidInputError, match="kind must be a code into ALIGN_KINDS"):
        g.alignment_pairs([[0, 0, 1, 1]], 1.0, kind=kind)


@pytest.mark.parametrize("kind", [-2, 6])
def test_the_core_refuses_a_kind_outside_the_six(kind):
    with pytest.raises(ValueError, match=f"alignment kind must be -1 \\(all\\) or 0..5, got {kind}"):
        _core.alignment_pairs(np.array([[0.0, 0, 1, 1]]), 1.0, kind=kind)


@given(box_arrays(), st.sampled_from([0.0, 0.5, 1.0, 4.0]), st.one_of(st.none(), st.integers(1, 3)), st.data())
def test_alignment_masks_match_oracle(boxes, tol, groups, data):
    group = None
    if groups is not None:
        group = data.draw(st.lists(st.integers(0, groups - 1), min_size=len(boxes), max_size=len(boxes)))
    pairs, axes, masks = g.alignment_masks(boxes, tol, group)
    want_pairs, want_axes, want_masks = ref.alignment_masks(boxes.tolist(), tol, group)
    assert as_pairs(pairs) == want_pairs
    assert axes.dtype == np.int8 and axes.tolist() == want_axes
    assert masks.dtype == np.int8 and masks.tolist() == want_masks


@settings(deadline=None)
@given(box_arrays(floats=True, max_size=40), st.sampled_from([0.0, 1e-9, 0.5, 4.0]))
def test_alignment_pairs_match_oracle_floats(boxes, tol):
    pairs, kinds = g.alignment_pairs(boxes, tol)
    want_pairs, want_kinds = ref.alignment_pairs(boxes.tolist(), tol)
    assert as_pairs(pairs) == want_pairs and kinds.tolist() == want_kinds


# The line cut sorts a kind's keys as steps of a power-of-two grid (8-byte
# words) when every key lies on one with fewer than 2^32 steps from the
# smallest to the largest, else as order bits: keys on both sides of that
# cut-over (2^32 - 1 and 2^32 + 1 steps, an odd key off the grid of 2, zeros of
# both signs, subnormals, spans past 2^900 or overflowing), at sizes on both
# sides of the radix sort's 256 keys.
@pytest.mark.parametrize(
    "xs",
    [
        [0.0, 2.0**32 - 1, 7.0],
        [0.0, 2.0**32, 6.0],
        [0.0, 2.0**32 + 1, 6.0],
        [-0.0, 0.0, 0.5, -0.25, 3.0],
        [5e-324, 0.0, 1e-310, -1e-310, 2.5e-323],
        [1e300, -1e300, 0.0, 1e299],
        [1.7e308, -1.7e308, 1.0],
        [0.1, 0.2, 0.30000000000000004, 0.3],
    ],
)
@pytest.mark.parametrize("n", [9, 300])
def test_alignment_pairs_at_the_grid_cut_over(xs, n):
    x = np.array([xs[i % len(xs)] for i in range(n)])
    w = np.array([0.0, 1.0, 2.0**-20, 0.5][: 4])[np.arange(n) % 4]
    y = np.arange(n, dtype=np.float64) * 0.75
    boxes = np.ascontiguousarray(np.stack([x, y, x + w, y + (np.arange(n) % 3)], axis=1))
    boxes = boxes[np.all(np.isfinite(boxes), axis=1)]
    for tol in (0.0, 1.0):
        pairs, kinds = g.alignment_pairs(boxes, tol)
        want_pairs, want_kinds = ref.alignment_pairs(boxes.tolist(), tol)
        assert as_pairs(pairs) == want_pairs and kinds.tolist() == want_kinds
        pairs, axes, masks = g.alignment_masks(boxes, tol)
        want = ref.alignment_masks(boxes.tolist(), tol)
        assert (as_pairs(pairs), axes.tolist(), masks.tolist()) == want


def test_alignment_masks_reject_a_bad_group():
    with pytest.raises(InvalidInputError, match="group must be one integer per box"):
        g.alignment_masks(GOOD, 1.0, [0])
    with pytest.raises(InvalidInputError, match="group must be one integer per box"):
        g.alignment_masks(GOOD, 1.0, np.zeros(len(GOOD)))


@given(box_arrays(), st.sampled_from([0.0, 1.0, 5.0, 50.0]))
def test_reading_order_matches_oracle(boxes, row_tol):
    rank = g.reading_order(boxes, row_tol)
    assert rank.tolist() == ref.reading_order(boxes.tolist(), row_tol)
    assert sorted(rank.tolist()) == list(range(len(boxes)))


@given(st.lists(st.tuples(_extreme, _extreme, _extreme, _extreme), max_size=30), st.sampled_from([0.0, 1.0, 1e300]))
def test_reading_order_matches_oracle_at_extremes(rows, row_tol):
    # the kernel sorts integer keys of the centres and left edges: signed zeros tie as the doubles
    # do, subnormals and centres that overflow to infinity keep their order
    boxes = np.array([(min(a, c), min(b, d), max(a, c), max(b, d)) for a, b, c, d in rows], dtype=np.float64).reshape(-1, 4)
    assert g.reading_order(boxes, row_tol).tolist() == ref.reading_order(boxes.tolist(), row_tol)


def test_reading_order_ties_signed_zeros_as_equal():
    # centres -0.0 and +0.0 are one row and the left edges -0.0 and +0.0 tie, so the index decides
    boxes = np.array([[0.0, 0.0, 1.0, 0.0], [-0.0, -0.0, 1.0, -0.0], [-1.0, -1.0, 2.0, 1.0]])
    assert g.reading_order(boxes, 0.0).tolist() == ref.reading_order(boxes.tolist(), 0.0) == [1, 2, 0]


@given(box_arrays(max_size=80), lattice_box(span=14, max_size=12), st.sampled_from([2, 3, 16, 64]))
def test_box_index_matches_oracle(boxes, q, node_size):
    ix = g.BoxIndex(boxes, node_size=node_size)
    assert len(ix) == len(boxes)
    assert ix.query(q).tolist() == ref.index_query(boxes.tolist(), q)
    assert ix.query_containing(q).tolist() == ref.index_query_containing(boxes.tolist(), q)
    assert as_pairs(ix.query_pairs()) == ref.index_query_pairs(boxes.tolist())


@given(box_arrays(max_size=80), st.lists(lattice_box(span=14, max_size=12), max_size=6), st.sampled_from([2, 16]))
def test_box_index_query_many_is_each_query_in_turn(boxes, qs, node_size):
    ix = g.BoxIndex(boxes, node_size=node_size)
    got = ix.query_many(np.array(qs, dtype=np.float64).reshape(-1, 4))
    want = [(i, t) for t, q in enumerate(qs) for i in ref.index_query(boxes.tolist(), q)]
    assert got.dtype == np.int64 and got.shape == (2, len(want))
    assert list(zip(*got.tolist())) == want


# Sizes past the internal cut-overs: 16 items per node, so n > 256 gives a
# three-level tree; hypothesis draws the seed and the size.
@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(17, 420))
def test_kernels_match_oracle_on_deep_trees(seed, n):
    boxes = seeded_boxes(seed, n)
    lst = boxes.tolist()
    vp = (40.0, 40.0, 140.0, 120.0)
    assert g.visibility(boxes, vp)[0].tolist() == ref.visibility(lst, vp)[0]
    order = np.random.default_rng(seed).permutation(n).astype(np.int64)
    ones, shown = np.ones(n), np.zeros(n, dtype=bool)
    assert g.occluders(boxes, order, ones, shown, vp).tolist() == ref.occluders(
        lst, order.tolist(), [1.0] * n, [False] * n, vp
    )
    assert as_pairs(g.overlap_pairs(boxes)[0]) == ref.overlap_pairs(lst)[0]
    assert as_pairs(g.containment_pairs(boxes)) == ref.containment_pairs(lst)
    assert as_pairs(g.proximity_pairs(boxes, 6.0, 3)[0]) == ref.proximity_pairs(lst, 6.0, 3)[0]
    assert as_pairs(g.alignment_pairs(boxes, 1.0)[0]) == ref.alignment_pairs(lst, 1.0)[0]
    assert g.reading_order(boxes, 8.0).tolist() == ref.reading_order(lst, 8.0)
    assert as_pairs(g.BoxIndex(boxes).query_pairs()) == ref.index_query_pairs(lst)


# containment_pairs on one thread takes a plain join below 2,048 boxes and one
# that visits fewer pairs from 2,048 (the core's kContainmentPlainBelow): both
# against the oracle, on pages with backgrounds and wide frames (the bitmap rows).
@pytest.mark.parametrize("n", [2047, 2048])
@settings(max_examples=1, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_containment_pairs_either_side_of_the_plain_join_match_oracle(n, seed):
    boxes = seeded_boxes(seed, n)
    boxes[[0, n // 2, n - 1]] = [[-10, -10, 250, 250], [0, 0, 120, 240], [60, 20, 200, 130]]
    want = ref.containment_pairs(boxes.tolist())
    assert as_pairs(g.containment_pairs(boxes)) == want
    assert as_pairs(g.containment_pairs(g.BoxIndex(boxes))) == want


# ---- invariants ---------------------------------------------------------------


def _permuted_pairs(pairs: np.ndarray, inv: np.ndarray, symmetric: bool) -> list:
    mapped = [(int(inv[a]), int(inv[b])) for a, b in pairs.T.tolist()]
    if symmetric:
        mapped = [(min(a, b), max(a, b)) for a, b in mapped]
    return sorted(mapped)


@given(box_arrays(min_size=1), st.randoms(use_true_random=False))
def test_permutation_permutes_the_output(boxes, rnd):
    perm = list(range(len(boxes)))
    rnd.shuffle(perm)
    perm = np.array(perm)
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))  # row i of the original is row inv[i] of the permuted
    shuffled = np.ascontiguousarray(boxes[perm])
    assert as_pairs(g.overlap_pairs(shuffled)[0]) == _permuted_pairs(g.overlap_pairs(boxes)[0], inv, True)
    assert as_pairs(g.containment_pairs(shuffled)) == _permuted_pairs(g.containment_pairs(boxes), inv, False)
    vp = (0.0, 0.0, 6.0, 6.0)
    assert g.visibility(shuffled, vp)[0].tolist() == g.visibility(boxes, vp)[0][perm].tolist()
    # occluders with paint order carried along with the rows
    order = np.arange(len(boxes), dtype=np.int64)
    occ = g.occluders(boxes, order, None, None, vp)
    occ_shuffled = g.occluders(shuffled, np.ascontiguousarray(order[perm]), None, None, vp)
    assert occ_shuffled.tolist() == [int(inv[o]) if o >= 0 else -1 for o in occ[perm]]


@given(box_arrays(), st.integers(-50, 50), st.integers(-50, 50), st.sampled_from([0.5, 1.0, 2.0, 4.0]))
def test_translation_and_scale_leave_relations_unchanged(boxes, dx, dy, s):
    moved = np.ascontiguousarray(boxes * s + np.array([dx, dy, dx, dy], dtype=np.float64))
    assert g.overlap_pairs(moved)[0].tolist() == g.overlap_pairs(boxes)[0].tolist()
    assert g.containment_pairs(moved).tolist() == g.containment_pairs(boxes).tolist()
    assert g.alignment_pairs(moved, 0.0)[0].tolist() == g.alignment_pairs(boxes, 0.0)[0].tolist()
    assert g.reading_order(moved, 0.0).tolist() == g.reading_order(boxes, 0.0).tolist()
    vp = np.array([0.0, 0.0, 6.0, 6.0])
    moved_vp = vp * s + np.array([dx, dy, dx, dy])
    assert g.visibility(moved, moved_vp, 0.0)[0].tolist() == g.visibility(boxes, vp, 0.0)[0].tolist()


@given(box_arrays())
def test_symmetric_relations_are_symmetric(boxes):
    pairs, areas = g.overlap_pairs(boxes)
    rev, rev_areas = g.overlap_pairs(np.ascontiguousarray(boxes[::-1]))
    n = len(boxes)
    assert sorted((n - 1 - b, n - 1 - a) for a, b in rev.T.tolist()) == as_pairs(pairs)
    assert sorted(areas.tolist()) == sorted(rev_areas.tolist())
    # containment of identical boxes goes both ways
    cont = set(as_pairs(g.containment_pairs(boxes)))
    for a, b in cont:
        if boxes[a].tolist() == boxes[b].tolist():
            assert (b, a) in cont


def test_touching_nested_duplicate_and_zero_area_cases():
    boxes = np.array(
        [
            [0, 0, 10, 10],  # 0
            [10, 0, 20, 10],  # 1 touches 0 on an edge
            [0, 0, 10, 10],  # 2 duplicates 0
            [2, 2, 5, 5],  # 3 nested in 0 and 2
            [5, 0, 5, 10],  # 4 a vertical line inside 0
        ],
        dtype=np.float64,
    )
    pairs, areas = g.overlap_pairs(boxes)
    assert as_pairs(pairs) == [(0, 2), (0, 3), (2, 3)]  # touching and zero-area never overlap
    assert areas.tolist() == [100.0, 9.0, 9.0]
    assert (0, 2) in as_pairs(g.containment_pairs(boxes)) and (2, 0) in as_pairs(g.containment_pairs(boxes))
    assert (0, 4) in as_pairs(g.containment_pairs(boxes))
    near, gaps = g.proximity_pairs(boxes, 0.0, 5)
    assert (0, 1) in as_pairs(near) and (0, 4) in as_pairs(near)  # touching and lines: gap 0, no overlap
    assert g.BoxIndex(boxes).query([10, 10, 12, 12]).tolist() == [0, 1, 2]  # corner touch counts


def test_empty_input_everywhere():
    empty = np.empty((0, 4))
    assert g.visibility(empty, [0, 0, 1, 1])[0].shape == (0,)
    assert g.occluders(empty, None, None, None, [0, 0, 1, 1]).shape == (0,)
    assert g.overlap_pairs(empty)[0].shape == (2, 0)
    assert g.containment_pairs([]).shape == (2, 0)
    assert g.proximity_pairs(empty, 1.0, 2)[0].shape == (2, 0)
    assert g.alignment_pairs(empty, 1.0)[0].shape == (2, 0)
    assert g.reading_order(empty, 1.0).shape == (0,)
    ix = g.BoxIndex(empty)
    assert len(ix) == 0 and ix.bounds is None and ix.query([0, 0, 1, 1]).shape == (0,)


def test_gil_is_released_and_threads_agree():
    from concurrent.futures import ThreadPoolExecutor

    boxes = seeded_boxes(7, 3000)
    want = g.overlap_pairs(boxes)[0]
    ix = g.BoxIndex(boxes)
    want_q = ix.query([50, 50, 120, 90])
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: g.overlap_pairs(boxes)[0], range(4)))
        queries = list(pool.map(lambda _: ix.query([50, 50, 120, 90]), range(8)))
    assert all(np.array_equal(r, want) for r in results)
    assert all(np.array_equal(q, want_q) for q in queries)


# ---- bad input ----------------------------------------------------------------

GOOD = np.array([[0, 0, 1, 1], [1, 1, 2, 2]], dtype=np.float64)


@pytest.mark.parametrize(
    ("boxes", "message"),
    [
        (GOOD.astype(np.int64), "boxes must have dtype float64, got int64"),
        (GOOD.astype(np.float32), "boxes must have dtype float64, got float32"),
        (np.zeros((2, 3)), r"boxes must have shape \(n, 4\).*got shape \(2, 3\)"),
        (np.zeros(4), r"got shape \(4,\)"),
        (np.asfortranarray(np.zeros((3, 4))), "boxes must be C-contiguous"),
        (np.array([[0, 0, 1, 1], [0, 0, 1, 1], [0, np.nan, 1, 1]]), "boxes row 2 is not finite"),
        (np.array([[0, 0, 1, 1], [0, 0, np.inf, 1]]), "boxes row 1 is not finite"),
        (np.array([[0, 0, 1, 1], [5, 0, 1, 1]], dtype=float), r"boxes row 1 has x1 < x0 or y1 < y0"),
        (np.array([[0, 3, 1, 1]], dtype=float), r"boxes row 0 has x1 < x0 or y1 < y0"),
        ([[0, 0, "a", 1]], "boxes must be a sequence of"),
    ],
)
def test_bad_boxes_are_rejected_by_every_kernel(boxes, message):
    calls = [
        lambda b: g.visibility(b, [0, 0, 1, 1]),
        lambda b: g.visibility_labels(b, [0, 0, 1, 1]),
        lambda b: g.occluders(b, None, None, None, [0, 0, 1, 1]),
        g.overlap_pairs,
        g.containment_pairs,
        lambda b: g.proximity_pairs(b, 1.0, 1),
        lambda b: g.alignment_pairs(b, 1.0),
        lambda b: g.reading_order(b, 1.0),
        g.BoxIndex,
    ]
    for call in calls:
        with pytest.raises(InvalidInputError, match=message) as info:
            call(boxes)
        assert isinstance(info.value, ValueError) and isinstance(info.value, SpatialObsError)


@pytest.mark.parametrize("row", [0, 3])
def test_oracle_and_kernel_reject_the_same_row(row):
    boxes = seeded_boxes(1, 5)
    boxes[row, 2] = boxes[row, 0] - 1
    with pytest.raises(InvalidInputError, match=f"row {row} has x1 < x0") as kernel:
        g.overlap_pairs(boxes)
    with pytest.raises(InvalidInputError, match=f"row {row} has x1 < x0") as oracle:
        ref.overlap_pairs(boxes.tolist())
    assert type(kernel.value) is type(oracle.value)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: g.visibility(GOOD, [0, 0, 1]), "viewport must be four numbers"),
        (lambda: g.visibility(GOOD, [2, 0, 1, 1]), r"viewport has x1 < x0"),
        (lambda: g.visibility(GOOD, [0, 0, float("nan"), 1]), "viewport is not finite"),
        (lambda: g.visibility(GOOD, [0, 0, 1, 1], -1), "near_factor must be a finite number >= 0"),
        (lambda: g.occluders(GOOD, [0], None, None, [0, 0, 1, 1]), r"order must be a 1-D array with one value per box \(2\)"),
        (lambda: g.occluders(GOOD, np.array([0, 1], dtype=np.int32), None, None, [0, 0, 1, 1]), "order must have dtype int64, got int32"),
        (lambda: g.occluders(GOOD, None, [0.5, 1.5], None, [0, 0, 1, 1]), r"opacity row 1 must lie in \[0, 1\]"),
        (lambda: g.occluders(GOOD, None, [0.5, float("nan")], None, [0, 0, 1, 1]), r"opacity row 1 must lie in \[0, 1\]"),
        (lambda: g.occluders(GOOD, None, None, np.array([0, 1]), [0, 0, 1, 1]), "hidden must have dtype bool, got int64"),
        (lambda: g.occluders(GOOD, None, None, None, [0, 0, 1, 1], 2.0), r"min_opacity must lie in \[0, 1\]"),
        (lambda: g.occluders(GOOD, None, None, None, [0, 0, 1, 1], mode="pixels"), "mode must be 'bounds' or 'union'"),
        (lambda: g.occluders(GOOD, None, None, None, [0, 0, 1, 1], targets=[True]), "targets is for mode 'union' only"),
        (lambda: g.occluders(GOOD, None, None, None, [0, 0, 1, 1], mode="union", targets=[True]),
         r"targets must be a 1-D array with one value per box \(2\)"),
        (lambda: g.occluders(GOOD, None, None, None, [0, 0, 1, 1], mode="union", targets=np.array([1, 0])),
         "targets must have dtype bool, got int64"),
        (lambda: g.proximity_pairs(GOOD, float("nan"), 1), "max_gap must be a finite number >= 0"),
        (lambda: g.proximity_pairs(GOOD, -1.0, 1), "max_gap must be a finite number >= 0"),
        (lambda: g.proximity_pairs(GOOD, 1.0, -1), "k_nearest must be >= 0"),
        (lambda: g.alignment_pairs(GOOD, float("inf")), "tol must be a finite number >= 0"),
        (lambda: g.reading_order(GOOD, -2.0), "row_tol must be a finite number >= 0"),
        (lambda: g.BoxIndex(GOOD, node_size=1), "node_size must be between 2 and 64"),
        (lambda: g.BoxIndex(GOOD).query([0, 0, 1]), "box must be four numbers"),
        (lambda: g.BoxIndex(GOOD).query([1, 0, 0, 1]), r"box has x1 < x0"),
        (lambda: g.BoxIndex(GOOD).query_many(np.array([[0.0, 0, 1, 1], [1, 0, 0, 1]])), r"queries.*row 1"),
        (lambda: g.BoxIndex(GOOD).query_many(np.array([[0.0, 0, np.nan, 1]])), r"queries.*row 0"),
        (lambda: g.BoxIndex(GOOD).query_many(np.zeros((2, 3))), r"queries must have shape \(n, 4\)"),
    ],
)
def test_bad_arguments_name_the_problem(call, message):
    with pytest.raises(InvalidInputError, match=message):
        call()


def test_errors_share_one_base():
    import spatialobs

    assert issubclass(spatialobs.InvalidInputError, spatialobs.SpatialObsError)
    assert issubclass(spatialobs.OutOfRangeError, IndexError)


def test_union_oracle_fraction_is_exact():
    # a quarter covered: the compiled fraction equals the exact one
    boxes = [[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 1.0, 1.0]]
    occ, frac = g.occluders(boxes, None, None, None, [0, 0, 10, 10], mode="union")
    assert frac[0] == 0.25 and occ[0] == -1
    assert ref.occluders_union(boxes, [0, 1], [1.0, 1.0], [False, False], (0, 0, 10, 10))[1][0] == Fraction(1, 4)


def test_visibility_boundaries_are_closed():
    vp = [0.0, 0.0, 100.0, 50.0]  # near = 0.75 * 100 = 75
    boxes = np.array(
        [
            [0, 0, 100, 50],  # the viewport itself: visible
            [100, 10, 120, 20],  # touches the right edge: partial, gap 0
            [175, 0, 180, 10],  # gap exactly 75: near
            [175.5, 0, 180, 10],  # gap 75.5: far
            [-60, -80, -60, -80],  # a point; gap sqrt(60^2 + 80^2) = 100: far
            [-45, -60, -45, -60],  # gap exactly 75 along the diagonal: near
        ],
        dtype=np.float64,
    )
    labels, gaps = g.visibility(boxes, vp)
    assert [g.LABEL_NAMES[c] for c in labels] == [
        "visible",
        "partial",
        "offscreen_near",
        "offscreen_far",
        "offscreen_far",
        "offscreen_near",
    ]
    assert gaps.tolist() == [0.0, 0.0, 75.0, 75.5, 100.0, 75.0]


# ---- one index, many kernels: a prebuilt BoxIndex gives the same pairs as the boxes
@settings(deadline=None)
@given(box_arrays(), st.sampled_from([0.0, 1.0, 3.0, 20.0]), st.integers(0, 5), st.sampled_from([2, 3, 16]))
def test_index_kernels_match_box_kernels_and_oracle(boxes, max_gap, k, node_size):
    ix = g.BoxIndex(boxes, node_size)
    for _ in range(2):  # the index is reused, not consumed
        pairs, areas = g.overlap_pairs(ix)
        want_pairs, want_areas = ref.overlap_pairs(boxes.tolist())
        assert as_pairs(pairs) == want_pairs and areas.tolist() == want_areas
        assert as_pairs(g.containment_pairs(ix)) == ref.containment_pairs(boxes.tolist())
        pairs, gaps = g.proximity_pairs(ix, max_gap, k)
        want_pairs, want_gaps = ref.proximity_pairs(boxes.tolist(), max_gap, k)
        assert as_pairs(pairs) == want_pairs and gaps.tolist() == want_gaps


@settings(deadline=None)
@given(box_arrays(), box_arrays(max_size=12))
def test_overlap_pairs_between_match_oracle(boxes, queries):
    ix = g.BoxIndex(boxes)
    pairs, areas = g.overlap_pairs_between(ix, queries)
    want_pairs, want_areas = ref.overlap_pairs_between(boxes.tolist(), queries.tolist())
    assert as_pairs(pairs) == want_pairs and areas.tolist() == want_areas
    # the same pairs as one join over both sets
    both, both_areas = g.overlap_pairs(np.ascontiguousarray(np.concatenate([boxes, queries]).reshape(-1, 4)))
    n = len(boxes)
    m = (both[0] < n) & (both[1] >= n)
    assert as_pairs(pairs) == list(zip(both[0][m].tolist(), (both[1][m] - n).tolist()))


@settings(deadline=None)
@given(box_arrays(), box_arrays(max_size=12), st.data(), st.booleans())
def test_overlap_any_ranked_match_oracle(boxes, queries, data, above):
    n, m = len(boxes), len(queries)
    ranks = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), np.int64)
    qranks = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=m, max_size=m)), np.int64)
    ix = g.BoxIndex(boxes, node_size=data.draw(st.sampled_from([2, 4, 16])))
    got = g.overlap_any_ranked(ix, ranks, queries, qranks, above=above)
    assert got.dtype == np.bool_ and got.shape == (m,)
    assert got.tolist() == ref.overlap_any_ranked(boxes.tolist(), ranks.tolist(), queries.tolist(),
                                                  qranks.tolist(), above)
    # the pairs of overlap_pairs_between reduced to one flag per query
    pairs, _ = g.overlap_pairs_between(ix, queries)
    up = ranks[pairs[0]] > qranks[pairs[1]] if above else ranks[pairs[0]] < qranks[pairs[1]]
    want = np.zeros(m, bool)
    want[pairs[1][up]] = True
    assert got.tolist() == want.tolist()


def test_overlap_any_ranked_piles_and_wide_boxes():
    # a pile of identical boxes (every query meets all of them) and wide boxes kept out of the tree
    rng = np.random.default_rng(3)
    pile = np.tile([[10.0, 10.0, 20.0, 20.0]], (300, 1))
    wide = np.array([[-1e6, -1e6, 1e6, 1e6]] * 3)
    scattered = rng.uniform(0, 1000, (500, 2))
    boxes = np.concatenate([pile, wide, np.column_stack([scattered, scattered + 5])])
    ranks = rng.permutation(len(boxes)).astype(np.int64)
    queries = np.concatenate([pile[:50], boxes[-80:], [[5000.0, 5000.0, 5001.0, 5001.0]]])
    qranks = rng.integers(-5, len(boxes) + 5, len(queries)).astype(np.int64)
    ix = g.BoxIndex(boxes)
    for above in (True, False):
        got = g.overlap_any_ranked(ix, ranks, queries, qranks, above=above)
        assert got.tolist() == ref.overlap_any_ranked(boxes.tolist(), ranks.tolist(), queries.tolist(),
                                                      qranks.tolist(), above)
    # ranks outside every item's range: no search, nothing above (below)
    assert not g.overlap_any_ranked(ix, ranks, queries, np.full(len(queries), len(boxes)), above=True).any()
    assert not g.overlap_any_ranked(ix, ranks, queries, np.full(len(queries), -1), above=False).any()
    assert g.overlap_any_ranked(g.BoxIndex(np.zeros((0, 4))), np.zeros(0, np.int64), queries,
                                qranks).tolist() == [False] * len(queries)
    assert g.overlap_any_ranked(ix, ranks, np.zeros((0, 4)), np.zeros(0, np.int64)).shape == (0,)


def test_overlap_any_ranked_bad_input():
    ix = g.BoxIndex([[0, 0, 1, 1], [2, 2, 3, 3]])
    with pytest.raises(InvalidInputError, match="index must be a BoxIndex, got list"):
        g.overlap_any_ranked([[0, 0, 1, 1]], [0], [[0, 0, 1, 1]], [0])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"ranks must be a 1-D array of 2 values, got shape \(1,\)"):
        g.overlap_any_ranked(ix, [0], [[0, 0, 1, 1]], [0])
    with pytest.raises(InvalidInputError, match=r"query_ranks must be a 1-D array of 1 values, got shape \(1, 1\)"):
        g.overlap_any_ranked(ix, [0, 1], [[0, 0, 1, 1]], [[0]])
    with pytest.raises(InvalidInputError, match="ranks must hold integers, got dtype float64"):
        g.overlap_any_ranked(ix, [0.5, 1.0], [[0, 0, 1, 1]], [0])
    with pytest.raises(InvalidInputError, match="query_ranks must hold integers, got dtype <U1"):
        g.overlap_any_ranked(ix, [0, 1], [[0, 0, 1, 1]], ["a"])
    with pytest.raises(InvalidInputError, match="queries row 0"):
        g.overlap_any_ranked(ix, [0, 1], [[0, 0, -1, 1]], [0])


def test_index_kernels_bad_input():
    ix = g.BoxIndex([[0, 0, 1, 1]])
    with pytest.raises(InvalidInputError, match="queries row 0"):
        g.overlap_pairs_between(ix, [[0, 0, -1, 1]])
    with pytest.raises(InvalidInputError, match="max_gap"):
        g.proximity_pairs(ix, -1.0, 4)
    with pytest.raises(InvalidInputError, match="k_nearest"):
        g.proximity_pairs(ix, 1.0, -1)
    with pytest.raises(InvalidInputError, match="BoxIndex"):
        g.overlap_pairs_between([[0, 0, 1, 1]], [[0, 0, 1, 1]])  # type: ignore[arg-type]


# ---- threads= and kept scratch: identical results, bit for bit ------------------


def _pair_kernels(boxes, src, threads, max_gap, k, tol):
    return (
        g.overlap_pairs(src, threads=threads),
        g.containment_pairs(src, threads=threads),
        g.proximity_pairs(src, max_gap, k, threads=threads),
        g.alignment_pairs(boxes, tol, threads=threads),
    )


def _same_bits(a, b) -> bool:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(a, b))


@settings(deadline=None)
@given(
    box_arrays(),
    st.sampled_from([0, 2, 3, 7]),
    st.sampled_from([0.0, 1.0, 20.0]),
    st.integers(0, 5),
    st.sampled_from([0.0, 1.0]),
    st.sampled_from([None, 2, 3, 16]),
)
def test_threaded_kernels_are_bit_identical_to_serial_and_the_oracle(boxes, threads, max_gap, k, tol, node_size):
    src = boxes if node_size is None else g.BoxIndex(boxes, node_size)
    serial = _pair_kernels(boxes, src, 1, max_gap, k, tol)
    threaded = _pair_kernels(boxes, src, threads, max_gap, k, tol)
    assert all(_same_bits(s, t) for s, t in zip(serial, threaded))
    lst = boxes.tolist()
    assert as_pairs(threaded[0][0]) == ref.overlap_pairs(lst)[0] and threaded[0][1].tolist() == ref.overlap_pairs(lst)[1]
    assert as_pairs(threaded[1]) == ref.containment_pairs(lst)
    want_pairs, want_gaps = ref.proximity_pairs(lst, max_gap, k)
    assert as_pairs(threaded[2][0]) == want_pairs and threaded[2][1].tolist() == want_gaps
    want_pairs, want_kinds = ref.alignment_pairs(lst, tol)
    assert as_pairs(threaded[3][0]) == want_pairs and threaded[3][1].tolist() == want_kinds


# Trees deep enough that the threaded join splits its upper levels into many
# node pairs (node_size 2 over hundreds of boxes: eight levels).
@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(200, 1500), st.sampled_from([2, 4, 16]), st.sampled_from([2, 3, 0]))
def test_threaded_join_on_deep_trees(seed, n, node_size, threads):
    """Slow by design: trees of up to 1,500 boxes with nodes of two, every pair kernel run serial and threaded
    (32 s on the shared 2-core machine under load).
    """
    boxes = seeded_boxes(seed, n)
    ix = g.BoxIndex(boxes, node_size)
    serial = _pair_kernels(boxes, ix, 1, 6.0, 3, 1.0)
    threaded = _pair_kernels(boxes, ix, threads, 6.0, 3, 1.0)
    assert all(_same_bits(s, t) for s, t in zip(serial, threaded))
    lst = boxes.tolist()
    assert as_pairs(threaded[0][0]) == ref.overlap_pairs(lst)[0]
    assert as_pairs(threaded[1]) == ref.containment_pairs(lst)
    assert as_pairs(threaded[2][0]) == ref.proximity_pairs(lst, 6.0, 3)[0]


# Pages with wide boxes (backgrounds, overlays): a box over at least 1/64 of
# the page and, at the page's density, about 256 boxes stays out of the
# index's tree (at most BoxIndex's 64 widest); queries test it alone and the
# join walks the tree with it. A box over the whole page always qualifies at
# these sizes; up to 80 big ones also fill the cap. Zero-area and touching
# boxes stay in the mix.
@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(300, 650), st.integers(0, 80), st.sampled_from([2, 16]))
def test_kernels_match_oracle_with_wide_boxes(seed, n, n_big, node_size):
    rng = np.random.default_rng(seed)
    x0 = rng.integers(0, 90, n_big)
    y0 = rng.integers(0, 90, n_big)
    w = rng.integers(0, 150, n_big) + 90
    h = rng.integers(0, 150, n_big) + 90 * (rng.random(n_big) < 0.9)
    big = np.stack([x0, y0, x0 + w, y0 + h], axis=1).astype(np.float64)
    page = np.array([[0.0, 0.0, 240.0, 240.0]])
    boxes = np.concatenate([seeded_boxes(seed, n)[: n // 2], page, big, seeded_boxes(seed, n)[n // 2 :]])
    boxes = np.ascontiguousarray(boxes[rng.permutation(len(boxes))])
    lst = boxes.tolist()
    ix = g.BoxIndex(boxes, node_size)
    serial = _pair_kernels(boxes, ix, 1, 6.0, 3, 1.0)
    threaded = _pair_kernels(boxes, ix, 3, 6.0, 3, 1.0)
    assert all(_same_bits(s, t) for s, t in zip(serial, threaded))
    want_pairs, want_areas = ref.overlap_pairs(lst)
    assert as_pairs(serial[0][0]) == want_pairs and serial[0][1].tolist() == want_areas
    assert as_pairs(serial[1]) == ref.containment_pairs(lst)
    want_pairs, want_gaps = ref.proximity_pairs(lst, 6.0, 3)
    assert as_pairs(serial[2][0]) == want_pairs and serial[2][1].tolist() == want_gaps
    assert as_pairs(ix.query_pairs()) == ref.index_query_pairs(lst)
    for q in ([0.0, 0.0, 240.0, 240.0], [100.0, 100.0, 100.0, 100.0], [30.0, 50.0, 60.0, 55.0]):
        assert ix.query(q).tolist() == ref.index_query(lst, q)
        assert ix.query_containing(q).tolist() == ref.index_query_containing(lst, q)
    assert ix.bounds == tuple(float(v) for v in (boxes[:, 0].min(), boxes[:, 1].min(), boxes[:, 2].max(), boxes[:, 3].max()))


# Containment and overlap on one thread mark a wide box's partners (its inner
# ids; for overlap, its partners above it) in a bitmap over the ids (one
# 64-bit word per 64 ids) and merge the bitmaps with the other, sorted pairs. Wide boxes here: equal twins (each contains the other), one
# nested in another, one equal to a small box, and wide boxes at the first,
# the last and the word-boundary ids; small boxes on edges of the wide ones
# (closed containment) and outside them. A box is wide when it covers at
# least max(1/64, 256/n) of the page: from 383 boxes on, the twins and the
# box around them are; from 500 on, the tall one too.
@pytest.mark.parametrize("n", [383, 384, 385, 511, 512, 513, 700])
def test_containment_and_overlap_with_wide_boxes_match_oracle_at_every_word_boundary(n):
    rng = np.random.default_rng(n)
    small = rng.integers(0, 200, (n, 2)).astype(np.float64)
    boxes = np.concatenate([small, small + rng.integers(0, 12, (n, 2))], axis=1)
    boxes[n // 2] = (0.0, 0.0, 200.0, 200.0)  # a small box equal to a wide one
    wide = {
        0: (0.0, 0.0, 200.0, 200.0),
        n - 1: (0.0, 0.0, 200.0, 200.0),  # its twin
        63 % n: (-10.0, -10.0, 212.0, 212.0),  # contains both twins
        64 % n: (0.0, 0.0, 120.0, 211.0),
        (n - 2): (100.0, 0.0, 200.0, 100.0),  # inside the twins, on their edges
    }
    for i, b in wide.items():
        boxes[i] = b
    boxes[3] = (100.0, 0.0, 100.0, 100.0)  # zero width, on an edge of the last wide box
    page = 222.0 * 222.0
    assert sum((b[2] - b[0]) * (b[3] - b[1]) >= page * max(1 / 64, 256 / n) for b in wide.values()) >= 3
    lst = boxes.tolist()
    want = ref.containment_pairs(lst)
    assert as_pairs(g.containment_pairs(boxes)) == want
    assert as_pairs(g.containment_pairs(g.BoxIndex(boxes, 2))) == want
    assert as_pairs(g.containment_pairs(boxes, threads=2)) == want
    want_pairs, want_areas = ref.overlap_pairs(lst)
    for got in (g.overlap_pairs(boxes), g.overlap_pairs(g.BoxIndex(boxes, 2)), g.overlap_pairs(boxes, threads=2)):
        assert as_pairs(got[0]) == want_pairs and got[1].tolist() == want_areas


# On one thread, a wide box over half the page or more (a background) is
# paired by testing every id in order, a narrower one by walking the tree.
# The page is 240 x 240; at 600-640 boxes a box over 256/n (0.40-0.43) of it
# is wide: a 240 x 110 box (0.46) is walked, a 240 x 240 one scanned, and
# the drawn ones fall on either side. At any ids, with twins, both paths
# agree with the oracle.
@settings(max_examples=8, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(600, 640),
    st.lists(st.tuples(st.integers(150, 240), st.integers(150, 240), st.floats(0, 1), st.floats(0, 1)), max_size=3),
    st.booleans(),
    st.sampled_from([2, 16]),
)
def test_overlap_and_containment_agree_with_oracle_around_the_half_page_cut(seed, n, drawn, twin, node_size):
    rng = np.random.default_rng(seed)
    boxes = seeded_boxes(seed, n)
    boxes[rng.integers(0, n)] = (0.0, 0.0, 0.0, 240.0)  # pins the page to 240 x 240
    boxes[rng.integers(0, n)] = (0.0, 0.0, 240.0, 0.0)
    wide = [(0.0, 65.0, 240.0, 175.0), (0.0, 0.0, 240.0, 240.0)]
    for w, h, fx, fy in drawn:
        x, y = float(int(fx * (240 - w))), float(int(fy * (240 - h)))
        wide.append((x, y, x + w, y + h))
    for big in wide + (wide if twin else []):
        boxes[rng.integers(0, n)] = big
    lst = boxes.tolist()
    want_pairs, want_areas = ref.overlap_pairs(lst)
    want_nested = ref.containment_pairs(lst)
    ix = g.BoxIndex(boxes, node_size)
    for got in (g.overlap_pairs(boxes), g.overlap_pairs(ix), g.overlap_pairs(ix, threads=2)):
        assert as_pairs(got[0]) == want_pairs and got[1].tolist() == want_areas
    for nested in (g.containment_pairs(boxes), g.containment_pairs(ix), g.containment_pairs(ix, threads=2)):
        assert as_pairs(nested) == want_nested


def test_scratch_is_kept_reused_and_released():
    big, small = seeded_boxes(3, 2000), seeded_boxes(4, 50)
    want_small = g.overlap_pairs(small)
    g.release_scratch()
    assert g.scratch_bytes() == 0
    g.overlap_pairs(big)
    kept = g.scratch_bytes()
    assert kept > 0
    # a smaller call after a larger one reuses the room and still gives its own answer
    assert _same_bits(g.overlap_pairs(small), want_small)
    assert g.scratch_bytes() == kept
    assert as_pairs(g.proximity_pairs(small, 5.0, 2)[0]) == ref.proximity_pairs(small.tolist(), 5.0, 2)[0]
    assert as_pairs(g.alignment_pairs(small, 1.0)[0]) == ref.alignment_pairs(small.tolist(), 1.0)[0]
    # rejected boxes leave the kept index and scratch usable
    with pytest.raises(InvalidInputError, match="boxes row 1"):
        g.containment_pairs(np.array([[0, 0, 1, 1], [0, 0, np.nan, 1]]))
    assert as_pairs(g.containment_pairs(small)) == ref.containment_pairs(small.tolist())
    g.release_scratch()
    assert g.scratch_bytes() == 0
    assert _same_bits(g.overlap_pairs(small), want_small)


def test_scratch_is_per_thread():
    from concurrent.futures import ThreadPoolExecutor

    boxes = seeded_boxes(9, 1500)
    want = _pair_kernels(boxes, boxes, 1, 6.0, 3, 1.0)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda t: _pair_kernels(boxes, boxes, t % 3, 6.0, 3, 1.0), range(8)))
    assert all(all(_same_bits(a, b) for a, b in zip(want, r)) for r in got)


def test_huge_thread_counts_are_capped():
    boxes = seeded_boxes(6, 200)
    want = g.overlap_pairs(boxes)
    assert _same_bits(g.overlap_pairs(boxes, threads=2**70), want)
    assert _same_bits(g.overlap_pairs(boxes, threads=np.int64(1000)), want)


def test_old_calls_still_work():
    boxes = seeded_boxes(5, 100)
    assert _same_bits(g.proximity_pairs(boxes, 6.0), g.proximity_pairs(boxes, 6.0, 4, threads=1))
    assert _same_bits(g.alignment_pairs(boxes), g.alignment_pairs(boxes, 1.0, threads=2))


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, None])
@pytest.mark.parametrize(
    "kernel",
    [
        lambda b, t: g.overlap_pairs(b, threads=t),
        lambda b, t: g.containment_pairs(g.BoxIndex(b), threads=t),
        lambda b, t: g.proximity_pairs(b, 1.0, 2, threads=t),
        lambda b, t: g.alignment_pairs(b, 1.0, threads=t),
    ],
)
def test_bad_threads_are_rejected(kernel, bad):
    with pytest.raises(InvalidInputError, match=r"^threads must be an integer >= 0 \(0: one per core\), got "):
        kernel(GOOD, bad)
