"""The referee's inputs (pure): which topics it hears, and which bus messages become events of the
machine (:func:`to_event`, the shell's filter); the stable views held while nobody looks, fed to the
machine right after a press (:func:`views_after_press`). The shell and the replay check both use them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import msgspec

from messages import (
    ActuatorEvent,
    BoardObservation,
    ButtonPress,
    Envelope,
    Heartbeat,
    Message,
    MoveReply,
    OperatorCommand,
)

from . import machine as M
from .events import ActuatorReport, AiReply, Button, Event, Observation, Operator, PeerHeartbeat

#: what the referee listens to.
TOPICS = ["operator.command", "panel.button", "vision.", "ai.reply", "actuator.event", "sys.heartbeat"]
#: stable views held while nobody looks (a quarter of a second at 30 fps: longer than the debounce).
HELD_VIEWS: Final = 8


def slim(obs: BoardObservation) -> BoardObservation:
    """``obs`` without the per-square and supply details the machine does not use (smaller journal)."""
    return msgspec.structs.replace(obs, squares=[], supply=[])


def views_after_press(held: Iterable[BoardObservation], state: M.RefereeState) -> list[BoardObservation]:
    """The held stable views to feed the machine now, oldest first: while it waits for a view after a
    press, those whose frame was captured after the press (a view with no capture time could be older:
    never); otherwise none. The machine judges on the first and ignores the rest."""
    if state.paused or state.phase != M.WAITING_FOR_STABLE:
        return []
    return [obs for obs in held if obs.stable and obs.capture_ns and obs.capture_ns / 1e9 > state.press_t]


def to_event(env: Envelope, state: M.RefereeState, now: float, own_name: str = "referee") -> Event | None:
    """The event for a bus message, or None when it cannot matter now (the shell's filter)."""
    msg: Message = env.message
    match msg:
        case OperatorCommand():
            return Operator(now=now, command=msg)
        case ButtonPress():
            return Button(now=now, press=msg)
        case BoardObservation():
            if msg.stable and M.wants_observation(state):
                return Observation(now=now, obs=slim(msg))
            return None
        case MoveReply():
            return AiReply(now=now, reply=msg)
        case ActuatorEvent():
            return ActuatorReport(now=now, report=msg)
        case Heartbeat():
            if msg.process == own_name:
                return None
            if msg.process not in state.settings.required_peers and not M.watches_restarts(state, msg):
                return None
            return PeerHeartbeat(now=now, process=msg.process, health=msg.state, pid=msg.pid)
    return None
