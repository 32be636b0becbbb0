"""Configuration of the simulated world and its emulated motion controller (section [simworld])."""

from __future__ import annotations

from typing import Final

from services.common.section import Section

#: the speed factors the simulator runs at (``speed``, and a ``speed`` world action at run time): a
#: tenth of real time up to a hundred times it.
MIN_SPEED: Final = 0.1
MAX_SPEED: Final = 100.0


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
    #: the board's plate extends this far beyond the outer squares (mm); colours are BGR.
    plate_margin_mm: float = 12.0
    board_colour: tuple[int, int, int] = (205, 210, 200)
    line_colour: tuple[int, int, int] = (35, 35, 35)
    #: the magnet grips only when the gripper is at most this high (z = 0: touching a piece's top).
    pick_height_mm: float = 2.0
    #: where homing leaves the gripper, and where it stands at power-on: [x, y, z] mm.
    home_mm: tuple[float, float, float] = (0.0, 0.0, 40.0)
    #: the z travel (x and y travel are the table's width and height).
    z_min_mm: float = -5.0
    z_max_mm: float = 60.0
    #: machine rates (mm/min): G0 moves at these, G1 feeds are capped by them.
    rapid_xy_mm_min: float = 8000.0
    rapid_z_mm_min: float = 2000.0
    #: simulated seconds a homing cycle takes.
    homing_s: float = 1.5
    #: GRBL with homing switches starts (and restarts after a reset in motion) in ALARM until $H or $X.
    homing_lock: bool = True
    #: motion blocks the planner holds (GRBL: 15 usable of 16).
    planner_blocks: int = 15
    #: the magnet M-codes the emulated GRBL understands (match actuator.magnet_on / magnet_off).
    magnet_on: str = "M8"
    magnet_off: str = "M9"
    #: real seconds (not scaled by speed) the controller stops answering on a "stall" fault.
    stall_s: float = 3.0
    #: where the person lays a piece taken off the board when its supply column has no free slot.
    discard_x_mm: float = 130.0
    discard_y_mm: float = 266.0
    discard_dx_mm: float = 26.0
    #: the person puts pieces down within this distance of a square's centre (seeded).
    place_jitter_mm: float = 2.0
    #: optional JSON file of a WorldState to start from ("" = every piece in its supply slot).
    world_file: str = ""
    #: seconds between periodic sim.world messages (it is also published on every change).
    publish_period_s: float = 0.1
