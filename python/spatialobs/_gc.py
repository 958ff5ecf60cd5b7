"""The cyclic garbage collector paused while a document's objects are built (the floor below the packages).

Loading a large canvas or deriving a large page creates hundreds of thousands of dicts, lists and
tuples in one go, none of them garbage; each allocation counts towards the collector's next pass,
and its passes over the young and then the older generations walk all of them again (about a
third of the first derivation of a 10⁵-shape page). :func:`paused` turns the collector off for
the length of such a call and back on after it, unless it was off already (the caller's
choice is kept); calls nest, and threads share one count, so the collector comes back on when
the last paused call ends. Nothing is freed later than it would be by reference counting;
cycles made during the call are collected at the next pass after it.

Examples
--------
>>> import gc
>>> with paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["paused"]

_lock = threading.Lock()
_depth = 0  # paused calls under way, in every thread
_ours = False  # whether the first of them turned the collector off (it was on)


@contextmanager
def paused() -> Iterator[None]:
    """Turn the cyclic garbage collector off until the outermost paused call ends.

    Yields
    ------
    None
        The collector is off inside; on leaving the last paused call (normally or by an
        exception) it is on again if it was on when the first one started.
    """
    global _depth, _ours
    with _lock:
        if _depth == 0:
            _ours = gc.isenabled()
            if _ours:
                gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _ours:
                _ours = False
                gc.enable()
