"""spatialobs._arrays against numpy, whose ``np.unique`` is the definition."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spatialobs._arrays import unique


@given(hnp.arrays(st.sampled_from([np.int64, np.int32, np.intp]), hnp.array_shapes(min_dims=1, max_dims=2, min_side=0),
                  elements=st.integers(-50, 50)))
def test_unique_equals_numpy(a: np.ndarray) -> None:
    got, want = unique(a), np.unique(a)
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist()


def test_a_cold_observation_does_not_import_numpy_ma(tmp_path: Path) -> None:
    # the reason for the twin: the first plain np.unique imports numpy.ma, 8-35 ms of a cold start
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    f = tmp_path / "page.tldr"
    f.write_text(json.dumps(synthetic_workspace(300, seed=1).to_tldraw()), encoding="utf-8")
    code = ("import sys; from spatialobs.canvas import load, observe; observe(load(sys.argv[1])).to_json(); "
            "print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
