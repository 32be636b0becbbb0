"""A board on a saturated plate is read again in each pixel's brightest channel when grey leaves it
unsure (search._read_in_brightest).

Black foam on a blue contest plate is about as dark as the plate in grey, where blue weighs a tenth; in
the brightest channel the plate is light and the foam stays dark, and the grid's lines stand out two to
three times more. A board read clean and sure in grey keeps that read: the brightest channel of a
saturated plate carries its chroma's noise and coarser JPEG sampling (on the simulated camera's blue
contest look, two frames of 400 read a bare square unknown there).

The tuning frames below are the ones the rule was chosen on; they prove only those frames.
"""

from __future__ import annotations

import pytest

from services.vision import detector as D
from services.vision.detector.search import SATURATED_GAIN

from .test_contest_looks import _sweep
from .test_sweep import truth_as_read
from .tuning_frames import read_tuning_frame, tuning_sample


@pytest.mark.parametrize(("seed", "index"), [(2, 232), (3, 210), (4, 70)])
def test_a_flagged_blue_board_is_read_whole_in_the_brightest_channel(seed: int, index: int) -> None:
    det, truth = read_tuning_frame("contest_table", seed, index)
    assert det.extra["brightest_gain"] > SATURATED_GAIN
    assert det.extra.get("read_in_brightest") == 1.0
    assert det.board == truth
    assert not det.occluded


def test_black_foam_read_white_in_grey_is_black_in_the_brightest_channel() -> None:
    """contest_table seed 4 frame 44: grey read square 1's black foam white (0.8) and flagged three
    squares; the brightest channel reads every square but one, and none wrong."""
    det, truth = read_tuning_frame("contest_table", 4, 44)
    assert det.extra.get("read_in_brightest") == 1.0
    assert all(read in (true, "?") for read, true in zip(det.board, truth, strict=True))
    assert det.board.count("?") <= 1


def test_tracking_reads_a_saturated_plate_as_the_search_does() -> None:
    """The tracker confirms the pose on the lines and reads there, with the same rule (heldout seed 4
    frame 171, a saturated blue plate: grey left a bare corner square unknown)."""
    sample = tuning_sample("heldout", 4, 171)
    found = D.detect(sample.image)
    tracked = D.track(sample.image, found.pose, polarity=found.polarity, half_width=found.extra["half_width"])
    assert tracked.extra.get("tracked") == 1.0 and tracked.extra.get("read_in_brightest") == 1.0
    assert tracked.board == found.board == truth_as_read(found, sample.board, sample.angle_deg)


def test_a_board_read_clean_in_grey_is_not_read_again() -> None:
    """The simulated camera's blue contest look, a frame whose lines stand out 2.5 times more in the
    brightest channel: read there, a bare square's ring looked elongated (chroma noise)."""
    image, board, angle = _sweep("contest-blue", 11, 76)[75]
    det = D.detect(image)
    assert det.extra["brightest_gain"] > SATURATED_GAIN
    assert "read_in_brightest" not in det.extra
    assert det.board == truth_as_read(det, board, angle)
