"""``sanzi play LOG [--rate R] [--topics REGEX] [--start S] [--loop] [--instead-of PROCESS ...]``.

Publishes a recording on the bus again with its timing (intervals divided by ``--rate``). ``--topics``
selects topics (``re.search``), ``--start`` skips the first seconds, ``--loop`` starts over at the end.
``--instead-of vision`` publishes only what the vision process publishes (and its heartbeats), so that
the recorded stream stands in for a vision process that is not started and drives a live referee.

Headers are restamped (see :class:`launch.recording.Restamper`): each message keeps its original source
and pid, gets a fresh per-(source, topic) sequence number and the current time; bodies are unchanged.
``--keep-headers`` publishes the recorded headers byte for byte instead.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

import zmq.asyncio

from launch.recording import PUBLISHERS, ReplayStats, make_filter, replay_into
from messages import Channel
from services.bus.client import Publisher
from services.common import config as config_module
from services.common import log as log_module
from services.common.config import Config
from services.common.recording import Recording, RecordingError
from services.common.shell import load_config

#: how long to let a fresh publisher's connection settle before the first message: a PUB socket drops
#: what it sends before the forwarder has told it the subscriptions (ZeroMQ's slow joiner).
SETTLE_S = 0.3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG", help="a recording")
    parser.add_argument("--rate", type=float, default=1.0, help="speed factor (2 = twice as fast); default 1")
    parser.add_argument(
        "--topics", metavar="REGEX", default=None, help="publish only these topics (re.search)"
    )
    parser.add_argument("--start", metavar="S", type=float, default=0.0, help="skip the first S seconds")
    parser.add_argument("--loop", action="store_true", help="start again at the end, until Ctrl-C")
    parser.add_argument(
        "--instead-of",
        metavar="PROCESS",
        action="extend",
        nargs="+",
        default=[],
        help=f"stand in for these processes: publish only their topics ({', '.join(sorted(PUBLISHERS))})",
    )
    parser.add_argument("--keep-headers", action="store_true", help="publish the recorded headers unchanged")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")


def run(args: argparse.Namespace) -> int:
    if not args.rate > 0:
        print("sanzi play: --rate must be positive", file=sys.stderr)
        return 2
    if args.start < 0:
        print("sanzi play: --start must not be negative", file=sys.stderr)
        return 2
    try:
        config = load_config(args)
        recording = Recording(args.log, warn=False)  # reported below
        # check the selection before connecting: bad names are errors, not an empty replay
        make_filter(args.topics, args.instead_of)
    except (config_module.ConfigError, RecordingError) as exc:
        print(f"sanzi play: {exc}", file=sys.stderr)
        return 2
    log_module.setup("play", "warning", "console", stream=sys.stderr)  # keep stdout for the counts
    stats = asyncio.run(_play(config, recording, args))
    if recording.tail is not None:
        print(f"sanzi play: warning: {recording.tail}", file=sys.stderr)
    if not args.quiet:
        total = sum(stats.published.values())
        print(
            f"published {total} messages in {stats.passes} pass(es); "
            f"worst lag {stats.max_lag_s * 1000:.1f} ms"
        )
        for topic, count in sorted(stats.published.items()):
            print(f"  {topic:<20} {count:>8}")
        if stats.bad_header:
            print(f"  (skipped {stats.bad_header} messages with an undecodable header)")
    return 0


async def _play(config: Config, recording: Recording, args: argparse.Namespace) -> ReplayStats:
    ctx = zmq.asyncio.Context()
    publisher = Publisher(ctx, config.bus, "play")
    publisher.open(Channel.EVENT, Channel.FRAME)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await asyncio.sleep(SETTLE_S)
        return await replay_into(
            recording,
            publisher,
            args.topics,
            args.rate,
            start_s=args.start,
            instead_of=args.instead_of,
            loop=args.loop,
            stop=stop,
            restamp=not args.keep_headers,
        )
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        publisher.close()
        ctx.term()
