"""A grid found in grey whose lines then show nowhere when its squares are read (occlusion 1.0) was
something else straight and periodic: a lined sheet beside a red board whose thin dark lines differ
from the plate in colour more than in grey. The grid is then searched for in each pixel's brightest
channel (search._in_the_brightest). Before, these heldout frames (a tuning set) read a board of
phantom white pieces on the sheet, or nothing at all."""

from __future__ import annotations

import pytest

from services.vision import detector as D
from tests.vision.heldout.generator import make_frame

from .test_sweep import truth_as_read


@pytest.mark.parametrize(("seed", "index"), [(3, 56), (4, 80), (2, 155)])
def test_the_board_is_found_in_the_brightest_channel(seed: int, index: int) -> None:
    sample = make_frame(index, seed)
    det = D.detect(sample.image)
    assert det.found and not det.occluded
    assert det.extra.get("brightest") == 1.0
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
