"""A 3D-printed plate: its top layer's extrusion paths lie side by side as fine ridges, 1.2-5 px apart
in the image, across the squares and under the pieces. Nothing was changed for them: this pins that
the plate's texture is neither a body in a bare square nor lines of a grid. Our renderer's contest looks
with such a plate, 40 frames each of seeds 81-84 (session 48): 1,439 of 1,440 squares right; the one
wrong, a bare square on a noise-free dark plate read black at 0.75, a frame passed wrong: the rim look
(pieces._rim_pieces) took steps of 8-bit grey, 0.1-1.5 levels deep, for a rim on six sectors."""

from __future__ import annotations

import numpy as np

from .looks import contest_scene, with_printed_plate
from .test_marker_lines import read_scenes

FRAMES = 24
SEED = 85


def test_printed_plates_are_read() -> None:
    rng = np.random.default_rng(SEED)
    scenes = [with_printed_plate(contest_scene(rng), rng) for _ in range(FRAMES)]
    right, flagged, problems = read_scenes(scenes)
    assert not problems
    assert right == 9 * FRAMES and flagged == 0, (right, flagged)
