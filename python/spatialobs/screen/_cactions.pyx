# cython: language_level=3
"""Action -> signature, compiled (the loop every exploration step runs over its candidate actions).

``signatures(actions, screen, grid)`` returns the signature of each action, as
:func:`spatialobs.screen.actions.signature` gives it one at a time. The
pure-Python twin is ``spatialobs.screen.actions._signatures_py``; tests compare
the two.
"""

from libc.math cimport floor, isfinite

from spatialobs._errors import InvalidInputError
from spatialobs.screen.actions import Action, cell_of
from spatialobs.screen.features import MAX_TEXT
from spatialobs.screen.model import Screen

# Escaped normalized fields by raw string: roles and texts repeat from step to
# step. Cleared when it reaches _CACHE_MAX entries, so it stays bounded.
cdef dict _fields = {}
cdef Py_ssize_t _CACHE_MAX = 1 << 16
cdef Py_ssize_t _CACHED_CHARS = 256
# Above this the grid does not convert to a double exactly; the twin takes over.
cdef long _GRID_MAX = 1 << 53


cdef inline object _esc(object s):
    return s.replace("\\", "\\\\").replace("|", "\\|")


cdef object _field(object text):
    # _esc(normalize_text(text))
    cdef object hit
    if len(text) > _CACHED_CHARS:
        return _esc(" ".join(text.lower().split())[:MAX_TEXT])
    hit = _fields.get(text)
    if hit is not None:
        return hit
    if len(_fields) >= _CACHE_MAX:
        _fields.clear()
    s = _esc(" ".join(text.lower().split())[:MAX_TEXT])
    _fields[text] = s
    return s


cdef inline long _clamp(double v, long grid):
    # min(max(v, 0), grid - 1) of an integral v, compared as doubles so that nothing overflows
    if v < 0:
        return 0
    if v > grid - 1:
        return grid - 1
    return <long>v


def signatures(list actions, screen, grid):
    """Signatures of ``actions`` on ``screen`` (see the module docstring)."""
    if not isinstance(screen, Screen):
        raise InvalidInputError(f"signature expects a Screen, got {type(screen).__name__}")
    if isinstance(grid, bool) or not isinstance(grid, int) or grid < 1:
        raise InvalidInputError(f"grid must be a positive integer, got {grid!r}")
    if grid > _GRID_MAX:
        from spatialobs.screen.actions import _signatures_py
        return _signatures_py(actions, screen, grid)
    cdef long g = grid
    cdef double w = screen.width, h = screen.height, x0, y0, x1, y1, cx, cy
    cdef list out = []
    cdef object a, t, b, op, value, head
    cdef long col, row
    for a in actions:
        if not isinstance(a, Action):
            raise InvalidInputError(f"signature expects an Action, got {type(a).__name__}")
        op = a.op
        value = a.value
        if op == "key":
            out.append("key|||" + _esc(value or ""))
            continue
        t = a.target
        b = t.bounds
        x0, y0, x1, y1 = b[0], b[1], b[2], b[3]
        cx = floor(((x0 + x1) * 0.5) * <double>g / w)
        cy = floor(((y0 + y1) * 0.5) * <double>g / h)
        if isfinite(cx) and isfinite(cy):
            col = _clamp(cx, g)
            row = _clamp(cy, g)
        else:  # the twin's error (math.floor of inf or nan)
            col, row = cell_of(b, w, h, g)
        head = f"{op}|{_field(t.role)}|{_field(t.text or '')}|{col},{row}"
        if op == "type":
            head = head + "|" + _esc(value or "")
        out.append(head)
    return out
