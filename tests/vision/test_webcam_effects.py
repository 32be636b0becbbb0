"""What a cheap USB webcam does to a frame before the reader sees it, on our renderer's contest looks:
edge enhancement (an unsharp mask's halos along every line and piece), a YUYV 4:2:2 stream's colour
shared by each pair of pixels, a 320x240 sensor mode scaled up to 640x480. Each held in session 46 on 40
frames of seed 31 (100% of squares right, none wrong); here 12 frames each, every square right.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
import pytest

from services.vision.detector import detect

from .looks import contest_scene
from .synth import draw
from .test_sweep import rotate_board

FRAMES = 12
SEED = 31

Effect = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def sharpened(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An unsharp mask: amount 0.8-2, Gaussian 0.8-2 px (light halos beside dark edges, dark beside
    light ones)."""
    amount, sigma = float(rng.uniform(0.8, 2.0)), float(rng.uniform(0.8, 2.0))
    f = image.astype(np.float32)
    return np.clip(f + amount * (f - cv2.GaussianBlur(f, (0, 0), sigma)), 0, 255).astype(np.uint8)


def yuyv(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """YUYV 4:2:2: each pair of pixels along a row shares one colour (its mean), its grey kept."""
    yuv = cv2.cvtColor(image, cv2.COLOR_BGR2YUV).astype(np.float32)
    shared = (yuv[:, 0::2, 1:] + yuv[:, 1::2, 1:]) / 2
    yuv[:, 0::2, 1:], yuv[:, 1::2, 1:] = shared, shared
    return cv2.cvtColor(np.clip(yuv, 0, 255).astype(np.uint8), cv2.COLOR_YUV2BGR)


def upscaled(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Captured at 320x240 (area averaging), scaled up to 640x480 (bilinear)."""
    small = cv2.resize(image, (320, 240), interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (640, 480), interpolation=cv2.INTER_LINEAR)


@pytest.mark.parametrize("effect", [sharpened, yuyv, upscaled], ids=lambda f: f.__name__)
def test_contest_looks_through_a_webcam(effect: Effect) -> None:
    rng = np.random.default_rng(SEED)
    for i in range(FRAMES):
        scene = contest_scene(rng)
        image = effect(draw(scene, seed=i), np.random.default_rng([SEED, i]))
        det = detect(image)
        assert det.found, f"frame {i}: no board"
        truth = rotate_board(scene.board, round((det.pose.angle_deg - scene.angle_deg) / 90))
        assert det.board == truth, f"frame {i}: {det.board} for {truth}"
