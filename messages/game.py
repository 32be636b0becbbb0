"""The game's words: the referee's phases, results, illegal-move kinds and activities.

One typed vocabulary that every process imports (the referee decides with it, the panel, the simulated
person, vision's anomaly watch and the simulator's runner read it). Each word is a ``Literal`` type, so
a :class:`~messages.GameState` field that holds it is checked when it is decoded, and a named constant
of that type, so code never spells the word again. On the bus the words are the same plain strings they
always were: recordings and older peers decode unchanged.

The tuples (:data:`PHASES`, :data:`RESULTS`, :data:`ILLEGAL_KINDS`, :data:`ACTIVITIES`) are derived
from the types, so a table keyed by these words (the panel's patterns, for example) can be tested for
completeness against them.

>>> WAITING_FOR_PERSON in PHASES
True
>>> NO_RESULT, NO_ILLEGAL, NO_ACTIVITY
('', '', '')
"""

from __future__ import annotations

from typing import Final, Literal, get_args

# ------------------------------------------------------------------------------------------------ phases
#: The referee's phase (``GameState.phase``; ``GameState.paused_phase`` holds one too, or "").
#: See :mod:`services.referee.machine` for the transitions.
Phase = Literal[
    "idle",
    "task-chosen",
    "device-to-move",
    "move-requested",
    "command-sent",
    "placement-confirmed",
    "waiting-for-person",
    "button-pressed",
    "waiting-for-stable",
    "judged",
    "game-over",
    "paused",
]

IDLE: Final[Phase] = "idle"
TASK_CHOSEN: Final[Phase] = "task-chosen"
DEVICE_TO_MOVE: Final[Phase] = "device-to-move"
MOVE_REQUESTED: Final[Phase] = "move-requested"
COMMAND_SENT: Final[Phase] = "command-sent"
PLACEMENT_CONFIRMED: Final[Phase] = "placement-confirmed"
WAITING_FOR_PERSON: Final[Phase] = "waiting-for-person"
BUTTON_PRESSED: Final[Phase] = "button-pressed"
WAITING_FOR_STABLE: Final[Phase] = "waiting-for-stable"
JUDGED: Final[Phase] = "judged"
GAME_OVER: Final[Phase] = "game-over"
PAUSED: Final[Phase] = "paused"

#: every phase, in the order of a game.
PHASES: Final[tuple[Phase, ...]] = get_args(Phase)
#: phases in which no task runs: a new task may start.
RESTING_PHASES: Final[frozenset[Phase]] = frozenset({IDLE, GAME_OVER})

# ----------------------------------------------------------------------------------------------- results
#: How a task or game ended (``GameState.result``); "" while it runs. "done" ends a placement task.
Result = Literal["", "device-won", "person-won", "draw", "done", "stopped"]

NO_RESULT: Final[Result] = ""
DEVICE_WON: Final[Result] = "device-won"
PERSON_WON: Final[Result] = "person-won"
DRAW: Final[Result] = "draw"
DONE: Final[Result] = "done"
STOPPED: Final[Result] = "stopped"

#: every result a finished task or game can have (without "").
RESULTS: Final[tuple[Result, ...]] = tuple(r for r in get_args(Result) if r)

# ----------------------------------------------------------------------------------------- illegal moves
#: The kind of the last illegal move (``GameState.illegal``), or "".
Illegal = Literal[
    "",
    "no-change",
    "two-pieces",
    "wrong-colour",
    "person-piece-moved",
    "person-piece-removed",
    "stable-timeout",
    "occupied-square",
    "placement-failed",
]

NO_ILLEGAL: Final[Illegal] = ""
#: the button was pressed and nothing changed on the board.
NO_CHANGE: Final[Illegal] = "no-change"
#: more than one new piece.
TWO_PIECES: Final[Illegal] = "two-pieces"
#: the person placed the device's colour.
WRONG_COLOUR: Final[Illegal] = "wrong-colour"
#: one of the person's own pieces moved to another square.
PERSON_PIECE_MOVED: Final[Illegal] = "person-piece-moved"
#: one of the person's own pieces was taken off the board.
PERSON_PIECE_REMOVED: Final[Illegal] = "person-piece-removed"
#: no clear view of the board after the button.
STABLE_TIMEOUT: Final[Illegal] = "stable-timeout"
#: the person's piece is where the device's piece belongs.
OCCUPIED_SQUARE: Final[Illegal] = "occupied-square"
#: a device placement vision did not confirm (``GameState.fault`` says more).
PLACEMENT_FAILED: Final[Illegal] = "placement-failed"

#: every illegal-move kind (without "").
ILLEGAL_KINDS: Final[tuple[Illegal, ...]] = tuple(k for k in get_args(Illegal) if k)

# -------------------------------------------------------------------------------------------- activities
#: What the device is doing now (``GameState.activity``), or "" (nothing).
Activity = Literal[
    "",
    "checking-board",
    "thinking",
    "placing",
    "confirming",
    "recovering",
    "restoring",
    "judging",
]

NO_ACTIVITY: Final[Activity] = ""
CHECKING_BOARD: Final[Activity] = "checking-board"
THINKING: Final[Activity] = "thinking"
PLACING: Final[Activity] = "placing"
CONFIRMING: Final[Activity] = "confirming"
#: a placement vision did not confirm is being put right.
RECOVERING: Final[Activity] = "recovering"
#: a cheated piece is being put back.
RESTORING: Final[Activity] = "restoring"
JUDGING: Final[Activity] = "judging"

#: every activity (without "").
ACTIVITIES: Final[tuple[Activity, ...]] = tuple(a for a in get_args(Activity) if a)
