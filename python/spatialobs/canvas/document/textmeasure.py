"""Text measured as tldraw 5.x measures it, from a table of font metrics.

tldraw sizes text by laying out HTML in the browser (``editor.textMeasure``) with
its own fonts. This module does the same layout with the fonts' advance widths
and kerning pairs, read from ``tldraw_fonts.json`` (generated from tldraw's woff2
files by ``tools/fontmetrics/make_tldraw_metrics.py``; no font is loaded here):

* font size ``16 × FONT_SIZES[size]`` for text shapes, ``16 × LABEL_FONT_SIZES[size]``
  for geo and note labels; line height ``round(font size × 1.35)`` pixels; scale
  applied after layout;
* paragraphs (lines of the plain text) each start a line; an empty one is one line
  high; ``white-space: pre-wrap`` with ``overflow-wrap: break-word``: a line breaks
  after a run of spaces (the spaces hang past the edge), after a hyphen between
  letters or digits and beside CJK ideographs; a word that does not fit moves to the
  next line, and one longer than the line is broken between characters;
* characters missing from tldraw's fonts take the width of the fonts Chromium falls
  back to on Debian (Liberation Sans, DejaVu Sans, Noto Color Emoji); characters no
  installed font has (CJK where no CJK font is installed, as for tldraw's reference
  output) are drawn as the primary font's ``.notdef`` box; combining marks and
  format characters take no width.

Widths are exact for the IBM Plex fonts up to kerning of pairs outside Latin;
the draw font (Shantell Sans) cycles glyph alternates whose widths differ by about
1 %, so its lines are within about 1 % of the browser's.

The sums over a string and the line layout run in the compiled core
(``spatialobs._core.TextFont``, one per font, built from its table when first
used) while :data:`TEXT_KERNEL` is true; the Python code here is the oracle twin
(``TEXT_KERNEL = False``), and the two give bit-identical widths.
"""

from __future__ import annotations

import json
import math
import functools
import operator
import os
import sys
import unicodedata
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from spatialobs._errors import InvalidInputError

__all__ = [
    "BASE_FONT_SIZE",
    "FONT_SIZES",
    "LABEL_FONT_SIZES",
    "LINE_HEIGHT",
    "LABEL_PADDING",
    "fallback_advances",
    "line_height_px",
    "text_width",
    "layout_lines",
    "measure_html",
    "text_shape_size",
    "geo_label_size",
    "geo_grow_y",
    "note_label",
    "refit_text_geometry",
    "fit_new_text_geometry",
]

#: tldraw's theme font size; style sizes are multiples of it.
BASE_FONT_SIZE = 16.0
#: Font size of a text shape per size style, as a multiple of :data:`BASE_FONT_SIZE`.
FONT_SIZES = {"s": 1.125, "m": 1.5, "l": 2.25, "xl": 2.75}
#: Font size of a geo or note label per size style, as a multiple of :data:`BASE_FONT_SIZE`.
LABEL_FONT_SIZES = {"s": 1.125, "m": 1.375, "l": 1.625, "xl": 2.0}
#: Line height as a multiple of the font size (rounded to whole pixels by tldraw).
LINE_HEIGHT = 1.35
#: Padding around a geo or note label on each side.
LABEL_PADDING = 16.0
#: Smallest width of a geo label's text box per size style.
GEO_LABEL_MIN_WIDTHS = {"s": 12.0, "m": 14.0, "l": 16.0, "xl": 20.0}
#: tldraw's stroke width per size style (a geo label may widen by this).
_STROKE = {"s": 2.0, "m": 3.5, "l": 5.0, "xl": 10.0}
#: Note size before scale.
NOTE_SIZE = 200.0
#: tldraw's smallest text shape width.
_TEXT_MIN_WIDTH = 16.0
_FONT_KEYS = ("draw", "sans", "serif", "mono")
# Chromium lays text out in 1/64 pixel units
_LAYOUT_UNIT = 64.0

#: Measure with the compiled kernel (``spatialobs._core.TextFont``); False: the pure-Python twin.
TEXT_KERNEL = True


class _Font:
    """Advance (em) per character and kerning (em) per 2-character string.

    :attr:`kern` is a :class:`_Kerning`: look pairs up with ``kern[pair]`` (0.0 for a pair
    the font does not kern), not ``kern.get``. Spelling out every pair of a font when it
    loads (72,000 for tldraw's draw font) cost 40 ms, more than a small file's whole
    observation; each pair is now worked out from the table's classes when first met.
    """

    __slots__ = ("adv", "kern", "has_kern", "_entry", "_kernel")

    def __init__(self, entry: dict, fallback: Dict[str, float]) -> None:
        upm = float(entry["upm"])
        adv = _Advances(fallback, entry.get("notdef", 0.6 * upm) / upm)
        _add_advances(adv, entry["adv"], upm)
        self.adv = adv
        self.kern = _Kerning(entry.get("kern") or {}, upm)
        self.has_kern = self.kern.any
        self._entry = entry
        self._kernel: Any = None  # the compiled font, built on first use (False: no compiled core)

    def kernel(self) -> Any:
        """The compiled twin of this font (``spatialobs._core.TextFont``), or None without one."""
        k = self._kernel
        if k is None:
            from spatialobs import _core

            cls = getattr(_core, "TextFont", None)
            if cls is None:
                k = False
            else:
                entry = self._entry
                table = entry.get("kern") or {}
                # sum() of floats is compensated from Python 3.12 on: the kernel sums as this one does
                k = cls(entry["adv"], float(entry["upm"]), list(table.get("left", [])), list(table.get("right", [])),
                        list(table.get("m", [])), bool(self.has_kern), self._resolve, sys.version_info >= (3, 12))
            self._kernel = k
        return k or None

    def _resolve(self, cps: List[int]) -> Tuple[List[float], List[int]]:
        # what the compiled font asks for characters outside its table: this font's advance
        # (fallback fonts, zero-width marks, .notdef) and str.isalnum / str.isspace
        adv = self.adv
        chars = list(map(chr, cps))
        return [adv[c] for c in chars], [int(c.isalnum()) | int(c.isspace()) << 1 for c in chars]


class _Kerning(Dict[str, float]):
    """A font's kerning in em by 2-character string, worked out on first lookup.

    The table holds left-hand classes, right-hand classes and, per left-hand class, a row of
    ``[right class, value in font units, ...]``. A pair's value is the one a spelling-out of
    every row in table order would leave: the last row holding the left character, and in it
    the last entry whose class holds the right character.
    """

    __slots__ = ("any", "_rows_of", "_classes_of", "_m", "_rows", "_upm")

    def __init__(self, table: Mapping[str, Any], upm: float) -> None:
        super().__init__()
        m = list(table.get("m", []))
        rows_of: Dict[str, List[int]] = {}
        for r, lchars in zip(range(len(m)), table.get("left", [])):
            for a in lchars:
                rows_of.setdefault(a, []).append(r)
        classes_of: Dict[str, List[int]] = {}
        for c, rchars in enumerate(table.get("right", [])):
            for b in rchars:
                classes_of.setdefault(b, []).append(c)
        self.any = bool(rows_of) and any(m)
        self._rows_of = rows_of
        self._classes_of = classes_of
        self._m = m
        self._rows: Dict[int, Dict[int, Tuple[int, float]]] = {}
        self._upm = upm

    def _row(self, r: int) -> Dict[int, Tuple[int, float]]:
        # row r as {right class: (its last position in the row, value in em)}
        d = self._rows.get(r)
        if d is None:
            row, upm = self._m[r], self._upm
            d = self._rows[r] = {row[j]: (j, row[j + 1] / upm) for j in range(0, len(row), 2)}
        return d

    def __missing__(self, pair: str) -> float:
        v = 0.0
        classes = self._classes_of.get(pair[1:]) if len(pair) == 2 else None
        if classes:
            for r in reversed(self._rows_of.get(pair[0], ())):
                row = self._row(r)
                hits = [row[c] for c in classes if c in row]
                if hits:
                    v = max(hits)[1]
                    break
        self[pair] = v
        return v


def _add_advances(adv: Dict[str, float], runs: List[list], upm: float) -> None:
    # runs of [first code point, [advance in font units, ...]]: one character per advance
    for first, widths in runs:
        adv.update(zip(map(chr, range(first, first + len(widths))), [w / upm for w in widths]))


class _Advances(Dict[str, float]):
    """A font's advances; a character it lacks takes the fallback fonts' width, or
    none for a combining mark or format character, or else the ``.notdef`` box's."""

    def __init__(self, fallback: Dict[str, float], notdef: float) -> None:
        super().__init__()
        self.fallback = fallback
        self.notdef = notdef

    def __missing__(self, ch: str) -> float:
        w = self.fallback.get(ch)
        if w is None:
            if ch in "\n\r" or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
                w = 0.0
            else:
                w = self.notdef
        self[ch] = w
        return w


_FONTS: Dict[str, _Font] = {}
_TABLE: Optional[dict] = None
_FALLBACK: Dict[str, float] = {}


def _font(font: str) -> _Font:
    f = _FONTS.get(font)
    if f is None:
        global _TABLE
        if font not in _FONT_KEYS:
            font = "draw"  # tldraw's default for an unknown font name
            if font in _FONTS:
                return _FONTS[font]
        if _TABLE is None:
            path = os.path.join(os.path.dirname(__file__), "tldraw_fonts.json")
            with open(path, encoding="utf-8") as fh:
                _TABLE = json.load(fh)
            fb = _TABLE.get("fallback") or {"upm": 1000, "adv": []}
            _add_advances(_FALLBACK, fb["adv"], float(fb["upm"]))
        f = _FONTS[font] = _Font(_TABLE["fonts"][font], _FALLBACK)
    return f


def fallback_advances() -> Dict[str, float]:
    """Advances (em) of the fonts the browser falls back to for characters a font lacks.

    Chromium on Debian: Liberation Sans, DejaVu Sans, Noto Color Emoji (from the
    ``fallback`` entry of the tldraw table, loaded on first use); other tables reuse it.

    Examples
    --------
    >>> round(fallback_advances()["\U0001F600"], 3)  # an emoji: Noto Color Emoji
    1.245
    """
    _font("draw")
    return _FALLBACK


def line_height_px(font_size: float) -> float:
    """One line's height in pixels for a font size: ``round(font size × 1.35)``.

    Examples
    --------
    >>> line_height_px(24.0), line_height_px(36.0)
    (32.0, 49.0)
    """
    return float(math.floor(font_size * LINE_HEIGHT + 0.5))


def _char_advances(f: _Font, text: str) -> Tuple[List[float], List[float]]:
    # each character's advance with the kerning to its right neighbour folded in, and that kerning
    adv = list(map(f.adv.__getitem__, text))
    kern = [0.0] * len(text)
    if f.has_kern and len(text) > 1:
        kg = f.kern.__getitem__
        for i, pair in enumerate(map(operator.add, text, text[1:])):
            k = kg(pair)
            if k:
                adv[i] += k
                kern[i] = k
    return adv, kern


def _line_em(f: _Font, text: str) -> float:
    # the same sum as _char_advances without the list: advances, then kerning
    if TEXT_KERNEL and text:
        k = f._kernel or f.kernel()
        if k is not None:
            return k.line_em(text)
    w = sum(map(f.adv.__getitem__, text))
    if f.has_kern and len(text) > 1:
        w += sum(map(f.kern.__getitem__, map(operator.add, text, text[1:])))
    return w


def _check_text(text: Any) -> None:
    # the compiled kernel and the Python twin take text as a str alone: both raise this
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, got {type(text).__name__}")


def text_width(text: str, font: str = "draw", font_size: float = 24.0) -> float:
    """Width in pixels of one line of text, unwrapped.

    Parameters
    ----------
    text : str
        One line (a newline counts as nothing).
    font : str
        tldraw's font style: ``draw``, ``sans``, ``serif`` or ``mono``.
    font_size : float
        Pixels per em.

    Raises
    ------
    InvalidInputError
        ``text`` is not a ``str`` ("text must be a str, got int").

    Examples
    --------
    >>> round(text_width("Hello", "mono", 20.0), 3)
    60.0
    """
    _check_text(text)
    return _line_em(_font(font), text) * font_size


def _is_space(ch: str) -> bool:
    return ch == " " or ch == "\t" or ch == "\u3000"


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x3FFFF


def _break_before(text: str, i: int) -> bool:
    """Whether a line may break before ``text[i]`` (0 < i < len(text))."""
    a, b = text[i - 1], text[i]
    if _is_space(b):
        return False
    if _is_space(a):
        return True
    if a == "-" and i >= 2 and text[i - 2].isalnum() and b.isalnum():
        return True
    if _is_cjk(a) or _is_cjk(b):
        return True
    return False


#: Break rules the compiled layout knows, by the Python function it replaces (Excalidraw's adds itself).
_BREAK_RULES: Dict[Callable[[str, int], bool], int] = {_break_before: 0}


def _ceil_unit(x: float) -> float:
    return math.ceil(x * _LAYOUT_UNIT - 1e-6) / _LAYOUT_UNIT


def layout_lines(
    text: str, font: Union[str, "_Font"] = "draw", font_size: float = 24.0, max_width: Optional[float] = None,
    break_words: bool = True, breaks: Optional[Callable[[str, int], bool]] = None,
    slack: float = 1.0 / _LAYOUT_UNIT, split_unkerned: bool = False,
) -> List[Tuple[str, float]]:
    """Lines of text as the browser lays them out, with their widths in pixels.

    Parameters
    ----------
    text : str
        Plain text; each ``\\n`` starts a new line.
    font, font_size
        As for :func:`text_width`.
    max_width : float or None
        Line width to wrap at (None: no wrapping).
    break_words : bool
        ``overflow-wrap: break-word``: a word longer than the line is broken between
        characters (False leaves it overflowing).
    breaks : callable, optional
        ``breaks(line, i)``: whether a line may break before ``line[i]``; default the
        browser's rule (after spaces, after a hyphen between letters, beside CJK).
    slack : float
        How far a line may exceed ``max_width`` (the browser's layout unit, 1/64 px).
    split_unkerned : bool
        Break a long word where the sum of its characters' own advances (no kerning)
        reaches the line, as Excalidraw does, rather than where the laid-out word does.

    Returns
    -------
    list of (str, float)
        Each line's text and its width; trailing spaces hang past the edge and are
        not counted in the width.

    Raises
    ------
    InvalidInputError
        ``text`` is not a ``str`` ("text must be a str, got int"), or ``max_width`` is not finite.

    Examples
    --------
    >>> [line for line, _ in layout_lines("aaa bbb", "mono", 10.0, 40.0)]
    ['aaa ', 'bbb']
    >>> [line for line, _ in layout_lines("abcdefgh", "mono", 10.0, 30.0)]
    ['abcde', 'fgh']
    """
    _check_text(text)
    if max_width is not None and not math.isfinite(max_width):
        raise InvalidInputError(f"max_width must be finite, got {max_width!r}")
    f = font if isinstance(font, _Font) else _font(font)
    if TEXT_KERNEL:
        rule = 0 if breaks is None else _BREAK_RULES.get(breaks)
        k = f._kernel or f.kernel()
        if rule is not None and k is not None:
            return k.layout(text, font_size, max_width, break_words, rule, slack, split_unkerned)
    may_break = breaks or _break_before
    out: List[Tuple[str, float]] = []
    for para in text.split("\n"):
        adv, kerns = _char_advances(f, para)
        n = len(para)
        pre = [0.0] * (n + 1)
        acc = 0.0
        for i, a in enumerate(adv):
            acc += a * font_size
            pre[i + 1] = acc
        piece = pre
        if split_unkerned and any(kerns):
            piece = [0.0] * (n + 1)
            acc = 0.0
            for i, (a, k) in enumerate(zip(adv, kerns)):
                acc += (a - k) * font_size
                piece[i + 1] = acc

        def span(a: int, b: int) -> float:
            # width of para[a:b] with the kerning to the character after it: measured
            # against the browser, a line keeps the kerning of its last glyph
            return pre[b] - pre[a]

        def visible(a: int, b: int) -> float:
            while b > a and _is_space(para[b - 1]):
                b -= 1
            return span(a, b)

        if max_width is None or n == 0:
            out.append((para, visible(0, n)))
            continue
        limit = max_width + slack
        # segments end at break opportunities
        cuts = [i for i in range(1, n) if may_break(para, i)] + [n]
        start = 0  # start of the current line
        seg_start = 0
        for cut in cuts:
            end_vis = cut
            while end_vis > seg_start and _is_space(para[end_vis - 1]):
                end_vis -= 1
            if start < seg_start and span(start, end_vis) > limit:
                out.append((para[start:seg_start], visible(start, seg_start)))
                start = seg_start
            if break_words:
                # a word longer than the line: break it between characters
                while end_vis - start > 1 and span(start, end_vis) > limit:
                    j = start + 1
                    while j < end_vis and piece[j + 1] - piece[start] <= limit:
                        j += 1
                    out.append((para[start:j], span(start, j)))
                    start = j
            seg_start = cut
        out.append((para[start:n], visible(start, n)))
    return out


def measure_html(
    text: str, font: str = "draw", font_size: float = 24.0, max_width: Optional[float] = None,
    min_width: Optional[float] = None, break_words: bool = True,
) -> Tuple[float, float, float]:
    """The box ``editor.textMeasure.measureHtml`` gives for plain text.

    The measuring element is ``width: max-content`` bounded by ``max-width`` and
    ``min-width``; its height is the number of laid-out lines × line height.

    Returns
    -------
    (w, h, scroll_w) : tuple of float
        Element width and height, and the widest line (which exceeds ``w`` when a
        word overflows with ``break_words`` false).

    Raises
    ------
    InvalidInputError
        ``text`` is not a ``str`` ("text must be a str, got int").

    Examples
    --------
    >>> measure_html("ab\\ncd", "mono", 10.0)
    (12.0, 28.0, 12.0)
    """
    _check_text(text)
    if TEXT_KERNEL and (max_width is None or math.isfinite(max_width)):
        f = _font(font)
        k = f._kernel or f.kernel()
        r = None if k is None else k.measure(text, font_size, max_width, break_words)
        if r is not None:  # None: a width too large to round (the twin raises as Python does)
            return _html_box(r, font_size, max_width, min_width)
    paras = text.split("\n")
    f = _font(font)
    widths = [_line_em(f, p) * font_size for p in paras]
    natural = _ceil_unit(max(widths, default=0.0))
    w = natural if max_width is None else min(natural, max_width)
    if min_width is not None:
        w = max(w, min_width)
    if max_width is None or natural <= max_width:
        return (w, len(paras) * line_height_px(font_size), w)  # nothing wraps
    lines = layout_lines(text, font, font_size, max_width, break_words)
    widest = _ceil_unit(max((lw for _, lw in lines), default=0.0))
    return (w, len(lines) * line_height_px(font_size), max(w, widest))


def _html_box(r: Tuple[float, int, int, float], font_size: float, max_width: Optional[float],
              min_width: Optional[float]) -> Tuple[float, float, float]:
    # measure_html's box from the kernel's (natural width, paragraphs, laid-out lines, widest line)
    natural, n_paras, n_lines, widest = r
    w = natural if max_width is None else min(natural, max_width)
    if min_width is not None:
        w = max(w, min_width)
    if max_width is None or natural <= max_width:
        return (w, n_paras * line_height_px(font_size), w)
    return (w, n_lines * line_height_px(font_size), max(w, widest))


def text_shape_size(
    text: str, font: str = "draw", size: str = "m", scale: float = 1.0,
    w: Optional[float] = None, auto_size: bool = True,
) -> Tuple[float, float]:
    """Page size of a tldraw text shape (``TextShapeUtil.getGeometry``).

    Auto-size text is its natural width plus one pixel (at least 16); fixed-width
    text wraps at ``max(16, floor(w))`` and is that wide; the height is the line
    count × line height (at least the font size); both are then scaled.

    Raises
    ------
    InvalidInputError
        ``text`` is not a ``str`` ("text must be a str, got int").

    Examples
    --------
    >>> text_shape_size("", "draw", "m")
    (16.0, 32.0)
    >>> text_shape_size("ab", "mono", "s", 2.0)  # 2 × 0.6 em × 18 px, rounded up to 1/64, + 1; × 2
    (45.21875, 48.0)
    """
    _check_text(text)
    return _text_shape_size(text, font, size, float(scale), None if auto_size or w is None else float(w))


@functools.lru_cache(maxsize=4096)  # documents repeat their labels; measuring is pure
def _text_shape_size(text: str, font: str, size: str, scale: float, w: Optional[float]) -> Tuple[float, float]:
    fs = BASE_FONT_SIZE * FONT_SIZES.get(size, FONT_SIZES["m"])
    fixed = None if w is None else max(_TEXT_MIN_WIDTH, math.floor(w))
    tw, th, _ = measure_html(text, font, fs, fixed)
    width = fixed if fixed is not None else max(_TEXT_MIN_WIDTH, tw + 1.0)
    return (width * scale, max(fs, th) * scale)


def geo_label_size(text: str, font: str = "draw", size: str = "m", w: float = 100.0, scale: float = 1.0) -> Tuple[float, float]:
    """Unscaled size of a geo shape's label box, padding included (``measureUnscaledLabelSize``).

    Raises
    ------
    InvalidInputError
        ``text`` is not a ``str`` ("text must be a str, got int").

    Examples
    --------
    >>> geo_label_size("ab", "mono", "s", 100.0)
    (53.609375, 56.0)
    """
    _check_text(text)
    fs = BASE_FONT_SIZE * LABEL_FONT_SIZES.get(size, LABEL_FONT_SIZES["m"])
    min_w = GEO_LABEL_MIN_WIDTHS.get(size, 14.0)
    max_w = max(0.0, math.ceil(min_w + _STROKE.get(size, 3.5)), math.ceil(w / (scale or 1.0) - LABEL_PADDING * 2))
    tw, th, _ = measure_html(text, font, fs, max_w, min_w)
    return (tw + LABEL_PADDING * 2, th + LABEL_PADDING * 2)


def geo_grow_y(
    text: str, font: str = "draw", size: str = "m", w: float = 100.0, h: float = 100.0,
    grow_y: float = 0.0, scale: float = 1.0,
) -> Tuple[float, float]:
    """``(w, growY)`` tldraw gives a geo shape after its label, font or size changed.

    The label grows the shape downwards when it is taller than ``h``, a growth no
    longer needed is dropped, and a label wider than the shape widens it
    (``GeoShapeUtil.onBeforeUpdate``). Values are in page units (scaled).

    Raises
    ------
    InvalidInputError
        ``text`` is not a ``str`` ("text must be a str, got int").

    Examples
    --------
    >>> geo_grow_y("a\\nb\\nc\\nd", "mono", "m", 100.0, 50.0)  # 4 lines × 30 px + 2 × 16 padding − 50
    (100.0, 102.0)
    >>> geo_grow_y("", "mono", "m", 100.0, 50.0, 30.0)
    (100.0, 0.0)
    """
    _check_text(text)
    s = scale or 1.0
    if not text:
        return (w, 0.0)
    lw, lh = geo_label_size(text, font, size, w, s)
    uh, ug = h / s, grow_y / s
    if lh > uh:
        ug = lh - uh
    elif ug > 0:
        ug = 0.0
    return (max(w / s, lw) * s, ug * s)


def note_label(text: str, font: str = "draw", size: str = "m") -> Tuple[float, float]:
    """``(growY, fontSizeAdjustment)`` of a note (unscaled, as tldraw stores them).

    The font shrinks a pixel at a time until the longest word fits the note's
    width (down to 14 px, where words may break); the note grows by what the label
    is taller than the note.

    Raises
    ------
    InvalidInputError
        ``text`` is not a ``str`` ("text must be a str, got int").

    Examples
    --------
    >>> note_label("short")
    (0.0, 1.0)
    """
    _check_text(text)
    fs0 = BASE_FONT_SIZE * LABEL_FONT_SIZES.get(size, LABEL_FONT_SIZES["m"])
    if not text:
        return (0.0, 1.0)
    max_w = NOTE_SIZE - LABEL_PADDING * 2 - 1
    fs = fs0
    lh = NOTE_SIZE
    for it in range(51):
        fs = min(fs0, fs0 - it)
        if fs <= 14:
            lh = measure_html(text, font, fs, max_w)[1] + LABEL_PADDING * 2
            break
        w, h, sw = measure_html(text, font, fs, max_w, break_words=False)
        lh = h + LABEL_PADDING * 2
        if round(sw) == round(w):
            break
    return (max(0.0, lh - NOTE_SIZE), 1.0 if fs == fs0 else fs / fs0)


def _style_of(node: Mapping[str, Any], key: str, default: str) -> str:
    style = node.get("style") or {}
    props = node.get("props") or {}
    v = style.get(key, props.get(key, default))
    return v if isinstance(v, str) else default


def _num_prop(props: Mapping[str, Any], key: str, default: float) -> float:
    v = props.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return default
    return float(v)


def refit_text_geometry(old: Mapping[str, Any], new: Dict[str, Any]) -> None:
    """Re-measure a tldraw text, geo or note node after an edit, as tldraw's
    ``onBeforeUpdate`` does; ``new`` (node fields as a dict) is changed in place.

    * text (``props`` has ``autoSize`` or ``richText``): size re-measured whenever the
      text, font, size, scale or width changed; an auto-size text whose width changed
      moves so that its alignment point stays put (``textAlign`` middle / end), and
      one whose height changed on a style change stays centred vertically;
    * geo (``props`` has ``growY``): when the label, font or size changed, ``growY``
      follows the label (a label taller than ``h`` grows the shape, a growth no longer
      needed is dropped) and a wider label widens it; a first label expands it; a
      resize (``w`` / ``h`` changed, label and style not) makes the new box the shape's
      own size with no ``growY``, grown to the label measured at that size;
    * note: ``growY`` and ``fontSizeAdjustment`` follow the label.

    Nodes of other kinds or from other formats are left alone.

    Examples
    --------
    >>> old = {"type": "text", "x": 0.0, "y": 0.0, "w": 16.0, "h": 32.0, "rotation": 0.0, "text": "",
    ...        "style": {"font": "mono", "size": "m"}, "props": {"autoSize": True, "scale": 1}}
    >>> new = dict(old, text="abcd")
    >>> refit_text_geometry(old, new)
    >>> new["w"], new["h"]  # 4 × 0.6 em × 24 px, rounded up to 1/64, + 1
    (58.609375, 32.0)
    """
    t = new.get("type")
    props = new.get("props")
    if not isinstance(props, Mapping):
        return
    props = new["props"] = dict(props)  # never the old node's mapping
    text = new.get("text") or ""
    old_props = old.get("props") or {}
    font, size = _style_of(new, "font", "draw"), _style_of(new, "size", "m")
    text_changed = text != (old.get("text") or "")
    style_changed = font != _style_of(old, "font", "draw") or size != _style_of(old, "size", "m")
    if t == "text" and ("autoSize" in props or "richText" in props):
        scale = _num_prop(props, "scale", 1.0) or 1.0
        auto = props.get("autoSize", True) is not False
        align = _style_of(new, "textAlign", _style_of(new, "align", "start"))
        if not (text_changed or style_changed or new.get("w") != old.get("w") or props != old_props
                or align != _style_of(old, "textAlign", _style_of(old, "align", "start"))):
            return
        wrap = None if auto else float(new.get("w") or 0.0) / scale
        w, h = text_shape_size(text, font, size, scale, wrap, auto)
        if auto:
            dw, dh = w - float(old.get("w") or 0.0), h - float(old.get("h") or 0.0)
            dx = dw / 2 if align.startswith("middle") else dw if align.startswith("end") else 0.0
            dy = 0.0 if text_changed else dh / 2
            if dx or dy:
                r = float(new.get("rotation") or 0.0)
                c, s = math.cos(r), math.sin(r)
                new["x"] = float(new["x"]) - (dx * c - dy * s)
                new["y"] = float(new["y"]) - (dx * s + dy * c)
            props["w"] = w
        new["w"], new["h"] = w, h
    elif (t == "geo" and "growY" in props and not (text_changed or style_changed)
          and (new.get("w") != old.get("w") or new.get("h") != old.get("h"))):
        # a resize (GeoShapeUtil.onResize): the new box, growth included, becomes the shape's
        # own size with no growY, but never smaller than its label measured at that size
        scale = _num_prop(props, "scale", 1.0) or 1.0
        w, h = float(new.get("w") or 0.0), float(new.get("h") or 0.0)
        props["growY"] = 0.0
        if text:
            lw, lh = geo_label_size(text, font, size, w, scale)
            new["w"], new["h"] = max(w, lw * scale), max(h, lh * scale)
    elif t == "geo" and "growY" in props and (text_changed or style_changed):
        scale = _num_prop(props, "scale", 1.0) or 1.0
        grow = _num_prop(old_props, "growY", 0.0)
        w = float(new.get("w") or 0.0)
        h = max(float(new.get("h") or 0.0) - grow, 0.0)  # the shape's own height, without growth
        if not text:
            props["growY"] = 0.0
            new["h"] = h
            return
        if not (old.get("text") or ""):
            lw, lh = geo_label_size(text, font, size, w, scale)
            uw, uh = max(w / scale, lw), max(h / scale, lh)
            floor = (LABEL_PADDING + 1) * 3
            if w / scale < floor and h / scale < floor:
                uw = uh = max(uw, uh, floor)
            props["growY"] = 0.0
            new["w"], new["h"] = uw * scale, uh * scale
            return
        w2, g2 = geo_grow_y(text, font, size, w, h, grow, scale)
        props["growY"] = g2
        new["w"], new["h"] = w2, h + g2
    elif t == "note" and (text_changed or style_changed):
        scale = _num_prop(props, "scale", 1.0) or 1.0
        g, adj = note_label(text, font, size)
        props["growY"] = g
        if "fontSizeAdjustment" in props:
            props["fontSizeAdjustment"] = adj
        new["h"] = (NOTE_SIZE + g) * scale


def fit_new_text_geometry(new: Dict[str, Any]) -> None:
    """Measure a tldraw text, geo or note node that is being created; ``new`` is changed in place.

    What tldraw computes for a new shape: an auto-size text takes its measured size,
    a fixed-width one keeps its width and takes the wrapped height (``TextShapeUtil``
    measures at render time); a geo shape with a label grows by ``growY`` when the
    label is taller than it (``GeoShapeUtil.onBeforeCreate``, which never widens); a
    note takes ``growY`` and ``fontSizeAdjustment`` from its label. Nodes of other
    kinds, and nodes whose props do not say they are tldraw's (``autoSize`` /
    ``richText`` for text, ``growY`` for geo, ``scale`` for notes), are left alone.

    Examples
    --------
    >>> new = {"type": "text", "x": 0.0, "y": 0.0, "w": 0.0, "h": 0.0, "text": "abcd",
    ...        "style": {"font": "mono", "size": "m"}, "props": {"autoSize": True, "scale": 1}}
    >>> fit_new_text_geometry(new)
    >>> new["w"], new["h"], new["props"]["w"]
    (58.609375, 32.0, 58.609375)
    """
    t = new.get("type")
    props = new.get("props")
    if not isinstance(props, Mapping):
        return
    text = new.get("text") or ""
    font, size = _style_of(new, "font", "draw"), _style_of(new, "size", "m")
    scale = _num_prop(props, "scale", 1.0) or 1.0
    if t == "text" and ("autoSize" in props or "richText" in props):
        props = new["props"] = dict(props)
        auto = props.get("autoSize", True) is not False
        wrap = None if auto else float(new.get("w") or 0.0) / scale
        w, h = text_shape_size(text, font, size, scale, wrap, auto)
        if auto:
            props["w"] = w
        new["w"], new["h"] = w, h
    elif t == "geo" and "growY" in props:
        props = new["props"] = dict(props)
        grow = _num_prop(props, "growY", 0.0)
        h = max(float(new.get("h") or 0.0) - grow, 0.0)
        g = 0.0
        if text:
            lh = geo_label_size(text, font, size, float(new.get("w") or 0.0), scale)[1]
            g = max(lh - h / scale, 0.0) * scale
        props["growY"] = g
        new["h"] = h + g
    elif t == "note" and "scale" in props and text:
        props = new["props"] = dict(props)
        g, adj = note_label(text, font, size)
        props["growY"] = g
        props["fontSizeAdjustment"] = adj
        new["h"] = (NOTE_SIZE + g) * scale
