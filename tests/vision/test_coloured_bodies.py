"""A clearly coloured body (brass, copper, skin) is no piece, unless it is the plate's own colour
showing through; that colour is judged relative to each one's brightness.

Before, the opponent colours (B-G, R-G) were compared in grey levels: a copper coin's middle, dark
and strongly orange, stood as far from a warm white plate's (bright and faintly orange) as half its own
colour, and was taken for the plate showing; the coin read as a black piece (flat frame 8, seed 1, a
tuning set). Relative to their brightness, the coin is three times as coloured as the plate.
"""

from __future__ import annotations

import numpy as np

from services.vision.detector import detect
from services.vision.detector.pieces import _coloured
from tests.vision.flat.generator import make_frame

from .test_plate_colour import _grey_and_opponent

#: enough middle pixels to judge a body by.
PIXELS = 100


def test_a_copper_coin_on_a_warm_white_plate_is_coloured() -> None:
    grey, opponent = _grey_and_opponent(np.array([190.0, 215.0, 245.0]))
    assert _coloured(np.array([31.0, 74.0, 124.0]), PIXELS, opponent, grey)


def test_darker_wood_grain_is_the_plates_own_colour() -> None:
    """The grain of a wood plate: darker, the same hue and about the same saturation."""
    grey, opponent = _grey_and_opponent(np.array([60.0, 110.0, 170.0]))
    assert not _coloured(np.array([40.0, 75.0, 120.0]), PIXELS, opponent, grey)


def test_a_warm_white_piece_is_not_coloured() -> None:
    grey, opponent = _grey_and_opponent(np.array([200.0, 210.0, 225.0]))
    assert not _coloured(np.array([175.0, 200.0, 235.0]), PIXELS, opponent, grey)


def test_a_brass_coin_on_a_grey_plate_is_coloured() -> None:
    grey, opponent = _grey_and_opponent(np.array([150.0, 150.0, 150.0]))
    assert _coloured(np.array([70.0, 140.0, 195.0]), PIXELS, opponent, grey)


def test_a_coin_on_a_warm_white_board_is_not_read_as_a_piece() -> None:
    """flat frame 8 (seed 1): a copper coin in an empty square of a white plate under warm light."""
    sample = make_frame(8, 1)
    assert sample.occluded
    det = detect(sample.image)
    assert det.occluded or "?" in det.board
