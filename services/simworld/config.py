"""Configuration of the simulated world and its emulated motion controller (section [simworld])."""

from __future__ import annotations

from services.common.config import Section


class SimWorldConfig(Section):
    #: every simulated duration (motion, the person's delays) is divided by this.
    speed: float = 1.0
    seed: int = 0
    #: the board: centre on the table (mm), rotation (degrees, counter-clockwise, within +-45).
    board_x_mm: float = 200.0
    board_y_mm: float = 150.0
    board_angle_deg: float = 0.0
    pitch_mm: float = 40.0
    line_width_mm: float = 2.5
    piece_diameter_mm: float = 22.0
    #: "grbl" or "frame": which protocol the emulated controller speaks.
    protocol: str = "grbl"
    #: the emulated controller's pseudo-terminal is published as this symlink.
    serial_link: str = "{runtime}/sim-serial"
    #: the magnet picks up a piece whose centre is within this distance.
    pick_tolerance_mm: float = 6.0
    #: faults injected from the start, e.g. ["drop:1", "lose-reply:2"].
    faults: list[str] = []
