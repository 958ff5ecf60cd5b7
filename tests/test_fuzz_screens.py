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
