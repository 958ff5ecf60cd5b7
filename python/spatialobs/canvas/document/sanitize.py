"""The one sanitizer every write to a :class:`~spatialobs.canvas.Canvas` goes through.

A person's edit, an importer and an agent's operation all hand raw field values
to :func:`sanitize_node_fields` (or :func:`sanitize_binding_fields`). In *strict*
mode (the public write path) a bad value raises
:class:`~spatialobs.InvalidInputError` naming the record and the field; in
*lenient* mode (importers) the value is repaired and a
:class:`~spatialobs.canvas.Diagnostic` is appended instead, so that one broken
record never makes a whole user file unreadable.

Rules (DESIGN §3): style keys are normalized to one spelling (camelCase:
``background-color``, ``background_color`` and ``backgroundColor`` are the same
key), null and empty style values are dropped, numeric strings are coerced to
numbers, and geometry must be finite with ``w, h >= 0``.
"""

from __future__ import annotations

import math
import re
from collections import abc as _abc
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.records import Diagnostic
from spatialobs.canvas.limits import current as current_limits
from spatialobs.canvas.limits import ECHO_CHARS, echo

if TYPE_CHECKING:
    from typing_extensions import TypeGuard


def is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with the common ``dict`` case decided without the ABC machinery.

    Used on decoded JSON, whose object keys are strings.
    """
    return type(value) is dict or isinstance(value, _abc.Mapping)

__all__ = [
    "CleanFields",
    "normalize_style_key",
    "sanitize_style",
    "coerce_number",
    "sanitize_node_fields",
    "sanitize_binding_fields",
    "NODE_FIELDS",
]

#: Node fields in their canonical order (``Node`` dataclass order).
NODE_FIELDS = (
    "id", "type", "parent", "index", "x", "y", "w", "h", "rotation",
    "text", "name", "style", "opacity", "locked", "hidden", "props",
)

class CleanFields(dict):
    """Node fields an importer has already checked value by value exactly as
    :func:`sanitize_node_fields` would have accepted them, in :data:`NODE_FIELDS`
    order; the assembler takes them as they are instead of sanitizing them again.

    An importer produces one only when every value passed the sanitizer's rules
    unchanged (the same output, no diagnostic); anything else goes through the
    sanitizer.
    """

    __slots__ = ()


_SPLIT = re.compile(r"[-_\s]+")
_NUMERIC = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$")
_NUMERIC_PX = re.compile(r"^\s*([-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?)\s*(px)?\s*$")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off", ""}


@lru_cache(maxsize=4096)
def normalize_style_key(key: str) -> str:
    """Return the one spelling (camelCase) of a style key.

    Examples
    --------
    >>> normalize_style_key("background-color")
    'backgroundColor'
    >>> normalize_style_key("label_color"), normalize_style_key("labelColor")
    ('labelColor', 'labelColor')
    """
    parts = [p for p in _SPLIT.split(key.strip()) if p]
    if not parts:
        return key
    head = parts[0]
    # A single already-camelCase word keeps its inner capitals; only its first letter is lowered.
    out = head[:1].lower() + head[1:]
    for p in parts[1:]:
        out += p[:1].upper() + p[1:]
    return out


def _numeric_value(value: str) -> Any:
    """A numeric string as int (integral literal) or float; other strings unchanged."""
    if value[:1].isalpha():  # a letter is neither space, sign, dot nor digit: not numeric
        return value
    if _NUMERIC.match(value):
        s = value.strip()
        if re.fullmatch(r"[-+]?\d+", s):
            return int(s)
        f = float(s)
        return f if math.isfinite(f) else value
    return value


def sanitize_style(style: Optional[Mapping[str, Any]], *, record: str = "?") -> Dict[str, Any]:
    """Normalize a style mapping: one key spelling, no null/empty values, numbers coerced.

    Parameters
    ----------
    style : mapping or None
        Raw style, e.g. ``{"background-color": "red", "stroke_width": "2", "font": None}``.
    record : str
        Record id used in error messages.

    Returns
    -------
    dict
        e.g. ``{"backgroundColor": "red", "strokeWidth": 2}``.

    Examples
    --------
    >>> sanitize_style({"font-size": "12", "color": "", "fill": None})
    {'fontSize': 12}
    """
    if style is None:
        return {}
    if not is_mapping(style):
        raise InvalidInputError(f"record {record!r}: style must be an object, got {type(style).__name__}")
    out: Dict[str, Any] = {}
    for k, v in style.items():
        tv = type(v)
        if v is None or ((tv is str or tv is list or tv is dict or tv is tuple) and len(v) == 0):
            continue
        if tv is float and not math.isfinite(v):
            continue
        out[normalize_style_key(k if type(k) is str else str(k))] = _numeric_value(v) if tv is str else v
    return out


def coerce_number(value: Any, field: str, record: str) -> float:
    """Return ``value`` as a finite float; numeric strings (also ``"12px"``) are accepted.

    Raises
    ------
    InvalidInputError
        For booleans, non-numeric strings, other types and NaN/inf, naming record and field.

    Examples
    --------
    >>> coerce_number("12.5", "x", "shape:a")
    12.5
    """
    if isinstance(value, bool) or value is None:
        raise InvalidInputError(f"record {record!r}: field {field!r} must be a number, got {value!r}")
    try:
        if isinstance(value, (int, float)):
            f = float(value)
        elif isinstance(value, str):
            m = _NUMERIC_PX.match(value)
            if not m:
                raise InvalidInputError(f"record {record!r}: field {field!r} must be a number, got {echo(value)}")
            f = float(m.group(1))
        else:
            f = float(value)  # numpy scalars and the like
    except OverflowError:
        f = math.inf
    except (TypeError, ValueError):
        raise InvalidInputError(
            f"record {record!r}: field {field!r} must be a number, got {type(value).__name__}"
        ) from None
    if not math.isfinite(f):
        raise InvalidInputError(f"record {record!r}: field {field!r} must be finite, got {echo(value)}")
    limit = current_limits().max_coordinate
    if field in _BOUNDED and not -limit <= f <= limit:
        raise InvalidInputError(f"record {record!r}: field {field!r} is {echo(value)}, beyond the "
                                f"{limit:.6g} that stays exact (CanvasLimits.max_coordinate)")
    return f


#: Fields held to CanvasLimits.max_coordinate.
_BOUNDED = frozenset(("x", "y", "w", "h"))

#: Integers strictly within +-this convert with ``float(v)`` without overflowing: the importers'
#: fast paths for integer values (a name: Python does not fold so large a power into a constant).
INT_SPAN = 2**1000


def _coerce_bool(value: Any, field: str, record: str) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise InvalidInputError(f"record {record!r}: field {field!r} must be a boolean, got {value!r}")


_DEFAULTS: Dict[str, Any] = {
    "x": 0.0, "y": 0.0, "w": 0.0, "h": 0.0, "rotation": 0.0, "opacity": 1.0,
    "locked": False, "hidden": False, "text": None, "name": None,
}


def _fail(strict: bool, diagnostics: Optional[List[Diagnostic]], code: str, record: str, message: str) -> None:
    if strict or diagnostics is None:
        raise InvalidInputError(f"record {record!r}: {message}")
    diagnostics.append(Diagnostic(code, record, message))


def sanitize_node_fields(
    fields: Mapping[str, Any],
    *,
    strict: bool = True,
    diagnostics: Optional[List[Diagnostic]] = None,
    partial: bool = False,
) -> Dict[str, Any]:
    """Validate and normalize node fields; return a new dict of clean values.

    Parameters
    ----------
    fields : mapping
        Raw values keyed by :class:`~spatialobs.canvas.Node` field name. Unknown keys
        are an error (strict) or moved into ``props`` (lenient).
    strict : bool
        Raise :class:`~spatialobs.InvalidInputError` on the first bad value (public
        write path); otherwise repair it and append a diagnostic (importers).
    diagnostics : list, optional
        Where lenient mode reports repairs.
    partial : bool
        Only the given fields are checked (an update); otherwise ``id``, ``type``
        and ``parent`` are required and absent optional fields get defaults.

    Returns
    -------
    dict

    Examples
    --------
    >>> f = sanitize_node_fields({"id": "a", "type": "geo", "parent": "page:1",
    ...                           "x": "10", "w": 5, "h": 5, "style": {"fill-color": "red"}})
    >>> f["x"], f["style"]
    (10.0, {'fillColor': 'red'})
    """
    rid = fields.get("id", "?")
    rec = rid if type(rid) is str and len(rid) <= ECHO_CHARS else echo(rid)
    out: Dict[str, Any] = {}
    limits = current_limits()
    big = limits.max_coordinate
    kmax = limits.max_key_chars
    for key, value in fields.items():
        tv = type(value)
        # fast path: well-typed values, the common case for importers (comparisons
        # rather than isfinite, which overflows on a huge int)
        if tv is float or tv is int:
            if key in ("x", "y") and -big <= value <= big:
                out[key] = float(value)
                continue
            if key == "rotation" and -1e9 <= value <= 1e9:
                out[key] = float(value)
                continue
            if key in ("w", "h") and 0 <= value <= big:
                out[key] = float(value)
                continue
            if key == "opacity" and 0 <= value <= 1:
                out[key] = float(value)
                continue
        elif tv is str and key in ("id", "type", "parent", "index") and value and len(value) <= kmax:
            out[key] = value
            continue
        elif tv is str and key in ("text", "name") and value and (not strict or len(value) <= limits.max_text_chars):
            out[key] = value
            continue
        if tv is str and key in ("id", "type", "parent", "index") and len(value) > kmax:
            if strict or key == "id":
                raise InvalidInputError(f"record {rec!r}: field {key!r} has {len(value)} characters, more than "
                                        f"{kmax} (CanvasLimits.max_key_chars)")
            _fail(strict, diagnostics, "invalid_field", rec, f"field {key!r} has {len(value)} characters, more "
                  f"than {kmax} (CanvasLimits.max_key_chars); " + ("'unknown' used" if key == "type" else "dropped"))
            if key == "type":
                out[key] = "unknown"
            continue
        elif tv is bool and key in ("locked", "hidden"):
            out[key] = value
            continue
        elif tv is dict and key == "props":
            out[key] = dict(value)
            continue
        if key in ("x", "y", "rotation"):
            try:
                out[key] = coerce_number(value, key, rec)
            except InvalidInputError as exc:
                _fail(strict, diagnostics, "invalid_geometry", rec, str(exc).split(": ", 1)[1] + "; 0 used")
                out[key] = 0.0
        elif key in ("w", "h"):
            try:
                v = coerce_number(value, key, rec)
            except InvalidInputError as exc:
                _fail(strict, diagnostics, "invalid_geometry", rec, str(exc).split(": ", 1)[1] + "; 0 used")
                v = 0.0
            if v < 0:
                _fail(strict, diagnostics, "negative_size", rec, f"field {key!r} must be >= 0, got {v!r}; 0 used")
                v = 0.0
            out[key] = v
        elif key == "opacity":
            try:
                v = coerce_number(value, key, rec)
            except InvalidInputError as exc:
                _fail(strict, diagnostics, "invalid_field", rec, str(exc).split(": ", 1)[1] + "; 1 used")
                v = 1.0
            if not 0.0 <= v <= 1.0:
                _fail(strict, diagnostics, "invalid_field", rec, f"field 'opacity' must be in [0, 1], got {v!r}; clamped")
                v = min(1.0, max(0.0, v))
            out[key] = v
        elif key in ("locked", "hidden"):
            try:
                out[key] = _coerce_bool(value, key, rec)
            except InvalidInputError as exc:
                _fail(strict, diagnostics, "invalid_field", rec, str(exc).split(": ", 1)[1] + "; false used")
                out[key] = False
        elif key in ("id", "type", "parent"):
            if not isinstance(value, str) or not value:
                if strict or key == "id":
                    raise InvalidInputError(f"record {rec!r}: field {key!r} must be a non-empty string, got {value!r}")
                _fail(strict, diagnostics, "missing_field", rec, f"field {key!r} must be a non-empty string, got {value!r}")
                continue
            out[key] = value
        elif key == "index":
            if value is None:
                continue
            if not isinstance(value, str) or not value:
                _fail(strict, diagnostics, "invalid_field", rec, f"field 'index' must be a non-empty string, got {value!r}")
                continue
            out[key] = value
        elif key in ("text", "name"):
            if value is None or value == "":
                out[key] = None
            elif isinstance(value, str):
                if strict and len(value) > limits.max_text_chars:
                    raise InvalidInputError(f"record {rec!r}: field {key!r} has {len(value)} characters, more than "
                                            f"{limits.max_text_chars} (CanvasLimits.max_text_chars)")
                out[key] = value
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = str(value)
            else:
                _fail(strict, diagnostics, "invalid_field", rec, f"field {key!r} must be a string, got {type(value).__name__}")
                out[key] = None
        elif key == "style":
            try:
                out[key] = sanitize_style(value, record=rec)
            except InvalidInputError as exc:
                _fail(strict, diagnostics, "invalid_field", rec, str(exc).split(": ", 1)[1])
                out[key] = {}
        elif key == "props":
            if value is None:
                out[key] = {}
            elif is_mapping(value):
                out[key] = dict(value)
            else:
                _fail(strict, diagnostics, "invalid_field", rec, f"field 'props' must be an object, got {type(value).__name__}")
                out[key] = {}
        else:
            if strict:
                raise InvalidInputError(f"record {rec!r}: unknown node field {key!r}")
            out.setdefault("props", dict(fields.get("props") or {}))[key] = value
    if not partial:
        for key in ("id", "type", "parent"):
            if key not in out:
                if strict:
                    raise InvalidInputError(f"record {rec!r}: missing required field {key!r}")
                out[key] = {"type": "unknown"}.get(key)  # parent None: the importer assigns a page
        for key, default in _DEFAULTS.items():
            out.setdefault(key, default)
        out.setdefault("style", {})
        out.setdefault("props", {})
        out.setdefault("index", None)
    return out


def sanitize_binding_fields(
    fields: Mapping[str, Any],
    *,
    strict: bool = True,
    diagnostics: Optional[List[Diagnostic]] = None,
) -> Dict[str, Any]:
    """Validate binding fields (``id``, ``from_id``, ``to_id``, ``terminal``, ``anchor``, ...).

    Examples
    --------
    >>> sanitize_binding_fields({"id": "b", "from_id": "a", "to_id": "t", "terminal": "end"})["anchor"]
    (0.5, 0.5)
    """
    rec = str(fields.get("id", "?"))
    out: Dict[str, Any] = {}
    for key in ("id", "from_id", "to_id"):
        v = fields.get(key)
        if not isinstance(v, str) or not v:
            raise InvalidInputError(f"binding {rec!r}: field {key!r} must be a non-empty string, got {v!r}")
        out[key] = v
    btype = fields.get("type", "arrow")
    out["type"] = btype if isinstance(btype, str) and btype else "arrow"
    term = fields.get("terminal", "end")
    if term not in ("start", "end"):
        if strict:
            raise InvalidInputError(f"binding {rec!r}: field 'terminal' must be 'start' or 'end', got {term!r}")
        _fail(strict, diagnostics, "invalid_field", rec, f"terminal {term!r} is not start/end; 'end' used")
        term = "end"
    out["terminal"] = term
    anchor = fields.get("anchor", (0.5, 0.5))
    try:
        if is_mapping(anchor):
            anchor = (anchor.get("x", 0.5), anchor.get("y", 0.5))
        ax, ay = anchor
        out["anchor"] = (coerce_number(ax, "anchor.x", rec), coerce_number(ay, "anchor.y", rec))
    except (TypeError, ValueError) as exc:
        if strict:
            raise InvalidInputError(f"binding {rec!r}: field 'anchor' must be two finite numbers ({exc})") from None
        _fail(strict, diagnostics, "invalid_field", rec, "anchor is not two finite numbers; (0.5, 0.5) used")
        out["anchor"] = (0.5, 0.5)
    try:
        out["precise"] = _coerce_bool(fields.get("precise", False), "precise", rec)
    except InvalidInputError:
        if strict:
            raise
        out["precise"] = False
    props = fields.get("props") or {}
    if not is_mapping(props):
        if strict:
            raise InvalidInputError(f"binding {rec!r}: field 'props' must be an object")
        props = {}
    out["props"] = dict(props)
    return out
