"""The OCR importer: bad input, roles and coordinates (with a stand-in engine), the real RapidOCR
engine on a drawn picture, the lazy import, and the drivers' screenshots."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from spatialobs import SpatialObsError
from spatialobs.screen import Element, Screen, ScreenMeta
from spatialobs.screen import ocr
from spatialobs.screen.drivers import ScreenshotUnsupported, make_driver
from spatialobs.screen.ocr import (
    MAX_PIXELS,
    MAX_SIDE,
    MENU_BAND,
    OcrUnavailable,
    infer_role,
    ocr_screen,
    stable_ocr_text,
    tree_signature,
    view_signature,
)
from tests._drivers import require

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402


def _png(img) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


class FakeEngine:
    """RapidOCR's call form: (lines, timings), each line [quadrilateral, text, score]."""

    def __init__(self, lines):
        self.lines, self.calls, self.shapes = lines, 0, []

    def __call__(self, pixels):
        self.calls += 1
        self.shapes.append(pixels.shape)
        return (self.lines or None), [0.0, 0.0, 0.0]


def _quad(x0, y0, x1, y1):
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


@pytest.mark.parametrize("image, text", [
    ("shot.png", "expected a PIL image, a uint8 array or encoded image bytes, got str"),
    ([[0, 0], [0, 0]], "got list"),
    (None, "got NoneType"),
    (np.zeros((4, 4), dtype=np.float32), "must be uint8, got float32"),
    (np.zeros((4, 4, 2), dtype=np.uint8), "got shape (4, 4, 2)"),
    (np.zeros((0, 5, 3), dtype=np.uint8), "the image is empty (5 x 0 pixels)"),
    (np.zeros((3, 0), dtype=np.uint8), "the image is empty (0 x 3 pixels)"),
    (np.broadcast_to(np.uint8(0), (1, MAX_SIDE + 1)), "over the limit"),
    (np.broadcast_to(np.uint8(0), (8000, 8000)), f"{MAX_PIXELS:,} in all"),
    (b"not an image at all", "the bytes are not a decodable image"),
    (b"", "the bytes are not a decodable image"),
])
def test_bad_images_fail_in_one_line(image, text):
    engine = FakeEngine([])
    with pytest.raises(SpatialObsError) as ei:
        ocr_screen(image, engine=engine)
    msg = str(ei.value)
    assert isinstance(ei.value, ValueError) and text in msg and "\n" not in msg
    assert engine.calls == 0  # rejected before any OCR work


def test_empty_and_huge_pil_images_and_huge_png_bytes_are_rejected():
    for img, text in ((Image.new("RGB", (0, 0)), "empty"), (Image.new("1", (MAX_SIDE + 1, 1)), "over the limit")):
        with pytest.raises(ocr.InvalidInputError, match=text):
            ocr_screen(img, engine=FakeEngine([]))
    # a tiny file that declares a huge picture is refused before it is decoded
    with pytest.raises(ocr.InvalidInputError, match="over the limit"):
        ocr_screen(_png(Image.new("1", (MAX_SIDE + 1, 2))), engine=FakeEngine([]))


@pytest.mark.parametrize("kw, text", [
    ({"origin": (1,)}, "origin must be two numbers"),
    ({"origin": (0, float("nan"))}, "origin must be finite"),
    ({"screen_size": (0, 10)}, "screen_size must be finite and positive"),
    ({"min_score": 2}, "min_score must be a number in [0, 1]"),
    ({"meta": {"app": "x"}}, "meta must be a ScreenMeta, got dict"),
])
def test_bad_options_fail_in_one_line(kw, text):
    with pytest.raises(ocr.InvalidInputError) as ei:
        ocr_screen(np.zeros((10, 10, 3), dtype=np.uint8), engine=FakeEngine([]), **kw)
    assert text in str(ei.value)


def test_lines_become_elements_in_screen_coordinates_with_roles():
    lines = [
        [_quad(2, 3, 30, 21), "File", 0.99],
        [_quad(40, 3, 70, 21), "Edit", 0.98],
        [_quad(90, 27, 545, 49), "Warning: you are using the root account.", 0.97],
        [_quad(10, 200, 60, 215), "Notes", 0.9],
        [_quad(10, 300, 60, 315), "blurry", 0.3],  # under min_score: dropped
        [_quad(600, 420, 700, 470), "Cancel", 0.9],  # runs past the screen: clipped
        [_quad(5, 5, 9, 9), "   ", 0.9],  # blank: dropped
    ]
    img = Image.new("RGB", (640, 480), "white")
    scr = ocr_screen(img, origin=(100, 50), screen_size=(760, 520), meta=ScreenMeta("desktop", "100%", "mousepad"),
                     engine=FakeEngine(lines))
    assert (scr.width, scr.height, scr.meta.app, scr.source) == (760, 520, "mousepad", "ocr")
    got = [(e.text, e.role, e.bounds, e.clickable, e.editable) for e in scr.elements]
    assert got == [
        ("File", "menu item", (102.0, 53.0, 130.0, 71.0), True, False),
        ("Edit", "menu item", (140.0, 53.0, 170.0, 71.0), True, False),
        ("Warning: you are using the root account.", "text", (190.0, 77.0, 645.0, 99.0), False, False),
        ("Notes", "label", (110.0, 250.0, 160.0, 265.0), False, False),
        ("Cancel", "label", (700.0, 470.0, 760.0, 520.0), False, False),
    ]


def test_the_screenshots_info_places_it_and_arrays_and_bytes_read_alike():
    img = Image.new("RGB", (64, 48), "white")
    img.info["spatialobs.origin"] = (10, 20)
    img.info["spatialobs.screen_size"] = (1280, 800)
    eng = FakeEngine([[_quad(1, 40, 20, 46), "OK", 0.9]])
    scr = ocr_screen(img, engine=eng)
    assert (scr.width, scr.height) == (1280, 800) and scr.elements[0].bounds == (11.0, 60.0, 30.0, 66.0)
    # without info: origin (0, 0), the picture's size; RGBA and gray arrays and PNG bytes too
    for pic in (np.zeros((48, 64, 4), dtype=np.uint8), np.zeros((48, 64), dtype=np.uint8),
                _png(Image.new("L", (64, 48)))):
        scr = ocr_screen(pic, engine=eng)
        assert (scr.width, scr.height) == (64, 48) and scr.elements[0].bounds == (1.0, 40.0, 20.0, 46.0)
    assert all(shape == (48, 64, 3) for shape in eng.shapes)


def test_role_rules_at_their_edges():
    assert infer_role("Document", (0, 0, 80, 2 * MENU_BAND - 2), top=0) == "menu item"  # center at band - 1
    assert infer_role("Document", (0, 2, 80, 2 * MENU_BAND), top=0) == "label"  # center at the band
    assert infer_role("Save As", (0, 500, 80, 520), top=495) == "menu item"  # relative to the picture's top
    assert infer_role("Go to line", (0, 0, 80, 20)) == "menu bar"  # three words: menu titles read as one line
    assert infer_role("FileEditSearchViewDocumentHelp", (0, 0, 300, 20)) == "menu bar"
    assert infer_role("Go to line", (0, 40, 80, 60)) == "label"
    assert infer_role("Find and replace", (0, 100, 80, 120)) == "label"
    assert infer_role("Find and replace all", (0, 100, 80, 120)) == "text"
    assert infer_role("x" * 25, (0, 100, 80, 120)) == "text"


def test_stable_text_and_truth_signatures():
    assert stable_ocr_text("pcmanfm", "free space: 3 GiB") == "Free space"
    assert stable_ocr_text("mousepad", "FreeSpace") == "FreeSpace"  # only the app's own patterns
    assert stable_ocr_text("mousepad", "/tmp/spatialobs-session-x1_y/launch12/notes.txt") == "~/notes.txt"
    a = Screen([Element((0, 0, 9, 9), "label", "A"), Element((0, 10, 9, 19), "text", "typed", editable=True)], 99, 99)
    b = Screen([Element((0, 0, 9, 9), "label", "A"), Element((0, 10, 9, 19), "text", "other", editable=True)], 99, 99)
    c = Screen([Element((0, 0, 9, 9), "label", "B"), Element((0, 10, 9, 19), "text", "typed", editable=True)], 99, 99)
    assert view_signature(a) == view_signature(b) != view_signature(c)
    assert len({tree_signature(a), tree_signature(b), tree_signature(c)}) == 3
    moved = Screen([Element((1, 0, 10, 9), "label", "A"), a.elements[1]], 99, 99)
    assert view_signature(moved) != view_signature(a)


def test_missing_rapidocr_names_the_extra(monkeypatch):
    monkeypatch.setattr(ocr, "_ENGINE", None)
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    with pytest.raises(OcrUnavailable) as ei:
        ocr_screen(np.zeros((10, 10, 3), dtype=np.uint8))
    assert 'pip install "spatialobs[ocr]"' in str(ei.value) and "\n" not in str(ei.value)


def _need_rapidocr():
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except ImportError:
        require("rapidocr-onnxruntime is not installed (pip install spatialobs[ocr])")


def test_rapidocr_reads_a_drawn_menu_bar_and_line_once_created():
    _need_rapidocr()
    from PIL import ImageDraw, ImageFont

    assert ocr.ocr_engine() is ocr.ocr_engine()
    font = ImageFont.load_default(size=18)
    img = Image.new("RGB", (640, 240), "white")
    d = ImageDraw.Draw(img)
    d.text((8, 4), "File", fill="black", font=font)
    d.text((120, 4), "Help", fill="black", font=font)
    d.text((20, 140), "Quarterly report draft", fill="black", font=font)
    scr = ocr_screen(img)
    got = {(e.text, e.role) for e in scr.elements}
    assert ("File", "menu item") in got and ("Help", "menu item") in got
    line = next(e for e in scr.elements if "report" in (e.text or ""))
    assert line.role == "label" and 120 <= (line.bounds[1] + line.bounds[3]) / 2 <= 170


def test_simulators_have_no_screenshots():
    with pytest.raises(ScreenshotUnsupported, match="notepad driver has no screenshots"):
        make_driver("notepad").screenshot()


def test_mousepad_screenshot_is_its_window_and_ocr_finds_its_menus():
    from spatialobs.screen.drivers.atspi import unavailable_reason

    require(unavailable_reason("mousepad"))
    _need_rapidocr()
    with make_driver("mousepad") as d:
        scr = d.reset()
        img = d.screenshot()
        frame = next(e for e in scr.elements if e.role == "frame")
        x0, y0, x1, y1 = (int(v) for v in frame.bounds)
        assert img.mode == "RGB" and img.size == (x1 - x0, y1 - y0)
        assert img.info["spatialobs.origin"] == (x0, y0) and img.info["spatialobs.screen_size"] == (1280, 800)
        o = ocr_screen(img, meta=scr.meta)
        assert o.meta == scr.meta and (o.width, o.height) == (1280, 800)
        bar = next(e for e in scr.elements if e.role == "menu bar")
        # the detector reads the menu titles as one line or a few; all of them lie on the menu bar
        found = [e for e in o.elements if e.role in ("menu item", "menu bar")]
        assert found and "file" in "".join(e.text or "" for e in found).lower()
        for e in found:
            cy = (e.bounds[1] + e.bounds[3]) / 2
            assert bar.bounds[1] <= cy <= bar.bounds[3] and bar.bounds[0] <= e.bounds[0] < e.bounds[2] <= bar.bounds[2]
        with pytest.raises(ocr.InvalidInputError, match="has not been started"):
            make_driver("mousepad").screenshot()


def test_mousepad_screenshot_from_the_framebuffer_is_the_servers_picture():
    # The box is copied from Xvfb's memory-mapped screen; XCB's GetImage of the same display is the
    # truth, after the screen changed (a menu opened: a new window) and with the file unreadable.
    from PIL import ImageGrab

    from spatialobs.screen.drivers.atspi import unavailable_reason

    require(unavailable_reason("mousepad"))
    with make_driver("mousepad") as d:
        scr = d.reset()
        assert d._session.framebuffer() is not None
        menu = next(a for a in d.actions(scr) if a.op == "click" and a.target is not None and a.target.text == "File")
        for step in range(2):
            img = d.screenshot()
            x0, y0 = img.info["spatialobs.origin"]
            whole = ImageGrab.grab(xdisplay=d._session.display).convert("RGB")
            assert img.tobytes() == whole.crop((x0, y0, x0 + img.width, y0 + img.height)).tobytes(), step
            assert len(img.getcolors(1 << 16) or ()) > 3  # a window, not an empty screen
            if step == 0:
                d.step(menu)
        d._session._fb = None
        d._session.tmp, real = d._session.tmp + "-gone", d._session.tmp
        try:
            assert d._session.framebuffer() is None
            assert d.screenshot().tobytes() == img.tobytes()  # through XCB
        finally:
            d._session.tmp = real


def test_web_screenshot_is_the_viewport():
    from spatialobs.screen.drivers.web import unavailable_reason

    require(unavailable_reason())
    with make_driver("web:tests/data/webapp") as d:
        d.reset()
        img = d.screenshot()
        assert img.mode == "RGB" and img.size == (1280, 800)
        assert img.info["spatialobs.origin"] == (0, 0) and img.info["spatialobs.screen_size"] == (1280, 800)
        # the page is not blank
        assert len(np.unique(np.asarray(img).reshape(-1, 3), axis=0)) > 2
