"""Running: one task from a reset world to a verdict (:func:`run_task`), a list of tasks in order
(:func:`run_plans`), and a whole ``sanzi sim`` with the stack started and stopped (:func:`run_sim`)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final, TextIO

from messages import GameState, OperatorCommand
from messages.game import GAME_OVER
from services.common.config import Config

from .. import stack as stack_module
from .config import fresh_state
from .errors import SimError
from .judge import Observed, judge
from .person import for_person, start_interactive_human, stop_child
from .plan import SimOptions, TaskPlan, plan_tasks
from .progress import Progress
from .session import SimSession, StateHook
from .table import TaskResult, summary

#: After the game is over, how long the world may take to settle (the last piece let go, the hand out).
SETTLE_TIMEOUT_S: Final = 10.0
#: A task past its deadline still gets this long to report its end.
MIN_FOLLOW_S: Final = 1.0


async def run_task(
    session: SimSession,
    plan: TaskPlan,
    progress: Progress | None = None,
    on_state: StateHook | None = None,
) -> TaskResult:
    """Set the world up for ``plan``, start the task, follow it to its end and judge it.

    ``on_state`` is awaited with every new referee state of this task (the crash tests kill processes
    from it). Errors of the setup or of the referee become a failed verdict, not an exception, so that
    the remaining tasks still run; only a cancelled run raises.
    """
    progress = progress or Progress(None)
    seen = Observed()
    started = time.monotonic()
    try:
        progress.show(plan, None, "resetting the world")
        await session.reset_world()
        await session.refill_supplies()
        await session.set_board(plan.board_x_mm, plan.board_y_mm, plan.board_angle_deg)
        await session.set_human(plan.policy, plan.misbehave, plan.human_seed)
        progress.show(plan, None, "waiting for the referee and vision")
        await session.wait_ready(plan)
        cmd = OperatorCommand(
            command_id=session.next_id(f"task{plan.task}-"),
            action="task",
            task=plan.task,
            squares=list(plan.squares) if plan.task in (2, 3) else [],
            first=plan.first if plan.task == 4 else None,
            colours=plan.colours if plan.task in (2, 3) else "",
        )
        started = time.monotonic()
        reply = await session.command(cmd)
        if not reply.ok:
            raise SimError(f"the referee refused task {plan.task}: {reply.error}")
        seen.game_id = reply.game_id
        await follow(session, plan, seen, started, progress, on_state)
    except (TimeoutError, SimError) as exc:
        seen.error = seen.error or str(exc)
    seen.wall_s = time.monotonic() - started
    seen.state = _final_state(session, seen)
    seen.world = session.world
    result = TaskResult(plan, seen, judge(plan, seen))
    progress.done(result)
    return result


def _final_state(session: SimSession, seen: Observed) -> GameState | None:
    s = session.state
    return s if s is not None and seen.game_id and s.game_id == seen.game_id else seen.state


async def follow(
    session: SimSession,
    plan: TaskPlan,
    seen: Observed,
    started: float,
    progress: Progress,
    on_state: StateHook | None,
) -> None:
    """Follow ``referee.state`` until this task's game is over, then let the world settle."""
    last_revision: tuple[int, int] = (-1, -1)

    def mine() -> GameState | None:
        s = session.state
        return s if s is not None and s.game_id == seen.game_id else None

    def over() -> bool:
        s = mine()
        return s is not None and s.phase == GAME_OVER and bool(s.result)

    async def changed() -> None:
        nonlocal last_revision
        s = mine()
        if s is None:
            return
        key = (session.state_pid, s.revision)
        if key == last_revision:
            return
        last_revision = key
        seen.state = s
        progress.show(plan, s)
        if on_state is not None:
            await on_state(s)

    remaining = plan.timeout_s - (time.monotonic() - started)
    try:
        await session.until(
            over, max(remaining, MIN_FOLLOW_S), f"task {plan.label}", session.ask_snapshot, changed
        )
    except TimeoutError:
        seen.timed_out = True
        await changed()
        # Stop the task so that the next one can start (the referee takes a task only at rest).
        with contextlib.suppress(TimeoutError):
            await session.command(OperatorCommand(command_id=session.next_id("stop"), action="stop"))
        return
    await changed()
    final = mine()
    assert final is not None  # over() held
    await _settle(session, final.board)


async def _settle(session: SimSession, board: str) -> None:
    """Wait (up to :data:`SETTLE_TIMEOUT_S`) for the world to show ``board``, nothing in the gripper and
    the hand out of view. The world settles right after the last confirmation; a mismatch that persists
    is judged as such, so running out of time here is not an error."""

    def settled() -> bool:
        w = session.world
        return w is not None and w.gripper.holding is None and not w.hand.present and w.board == board

    with contextlib.suppress(TimeoutError):
        await session.until(settled, SETTLE_TIMEOUT_S, "the world settling")


async def run_plans(
    session: SimSession,
    plans: Sequence[TaskPlan],
    progress: Progress | None = None,
    on_state: Callable[[TaskPlan], StateHook | None] | None = None,
    *,
    fail_fast: bool = False,
) -> list[TaskResult]:
    """Run ``plans`` in order; ``on_state(plan)`` may give a per-task state hook. With ``fail_fast``
    the first failed task ends the run (the tests: one clear failure, not six slow ones)."""
    results: list[TaskResult] = []
    for plan in plans:
        hook = on_state(plan) if on_state is not None else None
        results.append(await run_task(session, plan, progress, hook))
        if fail_fast and not results[-1].verdict.ok:
            break
    return results


@dataclass
class RunReport:
    """A whole run: the tasks' results, its wall time and the stack's files (the runtime folder)."""

    results: list[TaskResult]
    wall_s: float
    files: stack_module.StackFiles

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(r.verdict.ok for r in self.results)


def run_sim(
    config: Config,
    options: SimOptions,
    *,
    stream: TextIO | None = sys.stderr,
    interactive_human: bool = False,
    web_human: bool = False,
    start_timeout_s: float = stack_module.START_TIMEOUT_S,
) -> RunReport:
    """Start the simulated stack for ``config`` (already a :func:`simulator_config`), run the planned
    tasks, stop the stack (always) and return the results.

    With ``interactive_human`` the simulated person is not run under supervisord but in the foreground
    with policy "you", reading the terminal.

    :raises stack_module.StackError: when the stack does not come up.
    :raises SimError: for bad options.
    """
    plans = for_person(plan_tasks(options, config), interactive=interactive_human, web=web_human)
    fresh_state(config)
    exclude = {"simhuman"} if interactive_human else set()
    files = stack_module.prepare(config, command="sim", exclude=exclude)
    stack = stack_module.Stack(files)
    human: subprocess.Popen[bytes] | None = None
    t0 = time.monotonic()
    try:
        _start_stack(config, stack, stream, start_timeout_s)
        if interactive_human:
            human = start_interactive_human(files)
        results = asyncio.run(_run(config, plans, Progress(None if interactive_human else stream)))
    finally:
        with stack_module.uninterruptible():
            if human is not None:
                stop_child(human)
            stack.stop()
    return RunReport(results, time.monotonic() - t0, files)


def _start_stack(config: Config, stack: stack_module.Stack, stream: TextIO | None, timeout_s: float) -> None:
    """Start ``stack`` and wait until every process runs and beats; say so (and where the console is)
    on ``stream``. :raises stack_module.StackError: when it does not come up within ``timeout_s``."""
    files = stack.files
    if stream is not None:
        print(
            f"sanzi sim: starting {len(files.programs)} processes (runtime {files.runtime_dir})", file=stream
        )
    stack.start()
    stack.wait_running(timeout=timeout_s)
    stack.wait_heartbeats(config, timeout=timeout_s)
    url = stack_module.console_url(config, files)
    if stream is not None and url:
        print(f"sanzi sim: the console is at {url}", file=stream, flush=True)


async def _run(config: Config, plans: Sequence[TaskPlan], progress: Progress) -> list[TaskResult]:
    async with SimSession(config) as session:
        return await run_plans(session, plans, progress)


def as_json(report: RunReport, options: SimOptions) -> dict[str, Any]:
    """The run's JSON summary (``sanzi sim --summary``): :func:`summary`, the runtime folder and the
    options."""
    data = summary(report.results, options, report.wall_s)
    data["runtime"] = str(report.files.runtime_dir)
    data["options"] = asdict(options)
    return data
