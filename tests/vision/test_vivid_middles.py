"""A square whose light middle is more saturated than a black or a white piece can be is no piece
(:func:`.squares._vivid`): the plate in another light (:func:`.squares._the_plate_lit`), when it has
the plate's hue (a spotlight's
disc on a green board lights a bare square brighter than its corners, which in grey is a faint white
piece), or something coloured otherwise (unknown).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from services.vision.detector import detect
from services.vision.detector.geometry import _Canon
from services.vision.detector.pieces import _square_masks
from services.vision.detector.squares import _the_plate_lit, _vivid
from tests.vision.contest_table.generator import render
from tests.vision.flat.generator import make_frame as flat_frame
from tests.vision.heldout.generator import make_frame as heldout_frame

from .test_sweep import truth_as_read

PX, MARGIN, HALF_WIDTH = 40, 14, 0.05
GREEN = (30.0, 130.0, 45.0)  # B, G, R: a contest board's plate


def _canon(beyond: tuple[float, float, float]) -> _Canon:
    """A canonical view whose plate beyond the grid is ``beyond``."""
    size = 3 * PX + 2 * MARGIN
    colour = np.empty((size, size, 3), np.float32)
    colour[:] = beyond
    return _Canon(img=cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), px=PX, margin=MARGIN, colour=colour)


def _read_nine(
    middles: list[tuple[float, float, float]],
    plate: tuple[float, float, float],
    beyond: tuple[float, float, float] = GREEN,
) -> tuple[list[bool], list[bool]]:
    """_vivid and _the_plate_lit of nine squares of one colour each on a plate of ``plate`` (every
    square's)."""
    geo = _square_masks(PX, MARGIN, HALF_WIDTH, 0.06)
    colour_px = np.empty((9, geo.pixels.shape[1], 3), np.float32)
    for k, colour in enumerate(middles):
        colour_px[k] = colour
    middle_mask = np.ones((9, geo.core.size), bool)
    b, g, r = plate
    grey = np.full(9, 0.114 * b + 0.587 * g + 0.299 * r)
    opponent = np.tile([b - g, r - g], (9, 1))
    taken: dict[int, np.ndarray] = {}
    vivid = [_vivid(k, taken, colour_px, geo, middle_mask) for k in range(9)]
    canon = _canon(beyond)
    lit = [v and _the_plate_lit(taken[k], canon, HALF_WIDTH, grey, opponent) for k, v in enumerate(vivid)]
    return vivid, lit


def test_the_plate_lit_brighter_or_dimmer_is_the_plate() -> None:
    lit_square = tuple(1.4 * c for c in GREEN)
    dim_square = tuple(0.6 * c for c in GREEN)
    vivid, lit = _read_nine([GREEN, lit_square, dim_square, *[GREEN] * 6], GREEN)
    assert vivid[:3] == [True, True, True]
    assert lit[:3] == [True, True, True]


def test_a_coloured_thing_is_vivid_and_not_the_plate() -> None:
    """A red cap, a copper coin and a blue sticker on a green board."""
    things = [(40.0, 40.0, 200.0), (50.0, 110.0, 190.0), (200.0, 90.0, 40.0)]
    vivid, lit = _read_nine([*things, *[GREEN] * 6], GREEN)
    assert vivid[:3] == [True, True, True]
    assert lit[:3] == [False, False, False]


def test_black_and_white_pieces_are_not_vivid() -> None:
    """White pieces under a warm or a cool light, black foam, a grey coin."""
    pieces = [(215.0, 230.0, 245.0), (245.0, 230.0, 215.0), (28.0, 25.0, 30.0), (120.0, 125.0, 130.0)]
    vivid, lit = _read_nine([*pieces, *[GREEN] * 5], GREEN)
    assert vivid[:4] == [False] * 4
    assert lit[:4] == [False] * 4


def test_the_plate_beyond_the_grid_speaks_for_a_full_board() -> None:
    """The squares' plates took the large pieces' levels (a dull grey-green); beyond the grid the plate
    is green."""
    lit_square = tuple(1.3 * c for c in GREEN)
    vivid, lit = _read_nine([lit_square, *[GREEN] * 8], (60.0, 80.0, 62.0), beyond=GREEN)
    assert vivid[0] and lit[0]
    vivid, lit = _read_nine([lit_square, *[GREEN] * 8], (60.0, 80.0, 62.0), beyond=(200.0, 200.0, 200.0))
    assert vivid[0] and not lit[0]


#: tuning frames whose squares read a phantom white piece before (generator, seed, index, squares):
#: a spotlit bare square of a green board on a full board of large black pieces (now unknown: coloured,
#: its plate beyond is lit otherwise), and bare squares of wood plates lit brighter in their middles.
PHANTOMS = (
    ("contest_table", 1, 69, (0, 2)),
    ("flat", 4, 250, (0, 3)),
    ("heldout", 3, 71, (0, 4)),
)


@pytest.mark.parametrize(("generator", "seed", "index", "squares"), PHANTOMS)
def test_a_lit_bare_square_is_no_white_piece(
    generator: str, seed: int, index: int, squares: tuple[int, ...]
) -> None:
    if generator == "contest_table":
        sample = render(seed, index)[0]
    else:
        sample = (flat_frame if generator == "flat" else heldout_frame)(index, seed)
    det = detect(sample.image)
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    for square in squares:
        assert truth[square] == "."
        assert det.squares[square].state in ("empty", "unknown"), (square, det.board)
