"""spatialobs._arrays against numpy, whose ``np.unique`` and ``np.lexsort`` are the definitions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spatialobs._arrays import in_sorted, row_order, run_starts, unique, unique_first


@given(hnp.arrays(st.sampled_from([np.int64, np.int32, np.intp]), hnp.array_shapes(min_dims=1, max_dims=2, min_side=0),
                  elements=st.integers(-50, 50)))
def test_unique_equals_numpy(a: np.ndarray) -> None:
    got, want = unique(a), np.unique(a)
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist()


@given(hnp.arrays(st.sampled_from([np.uint8, np.uint64, np.int16]), hnp.array_shapes(min_dims=1, max_dims=1, min_side=0,
                                                                                   max_side=80),
                  elements=st.integers(0, 100)))
def test_unique_of_few_and_many_values_equals_numpy(a: np.ndarray) -> None:
    # up to 32 values sorted as Python ints, more by numpy's sort: both np.unique's values and dtype
    got, want = unique(a), np.unique(a)
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist()


@given(hnp.arrays(st.sampled_from([np.int64, np.int32, np.intp]), hnp.array_shapes(min_dims=1, max_dims=1, min_side=0),
                  elements=st.integers(-50, 50)))
def test_unique_first_equals_numpy_with_return_index(a: np.ndarray) -> None:
    got, at = unique_first(a)
    want, want_at = np.unique(a, return_index=True)
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist() and at.tolist() == want_at.tolist()


@given(st.lists(st.integers(-5, 5), max_size=40))
def test_run_starts_is_the_r_of_the_differences(v: list) -> None:
    a = np.array(v, dtype=np.int64)
    want = np.r_[True, a[1:] != a[:-1]] if len(a) else np.zeros(0, bool)
    assert run_starts(a).tolist() == want.tolist()


@given(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-5, 5), max_size=30),
       st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-5, 5), max_size=30))
def test_in_sorted_equals_numpy_isin(values: list, q: list) -> None:
    s, a = np.sort(np.array(values, dtype=np.int64)), np.array(q, dtype=np.int64)
    got = in_sorted(s, a)
    assert got.dtype == np.bool_ and got.tolist() == np.isin(a, s).tolist()


@given(st.integers(1, 40), st.data(), st.booleans())
def test_row_order_is_lexsort(n: int, data, with_bit: bool) -> None:
    # rows mostly in [0, n) and sorted runs (as a row map leaves them), sometimes out of range or
    # with a bit beyond 0 and 1: those go to np.lexsort itself
    m = data.draw(st.integers(0, 60))
    lo = data.draw(st.sampled_from([0, 0, 0, -1]))
    hi = data.draw(st.sampled_from([n - 1, n - 1, n]))
    major = np.array(data.draw(st.lists(st.integers(lo, hi), min_size=m, max_size=m)), np.int64)
    if data.draw(st.booleans()):
        major = np.sort(major)
    minor = np.array(data.draw(st.lists(st.integers(lo, hi), min_size=m, max_size=m)), np.int64)
    bit = np.array(data.draw(st.lists(st.integers(0, data.draw(st.sampled_from([1, 1, 2]))), min_size=m,
                                      max_size=m)), np.int64) if with_bit else None
    got = row_order(major, minor, bit, n=n)
    want = np.lexsort((minor, major) if bit is None else (bit, minor, major))
    assert got.tolist() == want.tolist()


def test_row_order_packs_rows_below_its_bound_only() -> None:
    big = np.array([2**31, 0], np.int64)
    assert row_order(big, np.array([0, 0]), n=2**31 + 1).tolist() == [1, 0]  # lexsort, no key overflow
    assert row_order(np.array([1, 1, 0]), np.array([0, 0, 0]), n=2).tolist() == [2, 0, 1]  # stable


def test_a_cold_observation_does_not_import_numpy_ma(tmp_path: Path) -> None:
    # the reason for the twin: the first plain np.unique imports numpy.ma, 8-35 ms of a cold start
    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    f = tmp_path / "page.tldr"
    f.write_text(json.dumps(synthetic_workspace(300, seed=1).to_tldraw()), encoding="utf-8")
    code = ("import sys; from spatialobs.canvas import load, observe; observe(load(sys.argv[1])).to_json(); "
            "print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
