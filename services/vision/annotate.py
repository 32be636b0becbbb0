"""Draw a detection on its image: the grid, square numbers, states and confidences, supply pieces.

Used by ``sanzi detect --annotate`` and by the vision service when it saves an anomaly frame.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from .detector import Detection, homography_of

GRID_COLOUR: Final = (0, 200, 255)
OCCLUDED_COLOUR: Final = (0, 0, 255)
STATE_COLOURS: Final = {
    "empty": (200, 200, 200),
    "black": (60, 60, 60),
    "white": (255, 255, 255),
    "unknown": (0, 0, 255),
}
SUPPLY_COLOURS: Final = {"black": (255, 0, 255), "white": (255, 255, 0)}


def annotate(image: np.ndarray, det: Detection) -> np.ndarray:
    """A BGR copy of ``image`` with ``det`` drawn on it (the input is not modified)."""
    out = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR) if image.ndim == 2 else image.copy()
    if det.found and det.pose is not None:
        inv = np.linalg.inv(homography_of(det.pose))
        colour = OCCLUDED_COLOUR if det.occluded else GRID_COLOUR
        for k in range(4):
            for a, b in (((k, 0.0), (k, 3.0)), ((0.0, k), (3.0, k))):
                pts = np.array([a, b], np.float64).reshape(-1, 1, 2)
                (p, q) = cv2.perspectiveTransform(pts, inv).reshape(2, 2)
                cv2.line(out, _pt(p), _pt(q), colour, 1, cv2.LINE_AA)
        first = det.pose.corners_px[0]
        cv2.circle(out, _pt((first.x, first.y)), 5, colour, 2, cv2.LINE_AA)
        # Sizes follow the square, not the image: the labels must fit inside a square at any scale.
        pitch = det.pitch_px if det.pitch_px > 0 else 60.0
        small = max(0.3, pitch / 150.0)
        for sq in det.squares:
            cx, cy = float(sq.center_px[0]), float(sq.center_px[1])
            # the number in the square's upper left, the state and confidence centred below the middle
            _label(
                out, str(sq.number), (cx - 0.38 * pitch, cy - 0.18 * pitch), small, GRID_COLOUR, centre=False
            )
            _label(
                out, f"{sq.char} {sq.confidence:.2f}", (cx, cy + 0.3 * pitch), small, STATE_COLOURS[sq.state]
            )
        for piece in det.supply:
            cv2.circle(
                out,
                _pt(piece.center_px),
                max(2, int(piece.radius_px)),
                SUPPLY_COLOURS[piece.colour],
                1,
                cv2.LINE_AA,
            )
        c = det.pose.center_px
        summary = f"{det.board}  angle {det.pose.angle_deg:+.1f}  centre ({c.x:.0f},{c.y:.0f})"
        if det.occluded:
            summary += f"  OCCLUDED {det.occlusion:.0%}"
    else:
        summary = f"no board ({det.problem})"
    _outlined(out, summary, (8, 20), 0.5, (0, 255, 0))
    return out


def _label(
    out: np.ndarray,
    text: str,
    at: tuple[float, float],
    scale: float,
    colour: tuple[int, int, int],
    *,
    centre: bool = True,
) -> None:
    """``text`` outlined in black so that it reads on any background; centred on ``at`` or starting there."""
    (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    x, y = at
    org = (round(x - w / 2), round(y + h / 2)) if centre else (round(x), round(y + h / 2))
    _outlined(out, text, org, scale, colour)


def _outlined(
    out: np.ndarray, text: str, org: tuple[int, int], scale: float, colour: tuple[int, int, int]
) -> None:
    # The outline is the same thin text shifted around: a thicker stroke would advance the glyphs
    # further and drift away from the fill on long lines.
    for dx, dy in ((-1, -1), (-1, 1), (1, -1), (1, 1), (0, -1), (0, 1), (-1, 0), (1, 0)):
        cv2.putText(
            out, text, (org[0] + dx, org[1] + dy), cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), 1, cv2.LINE_AA
        )
    cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, 1, cv2.LINE_AA)


def _pt(p: tuple[float, float] | np.ndarray) -> tuple[int, int]:
    return round(float(p[0])), round(float(p[1]))
