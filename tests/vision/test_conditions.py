"""The detector on the conditions of issue 11, each on its own, drawn by the second renderer
(tests/vision/synth.py with tests/vision/looks.py's contest looks): plates of every family (white, grey,
wood, dark, saturated, pastel), large pieces, white pieces within 20 grey levels of the plate, glossy
pieces, thin and thick lines, low JPEG quality, motion blur, warm and cool light, a 2:1 gradient,
vignetting, small and large pitches.

These looks are what the thresholds were tuned on (with tests/vision/flat); the held-out generator
(tests/vision/blind), which nothing was tuned on, is reported by bench/vision.py. The floors below are
the shares measured (on 2026-12-03 all 100% but JPEG 50-60, 95.8%), less a margin: they guard against
regressions, they do not prove the targets. No square is ever read wrong with a confidence of 0.9 or more.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from services.vision.detector import detect

from .looks import PLATES, contest_scene
from .synth import Scene, draw
from .test_sweep import rotate_board

FRAMES = 8


def _score(scenes: list[Scene]) -> tuple[float, int]:
    """Share of squares right, and squares read wrong (not unknown) with confidence >= 0.9."""
    right = confident_wrong = 0
    for i, scene in enumerate(scenes):
        det = detect(draw(scene, seed=i))
        turns = round((det.pose.angle_deg - scene.angle_deg) / 90) if det.pose else 0
        truth = rotate_board(scene.board, turns)
        for sq, a, b in zip(det.squares, det.board, truth, strict=False):
            confident_wrong += a not in ("?", b) and sq.confidence >= 0.9
        right += sum(a == b for a, b in zip(det.board, truth, strict=True))
    return right / (9 * len(scenes)), confident_wrong


def _looks(seed: int, change: object = None, plate: str | None = None) -> list[Scene]:
    rng = np.random.default_rng(seed)
    scenes = []
    for _ in range(FRAMES):
        scene = contest_scene(rng, plate=plate)
        scenes.append(change(scene, rng) if callable(change) else scene)
    return scenes


def _full_board(scene: Scene, rng: np.random.Generator) -> Scene:
    board = "".join(rng.permutation(list("XXXXXOOOO")))
    return replace(scene, board=board, supply=(), piece_frac=float(rng.uniform(0.76, 0.84)))


def _pitch(scene: Scene, pitch: float) -> Scene:
    """The same look at another pitch: lines keep their share of it, the board moves to the middle of
    the frame (supply columns are dropped: they would leave it)."""
    return replace(
        scene,
        pitch_px=pitch,
        line_px=scene.line_px / scene.pitch_px * pitch,
        center=(320.0, 240.0),
        supply=(),
    )


def _arm_shadow(scene: Scene, rng: np.random.Generator) -> Scene:
    """The soft shadow of the gantry's arm under a lamp: a band 0.3-1 pitch wide along either of the
    board's axes (give or take 5 degrees), taking 20-45% of the light, its edges 0.05-0.3 pitch soft."""
    along = 0.0 if rng.random() < 0.5 else 90.0
    band = (
        along + float(rng.uniform(-5, 5)),
        float(rng.uniform(-1.2, 1.2)),
        float(rng.uniform(0.3, 1.0)),
        float(rng.uniform(0.2, 0.45)),
        float(rng.uniform(0.05, 0.3)),
    )
    return replace(scene, arm_shadow=band)


def _engraved(scene: Scene, rng: np.random.Generator) -> Scene:
    """Engraved lines 4-10% of the pitch: a groove whose shaded wall is darker than the plate (45-75% of
    it) and whose lit wall is lighter (110-130% of it). (Thinner grooves, 2-4.5%, are the weak case:
    84% of squares right over 200 frames, 21 boards not found, on 2026-12-05; at these pitches such a
    groove is 1-4 px wide, each wall under a pixel or two, and the walls average to the plate's grey.)"""
    plate = np.array(scene.board_grey, float)
    shaded = tuple(float(v) for v in plate * rng.uniform(0.45, 0.75))
    lit = tuple(float(min(255.0, v)) for v in plate * rng.uniform(1.1, 1.3) + 10)
    width = float(rng.uniform(0.04, 0.1)) * scene.pitch_px
    return replace(scene, line_grey=shaded, groove=lit, line_px=width)


CONDITIONS: dict[str, tuple[object, float]] = {
    "large pieces (radius 0.38-0.44)": (
        lambda s, r: replace(s, piece_frac=float(r.uniform(0.76, 0.88)), piece_jitter=0.0),
        0.97,
    ),
    "small pieces (radius 0.20-0.25)": (lambda s, r: replace(s, piece_frac=float(r.uniform(0.4, 0.5))), 0.97),
    "glossy": (lambda s, r: replace(s, glare=True), 0.97),
    "matte": (lambda s, r: replace(s, glare=False), 0.97),
    "thin lines (2-4%)": (lambda s, r: replace(s, line_px=float(r.uniform(0.02, 0.04)) * s.pitch_px), 0.97),
    "thick lines (9-12%)": (lambda s, r: replace(s, line_px=float(r.uniform(0.09, 0.12)) * s.pitch_px), 0.97),
    "JPEG 50-60": (lambda s, r: replace(s, jpeg_quality=int(r.integers(50, 61))), 0.93),
    "motion blur 1-2 px": (lambda s, r: replace(s, motion_blur=float(r.uniform(1, 2))), 0.97),
    "warm light": (lambda s, r: replace(s, white_balance=(0.85, 1.0, 1.15)), 0.97),
    "cool light": (lambda s, r: replace(s, white_balance=(1.15, 1.0, 0.85)), 0.97),
    "2:1 gradient": (lambda s, r: replace(s, gradient=0.5), 0.97),
    "vignetting": (lambda s, r: replace(s, vignette=0.3), 0.97),
    "small pitch (35-45 px)": (lambda s, r: _pitch(s, float(r.uniform(35, 45))), 0.97),
    # (without shade.py's band, 87.5% on these frames and a square wrong at 0.9; with it, 94.4%)
    "the gantry arm's shadow across the board": (_arm_shadow, 0.9),
    # (95.8% on these frames when written)
    "engraved lines (4-10%)": (_engraved, 0.93),
    "large pitch (80-90 px)": (lambda s, r: _pitch(s, float(r.uniform(80, 90))), 0.97),
}


@pytest.mark.parametrize("plate", sorted(PLATES))
def test_every_plate_family(plate: str) -> None:
    share, confident_wrong = _score(_looks(11, plate=plate))
    assert share >= 0.97, f"{plate}: {share:.1%} of squares right"
    assert confident_wrong == 0, f"{plate}: {confident_wrong} squares wrong with confidence >= 0.9"


@pytest.mark.parametrize("condition", sorted(CONDITIONS))
def test_each_condition(condition: str) -> None:
    change, floor = CONDITIONS[condition]
    share, confident_wrong = _score(_looks(12, change))
    assert share >= floor, f"{condition}: {share:.1%} of squares right"
    assert confident_wrong == 0, f"{condition}: {confident_wrong} squares wrong with confidence >= 0.9"


def test_white_pieces_within_20_grey_levels_of_a_white_plate() -> None:
    def white_on_white(scene: Scene, rng: np.random.Generator) -> Scene:
        grey = float(np.mean(scene.board_grey)) + float(rng.uniform(-20, 20))
        return replace(scene, white_grey=(grey, grey, grey))

    share, confident_wrong = _score(_looks(13, white_on_white, plate="white"))
    assert share >= 0.9, f"{share:.1%} of squares right"
    assert confident_wrong <= 1


def test_a_full_board_of_large_pieces_is_found_and_read() -> None:
    scenes = _looks(14, _full_board)
    found = sum(detect(draw(s, seed=i)).found for i, s in enumerate(scenes))
    share, confident_wrong = _score(scenes)
    # Measured when written (12 frames): 11 of 12 found, 76% of squares right; now (8 frames) 8 of 8
    # found, every square right.
    assert found == len(scenes), f"{found}/{len(scenes)} full boards found"
    assert share >= 0.97, f"{share:.1%} of squares right"
    assert confident_wrong == 0
