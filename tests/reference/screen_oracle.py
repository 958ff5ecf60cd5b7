"""Naive oracles for the screen-identity core, written straight from DESIGN §7.

Plain Python: FNV-1a as a byte loop, grid cells from the documented formula,
sets as Python sets, Jaccard and RRF in exact fractions, BM25 recomputed from
scratch over every document, the state index as a list scanned in full. The
compiled code must agree with these exactly (bit for bit where floats are
involved, since the formulas are evaluated in the same order).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK64 = (1 << 64) - 1


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK64
    return h


def atom_hash(kind: str, col: int, row: int, value: str) -> int:
    return fnv1a64(f"{kind}:{col}:{row}:{value}".encode("utf-8"))


def cell(lo: float, hi: float, grid: int, extent: float) -> int:
    v = math.floor(((lo + hi) * 0.5) * grid / extent)
    return min(max(v, 0), grid - 1)


def normalize(text: str, mask: bool = False) -> str:
    import re

    s = " ".join(text.lower().split())
    if mask:
        s = re.sub(r"\d+(?:[.,:/]\d+)*", "#", s)
    return s[:120]


def screen_atoms(boxes: Sequence[Sequence[float]], width: float, height: float, grid: int,
                 roles: Sequence[str], texts: Sequence[str]) -> Tuple[List[int], List[int]]:
    control: Set[int] = set()
    text: Set[int] = set()
    for b, r, t in zip(boxes, roles, texts):
        col = cell(b[0], b[2], grid, width)
        row = cell(b[1], b[3], grid, height)
        control.add(atom_hash("c", col, row, r))
        if t:
            text.add(atom_hash("t", col, row, t))
    return sorted(control), sorted(text)


def ngram_embed(text: str, n: int, dim: int) -> List[float]:
    acc = [0.0] * dim
    if text:
        padded = " " + text + " "
        windows = [padded[i : i + n] for i in range(len(padded) - n + 1)] if len(padded) >= n else [padded]
        for w in windows:
            h = fnv1a64(w.encode("utf-8"))
            acc[h % dim] += -1.0 if h >> 63 else 1.0
    norm = math.sqrt(sum(v * v for v in acc))
    return [v / norm if norm > 0 else 0.0 for v in acc]


def jaccard(a: Iterable[int], b: Iterable[int]) -> Fraction:
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return Fraction(1)
    return Fraction(len(sa & sb), len(sa | sb))


def two_set_score(ac: Iterable[int], at: Iterable[int], bc: Iterable[int], bt: Iterable[int]) -> Fraction:
    return Fraction(1, 2) * jaccard(ac, bc) + Fraction(1, 2) * jaccard(at, bt)


def verify(query: Tuple[Sequence[int], Sequence[int]], candidates: Sequence[Tuple[Sequence[int], Sequence[int]]],
           ids: Sequence[int], tau: Fraction) -> Tuple[List[Fraction], int]:
    """Exact scores and the position of the best candidate >= tau (ties to the lower id), or -1."""
    scores = [two_set_score(query[0], query[1], candidates[i][0], candidates[i][1]) for i in ids]
    best = -1
    for pos, (s, i) in enumerate(zip(scores, ids)):
        if s >= tau and (best < 0 or s > scores[best] or (s == scores[best] and i < ids[best])):
            best = pos
    return scores, best


def bm25_scores(docs: Sequence[Sequence[int]], query: Sequence[int], k1: float = 1.5, b: float = 0.75) -> Dict[int, float]:
    """Lucene BM25 of every document sharing a term with the query, recomputed from scratch."""
    N = len(docs)
    if N == 0:
        return {}
    avgdl = sum(len(d) for d in docs) / N
    counts = [dict() for _ in docs]  # type: List[Dict[int, int]]
    for c, d in zip(counts, docs):
        for t in d:
            c[t] = c.get(t, 0) + 1
    scores: Dict[int, float] = {}
    for t in sorted(set(query)):
        df = sum(1 for c in counts if t in c)
        if df == 0:
            continue
        idf = math.log(1.0 + (N - df + 0.5) / (df + 0.5))
        for i, c in enumerate(counts):
            if t in c:
                tf = float(c[t])
                dl = float(len(docs[i]))
                scores[i] = scores.get(i, 0.0) + idf * tf / (tf + k1 * (1.0 - b + b * dl / avgdl))
    return scores


def bm25_top_k(docs: Sequence[Sequence[int]], query: Sequence[int], k: int, k1: float = 1.5,
               b: float = 0.75) -> List[Tuple[int, float]]:
    s = bm25_scores(docs, query, k1, b)
    return sorted(s.items(), key=lambda kv: (-kv[1], kv[0]))[:k]


def rrf(lists: Sequence[Sequence[int]], k: int = 60) -> List[Tuple[int, Fraction]]:
    fused: Dict[int, Fraction] = {}
    for lst in lists:
        for rank, d in enumerate(lst, start=1):
            fused[d] = fused.get(d, Fraction(0)) + Fraction(1, k + rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


class NaiveStateIndex:
    """The state index with exhaustive verification, in fractions: the decision oracle."""

    def __init__(self, tau: Fraction = Fraction(93, 100)) -> None:
        self.tau = tau
        self.obs: List[Tuple[tuple, List[int], List[int]]] = []
        self.state_of: List[int] = []
        self.num_states = 0

    def add(self, meta: tuple, control: Sequence[int], text: Sequence[int]) -> Tuple[int, int, bool, bool, Fraction]:
        control, text = sorted(set(control)), sorted(set(text))
        for i, (m, c, t) in enumerate(self.obs):
            if m == meta and c == control and t == text:
                return self.state_of[i], i, False, True, Fraction(1)
        best: Optional[int] = None
        best_score = Fraction(-1)
        for i, (m, c, t) in enumerate(self.obs):
            if m != meta:
                continue
            s = two_set_score(control, text, c, t)
            if s >= self.tau and s > best_score:
                best, best_score = i, s
        self.obs.append((meta, control, text))
        if best is None:
            self.state_of.append(self.num_states)
            self.num_states += 1
            return self.state_of[-1], len(self.obs) - 1, True, False, Fraction(0)
        self.state_of.append(self.state_of[best])
        return self.state_of[-1], len(self.obs) - 1, False, False, best_score
