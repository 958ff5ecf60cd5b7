"""The compiled loops of exploration steps (Cython) against their pure-Python twins: action signatures, element bounds."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError
from spatialobs.screen import PUCT, Action, Element, Screen, explore, signature, signatures, sim

A = importlib.import_module("spatialobs.screen.actions")
M = importlib.import_module("spatialobs.screen.model")


def _actions_mod() -> Any:
    return pytest.importorskip("spatialobs.screen._cactions")


def _model_mod() -> Any:
    return pytest.importorskip("spatialobs.screen._cmodel")


def _outcome(f: Callable[..., Any], *args: Any) -> Tuple[str, Any]:
    try:
        return ("ok", f(*args))
    except Exception as e:  # both twins must fail alike
        return ("err", type(e), str(e))


def test_compiled_loops_are_in_use():
    # The normal build compiles the Cython modules; exploration and Element must use them.
    assert A._signatures is _actions_mod().signatures
    assert M._plain_bounds is _model_mod().plain_bounds


# -- action signatures
class _Str(str):
    pass


_texts = st.one_of(st.none(), st.text(max_size=12), st.sampled_from(
    ["O|K", "a\\b", " Sign \n in ", "x" * 130, "|" * 125, "İ", "ß", "\u2028", "\\|"]), st.text(max_size=4).map(_Str))
_lattice = st.integers(-3, 13).map(lambda k: k * 10.0)
_extreme = st.sampled_from([-0.0, 1e-300, 1e300, 1.7e308, 5e-324])


@st.composite
def _screens_and_actions(draw: Any) -> Tuple[Screen, list]:
    w = draw(st.sampled_from([1.0, 7.0, 100.0, 1080.0, 1.0, 7.0, 100.0, 1080.0, 1e-300]))
    h = draw(st.sampled_from([1.0, 9.0, 100.0, 2280.0]))
    elements = []
    for _ in range(draw(st.integers(0, 8))):
        # now and then an element at extreme coordinates (a center at infinity has no cell: both twins raise)
        coord = _extreme if draw(st.integers(0, 9)) == 0 else _lattice
        x0, y0 = draw(coord), draw(coord)
        x1, y1 = x0 + abs(draw(coord)), y0 + abs(draw(coord))
        x1, y1 = (x1 if x1 < float("inf") else x0), (y1 if y1 < float("inf") else y0)
        elements.append(Element((x0, y0, x1, y1), draw(st.one_of(st.sampled_from(["Button", "edit|box", " Menu Item "]),
                                                                  st.text(max_size=6))), draw(_texts)))
    acts: list = []
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["click", "type", "key", "foreign"]))
        if kind == "key" or not elements:
            acts.append(Action("key", None, draw(st.sampled_from(["escape", "a|b", "\\", "ctrl+z"]))))
        elif kind == "foreign":  # an element of another screen is signed all the same
            acts.append(Action("click", Element((0, 0, 5e3, 5e3), "x")))
        else:
            e = draw(st.sampled_from(elements))
            acts.append(Action(kind, e, draw(st.sampled_from(["", "x|y", "a\\\\b", "  sp  "])) if kind == "type" else None))
    return Screen(elements, w, h), acts


@settings(max_examples=300, deadline=None)
@given(_screens_and_actions(), st.sampled_from([1, 2, 30, 97, 2**53, 2**53 + 1, 2**70]))
def test_signatures_match_python_twin(sa, grid):
    ca = _actions_mod()
    screen, acts = sa
    got, want = _outcome(ca.signatures, acts, screen, grid), _outcome(A._signatures_py, acts, screen, grid)
    assert got == want
    if got[0] == "ok":
        assert got[1] == [signature(a, screen, grid) for a in acts]


def test_signatures_of_the_simulated_apps_match_python_twin():
    ca = _actions_mod()
    for name in sorted(sim.APPS):
        app = sim.make_app(name)
        scr = app.reset()
        for act in app.actions(scr)[:12]:
            acts = app.actions(scr)
            assert ca.signatures(acts, scr, 30) == A._signatures_py(acts, scr, 30) and len(acts) > 0
            scr = app.step(act)


def test_explore_is_the_same_with_either_signature_loop(monkeypatch):
    _actions_mod()
    runs = []
    for impl in (A._signatures, A._signatures_py):
        monkeypatch.setattr(A, "_signatures", impl)
        ep = explore(sim.make_app("calc", seed=3), 60, PUCT())
        runs.append(([(s.signature, s.target) for s in ep.steps], ep.metrics))
    assert runs[0] == runs[1] and len(runs[0][0]) == 60


@pytest.mark.parametrize("twin", ["compiled", "python"])
def test_signatures_bad_input(twin):
    f = _actions_mod().signatures if twin == "compiled" else A._signatures_py
    scr = Screen([Element((0, 0, 1, 1), "b")], 10, 10)
    with pytest.raises(InvalidInputError, match="^signature expects a Screen, got dict$"):
        f([], {}, 30)
    for grid in (0, True, 2.0, "3"):
        with pytest.raises(InvalidInputError, match="^grid must be a positive integer, got "):
            f([], scr, grid)
    with pytest.raises(InvalidInputError, match="^signature expects an Action, got str$"):
        f([Action("key", None, "a"), "click"], scr, 30)
    with pytest.raises(OverflowError):  # a center at infinity has no cell, as in signature()
        f([Action("click", Element((1.7e308, 0, 1.7e308, 1), "b"))], scr, 30)


def test_public_signatures_bad_input():
    scr = Screen([], 10, 10)
    for bad in ("click", None, iter([])):
        with pytest.raises(InvalidInputError, match="^signatures expects a sequence of Actions, got "):
            signatures(bad, scr)  # type: ignore[arg-type]
    assert signatures((), scr) == [] and signatures((Action("key", None, "tab"),), scr) == ["key|||tab"]


# -- element bounds
_numbers = st.one_of(st.floats(), st.integers(-10**6, 10**6), st.sampled_from([10**400, -10**400, 2**1023 * 2 - 1, True, False]),
                     st.floats().map(np.float64), st.sampled_from(["1.5", None, 1 + 2j]))


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.lists(_numbers, min_size=3, max_size=5), st.lists(_numbers, min_size=4, max_size=4).map(tuple),
                 st.lists(st.floats(-1e6, 1e6), min_size=4, max_size=4).map(lambda v: (min(v[0], v[2]), min(v[1], v[3]),
                                                                                   max(v[0], v[2]), max(v[1], v[3]))),
                 st.sampled_from([None, "abcd", {0: 1.0}, np.zeros(4), range(4)])))
def test_plain_bounds_match_python_twin(b):
    cm = _model_mod()
    got, want = _outcome(cm.plain_bounds, b), _outcome(M._plain_bounds_py, b)
    assert got[0] == want[0] == "ok" and repr(got[1]) == repr(want[1])
    if got[1] is not None:  # the plain case is a case of the full check, with the same values
        assert repr(M._checked_bounds(b)) == repr(got[1])


def test_plain_bounds_cover_the_common_cases():
    cm = _model_mod()
    assert cm.plain_bounds((0, 1.5, 2, 3)) == (0.0, 1.5, 2.0, 3.0)
    assert cm.plain_bounds([0.0, 0.0, 0.0, 0.0]) == (0.0, 0.0, 0.0, 0.0)
    for other in [(0, 0, 1, np.float64(1)), (0, 0, 1, True), (0, 0, 1), (1, 0, 0, 0), (0, 0, float("inf"), 1),
                  (0, 0, 10**400, 1), "0011", (0, 0, "1", 1)]:
        assert cm.plain_bounds(other) is None


@pytest.mark.parametrize("impl", ["compiled", "python"])
def test_element_checks_are_the_same_with_either_twin(impl, monkeypatch):
    monkeypatch.setattr(M, "_plain_bounds", _model_mod().plain_bounds if impl == "compiled" else M._plain_bounds_py)
    assert Element([1, 2, 3, 4], "b").bounds == (1.0, 2.0, 3.0, 4.0)
    assert Element((np.float64(1), "2", 3, 5), "b").bounds == (1.0, 2.0, 3.0, 5.0)
    for b, msg in [((0, 0, 1), "four numbers"), ((0, 0, 10**400, 1), "four numbers"), ((0, 0, float("nan"), 1), "finite"),
                   ((2, 0, 1, 1), "x1 >= x0"), (None, "four numbers")]:
        with pytest.raises(InvalidInputError, match=f"^element bounds (must be|need) .*{msg}"):
            Element(b, "b")
    with pytest.raises(InvalidInputError, match="^element role must be a string"):
        Element((0, 0, 1, 1), 3)  # type: ignore[arg-type]
