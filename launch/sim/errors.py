"""The simulator runner's one error: the run could not be set up or a task could not be run."""

from __future__ import annotations


class SimError(RuntimeError):
    """The simulation could not be set up or a task could not be run (not a failed verdict)."""
