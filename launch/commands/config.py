"""`sanzi config`: print the effective configuration (file + defaults + --set) as TOML."""

from __future__ import annotations

import argparse
import sys

from services.common.config import ConfigError, to_toml
from services.common.shell import load_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set", metavar="KEY=VALUE", action="append", default=[], help="override a value (repeatable)"
    )
    parser.add_argument("--section", help="print only this section")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args)
    except ConfigError as exc:
        print(f"sanzi config: {exc}", file=sys.stderr)
        return 2
    if args.section:
        if not hasattr(config, args.section):
            print(f"sanzi config: no section {args.section!r}", file=sys.stderr)
            return 2
        print(f"[{args.section}]\n" + to_toml(getattr(config, args.section)), end="")
        return 0
    print(to_toml(config), end="")
    return 0
