"""Screen importers on hostile input: typed one-line errors, bounded messages, bounded resources.

Each case is a finding of the fuzzing campaign (mutated Rico and DroidBot files):
before the fix it escaped as OverflowError, RecursionError or TypeError, echoed a
megabyte, or walked a cyclic tree forever.
"""

from __future__ import annotations

import copy
import json

import pytest

from spatialobs import InvalidInputError, SpatialObsError
from spatialobs.screen import Element, Screen, ScreenLimits, ScreenMeta, StateIndex, featurize, load_screen
from spatialobs.screen import features as features_module
from spatialobs.screen.limits import ECHO_CHARS, echo
from tests.conftest import shared_files

RICO = [p for p in shared_files("screens", "*.json") if "rico" in p.name]
DROIDBOT = [p for p in shared_files("screens", "*.json") if "Droidbot" in p.name]

#: An error message is one line of at most this many characters.
MAX_MESSAGE = 400


def deep(levels):
    v: list = []
    for _ in range(levels):
        v = [v]
    return v


def rico():
    return {"activity_name": "app/.Main", "activity": {"root": {
        "bounds": [0, 0, 100, 200], "visible-to-user": True, "class": "Frame", "children": [
            {"bounds": [0, 0, 50, 50], "visible-to-user": True, "class": "Button", "text": "OK",
             "ancestors": ["android.view.View"]}]}}}


def droidbot():
    return {"width": 100, "height": 200, "foreground_activity": "app/.Main", "views": [
        {"bounds": [[0, 0], [50, 50]], "class": "Button", "text": "OK", "visible": True}]}


def generic():
    return {"width": 100, "height": 200, "elements": [{"bounds": [0, 0, 50, 50], "role": "button", "id": "ok"}]}


def rejected(doc, match=None, **kwargs):
    with pytest.raises(InvalidInputError, match=match) as info:
        load_screen(doc, **kwargs)
    msg = str(info.value)
    assert "\n" not in msg and len(msg) <= MAX_MESSAGE, msg[:200]
    return msg


def with_(doc, path, value):
    doc = copy.deepcopy(doc)
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return doc


ROOT = ("activity", "root")
CHILD = ROOT + ("children", 0)


@pytest.mark.parametrize("doc, path", [
    (rico(), CHILD + ("bounds", 2)),
    (rico(), ROOT + ("bounds", 3)),
    (droidbot(), ("views", 0, "bounds", 1, 0)),
    (droidbot(), ("width",)),
    (generic(), ("elements", 0, "bounds", 0)),
    (generic(), ("height",)),
])
def test_a_huge_integer_coordinate_is_a_typed_error(doc, path):
    # was OverflowError: int too large to convert to float
    rejected(with_(doc, path, 10**400))


@pytest.mark.parametrize("doc, path", [
    (rico(), CHILD + ("class",)),
    (rico(), CHILD + ("bounds",)),
    (droidbot(), ("views", 0, "class")),
    (droidbot(), ("views", 0, "bounds")),
    (generic(), ("elements", 0, "role")),
    (generic(), ("elements", 0, "id")),
    (generic(), ("meta",)),
])
def test_a_deeply_nested_field_is_a_typed_error(doc, path):
    # was RecursionError while quoting the value in the message
    rejected(with_(doc, path, deep(100_000)))


@pytest.mark.parametrize("doc, path, value", [
    (rico(), CHILD + ("ancestors",), 1.5),  # was TypeError: 'float' object is not iterable
    (generic(), ("elements", 0, "id"), deep(3)),
    (generic(), ("elements", 0, "id"), 10**5000),  # was ValueError from str() of a huge int
    (generic(), ("meta",), {"app": 10**5000}),
    (generic(), ("meta",), {"app": ["x"]}),
    (generic(), ("meta",), {1: "x", "y": 2}),  # unknown keys of mixed types
    (droidbot(), ("views", 0, "bounds"), True),
    (rico(), CHILD + ("children",), {"a": 1}),
], ids=lambda v: None if isinstance(v, (dict, tuple)) else type(v).__name__)
def test_wrong_types_are_typed_errors(doc, path, value):
    rejected(with_(doc, path, value))


def test_deep_json_file_is_invalid_json(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"views": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "nested too deeply" in rejected(path) or "not valid JSON" in rejected(path)


@pytest.mark.parametrize("value", [["y" * 1_000_000], {"y" * 1_000_000: 1}, [0, 0, 1, "y" * 1_000_000]])
@pytest.mark.parametrize("where", ["class", "bounds"])
def test_a_megabyte_value_is_not_echoed(where, value):
    msg = rejected(with_(rico(), CHILD + (where,), value))
    assert msg.count("y") <= ECHO_CHARS


def test_long_strings_are_cut_to_max_string():
    doc = with_(rico(), CHILD + ("text",), "word " * 10_000)
    s = load_screen(doc, limits=ScreenLimits(max_string=100))
    assert len(s.elements[1].text) == 100
    assert len(load_screen(doc).elements[1].text) == 16_384


def test_node_count_is_bounded_and_a_cyclic_tree_terminates():
    doc = rico()
    root = doc["activity"]["root"]
    root["children"].append(root)  # a cycle, only possible in memory
    assert "(ScreenLimits.max_" in rejected(doc)  # depth or node count, whichever comes first
    many = {"width": 10, "height": 10, "elements": [{"bounds": [0, 0, 1, 1], "role": "b"}] * 11}
    assert "more than 10 elements" in rejected(many, limits=ScreenLimits(max_nodes=10))
    views = dict(droidbot(), views=droidbot()["views"] * 11)
    assert "more than 10 views" in rejected(views, limits=ScreenLimits(max_nodes=10))


def test_depth_is_bounded():
    node = {"bounds": [0, 0, 10, 10], "visible-to-user": True, "class": "leaf"}
    for _ in range(50):
        node = {"bounds": [0, 0, 10, 10], "visible-to-user": False, "class": "v", "children": [node]}
    msg = rejected({"activity": {"root": node}}, limits=ScreenLimits(max_depth=20))
    assert "deeper than 20 levels" in msg and "(+" in msg  # the path is abbreviated
    assert len(load_screen({"activity": {"root": node}}).elements) == 1


def test_coordinate_magnitude_is_bounded():
    rejected(with_(generic(), ("elements", 0, "bounds", 2), 1e300), match="max_coordinate")
    rejected(with_(generic(), ("width",), 1e300), match="max_coordinate")
    ok = load_screen(with_(generic(), ("elements", 0, "bounds", 2), 1e6))
    assert ok.elements[0].bounds[2] == 1e6


def test_file_size_is_bounded_and_unreadable_files_are_typed(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(generic()))
    assert "ScreenLimits.max_bytes" in rejected(path, limits=ScreenLimits(max_bytes=10))
    assert "cannot read screen file" in rejected(tmp_path / "missing.json")
    assert "cannot read screen file" in rejected(tmp_path)  # a directory
    (tmp_path / "bad.json").write_bytes(b"\xff\xfe{")
    assert "not valid JSON" in rejected(tmp_path / "bad.json")


def test_limits_are_validated():
    for bad in (0, -1, float("nan"), float("inf"), "3", True):
        with pytest.raises(InvalidInputError):
            ScreenLimits(max_nodes=bad)
    with pytest.raises(InvalidInputError, match="limits must be a ScreenLimits"):
        load_screen(generic(), limits={"max_nodes": 3})


def test_records_reject_overflow_and_quote_briefly():
    with pytest.raises(InvalidInputError):
        Element((0, 0, 10**400, 1), "b")
    with pytest.raises(InvalidInputError):
        Screen([], 10**400, 10)
    with pytest.raises(InvalidInputError) as info:
        Element(tuple(range(10**5)), "b")
    assert len(str(info.value)) <= MAX_MESSAGE
    with pytest.raises(InvalidInputError):
        ScreenMeta(app=["x"])
    assert ScreenMeta(app=3).app == "3"


def test_grid_and_index_parameters_beyond_the_kernels_are_typed():
    s = Screen([Element((0, 0, 1, 1), "b")], 10, 10)
    for grid in (2**40, 0, 70_000):
        with pytest.raises(InvalidInputError):
            featurize(s, grid=grid)
    for kwargs in ({"grid": 2**40}, {"top_k": 2**64}, {"ef_search": 2**40}, {"hnsw_m": 2**40}):
        with pytest.raises(InvalidInputError):
            StateIndex(**kwargs)


def test_long_texts_bypass_the_normalization_cache():
    features_module._normalized_cached.cache_clear()
    s = Screen([Element((0, 0, 1, 1), "b", "x" * 5000)], 10, 10)
    compiled = features_module._element_columns is not features_module._element_columns_py
    if compiled:
        from spatialobs.screen import _cfeatures

        _cfeatures.cache_clear()
    f = featurize(s)
    assert f.text == "x" * 120
    if compiled:
        assert _cfeatures.cache_size() == (1, 0)  # the role only
    else:
        assert features_module._normalized_cached.cache_info().currsize == 1
    assert features_module._element_columns_py(list(s.elements), False)[2] == ["x" * 120]
    assert features_module._normalized_cached.cache_info().currsize == 1  # the twin's cache: the role only


def test_the_compiled_normalization_cache_is_bounded():
    _cfeatures = pytest.importorskip("spatialobs.screen._cfeatures")
    _cfeatures.cache_clear()
    els = [Element((0, 0, 1, 1), "b", f"t{i}") for i in range((1 << 16) + 10)]
    _, _, texts = _cfeatures.element_columns(els, True)
    assert texts[-1] == "t#" and texts[5] == "t#"
    plain, masked = _cfeatures.cache_size()
    assert plain == 1 and 1 <= masked <= 1 << 16


def test_echo_is_bounded_and_total():
    class Nasty:
        def __repr__(self):
            raise RuntimeError("no")

    assert echo(Nasty()).startswith("<Nasty")
    assert len(echo(deep(10**5))) <= ECHO_CHARS
    assert "\n" not in echo("a\nb")


@pytest.mark.parametrize("path", RICO[:2] + DROIDBOT[:2], ids=lambda p: p.name.split("__")[-1])
def test_real_files_still_load_identically_with_tight_but_sufficient_limits(path):
    tight = ScreenLimits(max_depth=64, max_nodes=5_000, max_string=1_000, max_bytes=1_000_000)
    a, b = load_screen(path), load_screen(path, limits=tight)
    assert a.to_dict() == b.to_dict()


def test_errors_are_spatialobs_errors():
    assert issubclass(InvalidInputError, SpatialObsError)
