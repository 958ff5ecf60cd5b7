"""Turn a pytest-benchmark JSON file into the ratio table of benchmarks/README.md.

    python -m pytest benchmarks --benchmark-json=bench.json
    python benchmarks/report.py bench.json
    python benchmarks/report.py run1.json run2.json run3.json   # several runs

For each group it prints the median time of spatialobs and how many times
slower each other implementation in the group is (median / spatialobs median);
for the ``floor`` row (a copy of the output's bytes) the other way round: how many
times the floor spatialobs takes (spatialobs median / floor median). Given
several files (runs), each cell is the median over the runs with their range.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def _median(xs: list) -> float:
    xs = sorted(xs)
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def _cell(xs: list, fmt: str) -> str:
    if len(xs) == 1:
        return fmt.format(xs[0])
    return fmt.format(_median(xs)) + " [" + fmt.format(min(xs)) + ", " + fmt.format(max(xs)) + "]"


def table(*paths: str) -> str:
    runs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        groups: dict = defaultdict(dict)
        for b in doc["benchmarks"]:
            impl = (b.get("params") or {}).get("impl", b["name"])  # a benchmark without parameters goes by its name
            groups[b.get("group") or b["name"]][impl] = b["stats"]["median"]  # ungrouped: a group of its own
        runs.append(groups)
    # peers of the groups that time spatialobs (other groups, such as a lone baseline, have no ratio)
    impls = sorted({i for groups in runs for g in groups.values() if "spatialobs" in g for i in g if i != "spatialobs"})

    def key(group: str):
        name, _, n = group.rpartition(" n=")
        return (name, int(n) if n.isdigit() else 0)

    def header(i: str) -> str:
        return "spatialobs / floor" if i == "floor" else f"{i} / spatialobs"

    def ratio(i: str, g: dict, ours: float) -> float:
        return ours / g[i] if i == "floor" else g[i] / ours

    lines = [
        "| group | spatialobs median | " + " | ".join(header(i) for i in impls) + " |",
        "|---|---:|" + "---:|" * len(impls),
    ]
    for group in sorted({g for groups in runs for g in groups}, key=key):
        gs = [groups[group] for groups in runs if "spatialobs" in groups.get(group, {})]
        if not gs:
            continue
        ours = [g["spatialobs"] * 1000 for g in gs]
        cells = []
        for i in impls:
            rs = [ratio(i, g, g["spatialobs"]) for g in gs if i in g]
            cells.append(_cell(rs, "{:,.1f}×") if rs else "–")
        lines.append(f"| {group} | " + _cell(ours, "{:,.3f} ms") + " | " + " | ".join(cells) + " |")
    machine = doc.get("machine_info", {})
    cpu = machine.get("cpu", {}).get("brand_raw", "unknown CPU")
    lines.append("")
    lines.append(f"Measured {doc.get('datetime', '')[:10]} on {cpu}, Python {machine.get('python_version', '?')}.")
    return "\n".join(lines)


# implementations that are not the project's code (peers, floors, baselines): the machine's drift between runs
PEERS = frozenset({"shapely", "shapely_prefiltered", "numpy", "floor", "json.dumps", "exact_scan", "hnsw_k200",
                   "bm25s", "datasketch", "rtree"})


def _runs(paths: list) -> list:
    """Each run as {benchmark: (implementation, median seconds)}, keyed by the test's full name."""
    runs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        runs.append({b.get("fullname") or b["name"]: ((b.get("params") or {}).get("impl", "spatialobs"), b["stats"]["median"])
                     for b in doc["benchmarks"]})
    return runs


def _geomean(xs: list) -> float:
    prod = 1.0
    for x in xs:
        prod *= x
    return prod ** (1.0 / len(xs))


def compare(before: list, after: list) -> str:
    """The before/after table of two versions' runs (see the module's docstring)."""
    if not before or not after:
        raise SystemExit("report.py: --before and --after each need at least one run's JSON file")
    old, new = _runs(before), _runs(after)
    names_old = {k for r in old for k in r}
    names_new = {k for r in new for k in r}
    both = sorted(names_old & names_new)
    lines = [
        f"{len(before)} run(s) before, {len(after)} after; median [range] over the runs of each version's "
        "per-run median; speed-up = before / after.",
        "",
        "| benchmark | implementation | before | after | speed-up | verdict |",
        "|---|---|---:|---:|---:|---|",
    ]
    ups: dict = {"spatialobs": [], "peers": []}
    verdicts: dict = defaultdict(int)
    for name in both:
        impl = next(r[name][0] for r in old + new if name in r)
        b = [r[name][1] * 1000 for r in old if name in r]
        a = [r[name][1] * 1000 for r in new if name in r]
        up = _median(b) / _median(a)
        if len(b) < 2 or len(a) < 2:
            verdict = "–"  # one run of a version: no spread to compare with
        else:
            verdict = "faster" if max(a) < min(b) else "slower" if min(a) > max(b) else "within the runs' spread"
        kind = "peers" if impl in PEERS else "spatialobs"  # spatialobs, its twins and variants
        ups[kind].append(up)
        if kind == "spatialobs":
            verdicts[verdict] += 1
        short = name.split("::", 1)[-1]
        lines.append(f"| {short} | {impl} | {_cell(b, '{:,.3f} ms')} | {_cell(a, '{:,.3f} ms')} | {up:,.2f}× | {verdict} |")
    lines.append("")
    for kind in ("spatialobs", "peers"):
        xs = ups[kind]
        if xs:
            lines.append(f"{kind}: {len(xs)} benchmarks, speed-up geometric mean {_geomean(xs):.2f}×, "
                         f"median {_median(xs):.2f}× [{min(xs):.2f}×, {max(xs):.2f}×]")
    lines.append("spatialobs verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(verdicts.items())))
    only_new = sorted(names_new - names_old)
    only_old = sorted(names_old - names_new)
    lines.append(f"only after (new benchmarks): {len(only_new)}; only before (renamed or removed): {len(only_old)}")
    return "\n".join(lines)


def _main(argv: list) -> str:
    if "--before" in argv or "--after" in argv:
        if argv[:1] != ["--before"] or argv.count("--after") != 1 or argv.count("--before") != 1:
            raise SystemExit("report.py: usage: report.py --before OLD.json [...] --after NEW.json [...]")
        k = argv.index("--after")
        return compare(argv[1:k], argv[k + 1:])
    return table(*argv)


if __name__ == "__main__":
    print(_main(sys.argv[1:]))
