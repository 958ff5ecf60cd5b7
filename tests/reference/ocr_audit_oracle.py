"""Naive oracles for the OCR audit's measures, written straight from their definitions.

Plain Python over every pair and every ranking, in exact fractions: the audit's
functions must give the same numbers.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, Hashable, List, Optional, Sequence, Tuple


def pair_prf(predicted: Sequence[Hashable], truth: Sequence[Hashable]) -> Tuple[Fraction, Fraction, Fraction]:
    tp = pp = tt = 0
    n = len(truth)
    for i in range(n):
        for j in range(i + 1, n):
            same_p = predicted[i] == predicted[j]
            same_t = truth[i] == truth[j]
            tp += same_p and same_t
            pp += same_p
            tt += same_t
    p = Fraction(tp, pp) if pp else Fraction(1)
    r = Fraction(tp, tt) if tt else Fraction(1)
    f = 2 * p * r / (p + r) if p + r else Fraction(0)
    return p, r, f


def recall_at_k(scores: Sequence[Sequence[float]], truth: Sequence[Hashable], k: int
                ) -> Tuple[Optional[Fraction], Optional[Fraction], int]:
    n = len(truth)
    recalls: List[Fraction] = []
    hits = 0
    for i in range(n):
        rel = {j for j in range(n) if j != i and truth[j] == truth[i]}
        if not rel:
            continue
        ranked = sorted((j for j in range(n) if j != i), key=lambda j: (-scores[i][j], j))
        found = len(rel & set(ranked[:k]))
        recalls.append(Fraction(found, len(rel)))
        hits += found > 0
    if not recalls:
        return None, None, 0
    return sum(recalls, Fraction(0)) / len(recalls), Fraction(hits, len(recalls)), len(recalls)


def false_merge_rate(states: Sequence[Hashable], truth: Sequence[Hashable]) -> Tuple[Fraction, int]:
    merges = wrong = 0
    for i in range(len(states)):
        first = next(j for j in range(i + 1) if states[j] == states[i])
        if first < i:
            merges += 1
            wrong += truth[first] != truth[i]
    return (Fraction(wrong, merges) if merges else Fraction(0)), merges


def successor_consistency(states: Sequence[Hashable], transitions: Sequence[Tuple[int, str, int]]
                          ) -> Tuple[Optional[Fraction], int]:
    keys = []
    for src, sig, _ in transitions:
        if (states[src], sig) not in keys:
            keys.append((states[src], sig))
    same = total = 0
    for key in keys:
        nexts = [states[dst] for src, sig, dst in transitions if (states[src], sig) == key]
        if len(nexts) < 2:
            continue
        counts: Dict[Hashable, int] = {}
        for s in nexts:
            counts[s] = counts.get(s, 0) + 1
        same += max(counts.values())
        total += len(nexts)
    return (Fraction(same, total) if total else None), total
