"""How kept fuzz inputs are stored: one file per input, its kind told by the end of its name.

A target lists its formats as ``(name ending, kind, raw)``: ``raw`` inputs are bytes
written as they are (a file the loader reads), the others JSON documents. The first
ending that matches a name wins, so longer endings come first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Sequence, Tuple

#: (name ending, kind, raw bytes)
Format = Tuple[str, str, bool]


def load_case(path: Path, formats: Sequence[Format]) -> Tuple[str, Any]:
    """The kept input at ``path``: (kind, payload)."""
    for ending, kind, raw in formats:
        if path.name.endswith(ending):
            return kind, (path.read_bytes() if raw else json.loads(path.read_text(encoding="utf-8")))
    raise ValueError(f"{path.name}: not a kept input (endings: {', '.join(f[0] for f in formats)})")


def save_case(folder: Path, stem: str, kind: str, payload: Any, formats: Sequence[Format]) -> Path:
    """Write one input as ``folder/stem<ending of its kind>``; the path written."""
    ending, raw = next((e, r) for e, k, r in formats if k == kind)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}{ending}"
    if raw:
        path.write_bytes(payload)
    else:
        path.write_text(json.dumps(payload, ensure_ascii=True, sort_keys=True) + "\n", encoding="utf-8")
    return path


def describe(kind: str, payload: Any) -> Dict[str, Any]:
    """Kind and size of an input, for the runner's report."""
    size = len(payload) if isinstance(payload, (bytes, bytearray)) else len(json.dumps(payload))
    return {"kind": kind, "size": size}
