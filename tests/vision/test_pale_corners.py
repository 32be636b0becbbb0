"""A bare square on a contest plate, its corners paled by the large pieces around it, is bare
(:func:`squares._chroma_weighed`).

The board's surface is fitted to every square's corners; on a saturated plate (the contest's blue and
green) the blur of large black and white pieces pales the corners beside them, and a bare square's
own corners then differ in colour from that surface by a fifth of the plate's colour. That alone
flagged the square as covered (a sheet) and the board was never stable. A sheet or a hand on a
coloured plate is off by all of the plate's colour, and is still flagged.
"""

from __future__ import annotations

import numpy as np

from services.vision import detector as D
from services.vision.detector import squares
from services.vision.detector.model import FOREIGN_BACKGROUND_FRAC
from tests.vision.contest_table.generator import render

from .test_sweep import truth_as_read

SCALE = 23.0  # the grid's contrast in the brightest channel
THRESHOLD = FOREIGN_BACKGROUND_FRAC * SCALE


def _corners(chroma: tuple[float, float], n: int = 36) -> np.ndarray:
    """Corner medians (grey, blue-green, red-green) of a plate of that colour."""
    return np.tile(np.array([[120.0, *chroma]]), (n, 1))


def _flagged(own: np.ndarray, vals: np.ndarray) -> np.ndarray:
    return np.hypot.reduce(squares._chroma_weighed(own, vals, SCALE), axis=1) > THRESHOLD


def test_corners_paled_by_a_fifth_of_a_blue_plates_colour_are_not_a_sheet() -> None:
    vals = _corners((65.5, -18.5))  # a blue plate: chroma 68
    own = np.zeros((9, 3))
    own[5] = (-0.6, 12.4, -7.0)  # 14 off in colour: over the grid's contrast, a fifth of the plate's
    assert not _flagged(own, vals).any()


def test_a_white_sheet_on_a_blue_plate_is_still_flagged() -> None:
    vals = _corners((65.5, -18.5))
    own = np.zeros((9, 3))
    own[5] = (30.0, -60.0, 17.0)  # white paper: the plate's colour gone
    assert _flagged(own, vals).tolist() == [k == 5 for k in range(9)]


def test_on_a_grey_plate_colour_counts_in_full() -> None:
    vals = _corners((1.0, -1.0))
    own = np.zeros((9, 3))
    own[2] = (0.0, 12.4, -7.0)  # the same 14 off, on a plate with no colour of its own: not the plate
    assert _flagged(own, vals)[2]
    assert np.array_equal(squares._chroma_weighed(own, vals, SCALE), own)


def test_grey_alone_is_left_as_it_is() -> None:
    own = np.arange(9.0)[:, None]
    assert squares._chroma_weighed(own, _corners((65.5, -18.5))[:, :1], SCALE) is own


def test_the_contest_frame_with_a_paled_bare_square_is_read() -> None:
    """contest_table set 1, frame 110: a blue plate, seven large pieces; its bare square 6 read unknown
    (covered) and the board never stable."""
    sample, _info = render(1, 110)
    det = D.detect(sample.image)
    assert not det.occluded
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
