"""A grid line drawn a little off where the grid puts it is looked for either side, whole
(:func:`services.vision.detector.occlusion._line_contrast`), and a line fading from one end is told by
the plate beside the rest of it (:func:`services.vision.detector.occlusion._faded_samples`).

A board's outer lines are not always drawn at the inner lines' spacing (a printed border, a plate's
edge), and a lens bends them: beside a bare square such a line, missed where the grid puts it, read as
hidden over its whole length, and the square unknown. A line that fades along its length under a
gradient had too few seen samples near its far end to tell the plate beside it, and read as covered.
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector import occlusion
from services.vision.detector.geometry import GRID_SQUARES, _Canon
from services.vision.detector.occlusion import LINE_SAMPLES, _faded_samples, _line_contrast

from .tuning_frames import read_tuning_frame

PX, MARGIN = 30, 11  # a canonical view of 30 px a square and its margin
SHAPE = (GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2)  # (line, square along, position, orientation)
PLATE, LINE = 200.0, 80.0
HALF_WIDTH = 1.5 / PX  # lines three pixels wide


def _view(right_line_off: int = 0, rim_at: int | None = None) -> _Canon:
    """A bare plate with dark lines three pixels wide (a line sample looks 2 px either side of where the
    grid puts it, the search 2 px more), the right outer line ``right_line_off`` px to the
    right of where the grid puts it; a dark rim one pixel wide ``rim_at`` px right of the middle of
    the middle vertical lines (a piece's edge beside them), when given."""
    size = GRID_SQUARES * PX + 2 * MARGIN
    img = np.full((size, size), PLATE, np.float32)
    for k in range(GRID_SQUARES + 1):
        at = MARGIN + k * PX
        img[at - 1 : at + 2, :] = LINE
        col = at + (right_line_off if k == GRID_SQUARES else 0)
        img[:, col - 1 : col + 2] = LINE
    if rim_at is not None:
        for k in (1, 2):
            img[:, MARGIN + k * PX + rim_at] = LINE
    return _Canon(img=img, px=PX, margin=MARGIN)


def _right_line() -> np.ndarray:
    mask = np.zeros(SHAPE, bool)
    mask[GRID_SQUARES, :, :, 0] = True
    return mask.ravel()


def test_an_outer_line_drawn_four_pixels_off_is_found_where_it_is() -> None:
    contrast, _both, _own, peak = _line_contrast(_view(right_line_off=4), -1, HALF_WIDTH)
    right = _right_line()
    assert np.allclose(contrast[right], PLATE - LINE)
    assert np.allclose(peak[right], LINE)


def test_without_the_search_it_is_missed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(occlusion, "MISSED_LINE_SHARE", 0.0)  # no line is ever missed: none is looked for
    contrast, *_ = _line_contrast(_view(right_line_off=4), -1, HALF_WIDTH)
    assert (contrast[_right_line()] < 0.45 * (PLATE - LINE)).all()


def test_a_line_seen_where_the_grid_puts_it_stays_there() -> None:
    """A piece's dark rim beside a line seen in place does not draw the line's samples to it."""
    straight = _line_contrast(_view(), -1, HALF_WIDTH)
    beside = _line_contrast(_view(rim_at=3), -1, HALF_WIDTH)
    middle = np.zeros(SHAPE, bool)
    middle[1:GRID_SQUARES, :, :, 0] = True
    assert np.array_equal(straight[3][middle.ravel()], beside[3][middle.ravel()])
    assert np.array_equal(straight[0], _line_contrast(_view(), -1, HALF_WIDTH)[0])


def test_a_line_fading_from_one_end_is_faded_not_covered() -> None:
    """sealed 1 #257 (a tuning set): a thin outer line on a clipped white plate fades from 57 to 28 grey
    levels of contrast along its length (the grid's lines stand out by 95); its last third is seen
    nowhere near, and the plate beside the rest of the line says it only faded there."""
    right = _right_line().reshape(SHAPE)
    contrast = np.full(SHAPE, 95.0)
    contrast[right] = np.linspace(57.0, 28.0, GRID_SQUARES * LINE_SAMPLES)
    seen = contrast >= 45.0
    peaks = 255.0 - contrast  # dark lines on a plate at 255 on both sides
    faded = _faded_samples(
        peaks.ravel(), contrast.ravel(), contrast.ravel(), -1, seen.ravel(), 95.0, 0.5
    ).reshape(SHAPE)
    assert (faded | seen)[right].all()
    assert not faded[~right].any()


def test_a_finger_at_a_lines_far_end_is_not_faded() -> None:
    """The same line with its last third under a finger of another tone (the plate's sides beside it
    80 levels darker): covered, not faded."""
    right = _right_line().reshape(SHAPE)
    contrast = np.full(SHAPE, 95.0)
    contrast[right] = np.linspace(57.0, 28.0, GRID_SQUARES * LINE_SAMPLES)
    seen = contrast >= 45.0
    peaks = 255.0 - contrast
    peaks[GRID_SQUARES, 2, :, 0] -= 80.0  # the finger's tone on both sides of the line
    faded = _faded_samples(
        peaks.ravel(), contrast.ravel(), contrast.ravel(), -1, seen.ravel(), 95.0, 0.5
    ).reshape(SHAPE)
    assert not faded[GRID_SQUARES, 2, :, 0].any()


@pytest.mark.parametrize(("generator", "seed", "index"), [("apart", 2, 132), ("sealed", 3, 75)])
def test_boards_whose_lines_were_missed_are_read_whole(generator: str, seed: int, index: int) -> None:
    """Tuning frames read with squares unknown beside lines missed where the grid put them (apart 2
    #132, light-wood squares between dark lines: 1 square right before) or fading (sealed 3 #75)."""
    det, truth = read_tuning_frame(generator, seed, index)
    assert not det.occluded
    assert det.board == truth
