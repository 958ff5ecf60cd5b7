"""spatialobs: exact, structured views of 2D spaces for software agents.

Three jobs share one C++ core:

* canvas observation (:mod:`spatialobs.canvas`): what an agent editing a 2D
  canvas can see, how objects relate, and where offscreen objects are;
* canvas editing by agents: one typed document and one write path;
* screen identity and exploration (:mod:`spatialobs.screen`).

The geometry kernels they share live in :mod:`spatialobs.geometry`.
"""

from __future__ import annotations

from spatialobs._errors import InvalidInputError, OutOfRangeError, SpatialObsError
from spatialobs import _core

# The version has one place, pyproject.toml's [project] version: the build compiles it into the core
# (CMakeLists.txt), so the Python package and the compiled module cannot disagree.
__version__: str = _core.__version__

__all__ = ["SpatialObsError", "InvalidInputError", "OutOfRangeError", "__version__"]
