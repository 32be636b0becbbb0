"""A scripted controller on a real pseudo-terminal, for protocol-layer tests (like python-chess's mock
transport): the test says what to answer to what, and sees every byte the driver sent. It runs in the
test's event loop (add_reader on the pty master)."""

from __future__ import annotations

import asyncio
import os
import tty
from collections import defaultdict, deque
from collections.abc import Callable

from services.common import frame as fp


class Peer:
    """The controller's end of a pty. ``respond(data) -> bytes`` decides what to send back."""

    def __init__(self, respond: Callable[[bytes], bytes]) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.port = os.ttyname(self.slave)
        self.respond = respond
        self.received = bytearray()
        self.silent = False

    def start(self) -> None:
        asyncio.get_running_loop().add_reader(self.master, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self.master, 4096)
        except OSError:
            return
        self.received += data
        if not self.silent:
            self.send(self.respond(data))

    def send(self, data: bytes) -> None:
        if data:
            os.write(self.master, data)

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.master)
        os.close(self.master)
        os.close(self.slave)


class FakeGrbl:
    """Answers GRBL lines from a script: ``expect(line, *replies)`` queues replies for the next time
    ``line`` arrives; unscripted lines get ``ok``. ``?`` is answered with :attr:`status`, Ctrl-X with the
    banner (:attr:`banner`, None for silence)."""

    def __init__(self) -> None:
        self.script: defaultdict[str, deque[list[str | bytes]]] = defaultdict(deque)
        self.lines: list[str] = []
        self.status = "<Idle|MPos:0.000,0.000,0.000|FS:0,0>"
        self.banner: str | None = "Grbl 1.1h ['$' for help]"
        self.answer_status = True
        self._buf = bytearray()
        self.peer = Peer(self._respond)

    def expect(self, line: str, *replies: str | bytes) -> None:
        self.script[line].append(list(replies))

    def _respond(self, data: bytes) -> bytes:
        out = bytearray()
        for byte in data:
            if byte == ord("?"):
                if self.answer_status:
                    out += self.status.encode() + b"\r\n"
            elif byte == 0x18:
                self._buf.clear()
                if self.banner is not None:
                    out += b"\r\n" + self.banner.encode() + b"\r\n"
            elif byte in (0x0A, 0x0D):
                line = self._buf.decode()
                self._buf.clear()
                if not line:
                    continue
                self.lines.append(line)
                replies = self.script[line].popleft() if self.script[line] else ["ok"]
                for r in replies:
                    out += r if isinstance(r, bytes) else r.encode() + b"\r\n"
            else:
                self._buf.append(byte)
        return bytes(out)


class FakeFrame:
    """Answers frames: ``replies[command]`` is a queue of (status, payload) or None (no reply); the
    default is OK with an empty payload (STATUS: an idle report)."""

    def __init__(self) -> None:
        self.parser = fp.FrameParser()
        self.replies: defaultdict[int, deque[tuple[int, bytes] | None]] = defaultdict(deque)
        self.frames: list[fp.Frame] = []
        self.raw: list[bytes] = []
        self.stale_first = False
        self.report = fp.StatusReport(state=0, x_mm=0, y_mm=0, z_mm=0, magnet=False, alarm=0, queued=0)
        self.peer = Peer(self._respond)

    def _respond(self, data: bytes) -> bytes:
        out = bytearray()
        for frame in self.parser.feed(data):
            self.frames.append(frame)
            self.raw.append(frame.encode())
            queue = self.replies[frame.command]
            reply = queue.popleft() if queue else self._default(frame)
            if reply is None:
                continue
            status, payload = reply
            if self.stale_first:
                self.stale_first = False
                out += fp.encode_frame((frame.sequence - 1) & 0xFF, frame.command | fp.REPLY_BIT, b"\x00")
            out += fp.encode_frame(frame.sequence, frame.command | fp.REPLY_BIT, bytes([status]) + payload)
        return bytes(out)

    def _default(self, frame: fp.Frame) -> tuple[int, bytes]:
        if frame.command == fp.Command.STATUS:
            return 0, fp.status_payload(self.report)
        if frame.command == fp.Command.PING:
            return 0, b"fake 1.0"
        return 0, b""
