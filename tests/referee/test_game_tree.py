"""Every sequence of replies by the person in tasks 4 and 5 (and 6), through the pure referee.

The person's every legal move is tried at every turn; the device's moves come from the AI's answer
(:func:`services.ai.core.answer`, the engine), placed by the actuator and confirmed by vision, exactly as
the referee sees them. Results are memoised by the board at the person's turn: the device's choice is a
function of (seed, game, move number, board) and the move number is the board's piece count.
"""

from __future__ import annotations

import copy

import pytest

import engine
from services.referee import judge as J
from services.referee import machine as M

from .drive import Drive


def _explore(drive: Drive, memo: dict[str, frozenset[str]], stats: dict[str, int]) -> frozenset[str]:
    """Results of every game from ``drive`` (at the person's turn or game over)."""
    state = drive.state
    if state.phase == M.GAME_OVER:
        return frozenset({state.result})
    assert state.phase == M.WAITING_FOR_PERSON, (state.phase, state.message)
    assert M.game_state(state).lamp
    key = state.board
    if key in memo:
        return memo[key]
    results: set[str] = set()
    for square in J.squares_where(state.board, J.EMPTY):
        branch = copy.copy(drive)
        branch.person_move(square)
        stats["person_moves"] += 1
        if branch.phase == M.MOVE_REQUESTED:
            branch.device_turn()
        results |= _explore(branch, memo, stats)
    memo[key] = frozenset(results)
    return memo[key]


@pytest.mark.parametrize("seed", [0, 11])
@pytest.mark.parametrize("first", range(1, 10))
def test_task4_never_loses_and_punishes_every_mistaken_first_reply(first: int, seed: int) -> None:
    drive = Drive(M.Settings(required_peers=(), seed=seed))
    drive.task(4, first=first)
    assert drive.phase == M.MOVE_REQUESTED
    assert drive.find(M.RequestMove).request.first_square == first
    assert drive.device_turn() == first
    assert drive.state.board == J.put(J.EMPTY_BOARD, first, J.BLACK)
    memo: dict[str, frozenset[str]] = {}
    stats = {"person_moves": 0}
    assert _explore(drive, memo, stats) <= {M.DEVICE_WON, M.DRAW}
    mistakes = 0
    for reply in J.squares_where(drive.state.board, J.EMPTY):
        branch = copy.copy(drive)
        branch.person_move(reply)
        after = engine.Board(branch.state.board)
        mistaken = engine.solve(after).value == 1  # the device (to move) wins with perfect play
        if branch.phase == M.MOVE_REQUESTED:
            branch.device_turn()
        results = _explore(branch, memo, stats)
        if mistaken:
            mistakes += 1
            assert results == {M.DEVICE_WON}, (first, reply, results)
    # every opening has replies that lose: a corner opening punishes 7 of 8, the centre 4 (the edges)
    assert mistakes >= 4


@pytest.mark.parametrize("task", [5, 6])
@pytest.mark.parametrize("seed", [0, 11])
def test_device_as_white_never_loses(task: int, seed: int) -> None:
    drive = Drive(M.Settings(required_peers=(), seed=seed))
    drive.task(task)
    assert drive.phase == M.WAITING_FOR_PERSON
    assert drive.public.device_colour == "white" and drive.public.person_colour == "black"
    memo: dict[str, frozenset[str]] = {}
    stats = {"person_moves": 0}
    results = _explore(drive, memo, stats)
    assert M.PERSON_WON not in results
    assert M.DRAW in results and M.DEVICE_WON in results  # the tree really was explored
    # every board at the person's turn that the device can reach was judged at most once
    assert len(memo) > 50
