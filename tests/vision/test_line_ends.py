"""A line profile that keeps the line's tone to an end of its window places no line (lines._fit_lines).

The grid's lines are placed from short profiles across them, at each profile's half-maximum centroid.
Where something of the line's own tone lies beside a line, the profile runs on into it and the centroid
is pulled that way: a black piece touching a dark line, a white one touching a light line, or the table
beyond a plate that ends at its outer lines when the table is as dark as the lines. The outer lines
were then placed outward, the grid came out 4-6 % too large, and its corner squares read pieces that
were not there. Such profiles still count as seen (the line is there), and are left out of the fit
while enough lines are placed without them: three in each direction, or two where such profiles took
the others, each placed along half its length at least.

On the tuning sets (session 43): 45,737 -> 45,791 of 46,188 squares right; clear frames read with a
wrong square 79 -> 67, flagged 122 -> 108; none wrong at >= 0.9 before or after.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from services.vision.detector import detect

from .looks import contest_scene
from .synth import Scene, draw
from .test_sweep import rotate_board
from .tuning_frames import read_tuning_frame

#: a plate that ends this far beyond its outer lines' axes, in pitches (a line's half width is 0.01-0.06)
NO_MARGIN = 0.02
FRAMES = 16


def _plate_ending_at_its_lines(rng: np.random.Generator) -> Scene:
    """A contest look whose plate ends at its outer lines, on a table of the lines' tone (+-15)."""
    scene = contest_scene(rng)
    table = tuple(float(np.clip(v + rng.uniform(-15.0, 15.0), 0.0, 255.0)) for v in scene.line_grey)
    return replace(scene, margin=NO_MARGIN, table_grey=table)


def test_a_plate_that_ends_at_its_lines_on_a_table_of_their_tone_is_read_at_its_size() -> None:
    """Before, 8 of these 16 boards came out 4.4-5.5 % too large, and 98.6 % of squares read right."""
    rng = np.random.default_rng(8)
    right = total = 0
    for i in range(FRAMES):
        scene = _plate_ending_at_its_lines(rng)
        det = detect(draw(scene, seed=i))
        if not det.found:
            total += 9
            continue
        assert det.pose is not None
        assert abs(det.pitch_px / scene.pitch_px - 1.0) < 0.03, (i, det.pitch_px, scene.pitch_px)
        turns = round((det.pose.angle_deg - scene.angle_deg) / 90)
        truth = rotate_board(scene.board, turns)
        right += sum(a == b for a, b in zip(det.board, truth, strict=True))
        total += 9
    assert right >= 0.97 * total


#: tuning frames that read whole and clear since this change, flagged before: a large black piece on a
#: green plate with white lines read bare (apart 3/135); a grid placed off a small board, its lines
#: largely unseen (apart 2/235). (Others now read so without a later rule: test_far_kind,
#: test_read_in_brightest, test_refine_passes, test_reaching_in.)
READ_WHOLE_NOW = [("apart", 3, 135), ("apart", 2, 235)]


@pytest.mark.parametrize(("generator", "seed", "index"), READ_WHOLE_NOW)
def test_frames_whose_grid_a_profile_into_a_piece_skewed_are_read_whole(
    generator: str, seed: int, index: int
) -> None:
    det, truth = read_tuning_frame(generator, seed, index)
    assert det.board == truth
    assert not det.occluded
