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

from spatialobs.canvas.formats.io import detect_format, load
from spatialobs.canvas.document.model import Canvas, PageColumns
from spatialobs.canvas.document.records import Binding, Diagnostic, Node, Page, Viewport
from spatialobs.canvas.document.sanitize import normalize_style_key, sanitize_style
from spatialobs.canvas.formats.tldraw import from_tldraw, to_tldraw
from spatialobs.canvas.formats.excalidraw import from_excalidraw, to_excalidraw

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
from spatialobs.canvas.editing import ops  # noqa: E402
from spatialobs.canvas.editing.editor import Camera, Editor  # noqa: E402
from spatialobs.canvas.editing.ops import Executor, Report, parse_ops  # noqa: E402
from spatialobs.canvas.editing import place  # noqa: E402  (the module; place.place moves objects)
from spatialobs.canvas.editing.place import PlacementError  # noqa: E402
from spatialobs.canvas.editing.snapshot import snapshot, snapshot_json  # noqa: E402
from spatialobs.canvas.editing import arrange  # noqa: E402  (align, distribute, group, ungroup, duplicate ...)
from spatialobs.canvas.editing.mermaid import build_mermaid, parse_mermaid  # noqa: E402

__all__ += ["arrange", "build_mermaid", "parse_mermaid"]
__all__ += ["ops", "Editor", "Camera", "Executor", "Report", "parse_ops", "place", "PlacementError",
            "snapshot", "snapshot_json"]

# observation, baseline context, evaluation and scenarios (DESIGN §4, §6)
from spatialobs.canvas.observe import GUIDE, Observation, observe  # noqa: E402
from spatialobs.canvas.baseline import baseline_context  # noqa: E402
from spatialobs.canvas.scenarios.evaluate import Outcome, Relation, Task, evaluate  # noqa: E402
from spatialobs.canvas import scenarios  # noqa: E402

__all__ += ["observe", "Observation", "GUIDE", "baseline_context", "evaluate", "Outcome", "Task", "Relation", "scenarios"]

# resource limits of documents and replies (issue 18)
from spatialobs.canvas.limits import CanvasLimits  # noqa: E402

__all__ += ["CanvasLimits"]

# The modules named in the public contract keep their import paths (``import
# spatialobs.canvas.ops``) although they live in the subpackages above.
import sys as _sys  # noqa: E402

for _name, _module in (("ops", ops), ("place", place)):
    _sys.modules.setdefault(f"{__name__}.{_name}", _module)
del _sys, _name, _module
