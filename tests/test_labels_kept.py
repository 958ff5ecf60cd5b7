"""Visibility labels kept per page version and carried to the next one.

``observe._view`` labels every row of the page (visible, partial, offscreen near or far) by one
linear pass over the page's boxes. A page version keeps the labels of the last viewport asked
(``observe._labels_kept``); the next version, reached by a move (``_advance``) or through a row
map (``_reshape``: adds, removals, reparents, replies), carries them and labels again only its
rows whose box may have changed (``observe._carry_labels``). The oracle: after every edit of
hypothesis sequences the kept labels are the kernel's over every box of the version, and the
observation is a fresh canvas's, byte for byte; the carry is the path taken.
"""

from __future__ import annotations

import importlib
from typing import Any, List

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spatialobs import geometry as G
from spatialobs.canvas import Canvas, Executor, Node, observe
from spatialobs.canvas.scenarios.handoff import diagram_workspace

from test_edits_incremental import EDIT, _reply_ops, _step

OBS = importlib.import_module("spatialobs.canvas.observe")
VIEW = (0.0, 0.0, 2800.0, 1800.0)
P = "page:page"


def assert_labels_fresh(c: Canvas, view: Any = VIEW) -> None:
    """The labels the current page version keeps are the kernel's over all its boxes (``view``: x, y, w, h)."""
    st = OBS._page_state(c, c._geometry().page_ids[0])
    assert st.labels is not None
    vbox, near, lab = st.labels
    x, y, w, h = (float(v) for v in view)
    assert vbox == (x, y, x + w, y + h)
    want = G.visibility_labels(st.pg.boxes, vbox, near)
    assert lab.dtype == want.dtype and np.array_equal(lab, want)


def carries(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """How many rows each carry labelled again (spied on ``_carry_labels``, when it had labels to carry)."""
    seen: List[int] = []
    real = OBS._carry_labels

    def spy(st: Any, old: Any, again: np.ndarray, *rest: Any) -> None:
        if old.labels is not None:
            seen.append(len(again))
        real(st, old, again, *rest)
    monkeypatch.setattr(OBS, "_carry_labels", spy)
    return seen


@pytest.mark.timeout(400)
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3), st.lists(EDIT, min_size=1, max_size=8))
def test_labels_carried_through_any_edits_are_the_kernels(seed, steps):
    c = diagram_workspace(150, seed=seed)
    observe(c, VIEW).to_json()
    counter = [0]
    for o in steps:
        try:
            _step(c, o, counter)
        except Exception as e:  # a write the model refuses leaves the canvas as it was
            if type(e).__name__ not in ("InvalidInputError", "OutOfRangeError"):
                raise
        got = observe(c, VIEW).to_json()
        assert_labels_fresh(c)
        assert got == observe(c.copy(), VIEW).to_json()


def test_each_edit_kind_carries_the_labels_and_labels_only_the_rows_it_reached(monkeypatch):
    c = diagram_workspace(600, seed=3)
    observe(c, VIEW).to_json()
    seen = carries(monkeypatch)
    n = len(c.nodes)
    cards = [i for i, nd in c.nodes.items() if nd.type == "geo" and nd.parent.startswith("f")]
    frames = [i for i, nd in c.nodes.items() if nd.type == "frame"]
    edits = [
        lambda: c.update(cards[0], x=c.nodes[cards[0]].x + 1.0),  # a move in view
        lambda: c.update(cards[-1], x=c.nodes[cards[-1]].x - 3.0),  # a move far from it
        lambda: c.update(cards[1], text="Changed"),  # a text
        lambda: c.add({"id": "added", "type": "geo", "parent": frames[0], "x": 60.0, "y": 40.0, "w": 90.0,
                       "h": 50.0, "text": "Added"}),  # an add
        lambda: c.remove("added"),  # a removal
        lambda: c.update(cards[2], parent=frames[1]),  # a reparent
        lambda: Executor(c).apply(_reply_ops(c, 1, [0])),  # a reply
    ]
    for k, edit in enumerate(edits):
        edit()
        assert observe(c, VIEW).to_json() == observe(c.copy(), VIEW).to_json()
        assert_labels_fresh(c)
        assert len(seen) == k + 1, k  # carried, not labelled afresh
        assert seen[-1] < n // 4, (k, seen[-1])  # the rows it reached, not the page


def test_another_viewport_labels_afresh_and_keeps_the_last_one_asked(monkeypatch):
    c = diagram_workspace(300, seed=1)
    other = (500.0, 200.0, 1500.0, 900.0)
    observe(c, VIEW).to_json()
    observe(c, other).to_json()
    assert_labels_fresh(c, other)
    seen = carries(monkeypatch)
    card = next(i for i, nd in c.nodes.items() if nd.type == "geo")
    c.update(card, y=c.nodes[card].y + 2.0)
    assert observe(c, VIEW).to_json() == observe(c.copy(), VIEW).to_json()  # carried for `other`, asked for VIEW
    assert len(seen) == 1
    assert_labels_fresh(c, VIEW)


def test_the_kept_labels_are_not_the_views():
    """The view writes occlusion into its labels: a copy, so the kept labels stay the kernel's."""
    c = Canvas()
    c.add(Node("low", "geo", P, None, 100, 100, 50, 40, style={"fill": "solid"}, props={"geo": "rectangle"}))
    c.add(Node("top", "geo", P, None, 80, 80, 120, 90, style={"fill": "solid"}, props={"geo": "rectangle"}))
    first = observe(c, VIEW).to_dict()
    assert [o["visibility"] for o in first["objects"] if o["id"] == "low"] == ["occluded"]
    assert_labels_fresh(c)
    assert observe(c, VIEW).to_dict() == first
