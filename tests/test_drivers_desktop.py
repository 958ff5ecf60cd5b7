"""Real desktop applications through AT-SPI: oracle checks on known widgets, short episodes, faults, cleanup.

Skipped with the reason when the system packages are missing; with CI=true they must run.
"""

from __future__ import annotations

import dataclasses
import os

import pytest

from spatialobs.screen import ScreenGraph, explore
from spatialobs.screen.actions import Action
from spatialobs.screen.drivers import DriverFault
from tests._drivers import require, session_processes


def _as_read(elements):
    # LibreOffice makes a new accessible object for a cell at every lookup: cells are compared without ids.
    return [dataclasses.replace(e, id=None) if e.role == "table cell" else e for e in elements]


def _matches_naive_reader(d):
    """The driver's batched read and the naive one-call-at-a-time reader see the same screen, in order."""
    from tests.reference.atspi_oracle import read_screen

    batched = d.screen().elements
    assert _as_read(batched) == _as_read(read_screen(d))
    return batched


def _driver(name: str, **kw):
    from spatialobs.screen.drivers.atspi import AtspiDriver, unavailable_reason

    require(unavailable_reason(name))
    return AtspiDriver(name, **kw)


def test_mousepad_menu_bar_and_editor_match_the_tree():
    with _driver("mousepad") as d:
        scr = d.reset()
        menus = [e for e in scr.elements if e.role == "menu"]
        assert [e.text for e in menus] == ["File", "Edit", "Search", "View", "Document", "Help"]
        # one row, left to right, touching or separated, inside the menu bar
        bar = next(e for e in scr.elements if e.role == "menu bar")
        assert all(bar.bounds[1] <= m.bounds[1] and m.bounds[3] <= bar.bounds[3] for m in menus)
        assert all(a.bounds[2] <= b.bounds[0] for a, b in zip(menus, menus[1:]))
        assert all(m.clickable for m in menus)
        assert any(e.role == "text" and e.editable for e in scr.elements)
        # the launch's temporary HOME is shown as ~ (screens match across launches)
        assert not any("spatialobs-session" in (e.text or "") for e in scr.elements)
        # opening File shows its items on the next screen
        file_menu = next(a for a in d.actions(scr) if a.op == "click" and a.target.text == "File")
        items = [e.text for e in d.step(file_menu).elements if e.role == "menu item"]
        assert "Save" in items and "Quit" in items
        items = [e.text for e in _matches_naive_reader(d) if e.role == "menu item"]
        assert "Save" in items and "Quit" in items


def test_mousepad_episode_crash_and_cleanup():
    # settled by tree stability: every screen is read until two reads in a row agree
    d = _driver("mousepad", settle="stable")
    tmp = None
    try:
        with ScreenGraph(app="mousepad") as g:
            ep = explore(d, steps=8, selector="puct", graph=g)
            tmp = d._session.tmp
            assert session_processes(tmp), "the session's processes should be running"
            assert ep.metrics["new_states"] >= 1 and len(ep.steps) == 8
            # the screen a step returns is one that a second read agrees with
            from spatialobs.screen.drivers.atspi import _same

            scr = d.step(next(a for a in d.actions(d.reset()) if a.op == "click" and a.target.text == "File"))
            assert _same(scr, d._read_screen()) and any(e.role == "menu item" for e in scr.elements)
            before = g.num_states
            d.inject_fault("crash")
            with pytest.raises(DriverFault) as exc:
                d.step(Action("key", None, "escape"))
            assert exc.value.kind in ("crash", "exited")
            scr = d.recover()
            assert any(e.role == "menu" for e in scr.elements) and d.faults["recoveries"] == 1
            ep2 = explore(d, steps=3, selector="greedy", graph=g)
            assert len(ep2.steps) == 3 and g.num_states >= before
    finally:
        d.close()
    assert tmp is not None and session_processes(tmp) == []


@pytest.mark.timeout(300)
def test_localc_cell_grid():
    """Slow by design: LibreOffice Calc, started and read over AT-SPI; most of the time is Calc starting (39 s
    on the shared 2-core machine under load).
    """
    with _driver("localc", max_rows=6, max_cols=4) as d:
        scr = d.reset()
        # a fresh sheet: every cell empty, so the grid is checked by position
        grid = [e for e in scr.elements if e.role == "table cell"]
        assert len(grid) == 24
        xs = sorted({e.bounds[0] for e in grid})
        ys = sorted({e.bounds[1] for e in grid})
        assert len(xs) == 4 and len(ys) == 6
        assert all(e.editable and e.clickable for e in grid)
        # the first row's cells touch their neighbours, left to right
        first_row = sorted((e for e in grid if e.bounds[1] == ys[0]), key=lambda e: e.bounds[0])
        assert all(a.bounds[2] == b.bounds[0] for a, b in zip(first_row, first_row[1:]))
        assert all(e.text is None for e in grid)
        # a typed token reaches the cell clicked: after Enter, one cell reads it back, the one under the
        # click (LibreOffice may move the sheet by a toolbar's height once, so its box is taken from the
        # screen read after the action)
        def typed_into(screen, cell, value):
            act = next(a for a in d.actions(screen) if a.op == "type" and a.target == cell and a.value == value)
            d.step(act)
            x, y = (cell.bounds[0] + cell.bounds[2]) / 2, (cell.bounds[1] + cell.bounds[3]) / 2
            got = [e for e in d.step(Action("key", None, "enter")).elements if e.role == "table cell" and e.text]
            return [e.text for e in got if e.bounds[0] <= x < e.bounds[2] and e.bounds[1] <= y < e.bounds[3]], got

        under, got = typed_into(scr, next(e for e in grid if e.bounds[0] == xs[1] and e.bounds[1] == ys[1]), "42")
        assert under == ["42"] and len(got) == 1
        # a formula's value, in the first visible cell of the current screen
        scr = d.screen()
        first = min((e for e in scr.elements if e.role == "table cell"), key=lambda e: (e.bounds[1], e.bounds[0]))
        under, got = typed_into(scr, first, "=1+2")
        assert under == ["3"] and sorted(e.text for e in got) == ["3", "42"]
        _matches_naive_reader(d)


def test_pcmanfm_shows_the_seeded_folder():
    with _driver("pcmanfm") as d:
        scr = d.reset()
        texts = [e.text or "" for e in scr.elements]
        assert any(t.endswith("/Files") and t.startswith("~") for t in texts), texts
        assert any(e.role == "menu" and e.text == "File" for e in scr.elements)
        # the folder view's icons have no accessible name: their file name is their text content
        root = os.path.join(d._home, "Files")
        view = next(e for e in scr.elements if e.role == "layered pane")
        icons = [e for e in scr.elements if e.role == "icon" and view.bounds[0] <= e.bounds[0]
                 and view.bounds[1] <= e.bounds[1] and e.bounds[2] <= view.bounds[2] and e.bounds[3] <= view.bounds[3]]
        assert sorted(e.text for e in icons) == sorted(os.listdir(root))
        # the side pane's rows are cells with no text of their own: their names come from their children
        assert "Home Folder" in [e.text for e in scr.elements if e.role == "table cell"]
        _matches_naive_reader(d)
