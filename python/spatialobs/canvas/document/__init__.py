"""The document model and its geometry: records, the one write path, derived page geometry.

Modules: :mod:`.records` (pages, nodes, bindings, viewports), :mod:`.sanitize` (the one
sanitizer), :mod:`.model` (:class:`~spatialobs.canvas.Canvas`), :mod:`.derive` (page
geometry in bulk), :mod:`.shapes` (local geometry of point-based shapes and text),
:mod:`.fractional` (sibling index keys) and :mod:`.richtext` (tldraw rich text).

Examples
--------
>>> from spatialobs.canvas.document.model import Canvas
>>> from spatialobs.canvas.document.records import Node
>>> c = Canvas()
>>> _ = c.add(Node("shape:a", "geo", "page:page", "a1", 0, 0, 10, 5))
>>> c.page_bounds("shape:a")
(0.0, 0.0, 10.0, 5.0)
"""
