"""A body far off the plate whose edge a small board's blur spreads over three rings is a piece
(:func:`.pieces._level_edge`, ``STRONG_BODY_K``): the first look can miss it where a full board's
shadows in the squares' corners swell its threshold, and the faint look's two-ring edge is too short for
it. A faint body still needs its edge within two rings: a lamp's sheen fades slowly.
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector.pieces import STRONG_BODY_K, _level_edge

from .tuning_frames import read_tuning_square

#: a piece's face 60 grey levels off the plate, falling to it over three rings (no two-ring fall is 0.7
#: of it), then the plate.
FACE = [60.0] * 8 + [40.0, 20.0, 0.0]
LO, HI = 3, 11


def _profile(face: list[float], plate_rings: int = 3) -> tuple[np.ndarray, np.ndarray]:
    profile = np.array([*face, *([0.0] * plate_rings)])
    return profile, np.full(profile.size, 50)


def test_a_strong_body_may_fall_over_three_rings() -> None:
    profile, counts = _profile(FACE)
    threshold = 60.0 / STRONG_BODY_K - 1.0
    assert _level_edge(profile, counts, 60.0, threshold, LO, HI)
    assert _level_edge(-profile, counts, -60.0, threshold, LO, HI)  # a black piece the same


def test_a_faint_body_must_fall_within_two_rings() -> None:
    profile, counts = _profile(FACE)
    assert not _level_edge(profile, counts, 60.0, 60.0 / STRONG_BODY_K + 1.0, LO, HI)


def test_a_strong_body_that_fades_is_still_no_piece() -> None:
    """Light that fades across the square falls by no more over three rings than it varies on its face."""
    profile, counts = _profile([60.0, 58.0, 55.0, 50.0, 45.0, 40.0, 35.0, 30.0, 25.0, 20.0, 15.0])
    assert not _level_edge(profile, counts, 60.0, 5.0, LO, HI)


#: (generator, seed, index, square) of tuning frames whose white piece, large, on a small board, read
#: bare: a wood plate whose corners the black pieces' shadows reach (its piece 64 grey levels lighter
#: than the plate), a pastel plate, a wood one.
MISSED = (
    ("heldout", 3, 22, 5),
    ("contest_table", 2, 217, 0),
    ("contest_table", 3, 39, 7),
)


@pytest.mark.parametrize(("generator", "seed", "index", "square"), MISSED)
def test_a_large_white_piece_on_a_small_board_is_read(
    generator: str, seed: int, index: int, square: int
) -> None:
    reading, truth, board = read_tuning_square(generator, seed, index, square)
    assert truth == "O"
    assert reading.state == "white", board
