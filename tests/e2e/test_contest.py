"""The contest on one simulated stack: tasks 1 to 6, illegal moves of each kind, and bad input during a
game. These tests kill nothing, so they share one supervisord (starting ten processes is the slow part on
a small machine); each checks that no process restarted while it ran.

- tasks 1 to 6 end to end, each checked against the world;
- illegal moves of each kind are reported, the person corrects them, and the game goes on to a correct
  end; a removed device piece is put back;
- bad input: thousands of malformed, truncated and mutated messages on every topic, and random bytes from
  the emulated motion controller, during a game: every process stays up, the bad input is logged
  rate-limited (far fewer lines than messages), and the game ends correctly.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator

import pytest

from launch import simrun
from launch.simrun import Progress, SimOptions, SimSession, TaskPlan
from messages import FaultInjection, GameState
from services.bus.client import Publisher

from . import fuzz
from .conftest import SEED, SPEED, SimStack, short_runtime, sim_stack, table

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def shared_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimStack]:
    with sim_stack(short_runtime(tmp_path_factory, "e2e")) as sim:
        yield sim


async def test_contest_tasks_1_to_6(shared_sim: SimStack) -> None:
    restarts_before = shared_sim.restarts()
    plans = simrun.plan_tasks(SimOptions(seed=SEED, speed=SPEED), shared_sim.config)
    async with SimSession(shared_sim.config) as session:
        results = await simrun.run_plans(session, plans, Progress(sys.stderr), fail_fast=True)
    assert all(r.verdict.ok for r in results), table(results) + "\n" + shared_sim.where()
    # what each task must show, beyond the verdict
    by_task = {r.plan.task: r for r in results}
    assert by_task[1].seen.world is not None and by_task[1].seen.world.board == "....X...."
    assert by_task[3].seen.world is not None
    assert abs(by_task[3].seen.world.board_angle_deg - by_task[3].plan.board_angle_deg) < 0.5
    assert by_task[4].seen.state is not None and by_task[4].seen.state.result == "device-won"
    assert by_task[5].seen.state is not None and by_task[5].seen.state.result in ("draw", "device-won")
    assert by_task[6].seen.state is not None and by_task[6].seen.state.cheats_restored >= 1
    assert shared_sim.restarts() == restarts_before, (
        "a process restarted during the tasks " + shared_sim.where()
    )


#: In task 5 the person plays black and has up to five moves: one misbehaviour per move.
ILLEGAL_GAME = ("two-pieces:1", "wrong-colour:2", "button-without-move:3", "hand-in-view:4")
#: What the referee calls each illegal misbehaviour (GameState.illegal).
REPORTED_AS = {"two-pieces": "two-pieces", "wrong-colour": "wrong-colour", "button-without-move": "no-change"}


def _collector(seen: set[str]) -> Callable[[TaskPlan], Callable[[GameState], Awaitable[None]]]:
    def for_plan(plan: TaskPlan) -> Callable[[GameState], Awaitable[None]]:
        async def hook(state: GameState) -> None:
            if state.illegal:
                seen.add(state.illegal)

        return hook

    return for_plan


async def test_each_illegal_move_is_reported_and_the_game_continues(shared_sim: SimStack) -> None:
    (five,) = simrun.plan_tasks(SimOptions(tasks=(5,), seed=SEED + 10, speed=SPEED), shared_sim.config)
    (six,) = simrun.plan_tasks(SimOptions(tasks=(6,), seed=SEED + 11, speed=SPEED), shared_sim.config)
    plans = [
        simrun._replace(five, misbehave=ILLEGAL_GAME),
        simrun._replace(six, misbehave=("remove-device-piece",)),
    ]
    illegal: set[str] = set()
    async with SimSession(shared_sim.config) as session:
        results = await simrun.run_plans(
            session, plans, Progress(sys.stderr), _collector(illegal), fail_fast=True
        )
    assert all(r.verdict.ok for r in results), table(results) + shared_sim.where()
    assert set(REPORTED_AS.values()) <= illegal, f"reported: {illegal} {shared_sim.where()}"
    game, cheat = results
    assert game.seen.state is not None and game.seen.state.illegal_moves >= len(REPORTED_AS)
    assert cheat.seen.state is not None and cheat.seen.state.cheats_restored >= 1


MESSAGES = 4000
#: Messages per burst, and bursts spread over the game so that the bad input meets every phase.
BURST = 100
#: Garbage from the emulated controller: bursts of random bytes on the serial line.
GARBAGE_BURSTS = 3
#: Each subscriber logs one line per reason per 5 s; this many lines per 100 bad messages is plenty.
MAX_LOG_LINES_PER_100 = 10


async def test_bad_input_during_a_game(shared_sim: SimStack) -> None:
    before = shared_sim.restarts()
    (plan,) = simrun.plan_tasks(SimOptions(tasks=(5,), seed=SEED + 20, speed=SPEED), shared_sim.config)
    bad = list(fuzz.malformed(MESSAGES, SEED))
    sent: Counter[str] = Counter()
    done = asyncio.Event()

    async with SimSession(shared_sim.config) as session:
        fuzzer = Publisher(session.ctx, shared_sim.config.bus, "fuzz")

        async def flood() -> None:
            try:
                for i in range(0, len(bad), BURST):
                    for kind, channel, frames in bad[i : i + BURST]:
                        await fuzzer.publish_raw(frames, channel)
                        sent[kind] += 1
                    if (i // BURST) % (len(bad) // BURST // GARBAGE_BURSTS) == 0:
                        await session.publish_confirmed("sim.fault", FaultInjection(kind="garbage", count=1))
                    # let the game make progress between bursts; this paces, it does not synchronise
                    await asyncio.sleep(0.05)
            finally:
                done.set()

        task: asyncio.Task[None] | None = None

        async def start_flood(state: GameState) -> None:
            nonlocal task
            if task is None:
                task = asyncio.create_task(flood())

        try:
            result = await simrun.run_task(session, plan, Progress(sys.stderr), start_flood)
            assert task is not None, "the game never started"
            await asyncio.wait_for(done.wait(), timeout=60)
            await task
        finally:
            fuzzer.close()

    assert sum(sent.values()) == MESSAGES
    assert result.verdict.ok, table([result]) + shared_sim.where()
    assert shared_sim.restarts() == before, f"a process restarted under bad input {shared_sim.where()}"
    assert set(shared_sim.states().values()) == {"RUNNING"}
    dropped = shared_sim.count_in_logs("dropped bad message")
    # every process that listens to the bus noticed the bad input, and logged it rate-limited
    for name in ("referee", "vision", "actuator", "led", "ai", "simworld", "simhuman"):
        assert dropped[name] >= 1, f"{name} logged no dropped message: {dropped} {shared_sim.where()}"
    assert sum(dropped.values()) <= MESSAGES * MAX_LOG_LINES_PER_100 // 100, dropped
    # ... with its reason: each way of being broken shows up in the referee's log
    for reason in ("frame-count", "malformed-header", "malformed-body", "unknown-type"):
        assert shared_sim.count_in_logs(reason, ["referee"])["referee"] >= 1, reason


def test_every_log_line_is_json(shared_sim: SimStack) -> None:
    """Under supervisord every process writes JSON lines (SPEC 3: `sanzi logs` merges them), including
    what the bus client logs about dropped messages during the tests above."""
    offenders = {}
    for name in shared_sim.stack.names:
        path = shared_sim.files.log_file(name)
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        bad = [line for line in lines if line.strip() and not line.startswith("{")]
        if bad:
            offenders[name] = f"{len(bad)} lines, e.g. {bad[0][:160]!r}"
    assert not offenders, f"non-JSON log lines: {offenders} {shared_sim.where()}"
