"""A pen lying across the board is seen by its long straight edge slanted from the board's lines.

A dark pen over dark lines hides none of them, and where it lies over a piece that piece can still read
clean: before this rule, pens read as a clear board in 8 of the 50 pen frames of the five tuning runs.
Nothing of a game is straight and slanted on the board (the lines run along its axes, the pieces are
round), so the squares such an edge crosses are covered (detector.across._lying_across). The grain of a
wood plate runs straight too, but only a few times its own texture off the plate.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from services.vision import detector as D
from services.vision.detector import across, doubt
from services.vision.detector.across import _lying_across, _steps_along
from tests.vision.contest_table.generator import render
from tests.vision.flat.generator import make_frame
from tests.vision.heldout.generator import make_frame as heldout_frame

from .looks import contest_scene, with_hard_shadow
from .test_marker_lines import read_scenes
from .test_sweep import truth_as_read

PX, MARGIN = 40, 14
PLATE, LINES = 180.0, 40.0
CONTRAST = PLATE - LINES


def _board(seed: int = 1) -> np.ndarray:
    """A canonical view of a bare board: a plate with its four lines each way, and the camera's noise."""
    size = 3 * PX + 2 * MARGIN
    view = np.full((size, size), PLATE, np.float32)
    for k in range(4):
        at = MARGIN + k * PX
        view[:, at - 1 : at + 2] = LINES
        view[at - 1 : at + 2, :] = LINES
    return view + np.random.default_rng(seed).normal(0.0, 2.0, view.shape).astype(np.float32)


def _pen(view: np.ndarray, start: tuple[float, float], end: tuple[float, float], grey: float) -> np.ndarray:
    out = view.copy()
    cv2.line(out, (round(start[0]), round(start[1])), (round(end[0]), round(end[1])), grey, 7, cv2.LINE_AA)
    return out


def _piece(view: np.ndarray, square: int, grey: float) -> np.ndarray:
    out = view.copy()
    row, col = divmod(square, 3)
    centre = (round(MARGIN + (col + 0.5) * PX), round(MARGIN + (row + 0.5) * PX))
    cv2.circle(out, centre, round(0.4 * PX), grey, -1, cv2.LINE_AA)
    return out


def test_a_bare_board_has_nothing_across() -> None:
    assert not _lying_across(_board(), PX, MARGIN, CONTRAST, 2.0, True).any()


def test_pieces_have_nothing_across() -> None:
    view = _board()
    for square, grey in ((0, 20.0), (4, 240.0), (8, 20.0), (5, 240.0)):
        view = _piece(view, square, grey)
    assert not _lying_across(view, PX, MARGIN, CONTRAST, 2.0, True).any()


@pytest.mark.parametrize(("grey", "piece"), [(30.0, 20.0), (30.0, 240.0), (250.0, 20.0)])
def test_a_slanted_pen_covers_the_squares_it_crosses(grey: float, piece: float) -> None:
    """Dark or light, over the lines and over a piece in square 5, from square 7 to square 3."""
    view = _piece(_board(), 4, piece)
    start = (MARGIN + 0.2 * PX, MARGIN + 2.8 * PX)
    end = (MARGIN + 2.8 * PX, MARGIN + 0.3 * PX)
    crossed = _lying_across(_pen(view, start, end, grey), PX, MARGIN, CONTRAST, 2.0, True)
    assert crossed[[6, 4, 2]].all()
    assert not crossed[[0, 8]].any()


def test_a_light_pen_over_a_white_piece_is_seen_where_it_lies_on_the_plate() -> None:
    """Its edge vanishes over a piece of its own tone: the longer stretch beside it is enough."""
    view = _piece(_board(), 4, 250.0)
    start = (MARGIN + 0.2 * PX, MARGIN + 2.8 * PX)
    end = (MARGIN + 2.8 * PX, MARGIN + 0.3 * PX)
    assert _lying_across(_pen(view, start, end, 250.0), PX, MARGIN, CONTRAST, 2.0, True)[6]


def test_a_pen_ten_degrees_off_an_axis_is_slanted() -> None:
    """Down the middle column at 10 degrees from the vertical lines (contest_table #223 has one at about
    that), from square 2 to square 8."""
    top = (MARGIN + 1.3 * PX, MARGIN + 0.1 * PX)
    bottom = (top[0] + math.tan(math.radians(10.0)) * 2.8 * PX, MARGIN + 2.9 * PX)
    crossed = _lying_across(_pen(_board(), top, bottom, 30.0), PX, MARGIN, CONTRAST, 2.0, True)
    assert crossed[[1, 4, 7]].all()
    assert not crossed[[0, 2, 3, 5, 6, 8]].any()


def test_a_pen_along_a_line_is_not_slanted() -> None:
    """Along the board's axes an edge is the lines' (a pen lying along one is left to the line checks)."""
    view = _pen(_board(), (MARGIN + 5, MARGIN + 0.5 * PX), (MARGIN + 3 * PX - 5, MARGIN + 0.5 * PX), 30.0)
    assert not _lying_across(view, PX, MARGIN, CONTRAST, 2.0, True).any()


def test_the_grain_of_a_wood_plate_is_not_a_pen() -> None:
    """Slanted stripes a few levels deep all over the plate: its own texture."""
    view = _board()
    yy, xx = np.mgrid[0 : view.shape[0], 0 : view.shape[1]].astype(np.float32)
    along = (xx * math.cos(math.radians(30)) + yy * math.sin(math.radians(30))) / 5.0
    view += (8.0 * np.sin(2 * math.pi * along)).astype(np.float32)
    assert not _lying_across(view, PX, MARGIN, CONTRAST, 2.0, True).any()


#: pen frames of the tuning runs that read as a clear board before the rule (flat seed 1 #158, contest
#: table seed 1 #74 and #234), and a wood plate whose grain runs slanted (flat seed 3 #178), read right.
def test_pens_on_rendered_boards_cover_the_board() -> None:
    for sample in (make_frame(158, 1), render(1, 74)[0], render(1, 234)[0]):
        det = D.detect(sample.image)
        assert sample.occluded and det.found
        assert det.occluded and det.extra.get("foreign_across", 0.0) > 0


def test_a_wood_plate_with_slanted_grain_reads_clear() -> None:
    sample = make_frame(178, 3)
    det = D.detect(sample.image)
    assert not det.occluded
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)


def _edge_over_stretches(below: np.ndarray, above: np.ndarray) -> np.ndarray:
    """A view 200 px wide with a straight edge along row 30: ``above`` (200 greys, one per column)
    above it, ``below`` below it."""
    view = np.empty((60, 200), np.float32)
    view[:30] = above
    view[30:] = below
    return view


SEGMENT = (10.0, 30.0, 190.0, 30.0)


def test_a_pen_of_one_tone_over_pieces_of_its_own_tone_steps_one_way() -> None:
    """A dark pen over black pieces (no step) and the plate between them (a step down, half its length):
    not the same way along ACROSS_CONSISTENT of it, but one way, never the other, with its body of one
    tone (heldout 1/59 and contest_table 3/43, tuning frames, read clear before)."""
    pieces_and_plate = np.where((np.arange(200) // 20) % 2 == 0, 20.0, 180.0)
    view = _edge_over_stretches(np.full(200, 30.0), pieces_and_plate)
    assert _steps_along(view, SEGMENT, 3.0, 0.25 * CONTRAST, CONTRAST)


def test_an_edge_between_two_mottled_sides_is_no_pen() -> None:
    """The same steps, but neither side of one tone (pieces and plate on both): no pen's body."""
    rng = np.random.default_rng(3)
    mottled = np.where((np.arange(200) // 20) % 2 == 0, 20.0, 180.0)
    other = np.where(rng.random(200) < 0.5, 30.0, 120.0)
    view = _edge_over_stretches(other, mottled)
    assert not _steps_along(view, SEGMENT, 3.0, 0.25 * CONTRAST, CONTRAST)


def test_a_pen_over_pieces_on_rendered_boards_covers_the_board() -> None:
    for sample in (heldout_frame(59, 1), render(3, 43)[0]):
        det = D.detect(sample.image)
        assert sample.occluded and det.found
        assert det.occluded and det.extra.get("foreign_across", 0.0) > 0


def _shadow(view: np.ndarray, angle_deg: float, depth: float) -> np.ndarray:
    """``view`` with the light taken away by ``depth`` beyond a straight, hard edge through the board's
    centre at ``angle_deg`` from the x axis (a lamp's sharp shadow of something beside the board)."""
    centre = MARGIN + 1.5 * PX
    yy, xx = np.mgrid[0 : view.shape[0], 0 : view.shape[1]].astype(np.float32)
    a = math.radians(angle_deg)
    beyond = ((xx - centre) * -math.sin(a) + (yy - centre) * math.cos(a) > 0).astype(np.float32)
    beyond = cv2.GaussianBlur(beyond, (0, 0), 0.7)
    return view * (1.0 - depth * beyond)


@pytest.mark.parametrize("angle_deg", [25.0, 60.0, 105.0, 150.0])
def test_a_shadows_edge_is_not_a_pen_where_the_board_is_read_again_in_its_light(angle_deg: float) -> None:
    """A hard shadow's edge is straight and slanted, yet the lines go on across it, as dark beside the
    plate (for its share) on both sides, and the plate on one side is darker all along: where the
    board is read again with the shadow evened out (``shadowed``) it covers nothing; where it is not,
    it is judged as before, an object's edge."""
    view = _shadow(_piece(_piece(_board(), 4, 240.0), 0, 20.0), angle_deg, 0.4)
    assert not _lying_across(view, PX, MARGIN, CONTRAST, 2.0, True, shadowed=True).any()
    assert _lying_across(view, PX, MARGIN, CONTRAST, 2.0, True).any()


def test_a_pen_on_a_board_in_a_shadow_still_covers_the_squares_it_crosses() -> None:
    """Its edges hide the lines beneath it (a pen wider than the line samples reach: 7 px, 0.17 of a
    pitch)."""
    start, end = (MARGIN + 0.2 * PX, MARGIN + 2.8 * PX), (MARGIN + 2.8 * PX, MARGIN + 0.3 * PX)
    view = _pen(_shadow(_board(), 40.0, 0.4), start, end, 30.0)
    crossed = _lying_across(view, PX, MARGIN, CONTRAST, 2.0, True, shadowed=True)
    assert crossed[[4, 2]].all()
    assert (crossed == _lying_across(view, PX, MARGIN, CONTRAST, 2.0, True)).all()


@pytest.mark.parametrize("grey", [30.0, 250.0])
def test_a_thin_pen_is_not_a_shadows_edge(grey: float) -> None:
    """A pen thinner than the line samples reach beyond its edge (2 px, 0.05 of a pitch): the lines go on
    beyond it, but the plate beyond it is the plate, not darker: judged as without a shadow."""
    view = _board()
    start, end = (MARGIN + 0.2 * PX, MARGIN + 2.8 * PX), (MARGIN + 2.8 * PX, MARGIN + 0.3 * PX)
    cv2.line(view, (round(start[0]), round(start[1])), (round(end[0]), round(end[1])), grey, 2, cv2.LINE_AA)
    crossed = _lying_across(view, PX, MARGIN, CONTRAST, 2.0, True, shadowed=True)
    assert crossed.sum() >= 3
    assert (crossed == _lying_across(view, PX, MARGIN, CONTRAST, 2.0, True)).all()


def test_boards_under_a_hard_shadow_are_read_and_none_wrong_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Our renderer's contest looks under a lamp's sharp shadow (``looks.with_hard_shadow``), 40 frames:
    where the board is read again with the shadow evened out, its edges no longer cover squares
    (measured when the band was read in steps: 349 of 360 squares right, 338 judging the edges pens; the
    same one frame read wrong either way, a phantom beside the shadow's edge; seed 91, 60 frames: 478 ->
    491; seed 92: 464 -> 478). Since the band is fitted as one (session 61): 352 right, and as many
    judging both the shadow's edges (``_a_shadows_edge``) and the band's found edges
    (``_along_band_edge``) pens, the band divided out leaving no edge to judge; but then a frame more is
    read wrong (frame 39: a phantom white piece beside the edge). The rules alone: the second opinion,
    since it learned a fourth state, doubts frame 39's phantom either way."""
    monkeypatch.setattr(doubt, "_weights", lambda: None)
    rng = np.random.default_rng(94)
    scenes = [with_hard_shadow(contest_scene(rng), rng) for _ in range(40)]
    right, _, problems = read_scenes(scenes)
    monkeypatch.setattr(across, "_a_shadows_edge", lambda *_: False)
    monkeypatch.setattr(across, "_along_band_edge", lambda *_: False)
    _, _, problems_without = read_scenes(scenes)
    assert right >= 345
    assert len(problems) <= 1 and set(problems) < set(problems_without), (problems, problems_without)
