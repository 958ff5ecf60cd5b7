"""An index shard: the :class:`~spatialobs.screen.StateIndex` partitions of some metadata values.

The state index already splits its observations by exact metadata (display mode,
text-size bin, app): a screen is only ever compared with screens of the same
metadata. A shard holds the partitions whose metadata hashes to it
(:func:`shard_of`), so every shard decides exactly as the single-process index
would on the same screens in the same order.

Write-ahead: every new observation is appended to the shard's
:class:`~spatialobs.distributed._wal.RecordLog` before it is indexed and
acknowledged. A restarted shard loads its last checkpoint (the index's own save
format) and replays the records after it, which rebuilds the same index (the
pipeline is deterministic). Exact duplicates add nothing and are not logged.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from spatialobs._errors import InvalidInputError
from spatialobs.distributed._wal import RecordLog
from spatialobs.screen.features import Features
from spatialobs.screen.model import ScreenMeta
from spatialobs.screen.state_index import StateIndex

__all__ = ["shard_of", "Added", "IndexShard", "features_bytes", "features_from_bytes", "features_parts"]

MetaKey = Tuple[Optional[str], Optional[str], Optional[str]]


def shard_of(meta: Union[ScreenMeta, MetaKey], shards: int) -> int:
    """The shard of a metadata value: a stable hash (the same on every machine and run) modulo ``shards``.

    Examples
    --------
    >>> shard_of(ScreenMeta("desktop", "100%", "notepad"), 1)
    0
    >>> shard_of(("desktop", "100%", "notepad"), 4) == shard_of(ScreenMeta("desktop", "100%", "notepad"), 4)
    True
    """
    key = meta.key() if isinstance(meta, ScreenMeta) else tuple(meta)
    h = hashlib.blake2b(json.dumps(list(key)).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(h, "little") % int(shards)


@dataclass(frozen=True)
class Added:
    """What a shard did with one screen's features.

    ``state`` and ``observation`` are the shard's local ids; ``new_state`` and
    ``exact`` as in :class:`~spatialobs.screen.Match`; ``count`` is how many
    observations the shard held after this screen (the observation's own number
    plus one when it is new).
    """

    shard: int
    state: int
    observation: int
    new_state: bool
    exact: bool
    count: int


def features_bytes(f: Features) -> bytes:
    """A compact, pickle-free encoding of features (the shard log's record).

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen, featurize
    >>> f = featurize(Screen([Element((0, 0, 9, 9), "Button", "OK")], 10, 10))
    >>> g = features_from_bytes(features_bytes(f))
    >>> (g.control_atoms == f.control_atoms).all() and g.text == f.text and g.meta == f.meta
    True
    """
    head = json.dumps({"m": list(f.meta.key()), "t": f.text, "c": int(len(f.control_atoms)),
                       "x": int(len(f.text_atoms))}).encode("utf-8")
    return (struct.pack("<I", len(head)) + head + f.control_atoms.astype("<u8").tobytes()
            + f.text_atoms.astype("<u8").tobytes())


def features_parts(data: bytes) -> Tuple[MetaKey, bytes, bytes, str]:
    """The metadata key, control and text atoms (little-endian ``u8`` bytes) and text of encoded features.

    What a graph store's observation row holds, sliced out without building arrays.

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen, featurize
    >>> f = featurize(Screen([Element((0, 0, 9, 9), "Button", "OK")], 10, 10))
    >>> meta, control, text_atoms, text = features_parts(features_bytes(f))
    >>> control == f.control_atoms.astype("<u8").tobytes(), meta == f.meta.key(), text == f.text
    (True, True, True)
    """
    (n,) = struct.unpack_from("<I", data, 0)
    head = json.loads(data[4:4 + n].decode("utf-8"))
    pos = 4 + n
    mid = pos + 8 * head["c"]
    end = mid + 8 * head["x"]
    return tuple(head["m"]), bytes(data[pos:mid]), bytes(data[mid:end]), head["t"]


def features_from_bytes(data: bytes) -> Features:
    """Inverse of :func:`features_bytes`."""
    (n,) = struct.unpack_from("<I", data, 0)
    head = json.loads(data[4:4 + n].decode("utf-8"))
    pos = 4 + n
    c = np.frombuffer(data, dtype="<u8", count=head["c"], offset=pos).astype(np.uint64)
    pos += 8 * head["c"]
    t = np.frombuffer(data, dtype="<u8", count=head["x"], offset=pos).astype(np.uint64)
    return Features(c, t, head["t"], ScreenMeta(*head["m"]))


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class IndexShard:
    """One shard of a distributed state index, durable in a folder.

    Parameters
    ----------
    shard : int
        This shard's number, from 0.
    folder : str or Path, optional
        Where the log (``shard-<k>.log``) and checkpoints go; ``None``: in memory
        only (nothing survives a restart).
    checkpoint_every : int, default 5000
        Save a checkpoint after this many new observations (0: only on
        :meth:`checkpoint`).
    fsync : bool, default False
        ``os.fsync`` each log record before it is acknowledged, and each checkpoint
        before it replaces the last: what is acknowledged then survives the loss of
        the machine, not only of the process (needed when ``folder`` is on storage
        shared by several machines).
    index_options : dict
        Keyword arguments of :class:`~spatialobs.screen.StateIndex` (``tau``, ``grid``, ...).

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen, featurize
    >>> sh = IndexShard(0)
    >>> f = featurize(Screen([Element((0, 0, 9, 9), "Button", "OK")], 10, 10))
    >>> [(a.state, a.new_state, a.exact, a.count) for a in sh.add_batch([features_bytes(f)] * 2)]
    [(0, True, False, 1), (0, False, True, 1)]
    """

    def __init__(self, shard: int = 0, folder: Union[None, str, "os.PathLike[str]"] = None, *,
                 checkpoint_every: int = 5000, fsync: bool = False, **index_options: Any) -> None:
        if isinstance(shard, bool) or not isinstance(shard, int) or shard < 0:
            raise InvalidInputError(f"shard must be an integer >= 0, got {shard!r}")
        self.shard = shard
        self.checkpoint_every = int(checkpoint_every)
        self.fsync = bool(fsync)
        self._options = dict(index_options)
        self.index = StateIndex(**self._options)
        self._records: List[bytes] = []  # observation i's features, as logged
        self._log: Optional[RecordLog] = None
        self._folder = Path(folder) if folder is not None else None
        self.replayed = 0
        if self._folder is not None:
            self._folder.mkdir(parents=True, exist_ok=True)
            self._log = RecordLog(self._folder / f"shard-{shard}.log", fsync=self.fsync)
            self._records = self._log.records()
            self._recover()

    # -- durability --------------------------------------------------------------

    def _ckpt_pointer(self) -> Path:
        assert self._folder is not None
        return self._folder / f"shard-{self.shard}.ckpt.json"

    def _recover(self) -> None:
        start = 0
        ptr = self._ckpt_pointer()
        if ptr.exists():
            meta = json.loads(ptr.read_text(encoding="utf-8"))
            if meta["count"] <= len(self._records):
                self.index = StateIndex.load(ptr.parent / meta["file"])
                start = int(meta["count"])
        for rec in self._records[start:]:
            self.index.add_features(features_from_bytes(rec))
        self.replayed = len(self._records) - start

    def checkpoint(self) -> int:
        """Save the index (its own atomic save format) and point at it; return the observations it covers."""
        if self._folder is None:
            return 0
        n = len(self._records)
        name = f"shard-{self.shard}.{n}.idx"
        self.index.save(self._folder / name)
        ptr = self._ckpt_pointer()
        old = json.loads(ptr.read_text(encoding="utf-8"))["file"] if ptr.exists() else None
        tmp = ptr.with_suffix(".tmp")
        tmp.write_text(json.dumps({"count": n, "file": name}), encoding="utf-8")
        if self.fsync:  # the index, then its pointer, reach the disk before the pointer moves
            _fsync_path(self._folder / name)
            _fsync_path(tmp)
        os.replace(tmp, ptr)
        if self.fsync:
            _fsync_path(self._folder)
        if old and old != name:
            (self._folder / old).unlink(missing_ok=True)
        return n

    # -- the index ---------------------------------------------------------------

    def add_batch(self, items: Sequence[bytes], vectors: Optional[npt.NDArray[np.float32]] = None) -> List[Added]:
        """Index encoded features (:func:`features_bytes`) in order; one :class:`Added` each.

        ``vectors`` (one row per item) are the text vectors when the caller computed
        them already. A new observation is logged before it is indexed.
        """
        out = []
        for i, raw in enumerate(items):
            f = features_from_bytes(raw)
            m = self.index.add_features(f, None if vectors is None else vectors[i])
            if not m.exact:
                # Logged after the (deterministic) decision but before anyone hears of it:
                # a restart replays it; a torn record was never acknowledged.
                if self._log is not None:
                    self._log.append(raw)
                self._records.append(raw)
                if self.checkpoint_every and len(self._records) % self.checkpoint_every == 0:
                    self.checkpoint()
            out.append(Added(self.shard, m.state, m.observation, m.new_state, m.exact, len(self._records)))
        return out

    def rows(self, after: int, upto: int) -> List[Tuple[int, int, bytes]]:
        """``(observation, state, features)`` of the observations numbered ``after .. upto - 1``."""
        upto = min(int(upto), len(self._records))
        return [(i, self.index.state_of(i), self._records[i]) for i in range(max(0, int(after)), upto)]

    def stats(self) -> Dict[str, int]:
        """Observations, states and screens of the shard, and how many log records its last start replayed."""
        return {"observations": len(self.index), "states": self.index.num_states,
                "screens": self.index.num_screens, "replayed": self.replayed}

    def pid(self) -> int:
        """The process id (for fault-injection tests)."""
        return os.getpid()

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
