"""A small discrete-event world that drives the pure referee like the real stack would.

It plays the parts of the other processes, reacting to the referee's actions with events at later times:

- the AI answers move requests with :func:`services.ai.core.answer` (or stays silent);
- the actuator carries out each command id once (faults can be planned per command: the piece drops off
  the board, lands on another square, or the command fails), reports accepted/done, answers queries;
- vision reports a stable observation of the physical board a little after every change, and
  periodically while the referee wants one (as the shell forwards them);
- a scripted person acts when the lamp comes on: moves, presses the button, misbehaves on cue;
- a timer ticks; the referee can be crashed and restarted from its journal at any journaled event.

Messages to the referee that would arrive while it is down are lost, as they are on a PUB/SUB bus; the
physical world goes on (a command in flight still completes).
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import engine
from messages import (
    ActuatorEvent,
    BoardObservation,
    ButtonPress,
    GameState,
    OperatorCommand,
)
from messages import game as G
from services.ai import core as ai_core
from services.referee import judge as J
from services.referee import machine as M
from services.referee.events import (
    ActuatorReport,
    AiReply,
    Button,
    Event,
    Log,
    Observation,
    Operator,
    PeerHeartbeat,
    PublishState,
    QueryCommand,
    ReplyOperator,
    RequestMove,
    Restarted,
    SendCommand,
    Tick,
    UseLocalEngine,
)

#: a person's turn: gets the world, edits ``world.physical``, returns whether to press the button.
Person = Callable[["World"], bool]


def observation(board: str, capture_s: float, frame_id: int = 0, **kw: Any) -> BoardObservation:
    fields: dict[str, Any] = {"found": True, "stable": True, "occluded": False}
    fields.update(kw)
    return BoardObservation(frame_id=frame_id, board=board, capture_ns=int(capture_s * 1e9), **fields)


def perfect_person(seed: int = 7) -> Person:
    """Plays the engine's perfect move for the person's side."""

    def act(world: World) -> bool:
        board = world.state.board
        choice = engine.choose_move(engine.Board(board), "perfect", random.Random(seed + len(board)))
        world.place(choice.number, world.state.person)
        return True

    return act


def first_free_person() -> Person:
    """Plays the first free square (weak, ends games fast)."""

    def act(world: World) -> bool:
        board = world.state.board
        world.place(board.index(J.EMPTY) + 1, world.state.person)
        return True

    return act


def correct(world: World) -> bool:
    """After an illegal turn: put the board back as the referee knows it, then play the first free square."""
    world.physical = world.state.board
    return first_free_person()(world)


def cheat_move(world: World) -> bool:
    """Move the device's first piece to the last free square, then play the first free square."""
    board, device = world.state.board, world.state.device
    source = J.squares_where(board, device)[0]
    target = J.squares_where(board, J.EMPTY)[-1]
    world.physical = J.put(J.put(world.physical, source, J.EMPTY), target, device)
    world.place(J.squares_where(world.physical, J.EMPTY)[0], world.state.person)
    return True


def cheat_remove(world: World) -> bool:
    """Take the device's last piece off the board (and do not move)."""
    board, device = world.state.board, world.state.device
    world.physical = J.put(world.physical, J.squares_where(board, device)[-1], J.EMPTY)
    return True


def two_pieces(world: World) -> bool:
    free = J.squares_where(world.physical, J.EMPTY)
    world.place(free[0], world.state.person)
    world.place(free[1], world.state.person)
    return True


def scripted(*turns: Callable[[World], bool], then: Person | None = None) -> Person:
    """Plays ``turns`` in order (one per lamp), then ``then`` (default: first free square)."""
    queue = list(turns)
    rest = then or first_free_person()

    def act(world: World) -> bool:
        if world.state.illegal and world.state.illegal != G.STABLE_TIMEOUT:
            return correct(world)
        return queue.pop(0)(world) if queue else rest(world)

    return act


@dataclass
class World:
    settings: M.Settings = field(default_factory=lambda: M.Settings(required_peers=()))
    person: Person = field(default_factory=first_free_person)
    #: per command id (in issue order, 1-based over the whole run): "drop", "elsewhere:N", "fail"
    faults: dict[int, str] = field(default_factory=dict)
    ai_alive: bool = True
    tick_s: float = 0.5
    obs_delay_s: float = 0.3
    move_s: float = 2.0
    now: float = 100.0

    def __post_init__(self) -> None:
        self.state = M.initial_state(self.settings)
        self.physical = J.EMPTY_BOARD
        self.journal: list[Event] = []
        self.executed: dict[str, str] = {}
        self.placed_ids: list[str] = []
        self.commands_seen = 0
        self.replies: list[Any] = []
        self.published: list[GameState] = []
        self.logs: list[Log] = []
        self.local_moves: list[UseLocalEngine] = []
        self._queue: list[tuple[float, int, str, Any]] = []
        self._seq = itertools.count()
        self._acting_for = -1
        self._press = itertools.count(1)
        self.down_until = -1.0
        self.steps = 0
        #: crash the referee when the journal reaches this many records ("before" or "after" its actions)
        self.crash_record: int | None = None
        self.crash_mode = "after"
        self.crashes = 0
        self._crashed_state: M.RefereeState | None = None
        self.at(self.now + self.tick_s, "tick", None)

    # ----------------------------------------------------------------------------------- scheduling
    def at(self, t: float, kind: str, payload: Any) -> None:
        heapq.heappush(self._queue, (t, next(self._seq), kind, payload))

    def feed(self, event: Event) -> list[Any]:
        """Step the referee with ``event`` as the shell does: journal it if it mattered, act."""
        old = self.state
        new, actions = M.step(old, event)
        self.steps += 1
        journaled = new != old or any(not isinstance(a, Log) for a in actions)
        if journaled:
            self.journal.append(event)
        self.state = new
        if journaled and self.crash_record == len(self.journal):
            self.crash_record = None
            if self.crash_mode == "before":  # fsync'ed, then killed before acting on it
                actions = [a for a in actions if isinstance(a, Log)]
            self.carry_out(actions)
            self.crash()
            return actions
        self.carry_out(actions)
        return actions

    def carry_out(self, actions: list[Any]) -> None:
        for action in actions:
            match action:
                case Log():
                    self.logs.append(action)
                case PublishState():
                    self.published.append(action.state)
                    self._maybe_person(action.state)
                case ReplyOperator():
                    self.replies.append(action.reply)
                case RequestMove():
                    if self.ai_alive:
                        reply = ai_core.answer(action.request)
                        self.at(self.now + 0.05, "msg", AiReply(now=0, reply=reply))
                case UseLocalEngine():
                    self.local_moves.append(action)
                case SendCommand():
                    self._actuate(action.command)
                case QueryCommand():
                    status = self.executed.get(action.command.command_id, "unknown")
                    report = ActuatorEvent(command_id=action.command.command_id, status=status, repeat=True)
                    self.at(self.now + 0.05, "msg", ActuatorReport(now=0, report=report))

    def _actuate(self, cmd: Any) -> None:
        if cmd.command_id in self.executed:  # carried out at most once: answer with the record
            status = self.executed[cmd.command_id]
            report = ActuatorEvent(command_id=cmd.command_id, status=status, repeat=True)
            self.at(self.now + 0.05, "msg", ActuatorReport(now=0, report=report))
            return
        self.commands_seen += 1
        fault = self.faults.get(self.commands_seen, "")
        self.executed[cmd.command_id] = "accepted"
        self.at(
            self.now + 0.05,
            "msg",
            ActuatorReport(now=0, report=ActuatorEvent(command_id=cmd.command_id, status="accepted")),
        )
        self.at(self.now + self.move_s, "actuate", (cmd, fault))

    def _finish(self, cmd: Any, fault: str) -> None:
        piece = J.BLACK if cmd.colour == "black" else J.WHITE
        if cmd.kind == "move" and cmd.from_square is not None:
            assert self.physical[cmd.from_square - 1] == piece, (cmd, self.physical)
            self.physical = J.put(self.physical, cmd.from_square, J.EMPTY)
        status = "done"
        if fault == "drop":
            pass  # the piece fell off the board
        elif fault.startswith("elsewhere:"):
            self.physical = J.put(self.physical, int(fault.split(":")[1]), piece)
        elif fault == "fail":
            status = "failed"
            if cmd.kind == "move" and cmd.from_square is not None:
                self.physical = J.put(self.physical, cmd.from_square, piece)  # never picked up
        else:
            assert self.physical[cmd.to_square - 1] == J.EMPTY, (cmd, self.physical)
            self.physical = J.put(self.physical, cmd.to_square, piece)
        self.placed_ids.append(cmd.command_id)
        self.executed[cmd.command_id] = status
        self.at(
            self.now,
            "msg",
            ActuatorReport(
                now=0, report=ActuatorEvent(command_id=cmd.command_id, status=status, duration_s=self.move_s)
            ),
        )
        self.changed()

    def changed(self) -> None:
        """The physical board changed: vision reports it once it is stable."""
        self.at(self.now + self.obs_delay_s, "vision", None)

    def place(self, square: int, piece: str) -> None:
        assert self.physical[square - 1] == J.EMPTY, (square, self.physical)
        self.physical = J.put(self.physical, square, piece)

    def _maybe_person(self, gs: GameState) -> None:
        if gs.phase != M.WAITING_FOR_PERSON or gs.revision == self._acting_for:
            return
        self._acting_for = gs.revision
        self.at(self.now + 1.0, "person", gs.revision)

    # --------------------------------------------------------------------------------------- running
    def operator(self, command: OperatorCommand) -> list[Any]:
        return self.feed(Operator(now=self.now, command=command))

    def start(self, task: int, **kw: Any) -> None:
        self.operator(
            OperatorCommand(command_id=f"op-{task}-{len(self.replies)}", action="task", task=task, **kw)
        )
        # (killed before answering, the referee still took the task: the journal holds it; the operator's
        # retry with the same id would be answered from the journaled reply)
        assert self.crashes or self.replies[-1].ok, self.replies
        self.changed()

    def run(self, until: Callable[[World], bool] | None = None, limit_s: float = 600.0) -> None:
        """Run until the game is over (or ``until``), at most ``limit_s`` of simulated time."""
        until = until or (lambda w: w.state.phase == M.GAME_OVER and w.now >= w.down_until)
        end = self.now + limit_s
        while not until(self):
            t, _, kind, payload = heapq.heappop(self._queue)
            assert t <= end, f"no end after {limit_s} s: {self.state.phase} {self.state.message}"
            self.now = max(self.now, t)
            self._dispatch(kind, payload)

    def _dispatch(self, kind: str, payload: Any) -> None:
        up = self.now >= self.down_until
        if kind == "tick":
            self.at(self.now + self.tick_s, "tick", None)
            if up:
                self.feed(Tick(now=self.now))
            if up and M.wants_observation(self.state):
                self._observe()
        elif kind == "vision":
            if up and M.wants_observation(self.state):
                self._observe()
        elif kind == "msg":
            if up:
                self.feed(type(payload)(**{**_fields(payload), "now": self.now}))
        elif kind == "actuate":
            self._finish(*payload)
        elif kind == "person":
            mine = up and self.state.phase == M.WAITING_FOR_PERSON and self.state.revision == payload
            if mine and self.person(self):
                self.changed()
                press_t = self.now + 0.1
                self.at(
                    press_t,
                    "msg",
                    Button(now=0, press=ButtonPress(press_id=next(self._press), press_ns=int(press_t * 1e9))),
                )
        elif kind == "boot":
            self.boot()
        elif kind == "beat" and up:
            self.feed(PeerHeartbeat(now=self.now, process=payload))

    def _observe(self) -> None:
        self.feed(Observation(now=self.now, obs=observation(self.physical, self.now - 0.01)))

    def crash(self, downtime_s: float = 1.5) -> None:
        """The referee dies now; it boots again from its journal after ``downtime_s``."""
        self.crashes += 1
        self._crashed_state = self.state
        self.down_until = self.now + downtime_s
        self.at(self.down_until, "boot", None)

    def boot(self) -> None:
        state = M.rebuild(self.journal, M.initial_state(self.settings))
        assert state == self._crashed_state, "the journal did not rebuild the state the referee had"
        self.state = state
        self.feed(Restarted(now=self.now))


def _fields(struct: Any) -> dict[str, Any]:
    return {f: getattr(struct, f) for f in struct.__struct_fields__}
