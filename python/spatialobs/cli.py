"""The ``spatialobs`` command (also ``python -m spatialobs``).

One subcommand per job; run ``spatialobs <command> --help`` for the options.
Errors print one line and exit with status 2 (``--debug`` shows the traceback);
a bad input file never crashes the command.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError, SpatialObsError

__all__ = ["main"]


class CommandError(SpatialObsError):
    """A problem with the command line itself (missing file, bad option value)."""


def _timed(fn: Callable[[], Any]) -> Tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - start) * 1000.0


class _Progress:
    """A one-line counter on stderr, shown only on a terminal and for long runs."""

    def __init__(self, label: str, total: Optional[int] = None, every: int = 500) -> None:
        self.label, self.total, self.every, self.n = label, total, every, 0
        self.show = sys.stderr.isatty()
        self.start = time.perf_counter()

    def step(self) -> None:
        self.n += 1
        if self.show and self.n % self.every == 0:
            of = f"/{self.total:,}" if self.total else ""
            rate = self.n / max(time.perf_counter() - self.start, 1e-9)
            print(f"\r  {self.n:,}{of} {self.label} ({rate:,.0f}/s)", end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.show and self.n >= self.every:
            print(file=sys.stderr)


# ---- demo ---------------------------------------------------------------------------


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


# ---- dedup --------------------------------------------------------------------------


def _screen_sources(paths: Sequence[str]) -> Iterator[Tuple[str, Any]]:
    """(label, path-or-dict) for each screen: files, folders of .json files, JSON-lines streams."""
    for raw in paths:
        p = Path(raw)
        if raw == "-":
            for k, line in enumerate(sys.stdin, 1):
                if line.strip():
                    yield f"<stdin>:{k}", line
        elif p.is_dir():
            for f in sorted(p.rglob("*.json")):
                yield str(f), f
        elif not p.exists():
            raise CommandError(f"no such file or folder: {raw}")
        elif p.suffix in (".jsonl", ".ndjson"):
            with p.open(encoding="utf-8") as fh:
                for k, line in enumerate(fh, 1):
                    if line.strip():
                        yield f"{raw}:{k}", line
        else:
            yield raw, p


def _dedup(args: argparse.Namespace) -> int:
    from spatialobs.screen import StateIndex, load_screen

    index_path = Path(args.index) if args.index else None
    if index_path is not None and index_path.exists():
        index = StateIndex.load(index_path)
        print(f"index: {index_path} ({len(index):,} observations, {index.num_states:,} states)")
    else:
        index = StateIndex(tau=args.tau, grid=args.grid, mask_volatile=args.mask_volatile)
    before_obs, before_states = len(index), index.num_states
    screens = exact = merged = new = 0
    failed: List[str] = []
    progress = _Progress("screens")
    for label, src in _screen_sources(args.paths):
        try:
            doc = json.loads(src) if isinstance(src, str) else src
            match = index.add(load_screen(doc))
        except (SpatialObsError, ValueError, OSError) as exc:
            failed.append(label)
            print(f"spatialobs: skipped {label}: {exc}", file=sys.stderr)
            continue
        screens += 1
        exact += bool(match.exact)
        new += bool(match.new_state)
        merged += (not match.new_state) and not match.exact
        progress.step()
    progress.done()
    print(f"screens: {screens:,} read, {len(failed):,} skipped")
    print(f"unique observations: {len(index) - before_obs:,} new ({len(index):,} in the index)")
    print(f"states: {index.num_states - before_states:,} new ({index.num_states:,} in the index)")
    print(f"merges: {exact:,} exact duplicates, {merged:,} near-duplicates merged into a state")
    if index_path is not None:
        index.save(index_path)
        print(f"saved: {index_path}")
    return 1 if failed else 0


# ---- the parser -----------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="spatialobs", description="Exact, structured views of 2D spaces for agents.")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the geometry core on a generated canvas")
    demo.add_argument("--n", type=int, default=100_000, help="number of boxes (default 100000)")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_demo)

    dd = sub.add_parser("dedup", help="merge near-duplicate screens into states")
    dd.add_argument("paths", nargs="+", metavar="PATH",
                    help="screen files (Rico, DroidBot, generic JSON), folders of them, .jsonl streams, or - for stdin")
    dd.add_argument("--index", metavar="FILE", help="index file to extend (created if absent) and save")
    dd.add_argument("--tau", type=float, default=0.93, help="merge threshold (default 0.93)")
    dd.add_argument("--grid", type=int, default=30, help="atom grid cells per side (default 30)")
    dd.add_argument("--mask-volatile", action="store_true", help="mask digits, times and counters before hashing")
    dd.set_defaults(func=_dedup)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    args = _parser().parse_args(list(argv) if argv is not None else None)
    try:
        return int(args.func(args))
    except (SpatialObsError, ValueError, OSError) as exc:
        if args.debug:
            raise
        print(f"spatialobs: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("spatialobs: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
