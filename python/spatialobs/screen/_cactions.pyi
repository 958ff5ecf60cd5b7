from typing import List

from spatialobs.screen.actions import Action
from spatialobs.screen.model import Screen

def signatures(actions: List[Action], screen: Screen, grid: int) -> List[str]: ...
