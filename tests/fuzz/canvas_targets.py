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
    ``Executor`` to a canvas, and written back; half the time as reply text
    through ``parse_ops``. The input carries the document it runs on (``canvas``: a
    real one while fuzzing, named in ``found_on``); a kept one carries a made-up
    document of the same editor, schema and pages (:func:`skeleton`), so that what a
    kept case runs never depends on the files beside the checkout.
"""

from __future__ import annotations

import copy
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


#: The seed document when the shared folder is absent: one rectangle holding a text.
BUILT_IN = {"type": "excalidraw", "elements": [
    {"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 10, "height": 10},
    {"id": "t", "type": "text", "x": 1, "y": 1, "width": 8, "height": 5, "text": "hi", "containerId": "a"}]}


@lru_cache(maxsize=None)
def seeds() -> Tuple[List[Any], List[List[Any]]]:
    """The real canvas documents (one small one when the shared folder is absent) and their paths."""
    docs: List[Any] = []
    for p in seed_names():
        with open(CANVASES / p, encoding="utf-8") as f:
            docs.append(json.load(f))
    if not docs:
        docs.append(copy.deepcopy(BUILT_IN))
    for d in docs:
        mutate.register_pristine(d)
    return docs, [mutate.paths(d) for d in docs]


@lru_cache(maxsize=None)
def seed_names() -> Tuple[str, ...]:
    """File names of the real canvas documents, in the order of :func:`seeds` (none without the shared folder)."""
    return tuple(p.name for p in sorted(CANVASES.glob("*")) if p.suffix in (".tldr", ".excalidraw"))


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
        names = seed_names()
        return kind, {"canvas": docs[k], "found_on": names[k] if names else "built-in", "ops": reply,
                      "as_text": rng.random() < 0.5}
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
            doc = payload.get("canvas")
            if not isinstance(doc, (dict, list)):
                raise ValueError(f"an ops input carries the document it runs on, not {type(doc).__name__} "
                                 f"{doc!r} (an index into the shared files: see skeleton())")
            canvas = load(mutate.materialize(doc))
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


def self_contained(kind: str, payload: Any) -> Any:
    """A finding as it is kept: an ``ops`` input runs on the :func:`skeleton` of its document."""
    if kind == "ops" and isinstance(payload.get("canvas"), dict):
        return {**payload, "canvas": skeleton(payload["canvas"])}
    return payload


#: tldraw record types a skeleton keeps (made neutral), and shape types it leaves out
#: (they need an asset, a URL or children).
_TL_KEPT = ("document", "page", "camera", "instance", "instance_page_state", "pointer", "user")
_TL_SKIPPED = ("image", "video", "bookmark", "embed", "group")


def skeleton(doc: Any) -> Any:
    """A made-up document in the form of ``doc``: same editor, file form, schema and pages,
    and one blank shape (element) of each type ``doc`` holds, so that new shapes find the
    same templates; none of ``doc``'s content. What a kept ``ops`` case runs on instead of
    the real document it was found on (which stays beside the checkout, not in the project).

    Examples
    --------
    >>> sk = skeleton({"type": "excalidraw", "version": 2, "elements": [
    ...     {"id": "x1", "type": "text", "text": "secret", "x": 5, "y": 5, "width": 40, "height": 20}]})
    >>> [(e["id"], e["type"], e["text"]) for e in sk["elements"]]
    [('text-1', 'text', 'a')]
    """
    if isinstance(doc, dict) and isinstance(doc.get("records"), list):
        return _tldraw_skeleton(doc)
    if isinstance(doc, dict) and isinstance(doc.get("elements"), list):
        return _excalidraw_skeleton(doc)
    return copy.deepcopy(doc)


def _tldraw_skeleton(doc: Dict[str, Any]) -> Dict[str, Any]:
    records = [r for r in doc["records"] if isinstance(r, dict)]
    pages = [r["id"] for r in records if r.get("typeName") == "page"]
    page_id = {p: f"page:p{k + 1}" for k, p in enumerate(pages)}

    def page_of(pid: Any) -> Any:
        return page_id.get(pid, pid)

    out: List[Any] = []
    for r in records:
        tn = r.get("typeName")
        if tn not in _TL_KEPT:
            continue
        r = copy.deepcopy(r)
        if "meta" in r:
            r["meta"] = {}
        if tn == "page":
            r.update(id=page_of(r["id"]), name=f"Page {pages.index(r['id']) + 1}")
        elif tn == "camera":
            pid = r["id"][len("camera:"):]
            r.update(id=f"camera:{page_of(pid)}", x=0, y=0, z=1)
        elif tn == "instance_page_state":
            r.update(id=f"instance_page_state:{page_of(r.get('pageId'))}", pageId=page_of(r.get("pageId")))
        elif tn == "instance":
            if "currentPageId" in r:
                r["currentPageId"] = page_of(r["currentPageId"])
        elif tn == "pointer":
            r.update({k: 0 for k in ("x", "y", "lastActivityTimestamp") if k in r})
        elif tn == "user":
            r.update(id="user:user", name="", imageUrl="")
        out.append(r)
    seen: List[str] = []
    for r in records:
        t = r.get("type")
        if r.get("typeName") != "shape" or not isinstance(t, str) or t in seen or t in _TL_SKIPPED:
            continue
        seen.append(t)
        shape = copy.deepcopy(r)
        shape.update(id=f"shape:{t}-1", parentId=page_of(pages[0]) if pages else "page:page",
                     index=f"a{len(seen)}", x=200.0 * (len(seen) - 1), y=0.0, rotation=0, isLocked=False,
                     opacity=1, meta={})
        props = shape.get("props")
        if isinstance(props, dict):
            shape["props"] = _blank_props(props)
        out.append(shape)
    return {**{k: copy.deepcopy(v) for k, v in doc.items() if k != "records"}, "records": out}


def _blank_props(props: Dict[str, Any]) -> Dict[str, Any]:
    """A shape's props with its content made up: empty text, a 100-unit size and line, no binding."""
    out = copy.deepcopy(props)
    for k, v in props.items():
        if k == "text" and isinstance(v, str):
            out[k] = ""
        elif k == "richText":
            out[k] = {"type": "doc", "content": [{"type": "paragraph"}]}
        elif k in ("w", "h") and isinstance(v, (int, float)):
            out[k] = 100
        elif k in ("growY", "bend") and isinstance(v, (int, float)):
            out[k] = 0
        elif k in ("url", "name") and isinstance(v, str):
            out[k] = ""
        elif k == "segments" and isinstance(v, list):
            kind = v[0].get("type", "free") if v and isinstance(v[0], dict) else "free"
            out[k] = [{"type": kind, "points": [{"x": 0, "y": 0, "z": 0.5}, {"x": 100, "y": 0, "z": 0.5}]}]
        elif k in ("handles", "points") and isinstance(v, dict):
            out[k] = {hk: {**h, "x": 100 * (j > 0), "y": 0} if isinstance(h, dict) else h
                      for j, (hk, h) in enumerate(v.items())}
        elif k in ("start", "end") and isinstance(v, dict):
            x = 0 if k == "start" else 100
            out[k] = {"type": "point", "x": x, "y": 0} if "type" in v else {"x": x, "y": 0}
    return out


def _excalidraw_skeleton(doc: Dict[str, Any]) -> Dict[str, Any]:
    elements: List[Any] = []
    seen: List[str] = []
    for e in doc["elements"]:
        t = e.get("type") if isinstance(e, dict) else None
        if not isinstance(t, str) or t in seen or t == "image" or e.get("isDeleted"):
            continue
        seen.append(t)
        el = copy.deepcopy(e)
        el.update(id=f"{t}-1", x=200.0 * (len(seen) - 1), y=0.0, width=100, height=100, angle=0, groupIds=[],
                  frameId=None, boundElements=None, link=None, locked=False, seed=len(seen), version=1,
                  versionNonce=len(seen), updated=1)
        for k in ("text", "originalText"):
            if k in el:
                el[k] = "a"
        if "containerId" in el:
            el["containerId"] = None
        if t == "frame" and "name" in el:
            el["name"] = None
        if isinstance(el.get("points"), list):
            el["points"] = [[0, 0], [100, 0]]
            if "pressures" in el:
                el["pressures"] = []
        for k in ("startBinding", "endBinding"):
            if k in el:
                el[k] = None
        elements.append(el)
    out = {k: copy.deepcopy(v) for k, v in doc.items() if k not in ("elements", "files")}
    out["elements"] = elements
    if "files" in doc:
        out["files"] = {}
    return out
