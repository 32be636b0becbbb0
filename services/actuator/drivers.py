"""Which driver for which configuration: ``actuator.protocol`` -> a :class:`MotionController`."""

from __future__ import annotations

from typing import Any, Final

from .controller import MotionController, Timing
from .framed import FrameController
from .grbl import GrblController

PROTOCOLS: Final = ("grbl", "frame")


class UnknownProtocol(ValueError):
    """``actuator.protocol`` names no driver."""


def timing_from_config(actuator: Any) -> Timing:
    return Timing(
        reply=actuator.reply_timeout_s,
        motion=actuator.motion_timeout_s,
        homing=actuator.homing_timeout_s,
        poll=actuator.status_poll_s,
        retries=actuator.retries,
    )


def make_controller(
    actuator: Any,
    *,
    port: str | None = None,
    protocol: str | None = None,
    reset_on_connect: bool = True,
    log: Any = None,
) -> MotionController:
    """The driver ``actuator`` (the ``[actuator]`` section) asks for, not yet connected. ``port`` and
    ``protocol`` override the configuration; ``reset_on_connect=False`` keeps the controller's state
    (no soft reset / RESET when connecting). :raises UnknownProtocol:"""
    protocol = protocol or actuator.protocol
    port = port or actuator.port
    timing = timing_from_config(actuator)
    if protocol == "grbl":
        return GrblController(
            port,
            actuator.baudrate,
            timing=timing,
            magnet_on=actuator.magnet_on,
            magnet_off=actuator.magnet_off,
            reset_on_connect=reset_on_connect,
            log=log,
        )
    if protocol == "frame":
        return FrameController(
            port, actuator.baudrate, timing=timing, reset_on_connect=reset_on_connect, log=log
        )
    raise UnknownProtocol(f"unknown motion protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
