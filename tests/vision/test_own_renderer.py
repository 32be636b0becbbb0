"""The detector on an independent renderer (tests/vision/synth.py with random looks from
tests/vision/looks.py): wood, painted and dark plates, thick and thin lines, discs with and without
a rim, crosses for black, coloured supply trays and clutter on the table. Nothing of services/simcam's
look, so what passes here is not fitted to the simulator."""

from __future__ import annotations

import numpy as np

from services.vision.detector import detect

from .looks import random_scene
from .synth import draw
from .test_sweep import check

FRAMES = 80


def test_random_looks_every_square_angle_and_centre() -> None:
    rng = np.random.default_rng(31)
    failures, unknown = [], 0
    for i in range(FRAMES):
        scene = random_scene(rng)
        det = detect(draw(scene, seed=i))
        errors = check(det, scene.board, np.array(scene.center), scene.angle_deg)
        if errors:
            failures.append(f"look {i}: {'; '.join(errors)}")
        unknown += "?" in det.board
    assert not failures, "\n".join(failures)
    assert unknown <= 1


def test_random_looks_at_plus_minus_45_degrees() -> None:
    """At 45 degrees either numbering is right; the one used must agree with the reported angle."""
    rng = np.random.default_rng(32)
    for i, angle in enumerate([-45.0, 45.0, -44.7, 44.7, 45.0, -45.0]):
        scene = random_scene(rng, angle_deg=angle)
        det = detect(draw(scene, seed=i))
        assert not check(det, scene.board, np.array(scene.center), scene.angle_deg), i
