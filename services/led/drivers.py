"""Panel drivers: where the lamp and LEDs are shown and where the button is read.

Every driver gets two callbacks, both called on the event loop: ``on_level(pressed, t)`` for a raw
button level change at monotonic time ``t`` (seconds; the service debounces it) and ``on_press(t)`` for
an input that is already one discrete press (Enter on the console). :meth:`Panel.show` takes the
:class:`messages.PanelState` to display; drivers that blink LEDs themselves render the modes with
:func:`services.led.patterns.led_level`.

- ``gpio``: Linux GPIO through libgpiod's Python binding (``gpiod`` v2, imported only here). The button
  line is an input with edge events on both edges (bias and polarity from the configuration); the lamp,
  status and error lines are outputs refreshed every ``BLINK_TICK_S``.
- ``serial``: a small panel microcontroller on a serial port, with this line protocol (ASCII, ``\\n``):

  host -> panel: ``L <lamp 0|1> <status-mode> <error-mode>`` on every change and every second (a panel
  that hears nothing for 3 s may show that the host is gone); modes are the words of
  :mod:`.patterns`, which the panel renders itself.
  panel -> host: ``B1`` when the button contact closes, ``B0`` when it opens (raw levels; the host
  debounces them by arrival time); lines starting with ``#`` are comments and ignored.

- ``console``: one status line on the terminal, redrawn in place with ``\\r``; the button is Enter on
  standard input when it is a terminal.
- ``sim`` and ``none``: nothing to drive (the service reads ``sim.button`` from the bus for ``sim``).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Final, TextIO

from messages import PanelState

from .config import LedConfig
from .patterns import led_level

LevelCallback = Callable[[bool, float], None]
PressCallback = Callable[[float], None]
FaultCallback = Callable[[str], None]

#: outputs are refreshed this often so that blink modes render smoothly.
BLINK_TICK_S: Final = 0.02
#: the serial panel's state line is repeated this often even without a change (a keep-alive).
SERIAL_REFRESH_S: Final = 1.0
DRIVERS: Final = ("sim", "console", "gpio", "serial", "none")


class PanelError(RuntimeError):
    """The panel's hardware cannot be opened (missing gpiod, wrong chip or line, no serial port)."""


class Panel(ABC):
    """A panel driver. ``start`` opens the hardware; ``close`` releases it (safe to call twice)."""

    name: str = ""

    def __init__(self, config: LedConfig, on_level: LevelCallback, on_press: PressCallback) -> None:
        self.config = config
        self.on_level = on_level
        self.on_press = on_press
        self.state: PanelState | None = None
        #: why the driver stopped reading the button, "" while it reads it.
        self.fault = ""
        #: called on the event loop, once, with :attr:`fault` when the driver stops reading the button
        #: (the service sets it: it logs the reason and reports it in its heartbeat).
        self.on_fault: FaultCallback | None = None

    async def start(self) -> None:
        return None

    def failed(self, reason: str) -> None:
        """The driver can no longer read the button: record ``reason`` and tell :attr:`on_fault`."""
        if self.fault:
            return
        self.fault = reason
        if self.on_fault is not None:
            self.on_fault(reason)

    @abstractmethod
    def show(self, state: PanelState) -> None:
        """Display ``state`` (called on every change)."""

    async def close(self) -> None:
        return None


class NullPanel(Panel):
    """``sim`` and ``none``: the panel state only goes on the bus."""

    name = "none"

    def show(self, state: PanelState) -> None:
        self.state = state


class ConsolePanel(Panel):
    """One status line on ``stream`` (standard error by default, so JSON logs on standard output stay
    clean); Enter on standard input (when it is a terminal) is the button."""

    name = "console"

    def __init__(
        self,
        config: LedConfig,
        on_level: LevelCallback,
        on_press: PressCallback,
        stream: TextIO | None = None,
        stdin: TextIO | None = None,
    ) -> None:
        super().__init__(config, on_level, on_press)
        self.stream = stream or sys.stderr
        self.stdin = stdin if stdin is not None else sys.stdin
        self._width = 0
        self._reading = False

    async def start(self) -> None:
        try:
            interactive = self.stdin.isatty()
        except (AttributeError, ValueError):
            interactive = False
        if interactive:
            asyncio.get_running_loop().add_reader(self.stdin.fileno(), self._enter)
            self._reading = True

    def _enter(self) -> None:
        line = self.stdin.readline()
        if line == "":  # end of input: stop reading
            asyncio.get_running_loop().remove_reader(self.stdin.fileno())
            self._reading = False
            return
        self.on_press(time.monotonic())

    def line(self, state: PanelState) -> str:
        lamp = "LAMP" if state.lamp else "----"
        leds = f"status {state.leds.get('status', '?')}, error {state.leds.get('error', '?')}"
        return f"[{lamp}] {state.pattern}: {state.text}  ({leds})"

    def show(self, state: PanelState) -> None:
        self.state = state
        text = self.line(state)
        pad = max(0, self._width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._width = len(text)

    async def close(self) -> None:
        if self._reading:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self.stdin.fileno())
            self._reading = False
        if self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


class SerialPanel(Panel):
    """A panel microcontroller on ``led.serial_port`` (protocol in the module docstring)."""

    name = "serial"

    def __init__(self, config: LedConfig, on_level: LevelCallback, on_press: PressCallback) -> None:
        super().__init__(config, on_level, on_press)
        self._serial: Any = None
        self._buf = bytearray()
        self._task: asyncio.Task[None] | None = None
        self.bad_lines = 0

    async def start(self) -> None:
        import serial

        port = self.config.serial_port
        if not port:
            raise PanelError("led.driver is 'serial' but led.serial_port is empty")
        try:
            self._serial = serial.Serial(port, self.config.serial_baudrate, timeout=0, write_timeout=1.0)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise PanelError(f"cannot open the panel's serial port {port}: {exc}") from None
        asyncio.get_running_loop().add_reader(self._serial.fileno(), self._readable)
        self._task = asyncio.create_task(self._refresh(), name="led.serial-refresh")

    @staticmethod
    def encode(state: PanelState) -> bytes:
        status, error = state.leds.get("status", "off"), state.leds.get("error", "off")
        return f"L {1 if state.lamp else 0} {status} {error}\n".encode("ascii")

    def _readable(self) -> None:
        try:
            data = self._serial.read(4096)
        except Exception as exc:  # an unplugged adapter: stop reading, the service keeps publishing
            asyncio.get_running_loop().remove_reader(self._serial.fileno())
            self.failed(f"cannot read the panel's serial port {self.config.serial_port}: {exc!r}")
            return
        self._buf += data
        while (end := self._buf.find(b"\n")) >= 0:
            line = self._buf[:end].strip().decode("ascii", errors="replace")
            del self._buf[: end + 1]
            self.feed_line(line, time.monotonic())

    def feed_line(self, line: str, t: float) -> None:
        """Handle one line from the panel (public for tests of the protocol)."""
        if line in ("B1", "B0"):
            self.on_level(line == "B1", t)
        elif line and not line.startswith("#"):
            self.bad_lines += 1

    def _write(self, data: bytes) -> None:
        if self._serial is not None:
            with contextlib.suppress(Exception):
                self._serial.write(data)

    def show(self, state: PanelState) -> None:
        self.state = state
        self._write(self.encode(state))

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(SERIAL_REFRESH_S)
            if self.state is not None:
                self._write(self.encode(self.state))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self._serial is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._serial.fileno())
            self._serial.close()
            self._serial = None


class GpioPanel(Panel):
    """Lamp, LEDs and button on Linux GPIO lines through libgpiod v2 (``pip install 'sanzi[gpio]'``)."""

    name = "gpio"

    def __init__(self, config: LedConfig, on_level: LevelCallback, on_press: PressCallback) -> None:
        super().__init__(config, on_level, on_press)
        self._request: Any = None
        self._task: asyncio.Task[None] | None = None
        self._gpiod: Any = None

    async def start(self) -> None:
        try:
            import gpiod
            from gpiod.line import Bias, Direction, Edge, Value
        except ImportError:
            raise PanelError(
                "the gpio panel needs the gpiod package (v2): pip install 'sanzi[gpio]'"
            ) from None
        cfg = self.config
        button = gpiod.LineSettings(
            direction=Direction.INPUT,
            edge_detection=Edge.BOTH,
            bias=Bias.PULL_UP if cfg.gpio_button_active_low else Bias.PULL_DOWN,
            active_low=cfg.gpio_button_active_low,
        )
        outputs = gpiod.LineSettings(direction=Direction.OUTPUT, output_value=Value.INACTIVE)
        try:
            self._request = gpiod.request_lines(
                cfg.gpio_chip,
                consumer="sanzi-led",
                config={cfg.gpio_button: button, (cfg.gpio_lamp, cfg.gpio_status, cfg.gpio_error): outputs},
            )
        except (OSError, ValueError) as exc:
            raise PanelError(f"cannot request GPIO lines on {cfg.gpio_chip}: {exc}") from None
        self._gpiod = gpiod
        # Edge timestamps are CLOCK_MONOTONIC (libgpiod's default event clock), like time.monotonic().
        self.on_level(self._request.get_value(cfg.gpio_button) == Value.ACTIVE, time.monotonic())
        asyncio.get_running_loop().add_reader(self._request.fd, self._edges)
        self._task = asyncio.create_task(self._blink(), name="led.gpio-blink")

    def _edges(self) -> None:
        try:
            events = self._request.read_edge_events()
        except OSError as exc:  # the chip or line went away: stop reading, the service keeps publishing
            asyncio.get_running_loop().remove_reader(self._request.fd)
            self.failed(f"cannot read the button's GPIO line on {self.config.gpio_chip}: {exc!r}")
            return
        rising = self._gpiod.EdgeEvent.Type.RISING_EDGE
        for event in events:
            # With active_low set, edges are logical: rising means the button became pressed.
            self.on_level(event.event_type == rising, event.timestamp_ns / 1e9)

    def show(self, state: PanelState) -> None:
        self.state = state

    async def _blink(self) -> None:
        from gpiod.line import Value

        cfg = self.config
        last: dict[int, Any] = {}
        while True:
            state = self.state
            if state is not None:
                t = time.monotonic()
                wanted = {
                    cfg.gpio_lamp: state.lamp,
                    cfg.gpio_status: led_level(state.leds.get("status", "off"), t),
                    cfg.gpio_error: led_level(state.leds.get("error", "off"), t),
                }
                values = {line: Value.ACTIVE if on else Value.INACTIVE for line, on in wanted.items()}
                if values != last:
                    self._request.set_values(values)
                    last = values
            await asyncio.sleep(BLINK_TICK_S)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self._request is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._request.fd)
            self._request.release()
            self._request = None


def make_panel(config: LedConfig, on_level: LevelCallback, on_press: PressCallback, **kwargs: Any) -> Panel:
    """The driver ``config.driver`` names (``config`` is the ``[led]`` section).
    :raises PanelError: for an unknown driver name."""
    match config.driver:
        case "console":
            return ConsolePanel(config, on_level, on_press, **kwargs)
        case "gpio":
            return GpioPanel(config, on_level, on_press)
        case "serial":
            return SerialPanel(config, on_level, on_press)
        case "sim" | "none":
            panel = NullPanel(config, on_level, on_press)
            panel.name = config.driver
            return panel
    raise PanelError(f"unknown led.driver {config.driver!r}; choose one of {', '.join(DRIVERS)}")
