"""Every example in the README and the documentation pages runs and prints what the page says;
every relative link of those pages points at a file and heading that exist."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"


def pages() -> List[Path]:
    """README.md, every Markdown page of docs/ (not the built site) and the benchmarks page it includes."""
    found = [README, REPO / "benchmarks" / "README.md"]
    for p in sorted(DOCS.rglob("*.md")):
        generated = "_build" in p.parts or (p.parent.name == "api" and p.name.startswith("spatialobs"))
        if not generated:  # the API pages are written by the docs build (docs/_apigen.py)
            found.append(p)
    return found


def _name(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


def _blocks(page: Path) -> List[str]:
    # ```python fences, or ~~~python fences for examples whose strings hold ``` themselves
    return [m.group(2) for m in re.finditer(r"(```|~~~)python\n(.*?)\1", page.read_text(encoding="utf-8"), flags=re.S)]


BLOCKS: List[Tuple[Path, str]] = [(page, code) for page in pages() for code in _blocks(page)]
BLOCK_IDS = [f"{_name(page)}:block{i}" for i, (page, _) in enumerate(BLOCKS)]


@pytest.mark.parametrize(("page", "code"), BLOCKS, ids=BLOCK_IDS)
def test_page_example(page, code):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(page), "exec"), {})
    printed = out.getvalue().splitlines()
    # each `print(...)  # expected` line must print exactly the expected text
    expected = [m.group(1) for m in re.finditer(r"^\s*print\(.*\)\s+# (.*)$", code, flags=re.M)]
    assert printed == expected


def test_readme_has_examples():
    assert _blocks(README)
    # the pages the README's sections moved to keep theirs
    for page in ("geometry.md", "canvas-observation.md", "canvas-editing.md", "screens.md", "app-specs.md",
                 "serve.md"):
        assert _blocks(DOCS / page), page


CONSOLE: List[Tuple[Path, str, str]] = [
    (page, command, shown) for page in pages()
    for command, shown in re.findall(r"```console\n\$ (spatialobs [^\n]+)\n(.*?)```", page.read_text(encoding="utf-8"),
                                     flags=re.S)]


@pytest.mark.parametrize(("page", "command", "shown"), CONSOLE,
                         ids=[f"{_name(p)}:console{i}" for i, (p, _, _) in enumerate(CONSOLE)])
def test_console_output_is_real(page, command, shown, shared_data):
    import shlex
    import subprocess
    import sys

    # commands are written as run from the repository's root, whichever page shows them
    args = shlex.split(command)[1:]
    out = subprocess.run([sys.executable, "-m", "spatialobs", *args], capture_output=True, text=True,
                         cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == shown


def test_every_page_has_its_console_examples():
    assert {_name(p) for p, _, _ in CONSOLE} >= {"docs/canvas-observation.md", "docs/screens.md"}


# -- links --------------------------------------------------------------------------------------------------------

FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.S | re.M)
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INCLUDE = re.compile(r"```\{include\}\s+(\S+)")


def slug(heading: str) -> str:
    """The anchor of a Markdown heading, as GitHub and MyST's heading anchors make it."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path, seen: Tuple[Path, ...] = ()) -> set:
    """Every heading anchor of a page, with those of the files it includes (MyST ``{include}``)."""
    text = page.read_text(encoding="utf-8")
    found: set = set()
    counts: Dict[str, int] = {}
    for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", FENCE.sub("", text), flags=re.M):
        base = slug(m.group(1))
        n = counts.get(base, 0)
        counts[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    for inc in INCLUDE.findall(text):
        target = (page.parent / inc).resolve()
        if target not in seen:
            found |= anchors(target, seen + (page,))
    return found


def links(page: Path) -> List[str]:
    """The link targets of a page outside its code blocks and inline code."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


LINKS = [(page, target) for page in pages() for target in links(page)
         if not re.match(r"[a-z][a-z0-9+.-]*:", target)]  # http(s) and mailto links are not fetched here


def test_the_pages_have_relative_links():
    assert len(LINKS) > 20
    assert any(t.startswith("docs/") for p, t in LINKS if p == README)


@pytest.mark.parametrize(("page", "target"), LINKS, ids=[f"{_name(p)}->{t}" for p, t in LINKS])
def test_relative_link_resolves(page, target):
    path, _, anchor = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    assert dest.exists(), f"{_name(page)} links to {target}: no such file"
    if anchor:
        assert dest.suffix == ".md", f"{_name(page)} links to an anchor of a non-Markdown file: {target}"
        assert anchor in anchors(dest), f"{_name(page)} links to {target}: no such heading"


def test_slug_and_anchor_rules():
    assert slug("Across nodes") == "across-nodes"
    assert slug("Storage: what every node must reach") == "storage-what-every-node-must-reach"
    assert slug("The evidence store and its export") == "the-evidence-store-and-its-export"
    assert slug("`spatialobs.canvas`") == "spatialobscanvas"
    assert "soak-30-minutes-of-mixed-load" in anchors(DOCS / "benchmarks.md")  # through its {include}
