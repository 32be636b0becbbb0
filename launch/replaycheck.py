"""Lockstep replay of the referee, as openpilot's process replay does: a recording's inputs are fed to a
fresh referee state machine in recorded order, with no clock and no sockets, and its outputs are diffed
against what the recorded referee published.

The shell's part is done as the shell does it, with the shell's own functions (``to_event``, ``slim``,
``views_after_press`` of :mod:`services.referee.service`): a message becomes an event (or nothing) by
the machine's state; the last stable views are held and fed after a button press. Time is the
recorder's receive time of each input (the referee and the recorder share CLOCK_MONOTONIC, so capture
and press times inside the messages stay consistent with it); the shell's timer becomes :class:`Tick`
events every ``referee.tick_period_s`` of recorded time, and one :class:`Restarted` starts the replay
at the first input.

Compared, each with repeats removed (how often something is re-sent or re-published is timing):

- **commands**: actuator commands (id, kind, colour, squares; not the queries), move requests (id,
  board, side, first square) and operator replies (id, ok, error);
- **states**: the sequence of game states (game id, phase, board, moves, result, illegal, lamp, activity);
- **journal**: the referee's decisions with their reasons (the machine's log actions at the log level
  and above) against its log lines in the recording's ``/log`` channel (``sanzi record`` without
  ``--no-logs``); skipped when the recording has none. Only reasons the replayed machine gives are looked
  for among the recorded lines, which also hold what the shell logs; the replay's own start ("referee
  started") is left out, as the recorded referee started before the recording.

The fresh machine starts idle, so the recording must begin before the task it checks was chosen.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import messages
from messages import ActuatorCommand, BoardObservation, GameState, MoveRequest, OperatorReply
from services.common.recording import Recording
from services.common.viewer import LOG_LEVELS, LOG_TOPIC
from services.referee import machine as M
from services.referee.events import (
    Action,
    Button,
    Event,
    Log,
    Observation,
    PublishState,
    QueryCommand,
    ReplyOperator,
    RequestMove,
    Restarted,
    SendCommand,
    Tick,
)
from services.referee.inputs import HELD_VIEWS, slim, to_event, views_after_press
from services.referee.inputs import TOPICS as REFEREE_INPUTS

#: the process whose outputs are compared.
REFEREE: Final = "referee"
#: the topics the referee publishes, whose recorded messages are the reference.
OUTPUTS: Final = ("actuator.command", "ai.request", "operator.reply", "referee.state")

Item = tuple[Any, ...]


def command_item(message: Any) -> Item | None:
    """The decision in a published message (ids and contents, no times); None for what is timing."""
    match message:
        case ActuatorCommand(kind="query"):
            return None  # how often the referee asks depends on timing, not on its decisions
        case ActuatorCommand():
            c = message
            return ("command", c.command_id, c.kind, c.colour, c.from_square, c.to_square)
        case MoveRequest():
            return ("request", message.request_id, message.board, message.to_move, message.first_square)
        case OperatorReply():
            return ("reply", message.command_id, message.ok, message.error)
    return None


def state_item(state: GameState) -> Item:
    """What a game state says about the game (not its revision, times or durations)."""
    return (
        state.game_id,
        state.phase,
        state.board,
        tuple(state.moves),
        state.result,
        state.illegal,
        state.lamp,
        state.activity,
    )


@dataclass
class Stream:
    """One compared output: what the recording holds and what the replay gave, repeats removed."""

    name: str
    recorded: list[Item] = field(default_factory=list)
    replayed: list[Item] = field(default_factory=list)
    #: False when the recording holds nothing to compare against.
    checked: bool = True

    @property
    def same(self) -> bool:
        return not self.checked or self.recorded == self.replayed

    def first_difference(self) -> int | None:
        """The index of the first item that differs (or that one side lacks); None when the same."""
        if self.same:
            return None
        for i, (a, b) in enumerate(zip(self.recorded, self.replayed, strict=False)):
            if a != b:
                return i
        return min(len(self.recorded), len(self.replayed))


@dataclass
class CheckResult:
    streams: list[Stream]
    inputs: int
    events: int

    @property
    def same(self) -> bool:
        return all(s.same for s in self.streams)


def _dedupe(items: Iterable[Item]) -> list[Item]:
    """First occurrences, in order (a re-sent command is the same decision)."""
    seen: set[Item] = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _changes(items: Iterable[Item]) -> list[Item]:
    """Items that differ from the one before (a state re-published at 1 Hz is no change)."""
    out: list[Item] = []
    for item in items:
        if not out or out[-1] != item:
            out.append(item)
    return out


def _is_input(topic: str) -> bool:
    return any(topic.startswith(prefix) for prefix in REFEREE_INPUTS)


class Lockstep:
    """The referee's shell without a clock or sockets: feed it records in order (:meth:`feed`); it steps
    the machine and keeps every action with its time."""

    def __init__(self, settings: M.Settings, tick_s: float) -> None:
        if tick_s <= 0:
            raise ValueError(f"the tick period must be positive, not {tick_s}")
        self.state = M.initial_state(settings)
        self.tick_s = tick_s
        self.held: deque[BoardObservation] = deque(maxlen=HELD_VIEWS)
        self.actions: list[Action] = []
        self.events = 0
        #: how many of :attr:`actions` the replay's own start gave (the recorded referee started
        #: before the recording, so its start is not in it: these are not compared as decisions).
        self.start_actions = 0
        self._next_tick: float | None = None

    def _step(self, event: Event) -> None:
        self.state, actions = M.step(self.state, event)
        self.actions.extend(actions)
        self.events += 1

    def advance(self, now: float) -> None:
        """Let recorded time pass up to ``now``: the shell's timer ticks on the way."""
        if self._next_tick is None:
            self._step(Restarted(now=now))
            self.start_actions = len(self.actions)
            self._next_tick = now + self.tick_s
        while self._next_tick <= now:
            self._step(Tick(now=self._next_tick))
            self._next_tick += self.tick_s

    def feed(self, envelope: messages.Envelope, now: float) -> None:
        """One input message received at ``now`` (seconds, the recorder's monotonic clock)."""
        self.advance(now)
        msg = envelope.message
        if isinstance(msg, BoardObservation) and msg.stable:
            self.held.append(slim(msg))
        event = to_event(envelope, self.state, now, REFEREE)
        if event is None:
            return
        self._step(event)
        if isinstance(event, Button):
            for obs in views_after_press(self.held, self.state):
                if not M.wants_observation(self.state):
                    break
                self._step(Observation(now=now, obs=obs))


def check(
    recording: Recording,
    settings: M.Settings,
    tick_s: float,
    log_level: str = "info",
    on_input: Callable[[int], None] | None = None,
) -> CheckResult:
    """Replay ``recording``'s referee inputs into a fresh machine with ``settings`` and compare.

    :raises ValueError: for a tick period that is not positive."""
    shell = Lockstep(settings, tick_s)
    recorded_commands: list[Item] = []
    recorded_states: list[Item] = []
    inputs = 0
    for record in recording:
        try:
            envelope = record.envelope()
        except messages.DecodeError:
            continue  # the referee drops what it cannot decode, too
        now = record.recv_ns / 1e9
        if record.topic in OUTPUTS and envelope.header.source == REFEREE:
            if isinstance(envelope.message, GameState):
                recorded_states.append(state_item(envelope.message))
            else:
                item = command_item(envelope.message)
                if item is not None:
                    recorded_commands.append(item)
        elif _is_input(record.topic):
            shell.feed(envelope, now)
            inputs += 1
            if on_input is not None:
                on_input(inputs)
    replayed_commands: list[Item] = []
    replayed_states: list[Item] = []
    reasons: list[Item] = []
    threshold = LOG_LEVELS.get(log_level, 2)
    for i, action in enumerate(shell.actions):
        if i < shell.start_actions and isinstance(action, Log):
            continue  # the replay's start ("referee started"), not the recorded referee's
        match action:
            case SendCommand() | QueryCommand():
                item = command_item(action.command)
                if item is not None:
                    replayed_commands.append(item)
            case RequestMove():
                replayed_commands.append(command_item(action.request))  # type: ignore[arg-type]
            case ReplyOperator():
                replayed_commands.append(command_item(action.reply))  # type: ignore[arg-type]
            case PublishState():
                replayed_states.append(state_item(action.state))
            case Log() if LOG_LEVELS.get(action.severity, 0) >= threshold:
                reasons.append((action.reason,))
    commands = Stream("commands", _dedupe(recorded_commands), _dedupe(replayed_commands))
    states = Stream("states", _changes(recorded_states), _changes(replayed_states))
    if not recorded_states:
        # the periodic publication is the shell's: a recording that ends before it holds no state at all
        states.checked = False
    journal = _journal(recording, reasons)
    return CheckResult([commands, states, journal], inputs, shell.events)


def _journal(recording: Recording, reasons: list[Item]) -> Stream:
    """The decisions' reasons against the referee's recorded log lines (see the module's docstring)."""
    vocabulary = {r[0] for r in reasons}
    recorded: list[Item] = []
    lines = 0
    for _topic, _log_ns, entry in recording.viewer_messages([LOG_TOPIC]):
        if not isinstance(entry, dict) or entry.get("name") != REFEREE:
            continue
        lines += 1
        text = str(entry.get("message", ""))
        reason = next((v for v in vocabulary if text == v or text.startswith(v + " ")), None)
        if reason is not None:
            recorded.append((reason,))
    return Stream("journal", recorded, reasons, checked=lines > 0)


def render(result: CheckResult, context: int = 3) -> str:
    """The comparison for people: one line per stream, and around the first difference the items."""
    lines = [f"replayed {result.inputs} inputs ({result.events} events) into a fresh referee"]
    for s in result.streams:
        if not s.checked:
            lines.append(f"{s.name:<9} not in the recording (nothing to compare)")
            continue
        verdict = "same" if s.same else "DIFFERENT"
        lines.append(f"{s.name:<9} {verdict}: {len(s.recorded)} recorded, {len(s.replayed)} replayed")
        at = s.first_difference()
        if at is None:
            continue
        lines.append(f"          first difference at #{at}:")
        for i in range(max(0, at - context), at + context + 1):
            a = s.recorded[i] if i < len(s.recorded) else "-"
            b = s.replayed[i] if i < len(s.replayed) else "-"
            if a == "-" and b == "-":
                break
            mark = "!" if a != b else " "
            lines.append(f"        {mark} {i:>3} recorded {a}")
            lines.append(f"        {mark} {'':>3} replayed {b}")
    lines.append("same outputs" if result.same else "outputs differ")
    return "\n".join(lines)
