"""Page bounds of the real Excalidraw scenes against what the real Excalidraw editor computes.

Every shared ``.excalidraw`` file is opened by the harness the way File › Open does
(``loadFromBlob``: restore with repaired bindings), and each element's bounds come from
Excalidraw's ``getCommonBounds``. Agreement is measured per element kind; the targets
are the fraction of elements within the kind's tolerance (see
:func:`tests.conformance.excalidraw_harness.within`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest

from spatialobs.canvas import load
from tests.conformance.excalidraw_harness import KINDS, compare_bounds
from tests.conftest import shared_files

SHARED = shared_files("canvases", "*.excalidraw")
#: Fraction of elements of each kind that must agree within the kind's tolerance.
TARGETS = {"rectangle-like": 1.0, "rotated": 1.0, "linear": 0.98, "freedraw": 0.98, "text": 0.97}


def _short(p: Path) -> str:
    return p.name[:40]


@pytest.fixture(scope="module")
def shared_results(excalidraw_harness) -> Dict[Path, Dict[str, Any]]:
    """Harness results of every shared file, in one browser session."""
    if not SHARED:
        pytest.skip("real data folder ../shared/data/canvases has no .excalidraw file")
    return dict(zip(SHARED, excalidraw_harness.results(SHARED)))


@pytest.fixture(scope="module")
def agreement(shared_results) -> Dict[str, List[Dict[str, Any]]]:
    """Rows of :func:`compare_bounds` over all shared files, per kind (each row names its file)."""
    out: Dict[str, List[Dict[str, Any]]] = {}
    for path, result in shared_results.items():
        assert result["ok"], (path.name, result["load"])
        for kind, rows in compare_bounds(load(path), result).items():
            out.setdefault(kind, []).extend(dict(r, file=path.name) for r in rows)
    return out


def _figures(rows: List[Dict[str, Any]]) -> str:
    n = len(rows)
    ok = sum(r["ok"] for r in rows)
    worst = max((r["error"] for r in rows), default=0.0)
    return f"{ok}/{n} ({100.0 * ok / n:.1f} %) within tolerance, largest difference {worst:.3g}"


@pytest.mark.parametrize("path", SHARED, ids=_short)
def test_excalidraw_opens_the_file_cleanly(path, shared_results):
    r = shared_results[path]
    assert r["ok"], r["load"]
    assert r["consoleErrors"] == []
    # the harness serves everything Excalidraw asks for from the package itself
    assert r["blockedRequests"] == []
    # restore drops no live element and invents none
    assert r["restore"]["dropped"] == [] and r["restore"]["added"] == []
    # the editor keeps the scene as restore left it (no re-measuring on load)
    assert r["editor"] == {"changed": [], "missing": [], "added": []}


@pytest.mark.parametrize("path", SHARED, ids=_short)
def test_every_live_element_is_a_node_or_bound_text(path, shared_results):
    c = load(path)
    for el in shared_results[path]["elements"]:
        if el["isDeleted"] or el["id"] in c.nodes:
            continue
        assert el["type"] == "text" and el.get("containerId") in c.nodes, el["id"]
        assert c.node(el["containerId"]).text is not None


@pytest.mark.parametrize("kind", KINDS)
def test_bounds_agree_with_excalidraw(kind, agreement):
    rows = agreement.get(kind, [])
    if not rows:
        pytest.skip(f"the shared files have no {kind} element (test_excalidraw_scene.py covers it)")
    print(f"\n{kind}: {_figures(rows)}")
    ok = sum(r["ok"] for r in rows) / len(rows)
    worst = sorted(rows, key=lambda r: -r["error"])[:5]
    assert ok >= TARGETS[kind], (kind, _figures(rows), [(r["file"], r["id"], r["ours"], r["theirs"]) for r in worst])


def test_lines_and_arrows_are_excalidraws_curve_exactly(shared_results):
    # Without rough.js' jitter (roughness 0) Excalidraw's bounds of a line or arrow are
    # those of the curve through its points (rounded) or of the polyline (sharp): ours
    # must be the same numbers, not merely close.
    checked = 0
    for path, result in shared_results.items():
        c = load(path)
        for el in result["elements"]:
            if el["isDeleted"] or el["type"] not in ("line", "arrow") or el["id"] not in c.nodes:
                continue
            ours = c.page_bounds(el["id"])
            scale = max(1.0, *(abs(v) for v in el["curveBounds"]))
            assert max(abs(a - b) for a, b in zip(ours, el["curveBounds"])) <= 1e-9 * scale, (path.name, el["id"])
            checked += 1
    assert checked > 0


def test_agreement_figures(agreement, shared_results):
    # One line per kind, for the record (run with -s to see them).
    lines = [f"{k}: {_figures(agreement[k])}" for k in KINDS if agreement.get(k)]
    lines.append(f"not a node (bound text, the container's text): {len(agreement.get('not a node', []))}")
    print("\nExcalidraw " + next(iter(shared_results.values()))["meta"]["excalidrawVersion"] + "\n" + "\n".join(lines))
    assert sum(len(agreement.get(k, [])) for k in KINDS) > 0
