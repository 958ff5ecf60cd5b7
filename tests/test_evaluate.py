"""evaluate: Correct target, Correct placement and Full task success, case by case."""

from __future__ import annotations

import pytest

from spatialobs import InvalidInputError
from spatialobs.canvas import Canvas, Node, Outcome, Relation, Task, evaluate
from spatialobs.canvas.document.records import Binding


@pytest.fixture
def base():
    c = Canvas()
    c.add(Node("slot", "geo", "page:page", "a1", 0, 0, 200, 100))
    c.add(Node("a", "geo", "page:page", "a2", 300, 0, 50, 50, text="A"))
    c.add(Node("b", "geo", "page:page", "a3", 400, 0, 50, 50, text="B"))
    c.add(Node("c", "geo", "page:page", "a4", 500, 0, 50, 50, text="C"))
    c.add(Node("arr", "arrow", "page:page", "a5", 350, 25, 50, 0, props={"start": {"x": 0, "y": 0}, "end": {"x": 50, "y": 0}}))
    c.add(Binding("ba", "arrow", "arr", "a", "start"))
    c.add(Binding("bb", "arrow", "arr", "b", "end"))
    return c


def edit(canvas, **moves):
    d = canvas.copy()
    for nid, (x, y) in moves.items():
        d.update(nid, x=x, y=y)
    return d


TASK = Task(("a", "b", "c"), ("a", "b"), "slot", (Relation("bound", "arr", "a", "start"),))


def test_full_success_with_following_arrow(base):
    out = evaluate(base, edit(base, a=(10, 10), b=(100, 10)), TASK)
    assert isinstance(out, Outcome) and out[:3] == (True, True, True)
    assert sorted(out.details["moved"]) == ["a", "b"]
    d = edit(base, a=(10, 10), b=(100, 10))
    d.update("arr", x=60, y=35)  # a bound arrow that follows its target may be updated
    assert evaluate(base, d, TASK).full_success


def test_wrong_targets(base):
    assert evaluate(base, edit(base, a=(10, 10)), TASK)[:3] == (False, False, False)
    assert evaluate(base, edit(base, a=(10, 10), b=(100, 10), c=(60, 40)), TASK).correct_target is False
    assert evaluate(base, base.copy(), TASK).correct_target is False
    d = edit(base, a=(10, 10), b=(100, 10))
    d.remove("c")
    assert evaluate(base, d, TASK).details["deleted_candidates"] == ["c"]


@pytest.mark.parametrize("moves, problem", [
    (dict(a=(2, 10), b=(100, 10)), "inset"),          # 2 from the left edge, inset is 8
    (dict(a=(10, 10), b=(140, 45)), "inset"),         # sticks out at the bottom
    (dict(a=(10, 10), b=(30, 20)), "overlap"),        # 30 x 40 overlap
])
def test_placement_failures(base, moves, problem):
    out = evaluate(base, edit(base, **moves), TASK)
    assert out.correct_target and not out.correct_placement and not out.full_success
    assert any(problem in p for p in out.details["placement_problems"])


def test_touching_is_not_overlap_and_state_must_be_kept(base):
    assert evaluate(base, edit(base, a=(10, 10), b=(60, 10)), TASK).correct_placement  # edges touch
    d = edit(base, a=(10, 10), b=(100, 10))
    d.update("b", w=60)
    out = evaluate(base, d, TASK)
    assert not out.correct_placement and "b: size changed" in out.details["placement_problems"]
    d = edit(base, a=(10, 10), b=(100, 10))
    d.update("a", style={"color": "red"})
    assert "a: style changed" in evaluate(base, d, TASK).details["placement_problems"]


def test_full_success_needs_relation_and_no_side_effects(base):
    d = edit(base, a=(10, 10), b=(100, 10))
    d.remove("ba")
    out = evaluate(base, d, TASK)
    assert out.correct_placement and not out.full_success
    assert any("bound arr -> a" in v for v in out.details["violations"])
    d = edit(base, a=(10, 10), b=(100, 10))
    d.add(Node("new", "geo", "page:page", "a9", 900, 900, 5, 5))
    assert evaluate(base, d, TASK).details["violations"] == ["new was added"]
    d = edit(base, a=(10, 10), b=(100, 10))
    d.update("slot", text="changed")
    assert evaluate(base, d, TASK).details["violations"] == ["slot was updated"]


def test_box_destination_and_parent_relation(base):
    d = edit(base, a=(10, 10))
    task = Task(("a", "c"), ("a",), (0, 0, 100, 100), (Relation("parent", "a", "page:page"),))
    assert evaluate(base, d, task).full_success


@pytest.mark.parametrize("task, msg", [
    (Task(("zz",), (), "slot"), "candidate 'zz'"),
    (Task(("a",), ("b",), "slot"), "target 'b'"),
    (Task(("a",), ("a",), "nowhere"), "destination 'nowhere'"),
    (Task(("a",), ("a",), (0, 0, -1, 5)), "destination"),
    ("not a task", "Task"),
])
def test_bad_task(base, task, msg):
    with pytest.raises(InvalidInputError, match=msg):
        evaluate(base, base.copy(), task)
    with pytest.raises(InvalidInputError, match="Canvas"):
        evaluate(base, {}, TASK)
