"""Importers on every real screen file, on the generic form, and on bad input."""

from __future__ import annotations

import json

import pytest

from spatialobs import InvalidInputError, SpatialObsError
from spatialobs.screen import Element, Screen, ScreenMeta, detect_format, featurize, load_screen
from tests.conftest import shared_files

SCREENS = shared_files("screens", "*.json")
RICO = [p for p in SCREENS if "rico" in p.name]
DROIDBOT = [p for p in SCREENS if "Droidbot" in p.name]


def _raw(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _rico_visible(node):
    if node is None:
        return []
    out = [node] if node.get("visible-to-user") else []
    for c in node.get("children") or []:
        out += _rico_visible(c)
    return out


def test_real_files_are_present(shared_data):
    assert len(RICO) == 8 and len(DROIDBOT) == 5


@pytest.mark.parametrize("path", SCREENS, ids=lambda p: p.name.split("__")[-1])
def test_every_real_file_loads(path):
    raw = _raw(path)
    s = load_screen(path)
    assert s.source == path.name
    if path in RICO:
        assert detect_format(raw) == "rico"
        visible = _rico_visible(raw["activity"]["root"])
        assert [e.role for e in s.elements] == [n["class"] for n in visible]
        assert [list(e.bounds) for e in s.elements] == [[float(v) for v in n["bounds"]] for n in visible]
        assert (s.width, s.height) == tuple(float(v) for v in raw["activity"]["root"]["bounds"][2:])
        assert s.meta.app == raw["activity_name"].split("/")[0]
    else:
        assert detect_format(raw) == "droidbot"
        visible = [v for v in raw["views"] if v["visible"]]
        assert [e.role for e in s.elements] == [v["class"] for v in visible]
        assert [e.clickable for e in s.elements] == [v["clickable"] for v in visible]
        assert [e.id for e in s.elements] == [v["resource_id"] for v in visible]
        assert (s.width, s.height) == (float(raw["width"]), float(raw["height"]))
        assert s.meta.app == raw["foreground_activity"].split("/")[0]
    f = featurize(s)
    assert 0 < len(f.control_atoms) <= len(s.elements)
    assert len(f.text_atoms) <= sum(1 for e in s.elements if e.text)


# Facts read from the files (element counts are visible nodes/views).
FACTS = {
    "state_2021-11-23_094519.json": (159, 42, 1080, 2280, "com.tencent.qqmusic", "推荐"),
    "state_2021-11-23_105012.json": (37, 16, 1080, 2280, "com.tencent.qqmusic", "超嗨DJ"),
    "33609.json": (59, 17, 1440, 2560, "com.done.faasos", "YOUR LOCALITY"),
    "33610.json": (26, 7, 1440, 2560, "com.done.faasos", "YOUR LOCALITY"),
    "33628.json": (121, 62, 1440, 2392, "com.infigate.accontrol", "Air conditioners"),
    "33671.json": (26, 10, 1440, 2560, "com.neces.lametro",
                   "45 Lincoln Heights - Dwntwn LA- Rosewoo - North to Lincoln Heights - Broadway / Avenue 18"),
}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_facts_from_real_files(name, shared_data):
    (path,) = [p for p in SCREENS if p.name.endswith("__" + name)]
    n, with_text, w, h, app, first_text = FACTS[name]
    s = load_screen(path)
    texts = [e.text for e in s.elements if e.text]
    assert len(s.elements) == n and len(texts) == with_text
    assert (s.width, s.height) == (w, h) and s.meta.app == app
    assert texts[0] == first_text


def test_rico_details(shared_data):
    (path,) = [p for p in RICO if p.name.endswith("33609.json")]
    s = load_screen(path)
    # The email field is an EditText subclass; the notify button is clickable.
    assert sum(e.editable for e in s.elements) == 1
    notify = [e for e in s.elements if e.text == "NOTIFY ME"]
    assert len(notify) == 1 and notify[0].clickable
    # 33610 has the keyboard up over the same screen: fewer visible nodes.
    (path2,) = [p for p in RICO if p.name.endswith("33610.json")]
    assert _raw(path2)["is_keyboard_deployed"] is False
    assert len(load_screen(path2).elements) < len(s.elements)


def test_generic_round_trip_and_bare_list():
    s = Screen(
        [Element((0, 0, 100, 40), "Button", "Sign in", clickable=True, id="b1"),
         Element((0, 50, 100, 90), "Edit", None, editable=True)],
        400, 800, ScreenMeta(display_mode="dark", text_size="l", app="mail"),
    )
    back = load_screen(s.to_dict())
    assert back.elements == s.elements and back.meta == s.meta and (back.width, back.height) == (400, 800)
    bare = load_screen([{"bounds": [0, 0, 30, 20], "role": "a"}, {"bounds": [10, 10, 50, 70], "role": "b"}])
    assert (bare.width, bare.height) == (50, 70)
    over = load_screen(s.to_dict(), meta={"app": "other"})
    assert over.meta == ScreenMeta("dark", "l", "other")


def test_load_from_path(tmp_path):
    p = tmp_path / "screen.json"
    p.write_text(json.dumps({"width": 10, "height": 10, "elements": [{"bounds": [0, 0, 1, 1], "role": "x"}]}))
    s = load_screen(p)
    assert s.source == "screen.json" and len(s.elements) == 1
    p.write_text("{not json")
    with pytest.raises(InvalidInputError, match="screen.json: not valid JSON"):
        load_screen(p)
    p.write_text(json.dumps({"width": 10, "height": 10, "elements": [{"bounds": [0, 0, 1], "role": "x"}]}))
    with pytest.raises(InvalidInputError, match=r"screen.json: element 0: bounds must be \[x0, y0, x1, y1\]"):
        load_screen(p)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"foo": 1}, "keys are \\['foo'\\]"),
        (42, "must be an object or a list"),
        ({"width": 10, "height": 10, "elements": [{"bounds": [0, 0, 1, 1]}]}, "element 0: role must be a string"),
        ({"width": 10, "height": 10, "elements": [1]}, "element 0 must be an object"),
        ({"width": 10, "height": 10, "elements": [{"bounds": [5, 0, 1, 1], "role": "a"}]}, "element 0: bounds need x1"),
        ({"width": 10, "height": 10, "elements": [{"bounds": [0, 0, "nan", 1], "role": "a"}]}, "element 0: bounds must be finite"),
        ({"width": 10, "height": 10, "elements": [{"bounds": [0, 0, 1, 1], "role": "a", "text": 5}]}, "element 0: text must be a string"),
        ({"width": 0, "height": 10, "elements": []}, "width must be finite and > 0"),
        ({"elements": []}, "width and height are required"),
        ({"width": 10, "height": 10, "elements": [], "meta": {"colour": "x"}}, "unknown screen meta fields"),
        ([], "needs at least one element"),
        ({"views": "x"}, "DroidBot state: views must be a list"),
        ({"views": [], "height": 5}, "width and height are required"),
        ({"views": [{"visible": True, "class": "a", "bounds": [[0, 0], [5]]}], "width": 9, "height": 9},
         "DroidBot view 0: bounds"),
        ({"views": [{"visible": True, "bounds": [[0, 0], [1, 1]]}], "width": 9, "height": 9},
         "DroidBot view 0: class must be a string"),
        ({"activity": {"root": {"bounds": [0, 0, 10, 10], "visible-to-user": True, "class": "a",
                                "children": [{"visible-to-user": True, "class": "b", "bounds": [9, 0, 1, 1]}]}}},
         r"Rico node activity.root.children\[0\]: bounds need x1"),
        ({"activity": {"root": {"bounds": [0, 0, 10, 10], "visible-to-user": True}}},
         "Rico node activity.root: class must be a string"),
        ({"activity": {"root": {"bounds": [0, 0, 0, 0], "visible-to-user": False}}}, "give no screen size"),
    ],
)
def test_bad_input_names_the_record(data, message):
    with pytest.raises(InvalidInputError, match=message) as info:
        load_screen(data)
    assert isinstance(info.value, SpatialObsError) and isinstance(info.value, ValueError)


def test_unknown_format_name():
    with pytest.raises(InvalidInputError, match="unknown screen format 'xml'"):
        load_screen({"elements": []}, format="xml")


def test_rico_deep_tree_does_not_recurse():
    node = {"bounds": [0, 0, 10, 10], "visible-to-user": True, "class": "leaf"}
    for _ in range(5000):
        node = {"bounds": [0, 0, 10, 10], "visible-to-user": False, "class": "v", "children": [node]}
    s = load_screen({"activity": {"root": node}})
    assert [e.role for e in s.elements] == ["leaf"]
