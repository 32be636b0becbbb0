"""A glossy black piece on a plate as dark as itself (light lines on it) differs by its highlight
alone: a small round bright blob near the square's middle (``squares.HIGHLIGHT_REACH``). Such a square
reads black, never surely; a lamp's reflection on the plate (a large soft patch) is no highlight.

The frames: tests/vision/synth.py's dark plate with light lines and white pieces, and on the squares of
the black pieces nothing but a soft highlight (the piece's body has the plate's own grey), drawn here.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from services.vision.detector import detect

from .looks import contest_scene
from .synth import Scene, draw, square_centre
from .test_sweep import rotate_board

FRAMES = 10


def _scene(rng: np.random.Generator) -> Scene:
    """A black plate with light lines, its black pieces left for the highlights (drawn bare)."""
    scene = contest_scene(rng, plate="dark")
    plate = float(rng.uniform(14, 30))
    return replace(
        scene,
        board_grey=(plate, plate, plate),
        supply=(),
        tilt=(0.0, 0.0),
        piece_jitter=0.0,
        jpeg_quality=0,
        motion_blur=0.0,
    )


def _with_blobs(scene: Scene, seed: int, squares: list[int], sigma: float, peak: float) -> np.ndarray:
    """``scene`` drawn with its black pieces as bare plate, and a soft round blob (a Gaussian of
    ``sigma`` pitches, ``peak`` grey levels high) a little off the middle of each of ``squares``."""
    bare = scene.board.replace("X", ".")
    image = draw(replace(scene, board=bare), seed=seed).astype(np.float32)
    yy, xx = np.mgrid[0 : image.shape[0], 0 : image.shape[1]].astype(np.float32)
    s = sigma * scene.pitch_px
    for n in squares:
        x, y = square_centre(scene, n)
        x, y = x + 0.08 * scene.pitch_px, y - 0.08 * scene.pitch_px  # the lamp is up and to the right
        blob = np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * s * s))
        image += peak * blob[..., None]
    return cv2.GaussianBlur(np.clip(image, 0, 255), (0, 0), 0.7).astype(np.uint8)


def _truth(scene: Scene, det_angle: float) -> str:
    return rotate_board(scene.board, round((det_angle - scene.angle_deg) / 90))


def test_black_pieces_seen_by_their_highlight_alone_read_black() -> None:
    rng = np.random.default_rng(5)
    blacks = read_black = confident_wrong = 0
    for i in range(FRAMES):
        scene = _scene(rng)
        squares = [n + 1 for n, c in enumerate(scene.board) if c == "X"]
        image = _with_blobs(scene, i, squares, float(rng.uniform(0.035, 0.05)), float(rng.uniform(100, 160)))
        det = detect(image)
        assert det.found and det.pose is not None
        truth = _truth(scene, det.pose.angle_deg)
        for square, read, true in zip(det.squares, det.board, truth, strict=True):
            blacks += true == "X"
            read_black += true == "X" and read == "X"
            confident_wrong += read not in ("?", true) and square.confidence >= 0.9
    assert blacks >= 15
    assert read_black >= 0.9 * blacks, f"{read_black} of {blacks} black pieces read black"
    assert confident_wrong == 0


def test_a_lamps_reflection_on_a_bare_square_is_never_a_sure_piece() -> None:
    """A soft patch of light on a bare square of a dark plate is no highlight (it is large) and reads
    no surer than ``squares.BETWEEN_CONFIDENCE``: lighter than the plate, short of the middle of the
    scale. (Measured when written: 9 of these 10 patches read as black pieces, at 0.75 to 1.0 before
    that cap. Telling the patch from a piece by its soft edge is not done yet.)"""
    rng = np.random.default_rng(6)
    confident_wrong = 0
    for i in range(FRAMES):
        scene = _scene(rng)
        scene = replace(scene, board=scene.board.replace("X", "."))
        bare = [n + 1 for n, c in enumerate(scene.board) if c == "."]
        image = _with_blobs(scene, i, bare[:1], float(rng.uniform(0.2, 0.3)), float(rng.uniform(30, 60)))
        det = detect(image)
        assert det.found and det.pose is not None
        truth = _truth(scene, det.pose.angle_deg)
        for square, read, true in zip(det.squares, det.board, truth, strict=True):
            confident_wrong += read not in ("?", true) and square.confidence >= 0.9
    assert confident_wrong == 0
