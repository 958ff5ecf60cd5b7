"""Array helpers shared by the canvas and screen packages (the floor below them).

:func:`unique` is ``np.unique`` of a one-dimensional integer array. ``np.unique`` without
``return_index``/``return_inverse``/``return_counts`` asks ``numpy.ma`` whether its argument is
masked, and the first such call imports ``numpy.ma`` (8-35 ms of a command line's cold start,
more than the rest of a small file's observation). :func:`unique_first` is ``np.unique`` with
``return_index``, whose general path costs ~10 us a call on a few values. :func:`run_starts` marks
where each run of equal values starts (what both keep of a sorted array), and :func:`in_sorted`
is ``np.isin`` against a sorted array, by binary search. :func:`int64_columns` says whether arrays
can go to a compiled pass that reads contiguous int64 columns (else its numpy twin takes them).

:func:`row_order` is ``np.lexsort`` of row numbers (a pair of rows with an optional terminal
bit): one stable ``argsort`` of a combined key, which numpy sorts by timsort, near linear on
the few sorted runs a row map leaves in columns that were sorted before it.

Examples
--------
>>> unique([3, 1, 3, 2, 1]).tolist()
[1, 2, 3]
>>> row_order(np.array([2, 0, 2]), np.array([1, 5, 0]), n=6).tolist()
[1, 2, 0]
"""

from __future__ import annotations

from typing import Any, Tuple, TypeVar, overload

import numpy as np
import numpy.typing as npt

__all__ = ["unique", "unique_first", "run_starts", "in_sorted", "row_order", "int64_columns"]

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
    v = np.asarray(values).ravel()
    if 2 <= v.size <= _SMALL and v.dtype.kind in "iu":  # a few values: a set of Python ints is cheaper
        return np.array(sorted(set(v.tolist())), dtype=v.dtype)
    s = np.sort(v)
    if s.size < 2:
        return s
    return s[run_starts(s)]


#: Most values :func:`unique` sorts as Python ints (fewer numpy calls; an edit asks for many small sets).
_SMALL = 32


def unique_first(values: npt.NDArray[_I]) -> Tuple[npt.NDArray[_I], npt.NDArray[np.intp]]:
    """The sorted distinct values of a 1-D integer array and where each first occurs, as
    ``np.unique(values, return_index=True)`` gives them (without its general path's fixed cost).

    Parameters
    ----------
    values : numpy.ndarray of int
        One dimension.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray of intp)
        The distinct values in increasing order, and the position of the first occurrence of each.

    Examples
    --------
    >>> v, at = unique_first(np.array([3, 1, 3, 2, 1]))
    >>> v.tolist(), at.tolist()
    ([1, 2, 3], [1, 3, 0])
    """
    o = np.argsort(values, kind="stable")
    s = values[o]
    keep = run_starts(s)
    return s[keep], o[keep]


def run_starts(values: np.ndarray) -> npt.NDArray[np.bool_]:
    """Where each run of equal values of a 1-D array starts: ``np.r_[True, v[1:] != v[:-1]]``
    (empty for an empty array), without ``np.r_``'s parsing of its index (~15 us a call).

    Parameters
    ----------
    values : numpy.ndarray
        One dimension.

    Returns
    -------
    numpy.ndarray of bool
        True at position 0 and wherever a value differs from the one before.

    Examples
    --------
    >>> run_starts(np.array([1, 1, 2, 2, 2, 5])).tolist()
    [True, False, True, False, False, True]
    """
    out = np.empty(len(values), bool)
    if len(values):
        out[0] = True
        np.not_equal(values[1:], values[:-1], out=out[1:])
    return out


def in_sorted(sorted_values: np.ndarray, q: np.ndarray) -> npt.NDArray[np.bool_]:
    """Whether each of ``q`` is one of ``sorted_values``: ``np.isin(q, sorted_values)`` by a binary
    search in the sorted array (no sort of ``q``, no page-length mask).

    Parameters
    ----------
    sorted_values : numpy.ndarray
        One dimension, sorted (non-decreasing).
    q : numpy.ndarray
        One dimension, any order.

    Returns
    -------
    numpy.ndarray of bool
        One entry per value of ``q``.

    Examples
    --------
    >>> in_sorted(np.array([2, 5, 9]), np.array([5, 1, 9, 10])).tolist()
    [True, False, True, False]
    """
    if not len(sorted_values):
        return np.zeros(len(q), bool)
    return sorted_values[np.minimum(sorted_values.searchsorted(q), len(sorted_values) - 1)] == q


def int64_columns(*cols: Any) -> bool:
    """Whether every one of ``cols`` is a one-dimensional, C-contiguous numpy array of int64: what the
    compiled passes read as ``const int64_t[::1]`` (a strided column, such as one column of a 2-D
    array, would be refused by them; their numpy twins take it).

    Parameters
    ----------
    *cols : Any
        The arrays (or anything else).

    Returns
    -------
    bool

    Examples
    --------
    >>> a = np.arange(6, dtype=np.int64).reshape(3, 2)
    >>> int64_columns(a[:, 0].copy(), np.zeros(2, np.int64)), int64_columns(a[:, 0]), int64_columns([1, 2])
    (True, False, False)
    """
    for c in cols:  # (a loop, not all() of a generator: called a few dozen times an edit)
        if type(c) is not np.ndarray or (c.dtype is not _INT64 and c.dtype != _INT64) or c.ndim != 1 \
                or not c.flags.c_contiguous:
            return False
    return True


_INT64 = np.dtype(np.int64)


#: Most rows :func:`row_order` packs into one key (the key takes 2 * n**2 values below 2**63).
_ORDER_ROWS = 2**30


def row_order(major: np.ndarray, minor: np.ndarray, bit: Any = None, *, n: int) -> np.ndarray:
    """The order of ``np.lexsort((bit, minor, major))`` (``np.lexsort((minor, major))`` without ``bit``).

    Parameters
    ----------
    major, minor : numpy.ndarray of int
        Rows, one length; sorted by ``major``, then ``minor``.
    bit : numpy.ndarray of int, optional
        A last key (a terminal code 0 or 1).
    n : int
        The rows' bound: ``major`` and ``minor`` in ``[0, n)``.

    Returns
    -------
    numpy.ndarray of int64
        The positions in sorted order, equal entries in their order (stable). Entries out of
        ``[0, n)``, a ``bit`` other than 0 and 1 or ``n`` of ``2**30`` or more are sorted by
        ``np.lexsort`` itself.
    """
    m = len(major)
    if m < 2:
        return np.arange(m, dtype=np.int64)
    ok = (0 < n < _ORDER_ROWS and int(major.min()) >= 0 and int(major.max()) < n and int(minor.min()) >= 0
          and int(minor.max()) < n)
    if ok and bit is not None:
        ok = int(bit.min()) >= 0 and int(bit.max()) <= 1
    if not ok:
        return np.lexsort((minor, major) if bit is None else (bit, minor, major)).astype(np.int64)
    key = major.astype(np.int64) * n + minor
    if bit is not None:
        key = key * 2 + bit
    return np.argsort(key, kind="stable")
