"""Crash recovery: in a running game, kill -9 each of bus, vision, referee, ai, actuator and led in turn
(one per game, at a seeded random phase). Every game still ends correctly, no piece is placed twice, and
the world agrees with the referee's board at the end (all checked by the verdict)."""

from __future__ import annotations

import random
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from launch import simrun
from launch.simrun import Progress, SimOptions, SimSession, TaskPlan
from messages import GameState

from .conftest import SEED, SPEED, SimStack, short_runtime, sim_stack, table

pytestmark = pytest.mark.e2e

VICTIMS = ("bus", "vision", "referee", "ai", "actuator", "led")
#: Phases that last long enough to be seen on referee.state (others pass within one step).
PHASES = ("move-requested", "command-sent", "waiting-for-person", "waiting-for-stable")
#: If the chosen phase never shows at or after the chosen move, kill anyway this many moves later.
FALLBACK_MOVES = 2


@dataclass
class Killer:
    """Kills ``victim`` once, at the first state of ``phase`` at move ``move`` or later."""

    sim: SimStack
    victim: str
    phase: str
    move: int
    killed_at: str = ""
    pids: list[int] = field(default_factory=list)

    async def __call__(self, state: GameState) -> None:
        if self.killed_at or state.phase == "game-over":
            return
        due = (state.phase == self.phase and state.move_number >= self.move) or (
            state.move_number >= self.move + FALLBACK_MOVES
        )
        if due:
            self.pids.append(self.sim.stack.kill(self.victim, signal.SIGKILL))
            self.killed_at = f"{state.phase} at move {state.move_number}"


@pytest.fixture(scope="module")
def crash_sim(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    with sim_stack(short_runtime(tmp_path_factory, "crash")) as sim:
        yield sim


async def test_kill_each_process_during_a_game(crash_sim: SimStack) -> None:
    rng = random.Random(SEED)
    killers: dict[int, Killer] = {}
    plans: list[TaskPlan] = []
    for i, victim in enumerate(VICTIMS):
        task = (4, 5)[i % 2]  # the device opens in one game, the person in the next
        (plan,) = simrun.plan_tasks(
            SimOptions(tasks=(task,), seed=SEED + 100 + i, speed=SPEED), crash_sim.config
        )
        if task == 4:
            plan = simrun._replace(plan, policy="perfect")  # a full game: more moves to crash into
        # A placement cut by a crash is recovered, not finished in 15 s.
        plan = simrun._replace(plan, budget_applies=False)
        plans.append(plan)
        killers[id(plan)] = Killer(crash_sim, victim, rng.choice(PHASES), rng.randrange(0, 4))

    def hook(plan: TaskPlan) -> Callable[[GameState], Awaitable[None]]:
        return killers[id(plan)]

    before = crash_sim.restarts()
    async with SimSession(crash_sim.config) as session:
        results = await simrun.run_plans(session, plans, Progress(sys.stderr), hook, fail_fast=True)
    report = (
        table(results)
        + "\n"
        + "\n".join(f"{k.victim}: killed {k.killed_at or 'never'}" for k in killers.values())
    )
    assert all(r.verdict.ok for r in results) and len(results) == len(plans), report + crash_sim.where()
    assert all(k.killed_at for k in killers.values()), report
    after = crash_sim.restarts()
    for victim in VICTIMS:
        assert after[victim] >= before[victim] + 1, f"{victim} was not restarted by supervisord {report}"
    assert set(crash_sim.states().values()) == {"RUNNING"}
    # Vision was killed after it had announced a stable board: the restarted one started from it.
    resumed = crash_sim.count_in_logs("board remembered from before the restart", ["vision"])
    assert resumed["vision"] >= 1, f"the restarted vision searched afresh {crash_sim.where()}"
