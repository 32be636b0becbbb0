"""The CS50 AI "tictactoe" API: each documented behaviour, exceptions, and the input left unchanged."""

from __future__ import annotations

import copy
import random

import pytest

from engine import Board, IllegalMoveError, InvalidBoardError, reachable_positions, solve
from engine import tictactoe as ttt
from engine.tictactoe import EMPTY, O, X

E = EMPTY


def test_constants_and_initial_state() -> None:
    assert (X, O, EMPTY) == ("X", "O", None)
    board = ttt.initial_state()
    assert board == [[E, E, E], [E, E, E], [E, E, E]]
    board[0][0] = X
    assert ttt.initial_state()[0][0] is EMPTY  # a fresh board each call, rows not shared
    assert ttt.initial_state()[1] is not ttt.initial_state()[2]


def test_player_alternates_starting_with_x() -> None:
    assert ttt.player(ttt.initial_state()) == X
    assert ttt.player([[X, E, E], [E, E, E], [E, E, E]]) == O
    assert ttt.player([[X, O, E], [E, E, E], [E, E, E]]) == X


def test_actions_are_the_empty_cells_as_row_col_tuples() -> None:
    assert ttt.actions(ttt.initial_state()) == {(r, c) for r in range(3) for c in range(3)}
    assert ttt.actions([[X, O, X], [O, X, O], [O, X, E]]) == {(2, 2)}
    assert ttt.actions([[X, O, X], [O, X, O], [O, X, O]]) == set()


def test_result_is_a_new_board_and_the_input_is_unchanged() -> None:
    board = [[X, E, E], [E, O, E], [E, E, E]]
    before = copy.deepcopy(board)
    new = ttt.result(board, (2, 2))
    assert board == before
    assert new == [[X, E, E], [E, O, E], [E, E, X]]
    assert all(new[r] is not board[r] for r in range(3))
    new[0][1] = O
    assert board == before


@pytest.mark.parametrize("action", [(0, 0), (1, 1)])
def test_result_on_an_occupied_cell_raises(action: tuple[int, int]) -> None:
    board = [[X, E, E], [E, O, E], [E, E, E]]
    with pytest.raises(IllegalMoveError, match="taken"):
        ttt.result(board, action)
    assert board == [[X, E, E], [E, O, E], [E, E, E]]


@pytest.mark.parametrize(
    "action", [(-1, 0), (0, -1), (3, 0), (0, 3), (-3, -3), (1,), (1, 2, 3), None, "11", (1.0, 1), (True, 0)]
)
def test_result_out_of_range_or_malformed_action_raises(action: object) -> None:
    with pytest.raises(IllegalMoveError):
        ttt.result(ttt.initial_state(), action)  # type: ignore[arg-type]
    assert issubclass(IllegalMoveError, ValueError)


def test_winner_terminal_utility() -> None:
    x_row = [[X, X, X], [O, O, E], [E, E, E]]
    o_diag = [[O, X, X], [X, O, E], [X, E, O]]
    o_col = [[X, O, X], [E, O, X], [E, O, E]]
    draw = [[X, O, X], [X, O, O], [O, X, X]]
    running = [[X, E, E], [E, O, E], [E, E, E]]
    assert [ttt.winner(b) for b in (x_row, o_diag, o_col, draw, running)] == [X, O, O, None, None]
    assert [ttt.terminal(b) for b in (x_row, o_diag, o_col, draw, running)] == [True, True, True, True, False]
    assert [ttt.utility(b) for b in (x_row, o_diag, o_col, draw)] == [1, -1, -1, 0]


def test_minimax_on_a_terminal_board_is_none() -> None:
    assert ttt.minimax([[X, X, X], [O, O, E], [E, E, E]]) is None
    assert ttt.minimax([[X, O, X], [X, O, O], [O, X, X]]) is None


def test_minimax_wins_now_blocks_and_is_optimal_everywhere() -> None:
    assert ttt.minimax([[X, X, E], [O, O, E], [E, E, E]]) == (0, 2)  # X wins at once
    assert ttt.minimax([[X, X, E], [O, E, E], [E, E, E]]) == (0, 2)  # O must block
    assert ttt.minimax([[O, O, E], [X, X, E], [X, E, E]]) == (0, 2)  # O wins rather than blocks
    for board in reachable_positions():
        if board.is_terminal():
            continue
        lists = ttt.from_board(board)
        row, col = ttt.minimax(lists)  # type: ignore[misc]
        assert 3 * row + col in solve(board).best_moves
        assert lists == ttt.from_board(board)  # unchanged


def test_a_game_of_minimax_against_itself_is_a_draw() -> None:
    board = ttt.initial_state()
    while not ttt.terminal(board):
        board = ttt.result(board, ttt.minimax(board))  # type: ignore[arg-type]
    assert ttt.utility(board) == 0 and ttt.winner(board) is None


def test_minimax_never_loses_to_random_play() -> None:
    rng = random.Random(50)
    for game in range(60):
        ai = X if game % 2 == 0 else O
        board = ttt.initial_state()
        while not ttt.terminal(board):
            if ttt.player(board) == ai:
                board = ttt.result(board, ttt.minimax(board))  # type: ignore[arg-type]
            else:
                board = ttt.result(board, rng.choice(sorted(ttt.actions(board))))
        assert ttt.winner(board) in (ai, None)


@pytest.mark.parametrize(
    "bad",
    [
        [],
        [[E, E, E], [E, E, E]],
        [[E, E], [E, E, E], [E, E, E]],
        [[E, E, E], [E, "Q", E], [E, E, E]],
        "X........",
    ],
)
def test_malformed_boards_are_refused(bad: object) -> None:
    with pytest.raises(InvalidBoardError):
        ttt.player(bad)  # type: ignore[arg-type]


def test_minimax_refuses_an_impossible_running_board() -> None:
    with pytest.raises(InvalidBoardError, match="X has 2 pieces"):
        ttt.minimax([[X, X, E], [E, E, E], [E, E, E]])


def test_conversions_round_trip() -> None:
    board = Board("X...O...X")
    assert ttt.to_board(ttt.from_board(board)) == board
    assert ttt.from_board(board) == [[X, E, E], [E, O, E], [E, E, X]]
    with pytest.raises(InvalidBoardError):
        ttt.from_board(Board.empty(4, 4, 3))
