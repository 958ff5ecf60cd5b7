"""Simulated applications: determinism, realistic element lists, hidden state, races, starts, captures."""

from __future__ import annotations

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import Action, ScreenGraph, candidate_actions, signature, sim

APPS = sorted(sim.APPS)


def _walk(app, n, seed):
    import random

    rng = random.Random(seed)
    out = [app.reset().to_dict()]
    for _ in range(n):
        acts = app.actions()
        scr = app.step(acts[rng.randrange(len(acts))])
        if scr.meta.app != app.name:
            scr = app.recover()
        out.append(scr.to_dict())
    return out


@pytest.mark.parametrize("name", APPS)
def test_deterministic(name):
    assert _walk(sim.make_app(name, seed=3), 60, 1) == _walk(sim.make_app(name, seed=3), 60, 1)


@pytest.mark.parametrize("name", APPS)
def test_element_lists_are_realistic(name):
    app = sim.make_app(name)
    import random

    rng = random.Random(0)
    app.reset()
    roles = set()
    for _ in range(80):
        scr = app.screen()
        ids = [e.id for e in scr.elements]
        assert len(ids) == len(set(ids)), "element ids are unique on a screen"
        for e in scr.elements:
            x0, y0, x1, y1 = e.bounds
            assert 0 <= x0 <= x1 <= scr.width and 0 <= y0 <= y1 <= scr.height, e
            assert not (e.editable and e.role in ("Button", "MenuItem"))
            roles.add(e.role)
        assert scr.elements[0].role == "TitleBar"
        acts = app.actions()
        assert all(a.op != "type" or a.target.editable for a in acts)
        app.step(acts[rng.randrange(len(acts))])
        if app.screen().meta.app != name:
            app.recover()
    assert {"TitleBar", "Button", "Edit"} <= roles or {"TitleBar", "Button", "Document"} <= roles
    assert len(roles) >= 6


@pytest.mark.parametrize("name", APPS)
def test_starts_replay_at_varying_depths(name):
    app = sim.make_app(name)
    starts = app.starts(50)
    assert [s.depth for s in starts[:9]] == list(range(9))
    assert starts == sim.make_app(name).starts(50)
    for st in starts[:12]:
        a = app.reset(st).to_dict()
        assert app.reset(st).to_dict() == a
        assert app.reset(st.index).to_dict() == a
    assert len({app.reset(st).to_dict()["elements"].__repr__() for st in starts}) > 5


def test_notepad_clipboard_is_hidden_until_pasted():
    a, b = (sim.make_app("notepad", variant={"clipboard": c}) for c in ("alpha", "beta"))
    assert a.act("menu.edit").to_dict() == b.act("menu.edit").to_dict()
    pa, pb = a.act("menu.edit.3"), b.act("menu.edit.3")
    assert pa.to_dict() != pb.to_dict()
    assert [e.text for e in pa.elements if e.id == "doc"] == ["alpha"]
    a.act("menu.edit")
    assert [e.text for e in a.act("menu.edit.0").elements if e.id == "doc"] == [None]  # Undo


def test_notepad_dialogs_and_save_flow():
    app = sim.make_app("notepad")
    app.act("doc", "type", "hello")
    assert app.screen().elements[0].text == "*Untitled - Notepad"
    app.act("menu.file")
    scr = app.act("menu.file.3")
    assert any(e.text == "Save As" and e.role == "Dialog" for e in scr.elements)
    app.act("dlg.saveas.name", "type", "notes")
    scr = app.act("dlg.saveas.save")
    assert scr.elements[0].text == "notes.txt - Notepad" and app.hidden["disk"]["notes.txt"] == "hello"
    for item, title in (("menu.edit.5", "Find"), ("menu.edit.7", "Go To Line")):
        app.act("menu.edit")
        assert any(e.role == "Dialog" and e.text == title for e in app.act(item).elements)
        app.act("", "key", "escape")
    app.act("menu.format")
    assert any(e.role == "Dialog" and e.text == "Font" for e in app.act("menu.format.1").elements)


def test_race_lands_after_the_next_observation():
    app = sim.make_app("notepad", race="late")
    app.act("doc", "type", "x")
    app.act("menu.file")
    app.act("menu.file.3")
    app.act("dlg.saveas.name", "type", "a.txt")
    app.act("dlg.saveas.save")
    app.act("doc", "type", "y")
    app.act("menu.file")
    late = app.act("menu.file.2")  # Save: the title update is late
    assert late.elements[0].text == "*a.txt - Notepad" and any(e.id == "toast" for e in late.elements)
    nxt = app.step(Action("key", value="f5"))  # any next step: the update has landed
    assert nxt.elements[0].text == "a.txt - Notepad"


def test_timing_noise_is_seeded():
    def run(seed):
        app = sim.make_app("explorer", seed=seed, timing_noise=0.5)
        return [app.act("nav.documents").to_dict(), app.act("nav.pictures").to_dict(), app.act("nav.music").to_dict()]

    assert run(1) == run(1)
    loading = [any(e["text"] == "Working on it..." for e in s["elements"] if "text" in e)
               for seed in range(6) for s in run(seed)]
    assert any(loading) and not all(loading)


def test_explorer_tree_history_views_and_captures():
    app = sim.make_app("explorer")
    tree = app.hidden["tree"]
    assert max(len(p) for p in tree) >= 4
    app.act("nav.documents")
    first = app.screen()
    sub = next(e for e in first.elements if e.id == "item.0")
    app.act("item.0")
    assert app.screen().elements[0].text.startswith(sub.text.split()[0])
    back = app.act("back")
    # same texts and boxes; only Forward's clickable flag tells the history apart
    assert [(e.id, e.text, e.bounds) for e in back.elements] == [(e.id, e.text, e.bounds) for e in first.elements]
    assert [e.id for e in back.elements if e.clickable and e.id == "forward"] == ["forward"]
    assert app.act("forward").elements[0].text.startswith(sub.text.split()[0])
    app.act("cmd.view")
    tiles = app.act("popup.view.3")
    assert all(e.role == "ListItem" for e in tiles.elements if e.id.startswith("item."))
    # opening a file leaves the app
    app.act("nav.documents")
    path = ("Documents",)
    fname = tree[path]["files"][0][0]
    item = next(e for e in app.screen().elements if e.id.startswith("item.") and e.text.startswith(fname))
    scr = app.step(Action("click", item))
    assert scr.meta.app != "explorer"
    assert app.recover().meta.app == "explorer"


def test_calc_formulas_and_recalc_race():
    app = sim.make_app("calc", race="late")
    app.act("cell.B2")
    scr = app.act("formula", "type", "9")
    d2 = next(e.text for e in scr.elements if e.id == "cell.D2")
    c2 = app.hidden["sheets"]["Sheet1"]["cells"]["C2"]
    assert d2 != str(9 * int(c2))  # dependents not yet recalculated
    scr = app.act("cell.A1")
    assert next(e.text for e in scr.elements if e.id == "cell.D2") == str(9 * int(c2))
    app.act("cell.D5")
    scr = app.act("formula", "type", "=SUM(B2:B5)")
    assert next(e.text for e in scr.elements if e.id == "formula") == "=SUM(B2:B5)"


def test_signatures_of_sim_actions_are_stable_and_distinct():
    app = sim.make_app("calc")
    scr = app.reset()
    sigs = [signature(a, scr) for a in app.actions()]
    assert len(sigs) == len(set(sigs))
    assert sigs == [signature(a, app.reset()) for a in app.actions()]
    assert all(a.op != "type" or a.target.editable for a in candidate_actions(scr, values=("x",)))


def test_sim_bad_input():
    with pytest.raises(InvalidInputError, match="'word'"):
        sim.make_app("word")
    with pytest.raises(InvalidInputError, match="'clipbord'"):
        sim.make_app("notepad", variant={"clipbord": "x"})
    with pytest.raises(InvalidInputError, match="timing_noise"):
        sim.make_app("calc", timing_noise=2)
    with pytest.raises(InvalidInputError, match="race"):
        sim.make_app("calc", race="sometimes")
    app = sim.make_app("notepad")
    with pytest.raises(InvalidInputError, match="start index 99"):
        app.reset(99)
    with pytest.raises(InvalidInputError, match="'nope'"):
        app.act("nope")
    with pytest.raises(InvalidInputError, match="Action"):
        app.step("click")
    with pytest.raises(InvalidInputError, match="n must be"):
        app.starts(0)


def test_stale_action_is_a_noop():
    app = sim.make_app("notepad")
    menu = app.act("menu.file")
    item = next(e for e in menu.elements if e.text == "Exit")
    app.act("", "key", "escape")
    before = app.screen().to_dict()
    assert app.step(Action("click", item)).to_dict() == before


def test_graph_separates_sim_states():
    g = ScreenGraph(app="notepad")
    app = sim.make_app("notepad")
    s0 = g.observe(app.reset())
    s1 = g.observe(app.act("menu.file"))
    s2 = g.observe(app.act("menu.file.3"))
    assert len({s0, s1, s2}) == 3
    assert g.observe(app.act("dlg.saveas.cancel")) == s0
