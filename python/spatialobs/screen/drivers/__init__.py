"""Drivers: the simulated applications and real ones behind one interface (DESIGN §8).

:func:`make_driver` builds a driver from a name or an :class:`AppSpec`:

* ``"notepad"``, ``"explorer"``, ``"calc"`` — the simulated applications of
  :mod:`spatialobs.screen.drivers.sim`;
* ``"mousepad"``, ``"pcmanfm"``, ``"localc"`` — real desktop applications through
  AT-SPI under a private Xvfb display and D-Bus session
  (:mod:`spatialobs.screen.drivers.atspi`; the ``desktop`` extra and system packages),
  from the specs shipped in ``spatialobs/screen/apps/``;
* ``"cmd:COMMAND"`` — any desktop application by its command line (GTK 2/3/4, Qt 5/6,
  Electron: the accessibility settings of each are set);
* ``"jupyterlab"`` — JupyterLab on a fresh local server per launch, in headless
  Chromium (:mod:`spatialobs.screen.drivers.jupyter`; the ``web`` extra);
* ``"web:URL"`` — a web page in headless Chromium through Playwright and the
  accessibility tree (:mod:`spatialobs.screen.drivers.web`; the ``web`` extra);
* an :class:`AppSpec` (:func:`load_spec` reads one from a TOML file) — any of the
  real applications above with its own command or URL, environment, seeded files,
  goal, values, keys, timeouts and volatile texts (:mod:`spatialobs.screen.drivers.spec`).

Real backends are imported only when asked for, so this package imports without
their dependencies.
"""

from __future__ import annotations

from typing import Any, Union

from spatialobs._errors import InvalidInputError
from spatialobs.screen.drivers.spec import BUILTIN_APPS, AppSpec, SpecError, VolatileRule, builtin_spec, load_spec
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
           "WEB_APPS", "AppSpec", "VolatileRule", "SpecError", "load_spec", "builtin_spec", "resolve_app"]

#: The simulated applications.
SIM_APPS = ("notepad", "explorer", "calc")
#: The real desktop applications (AT-SPI).
DESKTOP_APPS = ("mousepad", "pcmanfm", "localc")
#: The real web applications (a local server per launch, Chromium).
WEB_APPS = ("jupyterlab",)
#: Every name :func:`make_driver` takes (plus ``web:URL``).
DRIVER_NAMES = SIM_APPS + DESKTOP_APPS + WEB_APPS


def resolve_app(app: Union[str, AppSpec]) -> Union[str, AppSpec]:
    """A simulator's name as it is, or the :class:`AppSpec` of a real application (name, ``cmd:``, ``web:`` or spec).

    Examples
    --------
    >>> resolve_app("notepad")
    'notepad'
    >>> resolve_app("cmd:galculator").command
    ('galculator',)
    >>> resolve_app("web:http://127.0.0.1:8000/").name
    'web:127.0.0.1:8000'
    """
    if isinstance(app, AppSpec):
        return app
    if not isinstance(app, str):
        raise InvalidInputError(f"application must be a name or an AppSpec, got {type(app).__name__}")
    if app in SIM_APPS:
        return app
    if app in BUILTIN_APPS:
        return builtin_spec(app)
    if app.startswith("cmd:"):
        return AppSpec.from_command(app)
    if app.startswith("web:"):
        return AppSpec.from_url(app)
    raise InvalidInputError(f"unknown application {app!r}; choose one of {', '.join(DRIVER_NAMES)}, "
                            "cmd:COMMAND or web:URL")


def make_driver(app: Union[str, AppSpec], seed: int = 0, **options: Any) -> Driver:
    """The driver for ``app`` (see the module docstring).

    Parameters
    ----------
    app : str or AppSpec
        ``"notepad"``, ``"explorer"``, ``"calc"``, ``"mousepad"``, ``"pcmanfm"``,
        ``"localc"``, ``"jupyterlab"``, ``"cmd:COMMAND"``, ``"web:URL"``, or a spec.
    seed : int, default 0
        Seeds the simulators, the spec's folder tree and the replay prefixes of the starts.
    **options
        Passed to the driver (``timeout`` for real ones; ``variant``,
        ``timing_noise``, ``race`` for simulators).

    Raises
    ------
    DriverUnavailable
        A real backend whose system or Python packages are missing.
    SpecError
        A malformed spec or ``cmd:`` / ``web:`` argument.

    Examples
    --------
    >>> make_driver("notepad").reset().meta.app
    'notepad'
    >>> with make_driver("mousepad") as d:  # doctest: +SKIP
    ...     [e.text for e in d.reset().elements if e.role == "menu"][:3]
    ['File', 'Edit', 'Search']
    >>> with make_driver(AppSpec.from_command("galculator", values=["7"])) as d:  # doctest: +SKIP
    ...     d.app, d.values
    ('galculator', ('7',))
    """
    spec = resolve_app(app)
    if isinstance(spec, str):
        from spatialobs.screen.drivers.sim import make_app

        return make_app(spec, seed, **options)
    if spec.driver == "desktop":
        from spatialobs.screen.drivers.atspi import AtspiDriver

        return AtspiDriver(spec, seed=seed, **options)
    if spec.driver == "jupyterlab":
        from spatialobs.screen.drivers.jupyter import JupyterLabDriver

        return JupyterLabDriver(seed=seed, spec=spec, **options)
    from spatialobs.screen.drivers.web import WebDriver

    return WebDriver(spec, seed=seed, **options)
