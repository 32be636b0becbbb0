"""The game as the referee holds it: published on change and at 1 Hz, and served as a snapshot."""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from .base import Message
from .game import NO_ACTIVITY, NO_ILLEGAL, NO_RESULT, Activity, Illegal, Phase, Result


class PlacementRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One placement by the device, timed from the command to vision's confirmation."""

    command_id: str
    square: int
    colour: str
    duration_s: float
    within_budget: bool
    kind: str = "place"


class GameState(Message, frozen=True):
    """The referee's whole game state. ``revision`` grows by one on every change: a follower drops any
    update whose revision is not newer than what it holds (the snapshot pattern).

    ``board`` is 9 characters ("X" black, "O" white, "."); ``phase``, ``result``, ``illegal``,
    ``activity`` and ``paused_phase`` hold the game's words (:mod:`messages.game`), plain strings on
    the wire.
    """

    VERSION: ClassVar[int] = 2

    revision: int
    game_id: str = ""
    phase: Phase = "idle"
    task: int | None = None
    board: str = "........."
    device_colour: str = ""
    to_move: str = ""
    move_number: int = 0
    level: str = "perfect"
    lamp: bool = False
    #: "device-won", "person-won", "draw", "done" (placement tasks), "stopped", or "" while running.
    result: Result = NO_RESULT
    #: the kind of the last illegal move, or "": "two-pieces", "wrong-colour", "person-piece-moved",
    #: "person-piece-removed", "no-change", "occupied-square" (the person's piece where the device's
    #: belongs), "stable-timeout" (no clear view after the button), "placement-failed" (a device
    #: placement vision did not confirm; ``fault`` says more).
    illegal: Illegal = NO_ILLEGAL
    #: a short human-readable line about what the referee is doing and why.
    message: str = ""
    pending_command: str = ""
    placements: list[PlacementRecord] = []
    #: seconds since the current placement was commanded (0 when none is running).
    placement_elapsed_s: float = 0.0
    peers_down: list[str] = []
    #: moves so far as squares 1..9, in order.
    moves: list[int] = []
    cheats_restored: int = 0
    illegal_moves: int = 0
    fault: str = ""
    #: what the device is doing now: "" (nothing), "checking-board", "thinking", "placing", "confirming",
    #: "recovering" (a placement vision did not confirm), "restoring" (a cheated piece), "judging".
    activity: Activity = NO_ACTIVITY
    #: the person's colour in a game ("black"/"white"), "" in placement tasks.
    person_colour: str = ""
    #: target squares of the placement tasks (1..9, in order) and their colours ("b"/"w" per square).
    squares: list[int] = []
    colours: str = ""
    #: placements done so far in a placement task.
    placed: int = 0
    #: the device's opening square in task 4.
    first_square: int | None = None
    #: the phase the game is in underneath "paused" ("" when not paused).
    paused_phase: Phase | Literal[""] = ""
    #: the id of the newest button press the referee has taken (acted on, or ignored as out of turn or
    #: as a repeat): the panel announces a press again until it sees its id here. 0: none yet.
    press_ack: int = 0
