"""Screen importers: Rico view hierarchies, DroidBot state files and generic element JSON.

Bad input of any shape raises :class:`~spatialobs.InvalidInputError` with one line
that names the file and the node, view or element, quoting at most
:data:`~spatialobs.screen.limits.ECHO_CHARS` characters of the offending value.
What one input may cost is bounded by :class:`~spatialobs.screen.limits.ScreenLimits`;
every walk uses an explicit stack, so deep input cannot exhaust the interpreter's.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, List, Mapping, Optional, Tuple, Union

from spatialobs._errors import InvalidInputError
from spatialobs.screen.limits import DEFAULT_LIMITS, ScreenLimits, echo
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = ["load_screen", "detect_format", "from_rico", "from_droidbot", "from_generic"]

PathLike = Union[str, "os.PathLike[str]"]


def _label(path: PathLike) -> str:
    return echo(os.path.basename(os.fspath(path)))[1:-1] or echo(os.fspath(path))


def _read_json(path: PathLike, limits: ScreenLimits) -> Any:
    label = _label(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > limits.max_bytes:
                raise InvalidInputError(f"{label}: {size} bytes is more than the {limits.max_bytes} a screen file "
                                        "may have (ScreenLimits.max_bytes)")
            data = f.read(int(limits.max_bytes) + 1)
    except OSError as exc:
        raise InvalidInputError(f"cannot read screen file {label}: {exc.strerror or type(exc).__name__}") from None
    if len(data) > limits.max_bytes:  # grew while being read, or not a regular file
        raise InvalidInputError(f"{label}: more than the {limits.max_bytes} bytes a screen file may have "
                                "(ScreenLimits.max_bytes)")
    try:
        import orjson  # optional, faster

        return orjson.loads(data)
    except ImportError:
        pass
    except ValueError as exc:  # orjson.JSONDecodeError is a ValueError
        raise InvalidInputError(f"{label}: not valid JSON: {echo(str(exc))[1:-1]}") from None
    try:
        return json.loads(data)
    except RecursionError:
        raise InvalidInputError(f"{label}: not valid JSON: nested too deeply for the parser") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{label}: not valid JSON: {echo(str(exc))[1:-1]}") from None


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
        keys = [k for _, k in zip(range(4), data)]
        raise InvalidInputError(
            "screen JSON is not a Rico view hierarchy (activity.root), a DroidBot state (views) "
            f"or a generic element list (elements); its keys are {echo(keys)}"
        )
    raise InvalidInputError(f"screen JSON must be an object or a list of elements, got {type(data).__name__}")


def load_screen(
    source: Union[PathLike, Mapping[str, Any], List[Any]],
    *,
    format: Optional[str] = None,
    meta: Optional[Union[ScreenMeta, Mapping[str, Any]]] = None,
    limits: Optional[ScreenLimits] = None,
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
    limits : ScreenLimits, optional
        Bounds on file size, tree depth, node count, string length and
        coordinate magnitude (:data:`~spatialobs.screen.limits.DEFAULT_LIMITS`).

    Returns
    -------
    Screen
        Elements in the source's document order. An element's text is its
        ``text``, else its content description.

    Raises
    ------
    InvalidInputError
        An unreadable file, malformed JSON, a record that breaks the format or an
        input beyond ``limits``; the message names the file and the node, view or
        element.

    Examples
    --------
    >>> s = load_screen({"width": 100, "height": 50,
    ...                  "elements": [{"bounds": [0, 0, 10, 10], "role": "button", "text": "OK"}]})
    >>> s.elements[0].text
    'OK'
    """
    lim = _limits(limits)
    name: Optional[str] = None
    base = ""
    if isinstance(source, (str, os.PathLike)):
        name, base = _label(source), os.path.basename(os.fspath(source))
        data = _read_json(source, lim)
    else:
        data = source
    try:
        fmt = format or detect_format(data)
        if fmt == "rico":
            screen = from_rico(data, limits=lim)
        elif fmt == "droidbot":
            screen = from_droidbot(data, limits=lim)
        elif fmt == "generic":
            screen = from_generic(data, limits=lim)
        else:
            raise InvalidInputError(f"unknown screen format {echo(fmt)}; expected 'rico', 'droidbot' or 'generic'")
    except InvalidInputError as exc:
        if name is not None:
            raise InvalidInputError(f"{name}: {exc}") from None
        raise
    if meta is not None:
        screen.meta = _merge_meta(screen.meta, meta)
    if name is not None:
        screen.source = base
    return screen


def _limits(limits: Optional[ScreenLimits]) -> ScreenLimits:
    if limits is None:
        return DEFAULT_LIMITS
    if not isinstance(limits, ScreenLimits):
        raise InvalidInputError(f"limits must be a ScreenLimits, got {type(limits).__name__}")
    return limits


def _merge_meta(base: ScreenMeta, override: Union[ScreenMeta, Mapping[str, Any]]) -> ScreenMeta:
    if isinstance(override, ScreenMeta):
        fields = {k: v for k, v in zip(("display_mode", "text_size", "app"), override.key()) if v is not None}
    elif isinstance(override, Mapping):
        unknown = [k for k in override if k not in ("display_mode", "text_size", "app")]
        if unknown:
            raise InvalidInputError(f"unknown screen meta fields {echo(unknown)}; expected display_mode, text_size, app")
        fields = {k: v for k, v in override.items() if v is not None}
    else:
        raise InvalidInputError(f"meta must be a ScreenMeta or a dict, got {type(override).__name__}")
    current = dict(zip(("display_mode", "text_size", "app"), base.key()))
    current.update(fields)
    return ScreenMeta(**current)


def _cut(s: str, limits: ScreenLimits) -> str:
    return s if len(s) <= limits.max_string else s[: int(limits.max_string)]


def _text_of(text: Any, desc: Any, limits: ScreenLimits) -> Optional[str]:
    if isinstance(text, str) and text.strip():
        return _cut(text, limits)
    if isinstance(desc, list):
        parts: List[str] = []
        size = 0
        for d in desc:
            if isinstance(d, str) and d.strip():
                parts.append(d)
                size += len(d) + 1
                if size > limits.max_string:
                    break
        return _cut(" ".join(parts), limits) if parts else None
    if isinstance(desc, str) and desc.strip():
        return _cut(desc, limits)
    return None


def _number(v: Any) -> float:
    # bool is an int; a bound of true is not a coordinate
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise TypeError
    return float(v)


def _box(raw: Any, where: str, limits: ScreenLimits) -> Tuple[float, float, float, float]:
    try:
        if isinstance(raw, (list, tuple)) and len(raw) == 2 and all(isinstance(p, (list, tuple)) for p in raw):
            (x0, y0), (x1, y1) = raw
        elif isinstance(raw, (list, tuple)):
            x0, y0, x1, y1 = raw
        else:
            raise TypeError
        b = (_number(x0), _number(y0), _number(x1), _number(y1))
    except (TypeError, ValueError, OverflowError):
        raise InvalidInputError(f"{where}: bounds must be [x0, y0, x1, y1], got {echo(raw)}") from None
    if not all(math.isfinite(v) for v in b):
        raise InvalidInputError(f"{where}: bounds must be finite, got {echo(raw)}")
    if not all(abs(v) <= limits.max_coordinate for v in b):
        raise InvalidInputError(f"{where}: bounds beyond +-{limits.max_coordinate:g} pixels "
                                f"(ScreenLimits.max_coordinate), got {echo(raw)}")
    if b[2] < b[0] or b[3] < b[1]:
        raise InvalidInputError(f"{where}: bounds need x1 >= x0 and y1 >= y0, got {echo(raw)}")
    return b


def _size(v: Any, what: str, limits: ScreenLimits) -> Any:
    # Screen() checks the value itself; only the magnitude limit is the importer's.
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if math.isfinite(f) and abs(f) > limits.max_coordinate:
            raise InvalidInputError(f"{what} {echo(v)} is beyond {limits.max_coordinate:g} pixels "
                                    "(ScreenLimits.max_coordinate)")
    return v


def _str_or_none(v: Any, limits: ScreenLimits) -> Optional[str]:
    return _cut(v, limits) if isinstance(v, str) and v else None


def _role(v: Any, where: str, limits: ScreenLimits) -> str:
    if not isinstance(v, str):
        raise InvalidInputError(f"{where}: class must be a string, got {echo(v)}")
    return _cut(v, limits)


#: A node's place in a Rico tree: (parent's place, child index); None is the root.
_Place = Optional[Tuple[Any, int]]


def _rico_path(place: _Place) -> str:
    # Built only for an error message, so the walk itself stores O(1) per node.
    steps: List[int] = []
    while place is not None:
        place, i = place
        steps.append(i)
    path = "activity.root" + "".join(f".children[{i}]" for i in reversed(steps[-6:]))
    if len(steps) > 6:
        path = f"activity.root.(+{len(steps) - 6} levels)" + path[len("activity.root"):]
    return path


def from_rico(data: Mapping[str, Any], *, limits: Optional[ScreenLimits] = None) -> Screen:
    """A Rico view hierarchy: the ``activity.root`` tree, depth first in child order.

    Keeps nodes with ``visible-to-user`` true (their invisible ancestors are walked
    through). ``class`` is the role; editable when the class or an ancestor class
    is an ``EditText``. The screen size is the root's bounds; the app is the
    package in ``activity_name``. Trees deeper than ``limits.max_depth`` levels or
    with more than ``limits.max_nodes`` nodes are rejected.
    """
    lim = _limits(limits)
    activity = data.get("activity") if isinstance(data, Mapping) else None
    root = activity.get("root") if isinstance(activity, Mapping) else None
    if not isinstance(root, Mapping):
        raise InvalidInputError("Rico view hierarchy: activity.root must be an object")
    rb = _box(root.get("bounds"), "Rico node activity.root", lim)
    width, height = rb[2], rb[3]
    elements: List[Element] = []
    stack: List[Tuple[Any, _Place, int]] = [(root, None, 1)]
    walked = 0
    while stack:
        node, place, depth = stack.pop()
        if node is None:
            continue
        walked += 1
        if walked > lim.max_nodes:
            raise InvalidInputError(f"Rico view hierarchy: more than {lim.max_nodes} nodes (ScreenLimits.max_nodes)")
        if not isinstance(node, Mapping):
            raise InvalidInputError(f"Rico node {_rico_path(place)} must be an object, got {type(node).__name__}")
        children = node.get("children") or []
        if not isinstance(children, list):
            raise InvalidInputError(f"Rico node {_rico_path(place)}: children must be a list, "
                                    f"got {type(children).__name__}")
        if children and depth >= lim.max_depth:
            raise InvalidInputError(f"Rico node {_rico_path(place)}: the view tree is deeper than {lim.max_depth} "
                                    "levels (ScreenLimits.max_depth)")
        # Reversed so that the stack pops them in document order.
        for i in range(len(children) - 1, -1, -1):
            stack.append((children[i], (place, i), depth + 1))
        if not node.get("visible-to-user"):
            continue
        cls = node.get("class")
        if not isinstance(cls, str):
            raise InvalidInputError(f"Rico node {_rico_path(place)}: class must be a string, got {echo(cls)}")
        ancestors = node.get("ancestors") or []
        if not isinstance(ancestors, list):
            raise InvalidInputError(f"Rico node {_rico_path(place)}: ancestors must be a list of class names, "
                                    f"got {echo(ancestors)}")
        editable = "EditText" in cls or any(isinstance(a, str) and a.endswith("EditText") for a in ancestors)
        raw_bounds = node.get("bounds")
        try:
            bounds = _box(raw_bounds, "", lim)
        except InvalidInputError as exc:
            raise InvalidInputError(f"Rico node {_rico_path(place)}{exc}") from None
        elements.append(
            Element(
                bounds=bounds,
                role=_cut(cls, lim),
                text=_text_of(node.get("text"), node.get("content-desc"), lim),
                editable=editable,
                clickable=bool(node.get("clickable")),
                id=_str_or_none(node.get("resource-id"), lim),
            )
        )
    if not (width > 0 and height > 0):
        raise InvalidInputError(f"Rico view hierarchy: the root bounds {echo(root.get('bounds'))} give no screen size")
    app = None
    activity_name = data.get("activity_name")
    if isinstance(activity_name, str) and activity_name:
        app = _cut(activity_name.split("/", 1)[0], lim)
    elif isinstance(root.get("package"), str):
        app = _cut(root["package"], lim)
    return Screen(elements, width, height, ScreenMeta(app=app), source="rico")


def from_droidbot(data: Mapping[str, Any], *, limits: Optional[ScreenLimits] = None) -> Screen:
    """A DroidBot state file: the ``views`` list in order, keeping ``visible`` views.

    ``bounds`` is ``[[x0, y0], [x1, y1]]``; ``class`` is the role; text is ``text``,
    else ``content_description``; ``editable`` and ``clickable`` as given; the id is
    ``resource_id``. The screen size is ``width`` x ``height``; the app is the
    package of ``foreground_activity``. More than ``limits.max_nodes`` views are
    rejected.
    """
    lim = _limits(limits)
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"DroidBot state must be an object, got {type(data).__name__}")
    views = data.get("views")
    if not isinstance(views, list):
        raise InvalidInputError(f"DroidBot state: views must be a list, got {type(views).__name__}")
    if len(views) > lim.max_nodes:
        raise InvalidInputError(f"DroidBot state: more than {lim.max_nodes} views (ScreenLimits.max_nodes)")
    width, height = data.get("width"), data.get("height")
    if width is None or height is None:
        raise InvalidInputError("DroidBot state: width and height are required")
    width = _size(width, "DroidBot state: width", lim)
    height = _size(height, "DroidBot state: height", lim)
    elements: List[Element] = []
    for i, v in enumerate(views):
        where = f"DroidBot view {i}"
        if not isinstance(v, Mapping):
            raise InvalidInputError(f"{where} must be an object, got {type(v).__name__}")
        if not v.get("visible", True):
            continue
        elements.append(
            Element(
                bounds=_box(v.get("bounds"), where, lim),
                role=_role(v.get("class"), where, lim),
                text=_text_of(v.get("text"), v.get("content_description"), lim),
                editable=bool(v.get("editable")),
                clickable=bool(v.get("clickable")),
                id=_str_or_none(v.get("resource_id"), lim),
            )
        )
    app = None
    fg = data.get("foreground_activity")
    if isinstance(fg, str) and fg:
        app = _cut(fg.split("/", 1)[0], lim)
    elif views and isinstance(views[0], Mapping) and isinstance(views[0].get("package"), str):
        app = _cut(views[0]["package"], lim)
    try:
        return Screen(elements, width, height, ScreenMeta(app=app), source="droidbot")
    except InvalidInputError as exc:
        raise InvalidInputError(f"DroidBot state: {exc}") from None


def _element_id(eid: Any, where: str, limits: ScreenLimits) -> Optional[str]:
    if eid is None:
        return None
    if isinstance(eid, str):
        return _cut(eid, limits)
    if isinstance(eid, (int, float)) and not isinstance(eid, bool):
        try:
            return _cut(str(eid), limits)
        except ValueError:  # an integer with more digits than str() converts
            pass
    raise InvalidInputError(f"{where}: id must be a string or a number, got {echo(eid)}")


def from_generic(data: Union[Mapping[str, Any], List[Any]], *, limits: Optional[ScreenLimits] = None) -> Screen:
    """The generic element JSON of DESIGN §10, or a bare list of elements.

    More than ``limits.max_nodes`` elements are rejected.
    """
    lim = _limits(limits)
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
        raise InvalidInputError(f"generic screen JSON: elements must be a list, got {type(raw_elements).__name__}")
    if len(raw_elements) > lim.max_nodes:
        raise InvalidInputError(f"generic screen JSON: more than {lim.max_nodes} elements (ScreenLimits.max_nodes)")
    width = _size(width, "generic screen JSON: width", lim)
    height = _size(height, "generic screen JSON: height", lim)
    elements: List[Element] = []
    for i, e in enumerate(raw_elements):
        where = f"element {i}"
        if not isinstance(e, Mapping):
            raise InvalidInputError(f"{where} must be an object, got {type(e).__name__}")
        role = e.get("role")
        if not isinstance(role, str):
            raise InvalidInputError(f"{where}: role must be a string, got {echo(role)}")
        text = e.get("text")
        if text is not None and not isinstance(text, str):
            raise InvalidInputError(f"{where}: text must be a string, got {type(text).__name__}")
        states = e.get("states", ())
        if not isinstance(states, (list, tuple)) or not all(isinstance(x, str) for x in states):
            raise InvalidInputError(f"{where}: states must be a list of strings, got {echo(states)}")
        elements.append(
            Element(
                bounds=_box(e.get("bounds"), where, lim),
                role=_cut(role, lim),
                text=None if text is None else _cut(text, lim),
                editable=bool(e.get("editable", False)),
                clickable=bool(e.get("clickable", False)),
                id=_element_id(e.get("id"), where, lim),
                states=tuple(_cut(x, lim) for x in states),
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
        try:
            meta = _merge_meta(meta, {k: _cut(v, lim) if isinstance(v, str) else v for k, v in raw_meta.items()})
        except InvalidInputError as exc:
            raise InvalidInputError(f"generic screen JSON: {exc}") from None
    try:
        return Screen(elements, width, height, meta, source="generic")
    except InvalidInputError as exc:
        raise InvalidInputError(f"generic screen JSON: {exc}") from None
