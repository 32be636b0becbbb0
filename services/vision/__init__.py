"""The vision process: finds the board in camera frames and reads its squares.

Public API: :func:`detect` (a pure function of one image), :func:`track` (the same, confirming a last
good pose without a search when it still holds), :class:`Detection`, :class:`DetectorParams`,
:class:`StabilityFilter`, :class:`PoseTracker`, :class:`VisionCore` and the camera sources in
:mod:`services.vision.sources`.
"""

from .detector import (
    Detection,
    DetectorError,
    DetectorParams,
    SquareReading,
    SupplyReading,
    detect,
    read_board,
    track,
)
from .tracker import PoseTracker, StabilityFilter, VisionCore

__all__ = [
    "Detection",
    "DetectorError",
    "DetectorParams",
    "PoseTracker",
    "SquareReading",
    "StabilityFilter",
    "SupplyReading",
    "VisionCore",
    "detect",
    "read_board",
    "track",
]
