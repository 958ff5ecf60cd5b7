"""The compiled arc and label kernels against their Python twin, bit for bit.

Bent arrows (``bend``) and labelled arrows are resolved by ``_core.resolve_arrows`` and
their labels placed by ``_core.place_arrow_labels`` (the label's size measured in
Python); ``arrows.ARC_KERNEL = False`` and ``arrows.LABEL_KERNEL = False`` send them
through the Python path (:func:`~spatialobs.canvas.document.arrows.resolve_arrow`), the
twin the kernels are ported from operation for operation. Every comparison here is of
the float bits (or of the observation's bytes).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import shared_files
from spatialobs import SpatialObsError, _core
from spatialobs._errors import InvalidInputError
from spatialobs.canvas import Canvas, load, observe
from spatialobs.canvas.document import arrows as A
from spatialobs.canvas.document.records import Binding, Node
from tests.strategies import GEOS, SHARED_TLDR, canvas_maker, float_bits

VARIANT = A._HYPOT_VARIANT

pytestmark = pytest.mark.skipif(VARIANT is None, reason="the kernels copy math.hypot of CPython 3.10 and later")


class _Count:
    """Counts the arrows (or labels) a kernel is called with."""

    def __init__(self, real, arg):
        self.real, self.arg, self.n, self.calls = real, arg, 0, 0

    def __call__(self, *args):
        self.n += len(args[self.arg])
        self.calls += 1
        return self.real(*args)


def _flags(mp, on):
    mp.setattr(A, "ARC_KERNEL", on)
    mp.setattr(A, "LABEL_KERNEL", on)


def _derive(make, on, mp):
    """A fresh canvas from ``make()`` and its derivation with the kernels on or off; the counters."""
    arcs = _Count(A._resolve_arrows, 3)
    labels = _Count(A._place_arrow_labels, 0)
    mp.setattr(A, "_resolve_arrows", arcs)
    mp.setattr(A, "_place_arrow_labels", labels)
    _flags(mp, on)
    c = make()
    return c, c.geometry(), arcs, labels


def _assert_same(make, mp, derivations=1):
    """Kernels and twin give the same bits for every local box and page bound, or the same error;
    returns (canvas, arrows through resolve_arrows, labels placed by the kernel)."""
    try:
        _, twin, arcs0, labels0 = _derive(make, False, mp)
    except ArithmeticError as e:
        with pytest.raises(type(e), match="^" + re.escape(str(e)) + "$"):
            _derive(make, True, mp)
        return None, 0, 0
    assert arcs0.n == 0 and labels0.n == 0  # the flags off: no arc or label through the kernels
    c, kern, arcs, labels = _derive(make, True, mp)
    assert twin.ids == kern.ids
    assert np.array_equal(float_bits(twin.local), float_bits(kern.local))
    assert np.array_equal(float_bits(twin.bounds), float_bits(kern.bounds))
    assert arcs.calls <= derivations and labels.calls <= derivations  # one call per derivation
    return c, arcs.n, labels.n


def _eligible(c):
    """Arrows the wrapper sends to resolve_arrows: resolved, not elbows, bent or labelled."""
    bound = {b.from_id for b in c.bindings.values() if b.from_id in c.nodes and b.to_id in c.nodes}
    n = 0
    for i, nd in c.nodes.items():
        if nd.type != "arrow" or A._keeps_points(nd):
            continue
        if i not in bound and not A._needs_resolving(nd):
            continue
        kind = A._batch_kind(nd.props, nd.text)
        n += kind is not None and kind is not A._PLAIN
    return n


# --------------------------------------------------------------------------- real files
@pytest.mark.parametrize("path", SHARED_TLDR, ids=lambda p: p.name[:40])
def test_real_files_give_the_same_boxes(path, monkeypatch):
    c, n, _ = _assert_same(lambda: load(path), monkeypatch)
    assert n == _eligible(c)


def test_real_files_use_both_kernels(monkeypatch):
    # the files above do exercise them: bent and labelled arrows, bound and free
    arcs = labels = 0
    for p in SHARED_TLDR:
        _, n, m = _assert_same(lambda p=p: load(p), monkeypatch)
        arcs += n
        labels += m
    # the conformance documents alone give 83 arcs and 12 labels; the shared real files add more labels
    assert arcs >= 60 and labels >= (15 if shared_files("canvases", "*.tldr") else 10)


def _observed(path, on, mp):
    _flags(mp, on)
    c = load(path)
    d = c.geometry()
    return float_bits(d.local).tobytes() + float_bits(d.bounds).tobytes(), observe(c, include_bounds=True).to_json()


@pytest.mark.parametrize("path", SHARED_TLDR, ids=lambda p: p.name[:40])
def test_real_files_observe_the_same_bytes(path, monkeypatch):
    assert _observed(path, True, monkeypatch) == _observed(path, False, monkeypatch)


# --------------------------------------------------------------------------- generated canvases
_coord = st.one_of(st.floats(-400, 400), st.floats(-1e5, 1e5), st.sampled_from([0.0, -0.0, 100.0, 1e-7]))
_size = st.one_of(st.floats(0, 400), st.sampled_from([0.0, 1e-9, 0.5, 1.0, 100.0]))
_rot = st.one_of(st.just(0.0), st.sampled_from([math.pi / 2, math.pi, -math.pi / 4, 1e-12]), st.floats(-7, 7))
_anchor = st.one_of(st.floats(-0.3, 1.3), st.sampled_from([0.0, 0.5, 1.0, 1e-3, 0.999]))
# bends of every sign and size: under and at tldraw's minimum (8 x scale), tiny, huge
_bend = st.one_of(st.sampled_from([0, 0.0, 7.99, 8.0, -8.0, 8.000001, 16.0, -4.0, 1e-300, 40, -40.0, 1e6, -1e9,
                                   1e15, 5e300]),
                  st.floats(-500, 500), st.floats(-1e12, 1e12))
_text = st.sampled_from([None, "", "   ", "label", "a much longer label that wraps over several lines " * 3,
                         "x", "two\nlines", "W" * 120])
_position = st.one_of(st.sampled_from([None, 0, 0.0, 1, 1.0, 0.5, -3.0, 7.0, "0.25", True]), st.floats(0, 1))


@st.composite
def _target(draw, i):
    kind = draw(st.sampled_from(["geo"] * 8 + ["note", "text", "frame", "line", "image", "draw"]))
    props = {}
    if kind == "geo":
        props = {"geo": draw(st.sampled_from(GEOS)), "size": draw(st.sampled_from(["s", "m", "l", "xl"]))}
        if draw(st.booleans()):
            props["flipX"] = True
        if draw(st.booleans()):
            props["flipY"] = True
    elif kind in ("note", "text"):
        props = {"size": draw(st.sampled_from(["s", "m", "l", "xl"])), "scale": draw(st.sampled_from([1, 0.5, 2.5]))}
    elif kind == "line":
        pts = draw(st.lists(st.tuples(st.floats(-200, 200), st.floats(-200, 200)), min_size=2, max_size=5))
        props = {"points": {f"a{k}": {"id": f"a{k}", "index": f"a{k}", "x": x, "y": y} for k, (x, y) in enumerate(pts)},
                 "size": "m"}
        if draw(st.booleans()):
            props["spline"] = "cubic"
    elif kind == "draw":
        pts = draw(st.lists(st.tuples(st.floats(-200, 200), st.floats(-200, 200)), min_size=1, max_size=8))
        props = {"segments": [{"type": "free", "points": [{"x": x, "y": y, "z": 0.5} for x, y in pts]}],
                 "size": "m", "isClosed": draw(st.booleans()), "isComplete": True}
    return Node(f"shape:t{i}", kind, "page:page", f"a{i}", draw(_coord), draw(_coord), draw(_size), draw(_size),
                draw(_rot), props=props)


@st.composite
def _canvases(draw):
    n_targets = draw(st.integers(1, 4))
    nodes = [draw(_target(i)) for i in range(n_targets)]
    if len(nodes) > 1 and draw(st.booleans()):  # one target inside another, same frame
        outer = nodes[0]
        nodes[1] = nodes[1].replace(x=outer.x + 10, y=outer.y + 10, rotation=outer.rotation,
                                    w=outer.w / 3, h=outer.h / 3)
    arrows, bindings = [], []
    for k in range(draw(st.integers(1, 5))):
        aid = f"shape:arrow{k}"
        start = {"x": draw(_coord), "y": draw(_coord)}
        end = dict(start) if draw(st.integers(0, 7)) == 0 else {"x": draw(_coord), "y": draw(_coord)}  # coincident
        props = {"start": start, "end": end,
                 "arrowheadStart": draw(st.sampled_from(["none", "arrow", "triangle"])),
                 "arrowheadEnd": draw(st.sampled_from(["none", "arrow", "dot"])),
                 "size": draw(st.sampled_from(["s", "m", "l", "xl"])),
                 "font": draw(st.sampled_from(["draw", "sans", "serif", "mono", 3])),
                 "bend": draw(_bend),
                 "scale": draw(st.sampled_from([1, 1.0, 0.5, 2.0, 0, -1.0, 1e-3, 40.0]))}
        position = draw(_position)
        if position is not None:
            props["labelPosition"] = position
        kind = draw(st.integers(0, 11))
        if kind == 0:
            props["kind"] = "elbow"
        elif kind == 1:
            props["kind"] = "arc"
        elif kind == 2:
            props["kind"] = "straight-ish"  # an unknown kind: never an arc
        arrows.append(Node(aid, "arrow", "page:page", f"b{k}", draw(_coord), draw(_coord), rotation=draw(_rot),
                           text=draw(_text), props=props))
        for term in ("start", "end"):
            t = draw(st.integers(-1, len(nodes) - 1))
            if t < 0:
                continue
            bprops = {"isExact": True} if draw(st.integers(0, 4)) == 0 else {}
            bindings.append(Binding(f"binding:{k}{term}", "arrow", aid, nodes[t].id, term,
                                    (draw(_anchor), draw(_anchor)), draw(st.booleans()), bprops))
    return nodes, arrows, bindings


_build = canvas_maker


# the twin samples arcs of up to 65,536 spans in Python (and turned arrows twice): minutes on a loaded machine
@pytest.mark.generated
@pytest.mark.timeout(600)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_canvases())
def test_generated_canvases_give_the_same_boxes(spec):
    with pytest.MonkeyPatch.context() as mp:
        c, n, _ = _assert_same(_build(spec), mp)
    assert c is None or n == _eligible(c)


# the twin samples arcs of up to 65,536 spans in Python (and turned arrows twice): minutes on a loaded machine
@pytest.mark.generated
@pytest.mark.timeout(600)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_canvases())
def test_kernel_bodies_match_the_twin(spec):
    # the drawn ends, the arc (centre, flags), isValid and the body's box, not only the boxes they make
    c = _build(spec)()
    try:
        d = c.geometry()
    except ArithmeticError:
        assume(False)  # an arrow the Python path cannot resolve (see _assert_same)
    nodes = [c.nodes[i] for i in d.ids]
    batch = A._StraightBatch(d, nodes)
    ids = []
    for r, nd in enumerate(nodes):
        kind = A._batch_kind(nd.props, nd.text) if nd.type == "arrow" else None
        if kind is None or kind is A._PLAIN:
            continue
        terms = {b.terminal: b for b in c.bindings.values() if b.from_id == nd.id}
        batch.add(r, terms, [], (kind[0], kind[1], False))  # bodies only
        ids.append(nd.id)
    assume(ids)
    n, k = len(batch.rows), len(batch.closed)
    seen = {}
    real = _core.resolve_arrows

    def spy(*args):
        seen["out"] = real(*args)
        return seen["out"]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(A, "_resolve_arrows", spy)
        batch._call(d, n, k, batch.flat)
    boxes, ends, valid, is_arc, centers, sweep_large = seen["out"]
    for j, aid in enumerate(ids):
        nd = c.nodes[aid]
        g = A.resolve_arrow(nd.props, *_inputs(c, aid)[1:], label=None)
        assert g.kind == ("arc" if is_arc[j] else "straight")
        assert float_bits(ends[j]).tolist() == float_bits(g.start + g.end).tolist()
        assert bool(valid[j]) == g.valid
        assert float_bits(boxes[j]).tolist() == float_bits(g.bounds).tolist()
        if g.kind == "arc":
            assert float_bits(centers[j]).tolist() == float_bits(g.center).tolist()
            assert (bool(sweep_large[j][0]), bool(sweep_large[j][1])) == (bool(g.sweep), bool(g.large))


def _inputs(c, aid):
    nd, axf, s, e = A._arrow_inputs(c, aid)
    return nd, axf, s, e


# the twin samples arcs of up to 65,536 spans in Python (and turned arrows twice): minutes on a loaded machine
@pytest.mark.generated
@pytest.mark.timeout(600)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_canvases(), st.floats(-300, 300), st.floats(-300, 300), _rot, _text)
def test_an_edit_gives_the_same_boxes(spec, dx, dy, rot, text):
    # the incremental pass (a target moved and turned, an arrow's label changed) resolves through the kernels too
    def make():
        c = _build(spec)()
        c.geometry()
        t = c.nodes["shape:t0"]
        c.update("shape:t0", x=t.x + dx, y=t.y + dy, rotation=rot)
        c.update("shape:arrow0", text=text)
        return c

    with pytest.MonkeyPatch.context() as mp:
        _assert_same(make, mp, derivations=2)


# --------------------------------------------------------------------------- labels on their own
@st.composite
def _bodies(draw):
    start = (draw(_coord), draw(_coord))
    if draw(st.booleans()):
        return False, start, (draw(_coord), draw(_coord)), (0.0, 0.0), 0, 0
    centre = (draw(_coord), draw(_coord))
    ang = draw(st.floats(-7, 7))
    r = math.hypot(start[0] - centre[0], start[1] - centre[1])
    end = (centre[0] + math.cos(ang) * r, centre[1] + math.sin(ang) * r)
    return True, start, end, centre, draw(st.integers(0, 1)), draw(st.integers(0, 1))


_lsize = st.one_of(st.floats(0, 2000), st.sampled_from([0.0, 1e-9, 8.5, 1e6]))


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(_bodies(), _lsize, _lsize, st.one_of(st.floats(0, 200), st.just(0.0)),
       st.one_of(st.floats(-2, 3), st.sampled_from([0.0, 1.0, 0.5])), st.booleans(), st.booleans(), st.booleans(),
       st.booleans())
def test_labels_match_the_twin(body, lw, lh, pad, position, head0, head1, bound0, bound1):
    is_arc, start, end, centre, sweep, large = body
    if is_arc and not A._equals(start, end):
        pts = A.arc_vertices(centre, start, end, sweep, large)
    else:
        pts = [start, end]
    bbox = A._bbox(pts)
    # the twin with the measured size given (what the kernel takes): pad from size and scale
    scale = pad / 20.0 if pad else 1.0
    props = {"size": "m", "labelPosition": position}
    pad_m = (A._LABEL_TO_ARROW_PADDING + (3.5 - 2.0) * 2) * scale
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(A, "_label_size", lambda *args: (lw, lh))
        want = A._label_box(pts, start, end, "t", props, scale, (bound0, bound1), (head0, head1))
    f64 = np.float64
    merged, label = _core.place_arrow_labels(
        np.array([is_arc]), np.array([start + end], dtype=f64), np.array([centre], dtype=f64),
        np.array([[bool(sweep), bool(large)]]), np.array([bbox], dtype=f64), np.array([[lw, lh]], dtype=f64),
        np.array([pad_m]), np.array([position], dtype=f64), np.array([[head0 or bound0, head1 or bound1]]),
        VARIANT)
    assert float_bits(label[0]).tolist() == float_bits(want).tolist()
    union = (min(bbox[0], want[0]), min(bbox[1], want[1]), max(bbox[2], want[2]), max(bbox[3], want[3]))
    assert float_bits(merged[0]).tolist() == float_bits(union).tolist()


def test_label_positions_at_the_ends_clamp_to_the_padding():
    # a 200-unit straight body with a 20 x 10 label: position 0 and 1 stop where the label clears the padding
    args = (np.array([False, False, False]), np.array([[0.0, 0.0, 200.0, 0.0]] * 3),
            np.zeros((3, 2)), np.zeros((3, 2), dtype=bool), np.array([[0.0, 0.0, 200.0, 0.0]] * 3),
            np.array([[20.0, 10.0]] * 3), np.array([23.0] * 3), np.array([0.0, 1.0, 0.0]),
            np.array([[True, True], [True, True], [False, False]]), VARIANT)
    merged, label = _core.place_arrow_labels(*args)
    assert label.tolist() == [[23.0, -5.0, 43.0, 5.0], [157.0, -5.0, 177.0, 5.0], [-10.0, -5.0, 10.0, 5.0]]
    assert merged.tolist()[2] == [-10.0, -5.0, 200.0, 5.0]


# --------------------------------------------------------------------------- the flags and the batch
def _bent_page(n=40):
    c = Canvas()
    for i in range(n):
        c.add(Node(f"shape:b{i}", "geo", "page:page", f"a{i:04d}", 300.0 * (i % 8), 200.0 * (i // 8), 120, 80,
                   props={"geo": GEOS[i % len(GEOS)], "size": "m"}))
    for i in range(n - 1):
        aid = f"shape:arr{i}"
        c.add(Node(aid, "arrow", "page:page", f"b{i:04d}", 0, 0, text="step" if i % 3 == 0 else None,
                   props={"start": {"x": 0, "y": 0}, "end": {"x": 10, "y": 10}, "bend": (-1) ** i * (10 + 7 * i),
                          "labelPosition": (i % 5) / 4}))
        c.add(Binding(f"binding:{i}s", "arrow", aid, f"shape:b{i}", "start", (0.5, 0.5), False, {}))
        if i % 4:
            c.add(Binding(f"binding:{i}e", "arrow", aid, f"shape:b{i + 1}", "end", (0.2, 0.7), True, {}))
    return c


def test_the_flags_send_arrows_to_the_twin(monkeypatch):
    c, n, m = _assert_same(_bent_page, monkeypatch)
    assert n == 39 and m == 13
    # labels off, arcs on: the labelled arcs go to the twin, the others to the kernel
    monkeypatch.setattr(A, "ARC_KERNEL", True)
    monkeypatch.setattr(A, "LABEL_KERNEL", False)
    arcs = _Count(A._core.resolve_arrows, 3)
    labels = _Count(A._core.place_arrow_labels, 0)
    monkeypatch.setattr(A, "_resolve_arrows", arcs)
    monkeypatch.setattr(A, "_place_arrow_labels", labels)
    d = _bent_page().geometry()
    assert arcs.n == 26 and labels.n == 0
    _flags(monkeypatch, False)
    assert np.array_equal(float_bits(d.local), float_bits(_bent_page().geometry().local))


def test_twin_arcs_are_recorded_for_the_next_derivation(monkeypatch):
    # an arc the batch resolved is kept by its twin key, as one the Python path resolved
    _flags(monkeypatch, True)
    c = _bent_page(6)
    c.geometry()
    twins = c._arrow_cache.twins
    assert len(twins) == 5
    assert all(isinstance(v[0], np.ndarray) and v[0].shape == (4,) for v in twins.values())


def _alike_page(lone: int, copies: int) -> Canvas:
    """``lone`` bent arrows each between its own two boxes, then ``copies`` copies of one bent,
    labelled arrow between two further boxes (bound alike: twins of one another)."""
    c = Canvas()
    for i in range(2 * lone + 2):
        c.add(Node(f"shape:b{i}", "geo", "page:page", f"a{i:05d}", 300.0 * (i % 10), 200.0 * (i // 10), 120, 80,
                   props={"geo": GEOS[i % len(GEOS)], "size": "m"}))
    for i in range(lone + copies):
        aid = f"shape:arr{i}"
        s, e = (2 * i, 2 * i + 1) if i < lone else (2 * lone, 2 * lone + 1)
        c.add(Node(aid, "arrow", "page:page", f"b{i:05d}", 0, 0, text=None if i < lone else "copy",
                   props={"start": {"x": 0, "y": 0}, "end": {"x": 10, "y": 10}, "bend": 25.0 + (i % 7 if i < lone else 0)}))
        c.add(Binding(f"binding:{i}s", "arrow", aid, f"shape:b{s}", "start", (0.5, 0.5), False, {}))
        c.add(Binding(f"binding:{i}e", "arrow", aid, f"shape:b{e}", "end", (0.3, 0.6), False, {}))
    return c


@pytest.mark.parametrize("on", [True, False], ids=["kernels", "twin"])
def test_a_full_pass_keys_only_arrows_bound_alike(monkeypatch, on):
    # with no twins remembered, a pass of many arrows builds twin keys only for the arrows
    # bound to the same targets as another (the only ones that can be twins); those are
    # resolved once and remembered, and every box is the one the arrow gets on its own
    _flags(monkeypatch, on)
    keyed = []
    real = A._twin_key

    def counting(nd, *args, **kwargs):
        keyed.append(nd.id)
        return real(nd, *args, **kwargs)

    monkeypatch.setattr(A, "_twin_key", counting)
    lone, copies = A._FRAMES_FROM, 12
    c = _alike_page(lone, copies)
    d = c.geometry()
    assert sorted(keyed) == sorted(f"shape:arr{i}" for i in range(lone, lone + copies))
    assert len(c._arrow_cache.twins) == 1
    first = float_bits(d.local[d.row["shape:arr0"]])
    assert all(np.array_equal(float_bits(d.local[d.row[f"shape:arr{i}"]]), float_bits(A.arrow_geometry(c, f"shape:arr{i}").bounds))
               for i in (0, 1, lone - 1, lone, lone + copies - 1)), first
    # the same boxes as a pass that keys every arrow (a twin remembered: no pre-filter)
    monkeypatch.setattr(A, "_shared_targets", lambda terms: None)
    again = _alike_page(lone, copies)
    assert np.array_equal(float_bits(again.geometry().local), float_bits(d.local))
    assert len(keyed) == 2 * copies + lone


def test_shared_targets_are_those_bound_alike():
    b = {k: Binding(k, "arrow", "shape:x", t, term, (0.5, 0.5), False, {})
         for k, t, term in [("s1", "shape:a", "start"), ("e1", "shape:b", "end"), ("e2", "shape:a", "end")]}
    arrows = [{"start": b["s1"], "end": b["e1"]}, {"end": b["e1"], "start": b["s1"]}, {"start": b["s1"]},
              {"end": b["e2"]}, {"end": b["e2"]}, {}]
    assert A._shared_targets(arrows) == {("shape:a", "shape:b"), (None, "shape:a")}
    assert A._targets_of({}) == (None, None)


# --------------------------------------------------------------------------- bad input
def _good():
    """One arc bound at its end to a 100 x 100 box, as the wrapper passes it."""
    f, i, b = np.float64, np.int64, bool
    return dict(px=np.array([0.0, 200.0]), py=np.array([0.0, 0.0]), rotation=np.array([0.0, 0.0]),
                arrow_row=np.array([0], dtype=i), points=np.array([[0.0, 50.0, 0.0, 0.0]]),
                scale=np.array([1.0]), stroke=np.array([3.5]), heads=np.array([[False, True]]),
                target=np.array([[-1, 1]], dtype=i), outline=np.array([[0, 0]], dtype=i),
                box_outline=np.array([[0, 0]], dtype=i), anchor=np.array([[0.0, 0.0, 0.5, 0.5]], dtype=f),
                precise=np.array([[False, False]], dtype=b), exact=np.array([[False, False]], dtype=b),
                offsets=np.array([0, 4], dtype=i),
                outline_points=np.array([[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0]]),
                closed=np.array([True]), bounds=np.array([[0.0, 0.0, 100.0, 100.0]]),
                outline_stroke=np.array([1.75]), bend=np.array([40.0]), arc=np.array([True]), hypot_variant=VARIANT)


def test_the_good_input_resolves_as_the_twin():
    boxes, ends, valid, is_arc, centers, sweep_large = _core.resolve_arrows(**_good())
    box = A.Terminal(A.target_outline("geo", {"geo": "rectangle", "size": "m"}, 100, 100),
                     (200.0, 0.0, 1.0, 0.0), (0.5, 0.5), False, False, "shape:box")
    g = A.resolve_arrow({"start": {"x": 0, "y": 50}, "end": {"x": 0, "y": 0}, "bend": 40.0},
                        (0.0, 0.0, 1.0, 0.0), None, box)
    assert g.kind == "arc" and is_arc.tolist() == [True] and valid.tolist() == [True]
    assert ends[0].tolist() == [*g.start, *g.end] and boxes[0].tolist() == list(g.bounds)
    assert centers[0].tolist() == list(g.center) and sweep_large[0].tolist() == [bool(g.sweep), bool(g.large)]


def test_an_arc_flag_off_resolves_straight():
    boxes, ends, valid, is_arc, centers, _ = _core.resolve_arrows(**{**_good(), "arc": np.array([False])})
    assert is_arc.tolist() == [False] and ends.tolist() == [[0.0, 50.0, 186.5, 50.0]]
    assert centers.tolist() == [[0.0, 0.0]]


def _labels_good():
    return dict(is_arc=np.array([False]), ends=np.array([[0.0, 0.0, 200.0, 0.0]]), centers=np.zeros((1, 2)),
                sweep_large=np.zeros((1, 2), dtype=bool), body_boxes=np.array([[0.0, 0.0, 200.0, 0.0]]),
                size=np.array([[20.0, 10.0]]), pad=np.array([23.0]), position=np.array([0.5]),
                clamp=np.array([[True, True]]), hypot_variant=VARIANT)


def _nan_at(a, index):
    a = a.copy()
    a[index] = np.nan
    return a


BAD = [
    (_core.resolve_arrows, {**_good(), "bend": np.zeros(2)}, InvalidInputError, "bend must have shape (1,), got (2,)"),
    (_core.resolve_arrows, {**_good(), "bend": np.array([np.inf])}, InvalidInputError,
     "arrow 0 bend is not finite (inf)"),
    (_core.resolve_arrows, {**_good(), "arc": np.array([1])}, InvalidInputError,
     "arc must have dtype bool, got int64; convert it with np.ascontiguousarray(arc, dtype=np.bool)"),
    (_core.resolve_arrows, {**_good(), "hypot_variant": 2}, InvalidInputError,
     "hypot_variant must be 0 (CPython 3.10-3.11) or 1 (3.12+), got 2"),
    (_core.resolve_arrows, {**_good(), "scale": np.array([0.0])}, InvalidInputError, "arrow 0 scale is 0"),
    (_core.place_arrow_labels, {**_labels_good(), "is_arc": np.zeros((1, 1), dtype=bool)}, InvalidInputError,
     "is_arc must have shape (n,), got (1, 1)"),
    (_core.place_arrow_labels, {**_labels_good(), "ends": np.zeros((1, 3))}, InvalidInputError,
     "ends must have shape (1, 4), got (1, 3)"),
    (_core.place_arrow_labels, {**_labels_good(), "size": np.zeros((1, 2), dtype=np.float32)}, InvalidInputError,
     "size must have dtype float64, got float32; convert it with np.ascontiguousarray(size, dtype=np.float64)"),
    (_core.place_arrow_labels, {**_labels_good(), "clamp": np.zeros((2, 2), dtype=bool)}, InvalidInputError,
     "clamp must have shape (1, 2), got (2, 2)"),
    (_core.place_arrow_labels, {**_labels_good(), "size": _nan_at(np.array([[20.0, 10.0]]), (0, 1))},
     InvalidInputError, "label 0 height is not finite (nan)"),
    (_core.place_arrow_labels, {**_labels_good(), "size": np.array([[np.inf, 10.0]])},
     InvalidInputError, "label 0 width is not finite (inf)"),
    (_core.place_arrow_labels, {**_labels_good(), "pad": np.array([np.nan])}, InvalidInputError,
     "label 0 padding is not finite (nan)"),
    (_core.place_arrow_labels, {**_labels_good(), "position": np.array([-np.inf])}, InvalidInputError,
     "label 0 position is not finite (-inf)"),
    (_core.place_arrow_labels, {**_labels_good(), "hypot_variant": -1}, InvalidInputError,
     "hypot_variant must be 0 (CPython 3.10-3.11) or 1 (3.12+), got -1"),
]


@pytest.mark.parametrize("fn, kwargs, error, message", BAD, ids=[m[:40] for _, _, _, m in BAD])
def test_bad_input_is_rejected(fn, kwargs, error, message):
    with pytest.raises(error, match="^" + re.escape(message) + "$") as info:
        fn(**kwargs)
    assert isinstance(info.value, SpatialObsError)


def test_copies_of_one_bent_labelled_arrow_are_resolved_once_per_batch(monkeypatch):
    # A reply that draws the same long arc many times (the kept fuzz finding
    # "1000 labelled arcs to a far shape") must not sample and label it once per
    # copy: the copies (one twin key) take the first one's box from the batch.
    target = Node("shape:far", "geo", "page:page", "a0", 90000.0, 60000.0, 100.0, 80.0, props={"geo": "ellipse"})
    arrows, bindings = [], []
    for k in range(40):
        aid = f"shape:arc{k}"
        arrows.append(Node(aid, "arrow", "page:page", f"b{k:02d}", 0.0, 0.0, text="a long label",
                           props={"bend": 4000.0, "start": {"x": 0, "y": 0}, "end": {"x": 0, "y": 0}}))
        bindings.append(Binding(f"binding:{k}", "arrow", aid, "shape:far", "end", (0.5, 0.5), False, {}))
    make = canvas_maker(([target], arrows, bindings))
    c, n, placed = _assert_same(make, monkeypatch)
    assert n == 1 and placed == 1
    assert len({tuple(float_bits(c.geometry().local[c.geometry().row[a.id]])) for a in arrows}) == 1


def _huge_scale_page(scale: float) -> Canvas:
    """Arrows of every kind (straight, bent, elbow), bound and free, with and without a label, at
    ``scale``, beside a plain one: a font size or a width beyond the float range for the labels."""
    c = Canvas()
    c.add(Node("shape:box", "geo", "page:page", "a1", 300, 0, 100, 80, props={"geo": "rectangle"}))
    k = 0
    for kind in ({}, {"bend": 40}, {"kind": "elbow"}):
        for label in ("", "Label"):
            for bound in (False, True):
                aid = f"shape:a{k}"
                props = {"start": {"x": 0, "y": 0}, "end": {"x": 120, "y": 30}, "scale": scale, **kind}
                c.add(Node(aid, "arrow", "page:page", f"a{k + 2}", 10.0 * k, 200.0, props=props, text=label))
                if bound:
                    c.add(Binding(f"binding:{k}", "arrow", aid, "shape:box", "end", (0.5, 0.5), False, {}))
                k += 1
    c.add(Node("shape:plain", "arrow", "page:page", "b1", 0, 500, text="Plain",
               props={"start": {"x": 0, "y": 0}, "end": {"x": 200, "y": 0}}))
    return c


@pytest.mark.parametrize("scale", [1e300, 1e306, 1e308, 1.7e308])
def test_an_arrow_scaled_beyond_the_float_range_has_finite_bounds_alike_in_kernels_and_twins(monkeypatch, scale):
    """A label that cannot be measured at that scale (its font size or width beyond the float
    range) leaves the arrow bounded by its body; a body that is not finite leaves it bounded by its
    origin. The kernels and the twins agree, to the bit, and nothing warns or raises (the derivation
    once raised OverflowError from the label's measure, and numpy warned of NaN in the boxes)."""
    got = []
    for on in (True, False):
        _flags(monkeypatch, on)
        monkeypatch.setattr(A, "STRAIGHT_KERNEL", on)
        c = _huge_scale_page(scale)
        d = c.geometry()
        assert np.isfinite(d.bounds).all()
        plain = c.page_bounds("shape:plain")
        assert plain[3] - plain[1] > 20.0  # the plain arrow (flat) keeps its label's height
        observe(c, (0, 0, 800, 600)).to_json()
        got.append(float_bits(d.bounds))
    assert np.array_equal(got[0], got[1])
