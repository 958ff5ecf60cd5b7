"""A cold command line: ``spatialobs observe FILE`` in a new process, beside its floors.

Issue 31's target: under 200 ms on a 50 kB file. Each round starts a new interpreter, so the
time holds the interpreter's start, the imports (numpy's alone is most of them) and the
first load and observation of the file (fonts read on first use). The floors run in the same
session: an interpreter that does nothing, and one that imports numpy and nothing else; the
ratio to the numpy floor is the figure to quote on a shared machine. The file is the 49 kB
taramti.com wireframe when the real data is beside the checkout, else a page of the same
size written by the benchmark.

Every process runs with compiled bytecode, as an installed package does: the rounds write
and read it in a temporary folder (``PYTHONPYCACHEPREFIX``) even where the caller's
environment asks for none (``PYTHONDONTWRITEBYTECODE``), which would otherwise time the
compilation of every module in every round.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spatialobs.canvas import load, observe

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "canvases"
REAL = SHARED / "3dyuval__taramti.com__wireframes.tldr"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if REAL.is_file():
        return REAL
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    f = tmp_path_factory.mktemp("cold") / "page.tldr"
    f.write_text(json.dumps(synthetic_workspace(110, seed=3).to_tldraw()), encoding="utf-8")
    return f


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict:
    e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    e["PYTHONPYCACHEPREFIX"] = str(tmp_path_factory.mktemp("pycache"))
    return e


def _run(env: dict, *argv: str) -> str:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=True, env=env).stdout


@pytest.mark.benchmark(group="cold command line")
def test_cold_observe_command(benchmark, page: Path, env: dict) -> None:
    out = benchmark.pedantic(_run, args=(env, "-m", "spatialobs", "observe", str(page)), rounds=9, warmup_rounds=1)
    assert json.loads(out) == json.loads(observe(load(page)).to_json())
    benchmark.extra_info["file_bytes"] = page.stat().st_size


@pytest.mark.benchmark(group="cold command line")
def test_floor_import_numpy(benchmark, env: dict) -> None:
    benchmark.pedantic(_run, args=(env, "-c", "import numpy"), rounds=9, warmup_rounds=1)


@pytest.mark.benchmark(group="cold command line")
def test_floor_import_numpy_one_thread(benchmark, env: dict) -> None:
    # the floor of observe itself, which imports numpy with one OpenBLAS thread (cli._one_blas_thread)
    benchmark.pedantic(_run, args=({**env, "OPENBLAS_NUM_THREADS": "1"}, "-c", "import numpy"), rounds=9,
                       warmup_rounds=1)


@pytest.mark.benchmark(group="cold command line")
def test_floor_interpreter(benchmark, env: dict) -> None:
    benchmark.pedantic(_run, args=(env, "-c", "pass"), rounds=9, warmup_rounds=1)
