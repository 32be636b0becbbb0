"""The operator panel: the button and what the lamp and LEDs show."""

from __future__ import annotations

from .base import Message


class ButtonPress(Message, frozen=True):
    """The person pressed the button (debounced, one message per press).

    A positive ``press_id`` grows with every press, across restarts of the panel: the panel announces
    the same press again (same id) until the referee acknowledges it in ``GameState.press_ack``, and the
    referee takes each id once. An id <= 0 (a tool's press) is never acknowledged nor repeated."""

    press_id: int
    #: which driver saw it: "gpio", "serial", "console", "sim".
    source: str = ""
    #: CLOCK_MONOTONIC nanoseconds of the press's first edge (the clock of ``CameraFrame.capture_ns``, so
    #: the referee can tell frames captured after the press); 0: unknown, the receiver's arrival time.
    press_ns: int = 0


class PanelState(Message, frozen=True):
    """What the panel shows now, derived by the led service from the referee's game state."""

    lamp: bool
    #: a named pattern, e.g. "idle", "thinking", "moving", "your-turn", "illegal-two-pieces",
    #: "restoring", "device-won", "person-won", "draw", "process-down", "fault".
    pattern: str
    #: each LED's mode by name, e.g. {"status": "green-blink-fast", "error": "off"}.
    leds: dict[str, str] = {}
    #: a short human-readable line for the console panel.
    text: str = ""
