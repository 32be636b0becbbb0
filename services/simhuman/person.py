"""The simulated person's behaviour as pure logic: from the referee's game state to a plan of steps.

:meth:`Person.on_state` is called with every ``referee.state``; when it is the person's turn (phase
``waiting-for-person``, lamp on) and this turn has not been acted on yet, it returns the steps to carry
out: waits (already divided by the speed factor, with seeded jitter), world actions (the hand over the
square, a piece placed, the hand withdrawn) and the button press. The service executes them in order.

A turn is identified by (game id, moves so far, illegal moves so far, cheats restored so far): the
referee changes one of these whenever it hands the turn back, and any other republication of the same
state (1 Hz, a revision bump) is ignored, so the person never acts twice for one turn.

Misbehaviours (``simhuman.misbehave``; ``NAME`` = the first opportunity, ``NAME:N`` = at the person's move
N) are committed once each; after the referee reports the turn illegal, the person corrects it as a
real person would (takes the extra or wrong piece away, puts a moved piece back, makes the move they
skipped) and presses again:

- ``two-pieces``: their move plus a second piece of their colour on another empty square;
- ``wrong-colour``: a piece of the device's colour instead of their own;
- ``move-device-piece``: one of the device's pieces moved to an empty square, no move of their own
  (the contest's cheating case: the referee restores it, then the person moves);
- ``remove-device-piece``: one of the device's pieces taken off the board, no move of their own;
- ``button-without-move``: the button pressed with nothing done;
- ``hand-in-view``: their move, but the button pressed while the hand is still over the board; it is
  withdrawn ``hand_linger_s`` later.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Final, Literal

from messages import GameState, WorldAction
from messages.game import WAITING_FOR_PERSON

from .config import SimHumanConfig
from .policy import Policy, empty_squares, make_policy

MISBEHAVIOURS: Final = (
    "two-pieces",
    "wrong-colour",
    "move-device-piece",
    "remove-device-piece",
    "button-without-move",
    "hand-in-view",
)
#: after this many presses in one turn that the referee keeps rejecting with nothing left to correct,
#: the person stops pressing (and says so) rather than loop forever.
MAX_PRESSES_PER_TURN: Final = 4
#: presses made again in one turn because the lamp still asked (a press lost with the panel), at most.
MAX_REPRESSES_PER_TURN: Final = 10
#: relative jitter of every delay (seeded).
DELAY_JITTER: Final = 0.3

PIECE_OF: Final = {"black": "X", "white": "O"}
COLOUR_OF: Final = {"X": "black", "O": "white"}

#: the shortest real time a press lasts (above any sane debounce time of the panel).
MIN_PRESS_S = 0.1


class MisbehaviourError(ValueError):
    """An unknown misbehaviour name or a malformed ``NAME:N``."""


@dataclass(frozen=True)
class Wait:
    """Pause this many real seconds (already scaled by the speed factor)."""

    seconds: float


@dataclass(frozen=True)
class Act:
    """Publish this world action on ``sim.action``."""

    action: WorldAction


@dataclass(frozen=True)
class Press:
    """Press and release the button (``sim.button`` True then False), holding it ``hold_s``."""

    hold_s: float


@dataclass(frozen=True)
class Say:
    """A line for the log (what the person is doing and why)."""

    text: str


Step = Wait | Act | Press | Say


def button_levels(pressed: bool, bounce: int) -> list[bool]:
    """The levels one edge produces: ``bounce`` flickers, then the final level.

    >>> button_levels(True, 2)
    [True, False, True, False, True]
    """
    out: list[bool] = []
    for _ in range(bounce):
        out += [pressed, not pressed]
    out.append(pressed)
    return out


TurnKey = tuple[str, int, int, int]


def parse_misbehaviours(specs: list[str] | tuple[str, ...]) -> dict[str, int | None]:
    """``["two-pieces", "wrong-colour:3"]`` -> ``{"two-pieces": None, "wrong-colour": 3}`` (None: the
    first opportunity). :raises MisbehaviourError: for an unknown name or a bad move number."""
    out: dict[str, int | None] = {}
    for spec in specs:
        name, _, arg = spec.strip().partition(":")
        if name not in MISBEHAVIOURS:
            raise MisbehaviourError(f"unknown misbehaviour {name!r}; known: {', '.join(MISBEHAVIOURS)}")
        if arg:
            try:
                at = int(arg)
            except ValueError:
                raise MisbehaviourError(f"{spec!r}: the move number must be an integer") from None
            if at < 1:
                raise MisbehaviourError(f"{spec!r}: the person's moves count from 1")
            out[name] = at
        else:
            out[name] = None
    return out


@dataclass
class Correction:
    """What to undo after the referee rejects a misbehaviour."""

    name: str
    steps: list[WorldAction]
    #: the misbehaviour replaced the person's own move, which is still to be made.
    move_pending: bool


@dataclass
class Person:
    """The person's memory across turns. Deterministic for a given seed and sequence of states.

    :param speed: the simulator's speed factor; every delay is divided by it.
    """

    config: SimHumanConfig
    speed: float = 1.0
    policy: Policy = field(init=False)
    rng: random.Random = field(init=False)
    todo: dict[str, int | None] = field(init=False)
    done: list[str] = field(default_factory=list)
    _acted: set[TurnKey] = field(default_factory=set)
    _game: str = ""
    _own_moves: int = 0
    _moved_at: int | None = None
    _correction: Correction | None = None
    _presses: dict[tuple[str, int], int] = field(default_factory=dict)
    _last_acted: tuple[str, int] | None = None
    _last_illegal: int = 0
    _ids: itertools.count[int] = field(default_factory=itertools.count)
    #: the turn whose plan ended with a press, and how often the person pressed again in it
    _pressed_turn: TurnKey | None = None
    _represses: int = 0

    def __post_init__(self) -> None:
        self.policy = make_policy(self.config.policy)
        self.rng = random.Random(self.config.seed)
        self.todo = parse_misbehaviours(self.config.misbehave)
        if self.speed <= 0:
            raise ValueError(f"speed must be positive, got {self.speed}")

    # ------------------------------------------------------------------ helpers

    def delay(self, seconds: float) -> Wait:
        """``seconds`` of a real person, with seeded jitter, divided by the speed factor."""
        jitter = 1.0 + self.rng.uniform(-DELAY_JITTER, DELAY_JITTER)
        return Wait(max(0.0, seconds * jitter / self.speed))

    def _action(self, kind: Literal["place", "move", "remove", "hand"], **fields: object) -> WorldAction:
        return WorldAction(action_id=f"person-{self.config.seed}-{next(self._ids)}", kind=kind, **fields)  # type: ignore[arg-type]

    def _hand(self, square: int | None, present: bool) -> Act:
        angle = self.rng.uniform(-20.0, 20.0)
        return Act(self._action("hand", to_square=square, present=present, angle_deg=angle))

    def _touch(self, action: WorldAction, *, withdraw: bool = True) -> list[Step]:
        """Reach over the square the action is about, do it, and (normally) take the hand away."""
        square = action.to_square if action.kind == "place" else action.from_square
        steps: list[Step] = [
            self._hand(square, True),
            self.delay(self.config.reach_s),
            Act(action),
            self.delay(self.config.reach_s / 2),
        ]
        if action.kind == "move":  # the hand carried the piece over to its new square
            steps += [self._hand(action.to_square, True), self.delay(self.config.reach_s / 2)]
        if withdraw:
            steps += [self._hand(None, False), self.delay(self.config.reach_s / 2)]
        return steps

    def _press(self) -> Press:
        # A finger is not sped up: the panel debounces in real time, so a press lasts at least
        # MIN_PRESS_S of real time whatever the speed factor.
        return Press(max(MIN_PRESS_S, self.config.press_s / self.speed))

    @staticmethod
    def turn_key(state: GameState) -> TurnKey:
        return (state.game_id, len(state.moves), state.illegal_moves, state.cheats_restored)

    @staticmethod
    def colours(state: GameState) -> tuple[str, str]:
        """(person's piece, device's piece) as "X"/"O"."""
        if state.person_colour in PIECE_OF:
            me = PIECE_OF[state.person_colour]
        else:
            me = "O" if state.device_colour == "black" else "X"
        return me, ("O" if me == "X" else "X")

    def _due(self, name: str) -> bool:
        if name not in self.todo:
            return False
        at = self.todo[name]
        return at is None or self._own_moves + 1 >= at

    # ------------------------------------------------------------------ the turn

    def is_my_turn(self, state: GameState) -> bool:
        return state.phase == WAITING_FOR_PERSON and state.lamp and not state.result

    def claim_turn(self, state: GameState) -> bool:
        """Whether ``state`` is a turn of the person's that nobody acted on yet; if so, it is marked as
        acted on, so that no later republication of it gets a second plan."""
        if not self.is_my_turn(state):
            return False
        key = self.turn_key(state)
        if key in self._acted:
            return False
        self._acted.add(key)
        return True

    def on_state(self, state: GameState) -> list[Step]:
        """The plan for this state: empty unless it is a new turn of the person's."""
        steps = self._plan(state)
        if any(isinstance(s, Press) for s in steps):
            self._pressed_turn, self._represses = self.turn_key(state), 0
        return steps

    def press_again(self, state: GameState, since_press_s: float) -> list[Step]:
        """What a person does when the lamp still asks ``since_press_s`` real seconds after their press
        in this very turn: presses again (a press lost with a restart of the panel), once every
        ``repress_s``, up to :data:`MAX_REPRESSES_PER_TURN` times. Empty otherwise."""
        if (
            not self.is_my_turn(state)
            or self.turn_key(state) != self._pressed_turn
            or since_press_s < self.config.repress_s
            or self._represses >= MAX_REPRESSES_PER_TURN
        ):
            return []
        self._represses += 1
        said = Say(f"the lamp still asks {since_press_s:.1f} s after the press: pressing again")
        return [said, self._press()]

    def _plan(self, state: GameState) -> list[Step]:
        if state.game_id != self._game:
            self._game = state.game_id
            self._own_moves = 0
            self._moved_at = None
            self._correction = None
            self.policy = make_policy(self.config.policy)  # mistake:N counts again
        if not self.claim_turn(state):
            return []
        turn = len(state.moves)
        if self._moved_at is not None and self._moved_at != turn:
            self._moved_at = None  # a new turn: last turn's move was accepted
        presses = self._presses.get((state.game_id, turn), 0)
        if presses >= MAX_PRESSES_PER_TURN:
            return [Say(f"gave up pressing after {presses} rejected presses ({state.illegal})")]
        self._presses[(state.game_id, turn)] = presses + 1
        # Rejected: the illegal count grew since we last acted on this very turn. (``illegal`` alone is
        # not enough: a referee may leave the last reason in place after a legal move.)
        rejected = self._last_acted == (state.game_id, turn) and state.illegal_moves > self._last_illegal
        self._last_acted, self._last_illegal = (state.game_id, turn), state.illegal_moves
        if rejected:
            return self._after_illegal(state, turn)
        if self._correction is not None:
            # The referee dealt with it itself (a cheat restored): nothing of ours to undo.
            self._correction = None
        if self._moved_at == turn:
            return [Say(f"already moved this turn; pressing again ({state.message})"), self._press()]
        return self._new_turn(state, turn)

    def _new_turn(self, state: GameState, turn: int) -> list[Step]:
        me, device = self.colours(state)
        board = state.board
        steps: list[Step] = [self.delay(self.config.think_s)]
        for name in MISBEHAVIOURS:
            if self._due(name):
                planned = self._misbehave(name, state, turn, me, device)
                if planned is not None:
                    del self.todo[name]
                    self.done.append(name)
                    return [*steps, Say(f"misbehaving: {name}"), *planned]
        square = self._choose(board, me)
        steps += self._touch(self._action("place", colour=COLOUR_OF[me], to_square=square))
        self._moved_at = turn
        steps.append(self._press())
        return steps

    def _choose(self, board: str, me: str) -> int:
        self._own_moves += 1
        return self.policy.choose(board, me, self._own_moves, self.rng)

    def _misbehave(self, name: str, state: GameState, turn: int, me: str, device: str) -> list[Step] | None:
        """The steps of misbehaviour ``name`` on this turn, or None when it is not possible now."""
        board = state.board
        empty = empty_squares(board)
        device_squares = [i + 1 for i, c in enumerate(board) if c == device]
        match name:
            case "two-pieces":
                if len(empty) < 2:
                    return None
                square = self._choose(board, me)
                extra = self.rng.choice([s for s in empty if s != square])
                self._moved_at = turn
                self._correction = Correction(name, [self._action("remove", from_square=extra)], False)
                return [
                    *self._touch(self._action("place", colour=COLOUR_OF[me], to_square=square)),
                    *self._touch(self._action("place", colour=COLOUR_OF[me], to_square=extra)),
                    self._press(),
                ]
            case "wrong-colour":
                if not empty:
                    return None
                square = self.rng.choice(empty)
                self._correction = Correction(name, [self._action("remove", from_square=square)], True)
                return [
                    *self._touch(self._action("place", colour=COLOUR_OF[device], to_square=square)),
                    self._press(),
                ]
            case "move-device-piece":
                if not device_squares or not empty:
                    return None
                src = self.rng.choice(device_squares)
                dst = self.rng.choice(empty)
                back = self._action("move", from_square=dst, to_square=src)
                self._correction = Correction(name, [back], True)
                return [*self._touch(self._action("move", from_square=src, to_square=dst)), self._press()]
            case "remove-device-piece":
                if not device_squares:
                    return None
                src = self.rng.choice(device_squares)
                back = self._action("place", colour=COLOUR_OF[device], to_square=src)
                self._correction = Correction(name, [back], True)
                return [*self._touch(self._action("remove", from_square=src)), self._press()]
            case "button-without-move":
                self._correction = Correction(name, [], True)
                return [self._press()]
            case "hand-in-view":
                if not empty:
                    return None
                square = self._choose(board, me)
                self._moved_at = turn
                self._correction = Correction(name, [self._hand(None, False).action], False)
                return [
                    *self._touch(
                        self._action("place", colour=COLOUR_OF[me], to_square=square), withdraw=False
                    ),
                    self._press(),
                    self.delay(self.config.hand_linger_s),
                    self._hand(None, False),
                ]
        return None

    def _after_illegal(self, state: GameState, turn: int) -> list[Step]:
        """The referee rejected the turn: undo what we did wrong, make the move if it is still owed, press."""
        me, _ = self.colours(state)
        steps: list[Step] = [
            Say(f"the referee says {state.illegal!r}; correcting"),
            self.delay(self.config.think_s / 2),
        ]
        correction = self._correction
        self._correction = None
        if correction is None and self._moved_at == turn:
            # Nothing of ours to undo and our move is made: the device misread. A person looks again
            # and gives it a moment (real seconds, like ``repress_s``) rather than press at once.
            steps += [Say("nothing to correct: pressing again in a moment"), Wait(self.config.repress_s)]
        if correction is not None:
            for action in correction.steps:
                if action.kind == "hand":
                    steps.append(Act(action))
                else:
                    steps += self._touch(action)
        if self._moved_at != turn and empty_squares(state.board):
            square = self._choose(state.board, me)
            steps += self._touch(self._action("place", colour=COLOUR_OF[me], to_square=square))
            self._moved_at = turn
        steps.append(self._press())
        return steps
