"""Where a :class:`~spatialobs.screen.ScreenGraph` keeps its log: the store interface and two stores.

A graph is an append-only log of three record kinds, each numbered by a sequence
that grows by one per record:

* **observations**: every unique screen the state index learned, with its atoms,
  its text, its metadata and the (canonical) state it was assigned;
* **transitions**: one executed action ``(source, signature, target)`` with the
  novelty flags, the reward and the ambiguities judged when it was recorded;
* **captures**: actions whose resulting screen belonged to another application
  (logged, never folded into the graph).

Beside the log, a store may keep the *evidence* of each observation
(:class:`EvidenceRow`: its element table, the page's URL or the window's title, the
time, and the content hash of the screenshot taken when the screen was read) and
the screenshots themselves, as PNG stored once per content hash
(:meth:`GraphStore.add_screenshot`). Evidence is not replayed: a graph's state
depends on the log only. :class:`MemoryStore` and :class:`SQLiteStore` keep it;
a store that does not says so with ``keeps_evidence = False``.

Every process holding a graph replays the log into its own state index and counts;
a writer appends one step (at most one observation and one transition or capture)
inside one exclusive transaction, after catching up with the log. A process killed
mid-step therefore loses its own uncommitted step and nothing else.

:class:`GraphStore` is the interface (a networked store implements the same nine
methods); :class:`MemoryStore` keeps the log in lists for one process;
:class:`SQLiteStore` is the embedded default for one file shared by several
processes on one machine (WAL journal, ``BEGIN IMMEDIATE`` write transactions).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from spatialobs._errors import InvalidInputError, SpatialObsError
from spatialobs.screen.limits import echo

__all__ = [
    "ObservationRow",
    "TransitionRow",
    "CaptureRow",
    "EvidenceRow",
    "ScreenshotRow",
    "png_size",
    "screenshot_digest",
    "GraphStore",
    "MemoryStore",
    "SQLiteStore",
    "StoreError",
    "open_store",
]

SCHEMA_VERSION = 2


class StoreError(SpatialObsError):
    """A store cannot be opened, is of another schema version, or a write failed."""


@dataclass(frozen=True)
class ObservationRow:
    """One unique observation: atoms as raw little-endian uint64 bytes, text, metadata key, state."""

    seq: int
    state: int
    meta: Tuple[Optional[str], Optional[str], Optional[str]]
    control: bytes
    text_atoms: bytes
    text: str


@dataclass(frozen=True)
class TransitionRow:
    """One recorded in-app transition ``(source, signature, target)`` and how it was judged."""

    seq: int
    worker: str
    episode: int
    step: int
    source: int
    signature: str
    target: int
    state_novel: bool
    edge_novel: bool
    reward: float
    u_source: float
    u_target: float
    label: str = ""
    #: The observation the action was taken on and the one it produced (their seqs; 0: unknown).
    source_observation: int = 0
    observation: int = 0
    #: The action as executed (JSON: op, role, text, value, bounds) and when (Unix seconds).
    action: str = ""
    time: float = 0.0


@dataclass(frozen=True)
class CaptureRow:
    """An action from ``source`` whose screen belonged to application ``app`` (screen as generic JSON).

    ``app`` is ``"fault:<kind>"`` for a failed step (the application crashed, hung...).
    """

    seq: int
    worker: str
    episode: int
    step: int
    source: int
    signature: str
    app: str
    screen: str
    source_observation: int = 0
    #: The page's URL or the window's title, and the screenshot's content hash (None: none taken).
    url: Optional[str] = None
    title: Optional[str] = None
    screenshot: Optional[str] = None
    action: str = ""
    time: float = 0.0


@dataclass(frozen=True)
class EvidenceRow:
    """What was seen when observation ``observation`` was read: its elements (generic JSON list), where, when.

    ``url`` is the page's address (web) or None; ``title`` the window's or page's
    title; ``screenshot`` the content hash of the screenshot taken at the same
    moment (None when the driver draws none).
    """

    observation: int
    width: float
    height: float
    elements: str
    url: Optional[str] = None
    title: Optional[str] = None
    screenshot: Optional[str] = None
    time: float = 0.0
    worker: str = ""


@dataclass(frozen=True)
class ScreenshotRow:
    """One stored screenshot: its content hash, size in pixels and PNG bytes."""

    digest: str
    width: int
    height: int
    png: bytes


def screenshot_digest(png: bytes) -> str:
    """The content hash a screenshot is stored under (BLAKE2b, 16 bytes, hex).

    Examples
    --------
    >>> screenshot_digest(b"x")
    '442a44457137672b3218c1007dc8f76a'
    """
    import hashlib

    return hashlib.blake2b(png, digest_size=16).hexdigest()


def png_size(png: bytes) -> Tuple[int, int]:
    """The width and height of a PNG from its header; :class:`~spatialobs.InvalidInputError` if it is not one.

    Examples
    --------
    >>> png_size(bytes.fromhex("89504e470d0a1a0a0000000d49484452") + (640).to_bytes(4, "big") + (480).to_bytes(4, "big"))
    (640, 480)
    """
    if not isinstance(png, (bytes, bytearray)) or len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n" \
            or png[12:16] != b"IHDR":
        raise InvalidInputError("a screenshot must be PNG bytes")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


class GraphStore(ABC):
    """The log a :class:`~spatialobs.screen.ScreenGraph` replays and appends to.

    Appends happen only inside :meth:`write`, which must be exclusive across every
    process sharing the store and atomic (all of its appends or none). Reads return
    committed records with ``seq`` greater than ``after``, in ``seq`` order.
    """

    @abstractmethod
    def write(self) -> Any:
        """Context manager: one exclusive, atomic write transaction."""

    @abstractmethod
    def observations(self, after: int = 0) -> List[ObservationRow]: ...

    @abstractmethod
    def transitions(self, after: int = 0) -> List[TransitionRow]: ...

    @abstractmethod
    def captures(self, after: int = 0) -> List[CaptureRow]: ...

    @abstractmethod
    def add_observation(self, row: ObservationRow) -> int:
        """Append (``row.seq`` is ignored) and return the new seq."""

    @abstractmethod
    def add_transition(self, row: TransitionRow) -> int: ...

    @abstractmethod
    def add_capture(self, row: CaptureRow) -> int: ...

    @abstractmethod
    def config(self) -> Dict[str, Any]:
        """The graph parameters stored with the log ({} for a new store)."""

    @abstractmethod
    def set_config(self, config: Dict[str, Any]) -> None:
        """Store the graph parameters (inside :meth:`write`)."""

    #: Whether the store keeps evidence and screenshots (the methods below).
    keeps_evidence = False

    def add_evidence(self, row: EvidenceRow) -> None:
        """Keep the evidence of an observation (inside :meth:`write`)."""
        raise StoreError(f"{type(self).__name__} keeps no evidence")

    def evidence(self, after: int = 0) -> List[EvidenceRow]:
        """The evidence of the observations after seq ``after``, in observation order."""
        return []

    def add_screenshot(self, digest: str, png: bytes) -> bool:
        """Keep a screenshot under its content hash (inside :meth:`write`); False when it was there already."""
        raise StoreError(f"{type(self).__name__} keeps no screenshots")

    def screenshot(self, digest: str) -> bytes:
        """The PNG bytes of a stored screenshot."""
        raise StoreError(f"{type(self).__name__} keeps no screenshots")

    def screenshots(self) -> Iterator[ScreenshotRow]:
        """Every stored screenshot, in the order they were stored."""
        return iter(())

    def close(self) -> None:
        """Release the store's resources."""

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class MemoryStore(GraphStore):
    """The log in Python lists: one process, any number of threads.

    Examples
    --------
    >>> st = MemoryStore()
    >>> with st.write():
    ...     st.add_capture(CaptureRow(0, "w", 0, 0, 3, "click|button|help|1,1", "browser", "{}"))
    1
    >>> [r.app for r in st.captures()]
    ['browser']
    """

    def __init__(self) -> None:
        self._obs: List[ObservationRow] = []
        self._tr: List[TransitionRow] = []
        self._cap: List[CaptureRow] = []
        self._ev: List[EvidenceRow] = []
        self._shots: Dict[str, bytes] = {}
        self._config: Dict[str, Any] = {}
        self._lock = threading.RLock()
        self._depth = 0

    keeps_evidence = True

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._lock:
            marks = (len(self._obs), len(self._tr), len(self._cap), dict(self._config), len(self._ev),
                     list(self._shots))
            self._depth += 1
            try:
                yield
            except BaseException:
                del self._obs[marks[0]:], self._tr[marks[1]:], self._cap[marks[2]:], self._ev[marks[4]:]
                for k in list(self._shots)[len(marks[5]):]:
                    del self._shots[k]
                self._config = marks[3]
                raise
            finally:
                self._depth -= 1

    def _check_writing(self) -> None:
        if not self._depth:
            raise StoreError("appends must happen inside store.write()")

    def observations(self, after: int = 0) -> List[ObservationRow]:
        with self._lock:
            return self._obs[max(after, 0):]

    def transitions(self, after: int = 0) -> List[TransitionRow]:
        with self._lock:
            return self._tr[max(after, 0):]

    def captures(self, after: int = 0) -> List[CaptureRow]:
        with self._lock:
            return self._cap[max(after, 0):]

    def add_observation(self, row: ObservationRow) -> int:
        self._check_writing()
        seq = len(self._obs) + 1
        self._obs.append(_replace_seq(row, seq))
        return seq

    def add_transition(self, row: TransitionRow) -> int:
        self._check_writing()
        seq = len(self._tr) + 1
        self._tr.append(_replace_seq(row, seq))
        return seq

    def add_capture(self, row: CaptureRow) -> int:
        self._check_writing()
        seq = len(self._cap) + 1
        self._cap.append(_replace_seq(row, seq))
        return seq

    def config(self) -> Dict[str, Any]:
        with self._lock:
            return dict(self._config)

    def set_config(self, config: Dict[str, Any]) -> None:
        self._check_writing()
        self._config = dict(config)

    def add_evidence(self, row: EvidenceRow) -> None:
        self._check_writing()
        self._ev.append(row)

    def evidence(self, after: int = 0) -> List[EvidenceRow]:
        with self._lock:
            return [r for r in self._ev if r.observation > after]

    def add_screenshot(self, digest: str, png: bytes) -> bool:
        self._check_writing()
        png_size(png)
        if digest in self._shots:
            return False
        self._shots[digest] = bytes(png)
        return True

    def screenshot(self, digest: str) -> bytes:
        with self._lock:
            if digest not in self._shots:
                raise StoreError(f"no screenshot {echo(digest)} in the store")
            return self._shots[digest]

    def screenshots(self) -> Iterator[ScreenshotRow]:
        with self._lock:
            items = list(self._shots.items())
        for k, png in items:
            w, h = png_size(png)
            yield ScreenshotRow(k, w, h, png)


def _replace_seq(row: Any, seq: int) -> Any:
    from dataclasses import replace

    return replace(row, seq=seq)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS config (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS observations (
    seq INTEGER PRIMARY KEY, state INTEGER NOT NULL,
    display_mode TEXT, text_size TEXT, app TEXT,
    control BLOB NOT NULL, text_atoms BLOB NOT NULL, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS transitions (
    seq INTEGER PRIMARY KEY, worker TEXT NOT NULL, episode INTEGER NOT NULL, step INTEGER NOT NULL,
    source INTEGER NOT NULL, signature TEXT NOT NULL, target INTEGER NOT NULL,
    state_novel INTEGER NOT NULL, edge_novel INTEGER NOT NULL, reward REAL NOT NULL,
    u_source REAL NOT NULL, u_target REAL NOT NULL, label TEXT NOT NULL,
    source_observation INTEGER NOT NULL DEFAULT 0, observation INTEGER NOT NULL DEFAULT 0,
    action TEXT NOT NULL DEFAULT '', time REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS captures (
    seq INTEGER PRIMARY KEY, worker TEXT NOT NULL, episode INTEGER NOT NULL, step INTEGER NOT NULL,
    source INTEGER NOT NULL, signature TEXT NOT NULL, app TEXT NOT NULL, screen TEXT NOT NULL,
    source_observation INTEGER NOT NULL DEFAULT 0, url TEXT, title TEXT, screenshot TEXT,
    action TEXT NOT NULL DEFAULT '', time REAL NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS transitions_edge ON transitions (source, signature, target);
CREATE TABLE IF NOT EXISTS evidence (
    observation INTEGER PRIMARY KEY, width REAL NOT NULL, height REAL NOT NULL, elements TEXT NOT NULL,
    url TEXT, title TEXT, screenshot TEXT, time REAL NOT NULL, worker TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS screenshots (
    n INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE, width INTEGER NOT NULL, height INTEGER NOT NULL,
    png BLOB NOT NULL);
"""

# Schema 1 -> 2: the columns the evidence added to the log's tables (the new tables come from _SCHEMA).
_MIGRATE_1 = (
    "ALTER TABLE transitions ADD COLUMN source_observation INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE transitions ADD COLUMN observation INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE transitions ADD COLUMN action TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE transitions ADD COLUMN time REAL NOT NULL DEFAULT 0",
    "ALTER TABLE captures ADD COLUMN source_observation INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE captures ADD COLUMN url TEXT",
    "ALTER TABLE captures ADD COLUMN title TEXT",
    "ALTER TABLE captures ADD COLUMN screenshot TEXT",
    "ALTER TABLE captures ADD COLUMN action TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE captures ADD COLUMN time REAL NOT NULL DEFAULT 0",
)


class SQLiteStore(GraphStore):
    """The log in one SQLite file, shared safely by several processes on one machine.

    Writes run in ``BEGIN IMMEDIATE`` transactions (one writer at a time, others wait
    up to ``timeout`` seconds); the WAL journal lets readers proceed meanwhile. A
    process killed inside a transaction leaves no trace of it: SQLite rolls the
    journal back when the file is next opened. Open one store per process (a
    connection is not shared across processes); threads of one process share it
    under a lock.

    Parameters
    ----------
    path : str or Path
        The database file (created when absent).
    timeout : float, default 60
        Seconds to wait for another writer.
    sync : bool, default False
        ``fsync`` the write-ahead log at every commit (``synchronous=FULL``): a
        committed step then survives a power loss or the loss of the machine, not
        only a killed process. Needed when the file is on storage shared by several
        machines (a commit otherwise waits in this machine's page cache).
    create : bool, default True
        False: the file must be a graph store already (nothing is written to any
        other file; :class:`StoreError` otherwise).

    A store of schema 1 (before the evidence) is migrated when opened: its log stays
    as it is, with empty evidence.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with SQLiteStore(os.path.join(d, "g.sqlite")) as st:
    ...         with st.write():
    ...             st.set_config({"app": "notepad"})
    ...         st.config()
    {'app': 'notepad'}
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], timeout: float = 60.0, *, create: bool = True,
                 sync: bool = False) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidInputError(f"store path must be a str or path, got {type(path).__name__}")
        self.path = Path(path)
        if self.path.is_dir():
            raise InvalidInputError(f"store path {echo(str(self.path))} is a directory")
        if not create:
            _check_is_store(self.path)
        try:
            self._con = sqlite3.connect(str(self.path), timeout=float(timeout), isolation_level=None,
                                        check_same_thread=False)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open graph store {str(self.path)!r}: {e}") from None
        self._lock = threading.RLock()
        self._depth = 0
        try:
            self._con.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a committed step survives a killed process (not a power
            # loss); a commit then costs no fsync, which keeps one step cheap.
            self._con.execute("PRAGMA synchronous=FULL" if sync else "PRAGMA synchronous=NORMAL")
            with self.write():
                for stmt in _SCHEMA.strip().split(";"):
                    if stmt.strip():
                        self._con.execute(stmt)
                row = self._con.execute("SELECT value FROM config WHERE key='schema'").fetchone()
                if row is None:
                    self._con.execute("INSERT INTO config VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                elif row[0] == "1":
                    # A store written before the evidence: its log is kept as it is, with the new columns.
                    for stmt in _MIGRATE_1:
                        self._con.execute(stmt)
                    self._con.execute("UPDATE config SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
                elif row[0] != str(SCHEMA_VERSION):
                    raise StoreError(f"graph store {str(self.path)!r} has schema {row[0]}, expected {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as e:
            self._con.close()
            raise StoreError(f"{str(self.path)!r} is not a graph store: {e}") from None
        except BaseException:
            self._con.close()
            raise

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._lock:
            if self._depth:  # nested: part of the enclosing transaction
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            try:
                self._con.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as e:
                raise StoreError(f"cannot start a write on {str(self.path)!r}: {e}") from None
            self._depth = 1
            try:
                yield
            except BaseException:
                self._depth = 0
                self._con.execute("ROLLBACK")
                raise
            self._depth = 0
            try:
                self._con.execute("COMMIT")
            except sqlite3.Error as e:
                self._con.execute("ROLLBACK")
                raise StoreError(f"commit to {str(self.path)!r} failed: {e}") from None

    def _check_writing(self) -> None:
        if not self._depth:
            raise StoreError("appends must happen inside store.write()")

    def _rows(self, sql: str, after: int, table: str, types: str) -> List[Tuple[Any, ...]]:
        """Rows of ``table`` after ``after``, each value checked against ``types``.

        ``types`` has one letter per column: ``i`` integer, ``r`` number, ``t`` text,
        ``T`` text or NULL, ``b`` blob. SQLite stores any value in any column, so a
        store written by something else (or damaged) is caught here, as a
        StoreError naming the row, instead of failing later in the replay.
        """
        if isinstance(after, bool) or not isinstance(after, int):
            raise InvalidInputError(f"after must be an integer, got {echo(after)}")
        try:
            with self._lock:
                rows = self._con.execute(sql, (after,)).fetchall()
        except (sqlite3.Error, OverflowError) as e:
            raise StoreError(f"cannot read {table} from graph store {echo(str(self.path))}: {e}") from None
        ok = {"i": (int,), "r": (int, float), "t": (str,), "T": (str, type(None)), "b": (bytes,)}
        for r in rows:
            for v, kind in zip(r, types):
                if not isinstance(v, ok[kind]) or isinstance(v, bool):
                    raise StoreError(f"graph store {echo(str(self.path))}: {table} row {echo(r[0])} holds "
                                     f"{echo(v)} where a {dict(i='integer', r='number', t='text', T='text', b='blob')[kind]}"
                                     " belongs")
        return rows

    def observations(self, after: int = 0) -> List[ObservationRow]:
        rows = self._rows("SELECT seq, state, display_mode, text_size, app, control, text_atoms, text "
                          "FROM observations WHERE seq > ? ORDER BY seq", after, "observations", "iiTTTbbt")
        return [ObservationRow(r[0], r[1], (r[2], r[3], r[4]), bytes(r[5]), bytes(r[6]), r[7]) for r in rows]

    def transitions(self, after: int = 0) -> List[TransitionRow]:
        rows = self._rows("SELECT seq, worker, episode, step, source, signature, target, state_novel, edge_novel, "
                          "reward, u_source, u_target, label, source_observation, observation, action, time "
                          "FROM transitions WHERE seq > ? ORDER BY seq", after, "transitions", "itiiitiiirrrtiitr")
        return [TransitionRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), bool(r[8]), float(r[9]),
                              float(r[10]), float(r[11]), r[12], r[13], r[14], r[15], float(r[16])) for r in rows]

    def captures(self, after: int = 0) -> List[CaptureRow]:
        rows = self._rows("SELECT seq, worker, episode, step, source, signature, app, screen, source_observation, "
                          "url, title, screenshot, action, time FROM captures WHERE seq > ? ORDER BY seq", after,
                          "captures", "itiiitttiTTTtr")
        return [CaptureRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
                           float(r[13])) for r in rows]

    keeps_evidence = True

    def evidence(self, after: int = 0) -> List[EvidenceRow]:
        rows = self._rows("SELECT observation, width, height, elements, url, title, screenshot, time, worker "
                          "FROM evidence WHERE observation > ? ORDER BY observation", after, "evidence", "irrtTTTrt")
        return [EvidenceRow(r[0], float(r[1]), float(r[2]), r[3], r[4], r[5], r[6], float(r[7]), r[8]) for r in rows]

    def add_evidence(self, row: EvidenceRow) -> None:
        self._insert("evidence", "INSERT OR REPLACE INTO evidence (observation, width, height, elements, url, title, "
                     "screenshot, time, worker) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (row.observation, float(row.width), float(row.height), row.elements, row.url, row.title,
                      row.screenshot, float(row.time), row.worker))

    def add_screenshot(self, digest: str, png: bytes) -> bool:
        w, h = png_size(png)
        self._check_writing()
        try:
            cur = self._con.execute("INSERT OR IGNORE INTO screenshots (digest, width, height, png) VALUES (?, ?, ?, ?)",
                                    (digest, w, h, bytes(png)))
        except sqlite3.Error as e:
            raise StoreError(f"cannot append to screenshots in graph store {echo(str(self.path))}: {e}") from None
        return cur.rowcount > 0

    def screenshot(self, digest: str) -> bytes:
        try:
            with self._lock:
                row = self._con.execute("SELECT png FROM screenshots WHERE digest = ?", (digest,)).fetchone()
        except sqlite3.Error as e:
            raise StoreError(f"cannot read screenshots from graph store {echo(str(self.path))}: {e}") from None
        if row is None or not isinstance(row[0], bytes):
            raise StoreError(f"no screenshot {echo(digest)} in graph store {echo(str(self.path))}")
        return bytes(row[0])

    def screenshots(self) -> Iterator[ScreenshotRow]:
        after = 0
        while True:  # in pages, so that a store of many screenshots is not read into memory at once
            try:
                with self._lock:
                    rows = self._con.execute("SELECT n, digest, width, height, png FROM screenshots WHERE n > ? "
                                             "ORDER BY n LIMIT 64", (after,)).fetchall()
            except sqlite3.Error as e:
                raise StoreError(f"cannot read screenshots from graph store {echo(str(self.path))}: {e}") from None
            if not rows:
                return
            for n, digest, w, h, png in rows:
                yield ScreenshotRow(str(digest), int(w), int(h), bytes(png))
            after = rows[-1][0]

    def _insert(self, table: str, sql: str, values: Tuple[Any, ...]) -> int:
        self._check_writing()
        try:
            cur = self._con.execute(sql, values)
        except (sqlite3.Error, OverflowError) as e:  # disk full, read-only file, an integer beyond 64 bits
            raise StoreError(f"cannot append to {table} in graph store {echo(str(self.path))}: {e}") from None
        return int(cur.lastrowid)  # type: ignore[arg-type]

    def add_observation(self, row: ObservationRow) -> int:
        return self._insert(
            "observations",
            "INSERT INTO observations (state, display_mode, text_size, app, control, text_atoms, text) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (row.state, row.meta[0], row.meta[1], row.meta[2], row.control, row.text_atoms, row.text))

    def add_transition(self, row: TransitionRow) -> int:
        return self._insert(
            "transitions",
            "INSERT INTO transitions (worker, episode, step, source, signature, target, state_novel, edge_novel, "
            "reward, u_source, u_target, label, source_observation, observation, action, time) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.worker, row.episode, row.step, row.source, row.signature, row.target, int(row.state_novel),
             int(row.edge_novel), float(row.reward), float(row.u_source), float(row.u_target), row.label,
             int(row.source_observation), int(row.observation), row.action, float(row.time)))

    def add_capture(self, row: CaptureRow) -> int:
        return self._insert(
            "captures",
            "INSERT INTO captures (worker, episode, step, source, signature, app, screen, source_observation, url, "
            "title, screenshot, action, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.worker, row.episode, row.step, row.source, row.signature, row.app, row.screen,
             int(row.source_observation), row.url, row.title, row.screenshot, row.action, float(row.time)))

    def config(self) -> Dict[str, Any]:
        try:
            with self._lock:
                rows = self._con.execute("SELECT key, value FROM config WHERE key != 'schema' ORDER BY key").fetchall()
            return {k: json.loads(v) for k, v in rows}
        except (sqlite3.Error, ValueError, TypeError, RecursionError) as e:
            raise StoreError(f"graph store {echo(str(self.path))} has an unreadable configuration: "
                             f"{echo(str(e))[1:-1]}") from None

    def set_config(self, config: Dict[str, Any]) -> None:
        self._check_writing()
        try:
            for k, v in config.items():
                self._con.execute("INSERT OR REPLACE INTO config VALUES (?, ?)", (str(k), json.dumps(v)))
        except (sqlite3.Error, ValueError, TypeError, RecursionError) as e:
            raise StoreError(f"cannot store the configuration in graph store {echo(str(self.path))}: "
                             f"{echo(str(e))[1:-1]}") from None

    def close(self) -> None:
        with self._lock:
            self._con.close()


def _check_is_store(path: Path) -> None:
    # Read-only: a file that is not a graph store is left exactly as it is.
    if not path.is_file():
        raise StoreError(f"no graph store at {str(path)!r}")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM config WHERE key='schema'").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        row = None
    if row is None:
        raise StoreError(f"{str(path)!r} is not a graph store")


def open_store(store: Union[None, str, "os.PathLike[str]", GraphStore]) -> GraphStore:
    """A store from ``None`` (a new :class:`MemoryStore`), a path (:class:`SQLiteStore`) or a store."""
    if store is None:
        return MemoryStore()
    if isinstance(store, GraphStore):
        return store
    if isinstance(store, (str, os.PathLike)):
        return SQLiteStore(store)
    raise InvalidInputError(f"store must be None, a path or a GraphStore, got {type(store).__name__}")
