"""The canvas-side fuzzer in the normal suite: a fixed small budget, and every kept finding.

Inputs are mutated from every shared ``.tldr`` and ``.excalidraw`` file and from an op
reply holding every op (see :mod:`tests.fuzz.canvas_targets`), run through load →
observe → to_json → to_tldraw / to_excalidraw and parse_ops + Executor by the
harness of :mod:`tests.fuzz.screens`. Deep runs::

    python -m tests.fuzz.screens --target canvas_targets --iterations 100000 --jobs 2 \\
        --keep tests/data/fuzz/canvas --minimize

Kept findings live in ``tests/data/fuzz/canvas``: inputs that escaped as another
exception type, crashed or hung before their fix, minimized where the harness could.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fuzz import canvas_targets, suite

CASES_DIR = Path(__file__).resolve().parent / "data" / "fuzz" / "canvas"
CASES = sorted(p for p in CASES_DIR.iterdir() if p.suffix == ".json") if CASES_DIR.is_dir() else []

#: Inputs per suite run (a few seconds) and their seed (SPATIALOBS_FUZZ_SEED varies it locally).
BUDGET = 100
SEED = int(os.environ.get("SPATIALOBS_FUZZ_SEED", "20240501"))


@pytest.mark.fuzz_budget
def test_fuzz_budget_canvases_and_op_replies():
    suite.check_budget(canvas_targets, BUDGET, SEED)


def test_the_corpus_is_kept():
    assert len(CASES) >= 5


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_kept_finding_stays_fixed(path):
    suite.check_kept(canvas_targets, path)


def test_inputs_are_a_function_of_seed_and_number():
    for n in range(5):
        a, b = canvas_targets.make_input(7, n), canvas_targets.make_input(7, n)
        assert a[0] == b[0] and repr(a[1]) == repr(b[1])


def test_every_shared_canvas_and_every_op_is_a_seed():
    docs, _ = canvas_targets.seeds()
    assert len(docs) == max(1, len(list(canvas_targets.CANVASES.glob("*.tldr"))) +
                            len(list(canvas_targets.CANVASES.glob("*.excalidraw"))))
    from spatialobs.canvas.editing.ops import OP_NAMES

    assert {op["op"] for op in canvas_targets.SEED_OPS} == set(OP_NAMES)
