"""The `sanzi` command line: one entry point, one subcommand per tool.

Every subcommand lives in its own module under :mod:`launch.commands` and exposes two functions::

    def add_arguments(parser: argparse.ArgumentParser) -> None: ...
    def run(args: argparse.Namespace) -> int: ...   # the process exit code

The table below is the only place a subcommand is registered. Modules are imported lazily, only for the
subcommand that runs, so `sanzi --help` stays fast and a broken tool cannot break the others.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import importlib
import io
import signal
import sys
from typing import NamedTuple


class Command(NamedTuple):
    module: str
    help: str


#: name -> (module under launch.commands, one-line help). Keep sorted by theme, not alphabet.
COMMANDS: dict[str, Command] = {
    # running the device
    "sim": Command("launch.commands.sim", "run the whole stack on the simulator and play the contest tasks"),
    "up": Command("launch.commands.up", "start the stack under supervisord in the foreground"),
    "down": Command("launch.commands.down", "stop a running stack"),
    "status": Command("launch.commands.status", "show every process: alive, restarts, heartbeat, phase"),
    "task": Command("launch.commands.task", "choose a contest task (1-6) for the running device"),
    "stop": Command("launch.commands.stop", "stop the running task or game"),
    "level": Command("launch.commands.level", "set the engine's difficulty level"),
    # inspecting the bus
    "echo": Command("launch.commands.echo", "print the messages of one topic live"),
    "hz": Command("launch.commands.hz", "measure the rate of one topic"),
    "record": Command("launch.commands.record", "record the bus to a file"),
    "play": Command("launch.commands.play", "publish a recording again with its timing"),
    "info": Command("launch.commands.info", "summarise a recording"),
    "replay-check": Command("launch.commands.replay_check", "re-run the referee on a recording and diff"),
    "logs": Command("launch.commands.logs", "merge the processes' JSON logs into one timeline"),
    "schema": Command("launch.commands.schema", "print the JSON schema of every message type"),
    "keys": Command("launch.commands.keys", "make CURVE key pairs for a bus spread over machines"),
    "config": Command("launch.commands.config", "print the effective configuration as TOML"),
    # hardware bring-up and vision
    "calibrate": Command("launch.commands.calibrate", "compute the camera-to-table homography"),
    "motion": Command("launch.commands.motion", "drive the motion controller by hand (bring-up)"),
    "detect": Command("launch.commands.detect", "detect the board and pieces in one image"),
    "render": Command("launch.commands.render", "render one simulated camera frame from a world file"),
    # playing
    "ttt": Command("launch.commands.ttt", "play tic-tac-toe against the engine in the terminal"),
    "gomoku": Command("launch.commands.gomoku", "play gomoku (five in a row, 15 x 15) in the terminal"),
    "pbrain": Command("launch.commands.pbrain", "the gomoku engine as a Gomocup brain on stdin/stdout"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sanzi",
        description="sanzi: the software of a tic-tac-toe playing robot (camera, gantry, lamp, button).",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="configuration file (TOML); default: $SANZI_CONFIG, else ./sanzi.toml if present, else built-in",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        sub.add_parser(name, help=command.help, description=command.help, add_help=False)
    return parser


def _stacks_on_sigusr1() -> None:
    """``kill -USR1 <pid>`` prints every thread's stack to stderr: what a command that hangs waits on.
    Not where stderr is no file (a test that runs a command in its own process and captures it)."""
    with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
        faulthandler.register(signal.SIGUSR1, all_threads=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    # First pass: find the subcommand without importing every module.
    known, _ = parser.parse_known_args(argv)
    if known.command is None:
        parser.print_help()
        return 2
    command = COMMANDS[known.command]
    try:
        module = importlib.import_module(command.module)
    except ModuleNotFoundError as exc:
        if exc.name == command.module:
            print(f"sanzi {known.command}: not available in this build", file=sys.stderr)
            return 2
        raise
    # Second pass: a parser that knows this subcommand's arguments.
    full = argparse.ArgumentParser(prog="sanzi")
    full.add_argument("--config", metavar="FILE")
    sub = full.add_subparsers(dest="command", required=True)
    sub_parser = sub.add_parser(known.command, help=command.help, description=command.help)
    module.add_arguments(sub_parser)
    args = full.parse_args(argv)
    _stacks_on_sigusr1()
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
