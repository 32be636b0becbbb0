"""A board seen in perspective is found by the comb with each set of lines on its own.

The comb (services/vision/detector/comb.py) looks for four evenly spaced lines each way, both sets at
one pitch and square to each other. A camera that does not look straight down sees the board's two
sets of lines turned up to 8 degrees from square and spaced up to a fifth apart: in the apart set (a
tuning set written apart from the detector), 9 of its 1,200 clear frames of seeds 1-4 had no board
found, full boards whose pieces break up the cells. When nothing else finds a board, the comb's
profiles are paired again, each set at its own angle and pitch (comb._Combs.free).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from services.vision import detector as D
from services.vision.detector import comb, search
from services.vision.detector import image as detector_image
from tests.vision.apart.generator import make_frame

from .test_sweep import truth_as_read

#: (seed, index) of apart frames seen in perspective whose boards nothing else found.
IN_PERSPECTIVE = ((3, 112), (2, 254), (2, 277))


@pytest.mark.parametrize(("seed", "index"), IN_PERSPECTIVE)
def test_a_board_seen_in_perspective_is_found_and_read(seed: int, index: int) -> None:
    sample = make_frame(index, seed)
    det = D.detect(sample.image)
    assert det.found and not det.occluded
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)


def test_without_the_free_combs_those_boards_are_not_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """(Nor in the relief, the search's last resort, which finds this one: see test_relief.)"""
    monkeypatch.setattr(comb._Combs, "free", lambda self: [])
    monkeypatch.setattr(search, "_in_relief", lambda *args: None)
    seed, index = IN_PERSPECTIVE[0]
    assert not D.detect(make_frame(index, seed).image).found


def _sheared_grid(angle_x: float, angle_y: float, pitch_x: float, pitch_y: float) -> np.ndarray:
    """A bare 3x3 grid of dark lines on a light plate, its vertical lines at ``angle_x`` degrees from
    the image's vertical and its horizontal lines at ``angle_y`` from the horizontal, ``pitch_x`` and
    ``pitch_y`` pixels apart, on a mid-grey table."""
    img = np.full((480, 640), 120, np.uint8)
    ax, ay = np.radians(angle_x), np.radians(angle_y)
    # Board coordinates (u, v) in pitches to image: u along the horizontal lines, v along the vertical.
    along_h = np.array([np.cos(ay), -np.sin(ay)]) * pitch_x
    along_v = np.array([np.sin(ax), np.cos(ax)]) * pitch_y
    centre = np.array([320.0, 240.0])

    def at(u: float, v: float) -> tuple[int, int]:
        p = centre + (u - 1.5) * along_h + (v - 1.5) * along_v
        return round(p[0] * 16), round(p[1] * 16)

    plate = np.array([at(-0.4, -0.4), at(3.4, -0.4), at(3.4, 3.4), at(-0.4, 3.4)], np.int32)
    cv2.fillConvexPoly(img, plate, 215, cv2.LINE_AA, 4)
    for k in range(4):
        cv2.line(img, at(k, 0), at(k, 3), 40, 4, cv2.LINE_AA, 4)
        cv2.line(img, at(0, k), at(3, k), 40, 4, cv2.LINE_AA, 4)
    return cv2.cvtColor(cv2.GaussianBlur(img, (0, 0), 0.8), cv2.COLOR_GRAY2BGR)


def test_the_free_combs_hold_a_grid_whose_lines_are_not_square() -> None:
    """Lines turned 7 degrees from square, one set spaced 15 % wider: one of the free combs' grids lies
    within a tenth of a pitch of every crossing, where the square combs' best lies farther off."""
    image = _sheared_grid(angle_x=12.0, angle_y=5.0, pitch_x=70.0, pitch_y=60.0)
    im = detector_image._prepare_image(image)
    combs = comb._comb_search(im, D.DEFAULT_PARAMS)
    ax, ay = np.radians(12.0), np.radians(5.0)
    along_h = np.array([np.cos(ay), -np.sin(ay)]) * 70.0
    along_v = np.array([np.sin(ax), np.cos(ax)]) * 60.0
    crossings = np.array([[u, v] for u in range(4) for v in range(4)], np.float64)
    image_pts = (
        np.array([320.0, 240.0]) + (crossings[:, :1] - 1.5) * along_h + (crossings[:, 1:] - 1.5) * along_v
    )

    def worst(h: np.ndarray) -> float:
        """How far the farthest crossing lands from a crossing of the canonical grid, or infinity
        when the crossings do not land on all sixteen (the grid's numbering is free here)."""
        got = search._apply_h(h, image_pts)
        nearest = np.clip(np.round(got), 0, 3)
        if len({tuple(p) for p in nearest.tolist()}) < len(got):
            return float("inf")
        return float(np.abs(got - nearest).max())

    assert min(worst(h) for h, _ in combs.free()) < 0.1
    assert min(worst(h) for h, _ in combs.square) > 0.1
