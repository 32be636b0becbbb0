"""The actuator against the simulator's emulated controller over a real pseudo-terminal, both protocols.

The truth comes from the simulated world: which piece moved, where it landed. The board is rotated by
31 degrees and its pose reaches the actuator as vision would report it (image -> canonical homography),
through the simulated camera's true calibration.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from messages import ActuatorCommand, ActuatorEvent, WorldState
from services.actuator.controller import Timing
from services.actuator.core import ActuatorCore
from services.actuator.record import ActuatorRecord
from services.common.log import get as get_log

from .conftest import FAST, make_controller, true_pose

#: the contest: a piece must end within its square; we hold the mechanism to 2 mm of the centre.
TOLERANCE_MM = 2.0


class Harness:
    """A connected controller, the core on it, and the events it emitted."""

    def __init__(
        self, sim: Any, config: Any, protocol: str, timing: Timing = FAST, **core_kwargs: Any
    ) -> None:
        self.world_ctl, port = sim
        self.config = config
        self.controller = make_controller(protocol, port, timing)
        self.record = ActuatorRecord(config.actuator.state_file, {"black": 5, "white": 5}).load()
        self.core = ActuatorCore(
            self.controller, config, self.record, log=get_log(test="actuator"), **core_kwargs
        )
        self.events: list[ActuatorEvent] = []

    async def __aenter__(self) -> Harness:
        await self.controller.connect()
        await self.core.startup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.controller.close()

    async def emit(self, event: ActuatorEvent) -> None:
        self.events.append(event)

    def world(self) -> WorldState:
        return self.world_ctl.snapshot()

    def place(self, square: int, colour: str = "black", command_id: str = "c1") -> ActuatorCommand:
        return ActuatorCommand(
            command_id=command_id,
            kind="place",
            colour=colour,
            to_square=square,
            pose=true_pose(self.world(), self.config),
        )

    async def run(self, cmd: ActuatorCommand) -> ActuatorEvent:
        return await self.core.execute(cmd, self.emit)


def square_centre(world: WorldState, square: int) -> tuple[float, float]:
    a = math.radians(world.board_angle_deg)
    r, c = divmod(square - 1, 3)
    du, dv = (c - 1) * world.pitch_mm, (r - 1) * world.pitch_mm
    cx, cy = world.board_center_mm
    return cx + du * math.cos(a) + dv * math.sin(a), cy - du * math.sin(a) + dv * math.cos(a)


def moved_pieces(before: WorldState, after: WorldState) -> list[int]:
    old = {p.piece_id: (p.x_mm, p.y_mm) for p in before.pieces}
    return [p.piece_id for p in after.pieces if math.dist(old[p.piece_id], (p.x_mm, p.y_mm)) > 0.01]


def piece(world: WorldState, piece_id: int) -> Any:
    return next(p for p in world.pieces if p.piece_id == piece_id)


def slot_piece(world: WorldState, colour: str, slot: int) -> int:
    return next(
        p.piece_id for p in world.pieces if p.colour == colour and p.where == "supply" and p.slot == slot
    )


async def test_place_moves_the_right_piece_to_the_rotated_square(
    sim: Any, config: Any, protocol: str
) -> None:
    async with Harness(sim, config, protocol) as h:
        before = h.world()
        assert before.board_angle_deg == pytest.approx(31.0)
        wanted = slot_piece(before, "black", 0)
        done = await h.run(h.place(3))
        after = h.world()
    assert [e.status for e in h.events] == ["accepted", "done"], h.events
    assert done.within_budget and done.duration_s > 0 and not done.repeat
    assert done.supply_black == 4 and done.supply_white == 5
    assert moved_pieces(before, after) == [wanted]
    p = piece(after, wanted)
    assert p.where == "board" and p.square == 3
    assert math.dist((p.x_mm, p.y_mm), square_centre(after, 3)) < TOLERANCE_MM
    assert after.board == "..X......"
    assert after.gripper.z_mm >= config.actuator.travel_z_mm and not after.gripper.magnet
    assert len(after.pieces) == 10


async def test_white_then_move_then_return(sim: Any, config: Any, protocol: str) -> None:
    async with Harness(sim, config, protocol) as h:
        white0 = slot_piece(h.world(), "white", 0)
        assert (await h.run(h.place(9, "white", "w1"))).status == "done"
        pose = true_pose(h.world(), config)
        moved = await h.run(
            ActuatorCommand(command_id="m1", kind="move", from_square=9, to_square=1, pose=pose)
        )
        assert moved.status == "done", moved.reason
        mid = h.world()
        assert mid.board == "O........"
        assert (
            math.dist((piece(mid, white0).x_mm, piece(mid, white0).y_mm), square_centre(mid, 1))
            < TOLERANCE_MM
        )
        back = await h.run(
            ActuatorCommand(command_id="r1", kind="return", colour="white", from_square=1, pose=pose)
        )
        assert back.status == "done", back.reason
        end = h.world()
    p = piece(end, white0)
    assert p.where == "supply" and p.slot == 0 and end.board == "........."
    assert back.supply_white == 5


async def test_lost_reply_is_retried_and_the_command_completes_once(
    sim: Any, config: Any, protocol: str
) -> None:
    async with Harness(sim, config, protocol) as h:
        before = h.world()
        h.world_ctl.inject("lose-reply", 3)
        done = await h.run(h.place(5))
        after = h.world()
    assert done.status == "done", done.reason
    assert h.controller.retries_used >= 1
    assert h.world_ctl.faults.committed["lose-reply"] == 3
    assert len(moved_pieces(before, after)) == 1 and after.board == "....X...."
    if protocol == "frame":
        assert h.world_ctl.engine.retries_answered >= 1  # the controller answered from memory


async def test_garbage_on_the_line_is_skipped(sim: Any, config: Any, protocol: str) -> None:
    async with Harness(sim, config, protocol) as h:
        h.world_ctl.inject("garbage", 4)
        done = await h.run(h.place(7))
        after = h.world()
    assert done.status == "done", done.reason
    assert h.world_ctl.faults.committed["garbage"] == 4
    if protocol == "grbl":
        assert h.controller.garbage_lines >= 4
    else:
        assert h.controller.parser.discarded > 0
    assert after.board == "......X.."


async def test_silent_controller_fails_the_command_with_a_reason(tmp_path: Any, protocol: str) -> None:
    from services.simworld.controller import EmulatedController

    from .conftest import SPEED, make_config

    config = make_config(tmp_path, simworld={"stall_s": 30.0})
    ctl = EmulatedController(config=config, protocol=protocol, speed=SPEED)
    port = ctl.start_pty(tmp_path / "sim-serial")
    try:
        timing = Timing(reply=0.15, motion=5.0, homing=5.0, poll=0.005, retries=2)
        async with Harness((ctl, port), config, protocol, timing) as h:
            ctl.inject("stall")
            failed = await h.run(h.place(2))
            assert failed.status == "failed"
            assert "no reply from controller" in failed.reason or "silent" in failed.reason, failed.reason
            assert h.record.outcome("c1").status == "failed"  # type: ignore[union-attr]
    finally:
        ctl.close()


async def test_alarm_is_reported_then_recovered_by_homing(sim: Any, config: Any, protocol: str) -> None:
    async with Harness(sim, config, protocol) as h:
        h.world_ctl.inject("alarm")
        failed = await h.run(h.place(4, command_id="a1"))
        assert failed.status == "failed"
        assert "alarm" in failed.reason and "1" in failed.reason, failed.reason
        # The next command first resets and homes (position was lost), then works.
        done = await h.run(h.place(6, command_id="a2"))
        after = h.world()
    assert done.status == "done", done.reason
    assert after.board[5] == "X"


async def test_alarm_without_homing_policy_refuses_to_move(sim: Any, tmp_path: Any, protocol: str) -> None:
    from .conftest import make_config

    config = make_config(tmp_path, actuator={"home_after_alarm": False})
    async with Harness(sim, config, protocol) as h:
        h.world_ctl.inject("alarm")
        assert (await h.run(h.place(4, command_id="a1"))).status == "failed"
        before = h.world()
        refused = await h.run(h.place(6, command_id="a2"))
        assert refused.status == "failed" and "sanzi motion home" in refused.reason, refused.reason
        assert moved_pieces(before, h.world()) == []


async def test_same_command_id_twice_places_one_piece_even_across_a_restart(
    sim: Any, config: Any, protocol: str
) -> None:
    async with Harness(sim, config, protocol) as h:
        cmd = h.place(8, command_id="once")
        first = await h.run(cmd)
        again = await h.run(cmd)
    assert first.status == "done" and again.status == "done" and again.repeat
    async with Harness(sim, config, protocol) as h2:  # a restarted actuator: fresh core, record from disk
        third = await h2.run(cmd)
        query = await h2.run(ActuatorCommand(command_id="once", kind="query"))
        unknown = await h2.run(ActuatorCommand(command_id="never", kind="query"))
        world = h2.world()
    assert third.status == "done" and third.repeat
    assert query.status == "done" and query.repeat and unknown.status == "unknown"
    assert world.board == ".......X."
    assert sum(1 for p in world.pieces if p.colour == "black" and p.where == "supply") == 4
    assert third.supply_black == 4


async def test_durations_and_recorded_times_come_from_the_cores_clocks(
    sim: Any, config: Any, protocol: str
) -> None:
    """The core reads no clock of its own: durations from ``clock``, the record's times from
    ``wall_clock``."""
    ticks = itertools.count()
    wall = 1_700_000_000.0
    async with Harness(sim, config, protocol, clock=lambda: float(next(ticks)), wall_clock=lambda: wall) as h:
        done = await h.run(h.place(4, command_id="timed"))
    assert done.status == "done" and done.duration_s == 1.0  # one tick between accepted and done
    outcome = h.record.outcome("timed")
    assert outcome is not None and outcome.time == wall and outcome.duration_s == 1.0


async def test_over_budget_is_reported(sim: Any, tmp_path: Any, protocol: str) -> None:
    from .conftest import make_config

    config = make_config(tmp_path, actuator={"placement_budget_s": 0.001})
    async with Harness(sim, config, protocol) as h:
        done = await h.run(h.place(5))
    assert done.status == "done" and not done.within_budget and done.duration_s > 0.001


async def test_a_command_interrupted_by_a_restart_is_not_repeated(
    sim: Any, config: Any, protocol: str
) -> None:
    from services.actuator.record import Outcome

    record = ActuatorRecord(config.actuator.state_file, {"black": 5, "white": 5})
    record.take("black", 0)  # the crash came after the pick
    record.set_outcome("half", Outcome(status="started", kind="place"))
    record.save()
    async with Harness(sim, config, protocol) as h:
        before = h.world()
        answer = await h.run(h.place(1, command_id="half"))
        query = await h.run(ActuatorCommand(command_id="half", kind="query"))
        after = h.world()
    assert answer.status == "failed" and answer.repeat and "interrupted by a restart" in answer.reason
    assert query.status == "failed" and moved_pieces(before, after) == []
    assert answer.supply_black == 4
