"""The shared-graph corpus: a small run on real Mousepad and PCManFM, a kill and a resume, bad inputs.

The real applications run where the driver tests run them (skipped with the reason
elsewhere; with CI=true they must run). The kill test SIGKILLs the ``spatialobs
corpus`` process mid-run: its workers die with it, nothing is written after, and the
rerun of the same command keeps every acknowledged step (every row the store held,
every step a worker logged), runs none of them again and ends at exactly the budget.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spatialobs import InvalidInputError
from spatialobs.cli import main
from spatialobs.screen.corpus import (CONFIGS, CORPUS_SEED_STRIDE, _locked, check_apps, check_budget,
                                      check_repeats, check_seed, config_of, run_corpus, run_seed, run_tag, store_path, vary_spec, write_report)
from spatialobs.screen.drivers import builtin_spec
from tests._drivers import require

ROOT = Path(__file__).resolve().parent.parent


def _need(*apps: str) -> None:
    from spatialobs.screen.drivers.atspi import unavailable_reason

    for a in apps:
        require(unavailable_reason(builtin_spec(a)))


def _rows(store: Path):
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        tr = con.execute("SELECT seq, worker, episode, step, source, signature, target FROM transitions").fetchall()
        cap = con.execute("SELECT seq, worker, episode, step, source, signature, app FROM captures").fetchall()
    finally:
        con.close()
    return tr, cap


def test_a_small_corpus_on_two_real_applications_and_its_report(tmp_path):
    _need("mousepad", "pcmanfm")
    folder = tmp_path / "corpus"
    res = run_corpus(folder, ["mousepad", "pcmanfm"], minutes=None, steps=6, workers=2, episode_steps=3)
    assert set(res) == {"mousepad/heuristic", "mousepad/uniform", "pcmanfm/heuristic", "pcmanfm/uniform"}
    for key, r in res.items():
        # a step budget is exact: two episodes of three steps, one per worker, no step twice
        assert r["steps"] == 6, (key, r)
        app, prior = key.split("/")
        tr, cap = _rows(folder / app / f"{prior}.sqlite")
        keys = [(e, s) for _, _, e, s, *_ in tr + cap]
        assert sorted(keys) == [(e, s) for e in (0, 1) for s in range(3)]
        assert {w for _, w, e, *_ in tr + cap} <= {"w0", "w1"}
        assert r["states"] >= 2 and r["observations"] >= r["states"]
    doc = tmp_path / "doc" / "corpus.md"
    out = write_report(folder, doc, command="spatialobs corpus FOLDER --report")
    text = doc.read_text(encoding="utf-8")
    for head in ("## Table 2: the corpus per application", "## Table 3: heuristic against uniform prior",
                 "## Figure 4", "## Trace extraction (§7)", "## Table 12: the audit of repeated state–action groups"):
        assert head in text
    assert "4.10%" in text and "1.74%" in text and "5,524 VM-hours" in text
    assert "**Budget used here:** 6 steps per application, prior and run" in text
    assert "built by `spatialobs corpus FOLDER --steps 6 --episode-steps 3 --apps mousepad,pcmanfm`" in text
    assert "One run per application and prior (`--repeats N` adds runs" in text and "| **pooled** | 1 |" in text
    assert "**Default budget:** `spatialobs corpus FOLDER` = 3 min" in text and "--ray" in text
    t2 = [ln for ln in text.splitlines() if ln.startswith("| mousepad |") or ln.startswith("| pcmanfm |")]
    # one row in Table 2, one in Table 3, one in the traces table per application
    assert len(t2) == 6
    row = next(ln for ln in t2 if ln.startswith("| mousepad |")).split("|")
    launches = out["stats"]["mousepad/heuristic"]["launches"]
    assert len(row) == 15 and int(row[4]) == 6 and int(row[5]) == launches >= 2 and int(row[8]) == 6 + launches
    assert (doc.parent / "corpus-observations.svg").read_text().startswith("<svg")
    assert (doc.parent / "corpus-latency.svg").exists() and (doc.parent / "corpus-trace-lengths.svg").exists()
    assert out["stats"]["pcmanfm/uniform"]["steps"] == 6


def _kill_mid_run(argv, store: Path, at: int, budget: int, err: Path):
    """Start the command, SIGKILL it once ``store`` holds ``at`` steps; the rows left once nothing writes."""
    env = dict(os.environ)  # the package under test, as this process imports it (the installed wheel in CI)
    with open(err, "wb") as fh:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=fh)
    try:
        end = time.monotonic() + 120
        n = 0
        while time.monotonic() < end and proc.poll() is None:
            if store.exists():
                try:
                    tr, cap = _rows(store)
                    n = len(tr) + len(cap)
                except sqlite3.Error:
                    n = 0
            if n >= at:
                break
            time.sleep(0.2)
        assert proc.poll() is None, f"the run ended before the kill: {err.read_text()[-500:]}"
        assert at <= n < budget
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    time.sleep(2.0)
    before = _rows(store)
    time.sleep(2.0)
    assert _rows(store) == before  # nothing writes after the kill: the workers died with the command
    return before


def _logged(folder: Path, tag: str):
    out = set()
    for f in folder.glob(f"{tag}.w*.jsonl"):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if r.get("kind") == "step":
                out.add((r["episode"], r["step"]))
    return out


def test_the_corpus_command_killed_mid_run_resumes_without_losing_or_repeating_a_step(tmp_path):
    _need("mousepad")
    folder = tmp_path / "corpus"
    argv = [sys.executable, "-m", "spatialobs", "corpus", str(folder), "--apps", "mousepad", "--priors", "heuristic",
            "--steps", "16", "--episode-steps", "4", "--workers", "2", "--seed", "3"]
    env = dict(os.environ)
    store = folder / "mousepad" / "heuristic.sqlite"
    before = _kill_mid_run(argv, store, 5, 16, tmp_path / "stderr.txt")
    logged = _logged(folder / "mousepad", "heuristic")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-800:]
    after = _rows(store)
    # every acknowledged step is still there, unchanged; every logged step is acknowledged
    assert set(before[0]) <= set(after[0]) and set(before[1]) <= set(after[1])
    keys = [(e, s) for _, _, e, s, *_ in after[0] + after[1]]
    assert logged <= set(keys)
    # no step twice, and the budget exactly: 4 episodes x 4 steps
    assert sorted(keys) == [(e, s) for e in range(4) for s in range(4)]
    phase = json.loads((folder / "mousepad" / "heuristic.phase.json").read_text())
    assert phase["runs"] == 2
    manifest = json.loads((folder / "corpus.json").read_text())
    assert len(manifest["runs"]) == 2 and manifest["seed"] == 3
    # --seed 3 reaches the workers: every launch (episodes 0-3, configuration 0) took seed 3 x the stride
    launches = [json.loads(ln) for f in (folder / "mousepad").glob("heuristic.w*.jsonl")
                for ln in f.read_text().splitlines() if json.loads(ln)["kind"] == "launch"]
    assert launches and {r["seed"] for r in launches} == {3 * CORPUS_SEED_STRIDE}


def test_configurations_vary_content_window_and_theme():
    assert [config_of(k).index for k in range(0, 20, 4)] == [0, 1, 2, 3, 0]
    assert {(c.width, c.height) for c in CONFIGS} == {(1280, 800), (1024, 768), (1440, 900)}
    m = builtin_spec("mousepad")
    assert vary_spec(m, CONFIGS[0]) is m
    v1, v3 = vary_spec(m, CONFIGS[1]), vary_spec(m, CONFIGS[3])
    assert v1.env["GTK_THEME"] == "Adwaita:dark" and v1.files["notes.txt"] != v3.files["notes.txt"]
    assert "GTK_THEME" not in vary_spec(m, CONFIGS[2]).env and vary_spec(m, CONFIGS[2]).files["notes.txt"]
    assert vary_spec(builtin_spec("featherpad"), CONFIGS[1]).env["QT_STYLE_OVERRIDE"] == "Fusion"
    j = vary_spec(builtin_spec("jupyterlab"), CONFIGS[1])
    assert j.files["data.csv"].count("\n") == builtin_spec("jupyterlab").files["data.csv"].count("\n") + 2


def test_the_corpus_seed_offsets_every_configuration_seed_and_seed_0_is_the_default():
    assert [config_of(k, 0) for k in range(16)] == [config_of(k) for k in range(16)]
    m = builtin_spec("mousepad")
    for k in range(0, 16, 4):
        c0, c2 = config_of(k), config_of(k, seed=2)
        # window size and theme stay; the seed (content, driver, starts, selector draws) moves by the stride
        assert (c2.index, c2.width, c2.height, c2.theme) == (c0.index, c0.width, c0.height, c0.theme)
        assert c2.seed == c0.seed + 2 * CORPUS_SEED_STRIDE
        assert run_seed(c2.seed, 2) == run_seed(c0.seed, 2) + 2 * CORPUS_SEED_STRIDE
        if c0.index:  # configuration 0 is the application as shipped; the others get other seeded lines
            assert vary_spec(m, c2).files["notes.txt"] != vary_spec(m, c0).files["notes.txt"]
            assert vary_spec(m, c2).env == vary_spec(m, c0).env
    # seeds of two corpus seeds stay apart from the offsets of every run below 1,000
    assert run_seed(config_of(12).seed, 1000) < config_of(0, seed=1).seed


def test_bad_inputs_are_clear_errors(tmp_path, capsys):
    with pytest.raises(InvalidInputError, match=r"unknown application 'gedit' for the corpus; choose from .*mousepad"):
        check_apps(["mousepad", "gedit"])
    with pytest.raises(InvalidInputError, match="needs at least one application"):
        check_apps([])
    with pytest.raises(InvalidInputError, match="name one application twice"):
        check_apps(["mousepad", "mousepad"])
    with pytest.raises(InvalidInputError, match=r"budget: minutes must be a positive number, got -1"):
        check_budget(-1, None)
    with pytest.raises(InvalidInputError, match=r"budget: minutes must be a positive number, got nan"):
        check_budget(float("nan"), None)
    with pytest.raises(InvalidInputError, match=r"budget: steps must be a positive integer, got 0"):
        check_budget(None, 0)
    with pytest.raises(InvalidInputError, match="needs minutes or steps"):
        check_budget(None, None)
    with pytest.raises(InvalidInputError, match="workers must be a positive integer, got 0"):
        run_corpus(tmp_path / "c", ["mousepad"], steps=2, workers=0)
    with pytest.raises(InvalidInputError, match=r"priors must be among heuristic, uniform"):
        run_corpus(tmp_path / "c", ["mousepad"], steps=2, priors=["greedy"])
    with pytest.raises(InvalidInputError, match=r"no corpus in .* \(corpus.json is missing\)"):
        write_report(tmp_path / "empty", tmp_path / "doc.md")
    # a folder another run holds
    (tmp_path / "held").mkdir()
    with _locked(tmp_path / "held"):
        with pytest.raises(InvalidInputError, match="another corpus run is using"):
            run_corpus(tmp_path / "held", ["mousepad"], steps=2)
    # a resume with other settings
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "corpus.json").write_text(json.dumps({"workers": 2, "episode_steps": 25, "seed": 0}))
    with pytest.raises(InvalidInputError, match=r"was started with workers=2, not 3: resume with the same setting"):
        run_corpus(tmp_path / "r", ["mousepad"], steps=2, workers=3)
    # the command line: one error line, status 2
    assert main(["corpus", str(tmp_path / "c"), "--apps", "nope"]) == 2
    assert "spatialobs: error: unknown application 'nope' for the corpus" in capsys.readouterr().err
    assert main(["corpus", str(tmp_path / "c"), "--apps", "mousepad", "--minutes", "-2"]) == 2
    assert "spatialobs: error: budget: minutes must be a positive number, got -2.0" in capsys.readouterr().err
    assert main(["corpus", str(tmp_path / "c"), "--steps", "0"]) == 2
    assert "budget: steps must be a positive integer, got 0" in capsys.readouterr().err
    assert main(["corpus", str(tmp_path / "nothing"), "--report"]) == 2
    assert "no corpus in" in capsys.readouterr().err


def test_a_repeat_run_is_its_own_graph_and_the_report_gives_every_run_and_the_spread(tmp_path):
    _need("mousepad")
    folder = tmp_path / "corpus"
    first = run_corpus(folder, ["mousepad"], minutes=None, steps=4, workers=2, episode_steps=2)
    assert set(first) == {"mousepad/heuristic", "mousepad/uniform"}
    run1 = {p: _rows(store_path(folder, "mousepad", p)) for p in ("heuristic", "uniform")}
    res = run_corpus(folder, ["mousepad"], minutes=None, steps=4, workers=2, episode_steps=2, repeats=2)
    assert set(res) == {"mousepad/heuristic", "mousepad/uniform", "mousepad/heuristic.r2", "mousepad/uniform.r2"}
    for p in ("heuristic", "uniform"):
        # run 1 is left as it was (its budget is spent); run 2 is a second graph of exactly the budget
        assert res[f"mousepad/{p}"]["skipped"] == "budget spent"
        assert _rows(store_path(folder, "mousepad", p)) == run1[p]
        r2 = store_path(folder, "mousepad", p, 2)
        assert r2.name == f"{p}.r2.sqlite" and res[f"mousepad/{p}.r2"]["steps"] == 4
        tr, cap = _rows(r2)
        assert sorted((e, s) for _, _, e, s, *_ in tr + cap) == [(e, s) for e in (0, 1) for s in range(2)]
        phase = json.loads((folder / "mousepad" / f"{p}.r2.phase.json").read_text())
        assert phase["runs"] == 1 and phase["load"] and all(x[1] >= 0 for x in phase["load"])
        assert json.loads((folder / "mousepad" / f"{p}.phase.json").read_text())["runs"] == 1
    manifest = json.loads((folder / "corpus.json").read_text())
    assert manifest["repeat_runs"]["2"] == {"seed_offset": 1000, "budgets": [{"minutes": None, "steps": 4}]}
    assert [(r["repeats"], r["budget"]["steps"]) for r in manifest["runs"]] == [(1, 4), (2, 4)]
    doc = tmp_path / "doc" / "corpus.md"
    write_report(folder, doc, command="spatialobs corpus FOLDER --report")
    text = doc.read_text(encoding="utf-8")
    assert "built by `spatialobs corpus FOLDER --steps 4 --episode-steps 2 --apps mousepad --repeats 2` in 2 " \
           "invocation(s)" in text
    assert "2 run(s) per application and prior" in text and "run 2: " in text and "load average median" in text
    t3 = text.split("## Table 3")[1].split("What each prior spends")[0]
    rows = [ln.split("|")[1:-1] for ln in t3.splitlines() if ln.startswith("| mousepad | ")]
    every, spread = rows[:2], rows[2:]
    assert [r[1].strip() for r in every] == ["1", "2"] and len(spread) == 1
    diffs = []
    for r in every:
        assert int(r[2]) == int(r[5]) == int(r[8]) == 4  # a step budget: both priors, both runs at 4 steps
        diffs.append(int(r[9]) - int(r[10]))
        assert r[11].strip() == ("0" if diffs[-1] == 0 else f"{diffs[-1]:+d}")
    ahead = sum(d > 0 for d in diffs)
    assert spread[0][1].strip() == "2" and spread[0][5].strip() == f"{ahead} of 2"
    assert spread[0][6].strip() == str(sum(d == 0 for d in diffs))
    lo, hi = min(diffs), max(diffs)
    assert spread[0][4].strip().endswith(f"({'0' if lo == 0 else f'{lo:+d}'} to {'0' if hi == 0 else f'{hi:+d}'})")
    assert "| **pooled** | 1 |" in t3 and "| **pooled** | 2 |" in t3
    assert f"more states at equal steps in {ahead} of 2 runs (application × run)" in t3
    assert "Per application, the heuristic prior was ahead in every run on " in t3
    assert "With one run per application and prior" not in text
    assert "Table 2, Figure 4, the trace extraction and Table 12 cover run 1" in text
    assert "| with every run's graphs (2 runs) |" in text


def test_a_repeat_run_killed_mid_run_resumes_without_losing_or_repeating_a_step(tmp_path):
    _need("mousepad")
    folder = tmp_path / "corpus"
    run_corpus(folder, ["mousepad"], minutes=None, steps=12, workers=2, episode_steps=4, priors=["heuristic"])
    run1 = _rows(folder / "mousepad" / "heuristic.sqlite")
    argv = [sys.executable, "-m", "spatialobs", "corpus", str(folder), "--apps", "mousepad", "--priors", "heuristic",
            "--steps", "12", "--episode-steps", "4", "--workers", "2", "--repeats", "2"]
    store = folder / "mousepad" / "heuristic.r2.sqlite"
    before = _kill_mid_run(argv, store, 4, 12, tmp_path / "stderr.txt")
    logged = _logged(folder / "mousepad", "heuristic.r2")
    done = subprocess.run(argv, env=dict(os.environ), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-800:]
    after = _rows(store)
    assert set(before[0]) <= set(after[0]) and set(before[1]) <= set(after[1])
    keys = [(e, s) for _, _, e, s, *_ in after[0] + after[1]]
    assert logged <= set(keys)
    assert sorted(keys) == [(e, s) for e in range(3) for s in range(4)]
    assert _rows(folder / "mousepad" / "heuristic.sqlite") == run1  # run 1 untouched by either command
    assert json.loads((folder / "mousepad" / "heuristic.r2.phase.json").read_text())["runs"] == 2
    assert json.loads((folder / "mousepad" / "heuristic.phase.json").read_text())["runs"] == 1


def test_runs_have_their_own_files_and_seeds():
    assert run_tag("heuristic") == "heuristic" and run_tag("heuristic", 3) == "heuristic.r3"
    assert store_path("c", "mousepad", "uniform", 2) == Path("c") / "mousepad" / "uniform.r2.sqlite"
    assert store_path("c", "mousepad", "uniform") == Path("c") / "mousepad" / "uniform.sqlite"
    assert [run_seed(1, r) for r in (1, 2, 3)] == [1, 1001, 2001]


_BAD_OPTIONS = [
    ("repeats", check_repeats, r"repeats must be a positive integer \(runs per application and prior\)", [0, -1, 1.5, "2", True, None]),
    ("seed", check_seed, r"seed must be a non-negative integer \(it offsets the corpus's content and start seeds\)",
     [-1, 1.5, "2", True, None]),
]


@pytest.mark.parametrize("option, check, message, bad",
                         [(o, c, m, b) for o, c, m, bads in _BAD_OPTIONS for b in bads],
                         ids=[f"{o}={b!r}" for o, _, _, bads in _BAD_OPTIONS for b in bads])
def test_bad_repeats_and_seeds_are_clear_errors(tmp_path, option, check, message, bad):
    """A bad --repeats or --seed: InvalidInputError naming the option and the value, from the check and from
    run_corpus, before any folder is made."""
    with pytest.raises(InvalidInputError, match=message + ", got " + re.escape(repr(bad)) + "$"):
        check(bad)
    with pytest.raises(InvalidInputError, match=message):
        run_corpus(tmp_path / "c", ["mousepad"], steps=2, **{option: bad})
    assert not (tmp_path / "c").exists()


def test_a_bad_seed_on_the_command_line(tmp_path, capsys):
    assert main(["corpus", str(tmp_path / "c"), "--apps", "mousepad", "--steps", "2", "--seed", "-4"]) == 2
    assert "spatialobs: error: seed must be a non-negative integer (it offsets the corpus's content and start " \
           "seeds), got -4" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("arg, shown", [("0", "0"), ("-1", "-1"), ("two", "'two'"), ("1.5", "'1.5'")])
def test_bad_repeats_on_the_command_line(tmp_path, capsys, arg, shown):
    assert main(["corpus", str(tmp_path / "c"), "--apps", "mousepad", "--steps", "2", "--repeats", arg]) == 2
    assert f"spatialobs: error: repeats must be a positive integer (runs per application and prior), got {shown}" \
        in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
