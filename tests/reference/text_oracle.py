"""Line breaking written from its definition (CSS ``white-space: pre-wrap`` with
``overflow-wrap: break-word``, as tldraw's text measurement uses it), quadratic and plain."""

from __future__ import annotations

from typing import Callable, List

SPACES = (" ", "\t", "\u3000")
LAYOUT_UNIT = 1.0 / 64.0


def _cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x3FFFF


def opportunities(para: str) -> List[int]:
    """Positions a line may break before: after a run of spaces, after a hyphen
    between letters or digits, and beside a CJK ideograph; never before a space."""
    out = []
    for i in range(1, len(para)):
        a, b = para[i - 1], para[i]
        if b in SPACES:
            continue
        hyphen = a == "-" and i >= 2 and para[i - 2].isalnum() and b.isalnum()
        if a in SPACES or hyphen or _cjk(a) or _cjk(b):
            out.append(i)
    return out


def naive_lines(text: str, width_of: Callable[[str], float], max_width: float, break_words: bool = True) -> List[str]:
    """Each line is the longest run from the last break to a break opportunity whose
    text without trailing spaces is at most ``max_width`` wide (within a layout unit);
    a run's width is that of the run and the character after it, less that character
    (so the kerning between them counts, as in the browser);
    when not even the first word fits, the word is cut after the most characters that
    fit (at least one; a character alone keeps the spaces after it), or left whole
    without ``break_words``."""
    limit = max_width + LAYOUT_UNIT
    lines: List[str] = []
    for para in text.split("\n"):
        n = len(para)

        def width(a: int, b: int) -> float:
            return width_of(para[a:b + 1]) - width_of(para[b]) if b < n else width_of(para[a:b])

        def visible_end(a: int, b: int) -> int:
            while b > a and para[b - 1] in SPACES:
                b -= 1
            return b

        ends = opportunities(para) + [n]
        start = 0
        while True:
            after = [e for e in ends if e > start]
            if not after:  # only at the end of an empty paragraph
                lines.append(para[start:])
                break
            fitting = [e for e in after if width(start, visible_end(start, e)) <= limit]
            if fitting:
                e = max(fitting)
            elif not break_words:
                e = after[0]
            else:
                word_end = visible_end(start, after[0])
                k = max([k for k in range(start + 1, word_end + 1) if width(start, k) <= limit], default=start + 1)
                e = k if k < word_end else after[0]  # a lone character stays, spaces hang after it
            lines.append(para[start:e])
            if e >= n:
                break
            start = e
    return lines


def kerning_pairs(entry: dict) -> dict:
    """Every kerning pair of a font table entry, spelled out in table order (a later row wins):
    ``{left + right: em}`` from the ``kern`` field's left classes, right classes and rows of
    ``[right class, value in font units, ...]``."""
    upm = float(entry["upm"])
    k = entry.get("kern") or {}
    out = {}
    for lchars, row in zip(k.get("left", []), k.get("m", [])):
        for j in range(0, len(row), 2):
            for a in lchars:
                for b in k["right"][row[j]]:
                    out[a + b] = row[j + 1] / upm
    return out
