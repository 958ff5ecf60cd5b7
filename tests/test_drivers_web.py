"""Web pages through Chromium's accessibility tree, on the test web app served from 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spatialobs.screen import ScreenGraph, explore
from spatialobs.screen.actions import Action
from spatialobs.screen.drivers import DriverFault
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


# ---- navigation, origins, login: a local site whose slow/ pages answer after SLOW seconds ----

WEBNAV = Path(__file__).parent / "data" / "webnav"
SLOW = 1.5


@pytest.fixture(scope="module")
def site():
    import functools
    import threading
    import time
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self):
            if self.path.startswith("/slow/"):
                time.sleep(SLOW)
            super().do_GET()

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(WEBNAV)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()
    srv.server_close()


def _nav(base, page="index.html", **fields):
    from spatialobs.screen.drivers import AppSpec
    from spatialobs.screen.drivers.web import WebDriver, unavailable_reason

    require(unavailable_reason())
    timeout = fields.pop("timeout", 10.0)
    return WebDriver(AppSpec.from_url(base + page, **fields), timeout=timeout)


def _click(d, scr, text):
    return d.step(next(a for a in d.actions(scr) if a.op == "click" and a.target.text == text))


def _headings(scr):
    return [e.text for e in scr.elements if e.role == "heading"]


def test_a_screen_is_read_after_the_navigation_never_the_old_page_or_an_empty_tree(site):
    import time

    with _nav(site) as d:
        # a navigation that a timer starts 400 ms after the click
        scr = _click(d, d.reset(), "Go there later")
        assert (scr.source, scr.title, _headings(scr)) == (site + "later.html", "Nav - Later", ["Arrived later"])
        # a page whose server answers after SLOW seconds
        scr = _click(d, scr, "Home")
        t0 = time.monotonic()
        scr = _click(d, scr, "Slow page")
        assert time.monotonic() - t0 >= SLOW
        assert scr.source == site + "slow/page.html" and _headings(scr) == ["The slow page"]
        # content that a page adds a moment after its load
        scr = _click(d, _click(d, scr, "Home"), "Late content")
        assert _headings(scr) == ["Content at last"] and scr.source == site + "late.html"


def test_a_page_of_another_origin_is_a_capture_of_the_step_that_left(site):
    from spatialobs.screen.actions import signature

    port = site.rsplit(":", 1)[1].strip("/")
    with _nav(site) as d, ScreenGraph(app=d.name, evidence=True) as g:
        scr = d.reset()
        s = g.observe(scr)
        away = next(a for a in d.actions(scr) if a.op == "click" and a.target.text == "Elsewhere")
        nxt = d.step(away)
        # the step's own screen is the other site (the URL is read after the navigation, not one step late)
        assert nxt.meta.app == f"web:localhost:{port}" != d.name and nxt.source == f"http://localhost:{port}/away.html"
        tr = g.record(s, signature(away, scr), nxt, action=away)
        assert tr.capture == f"web:localhost:{port}" and g.num_states == 1
        assert g.captures()[0].url == nxt.source and g.captures()[0].signature == signature(away, scr)
        assert d.recover().source == site + "index.html"
    with _nav(site, goal="go elsewhere") as d, ScreenGraph(app=d.name, evidence=True) as g:
        ep = explore(d, steps=5, selector="puct", graph=g)
        caps = g.captures()
        assert caps and all("|elsewhere|" in c.signature for c in caps)
        assert [s.capture for s in ep.steps if s.capture] == [c.app for c in caps]
        # every state is a page of the site with elements on it, never a page in between
        ev = g.store.evidence()
        assert ev and all(e.url.startswith(site) and json.loads(e.elements) for e in ev)


def test_a_page_of_the_origin_outside_the_spec_paths_is_a_capture(site):
    from spatialobs.screen.actions import signature

    with _nav(site, paths=["/index.html", "/late.html", "/later.html", "/slow"]) as d, \
            ScreenGraph(app=d.name, evidence=True) as g:
        scr = d.reset()
        assert scr.meta.app == d.name
        s = g.observe(scr)
        out = next(a for a in d.actions(scr) if a.op == "click" and a.target.text == "Sign out")
        nxt = d.step(out)
        # the sign-in page is served by the same origin, but it is not the app: the step that reached it left
        assert nxt.meta.app == d.name + "/login.html" and nxt.source == site + "login.html"
        tr = g.record(s, signature(out, scr), nxt, action=out)
        assert tr.capture == d.name + "/login.html" and g.num_states == 1
        assert d.recover().source == site + "index.html"
        # a page under one of the paths is the app
        assert _click(d, d.screen(), "Late content").meta.app == d.name
    # without paths, the same page is a state of the app
    with _nav(site) as d:
        assert _click(d, d.reset(), "Sign out").meta.app == d.name


def test_origins_of_the_spec_belong_to_the_app(site):
    port = site.rsplit(":", 1)[1].strip("/")
    with _nav(site, origins=[site.rstrip("/"), f"http://localhost:{port}"]) as d:
        scr = _click(d, d.reset(), "Elsewhere")
        assert scr.meta.app == d.name and _headings(scr) == ["Another site"]


def test_login_steps_run_after_every_launch(site):
    login = [{"fill": "#user", "value": "alice"}, {"click": "#signin"}, {"wait_for": "text=Signed in as alice"}]
    with _nav(site, "login.html", login=login) as d:
        for _ in range(2):
            scr = d.reset()
            assert "Signed in as alice" in [e.text for e in scr.elements] and scr.source.endswith("?user=alice")
    with _nav(site, "login.html", login=[{"click": "#no-such-button"}], timeout=1.0) as d:
        with pytest.raises(DriverFault, match=r"login step 1 \(click '#no-such-button'\) failed"):
            d.reset()


def test_store_of_a_web_app_from_the_command_line(tmp_path, capsys):
    from spatialobs.cli import main
    from spatialobs.screen.drivers.web import unavailable_reason

    require(unavailable_reason())
    db = tmp_path / "web.sqlite"
    assert main(["explore", "--app", f"web:{WEBAPP}", "--steps", "6", "--store", str(db)]) == 0
    with ScreenGraph(db) as g:
        assert g.app == "web:webapp" and g.num_states >= 2
        ev = g.store.evidence()
        shots = {r.digest for r in g.store.screenshots()}
        # one screenshot per observation, each of the page whose URL and title the observation has
        assert len(ev) == len(list(g.store.observations())) and {e.screenshot for e in ev} <= shots
        assert all(e.url.startswith("http://127.0.0.1:") and e.title.startswith("Tasks - ") for e in ev)
    assert "screenshot(s)" in capsys.readouterr().out
