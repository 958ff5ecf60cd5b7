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
    lines: List[str] = []

    def leaf_text(node: Any) -> str:
        if not isinstance(node, dict):
            return ""
        t = node.get("type")
        if t == "text":
            v = node.get("text")
            return v if isinstance(v, str) else ""
        if t == "hardBreak":
            return "\n"
        return "".join(leaf_text(c) for c in node.get("content") or [] if isinstance(node.get("content"), list))

    def walk(node: Any) -> None:
        if not isinstance(node, dict):
            return
        content = node.get("content")
        children = content if isinstance(content, list) else []
        if node.get("type") in ("paragraph", "heading", "codeBlock"):
            lines.append(leaf_text(node))
            return
        if node.get("type") == "text":
            lines.append(leaf_text(node))
            return
        for c in children:
            walk(c)

    if isinstance(doc, str):
        return doc
    walk(doc)
    return "\n".join(lines)


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
