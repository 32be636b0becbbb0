"""A square read bare on a plate that could hide a piece of its own tone is never certain.

Confidence says how far a reading can be trusted: a black piece on a plate as dark as itself, or a white
one on a plate as light, may show nothing at all, so a bare reading there is at most
``HIDING_PLATE_CONFIDENCE``; on a plate of neither tone a bare square is certain. And no square is certain
in a frame whose grid's lines are largely unseen (``search.DOUBTFUL_GRID_CONFIDENCE``): the grid may
stand where the board is not.
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision import detector as D
from services.vision.detector import search, squares

from .synth import Scene, draw
from .tuning_frames import read_tuning_frame


@pytest.mark.parametrize(
    ("plate", "lines", "hiding"),
    [(45, 200, True), (60, 220, True), (215, 40, True), (235, 30, True), (130, 30, False), (150, 240, False)],
)
def test_a_bare_square_is_certain_only_where_no_piece_could_hide(
    plate: float, lines: float, hiding: bool
) -> None:
    det = D.detect(draw(Scene(board="X...O....", board_grey=plate, line_grey=lines, noise=1.5), seed=3))
    assert det.found
    bare = [s for s, c in zip(det.squares, "X...O....", strict=True) if c == "." and s.state == "empty"]
    assert len(bare) >= 5
    top = max(s.confidence for s in bare)
    assert (top <= squares.HIDING_PLATE_CONFIDENCE) if hiding else (top == 1.0)


def test_a_black_piece_on_a_plate_as_dark_as_itself_is_not_read_bare_with_certainty() -> None:
    """The piece differs from the plate by 5 grey levels, under the plate's noise: nothing shows."""
    det = D.detect(
        draw(Scene(board="....X....", board_grey=45, line_grey=210, black_grey=40, noise=2.0), seed=1)
    )
    assert det.found
    centre = det.squares[4]
    assert centre.state in ("empty", "unknown", "black")
    if centre.state == "empty":
        assert centre.confidence <= squares.HIDING_PLATE_CONFIDENCE


@pytest.mark.parametrize(("white", "hiding"), [(182, True), (240, False)])
def test_white_pieces_at_the_plates_tone_show_a_plate_that_could_hide_one(white: float, hiding: bool) -> None:
    """A white plate in shade (grey 170, under ``WHITE_PIECE_GREY``) with white pieces whose middles sit
    near its tone, seen by their rims: the plate is as light as white pieces, so a bare square on it is
    not certain. White pieces far above the plate show nothing of the kind."""
    board = "O...O...."
    scene = Scene(board=board, board_grey=170, line_grey=35, white_grey=white, rim=0.15, noise=1.5)
    det = D.detect(draw(scene, seed=5))
    assert det.found
    assert [s.state for s in det.squares[:5:4]] == ["white", "white"]
    bare = [s for s, c in zip(det.squares, board, strict=True) if c == "." and s.state == "empty"]
    assert len(bare) >= 5
    top = max(s.confidence for s in bare)
    assert (top <= squares.HIDING_PLATE_CONFIDENCE) if hiding else (top == 1.0)


def test_pieces_like_the_plate() -> None:
    dark_lines = np.ones(9, bool)
    empty = ("empty", 1.0, 0.0, 1.0, "", 170.0)
    near_white = ("white", 0.75, 1.0, 1.1, "", 170.0)
    far_white = ("white", 1.0, 1.0, 1.6, "", 170.0)
    assert squares._pieces_like_the_plate([near_white] + [empty] * 8, dark_lines)
    assert not squares._pieces_like_the_plate([far_white] + [empty] * 8, dark_lines)
    flagged = ("white", 0.75, 1.0, 1.1, "coloured", 170.0)
    assert not squares._pieces_like_the_plate([flagged] + [empty] * 8, dark_lines)
    # light lines on a dark plate (0 is the plate's end): a black piece at the plate's tone
    near_black = ("black", 0.75, 1.0, -0.1, "", 40.0)
    far_black = ("black", 1.0, 1.0, -0.8, "", 40.0)
    assert squares._pieces_like_the_plate([near_black] + [empty] * 8, ~dark_lines)
    assert not squares._pieces_like_the_plate([far_black] + [empty] * 8, ~dark_lines)


@pytest.mark.parametrize(("white", "capped"), [(184, True), (240, False)])
def test_a_piece_of_the_plates_tone_is_never_certain(white: float, capped: bool) -> None:
    """A white piece whose middle is the plate's grey (170), seen by its rim alone, is read white but at
    most ``PLATE_TONE_CONFIDENCE`` sure: a gradient or a stain differs from the plate by as little. A
    white piece far above the plate is certain."""
    board = "O...O...."
    scene = Scene(board=board, board_grey=170, line_grey=35, white_grey=white, rim=0.15, noise=1.5)
    det = D.detect(draw(scene, seed=5))
    assert det.found
    pieces = det.squares[:5:4]
    assert [s.state for s in pieces] == ["white", "white"]
    top = max(s.confidence for s in pieces)
    assert (top <= squares.PLATE_TONE_CONFIDENCE) if capped else (top == 1.0)


# Frames of the tuning sets whose grid was placed off the board (on its pieces and the table around), its
# lines largely unseen: they are flagged, and before, a square of each was read wrong at confidence 1.0.
# (apart 2/235 was one of them until the line fit left out profiles that run to their window's end:
# its grid is now placed on the board and read whole; see test_line_ends. So was apart 2/132 until lines
# missed where the grid put them were looked for either side: see test_line_shift.)
GRID_OFF_THE_BOARD = [("heldout", 1, 42)]


@pytest.mark.parametrize(("generator", "seed", "index"), GRID_OFF_THE_BOARD)
def test_no_square_is_certain_in_a_grid_whose_lines_are_largely_unseen(
    generator: str, seed: int, index: int
) -> None:
    det, _truth = read_tuning_frame(generator, seed, index)
    assert det.occluded
    assert det.extra["lines_hidden"] > D.DEFAULT_PARAMS.frame_occluded_frac
    assert max(s.confidence for s in det.squares) <= search.DOUBTFUL_GRID_CONFIDENCE


def test_a_hand_over_the_lines_leaves_no_square_certain_and_a_clear_board_keeps_its_certainty() -> None:
    board = "X...O...."
    clear = D.detect(draw(Scene(board=board, noise=1.5), seed=2))
    assert not clear.occluded and clear.board == board
    assert max(s.confidence for s in clear.squares) == 1.0
    covered = D.detect(draw(Scene(board=board, noise=1.5, hand=(330.0, 250.0, 0.0)), seed=2))
    assert covered.found and covered.occluded
    assert covered.extra["lines_hidden"] > D.DEFAULT_PARAMS.frame_occluded_frac
    assert max(s.confidence for s in covered.squares) <= search.DOUBTFUL_GRID_CONFIDENCE


def test_without_the_cap_those_grids_read_a_square_wrong_with_certainty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(search, "DOUBTFUL_GRID_CONFIDENCE", 1.0)
    # (A second read with the light evened out, which now doubts squares of a covered frame too, finds a
    # shadow band on heldout 1/42 and leaves its square wrong at 1.0 unknown: it reads differently
    # evenly lit. That is not the cap, so the second reads are left out here.)
    monkeypatch.setattr(search, "shadow_gain", lambda canon, half_width: None)
    monkeypatch.setattr(search, "glare_light", lambda canon, half_width: None)
    for generator, seed, index in GRID_OFF_THE_BOARD:
        det, truth = read_tuning_frame(generator, seed, index)
        wrong = [s.confidence for s, t in zip(det.squares, truth, strict=True) if s.char not in (t, "?")]
        assert max(wrong) == 1.0
