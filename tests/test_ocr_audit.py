"""The OCR audit: its four measures against naive oracles, a hand-made case, the scoring and
report of kept captures, the command's bad input, and a tiny audit of a real application."""

from __future__ import annotations

import math
import pickle
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import SpatialObsError
from spatialobs.cli import main
from spatialobs.screen import Element, Screen, ScreenMeta
from spatialobs.screen.ocr import (
    PAPER,
    Capture,
    audit_measures,
    encode_states,
    false_merge_rate,
    pair_scores,
    recall_at_k,
    render_ocr_audit,
    score_captures,
    successor_consistency,
    view_signature,
)
from tests._drivers import require
from tests.reference import ocr_audit_oracle as oracle

labels = st.lists(st.integers(0, 4), min_size=0, max_size=14)


def _close(a, b):
    if b is None:
        return math.isnan(a)
    return a == pytest.approx(float(b), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_pair_scores_match_the_pair_oracle(data):
    truth = data.draw(labels)
    predicted = data.draw(st.lists(st.integers(0, 4), min_size=len(truth), max_size=len(truth)))
    got = pair_scores(predicted, truth)
    p, r, f = oracle.pair_prf(predicted, truth)
    assert _close(got["precision"], p) and _close(got["recall"], r) and _close(got["f1"], f)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_recall_at_k_matches_the_ranking_oracle(data):
    truth = data.draw(labels)
    n = len(truth)
    # few distinct scores, so that ties (broken towards the earlier capture) are common
    raw = data.draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n * n, max_size=n * n))
    m = np.array(raw, dtype=np.float64).reshape(n, n) if n else np.zeros((0, 0))
    m = np.triu(m, 1) + np.triu(m, 1).T + np.eye(n)
    k = data.draw(st.integers(1, 5))
    r, h, q = recall_at_k(m, truth, k)
    orr, oh, oq = oracle.recall_at_k(m.tolist(), truth, k)
    assert q == oq and _close(r, orr) and _close(h, oh)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_false_merge_rate_matches_the_founder_oracle(data):
    truth = data.draw(labels)
    states = data.draw(st.lists(st.integers(0, 4), min_size=len(truth), max_size=len(truth)))
    rate, merges = false_merge_rate(states, truth)
    orate, omerges = oracle.false_merge_rate(states, truth)
    assert merges == omerges and _close(rate, orate)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_successor_consistency_matches_the_group_oracle(data):
    states = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=12))
    idx = st.integers(0, len(states) - 1)
    transitions = data.draw(st.lists(st.tuples(idx, st.sampled_from(["a", "b"]), idx), max_size=15))
    c, total = successor_consistency(states, transitions)
    oc, ototal = oracle.successor_consistency(states, transitions)
    assert total == ototal and _close(c, oc)


def test_measures_on_a_hand_made_case():
    # truth: screens 0, 1, 3 are one state (A), 2 and 4 another (B)
    truth = ["A", "A", "B", "A", "B"]
    # an encoding that splits screen 3 off and merges screen 4 into A
    states = [0, 0, 1, 2, 0]
    pr = pair_scores(states, truth)
    # true pairs: (0,1) (0,3) (1,3) (2,4) = 4; predicted: (0,1) (0,4) (1,4) = 3; both: (0,1)
    assert (pr["true_pairs"], pr["predicted_pairs"]) == (4, 3)
    assert pr["precision"] == pytest.approx(1 / 3) and pr["recall"] == pytest.approx(1 / 4)
    assert pr["f1"] == pytest.approx(2 / 7)
    # merges: screen 1 into 0 (right), screen 4 into 0 (wrong)
    assert false_merge_rate(states, truth) == (0.5, 2)
    # the same action from state 0 twice: to 1 once and to 2 once -> 1 of 2 consistent
    assert successor_consistency(states, [(0, "click|ok", 2), (1, "click|ok", 3), (2, "key|||escape", 3)]) == (0.5, 2)
    s = np.array([[1, .9, .2, .3, .8],
                  [.9, 1, .2, .9, .1],
                  [.2, .2, 1, .1, .4],
                  [.3, .9, .1, 1, .2],
                  [.8, .1, .4, .2, 1]])
    # k=1: 0 -> 1 (A, 1 of 2), 1 -> 0 (tie with 3, earlier wins: 1 of 2), 2 -> 4 (B, 1 of 1),
    # 3 -> 1 (A, 1 of 2), 4 -> 0 (A, 0 of 1)
    r, h, q = recall_at_k(s, truth, k=1)
    assert q == 5 and r == pytest.approx((0.5 + 0.5 + 1 + 0.5 + 0) / 5) and h == pytest.approx(4 / 5)


def test_measures_reject_bad_input_in_one_line():
    cases = [
        (lambda: recall_at_k(np.eye(2), ["a", "b", "c"]), "scores must be an (3, 3) matrix"),
        (lambda: recall_at_k(np.eye(2), ["a", "b"], k=0), "k must be a positive integer"),
        (lambda: false_merge_rate([0], ["a", "b"]), "differ in length"),
        (lambda: successor_consistency([0, 1], [(0, "a", 5)]), "names a screen outside 0..1"),
        (lambda: audit_measures([], ["a"], []), "differ in length"),
    ]
    for fn, text in cases:
        with pytest.raises(SpatialObsError) as ei:
            fn()
        assert isinstance(ei.value, ValueError) and text in str(ei.value) and "\n" not in str(ei.value)


def _scr(texts, app="mousepad", edit=""):
    els = [Element((10 + 60 * i, 5, 60 + 60 * i, 25), "menu", t, clickable=True) for i, t in enumerate(texts)]
    els.append(Element((0, 40, 600, 400), "text", edit or None, editable=True))
    return Screen(els, 1280, 800, ScreenMeta("desktop", "100%", app))


def _kept_captures():
    base = ["File", "Edit", "Search", "View", "Help"]
    a11y = [_scr(base), _scr(base, edit="hello"), _scr(base + ["Save"]), _scr(base), _scr(base + ["Save"])]
    ocr = [_scr(["FileEdit", "Search", "View", "Help"]), _scr(["FileEdit", "Search", "View", "Help", "hello"]),
           _scr(["FileEdit", "Search", "View", "Help", "Save"]), _scr(["File Edit", "Search", "View", "Help"]),
           _scr(["FileEdit", "Search", "View", "Help", "Save"])]
    cap = Capture("mousepad", screens=a11y, images=[b""] * 5, origins=[(0, 0)] * 5,
                  transitions=[(0, "type|text||1,2|hello", 1), (1, "click|menu|file|0,0", 2),
                               (3, "click|menu|file|0,0", 4)], episodes=2, seconds=1.0)
    return {"mousepad": {"capture": cap, "ocr": ocr, "pictures": 5, "ocr_s": 2.0}, "localc": {"skipped": "no Calc"}}


def test_kept_captures_are_scored_and_reported_with_the_papers_figures():
    runs = _kept_captures()
    res = score_captures(runs, starts=2, steps=2, seed=0)
    view = res["apps"]["mousepad"]["by_truth"]["view"]
    # the view truth ignores what was typed: screens 0, 1, 3 are one state, 2 and 4 another
    assert view["true_states"] == 2
    truth = [view_signature(s) for s in runs["mousepad"]["capture"].screens]
    for enc, screens in (("a11y", runs["mousepad"]["capture"].screens), ("ocr", runs["mousepad"]["ocr"])):
        states, _ = encode_states(screens)
        m = view[enc]
        assert set(PAPER) <= set(m)
        assert m["pair_f1"] == pytest.approx(float(oracle.pair_prf(states, truth)[2]))
        assert m["false_merge_rate"] == pytest.approx(float(oracle.false_merge_rate(states, truth)[0]))
    # the typed "hello" makes the accessibility screen 1 a near-duplicate of 0 (merged, rightly);
    # OCR reads "hello" as a label of its own and "File Edit" with a space on screen 3
    assert view["a11y"]["recall"] > view["ocr"]["recall"]
    # from screens 1 and 3 (one true state) the same click leads to one true state
    assert view["truth_consistency"] == 1.0
    text = render_ocr_audit(res)
    assert "| same-state pair F1 |" in text and "0.740" in text and "0.646" in text
    assert "skipped: no Calc" in text


def test_command_rescores_kept_captures(tmp_path, capsys):
    kept = tmp_path / "kept.pkl"
    with open(kept, "wb") as f:
        pickle.dump({"runs": _kept_captures(), "starts": 2, "steps": 2, "seed": 0}, f)
    out = tmp_path / "docs" / "audit.md"
    assert main(["ocr-audit", "--rescore", str(kept), "--out", str(out)]) == 0
    assert "successor consistency" in out.read_text() and "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("argv, text", [
    (["--starts", "0"], "--starts and --steps must be >= 1"),
    (["--minutes", "0"], "--minutes > 0"),
    (["--apps", ","], "--apps names no application"),
])
def test_command_bad_options_fail_in_one_line(argv, text, tmp_path, capsys):
    assert main(["ocr-audit", *argv, "--out", str(tmp_path / "a.md")]) == 2
    err = capsys.readouterr().err
    assert text in err and err.count("\n") == 1


def test_a_tiny_audit_of_mousepad(tmp_path):
    from spatialobs.screen.drivers.atspi import unavailable_reason

    require(unavailable_reason("mousepad"))
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except ImportError:
        require("rapidocr-onnxruntime is not installed (pip install spatialobs[ocr])")
    from spatialobs.screen.ocr import ocr_audit

    t0 = time.monotonic()
    res = ocr_audit(["mousepad"], starts=1, steps=3, minutes=2, keep=tmp_path / "kept.pkl")
    assert time.monotonic() - t0 < 240
    e = res["apps"]["mousepad"]
    assert e["screens"] == 4 and e["transitions"] == 3 and e["episodes"] == 1
    assert e["ocr_elements"] >= 1
    for t in ("view", "tree"):
        for enc in ("a11y", "ocr"):
            m = e["by_truth"][t][enc]
            assert 0 <= m["pair_f1"] <= 1 and 0 <= m["false_merge_rate"] <= 1
    # under the exact-tree truth the accessibility encoding never splits a true state
    assert e["by_truth"]["tree"]["a11y"]["recall"] == 1.0
    with open(tmp_path / "kept.pkl", "rb") as f:
        kept = pickle.load(f)
    cap = kept["runs"]["mousepad"]["capture"]
    assert len(cap.images) == 4 and all(png[:8] == b"\x89PNG\r\n\x1a\n" for png in cap.images)
    # mousepad's menu bar is text: OCR reads it on the start screen
    first = kept["runs"]["mousepad"]["ocr"][0]
    assert "file" in " ".join(el.text or "" for el in first.elements).lower()
    # rescoring the kept captures gives the same report
    again = score_captures(kept["runs"], starts=1, steps=3, seed=0)
    assert render_ocr_audit(again) == render_ocr_audit(res)
