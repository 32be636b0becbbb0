"""A piece of the plate's own tone is read by its outline, when the outline is a circle.

A white piece on a white plate (or a black one on a black plate) differs from the plate only at its rim
and its shadow. Large pieces' shadows reach the square's lines, so what differs fills the square out to
its outermost ring and such pieces were dropped as too large, or their outline was too faint on the
whole to count; they read empty, some with confidence 1.0. Now the ring farthest off the face in each
of eight sectors is found, and when a circle passes through all eight, that circle is the piece. Wood
grain, stains and the glow of the lines peak at scattered radii or along the square's sides.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from services.vision.detector import detect
from services.vision.detector.pieces import _circular_outline, _square_masks
from tests.vision.flat.generator import make_frame
from tests.vision.heldout.generator import make_frame as heldout_frame

from .test_sweep import truth_as_read

#: a square of 64 canonical pixels with thin lines, as the detector reads one.
GEO = _square_masks(64, 22, 0.03, 0.05)
THRESHOLD = 3.0


def _rim(radius: float, centre: tuple[float, float] = (0.0, 0.0), depth: float = 8.0) -> np.ndarray:
    """Each pixel's grey minus the plate's: a piece of the plate's own tone whose rim, 0.04 pitch wide
    at ``radius``, is ``depth`` levels darker."""
    rr = np.hypot(GEO.dx - centre[0], GEO.dy - centre[1])
    return np.where(np.abs(rr - radius) <= 0.02, -depth, 0.0)


def test_a_rim_all_round_is_a_circle_of_its_radius() -> None:
    circle = _circular_outline(_rim(0.36), GEO, np.zeros(2), 0.0, THRESHOLD)
    assert circle is not None
    centre, radius = circle
    assert math.hypot(*centre) < 0.02
    assert abs(radius - 0.36) < 0.02


def test_an_off_centre_rim_gives_its_own_centre() -> None:
    """The centroid of what differs is off the piece's centre (a shadow on one side); the circle is not."""
    circle = _circular_outline(_rim(0.34, (0.05, -0.03)), GEO, np.zeros(2), 0.0, THRESHOLD)
    assert circle is not None
    centre, radius = circle
    assert math.hypot(centre[0] - 0.05, centre[1] + 0.03) < 0.03
    assert abs(radius - 0.34) < 0.02


def test_a_rim_fainter_than_half_a_threshold_somewhere_is_not_an_outline() -> None:
    dev = _rim(0.36)
    dev[GEO.dx > 0.2] = 0.0  # the rim missing on one side
    assert _circular_outline(dev, GEO, np.zeros(2), 0.0, THRESHOLD) is None


def test_the_lines_glow_along_the_sides_is_not_a_circle() -> None:
    """Darker towards the dark lines (their blur), darkest where two meet: farther along the diagonals."""
    to_line = 0.5 - np.maximum(np.abs(GEO.dx), np.abs(GEO.dy))
    dev = -10.0 * np.exp(-to_line / 0.05)
    assert _circular_outline(dev, GEO, np.zeros(2), 0.0, THRESHOLD) is None


def test_wood_grain_is_not_a_circle() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        period = rng.uniform(0.08, 0.3)
        angle = rng.uniform(0.0, math.pi)
        along = GEO.dx * math.cos(angle) + GEO.dy * math.sin(angle)
        dev = 8.0 * np.sin(2 * math.pi * along / period + rng.uniform(0.0, 2 * math.pi))
        dev += rng.normal(0.0, 1.0, dev.shape)
        assert _circular_outline(dev, GEO, np.zeros(2), 0.0, THRESHOLD) is None


#: (seed, index) of flat frames, and heldout frames (seed 1), whose pieces of the plate's own tone read
#: empty: large white pieces on white and pastel plates, black ones on dark plates.
FLAT_OUTLINES = ((1, 275), (3, 195))
HELDOUT_OUTLINES = (221, 240)


@pytest.mark.parametrize(("seed", "index"), FLAT_OUTLINES)
def test_pieces_of_the_plates_tone_are_read_flat(seed: int, index: int) -> None:
    sample = make_frame(index, seed)
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)


@pytest.mark.parametrize("index", HELDOUT_OUTLINES)
def test_pieces_of_the_plates_tone_are_read_heldout(index: int) -> None:
    sample = heldout_frame(index, 1)
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
