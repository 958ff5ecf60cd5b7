"""The compiled text kernel (``_core.TextFont``) against its Python twin.

Every measurement is made twice, with ``textmeasure.TEXT_KERNEL`` off (the pure-Python
oracle) and on, and the two results must be equal repr for repr: widths summed in the same
order, the same lines, the same errors. Text covers ASCII, CJK, emoji and other astral code
points, combining marks, every whitespace kind, lone surrogates, empty strings, very long
words and newlines, over tldraw's and Excalidraw's fonts, font sizes and wrap widths. Real
files are loaded and observed with the flag on and off, byte for byte.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Any, Callable, Iterator, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError, _core
from spatialobs.canvas import load, observe
from spatialobs.canvas.document import excalidraw_text as ex
from spatialobs.canvas.document import textmeasure as tm
from tests.conftest import shared_files


@contextlib.contextmanager
def _kernel(on: bool) -> Iterator[None]:
    old = tm.TEXT_KERNEL
    tm.TEXT_KERNEL = on
    tm._text_shape_size.cache_clear()
    try:
        yield
    finally:
        tm.TEXT_KERNEL = old
        tm._text_shape_size.cache_clear()


def _outcome(fn: Callable[..., Any], *args: Any) -> Tuple[str, str]:
    try:
        return ("ok", repr(fn(*args)))
    except Exception as e:  # the twins must fail alike
        return (type(e).__name__, str(e))


def _same(fn: Callable[..., Any], *args: Any) -> Tuple[str, str]:
    with _kernel(False):
        twin = _outcome(fn, *args)
    with _kernel(True):
        kernel = _outcome(fn, *args)
    assert kernel == twin, (fn.__name__, args)
    return kernel


_WHITESPACE = [chr(c) for c in range(0x3001) if chr(c).isspace()] + ["\u00a0", "\u200b", "\u2060", "\ufeff"]
_SPECIAL = list("-‐–—/.,;:!?()[]{}<>（）「」『』。、？！・〜…'\"") + ["\ud800", "\udfff", "\u200d", "\u00ad"]
_CHARS = st.one_of(
    st.sampled_from(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789AVTWYLoa'")),
    st.sampled_from(_WHITESPACE),
    st.sampled_from(_SPECIAL),
    st.characters(min_codepoint=0x4E00, max_codepoint=0x4E80),  # CJK ideographs
    st.characters(min_codepoint=0xAC00, max_codepoint=0xAC40),  # Hangul
    st.characters(min_codepoint=0x3040, max_codepoint=0x30FF),  # kana
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1F6FF),  # emoji
    st.characters(min_codepoint=0x2600, max_codepoint=0x27BF),  # symbols Excalidraw treats as emoji
    st.characters(min_codepoint=0x20000, max_codepoint=0x20040),  # astral CJK
    st.characters(min_codepoint=0x0300, max_codepoint=0x036F),  # combining marks
    st.characters(min_codepoint=0x0400, max_codepoint=0x04FF),  # Cyrillic (alphanumeric, unkerned)
    st.characters(min_codepoint=0x0660, max_codepoint=0x0669),  # Arabic-Indic digits (alnum)
    st.characters(),  # anything else
)
_LONG_WORD = st.text(st.sampled_from(list("abcdefghijklmnopqrstuvwxyzAVWTo-")), min_size=30, max_size=300)
TEXT = st.one_of(st.text(_CHARS, max_size=80), _LONG_WORD,
                 st.lists(st.one_of(_LONG_WORD, st.text(_CHARS, max_size=20)), max_size=5).map("\n".join))
SIZE = st.one_of(st.sampled_from([1, 12, 16.0, 18.0, 22.0, 24.0, 36.0, 44.0]), st.floats(0.25, 300.0))
WIDTH = st.one_of(st.none(), st.floats(0.0, 1500.0), st.integers(0, 1500), st.sampled_from([0.0, 1.0, 16, 1e-9]))
TL_FONT = st.sampled_from(["draw", "sans", "serif", "mono", "no-such-font"])
EX_FONT = st.sampled_from(sorted(ex.FONT_FAMILIES) + [99])
SIZE_STYLE = st.sampled_from(["s", "m", "l", "xl"])


@pytest.mark.generated
@settings(max_examples=500, deadline=None)
@given(TEXT, TL_FONT, SIZE, WIDTH, st.booleans())
def test_tldraw_layout_and_measure_match_the_twin(text: str, font: str, size: float, width: Any, bw: bool) -> None:
    _same(tm.text_width, text, font, size)
    _same(tm.layout_lines, text, font, size, width, bw)
    _same(tm.measure_html, text, font, size, width, None, bw)
    _same(tm.measure_html, text, font, size, width, 14.0, bw)


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(TEXT, TL_FONT, SIZE_STYLE, st.floats(0.1, 4.0), st.one_of(st.none(), st.floats(0.0, 800.0)))
def test_tldraw_shape_sizes_match_the_twin(text: str, font: str, size: str, scale: float, w: Any) -> None:
    _same(tm._text_shape_size.__wrapped__, text, font, size, scale, w)
    _same(tm.geo_label_size, text, font, size, 100.0 if w is None else w, scale)
    _same(tm.note_label, text, font, size)


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(TEXT, TL_FONT, SIZE, st.floats(0.0, 800.0), st.booleans(), st.sampled_from([0.0, 1.0 / 64, 0.5]),
       st.booleans())
def test_layout_options_match_the_twin(text: str, font: str, size: float, width: float, bw: bool, slack: float,
                                       split: bool) -> None:
    _same(tm.layout_lines, text, font, size, width, bw, None, slack, split)
    _same(tm.layout_lines, text, ex._font(1), size, width, bw, ex._break_before, slack, split)


@pytest.mark.generated
@settings(max_examples=400, deadline=None)
@given(TEXT, EX_FONT, SIZE, WIDTH)
def test_excalidraw_text_matches_the_twin(text: str, family: int, size: float, width: Any) -> None:
    _same(ex.line_width, text, family, size)
    _same(ex.wrap_text, text, family, size, width)
    _same(ex.measure_text, text, family, size, 1.25)
    _same(ex.text_element_size, text, family, size, None, False, 40.0 if width is None else float(width))
    for container in ("rectangle", "ellipse", "diamond", "arrow"):
        _same(ex.bound_text_layout, text, container, 160.0 if width is None else float(width), 60.0, family, size)


@pytest.mark.parametrize("text", ["", "\n", "\n\n", " ", "\t\t", "\u3000", "a\n", "\nb", "-", "a-b", "1-2 3",
                                  "é-ü", "漢字かな交じり文", "😀😀 😀", "\U00020000\U00020001", "e\u0301\u0302",
                                  "AV To Wa", "x" * 2000, ("lorem ipsum " * 300).strip()])
@pytest.mark.parametrize("font", ["draw", "sans", "serif", "mono"])
def test_edge_texts_match_the_twin(text: str, font: str) -> None:
    for width in (None, 0.0, 1.0, 37.5, 200.0, 10_000.0):
        _same(tm.layout_lines, text, font, 24.0, width)
        _same(tm.measure_html, text, font, 24.0, width)
    _same(tm.text_width, text, font, 24)  # an int size: an empty text keeps the twin's int 0


def test_kerned_pairs_match_the_twin() -> None:
    # every pair of characters the fonts' kerning tables name, kernel against the lazily
    # worked-out Python table
    for name in ("draw", "sans", "serif"):
        f = tm._font(name)
        k = f.kernel()
        table = f._entry["kern"]
        lefts = sorted({c for s in table["left"] for c in s})
        rights = sorted({c for s in table["right"] for c in s})
        assert len(lefts) > 50 and len(rights) > 50
        kerned = 0
        for a in lefts:
            for b in rights:
                v = f.kern[a + b]
                assert k.kern(ord(a), ord(b)) == v, (name, a, b)
                kerned += v != 0.0
        assert kerned > 100, name


def test_excalidraw_brackets_are_the_twins() -> None:
    opening, closing = _core.text_excalidraw_brackets()
    assert set(opening) == ex._OPENING and len(opening) == len(ex._OPENING)
    assert set(closing) == ex._CLOSING and len(closing) == len(ex._CLOSING)


def test_ascii_properties_are_pythons() -> None:
    # the kernel knows ASCII's isalnum / isspace without asking: a hyphen between two
    # alphanumerics breaks (tldraw), whitespace holds a break (Excalidraw)
    for c in map(chr, range(1, 128)):
        if c == "\n":
            continue
        _same(tm.layout_lines, f"aa{c}-{c}bb", "mono", 10.0, 35.0)
        _same(tm.layout_lines, f"aa{c}{c}-bb", "mono", 10.0, 35.0)
        _same(tm.layout_lines, f"aaa{c}bbb{c}", ex._font(3), 10.0, 35.0, True, ex._break_before, 0.0, True)


def test_kernel_is_used_when_on() -> None:
    # the kernel path really runs: a custom break rule takes the twin, the known ones the kernel
    f = tm._font("draw")
    assert f.kernel() is not None and isinstance(f.kernel(), _core.TextFont)
    calls = []

    def rule(line: str, i: int) -> bool:
        calls.append(i)
        return line[i - 1] == " "

    with _kernel(True):
        lines = tm.layout_lines("aa bb cc", "mono", 10.0, 25.0, breaks=rule)
    assert calls and [t for t, _ in lines] == ["aa ", "bb ", "cc"]
    calls.clear()
    with _kernel(True):
        tm.layout_lines("aa bb cc", "mono", 10.0, 30.0, breaks=tm._break_before)
    assert not calls


def test_non_finite_widths_fail_alike() -> None:
    assert _same(tm.layout_lines, "abc def", "draw", 24.0, math.nan)[0] == "InvalidInputError"
    assert _same(tm.layout_lines, "abc def", "draw", 24.0, math.inf)[0] == "InvalidInputError"
    assert _same(tm.measure_html, "abc def", "draw", 24.0, math.nan)[0] == "InvalidInputError"
    assert _same(tm.measure_html, "abc def", "draw", 24.0, math.inf)[0] == "ok"
    assert _same(tm.measure_html, "abc def", "draw", 1e308)[0] == "OverflowError"
    assert _same(tm.measure_html, "abc", "draw", math.nan)[0] == "ValueError"


@pytest.mark.parametrize("text", [5, None, b"ab", ["a"], 2.5], ids=["int", "None", "bytes", "list", "float"])
@pytest.mark.parametrize("fn, args", [
    (tm.text_width, ("draw", 24.0)), (tm.layout_lines, ("draw", 24.0, 100.0)), (tm.measure_html, ("mono", 10.0)),
    (tm.measure_html, ("draw", 24.0, 50.0)), (tm.text_shape_size, ("draw", "m")), (tm.geo_label_size, ("sans",)),
    (tm.note_label, ("serif",)), (tm.geo_grow_y, ("draw",))], ids=lambda v: getattr(v, "__name__", ""))
def test_non_string_texts_fail_alike(text: Any, fn: Callable[..., Any], args: Tuple[Any, ...]) -> None:
    # the kernel's binding and the twin's string methods would fail differently: both check first
    outcome = _same(fn, text, *args)
    assert outcome == ("InvalidInputError", f"text must be a str, got {type(text).__name__}"), outcome


def _resolver(cps: list) -> tuple:
    return [0.5] * len(cps), [0] * len(cps)


def test_text_font_rejects_bad_tables() -> None:
    with pytest.raises(InvalidInputError, match="upm must be a positive finite number"):
        _core.TextFont([], 0.0, [], [], [], False, _resolver)
    with pytest.raises(InvalidInputError, match="resolver must be callable"):
        _core.TextFont([], 1000.0, [], [], [], False, 3)
    with pytest.raises(InvalidInputError, match=r"each advance run must be \[first code point"):
        _core.TextFont([[32]], 1000.0, [], [], [], False, _resolver)
    with pytest.raises(InvalidInputError, match=r"a run's code points must lie in \[0, 0x110000\)"):
        _core.TextFont([[-1, [500]]], 1000.0, [], [], [], False, _resolver)
    with pytest.raises(InvalidInputError, match="an advance must be a number, got str"):
        _core.TextFont([[32, ["wide"]]], 1000.0, [], [], [], False, _resolver)
    with pytest.raises(InvalidInputError, match="a left kerning class must be a str, got int"):
        _core.TextFont([], 1000.0, [5], [], [[0, -10]], True, _resolver)
    with pytest.raises(InvalidInputError, match="a kerning row must hold .* pairs, got 3 numbers"):
        _core.TextFont([], 1000.0, ["A"], ["V"], [[0, -10, 1]], True, _resolver)
    with pytest.raises(InvalidInputError, match="a kerning row must be a list"):
        _core.TextFont([], 1000.0, ["A"], ["V"], [5], True, _resolver)


def test_text_font_rejects_bad_calls() -> None:
    f = _core.TextFont([[65, [600, 700]]], 1000.0, ["A"], ["B"], [[0, -100]], True, _resolver)
    assert f.line_em("AB") == 0.6 + 0.7 + -0.1
    assert f.line_em("AC") == 0.6 + 0.5  # C came from the resolver
    with pytest.raises(InvalidInputError, match="rule must be 0 \\(tldraw\\) or 1 \\(Excalidraw\\), got 2"):
        f.layout("AB", 10.0, None, True, 2, 0.0, False)
    with pytest.raises(InvalidInputError, match="max_width must be a number, got str"):
        f.layout("AB", 10.0, "wide", True, 0, 0.0, False)
    with pytest.raises(InvalidInputError, match="each text must be a str, got int"):
        f.line_ems(["AB", 3])
    with pytest.raises(TypeError, match="incompatible function arguments"):
        f.line_em(b"AB")
    bad = _core.TextFont([], 1000.0, [], [], [], False, lambda cps: [0.5] * len(cps))
    with pytest.raises(InvalidInputError, match=r"the resolver must return \(advances, flags\)"):
        bad.line_em("x")
    short = _core.TextFont([], 1000.0, [], [], [], False, lambda cps: ([0.5], []))
    with pytest.raises(InvalidInputError, match="the resolver returned 1 advances and 0 flags for 2 code points"):
        short.line_em("xy")
    nan = _core.TextFont([], 1000.0, [], [], [], False, lambda cps: ([math.nan] * len(cps), [0] * len(cps)))
    with pytest.raises(InvalidInputError, match="the resolver returned a NaN advance"):
        nan.line_em("x")


CANVASES = shared_files("canvases", "*")


@pytest.mark.parametrize("path", CANVASES, ids=lambda p: p.name[:48])
def test_real_files_observe_byte_identical_with_the_kernel(shared_data: Path, path: Path) -> None:
    data = path.read_bytes()
    with _kernel(False):
        twin = observe(load(data)).to_json()
    with _kernel(True):
        kernel = observe(load(data)).to_json()
    assert kernel == twin
    assert len(kernel) > 100


def _sum_312(xs: list) -> Any:
    # CPython 3.12+'s sum() of floats from its int 0 start (bltinmodule.c): the first term as
    # is, then Neumaier's compensated summation, the compensation added when non-zero and finite
    it = iter(xs)
    for first in it:
        break
    else:
        return 0
    f, c = 0 + first, 0.0
    for x in it:
        t = f + x
        c += ((f - t) + x) if abs(f) >= abs(x) else ((x - t) + f)
        f = t
    return f + c if c and math.isfinite(c) else f


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False), st.sampled_from([0.0, -0.0, 0.1, 0.6, -0.014, 1e16]))))
def test_sum_312_is_pythons_sum_where_it_runs(xs: list) -> None:
    import sys

    if sys.version_info >= (3, 12):
        assert repr(_sum_312(xs)) == repr(sum(xs))
    else:
        assert repr(_sum_plain(xs)) == repr(sum(xs))


def _sum_plain(xs: list) -> Any:
    s: Any = 0
    for x in xs:
        s = s + x
    return s


@pytest.mark.generated
@settings(max_examples=300, deadline=None)
@given(TEXT.filter(bool), st.sampled_from(["draw", "sans", "serif", "mono"]))
def test_line_em_sums_as_the_running_pythons_sum(text: str, name: str) -> None:
    # the kernel's two summation modes against the two sum() algorithms, over each font's
    # advances and kerning (the twin's _line_em uses the running Python's)
    f = tm._font(name)
    adv = [f.adv[c] for c in text]
    kern = [f.kern[a + b] for a, b in zip(text, text[1:])]
    entry, table = f._entry, f._entry.get("kern") or {}
    for compensated, total in ((False, _sum_plain), (True, _sum_312)):
        k = _core.TextFont(entry["adv"], float(entry["upm"]), list(table.get("left", [])),
                           list(table.get("right", [])), list(table.get("m", [])), bool(f.has_kern), f._resolve,
                           compensated)
        want = total(adv)
        if f.has_kern and len(text) > 1:
            want += total(kern)
        assert repr(k.line_em(text)) == repr(want)


def test_a_text_of_many_new_characters_is_resolved_once_each() -> None:
    # 5,000 distinct CJK ideographs and astral characters, each twice, in one string: the font
    # asks the twin for each once, and the layout matches the twin's
    asked: list = []
    f = tm._font("serif")
    entry, table = f._entry, f._entry["kern"]

    def resolver(cps: list) -> tuple:
        asked.extend(cps)
        return f._resolve(cps)

    k = _core.TextFont(entry["adv"], float(entry["upm"]), table["left"], table["right"], table["m"], True, resolver)
    text = "".join(map(chr, range(0x5000, 0x5000 + 4000))) + "".join(map(chr, range(0x20100, 0x20100 + 1000)))
    text = text + " " + text
    lines = k.layout(text, 24.0, 333.0, True, 0, 1.0 / 64, False)
    assert sorted(asked) == sorted(set(map(ord, text)) - set(map(ord, " ")))
    with _kernel(False):
        assert repr(lines) == repr(tm.layout_lines(text, "serif", 24.0, 333.0))
    k.line_em(text)
    assert len(asked) == 5000  # nothing asked twice
