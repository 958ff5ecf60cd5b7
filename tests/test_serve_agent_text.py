"""The text agents read (tool descriptions and input schemas) against what the service really takes.

The op kinds the apply tool names are exactly those the executor dispatches;
every tool's schema names exactly its handler's parameters, requires those
with no default and gives the others' defaults. Arguments are checked alike
over the Python API, MCP (the SDK's own client over stdio) and the HTTP API:
an object or array may come as its JSON text, a null is the same as leaving
an argument out only where the schema's type lists null, and every refusal is
one line naming the argument.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import sys
from typing import Any, Dict

import pytest

from tests.test_serve_support import REPO, http_server, request

from spatialobs.canvas import Canvas
from spatialobs.canvas.editing.ops import OP_ALIASES, OP_NAMES, OPS, Executor
from spatialobs.serve import TOOLS, Service, ServiceError
from spatialobs.serve.service import _DOC, _Def, _build_tool

BOARD = REPO / "tests" / "data" / "conformance" / "labels.tldr"
SPECS = {t.name: t for t in TOOLS}


def _listed_ops(description: str) -> list:
    return re.findall(r"^- ([a-z_]+) \{", description, flags=re.M)


def test_apply_names_exactly_the_ops_the_executor_dispatches():
    handlers = Executor(Canvas())._handlers
    apply = SPECS["apply"]
    assert _listed_ops(apply.description) == list(OP_NAMES) == [o.name for o in OPS]
    assert set(handlers) == set(OP_NAMES)
    assert apply.schema["properties"]["ops"]["items"]["properties"]["op"]["enum"] == list(OP_NAMES)
    # each listed kind reaches its handler (a missing field is its error, not "unknown op"); others do not
    for name in OP_NAMES:
        report = Executor(Canvas()).apply([{"op": name}])
        assert all("unknown op" not in str(e) for e in report.errors), (name, report.errors)
    report = Executor(Canvas()).apply([{"op": "rotate_node"}])
    assert "unknown op 'rotate_node'" in str(report.errors[0])
    # the other spellings agents use name listed kinds
    assert set(OP_ALIASES.values()) <= set(OP_NAMES)
    # the module's reference lists each kind too
    import spatialobs.canvas.editing.ops as ops_module

    for name in OP_NAMES:
        assert f"``{name}``" in (ops_module.__doc__ or ""), name


def test_descriptions_name_only_ops_tools_and_arguments_that_exist():
    known = set(OP_NAMES) | set(SPECS) | {a for t in TOOLS for a in t.schema["properties"]}
    # words of the descriptions that are not ops, tools or arguments: formats and field names
    other = {"canvas_ops", "from_anchor", "to_anchor", "display_mode", "text_size", "center_x", "center_y"}
    for t in TOOLS:
        for word in re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", t.description):
            assert word in known | other, (t.name, word)


def test_every_schema_is_its_handlers_signature():
    assert [t.name for t in TOOLS] == list(SPECS)
    for t in TOOLS:
        params = {n: p for n, p in inspect.signature(getattr(Service, "_t_" + t.method)).parameters.items()
                  if n != "self"}
        props = t.schema["properties"]
        assert set(props) == set(params), t.name
        assert set(t.schema["required"]) == {n for n, p in params.items() if p.default is inspect.Parameter.empty}
        assert t.schema["additionalProperties"] is False
        for name, p in params.items():
            prop = props[name]
            types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
            if p.default is inspect.Parameter.empty:
                assert "default" not in prop and "null" not in types, (t.name, name)
            elif p.default is None:
                # null is "left out" only for strings, objects and arrays without an enum, and says so
                nullable = set(types) - {"null"} <= {"string", "object", "array"} and "enum" not in prop
                assert ("null" in types) == nullable, (t.name, name)
                assert ("null: the same as leaving it out" in prop.get("description", "")) == nullable
            else:
                assert prop["default"] == p.default and "null" not in types, (t.name, name)
            assert prop.get("description"), (t.name, name)
        assert t.description and "\n" not in t.description or t.name == "apply"


def test_a_schema_that_drifts_from_its_handler_is_refused_at_import():
    with pytest.raises(RuntimeError, match=r"tool undo: the schema's arguments \['document', 'force'\] are not "
                                           r"the parameters of Service._t_undo \['document'\]"):
        _build_tool(_Def("undo", "canvas", "Undo.", {"document": _DOC, "force": {"type": "boolean"}}))
    with pytest.raises(RuntimeError, match=r"are not the parameters of Service._t_save"):
        _build_tool(_Def("save", "canvas", "Save.", {"document": _DOC}))


@pytest.fixture()
def svc(tmp_path):
    shutil.copy(BOARD, tmp_path / "board.tldr")
    s = Service(tmp_path)
    s.call("open_document", {"path": "board.tldr", "name": "board"})
    return s


def test_objects_and_arrays_may_come_as_json_text(svc):
    as_list = svc.call("observe", {"document": "board", "viewport": [0, 0, 900, 700], "origin": [10, 20]})
    as_text = svc.call("observe", {"document": "board", "viewport": "[0, 0, 900, 700]", "origin": "[10, 20]"})
    as_obj = svc.call("observe", {"document": "board", "viewport": '{"x": 0, "y": 0, "w": 900, "h": 700}',
                                  "origin": [10, 20]})
    assert as_list["observation"] == as_text["observation"] == as_obj["observation"]
    ids = [o["id"] for o in as_list["observation"]["objects"]][:2]
    sel = svc.call("observe", {"document": "board", "selected": json.dumps(ids), "context": json.dumps(ids[:1])})
    assert sel["observation"] == svc.call("observe", {"document": "board", "selected": ids,
                                                      "context": ids[:1]})["observation"]
    rep = svc.call("apply", {"document": "board", "ops": json.dumps([{"op": "create_shape", "id": "n", "x": 0,
                                                                       "y": 0, "text": "new"}])})
    assert rep["applied"] == [0] and rep["errors"] == []
    screen = {"width": 200, "height": 100, "elements": [{"bounds": [0, 0, 50, 20], "role": "button", "text": "OK",
                                                         "clickable": True}]}
    out = svc.call("screen_choose", {"index": "ix", "screen": json.dumps(screen), "meta": '{"app": "demo"}',
                                     "actions": '[{"op": "click", "element": 0}]'})
    assert out["choice"] == 0 and out["action"] == {"op": "click", "element": 0}


@pytest.mark.parametrize("tool, args, message", [
    ("observe", {"viewport": "wide"}, "observe: argument 'viewport' must be object or array or its JSON text; got a "
                                      "string that is not JSON ('wide': Expecting value: line 1 column 1 (char 0))"),
    ("observe", {"viewport": "5"}, "observe: argument 'viewport' must be object or array or its JSON text; got the "
                                   "JSON text of an integer"),
    ("observe", {"origin": '{"x": 1}'}, "observe: argument 'origin' must be array or its JSON text; got the JSON "
                                        "text of an object"),
    ("observe", {"viewport": 5}, "observe: argument 'viewport' must be object or array or its JSON text, got "
                                 "integer"),
    ("observe", {"viewport": "[" * 100000}, "observe: argument 'viewport': its JSON text is nested too deeply"),
    ("observe", {"max_objects": None}, "observe: argument 'max_objects' must be integer, got null; leave it out to "
                                       "use the default (180)"),
    ("observe", {"max_bytes": None}, "observe: argument 'max_bytes' must be integer, got null; leave it out to use "
                                     "the default"),
    ("observe", {"max_objects": "abc"}, "observe: argument 'max_objects' must be integer, got string"),
    ("observe", {"max_objects": 2.5}, "observe: argument 'max_objects' must be integer, got number"),
    ("observe", {"max_objects": -1}, "observe: argument 'max_objects' must be >= 0, got -1"),
    ("observe", {"include_bounds": "yes"}, "observe: argument 'include_bounds' must be boolean, got string"),
    ("observe", {"include_bounds": None}, "observe: argument 'include_bounds' must be boolean, got null; leave it "
                                          "out to use the default (false)"),
    ("observe", {"form": None}, "observe: argument 'form' must be string, got null; leave it out to use the "
                                "default (\"json\")"),
    ("observe", {"form": "xml"}, "observe: argument 'form' must be one of ['json', 'text', 'compact'], got 'xml'"),
    ("observe", {"document": None}, "observe: missing argument 'document' (got null)"),
    ("render", {"width": 50}, "render: argument 'width' must be 100..8000, got 50"),
    ("screen_choose", {"index": "ix", "screen": {}, "c_p": float("nan")},
     "screen_choose: argument 'c_p' must be a finite number, got nan"),
    ("save", {"format": None}, "save: argument 'format' must be string, got null; leave it out to use the default"),
    ("create_from_mermaid", {"mermaid": "graph TD; A-->B", "x": None},
     "create_from_mermaid: argument 'x' must be number, got null; leave it out to use the default"),
])
def test_a_wrong_type_or_a_null_is_one_clear_line(svc, tool, args, message):
    full = {"document": "board", **args} if "document" in SPECS[tool].schema["properties"] else args
    before = svc.call("observe", {"document": "board"})["token"]
    with pytest.raises(ServiceError) as err:
        svc.call(tool, full)
    assert err.value.code == "bad_request" and err.value.message == message
    assert svc.call("observe", {"document": "board", "since": before})["observation"]["changes"]["changes"] == []


def test_null_is_left_out_where_the_schema_says_so(svc):
    plain = svc.call("observe", {"document": "board"})
    nulls = svc.call("observe", {"document": "board", "viewport": None, "page": None, "selected": None,
                                 "context": None, "origin": None, "since": None})
    assert nulls["observation"] == plain["observation"]
    assert svc.call("observe", {"document": "board", "max_objects": 5.0})["observation"] == \
        svc.call("observe", {"document": "board", "max_objects": 5})["observation"]
    out = svc.call("apply", {"document": "board", "reply": None, "ops": [], "origin": None})
    assert out["applied"] == [] and out["errors"] == []


def test_the_same_rules_over_the_http_api(tmp_path):
    shutil.copy(BOARD, tmp_path / "board.tldr")
    with http_server(tmp_path) as base:
        status, out = request(base, "POST", "/v1/documents", {"path": "board.tldr", "name": "board",
                                                               "viewport": "[0, 0, 900, 700]", "origin": "[0, 0]"})
        assert status == 200 and out["ok"], out
        q = "/v1/documents/board/observe"
        a = request(base, "GET", q + "?viewport=[0,0,900,700]&max_objects=40&include_bounds=true")[1]
        b = request(base, "POST", q, {"viewport": "[0, 0, 900, 700]", "max_objects": 40, "include_bounds": True})[1]
        assert a["ok"] and b["ok"] and a["result"]["observation"] == b["result"]["observation"]
        for method, path, body, message in (
                ("GET", q + "?max_objects=abc", None, "observe: argument 'max_objects' must be integer, got 'abc'"),
                ("GET", q + "?include_bounds=maybe", None, "observe: argument 'include_bounds' must be boolean, "
                                                           "got 'maybe'"),
                ("GET", q + "?viewport=wide", None, "observe: argument 'viewport' must be object or array or its "
                                                    "JSON text; got a string that is not JSON ('wide': Expecting "
                                                    "value: line 1 column 1 (char 0))"),
                ("POST", q, {"max_objects": None}, "observe: argument 'max_objects' must be integer, got null; "
                                                   "leave it out to use the default (180)"),
                ("POST", "/v1/call/render", {"document": "board", "width": "wide"},
                 "render: argument 'width' must be integer, got string")):
            status, out = request(base, method, path, body)
            assert status == 400 and out == {"ok": False, "error": {"code": "bad_request", "message": message}}
        status, out = request(base, "GET", "/v1/tools")
        assert [{k: t[k] for k in ("name", "description", "inputSchema")} for t in out["result"]["tools"]] == \
            [{"name": t.name, "description": t.description, "inputSchema": t.schema} for t in TOOLS]


def test_the_same_rules_over_mcp_stdio(tmp_path):
    anyio = pytest.importorskip("anyio")
    from mcp import Client, StdioServerParameters

    shutil.copy(BOARD, tmp_path / "board.tldr")
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "spatialobs", "serve", "--root", str(tmp_path)], cwd=str(REPO),
                                   env=dict(os.environ))  # the server imports the package this test runs

    async def main() -> Dict[str, Any]:
        async with Client(params) as client:
            listed = (await client.list_tools()).tools
            out: Dict[str, Any] = {"tools": [(t.name, t.description, t.input_schema) for t in listed]}
            r = await client.call_tool("open_document", {"path": "board.tldr", "name": "board",
                                                         "viewport": '{"x": 0, "y": 0, "w": 900, "h": 700}'})
            out["open"] = (r.is_error, json.loads(r.content[0].text))
            r = await client.call_tool("observe", {"document": "board", "max_objects": None})
            out["null"] = (r.is_error, r.content[0].text)
            r = await client.call_tool("observe", {"document": "board", "viewport": "wide"})
            out["text"] = (r.is_error, r.content[0].text)
            return out

    out = anyio.run(main)
    assert out["tools"] == [(t.name, t.description, t.schema) for t in TOOLS]
    assert out["open"][0] is False and out["open"][1]["document"] == "board"
    assert out["null"] == (True, "bad_request: observe: argument 'max_objects' must be integer, got null; leave it "
                                 "out to use the default (180)")
    assert out["text"][0] is True and out["text"][1].startswith(
        "bad_request: observe: argument 'viewport' must be object or array or its JSON text; got a string that is "
        "not JSON")

