"""HTML as a layout notation for canvas nodes (the ``parse_html`` op).

An agent describes a piece of layout as an HTML fragment with inline styles; this
module reads it with the standard library's :mod:`html.parser` (no browser, no
network, nothing is executed or fetched) and lays it out with a small block/flex
model into node records that the executor adds to the canvas.

Tag mapping
-----------
========================  ==================================================
tags                      node
========================  ==================================================
h1–h6, p, span, a,        ``text`` node holding the element's text (inline
button, label, strong,    children flattened into it, ``<br>`` a line break);
em, b, i, u, s, small,    a text tag that holds an image or a container tag
code, pre, blockquote,    becomes a container instead
td, th, dt, dd, li-free
text such as figcaption,
caption, legend,
summary, option, mark,
cite, q,
time, sub, sup, abbr,
input, textarea, select
div, section, header,     ``container`` node; runs of loose text inside it
footer, nav, main,        become ``text`` children. Any tag not listed here
article, aside, ul, ol,   is read as a container too
li, form, figure, table,
thead, tbody, tfoot, tr,
fieldset, details, dl,
menu, hgroup, address,
hr
img, svg                  ``image`` node (``src``/``alt`` in props; an svg's
                          markup kept in ``props["svg"]``, its inner tags
                          not turned into nodes)
html, body                transparent: their children are read in place
script, style, meta,      ignored with all their content
link, head, title,
noscript, template, base
========================  ==================================================

Attributes: ``id`` (or ``data-ref``) names the new node for later ops (an alias);
a container's name is ``aria-label``, ``data-name``, ``title`` or ``id``, else the
tag. Inline ``style`` declarations are stored as the node's style after the one
sanitizer (:func:`~spatialobs.canvas.sanitize_style`: keys normalized to
camelCase, empty values dropped, numeric strings coerced); lengths in ``px`` are
written as plain numbers first (the canvas unit is the CSS pixel). Text inherits
``color``, ``font-*``, ``line-height``, ``letter-spacing`` and ``text-align``
from its ancestors; headings get their browser default font size and weight.

Layout (*ours*, a small subset of CSS): block flow top to bottom by default;
``display: flex`` with ``flex-direction: row`` lays children left to right
(``flex-grow``/``flex: N`` share the free width; ``justify-content`` center /
end / space-between and ``align-items`` center / end are honoured);
``display: grid`` with ``grid-template-columns`` of N tracks wraps children into
N equal columns; ``width``, ``height`` (px, %, em, rem), ``min-``/``max-width``,
``padding``, ``margin`` and ``gap`` shorthands are honoured; ``position:
absolute`` with ``left``/``top`` takes an element out of the flow.

Text size: for a document written as tldraw (``layout_fragment(..., tldraw=True)``,
what ``parse_html`` does on a tldraw canvas) each text element becomes a tldraw
text record with tldraw's size step and font mapped from its CSS (``font-size``
to the nearest of s/m/l/xl, ``font-family`` to draw/sans/serif/mono, sans when
none is named) and measured with tldraw's font metrics; text that fits the width
the layout gives it is auto-size, text that does not is fixed at that width
(``autoSize: false``) and wraps there, so the editor draws it where the layout
put it; ``line-height`` does not apply (tldraw's is 1.35). Otherwise the size is
estimated (0.55 em per character, wrapped at word boundaries, 1.2 em lines).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Dict, List, Optional, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.limits import current as current_limits
from spatialobs.canvas.document.sanitize import normalize_style_key, sanitize_style

__all__ = ["Element", "parse_fragment", "layout_fragment", "tldraw_text", "TLDRAW_HTML_FONT", "TEXT_TAGS", "CONTAINER_TAGS", "IMAGE_TAGS",
           "IGNORED_TAGS", "TRANSPARENT_TAGS", "MAX_HTML_CHARS"]

TEXT_TAGS = frozenset({
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "span", "a", "button", "label", "strong", "em", "b", "i",
    "u", "s", "small", "code", "pre", "blockquote", "td", "th", "dt", "dd", "figcaption", "caption",
    "legend", "summary", "option", "mark", "cite", "q", "time", "sub", "sup", "abbr", "input", "textarea",
    "select", "kbd", "samp", "var", "del", "ins",
})
CONTAINER_TAGS = frozenset({
    "div", "section", "header", "footer", "nav", "main", "article", "aside", "ul", "ol", "li", "form",
    "figure", "table", "thead", "tbody", "tfoot", "tr", "fieldset", "details", "dl", "menu", "hgroup",
    "address", "hr",
})
IMAGE_TAGS = frozenset({"img", "svg"})
IGNORED_TAGS = frozenset({"script", "style", "meta", "link", "head", "title", "noscript", "template", "base"})
TRANSPARENT_TAGS = frozenset({"html", "body"})
#: Longest fragment accepted (characters).
MAX_HTML_CHARS = 2_000_000
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                   "track", "wbr", "param"})
_INHERITED = ("color", "fontSize", "fontFamily", "fontWeight", "fontStyle", "lineHeight", "letterSpacing",
              "textAlign")
_HEADINGS = {"h1": 32.0, "h2": 24.0, "h3": 18.72, "h4": 16.0, "h5": 13.28, "h6": 10.72, "small": 13.33}
_BASE_FONT = 16.0
_LINE = 1.2
_GLYPH = 0.55
_LENGTH = re.compile(r"^\s*(-?(?:\d+\.?\d*|\.\d+))\s*(px|%|em|rem)?\s*$", re.I)


@dataclass
class Element:
    """One element of a parsed fragment (before layout).

    Attributes
    ----------
    tag : str
    kind : str
        ``"container"``, ``"text"`` or ``"image"``.
    attrs : dict
    css : dict
        Inline style declarations, keys normalized, values as written (``px`` stripped).
    text : str or None
        A text element's text.
    children : list of Element
    """

    tag: str
    kind: str
    attrs: Dict[str, str] = field(default_factory=dict)
    css: Dict[str, str] = field(default_factory=dict)
    text: Optional[str] = None
    children: List["Element"] = field(default_factory=list)
    parts: List[Any] = field(default_factory=list)  # text pieces and inline elements while parsing


def _parse_css(decl: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for part in decl.split(";"):
        if ":" not in part:
            continue
        k, v = part.split(":", 1)
        k, v = k.strip(), v.strip()
        if v.lower().endswith("!important"):
            v = v[:-len("!important")].strip()
        if not k:
            continue
        m = re.fullmatch(r"(-?(?:\d+\.?\d*|\.\d+))px", v, re.I)
        out[normalize_style_key(k.lower() if "-" in k else k)] = m.group(1) if m else v
    return out


class _Reader(HTMLParser):
    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.source = source
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self.root = Element("#root", "container")
        self.stack: List[Element] = [self.root]
        self.skip: List[str] = []       # open ignored tags
        self.svg_depth = 0
        self.svg_start = 0

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def _close_to(self, tag: str) -> None:
        for k in range(len(self.stack) - 1, 0, -1):
            if self.stack[k].tag == tag:
                del self.stack[k:]
                return

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self._start(tag, attrs, void=tag in _VOID)

    def handle_startendtag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self._start(tag, attrs, void=True)

    def _start(self, tag: str, attrs: List[Tuple[str, Optional[str]]], void: bool) -> None:
        if self.svg_depth:
            if tag == "svg" and not void:
                self.svg_depth += 1
            return
        if self.skip:
            if tag in IGNORED_TAGS and tag not in _VOID and not void:
                self.skip.append(tag)
            return
        if tag in IGNORED_TAGS:
            if tag not in _VOID and not void:
                self.skip.append(tag)
            return
        if tag in TRANSPARENT_TAGS:
            return
        top = self.stack[-1]
        if tag == "br":
            top.parts.append("\n")
            return
        a = {k: (v if v is not None else "") for k, v in attrs}
        # implied end tags: a new list item closes the open one, a block closes an open <p>
        if tag == "li":
            for k in range(len(self.stack) - 1, 0, -1):
                t = self.stack[k].tag
                if t in ("ul", "ol", "menu"):
                    break
                if t == "li":
                    del self.stack[k:]
                    break
        elif tag in CONTAINER_TAGS and self.stack[-1].tag == "p":
            self.stack.pop()
        top = self.stack[-1]
        kind = "image" if tag in IMAGE_TAGS else "text" if tag in TEXT_TAGS else "container"
        el = Element(tag, kind, a, _parse_css(a.get("style", "")))
        top.parts.append(el)
        if tag == "svg":
            if void:
                el.attrs["svg"] = self.source[self._offset():self._tag_end(self._offset())]
            else:
                self.svg_depth = 1
                self.svg_start = self._offset()
                self.stack.append(el)
            return
        if not void:
            if len(self.stack) > current_limits().max_html_depth:
                raise InvalidInputError(f"parse_html: elements nest deeper than {current_limits().max_html_depth} "
                                        "levels (CanvasLimits.max_html_depth)")
            self.stack.append(el)

    def _tag_end(self, start: int) -> int:
        end = self.source.find(">", start)
        return len(self.source) if end < 0 else end + 1

    def handle_endtag(self, tag: str) -> None:
        if self.svg_depth:
            if tag == "svg":
                self.svg_depth -= 1
                if not self.svg_depth:
                    el = self.stack.pop()
                    el.attrs["svg"] = self.source[self.svg_start:self._tag_end(self._offset())]
            return
        if self.skip:
            if tag == self.skip[-1]:
                self.skip.pop()
            return
        if tag in TRANSPARENT_TAGS or tag in _VOID:
            return
        self._close_to(tag)

    def handle_data(self, data: str) -> None:
        if self.svg_depth or self.skip:
            return
        self.stack[-1].parts.append(data)


def _collapse(s: str, pre: bool) -> str:
    if pre:
        return s
    lines = [re.sub(r"[ \t\r\f\v]+", " ", ln.replace("\n", " ")) for ln in s.split("\x00")]
    return "\n".join(ln.strip() for ln in lines).strip()


def _has_block(el: Element) -> bool:
    return any(isinstance(p, Element) and (p.kind != "text" or _has_block(p)) for p in el.parts)


def _finish(el: Element, pre: bool = False) -> None:
    """Turn parsing parts into children and texts."""
    pre = pre or el.tag == "pre"
    if el.kind == "text" and _has_block(el):
        el.kind = "container"
    if el.kind == "text":
        pieces: List[str] = []

        def walk(e: Element) -> None:
            if e.tag in ("input", "textarea", "select"):
                pieces.append(e.attrs.get("value") or e.attrs.get("placeholder") or "")
            for p in e.parts:
                if isinstance(p, str):
                    pieces.append("\x00" if p == "\n" else p)
                else:
                    walk(p)

        walk(el)
        raw = "".join(pieces)
        el.text = raw.replace("\x00", "\n") if pre else _collapse(raw, False)
        el.parts = []
        return
    if el.kind == "image":
        el.parts = []
        return
    run: List[str] = []

    def flush() -> None:
        t = _collapse("".join(run), pre) if not pre else "".join(run).replace("\x00", "\n")
        run.clear()
        if t.strip():
            el.children.append(Element("#text", "text", text=t))

    for p in el.parts:
        if isinstance(p, str):
            run.append("\x00" if p == "\n" else p)
        else:
            flush()
            _finish(p, pre)
            el.children.append(p)
    flush()
    el.parts = []


def parse_fragment(html: str) -> List[Element]:
    """Parse an HTML fragment into a tree of :class:`Element` (top-level elements).

    Raises
    ------
    InvalidInputError
        ``html`` is not a string or longer than :data:`MAX_HTML_CHARS`.

    Examples
    --------
    >>> [e.tag for e in parse_fragment("<div><h1>Hi</h1><script>x()</script></div>")[0].children]
    ['h1']
    """
    if not isinstance(html, str):
        raise InvalidInputError(f"parse_html: html must be a string, got {type(html).__name__}")
    if len(html) > MAX_HTML_CHARS:
        raise InvalidInputError(f"parse_html: html is {len(html)} characters, more than {MAX_HTML_CHARS}")
    r = _Reader(html)
    r.feed(html)
    r.close()
    _finish(r.root)
    return r.root.children


# ---------------------------------------------------------------------- layout
def _length(v: Any, ref: Optional[float], font: float) -> Optional[float]:
    if v is None:
        return None
    m = _LENGTH.match(str(v))
    if not m:
        return None
    x = float(m.group(1))
    unit = (m.group(2) or "px").lower()
    if unit == "%":
        return None if ref is None else ref * x / 100.0
    if unit == "em":
        return x * font
    if unit == "rem":
        return x * _BASE_FONT
    return x


def _box4(css: Dict[str, str], key: str, ref: Optional[float], font: float) -> List[float]:
    """[top, right, bottom, left] of a padding/margin shorthand and its longhands."""
    vals = [0.0, 0.0, 0.0, 0.0]
    short = css.get(key)
    if short:
        parts = [(_length(p, ref, font) or 0.0) for p in str(short).split()]
        if len(parts) == 1:
            vals = parts * 4
        elif len(parts) == 2:
            vals = [parts[0], parts[1], parts[0], parts[1]]
        elif len(parts) == 3:
            vals = [parts[0], parts[1], parts[2], parts[1]]
        elif len(parts) >= 4:
            vals = parts[:4]
    for k, side in enumerate(("Top", "Right", "Bottom", "Left")):
        v = _length(css.get(key + side), ref, font)
        if v is not None:
            vals[k] = v
    return vals


@dataclass
class _Box:
    el: Element
    style: Dict[str, Any]
    font: float
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    children: List["_Box"] = field(default_factory=list)
    absolute: bool = False
    tl: Optional[Dict[str, Any]] = None  # a tldraw text record: its style, autoSize, size and offset in the box


#: tldraw font of HTML text whose font-family names none (*ours*: browsers default to a sans or serif face).
TLDRAW_HTML_FONT = "sans"


def tldraw_text(text: str, font_px: float, family: Any, align: Any, avail: Optional[float],
                block: bool) -> Dict[str, Any]:
    """The tldraw text record HTML text becomes in a document written as tldraw.

    The CSS font size maps to the nearest of tldraw's size steps and the family to
    one of its four fonts (:func:`~spatialobs.canvas.formats.tldraw_schema.map_size`,
    :func:`~spatialobs.canvas.formats.tldraw_schema.map_font`); the text is measured
    with tldraw's metrics (:func:`~spatialobs.canvas.document.textmeasure.text_shape_size`).
    Text that fits the width the layout gives it is auto-size; text that does not,
    and block text aligned to the centre or end, is fixed at that width and wraps.

    Returns
    -------
    dict
        ``style`` (``size``, ``font``, ``textAlign``), ``autoSize``, ``w``, ``h``.

    Examples
    --------
    >>> r = tldraw_text("Hello there", 16.0, "Georgia, serif", None, 400.0, True)
    >>> r["style"], r["autoSize"], r["h"]
    ({'size': 's', 'font': 'serif', 'textAlign': 'start'}, True, 24.0)
    >>> tldraw_text("several words that wrap", 16.0, None, None, 60.0, True)["autoSize"]
    False
    """
    from spatialobs.canvas.document.textmeasure import text_shape_size
    from spatialobs.canvas.formats import tldraw_schema as tschema

    size = tschema.map_size(font_px if font_px > 0 else _BASE_FONT, "text").to
    try:
        font = tschema.map_font(family).to if family else TLDRAW_HTML_FONT
    except tschema.UnmappableValueError:
        font = TLDRAW_HTML_FONT
    try:
        talign = tschema.map_text_align(align).to if align else "start"
    except tschema.UnmappableValueError:
        talign = "start"
    w, h = text_shape_size(text, font, size, 1.0, None, True)
    auto = avail is None or (w <= avail and not (block and talign != "start"))
    if not auto:
        w, h = text_shape_size(text, font, size, 1.0, avail, False)
    return {"style": {"size": size, "font": font, "textAlign": talign}, "autoSize": auto, "w": w, "h": h}


def _text_size(text: str, font: float, avail: Optional[float], css: Dict[str, str], inherited: Dict[str, Any]) -> Tuple[float, float]:
    lh_raw = css.get("lineHeight", inherited.get("lineHeight"))
    lh = font * _LINE
    if lh_raw is not None:
        m = _LENGTH.match(str(lh_raw))
        if m:
            lh = float(m.group(1)) * (font if not m.group(2) or m.group(2).lower() == "em" else 1.0)
            if m.group(2) == "%":
                lh = font * float(m.group(1)) / 100.0
    cw = font * _GLYPH
    lines = 0
    widest = 0.0
    for hard in (text or "").split("\n"):
        words = hard.split(" ")
        cur = 0.0
        n_lines = 1
        for wd in words:
            ww = len(wd) * cw
            add = ww if cur == 0 else cur + cw + ww
            if avail is not None and cur > 0 and add > avail:
                widest = max(widest, cur)
                n_lines += 1
                cur = ww
            else:
                cur = add
        widest = max(widest, cur)
        lines += n_lines
    w = widest if avail is None else min(widest, avail)
    return max(w, 0.0), max(lines, 1) * lh


def _style_of(el: Element, inherited: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any], float]:
    css = dict(el.css)
    if el.tag in _HEADINGS and "fontSize" not in css:
        css["fontSize"] = str(_HEADINGS[el.tag])
    if el.tag in ("h1", "h2", "h3", "h4", "h5", "h6", "strong", "b", "th") and "fontWeight" not in css:
        css["fontWeight"] = "bold"
    parent_font = float(inherited.get("_font", _BASE_FONT))
    font = _length(css.get("fontSize"), parent_font, parent_font) or parent_font
    if "fontSize" in css and _length(css["fontSize"], parent_font, parent_font) is not None:
        css["fontSize"] = _fmt(font)
    inh = {k: inherited[k] for k in _INHERITED if k in inherited}
    if el.kind == "text":
        own = {**inh, **css}
    else:
        own = css
    child_inh = dict(inherited)
    for k in _INHERITED:
        if k in css:
            child_inh[k] = css[k]
    child_inh["_font"] = font
    return own, child_inh, font


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(round(v, 4))


def _measure(el: Element, avail: Optional[float], inherited: Dict[str, Any], in_row: bool) -> _Box:
    """Lay out ``el`` given the width available to it; positions of children are local."""
    own, child_inh, font = _style_of(el, inherited)
    css = el.css
    box = _Box(el, own, font)
    box.absolute = str(css.get("position", "")).lower() in ("absolute", "fixed")
    margin = _box4(css, "margin", avail, font)
    pad = _box4(css, "padding", avail, font)
    width = _length(css.get("width"), avail, font)
    height = _length(css.get("height"), None, font)
    min_w = _length(css.get("minWidth"), avail, font)
    max_w = _length(css.get("maxWidth"), avail, font)
    outer_avail = None if avail is None else max(avail - margin[1] - margin[3], 0.0)

    def clamp_w(w: float) -> float:
        if max_w is not None:
            w = min(w, max_w)
        if min_w is not None:
            w = max(w, min_w)
        return max(w, 0.0)

    if el.kind == "text":
        block = not in_row and not box.absolute and el.tag not in ("span", "a", "strong", "em", "b", "i", "button", "label", "input")
        inner_avail = None if (width is None and outer_avail is None) else (width if width is not None else outer_avail)
        if inner_avail is not None:
            inner_avail = max(clamp_w(inner_avail) - pad[1] - pad[3], 0.0)
        if inherited.get("_tldraw"):
            # a tldraw text record: tldraw's size, font and metrics; padding stays around it
            tl = tldraw_text(el.text or "", font, own.get("fontFamily"), own.get("textAlign"), inner_avail, block)
            tl["dx"], tl["dy"] = pad[3], pad[0]
            box.tl = tl
            box.w = clamp_w(tl["w"] + pad[1] + pad[3]) if width is None else clamp_w(width)
            box.h = height if height is not None else tl["h"] + pad[0] + pad[2]
            return box
        tw, th = _text_size(el.text or "", font, inner_avail, css, inherited)
        if width is not None:
            box.w = clamp_w(width)
        elif block and outer_avail is not None:
            box.w = clamp_w(outer_avail)
        else:
            box.w = clamp_w(tw + pad[1] + pad[3])
        box.h = height if height is not None else th + pad[0] + pad[2]
        return box
    if el.kind == "image":
        aw = el.attrs.get("width")
        ah = el.attrs.get("height")
        w = width if width is not None else _length(aw, avail, font)
        h = height if height is not None else _length(ah, None, font)
        ratio = None
        vb = el.attrs.get("viewbox") or el.attrs.get("viewBox")
        if vb:
            nums = [float(t) for t in re.findall(r"-?\d+\.?\d*", vb)[:4]]
            if len(nums) == 4 and nums[2] > 0 and nums[3] > 0:
                ratio = nums[3] / nums[2]
        if w is None:
            w = 100.0 if h is None else (h / ratio if ratio else h)
        if h is None:
            h = w * ratio if ratio else w
        box.w, box.h = clamp_w(float(w)), max(float(h), 0.0)
        return box
    # container
    display = str(css.get("display", "")).lower()
    direction = str(css.get("flexDirection", "row" if display in ("flex", "inline-flex") else "column")).lower()
    row = display in ("flex", "inline-flex") and direction.startswith("row")
    grid_cols = 0
    if display in ("grid", "inline-grid"):
        tmpl = str(css.get("gridTemplateColumns", ""))
        m = re.match(r"\s*repeat\(\s*(\d+)", tmpl)
        grid_cols = int(m.group(1)) if m else len(tmpl.split()) or 1
    gap_all = _length(css.get("gap"), avail, font) or 0.0
    col_gap = _length(css.get("columnGap"), avail, font)
    row_gap = _length(css.get("rowGap"), avail, font)
    col_gap = gap_all if col_gap is None else col_gap
    row_gap = gap_all if row_gap is None else row_gap
    if width is not None:
        outer_w: Optional[float] = clamp_w(width)
    elif outer_avail is not None and not in_row and not box.absolute:
        outer_w = clamp_w(outer_avail)
    else:
        outer_w = None  # shrink to fit
    content_avail = None if outer_w is None else max(outer_w - pad[1] - pad[3], 0.0)
    if content_avail is None and outer_avail is not None:
        content_avail = max(clamp_w(outer_avail) - pad[1] - pad[3], 0.0)
    flow = [c for c in el.children]
    kids: List[_Box] = []
    content_w = 0.0
    content_h = 0.0
    if row:
        boxes = [_measure(c, content_avail, child_inh, True) for c in flow]
        inflow = [b for b in boxes if not b.absolute]
        grows = [float(_length(b.el.css.get("flexGrow", _flex_grow(b.el.css)), None, font) or 0.0) for b in inflow]
        used = sum(b.w for b in inflow) + col_gap * max(len(inflow) - 1, 0)
        free = (content_avail - used) if content_avail is not None else 0.0
        if free > 0 and sum(grows) > 0:
            for b, g in zip(inflow, grows):
                if g > 0:
                    b.w += free * g / sum(grows)
                    b2 = _measure(b.el, b.w, child_inh, False)
                    b.h, b.children = b2.h, b2.children
            free = 0.0
        just = str(css.get("justifyContent", "")).lower()
        x = 0.0
        step = col_gap
        if content_avail is not None and free > 0:
            if just in ("center",):
                x = free / 2
            elif just in ("flex-end", "end", "right"):
                x = free
            elif just == "space-between" and len(inflow) > 1:
                step = col_gap + free / (len(inflow) - 1)
        line_h = max((b.h for b in inflow), default=0.0)
        align = str(css.get("alignItems", "")).lower()
        for b in inflow:
            b.x = x
            b.y = (line_h - b.h) / 2 if align == "center" else (line_h - b.h) if align in ("flex-end", "end") else 0.0
            x += b.w + step
        content_w = (x - step) if inflow else 0.0
        if content_avail is not None and free > 0 and just in ("center", "flex-end", "end", "right", "space-between"):
            content_w = content_avail
        content_h = line_h
        kids = boxes
    elif grid_cols:
        cw = None if content_avail is None else max((content_avail - col_gap * (grid_cols - 1)) / grid_cols, 0.0)
        boxes = [_measure(c, cw, child_inh, False) for c in flow]
        inflow = [b for b in boxes if not b.absolute]
        y = 0.0
        for r in range(0, len(inflow), grid_cols):
            cells = inflow[r:r + grid_cols]
            rh = max(b.h for b in cells)
            for k, b in enumerate(cells):
                b.x = k * ((cw if cw is not None else max(bb.w for bb in inflow)) + col_gap)
                b.y = y
            y += rh + row_gap
        content_h = (y - row_gap) if inflow else 0.0
        content_w = max((b.x + b.w for b in inflow), default=0.0)
        kids = boxes
    else:
        boxes = [_measure(c, content_avail, child_inh, False) for c in flow]
        y = 0.0
        inflow = [b for b in boxes if not b.absolute]
        for b in inflow:
            b.x, b.y = 0.0, y
            y += b.h + row_gap
        content_h = (y - row_gap) if inflow else 0.0
        content_w = max((b.w for b in inflow), default=0.0)
        kids = boxes
    for b in kids:
        bm = _box4(b.el.css, "margin", content_avail, b.font)
        if b.absolute:
            b.x = _length(b.el.css.get("left"), content_avail, b.font) or 0.0
            b.y = _length(b.el.css.get("top"), None, b.font) or 0.0
        else:
            b.x += pad[3] + bm[3]
            b.y += pad[0] + bm[0]
    # margins in the flow push later siblings: re-stack with outer sizes
    _apply_margins(kids, row, grid_cols)
    inflow = [b for b in kids if not b.absolute]
    if inflow and not row and not grid_cols:
        content_h = max(b.y + b.h + _box4(b.el.css, "margin", content_avail, b.font)[2] for b in inflow) - pad[0]
    box.w = outer_w if outer_w is not None else clamp_w(content_w + pad[1] + pad[3])
    if el.tag == "hr" and height is None:
        box.h = 1.0
    else:
        box.h = height if height is not None else content_h + pad[0] + pad[2]
    box.children = kids
    return box


def _flex_grow(css: Dict[str, str]) -> Optional[str]:
    f = css.get("flex")
    if f is None:
        return None
    first = str(f).split()[0]
    return first if _LENGTH.match(first) and "%" not in first and "px" not in first else None


def _apply_margins(kids: List[_Box], row: bool, grid_cols: int) -> None:
    """Shift in-flow siblings after one with a margin so that margins take room."""
    if grid_cols:
        return
    shift = 0.0
    for b in kids:
        if b.absolute:
            continue
        m = _box4(b.el.css, "margin", None, b.font)
        if row:
            b.x += shift
            shift += m[1] + m[3]
        else:
            b.y += shift
            shift += m[0] + m[2]


def layout_fragment(html: str, width: Optional[float] = None, *, tldraw: bool = False) -> List[Dict[str, Any]]:
    """Parse and lay out a fragment into node records, parents before children.

    Parameters
    ----------
    html : str
    width : float, optional
        Width available to the top-level elements (e.g. the artboard's width);
        None lets them shrink to their content.
    tldraw : bool
        Lay text out as tldraw text records (for a document written as tldraw):
        tldraw's size steps, fonts and metrics, see :func:`tldraw_text`; each text
        record is its measured text, inside its element's padding, with
        ``autoSize`` and ``scale`` in its props.

    Returns
    -------
    list of dict
        One record per node: ``kind`` (``container``/``text``/``image``), ``tag``,
        ``parent`` (position of the parent record in the list, or None for a
        top-level element), ``alias`` (from ``id``/``data-ref``, or None), local
        ``x, y`` relative to the parent (top-level: relative to the first
        element's corner), ``w, h``, ``text``, ``name``, sanitized ``style`` and
        ``props``.

    Examples
    --------
    >>> recs = layout_fragment('<div style="padding: 8px"><h1 style="color: red">Title</h1></div>', 400)
    >>> [(r["kind"], r["x"], r["y"], r["w"]) for r in recs]
    [('container', 0.0, 0.0, 400.0), ('text', 8.0, 8.0, 384.0)]
    >>> recs[1]["style"]
    {'color': 'red', 'fontSize': 32, 'fontWeight': 'bold'}
    """
    if width is not None:
        try:
            width = float(width)
        except (TypeError, ValueError):
            raise InvalidInputError(f"parse_html: width must be a number, got {width!r}") from None
        if not math.isfinite(width) or width < 0:
            raise InvalidInputError(f"parse_html: width must be finite and >= 0, got {width!r}")
    roots = parse_fragment(html)
    inh: Dict[str, Any] = {"_font": _BASE_FONT, "_tldraw": bool(tldraw)}
    out: List[Dict[str, Any]] = []
    y = 0.0
    for el in roots:
        b = _measure(el, width, inh, False)
        m = _box4(el.css, "margin", width, b.font)
        if b.absolute:
            b.x = _length(el.css.get("left"), width, b.font) or 0.0
            b.y = _length(el.css.get("top"), None, b.font) or 0.0
        else:
            b.x, b.y = m[3], y + m[0]
            y = b.y + b.h + m[2]
        _emit(b, None, out)
    return out


def _emit(b: _Box, parent: Optional[int], out: List[Dict[str, Any]]) -> None:
    el = b.el
    alias = el.attrs.get("id") or el.attrs.get("data-ref") or None
    props: Dict[str, Any] = {"tag": el.tag} if el.tag != "#text" else {}
    for k in ("src", "alt", "href", "svg"):
        if el.attrs.get(k):
            props[k] = el.attrs[k]
    name = None
    if el.kind != "text":
        name = (el.attrs.get("aria-label") or el.attrs.get("data-name") or el.attrs.get("title")
                or el.attrs.get("alt") or el.attrs.get("id") or el.tag)
    style = b.style
    x, y, w, h = b.x, b.y, b.w, b.h
    if b.tl is not None:
        style = {**style, **b.tl["style"]}
        props.update({"autoSize": b.tl["autoSize"], "scale": 1.0})
        x, y, w, h = x + b.tl["dx"], y + b.tl["dy"], b.tl["w"], b.tl["h"]
    out.append({
        "kind": el.kind, "tag": el.tag, "parent": parent, "alias": alias,
        "x": float(x), "y": float(y), "w": float(w), "h": float(h),
        "text": el.text if el.kind == "text" else None, "name": name,
        "style": sanitize_style(style, record=alias or el.tag), "props": props,
    })
    me = len(out) - 1
    for c in b.children:
        _emit(c, me, out)
