"""On a saturated plate with dark lines, pieces are told in each pixel's brightest channel, also where
the plate in grey is as dark as its lines.

A deep blue plate weighs little in grey (blue counts a tenth): in contest_table frame 116 (a tuning set)
its corners read as dark as the black lines, so the test "lines darker than the plate" that chose the
brightest channel failed in the bottom-right square, and its black piece (a few grey levels lighter than
the plate there) read white with confidence 1.0. The grid's polarity says the lines are dark.
"""

from __future__ import annotations

import numpy as np

from services.vision import detector as D
from services.vision.detector.squares import _saturated_plate
from tests.vision.contest_table.generator import render

from .test_sweep import truth_as_read


def test_a_full_board_on_a_deep_blue_plate_reads_right() -> None:
    sample, _info = render(1, 116)
    det = D.detect(sample.image)
    assert det.found
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)


def test_the_polarity_marks_a_saturated_plate_as_dark_lined() -> None:
    # A deep blue plate (B 200, G 25, R 10: grey 40.5) beside lines of grey 42.
    opponent = np.array([[200.0 - 25.0, 10.0 - 25.0]])
    plate_grey = np.array([0.114 * 200 + 0.587 * 25 + 0.299 * 10])
    lines = np.array([42.0])
    assert not _saturated_plate(lines, plate_grey, opponent, dark_lines=False)[0][0]
    by_light, light = _saturated_plate(lines, plate_grey, opponent, dark_lines=True)
    assert by_light[0]
    assert abs(float(light[0]) - 200.0) < 1e-9
