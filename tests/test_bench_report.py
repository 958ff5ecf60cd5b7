"""benchmarks/report.py, the README's way to read a benchmark run, on a run's JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPORT = Path(__file__).resolve().parents[1] / "benchmarks" / "report.py"


def _bench(name: str, group: str, median: float, params=None) -> dict:
    return {"name": name, "group": group, "params": params, "stats": {"median": median}}


def test_report_reads_runs_with_and_without_parameters(tmp_path):
    """Rows of every run (median and range over runs), ratios per peer, the floor the other way
    round; a benchmark without parameters or group (pytest-benchmark writes ``null``) is no error,
    and a group without spatialobs adds no column."""
    runs = []
    for k, scale in enumerate((1.0, 2.0, 1.5)):
        doc = {"datetime": "2026-12-01T00:00:00", "machine_info": {"python_version": "3.11"}, "benchmarks": [
            _bench("test_x[spatialobs]", "overlap n=10", 0.001 * scale, {"impl": "spatialobs"}),
            _bench("test_x[numpy]", "overlap n=10", 0.010 * scale, {"impl": "numpy"}),
            _bench("test_x[floor]", "overlap n=10", 0.0005 * scale, {"impl": "floor"}),
            _bench("test_stream", "stream n=10", 1.0, None),
            {"name": "test_plain", "group": None, "params": None, "stats": {"median": 0.5}},
        ]}
        path = tmp_path / f"run{k}.json"
        path.write_text(json.dumps(doc))
        runs.append(str(path))
    out = subprocess.run([sys.executable, str(REPORT), *runs], capture_output=True, text=True, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("| overlap")]
    assert rows == ["| overlap n=10 | 1.500 ms [1.000 ms, 2.000 ms] | 2.0× [2.0×, 2.0×] | 10.0× [10.0×, 10.0×] |"]
    assert out.splitlines()[0] == "| group | spatialobs median | spatialobs / floor | numpy / spatialobs |"
    assert "stream" not in out and "test_plain" not in out
