"""Seeded geometric and photometric augmentation of the real photos, with their labels carried along.

Each of the ten photos in ../shared/data/real-photos is turned about its board's centre, scaled and
shifted with one affine matrix; the labelled square centres go through the same matrix, and the truth
board is numbered the way the detector must number it: square 1 is the top-left square after undoing the
board's total rotation (the photo's own angle plus the applied one). Then the pixels are changed the way
other cameras and rooms change them: brightness, contrast, gamma, a lighting gradient, Gaussian noise,
blur and JPEG re-compression.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[2]
PHOTOS = REPO / ".." / "shared" / "data" / "real-photos"
#: YOLO class -> board character: 0 empty, 1 white disc, 2 black cross (a black piece).
CLASS_CHARS = {0: ".", 1: "O", 2: "X"}


@dataclass(frozen=True)
class Photo:
    name: str
    image: np.ndarray
    #: labelled square centres in pixels (9, 2) and their characters.
    centres: np.ndarray
    chars: tuple[str, ...]


@dataclass(frozen=True)
class Augmented:
    image: np.ndarray
    #: the truth board in the detector's numbering, given the board's total rotation.
    board: str
    #: the applied rotation in degrees (counter-clockwise as seen in the image).
    rotation_deg: float
    #: the labelled board centre after the transform, pixels.
    centre: np.ndarray
    description: str


def photos() -> list[Photo]:
    out = []
    for path in sorted((PHOTOS / "images").glob("*.jpg")):
        image = cv2.imread(str(path))
        h, w = image.shape[:2]
        rows = np.loadtxt(PHOTOS / "labels" / (path.stem + ".txt"), ndmin=2)
        centres = rows[:, 1:3] * np.array([w, h])
        out.append(Photo(path.name, image, centres, tuple(CLASS_CHARS[int(c)] for c in rows[:, 0])))
    return out


def numbered(centres: np.ndarray, chars: tuple[str, ...], angle_deg: float) -> str:
    """The board string of labelled squares at ``centres`` on a board turned by ``angle_deg``
    (counter-clockwise in the image): undo the turn, then read rows top to bottom, left to right."""
    a = math.radians(angle_deg)
    c = centres - centres.mean(axis=0)
    # Inverse of the board's rotation (docs/geometry.md: x = dx cos a + dy sin a, y = -dx sin a + dy cos a).
    dx = c[:, 0] * math.cos(a) - c[:, 1] * math.sin(a)
    dy = c[:, 0] * math.sin(a) + c[:, 1] * math.cos(a)
    spread = max(np.ptp(dx), np.ptp(dy)) / 2.0
    col = np.clip(np.round(dx / spread) + 1, 0, 2).astype(int)
    row = np.clip(np.round(dy / spread) + 1, 0, 2).astype(int)
    cells = ["?"] * 9
    for r, k, ch in zip(row, col, chars, strict=True):
        cells[3 * r + k] = ch
    return "".join(cells)


def _photometric(image: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, list[str]]:
    h, w = image.shape[:2]
    img = image.astype(np.float32) / 255.0
    notes = []
    gamma = float(rng.uniform(0.7, 1.5))
    contrast = float(rng.uniform(0.7, 1.2))
    brightness = float(rng.uniform(-0.1, 0.1))
    img = np.power(img, gamma)
    img = (img - 0.5) * contrast + 0.5 + brightness
    notes.append(f"gamma {gamma:.2f} contrast {contrast:.2f} brightness {brightness:+.2f}")
    if rng.random() < 0.7:
        # A lighting gradient across the frame in a random direction.
        g = float(rng.uniform(0.2, 0.5))
        a = rng.uniform(0, 2 * math.pi)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        t = ((xx - w / 2) * math.cos(a) + (yy - h / 2) * math.sin(a)) / (0.5 * math.hypot(w, h))
        img = img * (1.0 - g / 2 + g / 2 * t)[..., None]
        notes.append(f"gradient {g:.2f}")
    if rng.random() < 0.3:
        # A colour cast (other white balance).
        cast = rng.uniform(0.85, 1.15, 3).astype(np.float32)
        img = img * cast
        notes.append("cast")
    img = np.clip(img * 255.0, 0, 255)
    blur = float(rng.uniform(0.0, 1.5))
    if blur > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), blur)
        notes.append(f"blur {blur:.1f}")
    noise = float(rng.uniform(0.0, 7.0))
    img = img + rng.normal(0.0, noise, img.shape).astype(np.float32)
    notes.append(f"noise {noise:.1f}")
    out = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.6:
        quality = int(rng.integers(35, 90))
        _ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        notes.append(f"jpeg {quality}")
    return out, notes


def augment(
    photo: Photo,
    rotation_deg: float,
    rng: np.random.Generator,
    photo_angle_deg: float = 0.0,
    tilt: float = 0.0,
) -> Augmented:
    """``photo`` turned by ``rotation_deg`` about its board's centre, scaled, shifted, relit; with
    ``tilt`` > 0 also seen in perspective (frame corners moved by up to that fraction of its size)."""
    h, w = photo.image.shape[:2]
    centre = photo.centres.mean(axis=0)
    scale = float(rng.uniform(0.8, 1.2))
    shift = rng.uniform(-1.0, 1.0, 2) * np.array([0.08 * w, 0.08 * h])
    m = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), rotation_deg, scale)
    m[:, 2] += shift
    # Pull the board back into the frame when the shift pushed part of it out.
    pts = photo.centres @ m[:, :2].T + m[:, 2]
    reach = 1.0 * np.ptp(photo.centres[:, 0]) * scale
    lo = pts.min(axis=0) - reach
    hi = pts.max(axis=0) + reach
    m[:, 2] += np.maximum(0, -lo) - np.maximum(0, hi - np.array([w, h]))
    full = np.vstack([m, [0.0, 0.0, 1.0]])
    if tilt > 0:
        # A camera not quite square to the table: the frame's corners move by up to ``tilt`` of its size.
        src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        dst = src + rng.uniform(-tilt, tilt, (4, 2)).astype(np.float32) * np.array([w, h], np.float32)
        full = cv2.getPerspectiveTransform(src, dst) @ full
    border = int(rng.integers(0, 3))
    if border == 0:
        warped = cv2.warpPerspective(
            photo.image, full, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
        )
    else:
        fill = tuple(int(v) for v in rng.integers(0, 255, 3))
        warped = cv2.warpPerspective(
            photo.image,
            full,
            (w, h),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=fill,
        )
    centres = cv2.perspectiveTransform(photo.centres.reshape(-1, 1, 2).astype(np.float64), full).reshape(
        -1, 2
    )
    image, notes = _photometric(warped, rng)
    board = numbered(centres, photo.chars, photo_angle_deg + rotation_deg)
    desc = f"{photo.name} rot {rotation_deg:+.1f} scale {scale:.2f} shift {shift.round(0)} " + ", ".join(
        notes
    )
    return Augmented(image, board, rotation_deg, centres.mean(axis=0), desc)
