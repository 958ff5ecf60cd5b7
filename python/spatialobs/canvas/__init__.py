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

import importlib
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, Any, List, Optional

from spatialobs.canvas.formats.io import detect_format, load
from spatialobs.canvas.document.model import Canvas, PageColumns
from spatialobs.canvas.document.records import Binding, Diagnostic, Node, Page, Viewport
from spatialobs.canvas.document.sanitize import normalize_style_key, sanitize_style

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

# The editing layer, the baseline, the evaluator, the scenarios and each file format load on
# first use (PEP 562): a command that only loads and observes a file does not pay for the
# op parser, Mermaid, placement, the scenarios or the other format. ``from spatialobs.canvas import X`` and
# ``spatialobs.canvas.X`` work for every name below as before.
_LAZY = {
    # agent editing layer: editor state, snapshot, canvas_ops and placement
    "ops": ("spatialobs.canvas.editing.ops", None),
    "Editor": ("spatialobs.canvas.editing.editor", "Editor"),
    "Camera": ("spatialobs.canvas.editing.editor", "Camera"),
    "Executor": ("spatialobs.canvas.editing.ops", "Executor"),
    "Report": ("spatialobs.canvas.editing.ops", "Report"),
    "parse_ops": ("spatialobs.canvas.editing.ops", "parse_ops"),
    "place": ("spatialobs.canvas.editing.place", None),  # the module; place.place moves objects
    "PlacementError": ("spatialobs.canvas.editing.place", "PlacementError"),
    "snapshot": ("spatialobs.canvas.editing.snapshot", "snapshot"),
    "snapshot_json": ("spatialobs.canvas.editing.snapshot", "snapshot_json"),
    "arrange": ("spatialobs.canvas.editing.arrange", None),  # align, distribute, group, ungroup, duplicate ...
    "build_mermaid": ("spatialobs.canvas.editing.mermaid", "build_mermaid"),
    "parse_mermaid": ("spatialobs.canvas.editing.mermaid", "parse_mermaid"),
    # baseline context, evaluation and scenarios (DESIGN §4, §6)
    "baseline_context": ("spatialobs.canvas.baseline", "baseline_context"),
    "evaluate": ("spatialobs.canvas.scenarios.evaluate", "evaluate"),
    "Outcome": ("spatialobs.canvas.scenarios.evaluate", "Outcome"),
    "Task": ("spatialobs.canvas.scenarios.evaluate", "Task"),
    "Relation": ("spatialobs.canvas.scenarios.evaluate", "Relation"),
    "scenarios": ("spatialobs.canvas.scenarios", None),
    # the importers and exporters: a file needs its own format's module only
    "from_tldraw": ("spatialobs.canvas.formats.tldraw", "from_tldraw"),
    "to_tldraw": ("spatialobs.canvas.formats.tldraw", "to_tldraw"),
    "from_excalidraw": ("spatialobs.canvas.formats.excalidraw", "from_excalidraw"),
    "to_excalidraw": ("spatialobs.canvas.formats.excalidraw", "to_excalidraw"),
}

__all__ += [name for name in _LAZY if name not in __all__]

# The observation (DESIGN §4) loads with the package: its function shares its name with its
# module, and importing the module would otherwise leave the module under that name.
from spatialobs.canvas.observe import GUIDE, Observation, observe  # noqa: E402

__all__ += ["observe", "Observation", "GUIDE"]

# resource limits of documents and replies (issue 18)
from spatialobs.canvas.limits import CanvasLimits  # noqa: E402

__all__ += ["CanvasLimits"]

if TYPE_CHECKING:
    from spatialobs.canvas import scenarios
    from spatialobs.canvas.baseline import baseline_context
    from spatialobs.canvas.editing import arrange, ops, place
    from spatialobs.canvas.editing.editor import Camera, Editor
    from spatialobs.canvas.editing.mermaid import build_mermaid, parse_mermaid
    from spatialobs.canvas.editing.ops import Executor, Report, parse_ops
    from spatialobs.canvas.editing.place import PlacementError
    from spatialobs.canvas.editing.snapshot import snapshot, snapshot_json
    from spatialobs.canvas.formats.excalidraw import from_excalidraw, to_excalidraw
    from spatialobs.canvas.formats.tldraw import from_tldraw, to_tldraw
    from spatialobs.canvas.scenarios.evaluate import Outcome, Relation, Task, evaluate


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where[0])
    value = module if where[1] is None else getattr(module, where[1])
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Alias:
    """Imports the public contract's module paths ``spatialobs.canvas.ops`` and ``.place`` as
    the modules they name (which live in :mod:`spatialobs.canvas.editing`), when first asked."""

    paths = {f"{__name__}.ops": "spatialobs.canvas.editing.ops",
             f"{__name__}.place": "spatialobs.canvas.editing.place"}

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> Optional[ModuleSpec]:
        real = cls.paths.get(name)
        return None if real is None else ModuleSpec(name, cls(real))  # type: ignore[arg-type]

    def __init__(self, real: str) -> None:
        self.real = real
        self.own: Optional[ModuleSpec] = None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.real)
        self.own = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the alias's spec on the module: give it back its own
        module.__spec__ = self.own


if not any(isinstance(f, type) and f.__name__ == "_Alias" and getattr(f, "paths", None) == _Alias.paths
           for f in sys.meta_path):
    sys.meta_path.append(_Alias)
