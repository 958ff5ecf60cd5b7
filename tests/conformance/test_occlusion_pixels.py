"""``occluded`` against what the real tldraw and Excalidraw editors paint.

For every shared real file and for generated stress pages (stacks, copies, nested frames,
translucency, rotation, every fill kind), the pixel probe (``tools/pixel-probe``) renders
the page in the real editor and measures each shape's visible pixels; the observation of
the same viewport must say ``occluded`` exactly for the shapes a person cannot see (fewer
than 10% of their own pixels visible) on at least ``TARGET`` of the judged shapes, per
file. The paper's bounds rule is measured beside it and must do worse where outlines
and text are common. Large pages are tiled at zoom 0.25 (``--min-zoom``) to keep the
run short; ``docs/observation-rules.md`` has the measurements at zoom 0.5. Shapes whose
pixels hang on where the pixel grid falls (seen in one probe, hidden in another with the
view moved by a fraction of a pixel) are not judged; the files where that happens are
probed twice (``GRID_CHECKED``).
"""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set, Tuple

import pytest

from spatialobs.canvas import Canvas, load
from tests.conformance import pixel_probe as pp
from tests.conformance.conftest import require
from tests.conftest import shared_files

#: Share of judged shapes whose label must match the pixels, per file.
TARGET = 0.99
#: Files probed a second time with the pixel grid moved by ``GRID_SHIFT`` of a pixel; shapes whose
#: pixel label changes with it are not judged (:func:`pixel_probe.unsteady`). VictoryZone-Front is a
#: wireframe of exact copies of hand-drawn outlines: tldraw seeds each outline's wobble with the
#: shape's id, so a copy on top leaves slivers of the stroke below showing, fractions of a pixel wide,
#: and whether they hold a tenth of its pixels turns on where the grid falls (moving the view by 3/8
#: pixel turns 38 of its shapes from seen to hidden or back at zoom 0.25, 50 at zoom 0.5; see
#: docs/observation-rules.md). Every other file agrees on every judged shape, so leaving shapes out
#: could not lower it, and it is not probed twice (CI time).
GRID_CHECKED = frozenset({"QuentinJoanon__VictoryZone-Front__wireframe.tldr"})
#: Pixels the second probe moves the view by (right and down).
GRID_SHIFT = 0.375
#: Largest share of a file's judged shapes that may be left out as unsteady (measured: 1.9% at zoom 0.25).
UNSTEADY_MAX = 0.03
REAL = shared_files("canvases", "*.tldr") + shared_files("canvases", "*.excalidraw")
#: The seeds of the generated stress pages (one page per editor and seed).
STRESS_SEEDS = (1, 2)


def _editor(path: Path) -> str:
    return "tldraw" if path.suffix == ".tldr" else "excalidraw"


def stress_canvas(seed: int) -> Canvas:
    """A page of the cases occlusion turns on, placed on a grid, with a seeded random stack."""
    rng = random.Random(seed)
    c = Canvas()
    page = c.current_page
    assert page is not None
    k = iter(range(10**6))

    def add(nid: str, typ: str, x: float, y: float, w: float, h: float, parent: str = page, **kw: Any) -> str:
        c.add({"id": f"shape:{nid}", "type": typ, "parent": parent, "index": f"a{next(k):06d}", "x": x, "y": y,
               "w": w, "h": h, **kw})
        return f"shape:{nid}"

    def geo(nid: str, x: float, y: float, w: float, h: float, fill: str, kind: str = "rectangle", parent: str = page,
            **kw: Any) -> str:
        return add(nid, "geo", x, y, w, h, parent, style={"color": "blue", "fill": fill, "dash": "solid", "size": "m"},
                   props={"geo": kind}, **kw)

    def text(nid: str, x: float, y: float, parent: str = page, t: str = "label") -> str:
        return add(nid, "text", x, y, 60, 30, parent, text=t, style={"color": "black", "size": "m"})

    # a row of text under each fill kind (tldraw's fills; Excalidraw maps them to its styles)
    for i, fill in enumerate(["none", "semi", "solid", "pattern", "fill", "lined-fill"]):
        x = 40 + i * 260
        text(f"t_{fill}", x + 60, 80)
        geo(f"g_{fill}", x, 40, 200, 120, fill)
    # translucency: the same solid cover at three opacities
    for i, op in enumerate([0.5, 0.89, 0.95]):
        x = 40 + i * 260
        text(f"t_op{i}", x + 60, 280)
        geo(f"g_op{i}", x, 240, 200, 120, "solid", opacity=op)
    # outlines: an ellipse covers a text at its centre but leaves a rectangle's corners
    text("t_ell", 900, 290)
    geo("g_ell", 840, 230, 200, 140, "solid", kind="ellipse")
    geo("r_under", 1100, 230, 200, 140, "solid")
    geo("e_over", 1100, 230, 200, 140, "solid", kind="ellipse")
    # rotation: a square turned 45 degrees covers its centre, not its bounds' corners
    s = 200 / math.sqrt(2)
    text("t_rot_in", 1440, 290)
    text("t_rot_out", 1345, 235, t="x")
    geo("g_rot", 1470, 230, s, s, "solid", rotation=math.pi / 4)
    # exact copies and a stack of equal cards
    # exact copies, drawn smooth (roughness 0): a sketchy copy's stroke is jittered by its own seed
    for cid in ("copy_a", "copy_b"):
        add(cid, "geo", 40, 440, 200, 120, style={"color": "blue", "fill": "none", "dash": "solid", "size": "m",
                                                  "roughness": 0}, props={"geo": "rectangle"})
    for j in range(3):
        geo(f"stack{j}", 300 + 16 * j, 440 + 16 * j, 200, 120, "solid")
    # almost covered: 4% of a card left showing, then 25%
    geo("g_almost", 40, 620, 200, 100, "solid")
    geo("g_almost_cover", 48, 612, 200, 120, "solid")
    geo("g_quarter", 300, 620, 200, 100, "solid")
    geo("g_quarter_cover", 350, 612, 200, 120, "solid")
    # nested frames: a card inside the inner frame, covered by a card of the outer one
    f1 = add("f_outer", "frame", 600, 420, 520, 320, name="Outer")
    f2 = add("f_inner", "frame", 20, 40, 240, 200, parent=f1, name="Inner")
    text("t_inner", 40, 60, parent=f2)
    geo("g_inner_low", 120, 100, 100, 60, "none", parent=f2)
    geo("g_outer_cover", 20, 40, 120, 100, "solid", parent=f1)
    geo("g_clip_out", 200, 150, 120, 80, "solid", parent=f2)  # sticks out of the inner frame
    text("t_beside", 300, 60, parent=f1)
    # a seeded random stack of cards and labels
    for j in range(24):
        rx, ry = 1200 + rng.uniform(0, 500), 440 + rng.uniform(0, 300)
        if rng.random() < 0.5:
            text(f"rt{j}", rx, ry, t=rng.choice(["a", "note", "longer label"]))
        else:
            geo(f"rg{j}", rx, ry, rng.uniform(40, 180), rng.uniform(30, 120), rng.choice(["none", "solid", "semi"]),
                kind=rng.choice(["rectangle", "ellipse", "diamond"]), rotation=rng.choice([0.0, 0.0, 0.3]))
    return c


def _stress_file(tmp: Path, editor: str, seed: int) -> Path:
    c = stress_canvas(seed)
    if editor == "tldraw":
        path = tmp / f"stress{seed}.tldr"
        path.write_text(json.dumps(c.to_tldraw()))
    else:
        path = tmp / f"stress{seed}.excalidraw"
        path.write_text(json.dumps(c.to_excalidraw()))
    return path


_PROBES: Dict[Path, Dict[str, Any]] = {}
#: Per editor, this module's stress pages (written once per module by :func:`stress_pages`).
_STRESS: Dict[str, List[Path]] = {}


@pytest.fixture(scope="module", autouse=True)
def stress_pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, List[Path]]]:
    """The stress pages of both editors, written before the module's first probe so that it renders them in
    the same browser session as the real files (a browser start per page was most of a stress test's time)."""
    tmp = tmp_path_factory.mktemp("stress")
    for editor in ("tldraw", "excalidraw"):
        _STRESS[editor] = [_stress_file(tmp, editor, seed) for seed in STRESS_SEEDS]
    yield _STRESS
    _STRESS.clear()


def _measure(path: Path) -> Tuple[pp.Agreement, pp.Agreement, int]:
    """Ours and the paper's rule against the pixels, on the shapes whose pixels do not hang on the grid,
    and how many were left out for that."""
    editor = _editor(path)
    require(editor, pp.unavailable_reason(editor))
    if path not in _PROBES:
        # the real files and the stress pages of this editor in one browser session (starting one is most of a
        # small file's time); a stress page first (a run of the stress tests alone): the stress pages
        stress = _STRESS.get(editor, [])
        pages = ([p for p in REAL if _editor(p) == editor] if path in REAL else []) + stress
        batch = [p for p in pages if p not in _PROBES] if path in pages else [path]
        for p, probe in zip(batch, pp.run_probes(editor, batch, "--min-zoom", "0.25")):
            _PROBES[p] = probe
    probe = _PROBES.pop(path)
    canvas = load(path)
    skip: Set[str] = set()
    if path.name in GRID_CHECKED:
        skip = pp.unsteady(probe, pp.run_probe(editor, path, "--min-zoom", "0.25", "--shift", str(GRID_SHIFT)))
    return (pp.agreement(canvas, probe, skip=skip), pp.agreement(canvas, probe, occlusion="paper", skip=skip),
            len(skip))


# the first file of each editor probes all of that editor's files (57-92 s for tldraw on an idle
# machine, past 120 s under load), and the wireframe's second probe adds about 45 s
@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split("__")[1][:24])
def test_real_file_labels_agree_with_the_pixels(path: Path) -> None:
    """Slow by design for the first file of each editor: it probes every real file of that editor in one
    browser session (one render per pass of disjoint shapes, 8 to 21 per view; 57 s for the tldraw files,
    most of it the 2,504-shape wireframe, on the shared 2-core machine); the other files take their results.
    The files of ``GRID_CHECKED`` are probed once more with the grid moved (about 45 s for the wireframe).
    """
    ours, paper, unsteady = _measure(path)
    assert ours.judged > 0
    assert unsteady <= UNSTEADY_MAX * (ours.judged + unsteady), f"{path.name}: {unsteady} shapes hang on the grid"
    assert ours.rate >= TARGET, (f"{path.name}: {ours.agree}/{ours.judged} agree; labelled occluded but seen "
                               f"{ours.false_occluded[:5]}, hidden but not labelled {ours.missed[:5]}")
    assert ours.rate >= paper.rate


@pytest.mark.parametrize("editor", ["tldraw", "excalidraw"])
@pytest.mark.parametrize("seed", STRESS_SEEDS)
def test_stress_page_labels_agree_with_the_pixels(stress_pages: Dict[str, List[Path]], editor: str,
                                                  seed: int) -> None:
    path = stress_pages[editor][STRESS_SEEDS.index(seed)]
    ours, paper, _ = _measure(path)
    assert ours.judged >= 40
    assert ours.rate >= TARGET, (f"{editor} stress {seed}: {ours.agree}/{ours.judged}; false {ours.false_occluded}, "
                                 f"missed {ours.missed}")
    # the page has hidden shapes, and the paper's rule calls visible ones occluded
    assert ours.pixel_occluded >= 3
    assert paper.rate < ours.rate


def test_unsteady_shapes_are_left_out_and_only_they() -> None:
    c = Canvas()
    page = c.current_page
    for k, nid in enumerate(("low", "high", "far")):
        c.add({"id": nid, "type": "geo", "parent": page, "index": f"a{k}", "x": 0 if nid != "far" else 500, "y": 0,
               "w": 100, "h": 100, "style": {"fill": "solid"}})

    def probe(low_visible: int) -> Dict[str, Any]:
        return {"views": [{"page": page, "viewport": {"x": -10, "y": -10, "w": 800, "h": 400}, "zoom": 1,
                           "shapes": [{"id": "low", "own": 400, "visible": low_visible},
                                      {"id": "high", "own": 400, "visible": 400},
                                      {"id": "far", "own": 400, "visible": 400}]}]}

    a, b = probe(30), probe(50)  # 7.5% of "low" shows, then 12.5%: hidden, then seen
    assert pp.unsteady(a, b) == {"low"}
    assert pp.unsteady(a, a) == set()
    full = pp.agreement(c, b)
    assert (full.judged, full.agree, full.false_occluded) == (3, 2, [("low", 0.125, "high")])
    kept = pp.agreement(c, b, skip=pp.unsteady(a, b))
    assert (kept.judged, kept.agree, kept.skipped) == (2, 2, 1)


@pytest.mark.parametrize(("args", "message"), [
    (["--shift", "1"], "--shift PX with 0 <= PX < 1"),
    (["--shift", "-0.5"], "--shift PX with 0 <= PX < 1"),
    (["--shift", "x"], "--shift PX with 0 <= PX < 1"),
    (["--shift"], "--shift needs a value"),
])
def test_the_probe_names_a_bad_shift(args: Any, message: str) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    proc = subprocess.run(["node", str(pp.PROBE), "--editor", "tldraw", "--harness", "none", "page.tldr", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"error: {message}" in proc.stderr
