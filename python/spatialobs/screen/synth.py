"""A seeded synthetic screen corpus with ground-truth states, and the quality report.

:func:`make_corpus` draws apps, each with screen templates; some templates of an
app share one layout (same boxes and roles, other texts), so that layout alone
cannot tell them apart. Each template is one ground-truth state, observed as
near-duplicate variants: pixel jitter, a clock or counter that ticks, a text edit,
an element added or removed, and exact repeats. Everything is drawn from
``random.Random(seed)``, so a seed gives the same corpus on every platform.

:func:`quality_report` runs a :class:`StateIndex` over a corpus and scores it
against the labels.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.screen.features import Features
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = ["Corpus", "make_corpus", "pair_metrics", "quality_report"]

_ROLES = ("button", "text", "image", "edit", "checkbox", "switch", "list_item", "tab", "link", "icon")
_WORDS = (
    "inbox sent drafts settings profile search home library album artist play pause next back cancel ok save "
    "delete share edit open close menu help account sign in out login password email name address city music "
    "video photo camera gallery map route stop station time price cart order pay total item add remove more"
).split()

WIDTH, HEIGHT = 1080.0, 2280.0


@dataclass
class Corpus:
    """Screens in arrival order with their ground-truth state labels."""

    screens: List[Screen]
    labels: List[int]
    num_states: int


def _layout(rng: random.Random, n: int) -> List[Tuple[Tuple[float, float, float, float], str]]:
    out: List[Tuple[Tuple[float, float, float, float], str]] = []
    for _ in range(n):
        w = rng.uniform(60, 600)
        h = rng.uniform(40, 200)
        x0 = rng.uniform(0, WIDTH - w)
        y0 = rng.uniform(0, HEIGHT - h)
        out.append(((round(x0), round(y0), round(x0 + w), round(y0 + h)), rng.choice(_ROLES)))
    return out


def _texts(rng: random.Random, n: int) -> List[Optional[str]]:
    return [None if rng.random() < 0.3 else " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 4)))
            for _ in range(n)]


def _variant(rng: random.Random, layout: List[Any], texts: List[Optional[str]], meta: ScreenMeta) -> Screen:
    boxes = [b for b, _ in layout]
    roles = [r for _, r in layout]
    texts = list(texts)
    kind = rng.random()
    if kind < 0.25:  # jitter a few elements by a few pixels
        for i in rng.sample(range(len(boxes)), k=min(2, len(boxes))):
            dx, dy = rng.randint(-6, 6), rng.randint(-6, 6)
            x0, y0, x1, y1 = boxes[i]
            boxes[i] = (max(0, x0 + dx), max(0, y0 + dy), max(0, x1 + dx), max(0, y1 + dy))
    elif kind < 0.45:  # a clock or counter ticks
        texts[0] = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    elif kind < 0.6:  # one text edited
        i = rng.randrange(len(texts))
        t = texts[i]
        texts[i] = rng.choice(_WORDS) if t is None else t + " " + rng.choice(_WORDS)
    elif kind < 0.7:  # one element removed
        i = rng.randrange(1, len(boxes))
        del boxes[i], roles[i], texts[i]
    elif kind < 0.8:  # one element added (a toast, a badge)
        boxes.append((40, 2100, 400, 2160))
        roles.append("toast")
        texts.append(rng.choice(_WORDS))
    # else: an exact repeat
    elements = [Element(b, r, t) for b, r, t in zip(boxes, roles, texts)]
    return Screen(elements, WIDTH, HEIGHT, meta, source="synthetic")


def make_corpus(
    seed: int = 0,
    apps: int = 5,
    templates_per_app: int = 20,
    variants: int = 5,
    elements: Tuple[int, int] = (25, 60),
    shared_layout: float = 0.3,
) -> Corpus:
    """Draw a corpus of ``apps * templates_per_app`` states, ``variants`` screens each.

    Parameters
    ----------
    seed : int
    apps, templates_per_app, variants : int
    elements : (min, max)
        Elements per template.
    shared_layout : float
        Fraction of templates that reuse the previous template's layout with new texts.

    Returns
    -------
    Corpus
        Screens shuffled into one arrival order; ``labels[i]`` is the state of
        ``screens[i]``. The first element of every template holds a clock, so masking
        volatile text matters.

    Examples
    --------
    >>> c = make_corpus(seed=1, apps=2, templates_per_app=3, variants=2)
    >>> len(c.screens), c.num_states
    (12, 6)
    """
    if min(apps, templates_per_app, variants) < 1 or elements[0] < 2 or elements[1] < elements[0]:
        raise InvalidInputError("apps, templates_per_app and variants must be >= 1 and elements a (min >= 2, max) range")
    rng = random.Random(seed)
    items: List[Tuple[Screen, int]] = []
    label = 0
    for a in range(apps):
        meta = ScreenMeta(display_mode="portrait", text_size="m", app=f"app{a}")
        layout: List[Any] = []
        for t in range(templates_per_app):
            if not layout or rng.random() >= shared_layout:
                layout = _layout(rng, rng.randint(*elements))
            texts = _texts(rng, len(layout))
            texts[0] = "12:00"
            for _ in range(variants):
                items.append((_variant(rng, layout, texts, meta), label))
            label += 1
    rng.shuffle(items)
    return Corpus([s for s, _ in items], [lab for _, lab in items], label)


def _pairs(counts: Counter) -> int:
    return sum(n * (n - 1) // 2 for n in counts.values())


def pair_metrics(predicted: Sequence[int], truth: Sequence[int]) -> Dict[str, float]:
    """Pair precision, recall and F1 of a clustering against ground truth.

    A pair of screens is positive when both carry the same label; predicted
    positive when both map to the same state.

    Examples
    --------
    >>> pair_metrics([0, 0, 1], [0, 0, 0])["recall"]  # 1 of the 3 true pairs found
    0.3333333333333333
    """
    if len(predicted) != len(truth):
        raise InvalidInputError(f"predicted and truth differ in length ({len(predicted)} vs {len(truth)})")
    tp = _pairs(Counter(zip(predicted, truth)))
    pp = _pairs(Counter(predicted))
    tt = _pairs(Counter(truth))
    precision = tp / pp if pp else 1.0
    recall = tp / tt if tt else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "true_pairs": tt, "predicted_pairs": pp}


def quality_report(corpus: Corpus, index: Any = None, *, check_retrieval: bool = True, **index_args: Any) -> Dict[str, Any]:
    """Run a :class:`StateIndex` over a corpus and score it against the labels.

    Returns pair precision, recall and F1; the false-merge rate (merges into a state
    founded by a screen of another label, over all non-exact merges); and, with
    ``check_retrieval``, the retrieval recall (how often the fused candidates hold
    the state that verification against every eligible observation chooses, over
    the screens where it chooses one) and the decision agreement with that
    exhaustive choice.
    """
    from spatialobs.screen.state_index import StateIndex

    ix = index if index is not None else StateIndex(**index_args)
    states: List[int] = []
    founder: Dict[int, int] = {}
    merges = false_merges = 0
    retrieval_total = retrieval_hits = agree = decisions = 0
    for screen, label in zip(corpus.screens, corpus.labels):
        f: Features = ix.featurize(screen)
        if check_retrieval:
            ex_state, _ = ix.exhaustive_best(f)
        m = ix.add_features(f)
        if check_retrieval and not m.exact:
            decisions += 1
            hybrid_state = -1 if m.new_state else m.state
            agree += hybrid_state == ex_state
            if ex_state >= 0:
                retrieval_total += 1
                retrieval_hits += hybrid_state == ex_state
        if m.new_state:
            founder[m.state] = label
        elif not m.exact:
            merges += 1
            false_merges += founder[m.state] != label
        states.append(m.state)
    out: Dict[str, Any] = dict(pair_metrics(states, corpus.labels))
    out.update(
        screens=len(corpus.screens),
        observations=len(ix),
        states=ix.num_states,
        true_states=len(set(corpus.labels)),
        merges=merges,
        false_merge_rate=false_merges / merges if merges else 0.0,
    )
    if check_retrieval:
        out["retrieval_recall"] = retrieval_hits / retrieval_total if retrieval_total else 1.0
        out["decision_agreement"] = agree / decisions if decisions else 1.0
    return out
