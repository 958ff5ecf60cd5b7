"""Docstring examples of the agent-editing modules run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["spatialobs.canvas.ops", "spatialobs.canvas.html", "spatialobs.canvas.place",
           "spatialobs.canvas.editor", "spatialobs.canvas.snapshot"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
