"""``sanzi record OUT [--topics REGEX] [--duration S]``: write the bus to a recording.

Subscribes to the topics of the topic table that REGEX finds (``re.search``; default: the logged topics,
i.e. everything but camera frames, which are large: ask for them with ``--topics camera``) and writes
every message as received until Ctrl-C, SIGTERM or the duration. The file format is in
docs/recording-format.md; ``sanzi info OUT`` summarises the result.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Any

import zmq.asyncio

from launch.recording import RecordStats, record_bus
from messages import TOPICS, Channel
from services.bus.client import Subscriber
from services.common import config as config_module
from services.common import log as log_module
from services.common.recording import FileHeader, RecordingError, RecordingWriter, match_topics
from services.common.shell import load_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT", help="the recording to write (e.g. game.mcap)")
    parser.add_argument(
        "--topics",
        metavar="REGEX",
        default=None,
        help="record the topics this expression finds (re.search); default: all logged topics "
        "(not camera.frame)",
    )
    parser.add_argument("--duration", metavar="S", type=float, default=None, help="stop after S seconds")
    parser.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args)
        topics = match_topics(args.topics)
    except (config_module.ConfigError, RecordingError) as exc:
        print(f"sanzi record: {exc}", file=sys.stderr)
        return 2
    if args.duration is not None and args.duration <= 0:
        print("sanzi record: --duration must be positive", file=sys.stderr)
        return 2
    try:
        writer = RecordingWriter(
            args.out, FileHeader.now(tool="sanzi record", selection=args.topics or ""), overwrite=args.force
        )
    except RecordingError as exc:
        print(f"sanzi record: {exc}", file=sys.stderr)
        return 2
    log_module.setup("record", "warning", "console", stream=sys.stderr)  # keep stdout for the counts
    if not args.quiet:
        print(f"recording {len(topics)} topics to {args.out}; Ctrl-C to stop", file=sys.stderr)
    try:
        stats = asyncio.run(_record(config, topics, writer, args.duration))
    finally:
        writer.close()
    if not args.quiet:
        print(render_counts(stats, writer.bytes))
    return 0


async def _record(
    config: Any, topics: list[str], writer: RecordingWriter, duration: float | None
) -> RecordStats:
    ctx = zmq.asyncio.Context()
    frames = any(TOPICS[t].channel is Channel.FRAME for t in topics if t in TOPICS)
    sub = Subscriber(ctx, config.bus, topics, include_frames=frames, name="record")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        return await record_bus(sub, writer, topics, stop, duration=duration)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        sub.close()
        ctx.term()


def render_counts(stats: RecordStats, size: int) -> str:
    total = sum(stats.counts.values())
    lines = [f"{total} messages in {stats.seconds:.1f} s, {size} bytes"]
    for topic, count in sorted(stats.counts.items()):
        lines.append(f"  {topic:<20} {count:>8}")
    if stats.skipped:
        lines.append(f"  (skipped {stats.skipped} malformed or unselected messages)")
    return "\n".join(lines)
