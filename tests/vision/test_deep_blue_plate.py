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


def _plate(b: float, g: float, r: float) -> tuple[float, list[float]]:
    return 0.114 * b + 0.587 * g + 0.299 * r, [b - g, r - g]


def test_one_board_is_read_on_one_scale() -> None:
    """A blue board (B 200, G 60, R 40) whose two squares' corners the blur of large white pieces paled
    (B 200, G 110, R 100: spread 0.5 of the brightest) is saturated in all nine squares; a grey board
    with two bluish squares in none."""
    blue = [_plate(200, 60, 40)] * 7 + [_plate(200, 110, 100)] * 2
    grey = [_plate(150, 140, 140)] * 7 + [_plate(200, 60, 40)] * 2
    for squares, saturated in ((blue, True), (grey, False)):
        plate_grey = np.array([g for g, _ in squares])
        opponent = np.array([o for _, o in squares])
        by_light, _light = _saturated_plate(plate_grey - 30.0, plate_grey, opponent, dark_lines=True)
        assert by_light.tolist() == [saturated] * 9


def test_white_pieces_on_a_blue_contest_board_are_alike() -> None:
    """contest_table seed 2 frame 42 (a tuning set): four large white pieces on a blue board under a
    gradient; two were read on the grey scale (tone 3.7), two on the brightest channel's (1.5), and
    those two were flagged odd."""
    sample, _info = render(2, 42)
    det = D.detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
