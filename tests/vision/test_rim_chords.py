"""A large piece reaching over its line hides the chord its rim cuts (``occlusion._rim_chords``).

A large piece pushed towards a line (radius up to 0.45 of the pitch, up to 0.1 off its square's centre)
hides the line with its body and, beyond the edge its body gives, with its rim, its contact shadow and
its blur: on the clear tuning frames flagged for it, 0.04-0.13 of a pitch beyond that edge. Within
``PIECE_OVER_LINE`` of the edge a hidden stretch is explained; beyond it, before, the square was taken
as crossed by something and the clear frame read occluded ("crossed" alone was the largest cause of
clear tuning frames read occluded: 53 of 209). Now the stretch of hidden samples that holds the point
of the line nearest the piece is explained too when all of it lies within ``PIECE_RIM_REACH`` of the
edge: the chord a disc cuts is centred there. A pen or a coin beside the piece crosses the line
wherever it lies, and a stretch longer than the rim reaches is something else.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.vision_frames import a_frame_ago
from services.vision.detector import detect, track
from services.vision.detector.geometry import SQUARE_CENTRES
from services.vision.detector.occlusion import (
    LINE_SAMPLES,
    PIECE_OVER_LINE,
    PIECE_RIM_REACH,
    _line_sampling,
    _sample_positions,
    _under_pieces,
)

from .tuning_frames import assert_occluded_not_read_clear, read_tuning_frame, tuning_sample

#: the piece of the unit tests: a black piece in the top middle square (1), pushed 0.08 of a pitch
#: towards the board's top outer line, its measured edge 0.38 from its centre: the line's samples lie
#: 0.04 beyond that edge at the point nearest the piece, 0.11 at the second samples from the side's
#: ends, 0.145 at its ends.
SQUARE, OFFSET, EDGE = 1, (0.0, -0.08), 0.38
#: the middle grey of its disc, and the tone of its middle on the grid's scale of dark lines (the line
#: 0, the plate 1): darker than the line.
DISC_GREY, TONE = 30.0, -0.3


def _top_line_samples() -> np.ndarray:
    """The indices (``LINE_SAMPLES``,) of the line samples of the top outer line along square 1, in order
    along the line (as :func:`occlusion._line_sampling` lays them out)."""
    at = _sample_positions()
    on_top = np.flatnonzero((at[:, 1] == 0.0) & (at[:, 0] > 1.0) & (at[:, 0] < 2.0))
    return on_top[np.argsort(at[on_top, 0])]


def _explained(hidden_at: range) -> np.ndarray:
    """Which of the top line's samples along square 1 the piece explains, ``hidden_at`` of them hidden."""
    owners = _line_sampling(40, 8, 2, 4)[2]
    readings = [("empty", 1.0, 0.0, 0.0, "", 200.0)] * 9
    readings[SQUARE] = ("black", 1.0, 0.9, TONE, "", 200.0)
    discs = np.zeros((9, 4))
    discs[SQUARE] = (*OFFSET, EDGE, DISC_GREY)
    top = _top_line_samples()
    hidden = np.zeros(len(owners), bool)
    hidden[top[list(hidden_at)]] = True
    return _under_pieces(owners, readings, discs, 10.0, True, hidden=hidden)[top]


def test_the_geometry_is_as_the_constants_say() -> None:
    top = _top_line_samples()
    centre = SQUARE_CENTRES[SQUARE] + np.array(OFFSET)
    beyond = np.hypot(*(_sample_positions()[top] - centre).T) - EDGE
    assert beyond.min() == pytest.approx(0.0415, abs=1e-3)
    assert (beyond[1:-1] <= PIECE_RIM_REACH).all() and (beyond[[0, -1]] > PIECE_RIM_REACH).all()
    assert (beyond <= PIECE_OVER_LINE).sum() == 4


def test_the_chord_around_the_nearest_point_is_the_rims() -> None:
    assert _explained(range(1, LINE_SAMPLES - 1))[1:-1].all()


def test_a_stretch_longer_than_the_rim_reaches_is_not() -> None:
    # (Of the whole side, only the four samples within PIECE_OVER_LINE: not most of the stretch.)
    assert not _explained(range(LINE_SAMPLES)).any()


def test_a_stretch_beside_the_nearest_point_is_not() -> None:
    # A coin or a pen's end beside the piece, over the line's first samples only.
    assert not _explained(range(0, 4))[:4].any()


#: (generator, seed, index) of clear tuning frames whose large pieces reach over a line a ring and more
#: beyond their measured edge: flagged "crossed" alone before, read whole now, cold and tracked.
RIM_OVER_THE_LINE = (
    ("sealed", 1, 186),  # a full board of large pieces on a grey plate with light lines
    ("sealed", 1, 226),  # a large white piece pushed over the top outer line of a white plate
    ("sealed", 1, 289),  # a full board on a green plate without a margin, pieces over its lines
    ("contest_table", 4, 153),  # a black piece over the right outer line of a contest board
    ("heldout", 2, 160),  # a black piece over the left outer line
)


@pytest.mark.parametrize(("generator", "seed", "index"), RIM_OVER_THE_LINE)
def test_a_rim_over_the_line_leaves_the_frame_clear(generator: str, seed: int, index: int) -> None:
    det, truth = read_tuning_frame(generator, seed, index)
    assert det.board == truth and not det.occluded
    sample = tuning_sample(generator, seed, index)
    width = det.extra["half_width"]
    tracked = track(sample.image, a_frame_ago(det.pose), polarity=det.polarity, half_width=width)
    assert tracked.board == truth and not tracked.occluded


#: occluded tuning frames where something not a piece hides a line beside a large piece, the piece's
#: reach no explanation: a pen across the board beside a black piece (gridded 2/136), a coin against
#: the board's corner beside one (apart 3/252), the gantry's head holding a piece over the top outer
#: line (sealed 3/127, read as the tracker reads it).
BESIDE_A_PIECE = (("gridded", 2, 136), ("apart", 3, 252), ("sealed", 3, 127))


@pytest.mark.parametrize(("generator", "seed", "index"), BESIDE_A_PIECE)
def test_what_crosses_beside_a_piece_still_covers(generator: str, seed: int, index: int) -> None:
    assert_occluded_not_read_clear(generator, seed, index)
    sample = tuning_sample(generator, seed, index)
    det = detect(sample.image)
    width = det.extra["half_width"]
    tracked = track(sample.image, a_frame_ago(det.pose), polarity=det.polarity, half_width=width)
    assert tracked.occluded or "?" in tracked.board, tracked.board
