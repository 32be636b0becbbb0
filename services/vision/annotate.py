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
    scale = max(0.35, min(out.shape[:2]) / 1000.0)
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
        for sq in det.squares:
            text = f"{sq.number}{sq.char} {sq.confidence:.2f}"
            org = (int(sq.center_px[0] - 22 * scale / 0.5), int(sq.center_px[1] + 4))
            cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), 3, cv2.LINE_AA)
            cv2.putText(
                out, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, STATE_COLOURS[sq.state], 1, cv2.LINE_AA
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
    cv2.putText(out, summary, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(out, summary, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 255, 0), 1, cv2.LINE_AA)
    return out


def _pt(p: tuple[float, float] | np.ndarray) -> tuple[int, int]:
    return round(float(p[0])), round(float(p[1]))
