"""From exploration traces to models: training data, a screen-conditioned policy and its metrics.

This package sits above the drivers and the graph: it reads what explorations
left in graph stores and never is imported by them.

* :mod:`~spatialobs.screen.training.data`: three-step windows from graph stores,
  task descriptions from the target's semantics (rule-based classes and
  templates), counterfactual pairs, a task-template-disjoint split, Parquet export;
* :mod:`~spatialobs.screen.training.policy`: the policy (a small numpy network
  over hashed task, screen and history features predicting the next action's
  slots), its training, saving without pickle and loading;
* :mod:`~spatialobs.screen.training.metrics`: Table 8's metrics and the report.

Examples
--------
>>> from spatialobs.screen import ScreenGraph, explore, sim
>>> from spatialobs.screen.training.data import build_dataset
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "notepad.sqlite")
>>> app = sim.make_app("notepad")
>>> with ScreenGraph(path, app="notepad", evidence=True) as g:
...     eps = [explore(app, steps=40, start=s, graph=g, episode=k, selector="random")
...            for k, s in enumerate(app.starts(3))]
>>> ds = build_dataset([path])
>>> ds.stats["windows"] == len(ds.windows) > 0
True
"""
