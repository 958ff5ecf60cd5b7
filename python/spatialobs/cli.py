"""The ``spatialobs`` command.

Subcommands:

``demo``
    Runs the geometry core on a generated canvas and prints what it found and
    how long each kernel took.

Errors print one line and exit with status 2 (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Optional, Sequence

from spatialobs._errors import SpatialObsError

__all__ = ["main"]


def _timed(fn: Callable[[], object]) -> tuple:
    start = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - start) * 1000.0


def _demo(args: argparse.Namespace) -> int:
    import numpy as np

    from spatialobs import geometry as g
    from spatialobs.synth import canvas_boxes

    d = canvas_boxes(args.n, seed=args.seed)
    print(f"spatialobs demo: a generated canvas of {args.n:,} boxes (seed {args.seed})")
    vx0, vy0, vx1, vy1 = d.viewport
    print(f"viewport: x={vx0:g} y={vy0:g} w={vx1 - vx0:g} h={vy1 - vy0:g}")
    (labels, _), t_vis = _timed(lambda: g.visibility(d.boxes, d.viewport))
    occ, t_occ = _timed(lambda: g.occluders(d.boxes, d.order, d.opacity, d.hidden, d.viewport))
    (overlaps, _), t_ov = _timed(lambda: g.overlap_pairs(d.boxes))
    contained, t_ct = _timed(lambda: g.containment_pairs(d.boxes))
    (near, _), t_nr = _timed(lambda: g.proximity_pairs(d.boxes, 20.0, 4))
    (aligned, _), t_al = _timed(lambda: g.alignment_pairs(d.boxes, 1.0))
    rank, t_ro = _timed(lambda: g.reading_order(d.boxes, 10.0))
    counts = np.bincount(labels, minlength=5)
    counts[g.OCCLUDED] = int((occ >= 0).sum())
    print("visibility: " + ", ".join(f"{name} {int(c):,}" for name, c in zip(g.LABEL_NAMES, counts)))
    rows = [
        ("visibility", t_vis, f"{len(labels):,} labels"),
        ("occluders", t_occ, f"{int((occ >= 0).sum()):,} boxes hidden by a higher opaque box"),
        ("overlap_pairs", t_ov, f"{overlaps.shape[1]:,} overlapping pairs"),
        ("containment_pairs", t_ct, f"{contained.shape[1]:,} (outer, inner) pairs"),
        ("proximity_pairs", t_nr, f"{near.shape[1]:,} pairs within 20 units"),
        ("alignment_pairs", t_al, f"{aligned.shape[1]:,} aligned neighbours"),
        ("reading_order", t_ro, f"{len(rank):,} ranks"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, ms, what in rows:
        print(f"  {name:<{width}}  {ms:8.1f} ms  {what}")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="spatialobs", description="Exact, structured views of 2D spaces for agents.")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the geometry core on a generated canvas")
    demo.add_argument("--n", type=int, default=100_000, help="number of boxes (default 100000)")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_demo)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    args = _parser().parse_args(list(argv) if argv is not None else None)
    try:
        return int(args.func(args))
    except (SpatialObsError, ValueError, OSError) as exc:
        if args.debug:
            raise
        print(f"spatialobs: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
