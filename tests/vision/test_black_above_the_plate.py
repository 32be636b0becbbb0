"""Black pieces on a plate darker than they are, told by the white pieces far above them
(:func:`squares._black_above_the_plate`).

Black engraved lines on a black board: the grid's scale runs from the lines up to the plate, a few grey
levels, and everything above the plate reads white, a black foam disc a little lighter than the board
too (before this rule, every such black piece read white at confidence 1.0). On each square's own scale
the white pieces stand ten or more of the grid's contrasts above the plate and the black ones one or
two; and a black piece keeps a quarter of a white one's grey at most.
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision import detector as D
from services.vision.detector import squares
from services.vision.tracker import VisionCore

from .synth import Scene, draw
from .test_board_tones import Reading
from .test_sweep import truth_as_read
from .tuning_frames import read_tuning_frame

F0 = 0.3  # the evidence a piece needs (DetectorParams.piece_min_fill)
PLATE = 25.0
LINES = 12.0  # dark, on a darker-than-black plate: a contrast of 13 grey levels
LINE_LEVEL = np.full(9, LINES)


def _board(tones: dict[int, float], plate: float = PLATE) -> list[Reading]:
    """Readings as _read_squares gives them with dark lines: every piece above the plate reads white."""
    return [
        ("white", 1.0, 1.0, tones[k], "", plate) if k in tones else ("empty", 1.0, 0.0, 1.0, "", plate)
        for k in range(9)
    ]


def _colours(readings: list[Reading]) -> str:
    return "".join({"black": "X", "white": "O", "empty": "."}[r[0]] if not r[4] else "?" for r in readings)


def _tone(grey: float, plate: float = PLATE, lines: float = LINES) -> float:
    return (grey - lines) / (plate - lines)


def test_black_pieces_a_little_above_a_black_plate_beside_white_ones_are_black() -> None:
    board = _board({0: _tone(230), 1: _tone(45), 4: _tone(55), 8: _tone(210), 6: _tone(35)})
    got = squares._black_above_the_plate(board, F0, LINE_LEVEL, True)
    assert _colours(got) == "OX..X.X.O"
    assert all(got[k][1] <= squares.RESCALED_CONFIDENCE for k in (1, 4, 6))
    assert got[0] == board[0] and got[8] == board[8]  # the white pieces stand


def test_white_pieces_apart_in_tone_keep_their_colour() -> None:
    """A white piece on a patch of plate in shade stands far above the board's other white pieces on
    its own scale, but they keep most of its grey: they are white (a tuning frame, apart 1/2)."""
    plates = {2: 99.0, 3: 49.0, 7: 75.0, 8: 136.0}
    lines = np.array([20.0, 20.0, 61.0, 44.0, 20.0, 20.0, 20.0, 55.0, 61.0])
    board = [("empty", 1.0, 0.0, 1.0, "", 80.0) for _ in range(9)]
    for k, grey in ((2, 186.0), (3, 138.0), (7, 93.0), (8, 219.0)):
        board[k] = ("white", 1.0, 1.0, _tone(grey, plates[k], lines[k]), "", plates[k])
    assert squares._black_above_the_plate(board, F0, lines, True) == board


def test_without_white_pieces_far_above_or_with_light_lines_nothing_changes() -> None:
    near_only = _board({1: _tone(45), 4: _tone(55)})
    assert squares._black_above_the_plate(near_only, F0, LINE_LEVEL, True) == near_only
    mixed = _board({0: _tone(230), 1: _tone(45)})
    assert squares._black_above_the_plate(mixed, F0, LINE_LEVEL, False) == mixed


def _black_board(board: str, plate: int = 25, lines: int = 12, black: int = 45) -> Scene:
    """A black board with black lines (greys ``plate``, ``lines``), black pieces of grey ``black``
    (lighter than the board) and white pieces of 230, large, rendered by tests/vision/synth.py."""
    return Scene(
        board=board,
        board_grey=plate,
        line_grey=lines,
        black_grey=black,
        white_grey=230,
        table_grey=90,
        piece_frac=0.7,
        noise=2.0,
        angle_deg=12.0,
        line_px=3.0,
    )


@pytest.mark.parametrize(("plate", "lines", "black"), [(25, 12, 45), (20, 8, 40), (30, 15, 55), (25, 12, 30)])
def test_a_black_board_with_black_lines_read_whole(plate: int, lines: int, black: int) -> None:
    """Rendered: a black board, black lines, black pieces lighter than the board, white pieces."""
    scene = _black_board("OXXXXOOXX", plate=plate, lines=lines, black=black)
    for seed in (1, 2):
        det = D.detect(draw(scene, seed=seed))
        assert det.found and det.problem == ""
        assert det.board == truth_as_read(det, scene.board, scene.angle_deg)


def test_the_tuning_frame_it_was_chosen_on() -> None:
    """sealed 1/159: three black pieces on a dark plate with dark engraved lines, read unknown before."""
    det, truth = read_tuning_frame("sealed", 1, 159)
    assert det.board == truth


def test_a_game_on_a_black_board_through_the_tracker() -> None:
    """The device's path: the board found empty, then followed frame by frame on its lines (the line
    width and polarity measured on the empty board) while the pieces come. Every stable board with a
    white piece on it is the true one. (Before the first white piece, a black one still reads white:
    the README says so.)"""
    core = VisionCore(stable_frames=3)
    frame_id = 0
    for board in (".........", "O........", "O...X....", "O...X...X", "O.O.X...X", "OXO.X...X"):
        scene = _black_board(board)
        for seed in range(4):
            frame_id += 1
            result = core.process(draw(scene, seed=seed), frame_id)
        assert result.observation.stable, board
        assert result.observation.board == truth_as_read(result.detection, board, scene.angle_deg)
        if board != ".........":
            assert result.detection.extra.get("tracked") == 1.0  # followed on its lines, not searched
