"""Text measurement in C++ against its Python twin: load + first observation of text-heavy files.

Issue 31 ("arrows, strokes and text in C++"): tldraw text shapes are measured when a file
loads (``textmeasure.text_shape_size``), arrow labels when the page's geometry is derived.
The sums over each string and the line layout run in ``_core.TextFont`` while
``textmeasure.TEXT_KERNEL`` is true (``impl=spatialobs``) and in the pure-Python twin when it
is false (``impl=twin``), with byte-identical observations (``tests/test_canvas_text_kernel.py``).

Groups: ``load + first observe + to_json`` of the text-heavy shared files (taramti.com
wireframes, VictoryZone-Front, flick-the-switch) and of a seeded page of labelled cards (every
card of ``diagram_workspace`` gets a wrapped text shape of 2-14 words, every arrow a label);
``measure every text shape`` measures the page's texts alone (``text_shape_size`` without its
cache). Nothing is cached between rounds: the measurement cache is cleared before each. Run with
``--benchmark-timer=time.process_time`` in several processes and combine the runs with
``python benchmarks/report.py run1.json run2.json ...`` (the ``twin / spatialobs`` column).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, List, Tuple

import numpy as np
import pytest

from conftest import sizes
from spatialobs.canvas import load, observe
from spatialobs.canvas.document import textmeasure as tm
from spatialobs.canvas.scenarios import diagram_workspace

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "canvases"
FILES = [SHARED / f for f in ("3dyuval__taramti.com__wireframes.tldr", "QuentinJoanon__VictoryZone-Front__wireframe.tldr",
                              "pyrbin__flick-the-switch__design.tldr")]
FILES = [p for p in FILES if p.is_file()]
IMPLS = {"spatialobs": True, "twin": False}
_WORDS = ("the of and to in is for on with as by at from this that be are it or an was will not all can has "
          "user service queue cache request response token session database index shard replica worker job "
          "scheduler payment invoice order cart checkout login signup profile settings dashboard report export "
          "import upload download retry timeout error warning notice event stream batch window trigger "
          "Kubernetes PostgreSQL Redis Kafka S3 API HTTP gRPC JSON OAuth2 v2.1 x86-64 well-known end-to-end "
          "数据库 缓存 服务 用户 😀 ✅ café naïve façade").split()
_FONTS = ("draw", "sans", "serif", "mono")


@lru_cache(maxsize=None)
def cards_page(n: int) -> bytes:
    """A tldraw file of ``diagram_workspace(n)`` with a text shape on every card and a label on every arrow."""
    rng = np.random.default_rng(7)
    recs = diagram_workspace(n, seed=2).to_tldraw()
    extra = []
    for r in recs["records"]:
        if r.get("typeName") != "shape":
            continue
        if r["type"] == "geo":
            words = rng.choice(len(_WORDS), int(rng.integers(2, 15)))
            text = " ".join(_WORDS[i] for i in words)
            auto = bool(rng.integers(0, 4) == 0)
            extra.append({"id": r["id"] + "_label", "typeName": "shape", "type": "text", "parentId": r["parentId"],
                          "index": r["index"] + "V", "x": r["x"] + 10.0, "y": r["y"] + 10.0, "rotation": 0.0,
                          "opacity": 1.0, "isLocked": False, "meta": {},
                          "props": {"color": "black", "size": ("s", "m", "l")[int(rng.integers(0, 3))],
                                    "w": max(r["props"]["w"] - 20.0, 16.0), "font": _FONTS[int(rng.integers(0, 4))],
                                    "textAlign": "start", "autoSize": auto, "scale": 1,
                                    "richText": {"type": "doc", "content": [{"type": "paragraph", "content": [
                                        {"type": "text", "text": text}]}]}}})
        elif r["type"] == "arrow":
            text = " ".join(_WORDS[i] for i in rng.choice(len(_WORDS), int(rng.integers(1, 4))))
            r["props"]["richText"] = {"type": "doc", "content": [{"type": "paragraph", "content": [
                {"type": "text", "text": text}]}]}
    recs["records"].extend(extra)
    return json.dumps(recs).encode()


def _first_observation(data: bytes, kernel: bool) -> str:
    tm.TEXT_KERNEL = kernel
    tm._text_shape_size.cache_clear()
    try:
        return observe(load(data)).to_json()
    finally:
        tm.TEXT_KERNEL = True


@pytest.fixture(autouse=True)
def _kernel_back_on() -> Any:
    yield
    tm.TEXT_KERNEL = True
    tm._text_shape_size.cache_clear()


@pytest.mark.skipif(not FILES, reason="../shared/data/canvases is absent")
@pytest.mark.parametrize("impl", list(IMPLS))
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name.split("__")[1][:24])
def test_text_files_load_first_observe(benchmark: Any, path: Path, impl: str) -> None:
    data = path.read_bytes()
    benchmark.group = f"text: load + first observe + to_json, {path.name.split('__')[1][:24]}"
    benchmark.extra_info["bytes"] = len(data)
    out = benchmark(_first_observation, data, IMPLS[impl])
    assert out == _first_observation(data, not IMPLS[impl])


@pytest.mark.parametrize("impl", list(IMPLS))
@pytest.mark.parametrize("n", sizes(10_000, 30_000))
def test_cards_page_load_first_observe(benchmark: Any, n: int, impl: str) -> None:
    data = cards_page(n)
    benchmark.group = f"text: load + first observe + to_json, labelled cards n={n}"
    benchmark.extra_info["bytes"] = len(data)
    out = benchmark.pedantic(_first_observation, args=(data, IMPLS[impl]), rounds=5, warmup_rounds=1)
    assert out == _first_observation(data, not IMPLS[impl])


def _texts(n: int) -> List[Tuple[str, str, str, float, Any]]:
    out = []
    for r in json.loads(cards_page(n))["records"]:
        if r.get("type") == "text":
            p = r["props"]
            text = "\n".join("".join(c["text"] for c in para.get("content", [])) for para in p["richText"]["content"])
            out.append((text, p["font"], p["size"], 1.0, None if p["autoSize"] else p["w"]))
    return out


def _measure_all(items: List[Tuple[str, str, str, float, Any]], kernel: bool) -> list:
    tm.TEXT_KERNEL = kernel
    try:
        return [tm._text_shape_size.__wrapped__(*it) for it in items]
    finally:
        tm.TEXT_KERNEL = True


@pytest.mark.parametrize("impl", list(IMPLS))
@pytest.mark.parametrize("n", sizes(10_000, 30_000))
def test_measure_every_text_shape(benchmark: Any, n: int, impl: str) -> None:
    items = _texts(n)
    benchmark.group = f"text: measure every text shape, labelled cards n={n}"
    benchmark.extra_info["texts"] = len(items)
    out = benchmark(_measure_all, items, IMPLS[impl])
    assert repr(out) == repr(_measure_all(items, not IMPLS[impl]))
