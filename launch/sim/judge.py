"""Judging: whether a task met its contest requirement, checked against the referee AND the world.

:func:`judge` (pure) compares what the bus told (:class:`Observed`: the referee's last state and the
world once it settled) with the plan: the pieces where they should be, the referee's board equal to the
world's, no square placed twice, the game's result what the contest asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from engine import GEOMETRY_3X3
from messages import GameState, WorldState
from messages.game import DEVICE_WON, DONE, DRAW, PERSON_WON
from services.referee.judge import BLACK, EMPTY, EMPTY_BOARD, WHITE
from services.referee.machine import PLACEMENT_TASKS

from .plan import TaskPlan

#: The world's board angle must agree with the plan's within this after task 3 (and vision's with the
#: world's before it starts).
ANGLE_TOLERANCE_DEG: Final = 3.0
#: A piece's symbol on the board for a colour as the referee (black/white) or a task (b/w) names it.
SYMBOL_OF: Final = {"black": BLACK, "white": WHITE, "b": BLACK, "w": WHITE}
PIECES: Final = BLACK + WHITE


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
        if board[a] in PIECES and board[a] == board[b] == board[c]:
            return board[a]
    return ""


def _symbol(colour: str) -> str:
    return SYMBOL_OF.get(colour, "?")


def judge(plan: TaskPlan, seen: Observed) -> Verdict:
    """Whether the task met its contest requirement, checked against the referee AND the world. The
    reasons come in a fixed order: the run's own trouble, the world's consistency, then the task's."""
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
    reasons += _world_reasons(plan, state, world)
    if plan.task in PLACEMENT_TASKS:
        reasons += _placement_reasons(plan, state, world)
    else:
        reasons += _game_reasons(plan, state, world.board)
    return Verdict(not reasons, reasons)


def _world_reasons(plan: TaskPlan, state: GameState, world: WorldState) -> list[str]:
    """What is wrong with the world itself or with the referee's account of it, for any task."""
    reasons: list[str] = []
    board = world.board
    if state.board != board:
        reasons.append(f"referee's board {state.board} differs from the world's {board}")
    on_board = sum(1 for p in world.pieces if p.where == "board")
    on_squares = sum(1 for ch in board if ch in PIECES)
    if on_board != on_squares:
        reasons.append(f"{on_board} pieces lie on the board but only {on_squares} on squares")
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
    return reasons


def _placement_reasons(plan: TaskPlan, state: GameState, world: WorldState) -> list[str]:
    """Tasks 1-3: the asked pieces on the asked squares (on the turned board for task 3)."""
    reasons: list[str] = []
    board = world.board
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
    return reasons


def _game_reasons(plan: TaskPlan, state: GameState, board: str) -> list[str]:
    """Tasks 4-6: the game ended, the device did not lose (won when asked), and the referee's result,
    opening, cheats and illegal moves agree with the plan and with the world's ``board``."""
    reasons: list[str] = []
    device = _symbol(state.device_colour)
    person = WHITE if device == BLACK else BLACK
    won = winner(board)
    if state.result not in (DEVICE_WON, PERSON_WON, DRAW):
        reasons.append(f"result {state.result or 'none'}, expected the game to end")
    if state.result == PERSON_WON or won == person:
        reasons.append("the device lost")
    if plan.expects_win and (state.result != DEVICE_WON or won != device):
        reasons.append(f"expected the device to win after the mistake, got {state.result or 'none'}")
    if state.result == DEVICE_WON and won != device:
        reasons.append("the referee says the device won but the world's board shows no device line")
    if state.result == DRAW and (won or EMPTY in board):
        reasons.append("the referee says draw but the world's board is not a full board without a line")
    if plan.task == 4 and plan.first is not None and state.moves and state.moves[0] != plan.first:
        reasons.append(f"the device opened on {state.moves[0]}, asked for {plan.first}")
    if plan.expects_cheat and state.cheats_restored < 1:
        reasons.append("the moved piece was not restored (no cheat handled)")
    if plan.expects_illegal and state.illegal_moves < 1:
        reasons.append("the illegal move was not reported")
    return reasons
