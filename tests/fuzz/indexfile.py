"""Read, rewrite and mutate state index files, keeping the checksum valid when asked.

A decoded file is its header (a dict) and its sections (name -> raw bytes).
:func:`encode` lays the sections out again and recomputes offsets, sizes and the
SHA-256, so a mutation reaches the checks behind the checksum; ``table`` overrides
let a mutation lie about an offset, size, shape or dtype on purpose.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import struct
from typing import Any, Dict, List, Optional, Tuple

MAGIC = b"SPOBSIDX"
_PREFIX = struct.Struct("<8sIQ")

INTS = [0, 1, -1, 2, 7, 255, 2**31 - 1, 2**31, 2**32, 2**40, 2**62, 2**63 - 1, -(2**63)]


def decode(data: bytes) -> Tuple[Dict[str, Any], Dict[str, bytes]]:
    """The header and the raw bytes of each section of a well-formed index file."""
    _, _, head_len = _PREFIX.unpack_from(data, 0)
    header = json.loads(data[_PREFIX.size : _PREFIX.size + head_len])
    payload = data[_PREFIX.size + head_len : -32]
    sections = {s["name"]: payload[s["offset"] : s["offset"] + s["nbytes"]] for s in header["sections"]}
    return header, sections


def encode(header: Dict[str, Any], sections: Dict[str, bytes], table: Optional[Dict[str, Dict[str, Any]]] = None,
           version: int = 1, fix_checksum: bool = True, raw_table: Any = None) -> bytes:
    """Lay out sections in order, recompute the section table (then apply ``table`` overrides) and the checksum.

    ``raw_table``, when given, replaces the section table verbatim.
    """
    header = copy.deepcopy(header)
    item = {"uint8": 1, "uint32": 4, "uint64": 8, "int64": 8}
    dtypes = {s["name"]: s["dtype"] for s in header.get("sections", []) if isinstance(s, dict) and "name" in s}
    rows: List[Dict[str, Any]] = []
    offset = 0
    for name, raw in sections.items():
        dtype = dtypes.get(name, "uint8")
        rows.append({"name": name, "dtype": dtype, "shape": [len(raw) // item.get(dtype, 1)], "offset": offset,
                     "nbytes": len(raw)})
        offset += len(raw)
    for row in rows:
        row.update((table or {}).get(row["name"], {}))
    header["sections"] = rows if raw_table is None else raw_table
    head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    body = _PREFIX.pack(MAGIC, version, len(head)) + head + b"".join(sections.values())
    digest = hashlib.sha256(body).digest() if fix_checksum else bytes(32)
    return body + digest


def hnsw_fields(blob: bytes) -> List[Tuple[int, str]]:
    """Offsets and struct formats of the count and scalar fields of a serialized IndexHNSWFlat."""
    out: List[Tuple[int, str]] = []
    pos = 4

    def header() -> None:
        nonlocal pos
        for fmt in ("i", "q", "q", "q", "B", "i"):
            out.append((pos, fmt))
            pos += struct.calcsize(fmt)

    def vector(item: int) -> None:
        nonlocal pos
        out.append((pos, "Q"))
        (n,) = struct.unpack_from("<Q", blob, pos)
        pos += 8 + n * item

    try:
        header()
        for item in (8, 4, 4, 8, 4):
            vector(item)
        for _ in range(5):
            out.append((pos, "i"))
            pos += 4
        pos += 4
        header()
        out.append((pos, "Q"))
    except struct.error:
        pass
    return out


def mutate(data: bytes, rng: random.Random) -> bytes:
    """A structure-aware mutation of a well-formed index file (checksum fixed 85% of the time)."""
    header, sections = decode(data)
    table: Dict[str, Dict[str, Any]] = {}
    version = 1
    names = list(sections)
    r = rng.random()
    if r < 0.2:  # a header value
        keys = [("config", k) for k in header["config"]] + [("num_screens",), ("metas",), ("embedder",)]
        keys += [("embedder", k) for k in header["embedder"]]
        path = rng.choice(keys)
        value = rng.choice(INTS + [None, "x", [], {}, [1, 2], [None, None, None], 1.5, True, [["a", None, None]]])
        target = header
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value
    elif r < 0.23:  # the section table itself is malformed
        raw_table = rng.choice([{"a": 1}, [1], [{}], None, "x", [{"name": "state_of"}] * 2])
        return encode(header, sections, raw_table=raw_table if raw_table is not None else [])
    elif r < 0.35:  # a section-table entry lies
        name = rng.choice(names)
        field = rng.choice(["offset", "nbytes", "shape", "dtype", "name"])
        value = {"offset": rng.choice(INTS), "nbytes": rng.choice(INTS), "shape": rng.choice([[rng.choice(INTS)], [2, -2],
                 [2**32, 2**32], [], [[1]]]), "dtype": rng.choice(["float64", "object", "int8", "uint64", "<U1000000"]),
                 "name": rng.choice(names + ["x"])}[field]
        table[name] = {field: value}
    elif r < 0.6:  # an array element of a numeric section
        name = rng.choice([n for n in names if not n.endswith(".hnsw")])
        raw = bytearray(sections[name])
        width = 4 if name == "store.meta" else 8
        if len(raw) >= width:
            at = rng.randrange(len(raw) // width) * width
            v = rng.choice(INTS + [len(raw) // width, len(raw) // width - 1])
            raw[at : at + width] = (v % (1 << (8 * width))).to_bytes(width, "little")
        elif rng.random() < 0.5:
            raw += bytes(width)
        sections[name] = bytes(raw)
    elif r < 0.85:  # the faiss graph: a count or scalar field, or any byte
        name = rng.choice([n for n in names if n.endswith(".hnsw")] or names)
        raw = bytearray(sections[name])
        fields = hnsw_fields(bytes(raw))
        if fields and rng.random() < 0.7:
            at, fmt = rng.choice(fields)
            size = struct.calcsize(fmt)
            v = rng.choice(INTS)
            raw[at : at + size] = (v % (1 << (8 * size))).to_bytes(size, "little")
        elif raw:
            for _ in range(rng.randint(1, 4)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
        sections[name] = bytes(raw)
    elif r < 0.93:  # drop, duplicate or reorder sections
        name = rng.choice(names)
        if rng.random() < 0.5:
            del sections[name]
        else:
            sections = dict(reversed(list(sections.items())))
    else:
        version = rng.choice([0, 2, 2**32 - 1])
    out = encode(header, sections, table, version=version, fix_checksum=rng.random() < 0.85)
    if rng.random() < 0.05:
        out = out[: rng.randrange(len(out) + 1)]
    return out
