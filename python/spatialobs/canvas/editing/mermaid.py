"""Mermaid flowcharts as shapes and bound arrows (the ``create_from_mermaid`` op).

:func:`parse_mermaid` reads the flowchart subset of Mermaid: a ``graph`` or
``flowchart`` header with a direction (``TD``/``TB``, ``BT``, ``LR``, ``RL``);
nodes with their shapes (``A[text]``, ``A(text)``, ``A([text])``, ``A[[text]]``,
``A[(text)]``, ``A((text))``, ``A(((text)))``, ``A>text]``, ``A{text}``,
``A{{text}}``, ``A[/text/]``, ``A[\\text\\]``, ``A[/text\\]``, ``A[\\text/]``,
quoted labels); edges ``-->``, ``---``, ``-.->``, ``-.-``, ``==>``, ``===``,
``--o``, ``--x``, ``<-->`` and longer forms, with labels (``-->|x|`` and
``-- x -->``), chains (``A --> B --> C``) and ``&`` (``A & B --> C``);
``subgraph`` blocks (nested; a node belongs to the first block that ends with it
named, as Mermaid decides); ``%%`` comments. ``classDef``, ``class``, ``style``,
``linkStyle``, ``click``, ``:::class``, ``direction`` inside a subgraph and
invisible links (``~~~``) are ignored and reported.

:func:`layout_mermaid` places the nodes in layers along the direction (ranks by
longest path, cycles broken at their back edges, order within a layer by
barycenter sweeps that keep each subgraph's members together, 50 between nodes
and between layers as Mermaid's defaults), and :func:`build_mermaid` writes
them through the canvas's write path: each node a shape with its label, each
edge an arrow bound at both ends (its label the arrow's text), each subgraph a
frame holding its members in a tldraw document, and in an Excalidraw document a
rectangle grouped with its members, which is what Excalidraw's own
``@excalidraw/mermaid-to-excalidraw`` makes (``subgraph_group_<id>``).

Shapes follow that package too: a circle and a double circle are ellipses (the
double circle with a second, inner ellipse in Excalidraw), a rhombus a diamond,
every other shape a rectangle (rounded for ``(text)`` and ``([text])``); in a
tldraw document the shapes that have a tldraw geo kind take it (``{{ }}`` a
hexagon, ``[/ /]`` a rhombus, ``[/ \\]`` a trapezoid, ``([ ])`` an oval). A
dotted edge is dashed, a thick edge wider; ``o`` and ``x`` ends are a dot and a bar.

Examples
--------
>>> chart = parse_mermaid('''flowchart LR
...     A[Start] --> B{Ready?}
...     B -->|yes| C((Go))
...     B -- no --> A''')
>>> [(n.id, n.shape, n.label) for n in chart.nodes.values()]
[('A', 'square', 'Start'), ('B', 'diamond', 'Ready?'), ('C', 'circle', 'Go')]
>>> [(e.start, e.end, e.label) for e in chart.edges]
[('A', 'B', None), ('B', 'C', 'yes'), ('B', 'A', 'no')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from spatialobs._errors import InvalidInputError
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.limits import echo

__all__ = ["parse_mermaid", "layout_mermaid", "build_mermaid", "Flowchart", "MermaidNode", "MermaidEdge",
           "Subgraph", "MermaidError", "Built", "NODE_SPACING", "RANK_SPACING", "EXCALIDRAW_TYPES", "TLDRAW_GEO"]

#: Mermaid's defaults (flowchart ``nodeSpacing`` and ``rankSpacing``).
NODE_SPACING = 50.0
RANK_SPACING = 50.0
#: Room around a subgraph's members, and above them for its title (*ours*).
SUBGRAPH_PADDING = 20.0
SUBGRAPH_TITLE = 36.0
#: Label padding inside a node, and its smallest size (*ours*, near Mermaid's rendered sizes).
NODE_PADDING = (30.0, 20.0)
NODE_MIN = (80.0, 50.0)
#: Element type each Mermaid shape becomes in Excalidraw (``@excalidraw/mermaid-to-excalidraw`` 2.2).
EXCALIDRAW_TYPES = {"circle": "ellipse", "doublecircle": "ellipse", "diamond": "diamond"}
#: tldraw geo kind of each Mermaid shape (rectangle for the others).
TLDRAW_GEO = {"circle": "ellipse", "doublecircle": "ellipse", "diamond": "diamond", "hexagon": "hexagon",
              "lean_right": "rhombus", "lean_left": "rhombus-2", "trapezoid": "trapezoid",
              "inv_trapezoid": "trapezoid", "stadium": "oval", "odd": "arrow-right"}
#: Mermaid shapes Excalidraw draws with rounded corners.
ROUNDED = frozenset({"round", "stadium"})

_HEADER = re.compile(r"^\s*(graph|flowchart)(?:\s+(TB|TD|BT|LR|RL)\b|\s*$|\s*;)", re.I)
_ID = re.compile(r"[A-Za-z0-9_\u00c0-\uffff]+(?:[.\-](?![-.=>])[A-Za-z0-9_\u00c0-\uffff]+)*")
# openers, longest first, with the shape and the closers that end them
_SHAPES: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = (
    ("(((", ((")))", "doublecircle"),)),
    ("((", (("))", "circle"),)),
    ("([", (("])", "stadium"),)),
    ("[[", (("]]", "subroutine"),)),
    ("[(", ((")]", "cylinder"),)),
    ("[/", (("/]", "lean_right"), ("\\]", "trapezoid"))),
    ("[\\", (("\\]", "lean_left"), ("/]", "inv_trapezoid"))),
    ("{{", (("}}", "hexagon"),)),
    ("(", ((")", "round"),)),
    ("[", (("]", "square"),)),
    ("{", (("}", "diamond"),)),
    (">", (("]", "odd"),)),
)
_IGNORED = ("classdef", "class", "style", "linkstyle", "click", "acctitle", "accdescr")
_MAX_TEXT = 200_000


class MermaidError(InvalidInputError):
    """A flowchart that cannot be read; the message names the line."""


@dataclass
class MermaidNode:
    """A flowchart node: id, label (the id when none is given) and Mermaid shape name."""

    id: str
    label: str
    shape: str = "square"


@dataclass
class MermaidEdge:
    """An edge: ends, label, ``stroke`` (normal, thick, dotted) and the heads at each end
    (``arrow``, ``circle``, ``cross`` or None)."""

    start: str
    end: str
    label: Optional[str] = None
    stroke: str = "normal"
    start_head: Optional[str] = None
    end_head: Optional[str] = "arrow"

    @property
    def kind(self) -> str:
        """Mermaid's edge type name (``arrow_point``, ``arrow_open``, ``double_arrow_circle`` ...)."""
        if self.end_head is None and self.start_head is None:
            return "arrow_open"
        head = {"arrow": "point", "circle": "circle", "cross": "cross"}[self.end_head or self.start_head or "arrow"]
        return ("double_arrow_" if self.start_head and self.end_head else "arrow_") + head


@dataclass
class Subgraph:
    """A subgraph: id, title, its direct members (node and subgraph ids) and parent subgraph."""

    id: str
    title: str
    members: List[str] = field(default_factory=list)
    parent: Optional[str] = None


@dataclass
class Flowchart:
    """A parsed flowchart: direction, nodes (in order of appearance), edges, subgraphs, ignored statements."""

    direction: str = "TB"
    nodes: Dict[str, MermaidNode] = field(default_factory=dict)
    edges: List[MermaidEdge] = field(default_factory=list)
    subgraphs: Dict[str, Subgraph] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)

    def subgraph_of(self, item: str) -> Optional[str]:
        """The subgraph that holds a node or subgraph directly, or None."""
        for s in self.subgraphs.values():
            if item in s.members:
                return s.id
        return None


# ---------------------------------------------------------------------- parsing
def _statements(text: str) -> List[Tuple[int, str]]:
    """(line number, statement) pairs: lines split at top-level ``;``, comments dropped."""
    out: List[Tuple[int, str]] = []
    for no, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("%%"):
            continue
        buf: List[str] = []
        depth, quote = 0, False
        for ch in line:
            if ch == '"':
                quote = not quote
            elif not quote and ch in "[({":
                depth += 1
            elif not quote and ch in "])}":
                depth = max(0, depth - 1)
            if ch == ";" and depth == 0 and not quote:
                if "".join(buf).strip():
                    out.append((no, "".join(buf).strip()))
                buf = []
                continue
            buf.append(ch)
        if "".join(buf).strip():
            out.append((no, "".join(buf).strip()))
    return out


def _clean_label(raw: str) -> str:
    s = raw.strip()
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        s = s[1:-1]
        if len(s) >= 2 and s[0] == "`" and s[-1] == "`":  # a markdown string: its text
            s = re.sub(r"\*\*(.+?)\*\*|\*(.+?)\*", lambda m: m.group(1) or m.group(2), s[1:-1])
    s = re.sub(r"<br\s*/?>", "\n", s, flags=re.I)
    s = re.sub(r"\s?(fa|fab):[a-zA-Z0-9-]+", "", s)  # Font Awesome icons are not drawn
    s = s.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return s.strip()


class _Reader:
    def __init__(self, s: str, no: int) -> None:
        self.s, self.i, self.no = s, 0, no

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def done(self) -> bool:
        self.ws()
        return self.i >= len(self.s)

    def fail(self, why: str) -> MermaidError:
        return MermaidError(f"mermaid line {self.no}: {why} at {echo(self.s[self.i:self.i + 30])}")

    def node(self) -> Tuple[str, Optional[str], Optional[str], Optional[str]]:
        """(id, label, shape, class) of a node reference."""
        self.ws()
        m = _ID.match(self.s, self.i)
        if not m:
            raise self.fail("expected a node id")
        nid = m.group(0)
        self.i = m.end()
        label = shape = None
        for opener, closers in _SHAPES:
            if not self.s.startswith(opener, self.i):
                continue
            j = self.i + len(opener)
            if j < len(self.s) and self.s[j] == '"':  # a quoted label: up to its closing quote
                k = self.s.find('"', j + 1)
                if k < 0:
                    raise self.fail("unterminated quoted label")
                body_end = k + 1
                for close, sh in closers:
                    if self.s.startswith(close, body_end):
                        label, shape, self.i = _clean_label(self.s[j:body_end]), sh, body_end + len(close)
                        break
                else:
                    raise self.fail(f"expected {closers[0][0]!r} after the label")
            else:
                best = None
                for close, sh in closers:
                    k = self.s.find(close, j)
                    if k >= 0 and (best is None or k < best[0]):
                        best = (k, close, sh)
                if best is None:
                    raise self.fail(f"no {closers[0][0]!r} closes the shape opened by {opener!r}")
                label, shape, self.i = _clean_label(self.s[j:best[0]]), best[2], best[0] + len(best[1])
            break
        cls = None
        if self.s.startswith(":::", self.i):
            m2 = re.compile(r":::([A-Za-z0-9_\-]+)").match(self.s, self.i)
            if m2:
                cls, self.i = m2.group(1), m2.end()
        return nid, label, shape, cls

    def group(self) -> List[Tuple[str, Optional[str], Optional[str], Optional[str]]]:
        out = [self.node()]
        while True:
            self.ws()
            if self.s.startswith("&", self.i):
                self.i += 1
                out.append(self.node())
            else:
                return out

    _LINK = re.compile(r"(?P<l><|(?<=\s)[ox])?(?P<body>-{2,}|={2,}|-\.+-|~{3,})(?P<r>>|[ox](?=[\s|]|$))?")
    _LABEL_START = re.compile(r"(?P<l><|(?<=\s)[ox])?(?P<body>--|==|-\.)(?=\s)")

    def link(self) -> Optional[Tuple[str, Optional[str], Optional[str], Optional[str]]]:
        """(stroke, start head, end head, label) of the link at the cursor, or None (no link there)."""
        self.ws()
        m = self._LABEL_START.match(self.s, self.i)
        if m:  # A -- text --> B
            body = m.group("body")
            close = {"--": r"-{2,}(?P<r>>|[ox](?=\s|$))?", "==": r"={2,}(?P<r>>|[ox](?=\s|$))?",
                     "-.": r"\.-+(?P<r>>|[ox](?=\s|$))?"}[body]
            m2 = re.compile(r"\s" + close).search(self.s, m.end())
            if m2:
                inline = _clean_label(self.s[m.end():m2.start()])
                self.i = m2.end()
                stroke = {"--": "normal", "==": "thick", "-.": "dotted"}[body]
                return stroke, _head(m.group("l")), _head(m2.group("r")), inline or None
        m = self._LINK.match(self.s, self.i)
        if not m:
            return None
        self.i = m.end()
        body = m.group("body")
        stroke = "invisible" if body.startswith("~") else "thick" if body.startswith("=") else (
            "dotted" if "." in body else "normal")
        label: Optional[str] = None
        self.ws()
        if self.s.startswith("|", self.i):
            j = self.i + 1
            while j < len(self.s) and self.s[j] == " ":
                j += 1
            q = self.s.find('"', j + 1) if j < len(self.s) and self.s[j] == '"' else -1
            k = self.s.find("|", q + 1 if q >= 0 else self.i + 1)
            if k < 0:
                raise self.fail("unterminated |label|")
            label = _clean_label(self.s[self.i + 1:k]) or None
            self.i = k + 1
        return stroke, _head(m.group("l")), _head(m.group("r")), label


def _head(ch: Optional[str]) -> Optional[str]:
    return {"<": "arrow", ">": "arrow", "o": "circle", "x": "cross"}.get(ch or "")


def parse_mermaid(text: str) -> Flowchart:
    """Read a Mermaid flowchart (see the module docstring for the subset).

    Raises
    ------
    MermaidError
        Not a flowchart (another diagram type, or no ``graph`` / ``flowchart``
        header), or a statement that cannot be read; the message names the line.

    Examples
    --------
    >>> c = parse_mermaid("graph TD\\n  subgraph one [First]\\n    a1 --> a2\\n  end\\n  a2 ==> b")
    >>> c.direction, c.subgraphs["one"].title, c.subgraphs["one"].members, c.edges[1].stroke
    ('TB', 'First', ['a1', 'a2'], 'thick')
    """
    if not isinstance(text, str):
        raise MermaidError(f"mermaid: the flowchart must be a string, got {type(text).__name__}")
    if len(text) > _MAX_TEXT:
        raise MermaidError(f"mermaid: {len(text)} characters, more than {_MAX_TEXT}")
    text = re.sub(r"%%\{.*?\}%%", "", text, flags=re.S)  # init directives
    text = re.sub(r"\A\s*---\n.*?\n---\s*\n", "", text, flags=re.S)  # front matter
    stmts = _statements(text)
    if not stmts:
        raise MermaidError("mermaid: the flowchart is empty")
    no, head = stmts[0]
    m = _HEADER.match(head)
    if not m:
        word = head.split()[0] if head.split() else head
        raise MermaidError(f"mermaid line {no}: not a flowchart ({word!r}); only 'graph' and 'flowchart' are read")
    chart = Flowchart(direction={"TD": "TB"}.get((m.group(2) or "TB").upper(), (m.group(2) or "TB").upper()))
    rest = head[m.end():].strip()
    body = ([(no, rest)] if rest else []) + stmts[1:]
    stack: List[Tuple[Subgraph, List[str]]] = []  # open subgraphs with the items named in them
    claimed: Dict[str, str] = {}
    auto = 0

    def mention(item: str) -> None:
        if stack and item not in stack[-1][1]:
            stack[-1][1].append(item)

    def define(nid: str, label: Optional[str], shape: Optional[str]) -> None:
        node = chart.nodes.get(nid)
        if node is None:
            chart.nodes[nid] = MermaidNode(nid, label if label is not None else nid, shape or "square")
        elif shape is not None:
            node.label, node.shape = (label if label is not None else node.label), shape
        mention(nid)

    for no, st in body:
        low = st.lower()
        word = low.split()[0] if low.split() else ""
        if word == "subgraph":
            spec = st[len("subgraph"):].strip()
            m2 = re.match(r'^([A-Za-z0-9_\-.]+)\s*\[(.*)\]\s*$', spec)
            if m2:
                sid, title = m2.group(1), _clean_label(m2.group(2))
            elif spec.startswith('"'):
                auto += 1
                sid, title = f"subGraph{auto - 1}", _clean_label(spec)
            elif spec and re.fullmatch(r"[A-Za-z0-9_\-.]+", spec):
                sid = title = spec
            else:
                auto += 1
                sid, title = f"subGraph{auto - 1}", _clean_label(spec) or f"subGraph{auto - 1}"
            if sid in chart.subgraphs or any(s.id == sid for s, _ in stack):
                raise MermaidError(f"mermaid line {no}: subgraph {sid!r} is defined twice")
            sg = Subgraph(sid, title, parent=stack[-1][0].id if stack else None)
            mention(sid)
            stack.append((sg, []))
            continue
        if word == "end" and low.strip() == "end":
            if not stack:
                raise MermaidError(f"mermaid line {no}: 'end' without a subgraph")
            sg, items = stack.pop()
            # as Mermaid: a node already in a subgraph that ended earlier stays there
            sg.members = [i for i in items if i not in claimed]
            for i in sg.members:
                claimed[i] = sg.id
            chart.subgraphs[sg.id] = sg
            continue
        if word == "direction":
            chart.notes.append(f"line {no}: 'direction' inside a subgraph is ignored (the chart's direction is used)")
            continue
        if word in _IGNORED:
            chart.notes.append(f"line {no}: {word} statement ignored (styles are not imported)")
            continue
        r = _Reader(st, no)
        prev = r.group()
        for nid, label, shape, cls in prev:
            define(nid, label, shape)
            if cls:
                chart.notes.append(f"line {no}: class {cls!r} of {nid!r} ignored")
        while not r.done():
            link = r.link()
            if link is None:
                raise r.fail("expected a link (-->, ---, -.->, ==> ...)")
            nxt = r.group()
            for nid, label, shape, cls in nxt:
                define(nid, label, shape)
                if cls:
                    chart.notes.append(f"line {no}: class {cls!r} of {nid!r} ignored")
            stroke, sh, eh, label = link
            if stroke == "invisible":
                chart.notes.append(f"line {no}: invisible link ~~~ not drawn")
            else:
                for a in prev:
                    for b in nxt:
                        chart.edges.append(MermaidEdge(a[0], b[0], label, stroke, sh, eh))
            prev = nxt
    if stack:
        raise MermaidError(f"mermaid: subgraph {stack[-1][0].id!r} has no 'end'")
    for e in chart.edges:  # an edge may name a subgraph; it is not a node then
        for end in (e.start, e.end):
            if end in chart.subgraphs and end in chart.nodes and chart.nodes[end].label == end:
                del chart.nodes[end]
    for s in chart.subgraphs.values():
        s.members = [m for m in s.members if m in chart.nodes or m in chart.subgraphs]
    return chart


# ---------------------------------------------------------------------- layout
@dataclass
class Layout:
    """Boxes (x, y, w, h) in page units relative to the chart's upper-left corner, per node and subgraph."""

    nodes: Dict[str, Tuple[float, float, float, float]]
    subgraphs: Dict[str, Tuple[float, float, float, float]]


def _cluster_path(chart: Flowchart, item: str) -> Tuple[str, ...]:
    path: List[str] = []
    s = chart.subgraph_of(item)
    while s is not None:
        path.append(s)
        s = chart.subgraphs[s].parent
    return tuple(reversed(path))


def layout_mermaid(chart: Flowchart, sizes: Mapping[str, Tuple[float, float]]) -> Layout:
    """Layered positions of a flowchart's nodes of the given sizes (w, h), and its subgraphs' boxes.

    Examples
    --------
    >>> c = parse_mermaid("graph LR; a --> b --> c")
    >>> lay = layout_mermaid(c, {k: (100.0, 40.0) for k in c.nodes})
    >>> [lay.nodes[k][:2] for k in "abc"]
    [(0.0, 0.0), (150.0, 0.0), (300.0, 0.0)]
    """
    ids = list(chart.nodes)
    horizontal = chart.direction in ("LR", "RL")
    # work top to bottom; a horizontal chart swaps the axes
    size = {k: (sizes[k][1], sizes[k][0]) if horizontal else sizes[k] for k in ids}
    succ: Dict[str, List[str]] = {k: [] for k in ids}
    for e in chart.edges:
        if e.start in succ and e.end in succ and e.start != e.end and e.end not in succ[e.start]:
            succ[e.start].append(e.end)
    # break cycles: drop the back edges of a depth-first walk in node order
    state: Dict[str, int] = {}
    dag: Dict[str, List[str]] = {k: [] for k in ids}
    for root in ids:
        if root in state:
            continue
        stack = [(root, iter(succ[root]))]
        state[root] = 1
        while stack:
            v, it = stack[-1]
            w = next(it, None)
            if w is None:
                state[v] = 2
                stack.pop()
                continue
            if state.get(w) == 1:
                continue  # a back edge
            dag[v].append(w)
            if w not in state:
                state[w] = 1
                stack.append((w, iter(succ[w])))
    rank = {k: 0 for k in ids}
    order_topo: List[str] = []
    indeg = {k: 0 for k in ids}
    for v in ids:
        for w in dag[v]:
            indeg[w] += 1
    queue = [k for k in ids if indeg[k] == 0]
    while queue:
        v = queue.pop(0)
        order_topo.append(v)
        for w in dag[v]:
            rank[w] = max(rank[w], rank[v] + 1)
            indeg[w] -= 1
            if indeg[w] == 0:
                queue.append(w)
    nranks = max(rank.values(), default=-1) + 1
    layers: List[List[str]] = [[] for _ in range(nranks)]
    for k in ids:
        layers[rank[k]].append(k)
    preds: Dict[str, List[str]] = {k: [] for k in ids}
    for v in ids:
        for w in dag[v]:
            preds[w].append(v)
    paths = {k: _cluster_path(chart, k) for k in ids}
    pos = {k: float(i) for layer in layers for i, k in enumerate(layer)}

    def sort_layer(layer: List[str], bary: Dict[str, float]) -> List[str]:
        # members of a subgraph stay together: sort by the barycenters of the blocks on each level
        def key_at(depth: int, items: List[str]) -> List[str]:
            blocks: Dict[str, List[str]] = {}
            order: List[str] = []
            for k in items:
                p = paths[k]
                name = p[depth] if len(p) > depth else "\0" + k
                if name not in blocks:
                    blocks[name] = []
                    order.append(name)
                blocks[name].append(k)
            def bc(name: str) -> float:
                mem = blocks[name]
                return sum(bary[m] for m in mem) / len(mem)
            out: List[str] = []
            for name in sorted(order, key=lambda n: (bc(n), order.index(n))):
                out.extend(blocks[name] if name.startswith("\0") else key_at(depth + 1, blocks[name]))
            return out
        return key_at(0, layer)

    for sweep in range(8):
        down = sweep % 2 == 0
        rng = range(1, nranks) if down else range(nranks - 2, -1, -1)
        for r in rng:
            nb = preds if down else dag
            bary = {}
            for k in layers[r]:
                ns = [pos[n] for n in nb[k] if n in pos]
                bary[k] = sum(ns) / len(ns) if ns else pos[k]
            layers[r] = sort_layer(layers[r], bary)
            for i, k in enumerate(layers[r]):
                pos[k] = float(i)
    if nranks:
        layers[0] = sort_layer(layers[0], {k: pos[k] for k in layers[0]})
    # coordinates: layers stacked with RANK_SPACING, nodes packed with NODE_SPACING (more between subgraphs)
    boxes: Dict[str, Tuple[float, float, float, float]] = {}
    y = 0.0
    depth_of = {k: len(paths[k]) for k in ids}
    for layer in layers:
        if not layer:
            continue
        depth_top = max((depth_of[k] for k in layer), default=0)
        x = 0.0
        placed: List[Tuple[str, float]] = []
        for i, k in enumerate(layer):
            if i:
                a, b = paths[layer[i - 1]], paths[k]
                common = 0
                while common < min(len(a), len(b)) and a[common] == b[common]:
                    common += 1
                x += NODE_SPACING + SUBGRAPH_PADDING * ((len(a) - common) + (len(b) - common))
            placed.append((k, x))
            x += size[k][0]
        hmax = max(size[k][1] for k in layer)
        offset = -x / 2
        for k, px in placed:
            kw, kh = size[k]
            boxes[k] = (px + offset, y + (hmax - kh) / 2, kw, kh)
        y += hmax + RANK_SPACING + (SUBGRAPH_TITLE if depth_top else 0.0)
    # subgraph boxes, innermost first
    sub: Dict[str, Tuple[float, float, float, float]] = {}

    def sub_box(sid: str) -> Optional[Tuple[float, float, float, float]]:
        if sid in sub:
            return sub[sid]
        inner = []
        for m in chart.subgraphs[sid].members:
            b = boxes.get(m) if m in chart.nodes else sub_box(m) if m in chart.subgraphs else None
            if b is not None:
                inner.append(b)
        if not inner:
            return None
        x0 = min(b[0] for b in inner) - SUBGRAPH_PADDING
        x1 = max(b[0] + b[2] for b in inner) + SUBGRAPH_PADDING
        y0 = min(b[1] for b in inner) - SUBGRAPH_PADDING - (SUBGRAPH_TITLE if not horizontal else 0.0)
        y1 = max(b[1] + b[3] for b in inner) + SUBGRAPH_PADDING + (SUBGRAPH_TITLE if horizontal else 0.0)
        sub[sid] = (x0, y0, x1 - x0, y1 - y0)
        return sub[sid]

    for sid in chart.subgraphs:
        sub_box(sid)
    # back to the chart's direction, then shifted so the upper-left corner is (0, 0)
    def orient(b: Tuple[float, float, float, float]) -> Tuple[float, float, float, float]:
        x, y, w, h = b
        if horizontal:
            x, y, w, h = y, x, h, w
        return x, y, w, h

    out_n = {k: orient(b) for k, b in boxes.items()}
    out_s = {k: orient(b) for k, b in sub.items()}
    every = list(out_n.values()) + list(out_s.values())
    if every:
        X1 = max(b[0] + b[2] for b in every)
        Y1 = max(b[1] + b[3] for b in every)
        flip_x = chart.direction == "RL"
        flip_y = chart.direction == "BT"

        def mirror(b: Tuple[float, float, float, float]) -> Tuple[float, float, float, float]:
            x, y, w, h = b
            if flip_x:
                x = X1 - x - w
            if flip_y:
                y = Y1 - y - h
            return x, y, w, h

        out_n = {k: mirror(b) for k, b in out_n.items()}
        out_s = {k: mirror(b) for k, b in out_s.items()}
        every = list(out_n.values()) + list(out_s.values())
        X0 = min(b[0] for b in every)
        Y0 = min(b[1] for b in every)
        out_n = {k: (b[0] - X0, b[1] - Y0, b[2], b[3]) for k, b in out_n.items()}
        out_s = {k: (b[0] - X0, b[1] - Y0, b[2], b[3]) for k, b in out_s.items()}
    return Layout(out_n, out_s)


# ---------------------------------------------------------------------- building
@dataclass
class Built:
    """What :func:`build_mermaid` wrote: ids created (in order), Mermaid id -> node id, the chart's
    outermost node (a group or frame holding it, or None), and notes."""

    created: List[str]
    aliases: Dict[str, str]
    group: Optional[str]
    notes: List[str]
    chart: Flowchart


def _node_size(label: str, shape: str, tldraw: bool) -> Tuple[float, float]:
    if tldraw:  # a geo label of size m: 22 px in tldraw's draw font
        from spatialobs.canvas.document.textmeasure import line_height_px, text_width

        lines = label.split("\n") or [""]
        tw = max((text_width(ln, "draw", 22.0) for ln in lines), default=0.0)
        th = line_height_px(22.0) * len(lines)
    else:  # the package's font size, 20 px
        from spatialobs.canvas.document.excalidraw_text import measure_text

        tw, th = measure_text(label, 5, 20.0)[:2]
    w = max(NODE_MIN[0], tw + 2 * NODE_PADDING[0])
    h = max(NODE_MIN[1], th + 2 * NODE_PADDING[1])
    if shape in ("circle", "doublecircle"):
        w = h = max(w, h)
    elif shape == "diamond":
        w, h = w * 1.5, h * 1.5
    elif shape in ("hexagon", "lean_right", "lean_left", "trapezoid", "inv_trapezoid", "odd"):
        w += h / 2
    return w, h


def build_mermaid(canvas: Canvas, text: str, *, parent: Optional[str] = None,
                  at: Tuple[Optional[float], Optional[float]] = (None, None), origin: Sequence[float] = (0.0, 0.0),
                  new_id: Optional[Callable[[str], str]] = None, tldraw: Optional[bool] = None) -> Built:
    """Write a Mermaid flowchart into a canvas as shapes, bound arrows and subgraph containers.

    Parameters
    ----------
    canvas : Canvas
    text : str
        The flowchart.
    parent : str, optional
        Node or page to put it in (default: the current page).
    at : (x, y)
        Page position of the chart's upper-left corner (default: 100 to the right of
        the page's content, level with its top; the origin on an empty page).
    new_id : callable, optional
        ``new_id(hint) -> id`` for every record made (default ``shape:<mermaid id>``,
        made unique).
    tldraw : bool, optional
        Whether styles are tldraw's (default: unless the document is Excalidraw).

    Returns
    -------
    Built

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> c = Canvas()
    >>> made = build_mermaid(c, "graph TD; a[Hello] --> b[World]")
    >>> [c.nodes[i].type for i in made.created], len(c.bindings)
    (['geo', 'geo', 'arrow'], 2)
    """
    from spatialobs.canvas.document.records import Binding
    from spatialobs.canvas.editing.position import to_local

    chart = parse_mermaid(text)
    if not chart.nodes:
        raise MermaidError("mermaid: the flowchart has no nodes")
    excalidraw = canvas.source_format == "excalidraw"
    if tldraw is None:
        tldraw = not excalidraw
    page = canvas._resolve_page(None) if parent is None else parent
    if page not in canvas.pages and page not in canvas.nodes:
        raise InvalidInputError(f"create_from_mermaid: no node or page {page!r}")

    def fresh(hint: str, prefix: str = "shape:") -> str:
        if new_id is not None and prefix == "shape:":
            return new_id(hint)
        base = prefix + re.sub(r"[^A-Za-z0-9_\-]+", "-", hint).strip("-")[:60]
        nid, k = base, 2
        while nid in canvas:
            nid, k = f"{base}-{k}", k + 1
        return nid

    sizes = {k: _node_size(n.label, n.shape, tldraw) for k, n in chart.nodes.items()}
    lay = layout_mermaid(chart, sizes)
    ax, ay = at
    if ax is None or ay is None:
        ext = canvas.page_extent(page) if page in canvas.pages else None
        if ax is None:
            ax = (ext[2] + 100.0) if ext is not None else float(origin[0])
        if ay is None:
            ay = ext[1] if ext is not None else float(origin[1])
    created: List[str] = []
    ids: Dict[str, str] = {}
    notes = [f"mermaid {n}" for n in chart.notes]
    with canvas.batch():
        # containers first (outermost first), so members go inside them
        container_of: Dict[str, str] = {}
        order = sorted(chart.subgraphs, key=lambda s: len(_cluster_path(chart, s)))
        for sid in order:
            sg = chart.subgraphs[sid]
            bx, by, bw, bh = lay.subgraphs.get(sid, (0.0, 0.0, 0.0, 0.0))
            outer = container_of.get(sg.parent, page) if sg.parent else page
            if excalidraw:
                gid = fresh("subgraph_group_" + sid, "group:")
                canvas.add({"id": gid, "type": "group", "parent": outer, "x": 0.0, "y": 0.0,
                            "props": {"synthesized": True}})
                _gx, _gy = to_local(canvas, gid, ax + bx, ay + by)
                rid = fresh(sid)
                canvas.add({"id": rid, "type": "rectangle", "parent": gid, "x": _gx, "y": _gy, "w": bw, "h": bh,
                            "text": sg.title, "style": {"verticalAlign": "top"}, "props": {}})
                created += [gid, rid]
                container_of[sid] = gid
                ids[sid] = rid
            else:
                lx, ly = to_local(canvas, outer, ax + bx, ay + by)
                fid = fresh(sid)
                canvas.add({"id": fid, "type": "frame", "parent": outer, "x": lx, "y": ly, "w": bw, "h": bh,
                            "name": sg.title, "props": {}})
                created.append(fid)
                container_of[sid] = fid
                ids[sid] = fid
        for k, n in chart.nodes.items():
            bx, by, bw, bh = lay.nodes[k]
            sg_id = chart.subgraph_of(k)
            holder = container_of[sg_id] if sg_id is not None else page
            lx, ly = to_local(canvas, holder, ax + bx, ay + by)
            nid = fresh(k)
            if excalidraw:
                etype = EXCALIDRAW_TYPES.get(n.shape, "rectangle")
                shape_props: Dict[str, Any] = {"roundness": {"type": 3}} if n.shape in ROUNDED else {}
                if n.shape == "doublecircle":  # an outer and an inner ellipse, grouped, as the package draws it
                    gid = fresh("doublecircle_" + k, "group:")
                    canvas.add({"id": gid, "type": "group", "parent": holder, "x": 0.0, "y": 0.0,
                                "props": {"synthesized": True}})
                    created.append(gid)
                    holder = gid
                    lx, ly = to_local(canvas, gid, ax + bx, ay + by)
                canvas.add({"id": nid, "type": etype, "parent": holder, "x": lx, "y": ly, "w": bw, "h": bh,
                            "text": n.label, "style": {"strokeWidth": 2}, "props": shape_props})
                if n.shape == "doublecircle":
                    inner = fresh(k + "-inner")
                    canvas.add({"id": inner, "type": "ellipse", "parent": holder, "x": lx + 5, "y": ly + 5,
                                "w": bw - 10, "h": bh - 10, "text": n.label,
                                "style": {"strokeWidth": 2}, "props": {"roundness": {"type": 3}}})
                    created.append(inner)
            else:
                geo = TLDRAW_GEO.get(n.shape, "rectangle")
                canvas.add({"id": nid, "type": "geo", "parent": holder, "x": lx, "y": ly, "w": bw, "h": bh,
                            "text": n.label, "style": {"font": "draw", "size": "m"},
                            "props": {"geo": geo, "growY": 0.0, "scale": 1.0, "font": "draw", "size": "m"}})
            created.append(nid)
            ids[k] = nid
        for e in chart.edges:
            a, b = ids.get(e.start), ids.get(e.end)
            if a is None or b is None:
                notes.append(f"mermaid edge {e.start} -> {e.end}: an end is missing; not drawn")
                continue
            sa, sb = chart.subgraph_of(e.start), chart.subgraph_of(e.end)
            holder = container_of[sa] if sa is not None and sa == sb else page
            if excalidraw and sa is not None and sa == sb:
                holder = container_of[sa]
            # straight between the centers; the bindings keep it on the shapes
            ba, bb = canvas.page_bounds(a), canvas.page_bounds(b)
            sx, sy = (ba[0] + ba[2]) / 2, (ba[1] + ba[3]) / 2
            ex, ey = (bb[0] + bb[2]) / 2, (bb[1] + bb[3]) / 2
            props: Dict[str, Any]
            if excalidraw:
                # Excalidraw's form: the points it draws, from outline to outline (it keeps stored points)
                (sx, sy), (ex, ey) = (_outline(ba, canvas.nodes[a].type, (ex, ey)),
                                      _outline(bb, canvas.nodes[b].type, (sx, sy)))
                props = {"points": [[0.0, 0.0], [ex - sx, ey - sy]]}
            else:
                props = {"start": {"x": 0.0, "y": 0.0}, "end": {"x": ex - sx, "y": ey - sy}, "bend": 0.0}
            lx, ly = to_local(canvas, holder, sx, sy)
            style: Dict[str, Any] = {}
            if tldraw:
                props.update({"kind": "arc", "arrowheadStart": _TL_HEAD[e.start_head],
                              "arrowheadEnd": _TL_HEAD[e.end_head], "scale": 1.0, "labelPosition": 0.5,
                              "size": "l" if e.stroke == "thick" else "m", "font": "draw",
                              "dash": "dashed" if e.stroke == "dotted" else "draw"})
                style = {"size": props["size"], "font": "draw", "dash": props["dash"]}
            else:
                props.update({"startArrowhead": _EX_HEAD[e.start_head], "endArrowhead": _EX_HEAD[e.end_head],
                              "roundness": {"type": 2}})
                style = {"strokeWidth": 4 if e.stroke == "thick" else 2,
                         "strokeStyle": "dashed" if e.stroke == "dotted" else "solid"}
            aid = fresh(f"{e.start}_{e.end}")
            canvas.add({"id": aid, "type": "arrow", "parent": holder, "x": lx, "y": ly,
                        "w": abs(ex - sx), "h": abs(ey - sy), "text": e.label, "style": style, "props": props})
            created.append(aid)
            for term, target in (("start", a), ("end", b)):
                bid = fresh(f"{aid.split(':', 1)[-1]}-{term}", "binding:")
                canvas.add(Binding(bid, "arrow", aid, target, term, (0.5, 0.5), False,
                                   {"isExact": False, "snap": "none"} if tldraw else {"focus": 0, "gap": 5}))
    top = [c for c in created if c in canvas.nodes and canvas.nodes[c].parent == page]
    return Built(created, ids, top[0] if len(top) == 1 else None, notes, chart)


#: Gap between an arrow's end and the outline it is bound to in Excalidraw (its binding ``gap``).
ARROW_GAP = 5.0


def _outline(box: Tuple[float, float, float, float], kind: str, toward: Tuple[float, float]) -> Tuple[float, float]:
    """Where the ray from a box's center toward a point leaves the shape drawn in it (plus the gap)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    a, b = (box[2] - box[0]) / 2, (box[3] - box[1]) / 2
    dx, dy = toward[0] - cx, toward[1] - cy
    n = (dx * dx + dy * dy) ** 0.5
    if n == 0 or a <= 0 or b <= 0:
        return cx, cy
    if kind == "ellipse":
        t = 1.0 / ((dx / a) ** 2 + (dy / b) ** 2) ** 0.5
    elif kind == "diamond":
        t = 1.0 / (abs(dx) / a + abs(dy) / b)
    else:
        t = min(a / abs(dx) if dx else float("inf"), b / abs(dy) if dy else float("inf"))
    t += ARROW_GAP / n
    return cx + dx * min(t, 1.0), cy + dy * min(t, 1.0)


_TL_HEAD = {None: "none", "arrow": "arrow", "circle": "dot", "cross": "bar"}
_EX_HEAD = {None: None, "arrow": "arrow", "circle": "circle", "cross": "bar"}
