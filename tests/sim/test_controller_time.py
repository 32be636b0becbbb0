"""The controller's timing model, exactly, on an injected clock (no pty, no waiting): durations follow
distance / rate / speed, the planner holds back replies when full, M-codes synchronise."""

from __future__ import annotations

import struct
from typing import Any

import msgspec
import pytest

from services.common import frame as codec
from services.simworld import frame as F
from services.simworld.controller import ControllerError, EmulatedController


def controller(config: Any, protocol: str = "grbl", speed: float = 2.0, **sim: Any) -> EmulatedController:
    cfg = msgspec.structs.replace(
        config, simworld=msgspec.structs.replace(config.simworld, homing_lock=False, **sim)
    )
    ctl = EmulatedController(config=cfg, protocol=protocol, speed=speed, clock=lambda: 0.0)
    ctl.receive(b"", 0.0)  # discard the power-on banner
    return ctl


def test_feed_move_takes_distance_over_feed_divided_by_speed(config: Any) -> None:
    ctl = controller(config)
    assert ctl.receive(b"G1 X100 F6000\n", 0.0) == b"ok\r\n"
    # 100 mm at 6000 mm/min = 1 s simulated = 0.5 s real at speed 2
    assert ctl.receive(b"?", 0.25) == b"<Run|MPos:50.000,0.000,40.000|FS:6000,0>\r\n"
    assert ctl.receive(b"?", 0.5) == b"<Idle|MPos:100.000,0.000,40.000|FS:0,0>\r\n"
    assert ctl.snapshot().gripper.x_mm == 100.0


def test_rapid_moves_at_the_machine_rate_per_axis(config: Any) -> None:
    ctl = controller(config, speed=1.0)
    ctl.receive(b"G0 Z0\n", 0.0)  # 40 mm down at the z rate of 2000 mm/min = 1.2 s
    assert ctl.receive(b"?", 0.6).startswith(b"<Run|MPos:0.000,0.000,20.000|FS:2000,0>")
    assert ctl.receive(b"?", 1.2).startswith(b"<Idle|")


def test_a_full_planner_holds_the_ok_back(config: Any) -> None:
    ctl = controller(config, planner_blocks=2)
    out = ctl.receive(b"G1 X10 F600\nG1 X20 F600\nG1 X30 F600\n", 0.0)
    assert out == b"ok\r\nok\r\n"  # the third waits for room
    # each 10 mm at 600 mm/min = 1 s simulated = 0.5 s real
    assert ctl.tick(0.49) == b""
    assert ctl.tick(0.5) == b"ok\r\n"
    assert ctl.receive(b"?", 1.5) == b"<Idle|MPos:30.000,0.000,40.000|FS:0,0>\r\n"


def test_magnet_and_dwell_wait_for_the_planner(config: Any) -> None:
    ctl = controller(config)
    assert ctl.receive(b"G1 X100 F6000\nM8\nG4 P1\n", 0.0) == b"ok\r\n"
    assert not ctl.world.gripper.magnet
    assert ctl.tick(0.5) == b"ok\r\n"  # the move ended: M8 done; the dwell starts
    assert ctl.world.gripper.magnet
    assert ctl.tick(0.99) == b""  # 1 s dwell = 0.5 s real
    assert ctl.tick(1.0) == b"ok\r\n"


def test_reset_and_sim_time(config: Any) -> None:
    ctl = controller(config, speed=4.0)
    ctl.receive(b"G1 X100 F600\n", 0.0)
    out = ctl.receive(b"\x18", 1.0)
    assert out.startswith(b"ALARM:3\r\n\r\nGrbl 1.1h")
    assert ctl.world.gripper.x_mm == pytest.approx(40.0)  # 4 s simulated at 10 mm/s
    assert ctl.world.sim_time_s == pytest.approx(4.0)


def test_frame_queue_full_is_not_remembered(config: Any) -> None:
    ctl = controller(config, protocol="frame", planner_blocks=1)
    move = codec.encode_frame(1, F.MOVE, struct.pack(codec.MOVE_FORMAT, 10_000, 0, 40_000, 600))
    again = codec.encode_frame(2, F.MOVE, struct.pack(codec.MOVE_FORMAT, 20_000, 0, 40_000, 600))
    assert codec.FrameParser().feed(ctl.receive(move, 0.0))[0].payload == bytes([F.ST_OK])
    assert codec.FrameParser().feed(ctl.receive(again, 0.0))[0].payload == bytes([F.ST_QUEUE_FULL])
    # the same bytes later, when there is room, are executed (not answered from memory)
    assert codec.FrameParser().feed(ctl.receive(again, 0.5))[0].payload == bytes([F.ST_OK])
    ctl.tick(1.0)
    assert ctl.world.gripper.x_mm == 20.0


def test_bad_settings_are_clear_errors(config: Any) -> None:
    with pytest.raises(ControllerError, match="protocol"):
        EmulatedController(config=config, protocol="canbus")
    with pytest.raises(ControllerError, match="speed"):
        EmulatedController(config=config, speed=0)
