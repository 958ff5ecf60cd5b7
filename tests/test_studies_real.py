"""The real-application study: Random beside PUCT and Greedy from matched starts, kept results, bad input.

The study itself runs on real Mousepad (skipped with the reason when it cannot run here; with CI=true it must).
"""

from __future__ import annotations

import json

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import studies
from tests._drivers import require


def _kept_calc():
    # a kept section of an application not rerun, with only two of the three selectors
    m = {k: {"mean": 1.0} for k in studies.METRICS}
    sel = {name: {"metrics": m, "new_states": [1, 2], "steps_per_s": 0.5, "our_share": 0.01, "failed": 0,
                  "captures": 0} for name in ("puct", "greedy")}
    return {"starts": 2, "steps": 5, "selectors": sel, "faults": {}, "launches": 4, "seconds": 9.0,
            "command": "spatialobs studies --real --apps localc --starts 2 --steps 5", "date": "2026-01-01",
            "note": "Too slow for this run."}


@pytest.mark.timeout(600)
def test_real_study_runs_random_beside_puct_and_greedy_on_mousepad(tmp_path):
    """Slow by design: 3 selectors x 2 starts of 4 actions on real Mousepad, each episode a clean launch."""
    from spatialobs.screen.drivers.atspi import unavailable_reason

    require(unavailable_reason("mousepad"))
    out = tmp_path / "real-apps.md"
    out.with_suffix(".json").write_text(json.dumps({"localc": _kept_calc()}), encoding="utf-8")
    res = studies.write_real_report(out, ["mousepad"], {"mousepad": (2, 4)}, command="spatialobs studies --real X")
    r = res["mousepad"]
    assert list(r["selectors"]) == ["puct", "greedy", "random"]
    for c in r["selectors"].values():
        assert len(c["new_states"]) == len(c["state_auc"]) == 2
        assert c["metrics"]["new_states"]["n"] == 2
    for other in ("greedy", "random"):
        w = r["matched"][other]
        assert w == studies.matched_wins(r["selectors"]["puct"]["new_states"], r["selectors"][other]["new_states"])
        assert w["wins"] + w["ties"] + w["losses"] == 2
    text = out.read_text(encoding="utf-8")
    # the kept application stays, before the one just run (report order), and says what it lacks and why
    assert text.index("## mousepad") < text.index("## localc")
    assert "**Random not run.** Too slow for this run." in text
    assert "Regenerate with `spatialobs studies --real X`" in text
    assert "Regenerate with `spatialobs studies --real --apps localc --starts 2 --steps 5` (run 2026-01-01)" in text
    assert "| Random |" in text and "than Random on" in text
    kept = studies.load_real_results(out.with_suffix(".json"))
    assert sorted(kept) == ["localc", "mousepad"] and kept["localc"] == _kept_calc()
    assert (tmp_path / "real-apps-mousepad.svg").exists()


@pytest.mark.parametrize("selectors, message", [
    (["bogus"], "unknown selector 'bogus' for the real-application study; choose from puct, greedy, random"),
    ([], "selectors names no selector; choose from puct, greedy, random"),
    (["puct", "random", "puct"], "selectors ['puct', 'random', 'puct'] name a selector twice"),
])
def test_real_study_rejects_bad_selectors_before_launching(selectors, message):
    with pytest.raises(InvalidInputError) as exc:
        studies.real_apps(["mousepad"], selectors=selectors)
    assert str(exc.value) == message


def test_matched_wins_counts_and_rejects_unmatched_lists():
    assert studies.matched_wins([3, 1, 2, 2], [1, 1, 5, 0]) == {"wins": 2, "ties": 1, "losses": 1, "n": 4}
    with pytest.raises(InvalidInputError, match=r"^matched_wins needs two equally long, nonempty lists; got 2 and 1"):
        studies.matched_wins([1, 2], [1])
    with pytest.raises(InvalidInputError, match="got 0 and 0"):
        studies.matched_wins([], [])


def test_unreadable_kept_results_stop_the_run_before_anything_is_written(tmp_path):
    out = tmp_path / "real-apps.md"
    out.with_suffix(".json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"real-apps.json: cannot read the kept real-application results"):
        studies.write_real_report(out, ["mousepad"], {"mousepad": (1, 1)})
    out.with_suffix(".json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"real-apps.json: expected a JSON object of per-application results"):
        studies.write_real_report(out, ["mousepad"], {"mousepad": (1, 1)})
    assert not out.exists()


def test_rendering_kept_results_names_what_was_not_run(tmp_path):
    studies.save_real_results(tmp_path / "r.md", {"localc": _kept_calc()})
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "(PUCT, Greedy)" in text and "**Random not run.**" in text
    assert "- Per start (matched), PUCT found more new states than Greedy on 0 of 2 starts (2 ties, 0 fewer)." in text
    assert "than Random" not in text


class _SimDriver:
    """The simulated Notepad behind a real driver's face (app name, faults, launches, a context manager)."""

    def __init__(self, app, seed=0):
        from spatialobs.screen import sim

        self._sim = sim.make_app("notepad", seed)
        self.app = "notepad"
        self.faults = {}
        self.launches = 0

    def __getattr__(self, name):
        return getattr(self._sim, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_real_ablation_runs_every_row_from_matched_starts_and_renders_table_5(tmp_path, monkeypatch):
    import spatialobs.screen.drivers as drivers

    monkeypatch.setattr(drivers, "make_driver", lambda app, seed=0: _SimDriver(app, seed))
    out = tmp_path / "real-apps.md"
    out.with_suffix(".json").write_text(json.dumps({"localc": _kept_calc()}), encoding="utf-8")
    res = studies.write_real_ablation(out, "mousepad", starts=2, steps=6, command="spatialobs studies --real Y")
    assert list(res["rows"]) == list(studies.REAL_ABLATIONS)
    for lb, c in res["rows"].items():
        lam, prior, tau = studies.REAL_ABLATIONS[lb]
        assert (c["lambdas"], c["prior"], c["tau"]) == (list(lam), prior, tau)
        assert len(c["new_states"]) == len(c["state_auc"]) == len(c["states_tau"]) == 2
        assert all(1 <= k <= 6 for k in c["states_tau"])
    text = out.read_text(encoding="utf-8")
    assert "## Table 5 on real mousepad" in text and "## localc" in text
    assert "Regenerate with `spatialobs studies --real Y`" in text
    for lb in studies.REAL_ABLATIONS:
        assert f"| {lb} |" in text
    kept = studies.load_real_results(out.with_suffix(".json"))
    assert sorted(kept) == ["ablation-mousepad", "localc"] and kept["localc"] == _kept_calc()


def test_real_ablation_rejects_bad_rows_and_apps_before_launching():
    with pytest.raises(InvalidInputError, match="unknown ablation row 'bogus'"):
        studies.real_ablation("mousepad", rows=["bogus"])
    with pytest.raises(InvalidInputError, match="unknown real application 'nope'"):
        studies.real_ablation("nope")


def test_real_study_runs_the_leave_rate_puct_where_the_table_names_it(tmp_path, monkeypatch):
    """JupyterLab's PUCT is the "leave" setting (REAL_PUCT), the other applications' the default; the report says so."""
    import spatialobs.screen.drivers as drivers

    monkeypatch.setattr(drivers, "make_driver", lambda app, seed=0: _SimDriver(app, seed))
    made = []
    make = studies._make
    monkeypatch.setattr(studies, "_make", lambda kind, seed, start: made.append(make(kind, seed, start)) or made[-1])
    res = studies.real_apps(["jupyterlab", "mousepad"], {"jupyterlab": (2, 5), "mousepad": (2, 5)},
                            selectors=["puct", "random"])
    assert studies.REAL_PUCT == {"jupyterlab": "leave"}
    assert res["jupyterlab"]["puct_setting"] == "leave" and res["mousepad"]["puct_setting"] == "default"
    pucts = [s for s in made if s.name == "puct"]
    assert [s.leave_rate for s in pucts] == [True, True, False, False]
    assert [s.seed for s in pucts] == [0, 1, 0, 1]
    studies.save_real_results(tmp_path / "r.md", res)
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    jl, mp = text.index("## jupyterlab"), text.index("## mousepad")
    assert text.index("PUCT is the `leave` setting here") > jl and "PUCT is the `leave`" not in text[mp:jl]
    assert text.count("PUCT is the `leave` setting here") == 1
