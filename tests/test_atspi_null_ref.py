"""AT-SPI's null reference (an empty bus name) is an error reply of its own, never a malformed message."""

from __future__ import annotations

import pytest

pytest.importorskip("jeepney")

from spatialobs.screen.drivers import atspi  # noqa: E402


class _NoConnection:
    def __getattr__(self, name):
        raise AssertionError(f"nothing may be sent for a null reference ({name})")


def _bus():
    b = atspi._Bus.__new__(atspi._Bus)
    b.conn, b.timeout, b.calls = _NoConnection(), 1.0, 0
    return b


def test_a_call_on_the_null_reference_is_a_call_error_without_sending():
    with pytest.raises(atspi._CallError):
        _bus().call(("", "/org/a11y/atspi/null"), "org.a11y.atspi.Accessible", "GetRole")


def test_batched_calls_on_the_null_reference_are_call_errors_without_sending():
    out = _bus().call_many([(("", "/org/a11y/atspi/null"), "org.a11y.atspi.Accessible", "GetRole", "", ())] * 3)
    assert len(out) == 3 and all(isinstance(r, atspi._CallError) for r in out)
