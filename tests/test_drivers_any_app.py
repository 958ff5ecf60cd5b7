"""Any desktop application through an app spec or cmd:, on three toolkits beyond the shipped applications.

galculator (GTK 3), GPicView (GTK 2) and FeatherPad (Qt 5), each explored through its
spec file in tests/data/apps/ and through ``cmd:`` in short episodes into an SQLite
store with screenshots; a calculator's display as a volatile text; launches that
fail (a command that exits at once, one that never registers on the accessibility
bus, a GTK 2 bridge that cannot load) end in seconds with one line. Skipped with the
reason when the programs are missing; with CI=true they must run
(``tools/setup-apps.sh`` installs them).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from spatialobs.screen import ScreenGraph, explore
from spatialobs.screen.drivers import AppSpec, DriverFault, load_spec, make_driver
from tests._drivers import require

APPS = Path(__file__).parent / "data" / "apps"

# (spec file, toolkit, a widget its first screen shows: (role, text))
TOOLKITS = [
    ("galculator.toml", "gtk3", ("toggle button", "=")),
    ("gpicview.toml", "gtk2", ("push button", "Zoom In")),
    ("featherpad.toml", "qt5", ("menu item", "File")),
]


def _spec(name: str) -> AppSpec:
    from spatialobs.screen.drivers.atspi import unavailable_reason

    spec = load_spec(APPS / name)
    require(unavailable_reason(spec))
    return spec


@pytest.mark.parametrize("how", ["spec", "cmd"])
@pytest.mark.parametrize("name,toolkit,widget", TOOLKITS, ids=[t[1] for t in TOOLKITS])
def test_explore_an_application_into_a_store_with_screenshots(tmp_path, name, toolkit, widget, how):
    spec = _spec(name)
    # through cmd: the program alone (the toolkit detected, no file seeded)
    app = spec if how == "spec" else "cmd:" + spec.program
    with make_driver(app) as d, ScreenGraph(tmp_path / "g.sqlite", app=d.app) as g:
        assert d.app == spec.name and d.toolkit == toolkit
        scr = d.reset()
        assert widget in [(e.role, e.text) for e in scr.elements]
        assert scr.title
        ep = explore(d, steps=5, selector="puct", graph=g)
        assert len(ep.steps) == 5 and g.num_states >= 1
        ev = g.store.evidence()
        shots = {r.digest: r for r in g.store.screenshots()}
        # every observation has its element table and a screenshot of the application's windows
        assert len(ev) == len(g.store.observations()) >= 1
        assert all(e.screenshot in shots and json.loads(e.elements) and e.title for e in ev)
        assert all(0 < r.width <= d.width and 0 < r.height <= d.height for r in shots.values())
        # each step names the observations it went from and to
        steps = g.store.transitions() + g.store.captures()
        assert len(steps) == 5 and all(s.source_observation >= 1 for s in steps)


def test_a_spec_seeds_files_and_its_volatile_texts_leave_the_state_alone():
    # FeatherPad opens the file the spec seeds under the launch's HOME
    with make_driver(_spec("featherpad.toml")) as d:
        scr = d.reset()
        assert "first line" in [e.text for e in scr.elements if e.role == "text" and e.editable]
        assert "notes.txt" in (scr.title or "")
    # galculator's display: with the spec's rule its number is volatile, through cmd: it is not
    spec = _spec("galculator.toml")
    for app, display in ((spec, "<display>"), ("cmd:galculator", "7")):
        with make_driver(app) as d, ScreenGraph(app=d.app) as g:
            scr = d.reset()
            before = g.observe(scr)
            seven = next(a for a in d.actions(scr) if a.op == "click" and a.target.text == "7")
            nxt = d.step(seven)
            shown = [e.text for e in nxt.elements if e.role == "text"]
            assert shown == [display], shown
            if display == "<display>":
                assert g.observe(nxt) == before and len(g.store.observations()) == 1


def test_a_modal_dialog_inside_an_action_is_not_a_hang():
    # Qt runs a file dialog inside DoAction and answers the call only once it closes
    with make_driver(_spec("featherpad.toml"), timeout=4.0) as d:
        scr = d.reset()
        t0 = time.monotonic()
        nxt = d.step(next(a for a in d.actions(scr) if a.op == "click" and a.target.text == "Open"))
        assert time.monotonic() - t0 < 4.0
        assert any(e.role == "dialog" or e.text == "Cancel" for e in nxt.elements)
        assert d.faults["hang"] == 0


def _fails(argv, capsys):
    from spatialobs.cli import main

    t0 = time.monotonic()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("spatialobs: error: "), err
    return err, time.monotonic() - t0


def test_bad_specs_fail_with_one_line_and_status_2(tmp_path, capsys):
    missing = tmp_path / "missing.toml"
    missing.write_text('goal = "add numbers"\n')
    err, _ = _fails(["explore", "--app-spec", str(missing), "--steps", "2"], capsys)
    assert "spec missing.toml: missing 'command'" in err
    typo = tmp_path / "typo.toml"
    typo.write_text('comand = "galculator"\n')
    err, _ = _fails(["explore", "--app-spec", str(typo), "--steps", "2"], capsys)
    assert "spec typo.toml: unknown key 'comand' (did you mean 'command'?)" in err
    bad = tmp_path / "bad.toml"
    bad.write_text('command = "galculator\n')
    err, _ = _fails(["explore", "--app-spec", str(bad), "--steps", "2"], capsys)
    assert "spec bad.toml: not TOML" in err
    err, _ = _fails(["explore", "--app", "cmd:no-such-program-here", "--steps", "2"], capsys)
    assert "'no-such-program-here' is not installed or not on PATH" in err
    # no store is left behind by a run that never started
    store = tmp_path / "never.sqlite"
    _fails(["explore", "--app-spec", str(typo), "--steps", "2", "--store", str(store)], capsys)
    assert not store.exists()


def test_launches_that_fail_end_in_seconds_with_one_line(tmp_path, capsys):
    from spatialobs.screen.drivers.atspi import unavailable_reason

    require(unavailable_reason("cmd:galculator"))
    err, secs = _fails(["explore", "--app", "cmd:true", "--steps", "2"], capsys)
    assert "true exited at once (code 0) before it showed a window" in err and secs < 15
    store = tmp_path / "g.sqlite"
    # a GTK 3 application whose bridge is switched off: its window shows, it never registers
    quiet = tmp_path / "quiet.toml"
    quiet.write_text('command = "galculator"\nregister_timeout = 2\n[env]\nNO_AT_BRIDGE = "1"\n')
    err, secs = _fails(["explore", "--app-spec", str(quiet), "--steps", "2", "--store", str(store)], capsys)
    assert "galculator showed a window but never appeared on the accessibility bus within 2 s (GTK 3)" in err
    assert "NO_AT_BRIDGE=1" in err and secs < 15 and not store.exists()
    # a GTK 2 bridge that cannot load: said as soon as GTK says so
    broken = AppSpec.from_command("gpicview", toolkit="gtk2", env={"GTK_PATH": "{home}/gtk"},
                                  files={"gtk/modules/libatk-bridge.so": "not a library"})
    require(unavailable_reason(broken))
    from spatialobs.screen.drivers.atspi import NotAccessible

    t0 = time.monotonic()
    with make_driver(broken) as d, pytest.raises(NotAccessible, match="could not load the GTK accessibility bridge"):
        d.reset()
    assert time.monotonic() - t0 < 15 and d.launches == 0


def test_a_fault_in_a_launch_is_retried_then_reported():
    from spatialobs.screen.drivers.atspi import unavailable_reason

    require(unavailable_reason("cmd:sh"))
    with make_driver(AppSpec.from_command("sh -c 'exit 3'")) as d:
        with pytest.raises(DriverFault, match=r"^crash: sh exited at once \(code 3\) before it showed a window"):
            d.reset()
        assert d.faults["crash"] == 3 and d.launches == 0
