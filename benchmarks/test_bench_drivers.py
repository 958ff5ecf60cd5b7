"""Reading a real application's screen over AT-SPI: the driver's batched read and the naive reader.

The naive reader (tests/reference/atspi_oracle.py) makes one D-Bus call at a time, depth
first; the driver sends the calls of a tree level together (and asks an object's role and
interfaces once per launch). Both read the same screen of the same running application in
one group, and each benchmark checks that the two readers agree. Skipped when the
application or its system packages are missing.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from spatialobs.screen.actions import Action

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reference.atspi_oracle import read_screen  # noqa: E402

APPS = ["mousepad", "localc"]


@pytest.fixture(scope="module", params=APPS)
def app(request):
    from spatialobs.screen.drivers.atspi import AtspiDriver, unavailable_reason

    why = unavailable_reason(request.param)
    if why:
        pytest.skip(why)
    with AtspiDriver(request.param) as d:
        scr = d.reset()
        if request.param == "localc":  # a sheet with a value and a formula in it
            for value in ("42", "=1+2"):
                cell = next(a for a in d.actions(scr) if a.op == "type" and a.value == value)
                d.step(cell)
                scr = d.step(Action("key", None, "enter"))
        yield d


def _plain(elements):
    # LibreOffice makes a new object for a cell at every lookup: cells are compared without ids.
    return [dataclasses.replace(e, id=None) if e.role == "table cell" else e for e in elements]


@pytest.mark.benchmark(group="atspi-read")
@pytest.mark.parametrize("reader", ["batched", "naive"])
def test_atspi_read(benchmark, app, reader):
    read = (lambda: app.screen().elements) if reader == "batched" else (lambda: read_screen(app))
    got = benchmark.pedantic(read, rounds=7, iterations=1, warmup_rounds=1)
    assert _plain(got) == _plain(app.screen().elements)
    assert len(got) > 10
