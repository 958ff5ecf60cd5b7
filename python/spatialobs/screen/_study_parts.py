"""Pieces the studies share with their parts (the real clipboard and sensitivity studies), a floor below
:mod:`spatialobs.screen.studies`: the per-start selector streams, the summaries and matched wins of
per-start values, and the real-application budget. :mod:`spatialobs.screen.studies` exports them.

Examples
--------
>>> summarize([1, 3, 5])["sd"], matched_wins([2, 1], [1, 1])["wins"]
(2.0, 1)
"""

from __future__ import annotations

from typing import Any, Dict, Sequence

import numpy as np

from spatialobs._errors import InvalidInputError
from spatialobs.screen.select import PUCT, Greedy, Random, Selector, selector_seed

__all__ = ["REAL_BUDGET", "summarize", "matched_wins"]

#: The real-application study's default budget per application: (starts, steps).
REAL_BUDGET = {"mousepad": (4, 30), "pcmanfm": (3, 30), "localc": (2, 15), "jupyterlab": (3, 30)}


def _check_pos(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {v!r}")
    return v


def _make(selector: Any, seed: int, start: int) -> Selector:
    # one stream per (seed, start): runs do not depend on the order they are made in, and the
    # episodes' tie draws are independent (a fresh graph numbers its states from 0 every time)
    stream = selector_seed(seed, start)
    if isinstance(selector, dict):
        return PUCT(**{"seed": stream, **selector})
    if selector == "random":
        return Random(stream)
    if selector == "puct":
        return PUCT(seed=stream)
    if selector == "puct-paper":
        return PUCT.paper()
    if selector == "greedy":
        return Greedy()
    raise InvalidInputError(f"unknown selector {selector!r}")


def summarize(values: Sequence[float]) -> Dict[str, float]:
    """``{"mean", "sd", "min", "max", "n"}`` of a list of per-episode values (sd with ``n − 1``).

    Examples
    --------
    >>> summarize([1, 3, 5])
    {'mean': 3.0, 'sd': 2.0, 'min': 1.0, 'max': 5.0, 'n': 3}
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        raise InvalidInputError("summarize needs at least one value")
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0, "min": float(v.min()),
            "max": float(v.max()), "n": int(v.size)}


def matched_wins(a: Sequence[float], b: Sequence[float]) -> Dict[str, int]:
    """Per matched start, how often ``a`` is above, equal to and below ``b``.

    Parameters
    ----------
    a, b : sequence of float
        One value per start, in the same start order (e.g. new states of PUCT and of Random).

    Returns
    -------
    dict
        ``{"wins", "ties", "losses", "n"}``.

    Raises
    ------
    InvalidInputError
        When the two lists differ in length or are empty.

    Examples
    --------
    >>> matched_wins([5, 3, 2], [4, 3, 6])
    {'wins': 1, 'ties': 1, 'losses': 1, 'n': 3}
    """
    if len(a) != len(b) or not len(a):
        raise InvalidInputError(f"matched_wins needs two equally long, nonempty lists; got {len(a)} and {len(b)} values")
    return {"wins": sum(x > y for x, y in zip(a, b)), "ties": sum(x == y for x, y in zip(a, b)),
            "losses": sum(x < y for x, y in zip(a, b)), "n": len(a)}
