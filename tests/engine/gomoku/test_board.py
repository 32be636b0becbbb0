"""The gomoku board against the general board model, and its error messages."""

from __future__ import annotations

import pytest

from engine.board import Board
from engine.gomoku.board import GomokuBoard
from engine.gomoku.rules import BLACK, WHITE, GomokuError, Rule, rule_from_bits


def test_round_trip_with_the_general_board() -> None:
    general = Board.empty(15, 15, 5)
    for square in (112, 113, 97, 128, 98):
        general = general.play(square)
    board = GomokuBoard.from_board(general)
    assert board.to_move == WHITE and board.cells[112] == BLACK and board.cells[113] == WHITE
    assert board.to_board() == general
    with pytest.raises(GomokuError, match="k = 3"):
        GomokuBoard.from_board(Board())


def test_bad_moves_and_sizes_are_clear_errors() -> None:
    board = GomokuBoard(15)
    board.play(0)
    with pytest.raises(GomokuError, match="0,0 is taken"):
        board.play(0)
    with pytest.raises(GomokuError, match="not on the board"):
        board.play(225)
    with pytest.raises(GomokuError, match="off the 15 x 15 board"):
        board.index(15, 0)
    with pytest.raises(GomokuError, match=r"5\.\.32"):
        GomokuBoard(4)
    board.undo()
    with pytest.raises(GomokuError, match="no stone to take back"):
        board.undo()
    with pytest.raises(GomokuError, match="bad character"):
        GomokuBoard.from_text("XO?..\n" + ".....\n" * 4)


def test_rule_bits_follow_the_protocol() -> None:
    assert rule_from_bits(0) is Rule.FREESTYLE and rule_from_bits(2) is Rule.FREESTYLE
    assert rule_from_bits(1) is Rule.STANDARD and rule_from_bits(3) is Rule.STANDARD
    with pytest.raises(GomokuError, match="renju"):
        rule_from_bits(4)


def test_copy_keeps_stones_order_and_side() -> None:
    board = GomokuBoard.from_moves([(7, 7), (8, 8), (9, 9)])
    twin = board.copy()
    assert (str(twin), twin.hash, twin.counts, twin.history, twin.to_move) == (
        str(board),
        board.hash,
        board.counts,
        board.history,
        board.to_move,
    )
    twin.play(0)
    assert board.cells[0] == 0
