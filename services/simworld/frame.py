"""The binary frame protocol of docs/protocols.md section 2: the emulated controller's command handling.

The codec (CRC, framing, resynchronisation, payload layouts) is :mod:`services.common.frame`, the same one
the actuator's driver uses; this module holds only what the firmware does with a frame. The short
constant names below are aliases of the codec's enumerations, kept for the emulator and its tests.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Final

from services.common.frame import (
    HEADER,
    REPLY_BIT,
    Alarm,
    Command,
    Frame,
    FrameError,
    FrameParser,
    MachineState,
    ReplyStatus,
    StatusReport,
    encode_frame,
    parse_dwell,
    parse_move,
    status_payload,
)

from .config import SimWorldConfig
from .faults import Faults
from .motion import Planner, SoftLimitError
from .world import World

FIRMWARE: Final = b"sanzi-sim 1.0"

# Commands.
PING: Final = Command.PING
HOME: Final = Command.HOME
MOVE: Final = Command.MOVE
MAGNET: Final = Command.MAGNET
STATUS: Final = Command.STATUS
UNLOCK: Final = Command.UNLOCK
DWELL: Final = Command.DWELL
RESET: Final = Command.RESET

# Reply status bytes.
ST_OK: Final = ReplyStatus.OK
ST_UNKNOWN: Final = ReplyStatus.UNKNOWN_COMMAND
ST_BAD_PAYLOAD: Final = ReplyStatus.BAD_PAYLOAD
ST_ALARM: Final = ReplyStatus.ALARM
ST_RANGE: Final = ReplyStatus.OUT_OF_RANGE
ST_QUEUE_FULL: Final = ReplyStatus.QUEUE_FULL

# STATUS states and alarm codes.
STATE_IDLE: Final = MachineState.IDLE
STATE_RUN: Final = MachineState.RUN
STATE_HOMING: Final = MachineState.HOMING
STATE_ALARM: Final = MachineState.ALARM
ALARM_NONE: Final = Alarm.NONE
ALARM_HARD_LIMIT: Final = Alarm.HARD_LIMIT
ALARM_SOFT_LIMIT: Final = Alarm.SOFT_LIMIT
ALARM_STALL: Final = Alarm.STALL
ALARM_RESET_IN_MOTION: Final = Alarm.RESET_IN_MOTION


class FrameEngine:
    """The custom microcontroller's firmware model over bytes (see :class:`.grbl.GrblEngine` for the
    calling convention). Alarms stop motion, empty the queue and switch the magnet off."""

    def __init__(
        self,
        world: World,
        planner: Planner,
        sim: SimWorldConfig,
        faults: Faults,
        out: Callable[[bytes], None],
    ) -> None:
        self.world = world
        self.planner = planner
        self.sim = sim
        self.faults = faults
        self.out = out
        self.rng = random.Random(sim.seed + 2)
        self.reader = FrameParser()
        self.alarm = ALARM_NONE
        self.homed = False
        self._now = 0.0
        #: the last executed command's frame bytes and its reply (retry detection).
        self._last_raw: bytes | None = None
        self._last_reply: bytes | None = None
        #: a HOME whose reply waits for homing to finish.
        self._deferred: bytes | None = None
        #: commands executed (a retry is not counted): for tests and the bench.
        self.executed = 0
        self.retries_answered = 0
        planner.on_alarm = self._hard_alarm

    def power_on(self) -> None:
        """The microcontroller prints nothing at start."""

    # ------------------------------------------------------------------ output

    def _send(self, frame: bytes) -> None:
        if self.faults.take("garbage"):
            junk = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(3, 12)))
            # A fake header with an impossible length, then noise: the host must resynchronise.
            self.out(HEADER + b"\xff" + junk)
        if self.faults.take("lose-reply"):
            return
        self.out(frame)

    def _reply(self, frame: Frame, status: int, payload: bytes = b"", remember: bool = True) -> None:
        reply = encode_frame(frame.sequence, frame.command | REPLY_BIT, bytes([status]) + payload)
        if remember:
            self._last_raw, self._last_reply = frame.raw, reply
        self._send(reply)

    # ------------------------------------------------------------------ input

    def receive(self, data: bytes, now: float) -> None:
        self._now = now
        self.planner.tick(now)
        for frame in self.reader.feed(data):
            self._handle(frame)
        self.tick(now)

    def tick(self, now: float) -> None:
        self._now = now
        self.planner.tick(now)

    def _handle(self, frame: Frame) -> None:
        if frame.raw == self._last_raw:
            self.retries_answered += 1
            if self._deferred is not None and self._deferred == frame.raw:
                return  # homing still running: its one reply comes when it is done
            assert self._last_reply is not None
            self._send(self._last_reply)
            return
        if self._deferred is not None and frame.command not in (RESET, STATUS):
            # Homing in progress: only RESET and STATUS are served (the firmware is busy homing).
            self._reply(frame, ST_QUEUE_FULL, remember=False)
            return
        self.executed += 1
        handler = _HANDLERS.get(frame.command)
        if handler is None:
            self._reply(frame, ST_UNKNOWN)
            return
        handler(self, frame)

    # ------------------------------------------------------------------ commands

    def _ping(self, frame: Frame) -> None:
        if frame.payload:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        self._reply(frame, ST_OK, FIRMWARE)

    def _home(self, frame: Frame) -> None:
        if frame.payload:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        if self.planner.busy:
            self.planner.stop(self._now)
        self.alarm = ALARM_NONE
        self._last_raw, self._last_reply = frame.raw, None
        self._deferred = frame.raw

        def done() -> None:
            self.homed = True
            self._deferred = None
            self._reply(frame, ST_OK)

        self.planner.push_home(self._now, on_done=done)

    def _queued_ok(self, frame: Frame) -> bool:
        """Common checks of queued commands; replies and returns False when refused."""
        if self.alarm != ALARM_NONE:
            self._reply(frame, ST_ALARM)
            return False
        if self.planner.free() <= 0:
            # Not remembered: the host retries the same bytes later and they must then be executed.
            self._reply(frame, ST_QUEUE_FULL, remember=False)
            return False
        return True

    def _move(self, frame: Frame) -> None:
        try:
            x, y, z, feed = parse_move(frame.payload)
        except FrameError:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        target = (x, y, z)
        if not self._queued_ok(frame):
            return
        try:
            self.planner.check_limits(target)
        except SoftLimitError:
            self._reply(frame, ST_RANGE)
            return
        self.planner.push_move(target, float(feed) if feed else None, self._now)
        self._reply(frame, ST_OK)

    def _magnet(self, frame: Frame) -> None:
        if len(frame.payload) != 1 or frame.payload[0] > 1:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        if not self._queued_ok(frame):
            return
        self.planner.push_magnet(bool(frame.payload[0]), self._now)
        self._reply(frame, ST_OK)

    def _dwell(self, frame: Frame) -> None:
        try:
            seconds = parse_dwell(frame.payload)
        except FrameError:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        if not self._queued_ok(frame):
            return
        self.planner.push_dwell(seconds, self._now)
        self._reply(frame, ST_OK)

    def _status(self, frame: Frame) -> None:
        if frame.payload:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        self.planner.tick(self._now)
        self._reply(frame, ST_OK, self.status_payload())

    def status_payload(self) -> bytes:
        """The STATUS reply's payload after the status byte: where the machine is and what it does."""
        x, y, z = self.planner.position()
        report = StatusReport(
            state=self.state(),
            x_mm=x,
            y_mm=y,
            z_mm=z,
            magnet=self.world.gripper.magnet,
            alarm=self.alarm,
            queued=min(255, len(self.planner.blocks)),
        )
        return status_payload(report)

    def state(self) -> int:
        """The STATUS ``state`` byte."""
        if self.alarm != ALARM_NONE:
            return STATE_ALARM
        if self.planner.homing:
            return STATE_HOMING
        if self.planner.busy:
            return STATE_RUN
        return STATE_IDLE

    def _unlock(self, frame: Frame) -> None:
        if frame.payload:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        self.alarm = ALARM_NONE
        self._reply(frame, ST_OK)

    def _reset(self, frame: Frame) -> None:
        if frame.payload:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        was_moving = self._abort()
        if was_moving:
            self.alarm = ALARM_RESET_IN_MOTION
        self._reply(frame, ST_OK)

    # ------------------------------------------------------------------ alarms

    def _abort(self) -> bool:
        was_moving = self.planner.stop(self._now)
        self._deferred = None
        self.world.set_magnet(False)
        return was_moving

    def raise_alarm(self, code: int, now: float) -> None:
        self._now = now
        self._abort()
        self.alarm = code

    def _hard_alarm(self, code: int) -> None:
        self.raise_alarm(code, self._now)


_HANDLERS: dict[int, Callable[[FrameEngine, Frame], None]] = {
    PING: FrameEngine._ping,
    HOME: FrameEngine._home,
    MOVE: FrameEngine._move,
    MAGNET: FrameEngine._magnet,
    STATUS: FrameEngine._status,
    UNLOCK: FrameEngine._unlock,
    DWELL: FrameEngine._dwell,
    RESET: FrameEngine._reset,
}
