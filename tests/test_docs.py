"""Docstring examples of the installed package run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["spatialobs.geometry", "spatialobs.synth", "spatialobs.render"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
