"""Row maps: a page version's rows carried to a later version of the page.

An observation keeps what it found for one version of a page (relation tables, the box index,
unbound arrow ends) and carries it to the next version through a *row map*: the page row now of
each page row then (-1: removed). An add, a removal or a move in the tree shifts every row after
it by one offset, so a row map is a few *runs* of rows that step by one on both sides
(:func:`runs`), and the columns of the kept rows are carried slice by slice (:func:`set_rows`,
:func:`put_rows`, :func:`rows_differ`).

:func:`map_rows`, :func:`solid_rows`, :func:`rows_differ` and :func:`reparented` are each one
compiled pass (``spatialobs.canvas._cpagetables``) over what numpy did in several page-length
passes; each keeps its numpy twin (``_map_rows_py`` and so on), used where the module is not
built and held to it by the tests.

Examples
--------
>>> import numpy as np
>>> # canvas rows 0-3 then, in paint order; row 1 removed, a new row painted between rows 2 and 3
>>> m = map_rows(np.array([0, -1, 1, 2]), np.arange(4), np.array([0, 1, 3, 2]), 4)
>>> m.omap.tolist(), m.is_new.tolist(), m.runs.tolist()
([0, -1, 1, 3, -1], [False, False, True, False], [0, 1, 2, 3])
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from spatialobs._arrays import int64_columns

__all__ = ["MAX_RUNS", "RowMap", "SolidRows", "runs", "set_rows", "put_rows", "rows_differ", "map_rows", "solid_rows",
           "reparented"]

_cpt: Optional[ModuleType]
try:
    from spatialobs.canvas import _cpagetables as _cpt
except ImportError:  # a source tree without the compiled module
    _cpt = None

#: Most runs a row map is carried by as slices (*ours*); beyond, rows are gathered one by one.
MAX_RUNS = 64


def _flags(c: Any) -> bool:
    return type(c) is np.ndarray and c.dtype == np.bool_ and c.ndim == 1


def runs(src: np.ndarray, dst: np.ndarray) -> Optional[np.ndarray]:
    """The runs of a row map, or None beyond :data:`MAX_RUNS` of them.

    Parameters
    ----------
    src, dst : numpy.ndarray of int
        Rows of one length, ``src`` increasing: row ``src[k]`` goes to row ``dst[k]``.

    Returns
    -------
    numpy.ndarray of int64 or None
        Cuts ``c`` such that run k, ``src[c[k]:c[k + 1]]`` -> ``dst[c[k]:c[k + 1]]``, steps by one
        on both sides (whole slices of the arrays they index); None beyond :data:`MAX_RUNS` runs.

    Examples
    --------
    >>> runs(np.array([0, 1, 2, 4]), np.array([0, 1, 3, 4])).tolist()
    [0, 2, 3, 4]
    """
    if not len(src):
        return np.zeros(1, np.int64)
    if int(src[-1]) - int(src[0]) == len(src) - 1:  # increasing and consecutive: runs where ``dst`` steps by one
        cut = np.flatnonzero(np.diff(dst) != 1) + 1
    else:
        shift = dst - src
        cut = np.flatnonzero((shift[1:] != shift[:-1]) | (src[1:] != src[:-1] + 1)) + 1
    if len(cut) >= MAX_RUNS:
        return None
    return np.concatenate([[0], cut, [len(src)]]).astype(np.int64)


def set_rows(out: np.ndarray, dst: np.ndarray, cuts: Optional[np.ndarray], value: Any) -> None:
    """``out[dst] = value`` along the first axis, slice by slice over ``cuts`` (see :func:`runs`;
    None: indexed)."""
    if cuts is None:
        out[dst] = value
        return
    for i, j in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        d = int(dst[i])
        out[d:d + j - i] = value


def put_rows(out: np.ndarray, dst: np.ndarray, a: np.ndarray, src: np.ndarray, cuts: Optional[np.ndarray]) -> None:
    """``out[dst] = a[src]`` along the first axis, slice by slice over ``cuts`` (see :func:`runs`;
    None: gathered)."""
    if cuts is None:
        out[dst] = np.take(a, src, axis=0)
        return
    for i, j in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        s, d = int(src[i]), int(dst[i])
        out[d:d + j - i] = a[s:s + j - i]


def _pairs_view(boxes: np.ndarray) -> np.ndarray:
    """Boxes (n, 4) of float64 as (n, 2) complex numbers: one comparison per pair of coordinates."""
    return np.ascontiguousarray(boxes, dtype=np.float64).view(np.complex128)


def rows_differ(a: np.ndarray, src: np.ndarray, b: np.ndarray, dst: np.ndarray, cuts: Optional[np.ndarray]) -> np.ndarray:
    """Whether box ``a[src[k]]`` differs from box ``b[dst[k]]`` in any coordinate, for each k.

    Parameters
    ----------
    a, b : numpy.ndarray
        Boxes, shape (n, 4).
    src, dst : numpy.ndarray of int
        Rows of ``a`` and ``b``, one length.
    cuts : numpy.ndarray or None
        The runs of ``src`` -> ``dst`` (:func:`runs`), or None; read by the numpy twin only.

    Returns
    -------
    numpy.ndarray of bool
        One flag per k; a NaN coordinate differs from every value (itself included).

    Examples
    --------
    >>> a = np.array([[0.0, 0, 1, 1], [np.nan, 0, 1, 1]])
    >>> rows_differ(a, np.array([0, 1]), a.copy(), np.array([0, 1]), None).tolist()
    [False, True]
    """
    if (_cpt is not None and int64_columns(src, dst)
            and all(type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 2 and x.flags.c_contiguous
                    for x in (a, b))):
        return _cpt.rows_differ(a, src, b, dst)
    return _rows_differ_py(a, src, b, dst, cuts)


def _rows_differ_py(a: np.ndarray, src: np.ndarray, b: np.ndarray, dst: np.ndarray,
                    cuts: Optional[np.ndarray]) -> np.ndarray:
    """:func:`rows_differ` in numpy (the compiled one's twin), slice by slice over ``cuts``."""
    if cuts is None:
        ne = _pairs_view(np.take(a, src, axis=0)) != _pairs_view(np.take(b, dst, axis=0))
        return ne[:, 0] | ne[:, 1]
    out = np.empty(len(src), bool)
    pa, pb = _pairs_view(a), _pairs_view(b)
    for i, j in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        s, d = int(src[i]), int(dst[i])
        ne = pa[s:s + j - i] != pb[d:d + j - i]
        np.logical_or(ne[:, 0], ne[:, 1], out=out[i:j])
    return out


class RowMap(NamedTuple):
    """An earlier page version's rows in a later one (see :func:`map_rows`)."""

    omap: np.ndarray         #: new page row of each old page row (-1: removed), with one more slot, -1
    new_of_kept: np.ndarray  #: new page row of each kept old row, in old order
    kept_old: np.ndarray     #: the kept old rows, increasing
    every: bool              #: no old row removed
    runs: Optional[np.ndarray]  #: the runs of ``kept_old`` -> ``new_of_kept`` (:func:`runs`)
    is_new: np.ndarray       #: per new page row, whether no old row maps to it


def map_rows(newrow: np.ndarray, canvas_rows: np.ndarray, page_pos: np.ndarray, n: int) -> Optional[RowMap]:
    """An earlier page version's rows carried to a later version of the page.

    Parameters
    ----------
    newrow : numpy.ndarray of int64
        The canvas row now of each canvas row then (-1: removed).
    canvas_rows : numpy.ndarray of int64
        The canvas row then of each page row then.
    page_pos : numpy.ndarray of int64
        The page row now of each canvas row now (-1: on another page).
    n : int
        The page's rows now.

    Returns
    -------
    RowMap or None
        The map, or None when a kept row is on another page now.

    Raises
    ------
    IndexError
        A row outside the array it indexes.
    """
    if _cpt is not None and int64_columns(newrow, canvas_rows, page_pos):
        got = _cpt.map_rows(newrow, canvas_rows, page_pos, int(n), MAX_RUNS)
        return None if got is None else RowMap(*got)
    return _map_rows_py(newrow, canvas_rows, page_pos, n)


def _check_rows(rows: np.ndarray, size: int, what: str) -> None:
    bad = np.flatnonzero((rows < 0) | (rows >= size))
    if len(bad):
        raise IndexError(what.format(i=int(bad[0]), r=int(rows[bad[0]]), size=size))


def _map_rows_py(newrow: np.ndarray, canvas_rows: np.ndarray, page_pos: np.ndarray, n: int) -> Optional[RowMap]:
    """:func:`map_rows` in numpy (the compiled one's twin)."""
    if n < 0:
        raise ValueError(f"map_rows needs a page of 0 rows or more, got {n}")
    newrow, canvas_rows, page_pos = (np.asarray(x, np.int64) for x in (newrow, canvas_rows, page_pos))
    _check_rows(canvas_rows, len(newrow), "page row {i} names canvas row {r}, outside the row map of {size} rows")
    r2 = newrow[canvas_rows]
    ok = r2 >= 0
    every = bool(ok.all())
    kept_old = np.arange(len(r2)) if every else np.flatnonzero(ok)
    live = r2 if every else r2[ok]
    bad = np.flatnonzero(live >= len(page_pos))
    if len(bad):
        c = int(live[bad[0]])
        raise IndexError(f"canvas row {int(canvas_rows[kept_old[bad[0]]])} moved to row {c}, outside the page "
                         f"positions of {len(page_pos)} rows")
    new_of_kept = page_pos[live]
    left = np.flatnonzero(new_of_kept < 0)
    big = np.flatnonzero(new_of_kept >= n)
    if len(big) and (not len(left) or big[0] < left[0]):
        raise IndexError(f"canvas row {int(live[big[0]])} is page row {int(new_of_kept[big[0]])}, outside the page "
                         f"of {n} rows")
    if len(left):
        return None
    omap = np.full(len(r2) + 1, -1, np.int64)  # slot -1 keeps -1
    omap[:-1][kept_old] = new_of_kept
    cuts = runs(kept_old, new_of_kept)
    is_new = np.ones(n, bool)
    set_rows(is_new, new_of_kept, cuts, False)
    return RowMap(omap, new_of_kept, kept_old, every, cuts, is_new)


class SolidRows(NamedTuple):
    """The solid positions of a later page version (see :func:`solid_rows`)."""

    sub: np.ndarray     #: the solid rows, increasing
    subpos: np.ndarray  #: per page row, its position in ``sub`` (-1: not solid), with one more slot, -1
    smap: np.ndarray    #: per old solid position, its position now (-1: removed)
    kp: np.ndarray      #: the old positions kept
    skp: np.ndarray     #: their positions now
    runs: Optional[np.ndarray]  #: the runs of ``kp`` -> ``skp`` (:func:`runs`)
    added: np.ndarray   #: the positions of new rows


def solid_rows(solid: np.ndarray, omap: np.ndarray, old_sub: np.ndarray, is_new: np.ndarray) -> SolidRows:
    """The solid positions of a later page version, and the earlier version's carried to them.

    Parameters
    ----------
    solid : numpy.ndarray of bool
        Per page row now, whether it is solid (its box takes part in the relation tables).
    omap : numpy.ndarray of int64
        The row map (:attr:`RowMap.omap`).
    old_sub : numpy.ndarray of int64
        The solid rows then.
    is_new : numpy.ndarray of bool
        Per page row now, whether it is new (:attr:`RowMap.is_new`).

    Returns
    -------
    SolidRows

    Raises
    ------
    ValueError
        ``is_new`` not of the length of ``solid``.
    IndexError
        A row outside the array it indexes.
    """
    if _cpt is not None and int64_columns(omap, old_sub) and _flags(solid) and _flags(is_new):
        return SolidRows(*_cpt.solid_rows(solid.view(np.uint8), omap, old_sub, is_new.view(np.uint8), MAX_RUNS))
    return _solid_rows_py(solid, omap, old_sub, is_new)


def _solid_rows_py(solid: np.ndarray, omap: np.ndarray, old_sub: np.ndarray, is_new: np.ndarray) -> SolidRows:
    """:func:`solid_rows` in numpy (the compiled one's twin)."""
    n = len(solid)
    if len(is_new) != n:
        raise ValueError(f"solid_rows needs one new-row flag per row, got {len(is_new)} for {n} rows")
    omap, old_sub = np.asarray(omap, np.int64), np.asarray(old_sub, np.int64)
    _check_rows(old_sub, len(omap), "solid position {i} names row {r}, outside the row map of {size} slots")
    sub = np.flatnonzero(solid)
    subpos = np.full(n + 1, -1, np.int64)
    subpos[sub] = np.arange(len(sub))
    to = omap[old_sub]
    bad = np.flatnonzero((to < -1) | (to > n))
    if len(bad):
        raise IndexError(f"the row map sends a row to {int(to[bad[0]])}, outside the page of {n} rows")
    smap = subpos[to]
    kp = np.flatnonzero(smap >= 0)
    skp = smap[kp]
    return SolidRows(sub, subpos, smap, kp, skp, runs(kp, skp), np.flatnonzero(np.asarray(is_new, bool)[sub]))


def reparented(new_of_kept: np.ndarray, kept_old: np.ndarray, old_parent: np.ndarray, parent: np.ndarray,
               omap: np.ndarray) -> Tuple[np.ndarray, bool]:
    """The kept rows whose parent is another row now, and whether the kept rows keep their order.

    Parameters
    ----------
    new_of_kept, kept_old : numpy.ndarray of int64
        The kept rows now and then (:class:`RowMap`).
    old_parent, parent : numpy.ndarray of int64
        The parent row of each page row then and now (-1: on the page).
    omap : numpy.ndarray of int64
        The row map (:attr:`RowMap.omap`).

    Returns
    -------
    (numpy.ndarray of int64, bool)
        The page rows now, in kept order, whose parent now is not their parent then carried
        through the map; and whether ``new_of_kept`` strictly increases.

    Examples
    --------
    >>> omap = np.array([0, 2, 1, -1])  # rows 1 and 2 swapped
    >>> moved, up = reparented(np.array([0, 2, 1]), np.arange(3), np.array([-1, 0, 0]), np.array([-1, 0, 0]), omap)
    >>> moved.tolist(), up
    ([], False)
    """
    if _cpt is not None and int64_columns(new_of_kept, kept_old, old_parent, parent, omap):
        moved, up = _cpt.reparented(new_of_kept, kept_old, old_parent, parent, omap)
        return moved, bool(up)
    return _reparented_py(new_of_kept, kept_old, old_parent, parent, omap)


def _reparented_py(new_of_kept: np.ndarray, kept_old: np.ndarray, old_parent: np.ndarray, parent: np.ndarray,
                   omap: np.ndarray) -> Tuple[np.ndarray, bool]:
    """:func:`reparented` in numpy (the compiled one's twin)."""
    n = len(new_of_kept)
    if len(kept_old) != n:
        raise ValueError(f"reparented needs one old row per kept row, got {len(kept_old)} for {n}")
    new, kept_old = np.asarray(new_of_kept, np.int64), np.asarray(kept_old, np.int64)
    bad = np.flatnonzero((kept_old < 0) | (kept_old >= len(old_parent)) | (new < 0) | (new >= len(parent)))
    if len(bad):
        k = int(bad[0])
        raise IndexError(f"kept row {k} ({kept_old[k]} -> {new[k]}) is outside the parent columns "
                         f"({len(old_parent)} and {len(parent)} rows)")
    op = np.asarray(old_parent, np.int64)[kept_old]
    bad = np.flatnonzero((op < -1) | (op >= len(omap) - 1))
    if len(bad):
        k = int(bad[0])
        raise IndexError(f"old row {int(kept_old[k])} has parent {int(op[k])}, outside the row map of "
                         f"{len(omap)} slots")
    was = np.asarray(omap, np.int64)[op]  # (-1, on the page, reads the last slot: -1)
    moved = new[np.asarray(parent, np.int64)[new] != was]
    return moved, bool((new[1:] > new[:-1]).all())
