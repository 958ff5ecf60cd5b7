"""Turn a pytest-benchmark JSON file into the ratio table of benchmarks/README.md.

    python -m pytest benchmarks --benchmark-json=bench.json
    python benchmarks/report.py bench.json

For each group it prints the median time of spatialobs and how many times
slower each other implementation in the group is (median / spatialobs median);
for the ``floor`` row (a copy of the output's bytes) the other way round: how many
times the floor spatialobs takes (spatialobs median / floor median).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def table(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    groups: dict = defaultdict(dict)
    for b in doc["benchmarks"]:
        impl = b["params"].get("impl", b["name"])
        groups[b["group"]][impl] = b["stats"]["median"]
    impls = sorted({i for g in groups.values() for i in g if i != "spatialobs"})

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
    for group in sorted(groups, key=key):
        g = groups[group]
        ours = g.get("spatialobs")
        if ours is None:
            continue
        cells = [f"{ratio(i, g, ours):,.1f}×" if i in g else "–" for i in impls]
        lines.append(f"| {group} | {ours * 1000:,.3f} ms | " + " | ".join(cells) + " |")
    machine = doc.get("machine_info", {})
    cpu = machine.get("cpu", {}).get("brand_raw", "unknown CPU")
    lines.append("")
    lines.append(f"Measured {doc.get('datetime', '')[:10]} on {cpu}, Python {machine.get('python_version', '?')}.")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(sys.argv[1]))
