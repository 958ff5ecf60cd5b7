"""Editor state of a canvas: selection, active tool, camera and the agent's state.

The state is kept with the document, in ``canvas.meta["editor"]`` as plain JSON
values, so it is saved by :meth:`Canvas.to_json`, restored by
:meth:`Canvas.from_json` and copied by :meth:`Canvas.copy`. Every write replaces
that dict with a new one (copy on write), so a copied canvas never shares editor
state with its original. Selection and camera are the document's own
(:attr:`Canvas.selection`, :attr:`Canvas.cameras`); :class:`Editor` only checks
and converts them.

Examples
--------
>>> from spatialobs.canvas import Canvas, Node
>>> c = Canvas()
>>> _ = c.add(Node("shape:a", "geo", "page:page", w=10, h=10))
>>> ed = Editor(c)
>>> ed.select(["shape:a"])
('shape:a',)
>>> ed.set_camera(0, 0, 10).zoom        # clamped to 4
4.0
>>> ed.tool
'select'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError, OutOfRangeError
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.document.records import Viewport

__all__ = ["Editor", "Camera", "MIN_ZOOM", "MAX_ZOOM", "ARTBOARD_TYPES", "AGENT_STATUSES", "document_screen",
           "fit_camera"]

#: Camera zoom limits (tldraw's defaults).
MIN_ZOOM = 0.15
MAX_ZOOM = 4.0
#: Node types that count as artboards (a tldraw frame is one).
ARTBOARD_TYPES = frozenset({"frame", "artboard"})
#: Values of the agent's ``status``.
AGENT_STATUSES = ("idle", "thinking", "applying", "done", "error")
#: Screen size used to turn a zoom into a viewport when the document saved none (*ours*).
DEFAULT_SCREEN = (1280.0, 720.0)
_META_KEY = "editor"
_MAX_PROMPTS = 100


@dataclass(frozen=True)
class Camera:
    """A page camera: the viewport's upper-left corner in page units and the zoom.

    Examples
    --------
    >>> Camera(0, 0, 2.0).viewport((1280, 720))
    Viewport(x=0.0, y=0.0, w=640.0, h=360.0)
    """

    x: float
    y: float
    zoom: float

    def viewport(self, screen: Sequence[float] = DEFAULT_SCREEN) -> Viewport:
        """The viewport this camera shows on a screen of ``(width, height)`` pixels."""
        return Viewport(float(self.x), float(self.y), float(screen[0]) / self.zoom, float(screen[1]) / self.zoom)


def _default_state() -> Dict[str, Any]:
    return {
        "tool": "select",
        "screen": list(DEFAULT_SCREEN),
        "agent": {"active": False, "status": "idle", "artboards": [], "prompts": []},
    }


class Editor:
    """Editor state attached to one :class:`~spatialobs.canvas.Canvas`.

    Several ``Editor`` objects on the same canvas see the same state. Writes
    validate their input and raise :class:`~spatialobs.InvalidInputError` (or
    :class:`~spatialobs.OutOfRangeError` for an unknown id or page).

    Parameters
    ----------
    canvas : Canvas

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> ed = Editor(Canvas())
    >>> ed.set_tool("hand")
    'hand'
    >>> ed.add_prompt("make a landing page")
    >>> ed.agent["prompts"]
    ['make a landing page']
    """

    __slots__ = ("canvas", "_live")

    def __init__(self, canvas: Canvas) -> None:
        if not isinstance(canvas, Canvas):
            raise InvalidInputError(f"Editor needs a Canvas, got {type(canvas).__name__}")
        self.canvas = canvas
        self._live: Tuple[int, int] = (-1, -1)  # (canvas removals, list length) when every working artboard was alive

    # ------------------------------------------------------------------ storage
    def _state(self) -> Dict[str, Any]:
        st = self.canvas.meta.get(_META_KEY)
        base = _default_state()
        if isinstance(st, dict):
            base.update({k: v for k, v in st.items() if k in base})
            agent = dict(_default_state()["agent"])
            if isinstance(st.get("agent"), dict):
                agent.update(st["agent"])
            base["agent"] = agent
        return base

    def _write(self, **changes: Any) -> None:
        st = self._state()
        st.update(changes)
        self.canvas.meta = {**self.canvas.meta, _META_KEY: st}

    def _write_agent(self, **changes: Any) -> None:
        agent = dict(self._state()["agent"])
        agent.update(changes)
        self._write(agent=agent)

    # ------------------------------------------------------------------ selection
    def _page(self, page: Optional[str]) -> str:
        return self.canvas._resolve_page(page)

    @property
    def selection(self) -> Tuple[str, ...]:
        """Selected node ids on the current page (only existing nodes)."""
        return self.canvas.selected()

    def select(self, ids: Iterable[str], page: Optional[str] = None) -> Tuple[str, ...]:
        """Replace the selection on a page (default: the current page).

        Raises
        ------
        OutOfRangeError
            An id is not a node, or the node is on another page.
        """
        pid = self._page(page)
        if isinstance(ids, str):
            raise InvalidInputError("select: ids must be a list of node ids, not one string")
        out: List[str] = []
        for i in ids:
            if not isinstance(i, str) or i not in self.canvas.nodes:
                raise OutOfRangeError(f"select: no node with id {i!r}")
            if self.canvas.page_of(i) != pid:
                raise OutOfRangeError(f"select: node {i!r} is not on page {pid!r}")
            if i not in out:
                out.append(i)
        self.canvas.selection = {**self.canvas.selection, pid: tuple(out)}
        return tuple(out)

    # ------------------------------------------------------------------ tool
    @property
    def tool(self) -> str:
        """The active tool (``"select"``, ``"hand"``, ``"draw"``, ``"frame"``, ...)."""
        return str(self._state()["tool"])

    def set_tool(self, tool: str) -> str:
        """Make ``tool`` the active tool (any non-empty name)."""
        if not isinstance(tool, str) or not tool.strip():
            raise InvalidInputError(f"set_tool: tool must be a non-empty string, got {tool!r}")
        self._write(tool=tool.strip())
        return tool.strip()

    # ------------------------------------------------------------------ camera
    @property
    def screen(self) -> Tuple[float, float]:
        """Screen size in pixels that turns a zoom into a viewport."""
        s = self._state()["screen"]
        return (float(s[0]), float(s[1]))

    def set_screen(self, width: float, height: float) -> None:
        """Set the screen size in pixels (both > 0); the saved viewports are unchanged."""
        try:
            w, h = float(width), float(height)
        except (TypeError, ValueError):
            raise InvalidInputError(f"set_screen: width and height must be numbers, got {width!r}, {height!r}") from None
        if not (w > 0 and h > 0) or w == float("inf") or h == float("inf"):
            raise InvalidInputError(f"set_screen: width and height must be finite and > 0, got {width!r}, {height!r}")
        self._write(screen=[w, h])

    def camera(self, page: Optional[str] = None) -> Camera:
        """The camera of a page; zoom 1 at the origin when the document saved none."""
        vp = self.canvas.cameras.get(self._page(page))
        if vp is None or vp.w <= 0:
            return Camera(0.0, 0.0, 1.0)
        return Camera(vp.x, vp.y, self.screen[0] / vp.w)

    def set_camera(self, x: float, y: float, zoom: float = 1.0, page: Optional[str] = None) -> Camera:
        """Move the camera of a page; ``zoom`` is clamped to [0.15, 4].

        The camera is saved in the document as the viewport it shows
        (:attr:`Canvas.cameras`).
        """
        vals = []
        for name, v in (("x", x), ("y", y), ("zoom", zoom)):
            try:
                f = float(v)
            except (TypeError, ValueError):
                raise InvalidInputError(f"set_camera: {name} must be a number, got {v!r}") from None
            if f != f or f in (float("inf"), float("-inf")):
                raise InvalidInputError(f"set_camera: {name} must be finite, got {v!r}")
            vals.append(f)
        if vals[2] <= 0:
            raise InvalidInputError(f"set_camera: zoom must be > 0, got {zoom!r}")
        cam = Camera(vals[0], vals[1], min(MAX_ZOOM, max(MIN_ZOOM, vals[2])))
        pid = self._page(page)
        self.canvas.cameras = {**self.canvas.cameras, pid: cam.viewport(self.screen)}
        return cam

    # ------------------------------------------------------------------ agent
    @property
    def agent(self) -> Dict[str, Any]:
        """The agent's state: ``active``, ``status``, ``artboards`` (ids) and ``prompts``."""
        a = self._state()["agent"]
        return {"active": bool(a["active"]), "status": str(a["status"]),
                "artboards": list(a["artboards"]), "prompts": list(a["prompts"])}

    def set_agent(self, *, active: Optional[bool] = None, status: Optional[str] = None) -> None:
        """Set whether the agent is working and its status (one of :data:`AGENT_STATUSES`)."""
        changes: Dict[str, Any] = {}
        if active is not None:
            if not isinstance(active, bool):
                raise InvalidInputError(f"set_agent: active must be a bool, got {active!r}")
            changes["active"] = active
        if status is not None:
            if status not in AGENT_STATUSES:
                raise InvalidInputError(f"set_agent: status must be one of {AGENT_STATUSES}, got {status!r}")
            changes["status"] = status
        self._write_agent(**changes)

    def add_prompt(self, prompt: str) -> None:
        """Append a prompt to the history (the last 100 are kept)."""
        if not isinstance(prompt, str):
            raise InvalidInputError(f"add_prompt: prompt must be a string, got {type(prompt).__name__}")
        prompts = (self._state()["agent"]["prompts"] + [prompt])[-_MAX_PROMPTS:]
        self._write_agent(prompts=prompts)

    def working_artboards(self) -> List[str]:
        """Ids of the artboards the agent works on that still exist, oldest first."""
        return [a for a in self._state()["agent"]["artboards"] if a in self.canvas.nodes]

    def add_working_artboard(self, node_id: str) -> None:
        """Record that the agent works on an artboard (moved to the end if already there)."""
        if node_id not in self.canvas.nodes:
            raise OutOfRangeError(f"add_working_artboard: no node with id {node_id!r}")
        prev = self._state()["agent"]["artboards"]
        removals = self.canvas._removals
        if self._live == (removals, len(prev)) and node_id not in prev:
            boards = prev + [node_id]  # all of prev were alive when last checked and no node was removed since
        else:  # this ran once per created artboard over all of them: 10^4 artboards took minutes
            nodes = self.canvas._nodes
            boards = [a for a in prev if a != node_id and a in nodes] + [node_id]
        self._live = (removals, len(boards))
        self._write_agent(artboards=boards)

    def artboards(self, page: Optional[str] = None) -> List[str]:
        """Ids of the artboards (frames) of a page in paint order."""
        pid = self._page(page)
        nodes = self.canvas.nodes
        return [i for i in self.canvas.paint_order(pid) if nodes[i].type in ARTBOARD_TYPES]


def document_screen(canvas: Canvas) -> Tuple[float, float]:
    """The screen size (pixels) that turns the document's saved viewports into zooms.

    A tldraw document's own (its instance record's ``screenBounds``, else 1280 × 720),
    an Excalidraw scene's (``appState.width`` / ``height``, else 1280 × 720), else the
    editor state's :attr:`Editor.screen`; the writers turn a viewport back into a
    zoom with the same size.

    Examples
    --------
    >>> document_screen(Canvas())
    (1280.0, 720.0)
    """
    src = canvas._source
    fmt = getattr(src, "format", None)
    if fmt == "tldraw":
        w, h = src.screen
        return float(w), float(h)
    if fmt == "excalidraw":
        app = src.top.get("appState") if isinstance(getattr(src, "top", None), dict) else None
        app = app if isinstance(app, dict) else {}
        w, h = app.get("width"), app.get("height")
        return (float(w) if isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0 else DEFAULT_SCREEN[0],
                float(h) if isinstance(h, (int, float)) and not isinstance(h, bool) and h > 0 else DEFAULT_SCREEN[1])
    return Editor(canvas).screen


def fit_camera(canvas: Canvas, page: str, *, box: Optional[Tuple[float, float, float, float]] = None,
               corner: Optional[Tuple[Optional[float], Optional[float]]] = None,
               center: Optional[Tuple[float, float]] = None, zoom: Optional[float] = None,
               pan: Tuple[float, float] = (0.0, 0.0)) -> Tuple[Viewport, Optional[str]]:
    """The viewport a camera move gives on a page, in page units, and a note when the zoom was clamped.

    ``box`` (x0, y0, x1, y1): the whole box shown, centered, at the largest zoom
    that fits it (tldraw's ``zoomToBounds`` without its inset); ``center`` with
    ``zoom``: that point in the middle; ``corner`` (either coordinate may be None:
    kept) with ``zoom``: the viewport's upper-left corner; ``zoom`` alone zooms about
    the current view's center; ``pan`` moves the result. The zoom is clamped to
    [:data:`MIN_ZOOM`, :data:`MAX_ZOOM`]; the viewport has the screen's aspect
    (:func:`document_screen`).

    Examples
    --------
    >>> vp, note = fit_camera(Canvas(), "page:page", box=(0, 0, 640, 720))
    >>> vp, note
    (Viewport(x=-320.0, y=0.0, w=1280.0, h=720.0), None)
    """
    sw, sh = document_screen(canvas)
    cur = canvas.cameras.get(page) or Viewport(0.0, 0.0, sw, sh)
    cur_zoom = sw / cur.w if cur.w > 0 else 1.0
    note = None
    if zoom is not None and not zoom > 0:
        raise InvalidInputError(f"zoom must be > 0, got {zoom!r}")
    if box is not None:
        bw, bh = box[2] - box[0], box[3] - box[1]
        if bw < 0 or bh < 0:
            raise InvalidInputError(f"the box to show has a negative size ({bw!r} × {bh!r})")
        fits = [v for v in ((sw / bw) if bw > 0 else None, (sh / bh) if bh > 0 else None) if v is not None]
        z = min(fits) if fits else (zoom or cur_zoom)
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    elif center is not None:
        z = zoom or cur_zoom
        cx, cy = center
    else:
        z = zoom or cur_zoom
        cx = cy = None  # type: ignore[assignment]
    clamped = min(MAX_ZOOM, max(MIN_ZOOM, z))
    if clamped != z:
        note = f"{page}: zoom {z:g} clamped to {clamped:g}"
    z = clamped
    w, h = sw / z, sh / z
    if cx is not None and cy is not None:
        x, y = cx - w / 2, cy - h / 2
    elif corner is not None and (corner[0] is not None or corner[1] is not None):
        x = corner[0] if corner[0] is not None else cur.x
        y = corner[1] if corner[1] is not None else cur.y
    else:  # zoom about the current view's center
        x, y = cur.x + cur.w / 2 - w / 2, cur.y + cur.h / 2 - h / 2
    x, y = x + pan[0], y + pan[1]
    for v in (x, y, w, h):
        if not math.isfinite(v):
            raise InvalidInputError(f"the viewport is not finite ({x!r}, {y!r}, {w!r}, {h!r})")
    return Viewport(float(x), float(y), float(w), float(h)), note
