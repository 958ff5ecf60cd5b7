"""The tools of the service, independent of any transport.

A :class:`Service` owns the documents opened through it (a name, a
:class:`~spatialobs.canvas.Canvas`, the file it came from, its action frame
and default viewport, an undo stack) and the named screen indexes. Every tool
is one method taking plain JSON arguments and returning plain JSON values;
:meth:`Service.call` validates the arguments against the tool's schema, runs
the tool and turns every failure into a :class:`ServiceError` with a code and
a one-line message. The MCP server and the HTTP API both go through
:meth:`Service.call`, so the two transports behave alike.

Safety: file paths are confined to the root folder (``..`` is refused, symlinks
are resolved before the check); requests, documents, replies and op lists
have size limits (:class:`Limits`); a failing tool leaves every document as it
was (ops are atomic, undo and reload are one transaction, saves write a
temporary file, fsync it and rename it into place). A save over an existing
file keeps its mode; a new file gets the mode ``open`` would give it (0o666
minus the umask).

Concurrency: the tools of one document run one at a time (a lock per
document), but a save holds the document only to copy it and serializes and
writes the copy outside (saves of one document land in the order they were
called); different documents and screen indexes proceed independently, so a
slow render of one document does not hold up another. Transports call
:meth:`Service.call` from worker threads.
"""

from __future__ import annotations

import base64
import copy
import inspect
import json
import logging
import math
import os
import re
import secrets
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from spatialobs._errors import SpatialObsError

__all__ = ["Service", "ServiceError", "Limits", "ToolSpec", "TOOLS", "reference_reply", "ERROR_STATUS"]

log = logging.getLogger("spatialobs.serve")

#: HTTP status of each error code.
ERROR_STATUS = {"bad_request": 400, "unauthorized": 401, "forbidden": 403, "not_found": 404,
                "method_not_allowed": 405, "timeout": 408, "conflict": 409, "too_large": 413,
                "unsupported_media_type": 415, "misdirected": 421, "internal": 500, "unavailable": 503}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_FORMATS = ("tldraw", "excalidraw", "native")
_SUFFIX = {"tldraw": ".tldr", "excalidraw": ".excalidraw", "native": ".json"}


class ServiceError(SpatialObsError):
    """A tool call that failed: ``code`` (a key of :data:`ERROR_STATUS`) and a one-line message.

    Examples
    --------
    >>> e = ServiceError("not_found", "no document 'x'")
    >>> e.to_dict()
    {'code': 'not_found', 'message': "no document 'x'"}
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code if code in ERROR_STATUS else "internal"
        self.message = " ".join(str(message).split())[:2000] or code
        super().__init__(self.message)

    @property
    def status(self) -> int:
        """The HTTP status for this error."""
        return ERROR_STATUS[self.code]

    def to_dict(self) -> Dict[str, str]:
        """``{"code", "message"}``."""
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Limits:
    """What one request may ask for.

    Attributes
    ----------
    max_request_bytes : int
        Largest request body (HTTP) or JSON-encoded tool arguments (MCP).
    max_file_bytes : int
        Largest document file opened from the root folder.
    max_ops : int
        Most ops in one apply (after parsing a reply).
    max_documents : int
        Most documents open at once.
    max_indexes : int
        Most screen indexes at once.
    undo_depth : int
        Applies that can be undone per document.
    max_snapshots : int
        Named snapshots kept per document.

    Examples
    --------
    >>> Limits().max_ops
    1000
    """

    max_request_bytes: int = 16 * 1024 * 1024
    max_file_bytes: int = 256 * 1024 * 1024
    max_ops: int = 1000
    max_documents: int = 256
    max_indexes: int = 64
    undo_depth: int = 16
    max_snapshots: int = 32


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what it does (for the model), its JSON input schema and family."""

    name: str
    description: str
    schema: Dict[str, Any]
    family: str
    method: str


def _schema(props: Dict[str, Any], required: Sequence[str] = ()) -> Dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required), "additionalProperties": False}


def _arg(types: Union[str, Sequence[str]], description: str = "", **extra: Any) -> Dict[str, Any]:
    """One argument's schema: its JSON type(s), what it is, and any other keywords (enum, items...)."""
    out: Dict[str, Any] = {"type": types if isinstance(types, str) else list(types)}
    if description:
        out["description"] = description
    out.update(extra)
    return out


# The arguments the tools share. Each tool's schema is made from these definitions and its handler's signature
# (see _build_tool): the names and the required ones are the handler's parameters, the defaults its defaults.
_DOC = _arg("string", "name of an open document (from open_document or scenario_open)")
_IDX = _arg("string", "name of a screen index (created on first use)")
_VIEW = _arg(["object", "array"], "viewport in page units: {x, y, w, h} or [x, y, w, h], or its JSON text; "
                                  "default: the document's (a scenario's, else its saved camera)",
             properties={k: {"type": "number"} for k in "xywh"}, items={"type": "number"}, minItems=4, maxItems=4)
_SNAP = _arg("string", "snapshot name: 1-64 letters, digits, '_', '-' or '.'")
_ORIGIN = _arg("array", "action frame [x, y] (or its JSON text): action coordinates = page - origin; "
                        "default: the document's", items={"type": "number"}, minItems=2, maxItems=2)
_PAGE = _arg("string", "page id; default: the current page")
_BY = _arg("string", "who makes the edit", enum=["agent", "person"])
_CONFIG = _arg("integer", "Remote Team Handoff configuration, 0..9", minimum=0, maximum=9)
_SCREEN = _arg(["object", "array"], "a screen, or its JSON text: generic element JSON {width, height, meta?: "
                                    "{display_mode?, text_size?, app?}, elements: [{bounds, role, text?, editable?, "
                                    "clickable?, id?}]} (what a driver's accessibility-tree screen serializes to: "
                                    "Screen.to_dict()), a Rico view hierarchy or a DroidBot state")
_META = _arg("object", "screen metadata, or its JSON text: {display_mode?, text_size?, app?}")
_PATH = _arg("string", "a file path under the server's root folder")


def _apply_description() -> str:
    """The apply tool's description: the op kinds and their fields, from the op registry (:data:`OPS`)."""
    from spatialobs.canvas.editing.ops import OPS

    return ("Apply operations to a document: a model reply with fenced canvas_ops blocks (reply), or a list of ops "
            "(ops), each an object {\"op\": KIND, ...fields}. Coordinates are action coordinates (page minus the "
            "origin); the id or ref of a new node names it for later ops of the same call. The op kinds and their "
            "main fields (? optional; id|ids: a node or a list):\n"
            + "\n".join("- " + o.line() for o in OPS) + "\n"
            "Each op is atomic: one that fails changes nothing and is reported with its index and reason; later ops "
            "still run. A locked node, or one inside a locked node, refuses every op but unlock. Returns the applied "
            "op indices, the errors, the created ids and, after set_viewport, the viewport the person now sees (it "
            "also becomes the document's default viewport). One apply is one undo step.")


def _ops_arg() -> Dict[str, Any]:
    from spatialobs.canvas.editing.ops import OP_NAMES

    return _arg("array", "the ops (or their JSON text): objects {\"op\": KIND, ...fields}; the kinds are listed "
                         "in the description",
                items={"type": "object", "properties": {"op": {"type": "string", "enum": list(OP_NAMES)}},
                       "required": ["op"]})


@dataclass(frozen=True)
class _Def:
    """What a tool is before its schema is made: name, family, description, argument definitions, handler."""

    name: str
    family: str
    description: str
    args: Dict[str, Dict[str, Any]]
    method: str = ""


_DEFS: Tuple[_Def, ...] = (
    _Def("open_document", "canvas", "Open a canvas document (tldraw .tldr, Excalidraw or native JSON; format "
         "detected) from a path under the server's root folder, or inline JSON; returns its name for the other "
         "tools. Give path or document.",
         {"path": _PATH, "document": _arg(["object", "string"], "the document itself: its JSON, or its JSON text"),
          "name": _arg("string", "name to give it (default: from the path, or doc-N)"),
          "origin": _ORIGIN, "viewport": _VIEW}),
    _Def("list_documents", "canvas", "List the open documents.", {}),
    _Def("observe", "canvas", "The structured observation of a document page: objects with visibility, structure "
         "and state, native and inferred relations, offscreen bounds in action coordinates. Returns a token; pass it "
         "back as since to get what changed (and who changed it: person or agent) since that observation.",
         {"document": _DOC, "viewport": _VIEW, "page": _PAGE,
          "selected": _arg("array", "ids of the selected objects (or their JSON text); default: the selection saved "
                                    "in the document", items={"type": "string"}),
          "context": _arg("array", "ids of the objects the request is about (or their JSON text); kept first",
                          items={"type": "string"}),
          "max_objects": _arg("integer", "soft limit of objects (selected, context and partial ones are always kept)",
                              minimum=0),
          "max_relations": _arg("integer", "hard limit of relations", minimum=0),
          "max_changes": _arg("integer", "most changes reported with since", minimum=0),
          "origin": _ORIGIN,
          "include_bounds": _arg("boolean", "give actionBounds on every object, not only offscreen ones"),
          "since": _arg("string", "token of an earlier observation, or 'last'"),
          "form": _arg("string", "json (an object), text (the same as a JSON string) or compact (the same fields "
                                 "with each id once, about a third of the bytes)", enum=["json", "text", "compact"]),
          "max_bytes": _arg("integer", "byte budget of the observation in its form (objects kept by priority); "
                                       "default: none", minimum=0),
          "max_tokens": _arg("integer", "the same budget in tokens (4 bytes each); default: none", minimum=0),
          "occlusion": _arg("string", "painted (what higher shapes paint hides) or paper (the CanvasObs bounds rule)",
                            enum=["painted", "paper"]),
          "explain": _arg("boolean", "give each object keptFor, why it was kept"),
          "baseline": _arg("boolean", "also the baseline context (shapes in the request bounds and peripheral "
                                      "clusters)"),
          "guide": _arg("boolean", "also the guide to reading the observation")}),
    _Def("snapshot", "canvas", "The agent snapshot of a document: artboards, node count, selection with subtrees, "
         "tool.", {"document": _DOC, "page": _PAGE, "origin": _ORIGIN}),
    _Def("apply", "canvas", _apply_description(),
         {"document": _DOC, "reply": _arg("string", "a model reply with fenced canvas_ops blocks (or give ops)"),
          "ops": _ops_arg(), "origin": _ORIGIN, "by": _BY}),
    _Def("create_from_mermaid", "canvas", "Draw a Mermaid flowchart (graph/flowchart: nodes and their shapes, "
         "edges with labels, subgraphs) into a document as shapes and arrows bound at both ends, laid out in layers "
         "along its direction; subgraphs become frames in tldraw, grouped rectangles in Excalidraw. The same as "
         "apply with one create_from_mermaid op (one undo step); Mermaid node ids name the new shapes.",
         {"document": _DOC, "mermaid": _arg("string", "the flowchart's Mermaid text"),
          "x": _arg("number", "left of the drawing, action coordinates; default: beside the page's content"),
          "y": _arg("number", "top of the drawing, action coordinates; default: beside the page's content"),
          "parent": _arg("string", "the frame or page to draw into; default: the current page"),
          "origin": _ORIGIN}),
    _Def("undo", "canvas", "Undo the last apply or snapshot restore on a document (its writes only, and the camera).",
         {"document": _DOC}),
    _Def("save_snapshot", "canvas", "Keep the document's current state under a name (its nodes, bindings, cameras "
         "and selection), to restore later; a name already in use is replaced.", {"document": _DOC, "name": _SNAP}),
    _Def("restore_snapshot", "canvas", "Bring the document back to a named snapshot through the write path (one "
         "undo step; the snapshot is kept).", {"document": _DOC, "name": _SNAP, "by": _BY}),
    _Def("list_snapshots", "canvas", "The named snapshots of a document, oldest first.", {"document": _DOC}),
    _Def("delete_snapshot", "canvas", "Forget a named snapshot.", {"document": _DOC, "name": _SNAP}),
    _Def("render", "canvas", "Draw the observation of a document: SVG text, or a PNG image.",
         {"document": _DOC, "format": _arg("string", "svg (text) or png (an image)", enum=["svg", "png"]),
          "width": _arg("integer", "width of the picture in pixels, 100..8000", minimum=100, maximum=8000),
          "viewport": _VIEW, "page": _PAGE}),
    _Def("screenshot", "canvas", "A picture of the person's view as their live editor draws it (tldraw's image "
         "export, Excalidraw's exportToBlob): PNG of the viewport of the editor connected to the document "
         "(spatialobs serve --http, page /live/{document}). The structured observation is observe.",
         {"document": _DOC, "session": _arg("string", "editor session (default: the one last active)"),
          "viewport": _VIEW}),
    _Def("save", "canvas", "Save a document (tldraw, excalidraw or native) atomically to a path under the root "
         "folder (default: the file it was opened from).",
         {"document": _DOC, "path": _PATH,
          "format": _arg("string", "the file format; default: the document's own", enum=list(_FORMATS))}),
    _Def("reload", "canvas", "Re-read a document's file and apply the differences as the person's edits (so the "
         "next observe with since reports them).", {"document": _DOC}),
    _Def("close", "canvas", "Close a document (unsaved changes are dropped).", {"document": _DOC}),
    _Def("list_scenarios", "scenarios", "The ten Remote Team Handoff configurations: family and prompt.", {}),
    _Def("scenario_open", "scenarios", "Open Remote Team Handoff configuration 0..9 as a document; returns its name, "
         "prompt, viewport and action origin.",
         {"config": _CONFIG, "name": _arg("string", "name to give it (default: handoff-CONFIG)")}),
    _Def("evaluate", "scenarios", "Score a document against a Remote Team Handoff configuration's task: correct "
         "target, correct placement, full task success.", {"document": _DOC, "config": _CONFIG}),
    _Def("reference_reply", "scenarios", "The reply of the rule-based reference agent for a scenario document (a "
         "canvas_ops block), computed from the document's observation and the prompt.",
         {"document": _DOC, "config": _CONFIG}),
    _Def("screen_add", "screen", "Add a screen to a named state index; returns the state it maps to, whether it is "
         "new and the match score. With from_state and action, also records that transition in the index's graph.",
         {"index": _IDX, "screen": _SCREEN, "meta": _META,
          "from_state": _arg("integer", "the state the action was taken in (with action)", minimum=0),
          "action": _arg("string", "the action's signature, as screen_choose returns it (with from_state)")}),
    _Def("screen_query", "screen", "The k best matching indexed observations for a screen, without adding it.",
         {"index": _IDX, "screen": _SCREEN, "meta": _META, "k": _arg("integer", "how many", minimum=1)}),
    _Def("screen_stats", "screen", "Statistics of a screen index and its state graph.", {"index": _IDX}),
    _Def("screen_choose", "screen", "Choose the next action on a screen with the one-step PUCT selector over the "
         "index's shared state graph, as the exploration loop does (actions with one signature are one arm). "
         "Returns the choice (an index into actions), its signature (pass it to screen_add as action with the "
         "resulting screen and from_state) and the score of each action.",
         {"index": _IDX, "screen": _SCREEN, "meta": _META,
          "actions": _arg("array", "the executable actions (or their JSON text), [{op: click|type|key, element?: "
                                   "index into the screen's elements, value?}] (a driver's actions as they are); "
                                   "default: clicks and typing on the clickable and editable elements",
                          items={"type": "object"}),
          "goal": _arg("string", "what the exploration is after (for the heuristic prior)"),
          "prior": _arg("string", "the prior over actions", enum=["uniform", "heuristic"]),
          "c_p": _arg("number", "the PUCT exploration constant", minimum=0)}),
    _Def("screen_save", "screen", "Save a screen index's state index to a file under the root folder (atomic).",
         {"index": _IDX, "path": _PATH}),
    _Def("screen_load", "screen", "Load a saved state index file (from screen_save) as a named index.",
         {"index": _IDX, "path": _PATH}),
    _Def("list_indexes", "screen", "List the screen indexes.", {}),
)

#: Where null is accepted as "not given": arguments whose default is None and whose type is a string, an object or
#: an array with no enum. A null for any other typed argument is refused (a client that could not read a number
#: sends null; falling back to the default would hide that).
_NULLABLE_TYPES = frozenset({"string", "object", "array"})


def reference_reply(observation_json: str, prompt: str) -> str:
    """The reference agent's reply for a Remote Team Handoff prompt, as a ``canvas_ops`` block.

    The agent (:func:`spatialobs.canvas.scenarios.agent.choose`) reads only the
    observation JSON and the prompt; its choice becomes one ``place`` op. A
    choice it cannot make gives an empty op list.

    Examples
    --------
    >>> from spatialobs.canvas import observe, scenarios
    >>> s = scenarios.remote_team_handoff(3)
    >>> print(reference_reply(observe(s.canvas, s.viewport, origin=s.origin).to_json(), s.prompt))
    ```canvas_ops
    {"ops": [{"op": "place", "ids": ["shape:chart0"], "into": "shape:chartslot"}]}
    ```
    """
    from spatialobs.canvas.scenarios.agent import choose

    ch = choose(observation_json, prompt)
    ops = [] if not ch.targets or ch.destination is None else [
        {"op": "place", "ids": list(ch.targets), "into": ch.destination}]
    return "```canvas_ops\n" + json.dumps({"ops": ops}) + "\n```"


def _plain(v: Any) -> Any:
    """JSON values for results (tuples, sets and numpy scalars become lists and numbers)."""
    if isinstance(v, (str, bool)) or v is None:
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v
        return [_plain(x) for x in items]
    if hasattr(v, "item"):  # numpy scalar
        return _plain(v.item())
    if hasattr(v, "tolist"):
        return _plain(v.tolist())
    return str(v)


_JSON_TYPES: Dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def json_type(value: Any) -> str:
    """The JSON type name of a decoded JSON value (``integer`` for a whole number, ``number`` otherwise).

    Examples
    --------
    >>> [json_type(v) for v in (None, True, 3, 2.5, "a", [1], {"a": 1})]
    ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object']
    """
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _JSON_TYPES[name](value):
            return name
    return type(value).__name__


def _types(prop: Mapping[str, Any]) -> List[str]:
    t = prop.get("type")
    return [t] if isinstance(t, str) else list(t or [])


def _check_arg(spec: ToolSpec, name: str, v: Any) -> Any:
    """One argument checked against its schema: the value to pass the handler (a JSON text decoded)."""
    prop = spec.schema["properties"][name]
    types = _types(prop)
    wanted = " or ".join(t for t in types if t != "null")
    where = f"{spec.name}: argument {name!r}"
    if v is None and "null" not in types:
        if name in spec.schema["required"]:
            raise ServiceError("bad_request", f"{spec.name}: missing argument {name!r} (got null)")
        default = f" ({json.dumps(prop['default'])})" if "default" in prop else ""
        raise ServiceError("bad_request", f"{where} must be {wanted}, got null; leave it out to use the "
                                          f"default{default}")
    structured = [t for t in types if t in ("object", "array")]
    if isinstance(v, str) and structured and "string" not in types:
        # clients that fill a form send an object or array argument as its JSON text
        try:
            decoded = json.loads(v)
        except RecursionError:
            raise ServiceError("bad_request", f"{where}: its JSON text is nested too deeply") from None
        except ValueError as exc:
            shown = v if len(v) <= 40 else v[:37] + "..."
            raise ServiceError("bad_request", f"{where} must be {wanted} or its JSON text; got a string that is "
                                              f"not JSON ({shown!r}: {exc})") from None
        if not any(_JSON_TYPES[t](decoded) for t in structured):
            raise ServiceError("bad_request", f"{where} must be {wanted} or its JSON text; got the JSON text of "
                                              f"{'a' if json_type(decoded)[0] not in 'aeiou' else 'an'} "
                                              f"{json_type(decoded)}")
        v = decoded
    if (isinstance(v, float) and v.is_integer() and "integer" in types and "number" not in types
            and abs(v) < 2 ** 53):
        v = int(v)  # 5.0 is the integer 5 in JSON Schema
    if types and not any(_JSON_TYPES[t](v) for t in types):
        also = " or its JSON text" if structured and "string" not in types else ""
        raise ServiceError("bad_request", f"{where} must be {wanted}{also}, got {json_type(v)}")
    if isinstance(v, float) and not math.isfinite(v):
        raise ServiceError("bad_request", f"{where} must be a finite number, got {v}")
    if v is not None and "enum" in prop and v not in prop["enum"]:
        raise ServiceError("bad_request", f"{where} must be one of {prop['enum']}, got {v!r}")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        lo, hi = prop.get("minimum"), prop.get("maximum")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            bounds = (f"{lo}..{hi}" if lo is not None and hi is not None
                      else f">= {lo}" if lo is not None else f"<= {hi}")
            raise ServiceError("bad_request", f"{where} must be {bounds}, got {v}")
    return v


def check_args(spec: ToolSpec, args: Any) -> Dict[str, Any]:
    """The arguments of a call checked against the tool's schema; the values to pass its handler.

    Top-level names, types, enums and bounds are checked. An object or array
    argument may come as its JSON text (decoded here), and a whole number as
    ``5.0``. A null is refused, in one line, wherever the schema's type does
    not list ``"null"`` (there it is the same as leaving the argument out):
    only arguments with no default value (the handler's None: "the
    document's", "none") and a string, object or array type take it.

    Examples
    --------
    >>> check_args(_BY_NAME["undo"], {"document": "a"})
    {'document': 'a'}
    >>> check_args(_BY_NAME["observe"], {"document": "a", "viewport": "[0, 0, 100, 50]", "page": None})
    {'document': 'a', 'viewport': [0, 0, 100, 50]}
    >>> check_args(_BY_NAME["undo"], {"document": 3})
    Traceback (most recent call last):
    ...
    spatialobs.serve.service.ServiceError: undo: argument 'document' must be string, got integer
    >>> check_args(_BY_NAME["observe"], {"document": "a", "max_objects": None})
    Traceback (most recent call last):
    ...
    spatialobs.serve.service.ServiceError: observe: argument 'max_objects' must be integer, got null; leave it out to use the default (180)
    """
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ServiceError("bad_request", f"{spec.name}: arguments must be an object, got {json_type(args)}")
    props = spec.schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ServiceError("bad_request", f"{spec.name}: unknown argument(s) {unknown}; known: {sorted(props)}")
    for name in spec.schema["required"]:
        if name not in args:
            raise ServiceError("bad_request", f"{spec.name}: missing argument {name!r}")
    out: Dict[str, Any] = {}
    for name, v in args.items():
        v = _check_arg(spec, name, v)
        if v is not None:
            out[name] = v
    return out


def action_json(action: Any) -> Dict[str, Any]:
    """An executable action as ``screen_choose`` takes it: ``{"op", "element"?, "value"?}``.

    ``element`` is the action's target's index in its screen's element list (what
    every driver's :meth:`~spatialobs.screen.drivers.Driver.actions` sets), so the
    actions a driver offers go to the service as they are and the choice maps back.

    Examples
    --------
    >>> from spatialobs.screen.drivers import make_driver
    >>> d = make_driver("notepad")
    >>> scr = d.reset()
    >>> [action_json(a) for a in d.actions(scr)][-1]
    {'op': 'key', 'value': 'escape'}
    """
    out: Dict[str, Any] = {"op": action.op}
    if action.target is not None:
        if action.index is None:
            raise ServiceError("bad_request", f"the action {action.label!r} has no element index")
        out["element"] = int(action.index)
    if action.value is not None:
        out["value"] = action.value
    return out


def action_from_json(data: Any, screen: Any, *, where: str = "action") -> Any:
    """The :class:`~spatialobs.screen.actions.Action` of :func:`action_json`'s form on ``screen``.

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen
    >>> scr = Screen([Element((0, 0, 10, 10), "button", "OK", clickable=True)], 100, 100)
    >>> action_from_json({"op": "click", "element": 0}, scr).label
    'click ok'
    """
    from spatialobs.screen.actions import OPERATIONS, Action

    if not isinstance(data, Mapping):
        raise ServiceError("bad_request", f"{where} must be an object {{op, element?, value?}}")
    op, el, value = data.get("op"), data.get("element"), data.get("value")
    if op not in OPERATIONS:
        raise ServiceError("bad_request", f"{where}: op must be one of {', '.join(OPERATIONS)}, got {op!r}")
    target = None
    if el is not None:
        if isinstance(el, bool) or not isinstance(el, int) or not 0 <= el < len(screen.elements):
            raise ServiceError("bad_request", f"{where}: element must be an index 0..{len(screen.elements) - 1}, "
                                              f"got {el!r}")
        target = screen.elements[el]
    if value is not None and not isinstance(value, str):
        raise ServiceError("bad_request", f"{where}: value must be a string, got {type(value).__name__}")
    try:
        return Action(op, target, value, el)
    except SpatialObsError as exc:
        raise ServiceError("bad_request", f"{where}: {exc}") from None


def _no_recover() -> Any:
    raise ServiceError("bad_request", "the service does not act")


@dataclass
class _Doc:
    name: str
    canvas: Any
    path: Optional[Path]
    format: str
    origin: Tuple[float, float] = (0.0, 0.0)
    viewport: Any = None
    config: Optional[int] = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    save_turn: threading.Condition = field(default_factory=threading.Condition)  # saves write in ticket order
    saves_taken: int = 0
    saves_done: int = 0
    executor: Any = None
    undo: List[Tuple[Any, str, Any]] = field(default_factory=list)  # (canvas copy, token, viewport) before each apply
    snapshots: Dict[str, Tuple[Any, Any, int]] = field(default_factory=dict)  # name -> (canvas copy, viewport, serial)
    last_token: Optional[str] = None
    applies: int = 0


@dataclass
class _Index:
    name: str
    graph: Any = None    # ScreenGraph (in memory) over ``index``
    index: Any = None    # StateIndex (the graph's, or one loaded from a file)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Service:
    """The open documents and screen indexes of one server, and the tools over them.

    Parameters
    ----------
    root : path
        The folder every path is confined to (default: the current folder).
    limits : Limits, optional

    Examples
    --------
    >>> svc = Service(".")
    >>> d = svc.call("open_document", {"document": {"type": "excalidraw", "elements": [
    ...     {"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 50, "height": 20}]}, "name": "demo"})
    >>> d["document"], d["nodes"]
    ('demo', 1)
    >>> r = svc.call("apply", {"document": "demo", "ops": [{"op": "move_node", "id": "a", "x": 100, "y": 0}]})
    >>> r["applied"], r["errors"]
    ([0], [])
    >>> svc.call("undo", {"document": "demo"})["undone"]
    True
    >>> svc.call("close", {"document": "nope"})
    Traceback (most recent call last):
    ...
    spatialobs.serve.service.ServiceError: no open document 'nope'
    """

    def __init__(self, root: Union[str, "os.PathLike[str]"] = ".", *, limits: Optional[Limits] = None) -> None:
        r = Path(root)
        if not r.is_dir():
            raise ServiceError("bad_request", f"root folder {os.fspath(root)!r} is not a directory")
        self.root = r.resolve()
        self.limits = limits or Limits()
        self._docs: Dict[str, _Doc] = {}
        self._indexes: Dict[str, _Index] = {}
        self._lock = threading.Lock()
        self._serial = 0
        #: The live editors of the documents (a :class:`~spatialobs.serve.live.LiveHub`), when served over HTTP.
        self.live: Any = None

    # ------------------------------------------------------------------ dispatch
    @property
    def tools(self) -> Tuple[ToolSpec, ...]:
        """Every tool, in listing order."""
        return TOOLS

    def call(self, tool: str, args: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Run one tool; a failure is a :class:`ServiceError` (never another exception).

        Examples
        --------
        >>> Service(".").call("list_documents")
        {'documents': []}
        """
        spec = _BY_NAME.get(tool) if isinstance(tool, str) else None
        if spec is None:
            raise ServiceError("not_found", f"no tool {tool!r}; tools: {', '.join(_BY_NAME)}")
        clean = check_args(spec, args)
        try:
            result: Dict[str, Any] = getattr(self, "_t_" + spec.method)(**clean)
            return result
        except ServiceError:
            raise
        except SpatialObsError as exc:
            code = "not_found" if isinstance(exc, (IndexError, KeyError, LookupError)) else "bad_request"
            raise ServiceError(code, f"{tool}: {exc}") from None
        except RecursionError:
            raise ServiceError("bad_request", f"{tool}: input nested too deeply") from None
        except MemoryError:
            raise ServiceError("too_large", f"{tool}: out of memory") from None
        except Exception as exc:  # a bug: logged with its traceback, reported in one line
            log.exception("tool %s failed", tool)
            raise ServiceError("internal", f"{tool}: internal error ({type(exc).__name__}: {exc})") from None

    # ------------------------------------------------------------------ helpers
    def resolve_path(self, path: str, *, must_exist: bool = True) -> Path:
        """``path`` (relative to the root, or absolute inside it) with symlinks resolved.

        Raises ``forbidden`` for ``..`` parts or a path that leaves the root once
        resolved, ``not_found`` for a missing file when ``must_exist``.

        Examples
        --------
        >>> Service(".").resolve_path("../etc/passwd")
        Traceback (most recent call last):
        ...
        spatialobs.serve.service.ServiceError: path '../etc/passwd' may not contain '..'
        """
        if not isinstance(path, str) or not path.strip() or "\x00" in path:
            raise ServiceError("bad_request", f"path must be a non-empty string, got {path!r}")
        p = Path(path)
        if ".." in p.parts:
            raise ServiceError("forbidden", f"path {path!r} may not contain '..'")
        full = (p if p.is_absolute() else self.root / p).resolve()
        if full != self.root and self.root not in full.parents:
            raise ServiceError("forbidden", f"path {path!r} is outside the server's root folder")
        if must_exist and not full.is_file():
            raise ServiceError("not_found", f"no file {path!r} under the root folder")
        return full

    def _doc(self, name: Any) -> _Doc:
        d = self._docs.get(name) if isinstance(name, str) else None
        if d is None:
            raise ServiceError("not_found", f"no open document {name!r}")
        return d

    def _register(self, doc: _Doc, requested: Optional[str]) -> _Doc:
        with self._lock:
            if len(self._docs) >= self.limits.max_documents:
                raise ServiceError("too_large", f"{len(self._docs)} documents are open (the limit); close one first")
            if requested is not None:
                if not _NAME.match(requested):
                    raise ServiceError("bad_request", f"document name {requested!r} must be 1-64 letters, digits, "
                                                      "'_', '-' or '.'")
                if requested in self._docs:
                    raise ServiceError("conflict", f"a document named {requested!r} is already open")
                doc.name = requested
            else:
                base = re.sub(r"[^A-Za-z0-9_.\-]", "-", doc.name)[:48].strip("-.") or "doc"
                name, k = base, 2
                while name in self._docs:
                    name, k = f"{base}-{k}", k + 1
                doc.name = name
            self._docs[doc.name] = doc
        return doc

    @staticmethod
    def _name_ok(name: Any) -> bool:
        return isinstance(name, str) and bool(_NAME.match(name))

    def _origin(self, doc: _Doc, origin: Any) -> Tuple[float, float]:
        if origin is None:
            return doc.origin
        if (not isinstance(origin, list) or len(origin) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in origin)):
            raise ServiceError("bad_request", f"origin must be [x, y] (two finite numbers), got {origin!r}")
        return (float(origin[0]), float(origin[1]))

    @staticmethod
    def _info(d: _Doc) -> Dict[str, Any]:
        c = d.canvas
        rel = None
        return {"document": d.name, "format": d.format, "path": rel if d.path is None else str(d.path),
                "nodes": len(c.nodes), "bindings": len(c.bindings), "pages": len(c.pages),
                "origin": list(d.origin), "undo": len(d.undo)}

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    # ------------------------------------------------------------------ canvas tools
    def _t_open_document(self, path: Optional[str] = None, document: Any = None, name: Optional[str] = None,
                         origin: Any = None, viewport: Any = None) -> Dict[str, Any]:
        from spatialobs.canvas import load
        from spatialobs.canvas.observe import resolve_viewport

        if (path is None) == (document is None):
            raise ServiceError("bad_request", "open_document: give either path or document")
        if path is not None:
            full = self.resolve_path(path)
            size = full.stat().st_size
            if size > self.limits.max_file_bytes:
                raise ServiceError("too_large", f"file {path!r} has {size} bytes; the limit is {self.limits.max_file_bytes}")
            canvas = load(full)
            doc = _Doc(full.stem, canvas, full, canvas.source_format or "native")
        else:
            if isinstance(document, str) and len(document) > self.limits.max_request_bytes:
                raise ServiceError("too_large", "open_document: the inline document is too large")
            canvas = load(document)
            doc = _Doc("doc", canvas, None, canvas.source_format or "native")
        doc.origin = self._origin(doc, origin)
        if viewport is not None:
            doc.viewport = resolve_viewport(canvas, viewport, canvas._resolve_page(None))
        self._register(doc, name)
        out = self._info(doc)
        out["path"] = None if doc.path is None else self._rel(doc.path)
        out["diagnostics"] = [str(dg.message) if not hasattr(dg, "record") else f"{dg.record}: {dg.message}"
                              for dg in canvas.diagnostics[:20]]
        return out

    def _t_list_documents(self) -> Dict[str, Any]:
        with self._lock:
            docs = list(self._docs.values())
        out = []
        for d in docs:
            info = self._info(d)
            info["path"] = None if d.path is None else self._rel(d.path)
            out.append(info)
        return {"documents": out}

    def _t_observe(self, document: str, viewport: Any = None, page: Optional[str] = None, selected: Any = None,
                   context: Any = None, max_objects: int = 180, max_relations: int = 700, max_changes: int = 100,
                   origin: Any = None, include_bounds: bool = False, since: Optional[str] = None, form: str = "json",
                   baseline: bool = False, guide: bool = False, max_bytes: Optional[int] = None,
                   max_tokens: Optional[int] = None, occlusion: str = "painted", explain: bool = False) -> Dict[str, Any]:
        from spatialobs.canvas import GUIDE, observe
        from spatialobs.canvas.baseline import baseline_context

        d = self._doc(document)
        with d.lock:
            ox, oy = self._origin(d, origin)
            live = self.live.defaults(d, viewport, page, selected) if self.live is not None else None
            if live is not None:
                viewport, page, selected = live.pop("viewport"), live.pop("page"), live.pop("selected")
            vp = viewport if viewport is not None else (d.viewport if page is None else None)
            if since == "last":
                if d.last_token is None:
                    raise ServiceError("bad_request", "observe: since='last' but the document was never observed")
                since = d.last_token
            obs = observe(d.canvas, vp, page=page, selected=selected, context=context or (),
                          max_objects=max_objects, max_relations=max_relations, origin=(ox, oy),
                          include_bounds=include_bounds, since=since, max_changes=max_changes,
                          max_bytes=max_bytes, max_tokens=max_tokens, budget_form="compact" if form == "compact" else "json",
                          occlusion=occlusion, explain=explain)
            d.last_token = obs.token
            if form == "compact":
                from spatialobs.canvas.compact import compact

                body: Any = compact(obs.to_dict())
            else:
                body = obs.to_json() if form == "text" else obs.to_dict()
            out: Dict[str, Any] = {"document": d.name, "page": obs.page, "token": obs.token, "observation": body}
            if live is not None:
                out["live"] = live
            if baseline:
                out["baseline"] = _plain(baseline_context(d.canvas, vp, page=page, selected=selected, origin=(ox, oy)))
        if guide:
            out["guide"] = GUIDE
            if form == "compact":
                from spatialobs.canvas.compact import COMPACT_GUIDE

                out["guide"] = GUIDE + " " + COMPACT_GUIDE
        return out

    def _t_snapshot(self, document: str, page: Optional[str] = None, origin: Any = None) -> Dict[str, Any]:
        from spatialobs.canvas import snapshot

        d = self._doc(document)
        with d.lock:
            return {"document": d.name, "snapshot": _plain(snapshot(d.canvas, page=page, origin=self._origin(d, origin)))}

    def _t_apply(self, document: str, reply: Optional[str] = None, ops: Optional[List[Any]] = None,
                 origin: Any = None, by: str = "agent") -> Dict[str, Any]:
        from spatialobs.canvas import Executor, parse_ops
        from spatialobs.canvas.changes import issue_token
        from spatialobs.canvas.editing.ops import OpError

        if (reply is None) == (ops is None):
            raise ServiceError("bad_request", "apply: give either reply or ops")
        parse_errors: List[str] = []
        if reply is not None:
            if len(reply) > self.limits.max_request_bytes:
                raise ServiceError("too_large", "apply: the reply is too large")
            parsed, perrs = parse_ops(reply)
            parse_errors = [str(e) for e in perrs]
            ops = parsed
        assert ops is not None
        if len(ops) > self.limits.max_ops:
            raise ServiceError("too_large", f"apply: {len(ops)} ops; the limit is {self.limits.max_ops} per call")
        d = self._doc(document)
        with d.lock:
            frame = self._origin(d, origin)
            if d.executor is None or d.executor.origin != frame:
                d.executor = Executor(d.canvas, frame)
            before = d.canvas.copy()
            viewport_before = d.viewport
            token = issue_token(d.canvas)
            d.executor.by = by
            with d.canvas.batch():  # an unexpected failure undoes the whole call
                report = d.executor.apply(ops)
            if report.viewport:
                # the person's view moved: the document's default viewport follows the current page's camera
                cur = d.canvas._resolve_page(None)
                if cur in report.viewport:
                    d.viewport = d.canvas.cameras[cur]
            if report.applied:
                d.undo.append((before, token, viewport_before))
                del d.undo[:-self.limits.undo_depth]
                self._publish(d, by, True)
            if report.viewport:  # the live editors show the person the new view
                self._camera(d, report.viewport, by)
            out = _plain(report.to_dict())
            out["errors"] = parse_errors + [str(e) for e in report.errors if isinstance(e, OpError)]
            out["document"] = d.name
            out["undo"] = len(d.undo)
            out["token"] = issue_token(d.canvas)  # the state this apply leaves
            d.applies += 1
            out["sequence"] = d.applies  # applies to one document run one at a time, in this order
            return out

    def _t_undo(self, document: str) -> Dict[str, Any]:
        from spatialobs.canvas.changes import sync, touched_since

        d = self._doc(document)
        with d.lock:
            if not d.undo:
                return {"document": d.name, "undone": False, "written": 0, "undo": 0}
            before, token, viewport = d.undo[-1]
            try:
                touched = touched_since(d.canvas, token)
            except SpatialObsError:
                touched = (set(before.nodes) | set(d.canvas.nodes), set(before.bindings) | set(d.canvas.bindings))
            with d.canvas.by("agent"):
                written = sync(d.canvas, before, only=touched)
            moved = d.canvas.cameras != before.cameras
            back: Dict[str, Any] = {}
            if moved:  # set_viewport moved a camera: it goes back too
                cams = d.canvas.cameras
                back = {p: v for p, v in before.cameras.items() if cams.get(p) != v}
                d.canvas.cameras = dict(before.cameras)
                written += 1
            d.viewport = viewport
            d.undo.pop()
            self._publish(d, "agent", False)
            if back:  # the live editors' views go back with it (a page that had no camera stays where it is)
                self._camera(d, {p: c for p, c in _cameras(d.canvas).items() if p in back}, "agent")
            d.executor = None  # its aliases may name undone nodes
            out = {"document": d.name, "undone": True, "written": written, "undo": len(d.undo)}
            if moved:  # the cameras as they are again (the live editors were sent them above)
                out["viewport"] = _cameras(d.canvas)
            return out

    def _t_create_from_mermaid(self, document: str, mermaid: str, x: Optional[float] = None,
                               y: Optional[float] = None, parent: Optional[str] = None,
                               origin: Any = None) -> Dict[str, Any]:
        op: Dict[str, Any] = {"op": "create_from_mermaid", "mermaid": mermaid}
        for k, v in (("x", x), ("y", y), ("parent", parent)):
            if v is not None:
                op[k] = v
        out = self._t_apply(document, ops=[op], origin=origin)
        if not out["applied"]:  # the one op failed: the document is as it was
            raise ServiceError("bad_request", "create_from_mermaid: " + "; ".join(out["errors"]))
        return out

    def _snapshot_name(self, name: Any) -> str:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ServiceError("bad_request", f"snapshot name {name!r} must be 1-64 letters, digits, '_', '-' or '.'")
        return name

    def _t_save_snapshot(self, document: str, name: str) -> Dict[str, Any]:
        name = self._snapshot_name(name)
        d = self._doc(document)
        with d.lock:
            if name not in d.snapshots and len(d.snapshots) >= self.limits.max_snapshots:
                raise ServiceError("too_large", f"save_snapshot: document {d.name!r} keeps {len(d.snapshots)} "
                                                f"snapshots (the limit); delete one first")
            with self._lock:
                self._serial += 1
                serial = self._serial
            d.snapshots.pop(name, None)
            d.snapshots[name] = (d.canvas.copy(), d.viewport, serial)
            return {"document": d.name, "snapshot": name, "nodes": len(d.canvas.nodes),
                    "bindings": len(d.canvas.bindings), "snapshots": len(d.snapshots)}

    def _t_restore_snapshot(self, document: str, name: str, by: str = "agent") -> Dict[str, Any]:
        from spatialobs.canvas.changes import issue_token, sync

        name = self._snapshot_name(name)
        d = self._doc(document)
        with d.lock:
            if name not in d.snapshots:
                raise ServiceError("not_found", f"document {d.name!r} has no snapshot {name!r}; "
                                                f"snapshots: {sorted(d.snapshots)}")
            saved, viewport, _ = d.snapshots[name]
            before = d.canvas.copy()
            viewport_before = d.viewport
            token = issue_token(d.canvas)
            cams = dict(d.canvas.cameras)
            with d.canvas.by(by):
                written = sync(d.canvas, saved)  # one transaction: all of it or nothing
            moved = {p: c for p, c in _cameras(d.canvas).items() if d.canvas.cameras[p] != cams.get(p)}
            d.viewport = viewport
            d.undo.append((before, token, viewport_before))
            del d.undo[:-self.limits.undo_depth]
            d.executor = None  # its aliases may name nodes the snapshot does not have
            self._publish(d, by, True)
            if moved:
                self._camera(d, moved, by)
            out = {"document": d.name, "snapshot": name, "restored": True, "written": written, "undo": len(d.undo),
                   "token": issue_token(d.canvas)}
            if d.canvas.cameras != cams:
                out["viewport"] = _cameras(d.canvas)
            return out

    def _t_list_snapshots(self, document: str) -> Dict[str, Any]:
        d = self._doc(document)
        with d.lock:
            items = sorted(d.snapshots.items(), key=lambda kv: kv[1][2])
            return {"document": d.name, "snapshots": [{"name": k, "nodes": len(c.nodes), "bindings": len(c.bindings)}
                                                      for k, (c, _, _) in items]}

    def _t_delete_snapshot(self, document: str, name: str) -> Dict[str, Any]:
        name = self._snapshot_name(name)
        d = self._doc(document)
        with d.lock:
            if d.snapshots.pop(name, None) is None:
                raise ServiceError("not_found", f"document {d.name!r} has no snapshot {name!r}")
            return {"document": d.name, "snapshot": name, "deleted": True, "snapshots": len(d.snapshots)}

    def _t_render(self, document: str, format: str = "svg", width: int = 1200, viewport: Any = None,
                  page: Optional[str] = None) -> Dict[str, Any]:
        from spatialobs.canvas import observe
        from spatialobs.render import render_png, render_svg

        if width < 100 or width > 8000:
            raise ServiceError("bad_request", f"render: width must be 100..8000 pixels, got {width}")
        d = self._doc(document)
        with d.lock:
            vp = viewport if viewport is not None else (d.viewport if page is None else None)
            obs = observe(d.canvas, vp, page=page, origin=d.origin)
            if format == "svg":
                return {"document": d.name, "format": "svg", "mimeType": "image/svg+xml",
                        "svg": render_svg(d.canvas, obs, width=width, title=d.name)}
            img = render_png(d.canvas, obs, width=width)
        import io

        buf = io.BytesIO()
        img.convert("RGB").save(buf, format="PNG")
        return {"document": d.name, "format": "png", "mimeType": "image/png",
                "data": base64.b64encode(buf.getvalue()).decode("ascii")}

    def _t_save(self, document: str, path: Optional[str] = None, format: Optional[str] = None) -> Dict[str, Any]:
        d = self._doc(document)
        # The document is held only to copy it (copies share the immutable nodes: well under a millisecond);
        # the serialization (tens of milliseconds for thousands of shapes) and the write happen outside, so
        # observes and applies go on meanwhile. Each save takes a ticket with its copy and writes in ticket
        # order, so a later save never lands under an earlier one.
        with d.lock:
            if path is None:
                if d.path is None:
                    raise ServiceError("bad_request", f"save: document {d.name!r} was opened inline; give a path")
                full = self.resolve_path(self._rel(d.path), must_exist=False)
            else:
                full = self.resolve_path(path, must_exist=False)
            fmt = format or (d.format if d.format in _FORMATS else "native")
            if not full.parent.is_dir():
                raise ServiceError("not_found", f"save: folder {self._rel(full.parent)!r} does not exist")
            if full.is_dir():
                raise ServiceError("bad_request", f"save: {self._rel(full)!r} is a folder")
            snapshot = d.canvas.copy()
            adopt = path is None or d.path is None
            ticket = d.saves_taken
            d.saves_taken += 1
        try:
            if fmt == "tldraw":
                data = json.dumps(snapshot.to_tldraw(), ensure_ascii=False)
            elif fmt == "excalidraw":
                data = json.dumps(snapshot.to_excalidraw(), ensure_ascii=False)
            else:
                data = snapshot.to_json()
            raw = data.encode("utf-8")
            with d.save_turn:
                d.save_turn.wait_for(lambda: d.saves_done == ticket)
                _atomic_write(full, raw)
                if adopt:
                    d.path = full
        finally:
            with d.save_turn:
                d.save_turn.wait_for(lambda: d.saves_done == ticket)
                d.saves_done += 1
                d.save_turn.notify_all()
        return {"document": d.name, "path": self._rel(full), "format": fmt, "bytes": len(raw)}

    def _t_reload(self, document: str) -> Dict[str, Any]:
        from spatialobs.canvas import load
        from spatialobs.canvas.changes import sync

        d = self._doc(document)
        with d.lock:
            if d.path is None:
                raise ServiceError("bad_request", f"reload: document {d.name!r} has no file")
            full = self.resolve_path(self._rel(d.path))
            fresh = load(full)
            with d.canvas.by("person"):
                written = sync(d.canvas, fresh)
            d.undo.clear()
            self._publish(d, "person", False)
            return {"document": d.name, "written": written}

    def _t_close(self, document: str) -> Dict[str, Any]:
        d = self._doc(document)
        with d.lock, self._lock:
            self._docs.pop(d.name, None)
        if self.live is not None:
            self.live.closed(d.name)
        return {"document": d.name, "closed": True}

    def _publish(self, d: _Doc, by: str, undoable: bool) -> None:
        """Send the writes just made to a document to its live editors (under the document's lock)."""
        if self.live is not None:
            self.live.publish(d, by=by, undoable=undoable)

    def _camera(self, d: _Doc, cameras: Dict[str, Dict[str, float]], by: str) -> None:
        """Show the person the cameras just set in the document's live editors (under the document's lock)."""
        if self.live is not None and cameras:
            self.live.camera(d, cameras, by=by)

    def _t_screenshot(self, document: str, session: Optional[str] = None, viewport: Any = None) -> Dict[str, Any]:
        d = self._doc(document)
        if self.live is None:
            raise ServiceError("not_found", "screenshot: no live editor can connect to this server (serve over "
                                            "HTTP: spatialobs serve --http HOST:PORT, then open /live/NAME)")
        vp = None
        if viewport is not None:
            from spatialobs.canvas.observe import resolve_viewport

            with d.lock:
                v = resolve_viewport(d.canvas, viewport, d.canvas._resolve_page(None))
            vp = {"x": v.x, "y": v.y, "w": v.w, "h": v.h}
        out = self.live.screenshot(d.name, session=session, viewport=vp)
        return {"document": d.name, "format": "png", **out}

    # ------------------------------------------------------------------ scenarios
    @staticmethod
    def _scenario(config: int) -> Any:
        from spatialobs.canvas.scenarios import remote_team_handoff

        if not 0 <= config <= 9:
            raise ServiceError("bad_request", f"config must be 0..9, got {config}")
        return remote_team_handoff(config)

    def _t_list_scenarios(self) -> Dict[str, Any]:
        from spatialobs.canvas.scenarios.handoff import FAMILIES, PROMPTS

        return {"scenarios": [{"config": k, "family": f, "prompt": PROMPTS[f]} for k, f in enumerate(FAMILIES)]}

    def _t_scenario_open(self, config: int, name: Optional[str] = None) -> Dict[str, Any]:
        s = self._scenario(config)
        doc = _Doc(f"handoff-{config}", s.canvas, None, "native", (float(s.origin[0]), float(s.origin[1])),
                   s.viewport, config)
        self._register(doc, name)
        v = s.viewport
        return {"document": doc.name, "config": config, "family": s.family, "prompt": s.prompt,
                "viewport": {"x": v.x, "y": v.y, "w": v.w, "h": v.h}, "origin": list(doc.origin)}

    def _t_evaluate(self, document: str, config: int) -> Dict[str, Any]:
        from spatialobs.canvas import evaluate

        s = self._scenario(config)
        d = self._doc(document)
        with d.lock:
            out = evaluate(s.canvas, d.canvas, s.task)
        return {"document": d.name, "config": config, "correct_target": out.correct_target,
                "correct_placement": out.correct_placement, "full_success": out.full_success,
                "details": _plain(out.details)}

    def _t_reference_reply(self, document: str, config: int) -> Dict[str, Any]:
        from spatialobs.canvas import observe

        s = self._scenario(config)
        d = self._doc(document)
        with d.lock:
            obs = observe(d.canvas, d.viewport if d.viewport is not None else s.viewport, origin=d.origin)
        return {"document": d.name, "config": config, "prompt": s.prompt, "reply": reference_reply(obs.to_json(), s.prompt)}

    # ------------------------------------------------------------------ screens
    def _index(self, name: Any, create: bool = True) -> _Index:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ServiceError("bad_request", f"index name {name!r} must be 1-64 letters, digits, '_', '-' or '.'")
        with self._lock:
            ix = self._indexes.get(name)
            if ix is None:
                if not create:
                    raise ServiceError("not_found", f"no screen index {name!r}")
                if len(self._indexes) >= self.limits.max_indexes:
                    raise ServiceError("too_large", f"{len(self._indexes)} screen indexes exist (the limit)")
                from spatialobs.screen import ScreenGraph

                g = ScreenGraph()
                ix = self._indexes[name] = _Index(name, g, g.index)
            return ix

    @staticmethod
    def _screen(screen: Any, meta: Optional[Mapping[str, Any]]) -> Any:
        from spatialobs.screen import load_screen

        return load_screen(screen, meta=meta)

    def _t_screen_add(self, index: str, screen: Any, meta: Optional[Mapping[str, Any]] = None,
                      from_state: Optional[int] = None, action: Optional[str] = None) -> Dict[str, Any]:
        if (from_state is None) != (action is None):
            raise ServiceError("bad_request", "screen_add: give from_state and action together (a transition)")
        scr = self._screen(screen, meta)
        ix = self._index(index)
        with ix.lock:
            if ix.graph is None:
                if from_state is not None:
                    raise ServiceError("bad_request", f"index {index!r} was loaded from a file and has no graph")
                m = ix.index.add(scr)
                return {"index": index, "state": m.state, "new_state": m.new_state, "exact": m.exact,
                        "score": m.score}
            g = ix.graph
            hits = g.index.query(scr, k=1)
            before = g.num_states
            out: Dict[str, Any] = {"index": index}
            if from_state is not None:
                t = g.record(from_state, action, scr)
                out.update(state=t.target, new_state=t.state_novel,
                           transition={"from": t.source, "action": t.signature, "to": t.target,
                                       "edge_novel": t.edge_novel, "reward": t.reward, "capture": t.capture})
            else:
                out["state"] = g.observe(scr)
                out["new_state"] = g.num_states > before
            out["score"] = 1.0 if hits and hits[0].score >= 1.0 else (hits[0].score if hits else 0.0)
            return out

    def _t_screen_query(self, index: str, screen: Any, meta: Optional[Mapping[str, Any]] = None,
                        k: int = 10) -> Dict[str, Any]:
        scr = self._screen(screen, meta)
        ix = self._index(index, create=False)
        with ix.lock:
            hits = ix.index.query(scr, k=k)
        canon = getattr(ix.graph, "_canon", None) if ix.graph is not None else None
        return {"index": index, "hits": [{"state": canon.get(h.state, h.state) if canon else h.state,
                                          "observation": h.observation, "score": h.score, "merge": h.above_tau}
                                         for h in hits]}

    def _t_screen_stats(self, index: str) -> Dict[str, Any]:
        ix = self._index(index, create=False)
        with ix.lock:
            out = {"index": index, "screens": ix.index.num_screens, "observations": len(ix.index),
                   "states": ix.index.num_states}
            if ix.graph is not None:
                g = ix.graph
                out.update(states=g.num_states, edges=g.num_edges, transitions=g.num_transitions)
        return out

    def _t_screen_choose(self, index: str, screen: Any, meta: Optional[Mapping[str, Any]] = None,
                         actions: Optional[List[Any]] = None, goal: str = "", prior: str = "uniform",
                         c_p: float = 1.0) -> Dict[str, Any]:
        from spatialobs.screen import PUCT
        from spatialobs.screen.actions import candidate_actions, signatures
        from spatialobs.screen.explore import Walk, choose_action
        from spatialobs.screen.select import resolve_prior

        scr = self._screen(screen, meta)
        if actions is None:
            acts = candidate_actions(scr)
        else:
            if len(actions) > self.limits.max_ops:
                raise ServiceError("too_large", f"screen_choose: {len(actions)} actions; the limit is {self.limits.max_ops}")
            acts = [action_from_json(a, scr, where=f"screen_choose: action {i}") for i, a in enumerate(actions)]
        if not acts:
            raise ServiceError("bad_request", "screen_choose: the screen has no executable actions")
        ix = self._index(index)
        with ix.lock:
            if ix.graph is None:
                raise ServiceError("bad_request", f"index {index!r} was loaded from a file and has no graph")
            g = ix.graph
            state = g.observe(scr)
            # The exploration loop's own choice (spatialobs.screen.explore.choose_action): actions with one
            # signature are one arm, the first of them kept.
            walk = Walk(None, lambda _s: acts, _no_recover, PUCT(c_p), resolve_prior(prior), goal)
            arms, sigs, _, scores, k = choose_action(walk, scr, state, g)
        every = signatures(acts, scr)
        arm_score = dict(zip(sigs, scores))
        choice = every.index(sigs[k])
        return {"index": index, "state": state, "choice": choice, "action": action_json(acts[choice]),
                "signature": sigs[k], "label": arms[k].label, "scores": [float(arm_score[sg]) for sg in every]}

    def _t_screen_save(self, index: str, path: str) -> Dict[str, Any]:
        full = self.resolve_path(path, must_exist=False)
        if not full.parent.is_dir():
            raise ServiceError("not_found", f"screen_save: folder {self._rel(full.parent)!r} does not exist")
        ix = self._index(index, create=False)
        with ix.lock:
            ix.index.save(full)
        return {"index": index, "path": self._rel(full), "observations": len(ix.index)}

    def _t_screen_load(self, index: str, path: str) -> Dict[str, Any]:
        from spatialobs.screen import StateIndex

        full = self.resolve_path(path)
        loaded = StateIndex.load(full)
        if not isinstance(index, str) or not _NAME.match(index):
            raise ServiceError("bad_request", f"index name {index!r} must be 1-64 letters, digits, '_', '-' or '.'")
        with self._lock:
            if index not in self._indexes and len(self._indexes) >= self.limits.max_indexes:
                raise ServiceError("too_large", f"{len(self._indexes)} screen indexes exist (the limit)")
            self._indexes[index] = _Index(index, None, loaded)
        return {"index": index, "observations": len(loaded), "states": loaded.num_states}

    def _t_list_indexes(self) -> Dict[str, Any]:
        with self._lock:
            items = list(self._indexes.values())
        return {"indexes": [{"index": i.name, "observations": len(i.index), "graph": i.graph is not None}
                            for i in items]}

    # ------------------------------------------------------------------ resources
    def resources(self) -> List[Dict[str, str]]:
        """Resources to list: the observation guide and each open document (its native JSON).

        Examples
        --------
        >>> [r["uri"] for r in Service(".").resources()]
        ['spatialobs://guide']
        """
        out = [{"uri": "spatialobs://guide", "name": "guide", "mimeType": "text/plain",
                "description": "How to read an observation"}]
        with self._lock:
            names = sorted(self._docs)
        out += [{"uri": f"spatialobs://documents/{n}", "name": n, "mimeType": "application/json",
                 "description": f"open document {n} (native JSON)"} for n in names]
        return out

    def read_resource(self, uri: str) -> Tuple[str, str]:
        """``(text, mime type)`` of a resource listed by :meth:`resources`."""
        from spatialobs.canvas import GUIDE

        if uri == "spatialobs://guide":
            return GUIDE, "text/plain"
        prefix = "spatialobs://documents/"
        if isinstance(uri, str) and uri.startswith(prefix):
            d = self._doc(uri[len(prefix):])
            with d.lock:
                return d.canvas.to_json(), "application/json"
        raise ServiceError("not_found", f"no resource {uri!r}")


def _cameras(canvas: Any) -> Dict[str, Dict[str, float]]:
    """Page id -> ``{x, y, w, h, zoom}`` of each saved camera (as ``apply`` reports a moved one)."""
    from spatialobs.canvas.editing.editor import document_screen

    sw = document_screen(canvas)[0]
    return {p: {"x": v.x, "y": v.y, "w": v.w, "h": v.h, "zoom": sw / v.w if v.w > 0 else 1.0}
            for p, v in canvas.cameras.items()}


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: temporary file in the folder, fsync, rename, fsync folder.

    The file keeps the permission bits (and, where allowed, the owner and group)
    of the file it replaces; a new file gets 0o666 minus the umask, as ``open``
    would make it (``mkstemp`` would make it 0o600).
    """
    try:
        old: Optional[os.stat_result] = os.stat(path)
    except FileNotFoundError:
        old = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            # an existing file's copy starts private and gets its mode before any data is in it
            fd = os.open(tmp, flags, 0o600 if old is not None else 0o666)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - 100 random names taken
        raise ServiceError("conflict", f"save: cannot create a temporary file beside {path.name!r}")
    try:
        if old is not None:
            if hasattr(os, "fchown"):
                try:
                    os.fchown(fd, old.st_uid, old.st_gid)
                except OSError:  # not ours to give away: the saver keeps it
                    pass
            if os.chmod in os.supports_fd:
                os.chmod(fd, stat.S_IMODE(old.st_mode) & 0o777)
        with os.fdopen(fd, "wb") as f:
            fd = -1
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _build_tool(d: _Def) -> ToolSpec:
    """A tool's spec from its definition and its handler ``Service._t_<method>``: the one source of its schema.

    The schema's arguments are the handler's parameters (a definition that
    names another, or misses one, is an error here, at import); those without
    a default are required; a default value is the schema's ``default``; a
    None default on a string, object or array argument (no enum) makes null
    mean "left out" (``"null"`` joins its type).
    """
    method = d.method or d.name
    params = {n: p for n, p in inspect.signature(getattr(Service, "_t_" + method)).parameters.items() if n != "self"}
    if set(params) != set(d.args):
        raise RuntimeError(f"tool {d.name}: the schema's arguments {sorted(d.args)} are not the parameters of "
                           f"Service._t_{method} {sorted(params)}")
    props: Dict[str, Any] = {}
    required: List[str] = []
    for name, arg in d.args.items():
        prop = copy.deepcopy(arg)
        default = params[name].default
        types = _types(prop)
        if default is inspect.Parameter.empty:
            required.append(name)
        elif default is None:
            if set(types) <= _NULLABLE_TYPES and "enum" not in prop:
                prop["type"] = types + ["null"]
                prop["description"] = (prop.get("description", "") + "; null: the same as leaving it out").lstrip("; ")
        else:
            prop["default"] = default
        props[name] = prop
    return ToolSpec(d.name, d.description, _schema(props, required), d.family, method)


#: Every tool, in listing order: description and JSON input schema (made by :func:`_build_tool`).
TOOLS: Tuple[ToolSpec, ...] = tuple(_build_tool(d) for d in _DEFS)
_BY_NAME = {t.name: t for t in TOOLS}
