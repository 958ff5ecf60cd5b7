"""Screen features (DESIGN §7): normalized text, location-aware atoms, the two-set Jaccard score.

Atoms
-----
Each element's center is quantized on a ``grid x grid`` lattice over the screen::

    col = floor(((x0 + x1) * 0.5) * grid / width)    clamped to [0, grid - 1]
    row = floor(((y0 + y1) * 0.5) * grid / height)   clamped to [0, grid - 1]

(evaluated in that order in float64). A cell-control atom is
``hash("c:<col>:<row>:<role>")`` for every element; a cell-text atom is
``hash("t:<col>:<row>:<text>")`` for every element whose normalized text is not
empty. ``hash`` is FNV-1a 64 over the UTF-8 bytes (offset basis
``0xcbf29ce484222325``, prime ``0x100000001b3``): the same value on every
platform, compiler and run, so atoms may be stored and compared across machines.
Each set is returned sorted and unique as a ``uint64`` array.

Normalization
-------------
Roles and texts are lowercased, runs of whitespace collapse to one space (ends
stripped), and the result is cut to 120 characters. With ``mask_volatile=True``
every run of digits, with ``.``, ``,``, ``:`` or ``/`` between digit groups, is
replaced by ``#`` before the cut, so that a clock (``10:17:41``), a counter
(``3/10``) or a progress figure (``45.5``) does not split one state into many.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from spatialobs import _core
from spatialobs._errors import InvalidInputError
from spatialobs.screen.limits import echo
from spatialobs.screen.model import Element, Screen, ScreenMeta

__all__ = [
    "MAX_TEXT",
    "Features",
    "normalize_text",
    "mask_volatile",
    "tokens",
    "atom_hash",
    "featurize",
    "jaccard_score",
    "jaccard_ratio",
    "jaccard_at_least",
    "as_threshold",
]

#: Normalized texts are cut to this many characters.
MAX_TEXT = 120

_VOLATILE = re.compile(r"\d+(?:[.,:/]\d+)*")

AtomSets = Tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]


def normalize_text(text: str, *, mask: bool = False) -> str:
    """Lowercase, collapse whitespace, optionally mask volatile digits, cut to 120 characters.

    Examples
    --------
    >>> normalize_text("  Updated   at 10:17:41 PM ", mask=True)
    'updated at # pm'
    """
    s = " ".join(text.lower().split())
    if mask:
        s = _VOLATILE.sub("#", s)
    return s[:MAX_TEXT]


_TOKEN = re.compile(r"[^\W_]+")


def tokens(text: Optional[str]) -> frozenset:
    """The set of letter/digit runs of the normalized text (what priors and goals match on).

    Examples
    --------
    >>> sorted(tokens("Save As..."))
    ['as', 'save']
    """
    return frozenset(_TOKEN.findall(normalize_text(text or "")))


def mask_volatile(text: str) -> str:
    """Replace each run of digits (with ``.,:/`` between groups) by ``#``."""
    return _VOLATILE.sub("#", text)


def _utf8_safe(s: str) -> str:
    # Lone surrogates (from lenient JSON decoders) cannot be encoded; replace them
    # so that hashing is still defined.
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "replace").decode("utf-8")


def atom_hash(kind: str, col: int, row: int, value: str) -> int:
    """The 64-bit atom hash of one cell and value (``kind`` ``"c"`` or ``"t"``).

    Examples
    --------
    >>> atom_hash("c", 1, 2, "x")
    12870049167146173273
    """
    if kind not in ("c", "t"):
        raise InvalidInputError(f"atom kind must be 'c' or 't', got {kind!r}")
    return int(_core.atom_hash(kind, int(col), int(row), _utf8_safe(value)))


#: Strings up to this long are normalized through a cache; longer ones (rare)
#: directly, so the cache holds at most 2^16 short strings.
_CACHED_CHARS = 256


@lru_cache(maxsize=1 << 16)
def _normalized_cached(text: str, mask: bool) -> str:
    return _utf8_safe(normalize_text(text, mask=mask))


def _normalized(text: str, mask: bool) -> str:
    # Roles and texts repeat across the screens of an app: normalizing each
    # distinct string once takes a third of featurize off the add path.
    if len(text) <= _CACHED_CHARS:
        return _normalized_cached(text, mask)
    return _utf8_safe(normalize_text(text, mask=mask))


@dataclass(frozen=True)
class Features:
    """What the state index knows about a screen.

    Attributes
    ----------
    control_atoms, text_atoms : uint64 arrays
        Sorted unique cell-control and cell-text atoms.
    text : str
        The normalized element texts in reading order (grid rows top to bottom,
        then center x, then document order), joined by single spaces.
    meta : ScreenMeta
        The screen's metadata; only screens with equal metadata can merge.
    """

    control_atoms: npt.NDArray[np.uint64]
    text_atoms: npt.NDArray[np.uint64]
    text: str
    meta: ScreenMeta = field(default_factory=ScreenMeta)

    def __post_init__(self) -> None:
        for name in ("control_atoms", "text_atoms"):
            a = getattr(self, name)
            arr = np.ascontiguousarray(a, dtype=np.uint64) if not isinstance(a, np.ndarray) else a
            if arr.dtype != np.uint64 or arr.ndim != 1:
                raise InvalidInputError(f"{name} must be a 1-D uint64 array, got {arr.dtype} with {arr.ndim} dims")
            if arr.size > 1 and not bool(np.all(arr[1:] > arr[:-1])):
                raise InvalidInputError(f"{name} must be sorted and unique")
            object.__setattr__(self, name, np.ascontiguousarray(arr))
        if not isinstance(self.meta, ScreenMeta):
            raise InvalidInputError(f"meta must be a ScreenMeta, got {type(self.meta).__name__}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Features):
            return NotImplemented
        return (
            np.array_equal(self.control_atoms, other.control_atoms)
            and np.array_equal(self.text_atoms, other.text_atoms)
            and self.text == other.text
            and self.meta == other.meta
        )

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def _from_core(cls, control: npt.NDArray[np.uint64], text: npt.NDArray[np.uint64], joined: str,
                   meta: ScreenMeta) -> "Features":
        # Atom arrays fresh from _core.screen_atoms are contiguous, sorted and
        # unique by construction: skip re-checking them on the add path.
        obj = object.__new__(cls)
        for name, value in (("control_atoms", control), ("text_atoms", text), ("text", joined), ("meta", meta)):
            object.__setattr__(obj, name, value)
        return obj


def _element_columns_py(elements: List[Element], mask: bool) -> Tuple[npt.NDArray[np.float64], List[str], List[str]]:
    # The pure-Python twin of the compiled _cfeatures.element_columns (its test
    # oracle, and the fallback when the compiled module is absent).
    bounds = np.array([e.bounds for e in elements], dtype=np.float64).reshape(len(elements), 4)
    roles = [_normalized(e.role, False) for e in elements]
    texts = [_normalized(e.text, mask) if e.text else "" for e in elements]
    return bounds, roles, texts


def _reading_text_py(texts: List[str], bounds: npt.NDArray[np.float64], rows: npt.NDArray[np.int32]) -> str:
    # The pure-Python twin of _cfeatures.reading_text.
    cx = (bounds[:, 0] + bounds[:, 2]) * 0.5
    order = np.lexsort((np.arange(len(texts)), cx, rows))
    return " ".join(texts[i] for i in order if texts[i])


try:
    from spatialobs.screen._cfeatures import element_columns as _element_columns
    from spatialobs.screen._cfeatures import reading_text as _reading_text
except ImportError:  # a source tree without the compiled module
    _element_columns = _element_columns_py
    _reading_text = _reading_text_py


def featurize(screen: Screen, grid: int = 30, *, mask_volatile: bool = False) -> Features:
    """Atoms, reading-order text and metadata of a screen (one ``_core`` call for the atoms).

    Parameters
    ----------
    screen : Screen
    grid : int, default 30
        Cells per side of the quantization lattice (1 to 65535).
    mask_volatile : bool, default False
        Replace digit runs by ``#`` before hashing (see the module docstring).

    Examples
    --------
    >>> from spatialobs.screen import Element, Screen
    >>> s = Screen([Element((0, 0, 10, 10), "Button", "OK")], 100, 100)
    >>> f = featurize(s)
    >>> len(f.control_atoms), len(f.text_atoms), f.text
    (1, 1, 'ok')
    """
    if not isinstance(screen, Screen):
        raise InvalidInputError(f"featurize expects a Screen, got {type(screen).__name__}")
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)):
        raise InvalidInputError(f"grid must be an integer, got {echo(grid)}")
    if not 1 <= grid <= 65535:  # checked here too: a huge int would not reach _core as an int32
        raise InvalidInputError(f"grid must be between 1 and 65535, got {echo(grid)}")
    bounds, roles, texts = _element_columns(list(screen.elements), bool(mask_volatile))
    control, text = _core.screen_atoms(bounds, screen.width, screen.height, int(grid), roles, texts)
    joined = ""
    if any(texts):
        _, rows = _core.grid_cells(bounds, screen.width, screen.height, int(grid))
        joined = _reading_text(texts, bounds, rows)
    if not isinstance(screen.meta, ScreenMeta):
        raise InvalidInputError(f"meta must be a ScreenMeta, got {type(screen.meta).__name__}")
    return Features._from_core(control, text, joined, screen.meta)


def _sets(x: Any, name: str) -> AtomSets:
    if isinstance(x, Features):
        return x.control_atoms, x.text_atoms
    try:
        c, t = x
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be Features or a (control_atoms, text_atoms) pair") from None
    return (np.ascontiguousarray(c, dtype=np.uint64), np.ascontiguousarray(t, dtype=np.uint64))


def as_threshold(tau: Union[float, Fraction, str, int]) -> Fraction:
    """τ as an exact fraction: a float is read as its shortest decimal (``0.93`` is 93/100).

    Raises :class:`~spatialobs.InvalidInputError` outside [0, 1] or when the
    denominator needs more than 32 bits.
    """
    try:
        if isinstance(tau, float):
            frac = Fraction(repr(tau))
        else:
            frac = Fraction(tau)
    except (TypeError, ValueError, ZeroDivisionError):
        raise InvalidInputError(f"tau must be a number in [0, 1], got {tau!r}") from None
    if not (0 <= frac <= 1):
        raise InvalidInputError(f"tau must lie in [0, 1], got {tau!r}")
    if frac.denominator >= 2**32:
        raise InvalidInputError(f"tau {tau!r} needs a denominator below 2^32; round it (e.g. 0.93)")
    return frac


def jaccard_score(a: Any, b: Any) -> float:
    """``0.5 * J(control) + 0.5 * J(text)`` of two screens' atom sets, ``J(∅, ∅) = 1``.

    ``a`` and ``b`` are :class:`Features` or ``(control_atoms, text_atoms)`` pairs of
    sorted unique uint64 arrays.

    Examples
    --------
    >>> import numpy as np
    >>> u = np.array([1, 2, 3, 4], dtype=np.uint64)
    >>> jaccard_score((u, u[:0]), (u[:2], u[:0]))
    0.75
    """
    ac, at = _sets(a, "a")
    bc, bt = _sets(b, "b")
    return float(_core.jaccard_score(ac, at, bc, bt))


def jaccard_ratio(a: Any, b: Any) -> Fraction:
    """The score of :func:`jaccard_score` as an exact fraction."""
    ac, at = _sets(a, "a")
    bc, bt = _sets(b, "b")
    num, den = _core.jaccard_ratio(ac, at, bc, bt)
    return Fraction(int(num), int(den))


def jaccard_at_least(a: Any, b: Any, tau: Union[float, Fraction, str] = 0.93) -> bool:
    """Whether the two-set score reaches ``tau``, decided exactly (integer cross-multiplication)."""
    t = as_threshold(tau)
    ac, at = _sets(a, "a")
    bc, bt = _sets(b, "b")
    return bool(_core.jaccard_at_least(ac, at, bc, bt, t.numerator, t.denominator))
