"""The one table of topics: topic name -> message type, expected rate, how it travels, whether recorded.

Like openpilot's ``cereal/services.py``: everything that needs to know about topics reads this table —
the bus wrapper (which channel a topic travels on), the referee's liveness checks, ``sanzi hz`` and
``sanzi record``. Topic names are dotted so that a prefix subscription (``vision.``) gets a family.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from .actuator import ActuatorCommand, ActuatorEvent, ActuatorPosition
from .ai import MoveReply, MoveRequest
from .base import Message
from .camera import CameraControl, CameraFrame
from .operator import OperatorCommand, OperatorReply
from .panel import ButtonPress, PanelState
from .referee import GameState
from .sim import ButtonLevel, FaultInjection, HumanSetup, WorldAction, WorldState
from .system import Heartbeat
from .vision import BoardObservation


class Channel(Enum):
    """How a topic travels. EVENT: a deep queue, nothing dropped. FRAME: a separate forwarder with a
    tiny high-water mark, so a slow reader gets the newest frame instead of a backlog."""

    EVENT = "event"
    FRAME = "frame"


class Topic(NamedTuple):
    type: type[Message]
    #: expected rate in Hz for periodic topics; 0 for events that come when they come.
    rate_hz: float = 0.0
    channel: Channel = Channel.EVENT
    #: recorded by default (`sanzi record` with no --topics).
    logged: bool = True


TOPICS: dict[str, Topic] = {
    "camera.frame": Topic(CameraFrame, rate_hz=30.0, channel=Channel.FRAME, logged=False),
    #: vision's exposure requests to the simulated camera (a real one is set through its driver).
    "camera.control": Topic(CameraControl),
    "vision.board": Topic(BoardObservation, rate_hz=30.0),
    "vision.stable": Topic(BoardObservation),
    #: the frames vision reads from its own camera (hardware: a device, a video file or a URL), passed on
    #: for viewers such as the console; the simulator's frames are on camera.frame already. Nobody
    #: subscribed: the publisher drops them at once.
    "vision.frame": Topic(CameraFrame, rate_hz=30.0, channel=Channel.FRAME, logged=False),
    "panel.button": Topic(ButtonPress),
    "panel.state": Topic(PanelState),
    "operator.command": Topic(OperatorCommand),
    "operator.reply": Topic(OperatorReply),
    "ai.request": Topic(MoveRequest),
    "ai.reply": Topic(MoveReply),
    "actuator.command": Topic(ActuatorCommand),
    "actuator.event": Topic(ActuatorEvent),
    "actuator.position": Topic(ActuatorPosition, rate_hz=5.0),
    "referee.state": Topic(GameState, rate_hz=1.0),
    "sys.heartbeat": Topic(Heartbeat, rate_hz=1.0),
    "sim.world": Topic(WorldState, rate_hz=10.0),
    "sim.action": Topic(WorldAction),
    "sim.fault": Topic(FaultInjection),
    "sim.button": Topic(ButtonLevel),
    "sim.human": Topic(HumanSetup),
}

#: every message type, by its tag (the lower-cased class name carried in each envelope).
MESSAGE_TYPES: dict[str, type[Message]] = {
    t.type.__struct_config__.tag: t.type
    for t in TOPICS.values()  # type: ignore[misc]
}


def topic_info(topic: str) -> Topic:
    """The table row of ``topic``. :raises KeyError: with the known topics when it is not in the table."""
    try:
        return TOPICS[topic]
    except KeyError:
        raise KeyError(f"unknown topic {topic!r}; known topics: {', '.join(sorted(TOPICS))}") from None


def topics_matching(prefixes: list[str] | tuple[str, ...]) -> list[str]:
    """Topics of the table that a subscription to any of ``prefixes`` receives ("" means all)."""
    return [name for name in TOPICS if any(name.startswith(p) for p in prefixes)]
