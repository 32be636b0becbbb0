"""A large faint piece whose rim and shadow reach its square's lines ends where its body does
(:func:`.pieces._body_edge`).

A white piece 0.42 of the pitch in radius on a shaded white plate is some 25 grey levels above the
plate, under the grid's threshold, so the faint look finds it; but its darker rim and soft shadow differ
from the plate too, the other way, out to the square's lines, and a body that reaches the lines was
no piece. Its edge is where its own level falls, before the rim. (Only for a body off the plate away
from the lines' tone: on the real photos' dark board, the plate between the glows of light lines is a
light body that reaches them, and read as black pieces so.)
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision import detector as D
from services.vision.detector import pieces
from tests.vision.flat.generator import make_frame

from .test_sweep import truth_as_read

LO = int(pieces.PIECE_MIN_RADIUS / pieces.RING_STEP)


def _profile(body: float, edge: float, rim: float) -> tuple[np.ndarray, np.ndarray]:
    """A radial profile of RING_STEP rings out to 0.5: the body's level to ``edge``, then a rim of
    ``rim`` (the other way) to the lines."""
    radii = (np.arange(13) + 0.5) * pieces.RING_STEP
    profile = np.where(radii < edge, body, rim)
    return profile, np.full(profile.size, 40)


def test_a_light_body_ends_before_its_dark_rim() -> None:
    profile, counts = _profile(27.0, 0.42, -12.0)
    edge = pieces._body_edge(profile, counts, 27.0, LO)
    assert 0.38 <= edge <= 0.44


def test_a_dark_body_ends_before_its_light_glow() -> None:
    profile, counts = _profile(-30.0, 0.34, 8.0)
    assert 0.30 <= pieces._body_edge(profile, counts, -30.0, LO) <= 0.36


def test_a_body_that_fills_the_square_has_no_edge() -> None:
    profile, counts = _profile(27.0, 0.6, -12.0)
    assert pieces._body_edge(profile, counts, 27.0, LO) == pieces.PIECE_MAX_EDGE


def test_rings_without_pixels_are_passed_over() -> None:
    profile, counts = _profile(27.0, 0.42, -12.0)
    counts[10] = 0  # the first ring of the rim (0.40-0.44)
    profile[10] = 0.0
    assert pieces._body_edge(profile, counts, 27.0, LO) == pytest.approx(11 * pieces.RING_STEP)


def test_large_white_pieces_whose_rims_reach_the_lines_are_read() -> None:
    """flat seed 1 #114 (a tuning set): large white pieces on a shaded white plate; one read empty."""
    sample = make_frame(114, 1)
    det = D.detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
