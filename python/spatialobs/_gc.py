"""The cyclic garbage collector paused while a document's objects are built (the floor below the packages).

Loading a large canvas or deriving a large page creates hundreds of thousands of dicts, lists and
tuples in one go, none of them garbage; each allocation counts towards the collector's next pass,
and its passes over the young and then the older generations walk all of them again (about a
third of the first derivation of a 10⁵-shape page). :func:`paused` turns the collector off for
the length of such a call and back on after it, unless it was off already (the caller's
choice is kept); calls nest, and threads share one count, so the collector comes back on when
the last paused call ends. Nothing is freed later than it would be by reference counting;
cycles made during the call are collected at the next pass after it.

With ``promote``, a call that made many tracked objects (a first derivation: ~1.7·10⁵ on a
10⁵-shape page) moves the young generations into the oldest one as it ends, without a pass
(``gc.freeze()`` then ``gc.unfreeze()``): the document's new columns and records live as long
as the document, and the young and middle generations' passes would walk every one of them
once each (~70 ms and ~60 ms on that page) to find nothing. A garbage cycle among the young
objects (the call's, or the caller's few made since the last pass) then waits for the next
full pass. Nothing is promoted while the caller keeps objects frozen (``gc.freeze()``):
unfreezing would hand them back to the collector.

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
_promote = False  # whether one of them asked for the young generations to be promoted at the end

#: Fewest objects (net, since the last pass) for which a promoting call promotes them (*ours*:
#: ten times the young generation's default threshold; a call that made fewer leaves them to it).
PROMOTE_FROM = 7000


@contextmanager
def paused(promote: bool = False) -> Iterator[None]:
    """Turn the cyclic garbage collector off until the outermost paused call ends.

    Parameters
    ----------
    promote : bool
        Move the young generations into the oldest one when the outermost call ends, if
        the calls made at least :data:`PROMOTE_FROM` tracked objects (see the module
        docstring); any of the nested calls may ask for it.

    Yields
    ------
    None
        The collector is off inside; on leaving the last paused call (normally or by an
        exception) it is on again if it was on when the first one started.
    """
    global _depth, _ours, _promote
    with _lock:
        if _depth == 0:
            _ours = gc.isenabled()
            if _ours:
                gc.disable()
        _depth += 1
        _promote = _promote or promote
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _ours and _promote and gc.get_count()[0] >= PROMOTE_FROM and not gc.get_freeze_count():
                    gc.freeze()  # both are list splices: no object is visited
                    gc.unfreeze()
                _promote = False
                if _ours:
                    _ours = False
                    gc.enable()
