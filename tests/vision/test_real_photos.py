"""The detector on real overhead photographs (../shared/data/real-photos, read in place, never copied).

The labels are YOLO lines, one per square but not in square order: each label is matched to the
detected square whose centre is nearest. A black cross counts as a black piece.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from services.vision.detector import detect

REPO = Path(__file__).resolve().parents[2]
PHOTOS = REPO / ".." / "shared" / "data" / "real-photos"
#: YOLO class -> board character: 0 empty, 1 white disc, 2 black cross.
CLASS_CHARS = {0: ".", 1: "O", 2: "X"}

pytestmark = pytest.mark.skipif(
    not (PHOTOS / "images").is_dir(), reason=f"real photos not present at {PHOTOS} (shared/ beside the clone)"
)


def _photos() -> list[Path]:
    return sorted((PHOTOS / "images").glob("*.jpg"))


def _truth(label: Path, centres: list[tuple[float, float]], width: int, height: int) -> str:
    rows = np.loadtxt(label, ndmin=2)
    assert len(rows) == 9, f"{label} should hold one line per square"
    truth = ["?"] * 9
    for cls, cx, cy, _w, _h in rows:
        px = np.array([cx * width, cy * height])
        nearest = int(np.argmin([np.hypot(*(np.array(c) - px)) for c in centres]))
        assert truth[nearest] == "?", f"{label}: two labels nearest square {nearest + 1}"
        truth[nearest] = CLASS_CHARS[int(cls)]
    return "".join(truth)


def test_all_ten_photos_every_square() -> None:
    photos = _photos()
    assert len(photos) == 10
    right = 0
    failures = []
    for photo in photos:
        image = cv2.imread(str(photo))
        assert image is not None, photo
        det = detect(image)
        assert det.found, f"{photo.name}: no board found"
        assert not det.occluded, f"{photo.name}: read as occluded ({det.occlusion:.0%})"
        # The photos are taken square to the board.
        assert abs(det.pose.angle_deg) < 3.0, (photo.name, det.pose.angle_deg)
        truth = _truth(
            PHOTOS / "labels" / (photo.stem + ".txt"), [s.center_px for s in det.squares], 640, 480
        )
        right += sum(a == b for a, b in zip(det.board, truth, strict=True))
        if det.board != truth:
            failures.append(f"{photo.name}: read {det.board}, labelled {truth}")
    assert not failures, "\n".join(failures)
    assert right == 90


def test_square_centres_match_the_labels() -> None:
    """Every labelled box centre lies within a third of a pitch of its square's centre."""
    for photo in _photos():
        det = detect(cv2.imread(str(photo)))
        rows = np.loadtxt(PHOTOS / "labels" / (photo.stem + ".txt"), ndmin=2)
        centres = np.array([s.center_px for s in det.squares])
        for _cls, cx, cy, _w, _h in rows:
            d = np.min(np.hypot(*(centres - np.array([cx * 640, cy * 480])).T))
            assert d < det.pitch_px / 3, (photo.name, d)
