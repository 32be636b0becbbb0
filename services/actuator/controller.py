"""The one interface every motion controller driver offers, its status value and its errors.

Two drivers implement :class:`MotionController`: :class:`services.actuator.grbl.GrblController`
(G-code to GRBL 1.1) and :class:`services.actuator.framed.FrameController` (the binary frame protocol).
Both are asyncio cores over :class:`services.actuator.link.SerialLink`; :mod:`services.actuator.blocking`
wraps either for the blocking `sanzi motion` tool.

Coordinates are table millimetres (docs/geometry.md); motion calls return when the controller has
*accepted* the motion, :meth:`MotionController.wait_idle` when it has finished.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

#: controller states, named as GRBL names them; "Offline" when nothing answers.
IDLE: Final = "Idle"
RUN: Final = "Run"
HOME: Final = "Home"
ALARM: Final = "Alarm"
HOLD: Final = "Hold"
OFFLINE: Final = "Offline"


class ControllerError(Exception):
    """Something went wrong talking to the motion controller. ``str(exc)`` is a reason for people."""


class ControllerTimeout(ControllerError):
    """No (valid) reply within the timeout, after any retries the protocol allows."""


class ControllerRejected(ControllerError):
    """The controller answered a command with an error (GRBL ``error:N``, a frame status byte)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class ControllerAlarm(ControllerError):
    """The controller is in alarm: it refuses motion and its position may be lost."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class ControllerProtocolError(ControllerError):
    """The controller said something that does not fit the protocol (no banner, wrong firmware)."""


class ControllerClosed(ControllerError):
    """The serial port is closed or went away."""


class NotSupported(ControllerError):
    """The protocol has no such operation (a raw G-code line on the frame protocol)."""


@dataclass(frozen=True, slots=True)
class Status:
    """A status report: state (see the module constants), position in mm, magnet, alarm code (0 none),
    moves still queued (frame protocol; 0 for GRBL)."""

    state: str
    x_mm: float
    y_mm: float
    z_mm: float
    magnet: bool = False
    alarm: int = 0
    queued: int = 0

    @property
    def idle(self) -> bool:
        return self.state == IDLE and self.queued == 0

    @property
    def in_alarm(self) -> bool:
        return self.state == ALARM

    def distance_to(self, x: float, y: float, z: float) -> float:
        return float(((self.x_mm - x) ** 2 + (self.y_mm - y) ** 2 + (self.z_mm - z) ** 2) ** 0.5)

    def __str__(self) -> str:
        alarm = f" alarm {self.alarm}" if self.alarm else ""
        return (
            f"{self.state} at X{self.x_mm:.3f} Y{self.y_mm:.3f} Z{self.z_mm:.3f}"
            f" magnet {'on' if self.magnet else 'off'}{alarm}"
        )


@dataclass(frozen=True, slots=True)
class Timing:
    """How long to wait for what, in seconds. ``reply`` is one ordinary reply (ok, an acknowledgement);
    ``motion`` bounds a wait for the machine to become idle; ``homing`` bounds a homing cycle."""

    reply: float = 2.0
    motion: float = 30.0
    homing: float = 60.0
    poll: float = 0.05
    retries: int = 3


StatusCallback = Callable[[Status], None]


class MotionController(ABC):
    """A motion controller on a serial port. One instance per port and event loop; calls are serialised
    internally (one command in flight), so several tasks may share an instance.

    Every method raises a :class:`ControllerError` subclass on failure; none of them moves the machine
    again after an alarm (the caller decides: :meth:`home`, or :meth:`unlock` when that is known safe).
    """

    #: "grbl" or "frame".
    protocol: str = ""

    def __init__(self) -> None:
        #: called with every status report received (for position publishing); must not block.
        self.on_status: StatusCallback | None = None
        #: the last status report (None before the first).
        self.last_status: Status | None = None
        #: the alarm the driver knows about (0 = none), and whether it means the position was lost.
        self.alarm = 0
        self.alarm_text = ""
        self.position_lost = False
        self.firmware = ""

    def _report(self, status: Status) -> None:
        self.last_status = status
        if self.on_status is not None:
            self.on_status(status)

    @abstractmethod
    async def connect(self) -> str:
        """Open the port, wake and reset the controller, check that it is what we expect; returns a
        description of the firmware. Does not home (see :meth:`home`)."""

    @abstractmethod
    async def close(self) -> None:
        """Close the port. Safe to call twice."""

    @abstractmethod
    async def home(self) -> None:
        """Run the homing cycle and wait for it to finish; clears an alarm."""

    @abstractmethod
    async def move_to(self, x: float, y: float, z: float, feed: float | None = None) -> None:
        """Queue a straight move to (x, y, z) mm at ``feed`` mm/min (None: rapid)."""

    @abstractmethod
    async def magnet(self, on: bool) -> None:
        """Queue switching the magnet, in order with the moves."""

    @abstractmethod
    async def dwell(self, seconds: float) -> None:
        """Queue a pause, in order with the moves."""

    @abstractmethod
    async def status(self) -> Status:
        """Ask for a status report now."""

    @abstractmethod
    async def wait_idle(self, timeout: float | None = None) -> Status:
        """Wait until every queued motion has finished and the machine is idle.

        :raises ControllerAlarm: when an alarm comes up meanwhile.
        :raises ControllerTimeout: when the controller stops answering or stays busy past ``timeout``.
        """

    @abstractmethod
    async def unlock(self) -> None:
        """Clear an alarm without homing. Only safe when the position is known to be right."""

    @abstractmethod
    async def reset(self) -> None:
        """Stop at once and empty the queue (enters alarm if the machine was moving)."""

    async def raw(self, line: str) -> list[str]:
        """Send one raw command line and return the controller's answer lines (GRBL only)."""
        raise NotSupported(f"the {self.protocol} protocol has no raw command lines")

    async def __aenter__(self) -> MotionController:
        await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


async def wait_future(fut: asyncio.Future[Any], timeout: float, what: str) -> Any:
    """Await ``fut`` for at most ``timeout`` seconds without cancelling it on timeout.

    :raises ControllerTimeout: naming ``what``.
    """
    try:
        return await asyncio.wait_for(asyncio.shield(fut), timeout)
    except TimeoutError:
        raise ControllerTimeout(f"no reply from controller to {what} within {timeout:g} s") from None
