"""Every docstring example of the installed package runs as a test.

Modules are found by walking the package, so a new module is covered without
being listed; every public module must carry at least one example.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import spatialobs

#: Modules with no examples by design: internals (the compiled featurize, observe, signature, element-bounds,
#: node-columns and line-run loops are checked against their Python twins, the JSON writer against json.dumps; Cython's
#: utility code, compiled once for every Cython module, has no API of its own), and the command line (tested in
#: test_cli.py).
NO_EXAMPLES = {"spatialobs", "spatialobs._core", "spatialobs._errors", "spatialobs.canvas.document.derive",
               "spatialobs.screen._persist", "spatialobs.screen._cfeatures", "spatialobs.canvas._cobserve",
               "spatialobs.screen._cactions", "spatialobs.screen._cmodel", "spatialobs.canvas.document._cextract",
               "spatialobs.canvas.document._cfreehand",
               "spatialobs.canvas._cjson", "spatialobs.canvas._cpagetables", "spatialobs._cyutility",
               "spatialobs.cli"}
MODULES = sorted(
    m.name for m in pkgutil.walk_packages(spatialobs.__path__, "spatialobs.") if m.name != "spatialobs.__main__"
)


def test_the_walk_finds_the_package():
    assert {"spatialobs.geometry", "spatialobs.canvas.observe", "spatialobs.screen.explore"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    if name not in NO_EXAMPLES:
        assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
