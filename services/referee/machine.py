"""The referee's state machine: a pure function ``step(state, event) -> (state, actions)``.

No I/O, no clock, no randomness of its own: time comes in the events (``now``), the engine is a pure
library called with a seeded generator, and everything the outside world must do comes out as actions
(see :mod:`services.referee.events`). Folding the journal of events through :func:`step` therefore
rebuilds exactly the state the referee had, which is how it survives a crash.

Phases (``RefereeState.phase``; GameState.phase shows "paused" instead while a required peer is down)::

    idle ──task──▶ task-chosen ──stable view, board ready──▶
        tasks 1-3: command-sent (place i) ──done, vision sees it──▶ placement-confirmed ──▶
                   command-sent (place i+1) ... ──all placed──▶ game-over (done)
        tasks 4-6: device-to-move (device opens) | waiting-for-person (person opens)

    device-to-move ─▶ move-requested ──AI reply (or the engine in-process after ai_timeout_s)──▶
    command-sent ──actuator done──▶ (confirming) ──vision sees the piece──▶ placement-confirmed ──▶
    waiting-for-person (lamp on) | game-over

    waiting-for-person ──button──▶ button-pressed ─▶ waiting-for-stable ──stable view captured after the
    press──▶ judged ──┬─ legal move ─▶ device-to-move | game-over
                      ├─ cheating ─▶ command-sent (restore, confirmed by vision, one piece at a time) ─▶
                      │             device-to-move | waiting-for-person | game-over
                      └─ illegal ─▶ waiting-for-person (lamp on, ``illegal`` says why)

    any active phase ──stop──▶ game-over (stopped);  a required peer silent ──▶ paused ──back──▶ (same)

Nothing that changes the game is trusted to arrive once: a pending command or move request with no news
for ``requery_s`` is asked about again, and at once when the bus or the actuator restarts (a new pid in
its heartbeat) or the shell reports lost messages (:class:`Resync`); a button press id is taken once and
acknowledged in ``GameState.press_ack``.

A placement that vision does not confirm within ``confirm_timeout_s`` of the actuator's "done" (or that
the actuator reports failed) is analysed against the last stable view: a piece on the wrong square is
moved to the right one, a missing piece is replaced from the supply, up to ``placement_retries`` times;
otherwise the referee reports the fault and waits until the board matches what it expects. It never goes
on with a board that differs from the real one.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import msgspec

import engine
from messages import (
    ActuatorCommand,
    BoardObservation,
    GameState,
    Heartbeat,
    MoveReply,
    MoveRequest,
    OperatorCommand,
    OperatorReply,
    PlacementRecord,
)
from messages.game import (
    BUTTON_PRESSED,
    CHECKING_BOARD,
    COMMAND_SENT,
    CONFIRMING,
    DEVICE_TO_MOVE,
    DEVICE_WON,
    DONE,
    DRAW,
    GAME_OVER,
    IDLE,
    JUDGED,
    JUDGING,
    MOVE_REQUESTED,
    NO_ACTIVITY,
    NO_ILLEGAL,
    NO_RESULT,
    PAUSED,
    PERSON_WON,
    PLACEMENT_CONFIRMED,
    PLACEMENT_FAILED,
    PLACING,
    RECOVERING,
    RESTING_PHASES,
    RESTORING,
    STABLE_TIMEOUT,
    STOPPED,
    TASK_CHOSEN,
    THINKING,
    WAITING_FOR_PERSON,
    WAITING_FOR_STABLE,
    Activity,
    Illegal,
    Phase,
    Result,
)
from services.ai import core as ai_core
from services.bus.config import BusConfig

from . import judge as J
from .config import RefereeConfig
from .events import (
    Action,
    ActuatorReport,
    AiReply,
    Button,
    Checkpoint,
    Event,
    Observation,
    Operator,
    PeerHeartbeat,
    PublishState,
    QueryCommand,
    ReplyOperator,
    RequestMove,
    Restarted,
    Resync,
    SendCommand,
    Tick,
    UseLocalEngine,
    log,
)

if TYPE_CHECKING:
    from services.common.config import Config

PLACEMENT_TASKS: Final = frozenset({1, 2, 3})
GAME_TASKS: Final = frozenset({4, 5, 6})
#: how many squares the placement tasks take.
TASK_SQUARE_COUNT: Final = {1: 1, 2: 4, 3: 4}
TASK1_SQUARE: Final = 5

#: how many operator replies are kept to answer a repeated command id.
MAX_REPLIES: Final = 64

#: actuator command states of a pending placement.
SENT, ACCEPTED, QUERYING, DONE_STATUS, FAILED = "sent", "accepted", "querying", "done", "failed"


class SettingsError(ValueError):
    """A referee setting is out of range (names the key and what is allowed)."""


class OperatorError(ValueError):
    """An operator command that cannot be carried out; the message goes back to the operator."""


#: the defaults of the settings: those of the configuration sections they come from (one place each).
_REFEREE_DEFAULTS: Final = RefereeConfig()
_BUS_DEFAULTS: Final = BusConfig()


@dataclass(frozen=True, slots=True)
class Settings:
    """The configuration the machine decides with (from ``[referee]`` and ``[bus]``). It is part of the
    state, so :func:`step` needs nothing else; replaying a journal with other settings may decide
    otherwise.

    Every field but ``peer_timeout_s`` (``bus.peer_timeout_s``) is the ``[referee]`` key of the same name,
    documented and defaulted in :class:`~services.referee.config.RefereeConfig`."""

    stable_timeout_s: float = _REFEREE_DEFAULTS.stable_timeout_s
    placement_budget_s: float = _REFEREE_DEFAULTS.placement_budget_s
    confirm_timeout_s: float = _REFEREE_DEFAULTS.confirm_timeout_s
    ai_timeout_s: float = _REFEREE_DEFAULTS.ai_timeout_s
    command_timeout_s: float = _REFEREE_DEFAULTS.command_timeout_s
    requery_s: float = _REFEREE_DEFAULTS.requery_s
    peer_timeout_s: float = _BUS_DEFAULTS.peer_timeout_s
    level: str = _REFEREE_DEFAULTS.level
    seed: int = _REFEREE_DEFAULTS.seed
    placement_retries: int = _REFEREE_DEFAULTS.placement_retries
    required_peers: tuple[str, ...] = tuple(_REFEREE_DEFAULTS.required_peers)
    colours: str = _REFEREE_DEFAULTS.colours
    first_square: int = _REFEREE_DEFAULTS.first_square

    def __post_init__(self) -> None:
        try:
            _check_level(self.level)
        except OperatorError as exc:
            raise SettingsError(f"referee.level: {exc}") from None
        _check_colours(self.colours, 4, "referee.colours")
        if not 1 <= self.first_square <= 9:
            raise SettingsError(f"referee.first_square must be 1..9, got {self.first_square}")
        if self.placement_retries < 0:
            raise SettingsError(f"referee.placement_retries must be >= 0, got {self.placement_retries}")

    @classmethod
    def from_config(cls, config: Config) -> Settings:
        """Settings from the whole configuration (``config.referee`` and ``config.bus``).

        :raises SettingsError: naming the bad key."""
        values = {name: getattr(config.referee, name) for name in _FROM_REFEREE}
        values["required_peers"] = tuple(values["required_peers"])
        return cls(**values, peer_timeout_s=config.bus.peer_timeout_s)


#: the settings that are ``[referee]`` keys of the same name (all but ``peer_timeout_s``).
_FROM_REFEREE: Final = tuple(f.name for f in dataclasses.fields(Settings) if f.name != "peer_timeout_s")


@dataclass(frozen=True, slots=True)
class PendingRequest:
    """A move request the AI has not answered yet."""

    request: MoveRequest
    sent_at: float


@dataclass(frozen=True, slots=True)
class PendingCommand:
    """The placement in progress: the last command sent for it and what vision should see after it."""

    command: ActuatorCommand
    #: "move" (the device's game move), "place" (a placement task), "restore" (undoing cheating)
    purpose: str
    square: int
    #: "black" or "white"
    colour: str
    expected: str
    #: when the first command of this placement was issued (the 15 s budget runs from here)
    started: float
    #: when the command (or a query about it) was last sent
    sent_at: float
    status: str = SENT
    #: when the actuator reported done (or failed)
    done_at: float | None = None
    #: recovery commands issued so far for this placement
    attempts: int = 0
    #: the last complete stable view captured after done that did not confirm it ("" none yet)
    observed: str = ""
    #: the confirmation timeout has been reported
    reported: bool = False
    #: the placement has run past the contest's budget (logged once)
    over_budget: bool = False


@dataclass(frozen=True, slots=True)
class RefereeState:
    """Everything the referee knows. Immutable: :func:`step` returns a new one."""

    settings: Settings = dataclasses.field(default_factory=Settings)
    revision: int = 0
    phase: Phase = IDLE
    level: str = "perfect"
    #: games (tasks) started so far; part of the game id and of the engine's seeds
    game_counter: int = 0
    game_id: str = ""
    task: int | None = None
    #: the logical board: what is (or, once the pending command is confirmed, was) on the squares
    board: str = J.EMPTY_BOARD
    #: the device's piece in a game ("X"/"O"), "" in placement tasks
    device: str = ""
    moves: tuple[int, ...] = ()
    squares: tuple[int, ...] = ()
    colours: str = ""
    placed: int = 0
    first_square: int | None = None
    #: ids issued in this game (commands "<game>-<n>", requests "<game>-r<n>")
    counter: int = 0
    request: PendingRequest | None = None
    pending: PendingCommand | None = None
    #: restore commands still to send after the pending one
    restores: tuple[J.RestoreOp, ...] = ()
    #: when the button was pressed (monotonic seconds) and since when a stable view is awaited
    press_t: float = 0.0
    waiting_since: float = 0.0
    timeout_reported: bool = False
    task_at: float = 0.0
    illegal: Illegal = NO_ILLEGAL
    fault: str = ""
    message: str = ""
    result: Result = NO_RESULT
    activity: Activity = NO_ACTIVITY
    placements: tuple[PlacementRecord, ...] = ()
    cheats_restored: int = 0
    illegal_moves: int = 0
    peers_down: tuple[str, ...] = ()
    #: (process, last heartbeat time) of the required peers heard from
    last_seen: tuple[tuple[str, float], ...] = ()
    replies: tuple[OperatorReply, ...] = ()
    #: (process, pid) of the peers whose restart matters (required peers, the actuator and the AI)
    peer_pids: tuple[tuple[str, int], ...] = ()
    #: the newest button press id taken (published as ``GameState.press_ack``); a press with an id not
    #: above it is a repeat the panel sent before it saw the acknowledgement.
    press_ack: int = 0
    #: the operator restocks both supply columns when choosing a task: the task's first placement tells
    #: the actuator so (``ActuatorCommand.reset_supply``), and this turns false.
    supply_fresh: bool = True

    @property
    def person(self) -> str:
        return J.other_piece(self.device) if self.device else ""

    @property
    def paused(self) -> bool:
        return bool(self.peers_down)


def initial_state(settings: Settings | None = None) -> RefereeState:
    """The state of a referee that has never seen an event."""
    s = settings or Settings()
    return RefereeState(settings=s, level=_check_level(s.level))


# ----------------------------------------------------------------------------------------------- helpers
_replace = dataclasses.replace


def _check_level(level: str | None) -> str:
    if not level:
        raise OperatorError(f"a level is required: one of {', '.join(engine.LEVELS)}")
    name = level.strip().lower()
    if name not in engine.LEVELS:
        raise OperatorError(f"unknown level {level!r}: choose one of {', '.join(engine.LEVELS)}")
    return name


def _check_colours(colours: str, count: int, what: str = "--colours") -> str:
    text = colours.strip().lower()
    if len(text) != count or set(text) - {"b", "w"}:
        raise SettingsError(f"{what} wants {count} letters b/w (e.g. 'bbww' or 'bwbw'), got {colours!r}")
    if count == 4 and (text.count("b") != 2 or text.count("w") != 2):
        raise SettingsError(f"{what}: tasks 2 and 3 place 2 black and 2 white pieces, got {colours!r}")
    return text


def _check_square(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 9:
        raise OperatorError(f"{what} must be a square 1..9, got {value!r}")
    return value


def _colour_of(letter: str) -> str:
    return "black" if letter == "b" else "white"


def _piece_of(colour: str) -> str:
    return J.BLACK if colour == "black" else J.WHITE


def _next_id(state: RefereeState, prefix: str = "") -> tuple[RefereeState, str]:
    n = state.counter + 1
    return _replace(state, counter=n), f"{state.game_id}-{prefix}{n}"


def observation_time(event: Observation) -> float:
    """When the observed frame was captured (its ``capture_ns``), else when the event arrived."""
    return event.obs.capture_ns / 1e9 if event.obs.capture_ns else event.now


def _window_fields(obs: BoardObservation, taken: float, press_t: float) -> dict[str, Any]:
    """How the judged view lies around the press, for the log: its frame, when it was captured and
    when its agreeing window began (ms after the press, to the microsecond; negative: before it). A
    frame captured a few microseconds after the press is after it, not at it."""
    fields: dict[str, Any] = {
        "frame": obs.frame_id,
        "agreeing": obs.agreeing_frames,
        "captured_after_press_ms": round((taken - press_t) * 1000, 3),
    }
    if obs.window_start_ns:
        fields["window_from_press_ms"] = round((obs.window_start_ns / 1e9 - press_t) * 1000, 3)
    return fields


def usable(obs: BoardObservation) -> str:
    """ "" when ``obs`` may be judged (stable, found, unoccluded, complete), else why not."""
    if not obs.found:
        return "no board found"
    if not obs.stable:
        return "not stable"
    if obs.occluded:
        return "occluded"
    if len(obs.board) != 9 or set(obs.board) - {J.BLACK, J.WHITE, J.EMPTY}:
        return f"incomplete reading {obs.board!r}"
    return ""


def wants_observation(state: RefereeState) -> bool:
    """Whether a stable observation could change anything now (the shell forwards, and journals, only
    then: between turns the board is not watched)."""
    if state.paused:
        return False
    if state.phase in (TASK_CHOSEN, WAITING_FOR_STABLE):
        return True
    return (
        state.phase == COMMAND_SENT
        and state.pending is not None
        and state.pending.status in (DONE_STATUS, FAILED)
    )


# ------------------------------------------------------------------------------------------------- view
def game_state(state: RefereeState, now: float | None = None) -> GameState:
    """The public :class:`messages.GameState` of ``state``; ``placement_elapsed_s`` needs ``now``."""
    paused = state.paused
    phase = PAUSED if paused else state.phase
    in_game = state.device and state.phase not in RESTING_PHASES
    pending = state.pending
    elapsed = 0.0
    if pending is not None and now is not None:
        elapsed = round(max(0.0, now - pending.started), 3)
    to_move = ""
    if in_game:
        to_move = J.colour_name(engine.Board.from_string(state.board, validate=False).to_move())
    return GameState(
        revision=state.revision,
        game_id=state.game_id,
        phase=phase,
        task=state.task,
        board=state.board,
        device_colour=J.colour_name(state.device) if state.device else "",
        to_move=to_move,
        move_number=len(state.moves),
        level=state.level,
        lamp=phase == WAITING_FOR_PERSON,
        result=state.result,
        illegal=state.illegal,
        message=state.message,
        pending_command=pending.command.command_id if pending else "",
        placements=list(state.placements),
        placement_elapsed_s=elapsed,
        peers_down=list(state.peers_down),
        moves=list(state.moves),
        cheats_restored=state.cheats_restored,
        illegal_moves=state.illegal_moves,
        fault=state.fault,
        activity=state.activity,
        person_colour=J.colour_name(state.person) if state.device else "",
        squares=list(state.squares),
        colours=state.colours,
        placed=state.placed,
        first_square=state.first_square,
        paused_phase=state.phase if paused else "",
        press_ack=state.press_ack,
    )


# ------------------------------------------------------------------------------------------------- step
def step(state: RefereeState, event: Event) -> tuple[RefereeState, list[Action]]:
    """Apply ``event`` to ``state``: the new state and the actions to carry out, in order.

    Pure and deterministic. When the public game state changes, ``revision`` grows by one and a
    :class:`PublishState` action is among the actions.
    """
    out: list[Action] = []
    now = event.now
    if isinstance(event, Button) and _repeated_press(state, event):
        out.append(log("button press repeated: already taken", press_id=event.press.press_id))
        return state, out
    if state.paused and isinstance(event, Button | Observation | AiReply | ActuatorReport):
        # The game is frozen while a peer is down; what was missed is asked again on resume.
        out.append(log("ignored while paused", kind=type(event).__name__, peers_down=list(state.peers_down)))
        return state, out
    match event:
        case Operator():
            new = _on_operator(state, event.command, now, out)
        case Button():
            new = _on_button(state, event, out)
        case Observation():
            new = _on_observation(state, event, out)
        case AiReply():
            new = _on_ai_reply(state, event.reply, now, out)
        case ActuatorReport():
            new = _on_actuator(state, event, out)
        case PeerHeartbeat():
            new = _on_heartbeat(state, event, out)
        case Tick():
            new = _on_tick(state, now, out)
        case Restarted():
            new = _on_restarted(state, now, out)
        case Resync():
            new = _on_resync(state, event, out)
        case Checkpoint():
            try:
                restored = decode_state(event.state)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:  # never fatal: start afresh
                out.append(
                    log("journal checkpoint unreadable: starting afresh", severity="error", error=str(exc))
                )
                return initial_state(state.settings), out
            # the settings of this run win over those the checkpoint was written with
            new = _replace(restored, settings=state.settings)
            out.append(log("journal checkpoint", phase=new.phase, game=new.game_id, revision=new.revision))
            return new, out
        case _:
            raise TypeError(f"not a referee event: {event!r}")
    return _publish_if_changed(state, new, now, out, force=isinstance(event, Restarted))


def _publish_if_changed(
    old: RefereeState, new: RefereeState, now: float, out: list[Action], force: bool = False
) -> tuple[RefereeState, list[Action]]:
    if new is old:
        return new, out
    if force or game_state(old) != game_state(new):
        new = _replace(new, revision=old.revision + 1)
        out.append(PublishState(game_state(new, now)))
    return new, out


_state_encoder = msgspec.msgpack.Encoder()
_state_decoder = msgspec.msgpack.Decoder(RefereeState)


def encode_state(state: RefereeState) -> bytes:
    """``state`` as msgpack (for a journal :class:`Checkpoint`)."""
    return _state_encoder.encode(state)


def decode_state(raw: bytes) -> RefereeState:
    """The state encoded by :func:`encode_state`. :raises msgspec.DecodeError: on damaged bytes."""
    return _state_decoder.decode(raw)


def checkpoint(state: RefereeState, now: float) -> Checkpoint:
    """The event that stands for every event that led to ``state``."""
    return Checkpoint(now=now, state=encode_state(state))


def rebuild(events: Iterable[Event], state: RefereeState) -> RefereeState:
    """Fold ``events`` through :func:`step` from ``state``, dropping the actions (journal replay)."""
    for event in events:
        state, _ = step(state, event)
    return state


# --------------------------------------------------------------------------------------------- operator
def _on_operator(state: RefereeState, cmd: OperatorCommand, now: float, out: list[Action]) -> RefereeState:
    for old in state.replies:
        if old.command_id == cmd.command_id:
            out.append(log("repeated operator command answered again", command_id=cmd.command_id))
            out.append(ReplyOperator(old))
            return state
    try:
        if cmd.action == "level":
            level = _check_level(cmd.level)
            state = _replace(state, level=level)
            out.append(log("level set", level=level, command_id=cmd.command_id))
        elif cmd.action == "stop":
            state = _stop(state, out)
        elif cmd.action == "task":
            state = _start_task(state, cmd, now, out)
        else:  # the message type allows no other, but a newer sender might
            raise OperatorError(f"unknown action {cmd.action!r}: task, stop or level")
        reply = OperatorReply(command_id=cmd.command_id, ok=True, game_id=state.game_id)
    except (OperatorError, SettingsError) as exc:
        reply = OperatorReply(command_id=cmd.command_id, ok=False, error=str(exc), game_id=state.game_id)
        out.append(
            log("operator command refused", severity="warning", command_id=cmd.command_id, error=str(exc))
        )
    out.append(ReplyOperator(reply))
    return _replace(state, replies=(*state.replies, reply)[-MAX_REPLIES:])


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """A validated task: placement targets and colours, or the game's sides and opening."""

    task: int
    squares: tuple[int, ...] = ()
    colours: str = ""
    device: str = ""
    first_square: int | None = None


def validate_task(cmd: OperatorCommand, settings: Settings) -> TaskSpec:
    """Check a task command's arguments. :raises OperatorError: saying what is wrong."""
    task = cmd.task
    if task not in (1, 2, 3, 4, 5, 6):
        raise OperatorError(f"unknown task {task!r}: tasks are 1 to 6")
    if task not in (4, 6) and cmd.first is not None:
        raise OperatorError(f"--first is for tasks 4 and 6 (the device opens); task {task} does not take it")
    if task not in (2, 3) and cmd.colours:
        raise OperatorError(f"--colours is for tasks 2 and 3; task {task} does not take it")
    if task == 1:
        if cmd.squares and list(cmd.squares) != [TASK1_SQUARE]:
            raise OperatorError("task 1 places one black piece on square 5; it takes no --squares")
        return TaskSpec(1, (TASK1_SQUARE,), "b")
    if task in (2, 3):
        squares = list(cmd.squares)
        if len(squares) != TASK_SQUARE_COUNT[task]:
            raise OperatorError(
                f"task {task} needs {TASK_SQUARE_COUNT[task]} squares (e.g. --squares 1,5,9,3), "
                f"got {len(squares)}"
            )
        for sq in squares:
            _check_square(sq, "every target")
        repeated = sorted({sq for sq in squares if squares.count(sq) > 1})
        if repeated:
            raise OperatorError(f"square(s) {repeated} repeated: the {len(squares)} targets must differ")
        try:
            colours = _check_colours(cmd.colours or settings.colours, len(squares))
        except SettingsError as exc:
            raise OperatorError(str(exc)) from None
        return TaskSpec(task, tuple(squares), colours)
    if cmd.squares:
        raise OperatorError(f"task {task} is a game; --squares is for tasks 2 and 3")
    if task == 4:
        first = settings.first_square if cmd.first is None else _check_square(cmd.first, "--first")
        return TaskSpec(4, device=J.BLACK, first_square=first)
    if task == 6 and cmd.first is not None:  # a cheating game in which the device opens
        return TaskSpec(6, device=J.BLACK, first_square=_check_square(cmd.first, "--first"))
    return TaskSpec(task, device=J.WHITE)  # 5 and 6: the person plays black and opens


def _start_task(state: RefereeState, cmd: OperatorCommand, now: float, out: list[Action]) -> RefereeState:
    if state.phase not in RESTING_PHASES:
        raise OperatorError(
            f"task {state.task} is running (game {state.game_id}, {state.phase}): `sanzi stop` it first"
        )
    if state.paused:
        raise OperatorError(f"cannot start: {', '.join(state.peers_down)} not running")
    spec = validate_task(cmd, state.settings)
    counter = state.game_counter + 1
    game_id = f"g{counter}-{zlib.crc32(cmd.command_id.encode()) & 0xFFFF:04x}"
    state = _replace(
        state,
        phase=TASK_CHOSEN,
        game_counter=counter,
        game_id=game_id,
        task=spec.task,
        board=J.EMPTY_BOARD,
        device=spec.device,
        moves=(),
        squares=spec.squares,
        colours=spec.colours,
        placed=0,
        first_square=spec.first_square,
        counter=0,
        request=None,
        pending=None,
        restores=(),
        press_t=0.0,
        waiting_since=now,
        timeout_reported=False,
        task_at=now,
        illegal=NO_ILLEGAL,
        fault="",
        result=NO_RESULT,
        activity=CHECKING_BOARD,
        placements=(),
        supply_fresh=True,
        cheats_restored=0,
        illegal_moves=0,
        message="waiting for a stable view of the board",
    )
    out.append(
        log(
            "task chosen",
            task=spec.task,
            game=game_id,
            squares=list(spec.squares),
            colours=spec.colours,
            device=spec.device,
            first=spec.first_square,
        )
    )
    return state


def _stop(state: RefereeState, out: list[Action]) -> RefereeState:
    if state.phase in RESTING_PHASES:
        out.append(log("stop: nothing is running", phase=state.phase))
        return state
    out.append(
        log(
            "stopped by the operator",
            game=state.game_id,
            phase=state.phase,
            pending=state.pending.command.command_id if state.pending else "",
        )
    )
    return _replace(
        state,
        phase=GAME_OVER,
        result=STOPPED,
        request=None,
        pending=None,
        restores=(),
        activity=NO_ACTIVITY,
        message="stopped by the operator",
    )


# ------------------------------------------------------------------------------------------ observation
def _on_observation(state: RefereeState, event: Observation, out: list[Action]) -> RefereeState:
    if not wants_observation(state):
        return state
    problem = usable(event.obs)
    if problem:
        return state  # the shell forwards stable readings only; an unusable one is simply not evidence
    seen = event.obs.board
    now = event.now
    if state.phase == TASK_CHOSEN:
        return _check_start_board(state, seen, now, out)
    taken = observation_time(event)
    if state.phase == WAITING_FOR_STABLE:
        if taken <= state.press_t:
            return state  # captured before the press: says nothing about the person's move
        # The first stable frame captured after the press: its clear, agreeing window ends with it and
        # may have begun before the press (the hand had already gone), so no new window is awaited.
        out.append(log("view after the press", **_window_fields(event.obs, taken, state.press_t)))
        return _judge(state, seen, now, out)
    pending = state.pending
    assert pending is not None and pending.done_at is not None
    if taken <= pending.done_at:
        return state
    return _check_placement(state, seen, now, out)


def _check_start_board(state: RefereeState, seen: str, now: float, out: list[Action]) -> RefereeState:
    if state.device:  # a game starts on an empty board
        if seen != J.EMPTY_BOARD:
            message = f"clear the board to start the game (vision sees {seen})"
            if state.message != message:
                out.append(log("board not empty at the start of a game", severity="warning", board=seen))
            return _replace(state, message=message, fault="board-not-empty")
        state = _replace(state, fault="", message="", activity=NO_ACTIVITY)
        out.append(log("board empty: the game starts", game=state.game_id))
        if state.device == J.BLACK:
            return _device_turn(state, now, out)
        return _person_turn(state, out)
    busy = [sq for sq in state.squares if seen[sq - 1] != J.EMPTY]
    if busy:
        message = f"target square(s) {busy} are not empty: clear them"
        if state.message != message:
            out.append(log("target squares not empty", severity="warning", board=seen, busy=busy))
        return _replace(state, message=message, fault="board-not-empty")
    out.append(log("targets empty: placing", board=seen, squares=list(state.squares)))
    return _next_placement(_replace(state, board=seen, fault="", message=""), now, out)


# ------------------------------------------------------------------------------------------- placements
def _send_placement(
    state: RefereeState,
    purpose: str,
    kind: str,
    square: int,
    colour: str,
    expected: str,
    now: float,
    out: list[Action],
    from_square: int | None = None,
) -> RefereeState:
    """Issue a new placement (a new id, a fresh 15 s budget)."""
    state, command_id = _next_id(state)
    command = ActuatorCommand(
        command_id=command_id,
        kind=kind,  # type: ignore[arg-type]
        colour=colour,  # type: ignore[arg-type]
        from_square=from_square,
        to_square=square,
        issued_ns=int(now * 1e9),
        reset_supply=state.supply_fresh,
    )
    state = _replace(state, supply_fresh=False)
    pending = PendingCommand(
        command=command,
        purpose=purpose,
        square=square,
        colour=colour,
        expected=expected,
        started=now,
        sent_at=now,
    )
    out.append(
        log(
            "actuator command",
            command_id=command_id,
            kind=kind,
            square=square,
            colour=colour,
            from_square=from_square,
            purpose=purpose,
        )
    )
    out.append(SendCommand(command))
    activity = {"move": PLACING, "place": PLACING, "restore": RESTORING}[purpose]
    return _replace(state, phase=COMMAND_SENT, pending=pending, request=None, activity=activity)


def _next_placement(state: RefereeState, now: float, out: list[Action]) -> RefereeState:
    if state.placed >= len(state.squares):
        out.append(log("all placements confirmed: task done", task=state.task, game=state.game_id))
        return _replace(state, phase=GAME_OVER, result=DONE, activity=NO_ACTIVITY, message="task done")
    square = state.squares[state.placed]
    colour = _colour_of(state.colours[state.placed])
    expected = J.put(state.board, square, _piece_of(colour))
    state = _replace(state, message=f"placing a {colour} piece on square {square}")
    return _send_placement(state, "place", "place", square, colour, expected, now, out)


def _on_actuator(state: RefereeState, event: ActuatorReport, out: list[Action]) -> RefereeState:
    report = event.report
    pending = state.pending
    if state.phase != COMMAND_SENT or pending is None or report.command_id != pending.command.command_id:
        out.append(
            log(
                "actuator report for no pending command",
                severity="debug",
                command_id=report.command_id,
                status=report.status,
            )
        )
        return state
    now = event.now
    if report.status == "accepted":
        if pending.status in (SENT, QUERYING):
            return _replace(state, pending=_replace(pending, status=ACCEPTED, sent_at=now))
        return state
    if report.status == "done":
        if pending.status == DONE_STATUS:
            return state  # a repeated answer
        out.append(
            log(
                "actuator done",
                command_id=report.command_id,
                duration_s=report.duration_s,
                repeat=report.repeat,
            )
        )
        pending = _replace(pending, status=DONE_STATUS, done_at=now, observed="", reported=False)
        return _replace(state, pending=pending, activity=CONFIRMING)
    if report.status == "failed":
        if pending.status == FAILED:
            return state
        out.append(
            log("actuator failed", severity="warning", command_id=report.command_id, reason=report.reason)
        )
        pending = _replace(pending, status=FAILED, done_at=now, observed="", reported=False)
        return _replace(
            state,
            pending=pending,
            illegal=PLACEMENT_FAILED,
            fault=f"actuator failed: {report.reason or 'no reason given'}",
            activity=RECOVERING,
        )
    if report.status == "unknown":
        if pending.status in (DONE_STATUS, FAILED):
            return state  # it finished; a late "unknown" cannot undo that
        out.append(log("actuator never saw the command: sending it again", command_id=report.command_id))
        out.append(SendCommand(pending.command))
        return _replace(state, pending=_replace(pending, status=SENT, sent_at=now))
    return state


def _check_placement(state: RefereeState, seen: str, now: float, out: list[Action]) -> RefereeState:
    pending = state.pending
    assert pending is not None
    analysis = J.analyse_placement(pending.expected, seen, pending.square, _piece_of(pending.colour))
    if analysis.kind == "confirmed":
        return _confirmed(state, now, out)
    pending = _replace(pending, observed=seen)
    state = _replace(state, pending=pending)
    if pending.status == FAILED or pending.reported:
        return _recover(state, analysis, now, out)
    return state  # vision may lag behind: the confirmation timeout decides


def _recover(
    state: RefereeState, analysis: J.PlacementAnalysis, now: float, out: list[Action]
) -> RefereeState:
    pending = state.pending
    assert pending is not None
    pending = _replace(pending, reported=True)
    if analysis.kind == "unexplained" or pending.attempts >= state.settings.placement_retries:
        why = analysis.reason
        if analysis.kind != "unexplained":
            why = f"{why}; gave up after {pending.attempts} retries: fix it by hand"
        fault = f"placement on square {pending.square} not confirmed: {why}"
        if state.fault != fault:
            out.append(
                log(
                    "placement not confirmed: waiting for the board to be fixed",
                    severity="warning",
                    command_id=pending.command.command_id,
                    reason=why,
                )
            )
        return _replace(state, pending=pending, illegal=PLACEMENT_FAILED, fault=fault, activity=RECOVERING)
    state, command_id = _next_id(state)
    kind = "move" if analysis.kind == "landed-elsewhere" else "place"
    command = ActuatorCommand(
        command_id=command_id,
        kind=kind,  # type: ignore[arg-type]
        colour=pending.colour,  # type: ignore[arg-type]
        from_square=analysis.from_square,
        to_square=pending.square,
        issued_ns=int(now * 1e9),
    )
    out.append(
        log(
            "placement not confirmed: recovering",
            severity="warning",
            reason=analysis.reason,
            command_id=command_id,
            kind=kind,
            attempt=pending.attempts + 1,
        )
    )
    out.append(SendCommand(command))
    pending = _replace(
        pending,
        command=command,
        sent_at=now,
        status=SENT,
        done_at=None,
        attempts=pending.attempts + 1,
        observed="",
        reported=False,
    )
    return _replace(
        state,
        pending=pending,
        illegal=PLACEMENT_FAILED,
        fault=f"placement on square {pending.square} failed ({analysis.reason}): retry {pending.attempts}",
        activity=RECOVERING,
    )


def _confirmed(state: RefereeState, now: float, out: list[Action]) -> RefereeState:
    pending = state.pending
    assert pending is not None
    duration = round(now - pending.started, 3)
    within = duration <= state.settings.placement_budget_s
    record = PlacementRecord(
        command_id=pending.command.command_id,
        square=pending.square,
        colour=pending.colour,
        duration_s=duration,
        within_budget=within,
        kind=pending.purpose,
    )
    out.append(
        log(
            "placement confirmed by vision",
            severity="info" if within else "warning",
            command_id=record.command_id,
            square=pending.square,
            duration_s=duration,
            within_budget=within,
            retries=pending.attempts,
            purpose=pending.purpose,
        )
    )
    state = _replace(
        state,
        phase=PLACEMENT_CONFIRMED,
        pending=None,
        placements=(*state.placements, record),
        illegal=NO_ILLEGAL if state.illegal == PLACEMENT_FAILED else state.illegal,
        fault="",
        activity=NO_ACTIVITY,
    )
    if pending.purpose == "place":
        return _next_placement(_replace(state, board=pending.expected, placed=state.placed + 1), now, out)
    if pending.purpose == "move":
        state = _replace(state, board=pending.expected, moves=(*state.moves, pending.square))
        return _continue_game(state, now, out)
    # a restore: the logical board already holds the piece where it belongs
    state = _replace(state, cheats_restored=state.cheats_restored + 1)
    if state.restores:
        op, rest = state.restores[0], state.restores[1:]
        state = _replace(state, restores=rest)
        return _send_restore(state, op, now, out)
    return _continue_game(state, now, out)


def _send_restore(state: RefereeState, op: J.RestoreOp, now: float, out: list[Action]) -> RefereeState:
    where = f"from square {op.from_square}" if op.kind == "move" else "from the supply"
    state = _replace(state, message=f"putting the device's piece back on square {op.to_square} ({where})")
    return _send_placement(
        state, "restore", op.kind, op.to_square, op.colour, op.expected, now, out, from_square=op.from_square
    )


# ------------------------------------------------------------------------------------------------- game
def _continue_game(state: RefereeState, now: float, out: list[Action]) -> RefereeState:
    position = engine.Board.from_string(state.board, validate=False)
    outcome = position.outcome()
    if outcome is not None:
        if outcome.winner is None:
            result, message = DRAW, "draw"
        elif outcome.winner == state.device:
            result, message = DEVICE_WON, "the device won"
        else:
            result, message = PERSON_WON, "you won"
        out.append(
            log("game over", game=state.game_id, result=result, board=state.board, moves=list(state.moves))
        )
        return _replace(state, phase=GAME_OVER, result=result, activity=NO_ACTIVITY, message=message)
    if position.to_move() == state.device:
        return _device_turn(state, now, out)
    return _person_turn(state, out)


def _device_turn(state: RefereeState, now: float, out: list[Action]) -> RefereeState:
    out.append(log("device to move", game=state.game_id, board=state.board))
    state, request_id = _next_id(_replace(state, phase=DEVICE_TO_MOVE), "r")
    first = state.first_square if state.board == J.EMPTY_BOARD else None  # tasks 4 and 6 --first
    request = MoveRequest(
        request_id=request_id,
        board=state.board,
        to_move=state.device,  # type: ignore[arg-type]
        level=state.level,
        first_square=first,
        seed=ai_core.request_seed(state.settings.seed, state.game_counter, len(state.moves)),
    )
    out.append(RequestMove(request))
    return _replace(
        state,
        phase=MOVE_REQUESTED,
        request=PendingRequest(request, now),
        activity=THINKING,
        message="the device is thinking",
    )


def _person_turn(state: RefereeState, out: list[Action]) -> RefereeState:
    colour = J.colour_name(state.person)
    out.append(log("waiting for the person: lamp on", game=state.game_id, board=state.board))
    return _replace(
        state,
        phase=WAITING_FOR_PERSON,
        activity=NO_ACTIVITY,
        message=f"your move: place a {colour} piece, then press the button",
    )


def _on_ai_reply(state: RefereeState, reply: MoveReply, now: float, out: list[Action]) -> RefereeState:
    request = state.request
    if state.phase != MOVE_REQUESTED or request is None or reply.request_id != request.request.request_id:
        out.append(log("AI reply to no pending request", severity="debug", request_id=reply.request_id))
        return state
    board = state.board
    if reply.error or not 1 <= reply.square <= 9 or board[reply.square - 1] != J.EMPTY:
        reason = reply.error or f"square {reply.square} is not a free square of {board}"
        return _local_move(state, f"bad AI reply: {reason}", now, out)
    out.append(
        log(
            "AI move",
            request_id=reply.request_id,
            square=reply.square,
            value=reply.value,
            pv=list(reply.pv),
            nodes=reply.nodes,
            elapsed_us=reply.elapsed_us,
        )
    )
    return _device_move(state, reply.square, now, out)


def _local_move(state: RefereeState, reason: str, now: float, out: list[Action]) -> RefereeState:
    assert state.request is not None
    req = state.request.request
    try:
        choice = ai_core.choose(req.board, req.to_move, req.level, req.seed, req.first_square)
    except ai_core.BadRequestError as exc:  # the logical board itself is wrong: nothing sane to play
        out.append(log("engine cannot move", severity="error", error=str(exc)))
        return _replace(state, fault=f"engine: {exc}", request=None)
    out.append(
        log(
            "using the engine in-process",
            severity="warning",
            reason=reason,
            request_id=req.request_id,
            square=choice.number,
        )
    )
    out.append(UseLocalEngine(req.request_id, choice.number, reason))
    return _device_move(state, choice.number, now, out)


def _device_move(state: RefereeState, square: int, now: float, out: list[Action]) -> RefereeState:
    colour = J.colour_name(state.device)
    expected = J.put(state.board, square, state.device)
    state = _replace(state, message=f"the device plays square {square}")
    return _send_placement(state, "move", "place", square, colour, expected, now, out)


# -------------------------------------------------------------------------------------- person's turn
def _repeated_press(state: RefereeState, event: Button) -> bool:
    """Whether ``event`` is a press already taken (the panel announces a press until it is acked)."""
    return 0 < event.press.press_id <= state.press_ack


def _on_button(state: RefereeState, event: Button, out: list[Action]) -> RefereeState:
    press = event.press
    if press.press_id > 0:
        state = _replace(state, press_ack=press.press_id)
    pressed_at = press.press_ns / 1e9 if press.press_ns else event.now
    if state.phase == WAITING_FOR_PERSON:
        out.append(
            log(
                "button pressed: lamp off, waiting for a stable view",
                press_id=press.press_id,
                game=state.game_id,
            )
        )
        state = _replace(state, phase=BUTTON_PRESSED)
        return _replace(
            state,
            phase=WAITING_FOR_STABLE,
            press_t=pressed_at,
            waiting_since=event.now,
            timeout_reported=False,
            illegal=NO_ILLEGAL,
            activity=JUDGING,
            message="judging your move",
        )
    if state.phase == WAITING_FOR_STABLE:
        out.append(log("button pressed again: judging from this press", press_id=press.press_id))
        return _replace(state, press_t=max(state.press_t, pressed_at))
    out.append(log("button ignored: not the person's turn", phase=state.phase, press_id=press.press_id))
    return state


def _judge(state: RefereeState, seen: str, now: float, out: list[Action]) -> RefereeState:
    verdict = J.judge(state.board, seen, state.device)
    state = _replace(state, phase=JUDGED)
    if verdict.illegal:
        out.append(
            log(
                "illegal",
                severity="warning",
                kind=verdict.illegal,
                reason=verdict.reason,
                board=state.board,
                seen=seen,
            )
        )
        state = _replace(
            state,
            illegal=verdict.illegal,
            illegal_moves=state.illegal_moves + 1,
            phase=WAITING_FOR_PERSON,
            activity=NO_ACTIVITY,
            message=f"{verdict.reason}; then press the button",
        )
        return state
    out.append(log("judged", reason=verdict.reason, move=verdict.move, cheated=verdict.cheated, seen=seen))
    if verdict.move is not None:
        state = _replace(
            state, board=J.put(state.board, verdict.move, state.person), moves=(*state.moves, verdict.move)
        )
    state = _replace(state, illegal=NO_ILLEGAL, message=verdict.reason)
    if verdict.restores:
        first, rest = verdict.restores[0], verdict.restores[1:]
        return _send_restore(_replace(state, restores=rest), first, now, out)
    return _continue_game(state, now, out)


# ------------------------------------------------------------------------------------- time and peers
def _on_tick(state: RefereeState, now: float, out: list[Action]) -> RefereeState:
    state = _check_peers(state, now, out)
    if state.paused:
        return state
    s = state.settings
    if state.phase == MOVE_REQUESTED and state.request is not None:
        if now - state.request.sent_at > s.ai_timeout_s:
            return _local_move(state, f"no AI reply within {s.ai_timeout_s} s", now, out)
        return state
    if state.phase == COMMAND_SENT and state.pending is not None:
        pending = state.pending
        if not pending.over_budget and now - pending.started > s.placement_budget_s:
            out.append(
                log(
                    "placement over its budget",
                    severity="warning",
                    command_id=pending.command.command_id,
                    square=pending.square,
                    budget_s=s.placement_budget_s,
                    status=pending.status,
                )
            )
            pending = _replace(pending, over_budget=True)
            state = _replace(state, pending=pending)
        if pending.status in (SENT, ACCEPTED, QUERYING) and now - pending.sent_at > min(
            s.requery_s, s.command_timeout_s
        ):
            # A report lost on the way (a restart of the bus or the actuator) is asked for again; the
            # actuator answers from its record and carries out nothing twice.
            out.append(
                log(
                    "no actuator report: asking about the command",
                    severity="info" if now - pending.sent_at <= s.command_timeout_s else "warning",
                    command_id=pending.command.command_id,
                    status=pending.status,
                )
            )
            out.append(QueryCommand(_query(pending.command, now)))
            return _replace(state, pending=_replace(pending, status=QUERYING, sent_at=now))
        if (
            pending.status == DONE_STATUS
            and not pending.reported
            and pending.done_at is not None
            and now - pending.done_at > s.confirm_timeout_s
        ):
            if pending.observed:
                analysis = J.analyse_placement(
                    pending.expected, pending.observed, pending.square, _piece_of(pending.colour)
                )
                return _recover(state, analysis, now, out)
            out.append(
                log(
                    "no stable view of the placement",
                    severity="warning",
                    square=pending.square,
                    waited_s=s.confirm_timeout_s,
                )
            )
            return _replace(
                state,
                pending=_replace(pending, reported=True),
                illegal=PLACEMENT_FAILED,
                fault=f"vision has not confirmed square {pending.square} for {s.confirm_timeout_s:g} s",
            )
        return state
    if (
        state.phase == WAITING_FOR_STABLE
        and not state.timeout_reported
        and now - state.waiting_since > s.stable_timeout_s
    ):
        out.append(log("no stable view after the button", severity="warning", waited_s=s.stable_timeout_s))
        return _replace(
            state,
            timeout_reported=True,
            illegal=STABLE_TIMEOUT,
            message=f"no clear view of the board for {s.stable_timeout_s:g} s: take your hand away",
        )
    return state


def _query(command: ActuatorCommand, now: float) -> ActuatorCommand:
    return ActuatorCommand(command_id=command.command_id, kind="query", issued_ns=int(now * 1e9))


def _check_peers(state: RefereeState, now: float, out: list[Action]) -> RefereeState:
    timeout = state.settings.peer_timeout_s
    silent = [p for p, t in state.last_seen if now - t > timeout and p not in state.peers_down]
    if not silent:
        return state
    down = tuple(sorted((*state.peers_down, *silent)))
    out.append(
        log(
            "peer silent: the game pauses",
            severity="warning",
            peers=silent,
            peers_down=list(down),
            phase=state.phase,
        )
    )
    return _replace(state, peers_down=down)


#: peers whose restart loses work the referee waits for: a command in flight, a move being searched,
#: or (the bus) a message on its way.
RESTART_WATCHED: Final = ("actuator", "ai", "bus")


def watches_restarts(state: RefereeState, heartbeat: Heartbeat) -> bool:
    """Whether a heartbeat of a peer that is not required still matters: it may tell of a restart."""
    return (
        heartbeat.process in RESTART_WATCHED and dict(state.peer_pids).get(heartbeat.process) != heartbeat.pid
    )


def _on_heartbeat(state: RefereeState, event: PeerHeartbeat, out: list[Action]) -> RefereeState:
    name = event.process
    if event.pid:
        pids = dict(state.peer_pids)
        before = pids.get(name)
        if before != event.pid:
            state = _replace(state, peer_pids=tuple(sorted({**pids, name: event.pid}.items())))
            if before is not None and name in RESTART_WATCHED and not state.paused:
                # A peer restarted faster than the liveness timeout: what it was doing is lost or
                # finished; ask now rather than after the command timeout.
                waiting_on = (
                    (name == "actuator" and state.phase == COMMAND_SENT)
                    or (name == "ai" and state.phase == MOVE_REQUESTED)
                    or (name == "bus" and state.phase in (COMMAND_SENT, MOVE_REQUESTED))
                )
                if waiting_on:
                    out.append(log("peer restarted: asking again", peer=name, pid=event.pid))
                    state = _reissue(state, event.now, out)
    if name not in state.settings.required_peers:
        return state
    seen = tuple(sorted({**dict(state.last_seen), name: event.now}.items()))
    state = _replace(state, last_seen=seen)
    if name not in state.peers_down:
        return state
    down = tuple(p for p in state.peers_down if p != name)
    out.append(log("peer back", peer=name, peers_down=list(down)))
    state = _replace(state, peers_down=down)
    if not down:
        out.append(log("all peers back: the game resumes", phase=state.phase))
        state = _reissue(state, event.now, out)
    return state


def _on_restarted(state: RefereeState, now: float, out: list[Action]) -> RefereeState:
    seen = tuple(sorted((p, now) for p in state.settings.required_peers))
    state = _replace(state, last_seen=seen)
    out.append(
        log(
            "referee started",
            phase=state.phase,
            game=state.game_id,
            revision=state.revision,
            pending=state.pending.command.command_id if state.pending else "",
        )
    )
    if state.paused:
        return state  # the resume re-issues what is pending
    return _reissue(state, now, out)


def _on_resync(state: RefereeState, event: Resync, out: list[Action]) -> RefereeState:
    """Messages may have been lost (a sequence gap, a publisher or the bus restarted): ask again about
    a pending command or move request, unless it was asked within a quarter of ``requery_s`` (a burst
    of gaps after one restart asks once)."""
    if state.paused:
        return state
    pending, request = state.pending, state.request
    if state.phase == COMMAND_SENT and pending is not None and pending.status in (SENT, ACCEPTED, QUERYING):
        if event.now - pending.sent_at < state.settings.requery_s / 4:
            return state
    elif state.phase == MOVE_REQUESTED and request is not None:
        if event.now - request.sent_at < state.settings.requery_s / 4:
            return state
    else:
        return state
    out.append(log("messages may have been lost: asking again", reason=event.reason))
    return _reissue(state, event.now, out)


def _reissue(state: RefereeState, now: float, out: list[Action]) -> RefereeState:
    """After a restart or a pause: ask again for what is pending, restart the timers."""
    if state.phase == MOVE_REQUESTED and state.request is not None:
        out.append(log("sending the move request again", request_id=state.request.request.request_id))
        out.append(RequestMove(state.request.request))
        return _replace(state, request=_replace(state.request, sent_at=now))
    if state.phase == COMMAND_SENT and state.pending is not None:
        pending = state.pending
        if pending.status in (SENT, ACCEPTED, QUERYING):
            out.append(
                log("asking the actuator about the pending command", command_id=pending.command.command_id)
            )
            out.append(QueryCommand(_query(pending.command, now)))
            return _replace(state, pending=_replace(pending, status=QUERYING, sent_at=now))
        if not pending.reported:
            return _replace(state, pending=_replace(pending, done_at=max(pending.done_at or now, now)))
        return state
    if state.phase == WAITING_FOR_STABLE:
        return _replace(state, waiting_since=now)
    return state
