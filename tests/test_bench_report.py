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


def _run(tmp_path, name: str, rows: list) -> str:
    doc = {"datetime": "2026-12-01T00:00:00", "machine_info": {}, "benchmarks": [
        {"name": n.split("::")[-1], "fullname": n, "group": "g", "params": ({"impl": impl} if impl else None),
         "stats": {"median": m}} for n, impl, m in rows]}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_report_compares_two_versions(tmp_path):
    """--before/--after: rows run by both versions with median [range] and speed-up, a verdict only when
    the versions' runs do not overlap, the peers' rows apart as the machine's own drift, new benchmarks counted."""
    before = [_run(tmp_path, f"b{k}.json", [("m.py::t_fast[spatialobs]", "spatialobs", 0.010 + k * 0.001),
                                              ("m.py::t_same", None, 0.005 + k * 0.002),
                                              ("m.py::t_fast[numpy]", "numpy", 0.020)]) for k in range(2)]
    after = [_run(tmp_path, f"a{k}.json", [("m.py::t_fast[spatialobs]", "spatialobs", 0.005),
                                             ("m.py::t_same", None, 0.006 - k * 0.002),
                                             ("m.py::t_fast[numpy]", "numpy", 0.022),
                                             ("m.py::t_new", None, 0.001)]) for k in range(2)]
    out = subprocess.run([sys.executable, str(REPORT), "--before", *before, "--after", *after],
                         capture_output=True, text=True, check=True).stdout
    assert "| t_fast[spatialobs] | spatialobs | 10.500 ms [10.000 ms, 11.000 ms] | 5.000 ms [5.000 ms, 5.000 ms] | 2.10× | faster |" in out
    assert "| t_same | spatialobs | 6.000 ms [5.000 ms, 7.000 ms] | 5.000 ms [4.000 ms, 6.000 ms] | 1.20× | within the runs' spread |" in out
    assert "| t_fast[numpy] | numpy | 20.000 ms [20.000 ms, 20.000 ms] | 22.000 ms [22.000 ms, 22.000 ms] | 0.91× | slower |" in out
    assert "peers: 1 benchmarks, speed-up geometric mean 0.91×" in out
    assert "spatialobs verdicts: faster 1, within the runs' spread 1" in out
    assert "only after (new benchmarks): 1; only before (renamed or removed): 0" in out


def test_report_compare_needs_both_sides(tmp_path):
    """A comparison without runs on one side, or with the flags out of order, is a usage error naming the form."""
    run = _run(tmp_path, "r.json", [("m.py::t", None, 0.001)])
    for argv in (["--before", run, "--after"], ["--after", run, "--before", run], ["--before", run]):
        done = subprocess.run([sys.executable, str(REPORT), *argv], capture_output=True, text=True)
        assert done.returncode == 1
        assert "report.py:" in done.stderr and "--before" in done.stderr


def test_report_gives_no_verdict_on_one_run_each(tmp_path):
    """With one run of a version there is no spread to compare with: the row has its speed-up and no verdict."""
    before = _run(tmp_path, "b.json", [("m.py::t", None, 0.010)])
    after = _run(tmp_path, "a.json", [("m.py::t", None, 0.005)])
    out = subprocess.run([sys.executable, str(REPORT), "--before", before, "--after", after],
                         capture_output=True, text=True, check=True).stdout
    assert "| t | spatialobs | 10.000 ms | 5.000 ms | 2.00× | – |" in out
    assert "spatialobs verdicts: – 1" in out
