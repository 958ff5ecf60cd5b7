"""Resource limits of the canvas side, and the bounded echo used in its messages.

What one document or one agent reply may cost is bounded; each limit is checked
before the work it guards, and exceeding one raises
:class:`~spatialobs.InvalidInputError` naming the limit (or, where an importer
repairs a record instead, adds a :class:`~spatialobs.canvas.Diagnostic`).

==================  ===========  ===================================================
limit               default      what it bounds
==================  ===========  ===================================================
``max_depth``       256          nesting of a JSON document or op reply (a record's
                                 props, rich text, an op's fields); checked with an
                                 explicit stack before anything walks the value
``max_key_chars``   1,024        characters of a node's id, type, parent and index
                                 key: they live in fixed-width numpy columns, where
                                 one long value widens every row
``max_coordinate``  2^50         magnitude of x, y, w, h (page units): sums of such
                                 values stay below 2^53, so integer coordinates stay
                                 exact, and areas, gaps and centres never overflow
``max_ops``         10,000       ops of one :meth:`Executor.apply` call
``max_text_chars``  20,000       characters of a text or name written through the
                                 write path (an edit, an op), which measures and
                                 wraps it again: about 0.1 ms per character per
                                 layout, and a note's label is laid out up to a
                                 dozen times; an importer keeps longer texts as read
``max_html_depth``  200          nesting of the HTML of a ``parse_html`` op (the
                                 layout walks the tree by recursion)
==================  ===========  ===================================================

The shared real files stay far below every default: at most 9 levels of JSON,
21-character ids and coordinates under 10^5.

Limits apply to the calls made while they are active::

    with CanvasLimits(max_ops=100).active():
        Executor(canvas).apply(ops)

or are passed to ``load(..., limits=)`` and ``Executor(..., limits=)``.

Examples
--------
>>> CanvasLimits().max_depth
256
>>> current().max_ops
10000
>>> with CanvasLimits(max_ops=3).active():
...     current().max_ops
3
>>> len(echo("x" * 500)) <= ECHO_CHARS
True
"""

from __future__ import annotations

import contextlib
import functools
import json
import reprlib
from contextvars import ContextVar
from dataclasses import dataclass, fields
from typing import Any, Callable, Iterator, Optional, TypeVar

from spatialobs._errors import InvalidInputError, SpatialObsError

__all__ = ["CanvasLimits", "DEFAULT_LIMITS", "ECHO_CHARS", "echo", "current", "check_depth", "one_line",
           "typed_errors", "utf8_json", "compact_json"]

#: Values quoted in error messages are cut to this many characters.
ECHO_CHARS = 80
#: An error message is cut to this many characters.
MESSAGE_CHARS = 400


@dataclass(frozen=True)
class CanvasLimits:
    """Limits on what one canvas document or agent reply may cost (see the module docstring).

    Examples
    --------
    >>> from spatialobs.canvas import load
    >>> c = load({"type": "excalidraw", "elements": [{"id": "a", "type": "rectangle", "x": 2.0**60}]})
    >>> c.page_bounds("a"), c.diagnostics[0].code
    ((0.0, 0.0, 0.0, 0.0), 'invalid_geometry')
    >>> CanvasLimits(max_ops=0)
    Traceback (most recent call last):
    ...
    spatialobs._errors.InvalidInputError: CanvasLimits.max_ops must be a finite number >= 1, got 0
    """

    max_depth: int = 256
    max_key_chars: int = 1024
    max_coordinate: float = float(2**50)
    max_ops: int = 10_000
    max_text_chars: int = 20_000
    max_html_depth: int = 200

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 1 or v != v or v == float("inf"):
                raise InvalidInputError(f"CanvasLimits.{f.name} must be a finite number >= 1, got {echo(v)}")

    @contextlib.contextmanager
    def active(self) -> Iterator["CanvasLimits"]:
        """Make these the limits of the canvas calls made inside the ``with`` block."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


DEFAULT_LIMITS = CanvasLimits()
_CURRENT: ContextVar[CanvasLimits] = ContextVar("spatialobs_canvas_limits", default=DEFAULT_LIMITS)


def current() -> CanvasLimits:
    """The limits in force (:data:`DEFAULT_LIMITS` unless a ``with limits.active()`` block says otherwise)."""
    return _CURRENT.get()


_repr = reprlib.Repr()
_repr.maxstring = ECHO_CHARS - 6
_repr.maxother = ECHO_CHARS - 6
_repr.maxlist = _repr.maxdict = _repr.maxtuple = 4
_repr.maxlevel = 2


def echo(value: Any) -> str:
    """A short ``repr`` of a value for an error message (at most :data:`ECHO_CHARS` characters).

    Lone surrogates and other unprintable characters come out escaped.

    Examples
    --------
    >>> echo("abc")
    "'abc'"
    >>> echo("\\ud800")
    "'\\\\ud800'"
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return f"an integer of {len(str(abs(value))) if abs(value) < 10**4000 else 'over 4000'} digits"
    try:
        s = _repr.repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is still named
        s = f"<{type(value).__name__}>"
    s = s.encode("ascii", "backslashreplace").decode("ascii")
    return s if len(s) <= ECHO_CHARS else s[: ECHO_CHARS - 3] + "..."


def one_line(message: str) -> str:
    """A message on one line of at most :data:`MESSAGE_CHARS` printable characters.

    Examples
    --------
    >>> one_line("a\\nb " + "c" * 1000)[:6], len(one_line("c" * 1000)) <= MESSAGE_CHARS
    ('a b cc', True)
    """
    s = " ".join(str(message).split())
    s = s.encode("utf-8", "backslashreplace").decode("utf-8")
    return s if len(s) <= MESSAGE_CHARS else s[: MESSAGE_CHARS - 3] + "..."


def check_depth(value: Any, what: str, limit: int = 0) -> None:
    """Raise :class:`~spatialobs.InvalidInputError` when ``value`` nests deeper than ``limit`` levels.

    Walks with an explicit stack, so any depth is measured without recursion;
    ``limit`` defaults to :attr:`CanvasLimits.max_depth` of the limits in force.

    Examples
    --------
    >>> check_depth({"a": [1, [2]]}, "document")
    >>> check_depth([[[[]]]], "op 0", limit=3)
    Traceback (most recent call last):
    ...
    spatialobs._errors.InvalidInputError: op 0 nests deeper than 3 levels (CanvasLimits.max_depth)
    """
    limit = limit or current().max_depth
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        v, d = pop()
        tv = type(v)
        if tv is dict:
            items: Any = v.values()
        elif tv is list or tv is tuple:
            items = v
        else:
            continue
        if d > limit:
            raise InvalidInputError(f"{what} nests deeper than {limit} levels (CanvasLimits.max_depth)")
        for c in items:
            tc = type(c)
            if tc is dict or tc is list or tc is tuple:
                push((c, d + 1))


_F = TypeVar("_F", bound=Callable[..., Any])

#: Exceptions a public canvas call turns into InvalidInputError: what a hostile value held in a
#: record (a deep list, NaN, a lone surrogate, a huge integer, a list where a scalar belongs) raises.
#: A missing attribute, key or index is a bug and is left to surface as one.
_UNTYPED = (TypeError, ValueError, OverflowError, RecursionError, UnicodeError)


def typed_errors(what: str) -> Callable[[_F], _F]:
    """Decorate a public canvas call so that no exception but a SpatialObsError leaves it.

    An unexpected exception becomes :class:`~spatialobs.InvalidInputError` saying
    which call failed and why, on one bounded line; a SpatialObsError passes as it is.

    Examples
    --------
    >>> @typed_errors("writing the canvas")
    ... def write(v):
    ...     return float(v)
    >>> write([1])
    Traceback (most recent call last):
    ...
    spatialobs._errors.InvalidInputError: writing the canvas: the canvas holds a value that cannot be used (TypeError: float() argument must be a string or a real number, not 'list')
    """

    def wrap(fn: _F) -> _F:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except SpatialObsError:
                raise
            except TypeError as exc:
                tb = exc.__traceback__
                if tb is not None and tb.tb_next is None:
                    raise  # the call itself did not bind (an unknown or missing argument): the caller's mistake
                why = one_line(f"{type(exc).__name__}: {exc}")
                raise InvalidInputError(one_line(f"{what}: the canvas holds a value that cannot be used ({why})")) from None
            except _UNTYPED as exc:
                why = "nests too deep" if isinstance(exc, RecursionError) else one_line(f"{type(exc).__name__}: {exc}")
                raise InvalidInputError(one_line(f"{what}: the canvas holds a value that cannot be used ({why})")) from None

        return inner  # type: ignore[return-value]

    return wrap


def utf8_json(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` with characters kept as they are, unless that text could not be written as UTF-8.

    A lone surrogate (``"\\ud800"``, which JSON escapes allow and Python strings hold)
    has no UTF-8 form: then the whole text is written with ASCII escapes, which
    every reader decodes to the same value.

    Examples
    --------
    >>> utf8_json({"a": "é"}), utf8_json({"a": "\\ud800"})
    ('{"a": "é"}', '{"a": "\\\\ud800"}')
    """
    return _utf8_or_escaped(json.dumps(value, ensure_ascii=False, **kwargs), value, **kwargs)


def _utf8_or_escaped(text: str, value: Any, **kwargs: Any) -> str:
    """``text`` (``value`` written with characters kept) if it has a UTF-8 form, else ``value``
    written with ASCII escapes (``json.dumps`` with ``kwargs``)."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(value, ensure_ascii=True, **kwargs)
    return text


_dumps_compact: Optional[Callable[[Any], Optional[str]]]
try:
    from spatialobs.canvas._cjson import dumps_compact as _dumps_compact
except ImportError:  # a source tree without the compiled module: json.dumps writes everything
    _dumps_compact = None


def compact_json(value: Any) -> str:
    """``utf8_json(value, separators=(",", ":"), allow_nan=False)``, by a compiled writer for plain data.

    Plain data (exact dicts with string keys, lists, strings, ints, finite floats,
    booleans, None) is written by ``spatialobs.canvas._cjson``, byte for byte as
    ``json.dumps`` writes it; anything else goes to ``json.dumps``, with its errors.

    Examples
    --------
    >>> compact_json({"a": [1, 2.5, "é", None, True]}), compact_json({"a": "\\ud800"})
    ('{"a":[1,2.5,"é",null,true]}', '{"a":"\\\\ud800"}')
    """
    text = _dumps_compact(value) if _dumps_compact is not None else None
    if text is None:
        return utf8_json(value, separators=(",", ":"), allow_nan=False)
    return _utf8_or_escaped(text, value, separators=(",", ":"), allow_nan=False)
