"""tldraw's hand-drawn outlines (:mod:`spatialobs.canvas.document.drawstyle`).

The random numbers and the paths are checked against tldraw itself: its ``rng`` and its
geo paths' ``toDrawD`` run in Node from the installed harness (skipped without it), and
against values recorded from that run. The stroke cells are checked against the exact
oracle in ``tests/reference/drawstyle_oracle.py``.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas.document import drawstyle as D
from tests.conformance import tldraw_harness
from tests.conformance.conftest import require
from tests.reference import drawstyle_oracle as O

#: tldraw 5.4.2's ``rng(seed)`` from @tldraw/utils, its first five numbers per seed, printed by
#: ``node --input-type=module -e "import { rng } from '@tldraw/utils'; ..."`` run in the tldraw harness.
RECORDED: Dict[str, List[float]] = {
    "": [0.0, 0.0, 0.0, 0.0, 0.0],
    "x": [-0.07915259432047606, 0.7769083962775767, 0.5943496287800372, -0.27351469825953245, -0.2833517659455538],
    "shape:a0": [0.8497324916534126, 0.3460032809525728, -0.6802713056094944, -0.35708581702783704,
                 -0.761545694898814],
    "shape:-NAUXhPiOu1sAAGWHKhPS0": [-0.9758743429556489, -0.195372614543885, 0.5027430402114987,
                                     0.034697648137807846, 0.4000386167317629],
    "é€😀": [-0.16926065739244223, -0.9025704832747579, -0.4348326362669468, -0.7476616422645748,
                    -0.19495569914579391],
}

#: The draw path of a 100 x 50 rectangle, size m, id ``shape:a``, from tldraw's ``PathBuilder.toDrawD``
#: in the same way.
RECORDED_RECTANGLE = (
    "M 7.8912 0.3629 L 92.9125 -0.1866 Q 99.9125 -0.1866 99.9125 6.8134 L 100.2009 42.7157 Q 100.2009 49.7157 "
    "93.2009 49.7157 L 6.9627 50.8672 Q -0.0373 50.8672 -0.0373 43.8672 L 0.8912 7.3629 Q 0.8912 0.3629 7.8912 "
    "0.3629 M 7.7442 0.436 L 92.9588 0.4189 Q 99.9588 0.4189 99.9588 7.4189 L 99.8375 43.5295 Q 99.8375 50.5295 "
    "92.8375 50.5295 L 7.8069 50.5974 Q 0.8069 50.5974 0.8069 43.5974 L 0.7442 7.436 Q 0.7442 0.436 7.7442 0.436"
)


def _node(script: str, data: Any, tmp: Path) -> Any:
    """Run ``script`` (an ES module reading the JSON file named by ``process.argv[1]``) in the tldraw harness."""
    require("tldraw", tldraw_harness.unavailable_reason())
    h = tldraw_harness.harness_dir()
    assert h is not None
    src = tmp / "in.json"
    src.write_text(json.dumps(data))
    out = subprocess.run(["node", "--input-type=module", "-e", script, str(src)], cwd=h, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_rng_matches_recorded_values() -> None:
    for seed, want in RECORDED.items():
        r = D.tldraw_rng(seed)
        assert [r() for _ in want] == want


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_rng_matches_the_oracle(seed: str) -> None:
    a, b = D.tldraw_rng(seed), O.rng(seed)
    got = [a() for _ in range(20)]
    assert got == [b() for _ in range(20)]
    assert all(-1 <= v < 1 for v in got)


def test_rng_matches_tldraw(tmp_path: Path) -> None:
    rnd = random.Random(3)
    alphabet = "abcXYZ019_-:éß€😀 "
    seeds = [""] + ["shape:" + "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30))) for _ in range(60)]
    script = ("import { rng } from '@tldraw/utils'; import { readFileSync } from 'node:fs';"
              "const seeds = JSON.parse(readFileSync(process.argv[1], 'utf8'));"
              "console.log(JSON.stringify(seeds.map((s) => { const r = rng(s); "
              "return Array.from({ length: 40 }, () => r()) })))")
    want = _node(script, seeds, tmp_path)
    for seed, w in zip(seeds, want):
        r = D.tldraw_rng(seed)
        assert [r() for _ in w] == w, seed


def test_rectangle_matches_recorded_path() -> None:
    got = D._geo_segments("rectangle", 100, 50, {"size": "m"}, "shape:a", False)
    assert got is not None
    assert D._d_string(got[0]) == RECORDED_RECTANGLE and got[1] == 3.5


def test_geo_paths_match_tldraw(tmp_path: Path) -> None:
    """Every kind's draw path (two passes) and fill path, sizes from 1 up, every stroke size and
    several scales, flipped or not: the same ``d`` string as tldraw's, to its 4 decimals."""
    rnd = random.Random(5)
    cases: List[Dict[str, Any]] = []
    for geo in sorted(D.DRAW_GEO_KINDS):
        for _ in range(8):
            cases.append(dict(geo=geo, w=rnd.choice([0.3, 1, 5, 37.2, 100.5, 530.19649599]),
                              h=rnd.choice([1, 2, 20, 50.25, 143, 2014.8281]), id=f"shape:{rnd.getrandbits(60):x}",
                              size=rnd.choice(["s", "m", "l", "xl"]), scale=rnd.choice([1, 0.5, 2.25]),
                              fill=rnd.choice(["none", "semi", "solid"]), flipX=rnd.random() < 0.3,
                              flipY=rnd.random() < 0.3, fillPath=rnd.random() < 0.3))
    script = """
import { defaultGeoTypeDefinitions } from 'tldraw'
import { readFileSync } from 'node:fs'
const S = { s: 1, m: 1.75, l: 2.5, xl: 5 }
const out = JSON.parse(readFileSync(process.argv[1], 'utf8')).map((c) => {
  const props = { geo: c.geo, w: c.w, h: c.h, fill: c.fill, dash: 'draw', size: c.size, scale: c.scale, growY: 0 }
  const sw = 2 * S[c.size] * c.scale
  const w = Math.max(1, c.w), h = Math.max(1, c.h)
  let path = defaultGeoTypeDefinitions[c.geo].getPath(w, h, { id: c.id, props }, sw)
  if (c.flipX || c.flipY)
    path = path.transform({ a: c.flipX ? -1 : 1, b: 0, c: 0, d: c.flipY ? -1 : 1, e: c.flipX ? w : 0, f: c.flipY ? h : 0 })
  return c.fillPath
    ? path.toDrawD({ strokeWidth: sw, randomSeed: c.id, passes: 1, offset: 0, onlyFilled: true })
    : path.toDrawD({ strokeWidth: sw, randomSeed: c.id })
})
console.log(JSON.stringify(out))
process.exit(0)
"""
    want = _node(script, cases, tmp_path)
    for c, w in zip(cases, want):
        props = {k: c[k] for k in ("size", "scale", "fill", "flipX", "flipY")}
        got = D._geo_segments(c["geo"], c["w"], c["h"], props, c["id"], c["fillPath"])
        assert got is not None
        assert D._d_string(got[0]) == w, c


def test_geo_draw_polylines() -> None:
    lines, sw = D.geo_draw_polylines("x-box", 80, 60, {"size": "s"}, "shape:b")  # type: ignore[misc]
    assert sw == 2.0 and len(lines) == 6  # two passes of the box and of each diagonal
    fill, _ = D.geo_draw_polylines("rectangle", 80, 60, {"size": "m", "fill": "semi"}, "shape:b",  # type: ignore[misc]
                                   fill_path=True)
    assert len(fill) == 1 and np.allclose(fill[0][0], fill[0][-1])
    assert fill[0][:, 0].min() >= 0 and fill[0][:, 0].max() <= 80  # no offset: the corners only round
    assert D.geo_draw_polylines("cloud", 80, 60, {}, "shape:b") is None


coord = st.floats(-8, 8, allow_nan=False).map(lambda v: round(v * 8) / 8)  # ties on the grid are common
polyline = st.lists(st.tuples(coord, coord), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(st.lists(polyline, min_size=1, max_size=3), st.sampled_from([0.0, 0.25, 1.0, 1.75, 3.3]),
       st.sampled_from([0.5, 0.875, 2.0]))
def test_stroke_cells_match_the_oracle(lines: List[List[Any]], half: float, cell: float) -> None:
    arrs = [np.asarray(pl, np.float64) for pl in lines]
    keys = D.stroke_cells(arrs, half, cell)
    off = 1 << 30
    got = {(int(k >> 32) - off, int(k & 0xFFFFFFFF) - off) for k in keys.tolist()}
    want = set(O.stroke_cells(lines, half, cell))
    assert len(got) == len(keys) and np.all(np.diff(keys) > 0)  # sorted, unique
    # both directions: nothing outside the stroke, nothing inside missed (a centre on the edge may go either way)
    assert all(O.near_edge(lines, half, cell, k) for k in got ^ want)


@settings(max_examples=30, deadline=None)
@given(polyline, polyline, st.sampled_from([1.0, 2.0, 3.5]), st.sampled_from([1.0, 2.0, 3.5]))
def test_visible_fraction_matches_the_oracle(a: List[Any], b: List[Any], wa: float, wb: float) -> None:
    cell = 0.5
    got = D.stroke_visible_fraction([np.asarray(a, float)], wa, [([np.asarray(b, float)], wb)], cell=cell)
    own = O.stroke_cells([a], wa / 2, cell)
    cover = O.stroke_cells([b], wb / 2, cell)
    want = 1 - len(own.keys() & cover.keys()) / len(own)
    # a cell whose centre lies on either stroke's edge may count either way in floating point
    unsure = sum(1 for k in own if O.near_edge([a], wa / 2, cell, k) or O.near_edge([b], wb / 2, cell, k))
    assert abs(got - want) <= 2 * unsure / len(own) + 1e-12


def test_visible_fraction_of_a_copy_and_a_shift() -> None:
    a = [np.array([[0.0, 0.0], [200.0, 0.0]])]
    assert D.stroke_visible_fraction(a, 4.0, [(a, 4.0)]) == 0.0
    assert D.stroke_visible_fraction(a, 4.0, [([np.array([[0.0, 1.0], [200.0, 1.0]])], 4.0)]) == pytest.approx(
        0.25, abs=0.02)
    assert D.stroke_visible_fraction(a, 4.0, []) == 1.0


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="tldraw_rng: the seed must be a str, not int"):
        D.tldraw_rng(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"stroke_cells: cell must be > 0 and half >= 0 \(got cell=0, half=1\)"):
        D.stroke_cells([np.zeros((2, 2))], 1, 0)
    with pytest.raises(ValueError, match=r"stroke_cells: cell must be > 0 and half >= 0 \(got cell=1, half=-1\)"):
        D.stroke_cells([np.zeros((2, 2))], -1, 1)
    with pytest.raises(ValueError, match=r"stroke_cells: the strokes reach cell 2000000001 from the origin, beyond"):
        D.stroke_cells([np.array([[1e9, 0.0], [1e9 + 1, 0.0]])], 0.25, 0.5)
    with pytest.raises(ValueError, match=r"stroke_visible_fraction: stroke widths must be > 0 \(got \[2.0, 0.0\]\)"):
        D.stroke_visible_fraction([np.zeros((2, 2))], 2.0, [([np.zeros((2, 2))], 0.0)])
