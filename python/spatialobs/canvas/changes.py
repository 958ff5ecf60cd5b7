"""What changed in a canvas since an earlier observation, and who changed it.

Every :func:`~spatialobs.canvas.observe` returns a *token*; ``observe(...,
since=TOKEN)`` adds the changes made since the observation that returned it:
objects added, removed, moved, resized, rotated, restyled, retexted,
reparented, restacked or otherwise edited, and bindings made, broken or
changed, each with who made it (``"person"`` or ``"agent"``: the canvas's write
path knows, see :meth:`Canvas.by`).

How it works: the first token switches on a journal in the canvas's write path
(one entry per stored write: the item's old value and the write's origin;
rolled-back writes leave no entry). The value of an item at the token is the
old value of its first entry after the token; its value now is the stored one.
A change kind is reported when that aspect differs between the two, and it is
attributed to the origin of the last write that changed the aspect. The
journal keeps the last :data:`JOURNAL_LIMIT` writes; a token older than that
is refused with a clear error.

Change kinds of a node (the fields compared)
--------------------------------------------
``added`` / ``removed`` (the node exists at one end only), ``moved`` (``x``,
``y``: its position in its parent), ``resized`` (``w``, ``h``), ``rotated``
(``rotation``), ``reparented`` (``parent``), ``restacked`` (``index``, its place
among its siblings), ``retexted`` (``text``, ``name``), ``restyled`` (``style``,
``opacity``), ``edited`` (``type``, ``props``, ``locked``, ``hidden``; not Excalidraw's ``version``,
``versionNonce`` and ``updated``, which change with every edit).
Of a binding: ``bound`` (made), ``unbound`` (broken), ``rebound`` (any field).
Pages, cameras and the selection are not reported.

Relevance order: changes with a part made by the person first (the agent
knows its own), then additions and removals, then by the object's rank in the
observation (objects it kept first), then by id.
"""

from __future__ import annotations

import itertools
import math
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from spatialobs._errors import InvalidInputError, OutOfRangeError
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.document.records import Binding, Node

__all__ = ["JOURNAL_LIMIT", "NODE_KINDS", "BINDING_KINDS", "issue_token", "changes_since", "touched_since",
           "diff_values", "sync"]

#: Writes the journal of one canvas keeps; a token older than that has expired.
JOURNAL_LIMIT = 100_000
#: Change kinds of a node and the fields each compares, in report order.
NODE_KINDS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("moved", ("x", "y")),
    ("resized", ("w", "h")),
    ("rotated", ("rotation",)),
    ("reparented", ("parent",)),
    ("restacked", ("index",)),
    ("retexted", ("text", "name")),
    ("restyled", ("style", "opacity")),
    ("edited", ("type", "props", "locked", "hidden")),
)
#: Change kinds of a binding.
BINDING_KINDS = ("bound", "unbound", "rebound")
_SALT = os.urandom(3).hex()  # tokens of another process never match (secrets.token_hex, without its imports)
_SERIALS = itertools.count(1)


class _Journal(List[Tuple[str, str, Any, str]]):
    """The canvas's write journal: entries ``(kind, id, old value, origin)`` from ``offset`` on."""

    def __init__(self) -> None:
        super().__init__()
        self.serial = next(_SERIALS)
        self.offset = 0


def _journal(canvas: Canvas) -> _Journal:
    j = canvas._journal
    if not isinstance(j, _Journal):
        j = _Journal()
        canvas._journal = j
    return j


def issue_token(canvas: Canvas) -> str:
    """A token naming the canvas as it is now (switches the change journal on).

    Examples
    --------
    >>> from spatialobs.canvas import Canvas
    >>> c = Canvas()
    >>> t = issue_token(c)
    >>> changes_since(c, t)["changes"]
    []
    """
    if not isinstance(canvas, Canvas):
        raise InvalidInputError(f"canvas must be a Canvas, got {type(canvas).__name__}")
    j = _journal(canvas)
    cut = len(j) - JOURNAL_LIMIT
    if cut > 0 and canvas._log is None:  # inside a batch a rollback still needs the positions
        del j[:cut]
        j.offset += cut
    return f"{_SALT}-{j.serial}-{j.offset + len(j)}"


def _position(canvas: Canvas, token: Any) -> int:
    if not isinstance(token, str):
        raise InvalidInputError(f"since must be a token string from an earlier observation, got {token!r}")
    parts = token.split("-")
    j = canvas._journal
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        raise InvalidInputError(f"since token {token!r} is not a token of observe")
    if parts[0] != _SALT or not isinstance(j, _Journal) or int(parts[1]) != j.serial:
        raise InvalidInputError(f"since token {token!r} was issued for another document (or another process)")
    pos = int(parts[2])
    if pos > j.offset + len(j):
        raise InvalidInputError(f"since token {token!r} is not a token of this document")
    if pos < j.offset:
        raise OutOfRangeError(f"since token {token!r} has expired (a document remembers its last {JOURNAL_LIMIT} "
                              "writes); observe without since to start again")
    return pos


def _entries(canvas: Canvas, token: str) -> List[Tuple[str, str, Any, str]]:
    j = _journal(canvas)
    return list(j[_position(canvas, token) - j.offset:])


def touched_since(canvas: Canvas, token: str) -> Tuple[Set[str], Set[str]]:
    """Ids of the nodes and bindings written since ``token`` (whether or not they differ now).

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> t = issue_token(c)
    >>> _ = c.add(Node("a", "geo", "page:page"))
    >>> touched_since(c, t)
    ({'a'}, set())
    """
    nodes: Set[str] = set()
    binds: Set[str] = set()
    for kind, item, _old, _o in _entries(canvas, token):
        if kind == "node":
            nodes.add(item)
        elif kind == "binding":
            binds.add(item)
    return nodes, binds


#: Props an editor rewrites with every edit (Excalidraw's version counters and timestamp): not an edit themselves.
BOOKKEEPING_PROPS = frozenset({"version", "versionNonce", "updated"})


def _field(v: Any, name: str) -> Any:
    got = getattr(v, name)
    if name == "props" and not BOOKKEEPING_PROPS.isdisjoint(got):
        return {k: x for k, x in got.items() if k not in BOOKKEEPING_PROPS}
    return got


def _same(a: Any, b: Any, fields: Sequence[str]) -> bool:
    if a is b:
        return True
    if a is None or b is None:
        return False
    return all(_field(a, f) == _field(b, f) for f in fields)


def diff_values(old: Optional[Node], new: Optional[Node]) -> List[str]:
    """Change kinds between two values of one node (see the module docstring).

    Examples
    --------
    >>> from spatialobs.canvas import Node
    >>> a = Node("a", "geo", "page:page", "a1", 0, 0, 10, 10)
    >>> diff_values(a, Node("a", "geo", "page:page", "a1", 5, 0, 10, 20, style={"color": "red"}))
    ['moved', 'resized', 'restyled']
    >>> diff_values(None, a), diff_values(a, None), diff_values(a, a)
    (['added'], ['removed'], [])
    """
    if old is None and new is None:
        return []
    if old is None:
        return ["added"]
    if new is None:
        return ["removed"]
    return [k for k, fields in NODE_KINDS if not _same(old, new, fields)]


def _binding_kind(old: Optional[Binding], new: Optional[Binding]) -> Optional[str]:
    if old is None and new is None:
        return None
    if old is None:
        return "bound"
    if new is None:
        return "unbound"
    return None if old == new else "rebound"


def _round(v: float) -> int:
    return int(math.floor(v + 0.5))


def changes_since(
    canvas: Canvas,
    token: str,
    *,
    ranks: Optional[Mapping[str, int]] = None,
    max_changes: int = 100,
    origin: Sequence[float] = (0, 0),
) -> Dict[str, Any]:
    """The changes made to ``canvas`` since the observation that returned ``token``.

    Parameters
    ----------
    canvas : Canvas
    token : str
        From :func:`issue_token` (an observation's ``token``).
    ranks : mapping id -> int, optional
        Rank of each object in the current observation (its relevance order).
    max_changes : int, default 100
        Records kept (most relevant first); the rest are counted in ``omitted``.
    origin : (x, y)
        Action frame of the ``actionBounds`` given for objects that exist now.

    Returns
    -------
    dict
        ``{"since": token, "changes": [record, ...], "omitted": int, "by": {"person": n, "agent": n}}``;
        a node record is ``{"id", "type", "kinds": {kind: origin}, "actionBounds"?}``, a
        binding record ``{"id", "type": "binding", "kinds": {kind: origin}, "from", "to", "terminal"}``;
        ``by`` counts the records with a part made by each.

    Raises
    ------
    InvalidInputError
        A token that is not one, or one of another document.
    OutOfRangeError
        An expired token.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> c = Canvas()
    >>> _ = c.add(Node("a", "geo", "page:page", "a1", 0, 0, 10, 10))
    >>> t = issue_token(c)
    >>> _ = c.update("a", x=40)
    >>> with c.by("agent"):
    ...     _ = c.update("a", style={"color": "red"})
    >>> changes_since(c, t)["changes"]
    [{'id': 'a', 'type': 'geo', 'kinds': {'moved': 'person', 'restyled': 'agent'}, 'actionBounds': {'x': 40, 'y': 0, 'w': 10, 'h': 10}}]
    """
    if isinstance(max_changes, bool) or not isinstance(max_changes, int) or max_changes < 0:
        raise InvalidInputError(f"max_changes must be a non-negative integer, got {max_changes!r}")
    ox, oy = (float(v) for v in origin)
    entries = _entries(canvas, token)
    # per item: the values along its writes since the token, and who made each write
    chains: Dict[Tuple[str, str], Tuple[List[Any], List[str]]] = {}
    for kind, item, old, who in entries:
        if kind == "page":
            continue
        vals, whos = chains.setdefault((kind, item), ([], []))
        vals.append(old)
        whos.append(who)
    records: List[Tuple[Tuple[Any, ...], Dict[str, Any]]] = []
    nodes, binds = canvas.nodes, canvas.bindings
    rank = ranks or {}
    far = len(rank) + len(chains) + 1
    for (kind, item), (vals, whos) in chains.items():
        now: Any = nodes.get(item) if kind == "node" else binds.get(item)
        seq = vals + [now]
        rec: Dict[str, Any]
        if kind == "node":
            found = diff_values(seq[0], now)
            if not found:
                continue
            by: Dict[str, str] = {}
            for k in found:
                fields = next((f for name, f in NODE_KINDS if name == k), ())
                for i in range(len(whos) - 1, -1, -1):  # the last write that changed this aspect
                    a, b = seq[i], seq[i + 1]
                    if (a is None) != (b is None) or (a is not None and not _same(a, b, fields)):
                        by[k] = whos[i]
                        break
                else:  # pragma: no cover - the ends differ, so some step changed it
                    by[k] = whos[-1]
            ref = now if now is not None else seq[0]
            rec = {"id": item, "type": ref.type, "kinds": by}
            if now is not None:
                b = canvas.page_bounds(item)
                rec["actionBounds"] = {"x": _round(b[0] - ox), "y": _round(b[1] - oy),
                                       "w": _round(b[2] - b[0]), "h": _round(b[3] - b[1])}
        else:
            bk = _binding_kind(seq[0], now)
            if bk is None:
                continue
            who_b = whos[-1]
            for i in range(len(whos) - 1, -1, -1):
                if seq[i] != seq[i + 1]:
                    who_b = whos[i]
                    break
            ref_b: Binding = now if now is not None else seq[0]
            rec = {"id": item, "type": "binding", "kinds": {bk: who_b}, "from": ref_b.from_id, "to": ref_b.to_id,
                   "terminal": ref_b.terminal}
        kinds = rec["kinds"]
        person = "person" in kinds.values()
        structural = bool({"added", "removed", "bound", "unbound"} & set(kinds))
        key = (0 if person else 1, 0 if structural else 1, rank.get(item, far), item)
        records.append((key, rec))
    records.sort(key=lambda kr: kr[0])
    kept = [r for _, r in records[:max_changes]]
    counts = {"person": 0, "agent": 0}
    for _, r in records:
        for who in set(r["kinds"].values()):
            counts[who] = counts.get(who, 0) + 1
    return {"since": token, "changes": kept, "omitted": len(records) - len(kept), "by": counts}


def sync(canvas: Canvas, target: Canvas, *, only: Optional[Tuple[Iterable[str], Iterable[str]]] = None,
         exact: bool = False) -> int:
    """Make ``canvas`` equal to ``target`` through the write path, as one transaction.

    Nodes and bindings that differ are removed, added or updated with
    :meth:`Canvas.add`, :meth:`Canvas.update` and :meth:`Canvas.remove`, so the
    writes carry the canvas's current origin (wrap the call in :meth:`Canvas.by`)
    and show up in :func:`changes_since`. Pages are added when missing; cameras,
    selection and current page are copied. With ``only`` = (node ids, binding
    ids) just those items are brought back to their value in ``target`` (an undo
    of the writes that touched them). With ``exact`` every node that differs is
    stored whole with :meth:`Canvas.put` (no text re-measured: the target's sizes
    come from an editor that measured them). Nothing changes when a write fails.

    Returns
    -------
    int
        The number of items written.

    Examples
    --------
    >>> from spatialobs.canvas import Canvas, Node
    >>> a = Canvas()
    >>> _ = a.add(Node("x", "geo", "page:page", "a1", 0, 0, 10, 10))
    >>> b = a.copy()
    >>> _ = b.update("x", x=30)
    >>> _ = b.add(Node("y", "text", "page:page", text="new"))
    >>> sync(a, b), a == b
    (2, True)
    """
    if not isinstance(canvas, Canvas) or not isinstance(target, Canvas):
        raise InvalidInputError("sync needs two canvases")
    if only is None:
        node_ids: Set[str] = set(canvas.nodes) | set(target.nodes)
        bind_ids: Set[str] = set(canvas.bindings) | set(target.bindings)
    else:
        node_ids, bind_ids = set(only[0]), set(only[1])
    tn, tb = target.nodes, target.bindings
    written = 0
    with canvas.batch():
        for pid in target.page_ids():
            if pid not in canvas.pages:
                canvas.add(target.pages[pid])
                written += 1
        for bid in sorted(bind_ids):
            cur = canvas.bindings.get(bid)
            if cur is not None and tb.get(bid) != cur:
                canvas.remove(bid)
                written += 1
        gone = [i for i in node_ids if i in canvas.nodes and i not in tn]
        for nid in gone:
            if nid in canvas.nodes:  # may have gone with an ancestor
                canvas.remove(nid)
                written += 1
        # missing nodes in the target's order (so both serialize alike), a parent before its children
        missing = {i for i in node_ids if i in tn and i not in canvas.nodes}
        for nid in [i for i in tn if i in missing]:
            chain = []
            while nid in missing:
                chain.append(nid)
                missing.discard(nid)
                nid = tn[nid].parent
            for k in reversed(chain):
                canvas.put(tn[k]) if exact else canvas.add(tn[k])
                written += 1
        for nid in sorted(node_ids):
            cur_n, want = canvas.nodes.get(nid), tn.get(nid)
            if cur_n is None or want is None or cur_n == want:
                continue
            if exact:
                canvas.put(want)
                written += 1
                continue
            fields: Dict[str, Any] = {}
            for f in ("type", "parent", "index", "x", "y", "w", "h", "rotation", "text", "name", "opacity",
                      "locked", "hidden"):
                if getattr(cur_n, f) != getattr(want, f):
                    fields[f] = getattr(want, f)
            for f in ("style", "props"):
                a, b = getattr(cur_n, f), getattr(want, f)
                if a != b:
                    fields[f] = {**{k: None for k in a if k not in b}, **b}
            canvas.update(nid, **fields)
            written += 1
        for bid in sorted(bind_ids):
            want_b = tb.get(bid)
            if want_b is not None and bid not in canvas.bindings:
                canvas.add(want_b)
                written += 1
        if only is None:
            canvas.cameras = dict(target.cameras)
            canvas.selection = dict(target.selection)
            if target.current_page in canvas.pages:
                canvas.current_page = target.current_page
    return written
