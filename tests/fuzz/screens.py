"""Run the screen-side fuzzer: ``python -m tests.fuzz.screens --iterations N [--seed S] [--jobs J]``.

Inputs ``0 .. N-1`` of run ``S`` (see :func:`tests.fuzz.targets.make_input`) are
shared among ``J`` worker processes. A worker announces each input before making and
running it, so the parent knows which one a crash (the worker dies) or a hang (no word
within ``--timeout`` seconds; the worker is killed) belongs to, and starts a new
worker after it. An escape (an exception that is not a ``SpatialObsError``) is
reported by the worker, which goes on. At the end the parent prints the figures
and, with ``--keep DIR``, writes the first input of every distinct finding there,
minimized (``--minimize``) for escapes.

Options: ``--iterations`` (default 2000), ``--seed`` (1), ``--jobs`` (1),
``--timeout`` (seconds per input, 10), ``--memory-mb`` (address-space cap of a
worker, 4096; 0 for none), ``--keep DIR``, ``--minimize``, ``--json`` (figures as
JSON on the last line).
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[2]

#: Set by SIGINT or SIGTERM in the command: the run stops and reports what it did.
_STOP: List[bool] = []


@dataclass
class Figures:
    inputs: int = 0
    by_kind: Dict[str, int] = field(default_factory=dict)
    escapes: Dict[str, List[int]] = field(default_factory=dict)
    crashes: List[Tuple[int, int]] = field(default_factory=list)  # (input, signal or exit code)
    hangs: List[int] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> Dict[str, Any]:
        return {"inputs": self.inputs, "by_kind": self.by_kind,
                "escapes": sum(len(v) for v in self.escapes.values()),
                "distinct_escapes": sorted(self.escapes), "crashes": len(self.crashes), "hangs": len(self.hangs),
                "seconds": round(self.seconds, 1)}


def _target(name: str) -> Any:
    """The target module ``tests.fuzz.<name>``: ``targets`` (screens, index files) or ``canvas_targets``."""
    import importlib

    if name not in TARGETS:
        raise ValueError(f"unknown fuzz target {name!r} (known: {', '.join(TARGETS)})")
    return importlib.import_module(f"tests.fuzz.{name}")


#: Target modules the runner knows.
TARGETS = ("targets", "canvas_targets")


def worker(seed: int, numbers: List[int], memory_mb: int = 0, target: str = "targets") -> None:
    """Run the given inputs in this process, announcing each on stdout.

    With ``memory_mb``, the address space is capped, so an input that allocates
    without bound fails fast (as a MemoryError escape) instead of swapping.
    """
    if memory_mb > 0:
        try:
            import resource

            limit = memory_mb * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass
    targets = _target(target)
    targets.seeds()
    if hasattr(targets, "index_bytes"):
        targets.index_bytes()
    # Planted failures, for testing the harness itself: "escape:3,crash:5,hang:7,silent-crash:9".
    planted = dict(reversed(p.split(":")) for p in os.environ.get("SPATIALOBS_FUZZ_PLANT", "").split(",") if p)
    out = sys.stdout
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="spatialobs-fuzz-", dir=scratch) as workdir:
        for i in numbers:
            out.write(f"N {i}\n")
            out.flush()
            if planted.get(str(i)) == "silent-crash":  # dies while making the input
                os.abort()
            try:
                kind, payload = targets.make_input(seed, i)
            except Exception as exc:  # noqa: BLE001 - a generator bug is reported, and the run goes on
                out.write(f"S {i} generator\nE {i} generator:{targets.signature(exc)}\n")
                out.flush()
                continue
            out.write(f"S {i} {kind}\n")
            try:
                plant = planted.get(str(i))
                if plant == "crash":
                    os.abort()
                elif plant == "hang":
                    time.sleep(3600)
                elif plant == "escape":
                    raise KeyError("planted")
                targets.run(kind, payload, workdir)
            except BaseException as exc:  # noqa: BLE001 - every escape is a finding
                if isinstance(exc, KeyboardInterrupt):
                    raise
                out.write(f"E {i} {targets.signature(exc)}\n")
        out.write("D\n")
        out.flush()


def _spawn(seed: int, numbers: List[int], numbers_file: str, memory_mb: int, target: str = "targets") -> subprocess.Popen:
    with open(numbers_file, "w") as f:
        f.write(" ".join(map(str, numbers)))
    env = dict(os.environ, PYTHONHASHSEED="0")
    return subprocess.Popen(
        [sys.executable, "-m", "tests.fuzz.screens", "--worker", "--seed", str(seed), "--numbers", numbers_file,
         "--memory-mb", str(memory_mb), "--target", target],
        cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, env=env)


def run(iterations: int, seed: int = 1, jobs: int = 1, timeout: float = 10.0, progress: bool = False,
        memory_mb: int = 4096, target: str = "targets") -> Figures:
    """Fuzz inputs 0 .. iterations-1 of run ``seed`` of ``target`` in ``jobs`` workers; return the figures."""
    figures = Figures()
    start = time.monotonic()
    sel = selectors.DefaultSelector()
    tmp = tempfile.mkdtemp(prefix="spatialobs-fuzz-run-")
    pending = {j: list(range(j, iterations, jobs)) for j in range(jobs)}
    state: Dict[int, Dict[str, Any]] = {}

    def start_worker(j: int) -> None:
        if not pending[j]:
            return
        proc = _spawn(seed, pending[j], os.path.join(tmp, f"numbers{j}.txt"), memory_mb, target)
        state[j] = {"proc": proc, "current": None, "since": time.monotonic(), "buffer": b""}
        sel.register(proc.stdout, selectors.EVENT_READ, j)  # type: ignore[arg-type]

    def finish(j: int, reason: Optional[str]) -> None:
        st = state.pop(j)
        proc = st["proc"]
        sel.unregister(proc.stdout)
        if reason == "hang":
            proc.kill()
        rc = proc.wait()
        proc.stdout.close()
        cur = st["current"]
        if cur is not None:
            if reason == "hang":
                figures.hangs.append(cur)
            else:
                figures.crashes.append((cur, rc))
            pending[j] = pending[j][pending[j].index(cur) + 1:]
            start_worker(j)

    for j in range(jobs):
        start_worker(j)
    last_report = time.monotonic()
    try:
        while state and not _STOP:
            events = sel.select(timeout=1.0)
            for key, _ in events:
                j = key.data
                st = state[j]
                # Raw reads: a buffered readline could leave announced lines unseen.
                chunk = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
                lines = (st["buffer"] + chunk).split(b"\n")
                st["buffer"] = lines.pop()
                for line in lines:
                    parts = line.decode().split()
                    if not parts:
                        continue
                    if parts[0] == "N":  # the next input, before it is made
                        st["current"], st["since"] = int(parts[1]), time.monotonic()
                    elif parts[0] == "S":  # made: its kind
                        figures.inputs += 1
                        figures.by_kind[parts[2]] = figures.by_kind.get(parts[2], 0) + 1
                    elif parts[0] == "E":
                        figures.escapes.setdefault(parts[2], []).append(int(parts[1]))
                    elif parts[0] == "D":
                        st["current"] = None
                if not chunk:  # the worker died (a crash) or finished
                    finish(j, "crash" if st["current"] is not None else None)
            now = time.monotonic()
            for j, st in list(state.items()):
                if st["current"] is not None and now - st["since"] > timeout:
                    finish(j, "hang")
            if progress and now - last_report > 30:
                last_report = now
                print(f"... {figures.inputs} inputs, {sum(map(len, figures.escapes.values()))} escapes, "
                      f"{len(figures.crashes)} crashes, {len(figures.hangs)} hangs", file=sys.stderr, flush=True)
    finally:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        for st in state.values():
            st["proc"].kill()
            st["proc"].wait()
        sel.close()
    figures.seconds = time.monotonic() - start
    return figures


def failing(kind: str, payload: Any, sig: str, target: str = "targets") -> bool:
    """Whether the input still escapes with signature ``sig`` (in this process)."""
    targets = _target(target)

    with tempfile.TemporaryDirectory() as d:
        try:
            targets.run(kind, payload, d)
        except Exception as exc:  # noqa: BLE001
            return targets.signature(exc) == sig
    return False


def minimize(kind: str, payload: Any, sig: str, budget: int = 3000, target: str = "targets") -> Any:
    """Greedy reduction of a screen or canvas document or op reply (keys, list items, hoisting) that keeps the escape."""
    if kind not in ("screen", "canvas", "ops"):
        return payload
    from tests.fuzz import mutate

    tries = 0
    # halving first: a real canvas holds lists of thousands of records, one deletion per try is too slow
    for path in sorted(mutate.paths(payload, limit=5000), key=len):
        while tries < budget and mutate._valid(payload, path):
            value = mutate.get(payload, path)
            if not isinstance(value, list) or len(value) < 2 or not path:
                break
            half = len(value) // 2
            for part in (value[:half], value[half:]):
                cand = mutate._rebuild(payload, path, lambda c, v=part: mutate._set(c, path[-1], v))
                tries += 1
                if failing(kind, cand, sig, target):
                    payload = cand
                    break
            else:
                break
    changed = True
    while changed and tries < budget:
        changed = False
        for path in sorted(mutate.paths(payload), key=len):
            if not path or not mutate._valid(payload, path):
                continue
            parent_path, key = path[:-1], path[-1]
            candidates = []
            if isinstance(mutate.get(payload, parent_path), dict):
                candidates.append(mutate._rebuild(payload, path, lambda c: mutate._delete(c, key)))
            elif isinstance(mutate.get(payload, parent_path), list):
                candidates.append(mutate._rebuild(payload, path, lambda c: mutate._delete(c, key)))
            value = mutate.get(payload, path)
            if isinstance(value, (dict, list)) and value and not mutate._is_marker(value):
                for child in (value.values() if isinstance(value, dict) else value):
                    candidates.append(mutate._rebuild(payload, path, lambda c, v=child: mutate._set(c, key, v)))
                    break
            for cand in candidates:
                tries += 1
                if failing(kind, cand, sig, target):
                    payload, changed = cand, True
                    break
            if changed or tries >= budget:
                break
    return payload


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.screens", description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--keep", type=Path)
    ap.add_argument("--minimize", action="store_true")
    ap.add_argument("--memory-mb", type=int, default=4096)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--target", default="targets", choices=TARGETS,
                    help="targets: screens and index files (default); canvas_targets: canvases and op replies")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--numbers", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        with open(args.numbers) as f:
            worker(args.seed, [int(x) for x in f.read().split()], args.memory_mb, args.target)
        return 0
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: _STOP.append(True))
    figures = run(args.iterations, args.seed, max(1, args.jobs), args.timeout, progress=not args.json,
                  memory_mb=args.memory_mb, target=args.target)
    if _STOP:
        print(f"stopped early after {figures.inputs} of {args.iterations} inputs", file=sys.stderr)
    if args.keep:
        targets = _target(args.target)
        findings = [(sig.replace("@", "-").replace(":", "-").replace(".py", ""), sig, nums[0])
                    for sig, nums in figures.escapes.items()]
        findings += [(f"crash-{i}", None, i) for i, _ in figures.crashes]
        findings += [(f"hang-{i}", None, i) for i in figures.hangs]
        for stem, sig, number in findings:
            kind, payload = targets.make_input(args.seed, number)
            if hasattr(targets, "self_contained"):  # a kept case carries what it runs on
                payload = targets.self_contained(kind, payload)
            if sig and args.minimize:
                payload = minimize(kind, payload, sig, target=args.target)
            path = targets.save_case(args.keep, f"{stem}-s{args.seed}-{number}", kind, payload)
            print(f"kept {path}", file=sys.stderr)
    d = figures.as_dict()
    if args.json:
        print(json.dumps(d))
    else:
        print(f"{d['inputs']} inputs {d['by_kind']} in {d['seconds']} s: {d['escapes']} escapes "
              f"({len(d['distinct_escapes'])} distinct), {d['crashes']} crashes, {d['hangs']} hangs")
        for sig in d["distinct_escapes"]:
            print(f"  {sig}: {len(figures.escapes[sig])} inputs, first {figures.escapes[sig][0]}")
    return 1 if d["escapes"] or d["crashes"] or d["hangs"] else 0


if __name__ == "__main__":
    sys.exit(main())
