"""Pieces on saturated plates (the contest's blue and green boards), drawn by tests/vision/synth.py.

A saturated plate's grey is far below its lightness: blue weighs a tenth in grey, so a blue board is as
grey as black foam in a bright room, and a piece's tone, placed between the lines' grey and the plate's,
read black pieces as white or as mid-tone (unknown). The tone is now taken in the brightest channel
where the plate is saturated and the lines are dark. And lines that differ from such a plate in colour
but hardly in grey are read in the brightest channel, where they stand out.
"""

from __future__ import annotations

import pytest

from services.vision.detector import detect

from .synth import Scene, draw

GREEN: tuple[float, float, float] = (40, 180, 40)  # BGR
BLUE: tuple[float, float, float] = (200, 90, 20)
BOARDS = ("....X....", "XO.OX...X", "XOXOXOOXO", ".........")


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("plate", [GREEN, BLUE], ids=["green", "blue"])
@pytest.mark.parametrize("black_grey", [45, 60, 75])
def test_large_pieces_on_a_saturated_plate_with_black_lines(
    board: str, plate: tuple[float, float, float], black_grey: float
) -> None:
    """Black foam (grey 45-75 as lit) and white pieces of radius 0.425 pitch, black lines."""
    scene = Scene(
        board=board,
        board_grey=plate,
        line_grey=15,
        black_grey=black_grey,
        table_grey=(200, 200, 200),
        noise=2.0,
        piece_frac=0.85,
    )
    det = detect(draw(scene, seed=1))
    assert det.found and det.board == board, [(s.state, round(s.tone, 2)) for s in det.squares]


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("lines", [(60, 90, 90), (40, 75, 75), (30, 60, 60)])
def test_lines_of_the_plates_grey_but_not_its_colour(board: str, lines: tuple[float, float, float]) -> None:
    """Dull lines on a blue plate: within 10 grey levels of it (their brightest channel is half the
    plate's). An empty board read nine phantom pieces in grey."""
    scene = Scene(
        board=board, board_grey=BLUE, line_grey=lines, table_grey=(150, 150, 150), noise=2.0, piece_frac=0.8
    )
    det = detect(draw(scene, seed=1))
    assert det.found and det.board == board, [(s.state, round(s.tone, 2)) for s in det.squares]
