"""The detector on the ten real photos, each turned (-40..+40 degrees about the board's centre), scaled,
shifted and relit in seeded ways (tests/vision/augment.py): what a different camera, room or mounting
would show. The truth travels with the pixels: the labelled centres go through the same matrix and are
renumbered from the board's total rotation."""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector import detect

from .augment import PHOTOS, augment, numbered, photos

pytestmark = pytest.mark.skipif(
    not (PHOTOS / "images").is_dir(), reason=f"real photos not present at {PHOTOS}"
)

AUGMENTS_PER_PHOTO = 12
ANGLE_TOL_DEG = 1.5
#: shares that must be met over all augmented frames (a few extreme looks may lose the board).
MIN_FOUND = 0.97
MIN_SQUARES_RIGHT = 0.985
MAX_SQUARES_WRONG = 0.006
TILTED_ANGLE_TOL_DEG = 3.5
TILTED_MIN_SQUARES_RIGHT = 0.97


@pytest.mark.parametrize(
    ("tilt", "per_photo", "angle_tol", "min_right"),
    [
        (0.0, AUGMENTS_PER_PHOTO, ANGLE_TOL_DEG, MIN_SQUARES_RIGHT),
        # Seen in perspective (frame corners moved by up to 3 %): the image angle of a board in
        # perspective depends on where it is measured, hence the wider tolerance.
        (0.03, 6, TILTED_ANGLE_TOL_DEG, TILTED_MIN_SQUARES_RIGHT),
    ],
)
def test_augmented_real_photos(tilt: float, per_photo: int, angle_tol: float, min_right: float) -> None:
    rng = np.random.default_rng(2026)
    # Rotations stratified over -40..+40 so that every photo sees both signs and large angles.
    rotations = np.linspace(-40.0, 40.0, per_photo)
    frames = found = right = wrong = 0
    failures = []
    for photo in photos():
        base = detect(photo.image)
        assert base.found and base.pose is not None, photo.name
        own = base.pose.angle_deg
        assert base.board == numbered(photo.centres, photo.chars, own), photo.name
        for rot in rng.permutation(rotations):
            rot = float(rot + rng.uniform(-3.0, 3.0))
            aug = augment(photo, float(np.clip(rot, -40.0, 40.0)), rng, own, tilt=tilt)
            det = detect(aug.image)
            frames += 1
            if not det.found or det.pose is None:
                failures.append(f"no board: {aug.description}")
                continue
            found += 1
            da = det.pose.angle_deg - (own + aug.rotation_deg)
            assert abs(da) <= angle_tol, f"angle off by {da:.2f}: {aug.description}"
            hits = sum(a == b for a, b in zip(det.board, aug.board, strict=True))
            right += hits
            wrong += sum(a != b and a != "?" for a, b in zip(det.board, aug.board, strict=True))
            if hits < 9:
                failures.append(f"read {det.board}, truth {aug.board}: {aug.description}")
    report = "\n".join(failures)
    assert found >= MIN_FOUND * frames, report
    assert right >= min_right * 9 * frames, f"{right}/{9 * frames} squares right\n{report}"
    assert wrong <= MAX_SQUARES_WRONG * 9 * frames, f"{wrong}/{9 * frames} squares wrong\n{report}"


def test_renumbering_follows_the_total_rotation() -> None:
    """The truth's own numbering: a quarter of a turn either way of 0 keeps square 1 top-left."""
    centres = np.array([[c * 10.0, r * 10.0] for r in range(3) for c in range(3)])
    chars = tuple("X........")
    assert numbered(centres, chars, 0.0) == "X........"
    # Turn the board 30 degrees counter-clockwise: square 1 is still the top-left after undoing it.
    a = np.radians(30.0)
    rot = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
    assert numbered(centres @ rot.T, chars, 30.0) == "X........"
