"""Naive checks of placement, written straight from the definition (DESIGN §5, §6).

``placement_violations`` states the Correct placement conditions as pure-Python
loops over page bounds; ``nearest_free_lattice`` scans every integer position of
one box, the brute-force twin of the placement search for integer inputs.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

Box = Tuple[float, float, float, float]
_STATE = ("type", "w", "h", "text", "name", "style", "opacity", "locked", "hidden", "props")


def overlap_area(a: Box, b: Box) -> float:
    """Area of the intersection of two boxes (0 when they only touch)."""
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    return ix * iy if ix > 0 and iy > 0 else 0.0


def placement_violations(before, after, ids: Sequence[str], dest: Box, *, inset: float = 8.0,
                         max_overlap: float = 1.0, occupants: Iterable[str] = (), eps: float = 1e-6) -> List[str]:
    """Every way ``after`` breaks Correct placement of ``ids`` into page box ``dest``.

    Size means the page bounds' width and height; other state is every node field
    but position, parent, index and local rotation (the page rotation must stay).
    """
    out: List[str] = []
    L, T, R, B = dest[0] + inset, dest[1] + inset, dest[2] - inset, dest[3] - inset
    boxes = {}
    for i in ids:
        b0, b1 = before.page_bounds(i), after.page_bounds(i)
        boxes[i] = b1
        if abs((b0[2] - b0[0]) - (b1[2] - b1[0])) > eps or abs((b0[3] - b0[1]) - (b1[3] - b1[1])) > eps:
            out.append(f"{i}: size changed {b0} -> {b1}")
        if b1[0] < L - eps or b1[1] < T - eps or b1[2] > R + eps or b1[3] > B + eps:
            out.append(f"{i}: {b1} not inside {(L, T, R, B)}")
        n0, n1 = before.node(i), after.node(i)
        for f in _STATE:
            if getattr(n0, f) != getattr(n1, f):
                out.append(f"{i}: field {f} changed")
        if abs(before.page_rotation(i) - after.page_rotation(i)) > 1e-9:
            out.append(f"{i}: page rotation changed")
    ids = list(ids)
    for a in range(len(ids)):
        for b in range(a + 1, len(ids)):
            area = overlap_area(boxes[ids[a]], boxes[ids[b]])
            if area > max_overlap:
                out.append(f"{ids[a]} and {ids[b]} overlap by {area}")
    for o in occupants:
        ob = after.page_bounds(o)
        for i in ids:
            area = overlap_area(boxes[i], ob)
            if area > max_overlap:
                out.append(f"{i} overlaps occupant {o} by {area}")
    return out


def nearest_free_lattice(w: int, h: int, want: Tuple[int, int], inner: Box,
                         obstacles: Sequence[Box]) -> Optional[Tuple[int, int, int]]:
    """(squared distance, x, y) of the nearest integer corner where a w×h box fits, or None."""
    L, T, R, B = (int(v) for v in inner)
    best = None
    for x in range(L, R - w + 1):
        for y in range(T, B - h + 1):
            box = (x, y, x + w, y + h)
            if all(overlap_area(box, o) == 0 for o in obstacles):
                d = (x - want[0]) ** 2 + (y - want[1]) ** 2
                if best is None or d < best[0]:
                    best = (d, x, y)
    return best
