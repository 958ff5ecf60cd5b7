"""Resource limits of the screen importers, and the bounded echo used in their messages.

Every screen importer walks its input with an explicit stack (never by
recursion), so no input can exhaust the interpreter's stack; what the limits
below bound is the work and memory one input may cost. Each is checked before
the work it guards, and exceeding one raises
:class:`~spatialobs.InvalidInputError` naming the limit and how to raise it.

================== ===========  ====================================================
limit              default      what it bounds
================== ===========  ====================================================
``max_bytes``      64 MiB       size of a screen file read from disk
``max_depth``      10,000       levels of a Rico view tree (the root is level 1)
``max_nodes``      100,000      Rico nodes walked, DroidBot views, generic elements
``max_string``     16,384       characters kept of a role, text or id; longer
                                strings are cut (texts are normalized to 120
                                characters anyway, see ``features``)
``max_coordinate`` 2^31         magnitude of a bound or screen size, in pixels;
                                centers, sizes and grid cells of such values are
                                exact in float64 and never overflow
================== ===========  ====================================================

The real files the importers are tested on (Rico and DroidBot) stay far below
every default: at most 14 tree levels, 224 views and 156-character strings. The
walk costs O(1) memory per node whatever the depth, so the depth limit is high;
it exists so that a tree built in memory with a cycle, or absurdly deep, stops
with a clear message rather than at ``max_nodes``.
JSON nested deeper than the parser itself allows (about 1,000 levels for the
standard library, 1,024 for orjson) is rejected as invalid JSON.

Examples
--------
>>> ScreenLimits().max_depth
10000
>>> ScreenLimits(max_nodes=10).max_nodes
10
>>> len(echo("x" * 500)) <= ECHO_CHARS
True
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, fields
from typing import Any

from spatialobs._errors import InvalidInputError

__all__ = ["ScreenLimits", "DEFAULT_LIMITS", "ECHO_CHARS", "echo"]

#: Values quoted in error messages are cut to this many characters.
ECHO_CHARS = 80


@dataclass(frozen=True)
class ScreenLimits:
    """Limits on what one screen input may cost (see the module docstring for each).

    Examples
    --------
    >>> from spatialobs.screen import load_screen
    >>> doc = {"width": 10, "height": 10, "elements": [{"bounds": [0, 0, 1, 1], "role": "b"}] * 3}
    >>> load_screen(doc, limits=ScreenLimits(max_nodes=2))
    Traceback (most recent call last):
    ...
    spatialobs._errors.InvalidInputError: generic screen JSON: more than 2 elements (ScreenLimits.max_nodes)
    """

    max_bytes: int = 64 * 2**20
    max_depth: int = 10_000
    max_nodes: int = 100_000
    max_string: int = 16_384
    max_coordinate: float = float(2**31)

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 1 or v != v or v == float("inf"):
                raise InvalidInputError(f"ScreenLimits.{f.name} must be a finite number >= 1, got {echo(v)}")


#: The limits used when none are given.
DEFAULT_LIMITS = ScreenLimits()

_repr = reprlib.Repr()
_repr.maxlevel = 2
_repr.maxstring = ECHO_CHARS
_repr.maxother = ECHO_CHARS
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 4


def echo(value: Any, limit: int = ECHO_CHARS) -> str:
    """A one-line ``repr`` of ``value`` for an error message, at most ``limit`` characters.

    Nested containers are shown two levels deep, so a deeply nested or huge value
    costs neither recursion nor memory; an object whose ``repr`` fails is named by
    its type.

    Examples
    --------
    >>> echo([1, [2, [3, [4]]]])
    '[1, [2, [...]]]'
    >>> len(echo("y" * 10**6)) <= ECHO_CHARS
    True
    """
    try:
        text = _repr.repr(value)
    except Exception:  # a foreign object's __repr__ may raise anything
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: max(limit - 3, 0)] + "..."
    return text
