"""``sanzi sim``: the contest tasks played end to end on the simulator, and checked against the world.

The work is done in :mod:`launch.sim`, one module per job (planning, configuration and calibration,
judging, the table, progress, the bus session, the person, the run); this module re-exports the names
the command, the benches and the tests use, so that they say ``simrun.X`` for every one of them.
"""

from __future__ import annotations

from services.referee.machine import GAME_TASKS, PLACEMENT_TASKS

from . import stack as stack_module
from .sim.config import (
    SIM_STATE_DIR,
    angle_diff,
    calibrate_simulator,
    fresh_state,
    image_angle,
    simulator_config,
)
from .sim.errors import SimError
from .sim.judge import Observed, Verdict, judge, winner
from .sim.person import INTERACTIVE_POLICY, WEB_POLICY, start_interactive_human, stop_child
from .sim.plan import ALL_TASKS, SimOptions, TaskPlan, plan_tasks, task_timeout
from .sim.plan import _replace as _replace
from .sim.progress import Progress
from .sim.run import RunReport, as_json, run_plans, run_sim, run_task
from .sim.session import SimSession, StateHook, world_is_reset
from .sim.table import TaskResult, format_table, summary

#: Private names the tests reach through this module: this one, and ``_replace`` (``as``: on purpose).
_angle_diff = angle_diff

__all__ = [
    "ALL_TASKS",
    "GAME_TASKS",
    "INTERACTIVE_POLICY",
    "PLACEMENT_TASKS",
    "SIM_STATE_DIR",
    "WEB_POLICY",
    "Observed",
    "Progress",
    "RunReport",
    "SimError",
    "SimOptions",
    "SimSession",
    "StateHook",
    "TaskPlan",
    "TaskResult",
    "Verdict",
    "angle_diff",
    "as_json",
    "calibrate_simulator",
    "format_table",
    "fresh_state",
    "image_angle",
    "judge",
    "plan_tasks",
    "run_plans",
    "run_sim",
    "run_task",
    "simulator_config",
    "stack_module",
    "start_interactive_human",
    "stop_child",
    "summary",
    "task_timeout",
    "winner",
    "world_is_reset",
]
