"""Conformance fixtures: the real tldraw and Excalidraw editors through their harnesses.

Without an installed harness (or without Chromium) the tests skip with the reason;
with ``CI=true`` they fail instead, because CI installs the harnesses.
"""

from __future__ import annotations

import os
from typing import Optional

import pytest

from tests.conformance import tldraw_harness
from tests.conformance.excalidraw_harness import HarnessCache, unavailable_reason


def require(editor: str, reason: Optional[str]) -> None:
    """Skip when a harness cannot run (``reason``), or fail when CI should have installed it."""
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but the {editor} harness cannot run: {reason}", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def excalidraw_harness() -> HarnessCache:
    """A session cache of Excalidraw harness results; skips (fails on CI) when it is missing."""
    require("Excalidraw", unavailable_reason())
    return HarnessCache()


@pytest.fixture(scope="module")
def harness() -> None:
    """The tldraw harness can run here; skips (fails on CI) when it is missing."""
    require("tldraw", tldraw_harness.unavailable_reason())
