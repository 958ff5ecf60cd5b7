from typing import Tuple

import numpy as np
import numpy.typing as npt

def run_bounds(s: npt.NDArray[np.float64], lo: float, hi: float, tol: float) -> Tuple[int, int]: ...
