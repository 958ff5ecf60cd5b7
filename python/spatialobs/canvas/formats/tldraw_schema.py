"""tldraw's record schema: validation of records and mapping of values onto it.

tldraw refuses a whole document when one record breaks its schema
(``ValidationError: At shape(type = geo).props.color: Expected "black" or ...``),
and refuses to migrate a document whose older-form records carry newer-form props
(``migrationFailed``). This module knows the rules of tldraw's record schema
(``@tldraw/tlschema`` as shipped with tldraw 5.4.2), per schema version, so that the
write path produces only records tldraw accepts:

* :func:`validate_record` / :func:`validate_records` check records against the
  schema version the document declares: a record is first brought to the newest
  form the way tldraw's migrations would (simulated here), then checked against
  the newest validators, so a record that would make a migration fail and one
  that fails validation are both reported, naming the record and the field.
* :func:`record_form` / :func:`default_props` give the props of a new record in
  the form the document's schema version stores (``text`` before ``richText``,
  no ``scale`` before it existed, ``align`` before ``textAlign``, ...).
* ``map_*`` functions map a value outside the schema to the nearest valid one and
  say so in a note: a CSS color to the nearest color of tldraw's palette (nearest
  in CIELAB), a pixel font size to the nearest size step, a font family to the
  nearest of tldraw's four fonts, fill, dash, alignment, geo kind and arrowhead
  spellings. :func:`map_style` maps a whole style mapping. A value that has no
  sensible nearest value raises :class:`UnmappableValueError`.

Only the default shape types are checked prop by prop (geo, text, note, frame,
arrow, line, draw, highlight, group); other types (image, video, bookmark, embed,
custom) are checked as shape records without looking into their props.

Examples
--------
>>> map_color("#ff0000")
Mapped(key='color', value='#ff0000', to='red', note="color '#ff0000' → 'red'")
>>> rec = {"id": "shape:a", "typeName": "shape", "type": "geo", "x": 0, "y": 0, "rotation": 0,
...        "index": "a1", "parentId": "page:p", "isLocked": False, "opacity": 1, "meta": {},
...        "props": dict(default_props("geo"), color="#ff0000")}
>>> for p in validate_record(rec):
...     print(p)
shape:a (geo) props.color: expected one of black, grey, light-violet, violet, blue, light-blue, yellow, orange, green, light-green, light-red, red, white; got '#ff0000'
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.fractional import is_valid_key
from spatialobs.canvas.document.richtext import plain_to_richtext, richtext_to_plain

__all__ = [
    "COLORS", "PALETTE", "FILLS", "DASHES", "SIZES", "FONTS", "ALIGNS", "VERTICAL_ALIGNS", "TEXT_ALIGNS",
    "GEO_KINDS", "ARROWHEADS", "ARROW_KINDS", "SPLINES", "FONT_SIZES_PX", "LABEL_FONT_SIZES_PX",
    "ARROW_LABEL_FONT_SIZES_PX", "LATEST_VERSIONS", "Problem", "Mapped", "UnmappableValueError",
    "InvalidRecordError", "SchemaVersions", "parse_css_color", "map_color", "map_size", "map_font", "map_fill",
    "map_dash", "map_align", "map_vertical_align", "map_text_align", "map_geo", "map_arrowhead", "map_style",
    "validate_record", "validate_records", "record_form", "default_props", "check_records",
]

# ---------------------------------------------------------------------- enumerations
#: tldraw's color names, in its order.
COLORS = ("black", "grey", "light-violet", "violet", "blue", "light-blue", "yellow", "orange", "green",
          "light-green", "light-red", "red", "white")
#: The ``solid`` value of each color in tldraw's default light theme.
PALETTE: Dict[str, str] = {
    "black": "#1d1d1d", "grey": "#9fa8b2", "light-violet": "#e085f4", "violet": "#ae3ec9", "blue": "#4465e9",
    "light-blue": "#4ba1f1", "yellow": "#f1ac4b", "orange": "#e16919", "green": "#099268",
    "light-green": "#4cb05e", "light-red": "#f87777", "red": "#e03131", "white": "#ffffff",
}
FILLS = ("none", "semi", "solid", "pattern", "fill", "lined-fill")
DASHES = ("draw", "solid", "dashed", "dotted", "none")
SIZES = ("s", "m", "l", "xl")
FONTS = ("draw", "sans", "serif", "mono")
ALIGNS = ("start", "middle", "end", "start-legacy", "end-legacy", "middle-legacy")
VERTICAL_ALIGNS = ("start", "middle", "end")
TEXT_ALIGNS = ("start", "middle", "end")
GEO_KINDS = ("cloud", "rectangle", "ellipse", "triangle", "diamond", "pentagon", "hexagon", "octagon", "star",
             "rhombus", "rhombus-2", "oval", "trapezoid", "arrow-right", "arrow-left", "arrow-up", "arrow-down",
             "x-box", "check-box", "heart")
ARROWHEADS = ("arrow", "triangle", "square", "dot", "pipe", "diamond", "inverted", "bar", "none")
ARROW_KINDS = ("arc", "elbow")
SPLINES = ("cubic", "line")
SNAPS = ("center", "edge-point", "edge", "none")
#: Font size in pixels of each size step: text shapes (16 px × 1.125, 1.5, 2.25, 2.75).
FONT_SIZES_PX = {"s": 18.0, "m": 24.0, "l": 36.0, "xl": 44.0}
#: Label font size of geo shapes and notes.
LABEL_FONT_SIZES_PX = {"s": 18.0, "m": 22.0, "l": 26.0, "xl": 32.0}
#: Label font size of arrows.
ARROW_LABEL_FONT_SIZES_PX = {"s": 18.0, "m": 20.0, "l": 24.0, "xl": 28.0}

#: Newest version of each migration sequence in tldraw 5.4.2.
LATEST_VERSIONS: Dict[str, int] = {
    "com.tldraw.store": 5, "com.tldraw.shape": 4, "com.tldraw.page": 1, "com.tldraw.binding.arrow": 1,
    "com.tldraw.shape.geo": 12, "com.tldraw.shape.text": 4, "com.tldraw.shape.note": 13,
    "com.tldraw.shape.frame": 1, "com.tldraw.shape.arrow": 8, "com.tldraw.shape.line": 5,
    "com.tldraw.shape.draw": 5, "com.tldraw.shape.highlight": 4, "com.tldraw.shape.group": 0,
}


# ---------------------------------------------------------------------- errors and results
@dataclass(frozen=True)
class Problem:
    """One way a record breaks tldraw's schema.

    Attributes
    ----------
    record : str
        The record's id.
    kind : str
        ``"shape"`` type, ``"binding"``, ``"page"``, or the typeName.
    field : str
        Dotted path of the field (``props.color``), or ``""`` for the record.
    message : str
    """

    record: str
    kind: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f" {self.field}" if self.field else ""
        return f"{self.record} ({self.kind}){where}: {self.message}"


@dataclass(frozen=True)
class Mapped:
    """A value mapped onto tldraw's schema: ``to`` replaces ``value`` under ``key``; ``note`` says so."""

    key: str
    value: Any
    to: Any
    note: str


class UnmappableValueError(InvalidInputError):
    """A style value that has no nearest value in tldraw's schema; the message names key and value."""


class InvalidRecordError(InvalidInputError):
    """A record that tldraw would refuse; ``problems`` lists every broken rule, naming the record."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        head = "; ".join(str(p) for p in self.problems[:5])
        more = f" (and {len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
        super().__init__(f"tldraw would refuse the document: {head}{more}")


def _note(key: str, value: Any, to: Any) -> Mapped:
    return Mapped(key, value, to, f"{key} {value!r} → {to!r}")


# ---------------------------------------------------------------------- colors
_CSS_NAMED = (
    "aliceblue f0f8ff antiquewhite faebd7 aqua 00ffff aquamarine 7fffd4 azure f0ffff beige f5f5dc bisque ffe4c4 "
    "black 000000 blanchedalmond ffebcd blue 0000ff blueviolet 8a2be2 brown a52a2a burlywood deb887 cadetblue "
    "5f9ea0 chartreuse 7fff00 chocolate d2691e coral ff7f50 cornflowerblue 6495ed cornsilk fff8dc crimson dc143c "
    "cyan 00ffff darkblue 00008b darkcyan 008b8b darkgoldenrod b8860b darkgray a9a9a9 darkgreen 006400 darkgrey "
    "a9a9a9 darkkhaki bdb76b darkmagenta 8b008b darkolivegreen 556b2f darkorange ff8c00 darkorchid 9932cc darkred "
    "8b0000 darksalmon e9967a darkseagreen 8fbc8f darkslateblue 483d8b darkslategray 2f4f4f darkslategrey 2f4f4f "
    "darkturquoise 00ced1 darkviolet 9400d3 deeppink ff1493 deepskyblue 00bfff dimgray 696969 dimgrey 696969 "
    "dodgerblue 1e90ff firebrick b22222 floralwhite fffaf0 forestgreen 228b22 fuchsia ff00ff gainsboro dcdcdc "
    "ghostwhite f8f8ff gold ffd700 goldenrod daa520 gray 808080 green 008000 greenyellow adff2f grey 808080 "
    "honeydew f0fff0 hotpink ff69b4 indianred cd5c5c indigo 4b0082 ivory fffff0 khaki f0e68c lavender e6e6fa "
    "lavenderblush fff0f5 lawngreen 7cfc00 lemonchiffon fffacd lightblue add8e6 lightcoral f08080 lightcyan e0ffff "
    "lightgoldenrodyellow fafad2 lightgray d3d3d3 lightgreen 90ee90 lightgrey d3d3d3 lightpink ffb6c1 lightsalmon "
    "ffa07a lightseagreen 20b2aa lightskyblue 87cefa lightslategray 778899 lightslategrey 778899 lightsteelblue "
    "b0c4de lightyellow ffffe0 lime 00ff00 limegreen 32cd32 linen faf0e6 magenta ff00ff maroon 800000 "
    "mediumaquamarine 66cdaa mediumblue 0000cd mediumorchid ba55d3 mediumpurple 9370db mediumseagreen 3cb371 "
    "mediumslateblue 7b68ee mediumspringgreen 00fa9a mediumturquoise 48d1cc mediumvioletred c71585 midnightblue "
    "191970 mintcream f5fffa mistyrose ffe4e1 moccasin ffe4b5 navajowhite ffdead navy 000080 oldlace fdf5e6 olive "
    "808000 olivedrab 6b8e23 orange ffa500 orangered ff4500 orchid da70d6 palegoldenrod eee8aa palegreen 98fb98 "
    "paleturquoise afeeee palevioletred db7093 papayawhip ffefd5 peachpuff ffdab9 peru cd853f pink ffc0cb plum "
    "dda0dd powderblue b0e0e6 purple 800080 rebeccapurple 663399 red ff0000 rosybrown bc8f8f royalblue 4169e1 "
    "saddlebrown 8b4513 salmon fa8072 sandybrown f4a460 seagreen 2e8b57 seashell fff5ee sienna a0522d silver "
    "c0c0c0 skyblue 87ceeb slateblue 6a5acd slategray 708090 slategrey 708090 snow fffafa springgreen 00ff7f "
    "steelblue 4682b4 tan d2b48c teal 008080 thistle d8bfd8 tomato ff6347 turquoise 40e0d0 violet ee82ee wheat "
    "f5deb3 white ffffff whitesmoke f5f5f5 yellow ffff00 yellowgreen 9acd32"
).split()
CSS_NAMED_COLORS: Dict[str, Tuple[int, int, int]] = {
    _CSS_NAMED[i]: (int(_CSS_NAMED[i + 1][0:2], 16), int(_CSS_NAMED[i + 1][2:4], 16), int(_CSS_NAMED[i + 1][4:6], 16))
    for i in range(0, len(_CSS_NAMED), 2)}
# tldraw's own spellings that CSS lacks or reads otherwise
_COLOR_ALIASES = {"gray": "grey", "light-gray": "grey", "light-grey": "grey", "lightviolet": "light-violet",
                  "lightblue": "light-blue", "lightgreen": "light-green", "lightred": "light-red",
                  "light-purple": "light-violet", "purple": "violet", "pink": "light-red"}

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
_RGB = re.compile(rf"rgba?\(\s*({_NUM})(%?)\s*[,\s]\s*({_NUM})(%?)\s*[,\s]\s*({_NUM})(%?)\s*(?:[,/]\s*({_NUM})(%?)\s*)?\)")
_HSL = re.compile(rf"hsla?\(\s*({_NUM})(deg|turn|rad)?\s*[,\s]\s*({_NUM})%?\s*[,\s]\s*({_NUM})%?\s*(?:[,/]\s*({_NUM})(%?)\s*)?\)")


def parse_css_color(value: Any) -> Optional[Tuple[int, int, int]]:
    """An sRGB triple (0–255) for a CSS color (hex, ``rgb()``, ``hsl()``, a named color), else None.

    Examples
    --------
    >>> parse_css_color("#f00"), parse_css_color("rgb(0, 128, 255)"), parse_css_color("teal")
    ((255, 0, 0), (0, 128, 255), (0, 128, 128))
    >>> parse_css_color("banana") is None
    True
    """
    if not isinstance(value, str):
        return None
    s = value.strip().lower()
    if s.startswith("#"):
        h = s[1:]
        if not re.fullmatch(r"[0-9a-f]{3,8}", h) or len(h) not in (3, 4, 6, 8):
            return None
        if len(h) in (3, 4):
            h = "".join(c * 2 for c in h[:3])
        return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    if s in CSS_NAMED_COLORS:
        return CSS_NAMED_COLORS[s]
    m = _RGB.fullmatch(s)
    if m:
        out = []
        for v, pct in ((m.group(1), m.group(2)), (m.group(3), m.group(4)), (m.group(5), m.group(6))):
            f = float(v) * 2.55 if pct else float(v)
            out.append(int(round(min(max(f, 0.0), 255.0))))
        return out[0], out[1], out[2]
    m = _HSL.fullmatch(s)
    if m:
        hue = float(m.group(1))
        unit = m.group(2)
        hue = hue * 360.0 if unit == "turn" else math.degrees(hue) if unit == "rad" else hue
        sat = min(max(float(m.group(3)) / 100.0, 0.0), 1.0)
        lig = min(max(float(m.group(4)) / 100.0, 0.0), 1.0)
        c = (1 - abs(2 * lig - 1)) * sat
        hp = (hue % 360.0) / 60.0
        x = c * (1 - abs(hp % 2 - 1))
        r, g, b = [(c, x, 0), (x, c, 0), (0, c, x), (0, x, c), (x, 0, c), (c, 0, x)][int(hp) % 6]
        mm = lig - c / 2
        return tuple(int(round((v + mm) * 255)) for v in (r, g, b))  # type: ignore[return-value]
    return None


def _lab(rgb: Tuple[int, int, int]) -> Tuple[float, float, float]:
    """CIELAB (D65) of an sRGB triple."""
    def lin(c: float) -> float:
        c /= 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(float(v)) for v in rgb)
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1.0 / 3.0) if t > 216.0 / 24389.0 else (24389.0 / 27.0 * t + 16.0) / 116.0

    fx, fy, fz = f(x), f(y), f(z)
    return 116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)


_PALETTE_LAB = {name: _lab(parse_css_color(hexv) or (0, 0, 0)) for name, hexv in PALETTE.items()}


def nearest_color(rgb: Tuple[int, int, int]) -> str:
    """The tldraw color nearest to an sRGB triple (Euclidean distance in CIELAB; ties: tldraw's order).

    Examples
    --------
    >>> nearest_color((255, 0, 0)), nearest_color((250, 250, 250)), nearest_color((0, 0, 0))
    ('red', 'white', 'black')
    """
    lab = _lab(rgb)
    return min(COLORS, key=lambda n: sum((a - b) ** 2 for a, b in zip(lab, _PALETTE_LAB[n])))


def _color_name(value: Any) -> Optional[str]:
    if not isinstance(value, str):
        return None
    s = value.strip().lower().replace("_", "-").replace(" ", "-")
    if s in COLORS:
        return s
    return _COLOR_ALIASES.get(s)


def map_color(value: Any, key: str = "color") -> Mapped:
    """A tldraw color name for ``value``: a tldraw name as is, else the nearest palette color.

    CSS colors (hex, ``rgb()``, ``hsl()``, named colors) map to the palette color
    nearest in CIELAB; ``gray`` and similar spellings map to tldraw's name.

    Raises
    ------
    UnmappableValueError
        When ``value`` is not a color.

    Examples
    --------
    >>> map_color("red").to, map_color("#ff0000").to, map_color("rgb(68, 101, 233)").to, map_color("gray").to
    ('red', 'red', 'blue', 'grey')
    >>> map_color("#ff0000").note
    "color '#ff0000' → 'red'"
    """
    name = _color_name(value)
    if name is not None:
        return Mapped(key, value, name, "") if name == value else _note(key, value, name)
    rgb = parse_css_color(value)
    if rgb is None:
        raise UnmappableValueError(f"{key} {value!r} is not a color: give a tldraw color "
                                   f"({', '.join(COLORS)}) or a CSS color (#rrggbb, rgb(), a CSS name)")
    return _note(key, value, nearest_color(rgb))


# ---------------------------------------------------------------------- sizes, fonts
_SIZE_WORDS = {"small": "s", "sm": "s", "x-small": "s", "xx-small": "s", "smaller": "s", "tiny": "s",
               "medium": "m", "md": "m", "normal": "m", "default": "m", "regular": "m",
               "large": "l", "lg": "l", "big": "l", "larger": "l",
               "x-large": "xl", "xx-large": "xl", "xxx-large": "xl", "extra-large": "xl", "huge": "xl"}


def _px(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        f = float(value) if -1e300 < value < 1e300 else math.inf
        return f if math.isfinite(f) else None
    if isinstance(value, str):
        m = re.fullmatch(rf"\s*({_NUM})\s*(px|pt|em|rem)?\s*", value.lower())
        if m:
            f = float(m.group(1))
            unit = m.group(2)
            f = f * 4.0 / 3.0 if unit == "pt" else f * 16.0 if unit in ("em", "rem") else f
            return f if math.isfinite(f) else None
    return None


def map_size(value: Any, shape_type: Optional[str] = None, key: str = "size") -> Mapped:
    """A tldraw size step (s, m, l, xl) for ``value``.

    A number or a length (``20``, ``"20px"``, ``"1.25rem"``, ``"15pt"``) maps to the
    step whose font size is nearest: text shapes use FONT_SIZES (18, 24, 36, 44 px),
    geo shapes and notes their label sizes (18, 22, 26, 32), arrows theirs (18, 20,
    24, 28); ties go to the smaller step. Words such as ``small`` / ``large`` map too.

    Raises
    ------
    UnmappableValueError
        When ``value`` is neither a step, a size word nor a positive length.

    Examples
    --------
    >>> map_size("l").to, map_size(20).to, map_size("42px").to, map_size(30, "geo").to, map_size("large").to
    ('l', 's', 'xl', 'xl', 'l')
    """
    if isinstance(value, str) and value.strip().lower() in SIZES:
        s = value.strip().lower()
        return Mapped(key, value, s, "") if s == value else _note(key, value, s)
    if isinstance(value, str) and value.strip().lower().replace(" ", "-") in _SIZE_WORDS:
        return _note(key, value, _SIZE_WORDS[value.strip().lower().replace(" ", "-")])
    px = _px(value)
    if px is None or px <= 0:
        raise UnmappableValueError(f"{key} {value!r} is not a size: give s, m, l, xl or a font size in pixels")
    table = (LABEL_FONT_SIZES_PX if shape_type in ("geo", "note") else
             ARROW_LABEL_FONT_SIZES_PX if shape_type == "arrow" else FONT_SIZES_PX)
    step = min(SIZES, key=lambda s: (abs(table[s] - px), table[s]))
    return _note(key, value, step)


_SERIF = ("serif", "georgia", "times", "garamond", "palatino", "baskerville", "cambria", "book antiqua", "didot",
          "bodoni", "playfair", "merriweather", "lora", "charter", "constantia", "century", "caslon", "minion",
          "noto serif", "pt serif", "source serif", "droid serif", "liberation serif", "dejavu serif", "crimson")
_MONO = ("mono", "courier", "consolas", "menlo", "monaco", "source code", "fira code", "jetbrains", "inconsolata",
         "lucida console", "cascadia", "andale", "code", "hack", "terminal")
_HAND = ("cursive", "fantasy", "comic", "caveat", "virgil", "excalifont", "shantell", "indie flower", "patrick hand",
         "kalam", "handlee", "marker", "brush", "segoe print", "bradley hand", "gloria", "architects daughter",
         "dancing script", "pacifico", "chalk", "handwrit", "hand-drawn", "handdrawn", "sketch", "draw", "script")


def map_font(value: Any, key: str = "font") -> Mapped:
    """One of tldraw's fonts (draw, sans, serif, mono) for a font name or a CSS font-family list.

    The first family of the list that is recognised decides: serif families →
    ``serif``, monospace → ``mono``, handwriting and cursive → ``draw``; a list with
    none of these → ``sans``.

    Examples
    --------
    >>> [map_font(f).to for f in ("Arial", "Georgia, serif", "'Fira Code', monospace", "Comic Sans MS", "mono")]
    ['sans', 'serif', 'mono', 'draw', 'mono']
    """
    if not isinstance(value, str) or not value.strip():
        raise UnmappableValueError(f"{key} {value!r} is not a font: give draw, sans, serif, mono or a font family")
    if value in FONTS:
        return Mapped(key, value, value, "")
    s = value.strip().lower()
    if s in FONTS:
        return _note(key, value, s)
    for fam in (f.strip().strip("'\"") for f in s.split(",")):
        if not fam:
            continue
        if fam.startswith("tldraw_") and fam[7:] in FONTS:
            return _note(key, value, fam[7:])
        if fam in ("sans-serif", "sans", "system-ui", "ui-sans-serif", "-apple-system"):
            return _note(key, value, "sans")
        if any(m in fam for m in _MONO):
            return _note(key, value, "mono")
        if "sans" not in fam and any(m in fam for m in _SERIF):
            return _note(key, value, "serif")
        if any(m in fam for m in _HAND):
            return _note(key, value, "draw")
    return _note(key, value, "sans")


# ---------------------------------------------------------------------- fill, dash, align, kinds
_FILL_WORDS = {"transparent": "none", "no": "none", "hollow": "none", "outline": "none", "empty": "none",
               "false": "none", "semi-transparent": "semi", "translucent": "semi", "light": "semi",
               "filled": "solid", "full": "solid", "opaque": "solid", "true": "solid", "hachure": "pattern",
               "hatch": "pattern", "hatched": "pattern", "cross-hatch": "pattern", "crosshatch": "pattern",
               "zigzag": "pattern", "dots": "pattern", "striped": "pattern", "lined": "lined-fill",
               "lines": "lined-fill", "linedfill": "lined-fill", "lined_fill": "lined-fill"}


def map_fill(value: Any, key: str = "fill") -> List[Mapped]:
    """tldraw's fill for ``value``, plus the color when the value names one.

    A fill name is kept; spellings (``transparent``, ``hachure``, ``filled`` ...) map
    to tldraw's; a color (tldraw name or CSS) gives ``solid`` fill and that color
    mapped onto the palette (two entries: fill, then color).

    Examples
    --------
    >>> [(m.key, m.to) for m in map_fill("blue")]
    [('fill', 'solid'), ('color', 'blue')]
    >>> [(m.key, m.to) for m in map_fill("transparent")], [m.to for m in map_fill("#fafafa")]
    ([('fill', 'none')], ['solid', 'white'])
    """
    if isinstance(value, bool):
        return [_note(key, value, "solid" if value else "none")]
    if isinstance(value, str):
        s = value.strip().lower()
        if s in FILLS:
            return [Mapped(key, value, s, "") if s == value else _note(key, value, s)]
        w = s.replace(" ", "-")
        if w in _FILL_WORDS:
            return [_note(key, value, _FILL_WORDS[w])]
        try:
            c = map_color(value)
        except UnmappableValueError:
            pass
        else:
            return [_note(key, value, "solid"), Mapped("color", value, c.to, f"color → {c.to!r} (from {key} {value!r})")]
    raise UnmappableValueError(f"{key} {value!r} is not a fill: give {', '.join(FILLS)} or a color")


def _word(key: str, value: Any, values: Sequence[str], words: Mapping[str, str],
          normalize: Callable[[str], str] = lambda v: v.strip().lower()) -> Optional[Mapped]:
    """``value`` as one of ``values``, by itself once normalized or through the spellings
    ``words``; None when it is neither (or not a string)."""
    if not isinstance(value, str):
        return None
    s = normalize(value)
    if s in values:
        return Mapped(key, value, s, "") if s == value else _note(key, value, s)
    if s in words:
        return _note(key, value, words[s])
    return None


_DASH_WORDS = {"dash": "dashed", "dashes": "dashed", "dot": "dotted", "dots": "dotted", "sketch": "draw",
               "sketchy": "draw", "hand": "draw", "hand-drawn": "draw", "rough": "draw", "double": "solid",
               "groove": "solid", "ridge": "solid", "inset": "solid", "outset": "solid", "line": "solid",
               "hidden": "none", "false": "none"}


def map_dash(value: Any, key: str = "dash") -> Mapped:
    """tldraw's dash for ``value`` (CSS border styles and Excalidraw stroke styles map too).

    Examples
    --------
    >>> map_dash("dashed").to, map_dash("dot").to, map_dash("double").to
    ('dashed', 'dotted', 'solid')
    """
    m = _word(key, value, DASHES, _DASH_WORDS)
    if m is not None:
        return m
    raise UnmappableValueError(f"{key} {value!r} is not a dash: give {', '.join(DASHES)}")


_H_WORDS = {"left": "start", "center": "middle", "centre": "middle", "right": "end", "justify": "start",
            "flex-start": "start", "flex-end": "end"}
_V_WORDS = {"top": "start", "center": "middle", "centre": "middle", "bottom": "end", "baseline": "end",
            "flex-start": "start", "flex-end": "end"}


def map_align(value: Any, key: str = "align") -> Mapped:
    """tldraw's horizontal label alignment (geo, note) for ``value`` (``left``/``center``/``right`` too).

    Examples
    --------
    >>> map_align("center").to, map_align("start-legacy").to
    ('middle', 'start-legacy')
    """
    m = _word(key, value, ALIGNS, _H_WORDS)
    if m is not None:
        return m
    raise UnmappableValueError(f"{key} {value!r} is not an alignment: give start, middle or end")


def map_text_align(value: Any, key: str = "textAlign") -> Mapped:
    """tldraw's text alignment of a text shape (no legacy values).

    Examples
    --------
    >>> map_text_align("right").to, map_text_align("middle-legacy").to
    ('end', 'middle')
    """
    m = map_align(value, key)
    to = str(m.to).replace("-legacy", "")
    return Mapped(key, value, to, "") if to == value else _note(key, value, to)


def map_vertical_align(value: Any, key: str = "verticalAlign") -> Mapped:
    """tldraw's vertical alignment for ``value`` (``top``/``center``/``bottom`` too).

    Examples
    --------
    >>> map_vertical_align("top").to, map_vertical_align("end").to
    ('start', 'end')
    """
    m = _word(key, value, VERTICAL_ALIGNS, _V_WORDS)
    if m is not None:
        return m
    raise UnmappableValueError(f"{key} {value!r} is not a vertical alignment: give start, middle or end")


_GEO_WORDS = {"rect": "rectangle", "box": "rectangle", "square": "rectangle", "circle": "ellipse",
              "round": "ellipse", "rhomb": "rhombus", "parallelogram": "rhombus", "checkbox": "check-box",
              "xbox": "x-box", "cross": "x-box", "right-arrow": "arrow-right", "left-arrow": "arrow-left",
              "up-arrow": "arrow-up", "down-arrow": "arrow-down"}


_ROUNDED = frozenset(f"rounded-{w}" for w in ("rect", "rectangle", "box", "square"))


def _geo_spelling(value: str) -> str:
    return re.sub(r"[\s_]+", "-", value.strip().lower())


def map_geo(value: Any, key: str = "geo") -> Mapped:
    """tldraw's geo kind for ``value`` (``rect``, ``circle``, ``square`` ... map too).

    Examples
    --------
    >>> map_geo("ellipse").to, map_geo("circle").to, map_geo("Rounded Rect").to
    ('ellipse', 'ellipse', 'rectangle')
    """
    m = _word(key, value, GEO_KINDS, _GEO_WORDS, _geo_spelling)
    if m is not None:
        return m
    if isinstance(value, str) and _geo_spelling(value) in _ROUNDED:
        return _note(key, value, "rectangle")
    raise UnmappableValueError(f"{key} {value!r} is not a geo kind: give one of {', '.join(GEO_KINDS)}")


_HEAD_WORDS = {"arrowhead": "arrow", "open": "arrow", "chevron": "arrow", "circle": "dot", "filled": "triangle",
               "line": "bar", "crowfoot": "inverted", "crow": "inverted", "": "none", "no": "none",
               "false": "none", "true": "arrow", "null": "none"}


def map_arrowhead(value: Any, key: str = "arrowheadEnd") -> Mapped:
    """tldraw's arrowhead for ``value`` (``true``/``false``/null and a few spellings map too).

    Examples
    --------
    >>> map_arrowhead("triangle").to, map_arrowhead(None).to, map_arrowhead(True).to, map_arrowhead("circle").to
    ('triangle', 'none', 'arrow', 'dot')
    """
    if value is None or isinstance(value, bool):
        return _note(key, value, "arrow" if value else "none")
    m = _word(key, value, ARROWHEADS, _HEAD_WORDS)
    if m is not None:
        return m
    raise UnmappableValueError(f"{key} {value!r} is not an arrowhead: give one of {', '.join(ARROWHEADS)}")


# style keys an agent may use for tldraw styles, with the key they stand for (CSS spellings)
_STYLE_ALIASES = {"fontSize": "size", "fontFamily": "font", "strokeColor": "color", "stroke": "color",
                  "borderColor": "color", "textColor": "labelColor", "backgroundColor": "fill", "background": "fill",
                  "fillColor": "fill", "strokeStyle": "dash", "borderStyle": "dash", "horizontalAlign": "align",
                  "verticalAlignment": "verticalAlign"}
#: Style props per tldraw shape type (the StyleProps its record carries).
TYPE_STYLES: Dict[str, Tuple[str, ...]] = {
    "geo": ("color", "labelColor", "fill", "dash", "size", "font", "align", "verticalAlign", "geo"),
    "note": ("color", "labelColor", "size", "font", "align", "verticalAlign"),
    "text": ("color", "size", "font", "textAlign"),
    "arrow": ("color", "labelColor", "fill", "dash", "size", "font", "arrowheadStart", "arrowheadEnd", "kind"),
    "line": ("color", "dash", "size", "spline"),
    "draw": ("color", "fill", "dash", "size"),
    "highlight": ("color", "size"),
    "frame": ("color",),
}


def map_style(style: Mapping[str, Any], shape_type: str) -> Tuple[Dict[str, Any], List[Mapped]]:
    """Map a style mapping onto the tldraw style props of ``shape_type``.

    Keys the type has as style props (``color``, ``fill``, ``size``, ... and the CSS
    spellings ``fontSize``, ``fontFamily``, ``strokeColor``, ``backgroundColor``,
    ``borderStyle`` ...) are mapped; an explicit ``color`` wins over one implied by
    a fill. ``align`` on a text shape reads as ``textAlign`` and the reverse on geo
    and notes. Keys the type does not have are returned unchanged; a null value
    (remove the key) is kept as null.

    Returns
    -------
    style : dict
        The mapped style.
    notes : list of Mapped
        One per value that changed.

    Raises
    ------
    UnmappableValueError
        For a value with no nearest valid value.

    Examples
    --------
    >>> s, notes = map_style({"color": "#ff0000", "fill": "blue", "size": 20, "font": "Arial"}, "geo")
    >>> s
    {'color': 'red', 'fill': 'solid', 'size': 's', 'font': 'sans'}
    >>> [n.note for n in notes]
    ["color '#ff0000' → 'red'", "fill 'blue' → 'solid'", "size 20 → 's'", "font 'Arial' → 'sans'"]
    """
    allowed = TYPE_STYLES.get(shape_type, ())
    out: Dict[str, Any] = {}
    notes: List[Mapped] = []
    implied_color: Optional[Mapped] = None
    explicit_color = False
    for raw_key, value in style.items():
        key = _STYLE_ALIASES.get(raw_key, raw_key)
        if key == "align" and shape_type == "text":
            key = "textAlign"
        elif key == "textAlign" and shape_type in ("geo", "note"):
            key = "align"
        if key not in allowed:
            out[raw_key] = value
            continue
        if value is None:
            out[key] = None
            continue
        found: List[Mapped]
        if key in ("color", "labelColor"):
            found = [map_color(value, key)]
        elif key == "fill":
            found = map_fill(value, key)
        elif key == "size":
            found = [map_size(value, shape_type, key)]
        elif key == "font":
            found = [map_font(value, key)]
        elif key == "dash":
            found = [map_dash(value, key)]
        elif key == "align":
            found = [map_align(value, key)]
        elif key == "textAlign":
            found = [map_text_align(value, key)]
        elif key == "verticalAlign":
            found = [map_vertical_align(value, key)]
        elif key == "geo":
            found = [map_geo(value, key)]
        elif key in ("arrowheadStart", "arrowheadEnd"):
            found = [map_arrowhead(value, key)]
        else:
            found = [_enum(key, value, ARROW_KINDS if key == "kind" else SPLINES)]
        if raw_key != key and found[0].note == "":
            found[0] = Mapped(key, value, found[0].to, f"{raw_key} {value!r} → {key} {found[0].to!r}")
        for m in found:
            if m.key == "color" and key == "fill":
                implied_color = m
                continue
            if m.key == "color":
                explicit_color = True
            out[m.key] = m.to
            if m.note:
                notes.append(m)
    if implied_color is not None and not explicit_color and "color" in allowed:
        out["color"] = implied_color.to
        notes.append(implied_color)
    return out, notes


def _enum(key: str, value: Any, values: Sequence[str]) -> Mapped:
    if isinstance(value, str) and value.strip().lower() in values:
        s = value.strip().lower()
        return Mapped(key, value, s, "") if s == value else _note(key, value, s)
    raise UnmappableValueError(f"{key} {value!r} is not valid: give one of {', '.join(values)}")


# ---------------------------------------------------------------------- schema versions
@dataclass(frozen=True)
class SchemaVersions:
    """The migration-sequence versions a document declares (its ``schema``).

    Both schema forms are read: version 2 (``sequences``) and version 1
    (``storeVersion`` / ``recordVersions`` with ``subTypeVersions``), which tldraw
    upgrades one to one. ``declared`` is False for a document without a schema
    (read as the newest form).

    Examples
    --------
    >>> v = SchemaVersions.of({"schemaVersion": 1, "storeVersion": 4,
    ...                        "recordVersions": {"shape": {"version": 3, "subTypeVersions": {"geo": 7}}}})
    >>> v.version("com.tldraw.shape.geo"), v.version("com.tldraw.store"), v.props_version("text")
    (7, 4, 0)
    """

    sequences: Mapping[str, int]
    declared: bool = True

    @classmethod
    def of(cls, schema: Any) -> "SchemaVersions":
        """Read a document's ``schema`` value (None or {} → newest)."""
        if not isinstance(schema, Mapping) or not schema:
            return cls(dict(LATEST_VERSIONS), declared=False)
        seq: Dict[str, int] = {}
        raw = schema.get("sequences")
        if isinstance(raw, Mapping):
            for k, v in raw.items():
                if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool):
                    seq[k] = v
            return cls(seq)
        if isinstance(schema.get("storeVersion"), int):
            seq["com.tldraw.store"] = schema["storeVersion"]
        rv = schema.get("recordVersions")
        if isinstance(rv, Mapping):
            for tn, info in rv.items():
                if not isinstance(info, Mapping):
                    continue
                if isinstance(info.get("version"), int):
                    seq[f"com.tldraw.{tn}"] = info["version"]
                sub = info.get("subTypeVersions")
                if isinstance(sub, Mapping):
                    for st, v in sub.items():
                        if isinstance(v, int) and not isinstance(v, bool):
                            seq[f"com.tldraw.{tn}.{st}"] = v
        return cls(seq)

    def version(self, sequence: str) -> Optional[int]:
        """The declared version of one sequence, or None when the document does not list it."""
        return self.sequences.get(sequence)

    def from_version(self, sequence: str, retroactive: bool = True) -> int:
        """The version tldraw migrates this sequence from: declared, else 0 (retroactive) or newest."""
        v = self.sequences.get(sequence)
        if v is not None:
            return v
        return 0 if retroactive and self.declared else LATEST_VERSIONS.get(sequence, 0)

    def props_version(self, shape_type: str) -> int:
        """The form a shape type's props are stored in (the arrow sequence is not retroactive)."""
        return self.from_version(f"com.tldraw.shape.{shape_type}", retroactive=shape_type != "arrow")


# ---------------------------------------------------------------------- migrations (simulated)
class _MigrationFailed(Exception):
    pass


def _rich(props: Dict[str, Any]) -> None:
    t = props.get("text")
    if not isinstance(t, str):
        raise _MigrationFailed(f"props.text must be a string in this schema version (it stores text, not "
                               f"richText), got {type(t).__name__ if t is not None else 'nothing'}")
    props["richText"] = plain_to_richtext(t)
    props.pop("text", None)


def _justify(props: Dict[str, Any]) -> None:
    if props.get("align") == "justify":
        props["align"] = "start"


def _legacy_align(props: Dict[str, Any]) -> None:
    a = props.get("align")
    props["align"] = "start-legacy" if a == "start" else "end-legacy" if a == "end" else "middle-legacy"


def _valid_url(props: Dict[str, Any]) -> None:
    if not _is_link_url(props.get("url")):
        props["url"] = ""


def _set(key: str, value: Any) -> Callable[[Dict[str, Any]], None]:
    def f(props: Dict[str, Any]) -> None:
        props[key] = copy.deepcopy(value)
    return f


def _noop(props: Dict[str, Any]) -> None:
    pass


def _text_align(props: Dict[str, Any]) -> None:
    props["textAlign"] = props.pop("align", None)


def _note_ratio(props: Dict[str, Any]) -> None:
    props["fontSizeAdjustment"] = 1 if props.get("fontSizeAdjustment") == 0 else None


def _note_last(props: Dict[str, Any]) -> None:
    props["textLastEditedBy"] = props.pop("textFirstEditedBy", None)


def _arrow_precise(props: Dict[str, Any]) -> None:
    for term in ("start", "end"):
        t = props.get(term)
        if isinstance(t, dict) and t.get("type") == "binding":
            a = t.get("normalizedAnchor")
            if not isinstance(a, Mapping):
                raise _MigrationFailed(f"props.{term}.normalizedAnchor is missing")
            t["isPrecise"] = not (a.get("x") == 0.5 and a.get("y") == 0.5)


def _arrow_extract(props: Dict[str, Any]) -> None:
    for term in ("start", "end"):
        t = props.get(term)
        if not isinstance(t, dict):
            raise _MigrationFailed(f"props.{term} must be an object")
        if t.get("type") == "binding":
            props[term] = {"x": 0, "y": 0}
        else:
            t.pop("type", None)


def _line_snap(props: Dict[str, Any]) -> None:
    h = props.get("handles")
    if not isinstance(h, Mapping):
        raise _MigrationFailed("props.handles must be an object")
    for v in h.values():
        if isinstance(v, dict):
            v["canSnap"] = True


def _line_strip(props: Dict[str, Any]) -> None:
    h = props.get("handles")
    if not isinstance(h, Mapping):
        raise _MigrationFailed("props.handles must be an object")
    props["handles"] = {v.get("index"): {"x": v.get("x"), "y": v.get("y")} for v in h.values() if isinstance(v, Mapping)}


def _line_points(props: Dict[str, Any]) -> None:
    h = props.pop("handles", None)
    if not isinstance(h, Mapping):
        raise _MigrationFailed("props.handles must be an object")
    props["points"] = [{"x": v.get("x"), "y": v.get("y")} for _, v in sorted(h.items()) if isinstance(v, Mapping)]


def _line_ids(props: Dict[str, Any]) -> None:
    from spatialobs.canvas.document.fractional import key_sequence

    pts = props.get("points")
    if not isinstance(pts, list):
        raise _MigrationFailed("props.points must be an array")
    keys = key_sequence(len(pts))
    props["points"] = {k: {"id": k, "index": k, "x": p.get("x") if isinstance(p, Mapping) else None,
                           "y": p.get("y") if isinstance(p, Mapping) else None} for k, p in zip(keys, pts)}


def _draw_pen(props: Dict[str, Any]) -> None:
    segs = props.get("segments")
    if not isinstance(segs, list) or not segs or not isinstance(segs[0], Mapping):
        raise _MigrationFailed("props.segments[0] is missing")
    pts = segs[0].get("points")
    if not isinstance(pts, list):
        raise _MigrationFailed("props.segments[0].points must be an array")
    props["isPen"] = bool(pts) and all(isinstance(p, Mapping) and p.get("z") not in (0, 0.5) for p in pts[:2])


def _b64(props: Dict[str, Any]) -> None:
    segs = props.get("segments")
    if not isinstance(segs, list):
        raise _MigrationFailed("props.segments must be an array")
    out = []
    for s in segs:
        if isinstance(s, Mapping) and "path" not in s:
            s = {k: v for k, v in s.items() if k != "points"}
            s["path"] = ""  # the encoded points; their value does not change validity
        out.append(s)
    props["segments"] = out
    props.setdefault("scaleX", 1)
    props.setdefault("scaleY", 1)


def _b64_again(props: Dict[str, Any]) -> None:
    segs = props.get("segments")
    if isinstance(segs, list):
        props["segments"] = [({**{k: v for k, v in s.items() if k != "points"}, "path": ""}
                              if isinstance(s, Mapping) and "path" not in s else s) for s in segs]


_UP: Dict[str, List[Callable[[Dict[str, Any]], None]]] = {
    "geo": [_set("url", ""), _set("labelColor", "black"), _justify, _noop, _set("verticalAlign", "middle"),
            _legacy_align, _noop, _valid_url, _set("scale", 1), _rich, _noop,
            lambda p: p.update(flipX=False, flipY=False)],
    "text": [_justify, _text_align, _rich, _noop],
    "note": [_set("url", ""), _justify, _legacy_align, _set("verticalAlign", "middle"), _valid_url,
             _set("fontSizeAdjustment", 0), _set("scale", 1), _set("labelColor", "black"), _rich, _noop,
             _set("textFirstEditedBy", None), _note_ratio, _note_last],
    "frame": [_set("color", "black")],
    "arrow": [_set("labelColor", "black"), _arrow_precise, _set("labelPosition", 0.5), _arrow_extract,
              _set("scale", 1), lambda p: p.update(kind="arc", elbowMidPoint=0.5), _rich, _noop],
    "line": [_line_snap, _line_strip, _line_points, _line_ids, _set("scale", 1)],
    "draw": [_draw_pen, _set("scale", 1), _b64, _b64_again, _noop],
    "highlight": [_set("scale", 1), _b64, _b64_again, _noop],
    "group": [],
}


def _migrate_shape_up(rec: Dict[str, Any], versions: SchemaVersions) -> None:
    root = versions.from_version("com.tldraw.shape")
    if root < 1:
        rec["isLocked"] = False
    if root < 2:
        raw_props = rec.get("props")
        props: Dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
        try:
            rec["opacity"] = float(props.pop("opacity", "1"))
        except (TypeError, ValueError):
            rec["opacity"] = float("nan")
    if root < 3:
        rec["meta"] = {}
    t = rec.get("type")
    steps = _UP.get(t) if isinstance(t, str) else None
    if steps is None or not isinstance(rec.get("props"), dict):
        return
    start = versions.props_version(str(t))
    for fn in steps[start:]:
        fn(rec["props"])


# ---------------------------------------------------------------------- validators (newest form)
_Check = Callable[[Any], Optional[str]]


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_link_url(v: Any) -> bool:
    if not isinstance(v, str):
        return False
    if v == "":
        return True
    m = re.match(r"^\s*([A-Za-z][A-Za-z0-9+.\-]*):", v)
    return m is not None and m.group(1).lower() in ("http", "https", "mailto")


def _desc(v: Any) -> str:
    return "nothing" if v is _MISSING else repr(v)


_MISSING = object()


def _enum_check(values: Sequence[str]) -> _Check:
    def check(v: Any) -> Optional[str]:
        return None if isinstance(v, str) and v in values else f"expected one of {', '.join(values)}; got {_desc(v)}"
    return check


def _number(v: Any) -> Optional[str]:
    return None if _is_num(v) else f"expected a finite number; got {_desc(v)}"


def _nonzero(v: Any) -> Optional[str]:
    return None if _is_num(v) and v > 0 else f"expected a number > 0; got {_desc(v)}"


def _positive(v: Any) -> Optional[str]:
    return None if _is_num(v) and v >= 0 else f"expected a number >= 0; got {_desc(v)}"


def _nonzero_finite(v: Any) -> Optional[str]:
    return None if _is_num(v) and v != 0 else f"expected a finite number other than 0; got {_desc(v)}"


def _boolean(v: Any) -> Optional[str]:
    return None if isinstance(v, bool) else f"expected true or false; got {_desc(v)}"


def _string(v: Any) -> Optional[str]:
    return None if isinstance(v, str) else f"expected a string; got {_desc(v)}"


def _link(v: Any) -> Optional[str]:
    return None if _is_link_url(v) else f"expected '' or an http(s)/mailto url; got {_desc(v)}"


def _nullable(check: _Check) -> _Check:
    def f(v: Any) -> Optional[str]:
        return None if v is None else check(v)
    return f


def _rich_text(v: Any) -> Optional[str]:
    if not isinstance(v, Mapping):
        return f"expected a rich-text object {{type, content}}; got {_desc(v)}"
    extra = [k for k in v if k not in ("type", "content", "attrs")]
    if extra:
        return f"unexpected property {extra[0]!r} in rich text"
    if not isinstance(v.get("type"), str) or not isinstance(v.get("content"), list):
        return "rich text needs a string 'type' and a 'content' array"
    return None


def _vec(v: Any) -> Optional[str]:
    if not isinstance(v, Mapping):
        return f"expected a point {{x, y}}; got {_desc(v)}"
    extra = [k for k in v if k not in ("x", "y", "z")]
    if extra:
        return f"unexpected property {extra[0]!r} in a point"
    if not _is_num(v.get("x")) or not _is_num(v.get("y")) or ("z" in v and not _is_num(v["z"])):
        return f"expected finite x and y; got {v!r}"
    return None


def _line_points_check(v: Any) -> Optional[str]:
    if not isinstance(v, Mapping):
        return f"expected an object of points; got {_desc(v)}"
    for k, p in v.items():
        if not isinstance(p, Mapping) or set(p) != {"id", "index", "x", "y"}:
            return f"point {k!r} must be {{id, index, x, y}}"
        if not isinstance(p["id"], str) or not is_valid_key(p["index"]) or not _is_num(p["x"]) or not _is_num(p["y"]):
            return f"point {k!r} has an invalid id, index key or coordinate"
    return None


def _segments(v: Any) -> Optional[str]:
    if not isinstance(v, list):
        return f"expected an array of segments; got {_desc(v)}"
    for i, s in enumerate(v):
        if not isinstance(s, Mapping) or s.get("type") not in ("free", "straight") or not isinstance(s.get("path"), str):
            return f"segment {i} must be {{type: free|straight, path}}"
        if any(k not in ("type", "path", "dim") for k in s) or ("dim" in s and s["dim"] not in (2, 3)):
            return f"segment {i} has an unexpected property"
    return None


_C = _enum_check
_PROPS: Dict[str, Dict[str, _Check]] = {
    "geo": {"geo": _C(GEO_KINDS), "dash": _C(DASHES), "url": _link, "w": _nonzero, "h": _nonzero,
            "growY": _positive, "scale": _nonzero, "flipX": _boolean, "flipY": _boolean, "labelColor": _C(COLORS),
            "color": _C(COLORS), "fill": _C(FILLS), "size": _C(SIZES), "font": _C(FONTS), "align": _C(ALIGNS),
            "verticalAlign": _C(VERTICAL_ALIGNS), "richText": _rich_text},
    "text": {"color": _C(COLORS), "size": _C(SIZES), "font": _C(FONTS), "textAlign": _C(TEXT_ALIGNS),
             "w": _nonzero, "richText": _rich_text, "scale": _nonzero, "autoSize": _boolean},
    "note": {"color": _C(COLORS), "labelColor": _C(COLORS), "size": _C(SIZES), "font": _C(FONTS),
             "fontSizeAdjustment": _nullable(_positive), "align": _C(ALIGNS), "verticalAlign": _C(VERTICAL_ALIGNS),
             "growY": _positive, "url": _link, "richText": _rich_text, "scale": _nonzero,
             "textLastEditedBy": _nullable(_string)},
    "frame": {"w": _nonzero, "h": _nonzero, "name": _string, "color": _C(COLORS)},
    "arrow": {"kind": _C(ARROW_KINDS), "labelColor": _C(COLORS), "color": _C(COLORS), "fill": _C(FILLS),
              "dash": _C(DASHES), "size": _C(SIZES), "arrowheadStart": _C(ARROWHEADS), "arrowheadEnd": _C(ARROWHEADS),
              "font": _C(FONTS), "start": _vec, "end": _vec, "bend": _number, "richText": _rich_text,
              "labelPosition": _number, "scale": _nonzero, "elbowMidPoint": _number},
    "line": {"color": _C(COLORS), "dash": _C(DASHES), "size": _C(SIZES), "spline": _C(SPLINES),
             "points": _line_points_check, "scale": _nonzero},
    "draw": {"color": _C(COLORS), "fill": _C(FILLS), "dash": _C(DASHES), "size": _C(SIZES), "segments": _segments,
             "isComplete": _boolean, "isClosed": _boolean, "isPen": _boolean, "scale": _nonzero,
             "scaleX": _nonzero_finite, "scaleY": _nonzero_finite},
    "highlight": {"color": _C(COLORS), "size": _C(SIZES), "segments": _segments, "isComplete": _boolean,
                  "isPen": _boolean, "scale": _nonzero, "scaleX": _nonzero_finite, "scaleY": _nonzero_finite},
    "group": {},
}
_SHAPE_FIELDS = ("id", "typeName", "type", "x", "y", "rotation", "index", "parentId", "isLocked", "opacity", "props",
                 "meta")


def _json_ok(v: Any, depth: int = 0) -> bool:
    if depth > 100:
        return False
    if v is None or isinstance(v, (str, bool)):
        return True
    if isinstance(v, int):
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list):
        return all(_json_ok(x, depth + 1) for x in v)
    if isinstance(v, Mapping):
        return all(isinstance(k, str) and _json_ok(x, depth + 1) for k, x in v.items())
    return False


def _check_object(rid: str, kind: str, prefix: str, value: Any, checks: Mapping[str, _Check]) -> List[Problem]:
    if not isinstance(value, Mapping):
        return [Problem(rid, kind, prefix.rstrip("."), f"expected an object; got {_desc(value)}")]
    out = []
    for k, check in checks.items():
        msg = check(value.get(k, _MISSING))
        if msg is not None:
            out.append(Problem(rid, kind, prefix + k, msg))
    for k in value:
        if k not in checks:
            out.append(Problem(rid, kind, prefix + str(k), "unexpected property"))
    return out


def index_problem(key: Any, versions: SchemaVersions) -> Optional[str]:
    """Why tldraw would refuse ``key`` as a record's index at these schema versions, or None.

    Examples
    --------
    >>> index_problem("a1", SchemaVersions.of(None)) is None
    True
    >>> index_problem("a10", SchemaVersions.of(None))
    "expected a fractional index key; got 'a10'"
    """
    # store version 5 (FixIndexKeys) rewrites invalid keys of older documents on load
    if isinstance(key, str) and (is_valid_key(key) or (versions.from_version("com.tldraw.store") < 5 and key)):
        return None
    return f"expected a fractional index key; got {_desc(key)}"


def validate_record(rec: Any, versions: Optional[SchemaVersions] = None) -> List[Problem]:
    """Every way one record breaks tldraw's schema at the document's version (``[]`` when valid).

    Shape, binding and page records are checked; other records (document, camera,
    instance state ...) only for an id and typeName. The record is migrated to the
    newest form as tldraw would (a copy; ``rec`` is not changed) and checked
    against the newest validators; a migration that would fail is one problem.

    Parameters
    ----------
    rec : mapping
    versions : SchemaVersions, optional
        The document's schema (default: the newest form).

    Examples
    --------
    >>> old = SchemaVersions.of({"schemaVersion": 2, "sequences": {"com.tldraw.shape": 4,
    ...                          "com.tldraw.shape.text": 2, "com.tldraw.store": 4}})
    >>> rec = {"id": "shape:t", "typeName": "shape", "type": "text", "x": 0, "y": 0, "rotation": 0,
    ...        "index": "a1", "parentId": "page:p", "isLocked": False, "opacity": 1, "meta": {},
    ...        "props": default_props("text")}
    >>> [str(p) for p in validate_record(rec, old)]
    ['shape:t (text) props.text: migration would fail: props.text must be a string in this schema version (it stores text, not richText), got nothing']
    >>> validate_record({**rec, "props": default_props("text", old)}, old)
    []
    """
    versions = versions if versions is not None else SchemaVersions(dict(LATEST_VERSIONS))
    if not isinstance(rec, Mapping):
        return [Problem("?", "record", "", f"a record must be an object; got {type(rec).__name__}")]
    rid = rec.get("id")
    rid_s = rid if isinstance(rid, str) else repr(rid)
    tn = rec.get("typeName")
    if not isinstance(rid, str) or not isinstance(tn, str):
        return [Problem(rid_s, "record", "", "a record needs a string id and typeName")]
    if tn == "shape":
        return _validate_shape(rec, versions)
    if tn == "binding":
        return _validate_binding(rec, versions)
    if tn == "page":
        r = copy.deepcopy(dict(rec))
        if versions.from_version("com.tldraw.page") < 1:
            r["meta"] = {}
        out = _check_object(rid, "page", "", r, {
            "id": lambda v: None if isinstance(v, str) and v.startswith("page:") else "page ids start with 'page:'",
            "typeName": lambda v: None, "name": _string, "index": lambda v: index_problem(v, versions),
            "meta": lambda v: None if isinstance(v, Mapping) and _json_ok(v) else "expected a JSON object"})
        return out
    return []


def _validate_shape(rec: Mapping[str, Any], versions: SchemaVersions) -> List[Problem]:
    rid = rec["id"]
    t = rec.get("type")
    kind = t if isinstance(t, str) else "shape"
    r = copy.deepcopy(dict(rec))
    try:
        _migrate_shape_up(r, versions)
    except _MigrationFailed as exc:
        field_name = str(exc).split(" ")[0] if str(exc).startswith("props.") else "props"
        return [Problem(rid, kind, field_name, f"migration would fail: {exc}")]
    except Exception as exc:  # a malformed old record that tldraw's migration would choke on
        return [Problem(rid, kind, "props", f"migration would fail: {type(exc).__name__}: {exc}")]
    checks: Dict[str, _Check] = {
        "id": lambda v: None if isinstance(v, str) and v.startswith("shape:") else f"shape ids start with 'shape:'; got {_desc(v)}",
        "typeName": lambda v: None,
        "type": lambda v: None if isinstance(v, str) and v else f"expected a shape type; got {_desc(v)}",
        "x": _number, "y": _number, "rotation": _number,
        "index": lambda v: index_problem(v, versions),
        "parentId": lambda v: None if isinstance(v, str) and (v.startswith("page:") or v.startswith("shape:"))
        else f"expected a page: or shape: id; got {_desc(v)}",
        "isLocked": _boolean,
        "opacity": lambda v: None if _is_num(v) and 0 <= v <= 1 else f"expected a number from 0 to 1; got {_desc(v)}",
        "props": lambda v: None,
        "meta": lambda v: None if _json_ok(v) and v is not _MISSING else f"expected JSON; got {_desc(v)}",
    }
    out = _check_object(rid, kind, "", r, checks)
    props_checks = _PROPS.get(kind) if isinstance(t, str) else None
    if props_checks is not None:
        out.extend(_check_object(rid, kind, "props.", r.get("props", _MISSING), props_checks))
    elif not _json_ok(r.get("props", _MISSING)) or not isinstance(r.get("props"), Mapping):
        out.append(Problem(rid, kind, "props", "expected a JSON object"))
    return out


def _validate_binding(rec: Mapping[str, Any], versions: SchemaVersions) -> List[Problem]:
    rid = rec["id"]
    r = copy.deepcopy(dict(rec))
    t = r.get("type")
    if t == "arrow" and isinstance(r.get("props"), dict) and versions.from_version("com.tldraw.binding.arrow") < 1:
        r["props"]["snap"] = "none"
    shape_id: _Check = (lambda v: None if isinstance(v, str) and v.startswith("shape:")
                        else f"expected a shape id; got {_desc(v)}")
    out = _check_object(rid, "binding", "", r, {
        "id": lambda v: None if isinstance(v, str) and v.startswith("binding:") else f"binding ids start with 'binding:'; got {_desc(v)}",
        "typeName": lambda v: None, "type": _string, "fromId": shape_id, "toId": shape_id,
        "props": lambda v: None, "meta": lambda v: None if _json_ok(v) and v is not _MISSING else "expected JSON"})
    if t == "arrow":
        out.extend(_check_object(rid, "binding", "props.", r.get("props", _MISSING), {
            "terminal": _C(("start", "end")), "normalizedAnchor": _vec, "isExact": _boolean,
            "isPrecise": _boolean, "snap": _C(SNAPS)}))
    return out


def validate_records(records: Iterable[Any], schema: Any = None) -> List[Problem]:
    """Problems of every record, plus duplicate ids; ``schema`` is the document's ``schema`` value.

    Examples
    --------
    >>> validate_records([{"id": "page:p", "typeName": "page", "name": "P", "index": "a1", "meta": {}}] * 2)
    [Problem(record='page:p', kind='page', field='id', message='duplicate id')]
    """
    versions = schema if isinstance(schema, SchemaVersions) else SchemaVersions.of(schema)
    out: List[Problem] = []
    seen: set = set()
    for rec in records:
        out.extend(validate_record(rec, versions))
        rid = rec.get("id") if isinstance(rec, Mapping) else None
        if isinstance(rid, str):
            if rid in seen:
                out.append(Problem(rid, str(rec.get("typeName")), "id", "duplicate id"))
            seen.add(rid)
    return out


def check_records(records: Iterable[Any], schema: Any = None) -> None:
    """Raise :class:`InvalidRecordError` naming every problem of :func:`validate_records`.

    Examples
    --------
    >>> check_records([{"id": "page:p", "typeName": "page", "name": "P", "index": "a10", "meta": {}}])
    Traceback (most recent call last):
    ...
    spatialobs.canvas.formats.tldraw_schema.InvalidRecordError: tldraw would refuse the document: page:p (page) index: expected a fractional index key; got 'a10'
    """
    problems = validate_records(records, schema)
    if problems:
        raise InvalidRecordError(problems)


# ---------------------------------------------------------------------- the form of new records
_EMPTY_RICH: Dict[str, Any] = {"type": "doc", "content": [{"type": "paragraph"}]}
_NEWEST_DEFAULTS: Dict[str, Dict[str, Any]] = {
    "geo": {"w": 100, "h": 100, "geo": "rectangle", "dash": "draw", "growY": 0, "url": "", "scale": 1,
            "flipX": False, "flipY": False, "color": "black", "labelColor": "black", "fill": "none", "size": "m",
            "font": "draw", "align": "middle", "verticalAlign": "middle", "richText": _EMPTY_RICH},
    "text": {"color": "black", "size": "m", "w": 8, "font": "draw", "textAlign": "start", "autoSize": True,
             "scale": 1, "richText": _EMPTY_RICH},
    "note": {"color": "black", "richText": _EMPTY_RICH, "size": "m", "font": "draw", "align": "middle",
             "verticalAlign": "middle", "labelColor": "black", "growY": 0, "fontSizeAdjustment": 1, "url": "",
             "scale": 1, "textLastEditedBy": None},
    "frame": {"w": 160, "h": 90, "name": "", "color": "black"},
    "arrow": {"kind": "arc", "elbowMidPoint": 0.5, "dash": "draw", "size": "m", "fill": "none", "color": "black",
              "labelColor": "black", "bend": 0, "start": {"x": 0, "y": 0}, "end": {"x": 0, "y": 0},
              "arrowheadStart": "none", "arrowheadEnd": "arrow", "richText": _EMPTY_RICH, "labelPosition": 0.5,
              "font": "draw", "scale": 1},
    "line": {"dash": "draw", "size": "m", "color": "black", "spline": "line",
             "points": {"a1": {"id": "a1", "index": "a1", "x": 0, "y": 0},
                        "a2": {"id": "a2", "index": "a2", "x": 0.1, "y": 0.1}}, "scale": 1},
    "group": {},
}


def _down_text(props: Dict[str, Any]) -> None:
    rt = props.pop("richText", None)
    props["text"] = richtext_to_plain(rt) if isinstance(rt, Mapping) else ""


def _drop(*keys: str) -> Callable[[Dict[str, Any]], None]:
    def f(props: Dict[str, Any]) -> None:
        for k in keys:
            props.pop(k, None)
    return f


def _down_legacy_align(props: Dict[str, Any]) -> None:
    a = props.get("align")
    if isinstance(a, str) and a.endswith("-legacy"):
        props["align"] = a[: -len("-legacy")]


def _down_text_align(props: Dict[str, Any]) -> None:
    props["align"] = props.pop("textAlign", "start")


def _down_arrow_points(props: Dict[str, Any]) -> None:
    for term in ("start", "end"):
        t = props.get(term)
        if isinstance(t, Mapping) and t.get("type") != "binding":
            props[term] = {"type": "point", "x": t.get("x", 0), "y": t.get("y", 0)}


def _down_line_list(props: Dict[str, Any]) -> None:
    pts = props.get("points")
    if isinstance(pts, Mapping):
        props["points"] = [{"x": p["x"], "y": p["y"]} for _, p in sorted((p.get("index", k), p) for k, p in pts.items())]


def _down_line_handles(props: Dict[str, Any]) -> None:
    from spatialobs.canvas.document.fractional import key_sequence

    pts = props.pop("points", [])
    keys = key_sequence(len(pts))
    props["handles"] = {k: {"x": p["x"], "y": p["y"]} for k, p in zip(keys, pts)}


def _down_line_full(props: Dict[str, Any]) -> None:
    hs = sorted(props.get("handles", {}).items())
    out = {}
    for i, (idx, h) in enumerate(hs):
        hid = "start" if i == 0 else "end" if i == len(hs) - 1 else f"handle:{idx}"
        out[hid] = {"id": hid, "type": "vertex", "canBind": False, "canSnap": True, "index": idx,
                    "x": h["x"], "y": h["y"]}
    props["handles"] = out


# down[type][v] turns the form of version v + 1 into the form of version v
_DOWN: Dict[str, Dict[int, Callable[[Dict[str, Any]], None]]] = {
    "geo": {11: _drop("flipX", "flipY"), 9: _down_text, 8: _drop("scale"), 5: _down_legacy_align,
            4: _drop("verticalAlign"), 1: _drop("labelColor"), 0: _drop("url")},
    "text": {2: _down_text, 1: _down_text_align},
    "note": {12: lambda p: p.update(textFirstEditedBy=p.pop("textLastEditedBy", None)),
             11: lambda p: p.update(fontSizeAdjustment=0), 10: _drop("textFirstEditedBy"), 8: _down_text,
             7: _drop("labelColor"), 6: _drop("scale"), 5: _drop("fontSizeAdjustment"), 3: _drop("verticalAlign"),
             2: _down_legacy_align, 0: _drop("url")},
    "frame": {0: _drop("color")},
    "arrow": {6: _down_text, 5: _drop("kind", "elbowMidPoint"), 4: _drop("scale"), 3: _down_arrow_points,
              2: _drop("labelPosition"), 0: _drop("labelColor")},
    "line": {4: _drop("scale"), 3: _down_line_list, 2: _down_line_handles, 1: _down_line_full},
    "group": {},
}


def record_form(shape_type: str, props: Mapping[str, Any], versions: Optional[SchemaVersions] = None) -> Dict[str, Any]:
    """Newest-form props of a shape, rewritten into the form ``versions`` stores for its type.

    The reverse of tldraw's migrations for the props a new record carries:
    ``richText`` → ``text`` before rich text, ``textAlign`` → ``align`` for text
    before version 2, props that did not exist yet left out, legacy alignments
    before they existed, line points as handles, arrow terminals with a ``type``.

    Examples
    --------
    >>> v = SchemaVersions.of({"schemaVersion": 2, "sequences": {"com.tldraw.shape.geo": 9}})
    >>> p = record_form("geo", dict(default_props("geo"), richText={"type": "doc", "content": [
    ...     {"type": "paragraph", "content": [{"type": "text", "text": "Hi"}]}]}), v)
    >>> p["text"], "richText" in p, "flipX" in p, p["scale"]
    ('Hi', False, False, 1)
    """
    versions = versions if versions is not None else SchemaVersions(dict(LATEST_VERSIONS))
    out = copy.deepcopy(dict(props))
    down = _DOWN.get(shape_type)
    if down is None:
        return out
    v = versions.props_version(shape_type)
    newest = LATEST_VERSIONS.get(f"com.tldraw.shape.{shape_type}", 0)
    for k in range(newest - 1, v - 1, -1):
        fn = down.get(k)
        if fn is not None:
            fn(out)
    return out


def default_props(shape_type: str, versions: Optional[SchemaVersions] = None) -> Dict[str, Any]:
    """tldraw's default props of a new shape of ``shape_type``, in the form ``versions`` stores.

    Examples
    --------
    >>> default_props("note")["fontSizeAdjustment"], sorted(default_props("frame"))
    (1, ['color', 'h', 'name', 'w'])
    >>> "text" in default_props("text", SchemaVersions.of({"sequences": {"com.tldraw.shape.text": 1}}))
    True
    """
    base = _NEWEST_DEFAULTS.get(shape_type)
    if base is None:
        raise InvalidInputError(f"no default props for shape type {shape_type!r} "
                                f"(known: {', '.join(sorted(_NEWEST_DEFAULTS))})")
    return record_form(shape_type, base, versions)
