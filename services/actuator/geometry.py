"""From a square number to table millimetres: board pose -> image pixels -> table (pure numpy).

Vision's :class:`messages.BoardPose` carries the homography *image -> canonical board* (the grid spans
(0, 0)-(3, 3) in square units, square n's centre at (c + 0.5, r + 0.5)). Its inverse gives the square
centre in the image; the calibration homography (``calibration.homography``, image px -> table mm) gives
the table position. Going through the image keeps the actuator independent of how vision measured the
pose, and the perspective is handled exactly (a flat board is a plane, as the table is).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from messages import BoardPose
from services.common.config import SupplyColumn

BOARD_SQUARES: Final = 3


class GeometryError(ValueError):
    """A target cannot be computed: no calibration, no usable pose, a bad square or slot number."""


def as_matrix(values: Sequence[float], what: str) -> np.ndarray:
    """A row-major 9-float sequence as an invertible 3x3 matrix. :raises GeometryError:"""
    if len(values) != 9:
        raise GeometryError(f"{what} must have 9 values (row-major 3x3), got {len(values)}")
    m = np.asarray(values, dtype=float).reshape(3, 3)
    if not np.all(np.isfinite(m)) or abs(np.linalg.det(m)) < 1e-12:
        raise GeometryError(f"{what} is not an invertible 3x3 matrix")
    return m


def apply(h: np.ndarray, x: float, y: float) -> tuple[float, float]:
    """Apply homography ``h`` to the point (x, y). :raises GeometryError: for a point at infinity."""
    u, v, w = h @ np.array([x, y, 1.0])
    if abs(w) < 1e-12:
        raise GeometryError(f"point ({x}, {y}) maps to infinity")
    return float(u / w), float(v / w)


def homography_from_points(
    src: Sequence[tuple[float, float]], dst: Sequence[tuple[float, float]]
) -> np.ndarray:
    """The least-squares homography mapping ``src`` to ``dst`` (>= 4 point pairs), normalised DLT.

    :raises GeometryError: with fewer than 4 pairs or a degenerate set (collinear points).
    """
    if len(src) != len(dst) or len(src) < 4:
        raise GeometryError(f"a homography needs at least 4 point pairs, got {len(src)} and {len(dst)}")
    s, ts = _normalise(np.asarray(src, dtype=float))
    d, td = _normalise(np.asarray(dst, dtype=float))
    rows = []
    for (x, y), (u, v) in zip(s, d, strict=True):
        rows.append([-x, -y, -1, 0, 0, 0, u * x, u * y, u])
        rows.append([0, 0, 0, -x, -y, -1, v * x, v * y, v])
    _, sv, vt = np.linalg.svd(np.asarray(rows))
    if sv[-2] < 1e-9:
        raise GeometryError("the points are degenerate (collinear or repeated): no unique homography")
    hn = vt[-1].reshape(3, 3)
    h = np.linalg.inv(td) @ hn @ ts
    return h / h[2, 2]


def _normalise(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hartley normalisation: centroid at 0, mean distance sqrt(2)."""
    c = p.mean(axis=0)
    scale = np.sqrt(2) / max(float(np.mean(np.linalg.norm(p - c, axis=1))), 1e-12)
    t = np.array([[scale, 0, -scale * c[0]], [0, scale, -scale * c[1]], [0, 0, 1.0]])
    return (p - c) * scale, t


def square_rc(square: int) -> tuple[int, int]:
    """Square 1..9 -> (row, column). :raises GeometryError:"""
    if not isinstance(square, int) or not 1 <= square <= BOARD_SQUARES**2:
        raise GeometryError(f"square must be 1..9, got {square!r}")
    return (square - 1) // BOARD_SQUARES, (square - 1) % BOARD_SQUARES


def image_to_board(pose: BoardPose) -> np.ndarray:
    """The pose's image -> canonical homography, from ``pose.homography`` or, without one, from its
    four corners (TL, TR, BR, BL of the board -> (0,0), (3,0), (3,3), (0,3)).
    :raises GeometryError: when neither is usable."""
    if pose.homography:
        return as_matrix(pose.homography, "the board pose's homography")
    corners = [(p.x, p.y) for p in pose.corners_px]
    n = BOARD_SQUARES
    return homography_from_points(corners, [(0, 0), (n, 0), (n, n), (0, n)])


def square_center_px(pose: BoardPose, square: int) -> tuple[float, float]:
    """Square ``square``'s centre in image pixels."""
    r, c = square_rc(square)
    return apply(np.linalg.inv(image_to_board(pose)), c + 0.5, r + 0.5)


def square_center_mm(pose: BoardPose, square: int, calibration: np.ndarray) -> tuple[float, float]:
    """Square ``square``'s centre on the table (mm), through the image -> table ``calibration``."""
    u, v = square_center_px(pose, square)
    return apply(calibration, u, v)


def slot_mm(column: SupplyColumn, slot: int) -> tuple[float, float]:
    """Supply slot ``slot``'s position. :raises GeometryError: for a slot outside the column."""
    if not 0 <= slot < column.slots:
        raise GeometryError(f"supply slot must be 0..{column.slots - 1}, got {slot}")
    return column.x_mm + slot * column.dx_mm, column.y_mm + slot * column.dy_mm
