# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Screen element -> feature columns, compiled (the loop featurize runs per screen).

``element_columns(elements, mask)`` returns what :func:`spatialobs.screen.featurize`
hands to the core: the ``(n, 4)`` float64 bounds and the normalized role and
text of every element. The pure-Python twin is
``spatialobs.screen.features._element_columns_py``; tests compare the two.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport int32_t
from libc.stdlib cimport free, malloc, qsort

import numpy as np

from spatialobs.screen.features import MAX_TEXT, _VOLATILE, _utf8_safe

# Normalized strings by (raw string, mask): roles and texts repeat across the
# screens of an app. Cleared when it reaches _CACHE_MAX entries, so it stays
# bounded without the bookkeeping of an LRU.
cdef dict _cache_plain = {}
cdef dict _cache_masked = {}
cdef Py_ssize_t _CACHE_MAX = 1 << 16
cdef Py_ssize_t _CACHED_CHARS = 256


cdef Py_ssize_t _MAX_TEXT = MAX_TEXT


cdef inline bint _is_space(unsigned char c) noexcept:
    # str.split()'s whitespace among ASCII: \t \n \v \f \r, the separators 0x1c-0x1f, space
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


cdef inline bint _is_digit(unsigned char c) noexcept:
    return 48 <= c <= 57


cdef str _normalize_ascii(str text, bint mask):
    # normalize_text in one pass over the bytes of an ASCII string: lower case and
    # single spaces, then each match of _VOLATILE (digits, and separator-digits
    # groups after them) replaced by "#", then the first MAX_TEXT characters.
    cdef bytes raw = text.encode("ascii")
    cdef const unsigned char* src = <const unsigned char*>PyBytes_AS_STRING(raw)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(raw), i, j, m = 0, k = 0
    cdef unsigned char c
    cdef bint gap = False
    cdef unsigned char* buf = <unsigned char*>malloc(n + 1)
    if buf == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            c = src[i]
            if _is_space(c):
                gap = m > 0
                continue
            if gap:
                buf[m] = 32
                m += 1
                gap = False
            if 65 <= c <= 90:
                c += 32
            buf[m] = c
            m += 1
        if mask:
            i = 0
            while i < m:
                c = buf[i]
                if not _is_digit(c):
                    buf[k] = c
                    k += 1
                    i += 1
                    continue
                j = i + 1
                while j < m and _is_digit(buf[j]):
                    j += 1
                while j + 1 < m and (buf[j] == 46 or buf[j] == 44 or buf[j] == 58 or buf[j] == 47) \
                        and _is_digit(buf[j + 1]):
                    j += 2
                    while j < m and _is_digit(buf[j]):
                        j += 1
                buf[k] = 35
                k += 1
                i = j
            m = k
        if m > _MAX_TEXT:
            m = _MAX_TEXT
        return (<char*>buf)[:m].decode("ascii")
    finally:
        free(buf)


def normalize(str text, bint mask):
    """What featurize makes of one role or text (``_utf8_safe(normalize_text(...))``), uncached."""
    return _normalize(text, mask)


cdef str _normalize(str text, bint mask):
    if text.isascii():
        return _normalize_ascii(text, mask)
    cdef str s = " ".join(text.lower().split())
    if mask:
        s = _VOLATILE.sub("#", s)
    return _utf8_safe(s[:MAX_TEXT])


cdef str _normalized(str text, bint mask):
    cdef dict cache = _cache_masked if mask else _cache_plain
    cdef object hit
    if len(text) > _CACHED_CHARS:
        return _normalize(text, mask)
    hit = cache.get(text)
    if hit is not None:
        return <str>hit
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    s = _normalize(text, mask)
    cache[text] = s
    return s


def element_columns(list elements, bint mask):
    """``(bounds, roles, texts)`` of a screen's elements (see the module docstring)."""
    cdef Py_ssize_t n = len(elements), i
    out = np.empty((n, 4), dtype=np.float64)
    cdef double[:, ::1] b = out
    cdef list roles = [None] * n
    cdef list texts = [None] * n
    cdef tuple box
    cdef object e, t
    for i in range(n):
        e = elements[i]
        box = e.bounds
        b[i, 0] = <double>box[0]
        b[i, 1] = <double>box[1]
        b[i, 2] = <double>box[2]
        b[i, 3] = <double>box[3]
        roles[i] = _normalized(<str?>e.role, False)
        t = e.text
        texts[i] = _normalized(<str?>t, mask) if t else ""
    return out, roles, texts


cdef struct _Key:
    int32_t row
    double cx
    Py_ssize_t i


cdef int _key_cmp(const void* a, const void* b) noexcept nogil:
    cdef const _Key* x = <const _Key*>a
    cdef const _Key* y = <const _Key*>b
    if x.row != y.row:
        return -1 if x.row < y.row else 1
    if x.cx != y.cx:
        return -1 if x.cx < y.cx else 1
    return -1 if x.i < y.i else (1 if x.i > y.i else 0)


def reading_text(list texts, const double[:, ::1] bounds, const int32_t[::1] rows):
    """The non-empty texts in reading order (row, then center x, then index), joined by spaces."""
    cdef Py_ssize_t n = len(texts), i, m = 0
    if bounds.shape[0] != n or rows.shape[0] != n:
        raise ValueError("texts, bounds and rows must have the same length")
    cdef _Key* keys = <_Key*>malloc(max(n, 1) * sizeof(_Key))
    if keys == NULL:
        raise MemoryError()
    cdef list parts
    try:
        for i in range(n):
            if texts[i]:
                keys[m].row = rows[i]
                keys[m].cx = (bounds[i, 0] + bounds[i, 2]) * 0.5
                keys[m].i = i
                m += 1
        qsort(keys, m, sizeof(_Key), _key_cmp)
        parts = [texts[keys[i].i] for i in range(m)]
    finally:
        free(keys)
    return " ".join(parts)


def cache_clear():
    """Empty the normalization caches."""
    _cache_plain.clear()
    _cache_masked.clear()


def cache_size():
    """Entries in the normalization caches (plain, masked)."""
    return len(_cache_plain), len(_cache_masked)
