"""The binary frame protocol (docs/protocols.md section 2): an asyncio driver.

One command in flight. Each *new* command gets the next sequence number; when no valid reply comes
within the reply timeout the very same bytes are sent again (the controller recognises the retry and
answers from memory without executing twice), and after ``timing.retries`` retries the command fails
with "no reply from controller". Replies whose sequence or command do not match the one in flight are
stale and ignored. :class:`services.common.frame.FrameParser` resynchronises after garbage.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any, Final

from services.common import frame as fp
from services.common.log import get as get_log

from .controller import (
    ALARM,
    HOME,
    IDLE,
    RUN,
    ControllerAlarm,
    ControllerClosed,
    ControllerError,
    ControllerProtocolError,
    ControllerRejected,
    ControllerTimeout,
    MotionController,
    Status,
    Timing,
    wait_future,
)
from .link import LinkError, SerialLink

_STATE_NAMES: Final = {
    fp.MachineState.IDLE: IDLE,
    fp.MachineState.RUN: RUN,
    fp.MachineState.HOMING: HOME,
    fp.MachineState.ALARM: ALARM,
}
#: how many times a "queue full" answer is waited out (with a new sequence number) before failing.
QUEUE_FULL_RETRIES: Final = 50


def alarm_reason(code: int) -> str:
    return (
        f"controller alarm {code} ({fp.ALARM_NAMES.get(code, 'unknown alarm')})"
        if code
        else "controller alarm"
    )


class FrameController(MotionController):
    """A controller speaking the binary frame protocol on a serial port."""

    protocol = "frame"

    def __init__(
        self,
        port: str,
        baudrate: int = 115200,
        *,
        timing: Timing | None = None,
        reset_on_connect: bool = True,
        log: Any = None,
    ):
        super().__init__()
        #: RESET at connect (the service: a clean start); `sanzi motion` keeps the state instead.
        self.reset_on_connect = reset_on_connect
        self.port = port
        self.timing = timing or Timing()
        self.log = log or get_log(component="frame")
        self.link = SerialLink(port, baudrate, on_data=self._on_data, on_lost=self._on_lost)
        self.parser = fp.FrameParser()
        self._lock = asyncio.Lock()
        # Start from a random sequence: a restarted host must not send, as its first command, the exact
        # bytes of the controller's last executed command (it would be taken as a retry).
        self._seq = os.urandom(1)[0]
        self._pending: tuple[int, int, asyncio.Future[bytes]] | None = None
        self.retries_used = 0
        self.stale_replies = 0

    # -- receiving -----------------------------------------------------------------------------------

    def _on_data(self, data: bytes) -> None:
        for frame in self.parser.feed(data):
            pending = self._pending
            if (
                pending is None
                or not frame.is_reply
                or frame.sequence != pending[0]
                or frame.base_command != pending[1]
                or pending[2].done()
            ):
                self.stale_replies += 1
                continue
            pending[2].set_result(frame.payload)

    def _on_lost(self, reason: str) -> None:
        if self._pending is not None and not self._pending[2].done():
            self._pending[2].set_exception(ControllerClosed(reason))
            self._pending[2].exception()  # mark retrieved: nobody may be waiting any more

    # -- one transaction -------------------------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq = (self._seq + 1) & 0xFF
        return self._seq

    async def _transact(
        self, command: fp.Command, payload: bytes = b"", timeout: float | None = None
    ) -> bytes:
        """Send ``command`` and return its reply payload after the status byte.

        :raises ControllerTimeout: after the retries; :raises ControllerAlarm: on status "alarm active";
        :raises ControllerRejected: on any other non-OK status.
        """
        try:
            return await self._transact_locked(command, payload, timeout)
        except ControllerAlarm:
            if command is not fp.Command.STATUS:
                # The refusal does not say which alarm: ask, so the reason names it.
                with contextlib.suppress(ControllerError):
                    await self.status()
                if self.alarm_text:
                    raise ControllerAlarm(
                        f"controller refused {command.name}: {self.alarm_text}", self.alarm
                    ) from None
            raise

    async def _transact_locked(self, command: fp.Command, payload: bytes, timeout: float | None) -> bytes:
        timeout = self.timing.reply if timeout is None else timeout
        name = command.name
        async with self._lock:
            for _ in range(QUEUE_FULL_RETRIES):
                reply = await self._exchange(command, payload, timeout)
                if not reply:
                    raise ControllerProtocolError(f"empty reply to {name}")
                status, body = reply[0], reply[1:]
                if status == fp.ReplyStatus.QUEUE_FULL:
                    # Not executed: wait for room, then send it as a *new* command (new sequence), since
                    # the same bytes would only fetch the stored "queue full" answer again.
                    await asyncio.sleep(self.timing.poll)
                    continue
                if status == fp.ReplyStatus.OK:
                    return body
                text = fp.REPLY_STATUS_TEXT.get(status, f"status {status}")
                if status == fp.ReplyStatus.ALARM:
                    self.position_lost = True
                    raise ControllerAlarm(f"controller refused {name}: {self.alarm_text or text}", self.alarm)
                raise ControllerRejected(f"controller refused {name}: {text}", status)
        raise ControllerTimeout(f"controller queue stayed full for {name}")

    async def _exchange(self, command: fp.Command, payload: bytes, timeout: float) -> bytes:
        seq = self._next_seq()
        data = fp.encode_frame(seq, command, payload)
        attempts = 1 + self.timing.retries
        loop = asyncio.get_running_loop()
        try:
            for attempt in range(attempts):
                fut: asyncio.Future[bytes] = loop.create_future()
                self._pending = (seq, int(command), fut)
                try:
                    self.link.write(data)
                except LinkError as exc:
                    raise ControllerClosed(str(exc)) from None
                try:
                    return await wait_future(fut, timeout, command.name)
                except ControllerTimeout:
                    if attempt + 1 < attempts:
                        self.retries_used += 1
                        self.log.warning(
                            "no reply, retrying with the same sequence",
                            command=command.name,
                            seq=seq,
                            attempt=attempt + 2,
                        )
        finally:
            self._pending = None
        raise ControllerTimeout(
            f"no reply from controller to {command.name} after {attempts} attempt(s) of {timeout:g} s"
        )

    # -- the interface -------------------------------------------------------------------------------

    async def connect(self) -> str:
        try:
            self.link.open()
        except LinkError as exc:
            raise ControllerClosed(str(exc)) from None
        try:
            version = await self._transact(fp.Command.PING)
        except ControllerTimeout:
            await self.close()
            raise ControllerProtocolError(
                f"no answer to PING on {self.port}: is it a frame-protocol controller, at the right baud"
                " rate, and powered?"
            ) from None
        self.firmware = version.decode("ascii", errors="replace")
        if self.reset_on_connect:
            # Empty whatever a previous host left queued; the controller enters alarm if it was moving.
            await self._transact(fp.Command.RESET)
        status = await self.status()
        if status.in_alarm:
            self.position_lost = True
        self.log.info("controller ready", firmware=self.firmware, status=str(status))
        return self.firmware

    async def close(self) -> None:
        self.link.close()
        self._on_lost("port closed")

    async def home(self) -> None:
        await self._transact(fp.Command.HOME, timeout=self.timing.homing)
        self.alarm, self.alarm_text, self.position_lost = 0, "", False

    async def move_to(self, x: float, y: float, z: float, feed: float | None = None) -> None:
        try:
            payload = fp.move_payload(x, y, z, 0.0 if feed is None else feed)
        except fp.FrameError as exc:
            raise ControllerRejected(str(exc)) from None
        await self._transact(fp.Command.MOVE, payload)

    async def magnet(self, on: bool) -> None:
        await self._transact(fp.Command.MAGNET, bytes((1 if on else 0,)))

    async def dwell(self, seconds: float) -> None:
        try:
            payload = fp.dwell_payload(seconds)
        except fp.FrameError as exc:
            raise ControllerRejected(str(exc)) from None
        await self._transact(fp.Command.DWELL, payload)

    async def status(self) -> Status:
        body = await self._transact(fp.Command.STATUS)
        try:
            report = fp.parse_status(body)
        except fp.FrameError as exc:
            raise ControllerProtocolError(str(exc)) from None
        status = Status(
            state=_STATE_NAMES.get(report.state, f"state {report.state}"),
            x_mm=report.x_mm,
            y_mm=report.y_mm,
            z_mm=report.z_mm,
            magnet=report.magnet,
            alarm=report.alarm,
            queued=report.queued,
        )
        if report.alarm and report.alarm != self.alarm:
            self.alarm, self.alarm_text, self.position_lost = report.alarm, alarm_reason(report.alarm), True
            self.log.warning("controller alarm", code=report.alarm, reason=self.alarm_text)
        self._report(status)
        return status

    async def wait_idle(self, timeout: float | None = None) -> Status:
        limit = self.timing.motion if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            status = await self.status()
            if status.in_alarm:
                raise ControllerAlarm(self.alarm_text or alarm_reason(status.alarm), status.alarm)
            if status.idle:
                return status
            if time.monotonic() > deadline:
                raise ControllerTimeout(f"machine still {status.state} after {limit:g} s: {status}")
            await asyncio.sleep(self.timing.poll)

    async def unlock(self) -> None:
        await self._transact(fp.Command.UNLOCK)
        self.alarm, self.alarm_text = 0, ""

    async def reset(self) -> None:
        await self._transact(fp.Command.RESET)
        status = await self.status()
        if status.in_alarm:
            self.position_lost = True

    async def ping(self) -> str:
        return (await self._transact(fp.Command.PING)).decode("ascii", errors="replace")


def status_reply(report: fp.StatusReport) -> bytes:
    """A STATUS reply payload (status byte OK + report), for fakes and tests."""
    return bytes((fp.ReplyStatus.OK,)) + fp.status_payload(report)


__all__ = ["FrameController", "status_reply"]
