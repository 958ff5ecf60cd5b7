"""File formats: tldraw ``.tldr`` and store snapshots, Excalidraw scenes, the native JSON form.

Each format module reads a document into a :class:`~spatialobs.canvas.Canvas` and writes one
back; :mod:`.io` detects the format of a file or mapping.

Examples
--------
>>> from spatialobs.canvas.formats.io import detect_format
>>> detect_format({"type": "excalidraw", "elements": []})
'excalidraw'
"""
