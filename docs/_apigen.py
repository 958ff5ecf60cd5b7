"""The API reference's pages, one per public module, written at build time from the package itself.

Every public module of the installed package (no ``_``-prefixed part; the command line is
documented on its own page) gets ``api/<module>.md`` with an ``automodule``. A name that
several modules export (a package re-exporting its submodules' names) is documented once,
under the shortest module path that exports it, and left out of the others, so every
cross-reference has exactly one target.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Dict, List, Tuple

SKIP = {"spatialobs.cli", "spatialobs.__main__"}


def public_modules() -> List[str]:
    """Every public module of the package, sorted (the package itself first)."""
    import spatialobs

    names = [m.name for m in pkgutil.walk_packages(spatialobs.__path__, "spatialobs.")
             if not any(part.startswith("_") for part in m.name.split(".")) and m.name not in SKIP]
    return ["spatialobs"] + sorted(names)


def exported(module: object) -> List[str]:
    """The names a module documents: its ``__all__``, else what it defines itself."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return [n for n in names if not isinstance(getattr(module, n, None), type(importlib))]
    return [n for n, v in vars(module).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__  # type: ignore[attr-defined]
            and callable(v)]


def write_pages(out: Path) -> List[str]:
    """Write one page per module into ``out`` (replacing what a previous build wrote); return the module names."""
    modules = public_modules()
    home: Dict[int, Tuple[int, str]] = {}
    objects: Dict[str, Dict[str, object]] = {}
    for name in modules:
        module = importlib.import_module(name)
        # names a module serves lazily (a module ``__getattr__``) are documented where they are defined
        objects[name] = {n: vars(module)[n] for n in exported(module) if n in vars(module)}
        for obj in objects[name].values():
            if isinstance(obj, (str, int, float, bool, tuple, frozenset, dict, list, type(None))):
                continue  # constants: equal values are not the same thing, keep each where it is
            if any(f"{name}.{n}" in modules for n, o in objects[name].items() if o is obj):
                continue  # ``spatialobs.canvas.observe``, the function, lives on the module page of that name
            key = (name.count("."), name)
            if id(obj) not in home or key < home[id(obj)]:
                home[id(obj)] = key
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("spatialobs*.md"):
        old.unlink()
    for name in modules:
        elsewhere = sorted(n for n, obj in objects[name].items() if id(obj) in home and home[id(obj)][1] != name)
        lines = [f"# `{name}`", "", "```{eval-rst}", f".. automodule:: {name}"]
        if elsewhere:
            lines.append(f"   :exclude-members: {', '.join(elsewhere)}")
        lines += ["```", ""]
        text = "\n".join(lines)
        page = out / f"{name}.md"
        page.write_text(text, encoding="utf-8")
    return modules
