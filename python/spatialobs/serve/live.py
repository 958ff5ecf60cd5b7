"""The live canvas: real editors connected to the service's documents over WebSockets.

``spatialobs serve --http`` gives every open document a live endpoint,
``/v1/documents/{name}/live``, and a ready page, ``/live/{name}``, that mounts the
real tldraw or Excalidraw editor with the browser client of ``live/`` in the
repository (``@spatialobs/tldraw-live``, ``@spatialobs/excalidraw-live``). The person
edits in the editor while the agent observes and applies through MCP or HTTP; both
see the other's changes at once.

How it works
------------
The service orders every change to a document into *versions*: a person's edit
from an editor (a diff of the editor's records), an agent's apply, an undo, a
reload. Each connected editor gets every version, in order, as the records that
changed (``changes`` messages); the editor that made an edit gets it back with an
acknowledgement. An editor re-applies its edits not yet acknowledged over every
change it receives, so all editors and the service end in the same state whatever
the interleaving, and a person's edit made while an agent's apply is in flight is
kept (the service applies it after the apply, field by field). An agent op whose
target the person has just deleted fails as that op's error in the apply's reply;
the other ops of the reply still apply.

The document's records are those of the editor: the first editor to connect loads
the file as File › Open does (tldraw migrates an old schema and may rewrite
invalid index keys; Excalidraw restores elements) and sends back what it made of
it, which becomes the document (:class:`~spatialobs.canvas.formats.mirror.Mirror`).
The canvas follows through the formats' record mapping, so observations, agent
ops and saves all see exactly what the editors show.

Writes made from an editor are the person's (``observe(since=...)`` reports them
as the person's), except the editor's own completion of an agent's apply (text it
measured, an arrow it restacked), which is the agent's. An agent's apply is one
undo step in each editor; undoing it there reaches the service as the person's
edit. The person's viewport, selection and current page (``presence``) are what
``observe`` uses when the call does not give them, and ``screenshot`` asks the
person's editor for a picture of their view.

An agent's ``set_viewport`` moves the person's view: after the apply's changes,
each editor of the document gets a ``camera`` message (protocol 2) with the page
and the viewport ``{x, y, w, h}`` in page units, and shows that box, centered, at
the largest zoom that fits its screen (exactly the box when the screen has the
document's aspect); the presence it then reports is that view. Undoing the apply,
or restoring a snapshot, sends the cameras that go back. An editor follows only a
camera of the page it shows; the camera message is not a version (an editor that
reconnects is not moved again).

A socket that drops reconnects and resumes from the last version its editor saw
(the service keeps the last :data:`LOG_VERSIONS` versions; an editor further behind
gets the whole document and keeps its unacknowledged edits). A malformed or
hostile message gets an ``error`` message naming what is wrong and changes nothing;
an edit the service refuses is reverted in the editor that made it.

Examples
--------
>>> from spatialobs.serve import Service
>>> svc = Service(".")
>>> hub = LiveHub(svc)
>>> svc.live is hub, hub.presence("nope") is None
(True, True)
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import itertools
import json
import logging
import math
import os
import re
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Set, Tuple

from spatialobs._errors import SpatialObsError
from spatialobs.serve.service import Service, ServiceError

__all__ = ["LiveHub", "page_dir", "page_html", "LOG_VERSIONS", "EDITORS", "MESSAGE_TYPES", "PROTOCOL"]

log = logging.getLogger("spatialobs.serve.live")

#: The live protocol's version (``@spatialobs/live-sync``'s ``PROTOCOL``). 2 added the ``camera`` message, which
#: an editor gets only when its hello says ``protocol`` 2 or more.
PROTOCOL = 2
#: Versions a live document keeps for editors that reconnect.
LOG_VERSIONS = 2000
#: The editor of each document format.
EDITORS = {"tldraw": "tldraw", "excalidraw": "excalidraw", "native": "tldraw"}
#: Message types an editor may send.
MESSAGE_TYPES = ("hello", "adopt", "diff", "presence", "export_result", "load_failed")
#: Messages queued for one socket before the service drops it (it reconnects and resumes).
MAX_QUEUED = 5000
#: Records in an edit small enough to apply on the event loop when the document's lock is free.
FAST_RECORDS = 64
#: Seconds an editor may take to load a document before another may.
LOAD_TIMEOUT = 120.0
_SESSION = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")


def _dumps(msg: Mapping[str, Any]) -> str:
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass
class _Session:
    """One connected editor (one browser tab)."""

    id: str
    doc: str
    send: Callable[[str], None]          # thread-safe: queue a text message for the socket
    close: Callable[[int, str], None]    # thread-safe: close the socket
    editor: str = "?"
    presence: Optional[Dict[str, Any]] = None
    presence_at: float = 0.0
    connected_at: float = field(default_factory=time.monotonic)
    loaded: bool = False
    protocol: int = 1


@dataclass
class _LiveDoc:
    """The live state of one open document (guarded by the service document's lock)."""

    name: str
    mirror: Any
    epoch: str = field(default_factory=lambda: secrets.token_hex(6))
    version: int = 0
    log: Deque[Tuple[int, str]] = field(default_factory=lambda: deque(maxlen=LOG_VERSIONS))
    state: str = "idle"                  # idle | loading | live
    loader: Optional[str] = None
    load_token: Optional[str] = None
    load_started: float = 0.0
    waiting: List[str] = field(default_factory=list)
    acked: Dict[str, int] = field(default_factory=dict)


class LiveHub:
    """The live documents of one service, and the editor sessions connected to them.

    Creating a hub attaches it to the service (``service.live``): the service's
    writes (apply, undo, reload) are then published to the connected editors, and
    ``observe`` reads the person's viewport, selection and page from them. The
    transport (:mod:`spatialobs.serve.http_api`) calls :meth:`handle` for each
    WebSocket; everything else is thread-safe and called from the service's threads.
    """

    def __init__(self, service: Service) -> None:
        self.service = service
        self._docs: Dict[str, _LiveDoc] = {}
        self._sessions: Dict[str, _Session] = {}
        self._lock = threading.Lock()   # the registries; never held while taking a document lock
        self._exports: Dict[str, "concurrent.futures.Future[Dict[str, Any]]"] = {}
        self._ids = itertools.count(1)
        service.live = self

    # ------------------------------------------------------------------ called by the service
    def publish(self, doc: Any, *, by: str, undoable: bool) -> None:
        """Send the changes the service just made to ``doc`` to its editors (under the document's lock)."""
        ld = self._docs.get(doc.name)
        if ld is None or ld.mirror.canvas is not doc.canvas or ld.state != "live":
            return
        with doc.canvas.by(by if by in ("person", "agent") else "agent"):
            put, remove = ld.mirror.export()
        if put or remove:
            self._broadcast(ld, {"type": "changes", "by": by, "session": None, "put": put, "remove": remove,
                                 "undoable": undoable})

    def camera(self, doc: Any, cameras: Mapping[str, Mapping[str, float]], *, by: str) -> None:
        """Move the person's view in ``doc``'s editors to the cameras just set (under the document's lock).

        Parameters
        ----------
        doc : the service's document
            The document whose cameras moved (its apply's changes are already published).
        cameras : mapping
            Page id -> ``{x, y, w, h}`` in page units (and ``zoom``, the document screen's), as
            ``set_viewport`` reports them; each becomes one ``camera`` message.
        by : str
            Who moved it: ``"agent"`` (an apply, an undo) or ``"person"``.
        """
        ld = self._docs.get(doc.name)
        if ld is None or ld.mirror.canvas is not doc.canvas or ld.state != "live":
            return
        targets = [s for s in self._targets(ld.name) if s.protocol >= 2]
        for page, v in cameras.items():
            if not all(_finite(v.get(k)) for k in ("x", "y", "w", "h")) or not (v["w"] > 0 and v["h"] > 0):
                continue
            msg: Dict[str, Any] = {"type": "camera", "by": by, "page": page,
                                   "viewport": {k: float(v[k]) for k in ("x", "y", "w", "h")}}
            if _finite(v.get("zoom")):
                msg["zoom"] = float(v["zoom"])
            text = _dumps(msg)
            for s in targets:
                s.send(text)

    def closed(self, name: str) -> None:
        """The document was closed: its editors are told and disconnected."""
        with self._lock:
            self._docs.pop(name, None)
            sessions = [s for s in self._sessions.values() if s.doc == name]
        for s in sessions:
            s.send(_dumps({"type": "closed", "reason": f"document {name!r} was closed"}))
            s.close(1000, "document closed")

    def presence(self, name: str) -> Optional[Dict[str, Any]]:
        """The person's latest viewport, selection and page on a document (the session last active), or None.

        Returns
        -------
        dict or None
            ``{"session", "editor", "page", "viewport": {x, y, w, h}, "selected": [ids], "age": seconds}``.
        """
        with self._lock:
            best = None
            for s in self._sessions.values():
                if s.doc == name and s.presence is not None and (best is None or s.presence_at > best.presence_at):
                    best = s
            if best is None:
                return None
            p = dict(best.presence or {})
            at, sid, editor = best.presence_at, best.id, best.editor
        p.update(session=sid, editor=editor, age=round(time.monotonic() - at, 3))
        return p

    def defaults(self, doc: Any, viewport: Any, page: Optional[str], selected: Any) -> Optional[Dict[str, Any]]:
        """``observe``'s arguments with the person's live view filling those not given (under the document's lock).

        The page is the editor's current page; the viewport and the selection are the
        editor's when the observed page is that page. Returns None when no editor has
        reported a view, else ``{"viewport", "page", "selected", "session", "editor",
        "age", "used": [the arguments taken from the editor]}``.
        """
        p = self.presence(doc.name)
        if p is None:
            return None
        canvas = doc.canvas
        live_page = p.get("page") if p.get("page") in canvas.pages else canvas.current_page
        used: List[str] = []
        if page is None and live_page is not None:
            page = live_page
            used.append("page")
        if page == live_page:
            if viewport is None:
                v = p["viewport"]
                viewport = [v["x"], v["y"], v["w"], v["h"]]
                used.append("viewport")
            if selected is None:
                ld = self._docs.get(doc.name)
                recs = ld.mirror.records if ld is not None else {}
                out: List[str] = []
                for sid in p.get("selected") or []:
                    if sid not in canvas.nodes:  # an Excalidraw text bound to a container: the container
                        cid = (recs.get(sid) or {}).get("containerId")
                        sid = cid if isinstance(cid, str) else sid
                    if sid in canvas.nodes and sid not in out:
                        out.append(sid)
                selected = out
                used.append("selected")
        return {"viewport": viewport, "page": page, "selected": selected, "session": p["session"],
                "editor": p["editor"], "age": p["age"], "used": used}

    def sessions(self, name: str) -> List[Dict[str, Any]]:
        """The editors connected to a document: ``[{session, editor, loaded, presence}]``."""
        with self._lock:
            return [{"session": s.id, "editor": s.editor, "loaded": s.loaded, "presence": s.presence}
                    for s in self._sessions.values() if s.doc == name]

    def version(self, name: str) -> Optional[int]:
        """The live version of a document (None when no editor ever connected)."""
        ld = self._docs.get(name)
        return None if ld is None else ld.version

    def screenshot(self, name: str, *, session: Optional[str] = None, viewport: Optional[Dict[str, float]] = None,
                   timeout: float = 20.0) -> Dict[str, Any]:
        """A picture of the person's view drawn by their editor (tldraw's image export, Excalidraw's exportToBlob).

        Returns ``{"session", "editor", "mimeType", "data" (base64), "width", "height", "viewport"}``;
        raises :class:`ServiceError` ``not_found`` when no editor is connected.
        """
        with self._lock:
            cands = [s for s in self._sessions.values() if s.doc == name and s.loaded]
            if session is not None:
                cands = [s for s in cands if s.id == session]
            if not cands:
                raise ServiceError("not_found", f"screenshot: no editor is connected to document {name!r}"
                                   + (f" as session {session!r}" if session else "")
                                   + f"; open /live/{name} in a browser")
            s = max(cands, key=lambda c: c.presence_at)
            rid = f"x{next(self._ids)}"
            fut: "concurrent.futures.Future[Dict[str, Any]]" = concurrent.futures.Future()
            self._exports[rid] = fut
        msg: Dict[str, Any] = {"type": "export", "id": rid, "format": "png"}
        if viewport is not None:
            msg["viewport"] = viewport
        s.send(_dumps(msg))
        try:
            res = fut.result(timeout)
        except concurrent.futures.TimeoutError:
            raise ServiceError("internal", f"screenshot: the editor of session {s.id!r} did not answer in "
                               f"{timeout:g} s") from None
        finally:
            with self._lock:
                self._exports.pop(rid, None)
        if not res.get("ok"):
            raise ServiceError("internal", f"screenshot: the editor failed: {str(res.get('error'))[:300]}")
        data = res.get("data")
        if not isinstance(data, str):
            raise ServiceError("internal", "screenshot: the editor sent no image")
        pres = s.presence or {}
        return {"session": s.id, "editor": s.editor, "mimeType": str(res.get("mime") or "image/png"), "data": data,
                "width": res.get("width"), "height": res.get("height"),
                "viewport": viewport or pres.get("viewport")}

    # ------------------------------------------------------------------ internals
    def _live_doc(self, d: Any) -> _LiveDoc:
        from spatialobs.canvas.formats.mirror import Mirror

        ld = self._docs.get(d.name)
        if ld is None or ld.mirror.canvas is not d.canvas:
            ld = _LiveDoc(d.name, Mirror.of(d.canvas, EDITORS.get(d.format, "tldraw")))
            self._docs[d.name] = ld
        return ld

    def _targets(self, name: str) -> List[_Session]:
        with self._lock:
            return [s for s in self._sessions.values() if s.doc == name and s.loaded]

    def _broadcast(self, ld: _LiveDoc, msg: Dict[str, Any]) -> None:
        """Give ``msg`` the next version and send it to every loaded editor of the document."""
        ld.version += 1
        msg["version"] = ld.version
        text = _dumps(msg)
        ld.log.append((ld.version, text))
        for s in self._targets(ld.name):
            s.send(text)

    # ------------------------------------------------------------------ one editor's messages (worker threads)
    def _hello(self, sess: _Session, msg: Mapping[str, Any]) -> None:
        """Answer an editor's hello (under the document's lock, so no version can come before the answer)."""
        d = self.service._doc(sess.doc)
        with d.lock:
            reply = self._hello_reply(d, sess, msg)
            if reply is not None:
                sess.send(_dumps(reply))

    def _hello_reply(self, d: Any, sess: _Session, msg: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
        ld = self._live_doc(d)
        editor = EDITORS.get(d.format, "tldraw")
        if msg.get("editor") not in (None, editor):
            raise ServiceError("bad_request", f"document {d.name!r} is edited with {editor}, not "
                                              f"{str(msg.get('editor'))[:40]}")
        sess.editor = editor
        version = msg.get("version")
        if isinstance(version, bool) or not isinstance(version, int):
            version = None
        same = msg.get("epoch") == ld.epoch
        out: Dict[str, Any] = {"type": "hello", "session": sess.id, "epoch": ld.epoch, "editor": editor,
                               "acked": ld.acked.get(sess.id, 0)}
        if ld.state == "live":
            sess.loaded = True
            oldest = ld.log[0][0] if ld.log else ld.version + 1
            if same and version is not None and version <= ld.version and version >= oldest - 1:
                out.update(mode="resume", version=ld.version,
                           changes=[json.loads(t) for v, t in ld.log if v > version])
            else:
                out.update(mode="snapshot" if version is not None else "records", version=ld.version,
                           document=ld.mirror.document())
            return out
        if ld.state == "loading" and ld.loader is not None and time.monotonic() - ld.load_started < LOAD_TIMEOUT \
                and self._connected(ld.loader):
            ld.waiting.append(sess.id)
            return None  # answered when the loading editor has sent the document back
        return self._start_load(ld, sess.id, out)

    def _start_load(self, ld: _LiveDoc, sid: str, out: Dict[str, Any]) -> Dict[str, Any]:
        from spatialobs.canvas.changes import issue_token

        ld.state, ld.loader, ld.load_started = "loading", sid, time.monotonic()
        ld.load_token = issue_token(ld.mirror.canvas)
        out.update(mode="load", version=ld.version, document=ld.mirror.document())
        return out

    def _connected(self, sid: str) -> bool:
        with self._lock:
            return sid in self._sessions

    def _adopt(self, sess: _Session, msg: Mapping[str, Any]) -> None:
        from spatialobs.canvas.changes import sync, touched_since

        d = self.service._doc(sess.doc)
        with d.lock:
            ld = self._live_doc(d)
            if ld.state != "loading" or ld.loader != sess.id:
                raise ServiceError("conflict", "adopt: this editor was not asked to load the document")
            records = msg.get("records")
            if msg.get("base") is not True and not isinstance(records, list):
                raise ServiceError("bad_request", "adopt: records must be a list")
            for key in ("put", "remove"):
                if msg.get(key) is not None and not isinstance(msg.get(key), list):
                    raise ServiceError("bad_request", f"adopt: {key} must be a list")
            canvas = d.canvas
            kept: Tuple[Set[str], Set[str]] = (set(), set())
            if ld.load_token is not None:
                kept = touched_since(canvas, ld.load_token)  # the agent's writes while the editor loaded
            saved = canvas.copy() if kept[0] or kept[1] else None
            if msg.get("base") is True and hasattr(ld.mirror, "adopt_changes"):
                put, remove = ld.mirror.adopt_changes(msg.get("put") or [], msg.get("remove") or [],
                                                      msg.get("schema"), by="person")
            else:
                put, remove = ld.mirror.adopt(records, msg.get("schema"), by="person")
            if saved is not None:
                with canvas.by("agent"):
                    sync(canvas, saved, only=kept, exact=True)
                    more_put, more_remove = ld.mirror.export()
                put, remove = put + more_put, remove + more_remove
            ld.state, ld.loader, ld.load_token = "live", None, None
            sess.loaded = True
            self._broadcast(ld, {"type": "changes", "by": "service", "session": None, "adopted": sess.id, "put": put,
                                 "remove": remove, "undoable": False})
            waiting, ld.waiting = ld.waiting, []
            with self._lock:
                others = [self._sessions[w] for w in waiting if w in self._sessions]
            if others:
                doc_text = _dumps(ld.mirror.document())
            for o in others:
                o.loaded = True
                head = _dumps({"type": "hello", "session": o.id, "epoch": ld.epoch, "editor": o.editor,
                               "acked": ld.acked.get(o.id, 0), "mode": "records", "version": ld.version})
                o.send(head[:-1] + ',"document":' + doc_text + "}")

    def _load_failed(self, sess: _Session, msg: Mapping[str, Any]) -> None:
        d = self.service._doc(sess.doc)
        with d.lock:
            ld = self._live_doc(d)
            log.warning("editor %s could not load %s: %s", sess.id, d.name, str(msg.get("error"))[:300])
            if ld.loader == sess.id:
                ld.state, ld.loader = "idle", None
                self._next_loader(ld)

    def _next_loader(self, ld: _LiveDoc) -> None:
        """With no editor loading the document, the first one waiting loads it (under the document's lock)."""
        while ld.waiting and ld.state != "live":
            sid = ld.waiting.pop(0)
            with self._lock:
                s = self._sessions.get(sid)
            if s is None:
                continue
            out = {"type": "hello", "session": sid, "epoch": ld.epoch, "editor": s.editor,
                   "acked": ld.acked.get(sid, 0)}
            s.send(_dumps(self._start_load(ld, sid, out)))
            return

    def _diff(self, sess: _Session, msg: Mapping[str, Any], locked: Any = None) -> None:
        """Apply an editor's edit (``locked``: the document whose lock the caller holds; released here)."""
        d = locked if locked is not None else self.service._doc(sess.doc)
        if locked is None:
            d.lock.acquire()
        try:
            self._diff_locked(d, sess, msg)
        finally:
            d.lock.release()

    def _diff_locked(self, d: Any, sess: _Session, msg: Mapping[str, Any]) -> None:
        seq = msg.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            raise ServiceError("bad_request", f"diff: seq must be a positive integer, got {str(seq)[:40]}")
        lists = {}
        for key in ("put", "patch", "remove"):
            v = msg.get(key, [])
            if v is None:
                v = []
            if not isinstance(v, list):
                raise ServiceError("bad_request", f"diff {seq}: {key} must be a list")
            lists[key] = v
        if len(lists["put"]) + len(lists["patch"]) + len(lists["remove"]) > self.service.limits.max_ops * 100:
            raise ServiceError("too_large", f"diff {seq}: too many records in one message")
        cause = msg.get("cause")
        by = "agent" if cause == "normalize" else "person"
        ld = self._live_doc(d)
        if ld.state != "live" or not sess.loaded:
            raise ServiceError("conflict", f"diff {seq}: the document is not loaded in this editor yet")
        if seq <= ld.acked.get(sess.id, 0):
            return  # sent again after a reconnect: already applied
        ids = [r.get("id") for r in lists["put"] if isinstance(r, Mapping)]
        ids += [p.get("id") for p in lists["patch"] if isinstance(p, Mapping)]
        ids += list(lists["remove"])
        try:
            corr_put, corr_remove = ld.mirror.apply(lists["put"], lists["patch"], lists["remove"], by=by)
        except SpatialObsError as exc:
            ld.acked[sess.id] = seq
            recs = ld.mirror.records
            keys = list(dict.fromkeys(i for i in ids if isinstance(i, str)))
            sess.send(_dumps({"type": "error", "code": "bad_request",
                              "message": " ".join(f"diff {seq} refused: {exc}".split())[:2000], "seq": seq,
                              "revert": {"put": [recs[i] for i in keys if i in recs],
                                         "remove": [i for i in keys if i not in recs]}}))
            return
        ld.acked[sess.id] = seq
        recs = ld.mirror.records
        put_ids = [i for i in ids if isinstance(i, str) and i in recs]
        seen = set(put_ids)
        put = [recs[i] for i in dict.fromkeys(put_ids)]
        put += [r for r in corr_put if r["id"] not in seen]
        remove = sorted({i for i in ids if isinstance(i, str) and i not in recs} | set(corr_remove))
        self._broadcast(ld, {"type": "changes", "by": by, "session": sess.id, "ack": seq, "put": put,
                             "remove": remove, "undoable": False})

    def _presence(self, sess: _Session, msg: Mapping[str, Any]) -> None:
        vp = msg.get("viewport")
        if not (isinstance(vp, Mapping) and all(_finite(vp.get(k)) for k in ("x", "y", "w", "h"))
                and vp["w"] > 0 and vp["h"] > 0):
            raise ServiceError("bad_request", "presence: viewport must be {x, y, w, h} with finite numbers, w and h > 0")
        page = msg.get("page")
        if page is not None and not isinstance(page, str):
            raise ServiceError("bad_request", "presence: page must be a string")
        sel = msg.get("selected", [])
        if not isinstance(sel, list) or not all(isinstance(s, str) for s in sel) or len(sel) > 100_000:
            raise ServiceError("bad_request", "presence: selected must be a list of ids")
        p: Dict[str, Any] = {"page": page, "viewport": {k: float(vp[k]) for k in ("x", "y", "w", "h")},
                             "selected": sel}
        scr = msg.get("screen")
        if isinstance(scr, Mapping) and _finite(scr.get("w")) and _finite(scr.get("h")):
            p["screen"] = {"w": float(scr["w"]), "h": float(scr["h"])}
        if _finite(msg.get("zoom")):
            p["zoom"] = float(msg["zoom"])
        with self._lock:
            sess.presence = p
            sess.presence_at = time.monotonic()

    def _export_result(self, msg: Mapping[str, Any]) -> None:
        with self._lock:
            fut = self._exports.get(str(msg.get("id")))
        if fut is not None and not fut.done():
            fut.set_result(dict(msg))

    # ------------------------------------------------------------------ the socket (event loop)
    async def handle(self, websocket: Any, name: str) -> None:
        """Serve one editor's WebSocket on document ``name`` until it closes (Starlette WebSocket)."""
        import anyio.to_thread
        from starlette.websockets import WebSocketDisconnect

        loop = asyncio.get_running_loop()
        queue: "asyncio.Queue[Optional[str]]" = asyncio.Queue()
        limit = self.service.limits.max_request_bytes
        closing: Dict[str, Any] = {}

        def send(text: str) -> None:
            def put() -> None:
                if queue.qsize() >= MAX_QUEUED:
                    closing.setdefault("code", (1013, "too far behind; reconnect"))
                    queue.put_nowait(None)
                    return
                queue.put_nowait(text)
            loop.call_soon_threadsafe(put)

        def close(code: int, reason: str) -> None:
            def put() -> None:
                closing.setdefault("code", (code, reason))
                queue.put_nowait(None)
            loop.call_soon_threadsafe(put)

        def error(code: str, message: str, **extra: Any) -> None:
            send(_dumps({"type": "error", "code": code, "message": " ".join(message.split())[:2000], **extra}))

        await websocket.accept()
        try:
            self.service._doc(name)
        except ServiceError as exc:
            await websocket.close(code=4404, reason=exc.message[:120])
            return
        sess: Optional[_Session] = None

        async def writer() -> None:
            while True:
                text = await queue.get()
                if text is None:
                    code, reason = closing.get("code", (1000, ""))
                    try:
                        await websocket.close(code=code, reason=reason[:120])
                    except Exception:
                        pass
                    return
                await websocket.send_text(text)

        wtask = asyncio.ensure_future(writer())
        try:
            while True:
                try:
                    raw = await websocket.receive_text()
                except WebSocketDisconnect:
                    break
                except (KeyError, RuntimeError):  # a binary frame, or the socket went away
                    error("bad_request", "messages must be JSON text")
                    continue
                if len(raw) > limit:
                    error("too_large", f"a message of {len(raw)} characters; the limit is {limit}")
                    continue
                try:
                    msg = json.loads(raw)
                except (ValueError, RecursionError) as exc:
                    error("bad_request", f"a message must be one JSON object: {str(exc)[:200]}")
                    continue
                if not isinstance(msg, dict):
                    error("bad_request", f"a message must be a JSON object, got {type(msg).__name__}")
                    continue
                kind = msg.get("type")
                if kind not in MESSAGE_TYPES:
                    error("bad_request", f"unknown message type {str(kind)[:40]!r}; known: {', '.join(MESSAGE_TYPES)}")
                    continue
                if sess is None:
                    if kind != "hello":
                        error("bad_request", "the first message must be hello")
                        continue
                    sid = msg.get("session")
                    if not isinstance(sid, str) or not _SESSION.match(sid):
                        error("bad_request", "hello: session must be 1-64 letters, digits, '_' or '-'")
                        continue
                    with self._lock:
                        old = self._sessions.get(sid)
                    if old is not None:
                        old.close(4409, "the same session connected again")
                    sess = _Session(sid, name, send, close)
                    proto = msg.get("protocol")
                    if isinstance(proto, int) and not isinstance(proto, bool) and proto > 0:
                        sess.protocol = proto
                    with self._lock:
                        self._sessions[sid] = sess
                    try:
                        await anyio.to_thread.run_sync(self._hello, sess, msg)
                    except ServiceError as exc:
                        error(exc.code, exc.message)
                        with self._lock:
                            if self._sessions.get(sid) is sess:
                                del self._sessions[sid]
                        sess = None
                        continue
                    continue
                try:
                    if kind == "hello":
                        raise ServiceError("bad_request", "hello was already received")
                    if kind == "presence":
                        self._presence(sess, msg)
                    elif kind == "export_result":
                        self._export_result(msg)
                    elif kind == "diff":
                        # a small edit of a document nobody else is using is applied right here (a thread hop
                        # costs more than the edit); otherwise in a worker thread, which may wait for the lock
                        d = self.service._docs.get(sess.doc)
                        ld = self._docs.get(sess.doc)
                        small = (ld is not None and ld.mirror.format == "tldraw"  # Excalidraw re-reads the scene
                                 and sum(len(msg.get(k) or ()) for k in ("put", "patch", "remove")
                                         if isinstance(msg.get(k), list)) <= FAST_RECORDS)
                        if d is not None and small and d.lock.acquire(blocking=False):
                            self._diff(sess, msg, locked=d)
                        else:
                            await anyio.to_thread.run_sync(self._diff, sess, msg)
                    elif kind == "adopt":
                        await anyio.to_thread.run_sync(self._adopt, sess, msg)
                    else:
                        await anyio.to_thread.run_sync(self._load_failed, sess, msg)
                except ServiceError as exc:
                    extra = {"seq": msg["seq"]} if kind == "diff" and isinstance(msg.get("seq"), int) else {}
                    error(exc.code, exc.message, **extra)
                except Exception as exc:  # a bug: logged, reported in one line, the socket stays
                    log.exception("live message %s failed", kind)
                    error("internal", f"{kind}: internal error ({type(exc).__name__}: {exc})")
        finally:
            if sess is not None:
                with self._lock:
                    if self._sessions.get(sess.id) is sess:
                        del self._sessions[sess.id]
                await anyio.to_thread.run_sync(self._gone, sess)
            queue.put_nowait(None)
            try:
                await asyncio.wait_for(wtask, 5)
            except (asyncio.TimeoutError, Exception):
                wtask.cancel()

    def _gone(self, sess: _Session) -> None:
        """A session disconnected: a load it was doing passes to the next editor waiting."""
        try:
            d = self.service._doc(sess.doc)
        except ServiceError:
            return
        with d.lock:
            ld = self._docs.get(d.name)
            if ld is None:
                return
            if sess.id in ld.waiting:
                ld.waiting.remove(sess.id)
            if ld.state == "loading" and ld.loader == sess.id:
                ld.state, ld.loader = "idle", None
                self._next_loader(ld)


# ---------------------------------------------------------------------- the page

def page_dir(package: Optional[Path] = None) -> Optional[Path]:
    """The built live page (``live.html``, ``assets/``), or None when it is not built.

    ``$SPATIALOBS_LIVE_PAGE``; else, when the package runs from a source checkout (``live/package.json``
    beside its ``python/`` folder), that checkout's ``live/dist``, the page its sources build, so that
    an older copy left in the package folder by an earlier install does not shadow it; else the page
    the wheel carries (``spatialobs/serve/live_page``).

    Parameters
    ----------
    package
        The folder of ``spatialobs.serve`` (this module's folder by default).
    """
    env = os.environ.get("SPATIALOBS_LIVE_PAGE")
    here = package if package is not None else Path(__file__).resolve().parent
    checkout = here.parents[2] / "live"
    cands = [Path(env)] if env else []
    if (checkout / "package.json").is_file():
        cands.append(checkout / "dist")
    cands.append(here / "live_page")
    for c in cands:
        if (c / "live.html").is_file() and (c / "assets").is_dir():
            return c
    return None


def page_missing() -> str:
    """The one line saying how to build the live page."""
    return ("the live page is not built: run `(cd live && npm ci && npm run build)` in the source checkout "
            "(or set SPATIALOBS_LIVE_PAGE to a built page folder)")


def page_html(template: str, name: str, editor: str, assets: str = "/live/assets/") -> str:
    """The live page of one document from the built template.

    Examples
    --------
    >>> t = "<title>__TITLE__</title><script>x = __CONFIG__</script><script src='__ASSETS____EDITOR__.js'>"
    >>> page_html(t, "a</script>", "tldraw")
    '<title>a&lt;/script&gt;</title><script>x = {"document":"a\\\\u003c/script>","editor":"tldraw","assets":"/live/assets/"}</script><script src=\\'/live/assets/tldraw.js\\'>'
    """
    import html

    cfg = json.dumps({"document": name, "editor": editor, "assets": assets}, separators=(",", ":"))
    cfg = cfg.replace("<", "\\u003c")
    return (template.replace("__TITLE__", html.escape(name)).replace("__CONFIG__", cfg)
            .replace("__ASSETS__", assets).replace("__EDITOR__", editor))


def decode_image(result: Mapping[str, Any]) -> bytes:
    """The image bytes of a :meth:`LiveHub.screenshot` result."""
    return base64.b64decode(result["data"])
