"""A white piece on a white plate seen by the shadow on one side of it: a crescent.

Under a light from one side, a white piece as light as its white plate differs from it only by the
shadow it casts on the far side, an arc as long as the piece is wide; its lit side lies in the blur of
the dark lines, so no rim shows all round it (pieces._rim_pieces wants six sectors of eight). Before,
such a square read "elongated" (a pen, a finger) or barely a piece, and then empty or unknown: heldout
frame 103 of seed 2 (a tuning set) read three of its four white pieces empty. Now the arc on four
sectors, each clearly darker than the middle and clear of the lines, on one circle of a piece's size,
is a piece; and a square that barely shows a piece is whole when its rim or its arc does.
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector import detect
from services.vision.detector.pieces import _rim_piece
from tests.vision.heldout.generator import make_frame

# (the square, piece size, texture and rim threshold of the rim look's own tests)
from .test_rim_pieces import GEO, RADIUS, TEXTURE, THRESHOLD
from .test_sweep import truth_as_read


def _plate(seed: int = 11) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, TEXTURE, GEO.dx.size)


def _crescent(
    radius: float = RADIUS, at: tuple[float, float] = (0.0, 0.0), depth: float = -25.0
) -> np.ndarray:
    """A piece of the plate's tone whose shadow falls below and to the right of it: just outside its
    edge, ``depth`` levels, over the half of the circle facing away from the light."""
    ex, ey = GEO.dx - at[0], GEO.dy - at[1]
    r = np.hypot(ex, ey)
    away = (ex + ey) / np.maximum(r, 1e-9) > 0.0  # the half facing down and right
    shadow = (r > radius) & (r <= radius + 0.05) & away
    return _plate() + np.where(shadow, depth, 0.0)


def test_a_shadow_on_one_side_is_a_piece() -> None:
    piece = _rim_piece(_crescent(), GEO, THRESHOLD, dark_lines=True)
    assert piece is not None
    _disc, _evidence, centre, edge = piece
    assert np.hypot(*centre) < 0.04
    assert abs(edge - (RADIUS + 0.025)) < 0.05


def test_an_off_centre_crescent_places_the_piece() -> None:
    piece = _rim_piece(_crescent(0.33, at=(-0.05, 0.04)), GEO, THRESHOLD, dark_lines=True)
    assert piece is not None
    assert np.hypot(piece[2][0] + 0.05, piece[2][1] - 0.04) < 0.05


def test_a_faint_arc_is_no_piece() -> None:
    """Each sector of the arc must stand out by CRESCENT_K thresholds: a faint one is the plate's grain."""
    assert _rim_piece(_crescent(depth=-4.0), GEO, THRESHOLD, dark_lines=True) is None


def test_dark_patches_scattered_round_a_circle_are_no_crescent() -> None:
    """Four patches a piece's radius out, in every other sector (the blur of the lines near the square's
    corners, shadows of the pieces beside it): on a circle, but no one arc."""
    r = np.hypot(GEO.dx, GEO.dy)
    sector = ((np.arctan2(GEO.dy, GEO.dx) + np.pi) / (2 * np.pi) * 8).astype(int) % 8
    patches = (r > RADIUS) & (r <= RADIUS + 0.05) & (sector % 2 == 0)
    assert _rim_piece(_plate() + np.where(patches, -25.0, 0.0), GEO, THRESHOLD, dark_lines=True) is None


def test_a_pens_straight_edge_is_no_crescent() -> None:
    """A dark straight band across the square (a pen's shadow): its sectors peak on a line, no circle."""
    band = (GEO.dx + GEO.dy > 0.35) & (GEO.dx + GEO.dy < 0.45)
    assert _rim_piece(_plate() + np.where(band, -25.0, 0.0), GEO, THRESHOLD, dark_lines=True) is None


def test_the_blur_of_dark_lines_on_two_sides_is_no_crescent() -> None:
    """Darker towards two of the square's lines: what stands out lies at the lines."""
    to_right = 0.5 - GEO.dx
    to_bottom = 0.5 - GEO.dy
    dev = _plate() - 25.0 * np.exp(-np.minimum(to_right, to_bottom) / 0.03)
    assert _rim_piece(dev, GEO, THRESHOLD, dark_lines=True) is None


@pytest.mark.parametrize("seed", range(20))
def test_bare_board_has_no_crescent(seed: int) -> None:
    assert _rim_piece(_plate(seed), GEO, THRESHOLD, dark_lines=True) is None


#: (seed, index) of heldout frames (a tuning set) with white pieces on a white or paper plate seen by a
#: crescent of shadow, or barely seen, that read empty or unknown before. The last two read bare until
#: the arc was judged on average (2/91: two white pieces; 1/124: a black piece on a dark plate under a
#: point light, its shadow fading along its arc).
CRESCENT_FRAMES = ((2, 103), (2, 50), (2, 92), (3, 144), (4, 107), (2, 91), (1, 124))


@pytest.mark.parametrize(("seed", "index"), CRESCENT_FRAMES)
def test_frames_with_crescents_are_read(seed: int, index: int) -> None:
    sample = make_frame(index, seed)
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)


def _fading_crescent(depth: float) -> np.ndarray:
    """A crescent deepest straight away from the light and fading towards both ends of its arc (as the
    shadow of a piece lit from one side does): ``depth`` levels times the cosine of the angle off that
    direction, over the half of the circle facing away from the light."""
    r = np.hypot(GEO.dx, GEO.dy)
    facing = (GEO.dx + GEO.dy) / np.maximum(r, 1e-9) / np.sqrt(2.0)
    shadow = (r > RADIUS) & (r <= RADIUS + 0.05) & (facing > 0.0)
    return _plate() + np.where(shadow, depth * facing, 0.0)


def test_a_crescent_fading_at_its_ends_is_a_piece() -> None:
    """The arc's end sectors stand out less than CRESCENT_K thresholds, its middle ones well over: on
    average the arc does, and each sector at least CRESCENT_MIN_K. (Before, every sector had to reach
    CRESCENT_K: heldout 2/91's white pieces on a white plate read bare.)"""
    piece = _rim_piece(_fading_crescent(-25.0), GEO, THRESHOLD, dark_lines=True)
    assert piece is not None
    assert np.hypot(*piece[2]) < 0.06


def test_a_faint_fading_crescent_is_no_piece() -> None:
    assert _rim_piece(_fading_crescent(-9.0), GEO, THRESHOLD, dark_lines=True) is None
