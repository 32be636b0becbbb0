"""`sanzi schema`: the JSON schema of every bus message type, with versions and the envelope."""

from __future__ import annotations

import argparse
import json

import messages


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--type", metavar="NAME", help="only this message type (e.g. GameState)")
    parser.add_argument("--topics", action="store_true", help="print the topic table instead")


def run(args: argparse.Namespace) -> int:
    if args.topics:
        for name, topic in messages.TOPICS.items():
            rate = f"{topic.rate_hz:g} Hz" if topic.rate_hz else "event"
            print(
                f"{name:<20} {topic.type.__name__:<18} {rate:<8} {topic.channel.value:<6} "
                f"{'recorded' if topic.logged else 'not recorded'}"
            )
        return 0
    schema = messages.json_schema()
    if args.type:
        if args.type not in schema["$defs"]:
            known = ", ".join(sorted(messages.MESSAGE_TYPES))
            print(f"sanzi schema: unknown type {args.type!r}; known: {known}")
            return 2
        schema = schema["$defs"][args.type]
    print(json.dumps(schema, indent=2, sort_keys=True))
    return 0
