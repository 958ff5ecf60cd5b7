"""The controlled studies reproduce the paper's pattern; PUCT beats Greedy; the report is generated."""

from __future__ import annotations

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import studies


def test_dispersion_decomposition_reproduces_the_paper():
    r = studies.decomposition(trials=10)
    clip, race = r["hidden clipboard"], r["asynchronous race"]
    assert clip["matched_sources"] == 1 and race["matched_sources"] == 1
    d = clip["dispersion"]
    assert (round(d.pooled, 3), round(d.within, 3), round(d.between, 3)) == (1.0, 0.0, 1.0)
    d = race["dispersion"]
    assert (round(d.pooled, 3), round(d.within, 3), round(d.between, 3)) == (0.971, 0.971, 0.0)
    assert sorted(race["successors"].values()) == [8, 12]


def test_probe_vs_escape_reproduces_the_paper():
    r = studies.probe_vs_escape(trials=10)
    assert r["commit at once"]["accuracy"] == 0.5
    assert r["probe (Paste + Undo)"]["accuracy"] == 1.0
    assert r["escape (File menu)"]["accuracy"] == 0.5
    assert all(v["reversible"] for v in r.values())
    assert r["probe (Paste + Undo)"]["distinct_sequences"] == 2
    assert r["escape (File menu)"]["distinct_sequences"] == 1


def test_puct_well_above_greedy_over_50_starts():
    r = studies.compare_selectors(starts=50, steps=50)
    for app, res in r.items():
        p, g = res["puct"]["state_auc"], res["greedy"]["state_auc"]
        assert p >= 1.5 * g, (app, p, g)
        assert res["puct"]["new_states"] > res["greedy"]["new_states"]
        assert 0 <= res["wins"] <= 1


def test_ablation_shapes():
    r = studies.ablation(["notepad"], starts=3, steps=10)
    full = r["notepad"]["full"]
    assert set(full) == {"new_states", "new_edges", "state_auc", "edge_auc", "revisit_rate", "loop_rate",
                         "high_u_occupancy", "net_du"}
    assert 0 <= full["loop_rate"] <= 1


def test_report_is_generated(tmp_path, monkeypatch):
    monkeypatch.setitem(studies.SCALES, "tiny", {"starts": 2, "steps": 5, "trials": 2})
    path = tmp_path / "docs" / "exploration.md"
    res = studies.write_report(path, scale="tiny")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Exploration results")
    for needle in ("PUCT vs Greedy", "Objective ablations", "| hidden clipboard | 1.000 | 0.000 | 1.000 |",
                   "| probe (Paste + Undo) | 1.000 |", "do not edit by hand"):
        assert needle in text
    assert set(res["seconds"]) == {"selectors", "ablation", "decomposition", "probe"}
    assert studies.main([str(path), "--scale", "tiny"]) == 0


def test_studies_bad_input():
    with pytest.raises(InvalidInputError, match="'word'"):
        studies.compare_selectors(["word"])
    with pytest.raises(InvalidInputError, match="starts"):
        studies.ablation(starts=0)
    with pytest.raises(InvalidInputError, match="'huge'"):
        studies.run_all("huge")
    with pytest.raises(InvalidInputError, match="late_rate"):
        studies.decomposition(late_rate=2)
