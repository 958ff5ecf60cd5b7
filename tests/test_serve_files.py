"""What a save leaves on disk: the mode of the file it replaces, or the umask's for a new one; nothing else.

Through a real `spatialobs serve --http` (started under a known umask) and
through :class:`Service` itself.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_serve_support import REPO, http_server, request

from spatialobs.canvas import load
from spatialobs.serve import Service


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def leftovers(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    try:
        yield 0o027
    finally:
        os.umask(old)


@pytest.mark.parametrize("existing", [0o644, 0o600, 0o640, 0o664, 0o444])
def test_a_save_over_a_file_keeps_its_mode(tmp_path, existing, umask_027):
    svc = Service(tmp_path)
    svc.call("scenario_open", {"config": 1, "name": "d"})
    target = tmp_path / "board.json"
    target.write_text("{}")
    os.chmod(target, existing)
    out = svc.call("save", {"document": "d", "path": "board.json", "format": "native"})
    assert mode(target) == existing and out["bytes"] == target.stat().st_size
    assert load(target).nodes  # the new content, whole
    assert leftovers(tmp_path) == []
    # and the document's default save (back to the file it was opened from) too
    svc.call("open_document", {"path": "board.json", "name": "again"})
    svc.call("save", {"document": "again"})
    assert mode(target) == existing


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002])
def test_a_new_file_follows_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        svc = Service(tmp_path)
        svc.call("scenario_open", {"config": 0, "name": "d"})
        for fmt, name in (("native", "a.json"), ("tldraw", "a.tldr"), ("excalidraw", "a.excalidraw")):
            svc.call("save", {"document": "d", "path": name, "format": fmt})
            assert mode(tmp_path / name) == 0o666 & ~umask, (fmt, oct(mode(tmp_path / name)))
        svc.call("screen_add", {"index": "ix", "screen": {"width": 10, "height": 10, "elements": [
            {"bounds": [0, 0, 5, 5], "role": "button", "text": "OK"}]}})
        svc.call("screen_save", {"index": "ix", "path": "ix.idx"})
        assert mode(tmp_path / "ix.idx") == 0o666 & ~umask
    finally:
        os.umask(old)
    assert leftovers(tmp_path) == []


def test_a_screen_index_save_over_a_file_keeps_its_mode(tmp_path, umask_027):
    svc = Service(tmp_path)
    svc.call("screen_add", {"index": "ix", "screen": {"width": 10, "height": 10, "elements": [
        {"bounds": [0, 0, 5, 5], "role": "button", "text": "OK"}]}})
    target = tmp_path / "ix.idx"
    svc.call("screen_save", {"index": "ix", "path": "ix.idx"})
    os.chmod(target, 0o604)
    svc.call("screen_save", {"index": "ix", "path": "ix.idx"})
    assert mode(target) == 0o604
    assert svc.call("screen_load", {"index": "back", "path": "ix.idx"})["observations"] == 1


def test_saves_through_the_server_keep_modes_and_follow_its_umask(tmp_path):
    (tmp_path / "shared.json").write_text("{}")
    os.chmod(tmp_path / "shared.json", 0o644)
    (tmp_path / "private.json").write_text("{}")
    os.chmod(tmp_path / "private.json", 0o600)
    old = os.umask(0o077)  # the server inherits it
    try:
        ctx = http_server(tmp_path)
        base = ctx.__enter__()
    finally:
        os.umask(old)
    try:
        assert request(base, "POST", "/v1/scenarios/2/open", {"name": "d"})[0] == 200
        for name in ("shared.json", "private.json", "new.json"):
            status, out = request(base, "POST", "/v1/documents/d/save", {"path": name, "format": "native"})
            assert status == 200, out
    finally:
        ctx.__exit__(None, None, None)
    assert (mode(tmp_path / "shared.json"), mode(tmp_path / "private.json"), mode(tmp_path / "new.json")) == (
        0o644, 0o600, 0o600)
    assert leftovers(tmp_path) == []


def test_the_cli_serve_help_names_the_new_options():
    out = subprocess.run([sys.executable, "-m", "spatialobs", "serve", "--help"], cwd=REPO, capture_output=True, text=True,
                         timeout=60)
    for option in ("--allow-origin", "--max-connections", "--header-timeout", "--body-timeout", "--keep-alive"):
        assert option in out.stdout


def test_a_save_lets_observes_through_and_saves_land_in_order(tmp_path):
    import threading
    import time

    from spatialobs.canvas.scenarios.handoff import synthetic_workspace

    svc = Service(tmp_path)
    big = synthetic_workspace(5000, seed=3)
    svc.call("open_document", {"document": big.to_json(), "name": "big"})
    d = svc._docs["big"]
    svc.call("observe", {"document": "big"})  # derived once, before the timing matters
    first = threading.Thread(target=svc.call, args=("save", {"document": "big", "path": "big.json"}))
    first.start()
    for _ in range(2000):  # until the save holds its copy and has let the document go
        if d.saves_taken == 1:
            break
        time.sleep(0.005)
    assert d.saves_taken == 1
    t0 = time.perf_counter()
    svc.call("observe", {"document": "big"})
    moved = svc.call("apply", {"document": "big", "ops": [{"op": "move_node", "id": next(iter(big.nodes)), "dx": 7}]})
    assert moved["applied"] == [0]
    observed_while_saving = first.is_alive()
    svc.call("save", {"document": "big", "path": "big.json"})  # the later save: it must land last
    first.join(timeout=120)
    assert observed_while_saving, f"the observe and apply waited for the save ({time.perf_counter() - t0:.2f} s)"
    saved = load(tmp_path / "big.json")
    assert saved.to_json() == svc._docs["big"].canvas.to_json()
    assert (d.saves_taken, d.saves_done) == (2, 2) and leftovers(tmp_path) == []
