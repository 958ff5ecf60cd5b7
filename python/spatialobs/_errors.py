"""Exceptions raised by spatialobs.

Every error the package raises on purpose derives from :class:`SpatialObsError`.
Errors about bad input are also :class:`ValueError` (or :class:`IndexError` for an
index out of range), so code that already catches those keeps working.
"""

from __future__ import annotations

__all__ = ["SpatialObsError", "InvalidInputError", "OutOfRangeError"]


class SpatialObsError(Exception):
    """Base class of every error spatialobs raises."""


class InvalidInputError(SpatialObsError, ValueError):
    """An argument or a record is malformed; the message names the offending row or field."""


class OutOfRangeError(SpatialObsError, IndexError):
    """An index or id refers to something that does not exist."""
