"""Replay: record a game, then replay its vision, panel and actuator topics (and the operator's command)
instead of the simulator into a fresh referee and AI with the same seed, and get the same decisions:
the same move requests, the same moves, the same actuator commands (ids included), the same result.

Like openpilot's process replay: recorded inputs into the real process, outputs diffed, timestamps
ignored."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import messages
from launch import recording, simrun
from launch.logview import Follower
from launch.processes import PROCESSES
from launch.replaycheck import check, render
from launch.simrun import Progress, SimOptions, SimSession
from messages import (
    ActuatorCommand,
    ActuatorEvent,
    BoardObservation,
    ButtonPress,
    GameState,
    Heartbeat,
    MoveReply,
    MoveRequest,
)
from services.bus.client import Publisher, Subscriber
from services.common.recording import Record, Recording, RecordingWriter, match_topics
from services.referee.machine import Settings as ReplaySettings

from .conftest import SEED, SPEED, short_runtime, sim_stack, table

pytestmark = pytest.mark.e2e

#: What the recording stands in for, and what the fresh stack runs.
STAND_INS = ("vision", "led", "actuator")
UNDER_TEST = {"bus", "referee", "ai"}
#: The referee's decisions that must come out the same, and who makes them (the orchestrator also
#: publishes on actuator.command when it refills the supplies between tasks: not a decision).
DECISIONS = ("ai.request", "ai.reply", "actuator.command")
DECIDERS = frozenset({"referee", "ai"})
REPLAY_TIMEOUT_S = 120.0
#: the longest the replay waits for the fresh referee to send a command the recording answers.
HOLD_TIMEOUT_S = 30.0


def decision(topic: str, message: Any) -> tuple[Any, ...] | None:
    """The part of a message that is a decision (ids and contents, not timestamps); None to ignore."""
    if isinstance(message, MoveRequest):
        return ("request", message.request_id, message.board, message.to_move, message.first_square)
    if isinstance(message, MoveReply):
        return ("reply", message.request_id, message.square)
    if isinstance(message, ActuatorCommand):
        if message.kind == "query":
            return None  # how often the referee asks depends on timing, not on its decisions
        return (
            "command",
            message.command_id,
            message.kind,
            message.colour,
            message.from_square,
            message.to_square,
        )
    return None


def retimed(records: list[Record], offset_ns: int) -> list[Record]:
    """``records`` with every clock reading in a message body (BoardObservation.capture_ns,
    ButtonPress.press_ns) moved by ``offset_ns``; headers are restamped by the replay itself."""
    out = []
    for record in records:
        message = record.envelope().message
        if isinstance(message, BoardObservation) and message.capture_ns:
            message = msgspec.structs.replace(message, capture_ns=message.capture_ns + offset_ns)
        elif isinstance(message, ButtonPress) and message.press_ns:
            message = msgspec.structs.replace(message, press_ns=message.press_ns + offset_ns)
        else:
            out.append(record)
            continue
        body = messages.encode(record.topic, record.header(), message)[2]
        out.append(Record(record.recv_ns, record.topic, record.header_raw, body))
    return out


def first_occurrences(items: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Drop repeats (a re-sent command is the same decision)."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


async def _record_game(sim: Any, path: Path) -> tuple[simrun.TaskResult, str]:
    (plan,) = simrun.plan_tasks(SimOptions(tasks=(4,), seed=SEED + 30, speed=SPEED), sim.config)
    async with SimSession(sim.config) as session:
        sub = Subscriber(session.ctx, sim.config.bus, [""], include_frames=False, name="recorder")
        writer = RecordingWriter(path)
        logs = Follower(
            sim.config.runtime.log_dir, from_end=True
        )  # the referee's decisions, for replay-check
        stop = asyncio.Event()
        heard = asyncio.Event()
        ended = asyncio.Event()
        settled = asyncio.Event()
        stable_after_end = 0

        def on_record(record: Record) -> None:
            nonlocal stable_after_end
            heard.set()
            if record.topic == "referee.state":
                state = record.envelope().message
                if isinstance(state, GameState) and state.result and state.game_id:
                    ended.set()
            elif record.topic == "vision.stable" and ended.is_set():
                stable_after_end += 1
                if stable_after_end >= 2:
                    settled.set()

        recorder = asyncio.create_task(
            recording.record_bus(sub, writer, match_topics(None), stop, on_record=on_record, logs=logs)
        )
        try:
            await asyncio.wait_for(heard.wait(), timeout=10)  # the recorder is connected
            result = await simrun.run_task(session, plan, Progress(sys.stderr))
            # The orchestrator saw the game end; the recorder, a subscriber of its own, may not have
            # written that state yet: wait for it rather than cut the recording short.
            await asyncio.wait_for(ended.wait(), timeout=10)
            # ...and a little beyond: vision's 1 Hz repeats of the final board. Replayed, the referee
            # times events by its own clock; the last confirmation may reach it just before it has
            # taken the actuator's "done", and then only a later view can confirm the last placement.
            await asyncio.wait_for(settled.wait(), timeout=10)
        finally:
            stop.set()
            await recorder
            writer.close()
            logs.close()
            sub.close()
    return result, result.seen.game_id


def _recorded(path: Path, game_id: str) -> tuple[list[tuple[Any, ...]], GameState | None]:
    decisions: list[tuple[Any, ...]] = []
    final: GameState | None = None
    for record in Recording(path):
        if record.topic in DECISIONS and record.header().source in DECIDERS:
            d = decision(record.topic, record.envelope().message)
            if d is not None:
                decisions.append(d)
        elif record.topic == "referee.state":
            state = record.envelope().message
            if isinstance(state, GameState) and state.game_id == game_id and state.result:
                final = state
    return first_occurrences(decisions), final


class _Hold:
    """Keeps the replay from running ahead of the process under test: a recorded actuator event for a
    command the fresh referee has not sent yet waits until it has (the fresh AI may think longer than
    the recorded one, and an answer before its command is an answer to nothing). The wait moves the
    rest of the schedule back, and with it the clock readings inside the records still to come."""

    def __init__(self, awaited: set[str], offset_ns: int) -> None:
        self.sent = {command_id: asyncio.Event() for command_id in awaited}  # the recorded referee's
        self.offset_ns = offset_ns

    def command_sent(self, command_id: str) -> None:
        if command_id in self.sent:
            self.sent[command_id].set()

    async def __call__(self, record: Record) -> None:
        if record.topic != "actuator.event":
            return
        event = record.envelope().message
        if not isinstance(event, ActuatorEvent) or event.command_id not in self.sent:
            return
        started = time.monotonic_ns()
        # on a timeout the event is published anyway: the decisions will differ, and the test says so
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.sent[event.command_id].wait(), HOLD_TIMEOUT_S)
        self.offset_ns += time.monotonic_ns() - started

    def retimed(self, records: list[Record]) -> Iterator[Record]:
        """``records`` retimed one by one as the replay takes them, each by the offset of that moment."""
        for record in records:
            yield from retimed([record], self.offset_ns)


async def _replay(sim: Any, path: Path, game_id: str) -> tuple[list[tuple[Any, ...]], GameState | None]:
    stand_in = recording.make_filter(None, STAND_INS)
    records = [r for r in Recording(path) if stand_in(r) or r.topic == "operator.command"]
    awaited = {d[1] for d in _recorded(path, game_id)[0] if d[0] == "command"}
    async with SimSession(sim.config) as session:
        out = Subscriber(session.ctx, sim.config.bus, [*DECISIONS, "sys.heartbeat"], name="replay-check")
        publisher = Publisher(session.ctx, sim.config.bus, "replay")
        publisher.open()
        await connected(publisher, out)
        decisions: list[tuple[Any, ...]] = []
        final: GameState | None = None
        # The referee orders what it sees by the capture and press times inside the messages (a frame
        # taken before a placement finished says nothing about it). Replayed now, those times must move
        # with the replay: shift them by the distance between the recording and the replay's start, as
        # a mocked clock would. (Taken here, not before the session and the bus connect: on a loaded
        # machine those take seconds, and every replayed frame would then look that much older than
        # the referee's own commands, and say nothing about them.)
        hold = _Hold(awaited, time.monotonic_ns() - records[0].recv_ns)
        replay = asyncio.create_task(
            recording.replay_into(hold.retimed(records), publisher, rate=1.0, hold=hold)
        )
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + REPLAY_TIMEOUT_S
            while loop.time() < deadline:
                env = await out.recv(timeout=0.1)
                if env is not None and env.header.source in DECIDERS:
                    d = decision(env.topic, env.message)
                    if d is not None:
                        decisions.append(d)
                        if d[0] == "command":
                            hold.command_sent(d[1])
                await session.pump(0)
                s = session.state
                if s is not None and s.game_id == game_id and s.result:
                    final = s
                    break
                if replay.done() and final is None and not await _still_moving(session):
                    break
        finally:
            replay.cancel()
            await asyncio.gather(replay, return_exceptions=True)
            out.close()
            publisher.close()
    return first_occurrences(decisions), final


async def connected(publisher: Publisher, out: Subscriber, timeout: float = 10.0) -> None:
    """Publish a probe heartbeat until ``out`` receives it: then the replay's first records and the
    referee's first decisions cannot be lost to the PUB/SUB slow-joiner."""
    deadline = time.monotonic() + timeout
    seq = 0
    while time.monotonic() < deadline:
        seq += 1
        await publisher.publish("sys.heartbeat", Heartbeat(process="replay-probe", pid=0, seq=seq))
        env = await out.recv(timeout=0.05)
        while env is not None:
            if env.header.source == "replay":
                return
            env = await out.recv(timeout=0.001)
    raise TimeoutError("the replay's publisher or checker did not connect to the bus")


async def _still_moving(session: SimSession) -> bool:
    """After the replay ran out, give the referee a moment to finish what it received."""
    return await session.pump(2.0)


def test_replayed_game_gives_the_same_decisions(tmp_path_factory: pytest.TempPathFactory) -> None:
    # Not a coroutine: starting a stack waits for heartbeats on its own event loop.
    path = short_runtime(tmp_path_factory, "rec") / "game.mcap"
    with sim_stack(short_runtime(tmp_path_factory, "live")) as live:
        result, game_id = asyncio.run(_record_game(live, path))
    assert result.verdict.ok, table([result])
    recorded, recorded_final = _recorded(path, game_id)
    assert recorded_final is not None and recorded, "the recording holds no finished game"
    # the same recording, replayed into a fresh referee machine in lockstep (no clock, no sockets)
    settings = ReplaySettings.from_config(live.config)
    lockstep = check(Recording(path), settings, live.config.referee.tick_period_s, live.config.log.level)
    assert lockstep.same, render(lockstep)
    commands, states, journal = lockstep.streams
    assert len(commands.recorded) >= 5 and len(states.recorded) >= 5, render(lockstep)
    assert journal.checked and len(journal.recorded) >= 10, render(lockstep)
    print(render(lockstep), file=sys.stderr)
    not_run = {p.name for p in PROCESSES} - UNDER_TEST
    with sim_stack(short_runtime(tmp_path_factory, "replay"), exclude=not_run) as fresh:
        replayed, replayed_final = asyncio.run(_replay(fresh, path, game_id))
    assert replayed == recorded, "decisions differ:\n" + "\n".join(
        f"{a!s:70} | {b!s}" for a, b in zip(recorded, replayed + [()] * len(recorded), strict=False)
    )
    assert replayed_final is not None, f"the replayed game did not end {fresh.where()}"
    assert (replayed_final.result, replayed_final.moves, replayed_final.board) == (
        recorded_final.result,
        recorded_final.moves,
        recorded_final.board,
    )
