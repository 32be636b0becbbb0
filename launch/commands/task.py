"""``sanzi task N``: choose a contest task for the running device.

    sanzi task 1                              one black piece to square 5
    sanzi task 2 --squares 1,5,9,3            2 black then 2 white pieces to those squares, in order
    sanzi task 2 --squares 1,5,9,3 --colours bwbw
    sanzi task 3 --squares 1,5,9,3            task 2 on a rotated board
    sanzi task 4 --first 5                    the device plays black and opens on square 5
    sanzi task 5                              the person plays black and opens; the device never loses
    sanzi task 6                              a game in which cheating is expected (and undone)
    sanzi task 6 --first 1                    the same, with the device playing black and opening

The referee checks the arguments (squares 1..9, no repeats, the right count, no task while one runs) and
answers; exit code 0 when it accepted, 1 when it refused (the reason is printed), 3 when no referee
answered.
"""

from __future__ import annotations

import argparse
import sys

from messages import OperatorCommand
from services.common.config import ConfigError
from services.common.shell import load_config
from services.referee import operator_client as client


def _squares(text: str) -> list[int]:
    try:
        return [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"squares are numbers 1..9 separated by commas, got {text!r}"
        ) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", type=int, help="contest task 1..6")
    parser.add_argument(
        "--squares", type=_squares, default=[], help="target squares for tasks 2 and 3, e.g. 1,5,9,3"
    )
    parser.add_argument(
        "--colours",
        default="",
        help="colour order of tasks 2 and 3, one b/w letter per square (default: the referee's, bbww)",
    )
    parser.add_argument(
        "--first",
        type=int,
        default=None,
        help="the device's opening square in task 4 (default 5); in task 6 the device then opens",
    )
    parser.add_argument("--wait", type=float, default=4.5, help="seconds to wait for the referee's answer")


def waits(total: float) -> tuple[float, ...]:
    """Attempt waits that double and add up to about ``total`` seconds."""
    out: list[float] = []
    wait = 0.3
    while sum(out) + wait <= total + 1e-9:
        out.append(wait)
        wait *= 2
    return tuple(out) or (total,)


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args)
    except ConfigError as exc:
        print(f"sanzi task: {exc}", file=sys.stderr)
        return 2
    command = OperatorCommand(
        command_id=client.new_command_id(),
        action="task",
        task=args.task,
        squares=args.squares,
        first=args.first,
        colours=args.colours,
    )
    reply = client.send_blocking(config.bus, command, waits(args.wait))
    return client.report(reply, f"task {args.task}", sys.stdout, sys.stderr)
