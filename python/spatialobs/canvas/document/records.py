"""Record types of the canvas document: pages, nodes, bindings, viewports, diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Dict, Optional, Tuple

__all__ = ["Node", "Binding", "Page", "Viewport", "Diagnostic"]


#: Each record class's field names in their order (see :func:`_field_names`).
_FIELD_NAMES: Dict[type, Tuple[str, ...]] = {}


def _field_names(cls: type) -> Tuple[str, ...]:
    """The names of a record class's fields in their order (``dataclasses.fields`` once per class, not
    on every ``to_dict``)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


@dataclass(frozen=True)
class Node:
    """One object on a canvas (shape, frame, group, connector, text, ...).

    Nodes are immutable: change one through :meth:`Canvas.update`, which runs the
    sanitizer and invalidates derived geometry.

    Attributes
    ----------
    id : str
        Stable id (``"shape:abc"`` for tldraw, the element id for Excalidraw).
    type : str
        Free string: ``frame``, ``group``, ``geo``, ``note``, ``text``, ``arrow``,
        ``line``, ``draw``, ``image``, ``rectangle``, ``artboard``, ...
    parent : str
        Id of the parent node or of the page.
    index : str
        Fractional index ordering siblings (compared as strings).
    x, y : float
        Position of the local origin in the parent's coordinates.
    w, h : float
        Size of the local geometry ``(0, 0, w, h)``; for point-based types (arrow,
        line, draw, ...) the size of the points' bounding box, which may start
        elsewhere than the origin.
    rotation : float
        Radians about the local origin (tldraw convention), relative to the parent.
    text, name : str or None
        Plain text label; name of a frame / artboard.
    style : dict
        Normalized style (``color``, ``fill``, ``dash``, ``size``, ``font``, ...).
    opacity : float
        0 to 1.
    locked, hidden : bool
    props : dict
        Type-specific extras kept verbatim (arrow endpoints, points, tldraw props).

    Examples
    --------
    >>> Node("shape:a", "geo", "page:1", "a1", 10, 20, 100, 50).w
    100
    """

    id: str
    type: str
    parent: str
    index: str = "a1"
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    rotation: float = 0.0
    text: Optional[str] = None
    name: Optional[str] = None
    style: Dict[str, Any] = field(default_factory=dict)
    opacity: float = 1.0
    locked: bool = False
    hidden: bool = False
    props: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """All fields as a plain dict (what :meth:`Canvas.to_json` writes).

        Examples
        --------
        >>> Node("a", "geo", "p").to_dict()["parent"]
        'p'
        """
        return {k: getattr(self, k) for k in _field_names(type(self))}

    def replace(self, **changes: Any) -> "Node":
        """A copy with some fields changed, *not* sanitized (use :meth:`Canvas.update`)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class Binding:
    """A native connection: connector ``from_id`` attached at ``terminal`` to ``to_id``.

    Attributes
    ----------
    id, type : str
        Binding id; ``type`` is ``"arrow"`` for connectors.
    from_id, to_id : str
        The connector node and the target node.
    terminal : str
        ``"start"`` or ``"end"``.
    anchor : (float, float)
        Normalized anchor in the target's local box (0..1 each, may overshoot).
    precise : bool
        Whether the anchor is used as is (else the target's center is aimed at).
    props : dict
        Extras kept verbatim (``isExact``, ``snap``, Excalidraw ``focus``/``gap``, ...).

    Examples
    --------
    >>> Binding("b1", "arrow", "shape:arrow", "shape:box", "end").anchor
    (0.5, 0.5)
    """

    id: str
    type: str
    from_id: str
    to_id: str
    terminal: str = "end"
    anchor: Tuple[float, float] = (0.5, 0.5)
    precise: bool = False
    props: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """All fields as a plain dict."""
        d = {k: getattr(self, k) for k in _field_names(type(self))}
        d["anchor"] = list(self.anchor)
        return d


@dataclass(frozen=True)
class Page:
    """A page of a canvas: ``id``, ``name``, fractional ``index`` and ``meta``.

    Examples
    --------
    >>> Page("page:1", "Page 1").index
    'a1'
    """

    id: str
    name: str = ""
    index: str = "a1"
    meta: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """All fields as a plain dict."""
        return {k: getattr(self, k) for k in _field_names(type(self))}


@dataclass(frozen=True)
class Viewport:
    """A viewport in page units: upper-left corner ``(x, y)`` and size ``(w, h)``.

    Examples
    --------
    >>> Viewport(10, 20, 100, 50).as_box()
    (10.0, 20.0, 110.0, 70.0)
    >>> Viewport.from_box((0, 0, 4, 3))
    Viewport(x=0.0, y=0.0, w=4.0, h=3.0)
    """

    x: float
    y: float
    w: float
    h: float

    def as_box(self) -> Tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)``, the form the geometry kernels take."""
        return (float(self.x), float(self.y), float(self.x + self.w), float(self.y + self.h))

    @classmethod
    def from_box(cls, box: Any) -> "Viewport":
        """The viewport of a box ``(x0, y0, x1, y1)``."""
        x0, y0, x1, y1 = (float(v) for v in box)
        return cls(x0, y0, x1 - x0, y1 - y0)


@dataclass(frozen=True)
class Diagnostic:
    """A problem found in a document and how it was handled.

    Attributes
    ----------
    code : str
        ``duplicate_id``, ``dangling_parent``, ``parent_cycle``, ``dangling_binding``,
        ``invalid_geometry``, ``negative_size``, ``unknown_type``, ``missing_field``,
        ``invalid_field``, ``invalid_record``, ``missing_page``.
    record : str
        Id of the offending record (``"?"`` when it has none).
    message : str
        What was wrong and what was done about it.

    Examples
    --------
    >>> str(Diagnostic("duplicate_id", "shape:a", "second copy dropped"))
    'duplicate_id shape:a: second copy dropped'
    """

    code: str
    record: str
    message: str

    def __str__(self) -> str:
        return f"{self.code} {self.record}: {self.message}"
