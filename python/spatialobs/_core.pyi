# Stub for the compiled module spatialobs._core. Users call the public
# modules (spatialobs.geometry, ...), which wrap these.
from typing import Any, Callable, List, Literal, Optional, Sequence, Tuple, overload

import numpy as np
import numpy.typing as npt

__version__: str

# ---- geometry -------------------------------------------------------------

VISIBLE: int
PARTIAL: int
OCCLUDED: int
OFFSCREEN_NEAR: int
OFFSCREEN_FAR: int

_Box = tuple[float, float, float, float]
# Box arguments are converted from any sequence of exactly four numbers.
_BoxArg = Sequence[float]

class BoxIndex:
    def __init__(self, boxes: npt.NDArray[np.float64], node_size: int = 16) -> None: ...
    def __len__(self) -> int: ...
    @property
    def node_size(self) -> int: ...
    @property
    def bounds(self) -> _Box | None: ...
    def query(self, box: _BoxArg) -> npt.NDArray[np.int64]: ...
    def query_many(self, boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]: ...
    def query_containing(self, box: _BoxArg) -> npt.NDArray[np.int64]: ...
    def query_pairs(self) -> npt.NDArray[np.int64]: ...

def visibility(
    boxes: npt.NDArray[np.float64], viewport: _BoxArg, near_factor: float = 0.75
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float64]]: ...
def visibility_labels(
    boxes: npt.NDArray[np.float64], viewport: _BoxArg, near_factor: float = 0.75
) -> npt.NDArray[np.int8]: ...
@overload
def occluders(
    boxes: npt.NDArray[np.float64],
    order: npt.NDArray[np.int64],
    opacity: npt.NDArray[np.float64],
    hidden: npt.NDArray[np.bool_],
    viewport: _BoxArg,
    min_opacity: float = 0.9,
    mode: Literal["bounds"] = "bounds",
) -> npt.NDArray[np.int64]: ...
@overload
def occluders(
    boxes: npt.NDArray[np.float64],
    order: npt.NDArray[np.int64],
    opacity: npt.NDArray[np.float64],
    hidden: npt.NDArray[np.bool_],
    viewport: _BoxArg,
    min_opacity: float,
    mode: Literal["union"],
    targets: npt.NDArray[np.bool_] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
@overload
def occluders(
    boxes: npt.NDArray[np.float64],
    order: npt.NDArray[np.int64],
    opacity: npt.NDArray[np.float64],
    hidden: npt.NDArray[np.bool_],
    viewport: _BoxArg,
    min_opacity: float = 0.9,
    mode: str = "bounds",
    targets: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.int64] | tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def polygon_coverage(
    verts: npt.NDArray[np.float64],
    starts: npt.NDArray[np.int64],
    targets: npt.NDArray[np.int64],
    cover_starts: npt.NDArray[np.int64],
    cover: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]]: ...
# The pair kernels take the boxes or a BoxIndex built over them (reused, not rebuilt).
def overlap_pairs(
    boxes: npt.NDArray[np.float64] | BoxIndex, *, threads: int = 1
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def overlap_pairs_between(
    index: BoxIndex, queries: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def overlap_any_ranked(
    index: BoxIndex,
    ranks: npt.NDArray[np.int64],
    queries: npt.NDArray[np.float64],
    query_ranks: npt.NDArray[np.int64],
    above: bool = True,
) -> npt.NDArray[np.bool_]: ...
def containment_pairs(boxes: npt.NDArray[np.float64] | BoxIndex, *, threads: int = 1) -> npt.NDArray[np.int64]: ...
def proximity_pairs(
    boxes: npt.NDArray[np.float64] | BoxIndex, max_gap: float, k_nearest: int, *, threads: int = 1
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def alignment_pairs(
    boxes: npt.NDArray[np.float64], tol: float, *, threads: int = 1, kind: int = -1
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int8]]: ...
def alignment_masks(
    boxes: npt.NDArray[np.float64], tol: float, group: npt.NDArray[np.int64] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int8], npt.NDArray[np.int8]]: ...
def reading_order(boxes: npt.NDArray[np.float64], row_tol: float) -> npt.NDArray[np.int64]: ...
# Working memory the pair kernels keep for the calling thread.
def release_scratch() -> None: ...
def scratch_bytes() -> int: ...

# ---- arrows ---------------------------------------------------------------

_F64 = npt.NDArray[np.float64]
_I64 = npt.NDArray[np.int64]
_Bool = npt.NDArray[np.bool_]

def resolve_straight_arrows(
    px: _F64,
    py: _F64,
    rotation: _F64,
    arrow_row: _I64,
    points: _F64,
    scale: _F64,
    stroke: _F64,
    heads: _Bool,
    target: _I64,
    outline: _I64,
    box_outline: _I64,
    anchor: _F64,
    precise: _Bool,
    exact: _Bool,
    offsets: _I64,
    outline_points: _F64,
    closed: _Bool,
    bounds: _F64,
    outline_stroke: _F64,
    hypot_variant: int = 0,
) -> tuple[_F64, _F64, _Bool]: ...
def resolve_arrows(
    px: _F64,
    py: _F64,
    rotation: _F64,
    arrow_row: _I64,
    points: _F64,
    scale: _F64,
    stroke: _F64,
    heads: _Bool,
    target: _I64,
    outline: _I64,
    box_outline: _I64,
    anchor: _F64,
    precise: _Bool,
    exact: _Bool,
    offsets: _I64,
    outline_points: _F64,
    closed: _Bool,
    bounds: _F64,
    outline_stroke: _F64,
    bend: _F64,
    arc: _Bool,
    hypot_variant: int = 0,
) -> tuple[_F64, _F64, _Bool, _Bool, _F64, _Bool]: ...
def place_arrow_labels(
    is_arc: _Bool,
    ends: _F64,
    centers: _F64,
    sweep_large: _Bool,
    body_boxes: _F64,
    size: _F64,
    pad: _F64,
    position: _F64,
    clamp: _Bool,
    hypot_variant: int = 0,
) -> tuple[_F64, _F64]: ...
def python_hypot(x: float, y: float, hypot_variant: int = 0) -> float: ...
def target_outlines(
    kind: _I64,
    size: _F64,
    flip: _Bool,
    ex_offsets: _I64,
    ex_points: _F64,
    ex_bounds: _F64,
) -> tuple[_I64, _F64, _F64]: ...

# ---- elbow arrows ---------------------------------------------------------

_Pt = tuple[float, float]
#: (points, closed, xf, anchor, precise, exact, edge_snap, target_stroke)
_ElbowTerminal = tuple[Sequence[Sequence[float]], bool, Sequence[float], Sequence[float], bool, bool, bool, float]

def elbow_route(
    arrow_xf: Sequence[float],
    start_free: Sequence[float],
    end_free: Sequence[float],
    start: _ElbowTerminal | None,
    end: _ElbowTerminal | None,
    same_target: bool,
    head_start: bool,
    head_end: bool,
    stroke: float,
    scale: float,
    expand_len: float,
    min_len: float,
    mid: float,
    hypot_variant: int = 0,
) -> tuple[list[_Pt], _Pt, _Pt, _Pt | None, float, float] | None: ...

# ---- placement ------------------------------------------------------------

def place_greedy(
    sizes: npt.NDArray[np.float64],
    wants: npt.NDArray[np.float64],
    room: _BoxArg,
    obstacles: npt.NDArray[np.float64],
    order: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.float64], int]: ...

# ---- screen ---------------------------------------------------------------

_U64 = npt.NDArray[np.uint64]

def atom_hash(kind: str, col: int, row: int, value: str) -> int: ...
def grid_cells(
    bounds: npt.NDArray[np.float64], width: float, height: float, grid: int
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]: ...
def screen_atoms(
    bounds: npt.NDArray[np.float64], width: float, height: float, grid: int, roles: Sequence[str], texts: Sequence[str]
) -> tuple[_U64, _U64]: ...
def ngram_embed(texts: Sequence[str], n: int, dim: int) -> npt.NDArray[np.float32]: ...
def rrf_fuse(lists: List[npt.NDArray[np.int64]], k: float) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def jaccard_score(a_control: _U64, a_text: _U64, b_control: _U64, b_text: _U64) -> float: ...
def jaccard_ratio(a_control: _U64, a_text: _U64, b_control: _U64, b_text: _U64) -> tuple[int, int]: ...
def jaccard_at_least(
    a_control: _U64, a_text: _U64, b_control: _U64, b_text: _U64, tau_num: int, tau_den: int
) -> bool: ...

class AtomStore:
    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def add(self, meta: int, control: _U64, text: _U64) -> int: ...
    def find_exact(self, meta: int, control: _U64, text: _U64) -> int: ...
    def verify(
        self, control: _U64, text: _U64, ids: npt.NDArray[np.int64], tau_num: int, tau_den: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_], int, tuple[int, int]]: ...
    def meta(self, id: int, /) -> int: ...
    def atoms(self, id: int, /) -> tuple[_U64, _U64]: ...
    def columns(
        self,
    ) -> tuple[npt.NDArray[np.uint32], _U64, _U64, _U64, _U64]: ...
    def memory_bytes(self) -> int: ...

class Bm25Index:
    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None: ...
    @property
    def k1(self) -> float: ...
    @property
    def b(self) -> float: ...
    @property
    def num_terms(self) -> int: ...
    def __len__(self) -> int: ...
    def add(self, atoms: _U64) -> int: ...
    def top_k(
        self, query: _U64, k: int, *, exhaustive: bool = False
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
    def posting_floor(self, query: _U64, *, scatter: bool = True) -> tuple[int, float]: ...
    def memory_bytes(self) -> int: ...

def hybrid_insert(
    bm25: Bm25Index,
    store: AtomStore,
    meta: int,
    control: _U64,
    text: _U64,
    dense: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int32],
    top_k: int,
    rrf_k: float,
    tau_num: int,
    tau_den: int,
) -> tuple[int, int, int, float, int]: ...

# ---- text -----------------------------------------------------------------

class TextFont:
    def __init__(
        self,
        runs: List[Any],
        upm: float,
        left: List[str],
        right: List[str],
        m: List[List[float]],
        has_kern: bool,
        resolver: Callable[[List[int]], Tuple[List[float], List[int]]],
        compensated_sum: bool = False,
    ) -> None: ...
    def line_em(self, text: str) -> float: ...
    def line_ems(self, texts: List[str]) -> List[float]: ...
    def kern(self, a: int, b: int) -> float: ...
    def layout(
        self,
        text: str,
        font_size: float,
        max_width: Optional[float],
        break_words: bool,
        rule: int,
        slack: float,
        split_unkerned: bool,
    ) -> List[Tuple[str, float]]: ...
    def measure(
        self, text: str, font_size: float, max_width: Optional[float], break_words: bool
    ) -> Optional[Tuple[float, int, int, float]]: ...

def text_excalidraw_brackets() -> Tuple[str, str]: ...
