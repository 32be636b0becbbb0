"""The vision process: finds the board in camera frames and reads its squares.

Public API: :func:`detect` (a pure function of one image), :func:`track` (the same, confirming a last
good pose without a search when it still holds), :class:`Detection`, :class:`DetectorParams`,
:class:`StabilityFilter`, :class:`PoseTracker`, :class:`VisionCore` and the camera sources in
:mod:`services.vision.sources`.
"""

from __future__ import annotations

import importlib
from typing import Any

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


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value
