"""Drivers: the simulated applications and real ones behind one interface (DESIGN §8).

:func:`make_driver` builds a driver by name:

* ``"notepad"``, ``"explorer"``, ``"calc"`` — the simulated applications of
  :mod:`spatialobs.screen.drivers.sim`;
* ``"mousepad"``, ``"pcmanfm"``, ``"localc"`` — real desktop applications through
  AT-SPI under a private Xvfb display and D-Bus session
  (:mod:`spatialobs.screen.drivers.atspi`; the ``desktop`` extra and system packages);
* ``"jupyterlab"`` — JupyterLab on a fresh local server per launch, in headless
  Chromium (:mod:`spatialobs.screen.drivers.jupyter`; the ``web`` extra);
* ``"web:URL"`` — a web page in headless Chromium through Playwright and the
  accessibility tree (:mod:`spatialobs.screen.drivers.web`; the ``web`` extra).

Real backends are imported only when asked for, so this package imports without
their dependencies.
"""

from __future__ import annotations

from typing import Any

from spatialobs._errors import InvalidInputError
from spatialobs.screen.drivers.base import (
    FAULT_KINDS,
    Driver,
    DriverFault,
    DriverUnavailable,
    ReplayStart,
    ScreenshotUnsupported,
    fault_screen,
)

__all__ = ["Driver", "DriverFault", "DriverUnavailable", "ReplayStart", "FAULT_KINDS", "fault_screen",
           "make_driver", "DRIVER_NAMES", "SIM_APPS", "DESKTOP_APPS", "ScreenshotUnsupported",
           "WEB_APPS"]

#: The simulated applications.
SIM_APPS = ("notepad", "explorer", "calc")
#: The real desktop applications (AT-SPI).
DESKTOP_APPS = ("mousepad", "pcmanfm", "localc")
#: The real web applications (a local server per launch, Chromium).
WEB_APPS = ("jupyterlab",)
#: Every name :func:`make_driver` takes (plus ``web:URL``).
DRIVER_NAMES = SIM_APPS + DESKTOP_APPS + WEB_APPS


def make_driver(name: str, seed: int = 0, **options: Any) -> Driver:
    """The driver for ``name`` (see the module docstring).

    Parameters
    ----------
    name : str
        ``"notepad"``, ``"explorer"``, ``"calc"``, ``"mousepad"``, ``"pcmanfm"``,
        ``"localc"``, ``"jupyterlab"`` or ``"web:URL"``.
    seed : int, default 0
        Seeds the simulators and the replay prefixes of the starts.
    **options
        Passed to the driver (``timeout`` for real ones; ``variant``,
        ``timing_noise``, ``race`` for simulators).

    Raises
    ------
    DriverUnavailable
        A real backend whose system or Python packages are missing.

    Examples
    --------
    >>> make_driver("notepad").reset().meta.app
    'notepad'
    >>> with make_driver("mousepad") as d:  # doctest: +SKIP
    ...     [e.text for e in d.reset().elements if e.role == "menu"][:3]
    ['File', 'Edit', 'Search']
    """
    if not isinstance(name, str):
        raise InvalidInputError(f"driver name must be a string, got {type(name).__name__}")
    if name in SIM_APPS:
        from spatialobs.screen.drivers.sim import make_app

        return make_app(name, seed, **options)
    if name in DESKTOP_APPS:
        from spatialobs.screen.drivers.atspi import AtspiDriver

        return AtspiDriver(name, seed=seed, **options)
    if name in WEB_APPS:
        from spatialobs.screen.drivers.jupyter import JupyterLabDriver

        return JupyterLabDriver(seed=seed, **options)
    if name.startswith("web:"):
        from spatialobs.screen.drivers.web import WebDriver

        return WebDriver(name[4:], seed=seed, **options)
    raise InvalidInputError(f"unknown application {name!r}; choose one of {', '.join(DRIVER_NAMES)} or web:URL")
