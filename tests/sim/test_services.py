"""The simworld and simhuman processes' shells on a real bus (forwarders in-process, real ZeroMQ sockets)
and simworld's real pty."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import msgspec
import serial
import zmq.asyncio

from messages import ButtonLevel, FaultInjection, GameState, WorldAction, WorldState
from services.bus.client import Publisher, Subscriber
from services.common.shell import serve
from services.simhuman.person import button_levels
from services.simhuman.service import SimHumanService
from services.simworld.service import SimWorldService, WorldFileError, load_world_file

DEADLINE_S = 10.0


def fast(config: Any, **human: Any) -> Any:
    return msgspec.structs.replace(
        config,
        simworld=msgspec.structs.replace(config.simworld, speed=50.0, homing_lock=False),
        simhuman=msgspec.structs.replace(config.simhuman, **human),
    )


async def world_where(sub: Subscriber, predicate: Any, keep_publishing: Any = None) -> WorldState:
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if keep_publishing is not None:
            await keep_publishing()
        env = await sub.recv(timeout=0.05)
        if env is not None and isinstance(env.message, WorldState) and predicate(env.message):
            return env.message
    raise AssertionError("the world never got there")


async def test_simworld_publishes_applies_actions_and_serves_the_pty(bus: Any) -> None:
    config = fast(bus)
    service = SimWorldService(config)
    task = asyncio.create_task(serve(service))
    ctx = zmq.asyncio.Context()
    pub = Publisher(ctx, config.bus, "test")
    pub.open()
    sub = Subscriber(ctx, config.bus, ["sim.world"])
    try:
        first = await world_where(sub, lambda w: True)
        assert first.board == "." * 9 and len(first.pieces) == 10

        async def place() -> None:
            await pub.publish(
                "sim.action", WorldAction(action_id="a1", kind="place", colour="white", to_square=5)
            )

        # slow joiner: re-publish until it lands (a second place would show as a second piece, so stop
        # at the first world that has it and check the count)
        seen = await world_where(sub, lambda w: "O" in w.board, keep_publishing=place)
        assert seen.board[4] == "O"
        # a bad action is rejected, nothing changes, the service lives on
        await pub.publish("sim.action", WorldAction(action_id="bad", kind="move", from_square=1, to_square=2))
        await pub.publish("sim.fault", FaultInjection(kind="garbage", count=2))
        end = time.monotonic() + DEADLINE_S
        while service.controller.faults.pending("garbage") != 2 and time.monotonic() < end:
            await asyncio.sleep(0.01)
        assert service.controller.faults.pending("garbage") == 2
        assert service.actions_rejected >= 1
        # the pty is published where the actuator looks for it
        link = Path(config.simworld.serial_link)
        assert os.readlink(link).startswith("/dev/pts/")
        ser = serial.Serial(str(link), 115200, timeout=2.0)
        try:
            ser.write(b"$I\n")
            reply = ser.read_until(b"ok\r\n")
            assert b"[VER:1.1h" in reply
        finally:
            ser.close()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        sub.close()
        pub.close()
        ctx.term()
    assert not Path(config.simworld.serial_link).exists()


async def test_simhuman_moves_in_the_world_and_presses_the_button(bus: Any) -> None:
    config = fast(bus, policy="perfect", seed=3)
    world_service = SimWorldService(config)
    human_service = SimHumanService(config)
    tasks = [asyncio.create_task(serve(world_service)), asyncio.create_task(serve(human_service))]
    ctx = zmq.asyncio.Context()
    pub = Publisher(ctx, config.bus, "referee")
    pub.open()
    sub = Subscriber(ctx, config.bus, ["sim."])
    state = GameState(
        revision=1,
        game_id="g",
        phase="waiting-for-person",
        lamp=True,
        device_colour="black",
        person_colour="white",
        board="....X....",
        moves=[5],
    )
    try:
        levels: list[bool] = []
        world: WorldState | None = None
        end = time.monotonic() + DEADLINE_S
        while time.monotonic() < end and not (levels[-2:] == [True, False] and world and "O" in world.board):
            await pub.publish("referee.state", state)
            env = await sub.recv(timeout=0.05)
            if env is None:
                continue
            if isinstance(env.message, ButtonLevel):
                levels.append(env.message.pressed)
            elif isinstance(env.message, WorldState):
                world = env.message
        assert levels == [True, False]  # one press for the one turn, however often the state came
        assert world is not None and world.board.count("O") == 1 and world.board.count("X") == 0
        assert not world.hand.present
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        sub.close()
        pub.close()
        ctx.term()


def test_button_bounce_levels() -> None:
    assert button_levels(False, 0) == [False]
    assert button_levels(True, 1) == [True, False, True]


def test_world_file(tmp_path: Path, config: Any) -> None:
    from services.simworld.world import World

    world = World(config.simworld, config.table)
    world.place("black", 3)
    state = world.snapshot()
    path = tmp_path / "w.json"
    raw = msgspec.to_builtins(state)
    raw.pop("type")  # the tag may be left out
    path.write_bytes(msgspec.json.encode(raw))
    assert load_world_file(path).board == "..X......"
    path.write_text("{nope")
    try:
        load_world_file(path)
    except WorldFileError as exc:
        assert "not JSON" in str(exc)
    else:
        raise AssertionError("bad JSON accepted")


async def test_simhuman_terminal_mode_and_run_time_setup(config: Any) -> None:
    import io

    from messages import HumanSetup

    service = SimHumanService(fast(config, policy="you"), stdin=io.StringIO("7\n\n"), stdout=io.StringIO())
    try:
        state = GameState(
            revision=1,
            game_id="g",
            phase="waiting-for-person",
            lamp=True,
            device_colour="white",
            board="....O....",
            moves=[5],
        )
        steps = await service.plan(state)
        places = [s.action for s in steps if hasattr(s, "action")]
        assert [(a.kind, a.colour, a.to_square) for a in places] == [("place", "black", 7)]
        assert await service.plan(state) == []  # the same turn is not asked twice
        await service.on_message(HumanSetup(policy="mistake:2", misbehave=["two-pieces"], seed=9))
        assert service.person.config.policy == "mistake:2" and service.person.todo == {"two-pieces": None}
        await service.on_message(HumanSetup(policy="nonsense"))
        assert service.person.config.policy == "mistake:2" and "nonsense" in service.last_error
    finally:
        service.close()


def test_simworld_process_refuses_bad_settings_clearly(subprocess_env: dict[str, str]) -> None:
    import subprocess
    import sys

    for setting, words in (
        ("simworld.faults=['melt:1']", "unknown fault"),
        ("simworld.protocol='can'", "protocol"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "services.simworld", "--set", setting],
            env=subprocess_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 2, proc.stderr
        assert words in proc.stderr
