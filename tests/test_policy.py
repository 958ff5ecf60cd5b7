"""From traces to models: windows, tasks, pairs and the split; the policy's training, metrics and files."""

from __future__ import annotations

import random
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import Action, Element, Screen, ScreenGraph, explore, sim
from spatialobs.screen.explore import Episode, Step
from spatialobs.screen.training.data import (TASK_TEMPLATES, TEST_TEMPLATE, Dataset, Window, build_dataset,
                                             canonical_role, episodes_from_store, task_description,
                                             windows_dataset)
from spatialobs.screen.training.metrics import evaluate, inference_latency, run_study
from spatialobs.screen.training.policy import (CorruptPolicyError, PolicyModel, examples, load_policy,
                                               train_policy)
from spatialobs.screen.traces import action_token

W, H = 640.0, 480.0
MENU = Element((0, 0, 40, 20), "menu item", "File", clickable=True)
OK = Element((280, 220, 360, 250), "push button", "OK", clickable=True)
CANCEL = Element((380, 220, 460, 250), "push button", "Cancel", clickable=True)
TEXT = Element((0, 30, 640, 470), "text", None, editable=True)


def _screen(*extra: Element) -> Screen:
    return Screen([MENU, TEXT, *extra], W, H)


def _episode(path, actions, screens, name="app"):
    """An episode through states ``path`` taking ``actions`` on ``screens`` (one per step)."""
    steps = [Step(t, a, f"s{t}", act, b, False, False, 0.0, 0.5, 0.5, None, 1.0, 0.0, W, H, digest=f"d{a}", screen=scr)
             for t, ((a, b), act, scr) in enumerate(zip(zip(path, path[1:]), actions, screens))]
    return Episode(name, "start", "", "test", path[0], steps)


# -- data -------------------------------------------------------------------------------


def test_windows_loop_removal_and_tasks_on_hand_made_traces():
    click_ok, click_menu, esc = Action("click", OK), Action("click", MENU), Action("key", None, "escape")
    # 0-1-2-3-4-5 fresh, then five no-ops at 5 (dropped), then 5-6-7-8 fresh again (a run of its own)
    path = [0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 6, 7, 8, 9]
    acts = [click_menu, click_ok, esc, click_menu, click_ok] + [esc] * 5 + [click_menu, click_ok, click_menu, click_ok]
    screens = [_screen(Element((0, 0, 5, 5), "label", f"state {a}")) for a in path[:-1]]
    ds = windows_dataset([("store", _episode(path, acts, screens))])
    firsts = [w.steps[0].t for w in ds.windows]
    assert firsts == [0, 1, 2, 10, 11]            # never across the dropped segment
    assert ds.stats["kept_steps"] == 9 and ds.stats["windows"] == 5
    assert all(len(w.steps) == len(w.tokens) == len(w.screens) == 3 for w in ds.windows)
    # the task describes the window's last action
    w = ds.windows[0]
    assert w.task == task_description(w.steps[2].action, W, H)[0] and w.task_class == "dismiss"
    assert ds.windows[1].task_class == "menu" and "file" in ds.windows[1].task
    assert w.tokens[0].text == "click|menuitem|menu|top-left|none"


def test_task_descriptions_are_rule_based_and_stable():
    text, cls, tmpl = task_description(Action("type", TEXT, "42"), W, H)
    assert cls == "input" and "a number" in text and tmpl.startswith("input/")
    assert task_description(Action("click", OK), W, H) == task_description(Action("click", OK), W, H)
    assert task_description(Action("click", CANCEL), W, H)[1] == "dismiss"
    assert canonical_role("push button") == "button" and canonical_role("page tab") == "tabitem"
    dup = Element((0, 40, 90, 60), "menu item", "Duplicate Line", clickable=True)
    assert task_description(Action("click", dup), W, H)[1] == "command"
    assert task_description(Action("click", Element((0, 0, 40, 20), "menu", "Document")), W, H)[1] == "menu"
    # an input is named by its role, never by what was typed into it
    typed = Element((0, 30, 640, 470), "text", "hello hello hello", editable=True)
    assert "hello" not in task_description(Action("type", typed, "hello"), W, H)[0]
    # one target, several phrasings across episodes, one within
    phrasings = {task_description(Action("click", OK), W, H, f"ep{i}")[0] for i in range(40)}
    assert len(phrasings) == 4
    assert all(len(t) == 4 for t in TASK_TEMPLATES.values())


def test_counterfactual_pairs_hold_the_task_and_change_screen_and_action():
    esc, ok, menu = Action("key", None, "escape"), Action("click", OK), Action("click", MENU)
    a = _episode([0, 1, 2, 3], [menu, esc, ok], [_screen(), _screen(CANCEL), _screen(OK)])
    b = _episode([4, 5, 6, 7], [ok, esc, ok], [_screen(OK), _screen(CANCEL, OK), _screen(OK)])
    c = _episode([0, 1, 2, 3], [menu, esc, ok], [_screen(), _screen(CANCEL), _screen(OK)])  # same as a
    ds = windows_dataset([("x", a), ("y", b), ("z", c)])
    assert len(ds.windows) == 3
    pairs = [(ds.windows[i], ds.windows[j]) for i, j in ds.pairs]
    assert pairs, "a and b share their task and differ in first screen and action"
    for x, y in pairs:
        assert x.task == y.task
        assert x.screens[0] != y.screens[0] and x.tokens[0] != y.tokens[0]
    # a and c are the same screens and actions: never a pair
    assert (0, 2) not in ds.pairs and (2, 0) not in ds.pairs


def test_split_is_task_template_disjoint(tmp_path):
    app = sim.make_app("notepad")
    path = tmp_path / "g.sqlite"
    with ScreenGraph(str(path), app="notepad", evidence=True) as g:
        for k, s in enumerate(app.starts(4)):
            explore(app, steps=60, start=s, graph=g, episode=k, selector="random")
    eps, screens = episodes_from_store(path)
    assert len(eps) == 4 and all(s.screen is not None for e in eps for s in e.steps if s.capture is None)
    ds = build_dataset([path])
    train, test = ds.split("train"), ds.split("test")
    assert train and test
    assert {w.template for w in train}.isdisjoint({w.template for w in test})
    assert {w.task for w in train}.isdisjoint({w.task for w in test})
    assert all(w.template.endswith(f"/{TEST_TEMPLATE}") for w in test)
    by_id = {w.id: w for w in ds.windows}
    assert all(by_id[a].split == by_id[b].split for a, b in ds.pairs)
    # the Parquet export carries every screen's element table
    pq = pytest.importorskip("pyarrow.parquet")
    ds.export(tmp_path / "ds")
    els = pq.read_table(tmp_path / "ds" / "elements.parquet").to_pydict()
    steps = pq.read_table(tmp_path / "ds" / "steps.parquet").to_pydict()
    assert set(steps["screen"]) <= set(els["screen"])
    assert len(els["screen"]) == sum(len(s.elements) for s in ds.screens.values())


def test_bad_stores_are_rejected(tmp_path):
    with pytest.raises(InvalidInputError, match="no graph store"):
        episodes_from_store(tmp_path / "missing.sqlite")
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 10)
    with pytest.raises(Exception) as e:
        episodes_from_store(tmp_path / "junk.sqlite")
    assert isinstance(e.value, ValueError) or "store" in str(e.value).lower()


# -- synthetic rules ----------------------------------------------------------------------

TOK_CONFIRM = Action("click", OK)
TOK_MENU = Action("click", MENU)
TASKS = ("carry on with the work", "do the next thing", "continue")


def _synthetic(screen_rule: bool, n: int = 240, seed: int = 0) -> Dataset:
    """Windows of three independent steps; the target depends on the screen (a dialog or not) or on the task."""
    rng = random.Random(seed)
    windows, screens = [], {}
    for i in range(n):
        steps, toks, ids = [], [], []
        dialog_task = rng.random() < 0.5
        task = rng.choice(TASKS) if screen_rule else ("confirm the dialog" if dialog_task else "open a menu")
        for k in range(3):
            dialog = rng.random() < 0.5
            extra = [Element((rng.uniform(0, 500), rng.uniform(300, 400), 600, 460), "label", f"note {rng.randint(0, 9)}")]
            scr = Screen([MENU, TEXT, *(extra + ([OK, CANCEL] if dialog else []))], W, H)
            act = (TOK_CONFIRM if dialog else TOK_MENU) if screen_rule else (TOK_CONFIRM if dialog_task else TOK_MENU)
            sid = len(screens)
            screens[sid] = scr
            steps.append(Step(k, 3 * i + k, "s", act, 3 * i + k + 1, False, False, 0.0, 0.5, 0.5, None, 1.0, 0.0, W, H,
                              screen=scr))
            toks.append(action_token(act, W, H))
            ids.append(sid)
        windows.append(Window(i, "syn", "syn", "e", task, "x", "x/0", "test" if i % 5 == 0 else "train",
                              tuple(steps), tuple(toks), tuple(ids)))
    return Dataset(windows, screens, [])


def test_a_screen_dependent_rule_is_learned_and_screen_sensitive():
    ds = _synthetic(screen_rule=True)
    m = train_policy(examples(ds, "train"), seed=0, epochs=15)
    r = evaluate(m, ds)
    assert r["step_match"] > 90.0                  # chance is 50%
    assert r["screen_sensitivity"] > 25.0          # a shuffled screen is the wrong kind half the time
    assert r["pair_change"] != r["pair_change"]    # no pairs in this dataset: not a number


def test_a_screen_independent_rule_is_not_screen_sensitive():
    ds = _synthetic(screen_rule=False)
    m = train_policy(examples(ds, "train"), seed=0, epochs=15)
    r = evaluate(m, ds)
    assert r["step_match"] > 90.0
    assert abs(r["screen_sensitivity"]) < 5.0


def test_study_rows_and_latency():
    ds = _synthetic(screen_rule=True, n=60)
    res = run_study(ds, seeds=(0, 1), epochs=3)
    assert len(res.rows["with"]) == len(res.rows["without"]) == 2
    lat = inference_latency(res.models["with"], ds, repeats=20)
    assert lat["median_ms"] > 0 and lat["median_actions"] >= 3


# -- files --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model() -> PolicyModel:
    return train_policy(examples(_synthetic(True, n=60), "train"), seed=1, epochs=3)


def test_save_load_round_trip(model, tmp_path):
    path = tmp_path / "p.npz"
    model.save(path)
    back = load_policy(path)
    ds = _synthetic(True, n=20, seed=3)
    acts = [TOK_CONFIRM, TOK_MENU, Action("key", None, "escape")]
    for e in examples(ds, "train")[:10]:
        assert np.array_equal(model.score_actions(e.screen, acts, e.task), back.score_actions(e.screen, acts, e.task))
    assert back.vocab == model.vocab and back.meta == model.meta
    w = back(ds.screens[0], acts, "continue")
    assert len(w) == 3 and abs(sum(w) - 1) < 1e-9
    with zipfile.ZipFile(path) as z:                # no pickle inside: plain arrays
        assert sorted(z.namelist()) == ["W1.npy", "W2.npy", "b1.npy", "b2.npy", "header.npy"]


def _one_line_error(path):
    with pytest.raises(CorruptPolicyError) as e:
        load_policy(path)
    assert isinstance(e.value, InvalidInputError)
    msg = str(e.value)
    assert "\n" not in msg and path.name in msg or "no policy file" in msg
    return msg


def test_bad_and_truncated_model_files_give_one_clear_line(model, tmp_path):
    good = tmp_path / "good.npz"
    model.save(good)
    data = good.read_bytes()
    trunc = tmp_path / "trunc.npz"
    trunc.write_bytes(data[: len(data) // 2])
    assert "truncated" in _one_line_error(trunc)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"\x00garbage" * 50)
    assert "not a readable policy file" in _one_line_error(junk)
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    assert "missing" in _one_line_error(other)
    wrong = tmp_path / "wrong.npz"
    hdr = np.frombuffer(b'{"format": "spatialobs-policy", "version": 99}', dtype=np.uint8)
    np.savez(wrong, header=hdr, W1=model.W1, b1=model.b1, W2=model.W2, b2=model.b2)
    assert "version 99" in _one_line_error(wrong)
    bad_shape = tmp_path / "shape.npz"
    head = np.frombuffer(__import__("json").dumps(model.header()).encode(), dtype=np.uint8)
    np.savez(bad_shape, header=head, W1=model.W1[:5], b1=model.b1, W2=model.W2, b2=model.b2)
    assert "W1 must have shape" in _one_line_error(bad_shape)
    nan = tmp_path / "nan.npz"
    W2 = model.W2.copy()
    W2[0, 0] = np.nan
    np.savez(nan, header=head, W1=model.W1, b1=model.b1, W2=W2, b2=model.b2)
    assert "NaN" in _one_line_error(nan)
    assert "no policy file" in _one_line_error(tmp_path / "missing.npz")


def test_train_policy_command_end_to_end(tmp_path):
    store = tmp_path / "notepad.sqlite"
    run = [sys.executable, "-m", "spatialobs"]
    out = subprocess.run(run + ["explore", "--app", "notepad", "--starts", "4", "--steps", "60", "--selector", "random",
                                "--store", str(store)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    report, model_file = tmp_path / "policy.md", tmp_path / "p.npz"
    out = subprocess.run(run + ["train-policy", str(store), "--seeds", "2", "--epochs", "3", "--out", str(model_file),
                                "--report", str(report), "--dataset", str(tmp_path / "ds"), "--dataset-format",
                                "jsonl"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = report.read_text()
    assert "| step match (%) |" in text and "52.60" in text and "± " in text
    assert load_policy(model_file).meta["pairs"] >= 0
    assert (tmp_path / "ds" / "elements.jsonl").exists()
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 broken")
    bad = subprocess.run(run + ["explore", "--app", "notepad", "--prior", f"policy:{tmp_path / 'bad.npz'}"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "bad.npz" in bad.stderr
    with pytest.raises(InvalidInputError):
        train_policy([])


def test_table11_study_runs_every_prior_from_held_out_starts(tmp_path):
    from spatialobs.screen.drivers import make_driver
    from spatialobs.screen.training.priors import COLUMNS, held_out_starts, real_prior_study, render_real_priors

    starts = held_out_starts(make_driver("mousepad", seed=9), 6)   # nothing is launched to list starts
    assert len(starts) == 6 and all(s.depth > 0 for s in starts)
    assert [s.index for s in starts] == [1, 2, 3, 4, 6, 7]
    # the same study on a simulator: stores of other seeds train the learned priors
    app = sim.make_app("notepad", 1)
    path = tmp_path / "g.sqlite"
    with ScreenGraph(str(path), app="notepad", evidence=True) as g:
        for k, s in enumerate(app.starts(3)):
            explore(app, steps=30, start=s, graph=g, episode=k, selector="random")
    policy = train_policy(examples(build_dataset([path]), "train"), seed=0, epochs=2)
    res = real_prior_study("notepad", [path], policy, starts=2, steps=6, seed=9)
    assert sorted(res["priors"]) == ["heuristic", "learned", "policy", "uniform"]
    assert all(len(res["priors"][p][k]) == 2 for p in res["priors"] for k, _ in COLUMNS)
    assert res["train_steps"] == 90
    assert "| policy |" in render_real_priors(res, "notepad")
    with pytest.raises(InvalidInputError, match="no steps of 'calc'"):
        real_prior_study("calc", [path], None, starts=1, steps=2)
