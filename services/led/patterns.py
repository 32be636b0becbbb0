"""What the panel shows, as a pure function of the referee's game state: :func:`panel_for`.

The panel has a lamp and two LEDs, ``status`` and ``error``. The lamp is lit exactly while the referee
is in phase ``waiting-for-person``: the device's move is finished *and* confirmed by vision, and the
person's clock runs (the contest: the lamp stops the device's clock); it goes out when the button is
pressed (the referee leaves that phase). The LEDs say what is going on, one named pattern at a time, by
priority: fault, a process down, paused, the game's result, an illegal move (which kind, as a blink
code on the error LED), restoring a cheated piece, then the phase.

LED modes are words so that every driver can render them: ``off``, ``on``, ``blink-slow`` (1 Hz),
``blink-fast`` (4 Hz), ``heartbeat`` (a short flash every 2 s) and ``flash-N`` (N short flashes, then a
pause: a blink code). :func:`led_level` says whether a mode is lit at a given time.

>>> panel_for(GameState(revision=1, phase="waiting-for-person")).lamp
True
>>> panel_for(GameState(revision=2, phase="waiting-for-person", illegal="two-pieces")).leds["error"]
'flash-2'
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final, NamedTuple

from messages import GameState, PanelState
from messages import game as G

#: the phase in which the lamp is on.
LAMP_PHASE: Final = G.WAITING_FOR_PERSON


class Look(NamedTuple):
    """A pattern's LEDs (the lamp follows the phase, see the module docstring)."""

    status: str
    error: str
    text: str


#: every pattern but the illegal ones, by name.
LOOKS: Final[dict[str, Look]] = {
    "idle": Look("heartbeat", "off", "idle: choose a task"),
    "ready": Look("on", "off", "task chosen"),
    "thinking": Look("blink-slow", "off", "thinking"),
    "moving": Look("blink-fast", "off", "moving a piece"),
    "checking": Look("flash-1", "off", "checking your move"),
    "your-turn": Look("on", "off", "your turn: move, then press the button"),
    #: the panel restarted during the person's turn: a press made meanwhile may be lost.
    "press-again": Look("on", "blink-fast", "your turn: if you pressed the button already, press it again"),
    "restoring": Look("blink-fast", "blink-fast", "putting back a moved piece"),
    "device-won": Look("flash-3", "off", "game over: the device won"),
    "person-won": Look("flash-4", "off", "game over: you won"),
    "draw": Look("flash-2", "off", "game over: draw"),
    "done": Look("flash-5", "off", "task done"),
    "paused": Look("blink-slow", "blink-slow", "paused"),
    "process-down": Look("off", "blink-slow", "waiting: a process is down"),
    "fault": Look("off", "on", "fault"),
}

#: illegal move kinds -> the error LED's blink code (flash-N) and what to tell the person (every kind has
#: its own code; a test checks the table against :data:`messages.game.ILLEGAL_KINDS`).
ILLEGAL: Final[dict[G.Illegal, tuple[int, str]]] = {
    G.NO_CHANGE: (1, "no move seen: move, then press"),
    G.TWO_PIECES: (2, "two pieces placed: take one back"),
    G.WRONG_COLOUR: (3, "wrong colour: use your own pieces"),
    G.PERSON_PIECE_MOVED: (4, "your piece was moved: put it back"),
    G.PERSON_PIECE_REMOVED: (5, "your piece was taken off: put it back"),
    G.STABLE_TIMEOUT: (6, "cannot see the board: take your hand away"),
    G.OCCUPIED_SQUARE: (7, "your piece is on the device's square: take it back"),
    G.PLACEMENT_FAILED: (8, "the device's piece did not land: check the board"),
}
#: the blink code of an illegal kind not in the table.
OTHER_ILLEGAL_FLASHES: Final = 9

#: phases in which an illegal move is still being shown (until the referee clears ``illegal``).
ILLEGAL_PHASES: Final[frozenset[G.Phase]] = frozenset(
    {G.WAITING_FOR_PERSON, G.BUTTON_PRESSED, G.WAITING_FOR_STABLE, G.JUDGED}
)

#: every phase -> its pattern (a test checks that no phase of :data:`messages.game.PHASES` is missing).
PHASE_PATTERN: Final[dict[G.Phase, str]] = {
    G.IDLE: "idle",
    G.TASK_CHOSEN: "ready",
    G.DEVICE_TO_MOVE: "thinking",
    G.MOVE_REQUESTED: "thinking",
    G.COMMAND_SENT: "moving",
    G.PLACEMENT_CONFIRMED: "moving",
    G.WAITING_FOR_PERSON: "your-turn",
    G.BUTTON_PRESSED: "checking",
    G.WAITING_FOR_STABLE: "checking",
    G.JUDGED: "checking",
    G.GAME_OVER: "idle",
    G.PAUSED: "paused",
}

#: every activity -> its pattern (checked against :data:`messages.game.ACTIVITIES`).
ACTIVITY_PATTERN: Final[dict[G.Activity, str]] = {
    G.CHECKING_BOARD: "thinking",
    G.THINKING: "thinking",
    G.PLACING: "moving",
    G.CONFIRMING: "moving",
    G.RECOVERING: "moving",
    G.RESTORING: "restoring",
    G.JUDGING: "checking",
}

#: every result -> its pattern (checked against :data:`messages.game.RESULTS`).
RESULT_PATTERN: Final[dict[G.Result, str]] = {
    G.DEVICE_WON: "device-won",
    G.PERSON_WON: "person-won",
    G.DRAW: "draw",
    G.DONE: "done",
    G.STOPPED: "idle",
}


def _pattern(state: GameState, down: list[str], ask_again: bool = False) -> tuple[str, Look]:
    if state.fault:
        look = LOOKS["fault"]
        return "fault", look._replace(text=f"fault: {state.fault}")
    if down:
        look = LOOKS["process-down"]
        return "process-down", look._replace(text=f"waiting: {', '.join(down)} down")
    if state.phase == G.PAUSED:
        return "paused", LOOKS["paused"]
    if state.result in RESULT_PATTERN and (state.phase == G.GAME_OVER or state.result != G.STOPPED):
        name = RESULT_PATTERN[state.result]
        return name, LOOKS[name]
    if state.illegal and state.phase in ILLEGAL_PHASES:
        flashes, text = ILLEGAL.get(state.illegal, (OTHER_ILLEGAL_FLASHES, f"illegal move: {state.illegal}"))
        return f"illegal-{state.illegal}", Look("off", f"flash-{flashes}", text)
    if state.phase == LAMP_PHASE:
        name = "press-again" if ask_again else "your-turn"
        return name, LOOKS[name]
    if state.activity in ACTIVITY_PATTERN:
        name = ACTIVITY_PATTERN[state.activity]
        return name, LOOKS[name]
    name = PHASE_PATTERN.get(state.phase, "idle")
    return name, LOOKS[name]


def panel_for(state: GameState, peers_down: Iterable[str] = (), ask_again: bool = False) -> PanelState:
    """The panel for ``state``. ``peers_down`` adds processes the led service itself found down (the
    referee, whose silence ``state`` cannot report) to ``state.peers_down``. ``ask_again``: the panel
    (re)started during the person's turn, so a press may have been lost with the old process; the lamp
    asks with its own pattern ("press-again") until the turn ends."""
    down = sorted({*state.peers_down, *peers_down})
    name, look = _pattern(state, down, ask_again)
    lamp = state.phase == LAMP_PHASE
    text = look.text
    if state.message and name not in ("fault", "process-down"):
        text = f"{text} ({state.message})"
    return PanelState(
        lamp=lamp,
        pattern=name,
        leds={"lamp": "on" if lamp else "off", "status": look.status, "error": look.error},
        text=text,
    )


def no_referee_panel(waited_s: float) -> PanelState:
    """Before the first game state arrives."""
    if waited_s <= 0:
        return PanelState(
            lamp=False,
            pattern="idle",
            leds={"lamp": "off", "status": "heartbeat", "error": "off"},
            text="waiting for the referee",
        )
    return panel_for(GameState(revision=0), ["referee"])


# -- rendering modes in time ---------------------------------------------------------------------------

SLOW_PERIOD_S: Final = 1.0
FAST_PERIOD_S: Final = 0.25
HEARTBEAT_PERIOD_S: Final = 2.0
HEARTBEAT_ON_S: Final = 0.1
FLASH_ON_S: Final = 0.15
FLASH_OFF_S: Final = 0.2
FLASH_PAUSE_S: Final = 1.0


class UnknownMode(ValueError):
    """An LED mode word that is not one of the documented ones."""


def led_level(mode: str, t: float) -> bool:
    """Whether an LED in ``mode`` is lit at time ``t`` (seconds, any monotonic origin).

    >>> [led_level("flash-2", t) for t in (0.0, 0.2, 0.4, 0.6, 1.0)]
    [True, False, True, False, False]
    """
    if mode == "off":
        return False
    if mode == "on":
        return True
    if mode == "blink-slow":
        return math.fmod(t, SLOW_PERIOD_S) < SLOW_PERIOD_S / 2
    if mode == "blink-fast":
        return math.fmod(t, FAST_PERIOD_S) < FAST_PERIOD_S / 2
    if mode == "heartbeat":
        return math.fmod(t, HEARTBEAT_PERIOD_S) < HEARTBEAT_ON_S
    if mode.startswith("flash-") and mode[6:].isdigit() and int(mode[6:]) > 0:
        n = int(mode[6:])
        cycle = n * (FLASH_ON_S + FLASH_OFF_S) + FLASH_PAUSE_S
        phase = math.fmod(t, cycle)
        index, within = divmod(phase, FLASH_ON_S + FLASH_OFF_S)
        return index < n and within < FLASH_ON_S
    raise UnknownMode(f"unknown LED mode {mode!r}")
