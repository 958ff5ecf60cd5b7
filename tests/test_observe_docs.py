"""Docstring examples of the observation, baseline, evaluation, scenario and agent modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["spatialobs.canvas.observe", "spatialobs.canvas.baseline", "spatialobs.canvas.evaluate",
           "spatialobs.canvas.scenarios", "spatialobs.canvas.agent"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
