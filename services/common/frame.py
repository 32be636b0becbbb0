"""The binary frame protocol of docs/protocols.md section 2, as pure functions: no I/O.

The one codec of the protocol: the actuator's driver (:mod:`services.actuator.framed`) and the simulator's
emulated controller (:mod:`services.simworld.frame`) both encode and decode frames and payloads here.

A frame is ``A5 5A | length | sequence | command | payload (length bytes) | CRC-16 big-endian``, the CRC
(CRC-16/CCITT-FALSE) taken over length, sequence, command and payload. :class:`FrameParser` turns an
arbitrary byte stream into frames and resynchronises after garbage: on a bad length or a bad CRC it
drops only the first header byte and searches again, because a real header may hide inside the garbage.

>>> crc16_ccitt_false(b"123456789") == 0x29B1
True
>>> p = FrameParser()
>>> [f.sequence for f in p.feed(b"\\x00\\xff" + encode_frame(7, Command.PING) + b"\\xa5")]
[7]
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

HEADER: Final = b"\xa5\x5a"
MAX_PAYLOAD: Final = 64
#: header (2) + length + sequence + command, before the payload.
PREFIX_LEN: Final = 5
CRC_LEN: Final = 2
#: the reply to command C carries C | REPLY_BIT.
REPLY_BIT: Final = 0x80


class Command(IntEnum):
    """Host-to-controller command codes."""

    PING = 0x01
    HOME = 0x02
    MOVE = 0x03
    MAGNET = 0x04
    STATUS = 0x05
    UNLOCK = 0x06
    DWELL = 0x07
    RESET = 0x08


class ReplyStatus(IntEnum):
    """The first payload byte of every reply."""

    OK = 0
    UNKNOWN_COMMAND = 1
    BAD_PAYLOAD = 2
    ALARM = 3
    OUT_OF_RANGE = 4
    QUEUE_FULL = 5


class MachineState(IntEnum):
    """The ``state`` byte of a STATUS reply."""

    IDLE = 0
    RUN = 1
    HOMING = 2
    ALARM = 3


class Alarm(IntEnum):
    """The ``alarm`` byte of a STATUS reply."""

    NONE = 0
    HARD_LIMIT = 1
    SOFT_LIMIT = 2
    STALL = 3
    RESET_IN_MOTION = 9


#: alarm codes in a STATUS reply, for messages to people.
ALARM_NAMES: Final[dict[int, str]] = {
    0: "none",
    1: "hard limit",
    2: "soft limit",
    3: "stall detected",
    9: "reset while moving",
}

REPLY_STATUS_TEXT: Final[dict[int, str]] = {
    0: "ok",
    1: "unknown command",
    2: "bad payload",
    3: "alarm active",
    4: "out of travel range",
    5: "queue full",
}


class FrameError(ValueError):
    """A frame cannot be built (payload too long, value out of range) or a payload cannot be read."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded frame. ``command`` keeps the reply bit when it is a reply."""

    sequence: int
    command: int
    payload: bytes = b""

    @property
    def is_reply(self) -> bool:
        """Whether this frame is a reply (bit 7 of the command set)."""
        return bool(self.command & REPLY_BIT)

    @property
    def base_command(self) -> int:
        """The command without the reply bit."""
        return self.command & ~REPLY_BIT

    @property
    def seq(self) -> int:
        """The sequence number (the emulated controller's short name for :attr:`sequence`)."""
        return self.sequence

    @property
    def raw(self) -> bytes:
        """The frame's bytes as sent (a decoded frame's bytes are exactly its encoding)."""
        return self.encode()

    def encode(self) -> bytes:
        """The bytes of this frame; see :func:`encode_frame`."""
        return encode_frame(self.sequence, self.command, self.payload)


def crc16_ccitt_false(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE: polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR."""
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def encode_frame(sequence: int, command: int, payload: bytes = b"") -> bytes:
    """The bytes of one frame. :raises FrameError: on a payload over 64 bytes or a field out of range."""
    if len(payload) > MAX_PAYLOAD:
        raise FrameError(f"payload of {len(payload)} bytes exceeds the maximum: at most {MAX_PAYLOAD}")
    if not 0 <= sequence <= 255 or not 0 <= command <= 255:
        raise FrameError(f"sequence {sequence} and command {command} must be bytes (0..255)")
    body = bytes((len(payload), sequence, command)) + payload
    return HEADER + body + crc16_ccitt_false(body).to_bytes(2, "big")


class FrameParser:
    """Incremental decoder of a byte stream into :class:`Frame` objects, resynchronising on the header.

    ``discarded`` counts bytes thrown away (garbage, broken frames); ``bad_crc`` counts header matches
    whose CRC failed. Not thread-safe: one reader feeds it.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self.discarded = 0
        self.bad_crc = 0

    def feed(self, data: bytes) -> list[Frame]:
        """Add ``data``; return every complete, valid frame now available, in order."""
        self._buf += data
        frames: list[Frame] = []
        while True:
            start = self._buf.find(HEADER)
            if start < 0:
                # Keep a trailing 0xA5: it may be the first half of a header split across reads.
                keep = 1 if self._buf.endswith(HEADER[:1]) else 0
                self.discarded += len(self._buf) - keep
                del self._buf[: len(self._buf) - keep]
                return frames
            if start:
                self.discarded += start
                del self._buf[:start]
            if len(self._buf) < PREFIX_LEN:
                return frames
            length = self._buf[2]
            if length > MAX_PAYLOAD:
                self._skip_header_byte()
                continue
            total = PREFIX_LEN + length + CRC_LEN
            if len(self._buf) < total:
                return frames
            body = bytes(self._buf[2 : PREFIX_LEN + length])
            crc = int.from_bytes(self._buf[PREFIX_LEN + length : total], "big")
            if crc != crc16_ccitt_false(body):
                self.bad_crc += 1
                self._skip_header_byte()
                continue
            frames.append(Frame(sequence=body[1], command=body[2], payload=body[3:]))
            del self._buf[:total]

    def _skip_header_byte(self) -> None:
        self.discarded += 1
        del self._buf[:1]

    def clear(self) -> None:
        """Forget any partial frame."""
        self._buf.clear()


# --- payloads -------------------------------------------------------------------------------------

#: MOVE payload: x, y, z int32 micrometres, feed uint16 mm/min (0 = rapid).
MOVE_FORMAT: Final = "<iiiH"
#: STATUS reply after the status byte: state, x, y, z (micrometres), magnet, alarm, queued.
STATUS_FORMAT: Final = "<BiiiBBB"
#: DWELL payload: milliseconds.
DWELL_FORMAT: Final = "<H"
_MOVE = struct.Struct(MOVE_FORMAT)
_STATUS = struct.Struct(STATUS_FORMAT)
_DWELL = struct.Struct(DWELL_FORMAT)
MICRONS_PER_MM: Final = 1000
MAX_FEED: Final = 0xFFFF


def move_payload(x_mm: float, y_mm: float, z_mm: float, feed_mm_min: float) -> bytes:
    """MOVE payload: x, y, z int32 micrometres, feed uint16 mm/min (0 = rapid).
    :raises FrameError: when the feed does not fit in 16 bits or is negative."""
    feed = round(feed_mm_min)
    if not 0 <= feed <= MAX_FEED:
        raise FrameError(f"feed {feed_mm_min} mm/min out of range 0..{MAX_FEED}")
    return _MOVE.pack(
        round(x_mm * MICRONS_PER_MM), round(y_mm * MICRONS_PER_MM), round(z_mm * MICRONS_PER_MM), feed
    )


def parse_move(payload: bytes) -> tuple[float, float, float, int]:
    """Decode a MOVE payload into (x, y, z in millimetres, feed in mm/min, 0 = rapid).
    :raises FrameError: on a wrong length."""
    if len(payload) != _MOVE.size:
        raise FrameError(f"MOVE payload of {len(payload)} bytes, expected {_MOVE.size}")
    x, y, z, feed = _MOVE.unpack(payload)
    return x / MICRONS_PER_MM, y / MICRONS_PER_MM, z / MICRONS_PER_MM, feed


def dwell_payload(seconds: float) -> bytes:
    """DWELL payload: uint16 milliseconds. :raises FrameError: outside 0..65.535 s."""
    ms = round(seconds * 1000)
    if not 0 <= ms <= 0xFFFF:
        raise FrameError(f"dwell of {seconds} s out of range 0..65.535 s")
    return _DWELL.pack(ms)


def parse_dwell(payload: bytes) -> float:
    """Decode a DWELL payload into seconds. :raises FrameError: on a wrong length."""
    if len(payload) != _DWELL.size:
        raise FrameError(f"DWELL payload of {len(payload)} bytes, expected {_DWELL.size}")
    (ms,) = _DWELL.unpack(payload)
    return ms / 1000


@dataclass(frozen=True, slots=True)
class StatusReport:
    """A decoded STATUS reply (after its status byte)."""

    state: int
    x_mm: float
    y_mm: float
    z_mm: float
    magnet: bool
    alarm: int
    queued: int


def parse_status(payload: bytes) -> StatusReport:
    """Decode a STATUS reply's payload *after* the status byte. :raises FrameError: on a wrong length."""
    if len(payload) != _STATUS.size:
        raise FrameError(f"STATUS reply of {len(payload)} bytes, expected {_STATUS.size}")
    state, x, y, z, magnet, alarm, queued = _STATUS.unpack(payload)
    return StatusReport(
        state=state,
        x_mm=x / MICRONS_PER_MM,
        y_mm=y / MICRONS_PER_MM,
        z_mm=z / MICRONS_PER_MM,
        magnet=bool(magnet),
        alarm=alarm,
        queued=queued,
    )


def status_payload(report: StatusReport) -> bytes:
    """The inverse of :func:`parse_status` (for fakes and tests)."""
    return _STATUS.pack(
        report.state,
        round(report.x_mm * MICRONS_PER_MM),
        round(report.y_mm * MICRONS_PER_MM),
        round(report.z_mm * MICRONS_PER_MM),
        int(report.magnet),
        report.alarm,
        report.queued,
    )
