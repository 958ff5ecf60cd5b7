"""Text measured as tldraw 5.4.2 measures it: shared files and conformance documents
against the real editor's output, line breaking against a naive oracle, and geometry
that follows edits through the write path."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import SpatialObsError
from spatialobs.canvas import load
from spatialobs.canvas.document.textmeasure import (geo_grow_y, layout_lines, measure_html, note_label,
                                                     text_shape_size, text_width)
from tests.conftest import shared_files
from tests.reference.text_oracle import naive_lines

CONF = Path(__file__).parent / "data" / "conformance"
TRUTHS = [p for p in shared_files("tldraw-truth", "*.json")]


def _ok(ours, theirs) -> bool:
    """The agreement rule: every edge within max(4 units, 10 % of the larger side)."""
    x, y, w, h = theirs
    err = max(abs(a - b) for a, b in zip(ours, (x, y, x + w, y + h)))
    return err <= max(4.0, 0.1 * max(w, h))


@pytest.mark.parametrize("truth_path", TRUTHS, ids=lambda p: p.name[:40])
def test_text_shapes_of_shared_files_agree_with_tldraw(shared_data, truth_path):
    truth = json.loads(truth_path.read_text())
    c = load(shared_data / "canvases" / truth_path.name[: -len(".json")])
    good = total = 0
    for page in truth["pages"]:
        for s in page["shapes"]:
            if s["type"] != "text":
                continue
            b = s["pageBounds"]
            total += 1
            good += _ok(c.page_bounds(s["id"]), (b["x"], b["y"], b["w"], b["h"]))
    print(f"{truth_path.name}: {good}/{total} text shapes agree")
    assert total == 0 or good / total >= 0.97


def _conformance(name):
    return load(CONF / f"{name}.tldr"), json.loads((CONF / f"{name}.truth.json").read_text())


@pytest.mark.parametrize("name", ["text_auto", "text_wrap", "text_unicode"])
def test_conformance_text_agrees_with_tldraw(name):
    c, truth = _conformance(name)
    good = 0
    for sid, t in truth.items():
        ours, theirs = c.page_bounds(sid), t["pageBounds"]
        good += _ok(ours, theirs)
        if c.node(sid).style.get("font") != "draw" and name != "text_unicode":
            # the IBM Plex fonts have no contextual alternates: widths are exact (the
            # fallback fonts of text_unicode are within a quarter pixel)
            w, h = ours[2] - ours[0], ours[3] - ours[1]
            assert (w, h) == pytest.approx(tuple(theirs[2:]), abs=0.05), sid
    assert good / len(truth) >= 0.97, (good, len(truth))


def test_conformance_draw_font_is_within_one_percent():
    c, truth = _conformance("text_auto")
    for sid, t in truth.items():
        if c.node(sid).style.get("font") == "draw" and t["pageBounds"][2] > 100:
            ours = c.page_bounds(sid)
            assert ours[2] - ours[0] == pytest.approx(t["pageBounds"][2], rel=0.01), sid


def _touch_labels(c):
    # what the harness did before it read the truth: re-set every label
    for nid, node in list(c.nodes.items()):
        if node.type in ("geo", "note"):
            text = node.text
            c.update(nid, text="x")
            c.update(nid, text=text)


def test_label_growth_follows_edits_as_in_tldraw():
    c, truth = _conformance("labels")
    _touch_labels(c)
    records = {r["id"]: r for r in c.to_tldraw()["records"]}
    for sid, t in truth.items():
        ours = c.page_bounds(sid)
        assert (ours[2] - ours[0], ours[3] - ours[1]) == pytest.approx(tuple(t["pageBounds"][2:]), abs=0.01), sid
        props = records[sid]["props"]
        for k, v in t["props"].items():
            assert props[k] == pytest.approx(v, abs=0.01), (sid, k)


def test_label_functions_match_the_labels_document():
    truth = json.loads((CONF / "labels.truth.json").read_text())
    doc = {r["id"]: r for r in json.loads((CONF / "labels.tldr").read_text())["records"]}
    for sid, t in truth.items():
        p = doc[sid]["props"]
        text = "\n".join("".join(x["text"] for x in para.get("content", [])) for para in p["richText"]["content"])
        if t["type"] == "geo":
            w, g = geo_grow_y(text, p["font"], p["size"], p["w"], p["h"], p["growY"], p["scale"])
            assert (w, g) == pytest.approx((t["props"]["w"], t["props"]["growY"]), abs=0.01), sid
        else:
            g, adj = note_label(text, p["font"], p["size"])
            assert (g, adj) == pytest.approx((t["props"]["growY"], t["props"]["fontSizeAdjustment"]), abs=1e-3), sid


def test_set_text_resizes_auto_size_text_and_export_writes_it():
    c, _ = _conformance("text_auto")
    sid = "shape:auto-sans-m"
    before = c.page_bounds(sid)
    c.update(sid, text="Short")
    after = c.page_bounds(sid)
    assert after[:2] == before[:2]  # start-aligned text keeps its left edge
    expected = text_shape_size("Short", "sans", "m")
    assert (after[2] - after[0], after[3] - after[1]) == pytest.approx(expected)
    c.update(sid, text="Short\nand two lines")
    assert c.page_bounds(sid)[3] - c.page_bounds(sid)[1] == pytest.approx(64.0)
    back = load(c.to_tldraw())
    assert back.page_bounds(sid) == pytest.approx(c.page_bounds(sid))


def test_style_change_remeasures_text():
    c, _ = _conformance("text_auto")
    sid = "shape:auto-mono-s"
    c.update(sid, style={"size": "xl"})
    b = c.page_bounds(sid)
    assert (b[2] - b[0], b[3] - b[1]) == pytest.approx(text_shape_size(c.node(sid).text, "mono", "xl"))


def test_fixed_width_text_wraps_at_its_width():
    w, h = text_shape_size("aaaa bbbb", "mono", "m", 1.0, 100.0, False)
    assert (w, h) == (100.0, 64.0)  # 4 glyphs = 57.6 px per word: two lines
    assert text_shape_size("aaaa bbbb", "mono", "m", 2.0, 100.0, False) == (200.0, 128.0)


def test_measure_html_reports_overflowing_words():
    w, h, scroll = measure_html("abcdefghij", "mono", 10.0, 30.0, break_words=False)
    assert (w, h) == (30.0, 14.0) and scroll == pytest.approx(60.0)
    w, h, scroll = measure_html("abcdefghij", "mono", 10.0, 30.0)
    assert h == 14.0 * 2 and scroll == 30.0


def test_bad_width_is_refused():
    with pytest.raises(SpatialObsError, match="max_width"):
        layout_lines("abc", "sans", 24.0, float("nan"))


_ALPHABET = st.sampled_from(["a", "b", "W", "i", "m", ".", " ", " ", "-", "\u6f22", "\U0001F600", "\n", "\t"])


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_ALPHABET, max_size=40).map("".join),
       font=st.sampled_from(["draw", "sans", "serif", "mono"]),
       size=st.sampled_from([18.0, 24.0, 44.0]),
       max_width=st.one_of(st.floats(1.0, 400.0), st.sampled_from([10.8, 14.4, 28.8, 43.2])),
       break_words=st.booleans())
def test_line_breaking_matches_the_oracle(text, font, size, max_width, break_words):
    ours = [line for line, _ in layout_lines(text, font, size, max_width, break_words)]
    assert ours == naive_lines(text, lambda s: text_width(s, font, size), max_width, break_words)
    # every line fits unless it is a single unbreakable piece
    for line, w in layout_lines(text, font, size, max_width, break_words):
        assert w <= max_width + 1 / 64 or len(line.strip(" \t")) <= 1 or not break_words or w == pytest.approx(
            text_width(line.rstrip(" \t"), font, size))
    # lines are the text, in order
    assert "".join(ours) == text.replace("\n", "")


@settings(max_examples=100, deadline=None)
@given(text=st.lists(_ALPHABET.filter(lambda ch: ch != "\n"), min_size=1, max_size=30).map("".join),
       font=st.sampled_from(["draw", "sans", "serif", "mono"]))
def test_auto_size_width_grows_with_text_and_scale(text, font):
    w1, h1 = text_shape_size(text, font, "m")
    w2, _ = text_shape_size(text + "m", font, "m")
    assert w2 >= w1 - 1e-9 and h1 == 32.0
    ws, hs = text_shape_size(text, font, "m", 2.0)
    assert (ws, hs) == pytest.approx((2 * w1, 2 * h1))


@functools.lru_cache(maxsize=None)
def _font_table() -> dict:
    from spatialobs.canvas.document import textmeasure

    return json.loads((Path(textmeasure.__file__).parent / "tldraw_fonts.json").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _all_pairs(font: str) -> dict:
    from tests.reference.text_oracle import kerning_pairs

    return kerning_pairs(_font_table()["fonts"][font])


@pytest.mark.parametrize("font", ["draw", "sans", "serif"])
@settings(max_examples=25, deadline=None)
@given(texts=st.lists(st.text(alphabet=st.sampled_from("AVTWYLPFo.,-' aeyvwkrT\u00e9\u00c5f1\u4e00"), max_size=12),
                      max_size=6))
def test_kerning_worked_out_on_first_lookup_equals_the_whole_table(font: str, texts: list) -> None:
    # a font works out a pair from the table's classes when it first meets it: after any
    # sequence of texts, every pair must hold what spelling out the whole table gives
    from spatialobs.canvas.document.textmeasure import _Font

    entry = _font_table()["fonts"][font]
    full = _all_pairs(font)
    f = _Font(entry, {})
    for t in texts:
        for a, b in zip(t, t[1:]):
            assert f.kern[a + b] == full.get(a + b, 0.0), (a, b)
    assert f.has_kern == bool(full)


@pytest.mark.parametrize("font", ["draw", "sans", "serif"])
def test_kerning_of_every_pair_of_the_table(font: str) -> None:
    from spatialobs.canvas.document.textmeasure import _Font

    full = _all_pairs(font)
    f = _Font(_font_table()["fonts"][font], {})
    assert {p: f.kern[p] for p in full} == full


def test_kerning_with_overlapping_classes_follows_table_order() -> None:
    # classes that share characters (the shipped tables have none): the last row holding the
    # left character wins, and in it the last entry whose class holds the right one
    from spatialobs.canvas.document.textmeasure import _Font
    from tests.reference.text_oracle import kerning_pairs

    entry = {"upm": 1000, "adv": [[65, [500, 500, 500]]],
             "kern": {"left": ["AB", "A", "C"], "right": ["BC", "C", "AB"],
                      "m": [[0, -10, 1, -20, 2, -30], [1, -40], [2, 5, 0, 7]]}}
    full = kerning_pairs(entry)
    f = _Font(entry, {})
    pairs = [a + b for a in "ABCD" for b in "ABCD"]
    assert {p: f.kern[p] for p in pairs} == {p: full.get(p, 0.0) for p in pairs}
    assert full["AC"] == -0.04 and full["AB"] == -0.03 and full["CB"] == 0.007
