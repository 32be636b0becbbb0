"""A white piece on a white plate whose shadow reaches into a corner of its square is not too large
for a piece when a rim rings it (``squares.RIM_RESCUES``): a circle darker than its middle, or the
shadow's arc on a circle (:func:`.pieces._rim_pieces`). A sheet's or a palm's edge is no circle: the
occluded frames of the tuning sets stay flagged (tests/vision/test_occlusion*.py, the sweeps)."""

from __future__ import annotations

import pytest

from .tuning_frames import read_tuning_frame

#: (generator, seed, index, square) of tuning frames whose piece read unknown, "too-large", before.
TOO_LARGE_BEFORE = (
    ("flat", 1, 88, 5),
    ("flat", 2, 191, 0),
    ("flat", 3, 69, 3),
    ("contest_table", 2, 275, 3),
)


@pytest.mark.parametrize(("generator", "seed", "index", "square"), TOO_LARGE_BEFORE)
def test_a_ringed_piece_whose_shadow_reaches_a_corner_is_read(
    generator: str, seed: int, index: int, square: int
) -> None:
    det, truth = read_tuning_frame(generator, seed, index)
    assert truth[square] != "."
    reading = det.squares[square]
    assert reading.state == {"O": "white", "X": "black"}[truth[square]], det.board
    assert not det.occluded, det.board
