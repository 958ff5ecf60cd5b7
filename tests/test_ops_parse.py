"""parse_ops: fenced canvas_ops blocks of a model reply, read tolerantly."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from spatialobs import InvalidInputError
from spatialobs.canvas.editing.ops import ParseError, is_placeholder, parse_ops


def fence(body, tag="canvas_ops", ticks="```"):
    return f"{ticks}{tag}\n{body}\n{ticks}"


def test_several_blocks_in_reply_order():
    reply = "\n".join([
        "Sure, here is the plan.",
        fence('{"ops": [{"op": "create_artboard", "id": "a"}, {"op": "set_text", "id": "a", "text": "x"}]}'),
        "and then",
        fence('[{"op": "delete_node", "id": "b"}]'),
        "```json\n{\"ops\": [{\"op\": \"ignored\"}]}\n```",  # not a canvas_ops block
    ])
    ops, errors = parse_ops(reply)
    assert [o["op"] for o in ops] == ["create_artboard", "set_text", "delete_node"]
    assert errors == []


def test_broken_json_in_one_block_keeps_the_others():
    reply = "\n".join([
        fence('[{"op": "set_text", "id": "a", "text": "one"}]'),
        "text",
        fence('{"ops": [{"op": "set_text", "id": "a", "text": "two"},]}'),   # trailing comma
        fence('[{"op": "set_text", "id": "a", "text": "three"}]'),
    ])
    ops, errors = parse_ops(reply)
    assert [o["text"] for o in ops] == ["one", "three"]
    assert len(errors) == 1
    e = errors[0]
    assert isinstance(e, ParseError) and e.block == 1 and e.line == 6
    assert "invalid JSON" in e.message and "block skipped" in str(e) and "line 6" in str(e)


def test_bare_array_single_object_and_non_object_entries():
    reply = fence('[{"op": "a"}, 1, "two", null, [3], {"op": "b"}]') + "\n" + fence('{"op": "c", "id": "x"}')
    ops, errors = parse_ops(reply)
    assert [o["op"] for o in ops] == ["a", "b", "c"]
    assert [e.message.split(" (")[0] for e in errors] == ["entry 1 is not an object"] * 1 + \
        ["entry 2 is not an object", "entry 3 is not an object", "entry 4 is not an object"]
    assert all("dropped" in e.message for e in errors)


@pytest.mark.parametrize("body, why", [
    ('{"ops": {"op": "a"}}', "'ops' must be an array"),
    ('{"operations": []}', "without an 'ops' array"),
    ('42', "got int"),
    ('', "empty block"),
    ('{"ops": [', "invalid JSON"),
])
def test_malformed_blocks_are_reported(body, why):
    ops, errors = parse_ops("hello\n" + fence(body))
    assert ops == []
    assert len(errors) == 1 and why in errors[0].message and errors[0].block == 0


@pytest.mark.parametrize("opening", [
    "```canvas_ops", "```  canvas_ops  ", "```canvas-ops", "```Canvas_Ops", "```CANVAS_OPS", "```canvas ops",
    "```json canvas_ops", "```canvas_ops json", "~~~canvas_ops", "````canvas_ops", "  ```canvas_ops",
])
def test_fence_spellings(opening):
    closing = re.match(r"\s*([`~]+)", opening).group(1)
    reply = f"text\n{opening}\n[{{\"op\": \"x\"}}]\n{closing}\nmore"
    ops, errors = parse_ops(reply)
    assert ops == [{"op": "x"}] and errors == []


@pytest.mark.parametrize("opening", ["```json", "```", "```canvas", "```ops", "```canvas_opsx"])
def test_other_fences_are_not_ops(opening):
    ops, errors = parse_ops(f"{opening}\n[{{\"op\": \"x\"}}]\n```")
    assert ops == [] and errors == []


def test_unterminated_last_block_is_read_to_the_end():
    ops, errors = parse_ops('intro\n```canvas_ops\n[{"op": "x"}]\n')
    assert ops == [{"op": "x"}] and errors == []
    ops, errors = parse_ops('intro\n```canvas_ops\n[{"op": "x"},\n')
    assert ops == [] and "not closed" in errors[0].message


def test_nested_code_fence_in_other_block_does_not_swallow_ops():
    reply = "~~~markdown\n```canvas_ops\n[{\"op\": \"inside-markdown\"}]\n```\n~~~\n" + fence('[{"op": "real"}]')
    ops, _ = parse_ops(reply)
    assert [o["op"] for o in ops] == ["real"]


def test_parse_ops_rejects_non_strings():
    with pytest.raises(InvalidInputError, match="reply must be a string"):
        parse_ops(None)  # type: ignore[arg-type]


def test_deeply_nested_json_is_reported_not_raised():
    body = "[" * 100_000 + "]" * 100_000
    ops, errors = parse_ops(fence(body))
    assert ops == [] and len(errors) == 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`~{}[]\",:\n op canvas_ops 01")), max_size=300))
def test_parse_ops_never_raises_on_garbage(text):
    ops, errors = parse_ops(text)
    assert all(isinstance(o, dict) for o in ops)
    assert all(isinstance(e, ParseError) for e in errors)


@pytest.mark.parametrize("s, expected", [
    ("LATEST_CREATED_ARTBOARD", True), ("latest_created_artboard", True), ("{{LATEST_CREATED_ARTBOARD}}", True),
    ("$LATEST_CREATED_ARTBOARD", True), ("${LATEST_CREATED_ARTBOARD}", True), ("<LATEST_CREATED_ARTBOARD>", True),
    (" {{ latest_created_artboard }} ", True), ("LATEST-CREATED-ARTBOARD", True),
    ("LATEST_CREATED_ARTBOARD_2", False), ("artboard", False), ("", False), (None, False),
])
def test_placeholder_spellings(s, expected):
    assert is_placeholder(s) is expected
