"""Agent operations on a canvas: ``canvas_ops`` blocks parsed from a reply and applied.

An agent edits the canvas by writing fenced ``canvas_ops`` blocks in its reply::

    ```canvas_ops
    {"ops": [
      {"op": "create_artboard", "id": "home", "name": "Home", "w": 800, "h": 600},
      {"op": "parse_html", "target": "home", "html": "<h1>Welcome</h1>"},
      {"op": "update_styles", "id": "LATEST_CREATED_ARTBOARD", "styles": {"background-color": "#fafafa"}}
    ]}
    ```

:func:`parse_ops` reads every such block tolerantly; :class:`Executor` applies the
ops through the canvas's one write path (:meth:`Canvas.add`, :meth:`Canvas.update`,
:meth:`Canvas.remove`), so an agent's edit and a person's edit of the same change
produce identical records.

Ops (each a JSON object with ``"op"``; field spellings in brackets are accepted too)
-----------------------------------------------------------------------------------
``create_artboard``
    ``id`` / ``ref`` (alias of the new artboard), ``name``, ``x``, ``y``, ``w``
    [``width``], ``h`` [``height``] (default 1440 × 900, placed 100 to the right of
    the page's content), ``background`` [``backgroundColor``, ``fill``], ``style``,
    ``page``, ``html`` (laid out inside it, as ``parse_html``). Creates a ``frame``.
``parse_html``
    ``target`` [``parent``, ``artboard``, ``into``, ``id``] (default: the default
    artboard), ``html``, ``mode`` (``"append"``, the default, stacks below the
    target's children; ``"replace"`` removes them first), ``x``, ``y`` (corner of
    the first top-level element). See :mod:`spatialobs.canvas.editing.html` for the tag mapping.
``update_styles``
    ``id`` or ``ids``, ``styles`` [``style``, ``css``]: a mapping or a CSS declaration
    string; merged into the style (a null removes that key).
``set_text``
    ``id`` or ``ids``, ``text``. Sets an artboard's (frame's) ``name``, any other
    node's ``text``.
``update_node``
    ``id`` or ``ids``, ``changes`` [``fields``, ``set``] or the fields inline: any
    node field except ``id`` (``width``/``height`` read as ``w``/``h``; ``x``, ``y``
    are action coordinates of the upper-left corner; ``parent`` moves it). Null
    values are dropped.
``move_node``
    ``id`` or ``ids``, ``x``, ``y`` (upper-left corner of the moved nodes' box) or
    ``dx``, ``dy``, and/or ``parent`` (page position and rotation kept).
``delete_node``
    ``id`` or ``ids``; removes descendants and attached bindings.
``create_shape``
    ``id`` / ``ref`` (alias), ``shape`` [``kind``, ``shapeType``; or ``type`` when
    the op is named by ``op``]: ``geo`` (default), ``text``, ``note``, ``frame``, or a
    geo kind (``rectangle``, ``ellipse``, ...); ``geo`` (the geo kind), ``x``, ``y``
    (upper-left corner, action coordinates; default the origin), ``w``, ``h``
    (default 100 × 100, a note 200 × 200, a frame 320 × 180, a text its measured
    size; a width makes a text wrap at it), ``text`` [``label``], ``name`` (a frame's),
    ``style`` [``styles``] and style keys inline (``color``, ``fill``, ``size`` ...),
    ``parent`` [``into``] (a node or page), ``hidden``, ``locked``, ``opacity``.
``create_arrow``
    ``id`` / ``ref`` (alias), ``from`` [``start``, ``source``] and ``to`` [``end``]:
    each a node (the arrow is bound to it) or a point ``[x, y]`` / ``{x, y}`` in
    action coordinates; ``from_anchor`` / ``to_anchor`` [``fromAnchor``, ``toAnchor``,
    ``anchor``]: normalized point in the target's box (default its center);
    ``precise`` (or ``from_precise`` / ``to_precise``; default: true when an anchor
    other than the center is given), ``bend``, ``arrowheadStart``, ``arrowheadEnd``
    [``arrowheads``: ``{start, end}``], ``text`` [``label``], ``style``.
``bind``
    ``id`` [``arrow``] (an arrow), ``terminal`` (``start`` / ``end``, default
    ``end``), ``to`` [``target``, ``shape``] (the shape), ``anchor``, ``precise``.
    Replaces the terminal's binding, if any.
``unbind``
    ``id`` [``arrow``], ``terminal`` (``start``, ``end`` or ``both``, the default).
    The terminal stays where the arrow is drawn (on the target's outline, short of
    it by the arrowhead's gap), unbound; an arc keeps its curve.
``place``
    ``ids``, ``into`` [``destination``, ``target``, ``to``] (node id or box
    ``{x, y, w, h}``), ``inset`` (8), ``at`` [``positions``] (id -> ``[x, y]``),
    ``reparent`` (true). See :func:`spatialobs.canvas.place.place`.
``align`` [``alignShapes``]
    ``ids``, ``align`` [``alignment``, ``operation``, ``edge``, ``to``]: ``left``,
    ``center-horizontal`` (``center_x``, ``hcenter``), ``right``, ``top``,
    ``center-vertical`` (``center_y``, ``middle``), ``bottom`` or ``center``.
``distribute`` [``distributeShapes``]
    ``ids`` (three or more), ``axis`` [``direction``, ``operation``]: ``horizontal``
    (``x``, ``row``) or ``vertical`` (``y``, ``column``).
``group``
    ``ids`` (two or more), ``ref`` [``as``; or ``id`` beside ``ids``] (alias of the group).
``ungroup``
    ``id`` or ``ids``: groups.
``lock`` / ``unlock``
    ``id`` or ``ids``.
``duplicate``
    ``id`` or ``ids``, ``dx``, ``dy`` (offset) or ``x``, ``y`` (corner of the copies'
    box; default tldraw's offset), ``ref`` (alias of the one copy) or ``refs`` (one per id).
``set_viewport`` [``set_camera``]
    ``x``, ``y`` (the view's upper-left corner) with ``zoom`` or ``w``, ``h``; or
    ``center`` ``[x, y]`` with ``zoom``; or ``dx``, ``dy``; or ``fit`` (nodes to show,
    ``padding`` 32); ``page``. The zoom is clamped to tldraw's [0.15, 4].
``create_from_mermaid`` [``mermaid``]
    ``mermaid`` [``definition``, ``source``, ``code``, ``text``]: a flowchart; ``x``,
    ``y`` (its corner; default beside the page's content), ``parent`` [``into``].
    Mermaid node and subgraph ids become aliases.
    See :mod:`spatialobs.canvas.editing.mermaid`.

The rules of the arrangement ops are tldraw's (see :mod:`spatialobs.canvas.editing.arrange`).
Locked nodes: an op that would change a locked node, or a node inside a locked one,
fails with ``node '…' is locked`` / ``node '…' is inside locked node '…'`` and
changes nothing; only ``lock`` and ``unlock`` touch them.

Styles: on tldraw shapes (geo, text, note, arrow, line, draw, highlight, frame) of
a canvas that is written as tldraw, style values are mapped onto tldraw's at op
time (a CSS color to the nearest palette color, a pixel size to the nearest size
step, a font family to one of tldraw's four fonts, fill, dash and alignment
spellings; see :mod:`spatialobs.canvas.formats.tldraw_schema`), so the document,
the observation and the written file say the same; every mapped value is named in
:attr:`Report.mapped`, and a value with no nearest valid one fails the op. CSS
styles of HTML-made nodes and artboards are kept as given; an HTML-made text
(a tldraw text record, see :mod:`spatialobs.canvas.editing.html`) whose CSS font
size or family changes takes tldraw's size step and font for it again (named in
the report) and is measured again; when that, or ``set_text``, changes its height,
it keeps its corner and its block flow is re-stacked (siblings below move, column
containers grow or shrink; flex and grid rows and the artboard keep their size).

Hidden: ``update_node`` / ``create_shape`` with ``hidden`` (or ``visible: false``)
hide a node. tldraw has no such field: the flag is written to the record's
``meta.spatialobs.hidden`` and read back from there (a tldraw app can honour it
with ``getShapeVisibility={s => s.meta.spatialobs?.hidden ? 'hidden' : 'inherit'}``).

Names: a new node is named by ``id`` or ``ref`` (or an HTML ``id``); the name is a
temporary alias for later ops of the same executor and the stored id is a fresh
``shape:…`` id (see :attr:`Report.aliases`). The placeholder
``LATEST_CREATED_ARTBOARD`` (also ``latest_created_artboard``,
``{{LATEST_CREATED_ARTBOARD}}``, ``$LATEST_CREATED_ARTBOARD``, ``${…}``, ``<…>``)
names the default artboard: the last one created, else the last one touched, else
the last one the agent worked on, else the selected one, else the first on the
page. Aliases shadow existing ids; anything else must be an exact existing id.

Coordinates in ops are action coordinates: page coordinates minus ``origin``,
the frame of the observation's ``actionBounds``.

Each op is atomic: one that fails changes nothing and is reported with its index
and reason; later ops still run, and those that name an alias of a failed op
fail with a reason saying so.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from spatialobs._errors import InvalidInputError, OutOfRangeError, SpatialObsError
from spatialobs.canvas.editing import arrange
from spatialobs.canvas.editing.arrange import check_editable
from spatialobs.canvas.editing.arrow_order import reorder_touched
from spatialobs.canvas.editing.editor import ARTBOARD_TYPES, Editor
from spatialobs.canvas.editing.position import _bounds, _to_local, _transform, set_page_position
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.document.records import Binding
from spatialobs.canvas.formats import tldraw_schema as tschema
from spatialobs.canvas.limits import CanvasLimits, check_depth, echo, one_line
from spatialobs.canvas.limits import current as current_limits

__all__ = ["parse_ops", "ParseError", "Executor", "Report", "OpError", "OpNote", "OP_NAMES", "OPS", "OpSpec",
           "OP_ALIASES", "is_placeholder", "set_page_position", "apply_reply"]



@dataclass(frozen=True)
class OpSpec:
    """One op kind of the registry: its name, its main fields and what it does.

    The registry (:data:`OPS`) is the one source of the op kinds: the
    :class:`Executor` dispatches to the method ``_<name>`` of each, and the
    service's tool descriptions and schemas (:mod:`spatialobs.serve.service`)
    list them from here.

    Attributes
    ----------
    name : str
        The op kind, as ``{"op": name}`` names it.
    fields : str
        Its main fields, as an agent writes them (``?`` marks optional ones).
    summary : str
        What it does, in one clause.
    """

    name: str
    fields: str
    summary: str

    def line(self) -> str:
        """``name {fields}: summary``, as the tool description lists it.

        Examples
        --------
        >>> print(OPS[0].line())  # doctest: +ELLIPSIS
        create_artboard {id?, name?, x?, y?, w?, h?, background?, style?, page?, html?}: a new artboard (a frame)...
        """
        return f"{self.name} {{{self.fields}}}: {self.summary}"


#: Every op kind the :class:`Executor` applies, in the order the docs list them (the registry).
OPS: Tuple[OpSpec, ...] = (
    OpSpec("create_artboard", "id?, name?, x?, y?, w?, h?, background?, style?, page?, html?",
           "a new artboard (a frame); default 1440x900 placed right of the page's content; html is laid out "
           "inside it as parse_html"),
    OpSpec("parse_html", "target?, html, mode? (append|replace), x?, y?",
           "HTML laid out as nodes inside an artboard (default: the latest created)"),
    OpSpec("update_styles", "id|ids, styles (object or CSS text; a null removes a key)",
           "merge styles into nodes"),
    OpSpec("set_text", "id|ids, text", "a node's text (an artboard's name)"),
    OpSpec("update_node", "id|ids, changes (or the fields inline: x, y, w, h, parent, hidden, ...)",
           "change any node fields but id"),
    OpSpec("move_node", "id|ids, x, y (the box's corner) or dx, dy, parent?",
           "move nodes, or move them into another parent"),
    OpSpec("delete_node", "id|ids", "remove nodes with their descendants and bindings"),
    OpSpec("place", "ids, into (a node or a box {x, y, w, h}), inset?, at?, reparent?",
           "lay nodes out inside a container"),
    OpSpec("create_shape", "id?, shape (geo|text|note|frame or a geo kind such as rectangle, ellipse), x, y, w?, h?, "
           "text?, name?, style?, parent?, hidden?, locked?, opacity?",
           "a new shape"),
    OpSpec("create_arrow", "id?, from, to (each a node, bound, or a point [x, y]), from_anchor?, to_anchor?, "
           "precise?, bend?, arrowheadStart?, arrowheadEnd?, text?, style?",
           "a new arrow bound to the nodes it joins"),
    OpSpec("bind", "id (an arrow), terminal? (start|end), to (a shape), anchor?, precise?",
           "bind an arrow's end to a shape"),
    OpSpec("unbind", "id (an arrow), terminal? (start|end|both)", "unbind an arrow's ends where they are drawn"),
    OpSpec("align", "ids, align (left|center-horizontal|right|top|center-vertical|bottom|center)",
           "align nodes as tldraw does"),
    OpSpec("distribute", "ids (3 or more), axis (horizontal|vertical)", "space nodes evenly"),
    OpSpec("group", "ids (2 or more), ref?", "group nodes"),
    OpSpec("ungroup", "id|ids", "dissolve groups"),
    OpSpec("lock", "id|ids", "lock nodes"),
    OpSpec("unlock", "id|ids", "unlock nodes"),
    OpSpec("duplicate", "id|ids, dx, dy or x, y, ref?|refs?", "copy nodes with their descendants"),
    OpSpec("set_viewport", "x, y with zoom or w, h; or center [x, y] with zoom; or dx, dy; or fit (ids), padding?; "
           "page?", "move the person's view (zoom clamped to 0.15..4)"),
    OpSpec("create_from_mermaid", "mermaid, x?, y?, parent?",
           "a Mermaid flowchart drawn as shapes and bound arrows; its node ids become aliases"),
)
#: The op kinds, as :data:`OPS` lists them.
OP_NAMES: Tuple[str, ...] = tuple(o.name for o in OPS)
#: Other names agents give the ops (after the op name is normalized to snake_case).
OP_ALIASES = {"align_shapes": "align", "distribute_shapes": "distribute", "group_shapes": "group",
              "ungroup_shapes": "ungroup", "lock_shapes": "lock", "unlock_shapes": "unlock", "lock_node": "lock",
              "unlock_node": "unlock", "duplicate_shapes": "duplicate", "duplicate_node": "duplicate",
              "copy_node": "duplicate", "set_camera": "set_viewport", "move_camera": "set_viewport",
              "zoom_to": "set_viewport", "mermaid": "create_from_mermaid", "from_mermaid": "create_from_mermaid",
              "import_mermaid": "create_from_mermaid"}
#: Container types that parse_html may fill.
HTML_TARGET_TYPES = frozenset({"frame", "artboard", "container"})
#: Size of a new artboard when the op gives none (*ours*).
DEFAULT_ARTBOARD = (1440.0, 900.0)
#: Gap between the page's content and a new artboard placed automatically (*ours*).
ARTBOARD_GAP = 100.0

_FENCE_OPEN = re.compile(r"^[ \t>]*(`{3,}|~{3,})[ \t]*([^\n]*?)[ \t]*$")
_OPS_TAG = re.compile(r"(?<![a-z0-9])canvas[\s_\-]*ops(?![a-z0-9])", re.I)
_PLACEHOLDER = "LATEST_CREATED_ARTBOARD"


# ---------------------------------------------------------------------- parsing
@dataclass(frozen=True)
class ParseError:
    """A problem in one ``canvas_ops`` block.

    Attributes
    ----------
    block : int
        Position of the block in the reply (0 for the first).
    line : int
        Line of the reply (1-based) where the problem is.
    message : str
    """

    block: int
    line: int
    message: str

    def __str__(self) -> str:
        return f"canvas_ops block {self.block} (line {self.line}): {self.message}"


def _blocks(text: str) -> List[Tuple[int, int, str, bool]]:
    """(block number, first content line (1-based), content, terminated) of each canvas_ops fence."""
    lines = text.splitlines()
    out: List[Tuple[int, int, str, bool]] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2)
        close = re.compile(r"^[ \t>]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if _OPS_TAG.search(info) and "`" not in info:
            out.append((len(out), i + 2, "\n".join(lines[i + 1:j]), j < len(lines)))
        i = j + 1
    return out


def parse_ops(text: str) -> Tuple[List[Dict[str, Any]], List[ParseError]]:
    """Every op of every fenced ``canvas_ops`` block of a model reply.

    A block holds a JSON object with an ``ops`` array, a bare array of ops, or one
    op object. Fences of three or more backticks or tildes are recognised, with
    the tag written ``canvas_ops``, ``canvas-ops``, ``Canvas_Ops``, ``canvas ops``
    or next to a language tag (``json canvas_ops``). Entries that are not objects
    are dropped; a block that is not valid JSON is skipped; both are reported with
    their position while the other blocks still count. An unterminated last block
    (a cut-off reply) is read to the end.

    Parameters
    ----------
    text : str
        The reply.

    Returns
    -------
    ops : list of dict
        In reply order.
    errors : list of ParseError

    Examples
    --------
    >>> reply = '''Here you go.
    ... ```canvas_ops
    ... {"ops": [{"op": "set_text", "id": "shape:a", "text": "Hi"}, 3]}
    ... ```
    ... ```canvas_ops
    ... [{"op": "delete_node", "id": "shape:b"},
    ... ```'''
    >>> ops, errors = parse_ops(reply)
    >>> [o["op"] for o in ops]
    ['set_text']
    >>> for e in errors:
    ...     print(e)
    canvas_ops block 0 (line 3): entry 1 is not an object (int); dropped
    canvas_ops block 1 (line 6): invalid JSON: Expecting value (line 1, column 41 of the block); block skipped
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"parse_ops: the reply must be a string, got {type(text).__name__}")
    ops: List[Dict[str, Any]] = []
    errors: List[ParseError] = []
    for k, line, body, terminated in _blocks(text):
        try:
            data = json.loads(body) if body.strip() else None
        except json.JSONDecodeError as exc:
            where = line + exc.lineno - 1
            note = "" if terminated else " (the block is not closed)"
            errors.append(ParseError(k, where, f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno} "
                                               f"of the block){note}; block skipped"))
            continue
        except RecursionError:
            errors.append(ParseError(k, line, "invalid JSON: nested too deeply; block skipped"))
            continue
        if data is None:
            errors.append(ParseError(k, line, "empty block; skipped"))
            continue
        if isinstance(data, Mapping):
            if "ops" in data:
                entries = data["ops"]
                if not isinstance(entries, list):
                    errors.append(ParseError(k, line, f"'ops' must be an array, got {type(entries).__name__}; block skipped"))
                    continue
            elif "op" in data:
                entries = [data]
            else:
                errors.append(ParseError(k, line, "an object without an 'ops' array; block skipped"))
                continue
        elif isinstance(data, list):
            entries = data
        else:
            errors.append(ParseError(k, line, f"expected an object with 'ops' or an array, got {type(data).__name__}; block skipped"))
            continue
        for e, entry in enumerate(entries):
            if isinstance(entry, Mapping):
                ops.append(dict(entry))
            else:
                errors.append(ParseError(k, line, f"entry {e} is not an object ({type(entry).__name__}); dropped"))
    return ops, errors


def is_placeholder(ref: Any) -> bool:
    """Whether ``ref`` is a spelling of the placeholder LATEST_CREATED_ARTBOARD.

    Examples
    --------
    >>> [is_placeholder(s) for s in ("LATEST_CREATED_ARTBOARD", "{{latest_created_artboard}}",
    ...                              "$LATEST_CREATED_ARTBOARD", "latest-created-artboard", "artboard")]
    [True, True, True, True, False]
    """
    if not isinstance(ref, str) or len(ref) > 64:
        return False
    core = re.sub(r"[\s{}$<>\[\]()'\"`]", "", ref).replace("-", "_").upper()
    return core == _PLACEHOLDER


def _op_name(raw: Any) -> Optional[str]:
    if not isinstance(raw, str):
        return None
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", raw.strip())
    name = re.sub(r"[\s\-]+", "_", s).lower()
    return OP_ALIASES.get(name, name)


# ---------------------------------------------------------------------- executor
@dataclass(frozen=True)
class OpError:
    """Why one op failed: its position in the list, its name and the reason.

    ``index`` is None for a problem found while parsing the reply.
    """

    index: Optional[int]
    op: Optional[str]
    reason: str

    def __str__(self) -> str:
        if self.index is None:
            return self.reason
        return f"op {self.index} ({self.op}): {self.reason}"


@dataclass(frozen=True)
class OpNote:
    """A value an op gave that was mapped onto the canvas's schema: op position, name, note."""

    index: int
    op: Optional[str]
    note: str

    def __str__(self) -> str:
        return f"op {self.index} ({self.op}): {self.note}"


@dataclass
class Report:
    """Outcome of :meth:`Executor.apply`.

    Attributes
    ----------
    applied : list of int
        Indices of the ops that were applied.
    errors : list of OpError
        One per failed op (and per parse problem when a reply was given).
    created : list of str
        Ids of the nodes created, in creation order.
    aliases : dict
        Alias -> id of every node named in the ops so far.
    mapped : list of OpNote
        Every value of an applied op that was mapped onto tldraw's values
        (``shape:a: color '#ff0000' → 'red'``), and other notes of applied ops
        (a clamped zoom, Mermaid statements that were ignored).
    viewport : dict
        Page id -> the camera ``set_viewport`` left there: ``{x, y, w, h}`` in page
        units (the viewport the person sees) and ``zoom``; empty when no op moved it.
    """

    applied: List[int] = field(default_factory=list)
    errors: List[OpError] = field(default_factory=list)
    created: List[str] = field(default_factory=list)
    aliases: Dict[str, str] = field(default_factory=dict)
    mapped: List[OpNote] = field(default_factory=list)
    viewport: Dict[str, Dict[str, float]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when nothing failed."""
        return not self.errors

    def to_dict(self) -> Dict[str, Any]:
        """Plain JSON values, for telling the agent what happened."""
        out: Dict[str, Any] = {"applied": list(self.applied), "errors": [str(e) for e in self.errors],
                               "created": list(self.created), "aliases": dict(self.aliases),
                               "mapped": [str(m) for m in self.mapped]}
        if self.viewport:
            out["viewport"] = {p: dict(v) for p, v in self.viewport.items()}
        return out


class _OpFailed(SpatialObsError):
    pass


def _num(op: Mapping[str, Any], keys: Sequence[str], name: str, default: Any = None) -> Any:
    for k in keys:
        v = op.get(k)
        if v is None:
            continue
        if isinstance(v, bool):
            raise InvalidInputError(f"field {name!r} must be a number, got {v!r}")
        if isinstance(v, str):
            m = re.fullmatch(r"\s*(-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(px)?\s*", v)
            if not m:
                raise InvalidInputError(f"field {name!r} must be a number, got {v!r}")
            v = m.group(1)
        try:
            f = float(v)
        except OverflowError:  # a JSON integer beyond float's range
            f = math.inf
        except (TypeError, ValueError):
            raise InvalidInputError(f"field {name!r} must be a number, got {echo(v)}") from None
        if not math.isfinite(f):
            raise InvalidInputError(f"field {name!r} must be finite, got {echo(v)}")
        return f
    return default


def _first(op: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for k in keys:
        if op.get(k) is not None:
            return op[k]
    return None


_MERMAID_KEYS = ("mermaid", "definition", "diagram", "source", "code", "text")
_FIELD_ALIASES = {"width": "w", "height": "h", "styles": "style", "content": "text", "label": "text",
                  "title": "name", "isLocked": "locked", "is_locked": "locked", "isHidden": "hidden",
                  "is_hidden": "hidden", "parentId": "parent", "parent_id": "parent"}
#: Shape types create_shape makes (a geo kind names a geo shape of that kind).
SHAPE_TYPES = ("geo", "text", "note", "frame")
_SHAPE_WORDS = {"sticky": "note", "sticky-note": "note", "label": "text", "artboard": "frame", "box": "geo",
                "shape": "geo"}
#: Default size of a created shape per type (*ours* for the frame; tldraw's for geo and note).
DEFAULT_SIZES = {"geo": (100.0, 100.0), "note": (200.0, 200.0), "frame": (320.0, 180.0)}
_INLINE_STYLES = ("color", "labelColor", "fill", "dash", "size", "font", "align", "verticalAlign", "textAlign",
                  "fontSize", "fontFamily", "strokeColor", "backgroundColor")
_TL_STYLE_KEYS = frozenset(k for keys in tschema.TYPE_STYLES.values() for k in keys) | {"align", "textAlign"}
_BOOL_WORDS = {"true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}


def _bool(op: Mapping[str, Any], key: str, default: Optional[bool] = None) -> Optional[bool]:
    v = op.get(key)
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in _BOOL_WORDS:
        return _BOOL_WORDS[v.strip().lower()]
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    raise InvalidInputError(f"field {key!r} must be true or false, got {v!r}")


def _anchor(raw: Any, name: str) -> Optional[Tuple[float, float]]:
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        raw = (raw.get("x"), raw.get("y"))
    if not isinstance(raw, (list, tuple)) or len(raw) != 2:
        raise InvalidInputError(f"field {name!r} must be a normalized point [x, y] or {{x, y}}, got {raw!r}")
    ax = _num({"v": raw[0]}, ("v",), name)
    ay = _num({"v": raw[1]}, ("v",), name)
    if ax is None or ay is None:
        raise InvalidInputError(f"field {name!r} must be two numbers, got {raw!r}")
    return ax, ay


class Executor:
    """Applies agent ops to a canvas, resolving aliases across calls.

    Parameters
    ----------
    canvas : Canvas
    origin : (x, y)
        Action coordinates are page coordinates minus ``origin`` (default (0, 0);
        agent kits set it to the viewport's corner when a chat starts).
    editor : Editor, optional
        Editor state to update (working artboards); default ``Editor(canvas)``.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> c = Canvas()
    >>> ex = Executor(c)
    >>> report = ex.apply([
    ...     {"op": "create_artboard", "id": "home", "name": "Home", "x": 0, "y": 0, "w": 400, "h": 300},
    ...     {"op": "parse_html", "html": "<h1 id='title'>Hello</h1>"},
    ...     {"op": "set_text", "id": "title", "text": "Hello, canvas"},
    ...     {"op": "delete_node", "id": "nothing-here"},
    ... ])
    >>> report.applied, report.created
    ([0, 1, 2], ['shape:home', 'shape:title'])
    >>> c.node("shape:title").text, c.node("shape:title").parent
    ('Hello, canvas', 'shape:home')
    >>> print(report.errors[0])
    op 3 (delete_node): no node or alias 'nothing-here'
    """

    def __init__(self, canvas: Canvas, origin: Sequence[float] = (0, 0), *, editor: Optional[Editor] = None,
                 limits: Optional[CanvasLimits] = None) -> None:
        if not isinstance(canvas, Canvas):
            raise InvalidInputError(f"Executor needs a Canvas, got {type(canvas).__name__}")
        try:
            ox, oy = (float(v) for v in origin)
        except (TypeError, ValueError):
            raise InvalidInputError(f"Executor: origin must be two numbers, got {origin!r}") from None
        if not (math.isfinite(ox) and math.isfinite(oy)):
            raise InvalidInputError(f"Executor: origin must be finite, got {origin!r}")
        self.canvas = canvas
        self.origin = (ox, oy)
        #: Resource limits of the replies this executor applies (None: those in force, see :mod:`spatialobs.canvas.limits`).
        self.limits = limits
        #: Who the writes are attributed to (see :meth:`Canvas.by`): the agent, unless a client relays a person's edit.
        self.by = "agent"
        self.editor = editor if editor is not None else Editor(canvas)
        self.aliases: Dict[str, str] = {}
        self._failed: Dict[str, int] = {}
        self._later: Dict[str, int] = {}
        self._created_boards: List[str] = []
        self._touched: List[str] = []
        # per-op scratch, committed when the op succeeds
        self._pending: Dict[str, str] = {}
        self._new: List[str] = []
        self._new_boards: List[str] = []
        self._touch: List[str] = []
        # one handler per op kind of the registry: the method ``_<name>``
        self._handlers: Dict[str, Callable[[Mapping[str, Any]], None]] = {o.name: getattr(self, "_" + o.name)
                                                                          for o in OPS}
        self._notes: List[str] = []
        self._cams: List[str] = []
        self._suffix: Dict[str, int] = {}
        self._extent: Optional[Tuple[str, int, Any]] = None  # (page, canvas writes, extent) after our last artboard

    # ------------------------------------------------------------------ public
    def apply(self, ops: Union[str, Iterable[Any]]) -> Report:
        """Apply ops in order; each is atomic (see the module docstring).

        Parameters
        ----------
        ops : list of dict, or str
            Ops as :func:`parse_ops` returns them, or a whole reply (parsed first;
            its parse errors are reported with index None).

        Returns
        -------
        Report
        """
        if self.limits is not None:
            with self.limits.active():
                return self._apply(ops)
        return self._apply(ops)

    def _apply(self, ops: Union[str, Iterable[Any]]) -> Report:
        report = Report()
        if isinstance(ops, str):
            ops, perrs = parse_ops(ops)
            report.errors.extend(OpError(None, None, str(e)) for e in perrs)
        if isinstance(ops, Mapping) or not isinstance(ops, Iterable):
            raise InvalidInputError(f"apply: ops must be a list of op objects or a reply string, got {type(ops).__name__}")
        ops = list(ops)
        limits = current_limits()
        if len(ops) > limits.max_ops:
            # nothing is applied: the report says why, and the caller can split the reply
            report.errors.append(OpError(None, None, f"{len(ops)} ops in one reply, more than {limits.max_ops} "
                                                     "(CanvasLimits.max_ops); none applied"))
            report.aliases = dict(self.aliases)
            return report
        self._later = {}
        # each op's name, read once (the aliases it defines depend on it, then its handler)
        names = [_op_name(op.get("op", op.get("action", op.get("type")))) if isinstance(op, Mapping) else None
                 for op in ops]
        for i, op in enumerate(ops):
            if isinstance(op, Mapping):
                for a in self._defined_aliases(op, names[i]):
                    self._later.setdefault(a, i)
        for i, op in enumerate(ops):
            name = names[i]
            if not isinstance(op, Mapping):
                report.errors.append(OpError(i, None, f"an op must be an object, got {type(op).__name__}"))
                continue
            if name not in self._handlers:
                raw = op.get("op", op.get("action", op.get("type")))
                why = "has no 'op' field" if raw is None else f"unknown op {echo(raw)}"
                report.errors.append(OpError(i, name, f"{why} (known: {', '.join(OP_NAMES)})"))
                self._fail_aliases(op, i, name)
                continue
            self._pending, self._new, self._new_boards, self._touch, self._notes = {}, [], [], [], []
            self._cams = []
            try:
                check_depth(op, f"op {i}")
                with self.canvas.by(self.by), self.canvas.batch():
                    mark = len(self.canvas._log or ())
                    self._handlers[name](op)
                    if self.canvas._log is not None and self._maps_tldraw():
                        reorder_touched(self.canvas, self.canvas._log[mark:])  # where tldraw keeps bound arrows
            except SpatialObsError as exc:
                report.errors.append(OpError(i, name, one_line(str(exc))))
                self._fail_aliases(op, i, name)
                continue
            except (RecursionError, MemoryError) as exc:
                report.errors.append(OpError(i, name, f"too large to apply ({type(exc).__name__})"))
                self._fail_aliases(op, i, name)
                continue
            except Exception as exc:  # noqa: BLE001 - any failure is this op's error; later ops still run
                report.errors.append(OpError(i, name, one_line(f"failed ({type(exc).__name__}: {exc})")))
                self._fail_aliases(op, i, name)
                continue
            for a, nid in self._pending.items():
                self.aliases[a] = nid
                self._failed.pop(a, None)
            report.created.extend(self._new)
            report.mapped.extend(OpNote(i, name, n) for n in self._notes)
            for pid in self._cams:
                from spatialobs.canvas.editing.editor import document_screen

                vp = self.canvas.cameras[pid]
                report.viewport[pid] = {"x": vp.x, "y": vp.y, "w": vp.w, "h": vp.h,
                                        "zoom": document_screen(self.canvas)[0] / vp.w}
            for b in self._new_boards:
                self._created_boards.append(b)
                self.editor.add_working_artboard(b)
            for t in self._touch:
                if t in self._touched:
                    self._touched.remove(t)
                self._touched.append(t)
            report.applied.append(i)
        report.aliases = dict(self.aliases)
        return report

    def resolve(self, ref: Any, field_name: str = "id") -> str:
        """The node id an op's reference names (alias, placeholder or exact id).

        Raises
        ------
        OutOfRangeError
            Nothing by that name, an alias of a failed op, an alias used before the
            op that creates it, or a node that no longer exists.
        """
        if not isinstance(ref, str) or not ref.strip():
            raise InvalidInputError(f"field {field_name!r} must be a node id or alias, got {ref!r}")
        if is_placeholder(ref):
            board = self.default_artboard()
            if board is None:
                raise OutOfRangeError(f"{ref!r}: no artboard has been created and the page has none")
            return board
        key = ref.strip()
        for table in (self._pending, self.aliases):
            if key in table:
                nid = table[key]
                if nid not in self.canvas.nodes:
                    raise OutOfRangeError(f"alias {key!r} names node {nid!r}, which no longer exists")
                return nid
        if key in self.canvas.nodes:
            return key
        if key in self._failed:
            raise OutOfRangeError(f"alias {key!r} was not created: op {self._failed[key]} failed")
        if key in self._later:
            raise OutOfRangeError(f"alias {key!r} is used before op {self._later[key]} creates it")
        raise OutOfRangeError(f"no node or alias {key!r}")

    def default_artboard(self) -> Optional[str]:
        """The artboard an op without a target works on, or None.

        The last artboard created by this executor, else the last one an op
        touched, else the last one the agent worked on (editor state), else a
        selected artboard (or the artboard of a selected node), else the first
        artboard of the current page.
        """
        nodes = self.canvas.nodes
        for seq in (self._new_boards, self._created_boards, self._touched, self.editor.working_artboards()):
            for b in reversed(seq):
                if b in nodes:
                    return b
        for s in self.canvas.selected():
            board = self._artboard_of(s)
            if board is not None:
                return board
        boards = self.editor.artboards()
        return boards[0] if boards else None

    # ------------------------------------------------------------------ helpers
    def _artboard_of(self, node_id: str) -> Optional[str]:
        nodes = self.canvas.nodes
        if node_id in nodes and nodes[node_id].type in ARTBOARD_TYPES:
            return node_id
        for a in self.canvas.ancestors(node_id) if node_id in nodes else ():
            if nodes[a].type in ARTBOARD_TYPES:
                return a
        return None

    def _touches(self, node_id: str) -> None:
        b = self._artboard_of(node_id)
        if b is not None:
            self._touch.append(b)

    @staticmethod
    def _defined_aliases(op: Mapping[str, Any], name: Optional[str]) -> List[str]:
        """The aliases op ``op`` (named ``name``, as :func:`_op_name` reads it) would define."""
        out: List[str] = []
        if name in ("create_artboard", "create_shape", "create_arrow"):
            for k in ("id", "ref"):
                if isinstance(op.get(k), str) and op[k].strip() and not is_placeholder(op[k]):
                    out.append(op[k].strip())
        if name in ("create_artboard", "parse_html") and isinstance(op.get("html"), str) and len(op["html"]) < 200_000:
            out.extend(m.group(2) for m in re.finditer(r"""\b(id|data-ref)\s*=\s*["']([^"']+)["']""", op["html"]))
        if name == "group" or name == "create_from_mermaid":
            for k in ("ref", "as") if name == "create_from_mermaid" else ("ref", "as", "group_id", "groupId"):
                if isinstance(op.get(k), str) and op[k].strip():
                    out.append(op[k].strip())
            if name == "group" and isinstance(op.get("id"), str) and isinstance(op.get("ids"), list):
                out.append(op["id"].strip())  # "id" names the new group when "ids" names the members
        if name == "duplicate":
            for k in ("ref", "as"):
                if isinstance(op.get(k), str) and op[k].strip():
                    out.append(op[k].strip())
            refs = op.get("refs")
            if isinstance(refs, list):
                out.extend(r.strip() for r in refs if isinstance(r, str) and r.strip())
        if name == "create_from_mermaid":
            src = _first(op, _MERMAID_KEYS)
            if isinstance(src, str) and len(src) < 200_000:
                from spatialobs.canvas.editing.mermaid import MermaidError, parse_mermaid

                try:
                    out.extend(parse_mermaid(src).nodes)
                except (MermaidError, RecursionError):
                    pass
        return out

    def _fail_aliases(self, op: Mapping[str, Any], i: int, name: Optional[str]) -> None:
        for a in self._defined_aliases(op, name):
            if a not in self.aliases:
                self._failed[a] = i

    def _ids(self, op: Mapping[str, Any], keys: Sequence[str] = ("ids", "id", "target", "node", "nodeId", "node_id")) -> List[str]:
        raw = _first(op, keys)
        if raw is None:
            raise InvalidInputError("missing field 'id' (or 'ids')")
        refs = raw if isinstance(raw, list) else [raw]
        if not refs:
            raise InvalidInputError("field 'ids' is empty")
        return list(dict.fromkeys(self.resolve(r, "ids" if isinstance(raw, list) else "id") for r in refs))

    def _unlocked(self, node_id: str) -> None:
        # as tldraw: a locked shape, or a shape inside a locked one, takes no edit (tldraw skips it; we refuse)
        check_editable(self.canvas, [node_id])

    def _new_id(self, hint: Optional[str]) -> str:
        slug = re.sub(r"[^A-Za-z0-9_\-]+", "-", str(hint or "node")).strip("-")[:40] or "node"
        base = "shape:" + slug
        # the next free suffix of each base is remembered: 10^4 "Artboard"s scanned 1..n each
        k = self._suffix.get(base, 2)
        nid = base if k == 2 else f"{base}-{k}"
        pending = set(self._pending.values())
        while nid in self.canvas or nid in pending:
            nid, k = f"{base}-{k}", k + 1
        self._suffix[base] = k
        return nid

    def _add(self, fields: Dict[str, Any], alias: Optional[str], hint: Optional[str] = None) -> str:
        nid = self._new_id(alias or hint or fields.get("name") or fields.get("type"))
        self.canvas.add({"id": nid, **fields})
        if alias:
            self._pending.setdefault(alias, nid)
        self._new.append(nid)
        return nid

    def _page_point(self, op: Mapping[str, Any]) -> Tuple[Optional[float], Optional[float]]:
        x = _num(op, ("x", "left"), "x")
        y = _num(op, ("y", "top"), "y")
        return (None if x is None else x + self.origin[0], None if y is None else y + self.origin[1])

    # ------------------------------------------------------------------ ops
    def _create_artboard(self, op: Mapping[str, Any]) -> None:
        alias = _first(op, ("id", "ref"))
        if alias is not None and (not isinstance(alias, str) or not alias.strip()):
            raise InvalidInputError(f"field 'id' must be a non-empty string, got {alias!r}")
        alias = alias.strip() if isinstance(alias, str) and not is_placeholder(alias) else None
        page = op.get("page")
        if page is not None and (not isinstance(page, str) or page not in self.canvas.pages):
            raise OutOfRangeError(f"no page {echo(page)}")
        page = page or self.canvas._resolve_page(None)
        w = _num(op, ("w", "width"), "w", DEFAULT_ARTBOARD[0])
        h = _num(op, ("h", "height"), "h", DEFAULT_ARTBOARD[1])
        x, y = self._page_point(op)
        ext = None
        if x is None or y is None:
            # the extent known after our previous artboard, while nothing else was written since
            cached = self._extent
            if cached is not None and cached[0] == page and cached[1] == self.canvas._writes:
                ext = cached[2]
            else:
                ext = self.canvas.page_extent(page)
            if x is None:
                x = self.origin[0] if ext is None else ext[2] + ARTBOARD_GAP
            if y is None:
                y = self.origin[1] if ext is None else ext[1]
        style = op.get("style") or op.get("styles") or {}
        if not isinstance(style, Mapping):
            raise InvalidInputError(f"field 'style' must be an object, got {type(style).__name__}")
        style = dict(style)
        bg = _first(op, ("background", "backgroundColor", "background_color", "fill"))
        if bg is not None:
            style["backgroundColor"] = bg
        name = _first(op, ("name", "title"))
        fields = {"type": "frame", "parent": page, "x": x, "y": y, "w": w, "h": h,
                  "name": name if name is not None else (alias or "Artboard"), "style": style}
        writes = self.canvas._writes
        nid = self._add(fields, alias)
        self._new_boards.append(nid)
        node = self.canvas._nodes[nid]
        if self.canvas._writes == writes + 1 and node.parent == page and not node.rotation:
            if ext is None and not self.canvas._children.get(page, {}).keys() - {nid}:
                ext = (node.x, node.y, node.x, node.y)
            if ext is not None:
                box = (min(ext[0], node.x), min(ext[1], node.y), max(ext[2], node.x + node.w),
                       max(ext[3], node.y + node.h))
                self._extent = (page, self.canvas._writes, box)
        if op.get("html") is not None:
            self._fill_html(nid, op["html"], op.get("mode", "append"), (None, None))

    def _parse_html(self, op: Mapping[str, Any]) -> None:
        ref = _first(op, ("target", "parent", "artboard", "artboardId", "artboard_id", "into", "id"))
        if ref is None:
            target = self.default_artboard()
            if target is None:
                raise OutOfRangeError("no target: the op names none and the page has no artboard "
                                      "(create one with create_artboard or give 'target')")
        else:
            target = self.resolve(ref, "target")
        if "html" not in op or not isinstance(op["html"], str):
            raise InvalidInputError(f"field 'html' must be a string, got {type(op.get('html')).__name__}")
        self._fill_html(target, op["html"], op.get("mode", "append"), self._page_point(op))

    def _fill_html(self, target: str, html: str, mode: Any, at: Tuple[Optional[float], Optional[float]]) -> None:
        from spatialobs.canvas.editing.html import layout_fragment

        if not isinstance(html, str):
            raise InvalidInputError(f"field 'html' must be a string, got {type(html).__name__}")
        node = self.canvas.node(target)
        if node.type not in HTML_TARGET_TYPES:
            raise InvalidInputError(f"target {target!r} is a {node.type!r} node; parse_html needs an artboard, "
                                    f"frame or container")
        self._unlocked(target)
        if mode not in ("append", "replace"):
            raise InvalidInputError(f"field 'mode' must be 'append' or 'replace', got {mode!r}")
        if mode == "replace":
            for k in self.canvas.children(target):
                self.canvas.remove(k)
        recs = layout_fragment(html, node.w if node.w > 0 else None, tldraw=self._maps_tldraw())
        if at[0] is not None or at[1] is not None:
            px, py, _ = _transform(self.canvas, target)
            bx, by = _to_local(self.canvas, target, at[0] if at[0] is not None else px,
                               at[1] if at[1] is not None else py)
        else:
            bx, by = 0.0, 0.0
            kids = self.canvas.children(target)
            if kids:
                bottom = max(self.canvas.page_bounds(k)[3] for k in kids)
                px, py, _ = _transform(self.canvas, target)
                by = max(0.0, _to_local(self.canvas, target, px, bottom)[1])
        ids: List[str] = []
        for r in recs:
            parent = target if r["parent"] is None else ids[r["parent"]]
            x, y = (r["x"] + bx, r["y"] + by) if r["parent"] is None else (r["x"], r["y"])
            fields = {"type": r["kind"], "parent": parent, "x": x, "y": y, "w": r["w"], "h": r["h"],
                      "text": r["text"], "name": r["name"], "style": r["style"], "props": r["props"]}
            alias = r["alias"] if r["alias"] and r["alias"] not in self._pending else None
            ids.append(self._add(fields, alias, r["tag"].lstrip("#")))
        self._touches(target)

    def _style_arg(self, op: Mapping[str, Any]) -> Dict[str, Any]:
        raw = _first(op, ("styles", "style", "css"))
        if isinstance(raw, str):
            from spatialobs.canvas.editing.html import _parse_css

            raw = _parse_css(raw)
        if not isinstance(raw, Mapping):
            raise InvalidInputError(f"field 'styles' must be an object or a CSS string, got {type(raw).__name__}")
        if not raw:
            raise InvalidInputError("field 'styles' is empty")
        return dict(raw)

    def _maps_tldraw(self) -> bool:
        from spatialobs.canvas.formats.tldraw import TldrawSource

        src = self.canvas._source
        return src is None or isinstance(src, TldrawSource)

    def _tl_style(self, node_type: str, style: Mapping[str, Any], who: str,
                  props_of: Optional[Mapping[str, Any]] = None) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """(style, props) of a style an op gives a node of ``node_type``, mapped onto tldraw's values.

        Style props tldraw keeps outside the style (geo kind, arrowheads, arrow kind,
        spline) come back as props. Nodes that are not tldraw shapes keep the style as given.
        """
        from spatialobs.canvas.document.sanitize import normalize_style_key

        if (node_type not in tschema.TYPE_STYLES or not self._maps_tldraw()
                or (props_of is not None and "tag" in props_of)):
            return dict(style), {}
        norm = {normalize_style_key(k) if isinstance(k, str) else k: v for k, v in style.items()}
        # tldraw's own style keys are mapped here; CSS spellings (fontSize, backgroundColor ...)
        # stay in the style as given, and the exporter maps them onto the record's props
        own = {k: v for k, v in norm.items() if k in _TL_STYLE_KEYS and not (v is None or v == "")}
        for css, key in (("fontSize", "size"), ("fontFamily", "font")):
            # size and font decide the geometry: a CSS spelling sets them too (it stays in the style as given)
            if key in tschema.TYPE_STYLES[node_type] and key not in own and norm.get(css) not in (None, ""):
                own[key] = norm[css]
        mapped, notes = tschema.map_style(own, node_type)
        mapped = {**{k: v for k, v in norm.items() if k not in own}, **mapped}
        self._notes.extend(f"{who}: {n.note}" for n in notes)
        keys: Tuple[str, ...] = ("geo", "arrowheadStart", "arrowheadEnd", "kind", "spline")
        props: Dict[str, Any] = {k: mapped.pop(k) for k in keys if k in mapped}
        # tldraw keeps its style values in the record's props, where the geometry reads them
        # (an arrow's gap from a target's stroke size): they follow the style
        props.update({k: mapped[k] for k in tschema.TYPE_STYLES[node_type] if k in mapped})
        return mapped, props

    def _restyle(self, nid: str, style: Mapping[str, Any]) -> None:
        node = self.canvas.node(nid)
        st, props = self._tl_style(node.type, style, nid, node.props)
        if node.type == "text" and "tag" in node.props and "autoSize" in node.props:
            st = self._html_text_style(node, st)
        if props:
            self.canvas.update(nid, style=st, props=props)
        else:
            self.canvas.update(nid, style=st)
        self._reflow(nid, node)

    def _reflow(self, nid: str, before: Any) -> None:
        """After an HTML-made text changed height, re-stack the block flow it sits in.

        Siblings below it in a block (column) container move by the change, and the
        container grows or shrinks by it, up through the HTML containers; under the
        artboard the HTML-made elements below move (the artboard keeps its size and
        its other children); a flex or grid container ends the walk. The text itself
        keeps its corner (tldraw would keep a restyled auto-size text's centre).
        """
        node = self.canvas.node(nid)
        if node.type != "text" or not ("tag" in node.props or (node.parent in self.canvas.nodes and
                                                                self.canvas.node(node.parent).type == "container")):
            return
        if (node.x, node.y) != (before.x, before.y):
            self.canvas.update(nid, x=before.x, y=before.y)
            node = self.canvas.node(nid)
        old_h = before.h
        dh = node.h - old_h
        while dh != 0.0 and node.parent in self.canvas.nodes:
            parent = self.canvas.node(node.parent)
            if str(parent.style.get("display", "")).lower() in ("flex", "inline-flex", "grid", "inline-grid"):
                return
            board = parent.type != "container"
            bottom = node.y + old_h
            for sib in self.canvas.children(parent.id):
                sn = self.canvas.node(sib)
                if board and not (sn.type == "container" or "tag" in sn.props):
                    continue  # under an artboard only the HTML-made flow moves, not what else it holds
                if sib != node.id and sn.y >= bottom - 1e-9 and str(sn.style.get("position", "")).lower() not in (
                        "absolute", "fixed"):
                    self.canvas.update(sib, y=sn.y + dh)
            if board:
                return
            old_h = parent.h
            self.canvas.update(parent.id, h=max(parent.h + dh, 0.0))
            node = self.canvas.node(parent.id)

    def _html_text_style(self, node: Any, st: Dict[str, Any]) -> Dict[str, Any]:
        """A restyle of an HTML-made tldraw text: a CSS font size or family sets tldraw's
        size and font again (Canvas.update then re-measures the text)."""
        from spatialobs.canvas.document.sanitize import normalize_style_key
        from spatialobs.canvas.editing.html import TLDRAW_HTML_FONT

        norm = {normalize_style_key(k) if isinstance(k, str) else k: v for k, v in st.items()}
        out = dict(st)
        for css, key in (("fontSize", "size"), ("fontFamily", "font")):
            if css in norm and key not in norm:
                v = norm[css]
                if v is None or v == "":
                    out[key] = "s" if key == "size" else TLDRAW_HTML_FONT
                    continue
                m = tschema.map_size(v, "text") if key == "size" else tschema.map_font(v)
                out[key] = m.to
                if m.note:
                    self._notes.append(f"{node.id}: {m.note}")
        return out

    def _update_styles(self, op: Mapping[str, Any]) -> None:
        style = self._style_arg(op)
        for nid in self._ids(op):
            self._unlocked(nid)
            self._restyle(nid, style)
            self._touches(nid)

    def _set_text(self, op: Mapping[str, Any]) -> None:
        text = _first(op, ("text", "content", "value"))
        if text is None:
            raise InvalidInputError("missing field 'text'")
        if isinstance(text, (int, float)) and not isinstance(text, bool):
            text = str(text)
        if not isinstance(text, str):
            raise InvalidInputError(f"field 'text' must be a string, got {type(text).__name__}")
        for nid in self._ids(op):
            self._unlocked(nid)
            key = "name" if self.canvas.node(nid).type in ARTBOARD_TYPES else "text"
            before = self.canvas.node(nid)
            self.canvas.update(nid, **{key: text})
            self._reflow(nid, before)
            self._touches(nid)

    def _update_node(self, op: Mapping[str, Any]) -> None:
        raw = _first(op, ("changes", "fields", "set", "updates"))
        if raw is None:
            raw = {k: v for k, v in op.items() if k not in ("op", "action", "type", "id", "ids", "target", "node",
                                                            "nodeId", "node_id", "ref")}
            if "type" in op and _op_name(op.get("op")) == "update_node":
                raw["type"] = op["type"]
        if not isinstance(raw, Mapping):
            raise InvalidInputError(f"field 'changes' must be an object, got {type(raw).__name__}")
        changes: Dict[str, Any] = {}
        for k, v in raw.items():
            if v is None:
                continue  # nulls are dropped
            changes[_FIELD_ALIASES[k] if k in _FIELD_ALIASES else k] = v
        if "id" in changes:
            raise InvalidInputError("the id of a node cannot change")
        if not changes:
            raise InvalidInputError("no changes given")
        if isinstance(changes.get("style"), str):
            from spatialobs.canvas.editing.html import _parse_css

            changes["style"] = _parse_css(changes["style"])
        if "visible" in changes:
            vis = _bool(changes, "visible")
            changes.pop("visible")
            changes.setdefault("hidden", not vis)
        if "hidden" in changes:
            changes["hidden"] = _bool(changes, "hidden")
        style = changes.pop("style", None)
        if style is not None and not isinstance(style, Mapping):
            raise InvalidInputError(f"field 'style' must be an object or a CSS string, got {type(style).__name__}")
        x = _num(changes, ("x",), "x")
        y = _num(changes, ("y",), "y")
        parent = changes.pop("parent", None)
        changes.pop("x", None)
        changes.pop("y", None)
        for nid in self._ids(op):
            if self.canvas.node(nid).locked and changes.get("locked") not in (False, "false", 0):
                raise arrange.LockedError(f"node {nid!r} is locked")
            by = arrange.locked_by(self.canvas, nid)
            if by is not None and by != nid:
                raise arrange.LockedError(f"node {nid!r} is inside locked node {by!r}")
            own = self._note_size(nid, changes) if ("w" in changes or "h" in changes) else changes
            if own:
                self.canvas.update(nid, **own)
            if style:
                self._restyle(nid, style)
            if x is not None or y is not None or parent is not None:
                self._move_to(nid, x, y, parent)
            self._touches(nid)

    def _note_scales(self) -> bool:
        """Whether the document's notes have a ``scale`` (tldraw's AddScale note migration sets
        it to 1 in older documents, so a note there is always 200 wide)."""
        from spatialobs.canvas.formats.tldraw import TldrawSource, _schema_versions

        src = self.canvas._source
        return not isinstance(src, TldrawSource) or _schema_versions(src).props_version("note") >= 7

    def _note_size(self, nid: str, changes: Dict[str, Any]) -> Dict[str, Any]:
        """The changes of an update_node with ``w`` / ``h`` for a tldraw note: a note is sized by
        its ``scale`` (200 × scale wide, its label's growth below), so the width (else the
        height) sets the scale; where the schema has no scale the size stays, with a note."""
        node = self.canvas.node(nid)
        if node.type != "note" or not self._maps_tldraw():
            return changes
        own = dict(changes)
        w, h = _num(own, ("w",), "w"), _num(own, ("h",), "h")
        own.pop("w", None)
        own.pop("h", None)
        props = dict(node.props)
        grow = _num(props, ("growY",), "growY", 0.0)
        if not self._note_scales():
            self._notes.append(f"{nid}: a note of this document's schema is 200 × 200 (plus its label's growth); "
                               f"size {w!r} × {h!r} not applied")
            return own
        scale = (w / 200.0) if w else (h / (200.0 + grow)) if h else None
        if scale is None or not scale > 0:
            return own
        own["props"] = {**props, **(own.get("props") or {}), "scale": scale}
        own["w"], own["h"] = 200.0 * scale, (200.0 + grow) * scale
        if w is not None and h is not None and abs(own["h"] - h) > 1e-9:
            self._notes.append(f"{nid}: a note is sized by its scale: h {h!r} → {own['h']!r}")
        return own

    def _resolve_parent(self, ref: Any) -> str:
        if isinstance(ref, str) and ref in self.canvas.pages:
            return ref
        return self.resolve(ref, "parent")

    def _move_to(self, nid: str, x: Optional[float], y: Optional[float], parent: Any) -> None:
        b = _bounds(self.canvas, nid)
        tx = b[0] if x is None else x + self.origin[0]
        ty = b[1] if y is None else y + self.origin[1]
        p = None if parent is None else self._resolve_parent(parent)
        set_page_position(self.canvas, nid, tx, ty, parent=p)

    def _move_node(self, op: Mapping[str, Any]) -> None:
        ids = self._ids(op)
        x, y = _num(op, ("x",), "x"), _num(op, ("y",), "y")
        dx, dy = _num(op, ("dx",), "dx"), _num(op, ("dy",), "dy")
        parent = _first(op, ("parent", "parentId", "parent_id", "into"))
        if x is None and y is None and dx is None and dy is None and parent is None:
            raise InvalidInputError("move_node needs x/y, dx/dy or parent")
        for nid in ids:
            self._unlocked(nid)
        # the moved nodes keep their arrangement: the corner of their common box goes to (x, y)
        boxes = [_bounds(self.canvas, n) for n in ids]
        gx, gy = min(b[0] for b in boxes), min(b[1] for b in boxes)
        sx = (0.0 if x is None else x + self.origin[0] - gx) + (dx or 0.0)
        sy = (0.0 if y is None else y + self.origin[1] - gy) + (dy or 0.0)
        p = None if parent is None else self._resolve_parent(parent)
        top = [n for n in ids if not any(a in ids for a in self.canvas.ancestors(n))]
        for nid, b in zip(ids, boxes):
            if nid in top:
                set_page_position(self.canvas, nid, b[0] + sx, b[1] + sy, parent=p)
                self._touches(nid)

    def _delete_node(self, op: Mapping[str, Any]) -> None:
        for nid in self._ids(op):
            if nid not in self.canvas.nodes:
                continue  # removed with an ancestor named earlier in the same op
            self._unlocked(nid)
            board = self._artboard_of(nid)
            self.canvas.remove(nid)
            if board is not None and board != nid and board in self.canvas.nodes:
                self._touch.append(board)

    def _place(self, op: Mapping[str, Any]) -> None:
        from spatialobs.canvas.editing.place import DEFAULT_INSET, place

        ids = self._ids(op, ("ids", "id", "nodes"))
        dest = _first(op, ("into", "destination", "target", "to", "frame"))
        if dest is None:
            raise InvalidInputError("missing field 'into' (a node id or a box {x, y, w, h})")
        if isinstance(dest, str):
            dest = self.resolve(dest, "into")
        inset = _num(op, ("inset",), "inset", DEFAULT_INSET)
        raw_at = _first(op, ("at", "positions"))
        at: Dict[str, Tuple[float, float]] = {}
        if raw_at is not None:
            if isinstance(raw_at, Mapping):
                items = [(self.resolve(k, "at"), v) for k, v in raw_at.items()]
            elif isinstance(raw_at, list):
                if len(raw_at) != len(ids):
                    raise InvalidInputError(f"field 'at' has {len(raw_at)} positions for {len(ids)} ids")
                items = list(zip(ids, raw_at))
            else:
                raise InvalidInputError("field 'at' must map ids to [x, y] or list one [x, y] per id")
            for nid, v in items:
                if isinstance(v, Mapping):
                    v = (v.get("x"), v.get("y"))
                if not isinstance(v, (list, tuple)) or len(v) != 2:
                    raise InvalidInputError(f"position of {nid!r} must be [x, y], got {v!r}")
                at[nid] = (_num({"x": v[0]}, ("x",), "at.x"), _num({"y": v[1]}, ("y",), "at.y"))
                if None in at[nid]:
                    raise InvalidInputError(f"position of {nid!r} must be two numbers, got {v!r}")
        elif len(ids) == 1 and (op.get("x") is not None or op.get("y") is not None):
            b = self.canvas.page_bounds(ids[0])
            x = _num(op, ("x",), "x", b[0] - self.origin[0])
            y = _num(op, ("y",), "y", b[1] - self.origin[1])
            at[ids[0]] = (x, y)
        reparent = op.get("reparent", True)
        if not isinstance(reparent, bool):
            raise InvalidInputError(f"field 'reparent' must be true or false, got {reparent!r}")
        place(self.canvas, ids, dest, inset=inset, at=at or None, origin=self.origin, reparent=reparent)
        for nid in ids:
            self._touches(nid)


    # ------------------------------------------------------------------ shapes and arrows
    def _alias(self, op: Mapping[str, Any]) -> Optional[str]:
        alias = _first(op, ("id", "ref"))
        if alias is not None and (not isinstance(alias, str) or not alias.strip()):
            raise InvalidInputError(f"field 'id' must be a non-empty string, got {alias!r}")
        return alias.strip() if isinstance(alias, str) else None

    def _page_of(self, ref: str) -> str:
        if ref in self.canvas.pages:
            return ref
        return self.canvas.page_of(ref)

    def _op_style(self, op: Mapping[str, Any]) -> Dict[str, Any]:
        raw = _first(op, ("style", "styles"))
        if isinstance(raw, str):
            from spatialobs.canvas.editing.html import _parse_css

            raw = _parse_css(raw)
        if raw is not None and not isinstance(raw, Mapping):
            raise InvalidInputError(f"field 'style' must be an object or a CSS string, got {type(raw).__name__}")
        style = dict(raw or {})
        for k in _INLINE_STYLES:
            if op.get(k) is not None:
                style.setdefault(k, op[k])
        return style

    def _create_shape(self, op: Mapping[str, Any]) -> None:
        alias = self._alias(op)
        raw_kind = _first(op, ("shape", "shapeType", "shape_type", "kind"))
        if raw_kind is None and ("op" in op or "action" in op):
            raw_kind = op.get("type")
        kind = "geo" if raw_kind is None else raw_kind
        if not isinstance(kind, str):
            raise InvalidInputError(f"field 'shape' must be a string, got {kind!r}")
        k = re.sub(r"[\s_]+", "-", kind.strip().lower())
        geo_raw = op.get("geo")
        if k in _SHAPE_WORDS:
            k = _SHAPE_WORDS[k]
        if k not in SHAPE_TYPES:
            try:
                tschema.map_geo(kind)
            except tschema.UnmappableValueError:
                raise InvalidInputError(f"cannot create a shape of type {kind!r}: give one of "
                                        f"{', '.join(SHAPE_TYPES)} or a geo kind") from None
            geo_raw, k = kind if geo_raw is None else geo_raw, "geo"
        parent_ref = _first(op, ("parent", "into", "frame", "parentId", "parent_id"))
        parent = self.canvas._resolve_page(None) if parent_ref is None else self._resolve_parent(parent_ref)
        if parent in self.canvas.nodes:
            self._unlocked(parent)
        text = _first(op, ("text", "label", "content"))
        if isinstance(text, (int, float)) and not isinstance(text, bool):
            text = str(text)
        if text is not None and not isinstance(text, str):
            raise InvalidInputError(f"field 'text' must be a string, got {type(text).__name__}")
        raw_style = self._op_style(op)
        style, props = self._tl_style(k, raw_style, alias or k)
        if k in ("text", "geo", "note") and self._maps_tldraw():
            # deliberate font and size (tldraw's defaults), not those of whatever shape the
            # document holds: the canvas measures with them and the file is written with them
            for key, default in (("font", "draw"), ("size", "m")):
                if key not in style:
                    style[key] = props[key] = default
        if k == "geo":
            m = tschema.map_geo("rectangle" if geo_raw is None else geo_raw)
            if m.note:
                self._notes.append(f"{alias or k}: {m.note}")
            props["geo"] = m.to
        w = _num(op, ("w", "width"), "w")
        h = _num(op, ("h", "height"), "h")
        for name, v in (("w", w), ("h", h)):
            if v is not None and v <= 0:
                raise InvalidInputError(f"field {name!r} must be > 0, got {v!r}")
        if k == "text":
            # Canvas.add measures it (a width makes it wrap at that width); h follows the text
            props["autoSize"] = w is None
            props.setdefault("scale", 1.0)
            w, h = (0.0 if w is None else w), 0.0
        elif k == "note":
            side = w if w is not None else (h if h is not None else DEFAULT_SIZES["note"][0])
            if side != DEFAULT_SIZES["note"][0] and self._maps_tldraw() and not self._note_scales():
                self._notes.append(f"{alias or k}: a note of this document's schema is 200 wide; size {side!r} not applied")
                side = DEFAULT_SIZES["note"][0]
            props["scale"] = side / 200.0
            w = h = side
        else:
            dw, dh = DEFAULT_SIZES[k]
            w = dw if w is None else w
            h = dh if h is None else h
            if k == "geo" and self._maps_tldraw():
                props["growY"] = 0.0  # Canvas.add grows it when the label is taller
                props["scale"] = 1.0
        x, y = self._page_point(op)
        px = self.origin[0] if x is None else x
        py = self.origin[1] if y is None else y
        lx, ly = _to_local(self.canvas, parent, px, py)
        fields: Dict[str, Any] = {"type": k, "parent": parent, "x": lx, "y": ly, "w": w, "h": h,
                                  "style": style, "props": props}
        if k == "frame":
            name = _first(op, ("name", "title"))
            fields["name"] = name if name is not None else (text or alias or "Frame")
        else:
            fields["text"] = text
        for key in ("hidden", "locked"):
            b = _bool(op, key)
            if b is not None:
                fields[key] = b
        if op.get("visible") is not None:
            fields["hidden"] = not _bool(op, "visible")
        opacity = _num(op, ("opacity",), "opacity")
        if opacity is not None:
            fields["opacity"] = opacity
        nid = self._add(fields, alias, k)
        self._touches(nid)

    def _terminal(self, ref: Any, name: str) -> Tuple[Optional[str], Optional[Tuple[float, float]]]:
        """A terminal given as a node reference (bound) or a point in action coordinates."""
        if isinstance(ref, str):
            nid = self.resolve(ref, name)
            if self.canvas.node(nid).type == "arrow":
                raise InvalidInputError(f"field {name!r}: {nid!r} is an arrow; arrows bind to shapes, not to arrows")
            return nid, None
        if isinstance(ref, Mapping):
            ref = (ref.get("x"), ref.get("y"))
        if isinstance(ref, (list, tuple)) and len(ref) == 2:
            x = _num({"v": ref[0]}, ("v",), name)
            y = _num({"v": ref[1]}, ("v",), name)
            if x is not None and y is not None:
                return None, (x + self.origin[0], y + self.origin[1])
        raise InvalidInputError(f"field {name!r} must be a node id or alias, or a point [x, y], got {ref!r}")

    def _anchor_page_point(self, target: str, anchor: Tuple[float, float], precise: bool) -> Tuple[float, float]:
        """Page point of a binding's anchor in its target (the center unless precise), as tldraw aims it."""
        got = self.canvas._peek_frame(target)  # a plain shape: read without deriving the whole canvas
        if got is not None:
            px, py, rot, lb = got
        else:
            d = self.canvas._geometry()  # read here, not kept (see Canvas.geometry)
            r = d.row[target]
            px, py, rot = float(d.px[r]), float(d.py[r]), float(d.rotation[r])
            lb = tuple(float(v) for v in d.local[r])  # type: ignore[assignment]
        ax, ay = anchor if precise else (0.5, 0.5)
        lx = float(lb[0] + ax * (lb[2] - lb[0]))
        ly = float(lb[1] + ay * (lb[3] - lb[1]))
        c, sn = math.cos(rot), math.sin(rot)
        return px + c * lx - sn * ly, py + sn * lx + c * ly

    def _new_binding_id(self, arrow: str, terminal: str) -> str:
        base = "binding:" + arrow.split(":", 1)[-1][:40] + "-" + terminal
        bid, k = base, 2
        while bid in self.canvas.bindings:
            bid, k = f"{base}-{k}", k + 1
        return bid

    def _arrow_local(self, arrow: str, point: Tuple[float, float]) -> Dict[str, float]:
        ox, oy, rot = _transform(self.canvas, arrow)
        dx, dy = point[0] - ox, point[1] - oy
        c, sn = math.cos(rot), math.sin(rot)
        return {"x": c * dx + sn * dy, "y": -sn * dx + c * dy}

    def _create_arrow(self, op: Mapping[str, Any]) -> None:
        alias = self._alias(op)
        ends: Dict[str, Tuple[Optional[str], Optional[Tuple[float, float]]]] = {}
        for term, keys in (("start", ("from", "start", "source", "fromId", "from_id")),
                           ("end", ("to", "end", "toId", "to_id", "target"))):
            ref = _first(op, keys)
            if ref is None:
                raise InvalidInputError(f"missing field {keys[0]!r} (a node or a point [x, y]) for the arrow's {term}")
            ends[term] = self._terminal(ref, keys[0])
        heads = op.get("arrowheads")
        if heads is not None and not isinstance(heads, Mapping):
            raise InvalidInputError(f"field 'arrowheads' must be {{start, end}}, got {heads!r}")
        anchors: Dict[str, Tuple[float, float]] = {}
        precise: Dict[str, bool] = {}
        common = _bool(op, "precise")
        for term, names in (("start", ("from_anchor", "fromAnchor", "start_anchor", "startAnchor")),
                            ("end", ("to_anchor", "toAnchor", "end_anchor", "endAnchor", "anchor"))):
            a = _anchor(_first(op, names), names[0])
            anchors[term] = a if a is not None else (0.5, 0.5)
            own = _bool(op, ("from_precise" if term == "start" else "to_precise"))
            precise[term] = own if own is not None else common if common is not None else (
                a is not None and a != (0.5, 0.5))
        pts: Dict[str, Tuple[float, float]] = {}
        for term, (nid, pt) in ends.items():
            pts[term] = pt if pt is not None else self._anchor_page_point(nid, anchors[term], precise[term])  # type: ignore[arg-type]
        bound = [nid for nid, _ in ends.values() if nid is not None]
        page = self._page_of(bound[0]) if bound else self.canvas._resolve_page(None)
        if len(bound) == 2 and self._page_of(bound[1]) != page:
            raise InvalidInputError(f"{bound[0]!r} and {bound[1]!r} are on different pages")
        raw_style = self._op_style(op)
        if self._maps_tldraw():
            # deliberate size and font (tldraw's defaults), not those of the document's first arrow
            raw_style.setdefault("size", "m")
            raw_style.setdefault("font", "draw")
        style, props = self._tl_style("arrow", raw_style, alias or "arrow")
        if self._maps_tldraw():
            props.update({"arrowheadStart": "none", "arrowheadEnd": "arrow", "scale": 1.0, "labelPosition": 0.5,
                          **props})
        for key, hk in (("arrowheadStart", "start"), ("arrowheadEnd", "end")):
            v = op.get(key, op.get(f"{hk}_arrowhead", heads.get(hk) if heads else None))
            if v is not None or key in op:
                m = tschema.map_arrowhead(v, key)
                if m.note:
                    self._notes.append(f"{alias or 'arrow'}: {m.note}")
                props[key] = m.to
        bend = _num(op, ("bend",), "bend", 0.0)
        (sx, sy), (ex, ey) = pts["start"], pts["end"]
        lx, ly = _to_local(self.canvas, page, sx, sy)
        props.update({"start": {"x": 0.0, "y": 0.0}, "end": {"x": ex - sx, "y": ey - sy}, "bend": bend})
        props.setdefault("kind", "arc")
        text = _first(op, ("text", "label"))
        if text is not None and not isinstance(text, str):
            raise InvalidInputError(f"field 'text' must be a string, got {type(text).__name__}")
        fields = {"type": "arrow", "parent": page, "x": lx, "y": ly, "w": abs(ex - sx), "h": abs(ey - sy),
                  "text": text, "style": style, "props": props}
        nid = self._add(fields, alias, "arrow")
        for term, (target, _) in ends.items():
            if target is not None:
                self.canvas.add(Binding(self._new_binding_id(nid, term), "arrow", nid, target, term, anchors[term],
                                        precise[term], {"isExact": False, "snap": "none"}))

    def _arrow_ref(self, op: Mapping[str, Any]) -> str:
        ref = _first(op, ("arrow", "id", "ids", "arrowId", "arrow_id"))
        if ref is None:
            raise InvalidInputError("missing field 'id' (the arrow)")
        nid = self.resolve(ref, "id")
        if self.canvas.node(nid).type != "arrow":
            raise InvalidInputError(f"{nid!r} is a {self.canvas.node(nid).type!r} node, not an arrow")
        self._unlocked(nid)
        return nid

    def _bind(self, op: Mapping[str, Any]) -> None:
        arrow = self._arrow_ref(op)
        term = op.get("terminal", "end")
        if term not in ("start", "end"):
            raise InvalidInputError(f"field 'terminal' must be 'start' or 'end', got {term!r}")
        ref = _first(op, ("to", "target", "shape", "toId", "to_id"))
        if ref is None:
            raise InvalidInputError("missing field 'to' (the shape to bind to)")
        target, _ = self._terminal(ref if isinstance(ref, str) else str(ref), "to")
        assert target is not None
        if target == arrow:
            raise InvalidInputError(f"an arrow cannot be bound to itself ({arrow!r})")
        a = _anchor(op.get("anchor"), "anchor")
        anchor = a if a is not None else (0.5, 0.5)
        prec = _bool(op, "precise")
        precise = prec if prec is not None else (a is not None and a != (0.5, 0.5))
        for b in list(self.canvas.bindings.values()):
            if b.from_id == arrow and b.terminal == term:
                self.canvas.remove(b.id)
        point = self._arrow_local(arrow, self._anchor_page_point(target, anchor, precise))
        self.canvas.update(arrow, props={term: point})
        self.canvas.add(Binding(self._new_binding_id(arrow, term), "arrow", arrow, target, term, anchor, precise,
                                {"isExact": False, "snap": "none"}))
        self._touches(arrow)

    def _unbind(self, op: Mapping[str, Any]) -> None:
        arrow = self._arrow_ref(op)
        term = op.get("terminal", "both")
        if term not in ("start", "end", "both"):
            raise InvalidInputError(f"field 'terminal' must be 'start', 'end' or 'both', got {term!r}")
        found = [b for b in self.canvas.bindings.values()
                 if b.from_id == arrow and (term == "both" or b.terminal == term)]
        if not found:
            raise InvalidInputError(f"arrow {arrow!r} has no binding at {'either end' if term == 'both' else 'its ' + term}")
        from spatialobs.canvas.document.arrows import unbind_patch

        # as tldraw unbinds: each freed terminal stays where the arrow is drawn (an arc keeps its curve)
        patch = unbind_patch(self.canvas, arrow, [b.terminal for b in found])
        for b in found:
            self.canvas.remove(b.id)
        if patch:
            self.canvas.update(arrow, props=patch)
        self._touches(arrow)


    # ------------------------------------------------------------------ arrangement
    def _align(self, op: Mapping[str, Any]) -> None:
        how = _first(op, ("align", "alignment", "operation", "edge", "how", "to", "mode"))
        if how is None:
            raise InvalidInputError("missing field 'align' (left, center-horizontal, right, top, center-vertical, "
                                    "bottom or center)")
        ids = self._ids(op, ("ids", "id", "nodes", "shapes"))
        arrange.align(self.canvas, ids, how)
        for nid in ids:
            self._touches(nid)

    def _distribute(self, op: Mapping[str, Any]) -> None:
        how = _first(op, ("axis", "direction", "operation", "orientation", "distribute", "how", "mode"))
        if how is None:
            raise InvalidInputError("missing field 'axis' (horizontal or vertical)")
        ids = self._ids(op, ("ids", "id", "nodes", "shapes"))
        arrange.distribute(self.canvas, ids, how)
        for nid in ids:
            self._touches(nid)

    def _group_alias(self, op: Mapping[str, Any]) -> Optional[str]:
        raw = _first(op, ("ref", "as", "group_id", "groupId"))
        if raw is None and isinstance(op.get("ids"), list) and op.get("id") is not None:
            raw = op["id"]
        if raw is None:
            return None
        if not isinstance(raw, str) or not raw.strip():
            raise InvalidInputError(f"field 'ref' must be a non-empty string, got {raw!r}")
        return raw.strip()

    def _group(self, op: Mapping[str, Any]) -> None:
        alias = self._group_alias(op)
        keys = ("ids", "nodes", "shapes", "children", "members") if isinstance(op.get("ids"), list) or alias else (
            "ids", "id", "nodes", "shapes", "children", "members")
        ids = self._ids(op, keys)
        if self.canvas.source_format == "excalidraw":
            gid = self._unique("group:" + re.sub(r"[^A-Za-z0-9_\-]+", "-", alias or "group").strip("-")[:40])
        else:
            gid = self._new_id(alias or "group")
        arrange.group(self.canvas, ids, group_id=gid)
        if alias:
            self._pending.setdefault(alias, gid)
        self._new.append(gid)
        self._touches(gid)

    def _ungroup(self, op: Mapping[str, Any]) -> None:
        ids = self._ids(op, ("ids", "id", "groups", "group"))
        for nid in ids:
            self._touches(nid)
        arrange.ungroup(self.canvas, ids)

    def _lock(self, op: Mapping[str, Any]) -> None:
        ids = self._ids(op)
        arrange.set_locked(self.canvas, ids, True)

    def _unlock(self, op: Mapping[str, Any]) -> None:
        ids = self._ids(op)
        arrange.set_locked(self.canvas, ids, False)

    def _duplicate(self, op: Mapping[str, Any]) -> None:
        ids = self._ids(op, ("ids", "id", "nodes", "shapes", "source"))
        refs_raw = op.get("refs")
        single = _first(op, ("ref", "as"))
        refs: List[Optional[str]] = [None] * len(ids)
        if refs_raw is not None:
            if not isinstance(refs_raw, list) or len(refs_raw) != len(ids):
                raise InvalidInputError(f"field 'refs' must list one alias per id ({len(ids)}), got {refs_raw!r}")
            refs = [r.strip() if isinstance(r, str) and r.strip() else None for r in refs_raw]
        elif single is not None:
            if not isinstance(single, str) or not single.strip():
                raise InvalidInputError(f"field 'ref' must be a non-empty string, got {single!r}")
            if len(ids) != 1:
                raise InvalidInputError(f"field 'ref' names one copy but {len(ids)} ids are duplicated; give 'refs'")
            refs = [single.strip()]
        dx, dy = _num(op, ("dx",), "dx"), _num(op, ("dy",), "dy")
        x, y = _num(op, ("x",), "x"), _num(op, ("y",), "y")
        offset: Optional[Tuple[float, float]] = None
        if x is not None or y is not None:
            boxes = [_bounds(self.canvas, n) for n in ids]
            gx, gy = min(b[0] for b in boxes), min(b[1] for b in boxes)
            offset = ((0.0 if x is None else x + self.origin[0] - gx) + (dx or 0.0),
                      (0.0 if y is None else y + self.origin[1] - gy) + (dy or 0.0))
        elif dx is not None or dy is not None:
            offset = (dx or 0.0, dy or 0.0)

        def new_id(orig: str, taken: set) -> str:
            return self._unique(self._new_id_base(orig), taken)

        copies = arrange.duplicate(self.canvas, ids, offset=offset, new_id=new_id)
        for nid, ref in zip(ids, refs):
            if ref:
                self._pending.setdefault(ref, copies[nid])
        self._new.extend(copies.values())
        for nid in ids:
            self._touches(copies[nid])

    def _new_id_base(self, hint: str) -> str:
        if self.canvas.source_format == "excalidraw" and hint.startswith("group:"):
            return hint
        slug = re.sub(r"[^A-Za-z0-9_\-]+", "-", hint.split(":", 1)[-1]).strip("-")[:40] or "node"
        return "shape:" + slug

    def _unique(self, base: str, taken: Iterable[str] = ()) -> str:
        """``base``, else ``base-2``, ``base-3`` ...: the first id not in the canvas, the pending aliases or ``taken``."""
        avoid = set(taken) | set(self._pending.values())
        nid, k = base, 2
        while nid in self.canvas or nid in avoid:
            nid, k = f"{base}-{k}", k + 1
        return nid

    # ------------------------------------------------------------------ camera
    def _set_viewport(self, op: Mapping[str, Any]) -> None:
        from spatialobs.canvas.editing.editor import fit_camera

        page = op.get("page")
        if page is not None and (not isinstance(page, str) or page not in self.canvas.pages):
            raise OutOfRangeError(f"no page {echo(page)}")
        fit = _first(op, ("fit", "ids", "show", "zoom_to", "zoomTo"))
        box: Optional[Tuple[float, float, float, float]] = None
        if fit is not None:
            refs = fit if isinstance(fit, list) else [fit]
            ids = [self.resolve(r, "fit") for r in refs]
            if not ids:
                raise InvalidInputError("field 'fit' is empty")
            boxes = [_bounds(self.canvas, n) for n in ids]
            pages = {self.canvas.page_of(n) for n in ids}
            if len(pages) > 1:
                raise InvalidInputError(f"field 'fit': the nodes are on {len(pages)} pages")
            page = page or pages.pop()
            pad = _num(op, ("padding", "inset", "margin"), "padding", 32.0)
            if pad < 0:
                raise InvalidInputError(f"field 'padding' must be >= 0, got {pad!r}")
            box = (min(b[0] for b in boxes) - pad, min(b[1] for b in boxes) - pad,
                   max(b[2] for b in boxes) + pad, max(b[3] for b in boxes) + pad)
        pid = self.canvas._resolve_page(page)
        x, y = self._page_point(op)
        w, h = _num(op, ("w", "width"), "w"), _num(op, ("h", "height"), "h")
        zoom = _num(op, ("zoom", "z", "scale"), "zoom")
        center = _first(op, ("center", "centre"))
        dx, dy = _num(op, ("dx",), "dx"), _num(op, ("dy",), "dy")
        if box is None and w is not None and h is not None:
            if not (w > 0 and h > 0):
                raise InvalidInputError(f"fields 'w' and 'h' must be > 0, got {w!r}, {h!r}")
            if x is None or y is None:
                raise InvalidInputError("a viewport box needs x, y, w and h")
            box = (x, y, x + w, y + h)
        c = None
        if center is not None:
            pt = _anchor(center, "center")
            assert pt is not None
            c = (pt[0] + self.origin[0], pt[1] + self.origin[1])
        if box is None and zoom is None and c is None and x is None and y is None and dx is None and dy is None:
            raise InvalidInputError("set_viewport needs x/y (with zoom or w/h), center, dx/dy, zoom or fit")
        vp, note = fit_camera(self.canvas, pid, box=box, corner=None if box is not None else (x, y), center=c,
                              zoom=zoom, pan=(dx or 0.0, dy or 0.0))
        if note:
            self._notes.append(note)
        self.canvas.cameras = {**self.canvas.cameras, pid: vp}
        self._cams.append(pid)

    # ------------------------------------------------------------------ mermaid
    def _create_from_mermaid(self, op: Mapping[str, Any]) -> None:
        from spatialobs.canvas.editing.mermaid import build_mermaid

        src = _first(op, _MERMAID_KEYS)
        if not isinstance(src, str) or not src.strip():
            raise InvalidInputError("missing field 'mermaid' (the flowchart's text)")
        parent_ref = _first(op, ("parent", "into", "frame", "artboard"))
        parent = self.canvas._resolve_page(None) if parent_ref is None else self._resolve_parent(parent_ref)
        if parent in self.canvas.nodes:
            self._unlocked(parent)
        x, y = self._page_point(op)
        made = build_mermaid(self.canvas, src, parent=parent, at=(x, y), origin=self.origin,
                             new_id=lambda hint: self._unique(self._new_id_base(hint)),
                             tldraw=self._maps_tldraw())
        for alias, nid in made.aliases.items():
            self._pending.setdefault(alias, nid)
        ref = _first(op, ("ref", "as"))
        if isinstance(ref, str) and ref.strip() and made.group is not None:
            self._pending.setdefault(ref.strip(), made.group)
        self._new.extend(made.created)
        self._notes.extend(made.notes)
        if made.created:
            self._touches(made.created[0])


def apply_reply(canvas: Canvas, reply: str, origin: Sequence[float] = (0, 0)) -> Report:
    """Parse a model reply and apply its ops with a new :class:`Executor`.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> c = Canvas()
    >>> r = apply_reply(c, '```canvas_ops\\n[{"op": "create_artboard", "name": "A", "w": 100, "h": 80}]\\n```')
    >>> r.created, c.node(r.created[0]).name
    (['shape:A'], 'A')
    """
    return Executor(canvas, origin).apply(reply)
