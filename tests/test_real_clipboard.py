"""Tables 6 and 7 on real Mousepad with the real X clipboard: what must hold exactly, and bad input.

The real runs are skipped with the reason when Mousepad, Xvfb, AT-SPI or xclip are missing; with CI=true they must run.
"""

from __future__ import annotations

import shutil

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import real_clipboard as rc
from spatialobs.screen import studies
from tests._drivers import require


def _require_mousepad_and_xclip():
    from spatialobs.screen.drivers.atspi import unavailable_reason

    require(unavailable_reason("mousepad") or (None if shutil.which("xclip") else "xclip is not installed"))


@pytest.mark.timeout(600)
def test_clipboard_variants_explain_everything_and_the_race_nothing_on_real_mousepad():
    """Slow by design: 16 clean launches of Mousepad (two trials per condition and case)."""
    _require_mousepad_and_xclip()
    r = rc.real_decomposition(trials=2, late_rate=0.5)
    clip, race = r["hidden clipboard"], r["asynchronous race"]
    for case in (clip, race):
        assert (case["matched_sources"], case["matched_signatures"], case["trials"]) == (1, 1, 4)
    assert clip["documents"] == {"alpha": {"alpha": 2}, "beta": {"beta": 2}}
    assert (clip["dispersion"].pooled, clip["dispersion"].within, clip["dispersion"].between) == (1.0, 0.0, 1.0)
    # one early and one late update per condition: the race splits every condition alike
    assert race["early_planned"] == race["early_seen"] == 2
    assert race["documents"] == {"alpha": {"after": 1, "before": 1}, "beta": {"after": 1, "before": 1}}
    assert (race["dispersion"].pooled, race["dispersion"].within) == (1.0, 1.0)
    assert race["dispersion"].between == pytest.approx(0.0, abs=1e-12)
    assert r["faults"] == {}


@pytest.mark.timeout(600)
def test_probe_discloses_the_clipboard_and_escape_does_not_on_real_mousepad(tmp_path):
    """Slow by design: 12 clean launches of Mousepad (one calibration and one test trial per condition and strategy)."""
    _require_mousepad_and_xclip()
    r = rc.real_probe_vs_escape(trials=1)
    assert r["probe (Paste + Undo)"]["accuracy"] == 1.0
    assert r["probe (Paste + Undo)"]["distinct_sequences"] == 2
    assert r["commit at once"]["accuracy"] == r["escape (File menu)"]["accuracy"] == 0.5
    assert r["commit at once"]["distinct_sequences"] == r["escape (File menu)"]["distinct_sequences"] == 1
    assert all(r[k]["reversible"] == 2 for k in ("commit at once", "probe (Paste + Undo)", "escape (File menu)"))
    text = "\n".join(rc.render_real_clipboard({"probe": r, "command": "X"}))
    assert "| probe (Paste + Undo) | 1.000 | 2 | 2 | 2 |" in text and "Regenerate with `X`" in text


def test_the_decomposition_renders_from_its_kept_form():
    from spatialobs.screen.graph import Dispersion

    case = {"trials": 40, "matched_sources": 1, "matched_signatures": 1, "successors": {3: 20, 4: 20},
            "documents": {"alpha": {"alpha": 20}}}
    dec = {"launches": 80, "seconds": 100.0, "faults": {},
           "hidden clipboard": {**case, "dispersion": Dispersion(1.0, 0.0, 1.0)},
           "asynchronous race": {**case, "dispersion": Dispersion(0.971, 0.971, 0.0), "early_planned": 16,
                                 "early_seen": 16}}
    kept = rc.decomposition_record(dec)
    assert kept["hidden clipboard"]["dispersion"] == {"pooled": 1.0, "within": 0.0, "between": 1.0}
    assert isinstance(dec["hidden clipboard"]["dispersion"], Dispersion)  # the result itself is left as it was
    text = "\n".join(rc.render_real_clipboard({"decomposition": kept}))
    assert "| hidden clipboard | 1.000 | 0.000 | 1.000 | 40 | 1 / 1 | s3: 20, s4: 20 | alpha: 'alpha' x20 |" in text
    assert "| asynchronous race | 0.971 | 0.971 | 0.000 |" in text and "showed it first in 16" in text


def test_a_set_selection_serves_its_text_when_it_returns():
    """Read back at once, 20 times alternating: never the previous owner's text (each trial relies on it)."""
    _require_mousepad_and_xclip()
    from spatialobs.screen.drivers.atspi import AtspiDriver

    with AtspiDriver("mousepad") as d:
        d.reset()
        for i in range(20):
            text = ("alpha", "beta")[i % 2] + str(i)
            rc.set_selection(d, text)
            assert rc._selection(d) == text
        rc.set_selection(d, "first", "primary")
        assert (rc._selection(d, "primary"), rc._selection(d)) == ("first", "beta19")


@pytest.mark.parametrize("call, message", [
    (lambda: rc.real_decomposition(trials=0), "trials must be a positive integer, got 0"),
    (lambda: rc.real_decomposition(late_rate=1.5), "late_rate must lie in [0, 1], got 1.5"),
    (lambda: rc.real_decomposition(conditions=["alpha", "alpha"]),
     "conditions must name at least two values, got ['alpha', 'alpha']"),
    (lambda: rc.real_probe_vs_escape(trials=2, calibration=True), "trials must be a positive integer, got True"),
    (lambda: rc.real_probe_vs_escape(conditions=["alpha"]), "conditions must name at least two values, got ['alpha']"),
    (lambda: rc.set_selection(None, "x", "secondary"), "selection must be 'clipboard' or 'primary', got 'secondary'"),
    (lambda: rc.set_selection(None, "x", delay=-1), "delay must be >= 0 s, got -1"),
    (lambda: studies.write_real_clipboard("r.md", trials=-3), "trials must be a positive integer, got -3"),
])
def test_bad_input_is_rejected_before_anything_launches(call, message):
    with pytest.raises(InvalidInputError) as exc:
        call()
    assert str(exc.value) == message


def test_the_report_renders_kept_clipboard_tables_after_the_applications(tmp_path):
    dd = {"pooled": 1.0, "within": 0.0, "between": 1.0}
    case = {"dispersion": dd, "matched_sources": 1, "matched_signatures": 1, "successors": {"1": 2, "2": 2},
            "trials": 4, "documents": {"alpha": {"alpha": 2}, "beta": {"beta": 2}}}
    dec = {"hidden clipboard": case, "asynchronous race": {**case, "early_planned": 2, "early_seen": 2},
           "launches": 8, "faults": {}, "seconds": 20.0}
    studies.save_real_results(tmp_path / "r.md", {"clipboard": {"decomposition": dec, "command": "C", "date": "D"}})
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "| hidden clipboard | 1.000 | 0.000 | 1.000 | 4 | 1 / 1 | s1: 2, s2: 2 |" in text
    assert "scheduled to land first in 2 of 4 trials and the screen showed it first in 2" in text
    assert "Table 7" not in text
