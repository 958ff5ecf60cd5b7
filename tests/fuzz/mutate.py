"""Structure-aware mutation of JSON documents, with compact markers for huge values.

A mutated document is kept in *marker form*: values that would be huge to store
(a megabyte string, 100,000 nested lists, 200,000 repeated elements) are small
objects such as ``{"$deep": 100000}``, expanded by :func:`materialize` just before
the document is used. So a failing input is a few hundred bytes of JSON, kept as
is under ``tests/data/fuzz``.
"""

from __future__ import annotations

import math
import random
from typing import Any, List, Optional, Sequence, Set, Tuple

Path = Tuple[Any, ...]

#: Replacement values: extremes of every JSON type, wrong types, and markers.
INTERESTING: List[Any] = [
    10**400, -(10**400), 2**63, 2**64, -(2**63) - 1, 2**31, 10**20, 1e308, -1e308, 5e-324, -0.0, 0, -1, 1, 0.5,
    math.nan, math.inf, -math.inf,
    "", " ", "\ud800", "a\udfffb", "\x00", "1e999", "NaN", "-5", "\U0001F600" * 3, "EditText", "x/y/z",
    None, True, False, [], {}, [0, 0, 1, 1], [[0, 0], [1, 1]], [0, 0, 1], [1, 1, 0, 0], [[0, 0, 0], [1]],
    {"a": 1}, [None], [[]], [{}],
    {"$str": ["y", 1_000_000]}, {"$str": [" ", 200_000]}, {"$str": ["\u00e9", 50_000]},
    {"$deep": 100_000}, {"$deep": 3_000}, {"$deepdict": 100_000}, {"$deepdict": 900},
    {"$many": [[0, 0, 1, 1], 200_000]}, {"$many": [{"bounds": [0, 0, 1, 1], "role": "b"}, 150_000]},
]

#: Keys the importers look at, for renaming one key into another.
KEYS = ["views", "activity", "root", "elements", "children", "bounds", "class", "role", "text", "content-desc",
        "content_description", "visible", "visible-to-user", "ancestors", "resource-id", "resource_id", "id",
        "width", "height", "meta", "app", "display_mode", "text_size", "foreground_activity", "activity_name",
        "package", "editable", "clickable"]


#: ids of containers known to hold no marker (the seed documents): materialize skips them.
_PRISTINE: Set[int] = set()


def register_pristine(doc: Any) -> None:
    """Remember every container of ``doc`` (which must stay alive and unmodified) as marker-free."""
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            _PRISTINE.add(id(v))
            stack.extend(v.values())
        elif isinstance(v, list):
            _PRISTINE.add(id(v))
            stack.extend(v)


def materialize(value: Any) -> Any:
    """Expand markers into the values they stand for; containers of the seeds are shared, not copied."""
    if id(value) in _PRISTINE:
        return value
    marker = _marker(value)
    if marker is not None:
        return marker
    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [materialize(v) for v in value]
    return value


_MARKERS = ("$str", "$deep", "$deepdict", "$many")


def _is_marker(value: Any) -> bool:
    """Whether ``value`` is a marker (without building what it stands for)."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _MARKERS


def _marker(value: Any) -> Any:
    if not (isinstance(value, dict) and len(value) == 1):
        return None
    (key, arg), = value.items()
    if key == "$str":
        return str(arg[0]) * int(arg[1])
    if key == "$deep":
        out: Any = []
        for _ in range(int(arg)):
            out = [out]
        return out
    if key == "$deepdict":
        out = {}
        for _ in range(int(arg)):
            out = {"children": [out]}
        return out
    if key == "$many":
        item = materialize(arg[0])
        return [item] * int(arg[1])
    return None


def paths(doc: Any, limit: int = 50_000) -> List[Path]:
    """Paths to every value of a document (breadth first, at most ``limit``)."""
    out: List[Path] = []
    queue: List[Tuple[Path, Any]] = [((), doc)]
    i = 0
    while i < len(queue) and len(out) < limit:
        p, v = queue[i]
        i += 1
        out.append(p)
        if isinstance(v, dict) and not _is_marker(v):
            queue.extend((p + (k,), c) for k, c in v.items())
        elif isinstance(v, list):
            queue.extend((p + (j,), c) for j, c in enumerate(v))
    return out


def get(doc: Any, path: Path) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _valid(doc: Any, path: Path) -> bool:
    cur = doc
    for k in path:
        if isinstance(cur, dict) and k in cur:
            cur = cur[k]
        elif isinstance(cur, list) and isinstance(k, int) and 0 <= k < len(cur):
            cur = cur[k]
        else:
            return False
    return True


def _rebuild(doc: Any, path: Path, fn: Any) -> Any:
    """A copy of ``doc`` with the container at ``path[:-1]`` replaced by fn(copy of it), copying only the spine."""
    spine = [doc]
    for k in path[:-1]:
        spine.append(spine[-1][k])
    new = fn(spine[-1].copy())
    for k, parent in zip(reversed(path[:-1]), reversed(spine[:-1])):
        parent = parent.copy()
        parent[k] = new
        new = parent
    return new


def mutate(doc: Any, rng: random.Random, all_paths: Optional[Sequence[Path]] = None, rounds: int = 0,
           keys: Optional[Sequence[str]] = None) -> Any:
    """One to three structural mutations of ``doc`` (which is not modified); ``keys``: names to rename keys to."""
    all_paths = all_paths if all_paths is not None else paths(doc)
    keys = keys if keys is not None else KEYS
    for _ in range(rounds or rng.choice((1, 1, 1, 2, 3))):
        for _attempt in range(5):
            path = rng.choice(all_paths)
            if path and _valid(doc, path):
                break
        else:
            continue
        key = path[-1]
        r = rng.random()
        if r < 0.55:
            value = rng.choice(INTERESTING)
            doc = _rebuild(doc, path, lambda c: _set(c, key, value))
        elif r < 0.65:
            doc = _rebuild(doc, path, lambda c: _delete(c, key))
        elif r < 0.72:
            n = rng.choice((2, 10, 1000))
            doc = _rebuild(doc, path, lambda c: _duplicate(c, key, n))
        elif r < 0.82:
            other = rng.choice(all_paths)
            if _valid(doc, other):
                value = get(doc, other)
                doc = _rebuild(doc, path, lambda c: _set(c, key, value))
        elif r < 0.9:
            new_key = rng.choice(keys)
            doc = _rebuild(doc, path, lambda c: _rename(c, key, new_key))
        else:
            old = get(doc, path)
            if isinstance(old, (int, float)) and not isinstance(old, bool):
                # one draw as rng.choice over the six variants; a huge int times 1e6 overflows a float
                variant = rng.randrange(6)
                try:
                    value = (lambda: -old, lambda: old * 1e6, lambda: old + 0.5, lambda: old * 2**53,
                             lambda: str(old), lambda: [old])[variant]()
                except OverflowError:
                    value = str(old)
                doc = _rebuild(doc, path, lambda c: _set(c, key, value))
            elif isinstance(old, list) and old:
                value = list(reversed(old)) if rng.random() < 0.5 else old[: rng.randrange(len(old))]
                doc = _rebuild(doc, path, lambda c: _set(c, key, value))
    return doc


def _set(c: Any, key: Any, value: Any) -> Any:
    c[key] = value
    return c


def _delete(c: Any, key: Any) -> Any:
    del c[key]
    return c


def _duplicate(c: Any, key: Any, n: int) -> Any:
    if isinstance(c, list):
        c[key:key] = [c[key]] * n
    return c


def _rename(c: Any, key: Any, new_key: str) -> Any:
    if isinstance(c, dict):
        c[new_key] = c.pop(key)
    return c


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """Byte-level damage: truncate, flip bytes, splice in a chunk or a run of brackets."""
    b = bytearray(data)
    r = rng.random()
    if r < 0.3 and b:
        del b[rng.randrange(len(b)):]
    elif r < 0.6 and b:
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif r < 0.8:
        at = rng.randrange(len(b) + 1)
        b[at:at] = rng.choice((b"[" * 5000, b"{\"a\":" * 3000, b"\xff\xfe", b"\\ud800", b"1" * 5000, b"NaN"))
    elif b:
        at = rng.randrange(len(b))
        b[at:at] = b[at : at + rng.randint(1, 4096)]
    return bytes(b)
