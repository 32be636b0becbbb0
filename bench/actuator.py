"""Benchmark of the actuator: placement time on the simulator at speed 1, and the calibration error.

Run from the repository root as ``python bench/actuator.py`` (about 20 s: real-time motion).

What it measures, in the same run:

* one placement per protocol (GRBL and the frame protocol) through the emulated controller on a real
  pseudo-terminal at speed 1 (real time), from the homed position to a square of a board rotated by
  31 degrees, with the default heights, feeds and dwell of ``[actuator]``. Baseline: the pure kinematic
  time the plan implies (distance / feed, dwells; no acceleration in the emulator), so the ratio is the
  software and protocol overhead. Also compared with the contest's 15 s budget;
* the calibration from the simulated camera's rendered ArUco markers, over 13 rendered looks (simcam's
  style presets and seeded random ones): RMS residual and the largest error against the camera's true
  homography over the whole table (10 mm grid), for the edge-fitted corners (what ``sanzi calibrate``
  uses) against OpenCV's sub-pixel corners alone (the baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2
import numpy as np

from messages import ActuatorCommand, ActuatorEvent, BoardPose, Point
from services.actuator import planner as pl
from services.actuator.calibration import calibrate_from_image
from services.actuator.core import ActuatorCore
from services.actuator.drivers import make_controller
from services.actuator.record import ActuatorRecord
from services.common.config import load
from services.common.log import setup
from services.simcam.camera import CameraModel
from services.simcam.renderer import render
from services.simworld.controller import EmulatedController
from services.simworld.world import World

BOARD_ANGLE_DEG = 31.0


def _pose(world: Any, camera: CameraModel) -> BoardPose:
    a = math.radians(world.board_angle_deg)
    p = world.pitch_mm
    cx, cy = world.board_center_mm
    c2t = np.array(
        [
            [p * math.cos(a), p * math.sin(a), cx - 1.5 * p * (math.cos(a) + math.sin(a))],
            [-p * math.sin(a), p * math.cos(a), cy - 1.5 * p * (math.cos(a) - math.sin(a))],
            [0.0, 0.0, 1.0],
        ]
    )
    c2i = camera.table_to_image_homography() @ c2t
    i2c = np.linalg.inv(c2i)
    i2c /= i2c[2, 2]

    def img(u: float, v: float) -> Point:
        x, y, w = c2i @ np.array([u, v, 1.0])
        return Point(float(x / w), float(y / w))

    return BoardPose(
        center_px=img(1.5, 1.5),
        angle_deg=world.board_angle_deg,
        corners_px=(img(0, 0), img(3, 0), img(3, 3), img(0, 3)),
        homography=tuple(float(v) for v in i2c.ravel()),
    )


async def place_once(protocol: str, square: int, speed: float, folder: Path) -> dict[str, Any]:
    camera_cfg = load(None)
    camera = CameraModel.from_config(camera_cfg.simcam, camera_cfg.table)
    config = load(
        None,
        overrides={
            "runtime": {"dir": str(folder)},
            "actuator": {"state_file": str(folder / f"{protocol}.json"), "protocol": protocol},
            "calibration": {"homography": camera.image_to_table_homography().ravel().tolist()},
            "simworld": {"board_angle_deg": BOARD_ANGLE_DEG},
        },
    )
    sim = EmulatedController(config=config, protocol=protocol, speed=speed)
    port = sim.start_pty(folder / f"{protocol}-serial")
    log = setup("bench", "warning", "console", stream=sys.stderr)
    controller = make_controller(config.actuator, port=port, log=log)
    record = ActuatorRecord(config.actuator.state_file, {"black": 5, "white": 5})
    core = ActuatorCore(controller, config, record, log=log)
    events: list[ActuatorEvent] = []

    async def emit(event: ActuatorEvent) -> None:
        events.append(event)

    try:
        await controller.connect()
        await core.startup()
        world = sim.snapshot()
        cmd = ActuatorCommand(
            command_id="bench", kind="place", colour="black", to_square=square, pose=_pose(world, camera)
        )
        status = await controller.status()
        start = (status.x_mm, status.y_mm, status.z_mm)
        plan = pl.plan_command(
            cmd,
            start=start,
            pose=None,
            calibration=core.calibration,
            table=config.table,
            record=record,
            motion=core.motion,
        )
        estimate = pl.estimate_s(plan.steps, start)
        t0 = time.perf_counter()
        done = await core.execute(cmd, emit)
        wall = time.perf_counter() - t0
        after = sim.snapshot()
        piece = next(p for p in after.pieces if p.where == "board")
        r, c = divmod(square - 1, 3)
        a = math.radians(after.board_angle_deg)
        du, dv = (c - 1) * after.pitch_mm, (r - 1) * after.pitch_mm
        cx, cy = after.board_center_mm
        target = (cx + du * math.cos(a) + dv * math.sin(a), cy - du * math.sin(a) + dv * math.cos(a))
        return {
            "protocol": protocol,
            "status": done.status,
            "reported_s": done.duration_s,
            "wall_s": wall,
            "estimate_s": estimate / speed,
            "error_mm": math.dist((piece.x_mm, piece.y_mm), target),
            "within": done.within_budget,
        }
    finally:
        await controller.close()
        sim.close()


#: rendered looks the calibration is measured on (simcam's style presets and seeded random looks).
STYLES = ("default", "clean", "dark", "harsh", "dim", *(f"random:{i}" for i in range(8)))


def calibration_figures() -> list[tuple[str, float, float, float]]:
    """Per method: median RMS residual, median and worst largest-table-error over the styles (mm)."""
    from services.simcam.style import RenderStyle

    config = load(None)
    camera = CameraModel.from_config(config.simcam, config.table)
    world = World(config.simworld, config.table).snapshot()
    xs, ys = np.meshgrid(
        np.arange(0, config.table.width_mm + 1, 10.0), np.arange(0, config.table.height_mm + 1, 10.0)
    )
    pts = np.column_stack([xs.ravel(), ys.ravel()])
    px = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), camera.table_to_image_homography())
    images = [render(world, camera, seed=5, table=config.table, style=RenderStyle.preset(s)) for s in STYLES]
    rows = []
    for name, refine in (
        ("edge-fitted corners (sanzi calibrate)", True),
        ("OpenCV sub-pixel corners (baseline)", False),
    ):
        residuals, worst = [], []
        for image in images:
            cal = calibrate_from_image(image, config.table, refine_edges=refine)
            back = cv2.perspectiveTransform(px, cal.matrix()).reshape(-1, 2)
            residuals.append(cal.error_mm)
            worst.append(float(np.max(np.linalg.norm(back - pts, axis=1))))
        rows.append((name, float(np.median(residuals)), float(np.median(worst)), float(np.max(worst))))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", type=float, default=1.0, help="simulator speed factor (1 = real time)")
    parser.add_argument("--square", type=int, default=1, help="target square (1 is the farthest from home)")
    args = parser.parse_args()
    budget = load(None).actuator.placement_budget_s
    print(
        f"placement at speed {args.speed:g}: homed gripper -> black slot 0 -> square {args.square}, "
        f"board rotated {BOARD_ANGLE_DEG:g} deg"
    )
    print(
        f"{'protocol':<8} {'status':<7} {'reported s':>10} {'wall s':>8} {'kinematic s':>11} {'overhead':>9} "
        f"{'of budget':>9} {'error mm':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for protocol in ("grbl", "frame"):
            r = asyncio.run(place_once(protocol, args.square, args.speed, Path(tmp)))
            print(
                f"{r['protocol']:<8} {r['status']:<7} {r['reported_s']:>10.2f} {r['wall_s']:>8.2f} "
                f"{r['estimate_s']:>11.2f} {r['reported_s'] / r['estimate_s']:>8.2f}x "
                f"{r['reported_s'] / budget:>8.0%} {r['error_mm']:>8.3f}"
            )
    print()
    print(
        f"calibration from the simulated camera's markers (640x480, 4 markers, 16 points),"
        f" {len(STYLES)} looks"
    )
    print(f"{'method':<40} {'median RMS resid mm':>19} {'median max err mm':>17} {'worst max err mm':>16}")
    rows = calibration_figures()
    for name, rms, median_worst, worst in rows:
        print(f"{name:<40} {rms:>19.3f} {median_worst:>17.3f} {worst:>16.3f}")
    print(
        f"ratios baseline / ours: residual {rows[1][1] / rows[0][1]:.2f}x, median max table error "
        f"{rows[1][2] / rows[0][2]:.2f}x, worst {rows[1][3] / rows[0][3]:.2f}x"
    )
    print("(max table error: largest distance over a 10 mm grid of the table between a point and where the")
    print(" calibration maps the pixel the true camera model sees it at)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
