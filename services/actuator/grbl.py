"""G-code to a GRBL 1.1 controller (docs/protocols.md section 1): an asyncio driver.

Flow control is GRBL's "send-response": one line in flight, the next sent only after ``ok`` or
``error:N``. Real-time bytes (``?`` status, Ctrl-X soft reset) go out at any time. Every line this
driver generates is *idempotent* (absolute coordinates in G90, magnet M-codes, dwells, $H, $X), which is
what makes it safe to send a line again when its ``ok`` was lost; raw lines typed by a person are never
re-sent.

Received lines are parsed by :func:`parse_line` (pure) into tagged tuples and dispatched on the loop.
Bytes outside printable ASCII are dropped before parsing, so binary garbage glued to the front of a
reply does not hide it; a line that still makes no sense is counted in ``garbage_lines`` and skipped.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Final

from services.common.log import get as get_log

from .controller import (
    ALARM,
    HOLD,
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

SOFT_RESET: Final = b"\x18"
STATUS_QUERY: Final = b"?"
#: GRBL ignores empty lines (or answers ok); a couple of them wake a sleeping UART and flush a
#: half-received line from a previous sender before the soft reset.
WAKE_UP: Final = b"\r\n\r\n"
SUPPORTED_MAJOR: Final = "1."
EXPECTED_VERSION: Final = "1.1"
#: the machine is within this of the target when a move is reported finished (GRBL reports 3 decimals).
POSITION_TOLERANCE_MM: Final = 0.01

#: GRBL 1.1's alarm codes, for messages to people.
ALARM_TEXT: Final[dict[int, str]] = {
    1: "hard limit triggered",
    2: "soft limit: target beyond travel",
    3: "reset while in motion: position lost",
    4: "probe fail",
    5: "probe fail",
    6: "homing fail: reset during cycle",
    7: "homing fail: safety door",
    8: "homing fail: pull-off did not clear switch",
    9: "homing fail: no switch found",
}

#: the GRBL 1.1 error codes that this software can run into.
ERROR_TEXT: Final[dict[int, str]] = {
    1: "expected command letter",
    2: "bad number format",
    3: "invalid $ statement",
    8: "not idle",
    9: "G-code locked out during alarm or jog state",
    15: "travel exceeded",
    20: "unsupported or invalid G-code command",
    22: "feed rate not set",
    24: "two G-code commands that both require the use of the XYZ axis words",
    33: "motion target invalid",
}

_STATE_NAMES: Final = {"Idle": IDLE, "Run": RUN, "Home": HOME, "Alarm": ALARM, "Hold": HOLD, "Jog": RUN}
_ERROR_RE: Final = re.compile(r"^error:(\d+)$")
_ALARM_RE: Final = re.compile(r"^ALARM:(\d+)$")
_BANNER_RE: Final = re.compile(r"^Grbl (\S+)")
_PRINTABLE: Final = bytes(range(0x20, 0x7F))


@dataclass(frozen=True, slots=True)
class Parsed:
    """One received line, classified. ``kind`` is one of ok, error, alarm, status, banner, msg, info,
    echo, garbage; ``code`` for error/alarm, ``status`` for status reports, ``text`` the line."""

    kind: str
    text: str
    code: int = 0
    status: Status | None = None


def clean_line(raw: bytes) -> str:
    """Keep printable ASCII only (drops CR, NUL, binary garbage) and strip blanks."""
    return raw.translate(None, delete=bytes(set(range(256)) - set(_PRINTABLE))).decode("ascii").strip()


def parse_status(text: str, magnet: bool = False) -> Status | None:
    """Parse ``<Idle|MPos:1.000,2.000,3.000|FS:0,0>`` (WPos accepted too); None when malformed.

    >>> parse_status("<Run|MPos:10.000,20.500,5.000|FS:600,0>").x_mm
    10.0
    """
    if not (text.startswith("<") and text.endswith(">")):
        return None
    fields = text[1:-1].split("|")
    state = _STATE_NAMES.get(fields[0].split(":")[0])
    if state is None:
        return None
    for field in fields[1:]:
        name, _, value = field.partition(":")
        if name in ("MPos", "WPos"):
            try:
                x, y, z = (float(v) for v in value.split(",")[:3])
            except ValueError:
                return None
            return Status(state=state, x_mm=x, y_mm=y, z_mm=z, magnet=magnet)
    return None


def parse_line(text: str, magnet: bool = False) -> Parsed:
    """Classify one cleaned line from GRBL."""
    if text == "ok":
        return Parsed("ok", text)
    if m := _ERROR_RE.match(text):
        return Parsed("error", text, code=int(m.group(1)))
    if m := _ALARM_RE.match(text):
        return Parsed("alarm", text, code=int(m.group(1)))
    if text.startswith("<"):
        status = parse_status(text, magnet)
        return Parsed("status", text, status=status) if status else Parsed("garbage", text)
    if _BANNER_RE.match(text):
        return Parsed("banner", text)
    if text.startswith("[MSG:"):
        return Parsed("msg", text)
    if text.startswith("[") and text.endswith("]"):
        return Parsed("info", text)
    if text.startswith(">"):
        return Parsed("echo", text)  # start-up block echo: ">G21:ok"
    return Parsed("garbage", text)


def alarm_reason(code: int) -> str:
    return (
        f"controller alarm {code} ({ALARM_TEXT.get(code, 'unknown alarm')})" if code else "controller alarm"
    )


def error_reason(code: int, line: str) -> str:
    return f"controller refused {line!r}: error:{code} ({ERROR_TEXT.get(code, 'see GRBL error codes')})"


class GrblController(MotionController):
    """A GRBL 1.1 controller on a serial port.

    ``magnet_on``/``magnet_off`` are the M-codes that switch the magnet (M8/M9, M3/M5, ...).
    ``link`` may be given for tests; by default a :class:`SerialLink` on ``port``.
    """

    protocol = "grbl"

    def __init__(
        self,
        port: str,
        baudrate: int = 115200,
        *,
        timing: Timing | None = None,
        magnet_on: str = "M8",
        magnet_off: str = "M9",
        reset_on_connect: bool = True,
        log: Any = None,
    ) -> None:
        super().__init__()
        #: soft-reset at connect (the service: a clean start); `sanzi motion` keeps the state instead.
        self.reset_on_connect = reset_on_connect
        self.port = port
        self.timing = timing or Timing()
        self.magnet_on_code = magnet_on
        self.magnet_off_code = magnet_off
        self.log = log or get_log(component="grbl")
        self.link = SerialLink(port, baudrate, on_data=self._on_data, on_lost=self._on_lost)
        self._buf = bytearray()
        self._lock = asyncio.Lock()
        self._reply: asyncio.Future[list[str]] | None = None
        self._reply_lines: list[str] = []
        self._status_fut: asyncio.Future[Status] | None = None
        self._banner_fut: asyncio.Future[str] | None = None
        self._magnet = False
        self._modal_ready = False
        #: lines said outside any reply ([MSG:...], echoes), newest last, for `sanzi motion`.
        self.messages: deque[str] = deque(maxlen=50)
        self.garbage_lines = 0
        self.stray_replies = 0
        self.retries_used = 0
        self.unexpected_resets = 0

    # -- receiving -----------------------------------------------------------------------------------

    def _on_data(self, data: bytes) -> None:
        self._buf += data
        while (end := self._buf.find(b"\n")) >= 0:
            raw = bytes(self._buf[:end])
            del self._buf[: end + 1]
            text = clean_line(raw)
            if text:
                self._dispatch(parse_line(text, self._magnet))

    def _dispatch(self, p: Parsed) -> None:
        reply = self._reply if self._reply is not None and not self._reply.done() else None
        match p.kind:
            case "ok":
                if reply is None:
                    self.stray_replies += 1
                else:
                    reply.set_result(self._reply_lines)
            case "error":
                if reply is None:
                    self.stray_replies += 1
                elif p.code == 9:
                    reply.set_exception(ControllerAlarm(alarm_reason(self.alarm) + ": command locked out", 9))
                else:
                    reply.set_exception(ControllerRejected(error_reason(p.code, self._in_flight), p.code))
            case "status":
                assert p.status is not None
                self._report(p.status)
                if self._status_fut is not None and not self._status_fut.done():
                    self._status_fut.set_result(p.status)
            case "alarm":
                self.alarm, self.alarm_text, self.position_lost = p.code, alarm_reason(p.code), True
                self.log.warning("controller alarm", code=p.code, reason=self.alarm_text)
                # The line in flight will not be answered normally after an alarm; fail it now. Any late
                # answer is a stray reply, and recovery starts with a soft reset that clears the stream.
                if reply is not None:
                    reply.set_exception(ControllerAlarm(self.alarm_text, p.code))
            case "banner":
                self._modal_ready = False
                self._magnet = False  # a reset switches GRBL's outputs off
                if self._banner_fut is not None and not self._banner_fut.done():
                    self._banner_fut.set_result(p.text)
                elif self._connecting:
                    pass  # a power-on banner (an Arduino resets when the port opens), before ours
                else:
                    self.unexpected_resets += 1
                    self.position_lost = True
                    self.log.warning("controller reset by itself", banner=p.text)
                    if reply is not None:
                        reply.set_exception(ControllerError("controller reset unexpectedly"))
            case "msg" | "info":
                if reply is not None:
                    self._reply_lines.append(p.text)
                else:
                    self.messages.append(p.text)
            case "echo":
                self.messages.append(p.text)
            case _:
                self.garbage_lines += 1
                self.log.debug("skipped garbage line", text=p.text[:80])

    def _on_lost(self, reason: str) -> None:
        for fut in (self._reply, self._status_fut, self._banner_fut):
            if fut is not None and not fut.done():
                fut.set_exception(ControllerClosed(reason))
                fut.exception()  # mark retrieved: nobody may be waiting any more

    # -- sending -------------------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        try:
            self.link.write(data)
        except LinkError as exc:
            raise ControllerClosed(str(exc)) from None

    def _send(self, line: str) -> asyncio.Future[list[str]]:
        """Write one line and return the future of its answer. The caller holds the lock."""
        fut: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        self._reply, self._reply_lines, self._in_flight = fut, [], line
        self._write(line.encode("ascii") + b"\n")
        return fut

    _in_flight = ""

    async def _command(self, line: str, timeout: float | None = None, *, retry: bool = True) -> list[str]:
        """Send ``line``, wait for ``ok``; returns the informational lines said before it.

        When the answer is late, a ``?`` probes the controller. Busy (Run, Home, Hold): GRBL holds the
        ``ok`` of a line that waits for the planner (M-codes, G4, a full planner), so keep waiting, up to
        ``timing.motion`` more. Idle and alive: the ``ok`` was lost; with ``retry`` (idempotent lines
        only) the line goes again. Silent (stalled, not reading): sending more would only pile up
        duplicates, so the original is waited for. At most ``timing.retries`` extra reply timeouts are
        spent on lost or silent answers.
        :raises ControllerTimeout, ControllerRejected, ControllerAlarm:
        """
        timeout = self.timing.reply if timeout is None else timeout
        spare = self.timing.retries
        busy_until = time.monotonic() + timeout + self.timing.motion
        async with self._lock:
            fut = self._send(line)
            try:
                while True:
                    try:
                        return await wait_future(fut, timeout, repr(line))
                    except ControllerTimeout:
                        pass
                    status = await self._probe()
                    if fut.done():
                        continue
                    if (
                        status is not None
                        and status.state in (RUN, HOME, HOLD)
                        and time.monotonic() < busy_until
                    ):
                        continue  # a legitimately held answer
                    if spare == 0:
                        break
                    spare -= 1
                    if status is not None and status.state != ALARM and retry:
                        self.retries_used += 1
                        self.log.warning("answer lost, sending the line again", line=line)
                        fut = self._send(line)
            finally:
                self._reply = None
        raise ControllerTimeout(
            f"no reply from controller to {line!r} after {1 + self.timing.retries} attempt(s)"
            f" of {timeout:g} s"
        )

    async def _probe(self) -> Status | None:
        """One ``?``: the status, or None when the controller does not answer within the reply timeout."""
        loop = asyncio.get_running_loop()
        if self._status_fut is None or self._status_fut.done():
            self._status_fut = loop.create_future()
        fut = self._status_fut
        self._write(STATUS_QUERY)
        try:
            return await wait_future(fut, self.timing.reply, "status query '?'")
        except ControllerTimeout:
            return None

    # -- the interface -------------------------------------------------------------------------------

    async def connect(self) -> str:
        """Open the port, wake GRBL, soft-reset it and check its banner; ask for the build info and the
        state. :raises ControllerProtocolError: when no GRBL 1.x banner comes."""
        try:
            self.link.open()
        except LinkError as exc:
            raise ControllerClosed(str(exc)) from None
        self._connecting = True
        try:
            return await self._connect()
        finally:
            self._connecting = False

    _connecting = False

    async def _connect(self) -> str:
        self.link.discard_input()  # whatever waited in the port's buffer belongs to no one
        if self.reset_on_connect:
            banner = await self._reset_and_check()
        else:
            # Keep the controller's state (a held piece stays held): no wake-up lines (their ``ok`` would
            # race with ours), just check that it answers and is GRBL.
            await self.status()
            banner = ""
        try:
            info = await self._command("$I")
        except ControllerError as exc:  # build info is a courtesy; some clones lock it in alarm
            info = []
            self.log.info("no build info", reason=str(exc))
        if not banner and not any(line.startswith("[VER:" + SUPPORTED_MAJOR) for line in info):
            await self.close()
            raise ControllerProtocolError(f"{self.port} answers but says no GRBL 1.x version: {info!r}")
        self.firmware = " ".join([banner, *info]).strip()
        status = await self.status()
        if status.in_alarm:
            # GRBL is locked when homing is required after power-on or a reset cut motion: position unknown.
            self.alarm_text = self.alarm_text or "controller locked (alarm state): home or unlock it"
            self.position_lost = True
        self.log.info("controller ready", firmware=self.firmware, status=str(status))
        return self.firmware

    async def _reset_and_check(self) -> str:
        self._write(WAKE_UP)
        banner = ""
        for attempt in range(1 + self.timing.retries):
            try:
                banner = await self._soft_reset()
                break
            except ControllerTimeout:
                self.log.warning("no banner after soft reset", attempt=attempt + 1)
        if not banner:
            await self.close()
            raise ControllerProtocolError(
                f"no GRBL banner on {self.port} after a soft reset: is it a GRBL controller, at the right "
                "baud rate, and powered?"
            )
        version = _BANNER_RE.match(banner).group(1)  # type: ignore[union-attr]
        if not version.startswith(SUPPORTED_MAJOR):
            await self.close()
            raise ControllerProtocolError(
                f"unsupported firmware {banner!r}: GRBL {EXPECTED_VERSION} expected"
            )
        if not version.startswith(EXPECTED_VERSION):
            self.log.warning("GRBL version differs from the tested one", banner=banner)
        return banner

    async def _soft_reset(self) -> str:
        loop = asyncio.get_running_loop()
        self._banner_fut = loop.create_future()
        try:
            self._write(SOFT_RESET)
            return await wait_future(self._banner_fut, self.timing.reply, "soft reset (Ctrl-X)")
        finally:
            self._banner_fut = None

    async def close(self) -> None:
        self.link.close()
        self._on_lost("port closed")

    async def _ensure_modal(self) -> None:
        if not self._modal_ready:
            await self._command("G21")  # millimetres
            await self._command("G90")  # absolute: makes every motion line idempotent
            self._modal_ready = True

    async def home(self) -> None:
        await self._command("$H", self.timing.homing)
        self.alarm, self.alarm_text, self.position_lost = 0, "", False
        self._modal_ready = False
        await self._ensure_modal()

    async def move_to(self, x: float, y: float, z: float, feed: float | None = None) -> None:
        await self._ensure_modal()
        words = f"X{x:.3f} Y{y:.3f} Z{z:.3f}"
        await self._command(f"G0 {words}" if feed is None else f"G1 {words} F{feed:.0f}")

    async def magnet(self, on: bool) -> None:
        await self._command(self.magnet_on_code if on else self.magnet_off_code)
        self._magnet = on

    async def dwell(self, seconds: float) -> None:
        await self._command(f"G4 P{seconds:.3f}", self.timing.reply + seconds)

    async def status(self) -> Status:
        """Send ``?`` and wait for the report; asked again up to ``timing.retries`` times."""
        loop = asyncio.get_running_loop()
        attempts = 1 + self.timing.retries
        for _ in range(attempts):
            if self._status_fut is None or self._status_fut.done():
                self._status_fut = loop.create_future()
            fut = self._status_fut
            self._write(STATUS_QUERY)
            try:
                return await wait_future(fut, self.timing.reply, "status query '?'")
            except ControllerTimeout:
                continue
        raise ControllerTimeout(
            f"no status report from controller after {attempts} queries of {self.timing.reply:g} s:"
            " controller silent"
        )

    async def wait_idle(self, timeout: float | None = None) -> Status:
        """Wait for the planner to empty and the machine to be Idle.

        ``G4 P0`` is sent as a barrier: GRBL answers it only when every queued move has finished, which
        closes the race where ``?`` says Idle just before a freshly queued move starts. Meanwhile ``?``
        polls the position and catches alarms. If the barrier's ``ok`` is lost (the machine reports Idle
        but no answer comes within the reply timeout) the barrier is sent again.
        """
        limit = self.timing.motion if timeout is None else timeout
        deadline = time.monotonic() + limit
        async with self._lock:
            attempts = 0
            barrier = self._send("G4 P0")
            idle_since: float | None = None
            try:
                while True:
                    synced = barrier.done()
                    status = await self.status()
                    if status.in_alarm or self.alarm:
                        barrier.cancel()
                        raise ControllerAlarm(self.alarm_text or alarm_reason(self.alarm), self.alarm)
                    if synced:
                        barrier.result()  # raises error:N or a closed port
                        if status.state == IDLE:
                            return status
                    elif status.state == IDLE:
                        now = time.monotonic()
                        idle_since = idle_since or now
                        if now - idle_since > self.timing.reply:
                            attempts += 1
                            if attempts > self.timing.retries:
                                raise ControllerTimeout(
                                    "no reply from controller to the end-of-motion barrier 'G4 P0' "
                                    f"after {attempts} attempt(s)"
                                )
                            self.retries_used += 1
                            self.log.warning("barrier answer lost, sending it again", attempt=attempts + 1)
                            barrier = self._send("G4 P0")
                            idle_since = None
                    else:
                        idle_since = None
                    if time.monotonic() > deadline:
                        raise ControllerTimeout(f"machine still {status.state} after {limit:g} s: {status}")
                    await asyncio.sleep(self.timing.poll)
            finally:
                self._reply = None

    async def unlock(self) -> None:
        await self._command("$X")
        self.alarm, self.alarm_text = 0, ""

    async def reset(self) -> None:
        """Soft reset: stops at once, empties GRBL's buffers, and the stream with them (any answer still
        owed is void). GRBL enters alarm if it was moving; :attr:`position_lost` then says so."""
        async with self._lock:
            if self._reply is not None and not self._reply.done():
                self._reply.set_exception(ControllerError("controller reset"))
            self._buf.clear()
            banner = await self._soft_reset()
        self.log.info("soft reset", banner=banner)
        status = await self.status()
        if status.in_alarm:
            self.position_lost = True
            self.alarm_text = self.alarm_text or "controller locked after reset: home or unlock it"

    async def raw(self, line: str) -> list[str]:
        """Send one line as typed (never re-sent); a single real-time character is written as is and,
        for ``?``, answered by the status report. Returns the answer lines, ending with ``ok``."""
        line = line.strip()
        if line == "?":
            return [str(await self.status())]
        if line in ("!", "~"):
            self._write(line.encode())
            return []
        if line.lower() in ("ctrl-x", "^x", "\\x18"):
            await self.reset()
            return [self.firmware]
        lines = await self._command(line, self.timing.homing if line.upper() == "$H" else None, retry=False)
        if line.upper() == "$H":
            self.alarm, self.alarm_text, self.position_lost = 0, "", False
        return [*lines, "ok"]
