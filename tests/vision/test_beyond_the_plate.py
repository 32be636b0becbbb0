"""A square whose middle lies far beyond the plate's tone, away from the lines' tone, is not bare.

With light lines on a dark blue plate, large glossy black pieces' blur and shadow reach their squares'
corners, so nothing in the square differs from its own level, while its middle lies more than a grid
contrast below the plate: it read bare at confidence 1.0 (contest_table set 3, frame 185, squares 4
and 7). The glow of light lines darkens a bare square's middle too, by a fraction of a contrast (the
real photos' dark board): only a middle more than ``squares.BEYOND_PLATE_TONE`` beyond the plate is a
piece, read by its tone and never certain.
"""

from __future__ import annotations

from services.vision import detector as D
from services.vision.detector import squares
from tests.vision.contest_table.generator import render

from .test_sweep import truth_as_read


def test_black_pieces_that_took_their_corners_level_on_a_dark_plate_are_read() -> None:
    sample, _info = render(3, 185)
    det = D.detect(sample.image)
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    for k in (3, 6):
        assert truth[k] == "X"
        assert det.board[k] == "X"
        assert det.squares[k].confidence <= squares.DISAGREEMENT_MAX_CONFIDENCE


def test_no_square_of_that_frame_is_read_wrong_with_confidence() -> None:
    sample, _info = render(3, 185)
    det = D.detect(sample.image)
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    for k, (read, true) in enumerate(zip(det.board, truth, strict=True)):
        if read not in ("?", true):
            assert det.squares[k].confidence < 0.9, k
