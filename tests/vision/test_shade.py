"""The shadow band across the board (services/vision/detector/shade.py) on canonical views drawn here: found
where it is and as deep as it is, and not found on a board lit by a gradient or on a column of dark
pieces (which darkens the plate beside the lines as a band would, but not the lines)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from services.vision.detector.geometry import CANON_MARGIN, GRID_SQUARES, _Canon
from services.vision.detector.shade import shadow_gain

PX = 60  # pixels per square
HALF_WIDTH = 0.04  # the lines' half width, pitches
PLATE = 200.0
LINE = 40.0
SQUARE_MIDDLE = 0.35  # pitches from a square's centre: where its piece is read


def _board(light: np.ndarray | None = None, pieces: list[tuple[int, float]] = ()) -> _Canon:
    """A canonical view of a bare plate with its grid (and discs of grey ``pieces[k][1]`` in squares
    ``pieces[k][0]``), multiplied by ``light``."""
    m = round(CANON_MARGIN * PX)
    size = GRID_SQUARES * PX + 2 * m
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    img = np.full((size, size), PLATE, np.float32)
    half = HALF_WIDTH * PX
    for k in range(GRID_SQUARES + 1):
        at = m + k * PX
        inside = (yy >= m - half) & (yy <= m + GRID_SQUARES * PX + half)
        img[inside & (np.abs(xx - at) <= half)] = LINE
        inside = (xx >= m - half) & (xx <= m + GRID_SQUARES * PX + half)
        img[inside & (np.abs(yy - at) <= half)] = LINE
    for square, grey in pieces:
        row, col = divmod(square, GRID_SQUARES)
        cx, cy = m + (col + 0.5) * PX, m + (row + 0.5) * PX
        img[np.hypot(xx - cx, yy - cy) <= 0.44 * PX] = grey
    if light is not None:
        img *= light
    return _Canon(img, PX, m)


def _band(size: int, angle_deg: float, middle: float, width: float, depth: float) -> np.ndarray:
    """The light a band leaves: ``depth`` taken over ``width`` pitches about ``middle`` pitches from the
    board's centre, across the direction ``angle_deg`` from the view's x axis, soft edges 0.1 pitch."""
    m = round(CANON_MARGIN * PX)
    centre = m + GRID_SQUARES * PX / 2
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    a = math.radians(angle_deg)
    t = ((xx - centre) * math.sin(a) + (yy - centre) * math.cos(a)) / PX
    inside = np.clip((width / 2 - np.abs(t - middle)) / 0.1 + 0.5, 0.0, 1.0)
    return 1.0 - depth * inside


@pytest.mark.parametrize(("angle", "middle"), [(0.0, 0.2), (90.0, -0.6), (87.0, 0.9), (30.0, 0.0)])
def test_a_band_is_found_where_it_is_and_as_deep_as_it_is(angle: float, middle: float) -> None:
    size = _board().img.shape[0]
    light = _band(size, angle, middle, 0.5, 0.35)
    gain = shadow_gain(_board(light), HALF_WIDTH)
    assert gain is not None
    m = round(CANON_MARGIN * PX)
    # Divided out, the plate is within a few percent of evenly lit over the squares (beside a crossing,
    # where no line is sampled, a band's edge is bridged, not measured).
    at = (np.arange(size) - m) / PX
    within = (at >= 0) & (at < GRID_SQUARES) & (np.abs(at % 1.0 - 0.5) <= SQUARE_MIDDLE)
    middles = within[:, None] & within[None, :]
    evened = light[middles] / gain[middles]
    assert np.percentile(np.abs(evened - 1.0), 95) < 0.05
    assert float(gain[middles].min()) == pytest.approx(0.65, abs=0.05)


def test_a_gradient_is_no_band() -> None:
    size = _board().img.shape[0]
    ramp = np.linspace(0.5, 1.0, size, dtype=np.float32)[None, :].repeat(size, axis=0)
    assert shadow_gain(_board(ramp), HALF_WIDTH) is None
    assert shadow_gain(_board(), HALF_WIDTH) is None


def test_a_column_of_dark_pieces_is_no_band() -> None:
    # Large mid-grey pieces down one column darken the plate beside its lines as a band would; the
    # lines beside them keep their grey, which a shadow would take too.
    pieces = [(2, 110.0), (5, 110.0), (8, 110.0), (0, 30.0)]
    assert shadow_gain(_board(pieces=pieces), HALF_WIDTH) is None


def test_a_board_read_with_its_band_divided_out_is_right_and_never_certain() -> None:
    # Frames 3, 5 and 6 of the conditions' arm-shadow looks: flagged as first read, read whole with
    # the band divided out (``shadow_band``: the least light it leaves), every square at most 0.85 sure.
    from services.vision.detector import detect
    from services.vision.detector.search import SHADED_CONFIDENCE

    from .synth import draw
    from .test_conditions import _arm_shadow, _looks
    from .test_sweep import rotate_board

    scenes = _looks(12, _arm_shadow)
    for i in (3, 5, 6):
        det = detect(draw(scenes[i], seed=i))
        assert "shadow_band" in det.extra, i
        assert det.pose is not None
        turns = round((det.pose.angle_deg - scenes[i].angle_deg) / 90)
        assert det.board == rotate_board(scenes[i].board, turns), i
        assert max(sq.confidence for sq in det.squares) <= SHADED_CONFIDENCE
