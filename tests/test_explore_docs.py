"""Docstring examples of the exploration modules run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "spatialobs.screen.actions",
    "spatialobs.screen.store",
    "spatialobs.screen.graph",
    "spatialobs.screen.select",
    "spatialobs.screen.sim",
    "spatialobs.screen.explore",
    "spatialobs.screen.studies",
    "spatialobs.screen.traces",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
