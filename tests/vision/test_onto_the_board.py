"""A window of the grid found one square off the board is moved onto it
(:func:`.search._onto_the_board`).

Large pieces dent the cells beside them, and a strip of table or of paper with supply pieces on it can
make up the rest of a 3x3 lattice: the grid is then found a square off, one outer row or column lying on
the table (covered all along: its corners off the board's surface, no lines there). Read a square the
other way, the board is whole. A hand over one side of a board is not moved onto the table.
"""

from __future__ import annotations

import pytest

from services.vision.detector import detect
from tests.vision.contest_table.generator import Sample as ContestSample
from tests.vision.contest_table.generator import render
from tests.vision.heldout.generator import Sample as HeldoutSample
from tests.vision.heldout.generator import make_frame as heldout_frame

from .test_sweep import truth_as_read

#: tuning frames found a square off before: (generator, seed, index).
A_SQUARE_OFF = (
    ("contest_table", 4, 176),  # a blue board's column of large black pieces; supply on paper beside it
    ("contest_table", 3, 129),  # a red board on a blue cloth, one row of the cloth taken in
    ("heldout", 1, 25),  # a small wood board, a row of the white table above it taken in
)


def _frame(generator: str, seed: int, index: int) -> ContestSample | HeldoutSample:
    return render(seed, index)[0] if generator == "contest_table" else heldout_frame(index, seed)


@pytest.mark.parametrize(("generator", "seed", "index"), A_SQUARE_OFF)
def test_a_window_a_square_off_is_moved_onto_the_board(generator: str, seed: int, index: int) -> None:
    sample = _frame(generator, seed, index)
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
    assert det.pose is not None
    centre = det.pose.center_px
    offset = ((centre.x - sample.centre_px[0]) ** 2 + (centre.y - sample.centre_px[1]) ** 2) ** 0.5
    assert offset < 0.2 * sample.pitch_px


def test_a_hand_over_one_side_stays_covered() -> None:
    """heldout #289 of seed 2: an empty white board, a hand over one side. Moved a square, the window
    would read pieces on the table beyond the board."""
    sample = heldout_frame(289, 2)
    assert sample.occluded
    det = detect(sample.image)
    assert det.occluded
    assert all(state in ("empty", "unknown") for state in (sq.state for sq in det.squares))
