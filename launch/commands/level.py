"""``sanzi level NAME``: set the engine's difficulty (easy, medium, hard, perfect) for the next moves."""

from __future__ import annotations

import argparse
import sys

from messages import OperatorCommand
from services.common.config import ConfigError
from services.common.shell import load_config
from services.referee import operator_client as client

from .task import waits


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("level", help="easy, medium, hard or perfect")
    parser.add_argument("--wait", type=float, default=4.5, help="seconds to wait for the referee's answer")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args)
    except ConfigError as exc:
        print(f"sanzi level: {exc}", file=sys.stderr)
        return 2
    command = OperatorCommand(command_id=client.new_command_id(), action="level", level=args.level)
    reply = client.send_blocking(config.bus, command, waits(args.wait))
    return client.report(reply, f"level {args.level}", sys.stdout, sys.stderr)
