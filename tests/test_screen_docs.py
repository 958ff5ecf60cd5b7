"""Docstring examples of the screen modules run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "spatialobs.screen",
    "spatialobs.screen.features",
    "spatialobs.screen.importers",
    "spatialobs.screen.embed",
    "spatialobs.screen.state_index",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
