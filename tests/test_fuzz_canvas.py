"""The canvas-side fuzzer in the normal suite: a fixed small budget, and every kept finding.

Inputs are mutated from every shared ``.tldr`` and ``.excalidraw`` file and from an op
reply holding every op (see :mod:`tests.fuzz.canvas_targets`), run through load →
observe → to_json → to_tldraw / to_excalidraw and parse_ops + Executor by the
harness of :mod:`tests.fuzz.screens`. Deep runs::

    python -m tests.fuzz.screens --target canvas_targets --iterations 100000 --jobs 2 \\
        --keep tests/data/fuzz/canvas --minimize

Kept findings live in ``tests/data/fuzz/canvas``: inputs that escaped as another
exception type, crashed or hung before their fix, minimized where the harness could.
Each carries what it runs on (an op reply, a made-up document of the one it was found
on) and runs under a hard limit (its test's timeout): what it checks never depends on
the files beside the checkout, and a finding that hangs again fails with its stack.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fuzz import canvas_targets, mutate, suite

CASES_DIR = Path(__file__).resolve().parent / "data" / "fuzz" / "canvas"
CASES = sorted(p for p in CASES_DIR.iterdir() if p.suffix == ".json") if CASES_DIR.is_dir() else []

#: Inputs per suite run (a few seconds) and their seed (SPATIALOBS_FUZZ_SEED varies it locally).
BUDGET = 100
SEED = int(os.environ.get("SPATIALOBS_FUZZ_SEED", "20240501"))


@pytest.mark.timeout(300)
@pytest.mark.fuzz_budget
def test_fuzz_budget_canvases_and_op_replies():
    """Slow by design: 100 fuzz inputs in a worker process, most a mutated real canvas (up to 2,504 shapes)
    observed and written in three formats (52 s on the shared 2-core machine under load).
    """
    suite.check_budget(canvas_targets, BUDGET, SEED)


def test_the_corpus_is_kept():
    assert len(CASES) >= 5


@pytest.mark.timeout(suite.KEPT_LIMIT)
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


OPS_CASES = [p for p in CASES if p.name.endswith(".ops.json")]


@pytest.mark.parametrize("path", OPS_CASES, ids=lambda p: p.name)
def test_a_kept_op_reply_carries_the_document_it_runs_on(path):
    # not an index into the files beside the checkout: a checkout without them ran another case
    _, payload = canvas_targets.load_case(path)
    assert isinstance(payload["canvas"], dict) and isinstance(payload.get("found_on"), str)
    text = json.dumps(payload["canvas"])
    assert len(text) < 20_000, "a kept case carries a skeleton, not a copy of a real document"


def _report(doc, payload):
    from spatialobs.canvas import Executor, load

    canvas = load(mutate.materialize(doc))
    reply = mutate.materialize(payload["ops"])
    ex = Executor(canvas)
    if payload.get("as_text"):
        report = ex.apply("```canvas_ops\n" + json.dumps(reply) + "\n```")
    else:
        ops = reply.get("ops") if isinstance(reply, dict) else reply
        report = ex.apply(ops if isinstance(ops, list) else [ops])
    return report.to_dict(), sorted(set(canvas.nodes) - set(load(mutate.materialize(doc)).nodes))


@pytest.mark.parametrize("path", [p for p in OPS_CASES if "built-in" not in p.name], ids=lambda p: p.name)
def test_a_kept_reply_does_on_its_skeleton_what_it_did_on_the_document_it_was_found_on(path):
    _, payload = canvas_targets.load_case(path)
    found_on = canvas_targets.CANVASES / payload["found_on"]
    if not found_on.is_file():
        pytest.skip(f"{found_on.name} (the real document the case was found on) is absent: ../shared/data")
    with open(found_on, encoding="utf-8") as f:
        real = json.load(f)
    assert _report(payload["canvas"], payload) == _report(real, payload)


def test_a_skeleton_keeps_the_form_and_pages_and_none_of_the_content():
    doc = {"tldrawFileFormatVersion": 1, "schema": {"schemaVersion": 2}, "records": [
        {"id": "document:document", "typeName": "document", "name": "", "gridSize": 10, "meta": {"private": 1}},
        {"id": "page:x", "typeName": "page", "name": "Secret plans", "index": "a1", "meta": {}},
        {"id": "page:y", "typeName": "page", "name": "More", "index": "a2", "meta": {}},
        {"id": "instance:instance", "typeName": "instance", "currentPageId": "page:y"},
        {"id": "shape:q", "typeName": "shape", "type": "geo", "parentId": "page:y", "index": "a1", "x": 5, "y": 9,
         "props": {"geo": "ellipse", "w": 3, "h": 4, "text": "confidential", "color": "red"}},
        {"id": "shape:r", "typeName": "shape", "type": "geo", "parentId": "page:y", "index": "a2", "x": 5, "y": 9,
         "props": {"geo": "rectangle", "w": 3, "h": 4, "text": "more", "color": "red"}}]}
    sk = canvas_targets.skeleton(doc)
    assert "confidential" not in json.dumps(sk) and "Secret" not in json.dumps(sk) and "private" not in json.dumps(sk)
    assert sk["schema"] == doc["schema"] and sk["tldrawFileFormatVersion"] == 1
    assert [r["id"] for r in sk["records"] if r["typeName"] == "page"] == ["page:p1", "page:p2"]
    assert next(r for r in sk["records"] if r["typeName"] == "instance")["currentPageId"] == "page:p2"
    shapes = [r for r in sk["records"] if r["typeName"] == "shape"]
    assert [(s["type"], s["props"]["geo"], s["props"]["w"]) for s in shapes] == [("geo", "ellipse", 100)]
    from spatialobs.canvas import load

    assert list(load(sk).page_ids()) == ["page:p1", "page:p2"]


def test_an_op_input_naming_its_document_by_index_is_refused():
    with pytest.raises(ValueError, match="carries the document it runs on"):
        canvas_targets.run("ops", {"canvas": 4, "ops": {"ops": []}}, ".")
