"""The observation right after an edit: edit + observe + to_json, one edit kind per benchmark.

Targets (issue 31): at 10^5 shapes, each edit kind (a card moved in view and one far from it, a
bound arrow's target moved, a text change, an add, a removal, a reparent, a reply of 20 mixed
ops) followed by ``observe`` + ``to_json`` within 2x the warm observe at 10^5 and under 10 ms;
at 10^6 under 30 ms. The page is ``diagram_workspace(n, seed=7)`` (frames of 10-30 overlapping
labelled cards, small groups, rotated translucent clusters, bound and touching arrows), the
viewport its camera. Each round times the edit, the derivation it triggers, the observation
and its JSON; the rounds alternate (there and back, add then remove) so the page stays the
same size. Every benchmark checks that its last observation is byte-identical to a fresh
observation of a copy of the canvas. The warm observe of the same page is in the same group.

``test_edit_observe_real`` runs the same loop on every shared real canvas (a shape moved by one
unit there and back, a shape added and removed), with the size gates as shipped beside the three gates
at 0 (``impl=carried``: every page state carried from the one observed last, every derivation
after an add, a removal or a reparent from the previous one, every alignment table updated line by
line, as before the gates), so
``benchmarks/report.py`` gives the gates' ratio per file in one run.

``test_edit_observe_table_twins`` times a move with the relation tables' compiled passes
(``pagetables.rows_at`` and ``recut_lines``) and with their numpy twins, in one run.

``test_reply_late_in_loop`` times a reply after 80 replies of the same plan (piles of cards at its
places), against the first reply on the same page.

``test_row_shift_copy_floor`` copies, once each, the page state's arrays whose rows an add or a
removal shifts while rows are numbered by paint position (its columns, masks and box lists): the
least memory carrying the state through such an edit moves, in the group of the edits and the
warm observe.
"""

from __future__ import annotations

import dataclasses
import importlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np
import pytest

from conftest import sizes
from spatialobs.canvas import Canvas, Executor, load, observe
from spatialobs.canvas import pagetables as PT
from spatialobs.canvas.scenarios import diagram_workspace

VIEW = (0.0, 0.0, 2800.0, 1800.0)
ROUNDS = 7


@lru_cache(maxsize=None)
def page(n: int) -> Canvas:
    c = diagram_workspace(n, seed=7)
    c.geometry()
    return c


def fresh(n: int) -> Canvas:
    """A derived and observed copy of the page (the state an agent loop is in between prompts)."""
    c = page(n).copy()
    c.geometry()
    observe(c, VIEW).to_json()
    return c


def far_card(c: Canvas) -> str:
    """A card in the frame farthest down the page."""
    last = max((nid for nid, nd in c.nodes.items() if nd.type == "frame"), key=lambda f: int(f[1:]))
    return next(k for k in c.children(last) if c.nodes[k].type == "geo")


def mixed_ops(k: int) -> list:
    """20 ops on the first frame: creations, moves, restyles, texts, an arrow, a deletion."""
    ops: list = []
    for j in range(20):
        r, card = j % 10, f"f0c{(j + k) % 10}"
        if r < 3:
            ops.append({"op": "create_shape", "id": f"new{j}", "parent": "f0", "x": 100 + 30 * j, "y": 900, "w": 80,
                        "h": 40, "text": f"Added {k}.{j}"})
        elif r < 5:
            ops.append({"op": "move_node", "id": card, "dx": 1 if k % 2 else -1, "dy": 0})
        elif r < 7:
            ops.append({"op": "update_styles", "id": card, "styles": {"color": "red" if k % 2 else "blue"}})
        elif r < 8:
            ops.append({"op": "set_text", "id": card, "text": f"Step {k}.{j}"})
        elif r < 9:
            ops.append({"op": "create_arrow", "from": f"new{j - 8}", "to": card})
        else:
            ops.append({"op": "delete_node", "id": f"new{j - 8}"})
    return ops


def _move(nid: str, dx: float) -> Callable[[Canvas, int], None]:
    def edit(c: Canvas, k: int) -> None:
        c.update(nid, x=c.nodes[nid].x + (dx if k % 2 else -dx))
    return edit


def _text(c: Canvas, k: int) -> None:
    c.update("f0c2", text=f"Step 2 of 0, take {k}")


def _reparent(c: Canvas, k: int) -> None:
    c.update("f0c5", parent="f1" if k % 2 == 0 else "f0")


def _add(c: Canvas, k: int) -> None:
    c.add({"id": "added", "type": "geo", "parent": "f0", "x": 600.0, "y": 500.0, "w": 160.0, "h": 80.0,
           "text": "Added"})


def _remove(c: Canvas, k: int) -> None:
    c.remove("added")


def _reply(c: Canvas, k: int) -> None:
    report = Executor(c).apply(mixed_ops(k))
    assert report.ok, report.errors[:3]


#: edit kind -> (edit, the undoing edit run untimed before each round, or None)
CASES: Dict[str, Any] = {
    "move-in-view": (_move("f0c3", 1.0), None),
    "move-far": (None, None),  # the card is looked up on the page
    "move-bound-target": (_move("f0c1", 5.0), None),
    "text": (_text, None),
    "add": (_add, _remove),
    "remove": (_remove, _add),
    "reparent": (_reparent, None),
    "reply-20-ops": (_reply, None),
}


def _run(c: Canvas, edit: Callable[[Canvas, int], None], k: int) -> str:
    edit(c, k)
    return observe(c, VIEW).to_json()


@pytest.mark.parametrize("kind", list(CASES))
@pytest.mark.parametrize("n", sizes(10_000, 100_000))
def test_edit_observe(benchmark, n, kind):
    benchmark.group = f"edit-observe n={n}"
    c = fresh(n)
    edit, undo = CASES[kind]
    if kind == "move-far":
        edit = _move(far_card(c), 1.0)
    if kind == "remove":
        _add(c, 0)
        observe(c, VIEW).to_json()
    step = iter(range(10**9))

    def setup():
        k = next(step)
        if undo is not None and k > 0:
            undo(c, k)
            observe(c, VIEW).to_json()
        return (c, edit, k), {}

    text = benchmark.pedantic(_run, setup=setup, rounds=ROUNDS, iterations=1)
    assert text == observe(c.copy(), VIEW).to_json()


@pytest.mark.parametrize("n", sizes(10_000, 100_000))
def test_warm_observe(benchmark, n):
    """The warm repeat on the unchanged page, the reference of the 2x target."""
    benchmark.group = f"edit-observe n={n}"
    c = fresh(n)
    text = benchmark(lambda: observe(c, VIEW).to_json())
    assert text == observe(c.copy(), VIEW).to_json()


@pytest.mark.parametrize("impl", ["compiled", "python"])
@pytest.mark.parametrize("kind", ["move-in-view", "move-bound-target"])
@pytest.mark.parametrize("n", sizes(10_000, 100_000))
def test_edit_observe_table_twins(benchmark, monkeypatch, n, kind, impl):
    """A move and its observation with the tables' compiled passes (``pagetables.rows_at``, and
    ``recut_lines``: an ``aligned`` kind cut again on its sorted line values) or their numpy twins."""
    benchmark.group = f"edit-observe-twins n={n}"
    monkeypatch.setattr(PT, "ROWS_KERNEL", impl == "compiled")
    monkeypatch.setattr(PT, "RECUT_KERNEL", impl == "compiled")
    c = fresh(n)
    edit = CASES[kind][0]
    for k in range(3):  # the sorted line values are built over the first moves in a row
        _run(c, edit, k)
    step = iter(range(3, 10**9))
    text = benchmark.pedantic(_run, setup=lambda: ((c, edit, next(step)), {}), rounds=ROUNDS, iterations=1)
    assert text == observe(c.copy(), VIEW).to_json()


#: Replies run before the timed ones of ``test_reply_late_in_loop``.
LATE = 80


@pytest.mark.parametrize("n", sizes(1_000, 10_000, 100_000))
def test_reply_late_in_loop(benchmark, n):
    """A reply of 20 ops and its observation after ``LATE`` replies of the same plan: the cards they
    created piled up at the plan's six places (hundreds of identical and overlapping boxes, a
    hundred and more bound arrows among them), what a long agent loop that repeats itself leaves.
    The first reply on the same page (``test_edit_observe[reply-20-ops]``) is the reference."""
    benchmark.group = f"edit-observe n={n}"
    c = fresh(n)
    for k in range(LATE):
        _reply(c, k)
        observe(c, VIEW).to_json()
    step = iter(range(LATE, 10**9))
    text = benchmark.pedantic(_run, setup=lambda: ((c, _reply, next(step)), {}), rounds=ROUNDS, iterations=1)
    assert text == observe(c.copy(), VIEW).to_json()


SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "canvases"
REAL = sorted(SHARED.glob("*"), key=lambda p: (p.stat().st_size, p.name)) if SHARED.is_dir() else []


def _real_edit(c: Canvas, kind: str) -> Callable[[Canvas, int], None]:
    """A move of the middle top-level shape of the current page (there and back), or an add of a
    shape on that page and its removal, alternated."""
    page = c.current_page
    tops = [k for k in c.children(page) if c.nodes[k].type != "arrow"]
    nid = tops[len(tops) // 2]
    if kind == "move":
        return _move(nid, 1.0)

    def add_or_remove(c: Canvas, k: int) -> None:
        if "bench:added" in c.nodes:
            c.remove("bench:added")
        else:
            c.add({"id": "bench:added", "type": "geo", "parent": page, "x": 10.0, "y": 10.0, "w": 50.0, "h": 30.0})
    return add_or_remove


@pytest.mark.skipif(not REAL, reason="../shared/data/canvases is absent")
@pytest.mark.parametrize("impl", ["spatialobs", "carried"])
@pytest.mark.parametrize("kind", ["move", "add-remove"])
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split("__")[1][:24])
def test_edit_observe_real(benchmark, monkeypatch, path, kind, impl):
    c = load(path.read_bytes())
    benchmark.group = f"edit-observe-real {kind} {len(c.nodes)} nodes {path.name.split('__')[1][:24]}"
    if impl == "carried":
        monkeypatch.setattr(importlib.import_module("spatialobs.canvas.document.derive"), "MIN_TREE_ROWS", 0)
        monkeypatch.setattr(importlib.import_module("spatialobs.canvas.observe"), "MIN_CARRIED_ROWS", 0)
        monkeypatch.setattr(importlib.import_module("spatialobs.canvas.observe"), "ALIGNED_AFRESH_PER_CHANGE", 0)
    observe(c).to_json()
    edit = _real_edit(c, kind)
    step = iter(range(10**9))

    def run() -> str:
        edit(c, next(step))
        return observe(c).to_json()
    text = benchmark(run)
    assert text == observe(c.copy()).to_json()


def _arrays(x: Any, out: Dict[int, np.ndarray], depth: int = 0) -> None:
    """The numpy arrays of 1,000 elements or more reachable from ``x`` (dataclasses, tuples, lists, dicts)."""
    if depth > 6:
        return
    if isinstance(x, np.ndarray):
        if x.size >= 1000:
            out[id(x)] = x
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            _arrays(getattr(x, f.name), out, depth + 1)
    elif isinstance(x, (tuple, list)):
        for y in x[:64]:
            _arrays(y, out, depth + 1)
    elif isinstance(x, dict):
        for y in list(x.values())[:64]:
            _arrays(y, out, depth + 1)


def renumbered_arrays(c: Canvas) -> List[np.ndarray]:
    """The arrays of the observed page version's state whose rows an add or a removal in paint order
    shifts, as the page state numbers them: those with one entry per page row or per solid row (its
    columns, masks and box lists; not the relation tables, whose entries are pairs)."""
    obs = importlib.import_module("spatialobs.canvas.observe")
    st = obs._CACHE.pages(c._geometry())[c._resolve_page(None)]
    found: Dict[int, np.ndarray] = {}
    _arrays(st, found)
    n, k = len(st.pg.ids), len(st.sub)
    return [a for a in found.values() if a.shape[0] in (n, n + 1, k, k + 1)]


@pytest.mark.parametrize("n", sizes(10_000, 100_000))
def test_row_shift_copy_floor(benchmark, n):
    """One copy of each array whose rows an add or a removal shifts (``renumbered_arrays``): what
    carrying a page state through such an edit moves at the least while its rows are numbered by
    paint position, beside the edits and the warm observe of the same group."""
    benchmark.group = f"edit-observe n={n}"
    c = fresh(n)
    _add(c, 0)
    observe(c, VIEW).to_json()
    arrays = renumbered_arrays(c)
    benchmark.extra_info["arrays"] = len(arrays)
    benchmark.extra_info["megabytes"] = round(sum(a.nbytes for a in arrays) / 1e6, 2)

    def copy_each() -> int:
        return sum(len(a.copy()) for a in arrays)
    assert benchmark(copy_each) == sum(len(a) for a in arrays) and arrays
