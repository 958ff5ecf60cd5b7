"""The importers' number readers as they were before their integer fast paths: the twins they are held to."""

from __future__ import annotations

import math
from typing import Any, List, Mapping

from spatialobs.canvas.document.records import Diagnostic
from spatialobs.canvas.formats.tldraw import _num
from spatialobs.canvas.limits import echo


def excalidraw_f(e: Mapping[str, Any], key: str, default: float, diags: List[Diagnostic]) -> float:
    """Excalidraw's ``_f`` with only the float fast path."""
    v = e.get(key, default)
    if type(v) is float and math.isfinite(v):
        return v
    if v is None:
        return default
    if isinstance(v, bool):
        v = default
    try:
        f = float(v)
    except OverflowError:
        f = math.inf
    except (TypeError, ValueError):
        diags.append(Diagnostic("invalid_geometry", str(e.get("id"))[:80], f"{key} is not a number ({echo(v)}); {default} used"))
        return default
    if not math.isfinite(f):
        diags.append(Diagnostic("invalid_geometry", str(e.get("id")), f"{key} is not finite; {default} used"))
        return default
    return f


def tldraw_prop_num(props: Mapping[str, Any], key: str, default: float, rid: str, diags: List[Diagnostic]) -> float:
    """tldraw's ``_prop_num`` through ``_num`` for every value."""
    v = props.get(key)
    if v is None:
        return default
    f, ok = _num(v, default)
    if not ok:
        diags.append(Diagnostic("invalid_geometry", rid, f"props.{key} is not a finite number ({v!r}); {default} used"))
    return f
