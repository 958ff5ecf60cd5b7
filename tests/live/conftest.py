"""Fixtures of the live-canvas tests: one server and one Chromium per module."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterator, Tuple

import pytest

from tests.conftest import SHARED_DATA
from tests.live.support import Browser, live_server, require, write_documents


@pytest.fixture(scope="module")
def live(tmp_path_factory: Any) -> Iterator[Tuple[str, Any, Path]]:
    """``(base URL, service, root)``: the live server on a fresh root folder holding the built-in documents
    (``frames.tldr``, ``board.excalidraw``) and copies of the real canvases where they lie beside the checkout."""
    require()
    root = tmp_path_factory.mktemp("live-root")
    write_documents(root)
    if SHARED_DATA.is_dir():
        for p in sorted((SHARED_DATA / "canvases").glob("*")):
            shutil.copy(p, root / p.name)
    with live_server(root) as (base, service):
        yield base, service, root


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium; fails the test when the page tried to reach another host."""
    require()
    b = Browser()
    try:
        yield b
    finally:
        b.close()
    assert not b.blocked, f"the live page tried to fetch from elsewhere: {b.blocked[:5]}"
