"""The state index file format.

Layout (little endian)::

    b"SPOBSIDX"            8 bytes, magic
    version                uint32 (FORMAT_VERSION)
    header length          uint64
    header                 UTF-8 JSON: configuration, embedder, metadata values,
                           and for each array section its name, dtype, shape,
                           offset and length in the payload
    payload                raw array bytes
    SHA-256                32 bytes over everything before it

Arrays are plain numbers; the HNSW graphs are faiss's own serialization of an
``IndexHNSWFlat``. The file is checked whole (magic, version, checksum) before
anything in it is parsed, so a truncated or altered file is rejected cleanly. The
checksum proves nothing against a crafted file, so the reader then checks every
count and offset against the bytes present, and the faiss graph against itself
(:func:`_check_hnsw`), before sizing anything from them: no file can make
``load`` allocate more than a small multiple of its own size.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import stat
import struct
from fractions import Fraction
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import numpy as np

from spatialobs._errors import InvalidInputError, SpatialObsError
from spatialobs.screen import _index_parts
from spatialobs.screen._index_parts import MAX_SEARCH, _Grow, _Partition
from spatialobs.screen.embed import embedder_from_spec
from spatialobs.screen.limits import echo

try:  # POSIX: advisory locks tell a live save's temporary file from a killed one's
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["CorruptIndexError", "IndexFileError", "FORMAT_VERSION", "MAGIC", "save", "load"]

MAGIC = b"SPOBSIDX"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
_DIGEST = 32
_DTYPES = {"uint8", "uint32", "uint64", "int64"}
_TMP_SUFFIX = ".tmp"


class CorruptIndexError(SpatialObsError):
    """A saved state index is truncated, altered, of another version, or not an index at all."""


class IndexFileError(SpatialObsError, OSError):
    """A state index file cannot be read or written: missing, a folder, no permission, disk full.

    Also an :class:`OSError`, so code that handles file errors keeps working.
    """


def _name(path: Any) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidInputError(f"an index path must be a str or os.PathLike, got {type(path).__name__}")
    name = os.fspath(path)
    if not isinstance(name, str):
        raise InvalidInputError("an index path must be text, not bytes")
    return name


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _file_error(code: Optional[int], message: str) -> IndexFileError:
    # One argument keeps str(err) free of the "[Errno n]" prefix; errno is still set.
    err = IndexFileError(message)
    err.errno = code
    return err


def _spec(embedder: Any) -> Dict[str, Any]:
    if hasattr(embedder, "spec"):
        spec = dict(embedder.spec())
    else:
        spec = {"kind": "external", "dim": int(embedder.dim)}
    spec.setdefault("name", getattr(embedder, "name", type(embedder).__name__))
    return spec


def save(index: Any, path: Any) -> None:
    import faiss

    name = _name(path)

    meta, co, cv, to, tv = index._store.columns()
    arrays: List[Tuple[str, np.ndarray]] = [
        ("store.meta", meta),
        ("store.control_offsets", co),
        ("store.control_values", cv),
        ("store.text_offsets", to),
        ("store.text_values", tv),
        ("state_of", index._state_of.view().astype(np.int64)),  # the file keeps int64 ids
        ("hits", index._hits.view()),
    ]
    for i, part in enumerate(index._parts):
        arrays.append((f"part{i}.obs", part.ids()))
        arrays.append((f"part{i}.hnsw", faiss.serialize_index(part.hnsw)))
    sections = []
    offset = 0
    for section, arr in arrays:
        arr = np.ascontiguousarray(arr)
        sections.append({"name": section, "dtype": arr.dtype.name, "shape": list(arr.shape), "offset": offset,
                         "nbytes": int(arr.nbytes)})
        offset += int(arr.nbytes)
    header = {
        "config": {
            "tau": [index.tau.numerator, index.tau.denominator],
            "top_k": index.top_k,
            "rrf_k": index.rrf_k,
            "grid": index.grid,
            "mask_volatile": index.mask_volatile,
            "candidates": index.candidates,
            "hnsw_m": index.hnsw_m,
            "ef_construction": index.ef_construction,
            "ef_search": index.ef_search,
            "dense_k": index.dense_k,
        },
        "embedder": _spec(index.embedder),
        "metas": [list(k) for k in index._metas],
        "num_screens": index.num_screens,
        "sections": sections,
    }
    head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    chunks: List[Union[bytes, memoryview]] = [_PREFIX.pack(MAGIC, FORMAT_VERSION, len(head)), head]
    chunks += [
        # numpy's stubs give ndarray __buffer__ only on Python >= 3.12
        memoryview(np.ascontiguousarray(a)).cast("B") for _, a in arrays  # type: ignore[arg-type]
    ]
    _write_atomic(name, chunks)


def _write_atomic(name: str, chunks: List[Union[bytes, memoryview]]) -> None:
    """Write chunks and their SHA-256 to a temporary file beside ``name``, fsync, rename over ``name``.

    The temporary file is created with mode 0o666 minus the umask (as ``open`` would)
    and given the mode of the file it replaces if there is one, held under an exclusive
    ``flock`` while it exists, and removed on every failure path. A save killed outright
    cannot remove its own; the next save of the same target removes every temporary file
    of that target that no live save holds.
    """
    folder = os.path.dirname(os.path.abspath(name))
    base = os.path.basename(name)
    if os.path.isdir(name):
        raise _file_error(errno.EISDIR, f"cannot save state index to {echo(name)}: it is a folder")
    if not os.path.isdir(folder):
        raise _file_error(errno.ENOENT, f"cannot save state index to {echo(name)}: the folder does not exist")
    _remove_stale(folder, base)
    fd, tmp = _create_temporary(folder, base)
    try:
        if os.path.isfile(name) and os.chmod in os.supports_fd:  # a save over a file keeps its mode
            os.chmod(fd, stat.S_IMODE(os.stat(name).st_mode) & 0o777)
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as f:
            fd = -1  # the file object owns it now
            for chunk in chunks:
                digest.update(chunk)
                f.write(chunk)
            f.write(digest.digest())
            f.flush()
            os.fsync(f.fileno())
            if fcntl is not None:
                # Renamed while still locked, so a concurrent cleaner never sees it unlocked.
                os.replace(tmp, name)
        if fcntl is None:  # Windows cannot rename an open file
            os.replace(tmp, name)
    except BaseException as exc:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, SpatialObsError):
            raise _file_error(exc.errno, f"cannot save state index to {echo(name)}: {_os_reason(exc)}") from None
        raise
    try:  # make the rename itself durable where the platform allows it
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _create_temporary(folder: str, base: str) -> Tuple[int, str]:
    # O_EXCL with mode 0o666: the kernel applies the umask, unlike mkstemp's 0o600.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f"{base}.{secrets.token_hex(6)}{_TMP_SUFFIX}")
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _file_error(exc.errno, f"cannot save state index to {echo(os.path.join(folder, base))}: "
                              f"{_os_reason(exc)}") from None
        if fcntl is None:
            return fd, tmp
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # A cleaner may have removed the name between open and lock: then it is not ours.
            if os.path.samestat(os.fstat(fd), os.stat(tmp)):
                return fd, tmp
        except OSError:
            pass
        os.close(fd)
    raise _file_error(errno.EEXIST, f"cannot create a temporary file beside {echo(os.path.join(folder, base))}")


def _stale_candidates(folder: str, base: str) -> Iterator[str]:
    prefix = base + "."
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for n in names:
        middle = n[len(prefix): -len(_TMP_SUFFIX)] if n.startswith(prefix) and n.endswith(_TMP_SUFFIX) else ""
        if len(middle) == 12 and all(c in "0123456789abcdef" for c in middle):
            yield os.path.join(folder, n)


def _remove_stale(folder: str, base: str) -> None:
    """Remove temporary files of earlier saves of ``base`` that were killed before cleaning up.

    Only files that nobody holds locked are removed: a save in progress (in any
    process) holds its file's lock until it is renamed, and the kernel releases the
    lock of a killed process. Without ``flock`` (Windows) nothing is removed.
    """
    if fcntl is None:
        return
    for path in _stale_candidates(folder, base):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a live save holds it
        try:
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                os.unlink(path)
        except OSError:
            pass
        finally:
            os.close(fd)


class _Corrupt(Exception):
    """Raised inside the reader; :func:`load` turns it into CorruptIndexError naming the file."""


def _label(name: str) -> str:
    return name if len(name) <= 120 else "..." + name[-117:]


def _int(v: Any, what: str, lo: int = 0, hi: int = 2**63 - 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _Corrupt(f"{what} must be an integer from {lo} to {hi}, got {echo(v)}")
    return v


def _read(name: str) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
    try:
        with open(name, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise _file_error(exc.errno, f"cannot read state index {echo(name)}: {_os_reason(exc)}") from None
    if len(data) < _PREFIX.size + _DIGEST:
        raise _Corrupt(f"too short to be a state index ({len(data)} bytes); truncated?")
    magic, version, head_len = _PREFIX.unpack_from(data, 0)
    if magic != MAGIC:
        raise _Corrupt("not a spatialobs state index (bad magic)")
    if version != FORMAT_VERSION:
        raise _Corrupt(f"format version {version} is not supported (this build reads {FORMAT_VERSION})")
    body, stored = memoryview(data)[:-_DIGEST], data[-_DIGEST:]
    if hashlib.sha256(body).digest() != stored:
        raise _Corrupt("checksum mismatch; the file is truncated or corrupt")
    # Past the checksum the file may still be crafted: every count and offset below
    # is checked against the bytes actually present before anything is allocated.
    start = _PREFIX.size
    if head_len > len(body) - start:
        raise _Corrupt("header runs past the end of the file")
    try:
        header = json.loads(bytes(body[start : start + head_len]).decode("utf-8"))
    except RecursionError:
        raise _Corrupt("unreadable header: nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Corrupt(f"unreadable header: {echo(str(exc))[1:-1]}") from None
    if not isinstance(header, dict):
        raise _Corrupt(f"the header must be an object, got {type(header).__name__}")
    payload = body[start + head_len :]
    sections = header.get("sections")
    if not isinstance(sections, list):
        raise _Corrupt("the header has no section table")
    arrays: Dict[str, np.ndarray] = {}
    for i, sec in enumerate(sections):
        if not isinstance(sec, dict):
            raise _Corrupt(f"section {i} must be an object, got {type(sec).__name__}")
        sname = sec.get("name")
        if not isinstance(sname, str) or sname in arrays:
            raise _Corrupt(f"section {i} has a missing or repeated name {echo(sname)}")
        dtype = sec.get("dtype")
        if not isinstance(dtype, str) or dtype not in _DTYPES:
            raise _Corrupt(f"section {echo(sname)} has unsupported dtype {echo(dtype)}")
        dt = np.dtype(dtype).newbyteorder("<")
        off = _int(sec.get("offset"), f"section {echo(sname)} offset")
        nbytes = _int(sec.get("nbytes"), f"section {echo(sname)} size")
        shape = sec.get("shape")
        if not isinstance(shape, list) or len(shape) != 1:
            raise _Corrupt(f"section {echo(sname)} must be one-dimensional, got shape {echo(shape)}")
        count = _int(shape[0], f"section {echo(sname)} length")
        if off > len(payload) or nbytes > len(payload) - off or count * dt.itemsize != nbytes:
            raise _Corrupt(f"section {echo(sname)} does not fit the file")
        arrays[sname] = np.frombuffer(payload[off : off + nbytes], dtype=dt).astype(dt.newbyteorder("="), copy=True)
    return header, arrays


def _array(arrays: Dict[str, np.ndarray], key: str, dtype: str) -> np.ndarray:
    a = arrays.get(key)
    if a is None:
        raise _Corrupt(f"section {key!r} is missing")
    if a.dtype != np.dtype(dtype):
        raise _Corrupt(f"section {key!r} has dtype {a.dtype}, expected {dtype}")
    return a


class _Blob:
    """Sequential little-endian reads from bytes, each checked against what is left."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data.tobytes()
        self.pos = 0

    def take(self, fmt: str) -> Tuple[Any, ...]:
        st = struct.Struct("<" + fmt)
        if st.size > len(self.data) - self.pos:
            raise _Corrupt("dense index ends early")
        values = st.unpack_from(self.data, self.pos)
        self.pos += st.size
        return values

    def vector(self, dtype: str, count: Optional[int] = None) -> np.ndarray:
        (n,) = self.take("Q") if count is None else (count,)
        item = np.dtype(dtype).itemsize
        if n > (len(self.data) - self.pos) // item:
            raise _Corrupt(f"dense index claims {n} items where {len(self.data) - self.pos} bytes are left")
        out = np.frombuffer(self.data, dtype=np.dtype(dtype).newbyteorder("<"), count=n, offset=self.pos)
        self.pos += n * item
        return out


def _check_hnsw(blob: np.ndarray, dim: int, n: int) -> None:
    """Check a serialized ``IndexHNSWFlat`` (inner product) before faiss reads it.

    faiss sizes each vector from a count in the data (up to 2^40 items) before
    reading it, and trusts the graph's ids when searching; so the counts are checked
    against the bytes present and the graph against itself (levels, offsets,
    neighbor ids, entry point), and the shape against the index (``dim``, ``n``).
    A layout this build does not know is rejected.
    """
    b = _Blob(blob)

    def header(fourcc: bytes) -> None:
        if b.take("4s")[0] != fourcc:
            raise _Corrupt("dense index layout not recognized")
        d, ntotal, _, _, _, metric = b.take("iqqqBi")
        if d != dim or ntotal != n or metric != 0:
            raise _Corrupt(f"dense index is {d}-dimensional with {ntotal} vectors (metric {metric}); "
                           f"expected {dim} and {n} (inner product)")

    header(b"IHNf")
    probas = b.vector("f8")
    cum = b.vector("i4")
    levels = b.vector("i4")
    offsets = b.vector("u8")
    neighbors = b.vector("i4")
    entry, max_level, ef_construction, ef_search, _ = b.take("iiiii")
    if len(cum) != len(probas) + 1 or len(cum) < 2 or cum[0] != 0 or bool(np.any(np.diff(cum) < 0)):
        raise _Corrupt("dense index has inconsistent level sizes")
    if len(levels) != n or len(offsets) != n + 1 or (n and not (1 <= levels.min() and levels.max() < len(cum))):
        raise _Corrupt("dense index has inconsistent node levels")
    sizes = np.diff(offsets.astype(np.uint64))
    if offsets[0] != 0 or offsets[-1] != len(neighbors) or not np.array_equal(sizes, cum[levels].astype(np.uint64)):
        raise _Corrupt("dense index has inconsistent neighbor offsets")
    if len(neighbors) and (int(neighbors.min()) < -1 or int(neighbors.max()) >= n):
        raise _Corrupt("dense index links to a missing vector")
    if n == 0:
        ok = entry == -1 and max_level == -1
    else:
        ok = 0 <= entry < n and max_level == int(levels[entry]) - 1 and max_level == int(levels.max()) - 1
    if not ok or not 1 <= ef_construction <= MAX_SEARCH or ef_search < 1:
        raise _Corrupt("dense index has an invalid entry point or search parameters")
    header(b"IxFI")
    (count,) = b.take("Q")  # the flat storage: n * dim float32 components
    if count != n * dim:
        raise _Corrupt("dense index stores the wrong number of vector components")
    b.vector("f4", count)
    if b.pos != len(b.data):
        raise _Corrupt("dense index has trailing bytes")


def _check_embedder_spec(spec: Any) -> Dict[str, Any]:
    if not isinstance(spec, dict):
        raise _Corrupt("the header names no embedder")
    _int(spec.get("dim"), "embedder dim", 1, 65536)
    if spec.get("kind") == "hashed-ngram":
        _int(spec.get("n"), "embedder n-gram size", 1, 16)
    name = spec.get("name")
    if name is not None and not isinstance(name, str):
        raise _Corrupt(f"embedder name must be a string, got {echo(name)}")
    return {k: echo(v)[1:-1] if k == "name" and isinstance(v, str) and len(v) > 80 else v for k, v in spec.items()}


def load(cls: Any, path: Any, embedder: Any = None) -> Any:
    name = _name(path)
    try:
        return _load(cls, name, embedder)
    except _Corrupt as exc:
        raise CorruptIndexError(f"{_label(name)}: {exc}") from None


def _load(cls: Any, name: str, embedder: Any) -> Any:
    import faiss

    header, arrays = _read(name)
    spec = _check_embedder_spec(header.get("embedder"))
    # A mismatched embedder is the caller's mistake, not damage: InvalidInputError.
    emb = embedder_from_spec(spec, embedder)
    cfg = header.get("config")
    if not isinstance(cfg, dict):
        raise _Corrupt("the header has no configuration")
    tau = cfg.get("tau")
    if not isinstance(tau, list) or len(tau) != 2:
        raise _Corrupt(f"tau must be a [numerator, denominator] pair, got {echo(tau)}")
    try:
        index = cls(
            tau=Fraction(_int(tau[0], "tau numerator"), _int(tau[1], "tau denominator", 1)),
            top_k=_int(cfg.get("top_k"), "top_k"),
            rrf_k=_int(cfg.get("rrf_k"), "rrf_k"),
            grid=_int(cfg.get("grid"), "grid"),
            embedder=emb,
            mask_volatile=bool(cfg.get("mask_volatile")),
            candidates=cfg.get("candidates"),
            hnsw_m=_int(cfg.get("hnsw_m"), "hnsw_m"),
            ef_construction=_int(cfg.get("ef_construction"), "ef_construction"),
            ef_search=_int(cfg.get("ef_search"), "ef_search"),
            # Files from before dense_k took top_k dense candidates.
            dense_k=_int(cfg.get("dense_k", cfg.get("top_k")), "dense_k"),
        )
    except InvalidInputError as exc:
        raise _Corrupt(f"invalid configuration: {exc}") from None
    raw_metas = header.get("metas")
    if not isinstance(raw_metas, list):
        raise _Corrupt("the header lists no metadata values")
    metas: List[Tuple[Optional[str], Optional[str], Optional[str]]] = []
    for m in raw_metas:
        if not (isinstance(m, list) and len(m) == 3 and all(v is None or isinstance(v, str) for v in m)):
            raise _Corrupt(f"a metadata value must be three strings or nulls, got {echo(m)}")
        metas.append((m[0], m[1], m[2]))
    if len(set(metas)) != len(metas):
        raise _Corrupt("a metadata value is listed twice")
    meta = _array(arrays, "store.meta", "uint32")
    co, cv = _array(arrays, "store.control_offsets", "uint64"), _array(arrays, "store.control_values", "uint64")
    to, tv = _array(arrays, "store.text_offsets", "uint64"), _array(arrays, "store.text_values", "uint64")
    state_of, hits = _array(arrays, "state_of", "int64"), _array(arrays, "hits", "int64")
    n = len(meta)
    if not (len(co) == len(to) == n + 1 and len(state_of) == len(hits) == n):
        raise _Corrupt("observation columns disagree in length")
    if n > _index_parts.MAX_OBSERVATIONS:
        raise _Corrupt(f"{n} observations: an index holds at most {_index_parts.MAX_OBSERVATIONS}")
    for off, values in ((co, cv), (to, tv)):
        if off[0] != 0 or off[-1] != len(values) or bool(np.any(off[1:] < off[:-1])):
            raise _Corrupt("atom offsets are inconsistent")
    # Every state has an observation, so there are at most n states: checked before
    # the per-state lists are allocated.
    if n and (int(meta.max()) >= len(metas) or int(state_of.min()) < 0 or int(state_of.max()) >= n
              or int(hits.min()) < 1):
        raise _Corrupt("an observation refers to a missing partition or state")
    num_screens = _int(header.get("num_screens"), "num_screens")
    if num_screens < n:
        raise _Corrupt(f"{num_screens} screens cannot have made {n} observations")
    num_states = int(state_of.max()) + 1 if n else 0
    index._metas = metas
    index._meta_ids = {m: i for i, m in enumerate(metas)}
    seen = np.zeros(n, dtype=bool)
    try:
        for i in range(len(metas)):
            obs = _array(arrays, f"part{i}.obs", "int64")
            blob = _array(arrays, f"part{i}.hnsw", "uint8")
            _check_hnsw(blob, index.embedder.dim, len(obs))
            hnsw = faiss.deserialize_index(blob)
            if not isinstance(hnsw, faiss.IndexHNSWFlat):
                raise _Corrupt(f"partition {i} has a dense index of another kind")
            part = _Partition(index.embedder.dim, index.hnsw_m, index.ef_construction, index.ef_search, hnsw=hnsw)
            for o in obs.tolist():
                if not 0 <= o < n or int(meta[o]) != i or seen[o]:
                    raise _Corrupt(f"partition {i} lists observation {o} wrongly")
                seen[o] = True
                part.bm25.add(np.concatenate((cv[co[o] : co[o + 1]], tv[to[o] : to[o + 1]])))
                part.obs.append(o)
            index._parts.append(part)
        if not bool(seen.all()):
            raise _Corrupt("an observation belongs to no partition")
        for o in range(n):
            index._store.add(int(meta[o]), cv[co[o] : co[o + 1]], tv[to[o] : to[o + 1]])
    except InvalidInputError as exc:  # from the atom store: sets not sorted and unique
        raise _Corrupt(f"inconsistent atoms: {exc}") from None
    except RuntimeError as exc:  # faiss
        raise _Corrupt(f"unreadable dense index: {echo(str(exc).splitlines()[0] if str(exc) else '')}") from None
    if n and int(np.bincount(state_of, minlength=num_states).min()) == 0:
        raise _Corrupt("a state has no observation")
    # Each state's members in observation order: a stable sort by state puts
    # them side by side; each links to the next one of its run.
    order = np.argsort(state_of, kind="stable")
    nxt = np.full(n, -1, dtype=np.int64)
    same = state_of[order[1:]] == state_of[order[:-1]] if n else np.zeros(0, dtype=bool)
    nxt[order[:-1][same]] = order[1:][same]
    starts = np.flatnonzero(np.concatenate(([True], ~same))) if n else np.zeros(0, dtype=np.int64)
    ends = np.concatenate((starts[1:] - 1, [n - 1])) if n else np.zeros(0, dtype=np.int64)
    index._state_of = _Grow(state_of)
    index._next = _Grow(nxt)
    index._first = _Grow(order[starts])
    index._last = _Grow(order[ends])
    index._hits = _Grow(hits, dtype=np.int64)
    index._screens = num_screens
    return index
