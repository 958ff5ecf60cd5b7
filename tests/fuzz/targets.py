"""What one fuzz input runs through, and how inputs are made from (seed, number).

Kinds of input:

``screen``
    a mutated screen document (marker form, see :mod:`tests.fuzz.mutate`), given to
    ``load_screen`` as parsed JSON, then featurized, added to and queried in a
    fresh ``StateIndex``, and round-tripped through ``Screen.to_dict``;
``screen-file``
    the JSON text of a mutated document, damaged at the byte level now and then,
    loaded from a file;
``index-file``
    a saved state index mutated by :func:`tests.fuzz.indexfile.mutate` (usually
    with a valid checksum), loaded; when it loads, made-up screens (the same on every
    machine: :func:`probe_screens`) are added and queried
    and the index is saved and loaded again.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, List, Tuple

from tests.fuzz import cases, indexfile, mutate

SCREENS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "screens"
KINDS = ("screen", "screen-file", "index-file")
WEIGHTS = (0.6, 0.15, 0.25)


@lru_cache(maxsize=None)
def seeds() -> Tuple[List[Any], List[List[Any]]]:
    """The real screen documents (plus one in the generic format) and their paths."""
    from spatialobs.screen import load_screen

    docs: List[Any] = []
    for p in sorted(SCREENS.glob("*.json")):
        with open(p, encoding="utf-8") as f:
            docs.append(json.load(f))
    if not docs:  # without the shared folder: a small generic screen
        docs.append({"width": 100, "height": 200, "meta": {"app": "a"}, "elements": [
            {"bounds": [0, 0, 50, 20], "role": "button", "text": "OK", "id": "ok"}]})
    docs.append(load_screen(docs[-1]).to_dict())
    for d in docs:
        mutate.register_pristine(d)
    return docs, [mutate.paths(d) for d in docs]


@lru_cache(maxsize=None)
def probe_screens() -> List[Any]:
    """The screens every ``index-file`` input adds and queries: made up (seeded), so that a kept
    index file runs the same with or without the files beside the checkout."""
    from spatialobs.screen.synth import make_corpus

    return list(make_corpus(seed=34, apps=3, templates_per_app=2, variants=1, elements=(25, 160)).screens[:5])


@lru_cache(maxsize=None)
def seed_screens() -> List[Any]:
    """Some of the real screens (every fourth): what the seed index of the ``index-file`` inputs holds."""
    from spatialobs.screen import load_screen

    docs, _ = seeds()
    return [load_screen(d) for d in docs[:: max(1, len(docs) // 4)]]


@lru_cache(maxsize=None)
def index_bytes() -> bytes:
    """A saved index of the real screens (two metadata partitions, several states)."""
    from spatialobs.screen import HashedNgramEmbedder, ScreenMeta, StateIndex

    ix = StateIndex(embedder=HashedNgramEmbedder(dim=16), top_k=8, hnsw_m=4)
    for k, s in enumerate(seed_screens()):
        ix.add(s)
        if k % 2:
            ix.add(replace(s, meta=ScreenMeta(app="other")))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "seed.spobs")
        ix.save(path)
        with open(path, "rb") as f:
            return f.read()


def make_input(seed: int, number: int) -> Tuple[str, Any]:
    """The input ``number`` of run ``seed``: (kind, payload); a pure function of both."""
    rng = random.Random(f"{seed}:{number}")
    kind = rng.choices(KINDS, WEIGHTS)[0]
    if kind == "index-file":
        return kind, indexfile.mutate(index_bytes(), rng)
    docs, paths = seeds()
    k = rng.randrange(len(docs))
    doc = mutate.mutate(docs[k], rng, paths[k])
    if kind == "screen":
        return kind, doc
    try:
        text = json.dumps(mutate.materialize(doc)).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):  # too deep for the encoder: keep the original
        text = json.dumps(docs[k]).encode("utf-8")
    if rng.random() < 0.5:
        text = mutate.mutate_bytes(text, rng)
    return kind, text


def run(kind: str, payload: Any, workdir: str) -> None:
    """Run one input; anything but a SpatialObsError propagates."""
    from spatialobs import SpatialObsError
    from spatialobs.screen import StateIndex, featurize, load_screen

    def use(screen: Any) -> None:
        featurize(screen)
        featurize(screen, grid=7, mask_volatile=True)
        ix = StateIndex(top_k=10)
        ix.add(screen)
        ix.add(screen)
        ix.query(screen, k=3)
        load_screen(screen.to_dict())

    try:
        if kind == "screen":
            use(load_screen(mutate.materialize(payload)))
        elif kind == "screen-file":
            path = os.path.join(workdir, "input.json")
            with open(path, "wb") as f:
                f.write(payload)
            use(load_screen(path))
        elif kind == "index-file":
            path = os.path.join(workdir, "input.spobs")
            with open(path, "wb") as f:
                f.write(payload)
            ix = StateIndex.load(path)
            for s in probe_screens():
                ix.add(s)
                ix.query(s, k=3)
            again = os.path.join(workdir, "again.spobs")
            ix.save(again)
            StateIndex.load(again)
        else:
            raise ValueError(f"unknown input kind {kind!r}")
    except SpatialObsError:
        pass


#: How kept inputs of this target are named (see :mod:`tests.fuzz.cases`).
FORMATS = ((".spobs", "index-file", True), (".screen-file.json", "screen-file", True), (".json", "screen", False))


def load_case(path: Path) -> Tuple[str, Any]:
    """A kept input: ``*.spobs`` (index file), ``*.screen-file.json`` (raw text) or ``*.json`` (screen)."""
    return cases.load_case(path, FORMATS)


def save_case(folder: Path, stem: str, kind: str, payload: Any) -> Path:
    return cases.save_case(folder, stem, kind, payload, FORMATS)


def signature(exc: BaseException) -> str:
    """Exception type and the innermost package frame, e.g. ``OverflowError@importers.py:_box``."""
    import traceback

    import spatialobs

    # frames of the package wherever it is installed, not of a checkout whose path names it
    package = os.path.join(os.path.dirname(os.path.abspath(spatialobs.__file__)), "")
    where = "?"
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename).startswith(package):
            where = f"{os.path.basename(frame.filename)}:{frame.name}"
    return f"{type(exc).__name__}@{where}"


describe = cases.describe
