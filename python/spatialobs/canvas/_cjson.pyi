from typing import Any, Optional

MAX_DEPTH: int

def dumps_compact(value: Any) -> Optional[str]: ...
