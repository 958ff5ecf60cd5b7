"""Every Python example in the README runs and prints what the README says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
# ```python fences, or ~~~python fences for examples whose strings hold ``` themselves
BLOCKS = [m.group(2) for m in re.finditer(r"(```|~~~)python\n(.*?)\1", README.read_text(encoding="utf-8"), flags=re.S)]


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example(code):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    printed = out.getvalue().splitlines()
    # each `print(...)  # expected` line must print exactly the expected text
    expected = [m.group(1) for m in re.finditer(r"^\s*print\(.*\)\s+# (.*)$", code, flags=re.M)]
    assert printed == expected


def test_readme_has_examples():
    assert BLOCKS


CONSOLE = re.findall(r"```console\n\$ (spatialobs [^\n]+)\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize(("command", "shown"), CONSOLE, ids=[f"console{i}" for i in range(len(CONSOLE))])
def test_readme_console_output_is_real(command, shown, shared_data):
    import shlex
    import subprocess
    import sys

    args = shlex.split(command)[1:]
    out = subprocess.run([sys.executable, "-m", "spatialobs", *args], capture_output=True, text=True,
                         cwd=README.parent, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == shown
