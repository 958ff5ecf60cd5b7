"""Text measured as Excalidraw 0.18 measures it, from a table of its fonts' metrics.

Excalidraw sizes a text element with a canvas: a line is ``measureText(line).width``
(glyph advances, kerned) in the font of ``fontFamily`` at ``fontSize`` pixels, the
element is as wide as its widest line (an empty line counts as a space) and
``lines × fontSize × lineHeight`` high. Advances come from ``excalidraw_fonts.json``
(generated from the woff2 files of the npm package by
``tools/fontmetrics/make_excalidraw_metrics.py``; no font is loaded here); characters
a family lacks take the browser's fallback widths (as in :mod:`textmeasure`), CJK
ideographs a full em (Excalidraw's Xiaolai and the usual CJK fonts).

Wrapping follows ``wrapText``: text in a container wraps at the container's text
width (:func:`bound_text_max_width`: its width minus ``BOUND_TEXT_PADDING`` on both
sides, less for ellipses and diamonds), a text with ``autoResize`` false at its own
width; lines break after spaces and hyphens and beside CJK, a word longer than the
line is broken between characters, and a wrapped line loses its trailing spaces. The
line breaking is :func:`textmeasure.layout_lines` with Excalidraw's break rule.
A container grows to hold its text (``computeContainerDimensionForBoundText``) and
places it by ``textAlign`` / ``verticalAlign`` inside its padding
(:func:`bound_text_layout`).
"""

from __future__ import annotations

import json
import math
import os
import unicodedata
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.textmeasure import _BREAK_RULES, _Font, _line_em, fallback_advances, layout_lines

__all__ = [
    "FONT_FAMILIES",
    "BOUND_TEXT_PADDING",
    "DEFAULT_FONT_SIZE",
    "DEFAULT_FONT_FAMILY",
    "default_line_height",
    "line_width",
    "wrap_text",
    "measure_text",
    "bound_text_max_width",
    "bound_text_max_height",
    "container_dimension",
    "text_element_size",
    "bound_text_layout",
    "label_fields",
    "bound_label",
    "fit_new_excalidraw_text",
    "refit_excalidraw_text",
]

#: Excalidraw's ``fontFamily`` ids (``FONT_FAMILY``).
FONT_FAMILIES = {1: "Virgil", 2: "Helvetica", 3: "Cascadia", 5: "Excalifont", 6: "Nunito", 7: "Lilita One",
                 8: "Comic Shanns", 9: "Liberation Sans"}
#: Space between a container's edge and its bound text, on every side.
BOUND_TEXT_PADDING = 5.0
#: Excalidraw's defaults for new text (``DEFAULT_FONT_SIZE``; Virgil is what files without a family mean).
DEFAULT_FONT_SIZE = 20.0
DEFAULT_FONT_FAMILY = 1
#: An arrow's label wraps at this fraction of the arrow's width, or at ``fontSize ×`` the ratio if wider.
ARROW_LABEL_WIDTH_FRACTION = 0.7
ARROW_LABEL_FONT_SIZE_TO_MIN_WIDTH_RATIO = 11.0
_CONTAINERS = frozenset({"rectangle", "ellipse", "diamond", "arrow"})

_TABLE: Optional[dict] = None
_FONTS: Dict[int, _Font] = {}


class _Fallback(Dict[str, float]):
    """The browser's fallback widths, with a full em for CJK characters none of them has."""

    def get(self, ch: str, default: Any = None) -> Any:
        w = super().get(ch)
        if w is None and unicodedata.east_asian_width(ch) in ("W", "F"):
            return 1.0
        return default if w is None else w


def _table() -> dict:
    global _TABLE
    if _TABLE is None:
        path = os.path.join(os.path.dirname(__file__), "excalidraw_fonts.json")
        with open(path, encoding="utf-8") as fh:
            _TABLE = json.load(fh)
    return _TABLE


def _family(font_family: Any) -> int:
    """A known family id for an element's ``fontFamily`` (unknown ones: Virgil)."""
    if isinstance(font_family, bool) or not isinstance(font_family, (int, float)):
        return DEFAULT_FONT_FAMILY
    fid = int(font_family) if float(font_family).is_integer() else -1
    return fid if fid in FONT_FAMILIES else DEFAULT_FONT_FAMILY


def _font(font_family: Any) -> _Font:
    fid = _family(font_family)
    f = _FONTS.get(fid)
    if f is None:
        entries = _table()["fonts"]
        entry = entries[str(fid)]
        if "same" in entry:
            entry = entries[entry["same"]]
        f = _FONTS[fid] = _Font(entry, _Fallback(fallback_advances()))
    return f


def default_line_height(font_family: Any) -> float:
    """The ``lineHeight`` Excalidraw gives new text in a family (``FONT_METADATA``).

    Examples
    --------
    >>> default_line_height(1), default_line_height(6), default_line_height(99)
    (1.25, 1.35, 1.25)
    """
    return float(_table()["fonts"][str(_family(font_family))]["lineHeight"])


def _normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "        ")


def line_width(text: str, font_family: Any = DEFAULT_FONT_FAMILY, font_size: float = DEFAULT_FONT_SIZE) -> float:
    """Width in pixels of one line, as a canvas measures it (``getLineWidth``).

    Examples
    --------
    >>> round(line_width("Hello world", 1, 16.0), 3)
    81.648
    """
    return _line_em(_font(font_family), _normalize(text)) * float(font_size)


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x3FFFF


_OPENING = set("<([{（［｛〈《｟｢「『【〖〔〘〚＜〝")
_CLOSING = set(">)]}.,:;!?…/）］｝〉》｠｣」』】〗〕〙〛＞。．，、〟‥？！：；・〜〞")


def _is_emoji(ch: str) -> bool:
    return ord(ch) >= 0x1F000 or 0x2600 <= ord(ch) <= 0x27BF


def _break_before(line: str, i: int) -> bool:
    """Excalidraw's break opportunities (``parseTokens``): after whitespace or a hyphen,
    before and after CJK characters (not inside an opening or closing pair), around emoji."""
    a, b = line[i - 1], line[i]
    if b.isspace():
        return False  # spaces stay with the word before them, hanging past the edge
    if a.isspace() or a == "-":
        return True
    if _is_cjk(b) and a not in _OPENING:
        return True
    if _is_cjk(a) and b != "-" and b not in _CLOSING:
        return True
    return _is_emoji(a) or _is_emoji(b)


_BREAK_RULES[_break_before] = 1  # the compiled layout's Excalidraw rule


def wrap_text(text: str, font_family: Any = DEFAULT_FONT_FAMILY, font_size: float = DEFAULT_FONT_SIZE,
              max_width: Optional[float] = None) -> str:
    """The text with the line breaks Excalidraw's ``wrapText`` inserts at ``max_width``.

    A line that fits stays as it is; a wrapped line loses its trailing spaces; the
    last piece of a wrapped line keeps those that still fit. ``None``, an infinite or
    a negative width leave the text alone.

    Examples
    --------
    >>> wrap_text("aaa bbb ccc", 3, 10.0, 45.0)
    'aaa bbb\\nccc'
    >>> wrap_text("abcdefgh", 3, 10.0, 30.0)
    'abcde\\nfgh'
    """
    if max_width is None or not math.isfinite(max_width) or max_width < 0:
        return text
    f = _font(font_family)
    fs = float(font_size)
    out: List[str] = []
    for para in text.split("\n"):
        if _line_em(f, para) * fs <= max_width:
            out.append(para)
            continue
        lines = [line for line, _ in layout_lines(para, f, fs, max_width, True, _break_before, 0.0, True)]
        for line in lines[:-1]:
            out.append(line.rstrip())
        last = lines[-1] if lines else ""
        if _line_em(f, last) * fs > max_width:  # trimLine: keep only the trailing spaces that fit
            body = last.rstrip()
            w = _line_em(f, body) * fs
            for ch in last[len(body):]:
                w += _line_em(f, ch) * fs
                if w > max_width:
                    break
                body += ch
            last = body
        out.append(last)
    return "\n".join(out)


def measure_text(text: str, font_family: Any = DEFAULT_FONT_FAMILY, font_size: float = DEFAULT_FONT_SIZE,
                 line_height: Optional[float] = None) -> Tuple[float, float]:
    """``(width, height)`` of already wrapped text (Excalidraw's ``measureText``).

    Examples
    --------
    >>> measure_text("ab\\ncd", 3, 10.0, 1.2)  # Cascadia: 1200 / 2048 em a character
    (11.71875, 24.0)
    """
    lh = default_line_height(font_family) if line_height is None else float(line_height)
    lines = [line or " " for line in _normalize(text).split("\n")]
    fs = float(font_size)
    f = _font(font_family)
    return (max(_line_em(f, line) for line in lines) * fs, fs * lh * len(lines))  # JS order: ceil() sees it


def text_element_size(text: str, font_family: Any = DEFAULT_FONT_FAMILY, font_size: float = DEFAULT_FONT_SIZE,
                      line_height: Optional[float] = None, auto_resize: bool = True,
                      width: Optional[float] = None) -> Tuple[str, float, float]:
    """``(text, width, height)`` of a free text element after its text or font changed.

    An auto-resizing text takes its measured width; one with ``autoResize`` false keeps
    ``width`` and wraps at it (``refreshTextDimensions``).

    Examples
    --------
    >>> text_element_size("aaa bbb", 3, 10.0, 1.25, auto_resize=False, width=40.0)
    ('aaa\\nbbb', 40.0, 25.0)
    """
    fixed = not auto_resize and width is not None
    shown = wrap_text(text, font_family, font_size, width) if fixed else text
    w, h = measure_text(shown, font_family, font_size, line_height)
    return (shown, float(width) if fixed else w, h)  # type: ignore[arg-type]


def bound_text_max_width(container_type: str, width: float, font_size: float = DEFAULT_FONT_SIZE) -> float:
    """Width a container's text wraps at (``getBoundTextMaxWidth``).

    Examples
    --------
    >>> bound_text_max_width("rectangle", 160), bound_text_max_width("ellipse", 160), bound_text_max_width("diamond", 160)
    (150.0, 103.0, 70.0)
    """
    if container_type == "arrow":
        return max(ARROW_LABEL_WIDTH_FRACTION * width, font_size * ARROW_LABEL_FONT_SIZE_TO_MIN_WIDTH_RATIO)
    if container_type == "ellipse":
        return _js_round(width / 2 * math.sqrt(2)) - BOUND_TEXT_PADDING * 2
    if container_type == "diamond":
        return _js_round(width / 2) - BOUND_TEXT_PADDING * 2
    return width - BOUND_TEXT_PADDING * 2


def bound_text_max_height(container_type: str, height: float, text_height: float = 0.0) -> float:
    """Height a container holds its text in before it grows (``getBoundTextMaxHeight``).

    Examples
    --------
    >>> bound_text_max_height("rectangle", 80), bound_text_max_height("diamond", 80)
    (70.0, 30.0)
    """
    if container_type == "arrow":
        return text_height if height - BOUND_TEXT_PADDING * 16 <= 0 else height
    if container_type == "ellipse":
        return _js_round(height / 2 * math.sqrt(2)) - BOUND_TEXT_PADDING * 2
    if container_type == "diamond":
        return _js_round(height / 2) - BOUND_TEXT_PADDING * 2
    return height - BOUND_TEXT_PADDING * 2


def container_dimension(dimension: float, container_type: str) -> float:
    """Container width or height that holds text of this size (``computeContainerDimensionForBoundText``).

    Examples
    --------
    >>> container_dimension(24.5, "rectangle"), container_dimension(24.5, "ellipse"), container_dimension(24.5, "diamond")
    (35.0, 49.0, 70.0)
    """
    d = float(math.ceil(dimension))
    pad = BOUND_TEXT_PADDING * 2
    if container_type == "ellipse":
        return float(_js_round((d + pad) / math.sqrt(2) * 2))
    if container_type == "arrow":
        return d + pad * 8
    if container_type == "diamond":
        return 2 * (d + pad)
    return d + pad


def _js_round(x: float) -> float:
    # JavaScript's Math.round: halves go up
    return float(math.floor(x + 0.5))


def bound_text_layout(text: str, container_type: str, width: float, height: float,
                      font_family: Any = DEFAULT_FONT_FAMILY, font_size: float = DEFAULT_FONT_SIZE,
                      line_height: Optional[float] = None, text_align: Any = "center",
                      vertical_align: Any = "middle") -> Dict[str, Any]:
    """A container's bound text as Excalidraw lays it out after an edit (``redrawTextBoundingBox``).

    Parameters
    ----------
    text : str
        The container's text (``originalText``).
    container_type : str
        ``rectangle``, ``ellipse``, ``diamond`` or ``arrow``.
    width, height : float
        The container's size.
    font_family, font_size, line_height, text_align, vertical_align
        The bound text element's fields.

    Returns
    -------
    dict
        ``text`` (wrapped), ``width``, ``height`` of the text element; ``container_w``,
        ``container_h``: the container's size, grown when the text does not fit; ``dx``,
        ``dy``: the text's top-left corner from the container's, unrotated (arrows:
        centred on the container's box; Excalidraw puts an arrow's label at its
        midpoint itself).

    Raises
    ------
    InvalidInputError
        A container type Excalidraw does not bind text to.

    Examples
    --------
    >>> lay = bound_text_layout("aaa bbb", "rectangle", 50.0, 20.0, 3, 10.0, 1.25)
    >>> lay["text"], lay["width"], lay["height"], lay["container_h"], lay["dx"], lay["dy"]
    ('aaa\\nbbb', 17.578125, 25.0, 35.0, 16.2109375, 5.0)
    """
    if container_type not in _CONTAINERS:
        raise InvalidInputError(f"Excalidraw binds text to rectangles, ellipses, diamonds and arrows, "
                                f"not to a {container_type!r}")
    fs = float(font_size)
    max_w = bound_text_max_width(container_type, width, fs)
    shown = wrap_text(text, font_family, fs, max_w)
    tw, th = measure_text(shown, font_family, fs, line_height)
    cw, ch = float(width), float(height)
    if container_type != "arrow" and th > bound_text_max_height(container_type, ch, th):
        ch = container_dimension(th, container_type)
    if tw > max_w:
        cw = container_dimension(tw, container_type)
    if container_type == "arrow":
        return {"text": shown, "width": tw, "height": th, "container_w": cw, "container_h": ch,
                "dx": (cw - tw) / 2, "dy": (ch - th) / 2}
    max_w = bound_text_max_width(container_type, cw, fs)
    max_h = bound_text_max_height(container_type, ch, th)
    ox = oy = BOUND_TEXT_PADDING
    if container_type == "ellipse":
        ox += cw / 2 * (1 - math.sqrt(2) / 2)
        oy += ch / 2 * (1 - math.sqrt(2) / 2)
    elif container_type == "diamond":
        ox += cw / 4
        oy += ch / 4
    dy = oy if vertical_align == "top" else oy + (max_h - th) if vertical_align == "bottom" else oy + (max_h / 2 - th / 2)
    dx = ox if text_align == "left" else ox + (max_w - tw) if text_align == "right" else ox + (max_w / 2 - tw / 2)
    return {"text": shown, "width": tw, "height": th, "container_w": cw, "container_h": ch, "dx": dx, "dy": dy}


def _num(v: Any, default: float) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        return default
    return float(v)


def label_fields(style: Mapping[str, Any], raw: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """Font fields of a text or a container's bound text: the element's, else the node style's, else defaults.

    Examples
    --------
    >>> label_fields({"fontSize": 28})["fontSize"], label_fields({}, {"fontFamily": 5})["lineHeight"]
    (28.0, 1.25)
    """
    src: Mapping[str, Any] = raw if raw is not None else {}
    fam = src.get("fontFamily", style.get("fontFamily"))
    fid = _family(fam)
    return {"fontSize": _num(src.get("fontSize", style.get("fontSize")), DEFAULT_FONT_SIZE), "fontFamily": fid,
            "lineHeight": _num(src.get("lineHeight"), default_line_height(fid)),
            "textAlign": src.get("textAlign", style.get("textAlign", "center")),
            "verticalAlign": src.get("verticalAlign", style.get("verticalAlign", "middle"))}


_FONT_KEYS = ("fontSize", "fontFamily")


def bound_label(elements: Sequence[Any], container_id: str, style: Mapping[str, Any]) -> Dict[str, Any]:
    """Font fields of a container's bound text: its live text element in ``elements``, else the style's.

    Examples
    --------
    >>> bound_label([{"id": "t", "type": "text", "containerId": "r", "fontSize": 28}], "r", {})["fontSize"]
    28.0
    """
    for e in elements:
        if (isinstance(e, Mapping) and e.get("type") == "text" and e.get("containerId") == container_id
                and not e.get("isDeleted")):
            return label_fields(style, e)
    return label_fields(style)


def fit_new_excalidraw_text(new: Dict[str, Any]) -> None:
    """Measure a text node being created in an Excalidraw document; ``new`` changes in place.

    Excalidraw makes a new text as wide as it measures (or wraps it at its width when
    ``autoResize`` is false) and ``lines × fontSize × lineHeight`` high; the node keeps
    its top-left corner. A new rectangle, ellipse or diamond with text grows to hold it.

    Examples
    --------
    >>> new = {"type": "text", "x": 0.0, "y": 0.0, "w": 500.0, "h": 10.0, "text": "abcd",
    ...        "style": {"fontSize": 10, "fontFamily": 3}, "props": {}}
    >>> fit_new_excalidraw_text(new)
    >>> new["w"], new["h"]
    (23.4375, 12.0)
    """
    if not new.get("text"):
        return
    old = dict(new, text="", w=new.get("w") or 0.0, style={})
    if new.get("type") == "text":
        props = new.get("props") or {}
        f = label_fields(new.get("style") or {}, {k: props[k] for k in ("lineHeight",) if k in props})
        _, w, h = text_element_size(new["text"], f["fontFamily"], f["fontSize"], f["lineHeight"],
                                    props.get("autoResize", True) is not False, float(new.get("w") or 0.0))
        new["w"], new["h"] = w, h
    else:
        refit_excalidraw_text(old, new)


def refit_excalidraw_text(old: Mapping[str, Any], new: Dict[str, Any],
                          label: Optional[Mapping[str, Any]] = None, elements: Sequence[Any] = ()) -> None:
    """Re-measure an Excalidraw text or a container's bound text after an edit; ``new`` changes in place.

    * a text node (``type`` text) whose text, ``fontSize``, ``fontFamily`` or
      ``lineHeight`` changed takes Excalidraw's size: measured width (or its own width,
      wrapping, when ``autoResize`` is false) and ``lines × fontSize × lineHeight``; an
      auto-resizing one keeps its ``textAlign`` side in place (``getAdjustedDimensions``);
    * a container (rectangle, ellipse, diamond) whose text changed grows to hold it,
      downwards and to the right (``redrawTextBoundingBox``); ``label`` holds the
      bound text element's font fields (see :func:`label_fields`), else they are read
      from the raw scene ``elements`` (see :func:`bound_label`).

    Examples
    --------
    >>> old = {"type": "text", "x": 0.0, "y": 0.0, "w": 10.0, "h": 25.0, "rotation": 0.0, "text": "a",
    ...        "style": {"fontSize": 10, "fontFamily": 3, "textAlign": "left"}, "props": {"lineHeight": 1.25}}
    >>> new = dict(old, text="abcd\\nab")
    >>> refit_excalidraw_text(old, new)
    >>> new["w"], new["h"]
    (23.4375, 25.0)
    """
    t = new.get("type")
    text = new.get("text") or ""
    style = new.get("style") or {}
    ostyle = old.get("style") or {}
    props = new.get("props") or {}
    oprops = old.get("props") or {}
    text_changed = text != (old.get("text") or "")
    font_changed = any(style.get(k) != ostyle.get(k) for k in _FONT_KEYS) or props.get("lineHeight") != oprops.get(
        "lineHeight")
    if t == "text":
        auto = props.get("autoResize", True) is not False
        if not (text_changed or font_changed or (not auto and new.get("w") != old.get("w"))):
            return
        f = label_fields(style, {k: props[k] for k in ("lineHeight",) if k in props})
        _, w, h = text_element_size(text, f["fontFamily"], f["fontSize"], f["lineHeight"], auto,
                                    float(new.get("w") or 0.0))
        if auto:
            align = style.get("textAlign", "left")
            dw = w - float(old.get("w") or 0.0)
            dx = dw / 2 if align == "center" else dw if align == "right" else 0.0
            if dx:
                r = float(new.get("rotation") or 0.0)
                new["x"] = float(new["x"]) - dx * math.cos(r)
                new["y"] = float(new["y"]) - dx * math.sin(r)
        new["w"], new["h"] = w, h
    elif t in ("rectangle", "ellipse", "diamond") and text and (text_changed or font_changed):
        f = dict(label) if label is not None else bound_label(elements, str(new.get("id")), style)
        lay = bound_text_layout(text, t, float(new.get("w") or 0.0), float(new.get("h") or 0.0), f["fontFamily"],
                                f["fontSize"], f["lineHeight"], f["textAlign"], f["verticalAlign"])
        new["w"], new["h"] = lay["container_w"], lay["container_h"]
