"""``sanzi record OUT [--topics REGEX] [--camera] [--jpeg-quality Q] [--duration S]``: the bus to MCAP.

Subscribes to the topics of the topic table that REGEX finds (``re.search``; default: the logged topics,
i.e. everything but raw camera frames, which are large: ask for them with ``--topics camera``) and writes
every message as received until Ctrl-C, SIGTERM or the duration, with a JSON copy for Foxglove and
Lichtblick. ``--camera`` adds the camera as JPEG images (``/camera/image``) with vision's reading drawn
on them (``/vision/annotations``), for the viewers only. The processes' log lines (``runtime.log_dir``)
go to ``/log`` unless ``--no-logs``. docs/recording.md describes the file; ``sanzi info OUT`` summarises it.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

import zmq.asyncio

from launch.logview import Follower
from launch.recording import RecordStats, record_bus
from messages import TOPICS, Channel
from services.bus.client import Subscriber
from services.common import config as config_module
from services.common import log as log_module
from services.common import viewer
from services.common.config import Config
from services.common.recording import FileHeader, RecordingError, RecordingWriter, match_topics
from services.common.shell import load_config

#: the camera's topic, recorded for the viewers by --camera.
CAMERA = "camera.frame"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT", help="the recording to write (e.g. game.mcap)")
    parser.add_argument(
        "--topics",
        metavar="REGEX",
        default=None,
        help="record the topics this expression finds (re.search); default: all logged topics "
        "(not camera.frame)",
    )
    parser.add_argument(
        "--camera", action="store_true", help="record the camera as JPEG with vision's overlay (viewers)"
    )
    parser.add_argument(
        "--jpeg-quality",
        metavar="Q",
        type=int,
        default=viewer.DEFAULT_JPEG_QUALITY,
        help=f"JPEG quality of --camera, 1-100 (default {viewer.DEFAULT_JPEG_QUALITY})",
    )
    parser.add_argument("--no-logs", action="store_true", help="do not record the processes' log lines")
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
    if not 1 <= args.jpeg_quality <= 100:
        print("sanzi record: --jpeg-quality must be 1..100", file=sys.stderr)
        return 2
    try:
        header = FileHeader.now(tool="sanzi record", selection=args.topics or "", camera=args.camera)
        writer = RecordingWriter(
            args.out,
            header,
            overwrite=args.force,
            jpeg_quality=args.jpeg_quality if args.camera else None,
        )
    except RecordingError as exc:
        print(f"sanzi record: {exc}", file=sys.stderr)
        return 2
    log_module.setup("record", "warning", "console", stream=sys.stderr)  # keep stdout for the counts
    if not args.quiet:
        print(f"recording {len(topics)} topics to {args.out}; Ctrl-C to stop", file=sys.stderr)
    logs = None if args.no_logs else Follower(config.runtime.log_dir, from_end=True)
    view_only = [CAMERA] if args.camera and CAMERA not in topics else []
    try:
        stats = asyncio.run(_record(config, topics, writer, args.duration, view_only, logs))
    finally:
        writer.close()
        if logs is not None:
            logs.close()
    if not args.quiet:
        print(render_counts(stats, writer.bytes))
        for topic, count in sorted(writer.viewer_errors.items()):
            print(f"  ({count} {topic} messages recorded without a viewer copy: undecodable or bad frames)")
    return 0


async def _record(
    config: Config,
    topics: list[str],
    writer: RecordingWriter,
    duration: float | None,
    view_only: list[str],
    logs: Follower | None,
) -> RecordStats:
    ctx = zmq.asyncio.Context()
    subscribed = [*topics, *view_only]
    frames = any(TOPICS[t].channel is Channel.FRAME for t in subscribed if t in TOPICS)
    sub = Subscriber(ctx, config.bus, subscribed, include_frames=frames, name="record")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        return await record_bus(sub, writer, topics, stop, duration=duration, view_only=view_only, logs=logs)
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
    for topic, count in sorted(stats.viewed.items()):
        lines.append(f"  {topic:<20} {count:>8}  (for the viewers only)")
    if stats.log_lines:
        lines.append(f"  {'log lines':<20} {stats.log_lines:>8}")
    if stats.skipped:
        lines.append(f"  (skipped {stats.skipped} malformed or unselected messages)")
    return "\n".join(lines)
