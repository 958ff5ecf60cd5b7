from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

def node_columns(nodes: List[Any]) -> Optional[Tuple[List[str], List[str], List[str], List[str], npt.NDArray[np.float64]]]: ...
