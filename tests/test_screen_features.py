"""Atoms, normalization, masking and the n-gram embedder against their oracles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError, _core
from spatialobs.screen import (
    Element,
    Features,
    HashedNgramEmbedder,
    Screen,
    ScreenMeta,
    atom_hash,
    featurize,
    normalize_text,
)
from tests.reference import screen_oracle as ref

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
roles = st.sampled_from(["Button", "TextView", "android.widget.ImageView", "edit", "  Tab  Item ", ""])


@st.composite
def screens(draw, max_elements: int = 30):
    w = draw(st.sampled_from([1.0, 7.0, 100.0, 1080.0, 1440.0]))
    h = draw(st.sampled_from([1.0, 9.0, 100.0, 2280.0, 2560.0]))
    n = draw(st.integers(0, max_elements))
    elements = []
    for _ in range(n):
        # Lattice coordinates around and outside the screen: centers on cell
        # edges, zero-size boxes and duplicates are common.
        x0 = draw(st.integers(-2, 12)) * w / 10
        y0 = draw(st.integers(-2, 12)) * h / 10
        x1 = x0 + draw(st.integers(0, 6)) * w / 10
        y1 = y0 + draw(st.integers(0, 6)) * h / 10
        text = draw(st.one_of(st.none(), texts, st.sampled_from(["OK", "ok", "12:30", "Sign  in", "x" * 200])))
        elements.append(Element((x0, y0, x1, y1), draw(roles), text))
    return Screen(elements, w, h, ScreenMeta(app=draw(st.sampled_from([None, "a", "b"]))))


def test_hash_is_fnv1a_64_of_the_documented_string():
    assert atom_hash("c", 1, 2, "x") == ref.fnv1a64(b"c:1:2:x") == 12870049167146173273
    # Known FNV-1a 64 vectors.
    assert ref.fnv1a64(b"") == 0xCBF29CE484222325
    assert ref.fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert atom_hash("t", 0, 29, "héllo wörld ✓") == ref.atom_hash("t", 0, 29, "héllo wörld ✓")
    with pytest.raises(InvalidInputError, match="kind"):
        atom_hash("x", 0, 0, "a")


@given(st.sampled_from("ct"), st.integers(0, 65534), st.integers(0, 65534), texts)
def test_atom_hash_matches_oracle(kind, col, row, value):
    assert atom_hash(kind, col, row, value) == ref.atom_hash(kind, col, row, value)


@given(texts, st.booleans())
def test_normalize_matches_oracle(text, mask):
    out = normalize_text(text, mask=mask)
    assert out == ref.normalize(text, mask)
    assert len(out) <= 120 and out == out.strip() and "  " not in out


def test_normalize_and_mask_examples():
    assert normalize_text("  Hello\n\tWORLD  ") == "hello world"
    assert normalize_text("x" * 500) == "x" * 120
    assert normalize_text("Updated at 10:17:41 PM", mask=True) == "updated at # pm"
    assert normalize_text("3/10 files, 45.5% done", mask=True) == "# files, #% done"
    assert normalize_text("8m 53s - North", mask=True) == "#m #s - north"
    assert normalize_text("Updated at 10:17:41 PM") == "updated at 10:17:41 pm"


@settings(max_examples=200, deadline=None)
@given(screens(), st.sampled_from([1, 2, 3, 30, 31, 100]), st.booleans())
def test_featurize_matches_oracle(screen, grid, mask):
    f = featurize(screen, grid, mask_volatile=mask)
    boxes = [e.bounds for e in screen.elements]
    rs = [ref.normalize(e.role) for e in screen.elements]
    ts = [ref.normalize(e.text, mask) if e.text else "" for e in screen.elements]
    control, text = ref.screen_atoms(boxes, screen.width, screen.height, grid, rs, ts)
    assert f.control_atoms.dtype == np.uint64 and f.text_atoms.dtype == np.uint64
    assert f.control_atoms.tolist() == control
    assert f.text_atoms.tolist() == text
    assert f.meta == screen.meta
    # Reading order: grid rows top to bottom, then center x, then document order.
    order = sorted(
        range(len(boxes)),
        key=lambda i: (ref.cell(boxes[i][1], boxes[i][3], grid, screen.height), (boxes[i][0] + boxes[i][2]) * 0.5, i),
    )
    assert f.text == " ".join(ts[i] for i in order if ts[i])


@settings(max_examples=50, deadline=None)
@given(screens(max_elements=12), st.randoms(use_true_random=False))
def test_featurize_is_invariant_to_element_order(screen, rnd):
    shuffled = list(screen.elements)
    rnd.shuffle(shuffled)
    a = featurize(screen)
    b = featurize(Screen(shuffled, screen.width, screen.height, screen.meta))
    assert np.array_equal(a.control_atoms, b.control_atoms) and np.array_equal(a.text_atoms, b.text_atoms)


def test_cells_on_edges_and_outside_are_clamped():
    cols, rows = _core.grid_cells(
        np.array([[0, 0, 0, 0], [10, 10, 10, 10], [-50, -50, -40, -40], [99, 99, 101, 101]], dtype=np.float64),
        100.0, 100.0, 10,
    )
    assert cols.tolist() == [0, 1, 0, 9] and rows.tolist() == [0, 1, 0, 9]
    # A center exactly on the right screen edge falls in the last cell.
    cols, _ = _core.grid_cells(np.array([[100, 0, 100, 0]], dtype=np.float64), 100.0, 100.0, 10)
    assert cols.tolist() == [9]


def test_atoms_are_sorted_unique_and_text_atoms_need_text():
    s = Screen(
        [Element((0, 0, 10, 10), "Button", "OK"), Element((1, 1, 9, 9), "button", "ok"),
         Element((50, 50, 60, 60), "Image", None), Element((50, 50, 60, 60), "Image", "   ")],
        100, 100,
    )
    f = featurize(s)
    assert len(f.control_atoms) == 2  # "Button" and "button" normalize alike in one cell
    assert len(f.text_atoms) == 1
    assert f.text == "ok ok"


def test_volatile_mask_keeps_a_clock_from_changing_atoms():
    def clock(t):
        return Screen([Element((0, 0, 100, 20), "TextView", t), Element((0, 50, 100, 70), "Button", "Play")], 100, 100)

    a, b = clock("10:17"), clock("10:18")
    assert not np.array_equal(featurize(a).text_atoms, featurize(b).text_atoms)
    assert np.array_equal(featurize(a, mask_volatile=True).text_atoms, featurize(b, mask_volatile=True).text_atoms)


def test_featurize_bad_input():
    with pytest.raises(InvalidInputError, match="expects a Screen"):
        featurize({"elements": []})  # type: ignore[arg-type]
    s = Screen([Element((0, 0, 1, 1), "a")], 10, 10)
    with pytest.raises(InvalidInputError, match="grid must be between 1 and 65535"):
        featurize(s, grid=0)
    with pytest.raises(InvalidInputError, match="grid must be an integer"):
        featurize(s, grid=2.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="sorted and unique"):
        Features(np.array([2, 1], dtype=np.uint64), np.array([], dtype=np.uint64), "")
    with pytest.raises(InvalidInputError, match="1-D uint64"):
        Features(np.array([1.5]), np.array([], dtype=np.uint64), "")
    with pytest.raises(InvalidInputError, match="bounds must be finite"):
        Element((0, 0, float("nan"), 1), "a")
    with pytest.raises(InvalidInputError, match="x1 >= x0"):
        Element((5, 0, 1, 1), "a")
    with pytest.raises(InvalidInputError, match="width must be finite and > 0"):
        Screen([], 0, 10)
    with pytest.raises(InvalidInputError, match="element 1 must be an Element"):
        Screen([Element((0, 0, 1, 1), "a"), "b"], 10, 10)  # type: ignore[list-item]


@settings(max_examples=200, deadline=None)
@given(texts, st.sampled_from([1, 2, 3, 5]), st.sampled_from([1, 16, 64, 256]))
def test_ngram_embedder_matches_oracle(text, n, dim):
    got = HashedNgramEmbedder(n=n, dim=dim).embed([text])[0]
    want = np.array(ref.ngram_embed(text, n, dim), dtype=np.float64).astype(np.float32)
    assert got.dtype == np.float32 and got.shape == (dim,)
    assert np.array_equal(got, want)


def test_ngram_embedder_properties():
    e = HashedNgramEmbedder()
    v = e.embed(["sign in to your account", "sign in to your acount", "weather forecast", ""])
    assert v.shape == (4, 256)
    assert np.allclose(np.linalg.norm(v[:3], axis=1), 1.0, atol=1e-6)
    assert not v[3].any()
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])
    assert e.embed([]).shape == (0, 256)
    with pytest.raises(InvalidInputError, match="dim must be"):
        HashedNgramEmbedder(dim=0)
    with pytest.raises(InvalidInputError, match="text 1 must be a string"):
        e.embed(["a", 3])  # type: ignore[list-item]


# -- the compiled element loop (Cython) against its pure-Python twin -----------------


def _compiled():
    return pytest.importorskip("spatialobs.screen._cfeatures")


def test_compiled_featurize_is_in_use():
    # The normal build compiles the Cython module; featurize must use it.
    from spatialobs.screen import features as F

    cf = _compiled()
    assert F._element_columns is cf.element_columns and F._reading_text is cf.reading_text


@settings(max_examples=200, deadline=None)
@given(screens(), st.booleans(), st.sampled_from([1, 3, 30]))
def test_compiled_columns_match_python_twin(screen, mask, grid):
    from spatialobs.screen import features as F

    cf = _compiled()
    els = list(screen.elements)
    b1, r1, t1 = cf.element_columns(els, mask)
    b2, r2, t2 = F._element_columns_py(els, mask)
    assert b1.dtype == np.float64 and b1.shape == (len(els), 4) and b1.flags.c_contiguous
    assert np.array_equal(b1, b2) and r1 == r2 and t1 == t2
    _, rows = _core.grid_cells(b1, screen.width, screen.height, grid)
    assert cf.reading_text(t1, b1, rows) == F._reading_text_py(t2, b2, rows)


def test_compiled_columns_bad_input():
    cf = _compiled()
    with pytest.raises(TypeError):
        cf.element_columns((Element((0, 0, 1, 1), "a"),), False)  # not a list
    with pytest.raises(AttributeError):
        cf.element_columns(["not an element"], False)
    with pytest.raises(ValueError, match="same length"):
        cf.reading_text(["a"], np.zeros((2, 4)), np.zeros(1, dtype=np.int32))
    with pytest.raises(ValueError):  # wrong dtype for rows
        cf.reading_text(["a"], np.zeros((1, 4)), np.zeros(1, dtype=np.int64))


# ASCII texts meet the compiled one-pass normalizer: every ASCII whitespace str.split()
# knows (the 0x1c-0x1f separators included), digits between the separators _VOLATILE
# joins on, upper case, and lengths around MAX_TEXT.
_ascii_pieces = st.sampled_from(["a", "Z", "x", "7", "0", "12", ".", ",", ":", "/", "-", " ", "  ", "\t", "\n",
                                 "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x00", "\x7f", "AM", "1.2",
                                 "3:04", "5/6", "7,8", "9."])
ascii_texts = st.lists(_ascii_pieces, max_size=80).map("".join) | st.text(
    alphabet=st.characters(max_codepoint=127), max_size=300)


@settings(max_examples=400, deadline=None)
@given(ascii_texts | texts, st.booleans())
def test_compiled_normalizer_matches_normalize_text(text, mask):
    from spatialobs.screen.features import _utf8_safe

    cf = _compiled()
    assert cf.normalize(text, mask) == _utf8_safe(normalize_text(text, mask=mask))
