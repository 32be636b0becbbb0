"""``sanzi hz TOPIC [--window S]``: the rate of a topic (or of each topic of a family) live.

Every period it prints, per topic: the rate over the last ``--window`` seconds, the intervals between
messages (min, max, mean, standard deviation), and how the rate compares with the topic table's
expected rate, judged like openpilot's SubMaster: *alive* when the last message arrived within 10
expected periods, *on rate* when the rate is at least 90 % of the expected one. Event topics (no
expected rate) are only measured.

Intervals come from the publishers' monotonic stamps (the header), so they measure the publisher, not
the bus; liveness uses the arrival time here. Each publisher of a topic is measured on its own (a line
per ``topic (source)``), so ``sanzi hz sys.heartbeat`` shows every process's heartbeat rate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from dataclasses import asdict

import zmq.asyncio

import messages
from services.bus.client import Subscriber
from services.common import config as config_module
from services.common import log as log_module
from services.common.config import Config
from services.common.rate import DEFAULT_WINDOW_S, RateMeter, RateReport
from services.common.shell import load_config

__all__ = ["RateMeter", "RateReport", "add_arguments", "render", "run"]


def render(report: RateReport) -> str:
    """One readable line."""
    if report.count == 0:
        return f"{report.topic:<30} no messages"
    verdict = ""
    if report.expected_hz > 0:
        state = "alive" if report.alive else "NOT ALIVE"
        rate = {True: "on rate", False: "BELOW RATE", None: "rate not known yet"}[report.on_rate]
        verdict = f"  expected {report.expected_hz:g} Hz: {state}, {rate}"
    return (
        f"{report.topic:<30} {report.rate_hz:8.2f} Hz  n={report.count:<5} "
        f"min {report.min_s * 1000:7.1f} ms  max {report.max_s * 1000:7.1f} ms  "
        f"mean {report.mean_s * 1000:7.1f} ms  std {report.std_s * 1000:6.1f} ms{verdict}"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", metavar="TOPIC", help="a topic or a prefix (vision. = every vision topic)")
    parser.add_argument("--window", type=float, default=DEFAULT_WINDOW_S, metavar="S", help="window (s)")
    parser.add_argument("--period", type=float, default=1.0, metavar="S", help="print every S seconds")
    parser.add_argument("--count", type=int, default=0, metavar="N", help="stop after N reports")
    parser.add_argument("--json", action="store_true", help="one JSON object per topic and report")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args)
    except config_module.ConfigError as exc:
        print(f"sanzi hz: {exc}", file=sys.stderr)
        return 2
    topics = messages.topics_matching([args.topic])
    if not topics:
        known = ", ".join(sorted(messages.TOPICS))
        print(f"sanzi hz: no topic starts with {args.topic!r}; topics: {known}", file=sys.stderr)
        return 2
    if not (args.window > 0 and args.period > 0):
        print("sanzi hz: --window and --period must be positive", file=sys.stderr)
        return 2
    log_module.setup("hz", "warning", "console", stream=sys.stderr)
    return asyncio.run(_hz(config, topics, args))


async def _hz(config: Config, topics: list[str], args: argparse.Namespace) -> int:
    meters: dict[tuple[str, str], RateMeter] = {}
    ctx = zmq.asyncio.Context()
    sub = Subscriber(ctx, config.bus, topics, name="hz")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    reports = 0
    next_report = time.monotonic() + args.period
    try:
        while not stop.is_set():
            env = await sub.recv(timeout=max(0.0, next_report - time.monotonic()))
            if env is not None and env.topic in messages.TOPICS:
                key = (env.topic, env.header.source)
                meter = meters.get(key)
                if meter is None:
                    name = f"{env.topic} ({env.header.source})"
                    meter = meters[key] = RateMeter(name, messages.TOPICS[env.topic].rate_hz, args.window)
                meter.add(env.header.mono_ns, time.monotonic_ns())
            if time.monotonic() < next_report:
                continue
            next_report += args.period
            print_reports(meters, topics, args.json)
            reports += 1
            if args.count and reports >= args.count:
                break
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        sub.close()
        ctx.term()
    return 0


def print_reports(meters: dict[tuple[str, str], RateMeter], topics: list[str], as_json: bool) -> None:
    now = time.monotonic_ns()
    reports = [meters[key].report(now) for key in sorted(meters)]
    heard = {topic for topic, _ in meters}
    if len(topics) == 1 and not heard:  # one topic asked for and nothing heard: say so
        reports.append(RateMeter(topics[0], messages.TOPICS[topics[0]].rate_hz).report(now))
    for report in reports:
        print(json.dumps(asdict(report)) if as_json else render(report), flush=True)
    if not as_json and len(reports) > 1:
        print(flush=True)
