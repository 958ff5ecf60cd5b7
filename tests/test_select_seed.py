"""Named selectors draw from one stream per (environment seed, episode)."""

from __future__ import annotations

import numpy as np

from spatialobs.screen import explore, sim
from spatialobs.screen.select import PUCT, Random, selector_seed


def _auc(seed, selector, episode=0):
    return explore(sim.make_app("notepad", seed), 50, selector, "heuristic", episode=episode).metrics["state_auc"]


def test_seeds_of_an_app_whose_screens_ignore_the_seed_are_new_draws():
    # Notepad from its start 0 shows the same screens for every simulator seed: before the environment's seed
    # reached the selector, ten seeds were one episode repeated ten times (PUCT 561 against Random 569 each time)
    for name in ("puct", "random"):
        aucs = [_auc(s, name) for s in range(10)]
        assert len(set(aucs)) >= 5, (name, aucs)


def test_puct_is_above_random_over_draws_on_notepad():
    puct = np.array([_auc(s, "puct") for s in range(20)])
    rand = np.array([_auc(s, "random") for s in range(20)])
    assert puct.mean() > rand.mean() + 80, (puct.mean(), rand.mean())
    assert (puct > rand).sum() >= 14


def test_seed_zero_keeps_the_episode_number_as_the_stream():
    assert _auc(0, "random", episode=3) == _auc(0, Random(3), episode=3)
    assert _auc(0, "puct", episode=3) == _auc(0, PUCT(seed=3), episode=3)
    assert _auc(2, "random", episode=3) == _auc(2, Random(selector_seed(2, 3)), episode=3)


def test_selector_seed_of_an_environment_without_an_integer_seed_is_the_episode():
    assert [selector_seed(s, 7) for s in (None, "x", 1.5, True, 0)] == [7, 7, 7, 7, 7]
    assert selector_seed(1, 7) == 100_010
