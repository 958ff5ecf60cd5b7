"""Canvas document model: write path, sanitizer, derived geometry, native JSON."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spatialobs import InvalidInputError, OutOfRangeError, SpatialObsError
from spatialobs.canvas import Binding, Canvas, Node, Page, Viewport, normalize_style_key, sanitize_style
from spatialobs.canvas.document.fractional import is_valid_key, key_between, key_sequence
from tests.reference.canvas_oracle import corners_box

P = "page:page"



# ---------------------------------------------------------------- sanitizer and write path

def test_style_keys_have_one_spelling():
    assert normalize_style_key("background-color") == "backgroundColor"
    assert normalize_style_key("background_color") == "backgroundColor"
    assert normalize_style_key("backgroundColor") == "backgroundColor"
    assert sanitize_style({"font-size": "12", "line_height": "1.5", "color": "", "fill": None, "dash": []}) == {
        "fontSize": 12, "lineHeight": 1.5}


def test_add_coerces_numeric_strings_and_assigns_index():
    c = Canvas()
    a = c.add({"id": "a", "type": "geo", "parent": P, "x": "10", "y": "2.5px", "w": "30", "h": 40})
    b = c.add(Node("b", "geo", P, index=None, w=1, h=1))  # type: ignore[arg-type]
    assert (a.x, a.y, a.w) == (10.0, 2.5, 30.0)
    assert is_valid_key(a.index) and b.index > a.index
    assert c.paint_order() == ["a", "b"]


@pytest.mark.parametrize("bad, field", [
    ({"x": float("nan")}, "x"), ({"w": -1}, "w"), ({"y": "abc"}, "y"), ({"rotation": float("inf")}, "rotation"),
    ({"opacity": 2}, "opacity"), ({"locked": "maybe"}, "locked"), ({"colour": 1}, "colour"),
])
def test_add_rejects_bad_fields_naming_record_and_field(bad, field):
    c = Canvas()
    with pytest.raises(InvalidInputError, match=rf"'n1'.*{field}"):
        c.add({"id": "n1", "type": "geo", "parent": P, **bad})
    assert len(c) == 0


def test_add_rejects_unknown_parent_duplicate_and_binding_to_nothing():
    c = Canvas()
    c.add(Node("a", "geo", P))
    with pytest.raises(InvalidInputError, match="'b'.*parent 'nope'"):
        c.add(Node("b", "geo", "nope"))
    with pytest.raises(InvalidInputError, match="already exists"):
        c.add(Node("a", "geo", P))
    with pytest.raises(InvalidInputError, match="'ghost' does not exist"):
        c.add(Binding("b1", "arrow", "a", "ghost", "end"))
    assert isinstance(InvalidInputError("x"), ValueError) and issubclass(InvalidInputError, SpatialObsError)


def test_update_merges_style_and_rejects_cycles():
    c = Canvas()
    c.add(Node("f", "frame", P, w=100, h=100))
    c.add(Node("g", "group", "f"))
    c.add(Node("a", "geo", "g", style={"color": "red"}, w=5, h=5))
    n = c.update("a", style={"fill-style": "solid", "color": None}, x="3")
    assert n.style == {"fillStyle": "solid"} and n.x == 3.0
    with pytest.raises(InvalidInputError, match="cycle"):
        c.update("f", parent="a")
    with pytest.raises(OutOfRangeError):
        c.update("zzz", x=1)
    assert c.node("f").parent == P


def test_remove_takes_subtree_bindings_and_selection():
    c = Canvas()
    c.add(Node("f", "frame", P, w=100, h=100))
    c.add(Node("a", "geo", "f", w=5, h=5))
    c.add(Node("arrow", "arrow", P, props={"points": [[0, 0], [10, 0]]}))
    c.add(Binding("b1", "arrow", "arrow", "a", "end"))
    c.selection[P] = ("a", "arrow")
    removed = c.remove("f")
    assert set(removed) == {"a", "f", "b1"}
    assert list(c.nodes) == ["arrow"] and not c.bindings and c.selection[P] == ("arrow",)


def test_batch_is_atomic_and_recomputes_once():
    c = Canvas()
    c.add(Node("a", "geo", P, w=10, h=10))
    before = c.copy()
    with pytest.raises(InvalidInputError):
        with c.batch():
            c.update("a", x=50)
            c.add(Node("b", "geo", "a", w=1, h=1))
            c.remove("a")
            c.add(Node("c", "geo", "missing"))
    assert c == before and c.page_bounds("a") == (0.0, 0.0, 10.0, 10.0)
    with c.batch():
        c.update("a", x=5)
        c.add(Node("b", "geo", P, x=1, w=1, h=1))
    assert c.page_bounds("a") == (5.0, 0.0, 15.0, 10.0) and "b" in c.nodes


def test_nodes_mapping_is_read_only():
    c = Canvas()
    with pytest.raises(TypeError):
        c.nodes["x"] = Node("x", "geo", P)  # type: ignore[index]


# ---------------------------------------------------------------- derived geometry

@settings(max_examples=200, deadline=None)
@given(x=st.floats(-1e4, 1e4), y=st.floats(-1e4, 1e4), w=st.floats(0, 1e3), h=st.floats(0, 1e3),
       rot=st.floats(-7, 7))
def test_rotated_rectangle_bounds_match_corners(x, y, w, h, rot):
    c = Canvas()
    c.add(Node("r", "geo", P, "a1", x, y, w, h, rot))
    np.testing.assert_allclose(c.page_bounds("r"), corners_box(x, y, rot, 0, 0, w, h), rtol=1e-12, atol=1e-9)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(-500, 500), st.floats(-500, 500), st.floats(-4, 4)), min_size=1, max_size=6),
       st.floats(1, 300), st.floats(1, 300))
def test_nesting_composes_transforms(chain, w, h):
    c = Canvas()
    parent = P
    ox, oy, rot = 0.0, 0.0, 0.0
    for k, (x, y, r) in enumerate(chain):
        nid = f"n{k}"
        c.add(Node(nid, "geo", parent, "a1", x, y, w, h, r))
        # compose by hand: parent origin + parent rotation applied to the local offset
        ox, oy = ox + x * math.cos(rot) - y * math.sin(rot), oy + x * math.sin(rot) + y * math.cos(rot)
        rot += r
        parent = nid
    np.testing.assert_allclose(c.page_bounds(parent), corners_box(ox, oy, rot, 0, 0, w, h), rtol=1e-9, atol=1e-6)
    assert math.isclose(c.page_rotation(parent), rot, abs_tol=1e-12)


def test_frames_clip_groups_union_and_paint_order():
    c = Canvas()
    c.add(Node("f", "frame", P, "a2", 0, 0, 100, 100))
    c.add(Node("g", "group", "f", "a1", 10, 10))
    c.add(Node("a", "geo", "g", "a2", 0, 0, 20, 20))
    c.add(Node("b", "geo", "g", "a1", 80, 80, 40, 40))
    c.add(Node("out", "geo", "f", "a2", 200, 0, 10, 10))
    c.add(Node("below", "geo", P, "a1", 0, 0, 5, 5))
    assert c.page_bounds("g") == (10.0, 10.0, 130.0, 130.0)
    assert c.visible_bounds("b") == (90.0, 90.0, 100.0, 100.0)
    assert c.visible_bounds("out") is None
    assert c.paint_order() == ["below", "f", "g", "b", "a", "out"]
    assert c.frame_of("a") == "f" and c.group_of("a") == "g" and c.group_of("g") is None
    cols = c.columns()
    assert cols.ids == c.paint_order() and cols.bounds.shape == (6, 4) and cols.bounds.flags.c_contiguous
    k = cols.position("b")
    assert cols.clipped[k] and cols.parent[k] == "g" and cols.frame[k] == "f"
    assert np.isnan(cols.visible[cols.position("out")]).all()


def test_effective_flags_and_opacity_inherit():
    c = Canvas()
    c.add(Node("f", "frame", P, w=10, h=10, opacity=0.5, locked=True))
    c.add(Node("a", "geo", "f", w=1, h=1, opacity=0.5, hidden=True))
    cols = c.columns()
    k = cols.position("a")
    assert cols.opacity[k] == 0.25 and cols.locked[k] and cols.hidden[k]


def test_point_shapes_use_point_bounds():
    c = Canvas()
    c.add(Node("l", "line", P, "a1", 100, 100, props={"points": [[0, 0], [-10, 20], [30, -5]]}))
    assert c.page_bounds("l") == (90.0, 95.0, 130.0, 120.0)


def test_viewport_box():
    assert Viewport(1, 2, 3, 4).as_box() == (1.0, 2.0, 4.0, 6.0)
    assert Viewport.from_box((1, 2, 4, 6)) == Viewport(1.0, 2.0, 3.0, 4.0)


def test_fractional_keys_order():
    seq = key_sequence(200)
    assert seq == sorted(seq) and all(is_valid_key(k) for k in seq)
    m = key_between(seq[3], seq[4])
    assert seq[3] < m < seq[4] and is_valid_key(m)


# ---------------------------------------------------------------- native JSON

node_st = st.builds(
    dict,
    x=st.floats(-1e6, 1e6), y=st.floats(-1e6, 1e6), w=st.floats(0, 1e4), h=st.floats(0, 1e4),
    rotation=st.floats(-7, 7), opacity=st.floats(0, 1), locked=st.booleans(), hidden=st.booleans(),
    text=st.none() | st.text(min_size=1, max_size=20), style=st.dictionaries(st.sampled_from(["color", "fill", "dash"]), st.text(min_size=1, max_size=5)),
    type=st.sampled_from(["geo", "frame", "group", "text", "note"]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(node_st, min_size=0, max_size=12), st.data())
def test_to_json_from_json_identity(specs, data):
    c = Canvas()
    c.add(Page("page:2", "Two"))
    ids = []
    for k, spec in enumerate(specs):
        parent = data.draw(st.sampled_from([P, "page:2"] + ids))
        c.add({"id": f"n{k}", "parent": parent, **spec})
        ids.append(f"n{k}")
    if len(ids) >= 2:
        c.add(Binding("b", "arrow", ids[0], ids[1], "start", (0.25, 1.5), True, {"snap": "none"}))
    c.cameras[P] = Viewport(-1.5, 2.0, 1280.0, 720.0)
    c.selection[P] = tuple(ids[:2])
    text = c.to_json()
    back = Canvas.from_json(text)
    assert back == c and back.to_json() == text
    assert list(back.nodes) == list(c.nodes)
    if ids:
        np.testing.assert_array_equal(back.columns().bounds, c.columns().bounds)


def test_from_json_rejects_malformed():
    with pytest.raises(InvalidInputError, match="not valid JSON"):
        Canvas.from_json('{"format": "spatialobs.canvas", ')
    with pytest.raises(InvalidInputError, match="not a native canvas"):
        Canvas.from_json("{}")
    doc = json.loads(Canvas().to_json())
    doc["nodes"] = [{"id": "a", "type": "geo", "parent": P, "x": "oops"}]
    with pytest.raises(InvalidInputError, match="'a'.*'x'"):
        Canvas.from_json(doc)
    doc["version"] = 99
    with pytest.raises(InvalidInputError, match="version"):
        Canvas.from_json(doc)


def test_from_json_rejects_an_unknown_tldraw_source_form():
    from spatialobs.canvas import load

    tldr = {"tldrawFileFormatVersion": 1, "schema": {"schemaVersion": 2, "sequences": {}}, "records": [
        {"id": "page:page", "typeName": "page", "name": "P", "index": "a1"},
        {"id": "shape:a", "typeName": "shape", "type": "geo", "parentId": "page:page", "index": "a1", "x": 0, "y": 0,
         "props": {"w": 10, "h": 10}}]}
    doc = json.loads(load(tldr).to_json())
    assert doc["source"]["format"] == "tldraw" and doc["source"]["form"] == "file"
    doc["source"]["form"] = "sheet"
    with pytest.raises(InvalidInputError, match="malformed native canvas document: tldraw source form 'sheet' is "
                                                "not 'file', 'store' or 'snapshot'"):
        Canvas.from_json(doc)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.sampled_from(["x", "rotation", "w", "parent", "index", "type"]),
                          st.floats(0, 50)), min_size=1, max_size=12))
def test_cached_columns_after_edits_match_a_fresh_derivation(edits):
    c = Canvas()
    c.add(Node("n0", "frame", P, "a0", 0, 0, 100, 100))
    for k in range(1, 8):
        c.add(Node(f"n{k}", "geo", f"n{(k - 1) // 2}", f"a{k}", k * 3.0, k * 2.0, 10, 10, 0.1 * k))
    c.geometry()
    for k, field, v in edits:
        nid = f"n{k}"
        if field == "parent":
            target = f"n{int(v) % 8}"
            if target == nid or nid in c.ancestors(target):
                continue
            c.update(nid, parent=target)
        elif field == "index":
            c.update(nid, index=f"a{int(v)}")
        elif field == "type":
            c.update(nid, type="frame" if v > 25 else "group")
        else:
            c.update(nid, **{field: v})
        got = c.columns()
        fresh = c.copy().columns()
        assert got.ids == fresh.ids and got.frame == fresh.frame and got.group == fresh.group
        np.testing.assert_array_equal(got.bounds, fresh.bounds)
        np.testing.assert_array_equal(got.visible, fresh.visible)


def _same_columns(cols, d):
    from tests.reference.canvas_oracle import page_columns

    want = page_columns(d, cols.rows)
    got = {"bounds": cols.bounds, "visible": cols.visible, "opacity": cols.opacity, "hidden": cols.hidden,
           "locked": cols.locked, "rotation": cols.rotation, "depth": cols.depth, "types": cols.type_array,
           "clipped": cols.clipped, "parent": cols.parent_row, "frame": cols.frame_row, "group": cols.group_row,
           "page_pos": cols.page_pos}
    for name, v in got.items():
        np.testing.assert_array_equal(v, np.asarray(want[name]).reshape(v.shape), err_msg=name)  # (NaN equals NaN)
        if name in ("bounds", "visible", "opacity", "hidden", "locked", "rotation", "depth", "types"):
            assert v.dtype == getattr(d, name).dtype and v.flags.c_contiguous, name
    assert cols.order.tolist() == list(range(len(cols.rows)))


def _same_page(c, pid):
    """The observation's page arrays equal the row-by-row oracle: the columns at the page rows,
    boxes the visible bounds with the page bounds where clipped away, and subtree sizes counted
    along the parent chains."""
    import importlib

    from tests.reference.canvas_oracle import page_columns

    obs_mod = importlib.import_module("spatialobs.canvas.observe")
    d = c.geometry()
    pg = obs_mod._page_arrays(c, pid)
    want = page_columns(d, pg.canvas_rows)
    assert pg.canvas_rows.tolist() == c._page_rows(pid)[1].tolist()
    assert [pg.ids[r] for r in range(len(pg.ids))] == [d.ids[r] for r in pg.canvas_rows.tolist()]
    got = {"bounds": pg.bounds, "opacity": pg.opacity, "hidden": pg.hidden, "locked": pg.locked,
           "rotation": pg.rotation, "types": pg.types, "parent": pg.parent, "frame": pg.frame, "group": pg.group,
           "page_pos": pg.page_pos}
    for name, v in got.items():
        np.testing.assert_array_equal(v, np.asarray(want[name]).reshape(v.shape), err_msg=name)
    rows = pg.canvas_rows.tolist()
    np.testing.assert_array_equal(pg.px, np.asarray([d.px[r] for r in rows], dtype=np.float64))
    np.testing.assert_array_equal(pg.py, np.asarray([d.py[r] for r in rows], dtype=np.float64))
    gone = [bool(np.isnan(d.visible[r][0])) for r in rows]
    assert pg.gone.tolist() == gone
    want_boxes = np.asarray([d.bounds[r] if g else d.visible[r] for r, g in zip(rows, gone)]).reshape(-1, 4)
    np.testing.assert_array_equal(pg.boxes, want_boxes)
    assert pg.boxes.dtype == np.float64 and pg.boxes.flags.c_contiguous
    size = [1] * len(rows)
    for k in range(len(rows)):
        p = int(pg.parent[k])
        while p >= 0:
            size[p] += 1
            p = int(pg.parent[p])
    assert pg.size.tolist() == size


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 90), st.sampled_from(["paint", "shuffled", "reversed"]), st.integers(0, 3), st.integers(0, 10**6))
def test_page_columns_gathered_by_runs_equal_the_rows_gathered_one_by_one(n, order, pages, seed):
    """The page columns of canvases whose canvas order is the paint order (one run of rows), nearly
    (an add or a removal since: a few runs), or not at all (more runs than are copied as slices),
    on one page or several, equal the rows gathered one by one from the derivation, and so do the
    observation's page arrays."""
    rng = np.random.default_rng(seed)
    c = Canvas()
    for p in range(pages):
        c.add(Page(f"page:p{p}", f"P{p}", f"b{p}"))
    page_ids = [P] + [f"page:p{p}" for p in range(pages)]
    # sibling index keys: in creation order (paint order is canvas order), reversed, or shuffled
    keys = {"paint": list(range(n)), "reversed": list(range(n))[::-1],
            "shuffled": [int(v) for v in rng.permutation(n)]}[order]
    made = []
    for k in range(n):
        parent = page_ids[k % len(page_ids)]
        if made and rng.random() < 0.4:
            parent = made[int(rng.integers(len(made)))]
        t = "frame" if rng.random() < 0.3 else "group" if rng.random() < 0.1 else "geo"
        made.append(f"n{k:03d}")
        c.add(Node(made[-1], t, parent, f"a{keys[k]:03d}", float(rng.integers(-50, 50)), 0.0, 20.0, 10.0))
    for pid in page_ids:
        _same_columns(c.columns(pid), c.geometry())
        _same_page(c, pid)
    c.add(Node("late", "geo", made[0], "a000V", 1.0, 2.0, 3.0, 4.0))  # painted among the first node's children
    c.remove(made[-1])
    for pid in page_ids:
        _same_columns(c.columns(pid), c.geometry())
        _same_page(c, pid)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 200), unique=True, max_size=120), st.booleans(), st.data())
def test_rows_gathered_by_runs_equal_a_take(rows, sort, data):
    """``_row_runs`` cuts distinct rows into the runs where they step by one (every position once,
    None beyond the limit), and ``_gather`` through them, or without them, equals ``np.take``
    for 1-D, 2-D, bool and string columns."""
    from spatialobs.canvas.document.model import _MAX_ROW_RUNS, _gather, _row_runs

    if sort:  # a few runs: sorted rows, cut into blocks in a new order
        rows = sorted(rows)
        cut = sorted(data.draw(st.lists(st.integers(0, len(rows)), max_size=4)))
        blocks = [rows[i:j] for i, j in zip([0] + cut, cut + [len(rows)])]
        rows = [r for b in data.draw(st.permutations(blocks)) for r in b]
    r = np.asarray(rows, dtype=np.int64)
    runs = _row_runs(r)
    breaks = sum(1 for a, b in zip(rows, rows[1:]) if b != a + 1)
    if breaks + 1 > _MAX_ROW_RUNS - 1 and len(rows):
        assert runs is None
    else:
        assert runs is not None
        assert [k for i, j, s in runs for k in range(i, j)] == list(range(len(rows)))
        assert all(rows[i:j] == list(range(s, s + j - i)) for i, j, s in runs)
        assert len(runs) == (breaks + 1 if rows else 0)
    base = np.arange(201 * 4, dtype=np.float64).reshape(201, 4)
    for col in (base, base[:, 0].copy(), base[:, 1] > 300, base[:, 2].astype(np.int64).astype(str)):
        for rr in (runs, None):
            got = _gather(col, r, rr)
            want = np.take(col, r, axis=0)
            assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


def test_records_to_dict_are_every_field_in_order_with_the_anchor_a_list():
    """Each record's plain dict holds its fields in their order, as ``dataclasses.fields`` lists them
    (read once per class), a subclass's own fields too; a binding's anchor as a list."""
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Tagged(Node):
        tag: str = "t"

    for rec in (Node("a", "geo", "p", "a2", 1.0, 2.0, 3.0, 4.0, text="x", props={"k": 1}), Page("page:1", "One"),
                Tagged("b", "note", "p", tag="z")):
        want = {f.name: getattr(rec, f.name) for f in dataclasses.fields(rec)}
        got = rec.to_dict()
        assert list(got) == list(want) and got == want
    b = Binding("b1", "arrow", "a", "c", "start", (0.25, 0.75), True)
    assert b.to_dict()["anchor"] == [0.25, 0.75] and list(b.to_dict()) == [f.name for f in dataclasses.fields(b)]
