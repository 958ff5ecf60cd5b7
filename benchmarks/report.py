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


if __name__ == "__main__":
    print(table(*sys.argv[1:]))
