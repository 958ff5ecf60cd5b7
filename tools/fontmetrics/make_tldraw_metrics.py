"""Generate the advance-width table that spatialobs uses to measure tldraw text.

tldraw draws text in four fonts (``@tldraw/assets/fonts``): ``draw`` is Shantell Sans
Informal Regular, ``sans`` / ``serif`` / ``mono`` are IBM Plex Sans / Serif / Mono
Medium (tldraw maps its ``normal`` weight to the Medium files). This script reads
those woff2 files and writes a compact JSON table with, per font:

* ``upm``: units per em;
* ``adv``: advance widths in font units for every code point the font maps, as runs
  ``[first_code_point, [w, w, ...]]`` of consecutive code points;
* ``kern``: pair adjustments (the GPOS ``kern`` feature, which Chromium applies by
  default: ``font-kerning: auto``) between Latin and punctuation code points, as
  classes (see :func:`kern_classes`).

The draw font cycles glyph alternates through its required ligatures (``rlig``:
every letter is replaced by ``.alt2``, then contextual rules swap some to ``.alt1`` /
``.alt3`` so repeated letters look hand-written). A width table cannot follow the
context, so a code point's advance is the mean over the alternates ``rlig`` can give
it (they differ by about 1 %), and kerning uses the ``.alt2`` glyph. Other
substitutions that change widths (``liga`` ``fi``/``fl``, by under 2 % of an em) are
left out. Line height does not depend on the fonts: tldraw sets it in pixels.

Characters none of tldraw's fonts has are drawn by the browser's fallback fonts.
``--fallback`` adds their advances (``fallback``, first font wins): on Debian,
Chromium takes Liberation Sans, then DejaVu Sans, then Noto Color Emoji for emoji.
A character no font has (CJK without a CJK font installed) is drawn as the
primary font's ``.notdef`` box, whose advance is ``notdef``.

Run it with fontTools and brotli (build-time tools, not dependencies of the package)::

    pip install fonttools brotli
    python tools/fontmetrics/make_tldraw_metrics.py FONTS_DIR \
        python/spatialobs/canvas/document/tldraw_fonts.json \
        --fallback /usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf \
        --fallback /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf \
        --emoji /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf

where ``FONTS_DIR`` is the ``fonts`` folder of the npm package ``@tldraw/assets``
(the version the table targets is written into the table with ``--version``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, List, Optional, Set, Tuple

FONT_FILES = {
    "draw": "Shantell_Sans-Informal_Regular.woff2",
    "sans": "IBMPlexSans-Medium.woff2",
    "serif": "IBMPlexSerif-Medium.woff2",
    "mono": "IBMPlexMono-Medium.woff2",
}


def _kerned(cp: int) -> bool:
    # Latin and general punctuation: where nearly all kerned text is; keeps the table small
    return 0x20 <= cp <= 0x24F or 0x2010 <= cp <= 0x206F


def _lookups(table, tag: str) -> List[int]:
    out: List[int] = []
    for fr in table.FeatureList.FeatureRecord:
        if fr.FeatureTag == tag:
            for i in fr.Feature.LookupListIndex:
                if i not in out:
                    out.append(i)
    return out


def _subtables(lookup):
    for st in lookup.SubTable:
        if lookup.LookupType in (7, 9):  # extension lookups wrap the real subtable
            yield st.ExtSubTable.LookupType, st.ExtSubTable
        else:
            yield lookup.LookupType, st


def _rlig_alternates(font) -> Dict[str, List[str]]:
    """Glyph → the glyphs the ``rlig`` feature can turn it into (always-applied single
    substitutions first, then the single substitutions its contextual rules call)."""
    if "GSUB" not in font:
        return {}
    gsub = font["GSUB"].table
    direct: Dict[str, str] = {}
    called: Set[int] = set()
    for li in _lookups(gsub, "rlig"):
        for tp, st in _subtables(gsub.LookupList.Lookup[li]):
            if tp == 1:
                for a, b in st.mapping.items():
                    direct.setdefault(a, b)
            elif tp == 6:
                records = list(getattr(st, "SubstLookupRecord", None) or [])
                for rs in (getattr(st, "ChainSubRuleSet", None) or []) + (getattr(st, "ChainSubClassSet", None) or []):
                    if rs is None:
                        continue
                    for rule in (getattr(rs, "ChainSubRule", None) or []) + (getattr(rs, "ChainSubClassRule", None) or []):
                        records.extend(rule.SubstLookupRecord)
                called.update(r.LookupListIndex for r in records)
    contextual: Dict[str, Set[str]] = {}
    for li in called:
        for tp, st in _subtables(gsub.LookupList.Lookup[li]):
            if tp == 1:
                for a, b in st.mapping.items():
                    contextual.setdefault(a, set()).add(b)
    out: Dict[str, List[str]] = {}
    for g in font.getGlyphOrder():
        first = direct.get(g, g)
        alts = {first} | contextual.get(first, set())
        if alts != {g}:
            out[g] = sorted(alts)
    return out


def _pair_values(font) -> Dict[Tuple[str, str], int]:
    """x-advance adjustments of the GPOS ``kern`` feature (pair positioning)."""
    if "GPOS" not in font:
        return {}
    gpos = font["GPOS"].table
    pairs: Dict[Tuple[str, str], int] = {}
    for li in _lookups(gpos, "kern"):
        for tp, st in _subtables(gpos.LookupList.Lookup[li]):
            if tp != 2:
                continue
            firsts = st.Coverage.glyphs
            if st.Format == 1:
                for g1, ps in zip(firsts, st.PairSet):
                    for pvr in ps.PairValueRecord:
                        v = getattr(pvr.Value1, "XAdvance", 0) if pvr.Value1 else 0
                        pairs.setdefault((g1, pvr.SecondGlyph), v)  # the first lookup that matches wins
            elif st.Format == 2:
                c1 = st.ClassDef1.classDefs
                c2 = st.ClassDef2.classDefs
                seconds: Dict[int, List[str]] = {}
                for g, c in c2.items():
                    seconds.setdefault(c, []).append(g)
                for g1 in firsts:
                    row = st.Class1Record[c1.get(g1, 0)]
                    for cls, rec in enumerate(row.Class2Record):
                        v = getattr(rec.Value1, "XAdvance", 0) if rec.Value1 else 0
                        if not v or cls == 0:
                            continue  # class 0 (unlisted seconds) carries no kerning in these fonts
                        for g2 in seconds.get(cls, []):
                            pairs.setdefault((g1, g2), v)
    return pairs


def font_table(path: str) -> dict:
    """The table entry of one font file."""
    from fontTools.ttLib import TTFont

    font = TTFont(path)
    upm = font["head"].unitsPerEm
    hmtx = font["hmtx"].metrics
    cmap = font.getBestCmap()
    alts = _rlig_alternates(font)

    def glyph_for_kern(g: str) -> str:
        a = alts.get(g)
        return a[0] if a and len(a) == 1 else (next((x for x in a if x.endswith(".alt2")), g) if a else g)

    adv: Dict[int, int] = {}
    for cp, g in cmap.items():
        options = alts.get(g, [g])
        adv[cp] = round(sum(hmtx[o][0] for o in options) / len(options))
    runs = _runs(adv)
    pv = _pair_values(font)
    pairs: Dict[Tuple[str, str], int] = {}
    if pv:
        glyph_cps: Dict[str, List[int]] = {}
        for cp, g in cmap.items():
            glyph_cps.setdefault(glyph_for_kern(g), []).append(cp)
        for (g1, g2), v in pv.items():
            if v:
                for a in glyph_cps.get(g1, []):
                    for b in glyph_cps.get(g2, []):
                        if _kerned(a) and _kerned(b):
                            pairs[(chr(a), chr(b))] = v
    notdef = hmtx[font.getGlyphOrder()[0]][0]
    return {"upm": upm, "adv": runs, "kern": kern_classes(pairs), "notdef": notdef}


def kern_classes(pairs: Dict[Tuple[str, str], int]) -> dict:
    """Pairs as classes: ``left`` / ``right`` are strings of the characters in each
    class (characters with the same kerning row / column), ``m`` holds per left
    class the sparse row ``[right_class, dx, right_class, dx, ...]``."""
    rows: Dict[str, Dict[str, int]] = {}
    cols: Dict[str, Dict[str, int]] = {}
    for (a, b), v in pairs.items():
        rows.setdefault(a, {})[b] = v
        cols.setdefault(b, {})[a] = v
    right_of: Dict[tuple, str] = {}
    for b in sorted(cols):
        key = tuple(sorted(cols[b].items()))
        right_of[key] = right_of.get(key, "") + b
    right = list(right_of.values())
    rclass = {ch: i for i, chars in enumerate(right) for ch in chars}
    left_of: Dict[tuple, str] = {}
    for a in sorted(rows):
        key = tuple(sorted({rclass[b]: v for b, v in rows[a].items()}.items()))
        left_of[key] = left_of.get(key, "") + a
    left = list(left_of.values())
    m = [[x for kv in key for x in kv] for key in left_of]
    return {"left": left, "right": right, "m": m}


def _cmap_advances(path: str) -> Dict[int, float]:
    from fontTools.ttLib import TTFont

    font = TTFont(path)
    upm = font["head"].unitsPerEm
    hmtx = font["hmtx"].metrics
    return {cp: hmtx[g][0] / upm for cp, g in font.getBestCmap().items()}


def fallback_table(paths: List[str], covered: Set[int], emoji: Optional[str] = None) -> dict:
    """Advances in thousandths of an em, for code points in none of ``covered`` that
    one of the fallback fonts maps (the first font that maps one wins; the emoji font
    first from U+1F000, where Chromium prefers the emoji presentation)."""
    adv: Dict[int, int] = {}
    if emoji:
        for cp, w in _cmap_advances(emoji).items():
            if cp >= 0x1F000 and cp not in covered:
                adv[cp] = round(w * 1000)
        paths = paths + [emoji]
    for path in paths:
        for cp, w in _cmap_advances(path).items():
            if cp not in covered and cp not in adv and cp >= 0x20:
                adv[cp] = round(w * 1000)
    return {"upm": 1000, "adv": _runs(adv), "files": [os.path.basename(p) for p in paths]}


def _runs(adv: Dict[int, int]) -> List[list]:
    runs: List[list] = []
    for cp in sorted(adv):
        if runs and runs[-1][0] + len(runs[-1][1]) == cp:
            runs[-1][1].append(adv[cp])
        else:
            runs.append([cp, [adv[cp]]])
    return runs


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fonts_dir", help="the fonts folder of @tldraw/assets")
    ap.add_argument("out", help="where to write the JSON table")
    ap.add_argument("--version", default="5.4.2", help="the tldraw version the fonts come with")
    ap.add_argument("--fallback", action="append", default=[], metavar="FONT",
                    help="a font the browser falls back to for characters tldraw's fonts lack (repeat, first wins)")
    ap.add_argument("--emoji", metavar="FONT", help="the colour emoji font, which wins for code points from U+1F000")
    args = ap.parse_args(argv)
    table = {
        "tldraw": args.version,
        "note": "advance widths and kern pairs in font units; generated by tools/fontmetrics/make_tldraw_metrics.py",
        "fonts": {},
    }
    for key, name in FONT_FILES.items():
        table["fonts"][key] = dict(font_table(os.path.join(args.fonts_dir, name)), file=name)
    if args.fallback:
        covered = set.intersection(*(set(_cmap_advances(os.path.join(args.fonts_dir, n))) for n in FONT_FILES.values()))
        table["fallback"] = fallback_table(args.fallback, covered, args.emoji)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(table, f, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
