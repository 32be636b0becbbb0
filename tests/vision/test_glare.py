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

A tube light's glare is long: a stripe 0.2-0.5 pitch wide (sigma) and 1.5-3 long, that no round blob
explains. It is fitted as a long Gaussian where the round one leaves more than a tenth of the lift
unexplained, and the board read again with it taken out only to doubt the first read (a narrow stripe
fitted a little off in angle or width comes out as a dark stripe beside a light one: on a dark plate, a
phantom black piece). A tube's glare across a dark plate also shows as a "shadow band" on either side of
it; a second read is taken whole only when the other light's read does not disagree. Session 46, tube
glares 40-140 grey levels high, 40 frames each of seeds 21 and 22: light plates 88.9/90.0% -> 88.1/90.6%
of squares right, wrong 7/6 -> 3/1, frames passed wrong 3/3 -> 2/1; dark plates 87.5/87.2% ->
86.4/87.2%, wrong 16/13 -> 0/1, passed wrong 5/5 -> 0/0. Round glares as before. The tuning sets: 52,136
-> 52,132 squares right, wrong 232 -> 227, passed wrong 94 -> 91, occluded read clear 74 -> 74.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from services.vision.detector import Detection, detect, glare, search
from services.vision.detector.geometry import _Canon
from services.vision.detector.glare import Glare

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


def _with_glare(
    image: np.ndarray,
    centre: tuple[float, float],
    sigma: float,
    height: float,
    across: float | None = None,
    angle: float = 0.0,
) -> np.ndarray:
    """``image`` with a lamp's glare added: a Gaussian of light, clipped at white; round, or ``sigma``
    long and ``across`` wide with its length at ``angle`` (radians) in the image (a tube light's)."""
    h, w = image.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    dx, dy = xs - centre[0], ys - centre[1]
    along, side = dx * np.cos(angle) + dy * np.sin(angle), dy * np.cos(angle) - dx * np.sin(angle)
    across = sigma if across is None else across
    light = height * np.exp(-0.5 * ((along / sigma) ** 2 + (side / across) ** 2))
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


def _tube_frames(plate: str | None, seed: int) -> Iterator[Glared]:
    """Contest looks under a tube light's glare: 40-140 grey levels high, 1.5-3 pitch long, 0.2-0.5 wide
    (sigmas), at any angle, its middle up to 1.3 pitch off the board's."""
    rng = np.random.default_rng(seed)
    for i in range(GLARE_FRAMES):
        scene = contest_scene(rng, plate=plate)
        pitch = scene.pitch_px
        angle = float(rng.uniform(0, np.pi))
        length, width = float(rng.uniform(1.5, 3.0)) * pitch, float(rng.uniform(0.2, 0.5)) * pitch
        height = float(rng.uniform(40, 140))
        way, off = float(rng.uniform(0, 2 * np.pi)), float(rng.uniform(0, 1.3)) * pitch
        centre = (scene.center[0] + off * np.cos(way), scene.center[1] + off * np.sin(way))
        image = _with_glare(draw(scene, seed=i), centre, length, height, width, angle)
        yield Glared(scene, image, height)


def _truth(det: Detection, scene: Scene) -> str:
    """The scene's board numbered as the reading numbers it (its quarter turns)."""
    return rotate_board(scene.board, round((det.pose.angle_deg - scene.angle_deg) / 90))


def _wrong_sure(det: Detection, scene: Scene) -> int:
    truth = _truth(det, scene)
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

    def spy(canon: _Canon, half_width: float) -> Glare | None:
        glare = glare_light(canon, half_width)
        found.append(-1.0 if glare is None else float(glare.added.max()))
        return glare

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

    def spy(canon: _Canon, half_width: float) -> Glare | None:
        glare = glare_light(canon, half_width)
        found.append(glare is not None)
        return glare

    glare_light = search.glare_light
    monkeypatch.setattr(search, "glare_light", spy)
    rng = np.random.default_rng(45)
    for i in range(PLAIN_FRAMES):
        detect(draw(contest_scene(rng), seed=i))
    assert found and not any(found)


def _passed_wrong(det: Detection, scene: Scene) -> bool:
    """Whether a frame was read as a clear, whole board, and wrong (a stability window would take it)."""
    return not det.occluded and "?" not in det.board and det.board != _truth(det, scene)


def test_tube_light_glares_leave_no_square_read_wrong_and_sure() -> None:
    """Over 24 light boards under a tube light's glare, no square wrong at >= 0.9."""
    wrong_sure = 0
    for frame in _tube_frames(None, seed=21):
        det = detect(frame.image)
        assert det.found
        wrong_sure += _wrong_sure(det, frame.scene)
    assert wrong_sure == 0


def test_tube_light_glares_on_dark_plates_leave_no_frame_read_whole_and_wrong() -> None:
    """Over 24 dark boards under a tube light's glare, no square wrong at >= 0.9 and no frame read whole
    and wrong. (Before, 2 frames passed wrong, read with a "shadow band" divided out beside the glare's
    lit stripe, black pieces gone, or with a phantom black piece where the stripe was taken out; with
    the long glare but without the two lights' agreement, 1.)"""
    passed_wrong = wrong_sure = 0
    for frame in _tube_frames("dark", seed=21):
        det = detect(frame.image)
        assert det.found
        wrong_sure += _wrong_sure(det, frame.scene)
        passed_wrong += _passed_wrong(det, frame.scene)
    assert (wrong_sure, passed_wrong) == (0, 0)


def test_a_tube_lights_glare_is_found_long(monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tube lights' glares 80 grey levels high or more are found, as long blobs: 12 of these 15
    (a round blob explains too little of such a stripe: 3 of them were found before)."""
    found: list[Glare | None] = []

    def spy(canon: _Canon, half_width: float) -> Glare | None:
        glare = glare_light(canon, half_width)
        found.append(glare)
        return glare

    glare_light = search.glare_light
    monkeypatch.setattr(search, "glare_light", spy)
    high = seen = 0
    for frame in _tube_frames(None, seed=21):
        if frame.height < 80:
            continue
        found.clear()
        detect(frame.image)
        high += 1
        seen += any(glare is not None and glare.long for glare in found)
    assert high >= 8
    assert seen >= 0.7 * high


def test_a_long_blob_is_fitted_as_long_and_a_round_one_as_round() -> None:
    """The blob fit alone (samples on a 3x3 grid's lines): a stripe 0.3 wide and 2 long at 30 degrees,
    and a round patch 0.6 wide, each 90 grey levels high."""
    t = np.linspace(-1.5, 1.5, 60)
    lines = np.arange(-1.5, 1.6, 1.0)
    u = np.concatenate([np.repeat(lines, t.size), np.tile(t, lines.size)])
    w = np.concatenate([np.tile(t, lines.size), np.repeat(lines, t.size)])
    a = np.radians(30.0)
    along, side = (u - 0.2) * np.cos(a) + w * np.sin(a), w * np.cos(a) - (u - 0.2) * np.sin(a)
    shape, height, _ = glare._blob(u, w, 90.0 * np.exp(-0.5 * ((along / 2.0) ** 2 + (side / 0.3) ** 2)))
    assert shape is not None and shape[2] != shape[3]
    assert abs(np.degrees(shape[4]) % 180.0 - 30.0) < 10.0
    assert abs(height - 90.0) < 15.0
    shape, height, _ = glare._blob(u, w, 90.0 * np.exp(-0.5 * ((u - 0.3) ** 2 + (w + 0.2) ** 2) / 0.36))
    assert shape is not None and shape[2] == shape[3]
    assert abs(height - 90.0) < 10.0
