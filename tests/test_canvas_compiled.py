"""The compiled pass over node records of a first derivation (Cython) against its pure-Python twin."""

from __future__ import annotations

import importlib
from types import SimpleNamespace
from typing import Any, Callable, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs.canvas.scenarios.handoff import synthetic_workspace

D = importlib.import_module("spatialobs.canvas.document.derive")


def _compiled() -> Any:
    return pytest.importorskip("spatialobs.canvas.document._cextract")


def _outcome(f: Callable[..., Any], *args: Any) -> Tuple[str, Any]:
    try:
        return ("ok", f(*args))
    except Exception as e:  # both passes must fail alike
        return ("err", type(e))


def _same_raw(a: Any, b: Any) -> bool:
    return (a.ids == b.ids and a.row == b.row and a.parents == b.parents and a.index == b.index
            and a.types.dtype == b.types.dtype and np.array_equal(a.types, b.types)
            and a.parent.tobytes() == b.parent.tobytes() and a.num.dtype == b.num.dtype and a.num.tobytes() == b.num.tobytes())


def test_compiled_pass_is_in_use():
    assert D._node_columns is _compiled().node_columns


_plain = st.one_of(st.floats(), st.integers(-2**64, 2**64), st.booleans(), st.sampled_from([-0.0, 5e-324, 2**1024 - 2**971 - 1]))
_other = st.sampled_from([10**400, 2**1024 - 1, np.float64(1.5), np.bool_(True), np.int64(3), "2.5", None, "x"])
_numbers = st.one_of(_plain, _plain, _plain, _other)
_OTHER_EVERY = 16  # about one node in this many reads numbers that are not all plain


@st.composite
def _nodes(draw: Any) -> list:
    out = []
    for i in range(draw(st.integers(0, 12))):
        numbers = _numbers if draw(st.integers(0, _OTHER_EVERY - 1)) == 0 else _plain
        vals = [draw(numbers) for _ in range(8)]
        out.append(SimpleNamespace(id=f"n{i}", parent=draw(st.sampled_from(["page:p", "n0", "n3", "gone"])),
                                   type=draw(st.sampled_from(["geo", "frame", "a-longer-type"])),
                                   index=draw(st.sampled_from(["a1", "a2", "Zz"])),
                                   **dict(zip(("x", "y", "w", "h", "rotation", "opacity", "hidden", "locked"), vals))))
    return out


def _plain_value(v: Any) -> bool:
    return type(v) in (float, bool) or type(v) is int and _outcome(float, v)[0] == "ok"


@settings(max_examples=300, deadline=None)
@given(_nodes())
def test_node_columns_match_python_twin(nodes):
    ce = _compiled()
    got = ce.node_columns(nodes)
    want = _outcome(D._node_columns_py, nodes)
    if got is not None:  # the plain case: the twin reads the same
        assert want[0] == "ok"
        assert got[:4] == want[1][:4] and got[4].dtype == np.float64 and got[4].tobytes() == want[1][4].tobytes()
    else:  # something not plain: extract takes the twin's pass, with its result or error
        assert not all(_plain_value(getattr(nd, k)) for nd in nodes
                       for k in ("x", "y", "w", "h", "rotation", "opacity", "hidden", "locked"))
    monkey = D._node_columns
    try:
        D._node_columns = D._node_columns_py
        slow = _outcome(D.extract, nodes)
    finally:
        D._node_columns = monkey
    fast = _outcome(D.extract, nodes)
    assert fast[0] == slow[0] and (fast[0] == "err" and fast[1] == slow[1] or _same_raw(fast[1], slow[1]))


def test_extract_of_a_synthetic_page_is_the_same(monkeypatch):
    _compiled()
    nodes = list(synthetic_workspace(3000, seed=3)._nodes.values())
    fast = D.extract(nodes)
    monkeypatch.setattr(D, "_node_columns", D._node_columns_py)
    assert _same_raw(fast, D.extract(nodes)) and len(fast.ids) == 3000


def test_node_columns_bad_input():
    ce = _compiled()
    with pytest.raises(TypeError, match="nodes"):
        ce.node_columns(())
    nodes = [SimpleNamespace(id="a", parent="p", type="geo", index="a1", x=0.0)]
    assert _outcome(ce.node_columns, nodes) == _outcome(D._node_columns_py, nodes) == ("err", AttributeError)
