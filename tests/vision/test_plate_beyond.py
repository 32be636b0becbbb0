"""The lone bare square of a full board of large pieces is read against the plate beyond the grid
(:func:`.squares._like_the_plate_beyond`), and a bare square a spotlight lights unlike the rest against
the bare squares beside it (:func:`.squares._like_the_bare_squares`), on a saturated plate in another
light too (:func:`.squares._the_plate_in_other_light`).

Its corners take the neighbouring pieces' levels (their blur and shadows) and the board's surface is
fitted through corners that are mostly the pieces', so the square is flagged "background" (something
flat over it) and read unknown. The plate just outside the grid's outer lines is neither: where the
square's middle has that colour and nothing in it differs from its corners, it is bare, never certainly.
A sheet over the square is not the plate's colour, and a plate as dark or as light as a piece of its
own tone could hide one, so neither is cleared.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from services.vision.detector import detect, homography_of
from services.vision.detector import squares as squares_module
from services.vision.detector.geometry import _Canon
from services.vision.detector.squares import (
    BEYOND_PLATE_CONFIDENCE,
    _like_the_bare_squares,
    _like_the_plate_beyond,
    _Middles,
    _the_plate_in_other_light,
)
from tests.vision.contest_table.generator import render
from tests.vision.flat.generator import make_frame as flat_frame

from .test_sweep import truth_as_read

PX, MARGIN = 40, 14
GREEN = (40.0, 150.0, 40.0)  # B, G, R
LINES = 30.0  # the grid's dark lines
CONTRAST = np.full(9, 80.0)


def _canon(plate: tuple[float, float, float]) -> _Canon:
    """A canonical view of a plate of one colour beyond and within the grid."""
    size = 3 * PX + 2 * MARGIN
    colour = np.empty((size, size, 3), np.float32)
    colour[:] = plate
    grey = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY)
    return _Canon(img=grey, px=PX, margin=MARGIN, colour=colour)


def _middles(colour: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Each square's core (9, N, 3) all of ``colour``, and its middle mask (9, N)."""
    core = np.empty((9, 50, 3), np.float32)
    core[:] = colour
    return core, np.ones((9, 50), bool)


def test_a_square_of_the_plates_colour_is_bare() -> None:
    core, middles = _middles((45.0, 155.0, 35.0))  # a few levels off: noise, light
    bare = _like_the_plate_beyond(_canon(GREEN), 0.05, _Middles([1, 4], core, middles, CONTRAST, True))
    assert bare == [1, 4]


def test_a_sheet_of_another_colour_stays_flagged() -> None:
    for sheet in ((120.0, 120.0, 120.0), (235.0, 235.0, 235.0), (60.0, 60.0, 200.0), (40.0, 150.0, 70.0)):
        core, middles = _middles(sheet)
        assert _like_the_plate_beyond(_canon(GREEN), 0.05, _Middles([4], core, middles, CONTRAST, True)) == []


def test_a_plate_that_could_hide_a_piece_is_never_cleared() -> None:
    """A white plate under dark lines (a white piece of its tone), a black one under light lines."""
    for plate, dark_lines in (((235.0, 235.0, 235.0), True), ((30.0, 30.0, 30.0), False)):
        core, middles = _middles(plate)
        assert (
            _like_the_plate_beyond(_canon(plate), 0.05, _Middles([4], core, middles, CONTRAST, dark_lines))
            == []
        )


def test_grey_images_compare_grey() -> None:
    canon = _canon(GREEN)
    grey_canon = _Canon(img=canon.img, px=PX, margin=MARGIN)
    level = float(canon.img[0, 0])
    core = np.full((9, 50), level + 5.0, np.float32)
    everywhere = np.ones((9, 50), bool)
    assert _like_the_plate_beyond(grey_canon, 0.05, _Middles([2], core, everywhere, CONTRAST, True)) == [2]
    core += 30.0
    assert _like_the_plate_beyond(grey_canon, 0.05, _Middles([2], core, everywhere, CONTRAST, True)) == []


#: (generator, seed, index) of tuning frames whose lone bare squares read "background" before.
FULL_BOARDS = (("contest_table", 1, 170), ("contest_table", 1, 86), ("flat", 3, 48), ("flat", 1, 230))


@pytest.mark.parametrize(("generator", "seed", "index"), FULL_BOARDS)
def test_the_bare_square_of_a_full_board_is_read(generator: str, seed: int, index: int) -> None:
    sample = render(seed, index)[0] if generator == "contest_table" else flat_frame(index, seed)
    det = detect(sample.image)
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    assert det.board == truth
    assert not det.extra.get("foreign_background")
    for square, char in zip(det.squares, truth, strict=True):
        if char == "." and square.confidence < 0.85:
            assert square.confidence <= BEYOND_PLATE_CONFIDENCE


def _sheet(image: np.ndarray, h: np.ndarray, square: int, colour: tuple[int, int, int]) -> np.ndarray:
    """``image`` with a sheet 0.8 of the pitch wide laid over ``square`` (0-8) of the grid ``h`` puts
    at the canonical view."""
    row, col = divmod(square, 3)
    corners = np.array(
        [[col + 0.1, row + 0.1], [col + 0.9, row + 0.1], [col + 0.9, row + 0.9], [col + 0.1, row + 0.9]]
    )
    outline = cv2.perspectiveTransform(corners[None], np.linalg.inv(h))[0]
    out = image.copy()
    cv2.fillConvexPoly(out, np.round(outline).astype(np.int32), colour, lineType=cv2.LINE_AA)
    return out


SHEETS = ((120, 120, 120), (235, 235, 235), (60, 60, 200), (30, 30, 30))


@pytest.mark.parametrize("colour", SHEETS)
def test_a_sheet_over_a_piece_is_not_cleared_by_the_plate_beyond(
    colour: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """contest_table #170 (a green plate, eight large pieces), a sheet over each of its pieces in turn:
    the square is not read bare where it is not without this rule. (Without it, 8 of these 32 sheets
    already read as a bare square, their own corners being the sheet's: the square's level is its
    corners'. And the rule reads the real bare square bare, so a frame it leaves unflagged is read in
    grey, not in the brightest channel: there a grey sheet over square 0 reads a white piece, 0.85 sure,
    where the brightest channel read it bare.)"""
    sample, _info = render(1, 170)
    det = detect(sample.image)
    assert det.pose is not None
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    for square in (k for k, char in enumerate(truth) if char != "."):
        image = _sheet(sample.image, homography_of(det.pose), square, colour)
        covered = detect(image)
        with monkeypatch.context() as m:
            m.setattr(squares_module, "BEYOND_PLATE_MATCH", -1.0)  # the rules off
            m.setattr(squares_module, "SAME_HUE_MATCH", -1.0)
            without = detect(image)
        cleared = covered.board[square] == "." and without.board[square] != "."
        assert not cleared, (square, covered.board, without.board)


@pytest.mark.parametrize("colour", [(120, 120, 120), (60, 60, 200)])
def test_a_sheet_over_the_bare_square_stays_unknown(colour: tuple[int, int, int]) -> None:
    """The same frame, a sheet of a colour other than the plate's over its bare square."""
    sample, _info = render(1, 170)
    det = detect(sample.image)
    assert det.pose is not None
    bare = truth_as_read(det, sample.board, sample.angle_deg).index(".")
    covered = detect(_sheet(sample.image, homography_of(det.pose), bare, colour))
    assert covered.squares[bare].state == "unknown"


def test_the_band_is_beyond_the_outer_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The band lies outside the grid: a canonical view whose inside is another colour than its margin
    is judged by the margin."""
    canon = _canon(GREEN)
    assert canon.colour is not None
    inside = slice(MARGIN + 3, MARGIN + 3 * PX - 3)
    canon.colour[inside, inside] = (200.0, 50.0, 50.0)
    core, middles = _middles(GREEN)
    monkeypatch.setattr(squares_module, "BEYOND_BAND", (0.04, 0.16))
    assert _like_the_plate_beyond(canon, 0.05, _Middles([4], core, middles, CONTRAST, True)) == [4]


def test_a_saturated_plate_in_another_light_is_the_plate() -> None:
    """A spotlight's disc or a gradient: the green plate brighter or dimmer, up to 2:1 either way."""
    plate = np.array(GREEN)
    for gain in (0.55, 0.7, 1.4, 1.6):
        assert _the_plate_in_other_light(plate * gain, plate, 20.0)
    for gain in (0.4, 2.5):  # beyond a 2:1 light
        assert not _the_plate_in_other_light(plate * gain, plate, 20.0)


def test_another_colour_in_any_light_is_not_the_plate() -> None:
    plate = np.array(GREEN)
    for other in ((40.0, 150.0, 70.0), (60.0, 150.0, 40.0), (200.0, 200.0, 200.0), (30.0, 30.0, 30.0)):
        for gain in (0.7, 1.0, 1.4):
            assert not _the_plate_in_other_light(np.array(other) * gain, plate, 20.0), (other, gain)


def test_an_unsaturated_plate_is_matched_only_as_it_is() -> None:
    """On a grey or white plate a sheet of paper has the plate's hue: only its level tells."""
    plate = np.array((150.0, 150.0, 150.0))
    assert _the_plate_in_other_light(plate + 10.0, plate, 80.0)
    assert not _the_plate_in_other_light(plate * 1.4, plate, 80.0)
    assert not _the_plate_in_other_light(np.array(160.0), np.array(120.0), 80.0)  # grey images


def _readings(states: str) -> list[tuple[str, float, float, float, str, float]]:
    """Readings as _read_squares builds them: "." bare, "X"/"O" pieces, "?" flagged "background"."""
    kinds = {".": ("empty", ""), "X": ("black", ""), "O": ("white", ""), "?": ("white", "background")}
    return [(kinds[c][0], 0.9, 0.0, 0.5, kinds[c][1], 140.0) for c in states]


def test_a_spotlit_bare_square_is_like_the_bare_squares_beside_it() -> None:
    """Square 5 flagged, lit 1.4 times the bare squares 4 and 6 beside it; the far bare square 0 is
    dimmer still and does not count."""
    core, middles = _middles(GREEN)
    core[4] *= 1.4
    core[0] *= 0.4
    readings = _readings(".XO.?.XOX")
    assert _like_the_bare_squares(readings, _Middles([4], core, middles, CONTRAST, True)) == [4]


def test_a_sheet_beside_bare_squares_stays_flagged() -> None:
    for sheet in ((120.0, 120.0, 120.0), (235.0, 235.0, 235.0), (60.0, 60.0, 200.0)):
        core, middles = _middles(GREEN)
        core[4] = sheet
        readings = _readings(".XO.?.XOX")
        assert _like_the_bare_squares(readings, _Middles([4], core, middles, CONTRAST, True)) == []


def test_without_bare_squares_or_on_a_plate_that_could_hide_a_piece_nothing_is_cleared() -> None:
    core, middles = _middles(GREEN)
    assert _like_the_bare_squares(_readings("OXO?XOXOX"), _Middles([3], core, middles, CONTRAST, True)) == []
    white = [(*r[:5], 240.0) for r in _readings(".XO.?.XOX")]  # a white plate under dark lines
    core, middles = _middles((240.0, 240.0, 240.0))
    assert _like_the_bare_squares(white, _Middles([4], core, middles, CONTRAST, True)) == []


#: (seed, index, square) of contest_table tuning frames: a bare square of a green or blue board that a
#: spotlight lights unlike the rest, read "background" (unknown) before.
SPOTLIT = ((1, 284, 3), (3, 6, 3), (4, 58, 1), (4, 70, 5), (4, 70, 7))


@pytest.mark.parametrize(("seed", "index", "square"), SPOTLIT)
def test_a_spotlit_bare_square_is_read_bare(seed: int, index: int, square: int) -> None:
    sample = render(seed, index)[0]
    det = detect(sample.image)
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    assert truth[square] == "."
    assert det.squares[square].state == "empty"
    assert det.squares[square].confidence <= BEYOND_PLATE_CONFIDENCE
