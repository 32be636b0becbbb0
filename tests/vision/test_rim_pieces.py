"""A piece seen by its rim alone, and a round body beside a neighbour's shadow.

A black piece a few grey levels lighter than a near-black plate, or a white piece as light as a white
plate, differs from the plate nowhere but in its rim: a circle darker than its face all round. The
squares' last look (pieces._rim_piece) reads it there; the glow of light lines, the blur of dark lines
and bare board's texture make no such circle. And a large piece's body reaching the square's lines is
judged round on its largest connected part (pieces._round): the shadow or blur of a neighbouring piece
in one corner is not its outline.

Frames from the flat renderer (tests/vision/flat, a tuning set) that read a piece empty, or a large
white piece "too-large" and then empty, before these rules.
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector import detect
from services.vision.detector.pieces import _rim_piece, _round, _square_masks
from tests.vision.flat.generator import make_frame
from tests.vision.heldout.generator import make_frame as make_heldout_frame

from .test_sweep import truth_as_read

#: a square of 40 canonical pixels with light lines 0.04 pitch wide, as the detector reads one.
GEO = _square_masks(40, 14, 0.04, 0.05)
RADIUS = 0.36
TEXTURE = 2.0  # the plate's texture, grey levels (one sigma)
THRESHOLD = 3.0  # the rim look's threshold for that texture (see squares.RIM_THRESHOLD_SHARE)


def _rimmed_disc(
    face: float, rim: float = -6.0, at: tuple[float, float] = (0.0, 0.0), radius: float = RADIUS
) -> np.ndarray:
    """Each pixel's grey minus the plate's: a disc of ``radius`` ``face`` levels off the plate, its
    outermost 0.05 pitch ``rim`` levels off it, with the plate's texture (seeded)."""
    rng = np.random.default_rng(7)
    r = np.hypot(GEO.dx - at[0], GEO.dy - at[1])
    dev = np.where(r <= radius, face, 0.0)
    dev[(r > radius - 0.05) & (r <= radius)] = rim
    return dev + rng.normal(0.0, TEXTURE, dev.shape)


@pytest.mark.parametrize("face", [4.0, 0.0, -2.0])
def test_a_rim_darker_than_the_face_all_round_is_a_piece(face: float) -> None:
    piece = _rim_piece(_rimmed_disc(face), GEO, THRESHOLD, dark_lines=False)
    assert piece is not None
    disc, evidence, centre, edge = piece
    assert abs(edge - (RADIUS - 0.025)) < 0.05
    assert np.hypot(*centre) < 0.03
    assert disc.sum() > 0 and evidence > 0.5


def test_an_off_centre_rim_places_the_piece() -> None:
    piece = _rim_piece(_rimmed_disc(3.0, at=(0.05, -0.04)), GEO, THRESHOLD, dark_lines=False)
    assert piece is not None
    assert np.hypot(piece[2][0] - 0.05, piece[2][1] + 0.04) < 0.04


def test_a_rim_far_off_centre_is_found_around_its_rough_circle() -> None:
    """A rim 0.37 pitch round, 0.08 off the square's centre: sector by sector around the square's centre
    it lies on a circle only roughly (missing it by more than OUTLINE_CIRCLE_RESIDUAL); around that
    rough circle's centre, closely."""
    piece = _rim_piece(_rimmed_disc(3.0, at=(0.08, 0.0), radius=0.37), GEO, THRESHOLD, dark_lines=True)
    assert piece is not None
    assert np.hypot(piece[2][0] - 0.08, piece[2][1]) < 0.04


def test_a_rim_missing_on_its_lit_side_is_found_on_six_sectors() -> None:
    """A black piece's rim on a plate nearly as dark: its lit side (a quarter of the circle, here the
    upper left) shows no rim. The other six sectors lie on a circle clear of the lines."""
    dev = _rimmed_disc(-2.0, rim=-9.0, radius=0.36)
    lit = (GEO.dx < 0) & (GEO.dy < 0) & (np.hypot(GEO.dx, GEO.dy) > 0.28)
    dev[lit] = np.random.default_rng(5).normal(-2.0, TEXTURE, int(lit.sum()))
    piece = _rim_piece(dev, GEO, THRESHOLD, dark_lines=False)
    assert piece is not None
    assert abs(piece[3] - (0.36 - 0.025)) < 0.05


def test_a_dark_band_along_the_lines_is_no_rim_on_six_sectors() -> None:
    """A bare square darker in a band just inside its light lines (the band's corners further out than
    its sides): leaving two sectors out must not make it a circle; it lies in the outermost rings."""
    to_line = 0.5 - np.maximum(np.abs(GEO.dx), np.abs(GEO.dy))
    dev = np.where(to_line < 0.1, -6.0, 0.0) + np.random.default_rng(9).normal(0.0, 1.0, GEO.dx.size)
    assert _rim_piece(dev, GEO, 1.2, dark_lines=False) is None


def test_bare_board_has_no_rim() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        assert _rim_piece(rng.normal(0.0, TEXTURE, GEO.dx.size), GEO, THRESHOLD, dark_lines=False) is None


def test_the_glow_of_light_lines_is_no_rim() -> None:
    """Darkest in the middle, lighter towards the lines: nothing darker than the middle round it."""
    to_line = 0.5 - np.maximum(np.abs(GEO.dx), np.abs(GEO.dy))
    dev = -10.0 * (1.0 - np.exp(-to_line / 0.1))
    assert _rim_piece(dev, GEO, THRESHOLD, dark_lines=False) is None


def test_the_blur_of_dark_lines_is_no_rim() -> None:
    """Darker towards the lines all round the square's inside: with dark lines, a rim must come back to
    the plate before the lines."""
    to_line = 0.5 - np.maximum(np.abs(GEO.dx), np.abs(GEO.dy))
    dev = -20.0 * np.exp(-to_line / 0.03)
    assert _rim_piece(dev, GEO, THRESHOLD, dark_lines=True) is None


def test_a_round_body_with_a_neighbours_shadow_in_a_corner_is_round() -> None:
    r = np.hypot(GEO.dx, GEO.dy)
    body = r <= 0.43
    corner = (GEO.dx > 0.38) & (GEO.dy > 0.38)  # apart from the body: another piece's shadow
    assert not (body & corner).any()
    assert _round(body | corner, GEO, np.zeros(2))


def test_a_sheet_filling_the_square_is_not_round() -> None:
    sheet = (GEO.dx > -0.2) | (GEO.dy > -0.2)  # a sheet over all but one corner
    assert not _round(sheet, GEO, np.zeros(2))


#: (seed, index) of flat frames with pieces seen by their rims alone: black pieces a few levels off a
#: near-black plate under light lines (1, 245), (2, 285), (3, 243), (3, 281); white pieces on a white
#: plate (2, 266), (2, 273).
RIM_ONLY = ((1, 245), (2, 285), (3, 243), (3, 281), (2, 266), (2, 273))
#: ...and of flat frames whose pieces' rims lie far enough off their squares' centres that the rim look
#: found them only around a rough circle's centre.
RIM_OFF_CENTRE = ((1, 103), (6, 187))
#: ...and of flat frames whose black pieces on a near-black plate show a rim on six sectors of eight.
RIM_ON_SIX_SECTORS = ((2, 217), (5, 151), (6, 49))

#: (seed, index) of flat frames whose large white pieces read "too-large" (and then empty or unknown):
#: a neighbour's shadow in a corner joined their bodies.
BESIDE_A_SHADOW = ((1, 206), (1, 253), (2, 119), (2, 204), (3, 13))


@pytest.mark.parametrize(("seed", "index"), RIM_ONLY + RIM_OFF_CENTRE + RIM_ON_SIX_SECTORS + BESIDE_A_SHADOW)
def test_frames_are_read(seed: int, index: int) -> None:
    sample = make_frame(index, seed)
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)


#: (set, seed, index) of tuning frames whose large white pieces on a white plate differed from it by
#: their rim and a crescent of shadow alone: "elongated" (a pen, a finger), and then unknown, or empty
#: where the ring just inside the lines, which such a piece covers, saw nothing. The rim round each is
#: a piece.
ELONGATED_BY_A_SHADOW = (("flat", 6, 224), ("heldout", 2, 12), ("heldout", 2, 101), ("heldout", 2, 253))


@pytest.mark.parametrize(("family", "seed", "index"), ELONGATED_BY_A_SHADOW)
def test_a_piece_elongated_by_its_shadow_is_read_by_its_rim(family: str, seed: int, index: int) -> None:
    module = make_frame if family == "flat" else make_heldout_frame
    sample = module(index, seed)
    det = detect(sample.image)
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)
