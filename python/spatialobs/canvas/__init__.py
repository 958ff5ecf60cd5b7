"""The canvas document: typed nodes on pages, bindings, page geometry and importers.

Load a tldraw or Excalidraw file (or the native JSON form) with :func:`load`;
read nodes, bindings and derived page geometry from the :class:`Canvas`; change it
through its one write path (:meth:`Canvas.add`, :meth:`Canvas.update`,
:meth:`Canvas.remove`, :meth:`Canvas.batch`); write it back with
:meth:`Canvas.to_tldraw` or :meth:`Canvas.to_json`.

Examples
--------
>>> from spatialobs.canvas import Canvas, Node
>>> c = Canvas()
>>> _ = c.add(Node("shape:a", "geo", "page:page", "a1", 10, 10, 100, 40, text="hello"))
>>> c.page_bounds("shape:a")
(10.0, 10.0, 110.0, 50.0)
"""

from __future__ import annotations

from spatialobs.canvas.io import detect_format, load
from spatialobs.canvas.model import Canvas, PageColumns
from spatialobs.canvas.records import Binding, Diagnostic, Node, Page, Viewport
from spatialobs.canvas.sanitize import normalize_style_key, sanitize_style
from spatialobs.canvas.tldraw import from_tldraw, to_tldraw
from spatialobs.canvas.excalidraw import from_excalidraw, to_excalidraw

__all__ = [
    "Canvas",
    "Node",
    "Binding",
    "Page",
    "Viewport",
    "Diagnostic",
    "PageColumns",
    "load",
    "detect_format",
    "from_tldraw",
    "to_tldraw",
    "from_excalidraw",
    "to_excalidraw",
    "normalize_style_key",
    "sanitize_style",
]

# Agent editing layer: editor state, snapshot, canvas_ops and placement.
from spatialobs.canvas import ops  # noqa: E402
from spatialobs.canvas.editor import Camera, Editor  # noqa: E402
from spatialobs.canvas.ops import Executor, Report, parse_ops  # noqa: E402
from spatialobs.canvas import place  # noqa: E402  (the module; place.place moves objects)
from spatialobs.canvas.place import PlacementError  # noqa: E402
from spatialobs.canvas.snapshot import snapshot, snapshot_json  # noqa: E402

__all__ += ["ops", "Editor", "Camera", "Executor", "Report", "parse_ops", "place", "PlacementError",
            "snapshot", "snapshot_json"]

# observation, baseline context, evaluation and scenarios (DESIGN §4, §6)
from spatialobs.canvas.observe import GUIDE, Observation, observe  # noqa: E402
from spatialobs.canvas.baseline import baseline_context  # noqa: E402
from spatialobs.canvas.evaluate import Outcome, Relation, Task, evaluate  # noqa: E402
from spatialobs.canvas import scenarios  # noqa: E402

__all__ += ["observe", "Observation", "GUIDE", "baseline_context", "evaluate", "Outcome", "Task", "Relation", "scenarios"]
