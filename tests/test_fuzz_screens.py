"""The screen-side fuzzer in the normal suite: a fixed small budget, and every kept finding.

The budget run is bounded twice: a fixed number of inputs (about ten seconds) and a
time bound per input in the harness. Deep runs use the same harness::

    python -m tests.fuzz.screens --iterations 1000000 --jobs 2

Kept findings live in ``tests/data/fuzz``: inputs that escaped as another exception
type, crashed or hung before their fix, minimized where the harness could.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fuzz import screens, suite, targets

FUZZ_DATA = Path(__file__).resolve().parent / "data" / "fuzz"
CASES = sorted(p for p in FUZZ_DATA.iterdir() if p.suffix in (".json", ".spobs")) if FUZZ_DATA.is_dir() else []

#: Inputs per suite run and their seed (SPATIALOBS_FUZZ_SEED varies it locally).
BUDGET = 800
SEED = int(os.environ.get("SPATIALOBS_FUZZ_SEED", "20240501"))


@pytest.mark.fuzz_budget
def test_fuzz_budget_screens_and_index_files():
    suite.check_budget(targets, BUDGET, SEED)


def test_the_corpus_is_kept():
    assert len(CASES) >= 5


@pytest.mark.timeout(suite.KEPT_LIMIT)
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_kept_finding_stays_fixed(path):
    suite.check_kept(targets, path)


def test_inputs_are_a_function_of_seed_and_number():
    a, b = targets.make_input(7, 123), targets.make_input(7, 123)
    assert a[0] == b[0] and repr(a[1]) == repr(b[1])


def test_the_harness_sees_escapes_crashes_and_hangs(monkeypatch):
    # Planted failures: the worker raises at input 2, aborts at 4 and sleeps at 6.
    monkeypatch.setenv("SPATIALOBS_FUZZ_PLANT", "escape:2,crash:4,hang:6")
    figures = screens.run(9, seed=SEED, jobs=1, timeout=3.0)
    assert figures.inputs == 9
    assert figures.escapes == {"KeyError@?": [2]}
    assert [i for i, _ in figures.crashes] == [4] and figures.hangs == [6]


def test_a_number_mutation_of_a_huge_integer_is_an_input_not_a_harness_failure():
    # A huge JSON integer (exact in Python) times 1e6 overflows a float: the mutator used to
    # raise OverflowError while making the input, which ended a deep run's worker early.
    import random

    from tests.fuzz import mutate

    doc = {"a": 10**400, "b": [2**1100]}
    for s in range(300):
        mutate.mutate(doc, random.Random(s), rounds=3)


def test_a_generator_failure_is_reported_and_the_run_goes_on(monkeypatch, capsys):
    def broken(seed, number):
        if number == 1:
            raise OverflowError("planted")
        return real(seed, number)

    real = targets.make_input
    monkeypatch.setattr(targets, "make_input", broken)
    screens.worker(SEED, [0, 1, 2])  # in this process: the patched generator is the one used
    lines = capsys.readouterr().out.splitlines()
    assert "S 1 generator" in lines and "E 1 generator:OverflowError@?" in lines
    assert any(x.startswith("S 2 ") for x in lines) and lines[-1] == "D"


def test_a_worker_dying_between_inputs_is_a_crash_and_the_run_goes_on(monkeypatch):
    monkeypatch.setenv("SPATIALOBS_FUZZ_PLANT", "silent-crash:3")
    figures = screens.run(6, seed=SEED, jobs=1, timeout=5.0)
    assert [i for i, _ in figures.crashes] == [3]
    assert figures.inputs == 5  # 0, 1, 2, 4, 5: input 3 never started
