"""Pieces re-read where the grid's scale is too short for them (:func:`_scale_of_the_pieces`).

A piece's colour is its middle's tone on the scale the grid gives around its square: 0 at the darker
of lines and plate, 1 at the lighter. Faint engraved lines put the dark end near a white plate, so a
white piece a little darker than that plate sits below the middle and reads black, while the black
pieces lie three scales below it; a blue plate, dark in grey, puts the light end low, so a black piece
a little darker than the plate reads white beside white pieces four scales above. Two or more pieces
far beyond one end, and all the others one tight group inside the scale, show it: that group is of the
other colour. Spread tones of one colour (a spotlight on some pieces) change nothing.
"""

from __future__ import annotations

import pytest

from services.vision import detector as D
from services.vision.detector import squares
from tests.vision.contest_table.generator import render
from tests.vision.flat.generator import make_frame
from tests.vision.heldout.generator import make_frame as make_heldout_frame

from .test_board_tones import Reading, _board
from .test_sweep import truth_as_read

F0 = 0.3  # the evidence a piece needs (DetectorParams.piece_min_fill)


def _colours(readings: list[Reading]) -> str:
    return "".join({"black": "X", "white": "O", "empty": "."}[r[0]] if not r[4] else "?" for r in readings)


def test_white_pieces_read_black_beside_black_pieces_far_below_faint_lines_are_white() -> None:
    board = _board({0: 0.19, 2: -3.46, 4: 0.29, 6: 0.28, 7: -3.18, 8: -3.34})
    got = squares._scale_of_the_pieces(board, F0)
    assert _colours(got) == "O.X.O.OXX"
    assert all(got[k][1] <= squares.RESCALED_CONFIDENCE for k in (0, 4, 6))
    assert [got[k] for k in (2, 7, 8)] == [board[k] for k in (2, 7, 8)]  # the black pieces stand


def test_black_pieces_read_white_beside_white_pieces_far_above_a_dark_plate_are_black() -> None:
    board = _board({0: 3.96, 3: 0.79, 4: 0.72, 5: 3.86, 6: 4.78, 7: 0.70, 8: 4.08})
    assert _colours(squares._scale_of_the_pieces(board, F0)) == "O..XXOOXO"


def test_mid_tone_bodies_of_such_a_group_take_its_colour() -> None:
    board = _board({0: 3.99, 1: 0.43, 2: 3.91, 3: 0.44, 4: 0.52, 5: 0.51, 8: 0.45})
    assert _colours(squares._scale_of_the_pieces(board, F0)) == "OXOXXX..X"


def test_pieces_already_of_that_colour_keep_their_reading() -> None:
    board = _board({1: 3.79, 2: 0.20, 3: 4.32, 6: 0.12})
    assert squares._scale_of_the_pieces(board, F0) == board


def test_one_white_piece_in_a_spotlight_changes_nothing() -> None:
    board = _board({0: 3.21, 2: 1.30, 4: 1.64, 5: 1.27})
    assert squares._scale_of_the_pieces(board, F0) == board


def test_white_pieces_beyond_the_plate_beside_brighter_ones_stay_white() -> None:
    """Whites at 1.2-1.4 lie beyond the plate's end (1): not inside the scale, so not black pieces."""
    board = _board({0: 3.9, 1: 4.1, 2: 1.2, 3: 1.3, 4: 1.4})
    assert squares._scale_of_the_pieces(board, F0) == board


def test_a_group_that_is_not_tight_changes_nothing() -> None:
    """Black pieces at 0.25 and something lighter at 0.6 beside white pieces far above: a coin may be
    among them, and nothing is re-read."""
    board = _board({2: 0.6, 3: 0.25, 4: 4.18, 5: 3.13, 6: 4.14, 7: 0.25, 8: 0.24})
    assert squares._scale_of_the_pieces(board, F0) == board


def test_pieces_beyond_both_ends_change_nothing() -> None:
    board = _board({0: -3.0, 1: -3.2, 2: 0.3, 3: 0.35, 4: 4.0, 5: 4.2})
    assert squares._scale_of_the_pieces(board, F0) == board


def test_foreign_squares_are_left_alone() -> None:
    board = _board({0: -3.0, 1: -3.2, 2: 0.3, 3: 0.31})
    board[3] = ("black", 1.0, 1.0, 0.31, "elongated", 120.0)
    got = squares._scale_of_the_pieces(board, F0)
    assert got[3] == board[3]
    assert got[2][0] == "white"


@pytest.mark.parametrize(
    ("make", "index"),
    [
        (lambda i: make_heldout_frame(i, 1), 187),  # white on a white plate, faint engraved lines
        (lambda i: make_heldout_frame(i, 1), 191),  # black on a grey plate, white pieces far above
        (lambda i: render(1, i)[0], 12),  # black on a blue plate
        (lambda i: make_frame(i, 6), 246),  # black pieces near the middle, whites far above
        (lambda i: make_frame(i, 6), 260),  # white pieces near the middle, blacks far below
    ],
)
def test_tuning_frames_with_a_short_scale_are_read(make: object, index: int) -> None:
    sample = make(index)  # type: ignore[operator]
    det = D.detect(sample.image)
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    # Every square is read right, nothing unknown. (contest_table #12's square 2, black foam as dark as
    # the blue plate in grey, read bare until squares._black_by_colour saw it grey on the blue.)
    assert det.board == truth


def test_one_white_piece_far_above_a_deep_blue_plate_shows_the_black_group() -> None:
    """contest_table seed 3 frame 10 (a tuning set): a deep blue plate whose grey is below its black
    foam pieces' lightness; one white piece stands 3.9 on the grid's scale, three black pieces group at
    0.7 and read white. One piece beyond the scale is as telling as two beside a group of several."""
    sample, _info = render(3, 10)
    det = D.detect(sample.image)
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    assert det.board == truth
    assert truth.count("X") == 3
