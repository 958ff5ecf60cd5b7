"""Array helpers shared by the canvas and screen packages (the floor below them).

:func:`unique` is ``np.unique`` of a one-dimensional integer array. ``np.unique`` without
``return_index``/``return_inverse``/``return_counts`` asks ``numpy.ma`` whether its argument is
masked, and the first such call imports ``numpy.ma`` (8-35 ms of a command line's cold start,
more than the rest of a small file's observation).

Examples
--------
>>> unique([3, 1, 3, 2, 1]).tolist()
[1, 2, 3]
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

__all__ = ["unique"]

_I = TypeVar("_I", bound=np.integer[Any])


@overload
def unique(values: npt.NDArray[_I]) -> npt.NDArray[_I]: ...


@overload
def unique(values: npt.ArrayLike) -> npt.NDArray[np.integer[Any]]: ...


def unique(values: npt.ArrayLike) -> npt.NDArray[np.integer[Any]]:
    """The sorted distinct values of an integer array, as ``np.unique(values)`` gives them.

    Parameters
    ----------
    values : array_like of int
        Any shape; it is flattened.

    Returns
    -------
    numpy.ndarray
        The distinct values in increasing order, in the dtype of ``values``.
    """
    s = np.sort(np.asarray(values).ravel())
    if s.size < 2:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]
