"""The state index file format.

Layout (little endian)::

    b"SPOBSIDX"            8 bytes, magic
    version                uint32 (FORMAT_VERSION)
    header length          uint64
    header                 UTF-8 JSON: configuration, embedder, metadata values,
                           and for each array section its name, dtype, shape,
                           offset and length in the payload
    payload                raw array bytes
    SHA-256                32 bytes over everything before it

Arrays are plain numbers; the HNSW graphs are faiss's own serialization of an
``IndexHNSWFlat``. The file is checked whole (magic, version, checksum) before
anything in it is parsed, so a truncated or altered file is rejected cleanly.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from fractions import Fraction
from typing import Any, Dict, List, Tuple, Union

import numpy as np

from spatialobs._errors import SpatialObsError
from spatialobs.screen.embed import embedder_from_spec

__all__ = ["CorruptIndexError", "FORMAT_VERSION", "MAGIC", "save", "load"]

MAGIC = b"SPOBSIDX"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
_DIGEST = 32
_DTYPES = {"uint8", "uint32", "uint64", "int64"}


class CorruptIndexError(SpatialObsError):
    """A saved state index is truncated, altered, of another version, or not an index at all."""


def _spec(embedder: Any) -> Dict[str, Any]:
    if hasattr(embedder, "spec"):
        spec = dict(embedder.spec())
    else:
        spec = {"kind": "external", "dim": int(embedder.dim)}
    spec.setdefault("name", getattr(embedder, "name", type(embedder).__name__))
    return spec


def save(index: Any, path: Any) -> None:
    import faiss

    meta, co, cv, to, tv = index._store.columns()
    arrays: List[Tuple[str, np.ndarray]] = [
        ("store.meta", meta),
        ("store.control_offsets", co),
        ("store.control_values", cv),
        ("store.text_offsets", to),
        ("store.text_values", tv),
        ("state_of", index._state_of.view()),
        ("hits", index._hits.view()),
    ]
    for i, part in enumerate(index._parts):
        arrays.append((f"part{i}.obs", part.obs.view()))
        arrays.append((f"part{i}.hnsw", faiss.serialize_index(part.hnsw)))
    sections = []
    offset = 0
    for name, arr in arrays:
        arr = np.ascontiguousarray(arr)
        sections.append({"name": name, "dtype": arr.dtype.name, "shape": list(arr.shape), "offset": offset,
                         "nbytes": int(arr.nbytes)})
        offset += int(arr.nbytes)
    header = {
        "config": {
            "tau": [index.tau.numerator, index.tau.denominator],
            "top_k": index.top_k,
            "rrf_k": index.rrf_k,
            "grid": index.grid,
            "mask_volatile": index.mask_volatile,
            "candidates": index.candidates,
            "hnsw_m": index.hnsw_m,
            "ef_construction": index.ef_construction,
            "ef_search": index.ef_search,
        },
        "embedder": _spec(index.embedder),
        "metas": [list(k) for k in index._metas],
        "num_screens": index.num_screens,
        "sections": sections,
    }
    head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    digest = hashlib.sha256()
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            chunks: List[Union[bytes, memoryview]] = [_PREFIX.pack(MAGIC, FORMAT_VERSION, len(head)), head]
            chunks += [
                # numpy's stubs give ndarray __buffer__ only on Python >= 3.12
                memoryview(np.ascontiguousarray(a)).cast("B") for _, a in arrays  # type: ignore[arg-type]
            ]
            for chunk in chunks:
                digest.update(chunk)
                f.write(chunk)
            f.write(digest.digest())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable where the platform allows it
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _read(path: Any) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
    name = os.fspath(path)
    with open(name, "rb") as f:
        data = f.read()
    if len(data) < _PREFIX.size + _DIGEST:
        raise CorruptIndexError(f"{name}: too short to be a state index ({len(data)} bytes); truncated?")
    magic, version, head_len = _PREFIX.unpack_from(data, 0)
    if magic != MAGIC:
        raise CorruptIndexError(f"{name}: not a spatialobs state index (bad magic)")
    if version != FORMAT_VERSION:
        raise CorruptIndexError(f"{name}: format version {version} is not supported (this build reads {FORMAT_VERSION})")
    body, stored = data[:-_DIGEST], data[-_DIGEST:]
    if hashlib.sha256(body).digest() != stored:
        raise CorruptIndexError(f"{name}: checksum mismatch; the file is truncated or corrupt")
    start = _PREFIX.size
    if start + head_len > len(body):
        raise CorruptIndexError(f"{name}: header runs past the end of the file")
    try:
        header = json.loads(body[start : start + head_len].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptIndexError(f"{name}: unreadable header: {exc}") from None
    payload = memoryview(body)[start + head_len :]
    arrays: Dict[str, np.ndarray] = {}
    try:
        for s in header["sections"]:
            if s["dtype"] not in _DTYPES:
                raise CorruptIndexError(f"{name}: section {s['name']!r} has unsupported dtype {s['dtype']!r}")
            dt = np.dtype(s["dtype"]).newbyteorder("<")
            off, nbytes, shape = int(s["offset"]), int(s["nbytes"]), tuple(int(d) for d in s["shape"])
            if off < 0 or nbytes < 0 or off + nbytes > len(payload) or int(np.prod(shape)) * dt.itemsize != nbytes:
                raise CorruptIndexError(f"{name}: section {s['name']!r} does not fit the file")
            arrays[s["name"]] = np.frombuffer(payload[off : off + nbytes], dtype=dt).reshape(shape).astype(
                dt.newbyteorder("="), copy=True
            )
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptIndexError(f"{name}: malformed section table: {exc}") from None
    return header, arrays


def load(cls: Any, path: Any, embedder: Any = None) -> Any:
    import faiss

    from spatialobs.screen.state_index import _Grow, _Partition

    name = os.fspath(path)
    header, arrays = _read(path)
    if not isinstance(header.get("embedder"), dict):
        raise CorruptIndexError(f"{name}: the header names no embedder")
    # A mismatched embedder is the caller's mistake, not damage: InvalidInputError.
    emb = embedder_from_spec(header["embedder"], embedder)
    try:
        cfg = header["config"]
        index = cls(
            tau=Fraction(int(cfg["tau"][0]), int(cfg["tau"][1])),
            top_k=int(cfg["top_k"]),
            rrf_k=int(cfg["rrf_k"]),
            grid=int(cfg["grid"]),
            embedder=emb,
            mask_volatile=bool(cfg["mask_volatile"]),
            candidates=str(cfg["candidates"]),
            hnsw_m=int(cfg["hnsw_m"]),
            ef_construction=int(cfg["ef_construction"]),
            ef_search=int(cfg["ef_search"]),
        )
        metas = [tuple(m) for m in header["metas"]]
        meta, co, cv = arrays["store.meta"], arrays["store.control_offsets"], arrays["store.control_values"]
        to, tv = arrays["store.text_offsets"], arrays["store.text_values"]
        state_of, hits = arrays["state_of"], arrays["hits"]
        n = len(meta)
        if not (len(co) == len(to) == n + 1 and len(state_of) == len(hits) == n):
            raise CorruptIndexError(f"{name}: observation columns disagree in length")
        if co[0] != 0 or to[0] != 0 or co[-1] != len(cv) or to[-1] != len(tv) or np.any(np.diff(co.astype(np.int64)) < 0) \
                or np.any(np.diff(to.astype(np.int64)) < 0):
            raise CorruptIndexError(f"{name}: atom offsets are inconsistent")
        if n and (int(meta.max()) >= len(metas) or int(state_of.min()) < 0):
            raise CorruptIndexError(f"{name}: observation refers to a missing partition or state")
        num_states = int(state_of.max()) + 1 if n else 0
        index._metas = metas
        index._meta_ids = {m: i for i, m in enumerate(metas)}
        local_of = np.empty(n, dtype=np.int64)
        seen = np.zeros(n, dtype=bool)
        for i in range(len(metas)):
            obs = arrays[f"part{i}.obs"]
            hnsw = faiss.deserialize_index(arrays[f"part{i}.hnsw"])
            if not isinstance(hnsw, faiss.IndexHNSWFlat) or hnsw.d != index.embedder.dim or hnsw.ntotal != len(obs):
                raise CorruptIndexError(f"{name}: partition {i} has a dense index that does not match")
            part = _Partition(index.embedder.dim, index.hnsw_m, index.ef_construction, index.ef_search, hnsw=hnsw)
            for local, o in enumerate(obs.tolist()):
                if not 0 <= o < n or int(meta[o]) != i or seen[o]:
                    raise CorruptIndexError(f"{name}: partition {i} lists observation {o} wrongly")
                seen[o] = True
                part.bm25.add(np.concatenate((cv[co[o] : co[o + 1]], tv[to[o] : to[o + 1]])))
                part.obs.append(o)
                local_of[o] = local
            index._parts.append(part)
        if not bool(seen.all()):
            raise CorruptIndexError(f"{name}: an observation belongs to no partition")
        for o in range(n):
            index._store.add(int(meta[o]), cv[co[o] : co[o + 1]], tv[to[o] : to[o + 1]])
        members: List[List[int]] = [[] for _ in range(num_states)]
        for o, s in enumerate(state_of.tolist()):
            members[s].append(o)
        if any(not m for m in members):
            raise CorruptIndexError(f"{name}: a state has no observation")
        index._members = members
        index._state_of = _Grow(state_of)
        index._local_of = _Grow(local_of)
        index._hits = _Grow(hits)
        index._screens = int(header["num_screens"])
    except CorruptIndexError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, RuntimeError) as exc:
        raise CorruptIndexError(f"{name}: inconsistent index contents: {exc}") from None
    return index
