"""Appendix D: the reference labelling, pair F1, the τ sweep, the one-factor study on real Mousepad, bad input.

The study itself runs on real Mousepad (skipped with the reason when it cannot run here; with CI=true it must).
"""

from __future__ import annotations

import json
import math

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import Element, Screen, ScreenMeta
from spatialobs.screen import sensitivity as sens
from spatialobs.screen import studies
from tests._drivers import require

META = ScreenMeta(app="editor")


def _window(doc: str, title: str = "notes.txt - Editor", menu: int = 0, shift: float = 0.0,
            dialog: bool = False) -> Screen:
    # an editor window: a title, 20 labelled buttons, the document; `menu` items open below the first button;
    # `dialog` a question with two buttons over the document
    els = [Element((0, 0, 640, 20), "frame", title)]
    if dialog:
        els += [Element((200, 200, 440, 300), "dialog", "Save changes?"),
                Element((210, 260, 300, 290), "push button", "Save", clickable=True),
                Element((340, 260, 430, 290), "push button", "Discard", clickable=True)]
    els += [Element((10 + 30 * i, 22, 38 + 30 * i, 40), "push button", f"Tool {i}", clickable=True)
            for i in range(20)]
    els += [Element((10, 42 + 20 * k, 200, 60 + 20 * k), "menu item", f"Item {k}", clickable=True)
            for k in range(menu)]
    els.append(Element((0, 300 + shift, 640, 480), "text", doc, editable=True))
    return Screen(els, 640, 480, META)


def _hand_made():
    # three reference states: the window whatever its document (3 screens), with a dialog open (1),
    # and with a menu of 8 items open (2 screens, the document differs)
    return [_window("hello"), _window("hello world"), _window("", shift=1.0), _window("hello", dialog=True),
            _window("hello", menu=8), _window("bye", menu=8)]


def test_pair_f1_counts_pairs_of_items():
    assert sens.pair_f1([0, 0, 1, 1], ["a", "a", "b", "b"])["f1"] == 1.0
    r = sens.pair_f1([0, 0, 0, 1], ["a", "a", "b", "b"])
    assert (r["tp"], r["fp"], r["fn"], r["items"]) == (1, 2, 1, 4)
    assert math.isclose(r["precision"], 1 / 3) and r["recall"] == 0.5 and math.isclose(r["f1"], 0.4)
    # no pair merged by either: agreement on every pair
    assert sens.pair_f1([0, 1, 2], ["a", "b", "c"]) == {"tp": 0, "fp": 0, "fn": 0, "items": 3, "precision": 1.0,
                                                        "recall": 1.0, "f1": 1.0}
    # the partition merges nothing, the reference merges everything: F1 0, recall 0
    r = sens.pair_f1([0, 1, 2], ["a", "a", "a"])
    assert (r["fn"], r["recall"], r["f1"], r["precision"]) == (3, 0.0, 0.0, 1.0)


def test_reference_key_drops_content_positions_and_digits_but_not_labels_or_the_modified_mark():
    a, b, c, dialog, menu, menu2 = _hand_made()
    key = sens.reference_key
    assert key(a) == key(b) == key(c)                  # the document's text and place are content
    assert key(a) != key(dialog)
    assert key(a) != key(_window("hello", "*notes.txt - Editor"))  # the title's modified mark is part of the state
    assert key(a) != key(menu) and key(menu) == key(menu2)
    numbered = Screen([Element((0, 0, 9, 9), "frame", "Untitled 1"), Element((0, 10, 9, 20), "label", "Line 3")], 10, 30)
    renum = Screen([Element((0, 0, 9, 9), "frame", "Untitled  2"), Element((0, 10, 9, 20), "label", "Line 17")], 10, 30)
    assert key(numbered) == key(renum)
    relabel = Screen([Element((0, 0, 9, 9), "frame", "Untitled 1"), Element((0, 10, 9, 20), "label", "Col 3")], 10, 30)
    assert key(numbered) != key(relabel)
    rerole = Screen([Element((0, 0, 9, 9), "frame", "Untitled 1"), Element((0, 10, 9, 20), "button", "Line 3")], 10, 30)
    assert key(numbered) != key(rerole)
    other_app = Screen(numbered.elements, 10, 30, ScreenMeta(app="other"))
    assert key(numbered) != key(other_app)


def test_the_default_tau_gives_exactly_the_reference_partition_of_the_hand_made_set():
    screens = _hand_made()
    ref = [sens.reference_key(s) for s in screens]
    labels = sens.merge_labels(screens, 0.93)
    assert labels == [0, 0, 0, 1, 2, 2]
    r = sens.pair_f1(labels, ref)
    assert (r["tp"], r["fp"], r["fn"], r["f1"]) == (4, 0, 0, 1.0)
    # exact matching keeps the documents apart: every reference pair is missed
    r = sens.pair_f1(sens.merge_labels(screens, 1.0), ref)
    assert (r["tp"], r["fp"], r["fn"], r["f1"]) == (0, 0, 4, 0.0)
    # a low threshold merges the dialog with the plain window: precision drops
    r = sens.pair_f1(sens.merge_labels(screens, 0.5), ref)
    assert r["fp"] > 0 and r["recall"] == 1.0 and r["f1"] < 1.0


def test_tau_sweep_on_the_hand_made_set_is_nested_and_peaks_at_the_reference():
    sw = sens.tau_sweep([_hand_made(), _hand_made()[:3]], taus=[1.0, 0.5, 0.93, 0.97])
    assert sw["taus"] == [0.5, 0.93, 0.97, 1.0] and sw["items"] == 9 and sw["episodes"] == 2
    assert sw["nested"] is True and sw["not_nested"] == []
    by = {x["tau"]: x for x in sw["rows"]}
    assert by[0.93]["f1"] == 1.0 and by[0.93]["tp"] == 4 + 3 and by[0.93]["states"] == 3 + 1
    assert by[0.93]["reference_states"] == 4 and by[0.93]["f1_per_episode"] == [1.0, 1.0]
    merged = [x["tp"] + x["fp"] for x in sw["rows"]]
    assert merged == sorted(merged, reverse=True)


@pytest.mark.parametrize("factors, message", [
    ({"lambda": [0.5]}, "unknown parameter 'lambda'; the sensitivity study varies tau, kappa and u0"),
    ({"tau": [0.0]}, "tau must be a number in (0, 1], got 0.0"),
    ({"tau": [1.5]}, "tau must be a number in (0, 1], got 1.5"),
    ({"tau": [float("nan")]}, "tau must be a number in (0, 1], got nan"),
    ({"tau": ["0.9"]}, "tau must be a number in (0, 1], got '0.9'"),
    ({"kappa": [0]}, "kappa must be a finite number above 0, got 0"),
    ({"kappa": [float("inf")]}, "kappa must be a finite number above 0, got inf"),
    ({"u0": [1.25]}, "u0 must be a number in [0, 1], got 1.25"),
    ({"u0": [True]}, "u0 must be a number in [0, 1], got True"),
    ({"tau": [0.93]}, "tau 0.93 is the default, which the study runs once for every factor"),
    ({"kappa": [5, 5.0]}, "kappa values [5, 5.0] name a value twice"),
    ([("tau", 0.9)], "factors must map tau, kappa or u0 to values, got list"),
])
def test_bad_factors_are_rejected_before_launching(factors, message):
    with pytest.raises(InvalidInputError) as exc:
        sens.check_factors(factors)
    assert str(exc.value) == message
    with pytest.raises(InvalidInputError) as exc:
        sens.real_sensitivity("mousepad", starts=1, steps=1, factors=factors)
    assert str(exc.value) == message


def test_other_bad_inputs_name_what_is_wrong():
    with pytest.raises(InvalidInputError, match=r"^tau must be a number in \(0, 1\], got 0$"):
        sens.merge_labels(_hand_made(), 0)
    with pytest.raises(InvalidInputError, match=r"^tau must be a number in \(0, 1\], got -0.1$"):
        sens.tau_sweep([_hand_made()], taus=[0.9, -0.1])
    with pytest.raises(InvalidInputError, match=r"^taus \[0.9, 0.9\] name a tau twice$"):
        sens.tau_sweep([_hand_made()], taus=[0.9, 0.9])
    with pytest.raises(InvalidInputError, match=r"^tau_sweep needs at least one tau$"):
        sens.tau_sweep([_hand_made()], taus=[])
    with pytest.raises(InvalidInputError, match=r"^pair_f1 needs one label and one reference label per item; "
                                                r"got 2 labels and 3 reference labels$"):
        sens.pair_f1([0, 1], ["a", "b", "c"])
    with pytest.raises(InvalidInputError, match=r"^reference_key takes a Screen, got dict$"):
        sens.reference_key({"elements": []})
    with pytest.raises(InvalidInputError, match=r"^unknown real application 'word'; choose from mousepad, "):
        sens.real_sensitivity("word")
    with pytest.raises(InvalidInputError, match=r"^starts must be a positive integer, got 0$"):
        sens.real_sensitivity("mousepad", starts=0)
    with pytest.raises(InvalidInputError, match=r"^taus \[\] must name at least one tau, each once$"):
        sens.real_sensitivity("mousepad", taus=[])


@pytest.mark.timeout(300)
def test_real_sensitivity_on_mousepad_renders_appendix_d(tmp_path):
    """Slow by design: 4 settings x 2 starts of 5 actions on real Mousepad, each episode a clean launch."""
    from spatialobs.screen.drivers.atspi import unavailable_reason

    require(unavailable_reason("mousepad"))
    out = tmp_path / "real-apps.md"
    kept = {"ablation-mousepad": {"kind": "ablation", "app": "mousepad", "skipped": "kept"}}
    out.with_suffix(".json").write_text(json.dumps(kept), encoding="utf-8")
    factors = {"tau": [0.85], "kappa": [5.0], "u0": [0.75]}

    class Meanwhile:
        # the episode log; its first line stands for another run writing its section into the JSON meanwhile
        lines: list = []

        def write(self, text):
            if not self.lines:
                both = {**kept, "clipboard": {"kind": "clipboard", "skipped": "written meanwhile"}}
                out.with_suffix(".json").write_text(json.dumps(both), encoding="utf-8")
            self.lines.append(text)

        def flush(self):
            pass

    log = Meanwhile()
    r = studies.write_real_sensitivity(out, "mousepad", starts=2, steps=5, factors=factors, log=log,
                                       command="spatialobs studies --real --sensitivity Z")
    assert sum("pair F1" in x for x in log.lines) == 4 * 2
    assert list(r["rows"]) == ["default", "τ = 0.85", "κ = 5", "u₀ = 0.75"]
    for lb, c in r["rows"].items():
        assert len(c["new_states"]) == len(c["state_auc"]) == len(c["f1_per_start"]) == 2
        assert c["metrics"]["new_states"]["n"] == 2
        assert all(0.0 <= f <= 1.0 for f in c["f1_per_start"])
        p = c["pairs"]
        assert p["f1"] == (2 * p["tp"] / (2 * p["tp"] + p["fp"] + p["fn"]) if p["tp"] + p["fp"] + p["fn"] else 1.0)
        assert 1 <= p["items"] <= 2 * 5
        assert all(s <= p["items"] for s in c["states_per_start"])
    assert r["rows"]["κ = 5"]["values"] == {"tau": 0.93, "kappa": 5.0, "u0": 0.5}
    # the sweep runs on the default row's screens: at the default τ it is that row, pair for pair
    sw = r["sweep"]
    assert sw["nested"] is True
    at = next(x for x in sw["rows"] if x["tau"] == 0.93)
    d = r["rows"]["default"]["pairs"]
    assert (at["tp"], at["fp"], at["fn"], at["items"]) == (d["tp"], d["fp"], d["fn"], d["items"])
    assert at["f1_per_episode"] == r["rows"]["default"]["f1_per_start"]
    merged = [x["tp"] + x["fp"] for x in sw["rows"]]
    assert merged == sorted(merged, reverse=True)
    text = out.read_text(encoding="utf-8")
    assert "## Appendix D on real mousepad: one-factor sensitivity of τ, κ and u₀" in text
    assert "Regenerate with `spatialobs studies --real --sensitivity Z`" in text
    assert text.count("| setting | new states | state AUC |") == 1
    for lb in r["rows"]:
        assert f"| {lb} |" in text
    assert "Merging nested in τ (every pair merged at a τ is merged at each lower τ): yes." in text
    assert sorted(studies.load_real_results(out.with_suffix(".json"))) == ["ablation-mousepad", "clipboard",
                                                                           "sensitivity-mousepad"]


def test_studies_real_sensitivity_names_its_command_and_rejects_bad_combinations(monkeypatch):
    from spatialobs import cli
    from tests.test_cli import run
    from tests.test_cli_bad_input import _one_error_line

    calls = []
    monkeypatch.setattr(studies, "write_real_sensitivity",
                        lambda out, app, starts, steps, seed, **k: calls.append((out, app, starts, steps, k["command"]))
                        or {})
    assert cli.main(["studies", "--real", "--sensitivity"]) == 0
    assert cli.main(["studies", "--real", "--sensitivity", "--apps", "pcmanfm", "--steps", "20"]) == 0
    assert calls == [("docs/results/real-apps.md", "mousepad", 10, 50,
                      "spatialobs studies --real --sensitivity --apps mousepad --starts 10 --steps 50"),
                     ("docs/results/real-apps.md", "pcmanfm", 10, 20,
                      "spatialobs studies --real --sensitivity --apps pcmanfm --starts 10 --steps 20")]
    out = run("studies", "--real", "--sensitivity", "--apps", "mousepad,pcmanfm")
    assert _one_error_line(out) == ("spatialobs: error: --sensitivity takes one application of mousepad, pcmanfm, "
                                    "localc, jupyterlab in --apps, got 'mousepad,pcmanfm'")
    out = run("studies", "--real", "--sensitivity", "--ablation")
    assert _one_error_line(out) == "spatialobs: error: --ablation and --sensitivity are two studies; run one at a time"
    out = run("studies", "--real", "--sensitivity", "--starts", "-2")
    assert _one_error_line(out) == "spatialobs: error: starts must be a positive integer, got -2"
