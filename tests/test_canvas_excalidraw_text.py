"""Excalidraw text measured from the font table against what Excalidraw 0.18.1 measured.

The truth (``data/conformance/excalidraw_text.truth.json``) is Excalidraw's own
``convertToExcalidrawElements`` in Chromium with its fonts: free text in every family
and four sizes, and labels wrapped in rectangles, ellipses and diamonds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import SpatialObsError
from spatialobs.canvas.document import excalidraw_text as X

TRUTH = json.loads((Path(__file__).resolve().parent / "data" / "conformance" / "excalidraw_text.truth.json")
                   .read_text(encoding="utf-8"))["rows"]
FREE = [r for r in TRUTH if "container" not in r["case"]]
BOXED = [r for r in TRUTH if "container" in r["case"]]
# what the table cannot know: Excalifont's fi/fl ligatures, Nunito's and Comic Shanns' Greek and
# Cyrillic, and Lilita One's, which Chromium draws with a fallback font other than the ones in the table
NOT_LATIN = "naïve café Ελληνικά Привет"


def test_free_text_widths_and_heights_agree_with_excalidraw():
    assert len(FREE) == 384
    exact = 0
    for r in FREE:
        c, e = r["case"], r["elements"][0]
        w, h = X.measure_text(c["text"], c["fontFamily"], c["fontSize"], e["lineHeight"])
        assert X.default_line_height(c["fontFamily"]) == e["lineHeight"]
        assert h == pytest.approx(e["height"], abs=1e-9), c
        tol = max(4.0, 0.1 * e["width"])
        if c["text"] != NOT_LATIN or c["fontFamily"] != 7:
            assert abs(w - e["width"]) <= tol, (c, w, e["width"])
        exact += abs(w - e["width"]) <= 0.5
        if c["text"] != NOT_LATIN and "fi" not in c["text"]:
            assert abs(w - e["width"]) <= 0.1, (c, w, e["width"])  # Latin, digits, CJK, emoji: to 0.1 px
    assert exact / len(FREE) >= 0.95


@pytest.mark.parametrize("row", BOXED, ids=lambda r: f"{r['case']['fontFamily']}-{r['case']['container']}-"
                                                     f"{r['case']['width']}-{r['case']['text'][:12]}")
def test_labels_wrap_grow_and_sit_where_excalidraw_puts_them(row):
    c = row["case"]
    box, te = row["elements"]
    lay = X.bound_text_layout(c["text"], c["container"], c["width"], c["height"], c["fontFamily"], c["fontSize"],
                              te["lineHeight"], "center", "middle")
    assert lay["text"] == te["text"]
    got = (lay["width"], lay["height"], lay["container_w"], lay["container_h"], lay["dx"], lay["dy"])
    want = (te["width"], te["height"], box["width"], box["height"], te["x"] - box["x"], te["y"] - box["y"])
    assert got == pytest.approx(want, abs=1e-3)


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("ab -\u00a0中😀W"), max_size=40), st.sampled_from([1, 2, 3, 5, 6, 7, 8, 9]),
       st.floats(8, 60), st.floats(0, 400))
def test_wrapping_keeps_the_text_and_every_broken_line_fits(text, fam, fs, width):
    out = X.wrap_text(text, fam, fs, width)
    assert out.replace("\n", "") .replace(" ", "").replace("\u00a0", "") == text.replace("\n", "").replace(
        " ", "").replace("\u00a0", "")
    for line in out.split("\n"):
        # a line wider than the width is one character, or one emoji, that cannot be broken
        if X.line_width(line, fam, fs) > width + 1e-9:
            assert len(line.rstrip()) <= 2 or line == text, (line, width)


def test_max_widths_and_container_growth_follow_excalidraw():
    assert X.bound_text_max_width("arrow", 100, 20) == 220.0 and X.bound_text_max_width("arrow", 400, 20) == 280.0
    assert X.bound_text_max_height("arrow", 50, 25) == 25 and X.bound_text_max_height("arrow", 500, 25) == 500
    assert X.container_dimension(30.2, "arrow") == 111.0
    with pytest.raises(SpatialObsError, match="frame"):
        X.bound_text_layout("x", "frame", 10, 10)


def test_unknown_families_measure_as_virgil_and_text_size_wraps_fixed_width():
    assert X.line_width("abc", 4) == X.line_width("abc", 1) == X.line_width("abc", "Virgil")
    text, w, h = X.text_element_size("aaa bbb ccc", 3, 10.0, 1.25, auto_resize=False, width=45.0)
    assert (text, w, h) == ("aaa bbb\nccc", 45.0, 25.0)
    text, w, h = X.text_element_size("a\n\nb", 3, 10.0, 1.25)
    assert h == 37.5 and math.isclose(w, X.line_width(" ", 3, 10.0))  # an empty line is a space wide
