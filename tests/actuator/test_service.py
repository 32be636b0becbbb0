"""The actuator process's shell on a real bus (in-process forwarder) with the emulated controller on a
real pty: a command without a pose uses vision's last one; a repeated id is answered from the record;
position is published."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from messages import ActuatorCommand, ActuatorEvent, ActuatorPosition, BoardObservation
from services.actuator.service import ActuatorService
from services.common.log import get as get_log
from services.simworld.controller import EmulatedController
from tests.inprocess import bus_sockets, in_process_bus, running

from .conftest import SPEED, make_config, true_pose

DEADLINE_S = 15.0


async def test_commands_over_the_bus(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        actuator={"reply_timeout_s": 0.5, "position_period_s": 0.05, "protocol": "frame"},
    )
    sim = EmulatedController(config=config, protocol="frame", speed=SPEED)
    sim.start_pty(config.actuator.port)
    service = ActuatorService(config, get_log(test="actuator-service"))
    try:
        with in_process_bus(config.bus):
            async with running(service, shutdown=True) as (runner,), bus_sockets(config.bus) as sockets:
                pub = sockets.publisher("referee")
                sub = sockets.subscriber(["actuator."])
                events: list[ActuatorEvent] = []
                positions: list[ActuatorPosition] = []

                async def wait_for(predicate: Any, what: str, action: Any = None) -> None:
                    deadline = time.monotonic() + DEADLINE_S
                    while not predicate():
                        assert time.monotonic() < deadline, f"timed out waiting for {what}; events {events}"
                        assert not runner.done(), runner
                        if action is not None:
                            await action()
                        env = await sub.recv(timeout=0.05)
                        if env is not None and isinstance(env.message, ActuatorEvent):
                            events.append(env.message)
                        elif env is not None and isinstance(env.message, ActuatorPosition):
                            positions.append(env.message)

                await wait_for(lambda: service.ready.is_set() and positions, "the controller and a position")
                pose = true_pose(sim.snapshot(), config)
                obs = BoardObservation(frame_id=1, found=True, board=".........", pose=pose, stable=True)

                async def show_board() -> None:
                    await pub.publish("vision.stable", obs)

                await wait_for(lambda: service.core.pose is not None, "the pose", show_board)
                cmd = ActuatorCommand(command_id="g1-1", kind="place", colour="black", to_square=9)
                await pub.publish("actuator.command", cmd)
                await wait_for(lambda: any(e.status == "done" for e in events), "done")
                assert [e.status for e in events] == ["accepted", "done"]
                assert sim.snapshot().board == "........X"
                await pub.publish("actuator.command", cmd)
                await pub.publish("actuator.command", ActuatorCommand(command_id="g1-1", kind="query"))
                await wait_for(lambda: len(events) >= 4, "the repeat and the query")
                assert all(e.status == "done" and e.repeat for e in events[2:4])
                assert sim.snapshot().board == "........X"
                travel = config.actuator.travel_z_mm
                await wait_for(
                    lambda: positions[-1].state == "Idle" and positions[-1].z_mm >= travel, "idle, high"
                )
                assert any(p.state == "Run" for p in positions)  # published while moving too
    finally:
        sim.close()


async def test_no_controller_fails_commands_with_a_reason(tmp_path: Path) -> None:
    config = make_config(tmp_path, actuator={"reconnect_s": 0.1, "port": str(tmp_path / "absent")})
    service = ActuatorService(config, get_log(test="actuator-service"))
    with in_process_bus(config.bus):
        async with running(service, shutdown=True) as (runner,), bus_sockets(config.bus) as sockets:
            pub = sockets.publisher("referee")
            sub = sockets.subscriber(["actuator.event"])
            deadline = time.monotonic() + DEADLINE_S
            event = None
            while event is None:
                assert time.monotonic() < deadline
                await pub.publish("actuator.command", ActuatorCommand(command_id="x", kind="home"))
                env = await sub.recv(timeout=0.5)
                event = env.message if env is not None else None
            assert event.status == "failed" and "controller not connected" in event.reason  # type: ignore[union-attr]
            assert "cannot open serial port" in event.reason  # type: ignore[union-attr]
            assert service.health == "fault"
            assert not runner.done()
