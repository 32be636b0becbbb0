"""``sanzi sim``: the whole stack on the simulator, playing the contest tasks 1 to 6.

Writes a runtime configuration (the simulator's processes, ``--speed``, seeds from ``--seed``, the
calibration of the simulated camera), starts the stack under supervisord, waits for every process's
heartbeat, and runs the tasks in order, each from a reset world: placements for tasks 1-3 (task 3 on a
turned board), games against the simulated person for tasks 4-6 (task 4: a mistaken first reply the
device must punish; task 5: perfect play, a draw; task 6: the person moves one of the device's pieces).
A live line shows task, move and phase; a table ends the run, and ``--summary FILE.json`` writes it as
JSON. Exit code 0 only when every task met its contest requirement, checked against the simulated world.

``sanzi sim --human you`` plays the games with you at the terminal instead of the simulated person;
``sanzi sim --human web`` with you clicking in the browser console (its address is printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from services.common import config as config_module
from services.common.shell import parse_overrides

from .. import simrun
from .. import stack as stack_module
from .up import add_set_argument

#: With a person at the terminal, the game where the person opens is the default.
INTERACTIVE_DEFAULT_TASKS = (5,)
#: Speed factors: fast by default, real time for a person at the terminal.
DEFAULT_SPEED = 10.0
INTERACTIVE_SPEED = 1.0


def _task(value: str) -> int:
    try:
        task = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a task is a number 1-6, not {value!r}") from None
    if task not in simrun.ALL_TASKS:
        raise argparse.ArgumentTypeError(f"tasks are 1 to 6, not {task}")
    return task


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--task", type=_task, action="append", metavar="N", help="run only task N (repeatable; default 1-6)"
    )
    parser.add_argument("--games", type=int, default=1, metavar="N", help="games per game task (4-6)")
    parser.add_argument(
        "--human",
        metavar="POLICY",
        help="the simulated person's policy in the games: perfect, random, greedy, mistake:N, "
        "'you' to play at this terminal, or 'web' to play by clicking in the browser console "
        "(default per task: 4 mistake:1, 5 and 6 perfect)",
    )
    parser.add_argument(
        "--misbehave",
        metavar="KIND",
        action="append",
        help="what the person does wrong in the games (repeatable): two-pieces, wrong-colour, "
        "move-device-piece, remove-device-piece, button-without-move, hand-in-view "
        "(default: move-device-piece in task 6 only)",
    )
    parser.add_argument(
        "--speed",
        type=float,
        metavar="F",
        help=f"simulation speed factor (default {DEFAULT_SPEED:g}; {INTERACTIVE_SPEED:g} with --human you)",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed of every random choice")
    parser.add_argument("--summary", metavar="FILE.json", help="write the results as JSON")
    parser.add_argument(
        "--task-timeout", type=float, metavar="S", help="seconds one task may take (default: from the speed)"
    )
    add_set_argument(parser)


def run(args: argparse.Namespace) -> int:
    web = args.human == simrun.WEB_POLICY
    interactive = args.human == simrun.INTERACTIVE_POLICY or web
    tasks = (
        tuple(args.task) if args.task else (INTERACTIVE_DEFAULT_TASKS if interactive else simrun.ALL_TASKS)
    )
    options = simrun.SimOptions(
        tasks=tasks,
        games=args.games,
        human=None if interactive else args.human,
        misbehave=tuple(args.misbehave) if args.misbehave is not None else None,
        speed=args.speed if args.speed is not None else (INTERACTIVE_SPEED if interactive else DEFAULT_SPEED),
        seed=args.seed,
        task_timeout_s=args.task_timeout,
    )
    try:
        base = stack_module.load_config(args.config, parse_overrides(list(args.set)))
        config = simrun.simulator_config(base, speed=options.speed, seed=options.seed)
        simrun.plan_tasks(options, config)  # bad options fail before anything starts
    except (config_module.ConfigError, simrun.SimError) as exc:
        print(f"sanzi sim: {exc}", file=sys.stderr)
        return 2
    if web:
        print("sanzi sim: you play the person in the browser console (its address follows).", file=sys.stderr)
    elif interactive:
        print("sanzi sim: you play the person; the simulated stack plays the device.", file=sys.stderr)
    try:
        with stack_module.stop_on_signals():
            report = simrun.run_sim(
                config, options, stream=sys.stderr, interactive_human=interactive and not web, web_human=web
            )
    except stack_module.StackError as exc:
        print(f"sanzi sim: {exc}", file=sys.stderr)
        return 1
    print(simrun.format_table(report.results))
    print(f"wall time {report.wall_s:.1f} s at speed {options.speed:g}; logs in {report.files.log_dir}")
    if args.summary:
        Path(args.summary).write_text(json.dumps(simrun.as_json(report, options), indent=2) + "\n")
    return 0 if report.ok else 1
