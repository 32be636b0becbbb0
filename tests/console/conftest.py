"""The console on a real bus (both forwarders in this process), its endpoints behind aiohttp's test
server, and a small stand-in for the referee and the simulated world that answer it the way they do."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import zmq.asyncio
from aiohttp.test_utils import TestClient, TestServer

from messages import (
    BoardObservation,
    ButtonLevel,
    CameraFrame,
    Channel,
    GameState,
    GripperState,
    HumanSetup,
    OperatorCommand,
    OperatorReply,
    PieceState,
    WorldAction,
    WorldState,
)
from services.bus.client import Publisher, Subscriber
from services.common import config as config_module
from services.console.server import LOOPBACK_NAMES, make_app
from services.console.service import ConsoleService

#: the stand-in referee refuses every task-3 command with this reason.
REFUSAL = "task 3 needs the board's pose: vision has not found the board"


def world_state(board: str, seen: list[str], revision: int) -> WorldState:
    pieces = [
        PieceState(
            piece_id=i, colour="black" if i < 5 else "white", x_mm=0.0, y_mm=0.0, where="supply", slot=i % 5
        )
        for i in range(10)
    ]
    return WorldState(
        board_center_mm=(200.0, 150.0),
        board_angle_deg=0.0,
        pitch_mm=30.0,
        pieces=pieces,
        gripper=GripperState(x_mm=0.0, y_mm=0.0, z_mm=0.0),
        board=board,
        revision=revision,
        actions_seen=seen[-20:],
    )


@dataclass
class Peers:
    """The referee's and the world's side of the console's requests, recorded."""

    pub: Publisher
    commands: list[OperatorCommand] = field(default_factory=list)
    actions: list[WorldAction] = field(default_factory=list)
    buttons: list[bool] = field(default_factory=list)
    setups: list[HumanSetup] = field(default_factory=list)
    board: str = "........."
    revision: int = 0
    seen: list[str] = field(default_factory=list)

    async def publish_world(self) -> None:
        self.revision += 1
        await self.pub.publish("sim.world", world_state(self.board, self.seen, self.revision))

    async def publish_state(self, **fields: Any) -> None:
        self.revision += 1
        await self.pub.publish("referee.state", GameState(revision=self.revision, **fields))

    async def handle(self, msg: Any) -> None:
        if isinstance(msg, OperatorCommand):
            if msg.command_id not in {c.command_id for c in self.commands}:
                self.commands.append(msg)
            ok = not (msg.action == "task" and msg.task == 3)
            reply = OperatorReply(
                command_id=msg.command_id, ok=ok, error="" if ok else REFUSAL, game_id="g1" if ok else ""
            )
            await self.pub.publish("operator.reply", reply)
        elif isinstance(msg, WorldAction):
            if msg.action_id not in self.seen:
                self.actions.append(msg)
                self.seen.append(msg.action_id)
                b = list(self.board)
                if msg.kind == "place" and msg.to_square:
                    b[msg.to_square - 1] = "X" if msg.colour == "black" else "O"
                elif msg.kind == "move" and msg.from_square and msg.to_square:
                    b[msg.to_square - 1], b[msg.from_square - 1] = b[msg.from_square - 1], "."
                elif msg.kind == "remove" and msg.from_square:
                    b[msg.from_square - 1] = "."
                self.board = "".join(b)
            await self.publish_world()
        elif isinstance(msg, ButtonLevel):
            self.buttons.append(msg.pressed)
        elif isinstance(msg, HumanSetup):
            self.setups.append(msg)


async def run_peers(peers: Peers, sub: Subscriber) -> None:
    while True:
        env = await sub.recv()
        if env is not None:
            await peers.handle(env.message)


def frame_and_reading(frame_id: int) -> tuple[CameraFrame, BoardObservation]:
    """A small grey frame and a reading of it that found no board (drawn as a caption)."""
    now = time.monotonic_ns()
    image = np.full((120, 160, 3), 90, np.uint8)
    frame = CameraFrame(frame_id=frame_id, width=160, height=120, data=image.tobytes(), capture_ns=now)
    return frame, BoardObservation(frame_id=frame_id, found=False, capture_ns=now, problem="no-board")


async def eventually(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Wait until ``condition()`` holds. :raises AssertionError: naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.01)


async def send_frame(rig: Rig, frame_id: int) -> None:
    """Publish a frame and vision's reading of it until the console has paired them (the first frame
    on a fresh connection may be lost: frames are newest-only and never re-sent by the bus)."""
    frame, obs = frame_and_reading(frame_id)
    deadline = time.monotonic() + 5.0
    while True:
        rig.console.watch()  # the console reads frames only while someone looks
        await rig.peers.pub.publish("camera.frame", frame)
        await rig.peers.pub.publish("vision.board", obs)
        for _ in range(20):
            newest = rig.console.pairer.newest
            # The frame alone is paired with nothing first while vision has been silent; wait for its
            # reading too.
            if newest is not None and newest.frame.frame_id == frame_id and newest.obs is not None:
                return
            await asyncio.sleep(0.005)
        assert time.monotonic() < deadline, f"frame {frame_id} not paired within 5 s"


@dataclass
class Rig:
    client: TestClient
    console: ConsoleService
    peers: Peers


@contextlib.asynccontextmanager
async def console_rig(config: Any, *, token: str = "", sim: bool = True) -> AsyncIterator[Rig]:
    # acknowledgements never overdue: the test says when the page has shown a frame
    # (and the test process's priority left alone)
    overrides: dict[str, Any] = {"console": {"token": token, "ack_timeout_s": 60.0, "nice": 0}}
    if not sim:
        overrides["camera"] = {"source": "0"}
    cfg = config_module.load(
        None, overrides=config_module.merge_dicts({"runtime": {"dir": config.runtime.dir}}, overrides)
    )
    console = ConsoleService(cfg)
    ctx = zmq.asyncio.Context()
    pub = Publisher(ctx, cfg.bus, "peers")
    pub.open(Channel.EVENT, Channel.FRAME)
    sub = Subscriber(
        ctx, cfg.bus, ["operator.command", "sim.action", "sim.button", "sim.human"], name="peers"
    )
    peers = Peers(pub)
    tasks = [asyncio.create_task(w) for w in console.workers()]
    tasks.append(asyncio.create_task(run_peers(peers, sub)))
    # as the service makes it: without a token, only loopback names
    hosts = frozenset() if token else LOOPBACK_NAMES | {cfg.console.host}
    client = TestClient(TestServer(make_app(console, token=token, hosts=hosts)))
    await client.start_server()
    try:
        # the bus is up both ways once the console hears the world and the world hears the console
        async def world_heard() -> None:
            while console.core.world is None:
                await peers.publish_world()
                await asyncio.sleep(0.05)

        async def console_heard() -> None:
            while not peers.setups:
                await console.human(HumanSetup(policy="perfect"))
                await asyncio.sleep(0.05)

        await asyncio.wait_for(world_heard(), timeout=10)
        await asyncio.wait_for(console_heard(), timeout=10)
        peers.setups.clear()
        yield Rig(client, console, peers)
    finally:
        # bounded: a console that does not stop fails the test instead of hanging the suite
        await asyncio.wait_for(client.close(), timeout=10)
        for task in tasks:
            task.cancel()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout=10)
        sub.close()
        pub.close()
        console.close()
        ctx.destroy(linger=0)


@pytest.fixture
async def rig(bus: Any) -> AsyncIterator[Rig]:
    async with console_rig(bus) as r:
        yield r
