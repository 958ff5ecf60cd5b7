"""What the conformance document scripts share: tldraw 5.4.2's schema, rich text, writing, truth files.

``make_arrows.py``, ``make_text.py`` and ``make_freehand.py`` build their ``.tldr``
documents with these helpers and reduce a tldraw harness run to the fields their
tests assert on with :func:`main`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping

#: The schema tldraw 5.4.2 writes (its newest migration of every sequence).
SCHEMA: Dict[str, Any] = {"schemaVersion": 2, "sequences": {
    "com.tldraw.store": 5, "com.tldraw.asset": 1, "com.tldraw.camera": 1, "com.tldraw.document": 2,
    "com.tldraw.instance": 26, "com.tldraw.instance_page_state": 5, "com.tldraw.page": 1,
    "com.tldraw.instance_presence": 6, "com.tldraw.pointer": 1, "com.tldraw.shape": 4, "com.tldraw.user": 1,
    "com.tldraw.asset.image": 6, "com.tldraw.asset.video": 5, "com.tldraw.asset.bookmark": 2,
    "com.tldraw.shape.group": 0, "com.tldraw.shape.text": 4, "com.tldraw.shape.bookmark": 2,
    "com.tldraw.shape.draw": 5, "com.tldraw.shape.geo": 12, "com.tldraw.shape.note": 13,
    "com.tldraw.shape.line": 5, "com.tldraw.shape.frame": 1, "com.tldraw.shape.arrow": 8,
    "com.tldraw.shape.highlight": 4, "com.tldraw.shape.embed": 4, "com.tldraw.shape.image": 5,
    "com.tldraw.shape.video": 4, "com.tldraw.binding.arrow": 1}}


def rich(text: str) -> Dict[str, Any]:
    """tldraw rich text with one paragraph per line (an empty line is an empty paragraph)."""
    paras: List[Dict[str, Any]] = []
    for line in text.split("\n"):
        paras.append({"type": "paragraph", "content": [{"type": "text", "text": line}]} if line else {"type": "paragraph"})
    return {"type": "doc", "content": paras}


def write_tldr(path: Path, page: str, records: List[Dict[str, Any]], schema: Mapping[str, Any] = SCHEMA,
               **dump: Any) -> None:
    """Write a one-page ``.tldr`` file: the document and page records, then ``records``."""
    head = [{"meta": {}, "id": page, "name": "Page 1", "index": "a1", "typeName": "page"},
            {"gridSize": 10, "name": "", "meta": {}, "id": "document:document", "typeName": "document"}]
    doc = {"tldrawFileFormatVersion": 1, "schema": schema, "records": head + records}
    path.write_text(json.dumps(doc, **dump) + "\n", encoding="utf-8")


def main(here: Path, docs: Mapping[str, Callable[[], Any]], reduce_truth: Callable[[Path], Any]) -> None:
    """The scripts' command line: write every document, or ``--truth NAME RAW.json`` to keep a run's fields."""
    if len(sys.argv) == 4 and sys.argv[1] == "--truth":
        name = sys.argv[2]
        (here / f"{name}.truth.json").write_text(json.dumps(reduce_truth(Path(sys.argv[3])), indent=0) + "\n")
    else:
        for name, make in docs.items():
            make().write(here / f"{name}.tldr")
