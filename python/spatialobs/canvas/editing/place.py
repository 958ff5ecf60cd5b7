"""Placement: move objects into a destination without collisions (DESIGN §5, *ours*).

The paper's "correct placement" test turned into an action: after :func:`place`
each object lies fully inside the destination shrunk by ``inset`` (default 8),
keeps its size and every other field, and overlaps neither another placed object
nor an existing occupant of the destination by more than 1 square unit. Among
the positions that satisfy this, each object takes the one closest (Euclidean,
upper-left corners) to the position asked for. When no such arrangement is
found, :class:`PlacementError` says why and the canvas is left unchanged.

The search is greedy: objects are placed one after another, each at the free
position nearest to its wish given the obstacles so far. For one object the
nearest free position is exact: the free corners are bounded by the obstacles'
edges (shifted by the object's size) and the destination's edges, so the nearest
one has its x on such an edge or equal to the wish; those vertical lines are
swept outwards from the wish, the free y nearest to the wish is exact on each,
and the sweep stops when a line is farther than the best found. Ties go to the
line visited first: by lower bound of its distance, then x. Each pass runs in
the compiled core (``place_greedy``), with the obstacles and the objects placed
so far in vertical strips sorted by top edge. Several objects are a packing
problem: if the given order fails, the search is repeated largest first, then
largest first packed from the upper-left corner; only then is the placement
reported infeasible (it may still exist for very tight packings). The last pass
always succeeds when the objects fit side by side in one row (or one column).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from spatialobs._core import place_greedy as _place_greedy
from spatialobs._errors import InvalidInputError, OutOfRangeError, SpatialObsError
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.editing.position import set_page_positions

__all__ = ["PlacementError", "solve_placement", "place", "DEFAULT_INSET", "MAX_OVERLAP",
           "CONNECTOR_TYPES"]

#: Inset from the destination's edges (the paper's Correct placement test).
DEFAULT_INSET = 8.0
#: Largest overlap area tolerated between two placed objects or with an occupant.
MAX_OVERLAP = 1.0
#: Types whose box is not a solid area; they never block a position (*ours*).
CONNECTOR_TYPES = frozenset({"arrow", "line"})

Box = Tuple[float, float, float, float]


class PlacementError(SpatialObsError, ValueError):
    """The objects cannot be placed; the message says which one and why."""


def _checked(sizes: Any, wants: Any, inner: Sequence[float], obstacles: Any,
             names: Optional[Sequence[str]]) -> Tuple[np.ndarray, np.ndarray, np.ndarray, Box, Callable[[int], str]]:
    """The checked inputs of a placement: sizes, wishes, the obstacles that cut ``inner``, ``inner``
    itself and the label of an object in messages; raises when no placement can exist."""
    sz = np.asarray(sizes, dtype=np.float64).reshape(-1, 2)
    wt = np.asarray(wants, dtype=np.float64).reshape(-1, 2)
    obs = np.asarray(obstacles, dtype=np.float64).reshape(-1, 4)
    n = len(sz)
    if len(wt) != n:
        raise InvalidInputError(f"place: {n} sizes but {len(wt)} positions")
    if not (np.isfinite(sz).all() and np.isfinite(wt).all() and np.isfinite(obs).all()) or (sz < 0).any():
        raise InvalidInputError("place: sizes, positions and obstacles must be finite, sizes >= 0")
    L, T, R, B = (float(v) for v in inner)
    if not all(math.isfinite(v) for v in (L, T, R, B)):
        raise InvalidInputError(f"place: the destination must be finite, got {(L, T, R, B)!r}")
    label = (lambda k: repr(names[k])) if names is not None else (lambda k: f"#{k}")
    if not (R >= L and B >= T):
        raise PlacementError(f"place: the destination minus its inset is empty ({R - L:g} × {B - T:g})")
    for k in range(n):
        if sz[k, 0] > R - L or sz[k, 1] > B - T:
            raise PlacementError(
                f"place: object {label(k)} ({sz[k, 0]:g} × {sz[k, 1]:g}) is larger than the room inside the "
                f"destination ({R - L:g} × {B - T:g} after the inset)")
    tol = MAX_OVERLAP / 2
    # obstacles only matter where they cut the inner box
    if len(obs):
        keep = (np.minimum(obs[:, 2], R) > np.maximum(obs[:, 0], L)) & (np.minimum(obs[:, 3], B) > np.maximum(obs[:, 1], T))
        obs = obs[keep]
    need = float((sz[:, 0] * sz[:, 1]).sum())
    room = (R - L) * (B - T)
    if need > room + tol * (n * (n - 1) / 2):
        raise PlacementError(
            f"place: the objects need {need:g} square units but the destination has only {room:g} "
            f"inside its inset")
    return sz, wt, obs, (L, T, R, B), label


def _no_room(label: Callable[[int], str], sz: np.ndarray, failed: int, inner: Box, obs: np.ndarray) -> PlacementError:
    """The error when every pass left object ``failed`` without a free position."""
    L, T, R, B = inner
    return PlacementError(
        f"place: no free position for object {label(failed)} ({sz[failed, 0]:g} × {sz[failed, 1]:g}) inside the "
        f"destination ({R - L:g} × {B - T:g} after the inset) among {len(obs)} existing object(s) and the "
        f"other placed objects")


def solve_placement(
    sizes: Any,
    wants: Any,
    inner: Sequence[float],
    obstacles: Any = (),
    *,
    names: Optional[Sequence[str]] = None,
) -> np.ndarray:
    """Upper-left corners for boxes of ``sizes`` inside ``inner`` avoiding ``obstacles``.

    Parameters
    ----------
    sizes : (n, 2) array
        Width and height of each box (>= 0).
    wants : (n, 2) array
        Preferred upper-left corners.
    inner : (x0, y0, x1, y1)
        The region every box must lie in (closed: touching the edge is inside).
    obstacles : (m, 4) array
        Boxes a placed box must not overlap (touching is fine).
    names : list of str, optional
        Names for error messages.

    Returns
    -------
    (n, 2) float64
        The chosen corners; placed boxes overlap neither each other nor the
        obstacles (no positive area, up to rounding, far below :data:`MAX_OVERLAP`).

    Raises
    ------
    PlacementError
        A box is larger than ``inner``, the boxes cannot fit by area, or no free
        position was found for one of them.

    Examples
    --------
    >>> solve_placement([[10, 10], [10, 10]], [[0, 0], [0, 0]], (0, 0, 30, 10)).tolist()
    [[0.0, 0.0], [10.0, 0.0]]
    """
    sz, wt, obs, (L, T, R, B), label = _checked(sizes, wants, inner, obstacles, names)
    n = len(sz)
    big_first = np.lexsort((np.arange(n), -(sz[:, 0] * sz[:, 1])))
    corner = np.tile([L, T], (n, 1))
    obs = np.ascontiguousarray(obs)
    failed = -1
    for order, wishes in ((np.arange(n), wt), (big_first, wt), (big_first, corner)):
        out, failed = _place_greedy(np.ascontiguousarray(sz), np.ascontiguousarray(wishes), (L, T, R, B), obs,
                                    order.astype(np.int64))
        if failed < 0:
            return out
    raise _no_room(label, sz, failed, (L, T, R, B), obs)


def _target_box(canvas: Canvas, dest: Any, origin: Tuple[float, float]) -> Tuple[Box, Optional[str]]:
    """Destination as a page box, and the node id when it is a node."""
    if isinstance(dest, str):
        if dest not in canvas.nodes:
            raise OutOfRangeError(f"place: no destination node {dest!r}")
        if abs(math.remainder(canvas.page_rotation(dest), 2 * math.pi)) > 1e-9:
            raise PlacementError(f"place: destination {dest!r} is rotated; only unrotated destinations are supported")
        return canvas.page_bounds(dest), dest
    if isinstance(dest, Mapping):
        try:
            x, y = float(dest["x"]), float(dest["y"])
            w = float(dest.get("w", dest.get("width")))
            h = float(dest.get("h", dest.get("height")))
        except (KeyError, TypeError, ValueError):
            raise InvalidInputError(f"place: a destination box needs numbers x, y, w, h, got {dict(dest)!r}") from None
        box = (x + origin[0], y + origin[1], x + origin[0] + w, y + origin[1] + h)
    elif isinstance(dest, (list, tuple)) and len(dest) == 4:
        try:
            x0, y0, x1, y1 = (float(v) for v in dest)
        except (TypeError, ValueError):
            raise InvalidInputError(f"place: a destination box needs four numbers, got {dest!r}") from None
        box = (x0 + origin[0], y0 + origin[1], x1 + origin[0], y1 + origin[1])
    else:
        raise InvalidInputError(f"place: destination must be a node id or a box {{x, y, w, h}}, got {dest!r}")
    if not all(math.isfinite(v) for v in box) or box[2] < box[0] or box[3] < box[1]:
        raise InvalidInputError(f"place: destination box must be finite with w, h >= 0, got {dest!r}")
    return box, None


def _obstacles(canvas: Canvas, dest_id: Optional[str], box: Box, moving: set, page: str) -> np.ndarray:
    """Page boxes of what already occupies the destination."""
    nodes = canvas.nodes
    if dest_id is not None:
        ids = [k for k in canvas.children(dest_id) if k not in moving and nodes[k].type not in CONNECTOR_TYPES]
        return np.array([canvas.page_bounds(k) for k in ids], dtype=np.float64).reshape(-1, 4)
    # a free box: nodes of the page that cut it, except containers around the whole box,
    # the moved objects' ancestors and descendants, and groups (their members count)
    cols = canvas.columns(page)
    skip = set(moving)
    for m in moving:
        skip.update(canvas.ancestors(m))
        skip.update(canvas.descendants(m))
    b = cols.bounds
    L, T, R, Bt = box
    cuts = (np.minimum(b[:, 2], R) > np.maximum(b[:, 0], L)) & (np.minimum(b[:, 3], Bt) > np.maximum(b[:, 1], T))
    around = (b[:, 0] <= L) & (b[:, 1] <= T) & (b[:, 2] >= R) & (b[:, 3] >= Bt)
    rows = [r for r in np.flatnonzero(cuts & ~around).tolist()
            if cols.ids[r] not in skip and cols.types[r] not in CONNECTOR_TYPES and cols.types[r] != "group"]
    return b[rows].reshape(-1, 4)


def place(
    canvas: Canvas,
    ids: Sequence[str],
    destination: Any,
    *,
    inset: float = DEFAULT_INSET,
    at: Optional[Mapping[str, Sequence[float]]] = None,
    origin: Sequence[float] = (0, 0),
    reparent: bool = True,
) -> Dict[str, Tuple[float, float]]:
    """Move objects into a destination so that they fit without collisions.

    Parameters
    ----------
    canvas : Canvas
    ids : list of str
        The objects to move (existing node ids on one page, none locked).
    destination : str or box
        A node id (frame, artboard, container; unrotated), or a box in action
        coordinates, ``{"x", "y", "w", "h"}`` or ``[x0, y0, x1, y1]``.
    inset : float
        Distance kept from the destination's edges (default 8).
    at : mapping id -> (x, y), optional
        Wished upper-left corners (action coordinates). Objects without a wish
        keep their arrangement: the group of them is moved as a whole to the
        nearest position inside the destination.
    origin : (x, y)
        Action coordinates are page coordinates minus ``origin``.
    reparent : bool
        With a node destination, make the objects its children (their page
        position and rotation are kept), as dropping them onto a frame does.

    Returns
    -------
    dict
        id -> new upper-left corner of its page bounds, in action coordinates.

    Raises
    ------
    PlacementError
        No arrangement found (the reason names the object); nothing is changed.
    InvalidInputError, OutOfRangeError
        Bad arguments or unknown ids.

    Occupants are the destination node's other children, or for a box the
    page's objects that cut it (not the containers around it); connectors
    (``arrow``, ``line``) never block. Page bounds are compared (axis-aligned
    boxes), so a rotated object keeps its rotation and occupies its box.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("f", "frame", "page:page", "a1", 0, 0, 200, 100))
    >>> _ = c.add(Node("a", "geo", "page:page", "a2", 500, 0, 80, 80))
    >>> _ = c.add(Node("b", "geo", "page:page", "a3", 500, 0, 80, 80))
    >>> place(c, ["a", "b"], "f")
    {'a': (112.0, 8.0), 'b': (32.0, 8.0)}
    >>> c.node("b").parent
    'f'
    """

    if isinstance(ids, str) or not isinstance(ids, Sequence) or not ids:
        raise InvalidInputError(f"place: ids must be a non-empty list of node ids, got {ids!r}")
    ox, oy = float(origin[0]), float(origin[1])
    try:
        ins = float(inset)
    except (TypeError, ValueError):
        raise InvalidInputError(f"place: inset must be a number, got {inset!r}") from None
    if not math.isfinite(ins) or ins < 0:
        raise InvalidInputError(f"place: inset must be finite and >= 0, got {inset!r}")
    ids = list(dict.fromkeys(ids))
    for i in ids:
        if not isinstance(i, str) or i not in canvas.nodes:
            raise OutOfRangeError(f"place: no node with id {i!r}")
        if canvas.node(i).locked:
            raise PlacementError(f"place: node {i!r} is locked")
    box, dest_id = _target_box(canvas, destination, (ox, oy))
    if dest_id is not None:
        if dest_id in ids:
            raise InvalidInputError(f"place: node {dest_id!r} cannot be placed into itself")
        for i in ids:
            if dest_id in canvas.descendants(i):
                raise InvalidInputError(f"place: destination {dest_id!r} is inside the placed node {i!r}")
    pages = {canvas.page_of(i) for i in ids}
    page = canvas.page_of(dest_id) if dest_id is not None else (pages.pop() if len(pages) == 1 else None)
    if page is None or any(canvas.page_of(i) != page for i in ids):
        raise InvalidInputError("place: the objects and the destination must be on one page")
    # an object inside another placed object moves with it
    moving = set(ids)
    top = [i for i in ids if not any(a in moving for a in canvas.ancestors(i))]
    bounds = np.array([canvas.page_bounds(i) for i in top], dtype=np.float64)
    sizes = bounds[:, 2:] - bounds[:, :2]
    inner = (box[0] + ins, box[1] + ins, box[2] - ins, box[3] - ins)
    wants = bounds[:, :2].copy()
    free = [k for k, i in enumerate(top) if not (at and i in at)]
    if free:  # move the unwished objects as one group to the nearest spot inside
        g0 = bounds[free, :2].min(axis=0)
        g1 = bounds[free, 2:].max(axis=0)
        shift = np.zeros(2)
        for ax in (0, 1):
            lo, hi = inner[ax], inner[ax + 2] - (g1[ax] - g0[ax])
            shift[ax] = (min(max(g0[ax], lo), hi) if hi >= lo else lo) - g0[ax]
        wants[free] += shift
    if at:
        for k, i in enumerate(top):
            if i in at:
                p = at[i]
                try:
                    wants[k] = (float(p[0]) + ox, float(p[1]) + oy)
                except (TypeError, ValueError, IndexError, KeyError):
                    raise InvalidInputError(f"place: position of {i!r} must be [x, y], got {p!r}") from None
                if not np.isfinite(wants[k]).all():
                    raise InvalidInputError(f"place: position of {i!r} must be finite, got {p!r}")
    obstacles = _obstacles(canvas, dest_id, box, moving, page)
    pos = solve_placement(sizes, wants, inner, obstacles, names=top)
    parent = dest_id if (reparent and dest_id is not None) else None
    # no placed object is inside another, nor holds the destination: each move leaves the
    # others' transforms as they were, so all are computed from one geometry
    set_page_positions(canvas, [(i, float(pos[k, 0]), float(pos[k, 1]), parent) for k, i in enumerate(top)])
    return {i: (float(pos[k, 0]) - ox, float(pos[k, 1]) - oy) for k, i in enumerate(top)}
