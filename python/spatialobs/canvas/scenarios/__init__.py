"""Benchmark scenarios: the Remote Team Handoff suite, its scoring and a reference agent.

:mod:`.handoff` builds the CanvasObs paper's ten controlled configurations and seeded
synthetic workspaces; :mod:`.evaluate` scores an edit against a task; :mod:`.agent` is the
rule-based reference agent that reads only an observation or baseline context.

Examples
--------
>>> from spatialobs.canvas import scenarios
>>> scenarios.remote_team_handoff(0).family
'archive'
"""

from spatialobs.canvas.scenarios.handoff import (
    FAMILIES,
    Scenario,
    diagram_workspace,
    remote_team_handoff,
    synthetic_workspace,
)

__all__ = ["FAMILIES", "Scenario", "diagram_workspace", "remote_team_handoff", "synthetic_workspace"]
