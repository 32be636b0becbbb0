"""A line sample is seen against the grid's typical contrast for the light where it lies
(:func:`services.vision.detector.search.read_at_pose`).

Under a light gradient (2:1 across the board is one of issue 11's conditions) a line in the dim part
has half the grey contrast of one in the bright part, though it is as plain to see; taken against the
grid's typical contrast in grey, it was "not seen", and enough such samples flag a clear board as
occluded, so the device waits on a board it reads right. Both contrasts are now shares of the light
there (the brighter of the line and the board beside it). A hand or a sheet over a line still hides
it: nothing line-like is there at any light (tests/vision/test_occlusion.py).
"""

from __future__ import annotations

import pytest

from services.vision.detector import detect
from tests.vision.contest_table.generator import render
from tests.vision.flat.generator import make_frame

from .test_sweep import truth_as_read

#: (generator, seed, index) of tuning frames whose clear boards, read right, were flagged occluded for
#: the lines in the dim part of a gradient or shadow.
DIM_LINES = (("contest_table", 1, 26), ("contest_table", 1, 80), ("flat", 3, 176), ("flat", 3, 286))


@pytest.mark.parametrize(("generator", "seed", "index"), DIM_LINES)
def test_a_clear_board_with_dim_lines_is_not_occluded(generator: str, seed: int, index: int) -> None:
    sample = render(seed, index)[0] if generator == "contest_table" else make_frame(index, seed)
    assert not sample.occluded
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
    assert not det.occluded
