"""A whole simulated game: the device's pieces go through the serial port (GRBL or frames, real pty,
pyserial), the simulated person acts on the same world; all ten pieces are conserved throughout."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from services.simhuman.person import Act, Person, Press
from services.simworld import frame as F
from services.simworld.controller import EmulatedController
from services.simworld.world import supply_slot_xy

from .helpers import FrameClient, GrblClient
from .standin import MiniReferee

SPEED = 100.0
TRAVEL_Z = 20.0


def grbl_pick_place(c: GrblClient, src: tuple[float, float], dst: tuple[float, float]) -> None:
    for line in (
        f"G0 Z{TRAVEL_Z}",
        f"G0 X{src[0]:.3f} Y{src[1]:.3f}",
        "G1 Z0 F1500",
        "M8",
        "G4 P0.1",
        f"G1 Z{TRAVEL_Z} F1500",
        f"G0 X{dst[0]:.3f} Y{dst[1]:.3f}",
        "G1 Z0 F1500",
        "M9",
        "G4 P0.1",
        f"G0 Z{TRAVEL_Z}",
    ):
        assert c.send(line) == ["ok"], line
    c.wait_idle()


def frame_pick_place(c: FrameClient, src: tuple[float, float], dst: tuple[float, float]) -> None:
    for x, y, z, magnet in (
        (*src, TRAVEL_Z, None),
        (*src, 0.0, True),
        (*src, TRAVEL_Z, None),
        (*dst, TRAVEL_Z, None),
        (*dst, 0.0, False),
        (*dst, TRAVEL_Z, None),
    ):
        assert c.move(x, y, z, feed=0 if z else 1500).payload[0] == F.ST_OK
        if magnet is not None:
            assert c.request(F.MAGNET, bytes([magnet]))[1].payload[0] == F.ST_OK
            assert c.request(F.DWELL, struct.pack("<H", 100))[1].payload[0] == F.ST_OK
    c.wait_idle()


@pytest.fixture(params=["grbl", "frame"])
def rig(request: Any, config: Any, runtime_dir: Path) -> Iterator[tuple[EmulatedController, Any]]:
    cfg = msgspec.structs.replace(
        config, simworld=msgspec.structs.replace(config.simworld, homing_lock=False)
    )
    ctl = EmulatedController(config=cfg, protocol=request.param, speed=SPEED)
    port = ctl.start_pty(runtime_dir / "sim-serial")
    client: Any = GrblClient(port) if request.param == "grbl" else FrameClient(port)
    if request.param == "grbl":
        client.reset()
    yield ctl, client
    client.close()
    ctl.close()


def test_a_whole_game_through_the_serial_port(config: Any, rig: tuple[EmulatedController, Any]) -> None:
    ctl, client = rig
    world = ctl.world
    used = {"black": 0}

    def placer(colour: str, square: int) -> None:
        column = config.table.black_supply
        src = supply_slot_xy(column, used["black"])  # the device takes from slot 0 upwards
        used["black"] += 1
        before = ctl.snapshot()
        if isinstance(client, GrblClient):
            grbl_pick_place(client, src, world.square_center(square))
        else:
            frame_pick_place(client, src, world.square_center(square))
        after = ctl.snapshot()
        moved = [a.piece_id for a, b in zip(after.pieces, before.pieces, strict=True) if a != b]
        assert len(moved) == 1 and after.pieces[moved[0]].square == square  # exactly one piece, right place

    referee = MiniReferee(world, "X", seed=4, placer=placer)
    person = Person(
        msgspec.structs.replace(config.simhuman, misbehave=["move-device-piece:2", "two-pieces:3"]),
        speed=SPEED,
    )
    referee.device_move()
    for _ in range(30):
        state = referee.state()
        if state.result:
            break
        for step in person.on_state(state):
            if isinstance(step, Act):
                ctl.apply(step.action)
            elif isinstance(step, Press):
                # Not under ctl.lock: judging may make the device move, through the serial port, which
                # the controller thread must serve. The controller is idle meanwhile (no motion queued).
                referee.judge()
        with ctl.lock:
            world.check()
    assert referee.result in ("draw", "device-won")
    assert referee.cheats == 1 and referee.illegal_moves == 1
    snap = ctl.snapshot()
    assert snap.board == referee.logical
    assert len(snap.pieces) == 10 and snap.gripper.holding is None
    on_board = [p for p in snap.pieces if p.where == "board"]
    assert len(on_board) == sum(c != "." for c in referee.logical)
