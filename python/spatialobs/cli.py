"""The ``spatialobs`` command (also ``python -m spatialobs``).

One subcommand per job; run ``spatialobs <command> --help`` for the options.
Errors print one line and exit with status 2 (``--debug`` shows the traceback);
a bad input file never crashes the command.

Output paths (``--out``, ``--index``, ``--traces``, ``--curve``, ``--store``) behave
the same in every command: the folder they name is created, if missing, before
any work is done; a path that cannot be written there (a folder in the way, a file
where a folder should be, no permission) is an error before the work. Files are
written whole or not at all, and an error names the file asked for.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

from spatialobs._errors import SpatialObsError
from spatialobs import __version__

__all__ = ["main"]


class CommandError(SpatialObsError):
    """A problem with the command line itself (missing file, bad option value)."""


def _one_line(exc: BaseException) -> str:
    """An error message on one line of bounded length (the text of a file may be echoed in it)."""
    s = " ".join(str(exc).split()) or type(exc).__name__
    s = s.encode("utf-8", "backslashreplace").decode("utf-8")
    return s if len(s) <= 400 else s[:397] + "..."


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

DEMO_REPLY = """I'll set up a review board next to the report and file the supported finding.

```canvas_ops
{"ops": [
  {"op": "create_artboard", "id": "review", "name": "Review", "x": 1900, "y": 0, "w": 640, "h": 420},
  {"op": "parse_html", "target": "review",
   "html": "<section style='padding: 24px; background-color: #f6f8fa'><h2>Open questions</h2><ul><li>Who owns follow-ups?</li><li>Where do decisions live?</li></ul></section>"},
  {"op": "place", "ids": ["shape:finding1"], "into": "shape:claim"}
]}
```
"""


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def _find_data(arg: Optional[str]) -> Optional[Path]:
    if arg:
        p = Path(arg)
        if not p.is_dir():
            raise CommandError(f"--data: no such folder: {arg}")
        return p
    for cand in (Path("../shared/data"), Path("shared/data")):
        if (cand / "canvases").is_dir() or (cand / "screens").is_dir():
            return cand
    return None


def _demo(args: argparse.Namespace) -> int:
    import numpy as np

    from spatialobs import geometry as g
    from spatialobs.canvas import Executor, observe, parse_ops
    from spatialobs.canvas.scenarios.agent import run_handoff
    from spatialobs.canvas.scenarios.handoff import remote_team_handoff
    from spatialobs.render import line_chart_svg, write_picture
    from spatialobs.screen import StateIndex
    from spatialobs.screen.synth import make_corpus
    from spatialobs.synth import canvas_boxes

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    print(f"spatialobs demo: pictures go to {out}/")

    _section(f"1. Geometry core on a generated canvas of {args.n:,} boxes")
    d = canvas_boxes(args.n, seed=args.seed)
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

    _section("2. Canvas observation: the Remote Team Handoff workspace")
    s = remote_team_handoff(8)
    obs, t_obs = _timed(lambda: observe(s.canvas, s.viewport, origin=s.origin))
    by_label: dict = {}
    for o in obs.objects:
        by_label[o["visibility"]] = by_label.get(o["visibility"], 0) + 1
    native = sum(1 for r in obs.relations if r["native"])
    print(f"observe: {len(obs.objects)} objects, {len(obs.relations)} relations ({native} native), "
          f"{len(obs.to_json().encode()):,} bytes of JSON, {t_obs:.1f} ms")
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(by_label.items())))
    print(f"  prompt: {s.prompt}")
    for r in obs.relations:
        if r["type"] in ("bound", "touches") and "finding" in r["to"]:
            print(f"  {r['type']:<7} {r['from']} -> {r['to']}  native={r['native']}")
    write_picture(s.canvas, obs, out / "handoff-observation.svg", title="Remote Team Handoff: the observation")
    print(f"  picture: {out / 'handoff-observation.svg'}")
    ok_obs = sum(run_handoff(k).outcome.full_success for k in range(10))
    ok_base = sum(run_handoff(k, "baseline").outcome.correct_target for k in range(10))
    print(f"reference agent, all ten configurations: full success {ok_obs}/10 reading the observation, "
          f"correct target {ok_base}/10 reading the baseline context")

    _section("3. Agent editing: a model reply with canvas_ops blocks, through the write path")
    canvas = s.canvas.copy()
    ops, errors = parse_ops(DEMO_REPLY)
    report = Executor(canvas, origin=s.origin).apply(ops)
    print(f"ops: {len(ops)} parsed, {len(report.applied)} applied, {len(report.errors)} failed; "
          f"created {len(report.created)} nodes: {', '.join(report.created[:6])}")
    for e in list(errors) + list(report.errors):
        print(f"  problem: {e}")
    after = observe(canvas, s.viewport, origin=s.origin)
    claim = [r for r in after.relations if r["type"] == "parent" and r["from"] == "shape:finding1"]
    print(f"  finding1 now: parent {claim[0]['to'] if claim else canvas.nodes['shape:finding1'].parent}, "
          f"bounds {[round(v) for v in canvas.page_bounds('shape:finding1')]}")
    write_picture(canvas, observe(canvas, (-20, -20, 2600, 940)), out / "handoff-after-ops.svg",
                  title="After the agent's ops")
    print(f"  picture: {out / 'handoff-after-ops.svg'}")

    _section("4. Screen identity: merging near-duplicate screens into states")
    corpus = make_corpus(seed=args.seed, apps=4, templates_per_app=25, variants=5)
    index = StateIndex(mask_volatile=True)
    _, t_dd = _timed(lambda: [index.add(scr) for scr in corpus.screens])
    print(f"{len(corpus.screens)} generated screens of {len(set(corpus.labels))} true states -> "
          f"{len(index)} unique observations, {index.num_states} states ({t_dd / len(corpus.screens):.2f} ms per screen)")

    _section("5. Exploration: PUCT vs Greedy on a simulated Notepad")
    curves = {}
    for name in ("puct", "greedy"):
        eps, curves["PUCT" if name == "puct" else "Greedy"] = _episodes("notepad", args.seed, name, "heuristic", 10, 50)
        auc = np.mean([e.metrics["state_auc"] for e in eps])
        states = np.mean([e.metrics["new_states"] for e in eps])
        print(f"  {name:<6}  new states {states:.2f}  state AUC {auc:.1f}  (mean of {len(eps)} starts x 50 actions)")
    (out / "exploration-curve.svg").write_text(
        line_chart_svg(curves, title="Notepad: new states discovered", ylabel="new states"), encoding="utf-8")
    print(f"  picture: {out / 'exploration-curve.svg'}")

    data = _find_data(args.data)
    if data is not None:
        _section(f"6. Real files from {data}")
        from spatialobs.canvas import load
        from spatialobs.screen import load_screen

        for f in sorted((data / "canvases").glob("*")) if (data / "canvases").is_dir() else []:
            try:
                c, t_load = _timed(lambda: load(f))
                o, t_o = _timed(lambda: observe(c))
            except (SpatialObsError, ValueError, OSError) as exc:
                print(f"  {f.name}: skipped ({exc})")
                continue
            print(f"  {f.name[:58]:<58} {len(c.nodes):>5} nodes  load {t_load:6.1f} ms  observe {t_o:5.1f} ms  "
                  f"{len(o.objects):>3} obj {len(o.relations):>3} rel {len(o.to_json().encode()) / 1000:5.1f} kB")
        screens = sorted((data / "screens").glob("*.json")) if (data / "screens").is_dir() else []
        if screens:
            ix = StateIndex()
            for f in screens:
                ix.add(load_screen(f))
            print(f"  {len(screens)} real screens (Rico, DroidBot) -> {ix.num_states} states")
        first = sorted((data / "canvases").glob("*.tldr"))[:1] if (data / "canvases").is_dir() else []
        for f in first:
            c = load(f)
            write_picture(c, observe(c), out / "real-canvas.svg", title=f.name)
            print(f"  picture: {out / 'real-canvas.svg'}")
    else:
        print("\n(no real data folder found; pass --data DIR with canvases/ and screens/ to include real files)")
    print(f"\ndone in {time.perf_counter() - started:.1f} s; pictures in {out}/")
    return 0


# ---- canvas commands ----------------------------------------------------------------


def _floats(text: str, n: int, name: str) -> Tuple[float, ...]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise CommandError(f"{name} must be {n} comma-separated numbers, got {text!r}") from None
    if len(values) != n:
        raise CommandError(f"{name} must be {n} comma-separated numbers, got {text!r}")
    return values


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _input_file(path: str, what: str = "file") -> Path:
    """``path`` as an existing regular file, else a one-line CommandError saying what is wrong."""
    p = Path(path)
    if p.is_dir():
        raise CommandError(f"{path} is a folder, not a {what}")
    if not p.exists():
        raise CommandError(f"no such {what}: {path}")
    if not p.is_file():
        raise CommandError(f"{path} is not a regular file")
    return p


#: Options that name a file (or, for demo's --out, a folder) the command writes.
_OUTPUTS = ("out", "index", "traces", "curve", "store", "keep", "report", "dataset")


def _prepare_outputs(args: argparse.Namespace) -> None:
    """Create the folders of every output path before the work, or fail in one line."""
    for name in _OUTPUTS:
        value = getattr(args, name, None)
        if not isinstance(value, str) or not value or value == "-":
            continue
        p = Path(value)
        is_folder = name == "dataset" or name == "out" and (args.command == "demo" or args.command == "export"
                                                              and args.to != "graphml")
        folder = p if is_folder else p.parent
        if not is_folder and p.is_dir():
            raise CommandError(f"--{name} {value} is a folder, not a file")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise CommandError(f"--{name} {value}: {folder} is a file, not a folder") from None
        except OSError as exc:
            raise CommandError(f"--{name} {value}: cannot create the folder {folder}: {exc.strerror or exc}") from None
        if not os.access(folder, os.W_OK):
            raise CommandError(f"--{name} {value}: the folder {folder} is not writable")


def _write_text(out: Path, text: str) -> None:
    """Write ``text`` to ``out`` whole or not at all; an error names ``out``, never the temporary file."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8", errors="backslashreplace")
        tmp.replace(out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise CommandError(f"cannot write {out}: {exc.strerror or exc}") from None


def _load_canvas(path: str) -> Any:
    from spatialobs.canvas import load

    return load(_input_file(path, "canvas file"))


def _origin(args: argparse.Namespace) -> Tuple[float, ...]:
    return _floats(args.origin, 2, "--origin") if args.origin else (0.0, 0.0)


def _view(args: argparse.Namespace) -> dict:
    """The view options that observe and baseline_context share, parsed from the command line."""
    return {
        "viewport": _floats(args.viewport, 4, "--viewport") if args.viewport else None,
        "page": args.page,
        "selected": [s for s in args.select.split(",") if s] if args.select is not None else None,
        "origin": _origin(args),
    }


def _observation(args: argparse.Namespace, canvas: Any) -> Any:
    from spatialobs.canvas import observe

    return observe(
        canvas,
        **_view(args),
        max_objects=args.max_objects,
        max_relations=args.max_relations,
        include_bounds=args.all_bounds,
        # options of observe only (render observes with the defaults)
        max_bytes=getattr(args, "max_bytes", None),
        max_tokens=getattr(args, "max_tokens", None),
        budget_form="compact" if getattr(args, "format", "json") == "compact" else "json",
        occlusion=getattr(args, "occlusion", "painted"),
        explain=getattr(args, "explain", False),
    )


def _text_table(obs: Any) -> str:
    d = obs.to_dict()
    v = d["viewport"]
    lines = [f"viewport (action coordinates): x={v['x']} y={v['y']} w={v['w']} h={v['h']}",
             f"{len(d['objects'])} objects, {len(d['relations'])} relations; omitted: "
             f"{d['omitted']['objects']} objects, {d['omitted']['relations']} relations", ""]
    rows = [("id", "type", "visibility", "layer", "bounds", "flags", "text")]
    for o in d["objects"]:
        b = o.get("actionBounds")
        rows.append((o["id"], o["type"], o["visibility"], str(o["layer"]),
                     f"{b['x']},{b['y']} {b['w']}x{b['h']}" if b else "", ",".join(o.get("flags", ())),
                     (o.get("text") or o.get("name") or "")[:40]))
    widths = [min(max(len(r[i]) for r in rows), 40) for i in range(len(rows[0]))]
    for r in rows:
        lines.append("  ".join(c[:w].ljust(w) for c, w in zip(r, widths)).rstrip())
    lines.append("")
    native = [r for r in d["relations"] if r["native"]]
    inferred = [r for r in d["relations"] if not r["native"]]
    for title, rels in (("native relations", native), ("inferred relations", inferred)):
        lines.append(f"{title} ({len(rels)}):")
        for r in rels:
            extra = r.get("terminal") or r.get("kind") or ""
            lines.append(f"  {r['type']:<9} {r['from']} -> {r['to']}" + (f"  ({extra})" if extra else ""))
    return "\n".join(lines)


def _observe(args: argparse.Namespace) -> int:
    canvas = _load_canvas(args.file)
    if args.baseline:
        from spatialobs.canvas import baseline_context
        from spatialobs.canvas.baseline import context_json

        ctx = baseline_context(canvas, **_view(args))
        print(context_json(ctx) if args.format == "json" else json.dumps(ctx, indent=2, ensure_ascii=False))
        return 0
    obs = _observation(args, canvas)
    print(_text_table(obs) if args.format == "text" else obs.to_json(compact=args.format == "compact"))
    return 0


def _render(args: argparse.Namespace) -> int:
    from spatialobs.render import write_picture

    canvas = _load_canvas(args.file)
    obs = _observation(args, canvas)
    out = write_picture(canvas, obs, args.out, width=args.width, title=Path(args.file).name)
    print(f"wrote {out} ({len(obs.objects)} objects, {len(obs.relations)} relations)")
    return 0


def _apply(args: argparse.Namespace) -> int:
    from spatialobs.canvas import Executor, parse_ops

    canvas = _load_canvas(args.file)
    reply = sys.stdin.read() if args.reply == "-" else _input_file(args.reply, "reply file").read_text(encoding="utf-8")
    ops, parse_errors = parse_ops(reply)
    out = Path(args.out)
    fmt = canvas.source_format or "native"
    suffix = out.suffix.lower()
    if suffix == ".json":  # the input's own format, unless --native
        fmt = "native" if args.native else fmt
    elif suffix in (".tldr", ".excalidraw"):
        fmt = suffix[1:].replace("tldr", "tldraw")
    else:
        raise CommandError(f"--out must end in .tldr, .excalidraw or .json (the input's format), got {out.name!r}")
    writer = {"tldraw": canvas.to_tldraw, "excalidraw": canvas.to_excalidraw}.get(fmt)
    report = Executor(canvas, origin=_origin(args)).apply(ops)
    for e in parse_errors:
        print(f"parse error: {e}", file=sys.stderr)
    for err in report.errors:
        print(f"op failed: {err}", file=sys.stderr)
    print(f"ops: {len(ops)} parsed, {len(report.applied)} applied, {len(report.errors)} failed; "
          f"{len(parse_errors)} block(s) could not be parsed")
    if report.created:
        print("created: " + ", ".join(report.created))
    doc = writer() if writer is not None else None
    if doc is not None:
        from spatialobs.canvas.limits import utf8_json

        text = utf8_json(doc)
    else:
        text = canvas.to_json()
    _write_text(out, text)
    print(f"wrote {out}")
    return 0 if report.ok and not parse_errors else 1


def _handoff(args: argparse.Namespace) -> int:
    from spatialobs.canvas.scenarios.agent import run_handoff

    print("Remote Team Handoff, reference agent (correct target / correct placement / full success)")
    print(f"{'config':>6}  {'family':<10}  {'observation':<17}  baseline")
    totals = {"observation": [0, 0, 0], "baseline": [0, 0, 0]}
    for k in range(10):
        cells = []
        family = ""
        for ctx in ("observation", "baseline"):
            run = run_handoff(k, ctx)
            family = run.family
            o = run.outcome
            flags = (o.correct_target, o.correct_placement, o.full_success)
            for i, f in enumerate(flags):
                totals[ctx][i] += bool(f)
            cells.append(" / ".join("yes" if f else "no" for f in flags))
        print(f"{k:>6}  {family:<10}  {cells[0]:<17}  {cells[1]}")
    for ctx, t in totals.items():
        print(f"{ctx}: correct target {t[0]}/10, correct placement {t[1]}/10, full success {t[2]}/10")
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


def _ray_address(args: argparse.Namespace) -> Optional[str]:
    """``--ray [ADDRESS]``: the cluster address, or None for a local runtime. A value that is not an
    address (``auto``, ``ray://…``, ``host:port``) is the first PATH, which argparse took for one."""
    value = args.ray or None
    if value is not None and not (value == "auto" or "://" in value or (":" in value and not Path(value).exists())):
        args.paths = [value] + list(getattr(args, "paths", []))
        value = None
    return value


def _corpus(args: argparse.Namespace) -> int:
    from spatialobs.screen.corpus import DEFAULT_MINUTES, check_repeats, run_corpus, write_report

    raw: object = args.repeats
    try:
        raw = int(args.repeats)
    except ValueError:
        pass  # check_repeats names the value
    repeats = check_repeats(raw)
    if not args.report:
        apps = [a for a in args.apps.split(",") if a]
        priors = [p for p in args.priors.split(",") if p]
        minutes = args.minutes if (args.minutes is not None or args.steps is not None) else DEFAULT_MINUTES
        run_corpus(args.folder, apps, minutes=minutes, steps=args.steps, workers=args.workers,
                   episode_steps=args.episode_steps, priors=priors, seed=args.seed, ray=args.ray,
                   progress=sys.stderr, repeats=repeats)
    doc = args.doc or ("docs/results/corpus.md" if args.report else "")
    if doc:
        command = "spatialobs corpus FOLDER --report" + (f" --doc {doc}" if doc != "docs/results/corpus.md" else "")
        write_report(args.folder, doc, command=command)
        print(f"wrote {doc}")
    return 0


def _dedup_ray(args: argparse.Namespace) -> int:
    from spatialobs.distributed.runtime import dedup_ray

    address = _ray_address(args)
    if not args.paths:
        raise CommandError("dedup needs at least one PATH")
    if args.index:
        raise CommandError("--index is not available with --ray (the shards keep their own logs)")
    res = dedup_ray(list(_screen_sources(args.paths)), shards=args.shards, grid=args.grid, tau=args.tau,
                    mask_volatile=args.mask_volatile, address=address)
    for label, exc in res.failed:
        print(f"spatialobs: skipped {label}: {exc}", file=sys.stderr)
    print(f"screens: {len(res.states):,} read, {len(res.failed):,} skipped")
    print(f"unique observations: {res.observations:,} new ({res.observations:,} in the index)")
    print(f"states: {res.num_states:,} new ({res.num_states:,} in the index)")
    print(f"merges: {res.exact:,} exact duplicates, {res.merged:,} near-duplicates merged into a state")
    print(f"ray: {args.shards} index shard(s), {len(res.states) / max(res.seconds, 1e-9):,.0f} screens/s")
    return 1 if res.failed else 0


def _dedup(args: argparse.Namespace) -> int:
    from spatialobs.screen import StateIndex, load_screen

    if args.ray is not None:
        return _dedup_ray(args)
    if not args.paths:
        raise CommandError("dedup needs at least one PATH")
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
        except (SpatialObsError, ValueError, OSError, RecursionError) as exc:
            failed.append(f"{label}: {_one_line(exc)}")
            if screens:  # before the first screen read, held back: if none can be read, one error says so
                print(f"spatialobs: skipped {failed[-1]}", file=sys.stderr)
            continue
        if not screens:
            for line in failed:
                print(f"spatialobs: skipped {line}", file=sys.stderr)
        screens += 1
        exact += bool(match.exact)
        new += bool(match.new_state)
        merged += (not match.new_state) and not match.exact
        progress.step()
    progress.done()
    if failed and not screens:  # nothing usable: a bad input, said once
        raise CommandError(f"no screen could be read ({len(failed):,} skipped)" if len(failed) > 1
                           else f"cannot read the screen {failed[0]}")
    print(f"screens: {screens:,} read, {len(failed):,} skipped")
    print(f"unique observations: {len(index) - before_obs:,} new ({len(index):,} in the index)")
    print(f"states: {index.num_states - before_states:,} new ({index.num_states:,} in the index)")
    print(f"merges: {exact:,} exact duplicates, {merged:,} near-duplicates merged into a state")
    if index_path is not None:
        index.save(index_path)
        print(f"saved: {index_path}")
    return 1 if failed else 0


# ---- exploration -----------------------------------------------------------------------


def _episodes(app: Any, seed: int, selector: str, prior: Any, starts: int, steps: int, graph: Any = None,
              driver: Any = None, progress: Optional["_Progress"] = None,
              screenshots: Optional[bool] = None) -> Tuple[List[Any], List[float]]:
    """Episodes from the app's first ``starts`` replayable starts, and the mean discovery curve
    (cumulative new states per step; an episode that ended early keeps its last value).

    Simulated apps get a fresh simulator per start; a real application's ``driver`` is reused
    (each start relaunches it cleanly). ``graph``: one graph shared by every episode (``--store``)."""
    import numpy as np

    from spatialobs.screen import explore
    from spatialobs.screen.drivers import make_driver

    eps, curve = [], np.zeros(steps)
    d = driver if driver is not None else make_driver(app, seed=seed)
    for start in d.starts(starts):
        env = make_driver(app, seed=seed) if driver is None else d
        ep = explore(env, steps=steps, selector=selector, prior=prior, start=start, episode=start.index, graph=graph,
                     on_step=(lambda st: progress.step()) if progress is not None else None, screenshots=screenshots)
        eps.append(ep)
        found = np.cumsum([s.state_novel for s in ep.steps])
        curve[: len(found)] += found
        curve[len(found):] += found[-1] if len(found) else 0
    return eps, (curve / len(eps)).tolist()


def _app_of(args: argparse.Namespace) -> Any:
    """The application of ``--app`` and ``--app-spec``: a simulator's name or an AppSpec.

    ``--app-spec FILE.toml`` alone is the spec; with ``--app cmd:COMMAND`` or ``--app
    web:URL`` the file gives every other field (a file that names its own command or
    URL too is an error)."""
    from spatialobs.screen.drivers import DRIVER_NAMES, SpecError, load_spec, resolve_app
    from spatialobs.screen.drivers.spec import AppSpec, _read_toml

    if args.app is None and args.app_spec is None:
        raise CommandError("explore needs --app APP or --app-spec FILE.toml")
    if args.app_spec is None:
        if args.app not in DRIVER_NAMES and not args.app.startswith(("cmd:", "web:")):
            raise CommandError(f"--app must be one of {', '.join(DRIVER_NAMES)}, cmd:COMMAND or web:URL, "
                               f"got {args.app!r}")
        return resolve_app(args.app)
    path = Path(args.app_spec)
    if args.app is None:
        return load_spec(path)
    if not args.app.startswith(("cmd:", "web:")):
        raise CommandError(f"with --app-spec, --app must be cmd:COMMAND or web:URL (or left out), got {args.app!r}")
    if not path.is_file():
        raise SpecError(f"spec {path.name}: no such file")
    data = _read_toml(path, path.name)
    key = "command" if args.app.startswith("cmd:") else "url"
    if key in data:
        raise SpecError(f"spec {path.name}: names its own {key}; leave out --app or the {key}")
    data[key] = args.app[4:]
    if key == "url":
        data.setdefault("driver", "web")
    return AppSpec.from_dict(data, source=path.name, base=str(path.resolve().parent))


def _explore(args: argparse.Namespace) -> int:
    import numpy as np

    from spatialobs.screen.select import SELECTORS, resolve_prior

    if args.steps < 1 or args.starts < 1:
        raise CommandError("--steps and --starts must be at least 1")
    prior: Any = args.prior
    if args.prior.startswith("policy:"):
        # The screen-conditioned policy (train-policy) as the proposal prior; it lives above the exploration
        # layer, so the command loads it and hands explore the callable.
        from spatialobs.screen.training.policy import load_policy

        if args.ray is not None:
            raise CommandError("--prior policy:FILE is not available with --ray")
        prior = load_policy(_input_file(args.prior[len("policy:"):], "policy file"))
    else:
        resolve_prior(args.prior)
    if args.ray is not None:
        return _explore_ray(args)
    selectors = [args.selector] if not args.compare else list(SELECTORS)
    curves: dict = {}
    all_eps: List[Any] = []
    from spatialobs.screen.drivers import make_driver

    app = _app_of(args)
    real = not isinstance(app, str)
    label = app.name if real else app
    print(f"exploring {label} (seed {args.seed}): {args.starts} start(s) x {args.steps} actions, prior {args.prior}")
    keys = ("new_states", "new_edges", "state_auc", "edge_auc", "revisit_rate", "loop_rate", "high_u_occupancy", "net_du")
    driver = make_driver(app, seed=args.seed) if real else None
    graph = None
    created = args.store is not None and not Path(args.store).exists()
    shots = False if args.no_screenshots else None
    try:
        if args.store:
            from spatialobs.screen import ScreenGraph

            # The graph is of the application the driver names (a web app's name is its spec's, not the URL typed).
            graph = ScreenGraph(args.store, app=driver.app if driver is not None else app)
        print(f"{'selector':<10}  " + "  ".join(f"{k:>{max(12, len(k))}}" for k in keys))
        for name in selectors:
            title = {"puct": "PUCT", "puct-paper": "PUCT (paper)"}.get(name, name.capitalize())
            bar = _Progress("steps", args.starts * args.steps, every=1 if real else 500)
            eps, curves[title] = _episodes(app, args.seed, name, prior, args.starts, args.steps, graph,
                                           driver, bar, shots)
            bar.done()
            all_eps += eps
            mean = np.mean([[float(ep.metrics[k]) for k in keys] for ep in eps], axis=0)
            print(f"{name:<10}  " + "  ".join(f"{v:>{max(12, len(k))}.3f}" for k, v in zip(keys, mean)))
            if real:
                wall = sum(ep.timing["wall"] for ep in eps)
                ours = sum(ep.timing["ours"] for ep in eps)
                n = sum(len(ep.steps) for ep in eps)
                print(f"{'':<10}  {n / max(wall, 1e-9):.2f} steps/s, our share {100 * ours / max(wall, 1e-9):.1f}%, "
                      f"{sum(ep.faults for ep in eps)} failed transition(s)")
        if driver is not None:
            f = {k: v for k, v in driver.faults.items() if v}
            print(f"launches {driver.launches}, faults {f or 'none'}")
        if graph is not None:
            pics = sum(1 for _ in graph.store.screenshots())
            print(f"store {args.store}: {graph.num_states} states, {graph.num_edges} edges, {pics} screenshot(s)")
    except BaseException:
        if graph is not None and created and graph.num_states == 0:
            # Nothing was explored: leave no empty store behind.
            graph.close()
            graph = None
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(args.store + suffix).unlink(missing_ok=True)
        raise
    finally:
        if driver is not None:
            driver.close()
        if graph is not None:
            graph.close()
    if args.traces:
        from spatialobs.screen.prior import save_traces

        n = save_traces(all_eps, args.traces)
        print(f"wrote {n} steps to {args.traces}")
    if args.curve:
        from spatialobs.render import line_chart_svg

        out = Path(args.curve)
        if out.suffix.lower() != ".svg":
            raise CommandError(f"--curve must end in .svg, got {out.name!r}")
        out.write_text(line_chart_svg(curves, title=f"{label}: new states discovered (mean over starts)",
                                      ylabel="new states"), encoding="utf-8")
        print(f"wrote {out}")
    return 0


def _explore_ray(args: argparse.Namespace) -> int:
    from functools import partial

    import numpy as np

    from spatialobs.distributed.runtime import explore_ray

    if args.compare or args.traces or args.curve:
        raise CommandError("--compare, --traces and --curve are not available with --ray")
    if args.workers < 1 or args.shards < 1:
        raise CommandError("--workers and --shards must be at least 1")
    from spatialobs.screen.drivers import make_driver

    spec = _app_of(args)
    # Each worker builds its own driver (a simulator or a real application) from this.
    make_env = partial(make_driver, spec, seed=args.seed)
    probe = make_env()  # nothing is launched before reset(): only its name, which the graph records
    app = probe.app
    probe.close()
    print(f"exploring {app} (seed {args.seed}) on Ray: {args.starts} start(s) x {args.steps} actions, "
          f"prior {args.prior}, {args.workers} worker(s), {args.shards} index shard(s)"
          + (", spread over the nodes" if args.spread else ""))
    run = explore_ray(app, starts=args.starts, steps=args.steps, workers=args.workers, shards=args.shards,
                      seed=args.seed, selector=args.selector, prior=args.prior, store=args.store,
                      address=args.ray or None, make_env=make_env, folder=args.folder,
                      placement="spread" if args.spread else None)
    keys = ("new_states", "new_edges", "state_auc", "edge_auc", "revisit_rate", "loop_rate", "high_u_occupancy", "net_du")
    print(f"{'selector':<10}  " + "  ".join(f"{k:>{max(12, len(k))}}" for k in keys))
    mean = np.mean([[float(ep.metrics[k]) for k in keys] for ep in run.episodes], axis=0)
    print(f"{args.selector:<10}  " + "  ".join(f"{v:>{max(12, len(k))}.3f}" for k, v in zip(keys, mean)))
    g = run.graph
    print(f"graph: {g['states']} states, {g['edges']} edges, {g['transitions']} transitions, {g['captures']} captures"
          + (f"; store {args.store}" if args.store else ""))
    for name, c in run.workers.items():
        print(f"  {name}: {int(c['steps'])} steps, {c['steps_per_second']:,.1f} steps/s, "
              f"{c['waits'] / max(c['steps'], 1):.2f} waits and {1000 * c['wait_seconds'] / max(c['steps'], 1):.2f} ms "
              "waiting per step")
    print(f"nodes: {len(set(run.nodes.values()))} node(s) held the graph, {args.shards} shard(s) and "
          f"{args.workers} worker(s)")
    print(f"total: {run.steps} steps in {run.seconds:.2f} s ({run.steps_per_second:,.1f} steps/s)"
          + (f"; interrupted episodes {run.interrupted}" if run.interrupted else ""))
    return 0


def _export(args: argparse.Namespace) -> int:
    from spatialobs.screen.export import describe, export_store, store_tables

    src = Path(args.store)
    if not src.is_file():
        raise CommandError(f"no graph store at {args.store}")
    if Path(args.out).resolve() == src.resolve():
        raise CommandError("OUT must not be the store itself")
    from spatialobs.screen.store import SQLiteStore

    with SQLiteStore(src, create=False) as st:
        tables = store_tables(st)
        written = export_store(st, args.to, args.out, tables=tables)
    print(f"{args.store}: {describe(tables)}")
    print(f"wrote {args.out} ({len(written)} file(s))")
    return 0


def _train_prior(args: argparse.Namespace) -> int:
    from spatialobs.screen.prior import load_traces, train_prior

    records: List[Any] = []
    for path in args.traces:
        records += load_traces(_input_file(path, "traces file"))
    if not records:
        raise CommandError("the traces hold no steps")
    model = train_prior(records, l2=args.l2, target=args.target)
    model.save(args.out)
    meta = model.meta or {}
    print(f"trained on {meta.get('steps', 0):,} steps ({', '.join(meta.get('apps', []))}; "
          f"{meta.get('positive', 0):,} positive for '{args.target}'), {len(model.weights)} features")
    print(f"wrote {args.out}; use it with --prior learned:{args.out}")
    return 0


def _train_policy(args: argparse.Namespace) -> int:
    from spatialobs.screen.training.data import build_dataset
    from spatialobs.screen.training.metrics import inference_latency, report, run_study

    stores = [_input_file(p, "graph store") for p in args.stores]
    ds = build_dataset(stores, segment=args.segment, max_waste=args.max_waste)
    s = ds.stats
    print(f"{s['windows']:,} windows ({s['train_windows']:,} train, {s['test_windows']:,} test), {s['tasks']:,} tasks, "
          f"{s['screens']:,} screens, {s['pairs']:,} counterfactual pairs from {len(stores)} store(s)")
    if s["train_windows"] == 0 or s["test_windows"] == 0:
        raise CommandError("the stores give no windows for one of the splits; explore longer")
    if args.dataset:
        written = ds.export(args.dataset, args.dataset_format)
        print(f"wrote {args.dataset} ({len(written)} tables)")
    seeds = list(range(args.seeds))
    res = run_study(ds, seeds, epochs=args.epochs, hidden=args.hidden)
    for row in ("with", "without"):
        ms = [r["step_match"] for r in res.rows[row]]
        print(f"{row} pairs: step match {sum(ms) / len(ms):.2f}% over {len(ms)} seed(s)")
    if args.out:
        res.models["with"].save(args.out)
        print(f"wrote {args.out} (with pairs, seed 0)")
    if args.report:
        lat = inference_latency(res.models["with"], ds)
        cmd = ("spatialobs train-policy " + " ".join(Path(p).name for p in args.stores)
               + f" --seeds {args.seeds} --report {args.report}")
        if args.real_priors:
            cmd += (f" --real-priors {args.real_priors} --real-starts {args.real_starts} --real-steps "
                    f"{args.real_steps} --real-seed {args.real_seed}")
        text = report(res, lat, command=cmd, sources=sorted({w.app for w in ds.windows}))
        if args.real_priors:
            from spatialobs.screen.training.priors import real_prior_study, render_real_priors

            print(f"Table 11 on {args.real_priors}: {args.real_starts} held-out starts x {args.real_steps} actions "
                  f"per prior", flush=True)
            rp = real_prior_study(args.real_priors, stores, res.models["with"], starts=args.real_starts,
                                  steps=args.real_steps, seed=args.real_seed, log=sys.stdout)
            text += "\n" + render_real_priors(rp, args.real_priors)
        _write_text(Path(args.report), text)
        print(f"wrote {args.report}")
    return 0


def _studies(args: argparse.Namespace) -> int:
    if args.real:
        from spatialobs.screen.studies import OPTIONAL_REAL_APPS, REAL_BUDGET, write_real_report

        if args.clipboard:
            from spatialobs.screen.studies import write_real_clipboard

            out = args.out if args.out != "docs/results/exploration.md" else "docs/results/real-apps.md"
            command = f"spatialobs studies --real --clipboard --trials {args.trials}" + (
                f" --seed {args.seed}" if args.seed else "") + (f" --out {out}" if out != "docs/results/real-apps.md" else "")
            t0 = time.perf_counter()
            write_real_clipboard(out, args.trials, args.seed, log=sys.stderr, command=command)
            print(f"wrote {out} ({time.perf_counter() - t0:.0f} s)")
            return 0
        if args.ablation and args.sensitivity:
            raise CommandError("--ablation and --sensitivity are two studies; run one at a time")
        if args.sensitivity or args.ablation:
            from spatialobs.screen.studies import write_real_ablation, write_real_sensitivity

            study = "sensitivity" if args.sensitivity else "ablation"
            app = args.apps if args.apps != "mousepad,pcmanfm,localc" else "mousepad"
            if app not in REAL_BUDGET:
                raise CommandError(f"--{study} takes one application of {', '.join(REAL_BUDGET)} in --apps, "
                                   f"got {args.apps!r}")
            out = args.out if args.out != "docs/results/exploration.md" else "docs/results/real-apps.md"
            starts, steps = args.starts or 10, args.steps or 50
            command = f"spatialobs studies --real --{study} --apps {app} --starts {starts} --steps {steps}" + (
                f" --seed {args.seed}" if args.seed else "") + (f" --out {out}" if out != "docs/results/real-apps.md" else "")
            write = write_real_sensitivity if args.sensitivity else write_real_ablation
            res = write(out, app, starts, steps, args.seed, log=sys.stderr, command=command)
            print(f"wrote {out} ({res.get('seconds', 0.0):.0f} s)")
            return 0
        apps = [a for a in args.apps.split(",") if a]
        unknown = [a for a in apps if a not in REAL_BUDGET]
        if not apps or unknown:
            raise CommandError(f"--apps takes a comma-separated list of {', '.join(REAL_BUDGET)}, got {args.apps!r}")
        budget = dict(REAL_BUDGET)
        if args.starts or args.steps:
            budget = {a: (args.starts or s, args.steps or t) for a, (s, t) in budget.items()}
        # The web application has its own report, so that it can be run beside the desktop study.
        default = "real-apps-web.md" if all(a in OPTIONAL_REAL_APPS for a in apps) else "real-apps.md"
        out = args.out if args.out != "docs/results/exploration.md" else f"docs/results/{default}"
        command = f"spatialobs studies --real --apps {','.join(apps)}"
        if args.starts or args.steps:
            command += "".join(f" --{k} {v}" for k, v in (("starts", args.starts), ("steps", args.steps)) if v)
        if args.seed:
            command += f" --seed {args.seed}"
        if args.out != "docs/results/exploration.md":
            command += f" --out {args.out}"
        res = write_real_report(out, apps, budget, args.seed, log=sys.stderr, command=command)
        print(f"wrote {out} ({sum(r.get('seconds', 0.0) for r in res.values()):.0f} s)")
        return 0
    from spatialobs.screen.studies import write_report

    res = write_report(args.out, scale=args.scale, seed=args.seed)
    secs = sum(res.get("seconds", {}).values())
    print(f"wrote {args.out} (scale {args.scale}, {secs:.1f} s)")
    return 0


def _ocr_audit(args: argparse.Namespace) -> int:
    from spatialobs.screen.ocr import render_ocr_audit, score_captures, write_ocr_audit

    apps = [a for a in args.apps.split(",") if a]
    if not apps:
        raise CommandError("--apps names no application")
    if args.rescore:
        import pickle

        with open(args.rescore, "rb") as f:
            saved = pickle.load(f)
        res = score_captures(saved["runs"], starts=saved["starts"], steps=saved["steps"], seed=saved["seed"])
        _write_text(Path(args.out), render_ocr_audit(res))
    else:
        if args.starts < 1 or args.steps < 1 or not args.minutes > 0:
            raise CommandError("--starts and --steps must be >= 1 and --minutes > 0")
        res = write_ocr_audit(args.out, apps, args.starts, args.steps, args.seed, minutes=args.minutes,
                              keep=args.keep, log=sys.stderr)
    n = res.get("pooled", {}).get("screens", 0)
    print(f"wrote {args.out} ({n} screens)")
    return 0


# ---- the parser -----------------------------------------------------------------------


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (and bz2 and lzma with it)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        out: Any = sys.__stdout__  # None without a standard output: the fallback, as shutil's AttributeError gives
        try:
            columns = os.get_terminal_size(out.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, its width found by :func:`_terminal_columns`.

    argparse makes a formatter for every option it adds, to check the option's metavar, and
    the stock one imports shutil to ask the terminal's width: 1.3% of a cold ``observe``'s
    instructions, for help that is not printed.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: Optional[int] = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)


class _Unused:
    """Stands in for the parser of a command the command line does not name: takes its options, keeps none."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        pass

    def add_argument_group(self, *args: Any, **kwargs: Any) -> "_Unused":
        return self

    def set_defaults(self, **kwargs: Any) -> None:
        pass


class _Commands:
    """The subcommands action, building the parser of ``only`` alone when it is given.

    Each parser and option costs argparse a help formatter and message lookups (all 14
    commands: 6 times the cost of ``observe``'s alone); a command line that names its
    command first needs that command's parser only, so the others are not built.
    """

    def __init__(self, sub: Any, only: Optional[str]) -> None:
        self.sub, self.only, self.built = sub, only, False

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if self.only is not None and name != self.only:
            return _Unused()
        self.built = True
        return self.sub.add_parser(name, formatter_class=_HelpFormatter, **kwargs)


def _parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only``, holding that command's parser alone (all of them if it names none)."""
    p = argparse.ArgumentParser(prog="spatialobs", description="Exact, structured views of 2D spaces for agents.",
                                formatter_class=_HelpFormatter)
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    p.add_argument("--version", action="version", version=f"spatialobs {__version__}",
                   help="print the version and exit")
    sub = _Commands(p.add_subparsers(dest="command", required=True, metavar="COMMAND"), only)

    demo = sub.add_parser("demo", help="a tour of every job on generated data (and real files when found)")
    demo.add_argument("--n", type=int, default=100_000, help="boxes in the generated canvas (default 100000)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--out", default="spatialobs-demo", help="folder for the pictures (default spatialobs-demo)")
    demo.add_argument("--data", metavar="DIR", help="real data folder with canvases/ and screens/ "
                      "(default: ../shared/data or shared/data when present)")
    demo.set_defaults(func=_demo)

    def view_options(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("file", metavar="FILE", help=".tldr, .excalidraw or native JSON canvas")
        sp.add_argument("--viewport", metavar="X,Y,W,H", help="page units (default: the saved camera, else the page)")
        sp.add_argument("--page", help="page id (default: the current page)")
        sp.add_argument("--select", metavar="ID,...", help="selected ids (default: the saved selection)")
        sp.add_argument("--origin", metavar="X,Y", help="action-frame origin in page units (default 0,0)")
        sp.add_argument("--max-objects", type=int, default=180, help="soft object limit (default 180)")
        sp.add_argument("--max-relations", type=int, default=700, help="hard relation limit (default 700)")
        sp.add_argument("--all-bounds", action="store_true", help="actionBounds on every object, not only offscreen")

    ob = sub.add_parser("observe", help="print the structured observation of a canvas")
    view_options(ob)
    ob.add_argument("--format", choices=("json", "text", "compact"), default="json",
                    help="json (default), a table for people, or compact JSON (the same fields, ids written once)")
    ob.add_argument("--max-bytes", type=int, default=None, metavar="N",
                    help="byte budget of the output (objects kept by priority; json or compact)")
    ob.add_argument("--max-tokens", type=int, default=None, metavar="N", help="the same budget in tokens (4 bytes each)")
    ob.add_argument("--occlusion", choices=("painted", "paper"), default="painted",
                    help="painted (default: what higher shapes paint hides) or paper (the CanvasObs bounds rule)")
    ob.add_argument("--explain", action="store_true", help="give each object keptFor, why it was kept")
    ob.add_argument("--baseline", action="store_true", help="print the agent-kit baseline context instead")
    ob.set_defaults(func=_observe)

    rd = sub.add_parser("render", help="draw the observation as SVG (or PNG with the png extra)")
    view_options(rd)
    rd.add_argument("--out", required=True, metavar="PICTURE", help="output .svg or .png")
    rd.add_argument("--width", type=int, default=1200, help="picture width in pixels")
    rd.set_defaults(func=_render)

    ap = sub.add_parser("apply", help="apply the canvas_ops blocks of a model reply to a canvas")
    ap.add_argument("file", metavar="FILE", help="the canvas")
    ap.add_argument("reply", metavar="REPLY", help="a text file with the model reply, or - for stdin")
    ap.add_argument("--out", required=True, metavar="FILE",
                    help="where to write the result: .tldr, .excalidraw, or .json in the input's format")
    ap.add_argument("--origin", metavar="X,Y", help="action-frame origin in page units (default 0,0)")
    ap.add_argument("--native", action="store_true", help="write the package's native JSON even for tldraw input")
    ap.set_defaults(func=_apply)

    ho = sub.add_parser("handoff", help="run the ten Remote Team Handoff configurations with the reference agent")
    ho.set_defaults(func=_handoff)

    ex = sub.add_parser("explore", help="explore a simulated or real application and print the metrics")
    ex.add_argument("--app", metavar="APP",
                    help="simulated: notepad, explorer, calc; real (desktop extra): mousepad, pcmanfm, localc or "
                         "cmd:COMMAND (any GTK, Qt or Electron application); web extra: jupyterlab (a local "
                         "JupyterLab server per episode) or web:URL")
    ex.add_argument("--app-spec", metavar="FILE.toml",
                    help="an app spec: command or url, env, files, goal, values, keys, timeouts, volatile texts "
                         "(with --app cmd:/web:, the file gives the other fields)")
    ex.add_argument("--no-screenshots", action="store_true",
                    help="with --store: keep no screenshot of the new observations")
    ex.add_argument("--steps", type=int, default=50, help="actions per episode (default 50)")
    ex.add_argument("--starts", type=int, default=1, help="episodes from replayable starts (default 1)")
    ex.add_argument("--selector", choices=("puct", "puct-paper", "greedy", "random"), default="puct",
                    help="puct (default setting), puct-paper (Q = 0 for untried actions), greedy or random")
    ex.add_argument("--compare", action="store_true", help="run every selector on the same starts")
    ex.add_argument("--prior", default="heuristic", metavar="PRIOR",
                    help="heuristic (default), uniform, learned:FILE (a model from train-prior) or policy:FILE "
                         "(a policy from train-policy)")
    ex.add_argument("--traces", metavar="FILE", help="write the steps as a traces file (for train-prior)")
    ex.add_argument("--seed", type=int, default=0)
    ex.add_argument("--curve", metavar="SVG", help="write the discovery curve (new states per step) as SVG")
    ex.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                    help="run on Ray (pip install spatialobs[ray]): join ADDRESS, or start a local runtime")
    ex.add_argument("--workers", type=int, default=2, help="with --ray: explorer actors (default 2)")
    ex.add_argument("--shards", type=int, default=1, help="with --ray: index shard actors (default 1)")
    ex.add_argument("--spread", action="store_true",
                    help="with --ray: the graph, the shards and the workers round robin over the cluster's nodes")
    ex.add_argument("--folder", metavar="DIR",
                    help="with --ray: shard logs, checkpoints and worker logs (default: a temporary folder); "
                         "across machines, on storage every node mounts at the same path")
    ex.add_argument("--store", metavar="FILE", help="write the shared graph of every episode to this SQLite store (with --ray too)")
    ex.set_defaults(func=_explore)

    xp = sub.add_parser("export", help="export a graph store (steps, observations, elements, states, edges, "
                                       "screenshots) as Parquet, JSON lines or GraphML")
    xp.add_argument("store", metavar="STORE", help="an SQLite graph store written by explore --store")
    xp.add_argument("--to", required=True, choices=("parquet", "jsonl", "graphml"),
                    help="parquet (the export extra) or jsonl: a folder of tables and screenshots/; graphml: one file")
    xp.add_argument("out", metavar="OUT", help="the folder (parquet, jsonl) or the .graphml file to write")
    xp.set_defaults(func=_export)

    tp = sub.add_parser("train-prior", help="train a learned proposal prior on traces files")
    tp.add_argument("traces", nargs="+", metavar="TRACES", help="traces files written by explore --traces")
    tp.add_argument("--out", required=True, metavar="FILE", help="the model (JSON)")
    tp.add_argument("--target", choices=("novel", "leaves"), default="novel",
                    help="what a positive step is: it reached a new state (default) or left its state")
    tp.add_argument("--l2", type=float, default=1.0, help="ridge penalty (default 1)")
    tp.set_defaults(func=_train_prior)

    tq = sub.add_parser("train-policy", help="build windows from graph stores, train the screen-conditioned "
                                             "policy with and without counterfactual pairs, report Table 8")
    tq.add_argument("stores", nargs="+", metavar="STORE", help="SQLite graph stores written by explore --store")
    tq.add_argument("--out", metavar="FILE", help="save the policy trained with pairs (seed 0) as .npz")
    tq.add_argument("--dataset", metavar="DIR", help="export the windows, steps, screens, elements and pairs")
    tq.add_argument("--dataset-format", choices=("parquet", "jsonl"), default="parquet",
                    help="parquet (the export extra, default) or jsonl")
    tq.add_argument("--report", metavar="FILE", help="write the Markdown results (Table 8) to FILE")
    tq.add_argument("--seeds", type=_positive_int, default=3, help="seeds per row (default 3)")
    tq.add_argument("--epochs", type=_positive_int, default=40, help="passes over the training steps (default 40)")
    tq.add_argument("--hidden", type=_positive_int, default=96, help="hidden units (default 96)")
    tq.add_argument("--segment", type=_positive_int, default=5, help="cleaning segment length (default 5)")
    tq.add_argument("--max-waste", type=float, default=0.5,
                    help="largest share of no-op and loop steps a kept segment may hold (default 0.5)")
    tq.add_argument("--real-priors", metavar="APP",
                    help="with --report: also run Table 11 on this real application (PUCT with the uniform, "
                         "heuristic, learned and policy priors on held-out starts)")
    tq.add_argument("--real-starts", type=_positive_int, default=6, help="held-out starts (default 6)")
    tq.add_argument("--real-steps", type=_positive_int, default=60, help="actions per episode (default 60)")
    tq.add_argument("--real-seed", type=int, default=9,
                    help="driver seed of the held-out starts (default 9; the stores' seeds must differ)")
    tq.set_defaults(func=_train_policy)

    st = sub.add_parser("studies", help="run the exploration studies and write the results document")
    st.add_argument("--out", default="docs/results/exploration.md", help="Markdown file to write")
    st.add_argument("--scale", choices=("small", "full"), default="full")
    st.add_argument("--real", action="store_true",
                    help="PUCT, Greedy and Random on the real applications instead (writes docs/results/real-apps.md, "
                         "or docs/results/real-apps-web.md for --apps jupyterlab)")
    st.add_argument("--apps", default="mousepad,pcmanfm,localc",
                    help="with --real: comma-separated applications among mousepad, pcmanfm, localc and the "
                         "optional jupyterlab")
    st.add_argument("--starts", type=int, default=0, help="with --real: starts per application (default per app)")
    st.add_argument("--steps", type=int, default=0, help="with --real: actions per episode (default per app)")
    st.add_argument("--clipboard", action="store_true",
                    help="with --real: Tables 6 and 7 on real Mousepad with the real X clipboard (needs xclip) "
                         "instead of the exploration study")
    st.add_argument("--ablation", action="store_true",
                    help="with --real: Table 5's ablations (full, novelty only, ambiguity only, prior only, uniform "
                         "prior, exact matching) on one application (--apps, default mousepad; 10 starts x 50 actions)")
    st.add_argument("--sensitivity", action="store_true",
                    help="with --real: Appendix D, the one-factor sensitivity of tau, kappa and u0 with pair F1 against "
                         "the reference labelling, on one application (--apps, default mousepad; 10 starts x 50 "
                         "actions)")
    st.add_argument("--trials", type=int, default=20, help="with --real --clipboard: trials per condition")
    st.add_argument("--seed", type=int, default=0)
    st.set_defaults(func=_studies)

    oa = sub.add_parser("ocr-audit", help="accessibility tree vs OCR on the real applications (the ocr and "
                                          "desktop extras): the paper's four measures")
    oa.add_argument("--apps", default="mousepad,pcmanfm,localc", help="comma-separated desktop applications")
    oa.add_argument("--starts", type=int, default=4, help="replay starts (episodes) per application (default 4)")
    oa.add_argument("--steps", type=int, default=25, help="PUCT actions per episode (default 25)")
    oa.add_argument("--minutes", type=float, default=20.0,
                    help="time box of the capture, shared among the applications (default 20)")
    oa.add_argument("--seed", type=int, default=0)
    oa.add_argument("--out", default="docs/results/ocr-audit.md", help="Markdown file to write")
    oa.add_argument("--keep", metavar="FILE", help="also pickle the captures (screens, screenshots, steps) here")
    oa.add_argument("--rescore", metavar="FILE", help="score captures kept by --keep instead of running the apps")
    oa.set_defaults(func=_ocr_audit)

    co = sub.add_parser("corpus", help="explore real applications with parallel workers into one shared graph per "
                                       "application (resumable), and write the corpus document")
    co.add_argument("folder", help="the corpus store (created if absent; a rerun resumes it)")
    co.add_argument("--apps", default="mousepad,pcmanfm,galculator,featherpad,localc,lowriter,loimpress,lomath,"
                                      "jupyterlab", help="comma-separated app spec names (default: all nine)")
    co.add_argument("--minutes", type=float, default=None,
                    help="budget: minutes of wall time per application and prior (default 3 when no --steps)")
    co.add_argument("--steps", type=int, default=None, help="budget: steps per application and prior")
    co.add_argument("--workers", type=int, default=2, help="parallel workers per application (default 2)")
    co.add_argument("--episode-steps", type=int, default=25, help="actions per episode (default 25)")
    co.add_argument("--priors", default="heuristic,uniform",
                    help="priors, one graph each (default heuristic,uniform: Table 3's two arms)")
    co.add_argument("--seed", type=int, default=0)
    co.add_argument("--repeats", default="1", metavar="N",
                    help="runs per application and prior, each its own graph (run k >= 2: <prior>.r<k>.sqlite, "
                         "other start seeds); runs whose budget is spent are skipped (default 1)")
    co.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                    help="run the workers as Ray actors: join ADDRESS, or start a local runtime")
    co.add_argument("--report", action="store_true", help="only write the document from the store")
    co.add_argument("--doc", default="", help="write the corpus document here after the run (with --report: "
                                              "default docs/results/corpus.md)")
    co.set_defaults(func=_corpus)

    dd = sub.add_parser("dedup", help="merge near-duplicate screens into states")
    dd.add_argument("paths", nargs="*", metavar="PATH",
                    help="screen files (Rico, DroidBot, generic JSON), folders of them, .jsonl streams, or - for stdin")
    dd.add_argument("--index", metavar="FILE", help="index file to extend (created if absent) and save")
    dd.add_argument("--tau", type=float, default=0.93, help="merge threshold (default 0.93)")
    dd.add_argument("--grid", type=int, default=30, help="atom grid cells per side (default 30)")
    dd.add_argument("--mask-volatile", action="store_true", help="mask digits, times and counters before hashing")
    dd.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                    help="featurize in parallel Ray tasks and index in shard actors: join ADDRESS, or start a "
                         "local runtime (same states as without)")
    dd.add_argument("--shards", type=int, default=2, help="with --ray: index shard actors (default 2)")
    dd.set_defaults(func=_dedup)

    sv = sub.add_parser("serve", help="serve the canvas and screen tools to agents: MCP over stdio, or HTTP "
                                      "(JSON API and MCP) with --http")
    if isinstance(sv, argparse.ArgumentParser):
        from spatialobs.serve.command import configure as _serve  # imports its optional dependencies only when run

        _serve(sv)
    return p if sub.built else _parser()


#: Commands that read or write one document and do no linear algebra worth a thread pool.
_ONE_SHOT = frozenset({"observe", "render", "apply"})


def _one_blas_thread(command: str) -> None:
    # OpenBLAS (numpy's wheels) starts a thread per core when numpy is imported: 40-60 ms of CPU,
    # a third of a cold observe, for commands that never multiply a matrix. Unless the caller
    # chose, such a command runs with one; it must be set before numpy is first imported.
    if command in _ONE_SHOT and "numpy" not in sys.modules and "OPENBLAS_NUM_THREADS" not in os.environ:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    argv = list(argv) if argv is not None else sys.argv[1:]
    # a command line that starts with its command needs no other command's parser
    args = _parser(argv[0] if argv and not argv[0].startswith("-") else None).parse_args(argv)
    _one_blas_thread(args.command)
    try:
        _prepare_outputs(args)
        return int(args.func(args))
    except BrokenPipeError:  # output piped into head or less that closed early: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (SpatialObsError, ValueError, OSError) as exc:
        if args.debug:
            raise
        print(f"spatialobs: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("spatialobs: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not bad input: still one line, and say how to see more
        if args.debug:
            raise
        print(f"spatialobs: internal error: {type(exc).__name__}: {_one_line(exc)} (rerun with --debug for the "
              "traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
