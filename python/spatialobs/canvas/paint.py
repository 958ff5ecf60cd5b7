"""What each shape paints: whether it fills its interior, and the outline of what it covers.

Occlusion as a person sees it (DESIGN §4) needs two facts per shape that the real
editors' renderers decide:

* **Does it paint its interior?** tldraw fills a ``geo`` shape unless ``fill`` is
  ``"none"`` (``semi``, ``solid``, ``fill``, ``pattern`` and ``lined-fill`` all lay an
  opaque colour under any hatching); notes, frames (their body has the theme's frame
  fill) and images are opaque; text, arrows, lines, freehand strokes and highlights
  paint strokes only. Excalidraw fills a rectangle, diamond or ellipse only with a
  ``backgroundColor`` other than ``"transparent"`` and the ``solid`` fill style
  (``hachure``, ``cross-hatch`` and ``zigzag`` draw lines with gaps); its frames are
  outlines; images and embeds are opaque. A fill colour with an alpha channel below the
  observation's ``min_opacity`` is translucent and hides nothing. Other node types
  (the native form's own) paint their interior when they carry a ``fill`` that is not
  ``"none"`` or ``"transparent"``.
* **Where?** The shape's outline in its local frame: the 20 tldraw ``geo`` kinds as
  :func:`~spatialobs.canvas.document.arrows.target_outline` computes them (an ellipse
  covers less than its bounds, a star much less), Excalidraw's diamond and ellipse, and
  the ``w × h`` box for everything else.

The observation maps the outline to the page, clips it by every ancestor frame and
measures coverage with :func:`spatialobs.geometry.polygon_coverage`.
"""

from __future__ import annotations

import math
import re
import struct
import weakref
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from spatialobs.canvas.document.arrows import _num, _target_outline

__all__ = ["paints_interior", "fills_area", "fill_alpha", "local_outline", "to_page", "clip_convex", "box_polygon",
           "straight_segment", "straight_segment_kept", "stroke_and_heads", "along_stroke", "OCCLUSION_MODES"]

#: The observation's occlusion rules: ``"painted"`` (the default: painted regions,
#: exact outlines, union coverage) and ``"paper"`` (CanvasObs: the bounds of one
#: higher shape with opacity >= min_opacity contain the clipped bounds).
OCCLUSION_MODES = ("painted", "paper")

#: Types that paint strokes (or glyphs) only.
_STROKES = frozenset({"group", "arrow", "line", "draw", "freedraw", "highlight", "text", "selection", "laser"})
#: Types that paint an opaque box.
_OPAQUE = frozenset({"note", "image", "video", "embed", "bookmark", "embeddable", "iframe", "magicframe_image"})
#: Excalidraw's filled shape types (the only ones its renderer fills).
_EXCALIDRAW_FILLED = frozenset({"rectangle", "ellipse", "diamond"})
#: tldraw ``fill`` values that lay no colour.
_NO_FILL = frozenset({"none", "transparent", ""})

_HEX = re.compile(r"^#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
_RGBA = re.compile(r"^(?:rgba|hsla)\(\s*[^,]+,[^,]+,[^,]+,\s*([0-9.]+)(%?)\s*\)$")


def fill_alpha(color: Any) -> float:
    """The alpha of a CSS-like fill colour: 0 for none or transparent, else 0–1 (1 without an alpha).

    Examples
    --------
    >>> fill_alpha("transparent"), fill_alpha("#ffc9c9"), fill_alpha("#ffc9c980"), fill_alpha("rgba(0,0,0,0.5)")
    (0.0, 1.0, 0.5019607843137255, 0.5)
    """
    if not isinstance(color, str):
        return 0.0 if color is None else 1.0
    c = color.strip().lower()
    if c in _NO_FILL:
        return 0.0
    m = _HEX.match(c)
    if m:
        h = m.group(1)
        if len(h) == 4:
            return int(h[3] * 2, 16) / 255.0
        if len(h) == 8:
            return int(h[6:], 16) / 255.0
        return 1.0
    m = _RGBA.match(c)
    if m:
        try:
            a = float(m.group(1))
        except ValueError:
            return 1.0
        a = a / 100.0 if m.group(2) else a
        return min(max(a, 0.0), 1.0)
    return 1.0


def paints_interior(node_type: str, style: Mapping[str, Any], min_alpha: float = 0.9) -> bool:
    """Whether a node of this type and style paints an opaque interior (see the module docstring).

    The node's own opacity is not considered here (the observation compares its page
    opacity with ``min_opacity``).

    Examples
    --------
    >>> paints_interior("geo", {"fill": "none"}), paints_interior("geo", {"fill": "solid"})
    (False, True)
    >>> paints_interior("rectangle", {"fill": "#a5d8ff", "fillStyle": "hachure"})
    False
    >>> paints_interior("rectangle", {"fill": "#a5d8ff", "fillStyle": "solid"}), paints_interior("text", {})
    (True, False)
    """
    if node_type in _STROKES:
        return False
    if node_type in _OPAQUE:
        return True
    if "fillStyle" in style:  # an Excalidraw element: its renderer's rules
        if node_type not in _EXCALIDRAW_FILLED:
            return False
        return style.get("fillStyle") == "solid" and fill_alpha(style.get("fill")) >= min_alpha
    if node_type == "frame" or node_type == "artboard":
        return True
    fill = style.get("fill")
    if fill is None:
        return False
    if isinstance(fill, str) and fill.strip().lower() in _NO_FILL:
        return False
    if node_type == "geo":
        return True  # every tldraw fill but none is opaque
    return fill_alpha(fill) >= min_alpha


def fills_area(node_type: str, style: Mapping[str, Any]) -> bool:
    """Whether a node's pixels spread over its outline (any fill, even hatched or translucent;
    text; notes, frames, images) rather than lying on its edge (an outline, a line, a stroke).

    Examples
    --------
    >>> fills_area("geo", {"fill": "none"}), fills_area("rectangle", {"fill": "#fff", "fillStyle": "hachure"})
    (False, True)
    >>> fills_area("text", {}), fills_area("arrow", {})
    (True, False)
    """
    if node_type == "text" or node_type in _OPAQUE:
        return True
    if node_type in _STROKES:
        return False
    if "fillStyle" in style:
        return node_type in _EXCALIDRAW_FILLED and fill_alpha(style.get("fill")) > 0
    if node_type in ("frame", "artboard"):
        return True
    return fill_alpha(style.get("fill")) > 0


_KIND_OF = {"ellipse": "ellipse", "diamond": "diamond"}

#: Local outlines per node record (records are immutable: an unchanged record keeps its entry).
_OUTLINES: Dict[int, Tuple[Any, np.ndarray]] = {}
_OUTLINES_MAX = 1 << 15


#: ``geo`` kinds whose outline is their box (``target_outline``'s last case, named).
_BOX_GEO = frozenset({"rectangle", "x-box", "check-box"})


def _box_outline(props: Mapping[str, Any], w: float, h: float) -> Optional[List[Tuple[float, float]]]:
    """A box-like ``geo`` shape's outline as :func:`local_outline` makes it from ``target_outline``
    (at least 1 x 1, flipped as the props say, the closing point dropped); None for other kinds."""
    geo = props.get("geo", "rectangle")
    if type(geo) is not str or geo not in _BOX_GEO:
        return None
    gw, gh = max(1.0, w), max(1.0, h)
    fx, fy = bool(props.get("flipX")), bool(props.get("flipY"))
    x0, x1 = (gw, 0.0) if fx else (0.0, gw)
    y0, y1 = (gh, 0.0) if fy else (0.0, gh)
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def local_outline(node: Any) -> np.ndarray:
    """The outline of what ``node`` covers, in its local frame, as a ``(k, 2)`` float64 array.

    Examples
    --------
    >>> from spatialobs.canvas import Node
    >>> local_outline(Node("a", "geo", "page:page", "a1", 0, 0, 10, 20)).tolist()
    [[0.0, 0.0], [10.0, 0.0], [10.0, 20.0], [0.0, 20.0]]
    >>> len(local_outline(Node("e", "ellipse", "page:page", "a1", 0, 0, 10, 20))) > 16
    True
    """
    key = id(node)
    hit = _OUTLINES.get(key)
    if hit is not None and hit[0]() is node:
        return hit[1]
    w, h = float(node.w), float(node.h)
    pts: Optional[List[Tuple[float, float]]] = None
    if node.type == "geo" and w > 0 and h > 0:
        pts = _box_outline(node.props, w, h)
        if pts is None:
            pts = [(float(x), float(y)) for x, y in _target_outline("geo", node.props, w, h, node.id).points]
    elif node.type in _KIND_OF and w > 0 and h > 0:
        pts = [(float(x), float(y)) for x, y in _target_outline("geo", {"geo": _KIND_OF[node.type]}, w, h, node.id).points]
    if pts and len(pts) > 3 and pts[-1] == pts[0]:
        pts = pts[:-1]  # a closed path repeats its first point
    if not pts or len(pts) < 3:
        pts = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)]
    arr = np.asarray(pts, dtype=np.float64)
    if len(_OUTLINES) >= _OUTLINES_MAX:
        for k in [k for k, v in list(_OUTLINES.items()) if v[0]() is None]:
            del _OUTLINES[k]
        if len(_OUTLINES) >= _OUTLINES_MAX:
            _OUTLINES.clear()
    _OUTLINES[key] = (weakref.ref(node), arr)
    return arr


def to_page(local: np.ndarray, px: float, py: float, rotation: float) -> np.ndarray:
    """Local outline points mapped by a page transform (origin ``px, py``, rotation in radians)."""
    if rotation == 0.0:
        return local + np.array([px, py])
    c, s = math.cos(rotation), math.sin(rotation)
    x, y = local[:, 0], local[:, 1]
    return np.column_stack([px + c * x - s * y, py + s * x + c * y])


def _twice_area(cl: List[List[float]], clip: np.ndarray) -> float:
    """Twice the signed area of the polygon ``clip`` (``cl``, its rows as lists), summed as numpy sums it."""
    m = len(cl)
    if m >= 8:
        cx, cy = clip[:, 0], clip[:, 1]
        return float(np.sum(cx * np.roll(cy, -1) - np.roll(cx, -1) * cy))
    # numpy adds fewer than 8 values one after the other (pairwise from 8 on): the same sum,
    # up to the sign of a zero result, without its per-call cost
    s = 0.0
    for i in range(m):
        (ax, ay), (bx, by) = cl[i], cl[i + 1 - m]
        s += ax * by - bx * ay
    return s


#: Coordinates (in magnitude) within which a difference of two, and so every side test of
#: :func:`clip_convex` against an upright box, is a finite number.
_SAFE = 1e300


def _inside_upright_box(pts: List[List[float]], cl: List[List[float]], sign: float) -> bool:
    """Whether :func:`clip_convex` keeps every point of ``pts`` against the clip polygon ``cl`` (four
    corners, oriented by ``sign``) untouched: ``cl`` is an upright box, its orientation is ``sign``'s (or
    it has no area) and every point lies in it. Each side test then multiplies two differences whose
    signs are exact by an exact zero's complement (a side is upright), so none is negative: every
    point is kept, in order, by each of the four passes."""
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = cl
    if ay == by and bx == cx and cy == dy and dx == ax:  # sides: along x, then y
        w, h, turn = bx - ax, cy - ay, 1.0
    elif ax == bx and by == cy and cx == dx and dy == ay:  # sides: along y, then x
        w, h, turn = cx - ax, by - ay, -1.0
    else:
        return False
    if w != 0.0 and h != 0.0 and ((w > 0.0) == (h > 0.0)) != (turn * sign > 0.0):
        return False  # the sum of cross products gave the other orientation: the clip keeps nothing
    x0, x1 = (ax, cx) if ax <= cx else (cx, ax)
    y0, y1 = (ay, cy) if ay <= cy else (cy, ay)
    if not (-_SAFE <= x0 and x1 <= _SAFE and -_SAFE <= y0 and y1 <= _SAFE):
        return False
    for x, y in pts:
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            return False
    return True


def clip_convex(poly: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """``poly`` clipped by the convex polygon ``clip`` (Sutherland–Hodgman; either orientation).

    Both are ``(k, 2)`` arrays of points; the arithmetic is in float64 (Python floats), the
    result a ``(m, 2)`` float64 array (empty when nothing is left).

    Examples
    --------
    >>> sq = np.array([[0., 0], [10, 0], [10, 10], [0, 10]])
    >>> clip_convex(sq, np.array([[5., -5], [20, -5], [20, 20], [5, 20]])).tolist()
    [[5.0, 0.0], [10.0, 0.0], [10.0, 10.0], [5.0, 10.0]]
    """
    if len(clip) < 3 or len(poly) == 0:
        return poly[:0]
    cl = clip.tolist()
    m = len(cl)
    sign = 1.0 if _twice_area(cl, clip) >= 0 else -1.0
    pts = poly.tolist()
    if m == 4 and _inside_upright_box(pts, cl, sign):
        return np.array(pts, dtype=np.float64).reshape(-1, 2)
    out = [tuple(p) for p in pts]
    for i in range(m):
        if not out:
            break
        ax, ay = cl[i]
        bx, by = cl[(i + 1) % m]
        ex, ey = bx - ax, by - ay
        src = out
        out = []
        prev = src[-1]
        sp = sign * (ex * (prev[1] - ay) - ey * (prev[0] - ax))
        for cur in src:
            sc = sign * (ex * (cur[1] - ay) - ey * (cur[0] - ax))
            if sc >= 0:
                if sp < 0:
                    t = sp / (sp - sc)
                    out.append((prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])))
                out.append(cur)
            elif sp >= 0:
                t = sp / (sp - sc)
                out.append((prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])))
            prev, sp = cur, sc
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def box_polygon(b: Any) -> np.ndarray:
    """The rectangle ``[x0, y0, x1, y1]`` as a polygon."""
    x0, y0, x1, y1 = (float(v) for v in b)
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


class _Rows:
    """``nodes[r]`` for derivation rows, read from the canvas without building the list."""

    def __init__(self, canvas: Any, d: Any) -> None:
        self._nodes = canvas._nodes
        self._ids = d.ids

    def __getitem__(self, r: int) -> Any:
        return self._nodes[self._ids[r]]

    def __len__(self) -> int:
        return len(self._ids)


def straight_segment(canvas: Any, node_id: str,
                     terms: Optional[Mapping[str, Any]] = None) -> Optional[Tuple[float, float, float, float]]:
    """The page end points ``(x0, y0, x1, y1)`` of a connector drawn as one straight segment, else None.

    A tldraw arrow with no bend (resolved against its bound targets as tldraw draws it),
    a two-point line, or an Excalidraw arrow or line of two points. ``terms`` (the arrow's
    bindings by terminal) saves looking them up among all the canvas's bindings.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("l", "line", "page:page", "a1", 10, 10, props={"points": [[0, 0], [100, 50]]}))
    >>> straight_segment(c, "l")
    (10.0, 10.0, 110.0, 60.0)
    """
    from spatialobs.canvas.document import arrows as A

    nd = canvas._nodes[node_id]
    d = canvas._geometry()  # read here, not kept (see Canvas.geometry)
    r = d.row[node_id]
    xf = A._xf(d, r)
    pts = nd.props.get("points")
    if isinstance(pts, list) or (nd.type == "line" and isinstance(pts, Mapping)):
        if A._over_two_line_points(pts):
            return None  # (no straight segment: the points are not read)
        lp = A._line_points(nd.props)
        if len(lp) != 2 or (nd.type == "line" and nd.props.get("spline") == "cubic" and len(lp) > 2):
            return None
        (ax, ay), (bx, by) = (A._to_page(xf, p) for p in lp)
        return (ax, ay, bx, by)
    if nd.type != "arrow" or not _unbent(nd):
        return None
    if terms is None:
        terms = {b.terminal: b for b in canvas._bindings.values() if b.from_id == node_id}
    terms = {t: b for t, b in terms.items() if b.to_id in d.row}
    try:
        s, e = A._terminals(d, _Rows(canvas, d), r, terms)  # type: ignore[arg-type]  # indexed by row only
        g = A.resolve_arrow(nd.props, xf, s, e)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    if g.kind != "straight" or not g.valid:
        return None
    (ax, ay), (bx, by) = A._to_page(xf, g.start), A._to_page(xf, g.end)
    return (ax, ay, bx, by)


def _unbent(nd: Any) -> bool:
    """Whether a tldraw arrow's record draws it straight when it is valid: no bend, not an elbow."""
    return _num(nd.props.get("bend"), 0.0) == 0.0 and nd.props.get("kind") != "elbow"


#: Whether :func:`straight_segment_kept` reads the drawn ends of an arrow that the current
#: derivation's compiled batch resolved (:func:`~spatialobs.canvas.document.arrows.resolved_ends`)
#: rather than resolving it again; False: :func:`straight_segment` (the twin) for every arrow.
DERIVED_ENDS = True

#: Straight tldraw arrows' page segments by connector id: (the records the key names, the key,
#: the segment); see :func:`straight_segment_kept`.
_SEGMENTS: Dict[str, Tuple[Tuple[Any, ...], Tuple[Any, ...], Optional[Tuple[float, float, float, float]]]] = {}
_SEGMENTS_MAX = 16384
_SIZE_BYTES = struct.Struct("<2d").pack
#: A target's props that no part of an arrow's resolution reads (its colours): left out of the key.
_NOT_READ = frozenset({"color", "labelColor"})


def _target_repr(props: Mapping[str, Any]) -> str:
    """The ``repr`` of a target's props without :data:`_NOT_READ` (a recoloured target keys the same)."""
    if "color" in props or "labelColor" in props:
        return repr({k: v for k, v in props.items() if k not in _NOT_READ})
    return repr(props)


def straight_segment_kept(canvas: Any, node_id: str,
                          terms: Optional[Mapping[str, Any]] = None) -> Optional[Tuple[float, float, float, float]]:
    """:func:`straight_segment`, kept from one page version to the next while what it reads is the same.

    A tldraw arrow's segment is resolved against its targets (the costly part); it reads the
    arrow's props and page transform and, per bound terminal, the binding and its target's
    id, type, props but its colours (:data:`_NOT_READ`), size and page transform (not styles
    or text: a restyled or recoloured target keeps its arrows' segments). Those are the key:
    props by their ``repr`` (equal reprs are equal values of the same types), sizes and
    transforms by their bytes, bindings by identity (the entry holds them, so no other
    record takes their ids). Point lists and lines are mapped, not resolved: not kept.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("a", "arrow", "page:page", "a1", 10, 10, props={"start": {"x": 0, "y": 0},
    ...                                                             "end": {"x": 100, "y": 0}}))
    >>> straight_segment_kept(c, "a") == straight_segment(c, "a") == (10.0, 10.0, 110.0, 10.0)
    True
    """
    from spatialobs.canvas.document import arrows as A

    nodes = canvas._nodes
    nd = nodes[node_id]
    if nd.type != "arrow" or isinstance(nd.props.get("points"), list):
        return straight_segment(canvas, node_id, terms)
    d = canvas._geometry()  # read here, not kept (see Canvas.geometry)
    row = d.row
    if DERIVED_ENDS:
        got = A.resolved_ends(d, row[node_id])
        if got is not None:  # resolved by this version's derivation: its ends, not resolved again
            if not (got[4] and _unbent(nd)):
                return None  # (as straight_segment: an arc or an elbow is no segment, nor an invalid arrow)
            xf = A._xf(d, row[node_id])
            (ax, ay), (bx, by) = A._to_page(xf, (got[0], got[1])), A._to_page(xf, (got[2], got[3]))
            return (ax, ay, bx, by)
    if terms is None:
        terms = canvas._terms_of(node_id)
    held: List[Any] = []
    key: List[Any] = [repr(nd.props), A._XF_BYTES(*A._xf(d, row[node_id]))]
    for term in ("start", "end"):
        b = terms.get(term)
        if b is not None and b.to_id in row:
            tn = nodes[b.to_id]
            held.append(b)
            key += (term, id(b), tn.id, tn.type, _target_repr(tn.props), _SIZE_BYTES(tn.w, tn.h),
                    A._XF_BYTES(*A._xf(d, row[b.to_id])))
    k = tuple(key)
    hit = _SEGMENTS.get(node_id)
    if hit is not None and hit[1] == k:
        return hit[2]
    seg = straight_segment(canvas, node_id, terms)
    if len(_SEGMENTS) >= _SEGMENTS_MAX:
        _SEGMENTS.clear()
    _SEGMENTS[node_id] = (tuple(held), k, seg)
    return seg


def stroke_and_heads(node: Any) -> Tuple[float, float, float]:
    """A connector's stroke width and how far its start and end arrowheads reach back along it.

    tldraw: the ``size`` stroke (times ``scale``), heads unless ``arrowheadStart`` /
    ``arrowheadEnd`` is ``"none"`` (an arrow's end has one by default); Excalidraw: its
    ``strokeWidth``, heads from ``startArrowhead`` / ``endArrowhead``. A head is taken to
    reach 8 stroke widths (*ours*: both editors scale their heads with the stroke).
    """
    from spatialobs.canvas.document.arrows import STROKE_SIZES, _num

    props, style = node.props, node.style
    if "strokeWidth" in style:
        sw = _num(style.get("strokeWidth"), 2.0)
        hs = props.get("startArrowhead") is not None
        he = props.get("endArrowhead") is not None
    else:
        sw = STROKE_SIZES.get(str(style.get("size", props.get("size", "m"))), 3.5) * _num(props.get("scale"), 1.0)
        is_arrow = node.type == "arrow"
        hs = is_arrow and props.get("arrowheadStart", "none") != "none"
        he = is_arrow and props.get("arrowheadEnd", "arrow") != "none"
    return sw, 8 * sw if hs else 0.0, 8 * sw if he else 0.0


def along_stroke(seg: Tuple[float, float, float, float], cover: Tuple[float, float, float, float], half: float,
                 head_start: float, head_end: float) -> bool:
    """Whether the segment ``seg`` lies on the stroke of ``cover``: both its ends within ``half`` of
    the cover's line, between the cover's ends stretched by its arrowheads' reach."""
    ax, ay, bx, by = cover
    dx, dy = bx - ax, by - ay
    L = math.hypot(dx, dy)
    if L == 0:
        return False
    ux, uy = dx / L, dy / L
    for px, py in ((seg[0], seg[1]), (seg[2], seg[3])):
        t = (px - ax) * ux + (py - ay) * uy
        n = abs(-(px - ax) * uy + (py - ay) * ux)
        if n > half or t < -head_start - half or t > L + head_end + half:
            return False
    return True
