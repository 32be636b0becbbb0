"""A tiny, deliberately different drawing of a board: a second renderer for the detector's tests.

It is not the simulator's camera (services/simcam): it draws straight in pixels with an affine board
(no perspective), its own colours, line widths and pitches, round or cross-shaped black pieces, so that
the detector is checked against two independent looks. Truth is exact: the board's centre and angle
are the drawing's own parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

SUPERSAMPLE = 4


@dataclass(frozen=True)
class Scene:
    center: tuple[float, float] = (320.0, 240.0)
    angle_deg: float = 0.0
    pitch_px: float = 60.0
    line_px: float = 4.0
    board: str = "........."
    board_grey: int = 205
    line_grey: int = 40
    table_grey: int = 110
    white_grey: int = 240
    black_grey: int = 35
    piece_frac: float = 0.5
    #: pieces off the grid: (colour, x, y)
    supply: tuple[tuple[str, float, float], ...] = ()
    gradient: float = 0.0
    noise: float = 0.0
    blur: float = 0.0
    glare: bool = False
    shadow: bool = False
    crosses: bool = False
    #: a hand: (x, y) of the fingertips and the direction the arm comes from (degrees, 0 = bottom).
    hand: tuple[float, float, float] | None = None
    #: offset of each piece from its square centre, in pitches (same for all, for "piece on a line").
    piece_offset: tuple[float, float] = (0.0, 0.0)


def board_point(scene: Scene, dx: float, dy: float) -> tuple[float, float]:
    """Image point of board-frame offset (dx, dy) pixels from the centre (docs/geometry.md)."""
    a = math.radians(scene.angle_deg)
    cx, cy = scene.center
    return (cx + dx * math.cos(a) + dy * math.sin(a), cy - dx * math.sin(a) + dy * math.cos(a))


def square_centre(scene: Scene, n: int) -> tuple[float, float]:
    r, c = divmod(n - 1, 3)
    return board_point(scene, (c - 1) * scene.pitch_px, (r - 1) * scene.pitch_px)


def draw(scene: Scene, seed: int = 0) -> np.ndarray:
    """The scene as a 640x480 BGR image."""
    rng = np.random.default_rng(seed)
    w, h = 640, 480
    ss = SUPERSAMPLE
    img = np.full((h * ss, w * ss), scene.table_grey, np.float32)

    def pts(points: list[tuple[float, float]]) -> np.ndarray:
        return (np.array(points) * ss * 16).round().astype(np.int32).reshape(-1, 1, 2)

    p = scene.pitch_px
    margin = 0.25 * p
    half = 1.5 * p + margin
    plate = [board_point(scene, sx * half, sy * half) for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    cv2.fillPoly(img, [pts(plate)], scene.board_grey, cv2.LINE_AA, 4)
    lw = scene.line_px / 2
    for k in range(4):
        off = (k - 1.5) * p
        for horizontal in (False, True):
            if horizontal:
                quad = [
                    (-1.5 * p - lw, off - lw),
                    (1.5 * p + lw, off - lw),
                    (1.5 * p + lw, off + lw),
                    (-1.5 * p - lw, off + lw),
                ]
            else:
                quad = [
                    (off - lw, -1.5 * p - lw),
                    (off + lw, -1.5 * p - lw),
                    (off + lw, 1.5 * p + lw),
                    (off - lw, 1.5 * p + lw),
                ]
            cv2.fillPoly(
                img, [pts([board_point(scene, x, y) for x, y in quad])], scene.line_grey, cv2.LINE_AA, 4
            )
    pieces: list[tuple[str, float, float]] = []
    for n, ch in enumerate(scene.board, start=1):
        if ch in "XO":
            r, c = divmod(n - 1, 3)
            x, y = board_point(
                scene, (c - 1 + scene.piece_offset[0]) * p, (r - 1 + scene.piece_offset[1]) * p
            )
            pieces.append(("black" if ch == "X" else "white", x, y))
    pieces += list(scene.supply)
    rad = scene.piece_frac * p / 2
    for _colour, x, y in pieces:
        if scene.shadow:
            cv2.circle(
                img,
                (int((x + 3) * ss), int((y + 4) * ss)),
                int(rad * ss),
                scene.board_grey * 0.6,
                -1,
                cv2.LINE_AA,
            )
    for colour, x, y in pieces:
        grey = scene.black_grey if colour == "black" else scene.white_grey
        centre = (int(x * ss), int(y * ss))
        if colour == "black" and scene.crosses:
            arm = rad * 0.9
            t = rad * 0.35
            for ang in (45.0, -45.0):
                a = math.radians(ang)
                dx, dy = math.cos(a) * arm, math.sin(a) * arm
                cv2.line(
                    img,
                    (int((x - dx) * ss), int((y - dy) * ss)),
                    (int((x + dx) * ss), int((y + dy) * ss)),
                    grey,
                    int(2 * t * ss),
                )
        else:
            cv2.circle(img, centre, int(rad * ss), grey, -1, cv2.LINE_AA)
        if scene.glare:
            gx, gy = int((x - rad * 0.35) * ss), int((y - rad * 0.35) * ss)
            cv2.circle(img, (gx, gy), int(rad * 0.28 * ss), 255, -1, cv2.LINE_AA)
    if scene.hand is not None:
        hx, hy, from_deg = scene.hand
        a = math.radians(from_deg)
        # direction from the fingertips towards where the arm comes from (0 = the bottom edge)
        ux, uy = -math.sin(a), math.cos(a)
        vx, vy = uy, -ux
        width = 1.3 * p
        far = 900.0
        arm = [
            (hx + vx * width / 2, hy + vy * width / 2),
            (hx - vx * width / 2, hy - vy * width / 2),
            (hx - vx * width / 2 + ux * far, hy - vy * width / 2 + uy * far),
            (hx + vx * width / 2 + ux * far, hy + vy * width / 2 + uy * far),
        ]
        cv2.fillPoly(img, [pts(arm)], 170.0, cv2.LINE_AA, 4)
        cv2.ellipse(
            img,
            (int(hx * ss), int(hy * ss)),
            (int(width / 2 * ss), int(width / 2 * ss)),
            0,
            0,
            360,
            170.0,
            -1,
        )
    img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
    if scene.gradient:
        ramp = np.linspace(1.0 - scene.gradient, 1.0, w, dtype=np.float32)[None, :]
        img = img * ramp
    if scene.blur:
        img = cv2.GaussianBlur(img, (0, 0), scene.blur)
    if scene.noise:
        img = img + rng.normal(0.0, scene.noise, img.shape).astype(np.float32)
    grey = np.clip(img, 0, 255).astype(np.uint8)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)
