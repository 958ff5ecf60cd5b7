"""Seeded synthetic data that looks like real canvases, for benchmarks and demos.

Nothing here is random at import time; every function takes a seed and returns
the same arrays for the same arguments on every platform (numpy's PCG64).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["CanvasBoxes", "canvas_boxes"]


@dataclass(frozen=True)
class CanvasBoxes:
    """Columnar boxes with paint attributes, as the geometry kernels take them.

    Attributes
    ----------
    boxes : (n, 4) float64
        ``[x0, y0, x1, y1]`` rows.
    order : (n,) int64
        Paint order (a permutation of ``0 .. n-1``; higher paints later).
    opacity : (n,) float64
    hidden : (n,) bool
    viewport : tuple of 4 floats
        A 1280 × 720 viewport over a busy part of the canvas.
    """

    boxes: npt.NDArray[np.float64]
    order: npt.NDArray[np.int64]
    opacity: npt.NDArray[np.float64]
    hidden: npt.NDArray[np.bool_]
    viewport: tuple[float, float, float, float]


def canvas_boxes(n: int, seed: int = 0) -> CanvasBoxes:
    """Generate ``n`` canvas-like boxes.

    The mix follows what real whiteboards hold: frames (2%) with cards laid out
    inside them (45%), free clusters of shapes of mixed sizes (45%), connector-like
    lines of zero height or width (7%), and a few huge boxes (backgrounds and a
    translucent overlay). Frames paint below their cards; about 1% of the
    shapes are hidden and 5% translucent. Coordinates are multiples of 0.5.

    Parameters
    ----------
    n : int
        Number of boxes, at least 10.
    seed : int, default 0

    Examples
    --------
    >>> data = canvas_boxes(1000, seed=1)
    >>> data.boxes.shape, int(data.order.max())
    ((1000, 4), 999)
    """
    if n < 10:
        raise ValueError(f"canvas_boxes needs n >= 10, got {n}")
    rng = np.random.default_rng(seed)
    side = float(np.sqrt(n) * 160.0)
    n_frames = max(1, n // 50)
    n_huge = 3
    n_lines = int(n * 0.07)
    n_cards = int(n * 0.45)
    n_free = n - n_frames - n_huge - n_lines - n_cards

    fw = rng.uniform(600, 1400, n_frames)
    fh = rng.uniform(400, 1000, n_frames)
    fx = rng.uniform(0, side, n_frames)
    fy = rng.uniform(0, side, n_frames)
    frames = np.stack([fx, fy, fx + fw, fy + fh], axis=1)

    host = rng.integers(0, n_frames, n_cards)
    cw = np.minimum(rng.uniform(60, 220, n_cards), fw[host] - 16)
    ch = np.minimum(rng.uniform(40, 140, n_cards), fh[host] - 16)
    cx = fx[host] + 8 + rng.uniform(0, 1, n_cards) * (fw[host] - 16 - cw)
    cy = fy[host] + 8 + rng.uniform(0, 1, n_cards) * (fh[host] - 16 - ch)
    cards = np.stack([cx, cy, cx + cw, cy + ch], axis=1)

    centers = rng.uniform(0, side, (max(1, n_free // 60), 2))
    which = rng.integers(0, len(centers), n_free)
    px = centers[which, 0] + rng.normal(0, 250, n_free)
    py = centers[which, 1] + rng.normal(0, 250, n_free)
    size = rng.lognormal(4.2, 0.6, (n_free, 2))
    free = np.stack([px, py, px + size[:, 0], py + size[:, 1]], axis=1)

    lx = rng.uniform(0, side, n_lines)
    ly = rng.uniform(0, side, n_lines)
    length = rng.uniform(50, 400, n_lines)
    vertical = rng.random(n_lines) < 0.5
    lines = np.stack([lx, ly, lx + np.where(vertical, 0, length), ly + np.where(vertical, length, 0)], axis=1)

    huge = np.array([[0, 0, side, side], [side * 0.1, side * 0.1, side * 0.6, side * 0.5], [0, 0, side * 0.4, side]])

    boxes = np.concatenate([huge[:2], frames, cards, free, lines, huge[2:]])
    boxes = np.round(boxes * 2) / 2  # exact halves: ties and touching edges happen
    boxes = np.ascontiguousarray(boxes, dtype=np.float64)

    # paint order: backgrounds, frames, then the rest shuffled, the overlay on top
    order = np.empty(n, dtype=np.int64)
    low = 2 + n_frames
    order[:low] = np.arange(low)
    order[low:-1] = low + rng.permutation(n - low - 1)
    order[-1] = n - 1
    opacity = np.where(rng.random(n) < 0.05, 0.5, 1.0)
    opacity[-1] = 0.3
    hidden = rng.random(n) < 0.01
    # a viewport over the first frame, where cards are dense
    vx, vy = float(boxes[2, 0]), float(boxes[2, 1])
    return CanvasBoxes(boxes, order, opacity, hidden, (vx, vy, vx + 1280.0, vy + 720.0))
