"""Row maps (:mod:`spatialobs.canvas.rowmaps`): the compiled passes, their numpy twins and the naive
oracle (``tests/reference/rowmaps_oracle.py``) on edits as a canvas makes them: rows removed,
appended, moved in paint order by blocks, moved to and from other pages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spatialobs.canvas import rowmaps as RM
from tests.reference import rowmaps_oracle as ref

I64 = np.int64


def _blocks(draw, items):
    """``items`` in a new order made by moving a few blocks (what an add, a removal or a reparent does
    to paint order), or shuffled outright."""
    items = list(items)
    if draw(st.integers(0, 4)) == 0:
        return draw(st.permutations(items))
    cuts = sorted(set(draw(st.lists(st.integers(0, len(items)), max_size=4))))
    parts = [items[i:j] for i, j in zip([0] + cuts, cuts + [len(items)]) if j > i]
    order = draw(st.permutations(list(range(len(parts)))))
    return [x for k in order for x in parts[k]]


@st.composite
def page_edits(draw):
    """(newrow, canvas_rows, page_pos, n): a page's rows then and now through one version change."""
    total = draw(st.integers(0, 60))
    on_page = [r for r in range(total) if draw(st.booleans()) or total < 4]
    canvas_rows = _blocks(draw, on_page)
    removed = {r for r in range(total) if draw(st.integers(0, 5)) == 0}
    kept = [r for r in range(total) if r not in removed]
    appended = draw(st.integers(0, 5))
    newrow = np.full(total, -1, I64)
    for i, r in enumerate(kept):
        newrow[r] = i
    total_now = len(kept) + appended
    # the page now: its kept rows (one may leave for another page), new rows, rows from other pages
    leaves = draw(st.booleans()) and draw(st.integers(0, 3)) == 0
    now = [int(newrow[r]) for r in canvas_rows if newrow[r] >= 0]
    if leaves and now:
        now.pop(draw(st.integers(0, len(now) - 1)))
    others = [int(newrow[r]) for r in kept if r not in set(on_page)]
    now += [c for c in others if draw(st.integers(0, 3)) == 0]
    now += list(range(len(kept), total_now))
    order = _blocks(draw, now)
    page_pos = np.full(total_now, -1, I64)
    for p, c in enumerate(order):
        page_pos[c] = p
    return newrow, np.asarray(canvas_rows, I64), page_pos, len(order)


def _as_lists(m):
    return None if m is None else (m.omap.tolist(), m.new_of_kept.tolist(), m.kept_old.tolist(), m.is_new.tolist())


@settings(max_examples=400, deadline=None)
@given(page_edits())
def test_map_rows_compiled_twin_and_oracle_agree(edit):
    newrow, canvas_rows, page_pos, n = edit
    want = ref.map_rows(newrow.tolist(), canvas_rows.tolist(), page_pos.tolist(), n)
    got, twin = RM.map_rows(newrow, canvas_rows, page_pos, n), RM._map_rows_py(newrow, canvas_rows, page_pos, n)
    assert _as_lists(got) == _as_lists(twin) == want
    if got is None or twin is None:
        return
    cuts = ref.cuts(got.kept_old.tolist(), got.new_of_kept.tolist())
    expect = cuts if len(cuts) - 2 < RM.MAX_RUNS else None
    for m in (got, twin):
        assert m.every == (len(m.kept_old) == len(canvas_rows))
        assert (m.runs.tolist() if m.runs is not None else None) == expect
        assert m.omap.dtype == m.new_of_kept.dtype == m.kept_old.dtype == I64 and m.is_new.dtype == bool


@settings(max_examples=300, deadline=None)
@given(page_edits(), st.data())
def test_solid_rows_and_reparented_compiled_twin_and_oracle_agree(edit, data):
    newrow, canvas_rows, page_pos, n = edit
    m = RM.map_rows(newrow, canvas_rows, page_pos, n)
    if m is None:
        return
    old_n = len(canvas_rows)
    solid = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    old_sub = np.flatnonzero(data.draw(st.lists(st.booleans(), min_size=old_n, max_size=old_n))).astype(I64)
    want = ref.solid_rows(solid.tolist(), m.omap.tolist(), old_sub.tolist(), m.is_new.tolist())
    for got in (RM.solid_rows(solid, m.omap, old_sub, m.is_new), RM._solid_rows_py(solid, m.omap, old_sub, m.is_new)):
        assert {k: getattr(got, k).tolist() for k in want} == want
        cuts = ref.cuts(want["kp"], want["skp"])
        assert (got.runs.tolist() if got.runs is not None else None) == (cuts if len(cuts) - 2 < RM.MAX_RUNS else None)
    # parents: each row's parent an earlier row (or none), then and now
    old_parent = np.array([data.draw(st.integers(-1, r - 1)) for r in range(old_n)], I64)
    parent = np.array([data.draw(st.integers(-1, r - 1)) for r in range(n)], I64)
    if data.draw(st.booleans()):  # mostly the parents carried, as after an edit that moves little
        for now, then in zip(m.new_of_kept.tolist(), m.kept_old.tolist()):
            p = old_parent[then]
            parent[now] = m.omap[p] if p >= 0 else -1
    want_r = ref.reparented(m.new_of_kept.tolist(), m.kept_old.tolist(), old_parent.tolist(), parent.tolist(),
                            m.omap.tolist())
    for fn in (RM.reparented, RM._reparented_py):
        moved, up = fn(m.new_of_kept, m.kept_old, old_parent, parent, m.omap)
        assert (moved.tolist(), up) == want_r


def test_runs_end_at_the_most_runs_kept():
    # 63 breaks make 64 runs (kept); 64 make 65 (gathered row by row)
    for breaks, kept in ((RM.MAX_RUNS - 1, True), (RM.MAX_RUNS, False)):
        src = np.arange(breaks + 1, dtype=I64) * 2  # every pair a run of its own
        newrow = np.arange(src[-1] + 1, dtype=I64)
        page_pos = np.full(len(newrow), -1, I64)
        page_pos[src] = np.arange(len(src))
        m = RM.map_rows(newrow, src, page_pos, len(src))
        twin = RM._map_rows_py(newrow, src, page_pos, len(src))
        assert m is not None and twin is not None
        # page rows 0..k map to 0..k: one run; the canvas rows skip, which the page rows do not see
        assert m.runs is not None and m.runs.tolist() == [0, len(src)]
        solid = np.ones(len(src), bool)
        old_sub = np.arange(len(src), dtype=I64)
        omap = np.full(len(src) + 1, -1, I64)
        omap[:-1] = np.arange(len(src))[::-1]  # every position reversed: a run per position
        for fn in (RM.solid_rows, RM._solid_rows_py):
            got = fn(solid, omap, old_sub, np.zeros(len(src), bool))
            assert (got.runs is not None) == kept
            if kept:
                assert got.runs.tolist() == list(range(len(src) + 1))


@pytest.mark.parametrize("fn", ["compiled", "twin"])
def test_row_maps_refuse_rows_outside_their_arrays(fn):
    c = pytest.importorskip("spatialobs.canvas._cpagetables") if fn == "compiled" else None

    def map_rows(newrow, canvas_rows, page_pos, n):
        if c is not None:
            return c.map_rows(np.asarray(newrow, I64), np.asarray(canvas_rows, I64), np.asarray(page_pos, I64), n,
                              RM.MAX_RUNS)
        return RM._map_rows_py(np.asarray(newrow, I64), np.asarray(canvas_rows, I64), np.asarray(page_pos, I64), n)

    with pytest.raises(IndexError, match="page row 1 names canvas row 5, outside the row map of 2 rows"):
        map_rows([0, 1], [0, 5], [0, 1], 2)
    with pytest.raises(IndexError, match="page row 0 names canvas row -1, outside the row map of 2 rows"):
        map_rows([0, 1], [-1], [0, 1], 2)
    with pytest.raises(IndexError, match="canvas row 1 moved to row 7, outside the page positions of 2 rows"):
        map_rows([0, 7], [0, 1], [0, 1], 2)
    with pytest.raises(IndexError, match="canvas row 1 is page row 3, outside the page of 2 rows"):
        map_rows([0, 1], [0, 1], [0, 3], 2)
    with pytest.raises(ValueError, match="map_rows needs a page of 0 rows or more, got -1"):
        map_rows([0], [0], [0], -1)
    assert map_rows([0, 1], [0, 1], [0, -1], 1) is None  # row 1 is on another page now

    def solid_rows(solid, omap, old_sub, is_new):
        args = (np.asarray(solid, bool), np.asarray(omap, I64), np.asarray(old_sub, I64), np.asarray(is_new, bool))
        if c is not None:
            return c.solid_rows(args[0].view(np.uint8), args[1], args[2], args[3].view(np.uint8), RM.MAX_RUNS)
        return RM._solid_rows_py(*args)

    with pytest.raises(ValueError, match="solid_rows needs one new-row flag per row, got 1 for 2 rows"):
        solid_rows([True, True], [0, 1, -1], [0], [False])
    with pytest.raises(IndexError, match="solid position 1 names row 3, outside the row map of 3 slots"):
        solid_rows([True, True], [0, 1, -1], [0, 3], [False, False])
    with pytest.raises(IndexError, match="the row map sends a row to 5, outside the page of 2 rows"):
        solid_rows([True, True], [0, 5, -1], [0, 1], [False, False])

    def reparented(new, kept, old_parent, parent, omap):
        args = [np.asarray(x, I64) for x in (new, kept, old_parent, parent, omap)]
        return (c.reparented if c is not None else RM._reparented_py)(*args)

    with pytest.raises(ValueError, match="reparented needs one old row per kept row, got 1 for 2"):
        reparented([0, 1], [0], [-1, 0], [-1, 0], [0, 1, -1])
    with pytest.raises(IndexError, match=r"kept row 1 \(1 -> 4\) is outside the parent columns \(2 and 2 rows\)"):
        reparented([0, 4], [0, 1], [-1, 0], [-1, 0], [0, 1, -1])
    with pytest.raises(IndexError, match="old row 1 has parent 2, outside the row map of 3 slots"):
        reparented([0, 1], [0, 1], [-1, 2], [-1, 0], [0, 1, -1])

    def rows_differ(a, src, b, dst):
        if c is not None:
            return c.rows_differ(a, np.asarray(src, I64), b, np.asarray(dst, I64))
        return RM._rows_differ_py(a, np.asarray(src, I64), b, np.asarray(dst, I64), None)

    if c is not None:  # numpy raises its own errors for the twin
        box = np.zeros((2, 4))
        with pytest.raises(ValueError, match="rows_differ needs as many rows on both sides, got 2 and 1"):
            rows_differ(box, [0, 1], box, [0])
        with pytest.raises(IndexError, match=r"row pair 1 \(1, 2\) is outside the boxes \(2 and 2 rows\)"):
            rows_differ(box, [0, 1], box, [0, 2])
        with pytest.raises(ValueError, match="rows_differ needs boxes of 4 columns, got 3 and 4"):
            rows_differ(np.zeros((2, 3)), [0], box, [0])


def test_without_the_compiled_module_the_twins_answer(monkeypatch):
    newrow = np.array([0, -1, 1, 2], I64)
    canvas_rows = np.arange(4, dtype=I64)
    page_pos = np.array([0, 2, 1, 3], I64)
    boxes = np.arange(16, dtype=np.float64).reshape(4, 4)
    with_c = RM.map_rows(newrow, canvas_rows, page_pos, 4)
    monkeypatch.setattr(RM, "_cpt", None)
    twin = RM.map_rows(newrow, canvas_rows, page_pos, 4)
    assert with_c is not None and twin is not None
    assert _as_lists(with_c) == _as_lists(twin) == ([0, -1, 2, 1, -1], [0, 2, 1], [0, 2, 3], [False, False, False, True])
    assert RM.rows_differ(boxes, np.array([0, 1]), boxes[::-1].copy(), np.array([3, 0]), None).tolist() == [False, True]


def _strided(a: np.ndarray) -> np.ndarray:
    """``a`` as a strided view (one column of a two-column array): not C-contiguous."""
    two = np.empty((len(a), 2), a.dtype)
    two[:, 0] = a
    return two[:, 0]


@settings(max_examples=100, deadline=None)
@given(page_edits(), st.data())
def test_strided_columns_are_answered_as_contiguous_ones(edit, data):
    """A column that is a view with a stride (one column of a 2-D array) is not for the compiled
    passes (they read contiguous int64): the twins answer, the same as for a contiguous copy."""
    newrow, canvas_rows, page_pos, n = edit
    want = RM.map_rows(newrow, canvas_rows, page_pos, n)
    got = RM.map_rows(_strided(newrow), _strided(canvas_rows), _strided(page_pos), n)
    assert _as_lists(got) == _as_lists(want)
    if want is None:
        return
    solid = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    old_sub = np.flatnonzero(data.draw(st.lists(st.booleans(), min_size=len(canvas_rows),
                                                max_size=len(canvas_rows)))).astype(I64)
    a = RM.solid_rows(solid, want.omap, old_sub, want.is_new)
    b = RM.solid_rows(solid, _strided(want.omap), _strided(old_sub), want.is_new)
    assert all(getattr(a, k).tolist() == getattr(b, k).tolist() for k in ("sub", "subpos", "smap", "kp", "skp"))
    parent = np.full(n, -1, I64)
    old_parent = np.full(len(canvas_rows), -1, I64)
    moved, up = RM.reparented(want.new_of_kept, want.kept_old, old_parent, parent, want.omap)
    s_moved, s_up = RM.reparented(_strided(want.new_of_kept), _strided(want.kept_old), _strided(old_parent),
                                  _strided(parent), _strided(want.omap))
    assert (moved.tolist(), up) == (s_moved.tolist(), s_up)
    boxes = np.arange(4.0 * len(canvas_rows)).reshape(-1, 4)
    kept = want.kept_old
    assert RM.rows_differ(boxes, kept, boxes, kept, None).tolist() == \
        RM.rows_differ(boxes, _strided(kept), boxes, _strided(kept), None).tolist()
