"""JupyterLab as the real web application: a local server per launch, read in Chromium.

Skipped with the reason when Chromium, Playwright or JupyterLab is missing; with CI=true they must run.
"""

from __future__ import annotations

import os

import pytest

from spatialobs.screen import ScreenGraph, explore
from spatialobs.screen.actions import Action
from spatialobs.screen.drivers import DriverFault
from tests._drivers import require, wait_for

# The DOM's own boxes of the file browser's entries: the oracle the accessibility read is checked against.
LISTING_JS = """() => [...document.querySelectorAll('.jp-DirListing-item')].map(e => {
    const r = e.getBoundingClientRect();
    return [e.querySelector('.jp-DirListing-itemText').textContent, r.left, r.top, r.right, r.bottom]; })"""


def _driver(**kw):
    from spatialobs.screen.drivers.jupyter import JupyterLabDriver, unavailable_reason

    require(unavailable_reason())
    return JupyterLabDriver(**kw)


@pytest.mark.timeout(300)
def test_menu_bar_and_file_browser_match_the_page_no_state_leaks_and_kernels_die():
    """Slow by design: a real JupyterLab server read in Chromium, launched twice (a reset is a new server), and
    a kernel started, then killed with its server (49 s on the shared 2-core machine under load).
    """
    from spatialobs.screen.drivers.jupyter import SEED_FILES, marked_processes

    d = _driver()
    try:
        scr = d.reset()
        assert scr.meta.app == "jupyterlab" and "token" not in (scr.source or "")
        bar = next(e for e in scr.elements if e.role == "menubar")
        menus = [e for e in scr.elements if e.role == "menuitem"]
        assert [e.text for e in menus] == ["File", "Edit", "View", "Run", "Kernel", "Tabs", "Settings", "Help"]
        assert all(bar.bounds[0] <= m.bounds[0] and m.bounds[2] <= bar.bounds[2] + 1 for m in menus)
        assert all(a.bounds[2] <= b.bounds[0] for a, b in zip(menus, menus[1:])) and all(m.clickable for m in menus)
        # each seeded top-level entry is a listitem at the box the page lays it out at
        top = sorted({k.split("/")[0] for k in SEED_FILES})
        dom = {r[0]: tuple(float(v) for v in r[1:]) for r in d._page.evaluate(LISTING_JS)}
        assert sorted(dom) == top
        items = {e.text.split(" ")[1]: e for e in scr.elements if e.role == "listitem" and (e.text or "").startswith("Name: ")}
        assert sorted(items) == top
        for name, e in items.items():
            assert e.bounds == dom[name] and e.clickable, (name, e.bounds, dom[name])
        # clock-dependent texts are normalized, so the same screen matches across launches
        assert "Modified: <time>" in items["notes.md"].text
        # File opens its menu; a click selects notes.md and Enter opens it in an editor tab
        f = next(a for a in d.actions(scr) if a.op == "click" and a.target.text == "File")
        texts = [e.text for e in d.step(f).elements if e.role == "menuitem"]
        assert "Save Ctrl+S" in texts and "Open from Path…" in texts
        scr = d.step(Action("key", None, "escape"))
        notes = next(a for a in d.actions(scr) if a.op == "click" and a.target.role == "listitem"
                     and "notes.md" in a.target.text)
        d.step(notes)
        scr = d.step(Action("key", None, "enter"))
        assert any(e.role == "tab" and e.text == "notes.md" for e in scr.elements)
        assert any(e.role == "textbox" and "Ideas for the quarterly report." in (e.text or "") for e in scr.elements)
        # a file made in one episode is gone after a reset: a new server on a new root folder
        first_root, first_tmp = d.root, d._tmp
        with open(os.path.join(first_root, "leftover.txt"), "w") as fh:
            fh.write("x")
        scr = d.reset()
        assert d.root != first_root and not os.path.exists(first_tmp)
        assert not any("leftover.txt" in (e.text or "") for e in scr.elements)
        assert not any(e.role == "tab" and e.text == "notes.md" for e in scr.elements)
        # the fresh launch shows the launcher; its notebook button starts a kernel (in a session of its own)
        nb = next(a for a in d.actions(scr) if a.op == "click" and a.target.role == "button"
                  and (a.target.text or "").startswith("Python 3"))
        d.step(nb)
        tmp = d._tmp
        marker = f"SPATIALOBS_JUPYTER_LAUNCH={tmp}"

        def notebook_open() -> object:
            s = d.screen()
            return s if len(marked_processes(marker)) >= 2 and any(
                e.role == "tab" and e.text == "Untitled.ipynb" for e in s.elements) else None

        wait_for(notebook_open, "the notebook's tab (Untitled.ipynb) and the server and its kernel running",
                 timeout=60, interval=0.5)
        # killed outright, the server cannot shut its kernel down: the driver must find and kill it
        d._server_proc.kill()
        d._server_proc.wait(timeout=5)
        with pytest.raises(DriverFault) as exc:
            d.step(Action("key", None, "escape"))
        assert exc.value.kind == "crash"
    finally:
        d.close()
    assert not os.path.exists(tmp) and marked_processes(marker) == []


@pytest.mark.timeout(300)
def test_log_out_is_a_capture_and_the_lab_comes_back():
    """File > Log Out leads to the server's /logout page, which no action of the lab leaves: with the shipped
    spec's ``paths`` it is a capture, not a state, and a recovery is a clean lab again (two launches).
    """
    from spatialobs.screen.actions import signature

    with _driver() as d, ScreenGraph(app="jupyterlab") as g:
        scr = d.reset()
        s = g.observe(scr)
        menu = d.step(next(a for a in d.actions(scr) if a.op == "click" and a.target.text == "File"))
        out = next(a for a in d.actions(menu) if a.op == "click" and a.target.text == "Log Out")
        nxt = d.step(out)
        assert nxt.meta.app == "jupyterlab/logout" and nxt.source.endswith("/logout")
        assert "Successfully logged out." in [e.text for e in nxt.elements]
        tr = g.record(g.observe(menu), signature(out, menu), nxt, action=out)
        assert tr.capture == "jupyterlab/logout" and g.num_states == 2 and s == 0
        back = d.recover()
        assert back.meta.app == "jupyterlab" and "/lab" in back.source
        assert "File" in [e.text for e in back.elements if e.role == "menuitem"]


@pytest.mark.timeout(300)
def test_short_episode():
    """Slow by design: a real JupyterLab server and Chromium for six steps (36 s on the shared 2-core machine
    under load).
    """
    with _driver() as d, ScreenGraph(app="jupyterlab") as g:
        ep = explore(d, steps=6, selector="puct", graph=g)
        assert len(ep.steps) == 6 and g.num_states >= 2 and ep.faults == 0
