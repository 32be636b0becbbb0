"""Mid-tone pieces told by the board's other pieces (:func:`_mid_tones_by_the_board`).

A piece half way between the grid's dark and light tones is unknown on its own (a steel coin looks like
that). Black foam on a green plate under a lamp sits there too, with the white pieces far above it:
when the pieces on its side of the scale's middle are one tight group and every other piece is far
beyond, they are of that side's colour. Nothing is ever turned to the other side's colour.
"""

from __future__ import annotations

import pytest

from services.vision import detector as D
from services.vision.detector import squares
from tests.vision.contest_table.generator import render

from .test_sweep import truth_as_read

#: contest_table frames (a tuning set) whose black foam on a green plate read mid-tone, unknown.
FOAM_ON_GREEN = (60, 68, 140, 222)

Reading = tuple[str, float, float, float, str, float]


def _board(tones: dict[int, float]) -> list[Reading]:
    """Readings as _read_squares gives them: a piece of each given tone (mid-tone ones flagged as it
    flags them), the other squares empty."""
    out: list[Reading] = []
    for k in range(9):
        if k not in tones:
            out.append(("empty", 1.0, 0.0, 1.0, "", 120.0))
            continue
        tone = tones[k]
        problem = "mid-tone" if abs(tone - 0.5) < squares.MID_TONE else ""
        out.append(("black" if tone < 0.5 else "white", 1.0, 1.0, tone, problem, 120.0))
    return out


def _states(readings: list[Reading]) -> list[tuple[str, str]]:
    return [(r[0], r[4]) for r in readings]


def test_black_foam_near_the_middle_with_white_pieces_far_above_is_black() -> None:
    got = squares._mid_tones_by_the_board(_board({0: 0.41, 2: 0.37, 4: 0.44, 1: 2.6, 3: 2.4}))
    assert [got[k][:1] + got[k][4:5] for k in (0, 2, 4)] == [("black", "")] * 3
    assert all(got[k][1] <= squares.BOARD_TONE_CONFIDENCE for k in (0, 2, 4))
    assert got[1][0] == got[3][0] == "white"


def test_white_pieces_in_a_shadow_with_black_pieces_far_below_are_white() -> None:
    got = squares._mid_tones_by_the_board(_board({0: 0.58, 1: 0.62, 5: -0.4}))
    assert [got[k][:1] + got[k][4:5] for k in (0, 1)] == [("white", "")] * 2


def test_a_lone_mid_tone_body_stays_unknown() -> None:
    board = _board({4: 0.45})
    assert squares._mid_tones_by_the_board(board) == board


def test_a_mid_tone_body_beside_clean_black_pieces_stays_unknown() -> None:
    """A steel coin among black pieces: its side's group is not tight."""
    board = _board({0: 0.05, 1: 0.1, 4: 0.45, 8: 1.8})
    assert squares._mid_tones_by_the_board(board) == board


def test_pieces_too_close_to_the_other_side_stay_unknown() -> None:
    board = _board({0: 0.4, 1: 0.42, 8: 0.9})  # the gap is under TONE_GROUP_GAP
    assert squares._mid_tones_by_the_board(board) == board


def test_a_white_piece_in_a_shadow_is_never_made_black_by_whiter_ones() -> None:
    """Below the middle only: a mid-tone white (0.55) beside whites at 1.6 is not of the dark side."""
    got = squares._mid_tones_by_the_board(_board({0: 0.55, 1: 1.6, 2: 1.7}))
    assert got[0][0] == "white"


def test_foreign_squares_and_empty_ones_are_left_alone() -> None:
    board = _board({0: 0.41, 1: 2.6})
    board[2] = ("white", 1.0, 1.0, 0.45, "coloured", 120.0)
    got = squares._mid_tones_by_the_board(board)
    assert got[2] == board[2] and got[5] == board[5]
    assert _states(got)[0] == ("black", "")


@pytest.mark.parametrize("index", FOAM_ON_GREEN)
def test_black_foam_on_green_plates_is_read(index: int) -> None:
    sample, _info = render(1, index)
    det = D.detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
