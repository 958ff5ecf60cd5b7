"""The soak command (benchmarks/soak.py, run by hand for 30 minutes) still works: a few seconds of it."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.test_serve_support import REPO


def test_a_short_soak_runs_samples_and_stops(tmp_path):
    out = tmp_path / "soak.json"
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / "soak.py"), "--seconds", "6", "--interval", "2",
                          "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=180,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = json.loads(out.read_text())
    samples, summary = result["samples"], result["summary"]
    assert len(samples) == 3 and [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    assert all(s["rss_mb"] > 10 and s["fds"] > 0 and s["server_cpu_s"] >= 0 and s["machine_load"] >= 0 for s in samples)
    assert set(samples[0]["ops"]) == {"observe", "apply", "save", "screen_add"}
    assert summary["errors"] == 0 and all(n > 0 for n in summary["requests"].values())
    assert summary["index"]["observations"] <= 400  # the 400 screens, revisited
    assert "soak summary:" in run.stdout
