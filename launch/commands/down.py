"""``sanzi down``: stop the stack that runs in the runtime folder (whoever started it)."""

from __future__ import annotations

import argparse
import sys

from services.common import config as config_module

from .. import stack as stack_module


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runtime", metavar="DIR", help="the stack's runtime folder (default: the configuration's)"
    )
    parser.add_argument("--timeout", type=float, default=stack_module.STOP_TIMEOUT_S, metavar="S")


def runtime_dir(args: argparse.Namespace) -> str:
    """The runtime folder named by ``--runtime``, else the configuration's."""
    if getattr(args, "runtime", None):
        return str(args.runtime)
    return str(config_module.load(args.config).runtime.dir)


def run(args: argparse.Namespace) -> int:
    try:
        folder = runtime_dir(args)
    except config_module.ConfigError as exc:
        print(f"sanzi down: {exc}", file=sys.stderr)
        return 2
    try:
        stopped = stack_module.stop_running(folder, timeout=args.timeout)
    except stack_module.StackError as exc:
        print(f"sanzi down: {exc}", file=sys.stderr)
        return 1
    print(f"sanzi down: {'stopped the stack' if stopped else 'no stack running'} in {folder}")
    return 0
