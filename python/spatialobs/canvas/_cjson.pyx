# cython: language_level=3
"""Plain data -> compact JSON text, compiled (every observation's ``to_json``).

``dumps_compact(value)`` returns exactly ``json.dumps(value, ensure_ascii=False,
separators=(",", ":"), allow_nan=False)`` for plain data: exact dicts with
string keys, lists, strings, ints, finite floats, True, False and None, nested
at most ``MAX_DEPTH`` containers deep. For anything else (subclasses, tuples,
other keys, NaN or infinity, deeper nesting) it returns None and the caller
uses ``json.dumps``, which also gives its errors. Numbers are written by
``int.__repr__`` and ``float.__repr__`` and strings escaped as ``json`` escapes
them, so the bytes are the same; tests compare the two.
"""

from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_READ_CHAR
from libc.math cimport isfinite

#: Deepest container nesting written here (the top-level value is at depth 0).
MAX_DEPTH = 100

cdef int _MAX_DEPTH = MAX_DEPTH
cdef str _HEX = "0123456789abcdef"
# ',"key":' by key: records repeat a few keys thousands of times. Bounded: keys
# past _KEYS_MAX are escaped each time.
cdef dict _keys = {}
cdef Py_ssize_t _KEYS_MAX = 4096


class _Declined(Exception):
    pass


cdef str _escape(str s):
    # as json's ensure_ascii=False escaping: '"', '\\' and the controls below U+0020
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), i
    cdef Py_UCS4 c
    for i in range(n):
        c = PyUnicode_READ_CHAR(s, i)
        if c < 0x20 or c == 0x22 or c == 0x5c:
            break
    else:
        return s
    cdef list out = []
    for i in range(n):
        c = PyUnicode_READ_CHAR(s, i)
        if c == 0x22:
            out.append('\\"')
        elif c == 0x5c:
            out.append('\\\\')
        elif c == 0x0a:
            out.append('\\n')
        elif c == 0x0d:
            out.append('\\r')
        elif c == 0x09:
            out.append('\\t')
        elif c == 0x08:
            out.append('\\b')
        elif c == 0x0c:
            out.append('\\f')
        elif c < 0x20:
            out.append('\\u00' + _HEX[<int>c >> 4] + _HEX[<int>c & 15])
        else:
            out.append(chr(c))
    return "".join(out)


cdef str _key(str k):
    cdef object frag = _keys.get(k)
    if frag is None:
        frag = ',"' + _escape(k) + '":'
        if len(_keys) < _KEYS_MAX:
            _keys[k] = frag
    return <str>frag


cdef int _write(list out, object o, int depth) except -1:
    cdef type t = type(o)
    cdef bint first
    cdef object k, v
    cdef str frag
    if t is str:
        out.append('"')
        out.append(_escape(<str>o))
        out.append('"')
    elif t is int:
        out.append(int.__repr__(o))
    elif t is float:
        if not isfinite(<double>o):
            raise _Declined()
        out.append(float.__repr__(o))
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif o is None:
        out.append("null")
    elif t is dict or t is list:
        if depth >= _MAX_DEPTH:
            raise _Declined()
        if t is dict:
            if not o:
                out.append("{}")
                return 0
            first = True
            for k, v in (<dict>o).items():
                if type(k) is not str:
                    raise _Declined()
                frag = _key(<str>k)
                out.append("{" + frag[1:] if first else frag)
                first = False
                _write(out, v, depth + 1)
            out.append("}")
        else:
            if not o:
                out.append("[]")
                return 0
            out.append("[")
            first = True
            for v in <list>o:
                if not first:
                    out.append(",")
                first = False
                _write(out, v, depth + 1)
            out.append("]")
    else:
        raise _Declined()
    return 0


def dumps_compact(value):
    """Compact JSON of plain data, or None (see the module docstring)."""
    cdef list out = []
    try:
        _write(out, value, 0)
    except _Declined:
        return None
    return "".join(out)
