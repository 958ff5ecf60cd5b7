"""Fuzzing harness for the screen side: screen importers, features, the state index and its files.

Inputs are mutated structurally from every real screen file of the shared data
folder and from index files saved from them (see :mod:`tests.fuzz.mutate` and
:mod:`tests.fuzz.indexfile`). Each input runs through the public entry points
(:mod:`tests.fuzz.targets`); the only failures looked for are an exception that is
not a ``SpatialObsError`` (an escape), a crash of the process, and a hang (an input
taking longer than its time bound). Inputs are a pure function of (seed, number),
so any finding can be regenerated, minimized and kept under ``tests/data/fuzz``.

The normal test suite runs a fixed small budget (``tests/test_fuzz_screens.py``);
deep runs::

    python -m tests.fuzz.screens --iterations 1000000 --seed 1 --jobs 2
"""
