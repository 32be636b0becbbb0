"""Reading at a known pose (the tracker's prior, ``read_board``) tells the grid's polarity where no piece
can be: the lines beside their crossings against the squares' corners.

Before, it compared whole columns through the lines with columns through the squares' middles, so a
board full of large black pieces (every middle black) on a white plate looked like light lines on a
dark plate, and read every square unknown.
"""

from __future__ import annotations

import pytest

from services.vision.detector import detect, read_board

from .synth import Scene, draw


@pytest.mark.parametrize("piece_frac", [0.6, 0.7, 0.8])
def test_a_board_full_of_large_black_pieces_keeps_its_dark_lines(piece_frac: float) -> None:
    scene = Scene(
        center=(320.0, 240.0),
        angle_deg=10.0,
        pitch_px=60.0,
        line_px=4.0,
        board="X" * 9,
        board_grey=205,
        line_grey=40,
        table_grey=120,
        gradient=0.0,
        noise=2.0,
        blur=0.8,
        glare=False,
        crosses=False,
        piece_frac=piece_frac,
    )
    image = draw(scene, seed=1)
    found = detect(image)
    assert found.found and found.pose is not None
    det = read_board(image, found.pose)
    assert det.polarity == "dark-lines"
    assert det.board == "X" * 9
