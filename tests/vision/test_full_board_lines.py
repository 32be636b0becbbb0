"""A full board whose outer lines have large pieces of their own tone along them is found, and on the
right grid.

The grid check (lines._verify_grid) measures each line's ridge as the median of its cross profiles
along its length. On a full board of large black pieces on a blue plate with thin dark lines
(contest_table seed 1 #146, the contest's look), the outer line beside a row of black pieces is hidden
along most of its length, its median ridge is none, the window did not look like a grid, and the board
was not found. The line shows in the gaps between the pieces: its ridge is now also taken there
(lines._gap_strength). The plate's strips between large pieces then make an offset grid that looks
like one too, so between two of the comb's grids seen as well the clearer wins (flat seed 1 #86, read
right before and after).
"""

from __future__ import annotations

from services.vision import detector as D
from tests.vision.contest_table.generator import render
from tests.vision.flat.generator import make_frame

from .test_sweep import truth_as_read


def test_a_full_board_on_a_blue_plate_with_thin_dark_lines_is_found() -> None:
    sample, _info = render(1, 146)
    det = D.detect(sample.image)
    assert det.found
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)


def test_the_clearer_of_two_grids_seen_as_well_wins() -> None:
    sample = make_frame(86, 1)
    det = D.detect(sample.image)
    assert det.found
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
