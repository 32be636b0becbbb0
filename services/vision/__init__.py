"""The vision process: finds the board in camera frames and reads its squares.

Public API: :func:`detect` (a pure function of one image), :func:`track` (the same, confirming a last
good pose without a search when it still holds), :class:`Detection`, :class:`DetectorParams`,
:class:`StabilityFilter`, :class:`PoseTracker`, :class:`VisionCore` and the camera sources in
:mod:`services.vision.sources`.
"""

from __future__ import annotations

from services.common.lazy import lazy_getattr

#: each public name and the module it lives in: imported on first use, so that importing this
#: package's config (which every process does) does not load OpenCV and numpy.
_WHERE: dict[str, str] = {
    "Detection": "detector",
    "DetectorError": "detector",
    "DetectorParams": "detector",
    "SquareReading": "detector",
    "SupplyReading": "detector",
    "detect": "detector",
    "read_board": "detector",
    "track": "detector",
    "PoseTracker": "tracker",
    "StabilityFilter": "tracker",
    "VisionCore": "tracker",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_getattr(__name__, _WHERE)
