"""Observations of a version derived from the last observed one (an edit of geometry or state):
its relation tables, updated where the edit reaches, equal those of a fresh canvas, and so do
the observations, after any sequence of edits; the naive oracle agrees on small pages."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spatialobs.canvas import Canvas, Node, observe
from spatialobs.canvas import rowmaps as RM
from spatialobs.canvas.document.records import Binding
from tests.reference.observe_oracle import observe_naive
from tests.reference.pagetables_oracle import assert_keys_of

P = "page:page"
OBS = sys.modules["spatialobs.canvas.observe"]
VIEWS = (((0, 0, 400, 300), {}),
         ((90, 60, 150, 120), {"max_objects": 12, "max_relations": 40}),
         ((-500, -500, 10, 10), {"near_gap": 7.0, "align_tol": 0.0, "touch_tol": 1.5}))
TABLES = ("inside", "overlaps", "touches", "near", "aligned")


def page(seed: int, n: int) -> Canvas:
    """A dense page on a coarse grid (many shared lines, gaps of a few units, containment),
    a frame and a group with children, and arrows: bound, half bound and free."""
    rng = np.random.default_rng(seed)
    c = Canvas()
    c.add(Node("F", "frame", P, "a0", 40, 40, 120, 90))
    c.add(Node("G", "group", P, "a0V", 0, 0))
    for k in range(n):
        parent = ("F", "G", P, P)[k % 4]
        x, y = (float(v) for v in rng.integers(0, 40, 2) * 5.0)
        w, h = (float(v) for v in rng.choice([0.0, 5.0, 10.0, 20.0, 35.0, 60.0], 2))
        # fills of every kind, so that occlusion by painted regions (and by copies) is exercised too
        c.add(Node(f"s{k}", ("geo", "note", "text", "geo")[k % 4], parent, None, x, y, w, h,
                   style={"fill": ("solid", "none", "semi")[k % 3]}, props={"geo": ("rectangle", "ellipse")[k % 2]}))
    shapes = [f"s{k}" for k in range(n)]
    for k in range(max(2, n // 4)):
        x, y = (float(v) for v in rng.integers(0, 40, 2) * 5.0)
        ex, ey = (float(v) for v in rng.integers(-8, 9, 2) * 5.0)
        c.add(Node(f"a{k}", "arrow", P, None, x, y, props={"start": {"x": 0, "y": 0}, "end": {"x": ex, "y": ey}}))
        if k % 3 == 0:
            c.add(Binding(f"b{k}", "arrow", f"a{k}", shapes[k % n], "end", (0.5, 0.5), True))
        if k % 6 == 0:
            c.add(Binding(f"b{k}s", "arrow", f"a{k}", shapes[(3 * k + 1) % n], "start", (0.25, 0.5), False))
    return c


EDIT = st.one_of(
    st.tuples(st.just("move"), st.integers(0, 10**6), st.sampled_from([0.0, 0.5, 1.0, -1.0, 5.0, -5.0, 30.0, 2.5]),
              st.sampled_from([0.0, 1.0, -1.0, 5.0, -20.0, 0.25])),
    st.tuples(st.just("size"), st.integers(0, 10**6), st.sampled_from([0.0, 1.0, 5.0, 10.0, 35.0, 60.0])),
    st.tuples(st.just("turn"), st.integers(0, 10**6), st.sampled_from([0.0, 0.3, 1.5707963267948966])),
    st.tuples(st.just("hide"), st.integers(0, 10**6)),
    st.tuples(st.just("ends"), st.integers(0, 10**6), st.sampled_from([-10.0, 0.0, 5.0, 20.0])),
    st.tuples(st.just("text"), st.integers(0, 10**6)),
    st.tuples(st.just("bind"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(st.just("many"), st.integers(0, 10**6), st.sampled_from([1.0, -5.0])),
    st.tuples(st.just("add"), st.integers(0, 10**6), st.sampled_from(["geo", "note", "text", "arrow", "group"]),
              st.sampled_from([0.0, 5.0, 40.0, 95.0]), st.sampled_from([0.0, 10.0, 55.0]),
              st.sampled_from([0.0, 5.0, 20.0, 35.0]), st.sampled_from([None, "a0", "a1", "zz"])),
    st.tuples(st.just("remove"), st.integers(0, 10**6)),
)


def edit(c: Canvas, o: tuple, count: list) -> None:
    ids = list(c.nodes)
    nid = ids[o[1] % len(ids)]
    nd = c.nodes[nid]
    kind = o[0]
    if kind == "move":
        c.update(nid, x=nd.x + o[2], y=nd.y + o[3])
    elif kind == "size":
        c.update(nid, w=o[2])
    elif kind == "turn":
        c.update(nid, rotation=o[2])
    elif kind == "hide":
        c.update(nid, hidden=not nd.hidden)
    elif kind == "ends":
        arrows = [i for i in ids if c.nodes[i].type == "arrow"]
        if not arrows:  # (every arrow removed by earlier edits)
            return
        a = arrows[o[1] % len(arrows)]
        c.update(a, props={"end": {"x": o[2], "y": -o[2]}})
    elif kind == "text":
        c.update(nid, text=f"t{o[1] % 7}")
    elif kind == "bind":  # a binding write: the next version is observed afresh
        arrows = [i for i in ids if c.nodes[i].type == "arrow"]
        shapes = [i for i in ids if c.nodes[i].type in ("geo", "note")]
        if not (arrows and shapes):  # (every arrow, or every shape, removed by earlier edits)
            return
        a = arrows[o[1] % len(arrows)]
        for b in [b for b in c.bindings.values() if b.from_id == a and b.terminal == "start"]:
            c.remove(b.id)
        count[0] += 1
        c.add(Binding(f"bx{count[0]}", "arrow", a, shapes[o[2] % len(shapes)], "start", (0.5, 0.0), True))
    elif kind == "add":  # under the frame, the group, a shape or the page; an arrow with its ends free
        _, k, t, x, y, w, index = o
        parent = ("F", "G", P, ids[k % len(ids)])[k % 4]
        if parent not in c.nodes:
            parent = P
        count[0] += 1
        props = {"start": {"x": 0, "y": 0}, "end": {"x": w, "y": -y / 5}} if t == "arrow" else {}
        c.add(Node(f"new{count[0]}", t, parent, index, x, y, w, w / 2 + 5, style={"fill": "solid"}, props=props))
    elif kind == "remove":  # a shape with its subtree (its bindings too: then observed afresh)
        c.remove(nid)
    else:  # several boxes in one version
        with c.batch():
            for k in range(0, len(ids), 5):
                i = ids[(o[1] + k) % len(ids)]
                c.update(i, x=c.nodes[i].x + o[2])


def observations(c: Canvas) -> list:
    return [observe(c, vp, **kw).to_json() for vp, kw in VIEWS]


def assert_tables_fresh(c: Canvas) -> None:
    fresh = c.copy()
    observations(fresh)
    got = OBS._page_state(c, c.current_page)
    want = OBS._page_state(fresh, fresh.current_page)
    assert set(got.tables) == set(want.tables)
    for key, tw in want.tables.items():
        tg = got.tables[key]
        for name in TABLES:
            for a, b in zip(getattr(tg, name), getattr(tw, name)):
                assert np.array_equal(a, b), (key, name)
        assert_keys_of(tg)


@pytest.fixture
def advanced(monkeypatch):
    """Counts the versions whose state was updated from the previous one."""
    count = [0]
    real = OBS._advance

    def spy(*args):
        st = real(*args)
        count[0] += st is not None
        return st

    monkeypatch.setattr(OBS, "_advance", spy)
    return count


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(8, 60), st.lists(EDIT, min_size=1, max_size=12))
def test_edit_sequences_update_tables_as_a_fresh_observation_finds_them(seed, n, edits):
    """Slow by design: 60 edit sequences, every observation after every edit compared with a fresh one (33 s on
    the shared 2-core machine under load).
    """
    c = page(seed, n)
    observations(c)
    count = [0]
    for o in edits:
        edit(c, o, count)
        got = observations(c)
        assert got == observations(c.copy())
        assert_tables_fresh(c)


def test_an_edit_is_observed_through_the_previous_version(advanced):
    c = page(3, 60)
    observations(c)
    for k in range(6):
        edit(c, ("move", k * 7, 5.0, -1.0), [0])
        assert observations(c) == observations(c.copy())
    assert advanced[0] == 6


def test_a_connector_and_the_shape_its_free_end_touches_moved_together(advanced):
    """The touches of a connector whose free end moved and of the shape it touches, in one version
    (their frame moved): the pair leaves and enters once, found from the connector's side and from
    the shape's."""
    c = page(5, 30)
    c.add(Node("FZ", "frame", P, None, 300, 260, 120, 90))
    c.add(Node("cz", "geo", "FZ", None, 20, 20, 40, 40))
    c.add(Node("tz", "arrow", "FZ", None, 0, 40, props={"start": {"x": 0, "y": 0}, "end": {"x": 20, "y": 0}}))
    observations(c)
    for k, (nid, dx) in enumerate([("FZ", 3.0), ("FZ", -1.0), ("FZ", 2.0), ("cz", 2.0), ("FZ", 0.5), ("FZ", -4.0),
                                   ("tz", -30.0), ("FZ", 4.0), ("FZ", 1.0)]):
        c.update(nid, x=c.nodes[nid].x + dx)
        assert observations(c) == observations(c.copy())
        assert_tables_fresh(c)
        assert advanced[0] == k + 1
    st = OBS._page_state(c, c.current_page)
    assert st.ends is not None and st.ends.by_x is not None  # (the keyed update's path)
    assert all(len(t.touches[0]) for t in st.tables.values())


def test_a_binding_write_or_a_new_node_is_observed_afresh(advanced):
    c = page(4, 30)
    observations(c)
    edit(c, ("bind", 1, 2), [0])
    observations(c)
    assert advanced[0] == 0
    c.add(Node("late", "geo", P, None, 5, 5, 10, 10))
    assert observations(c) == observations(c.copy())
    assert advanced[0] == 0


@pytest.fixture
def reshaped(monkeypatch):
    """Counts the versions with added or removed rows whose state was carried from the previous one."""
    count = [0]
    real = OBS._reshape

    def spy(*args):
        st = real(*args)
        count[0] += st is not None
        return st

    monkeypatch.setattr(OBS, "_reshape", spy)
    return count


def test_an_add_or_a_removal_is_observed_through_the_previous_version(reshaped):
    c = page(6, 60)
    observations(c)
    c.add(Node("late", "geo", P, None, 5, 5, 10, 10))
    assert observations(c) == observations(c.copy())
    assert_tables_fresh(c)
    c.add(Node("inner", "note", "F", "a0", 20, 10, 30, 30))
    assert observations(c) == observations(c.copy())
    assert_tables_fresh(c)
    for nid in ("late", "inner", "s5", "F"):
        c.remove(nid)
        assert observations(c) == observations(c.copy())
        assert_tables_fresh(c)
    assert reshaped[0] >= 5


def test_two_versions_apart_are_observed_afresh(advanced):
    """A version observed after one that was never observed starts afresh (no base state)."""
    c = page(5, 30)
    observations(c)
    c.update("s1", x=1.0)
    c.geometry()
    c.update("s2", x=2.0)
    assert observations(c) == observations(c.copy())
    assert advanced[0] == 0


@pytest.mark.parametrize("seed", range(4))
def test_small_pages_after_edits_match_the_oracle(seed):
    c = page(seed, 20)
    observations(c)
    count = [0]
    for k, o in enumerate([("move", seed, 5.0, 0.0), ("size", seed + 3, 35.0), ("ends", seed, 20.0),
                           ("turn", seed + 1, 0.3), ("many", seed, -5.0),
                           ("add", seed, "geo", 40.0, 10.0, 20.0, None), ("remove", seed + 5),
                           ("add", seed + 1, "arrow", 5.0, 55.0, 35.0, "a0"), ("move", seed + 2, 1.0, 1.0)]):
        edit(c, o, count)
        for vp, kw in VIEWS:
            assert observe(c, vp, **kw).to_dict() == observe_naive(c, vp, **kw), (k, vp)


@st.composite
def row_maps(draw):
    """Kept rows (increasing) and their new positions, as an edit leaves them: blocks of the kept
    rows in a new order with new rows between them; sometimes a scattered map (many runs)."""
    n = draw(st.integers(0, 200))
    kept = [r for r, k in enumerate(draw(st.lists(st.booleans(), min_size=n, max_size=n))) if k]
    src = np.asarray(kept, dtype=np.int64)
    if draw(st.booleans()):
        dst = np.asarray(draw(st.permutations(list(range(len(kept))))), dtype=np.int64) * 2
        return src, dst, 2 * len(kept)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(kept)), max_size=6))))
    blocks = [b for b in np.split(np.arange(len(kept)), cuts) if len(b)]
    order = draw(st.permutations(list(range(len(blocks)))))
    dst = np.zeros(len(kept), np.int64)
    at = draw(st.integers(0, 3))
    for b in order:
        dst[blocks[b]] = np.arange(at, at + len(blocks[b]))
        at += len(blocks[b]) + draw(st.integers(0, 3))
    return src, dst, at


@settings(max_examples=200, deadline=None)
@given(row_maps(), st.integers(0, 10**6), st.booleans())
def test_rows_carried_by_runs_equal_a_gather(mapped, seed, nan):
    src, dst, m = mapped
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, (max(src[-1] + 1 if len(src) else 0, 1), 4)).astype(np.float64)
    b = rng.integers(0, 3, (max(m, 1), 4)).astype(np.float64)
    if nan:
        a[::3] = np.nan
        b[::5] = np.nan
    runs = RM.runs(src, dst)
    if runs is not None:
        # the cuts cover every pair once, and within a run both sides step by one
        assert runs[0] == 0 and runs[-1] == len(src) and (np.diff(runs) > 0).all()
        for i, j in zip(runs[:-1], runs[1:]):
            assert (src[i:j] == src[i] + np.arange(j - i)).all() and (dst[i:j] == dst[i] + np.arange(j - i)).all()
        # and a run ends only where one side does not step by one (consecutive sources or not)
        for c in runs[1:-1]:
            assert not (src[c] == src[c - 1] + 1 and dst[c] == dst[c - 1] + 1)
    differ = [bool((a[s] != b[d]).any()) for s, d in zip(src, dst)]  # NaN differs from everything
    for r in (runs, None):
        assert RM.rows_differ(a, src, b, dst, r).tolist() == RM._rows_differ_py(a, src, b, dst, r).tolist() == differ
        out = np.full((max(m, 1), 4), -1.0)
        RM.put_rows(out, dst, a, src, r)
        want = np.full((max(m, 1), 4), -1.0)
        for s, d in zip(src, dst):
            want[d] = a[s]
        assert np.array_equal(out, want, equal_nan=True)
        flags = np.ones(max(m, 1), bool)
        RM.set_rows(flags, dst, r, False)
        assert flags.tolist() == [i not in set(dst.tolist()) for i in range(max(m, 1))]


def test_a_map_of_more_runs_than_the_limit_is_gathered():
    src = np.arange(2 * RM.MAX_RUNS, dtype=np.int64)
    assert RM.runs(src, src[::-1].copy()) is None
    assert RM.runs(src, src + 5).tolist() == [0, len(src)]
    assert RM.runs(src[:0], src[:0]).tolist() == [0]
