"""The console process: the bus in, one page out (see :mod:`services.console` and :mod:`.server`).

Tasks of one asyncio loop: the bus reader (every event topic into :class:`.core.ConsoleCore`), the frame
reader (camera frames into the :class:`.core.FramePairer`, only while a page is open or ``/camera.jpg``
was asked for lately), the web server, a pusher that sends what changed to every open page (the game at
once, vision at most :data:`VISION_PUSH_HZ` times a second, health and statistics every second), and the
frame pump: a frame is annotated and encoded only when some page is ready for one, in a worker thread
(OpenCV lets go of the interpreter lock), and given to each page's :class:`.core.ClientFlow`.

The console is nobody's required peer: the game never waits for it, and nothing waits for a slow or
closed browser (frames to it are dropped). It runs at a lower priority (``console.nice``): its CPU is
measured by ``bench/e2e.py --browser``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import struct
import time
from pathlib import Path
from typing import Any, Final

from aiohttp import WSMsgType, web

from messages import (
    BoardObservation,
    ButtonLevel,
    CameraFrame,
    HumanSetup,
    OperatorCommand,
    OperatorReply,
    WorldAction,
    WorldState,
)
from services.common.config import Config
from services.common.shell import Service, run_service

from . import core, overlay
from .server import LOOPBACK_NAMES, make_app, shown_ack
from .token import ConsoleRefused, binding_problem, resolve_token

#: vision's reading goes to the pages at most this often (it comes at the camera's rate).
VISION_PUSH_HZ: Final = 10.0
#: health and frame statistics go to the pages this often.
SLOW_PUSH_S: Final = 1.0
#: a port that is taken is tried again this often (the console waits; it does not crash-loop).
REBIND_S: Final = 2.0
#: a world action is published again this often until the world lists its id, and given up after.
ACTION_RESEND_S: Final = 0.25
ACTION_TIMEOUT_S: Final = 3.0
#: an operator command is published again this often until the referee answers it (same id).
COMMAND_RESEND_S: Final = 0.5
#: how long the console holds the simulated button down (well above the panel's debounce).
PRESS_HOLD_S: Final = 0.1
#: camera frames are read only while someone looks: a page is open, or ``/camera.jpg`` was asked for
#: within this long.
WATCH_LINGER_S: Final = 5.0
#: ``/camera.jpg`` waits this long for a fresh frame when nobody was looking.
FIRST_FRAME_WAIT_S: Final = 1.0
#: where camera frames come from: the simulated camera, or vision passing on its own camera's.
FRAME_TOPICS: Final = ["camera.frame", "vision.frame"]
#: the sequence number in front of each binary frame message.
FRAME_HEADER: Final = struct.Struct(">I")


class Client:
    """One open page: its WebSocket, its frame flow, the newest text of each kind not yet sent."""

    def __init__(self, ws: web.WebSocketResponse, flow: core.ClientFlow) -> None:
        self.ws = ws
        self.flow = flow
        self.texts: dict[str, str] = {}
        self.wake = asyncio.Event()


class ConsoleService(Service):
    """The browser console."""

    name = "console"

    def __init__(self, config: Config, log: Any | None = None) -> None:
        if config.console.nice > 0:
            # before any thread is made (ZeroMQ's, the JPEG workers): each inherits the priority
            os.nice(config.console.nice)
        super().__init__(config, log)
        cfg = config.console
        self.cfg = cfg
        self.core = core.ConsoleCore(
            peer_timeout_s=config.bus.peer_timeout_s,
            timeline_length=cfg.timeline_length,
            sim=config.camera.source == "sim",
        )
        self.pairer = core.FramePairer()
        self.clients: set[Client] = set()
        self.url = ""
        self._nonce = f"{os.getpid():x}{time.time_ns() & 0xFFFFFF:06x}"
        self._ids = itertools.count(1)
        self._replies: dict[str, asyncio.Future[OperatorReply]] = {}
        self._world_changed = asyncio.Event()
        self._frame_ready = asyncio.Event()
        #: set whenever a new pair is made (``/camera.jpg`` waits on it when nobody was looking).
        self._paired = asyncio.Event()
        self._watching = asyncio.Event()
        self._watch_until = 0.0
        self._dirty: set[str] = set()
        self._pushed = asyncio.Event()
        self._jpeg: tuple[int, int, bytes] | None = None  # (pair seq, capture_ns, data)
        self._encoding = asyncio.Lock()
        self.encoded = 0
        #: frames no page could take when they came (each page had one in flight): never encoded.
        self.skipped = 0
        self.encode_ms = 0.0
        self.runner: web.AppRunner | None = None

    def next_id(self, what: str) -> str:
        return f"console-{self._nonce}-{what}{next(self._ids)}"

    # -- the process ------------------------------------------------------------------------------------

    async def run(self) -> None:
        token = resolve_token(self.cfg)
        problem = binding_problem(self.cfg.host, token)
        if problem:
            raise ConsoleRefused(problem)
        # with no token, only loopback names: a site whose name resolves here is not let in
        hosts = frozenset() if token else LOOPBACK_NAMES | {self.cfg.host}
        app = make_app(self, token=token, hosts=hosts)
        self.runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self.runner.setup()
        async with asyncio.TaskGroup() as group:
            group.create_task(self._listen(), name="console.listen")
            for work in self.workers():
                group.create_task(work)

    def workers(self) -> list[Any]:
        """The loops behind the endpoints (the bus reader, the pusher, the frame pump), as coroutines;
        the tests run them around aiohttp's test server."""
        return [self._follow_bus(), self._follow_frames(), self._pusher(), self._frames()]

    async def _follow_bus(self) -> None:
        sub = self.subscribe([""], include_frames=False)
        while True:
            env = await sub.recv()
            if env is not None:
                self.take(env)

    def watch(self) -> None:
        """Someone looks at the camera: read frames for at least :data:`WATCH_LINGER_S` from now."""
        self._watch_until = time.monotonic() + WATCH_LINGER_S
        self._watching.set()

    async def _follow_frames(self) -> None:
        """Camera frames, only while a page is open or ``/camera.jpg`` was asked for lately: reading
        640x480 frames at 30 fps costs CPU even when nobody looks."""
        from services.bus.client import Subscriber

        while True:
            await self._watching.wait()
            # the simulator's camera, or on hardware the frames vision reads from its own
            sub = Subscriber(self.ctx, self.config.bus, FRAME_TOPICS, name=self.name)
            self.log.info("camera frames: reading")
            try:
                while True:
                    self._watching.clear()  # a watch() from now on sets it again: nothing is missed
                    if not (self.clients or time.monotonic() < self._watch_until):
                        break
                    env = await sub.recv(timeout=0.5)
                    if env is not None:
                        self.take(env)
            finally:
                sub.close()
            self.pairer.forget()  # a frame kept from now would be stale when someone looks again
            for topic in FRAME_TOPICS:  # not read: their rates here would say nothing
                self.core.meters.pop(topic, None)
            self.log.info("camera frames: nobody looks, not reading")

    async def shutdown(self) -> None:
        for client in list(self.clients):
            with contextlib.suppress(Exception):
                await client.ws.close()
        if self.runner is not None:
            await self.runner.cleanup()
        with contextlib.suppress(OSError):
            if self.url and Path(self.cfg.address_file).read_text().strip() == self.url:
                Path(self.cfg.address_file).unlink()

    async def _listen(self) -> None:
        """Bind the web server; a port in use is logged and tried again (the stack does not need us)."""
        assert self.runner is not None
        while True:
            site = web.TCPSite(self.runner, self.cfg.host, self.cfg.port)
            try:
                await site.start()
                break
            except OSError as exc:
                self.health, self.last_error = (
                    "fault",
                    f"cannot listen on {self.cfg.host}:{self.cfg.port}: {exc}",
                )
                self.detail = "not listening"
                self.log.error("cannot listen", host=self.cfg.host, port=self.cfg.port, error=str(exc))
                await asyncio.sleep(REBIND_S)
        port = self.runner.addresses[0][1]
        host = f"[{self.cfg.host}]" if ":" in self.cfg.host else self.cfg.host
        self.url = f"http://{host}:{port}/"
        self.health, self.last_error, self.detail = "ok", "", self.url
        address = Path(self.cfg.address_file)
        address.write_text(self.url + "\n")
        self.log.info("listening", url=self.url)

    def take(self, env: Any) -> None:
        """One bus message into the view and the frame pairer."""
        now = time.monotonic_ns()
        msg = env.message
        if isinstance(msg, CameraFrame):
            self.core.take(env.topic, env.header, msg, now, time.time())
            if self.pairer.on_frame(msg, now) is not None:
                self._frame_ready.set()
                self._paired.set()
            return
        changed = self.core.take(env.topic, env.header, msg, now, time.time())
        if isinstance(msg, BoardObservation) and env.topic == "vision.board":
            if self.pairer.on_observation(msg, now) is not None:
                self._frame_ready.set()
                self._paired.set()
        elif isinstance(msg, OperatorReply):
            waiter = self._replies.get(msg.command_id)
            if waiter is not None and not waiter.done():
                waiter.set_result(msg)
        elif isinstance(msg, WorldState):
            self._world_changed.set()
        if changed:
            self._dirty |= changed
            self._pushed.set()

    # -- pushing to the pages ---------------------------------------------------------------------------

    def _view(self, kind: str) -> Any:
        now = time.monotonic_ns()
        match kind:
            case "game":
                return self.core.game_view()
            case "vision":
                return self.core.vision_view()
            case "world":
                return self.core.world_view()
            case "health":
                return self.core.health_view(now)
            case "timeline":
                return self.core.timeline_view()[-50:]
            case "stats":
                return self.stats()
        raise ValueError(kind)

    def _post(self, kinds: set[str], clients: set[Client] | None = None) -> None:
        for kind in kinds:
            text = json.dumps({"type": kind, "data": self._view(kind)})
            for client in clients if clients is not None else self.clients:
                client.texts[kind] = text  # the newest replaces an unsent older one
                client.wake.set()

    async def _pusher(self) -> None:
        next_vision = next_slow = 0.0
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._pushed.wait(), timeout=SLOW_PUSH_S)
            self._pushed.clear()
            now = time.monotonic()
            kinds = self._dirty - {"vision", "health"}
            if "vision" in self._dirty and now >= next_vision:
                kinds.add("vision")
                next_vision = now + 1.0 / VISION_PUSH_HZ
            if now >= next_slow:
                kinds |= {"health", "stats"}
                next_slow = now + SLOW_PUSH_S
            self._dirty -= kinds | {"health"}
            if self.clients and kinds:
                self._post(kinds)
            if "vision" in self._dirty:
                # come back for it when the vision rate limit allows
                await asyncio.sleep(max(0.0, next_vision - time.monotonic()))
                self._pushed.set()

    # -- frames -----------------------------------------------------------------------------------------

    async def _encode_newest(self) -> tuple[int, int, bytes] | None:
        """The newest pair as JPEG (encoded once per pair, in a worker thread)."""
        pair = self.pairer.newest
        if pair is None:
            return None
        seq = self.pairer.seq
        async with self._encoding:
            if self._jpeg is not None and self._jpeg[0] >= seq:
                return self._jpeg
            started = time.perf_counter()
            try:
                data = await asyncio.to_thread(overlay.to_jpeg, pair, self.cfg.jpeg_quality)
            except Exception as exc:  # a bad frame must not stop the console
                self.last_error = f"frame {pair.frame.frame_id}: {exc}"
                self.log.warning("cannot show frame", frame_id=pair.frame.frame_id, error=str(exc))
                return self._jpeg
            ms = (time.perf_counter() - started) * 1000
            self.encode_ms = ms if not self.encoded else 0.95 * self.encode_ms + 0.05 * ms
            self.encoded += 1
            self._jpeg = (seq, pair.frame.capture_ns, data)
            return self._jpeg

    async def camera_jpeg(self) -> bytes | None:
        self.watch()
        if self.pairer.newest is None:  # nobody was looking: wait for a fresh frame
            self._paired.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._paired.wait(), timeout=FIRST_FRAME_WAIT_S)
        jpeg = await self._encode_newest()
        return jpeg[2] if jpeg is not None else None

    async def _frames(self) -> None:
        while True:
            await self._frame_ready.wait()
            self._frame_ready.clear()
            for client in self.clients:
                client.flow.drop_older(self.pairer.seq)
            now = time.monotonic_ns()
            waits = [w for w in (c.flow.wait_ns(now) for c in self.clients) if w is not None]
            if not waits or min(waits) > 0:
                self.skipped += 1
                if waits:
                    # only the frame-rate limit holds the frame back: look again when the first page
                    # may take one, so the newest frame still goes when no newer one comes
                    loop = asyncio.get_running_loop()
                    loop.call_later(min(waits) / 1e9, self._frame_ready.set)
                continue  # nobody can take a frame now: do not even encode it
            jpeg = await self._encode_newest()
            if jpeg is None:
                continue
            for client in self.clients:
                client.flow.offer(*jpeg)
                client.wake.set()

    # -- one page ---------------------------------------------------------------------------------------

    async def websocket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=10.0, max_msg_size=4096)
        await ws.prepare(request)
        flow = core.ClientFlow(
            ack_timeout_ns=int(self.cfg.ack_timeout_s * 1e9),
            min_interval_ns=int(1e9 / self.cfg.max_fps) if self.cfg.max_fps > 0 else 0,
        )
        client = Client(ws, flow)
        self.clients.add(client)
        self.watch()
        self._post({"game", "vision", "world", "health", "timeline", "stats"}, {client})
        self._frame_ready.set()
        sender = asyncio.create_task(self._send(client), name="console.ws-send")
        try:
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    seq = shown_ack(msg.data)
                    if seq is not None and flow.acked(seq, time.monotonic_ns()):
                        # The frame loop offers the newest frame and wakes the sender: waking the sender
                        # here would send what waits, which may be older (offered while this one flew).
                        self._frame_ready.set()
        finally:
            self.clients.discard(client)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender
        return ws

    async def _send(self, client: Client) -> None:
        """Send a page what is waiting for it: texts first, then a frame when its flow allows."""
        ws, flow = client.ws, client.flow
        while not ws.closed:
            timeout = 0.02 if flow.waiting is not None else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(client.wake.wait(), timeout=timeout)
            client.wake.clear()
            texts, client.texts = client.texts, {}
            for text in texts.values():
                await ws.send_str(text)
            item = flow.take(time.monotonic_ns())
            if item is not None:
                seq, data = item
                await ws.send_bytes(FRAME_HEADER.pack(seq & 0xFFFFFFFF) + data)

    def stats(self) -> dict[str, Any]:
        now = time.monotonic_ns()
        return {
            "url": self.url,
            "clients": [c.flow.stats(now) for c in self.clients],
            "pairs": self.pairer.seq,
            "encoded": self.encoded,
            "skipped": self.skipped,
            "encode_ms": round(self.encode_ms, 2),
        }

    # -- acting on the bus ------------------------------------------------------------------------------

    async def operator(self, command: OperatorCommand) -> OperatorReply | None:
        """Publish ``command`` (again, same id, every :data:`COMMAND_RESEND_S`) until the referee answers."""
        waiter: asyncio.Future[OperatorReply] = asyncio.get_running_loop().create_future()
        self._replies[command.command_id] = waiter
        deadline = time.monotonic() + self.cfg.command_timeout_s
        try:
            while (left := deadline - time.monotonic()) > 0:
                await self.pub.publish("operator.command", command)
                with contextlib.suppress(TimeoutError):
                    return await asyncio.wait_for(asyncio.shield(waiter), timeout=min(COMMAND_RESEND_S, left))
            return None
        finally:
            self._replies.pop(command.command_id, None)

    async def world_action(self, action: WorldAction) -> bool:
        """Publish ``action`` until the world lists its id as seen; False when it never does."""
        deadline = time.monotonic() + ACTION_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            await self.pub.publish("sim.action", action)
            resend = time.monotonic() + min(ACTION_RESEND_S, left)
            while (wait := resend - time.monotonic()) > 0:
                world = self.core.world
                if world is not None and action.action_id in world.actions_seen:
                    return True
                self._world_changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._world_changed.wait(), timeout=wait)
        world = self.core.world
        return world is not None and action.action_id in world.actions_seen

    async def press(self) -> None:
        await self.pub.publish("sim.button", ButtonLevel(pressed=True))
        await asyncio.sleep(PRESS_HOLD_S)
        await self.pub.publish("sim.button", ButtonLevel(pressed=False))

    async def human(self, setup: HumanSetup) -> None:
        await self.pub.publish("sim.human", setup)


def main(argv: list[str] | None = None) -> int:
    return run_service(ConsoleService, argv)
