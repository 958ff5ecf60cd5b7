"""Write the text conformance documents (``text_*.tldr``, ``labels.tldr``) beside this script.

* ``text_auto``: auto-size text in every font × size, several paragraphs with an
  empty one, scales other than 1, leading, trailing and doubled spaces, empty text;
* ``text_wrap``: fixed-width text in every font × size wrapping at widths with and
  without fractions, hyphenated words, words and URLs longer than the line, a
  scaled one, paragraphs, a width below tldraw's minimum, runs of spaces;
* ``text_unicode``: characters tldraw's fonts lack (CJK, emoji, symbols, Greek in
  the draw font) next to accented Latin and Cyrillic, in the draw and sans fonts;
* ``labels``: geo labels in every font × size that grow their shape, a scaled one,
  a word wider than its shape, paragraphs; notes whose label grows them or whose
  font shrinks to fit a long word.

The truth files ``*.truth.json`` hold what the real tldraw 5.4.2 editor computed
(page bounds; for geo and note shapes also ``w``, ``growY`` and
``fontSizeAdjustment``), reduced by ``--truth NAME RAW.json`` from the tldraw
harness's output. tldraw computes a label's ``growY`` only when the label is
edited, so the harness run for ``labels`` re-set the label of every shape whose
``meta.touchLabel`` is true after loading (``editor.updateShape`` with the text
``x``, then with the original text), as a person editing the label would.

Usage::

    python make_text.py                        # writes the .tldr documents
    python make_text.py --truth NAME RAW.json  # keeps the asserted fields of a harness run
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

from tldr_doc import main, rich, write_tldr

HERE = Path(__file__).resolve().parent
PAGE = "page:conf"


FONTS = ["draw", "sans", "serif", "mono"]
SIZES = ["s", "m", "l", "xl"]


class Doc:
    def __init__(self) -> None:
        self.records: List[Dict[str, Any]] = []

    def shape(self, sid: str, typ: str, x: float, y: float, props: Dict[str, Any], meta: Optional[Dict[str, Any]] = None) -> None:
        n = len(self.records) + 1
        self.records.append({"x": x, "y": y, "rotation": 0, "isLocked": False, "opacity": 1, "meta": meta or {},
                             "id": "shape:" + sid, "type": typ, "props": props, "parentId": PAGE,
                             "index": f"a{n:04d}V", "typeName": "shape"})

    def text(self, sid: str, x: float, y: float, s: str, font: str = "draw", size: str = "m", scale: float = 1,
             w: float = 8, auto: bool = True) -> None:
        self.shape(sid, "text", x, y, {"color": "black", "size": size, "w": w, "font": font, "textAlign": "start",
                                       "autoSize": auto, "scale": scale, "richText": rich(s)})

    def geo(self, sid: str, x: float, y: float, s: str, w: float, h: float, font: str = "draw", size: str = "m",
            scale: float = 1) -> None:
        self.shape(sid, "geo", x, y, {"w": w, "h": h, "geo": "rectangle", "dash": "draw", "growY": 0, "flipX": False,
                                      "flipY": False, "url": "", "scale": scale, "color": "black", "labelColor": "black",
                                      "fill": "none", "size": size, "font": font, "align": "middle",
                                      "verticalAlign": "middle", "richText": rich(s)}, {"touchLabel": True})

    def note(self, sid: str, x: float, y: float, s: str, font: str = "draw", size: str = "m", scale: float = 1) -> None:
        self.shape(sid, "note", x, y, {"color": "yellow", "labelColor": "black", "size": size, "font": font,
                                       "fontSizeAdjustment": 1, "align": "middle", "verticalAlign": "middle",
                                       "growY": 0, "url": "", "richText": rich(s), "scale": scale,
                                       "textLastEditedBy": ""}, {"touchLabel": True})

    def write(self, path: Path) -> None:
        write_tldr(path, PAGE, self.records, separators=(",", ":"), ensure_ascii=False)


PANGRAM = "The quick brown fox jumps over the lazy dog. AV To Wa 0123!"
LONG = "A fixed width text that wraps onto several lines, with well-known state-of-the-art words"
WORD = "Supercalifragilisticexpialidocious and https://example.com/a/very/long/path/name"


def documents() -> Dict[str, Doc]:
    auto = Doc()
    y = 0
    for f in FONTS:
        for s in SIZES:
            auto.text(f"auto-{f}-{s}", 0, y, PANGRAM, f, s)
            auto.text(f"para-{f}-{s}", 1500, y, "First line\n\nThird, after an empty one\nlast", f, s)
            y += 330
    for i, sc in enumerate([0.5, 1.7, 2.5]):
        auto.text(f"scale-{i}", 0, y, "Scaled text, twice", FONTS[i], "m", sc)
        y += 200
    for sid, s in [("trailing", "trailing   "), ("leading", "   leading"), ("double", "two  spaces  here"), ("empty", "")]:
        auto.text(sid, 0, y, s)
        y += 80

    wrap = Doc()
    y = 0
    for f in FONTS:
        for s, w in [("s", 120), ("m", 203.7), ("l", 300), ("xl", 260)]:
            wrap.text(f"wrap-{f}-{s}", 0, y, LONG, f, s, 1, w, False)
            wrap.text(f"word-{f}-{s}", 1500, y, WORD, f, s, 1, w, False)
            y += 1100
    wrap.text("wrap-scaled", 0, y, LONG, "sans", "m", 1.5, 180, False)
    wrap.text("wrap-paras", 0, y + 700, "one two three four five six\n\nseven eight nine ten eleven", "serif", "m", 1, 150, False)
    wrap.text("wrap-tiny", 0, y + 1200, "tiny width text", "draw", "m", 1, 5, False)
    wrap.text("wrap-spaces", 0, y + 2000, "spaces       between       words   here", "mono", "m", 1, 160, False)

    uni = Doc()
    y = 0
    for i, s in enumerate(["反馈回路", "漢字漢字漢字漢字", "😀😀😀😀", "a😀b😀c", "→ ✓ ★ • …", "Ünïcödé àçcents",
                           "ЖЁлка привет", "αβγ δεζ"]):
        for f in ("draw", "sans"):
            uni.text(f"uni-{i}-{f}", 0, y, s, f, "m")
            y += 80

    labels = Doc()
    y = 0
    for f in FONTS:
        for s in SIZES:
            labels.geo(f"geo-{f}-{s}", 0, y, "A label that needs a few lines to fit", 160, 60, f, s)
            y += 400
    labels.geo("geo-short", 0, y, "Hi", 200, 120)
    labels.geo("geo-scaled", 0, y + 200, "Scaled label that wraps in the box", 300, 80, "sans", "m", 2)
    labels.geo("geo-wide", 0, y + 700, "Supercalifragilisticexpialidocious", 100, 60, "draw", "l")
    labels.geo("geo-paras", 0, y + 1100, "one\ntwo\nthree\nfour\nfive", 120, 50, "mono", "s")
    notes = [("Short note", "draw", "m"),
             ("A longer note with quite a lot of text in it, enough that it has to grow downwards to fit "
              "everything that was written", "draw", "m"),
             ("Incomprehensibilities", "sans", "xl"), ("Pneumonoultramicroscopicsilicovolcanoconiosis", "draw", "l"),
             ("Many\nshort\nlines\nin\na\nnote\nthat\ngrows", "serif", "l"), ("note scaled", "mono", "m")]
    for i, (s, f, z) in enumerate(notes):
        labels.note(f"note-{i}", 500, i * 500, s, f, z, 1.5 if i == 5 else 1)
    return {"text_auto": auto, "text_wrap": wrap, "text_unicode": uni, "labels": labels}


def reduce_truth(raw_path: Path) -> Dict[str, Any]:
    raw = json.loads(raw_path.read_text())
    out: Dict[str, Any] = {}
    for page in raw["pages"]:
        for s in page["shapes"]:
            b = s["pageBounds"]
            entry: Dict[str, Any] = {"type": s["type"], "pageBounds": [b["x"], b["y"], b["w"], b["h"]]}
            if s["type"] in ("geo", "note"):
                entry["props"] = {k: s["props"][k] for k in ("w", "h", "growY", "fontSizeAdjustment") if k in s["props"]}
            out[s["id"]] = entry
    return out


if __name__ == "__main__":
    main(HERE, {name: (lambda d=doc: d) for name, doc in documents().items()}, reduce_truth)
