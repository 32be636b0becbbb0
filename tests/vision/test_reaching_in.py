"""A hand reaching in over the board's outer lines is seen beyond them
(:func:`services.vision.detector.occlusion._reaching_in`).

Before, fingers of the lines' own tone (light skin over white lines) hid the lines' contrast and not
their grey, so no stretch of line counted as covered, and a fingertip inside a square read as a white
piece that "explained" the hidden line beside it: two frames of the apart set with a hand over the
board read as clear boards, each with a piece that is not there.
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector import occlusion, search
from services.vision.detector.geometry import GRID_SQUARES, _Canon
from services.vision.detector.occlusion import LINE_SAMPLES, _beyond_sampling, _reaching_in

from .tuning_frames import tuning_sample

PX, MARGIN = 30, 11  # a canonical view of 30 px a square and its margin
SHAPE = (GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2)  # (line, square along, position, orientation)
BOTTOM, HORIZONTAL = GRID_SQUARES, 1


def _view(beyond: np.ndarray | None = None) -> _Canon:
    """A view of grey 100 with a light gradient down and across it (20 levels a square), and the
    pixels beyond the outer-line samples set from ``beyond`` (L,) where it is given (NaN: unchanged)."""
    size = GRID_SQUARES * PX + 2 * MARGIN
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    img = 100.0 + 20.0 * (xx + yy) / PX
    if beyond is not None:
        idx = _beyond_sampling(PX, MARGIN)
        take = (idx >= 0) & ~np.isnan(beyond)
        img.ravel()[idx[take]] = beyond[take]
    return _Canon(img=img, px=PX, margin=MARGIN)


def _stretch(start: int, stop: int) -> np.ndarray:
    """Booleans (L,) over the bottom outer line's samples ``start`` to ``stop`` (of 30, left to right)."""
    mask = np.zeros(SHAPE, bool)
    mask[BOTTOM, :, :, HORIZONTAL].reshape(-1)[start:stop] = True
    return mask.ravel()


def test_a_hand_beyond_a_hidden_stretch_reaches_in() -> None:
    hidden = _stretch(10, 16)
    beyond = np.full(hidden.shape, np.nan)
    beyond[hidden] = 230.0  # a light hand, beyond the line where it hides it
    reaching = _reaching_in(_view(beyond), seen=~hidden, typical=60.0, noise=1.0)
    assert np.array_equal(reaching, hidden)


def test_the_light_gradient_beyond_the_lines_is_nothing() -> None:
    hidden = _stretch(10, 16)
    assert not _reaching_in(_view(), seen=~hidden, typical=60.0, noise=1.0).any()


def test_a_stretch_hidden_with_nothing_beyond_it_is_not_reaching_in() -> None:
    """A large piece reaching over the outer line ends before BEYOND_OUTER: beyond, the plate as elsewhere."""
    hidden = _stretch(3, 9)
    assert not _reaching_in(_view(), seen=~hidden, typical=60.0, noise=1.0).any()


def test_something_beyond_a_line_seen_is_not_reaching_in() -> None:
    """A supply piece, tape or a sheet beside the board leaves the line seen."""
    beside = _stretch(20, 26)
    beyond = np.full(beside.shape, np.nan)
    beyond[beside] = 20.0
    assert not _reaching_in(_view(beyond), seen=np.ones(beside.shape, bool), typical=60.0, noise=1.0).any()


def test_an_arm_beyond_seen_stretches_too_is_still_told() -> None:
    """The arm lies beyond the line on both sides of where the hand hides it: what lies beyond the
    seen stretches is then not one level, and the densest third of it is taken."""
    hidden = _stretch(8, 14)
    arm = _stretch(6, 16)
    beyond = np.full(hidden.shape, np.nan)
    beyond[arm] = 40.0  # a dark sleeve
    reaching = _reaching_in(_view(beyond), seen=~hidden, typical=60.0, noise=1.0)
    assert np.array_equal(reaching, hidden)


#: light skin over white lines; an arm from below; fingers over a purple plate's top row, from above.
HANDS = [("apart", 3, 46), ("apart", 3, 215), ("apart", 2, 276)]
#: ...those read clear without the rule. (apart 3/215 was one until the line fit left out profiles that
#: run to their window's end, session 43: it is flagged without the rule now; so is apart 3/46 since
#: session 46, whose fingertip's middle is of another tone than the disc round it, read as a washer's
#: (squares._washed_middles), and the square then unlike the board's pieces of its kind.)
CLEAR_WITHOUT_IT = [("apart", 2, 276)]


@pytest.mark.parametrize("generator, seed, index", HANDS)
def test_hands_over_the_board_are_not_read_clear(generator: str, seed: int, index: int) -> None:
    sample = tuning_sample(generator, seed, index)
    assert sample.occluded
    det = search.detect(sample.image)
    assert det.found and det.occluded


def test_without_the_rule_they_read_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "_reaching_in", lambda canon, seen, *a: np.zeros(seen.shape, bool))
    for generator, seed, index in CLEAR_WITHOUT_IT:
        det = search.detect(tuning_sample(generator, seed, index).image)
        assert det.found and not det.occluded and "?" not in det.board


def test_the_densest_third() -> None:
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(50.0, 2.0, 12), np.full(8, 200.0), rng.normal(120.0, 30.0, 10)])
    spread = occlusion._shorth(values)
    # (the densest third of 30 is most of the 12 alike: their spread is overstated, never understated)
    assert 2.0 < spread < 8.0
    assert abs(occlusion._consensus(values, 3.0 * spread) - 50.0) < 3.0
    assert occlusion._robust_slope(np.arange(10.0), 3.0 * np.arange(10.0) + 7.0) == pytest.approx(3.0)


def test_the_plate_ending_part_way_along_a_side_is_no_hand() -> None:
    """Beyond the left third of the bottom line the board's dark margin, beyond the rest the light
    table (the board lies turned on a sheet): a step, which no gradient explains; a stretch hidden where
    the table lies beyond, as it does beyond the rest, is nothing reaching in."""
    hidden = _stretch(14, 19)
    beyond = np.full(hidden.shape, np.nan)
    beyond[_stretch(0, 10)] = 60.0
    beyond[_stretch(10, 30)] = 235.0
    assert not _reaching_in(_view(beyond), seen=~hidden, typical=80.0, noise=1.0).any()
