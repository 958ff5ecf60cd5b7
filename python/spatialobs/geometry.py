"""Geometry kernels over arrays of axis-aligned boxes.

A box is ``[x0, y0, x1, y1]`` in page units with y pointing down; a set of boxes
is an ``(n, 4)`` C-contiguous ``float64`` array. Zero width or height is allowed
(lines and points); a non-finite value or ``x1 < x0`` / ``y1 < y0`` raises
:class:`~spatialobs.InvalidInputError` naming the first offending row.

Every predicate is *closed*: touching edges intersect, and a box contains itself.
"Overlap" means an intersection of positive area. Each kernel builds a packed
Hilbert R-tree (:class:`BoxIndex`) once per call, or reuses one passed in its
place, so all run in ``O(n log n + output)``, and releases the GIL while it
computes.

The pair kernels take ``threads=`` (keyword-only, default 1; 0 means one per
core): the dual-tree join is split over that many threads and the result is
identical, bit for bit, to the single-threaded one. Their working memory is
kept per calling thread between calls, so that repeated kernels reuse pages
already mapped instead of faulting in fresh ones; :func:`release_scratch` gives
it back.

Pair results are ``(2, k)`` int64 arrays (row 0 the first member of each pair),
sorted, as in shapely's pair queries.

Python lists and tuples are converted; a numpy array of the wrong dtype or
layout is rejected with a message that says how to convert it, never copied
silently.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

from spatialobs import _core
from spatialobs._errors import InvalidInputError

__all__ = [
    "VISIBLE",
    "PARTIAL",
    "OCCLUDED",
    "OFFSCREEN_NEAR",
    "OFFSCREEN_FAR",
    "LABEL_NAMES",
    "ALIGN_KINDS",
    "BoxIndex",
    "visibility",
    "visibility_labels",
    "occluders",
    "polygon_coverage",
    "overlap_pairs",
    "overlap_pairs_between",
    "overlap_any_ranked",
    "containment_pairs",
    "proximity_pairs",
    "alignment_pairs",
    "alignment_masks",
    "reading_order",
    "release_scratch",
    "scratch_bytes",
    "as_boxes",
]

VISIBLE: int = _core.VISIBLE
PARTIAL: int = _core.PARTIAL
OCCLUDED: int = _core.OCCLUDED
OFFSCREEN_NEAR: int = _core.OFFSCREEN_NEAR
OFFSCREEN_FAR: int = _core.OFFSCREEN_FAR

#: Label name per code: ``LABEL_NAMES[VISIBLE] == "visible"``.
LABEL_NAMES: Tuple[str, ...] = ("visible", "partial", "occluded", "offscreen_near", "offscreen_far")
#: Alignment kind name per code returned by :func:`alignment_pairs`.
ALIGN_KINDS: Tuple[str, ...] = ("left", "center_x", "right", "top", "center_y", "bottom")

BoxesLike = Union[npt.NDArray[np.float64], Sequence[Sequence[float]]]
BoxLike = Union[Sequence[float], npt.NDArray[np.float64]]


def as_boxes(boxes: BoxesLike, name: str = "boxes") -> npt.NDArray[np.float64]:
    """Return ``boxes`` as an ``(n, 4)`` float64 array, converting Python sequences.

    A numpy array is returned unchanged (the kernels check its dtype and layout);
    a list or tuple is converted, and an empty one becomes shape ``(0, 4)``.

    Examples
    --------
    >>> as_boxes([[0, 0, 1, 1]]).dtype
    dtype('float64')
    """
    if isinstance(boxes, np.ndarray):
        return boxes
    try:
        arr = np.asarray(boxes, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be a sequence of [x0, y0, x1, y1] rows of numbers: {exc}") from None
    if arr.size == 0:
        return np.empty((0, 4), dtype=np.float64)
    return arr


def _as_box(box: Any, name: str) -> Tuple[float, float, float, float]:
    if hasattr(box, "as_box"):
        box = box.as_box()
    try:
        values = tuple(float(v) for v in box)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be four numbers [x0, y0, x1, y1], got {box!r}") from None
    if len(values) != 4:
        raise InvalidInputError(f"{name} must be four numbers [x0, y0, x1, y1], got {len(values)} values")
    return values


def _as_column(values: Any, n: int, dtype: type, name: str, default: Any) -> np.ndarray:
    if values is None:
        return np.full(n, default, dtype=dtype)
    if isinstance(values, np.ndarray):
        return values
    try:
        return np.asarray(values, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be a sequence of {np.dtype(dtype).name} values: {exc}") from None


class BoxIndex:
    """A packed static R-tree over boxes (Hilbert-sorted, flatbush layout).

    Build it once from an ``(n, 4)`` array, then query it many times; it is
    immutable and safe to query from several threads.

    Parameters
    ----------
    boxes : (n, 4) float64 array
        The boxes to index; row ``i`` gets id ``i``.
    node_size : int, default 16
        Children per tree node, between 2 and 64.

    Examples
    --------
    >>> ix = BoxIndex([[0, 0, 10, 10], [20, 0, 30, 10], [5, 5, 25, 8]])
    >>> ix.query([9, 0, 12, 1]).tolist()
    [0]
    >>> ix.query_pairs().tolist()
    [[0, 1], [2, 2]]
    """

    __slots__ = ("_ix",)

    def __init__(self, boxes: BoxesLike, node_size: int = 16) -> None:
        self._ix = _core.BoxIndex(as_boxes(boxes), node_size)

    def __len__(self) -> int:
        return len(self._ix)

    def __repr__(self) -> str:
        return f"BoxIndex(n={len(self)}, node_size={self._ix.node_size})"

    @property
    def bounds(self) -> Union[Tuple[float, float, float, float], None]:
        """The box around every indexed box, or None when the index is empty."""
        return self._ix.bounds

    def query(self, box: BoxLike) -> npt.NDArray[np.int64]:
        """Sorted ids of the boxes that intersect ``box`` (closed: touching counts)."""
        return self._ix.query(_as_box(box, "box"))

    def query_many(self, boxes: BoxesLike) -> npt.NDArray[np.int64]:
        """The hits of several query boxes in one call, as a ``(2, k)`` array of (id, query).

        The same as :meth:`query` of each box in turn: row 0 holds the ids each
        query hits (closed), query by query, each query's sorted; row 1 the
        query's position.

        Parameters
        ----------
        boxes : (m, 4) float64 array
            The query boxes, C-contiguous.

        Returns
        -------
        (2, k) int64 array
            Ids and the query of each.

        Raises
        ------
        InvalidInputError
            A query box that is NaN, infinite or inverted (naming its row), or
            an array that is not (m, 4) float64.

        Examples
        --------
        >>> ix = BoxIndex([[0, 0, 10, 10], [20, 0, 30, 10], [5, 5, 25, 8]])
        >>> ix.query_many([[9, 0, 12, 1], [10, 5, 20, 5]]).tolist()
        [[0, 0, 1, 2], [0, 1, 1, 1]]
        """
        return self._ix.query_many(as_boxes(boxes, "queries"))

    def query_containing(self, box: BoxLike) -> npt.NDArray[np.int64]:
        """Sorted ids of the boxes that contain ``box`` (closed: equal boxes count)."""
        return self._ix.query_containing(_as_box(box, "box"))

    def query_pairs(self) -> npt.NDArray[np.int64]:
        """All pairs ``i < j`` of intersecting boxes (closed), as a sorted ``(2, k)`` array."""
        return self._ix.query_pairs()


def visibility(
    boxes: BoxesLike, viewport: BoxLike, near_factor: float = 0.75
) -> Tuple[npt.NDArray[np.int8], npt.NDArray[np.float64]]:
    """Label each box against a viewport.

    Parameters
    ----------
    boxes : (n, 4) float64 array
    viewport : [x0, y0, x1, y1]
    near_factor : float, default 0.75
        An offscreen box is *near* when its gap to the viewport is at most
        ``near_factor * max(viewport width, viewport height)``.

    Returns
    -------
    labels : (n,) int8
        ``VISIBLE`` when the box lies inside the viewport (closed), ``PARTIAL``
        when it intersects the viewport without lying inside (a box that only
        touches the viewport's edge is partial), else ``OFFSCREEN_NEAR`` or
        ``OFFSCREEN_FAR``. Never ``OCCLUDED``: see :func:`occluders`.
    gaps : (n,) float64
        Euclidean distance between the closest points of box and viewport,
        0 when they intersect.

    Examples
    --------
    >>> labels, gaps = visibility([[0, 0, 10, 10], [95, 0, 105, 10], [300, 0, 310, 10]], [0, 0, 100, 100])
    >>> [LABEL_NAMES[c] for c in labels]
    ['visible', 'partial', 'offscreen_far']
    >>> gaps.tolist()
    [0.0, 0.0, 200.0]
    """
    return _core.visibility(as_boxes(boxes), _as_box(viewport, "viewport"), float(near_factor))


def visibility_labels(boxes: BoxesLike, viewport: BoxLike, near_factor: float = 0.75) -> npt.NDArray[np.int8]:
    """The labels of :func:`visibility` without the gaps (a pass that writes one byte per box).

    Parameters
    ----------
    boxes : (n, 4) float64 array
    viewport : [x0, y0, x1, y1]
    near_factor : float, default 0.75

    Returns
    -------
    labels : (n,) int8
        Equal to ``visibility(boxes, viewport, near_factor)[0]``.

    Examples
    --------
    >>> [LABEL_NAMES[c] for c in visibility_labels([[0, 0, 10, 10], [300, 0, 310, 10]], [0, 0, 100, 100])]
    ['visible', 'offscreen_far']
    """
    return _core.visibility_labels(as_boxes(boxes), _as_box(viewport, "viewport"), float(near_factor))


@overload
def occluders(
    boxes: BoxesLike,
    order: Any,
    opacity: Any,
    hidden: Any,
    viewport: BoxLike,
    min_opacity: float = ...,
    *,
    mode: Literal["bounds"] = ...,
) -> npt.NDArray[np.int64]: ...
@overload
def occluders(
    boxes: BoxesLike,
    order: Any,
    opacity: Any,
    hidden: Any,
    viewport: BoxLike,
    min_opacity: float = ...,
    *,
    mode: Literal["union"],
    targets: Any = ...,
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def occluders(
    boxes: BoxesLike,
    order: Any,
    opacity: Any,
    hidden: Any,
    viewport: BoxLike,
    min_opacity: float = 0.9,
    *,
    mode: str = "bounds",
    targets: Any = None,
) -> Any:
    """Find, for each box in view, a higher opaque box that hides it.

    A box in view (it intersects the viewport, closed) is clipped to the
    viewport. In ``"bounds"`` mode (the CanvasObs definition) its occluder is a
    box ``j`` that is higher in paint order (``order[j] > order[i]``), not
    hidden, has ``opacity[j] >= min_opacity`` and contains the clipped box
    (closed). Bounds, not pixels. When several qualify, the one lowest in paint
    order wins (then the lower index).

    Parameters
    ----------
    boxes : (n, 4) float64 array
    order : (n,) int64 array or None
        Paint order; None means row order (row ``n - 1`` on top).
    opacity : (n,) float64 array in [0, 1] or None (all 1)
    hidden : (n,) bool array or None (none hidden)
    viewport : [x0, y0, x1, y1]
    min_opacity : float, default 0.9
    mode : {"bounds", "union"}
        ``"union"`` (ours) also counts a box as hidden when the *union* of
        qualifying boxes covers its clipped bounds, and returns the covered
        fraction.
    targets : (n,) bool array or None, union mode only
        The boxes to answer for (None: all). The others get -1 and 0 but
        still count as covers, so a target's answer is the one without
        ``targets``; asking for a few boxes costs in proportion to them.

    Returns
    -------
    occ : (n,) int64
        The occluder's index, -1 for offscreen or unoccluded boxes. In union
        mode a box covered only by a union gets the qualifying box lowest in
        paint order among those overlapping it.
    fraction : (n,) float64, union mode only
        Share of the clipped area covered; exactly 1.0 when fully covered
        (decided exactly), 0 for offscreen boxes. A zero-area clipped box counts
        as covered only when a single qualifying box contains it.

    Examples
    --------
    >>> boxes = [[10, 10, 20, 20], [0, 0, 50, 50], [5, 5, 60, 60]]
    >>> occluders(boxes, None, None, None, [0, 0, 100, 100]).tolist()
    [1, -1, -1]
    >>> halves = [[10, 10, 20, 20], [0, 0, 15, 30], [15, 0, 30, 30]]
    >>> occluders(halves, None, None, None, [0, 0, 100, 100]).tolist()
    [-1, -1, -1]
    >>> occ, frac = occluders(halves, None, None, None, [0, 0, 100, 100], mode="union")
    >>> occ.tolist(), frac.tolist()
    ([1, -1, -1], [1.0, 0.0, 0.0])
    >>> occluders(halves, None, None, None, [0, 0, 100, 100], mode="union",
    ...           targets=[True, False, False])[1].tolist()
    [1.0, 0.0, 0.0]
    """
    arr = as_boxes(boxes)
    n = arr.shape[0] if arr.ndim == 2 else 0
    order_arr = np.arange(n, dtype=np.int64) if order is None else _as_column(order, n, np.int64, "order", 0)
    return _core.occluders(
        arr,
        order_arr,
        _as_column(opacity, n, np.float64, "opacity", 1.0),
        _as_column(hidden, n, np.bool_, "hidden", False),
        _as_box(viewport, "viewport"),
        float(min_opacity),
        mode,
        None if targets is None else _as_column(targets, n, np.bool_, "targets", False),
    )


def polygon_coverage(
    polygons: Sequence[Any],
    targets: Any,
    covers: Sequence[Sequence[int]],
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """How much of each target polygon the union of its covering polygons hides.

    Polygons are vertex loops (the closing edge implied) whose interior follows
    the even-odd rule, so a simple polygon of either orientation, convex or not,
    is its own region. For query ``q`` the target is ``polygons[targets[q]]`` and
    the covers are ``polygons[i]`` for ``i`` in ``covers[q]``. The areas are exact
    up to rounding: the plane is cut into vertical slabs at every vertex and edge
    crossing, inside which every cross-section is linear in x.

    Parameters
    ----------
    polygons : sequence of (k_i, 2) arrays of float64 (or nested lists)
    targets : (t,) int64
    covers : sequence of t sequences of polygon indices

    Returns
    -------
    area : (t,) float64
        The target's area (0 for a degenerate polygon).
    covered : (t,) float64
        The part of that area inside the union of the covers.
    best : (t,) int64
        The cover (an index into ``polygons``) meeting the target with the
        largest area, -1 when none meets it with positive area.

    Examples
    --------
    >>> sq = [[0, 0], [10, 0], [10, 10], [0, 10]]
    >>> left, right = [[-1, -1], [5, -1], [5, 11], [-1, 11]], [[5, -1], [11, -1], [11, 11], [5, 11]]
    >>> area, covered, best = polygon_coverage([sq, left, right], [0, 0], [[1], [1, 2]])
    >>> area.tolist(), covered.tolist(), best.tolist()
    ([100.0, 100.0], [50.0, 100.0], [1, 1])
    """
    arrs = []
    for i, p in enumerate(polygons):
        a = np.asarray(p, dtype=np.float64)
        if a.size == 0:
            a = a.reshape(0, 2)
        if a.ndim != 2 or a.shape[1] != 2:
            raise InvalidInputError(f"polygon {i} must have shape (k, 2) as rows [x, y], got shape {a.shape}")
        arrs.append(a)
    counts = np.array([len(a) for a in arrs], dtype=np.int64)
    starts = np.zeros(len(arrs) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    verts = np.ascontiguousarray(np.concatenate(arrs) if arrs else np.zeros((0, 2)), dtype=np.float64)
    tg = np.ascontiguousarray(np.asarray(targets, dtype=np.int64).reshape(-1))
    if len(covers) != len(tg):
        raise InvalidInputError(f"covers must have one list per target ({len(tg)}), got {len(covers)}")
    cl = [np.asarray(c, dtype=np.int64).reshape(-1) for c in covers]
    cs = np.zeros(len(tg) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in cl], out=cs[1:])
    cv = np.ascontiguousarray(np.concatenate(cl) if cl else np.zeros(0, np.int64))
    area, covered, pos = _core.polygon_coverage(verts, starts, tg, cs, cv)
    return area, covered, np.where(pos >= 0, cv[np.maximum(pos, 0)] if len(cv) else -1, -1).astype(np.int64)


def _boxes_or_index(boxes: Union[BoxesLike, "BoxIndex"]) -> Any:
    return boxes._ix if isinstance(boxes, BoxIndex) else as_boxes(boxes)


def _threads(threads: Any) -> int:
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) or threads < 0:
        raise InvalidInputError(f"threads must be an integer >= 0 (0: one per core), got {threads!r}")
    return min(int(threads), 1 << 16)  # the core caps the count far below this anyway


def release_scratch() -> None:
    """Free the working memory the pair kernels keep for the calling thread.

    The pair kernels (:func:`overlap_pairs`, :func:`containment_pairs`,
    :func:`proximity_pairs`, :func:`alignment_pairs`) keep their temporaries
    between calls, one set per calling thread, sized by the largest call so
    far (about 50 MB after the kernels at 10^5 boxes). Call this after a large
    page when no more are coming; the next call allocates afresh.

    Examples
    --------
    >>> _ = overlap_pairs([[0, 0, 2, 2], [1, 1, 3, 3]])
    >>> release_scratch()
    >>> scratch_bytes()
    0
    """
    _core.release_scratch()


def scratch_bytes() -> int:
    """Bytes of working memory the pair kernels keep for the calling thread (see :func:`release_scratch`)."""
    return int(_core.scratch_bytes())


def overlap_pairs(
    boxes: Union[BoxesLike, "BoxIndex"], *, threads: int = 1
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Pairs of boxes whose intersection has positive area.

    Touching boxes and zero-area boxes never overlap. ``boxes`` may be a
    :class:`BoxIndex` built earlier over the boxes: the kernel then reuses it
    instead of building its own (the same for :func:`containment_pairs` and
    :func:`proximity_pairs`; one index serves them all).

    Parameters
    ----------
    boxes : (n, 4) float64 array or BoxIndex
    threads : int, default 1
        Threads for the join (0: one per core); the result does not depend on it.

    Returns
    -------
    pairs : (2, k) int64
        ``i < j``, sorted by ``(i, j)``.
    areas : (k,) float64
        The intersection areas.

    Examples
    --------
    >>> pairs, areas = overlap_pairs([[0, 0, 10, 10], [5, 5, 15, 15], [10, 0, 20, 5]])  # 1 and 2 only touch
    >>> pairs.tolist(), areas.tolist()
    ([[0], [1]], [25.0])
    >>> overlap_pairs(BoxIndex([[0, 0, 10, 10], [5, 5, 15, 15]]))[0].tolist()
    [[0], [1]]
    """
    return _core.overlap_pairs(_boxes_or_index(boxes), threads=_threads(threads))


def overlap_pairs_between(
    index: "BoxIndex", queries: BoxesLike
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Pairs ``(i, j)`` of an indexed box ``i`` and a query box ``j`` whose intersection has positive area.

    The pairs :func:`overlap_pairs` would report between the index's boxes and
    the queries if both were joined, without rebuilding the index.

    Returns
    -------
    pairs : (2, k) int64
        Row 0 the indexed box, row 1 the query, sorted by ``(i, j)``.
    areas : (k,) float64

    Examples
    --------
    >>> ix = BoxIndex([[0, 0, 10, 10], [20, 0, 30, 10]])
    >>> pairs, areas = overlap_pairs_between(ix, [[8, 8, 22, 12], [10, 0, 20, 10]])  # the second only touches
    >>> pairs.tolist(), areas.tolist()
    ([[0, 1], [0, 0]], [4.0, 4.0])
    """
    if not isinstance(index, BoxIndex):
        raise InvalidInputError(f"index must be a BoxIndex, got {type(index).__name__}")
    return _core.overlap_pairs_between(index._ix, as_boxes(queries, "queries"))


def overlap_any_ranked(
    index: "BoxIndex",
    ranks: npt.ArrayLike,
    queries: BoxesLike,
    query_ranks: npt.ArrayLike,
    *,
    above: bool = True,
) -> npt.NDArray[np.bool_]:
    """Per query box, whether an indexed box ranked above it (or below it) overlaps it with positive area.

    :func:`overlap_pairs_between`'s pairs reduced to one flag per query: each
    query's search stops at the first indexed box that qualifies, so no pair
    is written or sorted (far less work where boxes pile up and a query meets
    hundreds).

    Parameters
    ----------
    index : BoxIndex
        The indexed boxes.
    ranks : (n,) int64
        One rank per indexed box (a paint position, say).
    queries : (m, 4) float64
        The query boxes, validated like boxes.
    query_ranks : (m,) int64
        One rank per query.
    above : bool, default True
        True: an indexed box ``i`` counts for query ``j`` when
        ``ranks[i] > query_ranks[j]``; False: when ``ranks[i] < query_ranks[j]``.

    Returns
    -------
    (m,) bool
        Whether query ``j`` overlaps (positive area) an indexed box that counts for it.

    Raises
    ------
    InvalidInputError
        ``index`` is no :class:`BoxIndex`, a query box is invalid, or a rank
        column is not integral or not one value per box.

    Examples
    --------
    >>> ix = BoxIndex([[0, 0, 10, 10], [20, 0, 30, 10]])
    >>> overlap_any_ranked(ix, [5, 1], [[8, 8, 22, 12], [8, 8, 22, 12]], [3, 7]).tolist()
    [True, False]
    >>> overlap_any_ranked(ix, [5, 1], [[8, 8, 22, 12]], [3], above=False).tolist()
    [True]
    """
    if not isinstance(index, BoxIndex):
        raise InvalidInputError(f"index must be a BoxIndex, got {type(index).__name__}")
    q = as_boxes(queries, "queries")
    return _core.overlap_any_ranked(index._ix, _rank_column(ranks, "ranks", len(index)), q,
                                    _rank_column(query_ranks, "query_ranks", len(q)), bool(above))


def _rank_column(a: npt.ArrayLike, name: str, n: int) -> npt.NDArray[np.int64]:
    """``a`` as a contiguous 1-D int64 column of length ``n``, or InvalidInputError naming it."""
    arr = np.asarray(a)
    if arr.ndim != 1 or len(arr) != n:
        raise InvalidInputError(f"{name} must be a 1-D array of {n} values, got shape {arr.shape}")
    if n and not np.issubdtype(arr.dtype, np.integer):
        raise InvalidInputError(f"{name} must hold integers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def containment_pairs(boxes: Union[BoxesLike, "BoxIndex"], *, threads: int = 1) -> npt.NDArray[np.int64]:
    """Pairs ``(outer, inner)`` with ``inner`` inside ``outer`` (closed).

    ``outer != inner`` as indices; two identical boxes contain each other and
    give both pairs.

    Parameters
    ----------
    boxes : (n, 4) float64 array or BoxIndex
    threads : int, default 1
        Threads for the join (0: one per core); the result does not depend on it.

    Returns
    -------
    pairs : (2, k) int64
        Row 0 the outer box, row 1 the inner one, sorted by ``(outer, inner)``.

    Examples
    --------
    >>> containment_pairs([[0, 0, 100, 100], [10, 10, 20, 20], [0, 0, 100, 100]]).tolist()
    [[0, 0, 2, 2], [1, 2, 0, 1]]
    """
    return _core.containment_pairs(_boxes_or_index(boxes), threads=_threads(threads))


def proximity_pairs(
    boxes: Union[BoxesLike, "BoxIndex"], max_gap: float, k_nearest: int = 4, *, threads: int = 1
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Pairs of boxes that do not overlap but lie within ``max_gap`` of each other.

    The gap is the Euclidean distance between the closest points of the two
    boxes (0 when they touch). Each box keeps its ``k_nearest`` closest such
    neighbours (smaller gap first, then lower index); a pair is reported once,
    when either of its boxes keeps the other.

    Parameters
    ----------
    boxes : (n, 4) float64 array or BoxIndex
    max_gap : float
    k_nearest : int, default 4
    threads : int, default 1
        Threads for the join (0: one per core); the result does not depend on it.

    Returns
    -------
    pairs : (2, k) int64
        ``i < j``, sorted.
    gaps : (k,) float64

    Examples
    --------
    >>> pairs, gaps = proximity_pairs([[0, 0, 10, 10], [13, 0, 20, 10], [0, 14, 10, 20]], max_gap=5)
    >>> pairs.tolist(), gaps.tolist()
    ([[0, 0, 1], [1, 2, 2]], [3.0, 4.0, 5.0])
    """
    return _core.proximity_pairs(_boxes_or_index(boxes), float(max_gap), int(k_nearest), threads=_threads(threads))


def alignment_pairs(
    boxes: BoxesLike, tol: float = 1.0, *, threads: int = 1, kind: Optional[int] = None
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int8]]:
    """Boxes sharing a left, center-x, right, top, center-y or bottom line.

    For each kind, boxes are sorted by that coordinate and cut greedily into
    lines: a line starts at the smallest value not yet taken and takes every
    box within ``tol`` of it, so any two boxes on a line are within ``tol``.
    Along each line only neighbours are paired (ordered by the center on the
    other axis), a chain rather than all pairs.

    Parameters
    ----------
    boxes : (n, 4) float64 array
    tol : float, default 1.0
    threads : int, default 1
        The six kinds are spread over up to six threads (0: one per core); the
        result does not depend on it.
    kind : int, optional
        A code into :data:`ALIGN_KINDS`: only that kind's lines are cut, and
        the result is the rows of that kind of the full one.

    Returns
    -------
    pairs : (2, k) int64
        ``i < j``, sorted by ``(kind, i, j)``.
    kinds : (k,) int8
        Codes into :data:`ALIGN_KINDS`.

    Raises
    ------
    InvalidInputError
        Bad boxes, a tolerance that is not finite and >= 0, or ``kind`` not a
        code into :data:`ALIGN_KINDS`.

    Examples
    --------
    >>> pairs, kinds = alignment_pairs([[0, 0, 10, 10], [0, 20, 30, 30], [0.5, 40, 10, 50]], tol=1)
    >>> pairs.tolist(), [ALIGN_KINDS[k] for k in kinds]
    ([[0, 1, 0, 0], [1, 2, 2, 2]], ['left', 'left', 'center_x', 'right'])
    >>> alignment_pairs([[0, 0, 10, 10], [0, 20, 30, 30], [0.5, 40, 10, 50]], tol=1, kind=2)[0].tolist()
    [[0], [2]]
    """
    if kind is not None and (isinstance(kind, bool) or not isinstance(kind, (int, np.integer))
                             or not 0 <= kind < len(ALIGN_KINDS)):
        raise InvalidInputError(f"kind must be a code into ALIGN_KINDS (0..{len(ALIGN_KINDS) - 1}), got {kind!r}")
    return _core.alignment_pairs(as_boxes(boxes), float(tol), threads=_threads(threads),
                                 kind=-1 if kind is None else int(kind))


def alignment_masks(boxes: BoxesLike, tol: float = 1.0, group: Optional[npt.ArrayLike] = None
                    ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """The pairs of :func:`alignment_pairs` merged per axis, with a bit mask of their kinds.

    Lines are cut and paired exactly as in :func:`alignment_pairs`; then a pair
    found on several lines of one axis (``left`` and ``right``, say) is reported
    once for that axis, with bit ``k`` of its mask set for each kind code ``k`` of
    :data:`ALIGN_KINDS`. With ``group`` (one integer per box) only pairs of boxes
    in the same group are kept (after pairing: a box of another group between
    two boxes of a line still separates them).

    Returns
    -------
    pairs : (2, k) int64
        ``i < j``, sorted by ``(i, j, axis)``.
    axes : (k,) int8
        0 for the vertical lines (left, center x, right), 1 for the horizontal ones.
    masks : (k,) int8
        Bit ``k`` set for each kind code ``k`` on that axis.

    Raises
    ------
    InvalidInputError
        Bad boxes, a tolerance that is not finite and >= 0, or ``group`` not one
        integer per box.

    Examples
    --------
    >>> pairs, axes, masks = alignment_masks([[0, 0, 10, 10], [0, 20, 30, 30], [0.5, 40, 10, 50]], tol=1)
    >>> pairs.tolist(), axes.tolist(), masks.tolist()
    ([[0, 0, 1], [1, 2, 2]], [0, 0, 0], [1, 6, 1])
    """
    b = as_boxes(boxes)
    g = None
    if group is not None:
        g = np.asarray(group)
        if g.shape == (0,):
            g = g.astype(np.int64)  # an empty list reads as float
        if g.dtype.kind not in "iu" or g.shape != (len(b),):
            raise InvalidInputError(f"group must be one integer per box ({len(b)}), got shape {g.shape} of {g.dtype}")
        g = np.ascontiguousarray(g, dtype=np.int64)
    return _core.alignment_masks(b, float(tol), g)


def reading_order(boxes: BoxesLike, row_tol: float = 10.0) -> npt.NDArray[np.int64]:
    """Rank each box in reading order: rows top to bottom, left to right in a row.

    Boxes sorted by center y are cut greedily into rows: a row starts at the
    first box not yet placed and takes every box whose center y is within
    ``row_tol`` of that first box's. Inside a row boxes go by left edge (then
    center y, then index).

    Returns
    -------
    rank : (n,) int64
        A permutation of ``0 .. n-1``.

    Examples
    --------
    >>> reading_order([[50, 0, 60, 10], [0, 2, 10, 12], [0, 40, 10, 50]], row_tol=5).tolist()
    [1, 0, 2]
    """
    return _core.reading_order(as_boxes(boxes), float(row_tol))
