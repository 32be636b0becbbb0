"""Test helpers: a GRBL line client and a frame client over pyserial on the emulated controller's pty."""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from typing import Any

import serial

from services.common import frame as codec
from services.simworld import frame as F

#: generous deadlines: the machine is shared; a test never asserts a wall-clock time.
DEADLINE_S = 10.0


class GrblClient:
    """Send-response over a real serial port, like a G-code sender."""

    def __init__(self, port: str) -> None:
        self.ser = serial.Serial(port, 115200, timeout=0.05)
        self.buffer = b""
        self.log: list[str] = []

    def close(self) -> None:
        self.ser.close()

    def read_line(self, deadline_s: float = DEADLINE_S) -> str | None:
        end = time.monotonic() + deadline_s
        while b"\n" not in self.buffer:
            if time.monotonic() > end:
                return None
            self.buffer += self.ser.read(max(1, self.ser.in_waiting))
        line, _, self.buffer = self.buffer.partition(b"\n")
        text = line.decode("ascii", errors="replace").rstrip("\r")
        self.log.append(text)
        return text

    def read_until(self, predicate: Callable[[str], bool], deadline_s: float = DEADLINE_S) -> list[str]:
        """Lines up to and including the first one matching ``predicate``.
        :raises AssertionError: at the deadline."""
        lines: list[str] = []
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            line = self.read_line(max(0.0, end - time.monotonic()))
            if line is None:
                break
            lines.append(line)
            if predicate(line):
                return lines
        raise AssertionError(f"no matching line; got {lines}")

    def send(self, line: str) -> list[str]:
        """One line; the lines received up to its ``ok`` or ``error:N``."""
        self.ser.write(line.encode("ascii") + b"\n")
        return self.read_until(lambda s: s == "ok" or s.startswith("error:"))

    def reset(self) -> list[str]:
        self.ser.write(b"\x18")
        return self.read_until(lambda s: s.startswith("Grbl "))

    def status(self) -> str:
        self.ser.write(b"?")
        return self.read_until(lambda s: s.startswith("<"))[-1]

    def wait_idle(self, deadline_s: float = DEADLINE_S) -> str:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            report = self.status()
            if report.startswith("<Idle"):
                return report
            time.sleep(0.005)
        raise AssertionError("never idle")


def mpos(report: str) -> tuple[float, float, float]:
    field = next(part for part in report.strip("<>").split("|") if part.startswith("MPos:"))
    x, y, z = (float(v) for v in field[5:].split(","))
    return x, y, z


class FrameClient:
    """The binary protocol's host side over a real serial port."""

    def __init__(self, port: str) -> None:
        self.ser = serial.Serial(port, 115200, timeout=0.05)
        self.reader = codec.FrameParser()
        self.seq = 0
        self.pending: list[codec.Frame] = []

    def close(self) -> None:
        self.ser.close()

    def next_seq(self) -> int:
        self.seq = (self.seq + 1) % 256
        return self.seq

    def read_frame(self, deadline_s: float = 2.0) -> codec.Frame | None:
        end = time.monotonic() + deadline_s
        while not self.pending:
            if time.monotonic() > end:
                return None
            self.pending += self.reader.feed(self.ser.read(max(1, self.ser.in_waiting)))
        return self.pending.pop(0)

    def request(
        self, command: int, payload: bytes = b"", seq: int | None = None
    ) -> tuple[bytes, codec.Frame]:
        """Send a command; returns (its bytes, the matching reply). Stale replies are skipped."""
        seq = self.next_seq() if seq is None else seq
        data = codec.encode_frame(seq, command, payload)
        self.ser.write(data)
        return data, self.expect(seq, command)

    def expect(self, seq: int, command: int, deadline_s: float = DEADLINE_S) -> codec.Frame:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            reply = self.read_frame(max(0.0, end - time.monotonic()))
            if reply is not None and reply.seq == seq and reply.command == command | codec.REPLY_BIT:
                return reply
        raise AssertionError(f"no reply to seq {seq}")

    def status(self) -> dict[str, Any]:
        _, reply = self.request(F.STATUS)
        assert reply.payload[0] == F.ST_OK
        state, x, y, z, magnet, alarm, queued = struct.unpack(codec.STATUS_FORMAT, reply.payload[1:])
        return {
            "state": state,
            "x": x / 1000,
            "y": y / 1000,
            "z": z / 1000,
            "magnet": magnet,
            "alarm": alarm,
            "queued": queued,
        }

    def wait_idle(self, deadline_s: float = DEADLINE_S) -> dict[str, Any]:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            st = self.status()
            if st["state"] == F.STATE_IDLE and st["queued"] == 0:
                return st
            time.sleep(0.005)
        raise AssertionError("never idle")

    def move(self, x: float, y: float, z: float, feed: int = 0) -> codec.Frame:
        payload = struct.pack(codec.MOVE_FORMAT, round(x * 1000), round(y * 1000), round(z * 1000), feed)
        return self.request(F.MOVE, payload)[1]
