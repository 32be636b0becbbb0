"""A compact, synchronous driver of the pure referee for tests: one call per thing that happens."""

from __future__ import annotations

from typing import Any, TypeVar

from messages import ActuatorEvent, BoardObservation, ButtonPress, MoveReply, OperatorCommand
from services.ai import core as ai_core
from services.referee import machine as M
from services.referee.events import (
    Action,
    ActuatorReport,
    AiReply,
    Button,
    Event,
    Log,
    Observation,
    Operator,
    PublishState,
    ReplyOperator,
    RequestMove,
    SendCommand,
    Tick,
)

A = TypeVar("A")


def observation(board: str, capture_s: float, **kw: Any) -> BoardObservation:
    fields: dict[str, Any] = {"found": True, "stable": True, "occluded": False}
    fields.update(kw)
    return BoardObservation(frame_id=0, board=board, capture_ns=int(capture_s * 1e9), **fields)


class Drive:
    """Holds the state and the last step's actions; ``t`` moves forward a little with every event."""

    def __init__(self, settings: M.Settings | None = None, state: M.RefereeState | None = None) -> None:
        self.state = state or M.initial_state(settings or M.Settings(required_peers=()))
        self.t = 100.0
        self.actions: list[Action] = []
        self.events: list[Event] = []
        self._ids = 0
        self._presses = 0

    # ------------------------------------------------------------------------------------------ basics
    def now(self, dt: float = 0.1) -> float:
        self.t = round(self.t + dt, 6)
        return self.t

    def feed(self, event: Event) -> list[Action]:
        self.events.append(event)
        self.state, self.actions = M.step(self.state, event)
        return self.actions

    def find(self, kind: type[A]) -> A:
        found = [a for a in self.actions if isinstance(a, kind)]
        assert found, f"no {kind.__name__} in {self.actions}"
        return found[-1]

    def has(self, kind: type) -> bool:
        return any(isinstance(a, kind) for a in self.actions)

    def logs(self) -> list[str]:
        return [a.reason for a in self.actions if isinstance(a, Log)]

    @property
    def phase(self) -> str:
        return self.state.phase

    @property
    def public(self) -> Any:
        return M.game_state(self.state, self.t)

    # --------------------------------------------------------------------------------------- operator
    def command(self, command_id: str | None = None, **kw: Any) -> Any:
        self._ids += 1
        cmd = OperatorCommand(command_id=command_id or f"cmd-{self._ids}", **kw)
        self.feed(Operator(now=self.now(), command=cmd))
        return self.find(ReplyOperator).reply

    def task(self, task: int, board: str = M.J.EMPTY_BOARD, **kw: Any) -> Any:
        reply = self.command(action="task", task=task, **kw)
        assert reply.ok, reply.error
        self.observe(board)
        return reply

    # ------------------------------------------------------------------------------------------ world
    def observe(self, board: str, after: float = 0.05, **kw: Any) -> list[Action]:
        now = self.now()
        return self.feed(Observation(now=now, obs=observation(board, now - 0.1 + after, **kw)))

    def press(self, press_ns: int | None = None) -> list[Action]:
        now = self.now()
        ns = int(now * 1e9) if press_ns is None else press_ns
        self._presses += 1
        return self.feed(Button(now=now, press=ButtonPress(press_id=self._presses, press_ns=ns)))

    def tick(self, dt: float) -> list[Action]:
        return self.feed(Tick(now=self.now(dt)))

    def ai(self, reply: MoveReply | None = None) -> list[Action]:
        request = self.find(RequestMove).request
        return self.feed(AiReply(now=self.now(), reply=reply or ai_core.answer(request)))

    def report(self, status: str = "done", command_id: str | None = None, **kw: Any) -> list[Action]:
        cid = command_id or self.state.pending.command.command_id  # type: ignore[union-attr]
        event = ActuatorEvent(command_id=cid, status=status, **kw)  # type: ignore[arg-type]
        return self.feed(ActuatorReport(now=self.now(), report=event))

    def complete_placement(self) -> None:
        """The actuator finishes the pending command and vision sees the expected board."""
        assert self.phase == M.COMMAND_SENT, self.phase
        expected = self.state.pending.expected  # type: ignore[union-attr]
        self.report("accepted")
        self.report("done")
        self.observe(expected)

    def device_turn(self) -> int:
        """The AI answers, the actuator places, vision confirms. Returns the device's square."""
        assert self.phase == M.MOVE_REQUESTED, self.phase
        self.ai()
        square = self.find(SendCommand).command.to_square
        self.complete_placement()
        return square  # type: ignore[return-value]

    def person_move(self, square: int) -> None:
        """The person plays ``square``, presses the button, vision sees the new board."""
        assert self.phase == M.WAITING_FOR_PERSON, self.phase
        self.press()
        self.observe(M.J.put(self.state.board, square, self.state.person))

    def published(self) -> list[Any]:
        return [a.state for a in self.actions if isinstance(a, PublishState)]
