"""The binary frame protocol of docs/protocols.md section 2: codec helpers and the controller's engine.

The codec (:func:`crc16_ccitt_false`, :func:`encode_frame`, :class:`FrameReader`) is protocol
arithmetic with no state beyond a byte buffer; the actuator may reuse it, the tests do.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from .config import SimWorldConfig
from .faults import Faults
from .motion import Planner, SoftLimitError
from .world import World

HEADER: Final = b"\xa5\x5a"
MAX_PAYLOAD: Final = 64
#: header, length, sequence, command
PREFIX_LEN: Final = 5
CRC_LEN: Final = 2
REPLY_BIT: Final = 0x80
FIRMWARE: Final = b"sanzi-sim 1.0"

# Commands.
PING: Final = 0x01
HOME: Final = 0x02
MOVE: Final = 0x03
MAGNET: Final = 0x04
STATUS: Final = 0x05
UNLOCK: Final = 0x06
DWELL: Final = 0x07
RESET: Final = 0x08

# Reply status bytes.
ST_OK: Final = 0
ST_UNKNOWN: Final = 1
ST_BAD_PAYLOAD: Final = 2
ST_ALARM: Final = 3
ST_RANGE: Final = 4
ST_QUEUE_FULL: Final = 5

# STATUS states and alarm codes.
STATE_IDLE: Final = 0
STATE_RUN: Final = 1
STATE_HOMING: Final = 2
STATE_ALARM: Final = 3
ALARM_NONE: Final = 0
ALARM_HARD_LIMIT: Final = 1
ALARM_SOFT_LIMIT: Final = 2
ALARM_STALL: Final = 3
ALARM_RESET_IN_MOTION: Final = 9

#: MOVE payload: x, y, z int32 micrometres, feed uint16 mm/min (0 = rapid).
MOVE_FORMAT: Final = "<iiiH"
#: STATUS reply after the status byte: state, x, y, z (µm), magnet, alarm, queued.
STATUS_FORMAT: Final = "<BiiiBBB"
UM_PER_MM: Final = 1000.0


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR.

    >>> hex(crc16_ccitt_false(b"123456789"))
    '0x29b1'
    """
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def encode_frame(seq: int, command: int, payload: bytes = b"") -> bytes:
    """One frame. :raises ValueError: for a payload longer than 64 bytes or fields out of range."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes; at most {MAX_PAYLOAD}")
    if not (0 <= seq <= 255 and 0 <= command <= 255):
        raise ValueError(f"sequence and command must be bytes, got {seq}, {command}")
    body = bytes([len(payload), seq, command]) + payload
    return HEADER + body + crc16_ccitt_false(body).to_bytes(2, "big")


@dataclass(frozen=True)
class Frame:
    seq: int
    command: int
    payload: bytes
    #: the frame's bytes as received (for retry detection).
    raw: bytes


class FrameReader:
    """Assembles frames from a byte stream, resynchronising on the header after garbage.

    ``feed(data)`` returns every complete valid frame; a bad length or CRC discards only the first header
    byte and the search goes on from the next byte. ``discarded`` counts bytes thrown away.
    """

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.discarded = 0
        self.bad_crc = 0

    def feed(self, data: bytes) -> list[Frame]:
        self.buffer += data
        frames: list[Frame] = []
        buf = self.buffer
        while True:
            start = buf.find(HEADER)
            if start < 0:
                # keep a trailing 0xA5: it may be the first half of a header
                keep = 1 if buf.endswith(HEADER[:1]) else 0
                self.discarded += len(buf) - keep
                del buf[: len(buf) - keep]
                break
            if start:
                self.discarded += start
                del buf[:start]
            if len(buf) < PREFIX_LEN:
                break
            length = buf[2]
            if length > MAX_PAYLOAD:
                self.discarded += 1
                del buf[:1]
                continue
            total = PREFIX_LEN + length + CRC_LEN
            if len(buf) < total:
                break
            body = bytes(buf[2 : PREFIX_LEN + length])
            crc = int.from_bytes(buf[PREFIX_LEN + length : total], "big")
            if crc != crc16_ccitt_false(body):
                self.bad_crc += 1
                self.discarded += 1
                del buf[:1]
                continue
            frames.append(
                Frame(
                    seq=buf[3],
                    command=buf[4],
                    payload=bytes(buf[PREFIX_LEN : total - CRC_LEN]),
                    raw=bytes(buf[:total]),
                )
            )
            del buf[:total]
        return frames


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
        self.reader = FrameReader()
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
        reply = encode_frame(frame.seq, frame.command | REPLY_BIT, bytes([status]) + payload)
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
        if len(frame.payload) != struct.calcsize(MOVE_FORMAT):
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        x, y, z, feed = struct.unpack(MOVE_FORMAT, frame.payload)
        target = (x / UM_PER_MM, y / UM_PER_MM, z / UM_PER_MM)
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
        if len(frame.payload) != 2:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        if not self._queued_ok(frame):
            return
        (ms,) = struct.unpack("<H", frame.payload)
        self.planner.push_dwell(ms / 1000.0, self._now)
        self._reply(frame, ST_OK)

    def _status(self, frame: Frame) -> None:
        if frame.payload:
            self._reply(frame, ST_BAD_PAYLOAD)
            return
        self.planner.tick(self._now)
        self._reply(frame, ST_OK, self.status_payload())

    def status_payload(self) -> bytes:
        x, y, z = self.planner.position()
        return struct.pack(
            STATUS_FORMAT,
            self.state(),
            round(x * UM_PER_MM),
            round(y * UM_PER_MM),
            round(z * UM_PER_MM),
            1 if self.world.gripper.magnet else 0,
            self.alarm,
            min(255, len(self.planner.blocks)),
        )

    def state(self) -> int:
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
