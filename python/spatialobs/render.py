"""Pictures of an observation: the page, the viewport, what the agent sees and how.

:func:`render_svg` needs nothing beyond the package; :func:`render_png` draws the
same picture with Pillow (``pip install "spatialobs[png]"``), imported only when
called.

Each object is drawn as its page bounds (axis-aligned, as the observation reasons
about them), colored by its visibility label; objects the observation left out are
drawn faint. Native relations are solid lines, inferred ones dashed; selected
objects get a thick outline; the viewport is a black frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union
from xml.sax.saxutils import escape, quoteattr

from spatialobs._errors import InvalidInputError

__all__ = ["COLORS", "Scene", "scene", "render_svg", "render_png", "write_picture", "line_chart_svg"]

#: Fill color per visibility label (and for objects the observation omitted).
COLORS: Dict[str, str] = {
    "visible": "#2e9d5b",
    "partial": "#e69a28",
    "occluded": "#8a55c8",
    "offscreen_near": "#3b7dd8",
    "offscreen_far": "#9aa3ad",
    "omitted": "#d5d9de",
}
#: Line color per relation type.
RELATION_COLORS: Dict[str, str] = {
    "parent": "#444444",
    "bound": "#c0392b",
    "inside": "#16a085",
    "overlaps": "#d35400",
    "near": "#7f8c8d",
    "aligned": "#2980b9",
    "occludes": "#8e44ad",
    "touches": "#c0392b",
}

Box = Tuple[float, float, float, float]


@dataclass
class Scene:
    """What a picture shows, in page coordinates (backend-independent).

    Attributes
    ----------
    extent : (x0, y0, x1, y1)
        The drawn region: the page's objects and the viewport, with a margin.
    viewport : (x0, y0, x1, y1)
    objects : list of dict
        ``{"id", "type", "box", "label", "selected", "text"}`` in paint order.
    relations : list of dict
        ``{"type", "native", "a", "b"}`` with ``a`` and ``b`` the centers joined.
    """

    extent: Box
    viewport: Box
    objects: List[Dict[str, Any]] = field(default_factory=list)
    relations: List[Dict[str, Any]] = field(default_factory=list)


def scene(canvas: Any, observation: Any) -> Scene:
    """Collect what to draw from a canvas and an observation of one of its pages.

    Parameters
    ----------
    canvas : spatialobs.canvas.Canvas
    observation : spatialobs.canvas.Observation
        Gives the page, the viewport, each object's label and the relations.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node, observe
    >>> c = Canvas()
    >>> _ = c.add(Node("a", "geo", "page:page", "a1", 10, 10, 50, 20))
    >>> s = scene(c, observe(c, (0, 0, 200, 100)))
    >>> s.objects[0]["label"], s.viewport
    ('visible', (0.0, 0.0, 200.0, 100.0))
    """
    cols = canvas.columns(observation.page)
    records = {o["id"]: o for o in observation.objects}
    v = observation.viewport
    vp: Box = (float(v.x), float(v.y), float(v.x + v.w), float(v.y + v.h))
    objects = []
    centers: Dict[str, Tuple[float, float]] = {}
    x0, y0, x1, y1 = vp
    for k, nid in enumerate(cols.ids):
        b = cols.bounds[k]
        box = (float(b[0]), float(b[1]), float(b[2]), float(b[3]))
        if not all(math.isfinite(c) for c in box):
            continue
        rec = records.get(nid)
        objects.append({
            "id": nid,
            "type": cols.types[k],
            "box": box,
            "label": rec["visibility"] if rec else "omitted",
            "selected": bool(rec and "selected" in rec.get("flags", ())),
            "text": (rec or {}).get("text") or "",
        })
        centers[nid] = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        x0, y0, x1, y1 = min(x0, box[0]), min(y0, box[1]), max(x1, box[2]), max(y1, box[3])
    margin = 0.03 * max(x1 - x0, y1 - y0, 1.0)
    relations = [
        {"type": r["type"], "native": bool(r.get("native")), "a": centers[r["from"]], "b": centers[r["to"]]}
        for r in observation.relations
        if r.get("from") in centers and r.get("to") in centers
    ]
    return Scene((x0 - margin, y0 - margin, x1 + margin, y1 + margin), vp, objects, relations)


def _fmt(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def render_svg(canvas: Any, observation: Any, *, width: int = 1200, title: Optional[str] = None) -> str:
    """Draw an observation as an SVG document (a string).

    The document has one ``<rect class="obj">`` per object (with ``data-id`` and
    ``data-visibility`` attributes and a ``<title>`` tooltip), one ``<line>`` per
    relation, the viewport frame and a legend.

    Parameters
    ----------
    canvas : spatialobs.canvas.Canvas
    observation : spatialobs.canvas.Observation
    width : int, default 1200
        Picture width in pixels; the height follows the page's aspect ratio.
    title : str, optional
        A caption drawn above the legend.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node, observe
    >>> c = Canvas()
    >>> _ = c.add(Node("a", "geo", "page:page", "a1", 10, 10, 50, 20))
    >>> svg = render_svg(c, observe(c, (0, 0, 200, 100)))
    >>> svg.startswith("<svg") and svg.count('class="obj') == 1
    True
    """
    if width < 100:
        raise InvalidInputError(f"width must be at least 100 pixels, got {width}")
    s = scene(canvas, observation)
    ex0, ey0, ex1, ey1 = s.extent
    ew, eh = ex1 - ex0, ey1 - ey0
    legend_h = 64
    draw_h = max(100, int(round(width * eh / ew)))
    k = width / ew  # pixels per page unit

    def px(x: float, y: float) -> Tuple[str, str]:
        return _fmt((x - ex0) * k), _fmt((y - ey0) * k + legend_h)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{draw_h + legend_h}" '
        f'viewBox="0 0 {width} {draw_h + legend_h}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{width}" height="{draw_h + legend_h}" fill="#ffffff"/>',
    ]
    for o in s.objects:
        x0, y0, x1, y1 = o["box"]
        ax, ay = px(x0, y0)
        color = COLORS[o["label"]]
        faint = o["label"] == "omitted"
        stroke = "#111111" if o["selected"] else color
        sw = "3" if o["selected"] else "1"
        tip = escape(f'{o["id"]} ({o["type"]}, {o["label"]}) {o["text"]}'.strip())
        out.append(
            f'<rect class="obj {o["label"]}" data-id={quoteattr(o["id"])} data-visibility="{o["label"]}" '
            f'x="{ax}" y="{ay}" width="{_fmt(max((x1 - x0) * k, 0.5))}" height="{_fmt(max((y1 - y0) * k, 0.5))}" '
            f'fill="{color}" fill-opacity="{0.12 if faint else 0.28}" stroke="{stroke}" stroke-width="{sw}">'
            f"<title>{tip}</title></rect>"
        )
    for r in s.relations:
        (ax, ay), (bx, by) = px(*r["a"]), px(*r["b"])
        dash = "" if r["native"] else ' stroke-dasharray="5 4"'
        out.append(
            f'<line class="rel {r["type"]}" x1="{ax}" y1="{ay}" x2="{bx}" y2="{by}" '
            f'stroke="{RELATION_COLORS.get(r["type"], "#555555")}" stroke-width="1.2" stroke-opacity="0.8"{dash}/>'
        )
    vx0, vy0 = px(s.viewport[0], s.viewport[1])
    out.append(
        f'<rect class="viewport" x="{vx0}" y="{vy0}" width="{_fmt((s.viewport[2] - s.viewport[0]) * k)}" '
        f'height="{_fmt((s.viewport[3] - s.viewport[1]) * k)}" fill="none" stroke="#000000" stroke-width="2"/>'
    )
    # legend
    x = 8
    if title:
        out.append(f'<text x="8" y="16" font-weight="bold">{escape(title)}</text>')
    for name, color in COLORS.items():
        out.append(f'<rect x="{x}" y="26" width="12" height="12" fill="{color}" fill-opacity="0.6" stroke="{color}"/>')
        out.append(f'<text x="{x + 16}" y="36">{name.replace("_", " ")}</text>')
        x += 16 + 7 * len(name) + 18
    out.append('<line x1="8" y1="52" x2="38" y2="52" stroke="#444" stroke-width="1.5"/>'
               '<text x="44" y="56">native relation</text>'
               '<line x1="160" y1="52" x2="190" y2="52" stroke="#444" stroke-width="1.5" stroke-dasharray="5 4"/>'
               '<text x="196" y="56">inferred relation</text>'
               '<rect x="320" y="46" width="12" height="12" fill="none" stroke="#111" stroke-width="3"/>'
               '<text x="338" y="56">selected</text>'
               '<rect x="410" y="46" width="20" height="12" fill="none" stroke="#000" stroke-width="2"/>'
               '<text x="436" y="56">viewport</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _hex(color: str, alpha: int) -> Tuple[int, int, int, int]:
    return (int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16), alpha)


def render_png(canvas: Any, observation: Any, *, width: int = 1200) -> Any:
    """Draw an observation with Pillow; returns a ``PIL.Image.Image`` (RGB).

    Needs the optional extra: ``pip install "spatialobs[png]"``.

    Raises
    ------
    InvalidInputError
        When Pillow is not installed (the message says how to install it).
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise InvalidInputError('PNG output needs Pillow: pip install "spatialobs[png]" (or write .svg)') from None
    if width < 100:
        raise InvalidInputError(f"width must be at least 100 pixels, got {width}")
    s = scene(canvas, observation)
    ex0, ey0, ex1, ey1 = s.extent
    k = width / (ex1 - ex0)
    legend_h = 40
    height = max(100, int(round((ey1 - ey0) * k))) + legend_h
    img = Image.new("RGBA", (width, height), (255, 255, 255, 255))
    layer = Image.new("RGBA", img.size, (0, 0, 0, 0))
    d = ImageDraw.Draw(layer)

    def px(x: float, y: float) -> Tuple[float, float]:
        return ((x - ex0) * k, (y - ey0) * k + legend_h)

    for o in s.objects:
        a, b = px(*o["box"][:2]), px(*o["box"][2:])
        color = COLORS[o["label"]]
        d.rectangle([a, (max(b[0], a[0] + 0.5), max(b[1], a[1] + 0.5))], fill=_hex(color, 40 if o["label"] == "omitted" else 72),
                    outline=_hex("#111111" if o["selected"] else color, 255), width=3 if o["selected"] else 1)
    for r in s.relations:
        a, b = px(*r["a"]), px(*r["b"])
        rgba = _hex(RELATION_COLORS.get(r["type"], "#555555"), 200)
        if r["native"]:
            d.line([a, b], fill=rgba, width=1)
        else:  # dashes
            length = math.hypot(b[0] - a[0], b[1] - a[1])
            steps = max(1, int(length // 9))
            for t in range(0, steps, 2):
                t0, t1 = t / steps, min(1.0, (t + 1) / steps)
                d.line([(a[0] + (b[0] - a[0]) * t0, a[1] + (b[1] - a[1]) * t0),
                        (a[0] + (b[0] - a[0]) * t1, a[1] + (b[1] - a[1]) * t1)], fill=rgba, width=1)
    va, vb = px(*s.viewport[:2]), px(*s.viewport[2:])
    d.rectangle([va, vb], outline=(0, 0, 0, 255), width=2)
    x = 8
    for name, color in COLORS.items():
        d.rectangle([(x, 14), (x + 12, 26)], fill=_hex(color, 160), outline=_hex(color, 255))
        d.text((x + 16, 14), name.replace("_", " "), fill=(0, 0, 0, 255))
        x += 16 + 7 * len(name) + 18
    img.alpha_composite(layer)
    return img.convert("RGB")


def write_picture(canvas: Any, observation: Any, path: Union[str, Path], *, width: int = 1200,
                  title: Optional[str] = None) -> Path:
    """Write the picture to ``path``: SVG for ``.svg``, PNG (Pillow) for ``.png``.

    The file is written whole or not at all (a temporary file renamed into place).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from spatialobs.canvas import Canvas, Node, observe
    >>> c = Canvas()
    >>> _ = c.add(Node("a", "geo", "page:page", "a1", 10, 10, 50, 20))
    >>> out = write_picture(c, observe(c, (0, 0, 200, 100)), pathlib.Path(tempfile.mkdtemp()) / "a.svg")
    >>> out.read_text().count('class="obj')
    1
    """
    path = Path(path)
    suffix = path.suffix.lower()
    tmp = path.with_name(path.name + ".tmp")
    if suffix == ".svg":
        tmp.write_text(render_svg(canvas, observation, width=width, title=title), encoding="utf-8")
    elif suffix == ".png":
        render_png(canvas, observation, width=width).save(tmp, format="PNG")
    else:
        raise InvalidInputError(f"picture file must end in .svg or .png, got {path.name!r}")
    tmp.replace(path)
    return path




_SERIES_COLORS = ("#2e6fd8", "#d8572e", "#2e9d5b", "#8a55c8", "#c0392b", "#7f8c8d")


def line_chart_svg(series: Dict[str, List[float]], *, title: str = "", xlabel: str = "step",
                   ylabel: str = "", width: int = 640, height: int = 360) -> str:
    """A small SVG line chart (no extra package), e.g. an exploration's discovery curve.

    Parameters
    ----------
    series : dict of name -> list of float
        One line per entry, x = 1, 2, ... (the step number).

    Examples
    --------
    >>> svg = line_chart_svg({"PUCT": [1, 2, 2, 3], "Greedy": [1, 1, 1, 1]}, title="new states")
    >>> svg.count("<polyline")
    2
    """
    if not series or not any(len(v) for v in series.values()):
        raise InvalidInputError("line_chart_svg needs at least one non-empty series")
    left, right, top, bottom = 56, 16, 36, 44
    n = max(len(v) for v in series.values())
    ymax = max(max(v) for v in series.values() if len(v)) or 1.0
    pw, ph = width - left - right, height - top - bottom

    def xy(i: int, v: float) -> str:
        x = left + (i / max(n - 1, 1)) * pw
        y = top + ph - (v / ymax) * ph
        return f"{x:.1f},{y:.1f}"

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{left}" y="20" font-weight="bold">{escape(title)}</text>',
           f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>',
           f'<text x="{left + pw / 2:.0f}" y="{height - 10}" text-anchor="middle">{escape(xlabel)}</text>',
           f'<text x="14" y="{top + ph / 2:.0f}" transform="rotate(-90 14 {top + ph / 2:.0f})" '
           f'text-anchor="middle">{escape(ylabel)}</text>',
           f'<text x="{left - 6}" y="{top + 4}" text-anchor="end">{_fmt(ymax)}</text>',
           f'<text x="{left - 6}" y="{top + ph + 4}" text-anchor="end">0</text>',
           f'<text x="{left + pw}" y="{top + ph + 16}" text-anchor="end">{n}</text>']
    for k, (name, values) in enumerate(series.items()):
        color = _SERIES_COLORS[k % len(_SERIES_COLORS)]
        pts = " ".join(xy(i, float(v)) for i, v in enumerate(values))
        out.append(f'<polyline class="series" data-name={quoteattr(name)} points="{pts}" fill="none" '
                   f'stroke="{color}" stroke-width="2"/>')
        out.append(f'<rect x="{left + 12}" y="{top + 8 + 18 * k}" width="12" height="3" fill="{color}"/>'
                   f'<text x="{left + 30}" y="{top + 13 + 18 * k}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
