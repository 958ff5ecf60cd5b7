"""Screen records: :class:`Element`, :class:`ScreenMeta` and :class:`Screen`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from spatialobs._errors import InvalidInputError
from spatialobs.screen.limits import echo

__all__ = ["Element", "ScreenMeta", "Screen"]

Box = Tuple[float, float, float, float]


def _checked_bounds(b: Any) -> Box:
    # Element's full check of its bounds: any four numbers float() takes, finite and ordered.
    try:
        if len(b) != 4:
            raise ValueError
        values = tuple(float(v) for v in b)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInputError(f"element bounds must be four numbers [x0, y0, x1, y1], got {echo(b)}") from None
    if not all(math.isfinite(v) for v in values):
        raise InvalidInputError(f"element bounds must be finite, got {echo(b)}")
    if values[2] < values[0] or values[3] < values[1]:
        raise InvalidInputError(f"element bounds need x1 >= x0 and y1 >= y0, got {echo(b)}")
    return (values[0], values[1], values[2], values[3])


def _plain_bounds_py(b: Any) -> Optional[Box]:
    # The pure-Python twin of the compiled _cmodel.plain_bounds (its test oracle, and the
    # fallback when the compiled module is absent): the common case of _checked_bounds, a
    # tuple or list of four finite, ordered floats or ints, as floats; None otherwise.
    if (type(b) is not tuple and type(b) is not list) or len(b) != 4:
        return None
    if any(type(v) is not float and type(v) is not int for v in b):
        return None
    try:
        x0, y0, x1, y1 = (float(v) for v in b)
    except OverflowError:
        return None
    if not (math.isfinite(x0) and math.isfinite(y0) and math.isfinite(x1) and math.isfinite(y1)):
        return None
    if x1 < x0 or y1 < y0:
        return None
    return (x0, y0, x1, y1)


try:
    from spatialobs.screen._cmodel import plain_bounds as _plain_bounds
except ImportError:  # a source tree without the compiled module
    _plain_bounds = _plain_bounds_py


@dataclass(frozen=True)
class Element:
    """One UI element of a screen.

    Parameters
    ----------
    bounds : (x0, y0, x1, y1)
        Bounding box in screen pixels, y down; finite with ``x1 >= x0`` and ``y1 >= y0``.
    role : str
        The element's kind as the source names it (an Android class, a UI Automation
        control type, an ARIA role).
    text : str or None
        Visible text or accessible label, raw (normalization happens in
        :func:`~spatialobs.screen.featurize`).
    editable, clickable : bool
    id : str or None
        The source's own id for the element, when it has one.
    states : tuple of str
        States the source reports beside the two flags (``"focused"``, ``"checked"``,
        ``"selected"``, ``"expanded"``, ``"disabled"``...), as evidence: they are not
        part of the screen's identity (:func:`~spatialobs.screen.featurize` ignores them).

    Examples
    --------
    >>> Element((0, 0, 100, 40), "button", "OK", clickable=True).role
    'button'
    """

    bounds: Box
    role: str
    text: Optional[str] = None
    editable: bool = False
    clickable: bool = False
    id: Optional[str] = None
    states: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.states:
            st = self.states
            if isinstance(st, str) or not all(isinstance(x, str) for x in st):
                raise InvalidInputError(f"element states must be a sequence of strings, got {echo(st)}")
            if type(st) is not tuple:
                object.__setattr__(self, "states", tuple(st))
        b = self.bounds
        values = _plain_bounds(b)
        if values is None:
            values = _checked_bounds(b)
        if not isinstance(self.role, str):
            raise InvalidInputError(f"element role must be a string, got {echo(self.role)}")
        if self.text is not None and not isinstance(self.text, str):
            raise InvalidInputError(f"element text must be a string or None, got {type(self.text).__name__}")
        object.__setattr__(self, "bounds", values)


@dataclass(frozen=True)
class ScreenMeta:
    """Metadata that must match exactly for two screens to be the same state.

    ``display_mode`` (for example ``"portrait"``, ``"dark"``), ``text_size``
    (a text-size bin) and ``app`` (package or process name). ``None`` means unknown
    and only matches ``None``. A number is kept as its decimal string; any other
    type is rejected.
    """

    display_mode: Optional[str] = None
    text_size: Optional[str] = None
    app: Optional[str] = None

    def __post_init__(self) -> None:
        for name in ("display_mode", "text_size", "app"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                text = None
                if isinstance(v, (int, float)):
                    try:
                        text = str(v)
                    except ValueError:  # an integer with more digits than str() converts
                        pass
                if text is None:
                    raise InvalidInputError(f"screen meta {name} must be a string, got {echo(v)}")
                object.__setattr__(self, name, text)

    def key(self) -> Tuple[Optional[str], Optional[str], Optional[str]]:
        """The tuple that eligibility compares."""
        return (self.display_mode, self.text_size, self.app)


@dataclass
class Screen:
    """A screen: its elements, its size in pixels and its metadata.

    ``source`` says where it came from (a file name or format, a page's URL) and
    ``title`` is the window's title (a page's title); neither is part of the
    screen's identity.

    Examples
    --------
    >>> s = Screen([Element((0, 0, 100, 40), "button", "OK", clickable=True)], 360, 640)
    >>> s.bounds_array().tolist()
    [[0.0, 0.0, 100.0, 40.0]]
    >>> s.to_dict()["elements"][0]
    {'bounds': [0.0, 0.0, 100.0, 40.0], 'role': 'button', 'text': 'OK', 'clickable': True}
    """

    elements: Sequence[Element]
    width: float
    height: float
    meta: ScreenMeta = field(default_factory=ScreenMeta)
    source: Optional[str] = None
    title: Optional[str] = None

    def __post_init__(self) -> None:
        for name in ("width", "height"):
            v = getattr(self, name)
            try:
                if isinstance(v, bool):
                    raise TypeError
                f = float(v)
            except (TypeError, ValueError):
                raise InvalidInputError(f"screen {name} must be a number, got {echo(v)}") from None
            except OverflowError:
                f = math.inf
            if not (math.isfinite(f) and f > 0):
                raise InvalidInputError(f"screen {name} must be finite and > 0, got {echo(v)}")
            setattr(self, name, f)
        self.elements = list(self.elements)
        for i, e in enumerate(self.elements):
            if not isinstance(e, Element):
                raise InvalidInputError(f"screen element {i} must be an Element, got {type(e).__name__}")
        if not isinstance(self.meta, ScreenMeta):
            raise InvalidInputError(f"screen meta must be a ScreenMeta, got {type(self.meta).__name__}")

    def bounds_array(self) -> npt.NDArray[np.float64]:
        """Element bounds as an ``(n, 4)`` float64 array."""
        if not self.elements:
            return np.empty((0, 4), dtype=np.float64)
        return np.array([e.bounds for e in self.elements], dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        """The generic element JSON form (DESIGN §10), which :func:`load_screen` reads back."""
        meta = {k: v for k, v in zip(("display_mode", "text_size", "app"), self.meta.key()) if v is not None}
        out: dict[str, Any] = {"width": self.width, "height": self.height}
        if meta:
            out["meta"] = meta
        elements = []
        for e in self.elements:
            d: dict[str, Any] = {"bounds": list(e.bounds), "role": e.role}
            if e.text is not None:
                d["text"] = e.text
            if e.editable:
                d["editable"] = True
            if e.clickable:
                d["clickable"] = True
            if e.id is not None:
                d["id"] = e.id
            if e.states:
                d["states"] = list(e.states)
            elements.append(d)
        out["elements"] = elements
        return out
