"""The agent side of the document: ``canvas_ops``, HTML layout, placement, editor state, snapshot.

An agent's reply is parsed by :mod:`.ops` and applied through the document's one write path;
:mod:`.html` turns HTML layout notation into nodes; :mod:`.place` moves objects into a
destination without collisions; :mod:`.editor` keeps selection, tool and camera with the
document; :mod:`.snapshot` summarises it for a prompt.

Examples
--------
>>> from spatialobs.canvas.editing.ops import OP_NAMES
>>> "parse_html" in OP_NAMES and "place" in OP_NAMES
True
"""
