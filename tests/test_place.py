"""Placement: properties under hypothesis against naive checks, infeasible cases, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from spatialobs import InvalidInputError, OutOfRangeError, SpatialObsError
from spatialobs.canvas import Canvas, Executor, Node, PlacementError
from spatialobs.canvas.editing.place import place, solve_placement
from tests.reference.place_oracle import nearest_free_lattice, overlap_area, placement_violations

def scene(frame, occupants, objects, rotations=()):
    """A canvas with frame ``F`` (page box), occupant children and loose objects elsewhere."""
    c = Canvas()
    fx, fy, fw, fh = frame
    c.add(Node("F", "frame", "page:page", "a1", fx, fy, fw, fh, name="Dest"))
    for k, (x, y, w, h) in enumerate(occupants):
        c.add(Node(f"o{k}", "geo", "F", None, x, y, w, h))
    for k, (x, y, w, h) in enumerate(objects):
        rot = rotations[k] if k < len(rotations) else 0.0
        c.add(Node(f"m{k}", "geo", "page:page", None, x, y, w, h, rotation=rot,
                   style={"color": "blue"}, text=f"card {k}"))
    return c


dims = st.integers(0, 60)


@st.composite
def scenes(draw):
    fw, fh = draw(st.integers(16, 220)), draw(st.integers(16, 220))
    fx, fy = draw(st.integers(-50, 50)), draw(st.integers(-50, 50))
    occ = draw(st.lists(st.tuples(st.integers(-10, fw), st.integers(-10, fh), dims, dims), max_size=6))
    objs = draw(st.lists(st.tuples(st.integers(-400, 400), st.integers(-400, 400), dims, dims), min_size=1, max_size=7))
    rots = draw(st.lists(st.sampled_from([0.0, 0.0, 0.3, math.pi / 2]), max_size=len(objs)))
    return (fx, fy, fw, fh), occ, objs, rots


def check_evaluate(before, after, ids, frame_id):
    """Correct placement as the evaluator (DESIGN §6) judges it."""
    from spatialobs.canvas.scenarios.evaluate import Task, evaluate  # noqa: PLC0415

    # the evaluator counts an object as moved when its page position changed; one that was
    # already at a free spot inside may stay put
    moved = tuple(i for i in ids if before.page_bounds(i)[:2] != after.page_bounds(i)[:2])
    out = evaluate(before, after, Task(tuple(ids), moved, frame_id))
    assert out.correct_target and out.correct_placement, out.details


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenes())
def test_place_success_meets_conditions_and_failure_changes_nothing(sc):
    frame, occ, objs, rots = sc
    c = scene(frame, occ, objs, rots)
    before = c.copy()
    snap = c.to_json()
    ids = [f"m{k}" for k in range(len(objs))]
    try:
        place(c, ids, "F")
    except PlacementError as exc:
        assert "place:" in str(exc)
        assert c.to_json() == snap
        return
    fb = c.page_bounds("F")
    bad = placement_violations(before, c, ids, fb, occupants=[f"o{k}" for k in range(len(occ))])
    assert not bad, bad
    for i in ids:
        assert c.node(i).parent == "F"
    # nothing else changed
    for nid in before.nodes:
        if nid not in ids:
            assert c.node(nid) == before.node(nid)
    check_evaluate(before, c, ids, "F")


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=8),
       st.integers(0, 120), st.integers(0, 120))
def test_place_always_succeeds_when_a_row_fits(sizes, extra_w, extra_h):
    # Σw ≤ room width and max h ≤ room height: a row arrangement exists and must be found
    room_w = sum(w for w, _ in sizes) + extra_w
    room_h = max(h for _, h in sizes) + extra_h
    objs = [(500 + 7 * k, 300 - 5 * k, w, h) for k, (w, h) in enumerate(sizes)]
    c = scene((0, 0, room_w + 16, room_h + 16), [], objs)
    ids = [f"m{k}" for k in range(len(objs))]
    before = c.copy()
    place(c, ids, "F")
    assert not placement_violations(before, c, ids, c.page_bounds("F"))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 12), st.integers(0, 12), st.tuples(st.integers(-20, 60), st.integers(-20, 60)),
       st.lists(st.tuples(st.integers(-5, 35), st.integers(-5, 35), st.integers(0, 15), st.integers(0, 15)), max_size=8))
def test_single_object_position_is_the_nearest_free_one(w, h, want, obs):
    inner = (0.0, 0.0, 30.0, 30.0)
    boxes = [(x, y, x + bw, y + bh) for x, y, bw, bh in obs]
    best = nearest_free_lattice(w, h, want, inner, boxes)
    try:
        pos = solve_placement([[w, h]], [want], inner, np.array(boxes, dtype=float).reshape(-1, 4))
    except PlacementError:
        assert best is None
        return
    assert best is not None
    x, y = pos[0]
    assert (x - want[0]) ** 2 + (y - want[1]) ** 2 == best[0]
    assert all(overlap_area((x, y, x + w, y + h), b) == 0 for b in boxes)


def test_place_prefers_the_asked_position_and_keeps_arrangement():
    c = scene((0, 0, 400, 300), [], [(1000, 1000, 50, 40), (1060, 1000, 50, 40)])
    out = place(c, ["m0", "m1"], "F", at={"m0": (100, 100)})
    assert out["m0"] == (100.0, 100.0)
    # m1 had no wish: the group of it moves to the nearest spot inside, keeping its size
    x, y = out["m1"]
    assert c.page_bounds("m1") == (x, y, x + 50, y + 40)
    c2 = scene((0, 0, 400, 300), [], [(1000, 1000, 50, 40), (1060, 1000, 50, 40)])
    out2 = place(c2, ["m0", "m1"], "F")
    assert out2["m1"][0] - out2["m0"][0] == 60 and out2["m1"][1] == out2["m0"][1]  # arrangement kept


def test_place_avoids_existing_children_and_tolerates_one_unit():
    c = scene((0, 0, 200, 100), [(8, 8, 100, 84)], [(500, 8, 80, 80)])
    out = place(c, ["m0"], "F", at={"m0": (8, 8)})
    assert out["m0"] == (108.0, 8.0)
    assert overlap_area(c.page_bounds("m0"), c.page_bounds("o0")) == 0


@pytest.mark.parametrize("objs, occ, why", [
    ([(0, 0, 500, 10)], [], "larger than the room"),
    ([(0, 0, 60, 60)] * 6, [], "need"),
    ([(0, 0, 60, 60)], [(0, 0, 200, 100)], "no free position"),
])
def test_infeasible_place_fails_with_reason_and_changes_nothing(objs, occ, why):
    c = scene((0, 0, 200, 100), occ, objs)
    snap = c.to_json()
    with pytest.raises(PlacementError, match=why):
        place(c, [f"m{k}" for k in range(len(objs))], "F")
    assert c.to_json() == snap


def test_infeasible_place_op_is_reported_and_atomic():
    c = scene((0, 0, 200, 100), [], [(0, 0, 150, 80), (300, 0, 150, 80)])
    snap = c.to_json()
    r = Executor(c).apply([{"op": "place", "ids": ["m0", "m1"], "into": "F"}])
    assert r.applied == [] and "op 0 (place): place:" in str(r.errors[0])
    assert c.to_json() == snap


def test_place_into_box_in_action_coordinates():
    c = Canvas()
    c.add(Node("bg", "frame", "page:page", "a1", 0, 0, 1000, 1000))     # around the box: not an obstacle
    c.add(Node("wall", "geo", "bg", "a1", 100, 100, 50, 200))             # cuts the box: an obstacle
    c.add(Node("a", "geo", "page:page", "a2", 600, 600, 40, 40))
    r = Executor(c, origin=(100, 100)).apply(
        [{"op": "place", "ids": ["a"], "into": {"x": 0, "y": 0, "w": 200, "h": 200}, "x": 0, "y": 0}])
    assert r.ok, r.errors
    b = c.page_bounds("a")
    assert b == (150.0, 108.0, 190.0, 148.0)  # pushed right of the wall, inside the inset
    assert c.node("a").parent == "page:page"  # a box destination does not reparent


def test_place_rotated_object_keeps_rotation_and_box_size():
    c = scene((0, 0, 300, 300), [], [(500, 500, 100, 20)], [math.pi / 2])
    before = c.copy()
    place(c, ["m0"], "F")
    assert not placement_violations(before, c, ["m0"], c.page_bounds("F"))
    assert math.isclose(c.page_rotation("m0"), math.pi / 2)


def test_place_into_rotated_frame_is_refused():
    c = scene((0, 0, 300, 300), [], [(500, 500, 10, 10)])
    c.update("F", rotation=0.2)
    with pytest.raises(PlacementError, match="rotated"):
        place(c, ["m0"], "F")


def test_place_bad_input():
    c = scene((0, 0, 300, 300), [], [(500, 500, 10, 10)])
    with pytest.raises(OutOfRangeError, match="no node with id 'zz'"):
        place(c, ["zz"], "F")
    with pytest.raises(OutOfRangeError, match="no destination node 'G'"):
        place(c, ["m0"], "G")
    with pytest.raises(InvalidInputError, match="non-empty list"):
        place(c, [], "F")
    with pytest.raises(InvalidInputError, match="inset"):
        place(c, ["m0"], "F", inset=-1)
    with pytest.raises(InvalidInputError, match="into itself"):
        place(c, ["F"], "F")
    with pytest.raises(InvalidInputError, match="destination box"):
        place(c, ["m0"], {"x": 0, "y": 0, "w": float("nan"), "h": 3})
    c.update("m0", locked=True)
    with pytest.raises(PlacementError, match="locked"):
        place(c, ["m0"], "F")
    assert issubclass(PlacementError, SpatialObsError) and issubclass(PlacementError, ValueError)
