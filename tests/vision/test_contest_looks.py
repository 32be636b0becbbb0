"""The simulator's camera in the contest's looks: a blue or a green plate with black lines, black foam
and white discs 0.8 of the pitch across (``simcam.style`` "contest-blue" / "contest-green",
``simworld.piece_diameter_mm`` 32 on a 40 mm pitch), under the simulator's lamp, whose soft reflection
on the plate brightens some squares' middles over their corners.

On the whole stack (``sanzi sim --set simcam.style=contest-green --set simworld.piece_diameter_mm=32``)
such a reflection on a bare square read "small" (a blob too small for a piece), unknown, frame after
frame: the device could not confirm its own placement and stopped task 3. On the blue plate, bare
squares so lit read "plate-colour", "elongated" or too faint to be sure, one frame in ten. A patch of
the plate's own tone that only the light made is bare board (squares._read_squares), and a square both
readings see bare is at least as sure as the ring's reading says (squares._combine). So is a bare
square whose corners the large white pieces around it light: on a plate no piece's tone is near, its
long patch of the plate's tone is not a white piece's shadow.
"""

from __future__ import annotations

import numpy as np
import pytest

from services.common import config as config_module
from services.simcam.core import FrameMaker
from services.simcam.world import world_from_board
from services.vision.detector import detect

from .test_sweep import truth_as_read

#: the contest's pieces on the simulator's 40 mm pitch: 0.8 of it across.
PIECE_DIAMETER_MM = 32.0


def _frame_maker(style: str) -> FrameMaker:
    return FrameMaker.from_config(config_module.load(None, overrides={"simcam": {"style": style}}))


def _sweep(style: str, seed: int, n: int) -> list[tuple[np.ndarray, str, float]]:
    """``n`` frames of random boards (seeded) at random angles and places, pieces a little off their
    squares' centres as a person leaves them: (image, board, angle)."""
    rng = np.random.default_rng(seed)
    maker = _frame_maker(style)
    out = []
    for _ in range(n):
        board = "".join(rng.choice(list("XO.."), 9))
        while board.count("X") > 5 or board.count("O") > 5:
            board = "".join(rng.choice(list("XO.."), 9))
        angle = float(rng.uniform(-40, 40))
        centre = (float(195 + rng.uniform(-15, 15)), float(155 + rng.uniform(-15, 15)))
        world = world_from_board(
            board, angle, centre, piece_diameter_mm=PIECE_DIAMETER_MM, jitter_mm=2.0, rng=rng
        )
        out.append((maker.image(world), board, angle))
    return out


def _read_right(frames: list[tuple[np.ndarray, str, float]]) -> int:
    right = 0
    for image, board, angle in frames:
        det = detect(image)
        right += det.found and det.board == truth_as_read(det, board, angle)
    return right


@pytest.mark.parametrize("style", ["contest-green", "contest-blue"])
def test_contest_boards_are_read_whole(style: str) -> None:
    """40 frames each, every one found and read whole and right. (Before a bare square's long patch of
    the plate's tone counted as light on a plate no piece's tone is near, 38 of the blue ones; on 100
    frames of seeds 7, 11, 13 and 17, 400 of 400 blue and 399 of 400 green are now.)"""
    assert _read_right(_sweep(style, seed=5, n=40)) == 40


def test_the_lamps_reflection_on_a_bare_square_is_bare() -> None:
    """The board of the stopped task 3: white on 3, black on 5 and 8; the lamp's reflection lies on
    square 9. Read at several frames' noise."""
    world = world_from_board("..O.X..X.", -27.6, (195.6, 155.1), piece_diameter_mm=PIECE_DIAMETER_MM)
    maker = _frame_maker("contest-green")
    for _ in range(4):
        image = maker.image(world)
        det = detect(image)
        assert det.found
        assert det.board == truth_as_read(det, "..O.X..X.", -27.6)


def test_a_bare_square_lit_by_the_white_pieces_around_it_is_bare() -> None:
    """Seed 11's sixth frame of the blue sweep: white pieces on three sides of the bare square 8 light
    its corners, so its middle differs from them as a long patch of the plate's own tone ("elongated",
    darker than the corners): unknown before, frame after frame."""
    frames = _sweep("contest-blue", seed=11, n=6)
    image, board, angle = frames[5]
    det = detect(image)
    assert det.found and not det.occluded
    assert det.board == truth_as_read(det, board, angle)
