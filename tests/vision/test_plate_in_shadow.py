"""A coloured plate in the gantry arm's shadow keeps its colour: :func:`services.vision.detector.pieces.
_plate_shows` judges a body's middle the plate's colour in the plate's light, its saturation over a floor
dimmed as much as it is and its colour scaled back up.

Its saturation had been taken over a fixed floor (75 levels), which a dark plate's colour a fifth dimmer
falls under: on a navy board whose black pieces are a few grey levels darker than it, the arm's shadow
over one column read three bare squares as black pieces at confidence 1.0 (our renderer, contest looks
with the arm's shadow along the board's axes, seed 52, 60 frames: 3 squares wrong at >= 0.9 -> 0, wrong
11 -> 8; at any angle and on seeds 51 and 61-62 (blue, green and dark plates): unchanged; the tuning
sets: no frame's reading changed). The square is then "the plate's colour", not a piece: unknown.
Its cost: a black piece exactly its plate's hue, a third darker, is the plate in shadow too (simcam's
random looks, 150 frames: one such piece unknown, 99.78 -> 99.70% of squares right).
"""

from __future__ import annotations

import numpy as np

from services.vision.detector import detect
from services.vision.detector.pieces import _plate_shows

from .synth import Scene, draw
from .test_sweep import truth_as_read

#: the navy board of the case above: its plate's grey and opponent colour (B-G, R-G) as the detector
#: measured them, the middle of a bare square in the band's shadow, and a black piece's middle (B, G, R).
NAVY_GREY, NAVY_OPPONENT = 37.0, np.array([29.8, -4.5])
NAVY_IN_SHADOW = np.array([50.0, 26.0, 24.0])
BLACK_PIECE = np.array([25.0, 33.0, 32.0])


def test_a_navy_plate_in_shadow_is_the_plate() -> None:
    assert _plate_shows(NAVY_IN_SHADOW, 0.18, NAVY_GREY, NAVY_OPPONENT)


def test_a_coloured_plate_dimmed_keeps_its_colour() -> None:
    """Blue, green and navy plates at 55-100% of their light: their own colour, read the plate."""
    for bgr in ((200.0, 130.0, 40.0), (80.0, 160.0, 60.0), (72.0, 42.0, 42.0)):
        plate = np.array(bgr)
        grey = float(plate @ np.array([0.114, 0.587, 0.299]))
        opponent = np.array([plate[0] - plate[1], plate[2] - plate[1]])
        for light in (1.0, 0.8, 0.7, 0.55):
            assert _plate_shows(plate * light, 0.1, grey, opponent), (bgr, light)


def test_black_and_grey_bodies_are_not_the_plate() -> None:
    assert not _plate_shows(BLACK_PIECE, 0.1, NAVY_GREY, NAVY_OPPONENT)
    assert not _plate_shows(np.array([30.0, 30.0, 30.0]), 0.1, NAVY_GREY, NAVY_OPPONENT)
    assert not _plate_shows(np.array([200.0, 200.0, 205.0]), 0.1, 150.0, np.array([70.0, -90.0]))


#: the frame: a small navy board (pitch 37 px, light lines), black pieces 6 grey levels darker than the
#: plate, the arm's shadow (22% of the light) over its left column.
NAVY_BOARD = Scene(
    center=(442.1, 289.2),
    angle_deg=-2.613,
    pitch_px=37.266,
    line_px=1.488,
    board=".X..XO.O.",
    board_grey=(71.853, 42.004, 41.872),
    line_grey=(230.744, 215.14, 226.098),
    table_grey=(82.204, 198.436, 198.568),
    white_grey=(207.492, 211.86, 239.593),
    black_grey=(22.802, 38.327, 44.273),
    piece_frac=0.401,
    gradient=0.485,
    noise=0.27,
    blur=0.495,
    rim=0.09,
    soft_shadow=0.448,
    vignette=0.26,
    white_balance=(1.088, 1.0, 0.912),
    motion_blur=1.969,
    jpeg_quality=61,
    arm_shadow=(91.41, -1.033, 0.405, 0.219, 0.101),
)


def _wrong(scene: Scene) -> list[str]:
    det = detect(draw(scene, seed=28))
    truth = truth_as_read(det, scene.board, scene.angle_deg)
    return [
        f"square {k + 1}: {det.board[k]} for {truth[k]} at {det.squares[k].confidence:.2f}"
        for k in range(9)
        if det.board[k] not in ("?", truth[k])
    ]


def test_the_arm_shadow_over_a_navy_board_makes_no_black_piece() -> None:
    """No square wrong at 0.9 or more, at most one wrong (measured: none; the shadowed column's three
    bare squares unknown, as the plate's colour; before, all three read black at 1.0)."""
    wrong = _wrong(NAVY_BOARD)
    assert not any(float(w.rsplit(" ", 1)[1]) >= 0.9 for w in wrong), wrong
    assert len(wrong) <= 1, wrong


def test_without_the_shadow_the_navy_board_reads_whole() -> None:
    """The shadow is what the test above is about: without it, every square right."""
    from dataclasses import replace

    assert not _wrong(replace(NAVY_BOARD, arm_shadow=None))
