"""`sanzi sim --human web`: the simulated person with policy "web" stands aside (the page plays), and the
page can hand the game back to a simulated policy at run time."""

from __future__ import annotations

from typing import Any

import msgspec

from launch import simrun
from messages import GameState, HumanSetup
from services.simhuman.service import SimHumanService


async def test_the_simulated_person_stands_aside_for_the_page(config: Any) -> None:
    human = msgspec.structs.replace(config.simhuman, policy=simrun.WEB_POLICY)
    service = SimHumanService(msgspec.structs.replace(config, simhuman=human))
    try:
        turn = GameState(
            revision=1, game_id="g", phase="waiting-for-person", lamp=True, device_colour="white", moves=[]
        )
        assert await service.plan(turn) == []
        assert service.person.press_again(turn, since_press_s=60.0) == []  # not even a second press
        await service.on_message(HumanSetup(policy="perfect"))
        steps = await service.plan(turn)
        assert any(getattr(s, "action", None) is not None for s in steps)  # the simulated person plays again
        await service.on_message(HumanSetup(policy="web"))
        assert service.person.config.policy == "web" and not service.last_error
    finally:
        service.close()


def test_the_console_runs_everywhere_and_the_game_never_waits_for_it() -> None:
    from launch import processes

    spec = processes.get("console")
    assert spec.runs_in("sim") and spec.runs_in("hardware")
    assert not spec.required and "console" not in processes.required_peers("sim")
    assert spec.publishes == ()  # it sends what a tool or the person sends, on a click: no topic's source
