"""Exploring any application: the spec path against the named one, screenshots per observation, and export.

* ``driver-spec-path``: episodes of Mousepad through its shipped name, through a copy of
  its spec file, and through ``cmd:`` (the same program and files laid out by hand in
  the spec's place); each checks that it explored Mousepad and that the three screens
  of the first launch agree.
* ``evidence-screenshots``: Mousepad episodes into an SQLite store with and without a
  screenshot per new observation; each checks what the store holds.
* ``export``: a store of 10⁴ steps (ten copies of a 10³-step notepad log, each with its
  own states, observations, element tables and a distinct 1280 x 800 PNG per
  observation) exported to Parquet, JSON lines and GraphML; each checks the rows written.

Real-application groups skip where Mousepad or its system packages are missing.
"""

from __future__ import annotations

import io
import os
import struct
import zlib

import pytest

from spatialobs.screen import ScreenGraph, explore, sim
from spatialobs.screen.drivers import load_spec, make_driver
from spatialobs.screen.export import export_store, store_tables
from spatialobs.screen.store import CaptureRow, EvidenceRow, SQLiteStore, TransitionRow, screenshot_digest

STEPS = 8


def _mousepad_or_skip():
    from spatialobs.screen.drivers.atspi import unavailable_reason

    why = unavailable_reason("mousepad")
    if why:
        pytest.skip(why)


def _spec_file(tmp_path):
    # The shipped spec, copied as a user would start their own.
    from spatialobs.screen.drivers.spec import APPS_DIR

    path = tmp_path / "my-mousepad.toml"
    path.write_text((APPS_DIR / "mousepad.toml").read_text())
    return path


@pytest.mark.benchmark(group="driver-spec-path")
@pytest.mark.parametrize("path", ["named", "spec-file", "cmd"])
def test_driver_spec_path(benchmark, path, tmp_path):
    _mousepad_or_skip()
    app = {"named": "mousepad", "spec-file": None, "cmd": "cmd:mousepad --disable-server"}[path]
    if app is None:
        app = load_spec(_spec_file(tmp_path))
    with make_driver(app) as d:
        first = d.reset()

        def episode():
            return explore(d, steps=STEPS, selector="puct", start=d.starts(1)[0])

        ep = benchmark.pedantic(episode, rounds=2, iterations=1)
        assert d.app == "mousepad" and len(ep.steps) == STEPS
        assert [e.text for e in first.elements if e.role == "menu"][:2] == ["File", "Edit"]


@pytest.mark.benchmark(group="evidence-screenshots")
@pytest.mark.parametrize("screenshots", [False, True], ids=["without", "with"])
def test_screenshot_per_new_observation(benchmark, screenshots, tmp_path):
    _mousepad_or_skip()
    with make_driver("mousepad") as d, ScreenGraph(tmp_path / "g.sqlite", app="mousepad") as g:
        d.reset()

        def episode():
            return explore(d, steps=STEPS, selector="puct", graph=g, screenshots=screenshots)

        ep = benchmark.pedantic(episode, rounds=2, iterations=1)
        shots = list(g.store.screenshots())
        assert len(ep.steps) == STEPS and len(g.store.evidence()) == len(g.store.observations())
        assert (len(shots) > 0) == screenshots and ep.timing["screenshots"] >= 0


# -- export of a 10^4-step store ----------------------------------------------------------------


def _gui_png(width=1280, height=800):
    # A screenshot-like picture: bars, panels and rows of "text" (stripes), PNG at zlib level 1.
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        pytest.skip("Pillow is missing")
    img = Image.new("RGB", (width, height), (246, 246, 246))
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, width, 28), fill=(40, 60, 90))
    for y in range(60, height - 40, 22):
        for x in range(20, width - 200, 160):
            draw.rectangle((x, y, x + 90 + (x * y) % 50, y + 10), fill=(60 + x % 90, 60, 70))
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def _with_text(png, text):
    # The same picture with a tEXt chunk before IEND: a valid, distinct PNG, with no re-encoding.
    chunk = b"tEXt" + b"id\0" + text.encode()
    return png[:-12] + struct.pack(">I", len(chunk) - 4) + chunk + struct.pack(">I", zlib.crc32(chunk)) + png[-12:]


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    base = tmp_path_factory.mktemp("export")
    with ScreenGraph(app="notepad", evidence=True) as g:
        for k in range(2):
            app = sim.make_app("notepad", seed=k)
            explore(app, steps=500, graph=g, episode=k, start=app.starts()[k])
        log = g.store
        obs, ev, tr, cap = log.observations(), log.evidence(), log.transitions(), log.captures()
    png = _gui_png()
    path = base / "big.sqlite"
    n_states = 1 + max(o.state for o in obs)
    with SQLiteStore(path) as st, st.write():
        st.set_config({"app": "notepad", "kappa": 20.0, "u0": 0.5, "lambdas": [1.0, 1.0, 1.0]})
        for c in range(10):
            off, seq0 = c * n_states, c * len(obs)
            for o, e in zip(obs, ev):
                seq = st.add_observation(o.__class__(0, o.state + off, o.meta, o.control, o.text_atoms, o.text))
                pic = _with_text(png, f"{c}:{seq}")
                st.add_screenshot(screenshot_digest(pic), pic)
                st.add_evidence(EvidenceRow(seq, e.width, e.height, e.elements, e.url, e.title,
                                            screenshot_digest(pic), e.time, e.worker))
            for t in tr:
                st.add_transition(TransitionRow(0, t.worker, t.episode + 2 * c, t.step, t.source + off, t.signature,
                                                t.target + off, t.state_novel, t.edge_novel, t.reward, t.u_source,
                                                t.u_target, t.label, t.source_observation + seq0,
                                                t.observation + seq0, t.action, t.time))
            for r in cap:
                st.add_capture(CaptureRow(0, r.worker, r.episode + 2 * c, r.step, r.source + off, r.signature, r.app,
                                          r.screen, r.source_observation + seq0, r.url, r.title, None, r.action,
                                          r.time))
    return path, 10 * (len(tr) + len(cap)), 10 * len(obs)


@pytest.mark.benchmark(group="export")
@pytest.mark.parametrize("to", ["parquet", "jsonl", "graphml"])
def test_export_10k_steps(benchmark, big_store, to, tmp_path):
    if to == "parquet":
        pytest.importorskip("pyarrow")
    path, steps, observations = big_store
    out = tmp_path / ("g.graphml" if to == "graphml" else "out")
    written = benchmark.pedantic(lambda: export_store(path, to, out), rounds=3, iterations=1)
    assert steps == 10_000
    if to == "graphml":
        assert written == [out] and out.stat().st_size > 0
    else:
        t = store_tables(path)
        assert len(t["steps"]["kind"]) == steps and len(t["observations"]["observation"]) == observations
        assert len(os.listdir(out / "screenshots")) == observations
