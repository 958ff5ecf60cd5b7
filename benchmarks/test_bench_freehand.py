"""Freehand smoothing compiled against its Python twin: load + first observation + ``to_json``.

Issue 31 (arrows, strokes and text in C++): tldraw's freehand smoothing (the streamline of
``getStrokePoints``, the box of a draw stroke, the outline of a highlight) runs compiled
(``canvas/document/_cfreehand.pyx``); ``freehand.DRAW_KERNEL = False`` and
``freehand.STROKE_KERNEL = False`` send every stroke through the Python twin. Cases: the two
shared real files with the most strokes (flick-the-switch, 477 draw strokes; VictoryZone-Front)
and a generated page of 10⁴ long strokes (100–250 points each; three in four stored as base64
paths, the others as point dicts; one in ten a highlight, one in five rotated). One group per case,
``impl=kernel`` and ``impl=twin`` side by side; each result is checked against the other's.
Run with ``--benchmark-timer=time.process_time`` on a shared machine.
"""

from __future__ import annotations

import base64
import importlib
import json
import functools
import math
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

from spatialobs.canvas import load, observe

F = importlib.import_module("spatialobs.canvas.document.freehand")
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "canvases"
REAL = [SHARED / n for n in ("pyrbin__flick-the-switch__design.tldr", "QuentinJoanon__VictoryZone-Front__wireframe.tldr")]
REAL = [p for p in REAL if p.is_file()]
_SEEN: Dict[str, str] = {}


def _path(xy: np.ndarray) -> str:
    # tldraw's stored form: x, y, pressure of the first point as float32, then float16 steps
    head = np.array([xy[0, 0], xy[0, 1], 0.5], "<f4").tobytes()
    steps = np.column_stack([np.diff(xy, axis=0), np.full(len(xy) - 1, 0.0)]).astype("<f2").tobytes()
    return base64.b64encode(head + steps).decode()


@functools.lru_cache(maxsize=1)
def long_strokes(n: int, seed: int = 31) -> bytes:
    """A tldraw document of ``n`` long freehand strokes on one page (see the module docstring)."""
    rng = np.random.default_rng(seed)
    records: List[Dict[str, Any]] = [
        {"gridSize": 10, "name": "", "meta": {}, "id": "document:document", "typeName": "document"},
        {"meta": {}, "id": "page:page", "name": "Page 1", "index": "a1", "typeName": "page"}]
    side = int(math.ceil(math.sqrt(n)))
    for i in range(n):
        k = int(rng.integers(100, 251))
        turn = np.cumsum(rng.normal(0, 0.25, k))
        step = rng.uniform(1.0, 6.0)
        xy = np.column_stack([np.cumsum(np.cos(turn) * step), np.cumsum(np.sin(turn) * step)])
        xy = np.round(xy, 2)
        if i % 4:
            seg: Dict[str, Any] = {"type": "free", "path": _path(xy)}
        else:
            seg = {"type": "free", "points": [{"x": float(x), "y": float(y), "z": 0.5} for x, y in xy]}
        kind = "highlight" if i % 10 == 3 else "draw"
        props: Dict[str, Any] = {"segments": [seg], "color": "black", "size": ["s", "m", "l", "xl"][(i // 4) % 4],
                                 "isComplete": bool(i % 3), "isPen": False, "scale": 1}
        if kind == "draw":
            props.update({"fill": "none", "dash": "draw", "isClosed": False})
        records.append({"x": float(i % side) * 600.0, "y": float(i // side) * 600.0,
                        "rotation": 0.4 if i % 5 == 1 else 0, "isLocked": False, "opacity": 1, "meta": {},
                        "id": f"shape:s{i}", "type": kind, "props": props, "parentId": "page:page",
                        "index": f"a{i:06d}", "typeName": "shape"})
    return json.dumps({"tldrawFileFormatVersion": 1, "records": records}).encode()


def _first_observation(data: bytes) -> str:
    return observe(load(data)).to_json()


def _cases() -> List[Any]:
    out: List[Any] = [pytest.param(p, id=p.name.split("__")[1][:24]) for p in REAL]
    return out + [pytest.param("long", id="10^4 long strokes")]


@pytest.mark.parametrize("impl", ["kernel", "twin"])
@pytest.mark.parametrize("case", _cases())
def test_load_first_observe_strokes(benchmark: Any, monkeypatch: pytest.MonkeyPatch, case: Any, impl: str) -> None:
    data = long_strokes(10_000) if case == "long" else case.read_bytes()
    name = "10^4 long strokes" if case == "long" else case.name.split("__")[1]
    benchmark.group = f"freehand: load + first observe + to_json, {name}"
    on = impl == "kernel"
    monkeypatch.setattr(F, "DRAW_KERNEL", on)
    monkeypatch.setattr(F, "STROKE_KERNEL", on)
    out = benchmark.pedantic(_first_observation, args=(data,), rounds=3 if case == "long" else 8, iterations=1,
                             warmup_rounds=0 if case == "long" else 1)
    other = _SEEN.setdefault(name, out)
    assert out == other
    assert json.loads(out)["objects"]
