"""The live protocol with a real WebSocket client playing the editor: ordering, resume, and bad messages.

These tests need no browser: the client speaks the protocol of ``live/sync`` itself
(hello, adopt, diff, presence) against the real server on a loopback port.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List, Optional

import pytest

from tests.live.support import BOARD, api, live_server, write_documents

websockets = pytest.importorskip("websockets")

FRAMES = "frames.tldr"
AIR = f"{BOARD}.excalidraw"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("proto")
    write_documents(root)
    with live_server(root, token="s3cret") as (base, service):
        yield base, service


class Editor:
    """A protocol client: it 'loads' the document as given (no editor normalizes it) and adopts it."""

    def __init__(self, base: str, doc: str, session: str, token: Optional[str] = "s3cret") -> None:
        self.url = base.replace("http://", "ws://") + f"/v1/documents/{doc}/live" + (f"?token={token}" if token else "")
        self.session = session
        self.ws: Any = None
        self.inbox: List[Dict[str, Any]] = []
        self.seq = 0

    async def __aenter__(self) -> "Editor":
        self.ws = await websockets.connect(self.url, max_size=None)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.ws.close()

    async def send(self, msg: Any) -> None:
        await self.ws.send(msg if isinstance(msg, str) else json.dumps(msg))

    async def recv(self, kind: Optional[str] = None, timeout: float = 10.0) -> Dict[str, Any]:
        while True:
            msg = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
            self.inbox.append(msg)
            if kind is None or msg["type"] == kind:
                return msg

    async def join(self, version: Optional[int] = None, epoch: Optional[str] = None,
                   protocol: Optional[int] = None) -> Dict[str, Any]:
        hello: Dict[str, Any] = {"type": "hello", "session": self.session, "version": version, "epoch": epoch}
        if protocol is not None:
            hello["protocol"] = protocol
        await self.send(hello)
        hello = await self.recv("hello")
        if hello["mode"] == "load":
            doc = hello["document"]
            recs = doc.get("records", doc.get("elements"))
            await self.send({"type": "adopt", "records": recs, "schema": doc.get("schema")})
            await self.recv("changes")
        return hello

    async def diff(self, **parts: Any) -> Dict[str, Any]:
        self.seq += 1
        await self.send({"type": "diff", "seq": self.seq, "base": None, **parts})
        while True:
            msg = await self.recv()
            if msg["type"] == "changes" and msg.get("ack") == self.seq and msg.get("session") == self.session:
                return msg
            if msg["type"] == "error" and msg.get("seq") == self.seq:
                return msg


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_token_is_needed_and_an_unknown_document_is_refused(server):
    base, service = server

    async def go() -> None:
        for token, doc, code in ((None, "x", 4401), ("wrong", "x", 4401), ("s3cret", "no-such-doc", 4404)):
            ed = Editor(base, doc, "a", token=token)
            try:
                async with ed:
                    await ed.recv()
            except websockets.exceptions.ConnectionClosed as closed:
                assert closed.rcvd.code == code
            else:
                raise AssertionError("the socket stayed open")

    run(go())


def shape_ids(service, doc):
    return sorted(i for i, r in service.live._docs[doc].mirror.records.items() if r.get("typeName") == "shape")


def test_every_editor_gets_every_version_in_order_and_the_sender_its_ack(server):
    base, service = server
    api(base, "POST", "/v1/documents", {"path": FRAMES, "name": "order"}, token="s3cret")

    async def go() -> None:
        async with Editor(base, "order", "ed-a") as a, Editor(base, "order", "ed-b") as b:
            ha = await a.join()
            hb = await b.join()
            assert ha["mode"] == "load" and hb["mode"] == "records"
            sid = shape_ids(service, "order")[0]
            x0 = service._doc("order").canvas.nodes[sid].x
            got = await a.diff(patch=[{"id": sid, "set": {"x": x0 + 10}}])
            assert got["by"] == "person" and got["put"][0]["x"] == x0 + 10
            seen = await b.recv("changes")
            assert seen["version"] == got["version"] and seen["put"] == got["put"] and "ack" in seen
            assert service._doc("order").canvas.nodes[sid].x == x0 + 10
            # an agent's apply reaches both, as one version, undoable
            await asyncio.to_thread(api, base, "POST", "/v1/documents/order/apply",
                                    {"ops": [{"op": "move_node", "id": sid, "x": 5, "y": 5}]}, "s3cret")
            ca, cb = await a.recv("changes"), await b.recv("changes")
            assert ca == cb and ca["by"] == "agent" and ca["undoable"] and ca["version"] == got["version"] + 1

    run(go())


def test_a_dropped_editor_resumes_from_its_last_version_and_a_resent_edit_applies_once(server):
    base, service = server
    api(base, "POST", "/v1/documents", {"path": FRAMES, "name": "resume"}, token="s3cret")

    async def go() -> None:
        async with Editor(base, "resume", "ed-r") as a:
            hello = await a.join()
            sid = shape_ids(service, "resume")[0]
            first = await a.diff(patch=[{"id": sid, "set": {"y": 123}}])
            version, epoch = first["version"], hello["epoch"]
        # while it is away: an agent's apply
        await asyncio.to_thread(api, base, "POST", "/v1/documents/resume/apply",
                                {"ops": [{"op": "set_text", "id": sid, "text": "while away"}]}, "s3cret")
        async with Editor(base, "resume", "ed-r") as a:
            a.seq = 1
            hello = await a.join(version=version, epoch=epoch)
            assert hello["mode"] == "resume" and hello["acked"] == 1
            assert [c["by"] for c in hello["changes"]] == ["agent"]
            y = next(r for r in hello["changes"][0]["put"] if r["id"] == sid)["y"]
            # an edit it sent before the drop, sent again, is not applied twice; the next one is
            await a.send({"type": "diff", "seq": 1, "patch": [{"id": sid, "set": {"y": 999}}]})
            again = await a.diff(patch=[{"id": sid, "set": {"x": 77}}])
            assert again["ack"] == 2 and again["put"][0]["y"] == y != 999 and again["put"][0]["x"] == 77
            assert service._doc("resume").canvas.nodes[sid].y == y
        async with Editor(base, "resume", "ed-s") as c:  # a version it never saw: the whole document
            hello = await c.join(version=10 ** 6, epoch=epoch)
            assert hello["mode"] == "snapshot" and "records" in hello["document"]

    run(go())


def state(service, doc):
    d = service._doc(doc)
    ld = service.live._docs[doc]
    return json.dumps(ld.mirror.records, sort_keys=True), dict(d.canvas.nodes), dict(d.canvas.bindings), ld.version


def test_hostile_and_malformed_messages_get_a_typed_error_and_change_nothing(tmp_path):
    from spatialobs.serve import Limits

    write_documents(tmp_path)
    with live_server(tmp_path, limits=Limits(max_request_bytes=200_000)) as (base, service):
        api(base, "POST", "/v1/documents", {"path": FRAMES, "name": "t"})
        api(base, "POST", "/v1/documents", {"path": AIR, "name": "x"})

        async def go() -> None:
            async with Editor(base, "t", "bad-1", token=None) as ed:
                await ed.send({"type": "diff", "seq": 1, "patch": []})
                assert (await ed.recv("error"))["message"] == "the first message must be hello"
                await ed.send({"type": "hello", "session": "no spaces please"})
                assert "session" in (await ed.recv("error"))["message"]
                await ed.join()
                recs = service.live._docs["t"].mirror.records
                frame = next(i for i, r in recs.items() if r.get("type") == "frame")
                child = next(i for i, r in recs.items() if r.get("parentId") == frame)
                text = next(i for i, r in recs.items() if r.get("type") == "text")
                before = state(service, "t")
                bad: List[Any] = [
                    "not json", "[1, 2]", '{"type": 7}', json.dumps({"type": "nope"}),
                    json.dumps({"type": "hello", "session": "bad-1"}),
                    json.dumps({"type": "adopt", "records": []}),
                    json.dumps({"type": "presence", "viewport": {"x": 0, "y": 0, "w": -1, "h": 5}}),
                    '{"type": "presence", "viewport": {"x": NaN, "y": 0, "w": 1, "h": 1}}',
                    json.dumps({"type": "diff", "seq": "one"}),
                    json.dumps({"type": "diff", "seq": 1, "put": {"id": "shape:a"}}),
                    "[" * 100000 + "]" * 100000,
                    json.dumps({"type": "diff", "seq": 1, "put": [{"id": "x" * 300}]}) + " " * 200_000,
                ]
                for m in bad:
                    await ed.send(m)
                    err = await ed.recv("error")
                    assert err["code"] in ("bad_request", "conflict", "too_large") and err["message"]
                await ed.ws.send(b"\x00\x01binary")
                assert (await ed.recv("error"))["message"] == "messages must be JSON text"
                refused = [
                    {"put": [{"id": "shape:new", "typeName": "camera"}]},          # not a document record
                    {"put": [{"id": "page:x", "typeName": "shape", "type": "geo"}]},  # wrong id prefix
                    {"patch": [{"id": text, "set": {"props.color": "chartreuse"}}]},  # tldraw would refuse
                    {"patch": [{"id": text, "set": {"id": "shape:other"}}]},          # ids never change
                    {"patch": [{"id": text, "set": {"props.a.b": 1}}]},               # paths are one level deep
                    {"patch": [{"id": text, "set": {"x": "far"}}]},
                    {"patch": [{"id": text, "set": {"parentId": "shape:nowhere"}}]},  # no such parent
                    {"patch": [{"id": frame, "set": {"parentId": child}}]},           # a parent cycle
                    {"patch": [{"id": text, "set": {"x": 1}}], "remove": [text]},
                    {"remove": [42]},
                ]
                for k, parts in enumerate(refused):
                    err = await ed.diff(**parts)
                    assert err["type"] == "error" and err["seq"] == ed.seq, (parts, err)
                    assert err["code"] == "bad_request" and "refused" in err["message"], err
                    if parts.get("patch"):
                        rid = parts["patch"][0]["id"]
                        assert [r["id"] for r in err["revert"]["put"]] == [rid] and err["revert"]["put"][0] == recs[rid]
                assert state(service, "t") == before
                # still a working editor afterwards
                ok = await ed.diff(patch=[{"id": text, "set": {"x": 1}}])
                assert ok["type"] == "changes" and service._doc("t").canvas.nodes[text].x == 1
            async with Editor(base, "x", "bad-2", token=None) as ed:
                await ed.join()
                el = next(i for i, r in service.live._docs["x"].mirror.records.items() if r["type"] == "rectangle")
                before = state(service, "x")
                for parts in ({"patch": [{"id": el, "set": {"width": -4}}]}, {"put": [{"id": "e1", "type": 3}]},
                              {"patch": [{"id": el, "set": {"groupIds": "g"}}]}):
                    err = await ed.diff(**parts)
                    assert err["type"] == "error" and "refused" in err["message"]
                assert state(service, "x") == before

        run(go())


def test_an_agent_op_on_a_shape_the_person_just_deleted_fails_alone(server):
    base, service = server
    api(base, "POST", "/v1/documents", {"path": FRAMES, "name": "gone"}, token="s3cret")

    async def go() -> None:
        async with Editor(base, "gone", "ed-g") as a:
            await a.join()
            recs = service.live._docs["gone"].mirror.records
            text = next(i for i, r in recs.items() if r.get("type") == "text")
            await a.diff(remove=[text])
            rep = await asyncio.to_thread(api, base, "POST", "/v1/documents/gone/apply", {"ops": [
                {"op": "set_text", "id": text, "text": "too late"},
                {"op": "create_artboard", "id": "b", "name": "Still here", "x": 0, "y": 0, "w": 100, "h": 100}]},
                "s3cret")
            assert rep["applied"] == [1] and len(rep["errors"]) == 1 and text in rep["errors"][0]
            ch = await a.recv("changes")
            assert [r["id"] for r in ch["put"]] == rep["created"] and text not in json.dumps(ch)

    run(go())


def test_set_viewport_sends_a_camera_after_its_changes_to_protocol_2_editors_only(server):
    base, service = server
    api(base, "POST", "/v1/documents", {"path": FRAMES, "name": "cam"}, token="s3cret")

    async def apply(ops: Any) -> Dict[str, Any]:
        out: Dict[str, Any] = await asyncio.to_thread(api, base, "POST", "/v1/documents/cam/apply", {"ops": ops},
                                                      "s3cret")
        return out

    async def go() -> None:
        async with Editor(base, "cam", "cam-new") as a, Editor(base, "cam", "cam-old") as b:
            await a.join(protocol=2)
            await b.join()  # no protocol: 1
            sid = shape_ids(service, "cam")[0]
            page = service._doc("cam").canvas.current_page
            rep = await apply([{"op": "move_node", "id": sid, "x": 7, "y": 7},
                               {"op": "set_viewport", "x": 100, "y": 50, "zoom": 2}])
            assert rep["viewport"] == {page: {"x": 100, "y": 50, "w": 640, "h": 360, "zoom": 2}}
            ch = await a.recv()
            assert ch["type"] == "changes" and ch["by"] == "agent"
            cam = await a.recv()
            assert cam == {"type": "camera", "by": "agent", "page": page,
                           "viewport": {"x": 100, "y": 50, "w": 640, "h": 360}, "zoom": 2}
            await apply([{"op": "set_viewport", "x": 300, "y": 0, "zoom": 1}])
            cam2 = await a.recv()
            assert cam2["type"] == "camera" and cam2["viewport"] == {"x": 300, "y": 0, "w": 1280, "h": 720}
            # the undo of the second: the camera of the first again (no changes of records, so no version)
            await asyncio.to_thread(api, base, "POST", "/v1/documents/cam/undo", {}, "s3cret")
            back = await a.recv()
            assert back == cam
            # restoring a snapshot taken now, after another move, brings that camera back too
            await asyncio.to_thread(api, base, "POST", "/v1/documents/cam/snapshots", {"name": "here"}, "s3cret")
            await apply([{"op": "set_viewport", "x": 0, "y": 0, "zoom": 4}])
            assert (await a.recv())["viewport"] == {"x": 0, "y": 0, "w": 320, "h": 180}
            await asyncio.to_thread(api, base, "POST", "/v1/documents/cam/snapshots/here/restore", {}, "s3cret")
            assert await a.recv() == cam
            # a failing set_viewport sends nothing: the next message is the next apply's changes
            bad = await apply([{"op": "set_viewport", "zoom": 0}])
            assert bad["applied"] == [] and bad["errors"] == ["op 0 (set_viewport): zoom must be > 0, got 0.0"]
            await apply([{"op": "move_node", "id": sid, "x": 9, "y": 9}])
            nxt = await a.recv()
            assert nxt["type"] == "changes" and nxt["version"] == ch["version"] + 1
            # the protocol-1 editor got the changes and never a camera
            for _ in range(2):
                assert (await b.recv())["type"] == "changes"
            assert not [m for m in b.inbox if m["type"] == "camera"]

    run(go())
