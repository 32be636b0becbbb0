"""Random event streams (seeded) never break the referee: no exception, the invariants hold, and the
journal of what mattered rebuilds the same state."""

from __future__ import annotations

import random

import pytest

from messages import ActuatorEvent, BoardObservation, ButtonPress, MoveReply, OperatorCommand
from messages.game import PHASES
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
    Restarted,
    Resync,
    SendCommand,
    Tick,
)


def _random_event(rng: random.Random, state: M.RefereeState, now: float) -> Event:
    kind = rng.choices(range(9), weights=[4, 12, 20, 15, 10, 15, 14, 1, 9])[0]
    pending = state.pending.command.command_id if state.pending else "x-1"
    request = state.request.request.request_id if state.request else "x-r1"
    if kind == 0:
        valid = [
            OperatorCommand(command_id=f"v{rng.randrange(10**6)}", action="task", task=t, squares=sq)
            for t, sq in [(1, []), (2, [1, 2, 3, 4]), (4, []), (5, []), (6, [])]
        ]
        cmd = rng.choice(
            [
                *valid,
                OperatorCommand(
                    command_id=f"c{rng.randrange(20)}",
                    action="task",
                    task=rng.randrange(0, 8),
                    squares=rng.sample(range(0, 11), rng.randrange(0, 5)),
                    first=rng.choice([None, rng.randrange(0, 11)]),
                ),
                OperatorCommand(command_id=f"c{rng.randrange(20)}", action="stop"),
                OperatorCommand(
                    command_id=f"c{rng.randrange(20)}",
                    action="level",
                    level=rng.choice(["easy", "hard", "x", None]),
                ),
            ]
        )
        return Operator(now=now, command=cmd)
    if kind == 1:
        # mostly a new press, sometimes one announced again (an id already taken) or one without an id
        press_id = rng.choice([state.press_ack + 1, state.press_ack + 1, state.press_ack, 0])
        press = ButtonPress(press_id=press_id, press_ns=rng.choice([0, int(now * 1e9)]))
        return Button(now=now, press=press)
    if kind in (2, 3):
        board = state.pending.expected if state.pending and rng.random() < 0.5 else state.board
        cells = list(board)
        for _ in range(rng.randrange(3)):
            cells[rng.randrange(9)] = rng.choice("XO.?")
        obs = BoardObservation(
            frame_id=1,
            found=rng.random() < 0.9,
            board="".join(cells),
            stable=rng.random() < 0.8,
            occluded=rng.random() < 0.1,
            capture_ns=int((now - rng.random()) * 1e9),
        )
        return Observation(now=now, obs=obs)
    if kind == 4:
        reply = MoveReply(
            request_id=rng.choice([request, "other"]),
            square=rng.randrange(0, 11),
            error=rng.choice(["", "", "boom"]),
        )
        return AiReply(now=now, reply=reply)
    if kind == 5:
        status = rng.choice(["accepted", "done", "done", "failed", "unknown"])
        return ActuatorReport(
            now=now, report=ActuatorEvent(command_id=rng.choice([pending, "zz"]), status=status)
        )
    if kind == 6:
        return PeerHeartbeat(now=now, process=rng.choice(["vision", "vision", "vision", "ai"]))
    if kind == 7:
        return Restarted(now=now) if rng.random() < 0.5 else Resync(now=now, reason="fuzz")
    return Tick(now=now)


@pytest.mark.parametrize("seed", range(6))
def test_random_streams_keep_the_invariants(seed: int) -> None:
    rng = random.Random(seed)
    settings = M.Settings(required_peers=("vision",))
    state = M.initial_state(settings)
    start = M.initial_state(settings)
    journal: list[Event] = []
    now = 10.0
    sent: set[str] = set()
    phases: set[str] = set()
    for _ in range(3000):
        now += rng.choice([0.01, 0.1, 0.2, 0.5, 4.0])
        event = _random_event(rng, state, now)
        new, actions = M.step(state, event)
        if new != state or any(not isinstance(a, Log) for a in actions):
            journal.append(event)
        gs = M.game_state(new, now)
        assert gs.lamp == (gs.phase == M.WAITING_FOR_PERSON)
        assert new.revision >= state.revision
        assert gs.phase in PHASES
        assert len(gs.board) == 9 and set(gs.board) <= {J.BLACK, J.WHITE, J.EMPTY}
        published = [a for a in actions if isinstance(a, PublishState)]
        assert len(published) <= 1 and (not published or published[0].state.revision == new.revision)
        for a in actions:
            if isinstance(a, SendCommand):
                # a command id is sent again only as itself (a re-send after "unknown")
                sent.add(a.command.command_id)
        if new.pending is not None:
            assert new.phase == M.COMMAND_SENT
        phases.add(new.phase)
        state = new
    assert M.rebuild(journal, start) == state
    # the stream really went places
    reached = {M.TASK_CHOSEN, M.COMMAND_SENT, M.GAME_OVER, M.MOVE_REQUESTED, M.WAITING_FOR_PERSON}
    assert reached <= phases, phases
