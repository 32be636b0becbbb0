"""The board value type: text forms, rules, validation and errors, on 3 x 3 and other shapes."""

from __future__ import annotations

import copy
import pickle

import pytest

import engine
from engine import (
    Board,
    GameOverError,
    IllegalMoveError,
    InvalidBoardError,
    Outcome,
    geometry,
    is_terminal,
    legal_moves,
    outcome,
    play,
    square_from_number,
    square_number,
    to_move,
    utility,
    winner,
)
from engine.board import iter_boards


def test_empty_board_and_text_forms() -> None:
    board = Board()
    assert str(board) == "........."
    assert repr(board) == "Board('.........')"
    assert board == Board.from_string(".........") == Board.empty()
    assert board.to_move() == "X" and board.pieces == 0
    assert board.legal_moves() == tuple(range(9))


def test_repr_is_valid_python_for_any_shape() -> None:
    for board in (Board("X...O...."), Board.empty(4, 5, 4).play(7)):
        assert eval(repr(board), {"Board": Board}) == board


def test_from_string_accepts_lower_case_and_separators() -> None:
    assert Board.from_string("x../.o./...") == Board("X...O....")
    assert Board.from_string("X . .\n. O .\n. . .") == Board("X...O....")


def test_squares_run_row_by_row_and_people_count_from_one() -> None:
    board = Board().play(4)
    assert board.piece_at(4) == "X" and str(board) == "....X...."
    assert square_number(0) == 1 and square_number(4) == 5 and square_from_number(9) == 8
    for bad in (0, 10, -1, "5", 5.0, True):
        with pytest.raises(IllegalMoveError):
            square_from_number(bad)  # type: ignore[arg-type]


def test_play_returns_a_new_board_and_leaves_the_old_one_unchanged() -> None:
    before = Board("X...O....")
    after = before.play(8)
    assert str(before) == "X...O...." and str(after) == "X...O...X"
    assert after.to_move() == "O"
    assert play(before, 8) == after


@pytest.mark.parametrize("square", [-1, 9, 100, "1", 1.0, None, True])
def test_play_off_the_board_or_not_an_integer_raises(square: object) -> None:
    with pytest.raises(IllegalMoveError, match="square"):
        Board().play(square)  # type: ignore[arg-type]


def test_play_on_an_occupied_square_raises_and_says_by_whom() -> None:
    with pytest.raises(IllegalMoveError, match=r"square 4 \(number 5\) is taken by O"):
        Board("X...O....").play(4)


def test_play_after_the_end_raises_game_over() -> None:
    won = Board("XXX.OO...")
    with pytest.raises(GameOverError, match="over"):
        won.play(3)
    assert isinstance(GameOverError("x"), IllegalMoveError)
    assert won.legal_moves() == () and legal_moves(won) == ()


def test_winner_terminal_and_outcome() -> None:
    assert winner(Board("XXX.OO...")) == "X"
    assert Board("XX.OOO.X.").winner() == "O"
    draw = Board("XOXXOOOXX")
    assert draw.winner() is None and is_terminal(draw) and draw.is_full()
    assert outcome(draw) == Outcome(None) and draw.outcome().is_draw  # type: ignore[union-attr]
    assert draw.outcome().result() == "1/2-1/2"  # type: ignore[union-attr]
    won = Board("XXX.OO...").outcome()
    assert won == Outcome("X", ((0, 1, 2),)) and won.result() == "1-0"
    double = Board("XXXOXOXOO").outcome()  # X's last move completed two lines at once
    assert double is not None and double.winner == "X" and len(double.lines) == 2
    assert Board("X...O....").outcome() is None and not is_terminal(Board("X...O...."))
    assert to_move(Board("X...O....")) == "X"
    assert [utility(Board(t)) for t in ("XXX.OO...", "XX.OOO.X.", "XOXXOOOXX", "X...O....")] == [1, -1, 0, 0]
    assert [o.value for o in (won, Board("XX.OOO.X.").outcome(), draw.outcome())] == [1, -1, 0]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("XX.......", "X has 2 pieces and O has 0"),
        ("O........", "X has 0 pieces and O has 1"),
        ("XXXOOO...", "both X and O have a line"),
        ("XXXOO.O..", "O has moved since"),
        ("OOOXX.X.X", "X has moved since"),
        ("XXX...XXXOO.OO.OO."[:9], "X has 6 pieces"),
    ],
)
def test_impossible_positions_are_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(InvalidBoardError, match=reason):
        Board(text)
    unchecked = Board.from_string(text, validate=False)
    assert not unchecked.is_valid() and reason in (unchecked.problem() or "")


def test_two_separate_winning_lines_cannot_be_made_by_one_move() -> None:
    # X: top row and bottom row (6 pieces) would need two winning moves.
    board = Board.from_string("XXXOOOXXX", validate=False)
    assert not board.is_valid()
    two_lines = Board.from_string("XXX.O.XXX", rows=3, cols=3, k=3, validate=False)
    assert "share no square" in (two_lines.problem() or "") or "pieces" in (two_lines.problem() or "")


@pytest.mark.parametrize(
    ("text", "message"),
    [("X...O...", "has 8 squares"), ("X...O.....", "has 10 squares"), ("X...Q....", "bad character 'Q'")],
)
def test_bad_text_is_refused_with_a_clear_message(text: str, message: str) -> None:
    with pytest.raises(InvalidBoardError, match=message):
        Board.from_string(text, validate=False)


def test_non_string_text_is_refused() -> None:
    with pytest.raises(InvalidBoardError, match="must be a str"):
        Board(123)  # type: ignore[arg-type]


def test_validity_rule_counts_exactly_the_reachable_positions() -> None:
    valid = {str(b) for b in iter_boards() if b.is_valid()}
    assert valid == {str(b) for b in engine.reachable_positions()}


def test_boards_are_hashable_values_and_survive_copy_and_pickle() -> None:
    a, b = Board("X...O...."), Board().play(0).play(4)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Board(".X..O....")
    assert copy.deepcopy(a) is a and pickle.loads(pickle.dumps(a)) == a
    assert a != "X...O...."
    assert Board.empty(3, 4, 3) != Board.empty(4, 3, 3)


def test_from_masks_checks_overlap_and_range() -> None:
    assert Board.from_masks(0b1, 0b10000) == Board("X...O....")
    for x, o in ((1, 1), (1 << 9, 0), (-1, 0)):
        with pytest.raises(InvalidBoardError):
            Board.from_masks(x, o)


def test_pretty_shows_numbers_on_empty_squares() -> None:
    text = Board("X...O....").pretty()
    assert text.splitlines() == [" X | 2 | 3", "---+---+---", " 4 | O | 6", "---+---+---", " 7 | 8 | 9"]
    assert "2" not in Board("X...O....").pretty(numbers=False)
    wide = Board.empty(4, 4, 3).pretty()
    assert "16" in wide and wide.splitlines()[0] == "  1 |  2 |  3 |  4"


def test_geometry_of_other_shapes() -> None:
    assert len(geometry(3, 3, 3).lines) == 8
    assert geometry(3, 3, 3).square_weight == (3, 2, 3, 2, 4, 2, 3, 2, 3)
    assert geometry() is geometry(3, 3, 3) is Board().geometry
    assert len(geometry(4, 4, 4).lines) == 10
    assert len(geometry(15, 15, 5).lines) == 2 * 15 * 11 + 2 * 11 * 11 == 572  # gomoku
    assert len(geometry(3, 4, 3).lines) == 3 * 2 + 4 + 2 * 2
    with pytest.raises(InvalidBoardError, match="k must be"):
        geometry(3, 3, 4)
    with pytest.raises(InvalidBoardError, match="squares a side"):
        geometry(0, 3, 1)
    with pytest.raises(InvalidBoardError, match="must be an integer"):
        geometry(3, 3, 2.5)  # type: ignore[arg-type]


def test_gomoku_board_plays_and_finds_five_in_a_row() -> None:
    board = Board.empty(15, 15, 5)
    for x_square, o_square in zip(range(0, 4), range(15, 19), strict=True):
        board = board.play(x_square + 15 * 7).play(o_square + 15 * 10)
    assert board.winner() is None and not board.is_terminal()
    board = board.play(4 + 15 * 7)
    assert board.winner() == "X" and board.outcome().lines == (tuple(range(105, 110)),)  # type: ignore[union-attr]
    assert len(str(board)) == 225 and board.is_valid()
