"""The command line, run in subprocesses as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import shared_files


def run(*args: str, stdin: str = "", cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "spatialobs", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_help_lists_the_commands():
    out = run("--help")
    assert out.returncode == 0
    for cmd in ("demo", "dedup"):
        assert cmd in out.stdout


def test_demo_runs_and_reports_every_kernel():
    out = run("demo", "--n", "2000")
    assert out.returncode == 0, out.stderr
    for kernel in ("visibility", "occluders", "overlap_pairs", "containment_pairs", "reading_order"):
        assert kernel in out.stdout


def test_dedup_real_screens_builds_and_extends_an_index(shared_data, tmp_path):
    screens = shared_files("screens", "*.json")
    index = tmp_path / "ix.bin"
    first = run("dedup", str(shared_data / "screens"), "--index", str(index))
    assert first.returncode == 0, first.stderr
    assert f"screens: {len(screens)} read, 0 skipped" in first.stdout
    assert index.exists()
    states = int(first.stdout.split("states: ")[1].split(" new")[0])
    assert 1 <= states <= len(screens)
    # the same screens again: all exact duplicates, nothing new
    again = run("dedup", *map(str, screens), "--index", str(index))
    assert again.returncode == 0, again.stderr
    assert "unique observations: 0 new" in again.stdout and "states: 0 new" in again.stdout
    assert f"merges: {len(screens)} exact duplicates" in again.stdout


def test_dedup_reads_json_lines_and_stdin(tmp_path):
    screen = {"width": 400, "height": 800, "elements": [{"bounds": [0, 0, 400, 60], "role": "toolbar", "text": "Inbox"}]}
    other = {"width": 400, "height": 800, "elements": [{"bounds": [0, 700, 400, 800], "role": "button", "text": "Send"}]}
    stream = tmp_path / "s.jsonl"
    stream.write_text("\n".join(json.dumps(s) for s in [screen, screen, other]) + "\n")
    out = run("dedup", str(stream))
    assert out.returncode == 0, out.stderr
    assert "screens: 3 read" in out.stdout and "states: 2 new" in out.stdout
    piped = run("dedup", "-", stdin=json.dumps(screen) + "\n")
    assert piped.returncode == 0 and "screens: 1 read" in piped.stdout


def test_dedup_bad_files_are_skipped_with_one_line_each(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"width": 10')
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"width": 10, "height": 10, "elements": [{"bounds": [0, 0, 10, 10], "role": "button"}]}))
    out = run("dedup", str(bad), str(good))
    assert out.returncode == 1
    assert "screens: 1 read, 1 skipped" in out.stdout
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(f"spatialobs: skipped {bad}")
    assert "Traceback" not in out.stderr


def test_missing_path_is_one_line_and_exit_2(tmp_path):
    out = run("dedup", str(tmp_path / "nope.json"))
    assert out.returncode == 2
    assert out.stderr.strip() == f"spatialobs: error: no such file or folder: {tmp_path / 'nope.json'}"


def test_debug_shows_the_traceback(tmp_path):
    out = run("--debug", "dedup", str(tmp_path / "nope.json"))
    assert out.returncode != 0 and "Traceback" in out.stderr
