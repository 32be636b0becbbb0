"""Planning (pure): targets through pose and calibration, supply slots, the no-drag rule."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from messages import ActuatorCommand, BoardPose, Point
from services.actuator import geometry
from services.actuator import planner as pl
from services.actuator.record import ActuatorRecord
from services.common.config import load

MOTION = pl.Motion(travel_z=20.0, pick_z=0.0, feed_xy=6000.0, feed_z=1500.0, dwell_s=0.2)
SCALE = 2.0  # the test camera: 2 px per mm, no perspective


def pose_for(cx: float, cy: float, angle: float, pitch: float = 40.0) -> BoardPose:
    """A pose for a board at (cx, cy) mm rotated by ``angle`` (CCW), seen by a camera at SCALE px/mm."""
    a = math.radians(angle)
    c2t = np.array(
        [
            [pitch * math.cos(a), pitch * math.sin(a), cx - 1.5 * pitch * (math.cos(a) + math.sin(a))],
            [-pitch * math.sin(a), pitch * math.cos(a), cy - 1.5 * pitch * (math.cos(a) - math.sin(a))],
            [0, 0, 1],
        ]
    )
    c2i = np.diag([SCALE, SCALE, 1.0]) @ c2t
    corners = [geometry.apply(c2i, u, v) for u, v in ((0, 0), (3, 0), (3, 3), (0, 3))]
    i2c = np.linalg.inv(c2i)
    return BoardPose(
        center_px=Point(*geometry.apply(c2i, 1.5, 1.5)),
        angle_deg=angle,
        corners_px=tuple(Point(*c) for c in corners),  # type: ignore[arg-type]
        homography=tuple(i2c.ravel() / i2c[2, 2]),
    )


CALIBRATION = np.diag([1 / SCALE, 1 / SCALE, 1.0])


def expected_centre(
    cx: float, cy: float, angle: float, square: int, pitch: float = 40.0
) -> tuple[float, float]:
    a = math.radians(angle)
    r, c = divmod(square - 1, 3)
    dx, dy = (c - 1) * pitch, (r - 1) * pitch
    return cx + dx * math.cos(a) + dy * math.sin(a), cy - dx * math.sin(a) + dy * math.cos(a)


@pytest.fixture
def record(tmp_path: Path) -> ActuatorRecord:
    return ActuatorRecord(tmp_path / "a.json", {"black": 5, "white": 5})


@pytest.fixture
def table() -> Any:
    return load(None).table


@pytest.mark.parametrize("angle", [-44.9, -30.0, 0.0, 12.5, 45.0])
@pytest.mark.parametrize("square", range(1, 10))
def test_square_centres_follow_the_rotation(angle: float, square: int) -> None:
    pose = pose_for(200.0, 150.0, angle)
    got = geometry.square_center_mm(pose, square, CALIBRATION)
    assert math.dist(got, expected_centre(200.0, 150.0, angle, square)) < 1e-6
    # without a homography, the corners give the same answer
    bare = BoardPose(center_px=pose.center_px, angle_deg=angle, corners_px=pose.corners_px)
    assert math.dist(geometry.square_center_mm(bare, square, CALIBRATION), got) < 1e-6


def test_square_numbering_turns_with_the_board() -> None:
    # square 1 is top-left of the board: at +30 deg (CCW) it moves down-left of the unrotated spot
    x1, y1 = geometry.square_center_mm(pose_for(200, 150, 30.0), 1, CALIBRATION)
    x0, y0 = geometry.square_center_mm(pose_for(200, 150, 0.0), 1, CALIBRATION)
    assert (x0, y0) == pytest.approx((160, 110))
    assert y1 > y0 and x1 < x0 + 30


def test_place_plan(record: ActuatorRecord, table: Any) -> None:
    cmd = ActuatorCommand(
        command_id="p", kind="place", colour="white", to_square=5, pose=pose_for(200, 150, 20)
    )
    plan = pl.plan_command(
        cmd, start=(0, 0, 40), pose=None, calibration=CALIBRATION, table=table, record=record, motion=MOTION
    )
    assert plan.pick_mm == (table.white_supply.x_mm, table.white_supply.y_mm)
    assert plan.drop_mm == pytest.approx((200, 150))
    assert plan.slot == ("white", 0)
    pl.check_no_drag(plan.steps, (0, 0, 40), MOTION.travel_z)
    kinds = [type(s).__name__ for s in plan.steps]
    assert kinds.count("MagnetStep") == 2 and "SupplyStep" in kinds
    magnets = [s for s in plan.steps if isinstance(s, pl.MagnetStep)]
    assert [m.on for m in magnets] == [True, False]
    assert 2.0 < pl.estimate_s(plan.steps, (0, 0, 40)) < 15.0


def test_start_low_rises_first(record: ActuatorRecord, table: Any) -> None:
    cmd = ActuatorCommand(
        command_id="p", kind="place", colour="black", to_square=1, pose=pose_for(200, 150, 0)
    )
    plan = pl.plan_command(
        cmd,
        start=(100, 100, 0),
        pose=None,
        calibration=CALIBRATION,
        table=table,
        record=record,
        motion=MOTION,
    )
    first = plan.steps[0]
    assert isinstance(first, pl.MoveStep) and (first.x, first.y, first.z) == (100, 100, 20)
    pl.check_no_drag(plan.steps, (100, 100, 0), MOTION.travel_z)


def test_check_no_drag_catches_a_drag() -> None:
    with pytest.raises(pl.PlanError, match="sideways"):
        pl.check_no_drag([pl.MoveStep(50, 50, 0, 100)], (0, 0, 0), 20.0)
    with pytest.raises(pl.PlanError, match="magnet"):
        pl.check_no_drag([pl.MoveStep(0, 0, 20, 100), pl.MagnetStep(True)], (0, 0, 0), 20.0)


def test_supply_order_and_empty(record: ActuatorRecord, table: Any) -> None:
    pose = pose_for(200, 150, 0)
    for slot in range(5):
        cmd = ActuatorCommand(command_id=f"b{slot}", kind="place", colour="black", to_square=1, pose=pose)
        plan = pl.plan_command(
            cmd,
            start=(0, 0, 40),
            pose=None,
            calibration=CALIBRATION,
            table=table,
            record=record,
            motion=MOTION,
        )
        assert plan.slot == ("black", slot)
        record.take("black", slot)
    with pytest.raises(pl.PlanError, match="black supply is empty"):
        pl.plan_command(
            cmd,
            start=(0, 0, 40),
            pose=pose,
            calibration=CALIBRATION,
            table=table,
            record=record,
            motion=MOTION,
        )
    ret = ActuatorCommand(command_id="r", kind="return", colour="black", from_square=1, pose=pose)
    plan = pl.plan_command(
        ret, start=(0, 0, 40), pose=None, calibration=CALIBRATION, table=table, record=record, motion=MOTION
    )
    assert plan.slot == ("black", 4) and plan.drop_mm == geometry.slot_mm(table.black_supply, 4)


@pytest.mark.parametrize(
    ("cmd", "pose", "calibration", "message"),
    [
        (
            ActuatorCommand(command_id="x", kind="place", colour="black", to_square=5),
            None,
            CALIBRATION,
            "no board pose",
        ),
        (
            ActuatorCommand(command_id="x", kind="place", colour="black", to_square=5),
            pose_for(200, 150, 0),
            None,
            "calibration",
        ),
        (
            ActuatorCommand(command_id="x", kind="place", colour="black", to_square=10),
            pose_for(200, 150, 0),
            CALIBRATION,
            "1..9",
        ),
        (
            ActuatorCommand(command_id="x", kind="place", to_square=5),
            pose_for(200, 150, 0),
            CALIBRATION,
            "colour",
        ),
        (
            ActuatorCommand(command_id="x", kind="move", from_square=2, to_square=2),
            pose_for(200, 150, 0),
            CALIBRATION,
            "itself",
        ),
        (
            ActuatorCommand(command_id="x", kind="move", to_square=2),
            pose_for(200, 150, 0),
            CALIBRATION,
            "from_square",
        ),
        (
            ActuatorCommand(command_id="x", kind="return", colour="white", from_square=2),
            pose_for(200, 150, 0),
            CALIBRATION,
            "no emptied slot",
        ),
        (
            ActuatorCommand(command_id="x", kind="place", colour="black", to_square=1),
            pose_for(20, 15, 0),
            CALIBRATION,
            "outside the table",
        ),
        (
            ActuatorCommand(command_id="x", kind="place", colour="black", supply_slot=7, to_square=1),
            pose_for(200, 150, 0),
            CALIBRATION,
            "slot must be",
        ),
    ],
)
def test_plan_errors_say_why(
    cmd: ActuatorCommand, pose: Any, calibration: Any, message: str, record: ActuatorRecord, table: Any
) -> None:
    with pytest.raises(pl.PlanError, match=message):
        pl.plan_command(
            cmd,
            start=(0, 0, 40),
            pose=pose,
            calibration=calibration,
            table=table,
            record=record,
            motion=MOTION,
        )


def test_home_plan(record: ActuatorRecord, table: Any) -> None:
    plan = pl.plan_command(
        ActuatorCommand(command_id="h", kind="home"),
        start=(0, 0, 0),
        pose=None,
        calibration=None,
        table=table,
        record=record,
        motion=MOTION,
    )
    assert isinstance(plan.steps[0], pl.HomeStep)


def test_homography_from_points_matches_known() -> None:
    h = np.array([[1.2, 0.1, 5], [-0.05, 0.9, -3], [1e-4, 2e-4, 1]])
    src = [(0, 0), (100, 0), (100, 80), (0, 80), (50, 40), (20, 70)]
    dst = [geometry.apply(h, *p) for p in src]
    est = geometry.homography_from_points(src, dst)
    assert np.allclose(est, h / h[2, 2], atol=1e-9)
    with pytest.raises(geometry.GeometryError):
        geometry.homography_from_points(src[:3], dst[:3])
    with pytest.raises(geometry.GeometryError, match="9 values"):
        geometry.as_matrix([1.0, 2.0], "x")


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(["place", "move", "return"]),
    angle=st.floats(-45.0, 45.0),
    cx=st.floats(170.0, 230.0),
    cy=st.floats(130.0, 170.0),
    start=st.tuples(st.floats(0, 400), st.floats(0, 300), st.floats(-2, 50)),
    squares=st.permutations(range(1, 10)),
    colour=st.sampled_from(["black", "white"]),
)
def test_no_plan_ever_drags(
    kind: str,
    angle: float,
    cx: float,
    cy: float,
    start: tuple[float, float, float],
    squares: list[int],
    colour: str,
) -> None:
    """Every plan, from any start, for any pose: sideways only at the travel height, the magnet only
    when stopped, and it ends at the travel height above the target, magnet off."""
    table = load(None).table
    record = ActuatorRecord("/nonexistent/unused.json", {"black": 5, "white": 5})
    record.take(colour, 0)  # so that a return has a slot
    cmd = ActuatorCommand(
        command_id="p",
        kind=kind,  # type: ignore[arg-type]
        colour=colour,  # type: ignore[arg-type]
        from_square=squares[0],
        to_square=squares[1],
        pose=pose_for(cx, cy, angle),
    )
    plan = pl.plan_command(
        cmd, start=start, pose=None, calibration=CALIBRATION, table=table, record=record, motion=MOTION
    )
    pl.check_no_drag(plan.steps, start, MOTION.travel_z)
    moves = [s for s in plan.steps if isinstance(s, pl.MoveStep)]
    assert (moves[-1].x, moves[-1].y) == pytest.approx(plan.drop_mm) and moves[-1].z == MOTION.travel_z
    magnets = [s.on for s in plan.steps if isinstance(s, pl.MagnetStep)]
    assert magnets == [True, False] and isinstance(plan.steps[-1], pl.WaitStep)
