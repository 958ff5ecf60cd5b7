"""Screen identity (DESIGN §7): screens as location-aware atoms and a text vector,
near-duplicates merged into states by hybrid retrieval and exact verification.

>>> from spatialobs.screen import load_screen, StateIndex
>>> ix = StateIndex()
>>> m = ix.add(load_screen({"width": 400, "height": 800, "elements": [
...     {"bounds": [0, 0, 400, 60], "role": "toolbar", "text": "Inbox"}]}))
>>> m.new_state, ix.num_states
(True, 1)
"""

from __future__ import annotations

from spatialobs.screen._persist import CorruptIndexError, IndexFileError
from spatialobs.screen.embed import Embedder, HashedNgramEmbedder, SentenceTransformerEmbedder
from spatialobs.screen.features import (
    MAX_TEXT,
    Features,
    as_threshold,
    atom_hash,
    featurize,
    jaccard_at_least,
    jaccard_ratio,
    jaccard_score,
    mask_volatile,
    normalize_text,
)
from spatialobs.screen.importers import detect_format, from_droidbot, from_generic, from_rico, load_screen
from spatialobs.screen.limits import DEFAULT_LIMITS, ScreenLimits
from spatialobs.screen.model import Element, Screen, ScreenMeta
from spatialobs.screen.state_index import Hit, Match, StateIndex, rrf_fuse

__all__ = [
    "Element",
    "Screen",
    "ScreenMeta",
    "load_screen",
    "detect_format",
    "from_rico",
    "from_droidbot",
    "from_generic",
    "ScreenLimits",
    "DEFAULT_LIMITS",
    "Features",
    "featurize",
    "normalize_text",
    "mask_volatile",
    "atom_hash",
    "MAX_TEXT",
    "jaccard_score",
    "jaccard_ratio",
    "jaccard_at_least",
    "as_threshold",
    "Embedder",
    "HashedNgramEmbedder",
    "SentenceTransformerEmbedder",
    "StateIndex",
    "Match",
    "Hit",
    "rrf_fuse",
    "CorruptIndexError",
    "IndexFileError",
]

# Exploration (DESIGN §8): state graph, selectors, the exploration loop, simulated apps.
from spatialobs.screen import sim  # noqa: E402
from spatialobs.screen.actions import Action, candidate_actions, signature, signatures  # noqa: E402
from spatialobs.screen.explore import Episode, Step, explore, explore_workers  # noqa: E402
from spatialobs.screen.graph import ScreenGraph, Transition, dispersion, normalized_entropy  # noqa: E402
from spatialobs.screen.prior import LearnedPrior, train_prior  # noqa: E402
from spatialobs.screen.select import PUCT, Greedy, Random, heuristic_prior, uniform_prior  # noqa: E402
from spatialobs.screen.store import GraphStore, MemoryStore, SQLiteStore  # noqa: E402

__all__ += [
    "Action",
    "candidate_actions",
    "signature",
    "signatures",
    "ScreenGraph",
    "Transition",
    "dispersion",
    "normalized_entropy",
    "PUCT",
    "Greedy",
    "Random",
    "LearnedPrior",
    "train_prior",
    "uniform_prior",
    "heuristic_prior",
    "explore",
    "explore_workers",
    "Episode",
    "Step",
    "GraphStore",
    "MemoryStore",
    "SQLiteStore",
    "sim",
]
