"""`sanzi keys DIR [--client NAME ...]`: CURVE key pairs for a bus spread over machines, and the browser
console's token (``DIR/console.token``)."""

from __future__ import annotations

import argparse

from services.bus import curve
from services.console.token import make_token


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
    token = make_token(args.dir)
    for path in written:
        print(path)
    print(token)
    print(
        f"\nset bus.curve_dir = {args.dir!r} on every machine; copy server.key and NAME.key_secret to each "
        "client machine and set bus.curve_client = NAME there; keep server.key_secret on the bus's machine.\n"
        f"the browser console: set console.token_file = {str(token)!r} to let it listen beyond loopback, "
        "and open it with ?token=<the file's content>."
    )
    return 0
