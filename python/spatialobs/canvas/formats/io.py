"""Reading canvas documents: JSON parsing and format detection."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping, Optional, Union

from spatialobs._errors import InvalidInputError, SpatialObsError
from spatialobs._gc import paused
from spatialobs.canvas.formats._detect import detect_format, is_excalidraw, is_tldraw
from spatialobs.canvas.limits import CanvasLimits, one_line

_orjson: Optional[ModuleType]
try:  # optional fast JSON (imported by name: the same types whether or not it is installed)
    _orjson = importlib.import_module("orjson")
except ImportError:  # pragma: no cover - exercised when orjson is absent
    _orjson = None

__all__ = ["load", "parse_json", "detect_format", "is_tldraw", "is_excalidraw"]

Source = Union[str, bytes, bytearray, os.PathLike, Mapping[str, Any]]


def parse_json(data: Union[str, bytes, bytearray], label: str = "document") -> Any:
    """Parse JSON text (orjson when installed), raising InvalidInputError naming ``label``.

    orjson only speeds up what parses: text it refuses goes to the standard library, which
    decides and words the error, so the result and the message do not depend on whether
    (or which) orjson is installed.
    """
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except ValueError:  # orjson.JSONDecodeError
            pass
    try:
        return json.loads(data, parse_constant=_no_constant)
    except RecursionError:
        raise InvalidInputError(f"{label} is not valid JSON: it nests too deep") from None
    except ValueError as exc:
        raise InvalidInputError(one_line(f"{label} is not valid JSON: {exc}")) from None


def _no_constant(name: str) -> Any:
    # NaN, Infinity and -Infinity are not JSON; the standard library would accept them
    raise ValueError(f"{name} is not a JSON value")


def load(source: Source, *, limits: Optional[CanvasLimits] = None) -> Any:
    """Load a canvas from a file path, JSON text/bytes or an already parsed dict.

    The format is detected: tldraw ``.tldr`` files and store snapshots, Excalidraw
    scenes, or the native form written by :meth:`Canvas.to_json`.

    Parameters
    ----------
    source : path, str, bytes or mapping
        A string that names an existing file is read as a path; a string starting
        with ``{`` is parsed as JSON.

    Returns
    -------
    Canvas

    Raises
    ------
    InvalidInputError
        Unreadable file, invalid JSON, unknown format, or a document too broken to
        use; the message names the file or record. Problems that can be repaired
        are listed in ``canvas.diagnostics`` instead.

    Other parameters
    ----------------
    limits : CanvasLimits, optional
        Resource limits for this document (default: those in force, see
        :mod:`spatialobs.canvas.limits`).

    Examples
    --------
    >>> c = load({"type": "excalidraw", "elements": [
    ...     {"id": "a", "type": "rectangle", "x": 1, "y": 2, "width": 3, "height": 4}]})
    >>> c.page_bounds("a")
    (1.0, 2.0, 4.0, 6.0)
    """
    if limits is not None:
        with limits.active():
            return load(source)
    with paused():  # no collector passes over the objects being built (spatialobs._gc)
        return _load(source)


def _load(source: Source) -> Any:
    """:func:`load` of a source, with the limits in force."""
    label = "document"
    if isinstance(source, Mapping):
        doc: Any = source
    else:
        if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and source.lstrip()[:1] in ("{", "[")):
            path = Path(source)
            label = str(path)
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise InvalidInputError(f"cannot read canvas file {label}: {exc.strerror or exc}") from None
        elif isinstance(source, (str, bytes, bytearray)):
            data = source  # type: ignore[assignment]
        else:
            raise InvalidInputError(f"load() takes a path, JSON text or a dict, got {type(source).__name__}")
        doc = parse_json(data, label)
    fmt = detect_format(doc)
    try:
        if fmt == "native":
            from spatialobs.canvas.formats.native import canvas_from_json

            return canvas_from_json(doc)
        if fmt == "tldraw":
            from spatialobs.canvas.formats.tldraw import from_tldraw

            return from_tldraw(doc)
        from spatialobs.canvas.formats.excalidraw import from_excalidraw

        return from_excalidraw(doc)
    except SpatialObsError as exc:
        if isinstance(exc, InvalidInputError) and label != "document":
            raise InvalidInputError(f"{label}: {exc}") from None
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, UnicodeError) as exc:
        raise InvalidInputError(one_line(f"{label}: unusable {fmt} document ({type(exc).__name__}: {exc})")) from None
    except RecursionError:
        raise InvalidInputError(f"{label}: unusable {fmt} document (it nests too deep)") from None
