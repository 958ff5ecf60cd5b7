"""An append-only record log: what an actor writes before it acknowledges anything.

Each record is framed as ``u32 length | u32 crc32 | payload`` (little endian). A
process killed mid-append leaves a torn last record; :meth:`RecordLog.open`
truncates it (it was never acknowledged) and keeps every complete record before it.
A record is flushed to the operating system before :meth:`RecordLog.append`
returns, so it survives the death of the process (not a power loss, unless
``fsync=True``), the same guarantee as the SQLite store's ``synchronous=NORMAL``.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path
from typing import BinaryIO, List, Union

__all__ = ["RecordLog"]

_HEAD = struct.Struct("<II")


class RecordLog:
    """Append records to a file and read them back, surviving a torn tail.

    Parameters
    ----------
    path : str or Path
        The log file (created when absent).
    fsync : bool, default False
        ``os.fsync`` after each append (survives a power loss; costs a disk flush).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     log = RecordLog(os.path.join(d, "a.log"))
    ...     n = log.append(b"one"); n = log.append(b"two")
    ...     log.close()
    ...     with open(os.path.join(d, "a.log"), "ab") as fh:
    ...         _ = fh.write(b"\\x09\\x00")       # a torn record
    ...     log = RecordLog(os.path.join(d, "a.log"))
    ...     print(log.records()); log.close()
    [b'one', b'two']
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = bool(fsync)
        self._records = self._scan()
        self._fh: BinaryIO = open(self.path, "ab")

    def _scan(self) -> List[bytes]:
        out: List[bytes] = []
        if not self.path.exists():
            return out
        data = self.path.read_bytes()
        pos = 0
        while pos + _HEAD.size <= len(data):
            n, crc = _HEAD.unpack_from(data, pos)
            end = pos + _HEAD.size + n
            if end > len(data):
                break
            payload = data[pos + _HEAD.size:end]
            if zlib.crc32(payload) != crc:
                break
            out.append(payload)
            pos = end
        if pos != len(data):  # a torn or corrupt tail: never acknowledged
            with open(self.path, "r+b") as fh:
                fh.truncate(pos)
        return out

    def records(self) -> List[bytes]:
        """Every complete record, in append order (read when the log was opened, plus appends since)."""
        return list(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def append(self, payload: bytes) -> int:
        """Append one record and flush it; return how many records the log holds."""
        self._fh.write(_HEAD.pack(len(payload), zlib.crc32(payload)) + payload)
        self._fh.flush()
        if self.fsync:
            os.fsync(self._fh.fileno())
        self._records.append(bytes(payload))
        return len(self._records)

    def close(self) -> None:
        self._fh.close()
