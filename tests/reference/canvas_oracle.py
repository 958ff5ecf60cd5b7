"""Independent geometry for canvas tests, written from the definition (DESIGN §3)."""

from __future__ import annotations

import math


def corners_box(ox, oy, rot, x0, y0, x1, y1):
    """Page bounds of a local box rotated by ``rot`` about the local origin, then moved to (ox, oy).

    Rotates the four corners and takes their extent.
    """
    xs, ys = [], []
    for cx, cy in ((x0, y0), (x1, y0), (x1, y1), (x0, y1)):
        xs.append(ox + cx * math.cos(rot) - cy * math.sin(rot))
        ys.append(oy + cx * math.sin(rot) + cy * math.cos(rot))
    return (min(xs), min(ys), max(xs), max(ys))


def page_columns(d, rows):
    """The page columns of a derivation ``d`` for its page rows ``rows`` (paint order), gathered
    row by row from the definition: each column's values at ``rows``, and the tree columns as page
    rows (the position in ``rows`` of the parent, frame or group row, -1 for none or another page).
    A dict of column name -> list."""
    pos = {int(r): k for k, r in enumerate(rows)}

    def page_row(r):
        return pos.get(int(r), -1) if r >= 0 else -1
    out = {}
    for name in ("bounds", "visible", "opacity", "hidden", "locked", "rotation", "depth", "types"):
        col = getattr(d, name)
        out[name] = [col[int(r)].tolist() for r in rows]
    out["clipped"] = [d.bounds[int(r)].tolist() != d.visible[int(r)].tolist() for r in rows]
    for name in ("parent", "frame", "group"):
        col = getattr(d, name)
        out[name] = [page_row(col[int(r)]) for r in rows]
    out["page_pos"] = [pos.get(r, -1) for r in range(len(d.ids))]
    return out
