"""Generate the advance-width table that spatialobs uses to measure Excalidraw text.

Excalidraw measures text with a canvas (``measureText(line).width``: the sum of the
glyph advances, kerned) in the font of the element's ``fontFamily``:

======  ==================  ============================================
id      family              files in the npm package (``dist/prod/fonts``)
======  ==================  ============================================
1       Virgil              ``Virgil/Virgil-Regular.woff2``
2       Helvetica           none: a local font; Chromium on Linux draws it
                            with Liberation Sans (metric-compatible)
3       Cascadia            ``Cascadia/CascadiaCode-Regular.woff2``
5       Excalifont          ``Excalifont/*.woff2`` (unicode-range subsets)
6       Nunito              ``Nunito/*.woff2`` (subsets)
7       Lilita One          ``Lilita/*.woff2`` (subsets)
8       Comic Shanns        ``ComicShanns/*.woff2`` (subsets)
9       Liberation Sans     ``Liberation/LiberationSans-Regular.woff2``
======  ==================  ============================================

A family split into subsets is merged (a code point takes the advance of the first
subset that maps it, the largest subset first). Per family the table holds, in the
same form as the tldraw table (so ``textmeasure`` reads both): ``upm``, ``adv`` runs,
``kern`` classes of Latin, Greek, Cyrillic and punctuation pairs (GPOS ``kern``, which
canvas text applies; none across a space, since Chromium shapes words apart) and
``notdef``; and Excalidraw's ``lineHeight`` for the family (``FONT_METADATA``), which
new text gets. Ligatures (``liga``: fi, fl in Excalifont) are left out (about 0.03 em
each). Characters a family lacks are measured with the browser's fallback fonts, which
the tldraw table already holds.

Run it with fontTools and brotli (build-time tools, not dependencies of the package)::

    pip install fonttools brotli
    python tools/fontmetrics/make_excalidraw_metrics.py FONTS_DIR \
        python/spatialobs/canvas/document/excalidraw_fonts.json

where ``FONTS_DIR`` is ``dist/prod/fonts`` of the npm package ``@excalidraw/excalidraw``
(the version is written into the table with ``--version``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tldraw_metrics import _kerned, _pair_values, _runs, kern_classes  # noqa: E402

_SPACES = (0x20, 0xA0)


def _kerned_here(cp: int) -> bool:
    # the tldraw table's Latin and punctuation, and Greek and Cyrillic, which these fonts kern too
    return _kerned(cp) or 0x370 <= cp <= 0x52F

#: fontFamily id -> (name, folder or file pattern under FONTS_DIR, Excalidraw's line height).
FAMILIES = {
    1: ("Virgil", "Virgil/*.woff2", 1.25),
    2: ("Helvetica", "Liberation/*.woff2", 1.15),
    3: ("Cascadia", "Cascadia/*.woff2", 1.2),
    5: ("Excalifont", "Excalifont/*.woff2", 1.25),
    6: ("Nunito", "Nunito/*.woff2", 1.35),
    7: ("Lilita One", "Lilita/*.woff2", 1.15),
    8: ("Comic Shanns", "ComicShanns/*.woff2", 1.25),
    9: ("Liberation Sans", "Liberation/*.woff2", 1.15),
}


def family_table(paths: List[str]) -> dict:
    """The table entry of a family whose faces are split over ``paths``."""
    from fontTools.ttLib import TTFont

    fonts = [TTFont(p) for p in paths]
    fonts.sort(key=lambda f: -len(f.getBestCmap()))
    upm = fonts[0]["head"].unitsPerEm
    adv: Dict[int, int] = {}
    pairs: Dict[Tuple[str, str], int] = {}
    for font in fonts:
        if font["head"].unitsPerEm != upm:
            raise SystemExit(f"subsets of one family disagree on units per em: {paths}")
        hmtx = font["hmtx"].metrics
        cmap = font.getBestCmap()
        for cp, g in cmap.items():
            adv.setdefault(cp, hmtx[g][0])
        glyph_cps: Dict[str, List[int]] = {}
        for cp, g in cmap.items():
            glyph_cps.setdefault(g, []).append(cp)
        for (g1, g2), v in _pair_values(font).items():
            if not v:
                continue
            for a in glyph_cps.get(g1, []):
                for b in glyph_cps.get(g2, []):
                    # Chromium shapes text word by word: no kerning across a space
                    if _kerned_here(a) and _kerned_here(b) and a not in _SPACES and b not in _SPACES:
                        pairs.setdefault((chr(a), chr(b)), v)
    notdef = fonts[0]["hmtx"].metrics[fonts[0].getGlyphOrder()[0]][0]
    return {"upm": upm, "adv": _runs(adv), "kern": kern_classes(pairs), "notdef": notdef,
            "files": sorted(os.path.basename(p) for p in paths)}


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fonts_dir", help="dist/prod/fonts of @excalidraw/excalidraw")
    ap.add_argument("out", help="where to write the JSON table")
    ap.add_argument("--version", default="0.18.1", help="the @excalidraw/excalidraw version the fonts come with")
    args = ap.parse_args(argv)
    table: dict = {
        "excalidraw": args.version,
        "note": "advance widths and kern pairs in font units; generated by tools/fontmetrics/make_excalidraw_metrics.py",
        "fonts": {},
    }
    done: Dict[str, int] = {}
    for fid, (name, pattern, line_height) in sorted(FAMILIES.items(), key=lambda kv: -kv[0]):
        paths = sorted(glob.glob(os.path.join(args.fonts_dir, pattern)))
        if not paths:
            raise SystemExit(f"no font files for {name} ({pattern}) in {args.fonts_dir}")
        if pattern in done:  # the same faces (Helvetica drawn with Liberation Sans): a reference
            entry = {"same": str(done[pattern])}
        else:
            done[pattern] = fid
            entry = family_table(paths)
        table["fonts"][str(fid)] = dict(entry, name=name, lineHeight=line_height)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(table, f, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
