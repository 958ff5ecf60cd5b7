"""Text measuring cases for Excalidraw (``excalidraw_text.truth.json``) and their truth.

Free text in every font family at four sizes (Latin, kerned pairs, ligatures, spaces,
an empty text, Greek and Cyrillic, emoji, CJK, digits), and labels in rectangles,
ellipses and diamonds of three sizes in four families (words that wrap, one too long
for the line, hyphens, double spaces, hard line breaks).

The truth is what Excalidraw 0.18.1 itself makes of them in Chromium, with its fonts
loaded: ``convertToExcalidrawElements`` (``{type: "text"}`` and ``{type, label}``
skeletons, which measure, wrap and grow containers as editing does), run on the
Excalidraw harness page with that function exposed; ``--truth RAW.json`` keeps, per
case, the elements' ``x, y, width, height, text, lineHeight``.

Usage::

    python make_excalidraw_text.py --cases CASES.json     # the cases, for the page
    python make_excalidraw_text.py --truth CASES.json RAW.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEXTS = ["Hello world", "Added title", "AVATAR Wave, ToTo.", "fi fl office -- yes!",
         "The quick brown fox jumps over the lazy dog", "line one\nsecond line here", "  spaced  ", "",
         "naïve café Ελληνικά Привет", "emoji 😀 ok", "中文字符 and 日本語", "1234567890 %&@#"]
LABELS = ["Some text here that wraps in the box", "short", "a-very-long-hyphenated-word-that-must-break",
          "Supercalifragilisticexpialidocious word", "two  spaces and  more words to wrap around the container edge",
          "line one\nline two is longer than the box width for sure"]


def cases() -> list:
    out = []
    for fam in (1, 2, 3, 5, 6, 7, 8, 9):
        for fs in (16, 20, 28, 36):
            for t in TEXTS:
                out.append({"text": t, "fontFamily": fam, "fontSize": fs})
    for fam in (1, 5, 2, 6):
        for cont in ("rectangle", "ellipse", "diamond"):
            for w, h in ((160, 80), (100, 40), (300, 60)):
                for t in LABELS:
                    out.append({"text": t, "fontFamily": fam, "fontSize": 20, "container": cont, "width": w,
                                "height": h})
    return out


def main(argv: list) -> int:
    if argv[:1] == ["--cases"]:
        Path(argv[1]).write_text(json.dumps(cases()), encoding="utf-8")
        return 0
    if argv[:1] == ["--truth"]:
        cs = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
        raw = json.loads(Path(argv[2]).read_text(encoding="utf-8"))["res"]
        keep = ("type", "x", "y", "width", "height", "text", "lineHeight")
        rows = [{"case": c, "elements": [{k: e[k] for k in keep if k in e} for e in r]} for c, r in zip(cs, raw)]
        out = {"excalidraw": "0.18.1", "rows": rows}
        (HERE / "excalidraw_text.truth.json").write_text(json.dumps(out, ensure_ascii=False) + "\n", encoding="utf-8")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
