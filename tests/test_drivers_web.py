"""Web pages through Chromium's accessibility tree, on the test web app served from 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

from spatialobs.screen import ScreenGraph, explore
from spatialobs.screen.actions import Action
from tests._drivers import require, wait_for

WEBAPP = Path(__file__).parent / "data" / "webapp"


def _driver():
    from spatialobs.screen.drivers.web import WebDriver, unavailable_reason

    require(unavailable_reason())
    return WebDriver(str(WEBAPP))


def test_button_at_its_known_box_and_links():
    with _driver() as d:
        scr = d.reset()
        save = next(e for e in scr.elements if e.role == "button" and e.text == "Save draft")
        # index.html places it absolutely at left 40, top 120, 160 x 40
        assert save.bounds == (40.0, 120.0, 200.0, 160.0) and save.clickable
        assert [e.text for e in scr.elements if e.role == "link"] == ["Home", "Tasks", "Settings"]
        assert scr.meta.app == d.name and d.url.startswith("http://127.0.0.1:")


def test_typing_a_task_and_a_modal_dialog():
    with _driver() as d:
        scr = d.reset()
        tasks = next(a for a in d.actions(scr) if a.op == "click" and a.target.text == "Tasks")
        d.step(tasks)
        # the Tasks page offers its text box once it has settled: polled, bounded
        box = wait_for(lambda: next((a for a in d.actions(d.screen()) if a.op == "type" and a.value == "hello"), None),
                       "a 'type hello' action on the Tasks page after clicking Tasks")
        scr = d.step(box)
        scr = d.step(Action("key", None, "enter"))
        assert any(e.role == "listitem" and e.text == "hello" or e.text == "hello" for e in scr.elements)
        # an element of a page that is gone: the click changes nothing and counts as vanished
        d.step(next(a for a in d.actions(scr) if a.op == "click" and a.target.text == "Home"))
        d.step(box)
        assert d.faults["vanished"] == 1


def test_short_episode_builds_a_graph():
    with _driver() as d, ScreenGraph(app=d.name) as g:
        ep = explore(d, steps=12, selector="puct", graph=g)
        assert len(ep.steps) == 12 and g.num_states >= 3
        assert ep.timing["ours"] < ep.timing["wall"]
