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
from typing import List

import pytest

from spatialobs import cli

EXAMPLES = Path(__file__).resolve().parent / "data"


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
