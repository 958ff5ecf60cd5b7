"""Occlusion against the real editors' pixels (``tools/pixel-probe``).

The probe renders each page in the real tldraw or Excalidraw editor and gives, per shape
in view, its own pixel count and how many of them a person still sees (see the probe's
header). A shape is **occluded by the pixels** when fewer than ``VISIBLE_MIN`` of its own
pixels are visible; shapes with fewer than ``OWN_MIN`` own pixels at the probe's zoom
(a hairline, a glyph-sized dot, Excalidraw's frames, which draw no outline in export) say
nothing and are left out. :func:`agreement` observes the same page with the probe's
viewport and compares each shape's label with that.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Dict, FrozenSet, List, Optional, Set, Tuple

from tests.conformance import tldraw_harness
from tests.conformance.excalidraw_harness import harness_dir as excalidraw_dir
from tests.conformance.harness_common import ROOT

PROBE = ROOT / "tools" / "pixel-probe" / "probe.mjs"
#: Share of its own pixels below which a shape counts as hidden from a person.
VISIBLE_MIN = 0.1
#: Own pixels a shape needs at the probe's zoom to be judged at all.
OWN_MIN = 16
#: Seconds one probe run may take.
TIMEOUT = 300


def unavailable_reason(editor: str) -> Optional[str]:
    """Why the probe cannot run for ``editor`` here, or None."""
    if editor == "tldraw":
        why = tldraw_harness.unavailable_reason()
    else:
        from tests.conformance.excalidraw_harness import unavailable_reason as ex_reason

        why = ex_reason()
    if why is None and shutil.which("node") is None:
        why = "node is not on PATH"
    if why is None and editor == "excalidraw":
        page = harness(editor) / "dist" / "page.js"
        if page.is_file() and "probeScene" not in page.read_text(encoding="utf-8", errors="replace"):
            why = (f"the Excalidraw harness in {page.parent.parent} predates the pixel probe "
                   "(bash tools/setup-harnesses.sh bundles it again)")
    return why


def harness(editor: str) -> Path:
    h = tldraw_harness.harness_dir() if editor == "tldraw" else excalidraw_dir()
    if h is None:
        raise RuntimeError(unavailable_reason(editor) or "no harness")
    return h


def run_probe(editor: str, path: Path, *extra: str) -> Dict[str, Any]:
    """The probe's JSON for one file."""
    return run_probes(editor, [path], *extra)[0]


def run_probes(editor: str, paths: List[Path], *extra: str) -> List[Dict[str, Any]]:
    """The probe's JSON for each file, from one browser session."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "probe.json"
        proc = subprocess.run(["node", str(PROBE), "--editor", editor, "--harness", str(harness(editor)),
                               *map(str, paths), "--out", str(out), *extra], capture_output=True, text=True,
                              timeout=TIMEOUT * len(paths))
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"pixel probe failed on {paths} (exit {proc.returncode}): {proc.stderr[-2000:]}")
        result: Dict[str, Any] = json.loads(out.read_text())
    files: List[Dict[str, Any]] = result["files"] if "files" in result else [result]
    return files


def pixel_labels(probe: Dict[str, Any]) -> Dict[str, FrozenSet[bool]]:
    """Per judged shape id (at least ``OWN_MIN`` own pixels), whether it is hidden in each view of ``probe``."""
    out: Dict[str, Set[bool]] = {}
    for v in probe["views"]:
        for s in v["shapes"]:
            if s["own"] >= OWN_MIN:
                out.setdefault(s["id"], set()).add(s["visible"] / s["own"] < VISIBLE_MIN)
    return {k: frozenset(v) for k, v in out.items()}


def unsteady(probe: Dict[str, Any], shifted: Dict[str, Any]) -> Set[str]:
    """Shapes whose pixel label changes when the view moves by a fraction of a pixel.

    ``shifted`` is the probe of the same file with ``--shift`` (the pixel grid falling
    elsewhere on the page). A shape judged in both whose hidden-or-seen labels differ is
    hidden or seen according to where the grid falls, which no observation of the page can
    follow (a stacked copy of a hand-drawn outline whose slivers hold about a tenth of its
    pixels); such shapes are not judged.

    Examples
    --------
    >>> def probe(*shapes):
    ...     return {"views": [{"shapes": [{"id": i, "own": 100, "visible": v} for i, v in shapes]}]}
    >>> sorted(unsteady(probe(("a", 5), ("b", 50), ("c", 9)), probe(("a", 12), ("b", 60), ("d", 1))))
    ['a']
    """
    a, b = pixel_labels(probe), pixel_labels(shifted)
    return {k for k in a.keys() & b.keys() if a[k] != b[k]}


@dataclass
class Agreement:
    """Labels against pixels over the shapes the probe could judge."""

    judged: int = 0
    agree: int = 0
    #: too few own pixels, not a node of the document (Excalidraw's bound text), a paint order
    #: the file does not fix (tldraw gave it, or a shape stacked exactly on it, a random index key on load),
    #: or pixels that hang on where the grid falls (:func:`unsteady`)
    skipped: int = 0
    pixel_occluded: int = 0
    label_occluded: int = 0
    false_occluded: List[Tuple[str, float, str]] = field(default_factory=list)   # labelled occluded, seen
    missed: List[Tuple[str, float]] = field(default_factory=list)                # hidden, not labelled

    @property
    def rate(self) -> float:
        return self.agree / self.judged if self.judged else 1.0

    def add(self, other: "Agreement") -> None:
        for k in ("judged", "agree", "skipped", "pixel_occluded", "label_occluded"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.false_occluded += other.false_occluded
        self.missed += other.missed


def agreement(canvas: Any, probe: Dict[str, Any], occlusion: str = "painted",
              skip: AbstractSet[str] = frozenset()) -> Agreement:
    """Compare ``observe(canvas, viewport of each probed view, occlusion=...)`` with the probe's pixels,
    leaving out the shapes in ``skip`` (e.g. :func:`unsteady` ones)."""
    from spatialobs.canvas import observe

    out = Agreement()
    unordered = set(probe.get("unordered") or ())

    def place(i: str) -> Tuple[float, ...]:
        return tuple(round(float(v), 6) for v in canvas.page_bounds(i))

    # a shape stacked exactly on one whose key tldraw replaced: the file does not say which is on top
    randomly_stacked = {place(i) for i in unordered if i in canvas._nodes}

    def free(i: str) -> bool:  # its paint order is fixed by the file
        if i in unordered or any(a in unordered for a in canvas.ancestors(i)):
            return False
        return not randomly_stacked or place(i) not in randomly_stacked

    for v in probe["views"]:
        page = v["page"]
        if page not in canvas.pages:
            page = canvas.current_page
        vp = v["viewport"]
        obs = observe(canvas, (vp["x"], vp["y"], vp["w"], vp["h"]), page=page, max_objects=10**9,
                      max_relations=0, occlusion=occlusion)
        recs = {o["id"]: o for o in obs.objects}
        for s in v["shapes"]:
            rec = recs.get(s["id"])
            if (rec is None or s["own"] < OWN_MIN or s["id"] in skip or not free(s["id"])
                    or not free(rec.get("occludedBy", s["id"]))):
                out.skipped += 1
                continue
            frac = s["visible"] / s["own"]
            hidden = frac < VISIBLE_MIN
            said = rec["visibility"] == "occluded"
            out.judged += 1
            out.pixel_occluded += hidden
            out.label_occluded += said
            if hidden == said:
                out.agree += 1
            elif said:
                out.false_occluded.append((s["id"], round(frac, 3), rec.get("occludedBy", "")))
            else:
                out.missed.append((s["id"], round(frac, 3)))
    return out
