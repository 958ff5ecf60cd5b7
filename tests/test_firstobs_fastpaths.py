"""The first observation's plain-Python fast paths, each held to the path it shortcuts.

``clip_convex`` orients its clip polygon from the sum of the edge cross products in floats
when the clip has fewer than 8 corners (numpy's sum is left to right there, pairwise from 8
on) and clips on floats instead of numpy scalars; ``local_outline`` writes a box-like ``geo``
kind's outline without ``target_outline``; the painted cover finds the painters above a
target by a plain loop for few painters and memoizes what paints by style values; the
importers read integers without their general conversion. All must give the same bytes as before.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from spatialobs.canvas import Node, load, observe
from spatialobs.canvas.paint import _box_outline, _twice_area, clip_convex, local_outline, paints_interior
from tests.conftest import shared_files
from tests.reference import paint_oracle

O = sys.modules["spatialobs.canvas.observe"]

# coordinates that make float sums depend on their order (1e16 + 1 - 1e16) and that touch
COORD = hst.one_of(hst.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e16, -1e16, 3.0, 1e-300, 5e-324, 2.0 ** 52]),
                   hst.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
                   hst.integers(-50, 50).map(float))
POINT = hst.tuples(COORD, COORD)


def _convex(pts: List[Tuple[float, float]]) -> List[Tuple[float, float]]:
    """The convex hull (monotone chain; collinear points dropped), counter-clockwise in y-up terms."""
    pts = sorted(set(pts))
    if len(pts) < 3:
        return pts

    def cross(o: Tuple[float, float], a: Tuple[float, float], b: Tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lo: List[Tuple[float, float]] = []
    for p in pts:
        while len(lo) >= 2 and cross(lo[-2], lo[-1], p) <= 0:
            lo.pop()
        lo.append(p)
    hi: List[Tuple[float, float]] = []
    for p in reversed(pts):
        while len(hi) >= 2 and cross(hi[-2], hi[-1], p) <= 0:
            hi.pop()
        hi.append(p)
    return lo[:-1] + hi[:-1]


@hst.composite
def clips(draw: Any) -> np.ndarray:
    """Clip polygons: boxes (both orientations, zero-width, touching), rotated boxes, hulls of 3–40
    points (from 3 to more than 8 corners, so both orientation paths run), and arbitrary,
    possibly degenerate point lists (duplicates, collinear, fewer than 3)."""
    kind = draw(hst.sampled_from(["box", "rotated", "hull", "raw"]))
    if kind == "box":
        x0, y0, x1, y1 = draw(COORD), draw(COORD), draw(COORD), draw(COORD)
        pts = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    elif kind == "rotated":
        cx, cy = draw(hst.floats(-1e3, 1e3)), draw(hst.floats(-1e3, 1e3))
        w, h = draw(hst.floats(0, 1e3)), draw(hst.floats(0, 1e3))
        a = draw(hst.floats(-7, 7))
        c, s = math.cos(a), math.sin(a)
        pts = [(cx + c * x - s * y, cy + s * x + c * y) for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    elif kind == "hull":
        pts = _convex(draw(hst.lists(hst.tuples(hst.floats(-1e3, 1e3), hst.floats(-1e3, 1e3)), min_size=3, max_size=40)))
    else:
        pts = draw(hst.lists(POINT, min_size=0, max_size=12))
    if draw(hst.booleans()):
        pts = pts[::-1]
    return np.asarray(pts, dtype=np.float64).reshape(-1, 2)


POLYS = hst.lists(POINT, min_size=0, max_size=14).map(lambda p: np.asarray(p, dtype=np.float64).reshape(-1, 2))


@settings(max_examples=600, deadline=None)
@given(POLYS, clips())
def test_clip_convex_equals_the_numpy_path(poly: np.ndarray, clip: np.ndarray) -> None:
    got = clip_convex(poly, clip)
    want = paint_oracle.clip_convex(poly, clip)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@hst.composite
def upright_box_and_points(draw: Any) -> Tuple[np.ndarray, np.ndarray]:
    """An upright box clip (either side first, either orientation, flat or not, at offsets whose cross
    products cancel) and points mostly inside it, on its sides or corners."""
    x0, x1 = sorted((draw(COORD), draw(COORD)))
    y0, y1 = sorted((draw(COORD), draw(COORD)))
    if draw(hst.booleans()):
        x0, x1 = x0 + 1e16, x1 + 1e16  # a small box far away: the cross products cancel
    xs, ys = [x0, x1, (x0 + x1) / 2], [y0, y1, (y0 + y1) / 2]
    corners = ([(x0, y0), (x1, y0), (x1, y1), (x0, y1)] if draw(hst.booleans())
               else [(x0, y0), (x0, y1), (x1, y1), (x1, y0)])
    k = draw(hst.integers(0, 3))
    corners = corners[k:] + corners[:k]
    if draw(hst.booleans()):
        corners = corners[::-1]
    inside = hst.tuples(hst.sampled_from(xs), hst.sampled_from(ys))
    pts = draw(hst.lists(hst.one_of(inside, inside, inside, POINT), min_size=1, max_size=10))
    return np.asarray(pts, dtype=np.float64), np.asarray(corners, dtype=np.float64)


@settings(max_examples=800, deadline=None)
@given(upright_box_and_points())
def test_clip_convex_by_an_upright_box_equals_the_numpy_path(case: Tuple[np.ndarray, np.ndarray]) -> None:
    """Points in an upright box are kept as they are without the four passes; the result is the
    passes' to the bit (also where the sum of cross products gives the box the wrong orientation)."""
    poly, clip = case
    got = clip_convex(poly, clip)
    want = paint_oracle.clip_convex(poly, clip)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_clip_convex_by_an_upright_box_with_the_wrong_orientation_keeps_nothing() -> None:
    # a 2 x 2 box at 1e16: the sum of cross products is 0 or has the wrong sign, so the passes (and
    # the oracle) see every point outside; the shortcut must not keep them
    big = 1e16
    for clip in ([(big, big), (big + 2, big), (big + 2, big + 2), (big, big + 2)],
                 [(big, big), (big, big + 2), (big + 2, big + 2), (big + 2, big)]):
        c = np.asarray(clip)
        poly = np.array([[big + 1, big + 1], [big + 2, big + 1], [big + 1, big + 2]])
        assert clip_convex(poly, c).tobytes() == paint_oracle.clip_convex(poly, c).tobytes()


def _numpy_twice_area(clip: np.ndarray) -> float:
    cx, cy = clip[:, 0], clip[:, 1]
    return float(np.sum(cx * np.roll(cy, -1) - np.roll(cx, -1) * cy))


@settings(max_examples=500, deadline=None)
@given(hst.lists(hst.tuples(hst.sampled_from([1e16, -1e16, 1.0, -1.0, 3.0, 0.5, 0.0, 2.0 ** 53]),
                            hst.sampled_from([1e16, -1e16, 1.0, -1.0, 3.0, 0.5, 0.0, 2.0 ** 53])),
                 min_size=1, max_size=20))
def test_twice_area_sums_as_numpy_does(pts: List[Tuple[float, float]]) -> None:
    # corners whose cross products sum to different values in different orders (1e16 + 1 - 1e16)
    clip = np.asarray(pts, dtype=np.float64)
    assert _twice_area(clip.tolist(), clip) == _numpy_twice_area(clip)


@pytest.mark.parametrize("m", [3, 4, 7, 8, 9, 16])
def test_clip_convex_regular_polygons_both_orientations(m: int) -> None:
    clip = np.array([(5 + 4 * math.cos(2 * math.pi * i / m), 5 + 4 * math.sin(2 * math.pi * i / m)) for i in range(m)])
    poly = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    for c in (clip, clip[::-1].copy()):
        got = clip_convex(poly, c)
        assert got.tobytes() == paint_oracle.clip_convex(poly, c).tobytes()
        assert len(got) == m  # the clip polygon lies inside the square: it is the result


def test_clip_convex_empty_and_degenerate_inputs() -> None:
    sq = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    assert clip_convex(sq, sq[:2]).shape == (0, 2)  # fewer than 3 clip corners: nothing
    assert clip_convex(sq[:0], sq).shape == (0, 2)
    far = sq + 5.0
    assert clip_convex(sq, far).shape == (0, 2)  # disjoint
    line = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])  # a zero-area clip
    assert clip_convex(sq, line).tobytes() == paint_oracle.clip_convex(sq, line).tobytes()


GEO = hst.sampled_from(["rectangle", "x-box", "check-box", "ellipse", "diamond", "star", "triangle", "heart",
                        "unknown-kind", "", 3, None])
FLIP = hst.sampled_from([True, False, 0, 1, "", "yes", None, "missing"])
SIZE = hst.one_of(hst.sampled_from([1e-9, 0.25, 0.999, 1.0, 1.5, 200.0, 1e6]), hst.floats(1e-6, 1e4))


@settings(max_examples=300, deadline=None)
@given(GEO, FLIP, FLIP, SIZE, SIZE)
def test_local_outline_box_kinds_equal_target_outline(geo: Any, fx: Any, fy: Any, w: float, h: float) -> None:
    props = {} if geo is None else {"geo": geo}
    for k, v in (("flipX", fx), ("flipY", fy)):
        if v != "missing":
            props[k] = v
    nd = Node("shape:g", "geo", "page:page", "a1", 0.0, 0.0, w, h, props=props)
    got, want = local_outline(nd), paint_oracle.local_outline(nd)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    fast = _box_outline(props, w, h)
    assert (fast is not None) == (props.get("geo", "rectangle") in ("rectangle", "x-box", "check-box"))


@pytest.mark.parametrize("t", ["ellipse", "diamond", "rectangle", "text", "note", "frame"])
def test_local_outline_other_types_unchanged(t: str) -> None:
    nd = Node("n", t, "page:page", "a1", 0.0, 0.0, 30.0, 12.5, props={"geo": "ellipse"})
    assert local_outline(nd).tobytes() == paint_oracle.local_outline(nd).tobytes()


# ---- the painters above a target ---------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(hst.lists(hst.tuples(COORD, COORD, COORD, COORD), min_size=0, max_size=70), hst.integers(-1, 80),
       hst.tuples(COORD, COORD, COORD, COORD), hst.randoms(use_true_random=False))
def test_painters_above_plain_loop_equals_numpy_masks(boxes: List[Tuple[float, ...]], i: int,
                                                      c: Tuple[float, float, float, float], rnd: Any) -> None:
    # painter positions ascending (with gaps), boxes touching, nested, empty and inverted alike
    prow = np.asarray(sorted(rnd.sample(range(200), len(boxes))), dtype=np.int64)
    pb = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if len(boxes):  # some boxes equal to the query rectangle: the comparisons are strict
        pb[rnd.randrange(len(boxes))] = c
    above = O._Above(prow, pb)
    want = above.meeting_numpy(i, *c)
    assert above.meeting(i, *c) == want
    if len(prow) <= O._Above.SMALL:
        assert above.small
        assert [j for j in want if j <= i] == []


# ---- every real file: the first observation through the fast paths and through their twins -------

REAL = shared_files("canvases", "*.tldr") + shared_files("canvases", "*.excalidraw")


def _observations(path: Any) -> List[str]:
    """The default first observation, and observations through a grid of views over each page's
    extent (views that cut shapes, frames and connectors at their edges)."""
    c = load(path)
    out = [observe(c).to_json()]
    for page in c.page_ids():
        ext = c.page_extent(page)
        if ext is None:
            continue
        x0, y0, x1, y1 = ext
        w, h = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
        for fx, fy, fw in ((0.0, 0.0, 1.0), (0.1, 0.2, 0.45), (0.5, 0.4, 0.37), (0.33, 0.05, 0.6), (0.7, 0.6, 0.3)):
            vp = (x0 + fx * w, y0 + fy * h, fw * w, fw * h)
            out.append(observe(c, vp, page=page).to_json())
    return out


@pytest.mark.skipif(not REAL, reason="../shared/data/canvases is absent")
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split("__")[1][:24])
def test_real_observations_identical_through_the_twins(path: Any, monkeypatch: Any) -> None:
    """Plain-float clipping, box outlines and the painter loop on, then the numpy and
    ``target_outline`` paths instead: the same observations, byte for byte."""
    fast = _observations(path)
    monkeypatch.setattr(O, "clip_convex", paint_oracle.clip_convex)
    monkeypatch.setattr(O, "local_outline", paint_oracle.local_outline)
    monkeypatch.setattr(O._Above, "SMALL", -1)
    assert _observations(path) == fast


@hst.composite
def _pages(draw: Any) -> List[Node]:
    """Crowded pages of filled and unfilled shapes of every outline kind, turned by quarter and
    other turns, some in (turned) frames, with lines, text and zero or sub-unit sizes."""
    nodes: List[Node] = []
    frames: List[str] = []
    coord = hst.integers(-4, 16).map(lambda v: v * 12.5)
    size = hst.one_of(hst.integers(0, 12).map(lambda v: v * 10.0), hst.sampled_from([0.5, 1.0, 1e-3]))
    turn = hst.sampled_from([0.0, 0.0, 0.0, math.pi / 2, math.pi, 0.3, -1.1])
    for k in range(draw(hst.integers(2, 28))):
        kind = draw(hst.sampled_from(["geo", "geo", "geo", "frame", "text", "note", "line", "ellipse", "rectangle"]))
        parent = draw(hst.sampled_from(["page:page"] + frames[-3:])) if frames else "page:page"
        nid = f"shape:{k}"
        x, y, w, h, rot = draw(coord), draw(coord), draw(size), draw(size), draw(turn)
        style: Dict[str, Any] = {}
        props: Dict[str, Any] = {}
        if kind == "geo":
            props = {"geo": draw(GEO), "flipX": draw(hst.booleans())}
            style = {"fill": draw(hst.sampled_from(["solid", "semi", "none", "pattern"]))}
        elif kind in ("ellipse", "rectangle"):  # Excalidraw's
            style = {"fill": draw(hst.sampled_from(["#ffc9c9", "transparent"])),
                     "fillStyle": draw(hst.sampled_from(["solid", "hachure"]))}
        elif kind == "line":
            props = {"points": [[0, 0], [w, h]]}
        nodes.append(Node(nid, kind, parent, None, x, y, w, h, rotation=rot, style=style, props=props,
                          text="t" if kind in ("text", "note") else None))
        if kind == "frame":
            frames.append(nid)
    return nodes


@settings(max_examples=150, deadline=None)
@given(_pages(), hst.tuples(hst.integers(-2, 10), hst.integers(-2, 10), hst.integers(3, 20)))
def test_generated_pages_observed_identically_through_the_twins(nodes: List[Node], view: Tuple[int, int, int]) -> None:
    from spatialobs.canvas import Canvas

    vp = (view[0] * 12.5, view[1] * 12.5, view[2] * 12.5, view[2] * 10.0)

    def obs() -> str:
        c = Canvas()
        for nd in nodes:
            c.add(nd)
        return observe(c, vp).to_json() + observe(c).to_json()

    fast = obs()
    saved = O.clip_convex, O.local_outline, O._Above.SMALL
    try:
        O.clip_convex, O.local_outline, O._Above.SMALL = paint_oracle.clip_convex, paint_oracle.local_outline, -1
        assert obs() == fast
    finally:
        O.clip_convex, O.local_outline, O._Above.SMALL = saved


# ---- what paints, memoized by the values paints_interior reads -----------------------------------

_FILLS = hst.one_of(hst.sampled_from(["none", "solid", "semi", "pattern", "transparent", "", " None ", "#ffc9c9",
                                      "#ffc9c980", "rgba(0,0,0,0.5)", "hsla(1, 2%, 3%, 95%)", 1, 1.0, True, 0, False,
                                      None, "missing"]),
                    hst.lists(hst.integers(0, 3), max_size=2))  # an unhashable value: not memoized
_TYPES = hst.sampled_from(["geo", "note", "text", "arrow", "frame", "artboard", "rectangle", "ellipse", "diamond",
                           "image", "line", "container", "group", "custom"])


@settings(max_examples=300, deadline=None)
@given(hst.lists(hst.tuples(_TYPES, _FILLS, hst.sampled_from(["solid", "hachure", 1, True, None, "missing"])),
                 min_size=1, max_size=12),
       hst.sampled_from([0.9, 0.5, 1.0, 1, True, 0.0]))
def test_paints_memo_equals_paints_interior(specs: List[Tuple[str, Any, Any]], min_alpha: float) -> None:
    nodes = {}
    for k, (t, fill, fs) in enumerate(specs):
        style = {key: v for key, v in (("fill", fill), ("fillStyle", fs)) if not (isinstance(v, str) and v == "missing")}
        nodes[f"n{k}"] = Node(f"n{k}", t, "page:page", "a1", 0.0, 0.0, 1.0, 1.0, style=style)
    names = list(nodes)
    crow = np.arange(len(names))[::-1].copy()
    want = [paints_interior(nodes[names[c]].type, nodes[names[c]].style, min_alpha) for c in crow.tolist()]
    for _ in range(2):  # the second pass reads the memo
        got = O._paints(nodes, names, crow, min_alpha)
        assert got.dtype == bool and got.tolist() == want


# ---- the importers' number readers: integers without the general conversion ---------------------

_NUMS = hst.one_of(hst.integers(-(2**1001), 2**1001), hst.sampled_from([2**1000, -(2**1000), 2**1000 - 1, 1 - 2**1000,
                                                                        2**1024, 0, -0.0, True, False, None]),
                   hst.floats(), hst.text(max_size=6), hst.sampled_from(["12px", " 3.5 ", "inf", "nan", "1e999"]),
                   hst.lists(hst.integers(), max_size=1))


@settings(max_examples=500, deadline=None)
@given(_NUMS, hst.sampled_from([0.0, 1.0, 100.0]))
def test_number_readers_equal_their_general_paths(v: Any, default: float) -> None:
    from spatialobs.canvas.formats.excalidraw import _f
    from spatialobs.canvas.formats.tldraw import _prop_num
    from tests.reference import number_oracle

    for fast, slow, args in ((_prop_num, number_oracle.tldraw_prop_num, ("shape:a",)), (_f, number_oracle.excalidraw_f, ())):
        rec = {"id": "a", "k": v}
        d1: List[Any] = []
        d2: List[Any] = []
        a = fast(rec, "k", default, *args, d1) if args else fast(rec, "k", default, d1)
        b = slow(rec, "k", default, *args, d2) if args else slow(rec, "k", default, d2)
        assert type(a) is type(b) and (a == b or (a != a and b != b))
        assert repr(a) == repr(b) and d1 == d2
