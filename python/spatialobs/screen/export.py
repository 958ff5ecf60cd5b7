"""What an exploration leaves, as tables: export a graph store to Parquet, JSON lines or GraphML, or load it in pandas.

A store (:mod:`spatialobs.screen.store`) holds the log of an exploration and the
evidence of its observations. :func:`store_tables` reads it into six tables, each
a dict of equal-length column lists (:data:`TABLES` gives their columns):

``observations``
    one row per unique screen: ``observation`` (its seq), ``state``, ``app``,
    ``display_mode``, ``text_size``, the normalized ``text``, and its evidence:
    ``width``, ``height``, ``url``, ``title``, ``screenshot`` (the content hash, or
    None), ``time``, ``worker``, ``elements`` (how many);
``elements``
    one row per element of every observation with evidence: ``observation``,
    ``index`` (reading order), ``role``, ``text``, ``x0``, ``y0``, ``x1``, ``y1``,
    ``editable``, ``clickable``, ``states`` (``|``-joined), ``id``;
``steps``
    one row per executed step (in-app transitions and captures, in the order they
    were recorded): ``kind`` (``"transition"``, ``"capture"`` or ``"fault"``),
    ``worker``, ``episode``, ``step``, ``source``, ``signature``, ``label``,
    ``action`` (JSON), ``target`` (−1 for a capture), ``state_novel``,
    ``edge_novel``, ``reward``, ``u_source``, ``u_target``,
    ``source_observation``, ``observation`` (they join to ``observations``),
    ``capture`` (the other application, or None), ``screenshot`` (a capture's),
    ``url`` (a capture's), ``time``;
``states``
    one row per state: ``state``, ``observations``, ``first_observation``,
    ``screenshot`` (of its first observation with one), ``title``, ``url``,
    ``n`` (in-app steps from it), ``ambiguity`` (D(s)), ``u``;
``edges``
    one row per labeled edge: ``source``, ``signature``, ``target``, ``count``,
    ``mean_reward``, ``label``;
``screenshots``
    one row per stored picture: ``screenshot`` (the content hash), ``width``,
    ``height``, ``bytes``, ``file`` (its file name in an export).

:func:`export_store` writes them as ``<table>.parquet`` (pyarrow: the ``export``
extra) or ``<table>.jsonl`` files in a folder, with the pictures as
``screenshots/<hash>.png`` beside them, or the graph as one GraphML file (states
as nodes, labeled edges with their counts and mean rewards, and each node's
screenshot hash). :func:`load_frames` returns the tables as pandas data frames.

Examples
--------
A notebook-style session (``pip install "spatialobs[export]"``)::

    from spatialobs.screen.export import export_store, load_frames

    frames = load_frames("calc-graph.sqlite")
    steps, obs = frames["steps"], frames["observations"]
    # what each step produced, with the picture of the screen it reached
    seen = steps.merge(obs[["observation", "title", "screenshot"]], on="observation", how="left")
    seen.groupby("signature")["reward"].mean().sort_values().tail()
    export_store("calc-graph.sqlite", "parquet", "calc-export")   # calc-export/steps.parquet, ...

>>> from spatialobs.screen import ScreenGraph, explore, sim
>>> with ScreenGraph(app="notepad", evidence=True) as g:
...     _ = explore(sim.make_app("notepad"), steps=5, graph=g)
...     t = store_tables(g.store)
>>> len(t["steps"]["signature"]), t["observations"]["observation"][0]
(5, 1)
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union
from xml.sax.saxutils import escape

from spatialobs._errors import InvalidInputError
from spatialobs.screen.graph import KAPPA, U0, Tallies, blend_u
from spatialobs.screen.store import (CaptureRow, EvidenceRow, GraphStore, ObservationRow, SQLiteStore, StoreError,
                                     TransitionRow)

__all__ = ["TABLES", "FORMATS", "store_tables", "export_store", "load_frames", "ExportError", "describe", "read_records",
           "StoreRecords"]

#: The formats :func:`export_store` writes.
FORMATS = ("parquet", "jsonl", "graphml")

#: The columns of each table, in order.
TABLES: Dict[str, Tuple[str, ...]] = {
    "observations": ("observation", "state", "app", "display_mode", "text_size", "text", "width", "height", "url",
                     "title", "screenshot", "time", "worker", "elements"),
    "elements": ("observation", "index", "role", "text", "x0", "y0", "x1", "y1", "editable", "clickable", "states",
                 "id"),
    "steps": ("kind", "worker", "episode", "step", "source", "signature", "label", "action", "target",
              "state_novel", "edge_novel", "reward", "u_source", "u_target", "source_observation", "observation",
              "capture", "screenshot", "url", "time"),
    "states": ("state", "observations", "first_observation", "screenshot", "title", "url", "n", "ambiguity", "u"),
    "edges": ("source", "signature", "target", "count", "mean_reward", "label"),
    "screenshots": ("screenshot", "width", "height", "bytes", "file"),
}

Columns = Dict[str, List[Any]]


class ExportError(StoreError):
    """An export cannot be written (a missing optional package, an output in the way)."""


def _open(store: Union[str, "os.PathLike[str]", GraphStore]) -> Tuple[GraphStore, bool]:
    if isinstance(store, GraphStore):
        return store, False
    if isinstance(store, (str, os.PathLike)):
        return SQLiteStore(Path(store), create=False), True
    raise InvalidInputError(f"store must be a path or a GraphStore, got {type(store).__name__}")


class StoreRecords(NamedTuple):
    """Everything a graph store recorded, read in one pass (see :func:`read_records`)."""

    #: The run's configuration (app, seed, τ, κ, u₀, ...).
    config: Dict[str, Any]
    observations: List[ObservationRow]
    transitions: List[TransitionRow]
    captures: List[CaptureRow]
    #: The evidence rows by observation sequence number.
    evidence: Dict[int, EvidenceRow]


def read_records(store: Union[str, "os.PathLike[str]", GraphStore]) -> StoreRecords:
    """Read a graph store's configuration, observations, transitions, captures and evidence.

    The one reader behind :func:`store_tables` and the training windows
    (:func:`spatialobs.screen.training.data.episodes_from_store`).

    Parameters
    ----------
    store
        A path to an SQLite store (opened read-only and closed again) or an open
        :class:`~spatialobs.screen.store.GraphStore` (left open).

    Returns
    -------
    StoreRecords
        The rows in the store's order.

    Raises
    ------
    InvalidInputError
        ``store`` is neither a path nor a store.
    StoreError
        The file is not a graph store.
    """
    st, own = _open(store)
    try:
        return StoreRecords(st.config(), st.observations(0), st.transitions(0), st.captures(0),
                            {e.observation: e for e in st.evidence(0)})
    finally:
        if own:
            st.close()


def _empty(name: str) -> Columns:
    return {c: [] for c in TABLES[name]}


def _add(cols: Columns, name: str, values: Tuple[Any, ...]) -> None:
    for k, v in zip(TABLES[name], values):
        cols[k].append(v)


def store_tables(store: Union[str, "os.PathLike[str]", GraphStore]) -> Dict[str, Columns]:
    """The store's six tables as dicts of column lists (see the module docstring).

    ``store`` is a path to an SQLite store or an open :class:`~spatialobs.screen.store.GraphStore`.
    """
    st, own = _open(store)
    try:
        cfg, obs_rows, tr_rows, cap_rows, ev = read_records(st)
        shots = [(r.digest, r.width, r.height, len(r.png)) for r in st.screenshots()]
    finally:
        if own:
            st.close()
    obs, els = _empty("observations"), _empty("elements")
    for r in obs_rows:
        e = ev.get(r.seq)
        items: List[Dict[str, Any]] = []
        if e is not None:
            try:
                items = json.loads(e.elements) if e.elements else []
            except ValueError:
                raise StoreError(f"the evidence of observation {r.seq} holds no element table") from None
        _add(obs, "observations", (
                r.seq, r.state, r.meta[2], r.meta[0], r.meta[1], r.text, e.width if e else None,
                e.height if e else None, e.url if e else None, e.title if e else None, e.screenshot if e else None,
                e.time if e else None, e.worker if e else None, len(items)))
        for i, d in enumerate(items):
            b = d.get("bounds") or [None] * 4
            _add(els, "elements", (
                    r.seq, i, d.get("role"), d.get("text"), b[0], b[1], b[2], b[3], bool(d.get("editable", False)),
                    bool(d.get("clickable", False)), "|".join(d.get("states", ())), d.get("id")))
    steps = _empty("steps")
    merged: List[Tuple[float, int, int, Any]] = [(t.time, 0, t.seq, t) for t in tr_rows] + \
        [(c.time, 1, c.seq, c) for c in cap_rows]
    # Recorded order: by time when the rows carry one (several writers), else transitions and captures by seq.
    merged.sort(key=lambda x: (x[0], x[2], x[1]))
    for _, kind, _, r in merged:
        vals: Tuple[Any, ...]
        if kind == 0:
            vals = ("transition", r.worker, r.episode, r.step, r.source, r.signature, r.label, r.action, r.target,
                    r.state_novel, r.edge_novel, r.reward, r.u_source, r.u_target, r.source_observation,
                    r.observation, None, None, None, r.time)
        else:
            label = ""
            if r.action:
                try:
                    a = json.loads(r.action)
                    label = " ".join(str(x) for x in (a.get("op"), a.get("text") or a.get("value") or "") if x)
                except ValueError:
                    label = ""
            vals = ("fault" if r.app.startswith("fault:") else "capture", r.worker, r.episode, r.step, r.source,
                    r.signature, label, r.action, -1, False, False, 0.0, None, None, r.source_observation, 0, r.app,
                    r.screenshot, r.url, r.time)
        _add(steps, "steps", vals)
    # The graph's statistics, from the log as the graph replays it.
    tal = Tallies()
    for t in tr_rows:
        tal.add_transition(t.source, t.signature, t.target, t.reward)
    labels: Dict[Tuple[int, str], str] = {}
    rsum: Dict[Tuple[int, str, int], float] = {}
    for tr in tr_rows:
        labels.setdefault((tr.source, tr.signature), tr.label)
        key = (tr.source, tr.signature, tr.target)
        rsum[key] = rsum.get(key, 0.0) + tr.reward
    kappa, u0 = float(cfg.get("kappa", KAPPA)), float(cfg.get("u0", U0))
    edges = _empty("edges")
    for src, sig, dst, c in tal.edges():
        _add(edges, "edges", (src, sig, dst, c, rsum[(src, sig, dst)] / c, labels.get((src, sig), "")))
    states = _empty("states")
    first: Dict[int, int] = {}
    count: Dict[int, int] = {}
    shot: Dict[int, Any] = {}
    for seq, state, sh in zip(obs["observation"], obs["state"], obs["screenshot"]):
        first.setdefault(state, seq)
        count[state] = count.get(state, 0) + 1
        if sh is not None:
            shot.setdefault(state, sh)
    where = {seq: i for i, seq in enumerate(obs["observation"])}
    for state in sorted(first):
        i = where[first[state]]
        amb = tal.ambiguity(state)
        _add(states, "states", (state, count[state], first[state], shot.get(state), obs["title"][i],
                                           obs["url"][i], tal.n(state), amb, blend_u(tal.n(state), amb, kappa, u0)))
    pics = _empty("screenshots")
    for digest, w, h, n in shots:
        _add(pics, "screenshots", (digest, w, h, n, f"screenshots/{digest}.png"))
    return {"observations": obs, "elements": els, "steps": steps, "states": states, "edges": edges,
            "screenshots": pics}


def load_frames(store: Union[str, "os.PathLike[str]", GraphStore]) -> Dict[str, Any]:
    """The store's tables as pandas data frames (needs pandas: the ``export`` extra).

    Examples
    --------
    >>> frames = load_frames("calc-graph.sqlite")  # doctest: +SKIP
    >>> frames["steps"].groupby("episode")["state_novel"].sum()  # doctest: +SKIP
    """
    try:
        import pandas as pd
    except ImportError:
        raise ExportError("load_frames needs pandas (pip install spatialobs[export])") from None
    return {name: pd.DataFrame(cols, columns=list(TABLES[name])) for name, cols in store_tables(store).items()}


def _screenshots(store: Union[str, "os.PathLike[str]", GraphStore]) -> Iterator[Tuple[str, bytes]]:
    st, own = _open(store)
    try:
        for r in st.screenshots():
            yield r.digest, r.png
    finally:
        if own:
            st.close()


def export_store(store: Union[str, "os.PathLike[str]", GraphStore], to: str, out: Union[str, "os.PathLike[str]"],
                 tables: Optional[Dict[str, Columns]] = None) -> List[Path]:
    """Write the store's tables as ``to`` (``"parquet"``, ``"jsonl"`` or ``"graphml"``) into ``out``; the paths written.

    Parquet and JSON lines: ``out`` is a folder (created) holding one file per table
    and ``screenshots/<hash>.png``. GraphML: ``out`` is the file. Every file is
    written whole (to a temporary name, then renamed) or not at all. ``tables``:
    :func:`store_tables` of the same store, when already read.
    """
    if to not in FORMATS:
        raise InvalidInputError(f"export format must be one of {', '.join(FORMATS)}, got {to!r}")
    if to == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ExportError("Parquet export needs pyarrow (pip install spatialobs[export])") from None
    tables = store_tables(store) if tables is None else tables
    dest = Path(out)
    if to == "graphml":
        if dest.is_dir():
            raise ExportError(f"{str(dest)!r} is a folder; a GraphML export is one file")
        dest.parent.mkdir(parents=True, exist_ok=True)
        _atomic_text(dest, _graphml(tables))
        return [dest]
    if dest.exists() and not dest.is_dir():
        raise ExportError(f"{str(dest)!r} is a file; a {to} export is a folder")
    (dest / "screenshots").mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    for name, cols in tables.items():
        path = dest / f"{name}.{to}"
        tmp = path.with_name(path.name + ".tmp")
        if to == "parquet":
            pq.write_table(pa.table({c: pa.array(cols[c], type=_arrow_type(pa, name, c)) for c in TABLES[name]}),
                           str(tmp))
        else:
            keys = TABLES[name]
            # One object per row, the values encoded column by column (a json.dumps per row took 2 s of 3 at 10^4 steps).
            fmt = "{" + ",".join(_ESC(k).replace("%", "%%") + ":%s" for k in keys) + "}\n"
            with open(tmp, "w", encoding="utf-8") as f:
                f.writelines(fmt % row for row in zip(*(_json_values(cols[k]) for k in keys)))
        os.replace(tmp, path)
        written.append(path)
    for digest, png in _screenshots(store):
        path = dest / "screenshots" / f"{digest}.png"
        if not path.exists():
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(png)
            os.replace(tmp, path)
        written.append(path)
    return written


# The Arrow type of each column (a column of only None would otherwise have no type).
_INT = {"observation", "state", "index", "episode", "step", "source", "target", "source_observation", "count",
        "observations", "first_observation", "n", "width", "height", "bytes", "elements"}
_FLOAT = {"x0", "y0", "x1", "y1", "reward", "u_source", "u_target", "mean_reward", "ambiguity", "u", "time"}
_BOOL = {"editable", "clickable", "state_novel", "edge_novel"}


def _arrow_type(pa: Any, table: str, column: str) -> Any:
    if table == "observations" and column in ("width", "height"):
        return pa.float64()
    if column in _INT:
        return pa.int64()
    if column in _FLOAT:
        return pa.float64()
    if column in _BOOL:
        return pa.bool_()
    return pa.string()


_ESC = json.encoder.encode_basestring


def _json_values(col: List[Any]) -> List[str]:
    # Each value as json.dumps(v, ensure_ascii=False) writes it, without its per-call overhead.
    out = []
    for v in col:
        if v is None:
            out.append("null")
        elif v is True or v is False:
            out.append("true" if v else "false")
        elif isinstance(v, str):
            out.append(_ESC(v))
        elif isinstance(v, int):
            out.append(int.__repr__(v))
        elif isinstance(v, float) and math.isfinite(v):
            out.append(float.__repr__(v))
        else:
            out.append(json.dumps(v, ensure_ascii=False))
    return out


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _graphml(t: Dict[str, Columns]) -> str:
    # GraphML (graphml.graphdrawing.org): a directed multigraph, one node per state, one edge per labeled edge.
    node_keys = (("observations", "int"), ("first_observation", "int"), ("screenshot", "string"),
                 ("title", "string"), ("url", "string"), ("n", "int"), ("ambiguity", "double"), ("u", "double"))
    edge_keys = (("signature", "string"), ("count", "int"), ("mean_reward", "double"), ("label", "string"))
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
           'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
           'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
           'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">']
    for name, kind in node_keys:
        out.append(f'  <key id="n_{name}" for="node" attr.name="{name}" attr.type="{kind}"/>')
    for name, kind in edge_keys:
        out.append(f'  <key id="e_{name}" for="edge" attr.name="{name}" attr.type="{kind}"/>')
    out.append('  <graph id="G" edgedefault="directed">')
    st = t["states"]
    for i, s in enumerate(st["state"]):
        out.append(f'    <node id="s{s}">')
        for name, _ in node_keys:
            v = st[name][i]
            if v is not None:
                out.append(f'      <data key="n_{name}">{escape(_xml_value(v))}</data>')
        out.append("    </node>")
    ed = t["edges"]
    for i, (s, tgt) in enumerate(zip(ed["source"], ed["target"])):
        out.append(f'    <edge id="e{i}" source="s{s}" target="s{tgt}">')
        for name, _ in edge_keys:
            out.append(f'      <data key="e_{name}">{escape(_xml_value(ed[name][i]))}</data>')
        out.append("    </edge>")
    out += ["  </graph>", "</graphml>", ""]
    return "\n".join(out)


def _xml_value(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    # Characters XML 1.0 cannot hold at all (controls other than tab and newlines) are dropped.
    return "".join(ch for ch in str(v) if ch in "\t\n\r" or ord(ch) >= 0x20)


def describe(tables: Dict[str, Columns]) -> str:
    """A one-line summary of :func:`store_tables`'s result (what the export command prints)."""
    t = tables
    return (f"{len(t['states']['state'])} states, {len(t['edges']['source'])} edges, "
            f"{len(t['steps']['kind'])} steps, {len(t['observations']['observation'])} observations, "
            f"{len(t['screenshots']['screenshot'])} screenshots")

