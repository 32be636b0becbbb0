"""``sanzi echo TOPIC [--json] [-n N]``: print the messages of a topic (or a family: ``vision.``) live.

One readable line per message: local time of publication, topic, publisher#sequence, type, and the
fields that differ from their defaults. ``--json`` prints one JSON object per line instead (topic,
header, every field). Byte fields (camera pixels) are shown as their length only.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import signal
import sys
import time
from typing import Any

import msgspec
import zmq.asyncio

import messages
from services.bus.client import Subscriber
from services.common import config as config_module
from services.common import log as log_module
from services.common.config import Config
from services.common.shell import load_config

#: a value longer than this is cut in the readable form (the JSON form is never cut).
MAX_VALUE_CHARS = 160


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", metavar="TOPIC", help="a topic or a prefix (vision. = every vision topic)")
    parser.add_argument("--json", action="store_true", help="one JSON object per message")
    parser.add_argument("-n", "--count", type=int, default=0, metavar="N", help="stop after N messages")
    parser.add_argument("--duration", type=float, default=None, metavar="S", help="stop after S seconds")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args)
    except config_module.ConfigError as exc:
        print(f"sanzi echo: {exc}", file=sys.stderr)
        return 2
    if not messages.topics_matching([args.topic]):
        known = ", ".join(sorted(messages.TOPICS))
        print(f"sanzi echo: no topic starts with {args.topic!r}; topics: {known}", file=sys.stderr)
        return 2
    log_module.setup("echo", "warning", "console", stream=sys.stderr)
    return asyncio.run(_echo(config, args))


async def _echo(config: Config, args: argparse.Namespace) -> int:
    ctx = zmq.asyncio.Context()
    sub = Subscriber(ctx, config.bus, [args.topic], name="echo")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    deadline = None if args.duration is None else time.monotonic() + args.duration
    printed = 0
    try:
        while not stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                break
            env = await sub.recv(timeout=0.2)
            if env is None:
                continue
            line = to_json_line(env) if args.json else to_line(env)
            try:
                print(line, flush=True)
            except BrokenPipeError:  # `sanzi echo ... | head`
                break
            printed += 1
            if args.count and printed >= args.count:
                break
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        sub.close()
        ctx.term()
    return 0


def plain(value: Any, *, keep_defaults: bool = False) -> Any:
    """``value`` as JSON-able data: Structs as dicts (without fields at their default unless
    ``keep_defaults``), bytes as ``{"bytes": length}``, tuples as lists."""
    if isinstance(value, msgspec.Struct):
        out: dict[str, Any] = {}
        for info in msgspec.structs.fields(value):
            if info.name == "type" and isinstance(value, messages.Message):
                continue
            item = getattr(value, info.name)
            if not keep_defaults and _is_default(info, item):
                continue
            out[info.name] = plain(item, keep_defaults=keep_defaults)
        return out
    if isinstance(value, bytes | bytearray | memoryview):
        return {"bytes": len(value)}
    if isinstance(value, list | tuple):
        return [plain(v, keep_defaults=keep_defaults) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v, keep_defaults=keep_defaults) for k, v in value.items()}
    return value


def _is_default(info: msgspec.structs.FieldInfo, value: Any) -> bool:
    if info.default is not msgspec.NODEFAULT:
        return bool(value == info.default)
    if info.default_factory is not msgspec.NODEFAULT:
        return bool(value == info.default_factory())
    return False


def _short(value: Any) -> str:
    if isinstance(value, str):
        text = value if value and " " not in value and "=" not in value else json.dumps(value)
    elif isinstance(value, dict) and set(value) == {"bytes"}:
        text = f"<{value['bytes']} bytes>"
    elif isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def clock(wall_ns: int) -> str:
    """Local time of day with milliseconds."""
    return dt.datetime.fromtimestamp(wall_ns / 1e9).strftime("%H:%M:%S.%f")[:-3]


def to_line(env: messages.Envelope) -> str:
    """One readable line for ``env``."""
    fields = plain(env.message)
    body = " ".join(f"{k}={_short(v)}" for k, v in fields.items())
    head = f"{clock(env.header.wall_ns)} {env.topic} {env.header.source}#{env.header.seq} {env.header.type}"
    return f"{head} {body}".rstrip()


def to_json_line(env: messages.Envelope) -> str:
    """One JSON object for ``env``: topic, header, and every field of the message."""
    return json.dumps(
        {
            "topic": env.topic,
            "header": msgspec.structs.asdict(env.header),
            "message": plain(env.message, keep_defaults=True),
        },
        separators=(",", ":"),
    )
