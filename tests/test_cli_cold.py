"""The cold command line: what ``spatialobs observe FILE`` builds and imports before it prints."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

from spatialobs import cli
from spatialobs.canvas import load

PYTHON = str(Path(cli.__file__).resolve().parents[1])


def _commands() -> List[str]:
    sub = next(a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def _help(parser: argparse.ArgumentParser, argv: List[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return out.getvalue()


def test_one_command_parser_matches_the_full_one():
    commands = _commands()
    assert {"observe", "render", "apply", "serve", "dedup"} <= set(commands)
    full = cli._parser()
    for name in commands:
        one = cli._parser(name)
        sub = next(a for a in one._actions if isinstance(a, argparse._SubParsersAction))
        assert list(sub.choices) == [name]
        assert _help(one, [name, "--help"]) == _help(full, [name, "--help"])
    argv = ["observe", "f.tldr", "--viewport", "0,0,10,10", "--format", "compact", "--max-bytes", "900"]
    assert cli._parser("observe").parse_args(argv) == full.parse_args(argv)


def test_a_name_that_is_no_command_gets_the_full_parser():
    p = cli._parser("no-such-command")
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == _commands()
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exc:
        cli.main(["no-such-command"])
    assert exc.value.code == 2
    assert "invalid choice: 'no-such-command'" in err.getvalue() and "'observe'" in err.getvalue()


# Modules a cold observe of one file must not import: the other format, the editing layer, the
# service, the standard library's OpenSSL hashes (a write or a token's salt needs none of them), and
# shutil (argparse's stock help formatter imports it for the terminal's width).
NOT_FOR_OBSERVE = ("spatialobs.canvas.editing.ops", "spatialobs.serve", "spatialobs.canvas.baseline", "_hashlib",
                   "secrets", "shutil")
OTHER_FORMAT = {"tldr": "spatialobs.canvas.formats.excalidraw", "excalidraw": "spatialobs.canvas.formats.tldraw"}


@pytest.mark.parametrize("ext", ["tldr", "excalidraw"])
def test_cold_observe_imports_only_what_it_uses(tmp_path: Path, ext: str):
    scene = {"type": "excalidraw", "elements": [
        {"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 100, "height": 50},
        {"id": "b", "type": "ellipse", "x": 200, "y": 0, "width": 100, "height": 50}]}
    f = tmp_path / f"page.{ext}"
    f.write_text(json.dumps(load(scene).to_tldraw() if ext == "tldr" else scene), encoding="utf-8")
    code = ("import contextlib, io, json, sys\n"
            "from spatialobs import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            f"    assert cli.main(['observe', {str(f)!r}]) == 0\n"
            "print(json.dumps([sorted(sys.modules), out.getvalue()]))\n")
    env = {**os.environ, "PYTHONPATH": PYTHON}
    loaded, printed = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                                check=True).stdout)
    assert [obj["id"] for obj in json.loads(printed)["objects"]] != []
    assert [m for m in (*NOT_FOR_OBSERVE, OTHER_FORMAT[ext]) if m in loaded] == []


@pytest.mark.parametrize("columns", [None, "100", "37", "0", "-4", "wide", ""])
def test_terminal_columns_is_shutils(monkeypatch: pytest.MonkeyPatch, columns: Optional[str]) -> None:
    import shutil

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert cli._terminal_columns() == shutil.get_terminal_size().columns
    monkeypatch.setattr(sys, "__stdout__", None)  # no standard output at all: the fallback
    assert cli._terminal_columns() == shutil.get_terminal_size().columns


def test_help_is_as_wide_as_argparse_makes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    stock = argparse.ArgumentParser(prog="spatialobs observe")
    ours = argparse.ArgumentParser(prog="spatialobs observe", formatter_class=cli._HelpFormatter)
    for p in (stock, ours):
        p.add_argument("--viewport", metavar="X,Y,W,H", help="page units (default: the saved camera, else the page)")
    assert ours.format_help() == stock.format_help()
    assert max(map(len, ours.format_help().splitlines())) <= 58
