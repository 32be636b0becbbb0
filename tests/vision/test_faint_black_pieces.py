"""Black pieces on a plate nearly as dark as themselves, under light lines: a faint dark body is a piece
when its edge is round, a glossy piece's highlight does not break its face, and a highlight alone (a
blob too small for a piece) does not keep the body from being looked at.

The rule it replaces read every faint dark middle as the plate between the glows of thick light lines,
so a black piece a few grey levels darker than a dark plate read empty (with confidence 0.85). The glow
is darkest in the middle and brightens towards the square's lines, which are farther along the
diagonals than across: its edge is not a circle. Frames from the flat renderer (tests/vision/flat, a
tuning set).
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector import detect
from services.vision.detector.pieces import _dark_rim, _level_edge, _round_edge, _square_masks
from tests.vision.flat.generator import make_frame

from .test_sweep import truth_as_read

#: a square of 64 canonical pixels with thin lines, as the detector reads one.
GEO = _square_masks(64, 22, 0.03, 0.05)
RADIUS = 0.36


def _piece(edge: float = RADIUS) -> tuple[np.ndarray, float, np.ndarray, float]:
    return np.zeros(GEO.dx.size, bool), 1.0, np.zeros(2), edge


def _black_disc(depth: float = 10.0) -> np.ndarray:
    """Each pixel's grey minus the plate's: a disc ``depth`` levels darker than the plate."""
    return np.where(np.hypot(GEO.dx, GEO.dy) <= RADIUS, -depth, 0.0)


def test_a_dark_disc_has_a_round_edge() -> None:
    assert _round_edge(_black_disc(), GEO, _piece())


def test_a_glossy_black_pieces_highlight_is_not_its_edge() -> None:
    dev = _black_disc()
    dev[np.hypot(GEO.dx, GEO.dy - 0.2) <= 0.05] = 40.0  # the lamp's highlight, off the middle
    assert _round_edge(dev, GEO, _piece())


def test_the_glow_of_light_lines_has_no_round_edge() -> None:
    """The plate darkest in the middle, brighter near the lines (light lines' bloom): its level rises
    with the distance to the nearest line, which is not a circle."""
    to_line = 0.5 - np.maximum(np.abs(GEO.dx), np.abs(GEO.dy))
    dev = -10.0 * (1.0 - np.exp(-to_line / 0.1))
    assert not _round_edge(dev, GEO, _piece())


def test_a_disc_whose_edge_never_meets_the_plate_is_not_round() -> None:
    """Darker all the way to the lines (a shadow over the square): the plate never comes back."""
    dev = np.full(GEO.dx.size, -10.0)
    assert not _round_edge(dev, GEO, _piece())


def _rimmed_black_disc_with_a_shadow() -> np.ndarray:
    """A black piece 3 levels darker than the plate, its rim 7 darker, and a soft shadow 4 levels deep
    reaching 0.12 pitch beyond it on one side (the lamp's): its half-way edge is no circle, its rim is."""
    r = np.hypot(GEO.dx, GEO.dy)
    dev = np.where(r <= RADIUS, -3.0, 0.0)
    dev[(r > RADIUS - 0.04) & (r <= RADIUS)] = -7.0
    toward_shadow = (GEO.dx > 0.1) & (r > RADIUS) & (r <= RADIUS + 0.12)
    dev[toward_shadow] = -4.0
    return dev


def test_a_rim_round_where_the_shadow_leaves_the_edge_uneven() -> None:
    dev = _rimmed_black_disc_with_a_shadow()
    assert not _round_edge(dev, GEO, _piece())
    assert _dark_rim(dev, GEO, _piece(), 1.0)


def test_the_glow_of_light_lines_has_no_dark_rim() -> None:
    to_line = 0.5 - np.maximum(np.abs(GEO.dx), np.abs(GEO.dy))
    dev = -10.0 * (1.0 - np.exp(-to_line / 0.1))
    assert not _dark_rim(dev, GEO, _piece(), 1.0)


def test_a_rim_lighter_than_the_face_is_no_dark_rim() -> None:
    """A light ring round a dark face (light lines' glow reaching round a dark middle) is not a black
    piece's rim: only a ring darker than the face counts."""
    r = np.hypot(GEO.dx, GEO.dy)
    dev = np.where(r <= RADIUS, -6.0, 0.0)
    dev[(r > RADIUS - 0.04) & (r <= RADIUS)] = -1.0
    assert not _dark_rim(dev, GEO, _piece(), 1.0)


def _profile(face: list[float], plate_rings: int = 3) -> tuple[np.ndarray, np.ndarray]:
    profile = np.array([*face, *([0.0] * plate_rings)])
    return profile, np.full(profile.size, 50)


def test_a_rim_darker_than_the_face_keeps_it_level() -> None:
    """A black piece's rim lies farther from the plate than its middle: its face is level all the same."""
    profile, counts = _profile([-6.0] * 7 + [-9.0, -9.0])
    assert _level_edge(profile, counts, -6.0, 2.0, 3, 10)


def test_an_edge_no_steeper_than_the_plate_s_texture_is_no_edge() -> None:
    """A middle 4 levels lighter than the corners, falling by 3 at its edge, where the plate's texture
    is 2.1: light on the plate, not a piece."""
    profile, counts = _profile([4.0] * 9 + [2.5, 1.0])
    assert _level_edge(profile, counts, 4.0, 1.0, 3, 12)
    assert not _level_edge(profile, counts, 4.0, 2.1, 3, 12)


def test_a_face_that_fades_towards_the_plate_is_not_level() -> None:
    profile, counts = _profile([-6.0, -6.0, -5.0, -4.0, -3.0, -2.5, -2.0, -1.5, -1.0])
    assert not _level_edge(profile, counts, -6.0, 2.0, 3, 10)


#: (seed, index) of flat frames whose black pieces on a dark plate under light lines read empty: glossy
#: pieces whose highlights broke their faces, and matte ones whose faint middles were taken for glow;
#: and glossy ones of which only the highlight differed at the board's variation, a blob too small for
#: a piece, so that the faint look never looked at their bodies (2, 54), (2, 133), (2, 207), (3, 118).
#: And black pieces whose soft shadow on one side left their half-way edge uneven while their darker rim
#: is a circle (see pieces._dark_rim): (1, 238), (1, 271), (3, 54).
BLACK_ON_DARK = (
    (2, 17),
    (3, 73),
    (2, 54),
    (2, 133),
    (2, 207),
    (3, 118),
    (1, 238),
    (1, 271),
    (3, 54),
)


@pytest.mark.parametrize(("seed", "index"), BLACK_ON_DARK)
def test_black_pieces_on_a_dark_plate_are_read(seed: int, index: int) -> None:
    sample = make_frame(index, seed)
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
    # a piece seen this faintly is never a certain reading
    assert max(s.confidence for s in det.squares if s.state == "black") < 1.0
