"""Fractional index keys (the base-62 scheme tldraw and Excalidraw use to order siblings).

A key is an integer part (a head letter giving its length, then base-62 digits)
optionally followed by a fraction. Keys compare as plain strings.
"""

from __future__ import annotations

from typing import List, Optional

__all__ = ["DIGITS", "is_valid_key", "key_after", "key_between", "key_sequence"]

DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_POS = {c: i for i, c in enumerate(DIGITS)}


def _int_len(head: str) -> Optional[int]:
    if "a" <= head <= "z":
        return ord(head) - ord("a") + 2
    if "A" <= head <= "Z":
        return ord("Z") - ord(head) + 2
    return None


def is_valid_key(key: str) -> bool:
    """Whether ``key`` is a well-formed fractional index key.

    Examples
    --------
    >>> is_valid_key("a1"), is_valid_key("a1V"), is_valid_key("a10"), is_valid_key("")
    (True, True, False, False)
    """
    if not isinstance(key, str) or not key:
        return False
    n = _int_len(key[0])
    if n is None or len(key) < n or any(c not in _POS for c in key[1:]):
        return False
    return not (len(key) > n and key.endswith("0"))


def _increment_int(ip: str) -> Optional[str]:
    head, digits = ip[0], list(ip[1:])
    i = len(digits) - 1
    while i >= 0:
        d = _POS[digits[i]] + 1
        if d < 62:
            digits[i] = DIGITS[d]
            return head + "".join(digits)
        digits[i] = "0"
        i -= 1
    if head == "Z":
        return "a0"
    if head == "z":
        return None
    nh = chr(ord(head) + 1)
    if nh > "Z" and head < "a":
        nh = "a"
    if nh >= "a":
        digits.append("0")
    else:
        digits.pop()
    return nh + "".join(digits)


def _decrement_int(ip: str) -> Optional[str]:
    head, digits = ip[0], list(ip[1:])
    i = len(digits) - 1
    while i >= 0:
        d = _POS[digits[i]] - 1
        if d >= 0:
            digits[i] = DIGITS[d]
            return head + "".join(digits)
        digits[i] = "z"
        i -= 1
    if head == "a":
        return "Z" + "z"
    if head == "A":
        return None
    nh = chr(ord(head) - 1)
    if nh >= "a":
        digits.pop()
    else:
        digits.append("z")
    return nh + "".join(digits)


def _midpoint(a: str, b: Optional[str]) -> str:
    """A fraction strictly between fractions ``a`` and ``b`` (``None`` = 1)."""
    if b is not None:
        n = 0
        while n < len(b) and (a[n] if n < len(a) else "0") == b[n]:
            n += 1
        if n > 0:
            return b[:n] + _midpoint(a[n:], b[n:])
    da = _POS[a[0]] if a else 0
    db = _POS[b[0]] if b else 62
    if db - da > 1:
        return DIGITS[(da + db) // 2]
    if b and len(b) > 1:
        return b[:1]
    return DIGITS[da] + _midpoint(a[1:], None)


def key_between(a: Optional[str], b: Optional[str]) -> str:
    """A valid key strictly between ``a`` and ``b`` (either may be ``None`` for open ends).

    Invalid inputs are tolerated: the result then only keeps the string order.

    Examples
    --------
    >>> key_between(None, None)
    'a0'
    >>> key_between("a0", None), key_between("a0", "a1")
    ('a1', 'a0V')
    """
    if a is not None and b is not None and not a < b:
        raise ValueError(f"index keys out of order: {a!r} >= {b!r}")
    if a is None and b is None:
        return "a0"
    if a is not None and not is_valid_key(a):
        cand = a + "V"
        return cand if b is None or cand < b else a + "0V"
    if b is not None and not is_valid_key(b):
        if a is None:
            return "a0" if "a0" < b else b[:-1] if b[:-1] and b[:-1] > "" else "A" * 2
        return key_between(a, None) if key_between(a, None) < b else a + "V"
    if a is None:
        ib = b[: _int_len(b[0])]  # type: ignore[index]
        fb = b[len(ib):]  # type: ignore[index]
        if ib == "A" + "0" * 26:
            return ib + _midpoint("", fb)
        if ib < b:  # type: ignore[operator]
            return ib
        dec = _decrement_int(ib)
        return dec if dec is not None else ib + _midpoint("", fb)
    ia = a[: _int_len(a[0])]
    fa = a[len(ia):]
    if b is None:
        inc = _increment_int(ia)
        return inc if inc is not None else ia + _midpoint(fa, None)
    ib = b[: _int_len(b[0])]
    fb = b[len(ib):]
    if ia == ib:
        return ia + _midpoint(fa, fb)
    inc = _increment_int(ia)
    if inc is not None and inc < b:
        return inc
    return ia + _midpoint(fa, None)


def key_after(a: Optional[str]) -> str:
    """A key greater than ``a`` (``None``: the first key)."""
    return key_between(a, None)


def key_sequence(n: int, after: Optional[str] = None) -> List[str]:
    """``n`` increasing keys after ``after``.

    Examples
    --------
    >>> key_sequence(3)
    ['a0', 'a1', 'a2']
    """
    out: List[str] = []
    k = after
    for _ in range(n):
        k = key_after(k)
        out.append(k)
    return out
