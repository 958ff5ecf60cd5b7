"""Naive twins of :mod:`spatialobs.canvas.rowmaps`, straight from the definitions: one Python loop
per output, row by row."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple


def map_rows(newrow: Sequence[int], canvas_rows: Sequence[int], page_pos: Sequence[int],
             n: int) -> Optional[Tuple[List[int], List[int], List[int], List[bool]]]:
    """(omap with its last slot, new row of each kept row, kept rows, is_new), or None when a kept
    row is on another page now."""
    omap: List[int] = []
    for r in canvas_rows:
        c = newrow[r]
        if c < 0:
            omap.append(-1)
            continue
        if page_pos[c] < 0:
            return None
        omap.append(page_pos[c])
    kept = [i for i, p in enumerate(omap) if p >= 0]
    now = [omap[i] for i in kept]
    taken = set(now)
    return omap + [-1], now, kept, [p not in taken for p in range(n)]


def cuts(src: Sequence[int], dst: Sequence[int]) -> List[int]:
    """Where a run of ``src`` -> ``dst`` ends: before each pair that does not step by one on both sides."""
    if not len(src):
        return [0]
    out = [0]
    for k in range(1, len(src)):
        if not (src[k] == src[k - 1] + 1 and dst[k] == dst[k - 1] + 1):
            out.append(k)
    return out + [len(src)]


def solid_rows(solid: Sequence[bool], omap: Sequence[int], old_sub: Sequence[int],
               is_new: Sequence[bool]) -> Dict[str, List[int]]:
    sub = [r for r, s in enumerate(solid) if s]
    where = {r: k for k, r in enumerate(sub)}
    subpos = [where.get(r, -1) for r in range(len(solid))] + [-1]
    smap = [where.get(omap[r], -1) if omap[r] >= 0 else -1 for r in old_sub]
    kp = [j for j, s in enumerate(smap) if s >= 0]
    return {"sub": sub, "subpos": subpos, "smap": smap, "kp": kp, "skp": [smap[j] for j in kp],
            "added": [k for k, r in enumerate(sub) if is_new[r]]}


def reparented(new_of_kept: Sequence[int], kept_old: Sequence[int], old_parent: Sequence[int],
               parent: Sequence[int], omap: Sequence[int]) -> Tuple[List[int], bool]:
    moved = []
    for now, then in zip(new_of_kept, kept_old):
        p = old_parent[then]
        if parent[now] != (omap[p] if p >= 0 else -1):
            moved.append(now)
    return moved, all(b > a for a, b in zip(new_of_kept, new_of_kept[1:]))
