"""Fixtures of the actuator tests: the simulator's emulated controller on a real pseudo-terminal, a
configuration whose calibration is the simulated camera's true mapping, and board poses from the
simulated world's truth (what a perfect vision would report)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from messages import BoardPose, Point, WorldState
from services.actuator.controller import Timing
from services.actuator.framed import FrameController
from services.actuator.grbl import GrblController
from services.common.config import load
from services.simcam.camera import CameraModel
from services.simworld.controller import EmulatedController

#: the emulated machine runs 50x faster than real time, so a placement takes a fraction of a second.
SPEED = 50.0
#: short timeouts so that failure tests end quickly; the emulator answers in well under a millisecond.
FAST = Timing(reply=0.4, motion=10.0, homing=10.0, poll=0.005, retries=3)


def make_config(tmp_path: Path, **sections: dict[str, Any]) -> Any:
    camera = CameraModel.from_config(load(None).simcam, load(None).table)
    overrides: dict[str, Any] = {
        "runtime": {"dir": str(tmp_path)},
        "actuator": {"state_file": str(tmp_path / "actuator.json"), "status_poll_s": 0.005},
        "calibration": {"homography": camera.image_to_table_homography().ravel().tolist()},
        "simworld": {"board_x_mm": 205.0, "board_y_mm": 152.0, "board_angle_deg": 31.0},
    }
    for name, values in sections.items():
        overrides[name] = {**overrides.get(name, {}), **values}
    return load(None, overrides=overrides)


def true_pose(world: WorldState, config: Any) -> BoardPose:
    """The board pose a perfect vision would publish: image -> canonical homography and corners."""
    camera = CameraModel.from_config(config.simcam, config.table)
    t2i = camera.table_to_image_homography()
    a = math.radians(world.board_angle_deg)
    p = world.pitch_mm
    cx, cy = world.board_center_mm
    # canonical (u, v) in square units, grid (0,0)-(3,3) -> table mm (docs/geometry.md)
    c2t = np.array(
        [
            [p * math.cos(a), p * math.sin(a), cx - 1.5 * p * (math.cos(a) + math.sin(a))],
            [-p * math.sin(a), p * math.cos(a), cy - 1.5 * p * (math.cos(a) - math.sin(a))],
            [0.0, 0.0, 1.0],
        ]
    )
    c2i = t2i @ c2t
    i2c = np.linalg.inv(c2i)
    i2c /= i2c[2, 2]

    def img(u: float, v: float) -> Point:
        x, y, w = c2i @ np.array([u, v, 1.0])
        return Point(float(x / w), float(y / w))

    corners = (img(0, 0), img(3, 0), img(3, 3), img(0, 3))
    return BoardPose(
        center_px=img(1.5, 1.5),
        angle_deg=world.board_angle_deg,
        corners_px=corners,
        homography=tuple(float(v) for v in i2c.ravel()),
    )


@pytest.fixture(params=["grbl", "frame"])
def protocol(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def config(tmp_path: Path) -> Any:
    return make_config(tmp_path)


@pytest.fixture
def sim(config: Any, protocol: str, tmp_path: Path) -> Iterator[tuple[EmulatedController, str]]:
    ctl = EmulatedController(config=config, protocol=protocol, speed=SPEED)
    port = ctl.start_pty(tmp_path / "sim-serial")
    try:
        yield ctl, port
    finally:
        ctl.close()


def make_controller(protocol: str, port: str, timing: Timing = FAST) -> GrblController | FrameController:
    if protocol == "grbl":
        return GrblController(port, timing=timing)
    return FrameController(port, timing=timing)
