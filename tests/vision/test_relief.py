"""When nothing else finds a board, the grid is looked for in the image's relief (search._in_relief).

The relief (image.relief) keeps an image's thin structures, light and dark alike, as light on black.
An engraved line is a groove with a wall in shade and a wall in the light, which average to the plate's
grey a little way off; a printed line a pixel wide on a small, defocused board fades as much. Neither
makes cells or comb profiles that stand out, but both are light in the relief. The squares are read in
the image itself, and a grid none of whose lines shows there is no board (the relief makes a lattice of
a table's grain too).

On the tuning sets (session 43): boards not found in clear frames 10 -> 6 of 5,132, squares right
45,793 -> 45,829 of 46,188, nothing read wrong that was not; on frames of tables without a board, no
more boards found (2 of 100, by the search before it).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from services.vision import detector as D
from services.vision.detector import search
from services.vision.detector.image import relief

from .looks import contest_scene
from .synth import draw
from .tuning_frames import read_tuning_frame, tuning_sample

PLATE, SHADE, LIT = 180, 120, 235  # a plate, and a groove's walls in shade and in the light


def _groove_image() -> np.ndarray:
    """A plate with one vertical groove: a wall in shade (2 px) beside a wall in the light (2 px)."""
    img = np.full((60, 60), PLATE, np.uint8)
    img[:, 29:31] = SHADE
    img[:, 31:33] = LIT
    return img


def test_both_walls_of_a_groove_are_light_in_the_relief_and_the_plate_is_black() -> None:
    out = relief(_groove_image())
    assert out[30, 29] >= 4 * (PLATE - SHADE) * 0.9
    assert out[30, 32] >= min(255, 4 * (LIT - PLATE) * 0.9)
    assert out[30, 10] == 0 and out[30, 50] == 0


def test_a_wide_area_is_no_structure() -> None:
    img = np.full((60, 60), PLATE, np.uint8)
    img[:, 30:] = 60  # a dark half: an edge, not a line
    out = relief(img)
    assert out[30, 10] == 0 and out[30, 45] == 0


#: clear tuning frames whose board nothing else found: thin printed lines on small boards (a yellow
#: plate, defocused; a white plate, defocused; a light grey plate, motion blur) and thin engraved
#: lines on a blue plate.
FOUND_IN_RELIEF = [("heldout", 2, 97), ("heldout", 2, 100), ("heldout", 2, 110), ("heldout", 4, 274)]


@pytest.mark.parametrize(("generator", "seed", "index"), FOUND_IN_RELIEF)
def test_boards_of_faint_thin_lines_are_found_in_the_relief_and_read(
    generator: str, seed: int, index: int
) -> None:
    det, truth = read_tuning_frame(generator, seed, index)
    assert det.found and det.extra.get("relief") == 1.0
    assert det.board == truth
    assert not det.occluded


def test_without_the_relief_they_are_not_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "_in_relief", lambda *args: None)
    for generator, seed, index in FOUND_IN_RELIEF:
        assert not D.detect(tuning_sample(generator, seed, index).image).found


def test_a_table_without_a_board_has_none_in_its_relief(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our renderer's tables and clutter, the board drawn far outside the frame: the relief finds grids
    in some of them, and none of their lines shows in the image where its squares are read."""
    in_relief: list[D.Detection | None] = []
    look = search._in_relief

    def looked(*args: object) -> D.Detection | None:
        in_relief.append(look(*args))  # type: ignore[arg-type]
        return in_relief[-1]

    monkeypatch.setattr(search, "_in_relief", looked)
    rng = np.random.default_rng(1)
    for i in range(30):
        scene = replace(contest_scene(rng), center=(-3000.0, -3000.0))
        D.detect(draw(scene, seed=i))
    assert in_relief and not any(in_relief)
