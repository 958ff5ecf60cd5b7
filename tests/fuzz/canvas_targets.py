"""Canvas fuzz target: what one input runs through, and how inputs are made from (seed, number).

Run by the same harness as the screen side (:mod:`tests.fuzz.screens`, with
``--target canvas_targets``). Kinds of input:

``canvas``
    a mutated real canvas (every ``.tldr`` and ``.excalidraw`` of the shared data
    folder; marker form, see :mod:`tests.fuzz.mutate`), given to ``load`` as parsed
    JSON, then observed on every page, the observation written as JSON, and the
    canvas written with ``to_json``, ``to_tldraw`` and ``to_excalidraw`` (one page);
``canvas-file``
    the JSON text of a mutated canvas, damaged at the byte level now and then,
    loaded from a file and observed;
``ops``
    a mutated op reply (from a seed list of every op, marker form) applied by an
    ``Executor`` to a real canvas, and written back; half the time as reply text
    through ``parse_ops``.
"""

from __future__ import annotations

import json
import os
import random
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Tuple

from tests.fuzz import cases, mutate
from tests.fuzz.targets import signature  # noqa: F401 - the harness reads it from here

CANVASES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "canvases"
KINDS = ("canvas", "canvas-file", "ops")
WEIGHTS = (0.55, 0.15, 0.3)

#: Keys the canvas importers and the executor look at, for renaming one key into another.
CANVAS_KEYS = ["records", "elements", "id", "type", "typeName", "parentId", "index", "x", "y", "w", "h", "width",
               "height", "props", "meta", "rotation", "opacity", "points", "text", "richText", "boundElements",
               "containerId", "startBinding", "endBinding", "fromId", "toId", "terminal", "geo", "scale", "angle",
               "fontFamily", "fontSize", "groupIds", "frameId", "op", "ops", "html", "style", "styles", "page",
               "target", "from", "to", "ids", "changes", "parent"]

#: One of every op, on the aliases they make: the seed reply of the ``ops`` kind.
SEED_OPS: List[Dict[str, Any]] = [
    {"op": "create_artboard", "id": "home", "name": "Home", "x": 0, "y": 0, "w": 800, "h": 600,
     "background": "#fafafa"},
    {"op": "parse_html", "target": "home", "html": "<div style='padding:8px'><h1 id='t'>Hi</h1><p>Some "
     "<b>text</b></p><ul><li>a</li><li>b</li></ul><img src='x.png' width='40' height='30'></div>"},
    {"op": "create_shape", "id": "box", "shape": "rectangle", "x": 40, "y": 300, "w": 120, "h": 60, "text": "Box",
     "color": "red", "fill": "solid", "parent": "home"},
    {"op": "create_shape", "id": "note", "shape": "note", "x": 300, "y": 300, "text": "Note"},
    {"op": "create_arrow", "id": "arr", "from": "box", "to": "note", "text": "to", "bend": 10},
    {"op": "update_styles", "id": "box", "styles": {"background-color": "#00ff00", "font-size": "24px"}},
    {"op": "set_text", "id": "t", "text": "Hello"},
    {"op": "update_node", "id": "note", "changes": {"w": 220, "rotation": 0.5}},
    {"op": "move_node", "id": "box", "dx": 10, "dy": 5},
    {"op": "bind", "id": "arr", "terminal": "start", "to": "t", "anchor": [0.2, 0.5]},
    {"op": "unbind", "id": "arr", "terminal": "end"},
    {"op": "place", "ids": ["note"], "into": "home", "inset": 8},
    {"op": "create_shape", "id": "c", "shape": "ellipse", "x": 500, "y": 700, "w": 80, "h": 40},
    {"op": "align", "ids": ["box", "note", "c"], "align": "top"},
    {"op": "distribute", "ids": ["box", "note", "c"], "axis": "horizontal"},
    {"op": "group", "ids": ["box", "c"], "ref": "g"},
    {"op": "duplicate", "id": "g", "dx": 0, "dy": 200, "ref": "g2"},
    {"op": "ungroup", "id": "g2"},
    {"op": "lock", "id": "note"},
    {"op": "unlock", "id": "note"},
    {"op": "set_viewport", "x": -40, "y": -20, "zoom": 1.5},
    {"op": "create_from_mermaid", "mermaid": "flowchart LR\n  A[a] -->|x| B{b}\n  subgraph s\n    B -.-> C((c))\n  end",
     "y": 900},
    {"op": "delete_node", "id": "t"},
]


@lru_cache(maxsize=None)
def seeds() -> Tuple[List[Any], List[List[Any]]]:
    """The real canvas documents (one small one when the shared folder is absent) and their paths."""
    docs: List[Any] = []
    for p in sorted(CANVASES.glob("*")):
        if p.suffix in (".tldr", ".excalidraw"):
            with open(p, encoding="utf-8") as f:
                docs.append(json.load(f))
    if not docs:
        docs.append({"type": "excalidraw", "elements": [
            {"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 10, "height": 10},
            {"id": "t", "type": "text", "x": 1, "y": 1, "width": 8, "height": 5, "text": "hi", "containerId": "a"}]})
    for d in docs:
        mutate.register_pristine(d)
    return docs, [mutate.paths(d) for d in docs]


@lru_cache(maxsize=None)
def ops_seed() -> Tuple[Any, List[Any]]:
    doc = {"ops": SEED_OPS}
    mutate.register_pristine(doc)
    return doc, mutate.paths(doc)


def make_input(seed: int, number: int) -> Tuple[str, Any]:
    """The input ``number`` of run ``seed``: (kind, payload); a pure function of both."""
    rng = random.Random(f"canvas:{seed}:{number}")
    kind = rng.choices(KINDS, WEIGHTS)[0]
    docs, paths = seeds()
    k = rng.randrange(len(docs))
    if kind == "ops":
        base, opaths = ops_seed()
        reply = mutate.mutate(base, rng, opaths, rounds=rng.choice((1, 2, 3, 5)), keys=CANVAS_KEYS)
        return kind, {"canvas": k, "ops": reply, "as_text": rng.random() < 0.5}
    doc = mutate.mutate(docs[k], rng, paths[k], keys=CANVAS_KEYS)
    if kind == "canvas":
        return kind, doc
    try:
        text = json.dumps(mutate.materialize(doc)).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        text = json.dumps(docs[k]).encode("utf-8")
    if rng.random() < 0.5:
        text = mutate.mutate_bytes(text, rng)
    return kind, text


def _use(canvas: Any) -> None:
    from spatialobs import SpatialObsError
    from spatialobs.canvas import observe

    for pid in list(canvas.page_ids())[:3]:
        obs = observe(canvas, page=pid)
        obs.to_json()
    canvas.to_json()
    pages = list(canvas.page_ids())
    for write in (canvas.to_tldraw, lambda: canvas.to_excalidraw(page=pages[0] if pages else None)):
        try:
            write()
        except SpatialObsError:
            pass  # a document a format cannot hold is refused with a typed error; the others still run


def run(kind: str, payload: Any, workdir: str) -> None:
    """Run one input; anything but a SpatialObsError propagates."""
    from spatialobs import SpatialObsError
    from spatialobs.canvas import Executor, load

    try:
        if kind == "canvas":
            _use(load(mutate.materialize(payload)))
        elif kind == "canvas-file":
            path = os.path.join(workdir, "input.json")
            with open(path, "wb") as f:
                f.write(payload)
            _use(load(path))
        elif kind == "ops":
            docs, _ = seeds()
            canvas = load(docs[payload["canvas"] % len(docs)])
            reply = mutate.materialize(payload["ops"])
            ex = Executor(canvas)
            if payload.get("as_text"):
                try:
                    text = "```canvas_ops\n" + json.dumps(reply) + "\n```"
                except (ValueError, RecursionError):
                    text = "```canvas_ops\n{}\n```"
                report = ex.apply(text)
            else:
                ops = reply.get("ops") if isinstance(reply, dict) else reply
                report = ex.apply(ops if isinstance(ops, list) else [ops])
            json.dumps(report.to_dict())
            _use(canvas)
        else:
            raise ValueError(f"unknown input kind {kind!r}")
    except SpatialObsError:
        pass


#: How kept inputs of this target are named (see :mod:`tests.fuzz.cases`).
FORMATS = ((".canvas-file.json", "canvas-file", True), (".ops.json", "ops", False),
           (".canvas.json", "canvas", False))


def load_case(path: Path) -> Tuple[str, Any]:
    """A kept input: ``*.canvas-file.json`` (raw text), ``*.ops.json`` (op reply) or ``*.canvas.json``."""
    return cases.load_case(path, FORMATS)


def save_case(folder: Path, stem: str, kind: str, payload: Any) -> Path:
    return cases.save_case(folder, stem, kind, payload, FORMATS)


describe = cases.describe
