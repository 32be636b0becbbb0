"""A grid whose lines stand out faintly from a dark plate, in a scene of a wide grey range, is still a
grid (search.NO_GRID_SPREAD_SHARE).

A grid found whose lines stand out from the plate by less than a share of the image's grey range is
taken for no grid at all, every line covered, every square unknown: a lined sheet or a texture that
looked periodic. On a dark plate with light lines a few levels off it, beside white paper and pieces
(a grey range of 220), that share was 5 %: contest_table seed 2 frame 279, lines 8 levels off the plate,
read nine squares unknown. It is 3 %. The tuning frame proves only itself.
"""

from __future__ import annotations

from .tuning_frames import read_tuning_frame


def test_faint_light_lines_on_a_dark_plate_are_a_grid() -> None:
    det, truth = read_tuning_frame("contest_table", 2, 279)
    assert 0 < det.line_contrast < 0.05 * 220
    assert det.board == truth
    assert not det.occluded
