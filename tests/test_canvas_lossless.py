"""Nothing is lost: a rolled-back batch leaves the document byte for byte as it was, and a tldraw
export keeps what tldraw's schema cannot hold."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialobs import InvalidInputError, OutOfRangeError
from spatialobs.canvas import Binding, Canvas, load
from tests.conftest import shared_files


def small_canvas() -> Canvas:
    c = Canvas()
    c.add({"id": "f", "type": "frame", "parent": c.current_page, "x": 0, "y": 0, "w": 300, "h": 200})
    for k in range(6):
        c.add({"id": f"n{k}", "type": "geo", "parent": "f" if k % 2 else c.current_page,
               "x": 10 * k, "y": 5 * k, "w": 40, "h": 30})
    c.add({"id": "arrow", "type": "arrow", "parent": c.current_page, "x": 0, "y": 0, "w": 10, "h": 10})
    c.add(Binding("b1", "arrow", "arrow", "n2", "end"))
    return c


@pytest.mark.generated
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["remove", "update", "add"]), st.integers(0, 5)), min_size=1, max_size=6))
def test_failed_batch_restores_the_exact_document(steps):
    c = small_canvas()
    before = c.to_json()
    bounds = {nid: c.page_bounds(nid) for nid in c.nodes}
    with pytest.raises(InvalidInputError, match="no-such-parent"):
        with c.batch():
            for t, (op, k) in enumerate(steps):
                nid = f"n{k}"
                if nid not in c.nodes:
                    continue
                if op == "remove":
                    c.remove(nid)
                elif op == "update":
                    c.update(nid, x=999.0, parent="f")
                else:
                    c.add({"id": f"new{t}", "type": "geo", "parent": c.current_page, "w": 5, "h": 5})
            c.add({"id": "bad", "type": "geo", "parent": "no-such-parent"})
    assert c.to_json() == before
    assert {nid: c.page_bounds(nid) for nid in c.nodes} == bounds


@pytest.mark.parametrize("path", shared_files("canvases", "*.tldr")[:3], ids=lambda p: p.name[:30])
def test_failed_removal_on_a_real_file_keeps_bytes_and_export(path):
    c = load(path)
    before, export = c.to_json(), c.to_tldraw()
    victims = list(c.nodes)[:5]
    with pytest.raises(OutOfRangeError, match="missing-node"):
        with c.batch():
            for nid in victims:
                if nid in c.nodes:
                    c.remove(nid)
            c.update("missing-node", x=1.0)
    assert c.to_json() == before
    assert c.to_tldraw() == export


def test_tldraw_export_keeps_types_styles_and_names_tldraw_cannot_hold(shared_data):
    """HTML-made containers and images, CSS styles and names survive export -> import via meta."""
    from spatialobs.canvas import Executor

    c = load(shared_data / "canvases" / "1797127235__argus__architecture.tldr")
    report = Executor(c).apply([
        {"op": "create_artboard", "id": "home", "name": "Home", "x": 3000, "y": 0, "w": 640, "h": 400},
        {"op": "parse_html", "target": "home",
         "html": "<section style='padding: 16px; background-color: #fafafa'><h1>Hi</h1><img src='a.png'></section>"},
        {"op": "update_node", "id": "shape:server", "name": "Server box"},
    ])
    assert report.ok, report.errors
    again = load(c.to_tldraw())
    for nid in report.created + ["shape:server"]:
        a, b = c.nodes[nid], again.nodes[nid]
        assert (b.type, b.style, b.name, b.text) == (a.type, a.style, a.name, a.text), nid
        if a.type == "text":  # tldraw sizes text itself: only the corner is fixed
            assert again.page_bounds(nid)[:2] == pytest.approx(c.page_bounds(nid)[:2])
        else:
            assert again.page_bounds(nid) == pytest.approx(c.page_bounds(nid))
    assert {c.nodes[n].type for n in report.created} >= {"container", "image"}
    # untouched records carry no extra meta
    untouched = next(r for r in c.to_tldraw()["records"] if r.get("id") == "shape:pi")
    assert "spatialobs" not in untouched.get("meta", {})
