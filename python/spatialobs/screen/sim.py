"""The simulated applications, kept importable under their first name.

They live in :mod:`spatialobs.screen.drivers.sim`, beside the real-application
drivers; this module re-exports them.

>>> from spatialobs.screen import sim
>>> sim.make_app("notepad").reset().meta.app
'notepad'
"""

from __future__ import annotations

from spatialobs.screen.drivers.sim import APPS, Calc, Explorer, Notepad, SimApp, Start, make_app

__all__ = ["APPS", "SimApp", "Start", "Notepad", "Explorer", "Calc", "make_app"]
