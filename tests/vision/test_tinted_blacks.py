"""Black pieces a little tinted, in a frame exposed until a white plate clips (squares._black_pieces_alike).

A body more saturated than any black or white piece is something else (a coin, a cap: pieces.
_coloured), its saturation taken over its brightest channel or a floor, so that a dark body's few
levels of tint do not count. A camera exposed until the plate clips at 255 lifts a black piece a
little tinted (B, G, R 15, 45, 50) over that floor: every black piece on the board then read "coloured",
unknown. Three or more bodies of one tint and tone, in the dark half of the grid's scale, are the
black pieces; coins and caps come one at a time.

On our renderer (contest looks, exposure x1.4-1.9, 80 frames, seed 11): 93.33% -> 96.81% of squares
right; black pieces read unknown 29 -> 4. The tuning sets: no frame's reading changed.
"""

from __future__ import annotations

import numpy as np

from services.vision.detector import detect
from services.vision.detector.squares import ALIKE_MIN, _black_pieces_alike

from .synth import Scene, draw

TINTED_BLACK = (15.0, 45.0, 50.0)  # B, G, R: an olive-brown black foam
OLIVE = np.array([28.0, 80.0, 88.0])  # ...after the exposure
COPPER = np.array([60.0, 110.0, 170.0])


def _exposed(image: np.ndarray, gain: float) -> np.ndarray:
    return np.clip(image.astype(np.float32) * gain, 0, 255).astype(np.uint8)


def _colours(*bgr: np.ndarray) -> dict[int, np.ndarray]:
    return dict(enumerate(bgr))


def test_three_bodies_of_one_tint_are_pieces_and_one_or_two_are_not() -> None:
    contrast = np.full(9, 150.0)
    grey = np.full(9, 70.0)
    for count in (1, ALIKE_MIN - 1, ALIKE_MIN, 5):
        coloured = np.zeros(9, bool)
        coloured[:count] = True
        alike = _black_pieces_alike(coloured, _colours(*[OLIVE] * count), grey, contrast)
        assert alike.sum() == (count if count >= ALIKE_MIN else 0)


def test_bodies_of_different_tints_or_tones_are_not_one_kind() -> None:
    contrast = np.full(9, 150.0)
    coloured = np.zeros(9, bool)
    coloured[:3] = True
    mixed = _black_pieces_alike(coloured, _colours(OLIVE, OLIVE, COPPER), np.full(9, 70.0), contrast)
    assert not mixed.any()
    grey = np.array([70.0, 70.0, 140.0, *[0.0] * 6])
    assert not _black_pieces_alike(coloured, _colours(OLIVE, OLIVE, OLIVE), grey, contrast).any()


def test_tinted_black_pieces_on_a_clipped_white_plate_are_read() -> None:
    board = "X.X.X.O.."
    scene = Scene(board=board, board_grey=(225.0, 230.0, 235.0), black_grey=TINTED_BLACK, noise=1.5)
    plain = detect(draw(scene, seed=3))
    assert plain.board == board
    clipped = detect(_exposed(draw(scene, seed=3), 1.8))
    assert clipped.found
    assert [clipped.board[k] for k in (0, 2, 4)] == ["X", "X", "X"]
