"""Excalidraw conformance fixtures: the harness, run once per file per session.

Without an installed harness (or without Chromium) the tests skip with the reason;
with ``CI=true`` they fail instead, because CI installs the harness.
"""

from __future__ import annotations

import os

import pytest

from tests.conformance.excalidraw_harness import HarnessCache, unavailable_reason


@pytest.fixture(scope="session")
def excalidraw_harness() -> HarnessCache:
    """A session cache of harness results; skips (fails on CI) when the harness is missing."""
    reason = unavailable_reason()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but the Excalidraw harness cannot run: {reason}", pytrace=False)
        pytest.skip(reason)
    return HarnessCache()
