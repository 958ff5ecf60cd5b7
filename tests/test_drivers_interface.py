"""The driver interface: simulators behind make_driver, faults recorded as failed transitions."""

from __future__ import annotations

import pytest

from spatialobs.screen import ScreenGraph, explore, sim
from spatialobs.screen.drivers import Driver, DriverFault, ReplayStart, make_driver
from spatialobs.screen.model import Element, Screen, ScreenMeta


def test_simulators_are_drivers_and_sim_still_imports():
    d = make_driver("notepad", seed=1)
    assert isinstance(d, Driver)
    assert isinstance(sim.make_app("calc"), Driver)
    assert d.reset().meta.app == "notepad"
    d.close()


def test_unknown_name_is_rejected():
    with pytest.raises(ValueError, match="unknown application"):
        make_driver("wordpad")


def test_desktop_driver_options_are_checked_before_anything_starts():
    from spatialobs import InvalidInputError
    from spatialobs.screen.drivers.atspi import AtspiDriver

    with pytest.raises(InvalidInputError, match=r"^settle must be 'stable' or 'fixed', got 'slow'$"):
        AtspiDriver("mousepad", settle="slow")
    with pytest.raises(InvalidInputError, match=r"^settle_timeout must be a positive number of seconds, got 0$"):
        AtspiDriver("mousepad", settle_timeout=0)
    with pytest.raises(InvalidInputError, match=r"^unknown desktop application 'gedit'; choose one of"):
        AtspiDriver("gedit")


class Flaky(Driver):
    """Two screens; the 'crash' button kills the app (a DriverFault), every launch is counted."""

    name = "flaky"
    keys = ("escape",)

    def _launch(self) -> None:
        self.page = "home"

    def screen(self) -> Screen:
        els = [Element((0, 0, 50, 20), "button", "next", clickable=True),
               Element((0, 30, 50, 50), "button", "crash", clickable=True),
               Element((0, 60, 50, 80), "text", self.page)]
        return Screen(els, 100, 100, ScreenMeta(app="flaky"))

    def _act(self, action):
        if action.op == "click" and action.target.text == "crash":
            raise DriverFault("crash", "planted")
        if action.op == "click":
            self.page = "next"
        else:
            self.page = "home"


def test_a_fault_is_a_failed_transition_and_the_graph_survives():
    d = Flaky()
    with ScreenGraph(app="flaky") as g:
        ep = explore(d, steps=12, selector="puct", prior="uniform", graph=g, start=ReplayStart(0, 0))
        caps = g.captures()
        assert len(ep.steps) == 12
        assert ep.faults >= 1 and d.faults["crash"] == ep.faults
        assert [c.app for c in caps] == ["fault:crash"] * ep.faults
        assert d.faults["recoveries"] == ep.faults and d.launches == 1 + ep.faults
        assert g.num_states == 2
    assert ep.timing["wall"] >= ep.timing["env"] >= 0


def test_replay_starts_are_deterministic_and_a_breaking_prefix_is_shortened():
    d = Flaky()
    texts = {d.reset(ReplayStart(i, 3, seed=2)).elements[-1].text for i in range(8) for _ in range(2)}
    assert texts <= {"home", "next"}
    a = [d.reset(ReplayStart(i, 3, seed=2)).elements[-1].text for i in range(8)]
    assert a == [d.reset(ReplayStart(i, 3, seed=2)).elements[-1].text for i in range(8)]
    # some prefix drew the crashing button: the launch was retried with the prefix before it
    assert d.faults["crash"] > 0
    assert [s.depth for s in d.starts(6, max_depth=2)] == [0, 1, 2, 0, 1, 2]
