"""TipTap / ProseMirror rich text (tldraw ``richText``) to and from plain text."""

from __future__ import annotations

from typing import Any, Dict, List

__all__ = ["richtext_to_plain", "plain_to_richtext"]

_BLOCKS = {"paragraph", "heading", "listItem", "bulletList", "orderedList", "blockquote", "codeBlock"}


def richtext_to_plain(doc: Any) -> str:
    """Plain text of a rich-text document: one line per paragraph, hard breaks kept.

    Parameters
    ----------
    doc : dict
        ``{"type": "doc", "content": [{"type": "paragraph", "content": [...]}, ...]}``.
        Anything malformed yields the text that can be recovered (never raises).

    Examples
    --------
    >>> richtext_to_plain({"type": "doc", "content": [
    ...     {"type": "paragraph", "content": [{"type": "text", "text": "a"}]},
    ...     {"type": "paragraph", "content": [{"type": "text", "text": "b"}]}]})
    'a\\nb'
    """
    if isinstance(doc, str):
        return doc
    # explicit stacks, not recursion: the nesting comes from the file
    lines: List[str] = []
    stack: List[Any] = [doc]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        if node.get("type") in ("paragraph", "heading", "codeBlock", "text"):
            lines.append(_leaf_text(node))
            continue
        content = node.get("content")
        if isinstance(content, list):
            stack.extend(reversed(content))
    return "\n".join(lines)


def _leaf_text(root: Any) -> str:
    """The text of a paragraph-like node: its text leaves in order, hard breaks as newlines."""
    out: List[str] = []
    stack: List[Any] = [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        t = node.get("type")
        if t == "text":
            v = node.get("text")
            out.append(v if isinstance(v, str) else "")
        elif t == "hardBreak":
            out.append("\n")
        else:
            content = node.get("content")
            if isinstance(content, list):
                stack.extend(reversed(content))
    return "".join(out)


def plain_to_richtext(text: str) -> Dict[str, Any]:
    """A rich-text document with one paragraph per line (tldraw's own conversion shape).

    Examples
    --------
    >>> plain_to_richtext("a\\nb")["content"][1]
    {'type': 'paragraph', 'content': [{'type': 'text', 'text': 'b'}]}
    >>> richtext_to_plain(plain_to_richtext("x\\n\\ny"))
    'x\\n\\ny'
    """
    paragraphs: List[Dict[str, Any]] = []
    for line in (text or "").split("\n"):
        para: Dict[str, Any] = {"type": "paragraph"}
        if line:
            para["content"] = [{"type": "text", "text": line}]
        paragraphs.append(para)
    return {"type": "doc", "content": paragraphs}
