"""The package imports downward only: no two of its modules import each other, through any chain and at any
level (a function's own import counts); the canvas document layer never imports a file format, the editing
layer or the observation."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

import pytest

import spatialobs
import spatialobs.canvas.document as document
from spatialobs import SpatialObsError
from spatialobs.canvas import Canvas, Node
from spatialobs.canvas.document import model

ABOVE = ("spatialobs.canvas.formats", "spatialobs.canvas.editing", "spatialobs.canvas.scenarios",
         "spatialobs.canvas.observe", "spatialobs.serve", "spatialobs.screen")


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def _module_graph() -> Dict[str, Set[str]]:
    """Each module of the package (a package by its own name) -> the package's modules it imports."""
    root = Path(spatialobs.__file__).parent
    files = {}
    # compiled modules (Cython) are modules too; their own imports are not read (they import numpy and
    # the C API only)
    compiled = {".".join(["spatialobs", *f.relative_to(root).with_suffix("").parts]) for f in root.rglob("*.pyx")}
    for f in root.rglob("*.py"):
        parts = ["spatialobs", *f.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        files[".".join(parts)] = f
    graph: Dict[str, Set[str]] = {}
    for name, f in files.items():
        is_pkg = f.name == "__init__.py"
        deps = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = base[:len(base) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                for a in node.names:
                    full = f"{mod}.{a.name}"
                    deps.add(full if full in files or full in compiled else mod)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_modules_import_each_other():
    graph = _module_graph()
    assert len(graph) > 100 and "spatialobs.canvas.document.arrowparts" in graph["spatialobs.canvas.document.elbow"]
    # an import inside a function counts (arrows loads elbow on first use)
    assert "spatialobs.canvas.document.elbow" in graph["spatialobs.canvas.document.arrows"]
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_circle_of_three():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_document_layer_imports_nothing_above_it():
    files = sorted(Path(document.__file__).parent.glob("*.py"))
    assert len(files) > 10
    up = [(f.name, m) for f in files for m in _imports(f) if m.startswith(ABOVE)]
    assert up == []


def test_the_serialization_methods_go_through_the_formats_floor(monkeypatch):
    c = Canvas()
    c.add(Node("shape:a", "geo", "page:page", "a1", 0, 0, 10, 10))
    assert Canvas.from_json(c.to_json()).nodes.keys() == {"shape:a"}
    assert "records" in c.to_tldraw() and c.to_excalidraw()["type"] == "excalidraw"
    # without the formats floor's table the methods say what is missing instead of failing on a name
    monkeypatch.setattr(model, "CODECS", {})
    with pytest.raises(SpatialObsError, match=r"^Canvas.to_tldraw: no file formats are installed "
                                              r"\(import spatialobs.canvas.formats\)$"):
        c.to_tldraw()
