"""`sanzi keys DIR [--client NAME ...]`: CURVE key pairs for a bus spread over machines."""

from __future__ import annotations

import argparse

from services.bus import curve


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="folder for the keys (created with mode 0700)")
    parser.add_argument(
        "--client",
        action="append",
        default=[],
        metavar="NAME",
        help="make a key pair for this client and allow it in (repeatable; default: one named 'client')",
    )


def run(args: argparse.Namespace) -> int:
    clients = args.client or ["client"]
    written = curve.make_keys(args.dir, clients)
    for path in written:
        print(path)
    print(
        f"\nset bus.curve_dir = {args.dir!r} on every machine; copy server.key and NAME.key_secret to each "
        "client machine and set bus.curve_client = NAME there; keep server.key_secret on the bus's machine."
    )
    return 0
