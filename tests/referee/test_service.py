"""The referee and ai services on real sockets: an in-process forwarder, both services in this event
loop, the operator client and the `sanzi task` command line as a real child process."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zmq.asyncio

from messages import ActuatorCommand, ActuatorEvent, BoardObservation, GameState, OperatorCommand
from services.ai.service import AiService
from services.bus.client import Publisher, Subscriber, request_snapshot, wait_for
from services.referee import operator_client as client
from services.referee.service import RefereeService

EMPTY = "........."


@contextlib.asynccontextmanager
async def running(service: Any) -> AsyncIterator[Any]:
    task = asyncio.create_task(service.run())
    try:
        yield service
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        service.close()


def _config(bus: Any, tmp_path: Path) -> Any:
    referee = msgspec.structs.replace(
        bus.referee, journal=str(tmp_path / "referee.journal"), required_peers=[], tick_period_s=0.05
    )
    return msgspec.structs.replace(bus, referee=referee)


async def _until_state(sub: Subscriber, vision: Publisher, predicate: Any, board: str = EMPTY) -> Any:
    """Publish stable views of ``board`` until a published game state satisfies ``predicate``."""
    obs = BoardObservation(frame_id=1, found=True, board=board, stable=True)
    for _ in range(100):
        await vision.publish("vision.stable", obs)
        env = await sub.recv(timeout=0.1)
        if env is not None and isinstance(env.message, GameState) and predicate(env.message):
            return env.message
    raise AssertionError("the referee never reached the expected state")


async def test_task_request_reply_snapshot_and_restart(bus: Any, tmp_path: Path) -> None:
    config = _config(bus, tmp_path)
    ctx = zmq.asyncio.Context()
    vision = Publisher(ctx, config.bus, "vision")
    vision.open()
    states = Subscriber(ctx, config.bus, ["referee.state"], name="t")
    commands = Subscriber(ctx, config.bus, ["actuator.command"], name="t")
    replies = Subscriber(ctx, config.bus, ["ai.reply"], name="t")
    try:
        async with running(AiService(config)), running(RefereeService(config)):
            # a bad command gets a clear refusal, a good one a game id
            bad = await client.send(
                config.bus, OperatorCommand(command_id="c1", action="task", task=2, squares=[1, 5, 5, 10])
            )
            assert bad is not None and not bad.ok and "square 1..9" in bad.error
            reply = await client.send(
                config.bus, OperatorCommand(command_id="c2", action="task", task=4, first=3)
            )
            assert reply is not None and reply.ok and reply.game_id
            again = await client.send(config.bus, OperatorCommand(command_id="c2", action="task", task=4))
            assert again == reply  # answered again, not a second game
            # vision sees the empty board -> ai.request -> the ai answers -> actuator.command
            await _until_state(states, vision, lambda s: s.phase in ("command-sent", "move-requested"))
            ai_reply = await wait_for(replies, lambda e: True, timeout=5.0)
            assert ai_reply.message.square == 3 and ai_reply.message.request_id.startswith(reply.game_id)
            env = await wait_for(commands, lambda e: e.message.kind == "place", timeout=5.0)
            command: ActuatorCommand = env.message
            assert (command.to_square, command.colour) == (3, "black")
            snap = await request_snapshot(ctx, config.bus.snapshot, "referee.state", timeout=2.0)
            assert snap is not None and snap.message.phase == "command-sent"
            assert snap.message.pending_command == command.command_id
            revision = snap.message.revision
        # the referee restarts from its journal and asks the actuator before doing anything again
        async with running(RefereeService(config)):
            env = await wait_for(commands, lambda e: e.message.kind == "query", timeout=5.0)
            assert env.message.command_id == command.command_id
            snap = await request_snapshot(ctx, config.bus.snapshot, "referee.state", timeout=2.0)
            assert snap is not None and snap.message.phase == "command-sent"
            assert snap.message.game_id == reply.game_id and snap.message.revision > revision
            actuator = Publisher(ctx, config.bus, "actuator")
            actuator.open()
            try:
                done = ActuatorEvent(command_id=command.command_id, status="done", repeat=True)
                for _ in range(100):
                    await actuator.publish("actuator.event", done)
                    s = await request_snapshot(ctx, config.bus.snapshot, "referee.state", timeout=1.0)
                    if s is not None and s.message.activity == "confirming":
                        break
                    await asyncio.sleep(0.05)  # pacing of the retries, not synchronisation
                else:
                    raise AssertionError("the referee never took the actuator's report")
                state = await _until_state(
                    states, vision, lambda s: s.phase == "waiting-for-person", board="..X......"
                )
                assert state.lamp and state.board == "..X......" and state.moves == [3]
            finally:
                actuator.close()
    finally:
        for closable in (vision, states, commands, replies):
            closable.close()
        ctx.term()


async def _cli(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "launch.cli",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=30)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.mark.slow
async def test_cli_exit_codes(bus: Any, tmp_path: Path, subprocess_env: dict[str, str]) -> None:
    code, _, err = await _cli(["stop", "--wait", "0.6"], subprocess_env)
    assert code == 3 and "no answer from the referee" in err
    config = _config(bus, tmp_path)
    async with running(RefereeService(config)):
        code, _, err = await _cli(["task", "2", "--squares", "1,5,9"], subprocess_env)
        assert code == 1 and "needs 4 squares" in err
        code, out, _ = await _cli(["task", "1"], subprocess_env)
        assert code == 0 and "task 1: ok (game g1-" in out


async def _snapshot_until(ctx: Any, config: Any, predicate: Any, timeout: float = 10.0) -> GameState:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        snap = await request_snapshot(ctx, config.bus.snapshot, "referee.state", timeout=0.5, attempts=1)
        if snap is not None and predicate(snap.message):
            return snap.message
    raise AssertionError("the referee's snapshot never matched")


@pytest.mark.slow
async def test_killed_referee_process_resumes_its_game(
    bus: Any, tmp_path: Path, subprocess_env: dict[str, str]
) -> None:
    """kill -9 of the real referee process in the middle of a placement: the next one rebuilds the game
    from the journal, serves the same game in its snapshot, and asks the actuator before re-sending."""
    journal = tmp_path / "referee.journal"
    args = [
        sys.executable,
        "-m",
        "services.referee",
        "--set",
        f"referee.journal='{journal}'",
        "--set",
        "referee.required_peers=[]",
    ]
    ctx = zmq.asyncio.Context()
    commands = Subscriber(ctx, bus.bus, ["actuator.command"], name="t")
    vision = Publisher(ctx, bus.bus, "vision")
    vision.open()
    proc = await asyncio.create_subprocess_exec(
        *args, env=subprocess_env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        await _snapshot_until(ctx, bus, lambda s: s.phase == "idle")
        reply = await client.send(bus.bus, OperatorCommand(command_id="k1", action="task", task=1))
        assert reply is not None and reply.ok
        obs = BoardObservation(frame_id=1, found=True, board=EMPTY, stable=True)
        for _ in range(100):
            await vision.publish("vision.stable", obs)
            env = await commands.recv(timeout=0.1)
            if env is not None and env.message.kind == "place":
                break
        else:
            raise AssertionError("no placement command")
        placed: ActuatorCommand = env.message
        proc.kill()
        await proc.wait()
        proc = await asyncio.create_subprocess_exec(
            *args, env=subprocess_env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        env = await wait_for(commands, lambda e: e.message.kind == "query", timeout=15.0)
        assert env.message.command_id == placed.command_id
        state = await _snapshot_until(ctx, bus, lambda s: s.game_id == reply.game_id)
        assert state.phase == "command-sent" and state.pending_command == placed.command_id
        again = await client.send(bus.bus, OperatorCommand(command_id="k1", action="task", task=1))
        assert again == reply  # the journaled answer, not a second task
    finally:
        if proc.returncode is None:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), timeout=10)
        commands.close()
        vision.close()
        ctx.term()
