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
def object_records(nodes: Dict[str, Any], names: List[str], crow: npt.NDArray[np.int64], ints: npt.NDArray[np.int64],
                   flags: npt.NDArray[np.uint8], ab: npt.NDArray[np.int64], opac: npt.NDArray[np.float64],
                   deg: npt.NDArray[np.float64], bnds: npt.NDArray[np.float64], label_names: Tuple[str, ...],
                   flag_names: Tuple[str, ...], text_max: int
                   ) -> Tuple[List[Dict[str, Any]], Dict[str, Tuple[float, float, float, float]]]: ...
def relation_records(names: List[str], ca: npt.NDArray[np.int64], cb: npt.NDArray[np.int64], rt: npt.NDArray[np.int64],
                     rx: npt.NDArray[np.float64], type_names: Tuple[str, ...], kind_names: Dict[int, str]
                     ) -> List[Dict[str, Any]]: ...
