"""Sphinx configuration of the spatialobs documentation site.

Build it from the repository's root (the README's command)::

    pip install ".[docs]" && python -m sphinx -W --keep-going -n -b html docs docs/_build/html

The pages are Markdown (MyST); the API reference is generated from the package's
numpy-style docstrings (autodoc + numpydoc). ``-n`` (nitpicky) makes every
unresolved cross-reference a warning and ``-W`` every warning an error.
"""

from __future__ import annotations

import spatialobs

project = "spatialobs"
author = "spatialobs developers"
copyright = "spatialobs developers"
release = spatialobs.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
# Pictures are part of the pages; the results documents are generated files kept as they are written.
suppress_warnings: list = []

# MyST: GitHub-style heading anchors (the same links work on GitHub and on the site), ``~~~`` fences,
# $-free text (tables of prices and shell variables are not math).
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence", "deflist"]

# autodoc: the members named in each module's ``__all__``, in source order, signatures with type hints.
autodoc_default_options = {"members": True, "undoc-members": True, "member-order": "bysource",
                           "show-inheritance": False}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autoclass_content = "class"

# numpydoc: sections rendered from the docstrings, no autosummary tables of every member
# (autodoc lists them), types as written (not cross-referenced: they name numpy and stdlib types).
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set = set()

# Cross-references to other projects cannot be resolved here (no inventory is fetched at build
# time: the build runs without network); they are named, not linked. Every reference into this
# package must resolve.
nitpicky = True
nitpick_ignore_regex = [
    ("py:.*", r"(numpy|np|PIL|pandas|pyarrow|ray|starlette|uvicorn|mcp|jeepney|playwright|faiss|anyio)(\..*)?"),
    ("py:.*", r"(typing|collections|collections\.abc|pathlib|os|io|json|sqlite3|threading|concurrent\.futures|"
              r"asyncio|argparse|dataclasses|enum|re|types|datetime|subprocess|socket|contextlib|fractions|random|"
              r"abc|html|mcp_types)(\..*)?"),
    # Private names (a part starting with ``_``): named by docstrings and signatures, documented by design nowhere.
    ("py:.*", r"(.*\.)?_[A-Za-z0-9]\w*(\..*)?"),
    ("py:class", r"builtins\..*"),
    # Returned by layout_mermaid but not in its module's ``__all__``: not documented on its own.
    ("py:class", r"spatialobs\.canvas\.editing\.mermaid\.Layout"),
]
# Names the docstrings mention that the reference does not document on their own: instance
# attributes set in ``__init__`` and module constants outside ``__all__``. Listed one by one, so a
# reference to anything else that does not resolve still fails the build.
nitpick_ignore = [
    ("py:attr", "Canvas.cameras"), ("py:attr", "Canvas.selection"), ("py:attr", "ties"),
    ("py:attr", "settle_timeout"), ("py:attr", "Driver.timeout"), ("py:attr", "Driver.faults"),
    ("py:meth", "WebDriver.recover"), ("py:func", "node_to_record"), ("py:func", "several_machines"),
    ("py:data", "STRAIGHT_KERNEL"), ("py:data", "ARC_KERNEL"), ("py:data", "LABEL_KERNEL"),
    ("py:data", "DRAW_KERNEL"), ("py:data", "STROKE_KERNEL"), ("py:data", "TEXT_KERNEL"), ("py:data", "MAX_ZOOM"), ("py:data", "DEFAULT_LIMITS"),
    ("py:data", "MESSAGE_CHARS"), ("py:data", "MAX_SEARCH"), ("py:data", "MAX_SIDE"),
    ("py:data", "spatialobs.screen.limits.DEFAULT_LIMITS"), ("py:data", "spatialobs.serve.TOOLS"),
]

html_theme = "alabaster"
html_title = "spatialobs"
html_static_path: list = []

# The API reference: one generated page per public module (docs/_apigen.py), listed by api/index.md.
import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

_sys.path.insert(0, str(_Path(__file__).parent))
import _apigen  # noqa: E402

_apigen.write_pages(_Path(__file__).parent / "api")



def _import_path(path: str) -> object:
    """The object a dotted path names when imported (``spatialobs.canvas.place.place``), or None."""
    import importlib

    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _documented_by_identity(domain) -> dict:  # type: ignore[no-untyped-def]
    """Documented full names keyed by the id of the object each names (not for plain values, which repeat)."""
    found: dict = {}
    for name in domain.objects:
        obj = _import_path(name)
        if obj is not None and not isinstance(obj, (str, bytes, int, float, bool, tuple, frozenset)):
            found.setdefault(id(obj), name)
    return found


_BY_IDENTITY: dict = {}


def _resolve_by_suffix(app, env, node, contnode):  # type: ignore[no-untyped-def]
    """Resolve a Python reference that names an object by another path than the one it is documented under.

    Docstrings name things as their module sees them (``Canvas.update``, ``KEPT_FOR``,
    ``explore_ray``) or by an import path other than the documented one
    (``spatialobs.canvas.place.place``); the reference documents each object once. A
    reference left unresolved by Sphinx is matched first against the documented objects
    whose full name ends with it (the one nearest the referring module wins), then by
    importing it and finding the documented name of the same object. A reference that
    stays ambiguous or matches nothing is left for nitpicky mode to report.
    """
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode

    target = node["reftarget"].lstrip("~.")
    domain = env.get_domain("py")
    # a re-exported object is also registered under its defining module's path (aliased): not a second target
    # and a :func: reference names a function, not a method of the same name
    kinds = set(domain.objtypes_for_role(node["reftype"]) or ())
    matches = [name for name, entry in domain.objects.items()
               if (name == target or name.endswith("." + target)) and not entry.aliased
               and (not kinds or entry.objtype in kinds)]
    context = ".".join(p for p in (node.get("py:module"), node.get("py:class")) if p)

    def shared(name: str) -> int:
        a, b = name.split("."), context.split(".")
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    chosen = None
    if matches:
        best = max(shared(m) for m in matches)
        nearest = [m for m in matches if shared(m) == best]
        if len(nearest) == 1:
            chosen = nearest[0]
    elif target.startswith("spatialobs."):
        if not _BY_IDENTITY:
            _BY_IDENTITY.update(_documented_by_identity(domain))
        obj = _import_path(target)
        chosen = _BY_IDENTITY.get(id(obj)) if obj is not None else None
    if chosen is None:
        return None
    entry = domain.objects[chosen]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, chosen)


def _module_titles_as_rubrics(app, what, name, obj, options, lines):  # type: ignore[no-untyped-def]
    """Render a module docstring's section titles (``Examples`` over dashes) as rubrics.

    numpydoc does this for functions and classes; a module docstring's titles would
    otherwise become sections whose names (``examples``) repeat from page to page.
    """
    if what != "module":
        return
    for i in range(len(lines) - 1):
        title, rule = lines[i], lines[i + 1]
        if title.strip() and not title.startswith(" ") and len(rule) >= 3 and set(rule) <= {"-", "="}:
            lines[i], lines[i + 1] = f".. rubric:: {title.strip()}", ""


def _builtin_return_type(app, what, name, obj, options, signature, return_annotation):  # type: ignore[no-untyped-def]
    """Name a return annotation of the built-in ``type`` in full (``Node.type`` would otherwise be a candidate)."""
    if return_annotation == "type":
        return signature, "builtins.type"
    return None


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("missing-reference", _resolve_by_suffix)
    app.connect("autodoc-process-signature", _builtin_return_type)
    app.connect("autodoc-process-docstring", _module_titles_as_rubrics)
