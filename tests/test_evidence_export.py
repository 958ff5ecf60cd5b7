"""The evidence store (element tables, URLs and titles, screenshots once per content hash) and its export.

Exports are read back with the real readers (pyarrow through pandas, JSON lines,
networkx's GraphML reader) and compared with the store's own tables.
"""

from __future__ import annotations

import io
import json
import sqlite3

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen import Element, Screen, ScreenGraph, ScreenMeta, explore, sim
from spatialobs.screen.export import TABLES, export_store, load_frames, read_records, store_tables
from spatialobs.screen.store import MemoryStore, SQLiteStore, StoreError, png_size, screenshot_digest


def _png(color, size=(40, 30)):
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def _scr(title, text, app="demo"):
    return Screen([Element((0, 0, 400, 30), "TitleBar", title, states=("focused",)),
                   Element((10, 40, 90, 70), "Button", text, clickable=True)], 400, 300, ScreenMeta(app=app),
                  source="http://127.0.0.1:9/" + text, title=title)


class Camera:
    """A simulator that draws a small picture per screen (its text's color): screenshots without a display."""

    def __init__(self, app):
        self.app_ = app
        self.shots = 0

    def __getattr__(self, name):
        return getattr(self.app_, name)

    def screenshot_png(self):
        self.shots += 1
        scr = self.app_.screen()
        h = hash(tuple(e.text for e in scr.elements)) & 0xFFFFFF
        return _png((h >> 16, (h >> 8) & 255, h & 255))


def test_evidence_of_each_new_observation_and_screenshots_once_per_content(tmp_path):
    with ScreenGraph(tmp_path / "g.sqlite", app="demo") as g:
        calls = []

        def shot(png):
            return lambda: calls.append(1) or png

        a = g.observe(_scr("Home", "next"), screenshot=shot(_png("red")))
        t = g.record(a, "click|button|next|1,1", _scr("Page 2", "back"), screenshot=shot(_png("red")),
                     source_observation=1)
        # the same screen again: an exact duplicate, no picture taken, no new evidence
        t2 = g.record(t.target, "click|button|back|1,1", _scr("Home", "next"), screenshot=shot(_png("blue")),
                      source_observation=t.observation)
        assert (t.observation, t2.observation, len(calls)) == (2, 1, 2)
        ev = g.store.evidence()
        assert [e.observation for e in ev] == [1, 2] and [e.title for e in ev] == ["Home", "Page 2"]
        assert ev[0].url == "http://127.0.0.1:9/next" and ev[0].width == 400.0
        assert json.loads(ev[0].elements)[0] == {"bounds": [0.0, 0.0, 400.0, 30.0], "role": "TitleBar",
                                                 "text": "Home", "states": ["focused"]}
        # two observations with the same picture: one screenshot
        rows = list(g.store.screenshots())
        assert len(rows) == 1 and ev[0].screenshot == ev[1].screenshot == screenshot_digest(_png("red"))
        assert png_size(rows[0].png) == (40, 30) and g.store.screenshot(rows[0].digest) == _png("red")
        tr = g.store.transitions()
        assert [(r.source_observation, r.observation) for r in tr] == [(1, 2), (2, 1)]
        # a capture keeps its screenshot and URL
        c = g.record(a, "click|button|help|1,1", _scr("Help", "x", app="browser"), screenshot=_png("green"))
        cap = g.store.captures()[0]
        assert c.capture == "browser" and cap.url.endswith("/x") and cap.screenshot == screenshot_digest(_png("green"))


def test_an_in_memory_graph_keeps_no_evidence_unless_asked():
    g = ScreenGraph(app="demo")
    g.observe(_scr("Home", "next"), screenshot=_png("red"))
    assert not g.evidence and g.store.evidence() == [] and list(g.store.screenshots()) == []
    g = ScreenGraph(app="demo", evidence=True)
    g.observe(_scr("Home", "next"), screenshot=_png("red"))
    assert len(g.store.evidence()) == 1 and len(list(g.store.screenshots())) == 1


def test_bad_evidence_input():
    st = MemoryStore()
    with pytest.raises(StoreError, match="inside store.write"):
        st.add_screenshot("x", _png("red"))
    with st.write(), pytest.raises(InvalidInputError, match="a screenshot must be PNG bytes"):
        st.add_screenshot("x", b"GIF89a" + b"\0" * 30)
    with pytest.raises(InvalidInputError, match="evidence must be True, False or None"):
        ScreenGraph(evidence="yes")  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="no screenshot 'nope'"):
        st.screenshot("nope")
    with pytest.raises(InvalidInputError, match="screenshots must be True, False or None"):
        explore(sim.make_app("notepad"), steps=1, screenshots="on")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="element states must be a sequence of strings"):
        Element((0, 0, 1, 1), "button", states="focused")  # type: ignore[arg-type]


_V1 = """
CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE observations (seq INTEGER PRIMARY KEY, state INTEGER NOT NULL, display_mode TEXT, text_size TEXT,
    app TEXT, control BLOB NOT NULL, text_atoms BLOB NOT NULL, text TEXT NOT NULL);
CREATE TABLE transitions (seq INTEGER PRIMARY KEY, worker TEXT NOT NULL, episode INTEGER NOT NULL,
    step INTEGER NOT NULL, source INTEGER NOT NULL, signature TEXT NOT NULL, target INTEGER NOT NULL,
    state_novel INTEGER NOT NULL, edge_novel INTEGER NOT NULL, reward REAL NOT NULL, u_source REAL NOT NULL,
    u_target REAL NOT NULL, label TEXT NOT NULL);
CREATE TABLE captures (seq INTEGER PRIMARY KEY, worker TEXT NOT NULL, episode INTEGER NOT NULL,
    step INTEGER NOT NULL, source INTEGER NOT NULL, signature TEXT NOT NULL, app TEXT NOT NULL, screen TEXT NOT NULL);
CREATE INDEX transitions_edge ON transitions (source, signature, target);
"""


def test_a_store_of_schema_1_is_migrated_with_its_log_intact(tmp_path):
    # A store as the previous version wrote it: its log written through the current graph into memory,
    # then copied row by row into the old tables.
    mem = ScreenGraph(app="notepad")
    explore(sim.make_app("notepad"), steps=20, graph=mem)
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.executescript(_V1)
    con.execute("INSERT INTO config VALUES ('schema', '1')")
    for k, v in mem.store.config().items():
        con.execute("INSERT INTO config VALUES (?, ?)", (k, json.dumps(v)))
    for o in mem.store.observations():
        con.execute("INSERT INTO observations VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (o.seq, o.state, *o.meta, o.control,
                                                                                 o.text_atoms, o.text))
    for t in mem.store.transitions():
        con.execute("INSERT INTO transitions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (t.seq, t.worker, t.episode, t.step, t.source, t.signature, t.target, t.state_novel,
                     t.edge_novel, t.reward, t.u_source, t.u_target, t.label))
    con.commit()
    con.close()
    with ScreenGraph(path) as g:
        assert (g.num_states, g.num_edges, g.num_transitions) == (mem.num_states, mem.num_edges,
                                                                  mem.num_transitions)
        assert g.store.evidence() == [] and all(t.observation == 0 for t in g.store.transitions())
        ep = explore(sim.make_app("notepad"), steps=5, graph=g)
        assert len(ep.steps) == 5 and len(g.store.evidence()) >= 0
    assert sqlite3.connect(path).execute("SELECT value FROM config WHERE key='schema'").fetchone() == ("2",)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("export") / "g.sqlite"
    with ScreenGraph(path, app="notepad") as g:
        for k in range(3):
            cam = Camera(sim.make_app("notepad", seed=k))
            explore(cam, steps=25, selector="puct", graph=g, episode=k, start=cam.starts()[k])
        g.record(0, "click|button|help|1,1", _scr("Help", "x", app="browser"), screenshot=_png("green"), episode=9)
    return path


def test_tables_join_steps_to_observations_and_screenshots(store):
    t = store_tables(store)
    for name, cols in t.items():
        assert tuple(cols) == TABLES[name] and len({len(c) for c in cols.values()}) == 1, name
    steps, obs = t["steps"], t["observations"]
    assert len(steps["kind"]) == 76 and "browser" in steps["capture"]
    assert all((k == "transition") == (c is None) for k, c in zip(steps["kind"], steps["capture"]))
    seqs = set(obs["observation"])
    pics = set(t["screenshots"]["screenshot"])
    # every step taken in the app joins to the observations it went from and to, each with its picture
    inapp = [i for i, k in enumerate(steps["kind"]) if k == "transition"]
    assert all(steps["observation"][i] in seqs and steps["source_observation"][i] in seqs for i in inapp)
    caps = [i for i, k in enumerate(steps["kind"]) if k == "capture"]
    assert all(s in pics for s in obs["screenshot"]) and all(steps["screenshot"][i] in pics for i in caps)
    assert len(pics) <= len(seqs) + len(caps)
    assert sum(obs["elements"]) == len(t["elements"]["observation"])
    with ScreenGraph(store) as g:
        assert sorted(zip(t["edges"]["source"], t["edges"]["signature"], t["edges"]["target"], t["edges"]["count"])) \
            == sorted(g.edges())
        assert [round(u, 12) for u in t["states"]["u"]] == [round(g.u(s), 12) for s in t["states"]["state"]]


def test_one_reader_gives_the_rows_the_tables_are_built_from(store):
    r = read_records(store)
    t = store_tables(store)
    assert [o.seq for o in r.observations] == t["observations"]["observation"]
    assert len(r.transitions) + len(r.captures) == len(t["steps"]["kind"])
    assert set(r.evidence) <= {o.seq for o in r.observations} and r.config
    # an open store is read and left open; a path is opened and closed
    st = SQLiteStore(store, create=False)
    try:
        assert read_records(st).observations == r.observations
        assert st.config() == r.config
    finally:
        st.close()
    with pytest.raises(InvalidInputError, match="store must be a path or a GraphStore, got int"):
        read_records(3)  # type: ignore[arg-type]


def test_parquet_and_jsonl_exports_read_back_equal(store, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frames = load_frames(store)
    export_store(store, "parquet", tmp_path / "pq")
    export_store(store, "jsonl", tmp_path / "js")
    for name, frame in frames.items():
        back = pd.read_parquet(tmp_path / "pq" / f"{name}.parquet")
        pd.testing.assert_frame_equal(back, frame, check_dtype=False, check_exact=True)
        rows = [json.loads(line) for line in (tmp_path / "js" / f"{name}.jsonl").read_text().splitlines()]
        assert rows == frame.astype(object).where(frame.notna(), None).to_dict("records"), name
    for d in ("pq", "js"):
        files = sorted(p.name for p in (tmp_path / d / "screenshots").iterdir())
        assert files == sorted(f"{h}.png" for h in frames["screenshots"]["screenshot"])
        for h in frames["screenshots"]["screenshot"]:
            assert screenshot_digest((tmp_path / d / "screenshots" / f"{h}.png").read_bytes()) == h


def test_graphml_export_reads_back_in_networkx(store, tmp_path):
    nx = pytest.importorskip("networkx")
    out = tmp_path / "g.graphml"
    export_store(store, "graphml", out)
    G = nx.read_graphml(out)
    t = store_tables(store)
    assert sorted(G.nodes) == sorted(f"s{s}" for s in t["states"]["state"])
    got = sorted((int(a[1:]), d["signature"], int(b[1:]), d["count"], d["mean_reward"]) for a, b, d in
                 G.edges(data=True))
    e = t["edges"]
    assert got == sorted(zip(e["source"], e["signature"], e["target"], e["count"], e["mean_reward"]))
    node = G.nodes[f"s{t['states']['state'][0]}"]
    assert node["screenshot"] == t["states"]["screenshot"][0] and node["u"] == t["states"]["u"][0]


def test_export_command_and_its_errors(store, tmp_path, capsys):
    from spatialobs.cli import main

    assert main(["export", str(store), "--to", "jsonl", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "76 steps" in out and (tmp_path / "out" / "steps.jsonl").is_file()
    (tmp_path / "file").write_text("x")
    for argv, msg in ((["export", str(tmp_path / "none.sqlite"), "--to", "jsonl", str(tmp_path / "o")],
                       "no graph store at"),
                      (["export", str(store), "--to", "jsonl", str(tmp_path / "file")], "is a file, not a folder"),
                      (["export", str(store), "--to", "graphml", str(tmp_path / "out")], "is a folder, not a file"),
                      (["export", str(tmp_path / "file"), "--to", "jsonl", str(tmp_path / "o2")],
                       "is not a graph store")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and msg in err, err
    assert (tmp_path / "file").read_text() == "x"  # a file that is not a store is left as it was


def test_traces_carry_episode_step_signature_reward_novelty_u_observation_and_capture(tmp_path):
    from spatialobs.screen.prior import load_traces, save_traces

    with ScreenGraph(tmp_path / "g.sqlite", app="notepad") as g:
        ep = explore(sim.make_app("notepad"), steps=6, graph=g, episode=4)
    save_traces([ep], tmp_path / "t.jsonl")
    recs = load_traces(tmp_path / "t.jsonl")
    assert [r["step"] for r in recs] == list(range(6)) and {r["episode"] for r in recs} == {4}
    r = recs[0]
    for k in ("signature", "reward", "state_novel", "edge_novel", "u_source", "u_target", "observation",
              "source_observation", "capture", "fault"):
        assert k in r
    assert r["source_observation"] == 1 and r["observation"] >= 1 and r["signature"] == ep.steps[0].signature
