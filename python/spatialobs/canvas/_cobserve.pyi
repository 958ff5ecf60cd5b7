from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

_Point = Optional[Tuple[float, float]]

def xy(p: Any) -> _Point: ...
def terminal_points(node: Any) -> Tuple[_Point, _Point]: ...
def local_ends(nodes: Dict[str, Any], names: List[str], rows: npt.NDArray[np.int64], conn: npt.NDArray[np.int64],
               bound: npt.NDArray[np.uint8], memo: Dict[int, Any]
               ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def binding_rows(blist: List[Any], row_of: Dict[str, int]
                 ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
