"""What goes into the referee's state machine (events) and what comes out of it (actions).

Events are frozen, tagged msgspec Structs so that the journal can store them as they are (msgpack, one
typed decoder for the whole union). Every event carries ``now``: seconds on the shell's monotonic clock
(``time.monotonic()``, the same clock as the ``*_ns`` stamps of vision and the panel), so the state
machine itself never reads a clock.

================  ==================================  ============================================
event             bus topic it comes from             carries
================  ==================================  ============================================
Operator          operator.command                    :class:`messages.OperatorCommand`
Button            panel.button                        :class:`messages.ButtonPress`
Observation       vision.stable / vision.board        :class:`messages.BoardObservation` (stable)
AiReply           ai.reply                            :class:`messages.MoveReply`
ActuatorReport    actuator.event                      :class:`messages.ActuatorEvent`
PeerHeartbeat     sys.heartbeat                       the process name and its health word
Tick              the shell's timer                   nothing but ``now``
Restarted         the shell, once after replay        nothing but ``now``
Resync            the shell's subscriber              why messages may have been lost
Checkpoint        the journal, when it is compacted   the whole state, encoded
================  ==================================  ============================================

Actions are plain frozen dataclasses; the shell carries them out in order (after the event that caused
them is safely in the journal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from messages import (
    ActuatorCommand,
    ActuatorEvent,
    BoardObservation,
    ButtonPress,
    GameState,
    MoveReply,
    MoveRequest,
    OperatorCommand,
    OperatorReply,
)


class EventBase(msgspec.Struct, frozen=True, kw_only=True, tag_field="event", tag=True):
    """Base of every event: ``now`` is the shell's monotonic time in seconds when it happened."""

    now: float


class Operator(EventBase, frozen=True):
    command: OperatorCommand


class Button(EventBase, frozen=True):
    press: ButtonPress


class Observation(EventBase, frozen=True):
    """A stable (or would-be stable) reading of the board; the machine itself checks the flags."""

    obs: BoardObservation


class AiReply(EventBase, frozen=True):
    reply: MoveReply


class ActuatorReport(EventBase, frozen=True):
    report: ActuatorEvent


class PeerHeartbeat(EventBase, frozen=True):
    process: str
    health: str = "ok"
    #: the peer's process id: a new one means it restarted (and may have lost what it was doing).
    pid: int = 0


class Tick(EventBase, frozen=True):
    """Time passed: timeouts (AI, actuator, confirmation, stability) and liveness are checked."""


class Restarted(EventBase, frozen=True):
    """The referee (re)started and has replayed its journal: timers restart from ``now``, peers get a
    full timeout to be heard, and the pending action is re-issued (a pending actuator command is queried
    first, a pending move request is sent again)."""


class Resync(EventBase, frozen=True):
    """Messages to the referee may have been lost: its subscriber counted a sequence gap, or a
    publisher restarted. A pending command or move request is asked about again."""

    reason: str = ""


class Checkpoint(EventBase, frozen=True):
    """The whole state (:func:`services.referee.machine.encode_state`), written as the first record of a
    compacted journal: replay starts from it instead of from the first event ever."""

    state: bytes


Event = (
    Operator
    | Button
    | Observation
    | AiReply
    | ActuatorReport
    | PeerHeartbeat
    | Tick
    | Restarted
    | Resync
    | Checkpoint
)

EVENT_TYPES: tuple[type[EventBase], ...] = (
    Operator,
    Button,
    Observation,
    AiReply,
    ActuatorReport,
    PeerHeartbeat,
    Tick,
    Restarted,
    Resync,
    Checkpoint,
)

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Event)


def encode_event(event: Event) -> bytes:
    """The event as msgpack (its tag in the field ``event``)."""
    return _encoder.encode(event)


def decode_event(raw: bytes) -> Event:
    """The event encoded in ``raw``. :raises msgspec.DecodeError: or ``msgspec.ValidationError`` when
    ``raw`` is not an event."""
    return _decoder.decode(raw)


# ------------------------------------------------------------------------------------------------- actions
@dataclass(frozen=True, slots=True)
class RequestMove:
    """Publish a move request on ``ai.request``."""

    request: MoveRequest


@dataclass(frozen=True, slots=True)
class SendCommand:
    """Publish an actuator command on ``actuator.command`` (a re-send carries the same id)."""

    command: ActuatorCommand


@dataclass(frozen=True, slots=True)
class QueryCommand:
    """Ask the actuator what became of a command (``kind="query"``, the command's own id)."""

    command: ActuatorCommand


@dataclass(frozen=True, slots=True)
class PublishState:
    """Publish the game state on ``referee.state`` (and hold it for snapshots)."""

    state: GameState


@dataclass(frozen=True, slots=True)
class ReplyOperator:
    """Publish the answer to an operator command on ``operator.reply``."""

    reply: OperatorReply


@dataclass(frozen=True, slots=True)
class UseLocalEngine:
    """The AI process did not answer (or answered nonsense): the move came from the engine in-process."""

    request_id: str
    square: int
    reason: str


@dataclass(frozen=True, slots=True)
class Log:
    """A decision and its reason, with fields for the structured log line."""

    reason: str
    #: "debug", "info", "warning" or "error"
    severity: str = "info"
    fields: dict[str, Any] = field(default_factory=dict)


Action = RequestMove | SendCommand | QueryCommand | PublishState | ReplyOperator | UseLocalEngine | Log


def log(reason: str, /, severity: str = "info", **fields: Any) -> Log:
    """A :class:`Log` action: ``log("cheat detected", square=3)``."""
    return Log(reason, severity, fields)
