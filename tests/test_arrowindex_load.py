"""The arrows tldraw moves when it opens a file: ``load_index_moves`` against its oracle."""

from __future__ import annotations

from types import SimpleNamespace as N
from typing import Any, Dict, List

from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas.document.arrowindex import load_index_moves
from spatialobs.canvas.document.fractional import key_sequence
from tests.reference.arrowindex_oracle import load_index_moves_oracle

KEYS = key_sequence(40)


@st.composite
def pages(draw: Any) -> Any:
    """A page ``p`` with a frame ``f``: boxes, frames and arrows on either, indices shuffled
    (some shared, as a careless file has them), bindings to shapes anywhere, some dangling."""
    n = draw(st.integers(1, 24))
    kinds = draw(st.lists(st.sampled_from(["geo", "arrow", "arrow", "frame"]), min_size=n, max_size=n))
    parents = draw(st.lists(st.sampled_from(["p", "p", "f"]), min_size=n, max_size=n))
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=n + 1, max_size=n + 1))
    nodes: Dict[str, Any] = {"f": N(id="f", type="frame", parent="p", index=keys[n])}
    children: Dict[str, List[str]] = {"p": ["f"], "f": []}
    for i in range(n):
        nid = f"s{i}"
        nodes[nid] = N(id=nid, type=kinds[i], parent=parents[i], index=keys[i])
        children[parents[i]].append(nid)
    arrows = [k for k, v in nodes.items() if v.type == "arrow"]
    ids = list(nodes) + ["gone"]
    bindings = []
    if arrows:
        for _ in range(draw(st.integers(0, 2 * len(arrows)))):
            bindings.append(N(from_id=draw(st.sampled_from(arrows)), to_id=draw(st.sampled_from(ids)),
                              terminal=draw(st.sampled_from(["start", "end"]))))
    return nodes, bindings, children


@settings(max_examples=150, deadline=None)
@given(pages())
def test_load_index_moves_is_the_rule_arrow_by_arrow(page: Any) -> None:
    nodes, bindings, children = page
    assert load_index_moves(nodes, bindings, children) == load_index_moves_oracle(nodes, bindings, children)


def test_many_arrows_above_their_targets_on_one_page() -> None:
    # 300 boxes and 300 arrows on the page, each arrow bound below the box it points at: every
    # arrow moves, each past the arrows already moved above the same box
    keys = key_sequence(600)
    nodes = {}
    for i in range(300):
        nodes[f"a{i}"] = N(id=f"a{i}", type="arrow", parent="p", index=keys[i])
        nodes[f"b{i}"] = N(id=f"b{i}", type="geo", parent="p", index=keys[300 + i])
    bindings = [N(from_id=f"a{i}", to_id=f"b{(i * 7) % 300 if i % 3 else 0}", terminal="end") for i in range(300)]
    children = {"p": list(nodes)}
    moves = load_index_moves(nodes, bindings, children)
    assert len(moves) == 300
    assert moves == load_index_moves_oracle(nodes, bindings, children)
