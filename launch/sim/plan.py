"""Planning: what to ask for each contest task (pure, seeded) and what the contest requires of it.

:func:`plan_tasks` turns :class:`SimOptions` into :class:`TaskPlan` s: target squares, the board's pose,
the simulated person's policy and misbehaviours, and the deadline.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any, Final

from messages.game import TWO_PIECES, WRONG_COLOUR
from services.common.config import Config
from services.referee.machine import GAME_TASKS, PLACEMENT_TASKS, TASK1_SQUARE

from .errors import SimError

#: The contest's tasks (the referee's placement tasks, then its game tasks).
ALL_TASKS: Final = tuple(sorted(PLACEMENT_TASKS | GAME_TASKS))

#: The person's default setup per game task: task 4 must be won after a mistaken first reply; task 5 is
#: a draw against perfect play; task 6 has the person move one of the device's pieces.
DEFAULT_POLICY: Final = {4: "mistake:1", 5: "perfect", 6: "perfect"}
DEFAULT_MISBEHAVE: Final = {4: (), 5: (), 6: ("move-device-piece",)}
#: Misbehaviours (the simulated person's, see services.simhuman.person) that end in cheating (a device
#: piece moved or removed) rather than an illegal move.
CHEATS: Final = frozenset({"move-device-piece", "remove-device-piece"})
#: Misbehaviours the referee reports as an illegal move (the first two by the illegal kind's own name).
ILLEGAL_MISBEHAVIOURS: Final = frozenset({TWO_PIECES, WRONG_COLOUR, "button-without-move"})
#: Task 3 turns the board by this much (either sign) and moves its centre by up to this much.
TASK3_ANGLE_RANGE_DEG: Final = (15.0, 40.0)
TASK3_OFFSET_MM: Final = 10.0
#: How many squares tasks 2 and 3 ask for.
TASK23_SQUARE_COUNT: Final = 4
#: The squares the device may open on in task 4 (corners and centre).
TASK4_OPENINGS: Final = (1, 3, 5, 7, 9)

#: Deadlines (wall seconds): a task's own deadline scales with the speed factor (see task_timeout).
TASK_BASE_TIMEOUT_S: Final = 60.0
TASK_SIM_SECONDS: Final = 400.0


@dataclass(frozen=True)
class TaskPlan:
    """One task (or one game of a game task) as the orchestrator will ask for it."""

    task: int
    #: 1-based game number within the task (``--games``).
    game: int = 1
    squares: tuple[int, ...] = ()
    colours: str = ""
    first: int | None = None
    #: the board's pose for this task: centre (mm) and angle (degrees).
    board_x_mm: float = 200.0
    board_y_mm: float = 150.0
    board_angle_deg: float = 0.0
    policy: str = "perfect"
    misbehave: tuple[str, ...] = ()
    human_seed: int = 0
    timeout_s: float = 120.0
    #: whether every placement must keep to the contest's 15 s; not when a process is killed on purpose
    #: in the middle of one (the crash tests): recovery, not speed, is the requirement then.
    budget_applies: bool = True

    @property
    def label(self) -> str:
        return f"{self.task}" if self.game == 1 else f"{self.task}.{self.game}"

    @property
    def requirement(self) -> str:
        """The contest's requirement, in words."""
        if self.task == 1:
            return f"a black piece on square {TASK1_SQUARE}"
        if self.task in (2, 3):
            turned = f" on a board turned {self.board_angle_deg:+.1f} deg" if self.task == 3 else ""
            return f"pieces {self.colours or 'bbww'} on squares {','.join(map(str, self.squares))}{turned}"
        if self.task == 4:
            return "device wins" if self.expects_win else "device does not lose"
        if self.task == 5:
            return "device never loses"
        return "the moved piece restored; device does not lose"

    @property
    def expects_win(self) -> bool:
        return self.task == 4 and self.policy.startswith("mistake")

    @property
    def misbehaviours(self) -> frozenset[str]:
        """The misbehaviours' names (without a ``:N`` move number)."""
        return frozenset(m.partition(":")[0] for m in self.misbehave)

    @property
    def expects_cheat(self) -> bool:
        return bool(CHEATS & self.misbehaviours)

    @property
    def expects_illegal(self) -> bool:
        return bool(ILLEGAL_MISBEHAVIOURS & self.misbehaviours)


@dataclass(frozen=True)
class SimOptions:
    """What ``sanzi sim`` was asked to do."""

    tasks: tuple[int, ...] = ALL_TASKS
    games: int = 1
    human: str | None = None
    misbehave: tuple[str, ...] | None = None
    speed: float = 10.0
    seed: int = 0
    task_timeout_s: float | None = None


def task_timeout(speed: float) -> float:
    """A task's wall-clock deadline at ``speed``: simulated time shrinks with the speed, the software's
    own time (vision's stability window, message hops) does not."""
    return TASK_BASE_TIMEOUT_S + TASK_SIM_SECONDS / speed


def plan_tasks(options: SimOptions, config: Config) -> list[TaskPlan]:
    """The plans for ``options`` (pure; seeded by ``options.seed``). Game tasks get ``options.games``
    games each; placement tasks run once.

    :raises SimError: for an unknown task or a bad number of games.
    """
    for task in options.tasks:
        if task not in ALL_TASKS:
            raise SimError(f"unknown task {task}: tasks are 1 to 6")
    if options.games < 1:
        raise SimError(f"--games must be at least 1, got {options.games}")
    rng = random.Random(options.seed)
    sw = config.simworld
    timeout = options.task_timeout_s or task_timeout(options.speed)
    plans: list[TaskPlan] = []
    for task in options.tasks:
        base = TaskPlan(
            task=task,
            board_x_mm=sw.board_x_mm,
            board_y_mm=sw.board_y_mm,
            board_angle_deg=sw.board_angle_deg,
            timeout_s=timeout,
            human_seed=rng.randrange(1 << 31),
        )
        if task in PLACEMENT_TASKS:
            plans.append(_placement_plan(base, rng))
        else:
            plans += _game_plans(base, options, rng)
    return plans


def _placement_plan(base: TaskPlan, rng: random.Random) -> TaskPlan:
    """Task 1, 2 or 3 from ``base``: its squares and, for task 3, the board turned and moved."""
    if base.task == 1:
        return _replace(base, squares=(TASK1_SQUARE,), colours="b")
    plan = _replace(base, squares=tuple(rng.sample(range(1, 10), TASK23_SQUARE_COUNT)))
    if base.task == 3:
        sign = rng.choice((-1.0, 1.0))
        angle = round(sign * rng.uniform(*TASK3_ANGLE_RANGE_DEG), 1)
        dx = round(rng.uniform(-TASK3_OFFSET_MM, TASK3_OFFSET_MM), 1)
        dy = round(rng.uniform(-TASK3_OFFSET_MM, TASK3_OFFSET_MM), 1)
        plan = _replace(
            plan, board_angle_deg=angle, board_x_mm=base.board_x_mm + dx, board_y_mm=base.board_y_mm + dy
        )
    return plan


def _game_plans(base: TaskPlan, options: SimOptions, rng: random.Random) -> list[TaskPlan]:
    """The ``options.games`` games of game task ``base.task``, each with its own person's seed."""
    policy = options.human or DEFAULT_POLICY[base.task]
    misbehave = DEFAULT_MISBEHAVE[base.task] if options.misbehave is None else options.misbehave
    first = rng.choice(TASK4_OPENINGS) if base.task == 4 else None
    return [
        _replace(
            base,
            game=game,
            policy=policy,
            misbehave=tuple(misbehave),
            first=first,
            human_seed=rng.randrange(1 << 31),
        )
        for game in range(1, options.games + 1)
    ]


def _replace(plan: TaskPlan, **changes: Any) -> TaskPlan:
    """``plan`` with ``changes`` (the tests make variants of a planned task with it)."""
    return dataclasses.replace(plan, **changes)
