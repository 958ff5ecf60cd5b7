"""A canvas kept equal to the records of a live editor (tldraw's store, Excalidraw's scene).

A live editor holds the document as its own records: tldraw's store records (pages,
shapes, bindings, assets, the document record) or Excalidraw's elements. A
:class:`Mirror` keeps those records beside a :class:`~spatialobs.canvas.Canvas` and
carries changes both ways through the format modules' record mapping:

* :meth:`Mirror.apply`: an edit made in the editor (whole records put, field patches,
  removals) becomes writes to the canvas, stored as the editor measured them
  (:meth:`Canvas.put`: no text re-measured), attributed to whoever the caller says;
* :meth:`Mirror.export`: writes made to the canvas by anyone else (an agent's ops,
  an undo, a reload) become the records that changed, written by
  :func:`~spatialobs.canvas.formats.tldraw.to_tldraw` /
  :func:`~spatialobs.canvas.formats.excalidraw.to_excalidraw` from the current
  records, so an unchanged record is passed through as the very same object.

After each step the canvas's source is *rebased* on the current records (they become
what the writer compares against), so both directions cost a pass over records and
nodes that mostly compares object identities. The first editor to open a document
loads :meth:`Mirror.document` and sends back what it made of it (tldraw migrates old
schemas and may rewrite index keys; Excalidraw restores elements):
:meth:`Mirror.adopt` makes those records the mirror's, and the canvas follows.

Patches: ``{"id", "set": {path: value}, "unset": [path]}``, where a path is a
top-level field (``"x"``) or a field one level down (``"props.color"``,
``"meta.note"``).

Examples
--------
>>> from spatialobs.canvas import load
>>> m = Mirror.of(load({"type": "excalidraw", "elements": [
...     {"id": "r", "type": "rectangle", "x": 0, "y": 0, "width": 10, "height": 20, "index": "a0"}]}))
>>> m.adopt(m.document()["elements"])
([], [])
>>> m.apply(patch=[{"id": "r", "set": {"x": 40, "version": 2}}])
([], [])
>>> m.canvas.page_bounds("r")
(40.0, 0.0, 50.0, 20.0)
"""

from __future__ import annotations

import copy
import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from spatialobs._errors import InvalidInputError, SpatialObsError
from spatialobs.canvas.changes import issue_token, sync, touched_since
from spatialobs.canvas.document.model import Canvas
from spatialobs.canvas.document.records import Binding, Diagnostic, Node, Page
from spatialobs.canvas.document.sanitize import is_mapping, sanitize_binding_fields, sanitize_node_fields
from spatialobs.canvas.limits import one_line

__all__ = ["Mirror", "TldrawMirror", "ExcalidrawMirror", "RecordDiff", "merge_patch", "DOCUMENT_TYPES"]

#: (records put, ids removed) of one change.
RecordDiff = Tuple[List[Dict[str, Any]], List[str]]
#: tldraw record types a live document holds (document scope); session records stay in the editor.
DOCUMENT_TYPES = frozenset({"document", "page", "shape", "binding", "asset"})


def _echo(v: Any) -> str:
    return one_line(repr(v))[:80]


def merge_patch(record: Mapping[str, Any], patch: Mapping[str, Any], *, where: str = "patch") -> Dict[str, Any]:
    """``record`` with a patch's ``set`` and ``unset`` paths applied (a new dict; nested dicts copied).

    Examples
    --------
    >>> merge_patch({"id": "a", "x": 1, "props": {"w": 2, "h": 3}}, {"set": {"x": 5, "props.w": 9}, "unset": ["props.h"]})
    {'id': 'a', 'x': 5, 'props': {'w': 9}}
    >>> merge_patch({"id": "a"}, {"set": {"id": "b"}})
    Traceback (most recent call last):
    ...
    spatialobs._errors.InvalidInputError: patch of 'a': the id of a record cannot change
    """
    out = dict(record)
    sets = patch.get("set") or {}
    unsets = patch.get("unset") or []
    if not is_mapping(sets) or not isinstance(unsets, list):
        raise InvalidInputError(f"{where} of {_echo(record.get('id'))}: 'set' must be an object and 'unset' a list")
    copied: Set[str] = set()

    def parent_of(path: Any) -> Tuple[Dict[str, Any], str]:
        if not isinstance(path, str) or not path:
            raise InvalidInputError(f"{where} of {_echo(record.get('id'))}: a path must be a non-empty string, got "
                                    f"{_echo(path)}")
        head, dot, tail = path.partition(".")
        if not dot:
            return out, head
        if not tail or "." in tail:
            raise InvalidInputError(f"{where} of {_echo(record.get('id'))}: path {_echo(path)} must be 'field' or "
                                    "'field.key'")
        inner = out.get(head)
        if head not in copied:
            if inner is None:
                inner = {}
            elif not is_mapping(inner):
                raise InvalidInputError(f"{where} of {_echo(record.get('id'))}: field {head!r} is not an object")
            inner = out[head] = dict(inner)
            copied.add(head)
        assert isinstance(inner, dict)
        return inner, tail

    for path, value in sets.items():
        if path in ("id", "typeName") and value != record.get(path):
            raise InvalidInputError(f"{where} of {_echo(record.get('id'))}: the {path} of a record cannot change")
        target, key = parent_of(path)
        target[key] = value
    for path in unsets:
        if path in ("id", "typeName"):
            raise InvalidInputError(f"{where} of {_echo(record.get('id'))}: the {path} of a record cannot be unset")
        target, key = parent_of(path)
        target.pop(key, None)
    return out


class Mirror:
    """The records of a live editor and the canvas that follows them (see the module docstring).

    Use :meth:`of` to make the mirror for a canvas's format.

    Attributes
    ----------
    canvas : Canvas
    records : dict
        Record id -> record, in the editor's order (Excalidraw: the scene's array order).
    live : bool
        Whether the records came from an editor (:meth:`adopt`).
    """

    format = "?"

    def __init__(self, canvas: Canvas) -> None:
        self.canvas = canvas
        self.records: Dict[str, Dict[str, Any]] = {}
        self.live = False
        self._mark: Optional[str] = None

    @staticmethod
    def of(canvas: Canvas, editor: Optional[str] = None) -> "Mirror":
        """The mirror for ``editor`` (``"tldraw"`` or ``"excalidraw"``; default: the canvas's format,
        tldraw for a native canvas)."""
        fmt = editor or canvas.source_format
        if fmt == "excalidraw":
            return ExcalidrawMirror(canvas)
        if fmt in (None, "tldraw", "native"):
            return TldrawMirror(canvas)
        raise InvalidInputError(f"no live editor for format {fmt!r} (tldraw or excalidraw)")

    # the format's own parts
    def document(self) -> Dict[str, Any]:
        """The document an editor loads: the file the canvas writes, or the adopted records."""
        raise NotImplementedError

    def adopt(self, records: Sequence[Any], schema: Any = None, *, by: str = "person") -> RecordDiff:
        """Take an editor's records (after it loaded :meth:`document`) as the mirror's; the canvas follows.

        Returns the corrections: records the canvas writes differently (normally none).
        """
        raise NotImplementedError

    def _write(self, new: Dict[str, Dict[str, Any]], removed: Set[str], order_changed: bool) -> None:
        raise NotImplementedError

    def _export_records(self) -> List[Any]:
        raise NotImplementedError

    #: Whether the canvas may write more than an editor's edit says (then apply exports the difference).
    _side_effects = True

    def _rebase(self, made: Optional[Mapping[str, Any]] = None, removed: Iterable[str] = ()) -> None:
        """Make the current records the writer's reference: ``made`` (id -> node, binding or page read from
        the records an edit wrote) and ``removed`` update the previous reference; without them the canvas
        as it is now is the reference (it equals the records)."""
        raise NotImplementedError

    def _check(self, rec: Any, where: str) -> Dict[str, Any]:
        raise NotImplementedError

    # shared
    def apply(self, put: Sequence[Any] = (), patch: Sequence[Any] = (), remove: Sequence[Any] = (), *,
              by: str = "person") -> RecordDiff:
        """Apply an editor's edit to the records and the canvas, as one transaction by ``by``.

        Parameters
        ----------
        put : records
            Whole records (new or replacing).
        patch : patches
            ``{"id", "set"?, "unset"?}`` of existing records; one whose record is gone
            (removed meanwhile) is dropped, and the returned diff removes it again.
        remove : ids

        Returns
        -------
        (put, remove)
            The corrections the editor needs to match the service: records the canvas
            wrote differently from the edit (a removed frame's children, bindings that
            lost an end, a patch of a removed record), and ids removed.

        Raises
        ------
        InvalidInputError
            A malformed record or patch, a record the editor would refuse, a parent or
            binding end that does not exist; it names the record. Nothing changes.
        """
        if not self.live:
            raise InvalidInputError("the document has no live editor records yet (adopt first)")
        new: Dict[str, Dict[str, Any]] = {}
        dropped: List[str] = []
        for k, rec in enumerate(put):
            clean = self._check(rec, f"put #{k}")
            new[clean["id"]] = clean
        for k, p in enumerate(patch):
            if not is_mapping(p) or not isinstance(p.get("id"), str):
                raise InvalidInputError(f"patch #{k} must be an object with a string id, got {_echo(p)}")
            pid = p["id"]
            base = new.get(pid, self.records.get(pid))
            if base is None:
                dropped.append(pid)
                continue
            new[pid] = self._check(merge_patch(base, p, where=f"patch #{k}"), f"patch #{k}")
        removed: Set[str] = set()
        for k, rid in enumerate(remove):
            if not isinstance(rid, str):
                raise InvalidInputError(f"remove #{k} must be a record id string, got {_echo(rid)}")
            if rid in new:
                raise InvalidInputError(f"record {_echo(rid)} is both put and removed")
            if rid in self.records:
                removed.add(rid)
        order_changed = any(rid not in self.records or self.records[rid].get("index") != r.get("index")
                            for rid, r in new.items())
        token = issue_token(self.canvas)
        before = dict(self.records)
        self._made: Dict[str, Any] = {}
        try:
            with self.canvas.by(by), self.canvas.batch():
                self._write(new, removed, order_changed)
                for rid, r in new.items():
                    self.records[rid] = r
                for rid in removed:
                    self.records.pop(rid, None)
                if order_changed:
                    self._reorder()
        except BaseException:
            self.records = before
            raise
        # the records are now the editor's: the source's reference values are what they say (the items
        # the edit wrote, as read from its records), so what the canvas wrote besides shows up in export
        self._rebase(self._made, removed)
        self._mark = token  # export looks at every write of the edit (those the records say compare equal)
        touched_nodes, touched_bindings = touched_since(self.canvas, token)
        out_put: List[Dict[str, Any]] = []
        out_remove: List[str] = list(dropped)
        if not (touched_nodes | touched_bindings) <= (set(new) | removed) and self._side_effects:
            with self.canvas.by(by):
                out_put, more = self.export()
            out_remove += more
        return out_put, out_remove

    def _reorder(self) -> None:
        pass

    def export(self) -> RecordDiff:
        """Records that changed since the last step (written by others), and ids removed."""
        out = self._export_records()
        fresh: Dict[str, Dict[str, Any]] = {}
        for r in out:
            if is_mapping(r) and isinstance(r.get("id"), str):
                fresh[r["id"]] = r  # type: ignore[assignment]
        old = self.records
        put = [r for rid, r in fresh.items() if old.get(rid) is not r and old.get(rid) != r]
        remove = [rid for rid in old if rid not in fresh]
        self.records = fresh
        if put:
            # the canvas as the importer reads the records it wrote (a label's richText, props the
            # writer fills in), so that the service's document is exactly the editors'
            with self.canvas.batch():
                self._follow(put)
        self._rebase()
        return put, remove

    def _follow(self, put: List[Dict[str, Any]]) -> None:
        raise NotImplementedError


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _topological(recs: Iterable[Dict[str, Any]], key: str) -> List[Dict[str, Any]]:
    """Records with each one after the record its ``key`` field names (when that is among them)."""
    by_id = {r["id"]: r for r in recs}
    out: List[Dict[str, Any]] = []
    state: Dict[str, int] = {}
    for start in by_id:
        path: List[str] = []
        cur: Any = start
        while isinstance(cur, str) and cur in by_id and cur not in state:
            state[cur] = 1
            path.append(cur)
            cur = by_id[cur].get(key)
        for rid in reversed(path):
            state[rid] = 2
            out.append(by_id[rid])
    return out


class TldrawMirror(Mirror):
    """The store records of a live tldraw editor (document scope) and the canvas.

    The records are kept in the editor's schema (the ``schema`` the editor reported),
    so the saved file is the one the editor itself would save.
    """

    format = "tldraw"

    def __init__(self, canvas: Canvas) -> None:
        super().__init__(canvas)
        self.schema: Any = None
        self._versions: Any = None
        self._sent: Optional[Tuple[Dict[str, Any], Set[str]]] = None
        self._templates: Dict[str, Mapping[str, Any]] = {}

    def document(self) -> Dict[str, Any]:
        """A ``.tldr`` file: :meth:`Canvas.to_tldraw` until adopted, then the adopted records."""
        if self.live:
            return {"tldrawFileFormatVersion": 1, "schema": self.schema, "records": list(self.records.values())}
        from spatialobs.canvas.formats.tldraw import to_tldraw

        doc = to_tldraw(self.canvas)
        if "records" not in doc:  # a store or editor snapshot: the same records as a file
            store = doc.get("store") or (doc.get("document") or {}).get("store") or {}
            schema = doc.get("schema") or (doc.get("document") or {}).get("schema")
            doc = {"tldrawFileFormatVersion": 1, "schema": schema, "records": list(store.values())}
        # what adopt_changes needs: the records sent, and which of them the writer made anew (the
        # others are the file's own, from which the canvas was read)
        src = self.canvas._source
        raw = {id(r) for r in getattr(src, "records", ())}
        self._sent = (doc, {r["id"] for r in doc["records"] if is_mapping(r) and id(r) not in raw
                            and isinstance(r.get("id"), str)})
        return doc

    def adopt_changes(self, put: Sequence[Any], remove: Sequence[Any], schema: Any, *,
                      by: str = "person") -> RecordDiff:
        """:meth:`adopt` from the editor's differences to the document it was sent.

        An editor keeps most records as they were sent (those its migrations leave alone); it
        sends only those it changed (``put``) or dropped (``remove``), and its ``schema``. The
        canvas re-reads those, the records the writer made anew and the bound arrows (which the
        file's reading may have moved), not the whole document.
        """
        from spatialobs.canvas.formats import tldraw_schema as tschema

        sent = getattr(self, "_sent", None)
        if sent is None or self.live:
            raise InvalidInputError("adopt: no document was sent to this editor to differ from")
        doc, regenerated = sent
        if not is_mapping(schema):
            raise InvalidInputError("adopt: the editor's schema must be an object")
        recs: Dict[str, Dict[str, Any]] = {}
        for r in doc["records"]:
            if is_mapping(r) and isinstance(r.get("id"), str) and r.get("typeName") in DOCUMENT_TYPES:
                recs[r["id"]] = r  # type: ignore[assignment]
        changed: Set[str] = set()
        for k, r in enumerate(put):
            if not is_mapping(r) or not isinstance(r.get("id"), str) or not isinstance(r.get("typeName"), str):
                raise InvalidInputError(f"adopt: record #{k} must be an object with a string id and typeName, got "
                                        f"{_echo(r)}")
            if r["typeName"] in DOCUMENT_TYPES:
                recs[r["id"]] = dict(r)
                changed.add(r["id"])
        for rid in remove:
            if isinstance(rid, str):
                recs.pop(rid, None)
        c = self.canvas
        again = changed | regenerated | {i for i, r in recs.items() if r.get("type") == "arrow"}
        if len(again) > len(recs) // 4:  # most records differ (a migrated schema): one bulk read is faster
            self._sent = None
            return self.adopt(list(recs.values()), schema, by=by)
        self.schema = copy.deepcopy(dict(schema))
        self._versions = tschema.SchemaVersions.of(self.schema)
        self.records = recs
        self._templates = {}
        for r in recs.values():
            if r.get("typeName") == "shape":
                self._templates.setdefault(str(r.get("type")), r)
        with c.by(by), c.batch():
            # items the records no longer hold: dropped by the editor, or read from a form it migrated
            # (arrow bindings kept in an arrow's props become binding records of their own)
            for rid in [b for b in c.bindings if b not in recs] + [n for n in c.nodes if n not in recs]:
                if rid in c.nodes or rid in c.bindings:
                    c.remove(rid)
            for pid in [p for p in c.pages if p not in recs]:
                c.remove(pid)
            self._follow([recs[i] for i in again if i in recs])
        self.live = True
        self._sent = None
        self._rebase()
        with c.by(by):
            return self.export()

    @staticmethod
    def read(records: Sequence[Any], schema: Any) -> Canvas:
        """The canvas of a running editor's records (bound arrows stay where the editor has them)."""
        from spatialobs.canvas.formats.tldraw import from_tldraw

        return from_tldraw({"tldrawFileFormatVersion": 1, "schema": schema, "records": list(records)},
                           arrange_arrows=False)

    def adopt(self, records: Sequence[Any], schema: Any = None, *, by: str = "person") -> RecordDiff:
        from spatialobs.canvas.formats import tldraw_schema as tschema

        if not is_mapping(schema):
            raise InvalidInputError("adopt: the editor's schema must be an object")
        recs: List[Dict[str, Any]] = []
        for k, r in enumerate(records):
            if not is_mapping(r) or not isinstance(r.get("id"), str) or not isinstance(r.get("typeName"), str):
                raise InvalidInputError(f"adopt: record #{k} must be an object with a string id and typeName, got "
                                        f"{_echo(r)}")
            if r["typeName"] in DOCUMENT_TYPES:
                recs.append(dict(r))
        self.schema = copy.deepcopy(dict(schema))
        self._versions = tschema.SchemaVersions.of(self.schema)
        fresh = self.read(recs, self.schema)
        c = self.canvas
        keep = (dict(c.cameras), dict(c.selection), c.current_page)
        with c.by(by), c.batch():
            sync(c, fresh, exact=True)
            for pid in [p for p in c.page_ids() if p not in fresh.pages]:
                c.remove(pid)
        c.cameras = {p: v for p, v in keep[0].items() if p in c.pages}
        c.selection = {p: s for p, s in keep[1].items() if p in c.pages}
        c.current_page = keep[2] if keep[2] in c.pages else next(iter(c.page_ids()), None)
        self.records = {r["id"]: r for r in recs}
        self._templates = dict(fresh._source.templates)
        self.live = True
        self._rebase()
        with c.by(by):
            return self.export()

    def _rebase(self, made: Optional[Mapping[str, Any]] = None, removed: Iterable[str] = ()) -> None:
        from spatialobs.canvas.formats.tldraw import TldrawSource

        c = self.canvas
        old = c._source
        if made is None or not isinstance(old, TldrawSource):
            nodes, bindings, pages = dict(c._nodes), dict(c._bindings), dict(c._pages)
        else:
            nodes, bindings, pages = dict(old.origin_nodes), dict(old.origin_bindings), dict(old.origin_pages)
            for rid in removed:
                nodes.pop(rid, None)
                bindings.pop(rid, None)
                pages.pop(rid, None)
            stores: Dict[type, Dict[str, Any]] = {Node: nodes, Binding: bindings, Page: pages}
            for rid, item in made.items():
                stores[type(item)][rid] = item
        c._source = TldrawSource(
            format="tldraw", form="file", top={"tldrawFileFormatVersion": 1, "schema": self.schema},
            records=list(self.records.values()), origin_nodes=nodes, origin_bindings=bindings,
            origin_pages=pages, origin_cameras=dict(c.cameras), origin_selection=dict(c.selection),
            origin_current=c.current_page, props_bindings=False, rich_text=True,
            screen=getattr(old, "screen", (1280.0, 720.0)), templates=self._templates)
        self._mark = issue_token(c)

    def _follow(self, put: List[Dict[str, Any]]) -> None:
        from spatialobs.canvas.formats.tldraw import _binding_record_fields, _shape_node

        c = self.canvas
        diags: List[Diagnostic] = []
        for r in put:
            if r.get("typeName") == "page":
                name, idx = r.get("name"), r.get("index")
                c.put(Page(r["id"], name if isinstance(name, str) else "", idx if isinstance(idx, str) and idx else "a1",
                           dict(r.get("meta") or {})))
        for r in _topological((r for r in put if r.get("typeName") == "shape"), "parentId"):
            fields, _box = _shape_node(r, diags)
            n = Node(**sanitize_node_fields(fields))
            if c.nodes.get(n.id) != n:
                c.put(n)
        for r in put:
            if r.get("typeName") == "binding":
                bf = _binding_record_fields(r, diags)
                if bf is not None:
                    b = Binding(**sanitize_binding_fields(bf))
                    if c.bindings.get(b.id) != b:
                        c.put(b)

    def _export_records(self) -> List[Any]:
        from spatialobs.canvas.formats.tldraw import to_tldraw

        quick = self._changed_records()
        if quick is not None:
            return quick
        out: List[Any] = to_tldraw(self.canvas)["records"]
        return [r for r in out if is_mapping(r) and r.get("typeName") in DOCUMENT_TYPES]

    def _changed_records(self) -> Optional[List[Any]]:
        """The records with only the items written since the last step rewritten, as ``to_tldraw`` writes them
        (or None when that needs the whole document: an id or index key tldraw would refuse, an expired
        journal, a page changed). An agent's apply touches a few shapes of thousands."""
        from spatialobs.canvas.formats import tldraw_schema as tschema
        from spatialobs.canvas.formats.tldraw import TldrawSource, _binding_to_record, node_to_record

        c = self.canvas
        src = c._source
        if not isinstance(src, TldrawSource) or self._mark is None or src.origin_pages != c._pages:
            return None
        try:
            nodes, bindings = touched_since(c, self._mark)
        except SpatialObsError:
            return None
        out = dict(self.records)
        written: List[Dict[str, Any]] = []
        for nid in nodes:
            node = c._nodes.get(nid)
            if node is None:
                out.pop(nid, None)
            elif src.origin_nodes.get(nid) != node:
                base = self.records.get(nid)
                rec = node_to_record(node, base if base is not None and base.get("typeName") == "shape" else None,
                                     src, c, self._versions)
                if not nid.startswith("shape:") or tschema.index_problem(rec.get("index"), self._versions) is not None:
                    return None
                out[nid] = rec
                written.append(rec)
        for bid in bindings:
            b = c._bindings.get(bid)
            if b is None:
                out.pop(bid, None)
            elif src.origin_bindings.get(bid) != b:
                if not bid.startswith("binding:"):
                    return None
                base = self.records.get(bid)
                out[bid] = _binding_to_record(b, base if base is not None and base.get("typeName") == "binding" else None)
                written.append(out[bid])
        tschema.check_records(written, self._versions)
        return list(out.values())

    def _check(self, rec: Any, where: str) -> Dict[str, Any]:
        from spatialobs.canvas.formats import tldraw_schema as tschema

        if not is_mapping(rec) or not isinstance(rec.get("id"), str) or not rec["id"]:
            raise InvalidInputError(f"{where}: a record must be an object with a string id, got {_echo(rec)}")
        tn = rec.get("typeName")
        if tn not in DOCUMENT_TYPES:
            raise InvalidInputError(f"record {_echo(rec['id'])}: typeName {_echo(tn)} is not a document record "
                                    f"({', '.join(sorted(DOCUMENT_TYPES))})")
        expected = {"shape": "shape:", "page": "page:", "binding": "binding:", "asset": "asset:",
                    "document": "document:"}[tn]
        if not rec["id"].startswith(expected):
            raise InvalidInputError(f"record {_echo(rec['id'])}: a {tn} id starts with {expected!r}")
        problems = tschema.validate_record(rec, self._versions)
        if problems:
            raise tschema.InvalidRecordError(problems)
        return dict(rec)

    def _write(self, new: Dict[str, Dict[str, Any]], removed: Set[str], order_changed: bool) -> None:
        from spatialobs.canvas.formats.tldraw import _binding_record_fields, _shape_node

        c = self.canvas
        diags: List[Diagnostic] = []
        for r in new.values():
            if r["typeName"] == "page":
                name, idx = r.get("name"), r.get("index")
                self._made[r["id"]] = c.put(Page(r["id"], name if isinstance(name, str) else "",
                                                 idx if isinstance(idx, str) and idx else "a1", dict(r.get("meta") or {})))
        for r in _topological((r for r in new.values() if r["typeName"] == "shape"), "parentId"):
            fields, _box = _shape_node(r, diags)
            self._made[r["id"]] = c.put(Node(**sanitize_node_fields(fields)))
        for rid in removed:
            if rid in c.bindings:
                c.remove(rid)
        for rid in removed:
            if rid in c.nodes:
                c.remove(rid)
        for rid in removed:
            if rid in c.pages:
                c.remove(rid)
        for r in new.values():
            if r["typeName"] == "binding":
                bf = _binding_record_fields(r, diags)
                if bf is None:
                    raise InvalidInputError(f"binding {_echo(r['id'])}: needs string fromId and toId")
                self._made[r["id"]] = c.put(Binding(**sanitize_binding_fields(bf)))
        for r in new.values():
            if r["typeName"] == "shape":
                self._templates.setdefault(str(r.get("type")), r)


#: Element fields that must be finite numbers when present.
_NUMERIC = ("x", "y", "width", "height", "angle", "opacity", "strokeWidth", "roughness", "fontSize", "version",
            "versionNonce", "seed")


class ExcalidrawMirror(Mirror):
    """The elements of a live Excalidraw scene (deleted ones included, as the scene keeps them) and the canvas.

    The canvas is re-imported from the elements after an editor's edit (groups,
    frames and bound text span elements), and only the nodes that differ are written.
    """

    format = "excalidraw"

    def __init__(self, canvas: Canvas) -> None:
        super().__init__(canvas)
        src = canvas._source
        from spatialobs.canvas.formats.excalidraw import ExcalidrawSource

        self.top: Dict[str, Any] = dict(src.top) if isinstance(src, ExcalidrawSource) and src.top else {
            "type": "excalidraw", "version": 2, "source": "spatialobs",
            "appState": {"gridSize": None, "viewBackgroundColor": "#ffffff"}, "files": {}}
        self.top.pop("elements", None)

    def document(self) -> Dict[str, Any]:
        """An Excalidraw scene: :meth:`Canvas.to_excalidraw` until adopted, then the adopted elements."""
        if self.live:
            return {**self.top, "elements": list(self.records.values())}
        from spatialobs.canvas.formats.excalidraw import to_excalidraw

        doc = to_excalidraw(self.canvas)
        self.top = {k: v for k, v in doc.items() if k != "elements"}
        return doc

    def adopt(self, records: Sequence[Any], schema: Any = None, *, by: str = "person") -> RecordDiff:
        els: Dict[str, Dict[str, Any]] = {}
        for k, e in enumerate(records):
            clean = self._check(e, f"adopt: element #{k}")
            els[clean["id"]] = clean
        self.records = els
        self._reorder()
        self.live = True
        with self.canvas.by(by), self.canvas.batch():
            self._resync()
        self._rebase()
        return [], []

    def _resync(self) -> None:
        from spatialobs.canvas.formats.excalidraw import from_excalidraw

        c = self.canvas
        fresh = from_excalidraw({**self.top, "elements": list(self.records.values())})
        keep = (dict(c.cameras), dict(c.selection), c.current_page)
        sync(c, fresh, exact=True)
        for pid in [p for p in c.page_ids() if p not in fresh.pages]:
            c.remove(pid)
        c.cameras, c.selection = keep[0], keep[1]
        c.current_page = keep[2] if keep[2] in c.pages else next(iter(c.page_ids()), None)

    _side_effects = False  # the canvas is re-read from the elements: it never writes more than they say

    def _rebase(self, made: Optional[Mapping[str, Any]] = None, removed: Iterable[str] = ()) -> None:
        from spatialobs.canvas.formats.excalidraw import ExcalidrawSource

        c = self.canvas
        c._source = ExcalidrawSource(top=dict(self.top), elements=list(self.records.values()),
                                     origin_nodes=dict(c._nodes), origin_bindings=dict(c._bindings),
                                     origin_cameras=dict(c.cameras), origin_selection=dict(c.selection))

    def _follow(self, put: List[Dict[str, Any]]) -> None:
        self._resync()

    def _export_records(self) -> List[Any]:
        from spatialobs.canvas.formats.excalidraw import to_excalidraw

        return list(to_excalidraw(self.canvas)["elements"])

    def _reorder(self) -> None:
        # the scene's array follows the elements' fractional indices (Excalidraw keeps them in step)
        items = list(self.records.values())
        if all(isinstance(e.get("index"), str) for e in items):
            pos = {e["id"]: k for k, e in enumerate(items)}
            items.sort(key=lambda e: (e["index"], pos[e["id"]]))
            self.records = {e["id"]: e for e in items}

    def _check(self, rec: Any, where: str) -> Dict[str, Any]:
        if not is_mapping(rec) or not isinstance(rec.get("id"), str) or not rec["id"]:
            raise InvalidInputError(f"{where}: an element must be an object with a string id, got {_echo(rec)}")
        rid = rec["id"]
        if not isinstance(rec.get("type"), str) or not rec["type"]:
            raise InvalidInputError(f"element {_echo(rid)}: type must be a non-empty string")
        for k in _NUMERIC:
            if k in rec and rec[k] is not None and not _finite(rec[k]):
                raise InvalidInputError(f"element {_echo(rid)}: {k} must be a finite number, got {_echo(rec[k])}")
        for k in ("width", "height"):
            if _finite(rec.get(k)) and rec[k] < 0:
                raise InvalidInputError(f"element {_echo(rid)}: {k} must be >= 0, got {rec[k]}")
        if "index" in rec and rec["index"] is not None and not isinstance(rec["index"], str):
            raise InvalidInputError(f"element {_echo(rid)}: index must be a string or null")
        for k in ("groupIds", "boundElements", "points"):
            if k in rec and rec[k] is not None and not isinstance(rec[k], list):
                raise InvalidInputError(f"element {_echo(rid)}: {k} must be a list")
        return dict(rec)

    def _write(self, new: Dict[str, Dict[str, Any]], removed: Set[str], order_changed: bool) -> None:
        # the records are updated by the caller first in spirit: re-import from the edited list
        records = dict(self.records)
        records.update(new)
        for rid in removed:
            records.pop(rid, None)
        saved = self.records
        self.records = records
        if order_changed:
            self._reorder()
        try:
            self._resync()
        finally:
            self.records = saved
