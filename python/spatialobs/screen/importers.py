"""Screen importers: Rico view hierarchies, DroidBot state files and generic element JSON."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from spatialobs._errors import InvalidInputError
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = ["load_screen", "detect_format", "from_rico", "from_droidbot", "from_generic"]

PathLike = Union[str, "os.PathLike[str]"]


def _read_json(path: PathLike) -> Any:
    with open(path, "rb") as f:
        data = f.read()
    try:
        import orjson  # optional, faster

        return orjson.loads(data)
    except ImportError:
        pass
    except ValueError as exc:  # orjson.JSONDecodeError is a ValueError
        raise InvalidInputError(f"{os.fspath(path)}: not valid JSON: {exc}") from None
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{os.fspath(path)}: not valid JSON: {exc}") from None


def detect_format(data: Any) -> str:
    """Name the format of parsed JSON: ``"rico"``, ``"droidbot"`` or ``"generic"``.

    Raises :class:`~spatialobs.InvalidInputError` when it is none of them.
    """
    if isinstance(data, list):
        return "generic"
    if isinstance(data, Mapping):
        activity = data.get("activity")
        if isinstance(activity, Mapping) and "root" in activity:
            return "rico"
        if "views" in data:
            return "droidbot"
        if "elements" in data:
            return "generic"
        keys = sorted(str(k) for k in data)[:8]
        raise InvalidInputError(
            "screen JSON is not a Rico view hierarchy (activity.root), a DroidBot state (views) "
            f"or a generic element list (elements); its keys are {keys}"
        )
    raise InvalidInputError(f"screen JSON must be an object or a list of elements, got {type(data).__name__}")


def load_screen(
    source: Union[PathLike, Mapping[str, Any], List[Any]],
    *,
    format: Optional[str] = None,
    meta: Optional[Union[ScreenMeta, Mapping[str, Any]]] = None,
) -> Screen:
    """Load a screen from a file path or parsed JSON; the format is detected.

    Parameters
    ----------
    source : path, dict or list
        A Rico view hierarchy (``activity.root`` tree; only ``visible-to-user``
        nodes are kept), a DroidBot state file (``views``; only ``visible`` views),
        or the generic element JSON of DESIGN §10 (an object with ``width``,
        ``height``, ``meta`` and ``elements``, or a bare list of elements, whose
        screen size is then the extent of their bounds).
    format : {"rico", "droidbot", "generic"}, optional
        Skip detection.
    meta : ScreenMeta or dict, optional
        Metadata fields that override what the importer found (``display_mode``,
        ``text_size``, ``app``).

    Returns
    -------
    Screen
        Elements in the source's document order. An element's text is its
        ``text``, else its content description.

    Raises
    ------
    InvalidInputError
        Malformed JSON or a record that breaks the format; the message names the
        file and the node, view or element.

    Examples
    --------
    >>> s = load_screen({"width": 100, "height": 50,
    ...                  "elements": [{"bounds": [0, 0, 10, 10], "role": "button", "text": "OK"}]})
    >>> s.elements[0].text
    'OK'
    """
    name: Optional[str] = None
    if isinstance(source, (str, os.PathLike)):
        name = os.path.basename(os.fspath(source))
        data = _read_json(source)
    else:
        data = source
    fmt = format or detect_format(data)
    try:
        if fmt == "rico":
            screen = from_rico(data)
        elif fmt == "droidbot":
            screen = from_droidbot(data)
        elif fmt == "generic":
            screen = from_generic(data)
        else:
            raise InvalidInputError(f"unknown screen format {fmt!r}; expected 'rico', 'droidbot' or 'generic'")
    except InvalidInputError as exc:
        if name is not None:
            raise InvalidInputError(f"{name}: {exc}") from None
        raise
    if meta is not None:
        screen.meta = _merge_meta(screen.meta, meta)
    if name is not None:
        screen.source = name
    return screen


def _merge_meta(base: ScreenMeta, override: Union[ScreenMeta, Mapping[str, Any]]) -> ScreenMeta:
    if isinstance(override, ScreenMeta):
        fields = {k: v for k, v in zip(("display_mode", "text_size", "app"), override.key()) if v is not None}
    elif isinstance(override, Mapping):
        unknown = set(override) - {"display_mode", "text_size", "app"}
        if unknown:
            raise InvalidInputError(f"unknown screen meta fields {sorted(unknown)}; expected display_mode, text_size, app")
        fields = {k: v for k, v in override.items() if v is not None}
    else:
        raise InvalidInputError(f"meta must be a ScreenMeta or a dict, got {type(override).__name__}")
    current = dict(zip(("display_mode", "text_size", "app"), base.key()))
    current.update(fields)
    return ScreenMeta(**current)


def _text_of(text: Any, desc: Any) -> Optional[str]:
    if isinstance(text, str) and text.strip():
        return text
    if isinstance(desc, list):
        parts = [d for d in desc if isinstance(d, str) and d.strip()]
        return " ".join(parts) if parts else None
    if isinstance(desc, str) and desc.strip():
        return desc
    return None


def _box(raw: Any, where: str) -> Tuple[float, float, float, float]:
    try:
        if isinstance(raw, (list, tuple)) and len(raw) == 2 and all(isinstance(p, (list, tuple)) for p in raw):
            (x0, y0), (x1, y1) = raw
        else:
            x0, y0, x1, y1 = raw
        b = (float(x0), float(y0), float(x1), float(y1))
    except (TypeError, ValueError):
        raise InvalidInputError(f"{where}: bounds must be [x0, y0, x1, y1], got {raw!r}") from None
    if not all(math.isfinite(v) for v in b):
        raise InvalidInputError(f"{where}: bounds must be finite, got {raw!r}")
    if b[2] < b[0] or b[3] < b[1]:
        raise InvalidInputError(f"{where}: bounds need x1 >= x0 and y1 >= y0, got {raw!r}")
    return b


def _str_or_none(v: Any) -> Optional[str]:
    return v if isinstance(v, str) and v else None


def from_rico(data: Mapping[str, Any]) -> Screen:
    """A Rico view hierarchy: the ``activity.root`` tree, depth first in child order.

    Keeps nodes with ``visible-to-user`` true (their invisible ancestors are walked
    through). ``class`` is the role; editable when the class or an ancestor class
    is an ``EditText``. The screen size is the root's bounds; the app is the
    package in ``activity_name``.
    """
    activity = data.get("activity") if isinstance(data, Mapping) else None
    root = activity.get("root") if isinstance(activity, Mapping) else None
    if not isinstance(root, Mapping):
        raise InvalidInputError("Rico view hierarchy: activity.root must be an object")
    rb = _box(root.get("bounds"), "Rico node activity.root")
    width, height = rb[2], rb[3]
    elements: List[Element] = []
    stack: List[Tuple[Any, str]] = [(root, "activity.root")]
    while stack:
        node, where = stack.pop()
        if node is None:
            continue
        if not isinstance(node, Mapping):
            raise InvalidInputError(f"Rico node {where} must be an object, got {type(node).__name__}")
        children = node.get("children") or []
        if not isinstance(children, list):
            raise InvalidInputError(f"Rico node {where}: children must be a list")
        # Reversed so that the stack pops them in document order.
        for i in range(len(children) - 1, -1, -1):
            stack.append((children[i], f"{where}.children[{i}]"))
        if not node.get("visible-to-user"):
            continue
        cls = node.get("class")
        if not isinstance(cls, str):
            raise InvalidInputError(f"Rico node {where}: class must be a string, got {cls!r}")
        ancestors = node.get("ancestors") or []
        editable = "EditText" in cls or any(isinstance(a, str) and a.endswith("EditText") for a in ancestors)
        elements.append(
            Element(
                bounds=_box(node.get("bounds"), f"Rico node {where}"),
                role=cls,
                text=_text_of(node.get("text"), node.get("content-desc")),
                editable=editable,
                clickable=bool(node.get("clickable")),
                id=_str_or_none(node.get("resource-id")),
            )
        )
    if not (width > 0 and height > 0):
        raise InvalidInputError(f"Rico view hierarchy: the root bounds {root.get('bounds')!r} give no screen size")
    app = None
    activity_name = data.get("activity_name")
    if isinstance(activity_name, str) and activity_name:
        app = activity_name.split("/", 1)[0]
    elif isinstance(root.get("package"), str):
        app = root["package"]
    return Screen(elements, width, height, ScreenMeta(app=app), source="rico")


def from_droidbot(data: Mapping[str, Any]) -> Screen:
    """A DroidBot state file: the ``views`` list in order, keeping ``visible`` views.

    ``bounds`` is ``[[x0, y0], [x1, y1]]``; ``class`` is the role; text is ``text``,
    else ``content_description``; ``editable`` and ``clickable`` as given; the id is
    ``resource_id``. The screen size is ``width`` x ``height``; the app is the
    package of ``foreground_activity``.
    """
    views = data.get("views")
    if not isinstance(views, list):
        raise InvalidInputError("DroidBot state: views must be a list")
    width, height = data.get("width"), data.get("height")
    if width is None or height is None:
        raise InvalidInputError("DroidBot state: width and height are required")
    elements: List[Element] = []
    for i, v in enumerate(views):
        where = f"DroidBot view {i}"
        if not isinstance(v, Mapping):
            raise InvalidInputError(f"{where} must be an object, got {type(v).__name__}")
        if not v.get("visible", True):
            continue
        cls = v.get("class")
        if not isinstance(cls, str):
            raise InvalidInputError(f"{where}: class must be a string, got {cls!r}")
        elements.append(
            Element(
                bounds=_box(v.get("bounds"), where),
                role=cls,
                text=_text_of(v.get("text"), v.get("content_description")),
                editable=bool(v.get("editable")),
                clickable=bool(v.get("clickable")),
                id=_str_or_none(v.get("resource_id")),
            )
        )
    app = None
    fg = data.get("foreground_activity")
    if isinstance(fg, str) and fg:
        app = fg.split("/", 1)[0]
    elif views and isinstance(views[0], Mapping) and isinstance(views[0].get("package"), str):
        app = views[0]["package"]
    try:
        return Screen(elements, width, height, ScreenMeta(app=app), source="droidbot")
    except InvalidInputError as exc:
        raise InvalidInputError(f"DroidBot state: {exc}") from None


def from_generic(data: Union[Mapping[str, Any], List[Any]]) -> Screen:
    """The generic element JSON of DESIGN §10, or a bare list of elements."""
    if isinstance(data, list):
        raw_elements: Any = data
        width = height = None
        raw_meta: Any = None
    elif isinstance(data, Mapping):
        raw_elements = data.get("elements")
        width, height = data.get("width"), data.get("height")
        raw_meta = data.get("meta")
    else:
        raise InvalidInputError(f"generic screen JSON must be an object or a list, got {type(data).__name__}")
    if not isinstance(raw_elements, list):
        raise InvalidInputError("generic screen JSON: elements must be a list")
    elements: List[Element] = []
    for i, e in enumerate(raw_elements):
        where = f"element {i}"
        if not isinstance(e, Mapping):
            raise InvalidInputError(f"{where} must be an object, got {type(e).__name__}")
        role = e.get("role")
        if not isinstance(role, str):
            raise InvalidInputError(f"{where}: role must be a string, got {role!r}")
        text = e.get("text")
        if text is not None and not isinstance(text, str):
            raise InvalidInputError(f"{where}: text must be a string, got {type(text).__name__}")
        eid = e.get("id")
        elements.append(
            Element(
                bounds=_box(e.get("bounds"), where),
                role=role,
                text=text,
                editable=bool(e.get("editable", False)),
                clickable=bool(e.get("clickable", False)),
                id=None if eid is None else str(eid),
            )
        )
    if width is None and height is None and isinstance(data, list):
        if not elements:
            raise InvalidInputError("a bare element list needs at least one element to give the screen size")
        width = max(e.bounds[2] for e in elements)
        height = max(e.bounds[3] for e in elements)
    if width is None or height is None:
        raise InvalidInputError("generic screen JSON: width and height are required")
    meta = ScreenMeta()
    if raw_meta is not None:
        if not isinstance(raw_meta, Mapping):
            raise InvalidInputError(f"generic screen JSON: meta must be an object, got {type(raw_meta).__name__}")
        meta = _merge_meta(meta, raw_meta)
    try:
        return Screen(elements, width, height, meta, source="generic")
    except InvalidInputError as exc:
        raise InvalidInputError(f"generic screen JSON: {exc}") from None
