"""The actuator process: a thin shell around :class:`services.actuator.core.ActuatorCore`.

- connects to the motion controller (retrying every ``actuator.reconnect_s`` while the port is absent),
  homes when configured;
- takes ``actuator.command``: queries are answered at once, other commands are carried out one at a time
  in arrival order; a command id that is being carried out or waits in the queue is answered
  ``accepted`` (repeat) again, and queued once only;
- keeps the newest board pose from ``vision.board`` / ``vision.stable``;
- publishes ``actuator.event`` for every step of every command and ``actuator.position`` every
  ``actuator.position_period_s`` (state "Offline" while the controller is not connected).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from messages import ActuatorCommand, ActuatorEvent, ActuatorPosition, BoardObservation
from services.common.config import Config
from services.common.shell import Service

from .controller import OFFLINE, ControllerClosed, ControllerError, Status
from .core import ActuatorCore
from .drivers import make_controller
from .record import ActuatorRecord

#: actuator.position is re-sent this often even when nothing changed (a late joiner learns it).
POSITION_REFRESH_S = 1.0


class ActuatorService(Service):
    """The mechanism: commands in, events and position out."""

    name = "actuator"

    def __init__(self, config: Config, log: Any | None = None) -> None:
        super().__init__(config, log)
        cfg = config.actuator
        slots = {"black": config.table.black_supply.slots, "white": config.table.white_supply.slots}
        self.record = ActuatorRecord(cfg.state_file, slots, log=self.log).load()
        self.controller = make_controller(cfg, log=self.log.bind(component=cfg.protocol))
        self.core = ActuatorCore(self.controller, config, self.record, log=self.log)
        self.ready = asyncio.Event()
        self.connect_error = ""
        self._reconnect = asyncio.Event()
        self._queue: asyncio.Queue[ActuatorCommand] = asyncio.Queue()
        #: ids in the queue, not begun yet (a query about one is answered "accepted", not "unknown").
        self._queued: set[str] = set()

    async def emit(self, event: ActuatorEvent) -> None:
        await self.pub.publish("actuator.event", event)

    async def run(self) -> None:
        sub = self.subscribe(["actuator.command", "vision.board", "vision.stable"])
        tasks = [
            asyncio.create_task(self._connect_loop(), name="actuator.connect"),
            asyncio.create_task(self._worker(), name="actuator.worker"),
            asyncio.create_task(self._position_loop(), name="actuator.position"),
        ]
        try:
            while True:
                env = await sub.recv(timeout=1.0)
                for task in tasks:
                    if task.done() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]
                if env is None:
                    continue
                match env.message:
                    case BoardObservation() as obs:
                        self.core.observe(obs)
                    case ActuatorCommand() as cmd:
                        await self._take(cmd)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _take(self, cmd: ActuatorCommand) -> None:
        if cmd.command_id in self._queued and self.record.outcome(cmd.command_id) is None:
            await self.emit(
                ActuatorEvent(
                    command_id=cmd.command_id, status="accepted", kind=cmd.kind, repeat=True, reason="queued"
                )
            )
        elif cmd.kind == "query":
            await self.emit(self.core.answer_query(cmd))
        elif cmd.command_id == self.core.current:
            await self.emit(self.core.answer_query(cmd))  # being carried out: "accepted" again
        else:
            self.log.info(
                "command received", command=cmd.command_id, kind=cmd.kind, queued=self._queue.qsize()
            )
            self._queued.add(cmd.command_id)
            await self._queue.put(cmd)

    async def _connect_loop(self) -> None:
        while True:
            try:
                firmware = await self.controller.connect()
                status = await self.core.startup()
            except ControllerError as exc:
                self.connect_error = str(exc)
                self.health, self.detail = "fault", f"controller: {exc}"
                self.log.warning(
                    "controller not available", error=str(exc), retry_s=self.config.actuator.reconnect_s
                )
                with contextlib.suppress(ControllerError):
                    await self.controller.close()
                await asyncio.sleep(self.config.actuator.reconnect_s)
                continue
            self.connect_error = ""
            self.health, self.detail = "ok", f"{firmware}; {status}"
            self.log.info("controller ready for commands", status=str(status))
            self.ready.set()
            self._reconnect.clear()
            await self._reconnect.wait()
            self.ready.clear()
            with contextlib.suppress(ControllerError):
                await self.controller.close()

    async def _worker(self) -> None:
        while True:
            cmd = await self._queue.get()
            try:
                await self._carry_out(cmd)
            finally:
                self._queued.discard(cmd.command_id)

    async def _carry_out(self, cmd: ActuatorCommand) -> None:
        if not self.ready.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ready.wait(), 2 * self.config.actuator.reconnect_s)
        # Known ids are still answered from the record; a new one cannot be carried out.
        if not self.ready.is_set() and self.record.outcome(cmd.command_id) is None:
            await self.emit(
                ActuatorEvent(
                    command_id=cmd.command_id,
                    status="failed",
                    kind=cmd.kind,
                    reason=f"controller not connected: {self.connect_error or 'connecting'}",
                )
            )
            return
        event = await self.core.execute(cmd, self.emit)
        if event.status == "failed" and not self.controller_alive():
            self._reconnect.set()

    def controller_alive(self) -> bool:
        link = getattr(self.controller, "link", None)
        return bool(link is not None and link.is_open)

    async def _position_loop(self) -> None:
        period = self.config.actuator.position_period_s
        last: ActuatorPosition | None = None
        last_sent = 0.0
        while True:
            await asyncio.sleep(period)
            status: Status | None = None
            if self.ready.is_set():
                if not self.core.current:
                    try:
                        status = await self.controller.status()
                    except ControllerClosed:
                        self._reconnect.set()
                    except ControllerError as exc:
                        self.log.warning("status poll failed", error=str(exc))
                status = status or self.controller.last_status
            position = (
                ActuatorPosition(
                    x_mm=status.x_mm,
                    y_mm=status.y_mm,
                    z_mm=status.z_mm,
                    magnet=status.magnet,
                    state=status.state,
                )
                if status is not None
                else ActuatorPosition(x_mm=0.0, y_mm=0.0, z_mm=0.0, state=OFFLINE)
            )
            now = time.monotonic()
            if position != last or now - last_sent >= POSITION_REFRESH_S:
                await self.pub.publish("actuator.position", position)
                last, last_sent = position, now

    async def shutdown(self) -> None:
        with contextlib.suppress(ControllerError):
            await self.controller.close()
