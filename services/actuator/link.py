"""The serial link under both protocol drivers: pyserial for opening and configuring the port, the
asyncio loop for reading it.

Why ``loop.add_reader`` on the port's file descriptor rather than a reader thread: on Linux (the only
target: the device's board and the simulator's pseudo-terminal) a tty is pollable, so the loop itself
tells us when bytes arrive. Every byte is then handled on the loop's thread, so the protocol state needs
no locks and no cross-thread hand-off (``call_soon_threadsafe``), closing is deterministic (remove the
reader, close the port; no thread to join that may be blocked in ``read``), and a test's fake
controller can live in the same loop. The price is POSIX only, which is acceptable here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import serial

#: bytes read per readiness callback; a pty hands over at most a few KiB at once.
READ_CHUNK = 4096
#: a write to a healthy tty completes at once; a stuck one (flow control, unplugged adapter) must not
#: block the loop forever.
WRITE_TIMEOUT_S = 2.0


class LinkError(ConnectionError):
    """The port cannot be opened, or it went away (unplugged adapter, simulator stopped)."""


class SerialLink:
    """One open serial port whose received bytes are delivered to ``on_data`` on the event loop.

    ``on_lost`` is called once, with the reason, when the port fails or reports end of file. Belongs to
    the loop that opened it; not thread-safe.
    """

    def __init__(
        self,
        port: str,
        baudrate: int = 115200,
        *,
        on_data: Callable[[bytes], None],
        on_lost: Callable[[str], None] | None = None,
    ) -> None:
        self.port = port
        self.baudrate = baudrate
        self._on_data = on_data
        self._on_lost = on_lost
        self._serial: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.bytes_in = 0
        self.bytes_out = 0
        self.lost_reason = ""

    @property
    def is_open(self) -> bool:
        return self._serial is not None

    def open(self) -> None:
        """Open the port (8N1, no flow control, non-blocking reads) and start reading.

        :raises LinkError: naming the port when it cannot be opened.
        """
        self._loop = asyncio.get_running_loop()
        try:
            # timeout=0: reads return what is there; the loop only calls us when something is.
            ser = serial.Serial(
                self.port, self.baudrate, timeout=0, write_timeout=WRITE_TIMEOUT_S, exclusive=True
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            raise LinkError(f"cannot open serial port {self.port}: {exc}") from None
        self._serial = ser
        self._loop.add_reader(ser.fileno(), self._readable)

    def _readable(self) -> None:
        ser = self._serial
        if ser is None:
            return
        try:
            data = ser.read(READ_CHUNK)
        except (serial.SerialException, OSError) as exc:
            self._lost(f"serial port {self.port} failed: {exc}")
            return
        if data:
            self.bytes_in += len(data)
            self._on_data(data)

    def write(self, data: bytes) -> None:
        """Write all of ``data``. :raises LinkError: when the port is closed or the write fails."""
        ser = self._serial
        if ser is None:
            raise LinkError(
                f"serial port {self.port} is not open{': ' + self.lost_reason if self.lost_reason else ''}"
            )
        try:
            ser.write(data)
        except (serial.SerialException, serial.SerialTimeoutException, OSError) as exc:
            self._lost(f"writing to {self.port} failed: {exc}")
            raise LinkError(self.lost_reason) from None
        self.bytes_out += len(data)

    def discard_input(self) -> None:
        """Drop bytes the OS holds but we have not read yet (after a reset, stale replies)."""
        if self._serial is not None:
            self._serial.reset_input_buffer()

    def _lost(self, reason: str) -> None:
        self.lost_reason = reason
        self.close()
        if self._on_lost is not None:
            self._on_lost(reason)

    def close(self) -> None:
        ser, self._serial = self._serial, None
        if ser is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(ser.fileno())
        ser.close()
