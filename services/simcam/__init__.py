"""The simcam process: renders the simulated world as a camera above the table sees it.

Public API (pure, no bus): :func:`render`, :class:`CameraModel`, :class:`RenderStyle`,
:func:`world_from_board`, :func:`load_world`. The process itself is :mod:`services.simcam.service`.
"""

from .camera import CameraError, CameraModel
from .render import Renderer, RenderError, render, renderer_for
from .style import PRESETS, RenderStyle, StyleError
from .world import (
    WorldFormatError,
    board_of,
    load_world,
    square_at,
    square_centre,
    supply_position,
    world_from_board,
    world_from_file_data,
)

__all__ = [
    "PRESETS",
    "CameraError",
    "CameraModel",
    "RenderError",
    "RenderStyle",
    "Renderer",
    "StyleError",
    "WorldFormatError",
    "board_of",
    "load_world",
    "render",
    "renderer_for",
    "square_at",
    "square_centre",
    "supply_position",
    "world_from_board",
    "world_from_file_data",
]
