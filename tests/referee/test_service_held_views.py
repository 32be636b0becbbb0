"""The referee shell on real sockets (issue 11): the press reaches it after the panel's debounce, so a
stable frame captured after the press may come first; the shell holds it and the move is judged on it
at once, with no further frame. A held frame captured before the press is never judged."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import zmq.asyncio

from messages import BoardObservation, ButtonPress, GameState, MoveRequest, OperatorCommand
from services.bus.client import Publisher, Subscriber, wait_for
from services.referee import operator_client as client
from services.referee.service import RefereeService

EMPTY = "........."
#: the debounce-like delay between the press and its message in these tests.
PRESS_LAG_S = 0.03


@contextlib.asynccontextmanager
async def _referee(bus: Any, tmp_path: Path) -> AsyncIterator[tuple[Publisher, Subscriber, Subscriber]]:
    """A referee in task 5 at the person's first turn; yields (a publisher standing in for vision and
    the panel, the referee's states, its move requests)."""
    referee_config = msgspec.structs.replace(
        bus.referee, journal=str(tmp_path / "referee.journal"), required_peers=[], tick_period_s=0.05
    )
    config = msgspec.structs.replace(bus, referee=referee_config)
    ctx = zmq.asyncio.Context()
    # one socket for vision and the panel: their messages reach the referee in the order sent
    world = Publisher(ctx, config.bus, "vision")
    world.open()
    states = Subscriber(ctx, config.bus, ["referee.state"], name="t")
    requests = Subscriber(ctx, config.bus, ["ai.request"], name="t")
    referee = RefereeService(config)
    task = asyncio.create_task(referee.run())
    try:
        reply = await client.send(config.bus, OperatorCommand(command_id="c1", action="task", task=5))
        assert reply is not None and reply.ok, reply
        empty = BoardObservation(frame_id=1, found=True, board=EMPTY, stable=True)
        for _ in range(100):
            await world.publish("vision.stable", empty)
            env = await states.recv(timeout=0.1)
            if (
                env is not None
                and isinstance(env.message, GameState)
                and env.message.phase == "waiting-for-person"
            ):
                break
        else:
            raise AssertionError("the referee never handed the turn to the person")
        yield world, states, requests
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        referee.close()
        for closable in (world, states, requests):
            closable.close()
        ctx.term()


def _view(board: str, frame_id: int, capture_ns: int) -> BoardObservation:
    return BoardObservation(
        frame_id=frame_id,
        found=True,
        board=board,
        stable=True,
        agreeing_frames=12,
        capture_ns=capture_ns,
        window_start_ns=capture_ns - 400_000_000,
    )


async def test_a_frame_after_the_press_that_came_before_it_is_judged_at_once(
    bus: Any, tmp_path: Path
) -> None:
    async with _referee(bus, tmp_path) as (world, _states, requests):
        press_ns = time.monotonic_ns() - int(PRESS_LAG_S * 1e9)
        await world.publish("vision.board", _view("X........", 7, press_ns + 10_000_000))
        await world.publish("panel.button", ButtonPress(press_id=1, source="test", press_ns=press_ns))
        # no frame after the press message: the held one decides
        env = await wait_for(requests, lambda e: isinstance(e.message, MoveRequest), timeout=5.0)
        assert env.message.board == "X........"


async def test_a_held_frame_from_before_the_press_is_not_judged(bus: Any, tmp_path: Path) -> None:
    async with _referee(bus, tmp_path) as (world, states, requests):
        press_ns = time.monotonic_ns()
        await world.publish("vision.board", _view("X........", 7, press_ns - 10_000_000))
        await world.publish("panel.button", ButtonPress(press_id=1, source="test", press_ns=press_ns))
        await wait_for(states, lambda e: e.message.phase == "waiting-for-stable", timeout=5.0)
        # the first frame after the press shows another square: that is the one judged
        await world.publish("vision.board", _view(".X.......", 8, time.monotonic_ns()))
        env = await wait_for(requests, lambda e: isinstance(e.message, MoveRequest), timeout=5.0)
        assert env.message.board == ".X......."
