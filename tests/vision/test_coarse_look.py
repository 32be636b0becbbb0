"""White pieces a few grey levels off a white plate under a camera's noise are read at a coarser scale.

Pixel by pixel, such a piece's body differs from the plate by less than the plate's noise allows, so
the faint look sees patches, not a body. Averaged over its neighbours (a Gaussian 0.03 pitch wide), the
body stands out of the plate and its edge shows. Only a light body clearly off the plate is taken at
that scale: a dark middle, or an outline alone, is as likely the glow of light lines there (on the
augmented real photos, taking them read black pieces on the dark board's empty squares).
"""

from __future__ import annotations

from services.vision.detector import detect
from tests.vision.contest_table.generator import render
from tests.vision.flat.generator import make_frame

from .test_sweep import truth_as_read


def test_large_white_pieces_on_a_white_plate_with_jpeg_noise() -> None:
    """flat frame 241 (seed 1, a tuning set): two of its white pieces read empty."""
    sample = make_frame(241, 1)
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
    # seen this faintly, never a certain reading
    assert min(s.confidence for s in det.squares if s.state == "white") < 1.0


def test_white_pieces_on_a_noisy_green_contest_plate() -> None:
    """contest_table frame 170 (seed 1, a tuning set): two white pieces read empty. (One bare square
    stays unknown, as before: not wrong.)"""
    sample, _info = render(1, 170)
    det = detect(sample.image)
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    assert [a == b or a == "?" for a, b in zip(det.board, truth, strict=True)] == [True] * 9
    assert det.board.count("?") <= 1
