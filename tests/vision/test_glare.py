"""A lamp's glare on a glossy board (glare.glare_light, and its second read in search.read_at_pose).

A glare adds light to the plate, the lines and the pieces under it alike. Over a bare square it is a light
round body without an edge, which the reader took for a white piece, sure; on a dark plate, the surface
through the squares' corners leaned towards it and a bare square beside it read black. The glare is
measured beside the lines (the lines are lit as much as the plate there, which no piece does), the
board is read again with it taken out, and a square read differently the two ways is unknown.

On our renderer (contest looks, a Gaussian glare 40-140 grey levels high, 0.4-1.2 pitch wide, 40 frames
each, session 44): light plates 93.9% -> 95.8% of squares right and squares wrong at >= 0.9 4 -> 0;
dark plates 95.6% -> 98.3%. On the tuning sets: 45,830 -> 45,822 of 46,188 right, wrong 132 -> 125,
clear frames passed wrong 66 -> 64, occluded read clear 68 -> 68.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from services.vision.detector import Detection, detect, search
from services.vision.detector.geometry import _Canon

from .looks import contest_scene
from .synth import Scene, draw
from .test_sweep import rotate_board

GLARE_FRAMES = 24
PLAIN_FRAMES = 24


@dataclass(frozen=True)
class Glared:
    scene: Scene
    image: np.ndarray
    height: float  # grey levels at its middle


def _with_glare(image: np.ndarray, centre: tuple[float, float], sigma: float, height: float) -> np.ndarray:
    """``image`` with a lamp's glare added: a round Gaussian of light, clipped at white."""
    h, w = image.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    light = height * np.exp(-((xs - centre[0]) ** 2 + (ys - centre[1]) ** 2) / (2 * sigma * sigma))
    return np.clip(image.astype(np.float32) + light[..., None], 0, 255).astype(np.uint8)


def _glared_frames(plate: str | None = None, seed: int = 48) -> Iterator[Glared]:
    rng = np.random.default_rng(seed)
    for i in range(GLARE_FRAMES):
        scene = contest_scene(rng, plate=plate)
        height = float(rng.uniform(40, 140))
        sigma = float(rng.uniform(0.4, 1.2)) * scene.pitch_px
        angle = float(rng.uniform(0, 2 * np.pi))
        off = float(rng.uniform(0, 1.3)) * scene.pitch_px
        centre = (scene.center[0] + off * np.cos(angle), scene.center[1] + off * np.sin(angle))
        yield Glared(scene, _with_glare(draw(scene, seed=i), centre, sigma, height), height)


def _wrong_sure(det: Detection, scene: Scene) -> int:
    turns = round((det.pose.angle_deg - scene.angle_deg) / 90)
    truth = rotate_board(scene.board, turns)
    return sum(
        read not in ("?", true) and square.confidence >= 0.9
        for square, read, true in zip(det.squares, det.board, truth, strict=True)
    )


@pytest.mark.parametrize("plate", [None, "dark"])
def test_no_square_read_wrong_and_sure_under_a_glare(plate: str | None) -> None:
    """Over 24 glared boards, no square is read wrong at >= 0.9. Before, 2 on these light plates: bare
    squares under the glare read white pieces at 1.0. (Over 12 such sets of 24, seeds 40-51: 10 before,
    1 now; on dark plates 0 before and now.)"""
    wrong = 0
    for frame in _glared_frames(plate):
        det = detect(frame.image)
        assert det.found
        wrong += _wrong_sure(det, frame.scene)
    assert wrong == 0


def test_the_glare_is_found_where_it_is_high(monkeypatch: pytest.MonkeyPatch) -> None:
    """A glare 80 grey levels high or more is found on most boards, its peak measured at a good share of
    its height. (Not all: where the glare clips a light plate at white, the plate rises less than the
    lines beside it, and those samples are not taken as the plate. Here 12 of 15.)"""
    found: list[float] = []

    def spy(canon: _Canon, half_width: float) -> np.ndarray | None:
        added = glare_light(canon, half_width)
        found.append(-1.0 if added is None else float(added.max()))
        return added

    glare_light = search.glare_light
    monkeypatch.setattr(search, "glare_light", spy)
    high = seen = 0
    for frame in _glared_frames():
        if frame.height < 80:
            continue
        found.clear()
        detect(frame.image)
        high += 1
        seen += any(peak >= 0.4 * frame.height for peak in found)
    assert high >= 8
    assert seen >= 0.75 * high


def test_no_glare_on_plain_boards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Boards without a glare (contest looks: gradients, vignetting, shadows of the pieces) show none."""
    found: list[bool] = []

    def spy(canon: _Canon, half_width: float) -> np.ndarray | None:
        added = glare_light(canon, half_width)
        found.append(added is not None)
        return added

    glare_light = search.glare_light
    monkeypatch.setattr(search, "glare_light", spy)
    rng = np.random.default_rng(45)
    for i in range(PLAIN_FRAMES):
        detect(draw(contest_scene(rng), seed=i))
    assert found and not any(found)
