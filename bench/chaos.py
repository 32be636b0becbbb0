"""Chaos benchmark: games on the simulated stack while a random device process is killed (kill -9)
every 1-5 s, at random moments.

The same as ``tests/e2e/test_chaos.py``, for longer: ``--games`` games per task over tasks 4, 5 and 6
(default 10 each: 30 games), the 15 s budget applied to every placement. Prints:

- games that met their contest requirement (checked against the simulated world, as ``sanzi sim`` does);
- kills per process;
- kill -> the restarted process heard on the bus (median, worst);
- recovery: kill -> the game's next progress (median, worst), see :mod:`launch.chaos`;
- the worst placement time (command -> vision's confirmation, wall seconds);
- presses announced by the panel and never acknowledged by the referee (should be none).

Usage: ``python bench/chaos.py [--games N] [--tasks 4,5,6] [--human POLICY] [--speed F] [--seed S]
[--interval MIN,MAX] [--freeze-share F] [--victims bus,vision,...] [--at-person-turns MIN,MAX]
[--summary FILE.json]``. ``--at-person-turns`` kills once in each of the person's turns, MIN-MAX s after
the lamp came on, instead of every ``--interval``. Figures vary with the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from launch import chaos, simrun  # noqa: E402
from launch import stack as stack_module  # noqa: E402
from launch.simrun import Progress, SimOptions, SimSession  # noqa: E402
from services.common import config as config_module  # noqa: E402
from services.common.config import Config  # noqa: E402


async def run(
    config: Config,
    stack: stack_module.Stack,
    options: SimOptions,
    interval: tuple[float, float],
    seed: int,
    freeze_share: float = 0.0,
    victims: tuple[str, ...] = chaos.VICTIMS,
    at_person_turns: tuple[float, float] | None = None,
) -> tuple[list[simrun.TaskResult], chaos.Monkey, int]:
    plans = simrun.plan_tasks(options, config)
    monkey = chaos.Monkey(
        stack,
        config,
        seed=seed,
        victims=victims,
        interval=interval,
        freeze_share=freeze_share,
        at_person_turns=at_person_turns,
    )
    async with SimSession(config) as session:
        results = await chaos.play_under(monkey, session, plans, Progress(sys.stderr), fail_fast=False)
        await session.ask_snapshot()
        ack = getattr(session.state, "press_ack", 0)
    return results, monkey, ack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="games per task (default 10)")
    parser.add_argument("--tasks", default="4,5,6")
    parser.add_argument("--human", default=None, help="the person's policy (default: each task's own)")
    parser.add_argument("--speed", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--interval", default="1,5", help="seconds between kills: MIN,MAX (default 1,5)")
    parser.add_argument(
        "--freeze-share", type=float, default=0.0, help="share of events that are 5 s SIGSTOPs (default 0)"
    )
    parser.add_argument("--victims", default=",".join(chaos.VICTIMS), help="processes that may be killed")
    parser.add_argument(
        "--at-person-turns", metavar="MIN,MAX", help="kill once in each of the person's turns, MIN-MAX s in"
    )
    parser.add_argument("--summary", metavar="FILE.json", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    tasks = tuple(int(t) for t in args.tasks.split(","))
    lo, hi = (float(v) for v in args.interval.split(","))
    victims = tuple(v for v in args.victims.split(",") if v)
    unknown = sorted(set(victims) - set(chaos.VICTIMS))
    if unknown:
        parser.error(f"unknown victims {unknown}; known: {', '.join(chaos.VICTIMS)}")
    turns = None
    if args.at_person_turns:
        t_lo, t_hi = (float(v) for v in args.at_person_turns.split(","))
        turns = (t_lo, t_hi)
    options = SimOptions(tasks=tasks, games=args.games, human=args.human, speed=args.speed, seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="sanzi-chaos-") as runtime:
        base = config_module.load(None, overrides={"runtime": {"dir": runtime}})
        config = simrun.simulator_config(base, speed=args.speed, seed=args.seed)
        simrun.fresh_state(config)
        files = stack_module.prepare(config, command="bench")
        with stack_module.Stack(files) as stack:
            stack.wait_running(timeout=60)
            stack.wait_heartbeats(config, timeout=60)
            t0 = time.monotonic()
            results, monkey, ack = asyncio.run(
                run(config, stack, options, (lo, hi), args.seed + 1, args.freeze_share, victims, turns)
            )
            wall = time.monotonic() - t0
    figures = chaos.ChaosFigures(monkey.kills)
    met = sum(r.verdict.ok for r in results)
    unacked = sorted(p for p in monkey.presses if p > ack)
    print()
    print(simrun.format_table(results))
    print()
    print(
        f"sanzi chaos benchmark: tasks {args.tasks}, {len(results)} games, speed {args.speed:g}, "
        f"seed {args.seed}, "
        + (
            f"a kill in each of the person's turns, {turns[0]:g}-{turns[1]:g} s in"
            if turns
            else f"a kill every {lo:g}-{hi:g} s"
        )
        + f" ({', '.join(victims)}), {wall:.0f} s"
    )
    print(f"games met their requirement: {met}/{len(results)} (15 s budget applied to every placement)")
    for line in figures.lines():
        print(line)
    worst = chaos.worst_placement_s(results)
    print(f"worst placement: {worst:.2f} s")
    print(f"button presses announced: {len(monkey.presses)}, never acknowledged: {len(unacked)}")
    if args.summary:
        rec, backs = figures.recoveries(), figures.backs()
        data = {
            "games": len(results),
            "met": met,
            "kills": figures.per_process(),
            "recovery_s": {"median": chaos.median(rec), "worst": max(rec, default=None)},
            "back_s": {"median": chaos.median(backs), "worst": max(backs, default=None)},
            "worst_placement_s": worst,
            "unacknowledged_presses": unacked,
            "kill_log": [
                {"victim": k.victim, "moment": k.moment, "back_s": k.back_s, "progress_s": k.progress_s}
                for k in monkey.kills
            ],
            "tasks": [r.row() for r in results],
        }
        Path(args.summary).write_text(json.dumps(data, indent=1))
    return 0 if met == len(results) and not unacked else 1


if __name__ == "__main__":
    sys.exit(main())
