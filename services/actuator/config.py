"""Configuration of the actuator and of the camera-to-table calibration (sections [actuator],
[calibration])."""

from __future__ import annotations

import msgspec

from services.common.section import Section


class ActuatorConfig(Section):
    #: the serial port; on the simulator the emulated controller's pseudo-terminal symlink.
    port: str = "{runtime}/sim-serial"
    #: "grbl" (G-code to GRBL 1.1) or "frame" (the binary protocol of docs/protocols.md).
    protocol: str = "grbl"
    baudrate: int = 115200
    #: seconds to wait for one reply (ok/error, an acknowledgement) before retrying or failing.
    reply_timeout_s: float = 2.0
    #: retries of a frame whose acknowledgement did not come.
    retries: int = 3
    #: home with $H at start (GRBL with homing switches).
    home_on_start: bool = True
    #: the M-codes that switch the magnet.
    magnet_on: str = "M8"
    magnet_off: str = "M9"
    #: heights in millimetres: travel high enough to clear pieces and lines, pick/place at the piece.
    travel_z_mm: float = 20.0
    pick_z_mm: float = 0.0
    feed_xy_mm_min: float = 6000.0
    feed_z_mm_min: float = 1500.0
    #: where the carriage waits after each job (x, y in table mm, at travel height): out of the camera's
    #: view of the board, so vision can confirm the placement. An empty list keeps it above the drop.
    park_mm: list[float] = msgspec.field(default_factory=lambda: [200.0, 290.0])
    #: magnet dwell after switching, seconds.
    dwell_s: float = 0.2
    #: the contest's limit for one placement.
    placement_budget_s: float = 15.0
    #: the persistent record of empty supply slots and completed command ids.
    state_file: str = "{state}/actuator.json"
    #: seconds a wait for the machine to finish its queued motion may take before it is a failure.
    motion_timeout_s: float = 30.0
    #: seconds a homing cycle may take.
    homing_timeout_s: float = 60.0
    #: seconds between status polls while waiting for motion to finish.
    status_poll_s: float = 0.05
    #: after an alarm (position lost), reset and home before the next command; false: refuse commands
    #: until someone homes or unlocks the machine (`sanzi motion home` / `sanzi motion unlock`).
    home_after_alarm: bool = True
    #: machines without homing switches: clear the controller's start-up lock with $X / UNLOCK instead of
    #: homing. Safe only if nothing moved the axes by hand since power-on; never used after an alarm.
    unlock_start_lock: bool = False
    #: where the controller stops must be within this of the planned point (mm), else the command fails.
    position_tolerance_mm: float = 0.5
    #: seconds between actuator.position messages (while moving and while idle).
    position_period_s: float = 0.2
    #: seconds between attempts to open the controller's port when it is not there.
    reconnect_s: float = 2.0


class CalibrationConfig(Section):
    #: camera pixels -> table millimetres, row-major 3x3; empty until `sanzi calibrate` writes it
    #: (the simulator's stack gets it from the simulated camera's calibration run by `sanzi sim`).
    homography: list[float] = []
    #: reprojection error of the last calibration, millimetres (for the record).
    error_mm: float = -1.0
