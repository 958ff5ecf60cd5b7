"""The size gates of the carried paths, as the package ships them and as the suite sets them.

Below ``derive.MIN_TREE_ROWS`` rows a canvas derives afresh after an add, a removal or a move in
the tree, below ``observe.MIN_CARRIED_ROWS`` rows a page's observation builds its state afresh
instead of carrying the one observed last, and up to ``observe.ALIGNED_AFRESH_PER_CHANGE`` solid
boxes per changed box a carried state cuts its alignment lines afresh: on small canvases that is
faster. The tests of the carried paths build small canvases, so the suite lowers the three gates
to 0 for the whole session (``tests/conftest.py``), and the tests of the gates themselves put the
shipped values back with :func:`shipped`. The values are read when this module is first imported, which the
suite's conftest does before it lowers them.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from typing import ContextManager, Dict, Iterator

_derive = importlib.import_module("spatialobs.canvas.document.derive")
_observe = importlib.import_module("spatialobs.canvas.observe")

#: The gates' shipped values.
SHIPPED: Dict[str, int] = {"MIN_TREE_ROWS": _derive.MIN_TREE_ROWS, "MIN_CARRIED_ROWS": _observe.MIN_CARRIED_ROWS,
                           "ALIGNED_AFRESH_PER_CHANGE": _observe.ALIGNED_AFRESH_PER_CHANGE}


@contextmanager
def gates(tree: int, carried: int, aligned: int = 0) -> Iterator[None]:
    """Set ``derive.MIN_TREE_ROWS`` to ``tree``, ``observe.MIN_CARRIED_ROWS`` to ``carried`` and
    ``observe.ALIGNED_AFRESH_PER_CHANGE`` to ``aligned`` inside the block; the values before it are
    put back after."""
    was = _derive.MIN_TREE_ROWS, _observe.MIN_CARRIED_ROWS, _observe.ALIGNED_AFRESH_PER_CHANGE
    _derive.MIN_TREE_ROWS, _observe.MIN_CARRIED_ROWS, _observe.ALIGNED_AFRESH_PER_CHANGE = tree, carried, aligned
    try:
        yield
    finally:
        _derive.MIN_TREE_ROWS, _observe.MIN_CARRIED_ROWS, _observe.ALIGNED_AFRESH_PER_CHANGE = was


def shipped() -> ContextManager[None]:
    """The shipped gates inside the block (see :func:`gates`)."""
    return gates(SHIPPED["MIN_TREE_ROWS"], SHIPPED["MIN_CARRIED_ROWS"], SHIPPED["ALIGNED_AFRESH_PER_CHANGE"])
