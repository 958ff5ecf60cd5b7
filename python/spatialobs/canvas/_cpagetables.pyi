from typing import List, Optional, Tuple

import numpy as np
import numpy.typing as npt

def run_bounds(s: npt.NDArray[np.float64], lo: float, hi: float, tol: float) -> Tuple[int, int]: ...
def rows_at(col: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]: ...
def recut_lines(s: npt.NDArray[np.float64], pos: npt.NDArray[np.int64], changed: npt.NDArray[np.int64],
                c_old: npt.NDArray[np.float64], c_new: npt.NDArray[np.float64], tol: float, one: bool,
                boxes: npt.NDArray[np.float64], rows: npt.NDArray[np.int64], parent: npt.NDArray[np.int64],
                kind: int) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def recut_kinds(lines: List[Tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]], changed: npt.NDArray[np.int64],
                before: npt.NDArray[np.float64], now: npt.NDArray[np.float64], tol: float, one: bool,
                boxes: npt.NDArray[np.float64], rows: npt.NDArray[np.int64], parent: npt.NDArray[np.int64]
                ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64],
                           npt.NDArray[np.int64]]: ...
def splice_pieces(n: int, drop: npt.NDArray[np.int64], at: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]: ...
def cut_pieces(old: np.ndarray, new: np.ndarray, pieces: npt.NDArray[np.int64]) -> np.ndarray: ...
def splice_span(cols: List[np.ndarray], keys: npt.NDArray[np.int64], drop: npt.NDArray[np.int64],
                new_cols: List[np.ndarray], new_keys: npt.NDArray[np.int64]) -> Tuple[int, int]: ...
def renumber_pairs(omap: npt.NDArray[np.int64], a: npt.NDArray[np.int64], b: npt.NDArray[np.int64],
                   bits: npt.NDArray[np.int64], shift_a: int, shift_b: int
                   ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int, Optional[npt.NDArray[np.int64]]]: ...
def map_rows(newrow: npt.NDArray[np.int64], canvas_rows: npt.NDArray[np.int64], page_pos: npt.NDArray[np.int64],
             n: int, max_runs: int
             ) -> Optional[Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], bool,
                                 Optional[npt.NDArray[np.int64]], npt.NDArray[np.bool_]]]: ...
def solid_rows(solid: npt.NDArray[np.uint8], omap: npt.NDArray[np.int64], old_sub: npt.NDArray[np.int64],
               is_new: npt.NDArray[np.uint8], max_runs: int
               ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64],
                          npt.NDArray[np.int64], Optional[npt.NDArray[np.int64]], npt.NDArray[np.int64]]: ...
def rows_differ(a: npt.NDArray[np.float64], src: npt.NDArray[np.int64], b: npt.NDArray[np.float64],
                dst: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]: ...
def reparented(new_of_kept: npt.NDArray[np.int64], kept_old: npt.NDArray[np.int64], old_parent: npt.NDArray[np.int64],
               parent: npt.NDArray[np.int64], omap: npt.NDArray[np.int64]) -> Tuple[npt.NDArray[np.int64], bool]: ...
def near_grown(boxes: npt.NDArray[np.float64], gap: float) -> Optional[npt.NDArray[np.float64]]: ...
def near_affected(q: npt.NDArray[np.float64], hi: npt.NDArray[np.int64], hj: npt.NDArray[np.int64],
                  sb: npt.NDArray[np.float64], gap: float, changed: npt.NDArray[np.int64],
                  before: npt.NDArray[np.float64]
                  ) -> Optional[Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]]: ...
def near_touched(keys: npt.NDArray[np.int64], na: npt.NDArray[np.int64], nb: npt.NDArray[np.int64],
                 sub: npt.NDArray[np.int64], subpos: npt.NDArray[np.int64], affected: npt.NDArray[np.int64],
                 hi: npt.NDArray[np.int64], hj: npt.NDArray[np.int64], sb: npt.NDArray[np.float64], gap: float
                 ) -> Optional[Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]]: ...
def near_pairs(sb: npt.NDArray[np.float64], sub: npt.NDArray[np.int64], size: npt.NDArray[np.int64],
               halo: npt.NDArray[np.int64], hi: npt.NDArray[np.int64], hj: npt.NDArray[np.int64],
               affected: npt.NDArray[np.int64], gap: float, k: int
               ) -> Optional[Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]]: ...
def aligned_merge(aa: npt.NDArray[np.int64], ab: npt.NDArray[np.int64], am: npt.NDArray[np.int64],
                  keys: npt.NDArray[np.int64], cut_rows: npt.NDArray[np.int64], cut_bits: npt.NDArray[np.int64],
                  nk: npt.NDArray[np.int64], nb: npt.NDArray[np.int64]
                  ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64],
                             npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def pairs_of(keys: npt.NDArray[np.int64], ta: npt.NDArray[np.int64], sub: npt.NDArray[np.int64],
             pos: npt.NDArray[np.int64], hi: npt.NDArray[np.int64], hj: npt.NDArray[np.int64]
             ) -> npt.NDArray[np.int64]: ...
def overlaps_found(sb: npt.NDArray[np.float64], sub: npt.NDArray[np.int64], boxes: npt.NDArray[np.float64],
                   size: npt.NDArray[np.int64], changed: npt.NDArray[np.int64], hi: npt.NDArray[np.int64],
                   hj: npt.NDArray[np.int64]) -> Optional[Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]: ...
def inside_redo(sb: npt.NDArray[np.float64], changed: npt.NDArray[np.int64], hi: npt.NDArray[np.int64],
                hj: npt.NDArray[np.int64], ci: npt.NDArray[np.int64], co: npt.NDArray[np.int64],
                sub: npt.NDArray[np.int64], subpos: npt.NDArray[np.int64], orphans: npt.NDArray[np.int64]
                ) -> Optional[npt.NDArray[np.int64]]: ...
def inside_found(sb: npt.NDArray[np.float64], sub: npt.NDArray[np.int64], size: npt.NDArray[np.int64],
                 redo: npt.NDArray[np.int64], hi: npt.NDArray[np.int64], hj: npt.NDArray[np.int64],
                 ci: npt.NDArray[np.int64], co: npt.NDArray[np.int64]
                 ) -> Optional[Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]: ...
def touches_strips(xs: npt.NDArray[np.float64], xp: npt.NDArray[np.int64], er: npt.NDArray[np.int64],
                   et: npt.NDArray[np.int64], ex: npt.NDArray[np.float64], ey: npt.NDArray[np.float64],
                   mv: npt.NDArray[np.int64], keys: npt.NDArray[np.int64], changed: npt.NDArray[np.int64],
                   before: npt.NDArray[np.float64], sb: npt.NDArray[np.float64], sub: npt.NDArray[np.int64],
                   boxes: npt.NDArray[np.float64], tol: float
                   ) -> Optional[Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64],
                                       npt.NDArray[np.int64]]]: ...

PAINTED_REACH_MAX: int

def painted_reach(boxes: npt.NDArray[np.float64], rows: npt.NDArray[np.int64], bb: npt.NDArray[np.float64],
                  brank: npt.NDArray[np.int64], dirty: npt.NDArray[np.int64], prev_rows: npt.NDArray[np.int64],
                  prev_occ: npt.NDArray[np.int64], pad: float) -> Optional[Tuple[npt.NDArray[np.int64], ...]]: ...
