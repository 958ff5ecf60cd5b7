# Stub for the compiled module spatialobs._core. Users call the public
# modules (spatialobs.geometry, ...), which wrap these.
from typing import Literal, overload

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

class BoxIndex:
    def __init__(self, boxes: npt.NDArray[np.float64], node_size: int = 16) -> None: ...
    def __len__(self) -> int: ...
    @property
    def node_size(self) -> int: ...
    @property
    def bounds(self) -> _Box | None: ...
    def query(self, box: _Box) -> npt.NDArray[np.int64]: ...
    def query_containing(self, box: _Box) -> npt.NDArray[np.int64]: ...
    def query_pairs(self) -> npt.NDArray[np.int64]: ...

def visibility(
    boxes: npt.NDArray[np.float64], viewport: _Box, near_factor: float = 0.75
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float64]]: ...
@overload
def occluders(
    boxes: npt.NDArray[np.float64],
    order: npt.NDArray[np.int64],
    opacity: npt.NDArray[np.float64],
    hidden: npt.NDArray[np.bool_],
    viewport: _Box,
    min_opacity: float = 0.9,
    mode: Literal["bounds"] = "bounds",
) -> npt.NDArray[np.int64]: ...
@overload
def occluders(
    boxes: npt.NDArray[np.float64],
    order: npt.NDArray[np.int64],
    opacity: npt.NDArray[np.float64],
    hidden: npt.NDArray[np.bool_],
    viewport: _Box,
    min_opacity: float,
    mode: Literal["union"],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def overlap_pairs(boxes: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def containment_pairs(boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]: ...
def proximity_pairs(
    boxes: npt.NDArray[np.float64], max_gap: float, k_nearest: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def alignment_pairs(boxes: npt.NDArray[np.float64], tol: float) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int8]]: ...
def reading_order(boxes: npt.NDArray[np.float64], row_tol: float) -> npt.NDArray[np.int64]: ...
