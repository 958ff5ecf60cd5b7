"""spatialobs._gc.paused: the collector off while a document is built, and back on after."""

from __future__ import annotations

import gc
import json
import threading
from typing import Any, Callable, Dict, List, Tuple

import pytest

from spatialobs._gc import paused
from spatialobs.canvas import load


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_paused_calls_nest_and_end_with_the_collector_on():
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer call is still under way
    assert gc.isenabled()


def test_an_exception_inside_turns_the_collector_back_on():
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        with paused():
            1 / 0
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    with paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_threads_share_one_count():
    inside = threading.Barrier(2)
    leave = threading.Event()
    seen: List[bool] = []

    def worker() -> None:
        with paused():
            inside.wait()
            leave.wait()
        seen.append(gc.isenabled())

    t = threading.Thread(target=worker)
    t.start()
    with paused():
        inside.wait()
    # this thread's call ended, the worker's has not: the collector stays off
    assert not gc.isenabled()
    leave.set()
    t.join()
    assert gc.isenabled() and seen == [True]


def _many_shapes(n: int) -> Dict[str, Any]:
    return {"type": "excalidraw", "elements": [
        {"id": f"e{i}", "type": "rectangle", "x": i % 100 * 30, "y": i // 100 * 30, "width": 20, "height": 20,
         "boundElements": [], "groupIds": []} for i in range(n)]}


def _passes_during(call: Callable[[], Any]) -> Tuple[Any, List[int]]:
    """``call()``'s result and the generations of the collector passes that started during it."""
    passes: List[int] = []

    def count(phase: str, info: Dict[str, Any]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        return call(), passes
    finally:
        gc.callbacks.remove(count)


def test_load_runs_no_collector_pass_and_leaves_it_on():
    text = json.dumps(_many_shapes(5000))
    canvas, passes = _passes_during(lambda: load(text))
    assert canvas.page_bounds("e4999") == (2970.0, 1470.0, 2990.0, 1490.0)
    # without the pause, dozens of passes (every 700 new objects); with it, at most the one its
    # end lets happen at the next allocation
    assert len(passes) <= 1, passes
    assert gc.isenabled()


def test_a_refused_document_leaves_the_collector_on():
    from spatialobs import InvalidInputError

    with pytest.raises(InvalidInputError, match="unrecognized canvas document"):
        load('{"nothing": 1}')
    assert gc.isenabled()


def test_a_derivation_runs_no_collector_pass():
    from spatialobs.canvas.scenarios.handoff import diagram_workspace

    # a diagram page with bound arrows: its derivation builds enough objects for several passes
    # (7 on this page without the pause)
    canvas = diagram_workspace(3000, seed=7)
    bounds, passes = _passes_during(lambda: canvas.geometry().bounds)
    assert len(bounds) == 3000
    assert len(passes) <= 1, passes
    assert gc.isenabled()


def _generation_of(obj: Any) -> int:
    return next(g for g in range(3) if any(o is obj for o in gc.get_objects(generation=g)))


def _made_in(promote: bool, n: int) -> Tuple[int, List[Any]]:
    """The generation that a paused call's ``n`` new tracked objects are in just after it, and them."""
    gc.collect()
    with paused(promote=promote):
        made = [[i] for i in range(n)]
    return _generation_of(made), made


def test_promote_moves_many_new_objects_to_the_oldest_generation():
    from spatialobs import _gc

    generation, made = _made_in(True, 3 * _gc.PROMOTE_FROM)
    assert generation == 2 and _generation_of(made[-1]) == 2 and gc.isenabled()
    assert gc.get_count()[0] < 50
    # without promote, the young generation's pass (at the first allocation after) walks them into the next
    generation, made = _made_in(False, 3 * _gc.PROMOTE_FROM)
    assert generation == 1


def test_promote_leaves_a_few_objects_to_the_young_pass():
    generation, made = _made_in(True, 100)
    assert generation == 0


def test_promote_keeps_the_callers_frozen_objects_frozen():
    from spatialobs import _gc

    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        generation, made = _made_in(True, 3 * _gc.PROMOTE_FROM)
        assert gc.get_freeze_count() == frozen and generation < 2
    finally:
        gc.unfreeze()


def test_promote_with_the_collector_off_changes_nothing():
    from spatialobs import _gc

    gc.disable()
    gc.collect()
    with paused(promote=True):
        made = [[i] for i in range(3 * _gc.PROMOTE_FROM)]
    assert not gc.isenabled() and gc.get_count()[0] >= len(made)


def test_a_nested_promote_is_honoured_by_the_outermost_call():
    from spatialobs import _gc

    gc.collect()
    with paused():
        with paused(promote=True):
            made = [[i] for i in range(3 * _gc.PROMOTE_FROM)]
        assert gc.get_count()[0] >= len(made)  # not yet: the outer call is under way
    assert gc.get_count()[0] < 50 and gc.isenabled()


def test_promote_refuses_a_bad_argument():
    with pytest.raises(TypeError, match="unexpected keyword argument 'promot'"):
        with paused(promot=True):  # type: ignore[call-arg]
            pass


def test_a_first_derivation_leaves_its_objects_out_of_the_young_generations():
    from spatialobs.canvas.scenarios.handoff import diagram_workspace

    # (a page of 10^4 shapes: its first derivation makes ~1.7·10^4 tracked objects)
    canvas = diagram_workspace(10_000, seed=7).copy()
    d, passes = _passes_during(lambda: canvas.geometry())
    assert passes == [] and gc.get_count()[0] < 50
    assert _generation_of(d) == 2
