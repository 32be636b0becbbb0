"""The simulator's speed chosen at run time (the console's speed control): the world's controller takes a
``speed`` action, moves planned after it take their time at the new speed, simulated time goes on
without a jump, the world reports its speed, and the simulated person's pauses follow it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from messages import WorldAction
from services.simhuman.service import SimHumanService
from services.simworld.controller import EmulatedController
from services.simworld.world import WorldError

from .conftest import world_state


def test_a_speed_action_changes_the_speed_of_moves_planned_after_it(config: Any) -> None:
    sim = msgspec.structs.replace(config.simworld, homing_lock=False)
    cfg = msgspec.structs.replace(config, simworld=sim)
    now = [0.0]
    ctl = EmulatedController(config=cfg, protocol="grbl", speed=2.0, clock=lambda: now[0])
    ctl.receive(b"", 0.0)
    now[0] = 1.0
    assert ctl.snapshot().sim_time_s == pytest.approx(2.0) and ctl.snapshot().speed == 2.0
    ctl.apply(WorldAction(action_id="s1", kind="speed", speed=4.0))
    assert ctl.snapshot().sim_time_s == pytest.approx(2.0)  # no jump
    now[0] = 1.5
    assert ctl.snapshot().sim_time_s == pytest.approx(4.0) and ctl.snapshot().speed == 4.0
    # 100 mm at 6000 mm/min = 1 s simulated = 0.25 s real at speed 4
    assert ctl.receive(b"G1 X100 F6000\n", 1.5) == b"ok\r\n"
    assert ctl.receive(b"?", 1.75) == b"<Idle|MPos:100.000,0.000,40.000|FS:0,0>\r\n"
    for bad in (0.0, -1.0, 1000.0, None):
        with pytest.raises(WorldError, match="speed must be"):
            ctl.apply(WorldAction(action_id="s2", kind="speed", speed=bad))
    assert ctl.snapshot().speed == 4.0


async def test_the_simulated_person_follows_the_worlds_speed(config: Any) -> None:
    service = SimHumanService(config)
    try:
        assert service.person.speed == config.simworld.speed
        await service.on_message(msgspec.structs.replace(world_state(".........", [], 1), speed=5.0))
        assert service.speed == service.person.speed == 5.0
        await service.on_message(world_state(".........", [], 2))  # a world that does not say: kept
        assert service.person.speed == 5.0
    finally:
        service.close()
