"""The comparison context of the agent kit the CanvasObs paper measured against.

:func:`baseline_context` reproduces what a tldraw agent kit sends a model about the
canvas: the shapes that intersect the request bounds (id, type, text and rounded
frame-clipped bounds in action coordinates), the selected ids, and anonymous
clusters of the shapes outside. It carries no state (lock, color), no structure
(parent, frame), no bindings and no ids for anything outside the bounds, which is
what the Remote Team Handoff scenarios probe.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Sequence

import numpy as np

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.observe import _origin, _page_arrays, _resolve_page, _round, resolve_viewport

__all__ = ["baseline_context", "context_json", "CLUSTER_PADDING"]

#: Growth of each outside shape's box before clustering (the kit's padding).
CLUSTER_PADDING = 75.0


def _box(x0: float, y0: float, x1: float, y1: float, ox: float, oy: float) -> Dict[str, int]:
    r = _round([x0 - ox, y0 - oy, x1 - x0, y1 - y0]).astype(int).tolist()
    return {"x": r[0], "y": r[1], "w": r[2], "h": r[3]}


def baseline_context(
    canvas: Canvas,
    viewport: Any = None,
    *,
    page: Optional[str] = None,
    selected: Optional[Iterable[str]] = None,
    origin: Sequence[float] = (0, 0),
) -> Dict[str, Any]:
    """The agent-kit context of one page: in-bounds shapes, selected ids, outside clusters.

    Shapes are taken in paint order with their frame-clipped page bounds (a shape
    its frames clip away entirely is left out, as the kit does). A shape whose
    clipped bounds intersect the request bounds (closed) is listed as
    ``{id, type, text?, x, y, w, h}`` (rounded, offset by ``origin``). A shape wholly
    outside has its box grown by 75 and joins, in paint order, the first cluster
    whose box its grown box touches (the cluster box grows to include it), else
    starts a cluster; clusters are reported as ``{bounds: {x, y, w, h}, numberOfShapes}``
    with the bounds shrunk back by the padding.

    Parameters
    ----------
    canvas : Canvas
    viewport : Viewport, {x, y, w, h} or (x, y, w, h), optional
        The request bounds; default as in :func:`~spatialobs.canvas.observe`.
    page : str, optional
    selected : iterable of str, optional
        None: the selection saved in the document.
    origin : (x, y)

    Returns
    -------
    dict
        ``{"shapes": [...], "selectedIds": [...], "peripheralClusters": [...]}``

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("a", "geo", "page:page", "a1", 10.4, 10, 100, 50, text="hi"))
    >>> _ = c.add(Node("b", "geo", "page:page", "a2", 900, 0, 50, 50))
    >>> _ = c.add(Node("c", "geo", "page:page", "a3", 1000, 0, 50, 50))
    >>> baseline_context(c, (0, 0, 500, 500))
    {'shapes': [{'id': 'a', 'type': 'geo', 'text': 'hi', 'x': 10, 'y': 10, 'w': 100, 'h': 50}], 'selectedIds': [], 'peripheralClusters': [{'bounds': {'x': 900, 'y': 0, 'w': 150, 'h': 50}, 'numberOfShapes': 2}]}
    """
    if not isinstance(canvas, Canvas):
        raise InvalidInputError(f"canvas must be a Canvas, got {type(canvas).__name__}")
    ox, oy = _origin(origin)
    pid = _resolve_page(canvas, page)
    vp = resolve_viewport(canvas, viewport, pid)
    pg = _page_arrays(canvas, pid)
    if selected is None:
        sel: List[str] = list(canvas.selected(pid))
    else:
        sel = [selected] if isinstance(selected, str) else list(selected)
        for s in sel:
            if not isinstance(s, str) or s not in canvas.nodes:
                raise InvalidInputError(f"selected id {s!r} is not a node of the canvas")
    vx0, vy0, vx1, vy1 = vp.as_box()
    b = pg.boxes
    shown = ~pg.gone
    inside = shown & (b[:, 0] <= vx1) & (b[:, 2] >= vx0) & (b[:, 1] <= vy1) & (b[:, 3] >= vy0)
    nodes = canvas.nodes
    shapes: List[Dict[str, Any]] = []
    for r in np.flatnonzero(inside).tolist():
        nd = nodes[pg.ids[r]]
        rec: Dict[str, Any] = {"id": nd.id, "type": nd.type}
        text = nd.text if nd.text else nd.name
        if text:
            rec["text"] = text
        x0, y0, x1, y1 = b[r].tolist()
        rec.update(_box(x0, y0, x1, y1, ox, oy))
        shapes.append(rec)
    pad = CLUSTER_PADDING
    clusters: List[List[float]] = []
    counts: List[int] = []
    for x0, y0, x1, y1 in (b[shown & ~inside] + (-pad, -pad, pad, pad)).tolist():
        for k, c in enumerate(clusters):
            if x0 <= c[2] and c[0] <= x1 and y0 <= c[3] and c[1] <= y1:
                c[0], c[1], c[2], c[3] = min(c[0], x0), min(c[1], y0), max(c[2], x1), max(c[3], y1)
                counts[k] += 1
                break
        else:
            clusters.append([x0, y0, x1, y1])
            counts.append(1)
    peripheral = [{"bounds": _box(c[0] + pad, c[1] + pad, c[2] - pad, c[3] - pad, ox, oy), "numberOfShapes": k}
                  for c, k in zip(clusters, counts)]
    return {"shapes": shapes, "selectedIds": sel, "peripheralClusters": peripheral}


def context_json(context: Dict[str, Any]) -> str:
    """Compact deterministic JSON of a baseline context (as :meth:`Observation.to_json`).

    Examples
    --------
    >>> context_json({"shapes": [], "selectedIds": [], "peripheralClusters": []})
    '{"shapes":[],"selectedIds":[],"peripheralClusters":[]}'
    """
    return json.dumps(context, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
