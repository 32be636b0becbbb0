"""A pen lying across a piece of the other tone is not a piece: the piece's middle holds two bodies, one
far above the plate and one far below it.

Before, a white pen across a black piece on a blue plate made the square's middle half white, and it
read as a white piece with confidence 1.0 on a frame that should have been flagged.
"""

from __future__ import annotations

import numpy as np

from services.vision.detector import detect
from services.vision.detector.squares import _two_tone
from tests.vision.flat.generator import make_frame

from .test_sweep import truth_as_read

FAR = 30.0


def test_a_white_stripe_across_a_black_body_is_two_tone() -> None:
    middle = np.concatenate([np.full(60, -70.0), np.full(40, 90.0)])
    assert _two_tone(middle, FAR)


def test_a_glossy_black_pieces_highlight_is_one_tone() -> None:
    middle = np.concatenate([np.full(92, -70.0), np.full(8, 120.0)])
    assert not _two_tone(middle, FAR)


def test_a_white_face_with_a_dark_rim_nearer_than_far_is_one_tone() -> None:
    middle = np.concatenate([np.full(75, 40.0), np.full(25, -20.0)])
    assert not _two_tone(middle, FAR)


def test_a_pen_across_a_black_piece_flags_the_frame() -> None:
    """flat frame 147 (seed 3, a tuning set): a white pen across a black piece and two white ones."""
    sample = make_frame(147, 3)
    assert sample.occluded
    det = detect(sample.image)
    assert det.occluded
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    # every square right or unknown, never a piece it is not
    assert all(a in (b, "?") for a, b in zip(det.board, truth, strict=True))
    assert det.board.count("?") >= 1
