"""Configuration and calibration of one simulated run.

:func:`simulator_config` turns a loaded configuration into one run's (the simulator's processes, the
speed factor, the seeds, a fresh state folder); :func:`calibrate_simulator` calibrates the simulated
camera from its own picture of the table; :func:`image_angle` says at which angle that calibrated camera
sees the board of a plan.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any, Final

import msgspec

from services.common.config import Config
from services.referee.judge import EMPTY_BOARD

from .. import stack as stack_module
from .errors import SimError
from .plan import TaskPlan

#: Where `sanzi sim` keeps its persistent state inside the runtime folder: a fresh simulated table needs
#: a fresh journal and a fresh supply record, so this folder is emptied at the start of every run.
SIM_STATE_DIR: Final = "sim-state"
#: Board angles repeat every quarter turn: the board looks the same turned by 90 degrees.
BOARD_SYMMETRY_DEG: Final = 90.0
#: How far either side of its centre the board's x axis is followed to measure its angle in the image.
ANGLE_PROBE_MM: Final = 20.0


def simulator_config(
    base: Config,
    *,
    speed: float,
    seed: int,
    extra: dict[str, Any] | None = None,
    calibrate: bool = True,
) -> Config:
    """``base`` turned into the configuration of one simulated run: the simulator's processes, the speed
    factor, every seed derived from ``seed``, a private state folder (emptied), then ``extra`` overrides,
    then the calibration from the simulated camera when ``calibrate`` and none is configured.

    :raises SimError: for a non-positive speed or a calibration that fails.
    """
    if not speed > 0:
        raise SimError(f"--speed must be positive, got {speed}")
    config = stack_module.merge(base, stack_module.simulator_overrides(base))
    state_dir = Path(config.runtime.dir) / SIM_STATE_DIR
    overrides: dict[str, Any] = {
        "runtime": {"state_dir": str(state_dir)},
        "simworld": {"speed": float(speed), "seed": seed},
        "simcam": {"seed": seed},
        "simhuman": {"seed": seed},
        "referee": {"seed": seed},
        "ai": {"seed": seed},
    }
    config = stack_module.merge(config, overrides)
    # {state} was expanded at load time with the old folder: rebase every path that used it.
    old_state = base.runtime.state_dir
    config = stack_module.merge(config, _rebase(config, old_state, str(state_dir)))
    if extra:
        config = stack_module.merge(config, extra)
    if calibrate and not config.calibration.homography:
        homography, error_mm = calibrate_simulator(config)
        config = stack_module.merge(config, {"calibration": {"homography": homography, "error_mm": error_mm}})
    return config


def _rebase(config: Config, old: str, new: str) -> dict[str, Any]:
    """Overrides moving every string setting under ``old`` to ``new`` (except runtime.state_dir)."""
    out: dict[str, Any] = {}
    for section, values in msgspec.to_builtins(config).items():
        if section == "runtime":
            values = {k: v for k, v in values.items() if k != "state_dir"}
        for key, value in values.items():
            if isinstance(value, str) and old and value.startswith(old + "/"):
                out.setdefault(section, {})[key] = new + value[len(old) :]
    return out


def fresh_state(config: Config) -> None:
    """Empty the run's state folder (the referee's journal, the actuator's supply record): the simulated
    world starts with full supplies and an empty board every time."""
    state = Path(config.runtime.state_dir)
    if state.name == SIM_STATE_DIR and state.exists():
        shutil.rmtree(state)
    state.mkdir(mode=0o700, parents=True, exist_ok=True)


def calibrate_simulator(config: Config) -> tuple[list[float], float]:
    """Calibrate the simulated camera as a person would calibrate the real one: render the initial world
    (empty board at the configured pose, full supplies, the ArUco markers), find the markers, fit the
    homography. Returns (row-major 3x3 homography image px -> table mm, RMS reprojection error in mm).

    :raises SimError: when the markers are not found or the fit gives no usable homography.
    """
    # Imported here, not at the top: they bring cv2, which `sanzi sim --help` and the tests of planning
    # and judging do not need.
    from services.actuator.calibration import CalibrationError, calibrate_from_image
    from services.simcam.core import FrameMaker, frame_to_image
    from services.simcam.world import world_from_board

    sw = config.simworld
    world = world_from_board(
        EMPTY_BOARD,
        sw.board_angle_deg,
        (sw.board_x_mm, sw.board_y_mm),
        pitch_mm=sw.pitch_mm,
        table=config.table,
        line_width_mm=sw.line_width_mm,
        piece_diameter_mm=sw.piece_diameter_mm,
    )
    # Exactly the frame the simulated camera process would publish for this world.
    image = frame_to_image(FrameMaker.from_config(config).frame(world))
    try:
        calibration = calibrate_from_image(image, config.table)
    except CalibrationError as exc:
        raise SimError(f"calibrating the simulated camera failed: {exc}") from exc
    values = [float(v) for v in calibration.homography]
    if len(values) != 9 or not all(math.isfinite(v) for v in values):
        raise SimError(f"the calibration gave no usable homography: {values}")
    return values, float(calibration.error_mm)


def image_angle(config: Config, plan: TaskPlan) -> float:
    """The board's angle as the camera sees it (what vision reports) for the plan's pose on the table:
    the board's x axis carried into the image through the inverse of the calibration. Without a
    calibration, the table angle itself."""
    import numpy as np  # here: planning and judging do not need numpy

    if len(config.calibration.homography) != 9:
        return plan.board_angle_deg
    to_image = np.linalg.inv(np.asarray(config.calibration.homography, dtype=float).reshape(3, 3))
    a = math.radians(plan.board_angle_deg)
    ends = []
    for step in (-ANGLE_PROBE_MM, ANGLE_PROBE_MM):  # along the board's x axis, either side of its centre
        x = plan.board_x_mm + step * math.cos(a)
        y = plan.board_y_mm - step * math.sin(a)
        u, v, w = to_image @ (x, y, 1.0)
        ends.append((u / w, v / w))
    (u1, v1), (u2, v2) = ends
    # counter-clockwise positive as seen in the image, whose y axis points down
    return angle_diff(math.degrees(math.atan2(-(v2 - v1), u2 - u1)), 0.0)


def angle_diff(a: float, b: float) -> float:
    """Difference of two board angles modulo the board's 90-degree symmetry, in (-45, 45]."""
    d = (a - b) % BOARD_SYMMETRY_DEG
    return d - BOARD_SYMMETRY_DEG if d > BOARD_SYMMETRY_DEG / 2 else d
