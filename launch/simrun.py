"""``sanzi sim``: the contest tasks played end to end on the simulator, and checked against the world.

The pieces:

- :func:`simulator_config`: a configuration for one run (simulator processes, speed, seeds, a fresh
  state folder) and :func:`calibrate_simulator`, which renders the initial world with the simulated
  camera, finds its ArUco markers and returns the camera-to-table homography the actuator needs.
- :func:`plan_tasks` (pure, seeded): what to ask for each task — target squares, the board's pose, the
  simulated person's policy and misbehaviours — and what the contest requires of the result.
- :class:`SimSession`: the orchestrator's bus connection. It sends operator commands (resent with the same
  id until answered: the referee carries out an id once), world actions and the person's setup (resent
  until the bus echoes them back), and follows ``referee.state``, ``sim.world`` and ``vision.stable``.
- :func:`run_task`: one task from a reset world to a verdict. :func:`judge` (pure) checks the outcome
  against the contest's requirement and against the WORLD (``sim.world``): the pieces where they should
  be, the referee's board equal to the world's, no piece placed twice.
- :func:`format_table` / :func:`summary`: the closing table and its JSON.

Everything waits on conditions with deadlines; nothing sleeps to synchronise.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import random
import shutil
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

from engine import GEOMETRY_3X3
from messages import (
    ActuatorCommand,
    ActuatorEvent,
    ActuatorPosition,
    BoardObservation,
    Envelope,
    GameState,
    HumanSetup,
    Message,
    OperatorCommand,
    OperatorReply,
    WorldAction,
    WorldState,
)
from messages.game import DEVICE_WON, DONE, DRAW, GAME_OVER, PERSON_WON, RESTING_PHASES

from . import stack as stack_module

#: The contest's tasks.
ALL_TASKS: Final = (1, 2, 3, 4, 5, 6)
PLACEMENT_TASKS: Final = frozenset({1, 2, 3})
GAME_TASKS: Final = frozenset({4, 5, 6})
EMPTY_BOARD: Final = "........."

#: The person's default setup per game task: task 4 must be won after a mistaken first reply; task 5 is
#: a draw against perfect play; task 6 has the person move one of the device's pieces.
DEFAULT_POLICY: Final = {4: "mistake:1", 5: "perfect", 6: "perfect"}
DEFAULT_MISBEHAVE: Final = {4: (), 5: (), 6: ("move-device-piece",)}
#: The simulated person's policy that reads the terminal (``sanzi sim --human you``).
INTERACTIVE_POLICY: Final = "you"
#: The simulated person's policy when a person plays in the browser console (``sanzi sim --human web``):
#: the simulated person stands aside, and the page places the pieces and presses the button.
WEB_POLICY: Final = "web"
#: Misbehaviours that end in cheating (a device piece moved or removed) rather than an illegal move.
CHEATS: Final = frozenset({"move-device-piece", "remove-device-piece"})
#: Misbehaviours the referee reports as an illegal move.
ILLEGAL_KINDS: Final = frozenset({"two-pieces", "wrong-colour", "button-without-move"})
#: Task 3 turns the board by this much (either sign) and moves its centre by up to this much.
TASK3_ANGLE_RANGE_DEG: Final = (15.0, 40.0)
TASK3_OFFSET_MM: Final = 10.0
#: vision's board angle must agree with the world's within this before task 3 starts.
ANGLE_TOLERANCE_DEG: Final = 3.0
POSE_TOLERANCE_MM: Final = 0.5

#: How long one look at the socket takes when draining what is already there.
DRAIN_POLL_S: Final = 0.001
#: How often the orchestrator tries to home the machine after refilling the supplies.
REFILL_ATTEMPTS: Final = 5
#: How often unanswered commands and unechoed messages are sent again.
RESEND_S: Final = 1.0
#: Deadlines (wall seconds). A task's own deadline scales with the speed factor (see plan_tasks).
SETUP_TIMEOUT_S: Final = 30.0
SETTLE_TIMEOUT_S: Final = 10.0
TASK_BASE_TIMEOUT_S: Final = 60.0
TASK_SIM_SECONDS: Final = 400.0

#: Where `sanzi sim` keeps its persistent state inside the runtime folder: a fresh simulated table needs
#: a fresh journal and a fresh supply record, so this folder is emptied at the start of every run.
SIM_STATE_DIR: Final = "sim-state"


class SimError(RuntimeError):
    """The simulation could not be set up or a task could not be run (not a failed verdict)."""


# ------------------------------------------------------------------------------------------ configuration


def simulator_config(
    base: Any,
    *,
    speed: float,
    seed: int,
    extra: dict[str, Any] | None = None,
    calibrate: bool = True,
) -> Any:
    """``base`` turned into the configuration of one simulated run: the simulator's processes, the speed
    factor, every seed derived from ``seed``, a private state folder (emptied), then ``extra`` overrides,
    then the calibration from the simulated camera when ``calibrate`` and none is configured.

    :raises SimError: for a non-positive speed or a calibration that fails.
    """
    if not speed > 0:
        raise SimError(f"--speed must be positive, got {speed}")
    config = stack_module.merge(base, stack_module.simulator_overrides(base))
    state_dir = Path(config.runtime.dir) / SIM_STATE_DIR
    overrides: dict[str, Any] = {
        "runtime": {"state_dir": str(state_dir)},
        "simworld": {"speed": float(speed), "seed": seed},
        "simcam": {"seed": seed},
        "simhuman": {"seed": seed},
        "referee": {"seed": seed},
        "ai": {"seed": seed},
    }
    config = stack_module.merge(config, overrides)
    # {state} was expanded at load time with the old folder: rebase every path that used it.
    old_state = base.runtime.state_dir
    config = stack_module.merge(config, _rebase(config, old_state, str(state_dir)))
    if extra:
        config = stack_module.merge(config, extra)
    if calibrate and not config.calibration.homography:
        homography, error_mm = calibrate_simulator(config)
        config = stack_module.merge(config, {"calibration": {"homography": homography, "error_mm": error_mm}})
    return config


def _rebase(config: Any, old: str, new: str) -> dict[str, Any]:
    """Overrides moving every string setting under ``old`` to ``new`` (except runtime.state_dir)."""
    import msgspec

    out: dict[str, Any] = {}
    for section, values in msgspec.to_builtins(config).items():
        if section == "runtime":
            values = {k: v for k, v in values.items() if k != "state_dir"}
        for key, value in values.items():
            if isinstance(value, str) and old and value.startswith(old + "/"):
                out.setdefault(section, {})[key] = new + value[len(old) :]
    return out


def fresh_state(config: Any) -> None:
    """Empty the run's state folder (the referee's journal, the actuator's supply record): the simulated
    world starts with full supplies and an empty board every time."""
    state = Path(config.runtime.state_dir)
    if state.name == SIM_STATE_DIR and state.exists():
        shutil.rmtree(state)
    state.mkdir(mode=0o700, parents=True, exist_ok=True)


def calibrate_simulator(config: Any) -> tuple[list[float], float]:
    """Calibrate the simulated camera as a person would calibrate the real one: render the initial world
    (empty board at the configured pose, full supplies, the ArUco markers), find the markers, fit the
    homography. Returns (row-major 3x3 homography image px -> table mm, reprojection error in mm).

    :raises SimError: when the markers are not found or the simulated camera is missing.
    """
    try:
        from services.actuator.calibration import calibrate_from_image
        from services.simcam.core import FrameMaker, frame_to_image
        from services.simcam.world import world_from_board
    except ImportError as exc:
        raise SimError(f"the simulated camera or the calibration is not available: {exc}") from None
    sw = config.simworld
    world = world_from_board(
        EMPTY_BOARD,
        sw.board_angle_deg,
        (sw.board_x_mm, sw.board_y_mm),
        pitch_mm=sw.pitch_mm,
        table=config.table,
        line_width_mm=sw.line_width_mm,
        piece_diameter_mm=sw.piece_diameter_mm,
    )
    # Exactly the frame the simulated camera process would publish for this world.
    image = frame_to_image(FrameMaker.from_config(config).frame(world))
    try:
        result = calibrate_from_image(image, config.table)
    except Exception as exc:  # CalibrationError and friends say what failed
        raise SimError(f"calibrating the simulated camera failed: {exc}") from exc
    return _homography_of(result)


def _homography_of(result: Any) -> tuple[list[float], float]:
    """Accept what a calibrator returns: an object with ``homography`` (and ``error_mm``), a pair, or a
    bare 3x3 matrix."""
    import numpy as np

    error = -1.0
    if hasattr(result, "homography"):
        matrix = result.homography
        error = float(getattr(result, "error_mm", getattr(result, "rms_mm", -1.0)))
    elif isinstance(result, tuple) and len(result) == 2:
        matrix, error = result[0], float(result[1])
    else:
        matrix = result
    values = [float(v) for v in np.asarray(matrix, dtype=float).reshape(-1)]
    if len(values) != 9 or not all(math.isfinite(v) for v in values):
        raise SimError(f"the calibration gave no usable homography: {values}")
    return values, error


# ----------------------------------------------------------------------------------------------- planning


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
            return "a black piece on square 5"
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
        return bool(ILLEGAL_KINDS & self.misbehaviours)


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


def plan_tasks(options: SimOptions, config: Any) -> list[TaskPlan]:
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
        if task == 1:
            plans.append(_replace(base, squares=(5,), colours="b"))
        elif task in (2, 3):
            squares = tuple(rng.sample(range(1, 10), 4))
            plan = _replace(base, squares=squares)
            if task == 3:
                sign = rng.choice((-1.0, 1.0))
                angle = round(sign * rng.uniform(*TASK3_ANGLE_RANGE_DEG), 1)
                dx = round(rng.uniform(-TASK3_OFFSET_MM, TASK3_OFFSET_MM), 1)
                dy = round(rng.uniform(-TASK3_OFFSET_MM, TASK3_OFFSET_MM), 1)
                plan = _replace(
                    plan, board_angle_deg=angle, board_x_mm=sw.board_x_mm + dx, board_y_mm=sw.board_y_mm + dy
                )
            plans.append(plan)
        else:
            policy = options.human or DEFAULT_POLICY[task]
            misbehave = DEFAULT_MISBEHAVE[task] if options.misbehave is None else options.misbehave
            first = rng.choice((1, 3, 5, 7, 9)) if task == 4 else None
            for game in range(1, options.games + 1):
                plans.append(
                    _replace(
                        base,
                        game=game,
                        policy=policy,
                        misbehave=tuple(misbehave),
                        first=first,
                        human_seed=rng.randrange(1 << 31),
                    )
                )
    return plans


def _replace(plan: TaskPlan, **changes: Any) -> TaskPlan:
    import dataclasses

    return dataclasses.replace(plan, **changes)


# ----------------------------------------------------------------------------------------------- judging


@dataclass
class Observed:
    """What happened in one task, as the bus told it."""

    game_id: str = ""
    #: the referee's last state for this task (None when it never started).
    state: GameState | None = None
    #: the world once it settled after the task (None when never heard).
    world: WorldState | None = None
    wall_s: float = 0.0
    timed_out: bool = False
    error: str = ""
    #: processes that were killed during the task (crash tests) and similar notes.
    notes: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    ok: bool
    reasons: list[str]


def winner(board: str) -> str:
    """'X', 'O' or '' for a 9-character board (the engine's winning lines; no check of reachability)."""
    for a, b, c in GEOMETRY_3X3.line_squares:
        if board[a] in "XO" and board[a] == board[b] == board[c]:
            return board[a]
    return ""


def _symbol(colour: str) -> str:
    return {"black": "X", "white": "O", "b": "X", "w": "O"}.get(colour, "?")


def judge(plan: TaskPlan, seen: Observed) -> Verdict:
    """Whether the task met its contest requirement, checked against the referee AND the world."""
    reasons: list[str] = []
    state, world = seen.state, seen.world
    if seen.error:
        reasons.append(seen.error)
    if seen.timed_out:
        reasons.append(f"did not finish within {plan.timeout_s:.0f} s")
    if state is None:
        reasons.append("the referee never started the task")
        return Verdict(False, reasons)
    if seen.timed_out:
        detail = f": {state.message}" if state.message else ""
        fault = f" (fault {state.fault})" if state.fault else ""
        reasons.append(f"the referee was left in {state.phase}/{state.activity or '-'}{fault}{detail}")
    if world is None:
        reasons.append("no word from the simulated world")
        return Verdict(False, reasons)
    board = world.board
    if state.board != board:
        reasons.append(f"referee's board {state.board} differs from the world's {board}")
    on_board = sum(1 for p in world.pieces if p.where == "board")
    if on_board != sum(1 for ch in board if ch in "XO"):
        reasons.append(
            f"{on_board} pieces lie on the board but only {sum(c in 'XO' for c in board)} on squares"
        )
    if world.gripper.holding is not None:
        reasons.append(f"the gripper still holds piece {world.gripper.holding}")
    off_board = [p.piece_id for p in world.pieces if p.where == "table"]
    if off_board and "remove-device-piece" not in plan.misbehaviours:
        reasons.append(f"pieces {off_board} lie on the table off the board")
    placed = [p.square for p in state.placements if p.kind == "place"]
    if len(placed) != len(set(placed)):
        reasons.append(f"a square was placed twice: {placed}")
    late = [p.command_id for p in state.placements if not p.within_budget]
    if late and plan.budget_applies:
        reasons.append(f"placements over the 15 s budget: {late}")
    if plan.task in PLACEMENT_TASKS:
        if state.result != DONE:
            reasons.append(f"result {state.result or 'none'}, expected done")
        colours = state.colours or plan.colours
        squares = tuple(state.squares) or plan.squares
        if plan.squares and squares != plan.squares:
            reasons.append(f"the referee placed on {squares}, asked for {plan.squares}")
        expected = list(EMPTY_BOARD)
        for square, colour in zip(squares, colours, strict=False):
            expected[square - 1] = _symbol(colour)
        if board != "".join(expected):
            reasons.append(f"world board {board}, expected {''.join(expected)}")
        if plan.task == 3 and abs(world.board_angle_deg - plan.board_angle_deg) > ANGLE_TOLERANCE_DEG:
            reasons.append(
                f"the world's board is at {world.board_angle_deg:+.1f} deg, not {plan.board_angle_deg:+.1f}"
            )
    else:
        device = _symbol(state.device_colour)
        person = "O" if device == "X" else "X"
        won = winner(board)
        if state.result not in (DEVICE_WON, PERSON_WON, DRAW):
            reasons.append(f"result {state.result or 'none'}, expected the game to end")
        if state.result == PERSON_WON or won == person:
            reasons.append("the device lost")
        if plan.expects_win and (state.result != DEVICE_WON or won != device):
            reasons.append(f"expected the device to win after the mistake, got {state.result or 'none'}")
        if state.result == DEVICE_WON and won != device:
            reasons.append("the referee says the device won but the world's board shows no device line")
        if state.result == DRAW and (won or "." in board):
            reasons.append("the referee says draw but the world's board is not a full board without a line")
        if plan.task == 4 and plan.first is not None and state.moves and state.moves[0] != plan.first:
            reasons.append(f"the device opened on {state.moves[0]}, asked for {plan.first}")
        if plan.expects_cheat and state.cheats_restored < 1:
            reasons.append("the moved piece was not restored (no cheat handled)")
        if plan.expects_illegal and state.illegal_moves < 1:
            reasons.append("the illegal move was not reported")
    return Verdict(not reasons, reasons)


@dataclass
class TaskResult:
    plan: TaskPlan
    seen: Observed
    verdict: Verdict

    def row(self) -> dict[str, Any]:
        """The table's row as plain data (also the JSON summary's)."""
        state = self.seen.state
        placements = list(state.placements) if state else []
        durations = [p.duration_s for p in placements]
        return {
            "task": self.plan.task,
            "game": self.plan.game,
            "game_id": self.seen.game_id,
            "requirement": self.plan.requirement,
            "outcome": (state.result if state else "") or ("timeout" if self.seen.timed_out else "none"),
            "placements": len(placements),
            "placement_mean_s": round(sum(durations) / len(durations), 3) if durations else None,
            "placement_max_s": round(max(durations), 3) if durations else None,
            "illegal_moves": state.illegal_moves if state else 0,
            "cheats_restored": state.cheats_restored if state else 0,
            "moves": list(state.moves) if state else [],
            "referee_board": state.board if state else "",
            "world_board": self.seen.world.board if self.seen.world else "",
            "wall_s": round(self.seen.wall_s, 3),
            "policy": self.plan.policy if self.plan.task in GAME_TASKS else "",
            "misbehave": list(self.plan.misbehave),
            "ok": self.verdict.ok,
            "reasons": list(self.verdict.reasons),
            "notes": list(self.seen.notes),
        }


def format_table(results: Sequence[TaskResult]) -> str:
    """The closing table: task, outcome, placements, time per placement, illegal moves, cheats, verdict."""
    header = ("task", "outcome", "placements", "s/placement", "max s", "illegal", "cheats", "verdict")
    rows = [header]
    reasons: list[str] = []
    for r in results:
        row = r.row()
        mean = "-" if row["placement_mean_s"] is None else f"{row['placement_mean_s']:.2f}"
        worst = "-" if row["placement_max_s"] is None else f"{row['placement_max_s']:.2f}"
        rows.append(
            (
                r.plan.label,
                row["outcome"],
                str(row["placements"]),
                mean,
                worst,
                str(row["illegal_moves"]),
                str(row["cheats_restored"]),
                "PASS" if r.verdict.ok else "FAIL",
            )
        )
        reasons += [f"task {r.plan.label}: {reason}" for reason in r.verdict.reasons]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    passed = sum(r.verdict.ok for r in results)
    # The referee times a placement from its command to vision's confirmation on the wall clock and
    # checks the 15 s budget on it: exact at speed 1. On a faster simulator the motion shrinks with the
    # speed factor but vision's stability window and the software do not, so no single factor turns
    # these figures into device seconds; bench/actuator.py and `sanzi sim --speed 1` give those.
    lines.append("s/placement: wall seconds from the command to vision's confirmation")
    lines.append(f"{passed}/{len(results)} tasks met their contest requirement")
    return "\n".join(lines + reasons)


def summary(results: Sequence[TaskResult], options: SimOptions, wall_s: float) -> dict[str, Any]:
    return {
        "ok": bool(results) and all(r.verdict.ok for r in results),
        "speed": options.speed,
        "seed": options.seed,
        "wall_s": round(wall_s, 3),
        "tasks": [r.row() for r in results],
    }


# ------------------------------------------------------------------------------------------------ progress


class Progress:
    """One live line (task, move, phase), redrawn in place on a terminal; on anything else a line is
    printed when the phase changes. ``stream=None`` shows nothing."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self._last = ""

    def show(self, plan: TaskPlan, state: GameState | None, note: str = "") -> None:
        if self.stream is None:
            return
        if state is None:
            text = f"task {plan.label}: {note}"
        else:
            board = state.board
            text = (
                f"task {plan.label} {state.game_id} move {state.move_number} {state.phase}"
                f"{' (' + state.activity + ')' if state.activity else ''} board {board}"
                f"{' ' + state.result if state.result else ''}"
            )
            if note:
                text += f" {note}"
        if text == self._last:
            return
        self._last = text
        if self.tty:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            self.stream.write("\r\x1b[K" + text[:width])
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self, result: TaskResult) -> None:
        if self.stream is None:
            return
        row = result.row()
        text = f"task {result.plan.label}: {row['outcome']} -> {'PASS' if result.verdict.ok else 'FAIL'}"
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(text + "\n")
        self.stream.flush()
        self._last = ""


# --------------------------------------------------------------------------------------------- the session

StateHook = Callable[[GameState], Awaitable[None]]


class SimSession:
    """The orchestrator's view of a running simulated stack (one asyncio loop; not thread-safe)."""

    SOURCE: Final = "sim-run"

    def __init__(self, config: Any, *, nonce: str | None = None) -> None:
        from services.bus.client import Publisher, Subscriber, context

        self.config = config
        self.ctx = context()
        self.pub = Publisher(self.ctx, config.bus, self.SOURCE)
        self.pub.open()
        self.sub = Subscriber(
            self.ctx,
            config.bus,
            ["referee.state", "operator.", "sim.", "vision.", "actuator.event", "actuator.position"],
            name=self.SOURCE,
        )
        self.nonce = nonce or f"{os.getpid():x}{time.time_ns() & 0xFFFFFF:06x}"
        self._ids = itertools.count(1)
        self.state: GameState | None = None
        self._state_pid = 0
        self.world: WorldState | None = None
        #: vision's last stable reading (vision.stable) and its last reading of any frame (vision.board).
        self.stable: BoardObservation | None = None
        self.seen: BoardObservation | None = None
        self.replies: dict[str, OperatorReply] = {}
        self.actuator_events: dict[str, ActuatorEvent] = {}
        #: the last position report and how many have come (a fresh one is proof of the present).
        self.position: ActuatorPosition | None = None
        self.positions = 0
        self._echoes: set[tuple[str, int]] = set()

    def close(self) -> None:
        self.sub.close()
        self.pub.close()
        # destroy, not term: a socket a caller made on this context and left open (a test that failed
        # half-way) must not hang the exit, which would leave the stack running.
        self.ctx.destroy(linger=0)

    async def __aenter__(self) -> SimSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def next_id(self, what: str) -> str:
        return f"sim-{self.nonce}-{what}{next(self._ids)}"

    def ours(self, command_id: str) -> bool:
        """Whether an id is one this session made (actuator events of the referee's are its business)."""
        return command_id.startswith(f"sim-{self.nonce}-")

    # -- receiving --------------------------------------------------------------------------------------

    def _take(self, env: Envelope) -> None:
        msg = env.message
        if env.header.source == self.SOURCE:
            self._echoes.add((env.topic, env.header.seq))
            return
        if isinstance(msg, GameState):
            # Keep the newest revision; a restarted referee (new pid) may number afresh.
            if self.state is None or env.header.pid != self._state_pid or msg.revision > self.state.revision:
                self.state = msg
                self._state_pid = env.header.pid
        elif isinstance(msg, WorldState):
            self.world = msg
        elif isinstance(msg, BoardObservation):
            if env.topic == "vision.stable":
                self.stable = msg
            else:
                self.seen = msg
        elif isinstance(msg, OperatorReply):
            self.replies[msg.command_id] = msg
        elif (
            isinstance(msg, ActuatorEvent) and msg.status in ("done", "failed") and self.ours(msg.command_id)
        ):
            self.actuator_events[msg.command_id] = msg
        elif isinstance(msg, ActuatorPosition):
            self.position = msg
            self.positions += 1

    async def pump(self, timeout: float) -> bool:
        """Take in what arrives within ``timeout``; returns whether anything did."""
        env = await self.sub.recv(timeout=timeout)
        if env is None:
            return False
        self._take(env)
        while True:  # drain what is already waiting (recv(timeout=0) would not look at the socket)
            env = await self.sub.recv(timeout=DRAIN_POLL_S)
            if env is None:
                return True
            self._take(env)

    async def until(
        self,
        condition: Callable[[], bool],
        timeout: float,
        what: str,
        resend: Callable[[], Awaitable[None]] | None = None,
        on_change: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Pump messages until ``condition()`` holds. ``resend`` is called every :data:`RESEND_S`;
        ``on_change`` after every batch of messages. :raises TimeoutError: naming ``what``."""
        deadline = time.monotonic() + timeout
        next_resend = time.monotonic() + RESEND_S
        while not condition():
            now = time.monotonic()
            if now >= deadline:
                raise TimeoutError(f"{what}: not within {timeout:.0f} s")
            if resend is not None and now >= next_resend:
                await resend()
                next_resend = now + RESEND_S
            got = await self.pump(min(0.2, deadline - now, max(0.0, next_resend - now) or 0.2))
            if got and on_change is not None:
                await on_change()

    # -- sending ----------------------------------------------------------------------------------------

    async def publish_confirmed(self, topic: str, message: Message, timeout: float = SETUP_TIMEOUT_S) -> None:
        """Publish until the bus echoes our own message back: then the forwarder has it, and every
        subscriber that is connected gets it (the PUB/SUB slow-joiner and a restarting bus are handled by
        sending again)."""
        header = await self.pub.publish(topic, message)
        sent = {header.seq}

        async def again() -> None:
            h = await self.pub.publish(topic, message)
            sent.add(h.seq)

        await self.until(
            lambda: any((topic, seq) in self._echoes for seq in sent), timeout, f"publishing {topic}", again
        )

    async def command(self, cmd: OperatorCommand, timeout: float = SETUP_TIMEOUT_S) -> OperatorReply:
        """Send an operator command until the referee answers it (same id: carried out once)."""

        async def send() -> None:
            await self.pub.publish("operator.command", cmd)

        await send()
        await self.until(
            lambda: cmd.command_id in self.replies, timeout, f"referee's reply to {cmd.action}", send
        )
        return self.replies[cmd.command_id]

    async def world_action(self, action: WorldAction, done: Callable[[WorldState], bool], what: str) -> None:
        """Ask the world for ``action`` and wait until ``done(world)`` says it happened."""
        await self.publish_confirmed("sim.action", action)

        async def again() -> None:
            await self.pub.publish("sim.action", action)

        await self.until(lambda: self.world is not None and done(self.world), SETUP_TIMEOUT_S, what, again)

    async def reset_world(self) -> None:
        """Every piece back in its supply column, the board empty, the gripper free."""
        await self.world_action(
            WorldAction(action_id=self.next_id("reset"), kind="reset"), world_is_reset, "resetting the world"
        )

    async def refill_supplies(self) -> None:
        """Tell the actuator that the supply columns were set up anew (every slot full), as the operator
        does before each contest task: a ``home`` command (which also parks the gantry) with
        ``reset_supply``. Sent when the actuator reports the machine idle; resent with the same id until
        the actuator answers (it runs an id once); a refusal because the machine was still busy is tried
        again with a new id, up to :data:`REFILL_ATTEMPTS` times.

        :raises SimError: when the actuator keeps failing it."""
        reason = ""
        for _ in range(REFILL_ATTEMPTS):
            await self.wait_machine_idle()
            cmd = ActuatorCommand(command_id=self.next_id("refill"), kind="home", reset_supply=True)

            async def send(cmd: ActuatorCommand = cmd) -> None:
                await self.pub.publish("actuator.command", cmd)

            await send()
            await self.until(
                lambda c=cmd: c.command_id in self.actuator_events, SETUP_TIMEOUT_S, "refilling", send
            )
            event = self.actuator_events[cmd.command_id]
            if event.status == "done":
                return
            reason = event.reason
        raise SimError(f"the actuator could not home after the supplies were refilled: {reason}")

    async def wait_machine_idle(self, timeout: float = SETUP_TIMEOUT_S) -> None:
        """Wait for a position report, newer than now, that says the machine is idle."""
        after = self.positions

        def idle() -> bool:
            return self.positions > after and self.position is not None and self.position.state == "Idle"

        await self.until(idle, timeout, "waiting for the machine to be idle")

    async def set_board(self, x_mm: float, y_mm: float, angle_deg: float) -> None:
        """Put the board at a pose (the operator turning it for task 3)."""

        def placed(world: WorldState) -> bool:
            cx, cy = world.board_center_mm
            return (
                abs(cx - x_mm) <= POSE_TOLERANCE_MM
                and abs(cy - y_mm) <= POSE_TOLERANCE_MM
                and abs(world.board_angle_deg - angle_deg) <= 0.1
            )

        if self.world is not None and placed(self.world):
            return
        action = WorldAction(
            action_id=self.next_id("board"), kind="board", x_mm=x_mm, y_mm=y_mm, angle_deg=angle_deg
        )
        await self.world_action(action, placed, "turning the board")

    async def set_human(self, policy: str, misbehave: Sequence[str], seed: int) -> None:
        await self.publish_confirmed(
            "sim.human", HumanSetup(policy=policy, misbehave=list(misbehave), seed=seed)
        )

    async def wait_ready(self, plan: TaskPlan, timeout: float = SETUP_TIMEOUT_S) -> None:
        """Wait until the referee takes tasks (resting, no peer down) and vision's stable view is the
        empty board, seen (on its latest frames, which carry the current pose) at the plan's angle."""
        expected = image_angle(self.config, plan)

        def ready() -> bool:
            s, stable, seen = self.state, self.stable, self.seen
            if s is None or s.phase not in RESTING_PHASES or s.peers_down:
                return False
            if stable is None or stable.board != EMPTY_BOARD:
                return False
            if seen is None or not seen.stable or seen.board != EMPTY_BOARD or seen.pose is None:
                return False
            return abs(_angle_diff(seen.pose.angle_deg, expected)) <= ANGLE_TOLERANCE_DEG

        await self.until(ready, timeout, "waiting for the referee at rest and vision seeing the empty board")

    async def ask_snapshot(self) -> None:
        """Fetch the referee's state from its snapshot server (after a restart, or when updates were lost)."""
        from services.bus.client import request_snapshot

        env = await request_snapshot(
            self.ctx, self.config.bus.snapshot, "referee.state", timeout=0.5, attempts=1, bus=self.config.bus
        )
        if env is not None:
            self._take(env)


def image_angle(config: Any, plan: TaskPlan) -> float:
    """The board's angle as the camera sees it (what vision reports) for the plan's pose on the table:
    the board's x axis carried into the image through the inverse of the calibration. Without a
    calibration, the table angle itself."""
    import numpy as np

    if len(config.calibration.homography) != 9:
        return plan.board_angle_deg
    to_image = np.linalg.inv(np.asarray(config.calibration.homography, dtype=float).reshape(3, 3))
    a = math.radians(plan.board_angle_deg)
    ends = []
    for step in (-20.0, 20.0):  # millimetres along the board's x axis, either side of its centre
        x = plan.board_x_mm + step * math.cos(a)
        y = plan.board_y_mm - step * math.sin(a)
        u, v, w = to_image @ (x, y, 1.0)
        ends.append((u / w, v / w))
    (u1, v1), (u2, v2) = ends
    # counter-clockwise positive as seen in the image, whose y axis points down
    return _angle_diff(math.degrees(math.atan2(-(v2 - v1), u2 - u1)), 0.0)


def world_is_reset(world: WorldState) -> bool:
    return (
        world.board == EMPTY_BOARD
        and world.gripper.holding is None
        and not world.hand.present
        and all(p.where == "supply" for p in world.pieces)
    )


def _angle_diff(a: float, b: float) -> float:
    """Difference of two board angles modulo the board's 90-degree symmetry, in (-45, 45]."""
    d = (a - b) % 90.0
    return d - 90.0 if d > 45.0 else d


# ---------------------------------------------------------------------------------------------- one task


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
        key = (session._state_pid, s.revision)
        if key == last_revision:
            return
        last_revision = key
        seen.state = s
        progress.show(plan, s)
        if on_state is not None:
            await on_state(s)

    remaining = plan.timeout_s - (time.monotonic() - started)
    try:
        await session.until(over, max(remaining, 1.0), f"task {plan.label}", session.ask_snapshot, changed)
    except TimeoutError:
        seen.timed_out = True
        await changed()
        # Stop the task so that the next one can start (the referee takes a task only at rest).
        with contextlib.suppress(TimeoutError):
            await session.command(OperatorCommand(command_id=session.next_id("stop"), action="stop"))
        return
    await changed()
    final = mine()
    assert final is not None

    def settled() -> bool:
        w = session.world
        return w is not None and w.gripper.holding is None and not w.hand.present and w.board == final.board

    # The world settles right after the last confirmation; a mismatch that persists is judged as such.
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


# ----------------------------------------------------------------------------------------------- the run


@dataclass
class RunReport:
    results: list[TaskResult]
    wall_s: float
    files: stack_module.StackFiles

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(r.verdict.ok for r in self.results)


def run_sim(
    config: Any,
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
    plans = plan_tasks(options, config)
    if interactive_human:
        # the person at the terminal decides what to do: the orchestrator must not set a policy
        plans = [_replace(p, policy=INTERACTIVE_POLICY, misbehave=()) for p in plans]
    elif web_human:
        # the person plays in the browser: the simulated person (still running, so that the page can
        # hand it the game back) stands aside
        plans = [_replace(p, policy=WEB_POLICY, misbehave=()) for p in plans]
    fresh_state(config)
    exclude = {"simhuman"} if interactive_human else set()
    files = stack_module.prepare(config, command="sim", exclude=exclude)
    stack = stack_module.Stack(files)
    human: Any = None
    t0 = time.monotonic()
    try:
        if stream is not None:
            print(
                f"sanzi sim: starting {len(files.programs)} processes (runtime {files.runtime_dir})",
                file=stream,
            )
        stack.start()
        stack.wait_running(timeout=start_timeout_s)
        stack.wait_heartbeats(config, timeout=start_timeout_s)
        url = stack_module.console_url(config, files)
        if stream is not None and url:
            print(f"sanzi sim: the console is at {url}", file=stream, flush=True)
        if interactive_human:
            human = start_interactive_human(files)
        results = asyncio.run(_run(config, plans, Progress(None if interactive_human else stream)))
    finally:
        with stack_module.uninterruptible():
            if human is not None:
                stop_child(human)
            stack.stop()
    return RunReport(results, time.monotonic() - t0, files)


async def _run(config: Any, plans: Sequence[TaskPlan], progress: Progress) -> list[TaskResult]:
    async with SimSession(config) as session:
        return await run_plans(session, plans, progress)


def start_interactive_human(files: stack_module.StackFiles) -> Any:
    """The simulated person with policy "you", in the foreground on this terminal."""
    import subprocess

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "services.simhuman",
            "--config",
            str(files.config_file),
            "--set",
            f"simhuman.policy='{INTERACTIVE_POLICY}'",
            # the terminal is for the board and the prompt, not for the log
            "--set",
            "log.level='warning'",
        ],
        cwd=stack_module.PROJECT_ROOT,
        env=env,
    )


def stop_child(proc: Any, timeout: float = 5.0) -> None:
    import signal
    import subprocess

    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def as_json(report: RunReport, options: SimOptions) -> dict[str, Any]:
    data = summary(report.results, options, report.wall_s)
    data["runtime"] = str(report.files.runtime_dir)
    data["options"] = asdict(options)
    return data
