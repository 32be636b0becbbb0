"""A body whose middle is the plate's own colour and tone, on a clearly coloured plate, is the plate
showing through (the grain of a wood plate), not a piece.

Before, the grain of a wood plate differed from the plate's surface just enough, in some squares, to
look like a faint body at the plate's own tone: the corners' reading called it a white piece, the
ring's reading saw nothing, and the square read white with confidence 0.75 (18 such phantoms over the
five tuning runs, 15 of them on wood). A white piece on wood is far less saturated than the wood.
"""

from __future__ import annotations

import numpy as np

from services.vision.detector import detect
from services.vision.detector.pieces import _plate_shows
from tests.vision.flat.generator import make_frame

from .test_sweep import truth_as_read
from .tuning_frames import read_tuning_frame

#: an orange wood plate in B, G, R.
WOOD = np.array([60.0, 120.0, 170.0])


def _grey_and_opponent(bgr: np.ndarray) -> tuple[float, np.ndarray]:
    grey = 0.114 * bgr[0] + 0.587 * bgr[1] + 0.299 * bgr[2]
    return float(grey), np.array([bgr[0] - bgr[1], bgr[2] - bgr[1]])


def test_a_middle_in_the_woods_own_colour_is_the_plate() -> None:
    grey, opponent = _grey_and_opponent(WOOD)
    grain = WOOD + np.array([4.0, 6.0, 8.0])
    assert _plate_shows(grain, 0.1, grey, opponent)


def test_a_white_piece_on_wood_is_not_the_plate() -> None:
    grey, opponent = _grey_and_opponent(WOOD)
    assert not _plate_shows(np.array([200.0, 205.0, 215.0]), 0.1, grey, opponent)


def test_a_middle_off_the_plates_grey_is_not_the_plate() -> None:
    """A cross on a coloured plate: its middle is half plate, but its grey stands off the plate's."""
    grey, opponent = _grey_and_opponent(WOOD)
    assert not _plate_shows(WOOD.copy(), 0.5, grey, opponent)


def test_a_white_plate_under_warm_light_is_not_coloured_enough() -> None:
    """A warm light tints a white plate and a white piece on it alike: no colour tells them apart."""
    warm_white = np.array([170.0, 200.0, 235.0])
    grey, opponent = _grey_and_opponent(warm_white)
    assert not _plate_shows(warm_white.copy(), 0.0, grey, opponent)


def test_an_empty_wood_board_reads_empty() -> None:
    """flat frame 193 (seed 3, a tuning set): an empty wood board whose centre square's grain read as a
    white piece."""
    sample = make_frame(193, 3)
    assert not sample.occluded
    det = detect(sample.image)
    assert det.board == "." * 9 == sample.board


def test_white_pieces_on_wood_still_read_white() -> None:
    """flat frame 119 (seed 3): white pieces on a wood plate, whose middles carry some of its colour."""
    sample = make_frame(119, 3)
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
    assert det.board.count("O") >= 4


#: a dim green contest board in B, G, R: its green at 80, under the floor a piece's colour is judged at.
DIM_GREEN = np.array([35.0, 80.0, 40.0])


def test_a_middle_in_a_dim_green_board_s_own_colour_is_the_plate() -> None:
    """A dim coloured plate is clearly coloured: the green board's own colour in a square's middle is the
    plate, not a faint white piece (contest_table 2/156's bare square read white at 0.85 before)."""
    grey, opponent = _grey_and_opponent(DIM_GREEN)
    assert _plate_shows(DIM_GREEN + np.array([3.0, 6.0, 3.0]), 0.1, grey, opponent)


def test_a_phantom_white_piece_on_a_dim_green_board_is_gone() -> None:
    det, truth = read_tuning_frame("contest_table", 2, 156)
    assert truth[8] == "."
    assert det.squares[8].state == "empty", det.board
