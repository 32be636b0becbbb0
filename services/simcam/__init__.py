"""The simcam process: renders the simulated world as a camera above the table sees it.

Public API (pure, no bus): :func:`render`, :class:`CameraModel`, :class:`RenderStyle`,
:func:`world_from_board`, :func:`load_world`. The process itself is :mod:`services.simcam.service`.
"""

from __future__ import annotations

from services.common.lazy import lazy_getattr

#: each public name and the module it lives in: imported on first use, so that importing this
#: package's config (which every process does) does not load OpenCV and numpy.
_WHERE: dict[str, str] = {
    "CameraError": "camera",
    "CameraModel": "camera",
    "Renderer": "renderer",
    "RenderError": "renderer",
    "render": "renderer",
    "renderer_for": "renderer",
    "PRESETS": "style",
    "RenderStyle": "style",
    "StyleError": "style",
    "WorldFormatError": "world",
    "board_of": "world",
    "load_world": "world",
    "square_at": "world",
    "square_centre": "world",
    "supply_position": "world",
    "world_from_board": "world",
    "world_from_file_data": "world",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_getattr(__name__, _WHERE)
